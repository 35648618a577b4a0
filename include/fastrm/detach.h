/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfastrm's detach: a tree renamed away at once, removed later.
 *
 * fastrm_detach() renames a directory, on its own file system, to a hidden
 * name beside it (".frm-detached-" and 16 random hex digits, made with
 * RENAME_NOREPLACE: never over anything), after writing a record of it in
 * a state directory: where it was, where it is, its device and inode.
 * fastrm_finish() removes what a record names, with the safety of
 * fastrm_rmtree() (it opens the hidden directory without following a
 * symlink and checks its device and inode first, then empties it through
 * that fd), and drops the record once it is gone; a record is held (an
 * exclusive flock) by whichever process finishes it, so two never work on
 * one.  fastrm_finisher() starts a process of its own that does that in
 * the background.  A record outlives a killed finisher, a crash and a
 * reboot: whatever is pending is finished by the next fastrm_finish()
 * (frm --finish).  fastrm_detach(3).
 *
 * Return values: 0 or a count (>= 0), or a negative errno value.
 */
#ifndef FASTRM_DETACH_H
#define FASTRM_DETACH_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <fastrm/rmtree.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The hidden names' prefix. */
#define FASTRM_DETACH_PREFIX ".frm-detached-"
/** A record's id: 16 hex digits and a NUL. */
#define FASTRM_DETACH_ID_SIZE 17

/** The state directory (made, mode 0700, with its parents, if missing):
 *  $FASTRM_STATE_DIR if set; for root /var/lib/frm; for others
 *  $XDG_STATE_HOME/frm, or ~/.local/state/frm, and where that cannot be
 *  made (no home: uid 65534's is /nonexistent) /var/tmp/frm-UID, taken
 *  only if it is a directory of this user, mode 0700, not a symlink.
 *  Writes it to @buf.  Returns 0, -ENAMETOOLONG, or the errno of making
 *  it. */
int fastrm_state_dir(char *buf, size_t size);

/** Detach @path (relative to @dirfd), a directory: write a record in
 *  @state_dir, then rename it to a hidden name in the same directory.
 *  @flags: FASTRM_RMTREE_XDEV (the finisher stays on its file system).
 *  Its id is written to @id (FASTRM_DETACH_ID_SIZE bytes).  Returns 0;
 *  -ENOTDIR for anything but a directory; or the errno of the step that
 *  failed, nothing detached and no record left: the rename's (EBUSY: a
 *  mount point; EACCES, EPERM: the directory above; EROFS; EINVAL: the
 *  path's last component is "." or "..", or it is "/") where the caller
 *  may remove it in place instead. */
int fastrm_detach(int dirfd, const char *path, const char *state_dir,
                  unsigned flags, char *id);

/** A record, as fastrm_pending() shows it (valid during the call). */
struct fastrm_detached {
	const char *id;
	const char *path;          /* where it was (absolute) */
	const char *hidden;        /* where it is (absolute) */
	dev_t dev;                 /* what was renamed */
	ino_t ino;
	time_t when;               /* when */
	unsigned long long removed; /* entries removed so far, by finishers */
	int active;                /* a finisher holds it now */
	int failures;              /* what the last finisher could not remove */
};

/** Call @each for every record in @state_dir (in no particular order);
 *  stops when it returns non-zero, and returns that.  0, or -errno. */
int fastrm_pending(const char *state_dir,
                   int (*each)(void *ctx, const struct fastrm_detached *d),
                   void *ctx);

/** Remove what the record @id of @state_dir names (NULL: every record no
 *  finisher holds), with @opts (NULL: one worker, unpaced; its callbacks
 *  see paths under the hidden name; without a manifest of its own, the
 *  failures go to @state_dir's ID.manifest, JSON Lines).  A record is
 *  dropped once its tree is gone, or when nothing is at its hidden name
 *  any more; one whose hidden name holds something else (another device
 *  or inode), or whose directory is another one now, is left as it is,
 *  with its record: -ESTALE.  Returns the failures counted, -EINTR when
 *  *opts->stop stopped it, -EBUSY when @id is held by another finisher,
 *  -ESTALE, or -errno; with @id NULL, a record that could not be
 *  finished counts as one failure. */
int fastrm_finish(const char *state_dir, const char *id,
                  const struct fastrm_rmtree_opts *opts,
                  struct fastrm_rmtree_stats *stats);

/** Start a finisher: a process in a session of its own, without a
 *  terminal (its standard streams on /dev/null), SIGHUP ignored, at the
 *  lowest CPU priority (nice 19) and I/O class (idle), that calls
 *  fastrm_finish() for each id of the NULL-terminated @ids with @workers
 *  (0: as FASTRM_RMTREE_FIT_WORKERS fits them, from 8), @max_rate and
 *  @latency_target_us (both 0: a target of 50 ms), then exits.  It is
 *  not the caller's child (it is started through one that exits at once,
 *  and is waited for).  Returns its pid, or -errno.  It forks: in a
 *  caller with threads, the finisher runs only the library. */
pid_t fastrm_finisher(const char *state_dir, char *const *ids, unsigned workers,
                      double max_rate, unsigned long long latency_target_us);

/** The finisher's latency target when none is given, in microseconds. */
#define FASTRM_FINISHER_LATENCY_US 50000ULL

#ifdef __cplusplus
}
#endif

#endif /* FASTRM_DETACH_H */
