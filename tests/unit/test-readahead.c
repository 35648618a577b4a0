/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading ext4 directories' blocks ahead (lib/device/ext4-blocks.c),
 * counted in read requests of the loop device under a fresh ext4 image: a
 * directory of 20,000 entries read cold costs one request per block
 * without it, a few long ones with it; 300 small directories made in a row
 * cost one request each without it and a few windows with it; windows
 * that do not pay stop; every policy gets it through the device advisor
 * (fts and fastrm_rmtree with workers), not only auto; the advisor does
 * nothing of the kind on other file systems, and it leaves errno alone.
 * Root only (mkfs, loop mount): otherwise it skips with the reason. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fastrm/fts.h>
#include <fastrm/rmtree.h>

#include "device/strategies.h"
#include "dirread.h"
#include "fixture.h"

#define NFILES 20000

static char *top, img[4200], mnt[4200], big[4300], small[4300], many[4300];

#define NDIRS 300

static int sh(const char *const *argv)
{
	return fx_run((char *const *)argv);
}

/* Unmount and mount again: the loop device is new and nothing of the file
 * system is cached. */
static void remount(void)
{
	assert_int_equal(fx_loop_remount(img, mnt), 0);
}

#define device_reads fx_device_reads

static long read_all(int fd)
{
	struct dirread r;
	assert_int_equal(dirread_init(&r), 0);
	size_t names = 0;
	long n, total = 0;
	while ((n = dirread_load(&r, fd, &names)) > 0)
		total += n;
	assert_int_equal(n, 0);
	dirread_fini(&r);
	return total - 2; /* "." and ".." */
}

/* NDIRS small directories made one after another, a file in each. */
static void make_many(int m)
{
	assert_int_equal(mkdirat(m, "many", 0700), 0);
	int d = openat(m, "many", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	for (int i = 0; i < NDIRS; i++) {
		char name[16];
		snprintf(name, sizeof name, "d%03d", i);
		assert_int_equal(mkdirat(d, name, 0700), 0);
		int sub = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(sub >= 0);
		fx_write_file(sub, "f", "x");
		close(sub);
	}
	close(d);
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		printf("SKIP: needs root (mkfs and a loop mount)\n");
		exit(FX_SKIP);
	}
	top = fx_mkdtemp();
	snprintf(img, sizeof img, "%.4000s/img", top);
	snprintf(mnt, sizeof mnt, "%.4000s/mnt", top);
	snprintf(big, sizeof big, "%.4100s/big", mnt);
	snprintf(small, sizeof small, "%.4100s/small", mnt);
	snprintf(many, sizeof many, "%.4100s/many", mnt);
	assert_int_equal(fx_make_image(img, 256LL << 20, mnt), 0);
	if (sh((const char *[]){ "mkfs.ext4", "-q", "-F", "-b", "4096", "-N", "40000", img, NULL }) != 0 ||
	    sh((const char *[]){ "mount", "-o", "loop", img, mnt, NULL }) != 0) {
		printf("SKIP: cannot make and loop-mount an ext4 image\n");
		fx_cleanup(top);
		exit(FX_SKIP);
	}
	int m = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fx_make_flat(m, "big", NFILES);
	fx_make_flat(m, "small", 100);
	make_many(m);
	close(m);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fx_unmount(mnt);
	fx_cleanup(top);
	return 0;
}

/* Cold, without reading ahead: one request per directory block or so. */
static long cold_reads_plain(void)
{
	remount();
	int fd = open(big, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	long r0 = device_reads(mnt);
	assert_int_equal(read_all(fd), NFILES);
	long r1 = device_reads(mnt);
	close(fd);
	return r1 - r0;
}

static void test_fewer_requests(void **state)
{
	(void)state;
	long plain = cold_reads_plain();

	remount();
	int fd = open(big, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	long r0 = device_reads(mnt);
	struct readahead_result res;
	int dev = device_open_node(st.st_dev, 0);
	assert_true(dev >= 0);
	errno = 4321;
	assert_int_equal(ext4_dir_readahead(NULL, dev, fd, &st, &res), 1);
	close(dev);
	assert_int_equal(errno, 4321);
	assert_true(res.extents >= 1);
	assert_true(res.requests >= 1 && res.requests <= res.extents);
	assert_true(res.bytes >= st.st_size);
	assert_int_equal(read_all(fd), NFILES);
	long ahead = device_reads(mnt) - r0;
	close(fd);

	/* the reads asked for, in 128 KiB requests, and nothing else */
	long most = (long)((res.bytes + (128 << 10) - 1) / (128 << 10)) + 2;
	printf("directory of %lld bytes: %ld read requests cold, %ld after "
	       "reading ahead (%ld extents, %lld bytes asked for)\n",
	       (long long)st.st_size, plain, ahead, res.extents, res.bytes);
	assert_true(plain >= st.st_size / 4096 / 2);
	assert_true(ahead <= most);
	assert_true(ahead * 4 < plain);
}

/* A walk with @order, no stat, and fts_open's @options: read requests
 * while the directory is read. */
static long walk_reads(const char *order, int options)
{
	remount();
	char *argv[] = { big, NULL };
	FTS *sp = fastrm_fts_open(argv, FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD | options,
	                          NULL);
	assert_non_null(sp);
	assert_int_equal(fastrm_fts_set_order(sp, fastrm_order_by_name(order)), 0);
	FTSENT *p = fastrm_fts_read(sp); /* the root, preorder */
	assert_non_null(p);
	assert_int_equal(p->fts_info, FTS_D);
	long r0 = device_reads(mnt), files = 0;
	while ((p = fastrm_fts_read(sp)) != NULL)
		files += p->fts_info == FTS_NSOK;
	long r1 = device_reads(mnt);
	assert_int_equal(files, NFILES);
	assert_int_equal(fastrm_fts_close(sp), 0);
	return r1 - r0;
}

/* Whatever the policy, the directory's blocks are read ahead for a
 * stream that asks for it (before the advisor, only auto did); a plain
 * stream reads them as gnulib's does, one request a block or so. */
static void test_every_policy_reads_ahead(void **state)
{
	(void)state;
	long plain = cold_reads_plain();
	long global = walk_reads("global", FASTRM_FTS_DEVICE);
	long autom = walk_reads("auto", FASTRM_FTS_DEVICE);
	long dir = walk_reads("directory", FASTRM_FTS_DEVICE);
	long not_asked = walk_reads("auto", 0);
	printf("walk without stat: %ld read requests cold without reading "
	       "ahead; with FASTRM_FTS_DEVICE global %ld, auto %ld, directory "
	       "%ld; without, auto %ld\n", plain, global, autom, dir, not_asked);
	assert_true(global * 4 < plain);
	assert_true(autom * 4 < plain);
	assert_true(dir * 4 < plain);
	assert_true(not_asked * 2 > plain);
}

/* Read requests to open and read every directory of "many" in the order
 * they were made, cold, with the walk's state @s (NULL: none). */
static long many_reads(struct device_walk *s)
{
	remount();
	int d = open(many, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	long r0 = device_reads(mnt);
	for (int i = 0; i < NDIRS; i++) {
		char name[16];
		snprintf(name, sizeof name, "d%03d", i);
		int fd = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(fd >= 0);
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(st.st_size < READAHEAD_DIR_MIN);
		int dev = device_open_node(st.st_dev, 0);
		assert_true(dev >= 0);
		ext4_dir_readahead(s, dev, fd, &st, NULL);
		close(dev);
		assert_int_equal(read_all(fd), 1);
		close(fd);
	}
	long r1 = device_reads(mnt);
	close(d);
	return r1 - r0;
}

static void test_windows(void **state)
{
	(void)state;
	long plain = many_reads(NULL);
	struct device_walk s;
	device_walk_init(&s, NULL);
	long ahead = many_reads(&s);
	printf("%d small directories: %ld read requests cold, %ld with windows "
	       "(%lu windows, %lu directories found in one)\n",
	       NDIRS, plain, ahead, s.windows, s.hits);
	assert_true(plain >= NDIRS / 2);
	assert_true(ahead * 4 < plain);
	assert_true(s.windows >= 1 && s.windows <= 8);
	assert_true(s.hits + s.windows >= NDIRS - 8);
	assert_false(s.windows_off);
	assert_true(s.total.requests == (long)s.windows);
	device_walk_fini(&s);
}

/* Windows that do not pay stop: a walk whose windows so far found no
 * directory asks for no more once it has asked READAHEAD_TRIAL. */
static void test_windows_stop(void **state)
{
	(void)state;
	struct device_walk s;
	device_walk_init(&s, NULL);
	char name[4400];
	snprintf(name, sizeof name, "%.4300s/d000", many);
	int fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	int dev = device_open_node(st.st_dev, 0);
	assert_true(dev >= 0);
	assert_int_equal(ext4_dir_readahead(&s, dev, fd, &st, NULL), 1);
	assert_int_equal(ext4_dir_readahead(&s, dev, fd, &st, NULL), 0); /* in the window */
	assert_int_equal(s.hits, 1);
	/* a walk of misses only: forget the windows each time */
	device_walk_fini(&s);
	device_walk_init(&s, NULL);
	for (int i = 0; i < READAHEAD_TRIAL; i++) {
		assert_false(s.windows_off);
		s.nwin = 0;
		assert_int_equal(ext4_dir_readahead(&s, dev, fd, &st, NULL), 1);
	}
	assert_true(s.windows_off);
	s.nwin = 0;
	assert_int_equal(ext4_dir_readahead(&s, dev, fd, &st, NULL), 0);
	assert_int_equal(s.windows, READAHEAD_TRIAL);
	close(dev);
	close(fd);
	device_walk_fini(&s);
}

/* fastrm_rmtree with workers on the image: auto reads ahead in every
 * worker's walks; everything goes. */
static void test_rmtree_workers(void **state)
{
	(void)state;
	remount();
	long r0 = device_reads(mnt);
	char *paths[] = { many, big, NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = 4;
	struct fastrm_rmtree_stats stats;
	assert_int_equal(fastrm_rmtree(paths, &o, &stats), 0);
	long r1 = device_reads(mnt);
	/* the big directory whole, windows for the small ones */
	assert_true(stats.read_ahead_requests >= 2);
	assert_true(stats.read_ahead_bytes >= NFILES * 20);
	struct stat st;
	assert_int_equal(lstat(many, &st), -1);
	assert_int_equal(lstat(big, &st), -1);
	printf("fastrm_rmtree, 4 workers: %ld read requests\n", r1 - r0);
	/* without reading ahead: one per directory block at least */
	assert_true(r1 - r0 < NDIRS);
}

static void test_nothing_to_do(void **state)
{
	(void)state;
	struct stat st;
	/* a small directory, without a walk's state */
	int fd = open(small, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_size < READAHEAD_DIR_MIN);
	int dev = device_open_node(st.st_dev, 0);
	assert_true(dev >= 0);
	assert_int_equal(ext4_dir_readahead(NULL, dev, fd, &st, NULL), 0);
	close(fd);
	/* not a directory */
	fd = open(big, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	struct stat file = st;
	file.st_mode = S_IFREG | 0600;
	assert_int_equal(ext4_dir_readahead(NULL, dev, fd, &file, NULL), 0);
	close(dev);
	/* a device that sysfs does not know: none to open */
	assert_int_equal(device_open_node(makedev(4000, 4000), 0), -1);
	errno = 0;
	assert_int_equal(ext4_dir_readahead(NULL, -1, fd, &st, NULL), 0);
	assert_int_equal(errno, 0);
	close(fd);
	/* another file system: the fixture's own directory, when not ext4:
	 * the advisor reads nothing ahead there */
	struct statfs fs;
	assert_int_equal(statfs(top, &fs), 0);
	if (fs.f_type != 0xEF53) {
		fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		struct device_advisor *a = device_advisor_new(DEVICE_ADVISE_ALL);
		struct device_walk w;
		device_walk_init(&w, a);
		st.st_size = 1 << 20; /* pretend it is large */
		device_dir_opened(&w, fd, &st);
		st.st_size = 4096;
		device_dir_opened(&w, fd, &st);
		assert_int_equal(w.total.requests, 0);
		assert_int_equal(w.windows, 0);
		device_walk_fini(&w);
		device_advisor_free(a);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fewer_requests),
		cmocka_unit_test(test_every_policy_reads_ahead),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_windows_stop),
		cmocka_unit_test(test_nothing_to_do),
		cmocka_unit_test(test_rmtree_workers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
