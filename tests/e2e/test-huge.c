/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frm -r at the sizes of the safety issue: a directory of 5,000,000
 * entries and a chain 1,000,000 directories deep, each removed with at
 * most 32 file descriptors and one worker, then with 64 and --jobs=16
 * (which fits 4 workers in them), a 256 KiB stack limit, its peak memory
 * measured (wait4) and bounded:
 *   - the wide directory with the bounded global inode order and a 16 MiB
 *     budget: peak RSS under budget + 4 MiB (a full sort of 5,000,000 names
 *     would take over 100 MiB), in a 64 MiB address space;
 *   - the chain: memory that grows with depth is the FTSENT of every
 *     directory on the path (fts keeps ancestors valid for fts_parent),
 *     asserted under 600 bytes per level; with a file at every level
 *     (a tenth as deep), under 1000 bytes per level.
 * The default tmpfs has too few inodes for this, so the test mounts its own
 * (nr_inodes=0) in a private mount namespace: it needs root and skips
 * without.  FASTRM_HUGE_WIDE / FASTRM_HUGE_DEEP change the sizes.
 * usage: test-huge FRM
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

#define BUDGET_MIB 16

static bool sanitized(void)
{
	const char *san = getenv("FASTRM_SANITIZE");
	return san && *san && strcmp(san, "none") != 0;
}

/* Run frm in @dir with @nfds fds and a 256 KiB stack (and a 64 MiB address
 * space when @as_limit); returns its exit status, its peak RSS in @rss_kib. */
static int run_frm(const char *frm, const char *dir, char *const args[],
                   rlim_t nfds, bool as_limit, long *rss_kib)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit fds = { nfds, nfds }, stack = { 256 << 10, 256 << 10 };
		setrlimit(RLIMIT_NOFILE, &fds);
		setrlimit(RLIMIT_STACK, &stack);
		if (as_limit) {
			struct rlimit as = { 64 << 20, 64 << 20 };
			setrlimit(RLIMIT_AS, &as);
		}
		if (chdir(dir) < 0)
			_exit(127);
		execv(frm, args);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	*rss_kib = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool gone(int dfd, const char *name)
{
	struct stat sb;
	return fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char *frm = realpath(argv[1], NULL);
	if (!frm)
		return 2;
	if (geteuid() != 0) {
		printf("SKIP: needs root to mount a tmpfs with room for the inodes\n");
		return FX_SKIP;
	}
	long wide = getenv("FASTRM_HUGE_WIDE") ? atol(getenv("FASTRM_HUGE_WIDE")) : 5000000;
	long deep = getenv("FASTRM_HUGE_DEEP") ? atol(getenv("FASTRM_HUGE_DEEP")) : 1000000;

	char *dir = fx_mkdtemp();
	char mnt[4096];
	snprintf(mnt, sizeof mnt, "%s/mnt", dir);
	if (mkdir(mnt, 0755) < 0)
		abort();
	/* A private mount namespace: the tmpfs and what is in it vanish with
	 * this process, whatever happens. */
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("fastrm-test", mnt, "tmpfs", 0, "nr_inodes=0,size=1g,mode=0755") < 0) {
		printf("SKIP: cannot mount a tmpfs in a private namespace: %s\n",
		       strerror(errno));
		fx_cleanup(dir);
		return FX_SKIP;
	}
	int dfd = open(mnt, O_RDONLY | O_DIRECTORY);
	fx_write_file(dfd, "sentinel", "must stay");
	int failures = 0;
	long rss;
	bool limit = !sanitized();

	/* one worker (32 fds), then --jobs=16 (64 fds hold 4 workers) */
	static const struct { const char *jobs; rlim_t fds; } runs[] = {
		{ "--jobs=1", 32 }, { "--jobs=16", 64 },
	};
	for (size_t r = 0; r < 2; r++) {
		/* wide: the bounded global order in a 16 MiB budget */
		fx_make_flat(dfd, "wide", wide);
		char budget[32];
		snprintf(budget, sizeof budget, "--memory=%dM", BUDGET_MIB);
		char *wide_args[] = { "frm", "-r", "--order=global", budget,
		                      (char *)runs[r].jobs, "--", "wide", NULL };
		int rc = run_frm(frm, mnt, wide_args, runs[r].fds, limit, &rss);
		bool ok = rc == 0 && gone(dfd, "wide") && !gone(dfd, "sentinel");
		if (limit)
			ok = ok && rss < (BUDGET_MIB + 4) * 1024;
		printf("%s %ld entries, --order=global %s %s, %ld fds: exit %d, peak RSS %ld KiB%s\n",
		       ok ? "ok  " : "FAIL", wide, budget, runs[r].jobs, (long)runs[r].fds,
		       rc, rss,
		       limit ? " (bound: budget + 4 MiB, in 64 MiB of address space)"
		             : " (not bounded under a sanitizer)");
		failures += !ok;

		/* deep */
		fx_make_chain(dfd, "deep", deep, 10000);
		char *deep_args[] = { "frm", "-r", (char *)runs[r].jobs, "--", "deep", NULL };
		rc = run_frm(frm, mnt, deep_args, runs[r].fds, false, &rss);
		ok = rc == 0 && gone(dfd, "deep") && !gone(dfd, "sentinel");
		double per_level = (double)rss * 1024 / (double)deep;
		if (limit)
			ok = ok && per_level < 600;
		printf("%s chain %ld deep %s, %ld fds: exit %d, peak RSS %ld KiB, %.0f bytes per level%s\n",
		       ok ? "ok  " : "FAIL", deep, runs[r].jobs, (long)runs[r].fds, rc, rss,
		       per_level, limit ? " (bound: 600)" : " (not bounded under a sanitizer)");
		failures += !ok;
	}

	/* a chain with a file beside each subdirectory: the entries a level
	 * has passed are freed as the walk goes on (it was 4.5 KiB a level
	 * when every level kept its batch's chunks) */
	long deep1 = deep / 10;
	fx_make_chain(dfd, "deep1", deep1, 1);
	char *deep1_args[] = { "frm", "-r", "--jobs=1", "--", "deep1", NULL };
	int rc = run_frm(frm, mnt, deep1_args, 32, false, &rss);
	bool ok = rc == 0 && gone(dfd, "deep1") && !gone(dfd, "sentinel");
	double per_level = (double)rss * 1024 / (double)deep1;
	if (limit)
		ok = ok && per_level < 1000;
	printf("%s chain %ld deep, a file at every level, --jobs=1: exit %d, peak RSS %ld KiB, "
	       "%.0f bytes per level%s\n", ok ? "ok  " : "FAIL", deep1, rc, rss, per_level,
	       limit ? " (bound: 1000)" : " (not bounded under a sanitizer)");
	failures += !ok;

	close(dfd);
	if (umount2(mnt, MNT_DETACH) < 0)
		perror("umount");
	fx_cleanup(dir);
	free(frm);
	printf("%d passed, %d failed\n", 5 - failures, failures);
	return failures ? 1 : 0;
}
