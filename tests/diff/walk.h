/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FASTRM_TEST_WALK_H
#define FASTRM_TEST_WALK_H
#include <stdio.h>

enum walk_mode {
	WALK_READ,     /* fts_read only */
	WALK_CHILDREN, /* and fts_children() at every directory */
	WALK_SET,      /* and fts_set() instructions chosen by name */
	WALK_REMOVE,   /* remove every entry through fts_accpath */
};

struct walk {
	int opts;                /* fts_open's flags */
	int sorted;              /* a name comparator */
	enum walk_mode mode;
	int no_ids;              /* leave out device and inode numbers (for
	                            trees made twice) */
	/* called with every entry's path before it is acted on (NULL: none) */
	void (*hook)(const char *path, int level, void *arg);
	void *arg;
};

/* Walk @roots as @w says and print one line per entry to @out: info,
 * level, errno, path, how accpath names the file, what accpath reaches,
 * and what fts_statp says (in WALK_REMOVE: what removing it gave instead
 * of the last two); then how the walk ended, whether the working directory
 * is the one before fts_open and how many fds were left open.  Returns 0,
 * or -1 if the stream could not be opened.  The same source is compiled
 * against libfastrm (walk_fastrm) and against gnulib's fts (walk_gnulib). */
int walk_fastrm(char *const *roots, const struct walk *w, FILE *out);
int walk_gnulib(char *const *roots, const struct walk *w, FILE *out);

#endif
