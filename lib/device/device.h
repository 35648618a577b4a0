/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device advisor: everything libfastrm knows and decides about the
 * file systems and devices it removes from, behind this one interface
 * (lib/device/).  The walk (fts.c), the ordering policies (order.c) and
 * the pool (rmtree.c) ask it at a few fixed points and know nothing of
 * devices themselves:
 *
 *   device_dir_opened()   a directory is about to be read (any policy)
 *   device_pass_sorted()  a sorting policy is about to hand out a pass
 *   device_entry_out()    an entry is about to go out to the walk
 *   device_sort()         auto: is a directory here worth sorting?
 *   device_unsorted()     gnulib's rule: is sorting wasted on this fs?
 *   device_workers()      the pool: how many workers may run at once?
 *
 * What it knows of a device (a profile per st_dev, made once per walk or
 * pool): the file system's type (one fstatfs), the block device behind it
 * (sysfs, or the mount table for btrfs), whether the process may read that
 * device (ext4's read-ahead) or ask XFS for inodes in bulk, and what the
 * device's first reads cost: their mean time, from the device's own
 * counters (sysfs stat, readable by anyone), once MEASURE_READS of them
 * have completed since the walk began.  sysfs's "rotational" flag is not
 * used: disk arrays, SAN and cloud volumes and virtual disks report it
 * wrongly both ways (doc/design.md, "The device advisor").
 *
 * What it does with that (the strategies, each in its own file):
 *   ext4-blocks.c  ext4: a large directory's blocks, and the window around
 *                  a small one's, read from the device in the order they
 *                  lie there (where the device can be opened: root)
 *   xfs-index.c    XFS: a large directory's hash index read ahead of a
 *                  sorted pass, by looking up made-up names (no privilege)
 *   xfs-inodes.c   XFS: the inodes around the entries, in windows, as they
 *                  go out (bulkstat: CAP_SYS_ADMIN), where reads seek
 *   btrfs-leaves.c btrfs: the leaves of the subvolume's tree, in windows
 *                  of the disk around the entries, read in the order they
 *                  lie there (tree search: CAP_SYS_ADMIN, and the device
 *                  open), where reads seek
 *   queue-probe.c  btrfs (and ext4 without read-ahead) whose reads seek:
 *                  whether the device serves several requests at once,
 *                  asked of it before any worker starts (the device open:
 *                  root)
 */
#ifndef FASTRM_DEVICE_H
#define FASTRM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Reads measured to take this long each on average, or more, seek
 * (a 7200-rpm disk: 8-12 ms; the harness's one-head disk: 9 ms); under
 * FAST_US they are fast (SSDs, the virtual disks measured here: 0.1-0.4
 * ms); in between, moderate (a queued device at 1 ms).  MEASURE_READS of
 * them make a measure; the counters are looked at once per MEASURE_MS at
 * most (nothing is read while everything is cached). */
#define SEEK_US 2000
#define FAST_US 500
#define MEASURE_READS 64
#define MEASURE_MS 10

/* Whether a device serves its requests one at a time (one head) or
 * several at once (a queue in the device, an array, a network volume):
 * judged once QUEUE_WINDOW requests have completed while QUEUED_MIN / 10
 * or more were in flight on average (about two: two workers waiting on the
 * device average a little under two), from the time the device was busy
 * per request.  A seeking head stays busy SEEK_US or more per request however
 * many are queued (the harness's one-head disk: 12.8 ms at one in
 * flight, 8.7 ms at 8, 8.4 ms at 32: its elevator shortens the seeks); a
 * device that serves several at once is busy for a fraction of each (a
 * queued device of 3 ms a read: 3.2 ms at one, 1.6 ms at 2, 0.4 ms at
 * 8).  At one in flight the two look alike, so nothing is judged there;
 * at 1.8 a device that serves several at once is taken for one head only
 * if its reads take 3.6 ms or more, at 8 (frm's default workers) 16 ms. */
#define QUEUED_MIN 18
#define QUEUE_WINDOW 16

/* A walk that has read less than once per CACHED_GAP_MS, over its first
 * CACHED_MS or more, runs from memory (the tree's metadata is cached): it
 * is CPU-bound whatever the device, and is advised as on a fast one, until
 * its reads are many enough to measure (on XFS with one worker: its
 * unlinks at once only contend).  A cold walk on the one-head disk reads
 * every 9-13 ms; the aged tree on it, warm, read 43 times in 4.7 s. */
#define CACHED_MS 500
#define CACHED_GAP_MS 50

/* What a device's reads were measured to cost. */
enum device_reads {
	DEVICE_READS_UNKNOWN = 0, /* not measured yet */
	DEVICE_READS_FAST,
	DEVICE_READS_MODERATE,
	DEVICE_READS_SEEK,
	DEVICE_READS_NONE,        /* nothing to measure: memory, network */
	DEVICE_READS_CACHED,      /* nothing read for a while: the walk runs
	                             from memory (for now): as FAST, but one
	                             worker on XFS */
};

/* How a device's requests were measured to overlap. */
enum device_queue {
	DEVICE_QUEUE_UNKNOWN = 0, /* never seen several in flight */
	DEVICE_QUEUE_SERIAL,      /* one at a time, SEEK_US each or more */
	DEVICE_QUEUE_OVERLAP,     /* several at once */
};

/* The file system, as the advisor sorts them. */
enum device_fs {
	DEVICE_FS_OTHER = 0,
	DEVICE_FS_EXT4,           /* ext2, ext3, ext4 */
	DEVICE_FS_XFS,
	DEVICE_FS_BTRFS,
	DEVICE_FS_MEMORY,         /* tmpfs, ramfs, proc, sysfs */
	DEVICE_FS_REMOTE,         /* fs-magic.h: NFS, SMB, FUSE, 9p, Ceph, Lustre, AFS, GPFS */
};

/* ext4's windows around small directories (ext4-blocks.c): recent ones. */
#define EXT4_WINDOWS 4

/* What was read ahead (for fastrm_rmtree_stats and the tests). */
struct device_totals {
	long requests;            /* ext4: read requests asked of the device */
	long long bytes;          /* ...and what they cover */
	long lookups;             /* XFS: probe lookups into hash indexes */
	long inodes;              /* XFS: inodes read in windows */
	long leaves;              /* btrfs: leaves read in windows */
};

struct device_advisor;
struct device_profile;
struct xfs_windows;
struct btrfs_leaves;

/* One walk's state (one thread at a time): a stream's own, or a pool
 * worker's for all of its walks. */
struct device_walk {
	struct device_advisor *adv;
	struct device_profile *last; /* the profile of the last directory */
	/* ext4: windows around small directories */
	unsigned long long win[EXT4_WINDOWS];
	unsigned nwin, next;
	unsigned long windows, hits; /* asked for; directories found in one */
	bool windows_off;            /* they did not pay: no more */
	dev_t win_dev;               /* the device the windows are on */
	/* XFS: the run of entries of the directory handed out last */
	dev_t run_dev;
	ino_t run_dir;
	unsigned long long at;       /* the last entry's window */
	unsigned long long inodes, held; /* a sorted directory's windows:
	                                inodes read, entries they held */
	uint32_t run;                /* entries out in the current window */
	uint32_t read;               /* windows read for this directory */
	bool run_read;               /* the current window was read */
	bool sparse;                 /* they are sparse: none more here */
	struct device_totals total;
};

/* What an advisor may do to learn about a device and act on it. */
enum device_advise {
	/* The file system's type, by one fstatfs per device, as gnulib's
	 * fts asks it: nothing measured, nothing read ahead, no thread.  A
	 * plain fts stream's (doc/design.md, "What a walk costs"). */
	DEVICE_ADVISE_FS = 0,
	/* Everything below: sysfs's counters read, ext4's block device
	 * opened, XFS's index and inodes read ahead (threads).  The removal
	 * pool's, and a stream's opened with FASTRM_FTS_DEVICE. */
	DEVICE_ADVISE_ALL,
};

/* An advisor for one walk or one pool of walks (thread-safe).  NULL when
 * out of memory: every function below then does nothing, and the walks
 * go on without reading ahead or fitting. */
struct device_advisor *device_advisor_new(enum device_advise what);
void device_advisor_free(struct device_advisor *a);

void device_walk_init(struct device_walk *w, struct device_advisor *a);
void device_walk_fini(struct device_walk *w);

/* The entries a directory of @size bytes (st_size) holds where its file
 * system's sizes count them, the file system of the last directory @w
 * read (tmpfs: exactly); 0 where the size does not tell. */
unsigned long long device_dir_entries(const struct device_walk *w, off_t size);

/* Directory @fd (stat @st) is about to be read, whatever the policy: its
 * device is measured, its blocks read ahead (ext4).  Returns whether its
 * entries are to go through device_entry_out() (XFS windows).  Never fails
 * the walk; leaves errno alone. */
bool device_dir_opened(struct device_walk *w, int fd, const struct stat *st);

/* A sorting policy is about to hand out a pass of @n names of directory
 * @fd (stat @st), in inode order; name_at(@ctx, i, &len) gives the i-th.
 * XFS: its hash index's leaf blocks are read ahead (xfs-index.c). */
void device_pass_sorted(struct device_walk *w, int fd, const struct stat *st,
                        size_t n, const char *(*name_at)(void *, size_t, size_t *),
                        void *ctx);

/* Entry @ino of directory @fd (stat @st) is about to go out; @sorted: the
 * directory's entries go out in inode order.  XFS: the window of inodes
 * around it is read (xfs-inodes.c). */
void device_entry_out(struct device_walk *w, int fd, const struct stat *st,
                      unsigned long long ino, bool sorted);

/* auto: whether directory @fd (stat @st; @large: of 10,000 entries or
 * more, by its size) is worth sorting by inode on its device.  A large
 * one: where order does not matter (memory, network, btrfs), or on XFS
 * whose reads are fast, no; elsewhere yes.  A small one: on ext4 yes;
 * elsewhere only where reads were measured to seek (and a large one would
 * be). */
bool device_sort(struct device_walk *w, int fd, const struct stat *st, bool large);

/* gnulib's rule: sorting by inode is known not to help on this file
 * system (tmpfs, NFS, CIFS, Lustre, proc...). */
bool device_unsorted(struct device_walk *w, int fd, const struct stat *st);

/* What device_workers() says where the pool may run more workers than it
 * was asked for (fastrm_rmtree's FASTRM_RMTREE_FIT_WORKERS): XFS whose
 * reads seek and where nothing reads ahead for the walks (no bulkstat: a
 * plain user).  There every worker waits on one read at a time, and more
 * of them in flight let the device's queue shorten the seeks (the aged
 * real tree x3, cold, one-head disk, uid 65534: 8 workers 0.81x of GNU
 * rm's time, 32 workers 0.68x, 64 0.67x; doc/results.md, "XFS as a
 * plain user"). */
#define DEVICE_WORKERS_WIDE 32

/* The pool: how many of its workers should run at once while they remove
 * from @dev, given @cpus online; 0: no limit (or nothing known yet);
 * DEVICE_WORKERS_WIDE: more than asked, where the pool may.
 * ext4 or btrfs whose reads seek, served one at a time, where nothing
 * reads ahead for the walk (ext4: no privilege to open the device): 1,
 * since workers in different subtrees make one head seek between them.
 * XFS whose reads are fast: @cpus, since more only contend for the CPU;
 * XFS while the walks read nothing (DEVICE_READS_CACHED): 1, since its
 * unlinks at once only contend.  XFS whose reads seek, nothing read
 * ahead: DEVICE_WORKERS_WIDE. */
unsigned device_workers(struct device_walk *w, dev_t dev, unsigned cpus);

/* The pool, before it starts one more worker for a walk on @dev: whether
 * to hold it back.  On XFS and btrfs until the device's reads are judged
 * (MEASURE_READS of them; while the walks run from memory, never: there
 * unlinks at once only contend); on btrfs whose reads seek, also until
 * the device was found to serve several requests at once (it is asked:
 * queue-probe.c, where the process may open it; where not, never: one
 * worker); elsewhere never.  Looks at the device's counters (once per
 * MEASURE_MS at most). */
bool device_hold_workers(struct device_walk *w, dev_t dev);

/* What @dev's reads were measured to cost (DEVICE_READS_UNKNOWN if the
 * advisor has no profile of it yet). */
enum device_reads device_measured(struct device_advisor *a, dev_t dev);

/* How @dev's requests were measured to overlap (DEVICE_QUEUE_UNKNOWN if
 * the advisor has no profile of it yet). */
enum device_queue device_queue_of(struct device_advisor *a, dev_t dev);

/* The requests @dev completed since it was brought up, reads and writes
 * together, and the milliseconds they took from being queued to their
 * end (the block device's sysfs stat, fields 1, 4, 5 and 8, readable by
 * any user): from two readings, the mean latency of the requests between
 * them (iostat's await).  false: the advisor has no profile of @dev yet,
 * or @dev is no block device (tmpfs, a network file system). */
bool device_wait_counters(struct device_advisor *a, dev_t dev,
                          unsigned long long *requests,
                          unsigned long long *wait_ms);

/* For the tests: take @dev's reads to cost @reads from now on, without
 * measuring (the profile is made from @fd, a directory on @dev); reads
 * that seek are taken to be served one at a time, others several at
 * once. */
void device_assume(struct device_advisor *a, int fd, dev_t dev,
                   enum device_reads reads);

/* What @w read ahead, added into @t. */
void device_totals_add(struct device_totals *t, const struct device_walk *w);

#endif
