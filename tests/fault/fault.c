/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fault injection by interposition (LD_PRELOAD): makes one system call
 * fail with a chosen errno when its path, or the path of its fd, contains
 * a chosen string.
 *
 *   FASTRM_FAULT=CALL:ERRNO:MATCH[:COUNT[:race]][;SECOND FAULT]
 *     CALL   openat, unlinkat, fstat, fstatat, getdents64, lseek, close,
 *            fstatfs
 *     ERRNO  a name: EIO, EACCES, ENOENT...
 *     MATCH  a substring of the path (or "*": any)
 *     COUNT  how many matching calls fail (default 1; 0: all of them)
 *     race   unlinkat only: really remove, then report the error (the
 *            entry vanished between readdir and unlink)
 *
 *   FASTRM_FAULT=unlinkat:DELAY:MATCH:COUNT:USEC
 *     no error: each matching unlinkat (COUNT of them, 0: all) first
 *     sleeps USEC microseconds, then is made (a slow device)
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

/* Up to two faults, separated by ';' in FASTRM_FAULT (for example a
 * DELAY on every unlink and an error on one). */
#define MAX_FAULTS 2
struct fault {
	char call[32];
	int err;
	char match[256];
	long count, used;
	int race;
	long delay_us; /* DELAY: sleep, then make the call */
};
static struct fault faults[MAX_FAULTS];
static int nfaults, loaded;

static const struct { const char *name; int value; } errnos[] = {
	{ "ENOMEM", ENOMEM }, { "EMFILE", EMFILE }, { "ENFILE", ENFILE },
	{ "EACCES", EACCES }, { "EPERM", EPERM }, { "EROFS", EROFS },
	{ "EBUSY", EBUSY }, { "ENOTEMPTY", ENOTEMPTY }, { "EINTR", EINTR },
	{ "EIO", EIO }, { "ENOENT", ENOENT }, { "ELOOP", ELOOP },
};

static void parse(struct fault *f, char *spec)
{
	char *save, *tok[5] = { 0 };
	int n = 0;
	for (char *t = strtok_r(spec, ":", &save); t && n < 5;
	     t = strtok_r(NULL, ":", &save))
		tok[n++] = t;
	if (n < 3)
		return;
	snprintf(f->call, sizeof f->call, "%s", tok[0]);
	for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
		if (strcmp(errnos[i].name, tok[1]) == 0)
			f->err = errnos[i].value;
	snprintf(f->match, sizeof f->match, "%s", tok[2]);
	f->count = n > 3 ? atol(tok[3]) : 1;
	f->race = n > 4 && strcmp(tok[4], "race") == 0;
	if (strcmp(tok[1], "DELAY") == 0) {
		f->err = -1;
		f->delay_us = n > 4 ? atol(tok[4]) : 100000;
	}
}

/* Whether any fault is set (read from the environment the first time). */
static int active(void)
{
	if (!loaded) {
		loaded = 1;
		const char *spec = getenv("FASTRM_FAULT");
		char buf[1024], *save;
		snprintf(buf, sizeof buf, "%s", spec ? spec : "");
		for (char *one = strtok_r(buf, ";", &save); one && nfaults < MAX_FAULTS;
		     one = strtok_r(NULL, ";", &save))
			parse(&faults[nfaults++], one);
	}
	return nfaults > 0;
}

/* The fault that @call on @path meets, if any (each counts its uses). */
static struct fault *hit(const char *call, const char *path)
{
	if (!active() || !path)
		return NULL;
	for (int i = 0; i < nfaults; i++) {
		struct fault *f = &faults[i];
		if (!f->err || strcmp(call, f->call) != 0)
			continue;
		if (strcmp(f->match, "*") != 0 && !strstr(path, f->match))
			continue;
		/* frm --jobs makes its unlinks from several threads */
		long used = __atomic_load_n(&f->used, __ATOMIC_RELAXED);
		do {
			if (f->count && used >= f->count)
				goto next;
		} while (!__atomic_compare_exchange_n(&f->used, &used, used + 1, 0,
		                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
		return f;
next:;
	}
	return NULL;
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
	struct fault *f = hit("openat", path);
	if (f) {
		errno = f->err;
		return -1;
	}
	return real_openat(dirfd, path, flags, mode);
}


int unlinkat(int dirfd, const char *path, int flags)
{
	REAL(unlinkat);
	struct fault *f = hit("unlinkat", path);
	if (f) {
		if (f->delay_us) {
			usleep((useconds_t)f->delay_us);
			return real_unlinkat(dirfd, path, flags);
		}
		if (f->race)
			real_unlinkat(dirfd, path, flags);
		errno = f->err;
		return -1;
	}
	return real_unlinkat(dirfd, path, flags);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	REAL(fstatat);
	struct fault *f = hit("fstatat", path);
	if (f) {
		errno = f->err;
		return -1;
	}
	return real_fstatat(dirfd, path, st, flags);
}


int fstat(int fd, struct stat *st)
{
	char buf[4096];
	REAL(fstat);
	struct fault *f = active() ? hit("fstat", fd_path(fd, buf, sizeof buf)) : NULL;
	if (f) {
		errno = f->err;
		return -1;
	}
	return real_fstat(fd, st);
}


ssize_t getdents64(int fd, void *dirp, size_t count)
{
	char buf[4096];
	REAL(getdents64);
	struct fault *f = active() ? hit("getdents64", fd_path(fd, buf, sizeof buf)) : NULL;
	if (f) {
		errno = f->err;
		return -1;
	}
	return real_getdents64(fd, dirp, count);
}

off_t lseek(int fd, off_t off, int whence)
{
	char buf[4096];
	REAL(lseek);
	struct fault *f = active() ? hit("lseek", fd_path(fd, buf, sizeof buf)) : NULL;
	if (f) {
		errno = f->err;
		return -1;
	}
	return real_lseek(fd, off, whence);
}

/* The fd is released all the same, as Linux's close() does on error. */
int close(int fd)
{
	char buf[4096];
	REAL(close);
	struct fault *f = active() ? hit("close", fd_path(fd, buf, sizeof buf)) : NULL;
	if (f) {
		real_close(fd);
		errno = f->err;
		return -1;
	}
	return real_close(fd);
}

int fstatfs(int fd, struct statfs *sb)
{
	char buf[4096];
	REAL(fstatfs);
	struct fault *f = active() ? hit("fstatfs", fd_path(fd, buf, sizeof buf)) : NULL;
	if (f) {
		errno = f->err;
		return -1;
	}
	return real_fstatfs(fd, sb);
}
