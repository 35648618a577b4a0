/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest's side that fastrm_rmtree() uses (lib/manifest.c). */
#ifndef FASTRM_MANIFEST_INT_H
#define FASTRM_MANIFEST_INT_H

#include "fastrm/manifest.h"

/* Watch the file system of @name in @dirfd (a path given, before its
 * removal): the summary says how many bytes it gained. */
void manifest_watch(struct fastrm_manifest *m, int dirfd, const char *name);

/* errno's name ("EACCES"), or NULL where the C library has none. */
const char *manifest_errno_name(int err);

#endif
