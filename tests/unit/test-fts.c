/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The traversal, as tables of expected steps (FreeBSD's fts tests are
 * written this way): build a tree, list {info, level, path} in order. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fastrm/fts.h>

#include "fixture.h"
#include "fts-int.h"

static char *dir;
static const struct fastrm_order order_dummy = { "dummy", NULL, NULL };

static const char *const info_name[] = {
	"?", "D", "DC", "DEFAULT", "DNR", "DOT", "DP", "ERR", "F", "INIT",
	"NS", "NSOK", "SL", "SLNONE", "W",
};

static int by_name(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

/* Make the standard tree in the test's directory:
 *   t/a  t/b/c  t/d -> a  t/e/  t/l -> b */
static int setup(void **state)
{
	(void)state;
	dir = fx_mkdtemp();
	if (chdir(dir) < 0)
		return -1;
	int ok = mkdir("t", 0755) == 0 && mkdir("t/b", 0755) == 0 &&
	         mkdir("t/e", 0755) == 0 && symlink("a", "t/d") == 0 &&
	         symlink("b", "t/l") == 0;
	fx_write_file(AT_FDCWD, "t/a", "a");
	fx_write_file(AT_FDCWD, "t/b/c", "c");
	return ok ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (chdir("/") < 0)
		return -1;
	fx_cleanup(dir);
	return 0;
}

/* Walk and describe every step as "INFO level path" lines; @hook, if
 * given, may act on each entry. */
static char *walk(char **roots, int opts,
                  void (*hook)(FTS *, FTSENT *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	FTS *fts = fastrm_fts_open(roots, opts, by_name);
	assert_non_null(fts);
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		fprintf(out, "%s %ld %s\n", info_name[e->fts_info],
		        (long)e->fts_level, e->fts_path);
		if (hook)
			hook(fts, e, arg);
	}
	fprintf(out, "END %d\n", errno);
	assert_int_equal(fastrm_fts_close(fts), 0);
	fclose(out);
	return buf;
}

static void expect(char *got, const char *want)
{
	assert_string_equal(got, want);
	free(got);
}

static char *roots_t[] = { "t", NULL };

static const char standard[] =
	"D 0 t\n"
	"F 1 t/a\n"
	"D 1 t/b\n"
	"F 2 t/b/c\n"
	"DP 1 t/b\n"
	"SL 1 t/d\n"
	"D 1 t/e\n"
	"DP 1 t/e\n"
	"SL 1 t/l\n"
	"DP 0 t\n"
	"END 0\n";

static void test_physical(void **state)
{
	(void)state;
	expect(walk(roots_t, FTS_PHYSICAL, NULL, NULL), standard);
	expect(walk(roots_t, FTS_PHYSICAL | FTS_CWDFD, NULL, NULL), standard);
	expect(walk(roots_t, FTS_PHYSICAL | FTS_NOCHDIR, NULL, NULL), standard);
}

static void test_logical(void **state)
{
	(void)state;
	expect(walk(roots_t, FTS_LOGICAL, NULL, NULL),
	       "D 0 t\n"
	       "F 1 t/a\n"
	       "D 1 t/b\n"
	       "F 2 t/b/c\n"
	       "DP 1 t/b\n"
	       "F 1 t/d\n"
	       "D 1 t/e\n"
	       "DP 1 t/e\n"
	       "D 1 t/l\n"
	       "F 2 t/l/c\n"
	       "DP 1 t/l\n"
	       "DP 0 t\n"
	       "END 0\n");
}

static void nostat_check(FTS *fts, FTSENT *e, void *arg)
{
	(void)fts;
	(void)arg;
	struct stat sb;
	if (e->fts_info != FTS_NSOK)
		return;
	assert_int_equal(lstat(e->fts_path, &sb), 0);
	assert_int_equal(e->fts_statp->st_ino, sb.st_ino);
	assert_int_equal(e->fts_statp->st_mode & S_IFMT, sb.st_mode & S_IFMT);
}

static void test_nostat(void **state)
{
	(void)state;
	/* with a comparator, entries are stat'ed when read unless
	 * FTS_DEFER_STAT says the comparator does not need it (gnulib) */
	expect(walk(roots_t, FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD,
	            nostat_check, NULL), standard);
	expect(walk(roots_t, FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD | FTS_DEFER_STAT,
	            nostat_check, NULL),
	       "D 0 t\n"
	       "NSOK 1 t/a\n"
	       "D 1 t/b\n"
	       "NSOK 2 t/b/c\n"
	       "DP 1 t/b\n"
	       "NSOK 1 t/d\n"
	       "D 1 t/e\n"
	       "DP 1 t/e\n"
	       "NSOK 1 t/l\n"
	       "DP 0 t\n"
	       "END 0\n");
}

static void skip_b(FTS *fts, FTSENT *e, void *arg)
{
	(void)arg;
	if (e->fts_info == FTS_D && strcmp(e->fts_name, "b") == 0)
		assert_int_equal(fastrm_fts_set(fts, e, FTS_SKIP), 0);
}

static void test_skip(void **state)
{
	(void)state;
	expect(walk(roots_t, FTS_PHYSICAL, skip_b, NULL),
	       "D 0 t\n"
	       "F 1 t/a\n"
	       "D 1 t/b\n"
	       "DP 1 t/b\n"
	       "SL 1 t/d\n"
	       "D 1 t/e\n"
	       "DP 1 t/e\n"
	       "SL 1 t/l\n"
	       "DP 0 t\n"
	       "END 0\n");
}

static void again_a_once(FTS *fts, FTSENT *e, void *arg)
{
	int *done = arg;
	if (!*done && strcmp(e->fts_name, "a") == 0) {
		*done = 1;
		assert_int_equal(fastrm_fts_set(fts, e, FTS_AGAIN), 0);
	}
}

static void test_again(void **state)
{
	(void)state;
	int done = 0;
	char *got = walk(roots_t, FTS_PHYSICAL, again_a_once, &done);
	assert_non_null(strstr(got, "F 1 t/a\nF 1 t/a\nD 1 t/b\n"));
	free(got);
}

static void follow_links(FTS *fts, FTSENT *e, void *arg)
{
	(void)arg;
	if (e->fts_info == FTS_SL)
		assert_int_equal(fastrm_fts_set(fts, e, FTS_FOLLOW), 0);
}

static void test_follow(void **state)
{
	(void)state;
	expect(walk(roots_t, FTS_PHYSICAL | FTS_CWDFD, follow_links, NULL),
	       "D 0 t\n"
	       "F 1 t/a\n"
	       "D 1 t/b\n"
	       "F 2 t/b/c\n"
	       "DP 1 t/b\n"
	       "SL 1 t/d\n"
	       "F 1 t/d\n"
	       "D 1 t/e\n"
	       "DP 1 t/e\n"
	       "SL 1 t/l\n"
	       "D 1 t/l\n"
	       "F 2 t/l/c\n"
	       "DP 1 t/l\n"
	       "DP 0 t\n"
	       "END 0\n");
}

static void test_children(void **state)
{
	(void)state;
	char *roots[] = { "t", "t/a", NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL, by_name);
	assert_non_null(fts);

	/* before the first read: the roots, sorted */
	FTSENT *c = fastrm_fts_children(fts, 0);
	assert_non_null(c);
	assert_string_equal(c->fts_accpath, "t");
	assert_string_equal(c->fts_link->fts_accpath, "t/a");
	assert_null(c->fts_link->fts_link);

	FTSENT *e = fastrm_fts_read(fts);
	assert_int_equal(e->fts_info, FTS_D);
	errno = EINVAL;
	assert_null(fastrm_fts_children(fts, 12345));
	assert_int_equal(errno, EINVAL);

	/* names only, then the full list: both in order, then the walk
	 * continues with the same entries */
	c = fastrm_fts_children(fts, FTS_NAMEONLY);
	assert_string_equal(c->fts_name, "a");
	c = fastrm_fts_children(fts, 0);
	const char *want[] = { "a", "b", "d", "e", "l" };
	int n = 0;
	for (FTSENT *p = c; p; p = p->fts_link, n++) {
		assert_string_equal(p->fts_name, want[n]);
		assert_int_equal(p->fts_level, 1);
		assert_ptr_equal(p->fts_parent, e);
	}
	assert_int_equal(n, 5);
	/* skipping a child through the list */
	assert_int_equal(fastrm_fts_set(fts, c->fts_link, FTS_SKIP), 0);
	e = fastrm_fts_read(fts);
	assert_string_equal(e->fts_path, "t/a");
	/* a file has no children: NULL with errno 0 */
	errno = EINVAL;
	assert_null(fastrm_fts_children(fts, 0));
	assert_int_equal(errno, 0);
	e = fastrm_fts_read(fts);
	assert_string_equal(e->fts_path, "t/d"); /* b was skipped */
	fastrm_fts_close(fts);
}

static void test_children_nameonly_then_read(void **state)
{
	(void)state;
	FTS *fts = fastrm_fts_open(roots_t, FTS_PHYSICAL, NULL);
	FTSENT *e = fastrm_fts_read(fts);
	assert_non_null(fastrm_fts_children(fts, FTS_NAMEONLY));
	int n = 0;
	while ((e = fastrm_fts_read(fts)) != NULL)
		n++;
	assert_int_equal(errno, 0);
	assert_int_equal(n, 9); /* 8 entries below t, and t's postorder */
	fastrm_fts_close(fts);
}

static void test_invalid(void **state)
{
	(void)state;
	static const int bad[] = {
		0,
		FTS_LOGICAL | FTS_PHYSICAL,
		FTS_PHYSICAL | FTS_NOCHDIR | FTS_CWDFD,
		FTS_PHYSICAL | 0x20000,
		FTS_PHYSICAL | FTS_NAMEONLY,
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		errno = 0;
		assert_null(fastrm_fts_open(roots_t, bad[i], NULL));
		assert_int_equal(errno, EINVAL);
	}
	FTS *fts = fastrm_fts_open(roots_t, FTS_PHYSICAL, NULL);
	FTSENT *e = fastrm_fts_read(fts);
	errno = 0;
	assert_int_equal(fastrm_fts_set(fts, e, 99), 1);
	assert_int_equal(errno, EINVAL);
	fastrm_fts_close(fts);
	assert_int_equal(fastrm_fts_close(NULL), 0);
}

static void test_end_stays_end(void **state)
{
	(void)state;
	FTS *fts = fastrm_fts_open(roots_t, FTS_PHYSICAL, NULL);
	while (fastrm_fts_read(fts))
		;
	assert_int_equal(errno, 0);
	assert_null(fastrm_fts_read(fts));
	assert_null(fastrm_fts_read(fts));
	fastrm_fts_close(fts);
}

static void test_roots(void **state)
{
	(void)state;
	char *roots[] = { "t/b", "t///", "missing", "", NULL };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL, NULL);
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL)
		if (e->fts_level == 0)
			fprintf(out, "%s [%s] [%s] %d\n", info_name[e->fts_info],
			        e->fts_path, e->fts_name, e->fts_errno);
	fastrm_fts_close(fts);
	fclose(out);
	expect(buf,
	       "D [t/b] [b] 0\n"
	       "DP [t/b] [b] 0\n"
	       "D [t/] [] 0\n"
	       "DP [t/] [] 0\n"
	       "NS [missing] [missing] 2\n"
	       "NS [] [] 2\n");
}

static void test_cycle(void **state)
{
	(void)state;
	char *d = fx_mkdtemp();
	char *roots[] = { d, NULL };
	char link[4096];
	snprintf(link, sizeof link, "%s/loop", d);
	assert_int_equal(symlink(".", link), 0);
	FTS *fts = fastrm_fts_open(roots, FTS_LOGICAL, NULL);
	FTSENT *e;
	int dc = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		if (e->fts_info == FTS_DC) {
			dc++;
			assert_string_equal(e->fts_name, "loop");
			assert_int_equal(e->fts_cycle->fts_level, 0);
		}
	}
	assert_int_equal(errno, 0);
	assert_int_equal(dc, 1);
	fastrm_fts_close(fts);
	fx_cleanup(d);
}

/* Many entries: several batches, each entry once; a subdirectory in the
 * middle is visited between batches. */
static void test_big_directory(void **state)
{
	(void)state;
	enum { N = 10000 };
	char *d = fx_mkdtemp();
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof name, "%d", i);
		if (i % 1000 == 500) {
			assert_int_equal(mkdirat(dfd, name, 0755), 0);
			int s = openat(dfd, name, O_RDONLY | O_DIRECTORY);
			fx_write_file(s, "inner", "");
			close(s);
		} else {
			fx_write_file(dfd, name, "");
		}
	}
	close(dfd);
	unsigned char *seen = calloc(N, 1);
	char *roots[] = { d, NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD,
	                           NULL);
	FTSENT *e;
	int inner = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		if (e->fts_level == 1 && e->fts_info != FTS_DP)
			seen[atoi(e->fts_name)]++;
		if (e->fts_level == 2) {
			inner++;
			/* the cwd fd really is the parent directory */
			struct stat sb;
			assert_int_equal(fstatat(fts->fts_cwd_fd, e->fts_accpath,
			                         &sb, AT_SYMLINK_NOFOLLOW), 0);
		}
	}
	assert_int_equal(errno, 0);
	fastrm_fts_close(fts);
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(inner, N / 1000);
	free(seen);
	fx_cleanup(d);
}

/* Paths that outgrow the path buffer twice (1 KiB, then 2 and 4 KiB,
 * staying under PATH_MAX, where FTS_NOCHDIR's whole paths stop working):
 * every entry's fts_path and fts_accpath follow the buffer. */
static void test_long_paths(void **state)
{
	(void)state;
	char *d = fx_mkdtemp();
	char name[201];
	memset(name, 'n', 200);
	name[200] = '\0';
	int fd = open(d, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < 19; i++) {
		assert_int_equal(mkdirat(fd, name, 0755), 0);
		fx_write_file(fd, "sibling", "");
		int n = openat(fd, name, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = n;
	}
	close(fd);
	char *roots[] = { d, NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, by_name);
	FTSENT *e;
	int n = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		n++;
		assert_ptr_equal(e->fts_accpath, e->fts_path);
		assert_int_equal(strlen(e->fts_path), e->fts_pathlen);
		if (e->fts_level > 0) {
			assert_int_equal(e->fts_pathlen,
			                 e->fts_parent->fts_pathlen + 1 + e->fts_namelen);
			assert_ptr_equal(e->fts_parent->fts_path, e->fts_path);
			assert_string_equal(e->fts_path + e->fts_pathlen - e->fts_namelen,
			                    e->fts_name);
		}
	}
	assert_int_equal(errno, 0);
	assert_int_equal(n, 1 + 19 * 3 + 1);
	fastrm_fts_close(fts);
	fx_cleanup(d);
}

/* Every policy, through the traversal: each entry exactly once, in a
 * directory far larger than the budget, with subdirectories met between
 * batches (whose own policies share the budget). */
static void test_every_policy_visits_all(void **state)
{
	(void)state;
	enum { N = 30000 };
	char *d = fx_mkdtemp();
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof name, "%d", i);
		if (i % 3000 == 0) {
			assert_int_equal(mkdirat(dfd, name, 0755), 0);
			int s = openat(dfd, name, O_RDONLY | O_DIRECTORY);
			for (int j = 0; j < 2500; j++) {
				snprintf(name, sizeof name, "in%d", j);
				fx_write_file(s, name, "");
			}
			close(s);
		} else {
			fx_write_file(dfd, name, "");
		}
	}
	close(dfd);
	unsigned char *seen = malloc(N);
	const struct fastrm_order *policy;
	for (size_t k = 0; (policy = fastrm_order_builtin(k)) != NULL; k++) {
		char *roots[] = { d, NULL };
		FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD,
		                           NULL);
		assert_int_equal(fastrm_fts_set_order(fts, policy), 0);
		assert_int_equal(fastrm_fts_set_memory_budget(fts, 256 * 1024), 0);
		memset(seen, 0, N);
		long inner = 0;
		FTSENT *e;
		while ((e = fastrm_fts_read(fts)) != NULL) {
			if (e->fts_level == 1 && e->fts_info != FTS_DP)
				seen[atoi(e->fts_name)]++;
			if (e->fts_level == 2)
				inner++;
		}
		assert_int_equal(errno, 0);
		fastrm_fts_close(fts);
		for (int i = 0; i < N; i++)
			assert_int_equal(seen[i], 1);
		assert_int_equal(inner, 10 * 2500);
	}
	assert_int_equal(fastrm_fts_set_order(NULL, &order_dummy), -EINVAL);
	free(seen);
	fx_cleanup(d);
}

/* A user policy whose callback stops mid-buffer: it passes one entry per
 * call and leaves the rest of the kernel buffer loaded.  The walk descends
 * into that entry (a directory) before asking again: what was left loaded
 * must come back to its own directory, not to the subdirectory read in
 * between. */
struct one_ctx {
	fastrm_emit_fn fn;
	void *ctx;
	int passed;
};

static int pass_one(void *c, const struct fastrm_dirent *d)
{
	struct one_ctx *o = c;
	if (o->passed)
		return -EAGAIN;
	o->passed = 1;
	return o->fn(o->ctx, d);
}

static long one_next(void **state, struct fastrm_order_source *src,
                     size_t max, fastrm_emit_fn fn, void *ctx)
{
	(void)state;
	(void)max;
	struct one_ctx o = { fn, ctx, 0 };
	long n = fastrm_order_read(src, 1, pass_one, &o);
	return n == -EAGAIN ? 1 : n;
}

static void one_release(void *state)
{
	(void)state;
}

static void test_policy_leftovers_stay_home(void **state)
{
	(void)state;
	static const struct fastrm_order one = { "one", one_next, one_release };
	char *d = fx_mkdtemp();
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < 50; i++) {
		char name[16];
		snprintf(name, sizeof name, "p%d", i);
		assert_int_equal(mkdirat(dfd, name, 0755), 0);
		int s = openat(dfd, name, O_RDONLY | O_DIRECTORY);
		for (int j = 0; j < 3; j++) {
			snprintf(name, sizeof name, "c%d", j);
			assert_int_equal(mkdirat(s, name, 0755), 0);
		}
		close(s);
	}
	close(dfd);
	char *roots[] = { d, NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD, NULL);
	assert_int_equal(fastrm_fts_set_order(fts, &one), 0);
	FTSENT *e;
	int parents = 0, children = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		if (e->fts_info != FTS_D)
			continue;
		/* every entry really is in the directory it is reported in */
		struct stat sb;
		if (e->fts_level > 0)
			assert_int_equal(fstatat(fts->fts_cwd_fd, e->fts_accpath, &sb,
			                         AT_SYMLINK_NOFOLLOW), 0);
		parents += e->fts_level == 1 && e->fts_name[0] == 'p';
		children += e->fts_level == 2 && e->fts_name[0] == 'c';
		assert_true(e->fts_level < 3);
	}
	assert_int_equal(errno, 0);
	assert_int_equal(parents, 50);
	assert_int_equal(children, 150);
	fastrm_fts_close(fts);
	fx_cleanup(d);
}

/* fts_dirs_last(): in every directory of a walk in directory order, the
 * subdirectories come after every other entry, and nothing is lost; a
 * walk without it visits them mixed (the twin: the check can fail). */
static long dirs_last_walk(const char *root, bool dirs_last, long *mixed)
{
	char *argv[] = { (char *)root, NULL };
	FTS *fts = fastrm_fts_open(argv, FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, NULL);
	assert_non_null(fts);
	assert_int_equal(fastrm_fts_set_order(fts, fastrm_order_by_name("directory")), 0);
	if (dirs_last)
		fts_dirs_last(fts, true);
	/* per level of the path: a subdirectory was seen in this directory */
	bool seen_dir[8] = { false };
	long n = 0;
	*mixed = 0;
	FTSENT *p;
	while ((p = fastrm_fts_read(fts)) != NULL) {
		if (p->fts_info == FTS_DP)
			continue;
		n++;
		assert_true(p->fts_level < 8);
		if (p->fts_info == FTS_D) {
			seen_dir[p->fts_level] = true;
			if (p->fts_level + 1 < 8)
				seen_dir[p->fts_level + 1] = false;
		} else if (seen_dir[p->fts_level]) {
			(*mixed)++; /* a file after a subdirectory, same directory */
		}
	}
	assert_int_equal(errno, 0);
	fastrm_fts_close(fts);
	return n;
}

static void test_dirs_last(void **state)
{
	(void)state;
	char *d = fx_mkdtemp();
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* directories and files made in turn, at two levels */
	assert_int_equal(mkdirat(fd, "r", 0700), 0);
	for (int i = 0; i < 6; i++) {
		char name[64];
		snprintf(name, sizeof name, "r/f%d", i);
		fx_write_file(fd, name, "x");
		snprintf(name, sizeof name, "r/d%d", i);
		assert_int_equal(mkdirat(fd, name, 0700), 0);
		for (int j = 0; j < 3; j++) {
			char sub[96];
			snprintf(sub, sizeof sub, "%s/g%d", name, j);
			fx_write_file(fd, sub, "y");
			snprintf(sub, sizeof sub, "%s/e%d", name, j);
			assert_int_equal(mkdirat(fd, sub, 0700), 0);
		}
	}
	close(fd);
	char root[4200];
	snprintf(root, sizeof root, "%.4000s/r", d);
	long mixed_plain, mixed_last;
	long plain = dirs_last_walk(root, false, &mixed_plain);
	long last = dirs_last_walk(root, true, &mixed_last);
	printf("%ld entries: files after a subdirectory %ld times in directory "
	       "order, %ld with fts_dirs_last\n", plain, mixed_plain, mixed_last);
	assert_int_equal(plain, 1 + 6 + 6 + 6 * 6);
	assert_int_equal(last, plain);
	assert_int_equal(mixed_last, 0);
	assert_true(mixed_plain > 0);
	fx_cleanup(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dirs_last),
		cmocka_unit_test(test_physical),
		cmocka_unit_test(test_logical),
		cmocka_unit_test(test_nostat),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_again),
		cmocka_unit_test(test_follow),
		cmocka_unit_test(test_children),
		cmocka_unit_test(test_children_nameonly_then_read),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_end_stays_end),
		cmocka_unit_test(test_roots),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_big_directory),
		cmocka_unit_test(test_long_paths),
		cmocka_unit_test(test_every_policy_visits_all),
		cmocka_unit_test(test_policy_leftovers_stay_home),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
