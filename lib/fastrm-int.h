/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal declarations shared by the library's parts; never installed. */
#ifndef FASTRM_INT_H
#define FASTRM_INT_H

/* Errors inside the library: a function that can fail returns 0 (or a
 * count, or a pointer) on success and a negative errno value on failure
 * (a pointer: NULL, with the negative errno in an out-parameter), and
 * leaves errno alone; system calls keep their -1/errno and are converted
 * where they are called.  At the edges: the fts calls keep fts's own
 * convention (NULL, -1 or 1 with errno set), and the failed callback of
 * fastrm_rmtree() receives a positive errno value, as errno holds it. */

/* Marks a definition that belongs to the public ABI; everything else is
 * hidden (-fvisibility=hidden and the version script libfastrm.sym). */
#define FASTRM_EXPORT __attribute__((visibility("default")))

/* "." or "..". */
#define ISDOT(a) ((a)[0] == '.' && (!(a)[1] || ((a)[1] == '.' && !(a)[2])))

/* fastrm_rmtree() flag for the tests only: share every directory a walk
 * enters (within the pool's bounds), idle worker or not, so that the
 * waiting directories' bookkeeping runs whatever the timing. */
#define FASTRM_RMTREE_SHARE_ALL 0x40000000u

/* fastrm_rmtree() flags for the tests only: take the reads of the first
 * path's device (a directory) as measured fast, or as measured to seek,
 * from the start (device_assume), so that what the advisor decides from
 * them happens whatever the machine's load or the test image's device. */
#define FASTRM_RMTREE_READS_FAST 0x20000000u
#define FASTRM_RMTREE_READS_SEEK 0x10000000u

/* Every test-only flag: each its own bit (tests/unit/test-rmtree.c). */
#define FASTRM_RMTREE_TEST_FLAGS \
	(FASTRM_RMTREE_SHARE_ALL | FASTRM_RMTREE_READS_FAST | FASTRM_RMTREE_READS_SEEK)

#endif
