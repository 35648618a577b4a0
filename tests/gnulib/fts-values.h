/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The values of gnulib's <fts.h> (lib/fts.in.h), written down from
 * gnulib's repository at commit d8e2a2e266b9af73ccaf03c4bc9a039c342d4d98
 * (2026-04-17, the last change to lib/fts.in.h as of 2026-08-22; the
 * FTS_MOUNT change is 911133ba4f, 2025-10-23).  One line per macro:
 * GNULIB(name, value).  tests/unit/test-fts-values.c checks libfastrm's
 * header against it; tests/gnulib/check-values.sh (diff.fts-values) checks
 * that it names every FTS_* macro of libfastrm's header, and, given a
 * gnulib tree (meson option gnulib_src), that it still equals gnulib's
 * header there.
 * When gnulib changes a value, this file changes with libfastrm.
 */
/* fts_open() options */
GNULIB(FTS_COMFOLLOW, 0x0001)
GNULIB(FTS_LOGICAL, 0x0002)
GNULIB(FTS_NOCHDIR, 0x0004)
GNULIB(FTS_NOSTAT, 0x0008)
GNULIB(FTS_PHYSICAL, 0x0010)
GNULIB(FTS_SEEDOT, 0x0020)
GNULIB(FTS_XDEV, 0x0040)
GNULIB(FTS_WHITEOUT, 0x0080)
GNULIB(FTS_TIGHT_CYCLE_CHECK, 0x0100)
GNULIB(FTS_CWDFD, 0x0200)
GNULIB(FTS_DEFER_STAT, 0x0400)
GNULIB(FTS_VERBATIM, 0x0800)
GNULIB(FTS_MOUNT, 0x1000)
GNULIB(FTS_OPTIONMASK, 0x1fff)
/* private flags kept in fts_options */
GNULIB(FTS_NAMEONLY, 0x2000)
GNULIB(FTS_STOP, 0x4000)
/* levels */
GNULIB(FTS_ROOTPARENTLEVEL, -1)
GNULIB(FTS_ROOTLEVEL, 0)
/* fts_info */
GNULIB(FTS_D, 1)
GNULIB(FTS_DC, 2)
GNULIB(FTS_DEFAULT, 3)
GNULIB(FTS_DNR, 4)
GNULIB(FTS_DOT, 5)
GNULIB(FTS_DP, 6)
GNULIB(FTS_ERR, 7)
GNULIB(FTS_F, 8)
GNULIB(FTS_INIT, 9)
GNULIB(FTS_NS, 10)
GNULIB(FTS_NSOK, 11)
GNULIB(FTS_SL, 12)
GNULIB(FTS_SLNONE, 13)
GNULIB(FTS_W, 14)
/* fts_flags */
GNULIB(FTS_DONTCHDIR, 0x01)
GNULIB(FTS_SYMFOLLOW, 0x02)
/* fts_set() instructions */
GNULIB(FTS_AGAIN, 1)
GNULIB(FTS_FOLLOW, 2)
GNULIB(FTS_NOINSTR, 3)
GNULIB(FTS_SKIP, 4)
