/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ABI of node FASTRM_0.2 (lib/libfastrm.sym), stored: the type of every
 * exported function, and the layout of every public struct on LP64 Linux.
 * Compiling this file is the check: a change to a signature or to a struct
 * that 0.2 binaries use fails here, and must come as a new symbol in a new
 * node (or in the reserved members), not as an edit.  Regenerate the
 * layout lines only when starting a new, incompatible soname.
 */
#include <fastrm/fts.h>
#include <fastrm/order.h>
#include <fastrm/unlinker.h>
#include <fastrm/rmtree.h>
#include <fastrm/manifest.h>
#include <fastrm/detach.h>

#include <stddef.h>

#define FN(name, type) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), type), \
	               #name " changed its type")

FN(fastrm_fts_open, FTS *(*)(char *const *, int,
                             int (*)(const FTSENT **, const FTSENT **)));
FN(fastrm_fts_read, FTSENT *(*)(FTS *));
FN(fastrm_fts_children, FTSENT *(*)(FTS *, int));
FN(fastrm_fts_set, int (*)(FTS *, FTSENT *, int));
FN(fastrm_fts_close, int (*)(FTS *));
FN(fastrm_fts_set_order, int (*)(FTS *, const struct fastrm_order *));
FN(fastrm_fts_set_memory_budget, int (*)(FTS *, size_t));
FN(fastrm_order_builtin, const struct fastrm_order *(*)(size_t));
FN(fastrm_order_by_name, const struct fastrm_order *(*)(const char *));
FN(fastrm_order_read, long (*)(struct fastrm_order_source *, size_t,
                               fastrm_emit_fn, void *));
FN(fastrm_order_rewind, int (*)(struct fastrm_order_source *));
FN(fastrm_order_budget, size_t (*)(const struct fastrm_order_source *));
FN(fastrm_order_account, void (*)(struct fastrm_order_source *, size_t));
FN(fastrm_order_stat, const struct stat *(*)(const struct fastrm_order_source *));
FN(fastrm_order_fd, int (*)(const struct fastrm_order_source *));
FN(fastrm_unlinker_new, int (*)(struct fastrm_unlinker **, unsigned, size_t));
FN(fastrm_unlinker_set_dir, int (*)(struct fastrm_unlinker *, int));
FN(fastrm_unlinker_submit, int (*)(struct fastrm_unlinker *, const char *, int,
                                   void *));
FN(fastrm_unlinker_retire, int (*)(struct fastrm_unlinker *, _Bool,
                                   struct fastrm_unlink_done *));
FN(fastrm_unlinker_pending, size_t (*)(const struct fastrm_unlinker *));
FN(fastrm_unlinker_free, void (*)(struct fastrm_unlinker *));
FN(fastrm_rmtree, int (*)(char *const *, const struct fastrm_rmtree_opts *,
                          struct fastrm_rmtree_stats *));
/* node FASTRM_0.5 */
FN(fastrm_rmtreeat, int (*)(int, char *const *, const struct fastrm_rmtree_opts *,
                            struct fastrm_rmtree_stats *));
/* node FASTRM_0.6 (fastrm_fts_children@FASTRM_0.6 keeps 0.2's type; what
 * changed is the value of FTS_NAMEONLY it takes) */
FN(fastrm_fts_openat, FTS *(*)(int, char *const *, int,
                               int (*)(const FTSENT **, const FTSENT **)));
/* node FASTRM_0.7 */
FN(fastrm_manifest_new, struct fastrm_manifest *(*)(int, int, unsigned));
FN(fastrm_manifest_add, int (*)(struct fastrm_manifest *, const char *, mode_t,
                                enum fastrm_outcome, int, const char *));
FN(fastrm_manifest_set_base, int (*)(struct fastrm_manifest *, const char *));
FN(fastrm_manifest_finish, int (*)(struct fastrm_manifest *, int));
FN(fastrm_manifest_free, int (*)(struct fastrm_manifest *));
FN(fastrm_manifest_op, const char *(*)(enum fastrm_rmtree_error, int));
FN(fastrm_manifest_reason, const char *(*)(enum fastrm_rmtree_keep));
FN(fastrm_rmtree_excluded, int (*)(const char *const *, const char *, const char *,
                                   int));
/* node FASTRM_0.9 */
FN(fastrm_state_dir, int (*)(char *, size_t));
FN(fastrm_detach, int (*)(int, const char *, const char *, unsigned, char *));
FN(fastrm_pending, int (*)(const char *,
                           int (*)(void *, const struct fastrm_detached *), void *));
FN(fastrm_finish, int (*)(const char *, const char *, const struct fastrm_rmtree_opts *,
                          struct fastrm_rmtree_stats *));
FN(fastrm_finisher, pid_t (*)(const char *, char *const *, unsigned, double,
                              unsigned long long));
_Static_assert(__builtin_types_compatible_p(fastrm_emit_fn,
                                            int (*)(void *, const struct fastrm_dirent *)),
               "fastrm_emit_fn changed its type");

#if defined(__linux__) && defined(__x86_64__)
#define SIZE(type, n) _Static_assert(sizeof(type) == (n), #type " changed size")
#define OFF(type, member, n) \
	_Static_assert(offsetof(type, member) == (n), #type "." #member " moved")
SIZE(struct fastrm_fts, 96);
OFF(struct fastrm_fts, fts_cur, 0);
OFF(struct fastrm_fts, fts_child, 8);
OFF(struct fastrm_fts, fts_dev, 16);
OFF(struct fastrm_fts, fts_path, 24);
OFF(struct fastrm_fts, fts_rfd, 32);
OFF(struct fastrm_fts, fts_cwd_fd, 36);
OFF(struct fastrm_fts, fts_pathlen, 40);
OFF(struct fastrm_fts, fts_compar, 48);
OFF(struct fastrm_fts, fts_options, 56);
OFF(struct fastrm_fts, fts_spare, 64);
SIZE(struct fastrm_ftsent, 248);
OFF(struct fastrm_ftsent, fts_cycle, 0);
OFF(struct fastrm_ftsent, fts_parent, 8);
OFF(struct fastrm_ftsent, fts_link, 16);
OFF(struct fastrm_ftsent, fts_number, 24);
OFF(struct fastrm_ftsent, fts_pointer, 32);
OFF(struct fastrm_ftsent, fts_accpath, 40);
OFF(struct fastrm_ftsent, fts_path, 48);
OFF(struct fastrm_ftsent, fts_errno, 56);
OFF(struct fastrm_ftsent, fts_symfd, 60);
OFF(struct fastrm_ftsent, fts_pathlen, 64);
OFF(struct fastrm_ftsent, fts_fts, 72);
OFF(struct fastrm_ftsent, fts_level, 80);
OFF(struct fastrm_ftsent, fts_namelen, 88);
OFF(struct fastrm_ftsent, fts_info, 96);
OFF(struct fastrm_ftsent, fts_flags, 98);
OFF(struct fastrm_ftsent, fts_instr, 100);
OFF(struct fastrm_ftsent, fts_priv_flags, 102);
OFF(struct fastrm_ftsent, fts_statp, 104);
OFF(struct fastrm_ftsent, fts_name, 248);
SIZE(struct fastrm_dirent, 32);
OFF(struct fastrm_dirent, ino, 0);
OFF(struct fastrm_dirent, name, 8);
OFF(struct fastrm_dirent, namelen, 16);
OFF(struct fastrm_dirent, type, 24);
SIZE(struct fastrm_order, 64);
OFF(struct fastrm_order, name, 0);
OFF(struct fastrm_order, next, 8);
OFF(struct fastrm_order, release, 16);
OFF(struct fastrm_order, description, 24);
OFF(struct fastrm_order, reserved, 32);
SIZE(struct fastrm_unlink_done, 32);
OFF(struct fastrm_unlink_done, name, 0);
OFF(struct fastrm_unlink_done, dirfd, 8);
OFF(struct fastrm_unlink_done, flags, 12);
OFF(struct fastrm_unlink_done, error, 16);
OFF(struct fastrm_unlink_done, data, 24);
SIZE(struct fastrm_rmtree_entry, 40);
OFF(struct fastrm_rmtree_entry, path, 0);
OFF(struct fastrm_rmtree_entry, dirfd, 8);
OFF(struct fastrm_rmtree_entry, name, 16);
OFF(struct fastrm_rmtree_entry, st, 24);
OFF(struct fastrm_rmtree_entry, level, 32);
OFF(struct fastrm_rmtree_entry, is_dir, 36);
SIZE(struct fastrm_rmtree_opts, 152); /* 112 until 0.6, 120 until 0.8: still taken */
OFF(struct fastrm_rmtree_opts, size, 0);
OFF(struct fastrm_rmtree_opts, workers, 8);
OFF(struct fastrm_rmtree_opts, order, 16);
OFF(struct fastrm_rmtree_opts, memory, 24);
OFF(struct fastrm_rmtree_opts, flags, 32);
OFF(struct fastrm_rmtree_opts, ctx, 40);
OFF(struct fastrm_rmtree_opts, root, 48);
OFF(struct fastrm_rmtree_opts, removed, 56);
OFF(struct fastrm_rmtree_opts, failed, 64);
OFF(struct fastrm_rmtree_opts, stop, 72);
OFF(struct fastrm_rmtree_opts, ask, 80); /* 0.3: was reserved[0] */
OFF(struct fastrm_rmtree_opts, exclude, 88);  /* 0.7: was reserved[0] */
OFF(struct fastrm_rmtree_opts, manifest, 96); /* 0.7: was reserved[1] */
OFF(struct fastrm_rmtree_opts, kept, 104);    /* 0.7: was reserved[2] */
OFF(struct fastrm_rmtree_opts, estimate, 112); /* 0.7: new */
OFF(struct fastrm_rmtree_opts, max_rate, 120); /* 0.9: new */
OFF(struct fastrm_rmtree_opts, latency_target_us, 128); /* 0.9: new */
OFF(struct fastrm_rmtree_opts, pace_rate, 136); /* 0.9: new */
OFF(struct fastrm_rmtree_opts, pace_in_flight, 144); /* 0.9: new */
SIZE(struct fastrm_rmtree_stats, 64);
OFF(struct fastrm_rmtree_stats, workers, 0);
OFF(struct fastrm_rmtree_stats, workers_fitted, 4);
OFF(struct fastrm_rmtree_stats, subtrees_shared, 8);
OFF(struct fastrm_rmtree_stats, read_ahead_requests, 16);
OFF(struct fastrm_rmtree_stats, read_ahead_bytes, 24);
OFF(struct fastrm_rmtree_stats, index_lookups, 32);
OFF(struct fastrm_rmtree_stats, inodes_read_ahead, 40);
OFF(struct fastrm_rmtree_stats, leaves_read_ahead, 48);
OFF(struct fastrm_rmtree_stats, paced_ms, 56); /* 0.9: was reserved[0] */
#endif

int main(void)
{
	return 0;
}
