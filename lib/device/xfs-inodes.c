/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* XFS: reading the inodes of directories' entries ahead, in windows, as a
 * walk hands the entries out (strategies.h; the advisor, device.c, calls
 * it for each entry that goes out).
 *
 * Why: in a tree of small directories on XFS, a directory of a few
 * entries lives in its inode, and XFS puts a directory's files' inodes
 * next to it; what a removal reads is inode clusters and the one block of
 * each directory too large for its inode, about one read per directory,
 * each at its own place.  XFS spreads new directories over its allocation
 * groups, so a walk jumps between them: on the harness's one-head disk
 * each of a 100,000-entry tree's ~6,600 reads was a seek (doc/archive/benchmarks-0.5.md,
 * "XFS trees").  XFS caches its metadata itself, so the device cannot be
 * read ahead as on ext4 (ext4-blocks.c).
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
 * (doc/archive/benchmarks-0.5.md, "XFS flat: windows of inodes in a sorted
 * directory").  The trial below does not count them; the advisor stops a
 * directory's windows once they are sparse (xfs_windows_sparse).
 *
 * Only where reads cost what a seek costs: a device may say it rotates
 * and serve reads in a tenth of a millisecond (the virtual disks of the
 * machines this was measured on do), and there windows only cost CPU
 * (bulkstat looks every inode up, and the removal again: 7 % slower on
 * the plain VM, doc/archive/benchmarks-0.5.md).  So no window is read until the
 * advisor has measured the device's reads (device.c: MEASURE_READS of
 * them, from the walk's start) and found that they seek.  For a large
 * directory those are its own reading and its index lookups, reads at
 * scattered places: its removal in inode order reads forward, mostly
 * without a seek (measured from its first entry on,
 * no window was read on the harness's one-head disk). */
#define _GNU_SOURCE
#include "strategies.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
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
	struct recent_windows recent;
	unsigned long windows;   /* windows read on dev */
	unsigned long hits;      /* entries found in a recent window (one per
	                            directory and change of window) */
	bool off;                /* refused, or did not pay, on dev */
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

/* Under the lock: the windows are @dev's from now on. */
static void on_device(struct xfs_windows *w, dev_t dev)
{
	if (w->dev == dev && w->started)
		return;
	w->dev = dev;
	w->started = true;
	w->recent.n = w->recent.next = 0;
	w->windows = w->hits = 0;
	w->off = false;
}

bool xfs_windows_off(struct xfs_windows *w, dev_t dev)
{
	if (!w)
		return true;
	pthread_mutex_lock(&w->lock);
	bool off = w->started && w->dev == dev && w->off;
	pthread_mutex_unlock(&w->lock);
	return off;
}

/* Under the lock: whether the window at @at should be read now; if so it
 * is marked as being read.  A sorted directory's windows are not counted
 * by the trial (each is asked for once). */
static bool claim(struct xfs_windows *w, dev_t dev, unsigned long long at,
                  bool seek, bool sorted)
{
	on_device(w, dev);
	if (w->off || !seek)
		return false;
	if (recent_holds(&w->recent, at)) {
		w->hits += !sorted;
		return false;
	}
	if (w->busy || (!w->buf && !(w->buf = malloc(sizeof *w->buf +
	                                           XFS_BULK_BATCH * BULKSTAT_RECORD))))
		return false;
	w->busy = true;
	recent_add(&w->recent, at);
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
                   unsigned long long ino, bool seek, bool sorted)
{
	if (!w)
		return 0;
	unsigned long long at = ino & ~(unsigned long long)(XFS_WINDOW - 1);
	int saved = errno;
	pthread_mutex_lock(&w->lock);
	bool mine = claim(w, dev, at, seek, sorted);
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
