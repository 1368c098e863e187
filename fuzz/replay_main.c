// SPDX-License-Identifier: MIT
/* replay_main.c - run a libFuzzer harness over corpus files, as an ordinary test */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Corpus entries are small; anything larger is not an input we wrote. */
#define REPLAY_MAX_FILE (1u << 20)

static int run_file(const char *path)
{
	static uint8_t buf[REPLAY_MAX_FILE];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static int run_path(const char *path, unsigned int *count)
{
	struct dirent *de;
	struct stat st;
	char sub[4096];
	int rc = 0;
	DIR *d;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: not found\n", path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	d = opendir(path);
	if (!d)
		return 1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
			(*count)++;
			rc |= run_file(sub);
		}
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned int count = 0;
	int i, rc = 0;

	for (i = 1; i < argc; i++)
		rc |= run_path(argv[i], &count);
	printf("replayed %u inputs\n", count);
	return rc || count == 0;
}
