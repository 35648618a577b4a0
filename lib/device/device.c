/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device advisor (device.h): a profile per device, what its reads
 * were measured to cost, and the decisions taken from them.
 *
 * A profile is made at the first directory of a device that a walk or a
 * pool reads, and kept for the advisor's life (at most MAX_PROFILES
 * devices; others get no advice: no read-ahead, no fitting, sorting where
 * it is sorted today).  Making one costs a fstatfs, and for an advisor
 * of DEVICE_ADVISE_ALL (the removal pool's, a stream's opened with
 * FASTRM_FTS_DEVICE) a lookup in sysfs (and, for a device sysfs does not
 * name, such as btrfs's anonymous ones, in /proc/self/fdinfo and
 * mountinfo), and for ext4 an attempt to open the block device; a plain
 * stream's advisor (DEVICE_ADVISE_FS) stops at the fstatfs.  Everything
 * after is a pointer compare per directory.
 *
 * The measure: the block device's own counters of completed reads and of
 * the milliseconds spent on them (sysfs stat: fields 1 and 4), read at
 * the first directory and then at most once per MEASURE_MS as directories
 * are opened and windows change, until MEASURE_READS reads have completed:
 * their mean time sorts the device into SEEK, MODERATE or FAST for the
 * rest of the walk.  Where reads seek, the same counters then tell
 * whether the device serves its requests one at a time: its busy time
 * (field 10), against the time requests spent in it (fields 4 and 8), over
 * windows of QUEUE_WINDOW requests (reads and writes), until one has seen
 * about two or more in flight on average (device_judge_queue).  Until
 * reads are judged the defaults hold, chosen as what costs least when
 * wrong; but a walk that reads less than once per CACHED_GAP_MS over
 * CACHED_MS runs from memory and is advised as on a fast device (CACHED:
 * on XFS no sorting of large directories, no index lookups, and one
 * worker) until enough reads come to judge them.
 * The counters include other processes' reads of the same device; on a
 * shared, busy device the measure is theirs as much as ours. */
#define _GNU_SOURCE
#include "device.h"
#include "fs-magic.h"
#include "strategies.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* Devices one advisor keeps profiles of. */
#define MAX_PROFILES 32


struct device_profile {
	dev_t dev;               /* st_dev of the file system */
	enum device_fs fs;
	bool unsorted;           /* gnulib's list: sorting is wasted here */
	bool sized;              /* a directory's size counts its entries:
	                            tmpfs's BOGO_DIRENT_SIZE (mm/shmem.c) */
	bool bulkstat;           /* XFS: this process may ask for inodes in
	                            bulk (CAP_SYS_ADMIN) */
	bool tree_search;        /* btrfs: ...may search its trees
	                            (CAP_SYS_ADMIN), and it has a device */
	int devfd;               /* ext4: its block device, open, or -1 */
	dev_t bdev;              /* the block device with counters, or 0 */
	/* the measure (under the advisor's lock; reads and queue are read
	 * without) */
	enum device_reads reads;
	enum device_queue queue;
	uint64_t reads0, ms0;    /* the counters at the start */
	uint64_t requests0, wait0, busy0; /* ...at the current queue window */
	long long start;         /* when the measure started (ms) */
	long long sampled;       /* when they were last looked at (ms) */
	/* the queue probe was made, or is being made (queue-probe.c) */
	bool probed;
};

struct device_advisor {
	enum device_advise what;
	pthread_mutex_t lock;
	struct device_profile p[MAX_PROFILES];
	unsigned n;              /* profiles made (read without the lock) */
	struct xfs_windows *xw;  /* XFS's windows, for all the walks */
	struct btrfs_leaves *bl; /* btrfs's windows of leaves, likewise: made
	                            with the first profile that can use them
	                            (under the lock; read without) */
	const struct device_stand_in *stand_in; /* tests: no real device */
};

/* ------------------------------------------------------------ helpers */

/* Milliseconds on a coarse clock (a few ms a tick, no system call). */
static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* @bdev's counters; false if they cannot be had. */
static bool sysfs_counters(dev_t bdev, struct device_counters *c)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/stat", major(bdev),
	         minor(bdev));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	uint64_t f[10];
	if (sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
	                " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
	           &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8],
	           &f[9]) != 10)
		return false;
	c->reads = f[0];
	c->read_ms = f[3];
	c->requests = f[0] + f[4];
	c->wait_ms = f[3] + f[7];
	c->busy_ms = f[9];
	return true;
}

/* The mount ID of open file @fd (/proc/self/fdinfo's mnt_id), -1 if
 * unknown. */
static long mount_id_of(int fd)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long id = -1;
	while (id < 0 && fgets(line, sizeof line, f))
		if (sscanf(line, "mnt_id: %ld", &id) != 1)
			id = -1;
	fclose(f);
	return id;
}

/* The block device behind file system @dev, whose directory @fd is open
 * (or -1): @dev itself where sysfs knows it; else the source of its mount,
 * if that is a block device: the mount that holds @fd (btrfs gives each
 * subvolume an anonymous device of its own, which the mount table does not
 * show), else the one whose device is @dev.  0 if none. */
dev_t device_block_of(int fd, dev_t dev)
{
	char path[64];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u", major(dev), minor(dev));
	if (access(path, F_OK) == 0)
		return dev;
	long want = fd >= 0 ? mount_id_of(fd) : -1;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 0;
	char line[4096];
	dev_t found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		/* ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE ... */
		long id;
		unsigned ma, mi;
		if (sscanf(line, "%ld %*s %u:%u", &id, &ma, &mi) != 3 ||
		    (want >= 0 ? id != want : makedev(ma, mi) != dev))
			continue;
		char *sep = strstr(line, " - ");
		char type[64], source[1024];
		struct stat sb;
		if (sep && sscanf(sep + 3, "%63s %1023s", type, source) == 2 &&
		    source[0] == '/' && stat(source, &sb) == 0 && S_ISBLK(sb.st_mode))
			found = sb.st_rdev;
		else if (want >= 0)
			break; /* the mount of @fd is not on a block device */
	}
	fclose(f);
	return found;
}

int device_open_node(dev_t bdev, int flags)
{
	char path[80], line[160], node[200];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/uevent", major(bdev),
	         minor(bdev));
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
	int fd = open(node, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | flags);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != bdev) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether this process holds CAP_SYS_ADMIN (XFS's bulkstat needs it). */
static bool sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &h, d) != 0)
		return geteuid() == 0;
	return (d[CAP_SYS_ADMIN / 32].effective >> (CAP_SYS_ADMIN % 32)) & 1;
}

enum device_fs device_fs_of(long type, bool *unsorted)
{
	*unsorted = false;
	switch (type) {
	case MAGIC_EXT4:
		return DEVICE_FS_EXT4;
	case MAGIC_XFS:
		return DEVICE_FS_XFS;
	case MAGIC_BTRFS:
		return DEVICE_FS_BTRFS;
	case MAGIC_TMPFS:
	case MAGIC_RAMFS:
	case MAGIC_PROC:
	case MAGIC_SYSFS:
		*unsorted = true;
		return DEVICE_FS_MEMORY;
	case MAGIC_NFS:
	case MAGIC_CIFS:
	case MAGIC_SMB2:
	case MAGIC_LUSTRE:
		/* gnulib's rule; Lustre since 2026: sorting defeated its
		 * metadata prefetch */
		*unsorted = true;
		return DEVICE_FS_REMOTE;
	default:
		return fs_magic_remote((unsigned long)type) ? DEVICE_FS_REMOTE
		                                             : DEVICE_FS_OTHER;
	}
}

/* ----------------------------------------------------------- profiles */

/* @p's device's counters (a test's stand-in's, where it has one). */
static bool device_counters(const struct device_advisor *a,
                            const struct device_profile *p,
                            struct device_counters *c)
{
	if (a->stand_in)
		return a->stand_in->counters(a->stand_in->ctx, c);
	return sysfs_counters(p->bdev, c);
}

/* Under the lock: a new window for judging how @p's requests overlap,
 * from its counters @c. */
static void window_from(struct device_profile *p, const struct device_counters *c)
{
	p->requests0 = c->requests;
	p->wait0 = c->wait_ms;
	p->busy0 = c->busy_ms;
}

/* Under the lock: start measuring @p's reads from now. */
static void measure_from_now(struct device_advisor *a, struct device_profile *p)
{
	struct device_counters c;
	if (p->fs == DEVICE_FS_MEMORY || p->fs == DEVICE_FS_REMOTE || !p->bdev ||
	    !device_counters(a, p, &c)) {
		__atomic_store_n(&p->reads, DEVICE_READS_NONE, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&p->reads, DEVICE_READS_UNKNOWN, __ATOMIC_RELAXED);
		p->reads0 = c.reads;
		p->ms0 = c.read_ms;
		window_from(p, &c);
	}
	__atomic_store_n(&p->queue, DEVICE_QUEUE_UNKNOWN, __ATOMIC_RELAXED);
	p->start = p->sampled = now_ms();
}

/* Under the lock: a new profile for @dev, from directory @fd; NULL when
 * the advisor holds MAX_PROFILES already. */
static struct device_profile *make_profile(struct device_advisor *a, int fd,
                                           dev_t dev)
{
	if (a->n == MAX_PROFILES)
		return NULL;
	struct device_profile *p = &a->p[a->n];
	memset(p, 0, sizeof *p);
	p->dev = dev;
	p->devfd = -1;
	struct statfs fs;
	bool known = fstatfs(fd, &fs) == 0;
	p->fs = known ? device_fs_of((long)fs.f_type, &p->unsorted) : DEVICE_FS_OTHER;
	p->sized = known && fs.f_type == MAGIC_TMPFS;
	if (a->what == DEVICE_ADVISE_FS) {
		/* the file system's type, no more: nothing is measured */
		p->reads = DEVICE_READS_NONE;
	} else if (a->stand_in) {
		p->fs = a->stand_in->fs;
		p->bdev = a->stand_in->bdev;
		p->probed = true; /* nothing to open */
		measure_from_now(a, p);
	} else {
		if (p->fs != DEVICE_FS_MEMORY && p->fs != DEVICE_FS_REMOTE)
			p->bdev = device_block_of(fd, dev);
		if (p->fs == DEVICE_FS_EXT4 && p->bdev)
			p->devfd = device_open_node(p->bdev, 0);
		if (p->fs == DEVICE_FS_XFS)
			p->bulkstat = sys_admin();
		if (p->fs == DEVICE_FS_BTRFS) {
			p->tree_search = p->bdev && sys_admin();
			/* made for the first such device only: most walks
			 * never need it (12 KiB zeroed) */
			if (p->tree_search && !a->bl)
				a->bl = btrfs_leaves_new();
		}
		measure_from_now(a, p);
	}
	/* published last: walks look profiles up without the lock */
	__atomic_store_n(&a->n, a->n + 1, __ATOMIC_RELEASE);
	return p;
}

static struct device_profile *find(struct device_advisor *a, dev_t dev)
{
	unsigned n = __atomic_load_n(&a->n, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (a->p[i].dev == dev)
			return &a->p[i];
	return NULL;
}

/* The profile of @dev if the advisor has made one (the walk's last
 * first), else NULL. */
static struct device_profile *known(struct device_walk *w, dev_t dev)
{
	if (w->last && w->last->dev == dev)
		return w->last;
	return w->adv ? find(w->adv, dev) : NULL;
}

/* The profile of the device of directory @fd (stat @st), made on first
 * need; NULL without an advisor or room. */
static struct device_profile *profile(struct device_walk *w, int fd,
                                      const struct stat *st)
{
	struct device_profile *p = known(w, st->st_dev);
	if (!p && w->adv) {
		pthread_mutex_lock(&w->adv->lock);
		p = find(w->adv, st->st_dev);
		if (!p)
			p = make_profile(w->adv, fd, st->st_dev);
		pthread_mutex_unlock(&w->adv->lock);
	}
	if (p)
		w->last = p;
	return p;
}

static enum device_reads reads_of(const struct device_profile *p)
{
	return __atomic_load_n(&p->reads, __ATOMIC_RELAXED);
}

static enum device_queue queue_of(const struct device_profile *p)
{
	return __atomic_load_n(&p->queue, __ATOMIC_RELAXED);
}

/* Whether @p is still being measured: its reads (also while the walk
 * runs from memory), or, where they seek, how its requests overlap
 * (which only decides anything there). */
static bool measuring(const struct device_profile *p)
{
	enum device_reads r = reads_of(p);
	return r == DEVICE_READS_UNKNOWN || r == DEVICE_READS_CACHED ||
	       (r == DEVICE_READS_SEEK && queue_of(p) == DEVICE_QUEUE_UNKNOWN);
}

/* What @p's reads say where they cost nothing to the walk: fast, or none
 * made for a while. */
static bool reads_free(const struct device_profile *p)
{
	enum device_reads r = reads_of(p);
	return r == DEVICE_READS_FAST || r == DEVICE_READS_CACHED;
}

/* Whether how @p's requests overlap decides how many workers run: where
 * its reads seek, on btrfs, and on ext4 where nothing reads ahead
 * (device_workers_for). */
static bool queue_decides(const struct device_profile *p)
{
	return p->fs == DEVICE_FS_BTRFS || (p->fs == DEVICE_FS_EXT4 && p->devfd < 0);
}

/* Under the lock: judge how @p's requests overlapped since the window
 * began at its counters' requests0, wait0 and busy0 (now @c); a window
 * that does not tell starts again from here. */
static void judge_window(struct device_profile *p, const struct device_counters *c)
{
	enum device_queue q = device_judge_queue(c->requests - p->requests0,
	                                         c->wait_ms - p->wait0,
	                                         c->busy_ms - p->busy0);
	__atomic_store_n(&p->queue, q, __ATOMIC_RELAXED);
	window_from(p, c);
}

/* @p's reads seek and how its requests overlap decides the workers: ask
 * the device (queue-probe.c), once, and judge its counters over the
 * probe's reads.  Not under the lock (the probe takes a fifth of a second
 * on a one-head disk); its workers are held meanwhile (device_hold_for). */
static void probe(struct device_advisor *a, struct device_profile *p)
{
	struct device_counters c;
	pthread_mutex_lock(&a->lock);
	bool ok = device_counters(a, p, &c);
	if (ok)
		window_from(p, &c);
	pthread_mutex_unlock(&a->lock);
	if (!ok || device_probe_queue(p->bdev) < QUEUE_WINDOW)
		return; /* no privilege: the queue stays unknown */
	/* the counters are updated as the requests complete */
	pthread_mutex_lock(&a->lock);
	if (queue_of(p) == DEVICE_QUEUE_UNKNOWN && device_counters(a, p, &c))
		judge_window(p, &c);
	pthread_mutex_unlock(&a->lock);
}

/* Look at @p's counters if it is time: once MEASURE_READS reads have
 * completed since the start, the device is judged by their mean; and
 * each window of QUEUE_WINDOW requests is judged for how they overlap,
 * until one tells.  Where reads seek and that decides the workers, the
 * device is asked (probe()) rather than left to the walks: workers
 * started to put requests in flight make one head seek between their
 * subtrees (doc/archive/benchmarks-0.5.md, "Telling one head from a queue"). */
static void sample(struct device_advisor *a, struct device_profile *p)
{
	if (!measuring(p) ||
	    now_ms() - __atomic_load_n(&p->sampled, __ATOMIC_RELAXED) < MEASURE_MS)
		return;
	pthread_mutex_lock(&a->lock);
	long long now = now_ms();
	struct device_counters c;
	bool ask = false;
	if (!measuring(p) || now - p->sampled < MEASURE_MS) {
		/* another thread was here first */
	} else if (!device_counters(a, p, &c)) {
		__atomic_store_n(&p->reads, DEVICE_READS_NONE, __ATOMIC_RELAXED);
	} else {
		if (p->reads == DEVICE_READS_UNKNOWN || p->reads == DEVICE_READS_CACHED) {
			enum device_reads r = device_judge_reads(c.reads - p->reads0,
			                                         c.read_ms - p->ms0,
			                                         now - p->start);
			__atomic_store_n(&p->reads, r, __ATOMIC_RELAXED);
		}
		if (c.requests >= p->requests0 + QUEUE_WINDOW)
			judge_window(p, &c);
		if (p->reads == DEVICE_READS_SEEK && p->queue == DEVICE_QUEUE_UNKNOWN &&
		    !p->probed && queue_decides(p))
			ask = p->probed = true;
	}
	__atomic_store_n(&p->sampled, now, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&a->lock);
	if (ask)
		probe(a, p);
}

/* ---------------------------------------------------------- decisions */

enum device_reads device_judge(long us)
{
	return us >= SEEK_US ? DEVICE_READS_SEEK
	       : us < FAST_US ? DEVICE_READS_FAST
	                      : DEVICE_READS_MODERATE;
}

enum device_reads device_judge_reads(uint64_t reads, uint64_t ms,
                                     long long elapsed_ms)
{
	if (reads >= MEASURE_READS) {
		uint64_t us = ms * 1000 / reads;
		return device_judge(us > 1000000000 ? 1000000000 : (long)us);
	}
	if (elapsed_ms >= CACHED_MS && (long long)reads * CACHED_GAP_MS < elapsed_ms)
		return DEVICE_READS_CACHED;
	return DEVICE_READS_UNKNOWN;
}

enum device_queue device_judge_queue(uint64_t requests, uint64_t wait_ms,
                                     uint64_t busy_ms)
{
	/* in flight on average while busy: wait / busy (Little's law) */
	if (requests < QUEUE_WINDOW || !busy_ms || wait_ms * 10 < QUEUED_MIN * busy_ms)
		return DEVICE_QUEUE_UNKNOWN;
	return busy_ms * 1000 >= (uint64_t)SEEK_US * requests ? DEVICE_QUEUE_SERIAL
	                                                      : DEVICE_QUEUE_OVERLAP;
}


bool device_sort_for(enum device_fs fs, enum device_reads reads, bool unsorted,
                     bool large)
{
	if (reads == DEVICE_READS_CACHED) /* the walk runs from memory */
		reads = DEVICE_READS_FAST;
	/* A small directory too: on ext4 always (its entries' inodes lie
	 * close together, but removing them in inode order writes the inode
	 * table and bitmaps in one sweep: an aged real tree with every
	 * directory sorted took 0.12x of GNU rm's time on the one-head disk
	 * against 0.18x with small ones in directory order, and 0.20x
	 * against 0.22x on the plain VM; doc/archive/benchmarks-0.5.md,
	 * "The device advisor and the aged real tree"); elsewhere where
	 * reads seek. */
	if (!large && fs != DEVICE_FS_EXT4 && reads != DEVICE_READS_SEEK)
		return false;
	switch (fs) {
	case DEVICE_FS_MEMORY:
	case DEVICE_FS_REMOTE:
		return false;
	case DEVICE_FS_BTRFS:
		/* measured on the one-head disk: order does not matter */
		return false;
	case DEVICE_FS_XFS:
		/* on a disk that seeks sorting halves the seeks; where reads
		 * are fast it costs CPU for nothing (doc/archive/benchmarks-0.5.md) */
		return reads != DEVICE_READS_FAST;
	default:
		return !unsorted;
	}
}

unsigned device_workers_for(enum device_fs fs, enum device_reads reads,
                            enum device_queue queue, bool ahead, unsigned cpus)
{
	/* XFS, the walk running from memory: one.  Unlinks at once in XFS
	 * only contend (one copy of the real tree, warm, on a fresh XFS on
	 * the plain VM: one worker 0.86-0.98 s, two 1.16-1.43 s, eight
	 * 1.30-1.69 s, GNU rm 0.97 s; doc/archive/benchmarks-0.5.md, "Warm metadata on
	 * XFS").  Elsewhere as fast reads (ext4, the same: eight workers
	 * 0.75x of one). */
	if (reads == DEVICE_READS_CACHED) {
		if (fs == DEVICE_FS_XFS)
			return 1;
		reads = DEVICE_READS_FAST;
	}
	/* ext4 and btrfs on reads that seek, served one at a time, and
	 * nothing reads ahead for the walks: workers in different subtrees
	 * only make the head seek between them (an aged real tree on the
	 * one-head disk as a plain user, ext4: 8 workers 1.63x GNU rm's time,
	 * one 0.28x; btrfs as root: 8 workers 1.12x, one 1.00x;
	 * doc/archive/benchmarks-0.5.md).  Not where requests overlap: on a queued device
	 * of 3 ms a read, which seeks by its mean read too, one worker took
	 * 1.9x the time of 8 (btrfs, doc/archive/results-0.5.md).  Not on XFS: there the
	 * 8 workers were faster than one on the one-head disk (0.78x against
	 * 0.90x), and 32 faster still (below). */
	if ((fs == DEVICE_FS_EXT4 || fs == DEVICE_FS_BTRFS) &&
	    reads == DEVICE_READS_SEEK && queue == DEVICE_QUEUE_SERIAL && !ahead)
		return 1;
	/* XFS whose reads seek, nothing read ahead for the walks (no
	 * bulkstat): each worker waits on one read at a time; more in flight
	 * let the device's queue order them (DEVICE_WORKERS_WIDE) */
	if (fs == DEVICE_FS_XFS && reads == DEVICE_READS_SEEK && !ahead)
		return DEVICE_WORKERS_WIDE;
	/* XFS whose reads are fast: the walks are CPU-bound */
	if (fs == DEVICE_FS_XFS && reads == DEVICE_READS_FAST)
		return cpus;
	/* btrfs whose reads are fast: CPU-bound too, and its unlinks at once
	 * contend in the file system's trees (three copies of the real tree
	 * on a fresh btrfs, warm, plain VM, reads judged fast: the workers
	 * 1.02x of GNU rm's time, one worker 0.84x; doc/archive/results-0.5.md, "Warm
	 * metadata") */
	if (fs == DEVICE_FS_BTRFS && reads == DEVICE_READS_FAST)
		return 1;
	return 0;
}

/* ------------------------------------------------------------- public */

struct device_advisor *device_advisor_new(enum device_advise what)
{
	struct device_advisor *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->what = what;
	if (pthread_mutex_init(&a->lock, NULL) != 0) {
		free(a);
		return NULL;
	}
	if (what == DEVICE_ADVISE_ALL)
		a->xw = xfs_windows_new(); /* without it, no windows */
	return a;
}

void device_advisor_stand_in(struct device_advisor *a,
                             const struct device_stand_in *s)
{
	if (a)
		a->stand_in = s;
}

void device_advisor_free(struct device_advisor *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < a->n; i++)
		if (a->p[i].devfd >= 0)
			close(a->p[i].devfd);
	xfs_windows_free(a->xw);
	btrfs_leaves_free(a->bl);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void device_walk_init(struct device_walk *w, struct device_advisor *a)
{
	memset(w, 0, sizeof *w);
	w->adv = a;
	w->at = ~0ULL;
}

void device_walk_fini(struct device_walk *w)
{
	w->last = NULL;
}

/* btrfs: whether its leaves are read in windows here (btrfs-leaves.c):
 * where reads were measured to seek, and the process may search the
 * trees. */
static bool btrfs_windows(struct device_walk *w, const struct device_profile *p)
{
	return p->fs == DEVICE_FS_BTRFS && p->tree_search && w->adv->bl &&
	       reads_of(p) == DEVICE_READS_SEEK;
}

bool device_dir_opened(struct device_walk *w, int fd, const struct stat *st)
{
	if (!st || !S_ISDIR(st->st_mode))
		return false;
	int saved = errno;
	struct device_profile *p = profile(w, fd, st);
	bool windows = false;
	if (p) {
		sample(w->adv, p);
		if (p->devfd >= 0)
			ext4_dir_readahead(w, p->devfd, fd, st, NULL);
		windows = p->fs == DEVICE_FS_XFS && p->bulkstat && w->adv->xw &&
		          !reads_free(p) && reads_of(p) != DEVICE_READS_MODERATE;
		if (btrfs_windows(w, p)) {
			/* the directory's own items, then its entries' */
			w->total.leaves += btrfs_leaves_at(w->adv->bl, fd, st->st_dev,
			                                   p->bdev, st->st_ino, true);
			windows = true;
		}
	}
	errno = saved;
	return windows;
}

void device_pass_sorted(struct device_walk *w, int fd, const struct stat *st,
                        size_t n, const char *(*name_at)(void *, size_t, size_t *),
                        void *ctx)
{
	if (!st)
		return;
	int saved = errno;
	struct device_profile *p = profile(w, fd, st);
	/* a sorted pass removes in inode order, not in the index's: its
	 * leaves are read ahead, unless reads cost nothing here */
	if (p && p->fs == DEVICE_FS_XFS && w->adv->what == DEVICE_ADVISE_ALL &&
	    !reads_free(p))
		w->total.lookups += dir_index_readahead(fd, st, n, name_at, ctx);
	errno = saved;
}

/* A sorted directory's window is left: count what it held. */
static void window_left(struct device_walk *w)
{
	if (!w->run_read)
		return;
	w->held += w->run;
	w->sparse = xfs_windows_sparse(w->read, w->inodes, w->held);
}

void device_entry_out(struct device_walk *w, int fd, const struct stat *st,
                      unsigned long long ino, bool sorted)
{
	struct device_profile *p = profile(w, fd, st);
	if (p && btrfs_windows(w, p)) {
		w->total.leaves += btrfs_leaves_at(w->adv->bl, fd, st->st_dev, p->bdev,
		                                   ino, true);
		return;
	}
	if (!p || p->fs != DEVICE_FS_XFS || !p->bulkstat || !w->adv->xw)
		return;
	/* a large directory's entries in the directory's order would jump
	 * between windows: only sorted ones; and only those count as sorted
	 * (each window read once, not counted by the trial): a small
	 * directory's few entries go through the trial, sorted or not */
	bool large = st->st_size >= READAHEAD_DIR_MIN;
	if (large && !sorted)
		return;
	sorted = large;
	if (w->run_dev != st->st_dev || w->run_dir != st->st_ino) {
		/* another directory's entries: its own run */
		w->run_dev = st->st_dev;
		w->run_dir = st->st_ino;
		w->at = ~0ULL;
		w->inodes = w->held = 0;
		w->run = w->read = 0;
		w->run_read = w->sparse = false;
	}
	unsigned long long at = ino & ~(unsigned long long)(XFS_WINDOW - 1);
	if (at != w->at && !w->sparse) {
		if (sorted)
			window_left(w);
		w->at = at;
		w->run = 0;
		sample(w->adv, p);
		long n = xfs_window_at(w->adv->xw, fd, st->st_dev, ino,
		                       reads_of(p) == DEVICE_READS_SEEK, sorted);
		w->run_read = n > 0;
		w->read += n > 0;
		w->inodes += (unsigned long long)n;
		w->total.inodes += n;
	}
	if (w->run < UINT32_MAX)
		w->run++;
}

bool device_sort(struct device_walk *w, int fd, const struct stat *st, bool large)
{
	struct device_profile *p = st ? profile(w, fd, st) : NULL;
	/* without a profile, as before the advisor: large directories sort */
	return p ? device_sort_for(p->fs, reads_of(p), p->unsorted, large) : large;
}

bool device_unsorted(struct device_walk *w, int fd, const struct stat *st)
{
	struct device_profile *p = st ? profile(w, fd, st) : NULL;
	return p && p->unsorted;
}

unsigned device_workers(struct device_walk *w, dev_t dev, unsigned cpus)
{
	struct device_profile *p = known(w, dev);
	if (!p)
		return 0;
	/* what reads ahead for the walks: ext4's blocks need the device
	 * open, XFS's windows CAP_SYS_ADMIN (and that they pay) */
	bool ahead = (p->fs == DEVICE_FS_EXT4 && p->devfd >= 0) ||
	             (p->fs == DEVICE_FS_XFS && p->bulkstat &&
	              !xfs_windows_off(w->adv->xw, dev));
	return device_workers_for(p->fs, reads_of(p), queue_of(p), ahead, cpus);
}

bool device_hold_for(enum device_fs fs, enum device_reads reads,
                     enum device_queue queue)
{
	/* XFS and btrfs until the device's reads are judged: a walk from
	 * memory is CPU work whose unlinks at once contend in the file
	 * system (warm metadata, three copies of the real tree on a fresh
	 * XFS, plain VM: one worker 0.87x of GNU rm's time, workers started
	 * at once 1.01x; doc/archive/results-0.5.md, "Warm metadata").  ext4's unlinks
	 * in different directories do not contend so (0.46x with the
	 * workers).  A warm removal still reads a little, and at once (the
	 * allocation groups' metadata that find -ls does not read: 21 reads
	 * in its first 20 ms, then a few in 4 s), so no rate tells it from a
	 * cold one early; MEASURE_READS reads do (a cold walk reads them in
	 * tens of ms on an SSD, in about 0.6 s on the one-head disk, one
	 * worker meanwhile), and then device_workers() decides. */
	if (fs != DEVICE_FS_XFS && fs != DEVICE_FS_BTRFS)
		return false;
	if (reads == DEVICE_READS_UNKNOWN || reads == DEVICE_READS_CACHED)
		return true;
	/* btrfs whose reads seek, the queue not judged yet: workers
	 * started now would make one head seek between their subtrees
	 * before the pool is fitted to one (an aged real tree, cold, on a
	 * one-head disk, held out: 1.40x and 1.45x of GNU rm's time in two
	 * rounds of three, twice its seeks, --jobs=1 level; doc/results.md,
	 * "btrfs cold on the one-head disk"); warm on that disk they only
	 * contend in the subvolume's tree (GNU rm 2.62 s, one worker 2.75 s,
	 * eight fitted to one once judged 3.15 s; doc/archive/results-0.5.md,
	 * "btrfs warm on the one-head disk: the workers held").  The device
	 * is asked instead (probe(): where it can be opened); until it
	 * answers, or where it cannot be asked, one worker. */
	return fs == DEVICE_FS_BTRFS && reads == DEVICE_READS_SEEK &&
	       queue == DEVICE_QUEUE_UNKNOWN;
}

bool device_hold_workers(struct device_walk *w, dev_t dev)
{
	struct device_profile *p = known(w, dev);
	if (!p || !p->bdev)
		return false;
	sample(w->adv, p);
	return device_hold_for(p->fs, reads_of(p), queue_of(p));
}

enum device_reads device_measured(struct device_advisor *a, dev_t dev)
{
	struct device_profile *p = a ? find(a, dev) : NULL;
	return p ? reads_of(p) : DEVICE_READS_UNKNOWN;
}

enum device_queue device_queue_of(struct device_advisor *a, dev_t dev)
{
	struct device_profile *p = a ? find(a, dev) : NULL;
	return p ? queue_of(p) : DEVICE_QUEUE_UNKNOWN;
}

bool device_wait_counters(struct device_advisor *a, dev_t dev,
                          unsigned long long *requests,
                          unsigned long long *wait_ms)
{
	struct device_profile *p = a ? find(a, dev) : NULL;
	struct device_counters c;
	if (!p || !p->bdev || p->fs == DEVICE_FS_MEMORY || p->fs == DEVICE_FS_REMOTE ||
	    !device_counters(a, p, &c))
		return false;
	*requests = c.requests;
	*wait_ms = c.wait_ms;
	return true;
}

void device_assume(struct device_advisor *a, int fd, dev_t dev,
                   enum device_reads reads)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	struct device_profile *p = find(a, dev);
	if (!p)
		p = make_profile(a, fd, dev);
	if (p) {
		__atomic_store_n(&p->reads, reads, __ATOMIC_RELAXED);
		__atomic_store_n(&p->queue, reads == DEVICE_READS_SEEK
		                            ? DEVICE_QUEUE_SERIAL : DEVICE_QUEUE_OVERLAP,
		                 __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&a->lock);
}

void device_totals_add(struct device_totals *t, const struct device_walk *w)
{
	t->requests += w->total.requests;
	t->bytes += w->total.bytes;
	t->lookups += w->total.lookups;
	t->inodes += w->total.inodes;
	t->leaves += w->total.leaves;
}

unsigned long long device_dir_entries(const struct device_walk *w, off_t size)
{
	/* 20 bytes an entry, "." and ".." included */
	if (!w->last || !w->last->sized || size < 3 * 20)
		return 0;
	return (unsigned long long)size / 20 - 2;
}
