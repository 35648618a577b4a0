/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Concurrent change inside the tree, with an oracle: while `frm -rf victim`
 * runs, an adversary changes the tree under it, and after every round the
 * oracle holds frm to its contract:
 *   - nothing outside the tree was touched (sentinels that symlinks in the
 *     tree point to are all there);
 *   - frm exited 0 or 1, by itself;
 *   - exit 0: `victim` is gone and frm said nothing;
 *   - exit 1: frm said why (at least one message), and something is left:
 *     `victim`, or what the adversary moved out of the tree;
 *   - every entry left in `victim` is covered by a message that names it,
 *     an ancestor of it (a failure the entry is inside), or a descendant of
 *     it (a directory kept because something below it failed); names the
 *     adversary moved are mapped back to where they were made (below).
 *     The one exception is GNU rm's too: what the adversary put into a
 *     directory kept for a failure below it, which frm may have read
 *     before it came;
 *   - no message comes twice, and every message is one frm can give about
 *     a path in the tree.
 *
 * Adversaries (one kind per round):
 *   swap   directories replaced by symlinks to the sentinels' directory
 *          (relative and absolute) and by files; directories and symlinks
 *          of its own trading places;
 *   add    files and directories added to directories about to be removed;
 *   move   directories renamed out of the tree and back in, within it,
 *          and directories from outside renamed into it;
 *   perm   directories made unreadable, unsearchable, unwritable and back
 *          (as a plain user: as root, the round runs as uid 65534);
 *   attack directories swapped with symlinks and files, and back under
 *          their own names: what is left then cannot be told from what frm
 *          left, and the oracle checks all but that.
 * A name the adversary gives an entry it moves says where the entry was
 * made: "@d3@sub" is what was victim/d3/sub; the oracle reads a path with
 * such a component as that path, followed by what is below it.
 *
 * usage: test-stress FRM [ROUNDS]
 *        runs ROUNDS rounds (default 2) of every kind with 1, 2, 8 and 16
 *        workers and each ordering policy, and the default (--jobs=auto);
 *        FASTRM_STRESS_ORDERS=NAME,... keeps only the policies named (for
 *        a slow build of a remover whose policies are the library's);
 *        test-stress FRM --soak ROUNDS KIND FRM-OPTION...
 *        runs ROUNDS rounds of one kind with the options given, on a tree of
 *        60 directories of 10 files (and sub/, sub/deep/), and counts
 *        the rounds that broke the contract instead of stopping at the first.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fastrm/order.h>

#include "fixture.h"

#define NSENT 4
#define NOBODY 65534
/* A round that takes longer than this has hung. */
#define ROUND_LIMIT_S 120
/* The adversary stops after this: one that adds entries faster than frm
 * removes them (flat out, against a sanitized frm on a loaded machine)
 * would otherwise keep any remover from ever finishing, GNU rm too. */
#define ADVERSARY_S 10

enum kind { K_SWAP, K_ADD, K_MOVE, K_PERM, K_ATTACK, NKINDS };
static const char *const kind_names[NKINDS] = { "swap", "add", "move", "perm",
                                                 "attack" };

/* The tree: NDIRS directories "dK" of NFILES files, each with "sub" (4
 * files) and "sub/deep" (2 files) when SUBS; "away" (outside the tree)
 * holds NAWAY directories "zK" of 3 files that the move adversary brings
 * in. */
static int ndirs = 24, nfiles = 8;
static bool subs = true;
#define NAWAY 4

static char *frm;
static bool as_nobody;       /* perm rounds as uid 65534 (we are root) */

/* ---------------------------------------------------------------- tree */

/* @n files "@prefix0"... in @dfd (quietly: the adversary makes some in
 * directories that may be gone). */
static void fill(int dfd, const char *prefix, int n)
{
	for (int i = 0; i < n; i++) {
		char f[32];
		snprintf(f, sizeof f, "%s%d", prefix, i);
		int fd = openat(dfd, f, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
}

static int mkdir_open(int at, const char *name)
{
	if (mkdirat(at, name, 0755) < 0 && errno != EEXIST)
		return -1;
	return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

static void make_tree(int top)
{
	int v = mkdir_open(top, "victim");
	for (int i = 0; i < ndirs; i++) {
		char d[16];
		snprintf(d, sizeof d, "d%d", i);
		int s = mkdir_open(v, d);
		fill(s, "f", nfiles);
		if (subs) {
			int u = mkdir_open(s, "sub");
			fill(u, "g", 4);
			int w = mkdir_open(u, "deep");
			fill(w, "h", 2);
			close(w);
			close(u);
		}
		close(s);
	}
	close(v);
	int a = mkdir_open(top, "away");
	for (int i = 0; i < NAWAY; i++) {
		char z[16];
		snprintf(z, sizeof z, "z%d", i);
		int s = mkdir_open(a, z);
		fill(s, "f", 3);
		close(s);
	}
	close(a);
}

static void make_outside(int top)
{
	int o = mkdir_open(top, "outside");
	int os = mkdir_open(o, "sub");
	fill(o, "s", NSENT);
	fill(os, "s", NSENT);
	close(os);
	close(o);
}

static bool sentinels_intact(int top)
{
	bool ok = true;
	for (int i = 0; i < NSENT; i++) {
		char p[64];
		struct stat sb;
		snprintf(p, sizeof p, "outside/s%d", i);
		ok &= fstatat(top, p, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode);
		snprintf(p, sizeof p, "outside/sub/s%d", i);
		ok &= fstatat(top, p, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode);
	}
	return ok;
}

/* ----------------------------------------------------------- adversaries */

static unsigned next_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* chmod that never follows a symlink (the sentinels stay as they are). */
static void chmod_dir(int at, const char *name, mode_t mode)
{
	int fd = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return;
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	(void)chmod(p, mode);
	close(fd);
}

/* Pair @k of directory @dfd: a directory "newdK" (of 2 files) and a
 * symlink "newlK" to ../outside; made on first use, then swapped (the
 * directory takes the symlink's name and the other way round). */
static void flip(int dfd, unsigned k)
{
	char nd[16], nl[16];
	snprintf(nd, sizeof nd, "newd%u", k);
	snprintf(nl, sizeof nl, "newl%u", k);
	if (renameat2(dfd, nd, dfd, nl, RENAME_EXCHANGE) == 0)
		return;
	if (mkdirat(dfd, nd, 0755) == 0) {
		int s = openat(dfd, nd, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (s >= 0) {
			fill(s, "n", 2);
			close(s);
		}
	}
	(void)symlinkat("../outside", dfd, nl);
}

static void adversary(int top, enum kind kind, const char *outside, unsigned seed)
{
	int v = openat(top, "victim", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	int a = openat(top, "away", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	unsigned added = 0;
	/* a pace per round: flat out, or a change every 20 or 200 us */
	static const unsigned paces[] = { 0, 20, 200 };
	unsigned pace = paces[next_rand(&seed) % 3];
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (pace)
			usleep(pace);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= ADVERSARY_S)
			return;
		unsigned r = next_rand(&seed);
		char d[16], md[32], msub[40], z[16];
		snprintf(d, sizeof d, "d%u", r % (unsigned)ndirs);
		snprintf(md, sizeof md, "@%s", d);
		snprintf(msub, sizeof msub, "@%s@sub", d);
		snprintf(z, sizeof z, "z%u", r % NAWAY);
		unsigned op = (r >> 12) % 5;
		int dfd = openat(v, d, O_PATH | O_DIRECTORY | O_NOFOLLOW);
		switch (kind) {
		case K_SWAP:
			if (op == 0) { /* a directory -> a symlink to outside */
				if (renameat(v, d, v, md) == 0)
					(void)symlinkat("../outside", v, d);
			} else if (op == 1 && dfd >= 0) { /* sub -> absolute symlink */
				if (renameat(dfd, "sub", v, msub) == 0)
					(void)symlinkat(outside, dfd, "sub");
			} else if (op == 2) { /* a directory -> a file */
				if (renameat(v, d, v, md) == 0) {
					int fd = openat(v, d, O_CREAT | O_WRONLY | O_NOFOLLOW, 0644);
					if (fd >= 0)
						close(fd);
				}
			} else { /* a symlink and a directory trade places */
				flip(op == 3 || dfd < 0 ? v : dfd, r % 8);
			}
			break;
		case K_ADD: {
			char n[32];
			snprintf(n, sizeof n, "new%u", added++);
			if (dfd < 0)
				break;
			if (op == 0) {
				int s = openat(dfd, "sub", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
				if (s >= 0) {
					int fd = openat(s, n, O_CREAT | O_WRONLY | O_NOFOLLOW, 0644);
					if (fd >= 0)
						close(fd);
					close(s);
				}
			} else if (op == 1) {
				if (mkdirat(dfd, n, 0755) == 0) {
					int s = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
					if (s >= 0) {
						fill(s, "n", 2);
						close(s);
					}
				}
			} else {
				int fd = openat(dfd, n, O_CREAT | O_WRONLY | O_NOFOLLOW, 0644);
				if (fd >= 0)
					close(fd);
			}
			break;
		}
		case K_MOVE:
			/* nothing comes back under the name it had: whatever the
			 * oracle finds under a name of the tree's never moved */
			if (op == 0) { /* out of the tree */
				(void)renameat(v, d, a, md);
			} else if (op == 1) { /* back in */
				if (renameat(a, md, v, md) < 0)
					(void)renameat(a, msub, v, msub);
			} else if (op == 2 && dfd >= 0) { /* sub: out, or to another dK */
				char o[16];
				snprintf(o, sizeof o, "d%u", (r >> 4) % (unsigned)ndirs);
				int ofd = openat(v, o, O_PATH | O_DIRECTORY | O_NOFOLLOW);
				(void)renameat(dfd, "sub", (r & 1) || ofd < 0 ? a : ofd, msub);
				if (ofd >= 0)
					close(ofd);
			} else if (op == 3) { /* from outside into the tree */
				(void)renameat(a, z, v, z);
			} else { /* and back out */
				(void)renameat(v, z, a, z);
			}
			break;
		case K_ATTACK:
			/* the symlink-swap attack: directories swapped with symlinks
			 * and files, and back (names then say nothing of the past:
			 * the oracle checks only the exit status, the messages and
			 * what is outside) */
			if (op < 2) {
				if (renameat(v, d, v, md) == 0)
					(void)symlinkat("../outside", v, d);
			} else if (op == 2) {
				if (renameat(v, d, v, md) == 0) {
					int fd = openat(v, d, O_CREAT | O_WRONLY | O_NOFOLLOW, 0644);
					if (fd >= 0)
						close(fd);
				}
			} else {
				(void)renameat2(v, md, v, d, RENAME_EXCHANGE);
			}
			break;
		case K_PERM: {
			static const mode_t modes[] = { 0, 0500, 0300, 0600, 0755 };
			mode_t m = modes[op];
			if (r & 1)
				chmod_dir(v, d, m);
			else if (dfd >= 0)
				chmod_dir(dfd, "sub", m);
			break;
		}
		case NKINDS:
			break;
		}
		if (dfd >= 0)
			close(dfd);
	}
}

/* --------------------------------------------------------------- oracle */

struct msgs {
	char **path;   /* the path each message names ("" for a whole-walk one) */
	char **line;
	size_t n;
};

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		abort();
	return d;
}

static void add_msg(struct msgs *m, const char *path, const char *line)
{
	m->path = realloc(m->path, (m->n + 1) * sizeof *m->path);
	m->line = realloc(m->line, (m->n + 1) * sizeof *m->line);
	if (!m->path || !m->line)
		abort();
	m->path[m->n] = xstrdup(path);
	m->line[m->n] = xstrdup(line);
	m->n++;
}

static void free_msgs(struct msgs *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->path[i]);
		free(m->line[i]);
	}
	free(m->path);
	free(m->line);
	memset(m, 0, sizeof *m);
}

/* A path as the oracle reads it: from the last component that starts with
 * '@' (an entry the adversary moved: its name says where it was made). */
static void normalize(const char *in, char *out, size_t cap)
{
	const char *start = in, *p = in;
	while ((p = strchr(p, '@')) != NULL) {
		if (p == in || p[-1] == '/')
			start = p;
		p++;
	}
	if (*start == '@') {
		snprintf(out, cap, "victim/%s", start + 1);
		for (char *q = out; *q; q++)
			if (*q == '@')
				*q = '/';
	} else {
		snprintf(out, cap, "%s", in);
	}
}

/* @a is @b or an ancestor of it. */
static bool at_or_above(const char *a, const char *b)
{
	size_t n = strlen(a);
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/* Read frm's stderr into @m.  Returns false (and says why) on a line that
 * is none of frm's messages about a path in the tree. */
static bool parse_msgs(const char *text, struct msgs *m, char *why, size_t wn)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[8192];
		snprintf(line, sizeof line, "%.*s", (int)len, p);
		p += len + (nl ? 1 : 0);
		char path[4096];
		const char *q;
		if (strncmp(line, "frm: cannot remove '", 20) == 0 &&
		    (q = strstr(line + 20, "': ")) != NULL) {
			snprintf(path, sizeof path, "%.*s", (int)(q - (line + 20)), line + 20);
		} else if (strncmp(line, "frm: traversal failed: ", 23) == 0 &&
		           (q = strstr(line + 23, ": ")) != NULL) {
			snprintf(path, sizeof path, "%.*s", (int)(q - (line + 23)), line + 23);
		} else if (strncmp(line, "frm: fts_read failed: ", 22) == 0) {
			path[0] = '\0'; /* the whole walk ended */
		} else {
			snprintf(why, wn, "unexpected line: %.2000s", line);
			return false;
		}
		if (path[0] && !at_or_above("victim", path)) {
			snprintf(why, wn, "a message about a path outside the tree: %.2000s", line);
			return false;
		}
		for (size_t i = 0; i < m->n; i++) {
			if (strcmp(m->line[i], line) == 0) {
				snprintf(why, wn, "said twice: %.2000s", line);
				return false;
			}
		}
		char norm[4200];
		normalize(path, norm, sizeof norm);
		add_msg(m, path[0] ? norm : "", line);
	}
	return true;
}

/* Is leftover @path covered by a message? */
static bool covered(const struct msgs *m, const char *path)
{
	char norm[4200];
	normalize(path, norm, sizeof norm);
	for (size_t i = 0; i < m->n; i++) {
		const char *mp = m->path[i];
		if (!*mp || at_or_above(mp, norm) || at_or_above(norm, mp))
			return true;
	}
	return false;
}

/* Whether @name (of type @type, DT_*) was put where it is by the adversary
 * after frm started: moved ("@..."), made ("new...", or a symlink or file
 * in place of a directory), or brought in from outside ("z..."). */
static bool arrival(const char *name, unsigned char type)
{
	return name[0] == '@' || strncmp(name, "new", 3) == 0 || name[0] == 'z' ||
	       ((name[0] == 'd' || strcmp(name, "sub") == 0) && type != DT_DIR);
}

/* Every entry at and under @dfd (path @path) covered?  An entry is, when
 * a message names it or an ancestor of it, or when it is an ancestor of a
 * path named (kept for a failure below it).  So is an arrival (and what
 * it holds) in such a kept directory: frm may have read the directory
 * before it came, and a directory kept for a failure is not read again
 * (GNU rm's rule too).  Counts the entries in *@left and those not
 * covered in *@bare; the first of those goes to @why. */
static void check_left(int dfd, const char *path, const char *name,
                       bool parent_kept, const struct msgs *m, long *left,
                       long *bare, char *why, size_t wn)
{
	(*left)++;
	if (parent_kept && arrival(name, DT_DIR))
		return; /* and all it holds */
	bool ok = covered(m, path);
	if (!ok && (*bare)++ == 0)
		snprintf(why, wn, "left without a message: %s", path);
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		int c = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (c >= 0) {
			check_left(c, sub, e->d_name, ok, m, left, bare, why, wn);
			close(c);
			continue;
		}
		(*left)++;
		if (!covered(m, sub) && !(ok && arrival(e->d_name, e->d_type)) &&
		    (*bare)++ == 0)
			snprintf(why, wn, "left without a message: %s (type %d)", sub,
			         e->d_type);
	}
	closedir(d);
}

static bool empty_dir(int top, const char *name)
{
	DIR *d = NULL;
	int fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd >= 0)
		d = fdopendir(fd);
	if (!d)
		return true;
	struct dirent *e;
	bool empty = true;
	while (empty && (e = readdir(d)) != NULL)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Make every directory below @at/@name readable and searchable again. */
static void open_up(int at, const char *name)
{
	chmod_dir(at, name, 0755);
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			open_up(dirfd(d), e->d_name);
	closedir(d);
}

/* ---------------------------------------------------------------- rounds */

/* Whether policy @name is among FASTRM_STRESS_ORDERS (all without it). */
static bool order_kept(const char *name)
{
	const char *keep = getenv("FASTRM_STRESS_ORDERS");
	if (!keep)
		return true;
	size_t n = strlen(name);
	for (const char *p = keep; (p = strstr(p, name)) != NULL; p += n)
		if ((p == keep || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		_exit(126);
}

static char *read_all(int fd)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (n + 1024 > cap && !(buf = realloc(buf, cap *= 2)))
			abort();
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return buf;
}

/* One round in @round (a fresh directory, fd @top).  Returns true when the
 * contract held; else says why in @why. */
static bool one_round(int top, const char *round, enum kind kind, char **opts,
                      unsigned seed, int *status, char *why, size_t wn)
{
	bool nobody = kind == K_PERM && as_nobody;
	char outside[PATH_MAX + 16];
	snprintf(outside, sizeof outside, "%s/outside", round);
	make_outside(top);
	if (nobody) {
		/* the round's directory and what frm removes belong to nobody */
		if (fchown(top, NOBODY, NOBODY) < 0)
			abort();
		pid_t p = fork();
		if (p == 0) {
			drop_to_nobody();
			make_tree(top);
			_exit(0);
		}
		waitpid(p, NULL, 0);
	} else {
		make_tree(top);
	}

	pid_t adv = fork();
	if (adv == 0) {
		if (nobody)
			drop_to_nobody();
		adversary(top, kind, outside, seed);
		_exit(0);
	}
	int pfd[2];
	if (pipe(pfd) < 0)
		abort();
	pid_t rm = fork();
	if (rm == 0) {
		if (fchdir(top) < 0)
			_exit(127);
		if (nobody)
			drop_to_nobody();
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		alarm(ROUND_LIMIT_S);
		char *args[16], **a = args;
		*a++ = "frm";
		*a++ = "-rf";
		for (char **o = opts; *o; o++)
			*a++ = *o;
		*a++ = "--";
		*a++ = "victim";
		*a = NULL;
		execv(frm, args);
		_exit(127);
	}
	close(pfd[1]);
	char *err = read_all(pfd[0]);
	close(pfd[0]);
	int st;
	waitpid(rm, &st, 0);
	kill(adv, SIGKILL);
	waitpid(adv, NULL, 0);
	*status = st;

	bool ok = true;
	struct msgs m = { 0 };
	struct stat sb;
	bool victim_left = fstatat(top, "victim", &sb, AT_SYMLINK_NOFOLLOW) == 0;
	bool away_left = !empty_dir(top, "away");
	if (!sentinels_intact(top)) {
		snprintf(why, wn, "a sentinel outside the tree was touched");
		ok = false;
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
		snprintf(why, wn, "frm did not exit 0 or 1 by itself (wait status %#x): %.300s",
		         st, err);
		ok = false;
	} else if (!parse_msgs(err, &m, why, wn)) {
		ok = false;
	} else if (WEXITSTATUS(st) == 0 && victim_left) {
		snprintf(why, wn, "exit 0 with the target left");
		ok = false;
	} else if (WEXITSTATUS(st) == 0 && m.n) {
		snprintf(why, wn, "exit 0 after a failure message: %s", m.line[0]);
		ok = false;
	} else if (WEXITSTATUS(st) == 1 && !m.n) {
		snprintf(why, wn, "exit 1 without a message");
		ok = false;
	} else if (WEXITSTATUS(st) == 1 && !victim_left &&
	           !(kind == K_MOVE && away_left)) {
		snprintf(why, wn, "exit 1 with nothing left: %s", m.line[0]);
		ok = false;
	} else if (victim_left && kind != K_ATTACK) {
		int vfd = openat(top, "victim", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		long left = 0, bare = 0;
		if (vfd >= 0) {
			check_left(vfd, "victim", "victim", false, &m, &left, &bare, why, wn);
			ok = bare == 0;
			close(vfd);
		} else if (!covered(&m, "victim")) {
			snprintf(why, wn, "left without a message: victim");
			ok = false;
		}
	}
	free_msgs(&m);
	if (!ok && *err)
		snprintf(why + strlen(why), wn - strlen(why), "\n  frm said:\n%.2000s", err);
	free(err);

	/* clear the round: open what perm closed, then GNU rm (which never
	 * follows a symlink) */
	open_up(top, "victim");
	open_up(top, "away");
	if (fchdir(top) == 0) {
		char *rm_argv[] = { "rm", "-rf", "--", "victim", "away", NULL };
		fx_run(rm_argv);
	}
	if (!sentinels_intact(top)) {
		fprintf(stderr, "the test's own cleanup touched a sentinel\n");
		abort();
	}
	return ok;
}

/* Rounds of one configuration, each in a fresh directory under @dir.
 * Returns the rounds that broke the contract; stops at the first unless
 * @count_all. */
static int rounds(const char *dir, enum kind kind, char **opts, int n,
                  bool count_all, int *met)
{
	int broke = 0;
	char label[256] = "";
	for (char **o = opts; *o; o++)
		snprintf(label + strlen(label), sizeof label - strlen(label), " %s", *o);
	for (int r = 0; r < n; r++) {
		char round[PATH_MAX];
		snprintf(round, sizeof round, "%s/r", dir);
		if (mkdir(round, 0755) < 0 && errno != EEXIST)
			abort();
		int top = open(round, O_RDONLY | O_DIRECTORY);
		char why[8192] = "";
		int st = 0;
		unsigned seed = (unsigned)r * 7919u + (unsigned)kind * 31u + (unsigned)time(NULL);
		bool ok = one_round(top, round, kind, opts, seed, &st, why, sizeof why);
		*met += WIFEXITED(st) && WEXITSTATUS(st) == 1;
		close(top);
		char *rm_argv[] = { "rm", "-rf", "--", round, NULL };
		fx_run(rm_argv);
		if (!ok) {
			printf("FAIL %s,%s round %d: %s\n", kind_names[kind], label, r, why);
			broke++;
			if (!count_all)
				break;
		}
	}
	return broke;
}

static int soak(const char *dir, int argc, char **argv)
{
	/* FRM --soak ROUNDS KIND OPTION... */
	int n = atoi(argv[3]);
	enum kind kind = NKINDS;
	for (int k = 0; k < NKINDS; k++)
		if (strcmp(argv[4], kind_names[k]) == 0)
			kind = (enum kind)k;
	if (n < 1 || kind == NKINDS) {
		fprintf(stderr, "usage: test-stress FRM --soak ROUNDS swap|add|move|perm|attack [FRM-OPTION]...\n");
		return 2;
	}
	ndirs = 60;
	nfiles = 10;
	char **opts = calloc((size_t)argc, sizeof *opts);
	for (int i = 5; i < argc; i++)
		opts[i - 5] = argv[i];
	int met = 0;
	int broke = rounds(dir, kind, opts, n, true, &met);
	printf("%s: %d rounds, %d broke the contract, frm exited 1 in %d\n",
	       kind_names[kind], n, broke, met);
	free(opts);
	return broke ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-stress FRM [ROUNDS]\n"
		                "       test-stress FRM --soak ROUNDS KIND [FRM-OPTION]...\n");
		return 2;
	}
	frm = realpath(argv[1], NULL);
	if (!frm) {
		perror(argv[1]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/* lines out at once: the children forked below must not inherit
	 * (and print again) what is buffered */
	setvbuf(stdout, NULL, _IOLBF, 0);
	char *dir = fx_mkdtemp();
	bool can_nobody = false;
	if (geteuid() == 0) {
		/* perm rounds run as nobody, who must be able to run frm */
		pid_t p = fork();
		if (p == 0) {
			drop_to_nobody();
			_exit(access(frm, X_OK) == 0 ? 0 : 1);
		}
		int st;
		waitpid(p, &st, 0);
		can_nobody = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		as_nobody = true;
		/* nobody reaches the rounds through the working directory that
		 * frm is started in, never through the path above it */
	}

	int rc;
	if (argc > 4 && strcmp(argv[2], "--soak") == 0) {
		rc = soak(dir, argc, argv);
	} else {
		int n = argc > 2 ? atoi(argv[2]) : 2;
		static const char *const jobs[] = { "--jobs=1", "--jobs=2", "--jobs=8",
		                                    "--jobs=16" };
		int failed = 0, passed = 0, skipped = 0;
		for (int k = 0; k < NKINDS; k++) {
			if (k == K_PERM && geteuid() == 0 && !can_nobody) {
				printf("SKIP perm: uid %d cannot run %s\n", NOBODY, frm);
				skipped++;
				continue;
			}
			int broke = 0, met = 0, configs = 0;
			const struct fastrm_order *o;
			for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
				for (size_t i = 0; (o = fastrm_order_builtin(i)) != NULL; i++) {
					if (!order_kept(o->name))
						continue;
					char order[64];
					snprintf(order, sizeof order, "--order=%s", o->name);
					char *opts[] = { (char *)jobs[j], order, NULL };
					broke += rounds(dir, (enum kind)k, opts, n, false, &met) > 0;
					configs++;
				}
			}
			char *opts[] = { NULL }; /* frm's default: --jobs=auto, auto */
			broke += rounds(dir, (enum kind)k, opts, n, false, &met) > 0;
			configs++;
			printf("%s %s: %d configurations x %d rounds, %d broke the contract "
			       "(frm met the adversary, exit 1, in %d rounds)\n",
			       broke ? "FAIL" : "ok", kind_names[k], configs, n, broke, met);
			broke ? failed++ : passed++;
		}
		printf("%d kinds passed, %d failed, %d skipped\n", passed, failed, skipped);
		rc = failed ? 1 : passed == 0 ? FX_SKIP : 0;
	}
	fx_cleanup(dir);
	free(frm);
	return rc;
}
