/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compiled with -std=c11 -pedantic -Werror: <fastrm/rmtree.h> alone gives
 * everything a removal needs, the default budget and the version macros
 * included. */
#include <fastrm/rmtree.h>

#if !defined(FASTRM_VERSION_NUMBER) || FASTRM_VERSION_NUMBER < FASTRM_VERSION_AT(0, 4, 0)
#error "<fastrm/rmtree.h> does not bring the version macros"
#endif

int main(void)
{
	char *paths[] = { NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.memory = FASTRM_DEFAULT_BUDGET;
	o.flags = FASTRM_RMTREE_NO_PRESERVE_ROOT;
	return fastrm_rmtree(paths, &o, NULL) == 0 &&
	       FASTRM_VERSION_MAJOR * 1000000L + FASTRM_VERSION_MINOR * 1000L +
	                       FASTRM_VERSION_PATCH == FASTRM_VERSION_NUMBER
	               ? 0 : 1;
}
