/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* <fastrm/compat/fts.h> after a config.h of gnulib's that renames the fts
 * functions (current gnulib: "#define fts_open rpl_fts_open", and so on),
 * as in current coreutils: the plain names still reach libfastrm (else
 * rpl_fts_open and the rest would be undefined at link time), with no
 * warning (built with -Werror). */
#define fts_open rpl_fts_open
#define fts_read rpl_fts_read
#define fts_children rpl_fts_children
#define fts_set rpl_fts_set
#define fts_close rpl_fts_close
#include <fastrm/compat/fts.h>

#include <errno.h>
#include <stdio.h>

int main(void)
{
	char *argv[] = { ".", NULL };
	FTS *fts = fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR | FTS_MOUNT, NULL);
	if (!fts) {
		perror("fts_open");
		return 1;
	}
	FTSENT *e = fts_read(fts);
	int ok = e && e->fts_info == FTS_D && fts_children(fts, FTS_NAMEONLY) != (FTSENT *)1 &&
	         fts_set(fts, e, FTS_SKIP) == 0;
	if (fts_close(fts) != 0 || !ok) {
		fprintf(stderr, "the plain names do not reach libfastrm\n");
		return 1;
	}
	return 0;
}
