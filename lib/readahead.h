/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a directory's blocks ahead, in the order they lie on the device. */
#ifndef FASTRM_READAHEAD_H
#define FASTRM_READAHEAD_H

#include <sys/stat.h>

/* Directories smaller than this are left to the file system's own reads. */
#define READAHEAD_DIR_MIN (64 * 1024)

/* What dir_readahead() did, for the caller's statistics and the tests. */
struct readahead_result {
	long extents;   /* the directory's extents on the device */
	long requests;  /* read requests asked of the device */
	long long bytes;/* bytes asked for */
};

/* ext2/3/4 keep a directory's blocks in the page cache of the block device
 * under the file system, and read an indexed directory one block at a
 * time in hash order: on a disk that seeks, one seek per block.  This asks
 * the kernel to read the blocks of directory @fd (whose stat is @st) from
 * that device in the order they lie on it, merged into long requests, all
 * at once (POSIX_FADV_WILLNEED: nothing is copied and no memory of ours
 * holds them; at most a sixteenth of the machine's memory is asked for),
 * so that reading the directory afterwards finds them cached.
 *
 * It does nothing (returns 0) on any other file system, for a directory
 * smaller than READAHEAD_DIR_MIN, and wherever the device cannot be read
 * (not root, no device node, a container's device rules): it only ever
 * saves time, and never fails the walk.  The device node found through
 * sysfs is used only if it is a block device whose number is the
 * directory's st_dev.  Returns 1 when reads were asked for (and fills
 * *@res when @res is not NULL), 0 otherwise. */
int dir_readahead(int fd, const struct stat *st, struct readahead_result *res);

#endif
