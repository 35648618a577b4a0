/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfastrm -- an fts-compatible file hierarchy traversal.
 *
 * The types, option flags, info codes and fts_set() instructions follow
 * gnulib's <fts.h> (which extends the 4.4BSD interface with FTS_CWDFD,
 * FTS_DEFER_STAT, FTS_TIGHT_CYCLE_CHECK, FTS_VERBATIM and, since 2025-10,
 * FTS_MOUNT), value for value: tests/unit/test-fts-values.c compares them
 * with gnulib's header of the commit it names.  The functions
 * carry a "fastrm_" prefix so that they never clash with the C library's
 * own fts_* symbols; <fastrm/compat/fts.h> maps the plain names.
 *
 * Differences from gnulib are listed in fastrm_fts(3) and doc/design.md.
 * The working directory is gnulib's: the default mode changes it (so that
 * fts_accpath, the name, works at any depth); with FTS_CWDFD fts_accpath
 * is relative to fts_cwd_fd, with FTS_NOCHDIR it is the full fts_path.
 *
 * Errors: the fts calls keep fts's convention (NULL or -1, errno set;
 * fastrm_fts_set returns 1, as gnulib's);
 * every other fastrm_* call returns 0 (or a count) on success and a
 * negative errno value on failure, and leaves errno alone.
 *
 * Threads: different streams may be used concurrently from different
 * threads, except in the default mode, which changes the process's working
 * directory (one such stream at a time, and no other thread relying on
 * the working directory meanwhile).  One stream is used by one thread at a
 * time.  None of these calls may be made from a signal handler.
 *
 * The ordering policies (the order in which each directory is visited)
 * are in <fastrm/order.h>, included here (and, through it, the version
 * macros of <fastrm/version.h>).
 *
 * Cost: a stream asks only the file system's type (one fstatfs per
 * device), as gnulib's fts does; it opens nothing in /sys or /dev and
 * starts no thread, unless it is opened with FASTRM_FTS_DEVICE.
 */
#ifndef FASTRM_FTS_H
#define FASTRM_FTS_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/stat.h>

#include <fastrm/order.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fastrm_ftsent;

/** A traversal stream.  Allocated by fastrm_fts_open(), released by
 *  fastrm_fts_close().  The fields below may be read, never written. */
typedef struct fastrm_fts {
	struct fastrm_ftsent *fts_cur;   /* the entry last returned */
	struct fastrm_ftsent *fts_child; /* list made by fts_children */
	dev_t fts_dev;                   /* device of the current root */
	char *fts_path;                  /* buffer holding every fts_path */
	int fts_rfd;                     /* default mode: the working
	                                    directory fts_open found (O_PATH);
	                                    else -1 */
	int fts_cwd_fd;                  /* FTS_CWDFD: directory fd that
	                                    fts_accpath is relative to, or
	                                    AT_FDCWD */
	size_t fts_pathlen;              /* size of the fts_path buffer */
	int (*fts_compar)(const struct fastrm_ftsent **,
	                  const struct fastrm_ftsent **);
	int fts_options;                 /* options given to fts_open */
	void *fts_spare[4];              /* reserved */
} FTS;

/* Options of fts_open(). */
#define FTS_COMFOLLOW  0x0001 /* follow symlinks named on the command line */
#define FTS_LOGICAL    0x0002 /* logical walk: follow every symlink */
#define FTS_NOCHDIR    0x0004 /* never change the working directory */
#define FTS_NOSTAT     0x0008 /* use d_type, do not stat non-directories */
#define FTS_PHYSICAL   0x0010 /* physical walk: never follow symlinks */
#define FTS_SEEDOT     0x0020 /* return "." and ".." */
#define FTS_XDEV       0x0040 /* do not descend into other devices */
#define FTS_WHITEOUT   0x0080 /* accepted, no effect on Linux */
#define FTS_TIGHT_CYCLE_CHECK 0x0100 /* detect cycles right away */
#define FTS_CWDFD      0x0200 /* accpath relative to fts_cwd_fd */
#define FTS_DEFER_STAT 0x0400 /* with a comparator: stat only on visit */
#define FTS_VERBATIM   0x0800 /* keep trailing slashes of the roots */
#define FTS_MOUNT      0x1000 /* skip other devices: an entry below a
                                 root whose st_dev is not the root's is
                                 not returned at all (find -mount) */
#define FTS_OPTIONMASK 0x1fff /* every valid option */
#define FTS_NAMEONLY   0x2000 /* fts_children(): names only (0x1000
                                 before 0.6: binaries built then keep
                                 working, see fastrm_fts(3)) */
/* libfastrm's own option of fts_open(): learn what the device does and
 * act on it, as fastrm_rmtree() does: its counters in sysfs read, ext4's
 * block device opened to read directory blocks ahead (where permitted),
 * XFS's hash index and inodes read ahead (threads started inside
 * fts_read).  Without it a stream asks only the file system's type, one
 * fstatfs per device, as gnulib's fts does. */
#define FASTRM_FTS_DEVICE 0x10000
#define FTS_STOP       0x4000 /* (private) unrecoverable error */

/** One file of the hierarchy.  Owned by the stream: valid until the
 *  fts_read() call after the one that returned it, except that a
 *  directory entry stays valid while its descendants are visited
 *  (so fts_parent is always usable). */
typedef struct fastrm_ftsent {
	struct fastrm_ftsent *fts_cycle;  /* FTS_DC: the entry it cycles to */
	struct fastrm_ftsent *fts_parent; /* parent directory */
	struct fastrm_ftsent *fts_link;   /* next file in the directory */
	long fts_number;                  /* free for the application */
	void *fts_pointer;                /* free for the application */
	char *fts_accpath;                /* name to access the file with */
	char *fts_path;                   /* root-relative path */
	int fts_errno;                    /* errno for FTS_DNR/NS/ERR */
	int fts_symfd;                    /* a level entered through
	                                     FTS_FOLLOW: its parent's fd
	                                     (not FTS_NOCHDIR); else -1 */
	size_t fts_pathlen;               /* strlen(fts_path) */
	FTS *fts_fts;                     /* the stream */
#define FTS_ROOTPARENTLEVEL (-1)
#define FTS_ROOTLEVEL 0
	ptrdiff_t fts_level;              /* depth, roots are 0 */
	size_t fts_namelen;               /* strlen(fts_name) */

#define FTS_D       1  /* directory, preorder */
#define FTS_DC      2  /* directory that causes a cycle */
#define FTS_DEFAULT 3  /* none of the others */
#define FTS_DNR     4  /* directory that cannot be read */
#define FTS_DOT     5  /* "." or ".." (FTS_SEEDOT) */
#define FTS_DP      6  /* directory, postorder */
#define FTS_ERR     7  /* error; fts_errno is set */
#define FTS_F       8  /* regular file */
#define FTS_INIT    9  /* (private) initialised only */
#define FTS_NS      10 /* stat failed; fts_errno is set */
#define FTS_NSOK    11 /* not stat'ed (FTS_NOSTAT): only the S_IFMT
                          bits of st_mode (from d_type, 0 if unknown)
                          and st_ino (from d_ino) are set */
#define FTS_SL      12 /* symbolic link */
#define FTS_SLNONE  13 /* symbolic link without a target */
#define FTS_W       14 /* whiteout (never returned on Linux) */
	unsigned short fts_info;          /* one of the codes above */

#define FTS_DONTCHDIR 0x01 /* (private) */
#define FTS_SYMFOLLOW 0x02 /* reached by following a symlink */
	unsigned short fts_flags;

#define FTS_AGAIN   1  /* visit the entry again */
#define FTS_FOLLOW  2  /* follow this symlink */
#define FTS_NOINSTR 3  /* no instruction */
#define FTS_SKIP    4  /* do not descend */
	unsigned short fts_instr;         /* set by fts_set() */
	unsigned short fts_priv_flags;    /* (private) */
	struct stat fts_statp[1];         /* stat information */
	char fts_name[];                  /* file name */
} FTSENT;

/** Open a stream over the NULL-terminated list @argv.
 *  @options must contain exactly one of FTS_LOGICAL and FTS_PHYSICAL, no
 *  bit outside FTS_OPTIONMASK but FASTRM_FTS_DEVICE, and not both
 *  FTS_NOCHDIR and FTS_CWDFD.
 *  Without FTS_CWDFD and FTS_NOCHDIR (and FTS_LOGICAL, which implies
 *  FTS_NOCHDIR), the walk changes the process's working directory, as
 *  fts(3): fts_accpath is relative to it (see fastrm_fts(3), WORKING
 *  DIRECTORY).
 *  @compar, if not NULL, orders the roots and every directory's entries.
 *  Returns the stream, or NULL with errno set (EINVAL, ENOMEM). */
FTS *fastrm_fts_open(char *const *argv, int options,
                     int (*compar)(const FTSENT **, const FTSENT **));

/** fastrm_fts_open() with the roots named relative to the directory
 *  @dirfd instead of the working directory (AT_FDCWD: fastrm_fts_open()
 *  itself), as FreeBSD's fts_openat().  @dirfd is not owned by the
 *  stream and must stay open until fastrm_fts_close().  With any other
 *  @dirfd the walk cannot change the working directory: @options needs
 *  FTS_CWDFD (a root's fts_cwd_fd is @dirfd) or FTS_NOCHDIR (fts_path and
 *  fts_accpath are relative to @dirfd), else EINVAL. */
FTS *fastrm_fts_openat(int dirfd, char *const *argv, int options,
                       int (*compar)(const FTSENT **, const FTSENT **));

/** Return the next entry.  At the end returns NULL with errno 0; on a
 *  fatal error returns NULL with errno set (and keeps returning NULL). */
FTSENT *fastrm_fts_read(FTS *sp);

/** The list of entries of the directory just returned in preorder, or of
 *  the roots before the first fastrm_fts_read().  @instr is 0 or
 *  FTS_NAMEONLY.  Returns NULL with errno 0 when there are none, NULL with
 *  errno set on error.  The list is owned by the stream. */
FTSENT *fastrm_fts_children(FTS *sp, int instr);

/** Give an instruction (FTS_AGAIN, FTS_FOLLOW, FTS_SKIP, FTS_NOINSTR)
 *  for @p.  Returns 0, or 1 with errno EINVAL. */
int fastrm_fts_set(FTS *sp, FTSENT *p, int instr);

/** Close the stream and release everything it holds; NULL is accepted.
 *  In the default mode, first return to the working directory that
 *  fastrm_fts_open() found.  Returns 0, or -1 with errno set if that
 *  failed (everything is released all the same). */
int fastrm_fts_close(FTS *sp);

/** Use @order (not copied: it must outlive the stream) for directories
 *  opened from now on.  Returns 0, or -EINVAL if @order is NULL, has no
 *  next or release function, or a reserved member is not zero. */
int fastrm_fts_set_order(FTS *sp, const struct fastrm_order *order);

/** Memory the ordering policies of the stream may hold, in bytes (default
 *  FASTRM_DEFAULT_BUDGET).  Returns 0, or -EINVAL for less than 64 KiB. */
int fastrm_fts_set_memory_budget(FTS *sp, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* FASTRM_FTS_H */
