/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --jobs: its bounds and auto's choice, written once for frm, frm-mpi and
 * the Python module (python/fastrm/_fastrm.c). */
#ifndef FRM_JOBS_H
#define FRM_JOBS_H

#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs-magic.h"

/* The most --jobs=N may be (the library would take up to 256; frm's
 * measurements went to 64), and auto's workers per CPU and most (see
 * PARALLEL REMOVAL in frm(1) for what was measured). */
#define JOBS_MAX 64
#define AUTO_JOBS_PER_CPU 4
#define AUTO_JOBS_MAX 16
/* auto's workers on a network file system (see auto_jobs_at()). */
#define AUTO_JOBS_REMOTE 32

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

/* Whether @path (relative to @dirfd; the link itself if it is a symlink)
 * is on a file system whose every request is a round trip to a server or
 * a daemon (lib/device/fs-magic.h: NFS, SMB, Lustre, Ceph, GPFS, 9p, AFS,
 * FUSE such as sshfs).  One open and one fstatfs; false where they fail. */
static inline bool on_remote_fs(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct statfs fs;
	bool ok = fstatfs(fd, &fs) == 0;
	close(fd);
	return ok && fs_magic_remote((unsigned long)fs.f_type);
}

/* --jobs=auto's workers for removing @paths (relative to @dirfd): @jobs
 * (auto_jobs()), or AUTO_JOBS_REMOTE where one of the first few paths is
 * on a network file system.  There a worker spends its time waiting for
 * round trips, not on a CPU or a disk, and one client serves one
 * directory's unlinks one after another (the kernel holds the directory's
 * lock for each round trip): more workers keep more directories and more
 * requests in flight.  Measured on sshfs at a 5 ms round trip (doc/archive/
 * results-0.5.md, "frm-mpi on a network file system"). */
static inline unsigned auto_jobs_at(unsigned jobs, int dirfd, char *const *paths)
{
	for (int i = 0; paths[i] && i < 4; i++)
		if (on_remote_fs(dirfd, paths[i]))
			return jobs > AUTO_JOBS_REMOTE ? jobs : AUTO_JOBS_REMOTE;
	return jobs;
}

#endif
