/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The directory reader: getdents64 into one reused buffer per stream. */
#ifndef FASTRM_DIRREAD_H
#define FASTRM_DIRREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <fastrm/fts.h> /* struct fastrm_dirent, fastrm_emit_fn */

struct dirread {
	char *buf;
	size_t size;
	size_t pos, len;  /* entries loaded and not yet passed: [pos, len) */
	off_t resume;     /* directory position of the first entry not passed */
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
long dirread_fill(struct dirread *r, int fd, size_t want, fastrm_emit_fn fn,
                  void *ctx, bool *eof);

/* Load one kernel buffer from @fd without passing it: returns the number
 * of entries loaded (0 at the end of the directory) and adds the bytes of
 * their names (with NULs) to *@names; a negative errno on failure.  Used to
 * reserve exactly the memory a buffer needs before taking it. */
long dirread_load(struct dirread *r, int fd, size_t *names);

/* Pass the loaded entries to @fn; returns the number passed or @fn's
 * negative errno (the rest stay loaded). */
long dirread_pass(struct dirread *r, fastrm_emit_fn fn, void *ctx);

/* Forget loaded entries (after a rewind). */
void dirread_drop(struct dirread *r);

/* Put back the loaded entries not yet passed: forget them and set @fd's
 * position to the first of them, so the next read returns them again.
 * The reader is shared by every directory of a stream, so nothing may stay
 * loaded from one directory when another is read.  Returns 0, or a
 * negative errno if the position cannot be set. */
int dirread_unload(struct dirread *r, int fd);

#endif
