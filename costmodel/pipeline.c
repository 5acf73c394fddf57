/* Pipeline pricing (see pipeline.h). */
#include "costmodel/pipeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/layout.h"
#include "graph/alloc.h"

static int job_transients(const pl_problem *p, int64_t *const *splits, const int *stage, int64_t pp,
                          double *peak, double *bucket);

/* A stage's transient bytes beside act bytes of in-flight activations: its
 * backward's peak, or what the step-end bucket needs beyond them. */
static double transient_beside(double peak, double bucket, double act)
{
	return fmax(peak, bucket - act);
}

/* act[s] (one micro-batch's kept activations of stage s) becomes the
 * in-flight micro-batches' of stage s; returns each stage's transient bytes
 * beside them (pp doubles the caller frees), NULL out of memory */
static double *stage_activations(const pl_problem *p, int64_t *const *splits, const int *stage,
                                 int64_t pp, int64_t m, double *act)
{
	double *tr = pl_calloc((size_t)pp, sizeof *tr),
	       *bucket = pl_calloc((size_t)pp, sizeof *bucket);
	if (!tr || !bucket || job_transients(p, splits, stage, pp, tr, bucket)) {
		free(tr);
		free(bucket);
		return NULL;
	}
	for (int64_t s = 0; s < pp; s++) {
		act[s] *= pl_job_inflight(pp, m, p->job.virtual_stages, s);
		tr[s] = transient_beside(tr[s], bucket[s], act[s]);
	}
	free(bucket);
	return tr;
}

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
	if (!(overlap & PL_OVERLAP_GRAD) || !(r > 0))
		return r;
	double last =
	    s->grad_bytes > PL_GRAD_BUCKET_BYTES ? r * PL_GRAD_BUCKET_BYTES / s->grad_bytes : r;
	return pl_overlap_exposed(r, last, s->mb_bwd_s, 0);
}

double pl_job_exposed_step(const pl_stagecost *s, int overlap)
{
	double u = s->step_comm_s - s->step_reduce_s + pl_job_exposed_reduce(s, overlap);
	if (!(overlap & PL_OVERLAP_PARAM) || !(s->step_gather_s > 0))
		return u;
	return u - s->step_gather_s +
	       pl_overlap_exposed(s->step_gather_s, s->step_gather_first_s,
	                          s->mb_compute_s - s->mb_bwd_s, PL_OVERLAP_SLOWDOWN);
}

double pl_job_exposed_mb(const pl_stagecost *s, int overlap)
{
	double g = s->mb_gather_s;
	if (!(overlap & PL_OVERLAP_PARAM) || !(g > 0))
		return s->mb_comm_s;
	/* half of each op's gathers in either pass */
	return s->mb_comm_s - g +
	       pl_overlap_exposed(g / 2, s->gather_first_s, s->mb_compute_s - s->mb_bwd_s,
	                          PL_OVERLAP_SLOWDOWN) +
	       pl_overlap_exposed(g / 2, s->gather_last_s, s->mb_bwd_s, PL_OVERLAP_SLOWDOWN);
}

void pl_job_combine(const pl_stagecost *st, int64_t stages, int64_t micro_batches, int64_t v,
                    int overlap, pl_jobcost *out)
{
	memset(out, 0, sizeof *out);
	if (v < 1)
		v = 1;
	double sum = 0, tmax = -1, umax = 0;
	for (int s = 0; s < stages; s++) {
		double t = st[s].mb_compute_s + pl_job_exposed_mb(&st[s], overlap) +
		           (double)(v - 1) * st[s].p2p_s;
		double u = st[s].step_compute_s + pl_job_exposed_step(&st[s], overlap);
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
	out->comm_s = m * (pl_job_exposed_mb(b, overlap) + (double)(v - 1) * b->p2p_s) +
	              pl_job_exposed_step(b, overlap);
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
	if (js.mb_gather_s > 0) {
		if (!(acc->mb_gather_s > 0))
			acc->gather_first_s = js.mb_gather_s / 2;
		acc->gather_last_s = js.mb_gather_s / 2;
		acc->mb_gather_s += js.mb_gather_s;
	}
	if (js.step_gather_s > 0) {
		if (!(acc->step_gather_s > 0))
			acc->step_gather_first_s = js.step_gather_s;
		acc->step_gather_s += js.step_gather_s;
	}
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
	double tp_hidden = 0;
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
		if (p->job.overlap & PL_OVERLAP_TP) {
			double c = pl_cost_edge(p, e, splits[ed->src_op], splits[ed->dst_op]);
			tp_hidden += m * (c - pl_cost_edge_exposed(p, e, splits[ed->src_op],
			                                           splits[ed->dst_op], c));
		}
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
	/* += : the edges' context-parallel rings booked theirs (cost.c) */
	out->hidden_s += sc.step_comm_s - pl_job_exposed_step(&sc, p->job.overlap) +
	                m * (sc.mb_comm_s - pl_job_exposed_mb(&sc, p->job.overlap)) + tp_hidden;
}

/* What pricing a plan finds that its schedule (chunks per device) does not
 * change: each stage's costs with its state, one micro-batch's kept
 * activations, and its transient sweep's peak and step-end bucket. */
typedef struct job_base {
	int64_t pp;
	pl_stagecost *st;
	double *act, *peak, *bucket;
} job_base;

static void job_base_free(job_base *b)
{
	free(b->st);
	free(b->act);
	free(b->peak);
	free(b->bucket);
}

/* 0, or -1 when stage[] is not a valid assignment or out of memory */
static int job_base_new(const pl_problem *p, int64_t *const *splits, const int *stage,
                        int64_t devices_per_node, job_base *b)
{
	const pl_graph *g = p->g;
	int64_t pp = p->job.stages;
	*b = (job_base){.pp = pp};
	for (int o = 0; o < p->nops; o++)
		if (stage[o] < 0 || stage[o] >= pp || (o > 0 && stage[o] < stage[o - 1]))
			return -1;
	size_t n = (size_t)pp;
	b->st = pl_calloc(n, sizeof *b->st);
	b->act = pl_calloc(n, sizeof *b->act);
	b->peak = pl_calloc(n, sizeof *b->peak);
	b->bucket = pl_calloc(n, sizeof *b->bucket);
	if (!b->st || !b->act || !b->peak || !b->bucket) {
		job_base_free(b);
		return -1;
	}
	pl_stagecost *st = b->st;
	for (int o = 0; o < p->nops; o++)
		pl_job_op_cost(p, o, splits[o], &st[stage[o]], &b->act[stage[o]]);
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		int ds = stage[ed->dst_op];
		pl_stagecost *s = &st[ds];
		double c = pl_cost_edge(p, e, splits[ed->src_op], splits[ed->dst_op]);
		s->mb_comm_s +=
		    pl_cost_edge_exposed(p, e, splits[ed->src_op], splits[ed->dst_op], c);
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
	if (job_transients(p, splits, stage, pp, b->peak, b->bucket)) {
		job_base_free(b);
		return -1;
	}
	return 0;
}

/* the plan with v chunks per device: st (pp entries) and out */
static void job_finish(const pl_problem *p, const job_base *b, int64_t v, pl_stagecost *st,
                       pl_jobcost *out)
{
	int64_t m = p->job.micro_batches;
	memcpy(st, b->st, sizeof *st * (size_t)b->pp);
	for (int64_t s = 0; s < b->pp; s++) {
		double act = b->act[s] * pl_job_inflight(b->pp, m, v, s);
		st[s].mem_bytes += act + transient_beside(b->peak[s], b->bucket[s], act);
	}
	pl_job_combine(st, b->pp, m, v, p->job.overlap, out);
}

int pl_job_price(const pl_problem *p, int64_t *const *splits, const int *stage,
                 int64_t devices_per_node, pl_stagecost *per_stage, pl_jobcost *out)
{
	job_base b;
	if (job_base_new(p, splits, stage, devices_per_node, &b))
		return -1;
	pl_stagecost *st = per_stage ? per_stage : pl_calloc((size_t)b.pp, sizeof *st);
	if (st)
		job_finish(p, &b, p->job.virtual_stages, st, out);
	if (!per_stage)
		free(st);
	job_base_free(&b);
	return st ? 0 : -1;
}

int64_t pl_job_price_schedules(const pl_problem *p, int64_t *const *splits, const int *stage,
                               int64_t devices_per_node, int64_t v0, int64_t v1, double limit,
                               pl_stagecost *per_stage, pl_jobcost *out, int *cramped)
{
	job_base b;
	if (cramped)
		*cramped = 0;
	if (job_base_new(p, splits, stage, devices_per_node, &b))
		return -1;
	pl_stagecost *sv = pl_calloc((size_t)b.pp, sizeof *sv);
	if (!sv) {
		job_base_free(&b);
		return -1;
	}
	int64_t best = 0;
	double step = INFINITY, fastest = INFINITY; /* of those that fit; of all */
	if (v0 < 1)
		v0 = 1;
	for (int64_t v = v0; v <= v1; v++) {
		pl_jobcost jv;
		job_finish(p, &b, v, sv, &jv);
		fastest = fmin(fastest, jv.step_s);
		if ((limit > 0 && jv.mem_bytes > limit) || jv.step_s >= step)
			continue;
		step = jv.step_s;
		*out = jv;
		best = v;
		if (per_stage)
			memcpy(per_stage, sv, sizeof *sv * (size_t)b.pp);
	}
	free(sv);
	job_base_free(&b);
	if (cramped)
		*cramped = best > 0 && fastest < step;
	return best;
}

/* the op that writes tensor t (its producer) and its output layout's local bytes */
static double home_bytes(const pl_problem *p, int64_t *const *splits, int t, pl_layout *home)
{
	const pl_tensor *x = &p->g->tensors[t];
	const pl_op *op = &p->g->ops[x->producer];
	pl_op_output_layout(p->g, op, splits[x->producer], p->devices, x->producer_slot, home);
	return pl_layout_local_bytes(home);
}

/* the stages tensor t lives on: its producer's to its last consumer's */
static void tensor_stages(const pl_graph *g, const int *stage, int t, int *lo, int *hi)
{
	const pl_tensor *x = &g->tensors[t];
	*lo = *hi = stage ? stage[x->producer] : 0;
	for (int k = 0; stage && k < x->nconsumers; k++)
		if (stage[x->consumers[k]] > *hi)
			*hi = stage[x->consumers[k]];
}

/* One op's backward in the sweep of pl_job_transient: what it needs at once
 * beyond the gradients live before it (*add: the first contributions that
 * become live), marking them live; and its kept inputs read in another
 * layout, gathered again for it (pl_regathers). */
static double backward_need(const pl_problem *p, int64_t *const *splits, int o, uint8_t *live,
                            double *add)
{
	const pl_graph *g = p->g;
	const pl_op *op = &g->ops[o];
	double tmp = 0, staging = 0;
	*add = 0;
	for (int i = 0; i < op->ninputs; i++) { /* kept inputs gathered again */
		int t = op->in[i];
		pl_layout in, home;
		if (g->tensors[t].producer < 0 ||
		    !pl_regathers(g, p->job.recompute, o, i, p->saves_in[o]))
			continue;
		pl_op_input_layout(g, op, splits[o], p->devices, i, &in);
		home_bytes(p, splits, t, &home);
		if (!pl_layout_equal(&in, &home))
			tmp += pl_layout_local_bytes(&in);
	}
	for (int i = 0; i < op->ninputs; i++) {
		int t = op->in[i], again = 0;
		if (!g->tensors[t].requires_grad)
			continue;
		for (int j = 0; j < i; j++)
			again |= op->in[j] == t;
		pl_layout gl, home;
		pl_op_input_grad_layout(g, op, splits[o], p->devices, i, &gl);
		double gb = pl_layout_local_bytes(&gl);
		if (g->tensors[t].producer < 0) { /* a param's: added into its gradient */
			tmp += gb;
			continue;
		}
		double hb = home_bytes(p, splits, t, &home);
		int same = pl_layout_equal(&gl, &home);
		if (!same && hb > staging)
			staging = hb;
		if (!live[t] && !again) {
			live[t] = 1;
			*add += hb;
			if (same)
				continue; /* written in place */
		}
		tmp += gb;
	}
	return tmp + staging + *add;
}

/* The forward's need at op o beyond the kept activations: its inputs and
 * outputs that no backward keeps live while it runs (a Resize's output the
 * next op reads and drops still takes its bytes), each at its home layout;
 * a view (pl_op.view) takes none of its own. */
static double forward_need(const pl_problem *p, int o, const double *home)
{
	const pl_graph *g = p->g;
	const pl_op *op = &g->ops[o];
	double need = 0;
	for (int k = 0; k < op->noutputs; k++)
		if (!p->kept[op->out[k]] && !op->view)
			need += home[op->out[k]];
	for (int i = 0; i < op->ninputs; i++) {
		int t = op->in[i], again = 0;
		for (int j = 0; j < i; j++)
			again |= op->in[j] == t;
		if (!again && g->tensors[t].producer >= 0 && !p->kept[t] &&
		    !g->ops[g->tensors[t].producer].view)
			need += home[t];
	}
	return need;
}

/* What a buffered runtime (pl_cluster.output_buffered) holds of the model's
 * output on the stage that computes the loss, s, beside everything the sweep
 * counts: the inputs of the ops that make the graph's outputs (the loss's
 * logits), PL_OUTPUT_BUFFERS micro-batches of them (at most the step's m),
 * each in the layout the loss reads it in (the whole logits on every rank of
 * a gathered loss: the runtime's output is the gathered tensor), less the
 * copy that the activations count where the tensor is kept. Aleph
 * Alpha's scaling writes each micro-batch's output into a pipeline buffer
 * that its loss reads without taking (Buffers.get in _execute_loss_fn,
 * src/scaling/core/nn/parallel_module/parallel_module.py) and that only
 * the forward of the micro-batch two later overwrites (the last stage has
 * max(2, ...) buffers, PipelineScheduleTrain.required_buffer_count): the
 * outputs of the micro-batch in its backward and of the one before it are
 * live all through it and through the next forward. */
static double buffered_outputs(const pl_problem *p, int64_t *const *splits, const int *stage, int s)
{
	const pl_graph *g = p->g;
	if (!p->c->output_buffered)
		return 0;
	int64_t m = p->job.micro_batches > 0 ? p->job.micro_batches : 1;
	double copies = (double)(m < PL_OUTPUT_BUFFERS ? m : PL_OUTPUT_BUFFERS), held = 0;
	for (int k = 0; k < g->noutputs; k++) {
		int o = g->tensors[g->outputs[k]].producer, again = 0;
		for (int j = 0; j < k; j++)
			again |= g->tensors[g->outputs[j]].producer == o;
		if (o < 0 || again || (stage ? stage[o] : 0) != s)
			continue;
		const pl_op *op = &g->ops[o];
		for (int i = 0; i < op->ninputs; i++) {
			int t = op->in[i], twice = 0;
			for (int j = 0; j < i; j++)
				twice |= op->in[j] == t;
			if (twice || g->tensors[t].producer < 0 || !g->tensors[t].requires_grad)
				continue;
			pl_layout l; /* as the loss reads it: gathered, if it gathers */
			pl_op_input_layout(g, op, splits[o], p->devices, i, &l);
			held +=
			    (copies - (p->kept && p->kept[t] ? 1 : 0)) * pl_layout_local_bytes(&l);
		}
	}
	return held;
}

/* pl_job_transient of stages 0..pp-1 at once (ops of a stage are a run of
 * the op order), before the in-flight activations are known: stage s's
 * backward peak into peak_out[s], its step-end gradient bucket into
 * bucket[s] (transient_beside puts them beside the activations). 0, or -1
 * out of memory. */
static int job_transients(const pl_problem *p, int64_t *const *splits, const int *stage, int64_t pp,
                          double *peak_out, double *bucket)
{
	const pl_graph *g = p->g;
	size_t nt = (size_t)g->ntensors + 1, np = (size_t)pp;
	double *home = pl_calloc(nt, sizeof *home), *pend = pl_calloc(np, sizeof *pend),
	       *dpg = pl_calloc(np, sizeof *dpg), *zg = pl_calloc(np, sizeof *zg),
	       *zw = pl_calloc(np, sizeof *zw);
	int *lo = pl_malloc(sizeof *lo * nt), *hi = pl_malloc(sizeof *hi * nt);
	uint8_t *live = pl_calloc(nt, 1);
	/* per op its kernels' workspace forward and backward; rec: what a
	 * recomputed segment's forward, run again when the backward reaches
	 * it, has brought back and the backward has not yet given back at op
	 * o (the bytes its ops from the segment's first to o keep) */
	double *sf = pl_calloc((size_t)g->nops + 1, sizeof *sf),
	       *sb = pl_calloc((size_t)g->nops + 1, sizeof *sb),
	       *rec = pl_calloc((size_t)g->nops + 1, sizeof *rec);
	int rc = home && pend && dpg && zg && zw && lo && hi && live && sf && sb && rec ? 0 : -1;
	int z = p->job.zero;
	double elem = pl_dtype_bytes(g->dtype), run = 0;
	for (int o = 0; !rc && o < g->nops; o++) { /* every tensor's piece, where it lives */
		const pl_op *op = &g->ops[o];
		for (int k = 0; k < op->noutputs; k++) {
			pl_layout l;
			pl_op_output_layout(g, op, splits[o], p->devices, k, &l);
			home[op->out[k]] = pl_layout_local_bytes(&l);
		}
		pl_nodeparts pt; /* the stage's params, sharded or reduced */
		int s = stage ? stage[o] : 0;
		pl_cost_node_parts(p, o, splits[o], &pt);
		sf[o] = pt.scratch_fwd;
		sb[o] = pt.scratch_bwd;
		/* recomputed segments: runs of recomputed ops on one stage, each
		 * ending after an op that keeps its output (a layer of full
		 * recompute; that output is counted with the activations already),
		 * as the executor's recompute_at runs them; an op saved inside one
		 * (PL_RC_SAVED) is not run again and brings nothing back */
		int r = p->job.recompute ? p->job.recompute[o] : 0;
		if (o && stage && stage[o - 1] != s)
			run = 0;
		if (pl_rc_reruns(r))
			run += r == PL_RC_RERUN_OUT ? fmax(0, pt.act_bytes - pt.out_bytes)
			                            : pt.act_bytes;
		if (r)
			rec[o] = run;
		if (r == PL_RC_KEEP || r == PL_RC_RERUN_OUT)
			run = 0;
		if (z >= 2 && pt.grad_bytes[z] < pt.grad_bytes[0])
			zg[s] += pt.grad_bytes[0];
		if (z == 3 && pt.weight_bytes[z] < pt.weight_bytes[0])
			zw[s] += pt.weight_bytes[0];
		if (z == 0 && pt.grad_bytes[2] < pt.grad_bytes[0])
			dpg[s] += pt.grad_bytes[0];
	}
	for (int t = 0; !rc && t < g->ntensors; t++) {
		lo[t] = hi[t] = -1;
		if (g->tensors[t].producer < 0 || !g->tensors[t].requires_grad)
			continue;
		tensor_stages(g, stage, t, &lo[t], &hi[t]);
		for (int s = lo[t]; s < hi[t]; s++) /* its gradient comes back from a later stage */
			pend[s] += home[t];
	}
	for (int64_t s = 0, a = 0; !rc && s < pp; s++) {
		int b = (int)a;
		while (b < g->nops && (stage ? stage[b] : 0) == s)
			b++;
		memset(live, 0, nt);
		double live_b = pend[s];
		for (int t = 0; t < g->ntensors; t++)
			if (lo[t] <= s && s < hi[t])
				live[t] = 1;
		for (int k = 0; k < g->noutputs; k++) { /* the loss's gradient, on the last stage */
			int t = g->outputs[k];
			if (lo[t] == s && s == pp - 1 && !live[t]) {
				live_b += home[t];
				live[t] = 1;
			}
		}
		live_b += fmin(zg[s], PL_ZERO_REDUCE_BUCKET * elem) +
		          fmin(zw[s], PL_ZERO3_MAX_LIVE * elem);
		/* freed: the kept activations the backward has given back so far
		 * (an op's, after its backward), which the gradients may take the
		 * place of */
		double peak = live_b, freed = 0;
		for (int o = b - 1; o >= (int)a; o--) {
			int y = g->ops[o].out[0];
			pl_nodeparts pt;
			pl_jobshare js;
			pl_cost_node_parts(p, o, splits[o], &pt);
			pl_parts_split(p, o, &pt, &js);
			if (g->tensors[y].requires_grad) {
				double add,
				    need = backward_need(p, splits, o, live, &add) + sb[o] + rec[o];
				peak = fmax(peak, live_b + need - freed);
				live_b += add - (live[y] ? home[y] : 0);
				live[y] = 0;
			}
			freed += js.act_bytes;
		}
		/* the step's end, the activations given back: the gradients of the
		 * data-parallel all-reduce packed into a bucket; what it holds
		 * beyond the backward's peak counts (transient_beside) */
		for (int o = (int)a; o < b; o++) /* or the forward's, if more, with its workspace */
			peak = fmax(peak, sf[o] + (p->kept ? forward_need(p, o, home) : 0));
		peak_out[s] = peak + buffered_outputs(p, splits, stage, (int)s);
		bucket[s] = fmin(dpg[s], PL_GRAD_BUCKET_BYTES);
		a = b;
	}
	free(home);
	free(pend);
	free(dpg);
	free(zg);
	free(zw);
	free(lo);
	free(hi);
	free(live);
	free(sf);
	free(sb);
	free(rec);
	return rc;
}

double pl_job_transient(const pl_problem *p, int64_t *const *splits, const int *stage, int s,
                        double act)
{
	int64_t pp = stage ? stage[p->g->nops - 1] + 1 : 1;
	double *peak = pl_calloc((size_t)pp, sizeof *peak),
	       *bucket = pl_calloc((size_t)pp, sizeof *bucket);
	double r = -1;
	if (peak && bucket && !job_transients(p, splits, stage, pp, peak, bucket))
		r = transient_beside(peak[s], bucket[s], act);
	free(peak);
	free(bucket);
	return r;
}

/* Over an op's candidates: its outputs' smallest pieces, the most
 * activations it keeps, its params' smallest gradient pieces. */
typedef struct opfloor {
	double out[PL_MAX_OP_OUTPUTS], act, grad[PL_MAX_OP_INPUTS];
} opfloor;

static void op_floor(const pl_problem *p, int o, opfloor *f)
{
	const pl_graph *g = p->g;
	const pl_op *op = &g->ops[o];
	for (int k = 0; k < PL_MAX_OP_OUTPUTS; k++)
		f->out[k] = INFINITY;
	for (int i = 0; i < PL_MAX_OP_INPUTS; i++)
		f->grad[i] = INFINITY;
	f->act = 0;
	for (int c = 0; c < p->nstrat[o]; c++) {
		const int64_t *sp = p->strat[o] + (size_t)c * op->spec.nloops;
		pl_layout l;
		for (int k = 0; k < op->noutputs; k++) {
			pl_op_output_layout(g, op, sp, p->devices, k, &l);
			f->out[k] = fmin(f->out[k], pl_layout_local_bytes(&l));
		}
		for (int i = 0; i < op->ninputs; i++)
			if (g->tensors[op->in[i]].requires_grad &&
			    g->tensors[op->in[i]].producer < 0) {
				pl_op_input_grad_layout(g, op, sp, p->devices, i, &l);
				f->grad[i] = fmin(f->grad[i], pl_layout_local_bytes(&l));
			}
		pl_nodeparts pt;
		pl_jobshare js;
		pl_cost_node_parts(p, o, sp, &pt);
		pl_parts_split(p, o, &pt, &js);
		f->act = fmax(f->act, js.act_bytes);
	}
}

double pl_job_transient_floor(const pl_problem *p)
{
	const pl_graph *g = p->g;
	double *least = pl_malloc(sizeof *least * ((size_t)g->ntensors + 1));
	uint8_t *live = pl_calloc((size_t)g->ntensors + 1, 1);
	opfloor *fl = pl_malloc(sizeof *fl * ((size_t)g->nops + 1));
	if (!least || !live || !fl) {
		free(least);
		free(live);
		free(fl);
		return -1;
	}
	for (int o = 0; o < g->nops; o++) { /* an op class's candidates once */
		if (p->op_class && p->op_class[o] != o)
			fl[o] = fl[p->op_class[o]];
		else
			op_floor(p, o, &fl[o]);
		for (int k = 0; k < g->ops[o].noutputs; k++)
			least[g->ops[o].out[k]] = fl[o].out[k];
	}
	double live_b = 0, peak = 0, freed = 0;
	for (int k = 0; k < g->noutputs; k++) {
		int t = g->outputs[k];
		if (g->tensors[t].producer >= 0 && g->tensors[t].requires_grad && !live[t]) {
			live[t] = 1;
			live_b += least[t];
		}
	}
	for (int o = g->nops - 1; o >= 0; o--) { /* the sweep of pl_job_transient, at least */
		const pl_op *op = &g->ops[o];
		if (!g->tensors[op->out[0]].requires_grad) {
			freed += fl[o].act;
			continue;
		}
		double add = 0, params = 0;
		for (int i = 0; i < op->ninputs; i++) {
			int t = op->in[i];
			if (!g->tensors[t].requires_grad)
				continue;
			if (g->tensors[t].producer < 0) {
				params += fl[o].grad[i];
			} else if (!live[t]) {
				live[t] = 1;
				add += least[t];
			}
		}
		peak = fmax(peak, live_b + add + params - freed);
		freed += fl[o].act;
		live_b += add;
		if (live[op->out[0]]) {
			live[op->out[0]] = 0;
			live_b -= least[op->out[0]];
		}
	}
	free(least);
	free(live);
	free(fl);
	return peak;
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
	/* the peak stage as pl_job_price finds it: state + in-flight activations
	 * + transient */
	int best = 0;
	double peak = -1;
	double *tr = stage_activations(p, splits, stage, pp, m, act);
	if (!tr) {
		free(per);
		free(state);
		free(act);
		return -1;
	}
	for (int64_t s = 0; s < pp; s++) {
		per[s].activations = act[s];
		per[s].transient = tr[s];
		double total = state[s] + per[s].activations + per[s].transient;
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
	free(tr);
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
