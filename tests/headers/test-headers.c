/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compiled with -std=c11 -pedantic -Werror: the public headers must stand
 * alone, and linking one call proves the prefixed names are exported. */
#include <fastrm/order.h>
#include <fastrm/fts.h>
#include <fastrm/compat/fts.h>
#include <fastrm/unlinker.h>
#include <fastrm/rmtree.h>
#include <fastrm/detach.h>

int main(void)
{
	char *argv[] = { NULL };
	FTS *f = fts_open(argv, FTS_PHYSICAL, NULL);
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	struct fastrm_unlinker *u;
	if (fastrm_unlinker_new(&u, 1, 0) != 0)
		return 1;
	fastrm_unlinker_free(u);
	if (!fastrm_order_builtin(0))
		return 1;
	if (fastrm_rmtree(argv, &o, NULL) != 0)
		return 1;
	return fastrm_fts_close(f);
}
