/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The (dev, ino) set against a naive model, through growth and deletions
 * that exercise backward shifting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "devino.h"

#define N 5000

static void test_model(void **state)
{
	(void)state;
	struct devino_set s;
	static int present[N];
	static int vals[N];
	unsigned seed = 1;
	devino_init(&s);
	for (int step = 0; step < 200000; step++) {
		seed = seed * 1103515245u + 12345u;
		int k = (int)((seed >> 8) % N);
		/* few distinct devices, clustered inodes: many collisions */
		dev_t dev = (dev_t)(k % 3);
		ino_t ino = (ino_t)(k / 3) * 64;
		int failed;
		if ((seed >> 4) & 1) {
			void *got = devino_insert(&s, dev, ino, &vals[k], &failed);
			assert_int_equal(failed, 0);
			if (present[k])
				assert_ptr_equal(got, &vals[k]);
			else
				assert_null(got);
			present[k] = 1;
		} else {
			devino_remove(&s, dev, ino, &vals[k]);
			present[k] = 0;
		}
		if (step % 1000 == 0) {
			size_t count = 0;
			for (int i = 0; i < N; i++) {
				count += (size_t)present[i];
				void *got = devino_insert(&s, (dev_t)(i % 3),
				                          (ino_t)(i / 3) * 64,
				                          &vals[i], &failed);
				if (present[i])
					assert_ptr_equal(got, &vals[i]);
				else
					devino_remove(&s, (dev_t)(i % 3),
					              (ino_t)(i / 3) * 64, &vals[i]);
			}
			assert_int_equal(s.count, count);
		}
	}
	devino_fini(&s);
}

static void test_remove_other_value(void **state)
{
	(void)state;
	struct devino_set s;
	int a, b, failed;
	devino_init(&s);
	assert_null(devino_insert(&s, 1, 2, &a, &failed));
	devino_remove(&s, 1, 2, &b); /* not its value: stays */
	assert_ptr_equal(devino_insert(&s, 1, 2, &b, &failed), &a);
	devino_remove(&s, 1, 2, &a);
	assert_null(devino_insert(&s, 1, 2, &b, &failed));
	devino_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_remove_other_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
