/* The `planner` command (docs/user-guide.md): search, cost, strategies, explain.
 * Errors go to stderr as "planner: <file>: <where>: <what>"; exit status 0
 * success, 2 invalid input or usage, 3 no plan satisfies the constraints,
 * 4 system failure. Nothing is half-written: files are written atomically.
 * The commands themselves are planner/commands/, one file each. */

#include <stdio.h>
#include <string.h>

#include "planner/commands/commands.h"

static const char *const top_help =
    "usage: planner <command> [options]\n"
    "\n"
    "Automatic sharding-strategy planner for training on many GPUs.\n"
    "\n"
    "commands:\n"
    "  search MODEL       find the fastest plan that fits in memory; write a strategy checkpoint\n"
    "  cost MODEL         price a given plan (--strategy CKPT, or JSON lines on stdin with -)\n"
    "  strategies MODEL   list the candidate strategies of one op (--op NAME), as JSON\n"
    "  explain CKPT       per-op table of a checkpoint: strategy, time, memory, communication\n"
    "  check CKPT         the checkpoint's predicted step and memory against a training log\n"
    "                     (--log LOG: Megatron-LM, NeMo, torchtitan, DeepSpeed)\n"
    "  run MODEL          train a few steps under a plan on CPU ranks (--strategy CKPT)\n"
    "  calibrate          measure a backend, or read nccl-tests logs; write a cluster file\n"
    "  topology           find the GPUs, NVLinks and NICs with hwloc; write a cluster file\n"
    "  bench MODEL        run several search modes side by side (table, --csv, --plot)\n"
    "  report CKPT        a checkpoint as one self-contained HTML page (-o PAGE.html)\n"
    "  import MODEL.onnx  an ONNX model as a planner.model/1 file (-o MODEL.json)\n"
    "  export CKPT        a plan as Megatron-LM/NeMo arguments, torchtitan TOML, DeepSpeed\n"
    "                     JSON or MindFormers YAML (--to FRAMEWORK); cost --from reads them\n"
    "\n"
    "Run 'planner <command> --help' for a command's options.\n"
    "Exit status: 0 success, 2 invalid input or usage, 3 no plan satisfies the constraints,\n"
    "4 system failure.\n";

static int dispatch(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(top_help, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("planner " PL_VERSION);
		return 0;
	}
	const char *cmd = argv[1];
	argv++;
	argc--;
	if (!strcmp(cmd, "search"))
		return pl_cmd_search(argc, argv);
	if (!strcmp(cmd, "cost"))
		return pl_cmd_cost(argc, argv);
	if (!strcmp(cmd, "strategies"))
		return pl_cmd_strategies(argc, argv);
	if (!strcmp(cmd, "explain"))
		return pl_cmd_explain(argc, argv);
	if (!strcmp(cmd, "check"))
		return pl_cmd_check(argc, argv);
	if (!strcmp(cmd, "run"))
		return pl_cmd_run(argc, argv);
	if (!strcmp(cmd, "calibrate"))
		return pl_cmd_calibrate(argc, argv);
	if (!strcmp(cmd, "topology"))
		return pl_cmd_topology(argc, argv);
	if (!strcmp(cmd, "bench"))
		return pl_cmd_bench(argc, argv);
	if (!strcmp(cmd, "report"))
		return pl_cmd_report(argc, argv);
	if (!strcmp(cmd, "import"))
		return pl_cmd_import(argc, argv);
	if (!strcmp(cmd, "export"))
		return pl_cmd_export(argc, argv);
	fprintf(stderr, "planner: unknown command '%s'\n%s", cmd, top_help);
	return 2;
}

int main(int argc, char **argv)
{
	pl_alloc_init();
	signal(SIGXFSZ, SIG_IGN);    /* past ulimit -f: a write error (exit 4), not a death */
	pl_output_escape_controls(); /* names from files never drive the terminal */
	int rc = dispatch(argc, argv);
	/* an allocation that failed anywhere, however the code went on, makes
	 * the run's output suspect: say so and exit as out of memory */
	if (pl_alloc_null_count() && rc != pl_status_exit_code(PL_ENOMEM)) {
		fprintf(stderr, "planner: out of memory (what was printed may be incomplete)\n");
		rc = pl_status_exit_code(PL_ENOMEM);
	}
	return pl_output_close_stdout("planner", rc);
}
