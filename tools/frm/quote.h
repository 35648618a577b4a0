/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File names in diagnostics, quoted the way GNU coreutils quotes them in
 * the C locale (quotearg's shell-escape styles). */
#ifndef FRM_QUOTE_H
#define FRM_QUOTE_H

/* Always quoted, as GNU's quoteaf(): 'name', "it's", 'a'$'\n''b'.
 * @slot (0..3) selects one of four buffers, so that up to four results
 * can be used in one message.  The result lives until the slot is reused. */
const char *quote_always(int slot, const char *s);

/* Quoted only when needed, as GNU's quotef() (':' counts as needing). */
const char *quote_if_needed(int slot, const char *s);

#endif
