/* Runs a fuzz target over files and directories of inputs (the committed
 * corpus and regression cases), as libFuzzer would run one input: any crash,
 * sanitizer report or leak fails the run. */
#define _DEFAULT_SOURCE /* realpath */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
		if ((n += got) == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", path);
		return -1;
	}
	/* an exact-size copy, so that reading past the input is caught */
	uint8_t *exact = malloc(n ? n : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, int *count)
{
	struct stat sb;
	if (stat(path, &sb)) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	DIR *d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	int rc = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char **nn = realloc(names, (n + 1) * sizeof *names);
		if (!nn || !(nn[n] = malloc(strlen(path) + strlen(e->d_name) + 2))) {
			names = nn ? nn : names;
			rc = -1;
			break;
		}
		names = nn;
		sprintf(names[n++], "%s/%s", path, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp); /* the same order every run */
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = run_path(names[i], count);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	/* absolute paths: a target may change directory when it starts */
	char **paths = calloc((size_t)argc, sizeof *paths);
	for (int i = 1; paths && i < argc; i++)
		if (!(paths[i] = realpath(argv[i], NULL))) {
			perror(argv[i]);
			return 1;
		}
	if (!paths)
		return 1;
	LLVMFuzzerInitialize(&argc, &argv);
	int count = 0, rc = 0;
	for (int i = 1; i < argc; i++) {
		if (!rc && run_path(paths[i], &count))
			rc = 1;
		free(paths[i]);
	}
	free(paths);
	fprintf(stderr, "replay: %d inputs ran\n", count);
	return rc;
}
