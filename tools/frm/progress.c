/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frm --progress: the live line (see progress.h). */
#define _GNU_SOURCE
#include "progress.h"

#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Four redraws a second: the clock moves, the terminal is not flooded. */
#define REFRESH_NS 250000000L

/* Columns left free at the end of the line (see draw()). */
#define LINE_SPARE 3

/* No estimate for directories below this many entries (they are done
 * before a rate settles), nor before this many were removed from one. */
#define ESTIMATE_MIN_ENTRIES 10000
#define ESTIMATE_MIN_DONE 1000

/* ext4 fills the blocks of a hashed (large) directory to about this
 * fraction: measured 0.73, 0.70 and 0.67 on directories of 20,000, 200,000
 * and 1,000,000 files with 12-byte names made by fastrm-mktree (st_size
 * 544,768, 5,705,728 and 30,064,640 bytes for 20-byte records). */
#define EXT4_DIR_FILL 0.70

/* tmpfs counts 20 bytes of size per entry, "." and ".." included
 * (BOGO_DIRENT_SIZE in the kernel's mm/shmem.c). */
#define TMPFS_DIRENT_SIZE 20

static struct {
	pthread_mutex_t lock; /* the terminal line and every field below it */
	pthread_cond_t wake;
	pthread_t thread;
	bool running;         /* written by the main thread only */
	bool expecting;       /* main thread only: the estimate is on */
	atomic_uintmax_t removed;
	atomic_uintmax_t name_bytes; /* names removed while expecting */
	atomic_bool want_path;
	bool stop, shown, stdout_tty;
	const char *name;
	struct timespec start;
	char path[256];       /* the tail of a recently removed entry's path */
	/* the directory whose entries are estimated */
	bool expect;
	long magic;
	uintmax_t size, base;
	struct timespec since;
	const unsigned long long *total; /* the library's estimate, or NULL */
	const unsigned long long *pace;  /* the rate the library allows, or NULL */
	const unsigned long long *in_flight; /* ...the removals in flight */
	long refresh_ns;
} pg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
};

static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void progress_clock(char *buf, size_t size, double secs)
{
	unsigned long s = secs > 0 ? (unsigned long)(secs + 0.5) : 0;
	if (s >= 3600)
		snprintf(buf, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "%lu:%02lu", s / 60, s % 60);
}

uintmax_t progress_estimate(long fs_magic, uintmax_t size, double name_len)
{
	switch (fs_magic) {
	case TMPFS_MAGIC:
		return size / TMPFS_DIRENT_SIZE > 2 ? size / TMPFS_DIRENT_SIZE - 2 : 0;
	case EXT4_SUPER_MAGIC: { /* also ext2 and ext3 */
		if (name_len <= 0)
			return 0;
		/* a record: inode, rec_len, name_len, type, the name, to 4 bytes */
		double rec = 8 + 4 * ((unsigned long)(name_len + 3.5) / 4);
		return (uintmax_t)((double)size * EXT4_DIR_FILL / rec);
	}
	default:
		return 0;
	}
}

static unsigned columns(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* The flat directory's entries (progress_expect), or 0; *@done: those
 * removed from it, *@since: when it began. */
static uintmax_t flat_total(uintmax_t removed, uintmax_t *done)
{
	*done = removed - pg.base;
	if (!pg.expect || *done < ESTIMATE_MIN_DONE)
		return 0;
	double mean = (double)atomic_load_explicit(&pg.name_bytes,
	                                           memory_order_relaxed) / (double)*done;
	uintmax_t total = progress_estimate(pg.magic, pg.size, mean);
	return total >= ESTIMATE_MIN_ENTRIES ? total : 0;
}

/* " (42%)" and ", about 1:23 left", or " (?%)" and "" where nothing honest
 * can be said: the share of the entries in all (the library's estimate,
 * or a flat directory's, whichever is larger), never 100% before the
 * end; the time left at the rate seen so far. */
static void share_and_left(char *pct, size_t psize, char *buf, size_t size,
                           uintmax_t removed, const struct timespec *now)
{
	buf[0] = '\0';
	snprintf(pct, psize, " (?%%)");
	uintmax_t done, flat = flat_total(removed, &done);
	uintmax_t lib = pg.total ? __atomic_load_n(pg.total, __ATOMIC_RELAXED) : 0;
	uintmax_t total = flat ? pg.base + flat : 0;
	if (lib > total)
		total = lib;
	if (!total)
		return;
	unsigned share = removed >= total ? 99 : (unsigned)(removed * 100 / total);
	snprintf(pct, psize, " (%u%%)", share > 99 ? 99 : share);
	double t = seconds(flat ? &pg.since : &pg.start, now);
	uintmax_t left = removed >= total ? 0 : total - removed;
	uintmax_t base = flat ? done : removed;
	if (base < ESTIMATE_MIN_DONE || !left || t <= 0)
		return;
	char clk[32];
	progress_clock(clk, sizeof clk, (double)left * t / (double)base);
	snprintf(buf, size, ", about %s left", clk);
}

/* Draw the line; called with the lock held.  Fields that do not fit go
 * whole (the path's tail first, then the rate, the elapsed time, the time
 * left), never cut in the middle. */
static void draw(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uintmax_t n = atomic_load_explicit(&pg.removed, memory_order_relaxed);
	double t = seconds(&pg.start, &now);
	char clk[32], count[96], rate[48], elapsed[48], left[64], head[256], pct[16];
	progress_clock(clk, sizeof clk, t);
	share_and_left(pct, sizeof pct, left, sizeof left, n, &now);
	snprintf(count, sizeof count, "%s: %ju removed%s", pg.name, n, pct);
	unsigned long long paced = pg.pace ? __atomic_load_n(pg.pace, __ATOMIC_RELAXED) : 0;
	unsigned long long inflight = pg.in_flight ? __atomic_load_n(pg.in_flight,
	                                                             __ATOMIC_RELAXED) : 0;
	if (paced)
		snprintf(rate, sizeof rate, ", %.0f/s (paced to %llu/s)",
		         t > 0 ? (double)n / t : 0.0, paced);
	else if (inflight)
		snprintf(rate, sizeof rate, ", %.0f/s (paced: %llu at once)",
		         t > 0 ? (double)n / t : 0.0, inflight);
	else
		snprintf(rate, sizeof rate, ", %.0f/s", t > 0 ? (double)n / t : 0.0);
	snprintf(elapsed, sizeof elapsed, ", %s elapsed", clk);
	/* Three columns stay free, so that neither the line nor the
	 * terminal's echo of ^C after it wraps: clearing the line then
	 * clears it all. */
	long width = (long)columns() - LINE_SPARE;
	char *optional[] = { rate, elapsed, left }; /* dropped in this order */
	for (size_t i = 0; i < 3; i++) {
		long h = (long)(strlen(count) + strlen(rate) + strlen(elapsed) + strlen(left));
		if (h <= width)
			break;
		optional[i][0] = '\0';
	}
	int h = snprintf(head, sizeof head, "%s%s%s%s", count, rate, elapsed, left);
	if (h < 0)
		return;
	if (h > width) /* a terminal narrower than the count alone */
		head[width > 0 ? width : 0] = '\0';
	/* The path gets what is left of the width, its tail first. */
	char tail[sizeof pg.path + 4] = "";
	long room = width - 2 - h;
	size_t len = strlen(pg.path);
	if (room >= 8 && len > 0) {
		const char *p = pg.path;
		if ((long)len > room) {
			p += len - (size_t)(room - 3);
			while ((*p & 0xc0) == 0x80) /* not inside a UTF-8 character */
				p++;
			strcpy(tail, "...");
		}
		size_t t0 = strlen(tail);
		for (size_t i = 0; p[i] && t0 + i < sizeof tail - 1; i++) {
			unsigned char c = (unsigned char)p[i];
			tail[t0 + i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
			tail[t0 + i + 1] = '\0';
		}
	}
	fprintf(stderr, "\r%s%s%s\033[K", head, tail[0] ? "  " : "", tail);
	fflush(stderr);
	pg.shown = true;
}

static void clear_line(void)
{
	if (pg.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		pg.shown = false;
	}
}

static void *run(void *arg)
{
	(void)arg;
	struct timespec due;
	clock_gettime(CLOCK_MONOTONIC, &due);
	pthread_mutex_lock(&pg.lock);
	while (!pg.stop) {
		due.tv_nsec += pg.refresh_ns;
		if (due.tv_nsec >= 1000000000L) {
			due.tv_nsec -= 1000000000L;
			due.tv_sec++;
		}
		while (!pg.stop &&
		       pthread_cond_timedwait(&pg.wake, &pg.lock, &due) == 0)
			;
		if (pg.stop)
			break;
		draw();
		atomic_store_explicit(&pg.want_path, true, memory_order_relaxed);
	}
	pthread_mutex_unlock(&pg.lock);
	return NULL;
}

bool progress_start(const char *program_name)
{
	if (pg.running || !isatty(STDERR_FILENO))
		return false;
	/* the line starts with the program's name, not the path it was
	 * started by (messages keep argv[0], as GNU rm's) */
	const char *slash = strrchr(program_name, '/');
	pg.name = slash && slash[1] ? slash + 1 : program_name;
	pg.stdout_tty = isatty(STDOUT_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &pg.start);
	/* FRM_PROGRESS_INTERVAL_MS (10 to 1000): redraws more often, for
	 * bench/fastrm-progress to see the share as it moves */
	const char *iv = getenv("FRM_PROGRESS_INTERVAL_MS");
	long ms = iv ? strtol(iv, NULL, 10) : 0;
	pg.refresh_ns = ms >= 10 && ms <= 1000 ? ms * 1000000L : REFRESH_NS;

	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&pg.wake);
	pthread_cond_init(&pg.wake, &ca);
	pthread_condattr_destroy(&ca);

	/* Signals stay with the main thread, which stops the removal. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pg.running = pthread_create(&pg.thread, NULL, run, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pg.running;
}

void progress_stop(void)
{
	if (!pg.running)
		return;
	pthread_mutex_lock(&pg.lock);
	pg.stop = true;
	pthread_cond_signal(&pg.wake);
	pthread_mutex_unlock(&pg.lock);
	pthread_join(pg.thread, NULL);
	pg.running = false;
	clear_line();
}

void progress_removed(const char *path)
{
	if (!pg.running)
		return;
	/* one writer: a load and a store, no read-modify-write */
	atomic_store_explicit(&pg.removed,
	                      atomic_load_explicit(&pg.removed, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
	if (pg.expecting) {
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		atomic_store_explicit(&pg.name_bytes,
		                      atomic_load_explicit(&pg.name_bytes,
		                                           memory_order_relaxed) + strlen(base),
		                      memory_order_relaxed);
	}
	if (!atomic_load_explicit(&pg.want_path, memory_order_relaxed))
		return;
	pthread_mutex_lock(&pg.lock);
	size_t len = strlen(path);
	const char *p = len < sizeof pg.path ? path : path + len - (sizeof pg.path - 1);
	memcpy(pg.path, p, strlen(p) + 1);
	atomic_store_explicit(&pg.want_path, false, memory_order_relaxed);
	pthread_mutex_unlock(&pg.lock);
}

void progress_expect(long fs_magic, uintmax_t size)
{
	if (!pg.running)
		return;
	pthread_mutex_lock(&pg.lock);
	pg.expect = true;
	pg.magic = fs_magic;
	pg.size = size;
	pg.base = atomic_load_explicit(&pg.removed, memory_order_relaxed);
	atomic_store_explicit(&pg.name_bytes, 0, memory_order_relaxed);
	clock_gettime(CLOCK_MONOTONIC, &pg.since);
	pg.expecting = true;
	pthread_mutex_unlock(&pg.lock);
}

void progress_total(const unsigned long long *estimate)
{
	pthread_mutex_lock(&pg.lock); /* draw() reads it under the lock */
	pg.total = estimate;
	pthread_mutex_unlock(&pg.lock);
}

void progress_pace(const unsigned long long *rate, const unsigned long long *in_flight)
{
	pthread_mutex_lock(&pg.lock);
	pg.pace = rate;
	pg.in_flight = in_flight;
	pthread_mutex_unlock(&pg.lock);
}

void progress_expect_end(void)
{
	if (!pg.running || !pg.expecting)
		return;
	pthread_mutex_lock(&pg.lock);
	pg.expect = pg.expecting = false;
	pthread_mutex_unlock(&pg.lock);
}

void progress_hold(void)
{
	if (!pg.running)
		return;
	pthread_mutex_lock(&pg.lock);
	clear_line();
}

void progress_release(void)
{
	if (!pg.running)
		return;
	if (pg.stdout_tty)
		fflush(stdout);
	fflush(stderr);
	pthread_mutex_unlock(&pg.lock);
}
