/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A chain 100,000 directories deep: walked with a constant number of open
 * fds (asserted at every depth sampled) on a 64 KiB thread stack, so any
 * recursion that followed the depth would crash; and removed through
 * fts_accpath in fts's default (chdir) mode. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fastrm/fts.h>

#include "fixture.h"

#define DEPTH 100000
#define SMALL_STACK (64 * 1024)

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = fx_mkdtemp();
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	fx_make_chain(fd, "d", DEPTH - 1, 10000);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fx_cleanup(dir);
	return 0;
}

struct job {
	int opts;
	long entries;
	long maxlevel;
	int min_fds, max_fds, max_up;
	int err;
};

static void *walk_thread(void *arg)
{
	struct job *j = arg;
	char *roots[] = { dir, NULL };
	FTS *fts = fastrm_fts_open(roots, j->opts, NULL);
	if (!fts) {
		j->err = errno;
		return NULL;
	}
	FTSENT *e;
	j->min_fds = 1 << 30;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		j->entries++;
		if (e->fts_info == FTS_DP && e->fts_level % 5000 == 0) {
			int n = fx_count_fds();
			if (n > j->max_up)
				j->max_up = n;
		}
		if (e->fts_level > j->maxlevel)
			j->maxlevel = e->fts_level;
		/* sample the fd count on the way down */
		if (e->fts_level % 5000 == 0 && e->fts_info == FTS_D &&
		    e->fts_level > 0) {
			int n = fx_count_fds();
			if (n < j->min_fds)
				j->min_fds = n;
			if (n > j->max_fds)
				j->max_fds = n;
		}
	}
	j->err = errno;
	fastrm_fts_close(fts);
	return NULL;
}

static void run(int opts)
{
	int base = fx_count_fds();
	struct job j = { .opts = opts };
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	assert_int_equal(pthread_attr_setstacksize(&attr, SMALL_STACK), 0);
	assert_int_equal(pthread_create(&t, &attr, walk_thread, &j), 0);
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);

	assert_int_equal(j.err, 0);
	assert_int_equal(j.maxlevel, DEPTH);
	/* each directory twice (pre and post), plus one file per 10,000 */
	assert_int_equal(j.entries, 2L * (DEPTH + 1) + DEPTH / 10000);
	/* the same fd count at depth 5,000 and at depth 100,000 */
	assert_int_equal(j.min_fds, j.max_fds);
	assert_true(j.max_fds - base <= 5);
	/* and no more on the way up, where ancestors are reopened */
	assert_true(j.max_up - base <= 5);
	assert_int_equal(fx_count_fds(), base);
}

static void test_deep_cwdfd_nostat(void **state)
{
	(void)state;
	run(FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT);
}

static void test_deep_physical(void **state)
{
	(void)state;
	run(FTS_PHYSICAL);
}

/* fts's default mode, as a program written against fts(3) uses it: remove
 * a chain (FASTRM_DEEP_REMOVE levels, default 100,000; the test suite also
 * runs it with 1,000,000) through fts_accpath relative to the working
 * directory, with at most the FD window and fts_rfd open at any depth
 * sampled. */
struct remove_job {
	long depth;
	long removed;
	int min_fds, max_fds;
	int err;
};

static void *remove_thread(void *arg)
{
	struct remove_job *j = arg;
	char *roots[] = { "chain", NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOSTAT, NULL);
	if (!fts) {
		j->err = errno;
		return NULL;
	}
	j->min_fds = 1 << 30;
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		if (e->fts_level % 50000 == 0 && e->fts_level > 0) {
			/* down (FTS_D) and back up (FTS_DP) */
			int n = fx_count_fds();
			if (n < j->min_fds)
				j->min_fds = n;
			if (n > j->max_fds)
				j->max_fds = n;
		}
		if (e->fts_info == FTS_D)
			continue;
		int flag = e->fts_info == FTS_DP ? AT_REMOVEDIR : 0;
		if (unlinkat(AT_FDCWD, e->fts_accpath, flag) < 0) {
			j->err = errno;
			break;
		}
		j->removed++;
	}
	if (!j->err)
		j->err = errno;
	fastrm_fts_close(fts);
	return NULL;
}

static void test_deep_default_mode_remove(void **state)
{
	(void)state;
	const char *e = getenv("FASTRM_DEEP_REMOVE");
	struct remove_job j = { .depth = e ? atol(e) : DEPTH };
	char *d = fx_mkdtemp();
	int fd = open(d, O_RDONLY | O_DIRECTORY);
	fx_make_chain(fd, "chain", j.depth - 1, 0);
	assert_int_equal(fchdir(fd), 0);
	int base = fx_count_fds();
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	assert_int_equal(pthread_attr_setstacksize(&attr, SMALL_STACK), 0);
	assert_int_equal(pthread_create(&t, &attr, remove_thread, &j), 0);
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	printf("default mode: removed a chain %ld deep, %d to %d fds open at the depths sampled\n",
	       j.depth, j.min_fds - base, j.max_fds - base);
	assert_int_equal(j.err, 0);
	assert_int_equal(j.removed, j.depth);
	assert_int_equal(faccessat(fd, "chain", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* the working directory is given back, and every fd */
	struct stat here, top;
	assert_int_equal(stat(".", &here), 0);
	assert_int_equal(fstat(fd, &top), 0);
	assert_true(here.st_ino == top.st_ino);
	/* the FD window, and fts_rfd */
	assert_true(j.max_fds - base <= 5);
	assert_int_equal(fx_count_fds(), base);
	assert_int_equal(chdir("/"), 0);
	close(fd);
	fx_cleanup(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deep_cwdfd_nostat),
		cmocka_unit_test(test_deep_physical),
		cmocka_unit_test(test_deep_default_mode_remove),
	};
	/* FASTRM_DEEP_ONLY: run only the tests whose names match it */
	const char *only = getenv("FASTRM_DEEP_ONLY");
	if (only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, setup, teardown);
}
