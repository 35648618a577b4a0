/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Build benchmark workloads fast and deterministically, and measure runs.
 *   fastrm-mktree DIR flat N [SIZE]   one directory of N files of SIZE bytes
 *   fastrm-mktree DIR tree N          a source-tree shape: directories of
 *                                     30 files, 10 subdirectories each
 *   fastrm-mktree DIR dirs N          N directories of 10 empty files, in
 *                                     groups of 1,000 (DIR/gG/dD/fF)
 *   fastrm-mktree DIR sparse N        4 sparse files of 1 TiB, each with N
 *                                     extents of 4 KiB spread evenly
 *   fastrm-mktree --measure CMD...    run CMD, then print on stderr
 *                                     "measure: MAXRSS_KIB UTIME STIME"; a
 *                                     small launcher, so that the peak RSS
 *                                     is CMD's own, not its parent's */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char data[65536];

static void file(int dfd, const char *name, size_t size)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(name);
		exit(1);
	}
	for (size_t left = size; left > 0;) {
		size_t n = left < sizeof data ? left : sizeof data;
		if (write(fd, data, n) != (ssize_t)n) {
			perror("write");
			exit(1);
		}
		left -= n;
	}
	close(fd);
}

/* Breadth-first: each directory gets 30 files and up to 10 subdirectories
 * until N files exist.  The queue holds paths, not fds: a large tree has
 * more directories than a process may keep open. */
static void tree(int top, long n)
{
	long made = 0, ndirs = 1, next = 0;
	char **q = malloc(sizeof *q * (size_t)(n / 30 + 2));
	q[0] = strdup(".");
	while (made < n && next < ndirs) {
		char *path = q[next++];
		int dfd = openat(top, path, O_RDONLY | O_DIRECTORY);
		if (dfd < 0) {
			perror(path);
			exit(1);
		}
		char name[32];
		for (int i = 0; i < 30 && made < n; i++, made++) {
			snprintf(name, sizeof name, "src%02d.c", i);
			file(dfd, name, 0);
		}
		for (int i = 0; i < 10 && ndirs * 30 < n; i++) {
			snprintf(name, sizeof name, "dir%d", i);
			mkdirat(dfd, name, 0755);
			size_t len = strlen(path) + strlen(name) + 2;
			q[ndirs] = malloc(len);
			snprintf(q[ndirs++], len, "%s/%s", path, name);
		}
		close(dfd);
		free(path);
	}
	for (long i = next; i < ndirs; i++)
		free(q[i]);
	free(q);
}

static void dirs(int top, long n)
{
	char name[32];
	int g = -1;
	for (long i = 0; i < n; i++) {
		if (i % 1000 == 0) {
			if (g >= 0)
				close(g);
			snprintf(name, sizeof name, "g%04ld", i / 1000);
			mkdirat(top, name, 0755);
			g = openat(top, name, O_RDONLY | O_DIRECTORY);
		}
		snprintf(name, sizeof name, "d%03ld", i % 1000);
		mkdirat(g, name, 0755);
		int d = openat(g, name, O_RDONLY | O_DIRECTORY);
		for (int f = 0; f < 10; f++) {
			snprintf(name, sizeof name, "f%d", f);
			file(d, name, 0);
		}
		close(d);
	}
	if (g >= 0)
		close(g);
}

static void sparse(int top, long n)
{
	const off_t size = (off_t)1 << 40, step = n > 0 ? size / n : size;
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof name, "sparse%d", i);
		int fd = openat(top, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, size) < 0) {
			perror(name);
			exit(1);
		}
		for (long e = 0; e < n; e++)
			if (pwrite(fd, data, 4096, (off_t)e * step) != 4096) {
				perror("pwrite");
				exit(1);
			}
		close(fd);
	}
}

static int measure(char **cmd)
{
	pid_t pid = fork();
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0)
		return 127;
	fprintf(stderr, "measure: %ld %.3f %.3f\n", ru.ru_maxrss,
	        (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	        (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--measure") == 0)
		return measure(argv + 2);
	if (argc < 4) {
		fprintf(stderr, "usage: %s DIR flat N [SIZE] | DIR tree N | DIR dirs N | "
		        "DIR sparse N\n", argv[0]);
		return 2;
	}
	mkdir(argv[1], 0755);
	int top = open(argv[1], O_RDONLY | O_DIRECTORY);
	long n = atol(argv[3]);
	memset(data, 'x', sizeof data);
	if (strcmp(argv[2], "flat") == 0) {
		size_t size = argc > 4 ? (size_t)atol(argv[4]) : 0;
		for (long i = 0; i < n; i++) {
			char name[32];
			snprintf(name, sizeof name, "file-%07ld", i);
			file(top, name, size);
		}
	} else if (strcmp(argv[2], "dirs") == 0) {
		dirs(top, n);
	} else if (strcmp(argv[2], "sparse") == 0) {
		sparse(top, n);
	} else {
		tree(top, n);
	}
	close(top);
	return 0;
}
