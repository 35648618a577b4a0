/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading an XFS directory's hash index ahead (lib/device/xfs-index.c),
 * and the inodes of XFS directories' entries in windows
 * (lib/device/xfs-inodes.c), as the device advisor decides them.
 *
 * Everywhere: the hash agrees with xfs_db's "hash" command on names of
 * every tail length, and a probe name is made for any hash (valid bytes
 * only, that hash exactly).  As root, on a fresh XFS image on a loop
 * device (counted in the device's read requests): the lookups read the
 * index's leaf blocks, so that removing the entries in inode order
 * afterwards reads fewer blocks than it does without them, and the whole
 * of it (lookups and removal) reads no more; a sorted pass gets it
 * whatever the device says of rotating (sysfs's flag is not asked), and
 * not where the reads are taken as measured fast; nothing on other file
 * systems or for small directories.  The inode windows: the
 * windows of the entries of a tree's top directory, its small directories
 * (the device taken to seek), read most of the tree's inodes, and the removal
 * afterwards reads at most the directories' blocks and half as many
 * more, where without them it reads about a cluster per directory too;
 * the advisor reads none on the image's loop device, whether it says it
 * rotates or not (its reads are measured fast: the file is in memory), so
 * a walk reaches a window here only with the reads taken to seek (a
 * tests-only flag; what windows gain on a seeking device is measured by
 * the benchmarks); a window read once is a hit the
 * next time; no window holds more than XFS_WINDOW inodes and a batch;
 * nothing elsewhere; 16 empty windows end a tree's windows (the trial)
 * but not a sorted directory's, and the rule for sparse windows.  A
 * large directory auto sorts, the reads taken to seek: its entries'
 * windows read all its inodes, each window once, and the removal reads
 * fewer requests; where the reads are measured fast, none are read.
 * With FASTRM_RMTREE_FIT_WORKERS one worker per CPU
 * runs at once once the image's (fast) reads are measured, and without it
 * all do.
 * Without root or mkfs.xfs the image tests skip with the reason. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fastrm/order.h>
#include <fastrm/rmtree.h>

#include "device/strategies.h"
#include "fastrm-int.h"
#include "fixture.h"

#define NFILES 20000
/* The trees of small directories: TREE_DIRS directories of TREE_FILES. */
#define TREE_DIRS 300
#define TREE_FILES 30

static char *top, img[4200], mnt[4200];
static bool have_image;

static int sh(const char *const *argv)
{
	return fx_run((char *const *)argv);
}

/* ------------------------------------------------------ no image needed */

static void test_hash_matches_xfs_db(void **state)
{
	(void)state;
	/* xfs_db -c "hash NAME" (xfsprogs 6.1) */
	static const struct {
		const char *name;
		uint32_t hash;
	} known[] = {
		{ "a", 0x61 },
		{ "ab", 0x30e2 },
		{ "abc", 0x187163 },
		{ "abcd", 0xc38b1e4 },
		{ "abcde", 0x1c58f263 },
		{ "file-0000001", 0x635a03c4 },
		{ ".frm-ix-", 0xd5e7e7bb },
		{ "\xc3\xa9" "12", 0x184a58b2 }, /* bytes above 0x7f */
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		assert_int_equal(xfs_dir_hash(known[i].name, strlen(known[i].name)),
		                 known[i].hash);
}

static void test_probe_names(void **state)
{
	(void)state;
	uint32_t x = 12345;
	for (int i = 0; i < 20000; i++) {
		uint32_t t = i == 0 ? 0 : i == 1 ? UINT32_MAX : (x = x * 1664525u + 1013904223u);
		char name[XFS_PROBE_LEN + 1];
		assert_true(xfs_probe_name(t, name));
		assert_int_equal(strlen(name), XFS_PROBE_LEN);
		assert_null(memchr(name, '/', XFS_PROBE_LEN));
		assert_int_equal(memcmp(name, ".frm-ix-", 8), 0);
		assert_int_equal(xfs_dir_hash(name, XFS_PROBE_LEN), t);
	}
}

/* --------------------------------------------------------- on an image */

static void remount(void)
{
	assert_int_equal(fx_loop_remount(img, mnt), 0);
}

/* The sysfs file @file of the device under @path. */
static void sysfs_dev(const char *path, const char *file, char *out, size_t size)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	snprintf(out, size, "/sys/dev/block/%u:%u/%s", major(st.st_dev),
	         minor(st.st_dev), file);
}

static long device_reads(void)
{
	return fx_device_reads(mnt);
}

/* The milliseconds the image's device has spent on reads (sysfs stat). */
static long device_read_ms(void)
{
	char p[128];
	sysfs_dev(mnt, "stat", p, sizeof p);
	FILE *f = fopen(p, "re");
	assert_non_null(f);
	long v[4];
	assert_int_equal(fscanf(f, "%ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3]), 4);
	fclose(f);
	return v[3];
}

static void set_rotational(char c)
{
	char p[128];
	sysfs_dev(mnt, "queue/rotational", p, sizeof p);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, &c, 1), 1);
	close(fd);
}

static void make_tree(int dirfd, const char *name)
{
	assert_int_equal(mkdirat(dirfd, name, 0700), 0);
	int t = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t >= 0);
	for (int i = 0; i < TREE_DIRS; i++) {
		char d[32];
		snprintf(d, sizeof d, "d%d", i);
		fx_make_flat(t, d, TREE_FILES);
	}
	close(t);
}

static char read_rotational(void)
{
	char rot[128], was = '0';
	sysfs_dev(mnt, "queue/rotational", rot, sizeof rot);
	int fd = open(rot, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, &was, 1), 1);
	close(fd);
	return was;
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		printf("SKIP (image tests): needs root (mkfs and a loop mount)\n");
		return 0;
	}
	top = fx_mkdtemp();
	snprintf(img, sizeof img, "%.4000s/img", top);
	snprintf(mnt, sizeof mnt, "%.4000s/mnt", top);
	assert_int_equal(fx_make_image(img, 512LL << 20, mnt), 0);
	if (sh((const char *[]){ "mkfs.xfs", "-q", "-f", img, NULL }) != 0 ||
	    sh((const char *[]){ "mount", "-o", "loop", img, mnt, NULL }) != 0) {
		printf("SKIP (image tests): cannot make and loop-mount an XFS image\n");
		return 0;
	}
	have_image = true;
	int m = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fx_make_flat(m, "a", NFILES);
	fx_make_flat(m, "b", NFILES);
	fx_make_flat(m, "c", NFILES);
	fx_make_flat(m, "d", NFILES);
	fx_make_flat(m, "e", NFILES);
	fx_make_flat(m, "f", NFILES);
	fx_make_flat(m, "small", 100);
	make_tree(m, "t1");
	make_tree(m, "t2");
	make_tree(m, "t3");
	make_tree(m, "t4");
	make_tree(m, "t5");
	make_tree(m, "t6");
	close(m);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (have_image)
		fx_unmount(mnt);
	if (top)
		fx_cleanup(top);
	return 0;
}

#define NEED_IMAGE()                                                       \
	do {                                                               \
		if (!have_image)                                           \
			skip();                                            \
	} while (0)

struct entries {
	size_t n;
	struct ent {
		uint64_t ino;
		char name[256];
	} *v;
};

static const char *ent_name(void *ctx, size_t i, size_t *len)
{
	struct entries *e = ctx;
	*len = strlen(e->v[i].name);
	return e->v[i].name;
}

static int by_ino(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static void read_sorted(int fd, struct entries *e)
{
	int dup_fd = dup(fd);
	assert_true(dup_fd >= 0);
	DIR *d = fdopendir(dup_fd);
	assert_non_null(d);
	e->v = calloc(NFILES, sizeof *e->v);
	assert_non_null(e->v);
	e->n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		assert_true(e->n < NFILES);
		e->v[e->n].ino = de->d_ino;
		snprintf(e->v[e->n].name, sizeof e->v[e->n].name, "%s", de->d_name);
		e->n++;
	}
	closedir(d);
	assert_int_equal(e->n, NFILES);
	qsort(e->v, e->n, sizeof *e->v, by_ino);
}

/* Cold: read directory @name, then (with @probe) read its index ahead,
 * then remove its entries in inode order.  Read requests of each phase. */
static void remove_dir(const char *name, bool probe, long *looked,
                       long *ahead_reads, long *remove_reads)
{
	remount();
	char path[4300];
	snprintf(path, sizeof path, "%.4200s/%s", mnt, name);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	struct entries e;
	read_sorted(fd, &e);
	long r0 = device_reads();
	errno = 777;
	*looked = probe ? dir_index_readahead(fd, &st, e.n, ent_name, &e) : 0;
	assert_int_equal(errno, 777);
	long r1 = device_reads();
	for (size_t i = 0; i < e.n; i++)
		assert_int_equal(unlinkat(fd, e.v[i].name, 0), 0);
	long r2 = device_reads();
	close(fd);
	assert_int_equal(rmdir(path), 0);
	free(e.v);
	*ahead_reads = r1 - r0;
	*remove_reads = r2 - r1;
}

static void test_index_read_ahead(void **state)
{
	(void)state;
	NEED_IMAGE();
	long looked, plain_ahead, plain_remove, ahead, remove;
	remove_dir("a", false, &looked, &plain_ahead, &plain_remove);
	assert_int_equal(plain_ahead, 0);
	remove_dir("b", true, &looked, &ahead, &remove);
	printf("%d entries removed in inode order: %ld reads; with the index "
	       "read ahead: %ld lookups, %ld reads, then %ld reads to remove\n",
	       NFILES, plain_remove, looked, ahead, remove);
	assert_int_equal(looked, (NFILES + PROBE_EVERY - 1) / PROBE_EVERY);
	/* the lookups read the leaf blocks (20,000 hashes of 8 bytes: 40
	 * blocks at least)... */
	assert_true(ahead >= 20);
	/* ...which removal then did not read: what it read fell by as many,
	 * give or take a few, and no more was read in all */
	assert_true(remove + ahead * 3 / 4 <= plain_remove);
	assert_true(remove + ahead <= plain_remove + ahead / 4);
}

/* fastrm_rmtree of @name on the image with "auto", @workers and @flags
 * (from a cold cache if @cold), on a device whose queue/rotational says
 * @rotational: all of it goes.  Its device read requests; its statistics
 * in *@stats; the reads' mean time in microseconds in *@us unless NULL. */
static long rmtree_image(const char *name, unsigned workers, unsigned flags,
                         bool cold, char rotational,
                         struct fastrm_rmtree_stats *stats, long *us)
{
	char path[4300];
	snprintf(path, sizeof path, "%.4200s/%s", mnt, name);
	char *paths[] = { path, NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = workers;
	o.flags = flags;
	o.order = fastrm_order_by_name("auto");
	if (cold)
		remount();
	set_rotational(rotational);
	long before = device_reads(), ms = device_read_ms();
	assert_int_equal(fastrm_rmtree(paths, &o, stats), 0);
	long reads = device_reads() - before;
	if (us)
		*us = reads > 0 ? (device_read_ms() - ms) * 1000 / reads : 0;
	struct stat st;
	assert_int_equal(lstat(path, &st), -1);
	return reads;
}

/* A large directory sorted (auto) with the reads not yet measured (or
 * taken as fast, @flags): its index's lookups. */
static size_t auto_lookups(const char *name, char rotational, unsigned flags)
{
	struct fastrm_rmtree_stats stats;
	rmtree_image(name, 2, flags, true, rotational, &stats, NULL);
	return stats.index_lookups;
}

/* The index is read ahead of a sorted pass whatever the device says of
 * rotating; not where its reads are known to be fast. */
static void test_index_by_measure(void **state)
{
	(void)state;
	NEED_IMAGE();
	char was = read_rotational();
	size_t flat = auto_lookups("c", '0', 0);
	size_t fast = auto_lookups("d", '1', FASTRM_RMTREE_READS_FAST);
	set_rotational(was);
	printf("fastrm_rmtree, auto: %zu lookups on a device that does not "
	       "say it rotates, %zu where the reads are taken as fast\n", flat, fast);
	assert_true(flat >= NFILES / PROBE_EVERY);
	assert_int_equal(fast, 0);
}

/* A directory of the test's own (fx_mkdtemp), open: its path in *@dir,
 * its stat in *@st, and whether it is on XFS. */
static int own_dir(char **dir, struct stat *st, bool *xfs)
{
	*dir = fx_mkdtemp();
	int fd = open(*dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct statfs fs;
	assert_int_equal(fstatfs(fd, &fs), 0);
	assert_int_equal(fstat(fd, st), 0);
	*xfs = fs.f_type == 0x58465342;
	return fd;
}

static void test_nothing_elsewhere(void **state)
{
	(void)state;
	/* the test's own directory, unless it is XFS */
	char *dir;
	struct stat st;
	bool xfs;
	int fd = own_dir(&dir, &st, &xfs);
	struct entries e = { 0 };
	e.v = calloc(NFILES, sizeof *e.v);
	assert_non_null(e.v);
	for (e.n = 0; e.n < NFILES; e.n++)
		snprintf(e.v[e.n].name, sizeof e.v[e.n].name, "n%zu", e.n);
	/* a directory that looks large */
	st.st_blocks = 1 << 20;
	st.st_size = 4096;
	if (!xfs) {
		/* the advisor asks for no lookups off XFS */
		struct device_advisor *a = device_advisor_new(DEVICE_ADVISE_ALL);
		struct device_walk w;
		device_walk_init(&w, a);
		errno = 55;
		device_pass_sorted(&w, fd, &st, e.n, ent_name, &e);
		assert_int_equal(errno, 55);
		assert_int_equal(w.total.lookups, 0);
		device_walk_fini(&w);
		device_advisor_free(a);
	}
	/* not a directory, too few names */
	struct stat file = st;
	file.st_mode = S_IFREG | 0600;
	assert_int_equal(dir_index_readahead(fd, &file, e.n, ent_name, &e), 0);
	assert_int_equal(dir_index_readahead(fd, &st, PROBE_EVERY, ent_name, &e), 0);
	close(fd);
	free(e.v);
	fx_cleanup(dir);
	if (!have_image)
		return;
	/* XFS, but a directory with no index to speak of */
	char path[4300];
	snprintf(path, sizeof path, "%.4200s/small", mnt);
	if (mkdir(path, 0700) != 0)
		assert_int_equal(errno, EEXIST);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	e.v = calloc(NFILES, sizeof *e.v);
	assert_non_null(e.v);
	for (e.n = 0; e.n < NFILES; e.n++)
		snprintf(e.v[e.n].name, sizeof e.v[e.n].name, "n%zu", e.n);
	assert_int_equal(dir_index_readahead(fd, &st, e.n, ent_name, &e), 0);
	free(e.v);
	close(fd);
}


/* ------------------------------------------------ the inode windows */

/* Tree @name removed (rmtree_image): its device read requests, the
 * inodes read ahead in *@ahead, the reads' mean time in *@us. */
static long remove_tree(const char *name, bool cold, char rotational,
                        size_t *ahead, long *us)
{
	struct fastrm_rmtree_stats stats;
	long reads = rmtree_image(name, 4, 0, cold, rotational, &stats, us);
	*ahead = stats.inodes_read_ahead;
	return reads;
}

/* The windows of the entries of tree @name's top directory (its small
 * directories), from a cold cache: the top directory is read, none of
 * the others.  The device read requests; the inodes in *@inodes. */
static long windows_of(const char *name, long *inodes)
{
	char path[4300];
	snprintf(path, sizeof path, "%.4200s/%s", mnt, name);
	remount();
	long before = device_reads();
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat top_st;
	assert_int_equal(fstat(fd, &top_st), 0);
	DIR *d = fdopendir(dup(fd));
	assert_non_null(d);
	struct xfs_windows *w = xfs_windows_new();
	assert_non_null(w);
	int dirs = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		xfs_window_at(w, fd, top_st.st_dev, e->d_ino, true, false);
		dirs++;
	}
	assert_int_equal(dirs, TREE_DIRS);
	*inodes = xfs_windows_inodes(w);
	xfs_windows_free(w);
	closedir(d);
	close(fd);
	return device_reads() - before;
}

static void test_inode_windows(void **state)
{
	(void)state;
	NEED_IMAGE();
	char was = read_rotational();
	size_t plain_ahead, fast_ahead, after_ahead;
	long us;
	long plain = remove_tree("t1", true, '0', &plain_ahead, NULL);
	/* this loop device says it rotates, but its file is in memory */
	remove_tree("t2", true, '1', &fast_ahead, &us);
	long inodes;
	long window_reads = windows_of("t3", &inodes);
	long after = remove_tree("t3", false, '0', &after_ahead, NULL);
	set_rotational(was);
	printf("a tree of %d small directories: %ld reads; windows of its "
	       "directories read %ld inodes in %ld requests, and then the "
	       "removal %ld; auto read %zu inodes ahead on a device that says "
	       "it rotates and read in %ld us on average\n", TREE_DIRS, plain,
	       inodes, window_reads, after, fast_ahead, us);
	/* no windows where the reads are fast, whatever the device says of
	 * rotating (the advisor measures the first 64; where all of them
	 * took under half its bar on average, so did those, unless the
	 * machine was very busy while the rest were read) */
	if (us < SEEK_US / 2) {
		assert_int_equal(plain_ahead, 0);
		assert_int_equal(after_ahead, 0);
		assert_int_equal(fast_ahead, 0);
	}
	/* the tree's own inodes, at least half of them, were in windows */
	assert_true(inodes >= TREE_DIRS * (TREE_FILES + 1) / 2);
	/* the removal then reads mostly the directories' blocks (one each):
	 * without the windows it also reads about a cluster per directory */
	assert_true(after + TREE_DIRS / 2 <= plain);
}

/* A large directory, which auto sorts by inode on a device that says it
 * rotates: where the reads are taken to seek, its entries' windows are
 * read (each once) as they go out, and the removal reads fewer requests
 * (the windows' reads come in batches); where the reads are measured
 * fast, none are read. */
static void test_sorted_windows(void **state)
{
	(void)state;
	NEED_IMAGE();
	char was = read_rotational();
	struct fastrm_rmtree_stats seek, fast;
	long us;
	struct statvfs vfs;
	assert_int_equal(statvfs(mnt, &vfs), 0);
	unsigned long long in_use = vfs.f_files - vfs.f_ffree;
	long with = rmtree_image("e", 2, FASTRM_RMTREE_READS_SEEK, true, '1',
	                         &seek, NULL);
	long without = rmtree_image("f", 2, 0, true, '1', &fast, &us);
	set_rotational(was);
	printf("%d entries in one directory, auto: %ld reads with %zu inodes "
	       "read ahead in windows (reads taken to seek); %ld reads with "
	       "%zu (reads measured at %ld us)\n", NFILES, with,
	       seek.inodes_read_ahead, without, fast.inodes_read_ahead, us);
	/* all of the directory's inodes, in windows asked for once each (no
	 * more than the file system's inodes in use, and a batch past the
	 * last window's end) */
	assert_true(seek.inodes_read_ahead >= NFILES);
	assert_true(seek.inodes_read_ahead <= in_use + XFS_BULK_BATCH);
	assert_true(with < without);
	if (us < SEEK_US / 2)
		assert_int_equal(fast.inodes_read_ahead, 0);
}

/* Tree @name removed cold with @workers workers and @flags
 * (rmtree_image): the most that ran at once after they were fitted (0:
 * not fitted). */
static unsigned fitted(const char *name, unsigned workers, unsigned flags)
{
	struct fastrm_rmtree_stats stats;
	rmtree_image(name, workers, flags, true, '0', &stats, NULL);
	/* workers start on demand, and no more than may run at once */
	assert_true(stats.workers >= 1 && stats.workers <= workers);
	if (stats.workers_fitted)
		assert_true(stats.workers <= stats.workers_fitted);
	return stats.workers_fitted;
}

/* FASTRM_RMTREE_FIT_WORKERS, the reads taken as measured fast (the image's
 * are, but not always fast enough on a loaded machine): one worker per CPU
 * runs at once; without the flag, all of them. */
static void test_fit_workers(void **state)
{
	(void)state;
	NEED_IMAGE();
	char was = read_rotational();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	unsigned workers = (unsigned)cpus + 4;
	unsigned fit = fitted("t5", workers, FASTRM_RMTREE_FIT_WORKERS |
	                                     FASTRM_RMTREE_READS_FAST);
	unsigned all = fitted("t6", workers, FASTRM_RMTREE_READS_FAST);
	set_rotational(was);
	printf("%u workers on %ld CPUs: %u at once with FASTRM_RMTREE_FIT_WORKERS "
	       "(0: all), %u without\n", workers, cpus, fit, all);
	assert_int_equal(fit, (unsigned)cpus);
	assert_int_equal(all, 0);
}

/* With the tree's metadata in memory (made just now, not remounted), the
 * fitted pool starts no worker on XFS: the walk reads nothing, and there
 * unlinks at once only contend (device_hold_workers).  Unfitted, the same
 * tree gets workers (the twin: the count can tell). */
static void test_warm_holds_workers(void **state)
{
	(void)state;
	NEED_IMAGE();
	int m = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(m >= 0);
	make_tree(m, "w1");
	make_tree(m, "w2");
	close(m);
	struct fastrm_rmtree_stats held, free_run;
	rmtree_image("w1", 8, FASTRM_RMTREE_FIT_WORKERS, false, '0', &held, NULL);
	rmtree_image("w2", 8, 0, false, '0', &free_run, NULL);
	printf("warm XFS tree, 8 workers: %u started fitted, %u unfitted\n",
	       held.workers, free_run.workers);
	assert_int_equal(held.workers, 1);
	assert_true(free_run.workers > 1);
}

static void test_window_hits_and_bounds(void **state)
{
	(void)state;
	struct xfs_windows *w = xfs_windows_new();
	assert_non_null(w);
	/* not XFS (the test's own directory, unless it is) */
	char *dir;
	struct stat st;
	bool xfs;
	int fd = own_dir(&dir, &st, &xfs);
	if (!xfs) {
		errno = 55;
		assert_int_equal(xfs_window_at(w, fd, st.st_dev, st.st_ino, true, false), 0);
		assert_int_equal(errno, 55);
	}
	assert_int_equal(xfs_window_at(NULL, fd, st.st_dev, st.st_ino, true, false), 0);
	close(fd);
	/* a sorted directory's windows are sparse past the first few, when
	 * they read many more inodes than they held entries */
	assert_false(xfs_windows_sparse(XFS_WINDOW_SPARSE_AFTER - 1, 1000000, 0));
	assert_true(xfs_windows_sparse(XFS_WINDOW_SPARSE_AFTER, 1000000, 0));
	assert_true(xfs_windows_sparse(XFS_WINDOW_SPARSE_AFTER, 1000000,
	                               1000000 / XFS_WINDOW_SPARSE - 1));
	assert_false(xfs_windows_sparse(XFS_WINDOW_SPARSE_AFTER, 1000000,
	                                1000000 / XFS_WINDOW_SPARSE));
	assert_false(xfs_windows_sparse(100, 800000, 790000));
	fx_cleanup(dir);
	xfs_windows_free(w);
	if (!have_image)
		return;
	/* on the image: nothing where reads are taken to be fast; where they
	 * are taken to seek, a window read, then a hit for it */
	w = xfs_windows_new();
	assert_non_null(w);
	remount();
	char path[4300];
	snprintf(path, sizeof path, "%.4200s/t4/d7", mnt);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(xfs_window_at(w, fd, st.st_dev, st.st_ino, false, false), 0);
	assert_false(xfs_windows_off(w, st.st_dev));
	errno = 55;
	long n = xfs_window_at(w, fd, st.st_dev, st.st_ino, true, false);
	assert_int_equal(errno, 55);
	printf("one window: %ld inodes\n", n);
	assert_true(n > TREE_FILES);
	assert_true(n <= XFS_WINDOW + XFS_BULK_BATCH);
	assert_int_equal(xfs_windows_inodes(w), n);
	assert_int_equal(xfs_window_at(w, fd, st.st_dev, st.st_ino, true, false), 0);
	assert_int_equal(xfs_windows_inodes(w), n);
	xfs_windows_free(w);
	/* the trial: XFS_WINDOW_TRIAL windows without a hit (here beyond
	 * the file system's last inode: empty) turn the windows off, unless
	 * they were a sorted directory's, each asked for once */
	for (int sorted = 0; sorted < 2; sorted++) {
		w = xfs_windows_new();
		assert_non_null(w);
		for (unsigned long long k = 1; k <= XFS_WINDOW_TRIAL; k++)
			assert_int_equal(xfs_window_at(w, fd, st.st_dev, k << 48,
			                               true, sorted), 0);
		n = xfs_window_at(w, fd, st.st_dev, st.st_ino, true, sorted);
		printf("after %d empty windows (%s): %ld inodes\n",
		       XFS_WINDOW_TRIAL, sorted ? "sorted" : "small directories", n);
		if (sorted)
			assert_true(n > TREE_FILES);
		else
			assert_int_equal(n, 0);
		assert_int_equal(xfs_windows_off(w, st.st_dev), !sorted);
		xfs_windows_free(w);
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_matches_xfs_db),
		cmocka_unit_test(test_probe_names),
		cmocka_unit_test(test_index_read_ahead),
		cmocka_unit_test(test_index_by_measure),
		cmocka_unit_test(test_nothing_elsewhere),
		cmocka_unit_test(test_inode_windows),
		cmocka_unit_test(test_window_hits_and_bounds),
		cmocka_unit_test(test_sorted_windows),
		cmocka_unit_test(test_fit_workers),
		cmocka_unit_test(test_warm_holds_workers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
