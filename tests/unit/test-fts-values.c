/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfastrm's fts against gnulib's as gnulib is today: every FTS_* value
 * equals gnulib's header's (tests/gnulib/fts-values.h, its commit named
 * there), FTS_NAMEONLY's old value still works for binaries linked before
 * 0.6 (the symbol version FASTRM_0.2), FTS_MOUNT leaves out what lies on
 * another device, FTS_DEFER_STAT's roots carry st_mode 0, and
 * fastrm_fts_openat() names its roots relative to a directory.
 *
 * Linked against the shared library, as a program is.  Run with the
 * argument "mount" it checks FTS_MOUNT with a tmpfs mounted inside the
 * tree (needs CAP_SYS_ADMIN: exits 77, skipped, without it).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fastrm/fts.h>

#include "fixture.h"

/* The version of fastrm_fts_children that binaries linked against 0.2 to
 * 0.5 call: FTS_NAMEONLY was 0x1000 there. */
FTSENT *children_0_2(FTS *sp, int instr);
__asm__(".symver children_0_2, fastrm_fts_children@FASTRM_0.2");
#define OLD_NAMEONLY 0x1000

static void test_values_are_gnulibs(void **state)
{
	(void)state;
	int checked = 0;
#define GNULIB(name, value)                                              \
	do {                                                             \
		if ((long)(name) != (long)(value))                       \
			fail_msg(#name " is %#lx, gnulib's is %#lx",     \
			         (unsigned long)(name), (unsigned long)(value)); \
		checked++;                                               \
	} while (0);
#include "fts-values.h"
#undef GNULIB
	/* libfastrm's own option stays clear of gnulib's bits, private
	 * flags included */
	assert_int_equal(FASTRM_FTS_DEVICE &
	                 (FTS_OPTIONMASK | FTS_NAMEONLY | FTS_STOP), 0);
	assert_true(checked >= 38);
}

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = fx_mkdtemp();
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	assert_int_equal(mkdirat(d, "t", 0755), 0);
	assert_int_equal(mkdirat(d, "t/b", 0755), 0);
	fx_write_file(d, "t/a", "a");
	fx_write_file(d, "t/b/c", "c");
	close(d);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fx_cleanup(dir);
	return 0;
}

static int by_name(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

/* fts_children through @children with @instr on the root "t", after its
 * preorder visit: "EINVAL" (errno's name) if it fails, else "names"
 * if the list was made for names only (fts_read makes a new one: what
 * the caller wrote in the entries is not seen again), "entries" if the
 * walk goes on with the very entries listed. */
static const char *children_of_t(FTSENT *(*children)(FTS *, int), int instr)
{
	assert_int_equal(chdir(dir), 0);
	char *argv[] = { "t", NULL };
	FTS *fts = fastrm_fts_open(argv, FTS_PHYSICAL | FTS_CWDFD, by_name);
	assert_non_null(fts);
	FTSENT *p = fastrm_fts_read(fts);
	assert_non_null(p);
	assert_int_equal(p->fts_info, FTS_D);
	errno = 0;
	FTSENT *c = children(fts, instr);
	const char *what = NULL;
	if (!c) {
		assert_int_not_equal(errno, 0);
		what = strerrorname_np(errno);
	}
	int listed = 0;
	for (; c; c = c->fts_link, listed++)
		c->fts_number = 42;
	/* the walk goes on either way: b is entered and read */
	int marked = 0, seen_c = 0;
	while ((p = fastrm_fts_read(fts))) {
		marked += p->fts_level == 1 && p->fts_number == 42;
		seen_c += strcmp(p->fts_path, "t/b/c") == 0;
	}
	assert_int_equal(errno, 0);
	assert_int_equal(seen_c, 1);
	assert_int_equal(fastrm_fts_close(fts), 0);
	if (!what) {
		assert_int_equal(listed, 2);
		/* b is visited twice (D and DP), a once */
		what = marked == 0 ? "names" : marked == 3 ? "entries" : "?";
	}
	return what;
}

static void test_nameonly_old_and_new(void **state)
{
	(void)state;
	/* 0.6's symbol: gnulib's FTS_NAMEONLY */
	assert_string_equal(children_of_t(fastrm_fts_children, FTS_NAMEONLY),
	                    "names");
	assert_string_equal(children_of_t(fastrm_fts_children, 0), "entries");
	/* 0x1000 is FTS_MOUNT now: no instruction of fts_children (gnulib:
	 * EINVAL) */
	assert_string_equal(children_of_t(fastrm_fts_children, OLD_NAMEONLY),
	                    "EINVAL");
	/* a binary linked before 0.6 passes 0x1000 and gets names only */
	assert_string_equal(children_of_t(children_0_2, OLD_NAMEONLY), "names");
	assert_string_equal(children_of_t(children_0_2, 0), "entries");
	assert_string_equal(children_of_t(children_0_2, FTS_NAMEONLY), "EINVAL");
}

static void test_options_mask(void **state)
{
	(void)state;
	assert_int_equal(chdir(dir), 0);
	char *argv[] = { "t", NULL };
	/* FTS_MOUNT is an option; the private flags are not */
	FTS *fts = fastrm_fts_open(argv, FTS_PHYSICAL | FTS_MOUNT, NULL);
	assert_non_null(fts);
	assert_int_equal(fastrm_fts_close(fts), 0);
	errno = 0;
	assert_null(fastrm_fts_open(argv, FTS_PHYSICAL | FTS_NAMEONLY, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(fastrm_fts_open(argv, FTS_PHYSICAL | FTS_STOP, NULL));
	assert_int_equal(errno, EINVAL);
}

/* gnulib (f5ee21eacc, 2026-04): with FTS_DEFER_STAT and a comparator,
 * the roots after the first are not stat'ed until visited, and their
 * st_mode is 0 meanwhile. */
static void test_defer_stat_mode(void **state)
{
	(void)state;
	assert_int_equal(chdir(dir), 0);
	char *argv[] = { "t/a", "t/b", "t", NULL };
	FTS *fts = fastrm_fts_open(argv, FTS_PHYSICAL | FTS_DEFER_STAT |
	                                   FTS_CWDFD, by_name);
	assert_non_null(fts);
	FTSENT *c = fastrm_fts_children(fts, 0);
	int nsok = 0;
	for (; c; c = c->fts_link) {
		if (c->fts_info == FTS_NSOK) {
			assert_int_equal(c->fts_statp->st_mode, 0);
			nsok++;
		}
	}
	assert_int_equal(nsok, 2);
	FTSENT *p;
	while ((p = fastrm_fts_read(fts)))
		assert_true(p->fts_info != FTS_NSOK);
	assert_int_equal(errno, 0);
	assert_int_equal(fastrm_fts_close(fts), 0);
}

static void test_openat(void **state)
{
	(void)state;
	assert_int_equal(chdir("/"), 0);
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	char *argv[] = { "t", NULL };
	static const int modes[] = { FTS_CWDFD, FTS_NOCHDIR };
	for (size_t m = 0; m < 2; m++) {
		FTS *fts = fastrm_fts_openat(d, argv, FTS_PHYSICAL | modes[m],
		                             by_name);
		assert_non_null(fts);
		char got[256] = "";
		FTSENT *p;
		while ((p = fastrm_fts_read(fts))) {
			if (p->fts_info == FTS_F) {
				/* fts_accpath works relative to fts_cwd_fd
				 * (FTS_CWDFD) or to d (FTS_NOCHDIR) */
				int at = modes[m] == FTS_CWDFD ? fts->fts_cwd_fd : d;
				struct stat sb;
				assert_int_equal(fstatat(at, p->fts_accpath, &sb,
				                         AT_SYMLINK_NOFOLLOW), 0);
				assert_int_equal(sb.st_ino, p->fts_statp->st_ino);
			}
			strcat(got, p->fts_path);
			strcat(got, " ");
		}
		assert_int_equal(errno, 0);
		assert_string_equal(got, "t t/a t/b t/b/c t/b t ");
		assert_int_equal(fastrm_fts_close(fts), 0);
	}
	/* the default mode would change the working directory: refused */
	errno = 0;
	assert_null(fastrm_fts_openat(d, argv, FTS_PHYSICAL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(fastrm_fts_openat(-7, argv, FTS_PHYSICAL | FTS_CWDFD, NULL));
	assert_int_equal(errno, EBADF);
	/* AT_FDCWD: fastrm_fts_open itself, default mode included */
	assert_int_equal(chdir(dir), 0);
	FTS *fts = fastrm_fts_openat(AT_FDCWD, argv, FTS_PHYSICAL, NULL);
	assert_non_null(fts);
	int n = 0;
	while (fastrm_fts_read(fts))
		n++;
	assert_int_equal(n, 6);
	assert_int_equal(fastrm_fts_close(fts), 0);
	close(d);
}

/* ------------------------------------------------------------ FTS_MOUNT */

static char *mdir;

/* m/ is a tmpfs of its own in the tree:
 *   t/a  t/l -> m  t/m/ (tmpfs: m/x  m/sub/y)  t/z/w */
static int mount_setup(void **state)
{
	(void)state;
	mdir = fx_mkdtemp();
	int d = open(mdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	assert_int_equal(mkdirat(d, "t", 0755), 0);
	assert_int_equal(mkdirat(d, "t/m", 0755), 0);
	assert_int_equal(mkdirat(d, "t/z", 0755), 0);
	fx_write_file(d, "t/a", "a");
	fx_write_file(d, "t/z/w", "w");
	assert_int_equal(symlinkat("m", d, "t/l"), 0);
	char m[4096];
	snprintf(m, sizeof m, "%s/t/m", mdir);
	if (mount("fastrm-test", m, "tmpfs", 0, "size=1m") < 0) {
		int e = errno;
		close(d);
		errno = e;
		return -1;
	}
	assert_int_equal(mkdirat(d, "t/m/sub", 0755), 0);
	fx_write_file(d, "t/m/x", "x");
	fx_write_file(d, "t/m/sub/y", "y");
	close(d);
	return 0;
}

static int mount_teardown(void **state)
{
	(void)state;
	char m[4096];
	snprintf(m, sizeof m, "%s/t/m", mdir);
	fx_unmount(m);
	fx_cleanup(mdir);
	return 0;
}

static const char *info_name(int info)
{
	static const char *const names[] = {
		"?", "D", "DC", "DEFAULT", "DNR", "DOT", "DP", "ERR", "F",
		"INIT", "NS", "NSOK", "SL", "SLNONE", "W",
	};
	return info >= 0 && info <= 14 ? names[info] : "?";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walk @root with @options (and the comparator if @sorted), following
 * "t/l" with FTS_FOLLOW if @follow; the visits, "INFO path", sorted, one
 * a line. */
static char *walk(const char *root, int options, int sorted, int follow)
{
	assert_int_equal(chdir(mdir), 0);
	char *argv[] = { (char *)root, NULL };
	FTS *fts = fastrm_fts_open(argv, options, sorted ? by_name : NULL);
	assert_non_null(fts);
	char *lines[64];
	size_t n = 0;
	FTSENT *p;
	while ((p = fastrm_fts_read(fts))) {
		assert_true(n < 64);
		if (follow && p->fts_info == FTS_SL && !strcmp(p->fts_path, "t/l"))
			assert_int_equal(fastrm_fts_set(fts, p, FTS_FOLLOW), 0);
		assert_true(asprintf(&lines[n++], "%s %s", info_name(p->fts_info),
		                     p->fts_path) > 0);
	}
	assert_int_equal(errno, 0);
	assert_int_equal(fastrm_fts_close(fts), 0);
	qsort(lines, n, sizeof *lines, cmp_str);
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	char *out = malloc(len);
	assert_non_null(out);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	return out;
}

static void test_mount(void **state)
{
	(void)state;
	static const int modes[] = { 0, FTS_CWDFD, FTS_NOCHDIR };
	static const int extra[] = { 0, FTS_NOSTAT, FTS_DEFER_STAT, FTS_SEEDOT };
	for (size_t m = 0; m < 3; m++)
		for (size_t e = 0; e < 4; e++)
			for (int sorted = 0; sorted < 2; sorted++) {
				int o = FTS_PHYSICAL | modes[m] | extra[e];
				char *got = walk("t", o | FTS_MOUNT, sorted, 0);
				/* neither the mount point nor what it holds;
				 * every entry stat'ed, FTS_NOSTAT or not */
				if (extra[e] == FTS_SEEDOT) {
					assert_null(strstr(got, "t/m"));
					assert_non_null(strstr(got, "DOT t/z/..\n"));
				} else {
					assert_string_equal(got,
					        "D t\nD t/z\nDP t\nDP t/z\nF t/a\n"
					        "F t/z/w\nSL t/l\n");
				}
				free(got);
				/* FTS_XDEV: the mount point, not entered */
				got = walk("t", o | FTS_XDEV, sorted, 0);
				assert_non_null(strstr(got, "D t/m\n"));
				assert_non_null(strstr(got, "DP t/m\n"));
				assert_null(strstr(got, "t/m/"));
				free(got);
				/* neither: everything */
				got = walk("t", o, sorted, 0);
				if (!strstr(got, "t/m/sub/y\n"))
					fail_msg("options %#x: %s", o, got);
				free(got);
			}
	/* a root on another device is walked, and what is on its device */
	char *got = walk("t/m", FTS_PHYSICAL | FTS_MOUNT | FTS_CWDFD, 1, 0);
	assert_string_equal(got, "D t/m\nD t/m/sub\nDP t/m\nDP t/m/sub\n"
	                         "F t/m/sub/y\nF t/m/x\n");
	free(got);
	/* a symbolic link followed to another device: left out, in a
	 * logical walk and through FTS_FOLLOW (gnulib: both) */
	got = walk("t", FTS_LOGICAL | FTS_MOUNT, 1, 0);
	assert_string_equal(got, "D t\nD t/z\nDP t\nDP t/z\nF t/a\nF t/z/w\n");
	free(got);
	got = walk("t", FTS_PHYSICAL | FTS_MOUNT, 1, 1);
	assert_string_equal(got, "D t\nD t/z\nDP t\nDP t/z\nF t/a\nF t/z/w\nSL t/l\n");
	free(got);
	/* fts_children is not filtered (gnulib's is not) */
	assert_int_equal(chdir(mdir), 0);
	char *argv[] = { "t", NULL };
	FTS *fts = fastrm_fts_open(argv, FTS_PHYSICAL | FTS_MOUNT | FTS_CWDFD,
	                           by_name);
	assert_non_null(fts);
	assert_non_null(fastrm_fts_read(fts));
	int listed = 0;
	for (FTSENT *c = fastrm_fts_children(fts, 0); c; c = c->fts_link)
		listed += strcmp(c->fts_name, "m") == 0;
	assert_int_equal(listed, 1);
	assert_int_equal(fastrm_fts_close(fts), 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "mount")) {
		if (geteuid() != 0) {
			printf("skipped: mounting a tmpfs needs root\n");
			return FX_SKIP;
		}
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(test_mount),
		};
		if (mount_setup(NULL) < 0) {
			printf("skipped: cannot mount a tmpfs here (%s)\n",
			       strerror(errno));
			fx_cleanup(mdir);
			return FX_SKIP;
		}
		int rc = cmocka_run_group_tests(tests, NULL, NULL);
		mount_teardown(NULL);
		return rc;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_are_gnulibs),
		cmocka_unit_test(test_nameonly_old_and_new),
		cmocka_unit_test(test_options_mask),
		cmocka_unit_test(test_defer_stat_mode),
		cmocka_unit_test(test_openat),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
