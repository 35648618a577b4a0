/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The walker against gnulib's fts (test-only reference, built from the
 * gnulib package or a gnulib tree by build-gnulib-fts.sh; config.h is
 * forced in). */
#include "fts_.h"
#include <stdio.h>
#define WALK_FN walk_gnulib
#define WALK_CHDIR_MODE 1
#define WALK_COUNT_FDS 0
#include "walk-impl.h"
