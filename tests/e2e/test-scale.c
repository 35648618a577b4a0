/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frm -r at scale: a directory of 1,000,000 entries and a chain 100,000
 * directories deep, each removed completely, under a 32-fd limit (ulimit -n 32).
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

static int run_frm_as(const char *frm, const char *dir, const char *target,
                      const char *order, long as_limit)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (as_limit > 0) {
			struct rlimit as = { (rlim_t)as_limit, (rlim_t)as_limit };
			setrlimit(RLIMIT_AS, &as);
		}
		/* A tight fd limit: frm must not need fds in proportion to the
		 * depth or the width of the tree. */
		struct rlimit rl = { 32, 32 };
		setrlimit(RLIMIT_NOFILE, &rl);
		if (chdir(dir) < 0)
			_exit(127);
		if (order)
			execl(frm, "frm", "-r", "--memory=8M", order, "--", target,
			      (char *)NULL);
		else
			execl(frm, "frm", "-r", "--", target, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int run_frm(const char *frm, const char *dir, const char *target)
{
	return run_frm_as(frm, dir, target, NULL, 0);
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

	int tests = 2;
	fx_write_file(dfd, "sentinel", "must stay");

	/* each policy on 200,000 entries, in a 64 MiB address space (not
	 * under a sanitizer, whose shadow memory needs terabytes of it) */
	static const char *const orders[] = {
		"--order=directory", "--order=inode", "--order=chunked",
		"--order=global", "--order=gnulib", "--order=auto",
	};
	const char *san = getenv("FASTRM_SANITIZE");
	long limit = san && *san && strcmp(san, "none") != 0 ? 0 : 64L << 20;
	for (size_t k = 0; k < sizeof orders / sizeof orders[0]; k++) {
		fx_make_flat(dfd, "policy", 200000);
		int r = run_frm_as(frm, dir, "policy", orders[k], limit);
		int ok = r == 0 && gone(dfd, "policy") && !gone(dfd, "sentinel");
		printf("%s %s on 200000 entries%s\n", ok ? "ok" : "FAIL", orders[k],
		       limit ? " in 64 MiB of address space" : "");
		if (!ok) {
			fprintf(stderr, "%s: frm exit %d\n", orders[k], r);
			failures++;
			char *argv_rm[] = { "rm", "-rf", "--", "policy", NULL };
			if (fchdir(dfd) == 0)
				fx_run(argv_rm);
		}
		tests++;
	}

	/* wide */
	fx_make_flat(dfd, "wide", wide);
	int rc = run_frm(frm, dir, "wide");
	int ok = rc == 0 && gone(dfd, "wide") && !gone(dfd, "sentinel");
	printf("%s wide directory of %ld entries (frm exit %d)\n", ok ? "ok" : "FAIL",
	       wide, rc);
	failures += !ok;

	/* deep */
	fx_make_chain(dfd, "deep", deep, 1000);
	rc = run_frm(frm, dir, "deep");
	ok = rc == 0 && gone(dfd, "deep") && !gone(dfd, "sentinel");
	printf("%s chain %ld deep (frm exit %d)\n", ok ? "ok" : "FAIL", deep, rc);
	failures += !ok;
	close(dfd);
	fx_cleanup(dir);
	free(frm);
	printf("%d passed, %d failed\n", tests - failures, failures);
	return failures ? 1 : 0;
}
