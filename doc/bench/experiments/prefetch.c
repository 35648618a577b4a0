/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Experiment (not part of frm): does a second thread that stat()s the
 * entries ahead of the unlinks (warming the dentry and inode caches)
 * shorten the removal of one huge directory?  Reads the whole directory,
 * sorts it by inode, unlinks in that order; with -p a prefetch thread runs
 * up to $LEAD entries (default 4096) ahead.  Measured in doc/benchmarks.md:
 * it doubles the system time (the lookups contend with the unlinks for the
 * directory) and loses.  With -t K (implies -p), K prefetch threads take
 * the next names in turn, so that up to K lookups are in flight at once
 * (doc/benchmarks.md, "XFS: lookups ahead of the unlinks").
 *
 *   cc -O2 -pthread -o prefetch doc/bench/experiments/prefetch.c
 *   printf "#!/bin/sh\nexec $PWD/prefetch \"\$1\"\n" > sorted-plain
 *   printf "#!/bin/sh\nexec $PWD/prefetch -p \"\$1\"\n" > sorted-prefetch
 *   chmod +x sorted-plain sorted-prefetch
 *   tools/fastrm-bench --fs ext4 --ladder 400000 --reps 3 \
 *       --tools rm,frm:inode,cmd:$PWD/sorted-plain,cmd:$PWD/sorted-prefetch
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
struct e {
	uint64_t ino;
	char *name;
};
static struct e *v;
static size_t n;
static int dfd;
static _Atomic size_t done;
static size_t lead;
static _Atomic size_t next;
static int cmp(const void *a, const void *b)
{
	const struct e *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}
static void *pf(void *arg)
{
	(void)arg;
	struct stat sb;
	for (;;) {
		size_t i = atomic_fetch_add(&next, 1);
		if (i >= n)
			break;
		while (i >
		       atomic_load_explicit(&done, memory_order_relaxed) + lead)
			usleep(50);
		if (i < atomic_load_explicit(&done, memory_order_relaxed))
			continue;
		fstatat(dfd, v[i].name, &sb, AT_SYMLINK_NOFOLLOW);
	}
	return NULL;
}
int main(int c, char **argv)
{
	int p = c > 2 && argv[1][0] == '-';
	int k = p && argv[1][1] == 't' && c > 3 ? atoi(argv[2]) : 1;
	if (k < 1 || k > 256)
		k = 1;
	const char *dir = argv[c - 1];
	lead = getenv("LEAD") ? atol(getenv("LEAD")) : 4096;
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
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
	pthread_t t[256];
	for (int j = 0; p && j < k; j++)
		pthread_create(&t[j], NULL, pf, NULL);
	for (size_t i = 0; i < n; i++) {
		unlinkat(dfd, v[i].name, 0);
		atomic_store_explicit(&done, i, memory_order_relaxed);
	}
	atomic_store(&done, n);
	for (int j = 0; p && j < k; j++)
		pthread_join(t[j], NULL);
	close(dfd);
	return rmdir(dir);
}
