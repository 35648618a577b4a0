/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a walk and a small removal cost, beyond the tree itself: a plain
 * fts stream opens nothing in /sys, /dev or /proc and starts no thread,
 * as gnulib's fts (its only question of a device is one fstatfs); with
 * FASTRM_FTS_DEVICE it reads the device's counters and, as root on ext4,
 * opens the block device (the twin that shows the check can fail); a
 * removal that never hands out a subtree starts no worker, whatever
 * number it was given, and one that shares every directory does.
 *
 * Counted by wrapping open, openat, fopen and pthread_create at link time
 * (-Wl,--wrap, tests/meson.build).  The ext4 cases need root (mkfs, loop
 * mount) and say so when they cannot run; the rest run anywhere. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fastrm/fts.h>
#include <fastrm/rmtree.h>

#include "fastrm-int.h"
#include "fixture.h"

/* ------------------------------------------------------------ the wraps */

static int counting;          /* count only while the code under test runs */
static long system_opens;     /* paths under /sys, /dev, /proc */
static long threads_started;

static void seen(const char *path)
{
	if (counting && path &&
	    (!strncmp(path, "/sys/", 5) || !strncmp(path, "/dev/", 5) ||
	     !strncmp(path, "/proc/", 6)))
		__atomic_add_fetch(&system_opens, 1, __ATOMIC_RELAXED);
}

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	seen(path);
	return __real_open(path, flags, mode);
}

int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	seen(path);
	return __real_open64(path, flags, mode);
}

int __real_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	seen(path);
	return __real_openat(dirfd, path, flags, mode);
}

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode)
{
	seen(path);
	return __real_fopen(path, mode);
}

FILE *__real_fopen64(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode)
{
	seen(path);
	return __real_fopen64(path, mode);
}

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a,
                          void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
                          void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
                          void *(*fn)(void *), void *arg)
{
	if (counting)
		__atomic_add_fetch(&threads_started, 1, __ATOMIC_RELAXED);
	return __real_pthread_create(t, a, fn, arg);
}

static void count_from_now(void)
{
	system_opens = threads_started = 0;
	counting = 1;
}

static void count_stop(void)
{
	counting = 0;
}

/* ------------------------------------------------------------- fixtures */

static char *top;
static char img[4200], mnt[4200];
static bool ext4; /* the image is mounted at mnt */

/* A source-like tree: @dirs directories of 10 files, one nested. */
static void make_tree(const char *path, int dirs)
{
	assert_int_equal(mkdir(path, 0700), 0);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (int d = 0; d < dirs; d++) {
		char name[32];
		snprintf(name, sizeof name, "d%d", d);
		fx_make_flat(fd, name, 10);
	}
	fx_make_chain(fd, "nest", 3, 1);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	top = fx_mkdtemp();
	snprintf(img, sizeof img, "%.4000s/img", top);
	snprintf(mnt, sizeof mnt, "%.4000s/mnt", top);
	if (geteuid() != 0) {
		printf("the ext4 cases will skip: they need root (mkfs and a loop mount)\n");
		return 0;
	}
	if (fx_make_image(img, 64LL << 20, mnt) == 0 &&
	    fx_run((char *const[]){ "mkfs.ext4", "-q", "-F", img, NULL }) == 0 &&
	    fx_run((char *const[]){ "mount", "-o", "loop", img, mnt, NULL }) == 0)
		ext4 = true;
	else
		printf("the ext4 cases will skip: cannot make and loop-mount an ext4 image\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (ext4)
		fx_unmount(mnt);
	fx_cleanup(top);
	return 0;
}

/* Walk @root with @options; the entries seen. */
static long walk(const char *root, int options)
{
	char *argv[] = { (char *)root, NULL };
	count_from_now();
	FTS *fts = fastrm_fts_open(argv, options, NULL);
	assert_non_null(fts);
	long n = 0;
	while (fastrm_fts_read(fts))
		n++;
	assert_int_equal(errno, 0);
	assert_int_equal(fastrm_fts_close(fts), 0);
	count_stop();
	return n;
}

/* ---------------------------------------------------------------- tests */

/* The tree in the test's own directory (tmpfs or /tmp), every policy. */
static void test_plain_walk_here(void **state)
{
	(void)state;
	char path[4300];
	snprintf(path, sizeof path, "%.4200s/walk", top);
	make_tree(path, 5);
	static const int modes[] = {
		FTS_PHYSICAL,
		FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT,
		FTS_PHYSICAL | FTS_NOCHDIR,
		FTS_LOGICAL,
	};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		long n = walk(path, modes[i]);
		assert_true(n > 60);
		assert_int_equal(system_opens, 0);
		assert_int_equal(threads_started, 0);
	}
}

/* On ext4, as root: the plain walk still opens nothing of the system;
 * FASTRM_FTS_DEVICE does (sysfs's counters, the block device). */
static void test_plain_walk_ext4(void **state)
{
	(void)state;
	if (!ext4) {
		skip();
		return;
	}
	char path[4300];
	snprintf(path, sizeof path, "%.4200s/walk", mnt);
	make_tree(path, 20);
	long plain = walk(path, FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT);
	long plain_opens = system_opens, plain_threads = threads_started;
	long device = walk(path, FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT | FASTRM_FTS_DEVICE);
	long device_opens = system_opens;
	printf("plain walk of %ld entries on ext4: %ld opens in /sys, /dev, /proc, "
	       "%ld threads; with FASTRM_FTS_DEVICE: %ld opens\n", plain,
	       plain_opens, plain_threads, device_opens);
	assert_int_equal(device, plain);
	assert_int_equal(plain_opens, 0);
	assert_int_equal(plain_threads, 0);
	assert_true(device_opens > 0);
}

static int rmtree(const char *path, unsigned workers, unsigned flags,
                  struct fastrm_rmtree_stats *st)
{
	char *paths[] = { (char *)path, NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = workers;
	o.flags = flags;
	count_from_now();
	int rc = fastrm_rmtree(paths, &o, st);
	count_stop();
	return rc;
}

/* A removal with nothing to hand out starts no worker, however many it
 * may; sharing every directory starts them (the count can fail). */
static void test_rmtree_starts_on_demand(void **state)
{
	(void)state;
	char path[4300];
	struct stat sb;
	struct fastrm_rmtree_stats st;
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);

	/* one directory of files: no subtree to hand out */
	fx_make_flat(fd, "flat", 500);
	snprintf(path, sizeof path, "%.4200s/flat", top);
	assert_int_equal(rmtree(path, 8, FASTRM_RMTREE_FIT_WORKERS, &st), 0);
	assert_int_equal(lstat(path, &sb), -1);
	assert_int_equal(threads_started, 0);
	assert_int_equal(st.workers, 1);

	/* a missing path, and a file */
	snprintf(path, sizeof path, "%.4200s/missing", top);
	assert_int_equal(rmtree(path, 8, 0, &st), 1);
	assert_int_equal(threads_started, 0);
	fx_write_file(fd, "file", "x");
	snprintf(path, sizeof path, "%.4200s/file", top);
	assert_int_equal(rmtree(path, 8, 0, &st), 0);
	assert_int_equal(threads_started, 0);

	/* four small files given at once: no worker; four huge (sparse) ones:
	 * one worker each, at once (their unlinks may take long) */
	char *files[5];
	for (int big = 0; big < 2; big++) {
		for (int i = 0; i < 4; i++) {
			char name[32];
			snprintf(name, sizeof name, "file%d", i);
			int f = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			assert_true(f >= 0);
			if (big)
				assert_int_equal(ftruncate(f, 64LL << 20), 0);
			close(f);
			assert_true(asprintf(&files[i], "%s/%s", top, name) > 0);
		}
		files[4] = NULL;
		struct fastrm_rmtree_opts o = { 0 };
		o.size = sizeof o;
		o.workers = 8;
		count_from_now();
		assert_int_equal(fastrm_rmtree(files, &o, &st), 0);
		count_stop();
		printf("four %s files given: %ld threads started\n", big ? "huge" : "small",
		       threads_started);
		assert_int_equal(threads_started, big ? 3 : 0);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(lstat(files[i], &sb), -1);
			free(files[i]);
		}
	}

	/* every directory shared: workers start (at most 3 more) */
	snprintf(path, sizeof path, "%.4200s/tree", top);
	make_tree(path, 8);
	assert_int_equal(rmtree(path, 4, FASTRM_RMTREE_SHARE_ALL, &st), 0);
	assert_int_equal(lstat(path, &sb), -1);
	printf("a shared tree: %ld threads started, %u workers, %zu subtrees shared\n",
	       threads_started, st.workers, st.subtrees_shared);
	assert_true(threads_started >= 1 && threads_started <= 3);
	assert_int_equal(st.workers, (unsigned)threads_started + 1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_walk_here),
		cmocka_unit_test(test_plain_walk_ext4),
		cmocka_unit_test(test_rmtree_starts_on_demand),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
