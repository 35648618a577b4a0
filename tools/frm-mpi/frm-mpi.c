/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frm-mpi: frm -r across the ranks of an MPI job (mpirun -np N frm-mpi -r
 * PATH...), for trees too big for one client of a shared file system.
 *
 * How the work moves (doc/design.md, "frm-mpi")
 * - Rank 0 coordinates.  It reads the top of each tree breadth first
 *   (directories of at most EXPAND_MAX entries, each opened relative to its
 *   parent with O_NOFOLLOW and checked against the device and inode seen)
 *   until the subtree tasks it would make number TASKS_PER_SLOT per slot
 *   of every rank (or it has read NODES_MAX directories).  Each directory
 *   not read is a task: its path and the device and inode of every
 *   directory from the operand down to it.  The files of a directory read
 *   are a task (split into one shard per rank where there are many); a
 *   directory too large to read is split into shards of all its entries.
 * - Every other rank asks rank 0 for as many tasks as it has free slots,
 *   removes each on a thread of its own with libfastrm's pool
 *   (fastrm_rmtreeat, its own workers), reports each as it ends, until
 *   every task is done.  Rank 0 removes tasks too, answering the others
 *   between them.
 * - Work stealing: when ranks wait and rank 0 has no task left, it asks
 *   the ranks at work to give subtrees away; a walk so asked gives the
 *   directory it is about to enter (the library's @ask keeps it, and the
 *   directories above it in the walk), and rank 0 makes it a task for any
 *   rank, and the directories kept above it nodes that wait for it and
 *   for the walk.
 * - A rank reaches its subtree one component at a time with O_NOFOLLOW,
 *   checking each directory against what rank 0 recorded; the subtree's
 *   root is checked again by the library's root callback.  No rank holds
 *   the whole list: rank 0 holds the tasks (bounded), a worker rank those
 *   it runs.
 * - A directory rank 0 read is removed by rank 0, on one of its slots, as
 *   soon as its tasks and the directories below it are done; if anything
 *   below it was left, it is kept without a word (the entry left was
 *   reported by the rank that met it), as GNU rm keeps the directories
 *   above a failure.
 * - With one rank (-np 1) rank 0 removes the operands itself, as frm.
 *
 * The contract, across ranks: every rank exits 0 only when every operand
 * is gone; each entry left is reported once, by the rank that met it.
 * --stats is the total over ranks, printed once by rank 0.  A rank that
 * dies makes MPI abort the job (non-zero); running frm-mpi again finishes
 * it.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <fastrm/manifest.h>
#include <fastrm/order.h>
#include <fastrm/rmtree.h>

#include "jobs.h"
#include "quote.h"

#include <dirent.h>
#include <stddef.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Rank 0 reads a directory into tasks only if it has at most this many
 * entries (else the directory is one task), ... */
#define EXPAND_MAX 4096
/* ...until there are this many tasks per slot of every rank, ... */
#define TASKS_PER_SLOT 1
/* ...or it has read this many directories (its memory bound). */
#define NODES_MAX 65536
/* Deepest chain from an operand to a task. */
#define DEPTH_MAX 64
/* A directory rank 0 met with at least this many files (or too many
 * entries to read) is split over the ranks: shard s of S removes the
 * entries whose name hashes to s, on rank s (another client), so that
 * several clients unlink in it at once; at most SHARDS_MAX shards (each
 * reads the whole directory). */
#define SHARD_MIN_FILES 64
#define SHARDS_MAX 64

enum { TAG_ASK = 1, TAG_TASK, TAG_STOP, TAG_GIVE };

/* What a task removes of its directory (comps[k-1]). */
enum {
	TASK_TREE,    /* it and all below it */
	TASK_FILES,   /* what it holds but its subdirectories (each a task
	                 of its own, or made meanwhile: then the directory's
	                 rmdir finds it, and removes it whole) */
	TASK_ENTRIES, /* what it holds, subdirectories whole, not it */
	TASK_RMDIR,   /* it, once all the rest is done (rank 0's own) */
};

static const char *const program_name = "frm-mpi";
static int rank, nranks;

struct options {
	bool recursive, force, verbose, xdev, stats, progress, check_path;
	int preserve_root; /* 0: --no-preserve-root, 1: yes, 2: =all */
	unsigned jobs;
	bool jobs_auto;
	const struct fastrm_order *order;
	const char *manifest;   /* --manifest=FILE */
	int manifest_format;    /* FASTRM_MANIFEST_JSON or _NUL */
	bool manifest_failures;
};
static struct options opt = { .preserve_root = 1, .jobs_auto = true };

/* What this rank did. */
struct counts {
	unsigned long long files, dirs, failures;
};
static struct counts cnt;
/* counted from any thread (tasks run at once, each with its pool) */
#define COUNT(x) __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)

/* Messages from tasks running at once: one at a time (quote_always's
 * buffers are shared). */
static pthread_mutex_t say_mu = PTHREAD_MUTEX_INITIALIZER;
#define SAY(stmt)                                 \
	do {                                      \
		pthread_mutex_lock(&say_mu);      \
		stmt;                             \
		pthread_mutex_unlock(&say_mu);    \
	} while (0)

/* ------------------------------------------------------------ messages */

/* One line, written at once (the ranks share the terminal). */
__attribute__((format(printf, 2, 3)))
static void error_msg(int err, const char *fmt, ...)
{
	char buf[8192];
	int n = snprintf(buf, sizeof buf, "%s: ", program_name);
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	va_end(ap);
	if (err && n < (int)sizeof buf)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ": %s", strerror(err));
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	fflush(stdout);
	if (write(2, buf, (size_t)n) < 0) {
		/* nowhere to say it */
	}
}

static void say_removed(bool is_dir, const char *path)
{
	printf(is_dir ? "removed directory %s\n" : "removed %s\n", quote_always(0, path));
	fflush(stdout);
}

/* What rm -f does not report: the entry is not there. */
static bool nonexistent_errno(int e)
{
	return e == ENOENT || e == ENOTDIR;
}

/* ------------------------------------------------------------ manifest */

/* --manifest=FILE: each rank writes the records of what it removed,
 * failed on or kept to FILE.part-RANK, as they come (from any task's
 * thread); at the end rank 0 reads every rank's part, in rank order, into
 * the one manifest FILE (libfastrm's writer: fastrm_manifest(3)), with
 * the summary of the whole job, and removes the parts.  A part's record:
 * the outcome, the type bits in octal, the errno, the operation or
 * reason ("-": none), the path, separated by tabs, ended by NUL. */
static struct {
	pthread_mutex_t mu;
	int fd;           /* -1: no manifest */
	char *buf;
	size_t len, cap;
	int err;          /* the first write error */
	char name[PATH_MAX];
} part = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static void part_flush(void)
{
	for (size_t done = 0; done < part.len && !part.err;) {
		ssize_t w = write(part.fd, part.buf + done, part.len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			part.err = w < 0 ? errno : EIO;
		else
			done += (size_t)w;
	}
	part.len = 0;
}

static void record(const char *path, mode_t mode, enum fastrm_outcome outcome, int err,
                   const char *op)
{
	if (part.fd < 0)
		return;
	char head[64];
	int h = snprintf(head, sizeof head, "%d\t%o\t%d\t", (int)outcome,
	                 (unsigned)(mode & S_IFMT), err);
	size_t ol = op ? strlen(op) : 1, pl = strlen(path);
	pthread_mutex_lock(&part.mu);
	size_t need = part.len + (size_t)h + ol + 1 + pl + 1;
	if (need > part.cap) {
		size_t cap = part.cap ? part.cap : 1 << 16;
		while (cap < need)
			cap *= 2;
		char *b = realloc(part.buf, cap);
		if (!b) {
			part.err = part.err ? part.err : ENOMEM;
			pthread_mutex_unlock(&part.mu);
			return;
		}
		part.buf = b;
		part.cap = cap;
	}
	memcpy(part.buf + part.len, head, (size_t)h);
	part.len += (size_t)h;
	memcpy(part.buf + part.len, op ? op : "-", ol);
	part.len += ol;
	part.buf[part.len++] = '\t';
	memcpy(part.buf + part.len, path, pl + 1);
	part.len += pl + 1;
	if (part.len >= 1 << 16)
		part_flush();
	pthread_mutex_unlock(&part.mu);
}

/* This rank's part: FILE.part-RANK, made now.  false: it could not be. */
static bool part_open(void)
{
	snprintf(part.name, sizeof part.name, "%s.part-%d", opt.manifest, rank);
	part.fd = open(part.name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (part.fd < 0)
		error_msg(errno, "cannot write %s", quote_always(0, part.name));
	return part.fd >= 0;
}

/* Written out and closed: 0, or the errno of what failed (said). */
static int part_close(void)
{
	if (part.fd < 0)
		return 0;
	part_flush();
	if (close(part.fd) != 0 && !part.err)
		part.err = errno;
	part.fd = -1;
	free(part.buf);
	if (part.err)
		error_msg(part.err, "cannot write %s", quote_always(0, part.name));
	return part.err;
}

/* Rank 0: every rank's part into the manifest @m, in rank order; the
 * parts removed.  0, or the errno of what failed (said). */
static int parts_merge(struct fastrm_manifest *m)
{
	int rc = 0;
	char *buf = malloc(1 << 20);
	if (!buf)
		return ENOMEM;
	for (int r = 0; r < nranks && !rc; r++) {
		char name[PATH_MAX];
		snprintf(name, sizeof name, "%s.part-%d", opt.manifest, r);
		int fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			rc = errno;
			error_msg(rc, "cannot read %s", quote_always(0, name));
			break;
		}
		size_t have = 0;
		for (;;) {
			ssize_t n = read(fd, buf + have, (1 << 20) - have);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				rc = errno;
				error_msg(rc, "cannot read %s", quote_always(0, name));
				break;
			}
			have += (size_t)n;
			size_t at = 0;
			char *end;
			while ((end = memchr(buf + at, '\0', have - at)) != NULL) {
				int outcome, err;
				unsigned mode;
				char *p = buf + at, *op, *path;
				if (sscanf(p, "%d\t%o\t%d\t", &outcome, &mode, &err) == 3 &&
				    (op = strchr(p, '\t')) && (op = strchr(op + 1, '\t')) &&
				    (op = strchr(op + 1, '\t')) && (path = strchr(++op, '\t'))) {
					*path++ = '\0';
					int w = fastrm_manifest_add(m, path, (mode_t)mode,
					                            (enum fastrm_outcome)outcome, err,
					                            strcmp(op, "-") ? op : NULL);
					if (w < 0 && !rc)
						rc = -w;
				}
				at = (size_t)(end - buf) + 1;
			}
			memmove(buf, buf + at, have - at);
			have -= at;
			if (n == 0 || have == 1 << 20)
				break; /* the end (a record longer than the buffer: cut) */
		}
		close(fd);
		unlink(name);
	}
	free(buf);
	return rc;
}

/* Rank 0, every rank's part written: the manifest FILE, of the parts and
 * the job's summary with @status.  0, or the errno of what failed
 * (said). */
static int manifest_join(int status)
{
	int fd = open(opt.manifest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	struct fastrm_manifest *m = fd >= 0
		? fastrm_manifest_new(fd, opt.manifest_format,
		                      opt.manifest_failures ? FASTRM_MANIFEST_FAILURES : 0)
		: NULL;
	if (!m) {
		int e = errno;
		error_msg(e, "cannot write the manifest %s", quote_always(0, opt.manifest));
		if (fd >= 0)
			close(fd);
		return e;
	}
	int rc = parts_merge(m);
	int w = fastrm_manifest_finish(m, rc ? 1 : status);
	fastrm_manifest_free(m);
	if (close(fd) != 0 && !w)
		w = -errno;
	if (w < 0) {
		error_msg(-w, "write error on the manifest %s", quote_always(0, opt.manifest));
		rc = rc ? rc : -w;
	}
	return rc;
}

/* A failure: said, counted, unless -f and the entry is not there.
 * Returns whether it counts. */
static bool failure(int err, const char *path)
{
	if (opt.force && nonexistent_errno(err))
		return false;
	SAY(error_msg(err, "cannot remove %s", quote_always(0, path)));
	COUNT(cnt.failures);
	record(path, 0, FASTRM_OUTCOME_FAILED, err, "remove");
	return true;
}

/* ------------------------------------------------- removing a subtree */

/* A subtree as a rank removes it: reached from @comps[0] (an operand,
 * relative to the working directory) through @comps[1..k-1], each
 * checked against @ids. */
struct subtree {
	int k;
	const char *comps[DEPTH_MAX];
	uint64_t ids[DEPTH_MAX][2];
	char display[PATH_MAX * 2]; /* the path of comps[k-1], as rm names it */
	size_t prefix;              /* length of its parent's part, with '/' */
	dev_t dev0;                 /* this rank's device of comps[0], once
	                               open_chain() opened it */
	int kind;                   /* what of comps[k-1] the task removes */
	int shard, nshards;         /* the entries whose name hashes to shard,
	                               of nshards (1: all) */
	long task;                  /* the task's id at rank 0 (-1: an rmdir
	                               of rank 0's, which gives nothing away) */
	char names[PATH_MAX * 2];   /* where comps point, when unpacked */
};

/* Whether @sb is the directory recorded as @id: the same inode number,
 * on the device this rank sees the operand on (@dev0; 0: @sb is the
 * operand).  Ranks on other clients of a shared file system (another
 * mount, another node) see other device numbers, never other inode
 * numbers: so the device is compared within a rank only, and the inode
 * across ranks. */
static bool is_recorded(const struct stat *sb, const uint64_t id[2], dev_t dev0)
{
	if (dev0 && sb->st_dev != dev0)
		return false;
	/* --check=path: where clients number inodes each their own way
	 * (sshfs), only the O_NOFOLLOW steps and each rank's own checks */
	return opt.check_path || (uint64_t)sb->st_ino == id[1];
}

struct cbctx {
	const struct subtree *s;
	bool child;                  /* removing a subdirectory of s's
	                                directory (TASK_ENTRIES): not a
	                                directory rank 0 recorded */
	unsigned long long failures; /* this task's */
	const char *given;           /* the name given to the library */
	char **gave;                 /* the subtrees given away, each as its
	                                path from the task's directory */
	unsigned ngave;
	char **fails;                /* failures counted since the first gift,
	                                each as such a path (at most FAILS_MAX) */
	unsigned nfails;
	bool fails_over;             /* more than that */
	char buf[PATH_MAX * 3];
};
#define FAILS_MAX 1024

/* @dir's entry @name as rm names it, into @buf (@n bytes). */
static const char *child_path(char *buf, size_t n, const char *dir, const char *name)
{
	size_t l = strlen(dir);
	snprintf(buf, n, "%s%s%s", dir, l && dir[l - 1] == '/' ? "" : "/", name);
	return buf;
}

static const char *shown(struct cbctx *c, const char *libpath)
{
	if (c->child)
		return child_path(c->buf, sizeof c->buf, c->s->display, libpath);
	snprintf(c->buf, sizeof c->buf, "%.*s%s", (int)c->s->prefix, c->s->display, libpath);
	return c->buf;
}

/* ------------------------------------------ giving subtrees away */

/* How many subtrees this rank is to give away: rank 0 asks (TAG_GIVE)
 * when ranks have run dry and it has no task left to hand out.  A task's
 * walk then gives away the next directory it is about to enter (nothing
 * of it read yet): the library keeps it, and the directories above it in
 * the walk (@ask's FASTRM_RMTREE_KEEP), and rank 0 makes it a task for any
 * rank, and removes the directories kept above it once it and the walk
 * are done. */
static int give_want;
/* FRM_MPI_TEST_GIVE=N[:L] (for the tests only): each rank gives N
 * subtrees away whether asked or not, at level L or deeper in its walks
 * (1: any), so that small trees meet giving too. */
static int give_test, give_test_level = 1;

enum { GIFT_TREE = 1, /* a subtree given away */
       GIFT_KEPT };   /* a directory above one, kept by a failure below it */

/* A gift on its way to rank 0 (or rank 0's own), as the wire has it:
 * int64 task, int32 what, int32 n, n (dev, ino) pairs, then n names, each
 * NUL-terminated: the path from the task's directory (its node) down. */
struct gift {
	struct gift *next;
	size_t len;
	char data[];
};
static pthread_mutex_t gift_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gift *gifts, **gifts_end = &gifts;

/* Queue a gift: @rel is the path below the task's directory, its @n
 * components separated by '/'; @ids their (dev, ino), or NULL. */
static bool push_gift(long task, int what, int n, const uint64_t (*ids)[2],
                      const char *rel)
{
	size_t rl = strlen(rel) + 1;
	struct gift *g = malloc(sizeof *g + 16 + (size_t)n * 16 + rl);
	if (!g)
		return false;
	int64_t t = task;
	int32_t h[2] = { what, n };
	memcpy(g->data, &t, 8);
	memcpy(g->data + 8, h, 8);
	if (ids)
		memcpy(g->data + 16, ids, (size_t)n * 16);
	else
		memset(g->data + 16, 0, (size_t)n * 16);
	char *names = g->data + 16 + (size_t)n * 16;
	memcpy(names, rel, rl);
	for (char *q = names; *q; q++)
		if (*q == '/')
			*q = '\0';
	g->len = 16 + (size_t)n * 16 + rl;
	g->next = NULL;
	pthread_mutex_lock(&gift_mu);
	*gifts_end = g;
	gifts_end = &g->next;
	pthread_mutex_unlock(&gift_mu);
	return true;
}

/* Take the gifts queued (a list, oldest first). */
static struct gift *take_gifts(void)
{
	pthread_mutex_lock(&gift_mu);
	struct gift *g = gifts;
	gifts = NULL;
	gifts_end = &gifts;
	pthread_mutex_unlock(&gift_mu);
	return g;
}

/* One subtree more to give, if any is wanted. */
static bool take_want(void)
{
	int *counters[] = { &give_test, &give_want };
	for (int i = 0; i < 2; i++) {
		int w = __atomic_load_n(counters[i], __ATOMIC_RELAXED);
		while (w > 0)
			if (__atomic_compare_exchange_n(counters[i], &w, w - 1, false,
			                                __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				return true;
	}
	return false;
}

/* The library's @path as a path below the task's directory (NULL when it
 * is not below what was given). */
static const char *rel_of(const struct cbctx *c, const char *path, char *buf, size_t n)
{
	size_t gl = strlen(c->given);
	if (strncmp(path, c->given, gl) != 0)
		return NULL;
	const char *r = path + gl;
	while (*r == '/')
		r++;
	int w = c->child ? snprintf(buf, n, "%s%s%s", c->given, *r ? "/" : "", r)
	                 : snprintf(buf, n, "%s", r);
	return w >= 0 && (size_t)w < n ? buf : NULL;
}

/* A failure counted in a task that gave subtrees away: the directories
 * above both are kept (told to rank 0 at the end). */
static void note_failure(struct cbctx *c, const char *path)
{
	char rel[PATH_MAX * 2];
	char *r = NULL;
	if (c->nfails == FAILS_MAX || !rel_of(c, path, rel, sizeof rel) ||
	    !(r = strdup(rel))) {
		c->fails_over = true;
		return;
	}
	if (!c->fails && !(c->fails = malloc(FAILS_MAX * sizeof *c->fails))) {
		free(r);
		c->fails_over = true;
		return;
	}
	c->fails[c->nfails++] = r;
}

/* @ask: give away directory @e, about to be entered, if rank 0 wants
 * subtrees and this task has counted no failure (the directories above a
 * failure are kept by the library: the kept ones are then told apart by
 * the failures noted since).  Its (dev, ino) and those of the directories
 * between it and the task's directory, for rank 0's chain, are read on
 * the way up from its parent, the fd the walk holds. */
static int cb_ask(void *ctx, const struct fastrm_rmtree_entry *e,
                  enum fastrm_rmtree_step step)
{
	if (step != FASTRM_RMTREE_ENTER || e->level < 1 || !e->is_dir || !e->st ||
	    (__atomic_load_n(&give_want, __ATOMIC_RELAXED) <= 0 &&
	     __atomic_load_n(&give_test, __ATOMIC_RELAXED) <= 0))
		return FASTRM_RMTREE_GO;
	struct cbctx *c = ctx;
	int n = e->level + (c->child ? 1 : 0); /* components below the node */
	char rel[PATH_MAX * 2];
	if (c->s->task < 0 || c->failures || c->s->k + n >= DEPTH_MAX ||
	    (__atomic_load_n(&give_want, __ATOMIC_RELAXED) <= 0 && e->level < give_test_level) ||
	    !rel_of(c, e->path, rel, sizeof rel))
		return FASTRM_RMTREE_GO;
	int parts = 1;
	for (const char *q = rel; *q; q++)
		parts += *q == '/';
	if (parts != n || !take_want())
		return FASTRM_RMTREE_GO;
	/* (a gift that fails below is one fewer given: rank 0 asks again) */
	uint64_t ids[DEPTH_MAX][2];
	ids[n - 1][0] = (uint64_t)e->st->st_dev;
	ids[n - 1][1] = (uint64_t)e->st->st_ino;
	int fd = e->dirfd, up = -1;
	bool ok = true;
	for (int i = n - 2; ok && i >= 0; i--) {
		struct stat sb;
		if (!(ok = fstat(fd, &sb) == 0))
			break;
		ids[i][0] = (uint64_t)sb.st_dev;
		ids[i][1] = (uint64_t)sb.st_ino;
		if (i > 0) {
			int nfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (up >= 0)
				close(up);
			fd = up = nfd;
			ok = nfd >= 0;
		}
	}
	if (up >= 0)
		close(up);
	char **more = ok ? realloc(c->gave, (c->ngave + 1) * sizeof *more) : NULL;
	if (more)
		c->gave = more;
	char *mine = more ? strdup(rel) : NULL;
	if (!mine || !push_gift(c->s->task, GIFT_TREE, n, ids, rel)) {
		free(mine);
		return FASTRM_RMTREE_GO;
	}
	c->gave[c->ngave++] = mine;
	return FASTRM_RMTREE_KEEP;
}

/* After a task's walk that gave subtrees away: tell rank 0 which of the
 * directories kept above them hold a failure too (so are to stay), and
 * let go of the lists. */
static void gifts_done(struct cbctx *c)
{
	for (unsigned i = 0; i < c->ngave; i++) {
		char *g = c->gave[i];
		int n = 0;
		for (char *q = g; *q; q++) {
			if (*q != '/')
				continue;
			n++;
			size_t len = (size_t)(q - g);
			bool kept = c->fails_over;
			for (unsigned f = 0; !kept && f < c->nfails; f++)
				kept = strncmp(c->fails[f], g, len) == 0 &&
				       (c->fails[f][len] == '\0' || c->fails[f][len] == '/');
			if (kept) {
				*q = '\0';
				if (!push_gift(c->s->task, GIFT_KEPT, n, NULL, g))
					error_msg(ENOMEM, "cannot tell rank 0 of %s", g);
				*q = '/';
			}
		}
		free(g);
	}
	for (unsigned f = 0; f < c->nfails; f++)
		free(c->fails[f]);
	free(c->fails);
	free(c->gave);
}

static int cb_root(void *ctx, const struct fastrm_rmtree_entry *e)
{
	struct cbctx *c = ctx;
	const struct subtree *s = c->s;
	if (c->child || is_recorded(e->st, s->ids[s->k - 1], s->k > 1 ? s->dev0 : 0))
		return 0;
	/* not the directory rank 0 saw: replaced meanwhile; left alone */
	pthread_mutex_lock(&say_mu);
	const char *p = shown(c, e->path);
	error_msg(ENOENT, "cannot remove %s", quote_always(0, p));
	record(p, S_IFDIR, FASTRM_OUTCOME_FAILED, ENOENT, "refused");
	pthread_mutex_unlock(&say_mu);
	COUNT(cnt.failures);
	c->failures++;
	return ENOENT;
}

/* The type bits of @e, for the manifest. */
static mode_t type_of(const struct fastrm_rmtree_entry *e)
{
	return e->is_dir ? S_IFDIR : e->st ? e->st->st_mode & S_IFMT : 0;
}

static void cb_removed(void *ctx, const struct fastrm_rmtree_entry *e)
{
	struct cbctx *c = ctx;
	if (e->is_dir)
		COUNT(cnt.dirs);
	else
		COUNT(cnt.files);
	if (opt.verbose || opt.manifest) {
		pthread_mutex_lock(&say_mu);
		const char *p = shown(c, e->path);
		if (opt.verbose)
			say_removed(e->is_dir, p);
		record(p, type_of(e), FASTRM_OUTCOME_REMOVED, 0, NULL);
		pthread_mutex_unlock(&say_mu);
	}
}

/* An entry kept without a failure: above something kept or failed.  The
 * directories a walk kept above a subtree it gave away, and that subtree,
 * are not this walk's to say: rank 0 removes them, or says they are
 * kept, once the gift is done. */
static void cb_kept(void *ctx, const struct fastrm_rmtree_entry *e,
                    enum fastrm_rmtree_keep why)
{
	struct cbctx *c = ctx;
	char rel[PATH_MAX * 2];
	if (c->ngave && rel_of(c, e->path, rel, sizeof rel)) {
		size_t l = strlen(rel);
		for (unsigned i = 0; i < c->ngave; i++)
			if (strncmp(c->gave[i], rel, l) == 0 &&
			    (c->gave[i][l] == '\0' || c->gave[i][l] == '/' || l == 0))
				return;
	}
	pthread_mutex_lock(&say_mu);
	record(shown(c, e->path), type_of(e), FASTRM_OUTCOME_KEPT, 0,
	       fastrm_manifest_reason(why));
	pthread_mutex_unlock(&say_mu);
}



static int cb_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	struct cbctx *c = ctx;
	if (what == FASTRM_RMTREE_EREMOVE && opt.force && nonexistent_errno(err))
		return 0;
	pthread_mutex_lock(&say_mu);
	const char *p = shown(c, e->path);
	switch (what) {
	case FASTRM_RMTREE_EWALK:
		error_msg(err, "traversal failed: %s", quote_if_needed(0, p));
		break;
	case FASTRM_RMTREE_ECYCLE:
		error_msg(0, "WARNING: Circular directory structure.\n"
		             "This almost certainly means that you have a corrupted file system.\n"
		             "NOTIFY YOUR SYSTEM MANAGER.\n"
		             "The following directory is part of the cycle:\n  %s",
		          quote_always(0, p));
		break;
	case FASTRM_RMTREE_EXDEV:
		error_msg(0, "skipping %s, since it's on a different device",
		          quote_always(0, p));
		break;
	default:
		error_msg(err, "cannot remove %s", quote_always(0, p));
		break;
	}
	record(p, type_of(e), FASTRM_OUTCOME_FAILED, err, fastrm_manifest_op(what, e->is_dir));
	pthread_mutex_unlock(&say_mu);
	if (c->ngave)
		note_failure(c, e->path);
	COUNT(cnt.failures);
	c->failures++;
	return 1;
}

/* Workers of each task's pool. */
static unsigned task_workers = 1;

static void rmtree_opts(struct fastrm_rmtree_opts *o, struct cbctx *c)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->workers = task_workers;
	o->order = opt.order;
	o->flags = (opt.xdev ? FASTRM_RMTREE_XDEV : 0) |
	           (opt.jobs_auto ? FASTRM_RMTREE_FIT_WORKERS : 0);
	o->ctx = c;
	o->root = cb_root;
	o->removed = cb_removed;
	o->failed = cb_failed;
	if (opt.manifest)
		o->kept = cb_kept;
}

/* Open comps[0..upto-1], each checked.  Returns the fd of comps[upto-1]
 * (AT_FDCWD when @upto is 0), or -1 with errno set. */
static int open_chain(struct subtree *s, int upto)
{
	int fd = AT_FDCWD;
	s->dev0 = 0;
	for (int i = 0; i < upto; i++) {
		int nfd = openat(fd, s->comps[i],
		                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		struct stat sb;
		bool ok = nfd >= 0 && fstat(nfd, &sb) == 0;
		if (ok && i == 0)
			s->dev0 = sb.st_dev;
		if (ok && i == 0 && rank != 0 && !is_recorded(&sb, s->ids[0], 0)) {
			static bool said;
			pthread_mutex_lock(&say_mu);
			if (!said)
				error_msg(0, "rank %d does not see the inode numbers rank 0 sees in "
				          "%s (a client that numbers inodes its own way, such as "
				          "sshfs?): nothing there removed; --check=path removes "
				          "without comparing them", rank, quote_always(0, s->comps[0]));
			said = true;
			pthread_mutex_unlock(&say_mu);
		}
		if (nfd >= 0 && (!ok || !is_recorded(&sb, s->ids[i], i ? s->dev0 : 0))) {
			close(nfd);
			nfd = -1;
			e = ENOENT; /* not the directory seen: moved or replaced */
		}
		if (fd != AT_FDCWD)
			close(fd);
		if (nfd < 0) {
			errno = e;
			return -1;
		}
		fd = nfd;
	}
	return fd;
}

/* Remove @name, relative to @dirfd, and all below it, with the library's
 * pool: comps[k-1] of task @s (@child false), or a subdirectory of its
 * directory (@child true: a TASK_ENTRIES shard's, not one rank 0
 * recorded).  Returns the failures counted.  Tasks run at once, each on
 * its own thread. */
static unsigned long long remove_tree_at(const struct subtree *s, int dirfd,
                                         const char *name, bool child)
{
	struct cbctx *c = malloc(sizeof *c);
	if (!c) {
		char path[PATH_MAX * 3];
		return failure(ENOMEM, child ? child_path(path, sizeof path, s->display, name)
		                             : s->display) ? 1 : 0;
	}
	memset(c, 0, offsetof(struct cbctx, buf));
	c->s = s;
	c->child = child;
	c->given = name;
	struct fastrm_rmtree_opts o;
	rmtree_opts(&o, c);
	/* refusals are rank 0's, with rm's words, before anything is read (a
	 * child is never "." nor "..": its shard leaves them out) */
	o.flags |= FASTRM_RMTREE_ALLOW_DOTS | FASTRM_RMTREE_NO_PRESERVE_ROOT;
	/* with other ranks, a directory may be given away to them (with one
	 * rank there is no one to give to, and @ask costs a lock an entry) */
	if (nranks > 1 && s->task >= 0)
		o.ask = cb_ask;
	char *paths[] = { (char *)name, NULL };
	int rc = fastrm_rmtreeat(dirfd, paths, &o, NULL);
	if (rc < 0 && failure(-rc, child ? shown(c, name) : s->display))
		c->failures++;
	if (rc < 0)
		c->fails_over = true; /* ended early: what it kept is unknown */
	gifts_done(c);
	unsigned long long f = c->failures;
	free(c);
	return f;
}

/* Remove subtree @s (the directory comps[k-1] and all below it).  Returns
 * the failures it counted. */
static unsigned long long remove_subtree(struct subtree *s)
{
	int pfd = open_chain(s, s->k - 1);
	if (pfd == -1)
		return failure(errno, s->display) ? 1 : 0;
	unsigned long long f = remove_tree_at(s, pfd, s->comps[s->k - 1], false);
	if (pfd != AT_FDCWD)
		close(pfd);
	return f;
}

/* The shard of a name: FNV-1a, the same on every rank. */
static int shard_of(const char *name, int nshards)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return (int)(h % (uint32_t)nshards);
}

/* Task @s of kind TASK_FILES or TASK_ENTRIES: remove what directory
 * comps[k-1] holds, in its shard (its subdirectories whole, for
 * TASK_ENTRIES).  Each shard reads the whole directory and leaves the
 * others' names: an entry that stays is read once by every pass, so
 * nothing of a shard is missed while the others remove theirs.  Returns
 * the failures counted. */
static unsigned long long remove_entries(struct subtree *s)
{
	int fd = open_chain(s, s->k);
	if (fd < 0)
		return failure(errno, s->display) ? 1 : 0;
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		int e = errno;
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return failure(e, s->display) ? 1 : 0;
	}
	bool dirs = s->kind == TASK_ENTRIES;
	unsigned long long f = 0;
	char path[PATH_MAX * 3];
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (de->d_type == DT_DIR && !dirs) ||
		    (s->nshards > 1 && shard_of(de->d_name, s->nshards) != s->shard))
			continue;
		if (de->d_type == DT_DIR) {
			f += remove_tree_at(s, fd, de->d_name, true);
			continue;
		}
		/* the path is made only to be said: not for each entry */
		if (unlinkat(fd, de->d_name, 0) == 0) {
			COUNT(cnt.files);
			if (opt.verbose || opt.manifest) {
				pthread_mutex_lock(&say_mu);
				child_path(path, sizeof path, s->display, de->d_name);
				if (opt.verbose)
					say_removed(false, path);
				record(path, de->d_type == DT_LNK ? S_IFLNK : de->d_type == DT_REG ? S_IFREG
				             : de->d_type == DT_UNKNOWN ? 0 : DTTOIF(de->d_type),
				       FASTRM_OUTCOME_REMOVED, 0, NULL);
				pthread_mutex_unlock(&say_mu);
			}
		} else if (errno == EISDIR) {
			/* a directory after all (no d_type, or made meanwhile) */
			if (dirs)
				f += remove_tree_at(s, fd, de->d_name, true);
		} else if (failure(errno, child_path(path, sizeof path, s->display, de->d_name))) {
			f++;
		}
	}
	closedir(d);
	close(fd);
	return f;
}

/* ------------------------------------------------ rank 0: the top */

struct node {
	char *name;       /* in its parent; an operand: as given */
	long parent;      /* -1: an operand */
	uint64_t dev, ino;
	int depth;        /* 0: an operand */
	bool task;        /* removed as a whole by a rank */
	bool files;       /* read by rank 0: its files are a task (files
	                     only: its subdirectories are nodes) */
	bool entries;     /* too large for rank 0 to read: its entries are
	                     removed by shards on every rank (TASK_ENTRIES),
	                     it by rank 0 at the end */
	bool kept;        /* something in it was left */
	unsigned nfiles;  /* files rank 0 saw in it */
	size_t pending;   /* its tasks and child nodes not yet done: at 0
	                     rank 0 removes it (a node read) */
	long walker;      /* the task whose walk kept it, above a subtree it
	                     gave away, and may still be in it (-1: none) */
};

static struct node *nodes;
static size_t nnodes, nodecap;

static long add_node(char *name, long parent, const struct stat *sb)
{
	if (nnodes == nodecap) {
		size_t cap = nodecap ? 2 * nodecap : 256;
		struct node *n = realloc(nodes, cap * sizeof *n);
		if (!n) {
			free(name);
			return -1;
		}
		nodes = n;
		nodecap = cap;
	}
	nodes[nnodes] = (struct node){ name, parent, (uint64_t)sb->st_dev,
	                               (uint64_t)sb->st_ino,
	                               parent < 0 ? 0 : nodes[parent].depth + 1,
	                               false, false, false, false, 0, 0, -1 };
	return (long)nnodes++;
}

/* Subtree @s of node @i: its chain from the operand, and its path. */
static void subtree_of(long i, struct subtree *s)
{
	long chain[DEPTH_MAX];
	int k = 0;
	for (long j = i; j >= 0 && k < DEPTH_MAX; j = nodes[j].parent)
		chain[k++] = j;
	s->k = k;
	s->kind = TASK_TREE;
	s->shard = 0;
	s->nshards = 1;
	size_t len = 0;
	s->display[0] = '\0';
	for (int c = 0; c < k; c++) {
		const struct node *n = &nodes[chain[k - 1 - c]];
		s->comps[c] = n->name;
		s->ids[c][0] = n->dev;
		s->ids[c][1] = n->ino;
		if (c == k - 1)
			s->prefix = len;
		if (c > 0 && len > 0 && s->display[len - 1] != '/' && len < sizeof s->display - 1)
			s->display[len++] = '/';
		if (c == k - 1)
			s->prefix = len;
		int w = snprintf(s->display + len, sizeof s->display - len, "%s", n->name);
		if (w > 0)
			len += (size_t)w < sizeof s->display - len ? (size_t)w : sizeof s->display - len - 1;
	}
	if (k == 1)
		s->prefix = 0;
}

/* Shards of a directory split over the ranks. */
static int shards(void)
{
	return nranks < SHARDS_MAX ? nranks : SHARDS_MAX;
}

/* The tasks of node @i: none for a directory rank 0 read without files
 * (its rmdir is rank 0's, at the end). */
static int node_tasks(long i)
{
	const struct node *n = &nodes[i];
	if (n->task)
		return 1;
	if (n->entries)
		return shards();
	if (n->files)
		return n->nfiles >= SHARD_MIN_FILES ? shards() : 1;
	return 0;
}

/* Read directory @i: if it has at most EXPAND_MAX entries, make its
 * subdirectories nodes and leave its files to a task (or to shards);
 * with more, and several ranks, leave all its entries to shards; else
 * leave it to be a task.  Returns whether it was read into nodes (or
 * left to shards). */
static bool expand(long i)
{
	struct subtree s;
	subtree_of(i, &s);
	int fd = open_chain(&s, s.k);
	if (fd < 0)
		return false; /* a task then: its rank reports what it finds */
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return false;
	}
	struct ent {
		char *name;
		bool dir;
		ino_t ino;
	} *v = malloc(EXPAND_MAX * sizeof *v);
	size_t n = 0;
	bool small = v != NULL;
	struct dirent *de;
	while (small && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == EXPAND_MAX) {
			small = false;
			break;
		}
		bool dir = de->d_type == DT_DIR;
		if (de->d_type == DT_UNKNOWN) {
			struct stat sb;
			dir = fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
			      S_ISDIR(sb.st_mode);
		}
		if (!(v[n].name = strdup(de->d_name)))
			small = false;
		else
			v[n].ino = de->d_ino, v[n++].dir = dir;
	}
	closedir(d);
	if (!small || nnodes + n > NODES_MAX) {
		for (size_t j = 0; j < n; j++)
			free(v[j].name);
		free(v);
		close(fd);
		/* a directory this large is a task of its own on one client,
		 * one unlink after another: split it over the ranks */
		if (!small && n == EXPAND_MAX && shards() > 1) {
			nodes[i].entries = true;
			return true;
		}
		return false;
	}
	char path[PATH_MAX * 3];
	for (size_t j = 0; j < n; j++) {
		child_path(path, sizeof path, s.display, v[j].name);
		if (v[j].dir) {
			struct stat sb;
			if (opt.check_path && !opt.xdev) {
				/* nothing to compare but the device, which is the
				 * parent's for a rank to check: no stat (a round
				 * trip each, on a network file system) */
				memset(&sb, 0, sizeof sb);
				sb.st_mode = S_IFDIR;
				sb.st_dev = (dev_t)nodes[i].dev;
				sb.st_ino = v[j].ino;
				if (add_node(v[j].name, i, &sb) < 0) {
					error_msg(ENOMEM, "cannot remove %s", quote_always(0, path));
					COUNT(cnt.failures);
					nodes[i].kept = true;
				}
				continue;
			}
			if (fstatat(fd, v[j].name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
				if (failure(errno, path))
					nodes[i].kept = true;
				free(v[j].name);
			} else if (!S_ISDIR(sb.st_mode)) {
				nodes[i].files = true; /* replaced by a file meanwhile */
				free(v[j].name);
			} else if (opt.xdev && sb.st_dev != (dev_t)nodes[i].dev) {
				error_msg(0, "skipping %s, since it's on a different device",
				          quote_always(0, path));
				COUNT(cnt.failures);
				nodes[i].kept = true;
				free(v[j].name);
			} else if (add_node(v[j].name, i, &sb) < 0) {
				error_msg(ENOMEM, "cannot remove %s", quote_always(0, path));
				COUNT(cnt.failures);
				nodes[i].kept = true;
			}
			continue;
		}
		/* a file: removed by the task of this directory's files, on
		 * whichever rank, at once with the others (here it would be one
		 * round trip after another) */
		nodes[i].files = true;
		nodes[i].nfiles++;
		free(v[j].name);
	}
	free(v);
	close(fd);
	return true;
}

/* Remove the directory of @s (a node rank 0 read), whose tasks are all
 * done: rmdir, or (if it got entries meanwhile) the whole of it again
 * through the library.  Runs on a slot of rank 0.  Returns the failures
 * counted (then the directory above is kept). */
static unsigned long long remove_dir(struct subtree *s)
{
	int pfd = open_chain(s, s->k - 1);
	if (pfd == -1)
		return failure(errno, s->display) ? 1 : 0;
	const char *name = s->comps[s->k - 1];
	struct stat sb;
	int err = 0;
	unsigned long long f = 0;
	if (fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		err = errno;
	else if (sb.st_dev != (dev_t)s->ids[s->k - 1][0] ||
	         (!opt.check_path && (uint64_t)sb.st_ino != s->ids[s->k - 1][1]))
		err = ENOENT; /* replaced: not what was read (rank 0's own view) */
	else if (unlinkat(pfd, name, AT_REMOVEDIR) < 0)
		err = errno;
	if (!err) {
		COUNT(cnt.dirs);
		pthread_mutex_lock(&say_mu);
		if (opt.verbose)
			say_removed(true, s->display);
		record(s->display, S_IFDIR, FASTRM_OUTCOME_REMOVED, 0, NULL);
		pthread_mutex_unlock(&say_mu);
	} else if (err == ENOTEMPTY || err == EEXIST) {
		/* new entries came: remove them all, as a task */
		f = remove_subtree(s);
	} else if (failure(err, s->display)) {
		f = 1;
	}
	if (pfd != AT_FDCWD)
		close(pfd);
	return f;
}

static bool last_is_dots(const char *path)
{
	size_t end = strlen(path);
	while (end > 1 && path[end - 1] == '/')
		end--;
	size_t b = end;
	while (b > 0 && path[b - 1] != '/')
		b--;
	size_t n = end - b;
	return (n == 1 && path[b] == '.') || (n == 2 && path[b] == '.' && path[b + 1] == '.');
}

/* An operand: refused as rm refuses it, removed if not a directory, else
 * a node.  Returns the node, or -1. */
static long operand(const char *a, const struct stat *root)
{
	struct stat sb;
	if (last_is_dots(a)) {
		error_msg(0, "refusing to remove '.' or '..' directory: skipping %s",
		          quote_always(0, a));
		COUNT(cnt.failures);
		record(a, S_IFDIR, FASTRM_OUTCOME_FAILED, EINVAL, "refused");
		return -1;
	}
	if (lstat(a, &sb) < 0) {
		failure(errno, a);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		if (unlink(a) == 0) {
			COUNT(cnt.files);
			if (opt.verbose)
				say_removed(false, a);
			record(a, sb.st_mode, FASTRM_OUTCOME_REMOVED, 0, NULL);
		} else {
			failure(errno, a);
		}
		return -1;
	}
	if (opt.preserve_root && root && sb.st_dev == root->st_dev && sb.st_ino == root->st_ino) {
		if (strcmp(a, "/") == 0)
			error_msg(0, "it is dangerous to operate recursively on %s",
			          quote_always(0, a));
		else
			error_msg(0, "it is dangerous to operate recursively on %s (same as %s)",
			          quote_always(0, a), quote_always(1, "/"));
		error_msg(0, "use --no-preserve-root to override this failsafe");
		COUNT(cnt.failures);
		record(a, S_IFDIR, FASTRM_OUTCOME_FAILED, EBUSY, "refused");
		return -1;
	}
	if (opt.preserve_root == 2) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s/..", a);
		struct stat pb;
		if (stat(parent, &pb) == 0 && pb.st_dev != sb.st_dev) {
			error_msg(0, "skipping %s, since it's on a different device",
			          quote_always(0, a));
			error_msg(0, "and --preserve-root=all is in effect");
			COUNT(cnt.failures);
			record(a, S_IFDIR, FASTRM_OUTCOME_FAILED, EXDEV, "refused");
			return -1;
		}
	}
	char *name = strdup(a);
	long i = name ? add_node(name, -1, &sb) : -1;
	if (i < 0) {
		error_msg(ENOMEM, "cannot remove %s", quote_always(0, a));
		COUNT(cnt.failures);
	}
	return i;
}

/* ------------------------------------------------- the task messages */

/* A task on the wire: int64 id, int32 k, int32 kind, int32 shard, int32
 * nshards, k (dev, ino) pairs, then the display path and the k component
 * names, each NUL-terminated. */
static size_t pack(long id, const struct subtree *s, char *buf, size_t cap)
{
	size_t off = 0;
	int64_t id64 = id;
	int32_t k = s->k;
	memcpy(buf + off, &id64, 8), off += 8;
	memcpy(buf + off, &k, 4), off += 4;
	int32_t v[3] = { s->kind, s->shard, s->nshards };
	memcpy(buf + off, v, sizeof v), off += sizeof v;
	memcpy(buf + off, s->ids, (size_t)k * 16), off += (size_t)k * 16;
	uint64_t prefix = s->prefix;
	memcpy(buf + off, &prefix, 8), off += 8;
	size_t dl = strlen(s->display) + 1;
	if (off + dl > cap)
		return 0;
	memcpy(buf + off, s->display, dl), off += dl;
	for (int i = 0; i < k; i++) {
		size_t l = strlen(s->comps[i]) + 1;
		if (off + l > cap)
			return 0;
		memcpy(buf + off, s->comps[i], l), off += l;
	}
	return off;
}

static long unpack(const char *buf, size_t len, struct subtree *s)
{
	size_t off = 0;
	int64_t id;
	int32_t k;
	uint64_t prefix;
	int32_t v[3];
	if (len < 24)
		return -1;
	memcpy(&id, buf, 8), off += 8;
	memcpy(&k, buf + off, 4), off += 4;
	memcpy(v, buf + off, sizeof v), off += sizeof v;
	if (v[0] < TASK_TREE || v[0] > TASK_ENTRIES || v[2] < 1 || v[2] > SHARDS_MAX ||
	    v[1] < 0 || v[1] >= v[2])
		return -1;
	s->kind = v[0];
	s->shard = v[1];
	s->nshards = v[2];
	if (k < 1 || k > DEPTH_MAX || off + (size_t)k * 16 + 8 > len)
		return -1;
	s->k = k;
	memcpy(s->ids, buf + off, (size_t)k * 16), off += (size_t)k * 16;
	memcpy(&prefix, buf + off, 8), off += 8;
	s->prefix = (size_t)prefix;
	size_t dl = strnlen(buf + off, len - off);
	if (off + dl >= len || dl >= sizeof s->display)
		return -1;
	memcpy(s->display, buf + off, dl + 1);
	off += dl + 1;
	/* the names, copied: the message's buffer is used again */
	size_t nl = len - off;
	if (nl > sizeof s->names)
		return -1;
	memcpy(s->names, buf + off, nl);
	size_t at = 0;
	for (int i = 0; i < k; i++) {
		size_t l = strnlen(s->names + at, nl - at);
		if (at + l >= nl)
			return -1;
		s->comps[i] = s->names + at;
		at += l + 1;
	}
	return (long)id;
}

#define MSG_MAX (28 + DEPTH_MAX * 16 + 8 + 3 * PATH_MAX)

/* ---------------------------------------------------------------- slots */

/* Each rank removes up to nslots tasks at once, each on a thread of its
 * own with its own pool: a small subtree (a package of a few files) gives
 * its pool nothing to share, and on a file system whose every request is
 * a round trip, one removal at a time would leave the client idle.  Only
 * the rank's main thread calls MPI. */
#define SLOTS_MAX 64

struct job {
	struct subtree s;
	long id;
};

struct report {
	int64_t id;
	uint64_t failures;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct report done[SLOTS_MAX]; /* finished, not yet reported */
	unsigned ndone, running, nslots;
} sl = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { { 0, 0 } }, 0, 0, 1 };

static void *slot_main(void *arg)
{
	struct job *j = arg;
	unsigned long long f = j->s.kind == TASK_TREE    ? remove_subtree(&j->s)
	                       : j->s.kind == TASK_RMDIR ? remove_dir(&j->s)
	                                                 : remove_entries(&j->s);
	pthread_mutex_lock(&sl.mu);
	sl.done[sl.ndone++] = (struct report){ j->id, f };
	sl.running--;
	pthread_cond_signal(&sl.cv);
	pthread_mutex_unlock(&sl.mu);
	free(j);
	return NULL;
}

/* Start task @j on a slot (the caller saw one free).  Without a thread
 * for it, it runs here. */
static void slot_start(struct job *j)
{
	pthread_attr_t attr;
	pthread_t t;
	pthread_mutex_lock(&sl.mu);
	sl.running++;
	pthread_mutex_unlock(&sl.mu);
	bool ok = pthread_attr_init(&attr) == 0;
	if (ok) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ok = pthread_create(&t, &attr, slot_main, j) == 0;
		pthread_attr_destroy(&attr);
	}
	if (!ok)
		slot_main(j);
}

/* Take the reports of the tasks finished into @out (at most SLOTS_MAX);
 * *@running: the tasks still running.  Waits up to @wait_ns for one to
 * finish when there is none to report (0: does not wait). */
static unsigned slot_reports(struct report *out, unsigned *running, long wait_ns)
{
	pthread_mutex_lock(&sl.mu);
	if (!sl.ndone && sl.running && wait_ns) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += wait_ns;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sl.cv, &sl.mu, &ts);
	}
	unsigned n = sl.ndone;
	memcpy(out, sl.done, n * sizeof *out);
	sl.ndone = 0;
	*running = sl.running;
	pthread_mutex_unlock(&sl.mu);
	return n;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
}

/* --stats: the most threads this rank had at once (MPI's own included),
 * sampled from /proc/self/status every 10 ms or so by the main thread. */
static unsigned peak_threads;

static void sample_threads(void)
{
	static long long last;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	if (!opt.stats || ms - last < 10)
		return;
	last = ms;
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	char line[256];
	unsigned n;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %u", &n) == 1) {
			if (n > peak_threads)
				peak_threads = n;
			break;
		}
	fclose(f);
}

/* ------------------------------------------------------------ messages */

/* A worker rank to rank 0 (TAG_ASK): the tasks it finished, the subtrees
 * it gave away (ngift, each a uint32 length and a gift's data, before the
 * reports they belong to), and how many tasks it wants more (0: none now;
 * with bye: it is done and leaves).  Rank 0 answers only a want: at once
 * when it has tasks, else once some come (given away by a rank) or all
 * are done (TAG_STOP). */
struct ask_head {
	int32_t want, bye, nrep, ngift;
};
#define ASK_MAX (sizeof(struct ask_head) + SLOTS_MAX * sizeof(struct report))

/* Rank 0 to a worker rank: TAG_TASK with int32 count and, per task, a
 * uint32 length and the packed task; TAG_STOP: every task is done; or
 * TAG_GIVE with int32 n: give n subtrees away (0: no more). */
#define TASKS_MAX (4 + SLOTS_MAX * (4 + MSG_MAX))

/* Send the gifts @g (freed) and the reports, in one message. */
static void send_ask(int want, bool bye, const struct report *rep, unsigned n,
                     struct gift *g)
{
	struct ask_head h = { want, bye, (int32_t)n, 0 };
	size_t size = sizeof h + n * sizeof *rep;
	for (struct gift *x = g; x; x = x->next)
		size += 4 + x->len;
	char *buf = malloc(size);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1); /* a gift lost would leave its subtree */
	size_t off = sizeof h;
	for (struct gift *next; g; g = next) {
		next = g->next;
		uint32_t l = (uint32_t)g->len;
		memcpy(buf + off, &l, 4);
		memcpy(buf + off + 4, g->data, g->len);
		off += 4 + g->len;
		h.ngift++;
		free(g);
	}
	memcpy(buf, &h, sizeof h);
	memcpy(buf + off, rep, n * sizeof *rep);
	off += n * sizeof *rep;
	MPI_Send(buf, (int)off, MPI_BYTE, 0, TAG_ASK, MPI_COMM_WORLD);
	free(buf);
}

/* ---------------------------------------------------- rank 0: hand out */

/* A task as rank 0 holds it: what of which node, on which rank. */
struct task {
	long node;
	int kind, shard, nshards;
	int rank;         /* where it went (-1: not yet) */
	bool gave;        /* its walk gave subtrees away */
};

static struct {
	struct task *tasks;
	size_t ntasks, cap, done, handed;
	/* Queues of tasks (indices into order[], [head, tail)): queue r <
	 * nranks holds rank r's shards, queue nranks the tasks any rank
	 * takes. */
	size_t *order, *head, *tail;
	/* Subtrees given away, a queue of tasks any rank takes: [ghead,
	 * gtail) of gq. */
	size_t *gq, ghead, gtail, gcap;
	bool *asked;      /* rank r has asked for tasks: what is left of its
	                     shards then may go to others */
	size_t *out;      /* tasks on rank r, not yet done */
	int *waiting;     /* tasks rank r asked for and was not sent yet */
	int *give_sent;   /* the last TAG_GIVE sent to rank r */
	struct timespec give_at; /* when */
	size_t gift_base; /* the nodes from here on were made from gifts */
	unsigned long long gifts; /* subtrees given away */
	long *ready;      /* nodes read whose rmdir may go now */
	size_t nready, ready_cap;
	int active;       /* worker ranks still at work */
	char *buf;        /* TASKS_MAX: a message being made */
	char *scratch;    /* MSG_MAX: a task packed to see that it fits */
	time_t last;
} co;

/* The job id of the rmdir of node @i (tasks' ids are >= 0), and back. */
#define RMDIR_ID(i) (-2 - (long)(i))
#define RMDIR_NODE(id) (-2 - (id))

/* One thing node @i waited for is done: at the last, a node read is
 * ready for its rmdir, or (if something in it was left) kept, which is
 * one thing done for its parent, and so on up. */
static void node_step(long i)
{
	while (i >= 0 && --nodes[i].pending == 0) {
		if (!nodes[i].kept) {
			co.ready[co.nready++] = i;
			return;
		}
		if (opt.manifest) {
			/* kept without a word, as rm keeps the directories above
			 * a failure: the manifest says so */
			struct subtree s;
			subtree_of(i, &s);
			record(s.display, S_IFDIR, FASTRM_OUTCOME_KEPT, 0, "below");
		}
		long p = nodes[i].parent;
		if (p >= 0)
			nodes[p].kept = true;
		i = p;
	}
}

/* Node @i is gone, or @kept. */
static void node_done(long i, bool kept)
{
	long p = nodes[i].parent;
	if (p < 0)
		return;
	if (kept)
		nodes[p].kept = true;
	node_step(p);
}

static void task_done(long t, unsigned long long failures)
{
	if (t < 0) { /* the rmdir of a node read */
		node_done(RMDIR_NODE(t), failures != 0);
		return;
	}
	struct task *k = &co.tasks[t];
	long id = k->node;
	co.done++;
	if (k->rank >= 0)
		co.out[k->rank]--;
	if (k->gave) {
		/* the directories its walk kept above what it gave: one thing
		 * (the walk) less to wait for */
		for (size_t i = co.gift_base; i < nnodes; i++)
			if (nodes[i].walker == t) {
				nodes[i].walker = -1;
				node_step((long)i);
			}
	}
	if (k->kind == TASK_TREE && nodes[id].task) {
		node_done(id, failures != 0);
	} else {
		/* what it held (a subtree it gave away: what the walk left of
		 * it); the directory waits for the rest */
		if (failures)
			nodes[id].kept = true;
		node_step(id);
	}
	if (opt.progress && (time(NULL) != co.last || co.done == co.ntasks)) {
		co.last = time(NULL);
		SAY(error_msg(0, "%zu of %zu subtrees removed", co.done, co.ntasks));
	}
}

/* Room for one task more, and its place in the queue of gifts. */
static bool task_room(void)
{
	if (co.ntasks == co.cap) {
		size_t cap = co.cap ? 2 * co.cap : 64;
		struct task *t = realloc(co.tasks, cap * sizeof *t);
		if (!t)
			return false;
		co.tasks = t;
		co.cap = cap;
	}
	if (co.gtail == co.gcap) {
		size_t cap = co.gcap ? 2 * co.gcap : 64;
		size_t *q = realloc(co.gq, cap * sizeof *q);
		if (!q)
			return false;
		co.gq = q;
		co.gcap = cap;
	}
	if (co.ready_cap < nnodes + DEPTH_MAX) {
		size_t cap = 2 * (nnodes + DEPTH_MAX);
		long *r = realloc(co.ready, cap * sizeof *r);
		if (!r)
			return false;
		co.ready = r;
		co.ready_cap = cap;
	}
	return true;
}

/* The child of node @p named @name that a gift made (-1: none). */
static long gift_child(long p, const char *name)
{
	for (size_t i = co.gift_base; i < nnodes; i++)
		if (nodes[i].parent == p && strcmp(nodes[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* A gift from the walk of task @t (a rank's message, or rank 0's own):
 * a subtree given away becomes a task any rank takes, below nodes for
 * the directories the walk kept above it (each waits for the walk, and
 * for what is below it); a directory kept by a failure below it stays. */
static void take_gift(const char *d, size_t len)
{
	int64_t t;
	int32_t h[2];
	if (len < 16)
		return;
	memcpy(&t, d, 8);
	memcpy(h, d + 8, 8);
	int what = h[0], n = h[1];
	if (t < 0 || (size_t)t >= co.ntasks || n < 1 || n >= DEPTH_MAX ||
	    16 + (size_t)n * 16 >= len || d[len - 1] != '\0')
		return;
	const char *names[DEPTH_MAX];
	const char *q = d + 16 + (size_t)n * 16;
	for (int i = 0; i < n; i++) {
		if (q >= d + len)
			return;
		names[i] = q;
		q += strlen(q) + 1;
	}
	long p = co.tasks[t].node;
	if (what == GIFT_KEPT) {
		for (int i = 0; i < n && p >= 0; i++)
			p = gift_child(p, names[i]);
		if (p >= 0)
			nodes[p].kept = true;
		return;
	}
	if (what != GIFT_TREE || !task_room() || nodes[p].depth + n >= DEPTH_MAX)
		goto lost; /* (task_room() may move co.tasks) */
	/* a task's subtree that gave: its directory is now rank 0's to
	 * remove, once its walk and what it gave are done */
	nodes[p].task = false;
	co.tasks[t].gave = true;
	for (int i = 0; i < n; i++) {
		long c = i < n - 1 ? gift_child(p, names[i]) : -1;
		if (c < 0) {
			struct stat sb;
			memset(&sb, 0, sizeof sb);
			sb.st_mode = S_IFDIR;
			uint64_t id[2];
			memcpy(id, d + 16 + (size_t)i * 16, 16);
			sb.st_dev = (dev_t)id[0];
			sb.st_ino = (ino_t)id[1];
			char *name = strdup(names[i]);
			if (!name || (c = add_node(name, p, &sb)) < 0)
				goto lost;
			nodes[p].pending++;
			nodes[c].pending = 1; /* the walk, or (the last) its task */
			if (i < n - 1)
				nodes[c].walker = t;
			else
				nodes[c].task = true;
		}
		p = c;
	}
	co.tasks[co.ntasks] = (struct task){ p, TASK_TREE, 0, 1, -1, false };
	co.gq[co.gtail++] = co.ntasks++;
	co.gifts++;
	return;
lost:
	/* the walk kept it, and rank 0 cannot take it (no memory): said,
	 * and the directories above it stay */
	{
		struct subtree s;
		subtree_of(co.tasks[t].node, &s);
		char path[PATH_MAX * 3];
		size_t pl = (size_t)snprintf(path, sizeof path, "%s", s.display);
		for (int i = 0; i < n && pl < sizeof path; i++)
			pl += (size_t)snprintf(path + pl, sizeof path - pl, "/%s", names[i]);
		SAY(error_msg(ENOMEM, "cannot remove %s", quote_always(0, path)));
		COUNT(cnt.failures);
		nodes[p].kept = true;
	}
}

/* The next task for rank @r (taken, or only looked at): its own shards, then the tasks for any
 * rank, then the subtrees given away, then the shards of another rank
 * that has asked already (not before: at the start rank 0 would take
 * them all, and run a directory's shards on one client), from the end of
 * its queue (that rank takes them from the front, so that two shards of
 * one directory seldom run on one client at once).  -1: none left. */
static long next_task(int r, bool take)
{
	int any = nranks;
	if (co.head[r] < co.tail[r])
		return (long)co.order[take ? co.head[r]++ : co.head[r]];
	if (co.head[any] < co.tail[any])
		return (long)co.order[take ? co.head[any]++ : co.head[any]];
	if (co.ghead < co.gtail)
		return (long)co.gq[take ? co.ghead++ : co.ghead];
	for (int i = 1; i < nranks; i++) {
		int o = (r + i) % nranks;
		if (co.asked[o] && co.head[o] < co.tail[o])
			return (long)co.order[take ? --co.tail[o] : co.tail[o] - 1];
	}
	return -1;
}

/* Whether no task is left to hand out, nor can come: every queue empty,
 * and every task handed out done (a walk still running may give). */
static bool all_done(void)
{
	for (int q = 0; q <= nranks; q++)
		if (co.head[q] < co.tail[q])
			return false;
	return co.ghead == co.gtail && co.done == co.handed;
}

/* The rmdir of a node read whose tasks and children are done, as a job
 * (rank 0's; NULL: none ready). */
static struct job *next_rmdir(void)
{
	while (co.nready) {
		long i = co.ready[--co.nready];
		struct job *j = malloc(sizeof *j);
		if (!j) {
			failure(ENOMEM, nodes[i].name);
			node_done(i, true);
			continue;
		}
		j->id = RMDIR_ID(i);
		subtree_of(i, &j->s);
		j->s.kind = TASK_RMDIR;
		j->s.task = -1;
		return j;
	}
	return NULL;
}

/* The next task for rank @r whose path fits a message, as a job (NULL:
 * none left). */
static struct job *next_job(int r)
{
	long t;
	while ((t = next_task(r, true)) >= 0) {
		struct task *k = &co.tasks[t];
		k->rank = r;
		co.handed++;
		co.out[r]++;
		struct job *j = malloc(sizeof *j);
		if (!j) {
			failure(ENOMEM, nodes[k->node].name);
			task_done(t, 1);
			continue;
		}
		j->id = t;
		subtree_of(k->node, &j->s);
		j->s.kind = k->kind;
		j->s.shard = k->shard;
		j->s.nshards = k->nshards;
		j->s.task = t;
		if (pack(t, &j->s, co.scratch, MSG_MAX) == 0) { /* too long a path */
			if (k->shard == 0) /* said once for its shards */
				failure(ENAMETOOLONG, j->s.display);
			task_done(t, 1);
			free(j);
			continue;
		}
		return j;
	}
	return NULL;
}

/* Send rank @r up to @want tasks; returns how many (0: none sent). */
static int send_tasks(int r, int want)
{
	int32_t count = 0;
	size_t off = 4;
	struct job *j;
	while (count < want && count < SLOTS_MAX && (j = next_job(r)) != NULL) {
		uint32_t l = (uint32_t)pack(j->id, &j->s, co.buf + off + 4, MSG_MAX);
		memcpy(co.buf + off, &l, 4);
		off += 4 + l;
		count++;
		free(j);
	}
	if (count) {
		memcpy(co.buf, &count, 4);
		MPI_Send(co.buf, (int)off, MPI_BYTE, r, TAG_TASK, MPI_COMM_WORLD);
	}
	return count;
}

/* A worker rank's message: its gifts, its reports, then up to @want
 * tasks, or (none now) a wait for them, or stop. */
static void answer(int source, const char *msg, int len)
{
	struct ask_head h;
	if (len < (int)sizeof h || source <= 0 || source >= nranks)
		return;
	memcpy(&h, msg, sizeof h);
	size_t off = sizeof h;
	for (int i = 0; i < h.ngift && off + 4 <= (size_t)len; i++) {
		uint32_t l;
		memcpy(&l, msg + off, 4);
		if (off + 4 + l > (size_t)len)
			return;
		take_gift(msg + off + 4, l);
		off += 4 + l;
	}
	for (int i = 0; i < h.nrep && off + sizeof(struct report) <= (size_t)len; i++) {
		struct report r;
		memcpy(&r, msg + off, sizeof r);
		off += sizeof r;
		if (r.id >= 0 && (uint64_t)r.id < co.ntasks)
			task_done((long)r.id, r.failures);
	}
	co.asked[source] = true;
	if (h.bye) {
		co.active--;
		return;
	}
	if (h.want > 0 && send_tasks(source, h.want) == 0)
		co.waiting[source] = h.want;
}

/* Answer every message waiting, without blocking. */
static void answer_waiting(char **msg, int *cap)
{
	for (;;) {
		int flag, len;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			return;
		MPI_Get_count(&st, MPI_BYTE, &len);
		if (len > *cap) {
			char *m = realloc(*msg, (size_t)len);
			if (!m)
				MPI_Abort(MPI_COMM_WORLD, 1);
			*msg = m;
			*cap = len;
		}
		MPI_Recv(*msg, len, MPI_BYTE, st.MPI_SOURCE, TAG_ASK, MPI_COMM_WORLD,
		         MPI_STATUS_IGNORE);
		answer(st.MPI_SOURCE, *msg, len);
	}
}

/* Ask the ranks with tasks running to give @n subtrees away (0: no
 * more), rank 0 itself too; again every GIVE_AGAIN_MS while still
 * wanted (a walk may have had no directory left to enter). */
#define GIVE_AGAIN_MS 50
static void ask_gifts(int n)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (now.tv_sec - co.give_at.tv_sec) * 1000 +
	          (now.tv_nsec - co.give_at.tv_nsec) / 1000000;
	bool again = n > 0 && ms >= GIVE_AGAIN_MS;
	for (int r = 0; r < nranks; r++) {
		int want = co.out[r] ? n : 0;
		if (want == co.give_sent[r] && !(again && want))
			continue;
		co.give_sent[r] = want;
		if (r == 0) {
			__atomic_store_n(&give_want, want, __ATOMIC_RELAXED);
			continue;
		}
		int32_t w = want;
		MPI_Send(&w, 1, MPI_INT32_T, r, TAG_GIVE, MPI_COMM_WORLD);
	}
	if (again)
		co.give_at = now;
}

/* Rank 0 (with one rank too): remove tasks on its slots, and hand the
 * others out as the worker ranks ask, until every task is done and every
 * worker rank has left. */
static void coordinate(struct task *tasks, size_t ntasks)
{
	co.tasks = tasks;
	co.ntasks = co.cap = ntasks;
	co.active = nranks - 1;
	co.last = time(NULL);
	co.gift_base = nnodes;
	co.buf = malloc(TASKS_MAX);
	co.scratch = malloc(MSG_MAX);
	co.order = malloc((ntasks ? ntasks : 1) * sizeof *co.order);
	co.head = calloc((size_t)nranks + 1, sizeof *co.head);
	co.tail = calloc((size_t)nranks + 1, sizeof *co.tail);
	co.asked = calloc((size_t)nranks, sizeof *co.asked);
	co.out = calloc((size_t)nranks, sizeof *co.out);
	co.waiting = calloc((size_t)nranks, sizeof *co.waiting);
	co.give_sent = calloc((size_t)nranks, sizeof *co.give_sent);
	co.ready_cap = nnodes ? nnodes : 1;
	co.ready = malloc(co.ready_cap * sizeof *co.ready);
	int msg_cap = (int)ASK_MAX;
	char *msg = malloc(ASK_MAX);
	if (!co.buf || !co.scratch || !co.order || !co.head || !co.tail || !co.asked ||
	    !co.out || !co.waiting || !co.give_sent || !co.ready || !msg)
		MPI_Abort(MPI_COMM_WORLD, 1);
	clock_gettime(CLOCK_MONOTONIC, &co.give_at);
	co.asked[0] = true;
	/* what each node waits for: its tasks, and its child nodes; a node
	 * read that waits for nothing is ready (deepest first: a child's
	 * node comes after its parent's) */
	for (size_t t = 0; t < ntasks; t++)
		nodes[tasks[t].node].pending++;
	for (size_t i = 0; i < nnodes; i++)
		if (nodes[i].parent >= 0)
			nodes[nodes[i].parent].pending++;
	long *zero = malloc((nnodes ? nnodes : 1) * sizeof *zero);
	size_t nzero = 0;
	if (!zero)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (size_t i = nnodes; i-- > 0;)
		if (!nodes[i].task && nodes[i].pending == 0)
			zero[nzero++] = (long)i; /* a list first: node_step may end others' wait */
	for (size_t z = 0; z < nzero; z++) {
		nodes[zero[z]].pending = 1;
		node_step(zero[z]);
	}
	free(zero);
	/* the queues: each one's length, its place in order[], its tasks */
#define QUEUE_OF(t) (tasks[t].nshards > 1 ? tasks[t].shard % nranks : nranks)
	for (size_t t = 0; t < ntasks; t++)
		co.tail[QUEUE_OF(t)]++;
	size_t at = 0;
	for (int q = 0; q <= nranks; q++) {
		size_t n = co.tail[q];
		co.head[q] = co.tail[q] = at;
		at += n;
	}
	for (size_t t = 0; t < ntasks; t++)
		co.order[co.tail[QUEUE_OF(t)]++] = t;
#undef QUEUE_OF
	for (;;) {
		sample_threads();
		if (nranks > 1)
			answer_waiting(&msg, &msg_cap);
		struct report rep[SLOTS_MAX];
		unsigned running;
		/* with one rank nothing else calls: wait for a slot */
		long wait = nranks > 1 ? 0 : 5000000;
		struct job *j = NULL;
		unsigned n = slot_reports(rep, &running, 0);
		/* a walk's gifts before its report (it queued them first) */
		for (struct gift *g = take_gifts(), *next; g; g = next) {
			next = g->next;
			take_gift(g->data, g->len);
			free(g);
		}
		for (unsigned i = 0; i < n; i++)
			task_done((long)rep[i].id, rep[i].failures);
		/* the ranks waiting for tasks: some came, or all are done */
		int idle = 0;
		bool done = all_done();
		for (int r = 1; r < nranks; r++) {
			if (!co.waiting[r])
				continue;
			if (send_tasks(r, co.waiting[r]) > 0) {
				co.waiting[r] = 0;
			} else if (done) {
				MPI_Send(NULL, 0, MPI_BYTE, r, TAG_STOP, MPI_COMM_WORLD);
				co.waiting[r] = 0;
				co.give_sent[r] = 0; /* nothing more to it: it leaves */
			} else {
				idle += co.waiting[r];
			}
		}
		/* a ready rmdir first: it may make its parent's ready */
		if (running < sl.nslots && ((j = next_rmdir()) != NULL || (j = next_job(0)) != NULL)) {
			slot_start(j);
			continue;
		}
		if (nranks > 1) {
			/* slots idle with nothing to hand out: ask for gifts */
			bool none = next_task(0, false) < 0;
			if (none)
				idle += (int)(sl.nslots - running);
			ask_gifts(none && nnodes < NODES_MAX ? idle : 0);
		}
		if (running == 0 && co.active == 0)
			break; /* no task left (next_job said), none running */
		if (wait) {
			n = slot_reports(rep, &running, wait);
			for (unsigned i = 0; i < n; i++)
				task_done((long)rep[i].id, rep[i].failures);
		} else {
			nap(200000); /* 0.2 ms: the others' requests wait no longer */
		}
	}
	free(msg);
	free(co.buf);
	free(co.scratch);
	free(co.order);
	free(co.head);
	free(co.tail);
	free(co.asked);
	free(co.out);
	free(co.waiting);
	free(co.give_sent);
	free(co.gq);
	free(co.ready);
}

/* A worker rank: ask for as many tasks as slots are free, run them, report
 * each as it ends, and the subtrees its walks give away as they do; give
 * when rank 0 asks; leave (bye) once rank 0 says every task is done. */
static void serve(void)
{
	char *buf = malloc(TASKS_MAX);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	struct report rep[SLOTS_MAX];
	unsigned running = 0;
	bool none_left = false, asked = false;
	for (;;) {
		sample_threads();
		unsigned nrep = slot_reports(rep, &running, asked ? 0 : 1000000);
		/* after the reports: the gifts queued before them come too,
		 * ahead of them in the message */
		struct gift *mine = take_gifts();
		if (none_left && running == 0 && !mine) {
			send_ask(0, true, rep, nrep, NULL);
			break;
		}
		int want = !asked && !none_left && running < sl.nslots ? (int)(sl.nslots - running) : 0;
		if (want || nrep || mine) {
			send_ask(want, false, rep, nrep, mine);
			if (want)
				asked = true;
		}
		int flag;
		MPI_Status st;
		MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag) {
			if (asked)
				nap(200000);
			continue;
		}
		int len;
		MPI_Get_count(&st, MPI_BYTE, &len);
		MPI_Recv(buf, len, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (st.MPI_TAG == TAG_GIVE) {
			int32_t w = 0;
			if (len >= 4)
				memcpy(&w, buf, 4);
			__atomic_store_n(&give_want, w, __ATOMIC_RELAXED);
			continue;
		}
		asked = false;
		if (st.MPI_TAG == TAG_STOP) {
			none_left = true;
			continue;
		}
		int32_t count;
		memcpy(&count, buf, 4);
		size_t off = 4;
		for (int32_t i = 0; i < count && off + 4 <= (size_t)len; i++) {
			uint32_t l;
			memcpy(&l, buf + off, 4);
			struct job *j = malloc(sizeof *j);
			if (j && (j->id = unpack(buf + off + 4, l, &j->s)) >= 0) {
				/* the names point into buf: copy them into the job */
				j->s.task = j->id;
				slot_start(j);
			} else {
				free(j);
			}
			off += 4 + l;
		}
	}
	free(buf);
}

/* ------------------------------------------------------------- options */

static void try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", program_name);
}

static void usage(void)
{
	printf("Usage: mpirun -np N %s -r [OPTION]... DIRECTORY...\n", program_name);
	fputs("Remove the DIRECTORY(ies) and what they hold, recursively, with every rank\n"
"of an MPI job: rank 0 reads the top of each tree and hands its subtrees out;\n"
"every rank removes the subtrees it is given with libfastrm's workers.\n"
"\n"
"  -r, -R, --recursive   required: remove directories and their contents\n"
"  -f, --force           ignore nonexistent files and arguments\n"
"  -v, --verbose         explain what is being done\n"
"      --one-file-system  skip a directory on a file system other than its\n"
"                          operand's\n"
"      --no-preserve-root  do not treat '/' specially\n"
"      --preserve-root[=all]  do not remove '/' (default); with 'all',\n"
"                          reject an operand on a device other than its parent's\n"
"      --stats           print what was removed, over all ranks, at the end\n"
"      --progress        rank 0 says how many subtrees are done, each second\n"
"      --jobs=N          N*N threads a rank, at most 64 (N: 1-64, or auto: the\n"
"                          default, 4 per CPU, at most 16): N subtrees at once\n"
"                          with up to N workers each; with several ranks, twice\n"
"                          as many subtrees with up to 2 workers each\n"
"      --order=POLICY    auto, directory, inode, chunked, global or gnulib\n"
"      --check=WHAT      how a rank knows a directory is the one rank 0 read:\n"
"                          inode (default: its inode number) or path (only\n"
"                          the O_NOFOLLOW steps to it: for clients that\n"
"                          number inodes each their own way, such as sshfs)\n"
"      --manifest=FILE   one record per entry removed, failed or kept, and a\n"
"                          summary, for the whole job (frm(1), MANIFEST); each\n"
"                          rank writes FILE.part-RANK, which rank 0 joins into\n"
"                          FILE at the end: FILE is on a file system every\n"
"                          rank sees\n"
"      --manifest-format=FORMAT  json (the default) or nul\n"
"      --manifest-failures  only what was left, and the summary\n"
"      --help            display this help and exit\n"
"      --version         output version information and exit\n"
"\n"
"Prompts (-i, -I, --interactive) are refused: ranks cannot ask. Exit status:\n"
"0 on every rank when every operand is gone, 1 on every rank otherwise.\n", stdout);
}

enum { OPT_ONE_FS = 256, OPT_NO_PRESERVE, OPT_PRESERVE, OPT_STATS, OPT_PROGRESS,
       OPT_JOBS, OPT_ORDER, OPT_INTERACTIVE, OPT_HELP, OPT_VERSION, OPT_CHECK,
       OPT_MANIFEST, OPT_MANIFEST_FORMAT, OPT_MANIFEST_FAILURES };

static const struct option long_opts[] = {
	{ "recursive", no_argument, NULL, 'r' },
	{ "force", no_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "one-file-system", no_argument, NULL, OPT_ONE_FS },
	{ "no-preserve-root", no_argument, NULL, OPT_NO_PRESERVE },
	{ "preserve-root", optional_argument, NULL, OPT_PRESERVE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "order", required_argument, NULL, OPT_ORDER },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "manifest-format", required_argument, NULL, OPT_MANIFEST_FORMAT },
	{ "manifest-failures", no_argument, NULL, OPT_MANIFEST_FAILURES },
	{ "interactive", optional_argument, NULL, OPT_INTERACTIVE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* Parse; every rank does the same, only rank 0 speaks.  Returns -1 to go
 * on, else the exit status. */
static int parse(int argc, char **argv)
{
	bool quiet = rank != 0;
	int c;
	opterr = !quiet;
	opt.order = fastrm_order_by_name("auto");
	while ((c = getopt_long(argc, argv, "rRfviId", long_opts, NULL)) != -1) {
		switch (c) {
		case 'r':
		case 'R':
			opt.recursive = true;
			break;
		case 'f':
			opt.force = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case OPT_ONE_FS:
			opt.xdev = true;
			break;
		case OPT_NO_PRESERVE:
			opt.preserve_root = 0;
			break;
		case OPT_PRESERVE:
			if (optarg && strcmp(optarg, "all") != 0) {
				if (!quiet)
					error_msg(0, "unrecognized --preserve-root argument: %s",
					          quote_always(0, optarg));
				return 1;
			}
			opt.preserve_root = optarg ? 2 : 1;
			break;
		case OPT_STATS:
			opt.stats = true;
			break;
		case OPT_CHECK:
			if (strcmp(optarg, "inode") != 0 && strcmp(optarg, "path") != 0) {
				if (!quiet) {
					error_msg(0, "invalid argument %s for %s", quote_always(0, optarg),
					          quote_always(1, "--check"));
					fputs("Valid arguments are: 'inode', 'path'\n", stderr);
					try_help();
				}
				return 1;
			}
			opt.check_path = strcmp(optarg, "path") == 0;
			break;
		case OPT_PROGRESS:
			opt.progress = true;
			break;
		case OPT_JOBS: {
			if (strcmp(optarg, "auto") == 0) {
				opt.jobs_auto = true;
				break;
			}
			char *end;
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > JOBS_MAX) {
				if (!quiet) {
					error_msg(0, "invalid number of jobs %s (1 to %d, or auto)",
					          quote_always(0, optarg), JOBS_MAX);
					try_help();
				}
				return 1;
			}
			opt.jobs = (unsigned)n;
			opt.jobs_auto = false;
			break;
		}
		case OPT_ORDER:
			opt.order = fastrm_order_by_name(optarg);
			if (!opt.order) {
				if (!quiet) {
					/* frm's words (argmatch's) */
					error_msg(0, "invalid argument %s for %s", quote_always(0, optarg),
					          quote_always(1, "--order"));
					fputs("Valid arguments are:", stderr);
					const struct fastrm_order *o;
					for (size_t i = 0; (o = fastrm_order_builtin(i)) != NULL; i++)
						fprintf(stderr, "%s %s", i ? "," : "", quote_always(0, o->name));
					fputc('\n', stderr);
					try_help();
				}
				return 1;
			}
			break;
		case 'i':
		case 'I':
		case OPT_INTERACTIVE:
			if (!quiet)
				error_msg(0, "prompts (-i, -I, --interactive) are not supported: "
				             "the ranks cannot ask");
			return 1;
		case 'd':
			break; /* directories are removed anyway */
		case OPT_MANIFEST:
			if (strcmp(optarg, "-") == 0 || !*optarg) {
				if (!quiet)
					error_msg(0, "--manifest needs a file every rank can write beside "
					             "(FILE.part-RANK), not standard output");
				return 1;
			}
			opt.manifest = optarg;
			break;
		case OPT_MANIFEST_FORMAT:
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "nul") != 0) {
				if (!quiet) {
					error_msg(0, "invalid argument %s for %s", quote_always(0, optarg),
					          quote_always(1, "--manifest-format"));
					fputs("Valid arguments are: 'json', 'nul'\n", stderr);
					try_help();
				}
				return 1;
			}
			opt.manifest_format = strcmp(optarg, "nul") == 0 ? FASTRM_MANIFEST_NUL
			                                                : FASTRM_MANIFEST_JSON;
			break;
		case OPT_MANIFEST_FAILURES:
			opt.manifest_failures = true;
			break;
		case OPT_HELP:
			if (!quiet)
				usage();
			return 0;
		case OPT_VERSION:
			if (!quiet)
				printf("%s (libfastrm) %s\n", program_name, FASTRM_VERSION_STRING);
			return 0;
		default:
			if (!quiet)
				try_help();
			return 1;
		}
	}
	if (opt.jobs_auto)
		opt.jobs = auto_jobs();
	if (optind == argc) {
		if (opt.force)
			return 0;
		if (!quiet) {
			error_msg(0, "missing operand");
			try_help();
		}
		return 1;
	}
	if (!opt.recursive) {
		if (!quiet)
			error_msg(0, "-r is required: %s removes directories and what they hold",
			          program_name);
		return 1;
	}
	return -1;
}

/* Every rank here, sleeping between looks (the collective calls at the
 * end poll, and a rank that waits there would take a CPU from the ranks
 * still at work whenever ranks share a machine). */
static void barrier_sleeping(void)
{
	MPI_Request req;
	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	long ns = 50000;
	for (;;) {
		int flag;
		MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		if (flag)
			return;
		nap(ns);
		if (ns < 2000000)
			ns *= 2;
	}
}

/* Open MPI (4) binds each rank to one core by default where a job has at
 * most two ranks, and to a socket above: a rank of frm-mpi, whose tasks
 * and workers are threads, would then run them all on that core.  A
 * binding the user asked for (--bind-to, which sets the binding policy
 * in the ranks' environment) is kept; the default one is undone: the
 * rank may run on every CPU the machine lets it (the kernel keeps it
 * within its cpuset).  Returns whether it was undone. */
static bool unbind_default(void)
{
	const char *bound = getenv("OMPI_MCA_orte_bound_at_launch");
	if (!bound || strcmp(bound, "1") != 0 || getenv("OMPI_MCA_hwloc_base_binding_policy"))
		return false;
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	return sched_setaffinity(0, sizeof all, &all) == 0;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	/* A job of one rank sends no message between processes: Open MPI
	 * need not probe its network transports (UCX, OFI) at start, which
	 * took 0.2 s of `mpirun -np 1 frm-mpi`'s 0.39 s (Open MPI 4.1, a
	 * machine without them); the rank is told the job's size before
	 * MPI_Init, and a choice of the user's is kept. */
	const char *size = getenv("OMPI_COMM_WORLD_SIZE");
	if (size && strcmp(size, "1") == 0)
		setenv("OMPI_MCA_pml", "ob1", 0);
	/* only the main thread calls MPI; the tasks' threads do not */
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* before --jobs=auto counts the CPUs; MPI's own threads (started in
	 * MPI_Init) keep their binding */
	unbind_default();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);

	int status = parse(argc, argv);
	if (status >= 0) {
		MPI_Finalize();
		return status;
	}
	const char *gt = getenv("FRM_MPI_TEST_GIVE");
	if (gt && nranks > 1) {
		give_test = atoi(gt);
		if (strchr(gt, ':'))
			give_test_level = atoi(strchr(gt, ':') + 1);
	}
	/* tasks at once on every rank, and workers for each: --jobs=M, M
	 * tasks of up to M workers (at most SLOTS_MAX threads).  With several
	 * ranks the same threads run twice as many tasks of 2 workers each
	 * at most: a big subtree is shared by giving its directories away
	 * (to any rank) rather than by its own pool, and more walks at once
	 * keep more requests in flight (sshfs at 5 ms a round trip, 4 ranks
	 * of 16 threads: 46.9 s as 4 x 4, 30.3 s as 8 x 2, 30.1 s as 16 x 1;
	 * doc/archive/results-0.5.md) */
	unsigned jobs = opt.jobs < 1 ? 1 : opt.jobs > SLOTS_MAX ? SLOTS_MAX : opt.jobs;
	unsigned threads_max = jobs * jobs < SLOTS_MAX ? jobs * jobs : SLOTS_MAX;
	sl.nslots = jobs;
	task_workers = threads_max / jobs;
	if (nranks > 1 && jobs > 1) {
		task_workers = 2;
		sl.nslots = threads_max / 2;
	}
	/* their fds: as many as the hard limit allows */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	if (opt.manifest && !part_open())
		COUNT(cnt.failures);
	struct task *tasks = NULL;
	size_t ntasks = 0;
	if (rank == 0) {
		struct stat root;
		bool root_ok = lstat("/", &root) == 0;
		for (int i = optind; i < argc; i++)
			operand(argv[i], root_ok ? &root : NULL);
		/* breadth first, until there are tasks enough for the workers */
		size_t want = nranks > 1 ? (size_t)nranks * sl.nslots * TASKS_PER_SLOT : 0;
		size_t whole = 0; /* nodes before head that are tasks */
		for (size_t head = 0; head < nnodes; head++) {
			/* the subtree tasks there would be: those made, and
			 * the directories found and not read; once there are
			 * enough, nothing more is read (a directory read by
			 * rank 0 costs it a few round trips, one after another,
			 * and its rmdir at the end another) */
			if (whole + (nnodes - head) >= want) {
				for (; head < nnodes; head++)
					nodes[head].task = true;
				break;
			}
			if (nodes[head].depth + 1 >= DEPTH_MAX || !expand((long)head)) {
				nodes[head].task = true;
				whole++;
			} else if (nodes[head].entries) {
				whole += (size_t)shards();
			}
		}
		/* a task for each subtree left whole; one for the files of a
		 * directory read (or shards, where it held many), shards for
		 * the entries of one too large to read */
		size_t cap = 0;
		for (size_t i = 0; i < nnodes; i++)
			cap += (size_t)node_tasks((long)i);
		tasks = malloc((cap ? cap : 1) * sizeof *tasks);
		for (size_t i = 0; tasks && i < nnodes; i++) {
			int n = node_tasks((long)i);
			int kind = nodes[i].task ? TASK_TREE : nodes[i].entries ? TASK_ENTRIES
			                                                        : TASK_FILES;
			for (int k = 0; k < n; k++)
				tasks[ntasks++] = (struct task){ (long)i, kind, k, n, -1, false };
		}
		if (!tasks) {
			error_msg(ENOMEM, "cannot remove the operands");
			COUNT(cnt.failures);
		} else {
			coordinate(tasks, ntasks);
			tasks = co.tasks; /* grown by the subtrees given away */
			ntasks = co.ntasks;
		}
	} else {
		serve();
	}

	if (part_close())
		COUNT(cnt.failures);
	barrier_sleeping();
	struct counts all = { 0 };
	MPI_Reduce(&cnt, &all, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	unsigned threads = 0;
	if (opt.stats)
		MPI_Reduce(&peak_threads, &threads, 1, MPI_UNSIGNED, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		status = all.failures ? 1 : 0;
		if (opt.manifest && manifest_join(status) != 0)
			status = 1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (opt.stats) {
			double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
			/* frm's words first (frm --stats), then the ranks' */
			unsigned long long n = all.files + all.dirs;
			fprintf(stderr, "%s: removed %llu entr%s (%llu file%s, %llu director%s), "
			        "%llu failure%s, %.3f s, %.0f entries/s, %d rank%s, each removing "
			        "up to %u subtree%s at once with up to %u worker%s each; "
			        "%zu subtree%s; %llu given away by a rank's walk; at most %u "
			        "thread%s in a rank\n",
			        program_name, n, n == 1 ? "y" : "ies", all.files,
			        all.files == 1 ? "" : "s", all.dirs, all.dirs == 1 ? "y" : "ies",
			        all.failures, all.failures == 1 ? "" : "s", s,
			        s > 0 ? (double)n / s : 0.0, nranks, nranks == 1 ? "" : "s",
			        sl.nslots, sl.nslots == 1 ? "" : "s", task_workers,
			        task_workers == 1 ? "" : "s", ntasks, ntasks == 1 ? "" : "s",
			        co.gifts, threads, threads == 1 ? "" : "s");
		}
	}
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (size_t i = 0; i < nnodes; i++)
		free(nodes[i].name);
	free(nodes);
	free(tasks);
	MPI_Finalize();
	return status;
}
