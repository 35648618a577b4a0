/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "quote.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSLOTS 4

static char *buf[NSLOTS];
static size_t cap[NSLOTS];

struct out {
	int slot;
	size_t len;
};

static void put(struct out *o, char c)
{
	if (o->len + 2 > cap[o->slot]) {
		size_t n = cap[o->slot] ? cap[o->slot] * 2 : 64;
		char *p = realloc(buf[o->slot], n);
		if (!p)
			abort();
		buf[o->slot] = p;
		cap[o->slot] = n;
	}
	buf[o->slot][o->len++] = c;
	buf[o->slot][o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	while (*s)
		put(o, *s++);
}

static bool printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* Characters that mean the same inside C and shell double quotes; a name
 * made only of them, with a single quote, is shown in double quotes. */
static bool dq_compatible(unsigned char c, size_t i)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	if (c == '#' || c == '~')
		return i == 0;
	return strchr(" '%+,-./:]_{}@", c) != NULL && c != '\0';
}

/* Characters that never need quoting. */
static bool safe(unsigned char c, size_t i)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	if (c == '#' || c == '~')
		return i != 0;
	return strchr("%+,-./]_{}@", c) != NULL && c != '\0';
}

static const char *escape_name(unsigned char c)
{
	switch (c) {
	case '\a': return "\\a";
	case '\b': return "\\b";
	case '\f': return "\\f";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	case '\v': return "\\v";
	default: return NULL;
	}
}

static const char *quote(int slot, const char *s, bool always)
{
	struct out o = { slot & (NSLOTS - 1), 0 };
	size_t n = strlen(s);
	bool sq = false, compat = true, all_safe = n > 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		sq |= c == '\'';
		compat &= dq_compatible(c, i);
		all_safe &= safe(c, i);
	}
	put(&o, '\0');
	o.len = 0;
	if (!always && all_safe) {
		puts_(&o, s);
		return buf[o.slot];
	}
	if (sq && compat) {
		put(&o, '"');
		puts_(&o, s);
		put(&o, '"');
		return buf[o.slot];
	}
	/* Single quotes; a quote as '\'', other bytes as $'\ooo' groups. */
	bool in_sq = true, in_dollar = false;
	put(&o, '\'');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (printable(c)) {
			if (in_dollar) {
				put(&o, '\'');
				in_dollar = false;
			}
			if (!in_sq) {
				put(&o, '\'');
				in_sq = true;
			}
			if (c == '\'')
				puts_(&o, "'\\''");
			else
				put(&o, (char)c);
			continue;
		}
		if (in_sq) {
			put(&o, '\'');
			in_sq = false;
		}
		if (!in_dollar) {
			puts_(&o, "$'");
			in_dollar = true;
		}
		const char *e = escape_name(c);
		if (e) {
			puts_(&o, e);
		} else {
			char oct[8];
			snprintf(oct, sizeof oct, "\\%03o", c);
			puts_(&o, oct);
		}
	}
	/* One quote closes either the $'...' group or the plain quote. */
	put(&o, '\'');
	return buf[o.slot];
}

const char *quote_always(int slot, const char *s)
{
	return quote(slot, s, true);
}

const char *quote_if_needed(int slot, const char *s)
{
	return quote(slot, s, false);
}
