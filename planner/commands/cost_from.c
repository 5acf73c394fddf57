/* planner cost MODEL --from FRAMEWORK FILE|ARGS: a framework's
 * configuration (read by planner/export.c) stated as search's options,
 * searched by `search` into a scratch checkpoint, and priced by `cost`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/alloc.h"
#include "graph/graph.h"
#include "graph/json.h"
#include "graph/output.h"
#include "planner/commands/cli.h"
#include "planner/commands/commands.h"
#include "planner/export.h"

int pl_cost_has_from(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "--from") || !strncmp(argv[i], "--from=", 7))
			return 1;
	}
	return 0;
}

static const char *const cost_from_help =
    "usage: planner cost MODEL --from FRAMEWORK FILE|ARGS [--cluster ...] [-o CKPT]\n"
    "                  [search options]\n"
    "\n"
    "Prices a framework's configuration: FILE (or ARGS, the configuration as one\n"
    "string) is read as " PL_EXPORT_NAMES_TEXT "\n"
    "writes it ('planner export --help': the versions), its degrees become search's\n"
    "fixed options (--tp --pp --cp --ep [--dp] --virtual-stages --micro-batch-size\n"
    "--zero --recompute --sequence-parallel), the plan under them is searched as\n"
    "'planner search MODEL <those options>' would, and priced as 'planner cost'\n"
    "prints it (one JSON line). stderr says what was read, the search options, and\n"
    "where the plan differs from the configuration (its global batch is MODEL's:\n"
    "another exits 2; its stage split is the search's over whole layers (--stage-cuts\n"
    "layers), but Megatron-LM's, NeMo's and Megatron-DeepSpeed's even split\n"
    "(--stage-cuts even) where the configuration states no first or last stage's\n"
    "layers). -o CKPT keeps the plan.\n"
    "Data parallel is what the devices leave where the configuration does not\n"
    "state it (Megatron). The pricing switches (--attention-kernel, --loss-kernel,\n"
    "--loss-parallel, --grad-dtype, --grad-reduce, --norm-kernel, --mask-kernel,\n"
    "--batch-norm, --grad-accumulation, --param-shard,\n"
    "--overlap-grad-reduce, --tp-comm-overlap, --overlap-param-gather) are what the\n"
    "configuration states, else the framework's defaults, as search --framework\n"
    "prices; an option given wins. Other options go\n"
    "to the search (and cost's to cost).\n"
    "\n"
    "examples:\n"
    "  planner cost gpt.json --from megatron megatron.args --cluster h100x8:2\n"
    "  planner cost gpt.json --from megatron \"--tensor-model-parallel-size 2 "
    "--micro-batch-size 1 --global-batch-size 512\" --cluster h100x8\n"
    "  planner cost gpt.json --from torchtitan job.toml --cluster h100x8 -o plan.ckpt\n";

/* cost --from: the arguments given, the search's and cost's made of them */
typedef struct from_args {
	const char *fwname, *src, *model, *keep;
	char **sv, **cv; /* search's and cost's arguments */
	int ns, nc;
	char scratch[4200]; /* the plan's scratch file ("": none) */
} from_args;

/* The arguments: --from's framework and FILE|ARGS, MODEL, -o, and the rest
 * for the search and (cost's options) cost. -1 when cost --from goes on,
 * else the exit status (--help, a bad option). */
static int from_split(int argc, char **argv, from_args *f)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(cost_from_help, stdout);
			return 0;
		}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int inl = 0;
		if (!strcmp(a, "--from") || !strncmp(a, "--from=", 7)) {
			f->fwname = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
			f->src = i + 1 < argc ? argv[++i] : NULL;
			continue;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			f->keep = i + 1 < argc ? argv[++i] : NULL;
			if (!f->keep)
				return pl_cli_usage("cost", "%s needs a file", a);
			continue;
		}
		if (!strncmp(a, "--output=", 9)) {
			f->keep = a + 9;
			continue;
		}
		if (!strcmp(a, "--strategy") || !strncmp(a, "--strategy=", 11) ||
		    !strcmp(a, "--json"))
			return pl_cli_usage("cost",
			                    "%s with --from: the plan is the configuration's", a);
		if (a[0] != '-' && !f->model) {
			f->model = a;
			continue;
		}
		/* cost's options go to cost and the search, the rest of search's
		 * to the search only (pl_cli_options says which take a value) */
		f->sv[f->ns++] = argv[i];
		if (pl_cli_takes_value(PL_CMD_COST, a, &inl)) {
			f->cv[f->nc++] = argv[i];
			if (!inl && i + 1 < argc) {
				f->sv[f->ns++] = argv[i + 1];
				f->cv[f->nc++] = argv[++i];
			}
		} else if (pl_cli_takes_value(PL_CMD_SEARCH, a, &inl) && !inl && i + 1 < argc) {
			f->sv[f->ns++] = argv[++i];
		}
	}
	return -1;
}

/* The search, its plan written to a scratch file (f->scratch), its table
 * not printed (its messages are): PL_OK with *rc its exit status */
static pl_status from_search(from_args *f, pl_cli_cmd search, int *rc, pl_err *err)
{
	const char *dir = getenv("TMPDIR");
	snprintf(f->scratch, sizeof f->scratch, "%s/planner-from-XXXXXX",
	         dir && *dir ? dir : "/tmp");
	int fd = mkstemp(f->scratch);
	if (fd < 0) {
		f->scratch[0] = 0;
		return pl_err_set(err, PL_EWRITE, "--from: cannot write a scratch file: %s",
		                  strerror(errno));
	}
	close(fd);
	f->sv[f->ns++] = "-o";
	f->sv[f->ns++] = f->scratch;
	f->sv[f->ns++] = (char *)f->model;
	f->sv[f->ns] = NULL;
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	if (saved < 0 || null < 0 || dup2(null, 1) < 0) {
		if (saved >= 0)
			close(saved);
		if (null >= 0)
			close(null);
		return pl_err_set(err, PL_EDEVICE, "--from: cannot redirect output");
	}
	close(null);
	optind = 0;
	*rc = search(f->ns, f->sv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return PL_OK;
}

int pl_cmd_cost_from(int argc, char **argv, pl_cli_cmd search, pl_cli_cmd cost)
{
	from_args f = {.sv = pl_calloc((size_t)argc + 96, sizeof *f.sv),
	               .cv = pl_calloc((size_t)argc + 48, sizeof *f.cv)};
	int rc = 2;
	char *plan_text = NULL;
	cJSON *ck = NULL;
	pl_err err = {{0}};
	pl_status st = PL_OK;
	pl_export_conf *c = NULL;
	if (!f.sv || !f.cv) {
		st = pl_err_set(&err, PL_ENOMEM, "out of memory");
		goto done;
	}
	f.sv[f.ns++] = "search";
	f.cv[f.nc++] = "cost";
	if ((rc = from_split(argc, argv, &f)) >= 0)
		goto done;
	rc = 2;
	int fw = pl_export_find(f.fwname);
	char nb[PL_EXPORT_NAMES_MAX];
	if (fw < 0) {
		rc =
		    pl_cli_usage("cost", "--from %s: expected %s and a FILE or ARGS",
		                 f.fwname ? f.fwname : "(missing)", pl_export_names(nb, sizeof nb));
		goto done;
	}
	if (!f.src || !f.model) {
		rc = pl_cli_usage("cost", "--from %s: expected MODEL and a FILE or ARGS%s",
		                  f.fwname, "");
		goto done;
	}
	if ((st = pl_export_conf_read(f.fwname, f.src, &c, &err)))
		goto done;
	pl_export_conf_args(c, argc, argv, f.sv, &f.ns, f.cv, &f.nc);
	fprintf(stderr, "planner: %s (%s) read from %s: planner search %s", pl_export_name(fw),
	        pl_export_version(fw), pl_export_conf_where(c), f.model);
	for (int i = 1; i < f.ns; i++)
		fprintf(stderr, " %s", f.sv[i]);
	fprintf(stderr, "\n");
	if ((st = from_search(&f, search, &rc, &err)) || rc)
		goto done;
	size_t cl;
	if ((st = pl_read_file(f.scratch, &plan_text, &cl, &err)) ||
	    (st = pl_json_parse(plan_text, cl, f.scratch, &ck, &err)) ||
	    (st = pl_export_conf_compare(c, ck, &err)))
		goto done;
	if (pl_export_conf_gemm_dtype(c)) { /* a cluster given to cost: the configuration's FP8 */
		f.cv[f.nc++] = "--gemm-dtype";
		f.cv[f.nc++] = (char *)pl_export_conf_gemm_dtype(c);
	}
	f.cv[f.nc++] = "--strategy";
	f.cv[f.nc++] = f.scratch;
	f.cv[f.nc++] = (char *)f.model;
	f.cv[f.nc] = NULL;
	optind = 0;
	rc = cost(f.nc, f.cv);
	/* the plan kept where it was priced (exit 0, or 3: it does not fit) */
	if (f.keep && (rc == 0 || rc == 3) && (st = pl_output_write(f.keep, plan_text, &err)))
		rc = 0;
done:
	if (f.scratch[0])
		unlink(f.scratch);
	if (st)
		rc = pl_cli_fail(st, &err);
	free(plan_text);
	pl_export_conf_free(c);
	cJSON_Delete(ck);
	free(f.sv);
	free(f.cv);
	return rc;
}
