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
	const char *out = NULL;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_REPORT, "report", help, NULL);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		if (ch == PL_CLI_STOP)
			return a.rc;
		if (ch == 'o')
			out = optarg;
	}
	if (argc - optind > 1)
		return pl_cli_usage("report", "expected one CKPT file, got more%s", "");
	const char *in = optind < argc ? argv[optind] : NULL;
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
