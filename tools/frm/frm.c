/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frm -- remove files and directories, a drop-in replacement for GNU rm
 * built on libfastrm.
 *
 * The driver follows GNU coreutils 9.1 rm point for point: the options,
 * the refusals (/, . and .., directories without -r/-d), the prompts, the
 * messages (prefixed with argv[0] as invoked) and the exit status.  The
 * removal itself, and its rules (what is retried, what is kept above a
 * failure, what is reported), are libfastrm's fastrm_rmtree(), with
 * --jobs workers, or one where rm asks about every entry (-i) or about
 * the paths given (GNU rm's order of questions); frm is the options, the
 * refusals, the prompts and the messages, through the engine's
 * callbacks.
 */
#define _GNU_SOURCE
#include <fastrm/detach.h>
#include <fastrm/fts.h>
#include <fastrm/manifest.h>
#include <fastrm/rmtree.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "jobs.h"
#include "quote.h"

#ifndef FRM_VERSION
#define FRM_VERSION "0.0"
#endif

static const char *program_name = "frm";

#define STR_(x) #x
#define STR(x) STR_(x)

/* Set by SIGINT, SIGTERM, SIGHUP: stop after the current entry.  The
 * library's workers read it too (fastrm_rmtree's stop): the store is
 * atomic (lock-free for an int, so safe in a signal handler). */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	__atomic_store_n(&stop_signal, sig, __ATOMIC_RELAXED);
}

/* Stop on @sig, unless it was ignored when frm started: nohup, and a
 * background job of a non-interactive shell (SIGINT, SIGQUIT ignored),
 * mean to let the removal finish, and GNU rm, which catches nothing,
 * does finish there. */
static void stop_on(int sig)
{
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* A closed stdout or stderr must not kill frm before it removed what it
 * could and reported its exit status (writes then fail instead);
 * SIGINT, SIGTERM and SIGHUP stop it after the entry in hand. */
static void catch_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	stop_on(SIGINT);
	stop_on(SIGTERM);
	stop_on(SIGHUP);
}

enum interactive { RMI_ALWAYS, RMI_SOMETIMES, RMI_NEVER };

struct rm_options {
	bool ignore_missing;
	enum interactive interactive;
	bool one_file_system;
	bool remove_empty_dirs;
	bool recursive;
	bool preserve_all_root;
	bool stdin_tty;
	bool verbose;
	const struct stat *root; /* "/" when --preserve-root applies */
	bool stats;
	bool progress;
	const struct fastrm_order *order;
	size_t memory;
	unsigned jobs;
	bool jobs_auto;          /* --jobs=auto: the library may run fewer */
	bool dry_run;            /* --dry-run: decide all, remove nothing */
	bool null;               /* --null: the dry run's list ends paths
	                            with NUL */
	const char *manifest;    /* --manifest=FILE ("-": stdout) */
	int manifest_format;     /* FASTRM_MANIFEST_JSON or _NUL */
	bool manifest_failures;  /* --manifest-failures */
	char **exclude;          /* --exclude, --exclude-from: NULL-ended */
	size_t nexclude;
	bool detach;             /* --detach */
	bool finish;             /* --finish */
	bool list;               /* --list (with --finish) */
	double max_rate;         /* --max-rate: entries/s, 0: none */
	unsigned long long latency_target_us; /* --latency-target, 0: none */
};

enum rm_status { RM_OK, RM_USER_ACCEPTED, RM_USER_DECLINED, RM_ERROR };

/* What --stats reports. */
static struct {
	uintmax_t files, dirs, failures;
	struct timespec start;
} counters;

/* ------------------------------------------------------------ messages */

static void verror(int errnum, const char *fmt, va_list ap)
{
	progress_hold();
	fflush(stdout);
	fprintf(stderr, "%s: ", program_name);
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	progress_release();
}

__attribute__((format(printf, 2, 3)))
static void error_msg(int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(errnum, fmt, ap);
	va_end(ap);
}

static void try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n",
	        program_name);
}

/* The help text: the single source of frm --help and, through help2man,
 * of the man page frm(1). */
static void usage(void)
{
	printf("Usage: %s [OPTION]... [FILE]...\n", program_name);
	fputs("Remove (unlink) the FILE(s).\n"
"\n"
"  -f, --force           ignore nonexistent files and arguments, never prompt\n"
"  -i                    prompt before every removal\n"
"  -I                    prompt once before removing more than three files, or\n"
"                          when removing recursively; less intrusive than -i,\n"
"                          while still giving protection against most mistakes\n"
"      --interactive[=WHEN]  prompt according to WHEN: never, once (-I), or\n"
"                          always (-i); without WHEN, prompt always\n"
"      --one-file-system  when removing a hierarchy recursively, skip any\n"
"                          directory that is on a file system different from\n"
"                          that of the corresponding command line argument\n"
"      --no-preserve-root  do not treat '/' specially\n"
"      --preserve-root[=all]  do not remove '/' (default);\n"
"                              with 'all', reject any command line argument\n"
"                              on a separate device from its parent\n"
"  -r, -R, --recursive   remove directories and their contents recursively\n"
"  -d, --dir             remove empty directories\n"
"  -v, --verbose         explain what is being done\n"
"      --stats           at the end, print a summary on stderr: entries\n"
"                          removed, failures, elapsed time, rate, peak memory,\n"
"                          workers, and what was read ahead\n"
"      --progress        when stderr is a terminal, show a live line: entries\n"
"                          removed and their share of all (estimated as the\n"
"                          walk goes, without a walk first), rate, elapsed\n"
"                          time and time left; see PROGRESS in frm(1)\n"
"      --dry-run         remove nothing: decide as a real run would (prompts\n"
"                          are answered no) and list what it would remove on\n"
"                          stdout, one path a line; see DRY RUN in frm(1)\n"
"      --null            with --dry-run: end each path listed with NUL\n"
"      --exclude=PATTERN  keep what matches PATTERN, and the directories\n"
"                          above it (no error): a shell pattern on the name,\n"
"                          or, when it holds a '/', on the path below the\n"
"                          argument; ending in '/': directories only\n"
"      --exclude-from=FILE  the patterns of FILE, one a line ('-': stdin;\n"
"                          empty lines and lines starting with '#' skipped)\n"
"      --manifest=FILE   write a record of each entry removed, failed or\n"
"                          kept, and a summary, to FILE ('-': stdout); see\n"
"                          MANIFEST in frm(1)\n"
"      --manifest-format=FORMAT  json (JSON Lines, the default) or nul\n"
"                          (tab-separated fields, NUL-terminated records)\n"
"      --manifest-failures  only what was left (failed, kept) and the summary\n"
"      --order=POLICY    the order in which each directory's entries are\n"
"                          removed:", stdout);
	/* the library's own list of its policies, wrapped as the rest */
	char list[512];
	size_t n = 0;
	const struct fastrm_order *o;
	for (size_t i = 0; (o = fastrm_order_builtin(i)) != NULL && n < 400; i++)
		n += (size_t)snprintf(list + n, sizeof list - n, "%s%s%s",
		                      i == 0 ? "" : fastrm_order_builtin(i + 1) ? ", " : " or ",
		                      o->name, i == 0 ? " (default)" : "");
	snprintf(list + n, sizeof list - n, "; see ORDERING POLICIES in frm(1)");
	size_t col = 35;
	for (char *w = strtok(list, " "); w; w = strtok(NULL, " ")) {
		if (col + 1 + strlen(w) > 78) {
			fputs("\n                         ", stdout);
			col = 25;
		}
		printf(" %s", w);
		col += 1 + strlen(w);
	}
	fputs("\n"
"      --memory=SIZE     memory the ordering may use, e.g. 64M (default 8M);\n"
"                          K, M, G, T are powers of 1024\n"
"      --jobs=N          remove with N workers at once (1-" STR(JOBS_MAX) ", or auto: the\n"
"                          default, " STR(AUTO_JOBS_PER_CPU) " per CPU, at most " STR(AUTO_JOBS_MAX) ", or " STR(AUTO_JOBS_REMOTE) " on\n"
"                          a network file system or on XFS whose reads seek,\n"
"                          as a plain user): subtrees, and\n"
"                          files given as arguments; the same messages and\n"
"                          questions, in another order; 1: one at a time,\n"
"                          in GNU rm's order, as with -i; see PARALLEL\n"
"                          REMOVAL in frm(1)\n"
"      --max-rate=N      remove at most N entries a second, all workers\n"
"                          together (e.g. 500, 2k, 1M; k and M: thousands,\n"
"                          millions); see PACING in frm(1)\n"
"      --latency-target=TIME  keep the latency of the device's requests\n"
"                          near TIME (e.g. 50ms; us, ms or s): the removal\n"
"                          slows down at once while they wait longer, and\n"
"                          speeds up slowly while they do not; with\n"
"                          --max-rate, never above it; see PACING in frm(1)\n"
"      --detach          rename each directory given to a hidden name beside\n"
"                          it and return at once; a finisher of its own\n"
"                          (paced, at the lowest priority) removes them; what\n"
"                          cannot be renamed is removed in place; see DETACH\n"
"                          in frm(1)\n"
"      --finish [ID]...  remove what was detached and is not being removed\n"
"                          now (a finisher killed, a crash), or the records\n"
"                          given, here and now\n"
"      --list            with --finish: list what was detached and is not\n"
"                          removed yet, and how far each got\n"
"      --help     display this help and exit\n"
"      --version  output version information and exit\n"
"\n"
"By default, frm does not remove directories.  Use the --recursive (-r or -R)\n"
"option to remove each listed directory, too, along with all of its contents.\n"
"\n", stdout);
	printf("To remove a file whose name starts with a '-', for example '-foo',\n"
	       "use one of these commands:\n"
	       "  %s -- -foo\n"
	       "\n"
	       "  %s ./-foo\n"
	       "\n", program_name, program_name);
	fputs("Note that if you use frm to remove a file, it might be possible to recover\n"
"some of its contents, given sufficient expertise and/or time.  For greater\n"
"assurance that the contents are truly unrecoverable, consider using shred(1).\n"
"\n"
"frm behaves as GNU rm 9.1 (and, for -d on an inaccessible directory, as 9.2);\n"
"it walks with libfastrm, which never changes directory and keeps a bounded\n"
"number of file descriptors open at any depth.\n",
	      stdout);
}

static void version(void)
{
	printf("frm (libfastrm) %s\n"
	       "Copyright (C) 2026 the libfastrm authors.\n"
	       "License LGPLv2.1+: GNU LGPL version 2.1 or later "
	       "<https://gnu.org/licenses/lgpl.html>.\n"
	       "This is free software: you are free to change and redistribute it.\n"
	       "There is NO WARRANTY, to the extent permitted by law.\n",
	       FRM_VERSION);
}

/* ------------------------------------------------------------- prompts */

/* --dry-run: every question is answered no, without reading stdin. */
static bool answer_no;

/* Read a line from stdin; yes if it starts with 'y' or 'Y' (the C
 * locale's rpmatch).  A dry run says "n" after the question. */
static bool yesno(void)
{
	if (answer_no) {
		fputs("n (--dry-run)\n", stderr);
		return false;
	}
	char *line = NULL;
	size_t n = 0;
	ssize_t len = getline(&line, &n, stdin);
	bool yes = len > 0 && (line[0] == 'y' || line[0] == 'Y');
	free(line);
	return yes;
}

static const char *file_type(const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return st->st_size == 0 ? "regular empty file" : "regular file";
	if (S_ISDIR(st->st_mode))
		return "directory";
	if (S_ISLNK(st->st_mode))
		return "symbolic link";
	if (S_ISFIFO(st->st_mode))
		return "fifo";
	if (S_ISSOCK(st->st_mode))
		return "socket";
	if (S_ISCHR(st->st_mode))
		return "character special file";
	if (S_ISBLK(st->st_mode))
		return "block special file";
	return "weird file";
}

/* What a directory holds, as GNU rm (9.2 on) asks: DS_EMPTY, DS_NONEMPTY,
 * or, when it cannot be read, the errno value (> 0); DS_UNKNOWN until
 * asked. */
enum { DS_UNKNOWN = -2, DS_EMPTY = -1, DS_NONEMPTY = 0 };

static int dir_status(int dirfd, const char *name)
{
	char buf[4096];
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOCTTY |
	                                     O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int status = DS_EMPTY;
	while (status == DS_EMPTY) {
		ssize_t n = getdents64(fd, buf, sizeof buf);
		if (n <= 0) {
			if (n < 0)
				status = errno;
			break;
		}
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			const char *s = d->d_name;
			if (!(s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]))))
				status = DS_NONEMPTY;
			off += d->d_reclen;
		}
	}
	close(fd);
	return status;
}

/* *@status, found out on first need. */
static int get_dir_status(int dirfd, const char *name, int *status)
{
	if (*status == DS_UNKNOWN)
		*status = dir_status(dirfd, name);
	return *status;
}

/* Whether @name is surely not write-protected, from its type where it is
 * known (@st, or NULL: a symbolic link never is) or else one faccessat
 * (on false, errno says why). */
static bool not_write_protected(int dirfd, const char *name,
                                const struct stat *st)
{
	return (st && S_ISLNK(st->st_mode)) ||
	       faccessat(dirfd, name, W_OK, AT_EACCESS) == 0;
}

/* -1: cannot tell (errno set), 0: writable or a symlink, 1: not. */
static int write_protected(int dirfd, const char *name, struct stat *st,
                           bool *have_st)
{
	if (geteuid() == 0)
		return 0;
	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	*have_st = true;
	if (not_write_protected(dirfd, name, st))
		return 0;
	return errno == EACCES ? 1 : -1;
}

enum prompt_action { PA_DESCEND_INTO_DIR, PA_REMOVE_DIR };

/* GNU rm's prompt() for entry @e (a directory if @is_dir) about to be
 * entered or removed; *@status is the directory's (DS_*), found out only
 * where a question needs it.  As GNU rm 9.2 on: under -d, a directory
 * that cannot be read (EACCES) and may be empty is not refused: removing
 * it is attempted (with -i: "attempt removal of inaccessible directory?",
 * asked before its removal, not before reading it). */
static enum rm_status prompt(const struct fastrm_rmtree_entry *e, bool is_dir,
                             const struct rm_options *x,
                             enum prompt_action mode, int *status, int *why)
{
	int dirfd = e->dirfd;
	const char *name = e->name;
	struct stat st;
	bool have_st = false;
	enum { T_UNKNOWN, T_DIR, T_LNK } type = is_dir ? T_DIR : T_UNKNOWN;
	int wp = 0, wp_errno = 0;

	if (x->interactive == RMI_NEVER)
		return RM_OK;
	if (!x->ignore_missing &&
	    (x->interactive == RMI_ALWAYS || x->stdin_tty)) {
		wp = write_protected(dirfd, name, &st, &have_st);
		wp_errno = errno;
	}
	if (!wp && x->interactive != RMI_ALWAYS)
		return RM_OK;

	if (wp >= 0 && type == T_UNKNOWN) {
		if (have_st ||
		    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			have_st = true;
			if (S_ISLNK(st.st_mode))
				type = T_LNK;
			else if (S_ISDIR(st.st_mode))
				type = T_DIR;
		} else {
			wp = -1;
			wp_errno = errno;
		}
	}
	if (wp >= 0) {
		if (type == T_LNK && x->interactive != RMI_ALWAYS)
			return RM_OK;
		/* not -r: only -d's directories, not known to hold anything */
		if (type == T_DIR && !x->recursive &&
		    !(x->remove_empty_dirs &&
		      get_dir_status(dirfd, name, status) != DS_NONEMPTY)) {
			wp = -1;
			wp_errno = *status > 0 && !x->remove_empty_dirs ? *status : EISDIR;
		}
	}
	const char *q = quote_always(0, e->path);
	if (wp < 0) {
		error_msg(wp_errno, "cannot remove %s", q);
		*why = wp_errno;
		return RM_ERROR;
	}
	if (type == T_DIR && mode == PA_DESCEND_INTO_DIR &&
	    get_dir_status(dirfd, name, status) == DS_NONEMPTY) {
		progress_hold();
		fprintf(stderr, wp ? "%s: descend into write-protected directory %s? "
		                   : "%s: descend into directory %s? ",
		        program_name, q);
	} else if (type == T_DIR && *status > 0) {
		/* it cannot be read: only -d may try to remove it */
		if (!(x->remove_empty_dirs && *status == EACCES)) {
			error_msg(*status, "cannot remove %s", q);
			*why = *status;
			return RM_ERROR;
		}
		if (mode == PA_DESCEND_INTO_DIR)
			return RM_OK; /* nothing to descend into: ask at its removal */
		progress_hold();
		fprintf(stderr, "%s: attempt removal of inaccessible directory %s? ",
		        program_name, q);
	} else {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			*why = errno;
			error_msg(*why, "cannot remove %s", q);
			return RM_ERROR;
		}
		progress_hold();
		fprintf(stderr, wp ? "%s: remove write-protected %s %s? "
		                   : "%s: remove %s %s? ",
		        program_name, file_type(&st), q);
	}
	bool yes = yesno();
	progress_release();
	return yes ? RM_USER_ACCEPTED : RM_USER_DECLINED;
}

/* ------------------------------------------------------------- removal */

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* -v: "removed 'x'" on stdout, the progress line kept out of its way. */
static void say_removed(bool is_dir, const char *path)
{
	progress_hold();
	printf(is_dir ? "removed directory %s\n" : "removed %s\n",
	       quote_always(0, path));
	progress_release();
}

/* What rm -f does not report: the entry is not there. */
static bool nonexistent_errno(int e)
{
	return e == ENOENT || e == ENOTDIR || e == EILSEQ || e == EINVAL;
}

/* The last component of @path, ignoring trailing slashes. */
static const char *last_component(const char *path)
{
	const char *base = path, *p;
	bool saw_slash = false;
	while (*base == '/')
		base++;
	for (p = base; *p; p++) {
		if (*p == '/') {
			saw_slash = true;
		} else if (saw_slash) {
			base = p;
			saw_slash = false;
		}
	}
	return base;
}

static size_t base_len(const char *base)
{
	size_t len = strlen(base);
	while (len > 1 && base[len - 1] == '/')
		len--;
	return len;
}

/* Command-line arguments not yet reached by the walk. */
static size_t args_left;

/* --progress: when frm's last argument is a directory with no
 * subdirectories (a link count of 2), its size tells the line about how
 * many entries are left, on the file systems where it can. */
static void expect_entries(const char *accpath, const struct stat *st,
                           const struct rm_options *x)
{
	struct statfs sf;
	if (x->progress && args_left == 0 && st->st_nlink == 2 &&
	    statfs(accpath, &sf) == 0)
		progress_expect((long)sf.f_type, (uintmax_t)st->st_size);
}

static bool last_is_dot_or_dotdot(const char *path)
{
	const char *b = last_component(path);
	size_t n = base_len(b);
	return (n == 1 && b[0] == '.') || (n == 2 && b[0] == '.' && b[1] == '.');
}

/* A directory cycle: GNU rm's warning, word for word. */
static void warn_cycle(const char *path)
{
	progress_hold();
	fflush(stdout);
	fprintf(stderr,
	        "%s: WARNING: Circular directory structure.\n"
	        "This almost certainly means that you have a corrupted file system.\n"
	        "NOTIFY YOUR SYSTEM MANAGER.\n"
	        "The following directory is part of the cycle:\n  %s\n",
	        program_name, quote_always(0, path));
	progress_release();
}

/* A directory that frm must not enter or remove: a non-recursive removal,
 * "." or "..", "/" under --preserve-root, another device under
 * --preserve-root=all.  Says why and returns an errno value that names it
 * (the manifest's), or 0 where frm goes on. */
static int refuse_dir(const char *path, int dirfd, const char *accpath,
                       const struct stat *st, int level,
                       const struct rm_options *x, int *status)
{
	/* not -r: -d's directories, unless they are known to hold something
	 * (one that cannot be read may be empty: its removal is tried) */
	if (!x->recursive &&
	    !(x->remove_empty_dirs &&
	      get_dir_status(dirfd, accpath, status) != DS_NONEMPTY)) {
		int err = x->remove_empty_dirs ? ENOTEMPTY : EISDIR;
		error_msg(err, "cannot remove %s", quote_always(0, path));
		return err;
	}
	if (level != 0)
		return 0;
	if (last_is_dot_or_dotdot(accpath)) {
		error_msg(0, "refusing to remove %s or %s directory: skipping %s",
		          quote_always(0, "."), quote_always(1, ".."),
		          quote_always(2, path));
		return EINVAL;
	}
	if (x->root && x->root->st_dev == st->st_dev &&
	    x->root->st_ino == st->st_ino) {
		if (strcmp(path, "/") == 0)
			error_msg(0, "it is dangerous to operate recursively on %s",
			          quote_always(0, "/"));
		else
			error_msg(0, "it is dangerous to operate recursively on %s (same as %s)",
			          quote_always(0, path), quote_always(1, "/"));
		error_msg(0, "use --no-preserve-root to override this failsafe");
		return EBUSY;
	}
	if (x->preserve_all_root) {
		size_t len = strlen(accpath);
		char *parent = malloc(len + 4);
		struct stat sb;
		int failed = 0;
		if (parent) {
			memcpy(parent, accpath, len);
			strcpy(parent + len, len && parent[len - 1] == '/' ? ".." : "/..");
		}
		if (!parent || lstat(parent, &sb) != 0) {
			failed = parent ? errno : ENOMEM;
			error_msg(0, "failed to stat %s: skipping %s",
			          quote_always(0, parent ? parent : ""),
			          quote_always(1, accpath));
		}
		free(parent);
		if (failed)
			return true;
		if (st->st_dev != sb.st_dev) {
			error_msg(0, "skipping %s, since it's on a different device",
			          quote_always(0, path));
			error_msg(0, "and --preserve-root=all is in effect");
			return EXDEV;
		}
	}
	return 0;
}

/* prompt() returns RM_OK for a non-directory without a look or a word. */
static bool prompt_is_silent(const struct rm_options *x)
{
	return x->interactive == RMI_NEVER ||
	       (x->interactive != RMI_ALWAYS && (x->ignore_missing || !x->stdin_tty));
}

/* ------------------------------- the removal: libfastrm's fastrm_rmtree() */

/* Workers that ran, why fewer than asked, and what was read ahead
 * (--stats). */
static unsigned workers_ran = 1, workers_fitted;
static const char *workers_why;
static uintmax_t read_ahead_requests, read_ahead_bytes, index_lookups,
                 inodes_read_ahead, leaves_read_ahead, paced_ms;
/* --max-rate, --latency-target: the rate allowed and the removals in
 * flight, kept by the library as it goes (--progress reads them then,
 * --stats at the end) */
static unsigned long long paced_rate, paced_in_flight;

/* @o paced as @x asks. */
static void set_pacing(struct fastrm_rmtree_opts *o, const struct rm_options *x)
{
	o->max_rate = x->max_rate;
	o->latency_target_us = x->latency_target_us;
	o->pace_rate = &paced_rate;
	o->pace_in_flight = &paced_in_flight;
	if (x->progress)
		progress_pace(&paced_rate, &paced_in_flight);
}

/* The removal's rules (what is removed, retried, kept, reported) are the
 * library's; what follows is rm's side of them: its refusals, its prompts,
 * its messages and what -f leaves unsaid.  The library calls them one at a
 * time; but where rm may prompt with workers running (-r at a terminal:
 * write-protected entries), frm_ask is called by several at once
 * (FASTRM_RMTREE_ASK_CONCURRENT): what is said then, questions, messages
 * and the quoting that builds them, is said under say_lock, and an entry
 * with nothing to ask or say goes by without it, so that the other workers
 * go on while a question waits for its answer. */
static pthread_mutex_t say_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ask_concurrent;

static void say_begin(void)
{
	if (ask_concurrent)
		pthread_mutex_lock(&say_lock);
}

static void say_end(void)
{
	if (ask_concurrent)
		pthread_mutex_unlock(&say_lock);
}

/* A path given, before anything is done with it. */
static int frm_root_said(void *ctx, const struct fastrm_rmtree_entry *e);

static int frm_root(void *ctx, const struct fastrm_rmtree_entry *e)
{
	say_begin();
	int r = frm_root_said(ctx, e);
	say_end();
	return r;
}

static int frm_root_said(void *ctx, const struct fastrm_rmtree_entry *e)
{
	const struct rm_options *x = ctx;
	if (args_left > 0 && args_left != SIZE_MAX)
		args_left--;
	if (!S_ISDIR(e->st->st_mode))
		return 0;
	int status = DS_UNKNOWN;
	int err = refuse_dir(e->path, e->dirfd, e->name, e->st, 0, x, &status);
	if (err) {
		counters.failures++;
		return err;
	}
	expect_entries(e->name, e->st, x);
	return 0;
}

static int frm_ask_said(void *ctx, const struct fastrm_rmtree_entry *e,
                        enum fastrm_rmtree_step step);

/* A directory about to be read, or an entry about to be removed: what
 * rm -i, -I and a write-protected file ask (-i: one worker, GNU rm's
 * order; -r at a terminal: workers, each directory's entries asked in GNU
 * rm's order, one question at a time). */
static int frm_ask(void *ctx, const struct fastrm_rmtree_entry *e,
                   enum fastrm_rmtree_step step)
{
	if (!ask_concurrent)
		return frm_ask_said(ctx, e, step);
	/* -r at a terminal, not -i (prompts_serial): nothing is asked or
	 * said of an entry that is not write-protected (prompt()'s first
	 * test, made here without the lock, from the type the directory
	 * gave and without its fstatat; the rest goes through
	 * write_protected()) */
	if (not_write_protected(e->dirfd, e->name, e->st))
		return FASTRM_RMTREE_GO;
	pthread_mutex_lock(&say_lock);
	int a = frm_ask_said(ctx, e, step);
	pthread_mutex_unlock(&say_lock);
	return a;
}

static int frm_ask_said(void *ctx, const struct fastrm_rmtree_entry *e,
                        enum fastrm_rmtree_step step)
{
	const struct rm_options *x = ctx;
	int status = DS_UNKNOWN, why = 0;
	if (step == FASTRM_RMTREE_REMOVE) {
		switch (prompt(e, e->is_dir, x, PA_REMOVE_DIR, &status, &why)) {
		case RM_OK:
		case RM_USER_ACCEPTED:
			return FASTRM_RMTREE_GO;
		case RM_USER_DECLINED:
			return FASTRM_RMTREE_KEEP;
		case RM_ERROR:
			break;
		}
		counters.failures++;
		return FASTRM_RMTREE_FAIL_WITH(why);
	}
	/* below a path given (frm_root refused those it had to) */
	if (e->level > 0 &&
	    (why = refuse_dir(e->path, e->dirfd, e->name, e->st, e->level, x, &status))) {
		counters.failures++;
		return FASTRM_RMTREE_FAIL_WITH(why);
	}
	switch (prompt(e, true, x, PA_DESCEND_INTO_DIR, &status, &why)) {
	case RM_OK:
		return FASTRM_RMTREE_GO;
	case RM_USER_ACCEPTED:
		/* known empty: removed without a second question */
		return status == DS_EMPTY ? FASTRM_RMTREE_REMOVE_EMPTY : FASTRM_RMTREE_GO;
	case RM_USER_DECLINED:
		return FASTRM_RMTREE_KEEP;
	case RM_ERROR:
		break;
	}
	counters.failures++;
	return FASTRM_RMTREE_FAIL_WITH(why);
}

static void frm_removed(void *ctx, const struct fastrm_rmtree_entry *e)
{
	const struct rm_options *x = ctx;
	if (e->is_dir)
		counters.dirs++;
	else
		counters.files++;
	bool list = x->dry_run && !x->manifest;
	if (!x->verbose && !x->progress && !list)
		return;
	say_begin();
	if (list) {
		progress_hold();
		fputs(e->path, stdout);
		putchar(x->null ? '\0' : '\n');
		progress_release();
	} else if (x->verbose && !x->dry_run) {
		say_removed(e->is_dir, e->path);
	}
	if (x->progress) {
		progress_removed(e->path);
		if (e->level == 0 && e->is_dir)
			progress_expect_end();
	}
	say_end();
}

static int frm_failed_said(void *ctx, const struct fastrm_rmtree_entry *e,
                           enum fastrm_rmtree_error what, int err);

static int frm_failed(void *ctx, const struct fastrm_rmtree_entry *e,
                      enum fastrm_rmtree_error what, int err)
{
	say_begin();
	int r = frm_failed_said(ctx, e, what, err);
	say_end();
	return r;
}

static int frm_failed_said(void *ctx, const struct fastrm_rmtree_entry *e,
                           enum fastrm_rmtree_error what, int err)
{
	const struct rm_options *x = ctx;
	if (e->level == 0 && e->is_dir)
		progress_expect_end();
	switch (what) {
	case FASTRM_RMTREE_EREMOVE:
		if (x->ignore_missing && nonexistent_errno(err))
			return 0;
		error_msg(err, "cannot remove %s", quote_always(0, e->path));
		break;
	case FASTRM_RMTREE_EWALK:
		error_msg(err, "traversal failed: %s", quote_if_needed(0, e->path));
		break;
	case FASTRM_RMTREE_ECYCLE:
		warn_cycle(e->path);
		break;
	case FASTRM_RMTREE_EXDEV:
		error_msg(0, "skipping %s, since it's on a different device",
		          quote_always(0, e->path));
		break;
	case FASTRM_RMTREE_EREFUSED:
		/* frm_root refuses these first, with rm's words */
		error_msg(err, "cannot remove %s", quote_always(0, e->path));
		break;
	}
	counters.failures++;
	return 1;
}

/* Why rm's prompts allow one worker only, or NULL where they allow
 * workers: -i asks about every entry, and without -r the paths given are
 * asked about one after another, both in GNU rm's order.  -r at a
 * terminal asks only about write-protected entries (GNU rm's rule): the
 * workers go on, each directory's entries asked in GNU rm's order. */
static const char *prompts_serial(const struct rm_options *x)
{
	if (x->interactive == RMI_ALWAYS)
		return "-i asks about each entry in GNU rm's order";
	if (!x->recursive)
		return "the paths given are asked about in GNU rm's order";
	return NULL;
}

/* Remove @files: with x->jobs workers, subtrees and arguments at once;
 * with one where rm asks about each entry (-i) or each path given (no
 * -r), so that its questions come in GNU rm's order. */
static enum rm_status rm(char *const *files, const struct rm_options *x,
                         struct fastrm_manifest *manifest)
{
	/* root is never asked about write-protected entries (GNU rm's
	 * can_write_any_file; write_protected()): only -i asks there */
	bool prompts = !prompt_is_silent(x) &&
	               (x->interactive == RMI_ALWAYS || geteuid() != 0);
	const char *serial = prompts ? prompts_serial(x) : NULL;
	struct fastrm_rmtree_opts o = { 0 };
	o.size = sizeof o;
	o.workers = serial ? 1 : x->jobs;
	if (!serial && x->jobs_auto)
		o.workers = auto_jobs_at(o.workers, AT_FDCWD, files);
	if (serial && x->jobs > 1) {
		workers_why = serial;
		if (!x->jobs_auto)
			error_msg(0, "--jobs=%u: one worker: %s", x->jobs, serial);
	}
	ask_concurrent = prompts && !serial && o.workers > 1;
	/* Where rm may prompt, the questions come in GNU rm's order: auto's
	 * order is then gnulib's (auto sorts small ext4 directories by inode,
	 * GNU rm keeps them in directory order: it sorts from 10,000 entries
	 * on).  --jobs=1 keeps auto's order: --order=gnulib asks for GNU
	 * rm's. */
	o.order = prompts && x->order == fastrm_order_by_name("auto")
	                  ? fastrm_order_by_name("gnulib")
	                  : x->order;
	o.memory = x->memory;
	/* frm refuses what rm refuses, with rm's messages (frm_root); the
	 * library's own refusal of "/" is lifted where rm's is (not -r, or
	 * --no-preserve-root): "." and ".." it refuses as frm does */
	o.flags = (x->one_file_system ? FASTRM_RMTREE_XDEV : 0) |
	          (x->jobs_auto ? FASTRM_RMTREE_FIT_WORKERS : 0) |
	          (ask_concurrent ? FASTRM_RMTREE_ASK_CONCURRENT : 0) |
	          (x->root ? 0 : FASTRM_RMTREE_NO_PRESERVE_ROOT);
	if (x->dry_run)
		o.flags |= FASTRM_RMTREE_DRY_RUN;
	o.exclude = (const char *const *)x->exclude;
	o.manifest = manifest;
	set_pacing(&o, x);
	/* --progress: the library's estimate of the entries in all */
	static unsigned long long estimate;
	if (x->progress) {
		o.estimate = &estimate;
		progress_total(&estimate);
	}
	o.ctx = (void *)x;
	o.root = frm_root;
	o.removed = frm_removed;
	o.failed = frm_failed;
	/* asked only where rm may prompt or refuse below a path given */
	o.ask = prompts || !x->recursive ? frm_ask : NULL;
	o.stop = &stop_signal;
	/* With workers, arguments are removed at once: "the last one" means
	 * nothing, and --progress estimates only a single argument. */
	if (o.workers > 1 && files[0] && files[1])
		args_left = SIZE_MAX;
	struct fastrm_rmtree_stats st = { 0 };
	int rc = fastrm_rmtree(files, &o, &st);
	workers_ran = st.workers;
	workers_fitted = st.workers_fitted;
	read_ahead_requests = st.read_ahead_requests;
	read_ahead_bytes = st.read_ahead_bytes;
	index_lookups = st.index_lookups;
	inodes_read_ahead = st.inodes_read_ahead;
	leaves_read_ahead = st.leaves_read_ahead;
	paced_ms = st.paced_ms;
	if (rc < 0 && rc != -EINTR) {
		/* the walk could not go on (as GNU rm, which stops there) */
		error_msg(-rc, "fts_read failed");
		return RM_ERROR;
	}
	return rc == 0 ? RM_OK : RM_ERROR;
}

static void print_stats(void)
{
	struct timespec now;
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &now);
	getrusage(RUSAGE_SELF, &ru);
	double t = elapsed(&counters.start, &now);
	uintmax_t n = counters.files + counters.dirs;
	fprintf(stderr,
	        "%s: %s %ju entr%s (%ju file%s, %ju director%s), "
	        "%ju failure%s, %.3f s, %.0f entries/s, peak memory %ld KiB, "
	        "%u worker%s",
	        program_name, answer_no ? "would remove" : "removed", n,
	        n == 1 ? "y" : "ies", counters.files,
	        counters.files == 1 ? "" : "s", counters.dirs,
	        counters.dirs == 1 ? "y" : "ies", counters.failures,
	        counters.failures == 1 ? "" : "s", t, t > 0 ? (double)n / t : 0.0,
	        ru.ru_maxrss, workers_ran, workers_ran == 1 ? "" : "s");
	if (workers_fitted)
		fprintf(stderr, " (then %u at once)", workers_fitted);
	if (workers_why)
		fprintf(stderr, " (%s)", workers_why);
	if (read_ahead_requests)
		fprintf(stderr, ", read ahead %.1f MiB in %ju request%s",
		        (double)read_ahead_bytes / 1048576.0, read_ahead_requests,
		        read_ahead_requests == 1 ? "" : "s");
	if (index_lookups)
		fprintf(stderr, ", read the index ahead in %ju lookup%s",
		        index_lookups, index_lookups == 1 ? "" : "s");
	if (inodes_read_ahead)
		fprintf(stderr, ", read %ju inode%s ahead", inodes_read_ahead,
		        inodes_read_ahead == 1 ? "" : "s");
	if (leaves_read_ahead)
		fprintf(stderr, ", read %ju lea%s of btrfs's tree ahead", leaves_read_ahead,
		        leaves_read_ahead == 1 ? "f" : "ves");
	if (paced_ms || paced_rate || paced_in_flight) {
		fprintf(stderr, ", paced: workers waited %.1f s in all", (double)paced_ms / 1000.0);
		if (paced_rate)
			fprintf(stderr, ", %llu/s allowed at the end", paced_rate);
		if (paced_in_flight)
			fprintf(stderr, ", %llu at once at the end", paced_in_flight);
	}
	fputc('\n', stderr);
}

/* "SIGINT": the name a user types, not strsignal's "Interrupt". */
static const char *signal_name(int sig)
{
	static char buf[24];
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, sizeof buf, "SIG%s", abbrev);
	else
		snprintf(buf, sizeof buf, "signal %d", sig);
	return buf;
}

/* --------------------------------------------------------------- main */

enum {
	OPT_INTERACTIVE = 256,
	OPT_ONE_FILE_SYSTEM,
	OPT_NO_PRESERVE_ROOT,
	OPT_PRESERVE_ROOT,
	OPT_PRESUME_INPUT_TTY,
	OPT_STATS,
	OPT_PROGRESS,
	OPT_ORDER,
	OPT_MEMORY,
	OPT_JOBS,
	OPT_DRY_RUN,
	OPT_NULL,
	OPT_EXCLUDE,
	OPT_EXCLUDE_FROM,
	OPT_MANIFEST,
	OPT_MANIFEST_FORMAT,
	OPT_MANIFEST_FAILURES,
	OPT_MAX_RATE,
	OPT_LATENCY_TARGET,
	OPT_DETACH,
	OPT_FINISH,
	OPT_LIST,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option long_options[] = {
	{ "dir", no_argument, NULL, 'd' },
	{ "force", no_argument, NULL, 'f' },
	{ "interactive", optional_argument, NULL, OPT_INTERACTIVE },
	{ "one-file-system", no_argument, NULL, OPT_ONE_FILE_SYSTEM },
	{ "no-preserve-root", no_argument, NULL, OPT_NO_PRESERVE_ROOT },
	{ "preserve-root", optional_argument, NULL, OPT_PRESERVE_ROOT },
	/* Hidden, for test suites: act as if stdin were a terminal. */
	{ "-presume-input-tty", no_argument, NULL, OPT_PRESUME_INPUT_TTY },
	{ "recursive", no_argument, NULL, 'r' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "order", required_argument, NULL, OPT_ORDER },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "null", no_argument, NULL, OPT_NULL },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "exclude-from", required_argument, NULL, OPT_EXCLUDE_FROM },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "manifest-format", required_argument, NULL, OPT_MANIFEST_FORMAT },
	{ "manifest-failures", no_argument, NULL, OPT_MANIFEST_FAILURES },
	{ "max-rate", required_argument, NULL, OPT_MAX_RATE },
	{ "latency-target", required_argument, NULL, OPT_LATENCY_TARGET },
	{ "detach", no_argument, NULL, OPT_DETACH },
	{ "finish", no_argument, NULL, OPT_FINISH },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* --interactive=WHEN: any unambiguous prefix of a valid word. */
static int interactive_arg(const char *arg)
{
	static const struct { const char *word; int val; } words[] = {
		{ "never", RMI_NEVER }, { "no", RMI_NEVER }, { "none", RMI_NEVER },
		{ "once", RMI_SOMETIMES },
		{ "always", RMI_ALWAYS }, { "yes", RMI_ALWAYS },
	};
	size_t len = strlen(arg);
	int found = -1;
	bool ambiguous = false;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		if (strncmp(arg, words[i].word, len) != 0)
			continue;
		if (strlen(words[i].word) == len)
			return words[i].val;
		if (found >= 0 && found != words[i].val)
			ambiguous = true;
		found = words[i].val;
	}
	if (found >= 0 && !ambiguous && len > 0)
		return found;
	error_msg(0, "%s argument %s for %s",
	          ambiguous ? "ambiguous" : "invalid",
	          quote_always(0, arg), quote_always(1, "--interactive"));
	fputs("Valid arguments are:\n"
	      "  - 'never', 'no', 'none'\n"
	      "  - 'once'\n"
	      "  - 'always', 'yes'\n", stderr);
	try_help();
	exit(EXIT_FAILURE);
}

/* Options that frm refuses: says why (@fmt, as printf), how to get help,
 * and gives the exit status. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(0, fmt, ap);
	va_end(ap);
	try_help();
	return EXIT_FAILURE;
}

/* An option's argument that frm refuses (@fmt names it with one %s). */
static int invalid_arg(const char *fmt, const char *arg)
{
	return usage_error(fmt, quote_always(0, arg));
}

/* "64M", "512K", "1G", "100000" (bytes); K, M, G, T are powers of 1024 and
 * may be followed by "iB" or "B". */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end || v > (SIZE_MAX >> shift) || (v << shift) < 64 * 1024)
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

/* --max-rate: "500", "2.5k", "1M" (entries a second; k and M are powers
 * of 1000), more than 0. */
static int parse_rate(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	else if (*end == 'M')
		v *= 1e6, end++;
	if (*end || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

/* --latency-target: "50ms", "0.2s", "500us" (a unit is needed), from
 * 100 microseconds to an hour. */
static int parse_duration_us(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	if (strcmp(end, "us") == 0)
		;
	else if (strcmp(end, "ms") == 0)
		v *= 1e3;
	else if (strcmp(end, "s") == 0)
		v *= 1e6;
	else
		return -1;
	if (v < 100 || v > 3600e6)
		return -1;
	*out = (unsigned long long)v;
	return 0;
}

/* As GNU rm: when an unknown option names an existing file, say how to
 * remove it. */
static void diagnose_leading_hyphen(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		const char *arg = argv[i];
		if (arg[0] == '-' && arg[1] && lstat(arg, &st) == 0) {
			fprintf(stderr, "Try '%s ./%s' to remove the file %s.\n",
			        argv[0], quote_if_needed(1, arg),
			        quote_always(0, arg));
			break;
		}
	}
}

/* --order's argument is no policy: say which ones there are. */
static int bad_order(const char *arg)
{
	error_msg(0, "invalid argument %s for %s", quote_always(0, arg),
	          quote_always(1, "--order"));
	fputs("Valid arguments are:", stderr);
	const struct fastrm_order *o;
	for (size_t i = 0; (o = fastrm_order_builtin(i)) != NULL; i++)
		fprintf(stderr, "%s %s", i ? "," : "", quote_always(0, o->name));
	fputc('\n', stderr);
	try_help();
	return EXIT_FAILURE;
}

/* --jobs=N (1 to JOBS_MAX) or auto.  Returns 0, or -1 if @arg is neither. */
static int parse_jobs(const char *arg, unsigned *jobs, bool *is_auto)
{
	*is_auto = strcmp(arg, "auto") == 0;
	if (*is_auto) {
		*jobs = auto_jobs();
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long n = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || n < 1 || n > JOBS_MAX || arg[0] == '-' ||
	    arg[0] == '+')
		return -1;
	*jobs = (unsigned)n;
	return 0;
}

/* One more exclusion pattern (a copy of @pat) into @x. */
static void add_exclude(struct rm_options *x, const char *pat, size_t len)
{
	char **v = realloc(x->exclude, (x->nexclude + 2) * sizeof *v);
	char *p = v ? strndup(pat, len) : NULL;
	if (!p) {
		error_msg(ENOMEM, "--exclude");
		exit(EXIT_FAILURE);
	}
	v[x->nexclude++] = p;
	v[x->nexclude] = NULL;
	x->exclude = v;
}

/* --exclude-from=FILE: a pattern a line; empty lines and lines that
 * start with '#' are skipped.  Returns 0, or the status to exit with. */
static int exclude_from(struct rm_options *x, const char *file)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "re");
	if (!f) {
		error_msg(errno, "%s", quote_always(0, file));
		return EXIT_FAILURE;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			n--;
		if (n > 0 && line[0] != '#')
			add_exclude(x, line, (size_t)n);
	}
	int err = ferror(f) ? errno : 0;
	free(line);
	if (f != stdin)
		fclose(f);
	if (err) {
		error_msg(err, "%s", quote_always(0, file));
		return EXIT_FAILURE;
	}
	return 0;
}

/* The options, GNU rm's and frm's own, into @x.  Returns -1 when frm is to
 * go on with the operands from optind, or the status to exit with (after
 * --help, --version, or a wrong option). */
static int parse_options(int argc, char **argv, struct rm_options *x,
                         bool *preserve_root, bool *prompt_once)
{
	int c;
	while ((c = getopt_long(argc, argv, "dfirvIR", long_options, NULL)) != -1) {
		switch (c) {
		case 'd':
			x->remove_empty_dirs = true;
			break;
		case 'f':
			x->interactive = RMI_NEVER;
			x->ignore_missing = true;
			*prompt_once = false;
			break;
		case 'i':
			x->interactive = RMI_ALWAYS;
			x->ignore_missing = false;
			*prompt_once = false;
			break;
		case 'I':
			x->interactive = RMI_SOMETIMES;
			x->ignore_missing = false;
			*prompt_once = true;
			break;
		case 'r':
		case 'R':
			x->recursive = true;
			break;
		case OPT_INTERACTIVE: {
			int i = optarg ? interactive_arg(optarg) : RMI_ALWAYS;
			x->interactive = (enum interactive)i;
			*prompt_once = i == RMI_SOMETIMES;
			if (i != RMI_NEVER)
				x->ignore_missing = false;
			break;
		}
		case OPT_ONE_FILE_SYSTEM:
			x->one_file_system = true;
			break;
		case OPT_NO_PRESERVE_ROOT:
			if (strcmp(argv[optind - 1], "--no-preserve-root") != 0) {
				error_msg(0, "you may not abbreviate the --no-preserve-root option");
				exit(EXIT_FAILURE);
			}
			*preserve_root = false;
			break;
		case OPT_PRESERVE_ROOT:
			if (optarg) {
				if (strcmp(optarg, "all") != 0) {
					error_msg(0, "unrecognized --preserve-root argument: %s",
					          quote_always(0, optarg));
					exit(EXIT_FAILURE);
				}
				x->preserve_all_root = true;
			}
			*preserve_root = true;
			break;
		case OPT_PRESUME_INPUT_TTY:
			x->stdin_tty = true;
			break;
		case 'v':
			x->verbose = true;
			break;
		case OPT_STATS:
			x->stats = true;
			break;
		case OPT_PROGRESS:
			x->progress = true;
			break;
		case OPT_ORDER:
			x->order = fastrm_order_by_name(optarg);
			if (!x->order)
				return bad_order(optarg);
			break;
		case OPT_MEMORY:
			if (parse_size(optarg, &x->memory) < 0)
				return invalid_arg("invalid memory size %s (at least 64K; "
				                   "K, M, G, T: powers of 1024)", optarg);
			break;
		case OPT_JOBS:
			if (parse_jobs(optarg, &x->jobs, &x->jobs_auto) < 0)
				return invalid_arg("invalid number of jobs %s (1 to " STR(JOBS_MAX)
				                   ", or auto)", optarg);
			break;
		case OPT_MAX_RATE:
			if (parse_rate(optarg, &x->max_rate) < 0)
				return invalid_arg("invalid rate %s (entries a second, "
				                   "e.g. 500 or 2k)", optarg);
			break;
		case OPT_LATENCY_TARGET:
			if (parse_duration_us(optarg, &x->latency_target_us) < 0)
				return invalid_arg("invalid latency %s (e.g. 50ms: us, ms "
				                   "or s, 100us to 3600s)", optarg);
			break;
		case OPT_DETACH:
			x->detach = true;
			break;
		case OPT_FINISH:
			x->finish = true;
			break;
		case OPT_LIST:
			x->list = true;
			break;
		case OPT_DRY_RUN:
			x->dry_run = true;
			break;
		case OPT_NULL:
			x->null = true;
			break;
		case OPT_EXCLUDE:
			add_exclude(x, optarg, strlen(optarg));
			break;
		case OPT_EXCLUDE_FROM: {
			int rc = exclude_from(x, optarg);
			if (rc)
				return rc;
			break;
		}
		case OPT_MANIFEST:
			x->manifest = optarg;
			break;
		case OPT_MANIFEST_FORMAT:
			if (strcmp(optarg, "json") == 0) {
				x->manifest_format = FASTRM_MANIFEST_JSON;
			} else if (strcmp(optarg, "nul") == 0) {
				x->manifest_format = FASTRM_MANIFEST_NUL;
			} else {
				error_msg(0, "invalid argument %s for %s", quote_always(0, optarg),
				          quote_always(1, "--manifest-format"));
				fputs("Valid arguments are: 'json', 'nul'\n", stderr);
				try_help();
				return EXIT_FAILURE;
			}
			break;
		case OPT_MANIFEST_FAILURES:
			x->manifest_failures = true;
			break;
		case OPT_HELP:
			usage();
			return EXIT_SUCCESS;
		case OPT_VERSION:
			version();
			return EXIT_SUCCESS;
		default:
			diagnose_leading_hyphen(argc, argv);
			try_help();
			return EXIT_FAILURE;
		}
	}

	if (x->manifest && strcmp(x->manifest, "-") == 0 && x->verbose)
		return usage_error("--manifest=- and -v both write to standard output");
	if (x->detach && (x->dry_run || x->interactive == RMI_ALWAYS || x->finish))
		return usage_error("--detach cannot be given with %s: the finisher removes "
		                   "without asking",
		                   x->finish ? "--finish" : x->dry_run ? "--dry-run" : "-i");
	if (x->list && !x->finish)
		return usage_error("--list goes with --finish");
	if (x->finish && (x->dry_run || x->interactive == RMI_ALWAYS || x->exclude))
		return usage_error("--finish removes what was detached, all of it: no %s",
		                   x->dry_run ? "--dry-run" : x->exclude ? "--exclude" : "-i");
	if (x->null && !x->dry_run)
		return usage_error("--null lists what --dry-run would remove: use "
		                   "--manifest-format=nul for a manifest");
	return -1;
}

/* Remove the operands @files (@n of them) as @x says; the exit status. */
/* --manifest's file, opened (NULL without one; exits if it cannot be). */
static int manifest_fd = -1;

static struct fastrm_manifest *manifest_open(const struct rm_options *x)
{
	if (!x->manifest)
		return NULL;
	bool out = strcmp(x->manifest, "-") == 0;
	int fd = out ? STDOUT_FILENO
	             : open(x->manifest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	struct fastrm_manifest *m = fd >= 0
		? fastrm_manifest_new(fd, x->manifest_format,
		                      x->manifest_failures ? FASTRM_MANIFEST_FAILURES : 0)
		: NULL;
	if (!m) {
		error_msg(errno, "cannot write the manifest %s", quote_always(0, x->manifest));
		exit(EXIT_FAILURE);
	}
	manifest_fd = out ? -1 : fd;
	return m;
}

/* The manifest's summary with exit status @status, and the file closed:
 * the exit status, made 1 where the manifest could not be written. */
static int manifest_close(struct fastrm_manifest *m, const struct rm_options *x,
                          int status)
{
	if (!m)
		return status;
	int rc = fastrm_manifest_finish(m, status);
	fastrm_manifest_free(m);
	if (manifest_fd >= 0 && close(manifest_fd) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		error_msg(-rc, "write error on the manifest %s", quote_always(0, x->manifest));
		return EXIT_FAILURE;
	}
	return status;
}

/* --detach and --finish's state directory (fastrm_state_dir(3)), or NULL
 * after saying why. */
static const char *state_dir(void)
{
	static char dir[4096];
	int rc = fastrm_state_dir(dir, sizeof dir);
	if (rc < 0) {
		error_msg(-rc, "cannot use the state directory%s%s",
		          dir[0] ? " " : "", dir[0] ? quote_always(0, dir) : "");
		return NULL;
	}
	return dir;
}

/* --detach: each operand that is a directory frm may remove (rm's
 * refusals first, with its words) is renamed away and its id added to
 * @ids; what is not a directory, or cannot be renamed (frm says why), is
 * added to @here, to be removed in place.  false: something failed. */
static bool detach_operands(char **files, size_t n, const struct rm_options *x,
                            const char *sd, char **ids, char **here, size_t *nhere)
{
	bool ok = true;
	size_t nids = 0;
	for (size_t i = 0; i < n; i++) {
		const char *f = files[i];
		struct stat st;
		if (lstat(f, &st) != 0 || !S_ISDIR(st.st_mode)) {
			here[(*nhere)++] = files[i]; /* rm's words for it there */
			continue;
		}
		int status = DS_UNKNOWN;
		if (refuse_dir(f, AT_FDCWD, f, &st, 0, x, &status)) {
			counters.failures++;
			ok = false;
			continue;
		}
		char id[FASTRM_DETACH_ID_SIZE];
		int rc = fastrm_detach(AT_FDCWD, f, sd,
		                       x->one_file_system ? FASTRM_RMTREE_XDEV : 0, id);
		if (rc < 0) {
			error_msg(-rc, "cannot detach %s: removing it in place", quote_always(0, f));
			here[(*nhere)++] = files[i];
			continue;
		}
		ids[nids] = strdup(id);
		if (!ids[nids]) {
			error_msg(ENOMEM, "detached %s as %s, but", quote_always(0, f), id);
			ok = false;
			continue;
		}
		nids++;
		if (x->verbose)
			printf("detached %s\n", quote_always(0, f));
	}
	ids[nids] = NULL;
	return ok;
}

/* One line of --finish --list: ID, state, entries removed so far, when
 * it was detached, where it was. */
static int list_one(void *ctx, const struct fastrm_detached *d)
{
	(void)ctx;
	char when[32];
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&d->when, &tm));
	printf("%s  %-9s  %10llu removed  %s  %s\n", d->id,
	       d->active ? "finishing" : d->failures ? "failed" : "pending", d->removed,
	       when, quote_always(0, d->path));
	return 0;
}

/* --finish's ids: every record of the state directory. */
struct id_list {
	char **v;
	size_t n, cap;
};

static int collect_id(void *ctx, const struct fastrm_detached *d)
{
	struct id_list *l = ctx;
	if (l->n + 1 >= l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(d->id)))
		return -ENOMEM;
	l->v[++l->n] = NULL;
	return 0;
}

/* frm --finish [--list] [ID]...: the exit status. */
static int finish(char **ids, size_t n, struct rm_options *x)
{
	const char *sd = state_dir();
	if (!sd)
		return EXIT_FAILURE;
	if (x->list) {
		int rc = fastrm_pending(sd, list_one, NULL);
		if (rc < 0) {
			error_msg(-rc, "cannot read the state directory %s", quote_always(0, sd));
			return EXIT_FAILURE;
		}
		return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	struct id_list all = { 0 };
	if (n == 0) {
		int rc = fastrm_pending(sd, collect_id, &all);
		if (rc < 0) {
			error_msg(-rc, "cannot read the state directory %s", quote_always(0, sd));
			return EXIT_FAILURE;
		}
		ids = all.v;
		n = all.n;
	}
	catch_signals();
	clock_gettime(CLOCK_MONOTONIC, &counters.start);
	if (x->progress)
		progress_start(program_name);
	struct fastrm_rmtree_opts o = { .size = sizeof o };
	o.workers = x->jobs;
	o.flags = x->jobs_auto ? FASTRM_RMTREE_FIT_WORKERS : 0;
	o.order = x->order;
	o.memory = x->memory;
	set_pacing(&o, x);
	o.ctx = x;
	o.removed = frm_removed;
	o.failed = frm_failed;
	o.stop = &stop_signal;
	int status = EXIT_SUCCESS;
	size_t busy = 0;
	for (size_t i = 0; i < n && !stop_signal; i++) {
		struct fastrm_rmtree_stats st = { 0 };
		int rc = fastrm_finish(sd, ids[i], &o, &st);
		workers_ran = st.workers > workers_ran ? st.workers : workers_ran;
		paced_ms += st.paced_ms;
		if (rc == -EBUSY) {
			busy++;
		} else if (rc == -ESTALE) {
			error_msg(0, "cannot finish %s: what it detached was replaced; "
			          "left as it is", quote_always(0, ids[i]));
			status = EXIT_FAILURE;
		} else if (rc < 0 && rc != -EINTR) {
			error_msg(-rc, "cannot finish %s", quote_always(0, ids[i]));
			status = EXIT_FAILURE;
		} else if (rc > 0) {
			status = EXIT_FAILURE;
		}
	}
	progress_stop();
	for (size_t i = 0; i < all.n; i++)
		free(all.v[i]);
	free(all.v);
	if (busy)
		error_msg(0, "%zu detached tree%s being removed by %s finisher%s now (--finish --list)",
		          busy, busy == 1 ? " is" : "s are", busy == 1 ? "its" : "their",
		          busy == 1 ? "" : "s");
	if (x->stats)
		print_stats();
	if (stop_signal) {
		int sig = stop_signal;
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return status;
}

static int run(char **files, size_t n, struct rm_options *x,
               bool preserve_root, bool prompt_once)
{
	static struct stat root_st;
	struct fastrm_manifest *m = manifest_open(x);

	if (x->recursive && preserve_root) {
		if (lstat("/", &root_st) != 0) {
			error_msg(errno, "failed to get attributes of %s",
			          quote_always(0, "/"));
			return manifest_close(m, x, EXIT_FAILURE);
		}
		x->root = &root_st;
	}

	uintmax_t n_files = (uintmax_t)n;
	if (prompt_once && (x->recursive || n_files > 3)) {
		fprintf(stderr,
		        x->recursive ? "%s: remove %ju argument%s recursively? "
		                    : "%s: remove %ju argument%s? ",
		        program_name, n_files, n_files == 1 ? "" : "s");
		if (!yesno())
			return manifest_close(m, x, EXIT_SUCCESS);
	}

	catch_signals();

	clock_gettime(CLOCK_MONOTONIC, &counters.start);
	/* --detach: what can be renamed away is, and a finisher removes it;
	 * the rest is removed here */
	char **ids = NULL, **here = NULL;
	bool detached_ok = true;
	if (x->detach) {
		const char *sd = state_dir();
		if (!sd)
			return manifest_close(m, x, EXIT_FAILURE);
		ids = calloc(n + 1, sizeof *ids);
		here = calloc(n + 1, sizeof *here);
		if (!ids || !here) {
			error_msg(ENOMEM, "cannot detach");
			return manifest_close(m, x, EXIT_FAILURE);
		}
		size_t nhere = 0;
		detached_ok = detach_operands(files, n, x, sd, ids, here, &nhere);
		if (ids[0]) {
			pid_t pid = fastrm_finisher(sd, ids, x->jobs_auto ? 0 : x->jobs,
			                            x->max_rate, x->latency_target_us);
			if (pid < 0) {
				error_msg(-pid, "cannot start a finisher: %s removes what was detached",
				          quote_always(0, "frm --finish"));
				detached_ok = false;
			} else if (x->verbose) {
				printf("finisher %ld removes what was detached (frm --finish --list)\n",
				       (long)pid);
			}
		}
		for (size_t i = 0; ids[i]; i++)
			free(ids[i]);
		free(ids);
		here[nhere] = NULL;
		files = here;
		n_files = nhere;
	}
	args_left = (size_t)n_files;
	if (x->progress && n_files)
		progress_start(program_name);
	enum rm_status status = n_files ? rm(files, x, m) : RM_OK;
	free(here);
	if (!detached_ok)
		status = RM_ERROR;
	progress_stop();
	if (stop_signal) {
		int sig = stop_signal;
		uintmax_t done = counters.files + counters.dirs;
		error_msg(0, "interrupted by %s: stopped after removing %ju entr%s",
		          signal_name(sig), done, done == 1 ? "y" : "ies");
		if (x->stats)
			print_stats();
		manifest_close(m, x, 128 + sig);
		fflush(stdout);
		/* die of the signal, so that the caller sees how it ended */
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	if (x->stats)
		print_stats();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error_msg(errno, "write error");
		return manifest_close(m, x, EXIT_FAILURE);
	}
	return manifest_close(m, x, status == RM_ERROR ? EXIT_FAILURE : EXIT_SUCCESS);
}

int main(int argc, char **argv)
{
	struct rm_options x = { .interactive = RMI_SOMETIMES,
		                .order = fastrm_order_by_name("auto"),
		                .memory = FASTRM_DEFAULT_BUDGET,
		                .jobs = auto_jobs(), .jobs_auto = true };
	bool preserve_root = true, prompt_once = false;

	if (argv[0] && *argv[0])
		program_name = argv[0];
	x.stdin_tty = isatty(STDIN_FILENO);
	int status = parse_options(argc, argv, &x, &preserve_root, &prompt_once);
	if (status >= 0)
		return status;
	answer_no = x.dry_run;
	if (x.finish)
		return finish(argv + optind, (size_t)(argc - optind), &x);
	if (argc <= optind) {
		if (x.ignore_missing)
			return EXIT_SUCCESS;
		error_msg(0, "missing operand");
		try_help();
		return EXIT_FAILURE;
	}
	status = run(argv + optind, (size_t)(argc - optind), &x, preserve_root,
	             prompt_once);
	for (size_t i = 0; i < x.nexclude; i++)
		free(x.exclude[i]);
	free(x.exclude);
	return status;
}
