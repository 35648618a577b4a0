/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A library that exports one symbol beyond libfastrm's ABI: the export
 * check must reject it (api.exports-can-fail). */
#include <fastrm/fts.h>

__attribute__((visibility("default"))) int fastrm_not_in_the_abi(void);
int fastrm_not_in_the_abi(void)
{
	return fastrm_fts_close(NULL);
}
