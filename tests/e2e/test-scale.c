/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frm -r at scale: a directory of 1,000,000 entries and a chain 100,000
 * directories deep, each removed completely, under a 64-fd limit.
 * usage: test-scale FRM */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

static int run_frm(const char *frm, const char *dir, const char *target)
{
	pid_t pid = fork();
	if (pid == 0) {
		/* A tight fd limit: frm must not need fds in proportion to the
		 * depth or the width of the tree. */
		struct rlimit rl = { 64, 64 };
		setrlimit(RLIMIT_NOFILE, &rl);
		if (chdir(dir) < 0)
			_exit(127);
		execl(frm, "frm", "-r", "--", target, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int gone(int dfd, const char *name)
{
	struct stat sb;
	return fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char *frm = realpath(argv[1], NULL);
	if (!frm)
		return 2;
	long wide = getenv("FASTRM_SCALE_WIDE") ? atol(getenv("FASTRM_SCALE_WIDE")) : 1000000;
	long deep = getenv("FASTRM_SCALE_DEEP") ? atol(getenv("FASTRM_SCALE_DEEP")) : 100000;
	char *dir = fx_mkdtemp();
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	int failures = 0;

	/* wide */
	mkdirat(dfd, "wide", 0755);
	int w = openat(dfd, "wide", O_RDONLY | O_DIRECTORY);
	for (long i = 0; i < wide; i++) {
		char name[32];
		snprintf(name, sizeof name, "file-%ld", i);
		int fd = openat(w, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			perror("create");
			return 1;
		}
		close(fd);
	}
	close(w);
	fx_write_file(dfd, "sentinel", "must stay");
	int rc = run_frm(frm, dir, "wide");
	if (rc != 0 || !gone(dfd, "wide") || gone(dfd, "sentinel")) {
		fprintf(stderr, "wide: frm exit %d, wide %s\n", rc,
		        gone(dfd, "wide") ? "gone" : "still there");
		failures++;
	}
	printf("%s wide directory of %ld entries\n", failures ? "FAIL" : "ok", wide);

	/* deep */
	mkdirat(dfd, "deep", 0755);
	int fd = openat(dfd, "deep", O_RDONLY | O_DIRECTORY);
	for (long i = 0; i < deep; i++) {
		mkdirat(fd, "d", 0755);
		if (i % 1000 == 0)
			fx_write_file(fd, "f", "");
		int n = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = n;
	}
	close(fd);
	int before = failures;
	rc = run_frm(frm, dir, "deep");
	if (rc != 0 || !gone(dfd, "deep") || gone(dfd, "sentinel")) {
		fprintf(stderr, "deep: frm exit %d\n", rc);
		failures++;
	}
	printf("%s chain %ld deep\n", failures > before ? "FAIL" : "ok", deep);
	close(dfd);
	fx_cleanup(dir);
	free(frm);
	printf("%d passed, %d failed\n", 2 - failures, failures);
	return failures ? 1 : 0;
}
