/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The built-in ordering policies.
 *
 * Why order matters: on ext4 (and any file system whose inodes live in
 * tables), removing a huge directory's entries in readdir (hash) order
 * dirties a different inode-table block with almost every unlink, and the
 * journal rewrites the same blocks again and again; in inode order the
 * removals walk each block once (see doc/archive/benchmarks-0.5.md).
 *
 * All sorted policies keep entries in one compact table: 16 bytes per
 * entry plus its name in an arena; no allocation per entry.  Memory is
 * reserved before each kernel buffer is read ("global" allocates its
 * budget once, at the first buffer), so an allocation failure never loses
 * an entry: the policy then falls back to directory order.
 */
#define _GNU_SOURCE
#include "order.h"

#include "fastrm-int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Entries one kernel buffer can hold at most (the smallest dirent64 is 24
 * bytes), and the names they can carry. */
#define BUF_ENTRIES (DIRREAD_BUFSIZE / 24 + 1)
#define BUF_NAMES DIRREAD_BUFSIZE

/* ------------------------------------------------------------- source */

FASTRM_EXPORT long fastrm_order_read(struct fastrm_order_source *src,
                                     size_t want, fastrm_emit_fn fn, void *ctx)
{
	if (src->eof && src->rd->pos == src->rd->len)
		return 0;
	return dirread_fill(src->rd, src->fd, want, fn, ctx, &src->eof);
}

FASTRM_EXPORT int fastrm_order_rewind(struct fastrm_order_source *src)
{
	dirread_drop(src->rd);
	if (lseek(src->fd, 0, SEEK_SET) < 0)
		return -errno;
	src->eof = false;
	return 0;
}

FASTRM_EXPORT size_t fastrm_order_budget(const struct fastrm_order_source *src)
{
	return src->budget;
}

FASTRM_EXPORT void fastrm_order_account(struct fastrm_order_source *src,
                                        size_t bytes)
{
	src->held = bytes;
}

FASTRM_EXPORT const struct stat *
fastrm_order_stat(const struct fastrm_order_source *src)
{
	return src->st;
}

FASTRM_EXPORT int fastrm_order_fd(const struct fastrm_order_source *src)
{
	return src->fd;
}

/* ------------------------------------------------------------- table */

struct rec {
	uint64_t ino;
	uint32_t off;  /* of the name in the arena */
	uint16_t len;
	uint8_t type;
	uint8_t pad;
};

struct table {
	struct rec *v;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
	size_t live;   /* name bytes still referenced (the rest is garbage) */
	size_t pos;    /* next entry to hand out */
};

static size_t table_bytes(const struct table *t)
{
	return t->cap * sizeof *t->v + t->ncap;
}

/* Make room for @entries more entries and @bytes more name bytes. */
static int table_reserve(struct table *t, size_t entries, size_t bytes)
{
	if (t->n + entries > t->cap) {
		/* exact at first (a small directory stays small), then
		 * doubling */
		size_t cap = t->cap ? t->cap : entries;
		while (cap < t->n + entries)
			cap *= 2;
		struct rec *v = realloc(t->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	if (t->nlen + bytes > t->ncap) {
		size_t cap = t->ncap ? t->ncap : bytes;
		while (cap < t->nlen + bytes)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		char *p = realloc(t->names, cap);
		if (!p)
			return -ENOMEM;
		t->names = p;
		t->ncap = cap;
	}
	return 0;
}

/* Append; room must have been reserved. */
static void table_push(struct table *t, const struct fastrm_dirent *d)
{
	struct rec *r = &t->v[t->n++];
	r->ino = d->ino;
	r->off = (uint32_t)t->nlen;
	r->len = (uint16_t)d->namelen;
	r->type = d->type;
	memcpy(t->names + t->nlen, d->name, d->namelen + 1);
	t->nlen += d->namelen + 1;
	t->live += d->namelen + 1;
}

static void table_reset(struct table *t)
{
	t->n = t->nlen = t->live = t->pos = 0;
}

static void table_free(struct table *t)
{
	free(t->v);
	free(t->names);
	memset(t, 0, sizeof *t);
}

/* Order by inode, then by name (names are unique in a directory, so this
 * is a total order even with hard links). */
static int key_cmp(uint64_t ia, const char *na, uint64_t ib, const char *nb)
{
	if (ia != ib)
		return ia < ib ? -1 : 1;
	return strcmp(na, nb);
}

static int rec_cmp(const void *a, const void *b, void *names)
{
	const struct rec *x = a, *y = b;
	const char *n = names;
	return key_cmp(x->ino, n + x->off, y->ino, n + y->off);
}

/* Sort by key with qsort_r: fast, but glibc's merge sort may take a
 * temporary copy of the array.  For "inode", whose memory is the
 * directory's size anyway. */
static void table_sort(struct table *t)
{
	if (t->n > 1) /* an empty table may have no array at all */
		qsort_r(t->v, t->n, sizeof *t->v, rec_cmp, t->names);
}

/* In-place heapsort, for the policies that must stay within their budget:
 * no temporary memory at all. */
typedef int rec_order(const struct rec *, const struct rec *, const char *);

static int by_key(const struct rec *a, const struct rec *b, const char *names)
{
	return key_cmp(a->ino, names + a->off, b->ino, names + b->off);
}

static int by_off(const struct rec *a, const struct rec *b, const char *names)
{
	(void)names;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* Sift v[i] down the max-heap v[0..n-1]. */
static void sift_down(struct rec *v, size_t n, size_t i, rec_order *cmp,
                      const char *names)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cmp(&v[l], &v[m], names) > 0)
			m = l;
		if (r < n && cmp(&v[r], &v[m], names) > 0)
			m = r;
		if (m == i)
			return;
		struct rec tmp = v[m];
		v[m] = v[i];
		v[i] = tmp;
		i = m;
	}
}

static void heapify(struct rec *v, size_t n, rec_order *cmp, const char *names)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, n, i, cmp, names);
}

/* Ascending order from a max-heap. */
static void heap_to_sorted(struct rec *v, size_t n, rec_order *cmp,
                           const char *names)
{
	while (n > 1) {
		n--;
		struct rec tmp = v[0];
		v[0] = v[n];
		v[n] = tmp;
		sift_down(v, n, 0, cmp, names);
	}
}

static void table_sort_in_place(struct table *t)
{
	heapify(t->v, t->n, by_key, t->names);
	heap_to_sorted(t->v, t->n, by_key, t->names);
}

/* Hand out up to @max entries from the table.  Returns the number passed
 * or a negative errno from @fn. */
static long table_emit(struct table *t, size_t max, fastrm_emit_fn fn,
                       void *ctx)
{
	size_t k = 0;
	while (t->pos < t->n && k < max) {
		const struct rec *r = &t->v[t->pos];
		struct fastrm_dirent d = { r->ino, t->names + r->off, r->len,
			                   r->type };
		int rc = fn(ctx, &d);
		if (rc < 0)
			return rc;
		t->pos++;
		k++;
	}
	return (long)k;
}

static int collect(void *ctx, const struct fastrm_dirent *d)
{
	table_push(ctx, d);
	return 0;
}

/* Load one more kernel buffer and reserve exactly the room it needs before
 * taking it: returns the number of entries it held (0 at the end of the
 * directory), -ENOMEM if no room could be had (the directory's position
 * is then restored, so the next read gets the same entries), or another
 * negative errno. */
/* Load the next kernel buffer without passing it on: the number of
 * entries (and in @names the bytes of their names), 0 at the end of the
 * directory, or a negative errno. */
static long load_next(struct fastrm_order_source *src, size_t *names)
{
	*names = 0;
	if (src->eof)
		return 0;
	long n = dirread_load(src->rd, src->fd, names);
	if (n == 0)
		src->eof = true;
	return n;
}

static long load_reserved(struct table *t, struct fastrm_order_source *src,
                          fastrm_emit_fn fn, void *ctx)
{
	size_t names;
	long n = load_next(src, &names);
	if (n <= 0)
		return n;
	if (table_reserve(t, (size_t)n, names) < 0) {
		/* Put the buffer back: the directory is read again from here. */
		int rc = dirread_unload(src->rd, src->fd);
		return rc < 0 ? rc : -ENOMEM;
	}
	long k = dirread_pass(src->rd, fn, ctx);
	return k < 0 ? k : n;
}

static long table_fill_one(struct table *t, struct fastrm_order_source *src)
{
	return load_reserved(t, src, collect, t);
}

/* ------------------------------------------------- states, sorted passes */

static const char *table_name(void *ctx, size_t i, size_t *len)
{
	const struct table *t = ctx;
	*len = t->v[i].len;
	return t->names + t->v[i].off;
}

/* The pass in table @t, sorted by inode, is about to go out: the device
 * advisor may read ahead what its removals will need (XFS's index). */
static void pass_sorted(struct fastrm_order_source *src, struct table *t)
{
	if (src->dw && t->n > 0)
		device_pass_sorted(src->dw, src->fd, src->st, t->n, table_name, t);
}

/* A policy whose state could not be allocated at its first call keeps
 * this as its state: the directory is then read in directory order to the
 * end.  (Allocating on a later call and starting over would hand out again
 * what was already handed out.) */
static char no_memory_state;
#define NO_MEMORY ((void *)&no_memory_state)

/* A policy that has handed out every entry of its directory frees its
 * state and keeps this instead, so that nothing of it stays while the walk
 * is below the directory (every directory of the path keeps its state: a
 * sorted one held 344 bytes a level).  Its next() then returns 0. */
static char finished_state;
#define FINISHED ((void *)&finished_state)

/* auto's state where it chose directory order (which keeps no state):
 * nothing is allocated for it. */
static char auto_directory_state;
#define AUTO_DIRECTORY ((void *)&auto_directory_state)

/* A policy's per-directory state of @size bytes, zeroed and allocated at
 * its first call (@fresh is then set), or NULL, for good, if that
 * allocation failed. */
static void *state_get(void **state, size_t size, bool *fresh)
{
	*fresh = false;
	if (!*state) {
		void *p = calloc(1, size);
		*fresh = p != NULL;
		*state = p ? p : NO_MEMORY;
	}
	return *state == NO_MEMORY ? NULL : *state;
}

static bool state_live(const void *state)
{
	return state && state != NO_MEMORY && state != FINISHED &&
	       state != AUTO_DIRECTORY;
}

/* ------------------------------------------------------------ directory */

static long directory_next(void **state, struct fastrm_order_source *src,
                           size_t max, fastrm_emit_fn fn, void *ctx)
{
	(void)state;
	return fastrm_order_read(src, max, fn, ctx);
}

static void nothing(void *state)
{
	(void)state;
}

const struct fastrm_order order_directory = {
	.name = "directory",
	.next = directory_next,
	.release = nothing,
	.description = "the order the directory returns",
};

/* ------------------------------------------------------ chunked windows */

struct window {
	struct table t;
	size_t limit;    /* entries per window */
	size_t sort_min; /* sort windows of at least this many */
	bool sort;
	bool sorted;     /* the window being handed out is */
	bool fallback;   /* out of memory: directory order from here on */
};

static void window_init(struct window *w, size_t limit, size_t sort_min,
                        bool sort)
{
	w->limit = limit ? limit : 1;
	w->sort_min = sort_min;
	w->sort = sort;
}

static long window_next(struct window *w, struct fastrm_order_source *src,
                        size_t max, fastrm_emit_fn fn, void *ctx)
{
	if (w->t.pos == w->t.n) {
		src->sorted = false;
		if (w->fallback || src->eof)
			return fastrm_order_read(src, max, fn, ctx);
		table_reset(&w->t);
		while (w->t.n < w->limit) {
			long n = table_fill_one(&w->t, src);
			if (n == -ENOMEM) {
				w->fallback = true;
				break;
			}
			if (n < 0 && w->t.n == 0)
				return n;
			if (n <= 0)
				break;
		}
		w->sorted = w->sort && w->t.n >= w->sort_min;
		if (w->sorted) {
			table_sort_in_place(&w->t);
			pass_sorted(src, &w->t);
		}
		fastrm_order_account(src, table_bytes(&w->t));
		if (w->t.n == 0)
			return w->fallback ? fastrm_order_read(src, max, fn, ctx) : 0;
	}
	src->sorted = w->sorted;
	long k = table_emit(&w->t, max, fn, ctx);
	if (k >= 0 && w->t.pos == w->t.n && src->eof) {
		/* all handed out: hold nothing while the walk goes deeper */
		table_free(&w->t);
		fastrm_order_account(src, 0);
	}
	return k;
}

static void window_release(void *state)
{
	struct window *w = state;
	if (!state_live(w))
		return;
	table_free(&w->t);
	free(w);
}

/* Bytes an entry takes in the table, on average, for sizing windows. */
#define ENTRY_ESTIMATE 48

static size_t budget_entries(const struct fastrm_order_source *src)
{
	size_t n = src->budget / ENTRY_ESTIMATE;
	return n > BUF_ENTRIES ? n - BUF_ENTRIES : 1024;
}

/* window_next() for @state's window; once every entry is handed out, the
 * window is freed (FINISHED). */
static long window_step(void **state, struct window *w,
                        struct fastrm_order_source *src, size_t max,
                        fastrm_emit_fn fn, void *ctx)
{
	long k = window_next(w, src, max, fn, ctx);
	if (k >= 0 && w->t.pos == w->t.n && src->eof) {
		window_release(w);
		*state = FINISHED;
		fastrm_order_account(src, 0);
	}
	return k;
}

static long chunked_next(void **state, struct fastrm_order_source *src,
                         size_t max, fastrm_emit_fn fn, void *ctx)
{
	bool fresh;
	if (*state == FINISHED)
		return 0;
	struct window *w = state_get(state, sizeof *w, &fresh);
	if (!w)
		return fastrm_order_read(src, max, fn, ctx);
	if (fresh)
		window_init(w, budget_entries(src), 0, true);
	return window_step(state, w, src, max, fn, ctx);
}

const struct fastrm_order order_chunked = {
	.name = "chunked",
	.next = chunked_next,
	.release = window_release,
	.description = "windows that fit the memory budget, each sorted by inode",
};

static long gnulib_next(void **state, struct fastrm_order_source *src,
                        size_t max, fastrm_emit_fn fn, void *ctx)
{
	bool fresh;
	if (*state == FINISHED)
		return 0;
	struct window *w = state_get(state, sizeof *w, &fresh);
	if (!w)
		return fastrm_order_read(src, max, fn, ctx);
	if (fresh)
		window_init(w, ORDER_GNULIB_WINDOW, ORDER_SORT_MIN,
		            !(src->dw && device_unsorted(src->dw, src->fd, src->st)));
	return window_step(state, w, src, max, fn, ctx);
}

const struct fastrm_order order_gnulib = {
	.name = "gnulib",
	.next = gnulib_next,
	.release = window_release,
	.description = "gnulib's rule: windows of 100,000 entries, sorted by inode from 10,000 on, not on tmpfs, NFS, CIFS, Lustre",
};

/* ------------------------------------------------- global inode order */

/*
 * Each pass reads the whole directory and keeps, in a max-heap, the
 * smallest keys (inode, name) above the last key handed out; the heap is
 * then sorted and handed out.  A directory that fits takes one pass (a
 * full sort); one ten times larger than the budget takes about ten.
 *
 * "global" holds exactly its budget: the record array and the name arena
 * are allocated once, sized from the budget and the names of the first
 * kernel buffer (16 bytes per record, 1.5 times the average name for the
 * arena, so that names of entries pushed out of the heap can accumulate
 * as garbage before the arena is compacted in place).  When the arena is
 * full the heap gives up its largest keys until the new name fits; passes
 * adapt to the names the directory really has.  "inode" ignores the
 * budget: its table grows with the directory.
 */
struct global {
	struct table t;     /* a max-heap while a pass reads */
	bool unlimited;     /* "inode": ignore the budget */
	bool handing_out;
	bool last_pass;     /* the last pass saw every remaining entry */
	bool have_thr;
	uint64_t thr_ino;   /* last key handed out */
	char thr_name[256];
	bool fallback;
};

#define HKEY(t, i) (t)->v[i].ino, (t)->names + (t)->v[i].off

static void heap_up(struct table *t, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (key_cmp(HKEY(t, p), HKEY(t, i)) >= 0)
			break;
		struct rec tmp = t->v[p];
		t->v[p] = t->v[i];
		t->v[i] = tmp;
		i = p;
	}
}

static void heap_down(struct table *t, size_t i)
{
	sift_down(t->v, t->n, i, by_key, t->names);
}

static void heap_pop(struct table *t)
{
	t->live -= t->v[0].len + 1u;
	t->v[0] = t->v[--t->n];
	heap_down(t, 0);
}

/* Slide the live names to the front of the arena, in place: records in
 * arena order, names moved down, then the heap rebuilt. */
static void compact(struct table *t)
{
	heapify(t->v, t->n, by_off, t->names);
	heap_to_sorted(t->v, t->n, by_off, t->names);
	size_t off = 0;
	for (size_t i = 0; i < t->n; i++) {
		memmove(t->names + off, t->names + t->v[i].off, t->v[i].len + 1u);
		t->v[i].off = (uint32_t)off;
		off += t->v[i].len + 1u;
	}
	t->nlen = off;
	heapify(t->v, t->n, by_key, t->names);
}

/* Allocate the bounded table once: @names bytes of names came with
 * @entries entries in the first kernel buffer. */
static int global_size(struct global *g, size_t budget, size_t entries,
                       size_t names)
{
	struct table *t = &g->t;
	size_t avg = entries ? (names + entries - 1) / entries : 16;
	size_t cap = budget / (sizeof *t->v + avg + avg / 2);
	/* any name must fit, whatever the others: two kernel buffers' worth
	 * of names at least (the budget is never under 256 KiB) */
	if (budget < cap * sizeof *t->v + 2 * BUF_NAMES)
		cap = budget > 2 * BUF_NAMES ? (budget - 2 * BUF_NAMES) / sizeof *t->v : 0;
	if (cap < 1024)
		cap = 1024;
	size_t arena = budget > cap * sizeof *t->v + 2 * BUF_NAMES
	                       ? budget - cap * sizeof *t->v
	                       : 2 * BUF_NAMES;
	if (arena > UINT32_MAX)
		arena = UINT32_MAX;
	t->v = malloc(cap * sizeof *t->v);
	t->names = malloc(arena);
	if (!t->v || !t->names) {
		table_free(t);
		return -ENOMEM;
	}
	t->cap = cap;
	t->ncap = arena;
	return 0;
}

struct pass {
	struct global *g;
	bool saw_more; /* an eligible entry was dropped: not the last pass */
	/* The smallest key dropped so far: every key kept must stay below
	 * it, or the pass would keep a key above one it dropped, and the next
	 * pass, starting above the largest key kept, would never see the
	 * dropped one again. */
	uint64_t ceil_ino;
	char ceil_name[256];
};

static void drop(struct pass *ps, uint64_t ino, const char *name, size_t len)
{
	if (ps->saw_more && key_cmp(ino, name, ps->ceil_ino, ps->ceil_name) >= 0)
		return;
	ps->saw_more = true;
	ps->ceil_ino = ino;
	memcpy(ps->ceil_name, name, len + 1);
}

static int pass_add(void *ctx, const struct fastrm_dirent *d)
{
	struct pass *ps = ctx;
	struct global *g = ps->g;
	struct table *t = &g->t;

	if (g->have_thr && key_cmp(d->ino, d->name, g->thr_ino, g->thr_name) <= 0)
		return 0; /* handed out in an earlier pass */
	if (ps->saw_more && key_cmp(d->ino, d->name, ps->ceil_ino, ps->ceil_name) >= 0)
		return 0; /* for a later pass */
	size_t need = d->namelen + 1;
	while (t->n == t->cap || t->nlen + need > t->ncap) {
		size_t garbage = t->nlen - t->live;
		if (t->n == 0 || (t->n < t->cap && garbage >= need &&
		                  garbage >= t->ncap / 4)) {
			/* a quarter of the arena at least: compactions stay
			 * rare (amortised O(log n) per entry) */
			compact(t);
			continue;
		}
		/* Full: the entry is kept only instead of larger keys. */
		if (key_cmp(d->ino, d->name, HKEY(t, 0)) >= 0) {
			drop(ps, d->ino, d->name, d->namelen);
			return 0;
		}
		drop(ps, t->v[0].ino, t->names + t->v[0].off, t->v[0].len);
		if (d->namelen <= t->v[0].len) {
			/* The new entry takes the place of the largest, name
			 * and all: no garbage (names of one length, as
			 * generated ones often are, never need compacting),
			 * and one sift instead of two. */
			struct rec *r = &t->v[0];
			t->live -= r->len - d->namelen;
			r->ino = d->ino;
			r->len = (uint16_t)d->namelen;
			r->type = d->type;
			memcpy(t->names + r->off, d->name, d->namelen + 1);
			heap_down(t, 0);
			return 0;
		}
		heap_pop(t);
	}
	table_push(t, d);
	if (!g->unlimited) /* "inode" sorts once at the end, never pops */
		heap_up(t, t->n - 1);
	return 0;
}

/* "inode": the table grows by what each kernel buffer brings. */
static long global_pass_unlimited(struct global *g, struct fastrm_order_source *src,
                                  struct pass *ps)
{
	for (;;) {
		long n = load_reserved(&g->t, src, pass_add, ps);
		if (n < 0)
			return n;
		if (n == 0)
			return 0;
	}
}

/* "global": the table was sized once, from the first buffer. */
static long global_pass_bounded(struct global *g, struct fastrm_order_source *src,
                                struct pass *ps)
{
	for (;;) {
		size_t names;
		long n = load_next(src, &names);
		if (n <= 0)
			return n;
		if (!g->t.v && global_size(g, src->budget, (size_t)n, names) < 0) {
			int rc = dirread_unload(src->rd, src->fd);
			return rc < 0 ? rc : -ENOMEM;
		}
		long k = dirread_pass(src->rd, pass_add, ps);
		if (k < 0)
			return k;
	}
}

static long global_pass(struct global *g, struct fastrm_order_source *src)
{
	struct table *t = &g->t;
	struct pass ps = { .g = g };

	if (g->have_thr || src->eof) {
		int rc = fastrm_order_rewind(src);
		if (rc < 0)
			return rc;
	}
	table_reset(t);
	long rc = g->unlimited ? global_pass_unlimited(g, src, &ps)
	                       : global_pass_bounded(g, src, &ps);
	if (rc < 0)
		return rc;
	g->last_pass = !ps.saw_more;
	if (g->unlimited)
		table_sort(t);
	else    /* the table is a max-heap already */
		heap_to_sorted(t->v, t->n, by_key, t->names);
	t->pos = 0;
	pass_sorted(src, t);
	return (long)t->n;
}

static long global_emit(struct global *g, struct fastrm_order_source *src,
                        size_t max, fastrm_emit_fn fn, void *ctx)
{
	struct table *t = &g->t;
	src->sorted = true;
	long k = table_emit(t, max, fn, ctx);
	if (k > 0) {
		const struct rec *r = &t->v[t->pos - 1];
		g->have_thr = true;
		g->thr_ino = r->ino;
		memcpy(g->thr_name, t->names + r->off, r->len + 1u);
	}
	return k;
}

/* Out of memory: read the directory once more from its start and pass on
 * every entry above the last key handed out, in directory order. */
struct filter {
	struct global *g;
	fastrm_emit_fn fn;
	void *ctx;
};

static int filter_emit(void *ctx, const struct fastrm_dirent *d)
{
	struct filter *f = ctx;
	if (f->g->have_thr &&
	    key_cmp(d->ino, d->name, f->g->thr_ino, f->g->thr_name) <= 0)
		return 0;
	return f->fn(f->ctx, d);
}

static long fallback_next(struct global *g, struct fastrm_order_source *src,
                          size_t max, fastrm_emit_fn fn, void *ctx)
{
	struct filter f = { g, fn, ctx };
	src->sorted = false;
	return fastrm_order_read(src, max, filter_emit, &f);
}

static long fallback_start(struct global *g, struct fastrm_order_source *src,
                           size_t max, fastrm_emit_fn fn, void *ctx)
{
	table_free(&g->t);
	fastrm_order_account(src, 0);
	int rc = fastrm_order_rewind(src);
	if (rc < 0)
		return rc;
	return fallback_next(g, src, max, fn, ctx);
}

static void global_release(void *state);

static long global_common(void **state, struct fastrm_order_source *src,
                          size_t max, fastrm_emit_fn fn, void *ctx,
                          bool unlimited)
{
	bool fresh;
	if (*state == FINISHED)
		return 0;
	struct global *g = state_get(state, sizeof *g, &fresh);
	if (!g)
		return fastrm_order_read(src, max, fn, ctx);
	if (fresh) {
		g->unlimited = unlimited;
	}
	for (;;) {
		if (g->fallback)
			return fallback_next(g, src, max, fn, ctx);
		if (g->handing_out && g->t.pos < g->t.n) {
			long k = global_emit(g, src, max, fn, ctx);
			if (k > 0 && g->last_pass && g->t.pos == g->t.n) {
				/* all handed out: nothing held while the walk
				 * goes deeper */
				global_release(g);
				*state = FINISHED;
				fastrm_order_account(src, 0);
			}
			return k;
		}
		if (g->handing_out && g->last_pass)
			return 0;
		long n = global_pass(g, src);
		fastrm_order_account(src, table_bytes(&g->t));
		if (n == -ENOMEM) {
			/* Hand out what this pass kept, then the rest in
			 * directory order from where the directory stands:
			 * rewind so that nothing is skipped, and skip what was
			 * handed out by key. */
			g->fallback = true;
			return fallback_start(g, src, max, fn, ctx);
		}
		if (n < 0)
			return n;
		g->handing_out = true;
		if (n == 0)
			return 0;
	}
}

static long global_next(void **state, struct fastrm_order_source *src,
                        size_t max, fastrm_emit_fn fn, void *ctx)
{
	return global_common(state, src, max, fn, ctx, false);
}

static long inode_next(void **state, struct fastrm_order_source *src,
                       size_t max, fastrm_emit_fn fn, void *ctx)
{
	return global_common(state, src, max, fn, ctx, true);
}

static void global_release(void *state)
{
	struct global *g = state;
	if (!state_live(g))
		return;
	table_free(&g->t);
	free(g);
}

const struct fastrm_order order_global = {
	.name = "global",
	.next = global_next,
	.release = global_release,
	.description = "a global inode order within the memory budget, in several passes",
};

/* "inode" is the reference point: the whole directory in one sorted table,
 * whatever the budget (memory grows with the directory). */
const struct fastrm_order order_inode = {
	.name = "inode",
	.next = inode_next,
	.release = global_release,
	.description = "the whole directory sorted by inode (memory grows with it)",
};

/* ----------------------------------------------------------------- auto */

/* Bytes a directory's st_size grows by per entry on ext4, about: an
 * estimate of the entry count before reading it. */
#define DIRENT_BYTES_ESTIMATE 24

/* Inode order where the device advisor says sorting pays on the
 * directory's device (device_sort): for a large directory, not in memory,
 * on the network or on btrfs, on XFS unless its reads were measured fast;
 * for a small one (estimated under 10,000 entries), on ext4, and elsewhere
 * only where reads were measured to seek.  A large directory in a global inode order: one pass (a full
 * sort) when it fits the budget, passes of a budget's worth of inodes
 * when it does not (doc/archive/benchmarks-0.5.md, "auto and the regimes").  A small
 * one sorted whole in a table of its own size (its st_size bounds it;
 * "global" would size its table to the budget for each of them).
 * Directory order otherwise.  What is read ahead, and when, is the
 * advisor's business, whatever the order. */
static const struct fastrm_order *auto_choose(struct fastrm_order_source *src)
{
	off_t size = src->st ? src->st->st_size : 0;
	bool large = size / DIRENT_BYTES_ESTIMATE >= ORDER_SORT_MIN;
	bool sort = src->dw ? device_sort(src->dw, src->fd, src->st, large) : large;
	return !sort ? &order_directory : large ? &order_global : &order_inode;
}

/* What auto keeps for a directory: one per level of a walk, so kept small
 * (a chain of a million directories holds a million). */
struct autostate {
	const struct fastrm_order *p;
	void *inner;
};

static long auto_next(void **state, struct fastrm_order_source *src,
                      size_t max, fastrm_emit_fn fn, void *ctx)
{
	if (*state == FINISHED)
		return 0;
	if (*state == AUTO_DIRECTORY)
		return directory_next(NULL, src, max, fn, ctx);
	if (!*state) {
		const struct fastrm_order *p = auto_choose(src);
		if (p == &order_directory) {
			*state = AUTO_DIRECTORY;
			return directory_next(NULL, src, max, fn, ctx);
		}
		bool fresh;
		struct autostate *a = state_get(state, sizeof *a, &fresh);
		if (!a)
			return fastrm_order_read(src, max, fn, ctx);
		a->p = p;
	}
	struct autostate *a = *state;
	if (a == NO_MEMORY)
		return fastrm_order_read(src, max, fn, ctx);
	long k = a->p->next(&a->inner, src, max, fn, ctx);
	if (a->inner == FINISHED) {
		/* the inner policy is done with the directory: so is auto */
		free(a);
		*state = FINISHED;
	}
	return k;
}

static void auto_release(void *state)
{
	struct autostate *a = state;
	if (!state_live(a))
		return;
	a->p->release(a->inner);
	free(a);
}

const struct fastrm_order order_auto = {
	.name = "auto",
	.next = auto_next,
	.release = auto_release,
	.description = "chosen per directory by size, budget and what the device advisor says sorting pays for there",
};

/* The built-in policies, in the order they are listed. */
static const struct fastrm_order *const builtin[] = {
	&order_auto, &order_directory, &order_inode,
	&order_chunked, &order_global, &order_gnulib,
};

FASTRM_EXPORT const struct fastrm_order *fastrm_order_builtin(size_t i)
{
	return i < sizeof builtin / sizeof builtin[0] ? builtin[i] : NULL;
}

FASTRM_EXPORT const struct fastrm_order *fastrm_order_by_name(const char *name)
{
	const struct fastrm_order *o;
	for (size_t i = 0; name && (o = fastrm_order_builtin(i)) != NULL; i++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

bool order_usable(const struct fastrm_order *o)
{
	if (!o || !o->next || !o->release)
		return false;
	for (size_t i = 0; i < sizeof o->reserved / sizeof o->reserved[0]; i++)
		if (o->reserved[i])
			return false;
	return true;
}
