/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs a fuzz target once on every input named, or on every file of every
 * directory named: the corpus as an ordinary test.  A failed invariant
 * aborts, which fails the test. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	static uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	long inputs = 0;
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			inputs++;
			continue;
		}
		struct dirent **list;
		int n = scandir(argv[i], &list, NULL, by_name);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], list[k]->d_name);
			if (list[k]->d_name[0] != '.' && stat(path, &sb) == 0 &&
			    S_ISREG(sb.st_mode)) {
				if (run_file(path) < 0)
					return 1;
				inputs++;
			}
			free(list[k]);
		}
		free(list);
	}
	printf("%ld inputs replayed, every invariant held\n", inputs);
	/* no input at all is a broken test, not a passing one */
	return inputs > 0 ? 0 : 1;
}
