/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a directory's blocks ahead, in the order they lie on the device. */
#ifndef FASTRM_READAHEAD_H
#define FASTRM_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Directories smaller than this are left to the file system's own reads. */
#define READAHEAD_DIR_MIN (64 * 1024)

/* What dir_readahead() did, for the caller's statistics and the tests. */
struct readahead_result {
	long extents;   /* the directory's extents on the device */
	long requests;  /* read requests asked of the device */
	long long bytes;/* bytes asked for */
	long lookups;   /* XFS: probe lookups made (dir_index_readahead) */
	long inodes;    /* XFS: inodes read in windows (dir_entry_window;
	                 * counted in readahead_state.total only) */
};

/* Small directories: ext4 puts the blocks of the directories of a flex
 * group together (in its first group), in the order they were made, so
 * the directories a walk visits one after another mostly lie close
 * together.  For a small directory the aligned window of this size around
 * its block is asked for, unless one of the last READAHEAD_WINDOWS windows
 * holds it.  After READAHEAD_TRIAL windows the walk stops asking if fewer
 * directories were found in windows than windows were asked for. */
#define READAHEAD_WINDOW (256 * 1024)
#define READAHEAD_WINDOWS 4
#define READAHEAD_TRIAL 16

/* What one walk (one thread at a time) remembers between directories. */
struct readahead_state {
	dev_t dev;           /* the device of the last directory */
	int kind;            /* what is known of it (readahead.c) */
	int devfd;           /* its node, open read-only, or -1 */
	unsigned long long win[READAHEAD_WINDOWS]; /* recent windows */
	unsigned nwin, next;
	unsigned long windows; /* windows asked for */
	unsigned long hits;    /* directories found in a recent window */
	bool windows_off;      /* windows did not pay: no more */
	struct xfs_windows *xw; /* XFS's windows: shared, or NULL */
	bool xw_own;           /* xw was made for this state alone */
	bool entry_windows;    /* dir_windows() for the last directory */
	bool rotating;         /* the device says it rotates (XFS) */
	struct readahead_result total; /* everything asked for */
};

void readahead_init(struct readahead_state *s);
/* Closes the device; frees XFS's windows if they are this state's own. */
void readahead_fini(struct readahead_state *s);
/* Whether block device @dev says it rotates (sysfs queue/rotational; a
 * partition's is its disk's).  A device with no such file (btrfs's
 * anonymous devices, network file systems) counts as one that does not. */
bool dev_rotational(dev_t dev);

/* ext2/3/4 keep a directory's blocks in the page cache of the block device
 * under the file system, and read an indexed directory one block at a
 * time in hash order: on a disk that seeks, one seek per block.  For a
 * directory of READAHEAD_DIR_MIN or more this asks the kernel to read the
 * blocks of directory @fd (whose stat is @st) from that device in the
 * order they lie on it, merged into long requests, all at once
 * (POSIX_FADV_WILLNEED: nothing is copied and no memory of ours holds
 * them; at most a sixteenth of the machine's memory is asked for), so that
 * reading the directory afterwards finds them cached.  For a smaller one,
 * with a walk's state @s, it asks for the window around it (above).
 *
 * On XFS, on a device that says it rotates, a directory's entries get
 * windows of inodes instead, as the walk hands them out (dir_windows and
 * dir_entry_window, below).
 *
 * It does nothing (returns 0) on any other file system, and wherever the
 * device cannot be read (not root, no device node, a container's device
 * rules): it only ever saves time, and never fails the walk.  The device
 * node found through sysfs is used only if it is a block device whose
 * number is the directory's st_dev.  @s may be NULL (large directories
 * only; the device is opened and closed for the call).  Returns 1 when
 * reads were asked for, 0 otherwise; fills *@res when @res is not NULL;
 * leaves errno alone. */
int dir_readahead(struct readahead_state *s, int fd, const struct stat *st,
                  struct readahead_result *res);

/* XFS (xfsinodes.c): the inodes of a directory's entries, read ahead.
 * For each entry, the aligned window of XFS_WINDOW inode numbers (a
 * stretch of the disk: 32 MiB with 512-byte inodes) that holds its inode
 * is read with XFS_IOC_BULKSTAT, XFS_BULK_BATCH inodes a call, unless one
 * of the last XFS_WINDOWS_RECENT windows holds it (a hit).  Small
 * directories: after XFS_WINDOW_TRIAL windows, no more if there were
 * fewer hits than windows.  A large directory handed out in inode order
 * (auto's sort) asks for each window once: its windows stop, for that
 * directory, once they are sparse (xfs_windows_sparse, order.c).  Needs
 * CAP_SYS_ADMIN (stops at the first refusal). */
#define XFS_WINDOW (64 * 1024)
#define XFS_BULK_BATCH 2048
#define XFS_WINDOWS_RECENT 256
#define XFS_WINDOW_TRIAL 16
#define XFS_WINDOW_SPARSE 64
#define XFS_WINDOW_SPARSE_AFTER 4
/* ...and only on a device whose first XFS_LATENCY_READS reads (from the
 * first XFS directory read on: xfs_windows_begin) took XFS_SEEK_US or
 * more each on average. */
#define XFS_LATENCY_READS 64
#define XFS_SEEK_US 2000
/* Reads that fast (the same measure) make a pool on XFS CPU-bound: see
 * FASTRM_RMTREE_FIT_WORKERS. */
#define XFS_FAST_US 500
struct xfs_windows;
/* One set of windows for a walk or a pool of walks (thread-safe: one
 * window is read at a time; a thread that finds one being read goes on). */
struct xfs_windows *xfs_windows_new(void);
void xfs_windows_free(struct xfs_windows *w);
/* The device's reads are measured from here on (@dev's first directory:
 * for a large one, its reading and the index lookups, reads at random
 * places, come before its first window; a sorted directory's own removals
 * read forward and would measure less than a seek). */
void xfs_windows_begin(struct xfs_windows *w, dev_t dev);
/* For inode @ino of the file system of @fd (device @dev), which says it
 * rotates if @rotating (if not, the device's reads are only measured):
 * returns the inodes read (0 when none were: a hit, off, busy, refused,
 * not yet judged, not rotating).  @sorted: the entries come in inode
 * order (not counted by the trial).  Leaves errno alone. */
long xfs_window_at(struct xfs_windows *w, int fd, dev_t dev,
                   unsigned long long ino, bool rotating, bool sorted);
/* 1 if the reads were measured and took less than XFS_FAST_US each, -1
 * if they took more (or cannot be measured), 0 while not yet known. */
int xfs_windows_fast(struct xfs_windows *w);
/* Whether a sorted directory's windows, @read of them so far, are sparse:
 * past XFS_WINDOW_SPARSE_AFTER windows, more than XFS_WINDOW_SPARSE of
 * the @inodes they read for each of the @held entries they held. */
bool xfs_windows_sparse(unsigned long read, unsigned long long inodes,
                        unsigned long long held);
/* Inodes read in all of @w's windows. */
long xfs_windows_inodes(struct xfs_windows *w);
/* For the tests: take @dev's reads to seek (or not) without measuring. */
void xfs_windows_assume(struct xfs_windows *w, dev_t dev, bool seeking);

/* Whether, for the directory that dir_readahead() was last called for
 * with @s, the walk is to pass its entries to dir_entry_window() (XFS):
 * windows where the device says it rotates, and the measure of the
 * device's reads either way. */
bool dir_windows(const struct readahead_state *s);
/* The window of the entry with inode @ino of directory @fd (device @dev),
 * through @s's windows (made on first use); @sorted as for
 * xfs_window_at.  Returns the inodes read. */
long dir_entry_window(struct readahead_state *s, int fd, dev_t dev,
                      unsigned long long ino, bool sorted);

/* XFS (xfsindex.c): the leaf blocks of a large directory's hash index,
 * read before its entries are removed, by looking up made-up names that
 * hash next to every PROBE_EVERY-th of theirs, PROBE_THREADS lookups at
 * once.  A directory whose blocks beyond its data (st_blocks against
 * st_size) come to less than INDEX_MIN is left alone. */
#define PROBE_EVERY 128
#define PROBE_THREADS 16
#define INDEX_MIN (64 * 1024)
#define XFS_PROBE_LEN 16

/* For the @n names that name_at(@ctx, i, &len) gives, about to be removed
 * from directory @fd (stat @st): on XFS, read the leaf blocks their
 * removals will need (above).  Does nothing elsewhere, for small
 * directories or without memory; never fails the walk; leaves errno
 * alone.  Returns the number of lookups made. */
long dir_index_readahead(int fd, const struct stat *st, size_t n,
                         const char *(*name_at)(void *, size_t, size_t *),
                         void *ctx);

/* XFS's directory name hash (its on-disk format: four bytes at a time,
 * rotated and exclusive-ored), and a probe name with a given hash. */
uint32_t xfs_dir_hash(const char *name, size_t len);
bool xfs_probe_name(uint32_t target, char out[XFS_PROBE_LEN + 1]);

#endif
