/* planner report: the HTML report of a checkpoint. */
#include "planner/commands/commands.h"

int pl_cmd_report(int argc, char **argv)
{
	static const char *const help =
	    "usage: planner report CKPT -o PAGE.html\n\n"
	    "Writes a strategy checkpoint as one self-contained HTML page (inline SVG and\n"
	    "CSS; no script, nothing fetched, so it opens offline and can be mailed): the\n"
	    "step and where it goes, the device mesh coloured by each kind of group over\n"
	    "the nodes, the pipeline schedule (1F1B per stage: forward, backward, bubble,\n"
	    "optimizer), the peak device's memory by category against its capacity and\n"
	    "reserve and every stage's by the same categories, the groups' link classes and\n"
	    "the communication by collective and link class, and the strategies by part of\n"
	    "the model and of the dearest ops. Every number is the checkpoint's.\n\n"
	    "options:\n"
	    "  -o, --output PAGE.html  where to write the page (atomically)\n"
	    "  -h, --help              this text\n\n"
	    "example:\n"
	    "  planner search gpt3-13b.json --cluster h100x8:2 --job -o plan.json\n"
	    "  planner report plan.json -o plan.html\n";
	const char *out = NULL, *in = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(help, stdout);
			return 0;
		}
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			out = argv[++i];
		else if (!strncmp(argv[i], "--output=", 9))
			out = argv[i] + 9;
		else if (argv[i][0] == '-' && argv[i][1])
			return pl_cli_usage("report", "unknown or incomplete option '%s'", argv[i]);
		else if (in)
			return pl_cli_usage("report", "expected one CKPT file, got more%s", "");
		else
			in = argv[i];
	}
	if (!in)
		return pl_cli_usage("report", "expected one CKPT file%s", "");
	if (!out)
		return pl_cli_usage("report", "-o PAGE.html: where to write the page%s", "");
	pl_err err = {{0}};
	cJSON *ck = NULL;
	char *page = NULL;
	pl_status st = pl_cli_read_ckpt(in, &ck, &err);
	if (!st)
		st = pl_report_html(ck, in, &page, &err);
	if (!st)
		st = pl_output_write(out, page, &err);
	if (!st)
		fprintf(pl_output_is_stdout(out) ? stderr : stdout, "wrote %s\n", out);
	free(page);
	cJSON_Delete(ck);
	return st ? pl_cli_fail(st, &err) : 0;
}
