/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfastrm's unlinker: unlinkat() calls carried out by worker
 * threads, their results handed back in the order they were submitted.
 *
 * Deprecated since 0.4: nothing in libfastrm or frm uses it; it stays, as
 * documented, in the ABI node FASTRM_0.2 of libfastrm.so.0 and goes with
 * the next soname.  New programs use fastrm_rmtree() (<fastrm/rmtree.h>).
 *
 * One thread unlinking in one huge directory waits on the disk for much of
 * the time, and the kernel frees each inode after it has dropped the
 * directory's lock; a few threads overlap that work.  The caller (one
 * thread) keeps the traversal: it sets the directory, submits names, and
 * retires results in submission order, so its messages come out exactly as
 * a serial removal would print them.
 *
 *   struct fastrm_unlinker *u;
 *   fastrm_unlinker_new(&u, 2, 0);
 *   fastrm_unlinker_set_dir(u, dirfd);         // queue empty: dup()s dirfd
 *   fastrm_unlinker_submit(u, "name", 0, ctx); // -EAGAIN when full:
 *   fastrm_unlinker_retire(u, true, &done);    //   retire one, submit again
 *   ...
 *   fastrm_unlinker_free(u);                   // finishes what was queued
 *
 * Errors: calls that can fail return 0 on success and a negative errno
 * value on failure, and leave errno alone (the convention of every
 * fastrm_* call that is not an fts call).
 *
 * Threads: one unlinker is driven by one thread at a time (its own workers
 * are internal); different unlinkers are independent.  The workers block
 * every signal.  No call may be made from a signal handler.
 */
#ifndef FASTRM_UNLINKER_H
#define FASTRM_UNLINKER_H

#include <fastrm/version.h>

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A queue of unlinkat() calls and the threads that make them (opaque). */
struct fastrm_unlinker;

/** A finished unlinkat(), as fastrm_unlinker_retire() hands it back. */
struct fastrm_unlink_done {
	const char *name; /* as submitted; valid until the next call */
	int dirfd;        /* the directory (the unlinker's copy of the fd) */
	int flags;        /* as submitted: 0 or AT_REMOVEDIR */
	int error;        /* 0, or the errno unlinkat() failed with */
	void *data;       /* as submitted */
};

/** Start @jobs worker threads (1 to 64) with room for @depth queued calls
 *  (0: a default) and store the unlinker in *@out.  Returns 0, or -EINVAL
 *  (@jobs out of range), -ENOMEM, or pthread_create()'s error negated
 *  (*@out is then NULL). */
int fastrm_unlinker_new(struct fastrm_unlinker **out, unsigned jobs,
                        size_t depth);

/** Make the calls submitted from now on relative to @dirfd (duplicated,
 *  so the caller may close its own).  Only while nothing is pending:
 *  returns 0, or -EBUSY (results not yet retired) or dup()'s error negated
 *  (then nothing changes). */
int fastrm_unlinker_set_dir(struct fastrm_unlinker *u, int dirfd);

/** Queue unlinkat(dir, @name, @flags); @data comes back with its result.
 *  Returns 0, or -EAGAIN (the queue is full: retire first), -EBADF (no
 *  directory set), -ENAMETOOLONG (more than NAME_MAX bytes) or -EINVAL
 *  (@name contains '/', or @flags is not 0 or AT_REMOVEDIR). */
int fastrm_unlinker_submit(struct fastrm_unlinker *u, const char *name,
                           int flags, void *data);

/** The oldest submitted call's result, once it is done.  Returns 1 and
 *  fills *@out; 0 when nothing is pending, or when @wait is false and the
 *  oldest call has not finished yet. */
int fastrm_unlinker_retire(struct fastrm_unlinker *u, bool wait,
                           struct fastrm_unlink_done *out);

/** Calls submitted and not yet retired. */
size_t fastrm_unlinker_pending(const struct fastrm_unlinker *u);

/** Finish every queued call (results not retired are dropped), stop the
 *  threads, close the directory copy, free @u (NULL accepted). */
void fastrm_unlinker_free(struct fastrm_unlinker *u);

#ifdef __cplusplus
}
#endif

#endif /* FASTRM_UNLINKER_H */
