/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File systems by statfs's f_type (where <linux/magic.h> may lack them),
 * written once for the device advisor (device.c) and for the tools'
 * --jobs=auto (tools/frm/jobs.h), which include it as a header of static
 * definitions only: nothing of it is exported. */
#ifndef FASTRM_FS_MAGIC_H
#define FASTRM_FS_MAGIC_H

#include <stdbool.h>

#define MAGIC_EXT4 0xEF53        /* ext2, ext3 and ext4 */
#define MAGIC_XFS 0x58465342
#define MAGIC_BTRFS 0x9123683e
#define MAGIC_TMPFS 0x01021994
#define MAGIC_RAMFS 0x858458f6
#define MAGIC_PROC 0x9fa0
#define MAGIC_SYSFS 0x62656572
#define MAGIC_NFS 0x6969
#define MAGIC_SMB 0x517b
#define MAGIC_CIFS 0xff534d42
#define MAGIC_SMB2 0xfe534d42
#define MAGIC_LUSTRE 0x0bd00bd0
#define MAGIC_FUSE 0x65735546
#define MAGIC_9P 0x01021997
#define MAGIC_CEPH 0x00c36400
#define MAGIC_AFS 0x5346414f
#define MAGIC_GPFS 0x47504653

/* Whether every request on a file system of @type is a round trip to a
 * server or a daemon: NFS, SMB/CIFS, Lustre, Ceph, GPFS, 9p, AFS, FUSE. */
static inline bool fs_magic_remote(unsigned long type)
{
	switch (type) {
	case MAGIC_NFS:
	case MAGIC_SMB:
	case MAGIC_CIFS:
	case MAGIC_SMB2:
	case MAGIC_LUSTRE:
	case MAGIC_FUSE:
	case MAGIC_9P:
	case MAGIC_CEPH:
	case MAGIC_AFS:
	case MAGIC_GPFS:
		return true;
	default:
		return false;
	}
}

#endif
