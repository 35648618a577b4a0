/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test fixtures: every test works inside a directory it made itself. */
#ifndef FASTRM_TEST_FIXTURE_H
#define FASTRM_TEST_FIXTURE_H

#include <stddef.h>

/* Exit status that meson counts as a skipped test. */
#define FX_SKIP 77

/* The room a tmpfs must have free to be used without TMPDIR. */
#define FX_ROOM_BYTES (1ULL << 30)
#define FX_ROOM_INODES 2000000ULL

/* Create a fresh directory "$TMPDIR/fastrm-test.XXXXXX" (without TMPDIR:
 * under /dev/shm if it is a writable tmpfs with FX_ROOM_BYTES and
 * FX_ROOM_INODES free, else under /tmp); returns its malloc'd absolute
 * path.  Aborts on failure. */
char *fx_mkdtemp(void);

/* Remove a directory made by fx_mkdtemp() and everything in it.  Refuses
 * (aborts) for any path that fx_mkdtemp() did not return. */
void fx_cleanup(char *dir);

/* Run a command (argv, no shell); returns its exit status or -1. */
int fx_run(char *const argv[]);

/* Number of open file descriptors of this process. */
int fx_count_fds(void);

/* Write @len bytes of @data to the new file @path (relative to @dirfd). */
void fx_write_file(int dirfd, const char *path, const char *data);

/* Make @name in @dirfd: a chain @depth directories deep ("d/d/d..."),
 * with an empty file "f" at every @file_every-th level (0: none). */
void fx_make_chain(int dirfd, const char *name, long depth, long file_every);

/* Make @name in @dirfd: one directory of @n empty files "file-N". */
void fx_make_flat(int dirfd, const char *name, long n);

/* Read requests completed so far by the block device that holds @path
 * (sysfs stat); aborts if there is none. */
long fx_device_reads(const char *path);

/* Make @img, a sparse file of @bytes (it must not exist), and the empty
 * directory @mnt to mount it on.  Returns 0, or -1 if a step failed. */
int fx_make_image(const char *img, long long bytes, const char *mnt);

/* Unmount @mnt and loop-mount @img there again: a new loop device, and
 * nothing of the file system left in any cache.  Returns 0, or -1 if a
 * step failed. */
int fx_loop_remount(const char *img, const char *mnt);

/* Unmount @mnt (a test's own mount), lazily if it is busy, so that the
 * directory around it can be removed.  Returns 0, or -1 if neither
 * worked. */
int fx_unmount(const char *mnt);

#endif
