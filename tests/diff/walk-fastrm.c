/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The walker against libfastrm, through the compatibility header: this is
 * the "change the include" path a coreutils-like tool takes. */
#include <fastrm/compat/fts.h>
#include <stdio.h>
#define WALK_FN walk_fastrm
#define WALK_CHDIR_MODE 1 /* the default mode changes directory, as gnulib */
#define WALK_COUNT_FDS 1
#include "walk-impl.h"
