/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal declarations shared by the library's parts; never installed. */
#ifndef FASTRM_INT_H
#define FASTRM_INT_H

/* Marks a definition that belongs to the public ABI; everything else is
 * hidden (-fvisibility=hidden and the version script libfastrm.sym). */
#define FASTRM_EXPORT __attribute__((visibility("default")))

/* "." or "..". */
#define ISDOT(a) ((a)[0] == '.' && (!(a)[1] || ((a)[1] == '.' && !(a)[2])))

#endif
