/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pacing (lib/pace.c; fastrm_rmtree's max_rate and latency_target_us).
 *
 * The rule, pace_next_rate(): above the target it backs off in
 * proportion, to half at most and to PACE_MIN_RATE at least, from what
 * was made rather than from an allowance never used; between 0.8 and 1
 * of the target it holds; below, it creeps up by a twentieth; with no
 * latency seen it holds; never above the ceiling; without a target, the
 * ceiling.
 *
 * Whole removals on the test's own tmpfs directory: a ceiling is never
 * exceeded (the time a removal of N entries takes is at least what the
 * schedule gives them: a lower bound, which no slow machine breaks);
 * with a target, unlinks slower than it (unlinkat wrapped: it sleeps
 * SLOW_US first) make the rate fall and the workers wait, unlinks well
 * under it leave the removal unpaced; and the device's own latency
 * (a stand-in for its counters, installed by wrapping
 * device_advisor_new) paces the removals in flight: one at first, and
 * one at a time while the device is slow, more (one a second) while it is
 * calm; never the rate.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "device/strategies.h"
#include "fastrm/rmtree.h"
#include "fixture.h"
#include "fastrm-int.h"
#include "pace.h"

#define SLOW_US 4000

/* ------------------------------------------------------------- wraps */

static unsigned slow_us;       /* what each unlinkat sleeps first */
static int64_t t_start;        /* the removal's start (pace_now_ns) */
static unsigned in_flight, most, late_most; /* unlinks in flight; the
                                         most at once before LATE_NS, and
                                         from then until STOP_NS (then a
                                         stop lets each worker finish the
                                         one in hand) */
static int64_t late_ns, stop_ns;
static volatile sig_atomic_t stop_flag;
static bool slow_device;       /* the stand-in's requests take 50 ms */
static bool calm_device;       /* ...1 ms */
static unsigned long long looks;

int __real_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags)
{
	unsigned n = __atomic_add_fetch(&in_flight, 1, __ATOMIC_RELAXED);
	int64_t in = t_start ? pace_now_ns() - t_start : -1;
	if (in >= stop_ns)
		__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	unsigned *at = in < 0 || in >= stop_ns ? NULL : in < late_ns ? &most : &late_most;
	if (at) {
		unsigned m = __atomic_load_n(at, __ATOMIC_RELAXED);
		while (n > m && !__atomic_compare_exchange_n(at, &m, n, false,
		                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
	if (slow_us)
		usleep(slow_us);
	int rc = __real_unlinkat(dirfd, path, flags);
	__atomic_sub_fetch(&in_flight, 1, __ATOMIC_RELAXED);
	return rc;
}

static bool counters(void *ctx, struct device_counters *c)
{
	(void)ctx;
	unsigned long long n = __atomic_add_fetch(&looks, 1, __ATOMIC_RELAXED);
	/* 10 requests between two looks, 50 ms each (a busy disk) */
	memset(c, 0, sizeof *c);
	c->requests = 10 * n;
	c->wait_ms = (calm_device ? 10 : 500) * n;
	return true;
}

static struct device_stand_in device = {
	.fs = DEVICE_FS_EXT4,
	.counters = counters,
};

/* No block device to watch (tmpfs, a network file system), wherever the
 * test's directory is: the unlinks' own time stands in. */
static bool no_device;

static bool no_counters(void *ctx, struct device_counters *c)
{
	(void)ctx;
	(void)c;
	return false;
}

static struct device_stand_in none = {
	.fs = DEVICE_FS_EXT4,
	.counters = no_counters,
};

struct device_advisor *__real_device_advisor_new(enum device_advise what);
struct device_advisor *__wrap_device_advisor_new(enum device_advise what);
struct device_advisor *__wrap_device_advisor_new(enum device_advise what)
{
	struct device_advisor *a = __real_device_advisor_new(what);
	if ((slow_device || calm_device) && what == DEVICE_ADVISE_ALL)
		device_advisor_stand_in(a, &device);
	else if (no_device && what == DEVICE_ADVISE_ALL)
		device_advisor_stand_in(a, &none);
	return a;
}

/* ---------------------------------------------------------- the rule */

static void test_rule(void **state)
{
	(void)state;
	/* above the target: in proportion, from what was made */
	assert_float_equal(pace_next_rate(1000, 800, 20, 10, 0), 400, 1e-9);
	assert_float_equal(pace_next_rate(1000, 800, 11, 10, 0), 720, 1e-9);
	assert_float_equal(pace_next_rate(500, 800, 40, 10, 0), 250, 1e-9);
	/* unpaced until the first time above it */
	assert_float_equal(pace_next_rate(0, 800, 5, 10, 0), 0, 1e-9);
	assert_float_equal(pace_next_rate(0, 800, 15, 10, 0), 800 * (10.0 / 15), 1e-9);
	/* never below the floor */
	assert_float_equal(pace_next_rate(12, 12, 100, 10, 0), PACE_MIN_RATE, 1e-9);
	/* near the target: hold; well below: creep up */
	assert_float_equal(pace_next_rate(300, 300, 9, 10, 0), 300, 1e-9);
	assert_float_equal(pace_next_rate(300, 300, 5, 10, 0), 316, 1e-9);
	/* in flight: half above the target, one more well below it */
	assert_int_equal(pace_next_workers(8, 8, 20, 10), 4);
	assert_int_equal(pace_next_workers(1, 8, 20, 10), 1);
	assert_int_equal(pace_next_workers(4, 8, 5, 10), 5);
	assert_int_equal(pace_next_workers(8, 8, 5, 10), 8);
	assert_int_equal(pace_next_workers(4, 8, 9, 10), 4);
	assert_int_equal(pace_next_workers(4, 8, -1, 10), 4);
	/* nothing seen: hold */
	assert_float_equal(pace_next_rate(300, 0, -1, 10, 0), 300, 1e-9);
	/* the ceiling, always */
	assert_float_equal(pace_next_rate(300, 300, 5, 10, 310), 310, 1e-9);
	assert_float_equal(pace_next_rate(0, 800, 5, 10, 200), 200, 1e-9);
	assert_float_equal(pace_next_rate(0, 0, -1, 0, 200), 200, 1e-9);
	assert_float_equal(pace_next_rate(0, 0, -1, 0, 0), 0, 1e-9);
}

/* ------------------------------------------------------ whole removals */

static double secs_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Remove a tree of @dirs directories of @files files each with @o; the
 * time it took.  Everything must be gone. */
static double remove_tree(struct fastrm_rmtree_opts *o, int dirs, int files,
                          struct fastrm_rmtree_stats *st)
{
	char *top = fx_mkdtemp();
	char path[4096];
	snprintf(path, sizeof path, "%s/t", top);
	assert_int_equal(mkdir(path, 0700), 0);
	for (int d = 0; d < dirs; d++) {
		snprintf(path, sizeof path, "%s/t/d%d", top, d);
		assert_int_equal(mkdir(path, 0700), 0);
		for (int f = 0; f < files; f++) {
			snprintf(path, sizeof path, "%s/t/d%d/f%d", top, d, f);
			int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
			assert_true(fd >= 0);
			close(fd);
		}
	}
	snprintf(path, sizeof path, "%s/t", top);
	char *paths[] = { path, NULL };
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(fastrm_rmtree(paths, o, st), 0);
	double t = secs_since(&t0);
	struct stat sb;
	assert_int_equal(lstat(path, &sb), -1);
	fx_cleanup(top);
	return t;
}

static void ceiling(unsigned workers)
{
	unsigned long long rate = ~0ull;
	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = workers,
	                                .max_rate = 200, .pace_rate = &rate };
	struct fastrm_rmtree_stats st;
	/* 4 x 20 files and 5 directories: 85 removals, the first at once and
	 * PACE_CATCH_UP_MS worth (4 at 200/s) let through after a late wake:
	 * at least 80 slots of 5 ms */
	double t = remove_tree(&o, 4, 20, &st);
	assert_true(t >= 80 * 0.005);
	assert_true(st.paced_ms > 0);
	assert_int_equal(rate, 200);
}

static void test_ceiling_one_worker(void **state)
{
	(void)state;
	ceiling(1);
}

static void test_ceiling_workers(void **state)
{
	(void)state;
	ceiling(4);
}

static void test_target_slow_unlinks(void **state)
{
	(void)state;
	unsigned long long rate = ~0ull;
	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = 1,
	                                .latency_target_us = 1000, .pace_rate = &rate };
	struct fastrm_rmtree_stats st;
	no_device = true;
	slow_us = SLOW_US;
	/* 100 unlinks of 4 ms, a target of 1 ms: unpaced they make 250 a
	 * second; each window of 200 ms halves what the last one made */
	remove_tree(&o, 1, 100, &st);
	no_device = false;
	slow_us = 0;
	assert_true(rate > 0 && rate <= 125);
	assert_true(st.paced_ms > 0);
}

static void test_target_met(void **state)
{
	(void)state;
	unsigned long long rate = ~0ull;
	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = 2,
	                                .latency_target_us = 100000, .pace_rate = &rate };
	struct fastrm_rmtree_stats st;
	no_device = true;
	slow_us = SLOW_US;
	/* unlinks of 4 ms under a target of 100 ms: never paced */
	remove_tree(&o, 2, 50, &st);
	no_device = false;
	slow_us = 0;
	assert_int_equal(rate, 0);
	assert_int_equal(st.paced_ms, 0);
}

static void test_target_slow_device(void **state)
{
	(void)state;
	unsigned long long rate = ~0ull;
	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = 1,
	                                .latency_target_us = 10000, .pace_rate = &rate };
	struct fastrm_rmtree_stats st;
	slow_device = true;
	looks = 0;
	/* one worker, the device's requests 50 ms, a target of 10 ms: the
	 * device was looked at, and with one removal in flight there is
	 * nothing fewer: the rate is not lowered on a device (it would only
	 * make the removal longer) */
	slow_us = 2000;
	remove_tree(&o, 1, 250, &st);
	slow_us = 0;
	slow_device = false;
	assert_true(looks >= 2);
	assert_int_equal(rate, 0);
	assert_int_equal(st.paced_ms, 0);
}

/* 4 workers, unlinks of 2 ms, a target of 10 ms, stopped at @stop s; the
 * most unlinks in flight at once before @late s and after. */
static void in_flight_run(double late, double stop, struct fastrm_rmtree_stats *st)
{
	unsigned long long rate = ~0ull;
	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = 4,
	                                .latency_target_us = 10000, .pace_rate = &rate,
	                                .flags = FASTRM_RMTREE_SHARE_ALL,
	                                .stop = &stop_flag };
	char *top = fx_mkdtemp();
	char path[4096];
	snprintf(path, sizeof path, "%s/t", top);
	assert_int_equal(mkdir(path, 0700), 0);
	for (int d = 0; d < 8; d++) {
		snprintf(path, sizeof path, "%s/t/d%d", top, d);
		assert_int_equal(mkdir(path, 0700), 0);
		for (int f = 0; f < 800; f++) {
			snprintf(path, sizeof path, "%s/t/d%d/f%d", top, d, f);
			int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
			assert_true(fd >= 0);
			close(fd);
		}
	}
	snprintf(path, sizeof path, "%s/t", top);
	char *paths[] = { path, NULL };
	slow_us = 2000;
	most = late_most = 0;
	stop_flag = 0;
	late_ns = (int64_t)(late * 1e9);
	stop_ns = (int64_t)(stop * 1e9);
	t_start = pace_now_ns();
	assert_int_equal(fastrm_rmtree(paths, &o, st), -EINTR);
	t_start = 0;
	slow_us = 0;
	assert_int_equal(rate, 0); /* a device: never the rate */
	fx_cleanup(top);
}

static void test_target_slow_device_one_in_flight(void **state)
{
	(void)state;
	struct fastrm_rmtree_stats st;
	/* the device's requests 50 ms: one removal in flight, from the start */
	slow_device = true;
	in_flight_run(0.5, 1.0, &st);
	slow_device = false;
	assert_int_equal(most, 1);
	assert_int_equal(late_most, 1);
	assert_int_equal(st.workers, 1);
}

static void test_target_calm_device_more(void **state)
{
	(void)state;
	struct fastrm_rmtree_stats st;
	/* the device's requests 1 ms: one more in flight each second that
	 * stays well under the target (the first judged at 0.4 s at the
	 * earliest, the fifth at 1.2 s): one before 1.1 s, then 2 at least */
	calm_device = true;
	in_flight_run(1.1, 2.5, &st);
	calm_device = false;
	assert_int_equal(most, 1);
	assert_true(late_most >= 2);
	assert_true(st.workers >= 2);
}

static void test_invalid(void **state)
{
	(void)state;
	char *paths[] = { "/nonexistent-fastrm-test", NULL };
	struct fastrm_rmtree_opts o = { .size = sizeof o, .max_rate = -1 };
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), -EINVAL);
}

int main(void)
{
	device.bdev = makedev(4000, 4002);
	none.bdev = makedev(4000, 4003);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_ceiling_one_worker),
		cmocka_unit_test(test_ceiling_workers),
		cmocka_unit_test(test_target_slow_unlinks),
		cmocka_unit_test(test_target_met),
		cmocka_unit_test(test_target_slow_device),
		cmocka_unit_test(test_target_slow_device_one_in_flight),
		cmocka_unit_test(test_target_calm_device_more),
		cmocka_unit_test(test_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
