/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The traversal: fts_open/fts_read/fts_children/fts_set/fts_close with the
 * semantics of gnulib's fts, walking through directory fds, without
 * recursion.
 *
 * How it walks
 * - A directory on the current path has a `struct level`: its fd, the
 *   batch of its entries being visited and its ordering policy's state.
 *   A level that is done and far enough above the deepest (every entry
 *   read, its policy released, its fd closed, its batch entries of their
 *   own listed from the entry the walk descended into) keeps no record
 *   at all: what it needs when the walk climbs back is derived
 *   from that entry (level_derive), so a deep path costs its entries
 *   and nothing more a level, as gnulib's.
 * - Only the FD_WINDOW deepest levels keep their fd open.  Climbing back
 *   to a closed one reopens it through ".." relative to its child (or, if
 *   that does not lead back, through its full path) and checks its
 *   (dev, ino) against what was recorded on the way down; a directory that
 *   was partly read is repositioned with lseek to where reading stopped.
 * - Every open is an openat() relative to the parent's fd, with
 *   O_NOFOLLOW|O_DIRECTORY in a physical walk, and the result is checked
 *   against the (dev, ino) seen before descending.
 * - The working directory follows the walk only in fts's default mode
 *   (neither FTS_CWDFD nor FTS_NOCHDIR), where fts_accpath is relative to
 *   it: the walk fchdir()s into a level's fd before visiting its entries,
 *   and climbs back checking that ".." is still the parent, as gnulib.
 * - Entries live in per-batch arenas (struct batch): one allocation per
 *   chunk, never one per entry.  The path of the current entry is built in
 *   one buffer that every FTSENT's fts_path points to, as in gnulib.
 */
#define _GNU_SOURCE
#include <fastrm/fts.h>

#include "devino.h"
#include "dirread.h"
#include "fastrm-int.h"
#include "fts-int.h"
#include "order.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Directory fds kept open on the current path.  Deeper paths close the
 * shallowest ones, so the count is bounded whatever the depth (gnulib
 * keeps a ring of 4 ancestors too). */
#define FD_WINDOW 4

/* Entries materialised per batch by fts_read(): bounds the memory that a
 * huge directory takes, whatever the policy's own window (the policies
 * keep entries far more compactly than FTSENTs). */
#define BATCH_ENTRIES 1024

/* fts_children() returns at most this many entries of a directory without
 * a comparator, as gnulib (FTS_MAX_READDIR_ENTRIES). */
#define CHILDREN_ENTRIES 100000

/* The least a directory's policy gets, however deep the path of large
 * directories: enough for a kernel buffer's worth of entries. */
#define MIN_BUDGET (256 * 1024)

/* fts_priv_flags */
#define PF_STAT_REQUIRED 0x1 /* FTS_NSOK entry that must be stat'ed */
#define PF_ACTIVE        0x2 /* directory recorded in the active set */
#define PF_OWN           0x4 /* an allocation of its own (not in a chunk) */


/* A chunk of an arena. */
struct chunk {
	struct chunk *next;
	uint32_t used, cap;
	max_align_t data[];
};

/* One list of sibling entries and the memory that holds them. */
struct batch {
	FTSENT *head, *tail;
	size_t n;
	struct chunk *chunks, *last; /* in the order they were made */
	size_t made;                 /* entries made in it */
};

struct level {
	size_t depth;         /* the directory's fts_level */
	FTSENT *dir;
	struct fastrm_order_source src; /* src.fd: the directory's fd or -1 */
	const struct fastrm_order *order; /* chosen at the first read */
	off_t pos;            /* read position saved when the fd was closed */
	bool reading;         /* opened for reading at least once */
	bool done;            /* the policy has passed every entry */
	bool nameonly;        /* batch made by fts_children(FTS_NAMEONLY) */
	bool windows;         /* its entries go to device_entry_out() */
	size_t nread;         /* entries read so far */
	struct batch batch;   /* entries being visited */
	void *pstate;         /* ordering policy's state */
};

struct stream {
	FTS pub;
	int rootfd;             /* the roots' paths are relative to it */
	int rfd;                /* default mode: the working directory that
	                           fts_open found (O_PATH), else -1 */
	long cwd;               /* default mode: the level whose directory is
	                           the working directory; -1: rfd's */
	FTSENT *rootparent;     /* level -1 sentinel */
	FTSENT *init;           /* "before the first root" sentinel */
	struct batch roots;
	struct batch sentinels;
	struct level **lv;      /* the levels that have a record, by depth */
	size_t nrec, reccap;
	struct level *spare;    /* a record released, for the next level */
	size_t nlv;             /* levels on the path: depths 0 .. nlv-1 */
	size_t lo;              /* every level below lo has its fd closed */
	unsigned nopen;         /* level fds open */
	struct dirread rd;
	struct devino_set active; /* FTS_TIGHT_CYCLE_CHECK, FTS_LOGICAL */
	/* any other walk: gnulib's lazy check, in constant memory: the
	 * directory entered at each power of two of the entries counted (or,
	 * once it is left, its parent) is compared with every one entered */
	uintmax_t cyc_count;
	dev_t cyc_dev;
	ino_t cyc_ino;
	const struct fastrm_order *order; /* for directories opened next */
	size_t budget;          /* bytes the policies may hold, together */
	size_t held;            /* bytes they hold now */
	size_t *shared_held;    /* the same, for every stream sharing the budget
	                           (fts_share_budget), or NULL */
	FTSENT **sortv;
	size_t sortcap;
	struct device_walk dw_own; /* the device advisor's walk state... */
	struct device_walk *dw;    /* ...this one, or fts_share_device's */
	bool no_advisor;           /* dw_own's advisor could not be made */
	bool dirs_last;            /* fts_dirs_last() */
	fts_listed_fn listed;      /* fts_on_listed() */
	void *listed_ctx;
};

#define ST(sp) ((struct stream *)(void *)(sp))
#define ISSET(st, opt) (((st)->pub.fts_options & (opt)) != 0)

/* ---------------------------------------------------------------- arenas */

/* A batch's first SMALL_BATCH entries are allocations of their own
 * (PF_OWN), as gnulib's entries are: the walk frees each as it passes it
 * (batch_reclaim), so a deep path of small directories holds only the
 * entries still to come at each level, at what malloc takes for one
 * entry; later entries go in chunks that grow from 4 KiB to 64 KiB (one
 * allocation for many entries in a large directory).  The list of a batch
 * holds every entry it made and has not freed. */
#define SMALL_BATCH 64
#define CHUNK_FIRST 4096
#define CHUNK_MAX 65536

/* @size bytes for an entry of batch @b; *@own tells whether they are an
 * allocation of their own. */
static void *batch_alloc(struct batch *b, size_t size, bool *own)
{
	*own = b->made < SMALL_BATCH;
	if (*own) {
		void *p = malloc(size);
		if (p)
			b->made++;
		return p;
	}
	struct chunk *c = b->last;
	if (!c || c->cap - c->used < size) {
		/* double what the last chunk held, within bounds */
		size_t cap = c && c->cap >= CHUNK_FIRST ? 2 * (size_t)c->cap
		                                        : CHUNK_FIRST;
		if (cap > CHUNK_MAX)
			cap = CHUNK_MAX;
		if (cap < size)
			cap = size;
		c = malloc(sizeof *c + cap);
		if (!c)
			return NULL;
		c->cap = (uint32_t)cap;
		c->used = 0;
		c->next = NULL;
		if (b->last)
			b->last->next = c;
		else
			b->chunks = c;
		b->last = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += (uint32_t)size;
	b->made++;
	return p;
}

static void batch_free(struct batch *b)
{
	for (FTSENT *p = b->head, *n; p; p = n) {
		n = p->fts_link;
		if (p->fts_priv_flags & PF_OWN)
			free(p);
	}
	struct chunk *c = b->chunks;
	while (c) {
		struct chunk *n = c->next;
		free(c);
		c = n;
	}
	memset(b, 0, sizeof *b);
}

/* The walk has moved on to @next in batch @b, whose list is in the order
 * its entries were made (no comparator): the entries before @next, and
 * every chunk before the one that holds @next, are passed, and nothing
 * uses them any more (fts(3): an entry is valid until the next fts_read,
 * but for the directories of the current path, which are each the entry
 * being visited at their own level). */
static void batch_reclaim(struct batch *b, FTSENT *next)
{
	/* the list starts at @next: nothing walks the entries passed (the
	 * path buffer's adjust_list() would, into freed memory) */
	while (b->head && b->head != next) {
		FTSENT *p = b->head;
		b->head = p->fts_link;
		b->n--;
		if (p->fts_priv_flags & PF_OWN)
			free(p);
	}
	if (!next || (next->fts_priv_flags & PF_OWN))
		return; /* the chunks hold entries after it */
	struct chunk *c;
	while ((c = b->chunks) != NULL && c != b->last &&
	       !((const char *)next >= (const char *)c->data &&
	         (const char *)next < (const char *)c->data + c->used)) {
		b->chunks = c->next;
		free(c);
	}
}

/* fts_dirs_last(): move the subdirectories of small batch @b (entries of
 * their own, in the order they were made) after its other entries, in the
 * same order among themselves.  The files then go before the walk
 * descends, and a deep path of small directories holds one entry a level,
 * whatever the order the directory gave. */
static void batch_dirs_last(struct batch *b)
{
	if (b->n < 2 || b->n != b->made || b->made > SMALL_BATCH)
		return;
	FTSENT *files = NULL, **ft = &files, *dirs = NULL, **dt = &dirs;
	for (FTSENT *p = b->head; p; p = p->fts_link) {
		FTSENT ***t = S_ISDIR(p->fts_statp->st_mode) ? &dt : &ft;
		**t = p;
		*t = &p->fts_link;
	}
	*dt = NULL;
	*ft = dirs;
	b->head = files;
	for (FTSENT *p = b->head; p; p = p->fts_link)
		b->tail = p;
}

/* The size an entry of @namelen takes in a chunk. */
static size_t ent_size(size_t namelen)
{
	size_t size = offsetof(FTSENT, fts_name) + namelen + 1;
	return (size + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
}

static void batch_append(struct batch *b, FTSENT *p)
{
	p->fts_link = NULL;
	if (b->tail)
		b->tail->fts_link = p;
	else
		b->head = p;
	b->tail = p;
	b->n++;
}

static FTSENT *ent_alloc(struct stream *st, struct batch *b, const char *name,
                         size_t namelen)
{
	/* an entry of its own is rounded up to FTSENT's alignment, as gnulib's
	 * FLEXSIZEOF does: the compiler may read the name a word at a time */
	size_t own_size = (offsetof(FTSENT, fts_name) + namelen + 1 +
	                   _Alignof(FTSENT) - 1) & ~(_Alignof(FTSENT) - 1);
	bool own;
	FTSENT *p = batch_alloc(b, b->made < SMALL_BATCH ? own_size
	                                                 : ent_size(namelen), &own);
	if (!p)
		return NULL;
	memset(p, 0, offsetof(FTSENT, fts_name));
	if (own)
		p->fts_priv_flags = PF_OWN;
	memcpy(p->fts_name, name, namelen);
	p->fts_name[namelen] = '\0';
	p->fts_namelen = namelen;
	p->fts_fts = &st->pub;
	p->fts_path = st->pub.fts_path;
	p->fts_accpath = p->fts_name;
	p->fts_symfd = -1;
	p->fts_instr = FTS_NOINSTR;
	return p;
}

/* ------------------------------------------------------------ path buffer */

static void adjust_list(FTSENT *p, char *old, char *new)
{
	for (; p; p = p->fts_link) {
		if (p->fts_path == old)
			p->fts_path = new;
		if (p->fts_accpath == old)
			p->fts_accpath = new;
	}
}

/* Make the path buffer hold at least @need bytes; every entry's fts_path
 * follows it if it moves. */
static int path_reserve(struct stream *st, size_t need)
{
	FTS *sp = &st->pub;
	if (need <= sp->fts_pathlen)
		return 0;
	size_t cap = sp->fts_pathlen ? sp->fts_pathlen : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			errno = ENAMETOOLONG;
			return -1;
		}
		cap *= 2;
	}
	char *old = sp->fts_path;
	char *new = realloc(old, cap);
	if (!new)
		return -1;
	sp->fts_path = new;
	sp->fts_pathlen = cap;
	if (old && new != old) {
		adjust_list(st->sentinels.head, old, new);
		adjust_list(st->roots.head, old, new);
		for (size_t i = 0; i < st->nrec; i++)
			adjust_list(st->lv[i]->batch.head, old, new);
		/* a level without a record: its entries are those from the
		 * one on the path below it on */
		if (st->nrec)
			for (FTSENT *x = st->lv[st->nrec - 1]->dir;
			     x->fts_level > FTS_ROOTLEVEL; x = x->fts_parent)
				adjust_list(x, old, new);
	}
	return 0;
}

/* ---------------------------------------------------------------- levels */

/* The record of level @d, or NULL if it has none (or is not on the path).
 * The records are searched from the deepest: the walk asks for the
 * deepest levels. */
static struct level *level_at(const struct stream *st, size_t d)
{
	for (size_t i = st->nrec; i-- > 0;) {
		if (st->lv[i]->depth == d)
			return st->lv[i];
		if (st->lv[i]->depth < d)
			break;
	}
	return NULL;
}

/* Whether level @L may lose its record: nothing left to read or release,
 * and its batch made of entries of their own, listed from @child (the
 * directory the walk is in below it) on, so that level_derive() can
 * rebuild it from @child. */
static bool level_compactable(const struct level *L, const FTSENT *child)
{
	return L->done && L->src.fd < 0 && !L->pstate && !L->src.held &&
	       !L->nameonly && L->dir->fts_symfd < 0 && !L->batch.chunks &&
	       L->batch.head == child;
}

/* Level @d's record, rebuilt from @child, the entry of its batch that the
 * walk descended into (level_compactable() held when it was dropped). */
static void level_derive(struct stream *st, size_t d, FTSENT *child,
                         struct level *L)
{
	memset(L, 0, sizeof *L);
	L->depth = d;
	L->dir = child->fts_parent;
	L->src.rd = &st->rd;
	L->src.fd = -1;
	L->src.eof = true;
	L->src.st = L->dir->fts_statp;
	L->src.dw = st->dw;
	L->reading = true;
	L->done = true;
	struct batch *b = &L->batch;
	b->head = child;
	for (FTSENT *p = child; p; p = p->fts_link) {
		b->tail = p;
		b->n++;
	}
	b->made = b->n;
}

/* The entry on the path at depth @d + 1 (the directory level @d's walk
 * is in): a record's directory, or found from the shallowest record
 * deeper than that through its parents.  The deepest level has one. */
static FTSENT *path_child(const struct stream *st, size_t d)
{
	FTSENT *x = NULL;
	for (size_t i = st->nrec; i-- > 0 && st->lv[i]->depth >= d + 1;)
		x = st->lv[i]->dir;
	while ((size_t)x->fts_level > d + 1)
		x = x->fts_parent;
	return x;
}

/* A record, with room for its pointer among the stream's (not placed
 * yet), or NULL.  The one released last is used again: a walk enters
 * and leaves directories one after another, without an allocation each. */
static struct level *level_record_new(struct stream *st)
{
	if (st->nrec == st->reccap) {
		size_t cap = st->reccap ? 2 * st->reccap : 16;
		struct level **v = realloc(st->lv, cap * sizeof *v);
		if (!v)
			return NULL;
		st->lv = v;
		st->reccap = cap;
	}
	struct level *L = st->spare;
	st->spare = NULL;
	return L ? L : malloc(sizeof *L);
}

/* Give back a record that is no longer placed. */
static void level_record_free(struct stream *st, struct level *L)
{
	if (st->spare)
		free(L);
	else
		st->spare = L;
}

/* Give level @d, which has no record, one again (the walk climbs back to
 * it).  Returns it, or NULL (ENOMEM). */
static struct level *level_restore(struct stream *st, size_t d)
{
	struct level *L = level_record_new(st);
	if (!L)
		return NULL;
	level_derive(st, d, path_child(st, d), L);
	size_t i = st->nrec;
	while (i > 0 && st->lv[i - 1]->depth > d)
		i--;
	memmove(&st->lv[i + 1], &st->lv[i], (st->nrec - i) * sizeof *st->lv);
	st->lv[i] = L;
	st->nrec++;
	return L;
}

/* Drop the record at index @i (level_compactable() holds). */
static void level_compact(struct stream *st, size_t i)
{
	level_record_free(st, st->lv[i]);
	memmove(&st->lv[i], &st->lv[i + 1], (st->nrec - i - 1) * sizeof *st->lv);
	st->nrec--;
}

/* fts_pathlen of @p without a trailing slash, as the base of its entries'
 * paths ("/" + "etc" is "/etc", not "//etc"). */
static size_t path_base(const FTSENT *p)
{
	return p->fts_pathlen && p->fts_path[p->fts_pathlen - 1] == '/'
	               ? p->fts_pathlen - 1
	               : p->fts_pathlen;
}

/* ------------------------------------------------------------------ stat */

/* The fd of @p's parent (a level with a record: the deepest, or the one
 * above it), or the roots' directory. */
static int parent_fd(struct stream *st, const FTSENT *p)
{
	return p->fts_level <= FTS_ROOTLEVEL
	               ? st->rootfd
	               : level_at(st, (size_t)p->fts_level - 1)->src.fd;
}

static const char *rel_name(const FTSENT *p)
{
	return p->fts_level == FTS_ROOTLEVEL ? p->fts_accpath : p->fts_name;
}

static unsigned short classify(const FTSENT *p)
{
	mode_t m = p->fts_statp->st_mode;
	if (S_ISDIR(m)) {
		if (ISDOT(p->fts_name))
			return p->fts_level == FTS_ROOTLEVEL ? FTS_D : FTS_DOT;
		return FTS_D;
	}
	if (S_ISLNK(m))
		return FTS_SL;
	if (S_ISREG(m))
		return FTS_F;
	return FTS_DEFAULT;
}

/* fstatat() of @p's whole path, relative to the roots' directory: write
 * the path into the path buffer (the parent's path is there, as a prefix of
 * the current one), then put back what was overwritten. */
static int stat_path(struct stream *st, const FTSENT *p, struct stat *sb,
                     int flags)
{
	char *path = st->pub.fts_path;
	size_t base = path_base(p->fts_parent);
	size_t len = p->fts_pathlen - base + 1; /* "/name" and its NUL */
	char keep[NAME_MAX + 3];
	if (len > sizeof keep) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(keep, path + base, len);
	path[base] = '/';
	memcpy(path + base + 1, p->fts_name, p->fts_namelen + 1);
	int rc = fstatat(st->rootfd, path, sb, flags);
	int e = errno;
	memcpy(path + base, keep, len);
	errno = e;
	return rc;
}

/* Where the caller is given a file's whole path (FTS_NOCHDIR, and every
 * logical walk), the file is stat'ed by that path, as gnulib does: the
 * caller sees ENAMETOOLONG past PATH_MAX, ELOOP past the kernel's symlink
 * limit, ENOENT for a path that no longer names it.  Descents still go
 * through the parent's fd (checked against this stat).  Elsewhere the name
 * is stat'ed in the parent's fd. */
static int stat_as_named(struct stream *st, const FTSENT *p, int dirfd,
                         struct stat *sb, int flags)
{
	if (p->fts_level > FTS_ROOTLEVEL && ISSET(st, FTS_NOCHDIR))
		return stat_path(st, p, sb, flags);
	return fstatat(dirfd, rel_name(p), sb, flags);
}

static unsigned short stat_ent(struct stream *st, FTSENT *p, int dirfd,
                               bool follow)
{
	struct stat *sb = p->fts_statp;

	if (ISSET(st, FTS_LOGICAL) ||
	    (ISSET(st, FTS_COMFOLLOW) && p->fts_level == FTS_ROOTLEVEL))
		follow = true;
	p->fts_priv_flags &= ~PF_STAT_REQUIRED;
	if (stat_as_named(st, p, dirfd, sb, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		if (follow && errno == ENOENT &&
		    stat_as_named(st, p, dirfd, sb, AT_SYMLINK_NOFOLLOW) == 0) {
			errno = 0;
			return FTS_SLNONE;
		}
		p->fts_errno = errno;
		memset(sb, 0, sizeof *sb);
		return FTS_NS;
	}
	return classify(p);
}

static mode_t dtype_mode(unsigned char t)
{
	switch (t) {
	case DT_BLK: return S_IFBLK;
	case DT_CHR: return S_IFCHR;
	case DT_DIR: return S_IFDIR;
	case DT_FIFO: return S_IFIFO;
	case DT_LNK: return S_IFLNK;
	case DT_REG: return S_IFREG;
	case DT_SOCK: return S_IFSOCK;
	default: return 0;
	}
}

/* ------------------------------------------------------------ fd window */

static void level_close_fd(struct stream *st, struct level *L)
{
	if (L->src.fd < 0)
		return;
	close(L->src.fd);
	L->src.fd = -1;
	st->nopen--;
}

/* Close the shallowest fds until at most FD_WINDOW are open; a level so
 * closed that is done (and not one of the two deepest, which the walk
 * holds) loses its record. */
static void evict(struct stream *st)
{
	size_t i = 0;
	while (st->nopen > FD_WINDOW && st->lo < st->nlv) {
		while (i < st->nrec && st->lv[i]->depth < st->lo)
			i++;
		if (i == st->nrec)
			break;
		struct level *L = st->lv[i];
		if (L->src.fd >= 0) {
			if (L->reading && !L->src.eof)
				L->pos = lseek(L->src.fd, 0, SEEK_CUR);
			level_close_fd(st, L);
		}
		st->lo = L->depth + 1;
		if (L->depth + 2 < st->nlv &&
		    level_compactable(L, path_child(st, L->depth)))
			level_compact(st, i);
	}
}

static void level_set_fd(struct stream *st, struct level *L, int fd)
{
	L->src.fd = fd;
	st->nopen++;
	evict(st);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Open @path relative to @dirfd as a directory and check that it is @want.
 * Returns the fd, or -1 with errno set (ENOENT if it is another file). */
static int open_checked(int dirfd, const char *path, int flags,
                        const struct stat *want)
{
	int fd = openat(dirfd, path,
	                O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | flags);
	if (fd < 0)
		return -1;
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!same_file(&sb, want)) {
		/* Not the directory seen before: replaced or moved meanwhile. */
		close(fd);
		errno = ENOENT;
		return -1;
	}
	return fd;
}

/* Reopen level @d, whose fd was closed, when the walk climbs back to it
 * from level @d + 1, and check that it is the directory recorded. */
static int reopen_level(struct stream *st, size_t d)
{
	struct level *L = level_at(st, d);
	const struct stat *want = L->dir->fts_statp;
	const struct level *C = d + 1 < st->nlv ? level_at(st, d + 1) : NULL;
	const FTSENT *child = C ? C->dir : NULL;
	int fd = -1;

	if (child && child->fts_symfd >= 0) {
		/* entered through a symlink: the parent's fd was kept */
		fd = open_checked(child->fts_symfd, ".", 0, want);
	} else if (child && C->src.fd >= 0) {
		fd = open_checked(C->src.fd, "..", 0, want);
		/* ".." not leading back means the child was moved away: stop
		 * there with ENOENT, as gnulib when it climbs through "..".
		 * Only where gnulib names files by their whole path
		 * (FTS_NOCHDIR, logical walks) or the child was reached
		 * through a symlink is the whole path tried instead. */
		if (fd < 0 && errno == ENOENT && !ISSET(st, FTS_NOCHDIR) &&
		    !(child->fts_flags & FTS_SYMFOLLOW))
			return -1;
	}
	if (fd < 0) {
		/* Try the full path, still checked against the recorded
		 * device and inode. */
		char *path = st->pub.fts_path;
		size_t len = L->dir->fts_pathlen;
		char saved = path[len];
		path[len] = '\0';
		fd = open_checked(st->rootfd, path, 0, want);
		path[len] = saved;
		if (fd < 0)
			return -1;
	}
	if (L->reading && !L->src.eof &&
	    (L->pos < 0 || lseek(fd, L->pos, SEEK_SET) < 0)) {
		/* Cannot resume reading: report it on the directory. */
		L->dir->fts_errno = L->pos < 0 ? EIO : errno;
		L->src.eof = true;
	}
	L->src.fd = fd;
	st->nopen++;
	if (st->lo > d)
		st->lo = d;
	return 0;
}

/* ------------------------------------------------------ entering levels */

static int push_level(struct stream *st, FTSENT *p, int fd)
{
	size_t d = (size_t)p->fts_level;
	struct level *L = level_record_new(st);
	if (!L)
		return -1;
	memset(L, 0, sizeof *L);
	L->depth = d;
	L->dir = p;
	L->src.rd = &st->rd;
	L->src.fd = -1;
	st->lv[st->nrec++] = L;
	st->nlv = d + 1;
	if (fd >= 0)
		level_set_fd(st, L, fd);
	return 0;
}

static void policy_release(struct stream *st, struct level *L)
{
	if (L->order)
		L->order->release(L->pstate);
	L->pstate = NULL;
	st->held -= L->src.held;
	if (st->shared_held)
		__atomic_sub_fetch(st->shared_held, L->src.held, __ATOMIC_RELAXED);
	L->src.held = 0;
}

static void level_release(struct stream *st, struct level *L)
{
	level_close_fd(st, L);
	if (L->dir->fts_symfd >= 0) {
		close(L->dir->fts_symfd);
		L->dir->fts_symfd = -1;
	}
	policy_release(st, L);
	batch_free(&L->batch);
	const struct stat *sb = L->dir->fts_statp;
	if (L->dir->fts_priv_flags & PF_ACTIVE) {
		devino_remove(&st->active, sb->st_dev, sb->st_ino, L->dir);
		L->dir->fts_priv_flags &= ~PF_ACTIVE;
	} else if (st->cyc_count && sb->st_dev == st->cyc_dev &&
	           sb->st_ino == st->cyc_ino) {
		/* the lazy check's directory is left: its parent instead, or
		 * for a root, a fresh start (gnulib: at each root) */
		if (L->dir->fts_level > FTS_ROOTLEVEL) {
			st->cyc_dev = L->dir->fts_parent->fts_statp->st_dev;
			st->cyc_ino = L->dir->fts_parent->fts_statp->st_ino;
		} else {
			st->cyc_count = 0;
		}
	}
}

/* Release the deepest record (level nlv - 1). */
static void level_pop_record(struct stream *st)
{
	struct level *L = st->lv[--st->nrec];
	level_release(st, L);
	level_record_free(st, L);
}

/* ---------------------------------------------------- working directory */

static bool chdir_mode(const struct stream *st)
{
	return st->rfd >= 0;
}

/* Default mode: make level @want's directory (-1: fts_open's) the working
 * directory, going there through the fd the walk holds. */
static int cwd_set(struct stream *st, long want)
{
	if (!chdir_mode(st) || st->cwd == want)
		return 0;
	if (want < 0) {
		if (fchdir(st->rfd) < 0)
			return -1;
	} else {
		struct level *L = level_at(st, (size_t)want);
		if (L->src.fd < 0 && reopen_level(st, (size_t)want) < 0)
			return -1;
		if (fchdir(L->src.fd) < 0)
			return -1;
	}
	st->cwd = want;
	return 0;
}

/* Default mode: the walk leaves level @d, the working directory: go back
 * to its parent, which must still be where it was.  gnulib changes to ".."
 * and compares it with the parent's device and inode (or to the fd kept
 * when the level was entered through a symlink); so does this. */
static int cwd_up(struct stream *st, size_t d)
{
	if (d == 0)
		return cwd_set(st, -1);
	struct level *C = level_at(st, d), *P = level_at(st, d - 1);
	if (P->src.fd >= 0 && C->dir->fts_symfd < 0) {
		struct stat sb;
		if (fstatat(C->src.fd, "..", &sb, 0) < 0)
			return -1;
		if (!same_file(&sb, P->dir->fts_statp)) {
			errno = ENOENT;
			return -1;
		}
	}
	/* A closed parent is reopened through ".." and checked. */
	return cwd_set(st, (long)d - 1);
}

/* Back to the working directory fts_open found, keeping errno. */
static void cwd_restore(struct stream *st)
{
	int e = errno;
	if (chdir_mode(st) && st->cwd != -1 && fchdir(st->rfd) == 0)
		st->cwd = -1;
	errno = e;
}

/* -------------------------------------------------------- leaving a level */

/* Leave the deepest level @d: its parent becomes the current directory
 * again and must be open.  Returns -1 with errno set if it cannot be. */
static int pop_level(struct stream *st, size_t d)
{
	int rc = 0;
	struct level *P = d > 0 ? level_at(st, d - 1) : NULL;
	if (d > 0 && !P && !(P = level_restore(st, d - 1))) {
		/* the level stays (fts_close releases it): the walk stops */
		errno = ENOMEM;
		return -1;
	}
	if (chdir_mode(st) && st->cwd == (long)d) {
		rc = cwd_up(st, d);
	} else if (d > 0 && P->src.fd < 0) {
		rc = reopen_level(st, d - 1);
	}
	level_pop_record(st);
	st->nlv = d;
	if (st->lo > d)
		st->lo = d;
	return rc;
}

static struct level *level_of(struct stream *st, const FTSENT *p)
{
	size_t d = (size_t)p->fts_level;
	struct level *L = d < st->nlv ? level_at(st, d) : NULL;
	return L && L->dir == p ? L : NULL;
}

/* The lazy cycle check (any walk but a logical one or one with
 * FTS_TIGHT_CYCLE_CHECK, as gnulib's): whether @p is the directory it
 * holds; else @p is counted and held at each power of two.  A cycle is
 * found within about twice its length below where it starts. */
static bool cycle_lazy(struct stream *st, const FTSENT *p)
{
	const struct stat *sb = p->fts_statp;
	if (st->cyc_count && sb->st_dev == st->cyc_dev && sb->st_ino == st->cyc_ino)
		return true;
	uintmax_t n = ++st->cyc_count;
	if ((n & (n - 1)) == 0) {
		st->cyc_dev = sb->st_dev;
		st->cyc_ino = sb->st_ino;
	}
	return false;
}

/* The directory on @p's path above it that @p is (fts_cycle): found only
 * once a cycle is, by going up the path; @p itself if none is. */
static FTSENT *cycle_start(FTSENT *p)
{
	for (FTSENT *a = p->fts_parent; a && a->fts_level >= FTS_ROOTLEVEL;
	     a = a->fts_parent)
		if (same_file(a->fts_statp, p->fts_statp))
			return a;
	return p;
}

/* Record directory @p (just found to be FTS_D) as entered: cycle check,
 * then a level.  @fd is its fd if already open, else -1. */
static int enter_dir(struct stream *st, FTSENT *p, int fd)
{
	int failed = 0;
	bool tight = ISSET(st, FTS_TIGHT_CYCLE_CHECK | FTS_LOGICAL);
	FTSENT *seen;
	if (tight)
		seen = devino_insert(&st->active, p->fts_statp->st_dev,
		                     p->fts_statp->st_ino, p, &failed);
	else
		seen = cycle_lazy(st, p) ? cycle_start(p) : NULL;
	if (failed || (!seen && push_level(st, p, fd) < 0)) {
		if (!seen && tight)
			devino_remove(&st->active, p->fts_statp->st_dev,
			              p->fts_statp->st_ino, p);
		if (fd >= 0)
			close(fd);
		errno = failed ? -failed : ENOMEM;
		return -1;
	}
	if (seen) {
		p->fts_cycle = seen;
		p->fts_info = FTS_DC;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (tight)
		p->fts_priv_flags |= PF_ACTIVE;
	/* Entered through a symlink (FTS_FOLLOW): ".." does not lead back,
	 * so keep the parent's fd to return to, as gnulib's fts_symfd (one
	 * fd per such level; without one, the whole path is tried). */
	if ((p->fts_flags & FTS_SYMFOLLOW) && p->fts_level > FTS_ROOTLEVEL &&
	    !ISSET(st, FTS_NOCHDIR) && p->fts_symfd < 0)
		p->fts_symfd = fcntl(parent_fd(st, p), F_DUPFD_CLOEXEC, 3);
	return 0;
}

/* ----------------------------------------------------------------- build */

struct emit_ctx {
	struct stream *st;
	struct level *L;
	size_t base; /* length of the parent's path plus the slash */
	int fatal;   /* errno of a failure that stops the walk */
	size_t ndirs; /* directories among the entries listed (fts_on_listed) */
};

static int emit(void *c, const struct fastrm_dirent *d)
{
	struct emit_ctx *ctx = c;
	struct stream *st = ctx->st;
	struct level *L = ctx->L;

	if (!ISSET(st, FTS_SEEDOT) && ISDOT(d->name))
		return 0;
	if (L->windows)
		device_entry_out(st->dw, L->src.fd, L->dir->fts_statp, d->ino,
		                 L->src.sorted);
	size_t pathlen = ctx->base + d->namelen;
	if (pathlen < ctx->base || path_reserve(st, pathlen + 1) < 0) {
		ctx->fatal = errno ? errno : ENAMETOOLONG;
		return -ctx->fatal;
	}
	FTSENT *p = ent_alloc(st, &L->batch, d->name, d->namelen);
	if (!p) {
		ctx->fatal = ENOMEM;
		return -ENOMEM;
	}
	p->fts_level = L->dir->fts_level + 1;
	p->fts_parent = L->dir;
	p->fts_pathlen = pathlen;
	if (ISSET(st, FTS_NOCHDIR))
		p->fts_accpath = p->fts_path;
	p->fts_statp->st_ino = d->ino;
	p->fts_statp->st_mode = dtype_mode(d->type);
	if (st->pub.fts_compar && !ISSET(st, FTS_DEFER_STAT)) {
		/* A comparator may look at fts_statp: stat now (gnulib too). */
		p->fts_info = stat_ent(st, p, L->src.fd, false);
	} else {
		/* FTS_MOUNT needs every entry's device (gnulib too) */
		bool skip = ISSET(st, FTS_NOSTAT) && d->type != DT_UNKNOWN &&
		            d->type != DT_DIR &&
		            (ISSET(st, FTS_PHYSICAL) || d->type != DT_LNK) &&
		            !ISSET(st, FTS_MOUNT);
		p->fts_info = FTS_NSOK;
		if (!skip)
			p->fts_priv_flags |= PF_STAT_REQUIRED;
	}
	batch_append(&L->batch, p);
	L->nread++;
	ctx->ndirs += d->type == DT_DIR;
	return 0;
}

static int compar_thunk(const void *a, const void *b)
{
	const FTSENT *const *pa = a, *const *pb = b;
	return (*pa)->fts_fts->fts_compar((const FTSENT **)pa,
	                                  (const FTSENT **)pb);
}

/* Sort batch @b with the stream's comparator; without memory for the
 * vector, keep the order read (as gnulib does). */
static void batch_arrange(struct stream *st, struct batch *b)
{
	if (b->n < 2)
		return;
	if (b->n > st->sortcap) {
		FTSENT **v = realloc(st->sortv, b->n * sizeof *v);
		if (!v)
			return;
		st->sortv = v;
		st->sortcap = b->n;
	}
	size_t i = 0, cnt = b->n;
	for (FTSENT *p = b->head; p; p = p->fts_link)
		st->sortv[i++] = p;
	qsort(st->sortv, cnt, sizeof *st->sortv, compar_thunk);
	b->head = b->tail = NULL;
	b->n = 0;
	for (i = 0; i < cnt; i++)
		batch_append(b, st->sortv[i]);
}

enum build_result {
	BUILD_OK,      /* entries in L->batch (possibly none) */
	BUILD_NOOPEN,  /* could not open: errno set */
	BUILD_FATAL,   /* the walk must stop: errno set */
};

static int open_dir(struct stream *st, FTSENT *p)
{
	bool follow = ISSET(st, FTS_LOGICAL) ||
	              (ISSET(st, FTS_COMFOLLOW) && p->fts_level == 0) ||
	              (p->fts_flags & FTS_SYMFOLLOW);
	int fd = open_checked(parent_fd(st, p), rel_name(p),
	                      follow ? 0 : O_NOFOLLOW, p->fts_statp);
	if (fd >= 0 && p->fts_level > FTS_ROOTLEVEL && ISSET(st, FTS_NOCHDIR)) {
		/* The caller names it by its whole path: if that no longer
		 * leads to it (moved since its stat), say so as gnulib, which
		 * opens it by that path. */
		struct stat sb;
		int rc = stat_path(st, p, &sb, follow ? 0 : AT_SYMLINK_NOFOLLOW);
		if (rc < 0 || !same_file(&sb, p->fts_statp)) {
			int e = rc < 0 ? errno : ENOENT;
			close(fd);
			errno = e;
			return -1;
		}
	}
	return fd;
}

/* What a directory's policy may hold when @others bytes are held by the
 * rest: the budget less that, and never less than MIN_BUDGET. */
static size_t budget_left(const struct stream *st, size_t others)
{
	return st->budget > others + MIN_BUDGET ? st->budget - others : MIN_BUDGET;
}

/* Read the next batch of level @L's entries, at most about @cap. */
static enum build_result build(struct stream *st, struct level *L, size_t cap)
{
	batch_free(&L->batch);
	if (L->src.fd < 0) {
		if (L->reading) {
			/* Was closed at the end of the directory. */
			return BUILD_OK;
		}
		int fd = open_dir(st, L->dir);
		if (fd < 0)
			return BUILD_NOOPEN;
		level_set_fd(st, L, fd);
	}
	if (!L->reading) {
		/* The directory is about to be read, whatever the policy: the
		 * device advisor measures, reads ahead, and says whether its
		 * entries go through XFS's windows. */
		if (st->dw == &st->dw_own && !st->dw_own.adv && !st->no_advisor)
			st->no_advisor = !(st->dw_own.adv = device_advisor_new(
			        st->pub.fts_options & FASTRM_FTS_DEVICE ? DEVICE_ADVISE_ALL
			                                                : DEVICE_ADVISE_FS));
		L->windows = device_dir_opened(st->dw, L->src.fd, L->dir->fts_statp);
	}
	L->reading = true;

	struct emit_ctx ctx = { st, L, path_base(L->dir) + 1, 0, 0 };
	size_t nread = L->nread;
	bool compar = st->pub.fts_compar != NULL;
	if (!L->order)
		L->order = compar ? &order_directory : st->order;
	L->src.st = L->dir->fts_statp;
	L->src.dw = st->dw;
	long n;
	do {
		/* One budget for the whole path: what the other directories'
		 * policies hold is not this one's to take. */
		size_t before = L->src.held;
		if (st->shared_held) {
			/* what every stream of the pool holds: reserve this
			 * directory's share of what is left, then settle */
			size_t all = __atomic_load_n(st->shared_held, __ATOMIC_RELAXED);
			do
				L->src.budget = budget_left(st, all - before);
			while (!__atomic_compare_exchange_n(
			        st->shared_held, &all, all + (L->src.budget - before), false,
			        __ATOMIC_RELAXED, __ATOMIC_RELAXED));
		} else {
			L->src.budget = budget_left(st, st->held - before);
		}
		n = L->order->next(&L->pstate, &L->src, compar ? SIZE_MAX : cap,
		                   emit, &ctx);
		st->held += L->src.held - before;
		if (st->shared_held)
			__atomic_add_fetch(st->shared_held, L->src.held - L->src.budget,
			                   __ATOMIC_RELAXED);
		/* a read may bring only "." and ".."; once the directory is
		 * read to its end, the policy is asked again (no system call
		 * is made) until the batch is full or it has nothing more:
		 * a level done is one that holds nothing but its entries */
	} while (n > 0 && !ctx.fatal &&
	         (L->batch.n == 0 || (L->src.eof && L->batch.n < cap)));
	/* What a policy left loaded is put back for this directory's next
	 * read, never handed to another directory. */
	int urc = dirread_unload(&st->rd, L->src.fd);
	if (urc < 0 && n >= 0)
		n = urc;
	if (ctx.fatal) {
		errno = ctx.fatal;
		return BUILD_FATAL;
	}
	if (n < 0) {
		/* A read error: what was read is kept, the error is reported
		 * on the directory (FTS_DNR if nothing could be read). */
		L->dir->fts_errno = (int)-n;
		L->src.eof = true;
		L->done = true;
	} else if (n == 0) {
		/* Not the kernel's end of directory (src.eof): a sorting
		 * policy reads to the end and still holds entries. */
		L->done = true;
	}
	if (L->done)
		policy_release(st, L);
	if (st->listed && (L->nread > nread || L->done))
		st->listed(st->listed_ctx, L->dir, L->nread - nread, ctx.ndirs, nread == 0,
		           L->done, L->nread);
	if (compar)
		batch_arrange(st, &L->batch);
	else if (st->dirs_last && !L->src.sorted)
		batch_dirs_last(&L->batch);
	return BUILD_OK;
}

static int rewind_level(struct stream *st, struct level *L)
{
	batch_free(&L->batch);
	policy_release(st, L);
	L->nread = 0;
	L->src.eof = false;
	L->done = false;
	L->dir->fts_errno = 0;
	if (L->src.fd >= 0 && lseek(L->src.fd, 0, SEEK_SET) < 0)
		return -1;
	return 0;
}

/* Default mode, before level @L's directory is first read: open it and
 * make it the working directory, as gnulib does before it reads a
 * directory (it then gives up on one it cannot change into). */
static int enter_cwd(struct stream *st, struct level *L)
{
	if (L->src.fd < 0) {
		int fd = open_dir(st, L->dir);
		if (fd < 0)
			return -1;
		level_set_fd(st, L, fd);
	}
	return cwd_set(st, (long)L->depth);
}

/* ----------------------------------------------------------------- visit */

static FTSENT *ret(struct stream *st, FTSENT *p)
{
	FTS *sp = &st->pub;
	sp->fts_cur = p;
	sp->fts_cwd_fd = ISSET(st, FTS_CWDFD) ? st->rootfd : AT_FDCWD;
	if (ISSET(st, FTS_CWDFD) && p->fts_level > FTS_ROOTLEVEL)
		sp->fts_cwd_fd = level_at(st, (size_t)p->fts_level - 1)->src.fd;
	return p;
}

static FTSENT *stop(struct stream *st)
{
	st->pub.fts_options |= FTS_STOP;
	cwd_restore(st);
	return NULL;
}

/* Under FTS_NOSTAT in a physical walk (where the caller is not handed
 * whole paths: see stat_as_named), a directory is opened first and
 * fstat'ed through its fd: two system calls, and the stat describes
 * exactly the directory that will be read. */
static bool open_first(struct stream *st, const FTSENT *p)
{
	return ISSET(st, FTS_NOSTAT) && ISSET(st, FTS_PHYSICAL) &&
	       !ISSET(st, FTS_XDEV | FTS_MOUNT) && !ISSET(st, FTS_SEEDOT) &&
	       !ISSET(st, FTS_NOCHDIR) &&
	       p->fts_level > FTS_ROOTLEVEL &&
	       S_ISDIR(p->fts_statp->st_mode);
}

/* Under FTS_MOUNT, whether @p (stat'ed) is below a root and on another
 * device than its root: gnulib then does not return it at all. */
static bool other_device(const struct stream *st, const FTSENT *p)
{
	return ISSET(st, FTS_MOUNT) && p->fts_level > FTS_ROOTLEVEL &&
	       p->fts_info != FTS_NS && p->fts_info != FTS_NSOK &&
	       p->fts_statp->st_dev != st->pub.fts_dev;
}

/* What visit() makes of an entry that FTS_MOUNT leaves out. */
static const char skipped_mark;
#define SKIPPED ((FTSENT *)(void *)&skipped_mark)

/* The entry @p becomes the current one: stat it if needed, enter it if it
 * is a directory.  Returns @p, NULL if the walk must stop, or SKIPPED for
 * an entry on another device under FTS_MOUNT (not returned). */
static FTSENT *visit(struct stream *st, FTSENT *p)
{
	int fd = -1;

	/* Default mode: fts_accpath names @p in its parent (a root: in
	 * fts_open's working directory). */
	if (cwd_set(st, p->fts_level - 1) < 0) {
		/* A directory that can be read but not searched: as gnulib,
		 * its entries cannot be reached (and it ends as FTS_ERR). */
		p->fts_errno = errno;
		p->fts_info = FTS_NS;
		p->fts_priv_flags &= ~PF_STAT_REQUIRED;
		if (!p->fts_parent->fts_errno)
			p->fts_parent->fts_errno = errno;
		return ret(st, p);
	}
	if (p->fts_info == FTS_NSOK && (p->fts_priv_flags & PF_STAT_REQUIRED)) {
		int dirfd = parent_fd(st, p);
		if (open_first(st, p)) {
			fd = openat(dirfd, p->fts_name,
			            O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			                    O_CLOEXEC | O_NOCTTY);
			if (fd >= 0 && fstat(fd, p->fts_statp) == 0) {
				p->fts_priv_flags &= ~PF_STAT_REQUIRED;
				p->fts_info = FTS_D;
			} else if (fd >= 0) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			p->fts_info = stat_ent(st, p, dirfd, false);
	}
	if (other_device(st, p)) {
		if (fd >= 0)
			close(fd);
		return SKIPPED;
	}
	if (p->fts_info == FTS_D) {
		if (p->fts_level == FTS_ROOTLEVEL)
			st->pub.fts_dev = p->fts_statp->st_dev;
		if (enter_dir(st, p, fd) < 0)
			return stop(st);
	}
	return ret(st, p);
}

/* Make root @p current: its path is the argument, its name the last
 * component (as gnulib's fts_load). */
static void load_root(struct stream *st, FTSENT *p)
{
	char *path = st->pub.fts_path;
	size_t len = p->fts_namelen;
	memcpy(path, p->fts_name, len + 1);
	p->fts_pathlen = len;
	char *cp = strrchr(p->fts_name, '/');
	if (cp && (cp != p->fts_name || cp[1])) {
		len = strlen(++cp);
		memmove(p->fts_name, cp, len + 1);
		p->fts_namelen = len;
	}
	p->fts_accpath = p->fts_path = path;
}

static void follow_link(struct stream *st, FTSENT *p)
{
	p->fts_info = stat_ent(st, p, parent_fd(st, p), true);
	if (p->fts_info == FTS_D)
		p->fts_flags |= FTS_SYMFOLLOW;
}

FASTRM_EXPORT FTSENT *fastrm_fts_read(FTS *sp)
{
	struct stream *st = ST(sp);
	FTSENT *p, *parent;

	if (!sp || !sp->fts_cur || ISSET(st, FTS_STOP))
		return NULL;
	p = sp->fts_cur;
	unsigned short instr = p->fts_instr;
	p->fts_instr = FTS_NOINSTR;

	if (instr == FTS_AGAIN && p->fts_info != FTS_INIT) {
		bool entered = level_of(st, p) != NULL;
		p->fts_info = stat_ent(st, p, parent_fd(st, p), false);
		if (p->fts_info == FTS_D && !entered &&
		    enter_dir(st, p, -1) < 0)
			return stop(st);
		return ret(st, p);
	}

	if (instr == FTS_FOLLOW &&
	    (p->fts_info == FTS_SL || p->fts_info == FTS_SLNONE)) {
		follow_link(st, p);
		if (other_device(st, p))
			goto next; /* as gnulib: its target is left out */
		if (p->fts_info == FTS_D && enter_dir(st, p, -1) < 0)
			return stop(st);
		return ret(st, p);
	}

	if (p->fts_info == FTS_D) {
		struct level *L = level_of(st, p);
		if (instr == FTS_SKIP ||
		    (ISSET(st, FTS_XDEV) && p->fts_statp->st_dev != sp->fts_dev)) {
			sp->fts_child = NULL;
			p->fts_info = FTS_DP;
			if (pop_level(st, (size_t)p->fts_level) < 0) {
				p->fts_errno = errno;
				return stop(st);
			}
			return ret(st, p);
		}
		if (sp->fts_child && L->nameonly) {
			sp->fts_child = NULL;
			if (rewind_level(st, L) < 0) {
				p->fts_errno = errno;
				L->src.eof = true;
				L->done = true;
			}
		}
		if (!sp->fts_child && chdir_mode(st) && enter_cwd(st, L) < 0) {
			/* Default mode, a directory that can be read but not
			 * searched: as gnulib, no entries, and the directory
			 * comes back as FTS_ERR (FTS_DNR if it cannot be read) */
			p->fts_errno = errno;
			p->fts_info = L->src.fd < 0 ? FTS_DNR : FTS_ERR;
			if (pop_level(st, (size_t)p->fts_level) < 0) {
				p->fts_errno = errno;
				return stop(st);
			}
			return ret(st, p);
		}
		if (!sp->fts_child) {
			enum build_result r = build(st, L, BATCH_ENTRIES);
			if (r == BUILD_FATAL) {
				p->fts_info = FTS_ERR;
				return stop(st);
			}
			if (r == BUILD_NOOPEN || L->batch.n == 0) {
				if (r == BUILD_NOOPEN) {
					p->fts_errno = errno;
					p->fts_info = FTS_DNR;
				} else if (p->fts_errno) {
					p->fts_info = L->nread ? FTS_ERR : FTS_DNR;
				} else {
					p->fts_info = FTS_DP;
				}
				if (pop_level(st, (size_t)p->fts_level) < 0) {
					p->fts_errno = errno;
					return stop(st);
				}
				return ret(st, p);
			}
		}
		sp->fts_child = NULL;
		parent = p;
		p = L->batch.head;
		goto name;
	}

	/* Move to the next entry at this level. */
next:
	parent = p->fts_info == FTS_INIT ? st->rootparent : p->fts_parent;
	for (;;) {
		FTSENT *next;
		if (p->fts_info == FTS_INIT) {
			next = p->fts_link;
		} else if (p->fts_level == FTS_ROOTLEVEL) {
			next = p->fts_link;
		} else {
			struct level *P = level_at(st, (size_t)p->fts_level - 1);
			next = p->fts_link;
			if (!next && !P->done) {
				enum build_result r = build(st, P, BATCH_ENTRIES);
				if (r == BUILD_FATAL) {
					P->dir->fts_errno = errno;
					return stop(st);
				}
				next = P->batch.head;
			} else if (next && !sp->fts_compar) {
				batch_reclaim(&P->batch, next);
			}
		}
		p = next;
		if (!p)
			goto up;
		if (p->fts_level == FTS_ROOTLEVEL) {
			load_root(st, p);
			return visit(st, p);
		}
		if (p->fts_instr == FTS_SKIP)
			continue;
		break;
	}
	if (p->fts_instr == FTS_FOLLOW) {
		p->fts_instr = FTS_NOINSTR;
		follow_link(st, p);
	}

name: {
	char *t = sp->fts_path + path_base(parent);
	*t++ = '/';
	memcpy(t, p->fts_name, p->fts_namelen + 1);
	FTSENT *v = visit(st, p);
	if (v == SKIPPED)
		goto next;
	return v;
}

up:
	p = parent;
	if (p->fts_level == FTS_ROOTPARENTLEVEL) {
		sp->fts_cur = NULL;
		cwd_restore(st);
		errno = 0;
		return NULL;
	}
	sp->fts_path[p->fts_pathlen] = '\0';
	if (pop_level(st, (size_t)p->fts_level) < 0) {
		p->fts_errno = errno;
		p->fts_info = FTS_ERR;
		sp->fts_cur = p;
		return stop(st);
	}
	if (p->fts_info != FTS_DC)
		p->fts_info = p->fts_errno ? FTS_ERR : FTS_DP;
	return ret(st, p);
}

FASTRM_EXPORT int fastrm_fts_set(FTS *sp, FTSENT *p, int instr)
{
	(void)sp;
	if (instr != 0 && instr != FTS_AGAIN && instr != FTS_FOLLOW &&
	    instr != FTS_NOINSTR && instr != FTS_SKIP) {
		errno = EINVAL;
		return 1;
	}
	p->fts_instr = (unsigned short)instr;
	return 0;
}

/* fts_children() for a caller compiled with @nameonly as FTS_NAMEONLY's
 * value (fts-int.h). */
FTSENT *fts_children_as(FTS *sp, int instr, int nameonly)
{
	struct stream *st = ST(sp);

	if (instr != 0 && instr != nameonly) {
		errno = EINVAL;
		return NULL;
	}
	if (instr)
		instr = FTS_NAMEONLY;
	FTSENT *p = sp->fts_cur;
	errno = 0;
	if (!p || ISSET(st, FTS_STOP))
		return NULL;
	if (p->fts_info == FTS_INIT)
		return p->fts_link;
	if (p->fts_info != FTS_D)
		return NULL;

	struct level *L = level_of(st, p);
	sp->fts_child = NULL;
	if (L->reading && rewind_level(st, L) < 0)
		return NULL;
	/* Default mode: as gnulib, no entries of a directory it cannot
	 * change into, unless only their names are asked for */
	if (chdir_mode(st) && instr != FTS_NAMEONLY && !L->reading &&
	    enter_cwd(st, L) < 0)
		return NULL;
	enum build_result r = build(st, L, st->pub.fts_compar ? SIZE_MAX
	                                                      : CHILDREN_ENTRIES);
	if (r == BUILD_FATAL) {
		int e = errno;
		stop(st);
		errno = e;
		return NULL;
	}
	if (r == BUILD_NOOPEN)
		return NULL;
	L->nameonly = instr == FTS_NAMEONLY;
	sp->fts_child = L->batch.head;
	errno = 0;
	return sp->fts_child;
}

/* ------------------------------------------------------------ open/close */

static int check_options(int options)
{
	if (options & ~(FTS_OPTIONMASK | FASTRM_FTS_DEVICE))
		return -1;
	if ((options & FTS_NOCHDIR) && (options & FTS_CWDFD))
		return -1;
	/* Exactly one of FTS_LOGICAL and FTS_PHYSICAL.  (gnulib accepts
	 * both; glibc and BSD document that one must be given.) */
	if (!(options & FTS_LOGICAL) == !(options & FTS_PHYSICAL))
		return -1;
	return 0;
}

FASTRM_EXPORT FTS *fastrm_fts_open(char *const *argv, int options,
                                   int (*compar)(const FTSENT **,
                                                 const FTSENT **))
{
	return fts_open_at(AT_FDCWD, argv, options, compar);
}

FASTRM_EXPORT FTS *fastrm_fts_openat(int dirfd, char *const *argv, int options,
                                     int (*compar)(const FTSENT **,
                                                   const FTSENT **))
{
	if (dirfd < 0 && dirfd != AT_FDCWD) {
		errno = EBADF;
		return NULL;
	}
	return fts_open_at(dirfd, argv, options, compar);
}

FTS *fts_open_at(int rootfd, char *const *argv, int options,
                 int (*compar)(const FTSENT **, const FTSENT **))
{
	if (check_options(options) < 0 || !argv) {
		errno = EINVAL;
		return NULL;
	}
	struct stream *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	FTS *sp = &st->pub;
	st->rootfd = rootfd;
	st->rfd = -1;
	st->cwd = -1;
	device_walk_init(&st->dw_own, NULL); /* its advisor: on first need */
	st->dw = &st->dw_own;
	sp->fts_options = options;
	sp->fts_compar = compar;
	sp->fts_rfd = -1;
	sp->fts_cwd_fd = AT_FDCWD;
	/* A logical walk names every file by its full path (gnulib too). */
	if (options & FTS_LOGICAL) {
		sp->fts_options |= FTS_NOCHDIR;
		sp->fts_options &= ~FTS_CWDFD;
	}
	/* The default mode changes directory (fts(3): "to allow descending
	 * to arbitrary depths"); it needs a way back to where it started,
	 * or it does not change directory at all (gnulib too). */
	if (!(sp->fts_options & (FTS_NOCHDIR | FTS_CWDFD))) {
		if (rootfd != AT_FDCWD)
			goto inval;
		st->rfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (st->rfd < 0)
			sp->fts_options |= FTS_NOCHDIR;
		sp->fts_rfd = st->rfd;
	}
	st->order = &order_gnulib;
	st->budget = FASTRM_DEFAULT_BUDGET;
	devino_init(&st->active);
	if (dirread_init(&st->rd) < 0)
		goto fail;

	size_t maxlen = 0;
	for (char *const *a = argv; *a; a++) {
		size_t l = strlen(*a);
		if (l > maxlen)
			maxlen = l;
	}
	if (path_reserve(st, maxlen + 1 > 1024 ? maxlen + 1 : 1024) < 0)
		goto fail;

	/* the two sentinels are in no list: in a chunk, which batch_free()
	 * frees without walking a list */
	st->sentinels.made = SMALL_BATCH;
	st->rootparent = ent_alloc(st, &st->sentinels, "", 0);
	st->init = ent_alloc(st, &st->sentinels, "", 0);
	if (!st->rootparent || !st->init)
		goto fail;
	st->rootparent->fts_level = FTS_ROOTPARENTLEVEL;
	st->init->fts_info = FTS_INIT;
	st->init->fts_level = FTS_ROOTLEVEL;

	bool defer = !compar || (options & FTS_DEFER_STAT);
	for (char *const *a = argv; *a; a++) {
		size_t len = strlen(*a);
		if (!(options & FTS_VERBATIM)) {
			/* Trim two or more trailing slashes to one, but keep
			 * "//" as it is (as gnulib). */
			const char *v = *a;
			if (len > 2 && v[len - 1] == '/')
				while (len > 1 && v[len - 2] == '/')
					--len;
		}
		FTSENT *p = ent_alloc(st, &st->roots, *a, len);
		if (!p)
			goto fail;
		p->fts_level = FTS_ROOTLEVEL;
		p->fts_parent = st->rootparent;
		p->fts_pathlen = len;
		batch_append(&st->roots, p);
		/* The first root is stat'ed now (FTS_XDEV needs its device);
		 * the others on their visit, unless a comparator needs them. */
		if (defer && p != st->roots.head) {
			p->fts_info = FTS_NSOK;
			p->fts_priv_flags |= PF_STAT_REQUIRED;
		} else {
			p->fts_info = stat_ent(st, p, rootfd, false);
		}
	}
	if (compar)
		batch_arrange(st, &st->roots);
	st->init->fts_link = st->roots.head;
	sp->fts_cur = st->init;
	return sp;

inval:
	errno = EINVAL;
fail:;
	int e = errno;
	fastrm_fts_close(sp);
	errno = e;
	return NULL;
}

FASTRM_EXPORT int fastrm_fts_close(FTS *sp)
{
	if (!sp)
		return 0;
	struct stream *st = ST(sp);
	int rc = 0;
	if (chdir_mode(st)) {
		/* back where fts_open was called, as gnulib, even if the
		 * caller moved meanwhile */
		if (fchdir(st->rfd) < 0)
			rc = -1;
		int e = errno;
		close(st->rfd);
		errno = e;
	}
	/* deepest first: a level without a record is rebuilt from the
	 * entry below it, which its batch holds */
	FTSENT *child = NULL;
	while (st->nlv > 0) {
		size_t d = --st->nlv;
		struct level *L = st->nrec ? st->lv[st->nrec - 1] : NULL;
		if (L && L->depth == d) {
			child = L->dir;
			level_pop_record(st);
		} else {
			struct level tmp;
			level_derive(st, d, child, &tmp);
			child = tmp.dir;
			level_release(st, &tmp);
		}
	}
	free(st->lv);
	free(st->spare);
	batch_free(&st->roots);
	batch_free(&st->sentinels);
	free(sp->fts_path);
	free(st->sortv);
	dirread_fini(&st->rd);
	devino_fini(&st->active);
	int e = errno;
	device_walk_fini(&st->dw_own);
	device_advisor_free(st->dw_own.adv);
	free(st);
	errno = e;
	return rc;
}

FASTRM_EXPORT int fastrm_fts_set_order(FTS *sp, const struct fastrm_order *order)
{
	if (!sp || !order_usable(order))
		return -EINVAL;
	ST(sp)->order = order;
	return 0;
}

void fts_share_budget(FTS *sp, size_t *held)
{
	ST(sp)->shared_held = held;
}

void fts_share_device(FTS *sp, struct device_walk *dw)
{
	ST(sp)->dw = dw;
}

void fts_dirs_last(FTS *sp, bool on)
{
	ST(sp)->dirs_last = on;
}

void fts_on_listed(FTS *sp, fts_listed_fn fn, void *ctx)
{
	ST(sp)->listed = fn;
	ST(sp)->listed_ctx = ctx;
}

FASTRM_EXPORT int fastrm_fts_set_memory_budget(FTS *sp, size_t bytes)
{
	if (!sp || bytes < 64 * 1024)
		return -EINVAL;
	ST(sp)->budget = bytes;
	return 0;
}
