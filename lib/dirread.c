/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "dirread.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dirread_init(struct dirread *r)
{
	r->size = DIRREAD_BUFSIZE;
	r->pos = r->len = 0;
	r->buf = malloc(r->size);
	return r->buf ? 0 : -ENOMEM;
}

void dirread_fini(struct dirread *r)
{
	free(r->buf);
	r->buf = NULL;
}

long dirread_load(struct dirread *r, int fd, size_t *names)
{
	ssize_t n;
	r->resume = lseek(fd, 0, SEEK_CUR);
	do
		n = getdents64(fd, r->buf, r->size);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	r->pos = 0;
	r->len = (size_t)n;
	long count = 0;
	for (size_t off = 0; off < (size_t)n;) {
		const struct dirent64 *de = (const struct dirent64 *)(r->buf + off);
		*names += strlen(de->d_name) + 1;
		off += de->d_reclen;
		count++;
	}
	return count;
}

long dirread_pass(struct dirread *r, fastrm_emit_fn fn, void *ctx)
{
	long passed = 0;
	while (r->pos < r->len) {
		const struct dirent64 *de =
			(const struct dirent64 *)(r->buf + r->pos);
		struct fastrm_dirent d = {
			.ino = de->d_ino,
			.name = de->d_name,
			.namelen = strlen(de->d_name),
			.type = de->d_type,
		};
		int rc = fn(ctx, &d);
		if (rc < 0)
			return rc;
		r->pos += de->d_reclen;
		r->resume = de->d_off; /* where the next entry starts */
		passed++;
	}
	return passed;
}

void dirread_drop(struct dirread *r)
{
	r->pos = r->len = 0;
}

int dirread_unload(struct dirread *r, int fd)
{
	if (r->pos == r->len)
		return 0;
	off_t to = r->resume;
	dirread_drop(r);
	if (to < 0 || lseek(fd, to, SEEK_SET) < 0)
		return -EIO;
	return 0;
}

long dirread_fill(struct dirread *r, int fd, size_t want, fastrm_emit_fn fn,
                  void *ctx, bool *eof)
{
	size_t passed = 0;

	*eof = false;
	/* Entries loaded by an earlier dirread_load() go first. */
	if (r->pos < r->len) {
		long k = dirread_pass(r, fn, ctx);
		if (k < 0)
			return k;
		passed += (size_t)k;
	}
	while (passed < want) {
		size_t names = 0;
		long n = dirread_load(r, fd, &names);
		if (n < 0)
			return n;
		if (n == 0) {
			*eof = true;
			break;
		}
		long k = dirread_pass(r, fn, ctx);
		if (k < 0)
			return k;
		passed += (size_t)k;
	}
	return (long)passed;
}
