/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target: the input bytes build a tree (directories, files, symlinks,
 * hard links, fifos, modes, wide directories, deep chains) inside a
 * directory this process made on a tmpfs, next to an "outside" directory;
 * the tree is then removed through libfastrm, as rm -rf does, with an
 * ordering policy and a memory budget the input chooses.  Invariant: the
 * target is gone and "outside" is exactly as it was (names, types, sizes,
 * contents, link targets).  Symlinks and hard links in the tree point into
 * "outside", so following one, or removing through one, shows.
 *
 * Built two ways: with libFuzzer (clang -fsanitize=fuzzer; see
 * tests/fuzz/README.md), and with replay.c, which runs every input of the
 * corpus once as an ordinary test.
 *
 * Input: byte 0 the policy (value % 6) and the remover ((value / 6) % 17:
 * 0 the fts walk of rm -rf below, N fastrm_rmtree() with N workers; bit 7:
 * every directory shared), byte 1 the budget (bit 7: the argument is a
 * symlink to "outside" instead of a directory), then (op, arg) pairs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fastrm/fts.h>
#include <fastrm/rmtree.h>

#include "fastrm-int.h"
#include "fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *base;        /* made by fx_mkdtemp(), removed at exit */
static unsigned long round_no;

static void cleanup(void)
{
	if (base)
		fx_cleanup(base);
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-remove: %s%s%s\n", what, detail ? ": " : "",
	        detail ? detail : "");
	abort();
}

/* ------------------------------------------------------ the outside world */

static void make_outside(int dfd)
{
	if (mkdirat(dfd, "outside", 0755) < 0 || mkdirat(dfd, "outside/dir", 0755) < 0)
		die("mkdir outside", strerror(errno));
	fx_write_file(dfd, "outside/file0", "zero");
	fx_write_file(dfd, "outside/file1", "one one");
	fx_write_file(dfd, "outside/dir/x", "x");
	if (symlinkat("file0", dfd, "outside/link") < 0)
		die("symlink outside", strerror(errno));
}

/* A listing of "outside": path, type, size, content or link target. */
static size_t snapshot(int dfd, const char *dir, char *out, size_t cap, size_t len)
{
	int fd = openat(dfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		die("open outside", strerror(errno));
	static const char *const names[] = { "file0", "file1", "link", "dir", "x" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct stat sb;
		if (fstatat(fd, names[i], &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		char content[64] = "";
		if (S_ISREG(sb.st_mode)) {
			int f = openat(fd, names[i], O_RDONLY | O_NOFOLLOW);
			ssize_t n = f < 0 ? -1 : read(f, content, sizeof content - 1);
			content[n > 0 ? n : 0] = '\0';
			if (f >= 0)
				close(f);
		} else if (S_ISLNK(sb.st_mode)) {
			ssize_t n = readlinkat(fd, names[i], content, sizeof content - 1);
			content[n > 0 ? n : 0] = '\0';
		}
		int k = snprintf(out + len, cap - len, "%s/%s %o %lld %s\n", dir,
		                 names[i], (unsigned)(sb.st_mode & S_IFMT),
		                 (long long)sb.st_size, content);
		if (k < 0 || (size_t)k >= cap - len)
			die("snapshot", "too long");
		len += (size_t)k;
		if (S_ISDIR(sb.st_mode)) {
			char sub[256];
			snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
			len = snapshot(dfd, sub, out, cap, len);
		}
	}
	close(fd);
	return len;
}

/* ------------------------------------------------------- building the tree */

#define MAX_DEPTH 48

struct builder {
	int root;                 /* the round's directory */
	int fd[MAX_DEPTH];        /* the cursor: fd[depth] is the current dir */
	int depth;
	char lastdir[32];         /* last directory made at the cursor */
	const char *outside_abs;
	bool root_user;
};

static void name(char *buf, size_t len, char kind, unsigned arg)
{
	snprintf(buf, len, "%c%02x", kind, arg & 0xff);
}

static void op(struct builder *b, unsigned code, unsigned arg)
{
	int cur = b->fd[b->depth];
	char n[32];

	switch (code % 10) {
	case 0: /* directory */
		name(n, sizeof n, 'd', arg);
		if (mkdirat(cur, n, 0755) == 0 || errno == EEXIST)
			snprintf(b->lastdir, sizeof b->lastdir, "%s", n);
		break;
	case 1: { /* file of arg % 64 bytes */
		name(n, sizeof n, 'f', arg);
		char data[64];
		memset(data, 'a' + (int)(arg % 26), sizeof data);
		data[arg % 64] = '\0';
		int f = openat(cur, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
		if (f >= 0) {
			if (write(f, data, strlen(data)) < 0)
				die("write", strerror(errno));
			close(f);
		}
		break;
	}
	case 2: { /* symlink into outside, up the tree, or nowhere */
		char target[512];
		switch (arg % 6) {
		case 0: snprintf(target, sizeof target, "%s", b->outside_abs); break;
		case 1: snprintf(target, sizeof target, "%s/file0", b->outside_abs); break;
		case 2: snprintf(target, sizeof target, ".."); break;
		case 3: snprintf(target, sizeof target, "../../../outside"); break;
		case 4: snprintf(target, sizeof target, "%s/dir/", b->outside_abs); break;
		default: snprintf(target, sizeof target, "nowhere"); break;
		}
		name(n, sizeof n, 'l', arg);
		if (symlinkat(target, cur, n) < 0) {
			/* the name exists: the input made it already */
		}
		break;
	}
	case 3: /* hard link to a file outside */
		name(n, sizeof n, 'h', arg);
		if (linkat(b->root, arg & 1 ? "outside/file1" : "outside/file0", cur,
		           n, 0) < 0) {
			/* the name exists */
		}
		break;
	case 4: /* enter the last directory made here */
		if (b->lastdir[0] && b->depth + 1 < MAX_DEPTH) {
			int f = openat(cur, b->lastdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (f >= 0) {
				b->fd[++b->depth] = f;
				b->lastdir[0] = '\0';
			}
		}
		break;
	case 5: /* leave */
		if (b->depth > 0) {
			close(b->fd[b->depth--]);
			b->lastdir[0] = '\0';
		}
		break;
	case 6: { /* mode of the last directory made here */
		static const mode_t any[] = { 0, 0500, 0300, 0100, 0755, 01777 };
		static const mode_t owner[] = { 0700, 0711, 0755, 01777 };
		mode_t m = b->root_user ? any[arg % 6] : owner[arg % 4];
		if (b->lastdir[0] && fchmodat(cur, b->lastdir, m, 0) < 0) {
			/* gone already */
		}
		break;
	}
	case 7: /* fifo */
		name(n, sizeof n, 'p', arg);
		mkfifoat(cur, n, 0644);
		break;
	case 8: /* a wide directory: more entries than one batch */
		name(n, sizeof n, 'w', arg);
		if (mkdirat(cur, n, 0755) == 0) {
			int w = openat(cur, n, O_RDONLY | O_DIRECTORY);
			for (unsigned i = 0; w >= 0 && i < 600 + 8 * arg; i++) {
				char f[32];
				snprintf(f, sizeof f, "%u", i);
				int fd = openat(w, f, O_WRONLY | O_CREAT, 0644);
				if (fd >= 0)
					close(fd);
			}
			if (w >= 0)
				close(w);
		}
		break;
	case 9: /* a chain deeper than the fd window, a file at the bottom */
		name(n, sizeof n, 'c', arg);
		if (mkdirat(cur, n, 0755) == 0) {
			int c = openat(cur, n, O_RDONLY | O_DIRECTORY);
			for (unsigned i = 0; c >= 0 && i < 5 + arg % 40; i++) {
				int nc = -1;
				if (mkdirat(c, "c", 0755) == 0)
					nc = openat(c, "c", O_RDONLY | O_DIRECTORY);
				close(c);
				c = nc;
			}
			if (c >= 0) {
				fx_write_file(c, "bottom", "b");
				close(c);
			}
		}
		break;
	}
}

/* ------------------------------------------------------------ removing */

/* rm -rf's use of fts: returns the number of failures. */
static int remove_tree(const char *path, const struct fastrm_order *order,
                       size_t budget)
{
	char *argv[] = { (char *)path, NULL };
	FTS *fts = fastrm_fts_open(argv, FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, NULL);
	if (!fts)
		die("fts_open", strerror(errno));
	if (order)
		fastrm_fts_set_order(fts, order);
	if (budget)
		fastrm_fts_set_memory_budget(fts, budget);
	int failures = 0;
	FTSENT *e;
	while ((e = fastrm_fts_read(fts)) != NULL) {
		switch (e->fts_info) {
		case FTS_D:
			break;
		case FTS_DP:
			if (unlinkat(fts->fts_cwd_fd, e->fts_accpath, AT_REMOVEDIR) < 0) {
				fprintf(stderr, "rmdir %s: %s\n", e->fts_path, strerror(errno));
				failures++;
			}
			break;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
		case FTS_DC:
			fprintf(stderr, "%s: info %d: %s\n", e->fts_path, e->fts_info,
			        strerror(e->fts_errno));
			failures++;
			break;
		default:
			if (unlinkat(fts->fts_cwd_fd, e->fts_accpath, 0) < 0) {
				fprintf(stderr, "unlink %s: %s\n", e->fts_path, strerror(errno));
				failures++;
			}
			break;
		}
	}
	if (errno != 0)
		die("fts_read", strerror(errno));
	fastrm_fts_close(fts);
	return failures;
}

static int on_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	(void)ctx;
	fprintf(stderr, "%s: failure %d: %s\n", e->path, what, strerror(err));
	return 1;
}

/* The same with the worker pool: returns the number of failures. */
static int remove_with_pool(const char *path, const struct fastrm_order *order,
                            size_t budget, unsigned workers, bool share_all)
{
	char *argv[] = { (char *)path, NULL };
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = workers;
	o.order = order;
	o.memory = budget;
	o.flags = share_all ? FASTRM_RMTREE_SHARE_ALL : 0;
	o.failed = on_failed;
	int rc = fastrm_rmtree(argv, &o, NULL);
	if (rc < 0)
		die("fastrm_rmtree", strerror(-rc));
	return rc;
}

/* ------------------------------------------------------------- one input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base) {
		base = fx_mkdtemp();
		atexit(cleanup);
	}
	if (size < 2)
		return 0;

	char top[4096], outside_abs[4200], target[4200];
	snprintf(top, sizeof top, "%s/r%lu", base, round_no++);
	if (mkdir(top, 0755) < 0)
		die("mkdir round", strerror(errno));
	int root = open(top, O_RDONLY | O_DIRECTORY);
	if (root < 0)
		die("open round", strerror(errno));
	snprintf(outside_abs, sizeof outside_abs, "%s/outside", top);
	make_outside(root);
	static char before[8192], after[8192];
	snapshot(root, "outside", before, sizeof before, 0);

	/* the library's list of its policies */
	size_t npolicies = 0;
	while (fastrm_order_builtin(npolicies))
		npolicies++;
	const struct fastrm_order *order = fastrm_order_builtin(data[0] % npolicies);
	size_t budget = (data[1] & 0x7f) % 9 == 0 ? 0 : (size_t)64 << ((data[1] & 0x7f) % 9);
	bool root_is_link = data[1] & 0x80;

	struct builder b = { .root = root, .outside_abs = outside_abs,
	                     .root_user = geteuid() == 0 };
	if (root_is_link) {
		if (symlinkat("outside", root, "target") < 0)
			die("symlink target", strerror(errno));
		b.depth = -1;
	} else {
		if (mkdirat(root, "target", 0755) < 0)
			die("mkdir target", strerror(errno));
		b.fd[0] = openat(root, "target", O_RDONLY | O_DIRECTORY);
		for (size_t i = 2; i + 1 < size && i < 2 + 2 * 256; i += 2)
			op(&b, data[i], data[i + 1]);
	}
	for (int d = b.depth; d >= 0; d--)
		close(b.fd[d]);

	snprintf(target, sizeof target, "%s/target", top);
	unsigned workers = (unsigned)(data[0] / 6) % 17;
	int failures = workers == 0
	                       ? remove_tree(target, order, budget)
	                       : remove_with_pool(target, order, budget, workers,
	                                          data[0] & 0x80);
	struct stat sb;
	if (failures || fstatat(root, "target", &sb, AT_SYMLINK_NOFOLLOW) == 0)
		die("the target is not gone", order->name);
	snapshot(root, "outside", after, sizeof after, 0);
	if (strcmp(before, after) != 0) {
		fprintf(stderr, "before:\n%safter:\n%s", before, after);
		die("outside changed", order->name);
	}
	/* the round's directory: outside, and nothing else is left */
	if (unlinkat(root, "outside/dir/x", 0) < 0 ||
	    unlinkat(root, "outside/dir", AT_REMOVEDIR) < 0 ||
	    unlinkat(root, "outside/file0", 0) < 0 ||
	    unlinkat(root, "outside/file1", 0) < 0 ||
	    unlinkat(root, "outside/link", 0) < 0 ||
	    unlinkat(root, "outside", AT_REMOVEDIR) < 0)
		die("outside has changed shape", strerror(errno));
	close(root);
	if (rmdir(top) < 0)
		die("something besides outside and target was left", strerror(errno));
	return 0;
}
