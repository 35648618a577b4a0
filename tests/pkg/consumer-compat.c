/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A program written against <fts.h> with the plain names, built with
 * "pkg-config --cflags --libs libfastrm-compat": the include and the link
 * line are all that change.  It counts the entries of the directory it
 * is given, in fts's default mode. */
#include <fts.h>

#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char *roots[] = { argv[1], NULL };
	FTS *fts = fts_open(roots, FTS_PHYSICAL, NULL);
	if (!fts)
		return 1;
	int n = 0;
	FTSENT *e;
	while ((e = fts_read(fts)) != NULL)
		if (e->fts_info != FTS_DP && access(e->fts_accpath, F_OK) == 0)
			n++;
	fts_close(fts);
	printf("%d\n", n);
	return 0;
}
