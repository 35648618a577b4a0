/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfastrm's outcome manifest (since 0.7): a record of every entry a
 * removal removed, failed on, or kept, and a last summary record.
 *
 * Give one to fastrm_rmtree() (opts->manifest) and the library writes a
 * record for each entry as its outcome becomes known: "removed" only
 * after the unlinkat() returned 0; "failed" with the errno and the
 * operation; "kept" for an entry left by choice (an exclusion, a prompt
 * answered no) or for a directory left because something below it was
 * left; "planned" in a dry run (FASTRM_RMTREE_DRY_RUN) for what a real
 * run would remove.  fastrm_manifest_finish() writes the summary.
 *
 * Formats (fastrm_manifest(3) has the full grammar):
 *  - FASTRM_MANIFEST_JSON: JSON Lines, one object a line:
 *      {"path":"d/x","type":"file","outcome":"removed"}
 *      {"path":"d/ro/y","type":"file","outcome":"failed","errno":"EACCES",
 *       "op":"unlink"}
 *      {"path":"d/ro","type":"dir","outcome":"kept","reason":"below"}
 *      {"outcome":"summary", ...counts, "exit_status":1}
 *    Bytes of a path that are not valid UTF-8 are written as the escapes
 *    \udc80-\udcff (one per byte, PEP 383): in Python,
 *    os.fsencode(json.loads(line)["path"]) gives the path's bytes back.
 *  - FASTRM_MANIFEST_NUL: OUTCOME TAB TYPE TAB ERRNO TAB PATH NUL per
 *    record (ERRNO "-" when none; the path as it is, bytes unchanged);
 *    the summary is "summary" TAB and the JSON object, then NUL.
 *
 * The file is always a sequence of whole records: records are written in
 * blocks, and a record that fits a page of the file never crosses a page
 * boundary (the line before it is padded with spaces), so that a process
 * killed in a write leaves whole records only.  What was still buffered
 * (at most 64 KiB, at most about a second's worth) is lost then: every
 * "removed" record in the file is gone from the disk, not every removed
 * entry has a record.
 */
#ifndef FASTRM_MANIFEST_H
#define FASTRM_MANIFEST_H

#include <sys/types.h>

#include <fastrm/rmtree.h>   /* enum fastrm_rmtree_error, fastrm_rmtree_keep */

#ifdef __cplusplus
extern "C" {
#endif

struct fastrm_manifest;

/** Record formats. */
enum fastrm_manifest_format {
	FASTRM_MANIFEST_JSON = 0, /* JSON Lines */
	FASTRM_MANIFEST_NUL = 1,  /* tab-separated fields, NUL-terminated */
};

/** Only what was left (failed and kept records) and the summary. */
#define FASTRM_MANIFEST_FAILURES 0x1

/** An entry's outcome. */
enum fastrm_outcome {
	FASTRM_OUTCOME_REMOVED = 1,
	FASTRM_OUTCOME_FAILED,
	FASTRM_OUTCOME_KEPT,
	FASTRM_OUTCOME_PLANNED,   /* a dry run: a real run would remove it */
};

/** A manifest written to @fd (the caller's: never closed here), in
 *  @format, with @flags (FASTRM_MANIFEST_FAILURES).  Returns NULL with
 *  errno set (EINVAL, ENOMEM). */
struct fastrm_manifest *fastrm_manifest_new(int fd, int format, unsigned flags);

/** Write a record of an entry that was not removed through
 *  fastrm_rmtree() (a caller's own unlink or rmdir): @path, its type bits
 *  (@mode & S_IFMT; 0: not known), @outcome, and for FASTRM_OUTCOME_FAILED
 *  the errno value @err and the operation @op ("unlink", "rmdir", ...;
 *  NULL: none); for FASTRM_OUTCOME_KEPT @op is the reason (NULL:
 *  "below").  Thread-safe.  Returns 0, or a negative errno value when the
 *  file could not be written (then every later call says so too). */
int fastrm_manifest_add(struct fastrm_manifest *m, const char *path,
                        mode_t mode, enum fastrm_outcome outcome, int err,
                        const char *op);

/** Write the summary record: counts of removed entries by type, of
 *  failures by errno, of kept and planned entries, the bytes the file
 *  systems of the paths given gained (their free space after, less
 *  before: other writers count too, and a file system that frees
 *  lazily may not have freed all yet), the seconds since
 *  fastrm_manifest_new(), and @exit_status; then write out what is
 *  buffered.  Returns 0 or a negative errno value (the first write
 *  error since the manifest was made). */
int fastrm_manifest_finish(struct fastrm_manifest *m, int exit_status);

/** The operation a record names for a failure of fastrm_rmtree(3) of
 *  kind @what on a directory (@is_dir) or not: "unlink", "rmdir", "read",
 *  "cycle", "cross-device", "refused"; NULL for an unknown @what.  For a
 *  caller that writes records of its own (fastrm_manifest_add) in the
 *  library's words. */
const char *fastrm_manifest_op(enum fastrm_rmtree_error what, int is_dir);

/** The reason a record names for an entry kept (@why): "below",
 *  "excluded", "declined"; NULL for an unknown @why. */
const char *fastrm_manifest_reason(enum fastrm_rmtree_keep why);

/** Records whose path is "." or begins with "./" (a removal through a
 *  directory fd: fastrm_rmtreeat(fd, {".", NULL}, ...)) are written with
 *  @path in place of that ".".  @path is copied.  Returns 0 or -ENOMEM. */
int fastrm_manifest_set_base(struct fastrm_manifest *m, const char *path);

/** Write out what is buffered (without a summary), then free @m.
 *  Returns as fastrm_manifest_finish(). */
int fastrm_manifest_free(struct fastrm_manifest *m);

#ifdef __cplusplus
}
#endif

#endif /* FASTRM_MANIFEST_H */
