/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The directory reader: every entry exactly once, whole buffers per fill,
 * and a saved position that resumes where reading stopped. */
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
#include <unistd.h>

#include "dirread.h"
#include "fixture.h"

#define NFILES 20000

struct seen {
	unsigned char *mark;
	size_t n, dots;
};

static int count(void *ctx, const struct fastrm_dirent *d)
{
	struct seen *s = ctx;
	if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0) {
		s->dots++;
		return 0;
	}
	int i = atoi(d->name + 1);
	assert_true(i >= 0 && i < NFILES);
	assert_int_equal(d->namelen, strlen(d->name));
	assert_int_equal(d->type, DT_REG);
	s->mark[i]++;
	s->n++;
	return 0;
}

static int stop_early(void *ctx, const struct fastrm_dirent *d)
{
	(void)ctx;
	(void)d;
	return -ECANCELED;
}

static int stop_after(void *ctx, const struct fastrm_dirent *d)
{
	struct seen *s = ctx;
	if (s->n >= 150)
		return -ECANCELED;
	return count(ctx, d);
}

static char *dir;
static int dfd;

static int setup(void **state)
{
	(void)state;
	dir = fx_mkdtemp();
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < NFILES; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%d", i);
		fx_write_file(dfd, name, "");
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(dfd);
	fx_cleanup(dir);
	return 0;
}

static void test_all_once_in_batches(void **state)
{
	(void)state;
	struct dirread r;
	struct seen s = { calloc(NFILES, 1), 0, 0 };
	bool eof = false;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	int fills = 0;
	assert_int_equal(dirread_init(&r), 0);
	while (!eof) {
		long n = dirread_fill(&r, fd, 100, count, &s, &eof);
		assert_true(n >= 0);
		/* whole buffers: at least 100 unless the directory ended */
		if (!eof)
			assert_true(n >= 100);
		fills++;
	}
	assert_int_equal(s.n, NFILES);
	assert_int_equal(s.dots, 2);
	for (int i = 0; i < NFILES; i++)
		assert_int_equal(s.mark[i], 1);
	assert_true(fills > 1);
	dirread_fini(&r);
	close(fd);
	free(s.mark);
}

static void test_resume_after_reopen(void **state)
{
	(void)state;
	struct dirread r;
	struct seen s = { calloc(NFILES, 1), 0, 0 };
	bool eof = false;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(dirread_init(&r), 0);
	assert_true(dirread_fill(&r, fd, 1000, count, &s, &eof) >= 1000);
	off_t pos = lseek(fd, 0, SEEK_CUR);
	close(fd);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(lseek(fd, pos, SEEK_SET), pos);
	while (!eof)
		assert_true(dirread_fill(&r, fd, 1000, count, &s, &eof) >= 0);
	assert_int_equal(s.n, NFILES);
	for (int i = 0; i < NFILES; i++)
		assert_int_equal(s.mark[i], 1);
	dirread_fini(&r);
	close(fd);
	free(s.mark);
}

static void test_callback_error_and_bad_fd(void **state)
{
	(void)state;
	struct dirread r;
	bool eof;
	assert_int_equal(dirread_init(&r), 0);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(dirread_fill(&r, fd, 10, stop_early, NULL, &eof),
	                 -ECANCELED);
	close(fd);
	/* the refused buffer stays loaded until dropped */
	assert_int_equal(r.pos < r.len, 1);
	dirread_drop(&r);
	assert_int_equal(dirread_fill(&r, -1, 10, stop_early, NULL, &eof),
	                 -EBADF);
	dirread_fini(&r);
}

/* A callback that stops mid-buffer leaves entries loaded; putting them
 * back repositions the directory: the next reads return them, once. */
static void test_unload_puts_back(void **state)
{
	(void)state;
	struct dirread r;
	struct seen s = { calloc(NFILES, 1), 0, 0 };
	bool eof = false;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(dirread_init(&r), 0);
	assert_int_equal(dirread_fill(&r, fd, 1000, stop_after, &s, &eof), -ECANCELED);
	assert_int_equal(s.n, 150);
	assert_true(r.pos < r.len);
	assert_int_equal(dirread_unload(&r, fd), 0);
	assert_int_equal(r.pos, r.len);
	while (!eof)
		assert_true(dirread_fill(&r, fd, 1000, count, &s, &eof) >= 0);
	assert_int_equal(s.n, NFILES);
	for (int i = 0; i < NFILES; i++)
		assert_int_equal(s.mark[i], 1);
	assert_int_equal(dirread_unload(&r, fd), 0); /* nothing loaded: no-op */
	dirread_fini(&r);
	close(fd);
	free(s.mark);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_once_in_batches),
		cmocka_unit_test(test_resume_after_reopen),
		cmocka_unit_test(test_callback_error_and_bad_fd),
		cmocka_unit_test(test_unload_puts_back),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
