/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Detach and finish (<fastrm/detach.h>): a directory renamed to a hidden
 * name beside it, a record of it in a state directory, and whatever
 * removes it later (doc/design.md, "Detach").
 *
 * A record, ID.rec, is written (and synced) before the rename, and the
 * rename is undone by nothing: a crash before the rename leaves a record
 * whose hidden name holds nothing (dropped by the next finish), a crash
 * after it a record of a tree still to remove.  Its fields are
 * NUL-terminated "key=value" strings (a path may hold any byte but NUL).
 * Beside it, ID.progress: entries removed and failures, as a finisher
 * left them (rewritten in place, one write of a fixed width), and
 * ID.manifest: what a finisher could not remove (JSON Lines).
 */
#define _GNU_SOURCE
#include <fastrm/detach.h>
#include <fastrm/manifest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fastrm-int.h"

/* How often a finisher writes how far it got. */
#define PROGRESS_EVERY_MS 1000
/* "removed failures\n", each right-aligned in 20 digits */
#define PROGRESS_LEN 42

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_WHO_PROCESS 1

/* ------------------------------------------------------ the state dir */

/* mkdir -p @path, mode 0700 for what is made. */
static int make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, 0700);
		*p = '/';
		if (rc != 0 && errno != EEXIST)
			return -errno;
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(path, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* A user without a home of its own (uid 65534's is /nonexistent):
 * /var/tmp/frm-UID, made 0700, and taken only if it is a directory (not a
 * symlink) of this user that no one else may enter, as tmux does with its
 * socket directory. */
static int user_tmp_dir(char *buf, size_t size)
{
	int n = snprintf(buf, size, "/var/tmp/frm-%ju", (uintmax_t)geteuid());
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (lstat(buf, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EACCES;
	return 0;
}

FASTRM_EXPORT int fastrm_state_dir(char *buf, size_t size)
{
	const char *env = getenv("FASTRM_STATE_DIR");
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (env && *env)
		n = snprintf(buf, size, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(buf, size, "/var/lib/frm");
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/frm", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.local/state/frm", home);
	else
		return user_tmp_dir(buf, size);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	int rc = make_dirs(buf);
	/* a home that is not there or not writable: the user's own in
	 * /var/tmp (but never in place of one named by the environment) */
	if (rc < 0 && !(env && *env) && geteuid() != 0 &&
	    (rc == -EACCES || rc == -ENOENT || rc == -EROFS || rc == -EPERM))
		return user_tmp_dir(buf, size);
	return rc;
}

/* ---------------------------------------------------------- records */

struct record {
	char *path;      /* where it was */
	char *parent;    /* the directory that holds it */
	char *name;      /* its hidden name there */
	dev_t pdev, dev;
	ino_t pino, ino;
	time_t when;
	unsigned flags;
	char *buf;       /* what the fields point into */
};

static void record_free(struct record *r)
{
	free(r->buf);
	free(r->path);
	memset(r, 0, sizeof *r);
}

/* Write all of @len bytes. */
static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* @r as the file @name in @sdfd, synced, made exclusively (or, @replace,
 * through a temporary file renamed over it). */
static int record_write(int sdfd, const char *name, const struct record *r, bool replace)
{
	char head[512];
	int hn = snprintf(head, sizeof head,
	                  "v=1%cpdev=%ju%cpino=%ju%cdev=%ju%cino=%ju%ctime=%jd%cflags=%u%c",
	                  0, (uintmax_t)r->pdev, 0, (uintmax_t)r->pino, 0,
	                  (uintmax_t)r->dev, 0, (uintmax_t)r->ino, 0, (intmax_t)r->when, 0,
	                  r->flags, 0);
	char tmp[64];
	snprintf(tmp, sizeof tmp, "%s.new", name);
	const char *target = replace ? tmp : name;
	int fd = openat(sdfd, target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc = write_all(fd, head, (size_t)hn);
	const char *keys[] = { "path=", "parent=", "name=" };
	const char *vals[] = { r->path, r->parent, r->name };
	for (int i = 0; i < 3 && rc == 0; i++) {
		rc = write_all(fd, keys[i], strlen(keys[i]));
		if (rc == 0)
			rc = write_all(fd, vals[i], strlen(vals[i]) + 1);
	}
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && replace && renameat(sdfd, tmp, sdfd, name) != 0)
		rc = -errno;
	if (rc == 0 && fsync(sdfd) != 0)
		rc = -errno;
	if (rc != 0)
		unlinkat(sdfd, target, 0);
	return rc;
}

/* Read the record open as @fd into @r. */
static int record_read(int fd, struct record *r)
{
	memset(r, 0, sizeof *r);
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (st.st_size <= 0 || st.st_size > 3 * PATH_MAX + 1024)
		return -EINVAL;
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		free(buf);
		return n < 0 ? -errno : -EINVAL;
	}
	buf[n] = '\0';
	r->buf = buf;
	bool v = false;
	for (char *p = buf; p < buf + n;) {
		char *next = p + strlen(p) + 1;
		char *eq = strchr(p, '=');
		if (eq) {
			*eq = '\0';
			const char *val = eq + 1;
			uintmax_t u = strtoumax(val, NULL, 10);
			if (strcmp(p, "v") == 0)
				v = strcmp(val, "1") == 0;
			else if (strcmp(p, "pdev") == 0)
				r->pdev = (dev_t)u;
			else if (strcmp(p, "pino") == 0)
				r->pino = (ino_t)u;
			else if (strcmp(p, "dev") == 0)
				r->dev = (dev_t)u;
			else if (strcmp(p, "ino") == 0)
				r->ino = (ino_t)u;
			else if (strcmp(p, "time") == 0)
				r->when = (time_t)strtoimax(val, NULL, 10);
			else if (strcmp(p, "flags") == 0)
				r->flags = (unsigned)u;
			else if (strcmp(p, "path") == 0 && !r->path)
				r->path = strdup(val);
			else if (strcmp(p, "parent") == 0)
				r->parent = (char *)val;
			else if (strcmp(p, "name") == 0)
				r->name = (char *)val;
		}
		p = next;
	}
	/* what was read must name a hidden name of ours */
	if (!v || !r->path || !r->parent || r->parent[0] != '/' || !r->name ||
	    strncmp(r->name, FASTRM_DETACH_PREFIX, strlen(FASTRM_DETACH_PREFIX)) != 0 ||
	    strchr(r->name, '/')) {
		record_free(r);
		return -EINVAL;
	}
	return 0;
}

/* "ID.rec", "ID.progress", "ID.manifest" */
static void file_of(char *buf, size_t size, const char *id, const char *what)
{
	snprintf(buf, size, "%s.%s", id, what);
}

static bool id_valid(const char *id)
{
	size_t n = strlen(id);
	if (n != FASTRM_DETACH_ID_SIZE - 1)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

/* The state directory open as @sdfd, to read its names (a stream of its
 * own: @sdfd stays open).  NULL with errno. */
static DIR *records_open(int sdfd)
{
	int dfd = dup(sdfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d && dfd >= 0) {
		int e = errno;
		close(dfd);
		errno = e;
	}
	return d;
}

/* Whether @name is a record's ("ID.rec"); its id into @id. */
static bool record_id(const char *name, char id[FASTRM_DETACH_ID_SIZE])
{
	size_t n = strlen(name);
	if (n != FASTRM_DETACH_ID_SIZE - 1 + 4 || strcmp(name + n - 4, ".rec") != 0)
		return false;
	memcpy(id, name, FASTRM_DETACH_ID_SIZE - 1);
	id[FASTRM_DETACH_ID_SIZE - 1] = '\0';
	return id_valid(id);
}

/* The absolute path of the directory open as @fd. */
static char *fd_path(int fd)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/* ----------------------------------------------------------- detach */

FASTRM_EXPORT int fastrm_detach(int dirfd, const char *path, const char *state_dir,
                                unsigned flags, char *id)
{
	if (!path || !state_dir || !id || (flags & ~FASTRM_RMTREE_XDEV))
		return -EINVAL;
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	const char *slash = memrchr(path, '/', len);
	const char *last = slash ? slash + 1 : path;
	size_t last_len = len - (size_t)(last - path);
	if (last_len == 0 || (last_len == 1 && last[0] == '.') ||
	    (last_len == 2 && last[0] == '.' && last[1] == '.'))
		return -EINVAL; /* "/", ".", ".." */
	char *base = strndup(last, last_len);
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
	                  : strdup(".");
	int rc = 0, pfd = -1, sdfd = -1;
	struct record r = { 0 };
	char rec[64] = "";
	if (!base || !dir) {
		rc = -ENOMEM;
		goto out;
	}
	pfd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sdfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat pst, st;
	if (pfd < 0 || sdfd < 0 || fstat(pfd, &pst) != 0 ||
	    fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = -ENOTDIR;
		goto out;
	}
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		rc = -EAGAIN;
		goto out;
	}
	for (int i = 0; i < 8; i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
	char hidden[64];
	snprintf(hidden, sizeof hidden, "%s%s", FASTRM_DETACH_PREFIX, id);
	char *parent = fd_path(pfd);
	if (!parent) {
		rc = -ENOENT; /* no /proc: where it is could not be recorded */
		goto out;
	}
	r.parent = parent;
	r.name = hidden;
	r.path = malloc(strlen(parent) + last_len + 2);
	if (!r.path) {
		free(parent);
		rc = -ENOMEM;
		goto out;
	}
	sprintf(r.path, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", base);
	r.pdev = pst.st_dev;
	r.pino = pst.st_ino;
	r.dev = st.st_dev;
	r.ino = st.st_ino;
	r.when = time(NULL);
	r.flags = flags;
	file_of(rec, sizeof rec, id, "rec");
	rc = record_write(sdfd, rec, &r, false);
	if (rc == 0) {
		if (syscall(SYS_renameat2, pfd, base, pfd, hidden, RENAME_NOREPLACE) != 0) {
			rc = -errno;
			/* a file system without RENAME_NOREPLACE: the name is
			 * 64 random bits, looked at just before */
			struct stat hs;
			if (rc == -EINVAL && fstatat(pfd, hidden, &hs, AT_SYMLINK_NOFOLLOW) != 0 &&
			    errno == ENOENT)
				rc = renameat(pfd, base, pfd, hidden) == 0 ? 0 : -errno;
		}
		struct stat now;
		if (rc == 0 && fstatat(pfd, hidden, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (now.st_dev != r.dev || now.st_ino != r.ino)) {
			/* replaced between the look and the rename: what was
			 * renamed is what the path named then */
			r.dev = now.st_dev;
			r.ino = now.st_ino;
			record_write(sdfd, rec, &r, true);
		}
		if (rc != 0) {
			unlinkat(sdfd, rec, 0);
			fsync(sdfd);
		}
	}
	free(parent);
	free(r.path);
out:
	if (pfd >= 0)
		close(pfd);
	if (sdfd >= 0)
		close(sdfd);
	free(base);
	free(dir);
	return rc;
}

/* ----------------------------------------------------------- finish */

struct finishing {
	const struct fastrm_rmtree_opts *o; /* the caller's */
	int progress_fd;
	unsigned long long removed, failures;
	struct timespec written;
	const char *where;       /* the hidden name's absolute path */
	char *buf;               /* a path under it, for the caller */
	size_t cap;
};

/* @e as the caller sees it: its path under the hidden name, not "./..."
 * (the callbacks are called one at a time: one buffer). */
static const struct fastrm_rmtree_entry *seen(struct finishing *f,
                                              const struct fastrm_rmtree_entry *e,
                                              struct fastrm_rmtree_entry *out)
{
	*out = *e;
	const char *rest = e->path[0] == '.' ? e->path + 1 : e->path;
	size_t need = strlen(f->where) + strlen(rest) + 1;
	if (need > f->cap) {
		char *b = realloc(f->buf, need);
		if (!b)
			return e;
		f->buf = b;
		f->cap = need;
	}
	sprintf(f->buf, "%s%s", f->where, rest);
	out->path = f->buf;
	return out;
}

static void progress_write(struct finishing *f)
{
	char buf[PROGRESS_LEN + 1];
	snprintf(buf, sizeof buf, "%20llu %20llu\n", f->removed, f->failures);
	if (f->progress_fd >= 0)
		(void)!pwrite(f->progress_fd, buf, PROGRESS_LEN, 0); /* only a hint */
	clock_gettime(CLOCK_MONOTONIC, &f->written);
}

static void finishing_removed(void *ctx, const struct fastrm_rmtree_entry *e)
{
	struct finishing *f = ctx;
	/* the clock looked at every 32 entries, not for each */
	if ((++f->removed & 31) == 0) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - f->written.tv_sec) * 1000 +
		    (now.tv_nsec - f->written.tv_nsec) / 1000000 >= PROGRESS_EVERY_MS)
			progress_write(f);
	}
	struct fastrm_rmtree_entry x;
	if (f->o && f->o->removed)
		f->o->removed(f->o->ctx, seen(f, e, &x));
}

static int finishing_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                            enum fastrm_rmtree_error what, int err)
{
	struct finishing *f = ctx;
	/* the rmdir of "." that emptying the directory through its fd ends
	 * with: it is removed by name afterwards */
	if (e->level == 0 && what == FASTRM_RMTREE_EREMOVE && err == EINVAL)
		return 0;
	struct fastrm_rmtree_entry x;
	int counts = f->o && f->o->failed ? f->o->failed(f->o->ctx, seen(f, e, &x), what, err)
	                                  : 1;
	if (counts)
		f->failures++;
	return counts;
}

static void finishing_kept(void *ctx, const struct fastrm_rmtree_entry *e,
                           enum fastrm_rmtree_keep why)
{
	struct finishing *f = ctx;
	struct fastrm_rmtree_entry x;
	if (f->o && f->o->kept)
		f->o->kept(f->o->ctx, seen(f, e, &x), why);
}

static int finishing_ask(void *ctx, const struct fastrm_rmtree_entry *e,
                         enum fastrm_rmtree_step step)
{
	struct finishing *f = ctx;
	struct fastrm_rmtree_entry x;
	return f->o->ask(f->o->ctx, seen(f, e, &x), step);
}

static void stats_add(struct fastrm_rmtree_stats *to, const struct fastrm_rmtree_stats *s)
{
	if (s->workers > to->workers)
		to->workers = s->workers;
	if (s->workers_fitted > to->workers_fitted)
		to->workers_fitted = s->workers_fitted;
	to->subtrees_shared += s->subtrees_shared;
	to->read_ahead_requests += s->read_ahead_requests;
	to->read_ahead_bytes += s->read_ahead_bytes;
	to->index_lookups += s->index_lookups;
	to->inodes_read_ahead += s->inodes_read_ahead;
	to->leaves_read_ahead += s->leaves_read_ahead;
	to->paced_ms += s->paced_ms;
}

/* The record @id of the state directory @sdfd, finished.  The failures,
 * -EBUSY (another finisher holds it), or -errno. */
static int finish_one(int sdfd, const char *id, const struct fastrm_rmtree_opts *opts,
                      struct fastrm_rmtree_stats *stats)
{
	char rec[64], prog[64], man[64];
	file_of(rec, sizeof rec, id, "rec");
	file_of(prog, sizeof prog, id, "progress");
	file_of(man, sizeof man, id, "manifest");
	int rfd = openat(sdfd, rec, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (rfd < 0)
		return errno == ENOENT ? 0 : -errno; /* finished meanwhile */
	if (flock(rfd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		close(rfd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	struct stat rst;
	if (fstat(rfd, &rst) != 0 || rst.st_nlink == 0) {
		close(rfd); /* finished by the one that held it */
		return 0;
	}
	struct record r;
	int rc = record_read(rfd, &r);
	if (rc < 0) {
		close(rfd);
		return rc;
	}
	int failures = 0, pfd = -1, hfd = -1;
	bool gone = false;
	struct stat st;
	pfd = open(r.parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		if (errno == ENOENT)
			gone = true; /* the directory above, and all in it, removed */
		else
			rc = -errno;
		goto done;
	}
	if (fstat(pfd, &st) != 0 || st.st_dev != r.pdev || st.st_ino != r.pino) {
		rc = -ESTALE; /* another directory at that path now */
		goto done;
	}
	if (fstatat(pfd, r.name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			gone = true;
		else
			rc = -errno;
		goto done;
	}
	if (st.st_dev != r.dev || st.st_ino != r.ino) {
		rc = -ESTALE; /* not what was detached: left alone */
		goto done;
	}
	hfd = openat(pfd, r.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (hfd < 0 || fstat(hfd, &st) != 0) {
		rc = -errno;
		goto done;
	}
	if (st.st_dev != r.dev || st.st_ino != r.ino) {
		rc = -ESTALE;
		goto done;
	}
	/* how far earlier finishers got */
	struct finishing f = { .o = opts, .progress_fd = -1 };
	f.progress_fd = openat(sdfd, prog, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f.progress_fd >= 0) {
		char buf[PROGRESS_LEN + 1] = "";
		if (pread(f.progress_fd, buf, PROGRESS_LEN, 0) == PROGRESS_LEN)
			f.removed = strtoull(buf, NULL, 10);
	}
	struct fastrm_rmtree_opts own = { .size = sizeof own };
	if (opts)
		own = *opts;
	own.size = sizeof own;
	own.flags |= FASTRM_RMTREE_ALLOW_DOTS | (r.flags & FASTRM_RMTREE_XDEV);
	/* one callback at a time (seen()'s buffer) */
	own.flags &= ~(unsigned)(FASTRM_RMTREE_DRY_RUN | FASTRM_RMTREE_ASK_CONCURRENT);
	own.ctx = &f;
	own.root = NULL;
	own.removed = finishing_removed;
	own.failed = finishing_failed;
	own.kept = opts && opts->kept ? finishing_kept : NULL;
	own.ask = opts && opts->ask ? finishing_ask : NULL;
	struct fastrm_manifest *m = NULL;
	int mfd = -1;
	char *where = malloc(strlen(r.parent) + strlen(r.name) + 2);
	if (!where) {
		rc = -ENOMEM;
		goto done_progress;
	}
	sprintf(where, "%s%s%s", r.parent, strcmp(r.parent, "/") ? "/" : "", r.name);
	f.where = where;
	if (!own.manifest) {
		mfd = openat(sdfd, man, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		m = mfd >= 0 ? fastrm_manifest_new(mfd, FASTRM_MANIFEST_JSON,
		                                   FASTRM_MANIFEST_FAILURES)
		             : NULL;
		if (m && fastrm_manifest_set_base(m, where) == 0)
			own.manifest = m;
	} else if (fastrm_manifest_set_base(own.manifest, where) != 0) {
		rc = -ENOMEM;
		goto done_manifest;
	}
	char *dot[] = { ".", NULL };
	struct fastrm_rmtree_stats s = { 0 };
	int n = fastrm_rmtreeat(hfd, dot, &own, &s);
	if (stats)
		stats_add(stats, &s);
	if (n < 0) {
		rc = n;
	} else {
		failures = n;
		/* emptied: the directory itself, by name, if it is still it */
		struct stat again;
		if (n == 0 && fstatat(pfd, r.name, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
		    again.st_dev == r.dev && again.st_ino == r.ino) {
			if (unlinkat(pfd, r.name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
				gone = true;
				f.removed++;
			} else {
				failures = 1;
				if (m)
					fastrm_manifest_add(m, where, S_IFDIR, FASTRM_OUTCOME_FAILED,
					                    errno, "rmdir");
			}
		}
	}
	f.failures = (unsigned long long)failures;
done_manifest:
	if (m) {
		fastrm_manifest_finish(m, rc < 0 || failures ? 1 : 0);
		fastrm_manifest_free(m);
	}
	if (mfd >= 0)
		close(mfd);
	free(where);
	free(f.buf);
done_progress:
	progress_write(&f);
	if (f.progress_fd >= 0)
		close(f.progress_fd);
done:
	if (gone) {
		/* the record last: a crash before leaves one to drop again */
		unlinkat(sdfd, prog, 0);
		if (!failures)
			unlinkat(sdfd, man, 0);
		unlinkat(sdfd, rec, 0);
		fsync(sdfd);
	}
	if (hfd >= 0)
		close(hfd);
	if (pfd >= 0)
		close(pfd);
	record_free(&r);
	close(rfd); /* and its lock */
	return rc < 0 ? rc : failures;
}

FASTRM_EXPORT int fastrm_finish(const char *state_dir, const char *id,
                                const struct fastrm_rmtree_opts *opts,
                                struct fastrm_rmtree_stats *stats)
{
	if (!state_dir || (id && !id_valid(id)))
		return -EINVAL;
	if (stats)
		memset(stats, 0, sizeof *stats);
	int sdfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sdfd < 0)
		return -errno;
	if (id) {
		int rc = finish_one(sdfd, id, opts, stats);
		close(sdfd);
		return rc;
	}
	DIR *d = records_open(sdfd);
	if (!d) {
		int e = errno;
		close(sdfd);
		return -e;
	}
	long long failures = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char one[FASTRM_DETACH_ID_SIZE];
		if (!record_id(de->d_name, one))
			continue;
		int r = finish_one(sdfd, one, opts, stats);
		if (r == -EBUSY)
			continue; /* its finisher is at work */
		if (r == -EINTR) {
			rc = r;
			break;
		}
		if (r < 0)
			failures++; /* this one could not be finished */
		else
			failures += r;
	}
	closedir(d);
	close(sdfd);
	if (rc < 0)
		return rc;
	return failures > INT32_MAX ? INT32_MAX : (int)failures;
}

FASTRM_EXPORT int fastrm_pending(const char *state_dir,
                                 int (*each)(void *ctx, const struct fastrm_detached *d),
                                 void *ctx)
{
	if (!state_dir || !each)
		return -EINVAL;
	int sdfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sdfd < 0)
		return -errno;
	DIR *d = records_open(sdfd);
	if (!d) {
		int e = errno;
		close(sdfd);
		return -e;
	}
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char id[FASTRM_DETACH_ID_SIZE], prog[64];
		if (!record_id(de->d_name, id))
			continue;
		int rfd = openat(sdfd, de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct record r;
		if (rfd < 0 || record_read(rfd, &r) != 0) {
			if (rfd >= 0)
				close(rfd);
			continue; /* finished meanwhile, or not ours */
		}
		struct fastrm_detached x = { .id = id, .path = r.path, .dev = r.dev,
		                             .ino = r.ino, .when = r.when };
		/* held by a finisher? (a shared lock is refused then) */
		if (flock(rfd, LOCK_SH | LOCK_NB) != 0)
			x.active = 1;
		else
			flock(rfd, LOCK_UN);
		char *hidden = malloc(strlen(r.parent) + strlen(r.name) + 2);
		if (hidden)
			sprintf(hidden, "%s%s%s", r.parent, strcmp(r.parent, "/") ? "/" : "",
			        r.name);
		x.hidden = hidden ? hidden : r.name;
		file_of(prog, sizeof prog, id, "progress");
		int pf = openat(sdfd, prog, O_RDONLY | O_CLOEXEC);
		if (pf >= 0) {
			char buf[PROGRESS_LEN + 1] = "";
			if (pread(pf, buf, PROGRESS_LEN, 0) == PROGRESS_LEN) {
				char *end;
				x.removed = strtoull(buf, &end, 10);
				x.failures = (int)strtoul(end, NULL, 10);
			}
			close(pf);
		}
		rc = each(ctx, &x);
		free(hidden);
		record_free(&r);
		close(rfd);
	}
	closedir(d);
	close(sdfd);
	return rc;
}

/* ---------------------------------------------------------- finisher */

FASTRM_EXPORT pid_t fastrm_finisher(const char *state_dir, char *const *ids,
                                    unsigned workers, double max_rate,
                                    unsigned long long latency_target_us)
{
	if (!state_dir || !ids || !(max_rate >= 0))
		return -EINVAL;
	for (char *const *i = ids; *i; i++)
		if (!id_valid(*i))
			return -EINVAL;
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -errno;
	pid_t mid = fork();
	if (mid < 0) {
		int e = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return -e;
	}
	if (mid == 0) {
		/* the one in the middle: a session of its own, then the
		 * finisher, whose pid it passes up before it exits */
		close(pipefd[0]);
		setsid();
		signal(SIGHUP, SIG_IGN);
		pid_t fin = fork();
		if (fin != 0) {
			pid_t out = fin < 0 ? -errno : fin;
			(void)!write(pipefd[1], &out, sizeof out);
			_exit(0);
		}
		close(pipefd[1]);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		/* the signals the caller blocked or ignored: back to default,
		 * but SIGHUP (no terminal to hang up) */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		setpriority(PRIO_PROCESS, 0, 19);
		syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		        IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT);
		struct fastrm_rmtree_opts o = { .size = sizeof o,
			.workers = workers ? workers : 8,
			.flags = workers ? 0 : FASTRM_RMTREE_FIT_WORKERS,
			.max_rate = max_rate,
			.latency_target_us = latency_target_us };
		if (!max_rate && !latency_target_us)
			o.latency_target_us = FASTRM_FINISHER_LATENCY_US;
		int bad = 0;
		for (char *const *i = ids; *i; i++)
			if (fastrm_finish(state_dir, *i, &o, NULL) != 0)
				bad = 1;
		_exit(bad);
	}
	close(pipefd[1]);
	pid_t fin = -EIO;
	ssize_t n;
	while ((n = read(pipefd[0], &fin, sizeof fin)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof fin)
		fin = -EIO;
	close(pipefd[0]);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	return fin;
}
