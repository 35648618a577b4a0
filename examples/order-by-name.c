/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A user-defined ordering policy: each window of up to 1,000 entries is
 * handed out sorted by name.  It shows the whole contract:
 *   - next() reads the directory through fastrm_order_read(), keeps what
 *     it needs in *state, and passes entries on through @fn;
 *   - every entry must be passed exactly once; return 0 when none is left;
 *   - release() frees the state; fastrm_order_account() reports memory.
 *
 * usage: order-by-name DIR   (prints the walk, one path per line)
 */
#include <fastrm/fts.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 1000

struct byname {
	struct fastrm_dirent e[WINDOW + 4096]; /* a read may bring a buffer more */
	char *names[WINDOW + 4096];
	size_t n, pos;
};

static int keep(void *ctx, const struct fastrm_dirent *d)
{
	struct byname *s = ctx;
	if (s->n == sizeof s->e / sizeof s->e[0])
		return -ENOMEM;
	s->names[s->n] = strndup(d->name, d->namelen);
	if (!s->names[s->n])
		return -ENOMEM;
	s->e[s->n] = *d;
	s->e[s->n].name = s->names[s->n];
	s->n++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct fastrm_dirent *x = a, *y = b;
	return strcmp(x->name, y->name);
}

static void clear(struct byname *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	s->n = s->pos = 0;
}

static long byname_next(void **state, struct fastrm_order_source *src,
                        size_t max, fastrm_emit_fn fn, void *ctx)
{
	struct byname *s = *state;
	if (!s && !(s = *state = calloc(1, sizeof *s)))
		return -ENOMEM;
	if (s->pos == s->n) {
		clear(s);
		long r = fastrm_order_read(src, WINDOW, keep, s);
		if (r <= 0)
			return r; /* 0: every entry passed; < 0: an error */
		qsort(s->e, s->n, sizeof s->e[0], by_name);
		fastrm_order_account(src, sizeof *s);
	}
	size_t k = 0;
	while (s->pos < s->n && k < max) {
		int rc = fn(ctx, &s->e[s->pos]);
		if (rc < 0)
			return rc;
		s->pos++;
		k++;
	}
	return (long)k;
}

static void byname_release(void *state)
{
	if (state)
		clear(state);
	free(state);
}

static const struct fastrm_order order_by_name = {
	.name = "by-name",
	.next = byname_next,
	.release = byname_release,
	.description = "names in byte order, in windows of 1,000 entries",
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	char *roots[] = { argv[1], NULL };
	FTS *fts = fastrm_fts_open(roots, FTS_PHYSICAL | FTS_NOSTAT | FTS_CWDFD, NULL);
	if (!fts) {
		perror("fastrm_fts_open"); /* an fts call: errno */
		return 1;
	}
	int err = fastrm_fts_set_order(fts, &order_by_name);
	if (err < 0) {
		/* every other fastrm_* call: a negative errno value */
		fprintf(stderr, "fastrm_fts_set_order: %s\n", strerror(-err));
		fastrm_fts_close(fts);
		return 1;
	}
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL)
		if (e->fts_info != FTS_DP)
			printf("%s\n", e->fts_path);
	int rc = errno ? 1 : 0;
	fastrm_fts_close(fts);
	return rc;
}
