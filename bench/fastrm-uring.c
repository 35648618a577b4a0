/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Experiment (doc/archive/benchmarks-0.5.md, "io_uring against worker threads"): empty
 * one flat directory, its names unlinked in inode order, one of three ways:
 *   serial      one unlinkat() after another (frm --jobs=1's way);
 *   threads:N   libfastrm's unlinker, N worker threads;
 *   uring:N     io_uring IORING_OP_UNLINKAT, N requests in flight;
 * then remove the directory.  The names are all read first and held
 * (memory grows with the directory: an experiment, not a remover).
 * usage: fastrm-uring MODE DIR          (a fastrm-bench cmd: wrapper) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fastrm/unlinker.h>

struct name {
	uint64_t ino;
	char *name;
};

static int by_ino(const void *a, const void *b)
{
	const struct name *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "fastrm-uring: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct name *read_names(int fd, size_t *count)
{
	size_t n = 0, cap = 1024;
	struct name *v = malloc(cap * sizeof *v);
	static char buf[64 * 1024];
	long k;
	if (!v)
		die("malloc", ENOMEM);
	while ((k = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < k;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (n == cap && !(v = realloc(v, (cap *= 2) * sizeof *v)))
				die("realloc", ENOMEM);
			v[n].ino = de->d_ino;
			if (!(v[n++].name = strdup(de->d_name)))
				die("strdup", ENOMEM);
		}
	}
	if (k < 0)
		die("getdents64", errno);
	qsort(v, n, sizeof *v, by_ino);
	*count = n;
	return v;
}

static void serial(int fd, struct name *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (unlinkat(fd, v[i].name, 0) < 0)
			die(v[i].name, errno);
}

static void threads(int fd, struct name *v, size_t n, unsigned jobs)
{
	struct fastrm_unlinker *u;
	struct fastrm_unlink_done d;
	int rc = fastrm_unlinker_new(&u, jobs, 0);
	if (rc < 0 || (rc = fastrm_unlinker_set_dir(u, fd)) < 0)
		die("unlinker", -rc);
	for (size_t i = 0; i < n;) {
		rc = fastrm_unlinker_submit(u, v[i].name, 0, NULL);
		if (rc == 0) {
			i++;
			continue;
		}
		if (rc != -EAGAIN)
			die("submit", -rc);
		if (fastrm_unlinker_retire(u, true, &d) == 1 && d.error)
			die(d.name, d.error);
	}
	while (fastrm_unlinker_retire(u, true, &d) == 1)
		if (d.error)
			die(d.name, d.error);
	fastrm_unlinker_free(u);
}

static void uring(int fd, struct name *v, size_t n, unsigned depth)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(depth, &ring, 0);
	if (rc < 0)
		die("io_uring_queue_init", -rc);
	size_t next = 0, done = 0;
	unsigned inflight = 0;
	while (done < n) {
		while (inflight < depth && next < n) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (!sqe)
				break;
			io_uring_prep_unlinkat(sqe, fd, v[next].name, 0);
			io_uring_sqe_set_data64(sqe, next);
			next++;
			inflight++;
		}
		struct io_uring_cqe *cqe;
		rc = io_uring_submit_and_wait(&ring, 1);
		if (rc < 0 && rc != -EINTR)
			die("io_uring_submit_and_wait", -rc);
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res < 0)
				die(v[cqe->user_data].name, -cqe->res);
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		inflight -= seen;
		done += seen;
	}
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fastrm-uring serial|threads:N|uring:N DIR\n");
		return 2;
	}
	const char *mode = argv[1];
	int fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		die(argv[2], errno);
	size_t n;
	struct name *v = read_names(fd, &n);
	unsigned k = strchr(mode, ':') ? (unsigned)atoi(strchr(mode, ':') + 1) : 1;
	if (strcmp(mode, "serial") == 0)
		serial(fd, v, n);
	else if (strncmp(mode, "threads:", 8) == 0 && k >= 1)
		threads(fd, v, n, k);
	else if (strncmp(mode, "uring:", 6) == 0 && k >= 1)
		uring(fd, v, n, k);
	else {
		fprintf(stderr, "fastrm-uring: unknown mode %s\n", mode);
		return 2;
	}
	close(fd);
	if (rmdir(argv[2]) < 0)
		die(argv[2], errno);
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return 0;
}
