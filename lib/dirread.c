/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "dirread.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dirread_init(struct dirread *r)
{
	r->size = DIRREAD_BUFSIZE;
	r->buf = malloc(r->size);
	return r->buf ? 0 : -ENOMEM;
}

void dirread_fini(struct dirread *r)
{
	free(r->buf);
	r->buf = NULL;
}

long dirread_fill(struct dirread *r, int fd, size_t want, dent_fn fn,
                  void *ctx, bool *eof)
{
	size_t passed = 0;

	*eof = false;
	while (passed < want) {
		ssize_t n = getdents64(fd, r->buf, r->size);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			*eof = true;
			break;
		}
		for (size_t off = 0; off < (size_t)n;) {
			const struct dirent64 *de =
				(const struct dirent64 *)(r->buf + off);
			struct dent d = {
				.ino = de->d_ino,
				.name = de->d_name,
				.namelen = strlen(de->d_name),
				.type = de->d_type,
			};
			int rc = fn(ctx, &d);
			if (rc < 0)
				return rc;
			off += de->d_reclen;
			passed++;
		}
	}
	return (long)passed;
}
