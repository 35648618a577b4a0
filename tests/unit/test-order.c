/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ordering policies fed a mocked directory: getdents64() and lseek() are
 * interposed for one magic fd, which returns a queued sequence of
 * (name, inode) entries a few at a time; realloc() can be made to fail
 * (linked with --wrap=realloc).  Each test asserts the order a policy
 * yields and that every entry comes exactly once.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dirread.h"
#include "order.h"

#define MOCK_FD 1000

/* ------------------------------------------------------- the mock */

static struct {
	char (*name)[32];
	uint64_t *ino;
	size_t n, pos;
	size_t per_call; /* entries per getdents64 call */
	size_t rewinds;
} dir;

static void mock_dir(size_t n, size_t per_call)
{
	free(dir.name);
	free(dir.ino);
	dir.name = calloc(n, sizeof *dir.name);
	dir.ino = calloc(n, sizeof *dir.ino);
	dir.n = n;
	dir.pos = 0;
	dir.per_call = per_call;
	dir.rewinds = 0;
}

ssize_t getdents64(int fd, void *buf, size_t size)
{
	if (fd != MOCK_FD)
		return syscall(SYS_getdents64, fd, buf, size);
	size_t off = 0, k = 0;
	while (dir.pos < dir.n && k < dir.per_call) {
		size_t len = strlen(dir.name[dir.pos]);
		size_t reclen = (offsetof(struct dirent64, d_name) + len + 1 + 7) & ~(size_t)7;
		if (off + reclen > size)
			break;
		struct dirent64 *d = (struct dirent64 *)((char *)buf + off);
		d->d_ino = dir.ino[dir.pos];
		d->d_off = (off64_t)dir.pos + 1;
		d->d_reclen = (unsigned short)reclen;
		d->d_type = DT_REG;
		memcpy(d->d_name, dir.name[dir.pos], len + 1);
		off += reclen;
		dir.pos++;
		k++;
	}
	return (ssize_t)off;
}

off_t lseek(int fd, off_t off, int whence)
{
	if (fd != MOCK_FD)
		return (off_t)syscall(SYS_lseek, fd, off, whence);
	if (whence == SEEK_SET) {
		if (off == 0)
			dir.rewinds++;
		dir.pos = (size_t)off;
	}
	return (off_t)dir.pos;
}

/* realloc fails once `realloc_budget` calls have succeeded (-1: never). */
static long realloc_budget = -1;
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
	if (realloc_budget == 0)
		return NULL;
	if (realloc_budget > 0)
		realloc_budget--;
	return __real_realloc(p, n);
}

/* ------------------------------------------------------- running */

struct out {
	size_t n;
	uint64_t *ino;
	char (*name)[32];
};

static int record(void *ctx, const struct fastrm_dirent *d)
{
	struct out *o = ctx;
	o->ino[o->n] = d->ino;
	assert_true(d->namelen < 32);
	memcpy(o->name[o->n], d->name, d->namelen + 1);
	o->n++;
	return 0;
}

/* Run @policy over the mocked directory; @max per call. */
static struct out run(const struct fastrm_order *policy, size_t budget,
                      off_t st_size, size_t max)
{
	struct dirread rd;
	struct stat st = { .st_size = st_size };
	struct fastrm_order_source src = { &rd, MOCK_FD, false, &st, budget, 0 };
	struct out o = { 0, calloc(dir.n + 1, sizeof *o.ino),
		         calloc(dir.n + 1, sizeof *o.name) };
	void *state = NULL;
	assert_int_equal(dirread_init(&rd), 0);
	dir.pos = 0;
	for (int calls = 0;; calls++) {
		long n = policy->next(&state, &src, max, record, &o);
		assert_true(n >= 0);
		assert_true(o.n <= dir.n);
		if (n == 0)
			break;
		assert_true(calls < 1000000);
	}
	policy->release(state);
	dirread_fini(&rd);
	return o;
}

static void out_free(struct out *o)
{
	free(o->ino);
	free(o->name);
}

/* Every mocked entry exactly once. */
static void assert_exactly_once(const struct out *o)
{
	assert_int_equal(o->n, dir.n);
	unsigned char *seen = calloc(dir.n, 1);
	for (size_t i = 0; i < o->n; i++) {
		unsigned long k = strtoul(o->name[i] + 1, NULL, 10);
		assert_true(k < dir.n);
		assert_int_equal(o->ino[i], dir.ino[k]);
		assert_int_equal(seen[k], 0);
		seen[k] = 1;
	}
	free(seen);
}

static int key_le(const struct out *o, size_t a, size_t b)
{
	if (o->ino[a] != o->ino[b])
		return o->ino[a] < o->ino[b];
	return strcmp(o->name[a], o->name[b]) <= 0;
}

static size_t descents(const struct out *o)
{
	size_t d = 0;
	for (size_t i = 1; i < o->n; i++)
		d += !key_le(o, i - 1, i);
	return d;
}

/* Names "eK" for entry K; inodes pseudo-random (with repeats: hard
 * links), or all equal when @same. */
static void fill(size_t n, size_t per_call, int same)
{
	mock_dir(n, per_call);
	uint32_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		snprintf(dir.name[i], sizeof dir.name[i], "e%zu", i);
		x = x * 1103515245u + 12345u;
		dir.ino[i] = same ? 7 : 1000 + (x >> 8) % (n / 2 + 1);
	}
}

/* ------------------------------------------------------- tests */

static void test_directory_keeps_order(void **state)
{
	(void)state;
	fill(5000, 37, 0);
	struct out o = run(&order_directory, 1 << 20, 0, 100);
	assert_exactly_once(&o);
	for (size_t i = 0; i < o.n; i++)
		assert_int_equal(o.ino[i], dir.ino[i]);
	out_free(&o);
}

/* Policies that hand out one global inode order, and what each must do:
 * every entry once, no descent in (ino, name) order, and rewinds (passes)
 * within bounds. */
static const struct sorted_case {
	const char *what;
	const struct fastrm_order *policy;
	size_t n, per_call;
	int same;                      /* every entry on one inode */
	size_t budget, max;
	size_t min_rewinds, max_rewinds;
} sorted_cases[] = {
	{ "inode: the whole directory, whatever the budget", &order_inode,
	  50000, 300, 0, 256 * 1024, 1024, 0, 0 },
	{ "global beyond the budget: 256 KiB holds a few thousand, many passes",
	  &order_global, 60000, 300, 0, 256 * 1024, 1024, 5, SIZE_MAX },
	{ "global: 40,000 hard links to one inode, pass boundaries inside the tie",
	  &order_global, 40000, 250, 1, 256 * 1024, 777, 2, SIZE_MAX },
	{ "global within the budget: one pass", &order_global,
	  3000, 100, 0, 8 << 20, 1024, 0, 0 },
};

static void test_sorted_policies(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof sorted_cases / sizeof sorted_cases[0]; k++) {
		const struct sorted_case *c = &sorted_cases[k];
		printf("case: %s\n", c->what);
		fill(c->n, c->per_call, c->same);
		struct out o = run(c->policy, c->budget, 0, c->max);
		assert_exactly_once(&o);
		assert_int_equal(descents(&o), 0);
		assert_true(dir.rewinds >= c->min_rewinds);
		assert_true(dir.rewinds <= c->max_rewinds);
		out_free(&o);
	}
}

/* Names short at first (the table is sized from the first buffer) and far
 * longer later: the name arena, not the record count, bounds what a pass
 * keeps, and a key above any key dropped must not be kept (the next pass
 * would never see the dropped one). */
static void test_global_names_outgrow_estimate(void **state)
{
	(void)state;
	fill(60000, 300, 0);
	for (size_t i = 3000; i < dir.n; i++) {
		size_t len = strlen(dir.name[i]);
		size_t want = 12 + (i * 7919) % 19; /* 12..30 */
		while (len < want)
			dir.name[i][len++] = 'x';
		dir.name[i][len] = '\0';
	}
	struct out o = run(&order_global, 256 * 1024, 0, 1024);
	assert_exactly_once(&o);
	assert_int_equal(descents(&o), 0);
	assert_true(dir.rewinds >= 5);
	out_free(&o);
}

static void test_chunked_sorts_windows(void **state)
{
	(void)state;
	fill(60000, 300, 0);
	struct out o = run(&order_chunked, 256 * 1024, 0, 1024);
	assert_exactly_once(&o);
	/* sorted runs, one per window: a few descents, not a global order */
	size_t d = descents(&o);
	assert_true(d >= 5);
	assert_true(d <= 60000 / 2000);
	assert_int_equal(dir.rewinds, 0);
	out_free(&o);
}

static void test_gnulib_threshold(void **state)
{
	(void)state;
	/* below 10,000 entries: directory order */
	fill(5000, 300, 0);
	struct out o = run(&order_gnulib, 1 << 20, 0, 1024);
	assert_exactly_once(&o);
	for (size_t i = 0; i < o.n; i++)
		assert_int_equal(o.ino[i], dir.ino[i]);
	out_free(&o);
	/* above: sorted (windows of 100,000; the mock fd's file system is
	 * unknown, so sorting applies) */
	fill(30000, 300, 0);
	o = run(&order_gnulib, 1 << 20, 0, 1024);
	assert_exactly_once(&o);
	assert_int_equal(descents(&o), 0);
	out_free(&o);
}

static void test_auto_by_size(void **state)
{
	(void)state;
	fill(30000, 300, 0);
	/* st_size says small: directory order */
	struct out o = run(&order_auto, 1 << 20, 4096, 1024);
	assert_exactly_once(&o);
	assert_true(descents(&o) > 0);
	out_free(&o);
	/* st_size says large: global inode order within the budget */
	o = run(&order_auto, 256 * 1024, 30000 * 24, 1024);
	assert_exactly_once(&o);
	assert_int_equal(descents(&o), 0);
	out_free(&o);
}

static void test_allocation_failure_loses_nothing(void **state)
{
	(void)state;
	const struct fastrm_order *policies[] = {
		&order_inode, &order_global, &order_chunked, &order_gnulib,
		&order_auto,
	};
	for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
		for (long fail_after = 0; fail_after < 12; fail_after += 3) {
			fill(40000, 300, 0);
			realloc_budget = fail_after;
			struct out o = run(policies[p], 256 * 1024, 40000 * 24, 1024);
			realloc_budget = -1;
			assert_exactly_once(&o);
			out_free(&o);
		}
	}
}

static void test_budget_is_respected(void **state)
{
	(void)state;
	fill(100000, 300, 0);
	struct dirread rd;
	struct stat st = { .st_size = 0 };
	size_t budget = 512 * 1024;
	struct fastrm_order_source src = { &rd, MOCK_FD, false, &st, budget, 0 };
	struct out o = { 0, calloc(dir.n, sizeof *o.ino), calloc(dir.n, sizeof *o.name) };
	void *ps = NULL;
	size_t peak = 0;
	assert_int_equal(dirread_init(&rd), 0);
	while (order_global.next(&ps, &src, 1024, record, &o) > 0)
		if (src.held > peak)
			peak = src.held;
	order_global.release(ps);
	dirread_fini(&rd);
	assert_exactly_once(&o);
	/* "global" allocates its budget once and holds no more (the name
	 * arena never goes under two kernel buffers' worth) */
	assert_true(peak > budget / 2);
	assert_true(peak <= budget);
	out_free(&o);
}

/* The list of built-in policies: the six documented ones, each found by
 * its name, described, with its reserved members zero. */
static void test_builtin_list(void **state)
{
	(void)state;
	const char *documented[] = { "directory", "inode", "chunked", "global",
		                     "gnulib", "auto" };
	size_t n = 0;
	const struct fastrm_order *o;
	for (; (o = fastrm_order_builtin(n)) != NULL; n++) {
		assert_ptr_equal(fastrm_order_by_name(o->name), o);
		assert_non_null(o->description);
		assert_true(strlen(o->description) > 10);
		assert_non_null(o->next);
		assert_non_null(o->release);
		for (size_t r = 0; r < 4; r++)
			assert_null(o->reserved[r]);
		for (size_t k = 0; k < n; k++)
			assert_string_not_equal(fastrm_order_builtin(k)->name, o->name);
	}
	assert_int_equal(n, 6);
	assert_null(fastrm_order_builtin(SIZE_MAX));
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(fastrm_order_by_name(documented[i])->name,
		                    documented[i]);
	assert_null(fastrm_order_by_name("nonsense"));
	assert_null(fastrm_order_by_name(NULL));
}

/* A policy whose reserved members are not zero is refused: a later
 * release may give them a meaning. */
static void test_set_order_checks(void **state)
{
	(void)state;
	char *roots[] = { ".", NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_CWDFD, NULL);
	struct fastrm_order mine = *fastrm_order_by_name("directory");
	assert_int_equal(fastrm_fts_set_order(fts, &mine), 0);
	mine.reserved[3] = &mine;
	assert_int_equal(fastrm_fts_set_order(fts, &mine), -EINVAL);
	mine.reserved[3] = NULL;
	mine.release = NULL;
	assert_int_equal(fastrm_fts_set_order(fts, &mine), -EINVAL);
	fastrm_fts_close(fts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directory_keeps_order),
		cmocka_unit_test(test_sorted_policies),
		cmocka_unit_test(test_chunked_sorts_windows),
		cmocka_unit_test(test_gnulib_threshold),
		cmocka_unit_test(test_auto_by_size),
		cmocka_unit_test(test_allocation_failure_loses_nothing),
		cmocka_unit_test(test_global_names_outgrow_estimate),
		cmocka_unit_test(test_budget_is_respected),
		cmocka_unit_test(test_builtin_list),
		cmocka_unit_test(test_set_order_checks),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	mock_dir(0, 1);
	return rc;
}
