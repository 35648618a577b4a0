/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Allocation failure anywhere in the traversal.  malloc, calloc and realloc
 * are wrapped (-Wl,--wrap): a walk first runs without faults to count its
 * allocations, then once for every k, with the k-th allocation failing.
 * Every walk must
 *   - end (fts_read returns NULL) without crashing,
 *   - visit no entry twice,
 *   - lose nothing silently: if no entry and no fts_read call reported
 *     ENOMEM, every entry was visited;
 *   - free, by the end of fts_close, everything it allocated.
 * The same sweep runs for every ordering policy.
 *
 * The same wrappers count the bytes held: a walk down a chain holds, a
 * level, no more than an entry (test_bytes_per_level).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <fastrm/fts.h>

#include "fixture.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

/* While armed: count allocations, fail the fail_at-th one (1-based; 0:
 * none), and keep the number of live blocks. */
static struct {
	int armed;
	long calls, fail_at, live;
	long bytes; /* malloc_usable_size of the live blocks */
} A;

static int fail_now(void)
{
	if (!A.armed)
		return 0;
	return ++A.calls == A.fail_at;
}

void *__wrap_malloc(size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = __real_malloc(n);
	if (p && A.armed) {
		A.live++;
		A.bytes += (long)malloc_usable_size(p);
	}
	return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = __real_calloc(n, m);
	if (p && A.armed) {
		A.live++;
		A.bytes += (long)malloc_usable_size(p);
	}
	return p;
}

void *__wrap_realloc(void *old, size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	long before = old ? (long)malloc_usable_size(old) : 0;
	void *p = __real_realloc(old, n);
	if (p && A.armed) {
		if (!old)
			A.live++;
		A.bytes += (long)malloc_usable_size(p) - before;
	}
	return p;
}

void __wrap_free(void *p)
{
	if (p && A.armed) {
		A.live--;
		A.bytes -= (long)malloc_usable_size(p);
	}
	__real_free(p);
}

static char *dir;

/* The tree: a directory wider than a batch and than the smallest budget
 * (the walk asks for 64 KiB, a directory gets at least 256 KiB: "chunked"
 * and "global" need several windows or passes for "wide"), a chain deeper
 * than the fd window, and small directories. */
static int setup(void **state)
{
	(void)state;
	dir = fx_mkdtemp();
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	mkdirat(dfd, "t", 0755);
	int t = openat(dfd, "t", O_RDONLY | O_DIRECTORY);
	fx_make_flat(t, "wide", 8000);
	fx_make_chain(t, "deep", 12, 2);
	char name[32];
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof name, "small%d", i);
		mkdirat(t, name, 0755);
		for (int j = 0; j < 3; j++) {
			char f[64];
			snprintf(f, sizeof f, "%s/f%d", name, j);
			fx_write_file(t, f, "x");
		}
	}
	close(t);
	close(dfd);
	return chdir(dir);
}

static int teardown(void **state)
{
	(void)state;
	fx_cleanup(dir);
	return 0;
}

/* What one walk saw.  Paths are kept in memory taken before arming. */
#define MAX_SEEN 65536
#define PATHS_SIZE (1 << 20)
struct seen {
	char *paths;            /* NUL-separated */
	size_t used;
	size_t off[MAX_SEEN];
	size_t n;
	int enomem_reported;    /* an entry or fts_read said ENOMEM */
	int read_errno;         /* errno when fts_read returned NULL */
};

static void record(struct seen *s, const FTSENT *e)
{
	assert_true(s->n < MAX_SEEN);
	assert_true(s->used + e->fts_pathlen + 1 <= PATHS_SIZE);
	s->off[s->n++] = s->used;
	memcpy(s->paths + s->used, e->fts_path, e->fts_pathlen + 1);
	s->used += e->fts_pathlen + 1;
}

static int cmp_off(const void *a, const void *b, void *paths)
{
	return strcmp((char *)paths + *(const size_t *)a,
	              (char *)paths + *(const size_t *)b);
}

static void walk(const struct fastrm_order *order, long fail_at, struct seen *s)
{
	char *roots[] = { "t", NULL };
	s->used = s->n = 0;
	s->enomem_reported = 0;
	s->read_errno = 0;

	A.calls = 0;
	A.live = 0;
	A.fail_at = fail_at;
	A.armed = 1;
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, NULL);
	if (!fts) {
		A.armed = 0;
		assert_int_equal(errno, ENOMEM);
		assert_int_equal(A.live, 0);
		s->enomem_reported = 1;
		return;
	}
	fastrm_fts_set_order(fts, order);
	assert_int_equal(fastrm_fts_set_memory_budget(fts, 64 << 10), 0);
	FTSENT *e;
	errno = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		if (e->fts_errno == ENOMEM)
			s->enomem_reported = 1;
		/* everything once: directories in preorder, the rest once */
		if (e->fts_info != FTS_DP)
			record(s, e);
		errno = 0;
	}
	s->read_errno = errno;
	if (errno == ENOMEM)
		s->enomem_reported = 1;
	assert_int_equal(fastrm_fts_close(fts), 0);
	A.armed = 0;
	assert_int_equal(A.live, 0);
	qsort_r(s->off, s->n, sizeof s->off[0], cmp_off, s->paths);
}

static void sweep(const char *policy)
{
	const struct fastrm_order *order = fastrm_order_by_name(policy);
	assert_non_null(order);
	struct seen all = { .paths = malloc(PATHS_SIZE) };
	struct seen got = { .paths = malloc(PATHS_SIZE) };
	assert_non_null(all.paths);
	assert_non_null(got.paths);

	walk(order, 0, &all);
	long total = A.calls;
	assert_int_equal(all.read_errno, 0);
	assert_false(all.enomem_reported);
	assert_true(all.n > 8000);
	assert_true(total > 10);

	long completed = 0, reported = 0;
	for (long k = 1; k <= total; k++) {
		walk(order, k, &got);
		/* no entry twice */
		for (size_t i = 1; i < got.n; i++)
			if (strcmp(got.paths + got.off[i - 1], got.paths + got.off[i]) == 0)
				fail_msg("%s, allocation %ld failing: %s visited twice",
				         policy, k, got.paths + got.off[i]);
		if (got.enomem_reported) {
			reported++;
			continue;
		}
		/* not reported: the walk coped (a policy fell back) and must
		 * have visited everything */
		if (got.n != all.n || got.read_errno != 0)
			fail_msg("%s, allocation %ld failing: %zu of %zu entries, "
			         "no ENOMEM reported", policy, k, got.n, all.n);
		for (size_t i = 0; i < got.n; i++)
			assert_string_equal(got.paths + got.off[i], all.paths + all.off[i]);
		completed++;
	}
	print_message("%s: %ld allocations, each failed once: %ld walks "
	              "reported ENOMEM, %ld completed anyway\n",
	              policy, total, reported, completed);
	assert_int_equal(reported + completed, total);
	free(all.paths);
	free(got.paths);
}

/* The bytes a walk holds at the bottom of chain @name (@depth levels),
 * from fts_open on, with @policy. */
static long bytes_at_bottom(const char *name, long depth, const char *policy)
{
	char *roots[] = { (char *)name, NULL };
	A.calls = A.live = A.bytes = 0;
	A.fail_at = 0;
	A.armed = 1;
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, NULL);
	assert_non_null(fts);
	assert_int_equal(fastrm_fts_set_order(fts, fastrm_order_by_name(policy)), 0);
	long at_bottom = -1;
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL)
		if (e->fts_info == FTS_D && e->fts_level == depth)
			at_bottom = A.bytes;
	assert_int_equal(errno, 0);
	assert_int_equal(fastrm_fts_close(fts), 0);
	A.armed = 0;
	assert_int_equal(A.live, 0);
	assert_true(at_bottom > 0);
	return at_bottom;
}

/* A level that is done holds its entries and nothing more: down a bare
 * chain, one entry (an FTSENT of 248 bytes and the name, in a chunk of
 * its own: 280 bytes from glibc's malloc); with one file beside each
 * subdirectory, at most two.  Before 0.6 every level also kept its record
 * (160 bytes, in an array that doubles) and a slot of the cycle set:
 * about 530 bytes a level in all. */
static void test_bytes_per_level(void **state)
{
	(void)state;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	fx_make_chain(dfd, "bare1000", 1000, 0);
	fx_make_chain(dfd, "bare3000", 3000, 0);
	fx_make_chain(dfd, "file1000", 1000, 1);
	fx_make_chain(dfd, "file3000", 3000, 1);
	close(dfd);
	static const char *const policies[] = { "gnulib", "directory", "auto" };
	for (size_t i = 0; i < 3; i++) {
		long bare = (bytes_at_bottom("bare3000", 3000, policies[i]) -
		             bytes_at_bottom("bare1000", 1000, policies[i])) / 2000;
		long file = (bytes_at_bottom("file3000", 3000, policies[i]) -
		             bytes_at_bottom("file1000", 1000, policies[i])) / 2000;
		print_message("%s: %ld bytes a level (bare chain), %ld (a file "
		              "beside each subdirectory)\n", policies[i], bare, file);
		assert_true(bare <= 300);
		assert_true(file <= 600);
	}
}

static void test_directory(void **state) { (void)state; sweep("directory"); }
static void test_inode(void **state) { (void)state; sweep("inode"); }
static void test_chunked(void **state) { (void)state; sweep("chunked"); }
static void test_global(void **state) { (void)state; sweep("global"); }
static void test_gnulib(void **state) { (void)state; sweep("gnulib"); }
static void test_auto(void **state) { (void)state; sweep("auto"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_per_level),
		cmocka_unit_test(test_directory),
		cmocka_unit_test(test_inode),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_global),
		cmocka_unit_test(test_gnulib),
		cmocka_unit_test(test_auto),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
