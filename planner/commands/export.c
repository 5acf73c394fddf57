/* planner export CKPT --to FRAMEWORK: a plan's whole-job configuration as
 * the framework's launch arguments or configuration file (the writer is
 * planner/export.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/graph.h"
#include "graph/output.h"
#include "planner/commands/cli.h"
#include "planner/commands/commands.h"
#include "planner/export.h"

static const char *const export_help =
    "usage: planner export CKPT --to FRAMEWORK [-o FILE] [--json]\n"
    "\n"
    "Writes a plan's whole-job configuration (data, tensor, context, expert and\n"
    "pipeline parallel degrees, the layers of each pipeline stage, virtual stages,\n"
    "micro-batch and global batch, ZeRO level, recompute, sequence parallelism,\n"
    "16-bit or not) as the framework reads it. FRAMEWORK, and the version whose\n"
    "published source every key was checked against:\n"
    "  megatron            Megatron-LM core_v0.15.0 pretrain_gpt.py arguments\n"
    "  nemo                Megatron-Bridge v0.6.0 (NeMo) ConfigContainer YAML overrides\n"
    "  torchtitan          torchtitan v0.2.2 job config TOML\n"
    "  deepspeed           DeepSpeed v0.19.5 JSON config (data parallel and ZeRO)\n"
    "  megatron-deepspeed  Megatron-DeepSpeed pretrain_gpt.py arguments (with a\n"
    "                      DeepSpeed config)\n"
    "  mindformers         MindFormers v1.7.0 parallel_config and recompute_config YAML\n"
    "The header comment names the source (repository, commit, file). The model's own\n"
    "keys (layers, hidden size, sequence length) stay the user's.\n"
    "\n"
    "A plan the framework cannot state exits 2 naming what and why, and writes\n"
    "nothing: ops cut otherwise than the uniform degrees, sequence parallelism on\n"
    "for some norms only, a pipeline stage that ends inside a transformer layer,\n"
    "an uneven split the framework has no key for, ZeRO levels it lacks.\n"
    "\n"
    "options:\n"
    "  --to FRAMEWORK     one of the above\n"
    "  -o, --output FILE  write it there (atomically); default: stdout\n"
    "  --json             print {\"framework\", \"version\", \"source\", \"keys\", \"text\"}\n"
    "  --fp16             a 16-bit plan as float16 (default: bfloat16; the checkpoint\n"
    "                     says 16-bit, not which)\n"
    "  -h, --help         this text\n"
    "\n"
    "'planner cost MODEL --from FRAMEWORK FILE|ARGS' reads these back.\n"
    "\n"
    "examples:\n"
    "  planner export plan.ckpt --to megatron -o megatron.args\n"
    "  planner export plan.ckpt --to torchtitan -o job.toml\n";

int pl_cmd_export(int argc, char **argv)
{
	const char *to = NULL, *outp = NULL;
	int json = 0, fp16 = 0;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_EXPORT, "export", export_help, NULL);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 't': to = optarg; break;
		case 'o': outp = optarg; break;
		case 'j': json = 1; break;
		case 'F': fp16 = 1; break;
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("export", "expected one CKPT file%s",
		                    optind < argc - 1 ? ", got more" : "");
	int fw = pl_export_find(to);
	char nb[PL_EXPORT_NAMES_MAX];
	if (fw < 0)
		return pl_cli_usage("export", "--to %s: expected %s", to ? to : "(missing)",
		                    pl_export_names(nb, sizeof nb));
	const char *ckpt = argv[optind];
	pl_err err = {{0}};
	char *text = NULL, *made = NULL;
	size_t len;
	pl_status st = pl_read_file(ckpt, &text, &len, &err);
	if (!st)
		st = pl_export_text(text, len, ckpt, pl_export_name(fw),
		                    (json ? PL_EXPORT_JSON : 0) | (fp16 ? PL_EXPORT_FP16 : 0),
		                    &made, &err);
	if (!st)
		st = pl_output_write(outp ? outp : "-", made, &err);
	if (!st && outp && !pl_output_is_stdout(outp))
		printf("wrote %s: %s (%s)\n", outp, pl_export_title(fw), pl_export_version(fw));
	free(made);
	free(text);
	return st ? pl_cli_fail(st, &err) : 0;
}
