/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Body of walk_fastrm/walk_gnulib: include after an fts header, with
 * WALK_FN naming the function, WALK_CHDIR_MODE saying whether this fts
 * changes directory when neither FTS_CWDFD nor FTS_NOCHDIR is given and
 * WALK_COUNT_FDS whether the fds it leaves open are counted. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walk.h"

static int walk_name_cmp(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

static unsigned walk_hash(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Open fds of the process: tests/common/fixture.c, linked into the test
 * (its header is not on the gnulib reference's include path). */
int fx_count_fds(void);

/* How fts_accpath names the file, as a token comparable across
 * implementations.  Each implementation must follow its documented rule:
 * with FTS_CWDFD the name relative to fts_cwd_fd (compared verbatim);
 * when the fts changes directory, the name in the current directory
 * (roots: the path); otherwise the full path. */
static const char *acc_token(const FTSENT *e, int opts)
{
	if (opts & FTS_CWDFD)
		return e->fts_accpath;
	int chdir_mode = WALK_CHDIR_MODE && !(opts & (FTS_NOCHDIR | FTS_LOGICAL));
	const char *want = chdir_mode && e->fts_level > 0 ? e->fts_name
	                                                   : e->fts_path;
	if (strcmp(e->fts_accpath, want) == 0)
		return "=rule";
	/* gnulib gives the whole path where it could not change directory
	 * (a root reached through a symlink after fts_children): allowed,
	 * as long as it reaches the same file (compared on its own). */
	if (chdir_mode && e->fts_accpath == e->fts_path)
		return "=rule";
	return e->fts_accpath;
}

/* Long paths (the deep chain) are printed as length, 64-bit FNV-1a hash
 * and last characters: the text stays small, the comparison exact. */
static void put_path(FILE *out, const char *p, size_t len)
{
	if (len <= 256) {
		fputs(p, out);
		return;
	}
	unsigned long long h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	fprintf(out, "[%zu:%016llx]...%s", len, h, p + len - 32);
}

static void put_entry(FILE *out, const FTSENT *e, int opts)
{
	fprintf(out, "%d %ld %d ", e->fts_info, (long)e->fts_level, e->fts_errno);
	put_path(out, e->fts_path, e->fts_pathlen);
	fputc('\t', out);
	const char *acc = acc_token(e, opts);
	put_path(out, acc, strlen(acc));
}

/* What accpath reaches, and what fts_statp says. */
static void put_files(FILE *out, FTS *fts, const FTSENT *e, int opts)
{
	char accid[64] = "-", st[64] = "-";
	if (e->fts_pathlen < 3000) {
		struct stat sb;
		int dfd = (opts & FTS_CWDFD) ? fts->fts_cwd_fd : AT_FDCWD;
		if (fstatat(dfd, e->fts_accpath, &sb, AT_SYMLINK_NOFOLLOW) == 0)
			snprintf(accid, sizeof accid, "%lu:%lu",
			         (unsigned long)sb.st_dev, (unsigned long)sb.st_ino);
		else
			snprintf(accid, sizeof accid, "E%d", errno);
	}
	switch (e->fts_info) {
	case FTS_NSOK:
		snprintf(st, sizeof st, "mode%o:%lu",
		         (unsigned)(e->fts_statp->st_mode & S_IFMT),
		         (unsigned long)e->fts_statp->st_ino);
		break;
	case FTS_NS:
	case FTS_DNR:
	case FTS_ERR:
		break;
	default:
		snprintf(st, sizeof st, "%lu:%lu:%o",
		         (unsigned long)e->fts_statp->st_dev,
		         (unsigned long)e->fts_statp->st_ino,
		         (unsigned)e->fts_statp->st_mode);
	}
	fprintf(out, "\t%s\t%s", accid, st);
}

static void do_children(FILE *out, FTS *fts, const FTSENT *e, int opts)
{
	int instr = e->fts_level % 2 ? FTS_NAMEONLY : 0;
	/* gnulib's fts_children() leaves a slash after the directory's path
	 * in the buffer that is its fts_accpath under FTS_NOCHDIR: a path of
	 * PATH_MAX - 1 bytes can then no longer be opened (FTS_DNR,
	 * ENAMETOOLONG).  Documented, not compared. */
	if ((opts & (FTS_NOCHDIR | FTS_LOGICAL)) && e->fts_pathlen + 2 > PATH_MAX)
		return;
	/* the parent's path as it was: gnulib's fts_children() leaves a
	 * slash after it in the buffer under FTS_NOCHDIR */
	char *parent = strndup(e->fts_path, e->fts_pathlen);
	errno = 0;
	const FTSENT *c = fts_children(fts, instr);
	fprintf(out, "  children %s errno=%d\n", instr ? "names" : "all",
	        c ? 0 : errno);
	for (; c; c = c->fts_link) {
		/* a child's fts_path is the stream's buffer: not its path;
		 * each line names the parent (unsorted runs compare sets) */
		fputs("  ", out);
		put_path(out, parent, e->fts_pathlen);
		fputs(" > ", out);
		if (!instr)
			fprintf(out, "%d %ld %d ", c->fts_info, (long)c->fts_level,
			        c->fts_errno);
		put_path(out, c->fts_name, c->fts_namelen);
		if (!instr) {
			const char *acc = c->fts_accpath == c->fts_path
			                          ? "=buffer" : c->fts_accpath;
			fprintf(out, "\t%s", acc);
		}
		fputc('\n', out);
	}
	free(parent);
}

/* Whether symlink @e leads to a directory: gnulib cannot read a directory
 * reached by FTS_FOLLOW in a physical walk (FTS_DNR, ENOTDIR: it opens it
 * with O_NOFOLLOW), libfastrm can; that difference is documented, not
 * compared. */
static int to_directory(FTS *fts, const FTSENT *e)
{
	struct stat sb;
	int dfd = (fts->fts_options & FTS_CWDFD) ? fts->fts_cwd_fd : AT_FDCWD;
	return fstatat(dfd, e->fts_accpath, &sb, 0) == 0 && S_ISDIR(sb.st_mode);
}

/* Instructions by a hash of the name: skip some directories, follow some
 * symlinks, visit some files again; never twice in a row on one entry
 * (FTS_AGAIN and FTS_FOLLOW return the same entry again). */
static void do_set(FILE *out, FTS *fts, FTSENT *e, FTSENT **last)
{
	unsigned h = walk_hash(e->fts_name);
	int instr = FTS_NOINSTR;
	if (*last == e) {
		*last = NULL;
		return;
	}
	if (e->fts_info == FTS_D && h % 4 == 0)
		instr = FTS_SKIP;
	else if ((e->fts_info == FTS_SL || e->fts_info == FTS_SLNONE) && h % 2 == 0 &&
	         !to_directory(fts, e))
		instr = FTS_FOLLOW;
	else if (e->fts_info == FTS_F && h % 5 == 0)
		instr = FTS_AGAIN;
	*last = instr == FTS_FOLLOW || instr == FTS_AGAIN ? e : NULL;
	if (instr != FTS_NOINSTR) {
		int rc = fts_set(fts, e, instr);
		fprintf(out, "  set %d: %d\n", instr, rc);
	}
}

static int do_remove(FTS *fts, const FTSENT *e, int opts)
{
	int dfd = (opts & FTS_CWDFD) ? fts->fts_cwd_fd : AT_FDCWD;
	int flag;
	switch (e->fts_info) {
	case FTS_D:
	case FTS_DC:
	case FTS_DOT:
	case FTS_NS:
		return -1;
	case FTS_DP:
	case FTS_DNR:
	case FTS_ERR:
		flag = AT_REMOVEDIR;
		break;
	default:
		flag = 0;
	}
	return unlinkat(dfd, e->fts_accpath, flag) == 0 ? 0 : errno;
}

int WALK_FN(char *const *roots, const struct walk *w, FILE *out)
{
	int opts = w->opts;
	int saved = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat before, after;
	if (saved < 0 || fstat(saved, &before) < 0)
		return -1;
	int fds = fx_count_fds();
	FTS *fts = fts_open(roots, opts, w->sorted ? walk_name_cmp : NULL);
	if (!fts) {
		fprintf(out, "OPEN errno=%d\n", errno);
		close(saved);
		return -1;
	}
	FTSENT *e, *again = NULL;
	while ((e = fts_read(fts)) != NULL) {
		if (w->hook)
			w->hook(e->fts_path, (int)e->fts_level, w->arg);
		put_entry(out, e, opts);
		if (w->mode == WALK_REMOVE) {
			int r = do_remove(fts, e, opts);
			if (r >= 0)
				fprintf(out, "\trm=%d", r);
			fputc('\n', out);
			continue;
		}
		if (!w->no_ids)
			put_files(out, fts, e, opts);
		fputc('\n', out);
		if (w->mode == WALK_CHILDREN && e->fts_info == FTS_D)
			do_children(out, fts, e, opts);
		else if (w->mode == WALK_SET)
			do_set(out, fts, e, &again);
	}
	int end = errno;
	fprintf(out, "END errno=%d", end);
	if (end && fts->fts_path) {
		/* what du prints: "fts_read failed: PATH" */
		fputs(" at ", out);
		put_path(out, fts->fts_path, strlen(fts->fts_path));
	}
	int rc = fts_close(fts);
	if (stat(".", &after) < 0 || after.st_dev != before.st_dev ||
	    after.st_ino != before.st_ino)
		fputs(" cwd moved after fts_close", out);
	/* fds left open: libfastrm must leave none; gnulib is not held to it
	 * (it leaks fts_symfd after FTS_FOLLOW and FTS_SKIP) */
	fprintf(out, " close=%d fds%+d\n", rc,
	        WALK_COUNT_FDS ? fx_count_fds() - fds : 0);
	if (fchdir(saved) != 0)
		fprintf(out, "FCHDIR errno=%d\n", errno);
	close(saved);
	return 0;
}
