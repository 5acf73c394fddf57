/* The command line: `planner search|cost|strategies|explain` with arguments
 * from the input (one per line; the first byte picks the command), in a
 * scratch directory holding the model m.json and a plan p.json. Arguments
 * holding '/' are skipped (no file outside the scratch directory is named),
 * stdin is empty, and search gets a time limit last. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph.h"
#include "tests/fuzz/fuzz.h"

int pl_cli_main(int argc, char **argv);

#define MAX_ARGS 32

static int call(int argc, char **argv)
{
	optind = 0; /* glibc: start getopt afresh */
	return pl_cli_main(argc, argv);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static char dir[] = "/tmp/pl-fuzz-cli-XXXXXX";
	char *text;
	size_t len;
	pl_err err;
	if (!mkdtemp(dir) || chdir(dir) || pl_read_file(FUZZ_MODEL, &text, &len, &err))
		abort();
	FILE *f = fopen("m.json", "wb");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		abort();
	free(text);
	if (!freopen("/dev/null", "r", stdin))
		abort();
	char *args[] = {"planner", "search", "m.json", "--devices", "4", "-o", "p.json", NULL};
	if (call(7, args))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const cmds[] = {"search", "cost", "strategies", "explain"};
	if (size < 1 || size > 4096)
		return 0;
	char *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = 0;
	char *argv[MAX_ARGS + 6];
	int argc = 0, cmd = data[0] % 4;
	argv[argc++] = "planner";
	argv[argc++] = cmds[cmd];
	if (cmd != 3)
		argv[argc++] = "m.json";
	for (char *a = copy, *end = copy + size - 1; a < end && argc < MAX_ARGS;) {
		size_t n = strcspn(a, "\n");
		a[n] = 0;
		if (!strchr(a, '/'))
			argv[argc++] = a;
		a += n + 1;
	}
	if (cmd == 0) {
		argv[argc++] = "--time-limit";
		argv[argc++] = "2";
	}
	argv[argc] = NULL;
	call(argc, argv);
	free(copy);
	return 0;
}
