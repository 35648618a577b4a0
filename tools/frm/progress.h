/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frm --progress: a live line on a terminal, drawn by a thread of its own
 * a few times a second, so the elapsed time keeps moving while one unlink
 * takes long.  The removal calls progress_removed() once per entry; every
 * other write to the terminal goes between progress_hold() and
 * progress_release(), which take the line off the screen first. */
#ifndef FRM_PROGRESS_H
#define FRM_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Start drawing on stderr, if it is a terminal.  false: no line will be
 * drawn (not a terminal, or no thread could be started). */
bool progress_start(const char *program_name);

/* Stop the thread and leave the terminal line empty.  Safe to call when
 * progress_start() was never called or returned false. */
void progress_stop(void);

/* One entry removed; @path names it (copied only when the line wants it). */
void progress_removed(const char *path);

/* frm began emptying its last argument, a directory with no
 * subdirectories, @size bytes large (st_size) on a file system of type
 * @fs_magic (statfs's f_type): where that size tells how many entries the
 * directory holds, the line shows the time left. */
void progress_expect(long fs_magic, uintmax_t size);

/* Where the removal keeps its estimate of the entries in all
 * (fastrm_rmtree's opts.estimate): the line shows a share of it and the
 * time left. */
void progress_total(const unsigned long long *estimate);

/* Where the removal keeps the rate its pacing allows now, and how many
 * removals in flight (fastrm_rmtree's opts.pace_rate, pace_in_flight; 0:
 * not paced so): the line shows them beside the rate made. */
void progress_pace(const unsigned long long *rate, const unsigned long long *in_flight);

/* That directory is done (or failed): no more estimate. */
void progress_expect_end(void);

/* Around any other output to the terminal (messages, prompts, -v). */
void progress_hold(void);
void progress_release(void);

/* The entries a directory of @size bytes holds on a file system of type
 * @fs_magic, when its names are @name_len bytes long on average; 0 where
 * the size tells nothing reliable. */
uintmax_t progress_estimate(long fs_magic, uintmax_t size, double name_len);

/* "1:02:03" or "2:03": @secs in hours, minutes and seconds. */
void progress_clock(char *buf, size_t size, double secs);

#endif
