/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fastrm-fdtable: what a file-descriptor table of each thread's own buys a
 * removal (rmz's unshare(CLONE_FILES) in every thread).  While a process's
 * threads share one table, each system call on an fd (getdents64, and
 * unlinkat relative to a directory fd) takes and drops a reference on the
 * file, and getdents64 takes the file's position lock; a thread with a
 * table of its own skips both (the kernel's fdget fast path).
 *
 * Under DIR (a directory of the caller's), ROUNDS rounds: each makes
 * THREADS trees of DIRS directories of FILES empty files, then removes
 * them at once, one thread a tree, each with fastrm_rmtree (0 workers: the
 * walk of one thread) -- once with the threads sharing the process's
 * table, once with each thread's own (unshare(CLONE_FILES) as it starts),
 * in alternating order from round to round.  The trees are made before
 * the clock starts.  Prints the median time of each way and the ratio.
 *
 * usage: fastrm-fdtable DIR [THREADS [ROUNDS [DIRS [FILES]]]]
 */
#define _GNU_SOURCE
#include <fastrm/rmtree.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
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

static void make_tree(const char *top, int dirs, int files)
{
	char p[4096];
	if (mkdir(top, 0755) != 0)
		die(top);
	for (int d = 0; d < dirs; d++) {
		snprintf(p, sizeof p, "%.3000s/d%d", top, d);
		if (mkdir(p, 0755) != 0)
			die(p);
		for (int f = 0; f < files; f++) {
			snprintf(p, sizeof p, "%.3000s/d%d/file-%d", top, d, f);
			int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd < 0)
				die(p);
			close(fd);
		}
	}
}

struct job {
	char path[4096];
	bool own_table;
	pthread_barrier_t *start;
	int rc;
	int unshare_err;
};

static void *run(void *arg)
{
	struct job *j = arg;
	if (j->own_table && unshare(CLONE_FILES) != 0)
		j->unshare_err = errno;
	pthread_barrier_wait(j->start);
	char *paths[] = { j->path, NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = 0;
	j->rc = fastrm_rmtree(paths, &o, NULL);
	return NULL;
}

/* Remove the trees at once; the seconds from the start line to the last. */
static double remove_all(struct job *jobs, int threads, bool own_table)
{
	pthread_t *tid = calloc((size_t)threads, sizeof *tid);
	pthread_barrier_t start;
	if (!tid || pthread_barrier_init(&start, NULL, (unsigned)threads + 1) != 0)
		die("setup");
	for (int i = 0; i < threads; i++) {
		jobs[i].own_table = own_table;
		jobs[i].start = &start;
		jobs[i].rc = jobs[i].unshare_err = 0;
		if (pthread_create(&tid[i], NULL, run, &jobs[i]) != 0)
			die("pthread_create");
	}
	pthread_barrier_wait(&start);
	double t0 = bench_now();
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	double t = bench_now() - t0;
	for (int i = 0; i < threads; i++) {
		if (jobs[i].unshare_err) {
			errno = jobs[i].unshare_err;
			die("unshare(CLONE_FILES)");
		}
		if (jobs[i].rc != 0) {
			fprintf(stderr, "%s: fastrm_rmtree failed (%d)\n", jobs[i].path, jobs[i].rc);
			exit(1);
		}
	}
	pthread_barrier_destroy(&start);
	free(tid);
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 6) {
		fprintf(stderr, "usage: fastrm-fdtable DIR [THREADS [ROUNDS [DIRS [FILES]]]]\n");
		return 2;
	}
	const char *dir = argv[1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = argc > 2 ? atoi(argv[2]) : (int)(cpus > 0 ? cpus : 2);
	int rounds = argc > 3 ? atoi(argv[3]) : 9;
	int dirs = argc > 4 ? atoi(argv[4]) : 100;
	int files = argc > 5 ? atoi(argv[5]) : 200;
	if (threads < 1 || rounds < 1 || dirs < 1 || files < 0)
		return 2;
	struct job *jobs = calloc((size_t)threads, sizeof *jobs);
	double *t[2];
	if (!jobs || !(t[0] = calloc((size_t)rounds, sizeof(double))) ||
	    !(t[1] = calloc((size_t)rounds, sizeof(double))))
		die("calloc");
	for (int i = 0; i < threads; i++)
		snprintf(jobs[i].path, sizeof jobs[i].path, "%.3000s/fdtable-%d", dir, i);
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			int way = (r + k) % 2; /* 0: shared table, 1: own table */
			for (int i = 0; i < threads; i++)
				make_tree(jobs[i].path, dirs, files);
			t[way][r] = remove_all(jobs, threads, way == 1);
		}
		fprintf(stderr, "round %d: shared %.4f s, own %.4f s\n", r + 1, t[0][r], t[1][r]);
	}
	qsort(t[0], (size_t)rounds, sizeof(double), bench_cmp_double);
	qsort(t[1], (size_t)rounds, sizeof(double), bench_cmp_double);
	double shared = t[0][rounds / 2], own = t[1][rounds / 2];
	printf("%d threads at once, a tree each of %d directories of %d files, %d rounds (medians):\n",
	       threads, dirs, files, rounds);
	printf("  one table for the process   %.4f s  1.00x\n", shared);
	printf("  a table of each thread's    %.4f s  %.3fx\n", own, own / shared);
	free(t[0]);
	free(t[1]);
	free(jobs);
	return 0;
}
