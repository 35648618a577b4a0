/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --jobs: its bounds and auto's choice, written once for frm, frm-mpi and
 * the Python module (python/fastrm/_fastrm.c). */
#ifndef FRM_JOBS_H
#define FRM_JOBS_H

#include <sched.h>

/* The most --jobs=N may be (the library would take up to 256; frm's
 * measurements went to 64), and auto's workers per CPU and most (see
 * PARALLEL REMOVAL in frm(1) for what was measured). */
#define JOBS_MAX 64
#define AUTO_JOBS_PER_CPU 4
#define AUTO_JOBS_MAX 16

/* --jobs=auto, the default: the workers mostly wait on the device, not on
 * the CPU, so AUTO_JOBS_PER_CPU of them per CPU keep a device with a queue
 * busy, up to AUTO_JOBS_MAX.  The CPUs are those the process may run on
 * (taskset; one system call, where sysconf reads sysfs). */
static inline unsigned auto_jobs(void)
{
	cpu_set_t set;
	long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
	if (cpus < 1)
		cpus = 1;
	return cpus >= AUTO_JOBS_MAX / AUTO_JOBS_PER_CPU ? AUTO_JOBS_MAX
	                                                 : (unsigned)cpus * AUTO_JOBS_PER_CPU;
}

#endif
