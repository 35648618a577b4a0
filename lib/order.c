/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "order.h"

#include <stdint.h>
#include <stdlib.h>

static long directory_next(void **state, struct order_src *src, size_t max,
                           dent_fn fn, void *ctx)
{
	(void)state;
	if (src->eof)
		return 0;
	return dirread_fill(src->rd, src->fd, max, fn, ctx, &src->eof);
}

static void no_release(void *state)
{
	(void)state;
}

const struct order_ops order_directory = {
	.name = "directory",
	.next = directory_next,
	.arrange = NULL,
	.release = no_release,
};

/* A comparator needs the whole directory before the first entry can be
 * returned, as in gnulib and BSD. */
static long compare_next(void **state, struct order_src *src, size_t max,
                         dent_fn fn, void *ctx)
{
	(void)max;
	return directory_next(state, src, SIZE_MAX, fn, ctx);
}

static int compar_thunk(const void *a, const void *b)
{
	const FTSENT *const *pa = a, *const *pb = b;
	return (*pa)->fts_fts->fts_compar((const FTSENT **)pa,
	                                  (const FTSENT **)pb);
}

static void compare_arrange(FTS *sp, FTSENT **v, size_t n)
{
	(void)sp;
	qsort(v, n, sizeof *v, compar_thunk);
}

const struct order_ops order_compare = {
	.name = "compare",
	.next = compare_next,
	.arrange = compare_arrange,
	.release = no_release,
};
