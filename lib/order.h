/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Ordering policies: the one interface through which the traversal gets a
 * directory's entries, in the order it will visit them.  The policy is an
 * object chosen when the walk is opened (never swapped in and out). */
#ifndef FASTRM_ORDER_H
#define FASTRM_ORDER_H

#include <stdbool.h>
#include <stddef.h>

#include "dirread.h"
#include <fastrm/fts.h>

/* What a policy reads one directory through. */
struct order_src {
	struct dirread *rd; /* the stream's reused buffer */
	int fd;             /* the directory, open for reading */
	bool eof;           /* set once the directory is exhausted */
};

struct order_ops {
	const char *name;
	/* Pass the directory's next entries to @fn, in this policy's order:
	 * about @max of them (a policy may pass up to one read buffer more).
	 * *@state is NULL at the first call for a directory and is kept
	 * between calls.  Returns the number passed, 0 when there are no
	 * more (src->eof set), or a negative errno. */
	long (*next)(void **state, struct order_src *src, size_t max,
	             dent_fn fn, void *ctx);
	/* Reorder one batch of materialised entries (NULL: keep as is). */
	void (*arrange)(FTS *sp, FTSENT **v, size_t n);
	/* Release *state (NULL accepted). */
	void (*release)(void *state);
};

/* Entries in the order the directory returns them. */
extern const struct order_ops order_directory;
/* The whole directory, ordered by the stream's fts_compar. */
extern const struct order_ops order_compare;

#endif
