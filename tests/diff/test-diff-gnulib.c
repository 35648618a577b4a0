/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Differential test: libfastrm against gnulib's fts on random trees.
 *
 * For every tree and flag set, both walks must report the same sequence of
 * (info, level, errno, path, accpath, what accpath reaches, fts_statp)
 * with a name comparator, and the same multiset without one.
 *
 * Trees hold files, empty and nested directories, symlinks to files, to
 * directories (including cycles) and to nowhere, FIFOs, unreadable
 * directories, and (in some trees) a chain 10,000 directories deep.  When
 * run as root, each comparison runs in a child that drops to uid 65534 so
 * that mode-0 directories really are unreadable, and in a private mount
 * namespace with a tmpfs mounted inside the tree (for FTS_XDEV).
 *
 * Environment: FASTRM_DIFF_TREES (default 200), FASTRM_DIFF_SEED.
 */
#define _GNU_SOURCE
#include "fixture.h"
#include "walk.h"

#include <fastrm/fts.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534
#define CHAIN_DEPTH 10000

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

static void mkname(char *buf, size_t len, unsigned *seed, int i)
{
	static const char *const stems[] = { "a", "b c", ".hid", "x-y", "Z",
		                             "dd", "e.f", "g_h" };
	snprintf(buf, len, "%s%d", stems[rnd(seed) % 8], i);
}

static void gen(int dfd, int depth, unsigned *seed)
{
	int n = (int)(rnd(seed) % 8);
	for (int i = 0; i < n; i++) {
		char name[32], link[40];
		mkname(name, sizeof name, seed, i);
		unsigned k = rnd(seed) % 100;
		if (k < 40) {
			fx_write_file(dfd, name, "data");
			if (rnd(seed) % 4 == 0) {
				snprintf(link, sizeof link, "l%s", name);
				if (symlinkat(name, dfd, link) < 0)
					abort();
			}
		} else if (k < 65 && depth < 4) {
			if (mkdirat(dfd, name, 0755) < 0)
				abort();
			int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY);
			gen(sub, depth + 1, seed);
			close(sub);
		} else if (k < 70) {
			if (mkdirat(dfd, name, 0755) < 0)
				abort();
		} else if (k < 74) {
			if (symlinkat("..", dfd, name) < 0)
				abort();
		} else if (k < 77) {
			if (symlinkat(".", dfd, name) < 0)
				abort();
		} else if (k < 84) {
			if (symlinkat("nowhere", dfd, name) < 0)
				abort();
		} else if (k < 88) {
			if (mkfifoat(dfd, name, 0644) < 0)
				abort();
		} else if (k < 94) {
			/* Unreadable (for a non-root walker) and not empty. */
			if (mkdirat(dfd, name, 0755) < 0)
				abort();
			int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY);
			fx_write_file(sub, "inside", "x");
			close(sub);
			if (fchmodat(dfd, name, (rnd(seed) & 1) ? 0 : 0311, 0) < 0)
				abort();
		} else {
			fx_write_file(dfd, name, "");
		}
	}
}

struct flagset {
	int opts;
	const char *name;
};

static const struct flagset sets[] = {
	{ FTS_PHYSICAL, "PHYSICAL" },
	{ FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD, "PHYSICAL|NOSTAT|CWDFD" },
	{ FTS_LOGICAL, "LOGICAL" },
	{ FTS_PHYSICAL | FTS_COMFOLLOW, "PHYSICAL|COMFOLLOW" },
	{ FTS_PHYSICAL | FTS_XDEV, "PHYSICAL|XDEV" },
	{ FTS_PHYSICAL | FTS_SEEDOT, "PHYSICAL|SEEDOT" },
	/* and the flags of GNU rm --one-file-system, FTS_NOCHDIR, a logical
	 * walk without stat */
	{ FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD | FTS_XDEV, "rm -r --one-file-system" },
	{ FTS_PHYSICAL | FTS_NOCHDIR, "PHYSICAL|NOCHDIR" },
	{ FTS_LOGICAL | FTS_NOSTAT, "LOGICAL|NOSTAT" },
};
#define NSETS (sizeof sets / sizeof sets[0])

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Split @buf into lines; sort them if @sort. */
static char **lines(char *buf, size_t *n, int sort)
{
	size_t cap = 64, k = 0;
	char **v = malloc(cap * sizeof *v);
	for (char *s = buf; *s;) {
		char *e = strchr(s, '\n');
		if (e)
			*e = '\0';
		if (k == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		v[k++] = s;
		if (!e)
			break;
		s = e + 1;
	}
	if (sort)
		qsort(v, k, sizeof *v, cmp_line);
	*n = k;
	return v;
}

static int compare(const char *what, char *a, char *b, int sorted)
{
	size_t na, nb;
	char **la = lines(a, &na, !sorted), **lb = lines(b, &nb, !sorted);
	int bad = 0;
	for (size_t i = 0; i < na || i < nb; i++) {
		const char *x = i < na ? la[i] : "(none)";
		const char *y = i < nb ? lb[i] : "(none)";
		if (strcmp(x, y) != 0) {
			fprintf(stderr, "%s: line %zu differs\n  fastrm: %.300s\n  gnulib: %.300s\n",
			        what, i, x, y);
			bad = 1;
			break;
		}
	}
	free(la);
	free(lb);
	return bad;
}

static char *run_walk(int (*walk)(char *const *, int, int, FILE *),
                      char *const *roots, int opts, int sorted)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	walk(roots, opts, sorted, f);
	fclose(f);
	return buf;
}

struct env {
	const char *dir;
	int drop;      /* run as NOBODY */
	int mount;     /* mount a tmpfs at t/mnt in a private namespace */
	int chain;     /* tree has the deep chain */
};

/* In a child: set up, walk with both, compare every flag set.  Returns the
 * number of flag sets that disagreed, 0..NSETS, or 100 on setup failure. */
static int child(const struct env *ev, char *const *roots, const char *tag)
{
	if (ev->mount) {
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			return 100;
		char mp[4096];
		snprintf(mp, sizeof mp, "%s/t/mnt", ev->dir);
		if (mount("fastrm-test", mp, "tmpfs", 0,
		          "size=1m,mode=755,uid=65534,gid=65534") < 0)
			return 100;
		int m = open(mp, O_RDONLY | O_DIRECTORY);
		fx_write_file(m, "on-tmpfs", "x");
		mkdirat(m, "sub", 0755);
		if (fchownat(m, "on-tmpfs", NOBODY, NOBODY, 0) < 0 ||
		    fchownat(m, "sub", NOBODY, NOBODY, 0) < 0)
			return 100;
		close(m);
	}
	if (chdir(ev->dir) < 0)
		return 100;
	if (ev->drop && (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	                 setresuid(NOBODY, NOBODY, NOBODY) < 0))
		return 100;
	int bad = 0;
	for (size_t s = 0; s < NSETS; s++) {
		/* gnulib reaches files through full paths in these modes and
		 * fails past PATH_MAX; libfastrm has no such limit. */
		if (ev->chain && (sets[s].opts & (FTS_LOGICAL | FTS_NOCHDIR)))
			continue;
		for (int sorted = 1; sorted >= 0; sorted--) {
			char what[256];
			snprintf(what, sizeof what, "%s %s %s", tag, sets[s].name,
			         sorted ? "sorted" : "unsorted");
			char *a = run_walk(walk_fastrm, roots, sets[s].opts, sorted);
			char *b = run_walk(walk_gnulib, roots, sets[s].opts, sorted);
			int d = compare(what, a, b, sorted);
			bad += d;
			free(a);
			free(b);
			if (d)
				break;
		}
	}
	return bad;
}

static int can_mount_ns(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWNS) == 0 &&
		      mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 ? 0 : 1);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
	const char *e = getenv("FASTRM_DIFF_TREES");
	int ntrees = e ? atoi(e) : 200;
	e = getenv("FASTRM_DIFF_SEED");
	unsigned seed0 = e ? (unsigned)strtoul(e, NULL, 0) : 20261130u;
	int root = geteuid() == 0;
	int nsok = root && can_mount_ns();

	if (!root)
		printf("# not root: unreadable directories are readable by the walker's owner only as far as modes allow; no tmpfs for FTS_XDEV\n");
	else if (!nsok)
		printf("# cannot make a mount namespace: FTS_XDEV without a mount point\n");

	int failures = 0, compared = 0;
	for (int t = 0; t < ntrees; t++) {
		unsigned seed = seed0 + (unsigned)t * 7919u;
		char *dir = fx_mkdtemp();
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		if (mkdirat(dfd, "t", 0755) < 0)
			abort();
		int tfd = openat(dfd, "t", O_RDONLY | O_DIRECTORY);
		gen(tfd, 0, &seed);
		struct env ev = { dir, root, nsok && t % 3 == 0, t % 50 == 7 };
		if (ev.mount && mkdirat(tfd, "mnt", 0755) < 0)
			abort();
		if (ev.chain)
			fx_make_chain(tfd, "chain", CHAIN_DEPTH, 0);
		close(tfd);
		if (symlinkat("t", dfd, "ln") < 0)
			abort();
		fx_write_file(dfd, "file", "x");
		close(dfd);

		char *roots_sets[4][6] = {
			{ "t", NULL },
			{ "t", "missing", "ln", "file", NULL },
			{ "t/", "ln/", "t//", "", NULL },
			{ "ln", "./t", NULL },
		};
		char *const *roots = roots_sets[t % 4];
		if (root) {
			char *chown_argv[] = { "chown", "-R", "-h", "65534:65534",
				               "--", dir, NULL };
			if (fx_run(chown_argv) != 0)
				abort();
		}
		char tag[64];
		snprintf(tag, sizeof tag, "tree %d (seed %u)", t, seed0 + (unsigned)t * 7919u);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			_exit(child(&ev, roots, tag));
		int st;
		waitpid(pid, &st, 0);
		int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 200;
		if (rc == 100) {
			fprintf(stderr, "%s: could not set up the walker's child\n", tag);
			failures++;
		} else if (rc != 0) {
			failures++;
		}
		compared++;
		fx_cleanup(dir);
	}
	printf("%d trees compared, %d with differences\n", compared, failures);
	printf("%d passed, %d failed\n", compared - failures, failures);
	return failures ? 1 : 0;
}
