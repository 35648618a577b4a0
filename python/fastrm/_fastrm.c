/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fastrm._fastrm: the C half of the Python module fastrm (python/fastrm/
 * __init__.py is the other).  It calls fastrm_rmtreeat() with the GIL
 * released and hands back what failed, in the order the library reported
 * it; the Python half turns each failure into the OSError and the handler
 * call that shutil.rmtree would make.
 *
 * The library's callbacks run on its worker threads, one at a time: they
 * only append to a C array and count (no Python object is touched without
 * the GIL).
 *
 * Signals: Python runs its signal handlers in the main thread only, and
 * only between bytecodes.  Called from the main thread, the removal runs
 * on a helper thread (all signals blocked there) while the caller's
 * thread wakes every WATCH_MS to run the handlers (PyErr_CheckSignals);
 * one that raises (SIGINT's KeyboardInterrupt) sets the library's stop
 * flag, the workers stop after the entry in hand, and the exception is
 * raised: what was not removed yet is left.  A handler that returns lets
 * the removal go on.  Called from another thread, the removal runs in the
 * caller's thread to its end, as any blocking call does there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <fastrm/manifest.h>
#include <fastrm/detach.h>
#include <fastrm/rmtree.h>

#include "jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

struct failure {
	char *path;   /* as the library reported it */
	int what;     /* enum fastrm_rmtree_error */
	int err;
	int is_dir;
	int level;
};

/* How often the main thread looks for a signal while a removal runs. */
#define WATCH_MS 10

struct run {
	struct failure *v;
	size_t n, cap;
	unsigned long long removed; /* entries removed */
	unsigned long long kept;    /* entries kept without a failure */
	unsigned long long excluded; /* ...of them, by an exclusion */
	int nomem;      /* a failure could not be recorded */
	int empty_dot;  /* emptying: "." itself is not to be removed */
	int missing_ok; /* a path given that does not exist is no failure */
};

static int on_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                     enum fastrm_rmtree_error what, int err)
{
	struct run *r = ctx;
	if (e->level == 0 && r->empty_dot && what == FASTRM_RMTREE_EREMOVE &&
	    err == EINVAL)
		return 0; /* rmdir(".") of the directory being emptied */
	if (err == ENOENT && (e->level > 0 || r->missing_ok))
		return 0; /* gone: by another hand, meanwhile (Python 3.13's
		             shutil.rmtree ignores it too), or not there */
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct failure *v = realloc(r->v, cap * sizeof *v);
		if (!v) {
			r->nomem = 1;
			return 1;
		}
		r->v = v;
		r->cap = cap;
	}
	char *path = strdup(e->path);
	if (!path) {
		r->nomem = 1;
		return 1;
	}
	r->v[r->n++] = (struct failure){ path, (int)what, err, e->is_dir, e->level };
	return 1;
}

static void on_removed(void *ctx, const struct fastrm_rmtree_entry *e)
{
	(void)e;
	((struct run *)ctx)->removed++;
}

static void on_kept(void *ctx, const struct fastrm_rmtree_entry *e,
                    enum fastrm_rmtree_keep why)
{
	(void)e;
	struct run *r = ctx;
	r->kept++;
	r->excluded += why == FASTRM_RMTREE_KEPT_EXCLUDED;
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
}

/* jobs: None (frm's default, --jobs=auto: tools/frm/jobs.h; fitted to the
 * device, started only when the removal needs them) or a count >= 1. */
static int set_jobs(struct fastrm_rmtree_opts *o, PyObject *jobs)
{
	if (jobs == Py_None) {
		o->workers = auto_jobs();
		o->flags |= FASTRM_RMTREE_FIT_WORKERS;
		return 0;
	}
	long n = PyLong_AsLong(jobs);
	if (n == -1 && PyErr_Occurred())
		return -1;
	if (n < 1 || n > JOBS_MAX) {
		PyErr_Format(PyExc_ValueError, "jobs must be None or 1 to %d", JOBS_MAX);
		return -1;
	}
	o->workers = (unsigned)n;
	return 0;
}

static int set_order(struct fastrm_rmtree_opts *o, PyObject *order)
{
	if (order == Py_None)
		return 0;
	const char *name = PyUnicode_AsUTF8(order);
	if (!name)
		return -1;
	o->order = fastrm_order_by_name(name);
	if (!o->order) {
		PyErr_Format(PyExc_ValueError, "unknown order %R", order);
		return -1;
	}
	return 0;
}

static PyObject *stats_dict(const struct fastrm_rmtree_stats *s,
                            unsigned long long removed, unsigned long long kept,
                            unsigned long long excluded)
{
	return Py_BuildValue("{s:K,s:K,s:K,s:I,s:I,s:n,s:n,s:n,s:n,s:n,s:n,s:n}",
	                     "removed", removed,
	                     "kept", kept,
	                     "excluded", excluded,
	                     "workers", s->workers,
	                     "workers_fitted", s->workers_fitted,
	                     "subtrees_shared", (Py_ssize_t)s->subtrees_shared,
	                     "read_ahead_requests", (Py_ssize_t)s->read_ahead_requests,
	                     "read_ahead_bytes", (Py_ssize_t)s->read_ahead_bytes,
	                     "index_lookups", (Py_ssize_t)s->index_lookups,
	                     "inodes_read_ahead", (Py_ssize_t)s->inodes_read_ahead,
	                     "leaves_read_ahead", (Py_ssize_t)s->leaves_read_ahead,
	                     "paced_ms", (Py_ssize_t)s->paced_ms);
}

/* The interpreter's main thread (set at import). */
static unsigned long main_thread;

/* The removal of a call from the main thread runs on one helper thread,
 * started at the first such call and kept for the process (a thread made
 * per call cost 0.1-0.2 ms, a third of a small tree's removal); after a
 * fork the child starts its own.  One call at a time: the main thread is
 * one thread. */
struct call {
	int dirfd;
	char *const *paths;
	const char *finish;       /* not NULL: fastrm_finish() of this state
	                             directory, record paths[0] */
	const struct fastrm_rmtree_opts *o;
	struct fastrm_rmtree_stats st;
	int rc;
};

static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t helper_job, helper_done; /* CLOCK_MONOTONIC */
static struct call *helper_call; /* the job; NULL once done */
static int helper_busy;          /* a job was posted and is not done (atomic) */
static int helper_state;         /* 0: none, 1: running, -1: cannot start */

/* How long each side looks for the other before it sleeps: a small
 * removal takes 0.3-0.5 ms, and waking a sleeping thread costs about as
 * much as such a removal's tenth. */
#define SPIN_US 1000

/* Look at *@flag until it is @want, SPIN_US at most. */
static void spin_until(const int *flag, int want)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; __atomic_load_n(flag, __ATOMIC_ACQUIRE) != want; i++) {
		if ((i & 63) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000L +
			    (t.tv_nsec - t0.tv_nsec) / 1000 >= SPIN_US)
				return;
		}
		sched_yield();
	}
}

static void *helper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&helper_lock);
	for (;;) {
		if (!helper_call) {
			/* a test suite's teardowns come one after another: look
			 * for the next for SPIN_US before sleeping */
			pthread_mutex_unlock(&helper_lock);
			spin_until(&helper_busy, 1);
			pthread_mutex_lock(&helper_lock);
		}
		while (!helper_call)
			pthread_cond_wait(&helper_job, &helper_lock);
		struct call *c = helper_call;
		pthread_mutex_unlock(&helper_lock);
		c->rc = c->finish ? fastrm_finish(c->finish, c->paths[0], c->o, &c->st)
		                  : fastrm_rmtreeat(c->dirfd, c->paths, c->o, &c->st);
		pthread_mutex_lock(&helper_lock);
		helper_call = NULL;
		__atomic_store_n(&helper_busy, 0, __ATOMIC_RELEASE);
		pthread_cond_signal(&helper_done);
	}
	return NULL;
}

/* In a child after fork: no helper there (nor a call in flight). */
static void helper_forget(void)
{
	pthread_mutex_init(&helper_lock, NULL);
	helper_call = NULL;
	helper_busy = 0;
	helper_state = 0;
}

/* With the GIL: whether the helper runs (started on first need). */
static int helper_ready(void)
{
	if (helper_state)
		return helper_state > 0;
	pthread_condattr_t ca;
	pthread_t tid;
	pthread_attr_t attr;
	int ok = pthread_condattr_init(&ca) == 0 &&
	         pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	         pthread_cond_init(&helper_job, &ca) == 0 &&
	         pthread_cond_init(&helper_done, &ca) == 0 &&
	         pthread_attr_init(&attr) == 0;
	if (ok) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		/* the signals are the main thread's to take */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		ok = pthread_create(&tid, &attr, helper, NULL) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	helper_state = ok ? 1 : -1;
	return ok;
}

/* Run fastrm_rmtreeat(@dirfd, @paths, @o) (or, @finish not NULL,
 * fastrm_finish(@finish, @paths[0], @o)) with the GIL released, into
 * *@st.  In the main thread, a signal handler that raises stops it
 * (*@raised: its exception is set).  Returns the library's return. */
static int run_call(int dirfd, char *const *paths, const char *finish,
                    struct fastrm_rmtree_opts *o, struct fastrm_rmtree_stats *st,
                    int *raised)
{
	volatile sig_atomic_t stop = 0;
	*raised = 0;
	if (PyThread_get_thread_ident() != main_thread || !helper_ready()) {
		/* no signal handler runs here: to the end, as any blocking call */
		o->stop = NULL;
		int rc;
		Py_BEGIN_ALLOW_THREADS
		rc = finish ? fastrm_finish(finish, paths[0], o, st)
		            : fastrm_rmtreeat(dirfd, paths, o, st);
		Py_END_ALLOW_THREADS
		return rc;
	}
	o->stop = &stop;
	struct call c = { .dirfd = dirfd, .paths = paths, .finish = finish, .o = o };
	int done = 0;
	Py_BEGIN_ALLOW_THREADS
	pthread_mutex_lock(&helper_lock);
	helper_call = &c;
	__atomic_store_n(&helper_busy, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&helper_job);
	pthread_mutex_unlock(&helper_lock);
	spin_until(&helper_busy, 0);
	Py_END_ALLOW_THREADS
	while (!done) {
		Py_BEGIN_ALLOW_THREADS
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += WATCH_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&helper_lock);
		if (helper_call)
			pthread_cond_timedwait(&helper_done, &helper_lock, &ts);
		done = !helper_call;
		pthread_mutex_unlock(&helper_lock);
		Py_END_ALLOW_THREADS
		if (!done && !*raised && PyErr_CheckSignals() < 0) {
			/* the workers stop after the entry in hand */
			*raised = 1;
			stop = 1;
		}
	}
	*st = c.st;
	return c.rc;
}

/* A removal's return: (failures, stats), or NULL with an exception. */
static PyObject *finish_result(int rc, int raised, struct run *r,
                               const struct fastrm_rmtree_stats *st)
{
	if (raised) {
		/* the handler's exception: what is left stays */
		run_free(r);
		return NULL;
	}
	if (rc < 0) {
		run_free(r);
		errno = -rc;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	if (r->nomem) {
		run_free(r);
		return PyErr_NoMemory();
	}
	PyObject *list = PyList_New((Py_ssize_t)r->n);
	for (size_t i = 0; list && i < r->n; i++) {
		const struct failure *f = &r->v[i];
		PyObject *t = Py_BuildValue("(iy#iii)", f->what, f->path,
		                            (Py_ssize_t)strlen(f->path), f->err,
		                            f->is_dir, f->level);
		if (!t) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	unsigned long long removed = r->removed, kept = r->kept, excl = r->excluded;
	run_free(r);
	if (!list)
		return NULL;
	PyObject *sd = stats_dict(st, removed, kept, excl);
	if (!sd) {
		Py_DECREF(list);
		return NULL;
	}
	return Py_BuildValue("(NN)", list, sd);
}

/* The removal, the GIL released; then (failures, stats). */
static PyObject *remove_at(int dirfd, char *const *paths,
                           struct fastrm_rmtree_opts *o, struct run *r)
{
	struct fastrm_rmtree_stats st;
	int rc, raised;
	o->ctx = r;
	o->failed = on_failed;
	o->removed = on_removed;
	o->kept = on_kept;
	rc = run_call(dirfd, paths, NULL, o, &st, &raised);
	return finish_result(rc, raised, r, &st);
}

/* ------------------------------------------------------------ manifest */

#define MANIFEST_CAPSULE "fastrm._fastrm.manifest"

struct manifest_ref {
	struct fastrm_manifest *m; /* NULL once closed */
};

static void manifest_destroy(PyObject *cap)
{
	struct manifest_ref *ref = PyCapsule_GetPointer(cap, MANIFEST_CAPSULE);
	if (ref) {
		/* not closed: its file may be closed already; nothing more is
		 * written */
		free(ref);
	}
}

static struct manifest_ref *manifest_of(PyObject *cap)
{
	struct manifest_ref *ref = PyCapsule_GetPointer(cap, MANIFEST_CAPSULE);
	if (ref && !ref->m) {
		PyErr_SetString(PyExc_ValueError, "manifest closed");
		return NULL;
	}
	return ref;
}

static PyObject *manifest_error(int rc)
{
	errno = -rc;
	return PyErr_SetFromErrno(PyExc_OSError);
}

PyDoc_STRVAR(manifest_new_doc,
"manifest_new(fd, format, failures_only) -> manifest\n\n"
"A manifest (fastrm_manifest(3)) written to fd; format 0: JSON Lines, 1: NUL.");

static PyObject *manifest_new(PyObject *self, PyObject *args)
{
	(void)self;
	int fd, format, failures;
	if (!PyArg_ParseTuple(args, "iip", &fd, &format, &failures))
		return NULL;
	struct manifest_ref *ref = calloc(1, sizeof *ref);
	if (!ref)
		return PyErr_NoMemory();
	ref->m = fastrm_manifest_new(fd, format, failures ? FASTRM_MANIFEST_FAILURES : 0);
	if (!ref->m) {
		free(ref);
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	PyObject *cap = PyCapsule_New(ref, MANIFEST_CAPSULE, manifest_destroy);
	if (!cap) {
		fastrm_manifest_free(ref->m);
		free(ref);
	}
	return cap;
}

PyDoc_STRVAR(manifest_add_doc,
"manifest_add(manifest, path, mode, outcome, errno, op) -> None\n\n"
"A record of one entry (path: bytes; outcome: 1 removed, 2 failed, 3 kept,\n"
"4 planned; op: str or None).");

static PyObject *manifest_add(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *cap;
	const char *path, *op;
	Py_ssize_t plen;
	unsigned int mode;
	int outcome, err;
	if (!PyArg_ParseTuple(args, "Oy#Iiiz", &cap, &path, &plen, &mode, &outcome,
	                      &err, &op))
		return NULL;
	struct manifest_ref *ref = manifest_of(cap);
	if (!ref)
		return NULL;
	int rc = fastrm_manifest_add(ref->m, path, (mode_t)mode,
	                             (enum fastrm_outcome)outcome, err, op);
	if (rc < 0)
		return manifest_error(rc);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(manifest_close_doc,
"manifest_close(manifest, exit_status) -> None\n\n"
"The summary record (exit_status: None for none), what is buffered written\n"
"out, and the manifest closed (its file is the caller's).");

static PyObject *manifest_close(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *cap, *status;
	if (!PyArg_ParseTuple(args, "OO", &cap, &status))
		return NULL;
	struct manifest_ref *ref = manifest_of(cap);
	if (!ref)
		return NULL;
	int rc = 0;
	if (status != Py_None) {
		long st = PyLong_AsLong(status);
		if (st == -1 && PyErr_Occurred())
			return NULL;
		rc = fastrm_manifest_finish(ref->m, (int)st);
	}
	int rc2 = fastrm_manifest_free(ref->m);
	ref->m = NULL;
	if (rc < 0 || rc2 < 0)
		return manifest_error(rc < 0 ? rc : rc2);
	Py_RETURN_NONE;
}

/* The options every removal takes from Python: exclude (a list of
 * bytes, or None), a manifest (or None), dry_run, and pacing: @max_rate
 * (entries/s) and @latency_target (seconds), 0 for none.  *@pats: the
 * patterns, to free with free_patterns(). */
static int set_extra(struct fastrm_rmtree_opts *o, PyObject *exclude,
                     PyObject *manifest, int dry_run, double max_rate,
                     double latency_target, char ***pats)
{
	*pats = NULL;
	if (!(max_rate >= 0 && max_rate <= 1e9) ||
	    !(latency_target >= 0 && latency_target <= 3600)) {
		PyErr_SetString(PyExc_ValueError,
		                "max_rate must be in (0, 1e9], latency_target in (0, 3600] seconds");
		return -1;
	}
	o->max_rate = max_rate;
	o->latency_target_us = (unsigned long long)(latency_target * 1e6);
	if (latency_target > 0 && o->latency_target_us == 0)
		o->latency_target_us = 1;
	if (dry_run)
		o->flags |= FASTRM_RMTREE_DRY_RUN;
	if (manifest != Py_None) {
		struct manifest_ref *ref = manifest_of(manifest);
		if (!ref)
			return -1;
		o->manifest = ref->m;
	}
	if (exclude == Py_None)
		return 0;
	if (!PyList_Check(exclude)) {
		PyErr_SetString(PyExc_TypeError, "exclude must be a list of bytes");
		return -1;
	}
	Py_ssize_t n = PyList_GET_SIZE(exclude);
	char **v = calloc((size_t)n + 1, sizeof *v);
	if (!v) {
		PyErr_NoMemory();
		return -1;
	}
	*pats = v;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *b = PyList_GET_ITEM(exclude, i);
		if (!PyBytes_Check(b)) {
			PyErr_SetString(PyExc_TypeError, "exclude must be a list of bytes");
			return -1;
		}
		if (!(v[i] = strdup(PyBytes_AS_STRING(b)))) {
			PyErr_NoMemory();
			return -1;
		}
	}
	o->exclude = (const char *const *)v;
	return 0;
}

static void free_patterns(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

PyDoc_STRVAR(excluded_doc,
"excluded(patterns, name, is_dir) -> bool\n\n"
"Whether a path given named name (bytes) matches one of patterns (a list\n"
"of bytes) as the library's exclusions match it.");

static PyObject *excluded(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *list;
	const char *name;
	int is_dir;
	if (!PyArg_ParseTuple(args, "Oyp", &list, &name, &is_dir))
		return NULL;
	struct fastrm_rmtree_opts o = { .size = sizeof o };
	char **pats = NULL;
	if (set_extra(&o, list, Py_None, 0, 0, 0, &pats) < 0) {
		free_patterns(pats);
		return NULL;
	}
	int rc = pats ? fastrm_rmtree_excluded((const char *const *)pats, name, NULL, is_dir)
	              : 0;
	free_patterns(pats);
	if (rc < 0)
		return PyErr_NoMemory();
	return PyBool_FromLong(rc);
}

PyDoc_STRVAR(manifest_set_base_doc,
"manifest_set_base(manifest, path) -> None\n\n"
"Records of \".\" and \"./...\" are written with path (bytes) for \".\".");

static PyObject *manifest_set_base(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *cap;
	const char *path;
	if (!PyArg_ParseTuple(args, "Oy", &cap, &path))
		return NULL;
	struct manifest_ref *ref = manifest_of(cap);
	if (!ref)
		return NULL;
	if (fastrm_manifest_set_base(ref->m, path) < 0)
		return PyErr_NoMemory();
	Py_RETURN_NONE;
}

PyDoc_STRVAR(empty_fd_doc,
"empty_fd(fd, jobs, order, one_file_system, exclude, manifest, dry_run,\n"
"         max_rate, latency_target)\n"
"    -> (failures, stats)\n\n"
"Remove everything in the directory open as fd (which is kept).\n"
"failures: a list of (what, path, errno, is_dir, level), path (bytes)\n"
"relative to fd as b'./name/...', in the order met.");

static PyObject *empty_fd(PyObject *self, PyObject *args)
{
	(void)self;
	int fd, xdev, dry;
	double rate, target;
	PyObject *jobs, *order, *exclude, *manifest;
	if (!PyArg_ParseTuple(args, "iOOpOOpdd", &fd, &jobs, &order, &xdev, &exclude,
	                      &manifest, &dry, &rate, &target))
		return NULL;
	struct fastrm_rmtree_opts o = { .size = sizeof o };
	char **pats = NULL;
	if (set_jobs(&o, jobs) < 0 || set_order(&o, order) < 0 ||
	    set_extra(&o, exclude, manifest, dry, rate, target, &pats) < 0) {
		free_patterns(pats);
		return NULL;
	}
	o.flags |= FASTRM_RMTREE_ALLOW_DOTS | (xdev ? FASTRM_RMTREE_XDEV : 0);
	struct run r = { .empty_dot = 1 };
	char *paths[] = { ".", NULL };
	if (jobs == Py_None)
		o.workers = auto_jobs_at(o.workers, fd, paths);
	PyObject *ret = remove_at(fd, paths, &o, &r);
	free_patterns(pats);
	return ret;
}

PyDoc_STRVAR(remove_doc,
"remove(paths, dir_fd, jobs, order, one_file_system, missing_ok, exclude,\n"
"       manifest, dry_run, max_rate, latency_target) ->\n"
"    (failures, stats)\n\n"
"Remove every path of the list paths (bytes), as rm -r does.");

static PyObject *remove_paths(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *seq, *jobs, *order, *exclude, *manifest;
	int dirfd, xdev, missing_ok, dry;
	double rate, target;
	if (!PyArg_ParseTuple(args, "O!iOOppOOpdd", &PyList_Type, &seq, &dirfd, &jobs,
	                      &order, &xdev, &missing_ok, &exclude, &manifest, &dry,
	                      &rate, &target))
		return NULL;
	struct fastrm_rmtree_opts o = { .size = sizeof o };
	char **pats = NULL;
	if (set_jobs(&o, jobs) < 0 || set_order(&o, order) < 0 ||
	    set_extra(&o, exclude, manifest, dry, rate, target, &pats) < 0) {
		free_patterns(pats);
		return NULL;
	}
	o.flags |= xdev ? FASTRM_RMTREE_XDEV : 0;
	Py_ssize_t n = PyList_GET_SIZE(seq);
	char **paths = calloc((size_t)n + 1, sizeof *paths);
	if (!paths) {
		free_patterns(pats);
		return PyErr_NoMemory();
	}
	PyObject *ret = NULL;
	Py_ssize_t i;
	for (i = 0; i < n; i++) {
		PyObject *b = PyList_GET_ITEM(seq, i);
		if (!PyBytes_Check(b)) {
			PyErr_SetString(PyExc_TypeError, "paths must be bytes");
			goto out;
		}
		/* copies: the list may change once the GIL is released */
		if (!(paths[i] = strdup(PyBytes_AS_STRING(b)))) {
			PyErr_NoMemory();
			goto out;
		}
	}
	if (jobs == Py_None)
		o.workers = auto_jobs_at(o.workers, dirfd, paths);
	struct run r = { .missing_ok = missing_ok };
	ret = remove_at(dirfd, paths, &o, &r);
out:
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free_patterns(pats);
	return ret;
}

PyDoc_STRVAR(detach_doc,
"detach(path, dir_fd, one_file_system) -> (state_dir, id)\n\n"
"Rename the directory path (bytes) to a hidden name beside it, with a\n"
"record in the state directory (fastrm_detach(3)); OSError if it cannot\n"
"be (then it is where it was).");

static PyObject *detach(PyObject *self, PyObject *args)
{
	(void)self;
	const char *path;
	int dirfd, xdev;
	if (!PyArg_ParseTuple(args, "yip", &path, &dirfd, &xdev))
		return NULL;
	char sd[4096], id[FASTRM_DETACH_ID_SIZE];
	int rc = fastrm_state_dir(sd, sizeof sd);
	if (rc == 0) {
		Py_BEGIN_ALLOW_THREADS
		rc = fastrm_detach(dirfd, path, sd, xdev ? FASTRM_RMTREE_XDEV : 0, id);
		Py_END_ALLOW_THREADS
	}
	if (rc < 0) {
		errno = -rc;
		return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
	}
	return Py_BuildValue("(ss)", sd, id);
}

PyDoc_STRVAR(finisher_doc,
"finisher(state_dir, ids, jobs, max_rate, latency_target) -> pid\n\n"
"Start a finisher for the records ids (a list of str) of state_dir\n"
"(fastrm_finisher(3)); jobs None: fitted.");

static PyObject *finisher(PyObject *self, PyObject *args)
{
	(void)self;
	const char *sd;
	PyObject *list, *jobs;
	double rate, target;
	if (!PyArg_ParseTuple(args, "sO!Odd", &sd, &PyList_Type, &list, &jobs, &rate,
	                      &target))
		return NULL;
	struct fastrm_rmtree_opts o = { .size = sizeof o };
	if (set_jobs(&o, jobs) < 0)
		return NULL;
	Py_ssize_t n = PyList_GET_SIZE(list);
	char **ids = calloc((size_t)n + 1, sizeof *ids);
	if (!ids)
		return PyErr_NoMemory();
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *s = PyList_GET_ITEM(list, i);
		const char *u = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
		if (!u || !(ids[i] = strdup(u))) {
			for (Py_ssize_t j = 0; j < i; j++)
				free(ids[j]);
			free(ids);
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "ids must be a list of str");
			return NULL;
		}
	}
	pid_t pid = fastrm_finisher(sd, ids, jobs == Py_None ? 0 : o.workers, rate,
	                            (unsigned long long)(target * 1e6));
	for (Py_ssize_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	if (pid < 0) {
		errno = -pid;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	return PyLong_FromLong((long)pid);
}

static int pending_one(void *ctx, const struct fastrm_detached *d)
{
	PyObject *list = ctx;
	PyObject *item = Py_BuildValue("{s:s,s:y,s:y,s:K,s:K,s:L,s:K,s:O,s:i}",
	                               "id", d->id, "path", d->path, "hidden", d->hidden,
	                               "dev", (unsigned long long)d->dev,
	                               "ino", (unsigned long long)d->ino,
	                               "when", (long long)d->when,
	                               "removed", d->removed,
	                               "active", d->active ? Py_True : Py_False,
	                               "failures", d->failures);
	if (!item)
		return -1;
	int rc = PyList_Append(list, item);
	Py_DECREF(item);
	return rc;
}

PyDoc_STRVAR(pending_doc,
"pending() -> (state_dir, [dict])\n\n"
"The records of the state directory (fastrm_pending(3)).");

static PyObject *pending(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	char sd[4096];
	int rc = fastrm_state_dir(sd, sizeof sd);
	if (rc < 0) {
		errno = -rc;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	PyObject *list = PyList_New(0);
	if (!list)
		return NULL;
	rc = fastrm_pending(sd, pending_one, list);
	if (rc != 0) {
		if (!PyErr_Occurred()) {
			errno = -rc;
			PyErr_SetFromErrnoWithFilename(PyExc_OSError, sd);
		}
		Py_DECREF(list);
		return NULL;
	}
	return Py_BuildValue("(sN)", sd, list);
}

PyDoc_STRVAR(finish_doc,
"finish(state_dir, id, jobs, max_rate, latency_target) -> (failures, stats)\n\n"
"Remove what record id of state_dir names (fastrm_finish(3)); failures as\n"
"remove()'s, their paths under the hidden name.");

static PyObject *finish(PyObject *self, PyObject *args)
{
	(void)self;
	const char *sd, *id;
	PyObject *jobs;
	double rate, target;
	if (!PyArg_ParseTuple(args, "ssOdd", &sd, &id, &jobs, &rate, &target))
		return NULL;
	struct fastrm_rmtree_opts o = { .size = sizeof o };
	char **pats = NULL;
	if (set_jobs(&o, jobs) < 0 ||
	    set_extra(&o, Py_None, Py_None, 0, rate, target, &pats) < 0)
		return NULL;
	char *ids[] = { (char *)id, NULL };
	struct run r = { 0 };
	struct fastrm_rmtree_stats st;
	int raised;
	o.ctx = &r;
	o.failed = on_failed;
	o.removed = on_removed;
	o.kept = on_kept;
	int rc = run_call(AT_FDCWD, ids, sd, &o, &st, &raised);
	return finish_result(rc, raised, &r, &st);
}

static PyMethodDef methods[] = {
	{ "empty_fd", empty_fd, METH_VARARGS, empty_fd_doc },
	{ "detach", detach, METH_VARARGS, detach_doc },
	{ "finisher", finisher, METH_VARARGS, finisher_doc },
	{ "pending", pending, METH_NOARGS, pending_doc },
	{ "finish", finish, METH_VARARGS, finish_doc },
	{ "remove", remove_paths, METH_VARARGS, remove_doc },
	{ "manifest_new", manifest_new, METH_VARARGS, manifest_new_doc },
	{ "manifest_set_base", manifest_set_base, METH_VARARGS, manifest_set_base_doc },
	{ "excluded", excluded, METH_VARARGS, excluded_doc },
	{ "manifest_add", manifest_add, METH_VARARGS, manifest_add_doc },
	{ "manifest_close", manifest_close, METH_VARARGS, manifest_close_doc },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "fastrm._fastrm",
	"libfastrm's tree removal, for the Python module fastrm.", -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastrm(void);
PyMODINIT_FUNC PyInit__fastrm(void)
{
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return NULL;
	/* threading.main_thread().ident: where signal handlers run */
	PyObject *threading = PyImport_ImportModule("threading");
	PyObject *mt = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
	PyObject *ident = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
	Py_XDECREF(mt);
	Py_XDECREF(threading);
	main_thread = ident ? PyLong_AsUnsignedLong(ident) : 0;
	pthread_atfork(NULL, NULL, helper_forget);
	Py_XDECREF(ident);
	if (PyErr_Occurred()) {
		Py_DECREF(m);
		return NULL;
	}
	if (PyModule_AddIntConstant(m, "EREMOVE", FASTRM_RMTREE_EREMOVE) < 0 ||
	    PyModule_AddIntConstant(m, "EWALK", FASTRM_RMTREE_EWALK) < 0 ||
	    PyModule_AddIntConstant(m, "ECYCLE", FASTRM_RMTREE_ECYCLE) < 0 ||
	    PyModule_AddIntConstant(m, "EXDEV", FASTRM_RMTREE_EXDEV) < 0 ||
	    PyModule_AddIntConstant(m, "EREFUSED", FASTRM_RMTREE_EREFUSED) < 0 ||
	    PyModule_AddStringConstant(m, "LIBRARY_VERSION", FASTRM_VERSION_STRING) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
