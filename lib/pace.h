/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pacing a removal (fastrm_rmtree's max_rate and latency_target_us):
 * every removal of every worker takes a slot of one schedule, so that
 * together they make at most the rate allowed; with a latency target the
 * rate allowed follows what the removal does to its device. */
#ifndef FASTRM_PACE_H
#define FASTRM_PACE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct device_advisor;

/* How often the rate is judged again under a latency target, and what it
 * may fall to at most (entries per second). */
#define PACE_TICK_MS 200
#define PACE_MIN_RATE 10.0
/* Removals the schedule lets through at once after it fell behind (a
 * worker that slept past its slot catches up within this much time). */
#define PACE_CATCH_UP_MS 20
/* The least a window must hold for its latency to count: requests of the
 * device, or else removals timed. */
#define PACE_MIN_SAMPLES 4

struct pacer {
	pthread_mutex_t lock;
	double ceiling;          /* max_rate: entries/s at most, 0: none */
	double target_ms;        /* latency_target_us / 1000, 0: none */
	double rate;             /* allowed now, 0: unpaced */
	double latency_ms;       /* smoothed, < 0 until measured */
	int64_t next_ns;         /* the next free slot */
	int64_t tick_ns;         /* when the window being measured began */
	bool have_dev;           /* dev, requests0, wait0: the device watched */
	dev_t dev;
	unsigned long long requests0, wait0;
	uint64_t ops, op_ns;     /* removals in the window and their time */
	uint64_t waited_ns;      /* slept for the schedule, all workers */
	unsigned most;           /* the workers, at most in flight */
	unsigned allowed;        /* in flight at once now (a target) */
	unsigned inside;         /* in flight now, under the lock */
	unsigned calm;           /* windows well below the target in a row */
	pthread_cond_t turn;     /* inside fell below allowed */
	unsigned long long *out; /* the rate allowed now, for the caller */
	unsigned long long *out_in_flight; /* ...and the removals in flight */
};

/* A pacer for @max_rate (0: none) and @target_us (0: none), for a pool of
 * @workers; false when neither is asked (the removal is not paced;
 * nothing else is needed). */
bool pacer_init(struct pacer *p, double max_rate, unsigned long long target_us,
                unsigned workers, unsigned long long *out,
                unsigned long long *out_in_flight);
void pacer_fini(struct pacer *p);

/* Before a removal on @dev: wait for a turn among those in flight (with a
 * target) and for its slot (not past *@stop). */
void pacer_wait(struct pacer *p, struct device_advisor *a, dev_t dev,
                const volatile sig_atomic_t *stop);

/* How many workers may walk at once now (a latency target: as many as
 * may be in flight; else no limit). */
static inline unsigned pacer_allowed(const struct pacer *p)
{
	return p->target_ms > 0 ? __atomic_load_n(&p->allowed, __ATOMIC_RELAXED) : ~0u;
}

/* After it: it took @ns (and gives its turn back). */
void pacer_done(struct pacer *p, int64_t ns);

/* The rate to allow next (0: unpaced), from the one allowed (@rate), the
 * one made in the last window (@made), the latency seen in it (@latency_ms,
 * < 0: none seen), the target and the ceiling (0: none): above the
 * target, back off at once, in proportion (to half at most); well below
 * it, creep up by a twentieth; seeing nothing, hold; without a target,
 * the ceiling. */
double pace_next_rate(double rate, double made, double latency_ms,
                      double target_ms, double ceiling);

/* How many removals may be in flight at once next, from @allowed, at
 * most @most: above the target, half (1 at least); well below it, one
 * more; else, or nothing seen, as many. */
unsigned pace_next_workers(unsigned allowed, unsigned most, double latency_ms,
                           double target_ms);

int64_t pace_now_ns(void);

#endif
