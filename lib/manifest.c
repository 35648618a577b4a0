/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The outcome manifest (include/fastrm/manifest.h): records built in a
 * buffer and written in blocks, each record whole within a page of the
 * file where it fits one, so that a kill leaves whole records only.
 *
 * Why pages: a write() to a regular file copies page by page and checks
 * for a fatal signal between pages (generic_perform_write), so that a
 * write crossing a page boundary can be cut there, never inside a page.
 * A record that would cross one starts on the next page instead: in JSON
 * the line before it ends with spaces (its newline is held back until the
 * next record is known, so that the spaces go before it); in the NUL
 * format, NUL bytes (empty records) fill the page.
 */
#define _GNU_SOURCE
#include "manifest-int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fastrm-int.h"

#define PAGE 4096u          /* the smallest page: any larger is a multiple */
#define FLUSH_BYTES (64u << 10)
#define FLUSH_NS 1000000000L
#define MAX_WATCH 16
#define MAX_ERRNO 256

enum { T_FILE, T_DIR, T_LINK, T_FIFO, T_SOCK, T_CHR, T_BLK, T_UNKNOWN, NTYPES };
static const char *const type_names[NTYPES] = {
	"file", "dir", "symlink", "fifo", "socket", "char", "block", "unknown",
};
static const char *const outcome_names[] = {
	[FASTRM_OUTCOME_REMOVED] = "removed",
	[FASTRM_OUTCOME_FAILED] = "failed",
	[FASTRM_OUTCOME_KEPT] = "kept",
	[FASTRM_OUTCOME_PLANNED] = "planned",
};

struct watch {
	int fd;                  /* O_PATH, on the file system watched */
	unsigned long fsid;
	unsigned long long free_before;
};

struct fastrm_manifest {
	pthread_mutex_t mu;
	int fd;
	int format;
	unsigned flags;
	char *buf;               /* what is not written yet */
	size_t len, cap;
	unsigned long long off;  /* where buf goes in the file */
	bool nl_pending;         /* JSON: the last line's newline is held back */
	int err;                 /* the first write error (positive errno) */
	char *base;              /* set_base: written in place of "." */
	struct timespec start, flushed;
	uintmax_t removed[NTYPES], planned[NTYPES], kept, failed;
	uintmax_t by_errno[MAX_ERRNO + 1]; /* the last: any larger value */
	struct watch watch[MAX_WATCH];
	unsigned nwatch;
};

static unsigned type_index(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return T_FILE;
	case S_IFDIR: return T_DIR;
	case S_IFLNK: return T_LINK;
	case S_IFIFO: return T_FIFO;
	case S_IFSOCK: return T_SOCK;
	case S_IFCHR: return T_CHR;
	case S_IFBLK: return T_BLK;
	default: return T_UNKNOWN;
	}
}

static const char *type_name(mode_t mode)
{
	return type_names[type_index(mode)];
}

const char *manifest_errno_name(int err)
{
	const char *n = err > 0 ? strerrorname_np(err) : NULL;
	return n;
}

/* ------------------------------------------------------------- buffer */

static bool reserve(struct fastrm_manifest *m, size_t more)
{
	if (m->len + more <= m->cap)
		return true;
	size_t cap = m->cap ? m->cap : 4 * FLUSH_BYTES;
	while (cap < m->len + more)
		cap *= 2;
	char *b = realloc(m->buf, cap);
	if (!b)
		return false;
	m->buf = b;
	m->cap = cap;
	return true;
}

static void put(struct fastrm_manifest *m, const char *s, size_t n)
{
	memcpy(m->buf + m->len, s, n);
	m->len += n;
}

static void puts_(struct fastrm_manifest *m, const char *s)
{
	put(m, s, strlen(s));
}

/* Write the buffer out (with the lock). */
static void flush(struct fastrm_manifest *m)
{
	size_t done = 0;
	while (done < m->len && !m->err) {
		ssize_t w = write(m->fd, m->buf + done, m->len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			__atomic_store_n(&m->err, w < 0 ? errno : EIO, __ATOMIC_RELAXED);
			break;
		}
		done += (size_t)w;
	}
	m->off += m->len;
	m->len = 0;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &m->flushed);
}

/* The length of the longest valid UTF-8 sequence at @s (of @n bytes
 * left), or 0 where the byte there starts none (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), as Python's decoder
 * judges: a byte it rejects is written as \udcXX, and os.fsencode()
 * gives it back. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* The bytes a JSON string holds as they are. */
static const bool plain[256] = {
#define OK(c) ((c) != '"' && (c) != '\\')
#define P4(c) [c] = OK(c), [c + 1] = OK(c + 1), [c + 2] = OK(c + 2), [c + 3] = OK(c + 3)
#define P16(c) P4(c), P4(c + 4), P4(c + 8), P4(c + 12)
	P16(0x20), P16(0x30), P16(0x40), P16(0x50), P16(0x60), P16(0x70),
#undef P16
#undef P4
#undef OK
};

/* @s (@n bytes) as the inside of a JSON string: the room it needs is at
 * most 6 bytes a byte. */
static void put_json(struct fastrm_manifest *m, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	char *o = m->buf + m->len;
	for (size_t i = 0; i < n;) {
		/* a run of bytes written as they are, copied at once */
		size_t j = i;
		while (j < n && plain[s[j]])
			j++;
		if (j > i) {
			memcpy(o, s + i, j - i);
			o += j - i;
			i = j;
			continue;
		}
		unsigned char c = s[i];
		if (c >= 0x80) {
			size_t l = utf8_len(s + i, n - i);
			if (l) {
				memcpy(o, s + i, l);
				o += l;
				i += l;
			} else {
				memcpy(o, "\\udc", 4);
				o[4] = hex[c >> 4];
				o[5] = hex[c & 15];
				o += 6;
				i++;
			}
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\t': *o++ = 't'; break;
		case '\r': *o++ = 'r'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		default:
			memcpy(o, "u00", 3);
			o[3] = hex[c >> 4];
			o[4] = hex[c & 15];
			o += 5;
		}
		i++;
	}
	m->len = (size_t)(o - m->buf);
}

/* Make room for a record of at most @max bytes, built from the buffer's
 * end a page and a byte further on (place_record() moves it back once its
 * length is known).  Returns the record's mark, or SIZE_MAX without
 * memory. */
static size_t begin_record(struct fastrm_manifest *m, size_t max)
{
	if (!reserve(m, max + PAGE + 2))
		return SIZE_MAX;
	size_t mark = m->len;
	m->len += PAGE + 1;
	return mark;
}

/* The record built since @mark: placed after the previous one, so that
 * it crosses no page boundary where it fits in a page (the line before
 * it, or empty records, fill the page up), and ended. */
static void end_record(struct fastrm_manifest *m, size_t mark)
{
	size_t from = mark + PAGE + 1, len = m->len - from;
	m->len = mark;
	unsigned long long pos = m->off + m->len;
	if (m->format == FASTRM_MANIFEST_JSON) {
		if (m->nl_pending) {
			/* the record starts after the newline; the newline
			 * ends the page where the record would cross it */
			unsigned in = (unsigned)((pos + 1) % PAGE);
			if (len + 1 <= PAGE && in != 0 && in + len + 1 > PAGE) {
				size_t pad = PAGE - 1 - (size_t)(pos % PAGE);
				memset(m->buf + m->len, ' ', pad);
				m->len += pad;
			}
			m->buf[m->len++] = '\n';
		}
	} else {
		unsigned in = (unsigned)(pos % PAGE);
		if (len + 1 <= PAGE && in != 0 && in + len + 1 > PAGE) {
			size_t pad = PAGE - in;
			memset(m->buf + m->len, '\0', pad);
			m->len += pad;
		}
	}
	memmove(m->buf + m->len, m->buf + from, len);
	m->len += len;
	if (m->format == FASTRM_MANIFEST_JSON)
		m->nl_pending = true;
	else
		m->buf[m->len++] = '\0';
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	if (m->len >= FLUSH_BYTES ||
	    (now.tv_sec - m->flushed.tv_sec) * 1000000000L +
	            (now.tv_nsec - m->flushed.tv_nsec) >= FLUSH_NS)
		flush(m);
}

/* ----------------------------------------------------------- records */

FASTRM_EXPORT const char *fastrm_manifest_op(enum fastrm_rmtree_error what, int is_dir)
{
	switch (what) {
	case FASTRM_RMTREE_EREMOVE: return is_dir ? "rmdir" : "unlink";
	case FASTRM_RMTREE_EWALK: return "read";
	case FASTRM_RMTREE_ECYCLE: return "cycle";
	case FASTRM_RMTREE_EXDEV: return "cross-device";
	case FASTRM_RMTREE_EREFUSED: return "refused";
	}
	return NULL;
}

FASTRM_EXPORT const char *fastrm_manifest_reason(enum fastrm_rmtree_keep why)
{
	switch (why) {
	case FASTRM_RMTREE_KEPT_BELOW: return "below";
	case FASTRM_RMTREE_KEPT_EXCLUDED: return "excluded";
	case FASTRM_RMTREE_KEPT_DECLINED: return "declined";
	}
	return NULL;
}

FASTRM_EXPORT struct fastrm_manifest *fastrm_manifest_new(int fd, int format, unsigned flags)
{
	if (fd < 0 || (format != FASTRM_MANIFEST_JSON && format != FASTRM_MANIFEST_NUL) ||
	    (flags & ~FASTRM_MANIFEST_FAILURES)) {
		errno = EINVAL;
		return NULL;
	}
	struct fastrm_manifest *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	pthread_mutex_init(&m->mu, NULL);
	m->fd = fd;
	m->format = format;
	m->flags = flags;
	off_t at = lseek(fd, 0, SEEK_CUR);
	m->off = at > 0 ? (unsigned long long)at : 0;
	clock_gettime(CLOCK_MONOTONIC, &m->start);
	m->flushed = m->start;
	return m;
}

FASTRM_EXPORT int fastrm_manifest_set_base(struct fastrm_manifest *m, const char *path)
{
	char *b = strdup(path);
	if (!b)
		return -ENOMEM;
	pthread_mutex_lock(&m->mu);
	free(m->base);
	m->base = b;
	pthread_mutex_unlock(&m->mu);
	return 0;
}

/* The counts of the summary (with the lock). */
static void count(struct fastrm_manifest *m, mode_t mode,
                  enum fastrm_outcome outcome, int err)
{
	switch (outcome) {
	case FASTRM_OUTCOME_REMOVED:
		m->removed[type_index(mode)]++;
		break;
	case FASTRM_OUTCOME_PLANNED:
		m->planned[type_index(mode)]++;
		break;
	case FASTRM_OUTCOME_KEPT:
		m->kept++;
		break;
	case FASTRM_OUTCOME_FAILED:
		m->failed++;
		m->by_errno[err > 0 && err < MAX_ERRNO ? err : MAX_ERRNO]++;
		break;
	}
}

FASTRM_EXPORT int fastrm_manifest_add(struct fastrm_manifest *m, const char *path,
                        mode_t mode, enum fastrm_outcome outcome, int err,
                        const char *op)
{
	if (outcome < FASTRM_OUTCOME_REMOVED || outcome > FASTRM_OUTCOME_PLANNED)
		return -EINVAL;
	bool dot = path[0] == '.' && (path[1] == '\0' || path[1] == '/');
	bool left = outcome == FASTRM_OUTCOME_FAILED || outcome == FASTRM_OUTCOME_KEPT;
	if ((m->flags & FASTRM_MANIFEST_FAILURES) && !left) {
		/* counted only: no lock (the summary reads them under it,
		 * once every writer is done) */
		uintmax_t *c = outcome == FASTRM_OUTCOME_REMOVED ? m->removed : m->planned;
		__atomic_add_fetch(&c[type_index(mode)], 1, __ATOMIC_RELAXED);
		return __atomic_load_n(&m->err, __ATOMIC_RELAXED) ? -m->err : 0;
	}
	pthread_mutex_lock(&m->mu);
	count(m, mode, outcome, err);
	if (outcome == FASTRM_OUTCOME_KEPT && !op)
		op = "below";
	const char *base = dot && m->base ? m->base : NULL;
	const char *rest = base ? path + 1 : path;
	size_t bl = base ? strlen(base) : 0, rl = strlen(rest);
	const char *en = outcome == FASTRM_OUTCOME_FAILED ? manifest_errno_name(err) : NULL;
	char ebuf[24];
	if (outcome == FASTRM_OUTCOME_FAILED && !en) {
		snprintf(ebuf, sizeof ebuf, "%d", err);
		en = ebuf;
	}
	size_t oplen = op ? strlen(op) : 0;
	/* the largest it can be */
	size_t max = 6 * (bl + rl) + 2 * 6 * oplen + 128;
	size_t mark = begin_record(m, max);
	if (mark == SIZE_MAX) {
		if (!m->err)
			__atomic_store_n(&m->err, ENOMEM, __ATOMIC_RELAXED);
		goto out;
	}
	if (m->format == FASTRM_MANIFEST_JSON) {
		puts_(m, "{\"path\":\"");
		put_json(m, base ? base : "", bl);
		put_json(m, rest, rl);
		puts_(m, "\",\"type\":\"");
		puts_(m, type_name(mode));
		puts_(m, "\",\"outcome\":\"");
		puts_(m, outcome_names[outcome]);
		puts_(m, "\"");
		if (outcome == FASTRM_OUTCOME_FAILED) {
			puts_(m, ",\"errno\":\"");
			puts_(m, en);
			puts_(m, "\"");
		}
		if (op) {
			puts_(m, outcome == FASTRM_OUTCOME_KEPT ? ",\"reason\":\"" : ",\"op\":\"");
			put_json(m, op, oplen);
			puts_(m, "\"");
		}
		puts_(m, "}");
	} else {
		puts_(m, outcome_names[outcome]);
		puts_(m, "\t");
		puts_(m, type_name(mode));
		puts_(m, "\t");
		puts_(m, en ? en : "-");
		puts_(m, "\t");
		if (base)
			put(m, base, bl);
		put(m, rest, rl);
	}
	end_record(m, mark);
out:;
	int rc = m->err ? -m->err : 0;
	pthread_mutex_unlock(&m->mu);
	return rc;
}

/* ------------------------------------------------------------ summary */

/* The free bytes of the file system open as @fd. */
static bool free_bytes(int fd, unsigned long *fsid, unsigned long long *bytes)
{
	struct statvfs v;
	if (fstatvfs(fd, &v) != 0)
		return false;
	*fsid = v.f_fsid;
	*bytes = (unsigned long long)v.f_bfree * v.f_frsize;
	return true;
}

void manifest_watch(struct fastrm_manifest *m, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	unsigned long fsid;
	unsigned long long bytes;
	if (fd < 0)
		return;
	if (!free_bytes(fd, &fsid, &bytes)) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&m->mu);
	bool seen = false;
	for (unsigned i = 0; i < m->nwatch && !seen; i++)
		seen = m->watch[i].fsid == fsid;
	if (!seen && m->nwatch < MAX_WATCH) {
		m->watch[m->nwatch++] = (struct watch){ fd, fsid, bytes };
		fd = -1;
	}
	pthread_mutex_unlock(&m->mu);
	if (fd >= 0)
		close(fd);
}

static void put_num(struct fastrm_manifest *m, const char *key, uintmax_t v)
{
	char b[64];
	int n = snprintf(b, sizeof b, ",\"%s\":%ju", key, v);
	put(m, b, (size_t)n);
}

/* {"file":N,...} of the types counted, after ",\"@key\":". */
static void put_types(struct fastrm_manifest *m, const char *key,
                      const uintmax_t *v)
{
	char b[64];
	put(m, ",\"", 2);
	puts_(m, key);
	puts_(m, "\":{");
	bool first = true;
	for (unsigned i = 0; i < NTYPES; i++) {
		if (!v[i])
			continue;
		int n = snprintf(b, sizeof b, "%s\"%s\":%ju", first ? "" : ",",
		                 type_names[i], v[i]);
		put(m, b, (size_t)n);
		first = false;
	}
	puts_(m, "}");
}

FASTRM_EXPORT int fastrm_manifest_finish(struct fastrm_manifest *m, int exit_status)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	unsigned long long gained = 0;
	pthread_mutex_lock(&m->mu);
	for (unsigned i = 0; i < m->nwatch; i++) {
		unsigned long fsid;
		unsigned long long after;
		if (free_bytes(m->watch[i].fd, &fsid, &after) &&
		    after > m->watch[i].free_before)
			gained += after - m->watch[i].free_before;
	}
	uintmax_t removed = 0, planned = 0;
	for (unsigned i = 0; i < NTYPES; i++) {
		removed += m->removed[i];
		planned += m->planned[i];
	}
	/* a bounded size: every errno's entry, the fixed fields */
	size_t mark = begin_record(m, 512 + 40 * (MAX_ERRNO + 1) + 60 * 2 * NTYPES);
	if (mark == SIZE_MAX) {
		if (!m->err)
			__atomic_store_n(&m->err, ENOMEM, __ATOMIC_RELAXED);
		goto out;
	}
	if (m->format == FASTRM_MANIFEST_NUL)
		puts_(m, "summary\t");
	puts_(m, "{\"outcome\":\"summary\"");
	put_num(m, "removed", removed);
	put_num(m, "failed", m->failed);
	put_num(m, "kept", m->kept);
	put_num(m, "planned", planned);
	put_types(m, "removed_by_type", m->removed);
	if (planned)
		put_types(m, "planned_by_type", m->planned);
	puts_(m, ",\"failed_by_errno\":{");
	bool first = true;
	for (int e = 1; e <= MAX_ERRNO; e++) {
		if (!m->by_errno[e])
			continue;
		char b[80];
		const char *en = e < MAX_ERRNO ? manifest_errno_name(e) : "other";
		int n = en ? snprintf(b, sizeof b, "%s\"%s\":%ju", first ? "" : ",", en,
		                      m->by_errno[e])
		           : snprintf(b, sizeof b, "%s\"%d\":%ju", first ? "" : ",", e,
		                      m->by_errno[e]);
		put(m, b, (size_t)n);
		first = false;
	}
	puts_(m, "}");
	put_num(m, "bytes_freed", gained);
	char b[64];
	int n = snprintf(b, sizeof b, ",\"elapsed_s\":%.6f",
	                 (double)(now.tv_sec - m->start.tv_sec) +
	                         (double)(now.tv_nsec - m->start.tv_nsec) / 1e9);
	put(m, b, (size_t)n);
	n = snprintf(b, sizeof b, ",\"exit_status\":%d}", exit_status);
	put(m, b, (size_t)n);
	end_record(m, mark);
	if (m->format == FASTRM_MANIFEST_JSON) {
		m->buf[m->len++] = '\n';
		m->nl_pending = false;
	}
out:
	flush(m);
	int rc = m->err ? -m->err : 0;
	pthread_mutex_unlock(&m->mu);
	return rc;
}

FASTRM_EXPORT int fastrm_manifest_free(struct fastrm_manifest *m)
{
	if (!m)
		return 0;
	pthread_mutex_lock(&m->mu);
	if (m->nl_pending && reserve(m, 1)) {
		m->buf[m->len++] = '\n';
		m->nl_pending = false;
	}
	flush(m);
	int rc = m->err ? -m->err : 0;
	pthread_mutex_unlock(&m->mu);
	for (unsigned i = 0; i < m->nwatch; i++)
		close(m->watch[i].fd);
	pthread_mutex_destroy(&m->mu);
	free(m->base);
	free(m->buf);
	free(m);
	return rc;
}
