/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fastrm-disk: an emulated block device for the benchmark harness.
 *
 *   fastrm-disk MOUNTPOINT BACKING_FILE MODEL
 *
 * Serves one file, MOUNTPOINT/disk, through FUSE: every read and write is
 * made on BACKING_FILE (a sparse host file), then held back until the
 * disk model says the request is served.  A loop device with direct I/O
 * on MOUNTPOINT/disk gives a block device with the model's timing, several
 * requests in flight, and any file system on top.  MOUNTPOINT/stats reads
 * as the counters so far (requests, bytes, seeks, busy time).
 *
 * MODEL
 *   hdd          a 7200-rpm disk with one head: a request that starts where
 *                the previous one ended costs its transfer only; any other
 *                pays a seek of SEEK_MIN + (SEEK_MAX - SEEK_MIN) *
 *                sqrt(distance / capacity), half a revolution (4.17 ms) and
 *                its transfer at 150 MB/s.  Queued requests are served one
 *                at a time in elevator order (the nearest ahead of the
 *                head in its direction of travel, then turning back).
 *   lat:T:qN     every request takes T (for example 1ms, 500us), and up
 *                to N are served at once (a SAN, an array, a network
 *                block device): "lat:1ms:q8".
 *
 * Not modelled: caches in the device (every request pays its time, writes
 * included), rotational position (the rotation is always the mean),
 * zoned transfer rates, command overheads, and the time FUSE itself adds
 * (tens of microseconds per request).
 *
 * FASTRM_DISK_LOG=FILE (hdd): one line a request as it is served: seconds
 * since start, R or W, byte offset, length, 1 if it seeked, its time in ns.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The 7200-rpm model.  Seek times as a datasheet gives them: about 0.8 ms
 * track to track, 8.5 ms for a third of the stroke (the average seek), and
 * a full stroke near 15 ms; sqrt(1/3) * 14.2 + 0.8 = 9.0 ms. */
#define SEEK_MIN_NS 800000.0
#define SEEK_MAX_NS 15000000.0
#define ROTATION_NS (60e9 / 7200 / 2)   /* half a revolution: 4.17 ms */
#define TRANSFER_BYTES_PER_S 150e6

enum model_kind { HDD, LATENCY };

static struct {
	enum model_kind kind;
	int backing;
	uint64_t capacity;
	uint64_t latency_ns;
	unsigned queue_depth;

	pthread_mutex_t lock;
	pthread_cond_t queued, slot_free;
	struct request *queue;   /* hdd: waiting for the head */
	uint64_t head;           /* hdd: where the last request ended */
	bool upward;             /* hdd: the elevator's direction */
	unsigned in_flight;      /* lat: requests being served */
	struct timespec busy_since;

	FILE *log;               /* hdd: FASTRM_DISK_LOG, one line a request */
	struct timespec start;

	/* counters, under lock */
	uint64_t reads, writes, read_bytes, write_bytes, seeks, busy_ns;
} disk = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.queued = PTHREAD_COND_INITIALIZER,
	.slot_free = PTHREAD_COND_INITIALIZER,
	.upward = true,
};

struct request {
	uint64_t off, len;
	bool write, done;
	pthread_cond_t served;
	struct request *next;
};

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000LL +
	                  (b->tv_nsec - a->tv_nsec));
}

static void add_ns(struct timespec *t, uint64_t ns)
{
	t->tv_sec += (time_t)(ns / 1000000000u);
	t->tv_nsec += (long)(ns % 1000000000u);
	if (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

/* hdd: the time one request takes with the head at disk.head. */
static uint64_t service_ns(const struct request *r, bool *seek)
{
	double xfer = (double)r->len / TRANSFER_BYTES_PER_S * 1e9;
	*seek = r->off != disk.head;
	if (!*seek)
		return (uint64_t)xfer;
	uint64_t d = r->off > disk.head ? r->off - disk.head : disk.head - r->off;
	double frac = (double)d / (double)disk.capacity;
	double seek_ns = SEEK_MIN_NS + (SEEK_MAX_NS - SEEK_MIN_NS) * sqrt(frac > 1 ? 1 : frac);
	return (uint64_t)(seek_ns + ROTATION_NS + xfer);
}

/* hdd: take the next request in elevator order; called with the lock. */
static struct request *elevator_pick(void)
{
	for (int pass = 0; pass < 2; pass++) {
		struct request **best = NULL;
		for (struct request **p = &disk.queue; *p; p = &(*p)->next) {
			uint64_t off = (*p)->off;
			bool ahead = disk.upward ? off >= disk.head : off <= disk.head;
			if (ahead && (!best || (disk.upward ? off < (*best)->off
			                                    : off > (*best)->off)))
				best = p;
		}
		if (best) {
			struct request *r = *best;
			*best = r->next;
			return r;
		}
		disk.upward = !disk.upward;
	}
	return NULL;
}

/* hdd: the head, serving one request at a time. */
static void *head_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&disk.lock);
	for (;;) {
		while (!disk.queue)
			pthread_cond_wait(&disk.queued, &disk.lock);
		struct request *r = elevator_pick();
		bool seek;
		uint64_t ns = service_ns(r, &seek);
		disk.head = r->off + r->len;
		pthread_mutex_unlock(&disk.lock);

		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		add_ns(&until, ns);
		sleep_until(&until);

		pthread_mutex_lock(&disk.lock);
		disk.busy_ns += ns;
		disk.seeks += seek;
		if (disk.log) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			fprintf(disk.log, "%.6f %c %ju %ju %d %ju\n",
			        (double)ns_between(&disk.start, &now) / 1e9,
			        r->write ? 'W' : 'R', (uintmax_t)r->off, (uintmax_t)r->len,
			        seek, (uintmax_t)ns);
		}
		r->done = true;
		pthread_cond_signal(&r->served);
	}
	return NULL;
}

static void account(uint64_t len, bool write)
{
	if (write) {
		disk.writes++;
		disk.write_bytes += len;
	} else {
		disk.reads++;
		disk.read_bytes += len;
	}
}

/* Hold the caller until the model has served this request. */
static void model_serve(uint64_t off, uint64_t len, bool write)
{
	pthread_mutex_lock(&disk.lock);
	account(len, write);
	if (disk.kind == HDD) {
		struct request r = { .off = off, .len = len, .write = write };
		pthread_cond_init(&r.served, NULL);
		r.next = disk.queue;
		disk.queue = &r;
		pthread_cond_signal(&disk.queued);
		while (!r.done)
			pthread_cond_wait(&r.served, &disk.lock);
		pthread_cond_destroy(&r.served);
		pthread_mutex_unlock(&disk.lock);
		return;
	}
	while (disk.in_flight >= disk.queue_depth)
		pthread_cond_wait(&disk.slot_free, &disk.lock);
	if (disk.in_flight++ == 0)
		clock_gettime(CLOCK_MONOTONIC, &disk.busy_since);
	pthread_mutex_unlock(&disk.lock);

	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	add_ns(&until, disk.latency_ns);
	sleep_until(&until);

	pthread_mutex_lock(&disk.lock);
	if (--disk.in_flight == 0) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		disk.busy_ns += ns_between(&disk.busy_since, &now);
	}
	pthread_cond_signal(&disk.slot_free);
	pthread_mutex_unlock(&disk.lock);
}

/* ------------------------------------------------------------- FUSE */

#define STATS_SIZE 4096

static int stats_text(char *buf, size_t size)
{
	pthread_mutex_lock(&disk.lock);
	uint64_t busy = disk.busy_ns;
	if (disk.kind == LATENCY && disk.in_flight > 0) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		busy += ns_between(&disk.busy_since, &now);
	}
	int n = snprintf(buf, size,
	                 "reads %ju\nwrites %ju\nread_bytes %ju\nwrite_bytes %ju\n"
	                 "seeks %ju\nbusy_ns %ju\n",
	                 (uintmax_t)disk.reads, (uintmax_t)disk.writes,
	                 (uintmax_t)disk.read_bytes, (uintmax_t)disk.write_bytes,
	                 (uintmax_t)disk.seeks, (uintmax_t)busy);
	pthread_mutex_unlock(&disk.lock);
	return n;
}

static int d_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof *st);
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (strcmp(path, "/disk") == 0) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)disk.capacity;
	} else if (strcmp(path, "/stats") == 0) {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = STATS_SIZE;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int d_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                     struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off; (void)fi; (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "disk", NULL, 0, 0);
	fill(buf, "stats", NULL, 0, 0);
	return 0;
}

static int d_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/disk") != 0 && strcmp(path, "/stats") != 0)
		return -ENOENT;
	fi->direct_io = 1; /* every request reaches the model */
	return 0;
}

static int d_read(const char *path, char *buf, size_t size, off_t off,
                  struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/stats") == 0) {
		char text[STATS_SIZE];
		int n = stats_text(text, sizeof text);
		if (off >= n)
			return 0;
		size_t len = (size_t)(n - off) < size ? (size_t)(n - off) : size;
		memcpy(buf, text + off, len);
		return (int)len;
	}
	ssize_t n = pread(disk.backing, buf, size, off);
	if (n < 0)
		return -errno;
	model_serve((uint64_t)off, size, false);
	return (int)n;
}

static int d_write(const char *path, const char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/disk") != 0)
		return -EACCES;
	ssize_t n = pwrite(disk.backing, buf, size, off);
	if (n < 0)
		return -errno;
	model_serve((uint64_t)off, size, true);
	return (int)n;
}

/* Discards from the loop device arrive as hole punches: made, not timed. */
static int d_fallocate(const char *path, int mode, off_t off, off_t len,
                       struct fuse_file_info *fi)
{
	(void)path; (void)fi;
	return fallocate(disk.backing, mode, off, len) == 0 ? 0 : -errno;
}

static int d_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path; (void)datasync; (void)fi;
	return 0; /* the model has no cache to flush */
}

static void *d_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Let the kernel keep many requests in flight (its default is 12). */
	conn->max_background = 128;
	conn->congestion_threshold = 96;
	cfg->direct_io = 1;
	cfg->attr_timeout = 3600;
	return NULL;
}

static const struct fuse_operations ops = {
	.getattr = d_getattr,
	.readdir = d_readdir,
	.open = d_open,
	.read = d_read,
	.write = d_write,
	.fallocate = d_fallocate,
	.fsync = d_fsync,
	.init = d_init,
};

/* "1ms", "500us", "2.5ms" in nanoseconds; 0 when it does not parse. */
static uint64_t parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return 0;
	if (strcmp(end, "ms") == 0)
		return (uint64_t)(v * 1e6);
	if (strcmp(end, "us") == 0)
		return (uint64_t)(v * 1e3);
	if (strcmp(end, "s") == 0)
		return (uint64_t)(v * 1e9);
	return 0;
}

static bool parse_model(const char *m)
{
	if (strcmp(m, "hdd") == 0) {
		disk.kind = HDD;
		return true;
	}
	char buf[64];
	snprintf(buf, sizeof buf, "%s", m);
	char *save, *kind = strtok_r(buf, ":", &save);
	char *lat = strtok_r(NULL, ":", &save), *q = strtok_r(NULL, ":", &save);
	if (!kind || strcmp(kind, "lat") != 0 || !lat || !q || q[0] != 'q')
		return false;
	disk.kind = LATENCY;
	disk.latency_ns = parse_duration(lat);
	disk.queue_depth = (unsigned)atoi(q + 1);
	return disk.latency_ns > 0 && disk.queue_depth > 0 && disk.queue_depth <= 1024;
}

int main(int argc, char **argv)
{
	if (argc != 4 || !parse_model(argv[3])) {
		fprintf(stderr, "usage: %s MOUNTPOINT BACKING_FILE hdd|lat:TIME:qN\n",
		        argv[0]);
		return 2;
	}
	disk.backing = open(argv[2], O_RDWR | O_CLOEXEC);
	struct stat st;
	if (disk.backing < 0 || fstat(disk.backing, &st) != 0) {
		perror(argv[2]);
		return 1;
	}
	disk.capacity = (uint64_t)st.st_size;
	/* Sleeps of a millisecond must not be stretched by timer slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &disk.start);
	const char *log = getenv("FASTRM_DISK_LOG");
	if (log && disk.kind == HDD && !(disk.log = fopen(log, "ae"))) {
		perror(log);
		return 1;
	}
	if (disk.kind == HDD) {
		pthread_t t;
		if (pthread_create(&t, NULL, head_thread, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	char *fargs[] = { argv[0], argv[1], "-f", "-o", "max_idle_threads=256",
	                  NULL };
	int rc = fuse_main(5, fargs, &ops, NULL);
	if (disk.log) {
		pthread_mutex_lock(&disk.lock);
		fclose(disk.log);
		disk.log = NULL;
		pthread_mutex_unlock(&disk.lock);
	}
	return rc;
}
