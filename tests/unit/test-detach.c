/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Detach and finish (lib/detach.c), in the test's own directory with a
 * state directory of its own:
 * - what fastrm_detach() refuses ("/", ".", "..", a file, a missing path),
 *   leaving no record; a detached directory is at a hidden name beside
 *   its old one, its record names it, fastrm_pending() lists it;
 * - a record made before a crash that came before its rename (nothing at
 *   the hidden name) is dropped by fastrm_finish();
 * - a record held by another finisher (a flock taken here) is -EBUSY;
 * - a failure (unlinkat wrapped to refuse one name with EACCES) keeps the
 *   record, writes ID.manifest with the entry's path under the hidden
 *   name, and the callbacks see that path too; a second finish removes
 *   the rest, and the record, progress and manifest go with it;
 * - the state directory: FASTRM_STATE_DIR wins, and is made with its
 *   parents.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fastrm/detach.h"
#include "fixture.h"

static const char *refuse_name; /* unlinkat of this name: EACCES */

int __real_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags)
{
	if (refuse_name && strcmp(path, refuse_name) == 0) {
		errno = EACCES;
		return -1;
	}
	return __real_unlinkat(dirfd, path, flags);
}

struct env {
	char *top;
	char state[4096];
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof *e);
	e->top = fx_mkdtemp();
	snprintf(e->state, sizeof e->state, "%s/state/deep", e->top);
	setenv("FASTRM_STATE_DIR", e->state, 1);
	char got[4096];
	assert_int_equal(fastrm_state_dir(got, sizeof got), 0);
	assert_string_equal(got, e->state);
	struct stat st;
	assert_int_equal(stat(e->state, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	fx_cleanup(e->top);
	free(e);
	unsetenv("FASTRM_STATE_DIR");
	return 0;
}

static int count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name), s = strlen(suffix);
		if (l > s && strcmp(de->d_name + l - s, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static void make_tree(const char *t)
{
	char p[4096];
	assert_int_equal(mkdir(t, 0700), 0);
	for (int d = 0; d < 3; d++) {
		snprintf(p, sizeof p, "%s/d%d", t, d);
		assert_int_equal(mkdir(p, 0700), 0);
		for (int f = 0; f < 5; f++) {
			snprintf(p, sizeof p, "%s/d%d/f%d", t, d, f);
			int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
			assert_true(fd >= 0);
			close(fd);
		}
	}
}

static void test_refusals(void **state)
{
	struct env *e = *state;
	char id[FASTRM_DETACH_ID_SIZE], p[4096];
	assert_int_equal(fastrm_detach(AT_FDCWD, "/", e->state, 0, id), -EINVAL);
	snprintf(p, sizeof p, "%s/.", e->top);
	assert_int_equal(fastrm_detach(AT_FDCWD, p, e->state, 0, id), -EINVAL);
	snprintf(p, sizeof p, "%s/..", e->top);
	assert_int_equal(fastrm_detach(AT_FDCWD, p, e->state, 0, id), -EINVAL);
	snprintf(p, sizeof p, "%s/file", e->top);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	close(fd);
	assert_int_equal(fastrm_detach(AT_FDCWD, p, e->state, 0, id), -ENOTDIR);
	snprintf(p, sizeof p, "%s/missing", e->top);
	assert_int_equal(fastrm_detach(AT_FDCWD, p, e->state, 0, id), -ENOENT);
	assert_int_equal(fastrm_detach(AT_FDCWD, e->top, e->state, 0x100, id), -EINVAL);
	assert_int_equal(count_files(e->state, ".rec"), 0);
}

struct seen {
	int n;
	char id[FASTRM_DETACH_ID_SIZE];
	char path[4096], hidden[4096];
	int active;
};

static int see(void *ctx, const struct fastrm_detached *d)
{
	struct seen *s = ctx;
	s->n++;
	snprintf(s->id, sizeof s->id, "%s", d->id);
	snprintf(s->path, sizeof s->path, "%s", d->path);
	snprintf(s->hidden, sizeof s->hidden, "%s", d->hidden);
	s->active = d->active;
	return 0;
}

struct calls {
	const char *prefix;
	int removed, failed, outside;
};

static void on_removed(void *ctx, const struct fastrm_rmtree_entry *e)
{
	struct calls *c = ctx;
	c->removed++;
	if (strncmp(e->path, c->prefix, strlen(c->prefix)) != 0)
		c->outside++;
}

static int on_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	(void)what;
	(void)err;
	struct calls *c = ctx;
	c->failed++;
	if (strncmp(e->path, c->prefix, strlen(c->prefix)) != 0)
		c->outside++;
	return 1;
}

static void test_detach_fail_then_finish(void **state)
{
	struct env *e = *state;
	char t[4096], id[FASTRM_DETACH_ID_SIZE];
	snprintf(t, sizeof t, "%s/tree", e->top);
	make_tree(t);
	assert_int_equal(fastrm_detach(AT_FDCWD, t, e->state, 0, id), 0);
	struct stat st;
	assert_int_equal(lstat(t, &st), -1);
	struct seen s = { 0 };
	assert_int_equal(fastrm_pending(e->state, see, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.id, id);
	assert_string_equal(s.path, t);
	assert_int_equal(s.active, 0);
	assert_int_equal(lstat(s.hidden, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_non_null(strstr(s.hidden, FASTRM_DETACH_PREFIX));

	/* held by another finisher */
	char rec[4200];
	snprintf(rec, sizeof rec, "%s/%s.rec", e->state, id);
	int rfd = open(rec, O_RDONLY | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(flock(rfd, LOCK_EX), 0);
	assert_int_equal(fastrm_finish(e->state, id, NULL, NULL), -EBUSY);
	struct seen held = { 0 };
	assert_int_equal(fastrm_pending(e->state, see, &held), 0);
	assert_int_equal(held.active, 1);
	close(rfd);

	/* one entry refused: kept, the record too, the manifest says so */
	struct calls c = { .prefix = s.hidden };
	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = 2, .ctx = &c,
	                                .removed = on_removed, .failed = on_failed };
	refuse_name = "f3";
	int n = fastrm_finish(e->state, id, &o, NULL);
	refuse_name = NULL;
	assert_true(n >= 1);
	assert_int_equal(c.outside, 0);
	assert_true(c.failed >= 1);
	assert_int_equal(count_files(e->state, ".rec"), 1);
	char man[4200], buf[8192] = "";
	snprintf(man, sizeof man, "%s/%s.manifest", e->state, id);
	int mfd = open(man, O_RDONLY | O_CLOEXEC);
	assert_true(mfd >= 0);
	assert_true(read(mfd, buf, sizeof buf - 1) > 0);
	close(mfd);
	assert_non_null(strstr(buf, "\"outcome\":\"failed\""));
	assert_non_null(strstr(buf, "EACCES"));
	assert_non_null(strstr(buf, s.hidden));
	assert_non_null(strstr(buf, "\"outcome\":\"summary\""));

	/* finished: nothing left of it */
	assert_int_equal(fastrm_finish(e->state, NULL, NULL, NULL), 0);
	assert_int_equal(lstat(s.hidden, &st), -1);
	assert_int_equal(count_files(e->state, ".rec"), 0);
	assert_int_equal(count_files(e->state, ".manifest"), 0);
	assert_int_equal(count_files(e->state, ".progress"), 0);
}

static void test_crash_before_rename(void **state)
{
	struct env *e = *state;
	char t[4096], id[FASTRM_DETACH_ID_SIZE];
	snprintf(t, sizeof t, "%s/tree2", e->top);
	make_tree(t);
	assert_int_equal(fastrm_detach(AT_FDCWD, t, e->state, 0, id), 0);
	struct seen s = { 0 };
	assert_int_equal(fastrm_pending(e->state, see, &s), 0);
	/* as if the rename never happened: the tree back at its name */
	assert_int_equal(rename(s.hidden, t), 0);
	assert_int_equal(fastrm_finish(e->state, id, NULL, NULL), 0);
	assert_int_equal(count_files(e->state, ".rec"), 0);
	struct stat st;
	assert_int_equal(lstat(t, &st), 0); /* the tree is not touched */
	assert_int_equal(fastrm_finish(e->state, "nothex", NULL, NULL), -EINVAL);
	assert_int_equal(fastrm_finish(e->state, "0123456789abcdef", NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_detach_fail_then_finish),
		cmocka_unit_test(test_crash_before_rename),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
