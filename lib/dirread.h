/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The directory reader: getdents64 into one reused buffer per stream. */
#ifndef FASTRM_DIRREAD_H
#define FASTRM_DIRREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One directory entry as the kernel returned it.  @name is valid only
 * during the callback that receives it. */
struct dent {
	uint64_t ino;
	const char *name;
	size_t namelen;
	unsigned char type; /* DT_* */
};

/* Called for each entry; returns 0 to go on or a negative errno to stop. */
typedef int (*dent_fn)(void *ctx, const struct dent *d);

struct dirread {
	char *buf;
	size_t size;
};

/* Size of the reused getdents64 buffer.  Large enough that a directory of
 * millions of entries costs few system calls, small enough to stay in L2. */
#define DIRREAD_BUFSIZE (64 * 1024)

int dirread_init(struct dirread *r);
void dirread_fini(struct dirread *r);

/* Read whole getdents64 buffers from @fd, passing every entry to @fn, until
 * at least @want entries have been passed or the directory ends.  Each
 * buffer is passed whole, so the kernel's file position always follows the
 * last entry passed (a caller may save and restore it with lseek).
 * Returns the number of entries passed (>= 0) and sets *@eof at the end of
 * the directory; returns a negative errno on failure (entries passed
 * before the failure stay passed). */
long dirread_fill(struct dirread *r, int fd, size_t want, dent_fn fn,
                  void *ctx, bool *eof);

#endif
