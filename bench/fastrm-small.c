/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fastrm-small: what a small removal costs in process, as a test suite's
 * teardown or a build tool's clean step makes it.  Under DIR (a directory
 * of the caller's, on tmpfs for the common case), ROUNDS rounds: each
 * makes TREES trees of 66 entries (5 directories of 10 files, a chain of
 * 3 directories with a file in each, 5 files at the top) and removes them
 * one call each, in turn by each way: fastrm_rmtree with 0 workers, with
 * WORKERS (frm's default on this machine: 4 per CPU, at most 16), and
 * nftw(FTW_DEPTH | FTW_PHYS) with unlink/rmdir (what a C program writes
 * by hand).  Prints the median time per tree of each way, and its ratio
 * to 0 workers.
 *
 * usage: fastrm-small DIR [TREES [ROUNDS]]
 */
#define _GNU_SOURCE
#include <fastrm/rmtree.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		die(path);
	close(fd);
}

static void make_tree(const char *top)
{
	char p[4096];
	if (mkdir(top, 0755) != 0)
		die(top);
	for (int d = 0; d < 5; d++) {
		snprintf(p, sizeof p, "%.3000s/d%d", top, d);
		if (mkdir(p, 0755) != 0)
			die(p);
		for (int f = 0; f < 10; f++) {
			snprintf(p, sizeof p, "%.3000s/d%d/f%d", top, d, f);
			touch(p);
		}
	}
	size_t n = (size_t)snprintf(p, sizeof p, "%s", top);
	for (int c = 0; c < 3; c++) {
		n += (size_t)snprintf(p + n, sizeof p - n, "/n%d", c);
		if (mkdir(p, 0755) != 0)
			die(p);
		char f[4200];
		snprintf(f, sizeof f, "%s/f", p);
		touch(f);
	}
	for (int f = 0; f < 5; f++) {
		snprintf(p, sizeof p, "%.3000s/top%d", top, f);
		touch(p);
	}
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: fastrm-small DIR [TREES [ROUNDS]]\n");
		return 2;
	}
	const char *dir = argv[1];
	int trees = argc > 2 ? atoi(argv[2]) : 500;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned workers = cpus < 1 ? 4 : cpus > 4 ? 16 : (unsigned)cpus * 4;
	if (trees < 1 || rounds < 1)
		return 2;
	enum { WAYS = 3 };
	const char *names[WAYS] = { "fastrm_rmtree, 0 workers", NULL, "nftw" };
	char label[64];
	snprintf(label, sizeof label, "fastrm_rmtree, %u workers", workers);
	names[1] = label;
	double *t[WAYS];
	for (int w = 0; w < WAYS; w++)
		if (!(t[w] = calloc((size_t)rounds, sizeof *t[w])))
			die("calloc");
	char path[4096];
	unsigned long spawned = 0; /* calls that started a worker */
	for (int r = 0; r < rounds; r++) {
		for (int w = 0; w < WAYS; w++) {
			for (int i = 0; i < trees; i++) {
				snprintf(path, sizeof path, "%.3000s/fx%d", dir, i);
				make_tree(path);
			}
			double t0 = bench_now();
			for (int i = 0; i < trees; i++) {
				snprintf(path, sizeof path, "%.3000s/fx%d", dir, i);
				int rc;
				if (w == 2) {
					rc = nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
				} else {
					char *paths[] = { path, NULL };
					struct fastrm_rmtree_opts o = { 0 };
					o.size = sizeof o;
					o.workers = w == 0 ? 0 : workers;
					o.flags = FASTRM_RMTREE_FIT_WORKERS;
					struct fastrm_rmtree_stats st;
					rc = fastrm_rmtree(paths, &o, &st);
					spawned += st.workers > 1;
				}
				if (rc != 0) {
					fprintf(stderr, "%s: %s failed (%d)\n", path, names[w], rc);
					return 1;
				}
			}
			t[w][r] = (bench_now() - t0) / trees;
		}
	}
	printf("%d trees of 66 entries, one call each, %d rounds (medians per tree):\n",
	       trees, rounds);
	double base = 0;
	for (int w = 0; w < WAYS; w++) {
		qsort(t[w], (size_t)rounds, sizeof *t[w], bench_cmp_double);
		double m = t[w][rounds / 2];
		if (w == 0)
			base = m;
		printf("  %-28s %8.1f us  %.2fx\n", names[w], m * 1e6, m / base);
		free(t[w]);
	}
	printf("calls that started a worker: %lu of %d\n", spawned, trees * rounds);
	return 0;
}
