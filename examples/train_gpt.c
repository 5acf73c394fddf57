/* Training a small GPT-style model in auto-parallel mode with the planner
 * API (planner/planner.h), and the same model on one device beside it.
 *
 * The model is built in code: token and position embeddings, `layers`
 * pre-norm transformer blocks (attention with `heads` heads, a GELU MLP),
 * a final norm, the LM head and softmax cross-entropy. The context asks for
 * `devices` CPU ranks; the planner picks each op's sharding (data, tensor
 * and sequence splits, as the cost model finds fastest on that many H100s)
 * and the executor trains under the plan. The same steps on one device give
 * the reference losses: a plan changes where the arithmetic happens, not the
 * result, so the two columns agree to float rounding.
 *
 *     planner-train-gpt --devices 4 --steps 10
 *     planner-train-gpt --devices 8 --mode rec --save plan.json
 *     planner-train-gpt --check      (exit 1 if a loss differs by > 1e-4) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"

typedef struct cfg {
	int64_t batch, seq, hidden, heads, layers, vocab;
} cfg;

/* Calls an API function; on failure keeps its status in `err` and leaves. */
#define TRY(call)                                                                                  \
	do {                                                                                       \
		if ((err = (call)) != 0)                                                           \
			goto fail;                                                                 \
	} while (0)

static int tensor(planner_graph *g, const char *role, const char *dtype, const char *name, int rank,
                  int64_t d0, int64_t d1)
{
	int64_t shape[2] = {d0, d1};
	return planner_graph_tensor(g, name, role, dtype, rank, shape);
}

/* One op with up to three inputs, named "<prefix>.<name>", output "<op>.out". */
static int op(planner_graph *g, const char *type, const char *prefix, const char *name,
              const char *a, const char *b, const char *c, const char *attrs)
{
	char opname[64], out[80];
	snprintf(opname, sizeof opname, "%s%s%s", prefix, *prefix ? "." : "", name);
	snprintf(out, sizeof out, "%s.out", opname);
	const char *in[3] = {a, b, c};
	return planner_graph_op(g, type, opname, in, c ? 3 : b ? 2 : 1, out, attrs);
}

static planner_graph *build_gpt(planner_ctx *ctx, const cfg *c)
{
	planner_graph *g = planner_graph_new(ctx, "gpt-example", "float32");
	char n[16][64], attrs[128];
	int err;
	if (!g)
		return NULL;
	int64_t B = c->batch, S = c->seq, H = c->hidden, A = c->heads, F = 4 * H;
	TRY(tensor(g, "input", "int32", "tokens", 2, B, S));
	TRY(tensor(g, "input", "int32", "labels", 2, B, S));
	TRY(tensor(g, "param", NULL, "wte", 2, c->vocab, H));
	TRY(tensor(g, "param", NULL, "wpe", 2, S, H));
	TRY(op(g, "Gather", "", "embed", "wte", "tokens", NULL, "{\"axis\": 0}"));
	TRY(op(g, "Add", "", "pos", "embed.out", "wpe", NULL, NULL));
	const char *x = "pos.out";
	char xbuf[64];
	for (int l = 0; l < c->layers; l++) {
		char p[16];
		snprintf(p, sizeof p, "l%d", l);
		/* the block's params, n[0..11]: shape [d0] (d1 = 0) or [d0, d1] */
		const struct {
			const char *name;
			int64_t d0, d1;
		} params[12] = {{"ln1.g", H, 0}, {"ln1.b", H, 0}, {"wq", H, H},    {"wk", H, H},
		                {"wv", H, H},    {"wo", H, H},    {"ln2.g", H, 0}, {"ln2.b", H, 0},
		                {"w1", H, F},    {"b1", F, 0},    {"w2", F, H},    {"b2", H, 0}};
		for (int k = 0; k < 12; k++) {
			snprintf(n[k], sizeof n[k], "%s.%s", p, params[k].name);
			TRY(tensor(g, "param", NULL, n[k], params[k].d1 ? 2 : 1, params[k].d0,
			           params[k].d1));
		}
#define OUT(name) (snprintf(n[15], sizeof n[15], "%s." name ".out", p), n[15])
		char ln1[64], q[64], k[64], v[64], res1[64];
		const char *ln = "{\"axis\": -1, \"epsilon\": 1e-5}";
		TRY(op(g, "LayerNormalization", p, "ln1", x, n[0], n[1], ln));
		snprintf(ln1, sizeof ln1, "%s", OUT("ln1"));
		TRY(op(g, "MatMul", p, "q", ln1, n[2], NULL, NULL));
		TRY(op(g, "MatMul", p, "k", ln1, n[3], NULL, NULL));
		TRY(op(g, "MatMul", p, "v", ln1, n[4], NULL, NULL));
		/* heads: [B, S, H] -> [B, A, S, H/A] (K transposed for the scores) */
		snprintf(attrs, sizeof attrs, "{\"shape\": [%lld, %lld, %lld, %lld]}", (long long)B,
		         (long long)S, (long long)A, (long long)(H / A));
		TRY(op(g, "Reshape", p, "q4", OUT("q"), NULL, NULL, attrs));
		TRY(op(g, "Reshape", p, "k4", OUT("k"), NULL, NULL, attrs));
		TRY(op(g, "Reshape", p, "v4", OUT("v"), NULL, NULL, attrs));
		const char *bshd = "{\"perm\": [0, 2, 1, 3]}";
		TRY(op(g, "Transpose", p, "qt", OUT("q4"), NULL, NULL, bshd));
		TRY(op(g, "Transpose", p, "kt", OUT("k4"), NULL, NULL, "{\"perm\": [0, 2, 3, 1]}"));
		TRY(op(g, "Transpose", p, "vt", OUT("v4"), NULL, NULL, bshd));
		snprintf(q, sizeof q, "%s", OUT("qt"));
		snprintf(k, sizeof k, "%s", OUT("kt"));
		snprintf(v, sizeof v, "%s", OUT("vt"));
		TRY(op(g, "MatMul", p, "scores", q, k, NULL, NULL));
		TRY(op(g, "Softmax", p, "probs", OUT("scores"), NULL, NULL, "{\"axis\": -1}"));
		TRY(op(g, "MatMul", p, "ctx", OUT("probs"), v, NULL, NULL));
		TRY(op(g, "Transpose", p, "ctxt", OUT("ctx"), NULL, NULL, bshd));
		snprintf(attrs, sizeof attrs, "{\"shape\": [%lld, %lld, %lld]}", (long long)B,
		         (long long)S, (long long)H);
		TRY(op(g, "Reshape", p, "ctx2", OUT("ctxt"), NULL, NULL, attrs));
		TRY(op(g, "MatMul", p, "proj", OUT("ctx2"), n[5], NULL, NULL));
		TRY(op(g, "Add", p, "res1", x, OUT("proj"), NULL, NULL));
		snprintf(res1, sizeof res1, "%s", OUT("res1"));
		TRY(op(g, "LayerNormalization", p, "ln2", res1, n[6], n[7], ln));
		TRY(op(g, "MatMul", p, "fc1", OUT("ln2"), n[8], NULL, NULL));
		TRY(op(g, "Add", p, "bias1", OUT("fc1"), n[9], NULL, NULL));
		TRY(op(g, "Gelu", p, "gelu", OUT("bias1"), NULL, NULL, NULL));
		TRY(op(g, "MatMul", p, "fc2", OUT("gelu"), n[10], NULL, NULL));
		TRY(op(g, "Add", p, "bias2", OUT("fc2"), n[11], NULL, NULL));
		TRY(op(g, "Add", p, "res2", res1, OUT("bias2"), NULL, NULL));
		snprintf(xbuf, sizeof xbuf, "%s", OUT("res2"));
		x = xbuf;
#undef OUT
	}
	TRY(tensor(g, "param", NULL, "lnf.g", 1, H, 0));
	TRY(tensor(g, "param", NULL, "lnf.b", 1, H, 0));
	TRY(tensor(g, "param", NULL, "lm_head", 2, H, c->vocab));
	TRY(op(g, "LayerNormalization", "", "lnf", x, "lnf.g", "lnf.b",
	       "{\"axis\": -1, \"epsilon\": 1e-5}"));
	TRY(op(g, "MatMul", "", "logits", "lnf.out", "lm_head", NULL, NULL));
	TRY(op(g, "SoftmaxCrossEntropy", "", "loss", "logits.out", "labels", NULL, NULL));
	TRY(planner_graph_output(g, "loss.out"));
	return g;
fail:
	planner_graph_free(g);
	return NULL;
}

/* Plans g on the context's devices and trains it; losses[steps]. */
static int train(planner_ctx *ctx, planner_graph *g, int steps, double *losses, int print)
{
	planner_plan *plan = NULL;
	planner_trainer *tr = NULL;
	int err;
	TRY(planner_plan_new(ctx, g, &plan));
	if (print) {
		printf("plan on %s devices: dp %lld x tp %lld, predicted step %.3g s, %.3g MiB a "
		       "device\n",
		       planner_get_auto_parallel_context(ctx, "device_num"),
		       (long long)planner_plan_degree(plan, "dp"),
		       (long long)planner_plan_degree(plan, "tp"), planner_plan_step_seconds(plan),
		       planner_plan_memory_bytes(plan) / 1048576.0);
		int64_t ranks[64];
		int64_t n = planner_plan_group(plan, "tp", -1, ranks, 64);
		printf("rank %s's tp group:",
		       planner_get_auto_parallel_context(ctx, "global_rank"));
		for (int64_t i = 0; i < n && i < 64; i++)
			printf(" %lld", (long long)ranks[i]);
		printf("\n");
	}
	TRY(planner_trainer_new(ctx, g, plan, &tr));
	for (int s = 0; s < steps; s++)
		TRY(planner_train_step(tr, &losses[s]));
fail:
	planner_trainer_free(tr);
	planner_plan_free(plan);
	return err;
}

static const char *const help =
    "usage: planner-train-gpt [options]\n"
    "\n"
    "Builds a small GPT-style model with the planner API, plans it for N devices\n"
    "(auto-parallel), trains it on N CPU ranks and on one device, and prints both losses.\n"
    "\n"
    "options:\n"
    "  --devices N        ranks of the auto-parallel run (default 4)\n"
    "  --steps N          training steps (default 10)\n"
    "  --layers N         transformer blocks (default 2)\n"
    "  --mode MODE        search_mode: dp, rec, ilp, propagate, auto (default dp)\n"
    "  --memory-limit B   memory_limit per device, e.g. 20K (default: the device's)\n"
    "  --memory-reserve B memory_reserve: what the runtime keeps of it, e.g. 0\n"
    "  --save FILE        strategy_ckpt_save_file: write the plan\n"
    "  --check            exit 1 if a loss differs from one device's by more than 1e-4\n"
    "                     (relative)\n"
    "  -h, --help         this text\n";

int main(int argc, char **argv)
{
	cfg c = {.batch = 8, .seq = 16, .hidden = 32, .heads = 4, .layers = 2, .vocab = 64};
	int steps = 10, check = 0;
	const char *devices = "4", *mode = "dp", *limit = NULL, *reserve = NULL, *save = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(help, stdout);
			return 0;
		} else if (!strcmp(a, "--check")) {
			check = 1;
		} else if (v && !strcmp(a, "--devices")) {
			devices = v, i++;
		} else if (v && !strcmp(a, "--steps")) {
			steps = atoi(v), i++;
		} else if (v && !strcmp(a, "--layers")) {
			c.layers = atoi(v), i++;
		} else if (v && !strcmp(a, "--mode")) {
			mode = v, i++;
		} else if (v && !strcmp(a, "--memory-limit")) {
			limit = v, i++;
		} else if (v && !strcmp(a, "--memory-reserve")) {
			reserve = v, i++;
		} else if (v && !strcmp(a, "--save")) {
			save = v, i++;
		} else {
			fprintf(stderr, "planner-train-gpt: unknown or incomplete option '%s'\n%s",
			        a, help);
			return 2;
		}
	}
	if (steps < 1 || steps > 100000 || c.layers < 1 || c.layers > 64) {
		fprintf(stderr, "planner-train-gpt: --steps and --layers must be positive\n");
		return 2;
	}
	double *par = calloc((size_t)steps, sizeof *par), *one = calloc((size_t)steps, sizeof *one);
	planner_ctx *ctx = planner_ctx_new();
	planner_graph *g = NULL;
	int rc = 4, err = 2;
	if (!par || !one || !ctx)
		goto done;
	/* the auto-parallel job */
	TRY(planner_set_auto_parallel_context(ctx, "device_num", devices));
	TRY(planner_set_auto_parallel_context(ctx, "search_mode", mode));
	if (limit)
		TRY(planner_set_auto_parallel_context(ctx, "memory_limit", limit));
	if (reserve)
		TRY(planner_set_auto_parallel_context(ctx, "memory_reserve", reserve));
	if (save)
		TRY(planner_set_auto_parallel_context(ctx, "strategy_ckpt_save_file", save));
	TRY(planner_set_auto_parallel_context(ctx, "optimizer", "adam"));
	TRY(planner_set_auto_parallel_context(ctx, "learning_rate", "1e-2"));
	if (!(g = build_gpt(ctx, &c)))
		goto fail;
	TRY(train(ctx, g, steps, par, 1));
	/* the same model and data on one device */
	planner_reset_auto_parallel_context(ctx);
	TRY(planner_set_auto_parallel_context(ctx, "device_num", "1"));
	TRY(planner_set_auto_parallel_context(ctx, "optimizer", "adam"));
	TRY(planner_set_auto_parallel_context(ctx, "learning_rate", "1e-2"));
	TRY(train(ctx, g, steps, one, 0));
	double worst = 0;
	printf("step  loss (%s devices)  loss (1 device)\n", devices);
	for (int s = 0; s < steps; s++) {
		double rel = fabs(par[s] - one[s]) / fmax(fabs(one[s]), 1e-6);
		worst = fmax(worst, rel);
		printf("%4d  %18.9f  %15.9f\n", s + 1, par[s], one[s]);
	}
	printf("largest relative difference %.3g; loss %.6f -> %.6f\n", worst, one[0],
	       one[steps - 1]);
	rc = check && !(worst <= 1e-4) ? 1 : 0;
	if (rc)
		fprintf(stderr, "planner-train-gpt: the losses differ by %.3g (relative)\n", worst);
	goto done;
fail:
	fprintf(stderr, "planner-train-gpt: %s\n", planner_errmsg(ctx));
	rc = err;
done:
	planner_graph_free(g);
	planner_ctx_free(ctx);
	free(par);
	free(one);
	return rc;
}
