/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory cycle in a physical walk, as a corrupt or buggy file system
 * shows one: a FUSE file system whose every directory holds one
 * subdirectory "d", without end, the directories below the root taking
 * the inode numbers 10, 11, 12, 10, 11, ... (a cycle of three that starts
 * at depth 1).  Linux's own file systems refuse a directory's second
 * name (ELOOP), so only such a file system makes one.
 *   - the walk with FTS_TIGHT_CYCLE_CHECK finds it where it starts again
 *     (depth 4, fts_cycle at depth 1);
 *   - the physical walk without it checks as gnulib's, in constant memory,
 *     and finds it a little later (depth 6, fts_cycle at depth 3: the
 *     directory at depth 3 is the one it held);
 *   - a removal ends, with the cycle reported (FASTRM_RMTREE_ECYCLE).
 * Needs FUSE (/dev/fuse and the right to mount): exits 77 without.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fastrm/fts.h>
#include <fastrm/rmtree.h>

#include "fixture.h"

/* ------------------------------------------------------ the file system */

static int depth_of(const char *path)
{
	int d = 0;
	for (const char *p = path; *p; p++)
		d += *p == '/' && p[1];
	return d;
}

static int loop_getattr(const char *path, struct stat *st,
                        struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof *st);
	const char *last = strrchr(path, '/');
	if (strcmp(path, "/") != 0 && strcmp(last, "/d") != 0)
		return -ENOENT;
	int d = depth_of(path);
	st->st_mode = S_IFDIR | 0755;
	st->st_nlink = 2;
	st->st_ino = d == 0 ? 1 : 10 + (ino_t)((d - 1) % 3);
	return 0;
}

static int loop_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
                        off_t off, struct fuse_file_info *fi,
                        enum fuse_readdir_flags flags)
{
	(void)path;
	(void)off;
	(void)fi;
	(void)flags;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "d", NULL, 0, 0);
	return 0;
}

static void *loop_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;       /* the inode numbers above, not the library's */
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	return NULL;
}

static const struct fuse_operations loop_ops = {
	.getattr = loop_getattr,
	.readdir = loop_readdir,
	.init = loop_init,
};

/* ---------------------------------------------------------------- tests */

static char *dir;
static char mnt[4096];
static pid_t server;

static int mounted(void)
{
	struct stat a, b;
	char parent[4096];
	snprintf(parent, sizeof parent, "%s", dir);
	return stat(mnt, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/* The walk of the mount point with @options: the depth of the first
 * FTS_DC and of its fts_cycle (-1: none); the walk must end. */
static void walk(int options, long *dc_level, long *cycle_level)
{
	char *roots[] = { mnt, NULL };
	FTS *fts = fastrm_fts_open(roots, options, NULL);
	assert_non_null(fts);
	*dc_level = *cycle_level = -1;
	FTSENT *e;
	long visits = 0;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		assert_true(++visits < 1000);
		if (e->fts_info == FTS_DC && *dc_level < 0) {
			*dc_level = e->fts_level;
			*cycle_level = e->fts_cycle->fts_level;
		}
	}
	assert_int_equal(errno, 0);
	assert_int_equal(fastrm_fts_close(fts), 0);
}

static void test_tight(void **state)
{
	(void)state;
	long dc, cyc;
	walk(FTS_PHYSICAL | FTS_NOCHDIR | FTS_TIGHT_CYCLE_CHECK, &dc, &cyc);
	assert_int_equal(dc, 4);
	assert_int_equal(cyc, 1);
	walk(FTS_PHYSICAL | FTS_CWDFD | FTS_TIGHT_CYCLE_CHECK, &dc, &cyc);
	assert_int_equal(dc, 4);
	assert_int_equal(cyc, 1);
}

static void test_lazy(void **state)
{
	(void)state;
	long dc, cyc;
	static const int modes[] = { FTS_NOCHDIR, FTS_CWDFD, 0 };
	for (size_t m = 0; m < 3; m++) {
		walk(FTS_PHYSICAL | FTS_NOSTAT | modes[m], &dc, &cyc);
		assert_int_equal(dc, 6);
		assert_int_equal(cyc, 3);
	}
}

struct failures {
	int cycles, others;
};

static int on_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	(void)e;
	(void)err;
	struct failures *f = ctx;
	if (what == FASTRM_RMTREE_ECYCLE)
		f->cycles++;
	else
		f->others++;
	return 1;
}

static void test_removal_ends(void **state)
{
	(void)state;
	static const unsigned jobs[] = { 1, 2 };
	for (size_t j = 0; j < 2; j++) {
		struct failures f = { 0, 0 };
		struct fastrm_rmtree_opts o = { 0 };
		o.size = sizeof o;
		o.workers = jobs[j];
		o.ctx = &f;
		o.failed = on_failed;
		char *roots[] = { mnt, NULL };
		int rc = fastrm_rmtree(roots, &o, NULL);
		assert_true(rc > 0);
		assert_true(f.cycles >= 1);
	}
}

int main(void)
{
	if (access("/dev/fuse", R_OK | W_OK) != 0) {
		printf("skipped: no /dev/fuse to use\n");
		return FX_SKIP;
	}
	dir = fx_mkdtemp();
	snprintf(mnt, sizeof mnt, "%s/mnt", dir);
	if (mkdir(mnt, 0755) < 0)
		abort();
	fflush(stdout);
	server = fork();
	if (server == 0) {
		char *args[] = { "loopfs", "-f", "-s", "-o", "default_permissions",
		                 mnt, NULL };
		_exit(fuse_main(6, args, &loop_ops, NULL));
	}
	for (int i = 0; i < 500 && !mounted(); i++) {
		if (waitpid(server, NULL, WNOHANG) == server) {
			printf("skipped: the FUSE file system could not be mounted\n");
			fx_cleanup(dir);
			return FX_SKIP;
		}
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	if (!mounted()) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
		printf("skipped: the FUSE file system was not mounted in 5 s\n");
		fx_cleanup(dir);
		return FX_SKIP;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tight),
		cmocka_unit_test(test_lazy),
		cmocka_unit_test(test_removal_ends),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (umount2(mnt, MNT_DETACH) < 0)
		kill(server, SIGTERM);
	waitpid(server, NULL, 0);
	fx_cleanup(dir);
	return rc;
}
