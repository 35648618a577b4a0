/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A set of (device, inode) pairs: the directories on the current path,
 * for cycle detection.  Open addressing, linear probing, backward-shift
 * deletion; memory grows with the depth of the walk only. */
#ifndef FASTRM_DEVINO_H
#define FASTRM_DEVINO_H

#include <stddef.h>
#include <sys/types.h>

struct devino_slot {
	dev_t dev;
	ino_t ino;
	void *val; /* NULL: empty slot */
};

struct devino_set {
	struct devino_slot *slot;
	size_t mask; /* capacity - 1; capacity is a power of two */
	size_t count;
};

void devino_init(struct devino_set *s);
void devino_fini(struct devino_set *s);
/* Insert (dev, ino) -> val.  If the pair is present, returns its value and
 * inserts nothing; returns NULL after inserting; on allocation failure
 * returns NULL with *failed set to -ENOMEM (else 0). */
void *devino_insert(struct devino_set *s, dev_t dev, ino_t ino, void *val,
                    int *failed);
/* Remove the pair if its value is @val. */
void devino_remove(struct devino_set *s, dev_t dev, ino_t ino, void *val);

#endif
