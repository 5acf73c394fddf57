/* Whole-job plans on the command line: `planner search` with any of
 * --pipeline-stages, --micro-batches, --zero, --recompute or --job, and the
 * pricing of such a plan by `planner cost`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/pipeline.h"
#include "planner/checkpoint.h"
#include "planner/cli.h"
#include "planner/ops.h"
#include "search/job.h"

pl_status pl_cli_job_checkpoint(const pl_job_plan *jp, const pl_cluster *cl, const char *mode,
                                double limit, cJSON **out, pl_err *err)
{
	const pl_graph *g = jp->g;
	const pl_problem *p = jp->p;
	int64_t pp = p->job.stages;
	int64_t **sp = calloc((size_t)g->nops, sizeof *sp);
	double *cs = calloc((size_t)g->nops + 1, sizeof *cs),
	       *cm = calloc((size_t)g->nops + 1, sizeof *cm),
	       *mb = calloc((size_t)g->nops + 1, sizeof *mb), *ts = calloc((size_t)pp, sizeof *ts);
	pl_status st = PL_OK;
	if (!sp || !cs || !cm || !mb || !ts) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	for (int o = 0; o < g->nops; o++) {
		sp[o] = (int64_t *)pl_search_result_split(p, &jp->r, o);
		pl_stagecost acc = {0};
		double act = 0;
		pl_job_op_cost(p, o, sp[o], &acc, &act);
		double m = (double)p->job.micro_batches;
		cs[o] = m * acc.mb_compute_s + acc.step_compute_s;
		cm[o] = m * acc.mb_comm_s + acc.step_comm_s;
		mb[o] = acc.mem_bytes +
		        (double)pl_job_inflight(pp, p->job.micro_batches, jp->stage[o]) * act;
	}
	for (int64_t s = 0; s < pp; s++)
		ts[s] = jp->stages[s].mb_compute_s + jp->stages[s].mb_comm_s;
	pl_ckpt_info info = {.cluster_name = cl->name,
	                     .devices = pl_cluster_devices_total(cl),
	                     .nodes = cl->nodes,
	                     .devices_per_node = cl->devices_per_node,
	                     .mode = mode,
	                     .seconds = jp->seconds,
	                     .optimal = jp->optimal,
	                     .why = jp->why,
	                     .repeated_layers = jp->r.repeated_layers,
	                     .memory_limit = limit,
	                     .step_s = jp->cost.step_s,
	                     .compute_s = jp->cost.compute_s,
	                     .comm_s = jp->cost.comm_s,
	                     .mem_bytes = jp->cost.mem_bytes,
	                     .op_compute_s = cs,
	                     .op_comm_s = cm,
	                     .op_mem_bytes = mb,
	                     .stages = pp,
	                     .micro_batches = p->job.micro_batches,
	                     .mesh_devices = p->devices,
	                     .zero = p->job.zero,
	                     .op_stage = jp->stage,
	                     .op_recompute = p->job.recompute,
	                     .bubble_s = jp->cost.bubble_s,
	                     .stage_s = ts};
	*out = pl_ckpt_build(g, sp, &info);
	if (!*out)
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
done:
	free(sp);
	free(cs);
	free(cm);
	free(mb);
	free(ts);
	return st;
}

pl_status pl_cli_cost_job(const pl_graph *g, const cJSON *plan, const char *where,
                          const pl_cluster *cl, int64_t *const *splits, pl_jobcost *out,
                          int *is_job, pl_err *err)
{
	int64_t pp, m;
	int zero;
	int *stage = calloc((size_t)g->nops + 1, sizeof *stage);
	uint8_t *rc = calloc((size_t)g->nops + 1, 1);
	pl_graph *gm = NULL;
	pl_problem *p = NULL;
	pl_status st = PL_OK;
	if (!stage || !rc) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	if ((st = pl_ckpt_parse_job(g, plan, where, &pp, &m, &zero, stage, rc, is_job, err)) ||
	    !*is_job)
		goto done;
	int64_t D = pl_cluster_devices_total(cl);
	pl_cluster mesh;
	if (D % pp || pl_stage_mesh(cl, D / pp, &mesh)) {
		st = pl_err_set(err, PL_EINVAL,
		                "%s: pipeline.stages %lld: %lld devices do not split into stages "
		                "that tile the nodes",
		                where, (long long)pp, (long long)D);
		goto done;
	}
	if ((st = pl_graph_microbatch(g, m, &gm, err))) {
		pl_err_prefix(err, "%s: pipeline.micro_batches %lld", where, (long long)m);
		goto done;
	}
	for (int o = 0; o < gm->nops; o++)
		if ((st = pl_op_check_split(&gm->ops[o], splits[o], D / pp, err))) {
			pl_err_prefix(err,
			              "%s: op '%s': parallel_strategy (one micro-batch, %lld "
			              "devices a stage)",
			              where, gm->ops[o].name, (long long)(D / pp));
			goto done;
		}
	pl_job job = {.micro_batches = m, .stages = pp, .zero = zero, .recompute = rc};
	if ((st = pl_problem_new_job(&p, gm, &mesh, &job, err)))
		goto done;
	if (pl_job_price(p, splits, stage, cl->devices_per_node, NULL, out))
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
done:
	pl_problem_free(p);
	pl_graph_free(gm);
	free(stage);
	free(rc);
	return st;
}
