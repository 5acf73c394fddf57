/* The readers of a strategy checkpoint as the commands run them, on any
 * input as the checkpoint: `planner explain` (the table and --json),
 * `explain --diff` against a plan of the model, and `planner report`, each
 * through the command line (pl_cli_read_ckpt's checks, then the typed view,
 * pl_ckpt_doc, the printers read). In a scratch directory holding the model
 * m.json and its plan base.json; stdout goes to /dev/null. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph.h"
#include "tests/fuzz/fuzz.h"

int pl_cli_main(int argc, char **argv);

static int call(int argc, char **argv)
{
	optind = 0; /* glibc: start getopt afresh */
	return pl_cli_main(argc, argv);
}

static int put(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int bad = fwrite(data, 1, len, f) != len;
	return fclose(f) || bad ? -1 : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static char dir[] = "/tmp/pl-fuzz-explain-XXXXXX";
	char *text;
	size_t len;
	pl_err err;
	if (!mkdtemp(dir) || chdir(dir) || pl_read_file(FUZZ_MODEL, &text, &len, &err))
		abort();
	if (put("m.json", text, len))
		abort();
	free(text);
	if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
		abort();
	char *args[] = {"planner", "search", "m.json", "--devices", "4", "-o", "base.json", NULL};
	if (call(7, args))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 20 || put("p.json", data, size))
		return 0;
	char *table[] = {"planner", "explain", "p.json", NULL};
	char *json[] = {"planner", "explain", "p.json", "--json", NULL};
	char *diff[] = {"planner", "explain", "--diff", "base.json", "p.json", NULL};
	char *diff_json[] = {"planner", "explain", "--diff", "p.json", "base.json", "--json", NULL};
	char *report[] = {"planner", "report", "p.json", "-o", "p.html", NULL};
	call(3, table);
	call(4, json);
	call(5, diff);
	call(6, diff_json);
	call(5, report);
	remove("p.html");
	return 0;
}
