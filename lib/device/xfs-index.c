/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* XFS: reading a directory's hash index ahead, through lookups
 * (strategies.h; the advisor, device.c, calls it for a sorted pass).
 *
 * Why: a large XFS directory (node form) finds a name through a btree of
 * leaf blocks ordered by the name's hash.  getdents64 reads only the data
 * blocks, so when the entries are then removed in inode order, each leaf
 * block is read the first time a name hashing into it is removed: one
 * read at a random place in the middle of the forward run of inode-cluster
 * reads, and a seek there and back.  On the harness's one-head disk that
 * was ~590 of GNU rm's and frm's ~2,200 seeks at 200,000 entries
 * (doc/archive/benchmarks-0.5.md, "XFS: the directory's hash index").  XFS keeps its
 * metadata in a cache of its own, so the device cannot be read ahead as on
 * ext4 (ext4-blocks.c); the only way to get a leaf block read is a lookup
 * that needs it.
 *
 * How: the names about to be removed are hashed with the directory hash
 * of XFS's on-disk format.  Every PROBE_EVERY-th hash in sorted order is a
 * probe: a made-up name (".frm-ix-" and 8 bytes solved for) whose hash
 * lies just above it and that matches no entry, looked up with fstatat()
 * from PROBE_THREADS threads at once.  Each lookup walks the index to the
 * leaf block of that hash, finds nothing and reads no inode; the disk
 * serves the leaf reads in its own order, all before the first unlink.  A
 * lookup creates nothing (a negative dentry, which the kernel reclaims).
 *
 * Where the guess is wrong (a file system made with ASCII case folding
 * hashes lower-cased names), the lookups only miss: nothing else changes. */
#define _GNU_SOURCE
#include "strategies.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint32_t rol32(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32u - n));
}

/* Four bytes' worth of the hash. */
static uint32_t mix4(const unsigned char *b)
{
	return ((uint32_t)b[0] << 21) ^ ((uint32_t)b[1] << 14) ^
	       ((uint32_t)b[2] << 7) ^ (uint32_t)b[3];
}

uint32_t xfs_dir_hash(const char *name, size_t len)
{
	const unsigned char *p = (const unsigned char *)name;
	uint32_t h = 0;
	for (; len >= 4; len -= 4, p += 4)
		h = mix4(p) ^ rol32(h, 28);
	/* the last one to three bytes, each 7 bits apart */
	uint32_t tail = 0;
	for (size_t i = 0; i < len; i++)
		tail = (tail << 7) ^ p[i];
	return len ? tail ^ rol32(h, 7u * (unsigned)len) : h;
}

#define PROBE_PREFIX ".frm-ix-"

static bool name_byte(unsigned c)
{
	return c != 0 && c != '/';
}

/* A name of PROBE_LEN bytes whose hash is @target: the prefix, four
 * printable bytes tried until the hash left over can be written as four
 * more (the last four give 29 bits; the three above come from the four
 * before).  Returns false if none was found in a bounded number of tries
 * (never seen; the probe is skipped). */
bool xfs_probe_name(uint32_t target, char out[XFS_PROBE_LEN + 1])
{
	memcpy(out, PROBE_PREFIX, 8);
	uint32_t h0 = xfs_dir_hash(out, 8);
	uint64_t seed = 0x9e3779b97f4a7c15u ^ target;
	for (int tries = 0; tries < 4096; tries++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		unsigned char c[4], d[4];
		for (int i = 0; i < 4; i++)
			c[i] = (unsigned char)(0x21 + (seed >> (8 * i)) % 0x5e);
		if (!name_byte(c[0]) || !name_byte(c[1]) || !name_byte(c[2]) ||
		    !name_byte(c[3]))
			continue;
		uint32_t r = rol32(mix4(c) ^ rol32(h0, 28), 28);
		uint32_t x = target ^ r;
		if (x >> 29)
			continue;
		d[0] = (unsigned char)(x >> 21);
		d[1] = (unsigned char)((x >> 14) & 0x7f);
		d[2] = (unsigned char)((x >> 7) & 0x7f);
		d[3] = (unsigned char)(x & 0x7f);
		if (!name_byte(d[0]) || !name_byte(d[1]) || !name_byte(d[2]) ||
		    !name_byte(d[3]))
			continue;
		memcpy(out + 8, c, 4);
		memcpy(out + 12, d, 4);
		out[XFS_PROBE_LEN] = '\0';
		return true;
	}
	return false;
}

static int hash_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

struct probes {
	int fd;
	char (*name)[XFS_PROBE_LEN + 1];
	size_t n;
	size_t next;   /* atomic */
	size_t looked; /* atomic: lookups made */
};

static void *prober(void *arg)
{
	struct probes *p = arg;
	size_t i;
	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n) {
		struct stat st;
		/* ENOENT expected; any answer will do */
		(void)fstatat(p->fd, p->name[i], &st, AT_SYMLINK_NOFOLLOW);
		__atomic_fetch_add(&p->looked, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

long dir_index_readahead(int fd, const struct stat *st, size_t n,
                         const char *(*name_at)(void *, size_t, size_t *),
                         void *ctx)
{
	if (!st || !S_ISDIR(st->st_mode) || n < PROBE_EVERY * 2)
		return 0;
	/* The index's blocks: what the directory holds beyond its data
	 * (st_size is the data's extent; st_blocks counts all of it).  A
	 * directory with a few of them reads them quickly anyway. */
	long long extra = (long long)st->st_blocks * 512 - (long long)st->st_size;
	if (extra < INDEX_MIN)
		return 0;
	int saved = errno;
	long looked = 0;
	uint32_t *h = NULL;
	struct probes p = { .fd = fd };
	h = malloc(n * sizeof *h);
	p.name = malloc((n / PROBE_EVERY + 1) * sizeof *p.name);
	if (!h || !p.name)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const char *s = name_at(ctx, i, &len);
		h[i] = xfs_dir_hash(s, len);
	}
	qsort(h, n, sizeof *h, hash_cmp);
	for (size_t i = 0; i < n; i += PROBE_EVERY) {
		/* just above the i-th hash: in the leaf that holds it or
		 * the next one (an entry of that hash is compared by name
		 * in a data block that getdents64 has just read) */
		if (xfs_probe_name(h[i] + 1u, p.name[p.n]))
			p.n++;
	}
	/* PROBE_THREADS lookups at once: this thread and the helpers */
	pthread_t tid[PROBE_THREADS - 1];
	size_t started = 0;
	while (started < PROBE_THREADS - 1 &&
	       pthread_create(&tid[started], NULL, prober, &p) == 0)
		started++;
	prober(&p); /* this thread too (all of it, if none started) */
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	looked = (long)p.looked;
out:
	free(h);
	free(p.name);
	errno = saved;
	return looked;
}
