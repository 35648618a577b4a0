/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fts's default mode (neither FTS_CWDFD nor FTS_NOCHDIR): the walk changes
 * directory so that fts_accpath works at any depth, and gives the working
 * directory back on fts_close, at the end and when it stops; the other
 * modes never change it.  Also: what callers are told where whole paths
 * fail (FTS_NOCHDIR past PATH_MAX), a directory moved during the walk, and
 * levels entered through FTS_FOLLOW. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fastrm/fts.h>

#include "fixture.h"

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = fx_mkdtemp();
	return chdir(dir);
}

static int teardown(void **state)
{
	(void)state;
	if (chdir("/") < 0)
		return -1;
	fx_cleanup(dir);
	return 0;
}

static void cwd_id(struct stat *sb)
{
	assert_int_equal(stat(".", sb), 0);
}

static void assert_same_cwd(const struct stat *before)
{
	struct stat now;
	cwd_id(&now);
	assert_true(now.st_dev == before->st_dev && now.st_ino == before->st_ino);
}

/* A chain of @depth directories "n" (names of 200 bytes, so that paths
 * pass PATH_MAX after 20 levels) with a file "f" in each, under @name. */
static void make_long_chain(const char *name, int depth)
{
	char n[201];
	memset(n, 'n', 200);
	n[200] = '\0';
	assert_int_equal(mkdir(name, 0755), 0);
	int fd = open(name, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < depth; i++) {
		fx_write_file(fd, "f", "");
		assert_int_equal(mkdirat(fd, n, 0755), 0);
		int sub = openat(fd, n, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = sub;
	}
	close(fd);
}

static const int every_mode[] = {
	FTS_PHYSICAL, FTS_PHYSICAL | FTS_NOSTAT, FTS_PHYSICAL | FTS_CWDFD,
	FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, FTS_PHYSICAL | FTS_NOCHDIR,
	FTS_LOGICAL, FTS_LOGICAL | FTS_NOSTAT, FTS_PHYSICAL | FTS_COMFOLLOW,
};
#define NMODES (sizeof every_mode / sizeof every_mode[0])

static bool chdir_mode(int opts)
{
	return !(opts & (FTS_CWDFD | FTS_NOCHDIR | FTS_LOGICAL));
}

/* Every entry's fts_accpath reaches it (relative to the working directory
 * or fts_cwd_fd), the working directory is the entry's parent exactly in
 * the default mode, and nothing is left open or moved afterwards. */
static void test_accpath_and_cwd_every_mode(void **state)
{
	(void)state;
	make_long_chain("c", 12);
	struct stat before;
	cwd_id(&before);
	for (size_t m = 0; m < NMODES; m++) {
		int opts = every_mode[m];
		int fds = fx_count_fds();
		char *roots[] = { "c", NULL };
		FTS *fts = fastrm_fts_open(roots, opts, NULL);
		assert_non_null(fts);
		FTSENT *e;
		long n = 0;
		while ((e = fastrm_fts_read(fts)) != NULL) {
			n++;
			struct stat sb;
			int dfd = (opts & FTS_CWDFD) ? fts->fts_cwd_fd : AT_FDCWD;
			assert_int_equal(fstatat(dfd, e->fts_accpath, &sb,
			                         AT_SYMLINK_NOFOLLOW), 0);
			if (e->fts_info == FTS_F || e->fts_info == FTS_D ||
			    e->fts_info == FTS_DP)
				assert_true(sb.st_ino == e->fts_statp->st_ino);
			if (chdir_mode(opts) && e->fts_level > 0) {
				/* the working directory is the parent */
				struct stat cwd;
				cwd_id(&cwd);
				assert_true(cwd.st_ino == e->fts_parent->fts_statp->st_ino);
				assert_string_equal(e->fts_accpath, e->fts_name);
			} else if (!(opts & FTS_CWDFD)) {
				assert_ptr_equal(e->fts_accpath, e->fts_path);
				assert_same_cwd(&before);
			}
		}
		assert_int_equal(errno, 0);
		assert_int_equal(n, 2 * 13 + 12);
		assert_same_cwd(&before); /* at the end of the walk */
		assert_int_equal(fastrm_fts_close(fts), 0);
		assert_same_cwd(&before);
		assert_int_equal(fx_count_fds(), fds);
	}
	assert_int_equal(system("rm -rf c"), 0);
}

/* Closed in the middle of a walk, deep inside: back where it started. */
static void test_close_midway(void **state)
{
	(void)state;
	make_long_chain("c", 30);
	struct stat before;
	cwd_id(&before);
	int fds = fx_count_fds();
	char *roots[] = { "c", NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL, NULL);
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL && e->fts_level < 25)
		;
	assert_non_null(e);
	struct stat deep;
	cwd_id(&deep);
	assert_true(deep.st_ino != before.st_ino);
	assert_int_equal(fastrm_fts_close(fts), 0);
	assert_same_cwd(&before);
	assert_int_equal(fx_count_fds(), fds);
	assert_int_equal(system("rm -rf c"), 0);
}

/* A remover that uses fts_accpath in the default mode empties a tree whose
 * paths are far longer than PATH_MAX. */
static void test_remove_past_path_max(void **state)
{
	(void)state;
	make_long_chain("c", 60); /* paths of 12,000 bytes */
	char *roots[] = { "c", NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOSTAT, NULL);
	FTSENT *e;
	long removed = 0;
	size_t longest = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		if (e->fts_pathlen > longest)
			longest = e->fts_pathlen;
		if (e->fts_info == FTS_D)
			continue;
		int flag = e->fts_info == FTS_DP ? AT_REMOVEDIR : 0;
		assert_int_equal(unlinkat(AT_FDCWD, e->fts_accpath, flag), 0);
		removed++;
	}
	assert_int_equal(errno, 0);
	assert_int_equal(fastrm_fts_close(fts), 0);
	assert_true(longest > 2 * PATH_MAX);
	assert_int_equal(removed, 61 + 60);
	assert_int_equal(access("c", F_OK), -1);
}

/* FTS_NOCHDIR hands out whole paths: at the first directory whose path
 * reaches PATH_MAX, one FTS_NS with ENAMETOOLONG, and it is not entered
 * (gnulib does the same: its stat of that path fails). */
static void test_nochdir_past_path_max(void **state)
{
	(void)state;
	make_long_chain("c", 40);
	char *roots[] = { "c", NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	FTSENT *e;
	int ns = 0;
	size_t longest = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		if (e->fts_info == FTS_NS) {
			ns++;
			assert_int_equal(e->fts_errno, ENAMETOOLONG);
			assert_true(e->fts_pathlen >= PATH_MAX);
		} else if (e->fts_pathlen > longest) {
			longest = e->fts_pathlen;
		}
	}
	assert_int_equal(errno, 0);
	assert_int_equal(fastrm_fts_close(fts), 0);
	/* the one directory whose path passes PATH_MAX */
	assert_int_equal(ns, 1);
	assert_true(longest < PATH_MAX);
	assert_int_equal(system("rm -rf c"), 0);
}

/* A directory moved up a level while the walk is inside it: on the way
 * back, ".." is no longer the parent; fts_read fails with ENOENT naming it
 * (as gnulib, which du reports as "fts_read failed"), the working directory
 * is given back, in the default mode and with FTS_CWDFD (where the parent's
 * fd has to be reopened: the moved directory's subtree is deep). */
static void test_moved_directory(void **state)
{
	(void)state;
	static const int modes[] = { FTS_PHYSICAL, FTS_PHYSICAL | FTS_CWDFD };
	for (size_t m = 0; m < 2; m++) {
		assert_int_equal(system("mkdir -p T/U/3/a/b/c/d/e/f/g/h/i"), 0);
		struct stat before;
		cwd_id(&before);
		int fds = fx_count_fds();
		char *roots[] = { "T", NULL };
		FTS *fts = fastrm_fts_open(roots, modes[m], NULL);
		FTSENT *e;
		bool moved = false;
		while ((e = fastrm_fts_read(fts)) != NULL) {
			if (!moved && strcmp(e->fts_path, "T/U/3/a/b/c") == 0) {
				char from[4200], to[4200];
				snprintf(from, sizeof from, "%s/T/U/3/a/b", dir);
				snprintf(to, sizeof to, "%s/T/U/3/b", dir);
				assert_int_equal(rename(from, to), 0);
				moved = true;
			}
		}
		assert_true(moved);
		assert_int_equal(errno, ENOENT);
		assert_string_equal(fts->fts_path, "T/U/3/a/b");
		assert_same_cwd(&before); /* FTS_STOP gives it back at once */
		assert_null(fastrm_fts_read(fts));
		assert_int_equal(fastrm_fts_close(fts), 0);
		assert_same_cwd(&before);
		assert_int_equal(fx_count_fds(), fds);
		assert_int_equal(system("rm -rf T"), 0);
	}
}

/* FTS_FOLLOW into symlinked directories at every level of a deep walk:
 * ".." does not lead back from them, so the walk keeps the parent's fd
 * (one per such level, as gnulib's fts_symfd) and climbs back through
 * it; every entry is reached through fts_accpath, and nothing leaks. */
static void test_follow_levels(void **state)
{
	(void)state;
	/* real/0 ... real/29, each holding a file and a symlink "s" to
	 * the next (30 symlinks on a path: within the kernel's 40, which
	 * FTS_NOCHDIR's whole paths must resolve) */
	assert_int_equal(mkdir("real", 0755), 0);
	for (int i = 0; i < 30; i++) {
		char p[64], t[64];
		snprintf(p, sizeof p, "real/%d", i);
		assert_int_equal(mkdir(p, 0755), 0);
		snprintf(p, sizeof p, "real/%d/file", i);
		fx_write_file(AT_FDCWD, p, "");
		snprintf(p, sizeof p, "real/%d/s", i);
		snprintf(t, sizeof t, "../%d", i + 1);
		if (i < 29)
			assert_int_equal(symlink(t, p), 0);
	}
	static const int modes[] = { FTS_PHYSICAL, FTS_PHYSICAL | FTS_CWDFD,
		                     FTS_PHYSICAL | FTS_NOCHDIR };
	for (size_t m = 0; m < 3; m++) {
		int fds = fx_count_fds();
		struct stat before;
		cwd_id(&before);
		char *roots[] = { "real/0", NULL };
		FTS *fts = fastrm_fts_open(roots, modes[m], NULL);
		FTSENT *e;
		int files = 0, maxlevel = 0;
		while ((e = fastrm_fts_read(fts)) != NULL) {
			if (e->fts_info == FTS_SL)
				fastrm_fts_set(fts, e, FTS_FOLLOW);
			if (e->fts_info == FTS_F) {
				int dfd = (modes[m] & FTS_CWDFD) ? fts->fts_cwd_fd : AT_FDCWD;
				struct stat sb;
				assert_int_equal(fstatat(dfd, e->fts_accpath, &sb,
				                         AT_SYMLINK_NOFOLLOW), 0);
				assert_true(sb.st_ino == e->fts_statp->st_ino);
				files++;
			}
			if (e->fts_level > maxlevel)
				maxlevel = e->fts_level;
		}
		assert_int_equal(errno, 0);
		assert_int_equal(files, 30);
		assert_int_equal(maxlevel, 30);
		assert_int_equal(fastrm_fts_close(fts), 0);
		assert_same_cwd(&before);
		assert_int_equal(fx_count_fds(), fds);
	}
	assert_int_equal(system("rm -rf real"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accpath_and_cwd_every_mode),
		cmocka_unit_test(test_close_midway),
		cmocka_unit_test(test_remove_past_path_max),
		cmocka_unit_test(test_nochdir_past_path_max),
		cmocka_unit_test(test_moved_directory),
		cmocka_unit_test(test_follow_levels),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
