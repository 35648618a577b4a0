/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pacing a removal: one schedule of slots for every worker, and the rate
 * that a latency target allows (pace.h; doc/design.md, "Pacing").
 *
 * The signal: where the removal's device is a block device, the mean
 * latency of the requests it completed in the window (what every other
 * user of the device waits; sysfs, any user may read it), else the mean
 * time of the removal's own unlinks.  The rule is a controller of the
 * kind TCP's congestion control made common: back off at once when the
 * latency is above the target, creep up when it is well below it.  What
 * it backs off on a block device is how many removals are in flight at
 * once (what another request waits behind is the device's queue: on the
 * one-head disk, 8 workers capped to 5,000 removals a second hurt a
 * neighbour's fsync more than one worker unpaced; doc/results.md,
 * "Pacing"); where no device is seen, then the rate. */
#define _GNU_SOURCE
#include "pace.h"

#include <errno.h>
#include <time.h>

#include "device/device.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)

int64_t pace_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

unsigned pace_next_workers(unsigned allowed, unsigned most, double latency_ms,
                           double target_ms)
{
	if (target_ms <= 0 || latency_ms < 0)
		return allowed;
	if (latency_ms > target_ms)
		return allowed > 1 ? allowed / 2 : 1;
	if (latency_ms < 0.8 * target_ms && allowed < most)
		return allowed + 1;
	return allowed;
}

double pace_next_rate(double rate, double made, double latency_ms,
                      double target_ms, double ceiling)
{
	double next = rate;
	if (target_ms <= 0) {
		next = ceiling; /* the ceiling alone */
	} else if (latency_ms < 0) {
		/* nothing seen: hold */
	} else if (latency_ms > target_ms) {
		/* from what was made, not from an allowance never used */
		double base = rate > 0 && rate < made ? rate : made;
		double f = target_ms / latency_ms;
		if (f < 0.5)
			f = 0.5;
		else if (f > 0.9)
			f = 0.9;
		next = base > 0 ? base * f : rate;
		if (next > 0 && next < PACE_MIN_RATE)
			next = PACE_MIN_RATE;
	} else if (latency_ms < 0.8 * target_ms && rate > 0) {
		next = rate * 1.05 + 1;
	}
	if (ceiling > 0 && (next <= 0 || next > ceiling))
		next = ceiling;
	return next;
}

bool pacer_init(struct pacer *p, double max_rate, unsigned long long target_us,
                unsigned workers, unsigned long long *out,
                unsigned long long *out_in_flight)
{
	if (!(max_rate > 0) && !target_us)
		return false;
	*p = (struct pacer){ .ceiling = max_rate > 0 ? max_rate : 0,
	                     .target_ms = (double)target_us / 1000.0,
	                     .latency_ms = -1, .out = out,
	                     .most = workers ? workers : 1 };
	/* a target: one in flight at first, more while the device is calm
	 * (workers started at once, before the first judgement, were what a
	 * neighbour's p99 saw: doc/results.md, "Pacing") */
	p->allowed = target_us ? 1 : p->most;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->turn, NULL);
	p->rate = p->ceiling;
	p->tick_ns = p->next_ns = pace_now_ns();
	p->out_in_flight = target_us ? out_in_flight : NULL;
	if (out)
		STORE(*out, (unsigned long long)p->rate);
	if (out_in_flight)
		STORE(*out_in_flight, target_us ? p->allowed : 0);
	return true;
}

void pacer_fini(struct pacer *p)
{
	pthread_cond_destroy(&p->turn);
	pthread_mutex_destroy(&p->lock);
}

/* Under the lock, at @now: judge the window that ends now. */
static void judge(struct pacer *p, struct device_advisor *a, dev_t dev, int64_t now)
{
	double secs = (double)(now - p->tick_ns) / 1e9;
	uint64_t ops = LOAD(p->ops), op_ns = LOAD(p->op_ns);
	double latency = -1;
	unsigned long long req, wait;
	if (device_wait_counters(a, dev, &req, &wait)) {
		if (p->have_dev && p->dev == dev && req - p->requests0 >= PACE_MIN_SAMPLES)
			latency = (double)(wait - p->wait0) / (double)(req - p->requests0);
		if (!p->have_dev || p->dev != dev || latency >= 0) {
			p->have_dev = true;
			p->dev = dev;
			p->requests0 = req;
			p->wait0 = wait;
		}
	} else if (ops >= PACE_MIN_SAMPLES) {
		latency = (double)op_ns / (double)ops / 1e6;
	}
	if (latency >= 0) /* smoothed over about two windows */
		p->latency_ms = p->latency_ms < 0 ? latency : (p->latency_ms + latency) / 2;
	double seen = latency >= 0 ? p->latency_ms : -1, rate = p->rate;
	unsigned allowed = LOAD(p->allowed);
	/* above the target: fewer removals in flight (what others wait
	 * behind is the device's queue); below it, one more in flight a
	 * second at most.  The rate only where no device is seen (the
	 * unlinks' own time): on the one-head disk a lower rate with one in
	 * flight only made the removal longer, and its journal commits more
	 * (doc/results.md, "Pacing") */
	bool above = p->target_ms > 0 && seen > p->target_ms;
	bool below = p->target_ms > 0 && seen >= 0 && seen < 0.8 * p->target_ms;
	/* the rate as this pacer lowered it (below the ceiling) */
	bool lowered = rate > 0 && (!p->ceiling || rate < p->ceiling);
	if (above && (allowed > 1 || p->have_dev)) {
		allowed = pace_next_workers(allowed, p->most, seen, p->target_ms);
	} else if (below && !lowered) {
		if (++p->calm * PACE_TICK_MS >= 1000) {
			allowed = pace_next_workers(allowed, p->most, seen, p->target_ms);
			p->calm = 0;
		}
	} else if (!p->have_dev) {
		rate = pace_next_rate(rate, (double)ops / secs, seen, p->target_ms,
		                      p->ceiling);
		/* allowing twice what is made: no longer a limit */
		if (below && !p->ceiling && rate > 2 * (double)ops / secs + PACE_MIN_RATE)
			rate = 0;
	}
	if (!below)
		p->calm = 0;
	STORE(p->allowed, allowed);
	__atomic_store(&p->rate, &rate, __ATOMIC_RELAXED);
	if (p->out)
		STORE(*p->out, (unsigned long long)rate);
	if (p->out_in_flight)
		STORE(*p->out_in_flight, allowed);
	STORE(p->ops, 0);
	STORE(p->op_ns, 0);
	STORE(p->tick_ns, now);
}

void pacer_wait(struct pacer *p, struct device_advisor *a, dev_t dev,
                const volatile sig_atomic_t *stop)
{
	int64_t now = pace_now_ns();
	if (p->target_ms > 0 && now - LOAD(p->tick_ns) >= PACE_TICK_MS * 1000000LL &&
	    pthread_mutex_trylock(&p->lock) == 0) {
		if (now - p->tick_ns >= PACE_TICK_MS * 1000000LL)
			judge(p, a, dev, now);
		pthread_mutex_unlock(&p->lock);
	}
	/* a turn among those in flight (latency_target_us) */
	if (p->target_ms > 0) {
		pthread_mutex_lock(&p->lock);
		while (p->inside >= LOAD(p->allowed) &&
		       !(stop && __atomic_load_n(stop, __ATOMIC_RELAXED))) {
			int64_t t0 = pace_now_ns();
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 50000000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&p->turn, &p->lock, &ts);
			ADD(p->waited_ns, (uint64_t)(pace_now_ns() - t0));
		}
		p->inside++;
		pthread_mutex_unlock(&p->lock);
		now = pace_now_ns();
	}
	double rate;
	__atomic_load(&p->rate, &rate, __ATOMIC_RELAXED);
	if (!(rate > 0))
		return;
	pthread_mutex_lock(&p->lock);
	int64_t slot = p->next_ns, late = now - PACE_CATCH_UP_MS * 1000000LL;
	if (slot < late)
		slot = late;
	p->next_ns = slot + (int64_t)(1e9 / rate);
	pthread_mutex_unlock(&p->lock);
	if (slot <= now)
		return;
	ADD(p->waited_ns, (uint64_t)(slot - now));
	/* in steps, so that a stop is seen within 50 ms */
	while (slot > now && !(stop && __atomic_load_n(stop, __ATOMIC_RELAXED))) {
		int64_t step = slot - now < 50000000 ? slot - now : 50000000;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)step };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		now = pace_now_ns();
	}
}

void pacer_done(struct pacer *p, int64_t ns)
{
	ADD(p->ops, 1);
	ADD(p->op_ns, (uint64_t)ns);
	if (p->target_ms > 0) {
		pthread_mutex_lock(&p->lock);
		p->inside--;
		pthread_cond_signal(&p->turn);
		pthread_mutex_unlock(&p->lock);
	}
}
