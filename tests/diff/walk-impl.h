/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Body of walk_fastrm/walk_gnulib: include after an fts header, with
 * WALK_FN naming the function and WALK_CHDIR_MODE saying whether this fts
 * changes directory when neither FTS_CWDFD nor FTS_NOCHDIR is given. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walk.h"

static int walk_name_cmp(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

/* How fts_accpath names the file, as a token comparable across
 * implementations.  Each implementation must follow its documented rule:
 * with FTS_CWDFD the name relative to fts_cwd_fd (compared verbatim);
 * when the fts changes directory, the name in the current directory
 * (roots: the path); otherwise the full path. */
static const char *acc_token(FTS *fts, FTSENT *e, int opts)
{
	if (opts & FTS_CWDFD)
		return e->fts_accpath;
	int chdir_mode = WALK_CHDIR_MODE && !(opts & (FTS_NOCHDIR | FTS_LOGICAL));
	const char *want = chdir_mode && e->fts_level > 0 ? e->fts_name
	                                                   : e->fts_path;
	(void)fts;
	return strcmp(e->fts_accpath, want) == 0 ? "=rule" : e->fts_accpath;
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

int WALK_FN(char *const *roots, int opts, int sorted, FILE *out)
{
	int saved = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	FTS *fts = fts_open(roots, opts, sorted ? walk_name_cmp : NULL);
	if (!fts) {
		fprintf(out, "OPEN errno=%d\n", errno);
		close(saved);
		return -1;
	}
	FTSENT *e;
	while ((e = fts_read(fts)) != NULL) {
		char accid[64] = "-", st[64] = "-";
		if (e->fts_pathlen < 3000) {
			struct stat sb;
			int dfd = (opts & FTS_CWDFD) ? fts->fts_cwd_fd : AT_FDCWD;
			if (fstatat(dfd, e->fts_accpath, &sb, AT_SYMLINK_NOFOLLOW) == 0)
				snprintf(accid, sizeof accid, "%lu:%lu",
				         (unsigned long)sb.st_dev,
				         (unsigned long)sb.st_ino);
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
		fprintf(out, "%d %ld %d ", e->fts_info, (long)e->fts_level,
		        e->fts_errno);
		put_path(out, e->fts_path, e->fts_pathlen);
		fputc('\t', out);
		const char *acc = acc_token(fts, e, opts);
		put_path(out, acc, strlen(acc));
		fprintf(out, "\t%s\t%s\n", accid, st);
	}
	fprintf(out, "END %d\n", errno);
	fts_close(fts);
	if (fchdir(saved) != 0)
		fprintf(out, "FCHDIR errno=%d\n", errno);
	close(saved);
	return 0;
}
