/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Ordering policies: the one interface through which the traversal gets a
 * directory's entries, in the order it will visit them (struct
 * fastrm_order, public in <fastrm/order.h>).  The policy is an object chosen
 * when the walk is opened, never swapped in and out around a sort. */
#ifndef FASTRM_ORDER_INT_H
#define FASTRM_ORDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "dirread.h"
#include "device/device.h"
#include <fastrm/fts.h>

/* What a policy reads one directory through. */
struct fastrm_order_source {
	struct dirread *rd;    /* the stream's reused buffer */
	int fd;                /* the directory, open for reading */
	bool eof;              /* the directory has been read to its end */
	const struct stat *st; /* the directory's stat */
	size_t budget;         /* bytes the policy may hold (set per call) */
	size_t held;           /* bytes the policy reports holding */
	struct device_walk *dw; /* the walk's device advisor (device.h), or NULL */
	bool sorted;           /* a built-in policy hands entries out in inode
	                          order now (the advisor reads XFS's windows) */
};

/* Threshold of gnulib's rule: sort a batch by inode from this size on. */
#define ORDER_SORT_MIN 10000
/* gnulib's window (FTS_MAX_READDIR_ENTRIES). */
#define ORDER_GNULIB_WINDOW 100000

/* Whether @o can serve as a policy: next and release set, every reserved
 * member zero (a later release's member: not ours to ignore). */
bool order_usable(const struct fastrm_order *o);

extern const struct fastrm_order order_directory;
extern const struct fastrm_order order_inode;
extern const struct fastrm_order order_chunked;
extern const struct fastrm_order order_global;
extern const struct fastrm_order order_gnulib;
extern const struct fastrm_order order_auto;


#endif
