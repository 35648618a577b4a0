/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "devino.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static size_t hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h ^ (h >> 29));
}

void devino_init(struct devino_set *s)
{
	s->slot = NULL;
	s->mask = 0;
	s->count = 0;
}

void devino_fini(struct devino_set *s)
{
	free(s->slot);
	devino_init(s);
}

static int grow(struct devino_set *s)
{
	size_t cap = s->slot ? (s->mask + 1) * 2 : 16;
	struct devino_slot *n = calloc(cap, sizeof *n);
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; s->slot && i <= s->mask; i++) {
		struct devino_slot *o = &s->slot[i];
		if (!o->val)
			continue;
		size_t j = hash(o->dev, o->ino) & (cap - 1);
		while (n[j].val)
			j = (j + 1) & (cap - 1);
		n[j] = *o;
	}
	free(s->slot);
	s->slot = n;
	s->mask = cap - 1;
	return 0;
}

void *devino_insert(struct devino_set *s, dev_t dev, ino_t ino, void *val,
                    int *failed)
{
	*failed = 0;
	if (!s->slot || (s->count + 1) * 4 > (s->mask + 1) * 3) {
		int rc = grow(s);
		if (rc < 0) {
			*failed = rc;
			return NULL;
		}
	}
	size_t i = hash(dev, ino) & s->mask;
	while (s->slot[i].val) {
		if (s->slot[i].dev == dev && s->slot[i].ino == ino)
			return s->slot[i].val;
		i = (i + 1) & s->mask;
	}
	s->slot[i] = (struct devino_slot){ dev, ino, val };
	s->count++;
	return NULL;
}

void devino_remove(struct devino_set *s, dev_t dev, ino_t ino, void *val)
{
	if (!s->slot)
		return;
	size_t i = hash(dev, ino) & s->mask;
	while (s->slot[i].val) {
		if (s->slot[i].dev == dev && s->slot[i].ino == ino)
			break;
		i = (i + 1) & s->mask;
	}
	if (!s->slot[i].val || s->slot[i].val != val)
		return;
	/* Backward-shift deletion keeps every probe chain unbroken. */
	size_t hole = i;
	for (size_t j = (i + 1) & s->mask; s->slot[j].val;
	     j = (j + 1) & s->mask) {
		size_t home = hash(s->slot[j].dev, s->slot[j].ino) & s->mask;
		/* Move j into the hole unless its home lies in (hole, j]. */
		if (((j - home) & s->mask) >= ((j - hole) & s->mask)) {
			s->slot[hole] = s->slot[j];
			hole = j;
		}
	}
	s->slot[hole].val = NULL;
	s->count--;
}
