/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* No worker starts on a seeking device before the device advisor has
 * judged how it serves its requests: the removal pool (fastrm_rmtree with
 * FASTRM_RMTREE_FIT_WORKERS, 8 workers, as frm's --jobs=auto) removes a
 * tree whose device is a stand-in (device_advisor_stand_in, installed by
 * wrapping device_advisor_new): btrfs, reads of 9 ms each (judged to seek
 * after MEASURE_READS), one request in flight at a time until the
 * JUDGE_AT-th look at the counters, then a burst of requests in flight
 * together that says one head (SERIAL) or a device that serves them at
 * once (OVERLAP): the judgement comes late, as on a one-head disk.  Every
 * thread the pool starts is counted (wrapped pthread_create) with the
 * number of looks so far.  One head: no worker ever starts.  A queue:
 * workers start, and none before the judgement.  unlinkat sleeps
 * UNLINK_US (wrapped) so that the walk lasts past the judgement. */
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
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device/strategies.h"
#include "fastrm/rmtree.h"
#include "fixture.h"

#define UNLINK_US 1000
#define JUDGE_AT 20
#define TOP_DIRS 10
#define SUB_DIRS 10
#define FILES 8

/* ------------------------------------------------ the stand-in device */

static bool overlap;        /* what the burst says */
static unsigned looks;      /* counters looked at (under the advisor's lock) */
static unsigned unlinks;    /* unlinkat calls made */
static unsigned judged_at;  /* ...when the burst was first seen */

static bool counters(void *ctx, struct device_counters *c)
{
	(void)ctx;
	unsigned n = __atomic_add_fetch(&looks, 1, __ATOMIC_RELAXED);
	/* reads of 9 ms each, MEASURE_READS of them by the 7th look; no two
	 * requests in flight together (nothing to judge the queue by) */
	c->reads = 10ull * n;
	c->read_ms = 90ull * n;

	c->requests = 0;
	c->wait_ms = 0;
	c->busy_ms = 0;
	if (n == JUDGE_AT)
		judged_at = __atomic_load_n(&unlinks, __ATOMIC_RELAXED);
	if (n >= JUDGE_AT) {
		/* 200 requests, 8 in flight: 9 ms of the head each (one head),
		 * or 3 ms each served 8 at once (0.375 ms of the device each) */
		c->requests = 200;
		c->wait_ms = overlap ? 200 * 3 : 200 * 9 * 8;
		c->busy_ms = overlap ? 75 : 200 * 9;
	}
	return true;
}

static const struct device_stand_in stand_in = {
	.fs = DEVICE_FS_BTRFS,
	.bdev = 0, /* set in main: makedev() is not a constant */
	.counters = counters,
};
static struct device_stand_in device;

struct device_advisor *__real_device_advisor_new(enum device_advise what);
struct device_advisor *__wrap_device_advisor_new(enum device_advise what);

struct device_advisor *__wrap_device_advisor_new(enum device_advise what)
{
	struct device_advisor *a = __real_device_advisor_new(what);
	if (what == DEVICE_ADVISE_ALL)
		device_advisor_stand_in(a, &device);
	return a;
}

/* ------------------------------------------- threads started, unlinks */

static unsigned started;        /* threads the pool started */
static unsigned first_look = ~0u; /* the looks when the first one started */

int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg);

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg)
{
	unsigned n = __atomic_load_n(&looks, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&started, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&first_look, n, __ATOMIC_RELAXED);
	return __real_pthread_create(t, attr, fn, arg);
}

int __real_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags);

int __wrap_unlinkat(int dirfd, const char *path, int flags)
{
	__atomic_add_fetch(&unlinks, 1, __ATOMIC_RELAXED);
	usleep(UNLINK_US);
	return __real_unlinkat(dirfd, path, flags);
}

/* ---------------------------------------------------------- the tree */

static char *make_tree_of(int top_dirs, int sub_dirs)
{
	char *top = fx_mkdtemp();
	char path[4096];
	snprintf(path, sizeof path, "%s/t", top);
	assert_int_equal(mkdir(path, 0700), 0);
	for (int i = 0; i < top_dirs; i++) {
		snprintf(path, sizeof path, "%s/t/d%d", top, i);
		assert_int_equal(mkdir(path, 0700), 0);
		for (int j = 0; j < sub_dirs; j++) {
			snprintf(path, sizeof path, "%s/t/d%d/s%d", top, i, j);
			assert_int_equal(mkdir(path, 0700), 0);
			for (int k = 0; k < FILES; k++) {
				snprintf(path, sizeof path, "%s/t/d%d/s%d/f%d", top, i, j, k);
				int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
				assert_true(fd >= 0);
				close(fd);
			}
		}
	}
	return top;
}

static char *make_tree(void)
{
	return make_tree_of(TOP_DIRS, SUB_DIRS);
}

static void remove_judged_late(bool queue)
{
	overlap = queue;
	looks = 0;
	unlinks = judged_at = 0;
	started = 0;
	first_look = ~0u;
	char *top = make_tree();
	char path[4096];
	snprintf(path, sizeof path, "%s/t", top);
	char *paths[] = { path, NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = 8;
	o.flags = FASTRM_RMTREE_FIT_WORKERS;
	struct fastrm_rmtree_stats st = { 0 };
	assert_int_equal(fastrm_rmtree(paths, &o, &st), 0);
	struct stat sb;
	assert_int_equal(lstat(path, &sb), -1);
	printf("(%s: %u threads started, the first at look %u of %u; judged at "
	       "unlink %u of %u; %u workers)\n", queue ? "a queue" : "one head",
	       started, first_look, looks, judged_at, unlinks, st.workers);
	/* judged late, and the walk went on well past it */
	assert_int_equal(looks, JUDGE_AT);
	assert_true(judged_at > 0);
	assert_true(unlinks - judged_at >= (TOP_DIRS * SUB_DIRS * FILES) / 4);
	if (queue) {
		/* workers once judged, none before; never more than asked
		 * (btrfs: no DEVICE_WORKERS_WIDE) */
		assert_true(started > 0);
		assert_true(st.workers > 1);
		assert_true(st.workers <= 8);
		assert_true(first_look >= JUDGE_AT);
	} else {
		/* one head: the pool is fitted to one, no worker ever started */
		assert_int_equal(started, 0);
		assert_int_equal(st.workers, 1);
	}
	fx_cleanup(top);
}

static void test_one_head_judged_late(void **state)
{
	(void)state;
	remove_judged_late(false);
}

static void test_queue_judged_late(void **state)
{
	(void)state;
	remove_judged_late(true);
}

/* XFS whose reads seek, no bulkstat (the stand-in has none): more workers
 * than the 8 asked may start (DEVICE_WORKERS_WIDE), once the reads are
 * judged; asked for 1, never more. */
static void test_xfs_wide(void **state)
{
	(void)state;
	device.fs = DEVICE_FS_XFS;
	overlap = true;
	for (unsigned asked = 1; asked <= 8; asked += 7) {
		looks = 0;
		unlinks = judged_at = 0;
		started = 0;
		first_look = ~0u;
		/* 60 directories of 8 subdirectories: one walk would take
		 * some 4 s (1 ms an unlink), every directory a chance to
		 * hand one over once the reads are judged */
		char *top = make_tree_of(60, 8);
		char path[4096];
		snprintf(path, sizeof path, "%s/t", top);
		char *paths[] = { path, NULL };
		struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = asked,
		                                .flags = FASTRM_RMTREE_FIT_WORKERS };
		struct fastrm_rmtree_stats st = { 0 };
		assert_int_equal(fastrm_rmtree(paths, &o, &st), 0);
		struct stat sb;
		assert_int_equal(lstat(path, &sb), -1);
		printf("(XFS, %u asked: %u workers)\n", asked, st.workers);
		if (asked == 1)
			assert_int_equal(st.workers, 1);
		else
			assert_true(st.workers > asked && st.workers <= DEVICE_WORKERS_WIDE);
		fx_cleanup(top);
	}
	device.fs = DEVICE_FS_BTRFS;
}

int main(void)
{
	device = stand_in;
	device.bdev = makedev(4000, 4001);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_head_judged_late),
		cmocka_unit_test(test_queue_judged_late),
		cmocka_unit_test(test_xfs_wide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
