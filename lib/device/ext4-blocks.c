/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a directory's blocks ahead from its block device (readahead.h).
 *
 * Why: on ext4 a large directory is indexed by hash, and both getdents64
 * and every lookup read its blocks one at a time in hash order, which has
 * nothing to do with where the blocks lie.  On a disk that seeks, that is
 * a seek and half a revolution per block: on the harness's one-head disk,
 * the ~1,400 blocks of a 200,000-entry directory were most of frm's reads
 * and seeks (doc/benchmarks.md, "Reading the directory ahead").
 *
 * How: FIEMAP says where the directory's blocks are; the device node that
 * sysfs names for the directory's st_dev, checked, is opened read-only;
 * the extents are sorted by position, merged across small gaps, and asked
 * for with POSIX_FADV_WILLNEED.  ext4 reads directory blocks through the
 * device's page cache (as it does all of its metadata), so its own reads
 * then find them.  Reading a mounted device is what dumpe2fs and debugfs
 * do; nothing is ever written. */
#define _GNU_SOURCE
#include "readahead.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAGIC_EXT4 0xEF53 /* ext2, ext3 and ext4 */

/* Extents asked of FIEMAP per call, and runs sorted and issued together:
 * a directory of millions of entries has a few hundred extents at most,
 * so one batch almost always holds them all (the memory is fixed). */
#define FIEMAP_BATCH 64
#define RUNS_MAX 1024
/* Read through a gap this small rather than seek over it (a seek and half
 * a revolution cost what ~1 MB of transfer does; this stays far below). */
#define GAP_MERGE (128 * 1024)
/* Bytes per POSIX_FADV_WILLNEED: the kernel caps one forced readahead at
 * the larger of the device's readahead window (128 KiB by default) and its
 * optimal request size (force_page_cache_ra in mm/readahead.c), so larger
 * calls would be cut short. */
#define ADVISE_CHUNK (128 * 1024)

/* The page cache the kernel is asked to fill for one directory, at most:
 * a sixteenth of the machine's memory (a directory of 5,000,000 entries
 * has ~150 MB of blocks), so that what is read is still there when it is
 * needed. */
static uint64_t byte_cap(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return 64u << 20;
	return (uint64_t)pages * (uint64_t)size / 16;
}

struct run {
	uint64_t off, len;
};

static int run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The block device node of @dev, open read-only, or -1. */
static int open_device(dev_t dev)
{
	char path[80], line[160], node[200];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/uevent", major(dev),
	         minor(dev));
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	node[0] = '\0';
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "DEVNAME=", 8) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(node, sizeof node, "/dev/%s", line + 8);
			break;
		}
	}
	fclose(f);
	if (!node[0] || strstr(node, ".."))
		return -1;
	int fd = open(node, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sort @runs by position, merge across small gaps, ask for them. */
static void issue(int dev, struct run *runs, size_t n, uint64_t cap,
                  struct readahead_result *res)
{
	qsort(runs, n, sizeof *runs, run_cmp);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && runs[i].off <= runs[m - 1].off + runs[m - 1].len + GAP_MERGE) {
			uint64_t end = runs[i].off + runs[i].len;
			if (end > runs[m - 1].off + runs[m - 1].len)
				runs[m - 1].len = end - runs[m - 1].off;
		} else {
			runs[m++] = runs[i];
		}
	}
	for (size_t i = 0; i < m && (uint64_t)res->bytes < cap; i++) {
		if (runs[i].len > cap - (uint64_t)res->bytes)
			runs[i].len = cap - (uint64_t)res->bytes;
		for (uint64_t done = 0; done < runs[i].len; done += ADVISE_CHUNK) {
			uint64_t k = runs[i].len - done;
			if (k > ADVISE_CHUNK)
				k = ADVISE_CHUNK;
			if (posix_fadvise(dev, (off_t)(runs[i].off + done), (off_t)k,
			                  POSIX_FADV_WILLNEED) != 0)
				return;
		}
		res->requests++;
		res->bytes += (long long)runs[i].len;
	}
}

#define BAD_EXTENT (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | \
                    FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED | \
                    FIEMAP_EXTENT_UNWRITTEN)

/* What is known of the last device: nothing yet, nothing to do, ext4
 * (its node open), XFS. */
enum { RA_UNKNOWN, RA_NONE, RA_EXT4, RA_XFS };

void readahead_init(struct readahead_state *s)
{
	memset(s, 0, sizeof *s);
	s->devfd = -1;
	s->kind = RA_UNKNOWN;
}

static void close_device(struct readahead_state *s)
{
	if (s->devfd >= 0)
		close(s->devfd);
	s->devfd = -1;
	s->kind = RA_UNKNOWN;
}

void readahead_fini(struct readahead_state *s)
{
	close_device(s);
	if (s->xw_own)
		xfs_windows_free(s->xw);
	s->xw = NULL;
	s->xw_own = false;
}

bool dir_windows(const struct readahead_state *s)
{
	return s && s->entry_windows;
}

/* @s's XFS windows, made on first use. */
static struct xfs_windows *windows_of(struct readahead_state *s)
{
	if (!s->xw && (s->xw = xfs_windows_new()))
		s->xw_own = true;
	return s->xw;
}

long dir_entry_window(struct readahead_state *s, int fd, dev_t dev,
                      unsigned long long ino, bool sorted)
{
	long n = xfs_window_at(windows_of(s), fd, dev, ino, s->rotating, sorted);
	s->total.inodes += n;
	return n;
}

bool dev_rotational(dev_t dev)
{
	static const char *const where[] = { "", "../" };
	for (size_t i = 0; i < 2; i++) {
		char path[96];
		snprintf(path, sizeof path, "/sys/dev/block/%u:%u/%squeue/rotational",
		         major(dev), minor(dev), where[i]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		char c = 0;
		ssize_t n = read(fd, &c, 1);
		close(fd);
		return n == 1 && c == '1';
	}
	return false;
}

/* The device node of @st's file system, open, if it is ext2/3/4 and the
 * process may read it; -1 otherwise (and whether it is XFS, in s->kind,
 * and whether its device says it rotates).  Remembered for the last
 * device. */
static int device_for(struct readahead_state *s, int fd, dev_t dev)
{
	if (s->kind != RA_UNKNOWN && s->dev == dev)
		return s->kind == RA_EXT4 ? s->devfd : -1;
	close_device(s);
	s->dev = dev;
	s->kind = RA_NONE;
	s->nwin = 0;
	struct statfs fs;
	if (fstatfs(fd, &fs) != 0)
		return -1;
	if (fs.f_type == MAGIC_EXT4 && (s->devfd = open_device(dev)) >= 0)
		s->kind = RA_EXT4;
	else if (fs.f_type == XFS_SUPER_MAGIC) {
		s->kind = RA_XFS;
		s->rotating = dev_rotational(dev);
	}
	return s->devfd;
}

/* A large directory: every extent, sorted and merged. */
static void whole(int dev, int fd, struct readahead_result *mine)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[FIEMAP_BATCH];
	} m;
	struct run *runs = malloc(RUNS_MAX * sizeof *runs);
	uint64_t cap = byte_cap();
	size_t n = 0;
	uint64_t start = 0;
	bool more = runs != NULL;
	while (more) {
		uint64_t from = start;
		/* all of it: the kernel fills the extents (and tools such as
		 * valgrind do not know this ioctl writes them) */
		memset(&m, 0, sizeof m);
		m.fm.fm_start = start;
		m.fm.fm_length = FIEMAP_MAX_OFFSET - start;
		m.fm.fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, &m.fm) < 0 || m.fm.fm_mapped_extents == 0)
			break;
		for (uint32_t i = 0; i < m.fm.fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &m.ext[i];
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				more = false;
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags & BAD_EXTENT)
				continue;
			mine->extents++;
			runs[n++] = (struct run){ e->fe_physical, e->fe_length };
			if (n == RUNS_MAX) {
				issue(dev, runs, n, cap, mine);
				n = 0;
				if ((uint64_t)mine->bytes >= cap)
					more = false;
			}
		}
		if (start <= from)
			break; /* no progress: never loop */
	}
	if (n > 0)
		issue(dev, runs, n, cap, mine);
	free(runs);
}

/* A small directory: the aligned window around its first block, unless a
 * recent window holds it; off for the walk once windows do not pay. */
static void window(struct readahead_state *s, int dev, int fd,
                   struct readahead_result *mine)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[1];
	} m;
	memset(&m, 0, sizeof m);
	m.fm.fm_length = FIEMAP_MAX_OFFSET;
	m.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &m.fm) < 0 || m.fm.fm_mapped_extents != 1 ||
	    (m.ext[0].fe_flags & BAD_EXTENT))
		return;
	uint64_t at = m.ext[0].fe_physical & ~(uint64_t)(READAHEAD_WINDOW - 1);
	mine->extents = 1;
	for (unsigned i = 0; i < s->nwin; i++) {
		if (s->win[i] == at) {
			s->hits++;
			return;
		}
	}
	if (posix_fadvise(dev, (off_t)at, READAHEAD_WINDOW, POSIX_FADV_WILLNEED) != 0)
		return;
	s->win[s->next++ % READAHEAD_WINDOWS] = at;
	if (s->nwin < READAHEAD_WINDOWS)
		s->nwin++;
	s->windows++;
	mine->requests = 1;
	mine->bytes = READAHEAD_WINDOW;
	if (s->windows >= READAHEAD_TRIAL && s->hits < s->windows)
		s->windows_off = true;
}

int dir_readahead(struct readahead_state *s, int fd, const struct stat *st,
                  struct readahead_result *res)
{
	struct readahead_result mine = { 0 };
	if (s)
		s->entry_windows = false;
	if (!st || !S_ISDIR(st->st_mode))
		return 0;
	bool large = st->st_size >= READAHEAD_DIR_MIN;
	if (!large && !s)
		return 0;
	int saved = errno;
	struct readahead_state local;
	if (!s) {
		readahead_init(&local);
		s = &local;
	}
	int dev = device_for(s, fd, st->st_dev);
	if (dev >= 0) {
		if (large)
			whole(dev, fd, &mine);
		else if (!s->windows_off) /* ext4's trial; XFS's is its own */
			window(s, dev, fd, &mine);
	}
	/* XFS: windows as the entries go out, and the device's reads
	 * measured from the first directory read on (xfsinodes.c); a large
	 * directory's only where they may be read (the device says it
	 * rotates: auto sorts it), each entry going through them. */
	s->entry_windows = s->kind == RA_XFS && (!large || s->rotating) &&
	                   s != &local;
	if (s->entry_windows)
		xfs_windows_begin(windows_of(s), st->st_dev);
	if (s == &local)
		readahead_fini(&local);
	s->total.extents += mine.extents;
	s->total.requests += mine.requests;
	s->total.bytes += mine.bytes;
	errno = saved;
	if (res)
		*res = mine;
	return mine.requests > 0;
}
