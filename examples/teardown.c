/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A test fixture's teardown with fastrm_rmtree(3): make a scratch
 * directory, fill it, remove it whole, and say what could not be removed.
 * The removal starts no thread for a small tree (a worker starts only once
 * a removal has run a millisecond and there is a subtree to hand over), so
 * the same call serves a fixture of a few entries and a build tree of a
 * million.
 *
 *   cc teardown.c $(pkg-config --cflags --libs libfastrm) -o teardown
 *   ./teardown            # makes, fills and removes /tmp/teardown.XXXXXX
 */
#define _GNU_SOURCE
#include <fastrm/rmtree.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every failure is said, and counted (return 1). */
static int on_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	(void)what;
	fprintf(stderr, "%s: cannot remove %s: %s\n", (const char *)ctx, e->path,
	        strerror(err));
	return 1;
}

static int fill(const char *top)
{
	char path[4096];
	for (int d = 0; d < 5; d++) {
		snprintf(path, sizeof path, "%s/d%d", top, d);
		if (mkdir(path, 0755) != 0)
			return -1;
		for (int f = 0; f < 10; f++) {
			snprintf(path, sizeof path, "%s/d%d/f%d", top, d, f);
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd < 0)
				return -1;
			close(fd);
		}
	}
	return 0;
}

int main(void)
{
	char top[] = "/tmp/teardown.XXXXXX";
	if (!mkdtemp(top) || fill(top) != 0) {
		perror("teardown: making the fixture");
		return 1;
	}

	char *paths[] = { top, NULL };
	struct fastrm_rmtree_opts o;
	memset(&o, 0, sizeof o);
	o.size = sizeof o;
	o.workers = 8;                         /* the most; started on demand */
	o.flags = FASTRM_RMTREE_FIT_WORKERS;   /* fewer where more would hurt */
	o.ctx = "teardown";
	o.failed = on_failed;
	struct fastrm_rmtree_stats st;
	int rc = fastrm_rmtree(paths, &o, &st);
	if (rc < 0) {
		fprintf(stderr, "teardown: %s\n", strerror(-rc));
		return 1;
	}
	printf("removed %s: %d failure(s), %u worker(s) ran (libfastrm %s)\n", top, rc,
	       st.workers, FASTRM_VERSION_STRING);
	return rc == 0 ? 0 : 1;
}
