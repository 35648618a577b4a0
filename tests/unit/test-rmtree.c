/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tree removal with workers: every entry removed and reported exactly
 * once, a directory only after all of its entries, with 1 to 16 workers
 * and with every directory handed to another walk (FASTRM_RMTREE_SHARE_ALL,
 * so that the waiting directories' bookkeeping runs whatever the timing);
 * a failure keeps its ancestors and nothing else; ignored failures do not;
 * symlinks are removed, never followed; a refused argument is left; a stop
 * leaves the rest; no fd is leaked.  Failures are injected by wrapping
 * unlinkat (-Wl,--wrap=unlinkat). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fastrm/rmtree.h"
#include "fastrm-int.h"
#include "fixture.h"

/* ------------------------------------------------------ unlinkat faults */

int __real_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags);

static const char *fail_name; /* unlinkat of this name fails... */
static int fail_errno;        /* ...with this */
static bool fail_after;       /* ...after removing it (it vanished first) */
static int fail_count = -1;   /* ...this many times (-1: always) */

int __wrap_unlinkat(int dirfd, const char *path, int flags)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (fail_name && strcmp(base, fail_name) == 0 && fail_count != 0) {
		if (fail_count > 0)
			fail_count--;
		if (fail_after)
			__real_unlinkat(dirfd, path, flags);
		errno = fail_errno;
		return -1;
	}
	return __real_unlinkat(dirfd, path, flags);
}

/* ---------------------------------------------------------- the fixture */

static char *top;
static int topfd;

static int setup(void **state)
{
	(void)state;
	top = fx_mkdtemp();
	topfd = open(top, O_RDONLY | O_DIRECTORY);
	assert_true(topfd >= 0);
	assert_int_equal(fchdir(topfd), 0);
	fail_name = NULL;
	fail_after = false;
	fail_count = -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fail_name = NULL;
	assert_int_equal(chdir("/"), 0);
	close(topfd);
	fx_cleanup(top);
	return 0;
}

/* A tree of @dirs directories (each with @files files and up to 4
 * subdirectories, breadth first) under @name; returns the entry count. */
static long make_tree(const char *name, int dirs, int files)
{
	char (*q)[256] = calloc((size_t)dirs, sizeof *q);
	assert_non_null(q);
	long n = 0;
	int made = 1, next = 0;
	snprintf(q[0], sizeof q[0], "%s", name);
	assert_int_equal(mkdir(name, 0755), 0);
	n++;
	while (next < made) {
		char *d = q[next++];
		for (int f = 0; f < files; f++) {
			char p[300];
			snprintf(p, sizeof p, "%s/f%d", d, f);
			fx_write_file(AT_FDCWD, p, "");
			n++;
		}
		for (int s = 0; s < 4 && made < dirs; s++) {
			snprintf(q[made], sizeof q[made], "%s/d%d", d, s);
			assert_int_equal(mkdir(q[made], 0755), 0);
			made++;
			n++;
		}
	}
	free(q);
	return n;
}

/* What the callbacks saw. */
struct seen {
	pthread_mutex_t lock;
	char **paths;          /* removed, in the order reported */
	long n, cap;
	long failures, ignored;
	int fail_errno;
	enum fastrm_rmtree_error fail_what;
	char fail_path[512];
	bool ignore;           /* the failed callback ignores failures */
	int ignore_errno;      /* ...or those with this errno */
	const char *refuse;    /* the root callback refuses this path */
	/* @ask: what it was asked, and what it answers */
	char **asked;          /* "E path" or "R path", in order */
	long nasked;
	const char *keep_enter, *keep_remove, *empty;
};

static void on_removed(void *ctx, const struct fastrm_rmtree_entry *e)
{
	struct seen *s = ctx;
	/* the library calls one callback at a time: a lock taken here must
	 * always be free */
	assert_int_equal(pthread_mutex_trylock(&s->lock), 0);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->paths = realloc(s->paths, (size_t)s->cap * sizeof *s->paths);
		assert_non_null(s->paths);
	}
	s->paths[s->n++] = strdup(e->path);
	pthread_mutex_unlock(&s->lock);
}

static int on_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	struct seen *s = ctx;
	assert_int_equal(pthread_mutex_trylock(&s->lock), 0);
	if (getenv("RMTREE_DEBUG"))
		fprintf(stderr, "failed: %s what %d: %s\n", e->path, what, strerror(err));
	if (s->ignore || err == s->ignore_errno) {
		s->ignored++;
	} else {
		s->failures++;
		s->fail_errno = err;
		s->fail_what = what;
		snprintf(s->fail_path, sizeof s->fail_path, "%s", e->path);
	}
	pthread_mutex_unlock(&s->lock);
	return !(s->ignore || err == s->ignore_errno);
}

static int on_ask(void *ctx, const struct fastrm_rmtree_entry *e,
                  enum fastrm_rmtree_step step)
{
	struct seen *s = ctx;
	assert_int_equal(pthread_mutex_trylock(&s->lock), 0);
	s->asked = realloc(s->asked, (size_t)(s->nasked + 1) * sizeof *s->asked);
	assert_non_null(s->asked);
	assert_true(asprintf(&s->asked[s->nasked++], "%c %s",
	                     step == FASTRM_RMTREE_ENTER ? 'E' : 'R', e->path) > 0);
	pthread_mutex_unlock(&s->lock);
	const char *p = e->path;
	if (step == FASTRM_RMTREE_ENTER) {
		assert_true(e->is_dir);
		if (s->keep_enter && strcmp(p, s->keep_enter) == 0)
			return FASTRM_RMTREE_KEEP;
		if (s->empty && strcmp(p, s->empty) == 0)
			return FASTRM_RMTREE_REMOVE_EMPTY;
	} else if (s->keep_remove && strcmp(p, s->keep_remove) == 0) {
		return FASTRM_RMTREE_KEEP;
	}
	return FASTRM_RMTREE_GO;
}

/* How many times @s's @ask was asked @what ("E path" or "R path"). */
static long times_asked(const struct seen *s, const char *what)
{
	long n = 0;
	for (long i = 0; i < s->nasked; i++)
		n += strcmp(s->asked[i], what) == 0;
	return n;
}

static int on_root(void *ctx, const struct fastrm_rmtree_entry *e)
{
	struct seen *s = ctx;
	assert_int_equal(e->level, 0);
	assert_non_null(e->st);
	return s->refuse && strcmp(e->path, s->refuse) == 0 ? 1 : 0;
}

static void seen_free(struct seen *s)
{
	for (long i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	for (long i = 0; i < s->nasked; i++)
		free(s->asked[i]);
	free(s->asked);
}

/* fastrm_rmtreeat(@dirfd, ...) with the callbacks that fill @s. */
static int run_at(int dirfd, char **paths, unsigned workers, unsigned flags,
                  struct seen *s, struct fastrm_rmtree_stats *st)
{
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = workers;
	o.flags = flags;
	o.ctx = s;
	o.removed = on_removed;
	o.failed = on_failed;
	o.root = on_root;
	if (s->keep_enter || s->keep_remove || s->empty || s->asked)
		o.ask = on_ask;
	pthread_mutex_init(&s->lock, NULL);
	return fastrm_rmtreeat(dirfd, paths, &o, st);
}

static int run(char **paths, unsigned workers, unsigned flags, struct seen *s,
               struct fastrm_rmtree_stats *st)
{
	return run_at(AT_FDCWD, paths, workers, flags, s, st);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each path once; each directory after everything below it. */
static void check_reports(struct seen *s, long want)
{
	assert_int_equal(s->n, want);
	char **sorted = malloc((size_t)s->n * sizeof *sorted);
	assert_non_null(sorted);
	memcpy(sorted, s->paths, (size_t)s->n * sizeof *sorted);
	qsort(sorted, (size_t)s->n, sizeof *sorted, cmp_str);
	for (long i = 1; i < s->n; i++)
		assert_string_not_equal(sorted[i - 1], sorted[i]);
	free(sorted);
	/* position of each report; a path's parent must come later */
	for (long i = 0; i < s->n; i++) {
		const char *p = s->paths[i];
		const char *slash = strrchr(p, '/');
		if (!slash)
			continue;
		size_t plen = (size_t)(slash - p);
		long j;
		for (j = 0; j < s->n; j++)
			if (strlen(s->paths[j]) == plen && strncmp(s->paths[j], p, plen) == 0)
				break;
		if (j < s->n && j < i)
			fail_msg("%s reported before %s", s->paths[j], p);
	}
}

static long counted;

static int count_one(const char *p, const struct stat *sb, int type, struct FTW *f)
{
	(void)p; (void)sb; (void)type; (void)f;
	counted++;
	return 0;
}

/* Entries in the tree @name, itself included. */
static long count_entries(const char *name)
{
	counted = 0;
	assert_int_equal(nftw(name, count_one, 16, FTW_PHYS), 0);
	return counted;
}

static void remove_tree(unsigned workers, unsigned flags)
{
	make_tree("t", 300, 5);
	make_tree("u", 40, 3);
	/* a chain deeper than an fts stream's fd window */
	fx_make_chain(topfd, "t/d0/chain", 40, 3);
	long n = count_entries("t") + count_entries("u");
	int fds = fx_count_fds();
	struct seen s = { 0 };
	struct fastrm_rmtree_stats st;
	char *paths[] = { "t", "u", NULL };
	assert_int_equal(run(paths, workers, flags, &s, &st), 0);
	assert_int_equal(access("t", F_OK), -1);
	assert_int_equal(access("u", F_OK), -1);
	check_reports(&s, n);
	assert_int_equal(s.failures, 0);
	assert_int_equal(fx_count_fds(), fds);
	assert_true(st.workers >= 1 && st.workers <= (workers ? workers : 1));
	if (flags & FASTRM_RMTREE_SHARE_ALL)
		assert_true(st.subtrees_shared > 0);
	seen_free(&s);
}

static void test_one_worker(void **state) { (void)state; remove_tree(1, 0); }
static void test_two_workers(void **state) { (void)state; remove_tree(2, 0); }
static void test_sixteen_workers(void **state) { (void)state; remove_tree(16, 0); }
static void test_share_all_one(void **state)
{
	(void)state;
	remove_tree(1, FASTRM_RMTREE_SHARE_ALL);
}
static void test_share_all_four(void **state)
{
	(void)state;
	remove_tree(4, FASTRM_RMTREE_SHARE_ALL);
}

/* opts.estimate: never below what was removed (every entry is listed
 * before it is removed), and exact at the end (everything was listed);
 * with one worker, and with four that are handed every directory. */
struct est_seen {
	unsigned long long *estimate;
	long removed, below;
};

static void est_removed(void *ctx, const struct fastrm_rmtree_entry *e)
{
	(void)e;
	struct est_seen *s = ctx;
	s->removed++; /* the callbacks run one at a time */
	if (__atomic_load_n(s->estimate, __ATOMIC_RELAXED) < (unsigned long long)s->removed)
		s->below++;
}

static void estimate_tree(unsigned workers, unsigned flags)
{
	make_tree("t", 300, 5);
	make_tree("u", 40, 3);
	fx_make_chain(topfd, "t/d0/chain", 40, 3);
	fx_make_flat(topfd, "u/flat", 3000);
	long n = count_entries("t") + count_entries("u");
	unsigned long long estimate = 7;
	struct est_seen s = { .estimate = &estimate };
	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = workers,
	                                .flags = flags, .ctx = &s,
	                                .removed = est_removed,
	                                .estimate = &estimate };
	char *paths[] = { "t", "u", NULL };
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), 0);
	assert_int_equal(s.removed, n);
	assert_int_equal(s.below, 0);
	assert_int_equal(estimate, (unsigned long long)n);
}

static void test_estimate_one(void **state) { (void)state; estimate_tree(1, 0); }
static void test_estimate_four(void **state)
{
	(void)state;
	estimate_tree(4, FASTRM_RMTREE_SHARE_ALL);
}

/* fastrm_rmtreeat: the paths are relative to the fd given, not to the
 * working directory; the fd is the caller's still; "." with
 * FASTRM_RMTREE_ALLOW_DOTS empties the directory and reports its own rmdir
 * (EINVAL) alone. */
static void test_rmtreeat(void **state)
{
	(void)state;
	assert_int_equal(mkdir("sub", 0755), 0);
	assert_int_equal(chdir("sub"), 0);
	make_tree("t", 60, 3);      /* sub/t */
	make_tree("keep", 5, 2);    /* sub/keep */
	assert_int_equal(chdir(".."), 0);
	make_tree("t", 5, 2);       /* t, beside sub: the working directory's */
	long n = count_entries("sub/t");
	int sub = open("sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(sub >= 0);
	int fds = fx_count_fds();
	for (unsigned workers = 1; workers <= 4; workers += 3) {
		struct seen s = { 0 };
		char *paths[] = { "t", NULL };
		assert_int_equal(run_at(sub, paths, workers, FASTRM_RMTREE_SHARE_ALL, &s, NULL), 0);
		check_reports(&s, n);
		assert_int_equal(faccessat(sub, "t", F_OK, AT_SYMLINK_NOFOLLOW), -1);
		assert_int_equal(access("t", F_OK), 0); /* the working directory's */
		assert_int_equal(fx_count_fds(), fds);
		assert_true(fcntl(sub, F_GETFD) >= 0);  /* not closed */
		seen_free(&s);
		if (workers == 1) {
			assert_int_equal(mkdir("sub/t", 0755), 0);
			n = 1 + make_tree("sub/t/x", 60, 3);
		}
	}
	/* empty the directory held open */
	struct seen s = { 0 };
	char *dot[] = { ".", NULL };
	assert_int_equal(run_at(sub, dot, 2, FASTRM_RMTREE_ALLOW_DOTS, &s, NULL), 1);
	assert_int_equal(s.failures, 1);
	assert_int_equal(s.fail_errno, EINVAL);
	assert_string_equal(s.fail_path, ".");
	assert_int_equal(faccessat(sub, "keep", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(access("sub", F_OK), 0);
	seen_free(&s);
	/* and without the flag, "." is refused: nothing touched */
	assert_int_equal(mkdirat(sub, "again", 0755), 0);
	struct seen r = { 0 };
	assert_int_equal(run_at(sub, dot, 1, 0, &r, NULL), 1);
	assert_int_equal(r.fail_what, FASTRM_RMTREE_EREFUSED);
	assert_int_equal(faccessat(sub, "again", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	seen_free(&r);
	struct fastrm_rmtree_opts o = { .size = sizeof o };
	assert_int_equal(fastrm_rmtreeat(-5, dot, &o, NULL), -EBADF);
	close(sub);
}

/* One flat directory: nothing to share, one walk removes it all. */
static void test_flat(void **state)
{
	(void)state;
	fx_make_flat(topfd, "t", 5000);
	struct seen s = { 0 };
	struct fastrm_rmtree_stats st;
	char *paths[] = { "t", NULL };
	int fds = fx_count_fds();
	assert_int_equal(run(paths, 4, FASTRM_RMTREE_SHARE_ALL, &s, &st), 0);
	assert_int_equal(access("t", F_OK), -1);
	check_reports(&s, 5001);
	assert_int_equal(st.subtrees_shared, 0);
	assert_int_equal(fx_count_fds(), fds);
	seen_free(&s);
}

/* One file that cannot be removed, deep in a shared subtree: reported
 * once; it and its ancestors stay, everything else goes. */
static void fail_keeps_ancestors(unsigned workers)
{
	make_tree("t", 200, 4);
	fx_write_file(topfd, "t/d1/d1/stuck", "");
	fail_name = "stuck";
	fail_errno = EACCES;
	struct seen s = { 0 };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, workers, FASTRM_RMTREE_SHARE_ALL, &s, NULL), 1);
	assert_int_equal(s.failures, 1);
	assert_int_equal(s.fail_errno, EACCES);
	assert_int_equal(s.fail_what, FASTRM_RMTREE_EREMOVE);
	assert_string_equal(s.fail_path, "t/d1/d1/stuck");
	/* the chain above it is kept, with nothing else in it */
	struct stat sb;
	assert_int_equal(stat("t/d1/d1/stuck", &sb), 0);
	const char *chain[][2] = { { "t", "d1" }, { "t/d1", "d1" }, { "t/d1/d1", "stuck" } };
	for (size_t i = 0; i < 3; i++) {
		char cmd[256];
		int fd = openat(topfd, chain[i][0], O_RDONLY | O_DIRECTORY);
		assert_true(fd >= 0);
		long entries = 0;
		DIR *d = fdopendir(fd);
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				entries++;
				snprintf(cmd, sizeof cmd, "%s", e->d_name);
			}
		closedir(d);
		assert_int_equal(entries, 1);
		assert_string_equal(cmd, chain[i][1]);
	}
	seen_free(&s);
}

static void test_failure_one(void **state) { (void)state; fail_keeps_ancestors(1); }
static void test_failure_eight(void **state) { (void)state; fail_keeps_ancestors(8); }

/* An ignored failure (rm -f and an entry that vanished: ENOENT) keeps
 * nothing: the tree goes, nothing counts. */
static void test_ignored_failure(void **state)
{
	(void)state;
	make_tree("t", 50, 3);
	fx_write_file(topfd, "t/d2/gone", "");
	fail_name = "gone";
	fail_errno = ENOENT;
	fail_after = true;
	struct seen s = { .ignore = true };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, 4, FASTRM_RMTREE_SHARE_ALL, &s, NULL), 0);
	assert_int_equal(s.ignored, 1);
	assert_int_equal(access("t", F_OK), -1);
	seen_free(&s);
}

/* Symlinks, to a directory and a file outside, are removed as links. */
static void test_symlinks_not_followed(void **state)
{
	(void)state;
	make_tree("t", 30, 2);
	assert_int_equal(mkdir("outside", 0755), 0);
	fx_write_file(topfd, "outside/keep", "x");
	assert_int_equal(symlink("../../outside", "t/d0/link"), 0);
	assert_int_equal(symlink("../outside/keep", "t/flink"), 0);
	struct seen s = { 0 };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, 4, FASTRM_RMTREE_SHARE_ALL, &s, NULL), 0);
	assert_int_equal(access("t", F_OK), -1);
	assert_int_equal(access("outside/keep", F_OK), 0);
	seen_free(&s);
}

/* A refused argument is left whole; the others go; a missing one fails. */
static void test_roots(void **state)
{
	(void)state;
	make_tree("a", 20, 2);
	make_tree("b", 20, 2);
	fx_write_file(topfd, "file", "");
	struct seen s = { .refuse = "b" };
	char *paths[] = { "a", "b", "file", "missing", NULL };
	assert_int_equal(run(paths, 3, 0, &s, NULL), 2);
	assert_int_equal(access("a", F_OK), -1);
	assert_int_equal(access("b/d1", F_OK), 0);
	assert_int_equal(access("file", F_OK), -1);
	assert_int_equal(s.failures, 1); /* "missing"; "b" the callback said */
	assert_int_equal(s.fail_errno, ENOENT);
	assert_string_equal(s.fail_path, "missing");
	seen_free(&s);
}

/* Paths given with slashes, every directory shared: the waiting
 * directories are reached again from the path as given. */
static void test_slashes(void **state)
{
	(void)state;
	assert_int_equal(mkdir("a", 0755), 0);
	make_tree("a/t", 40, 2);
	make_tree("u", 40, 2);
	struct seen s = { 0 };
	char *paths[] = { "a//t///", ".//u", NULL };
	assert_int_equal(run(paths, 2, FASTRM_RMTREE_SHARE_ALL, &s, NULL), 0);
	assert_int_equal(access("a/t", F_OK), -1);
	assert_int_equal(access("u", F_OK), -1);
	assert_int_equal(s.failures, 0);
	seen_free(&s);
}

/* Paths given in order: a directory alone, after what came before it;
 * "t" removed first, then "t/d0" is missing, as with GNU rm. */
static void test_nested_paths(void **state)
{
	(void)state;
	make_tree("t", 40, 2);
	struct seen s = { 0 };
	char *paths[] = { "t", "t/d0", "t/f0", NULL };
	assert_int_equal(run(paths, 4, 0, &s, NULL), 2);
	assert_int_equal(s.failures, 2);
	assert_int_equal(s.fail_errno, ENOENT);
	seen_free(&s);
}

/* A waiting directory found not empty when its last subtree is done
 * (entries added meanwhile) is emptied again, once; if it stays so, that
 * is reported once and its ancestors kept.  One worker: "odd" is shared,
 * its subdirectories s0 and s1 are shared from it (then the pool's task
 * bound is reached), so "odd" waits and its rmdir is the waiting kind. */
static void not_empty(int times, int want_rc)
{
	assert_int_equal(mkdir("t", 0755), 0);
	make_tree("t/odd", 4, 2);
	fx_write_file(topfd, "t/f", "");
	fail_name = "odd";
	fail_errno = ENOTEMPTY;
	fail_count = times;
	struct seen s = { 0 };
	struct fastrm_rmtree_stats st;
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, 1, FASTRM_RMTREE_SHARE_ALL, &s, &st), want_rc);
	assert_true(st.subtrees_shared >= 3);
	if (want_rc == 0) {
		assert_int_equal(access("t", F_OK), -1);
		assert_int_equal(s.failures, 0);
	} else {
		assert_int_equal(s.failures, 1);
		assert_string_equal(s.fail_path, "t/odd");
		assert_int_equal(s.fail_errno, ENOTEMPTY);
		assert_int_equal(access("t/odd", F_OK), 0);
		assert_int_equal(access("t/f", F_OK), -1);
	}
	seen_free(&s);
}

static void test_not_empty_once(void **state) { (void)state; not_empty(1, 0); }
static void test_not_empty_always(void **state) { (void)state; not_empty(-1, 1); }

/* A failure the caller ignores keeps nothing above it: the directory
 * above is still removed, or (here, where the ignored failure left the
 * entry) read again and then reported not empty, once.  It is never left
 * without a word ("odd" is a waiting directory, as in not_empty). */
static void ignored_keeps_nothing(unsigned workers)
{
	assert_int_equal(mkdir("t", 0755), 0);
	make_tree("t/odd", 4, 2);
	fx_write_file(topfd, "t/f", "");
	fail_name = "odd";
	fail_errno = ENOTDIR; /* rm -f ignores it: "not there" */
	struct seen s = { .ignore_errno = ENOTDIR };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, workers, FASTRM_RMTREE_SHARE_ALL, &s, NULL), 1);
	assert_true(s.ignored >= 1);
	assert_int_equal(s.failures, 1);
	assert_string_equal(s.fail_path, "t");
	assert_int_equal(s.fail_errno, ENOTEMPTY);
	assert_int_equal(access("t/odd", F_OK), 0);
	assert_int_equal(access("t/odd/d0", F_OK), -1);
	assert_int_equal(access("t/f", F_OK), -1);
	seen_free(&s);
}

static void test_ignored_one(void **state) { (void)state; ignored_keeps_nothing(1); }
static void test_ignored_four(void **state) { (void)state; ignored_keeps_nothing(4); }

/* @ask: each directory is asked about once before it is read, each entry
 * once before its removal, whichever worker meets it. */
static void ask_each_once(unsigned workers)
{
	long n = make_tree("t", 60, 3);
	struct seen s = { .asked = calloc(1, sizeof (char *)) };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, workers, FASTRM_RMTREE_SHARE_ALL, &s, NULL), 0);
	assert_int_equal(access("t", F_OK), -1);
	check_reports(&s, n);
	assert_int_equal(s.nasked, n + 60); /* every entry, and 60 directories */
	for (long i = 0; i < s.nasked; i++)
		assert_int_equal(times_asked(&s, s.asked[i]), 1);
	assert_int_equal(times_asked(&s, "E t/d1"), 1);
	assert_int_equal(times_asked(&s, "R t/d1/f0"), 1);
	seen_free(&s);
}

static void test_ask_once_one(void **state) { (void)state; ask_each_once(1); }
static void test_ask_once_four(void **state) { (void)state; ask_each_once(4); }

/* Kept before it is read (rm -i, "descend into directory?" no): it stays
 * with all it holds, the directories above stay, and that is no failure. */
static void test_ask_keep_enter(void **state)
{
	(void)state;
	make_tree("t", 30, 2);
	struct seen s = { .keep_enter = "t/d1" };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, 1, 0, &s, NULL), 0);
	assert_int_equal(s.failures, 0);
	assert_int_equal(access("t/d1/f0", F_OK), 0);
	assert_int_equal(access("t/d2", F_OK), -1);
	assert_int_equal(times_asked(&s, "R t"), 0);
	assert_int_equal(times_asked(&s, "E t/d1/d0"), 0);
	seen_free(&s);
}

/* Kept at its removal (rm -i, "remove file?" no): as GNU rm, the
 * directories above are still asked about; the one that holds it then
 * fails (not empty), said once and not read again; those above it stay
 * without a word. */
static void test_ask_keep_remove(void **state)
{
	(void)state;
	make_tree("t", 30, 2);
	struct seen s = { .keep_remove = "t/d1/f0" };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, 1, 0, &s, NULL), 1);
	assert_int_equal(s.failures, 1);
	assert_string_equal(s.fail_path, "t/d1");
	assert_int_equal(s.fail_errno, ENOTEMPTY);
	assert_int_equal(times_asked(&s, "R t/d1/f0"), 1);
	assert_int_equal(times_asked(&s, "R t/d1"), 1);
	assert_int_equal(times_asked(&s, "R t"), 0);
	assert_int_equal(access("t/d1/f0", F_OK), 0);
	assert_int_equal(access("t/d1/f1", F_OK), -1);
	seen_free(&s);
}

/* Found empty by the caller: removed at once, never asked again; a
 * directory that was not empty after all is a failure. */
static void test_ask_remove_empty(void **state)
{
	(void)state;
	make_tree("t", 10, 1);
	assert_int_equal(mkdir("t/e", 0755), 0);
	struct seen s = { .empty = "t/e" };
	char *paths[] = { "t", NULL };
	assert_int_equal(run(paths, 1, 0, &s, NULL), 0);
	assert_int_equal(access("t", F_OK), -1);
	assert_int_equal(times_asked(&s, "R t/e"), 0);
	seen_free(&s);

	make_tree("t", 10, 1);
	struct seen s2 = { .empty = "t/d1" };
	assert_int_equal(run(paths, 1, 0, &s2, NULL), 1);
	assert_string_equal(s2.fail_path, "t/d1");
	assert_int_equal(s2.fail_errno, ENOTEMPTY);
	assert_int_equal(access("t/d1/f0", F_OK), 0);
	assert_int_equal(access("t/d2", F_OK), -1);
	seen_free(&s2);
}

/* A stop set before the start: nothing is removed, -EINTR. */
static void test_stop(void **state)
{
	(void)state;
	make_tree("t", 20, 2);
	volatile sig_atomic_t stop = 1;
	struct seen s = { 0 };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = 4;
	o.ctx = &s;
	o.removed = on_removed;
	o.stop = &stop;
	pthread_mutex_init(&s.lock, NULL);
	char *paths[] = { "t", NULL };
	int fds = fx_count_fds();
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), -EINTR);
	assert_int_equal(access("t/d1", F_OK), 0);
	assert_int_equal(fx_count_fds(), fds);
	seen_free(&s);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct fastrm_rmtree_opts o = { 0 };
	char *paths[] = { NULL };
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), -EINVAL); /* no size */
	o.size = sizeof o;
	assert_int_equal(fastrm_rmtree(NULL, &o, NULL), -EINVAL);
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), 0);
	/* a later release's option is refused, not ignored */
	o.flags = 0x100;
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), -EINVAL);
	o.flags = 0;
	/* a size smaller than the struct's of 0.2 to 0.6; that one is taken */
	o.size = offsetof(struct fastrm_rmtree_opts, estimate) - 1;
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), -EINVAL);
	o.size = offsetof(struct fastrm_rmtree_opts, estimate);
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), 0);
	o.size = sizeof o;
	/* a policy that could not serve is refused, not replaced */
	struct fastrm_order bad = *fastrm_order_by_name("global");
	bad.reserved[1] = &bad;
	o.order = &bad;
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), -EINVAL);
	bad = *fastrm_order_by_name("global");
	bad.release = NULL;
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), -EINVAL);
	bad.release = fastrm_order_by_name("global")->release;
	assert_int_equal(fastrm_rmtree(paths, &o, NULL), 0);
}

/* The test-only flags are bits of their own, and none is a public one. */
static void test_flag_bits(void **state)
{
	(void)state;
	const unsigned flags[] = { FASTRM_RMTREE_XDEV, FASTRM_RMTREE_FIT_WORKERS,
		                   FASTRM_RMTREE_NO_PRESERVE_ROOT, FASTRM_RMTREE_ALLOW_DOTS,
		                   FASTRM_RMTREE_SHARE_ALL, FASTRM_RMTREE_READS_FAST,
		                   FASTRM_RMTREE_READS_SEEK };
	unsigned seen = 0;
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		assert_int_equal(__builtin_popcount(flags[i]), 1);
		assert_int_equal(seen & flags[i], 0);
		seen |= flags[i];
	}
	assert_int_equal(FASTRM_RMTREE_TEST_FLAGS &
	                 (FASTRM_RMTREE_XDEV | FASTRM_RMTREE_FIT_WORKERS |
	                  FASTRM_RMTREE_NO_PRESERVE_ROOT | FASTRM_RMTREE_ALLOW_DOTS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_workers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sixteen_workers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_share_all_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_share_all_four, setup, teardown),
		cmocka_unit_test_setup_teardown(test_estimate_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_estimate_four, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_eight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ignored_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slashes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_empty_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_empty_always, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ignored_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ignored_four, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask_once_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask_once_four, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask_keep_enter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask_keep_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask_remove_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rmtreeat, setup, teardown),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_flag_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
