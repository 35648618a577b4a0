/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unlinker: a ring of unlinkat() calls, worker threads that make
 * them, results retired in submission order (include/fastrm/unlinker.h).
 *
 * Three counters run over the ring: the caller fills slot `tail` and moves
 * it on, a worker takes slot `claim` and marks it done, the caller retires
 * slot `head` once it is done.  head <= claim <= tail, tail - head <= cap.
 * Only the caller moves head and tail; the mutex guards claim, the done
 * marks, and the hand-over of a filled slot.
 *
 * A caller that waits for results is woken once a batch of them is done
 * (or all of them), not for each: waking a thread per unlink would cost
 * about as much system time as the unlinks themselves.
 */
#include "fastrm-int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastrm/unlinker.h"

#define MAX_JOBS 64
#define DEFAULT_DEPTH 1024

struct slot {
	int dirfd;
	int flags;
	int error;
	bool done;
	void *data;
	char name[NAME_MAX + 1];
};

struct fastrm_unlinker {
	pthread_mutex_t mu;
	pthread_cond_t work; /* a slot was filled, or stop */
	pthread_cond_t done; /* a slot was finished */
	struct slot *ring;
	size_t cap;
	size_t head, claim, tail;
	size_t ndone; /* done and not retired */
	size_t batch; /* wake a waiting caller once this many are done */
	bool stop;
	bool waiting; /* the caller sleeps on `done` */
	int dirfd;    /* our copy, -1 before the first set_dir */
	unsigned nthreads;
	pthread_t threads[MAX_JOBS];
};

/* A waiting caller goes on when the oldest call is done and so are a batch
 * of them, or all that were submitted. */
static bool caller_may_go(const struct fastrm_unlinker *u)
{
	return u->ring[u->head % u->cap].done &&
	       (u->ndone >= u->batch || u->ndone == u->tail - u->head);
}

static void *worker(void *arg)
{
	struct fastrm_unlinker *u = arg;

	pthread_mutex_lock(&u->mu);
	for (;;) {
		while (!u->stop && u->claim == u->tail)
			pthread_cond_wait(&u->work, &u->mu);
		if (u->claim == u->tail)
			break; /* stopping, and nothing is left */
		struct slot *s = &u->ring[u->claim++ % u->cap];
		pthread_mutex_unlock(&u->mu);

		int err = unlinkat(s->dirfd, s->name, s->flags) == 0 ? 0 : errno;

		pthread_mutex_lock(&u->mu);
		s->error = err;
		s->done = true;
		u->ndone++;
		if (u->waiting && caller_may_go(u))
			pthread_cond_signal(&u->done);
	}
	pthread_mutex_unlock(&u->mu);
	return NULL;
}

static void stop_threads(struct fastrm_unlinker *u)
{
	pthread_mutex_lock(&u->mu);
	u->stop = true;
	pthread_cond_broadcast(&u->work);
	pthread_mutex_unlock(&u->mu);
	for (unsigned i = 0; i < u->nthreads; i++)
		pthread_join(u->threads[i], NULL);
	u->nthreads = 0;
}

FASTRM_EXPORT int fastrm_unlinker_new(struct fastrm_unlinker **out,
                                     unsigned jobs, size_t depth)
{
	*out = NULL;
	if (jobs < 1 || jobs > MAX_JOBS)
		return -EINVAL;
	if (depth == 0)
		depth = DEFAULT_DEPTH;
	if (depth < jobs)
		depth = jobs;
	struct fastrm_unlinker *u = calloc(1, sizeof *u);
	if (!u)
		return -ENOMEM;
	u->ring = calloc(depth, sizeof *u->ring);
	if (!u->ring) {
		free(u);
		return -ENOMEM;
	}
	u->cap = depth;
	u->batch = depth / 4 ? depth / 4 : 1;
	u->dirfd = -1;
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->work, NULL);
	pthread_cond_init(&u->done, NULL);

	/* Signals go to the caller's thread, never to a worker. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = 0;
	for (unsigned i = 0; i < jobs; i++) {
		err = pthread_create(&u->threads[i], NULL, worker, u);
		if (err)
			break;
		u->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fastrm_unlinker_free(u);
		return -err;
	}
	*out = u;
	return 0;
}

FASTRM_EXPORT int fastrm_unlinker_set_dir(struct fastrm_unlinker *u, int dirfd)
{
	if (u->head != u->tail)
		return -EBUSY;
	int saved = errno;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		int e = errno;
		errno = saved;
		return -e;
	}
	/* Nothing is pending: no worker holds the old copy. */
	if (u->dirfd >= 0)
		close(u->dirfd);
	u->dirfd = fd;
	return 0;
}

FASTRM_EXPORT int fastrm_unlinker_submit(struct fastrm_unlinker *u,
                                         const char *name, int flags,
                                         void *data)
{
	if (u->dirfd < 0)
		return -EBADF;
	if ((flags & ~AT_REMOVEDIR) || !*name || strchr(name, '/') ||
	    ISDOT(name))
		return -EINVAL;
	size_t len = strlen(name);
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	if (u->tail - u->head == u->cap)
		return -EAGAIN;
	/* The slot is free and no worker looks at it before tail moves. */
	struct slot *s = &u->ring[u->tail % u->cap];
	s->dirfd = u->dirfd;
	s->flags = flags;
	s->error = 0;
	s->done = false;
	s->data = data;
	memcpy(s->name, name, len + 1);

	pthread_mutex_lock(&u->mu);
	u->tail++;
	pthread_cond_signal(&u->work);
	pthread_mutex_unlock(&u->mu);
	return 0;
}

FASTRM_EXPORT int fastrm_unlinker_retire(struct fastrm_unlinker *u, bool wait,
                                         struct fastrm_unlink_done *out)
{
	if (u->head == u->tail)
		return 0;
	struct slot *s = &u->ring[u->head % u->cap];
	pthread_mutex_lock(&u->mu);
	if (!s->done && wait) {
		u->waiting = true;
		while (!caller_may_go(u))
			pthread_cond_wait(&u->done, &u->mu);
		u->waiting = false;
	}
	bool done = s->done;
	if (done) {
		u->ndone--;
		u->head++; /* under the lock: workers read head */
	}
	pthread_mutex_unlock(&u->mu);
	if (!done)
		return 0;
	out->name = s->name;
	out->dirfd = s->dirfd;
	out->flags = s->flags;
	out->error = s->error;
	out->data = s->data; /* the slot stays ours until the next submit */
	return 1;
}

FASTRM_EXPORT size_t fastrm_unlinker_pending(const struct fastrm_unlinker *u)
{
	return u->tail - u->head;
}

FASTRM_EXPORT void fastrm_unlinker_free(struct fastrm_unlinker *u)
{
	if (!u)
		return;
	stop_threads(u);
	if (u->dirfd >= 0)
		close(u->dirfd);
	pthread_cond_destroy(&u->done);
	pthread_cond_destroy(&u->work);
	pthread_mutex_destroy(&u->mu);
	free(u->ring);
	free(u);
}
