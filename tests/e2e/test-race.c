/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Symlink and rename races: while frm removes a tree, an attacker process
 * keeps renaming directories inside it away and putting in their place
 * symlinks to a directory outside the tree (which holds sentinel files),
 * and swaps directories with files.  After every round, every sentinel
 * outside the tree must still exist.  Rounds run for each ordering policy,
 * for a remover on libfastrm's fts in its default (chdir) mode, and for
 * frm --finish of a detached tree (fastrm_detach() here, "tree" made a
 * symlink to its hidden name so that the attacker works in it).
 *
 * usage: test-race FRM [ROUNDS_PER_POLICY]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fastrm/detach.h>
#include <fastrm/fts.h>

#include "fixture.h"

#define NDIRS 12
#define NSENT 4

static void make_tree(int top)
{
	mkdirat(top, "tree", 0755);
	int t = openat(top, "tree", O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < NDIRS; i++) {
		char d[32];
		snprintf(d, sizeof d, "d%d", i);
		mkdirat(t, d, 0755);
		int s = openat(t, d, O_RDONLY | O_DIRECTORY);
		for (int j = 0; j < 6; j++) {
			char f[16];
			snprintf(f, sizeof f, "f%d", j);
			fx_write_file(s, f, "x");
		}
		mkdirat(s, "sub", 0755);
		int u = openat(s, "sub", O_RDONLY | O_DIRECTORY);
		fx_write_file(u, "g", "x");
		close(u);
		close(s);
	}
	close(t);
}

/* The attacker: until killed, replace directories of the tree with
 * symlinks to ../outside (or to the absolute path of it), and with
 * files, putting the real ones back now and then. */
static void attacker(int top, const char *outside, unsigned seed)
{
	int t = openat(top, "tree", O_RDONLY | O_DIRECTORY | O_PATH);
	for (;;) {
		seed = seed * 1103515245u + 12345u;
		int i = (int)((seed >> 8) % NDIRS);
		char d[32], moved[40];
		snprintf(d, sizeof d, "d%d", i);
		snprintf(moved, sizeof moved, "moved%d", i);
		switch ((seed >> 20) % 4) {
		case 0: /* directory -> symlink to outside (relative) */
			if (renameat(t, d, t, moved) == 0 &&
			    symlinkat("../outside", t, d) < 0) {
				/* the name was taken back: go on */
			}
			break;
		case 1: { /* subdirectory -> symlink to outside (absolute) */
			/* never through a symlink: the attacker must not move
			 * the sentinels into the tree itself */
			int dfd = openat(t, d, O_PATH | O_DIRECTORY | O_NOFOLLOW);
			if (dfd >= 0 && renameat(dfd, "sub", t, moved) == 0 &&
			    symlinkat(outside, dfd, "sub") < 0) {
				/* the name was taken back: go on */
			}
			if (dfd >= 0)
				close(dfd);
			break;
		}
		case 2: /* directory -> file */
			if (renameat(t, d, t, moved) == 0) {
				int fd = openat(t, d, O_CREAT | O_WRONLY, 0644);
				if (fd >= 0)
					close(fd);
			}
			break;
		case 3: /* put a directory back over the symlink or file */
			renameat2(t, moved, t, d, RENAME_EXCHANGE);
			break;
		}
	}
}

/* A program written against fts(3) in its default mode (it changes
 * directory; BSD fts was attacked there with symlink swaps): remove the
 * tree through fts_accpath, relative to the working directory.  Exit
 * status as frm's: 1 if anything could not be removed. */
static int default_mode_remover(void)
{
	/* about as slow as frm's start and per-entry work, so that the
	 * attacker runs during the walk */
	usleep(2000);
	char *roots[] = { "tree", NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL, NULL);
	if (!fts)
		return 1;
	int rc = 0;
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		usleep(20);
		switch (e->fts_info) {
		case FTS_D:
			break;
		case FTS_DP:
			rc |= rmdir(e->fts_accpath) < 0;
			break;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
		case FTS_DC:
			rc = 1;
			break;
		default:
			rc |= unlink(e->fts_accpath) < 0;
		}
	}
	rc |= errno != 0;
	fastrm_fts_close(fts);
	return rc;
}

static int sentinels_intact(int top)
{
	int ok = 1;
	for (int i = 0; i < NSENT; i++) {
		char p[64];
		struct stat sb;
		snprintf(p, sizeof p, "outside/s%d", i);
		ok &= fstatat(top, p, &sb, AT_SYMLINK_NOFOLLOW) == 0;
		snprintf(p, sizeof p, "outside/sub/s%d", i);
		ok &= fstatat(top, p, &sb, AT_SYMLINK_NOFOLLOW) == 0;
	}
	return ok;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char *frm = realpath(argv[1], NULL);
	int rounds = argc > 2 ? atoi(argv[2]) : 500;
	/* each policy walked serially (--jobs=1), and the worker pool: the
	 * default (--jobs=auto) and 16 workers */
	static const char *const orders[][2] = {
		{ "--order=directory", "--jobs=1" }, { "--order=inode", "--jobs=1" },
		{ "--order=chunked", "--jobs=1" },   { "--order=global", "--jobs=1" },
		{ "--order=gnulib", "--jobs=1" },    { "--order=auto", "--jobs=1" },
		{ "--order=auto", NULL },            { "--order=inode", "--jobs=16" },
		/* not frm: libfastrm's fts in its default (chdir) mode */
		{ "fts-default-mode", NULL },
		/* a detached tree, removed by frm --finish */
		{ "--finish", NULL },
	};
	char *dir = fx_mkdtemp();
	int top = open(dir, O_RDONLY | O_DIRECTORY);
	char outside[4200];
	snprintf(outside, sizeof outside, "%s/outside", dir);
	mkdirat(top, "outside", 0755);
	int o = openat(top, "outside", O_RDONLY | O_DIRECTORY);
	mkdirat(o, "sub", 0755);
	int os = openat(o, "sub", O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < NSENT; i++) {
		char s[16];
		snprintf(s, sizeof s, "s%d", i);
		fx_write_file(o, s, "sentinel");
		fx_write_file(os, s, "sentinel");
	}
	close(os);
	close(o);
	char state[4200];
	snprintf(state, sizeof state, "%s/state", dir);
	mkdirat(top, "state", 0700);

	int failed = 0, passed = 0;
	for (size_t k = 0; k < sizeof orders / sizeof orders[0]; k++) {
		int bad = 0, met = 0;
		char order[64];
		snprintf(order, sizeof order, "%s%s%s", orders[k][0],
		         orders[k][1] ? " " : "", orders[k][1] ? orders[k][1] : "");
		bool finish = strcmp(orders[k][0], "--finish") == 0;
		char hidden[64] = "";
		for (int r = 0; r < rounds && !bad; r++) {
			make_tree(top);
			if (finish) {
				char id[FASTRM_DETACH_ID_SIZE];
				if (fastrm_detach(top, "tree", state, 0, id) != 0) {
					fprintf(stderr, "round %d: detach failed\n", r);
					return 1;
				}
				snprintf(hidden, sizeof hidden, "%s%s", FASTRM_DETACH_PREFIX, id);
				if (symlinkat(hidden, top, "tree") != 0)
					return 1;
			}
			pid_t att = fork();
			if (att == 0)
				attacker(top, outside, (unsigned)(r * 7919 + (int)k));
			pid_t rm = fork();
			if (rm == 0) {
				if (fchdir(top) < 0)
					_exit(127);
				int null = open("/dev/null", O_WRONLY);
				dup2(null, 2);
				/* FASTRM_RACE_NAIVE names a remover that follows
				 * symlinks, to show that the attack does bite */
				const char *naive = getenv("FASTRM_RACE_NAIVE");
				if (naive)
					execlp("sh", "sh", "-c", naive, (char *)NULL);
				if (strcmp(orders[k][0], "fts-default-mode") == 0)
					_exit(default_mode_remover());
				if (finish) {
					setenv("FASTRM_STATE_DIR", state, 1);
					execl(frm, "frm", "--finish", (char *)NULL);
					_exit(127);
				}
				char *args[7], **a = args;
				*a++ = "frm";
				*a++ = "-rf";
				*a++ = (char *)orders[k][0];
				if (orders[k][1])
					*a++ = (char *)orders[k][1];
				*a++ = "--";
				*a++ = "tree";
				*a = NULL;
				execv(frm, args);
				_exit(127);
			}
			int st;
			waitpid(rm, &st, 0);
			kill(att, SIGKILL);
			waitpid(att, NULL, 0);
			met += WIFEXITED(st) && WEXITSTATUS(st) == 1;
			if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
				fprintf(stderr, "%s round %d: frm did not exit normally (%d)\n",
				        order, r, st);
				bad = 1;
			}
			if (!sentinels_intact(top)) {
				fprintf(stderr, "%s round %d: a sentinel outside the tree is gone\n",
				        order, r);
				bad = 1;
			}
			/* Clear what is left (GNU rm never follows symlinks);
			 * a detached tree's record too */
			if (fchdir(top) == 0) {
				char *rm_argv[] = { "rm", "-rf", "--", "tree", hidden, NULL };
				if (!finish)
					rm_argv[4] = NULL;
				fx_run(rm_argv);
				char *st_argv[] = { "sh", "-c", "rm -f -- state/*", NULL };
				if (finish)
					fx_run(st_argv);
			}
			if (!sentinels_intact(top)) {
				fprintf(stderr, "test cleanup removed a sentinel?\n");
				return 1;
			}
		}
		/* exit status 1: frm ran into the attacker's changes and said so */
		printf("%s %d attack rounds with %s (the remover met the attack in %d)\n",
		       bad ? "FAIL" : "ok", rounds, order, met);
		bad ? failed++ : passed++;
	}
	if (chdir("/") < 0)
		return 1;
	close(top);
	fx_cleanup(dir);
	free(frm);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
