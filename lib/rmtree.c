/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tree removal with a pool of workers (include/fastrm/rmtree.h).
 *
 * How it works
 * - A task is a subtree to remove: a name relative to a directory fd
 *   (struct base; AT_FDCWD for the paths given).  A worker takes a task
 *   and walks it with its own fts stream opened at that fd, removing each
 *   entry at its postorder visit, as GNU rm does.
 * - Sharing: when a worker enters a directory while another worker is
 *   idle, it skips that directory (fts_set FTS_SKIP) and queues it as a
 *   task, relative to a copy of the fd of the directory it is in, with the
 *   (dev, ino) the walk saw; the worker that takes it checks the directory
 *   it opens against them.
 * - The directory a subtree was taken from cannot be removed before that
 *   subtree is gone.  It gets a node that counts what it waits for: one
 *   for its own walk, one per subtree given away or per directory below it
 *   still waiting.  Whoever drops the count to zero after the walk has
 *   passed the directory removes it, reaching it again from its task's
 *   root, component by component with O_NOFOLLOW, and checking its parent
 *   against the (dev, ino) recorded; then the node above is counted down.
 * - A failure below a directory keeps it: inside one walk through the
 *   entries' fts_number (as GNU rm), across walks through the nodes.
 * - Bounds: each worker's fts keeps at most its fd window open; the fd
 *   copies that tasks start from (MAX_BASES_PER_WORKER per worker), the
 *   tasks alive and the memory of the ordering policies (one budget that
 *   the walks share, fts_share_budget) are bounded for the whole pool:
 *   past a bound, nothing more is shared and the walks go on by
 *   themselves.
 */
#define _GNU_SOURCE
#include <fastrm/rmtree.h>
#include <fastrm/fts.h>

#include "fastrm-int.h"
#include "fts-int.h"
#include "device/device.h"
#include "manifest-int.h"
#include "order.h"
#include "pace.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/fs.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Most workers, whatever is asked. */
#define MAX_WORKERS 256

/* fds a worker may hold: its fts window (4), a directory being opened, and
 * the copies that shared subtrees start from. */
#define FDS_PER_WORKER 8
#define MAX_BASES_PER_WORKER 2

/* fds left to the caller when the worker count is fitted to RLIMIT_NOFILE. */
#define FDS_RESERVED 16

/* A walk shares directories at most this many levels below its root: a
 * directory that waits holds its path, and so does each waiting one above
 * it in the walk, so this bounds the waiting directories per walk (a deep
 * chain shared at every level would hold depth x path bytes).  Subtrees
 * given away share again near their own roots. */
#define SHARE_MAX_LEVEL 8

/* Paths given that are not directories, removed at once at most. */
#define GROUP_MAX 64

/* A regular file given of this size or more may take long to unlink (a
 * huge sparse file frees every extent in its unlink): two or more such in
 * a group start workers at once, one per file. */
#define HEAVY_FILE (64LL << 20)

/* Tasks alive (queued, running, or waiting for their subtrees) per worker. */
#define MAX_TASKS_PER_WORKER 4

/* Workers start when there is work to hand them, not before: the calling
 * thread walks alone until its removal has run SPAWN_AFTER_US and it
 * enters a directory that no idle worker could take; then one more worker
 * starts, and so on, one per directory entered, up to the number asked.
 * Starting and joining a thread costs about 50 us here (7 took 210-320 us
 * to create and 110-130 us to join on the 2-CPU VM), and a small tree
 * is removed in less than a millisecond (56 entries on tmpfs: 0.43 ms
 * with no worker, 1.5 ms with 8 started at once; doc/archive/benchmarks-0.5.md,
 * "Workers on demand"): a removal that has run 1 ms is 20 thread starts
 * long, so a worker started then costs at most a few per cent of it. */
#define SPAWN_AFTER_US 1000


/* A directory found not empty at its removal (entries added meanwhile) is
 * read and emptied again this many times before the error stands. */
#define NOTEMPTY_RETRIES 3

/* fts_number bits of an entry in a walk */
#define NUM_KEEP   0x1  /* something below failed: keep this directory */
#define NUM_ASKED  0x2  /* @ask said go on to its removal (not again) */
#define NUM_DECLINED 0x4 /* @ask kept an entry in it: not read again when
                            found not empty (that would ask again) */
#define NUM_PLAN   0x8  /* a dry run: PLAN_ERR is what would fail an
                           unlink in this directory (0: nothing) */
#define NUM_PLAN_STICKY 0x10 /* ...and its entries of other users */
#define NUM_RETRY  0x100 /* times ENOTEMPTY was retried, in units of this */
#define RETRIES(n) (((unsigned long)(n) / NUM_RETRY) & 0xff)
#define PLAN_SHIFT 16
#define PLAN_ERR(n) ((int)(((unsigned long)(n) >> PLAN_SHIFT) & 0xffff))

/* fts_pointer of a directory given away (its DP visit is not ours) */
static char given_away;
#define GIVEN_AWAY ((void *)&given_away)

struct base {
	int fd;                /* the caller's (AT_FDCWD or fastrm_rmtreeat's
	                          dirfd: borrowed), or a copy owned here */
	bool borrowed;         /* fd is the caller's: never closed here */
	unsigned refs;
};

struct task {
	struct task *next;     /* in the queue */
	struct base *base;
	char *name;            /* relative to base */
	char *prefix;          /* the path of base for messages, with its '/' */
	struct node *up;       /* waits for this subtree; NULL: a path given */
	int level;             /* level of its root in the whole removal */
	bool check;            /* the root must be (dev, ino) */
	bool again;            /* its root was found not empty once already */
	dev_t dev, rdev;       /* rdev: device of the path given (XDEV) */
	ino_t ino;
	dev_t pdev;            /* base's identity */
	ino_t pino;
	size_t root_len;       /* length of its root's fts_path in the walk */
	size_t oplen;          /* the path given's length in paths, trailing
	                          slashes aside: below it, the path exclusions
	                          match */
	unsigned refs;         /* its walk, and each node in it */
};

struct node {
	struct node *prev, *next; /* every node alive (to free them after a stop) */
	struct node *up;       /* what it counts down when done */
	struct task *task;     /* the walk it is in */
	unsigned pending;
	bool failed, passed;   /* passed: its walk is done with it */
	bool declined;         /* @ask kept something below: no reading again */
	struct base *children; /* copy of its fd, for subtrees given away */
	char *rel;             /* its fts_path in the task's walk */
	bool root;             /* it is the task's root */
	char *path;            /* its full path */
	int level;
	dev_t pdev;            /* its parent's identity */
	ino_t pino;
	struct stat st;        /* type, dev, ino: for the callbacks */
};

/* The estimate of the entries in all (opts->estimate), by depth; deeper
 * levels share the last. */
#define EST_DEPTH 64
struct estimator {
	pthread_mutex_t lock;
	unsigned long long *out;        /* opts->estimate */
	unsigned long long listed;      /* entries listed, and paths given */
	unsigned long long read[EST_DEPTH];    /* directories read */
	unsigned long long entries[EST_DEPTH]; /* entries they listed */
	unsigned long long subdirs[EST_DEPTH]; /* of them directories */
	long long unread[EST_DEPTH];    /* directories listed, not yet entered */
	/* directories listed to their end, and what they held; directories
	 * listed in part so far (larger than a batch), and what they listed */
	unsigned long long complete[EST_DEPTH], complete_entries[EST_DEPTH];
	long long partial[EST_DEPTH], partial_entries[EST_DEPTH];
	/* what directories listed in part still hold, where their size says
	 * how many entries they hold (tmpfs) */
	long long sized_left[EST_DEPTH];
};

/* An exclusion (opts->exclude), as matched. */
struct exclusion {
	char *pat;             /* trailing slashes (and a path's leading
	                          ones) taken off */
	bool path;             /* it holds a '/': the path below the given one */
	bool dir_only;         /* it ended in '/' */
};

struct pool {
	const struct fastrm_rmtree_opts *o;
	struct exclusion *excl;
	size_t nexcl;
	bool dry;              /* FASTRM_RMTREE_DRY_RUN */
	bool paced;            /* pace: opts->max_rate, latency_target_us */
	struct pacer pace;
	struct estimator est;  /* est.out: opts->estimate */
	const struct fastrm_order *order;
	size_t budget;         /* for the whole pool */
	size_t held;           /* what the walks' policies hold (fts_share_budget) */
	pthread_mutex_t lock;  /* everything below, and every node's fields */
	pthread_cond_t work;
	struct task *head, *tail;
	unsigned nworkers;     /* the most that may start */
	unsigned cap;          /* ...of them, until the advisor says more may
	                          (wide): the workers asked for */
	bool wide;             /* DEVICE_WORKERS_WIDE: up to nworkers */
	unsigned threads;      /* started, the caller's thread included */
	unsigned idle, nqueued, ntasks, nbases;
	unsigned max_tasks, max_bases;
	bool done;
	unsigned long failures;
	size_t shared;
	int fatal;             /* a negative errno that ended everything */
	struct node *nodes;    /* alive */
	struct device_advisor *adv; /* what the walks know of their devices */
	unsigned cpus;         /* online, for FASTRM_RMTREE_FIT_WORKERS */
	unsigned fitted;       /* if not 0: the fewest that the advisor let run
	                          at once */
	unsigned running;      /* workers in a task and not waiting (fitted) */
	pthread_cond_t slot;   /* running fell below fitted */
	char *const *next_arg; /* paths given not yet queued */
	int dirfd;             /* what they are relative to (AT_FDCWD) */
	bool root_known;       /* root_dev, root_ino: the root directory's */
	dev_t root_dev;
	ino_t root_ino;
	pthread_mutex_t cb;    /* one callback at a time */
	pthread_t *tid;        /* threads started (tid[0]: unused) */
	pthread_attr_t attr;   /* every signal blocked in them */
	bool attr_ok;
	struct worker *w;      /* nworkers of them */
	struct timespec start; /* when the removal began */
	bool may_spawn;        /* it has run SPAWN_AFTER_US */
};

struct worker {
	struct pool *P;
	char *path;            /* full path of the current entry, for reports */
	size_t cap;
	struct device_walk dw; /* its walks' state with the pool's advisor */
};

/* Counters that share() reads without the lock are written atomically
 * (under the lock all the same). */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)

static bool stopped(const struct pool *P)
{
	return P->o->stop && __atomic_load_n(P->o->stop, __ATOMIC_RELAXED);
}

static bool ended(const struct pool *P)
{
	return LOAD(P->fatal) != 0 || stopped(P);
}

/* ------------------------------------------------------------ reports */

/* @prefix, then @path's first @b bytes (an FTSENT's fts_path is the
 * stream's one buffer: only fts_pathlen bytes of it are that entry's). */
static const char *full_path(struct worker *w, const char *prefix,
                             const char *path, size_t b)
{
	size_t a = strlen(prefix);
	if (a + b + 1 > w->cap) {
		char *n = realloc(w->path, 2 * (a + b + 1));
		if (!n)
			return prefix; /* the report loses its name, no more */
		w->path = n;
		w->cap = 2 * (a + b + 1);
	}
	memcpy(w->path, prefix, a);
	memcpy(w->path + a, path, b);
	w->path[a + b] = '\0';
	return w->path;
}

static void entry_of(struct fastrm_rmtree_entry *e, const char *path, int dirfd,
                     const char *name, const struct stat *st, int level,
                     bool is_dir)
{
	e->path = path;
	e->dirfd = dirfd;
	e->name = name;
	e->st = st;
	e->level = level;
	e->is_dir = is_dir;
}

/* The type bits of @e, for the manifest. */
static mode_t type_of(const struct fastrm_rmtree_entry *e)
{
	return e->is_dir ? S_IFDIR : e->st ? e->st->st_mode & S_IFMT : 0;
}

/* The manifest's record of an entry removed (planned, in a dry run). */
__attribute__((noinline))
static void manifest_removed(struct pool *P, const struct fastrm_rmtree_entry *e)
{
	fastrm_manifest_add(P->o->manifest, e->path, type_of(e),
	                    P->dry ? FASTRM_OUTCOME_PLANNED : FASTRM_OUTCOME_REMOVED, 0, NULL);
}

/* Removed (a dry run: would be). */
static inline void report_removed(struct pool *P, const struct fastrm_rmtree_entry *e)
{
	if (P->o->manifest)
		manifest_removed(P, e);
	if (!P->o->removed)
		return;
	pthread_mutex_lock(&P->cb);
	P->o->removed(P->o->ctx, e);
	pthread_mutex_unlock(&P->cb);
}

/* Returns true when it counts as a failure (a failure ignored is not in
 * the manifest: rm -f's missing entries). */
static bool report_failed(struct pool *P, const struct fastrm_rmtree_entry *e,
                          enum fastrm_rmtree_error what, int err)
{
	bool counts = true;
	pthread_mutex_lock(&P->cb);
	if (P->o->failed)
		counts = P->o->failed(P->o->ctx, e, what, err) != 0;
	if (counts)
		P->failures++;
	pthread_mutex_unlock(&P->cb);
	if (counts && P->o->manifest)
		fastrm_manifest_add(P->o->manifest, e->path, type_of(e),
		                    FASTRM_OUTCOME_FAILED, err,
		                    fastrm_manifest_op(what, e->is_dir));
	return counts;
}

/* Left without a failure: @why. */
static void report_kept(struct pool *P, const struct fastrm_rmtree_entry *e,
                        enum fastrm_rmtree_keep why)
{
	if (P->o->manifest)
		fastrm_manifest_add(P->o->manifest, e->path, type_of(e),
		                    FASTRM_OUTCOME_KEPT, 0, fastrm_manifest_reason(why));
	if (!P->o->kept)
		return;
	pthread_mutex_lock(&P->cb);
	P->o->kept(P->o->ctx, e, why);
	pthread_mutex_unlock(&P->cb);
}

/* The caller's @ask (GO without one). */
static enum fastrm_rmtree_answer ask(struct pool *P,
                                     const struct fastrm_rmtree_entry *e,
                                     enum fastrm_rmtree_step step)
{
	if (!P->o->ask)
		return FASTRM_RMTREE_GO;
	/* asked one at a time with the other callbacks; or, with
	 * FASTRM_RMTREE_ASK_CONCURRENT, outside the lock (the caller
	 * serializes its prompts, so that the other workers go on while one
	 * waits); either way the answer is counted under it */
	int a;
	if (P->o->flags & FASTRM_RMTREE_ASK_CONCURRENT) {
		a = P->o->ask(P->o->ctx, e, step);
		pthread_mutex_lock(&P->cb);
	} else {
		pthread_mutex_lock(&P->cb);
		a = P->o->ask(P->o->ctx, e, step);
	}
	int err = 0; /* why it failed, where the caller said */
	if (a > FASTRM_RMTREE_FAIL_WITH(0) && a < FASTRM_RMTREE_FAIL_WITH(0x10000))
		err = a - FASTRM_RMTREE_FAIL_WITH(0);
	if (a != FASTRM_RMTREE_GO && a != FASTRM_RMTREE_KEEP &&
	    a != FASTRM_RMTREE_REMOVE_EMPTY)
		a = FASTRM_RMTREE_FAIL;
	if (a == FASTRM_RMTREE_REMOVE_EMPTY && step != FASTRM_RMTREE_ENTER)
		a = FASTRM_RMTREE_GO;
	if (a == FASTRM_RMTREE_FAIL)
		P->failures++;
	pthread_mutex_unlock(&P->cb);
	if (a == FASTRM_RMTREE_KEEP)
		report_kept(P, e, FASTRM_RMTREE_KEPT_DECLINED);
	else if (a == FASTRM_RMTREE_FAIL && P->o->manifest)
		fastrm_manifest_add(P->o->manifest, e->path, type_of(e),
		                    FASTRM_OUTCOME_FAILED, err, "refused");
	return (enum fastrm_rmtree_answer)a;
}

/* The removal cannot go on: @err, a negative errno value, ends it. */
static void report_fatal(struct pool *P, int err)
{
	pthread_mutex_lock(&P->lock);
	if (!P->fatal)
		STORE(P->fatal, err);
	pthread_cond_broadcast(&P->work);
	pthread_mutex_unlock(&P->lock);
}

/* ----------------------------------------------------------- dry run */

/* The length of path given @path, trailing slashes aside ("/" keeps its
 * one). */
static size_t op_len(const char *path)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	return len;
}

static bool last_is_dots(const char *path);

/* What would fail any unlink in the directory open as @dfd (AT_FDCWD: the
 * working directory), whatever the entry: no write or search permission
 * for this process, a read-only file system (faccessat says EROFS), an
 * immutable or append-only directory (EPERM).  *@sticky: its entries of
 * other users would fail too (EPERM).  *@dev: its device. */
static int plan_dir(int dfd, bool *sticky, dev_t *dev)
{
	struct stat ds;
	*sticky = false;
	if (fstatat(dfd, ".", &ds, 0) != 0)
		return errno;
	*dev = ds.st_dev;
	uid_t me = geteuid();
	/* root passes the sticky rule (CAP_FOWNER: taken as root's) */
	*sticky = (ds.st_mode & S_ISVTX) && me != 0 && ds.st_uid != me;
	if (faccessat(dfd, ".", W_OK | X_OK, AT_EACCESS) != 0)
		return errno;
	int fd = dfd == AT_FDCWD ? open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : dfd;
	int attr = 0;
	bool fixed = fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &attr) == 0 &&
	             (attr & (FS_IMMUTABLE_FL | FS_APPEND_FL));
	if (fd >= 0 && fd != dfd)
		close(fd);
	return fixed ? EPERM : 0;
}

/* A dry run's unlinkat(@fd, @name, a directory if @is_dir): the errno it
 * would fail with, as far as can be seen without making it, or 0.  @st:
 * the entry's device where it is a directory (a mount point's rmdir says
 * EBUSY); @declined: something in it was kept by @ask (ENOTEMPTY, as the
 * real rmdir); @parent: the directory's entry in the walk, where the
 * answer for all its entries is kept (NULL: looked at each time). */
static int plan(int fd, const char *name, bool is_dir, const struct stat *st,
                bool declined, FTSENT *parent)
{
	if (is_dir && last_is_dots(name))
		return EINVAL; /* rmdir(".") (fastrm_rmtreeat's "."), as the real one */
	/* a path given may hold a '/': its parent directory by that path,
	 * its last component (trailing slashes aside) the name there */
	size_t len = op_len(name);
	const char *slash = memrchr(name, '/', len);
	const char *last = slash ? slash + 1 : name;
	size_t last_len = len - (size_t)(last - name);
	char *base = strndup(last, last_len);
	if (!base)
		return ENOMEM;
	int dfd = fd;
	if (slash) {
		char *dir = strndup(name, slash == name ? 1 : (size_t)(slash - name));
		dfd = dir ? openat(fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		int e = dir ? errno : ENOMEM;
		free(dir);
		if (dfd < 0) {
			free(base);
			return e;
		}
	}
	/* in the kernel's order: the directory above (permissions, flags,
	 * the sticky rule), a mount point, then what it holds */
	int err;
	bool sticky;
	dev_t pdev = 0;
	bool cache = parent && !slash && parent->fts_level >= FTS_ROOTLEVEL;
	if (cache && (parent->fts_number & NUM_PLAN)) {
		err = PLAN_ERR(parent->fts_number);
		sticky = (parent->fts_number & NUM_PLAN_STICKY) != 0;
		pdev = parent->fts_statp->st_dev;
	} else {
		err = plan_dir(dfd, &sticky, &pdev);
		if (cache)
			parent->fts_number |= NUM_PLAN | (sticky ? NUM_PLAN_STICKY : 0) |
			                      ((long)(err & 0xffff) << PLAN_SHIFT);
	}
	struct stat es;
	/* a path given, or a directory left waiting: is it there?  In a
	 * sticky directory: whose is it? */
	if (!err && (!parent || sticky) &&
	    fstatat(dfd, base, &es, AT_SYMLINK_NOFOLLOW) != 0)
		err = errno;
	else if (!err && sticky && es.st_uid != geteuid())
		err = EPERM;
	if (!err && is_dir && st && pdev && st->st_dev != pdev)
		err = EBUSY; /* a mount point */
	if (!err && is_dir && declined)
		err = ENOTEMPTY; /* something in it was kept */
	free(base);
	if (dfd != fd)
		close(dfd);
	return err;
}

static void spawn(struct pool *P, bool hold);

/* Remove @name in @fd (a directory if @is_dir), or in a dry run say
 * whether that would fail (plan()'s other arguments).  0, or the errno. */
static int unlink_or_plan(struct pool *P, int fd, const char *name, bool is_dir,
                          const struct stat *st, bool declined, FTSENT *parent)
{
	if (P->dry)
		return plan(fd, name, is_dir, st, declined, parent);
	if (!P->paced)
		return unlinkat(fd, name, is_dir ? AT_REMOVEDIR : 0) == 0 ? 0 : errno;
	/* the device watched: a directory's own; a file's, its parent's (a
	 * path given's: lstat'ed, in @st) */
	dev_t dev = is_dir && st ? st->st_dev
	          : parent && parent->fts_level >= FTS_ROOTLEVEL ? parent->fts_statp->st_dev
	          : st ? st->st_dev : 0;
	pacer_wait(&P->pace, P->adv, dev, P->o->stop);
	/* the pacer allows more at once than run, and work waits: a worker
	 * for it (spawn() looks again under the lock) */
	if (LOAD(P->nqueued) > LOAD(P->idle) && LOAD(P->threads) < pacer_allowed(&P->pace)) {
		pthread_mutex_lock(&P->lock);
		spawn(P, false);
		pthread_mutex_unlock(&P->lock);
	}
	int64_t t0 = pace_now_ns();
	int err = unlinkat(fd, name, is_dir ? AT_REMOVEDIR : 0) == 0 ? 0 : errno;
	pacer_done(&P->pace, pace_now_ns() - t0);
	return err;
}

/* -------------------------------------------------------- exclusions */

/* opts->exclude, as matched.  false: no memory. */
static bool exclusions_parse(struct pool *P, const char *const *pats)
{
	size_t n = 0;
	while (pats && pats[n])
		n++;
	if (!n)
		return true;
	P->excl = calloc(n, sizeof *P->excl);
	if (!P->excl)
		return false;
	for (size_t i = 0; i < n; i++) {
		struct exclusion *x = &P->excl[P->nexcl];
		size_t len = strlen(pats[i]);
		x->dir_only = len > 1 && pats[i][len - 1] == '/';
		while (len > 1 && pats[i][len - 1] == '/')
			len--;
		const char *p = pats[i];
		x->path = memchr(p, '/', len) != NULL;
		while (x->path && len > 1 && *p == '/')
			p++, len--;
		if (!(x->pat = strndup(p, len)))
			return false;
		P->nexcl++;
	}
	return true;
}

static void exclusions_free(struct pool *P)
{
	for (size_t i = 0; i < P->nexcl; i++)
		free(P->excl[i].pat);
	free(P->excl);
}

/* Whether entry @e (@name: its name; @rel: its path below the path
 * given, NULL for the path given itself) matches an exclusion. */
static bool matches(const struct pool *P, const char *name, const char *rel,
                    bool is_dir)
{
	for (size_t i = 0; i < P->nexcl; i++) {
		const struct exclusion *x = &P->excl[i];
		if (x->dir_only && !is_dir)
			continue;
		if (!x->path ? fnmatch(x->pat, name, 0) == 0
		             : rel && fnmatch(x->pat, rel, FNM_PATHNAME) == 0)
			return true;
	}
	return false;
}

FASTRM_EXPORT int fastrm_rmtree_excluded(const char *const *patterns,
                                         const char *name, const char *rel,
                                         int is_dir)
{
	struct pool P = { 0 };
	if (!exclusions_parse(&P, patterns)) {
		exclusions_free(&P);
		return -ENOMEM;
	}
	bool hit = matches(&P, name, rel, is_dir);
	exclusions_free(&P);
	return hit;
}

/* ------------------------------------------------------ bases and tasks */

static void base_put(struct pool *P, struct base *b)
{
	/* with the lock */
	if (--b->refs > 0)
		return;
	if (!b->borrowed && b->fd >= 0) {
		close(b->fd);
		P->nbases--;
	}
	free(b);
}

static void task_put(struct pool *P, struct task *t)
{
	/* with the lock */
	if (--t->refs > 0)
		return;
	base_put(P, t->base);
	free(t->name);
	free(t->prefix);
	free(t);
	P->ntasks--;
}

static void enqueue(struct pool *P, struct task *t)
{
	/* with the lock */
	t->next = NULL;
	if (P->tail)
		P->tail->next = t;
	else
		P->head = t;
	P->tail = t;
	ADD(P->nqueued, 1);
	pthread_cond_signal(&P->work);
}

/* -------------------------------------------------------------- nodes */

/* The node of directory @ent in task @t's walk, made on first need with
 * one count for the walk itself.  With the lock.  NULL: no memory. */
static struct node *node_of(struct pool *P, struct task *t, FTSENT *ent,
                            const char *fullpath)
{
	if (ent->fts_pointer && ent->fts_pointer != GIVEN_AWAY)
		return ent->fts_pointer;
	struct node *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	n->rel = strndup(ent->fts_path, ent->fts_pathlen);
	n->path = strdup(fullpath);
	if (!n->rel || !n->path) {
		free(n->rel);
		free(n->path);
		free(n);
		return NULL;
	}
	n->task = t;
	t->refs++;
	n->next = P->nodes;
	if (P->nodes)
		P->nodes->prev = n;
	P->nodes = n;
	n->pending = 1;
	n->level = t->level + ent->fts_level;
	n->root = ent->fts_level == FTS_ROOTLEVEL;
	n->st = *ent->fts_statp;
	if (ent->fts_level == FTS_ROOTLEVEL) {
		n->pdev = t->pdev;
		n->pino = t->pino;
	} else {
		n->pdev = ent->fts_parent->fts_statp->st_dev;
		n->pino = ent->fts_parent->fts_statp->st_ino;
	}
	ent->fts_pointer = n;
	return n;
}

/* Open the directory that holds node @n's directory, again from its
 * task's root, each step with O_NOFOLLOW, and check it is the one
 * recorded.  Returns 0 with *@fd (AT_FDCWD, or an fd to close) and *@last
 * (@n's name in it), or a negative errno value. */
static int reach_parent(const struct node *n, int *fd, const char **last)
{
	const struct task *t = n->task;
	const char *slash = strrchr(n->rel, '/');
	if (n->root) {
		/* the task's root itself: its parent is the base */
		*last = t->name;
		*fd = t->base->fd == AT_FDCWD ? AT_FDCWD
		                              : fcntl(t->base->fd, F_DUPFD_CLOEXEC, 0);
		return *fd == -1 ? -errno : 0;
	}
	/* the root, as the task opened it */
	int d = openat(t->base->fd, t->name,
	               O_RDONLY | O_DIRECTORY | O_CLOEXEC | (t->up ? O_NOFOLLOW : 0));
	if (d < 0)
		return -errno;
	const char *p = n->rel + t->root_len;
	while (*p == '/')
		p++;
	while (p < slash) {
		const char *end = strchr(p, '/');
		size_t len = (size_t)(end - p);
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX) {
			close(d);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		int next = openat(d, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = -errno;
		close(d);
		if (next < 0)
			return err;
		d = next;
		p = end + 1;
		while (*p == '/')
			p++;
	}
	struct stat sb;
	if (fstat(d, &sb) < 0 || sb.st_dev != n->pdev || sb.st_ino != n->pino) {
		close(d);
		return -ENOENT; /* moved or replaced meanwhile */
	}
	*fd = d;
	*last = slash + 1;
	return 0;
}

/* The outcome of removing a waiting directory: removed; kept (a failure
 * counted, or the caller's choice: the directories above are kept too);
 * a failure the caller ignored (those above go on); kept by @ask at its
 * removal (those above go on, and are not read again); read again. */
enum outcome { REMOVED, KEPT, IGNORED, DECLINED, AGAIN };

/* Queue @n's directory, found not empty (entries were added meanwhile),
 * as a subtree to empty and remove again, once; @fd is its parent (owned
 * here), @name its name there.  With the lock.  false: no memory. */
static bool queue_again(struct pool *P, struct node *n, int fd, const char *name)
{
	struct task *t = calloc(1, sizeof *t);
	struct base *b = calloc(1, sizeof *b);
	const char *slash = strrchr(n->path, '/');
	if (t) {
		t->name = strdup(name);
		t->prefix = n->root ? strdup(n->task->prefix)
		                    : strndup(n->path, slash ? (size_t)(slash - n->path) + 1 : 0);
	}
	if (!t || !b || !t->name || !t->prefix) {
		if (t) {
			free(t->name);
			free(t->prefix);
		}
		free(t);
		free(b);
		return false;
	}
	b->fd = fd;
	b->refs = 1;
	if (fd >= 0)
		P->nbases++;
	t->base = b;
	t->up = n->up;
	t->oplen = n->task->oplen;
	t->level = n->level;
	t->check = t->again = true;
	t->dev = n->st.st_dev;
	t->ino = n->st.st_ino;
	t->rdev = n->task->rdev;
	t->pdev = n->pdev;
	t->pino = n->pino;
	t->refs = 1;
	P->ntasks++;
	enqueue(P, t);
	return true;
}

/* Remove node @n's directory now that nothing below it is left. */
static enum outcome remove_node(struct pool *P, struct node *n)
{
	const char *name = NULL;
	int fd = -1;
	int err = -reach_parent(n, &fd, &name); /* the callbacks' positive errno */
	bool again = n->root && n->task->again; /* the second time */
	struct fastrm_rmtree_entry e;
	entry_of(&e, n->path, fd, name ? name : n->rel, &n->st, n->level, true);
	if (!err && !again) {
		enum fastrm_rmtree_answer a = ask(P, &e, FASTRM_RMTREE_REMOVE);
		if (a != FASTRM_RMTREE_GO) {
			if (fd >= 0)
				close(fd);
			return DECLINED;
		}
	}
	if (!err)
		err = unlink_or_plan(P, fd, name, true, &n->st, n->declined, NULL);
	if (err == ENOTEMPTY && !again && !n->declined) {
		pthread_mutex_lock(&P->lock);
		bool queued = queue_again(P, n, fd, name);
		pthread_mutex_unlock(&P->lock);
		if (queued)
			return AGAIN;
	}
	enum outcome o = REMOVED;
	if (!err)
		report_removed(P, &e);
	else
		o = report_failed(P, &e, FASTRM_RMTREE_EREMOVE, err) ? KEPT : IGNORED;
	if (fd >= 0)
		close(fd);
	return o;
}

static void node_free(struct pool *P, struct node *n)
{
	/* with the lock */
	if (n->prev)
		n->prev->next = n->next;
	else
		P->nodes = n->next;
	if (n->next)
		n->next->prev = n->prev;
	if (n->children)
		base_put(P, n->children);
	task_put(P, n->task);
	free(n->rel);
	free(n->path);
	free(n);
}

/* Count @n down (a subtree below it is done: @failed, it is to be kept,
 * or not); remove what is left waiting with nothing more below it, up the
 * chain. */
static void count_down(struct pool *P, struct node *n, bool failed,
                       bool declined)
{
	while (n) {
		pthread_mutex_lock(&P->lock);
		n->failed |= failed;
		n->declined |= declined;
		if (--n->pending > 0 || !n->passed) {
			pthread_mutex_unlock(&P->lock);
			return;
		}
		pthread_mutex_unlock(&P->lock);
		enum outcome o = KEPT;
		if (!n->failed) {
			o = remove_node(P, n);
		} else {
			struct fastrm_rmtree_entry e;
			entry_of(&e, n->path, -1, n->rel, &n->st, n->level, true);
			report_kept(P, &e, FASTRM_RMTREE_KEPT_BELOW);
		}
		/* a failure the caller ignores keeps nothing above it: the
		 * directory above is still removed, or fails and says so */
		failed = o == KEPT;
		declined = o == DECLINED;
		pthread_mutex_lock(&P->lock);
		struct node *up = o == AGAIN ? NULL : n->up; /* the new task tells it */
		node_free(P, n);
		pthread_mutex_unlock(&P->lock);
		n = up;
	}
}

/* -------------------------------------------------------------- walks */

struct walk {
	struct worker *w;
	struct task *t;
	FTS *fts;
	bool root_done;     /* the task's root was removed, or kept */
	bool root_failed;   /* kept (a failure) */
	bool root_declined; /* kept by @ask at its removal */
	bool root_waits;    /* its node removes it once its subtrees are gone */
	bool root_seen;     /* the caller's @root was asked about it */
};

/* -------------------------------------------------------- estimate */

/* The entries in all: those listed; in each directory listed in part so
 * far, what its size says it holds still (tmpfs), or else what the
 * directories listed to their end at its depth held on average, less what
 * it listed; below each directory listed and not yet entered, as many as
 * a directory at its depth holds, by what was read: at depth d, S(d) =
 * c(d) + r(d) S(d + 1), c and r the mean entries (those still to be
 * listed counted) and subdirectories of the directories read at that
 * depth (0 where none was read yet: the estimate grows as the walk goes
 * deeper).  Each entry still to be listed brings what is below it too.
 * With the estimator's lock. */
static void estimate_publish(struct estimator *E)
{
	/* the paths given not met yet are unread entries at depth 0 */
	double below = 0, total = (double)E->listed + (double)E->unread[0];
	for (int d = EST_DEPTH - 1; d >= 0; d--) {
		double deeper = below; /* S(d + 1) */
		if (!E->read[d]) {
			below = 0;
			continue;
		}
		double q = E->entries[d] ? (double)E->subdirs[d] / (double)E->entries[d] : 0;
		double more = E->sized_left[d] > 0 ? (double)E->sized_left[d] : 0;
		if (E->partial[d] > 0 && E->complete[d]) {
			double m = (double)E->partial[d] * (double)E->complete_entries[d] /
			           (double)E->complete[d] - (double)E->partial_entries[d];
			more += m > 0 ? m : 0;
		}
		double c = ((double)E->entries[d] + more) / (double)E->read[d];
		double r = ((double)E->subdirs[d] + q * more) / (double)E->read[d];
		if (d == EST_DEPTH - 1) /* the levels deeper, as one */
			below = r < 0.9 ? c / (1 - r) : 10 * c;
		else
			below = c + r * below;
		if (E->unread[d] > 0)
			total += (double)E->unread[d] * below;
		total += more * (1 + q * deeper);
	}
	__atomic_store_n(E->out, (unsigned long long)total, __ATOMIC_RELAXED);
}

static int est_depth(int level)
{
	return level < EST_DEPTH ? level : EST_DEPTH - 1;
}

/* fts_on_listed(): a directory of the walk @ctx listed @n entries (@total
 * so far; @done: all). */
static void estimate_listed(void *ctx, const FTSENT *dir, size_t n, size_t ndirs,
                            bool first, bool done, size_t total)
{
	struct walk *k = ctx;
	struct estimator *E = &k->w->P->est;
	int level = k->t->level + (int)dir->fts_level, d = est_depth(level);
	pthread_mutex_lock(&E->lock);
	E->listed += n;
	E->entries[d] += n;
	E->subdirs[d] += ndirs;
	E->read[d] += first;
	if (first)
		E->unread[d]--; /* listed now: no longer guessed */
	E->unread[est_depth(level + 1)] += (long long)ndirs;
	/* a directory listed in part: what its size says it holds (the
	 * same at each of its reads), or else it is one of those guessed
	 * from the complete ones */
	long long sized = (long long)device_dir_entries(&k->w->dw, dir->fts_statp->st_size);
	if (!first) {
		/* listed in part before: what it counted then goes */
		if (sized)
			E->sized_left[d] -= sized - (long long)(total - n);
		else
			E->partial_entries[d] -= (long long)(total - n);
		if (done && !sized)
			E->partial[d]--;
	} else if (!done && !sized) {
		E->partial[d]++;
	}
	if (done) {
		E->complete[d]++;
		E->complete_entries[d] += total;
	} else if (sized) {
		E->sized_left[d] += sized - (long long)total;
	} else {
		E->partial_entries[d] += (long long)total;
	}
	estimate_publish(E);
	pthread_mutex_unlock(&E->lock);
}

/* A path given, met (@ent, its walk's root): one entry more; one not a
 * directory is no longer to guess about (a directory, once listed). */
static void estimate_given(struct walk *k, const FTSENT *ent)
{
	struct estimator *E = &k->w->P->est;
	if (!E->out || k->t->up || k->t->again)
		return;
	pthread_mutex_lock(&E->lock);
	E->listed++;
	if (!S_ISDIR(ent->fts_statp->st_mode))
		E->unread[0]--; /* a directory: once listed, or skipped */
	estimate_publish(E);
	pthread_mutex_unlock(&E->lock);
}

/* Directory @ent will not be listed (excluded, kept, skipped, or it could
 * not be read): no longer one to guess about.  (One that is listed is
 * counted off at its first listing, estimate_listed(); one handed to
 * another worker, there.) */
static void estimate_skipped(struct walk *k, const FTSENT *ent)
{
	struct estimator *E = &k->w->P->est;
	if (!E->out || RETRIES(ent->fts_number) ||
	    (ent->fts_level == FTS_ROOTLEVEL && k->t->again))
		return;
	pthread_mutex_lock(&E->lock);
	E->unread[est_depth(k->t->level + (int)ent->fts_level)]--;
	estimate_publish(E);
	pthread_mutex_unlock(&E->lock);
}

/* Keep every directory above @ent in this walk (a failure below). */
static void keep_above(FTSENT *ent)
{
	for (FTSENT *p = ent->fts_parent; p->fts_level >= FTS_ROOTLEVEL;
	     p = p->fts_parent) {
		if (p->fts_number & NUM_KEEP)
			break;
		p->fts_number |= NUM_KEEP;
	}
}

/* Keep @ent, and so every directory above it, without a word: a failure
 * said already, or the caller's choice. */
static void keep_here(struct walk *k, FTSENT *ent)
{
	if (ent->fts_level != FTS_ROOTLEVEL)
		keep_above(ent);
	else
		k->root_failed = k->root_done = true;
}

static void skip_tree(FTS *fts, FTSENT *ent)
{
	fastrm_fts_set(fts, ent, FTS_SKIP);
	(void)fastrm_fts_read(fts); /* its postorder visit */
}

static void entry_here(struct walk *k, struct fastrm_rmtree_entry *e, FTSENT *ent,
                       bool is_dir)
{
	/* a path given's walk names its entries as the stream does (the
	 * current entry's path ends where its length says): no copy */
	const char *path = !k->t->prefix[0] && ent->fts_path[ent->fts_pathlen] == '\0'
	                           ? ent->fts_path
	                           : full_path(k->w, k->t->prefix, ent->fts_path,
	                                       ent->fts_pathlen);
	entry_of(e, path, k->fts->fts_cwd_fd, ent->fts_accpath, ent->fts_statp,
	         k->t->level + ent->fts_level, is_dir);
}

static void *work(void *arg);

/* May one more worker start to take a task?  Only once the removal has
 * run SPAWN_AFTER_US (a small removal never starts one), while none is
 * queued already (one more per directory entered), within the number
 * asked (or, fitted, allowed to run at once), and not while the device
 * advisor holds them (@hold: device_hold_workers()). */
static bool spawn_room(struct pool *P, bool hold)
{
	if (hold)
		return false;
	unsigned threads = LOAD(P->threads);
	if (threads >= (LOAD(P->wide) ? LOAD(P->nworkers) : LOAD(P->cap)))
		return false;
	unsigned fitted = LOAD(P->fitted);
	if (fitted && threads >= fitted)
		return false;
	if (P->paced && threads >= pacer_allowed(&P->pace))
		return false;
	if (__atomic_load_n(&P->may_spawn, __ATOMIC_RELAXED))
		return true;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long us = (now.tv_sec - P->start.tv_sec) * 1000000LL +
	               (now.tv_nsec - P->start.tv_nsec) / 1000;
	if (us < SPAWN_AFTER_US)
		return false;
	__atomic_store_n(&P->may_spawn, true, __ATOMIC_RELAXED);
	return true;
}

static bool spawn_wanted(struct pool *P, bool hold)
{
	return LOAD(P->nqueued) == 0 && spawn_room(P, hold);
}

/* With the lock: a task was just queued; start a worker for it if none is
 * idle to take it.  Under the lock, so that the pool never ends (and the
 * caller never joins) while a thread is being started. */
static void spawn(struct pool *P, bool hold)
{
	if (P->done || ended(P) || P->idle >= P->nqueued || !spawn_room(P, hold) ||
	    !P->attr_ok)
		return;
	unsigned i = P->threads;
	if (pthread_create(&P->tid[i], &P->attr, work, &P->w[i]) != 0) {
		/* no more threads: those started do the work */
		STORE(P->nworkers, i);
		if (LOAD(P->cap) > i)
			STORE(P->cap, i);
		return;
	}
	STORE(P->threads, i + 1);
}

/* Is there a worker to take more work (@hold: spawn_room())? */
static bool wanted(struct pool *P, bool hold)
{
	if (P->o->flags & FASTRM_RMTREE_SHARE_ALL)
		return true;
	/* Fitted to one worker (reads that seek): nothing more is shared, a
	 * subtree given away would only wait, and later make the walk jump
	 * to another part of the disk.  (Fitted to one per CPU, subtrees are
	 * still shared as before: fewer made removal on XFS with fast reads
	 * slower.) */
	if (LOAD(P->fitted) == 1)
		return false;
	if (LOAD(P->nworkers) < 2)
		return false;
	return LOAD(P->idle) > LOAD(P->nqueued) || spawn_wanted(P, hold);
}

/* A task for work in @dir (the walk's current directory, whose fd is
 * fts_cwd_fd) that another worker will do: @dir's node waits for it.
 * With the lock.  NULL when a bound is reached or memory is short. */
static struct task *new_task(struct walk *k, FTSENT *dir, bool hold)
{
	struct pool *P = k->w->P;
	if (!wanted(P, hold) || P->ntasks >= P->max_tasks)
		return NULL;
	const char *dp = full_path(k->w, k->t->prefix, dir->fts_path, dir->fts_pathlen);
	struct node *n = node_of(P, k->t, dir, dp);
	if (!n)
		return NULL;
	if (!n->children) {
		if (P->nbases >= P->max_bases)
			return NULL;
		struct base *b = calloc(1, sizeof *b);
		int fd = b ? fcntl(k->fts->fts_cwd_fd, F_DUPFD_CLOEXEC, 0) : -1;
		if (fd < 0) {
			free(b);
			return NULL;
		}
		b->fd = fd;
		b->refs = 1;
		P->nbases++;
		n->children = b;
	}
	struct task *t = calloc(1, sizeof *t);
	size_t dl = strlen(dp);
	if (t)
		t->prefix = malloc(dl + 2);
	if (!t || !t->prefix) {
		free(t);
		return NULL;
	}
	memcpy(t->prefix, dp, dl);
	if (dl && dp[dl - 1] == '/')
		dl--;
	t->prefix[dl] = '/';
	t->prefix[dl + 1] = '\0';
	t->base = n->children;
	t->base->refs++;
	t->up = n;
	t->oplen = k->t->oplen;
	t->level = k->t->level + dir->fts_level + 1;
	t->rdev = k->t->rdev;
	t->pdev = dir->fts_statp->st_dev;
	t->pino = dir->fts_statp->st_ino;
	t->refs = 1;
	n->pending++;
	P->ntasks++;
	return t;
}

/* Should @ent, a directory just entered, go to an idle worker?  true: it
 * is queued as a task of its own. */
static bool share(struct walk *k, FTSENT *ent)
{
	struct pool *P = k->w->P;
	if (ent->fts_level == FTS_ROOTLEVEL || ent->fts_level > SHARE_MAX_LEVEL)
		return false;
	/* fitted: where the advisor holds more workers back (XFS and btrfs
	 * while the walk has read nothing), none starts; nor where it is
	 * about to fit the pool to one (fit() comes at the walk's next
	 * directory: a worker started in between only waits, holding a
	 * subtree: on btrfs, warm, on the one-head disk, "2 workers (then 1
	 * at once)" once the queue was judged) */
	bool hold = (P->o->flags & FASTRM_RMTREE_FIT_WORKERS) &&
	            LOAD(P->threads) < LOAD(P->nworkers) &&
	            (device_hold_workers(&k->w->dw, ent->fts_statp->st_dev) ||
	             device_workers(&k->w->dw, ent->fts_statp->st_dev, P->cpus) == 1);
	if (!wanted(P, hold))
		return false;
	if ((k->fts->fts_options & FTS_XDEV) &&
	    ent->fts_statp->st_dev != k->fts->fts_dev)
		return false; /* reported at its postorder visit, as usual */
	char *name = strdup(ent->fts_accpath);
	if (!name)
		return false;
	pthread_mutex_lock(&P->lock);
	struct task *t = new_task(k, ent->fts_parent, hold);
	if (t) {
		t->name = name;
		t->check = true;
		t->dev = ent->fts_statp->st_dev;
		t->ino = ent->fts_statp->st_ino;
		P->shared++;
		enqueue(P, t);
		spawn(P, hold);
	}
	pthread_mutex_unlock(&P->lock);
	if (!t)
		free(name);
	return t != NULL;
}

/* The walk is done with directory @ent (its postorder visit) and it has a
 * node: count the walk's share down.  Returns true when the directory is
 * to be removed now; false when it waits (its node goes on). */
static bool pass_node(struct walk *k, FTSENT *ent, struct node *n, bool keep)
{
	struct pool *P = k->w->P;
	bool nomem = false;
	pthread_mutex_lock(&P->lock);
	n->failed |= keep;
	n->declined |= (ent->fts_number & NUM_DECLINED) != 0;
	if (n->pending > 1) {
		/* subtrees below are still being removed: it waits, and so does
		 * what is above it */
		n->pending--;
		n->passed = true;
		if (ent->fts_level == FTS_ROOTLEVEL) {
			n->up = k->t->up;
		} else {
			FTSENT *pe = ent->fts_parent;
			struct node *pn = node_of(P, k->t, pe,
			                          full_path(k->w, k->t->prefix, pe->fts_path, pe->fts_pathlen));
			if (pn) {
				pn->pending++;
				n->up = pn;
			} else {
				/* no memory for the node above: this directory
				 * is kept, and so is what is above it (said below,
				 * once) */
				n->up = NULL;
				n->failed = true;
				nomem = true;
			}
		}
		pthread_mutex_unlock(&P->lock);
		if (nomem) {
			struct fastrm_rmtree_entry e;
			entry_here(k, &e, ent, true);
			report_failed(P, &e, FASTRM_RMTREE_EREMOVE, ENOMEM);
			keep_above(ent);
		}
		if (ent->fts_level == FTS_ROOTLEVEL)
			k->root_waits = true; /* its node reports to the task's up */
		return false;
	}
	pthread_mutex_unlock(&P->lock);
	return true;
}

/* Remove @ent at its postorder (or only) visit. */
static void remove_entry(struct walk *k, FTSENT *ent)
{
	struct pool *P = k->w->P;
	FTS *fts = k->fts;
	bool is_dir = ent->fts_info == FTS_DP || ent->fts_info == FTS_DNR;
	bool root = ent->fts_level == FTS_ROOTLEVEL;
	struct fastrm_rmtree_entry e;

	if (ent->fts_pointer == GIVEN_AWAY)
		return;
	if (ent->fts_info == FTS_DP && (fts->fts_options & FTS_XDEV) && !root &&
	    ent->fts_statp->st_dev != fts->fts_dev) {
		entry_here(k, &e, ent, true);
		if (report_failed(P, &e, FASTRM_RMTREE_EXDEV, EXDEV))
			keep_above(ent);
		return;
	}
	struct node *n = is_dir && ent->fts_pointer ? ent->fts_pointer : NULL;
	bool keep = is_dir && (ent->fts_number & NUM_KEEP);
	if (n) {
		bool now = pass_node(k, ent, n, keep);
		if (!now)
			return;
		keep |= n->failed;
		pthread_mutex_lock(&P->lock);
		ent->fts_pointer = NULL;
		node_free(P, n);
		pthread_mutex_unlock(&P->lock);
	}
	if (keep) {
		entry_here(k, &e, ent, true);
		report_kept(P, &e, FASTRM_RMTREE_KEPT_BELOW);
		keep_here(k, ent);
		return;
	}
	if (!(ent->fts_number & NUM_ASKED) && !(root && k->t->again)) {
		entry_here(k, &e, ent, is_dir);
		if (ask(P, &e, FASTRM_RMTREE_REMOVE) != FASTRM_RMTREE_GO) {
			/* left, as GNU rm leaves what it was told to: the
			 * directories above are still asked about, and fail
			 * when not empty */
			if (!root)
				ent->fts_parent->fts_number |= NUM_DECLINED;
			else
				k->root_declined = k->root_done = true;
			return;
		}
		ent->fts_number |= NUM_ASKED; /* not again, if it is read again */
	}

	int err = unlink_or_plan(P, fts->fts_cwd_fd, ent->fts_accpath, is_dir,
	                         ent->fts_statp, (ent->fts_number & NUM_DECLINED) != 0,
	                         root ? NULL : ent->fts_parent);
	if (P->dry && !err && ent->fts_info == FTS_DNR)
		err = ENOTEMPTY; /* taken as not empty: it could not be read */
	if (err == ENOTEMPTY && ent->fts_info == FTS_DP &&
	    !(ent->fts_number & NUM_DECLINED) &&
	    RETRIES(ent->fts_number) < NOTEMPTY_RETRIES) {
		/* entries appeared meanwhile: read it again, a few times */
		ent->fts_number += NUM_RETRY;
		fastrm_fts_set(fts, ent, FTS_AGAIN);
		return;
	}
	entry_here(k, &e, ent, is_dir);
	if (err == 0) {
		report_removed(P, &e);
		if (root)
			k->root_done = true;
		return;
	}
	struct stat sb;
	/* some kernels say EROFS for a missing file on a read-only fs */
	if (err == EROFS && fstatat(fts->fts_cwd_fd, ent->fts_accpath, &sb,
	                            AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
		err = ENOENT;
	/* rmdir of a directory that could not be read: its read error says more */
	if (ent->fts_info == FTS_DNR && ent->fts_errno &&
	    (err == ENOTEMPTY || err == EISDIR || err == ENOTDIR || err == EEXIST))
		err = ent->fts_errno;
	bool counts = report_failed(P, &e, FASTRM_RMTREE_EREMOVE, err);
	if (root)
		k->root_failed = counts, k->root_done = true;
	else if (counts)
		keep_above(ent);
}

/* Directory @ent, just entered: what the caller says of it (@ask), unless
 * it was asked already (a subtree handed over, or read again).  Returns
 * true when the walk goes into it. */
static bool enter(struct walk *k, FTSENT *ent)
{
	struct pool *P = k->w->P;
	bool root = ent->fts_level == FTS_ROOTLEVEL;
	if (!P->o->ask || RETRIES(ent->fts_number) || (root && k->t->check))
		return true;
	struct fastrm_rmtree_entry e;
	entry_here(k, &e, ent, true);
	enum fastrm_rmtree_answer a = ask(P, &e, FASTRM_RMTREE_ENTER);
	if (a == FASTRM_RMTREE_GO)
		return true;
	skip_tree(k->fts, ent);
	if (a != FASTRM_RMTREE_REMOVE_EMPTY) {
		keep_here(k, ent);
		return false;
	}
	/* found empty by the caller, who said yes: no second question */
	int err = unlink_or_plan(P, k->fts->fts_cwd_fd, ent->fts_accpath, true,
	                         ent->fts_statp, false, root ? NULL : ent->fts_parent);
	if (err == 0) {
		report_removed(P, &e);
		k->root_done |= root;
		return false;
	}
	bool counts = report_failed(P, &e, FASTRM_RMTREE_EREMOVE, err);
	if (root)
		k->root_failed = counts, k->root_done = true;
	else if (counts)
		keep_above(ent);
	return false;
}

/* Whether entry @ent of the walk matches an exclusion: then it is kept,
 * unread, and so are the directories above it (said through @kept).  A
 * path given is looked at once, in run_task(); the root of a subtree
 * handed over was looked at in the walk it came from. */
static bool exclude(struct walk *k, FTSENT *ent)
{
	struct pool *P = k->w->P;
	if (!P->nexcl || ent->fts_info == FTS_DP)
		return false;
	bool root = ent->fts_level == FTS_ROOTLEVEL;
	bool is_dir = ent->fts_info == FTS_D || ent->fts_info == FTS_DNR ||
	              S_ISDIR(ent->fts_statp->st_mode);
	struct fastrm_rmtree_entry e;
	entry_here(k, &e, ent, is_dir);
	if (root) {
		/* the path given: its last component, without the slashes */
		size_t len = op_len(k->t->name);
		const char *b = k->t->name + len;
		while (b > k->t->name && b[-1] != '/')
			b--;
		char *name = strndup(b, (size_t)(k->t->name + len - b));
		bool hit = name && matches(P, name, NULL, is_dir);
		free(name);
		if (!hit)
			return false;
	} else {
		const char *rel = e.path + k->t->oplen;
		while (*rel == '/')
			rel++;
		if (!matches(P, ent->fts_name, rel, is_dir))
			return false;
	}
	report_kept(P, &e, FASTRM_RMTREE_KEPT_EXCLUDED);
	keep_here(k, ent);
	if (root)
		k->root_failed = false; /* kept, no failure: nothing above counts it */
	if (ent->fts_info == FTS_D)
		skip_tree(k->fts, ent);
	return true;
}

static void visit(struct walk *k, FTSENT *ent)
{
	struct pool *P = k->w->P;
	struct task *t = k->t;
	struct fastrm_rmtree_entry e;

	if (P->nexcl && ent->fts_level != FTS_ROOTLEVEL && exclude(k, ent)) {
		if (ent->fts_info == FTS_D)
			estimate_skipped(k, ent);
		return;
	}
	if (ent->fts_info == FTS_DNR || ent->fts_info == FTS_DC)
		estimate_skipped(k, ent); /* never listed */
	switch (ent->fts_info) {
	case FTS_D:
		if (ent->fts_level == FTS_ROOTLEVEL) {
			if (t->check && (ent->fts_statp->st_dev != t->dev ||
			                 ent->fts_statp->st_ino != t->ino)) {
				/* Not the directory that was handed over (or read
				 * again): it was moved, and something else took its
				 * name.  Below a directory of the removal, that
				 * directory's rmdir finds what is there and reads it
				 * again, or says it could not; a path given says so
				 * here. */
				if (!t->up) {
					entry_here(k, &e, ent, true);
					k->root_failed = report_failed(P, &e, FASTRM_RMTREE_EWALK,
					                               ENOENT);
				}
				k->root_done = true;
				estimate_skipped(k, ent);
				skip_tree(k->fts, ent);
				return;
			}
			if (!t->up)
				t->rdev = ent->fts_statp->st_dev;
			t->root_len = ent->fts_pathlen;
			if (!enter(k, ent))
				estimate_skipped(k, ent);
		} else {
			bool go = enter(k, ent);
			if (go && share(k, ent)) {
				/* counted off where the worker it goes to lists it */
				ent->fts_pointer = GIVEN_AWAY;
				skip_tree(k->fts, ent);
			} else if (!go) {
				estimate_skipped(k, ent);
			}
		}
		return;
	case FTS_DC:
		entry_here(k, &e, ent, true);
		report_failed(P, &e, FASTRM_RMTREE_ECYCLE, ELOOP);
		skip_tree(k->fts, ent);
		return;
	case FTS_ERR:
		entry_here(k, &e, ent, true);
		report_failed(P, &e, FASTRM_RMTREE_EWALK, ent->fts_errno);
		if (ent->fts_level == FTS_ROOTLEVEL)
			k->root_failed = k->root_done = true;
		skip_tree(k->fts, ent);
		return;
	default:
		remove_entry(k, ent);
		return;
	}
}

/* A path given: the caller may refuse it. */
static bool root_allowed(struct walk *k, FTSENT *ent)
{
	struct pool *P = k->w->P;
	if (k->t->up || k->t->again || !P->o->root || RETRIES(ent->fts_number))
		return true;
	struct fastrm_rmtree_entry e;
	entry_here(k, &e, ent, ent->fts_info == FTS_D);
	pthread_mutex_lock(&P->cb);
	int rc = P->o->root(P->o->ctx, &e);
	if (rc != 0)
		P->failures++;
	pthread_mutex_unlock(&P->cb);
	if (rc != 0 && P->o->manifest)
		fastrm_manifest_add(P->o->manifest, e.path, type_of(&e),
		                    FASTRM_OUTCOME_FAILED, rc > 0 && rc < 4096 ? rc : 0,
		                    "refused");
	return rc == 0;
}

/* Whether the last component of @path, trailing slashes aside, is "." or
 * "..". */
static bool last_is_dots(const char *path)
{
	size_t end = op_len(path);
	size_t b = end;
	while (b > 0 && path[b - 1] != '/')
		b--;
	size_t n = end - b;
	return (n == 1 && path[b] == '.') || (n == 2 && path[b] == '.' && path[b + 1] == '.');
}

/* A path given that GNU rm refuses, unless the caller lifted it: "." or
 * ".." last, and the root directory (by device and inode, however it is
 * named).  Says so through @failed; true when refused. */
static bool refused(struct walk *k, FTSENT *ent)
{
	struct pool *P = k->w->P;
	if (k->t->up || k->t->again || RETRIES(ent->fts_number))
		return false;
	int err = 0;
	if (!(P->o->flags & FASTRM_RMTREE_ALLOW_DOTS) && last_is_dots(k->t->name))
		err = EINVAL;
	else if (P->root_known && S_ISDIR(ent->fts_statp->st_mode) &&
	         ent->fts_statp->st_dev == P->root_dev &&
	         ent->fts_statp->st_ino == P->root_ino)
		err = EBUSY;
	if (!err)
		return false;
	struct fastrm_rmtree_entry e;
	entry_here(k, &e, ent, S_ISDIR(ent->fts_statp->st_mode));
	k->root_failed = report_failed(P, &e, FASTRM_RMTREE_EREFUSED, err);
	k->root_done = true;
	return true;
}

/* FASTRM_RMTREE_FIT_WORKERS: at each directory a walk enters, the device
 * advisor says how many workers may run at once on its device
 * (device_workers: on ext4 and btrfs one where reads seek, are served one
 * at a time and nothing reads ahead; one per CPU on XFS whose reads are
 * fast, one on XFS while the walk runs from memory; doc/design.md, "The
 * device advisor").
 * Past that, the worker waits there, holding its subtree, for one that
 * runs to finish its task or wait.  (Nothing waits on a waiting worker: a
 * directory is removed by whichever worker empties it last.) */
/* How many workers may run at once: @most, and no more than a latency
 * target allows (pacer_allowed(): what another request waits behind is
 * all they read and remove, not only their unlinks). */
static unsigned running_limit(struct pool *P, unsigned most)
{
	unsigned allowed = P->paced ? pacer_allowed(&P->pace) : ~0u;
	return allowed < most ? allowed : most;
}

/* While more run than running_limit(@most): wait here, holding the
 * subtree, for a turn (looked at again at least every 100 ms: the pacer's
 * allowance changes without a signal, and a stop is a flag). */
static void hold_running(struct pool *P, unsigned most)
{
	pthread_mutex_lock(&P->lock);
	if (P->running > running_limit(P, most)) {
		ADD(P->running, -1u);
		pthread_cond_signal(&P->slot);
		while (P->running >= running_limit(P, most) && !ended(P)) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&P->slot, &P->lock, &ts);
		}
		ADD(P->running, 1);
	}
	pthread_mutex_unlock(&P->lock);
}

static void fit(struct worker *w, dev_t dev)
{
	struct pool *P = w->P;
	if (P->paced && LOAD(P->running) > running_limit(P, ~0u))
		hold_running(P, ~0u);
	if (!(P->o->flags & FASTRM_RMTREE_FIT_WORKERS) || LOAD(P->nworkers) < 2)
		return;
	unsigned most = device_workers(&w->dw, dev, P->cpus);
	if (most == DEVICE_WORKERS_WIDE && most > LOAD(P->cap) && !LOAD(P->fitted)) {
		STORE(P->wide, true); /* more may start (spawn_room()) */
		return;
	}
	if (!most || most >= LOAD(P->cap))
		return;
	unsigned fitted = LOAD(P->fitted);
	if (!fitted || most < fitted) {
		/* from now on (wanted() shares no more than may run) */
		pthread_mutex_lock(&P->lock);
		if (!P->fitted || most < P->fitted)
			STORE(P->fitted, most);
		pthread_mutex_unlock(&P->lock);
	}
	if (LOAD(P->running) > most)
		hold_running(P, most);
}

/* Whether the directory a walk is about to read is read with its files
 * first (fts_dirs_last): while workers run at once the order of removals
 * is not the serial one anyway, and a directory's files go before its
 * subdirectories, so that a deep path holds one entry a level.  While one
 * walk runs alone (no worker started yet, the advisor holds them, or the
 * pool is fitted to one) or prompts need GNU rm's order: the serial order,
 * GNU rm's, which on a disk that seeks follows the order the entries were
 * made in (btrfs, an aged real tree, cold, one-head disk, as a plain
 * user: files first took 1.19x GNU rm's time with one worker and 1.5x
 * its seeks; doc/results.md, "btrfs cold on the one-head disk"). */
static bool spread(struct pool *P)
{
	return P->nworkers > 1 && !P->o->ask && LOAD(P->threads) > 1 &&
	       LOAD(P->fitted) != 1;
}

static void run_task(struct worker *w, struct task *t)
{
	struct pool *P = w->P;
	char *argv[2] = { t->name, NULL };
	int options = FTS_CWDFD | FTS_NOSTAT | FTS_PHYSICAL;
	if (P->o->flags & FASTRM_RMTREE_XDEV)
		options |= FTS_XDEV;
	struct walk k = { .w = w, .t = t };

	k.fts = fts_open_at(t->base->fd, argv, options, NULL);
	if (!k.fts) {
		report_fatal(P, errno ? -errno : -ENOMEM);
	} else {
		(void)fastrm_fts_set_order(k.fts, P->order); /* checked at the start */
		fastrm_fts_set_memory_budget(k.fts, P->budget);
		fts_share_budget(k.fts, &P->held);
		fts_share_device(k.fts, &w->dw);
		if (P->est.out)
			fts_on_listed(k.fts, estimate_listed, &k);
		FTSENT *ent = NULL;
		while (!ended(P) && (ent = fastrm_fts_read(k.fts)) != NULL) {
			if (ent->fts_level == FTS_ROOTLEVEL && !k.root_seen &&
			    (k.root_seen = true)) {
				bool given = !t->up && !t->again;
				estimate_given(&k, ent);
				if (given && P->o->manifest)
					manifest_watch(P->o->manifest, k.fts->fts_cwd_fd,
					               ent->fts_accpath);
				if (given && exclude(&k, ent)) {
					if (ent->fts_info == FTS_D)
						estimate_skipped(&k, ent);
					continue;
				}
				bool keep = !root_allowed(&k, ent);
				if (keep)
					k.root_failed = k.root_done = true;
				else
					keep = refused(&k, ent);
				if (keep) {
					if (ent->fts_info == FTS_D) {
						estimate_skipped(&k, ent);
						skip_tree(k.fts, ent);
					}
					continue;
				}
			}
			if (ent->fts_info == FTS_D) {
				fit(w, ent->fts_statp->st_dev);
				fts_dirs_last(k.fts, spread(P));
			}
			visit(&k, ent);
		}
		if (!ent && errno != 0 && !ended(P)) {
			/* the walk cannot go on: as GNU rm after "fts_read
			 * failed", the whole removal ends (the return value
			 * says why) */
			report_fatal(P, -errno);
		}
		fastrm_fts_close(k.fts);
	}
	struct node *up = t->up;
	bool tell = k.root_done && !k.root_waits && !ended(P);
	pthread_mutex_lock(&P->lock);
	task_put(P, t);
	pthread_mutex_unlock(&P->lock);
	if (tell && up)
		count_down(P, up, k.root_failed, k.root_declined);
}

/* Queue the next group of paths given, when the pool has run dry: one
 * directory alone (its removal must end before anything given after it
 * starts, as with GNU rm: later paths may be inside it, earlier ones may
 * be what it holds), or a run of up to GROUP_MAX other files, all
 * different files, removed at once.  With the lock.  false: none left,
 * or no memory (then P->fatal is set).  *@heavy: the HEAVY_FILE files of
 * the group. */
static bool feed(struct pool *P, unsigned *heavy)
{
	*heavy = 0;
	dev_t dev[GROUP_MAX];
	ino_t ino[GROUP_MAX];
	unsigned n = 0;
	while (*P->next_arg && n < GROUP_MAX) {
		const char *a = *P->next_arg;
		struct stat sb;
		bool dir = false,
		     known = (P->dirfd == AT_FDCWD ? lstat(a, &sb)
		                                   : fstatat(P->dirfd, a, &sb,
		                                             AT_SYMLINK_NOFOLLOW)) == 0;
		if (known) {
			dir = S_ISDIR(sb.st_mode);
			bool again = false;
			for (unsigned i = 0; i < n && !again; i++)
				again = dev[i] == sb.st_dev && ino[i] == sb.st_ino;
			if (n > 0 && (dir || again))
				break; /* it starts the next group */
			*heavy += S_ISREG(sb.st_mode) && sb.st_size >= HEAVY_FILE;
			dev[n] = sb.st_dev;
			ino[n] = sb.st_ino;
		} else if (n > 0) {
			break;
		}
		struct task *t = calloc(1, sizeof *t);
		struct base *b = calloc(1, sizeof *b);
		if (!t || !b || !(t->name = strdup(a)) || !(t->prefix = strdup(""))) {
			if (t)
				free(t->name);
			free(t);
			free(b);
			STORE(P->fatal, -ENOMEM);
			return false;
		}
		t->oplen = op_len(a);
		b->fd = P->dirfd;
		b->borrowed = true;
		b->refs = 1;
		t->base = b;
		t->refs = 1;
		P->ntasks++;
		enqueue(P, t);
		P->next_arg++;
		n++;
		if (dir || !known)
			break;
	}
	return n > 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *P = w->P;
	pthread_mutex_lock(&P->lock);
	for (;;) {
		ADD(P->idle, 1);
		while (!P->head && !P->done) {
			unsigned heavy;
			if (P->idle == P->threads && !ended(P) && feed(P, &heavy)) {
				/* huge files given: one worker each, now (their
				 * unlinks take long, and run at once) */
				if (heavy > 1)
					__atomic_store_n(&P->may_spawn, true, __ATOMIC_RELAXED);
				for (unsigned i = 1; i < heavy; i++)
					spawn(P, false);
				continue;
			}
			if (P->idle == P->threads || ended(P)) {
				/* nothing queued, nobody at work: all is done */
				P->done = true;
				pthread_cond_broadcast(&P->work);
				break;
			}
			pthread_cond_wait(&P->work, &P->lock);
		}
		if (P->done || ended(P)) {
			P->done = true;
			pthread_cond_broadcast(&P->work);
			break;
		}
		struct task *t = P->head;
		P->head = t->next;
		if (!P->head)
			P->tail = NULL;
		ADD(P->nqueued, -1u);
		ADD(P->idle, -1u);
		ADD(P->running, 1);
		pthread_mutex_unlock(&P->lock);
		run_task(w, t);
		pthread_mutex_lock(&P->lock);
		ADD(P->running, -1u);
		pthread_cond_signal(&P->slot);
	}
	pthread_mutex_unlock(&P->lock);
	free(w->path);
	w->path = NULL;
	return NULL;
}

/* Workers that the limit on open files can hold. */
static unsigned fit_workers(unsigned want)
{
	struct rlimit rl;
	if (want > MAX_WORKERS)
		want = MAX_WORKERS;
	if (want < 1)
		want = 1;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t room = rl.rlim_cur > FDS_RESERVED ? rl.rlim_cur - FDS_RESERVED : 0;
		rlim_t fit = room / (FDS_PER_WORKER + MAX_BASES_PER_WORKER);
		if (fit < want)
			want = fit > 1 ? (unsigned)fit : 1;
	}
	return want;
}

FASTRM_EXPORT int fastrm_rmtree(char *const *paths,
                                const struct fastrm_rmtree_opts *opts,
                                struct fastrm_rmtree_stats *stats)
{
	return fastrm_rmtreeat(AT_FDCWD, paths, opts, stats);
}

FASTRM_EXPORT int fastrm_rmtreeat(int dirfd, char *const *paths,
                                  const struct fastrm_rmtree_opts *opts,
                                  struct fastrm_rmtree_stats *stats)
{
	if (dirfd < 0 && dirfd != AT_FDCWD)
		return -EBADF;
	/* a caller built before 0.7: the fields it did not know are NULL */
	struct fastrm_rmtree_opts own = { 0 };
	if (opts && opts->size >= offsetof(struct fastrm_rmtree_opts, estimate)) {
		memcpy(&own, opts, opts->size < sizeof own ? opts->size : sizeof own);
		own.size = sizeof own;
		opts = &own;
	}
	if (!paths || !opts || opts->size < sizeof *opts ||
	    (opts->flags & ~(FASTRM_RMTREE_XDEV | FASTRM_RMTREE_FIT_WORKERS |
	                     FASTRM_RMTREE_NO_PRESERVE_ROOT | FASTRM_RMTREE_ALLOW_DOTS |
	                     FASTRM_RMTREE_ASK_CONCURRENT | FASTRM_RMTREE_DRY_RUN |
	                     FASTRM_RMTREE_TEST_FLAGS)))
		return -EINVAL;
	if (opts->order && !order_usable(opts->order))
		return -EINVAL; /* the walks would run another policy */
	struct pool P = {
		.o = opts,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cb = PTHREAD_MUTEX_INITIALIZER,
		.work = PTHREAD_COND_INITIALIZER,
		.slot = PTHREAD_COND_INITIALIZER,
	};
	P.order = opts->order ? opts->order : fastrm_order_by_name("auto");
	P.dry = (opts->flags & FASTRM_RMTREE_DRY_RUN) != 0;
	if (!(opts->max_rate >= 0) || opts->max_rate > 1e9)
		return -EINVAL;
	P.est.out = opts->estimate;
	pthread_mutex_init(&P.est.lock, NULL);
	if (P.est.out) {
		__atomic_store_n(P.est.out, 0, __ATOMIC_RELAXED);
		for (char *const *a = paths; *a; a++)
			P.est.unread[0]++;
	}
	if (!exclusions_parse(&P, opts->exclude)) {
		exclusions_free(&P);
		return -ENOMEM;
	}
	/* where the advisor may ask for more (DEVICE_WORKERS_WIDE), room
	 * for them: only their slots are made, and none starts unless asked */
	P.cap = fit_workers(opts->workers);
	P.nworkers = (opts->flags & FASTRM_RMTREE_FIT_WORKERS) && P.cap > 1 &&
	                     P.cap < DEVICE_WORKERS_WIDE
	             ? fit_workers(DEVICE_WORKERS_WIDE) : P.cap;
	if (P.nworkers < P.cap)
		P.cap = P.nworkers;
	P.budget = opts->memory ? opts->memory : FASTRM_DEFAULT_BUDGET;
	if (P.budget < 64 * 1024)
		P.budget = 64 * 1024;
	P.max_tasks = MAX_TASKS_PER_WORKER * P.nworkers;
	P.max_bases = MAX_BASES_PER_WORKER * P.nworkers;
	P.paced = !P.dry && pacer_init(&P.pace, opts->max_rate, opts->latency_target_us,
	                               P.nworkers, opts->pace_rate, opts->pace_in_flight);

	/* The paths given become tasks, relative to @dirfd, group after
	 * group (feed()). */
	int rc = 0;
	P.next_arg = paths;
	P.dirfd = dirfd;
	unsigned nw = P.nworkers;
	struct worker *w = calloc(nw, sizeof *w);
	P.tid = calloc(nw, sizeof *P.tid);
	P.w = w;
	P.threads = 1;
	struct stat root;
	if (!(opts->flags & FASTRM_RMTREE_NO_PRESERVE_ROOT) && lstat("/", &root) == 0) {
		P.root_known = true;
		P.root_dev = root.st_dev;
		P.root_ino = root.st_ino;
	}
	clock_gettime(CLOCK_MONOTONIC, &P.start);
	/* One device advisor for all workers: what one walk measures, the
	 * others know (without memory for it, no read-ahead, no fitting). */
	P.adv = device_advisor_new(DEVICE_ADVISE_ALL);
	/* the CPUs this thread may run on (one system call; sysconf's
	 * count reads sysfs), where the pool may be fitted to them */
	P.cpus = 1;
	cpu_set_t set;
	if ((opts->flags & FASTRM_RMTREE_FIT_WORKERS) && nw > 1 &&
	    sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1)
		P.cpus = (unsigned)CPU_COUNT(&set);
	if (opts->flags & (FASTRM_RMTREE_READS_SEEK | FASTRM_RMTREE_READS_FAST)) {
		/* tests: the first path's device taken as measured */
		int fd = paths[0] ? openat(dirfd, paths[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC)
		                  : -1;
		struct stat first;
		if (fd >= 0 && fstat(fd, &first) == 0)
			device_assume(P.adv, fd, first.st_dev,
			              opts->flags & FASTRM_RMTREE_READS_SEEK ? DEVICE_READS_SEEK
			                                                     : DEVICE_READS_FAST);
		if (fd >= 0)
			close(fd);
	}
	if (opts->flags & FASTRM_RMTREE_SHARE_ALL)
		P.may_spawn = true; /* tests: workers from the first share on */
	if (!w || !P.tid)
		rc = -ENOMEM;
	if (rc == 0) {
		for (unsigned i = 0; i < nw; i++) {
			w[i].P = &P;
			device_walk_init(&w[i].dw, P.adv);
		}
		/* Workers never take signals: the caller's thread handles
		 * them.  They start on demand (spawn()). */
		sigset_t all;
		sigfillset(&all);
		P.attr_ok = nw > 1 && pthread_attr_init(&P.attr) == 0;
		if (P.attr_ok && pthread_attr_setsigmask_np(&P.attr, &all) != 0) {
			pthread_attr_destroy(&P.attr);
			P.attr_ok = false;
		}
		work(&w[0]); /* the caller's thread is a worker too */
		/* done: nothing starts any more (spawn() looks under the
		 * lock) */
		pthread_mutex_lock(&P.lock);
		unsigned threads = P.threads;
		pthread_mutex_unlock(&P.lock);
		for (unsigned i = 1; i < threads; i++)
			pthread_join(P.tid[i], NULL);
		if (P.attr_ok)
			pthread_attr_destroy(&P.attr);
	}

	/* After a stop or a fatal error: what was left waiting. */
	while (P.head) {
		struct task *t = P.head;
		P.head = t->next;
		task_put(&P, t);
	}
	while (P.nodes)
		node_free(&P, P.nodes);

	if (stats) {
		memset(stats, 0, sizeof *stats);
		stats->workers = P.threads;
		stats->workers_fitted = P.fitted;
		stats->subtrees_shared = P.shared;
	}
	struct device_totals total = { 0 };
	for (unsigned i = 0; w && rc == 0 && i < nw; i++) {
		device_totals_add(&total, &w[i].dw);
		device_walk_fini(&w[i].dw);
	}
	if (stats) {
		stats->read_ahead_requests = (size_t)total.requests;
		stats->read_ahead_bytes = (size_t)total.bytes;
		stats->index_lookups = (size_t)total.lookups;
		stats->inodes_read_ahead = (size_t)total.inodes;
		stats->leaves_read_ahead = (size_t)total.leaves;
		stats->paced_ms = P.paced ? (size_t)(P.pace.waited_ns / 1000000) : 0;
	}
	if (P.paced)
		pacer_fini(&P.pace);
	device_advisor_free(P.adv);
	exclusions_free(&P);
	pthread_mutex_destroy(&P.est.lock);
	free(w);
	free(P.tid);
	if (rc == 0)
		rc = P.fatal ? P.fatal : stopped(&P) ? -EINTR
		                       : (int)(P.failures > INT32_MAX ? INT32_MAX : P.failures);
	return rc;
}
