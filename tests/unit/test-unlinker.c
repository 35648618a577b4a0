/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The unlinker: every submitted unlink is made, relative to the
 * directory set when it was submitted; results come back in submission
 * order, with the errno of each failure; bad input is refused; freeing
 * finishes what was queued and leaks no fd. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fastrm/unlinker.h"
#include "fixture.h"

static char *top;
static int topfd;

static int setup(void **state)
{
	(void)state;
	top = fx_mkdtemp();
	topfd = open(top, O_RDONLY | O_DIRECTORY);
	assert_true(topfd >= 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(topfd);
	fx_cleanup(top);
	return 0;
}

static int open_dir(const char *name)
{
	int fd = openat(topfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	assert_true(fd >= 0);
	return fd;
}

static long count_entries(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY);
	DIR *d = fdopendir(fd);
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static bool exists(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Results come back as 0, 1, 2, ... whatever order the threads ran in. */
static void expect_in_order(struct fastrm_unlink_done *d, size_t *next)
{
	assert_int_equal((uintptr_t)d->data, *next);
	(*next)++;
}

static void test_removes_everything_in_order(void **state)
{
	(void)state;
	const long n = 5000;
	fx_make_flat(topfd, "flat", n);
	int fd = open_dir("flat");
	int fds = fx_count_fds();
	/* a small ring: the caller must retire to make room many times */
	struct fastrm_unlinker *u;
	assert_int_equal(fastrm_unlinker_new(&u, 3, 16), 0);
	assert_non_null(u);
	assert_int_equal(fastrm_unlinker_set_dir(u, fd), 0);
	size_t next = 0;
	struct fastrm_unlink_done d;
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "file-%ld", i);
		int rc;
		while ((rc = fastrm_unlinker_submit(u, name, 0, (void *)(uintptr_t)i)) != 0) {
			assert_int_equal(rc, -EAGAIN);
			assert_int_equal(fastrm_unlinker_pending(u), 16);
			assert_int_equal(fastrm_unlinker_retire(u, true, &d), 1);
			assert_int_equal(d.error, 0);
			expect_in_order(&d, &next);
		}
		while (fastrm_unlinker_retire(u, false, &d) == 1) {
			assert_int_equal(d.error, 0);
			expect_in_order(&d, &next);
		}
	}
	while (fastrm_unlinker_retire(u, true, &d) == 1) {
		assert_int_equal(d.error, 0);
		assert_int_equal(d.flags, 0);
		char name[32];
		snprintf(name, sizeof name, "file-%zu", next);
		assert_string_equal(d.name, name);
		expect_in_order(&d, &next);
	}
	assert_int_equal(next, n);
	assert_int_equal(fastrm_unlinker_pending(u), 0);
	assert_int_equal(fastrm_unlinker_retire(u, true, &d), 0);
	assert_int_equal(count_entries(fd), 0);
	fastrm_unlinker_free(u);
	assert_int_equal(fx_count_fds(), fds);
	close(fd);
	assert_int_equal(unlinkat(topfd, "flat", AT_REMOVEDIR), 0);
}

/* Each failure comes back with its errno, in its place. */
static void test_errors_in_order(void **state)
{
	(void)state;
	assert_int_equal(mkdirat(topfd, "e", 0700), 0);
	int fd = open_dir("e");
	fx_write_file(fd, "file", "x");
	assert_int_equal(mkdirat(fd, "empty", 0700), 0);
	assert_int_equal(mkdirat(fd, "full", 0700), 0);
	fx_write_file(fd, "full/inner", "");
	assert_int_equal(symlinkat("..", fd, "link"), 0);

	static const struct { const char *name; int flags, error; } want[] = {
		{ "missing", 0, ENOENT },
		{ "file", 0, 0 },
		{ "file", 0, ENOENT }, /* the same name again: already gone */
		{ "full", 0, EISDIR },
		{ "full", AT_REMOVEDIR, ENOTEMPTY },
		{ "empty", AT_REMOVEDIR, 0 },
		{ "link", 0, 0 },      /* the link, never what it points to */
	};
	const size_t n = sizeof want / sizeof want[0];
	struct fastrm_unlinker *u;
	assert_int_equal(fastrm_unlinker_new(&u, 4, 0), 0);
	assert_non_null(u);
	assert_int_equal(fastrm_unlinker_set_dir(u, fd), 0);
	/* one at a time: "file" twice must be in this order */
	struct fastrm_unlink_done d;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(fastrm_unlinker_submit(u, want[i].name, want[i].flags,
		                                        (void *)(uintptr_t)i), 0);
		assert_int_equal(fastrm_unlinker_retire(u, true, &d), 1);
		assert_int_equal((uintptr_t)d.data, i);
		assert_string_equal(d.name, want[i].name);
		assert_int_equal(d.flags, want[i].flags);
		assert_int_equal(d.error, want[i].error);
	}
	assert_true(exists(fd, "full/inner"));
	assert_false(exists(fd, "link"));
	assert_false(exists(fd, "file"));
	assert_true(exists(topfd, "e"));
	fastrm_unlinker_free(u);
	close(fd);
}

/* The engine keeps its own copy of the directory: the caller may close
 * its fd; a new directory applies to what is submitted after it. */
static void test_directory_copy_and_switch(void **state)
{
	(void)state;
	assert_int_equal(mkdirat(topfd, "a", 0700), 0);
	assert_int_equal(mkdirat(topfd, "b", 0700), 0);
	int a = open_dir("a"), b = open_dir("b");
	fx_write_file(a, "same", "");
	fx_write_file(b, "same", "");
	fx_write_file(b, "other", "");
	int fds = fx_count_fds();

	struct fastrm_unlinker *u;
	assert_int_equal(fastrm_unlinker_new(&u, 2, 0), 0);
	assert_non_null(u);
	assert_int_equal(fastrm_unlinker_set_dir(u, b), 0);
	assert_int_equal(fastrm_unlinker_submit(u, "other", 0, NULL), 0);
	/* results not retired: the directory may not change */
	errno = 0;
	assert_int_equal(fastrm_unlinker_set_dir(u, a), -EBUSY);
	assert_int_equal(errno, 0); /* errno is left alone */
	struct fastrm_unlink_done d;
	assert_int_equal(fastrm_unlinker_retire(u, true, &d), 1);
	assert_int_equal(d.error, 0);

	int a2 = dup(a);
	assert_int_equal(fastrm_unlinker_set_dir(u, a2), 0);
	close(a2);
	assert_int_equal(fastrm_unlinker_submit(u, "same", 0, NULL), 0);
	assert_int_equal(fastrm_unlinker_retire(u, true, &d), 1);
	assert_int_equal(d.error, 0);
	assert_false(exists(a, "same"));
	assert_true(exists(b, "same"));
	assert_false(exists(b, "other"));

	/* a bad fd changes nothing */
	errno = 0;
	assert_int_equal(fastrm_unlinker_set_dir(u, -1), -EBADF);
	assert_int_equal(errno, 0);
	fastrm_unlinker_free(u);
	assert_int_equal(fx_count_fds(), fds);
	close(a);
	close(b);
}

static void test_refuses_bad_input(void **state)
{
	(void)state;
	struct fastrm_unlinker *none = (struct fastrm_unlinker *)&none;
	assert_int_equal(fastrm_unlinker_new(&none, 0, 0), -EINVAL);
	assert_null(none);
	assert_int_equal(fastrm_unlinker_new(&none, 65, 0), -EINVAL);
	assert_null(none);

	struct fastrm_unlinker *u;
	assert_int_equal(fastrm_unlinker_new(&u, 1, 1), 0);
	assert_non_null(u);
	struct fastrm_unlink_done d;
	assert_int_equal(fastrm_unlinker_retire(u, false, &d), 0);
	assert_int_equal(fastrm_unlinker_retire(u, true, &d), 0);
	assert_int_equal(fastrm_unlinker_submit(u, "x", 0, NULL), -EBADF);
	/* no directory yet */

	assert_int_equal(fastrm_unlinker_set_dir(u, topfd), 0);
	fx_write_file(topfd, "keep", "");
	assert_int_equal(mkdirat(topfd, "sub", 0700), 0);
	fx_write_file(topfd, "sub/keep", "");
	static const char *const bad[] = { "", ".", "..", "sub/keep", "/keep",
	                                   "../keep" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(fastrm_unlinker_submit(u, bad[i], 0, NULL), -EINVAL);
	}
	assert_int_equal(fastrm_unlinker_submit(u, "keep", AT_SYMLINK_NOFOLLOW,
	                                        NULL), -EINVAL);
	char longname[NAME_MAX + 2];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_int_equal(fastrm_unlinker_submit(u, longname, 0, NULL), -ENAMETOOLONG);
	assert_int_equal(fastrm_unlinker_pending(u), 0);

	/* a ring of one: the second submission waits for room */
	assert_int_equal(fastrm_unlinker_submit(u, "nothing-1", 0, NULL), 0);
	assert_int_equal(fastrm_unlinker_submit(u, "nothing-2", 0, NULL), -EAGAIN);
	assert_int_equal(fastrm_unlinker_retire(u, true, &d), 1);
	assert_int_equal(d.error, ENOENT);
	fastrm_unlinker_free(u);
	fastrm_unlinker_free(NULL);
	assert_true(exists(topfd, "keep"));
	assert_true(exists(topfd, "sub/keep"));
}

/* Freeing the engine finishes every queued unlink. */
static void test_free_finishes_the_queue(void **state)
{
	(void)state;
	const long n = 3000;
	fx_make_flat(topfd, "q", n);
	int fd = open_dir("q");
	struct fastrm_unlinker *u;
	assert_int_equal(fastrm_unlinker_new(&u, 2, (size_t)n), 0);
	assert_non_null(u);
	assert_int_equal(fastrm_unlinker_set_dir(u, fd), 0);
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "file-%ld", i);
		assert_int_equal(fastrm_unlinker_submit(u, name, 0, NULL), 0);
	}
	fastrm_unlinker_free(u);
	assert_int_equal(count_entries(fd), 0);
	close(fd);
	assert_int_equal(unlinkat(topfd, "q", AT_REMOVEDIR), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_removes_everything_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_copy_and_switch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_finishes_the_queue, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
