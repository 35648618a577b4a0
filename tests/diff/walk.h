/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FASTRM_TEST_WALK_H
#define FASTRM_TEST_WALK_H
#include <stdio.h>

/* Walk @roots with @opts (name comparator if @sorted) and print one line
 * per entry to @out: info, level, errno, path, how accpath names the file,
 * what accpath reaches, and what fts_statp says.  Returns 0, or -1 if the
 * stream could not be opened.  The same source is compiled against
 * libfastrm (walk_fastrm) and against gnulib's fts (walk_gnulib). */
int walk_fastrm(char *const *roots, int opts, int sorted, FILE *out);
int walk_gnulib(char *const *roots, int opts, int sorted, FILE *out);

#endif
