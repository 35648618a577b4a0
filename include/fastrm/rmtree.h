/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfastrm's tree removal: remove whole trees, several subtrees at once.
 *
 * fastrm_rmtree() removes each path given, recursively, with a pool of
 * worker threads.  Every worker walks one subtree with libfastrm's fts
 * (FTS_CWDFD|FTS_NOSTAT|FTS_PHYSICAL, the flags GNU rm uses): each descent
 * is an openat() with O_NOFOLLOW relative to the parent's fd and checked
 * against the (dev, ino) seen before.  A worker that enters a directory
 * while another worker is idle hands that directory to it, as a subtree of
 * its own (the idle worker opens it again, relative to a copy of the
 * parent's fd, and checks it is the directory that was handed over).  A
 * directory is removed only after every entry in it is gone, whichever
 * worker removed them; if one could not be removed, neither are the
 * directories above it, and no more is said of them.  The paths given are
 * removed concurrently too.
 *
 * Reports reach the caller through callbacks, one call at a time (the
 * library serialises them), from the worker threads.  A directory's
 * "removed" comes after those of every entry it held; the order between
 * different subtrees is not the serial one (with one worker, it is).
 *
 * The contract: when it returns 0, every path given is gone, but what the
 * caller chose to keep (@ask, @root) or to ignore (@failed returning 0).
 * Every entry left is accounted for by exactly one call of @failed (or
 * @ask, @root): its own, or one of an entry below it (the directories
 * above a failure are kept without a call of their own).  A failure that
 * the caller ignores keeps nothing: the directories above it are still
 * removed, or fail (and are reported) themselves.  What changes while it
 * runs (a directory that gets new entries, or is replaced) is read again,
 * a bounded number of times, and reported if it still cannot be removed.
 *
 * Return values: a count (>= 0), or a negative errno value.
 */
#ifndef FASTRM_RMTREE_H
#define FASTRM_RMTREE_H

#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>

#include <fastrm/order.h>   /* struct fastrm_order, FASTRM_DEFAULT_BUDGET */

struct fastrm_manifest;     /* <fastrm/manifest.h> */

#ifdef __cplusplus
extern "C" {
#endif

/** An entry, as a callback sees it (valid during the call only). */
struct fastrm_rmtree_entry {
	const char *path;         /* the path given, then "/name" per level */
	int dirfd;                /* the directory that holds it */
	const char *name;         /* its name in @dirfd (a path given: as given) */
	const struct stat *st;    /* paths given: lstat(); below: the type bits
	                             and dev and ino of directories */
	int level;                /* 0 for a path given */
	int is_dir;
};

/** What failed. */
enum fastrm_rmtree_error {
	FASTRM_RMTREE_EREMOVE = 1, /* unlinkat() or its rmdir failed */
	FASTRM_RMTREE_EWALK,       /* a directory could not be read through */
	FASTRM_RMTREE_ECYCLE,      /* a directory cycle (a corrupt file system) */
	FASTRM_RMTREE_EXDEV,       /* on another file system (FASTRM_RMTREE_XDEV) */
	FASTRM_RMTREE_EREFUSED,    /* since 0.4: a path given that GNU rm refuses
	                              (nothing of it touched): its last
	                              component is "." or ".." (EINVAL), or it
	                              is the root directory (EBUSY) */
};

/** Since 0.7: why an entry was left without a failure (@kept). */
enum fastrm_rmtree_keep {
	FASTRM_RMTREE_KEPT_BELOW = 1, /* a directory: something below it was
	                                 left (a failure, an exclusion, ...) */
	FASTRM_RMTREE_KEPT_EXCLUDED,  /* it matches an exclusion (@exclude):
	                                 what it holds is not read */
	FASTRM_RMTREE_KEPT_DECLINED,  /* @ask answered FASTRM_RMTREE_KEEP */
};

/** What fastrm_rmtree() is about to do, when it calls @ask. */
enum fastrm_rmtree_step {
	FASTRM_RMTREE_ENTER = 1,  /* read directory @e, to remove what it holds */
	FASTRM_RMTREE_REMOVE,     /* remove @e (a directory: now emptied) */
};

/** What @ask answers. */
enum fastrm_rmtree_answer {
	FASTRM_RMTREE_GO = 0,     /* go on */
	FASTRM_RMTREE_KEEP,       /* leave @e (at ENTER: all it holds), and keep
	                             the directories above it; not a failure
	                             (rm -i, answered no) */
	FASTRM_RMTREE_FAIL,       /* the same, counted as a failure (the
	                             callback said why) */
	FASTRM_RMTREE_REMOVE_EMPTY, /* at ENTER: the caller found the directory
	                             empty: remove it now, without reading it
	                             (if it is not empty, that is a failure) */
};
/** Since 0.7: FASTRM_RMTREE_FAIL, and why (a positive errno value), which
 *  the manifest records (an older library takes it as FASTRM_RMTREE_FAIL). */
#define FASTRM_RMTREE_FAIL_WITH(err) (0x100 + (err))

/** Stay on the file system of each path given (rm --one-file-system). */
#define FASTRM_RMTREE_XDEV 0x1
/** @workers is the most (but below): fewer run at once where the device's reads, as
 *  measured, say more would only hurt: one on ext4 and btrfs where reads
 *  seek, the device was seen serving them one at a time, and nothing reads
 *  ahead for the walks (no privilege for it), one per CPU on XFS whose
 *  reads are fast, one on btrfs whose reads are fast, one on XFS while the
 *  walks read nothing (the metadata is cached); and on XFS and btrfs none
 *  starts until the device's reads are judged.  Since 0.9 also more, up
 *  to 32, on XFS whose reads seek where nothing reads ahead for the walks
 *  (no bulkstat: a plain user) (frm --jobs=auto; fastrm_rmtree(3)). */
#define FASTRM_RMTREE_FIT_WORKERS 0x2
/** Since 0.4: remove the root directory too when it is given (by any
 *  path: "/", "/../", a symlink to it with a trailing slash); by default
 *  it is refused, as rm --preserve-root does (rm --no-preserve-root). */
#define FASTRM_RMTREE_NO_PRESERVE_ROOT 0x4
/** Since 0.4: walk a path given whose last component is "." or ".."
 *  (what it holds is removed; the directory itself cannot be: rmdir's
 *  EINVAL or ENOTEMPTY is reported); by default it is refused, as GNU rm
 *  refuses it. */
#define FASTRM_RMTREE_ALLOW_DOTS 0x8
/** Since 0.5.4: @ask may be called by several workers at once, and while
 *  another callback runs: the caller serializes what must be (a prompt,
 *  a message).  Without it, @ask is called one at a time with the other
 *  callbacks, and a prompt that waits holds every worker at its next
 *  callback.  Within a directory, entries are still asked in its walk's
 *  order. */
#define FASTRM_RMTREE_ASK_CONCURRENT 0x10
/** Since 0.7: a dry run.  Everything is decided as in a real run (the
 *  callbacks, @exclude, FASTRM_RMTREE_XDEV, the refusals); directories are
 *  opened and read, and entries stat'ed, as a real run does; nothing is
 *  removed.  Where the real run would remove an entry, @removed is called
 *  (the manifest: "planned"); where its unlinkat() would fail for a reason
 *  the dry run can see (the directory is not writable for this process or
 *  on a read-only file system, the directory or the entry is immutable or
 *  append-only, a sticky directory's entry of another user, a mount
 *  point, a directory that something left in it keeps), @failed is called
 *  with that errno.  What it cannot see (fastrm_rmtree(3), DRY RUN):
 *  entries that change meanwhile, an unlink refused by a security module,
 *  a file system's own errors. */
#define FASTRM_RMTREE_DRY_RUN 0x20

/** What fastrm_rmtree() is to do.  Zero-fill it, then set what is needed;
 *  set @size to sizeof (struct fastrm_rmtree_opts).  (The size of 0.2
 *  to 0.6, which ended at @kept's place, is taken too: the fields after
 *  it are then NULL.) */
struct fastrm_rmtree_opts {
	size_t size;
	/** Worker threads at most (0 or 1: the calling thread alone).  They
	 *  start on demand: none before the removal has run 1 ms and has a
	 *  subtree to hand over (fastrm_rmtree(3), Workers).  Fewer run when
	 *  the limit on open files (RLIMIT_NOFILE) could not hold their fds. */
	unsigned workers;
	/** Ordering policy of every directory (NULL: "auto"). */
	const struct fastrm_order *order;
	/** Memory the ordering policies of all workers may hold together,
	 *  plus at most 256 KiB per worker (0: FASTRM_DEFAULT_BUDGET). */
	size_t memory;
	unsigned flags;           /* FASTRM_RMTREE_XDEV, _FIT_WORKERS */
	void *ctx;                /* passed to every callback */
	/** A path given, about to be entered or removed: 0 to go on, anything
	 *  else to leave it (the callback said why; since 0.7 a positive errno
	 *  value says why to the manifest).  NULL: go on. */
	int (*root)(void *ctx, const struct fastrm_rmtree_entry *e);
	/** An entry was removed.  NULL: nothing is said. */
	void (*removed)(void *ctx, const struct fastrm_rmtree_entry *e);
	/** Something failed with @err.  Return 1 to count it as a failure
	 *  (the directories above are then kept), 0 to ignore it (rm -f and
	 *  ENOENT).  NULL: every failure counts. */
	int (*failed)(void *ctx, const struct fastrm_rmtree_entry *e,
	              enum fastrm_rmtree_error what, int err);
	/** When not NULL, polled between entries: once it is non-zero the
	 *  workers stop after the entry in hand (a signal handler sets it). */
	const volatile sig_atomic_t *stop;
	/** Since 0.3 (it was reserved): asked before each directory is read
	 *  and before each entry is removed (prompts: rm -i); returns an enum
	 *  fastrm_rmtree_answer (any other value: FASTRM_RMTREE_FAIL).  Asked
	 *  once per step and entry, whichever worker meets it.  NULL: go on. */
	int (*ask)(void *ctx, const struct fastrm_rmtree_entry *e,
	           enum fastrm_rmtree_step step);
	/** Since 0.7 (these three were reserved, and NULL): exclusions, a
	 *  NULL-terminated array of shell patterns (fnmatch(3)).  An entry
	 *  that matches one is kept with what it holds, unread, and so are
	 *  the directories above it, without a failure.  A pattern without a
	 *  '/' is matched against the entry's name (a path given's: its last
	 *  component); one with a '/' against the entry's path below the
	 *  path given ("sub/x.c"; a leading '/' is the path given itself;
	 *  '*' and '?' do not match '/').  A pattern ending in '/' matches
	 *  directories only.  NULL: none. */
	const char *const *exclude;
	/** A record of every entry's outcome (<fastrm/manifest.h>): written
	 *  by the library as it goes.  NULL: none. */
	struct fastrm_manifest *manifest;
	/** An entry was left without a failure (@why).  NULL: nothing is
	 *  said. */
	void (*kept)(void *ctx, const struct fastrm_rmtree_entry *e,
	             enum fastrm_rmtree_keep why);
	/** Since 0.7 (a field the structure did not have: a caller built
	 *  before sets @size without it, and it is taken as NULL): where the
	 *  library keeps an estimate of how many entries the paths given hold
	 *  in all, removed ones included, 0 while it has none.  It is made
	 *  from what the walks read anyway (how many entries each directory
	 *  read held, how many of them directories, by depth), without a
	 *  system call of its own, and rewritten (an atomic store) as each
	 *  directory is read; read it with an atomic load
	 *  (__atomic_load_n(p, __ATOMIC_RELAXED)) from any thread, e.g. a
	 *  progress line's.  It converges as the walk proceeds: early on it
	 *  is low where the tree's deeper levels are not read yet, and a
	 *  directory whose entries are read in parts (larger than the memory
	 *  budget) counts what was read.  NULL: none is made. */
	unsigned long long *estimate;
	/** Since 0.9 (fields the structure did not have: a caller built
	 *  before sets @size without them, and they are taken as 0 and NULL):
	 *  pacing (fastrm_rmtree(3), PACING).  @max_rate: removals per second
	 *  at most, all workers together (0: no ceiling).  A worker waits for
	 *  its removal's slot in one schedule; reading and stat'ing are not
	 *  paced, nor is a dry run. */
	double max_rate;
	/** The latency to keep the removal's device near, in microseconds (0:
	 *  none): every 200 ms it is judged from the mean latency of the
	 *  requests the device completed meanwhile (any process's: what the
	 *  others wait; the block device's counters).  The removal starts
	 *  with one worker and one removal in flight, allows one more each
	 *  second below 0.8 of the target (up to @workers) and halves them
	 *  above it.  Where there is no block device (tmpfs, a network file
	 *  system) the removal's own unlinks' time stands in, and with one in
	 *  flight and still above the target the rate falls too (in
	 *  proportion, to half at most, to 10 a second at least), and creeps
	 *  up by a twentieth below 0.8 of it; never above @max_rate. */
	unsigned long long latency_target_us;
	/** Where the library keeps the rate it allows now (removals per
	 *  second, 0: unpaced), for a progress line to show; read it with an
	 *  atomic load.  NULL: not kept. */
	unsigned long long *pace_rate;
	/** Where the library keeps how many removals a latency target allows
	 *  in flight now (0: no target), for a progress line; read it with an
	 *  atomic load.  NULL: not kept. */
	unsigned long long *pace_in_flight;
	/* A later release adds its fields here, and takes a smaller @size
	 * as a caller that did not know them. */
};

/** What a removal did (filled when @stats is not NULL). */
struct fastrm_rmtree_stats {
	unsigned workers;         /* worker threads that ran */
	unsigned workers_fitted;  /* if not 0: the most that ran at once once
	                             FASTRM_RMTREE_FIT_WORKERS fitted them */
	size_t subtrees_shared;   /* directories handed to an idle worker */
	size_t read_ahead_requests; /* reads of directory blocks asked of the
	                               device ahead of the walks (ext4, where
	                               the device can be opened) */
	size_t read_ahead_bytes;  /* what they cover */
	size_t index_lookups;     /* lookups of made-up names that read a
	                             large XFS directory's hash index ahead of
	                             a sorted pass */
	size_t inodes_read_ahead; /* inodes XFS read ahead in windows around
	                             the entries (reads that seek, as root) */
	size_t leaves_read_ahead; /* since 0.8: leaves of btrfs's tree read
	                             ahead in windows of the disk around the
	                             entries (reads that seek, as root) */
	size_t paced_ms;          /* since 0.9: the time workers waited for
	                             their slots (max_rate, latency_target_us),
	                             all of them together, in milliseconds */
};

/** Remove every path of the NULL-terminated @paths.  Returns the number of
 *  failures counted (0: all removed), -EINTR when *opts->stop stopped it,
 *  or -EINVAL / -ENOMEM when it could not start.  Thread-safe: calls on
 *  different paths may run at once; not async-signal-safe. */
int fastrm_rmtree(char *const *paths, const struct fastrm_rmtree_opts *opts,
                  struct fastrm_rmtree_stats *stats);

/** Since 0.5: fastrm_rmtree() with the relative paths of @paths taken
 *  relative to the directory open as @dirfd (AT_FDCWD: the working
 *  directory), as unlinkat() takes them; absolute paths as they are.
 *  @dirfd is the caller's: it is used, never closed, and must stay open
 *  until the call returns.  To empty a directory held open as @dirfd,
 *  give "." with FASTRM_RMTREE_ALLOW_DOTS: what it holds is removed, and
 *  the rmdir of "." itself fails with EINVAL (reported through @failed,
 *  level 0; return 0 there to ignore it).  Returns as fastrm_rmtree(),
 *  or -EBADF when @dirfd is negative and not AT_FDCWD. */
int fastrm_rmtreeat(int dirfd, char *const *paths,
                    const struct fastrm_rmtree_opts *opts,
                    struct fastrm_rmtree_stats *stats);

/** Since 0.7: whether an entry named @name matches one of the
 *  NULL-terminated @patterns as @exclude matches it: @rel is its path
 *  below the path given (NULL for a path given itself), @is_dir whether it
 *  is a directory.  Returns 1 or 0, or -ENOMEM. */
int fastrm_rmtree_excluded(const char *const *patterns, const char *name,
                           const char *rel, int is_dir);

#ifdef __cplusplus
}
#endif

#endif /* FASTRM_RMTREE_H */
