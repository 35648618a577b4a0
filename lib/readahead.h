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
	struct readahead_result total; /* everything asked for */
};

void readahead_init(struct readahead_state *s);
/* Closes the device. */
void readahead_fini(struct readahead_state *s);

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
