/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue probe: whether a device whose reads seek serves its requests
 * one at a time, asked of the device itself rather than learnt from the
 * walks' own requests.
 *
 * Why: on btrfs whose reads seek (and on ext4 where nothing reads ahead)
 * the pool is fitted to one worker where the device serves one request at
 * a time, and lets its workers run where it serves several at once (a
 * queued device of 3 ms a read: 8 workers 0.57x of GNU rm's time, one
 * 1.0x; doc/archive/results-0.5.md, "Queued device of 3 ms a read").
 * The device's counters tell the two apart only while about two requests
 * or more are in flight; one walk keeps one.
 * Before 0.5.4 the pool started workers to put more in flight, whether
 * they started before the queue was judged depended on timing, and on a
 * one-head disk workers in different subtrees make the head seek between
 * them (btrfs, an aged real tree, cold, one-head disk, a held-out
 * measure: 1.40x and 1.45x of GNU rm's time in two rounds of three, twice
 * its seeks, --jobs=1 level).  Now no worker starts before the answer,
 * whatever the timing (unit.hold; doc/results.md, "btrfs cold on the
 * one-head disk").
 *
 * How: QUEUE_PROBE_READS reads of QUEUE_PROBE_LEN bytes each, direct (past
 * the page cache), at offsets spread evenly over the whole device and taken in a
 * scrambled order, all submitted at once with the kernel's own
 * asynchronous I/O (io_submit: no thread, no library); the caller then
 * judges the device's counters over them as it judges the walks'
 * (device_judge_queue: a head busy SEEK_US or more per request however
 * many wait is one head).
 *
 * Bounds: once per device per advisor, where the answer decides the
 * workers (device.c: queue_decides()); QUEUE_PROBE_READS x QUEUE_PROBE_LEN
 * bytes of buffer; on the harness's one-head disk about 0.2 s (8-9 ms a request at
 * depth 24), on a device that serves them at once a few ms.  Needs the
 * block device open for reading (root, or the disk group): without it no
 * probe, and the workers stay held (one worker: GNU rm's pace).
 */
#define _GNU_SOURCE
#include "strategies.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long the probe waits for its reads at most: a device that has not
 * served 24 reads in this long is not one whose workers need fitting
 * soon; the probe stops waiting (and its context is torn down, which
 * waits for what is still in flight). */
#define QUEUE_PROBE_WAIT_S 5

static long io_setup_(unsigned n, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, n, ctx);
}

static long io_destroy_(aio_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx);
}

static long io_submit_(aio_context_t ctx, long n, struct iocb **iocbs)
{
	return syscall(SYS_io_submit, ctx, n, iocbs);
}

static long io_getevents_(aio_context_t ctx, long min, long max,
                          struct io_event *ev, struct timespec *timeout)
{
	return syscall(SYS_io_getevents, ctx, min, max, ev, timeout);
}

long device_probe_queue(dev_t bdev)
{
	int saved = errno;
	long done = 0;
	unsigned long long size = 0;
	void *buf = NULL;
	aio_context_t ctx = 0;
	/* direct reads: past the page cache */
	int fd = device_open_node(bdev, O_DIRECT);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) != 0 ||
	    size < (unsigned long long)QUEUE_PROBE_READS * QUEUE_PROBE_LEN * 2)
		goto out;
	if (posix_memalign(&buf, QUEUE_PROBE_LEN, (size_t)QUEUE_PROBE_READS * QUEUE_PROBE_LEN) != 0) {
		buf = NULL;
		goto out;
	}
	if (io_setup_(QUEUE_PROBE_READS, &ctx) != 0) {
		ctx = 0;
		goto out;
	}
	struct iocb cb[QUEUE_PROBE_READS], *cbs[QUEUE_PROBE_READS];
	unsigned long long stride = size / QUEUE_PROBE_READS / QUEUE_PROBE_LEN * QUEUE_PROBE_LEN;
	for (unsigned i = 0; i < QUEUE_PROBE_READS; i++) {
		/* scrambled (7 and QUEUE_PROBE_READS share no factor): the device's
		 * elevator, if it has one, orders them itself */
		unsigned slot = (i * 7) % QUEUE_PROBE_READS;
		memset(&cb[i], 0, sizeof cb[i]);
		cb[i].aio_fildes = (uint32_t)fd;
		cb[i].aio_lio_opcode = IOCB_CMD_PREAD;
		cb[i].aio_buf = (uint64_t)(uintptr_t)((char *)buf + (size_t)i * QUEUE_PROBE_LEN);
		cb[i].aio_nbytes = QUEUE_PROBE_LEN;
		cb[i].aio_offset = (int64_t)(slot * stride + stride / 2 / QUEUE_PROBE_LEN * QUEUE_PROBE_LEN);
		cbs[i] = &cb[i];
	}
	long submitted = io_submit_(ctx, QUEUE_PROBE_READS, cbs);
	if (submitted <= 0)
		goto out;
	struct io_event ev[QUEUE_PROBE_READS];
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += QUEUE_PROBE_WAIT_S;
	long got = 0;
	while (got < submitted) {
		struct timespec now, left;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		if (left.tv_sec < 0)
			break;
		long n = io_getevents_(ctx, 1, submitted - got, ev, &left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (long i = 0; i < n; i++)
			done += ev[i].res == QUEUE_PROBE_LEN;
		got += n;
	}
out:
	if (ctx)
		io_destroy_(ctx); /* waits for what is still in flight */
	free(buf);
	if (fd >= 0)
		close(fd);
	errno = saved;
	return done;
}
