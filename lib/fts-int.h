/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The traversal's internal entry points (never installed). */
#ifndef FASTRM_FTS_INT_H
#define FASTRM_FTS_INT_H

#include <stdbool.h>
#include <fastrm/fts.h>

/* fastrm_fts_open() with the roots' paths relative to @rootfd instead of
 * the working directory (AT_FDCWD: the same as fastrm_fts_open()).  The
 * stream does not own @rootfd: it must stay open until fts_close.  Under
 * FTS_CWDFD a root's fts_cwd_fd is @rootfd.  The default mode (it changes
 * the working directory) needs AT_FDCWD: EINVAL otherwise. */
FTS *fts_open_at(int rootfd, char *const *argv, int options,
                 int (*compar)(const FTSENT **, const FTSENT **));

/* fastrm_fts_children() for a caller built with @nameonly as the value of
 * FTS_NAMEONLY: 0x2000 (gnulib's since 2025-10, libfastrm's since 0.6), or
 * 0x1000 (libfastrm's until 0.5; fastrm_fts_children@FASTRM_0.2 in
 * symver.c).  No other non-zero @instr is accepted. */
FTSENT *fts_children_as(FTS *sp, int instr, int nameonly);

/* Make @sp's budget (fastrm_fts_set_memory_budget) one that it shares with
 * every stream given the same @held counter: what they hold together stays
 * within it, plus at most the minimum a directory gets (256 KiB) per
 * stream.  @held starts at 0 and must outlive the streams. */
void fts_share_budget(FTS *sp, size_t *held);

struct device_walk;
/* Let @sp ask the device advisor (device/device.h) through @dw, which
 * outlives it and which no other thread uses meanwhile: a pool worker's,
 * for every walk it makes, on the pool's advisor. */
void fts_share_device(FTS *sp, struct device_walk *dw);

/* Let @sp visit each small batch's subdirectories after its other entries
 * (their order among themselves kept), where its policy hands entries out
 * in directory order: a removal's walk then frees a directory's files
 * before it descends.  The order of visits is no longer fts(3)'s: the
 * removal pool's, where several workers make it another anyway.  @on
 * false: fts(3)'s order again.  Takes effect at the next directory read. */
void fts_dirs_last(FTS *sp, bool on);

/* Let @sp tell @fn, with @ctx, what each read of a directory listed: the
 * directory's entry, how many entries, how many of them directories (by
 * their d_type), whether they are the first of that directory (its read
 * from the start), whether the directory is now listed to its end, and
 * how many entries it listed in all so far.  Called from fts_read, in the
 * stream's thread; no system call is made for it.  NULL: nothing is
 * told. */
typedef void (*fts_listed_fn)(void *ctx, const FTSENT *dir, size_t n,
                              size_t ndirs, bool first, bool done, size_t total);
void fts_on_listed(FTS *sp, fts_listed_fn fn, void *ctx);

#endif
