/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fastrm_rmtree refuses what GNU rm refuses, by default: a path given
 * whose last component is "." or "..", and the root directory however it
 * is named ("/", "//", "/../", a symlink to it with a trailing slash); it
 * says so through @failed (FASTRM_RMTREE_EREFUSED) and removes nothing of
 * it.  FASTRM_RMTREE_ALLOW_DOTS and FASTRM_RMTREE_NO_PRESERVE_ROOT lift
 * the refusals: then what is given is removed.
 *
 * The root directory here is never the machine's: the tests run in a
 * child process, in a mount namespace of its own, chrooted into a tmpfs
 * that it mounted on a directory it made (fx_mkdtemp).  Root only
 * (unshare, mount, chroot): otherwise it skips with the reason. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fastrm/rmtree.h>

#include "fixture.h"

struct said {
	int calls;
	enum fastrm_rmtree_error what;
	int err;
};

static int on_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	(void)e;
	struct said *s = ctx;
	s->calls++;
	s->what = what;
	s->err = err;
	return 1;
}

static int rmtree(const char *path, unsigned flags, struct said *s)
{
	char *paths[] = { (char *)path, NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = 4;
	o.flags = flags;
	o.ctx = s;
	o.failed = on_failed;
	memset(s, 0, sizeof *s);
	return fastrm_rmtree(paths, &o, NULL);
}

/* Entries below @path, symlinks not followed (the sandbox holds no
 * program to ask: it is an empty tmpfs). */
static long count(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (e->d_type == DT_DIR) {
			char sub[4300];
			snprintf(sub, sizeof sub, "%.2000s/%.2000s", path, e->d_name);
			n += count(sub);
		}
	}
	closedir(d);
	return n;
}

/* The sandbox's content: /keep (10 files), /sub/a (a file, and b with a
 * file), /link -> "/". */
static int setup(void **state)
{
	(void)state;
	assert_int_equal(chdir("/"), 0);
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	fx_make_flat(fd, "keep", 10);
	assert_int_equal(mkdirat(fd, "sub", 0755), 0);
	assert_int_equal(mkdirat(fd, "sub/a", 0755), 0);
	assert_int_equal(mkdirat(fd, "sub/a/b", 0755), 0);
	fx_write_file(fd, "sub/a/f", "x");
	fx_write_file(fd, "sub/a/b/g", "x");
	assert_int_equal(symlinkat("/", fd, "link"), 0);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(chdir("/"), 0);
	struct said s;
	/* empty the sandbox for the next test, with the refusal lifted */
	rmtree("/", FASTRM_RMTREE_NO_PRESERVE_ROOT, &s);
	return 0;
}

/* Every way of naming "." or ".." is refused with EINVAL; nothing goes. */
static void test_dots(void **state)
{
	(void)state;
	long all = count("/");
	struct said s;
	static const struct {
		const char *cwd, *path;
	} cases[] = {
		{ "/sub/a", "." },    { "/sub/a", "./" },   { "/sub/a/b", ".." },
		{ "/sub", "a/." },    { "/sub", "a/.." },   { "/sub", "a/./" },
		{ "/sub", "a//..//" }, { "/sub/a/b", "../." },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(chdir(cases[i].cwd), 0);
		assert_int_equal(rmtree(cases[i].path, 0, &s), 1);
		assert_int_equal(s.calls, 1);
		assert_int_equal(s.what, FASTRM_RMTREE_EREFUSED);
		assert_int_equal(s.err, EINVAL);
		assert_int_equal(count("/"), all);
	}
}

/* The root directory, by any name, is refused with EBUSY; the symlink to
 * it, without a trailing slash, is removed itself (as GNU rm does). */
static void test_root(void **state)
{
	(void)state;
	long all = count("/");
	struct said s;
	static const char *const names[] = { "/", "//", "/../", "/sub/..", "link/", "/link/" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		assert_int_equal(chdir("/"), 0);
		int rc = rmtree(names[i], 0, &s);
		printf("%s: %d, %d call(s) of failed, error %d\n", names[i], rc, s.calls, s.err);
		assert_int_equal(rc, 1);
		assert_int_equal(s.calls, 1);
		assert_int_equal(s.what, FASTRM_RMTREE_EREFUSED);
		/* "/sub/.." is refused as "..", the others as the root */
		assert_int_equal(s.err, strstr(names[i], "..") ? EINVAL : EBUSY);
		assert_int_equal(count("/"), all);
	}
	assert_int_equal(rmtree("/link", 0, &s), 0);
	assert_int_equal(count("/"), all - 1);
	struct stat sb;
	assert_int_equal(lstat("/link", &sb), -1);
}

/* Lifted: what is given is removed. */
static void test_opt_out(void **state)
{
	(void)state;
	struct said s;
	struct stat sb;
	/* "a/.": what a holds goes; a itself cannot be removed by that name */
	assert_int_equal(chdir("/sub"), 0);
	assert_int_equal(rmtree("a/.", FASTRM_RMTREE_ALLOW_DOTS, &s), 1);
	assert_int_equal(s.what, FASTRM_RMTREE_EREMOVE);
	assert_int_equal(s.err, EINVAL);
	assert_int_equal(count("/sub/a"), 0);
	/* "/": everything in the sandbox goes (its root stays: EBUSY) */
	assert_int_equal(rmtree("/", FASTRM_RMTREE_NO_PRESERVE_ROOT, &s), 1);
	assert_int_equal(s.what, FASTRM_RMTREE_EREMOVE);
	assert_int_equal(count("/"), 0);
	assert_int_equal(lstat("/keep", &sb), -1);
}

static int sandboxed(const char *top)
{
	if (unshare(CLONE_NEWNS) != 0) {
		printf("SKIP: cannot make a mount namespace: %s\n", strerror(errno));
		return FX_SKIP;
	}
	char root[4200];
	snprintf(root, sizeof root, "%.4000s/root", top);
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mkdir(root, 0755) != 0 ||
	    mount("fastrm-test", root, "tmpfs", 0, "size=16m") != 0 ||
	    chroot(root) != 0 || chdir("/") != 0) {
		printf("SKIP: cannot chroot into a tmpfs of its own: %s\n", strerror(errno));
		return FX_SKIP;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_out, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root (a mount namespace, a tmpfs and chroot)\n");
		return FX_SKIP;
	}
	char *top = fx_mkdtemp();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int rc = sandboxed(top);
		fflush(stdout);
		_exit(rc);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = 1 << 8;
	/* the namespace, its tmpfs and its chroot went with the child */
	fx_cleanup(top);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
