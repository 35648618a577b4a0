/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* btrfs: the leaves of a subvolume's tree read ahead in the order they
 * lie on the device, in windows, as a walk opens directories and hands
 * out their entries (strategies.h; device.c calls it).
 *
 * Why: btrfs keeps every item of a file (its inode, its name in the
 * directory, its reference to the directory, its inline data) in the
 * leaves of its subvolume's B-tree, by inode number, and caches them in
 * memory of its own.  A removal reads each leaf once, in the order of the
 * keys; a tree made in one go has its leaves in that order on the disk,
 * but one that was written to since (copies removed around it, files
 * changed) has them scattered: GNU rm on the harness's one-head disk, the
 * aged real tree x3 (126,028 entries) as root, read 7,292 leaves with
 * 5,561 seeks (30 s of the disk's 37), where the blocks it read lie in 71
 * stretches of the disk (doc/results.md, "btrfs cold: the leaves in disk
 * order").  The order of removal cannot mend that: the keys decide which
 * leaf comes next.
 *
 * How: the device is read where the walk is.  For an inode number the walk
 * is about to need, the leaf that holds it is found from the tree's
 * internal nodes (read from the block device: the subvolume's root from
 * its ROOT_ITEM, BTRFS_IOC_TREE_SEARCH in the root tree; the metadata
 * chunks' place on the device from the chunk tree), and the aligned
 * window of BTRFS_WINDOW bytes of the chunk around it is read from the
 * device at once.  Each block of the window that is a leaf of this
 * subvolume gives its first key, and a tree search for that key (one
 * item) makes btrfs read the leaf into its cache: one leaf after another,
 * in the order they lie, so that the device reads them as one stretch.
 * What was read from the device ourselves is only a hint: a node or leaf
 * that does not say it is the block asked for (the tree moved on since
 * its last commit) is passed over, and what the removal finds is btrfs's.
 *
 * Bounds: one window at a time per walk or pool (threads that find one
 * being read go on without); BTRFS_NODES internal nodes kept; one window
 * buffer.  After BTRFS_WINDOW_TRIAL windows they stop unless the walk
 * found BTRFS_WINDOW_PAYS leaves or more in windows read before, per
 * window (a tree scattered over a large subvolume).  The tree search
 * needs CAP_SYS_ADMIN and the block device must open (root); one device
 * only; windows stop at the first refusal.  Only where the advisor
 * measured reads that seek. */
#define _GNU_SOURCE
#include "strategies.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The on-disk header of a tree block (fs/btrfs/accessors.h: struct
 * btrfs_header is not in the UAPI headers): checksum, fsid, its own
 * logical address, flags, chunk tree UUID, generation, owner, items,
 * level; little-endian, packed. */
#define HDR_FSID 32
#define HDR_BYTENR 48
#define HDR_GENERATION 80
#define HDR_OWNER 88
#define HDR_NRITEMS 96
#define HDR_LEVEL 100
#define HDR_SIZE 101
/* a leaf's item: key (17 bytes), data offset, size; a node's pointer:
 * key, child's address, generation */
#define ITEM_SIZE 25
#define PTR_SIZE 33

#define MAX_CHUNKS 256

struct chunk {
	uint64_t logical, length, physical;
};

struct node {
	uint64_t bytenr;         /* 0: free slot */
	unsigned char *buf;
};

struct btrfs_leaves {
	pthread_mutex_t lock;
	dev_t dev;               /* the file system the state below is of */
	bool started, off, busy, ready;
	unsigned long windows, hits;
	long leaves;             /* leaves searched, all devices */
	uint64_t last_leaf;      /* the leaf the last call found, which holds
	                            the inodes from span_lo to span_hi (by
	                            the nodes; empty when it cannot tell) */
	uint64_t span_lo, span_hi;
	struct recent_windows recent;
	/* of dev, once ready (this and the windows' state above: used by the
	 * thread holding busy, or under the lock while none does) */
	int devfd;
	uint64_t tree;           /* the subvolume's tree id */
	unsigned char fsid[BTRFS_FSID_SIZE];
	uint32_t nodesize;
	struct chunk chunk[MAX_CHUNKS];
	unsigned nchunks;
	uint64_t root;           /* the tree's root node, at its last commit */
	uint64_t bad;            /* a node that was not what it should be:
	                            not read again before the root is looked
	                            up again */
	unsigned root_level;
	struct node node[BTRFS_NODES];
	unsigned next_node;
	unsigned char *window;   /* BTRFS_WINDOW bytes, aligned */
	struct btrfs_ioctl_search_args *args; /* 4 KiB: not on the stack */
	struct timespec root_at; /* when the root was looked up */
};

static uint64_t le64_at(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32_at(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

struct btrfs_leaves *btrfs_leaves_new(void)
{
	struct btrfs_leaves *b = calloc(1, sizeof *b);
	if (b && pthread_mutex_init(&b->lock, NULL) != 0) {
		free(b);
		return NULL;
	}
	if (b)
		b->devfd = -1;
	return b;
}

static void forget_device(struct btrfs_leaves *b)
{
	if (b->devfd >= 0)
		close(b->devfd);
	b->devfd = -1;
	for (unsigned i = 0; i < BTRFS_NODES; i++)
		b->node[i].bytenr = 0;
	b->ready = false;
	b->nchunks = 0;
	b->root = 0;
}

void btrfs_leaves_free(struct btrfs_leaves *b)
{
	if (!b)
		return;
	forget_device(b);
	for (unsigned i = 0; i < BTRFS_NODES; i++)
		free(b->node[i].buf);
	free(b->window);
	free(b->args);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

long btrfs_leaves_read(struct btrfs_leaves *b)
{
	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	long n = b->leaves;
	pthread_mutex_unlock(&b->lock);
	return n;
}

bool btrfs_leaves_off(struct btrfs_leaves *b, dev_t dev)
{
	if (!b)
		return true;
	pthread_mutex_lock(&b->lock);
	bool off = b->started && b->dev == dev && b->off;
	pthread_mutex_unlock(&b->lock);
	return off;
}

/* One BTRFS_IOC_TREE_SEARCH of tree @tree from key (@obj, @type, @off)
 * up to (@max_obj, @max_type, ~0) for at most @nr items into @args.
 * Returns the items found, or -1 (errno set). */
static long search(int fd, struct btrfs_ioctl_search_args *args, uint64_t tree,
                   uint64_t obj, uint32_t type, uint64_t off, uint64_t max_obj,
                   uint32_t max_type, uint32_t nr)
{
	memset(&args->key, 0, sizeof args->key);
	args->key.tree_id = tree;
	args->key.min_objectid = obj;
	args->key.min_type = type;
	args->key.min_offset = off;
	args->key.max_objectid = max_obj;
	args->key.max_type = max_type;
	args->key.max_offset = UINT64_MAX;
	args->key.max_transid = UINT64_MAX;
	args->key.nr_items = nr;
	if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, args) != 0)
		return -1;
	return args->key.nr_items;
}

/* The items of a search's result, one after another. */
static const unsigned char *next_item(const struct btrfs_ioctl_search_args *args,
                                      size_t *at, struct btrfs_ioctl_search_header *h)
{
	if (*at + sizeof *h > sizeof args->buf)
		return NULL;
	memcpy(h, args->buf + *at, sizeof *h);
	*at += sizeof *h;
	if (*at + h->len > sizeof args->buf)
		return NULL;
	const unsigned char *item = (const unsigned char *)args->buf + *at;
	*at += h->len;
	return item;
}

/* The metadata chunks of a file system on one device, from the chunk
 * tree.  False if there are none or too many. */
static bool read_chunks(struct btrfs_leaves *b, int fd,
                        struct btrfs_ioctl_search_args *args)
{
	uint64_t from = 0;
	for (;;) {
		long n = search(fd, args, BTRFS_CHUNK_TREE_OBJECTID,
		                BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY,
		                from, BTRFS_FIRST_CHUNK_TREE_OBJECTID,
		                BTRFS_CHUNK_ITEM_KEY, 4096);
		if (n <= 0)
			break;
		size_t at = 0;
		struct btrfs_ioctl_search_header h;
		const unsigned char *item;
		for (long i = 0; i < n && (item = next_item(args, &at, &h)); i++) {
			from = h.offset + 1;
			if (h.type != BTRFS_CHUNK_ITEM_KEY ||
			    h.len < sizeof(struct btrfs_chunk))
				continue;
			struct btrfs_chunk c;
			memcpy(&c, item, sizeof c);
			if (!(le64_at((const unsigned char *)&c.type) &
			      BTRFS_BLOCK_GROUP_METADATA))
				continue;
			if (b->nchunks == MAX_CHUNKS)
				return false;
			b->chunk[b->nchunks++] = (struct chunk){
				.logical = h.offset,
				.length = le64_at((const unsigned char *)&c.length),
				.physical = le64_at((const unsigned char *)&c.stripe.offset),
			};
		}
		if (from == 0)
			break;
	}
	return b->nchunks > 0;
}

static const struct chunk *chunk_of(const struct btrfs_leaves *b, uint64_t logical)
{
	for (unsigned i = 0; i < b->nchunks; i++)
		if (logical >= b->chunk[i].logical &&
		    logical - b->chunk[i].logical < b->chunk[i].length)
			return &b->chunk[i];
	return NULL;
}

/* What is needed once per device: the subvolume, the chunks, the device
 * open.  False: not here (refused, several devices, not btrfs). */
static bool set_up(struct btrfs_leaves *b, int fd, dev_t bdev,
                   struct btrfs_ioctl_search_args *args)
{
	struct btrfs_ioctl_fs_info_args fi;
	memset(&fi, 0, sizeof fi);
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &fi) != 0 || fi.num_devices != 1 ||
	    fi.nodesize < 4096 || fi.nodesize > BTRFS_WINDOW ||
	    BTRFS_WINDOW % fi.nodesize != 0)
		return false;
	struct btrfs_ioctl_ino_lookup_args lookup;
	memset(&lookup, 0, sizeof lookup);
	lookup.objectid = BTRFS_FIRST_FREE_OBJECTID; /* treeid 0: fd's own */
	if (ioctl(fd, BTRFS_IOC_INO_LOOKUP, &lookup) != 0 || !lookup.treeid)
		return false;
	b->tree = lookup.treeid;
	memcpy(b->fsid, fi.fsid, sizeof b->fsid);
	b->nodesize = fi.nodesize;
	if (!read_chunks(b, fd, args))
		return false;
	if (!b->window && posix_memalign((void **)&b->window, 4096, BTRFS_WINDOW) != 0) {
		b->window = NULL;
		return false;
	}
	b->devfd = bdev ? device_open_node(bdev, O_DIRECT) : -1;
	return b->devfd >= 0;
}

/* The subvolume's root node at its last commit (its ROOT_ITEM); the nodes
 * kept are dropped when it moved. */
static bool find_root(struct btrfs_leaves *b, int fd,
                      struct btrfs_ioctl_search_args *args)
{
	if (search(fd, args, BTRFS_ROOT_TREE_OBJECTID, b->tree, BTRFS_ROOT_ITEM_KEY,
	           0, b->tree, BTRFS_ROOT_ITEM_KEY, 1) != 1)
		return false;
	size_t at = 0;
	struct btrfs_ioctl_search_header h;
	const unsigned char *item = next_item(args, &at, &h);
	if (!item || h.len < offsetof(struct btrfs_root_item, level) + 1)
		return false;
	uint64_t root = le64_at(item + offsetof(struct btrfs_root_item, bytenr));
	if (root != b->root) {
		for (unsigned i = 0; i < BTRFS_NODES; i++)
			b->node[i].bytenr = 0;
		b->root = root;
		b->span_hi = b->span_lo = 0;
	}
	/* a commit updates the root item before it writes the new nodes: a
	 * node that was not there yet is asked for again */
	b->bad = 0;
	b->root_level = item[offsetof(struct btrfs_root_item, level)];
	clock_gettime(CLOCK_MONOTONIC, &b->root_at);
	return true;
}

/* Whether @blk, read from @logical, is a block of this file system at
 * @level (-1: any) owned by @owner (0: any). */
static bool block_is(const struct btrfs_leaves *b, const unsigned char *blk,
                     uint64_t logical, int level, uint64_t owner)
{
	return le64_at(blk + HDR_BYTENR) == logical &&
	       memcmp(blk + HDR_FSID, b->fsid, sizeof b->fsid) == 0 &&
	       (level < 0 || blk[HDR_LEVEL] == level) &&
	       (!owner || le64_at(blk + HDR_OWNER) == owner) &&
	       le32_at(blk + HDR_NRITEMS) > 0;
}

/* Internal node @logical at @level, from those kept or from the device. */
static const unsigned char *node_at(struct btrfs_leaves *b, uint64_t logical,
                                    unsigned level)
{
	for (unsigned i = 0; i < BTRFS_NODES; i++)
		if (b->node[i].bytenr == logical)
			return b->node[i].buf;
	const struct chunk *c = chunk_of(b, logical);
	if (!c || logical == b->bad)
		return NULL;
	struct node *n = &b->node[b->next_node++ % BTRFS_NODES];
	n->bytenr = 0;
	if (!n->buf && posix_memalign((void **)&n->buf, 4096, b->nodesize) != 0) {
		n->buf = NULL;
		return NULL;
	}
	off_t where = (off_t)(c->physical + (logical - c->logical));
	if (pread(b->devfd, n->buf, b->nodesize, where) != (ssize_t)b->nodesize ||
	    !block_is(b, n->buf, logical, (int)level, 0) ||
	    le32_at(n->buf + HDR_NRITEMS) > (b->nodesize - HDR_SIZE) / PTR_SIZE) {
		b->bad = logical;
		return NULL;
	}
	n->bytenr = logical;
	return n->buf;
}

/* The leaf that holds the items of inode @ino, by the nodes; 0 if not
 * found.  Notes the inodes the same leaf holds (span_lo, span_hi). */
static uint64_t leaf_of(struct btrfs_leaves *b, uint64_t ino)
{
	uint64_t at = b->root;
	for (unsigned level = b->root_level; level > 0; level--) {
		const unsigned char *n = node_at(b, at, level);
		if (!n)
			return 0;
		/* the last pointer whose key is at most (ino, 0, 0) */
		uint32_t lo = 0, hi = le32_at(n + HDR_NRITEMS);
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (le64_at(n + HDR_SIZE + (size_t)mid * PTR_SIZE) <= ino)
				lo = mid;
			else
				hi = mid;
		}
		at = le64_at(n + HDR_SIZE + (size_t)lo * PTR_SIZE + 17);
		if (level == 1) {
			/* up to the next leaf's first inode */
			b->span_lo = b->span_hi =
				le64_at(n + HDR_SIZE + (size_t)lo * PTR_SIZE);
			if (lo + 1 < le32_at(n + HDR_NRITEMS))
				b->span_hi = le64_at(n + HDR_SIZE +
				                     (size_t)(lo + 1) * PTR_SIZE);
		}
	}
	return at;
}

/* Read the window from @from, @len bytes of chunk @c, and have btrfs read
 * each leaf of the subvolume in it, in order.  Returns the leaves searched,
 * or -1 where btrfs refused the search. */
static long read_window(struct btrfs_leaves *b, int fd, const struct chunk *c,
                        uint64_t from, uint64_t len,
                        struct btrfs_ioctl_search_args *args)
{
	off_t where = (off_t)(c->physical + (from - c->logical));
	ssize_t got = pread(b->devfd, b->window, len, where);
	if (got <= 0)
		return 0;
	long n = 0;
	for (uint64_t off = 0; off + b->nodesize <= (uint64_t)got; off += b->nodesize) {
		const unsigned char *blk = b->window + off;
		if (!block_is(b, blk, from + off, 0, b->tree))
			continue;
		const unsigned char *key = blk + HDR_SIZE;
		if (search(fd, args, b->tree, le64_at(key), key[8], le64_at(key + 9),
		           UINT64_MAX, 255, 1) < 0) {
			if (errno == EPERM || errno == EACCES || errno == ENOTTY)
				return n ? n : -1;
			continue;
		}
		n++;
	}
	return n;
}

/* Under the lock: the state is @dev's from now on. */
static void on_device(struct btrfs_leaves *b, dev_t dev)
{
	if (b->started && b->dev == dev)
		return;
	forget_device(b);
	b->dev = dev;
	b->started = true;
	b->off = false;
	b->windows = b->hits = 0;
	b->recent.n = b->recent.next = 0;
	b->last_leaf = b->span_lo = b->span_hi = 0;
}

long btrfs_leaves_at(struct btrfs_leaves *b, int fd, dev_t dev, dev_t bdev,
                     unsigned long long ino, bool seek)
{
	if (!b || !seek)
		return 0;
	int saved = errno;
	pthread_mutex_lock(&b->lock);
	bool mine = !b->busy;
	if (mine) {
		on_device(b, dev);
		mine = !b->off;
	}
	b->busy = mine;
	pthread_mutex_unlock(&b->lock);
	if (!mine)
		return 0;
	if (b->ready && ino >= b->span_lo && ino < b->span_hi) {
		/* the leaf of the last call: its window was read or is a hit
		 * already counted; no look-up, no clock */
		pthread_mutex_lock(&b->lock);
		b->busy = false;
		pthread_mutex_unlock(&b->lock);
		errno = saved;
		return 0;
	}

	long n = 0;
	bool refused = false, read = false, counted = false;
	if (!b->args && !(b->args = calloc(1, sizeof *b->args)))
		refused = true;
	struct btrfs_ioctl_search_args *args = b->args;
	if (!refused && !b->ready)
		refused = !(b->ready = set_up(b, fd, bdev, args));
	/* the root moves at each commit: looked up again at most once per
	 * BTRFS_ROOT_MS, or BTRFS_RETRY_MS after a node was not what it
	 * should be (the nodes of the last commit stay on the device until
	 * the next one; what they say is only a hint) */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long since = (now.tv_sec - b->root_at.tv_sec) * 1000LL +
	                  (now.tv_nsec - b->root_at.tv_nsec) / 1000000;
	bool rooted = !refused;
	if (!refused && (!b->root || since >= BTRFS_ROOT_MS ||
	                 (b->bad && since >= BTRFS_RETRY_MS))) {
		/* errno says whether it was refused or only not found now */
		errno = 0;
		rooted = find_root(b, fd, args);
		refused = !rooted && (errno == EPERM || errno == EACCES ||
		                      errno == ENOTTY);
	}
	uint64_t leaf = rooted && b->root ? leaf_of(b, ino) : 0;
	const struct chunk *c = leaf ? chunk_of(b, leaf) : NULL;
	if (c) {
		uint64_t start = c->logical + (leaf - c->logical) / BTRFS_WINDOW * BTRFS_WINDOW;
		uint64_t len = c->logical + c->length - start;
		if (len > BTRFS_WINDOW)
			len = BTRFS_WINDOW;
		bool hit = recent_holds(&b->recent, start);
		/* a hit counts once per leaf the walk moves to */
		counted = hit && leaf != b->last_leaf;
		b->last_leaf = leaf;
		if (!hit) {
			recent_add(&b->recent, start);
			read = true;
			n = read_window(b, fd, c, start, len, args);
			refused = n < 0;
		}
	}

	pthread_mutex_lock(&b->lock);
	b->busy = false;
	b->windows += read;
	b->hits += counted;
	if (b->dev == dev && (refused || (b->windows >= BTRFS_WINDOW_TRIAL &&
	                                  b->hits < b->windows * BTRFS_WINDOW_PAYS)))
		b->off = true;
	if (n > 0)
		b->leaves += n;
	pthread_mutex_unlock(&b->lock);
	errno = saved;
	return n > 0 ? n : 0;
}
