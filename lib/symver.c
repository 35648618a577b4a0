/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared library's versioned symbols (libfastrm.sym).
 *
 * FTS_NAMEONLY was 0x1000 until 0.5; since 0.6 it is gnulib's 0x2000, and
 * 0x1000 is FTS_MOUNT.  A binary linked before 0.6 calls
 * fastrm_fts_children@FASTRM_0.2 and passes 0x1000; one linked since then
 * calls fastrm_fts_children@@FASTRM_0.6 and passes 0x2000.  Which value
 * means "names only" follows from the symbol a binary was linked with,
 * never from the value alone.
 */
#include "fastrm-int.h"
#include "fts-int.h"

FASTRM_EXPORT FTSENT *fts_children_v0_6(FTS *sp, int instr);
FASTRM_EXPORT FTSENT *fts_children_v0_2(FTS *sp, int instr);
__asm__(".symver fts_children_v0_6, fastrm_fts_children@@FASTRM_0.6");
__asm__(".symver fts_children_v0_2, fastrm_fts_children@FASTRM_0.2");

FASTRM_EXPORT FTSENT *fts_children_v0_6(FTS *sp, int instr)
{
	return fts_children_as(sp, instr, FTS_NAMEONLY);
}

FASTRM_EXPORT FTSENT *fts_children_v0_2(FTS *sp, int instr)
{
	return fts_children_as(sp, instr, 0x1000);
}
