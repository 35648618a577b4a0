/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A program outside the source tree, built only with
 * "pkg-config --cflags --libs libfastrm" against the installed packages:
 * it lists the ordering policies, walks a tree it made, and removes it
 * with fastrm_rmtree().  Exit status 0 if everything did what it should. */
#define _GNU_SOURCE
#include <fastrm/fts.h>
#include <fastrm/rmtree.h>
#include <fastrm/unlinker.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	char dir[] = "/tmp/fastrm-consumer.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char path[64];
	snprintf(path, sizeof path, "%s/t/a/b", dir);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "mkdir -p %s && touch %s/f %s/../g", path, path, path);
	if (system(cmd) != 0)
		return 1;

	size_t n = 0;
	while (fastrm_order_builtin(n))
		n++;
	printf("%zu built-in policies, the first \"%s\"\n", n, fastrm_order_builtin(0)->name);

	snprintf(path, sizeof path, "%s/t", dir);
	char *roots[] = { path, NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_CWDFD, NULL);
	if (!fts || fastrm_fts_set_order(fts, fastrm_order_by_name("inode")) != 0)
		return 1;
	int entries = 0;
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL)
		entries += e->fts_info != FTS_DP;
	fastrm_fts_close(fts);
	printf("walked %d entries\n", entries);

	struct fastrm_rmtree_opts o = { .size = sizeof o, .workers = 2 };
	int failed = fastrm_rmtree(roots, &o, NULL);
	struct stat sb;
	int gone = lstat(path, &sb) < 0 && errno == ENOENT;
	printf("fastrm_rmtree: %d failed, tree %s\n", failed, gone ? "gone" : "still there");
	rmdir(dir);
	return n == 6 && entries == 5 && failed == 0 && gone ? 0 : 1;
}
