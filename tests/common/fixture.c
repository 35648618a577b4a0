/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "fixture.h"

#include <dirent.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_DIRS 16
static char *made[MAX_DIRS];

char *fx_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char buf[PATH_MAX];
	struct statfs fs;
	/* Default to a tmpfs: directory operations there cost a fraction of
	 * what they cost on a journalled disk, and nothing reaches the disk.
	 * Only one with room for the largest test (a million entries; tests
	 * run side by side): a container's /dev/shm is often 64 MiB. */
	if (!base || !*base)
		base = statfs("/dev/shm", &fs) == 0 && fs.f_type == 0x01021994 &&
		                       (unsigned long long)fs.f_bavail * fs.f_bsize >=
		                               FX_ROOM_BYTES &&
		                       (unsigned long long)fs.f_ffree >= FX_ROOM_INODES &&
		                       access("/dev/shm", W_OK) == 0
		               ? "/dev/shm"
		               : "/tmp";
	snprintf(buf, sizeof buf, "%s/fastrm-test.XXXXXX", base);
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		abort();
	}
	char *abs = realpath(buf, NULL);
	if (!abs)
		abort();
	for (int i = 0; i < MAX_DIRS; i++) {
		if (!made[i]) {
			made[i] = abs;
			return abs;
		}
	}
	abort();
}

int fx_run(char *const argv[])
{
	pid_t pid;
	int st;
	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void fx_cleanup(char *dir)
{
	int i;
	for (i = 0; i < MAX_DIRS && made[i] != dir; i++)
		;
	if (i == MAX_DIRS || !strstr(dir, "/fastrm-test.")) {
		fprintf(stderr, "fx_cleanup: refusing %s\n", dir);
		abort();
	}
	/* Unreadable directories made by a test must be opened up first. */
	char *chmod_argv[] = { "chmod", "-R", "u+rwx", "--", dir, NULL };
	char *rm_argv[] = { "rm", "-rf", "--", dir, NULL };
	fx_run(chmod_argv);
	fx_run(rm_argv);
	made[i] = NULL;
	free(dir);
}

int fx_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the fd of the DIR itself */
}

void fx_write_file(int dirfd, const char *path, const char *data)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	                0644);
	if (fd < 0) {
		perror(path);
		abort();
	}
	size_t len = strlen(data);
	if (write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

void fx_make_chain(int dirfd, const char *name, long depth, long file_every)
{
	if (mkdirat(dirfd, name, 0755) < 0)
		abort();
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (long i = 0; i < depth; i++) {
		if (mkdirat(fd, "d", 0755) < 0)
			abort();
		if (file_every && i % file_every == 0)
			fx_write_file(fd, "f", "");
		int n = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (n < 0)
			abort();
		close(fd);
		fd = n;
	}
	close(fd);
}

void fx_make_flat(int dirfd, const char *name, long n)
{
	if (mkdirat(dirfd, name, 0755) < 0)
		abort();
	int w = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (long i = 0; i < n; i++) {
		char f[32];
		snprintf(f, sizeof f, "file-%ld", i);
		int fd = openat(w, f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			abort();
		close(fd);
	}
	close(w);
}

long fx_device_reads(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		abort();
	char p[96];
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u/stat", major(st.st_dev),
	         minor(st.st_dev));
	FILE *f = fopen(p, "re");
	if (!f)
		abort();
	long reads = -1;
	int n = fscanf(f, "%ld", &reads);
	fclose(f);
	if (n != 1)
		abort();
	return reads;
}

int fx_unmount(const char *mnt)
{
	char *umount_argv[] = { "umount", (char *)mnt, NULL };
	char *lazy_argv[] = { "umount", "-l", (char *)mnt, NULL };
	return fx_run(umount_argv) == 0 || fx_run(lazy_argv) == 0 ? 0 : -1;
}

int fx_loop_remount(const char *img, const char *mnt)
{
	char *umount_argv[] = { "umount", (char *)mnt, NULL };
	char *mount_argv[] = { "mount", "-o", "loop", (char *)img, (char *)mnt, NULL };
	return fx_run(umount_argv) == 0 && fx_run(mount_argv) == 0 ? 0 : -1;
}

int fx_make_image(const char *img, long long bytes, const char *mnt)
{
	int fd = open(img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = ftruncate(fd, (off_t)bytes);
	close(fd);
	return rc == 0 && mkdir(mnt, 0700) == 0 ? 0 : -1;
}
