/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compiled with -std=c11 -pedantic -Werror: the public headers must stand
 * alone, and linking one call proves the prefixed names are exported. */
#include <fastrm/fts.h>
#include <fastrm/compat/fts.h>

int main(void)
{
	char *argv[] = { NULL };
	FTS *f = fts_open(argv, FTS_PHYSICAL, NULL);
	return fastrm_fts_close(f);
}
