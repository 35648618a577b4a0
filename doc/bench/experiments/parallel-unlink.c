/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Experiment (not part of frm): do several threads unlinking in one huge
 * directory finish sooner than one?  unlink holds the directory's lock
 * for the lookup and the removal of the entry, but the inode is freed
 * (evicted) after the lock is dropped, so part of the work could overlap.
 * Reads the whole directory, sorts it by inode, then $JOBS threads
 * (default 1) unlink it: with MODE=claim (default) each thread claims the
 * next $CHUNK entries (default 256) of the sorted list, so all threads
 * stay close together in inode order; with MODE=slices thread k takes the
 * k-th contiguous slice.
 *
 * Measured in doc/benchmarks.md ("Parallel unlinks"):
 *
 *   cc -O2 -pthread -o parallel-unlink doc/bench/experiments/parallel-unlink.c
 *   for s in "1 claim" "2 claim" "2 slices"; do set -- $s
 *     printf '#!/bin/sh\nJOBS=%s MODE=%s exec %s "$1"\n' \
 *       $1 $2 $PWD/parallel-unlink > unlink-$1-$2; chmod +x unlink-$1-$2; done
 *   tools/fastrm-bench --fs ext4 --ladder 400000 --reps 3 --tools \
 *     rm,frm:inode,cmd:$PWD/unlink-1-claim,cmd:$PWD/unlink-2-claim,cmd:$PWD/unlink-2-slices
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct e {
	uint64_t ino;
	char *name;
};
static struct e *v;
static size_t n, chunk, jobs;
static int dfd, slices;
static _Atomic size_t next;

static int cmp(const void *a, const void *b)
{
	const struct e *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static void *worker(void *arg)
{
	size_t k = (size_t)(uintptr_t)arg;
	if (slices) {
		size_t lo = n * k / jobs, hi = n * (k + 1) / jobs;
		for (size_t i = lo; i < hi; i++)
			unlinkat(dfd, v[i].name, 0);
		return NULL;
	}
	for (;;) {
		size_t lo = atomic_fetch_add(&next, chunk);
		if (lo >= n)
			return NULL;
		size_t hi = lo + chunk < n ? lo + chunk : n;
		for (size_t i = lo; i < hi; i++)
			unlinkat(dfd, v[i].name, 0);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *dir = argv[1];
	jobs = getenv("JOBS") ? strtoul(getenv("JOBS"), NULL, 10) : 1;
	chunk = getenv("CHUNK") ? strtoul(getenv("CHUNK"), NULL, 10) : 256;
	slices = getenv("MODE") && !strcmp(getenv("MODE"), "slices");
	if (jobs < 1 || jobs > 64 || chunk < 1)
		return 2;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (dfd < 0)
		return 1;
	static char buf[65536];
	size_t cap = 1024;
	v = malloc(cap * sizeof *v);
	for (;;) {
		long k = syscall(SYS_getdents64, dfd, buf, sizeof buf);
		if (k <= 0)
			break;
		for (long o = 0; o < k;) {
			struct dirent64 *d = (void *)(buf + o);
			o += d->d_reclen;
			if (d->d_name[0] == '.' &&
			    (!d->d_name[1] ||
			     (d->d_name[1] == '.' && !d->d_name[2])))
				continue;
			if (n == cap) {
				cap *= 2;
				v = realloc(v, cap * sizeof *v);
			}
			v[n].ino = d->d_ino;
			v[n].name = strdup(d->d_name);
			n++;
		}
	}
	qsort(v, n, sizeof *v, cmp);
	pthread_t t[64];
	for (size_t k = 1; k < jobs; k++)
		pthread_create(&t[k], NULL, worker, (void *)(uintptr_t)k);
	worker((void *)0);
	for (size_t k = 1; k < jobs; k++)
		pthread_join(t[k], NULL);
	close(dfd);
	return rmdir(dir) ? 1 : 0;
}
