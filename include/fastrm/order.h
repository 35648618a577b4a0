/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfastrm's ordering policies: the order in which each directory's
 * entries are visited by the traversal (<fastrm/fts.h>) when no comparator
 * is given.  Everything a policy's author needs is here: what a policy
 * sees (a source: the directory, read through fastrm_order_read()), what
 * it must hand out (every entry exactly once, through the function it is
 * given), the memory budget it shares with the directories above it and
 * how it reports what it holds; and the built-in policies, by name and as
 * a list.  A complete example is order-by-name.c, installed in
 * share/doc/libfastrm/examples/ (fastrm_order(3)).
 *
 * Errors: calls that can fail return a negative errno value (0 or a count
 * on success) and leave errno alone; a policy's next() and emit functions
 * follow the same rule.
 *
 * Threads: a source belongs to the stream reading the directory, and its
 * calls are made from that stream's thread only.  The built-in policies
 * keep all their state in *state, so one policy may serve any number of
 * streams at once.  No call may be made from a signal handler.
 */
#ifndef FASTRM_ORDER_H
#define FASTRM_ORDER_H

#include <stddef.h>
#include <sys/stat.h>

#include <fastrm/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One directory entry as read from the kernel; @name is valid only during
 *  the call that receives it. */
struct fastrm_dirent {
	unsigned long long ino;
	const char *name;
	size_t namelen;
	unsigned char type; /* DT_* from <dirent.h>, DT_UNKNOWN if unknown */
};

/** Receives entries; returns 0 to go on, a negative errno to stop. */
typedef int (*fastrm_emit_fn)(void *ctx, const struct fastrm_dirent *d);

/** The directory a policy reads (opaque). */
struct fastrm_order_source;

/** Read the directory's next entries, passing each to @fn, until at least
 *  @want were passed or the directory ends (whole kernel buffers are
 *  passed, so a few more than @want may come).  Returns the number passed,
 *  0 at the end of the directory, or a negative errno. */
long fastrm_order_read(struct fastrm_order_source *src, size_t want,
                       fastrm_emit_fn fn, void *ctx);
/** Start reading the directory again from its first entry.  Returns 0 or a
 *  negative errno. */
int fastrm_order_rewind(struct fastrm_order_source *src);
/** Bytes this policy may hold for this directory (the stream's memory
 *  budget less what other directories on the path hold). */
size_t fastrm_order_budget(const struct fastrm_order_source *src);
/** Report the bytes this policy now holds for this directory (0 when it
 *  frees them), so that nested directories share one budget. */
void fastrm_order_account(struct fastrm_order_source *src, size_t bytes);
/** The directory's fstat() (st_size estimates the number of entries). */
const struct stat *fastrm_order_stat(const struct fastrm_order_source *src);
/** The file descriptor of the directory (for fstatfs and the like; do not
 *  read from it directly or close it). */
int fastrm_order_fd(const struct fastrm_order_source *src);

/** An ordering policy.  @next passes about @max more entries of the
 *  directory to @fn, in the policy's order; *@state is NULL at the first
 *  call for a directory and is kept between calls.  It returns the number
 *  passed, 0 when every entry has been passed, or a negative errno.
 *  @release frees *state (NULL accepted) when the directory is done. */
struct fastrm_order {
	const char *name;
	long (*next)(void **state, struct fastrm_order_source *src, size_t max,
	             fastrm_emit_fn fn, void *ctx);
	void (*release)(void *state);
	const char *description; /* one line for listings, or NULL (0.2) */
	void *reserved[4];       /* zero: room for members of later releases,
	                            where zero will keep today's meaning */
};

/** The @i-th built-in policy (from 0), NULL past the last: to list them
 *  (an option parser, its help and error messages).  Since 0.2. */
const struct fastrm_order *fastrm_order_builtin(size_t i);

/** The built-in policies:
 *  - "directory": the order the directory returns, read in batches;
 *  - "inode": the whole directory sorted by inode number (memory grows
 *    with the directory: 16 bytes plus the name per entry);
 *  - "chunked": windows that fit the memory budget, each sorted by inode;
 *  - "global": a global inode order within the memory budget, by several
 *    passes over the directory, each taking the next inodes that fit;
 *  - "gnulib": gnulib's rule: windows of 100,000 entries, sorted by inode
 *    when they hold 10,000 or more, except on tmpfs, NFS, CIFS and Lustre
 *    (the default of fastrm_fts_open());
 *  - "auto": chooses per directory by file system type, the directory's
 *    size and the memory budget, and, where the device is measured
 *    (fastrm_rmtree(), or a stream opened with FASTRM_FTS_DEVICE), what
 *    its reads were measured to cost (the default of fastrm_rmtree()).
 *  Returns NULL for an unknown name. */
const struct fastrm_order *fastrm_order_by_name(const char *name);

/** Memory the ordering policies of a stream (fastrm_fts_set_memory_budget)
 *  or of a removal (struct fastrm_rmtree_opts, @memory) hold at most by
 *  default. */
#define FASTRM_DEFAULT_BUDGET (8u * 1024 * 1024)

#ifdef __cplusplus
}
#endif

#endif /* FASTRM_ORDER_H */
