/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Plain fts names for libfastrm.  Put this directory first on the include
 * path (pkg-config --cflags libfastrm-compat) or include <fastrm/compat/fts.h>
 * instead of <fts.h>, and code written against glibc's or gnulib's fts
 * compiles unchanged and links against libfastrm.
 *
 * Do not include the C library's <fts.h> in the same translation unit.
 */
#ifndef FASTRM_COMPAT_FTS_H
#define FASTRM_COMPAT_FTS_H

#include <fastrm/fts.h>

/* Keep the C library's and gnulib's headers out if they come later. */
#ifndef _FTS_H
#define _FTS_H 1
#endif

/* gnulib's config.h may have renamed them (fts_open -> rpl_fts_open):
 * these names win. */
#undef fts_open
#undef fts_openat
#undef fts_read
#undef fts_children
#undef fts_set
#undef fts_close
#define fts_open     fastrm_fts_open
#define fts_openat   fastrm_fts_openat /* FreeBSD's, since libfastrm 0.6 */
#define fts_read     fastrm_fts_read
#define fts_children fastrm_fts_children
#define fts_set      fastrm_fts_set
#define fts_close    fastrm_fts_close

#endif /* FASTRM_COMPAT_FTS_H */
