/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The device advisor's strategies (lib/device/): what each reads ahead,
 * and the constants that say when.  Only device.c calls them (and the
 * white-box tests); the rest of the library asks device.h. */
#ifndef FASTRM_DEVICE_STRATEGIES_H
#define FASTRM_DEVICE_STRATEGIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "device.h"

/* ------------------------------------------ the advisor's own (device.c) */

/* The decisions, as functions of what the advisor knows (the tests check
 * their tables): the class of a mean read of @us microseconds; how
 * @requests that spent @wait_ms in the device, which was busy @busy_ms,
 * overlapped; whether a (@large) directory is worth sorting by inode; how
 * many workers may run at once (0: no limit), @ahead when something reads
 * ahead for the walks. */
enum device_reads device_judge(long us);
/* ...of @reads that took @ms, @elapsed_ms into a walk */
enum device_reads device_judge_reads(uint64_t reads, uint64_t ms,
                                     long long elapsed_ms);
enum device_queue device_judge_queue(uint64_t requests, uint64_t wait_ms,
                                     uint64_t busy_ms);
bool device_sort_for(enum device_fs fs, enum device_reads reads, bool unsorted,
                     bool large);
unsigned device_workers_for(enum device_fs fs, enum device_reads reads,
                            enum device_queue queue, bool ahead, unsigned cpus);
/* ...whether to hold more workers back */
bool device_hold_for(enum device_fs fs, enum device_reads reads,
                     enum device_queue queue);
/* A file system by statfs's f_type; *@unsorted: gnulib's rule says
 * sorting is wasted on it. */
enum device_fs device_fs_of(long f_type, bool *unsorted);
/* The block device behind file system @dev, whose directory @fd is open
 * (or -1) (sysfs, else the mount table: the mount of @fd, else the one of
 * @dev), 0 if none; and its node, open read-only (with @flags added, such
 * as O_DIRECT), or -1. */
dev_t device_block_of(int fd, dev_t dev);
int device_open_node(dev_t bdev, int flags);

/* A block device's counters (sysfs stat; Documentation/block/stat.rst). */
struct device_counters {
	uint64_t reads;          /* reads completed (field 1) */
	uint64_t read_ms;        /* the milliseconds they took (field 4) */
	uint64_t requests;       /* reads and writes completed (1 and 5) */
	uint64_t wait_ms;        /* the milliseconds they took (4 and 8) */
	uint64_t busy_ms;        /* with requests in flight (field 10) */
};

/* For the tests: a device that is not there.  Every profile @a makes
 * from then on is of file system @fs on block device @bdev (not 0), whose
 * counters @counters(@ctx, ...) gives (false: none), in place of
 * fstatfs, sysfs and the mount table; nothing is opened on it (no
 * read-ahead, no probe).  @s must outlive @a. */
struct device_stand_in {
	enum device_fs fs;
	dev_t bdev;
	bool (*counters)(void *ctx, struct device_counters *c);
	void *ctx;
};
void device_advisor_stand_in(struct device_advisor *a,
                             const struct device_stand_in *s);

/* ------------------------------------------- the queue (queue-probe.c) */

/* Reads the probe makes at once, and their size. */
#define QUEUE_PROBE_READS 24
#define QUEUE_PROBE_LEN 4096

/* Whether block device @bdev serves requests one at a time, asked of it:
 * QUEUE_PROBE_READS direct reads spread over it, all in flight at once,
 * for the caller to judge by the device's counters (device_judge_queue).
 * Returns the reads completed (0 where the device cannot be opened: no
 * privilege).  Leaves errno alone. */
long device_probe_queue(dev_t bdev);

/* ------------------------------------ windows read last (XFS, btrfs) */

/* The windows read last by a strategy that reads in windows (XFS's
 * inodes, btrfs's leaves), as a ring of their starts: a window one of the
 * last WINDOWS_RECENT holds is a hit, not read again. */
#define WINDOWS_RECENT 256

struct recent_windows {
	unsigned long long at[WINDOWS_RECENT];
	unsigned n, next;
};

static inline bool recent_holds(const struct recent_windows *r,
                                unsigned long long at)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->at[i] == at)
			return true;
	return false;
}

static inline void recent_add(struct recent_windows *r, unsigned long long at)
{
	r->at[r->next++ % WINDOWS_RECENT] = at;
	if (r->n < WINDOWS_RECENT)
		r->n++;
}

/* ------------------------------------------------- ext4 (ext4-blocks.c) */

/* Directories smaller than this are left to the file system's own reads
 * but for the window around them. */
#define READAHEAD_DIR_MIN (64 * 1024)

/* Small directories: ext4 puts the blocks of the directories of a flex
 * group together (in its first group), in the order they were made, so
 * the directories a walk visits one after another mostly lie close
 * together.  For a small directory the aligned window of this size around
 * its block is asked for, unless one of the last EXT4_WINDOWS windows
 * holds it.  After READAHEAD_TRIAL windows the walk stops asking if fewer
 * directories were found in windows than windows were asked for. */
#define READAHEAD_WINDOW (256 * 1024)
#define READAHEAD_TRIAL 16

/* What ext4_dir_readahead() did, for the tests. */
struct readahead_result {
	long extents;   /* the directory's extents on the device */
	long requests;  /* read requests asked of the device */
	long long bytes;/* bytes asked for */
};

/* ext2/3/4 keep a directory's blocks in the page cache of the block device
 * under the file system, and read an indexed directory one block at a
 * time in hash order: on a disk that seeks, one seek per block.  For a
 * directory of READAHEAD_DIR_MIN or more this asks the kernel to read the
 * blocks of directory @fd (whose stat is @st) from the block device open
 * as @devfd in the order they lie on it, merged into long requests, all at
 * once (POSIX_FADV_WILLNEED: nothing is copied and no memory of ours holds
 * them; at most a sixteenth of the machine's memory is asked for), so that
 * reading the directory afterwards finds them cached.  For a smaller one,
 * with a walk's state @w, it asks for the window around it (above).  @w
 * may be NULL (large directories only).  Returns 1 when reads were asked
 * for, 0 otherwise; fills *@res when not NULL; counts into @w's totals;
 * leaves errno alone. */
int ext4_dir_readahead(struct device_walk *w, int devfd, int fd,
                       const struct stat *st, struct readahead_result *res);

/* ----------------------------------------------- XFS index (xfs-index.c) */

/* The leaf blocks of a large directory's hash index, read before its
 * entries are removed, by looking up made-up names that hash next to
 * every PROBE_EVERY-th of theirs, PROBE_THREADS lookups at once.  A
 * directory whose blocks beyond its data (st_blocks against st_size) come
 * to less than INDEX_MIN is left alone. */
#define PROBE_EVERY 128
#define PROBE_THREADS 16
#define INDEX_MIN (64 * 1024)
#define XFS_PROBE_LEN 16

/* For the @n names that name_at(@ctx, i, &len) gives, about to be removed
 * from XFS directory @fd (stat @st): read the leaf blocks their removals
 * will need.  Does nothing for small directories or without memory; never
 * fails the walk; leaves errno alone.  Returns the lookups made. */
long dir_index_readahead(int fd, const struct stat *st, size_t n,
                         const char *(*name_at)(void *, size_t, size_t *),
                         void *ctx);

/* XFS's directory name hash (its on-disk format: four bytes at a time,
 * rotated and exclusive-ored), and a probe name with a given hash. */
uint32_t xfs_dir_hash(const char *name, size_t len);
bool xfs_probe_name(uint32_t target, char out[XFS_PROBE_LEN + 1]);

/* --------------------------------------------- XFS inodes (xfs-inodes.c) */

/* The inodes of a directory's entries, read ahead.  For each entry, the
 * aligned window of XFS_WINDOW inode numbers (a stretch of the disk: 32
 * MiB with 512-byte inodes) that holds its inode is read with
 * XFS_IOC_BULKSTAT, XFS_BULK_BATCH inodes a call, unless one of the last
 * WINDOWS_RECENT windows holds it (a hit).  Small directories: after
 * XFS_WINDOW_TRIAL windows, no more if there were fewer hits than
 * windows.  A large directory handed out in inode order asks for each
 * window once: its windows stop, for that directory, once they are sparse
 * (xfs_windows_sparse).  Needs CAP_SYS_ADMIN (stops at the first
 * refusal), and reads that seek (the advisor's measure). */
#define XFS_WINDOW (64 * 1024)
#define XFS_BULK_BATCH 2048
#define XFS_WINDOW_TRIAL 16
#define XFS_WINDOW_SPARSE 64
#define XFS_WINDOW_SPARSE_AFTER 4

/* One set of windows for a walk or a pool of walks (thread-safe: one
 * window is read at a time; a thread that finds one being read goes on). */
struct xfs_windows *xfs_windows_new(void);
void xfs_windows_free(struct xfs_windows *w);
/* For inode @ino of the file system of @fd (device @dev), whose reads
 * @seek (the advisor's measure: if not, nothing is read): returns the
 * inodes read (0 when none were: a hit, off, busy, refused).  @sorted:
 * the entries come in inode order (not counted by the trial).  Leaves
 * errno alone. */
long xfs_window_at(struct xfs_windows *w, int fd, dev_t dev,
                   unsigned long long ino, bool seek, bool sorted);
/* Whether the windows on @dev are off: XFS refused them (no privilege),
 * or they did not pay. */
bool xfs_windows_off(struct xfs_windows *w, dev_t dev);
/* Whether a sorted directory's windows, @read of them so far, are sparse:
 * past XFS_WINDOW_SPARSE_AFTER windows, more than XFS_WINDOW_SPARSE of
 * the @inodes they read for each of the @held entries they held. */
bool xfs_windows_sparse(unsigned long read, unsigned long long inodes,
                        unsigned long long held);
/* Inodes read in all of @w's windows. */
long xfs_windows_inodes(struct xfs_windows *w);

/* ------------------------------------------- btrfs leaves (btrfs-leaves.c) */

/* The leaves of a subvolume's tree, read ahead in the order they lie on
 * the device: for an inode the walk is about to need, the aligned window
 * of BTRFS_WINDOW bytes of the metadata chunk around the leaf that holds
 * it is read from the block device, and btrfs is made to read every leaf
 * of the subvolume in it, in order (a tree search of each leaf's first
 * key), unless one of the last WINDOWS_RECENT windows holds it (a
 * hit, counted once per leaf the walk moves to).  After
 * BTRFS_WINDOW_TRIAL windows, none more if the walk found fewer than
 * BTRFS_WINDOW_PAYS leaves in windows per window read.  BTRFS_NODES
 * internal nodes are kept; the subvolume's root is looked up again at most
 * once per BTRFS_ROOT_MS (BTRFS_RETRY_MS after a node read from the device
 * was not the one asked for: a commit in progress).  Needs CAP_SYS_ADMIN (the tree search), the
 * block device open (root), one device; reads that seek. */
#define BTRFS_WINDOW (4 << 20)
#define BTRFS_WINDOW_TRIAL 16
#define BTRFS_WINDOW_PAYS 4
#define BTRFS_NODES 64
#define BTRFS_ROOT_MS 1000
#define BTRFS_RETRY_MS 100

/* One set of windows for a walk or a pool of walks (thread-safe: one
 * window is read at a time; a thread that finds one being read goes on). */
struct btrfs_leaves *btrfs_leaves_new(void);
void btrfs_leaves_free(struct btrfs_leaves *b);
/* For inode @ino of the btrfs file system of @fd (device @dev, on block
 * device @bdev), whose reads @seek (the advisor's measure: if not,
 * nothing is read): returns the leaves btrfs was made to read (0: a hit,
 * off, busy, refused).  Leaves errno alone. */
long btrfs_leaves_at(struct btrfs_leaves *b, int fd, dev_t dev, dev_t bdev,
                     unsigned long long ino, bool seek);
/* Whether the windows on @dev are off: refused, or they did not pay. */
bool btrfs_leaves_off(struct btrfs_leaves *b, dev_t dev);
/* Leaves read in all of @b's windows. */
long btrfs_leaves_read(struct btrfs_leaves *b);

#endif
