/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading the inodes of XFS directories' entries ahead, in windows, as a
 * walk hands the entries out (readahead.h).
 *
 * Why: in a tree of small directories on XFS, a directory of a few
 * entries lives in its inode, and XFS puts a directory's files' inodes
 * next to it; what a removal reads is inode clusters and the one block of
 * each directory too large for its inode, about one read per directory,
 * each at its own place.  XFS spreads new directories over its allocation
 * groups, so a walk jumps between them: on the harness's one-head disk
 * each of a 100,000-entry tree's ~6,600 reads was a seek (doc/benchmarks.md,
 * "XFS trees").  XFS caches its metadata itself, so the device cannot be
 * read ahead as on ext4 (readahead.c).
 *
 * How: XFS_IOC_BULKSTAT reads inode clusters ahead in inode order (its
 * inode walk asks for a batch of chunks at once, fs/xfs/xfs_iwalk.c), into
 * XFS's own cache.  As a walk hands out the entries of a small directory,
 * for each entry the aligned window of XFS_WINDOW inode numbers holding
 * its inode is bulkstat'ed, one batch after another, unless a recent
 * window holds it (a hit).  Inode numbers on XFS are disk addresses
 * (allocation group, block, slot), so a window is one stretch of the
 * disk: the entries a tree's walk reaches next mostly lie in windows
 * already read.  (Windows around the directories' own inodes were not
 * enough: XFS puts new directories low in an allocation group, and in a
 * tree of 1.2M entries the 40,000 directories lay in 4 windows and most
 * files elsewhere.)  The records bulkstat returns are not looked at.
 *
 * Bounds: one window at a time per walk or pool (threads that find one
 * being read go on without); one buffer of XFS_BULK_BATCH records; at
 * most XFS_BULK_BATCH inodes beyond a window's end.  After
 * XFS_WINDOW_TRIAL windows, windows stop if fewer directories were found
 * in recent windows than windows were read (a tree scattered over a
 * large file system).  Bulkstat needs CAP_SYS_ADMIN; where XFS refuses,
 * windows stop at the first.
 *
 * A large directory that auto sorts gets the same windows as its entries
 * go out in inode order: each window is read once, ahead of the removals
 * of its entries.  Without them, at 800,000 files on a disk that seeks,
 * the removals read one inode cluster at a time, forward, but XFS writes
 * back the blocks they dirtied meanwhile, each write a seek away and back;
 * a window's clusters come in batches the disk serves in one sweep
 * (doc/benchmarks.md, "XFS flat: windows of inodes in a sorted
 * directory").  The trial below does not count them; order.c stops a
 * directory's windows once they are sparse (xfs_windows_sparse).
 *
 * Only where reads cost what a seek costs: a device may say it rotates
 * and serve reads in a tenth of a millisecond (the virtual disks of the
 * machines this was measured on do), and there windows only cost CPU
 * (bulkstat looks every inode up, and the removal again: 7 % slower on
 * the plain VM, doc/benchmarks.md).  So no window is read until the device
 * has served XFS_LATENCY_READS reads since the first XFS directory was
 * read (xfs_windows_begin), and none at all if those took less than
 * XFS_SEEK_US each on average (the device's own count of reads and of
 * milliseconds spent on them, sysfs stat; a device without one is taken
 * at its word).  For a large directory those are its own reading and its
 * index lookups, reads at scattered places: its removal in inode order
 * reads forward, mostly without a seek (measured from its first entry on,
 * no window was read on the harness's one-head disk). */
#define _GNU_SOURCE
#include "readahead.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* XFS_IOC_BULKSTAT, the v5 interface of Linux 5.3 on, as XFS's ioctl
 * header (xfsprogs' xfs/xfs_fs.h, which this build does not need) defines
 * it: a 64-byte request header, then room for icount records of 192
 * bytes.  On return the header's ino is the inode after the last record
 * and ocount the records written. */
struct bulk_ireq {
	uint64_t ino;
	uint32_t flags;
	uint32_t icount;
	uint32_t ocount;
	uint32_t agno;
	uint64_t reserved[5];
};
#define BULKSTAT_RECORD 192
#define IOC_XFS_BULKSTAT _IOR('X', 127, struct bulk_ireq)

struct xfs_windows {
	pthread_mutex_t lock;
	dev_t dev;               /* the file system the windows below are on */
	unsigned long long recent[XFS_WINDOWS_RECENT];
	unsigned nrecent, next;
	unsigned long windows;   /* windows read on dev */
	unsigned long hits;      /* entries found in a recent window (one per
	                            directory and change of window) */
	bool off;                /* refused, did not pay, or fast, on dev */
	int judged;              /* 0: not yet; 1: reads seek; -1: they do not */
	long us;                 /* the reads' mean, when judged by them */
	uint64_t reads0, ms0;    /* dev's reads and their time at the start */
	long long sampled;       /* when they were last looked at (ms) */
	bool busy;               /* a window is being read */
	bool started;            /* dev is set */
	long inodes;             /* inodes read, all devices */
	struct bulk_ireq *buf;   /* header and XFS_BULK_BATCH records */
};

struct xfs_windows *xfs_windows_new(void)
{
	struct xfs_windows *w = calloc(1, sizeof *w);
	if (w && pthread_mutex_init(&w->lock, NULL) != 0) {
		free(w);
		w = NULL;
	}
	return w;
}

void xfs_windows_free(struct xfs_windows *w)
{
	if (!w)
		return;
	pthread_mutex_destroy(&w->lock);
	free(w->buf);
	free(w);
}

int xfs_windows_fast(struct xfs_windows *w)
{
	if (!w)
		return -1;
	pthread_mutex_lock(&w->lock);
	int fast = !w->started || w->judged == 0 ? 0
	           : w->us >= 0 && w->us < XFS_FAST_US ? 1 : -1;
	pthread_mutex_unlock(&w->lock);
	return fast;
}

bool xfs_windows_sparse(unsigned long read, unsigned long long inodes,
                        unsigned long long held)
{
	return read >= XFS_WINDOW_SPARSE_AFTER &&
	       inodes / XFS_WINDOW_SPARSE > held;
}

long xfs_windows_inodes(struct xfs_windows *w)
{
	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	long n = w->inodes;
	pthread_mutex_unlock(&w->lock);
	return n;
}

/* @dev's reads and the milliseconds spent on them (sysfs stat: the first
 * and fourth numbers).  Returns false if they cannot be had. */
static bool device_reads(dev_t dev, uint64_t *reads, uint64_t *ms)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/stat", major(dev),
	         minor(dev));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	uint64_t merges, sectors;
	return sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
	              reads, &merges, &sectors, ms) == 4;
}

/* Milliseconds on a coarse clock (a few ms a tick, no system call). */
static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void start(struct xfs_windows *w, dev_t dev)
{
	w->dev = dev;
	w->started = true;
	w->nrecent = w->next = 0;
	w->windows = w->hits = 0;
	w->off = false;
	w->judged = device_reads(dev, &w->reads0, &w->ms0) ? 0 : 1;
	w->sampled = now_ms();
	w->us = -1;
}

/* Under the lock: whether @dev's reads have been seen to cost a seek.
 * Until XFS_LATENCY_READS have been made since the first call, not yet.
 * The device's counts are looked at once per XFS_SAMPLE_MS at most: with
 * everything in the cache nothing is read, and a walk would otherwise
 * read them at every directory. */
#define XFS_SAMPLE_MS 10
static bool reads_seek(struct xfs_windows *w, dev_t dev)
{
	if (w->judged == 0) {
		long long now = now_ms();
		if (now - w->sampled < XFS_SAMPLE_MS)
			return false;
		w->sampled = now;
		uint64_t reads, ms;
		if (!device_reads(dev, &reads, &ms)) {
			w->judged = 1;
		} else if (reads >= w->reads0 + XFS_LATENCY_READS) {
			uint64_t us = (ms - w->ms0) * 1000 / (reads - w->reads0);
			w->us = us > LONG_MAX ? LONG_MAX : (long)us;
			w->judged = us >= XFS_SEEK_US ? 1 : -1;
			if (w->judged < 0)
				w->off = true;
		}
	}
	return w->judged > 0;
}

void xfs_windows_assume(struct xfs_windows *w, dev_t dev, bool seeking)
{
	pthread_mutex_lock(&w->lock);
	start(w, dev);
	w->judged = seeking ? 1 : -1;
	w->us = seeking ? XFS_SEEK_US : 0;
	w->off = !seeking;
	pthread_mutex_unlock(&w->lock);
}

/* Under the lock: the windows and the measure are @dev's from now on. */
static void on_device(struct xfs_windows *w, dev_t dev)
{
	if (w->dev != dev || !w->started)
		start(w, dev);
}

void xfs_windows_begin(struct xfs_windows *w, dev_t dev)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	on_device(w, dev);
	pthread_mutex_unlock(&w->lock);
}

/* Under the lock: whether the window at @at should be read now; if so it
 * is marked as being read.  A sorted directory's windows are not counted
 * by the trial (each is asked for once). */
static bool claim(struct xfs_windows *w, dev_t dev, unsigned long long at,
                  bool rotating, bool sorted)
{
	on_device(w, dev);
	if (w->off || !reads_seek(w, dev) || !rotating)
		return false;
	for (unsigned i = 0; i < w->nrecent; i++) {
		if (w->recent[i] == at) {
			w->hits += !sorted;
			return false;
		}
	}
	if (w->busy || (!w->buf && !(w->buf = malloc(sizeof *w->buf +
	                                           XFS_BULK_BATCH * BULKSTAT_RECORD))))
		return false;
	w->busy = true;
	w->recent[w->next++ % XFS_WINDOWS_RECENT] = at;
	if (w->nrecent < XFS_WINDOWS_RECENT)
		w->nrecent++;
	w->windows += !sorted;
	return true;
}

/* Bulkstat from inode @at to @end, a batch at a time.  Returns the inodes
 * read, or -1 if XFS refused the first call. */
static long read_window(struct bulk_ireq *req, int fd, unsigned long long at,
                        unsigned long long end)
{
	long n = 0;
	unsigned long long from = at;
	while (from < end) {
		memset(req, 0, sizeof *req);
		req->ino = from;
		/* no more records than the window has room for */
		req->icount = end - from < XFS_BULK_BATCH ? (uint32_t)(end - from)
		                                          : XFS_BULK_BATCH;
		if (ioctl(fd, IOC_XFS_BULKSTAT, req) != 0)
			return n == 0 && (errno == EPERM || errno == EACCES ||
			                  errno == ENOTTY || errno == EINVAL ||
			                  errno == EOPNOTSUPP) ? -1 : n;
		if (req->ocount == 0 || req->ino <= from)
			break;
		n += req->ocount;
		from = req->ino;
	}
	return n;
}

long xfs_window_at(struct xfs_windows *w, int fd, dev_t dev,
                   unsigned long long ino, bool rotating, bool sorted)
{
	if (!w)
		return 0;
	unsigned long long at = ino & ~(unsigned long long)(XFS_WINDOW - 1);
	int saved = errno;
	pthread_mutex_lock(&w->lock);
	bool mine = claim(w, dev, at, rotating, sorted);
	pthread_mutex_unlock(&w->lock);
	long n = mine ? read_window(w->buf, fd, at, at + XFS_WINDOW) : 0;
	errno = saved;
	if (!mine)
		return 0;
	pthread_mutex_lock(&w->lock);
	w->busy = false;
	if (w->dev == dev) {
		if (n < 0 || (w->windows >= XFS_WINDOW_TRIAL && w->hits < w->windows))
			w->off = true;
	}
	if (n > 0)
		w->inodes += n;
	pthread_mutex_unlock(&w->lock);
	return n > 0 ? n : 0;
}
