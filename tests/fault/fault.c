/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fault injection by interposition (LD_PRELOAD): makes one system call
 * fail with a chosen errno when its path, or the path of its fd, contains
 * a chosen string.
 *
 *   FASTRM_FAULT=CALL:ERRNO:MATCH[:COUNT[:race]]
 *     CALL   openat, unlinkat, fstat, fstatat, getdents64, lseek, close,
 *            fstatfs
 *     ERRNO  a name: EIO, EACCES, ENOENT...
 *     MATCH  a substring of the path (or "*": any)
 *     COUNT  how many matching calls fail (default 1; 0: all of them)
 *     race   unlinkat only: really remove, then report the error (the
 *            entry vanished between readdir and unlink)
 *
 * Built with _FILE_OFFSET_BITS=64, as the library is: glibc's headers then
 * give openat, fstatat and fstat their *64 symbol names, which are the
 * ones the library calls.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static struct {
	int loaded;
	char call[32];
	int err;
	char match[256];
	long count, used;
	int race;
} F;

static const struct { const char *name; int value; } errnos[] = {
	{ "ENOMEM", ENOMEM }, { "EMFILE", EMFILE }, { "ENFILE", ENFILE },
	{ "EACCES", EACCES }, { "EPERM", EPERM }, { "EROFS", EROFS },
	{ "EBUSY", EBUSY }, { "ENOTEMPTY", ENOTEMPTY }, { "EINTR", EINTR },
	{ "EIO", EIO }, { "ENOENT", ENOENT }, { "ELOOP", ELOOP },
};

static void load(void)
{
	if (F.loaded)
		return;
	F.loaded = 1;
	const char *spec = getenv("FASTRM_FAULT");
	if (!spec)
		return;
	char buf[512], *save, *tok[5] = { 0 };
	snprintf(buf, sizeof buf, "%s", spec);
	int n = 0;
	for (char *t = strtok_r(buf, ":", &save); t && n < 5;
	     t = strtok_r(NULL, ":", &save))
		tok[n++] = t;
	if (n < 3)
		return;
	snprintf(F.call, sizeof F.call, "%s", tok[0]);
	for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
		if (strcmp(errnos[i].name, tok[1]) == 0)
			F.err = errnos[i].value;
	snprintf(F.match, sizeof F.match, "%s", tok[2]);
	F.count = n > 3 ? atol(tok[3]) : 1;
	F.race = n > 4 && strcmp(tok[4], "race") == 0;
}

static int hit(const char *call, const char *path)
{
	load();
	if (!F.err || strcmp(call, F.call) != 0 || !path)
		return 0;
	if (strcmp(F.match, "*") != 0 && !strstr(path, F.match))
		return 0;
	/* frm --jobs makes its unlinks from several threads */
	long used = __atomic_load_n(&F.used, __ATOMIC_RELAXED);
	do {
		if (F.count && used >= F.count)
			return 0;
	} while (!__atomic_compare_exchange_n(&F.used, &used, used + 1, 0,
	                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 1;
}

static const char *fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, len - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	REAL(openat);
	if (hit("openat", path)) {
		errno = F.err;
		return -1;
	}
	return real_openat(dirfd, path, flags, mode);
}


int unlinkat(int dirfd, const char *path, int flags)
{
	REAL(unlinkat);
	if (hit("unlinkat", path)) {
		if (F.race)
			real_unlinkat(dirfd, path, flags);
		errno = F.err;
		return -1;
	}
	return real_unlinkat(dirfd, path, flags);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	REAL(fstatat);
	if (hit("fstatat", path)) {
		errno = F.err;
		return -1;
	}
	return real_fstatat(dirfd, path, st, flags);
}


int fstat(int fd, struct stat *st)
{
	char buf[4096];
	REAL(fstat);
	load();
	if (F.err && hit("fstat", fd_path(fd, buf, sizeof buf))) {
		errno = F.err;
		return -1;
	}
	return real_fstat(fd, st);
}


ssize_t getdents64(int fd, void *dirp, size_t count)
{
	char buf[4096];
	REAL(getdents64);
	load();
	if (F.err && hit("getdents64", fd_path(fd, buf, sizeof buf))) {
		errno = F.err;
		return -1;
	}
	return real_getdents64(fd, dirp, count);
}

off_t lseek(int fd, off_t off, int whence)
{
	char buf[4096];
	REAL(lseek);
	load();
	if (F.err && hit("lseek", fd_path(fd, buf, sizeof buf))) {
		errno = F.err;
		return -1;
	}
	return real_lseek(fd, off, whence);
}

/* The fd is released all the same, as Linux's close() does on error. */
int close(int fd)
{
	char buf[4096];
	REAL(close);
	load();
	if (F.err && hit("close", fd_path(fd, buf, sizeof buf))) {
		real_close(fd);
		errno = F.err;
		return -1;
	}
	return real_close(fd);
}

int fstatfs(int fd, struct statfs *sb)
{
	char buf[4096];
	REAL(fstatfs);
	load();
	if (F.err && hit("fstatfs", fd_path(fd, buf, sizeof buf))) {
		errno = F.err;
		return -1;
	}
	return real_fstatfs(fd, sb);
}
