/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the in-process benchmarks share: a monotonic clock in seconds and
 * a comparator for qsort of times (their medians). */
#ifndef FASTRM_BENCH_TIMING_H
#define FASTRM_BENCH_TIMING_H

#include <time.h>

static inline double bench_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#endif
