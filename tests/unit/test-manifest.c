/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The outcome manifest's records (lib/manifest.c): JSON strings and their
 * escapes (bytes that are not UTF-8 as \udcXX, as Python's decoder judges
 * them), the page rule (no record that fits a page crosses a page
 * boundary of the file), the NUL format, the failures-only filter, the
 * summary's counts, and a write error reported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fastrm/manifest.h"
#include "fixture.h"

/* The whole of file @fd, NUL-terminated (*@len: its length). */
static char *slurp(int fd, size_t *len)
{
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	char *b = malloc((size_t)st.st_size + 1);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	b[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return b;
}

static int temp_file(void)
{
	char name[] = "/tmp/fastrm-manifest-XXXXXX";
	int fd = mkstemp(name);
	assert_true(fd >= 0);
	unlink(name);
	return fd;
}

/* The JSON of one record of @path. */
static char *one_record(const char *path)
{
	int fd = temp_file();
	struct fastrm_manifest *m = fastrm_manifest_new(fd, FASTRM_MANIFEST_JSON, 0);
	assert_non_null(m);
	assert_int_equal(fastrm_manifest_add(m, path, S_IFREG, FASTRM_OUTCOME_REMOVED, 0,
	                                     NULL), 0);
	assert_int_equal(fastrm_manifest_free(m), 0);
	size_t len;
	char *b = slurp(fd, &len);
	close(fd);
	return b;
}

static void expect_path(const char *path, const char *json)
{
	char *b = one_record(path);
	char want[512];
	snprintf(want, sizeof want,
	         "{\"path\":\"%s\",\"type\":\"file\",\"outcome\":\"removed\"}\n", json);
	assert_string_equal(b, want);
	free(b);
}

static void test_escapes(void **state)
{
	(void)state;
	expect_path("plain/x.c", "plain/x.c");
	expect_path("q\"b\\", "q\\\"b\\\\");
	expect_path("n\nt\tr\r\x01\x1f\x7f", "n\\nt\\tr\\r\\u0001\\u001f\x7f");
	/* valid UTF-8, 2 to 4 bytes: as it is */
	expect_path("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* not UTF-8: a byte each (overlong, surrogate, above U+10FFFF, cut
	 * short, a stray continuation, 0xff) */
	expect_path("\xc0\x80", "\\udcc0\\udc80");
	expect_path("\xed\xa0\x80", "\\udced\\udca0\\udc80");
	expect_path("\xf4\x90\x80\x80", "\\udcf4\\udc90\\udc80\\udc80");
	expect_path("a\xc3", "a\\udcc3");
	expect_path("\x80z", "\\udc80z");
	expect_path("\xff\xfe", "\\udcff\\udcfe");
	expect_path("\xe2\x82" "A", "\\udce2\\udc82A");
}

/* Records of lengths from 1 to 5,000 bytes: those that fit a page start
 * and end in one; every line is a whole record. */
static void check_pages(int format)
{
	int fd = temp_file();
	/* start off a page boundary, as a file appended to would */
	assert_int_equal(write(fd, "{}\n", 3), 3);
	struct fastrm_manifest *m = fastrm_manifest_new(fd, format, 0);
	assert_non_null(m);
	unsigned seed = 46;
	char path[6000];
	size_t n = 3000;
	for (size_t i = 0; i < n; i++) {
		size_t len = 1 + (size_t)(rand_r(&seed) % 400);
		if (i % 97 == 0)
			len = 3500 + (size_t)(rand_r(&seed) % 1500); /* some near or over a page */
		memset(path, 'a' + (int)(i % 26), len);
		path[len] = '\0';
		assert_int_equal(fastrm_manifest_add(m, path, S_IFDIR, FASTRM_OUTCOME_FAILED,
		                                     EACCES, "rmdir"), 0);
	}
	assert_int_equal(fastrm_manifest_finish(m, 1), 0);
	assert_int_equal(fastrm_manifest_free(m), 0);
	size_t len;
	char *b = slurp(fd, &len);
	close(fd);
	char sep = format == FASTRM_MANIFEST_JSON ? '\n' : '\0';
	size_t records = 0, crossed = 0, big = 0;
	for (size_t at = 3; at < len;) {
		char *end = memchr(b + at, sep, len - at);
		assert_non_null(end);
		size_t e = (size_t)(end - b); /* the separator's offset */
		size_t start = at;
		if (format == FASTRM_MANIFEST_JSON) {
			/* padding: spaces after the object, on its line */
			size_t last = e;
			while (last > start && b[last - 1] == ' ')
				last--;
			assert_true(last > start);
			assert_int_equal(b[start], '{');
			assert_int_equal(b[last - 1], '}');
		} else if (e == start) {
			at = e + 1; /* an empty record: padding */
			continue;
		}
		records++;
		size_t rec_len = e + 1 - start;
		if (rec_len > 4096)
			big++;
		else if (start / 4096 != e / 4096)
			crossed++;
		at = e + 1;
	}
	assert_int_equal(records, n + 1); /* and the summary */
	assert_int_equal(crossed, 0);
	assert_true(big > 0);
	free(b);
}

static void test_pages_json(void **state)
{
	(void)state;
	check_pages(FASTRM_MANIFEST_JSON);
}

static void test_pages_nul(void **state)
{
	(void)state;
	check_pages(FASTRM_MANIFEST_NUL);
}

static void test_nul_format_and_summary(void **state)
{
	(void)state;
	int fd = temp_file();
	struct fastrm_manifest *m = fastrm_manifest_new(fd, FASTRM_MANIFEST_NUL, 0);
	assert_non_null(m);
	assert_int_equal(fastrm_manifest_set_base(m, "top"), 0);
	fastrm_manifest_add(m, "./a\tb\n", S_IFREG, FASTRM_OUTCOME_REMOVED, 0, NULL);
	fastrm_manifest_add(m, "./l", S_IFLNK, FASTRM_OUTCOME_REMOVED, 0, NULL);
	fastrm_manifest_add(m, "./d/x", S_IFREG, FASTRM_OUTCOME_FAILED, EACCES, "unlink");
	fastrm_manifest_add(m, "./d", S_IFDIR, FASTRM_OUTCOME_KEPT, 0, NULL);
	fastrm_manifest_add(m, ".", S_IFDIR, FASTRM_OUTCOME_KEPT, 0, "excluded");
	fastrm_manifest_add(m, "other", 0, FASTRM_OUTCOME_PLANNED, 0, NULL);
	assert_int_equal(fastrm_manifest_finish(m, 1), 0);
	fastrm_manifest_free(m);
	size_t len;
	char *b = slurp(fd, &len);
	close(fd);
	const char *want[] = {
		"removed\tfile\t-\ttop/a\tb\n", "removed\tsymlink\t-\ttop/l",
		"failed\tfile\tEACCES\ttop/d/x", "kept\tdir\t-\ttop/d",
		"kept\tdir\t-\ttop", "planned\tunknown\t-\tother",
	};
	size_t at = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		assert_string_equal(b + at, want[i]);
		at += strlen(want[i]) + 1;
	}
	const char *sum =
		"summary\t{\"outcome\":\"summary\",\"removed\":2,\"failed\":1,\"kept\":2,"
		"\"planned\":1,\"removed_by_type\":{\"file\":1,\"symlink\":1},"
		"\"planned_by_type\":{\"unknown\":1},\"failed_by_errno\":{\"EACCES\":1},"
		"\"bytes_freed\":0,\"elapsed_s\":"; /* then the time */
	assert_memory_equal(b + at, sum, strlen(sum));
	assert_non_null(strstr(b + at, ",\"exit_status\":1}"));
	assert_int_equal(b[len - 1], '\0');
	free(b);
}

static void test_failures_only(void **state)
{
	(void)state;
	int fd = temp_file();
	struct fastrm_manifest *m =
		fastrm_manifest_new(fd, FASTRM_MANIFEST_JSON, FASTRM_MANIFEST_FAILURES);
	assert_non_null(m);
	fastrm_manifest_add(m, "gone", S_IFREG, FASTRM_OUTCOME_REMOVED, 0, NULL);
	fastrm_manifest_add(m, "d/x", S_IFREG, FASTRM_OUTCOME_FAILED, EPERM, "unlink");
	fastrm_manifest_add(m, "d", S_IFDIR, FASTRM_OUTCOME_KEPT, 0, NULL);
	fastrm_manifest_finish(m, 1);
	fastrm_manifest_free(m);
	size_t len;
	char *b = slurp(fd, &len);
	close(fd);
	assert_null(strstr(b, "\"gone\""));
	assert_non_null(strstr(b, "{\"path\":\"d/x\",\"type\":\"file\",\"outcome\":\"failed\","
	                          "\"errno\":\"EPERM\",\"op\":\"unlink\"}\n"));
	assert_non_null(strstr(b, "{\"path\":\"d\",\"type\":\"dir\",\"outcome\":\"kept\","
	                          "\"reason\":\"below\"}\n"));
	/* counted all the same */
	assert_non_null(strstr(b, "\"removed\":1,\"failed\":1,\"kept\":1"));
	free(b);
}

static void test_write_error(void **state)
{
	(void)state;
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		skip();
	struct fastrm_manifest *m = fastrm_manifest_new(fd, FASTRM_MANIFEST_JSON, 0);
	assert_non_null(m);
	fastrm_manifest_add(m, "x", S_IFREG, FASTRM_OUTCOME_REMOVED, 0, NULL);
	assert_int_equal(fastrm_manifest_finish(m, 0), -ENOSPC);
	/* and every call after says so */
	assert_int_equal(fastrm_manifest_add(m, "y", S_IFREG, FASTRM_OUTCOME_REMOVED, 0,
	                                     NULL), -ENOSPC);
	assert_int_equal(fastrm_manifest_free(m), -ENOSPC);
	close(fd);
	assert_null(fastrm_manifest_new(-1, FASTRM_MANIFEST_JSON, 0));
	assert_null(fastrm_manifest_new(1, 7, 0));
	assert_null(fastrm_manifest_new(1, FASTRM_MANIFEST_JSON, 0x100));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_pages_json),
		cmocka_unit_test(test_pages_nul),
		cmocka_unit_test(test_nul_format_and_summary),
		cmocka_unit_test(test_failures_only),
		cmocka_unit_test(test_write_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
