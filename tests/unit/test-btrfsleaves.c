/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* btrfs's leaves read ahead in windows (lib/device/btrfs-leaves.c), on a
 * btrfs image of the test's own, cold after a remount: a window makes
 * btrfs read the leaves in it from the device (the device's counters go
 * up by as many reads), after which searching them again reads nothing
 * more than the window itself; a second look into the same window is a
 * hit; nothing is read where reads do not seek; without CAP_SYS_ADMIN the
 * windows are off; and the advisor reads them for a directory and its
 * entries where reads seek.  Root and mkfs.btrfs, else skipped, saying
 * why. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device/strategies.h"
#include "fixture.h"

/* Files in the tree: with 200 bytes of inline data each, btrfs puts
 * about 30 to a 16 KiB leaf, so some 500 leaves. */
#define DIRS 40
#define FILES 400

struct image {
	char *dir;
	char img[4200], mnt[4200], tree[4300];
};

/* A btrfs image with the tree on it, mounted cold; false: skipped. */
static bool make_image(struct image *im)
{
	if (geteuid() != 0) {
		printf("(btrfs leaves: skipped, needs root for a loop mount)\n");
		return false;
	}
	im->dir = fx_mkdtemp();
	snprintf(im->img, sizeof im->img, "%.4000s/img", im->dir);
	snprintf(im->mnt, sizeof im->mnt, "%.4000s/mnt", im->dir);
	snprintf(im->tree, sizeof im->tree, "%.4100s/t", im->mnt);
	assert_int_equal(fx_make_image(im->img, 512LL << 20, im->mnt), 0);
	char *mkfs[] = { "mkfs.btrfs", "-q", "-f", im->img, NULL };
	if (fx_run(mkfs) != 0) {
		printf("(btrfs leaves: skipped, mkfs.btrfs failed or is missing)\n");
		fx_cleanup(im->dir);
		return false;
	}
	char *mount[] = { "mount", "-o", "loop", im->img, im->mnt, NULL };
	if (fx_run(mount) != 0) {
		printf("(btrfs leaves: skipped, cannot loop-mount the image)\n");
		fx_cleanup(im->dir);
		return false;
	}
	assert_int_equal(mkdir(im->tree, 0755), 0);
	int t = open(im->tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t >= 0);
	char data[200];
	memset(data, 'x', sizeof data - 1);
	data[sizeof data - 1] = '\0';
	for (int d = 0; d < DIRS; d++) {
		char name[64];
		snprintf(name, sizeof name, "d%d", d);
		assert_int_equal(mkdirat(t, name, 0755), 0);
		for (int f = 0; f < FILES; f++) {
			snprintf(name, sizeof name, "d%d/f%d", d, f);
			fx_write_file(t, name, data);
		}
	}
	close(t);
	/* cold: nothing of the file system cached */
	assert_int_equal(fx_loop_remount(im->img, im->mnt), 0);
	return true;
}

static void drop_image(struct image *im)
{
	fx_unmount(im->mnt);
	fx_cleanup(im->dir);
}

/* Reads completed by block device @bdev so far (sysfs stat, field 1):
 * btrfs's st_dev is a device of its own, with no counters. */
static long device_reads(dev_t bdev)
{
	char path[128];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/stat", major(bdev),
	         minor(bdev));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	long reads = -1;
	assert_int_equal(fscanf(f, "%ld", &reads), 1);
	fclose(f);
	return reads;
}

/* The inode number of @tree/d0/f0. */
static unsigned long long first_file(const char *tree)
{
	char path[4400];
	snprintf(path, sizeof path, "%.4300s/d0/f0", tree);
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	return (unsigned long long)st.st_ino;
}

static void test_window(void **state)
{
	(void)state;
	struct image im;
	if (!make_image(&im))
		skip();
	int fd = open(im.tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	dev_t bdev = device_block_of(fd, st.st_dev);
	assert_true(bdev != 0);
	unsigned long long ino = first_file(im.tree);

	struct btrfs_leaves *b = btrfs_leaves_new();
	assert_non_null(b);
	/* reads that do not seek: nothing */
	long before = device_reads(bdev);
	assert_int_equal(btrfs_leaves_at(b, fd, st.st_dev, bdev, ino, false), 0);
	assert_int_equal(device_reads(bdev), before);
	/* the window: btrfs reads the leaves in it, one read each (the tree
	 * is some 500 leaves; a window of 4 MiB holds 256 of 16 KiB, and the
	 * first one seen here 246) */
	long n = btrfs_leaves_at(b, fd, st.st_dev, bdev, ino, true);
	long read = device_reads(bdev) - before;
	printf("(window: %ld leaves searched, %ld reads)\n", n, read);
	assert_true(n >= BTRFS_WINDOW / 16384 / 4);
	assert_true(read >= n / 2);
	assert_int_equal(btrfs_leaves_read(b), n);
	assert_false(btrfs_leaves_off(b, st.st_dev));
	/* the same window again: a hit, nothing read */
	before = device_reads(bdev);
	assert_int_equal(btrfs_leaves_at(b, fd, st.st_dev, bdev, ino, true), 0);
	assert_int_equal(device_reads(bdev), before);
	btrfs_leaves_free(b);

	/* a new set of windows searches the same leaves: btrfs has them
	 * cached, and only the window itself is read from the device */
	b = btrfs_leaves_new();
	assert_non_null(b);
	before = device_reads(bdev);
	long again = btrfs_leaves_at(b, fd, st.st_dev, bdev, ino, true);
	read = device_reads(bdev) - before;
	printf("(again: %ld leaves searched, %ld reads)\n", again, read);
	assert_int_equal(again, n);
	assert_true(read < n / 8);
	btrfs_leaves_free(b);

	/* without CAP_SYS_ADMIN (a plain user): off, nothing read */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		struct btrfs_leaves *u = btrfs_leaves_new();
		long got = u ? btrfs_leaves_at(u, fd, st.st_dev, bdev, ino, true) : -1;
		bool off = btrfs_leaves_off(u, st.st_dev);
		btrfs_leaves_free(u);
		_exit(got == 0 && off ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(fd);
	drop_image(&im);
}

/* The advisor, told that the device's reads seek: a directory opened has
 * its window read, and its entries go out through device_entry_out(). */
static void test_advisor(void **state)
{
	(void)state;
	struct image im;
	if (!make_image(&im))
		skip();
	char path[4400];
	snprintf(path, sizeof path, "%.4300s/d1", im.tree);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	dev_t bdev = device_block_of(fd, st.st_dev);
	assert_true(bdev != 0);
	struct device_advisor *a = device_advisor_new(DEVICE_ADVISE_ALL);
	assert_non_null(a);
	struct device_walk w;
	device_walk_init(&w, a);
	/* not measured yet: nothing read ahead */
	device_dir_opened(&w, fd, &st);
	assert_int_equal(w.total.leaves, 0);
	device_assume(a, fd, st.st_dev, DEVICE_READS_SEEK);
	long before = device_reads(bdev);
	assert_true(device_dir_opened(&w, fd, &st));
	assert_true(w.total.leaves > 0);
	assert_true(device_reads(bdev) > before);
	/* the entries are in the window read */
	long leaves = w.total.leaves;
	DIR *d = fdopendir(dup(fd));
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		device_entry_out(&w, fd, &st, e->d_ino, false);
	closedir(d);
	assert_int_equal(w.total.leaves, leaves);
	struct device_totals t = { 0 };
	device_totals_add(&t, &w);
	assert_int_equal(t.leaves, leaves);
	device_walk_fini(&w);
	device_advisor_free(a);
	close(fd);
	drop_image(&im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_advisor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
