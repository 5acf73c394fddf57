/* The whole-job plan against a Megatron-style manual grid, both priced by
 * the same cost model (benchmarks/bench_grid.sh runs it over the zoo).
 *
 * A grid point is what a practitioner would configure by hand: tensor
 * parallel tp in {1, 2, 4, 8} (inside a node), pipeline stages pp dividing
 * the layer count (layers split evenly, the embedding on the first stage and
 * the head on the last), data parallel dp = D / (tp pp), ZeRO-1 on or off,
 * full recompute on or off, and micro-batches of 1, 2, 4 or 8 sequences per
 * data-parallel rank. Its per-op layout is Megatron's: q, k, v, fc1, gate, up
 * and the LM head column-parallel, proj, fc2 and down row-parallel (MoE
 * experts also split over the data-parallel ranks, ep = gcd(experts, dp)), the
 * embedding vocab-parallel, every activation's batch split dp ways; the ops
 * in between follow by sharding propagation from those annotations.
 *
 * usage: planner-bench-grid MODEL.json --cluster PRESET [--memory-limit B]
 *        [--time-limit S]
 * Prints one JSON line: the best grid point that fits, and planner's
 * whole-job plan (planner search --job) with its search time; where that
 * plan has no pipeline stages, ZeRO or recompute (it may be the 2 %
 * preference's choice), also the fastest plan (--job --fastest). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/pipeline.h"
#include "graph/parse.h"
#include "graph/model.h"
#include "planner/plan.h"
#include "search/job.h"
#include "search/ve.h"
#include "graph/clock.h"

typedef struct point {
	int64_t tp, pp, dp, m;
	int zero, recompute;
	double step_s, mem_bytes;
} point;

static int suffix_is(const char *name, const char *const *set)
{
	const char *dot = strrchr(name, '.');
	const char *last = dot ? dot + 1 : name;
	for (; *set; set++)
		if (!strcmp(last, *set))
			return 1;
	return 0;
}

static cJSON *tuple(int rank, int64_t first, int64_t last)
{
	cJSON *t = cJSON_CreateArray();
	for (int d = 0; d < rank; d++)
		cJSON_AddItemToArray(t, cJSON_CreateNumber(d == 0          ? (double)first
		                                           : d == rank - 1 ? (double)last
		                                                           : 1));
	return t;
}

/* Megatron's annotations for tp x dp on g, as a partial checkpoint. */
static cJSON *megatron_layout(const pl_graph *g, int64_t tp, int64_t dp)
{
	static const char *const column[] = {"q", "k", "v", "fc1", "gate", "up", "logits", NULL};
	static const char *const row[] = {"proj", "fc2", "down", NULL};
	cJSON *root = cJSON_CreateObject(),
	      *items = cJSON_AddObjectToObject(root, "parallel_strategy_item");
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		const pl_tensor *a = &g->tensors[op->in[0]];
		const pl_tensor *b = op->ninputs > 1 ? &g->tensors[op->in[1]] : NULL;
		cJSON *s = NULL;
		if (op->type == PL_OP_MATMUL && b && b->role == PL_ROLE_PARAM && b->rank == 2) {
			int col = suffix_is(op->name, column) || !strcmp(op->name, "logits");
			int rw = suffix_is(op->name, row);
			if (!col && !rw)
				continue;
			if (a->rank < 2)
				continue;
			/* A [batch, ..., k]: batch by dp, k by tp when row-parallel */
			s = cJSON_CreateArray();
			cJSON_AddItemToArray(s, tuple(a->rank, dp, rw ? tp : 1));
			cJSON_AddItemToArray(s, rw ? tuple(2, tp, 1) : tuple(2, 1, tp));
		} else if (op->type == PL_OP_MATMUL && b && b->role == PL_ROLE_PARAM &&
		           b->rank == 3 && a->rank == 3 &&
		           (suffix_is(op->name, column) || suffix_is(op->name, row))) {
			/* MoE experts [E, slots, k] x [E, k, n] (DeepSpeed/Megatron MoE):
			 * experts split over the data-parallel ranks (ep = gcd(E, dp)),
			 * the slots over the rest of dp, k or n by tp as for dense */
			int rw = suffix_is(op->name, row);
			int64_t ep = dp, e = b->shape[0];
			while (e % ep || dp % ep)
				ep--;
			s = cJSON_CreateArray();
			cJSON *ta = cJSON_CreateArray(), *tb = cJSON_CreateArray();
			double va[3] = {(double)ep, (double)(dp / ep), (double)(rw ? tp : 1)};
			double vb[3] = {(double)ep, (double)(rw ? tp : 1), (double)(rw ? 1 : tp)};
			for (int d = 0; d < 3; d++) {
				cJSON_AddItemToArray(ta, cJSON_CreateNumber(va[d]));
				cJSON_AddItemToArray(tb, cJSON_CreateNumber(vb[d]));
			}
			cJSON_AddItemToArray(s, ta);
			cJSON_AddItemToArray(s, tb);
		} else if (op->type == PL_OP_GATHER && a->role == PL_ROLE_PARAM && b) {
			s = cJSON_CreateArray();
			cJSON_AddItemToArray(s, tuple(a->rank, tp, 1));
			cJSON_AddItemToArray(s, tuple(b->rank, dp, 1));
		}
		if (s) {
			cJSON *it = cJSON_AddObjectToObject(items, op->name);
			cJSON_AddItemToObject(it, "parallel_strategy", s);
		}
	}
	return root;
}

/* Layer of an op from its "l<k>." prefix; -1 before the first, INT_MAX after. */
static int layer_of(const char *name)
{
	if (name[0] == 'l' && isdigit((unsigned char)name[1])) {
		char *end;
		long k = strtol(name + 1, &end, 10);
		if (*end == '.')
			return (int)k;
	}
	return -1;
}

static int count_layers(const pl_graph *g)
{
	int n = 0;
	for (int o = 0; o < g->nops; o++) {
		int k = layer_of(g->ops[o].name);
		if (k + 1 > n)
			n = k + 1;
	}
	return n;
}

/* Even split of layers into pp stages; ops outside the layers go with the
 * nearest: before the first layer stage 0, after the last layer stage pp-1. */
static void even_stages(const pl_graph *g, int layers, int64_t pp, int *stage)
{
	int seen_layer = 0;
	for (int o = 0; o < g->nops; o++) {
		int k = layer_of(g->ops[o].name);
		if (k >= 0) {
			seen_layer = 1;
			stage[o] = (int)((int64_t)k * pp / layers);
		} else {
			stage[o] = seen_layer ? (int)pp - 1 : 0;
		}
	}
}

/* Prices every grid point that fits; best into *best. Returns points tried. */
static int grid(const pl_graph *g, const pl_cluster *cl, double limit, point *best, int *feasible,
                int *invalid)
{
	int64_t D = pl_cluster_devices_total(cl), B = pl_graph_batch(g);
	int layers = count_layers(g), tried = 0;
	int *stage = calloc((size_t)g->nops + 1, sizeof *stage);
	uint8_t *rcflags = calloc((size_t)g->nops + 1, 1), *none = calloc((size_t)g->nops + 1, 1);
	*best = (point){0};
	*feasible = *invalid = 0;
	for (int64_t tp = 1; tp <= 8 && tp <= cl->devices_per_node; tp *= 2)
		for (int64_t pp = 1; pp <= layers; pp++) {
			if (layers % pp || D % (tp * pp))
				continue;
			int64_t dp = D / (tp * pp);
			pl_cluster mesh;
			if (pl_stage_mesh(cl, D / pp, &mesh))
				continue;
			for (int64_t mbs = 1; mbs <= 8; mbs *= 2) {
				if (B % (dp * mbs))
					continue;
				int64_t m = B / (dp * mbs);
				pl_graph *gm = NULL;
				pl_err err;
				if (pl_graph_microbatch(g, m, &gm, &err)) {
					pl_graph_free(gm);
					continue;
				}
				cJSON *lay = megatron_layout(gm, tp, dp);
				pl_problem *p[2] = {NULL, NULL};
				pl_search_result r = {0};
				int64_t **splits = pl_splits_alloc(gm);
				pl_job_recompute_flags(gm, PL_RECOMPUTE_FULL, rcflags);
				even_stages(gm, layers, pp, stage);
				pl_job job = {.micro_batches = m, .stages = pp, .recompute = none};
				pl_search_opts so = {0};
				tried += 4;
				if (pl_plan_annotate(gm, lay, "grid", &err) ||
				    pl_problem_new_job(&p[0], gm, &mesh, &job, &err) ||
				    pl_search_propagate(p[0], &so, &r, &err)) {
					*invalid += 4;
					goto next;
				}
				job.recompute = rcflags;
				if (pl_problem_new_job(&p[1], gm, &mesh, &job, &err)) {
					*invalid += 4;
					goto next;
				}
				for (int k = 0; k < gm->nops; k++)
					memcpy(splits[k], pl_search_result_split(p[0], &r, k),
					       sizeof(int64_t) * PL_MAX_LOOPS);
				for (int rc = 0; rc < 2; rc++)
					for (int zero = 0; zero < 2; zero++) {
						pl_problem_set_zero(p[rc], zero);
						pl_jobcost jc;
						if (pl_job_price(p[rc], splits, stage,
						                 cl->devices_per_node, NULL, &jc))
							continue;
						if (limit > 0 && jc.mem_bytes > limit)
							continue;
						(*feasible)++;
						if (best->step_s == 0 || jc.step_s < best->step_s)
							*best = (point){tp,        pp,          dp,
							                m,         zero,        rc,
							                jc.step_s, jc.mem_bytes};
					}
			next:
				pl_search_result_free(&r);
				pl_problem_free(p[0]);
				pl_problem_free(p[1]);
				pl_splits_free(gm, splits);
				cJSON_Delete(lay);
				pl_graph_free(gm);
			}
		}
	free(stage);
	free(rcflags);
	free(none);
	return tried;
}

int main(int argc, char **argv)
{
	const char *model = NULL, *cluster = NULL;
	double limit = -1;
	double tlimit = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
			cluster = argv[++i];
		else if (!strcmp(argv[i], "--time-limit") && i + 1 < argc)
			tlimit = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--memory-limit") && i + 1 < argc) {
			if (pl_parse_bytes(argv[++i], &limit)) {
				fprintf(stderr,
				        "planner-bench-grid: --memory-limit %s: expected bytes\n",
				        argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts("usage: planner-bench-grid MODEL.json --cluster PRESET "
			     "[--memory-limit B] "
			     "[--time-limit S]");
			return 0;
		} else if (!model)
			model = argv[i];
		else {
			fprintf(stderr, "planner-bench-grid: unexpected '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!model || !cluster) {
		fprintf(stderr, "usage: planner-bench-grid MODEL.json --cluster PRESET\n");
		return 2;
	}
	pl_err err;
	pl_graph *g = NULL;
	pl_cluster cl;
	if (pl_graph_load_file(&g, model, &err) || pl_cluster_resolve(&cl, cluster, &err)) {
		fprintf(stderr, "planner-bench-grid: %s\n", err.msg);
		return 2;
	}
	/* the device's limit (--memory-limit as planner search takes it); a
	 * plan's tensors get it less the runtime reserve, the grid's points and
	 * the search's alike (pl_plan_search takes the reserve off itself) */
	if (limit < 0)
		limit = cl.memory_bytes;
	point best = {0};
	int feasible, invalid;
	double t0 = pl_now();
	int tried = grid(g, &cl, limit - cl.memory_reserve, &best, &feasible, &invalid);
	double grid_s = pl_now() - t0;

	printf("{\"model\": \"%s\", \"cluster\": \"%s\", \"devices\": %lld, "
	       "\"grid\": {\"points\": %d, \"feasible\": %d, \"invalid\": %d, \"seconds\": %.2f",
	       g->name, cl.name, (long long)pl_cluster_devices_total(&cl), tried, feasible, invalid,
	       grid_s);
	if (best.step_s > 0)
		printf(", \"best\": {\"tp\": %lld, \"pp\": %lld, \"dp\": %lld, \"micro_batches\": "
		       "%lld, \"zero\": %d, \"recompute\": %d, \"step_seconds\": %.6g, "
		       "\"peak_memory_bytes\": %.6g}",
		       (long long)best.tp, (long long)best.pp, (long long)best.dp,
		       (long long)best.m, best.zero, best.recompute, best.step_s, best.mem_bytes);
	printf("}");
	/* planner's plan; with its 2 % preference for plans without pipeline
	 * stages, ZeRO or recompute, and (when that preference decided) without */
	pl_status st = PL_OK;
	for (int fastest = 0; fastest < 2; fastest++) {
		pl_plan_opts po = {.mode = "dp",
		                   .so = {.memory_limit = limit, .time_limit_s = tlimit},
		                   .job = 1,
		                   .jo = PL_JOB_OPTS_AUTO};
		po.jo.fastest = fastest;
		cJSON *ck = NULL;
		double secs = 0;
		t0 = pl_now();
		st = pl_plan_search(g, &cl, &po, &ck, &secs, &err);
		double wall = pl_now() - t0;
		printf(", \"%s\": ", fastest ? "planner_fastest" : "planner");
		if (st) {
			printf("{\"error\": \"%s\", \"wall_seconds\": %.3f}", err.msg, wall);
			break;
		}
		const cJSON *pipe = cJSON_GetObjectItem(ck, "pipeline"),
		            *cost = cJSON_GetObjectItem(ck, "cost"),
		            *groups = cJSON_GetObjectItem(ck, "groups");
		printf(
		    "{\"tp\": %d, \"pp\": %g, \"dp\": %d, \"micro_batches\": %g, \"zero\": %g, "
		    "\"recompute\": \"%s\", \"step_seconds\": %.6g, \"peak_memory_bytes\": %.6g, "
		    "\"search_seconds\": %.3f, \"wall_seconds\": %.3f}",
		    cJSON_GetArraySize(cJSON_GetArrayItem(cJSON_GetObjectItem(groups, "tp"), 0)),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(pipe, "stages")),
		    cJSON_GetArraySize(cJSON_GetArrayItem(cJSON_GetObjectItem(groups, "dp"), 0)),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(pipe, "micro_batches")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(ck, "optimizer_shard")),
		    cJSON_GetStringValue(cJSON_GetObjectItem(ck, "recompute")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "step_seconds")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "peak_memory_bytes")), secs,
		    wall);
		/* a plain plan may be the preference's choice */
		int plain =
		    cJSON_GetNumberValue(cJSON_GetObjectItem(pipe, "stages")) == 1 &&
		    cJSON_GetNumberValue(cJSON_GetObjectItem(ck, "optimizer_shard")) == 0 &&
		    !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ck, "recompute")), "none");
		cJSON_Delete(ck);
		if (!plain)
			break; /* the fastest plan already */
	}
	printf("}\n");
	pl_graph_free(g);
	return st ? pl_status_exit_code(st) : 0;
}
