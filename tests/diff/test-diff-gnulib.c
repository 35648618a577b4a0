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
 * directories, and (in trees 7, 107, ...) a chain 2,100 directories deep:
 * its paths pass PATH_MAX (4,096 bytes) at level 2,048.  (Deeper costs
 * little more here, the paths beyond PATH_MAX failing at once; the first
 * 2,048 levels cost time quadratic in the depth, some 40 s a tree: so two
 * trees of 200 have it.  Deeper trees are unit.deep's and e2e.huge's.)
 * When run as root, each comparison runs in a child that drops to uid 65534 so
 * that mode-0 directories really are unreadable, and in a private mount
 * namespace with a tmpfs mounted inside the tree (for FTS_XDEV and
 * FTS_MOUNT).  Built once against the gnulib package's fts (Debian 12:
 * gnulib of 2023-02) and, given a gnulib tree (-Dgnulib_src), once more
 * against that tree's fts, with FTS_MOUNT's flag sets (GNULIB_FTS_MOUNT).
 *
 * Environment: FASTRM_DIFF_TREES (default 200), FASTRM_DIFF_SEED,
 * FASTRM_DIFF_FIRST (the first tree's number, to rerun one).
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
#define CHAIN_DEPTH 2100

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
			/* Unreadable, unsearchable or both (for a non-root
			 * walker), and not empty. */
			if (mkdirat(dfd, name, 0755) < 0)
				abort();
			int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY);
			fx_write_file(sub, "inside", "x");
			close(sub);
			static const mode_t closed[] = { 0, 0311, 0644 };
			if (fchmodat(dfd, name, closed[rnd(seed) % 3], 0) < 0)
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
	{ FTS_PHYSICAL | FTS_NOSTAT, "PHYSICAL|NOSTAT" },
	{ FTS_LOGICAL | FTS_CWDFD, "LOGICAL|CWDFD" },
#ifdef GNULIB_FTS_MOUNT
	/* gnulib since 2025-10 (find -mount): built against a gnulib tree
	 * (-Dgnulib_src), whose header has FTS_MOUNT */
	{ FTS_PHYSICAL | FTS_MOUNT, "PHYSICAL|MOUNT" },
	{ FTS_PHYSICAL | FTS_MOUNT | FTS_NOSTAT | FTS_CWDFD, "PHYSICAL|MOUNT|NOSTAT|CWDFD (find -mount)" },
	{ FTS_PHYSICAL | FTS_MOUNT | FTS_NOCHDIR, "PHYSICAL|MOUNT|NOCHDIR" },
	{ FTS_LOGICAL | FTS_MOUNT, "LOGICAL|MOUNT" },
	{ FTS_PHYSICAL | FTS_MOUNT | FTS_SEEDOT | FTS_DEFER_STAT, "PHYSICAL|MOUNT|SEEDOT|DEFER_STAT" },
	{ FTS_PHYSICAL | FTS_MOUNT | FTS_COMFOLLOW, "PHYSICAL|MOUNT|COMFOLLOW" },
#endif
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

static char *run_walk(int (*walk)(char *const *, const struct walk *, FILE *),
                      char *const *roots, const struct walk *w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	walk(roots, w, f);
	fclose(f);
	return buf;
}

static const char *const mode_name[] = { "walk", "fts_children", "fts_set",
	                                 "remove" };

/* Walk with both as @w says and compare; returns 1 if they differ. */
static int compare_walks(const char *tag, char *const *roots, const struct walk *w,
                         const char *set_name)
{
	char what[256];
	snprintf(what, sizeof what, "%s %s %s %s", tag, set_name,
	         mode_name[w->mode], w->sorted ? "sorted" : "unsorted");
	char *a = run_walk(walk_fastrm, roots, w);
	char *b = run_walk(walk_gnulib, roots, w);
	int d = compare(what, a, b, w->sorted);
	free(a);
	free(b);
	return d;
}

struct env {
	const char *dir;
	int drop;      /* run as NOBODY */
	int mount;     /* mount a tmpfs at t/mnt in a private namespace */
};

static int drop_privileges(void)
{
	return setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	       setresuid(NOBODY, NOBODY, NOBODY) < 0 ? -1 : 0;
}

/* fts_children() where gnulib is wrong and libfastrm is not (both listed
 * in fastrm_fts(3)): with FTS_COMFOLLOW, after fts_children() on a root
 * that is a symlink to a directory, gnulib cannot enter it (FTS_ERR,
 * ENOTDIR); with FTS_NOSTAT in a physical walk and a comparator, the
 * entries of a directory without subdirectories are stat'ed in its parent
 * (FTS_NS, ENOENT).  Skip the first; compare the second without a
 * comparator.  Returns 1 to skip. */
static int gnulib_children_bug(int opts, int *sorted)
{
	if (opts & FTS_COMFOLLOW)
		return 1;
	if ((opts & FTS_NOSTAT) && (opts & FTS_PHYSICAL))
		*sorted = 0;
	return 0;
}

/* In a child: set up, then walk with both under every flag set, in every
 * mode that leaves the tree as it is.  Returns the number of flag sets
 * that disagreed, or 100 on setup failure. */
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
	if (ev->drop && drop_privileges() < 0)
		return 100;
	int bad = 0;
	for (size_t s = 0; s < NSETS; s++) {
		/* the walk both ways; fts_children and fts_set in name order */
		static const struct { enum walk_mode mode; int sorted; } runs[] = {
			{ WALK_READ, 1 }, { WALK_READ, 0 },
			{ WALK_CHILDREN, 1 }, { WALK_SET, 1 },
		};
		for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
			struct walk w = { .opts = sets[s].opts, .sorted = runs[r].sorted,
			                  .mode = runs[r].mode };
			if (w.mode == WALK_CHILDREN && gnulib_children_bug(w.opts, &w.sorted))
				continue;
			/* FTS_FOLLOW may lead to an ancestor: a physical walk
			 * finds that cycle later (libfastrm as gnulib), and the
			 * tight check at once: both, every other run */
			if (w.mode == WALK_SET && s % 2)
				w.opts |= FTS_TIGHT_CYCLE_CHECK;
			if (compare_walks(tag, roots, &w, sets[s].name)) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* Run @fn(@arg) in a child; its exit status (200 if it died). */
static int in_child(int (*fn)(void *), void *arg)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 200;
}

/* What is left under @path, one sorted line per file ("find -printf"). */
static char *remains(const char *path)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd,
	         "cd '%s' && find . -printf '%%y %%p\\n' 2>&1 | sort", path);
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char line[512];
	while (fgets(line, sizeof line, p))
		fputs(line, f);
	pclose(p);
	fclose(f);
	return buf;
}

struct remove_job {
	const char *dir;      /* holds the copy to remove */
	const char *out;      /* the report: outside it (a logical walk may
	                         climb from t to dir through a symlink) */
	int drop;
	int fastrm;           /* which fts removes */
	char *const *roots;
	struct walk w;
};

static int remove_child(void *arg)
{
	struct remove_job *j = arg;
	if (chdir(j->dir) < 0 || (j->drop && drop_privileges() < 0))
		return 100;
	FILE *f = fopen(j->out, "w");
	if (!f)
		return 100;
	(j->fastrm ? walk_fastrm : walk_gnulib)(j->roots, &j->w, f);
	fclose(f);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;
	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	if (f)
		fclose(f);
	fclose(m);
	return buf;
}

static void remove_copy(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *argv[] = { "rm", "-rf", "--", path, NULL };
	if (fx_run(argv) != 0)
		abort();
}

/* Make the test's tree in @dir: t (random, from @seed, with the deep chain
 * if @chain and an empty t/mnt if @mnt), ln -> t, file. */
static void make_tree(const char *dir, unsigned seed, int chain, int mnt)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || mkdirat(dfd, "t", 0755) < 0)
		abort();
	int tfd = openat(dfd, "t", O_RDONLY | O_DIRECTORY);
	gen(tfd, 0, &seed);
	if (mnt && mkdirat(tfd, "mnt", 0755) < 0)
		abort();
	if (chain)
		fx_make_chain(tfd, "chain", CHAIN_DEPTH, 0);
	close(tfd);
	if (symlinkat("t", dfd, "ln") < 0)
		abort();
	fx_write_file(dfd, "file", "x");
	close(dfd);
}

static void chown_nobody(const char *path)
{
	char *chown_argv[] = { "chown", "-R", "-h", "65534:65534", "--",
		               (char *)path, NULL };
	if (fx_run(chown_argv) != 0)
		abort();
}

/* Remove the tree through fts_accpath, once with each fts (each on a tree
 * made afresh from the same seed), under every flag set: the same report,
 * and the same files left. */
static int compare_removals(const struct env *ev, char *const *roots,
                            unsigned seed, int chain, const char *tag)
{
	int bad = 0;
	for (size_t s = 0; s < NSETS; s++) {
		char *left[2], *out[2];
		for (int impl = 0; impl < 2; impl++) {
			const char *name = impl ? "copy-gnulib" : "copy-fastrm";
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", ev->dir, name);
			char outp[4200];
			snprintf(outp, sizeof outp, "%s/walk.out", ev->dir);
			if (mkdir(path, 0755) < 0) {
				perror(path);
				abort();
			}
			make_tree(path, seed, chain, 0);
			if (ev->drop)
				chown_nobody(path);
			struct remove_job j = { path, outp, ev->drop, !impl, roots,
			                        { .opts = sets[s].opts, .sorted = 1,
			                          .mode = WALK_REMOVE } };
			if (in_child(remove_child, &j) != 0) {
				fprintf(stderr, "%s: remove child failed\n", tag);
				return 1;
			}
			out[impl] = slurp(outp);
			if (unlink(outp) < 0)
				abort();
			left[impl] = remains(path);
			remove_copy(ev->dir, name);
		}
		char what[256];
		snprintf(what, sizeof what, "%s %s remove sorted", tag, sets[s].name);
		int d = compare(what, out[0], out[1], 1);
		if (!d) {
			snprintf(what, sizeof what, "%s %s remove: files left", tag,
			         sets[s].name);
			d = compare(what, left[0], left[1], 1);
		}
		bad += d;
		for (int i = 0; i < 2; i++) {
			free(out[i]);
			free(left[i]);
		}
	}
	return bad;
}

struct child_args {
	const struct env *ev;
	char *const *roots;
	const char *tag;
};

static int child_thunk(void *arg)
{
	struct child_args *a = arg;
	return child(a->ev, a->roots, a->tag);
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

/* du -L on directories 1 .. 400, each with a symlink "s" to the next
 * (coreutils' du tests): a logical walk goes down 1/s/s/... until the
 * kernel's symlink limit, where gnulib reports that one path and goes on. */
static int symlink_chain(void)
{
	char *dir = fx_mkdtemp();
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	for (int i = 1; i <= 400; i++) {
		char name[16], target[32];
		snprintf(name, sizeof name, "%d", i);
		if (mkdirat(dfd, name, 0755) < 0)
			abort();
		snprintf(name, sizeof name, "%d/s", i);
		snprintf(target, sizeof target, "../%d", i + 1);
		if (symlinkat(target, dfd, name) < 0)
			abort();
	}
	close(dfd);
	if (chdir(dir) < 0)
		abort();
	static const struct flagset chain_sets[] = {
		{ FTS_LOGICAL, "LOGICAL" },
		{ FTS_LOGICAL | FTS_NOSTAT, "LOGICAL|NOSTAT (du -L)" },
		{ FTS_LOGICAL | FTS_CWDFD, "LOGICAL|CWDFD" },
		{ FTS_PHYSICAL, "PHYSICAL" },
		{ FTS_PHYSICAL | FTS_CWDFD, "PHYSICAL|CWDFD" },
	};
	char *roots[] = { "1", NULL };
	int bad = 0;
	for (size_t s = 0; s < sizeof chain_sets / sizeof chain_sets[0]; s++) {
		for (int m = WALK_READ; m <= WALK_SET; m++) {
			struct walk w = { .opts = chain_sets[s].opts, .sorted = 1,
			                  .mode = (enum walk_mode)m };
			bad += compare_walks("400 directories linked by symlinks",
			                     roots, &w, chain_sets[s].name);
		}
	}
	if (chdir("/") < 0)
		abort();
	fx_cleanup(dir);
	return bad;
}

/* A directory moved up a level while the walk is inside it, as coreutils'
 * du/move-dir-while-traversing.sh does with inotify: here the walk's own
 * callback renames T/U/3/a/b to T/U/3/b at the first entry inside it. */
struct mover {
	const char *dir; /* absolute: the walk may have changed directory */
	int done;
};

static void move_hook(const char *path, int level, void *arg)
{
	struct mover *m = arg;
	(void)level;
	if (!m->done && strncmp(path, "T/U/3/a/b/", 10) == 0) {
		char from[4200], to[4200];
		snprintf(from, sizeof from, "%s/T/U/3/a/b", m->dir);
		snprintf(to, sizeof to, "%s/T/U/3/b", m->dir);
		m->done = 1;
		if (rename(from, to) < 0)
			abort();
	}
}

static void make_moving_tree(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd,
	         "cd '%s' && rm -rf T d2 && mkdir d2 && for i in 1 2 3 4 5; do "
	         "mkdir -p T/U/3/a/b/c/$i/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z;"
	         " done", dir);
	if (system(cmd) != 0)
		abort();
}

static int moved_dir(void)
{
	char *dir = fx_mkdtemp();
	if (chdir(dir) < 0)
		abort();
	static const struct flagset move_sets[] = {
		{ FTS_PHYSICAL, "PHYSICAL" },
		{ FTS_PHYSICAL | FTS_NOSTAT, "PHYSICAL|NOSTAT" },
		{ FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, "PHYSICAL|CWDFD|NOSTAT (du)" },
		{ FTS_PHYSICAL | FTS_NOCHDIR, "PHYSICAL|NOCHDIR" },
	};
	char *roots[] = { "T/U", "d2", NULL };
	int bad = 0;
	for (size_t s = 0; s < sizeof move_sets / sizeof move_sets[0]; s++) {
		char *out[2];
		for (int impl = 0; impl < 2; impl++) {
			make_moving_tree(dir);
			struct mover m = { dir, 0 };
			struct walk w = { .opts = move_sets[s].opts, .sorted = 1,
			                  .mode = WALK_READ, .no_ids = 1,
			                  .hook = move_hook, .arg = &m };
			out[impl] = run_walk(impl ? walk_gnulib : walk_fastrm, roots, &w);
			if (!m.done)
				abort();
		}
		char what[128];
		snprintf(what, sizeof what, "directory moved during the walk, %s",
		         move_sets[s].name);
		/* one that says the walk failed (compare() splits the text) */
		int failed = strstr(out[0], "END errno=2 at T/U/3/a/b ") != NULL;
		if (!failed && getenv("FASTRM_DIFF_DUMP"))
			fputs(out[0], stderr);
		int d = compare(what, out[0], out[1], 1);
		if (!d && !failed && !(move_sets[s].opts & FTS_NOCHDIR)) {
			fprintf(stderr, "%s: the walk did not fail at T/U/3/a/b\n", what);
			d = 1;
		}
		bad += d;
		free(out[0]);
		free(out[1]);
	}
	if (chdir("/") < 0)
		abort();
	fx_cleanup(dir);
	return bad;
}

/* A directory that can be read but not searched (mode 0644), holding a
 * file and a subdirectory, walked by its owner (not root): in the default
 * mode, gnulib returns it (FTS_D), then FTS_ERR with EACCES, and none of
 * its entries; with FTS_CWDFD or FTS_NOCHDIR, its entries (FTS_NS). */
static int unsearchable_dir(int root)
{
	char *dir = fx_mkdtemp();
	char cmd[4200];
	snprintf(cmd, sizeof cmd,
	         "cd '%s' && mkdir -p t/u/s && : > t/u/f && : > t/g && chmod 644 t/u",
	         dir);
	if (system(cmd) != 0)
		abort();
	if (root)
		chown_nobody(dir);
	struct env ev = { dir, root, 0 };
	char *roots[] = { "t", NULL };
	struct child_args ca = { &ev, roots, "a directory that cannot be searched" };
	int bad = in_child(child_thunk, &ca) != 0;
	fx_cleanup(dir);
	return bad;
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

	e = getenv("FASTRM_DIFF_FIRST");
	int first = e ? atoi(e) : 0;
	int failures = 0, compared = 0;
	for (int t = first; t < ntrees; t++) {
		unsigned seed = seed0 + (unsigned)t * 7919u;
		char *dir = fx_mkdtemp();
		int chain = t % 100 == 7;
		struct env ev = { dir, root, nsok && t % 3 == 0 };
		make_tree(dir, seed, chain, ev.mount);

		char *roots_sets[4][6] = {
			{ "t", NULL },
			{ "t", "missing", "ln", "file", NULL },
			{ "t/", "ln/", "t//", "", NULL },
			{ "ln", "./t", NULL },
		};
		char *const *roots = roots_sets[t % 4];
		if (root)
			chown_nobody(dir);
		char tag[64];
		snprintf(tag, sizeof tag, "tree %d (seed %u)", t, seed0 + (unsigned)t * 7919u);
		struct child_args ca = { &ev, roots, tag };
		int rc = in_child(child_thunk, &ca);
		if (rc == 100)
			fprintf(stderr, "%s: could not set up the walker's child\n", tag);
		/* removal through fts_accpath: in every 4th tree and those with
		 * the deep chain (each flag set removes two fresh copies) */
		if (rc == 0 && (t % 4 == 1 || chain))
			rc = compare_removals(&ev, roots, seed, chain, tag);
		failures += rc != 0;
		compared++;
		fx_cleanup(dir);
	}
	int special = symlink_chain() + moved_dir() + unsearchable_dir(root);
	printf("%d trees compared, %d with differences; %d special cases differ\n",
	       compared, failures, special);
	failures += special;
	printf("%d passed, %d failed\n", compared + 3 - failures, failures);
	return failures ? 1 : 0;
}
