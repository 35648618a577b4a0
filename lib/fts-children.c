/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fastrm_fts_children() of the static library, where there are no symbol
 * versions: FTS_NAMEONLY is 0x2000, gnulib's value since 2025-10.  The
 * shared library defines it in symver.c instead. */
#include "fastrm-int.h"
#include "fts-int.h"

FASTRM_EXPORT FTSENT *fastrm_fts_children(FTS *sp, int instr)
{
	return fts_children_as(sp, instr, FTS_NAMEONLY);
}
