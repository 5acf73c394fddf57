/* Pipeline pricing (see pipeline.h). */
#include "costmodel/pipeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/layout.h"
#include "planner/alloc.h"

int pl_stage_link(int64_t stage_devices, int64_t devices_per_node, int to_stage)
{
	int64_t a = (int64_t)(to_stage - 1) * stage_devices, b = (int64_t)to_stage * stage_devices;
	return devices_per_node > 0 && a / devices_per_node == b / devices_per_node ? PL_LINK_INTRA
	                                                                            : PL_LINK_INTER;
}

double pl_p2p_link_time(const pl_cluster *c, double bytes, int requires_grad, int link)
{
	double t = pl_cluster_coll_time(c, PL_COLL_SEND_RECV, link, 2, bytes);
	return requires_grad ? 2 * t : t;
}

double pl_p2p_time(const pl_cluster *c, double bytes, int requires_grad, int64_t stage_devices,
                   int64_t devices_per_node, int to_stage)
{
	return pl_p2p_link_time(c, bytes, requires_grad,
	                        pl_stage_link(stage_devices, devices_per_node, to_stage));
}

double pl_job_exposed_reduce(const pl_stagecost *s, int overlap)
{
	double r = s->step_reduce_s;
	if (!overlap || !(r > 0))
		return r;
	double last =
	    s->grad_bytes > PL_GRAD_BUCKET_BYTES ? r * PL_GRAD_BUCKET_BYTES / s->grad_bytes : r;
	return fmax(r - s->mb_bwd_s, last);
}

void pl_job_combine(const pl_stagecost *st, int64_t stages, int64_t micro_batches, int64_t v,
                    int overlap, pl_jobcost *out)
{
	memset(out, 0, sizeof *out);
	if (v < 1)
		v = 1;
	double sum = 0, tmax = -1, umax = 0;
	for (int s = 0; s < stages; s++) {
		double t = st[s].mb_compute_s + st[s].mb_comm_s + (double)(v - 1) * st[s].p2p_s;
		double u = st[s].step_compute_s + st[s].step_comm_s - st[s].step_reduce_s +
		           pl_job_exposed_reduce(&st[s], overlap);
		sum += t;
		if (t > tmax) {
			tmax = t;
			out->bottleneck = s;
		}
		if (u > umax)
			umax = u;
		if (st[s].mem_bytes > out->mem_bytes)
			out->mem_bytes = st[s].mem_bytes;
	}
	double m = (double)micro_batches;
	out->step_s = m * tmax + (sum - tmax) / (double)v + umax;
	const pl_stagecost *b = &st[out->bottleneck];
	out->compute_s = m * b->mb_compute_s + b->step_compute_s;
	out->optimizer_s = b->step_compute_s;
	out->comm_s = m * (b->mb_comm_s + (double)(v - 1) * b->p2p_s) + b->step_comm_s -
	              b->step_reduce_s + pl_job_exposed_reduce(b, overlap);
	out->bubble_s = out->step_s - out->compute_s - out->comm_s;
	if (out->bubble_s < 0)
		out->bubble_s = 0;
}

void pl_job_op_cost(const pl_problem *p, int o, const int64_t *split, pl_stagecost *acc,
                    double *act)
{
	pl_nodeparts pt;
	pl_jobshare js;
	pl_cost_node_parts(p, o, split, &pt);
	pl_parts_split(p, o, &pt, &js);
	acc->mb_compute_s += js.mb_compute_s;
	acc->mb_comm_s += js.mb_comm_s;
	acc->step_compute_s += js.step_compute_s;
	acc->step_comm_s += js.step_comm_s;
	acc->mb_bwd_s += js.mb_bwd_s;
	acc->step_reduce_s += js.step_reduce_s;
	acc->grad_bytes += js.grad_bytes;
	acc->mem_bytes += js.state_bytes;
	*act += js.act_bytes;
}

/* What edge e does across a stage boundary: nothing (both ends on one stage,
 * or a tensor already sent to its stage: one send per tensor and stage,
 * however many ops there read it), a param read on two stages (its
 * gradients summed once a step), or a send of the activation (and its
 * gradient back); *bytes: the tensor's bytes per rank. */
enum { CROSS_NONE, CROSS_PARAM, CROSS_SEND };
static int edge_crossing(const pl_problem *p, int64_t *const *splits, const int *stage, int e,
                         double *bytes)
{
	const pl_edge *ed = &p->edges[e];
	int ds = stage[ed->dst_op];
	*bytes = 0;
	if (stage[ed->src_op] == ds)
		return CROSS_NONE;
	pl_layout src, dst;
	pl_edge_layouts(p, e, splits[ed->src_op], splits[ed->dst_op], &src, &dst);
	*bytes = pl_layout_local_bytes(&src);
	if (ed->src_is_input)
		return CROSS_PARAM;
	const pl_tensor *t = &p->g->tensors[ed->tensor];
	for (int k = 0; k < t->nconsumers; k++)
		if (t->consumers[k] < ed->dst_op && stage[t->consumers[k]] == ds)
			return CROSS_NONE;
	return CROSS_SEND;
}

void pl_job_comm(const pl_problem *p, int64_t *const *splits, const int *stage,
                 int64_t devices_per_node, int s, pl_commbook *out)
{
	memset(out, 0, sizeof *out);
	double m = (double)(p->job.micro_batches > 0 ? p->job.micro_batches : 1);
	double v = (double)(p->job.virtual_stages > 1 ? p->job.virtual_stages : 1);
	pl_stagecost sc = {0};
	for (int o = 0; o < p->nops; o++)
		if ((stage ? stage[o] : 0) == s) {
			double act = 0;
			pl_cost_node_comm(p, o, splits[o], out);
			pl_job_op_cost(p, o, splits[o], &sc, &act);
		}
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		if ((stage ? stage[ed->dst_op] : 0) != s)
			continue;
		pl_cost_edge_comm(p, e, splits[ed->src_op], splits[ed->dst_op], m, out);
		double bytes;
		int cross = stage ? edge_crossing(p, splits, stage, e, &bytes) : CROSS_NONE;
		if (cross == CROSS_PARAM) {
			pl_commbook_add(
			    out, PL_COLL_ALL_REDUCE, PL_LINK_INTER, 2, bytes,
			    pl_cluster_coll_time(p->c, PL_COLL_ALL_REDUCE, PL_LINK_INTER, 2, bytes),
			    1);
		} else if (cross == CROSS_SEND) {
			int link = pl_stage_link(p->devices, devices_per_node, s);
			double one = pl_cluster_coll_time(p->c, PL_COLL_SEND_RECV, link, 2, bytes);
			/* every micro-batch, each of the v chunks; the gradient back */
			pl_commbook_add(out, PL_COLL_SEND_RECV, link, 2, bytes, one,
			                m * v * (p->g->tensors[ed->tensor].requires_grad ? 2 : 1));
		}
	}
	out->hidden_s = sc.step_reduce_s - pl_job_exposed_reduce(&sc, p->job.overlap);
}

int pl_job_price(const pl_problem *p, int64_t *const *splits, const int *stage,
                 int64_t devices_per_node, pl_stagecost *per_stage, pl_jobcost *out)
{
	const pl_graph *g = p->g;
	int64_t pp = p->job.stages, m = p->job.micro_batches;
	for (int o = 0; o < p->nops; o++)
		if (stage[o] < 0 || stage[o] >= pp || (o > 0 && stage[o] < stage[o - 1]))
			return -1;
	pl_stagecost *st = per_stage ? per_stage : pl_calloc((size_t)pp, sizeof *st);
	double *act = pl_calloc((size_t)pp, sizeof *act);
	if (!st || !act) {
		if (!per_stage)
			free(st);
		free(act);
		return -1;
	}
	memset(st, 0, sizeof *st * (size_t)pp);
	for (int o = 0; o < p->nops; o++)
		pl_job_op_cost(p, o, splits[o], &st[stage[o]], &act[stage[o]]);
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		int ds = stage[ed->dst_op];
		pl_stagecost *s = &st[ds];
		s->mb_comm_s += pl_cost_edge(p, e, splits[ed->src_op], splits[ed->dst_op]);
		double bytes;
		switch (edge_crossing(p, splits, stage, e, &bytes)) {
		case CROSS_NONE: break;
		case CROSS_PARAM:
			s->step_comm_s +=
			    pl_cluster_coll_time(p->c, PL_COLL_ALL_REDUCE, PL_LINK_INTER, 2, bytes);
			break;
		case CROSS_SEND: {
			double tt = pl_p2p_time(p->c, bytes, g->tensors[ed->tensor].requires_grad,
			                        p->devices, devices_per_node, ds);
			s->mb_comm_s += tt;
			s->p2p_s += tt;
			break;
		}
		}
	}
	for (int s = 0; s < pp; s++) {
		st[s].mem_bytes += pl_job_inflight(pp, m, p->job.virtual_stages, s) * act[s];
	}
	pl_job_combine(st, pp, m, p->job.virtual_stages, p->job.overlap, out);
	if (!per_stage)
		free(st);
	free(act);
	return 0;
}

int pl_job_memory(const pl_problem *p, int64_t *const *splits, const int *stage, pl_membreak *out,
                  pl_membreak *per_stage)
{
	int64_t pp = p->job.stages > 0 ? p->job.stages : 1;
	int64_t m = p->job.micro_batches > 0 ? p->job.micro_batches : 1;
	pl_membreak *per = pl_calloc((size_t)pp, sizeof *per);
	double *state = pl_calloc((size_t)pp, sizeof *state),
	       *act = pl_calloc((size_t)pp, sizeof *act);
	if (!per || !state || !act) {
		free(per);
		free(state);
		free(act);
		return -1;
	}
	int z = p->job.zero;
	for (int o = 0; o < p->nops; o++) {
		int s = stage ? stage[o] : 0;
		pl_nodeparts pt;
		pl_jobshare js;
		pl_cost_node_parts(p, o, splits[o], &pt);
		pl_parts_split(p, o, &pt, &js);
		per[s].weights += pt.weight_bytes[z];
		per[s].gradients += pt.grad_bytes[z];
		per[s].optimizer_states +=
		    pt.state_bytes[z] - pt.weight_bytes[z] - pt.grad_bytes[z];
		state[s] += js.state_bytes;
		act[s] += js.act_bytes;
	}
	/* the peak stage as pl_job_price finds it: state + in-flight activations */
	int best = 0;
	double peak = -1;
	for (int64_t s = 0; s < pp; s++) {
		per[s].activations = pl_job_inflight(pp, m, p->job.virtual_stages, s) * act[s];
		double total = state[s] + per[s].activations;
		if (total > peak) {
			peak = total;
			best = (int)s;
		}
	}
	*out = per[best];
	out->stage = best;
	for (int64_t s = 0; per_stage && s < pp; s++) {
		per_stage[s] = per[s];
		per_stage[s].stage = (int)s;
	}
	free(per);
	free(state);
	free(act);
	return 0;
}

int pl_stage_mesh(const pl_cluster *c, int64_t k, pl_cluster *out)
{
	*out = *c;
	int64_t dpn = c->devices_per_node;
	if (k < 1)
		return -1;
	if (k >= dpn) {
		if (k % dpn)
			return -1;
		out->nodes = k / dpn;
	} else {
		if (dpn % k)
			return -1;
		out->nodes = 1;
		out->devices_per_node = k;
	}
	return 0;
}
