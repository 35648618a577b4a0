/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The device advisor (lib/device/device.c): its decision tables (what a
 * measured mean read is; where a large directory is worth sorting; how
 * many workers may run at once), the file systems it knows, that it asks
 * each device's file system once (a profile per device, not a fstatfs
 * per directory), and what it does on the test's own directory (memory:
 * nothing measured, nothing sorted, nothing read ahead).  Runs anywhere,
 * as any user; but the block device behind a btrfs image (root and
 * mkfs.btrfs, else that case is skipped, saying why). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device/strategies.h"
#include "fixture.h"

/* ---------------------------------------------- fstatfs, counted */

/* (with _FILE_OFFSET_BITS=64 the library calls fstatfs64: both are
 * wrapped) */
int __real_fstatfs(int fd, struct statfs *buf);
int __wrap_fstatfs(int fd, struct statfs *buf);
int __real_fstatfs64(int fd, struct statfs *buf);
int __wrap_fstatfs64(int fd, struct statfs *buf);
static int fstatfs_calls;

int __wrap_fstatfs(int fd, struct statfs *buf)
{
	fstatfs_calls++;
	return __real_fstatfs(fd, buf);
}

int __wrap_fstatfs64(int fd, struct statfs *buf)
{
	fstatfs_calls++;
	return __real_fstatfs64(fd, buf);
}

static void test_judge(void **state)
{
	(void)state;
	assert_int_equal(device_judge(0), DEVICE_READS_FAST);
	assert_int_equal(device_judge(FAST_US - 1), DEVICE_READS_FAST);
	assert_int_equal(device_judge(FAST_US), DEVICE_READS_MODERATE);
	assert_int_equal(device_judge(1000), DEVICE_READS_MODERATE); /* a queue at 1 ms */
	assert_int_equal(device_judge(SEEK_US - 1), DEVICE_READS_MODERATE);
	assert_int_equal(device_judge(SEEK_US), DEVICE_READS_SEEK);
	assert_int_equal(device_judge(9000), DEVICE_READS_SEEK);    /* a 7200-rpm disk */
}

static void test_sort_table(void **state)
{
	(void)state;
	for (int r = DEVICE_READS_UNKNOWN; r <= DEVICE_READS_CACHED; r++) {
		enum device_reads reads = (enum device_reads)r;
		bool seek = reads == DEVICE_READS_SEEK;
		/* large directories: ext4 and the rest sort, whatever the
		 * device: inode order writes far fewer blocks there
		 * (doc/archive/benchmarks-0.5.md); small ones on ext4 too, elsewhere
		 * only where reads seek */
		assert_true(device_sort_for(DEVICE_FS_EXT4, reads, false, true));
		assert_true(device_sort_for(DEVICE_FS_OTHER, reads, false, true));
		assert_true(device_sort_for(DEVICE_FS_EXT4, reads, false, false));
		assert_int_equal(device_sort_for(DEVICE_FS_OTHER, reads, false, false), seek);
		/* order does not matter in memory, on the network, on btrfs */
		for (int large = 0; large < 2; large++) {
			assert_false(device_sort_for(DEVICE_FS_MEMORY, reads, true, large));
			assert_false(device_sort_for(DEVICE_FS_REMOTE, reads, true, large));
			assert_false(device_sort_for(DEVICE_FS_REMOTE, reads, false, large));
			assert_false(device_sort_for(DEVICE_FS_BTRFS, reads, false, large));
		}
		/* XFS: unless its reads are known to be fast (or the walk
		 * runs from memory) */
		assert_int_equal(device_sort_for(DEVICE_FS_XFS, reads, false, true),
		                 reads != DEVICE_READS_FAST && reads != DEVICE_READS_CACHED);
		assert_int_equal(device_sort_for(DEVICE_FS_XFS, reads, false, false), seek);
	}
}

/* Reads in a walk's first moments: too few to measure, none for a while
 * (the walk runs from memory), enough to judge. */
static void test_judge_reads(void **state)
{
	(void)state;
	/* just started: nothing to say yet */
	assert_int_equal(device_judge_reads(0, 0, 0), DEVICE_READS_UNKNOWN);
	assert_int_equal(device_judge_reads(0, 0, CACHED_MS - 1), DEVICE_READS_UNKNOWN);
	/* nothing read in CACHED_MS, or less than once per CACHED_GAP_MS:
	 * from memory (the aged tree on the one-head disk, warm: 43 reads in
	 * 4.7 s) */
	assert_int_equal(device_judge_reads(0, 0, CACHED_MS), DEVICE_READS_CACHED);
	assert_int_equal(device_judge_reads(43, 400, 4700), DEVICE_READS_CACHED);
	/* a cold walk on a disk that seeks: a read every 9-13 ms */
	assert_int_equal(device_judge_reads(40, 400, 500), DEVICE_READS_UNKNOWN);
	assert_int_equal(device_judge_reads(CACHED_MS / CACHED_GAP_MS, 1, CACHED_MS),
	                 DEVICE_READS_UNKNOWN);
	assert_int_equal(device_judge_reads(CACHED_MS / CACHED_GAP_MS - 1, 1, CACHED_MS),
	                 DEVICE_READS_CACHED);
	/* MEASURE_READS of them: judged by their mean, however long it took */
	assert_int_equal(device_judge_reads(MEASURE_READS, MEASURE_READS * 9, 100000),
	                 DEVICE_READS_SEEK);
	assert_int_equal(device_judge_reads(MEASURE_READS, 0, 10), DEVICE_READS_FAST);
	assert_int_equal(device_judge_reads(MEASURE_READS, MEASURE_READS, 10),
	                 DEVICE_READS_MODERATE);
}

/* How requests overlap, from the harness's emulated disks (random 4 KiB
 * reads for 4 s from 1, 2, 8 and 32 threads, the loop device's counters:
 * see QUEUED_MIN). */
static void test_judge_queue(void **state)
{
	(void)state;
	/* one in flight: a one-head disk and a queued device look alike */
	assert_int_equal(device_judge_queue(311, 3968, 3968), DEVICE_QUEUE_UNKNOWN);
	assert_int_equal(device_judge_queue(1243, 3928, 3940), DEVICE_QUEUE_UNKNOWN);
	/* the one-head disk at 2, 8 and 32 in flight: busy 12.7, 8.7, 8.4
	 * ms a request */
	assert_int_equal(device_judge_queue(317, 7982, 4013), DEVICE_QUEUE_SERIAL);
	assert_int_equal(device_judge_queue(466, 32219, 4073), DEVICE_QUEUE_SERIAL);
	assert_int_equal(device_judge_queue(508, 131948, 4264), DEVICE_QUEUE_SERIAL);
	/* a device serving 8 at once, 3 ms each, at 2 and 8 in flight: busy
	 * 1.6 and 0.4 ms a request */
	assert_int_equal(device_judge_queue(2431, 7803, 3962), DEVICE_QUEUE_OVERLAP);
	assert_int_equal(device_judge_queue(9616, 31060, 4039), DEVICE_QUEUE_OVERLAP);
	/* the edges: too few requests; under QUEUED_MIN in flight; nothing
	 * busy; busy exactly SEEK_US a request */
	assert_int_equal(device_judge_queue(QUEUE_WINDOW - 1, 100000, 1000),
	                 DEVICE_QUEUE_UNKNOWN);
	assert_int_equal(device_judge_queue(QUEUE_WINDOW, 100000, 1000),
	                 DEVICE_QUEUE_SERIAL);
	assert_int_equal(device_judge_queue(100, QUEUED_MIN * 10 - 1, 100),
	                 DEVICE_QUEUE_UNKNOWN);
	assert_int_equal(device_judge_queue(100, QUEUED_MIN * 10, 100),
	                 DEVICE_QUEUE_OVERLAP); /* busy 1 ms a request */
	assert_int_equal(device_judge_queue(100, QUEUED_MIN * 100, 1000),
	                 DEVICE_QUEUE_SERIAL);  /* 10 ms */
	assert_int_equal(device_judge_queue(100, 5000, 0), DEVICE_QUEUE_UNKNOWN);
	assert_int_equal(device_judge_queue(100, 1000, SEEK_US / 10), DEVICE_QUEUE_SERIAL);
	assert_int_equal(device_judge_queue(100, 1000, SEEK_US / 10 - 1),
	                 DEVICE_QUEUE_OVERLAP);
}

static void test_workers_table(void **state)
{
	(void)state;
	const enum device_fs all[] = { DEVICE_FS_OTHER, DEVICE_FS_EXT4, DEVICE_FS_XFS,
	                               DEVICE_FS_BTRFS, DEVICE_FS_MEMORY,
	                               DEVICE_FS_REMOTE };
	const enum device_queue queues[] = { DEVICE_QUEUE_UNKNOWN, DEVICE_QUEUE_SERIAL,
	                                     DEVICE_QUEUE_OVERLAP };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		enum device_fs fs = all[i];
		bool one_head = fs == DEVICE_FS_EXT4 || fs == DEVICE_FS_BTRFS;
		/* XFS whose reads seek, nothing read ahead: more than asked,
		 * whatever the queue (on the one-head disk 8 workers did
		 * better than one, 32 better than 8) */
		unsigned xfs = fs == DEVICE_FS_XFS ? DEVICE_WORKERS_WIDE : 0;
		/* one head, seen serving one request at a time, nothing read
		 * ahead: one worker at once on ext4 and btrfs (measured
		 * there) */
		assert_int_equal(device_workers_for(fs, DEVICE_READS_SEEK,
		                                    DEVICE_QUEUE_SERIAL, false, 2),
		                 one_head ? 1 : xfs);
		/* reads that seek but overlap (a queued device of 3 ms a
		 * read), or not seen queued yet: all */
		assert_int_equal(device_workers_for(fs, DEVICE_READS_SEEK,
		                                    DEVICE_QUEUE_OVERLAP, false, 2), xfs);
		assert_int_equal(device_workers_for(fs, DEVICE_READS_SEEK,
		                                    DEVICE_QUEUE_UNKNOWN, false, 2), xfs);
		for (size_t q = 0; q < sizeof queues / sizeof queues[0]; q++) {
			enum device_queue queue = queues[q];
			/* read ahead (ext4's blocks as root, XFS's windows): all */
			assert_int_equal(device_workers_for(fs, DEVICE_READS_SEEK, queue,
			                                    true, 2), 0);
			/* a queue, or nothing known: all */
			assert_int_equal(device_workers_for(fs, DEVICE_READS_MODERATE, queue,
			                                    false, 2), 0);
			assert_int_equal(device_workers_for(fs, DEVICE_READS_UNKNOWN, queue,
			                                    false, 2), 0);
			assert_int_equal(device_workers_for(fs, DEVICE_READS_NONE, queue,
			                                    false, 2), 0);
			/* fast reads: one per CPU on XFS (CPU-bound), one on
			 * btrfs (its unlinks at once contend), all elsewhere */
			assert_int_equal(device_workers_for(fs, DEVICE_READS_FAST, queue,
			                                    false, 2),
			                 fs == DEVICE_FS_XFS ? 2 : fs == DEVICE_FS_BTRFS ? 1 : 0);
			/* a walk that runs from memory: one on XFS and btrfs
			 * (their unlinks at once only contend), elsewhere as
			 * fast reads */
			bool one = fs == DEVICE_FS_XFS || fs == DEVICE_FS_BTRFS;
			assert_int_equal(device_workers_for(fs, DEVICE_READS_CACHED, queue,
			                                    false, 2), one ? 1 : 0);
			assert_int_equal(device_workers_for(fs, DEVICE_READS_CACHED, queue,
			                                    true, 2), one ? 1 : 0);
		}
	}
}

/* Workers held back: on XFS and btrfs until the reads are judged (never
 * while the walk runs from memory); on btrfs whose reads seek until the
 * queue is judged, whatever the walk does meanwhile (it is asked of the
 * device: workers started to judge it made one head seek); never
 * elsewhere. */
static void test_hold_table(void **state)
{
	(void)state;
	const enum device_fs all[] = { DEVICE_FS_OTHER, DEVICE_FS_EXT4, DEVICE_FS_XFS,
	                               DEVICE_FS_BTRFS, DEVICE_FS_MEMORY,
	                               DEVICE_FS_REMOTE };
	const enum device_queue queues[] = { DEVICE_QUEUE_UNKNOWN, DEVICE_QUEUE_SERIAL,
	                                     DEVICE_QUEUE_OVERLAP };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		enum device_fs fs = all[i];
		bool held = fs == DEVICE_FS_XFS || fs == DEVICE_FS_BTRFS;
		for (size_t q = 0; q < sizeof queues / sizeof queues[0]; q++) {
			assert_int_equal(device_hold_for(fs, DEVICE_READS_UNKNOWN, queues[q]),
			                 held);
			assert_int_equal(device_hold_for(fs, DEVICE_READS_CACHED, queues[q]),
			                 held);
			const enum device_reads judged[] = {
				DEVICE_READS_FAST, DEVICE_READS_MODERATE,
				DEVICE_READS_SEEK, DEVICE_READS_NONE
			};
			for (size_t j = 0; j < sizeof judged / sizeof judged[0]; j++) {
				bool want = fs == DEVICE_FS_BTRFS &&
				            judged[j] == DEVICE_READS_SEEK &&
				            queues[q] == DEVICE_QUEUE_UNKNOWN;
				assert_int_equal(device_hold_for(fs, judged[j], queues[q]), want);
			}
		}
	}
}

static void test_file_systems(void **state)
{
	(void)state;
	bool unsorted;
	assert_int_equal(device_fs_of(0xEF53, &unsorted), DEVICE_FS_EXT4);
	assert_false(unsorted);
	assert_int_equal(device_fs_of(0x58465342, &unsorted), DEVICE_FS_XFS);
	assert_int_equal(device_fs_of(0x9123683e, &unsorted), DEVICE_FS_BTRFS);
	assert_int_equal(device_fs_of(0x01021994, &unsorted), DEVICE_FS_MEMORY); /* tmpfs */
	assert_true(unsorted);
	assert_int_equal(device_fs_of(0x6969, &unsorted), DEVICE_FS_REMOTE);     /* NFS */
	assert_true(unsorted);
	assert_int_equal(device_fs_of(0x0bd00bd0, &unsorted), DEVICE_FS_REMOTE); /* Lustre */
	assert_true(unsorted);
	assert_int_equal(device_fs_of(0x65735546, &unsorted), DEVICE_FS_REMOTE); /* FUSE */
	assert_false(unsorted); /* not in gnulib's list */
	assert_int_equal(device_fs_of(0x12345678, &unsorted), DEVICE_FS_OTHER);
	assert_false(unsorted);
	/* a device that sysfs does not know and nothing is mounted from */
	assert_int_equal(device_block_of(-1, makedev(4000, 4000)), 0);
	assert_int_equal(device_open_node(makedev(4000, 4000), 0), -1);
	/* nothing to ask there */
	assert_int_equal(device_probe_queue(makedev(4000, 4000)), 0);
}

/* The test's own directory (tmpfs, or whatever $TMPDIR is): one profile
 * for it, asked once; on tmpfs, nothing measured, sorted or read ahead. */
static void test_own_directory(void **state)
{
	(void)state;
	char *dir = fx_mkdtemp();
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mkdirat(fd, "a", 0700), 0);
	int sub = openat(fd, "a", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(sub >= 0);
	struct stat st, st2;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(fstat(sub, &st2), 0);
	struct statfs fs;
	assert_int_equal(fstatfs(fd, &fs), 0);
	bool tmpfs = fs.f_type == 0x01021994;

	struct device_advisor *a = device_advisor_new(DEVICE_ADVISE_ALL);
	assert_non_null(a);
	struct device_walk w, w2;
	device_walk_init(&w, a);
	device_walk_init(&w2, a);
	assert_int_equal(device_measured(a, st.st_dev), DEVICE_READS_UNKNOWN);
	fstatfs_calls = 0;
	errno = 77;
	for (int i = 0; i < 100; i++) {
		device_dir_opened(&w, i % 2 ? sub : fd, i % 2 ? &st2 : &st);
		device_sort(&w, fd, &st, true);
		device_unsorted(&w, fd, &st);
		device_dir_opened(&w2, sub, &st2); /* another walk of the pool */
	}
	assert_int_equal(errno, 77);
	/* the file system asked once for the device, by all walks together */
	assert_int_equal(fstatfs_calls, 1);
	if (tmpfs) {
		assert_int_equal(device_measured(a, st.st_dev), DEVICE_READS_NONE);
		assert_int_equal(device_queue_of(a, st.st_dev), DEVICE_QUEUE_UNKNOWN);
		assert_false(device_sort(&w, fd, &st, true));
		assert_true(device_unsorted(&w, fd, &st));
		assert_int_equal(device_workers(&w, st.st_dev, 2), 0);
		assert_int_equal(w.total.requests + w.total.lookups + w.total.inodes, 0);
	} else {
		printf("(%s is not on tmpfs: its device's decisions are not checked)\n", dir);
	}
	/* taken as measured: the decisions follow (in memory: no fitting) */
	device_assume(a, fd, st.st_dev, DEVICE_READS_SEEK);
	assert_int_equal(device_measured(a, st.st_dev), DEVICE_READS_SEEK);
	assert_int_equal(device_queue_of(a, st.st_dev), DEVICE_QUEUE_SERIAL);
	if (tmpfs)
		assert_int_equal(device_workers(&w, st.st_dev, 2), 0);
	/* a device it has no profile of: no advice */
	assert_int_equal(device_workers(&w, makedev(4000, 4000), 2), 0);
	device_walk_fini(&w);
	device_walk_fini(&w2);
	device_advisor_free(a);
	/* without an advisor (out of memory): nothing, and no harm */
	struct device_walk none;
	device_walk_init(&none, NULL);
	assert_false(device_dir_opened(&none, fd, &st));
	assert_true(device_sort(&none, fd, &st, true));
	assert_false(device_sort(&none, fd, &st, false));
	assert_int_equal(device_workers(&none, st.st_dev, 2), 0);
	close(sub);
	close(fd);
	fx_cleanup(dir);
}

/* Block device @bdev's reads completed (sysfs stat, field 1). */
static bool stat_of(dev_t bdev, struct device_counters *c)
{
	char path[64];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/stat", major(bdev), minor(bdev));
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	unsigned long long reads;
	bool ok = fscanf(f, "%llu", &reads) == 1;
	fclose(f);
	c->reads = reads;
	return ok;
}

/* btrfs gives a subvolume's files an anonymous device of their own,
 * which the mount table does not show: the block device is found through
 * the mount of the directory's fd.  Root, and mkfs.btrfs: else skipped,
 * saying why.  The queue probe reads that device. */
static void test_btrfs_block_device(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		printf("(btrfs block device: skipped, needs root for a loop mount)\n");
		skip();
	}
	char *dir = fx_mkdtemp();
	char img[4200], mnt[4200], loop[64] = "";
	snprintf(img, sizeof img, "%.4000s/img", dir);
	snprintf(mnt, sizeof mnt, "%.4000s/mnt", dir);
	assert_int_equal(fx_make_image(img, 320LL << 20, mnt), 0);
	char *mkfs[] = { "mkfs.btrfs", "-q", "-f", img, NULL };
	if (fx_run(mkfs) != 0) {
		printf("(btrfs block device: skipped, mkfs.btrfs failed or is missing)\n");
		fx_cleanup(dir);
		skip();
	}
	/* a loop device of its own, by name, to compare with what the
	 * advisor finds */
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "losetup -f --show '%s'", img);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	bool attached = fgets(loop, sizeof loop, p) != NULL;
	attached = pclose(p) == 0 && attached;
	loop[strcspn(loop, "\n")] = '\0';
	char *mount[] = { "mount", loop, mnt, NULL };
	char *detach[] = { "losetup", "-d", loop, NULL };
	if (!attached || fx_run(mount) != 0) {
		printf("(btrfs block device: skipped, cannot loop-mount the image)\n");
		if (attached)
			fx_run(detach);
		fx_cleanup(dir);
		skip();
	}
	struct stat lb, st;
	assert_int_equal(stat(loop, &lb), 0);
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	dev_t found = device_block_of(fd, st.st_dev);
	close(fd);
	/* the queue probe: its reads all complete, and the device counts
	 * them (what the advisor judges it by) */
	struct device_counters before, after;
	assert_true(stat_of(lb.st_rdev, &before));
	long probed = device_probe_queue(lb.st_rdev);
	assert_true(stat_of(lb.st_rdev, &after));
	fx_unmount(mnt);
	fx_run(detach);
	fx_cleanup(dir);
	assert_int_equal(major(found), major(lb.st_rdev));
	assert_int_equal(minor(found), minor(lb.st_rdev));
	assert_int_equal(probed, QUEUE_PROBE_READS);
	assert_true(after.reads >= before.reads + QUEUE_PROBE_READS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_judge_reads),
		cmocka_unit_test(test_judge_queue),
		cmocka_unit_test(test_sort_table),
		cmocka_unit_test(test_workers_table),
		cmocka_unit_test(test_hold_table),
		cmocka_unit_test(test_file_systems),
		cmocka_unit_test(test_own_directory),
		cmocka_unit_test(test_btrfs_block_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
