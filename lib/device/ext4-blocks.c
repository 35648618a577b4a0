/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ext4: reading a directory's blocks ahead from its block device
 * (strategies.h; the advisor, device.c, opens the device and calls it).
 *
 * Why: on ext4 a large directory is indexed by hash, and both getdents64
 * and every lookup read its blocks one at a time in hash order, which has
 * nothing to do with where the blocks lie.  On a disk that seeks, that is
 * a seek and half a revolution per block: on the harness's one-head disk,
 * the ~1,400 blocks of a 200,000-entry directory were most of frm's reads
 * and seeks (doc/archive/benchmarks-0.5.md, "Reading the directory ahead").
 *
 * How: FIEMAP says where the directory's blocks are; the device node that
 * sysfs names for the directory's st_dev, checked, is opened read-only;
 * the extents are sorted by position, merged across small gaps, and asked
 * for with POSIX_FADV_WILLNEED.  ext4 reads directory blocks through the
 * device's page cache (as it does all of its metadata), so its own reads
 * then find them.  Reading a mounted device is what dumpe2fs and debugfs
 * do; nothing is ever written. */
#define _GNU_SOURCE
#include "strategies.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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
static void window(struct device_walk *s, int dev, int fd,
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
	s->win[s->next++ % EXT4_WINDOWS] = at;
	if (s->nwin < EXT4_WINDOWS)
		s->nwin++;
	s->windows++;
	mine->requests = 1;
	mine->bytes = READAHEAD_WINDOW;
	if (s->windows >= READAHEAD_TRIAL && s->hits < s->windows)
		s->windows_off = true;
}

int ext4_dir_readahead(struct device_walk *w, int devfd, int fd,
                       const struct stat *st, struct readahead_result *res)
{
	struct readahead_result mine = { 0 };
	if (!st || !S_ISDIR(st->st_mode) || devfd < 0)
		goto out;
	bool large = st->st_size >= READAHEAD_DIR_MIN;
	if (!large && !w)
		goto out;
	int saved = errno;
	if (w && w->win_dev != st->st_dev) {
		/* the windows are of one device */
		w->win_dev = st->st_dev;
		w->nwin = 0;
	}
	if (large)
		whole(devfd, fd, &mine);
	else if (!w->windows_off)
		window(w, devfd, fd, &mine);
	if (w) {
		w->total.requests += mine.requests;
		w->total.bytes += mine.bytes;
	}
	errno = saved;
out:
	if (res)
		*res = mine;
	return mine.requests > 0;
}
