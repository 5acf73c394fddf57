/* The cost model: roofline compute with an efficiency curve, alpha-beta
 * collectives with nccl-tests bus factors and link classes from where a
 * group's ranks sit, additive per-device memory. Tables for the searchers are
 * built from the same functions that price a single plan, so a plan's
 * predicted cost is reproducible by `planner cost`. */
#include "costmodel/cost.h"
#include "costmodel/attention.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/parallel.h"
#include "graph/alloc.h"
#include "graph/clock.h"

double pl_cost_kernel_seconds(const pl_cluster *c, pl_dtype dt, double gemm, double outs,
                              double vec, double bytes, int kernels)
{
	double t = 0;
	if (gemm > 0) {
		double peak =
		    c->peak_flops[dt] > 0 ? c->peak_flops[dt] : c->peak_flops[PL_DT_FLOAT32];
		double eff = c->gemm_eff_max * gemm / (gemm + c->gemm_half_flops);
		t += gemm / (peak * eff);
		if (c->gemm_out_k > 0 && c->gemm_k_max > 0) /* the output term */
			t = fmax(t, ((gemm + 2 * c->gemm_out_k * outs) / c->gemm_k_max +
			             c->gemm_half_flops / c->gemm_eff_max) /
			                peak);
	}
	if (vec > 0)
		t += vec / (c->peak_flops[PL_DT_FLOAT32] * c->vector_eff);
	double tm = bytes / (c->memory_bandwidth * c->bw_eff);
	if (tm > t)
		t = tm;
	return t + kernels * c->kernel_overhead_s;
}

double pl_cost_fp8_gemm_seconds(const pl_cluster *c, double gemm, double bytes)
{
	/* the bf16 curve's half-rate latency (gemm_half_flops over its
	 * asymptotic rate) at the FP8 asymptote */
	double t0 = c->gemm_half_flops / (c->gemm_eff_max * c->peak_flops[PL_DT_FLOAT16]);
	double t = gemm / (c->fp8_peak_flops * c->fp8_gemm_eff_max) + t0;
	double tm = bytes / (c->memory_bandwidth * c->bw_eff);
	return (tm > t ? tm : t) + c->kernel_overhead_s;
}

/* Whether tensor t reaches a loss through views (ops without a kernel) */
static int reaches_loss(const pl_graph *g, int t, int depth)
{
	if (depth > 8)
		return 0;
	const pl_tensor *x = &g->tensors[t];
	int64_t ones[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		ones[l] = 1;
	for (int k = 0; k < x->nconsumers; k++) {
		const pl_op *c = &g->ops[x->consumers[k]];
		if (pl_op_traits(c) & PL_OPT_LOSS)
			return 1;
		pl_opwork w;
		memset(&w, 0, sizeof w);
		pl_op_rule_get(c->type)->work(g, c, ones, &w);
		if (w.kernels_fwd == 0 && c->noutputs > 0 && reaches_loss(g, c->out[0], depth + 1))
			return 1;
	}
	return 0;
}

int pl_cost_fp8_op(const pl_cluster *c, const pl_graph *g, int o)
{
	const pl_op *op = &g->ops[o];
	if (!c->gemm_fp8 || !(pl_op_traits(op) & PL_OPT_LINEAR) || op->ninputs != 2)
		return 0;
	const pl_tensor *a = &g->tensors[op->in[0]], *b = &g->tensors[op->in[1]];
	if ((a->role == PL_ROLE_PARAM) == (b->role == PL_ROLE_PARAM) ||
	    pl_dtype_bytes(a->dtype) != 2 || pl_dtype_bytes(b->dtype) != 2)
		return 0;
	if (reaches_loss(g, op->out[0], 0))
		return 0;
	return b->role == PL_ROLE_PARAM ? 2 : 1;
}

/* Whether the recipe makes one FP8 copy of a linear layer's activation
 * input that both crosses the ranks and stays for the backward: Transformer
 * Engine's cast-transpose (gathered under sequence parallelism, saved for
 * the weight gradient) and torchao's tensorwise cast (gathered in FP8 by
 * torchtitan's tensor parallelism, its transposed copy saved); rowwise
 * gathers the 16-bit tensor and keeps a transposed 16-bit copy, cast along
 * the other axis in the backward (fp8_kernels) */
static int fp8_input_copy(const pl_cluster *c)
{
	return c->gemm_fp8 == PL_GEMM_FP8 || c->gemm_fp8 == PL_GEMM_FP8_TENSORWISE;
}

/* the op's main kernels at the device's rates (without its side kernels) */
static void main_seconds(const pl_cluster *c, pl_dtype dt, const pl_opwork *w, double *fwd,
                         double *bwd)
{
	*fwd = pl_cost_kernel_seconds(c, dt, w->gemm_flops_fwd, w->gemm_outs_fwd, w->vec_flops_fwd,
	                              w->bytes_fwd, w->kernels_fwd);
	*bwd = w->kernels_bwd
	           ? pl_cost_kernel_seconds(c, dt, w->gemm_flops_bwd, w->gemm_outs_bwd,
	                                    w->vec_flops_bwd, w->bytes_bwd, w->kernels_bwd)
	           : 0;
}

/* the side kernels (pl_opwork.side_*: memory-bound, each launched) added to
 * the main ones' fwd and bwd (a backward only where the op has one) */
static void add_side_seconds(const pl_cluster *c, const pl_opwork *w, double *fwd, double *bwd)
{
	*fwd += pl_cost_kernel_seconds(c, PL_DT_FLOAT32, 0, 0, 0, w->side_bytes_fwd,
	                               w->side_kernels_fwd);
	if (w->kernels_bwd)
		*bwd += pl_cost_kernel_seconds(c, PL_DT_FLOAT32, 0, 0, 0, w->side_bytes_bwd,
		                               w->side_kernels_bwd);
}

void pl_cost_work_seconds(const pl_cluster *c, pl_dtype dt, const pl_opwork *w, double *fwd,
                          double *bwd)
{
	main_seconds(c, dt, w, fwd, bwd);
	add_side_seconds(c, w, fwd, bwd);
}

int pl_regathers(const pl_graph *g, const uint8_t *recompute, int op, int slot, uint8_t saves_in)
{
	int prod = g->tensors[g->ops[op].in[slot]].producer;
	if (!(saves_in >> slot & 1) || prod < 0)
		return 0;
	return !recompute || recompute[op] == PL_RC_SAVED || !(recompute[op] || recompute[prod]);
}

/* bk (NULL: none) receives times x each collective's seconds and bus bytes
 * under its link class */
static void book_add(pl_commbook *bk, pl_coll coll, int link, int64_t n, double bytes, double t,
                     double times)
{
	if (!bk || times == 0)
		return;
	bk->seconds[coll][link] += times * t;
	bk->bus_bytes[coll][link] += times * bytes * pl_bus_factor(coll, n);
}

/* A collective over k > 1 ranks in each of m > 1 nodes, as NCCL runs it
 * over every NIC of a node: in steps inside the node (PL_LINK_INTRA, k ranks,
 * the whole S) and across nodes (PL_LINK_INTER, m ranks, S/k: the k groups of
 * the ranks of the same place at once, each on its own NIC). All-reduce:
 * reduce-scatter inside, all-reduce across, all-gather inside; all-gather:
 * across, then inside; reduce-scatter: inside, then across. Priced as the
 * cheaper of these and the flat ring (docs/cost-model.md). */
typedef struct level {
	pl_coll coll;
	int link;
} level;
static const struct {
	int n;
	level step[3];
} levels[PL_COLL_COUNT] = {
    [PL_COLL_ALL_REDUCE] = {3,
                            {{PL_COLL_REDUCE_SCATTER, PL_LINK_INTRA},
                             {PL_COLL_ALL_REDUCE, PL_LINK_INTER},
                             {PL_COLL_ALL_GATHER, PL_LINK_INTRA}}},
    [PL_COLL_ALL_GATHER] = {2,
                            {{PL_COLL_ALL_GATHER, PL_LINK_INTER},
                             {PL_COLL_ALL_GATHER, PL_LINK_INTRA}}},
    [PL_COLL_REDUCE_SCATTER] = {2,
                                {{PL_COLL_REDUCE_SCATTER, PL_LINK_INTRA},
                                 {PL_COLL_REDUCE_SCATTER, PL_LINK_INTER}}},
};

/* A primitive's seconds; with bk, times of it booked there */
static double prim_cost(const pl_cluster *c, const pl_prim *p, double times, pl_commbook *bk)
{
	if (p->kind == PL_PRIM_SLICE) {
		double t = p->bytes / (c->memory_bandwidth * c->bw_eff) + c->kernel_overhead_s;
		if (bk)
			bk->slice_s += times * t;
		return t;
	}
	pl_coll coll = pl_prim_coll(p->kind);
	int64_t n = p->group_size;
	if (pl_prim_intra_node(p, c->devices_per_node)) {
		double t = pl_cluster_coll_time(c, coll, PL_LINK_INTRA, n, p->bytes);
		book_add(bk, coll, PL_LINK_INTRA, n, p->bytes, t, times);
		return t;
	}
	double t = pl_cluster_coll_time(c, coll, PL_LINK_INTER, n, p->bytes);
	int64_t k, m = pl_prim_node_spread(p, c->devices_per_node, &k);
	if (pl_cluster_measured_at(c, coll, PL_LINK_INTER, n))
		k = 1; /* measured over these ranks as they sit: taken whole */
	if (k > 1 && m > 1) {
		/* as NCCL runs it through every NIC the group has, the busiest
		 * link's time: rings (pl_cluster_ring_time), or an all-to-all's
		 * share for other nodes (pl_cluster_alltoall_time) */
		double nccl = coll == PL_COLL_ALL_TO_ALL ? pl_cluster_alltoall_time(c, n, k, p->bytes)
		              : levels[coll].n           ? pl_cluster_ring_time(c, coll, n, k, p->bytes)
		                                         : t;
		if (nccl < t)
			t = nccl;
	}
	if (k > 1 && m > 1 && levels[coll].n) {
		/* or in steps where cheaper: the node's part on S over its k ranks,
		 * the nodes' part on S/k over m ranks (the k such groups at once,
		 * each on its own NIC) */
		double ts[3], sum = 0;
		for (int i = 0; i < levels[coll].n; i++) {
			const level *l = &levels[coll].step[i];
			sum += ts[i] = pl_cluster_coll_time(
			    c, l->coll, l->link, l->link == PL_LINK_INTER ? m : k,
			    l->link == PL_LINK_INTER ? p->bytes / (double)k : p->bytes);
		}
		if (sum < t) {
			for (int i = 0; i < levels[coll].n; i++) {
				const level *l = &levels[coll].step[i];
				book_add(bk, l->coll, l->link, l->link == PL_LINK_INTER ? m : k,
				         l->link == PL_LINK_INTER ? p->bytes / (double)k : p->bytes,
				         ts[i], times);
			}
			return sum;
		}
	}
	book_add(bk, coll, PL_LINK_INTER, n, p->bytes, t, times);
	return t;
}

double pl_cost_prim(const pl_cluster *c, const pl_prim *p)
{
	return prim_cost(c, p, 0, NULL);
}

static double redist_cost(const pl_cluster *c, const pl_redist *r, double times, pl_commbook *bk)
{
	double t = 0;
	for (int i = 0; i < r->n; i++)
		t += prim_cost(c, &r->p[i], times, bk);
	return t;
}

double pl_cost_redist(const pl_cluster *c, const pl_redist *r)
{
	return redist_cost(c, r, 0, NULL);
}

void pl_commbook_add(pl_commbook *bk, pl_coll coll, int link, int64_t n, double bytes, double t,
                     double times)
{
	book_add(bk, coll, link, n, bytes, t, times);
}

double pl_commbook_total(const pl_commbook *bk)
{
	double t = bk->slice_s - bk->hidden_s;
	for (int k = 0; k < PL_COLL_COUNT; k++)
		for (int l = 0; l < PL_LINK_COUNT; l++)
			t += bk->seconds[k][l];
	return t;
}

static const char *const recompute_names[PL_RECOMPUTE_MODES] = {"none", "full", "selective",
                                                                "selective-op"};

const char *pl_recompute_name(int mode)
{
	return mode >= 0 && mode < PL_RECOMPUTE_MODES ? recompute_names[mode] : NULL;
}

int pl_recompute_parse(const char *name)
{
	for (int k = 0; name && k < PL_RECOMPUTE_MODES; k++)
		if (!strcmp(name, recompute_names[k]))
			return k;
	return -1;
}

int pl_graph_recomputes(const pl_graph *g)
{
	for (int o = 0; o < g->nops; o++)
		if (g->ops[o].recompute)
			return 1;
	return 0;
}

uint8_t *pl_recompute_with_model(const pl_graph *g, const uint8_t *flags)
{
	uint8_t *rc = pl_calloc((size_t)g->nops + 1, 1);
	if (!rc)
		return NULL;
	for (int o = 0; o < g->nops; o++)
		rc[o] = flags && flags[o] ? flags[o] : (uint8_t)g->ops[o].recompute;
	return rc;
}

/* the mode of n flags, the ops g states recomputed aside (g NULL: none) */
static int recompute_mode(const uint8_t *flags, int n, const pl_graph *g)
{
	int mode = PL_RECOMPUTE_NONE;
	for (int o = 0; flags && o < n; o++)
		if (flags[o] == PL_RC_SAVED)
			return PL_RECOMPUTE_SELECTIVE_OP; /* only selective-op saves ops */
		else if (flags[o] == PL_RC_RERUN_OUT)
			mode = PL_RECOMPUTE_FULL; /* only full keeps a recomputed op's output */
		else if (flags[o] && !(g && g->ops[o].recompute) && mode == PL_RECOMPUTE_NONE)
			mode = PL_RECOMPUTE_SELECTIVE;
	return mode;
}

int pl_recompute_of_plan(const pl_graph *g, const uint8_t *flags)
{
	return recompute_mode(flags, g->nops, g);
}

int pl_recompute_of_flags(const uint8_t *flags, int n)
{
	return recompute_mode(flags, n, NULL);
}

/* Per param element, as Megatron-LM keeps and steps them (its distributed
 * optimizer's table of bytes per parameter, docs/distrib_optimizer.md: fp16
 * param and grads 20, or 4 + 16/d distributed; bf16 param and fp32 grads
 * 18, 6 + 12/d; fp32 16, 8 + 8/d; docs/cost-model.md): the gradient's bytes
 * (bf16 params accumulate and reduce their gradients in fp32: Megatron sets
 * accumulate_allreduce_grads_in_fp32 for bf16), the optimizer state's (fp32
 * m and v, an fp32 master for 16-bit params, and fp16's fp32 main gradient
 * beside its fp16 one), and the bytes a step moves (megatron/core/optimizer/
 * optimizer.py, MixedPrecisionOptimizer.step): fp16's gradient copied into
 * the fp32 main gradient (w read, 4 written) with its unscale and inf check
 * (4 + 4), the gradient norm for clipping (4 read), Adam on the fp32 master
 * (weights, gradients, m, v read; weights, m, v written: 28), a 16-bit
 * param's master copied back (4 read, w written). */
typedef struct grad_bytes {
	double grad;        /* gradient kept, sharded with the gradients (ZeRO 2, 3) */
	double whole;       /* gradient kept whole at every ZeRO level */
	double reduced;     /* the gradient the data-parallel reduction moves */
	double state;       /* optimizer state, sharded from ZeRO 1 */
	double traffic;     /* the step's bytes on the rank's share */
	double step_whole;  /* the step's bytes on the whole gradient */
	double micro;       /* every micro-batch's bytes after its backward */
	int micro_launches; /* and its kernels, per param */
} grad_bytes;

static grad_bytes adam_bytes(pl_dtype dt, pl_grad_dtype gd)
{
	int w = pl_dtype_bytes(dt), fp16 = dt == PL_DT_FLOAT16;
	int half = fp16 || dt == PL_DT_BFLOAT16;
	grad_bytes b = {0};
	if (half && gd == PL_GRAD_PARAM) {
		/* gradients accumulated and reduced in the params' dtype, cast into
		 * an fp32 gradient of the rank's optimizer share only at the step:
		 * no fp32 main gradient is kept */
		b.grad = b.reduced = w;
		b.state = 12;
		b.traffic = (w + 4) + 4 + 28 + (4 + w);
		return b;
	}
	if (half && gd == PL_GRAD_PARAM_FP32) {
		/* DeepSpeed's BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py):
		 * autograd writes the 16-bit gradient, kept until the next
		 * backward clears it; update_hp_grads adds it, cast to fp32 (w
		 * read, 4 written), into the whole fp32 gradient (4 + 4 read, 4
		 * written) after every micro-batch; the engine all-reduces that
		 * fp32 gradient; the step takes the norm of the whole of it (4
		 * read), Adam on the rank's fp32 master and its share of the
		 * gradient (28), the master copied back (4 + w), and zeroes the
		 * whole fp32 gradient (clear_hp_grads, 4 written) */
		b.whole = w;
		b.grad = b.reduced = 4;
		b.state = 12;
		b.traffic = 28 + (4 + w);
		b.step_whole = 4 + 4;
		b.micro = (w + 4) + 12;
		b.micro_launches = 2;
		return b;
	}
	if (dt == PL_DT_FLOAT64) { /* PyTorch's Adam keeps exp_avg and exp_avg_sq in the
		                    * param's dtype: fp32's bytes doubled */
		b.grad = b.reduced = w;
		b.state = 16;
		b.traffic = 2 * (4 + 28);
		return b;
	}
	b.grad = b.reduced = half && !fp16 ? 4 : w;
	b.state = 8 + (half ? 4 : 0) + (fp16 ? 4 : 0);
	b.traffic = (fp16 ? (w + 4) + 8 : 0) + 4 + 28 + (half ? 4 + w : 0);
	return b;
}

/* The share of one optimizer kernel launch a param's update takes: fused
 * optimizers (PyTorch's foreach/fused Adam, apex and Megatron's FusedAdam)
 * run multi_tensor_apply, one launch for up to 36 tensors of Adam's four
 * lists (g, p, m, v) and up to 320 chunks of 65536 elements
 * (MultiTensorApply.cuh: depth_to_max_tensors, depth_to_max_blocks,
 * kChunkSize); docs/cost-model.md ("Optimizer"). */
#define OPT_TENSORS_PER_LAUNCH 36.0
#define OPT_CHUNKS_PER_LAUNCH  320.0
#define OPT_CHUNK_ELEMS        65536.0
static double launch_share(double elems)
{
	return fmax(1 / OPT_TENSORS_PER_LAUNCH,
	            ceil(elems / OPT_CHUNK_ELEMS) / OPT_CHUNKS_PER_LAUNCH);
}

/* A gradient's (or ZeRO's weight's) collective run as frameworks run them:
 * packed with the others of its group into buckets of PL_GRAD_BUCKET_BYTES
 * (PyTorch DDP's bucket_cap_mb; Megatron's and DeepSpeed's buckets are no
 * smaller), so a tensor smaller than a bucket takes its share of a full
 * bucket's collective, latency included, and a larger one is its own
 * bucket; docs/cost-model.md ("Gradient buckets"). */
static double bucketed_cost(const pl_cluster *c, const pl_prim *p, double times, pl_commbook *bk)
{
	if (!(p->bytes < PL_GRAD_BUCKET_BYTES) || !(p->bytes > 0))
		return prim_cost(c, p, times, bk);
	pl_prim q = *p;
	q.bytes = PL_GRAD_BUCKET_BYTES;
	double f = p->bytes / PL_GRAD_BUCKET_BYTES;
	return prim_cost(c, &q, times * f, bk) * f;
}

/* The index of split among op o's candidates when it points into the
 * problem's own list (as a searcher's plan does), else -1. Such a plan is
 * priced from the tables the search filled, which hold exactly what pricing
 * it from scratch gives; any other split (a loaded checkpoint's) is priced
 * from scratch. */
static int candidate_of(const pl_problem *p, int o, const int64_t *split)
{
	int nl = p->g->ops[o].spec.nloops;
	if (nl <= 0 || !p->strat[o])
		return -1;
	uintptr_t lo = (uintptr_t)p->strat[o], at = (uintptr_t)split;
	size_t len = sizeof(int64_t) * (size_t)p->nstrat[o] * (size_t)nl;
	if (at < lo || at >= lo + len || (at - lo) % (sizeof(int64_t) * (size_t)nl))
		return -1;
	return (int)((at - lo) / (sizeof(int64_t) * (size_t)nl));
}

/* How often each communication term of an op's parts runs in a step under
 * the problem's job, as pl_parts_split and pl_job_combine fold them: its own
 * collectives (a recompute runs the forward ones again) every micro-batch;
 * the gradient all-reduce once a step (ZeRO 0); ZeRO-1's reduce-scatter and
 * all-gather once; ZeRO-2's reduce-scatter every micro-batch and
 * all-gather once; ZeRO-3's reduce-scatter and two all-gathers every
 * micro-batch. */
typedef struct comm_times {
	double coll_fwd, coll_bwd, all_reduce, reduce_scatter, all_gather;
} comm_times;

static void comm_times_of(const pl_problem *p, int op, comm_times *t)
{
	double m = (double)(p->job.micro_batches > 0 ? p->job.micro_batches : 1);
	int z = p->job.zero, rc = p->job.recompute ? pl_rc_reruns(p->job.recompute[op]) : 0;
	int ar1 = p->c->grad_fp32_allreduce; /* ZeRO 1 all-reduces too */
	t->coll_bwd = m;
	t->coll_fwd = rc ? 2 * m : m;
	t->all_reduce = z == 0 || (z == 1 && ar1);
	t->reduce_scatter = z == 1 ? !ar1 : z >= 2 ? m : 0;
	t->all_gather = z == 1 || z == 2 ? 1 : z == 3 ? 2 * m : 0;
}

/* A linear layer's kernels in FP8 (docs/cost-model.md, "FP8 GEMMs"), in
 * place of its 16-bit times: the three GEMMs on FP8 operands writing 16-bit
 * outputs, beside the casts of the cluster's recipe, each a memory-bound
 * kernel (bytes below in units of the 16-bit tensor's: la the activation
 * input's, lw the weight's, lc the output's; e the 16-bit width):
 *
 * fp8 (Transformer Engine, delayed scaling): forward, the input's cast-
 * transpose (reads la, writes two 1-byte copies: la (1 + 2/e)); backward,
 * the output gradient's (lc (1 + 2/e)). The weight's copies are cast once a
 * step (param_parts).
 *
 * fp8-tensorwise and fp8-rowwise (torchao's Float8, dynamic scaling: every
 * operand's scale from its own amax, each micro-batch), the kernels
 * torchao's roofline counts for its recipes (torchao/testing/float8/
 * roofline_utils.py, get_tensor_memory_traffic_ovhd_s, at 6243040):
 * tensorwise, an amax pass (reads the tensor; a second tiny kernel reduces
 * the partial maxima) then a cast writing both layouts: the input's and the
 * output gradient's x (2 + 2/e) in 3 kernels; the weight's lw (2 + 1/e) in
 * 3 forward, cast again backward lw (1 + 1/e) in 1. Rowwise, a cast along
 * each axis: the input's first kernel writes its FP8 rows and a transposed
 * 16-bit copy (la (2 + 1/e), forward), the second casts that copy (la (1 +
 * 1/e), backward, before the weight gradient); the output gradient's both,
 * lc (3 + 2/e) in 2; the weight's row cast forward (lw (1 + 1/e)), its
 * transpose and column cast backward (lw (3 + 1/e) in 2). The rowwise
 * backward GEMMs run without fast accumulation, which torchao sends to
 * cuBLAS's tensorwise kernel with unit scales and rescales after: one more
 * kernel reading and writing each gradient (2 la, 2 lw;
 * torchao/float8/float8_ops.py, addmm_float8_unwrapped).
 *
 * An activation read by several FP8 linear layers (q, k and v; gate and up)
 * is cast once, by the first of them (cast_in): Transformer Engine's fused
 * projections (Megatron's linear_qkv and linear_fc1) cast one input, torchao
 * under torch.compile computes the readers' identical casts once
 * (AOTAutograd's common-subexpression pass) and its tensor-parallel input
 * preparation casts the shared input before its all-gather
 * (torchao/float8/float8_tensor_parallel.py, PrepareFloat8ModuleInput). The
 * others read the same copies: no input cast of their own.
 *
 * ws: the weight's slot. *la: the activation input's local bytes. */
static void fp8_kernels(const pl_problem *p, const pl_op *op, const int64_t *split, int ws,
                        int cast_in, const pl_opwork *w, pl_nodeparts *out, double *la_out)
{
	const pl_cluster *c = p->c;
	const pl_graph *g = p->g;
	int as = 1 - ws;
	pl_layout l;
	pl_op_input_layout(g, op, split, p->devices, as, &l);
	double la = pl_layout_local_bytes(&l);
	pl_op_input_layout(g, op, split, p->devices, ws, &l);
	double lw = pl_layout_local_bytes(&l);
	pl_op_output_layout(g, op, split, p->devices, 0, &l);
	double lc = pl_layout_local_bytes(&l);
	double e = pl_dtype_bytes(g->tensors[op->in[as]].dtype);
	double bw = c->memory_bandwidth * c->bw_eff, ov = c->kernel_overhead_s;
	double f = w->gemm_flops_fwd; /* each of the three GEMMs has as many */
	int dgrad = w->kernels_bwd && g->tensors[op->in[as]].requires_grad;
	int wgrad = w->kernels_bwd && g->tensors[op->in[ws]].requires_grad;
	/* the casts' bytes and kernels, forward and backward */
	double cf = 0, cb = 0;
	int kf = 0, kb = 0;
	double ca = cast_in ? 1 : 0; /* whether the input's casts are this op's */
	switch ((pl_gemm_dtype)c->gemm_fp8) {
	case PL_GEMM_FP8_TENSORWISE:
		cf = ca * la * (2 + 2 / e) + lw * (2 + 1 / e);
		kf = 3 * cast_in + 3;
		if (dgrad || wgrad) {
			cb = lc * (2 + 2 / e);
			kb = 3;
		}
		if (dgrad) {
			cb += lw * (1 + 1 / e);
			kb += 1;
		}
		break;
	case PL_GEMM_FP8_ROWWISE:
		cf = ca * la * (2 + 1 / e) + lw * (1 + 1 / e);
		kf = cast_in + 1;
		if (dgrad || wgrad) {
			cb = lc * (2 + 1 / e);
			kb = 1;
		}
		if (dgrad) { /* the weight's column cast, the rescale of dA */
			cb += lw * (3 + 1 / e) + 2 * la;
			kb += 3;
		}
		if (wgrad) { /* the column casts of dC and of A, the rescale of dW */
			cb += lc * (1 + 1 / e) + ca * la * (1 + 1 / e) + 2 * lw;
			kb += 2 + cast_in;
		}
		break;
	case PL_GEMM_PARAM: /* not an FP8 op: fp8_kernels is not called */
	case PL_GEMM_FP8:
	case PL_GEMM_DTYPES: /* Transformer Engine's cast-transposes */
		cf = ca * la * (1 + 2 / e);
		kf = cast_in;
		if (dgrad || wgrad) {
			cb = lc * (1 + 2 / e);
			kb = 1;
		}
		break;
	}
	*la_out = la;
	out->fwd_s = cf / bw + kf * ov + pl_cost_fp8_gemm_seconds(c, f, (la + lw) / e + lc);
	out->bwd_s = 0;
	if (!w->kernels_bwd)
		return;
	out->bwd_s = cb / bw + kb * ov;
	if (dgrad)
		out->bwd_s += pl_cost_fp8_gemm_seconds(c, f, (lc + lw) / e + la);
	if (wgrad)
		out->bwd_s += pl_cost_fp8_gemm_seconds(c, f, (lc + la) / e + lw);
}

/* w cleared, with the training program's switches its work() reads */
static void program_switches(const pl_cluster *c, pl_opwork *w)
{
	memset(w, 0, sizeof *w);
	w->fused_loss = c->loss_fused;
	w->loss_metrics = c->loss_metrics;
	w->unfused_norm = c->norm_unfused;
	w->unfused_mask = c->mask_unfused;
	w->local_bn = c->bn_local;
	w->cp_merge = c->cp_exchange == PL_CP_ALLGATHER;
}

/* The measured rate of the cluster's attention kernel for w's fused
 * attention (forward, or bwd 1), which prices it; 0 where the table does not
 * (no fused attention, no kernel named, not 16-bit, no measurement) */
static double table_rate(const pl_cluster *c, pl_dtype dt, const pl_opwork *w, int bwd)
{
	if (!(w->attn_head_dim > 0) || !c->attention_kernel[0] ||
	    (dt != PL_DT_FLOAT16 && dt != PL_DT_BFLOAT16))
		return 0;
	return pl_attention_rate(c->device_name, c->attention_kernel, bwd, w->attn_causal,
	                         w->attn_head_dim, w->attn_seq);
}

/* An op's work (pl_opwork, into w) and its kernels' times of one
 * micro-batch (out's fwd_s and bwd_s): at the device's rates, a fused
 * attention at its kernel's measured rate, a calibrated kernel at its own,
 * a linear layer in FP8 as Transformer Engine runs it (*f8: 1 + its
 * weight's slot, else 0; *f8_in: its activation input's local bytes). */
static void node_kernels(const pl_problem *p, int op_index, const int64_t *split, pl_opwork *w,
                         pl_nodeparts *out, int *f8, double *f8_in)
{
	const pl_graph *g = p->g;
	const pl_op *op = &g->ops[op_index];
	const pl_cluster *c = p->c;
	program_switches(c, w);
	pl_op_rule_get(op->type)->work(g, op, split, w);
	pl_dtype dt = g->tensors[op->in[0]].dtype;
	memset(out, 0, sizeof *out);
	main_seconds(c, dt, w, &out->fwd_s, &out->bwd_s);
	/* a fused attention at its kernel's measured rate */
	double rf = table_rate(c, dt, w, 0), rb = table_rate(c, dt, w, 1);
	if (rf > 0 && rb > 0) {
		/* on a part of the measured GPU's family at another 16-bit peak,
		 * at that peak's ratio (attention.h, pl_attention_part_peak) */
		double part = pl_attention_part_peak(c->device_name);
		if (part > 0 && c->peak_flops[dt] > 0 && c->peak_flops[dt] != part) {
			rf *= c->peak_flops[dt] / part;
			rb *= c->peak_flops[dt] / part;
		}
		out->fwd_s = w->gemm_flops_fwd / rf + w->kernels_fwd * c->kernel_overhead_s;
		out->bwd_s = w->gemm_flops_bwd > 0
		                 ? w->gemm_flops_bwd / rb + w->kernels_bwd * c->kernel_overhead_s
		                 : 0;
	} else if (c->kernel_scale[op->type] > 0) { /* calibrated: this kernel's own rate */
		out->fwd_s *= c->kernel_scale[op->type];
		out->bwd_s *= c->kernel_scale[op->type];
	}
	/* its side kernels, at the device's bandwidth whatever priced the main ones */
	add_side_seconds(c, w, &out->fwd_s, &out->bwd_s);
	int v = p->fp8 ? p->fp8[op_index] : 0;
	*f8 = v & PL_FP8_SLOT; /* 1 + its weight's slot */
	*f8_in = 0;
	if (*f8)
		fp8_kernels(p, op, split, *f8 - 1, !(v & PL_FP8_SHARED), w, out, f8_in);
	out->fwd_s /= pl_fit(c->fit_compute);
	out->bwd_s /= pl_fit(c->fit_compute);
}

int pl_cost_attention_beyond(const pl_problem *p, int64_t *const *splits, double *seq,
                             double *longest)
{
	const pl_cluster *c = p->c;
	*seq = *longest = 0;
	int measured = pl_attention_longest(c->device_name, c->attention_kernel);
	if (measured <= 0)
		return 0;
	for (int o = 0; o < p->g->nops; o++) {
		const pl_op *op = &p->g->ops[o];
		if (!splits[o])
			continue;
		pl_opwork w;
		program_switches(c, &w);
		pl_op_rule_get(op->type)->work(p->g, op, splits[o], &w);
		/* priced at the table's rate (node_kernels) past its longest */
		if (w.attn_seq > measured && w.attn_seq > *seq &&
		    table_rate(c, p->g->tensors[op->in[0]].dtype, &w, 0) > 0)
			*seq = w.attn_seq;
	}
	if (*seq > 0)
		*longest = measured;
	return *seq > 0;
}

/* The activations an op keeps for its backward (act_bytes; a saved
 * activation counts once, at its producer), its first output's bytes
 * (out_bytes, what a checkpoint keeps) and of act_bytes what is not its
 * outputs (saved_bytes: its kernel's own, norm statistics, log-sum-exps). */
static void node_act_bytes(const pl_problem *p, int op_index, const int64_t *split,
                           const pl_opwork *w, int f8, double f8_in, pl_nodeparts *out)
{
	const pl_graph *g = p->g;
	const pl_op *op = &g->ops[op_index];
	out->act_bytes = w->saved_bytes;
	double kept_out = 0; /* of act_bytes, its outputs some backward reads */
	if (p->kept) {
		pl_layout l;
		for (int i = 0; i < op->ninputs; i++) {
			if (!(w->saves_in >> i & 1))
				continue;
			if (g->tensors[op->in[i]].producer >= 0) {
				pl_op_input_layout(g, op, split, p->devices, i, &l);
				out->act_bytes -= pl_layout_local_bytes(&l);
			} else if (f8 && i == 2 - f8 && fp8_input_copy(p->c)) { /* kept in FP8 here */
				out->act_bytes -=
				    f8_in * (1 - 1.0 / pl_dtype_bytes(g->tensors[op->in[i]].dtype));
			}
		}
		for (int i = 0; i < op->noutputs; i++) {
			pl_op_output_layout(g, op, split, p->devices, i, &l);
			double ob = pl_layout_local_bytes(&l);
			int t = op->out[i];
			kept_out += p->kept[t] ? ob : 0;
			out->act_bytes += (p->kept[t] ? ob : 0) - (w->saves_out >> i & 1 ? ob : 0) +
			                  (p->kept_fp8 && p->kept_fp8[t]
			                       ? ob / pl_dtype_bytes(g->tensors[t].dtype)
			                       : 0);
		}
	}
	if (op->noutputs > 0) {
		pl_layout ol;
		pl_op_output_layout(g, op, split, p->devices, 0, &ol);
		out->out_bytes = pl_layout_local_bytes(&ol);
	}
	out->saved_bytes = fmax(0, out->act_bytes - kept_out);
	out->act_bytes *= pl_fit(p->c->fit_memory);
	out->out_bytes *= pl_fit(p->c->fit_memory);
	out->saved_bytes *= pl_fit(p->c->fit_memory);
}

/* The state, gradient sync and optimizer of param input i that op owns, by
 * ZeRO level over the r ranks that hold the same shard (its gradient's
 * all-reduce group): 1 shards the optimizer state (reduce-scatter of the
 * accumulated gradients and all-gather of the updated weights once a step,
 * as Megatron's distributed optimizer), 2 also the gradients (held as
 * partitions, so every micro-batch's are reduce-scattered into them), 3
 * also the weights (gathered again in every micro-batch's forward and
 * backward, and never after the step). f8: as node_kernels. */
static void param_parts(const pl_problem *p, const pl_op *op, const int64_t *split, int i, int f8,
                        const comm_times *ct, pl_commbook *bk, pl_nodeparts *out)
{
	const pl_graph *g = p->g;
	const pl_cluster *c = p->c;
	const pl_tensor *pt = &g->tensors[op->in[i]];
	pl_layout gl;
	pl_op_input_grad_layout(g, op, split, p->devices, i, &gl);
	double bytes = pl_layout_local_bytes(&gl);
	double elems = bytes / pl_dtype_bytes(pt->dtype);
	grad_bytes gr = adam_bytes(pt->dtype, c->grad_dtype);
	double bw = c->memory_bandwidth * c->bw_eff;
	double upd = elems * gr.traffic / bw, gb = elems * gr.grad, gw = elems * gr.whole;
	pl_prim ar;
	double r = 1, t_ar = 0, t_rs = 0, t_ag = 0;
	if (pl_layout_partial_allreduce(&gl, &ar)) {
		r = (double)ar.group_size;
		pl_prim ag = ar; /* the weights gathered in their own dtype */
		ag.kind = PL_PRIM_ALL_GATHER;
		t_ag = bucketed_cost(c, &ag, ct->all_gather, bk);
		ar.bytes *= elems * gr.reduced / bytes; /* the gradients reduced in theirs */
		pl_prim rs = ar;
		rs.kind = PL_PRIM_REDUCE_SCATTER;
		if (c->grad_fp32_allreduce) /* all-reduced in fp32 */
			ar.bytes = elems * 4;
		t_ar = bucketed_cost(c, &ar, ct->all_reduce, bk);
		t_rs = bucketed_cost(c, &rs, ct->reduce_scatter, bk);
	}
	if (f8 && i == f8 - 1 && c->gemm_fp8 == PL_GEMM_FP8) {
		/* Transformer Engine's FP8 copies of the weight and of its
		 * transpose (Hopper's FP8 GEMMs take only the TN layout), cast
		 * once a step and cached over the micro-batches
		 * (is_first_microbatch), with one launch a step for the amax and
		 * scale update */
		double fb = 2 * elems, fz[PL_ZERO_LEVELS] = {fb, fb, fb, fb / r};
		for (int z = 0; z < PL_ZERO_LEVELS; z++) {
			out->state_bytes[z] += fz[z];
			out->weight_bytes[z] += fz[z];
			out->opt_s[z] += ((bytes + fb) / (c->memory_bandwidth * c->bw_eff) +
			                  2 * c->kernel_overhead_s) /
			                 pl_fit(c->fit_compute);
		}
	}
	double sb = elems * gr.state;
	/* ZeRO 3's weights on the rank: the param's shard beside the master's
	 * (in sb), or PyTorch FSDP's fp32 master shard alone (taken out of sb) */
	double w3 = bytes, sb3 = sb;
	if (c->param_shard_fp32 && pl_dtype_bytes(pt->dtype) < 4 && gr.state >= 12) {
		w3 = elems * 4;
		sb3 = sb - elems * 4;
	}
	out->state_bytes[0] += bytes + gw + gb + sb;
	out->state_bytes[1] += bytes + gw + gb + sb / r;
	out->state_bytes[2] += bytes + gw + gb / r + sb / r;
	out->state_bytes[3] += w3 / r + gw + gb / r + sb3 / r;
	for (int z = 0; z < PL_ZERO_LEVELS; z++) {
		out->weight_bytes[z] += z == 3 ? w3 / r : bytes;
		out->grad_bytes[z] += gw + (z >= 2 ? gb / r : gb);
	}
	/* ZeRO 1's reduction: a reduce-scatter, or the whole all-reduce */
	double t_red1 = c->grad_fp32_allreduce ? t_ar : t_rs;
	out->sync_s[0] += t_ar;
	out->sync_s[1] += r > 1 ? t_red1 + t_ag : 0;
	out->reduce_step_s[0] += t_ar;
	out->reduce_step_s[1] += r > 1 ? t_red1 : 0;
	out->grad_step_bytes += elems * gr.reduced;
	out->sync_s[2] += r > 1 ? t_ag : 0;
	out->reduce_s += r > 1 ? t_rs : 0;
	out->gather_s += 2 * t_ag;
	double fc = pl_fit(c->fit_compute);
	if (c->grad_fp32_allreduce && r > 1) {
		/* the flat buckets' copies, once a step for the whole gradient:
		 * flattened (g read and written), cast to fp32 (g + 4) and back
		 * (4 + g) where 16-bit, copied back into the gradients (2g);
		 * a few launches a 500M-element bucket, not counted */
		double g = gr.reduced, cp = 4 * g + (g < 4 ? 2 * (g + 4) : 0);
		double t_cp = elems * cp / bw / fc;
		out->opt_s[0] += t_cp;
		out->opt_s[1] += t_cp;
	}
	out->opt_s[0] += (upd + c->kernel_overhead_s * launch_share(elems)) / fc;
	for (int z = 1; z < PL_ZERO_LEVELS; z++)
		out->opt_s[z] += (upd / r + c->kernel_overhead_s * launch_share(elems / r)) / fc;
	for (int z = 0; z < PL_ZERO_LEVELS; z++) /* the fp32 gradient: sharded from ZeRO 2 */
		out->opt_s[z] += elems * gr.step_whole / bw / fc / (z >= 2 ? r : 1);
	if (c->grad_acc_autograd && !gr.micro) {
		/* AccumulateGrad: the kept gradient (g) and the fresh one (w) read,
		 * the kept one written; on the shard under ZeRO 2 and 3 */
		double t = elems * (2 * gr.grad + pl_dtype_bytes(pt->dtype)) / bw / fc;
		for (int z = 0; z < PL_ZERO_LEVELS; z++)
			out->acc_s[z] += (z >= 2 ? t / r : t) + c->kernel_overhead_s / fc;
	}
	if (gr.micro > 0) /* after every micro-batch's backward, each its kernels */
		out->bwd_s +=
		    (elems * gr.micro / bw + gr.micro_launches * c->kernel_overhead_s) / fc;
}

/* pl_cost_node_parts from scratch; with bk, the communication a step of the
 * job runs (comm_times_of) booked there */
static void node_parts(const pl_problem *p, int op_index, const int64_t *split, pl_nodeparts *out,
                       pl_commbook *bk)
{
	comm_times ct = {0};
	if (bk)
		comm_times_of(p, op_index, &ct);
	const pl_op *op = &p->g->ops[op_index];
	pl_opwork w;
	int f8;
	double f8_in;
	node_kernels(p, op_index, split, &w, out, &f8, &f8_in);
	node_act_bytes(p, op_index, split, &w, f8, f8_in, out);
	out->scratch_fwd = w.scratch_fwd;
	out->scratch_bwd = w.scratch_bwd;
	for (int k = 0; k < w.ncoll; k++) {
		pl_prim pr;
		if (pl_op_coll_prim(op, split, p->devices, &w.coll[k], &pr)) {
			double t = prim_cost(p->c, &pr,
			                     w.coll[k].backward ? ct.coll_bwd : ct.coll_fwd, bk);
			out->coll_s += t;
			if (!w.coll[k].backward)
				out->coll_fwd_s += t;
		}
	}
	/* params this op owns (each once) */
	for (int i = 0; i < op->ninputs; i++) {
		int t = op->in[i];
		if (p->param_owner[t] != op_index)
			continue;
		int first = 1;
		for (int j = 0; j < i; j++)
			first &= op->in[j] != t;
		if (first)
			param_parts(p, op, split, i, f8, &ct, bk, out);
	}
}

static void node_memo_parts(const pl_problem *p, int op, const int64_t *split, pl_nodeparts *out);

void pl_cost_node_parts(const pl_problem *p, int op_index, const int64_t *split, pl_nodeparts *out)
{
	const pl_nodeparts *known = p->parts ? p->parts[p->op_class[op_index]] : NULL;
	int k = known ? candidate_of(p, op_index, split) : -1;
	if (k >= 0)
		*out = known[k];
	else if (p->memo)
		node_memo_parts(p, op_index, split, out);
	else
		node_parts(p, op_index, split, out, NULL);
}

void pl_cost_node_comm(const pl_problem *p, int op, const int64_t *split, pl_commbook *bk)
{
	pl_nodeparts pt;
	node_parts(p, op, split, &pt, bk);
}

int pl_zero_pipeline_ok(int zero, int64_t stages)
{
	return zero <= 1 || stages <= 1;
}

double pl_job_span(const pl_job *job)
{
	int64_t m = job->micro_batches > 0 ? job->micro_batches : 1;
	int64_t pp = job->stages > 0 ? job->stages : 1;
	return (double)(m + pp - 1);
}

double pl_job_step_scale(const pl_job *job)
{
	int64_t m = job->micro_batches > 0 ? job->micro_batches : 1;
	int64_t pp = job->stages > 0 ? job->stages : 1;
	int64_t v = job->max_virtual > 0 ? job->max_virtual : job->virtual_stages;
	if (v <= 1) /* plain 1F1B: (m + pp - 1) / pp */
		return pl_job_span(job) / (double)pp;
	return ((double)m + (double)(pp - 1) / (double)v) / (double)pp;
}

void pl_parts_split(const pl_problem *p, int op, const pl_nodeparts *pt, pl_jobshare *out)
{
	int z = p->job.zero, f = p->job.recompute ? p->job.recompute[op] : 0, rc = pl_rc_reruns(f);
	int64_t m = p->job.micro_batches > 1 ? p->job.micro_batches : 1;
	double acc = pt->acc_s[z] * (double)(m - 1) / (double)m;
	out->mb_compute_s = pt->fwd_s + pt->bwd_s + acc + (rc ? pt->fwd_s : 0);
	out->mb_comm_s = pt->coll_s + (rc ? pt->coll_fwd_s : 0) + (z == 3 ? pt->gather_s : 0) +
	                 (z >= 2 ? pt->reduce_s : 0);
	out->step_compute_s = pt->opt_s[z];
	out->step_comm_s = pt->sync_s[z];
	out->step_reduce_s = pt->reduce_step_s[z];
	out->grad_bytes = z <= 1 ? pt->grad_step_bytes : 0;
	out->mb_bwd_s = pt->bwd_s + acc + (rc ? pt->fwd_s : 0);
	out->mb_gather_s = z == 3 ? pt->gather_s : 0;
	out->step_gather_s = z == 1 || z == 2 ? pt->sync_s[z] - pt->reduce_step_s[z] : 0;
	out->state_bytes = pt->state_bytes[z];
	out->act_bytes = f == PL_RC_KEEP        ? pt->act_bytes
	                 : f == PL_RC_RERUN_OUT ? pt->out_bytes
	                 : f == PL_RC_SAVED     ? pt->out_bytes + pt->saved_bytes
	                                        : 0;
}

void pl_cost_fold(const pl_problem *p, int op, const pl_nodeparts *pt, pl_nodecost *out)
{
	double span = pl_job_span(&p->job);
	pl_jobshare js;
	pl_parts_split(p, op, pt, &js);
	out->compute_s = js.mb_compute_s + js.step_compute_s / span;
	out->comm_s = js.mb_comm_s + js.step_comm_s / span;
	out->mem_bytes = js.state_bytes + js.act_bytes;
}

void pl_cost_node(const pl_problem *p, int op_index, const int64_t *split, pl_nodecost *out)
{
	pl_nodeparts pt;
	pl_cost_node_parts(p, op_index, split, &pt);
	pl_cost_fold(p, op_index, &pt, out);
}

void pl_edge_layouts(const pl_problem *p, int e, const int64_t *src_split, const int64_t *dst_split,
                     pl_layout *src, pl_layout *dst)
{
	const pl_edge *ed = &p->edges[e];
	const pl_op *so = &p->g->ops[ed->src_op], *d = &p->g->ops[ed->dst_op];
	if (ed->src_is_input)
		pl_op_input_layout(p->g, so, src_split, p->devices, ed->src_slot, src);
	else
		pl_op_output_layout(p->g, so, src_split, p->devices, ed->src_slot, src);
	pl_op_input_layout(p->g, d, dst_split, p->devices, ed->dst_slot, dst);
}

/* How many times edge e's forward redistribution runs a step: twice when
 * its consumer is recomputed (the recomputed forward redistributes its input
 * again, as Megatron's checkpointed layer re-runs its tensor-parallel
 * all-reduces) or regathers it (pl_regathers); else once. */
int pl_problem_edge_fwd_times(const pl_problem *p, int e)
{
	const pl_edge *ed = &p->edges[e];
	const uint8_t *rc = p->job.recompute;
	return (rc && pl_rc_reruns(rc[ed->dst_op])) ||
	               pl_regathers(p->g, rc, ed->dst_op, ed->dst_slot, p->saves_in[ed->dst_op])
	           ? 2
	           : 1;
}

/* Whether edge e's forward redistribution moves FP8: it carries the
 * activation input of an FP8 linear layer whose recipe casts the input
 * before it gathers it (docs/cost-model.md, "FP8 GEMMs"): Transformer
 * Engine's LayerNormLinear writes the norm's output in FP8 and gathers that
 * under sequence parallelism, forward and again backward
 * (transformer_engine/pytorch/module/layernorm_linear.py, v1.4:
 * gather_along_first_dim(ln_out)); torchtitan's tensor parallelism with
 * torchao's tensorwise recipe all-gathers in FP8 (Float8ColwiseParallel),
 * with rowwise "in high precision" (torchtitan's parallelize.py,
 * enable_float8_tensorwise_tp). */
static int fp8_moves(const pl_problem *p, int e)
{
	const pl_edge *ed = &p->edges[e];
	if (!p->fp8 || ed->src_is_input || !fp8_input_copy(p->c))
		return 0;
	int f = p->fp8[ed->dst_op] & PL_FP8_SLOT;
	return f && ed->dst_slot == 2 - f;
}

/* src, or (f8: the edge moves FP8) its copy in s8 with one byte an element
 * where no partial sum is pending (a sum is reduced before the cast) */
static const pl_layout *fp8_source(const pl_layout *src, int f8, pl_layout *s8)
{
	if (!f8 || src->partial || src->elem_bytes <= 1)
		return src;
	*s8 = *src;
	s8->elem_bytes = 1;
	return s8;
}

/* An edge's price from layouts put on f (pl_refine_layout): src -> dst
 * forward (fwd_times of it) and, with gradients, grad -> back (src without
 * its partial sums) backward; src and back are on side 0, dst and grad on
 * side 1 (an op's input and its gradient have one matrix). */
static double edge_cost_on(const pl_problem *p, const pl_refinement *f, const pl_layout *src,
                           const pl_layout *back, const pl_layout *dst, const pl_layout *grad,
                           int requires_grad, int fwd_times, int f8)
{
	pl_redist r;
	pl_layout s8;
	pl_redistribute_on(f, fp8_source(src, f8, &s8), dst, &r);
	double t = pl_cost_redist(p->c, &r) * fwd_times;
	if (requires_grad) {
		pl_redistribute_on(f, grad, back, &r);
		t += pl_cost_redist(p->c, &r);
	}
	return t;
}

/* with bk, times of the edge's step booked there (times x fwd_times of the
 * forward redistribution) */
static double edge_book_layouts(const pl_problem *p, const pl_layout *src, const pl_layout *dst,
                                const pl_layout *grad, int requires_grad, int fwd_times, int f8,
                                double times, pl_commbook *bk)
{
	pl_redist r;
	pl_layout s8;
	pl_redistribute(fp8_source(src, f8, &s8), dst, &r);
	double t = redist_cost(p->c, &r, times * fwd_times, bk) * fwd_times;
	if (requires_grad) {
		pl_layout back = *src;
		back.partial = 0;
		pl_redistribute(grad, &back, &r);
		t += redist_cost(p->c, &r, times, bk);
	}
	return t;
}

static double edge_cost_layouts(const pl_problem *p, const pl_layout *src, const pl_layout *dst,
                                const pl_layout *grad, int requires_grad, int fwd_times, int f8)
{
	return edge_book_layouts(p, src, dst, grad, requires_grad, fwd_times, f8, 0, NULL);
}

double pl_cost_edge_layouts(const pl_problem *p, int e, const pl_layout *src, const pl_layout *dst,
                            const pl_layout *grad)
{
	return edge_cost_layouts(p, src, dst, grad, p->g->tensors[p->edges[e].tensor].requires_grad,
	                         pl_problem_edge_fwd_times(p, e), fp8_moves(p, e));
}

double pl_overlap_exposed(double c, double first, double hide, double slow)
{
	if (!(c > 0))
		return c;
	first = fmin(fmax(first, 0), c);
	/* first + max(rest - hide, rest slow / (1 + slow)), as written so that
	 * slow = 0 is the gradient reduction's max(c - hide, first) exactly */
	return fmax(c - hide, first + (c - first) * slow / (1 + slow));
}

/* ---- context parallelism's ring (Transformer Engine's attention) ----
 *
 * A fused attention whose queries are cut over n ranks reads every key and
 * value: its layouts replicate K and V over those ranks. Transformer Engine
 * (Megatron-LM's and NeMo's --context-parallel-size, p2p exchange:
 * AttnFuncWithCPAndKVP2P) starts from K and V cut along the sequence as
 * the queries are, and computes the attention block by block around a
 * ring: each step's send of the next K/V block (in the backward, of the
 * dK/dV block too) runs beside the current block's kernel. An edge into
 * an attention's key or value is priced in two parts: from its producer's
 * layout to that start (exposed: Megatron's own collectives, before the
 * attention), then the ring (an all-gather of the block forward, a
 * reduce-scatter of its gradient backward, as the layouts price them), of
 * which n - 1 of n steps run beside the kernel: (n - 1)/n of the kernel can
 * hide it, shared by K and V (half each), at the slowdown a running
 * collective costs compute (PL_OVERLAP_SLOWDOWN, docs/cost-model.md). */

/* edge e carries an activation into an attention core's key or value */
static int cp_edge(const pl_problem *p, int e)
{
	const pl_edge *ed = &p->edges[e];
	const pl_op *d = &p->g->ops[ed->dst_op];
	return !ed->src_is_input && (pl_op_traits(d) & PL_OPT_ATTENTION_CORE) &&
	       (ed->dst_slot == 1 || ed->dst_slot == 2) &&
	       p->g->tensors[ed->tensor].role != PL_ROLE_PARAM;
}

/* The loops the queries (input 0) run over and input slot's keys or values
 * do not (the query positions), as bits; their cut is the ring's ranks */
static uint32_t cp_ring_loops(const pl_graph *g, const pl_op *op, int slot)
{
	uint32_t q = 0, kv = 0;
	for (int d = 0; d < g->tensors[op->in[0]].rank; d++)
		if (op->spec.in[0][d].count)
			q |= 1u << op->spec.in[0][d].first;
	for (int d = 0; d < g->tensors[op->in[slot]].rank; d++)
		if (op->spec.in[slot][d].count)
			kv |= 1u << op->spec.in[slot][d].first;
	return q & ~kv;
}

/* The attention's kernel seconds a micro-batch that the exchange of K or
 * V over n ranks can run beside (the cluster's pl_cp_exchange; K and V half
 * each): a ring, n - 1 of the n blocks of every forward run (twice when
 * recomputed) and of the backward; an asynchronous all-gather, the first
 * block of each forward run and the whole backward (its K/V gathered again
 * beside the first block, the gradients passed round the ring beside the
 * other n - 1); a synchronous one, none. */
static double cp_hide(const pl_problem *p, int op, const int64_t *split, int64_t n)
{
	if (n <= 1)
		return 0;
	pl_nodeparts pt;
	node_parts(p, op, split, &pt, NULL);
	int rc = p->job.recompute && pl_rc_reruns(p->job.recompute[op]);
	double fwd = pt.fwd_s * (rc ? 2 : 1), rest = (double)(n - 1) / (double)n;
	switch (p->c->cp_exchange) {
	case PL_CP_RING: return 0.5 * (fwd + pt.bwd_s) * rest;
	case PL_CP_ALLGATHER: return 0.5 * (fwd / (double)n + pt.bwd_s);
	case PL_CP_ALLGATHER_SYNC: return 0;
	case PL_CP_EXCHANGES: break;
	}
	return 0;
}

/* The ring's start for edge e (cp_edge) into the attention cut by split,
 * whose key or value layout is dst: dst with its sequence dimension cut
 * over the device axes the queries' sequence is (both forms of the
 * attention put the keys' sequence at the queries' place). Its ranks, or 1
 * when there is no ring (the queries not cut along a loop the keys lack, or
 * the keys not dividing). */
static int64_t cp_ring_start(const pl_problem *p, int e, const int64_t *split,
                             const pl_layout *dst, pl_layout *start)
{
	const pl_edge *ed = &p->edges[e];
	const pl_op *op = &p->g->ops[ed->dst_op];
	uint32_t ring = cp_ring_loops(p->g, op, ed->dst_slot);
	int64_t n = 1;
	for (int l = 0; l < op->spec.nloops; l++)
		if (ring >> l & 1)
			n *= split[l];
	if (n <= 1)
		return 1;
	pl_layout q;
	pl_op_input_layout(p->g, op, split, p->devices, 0, &q);
	int dq = -1;
	for (int d = 0; d < q.rank; d++)
		if (op->spec.in[0][d].count && ring >> op->spec.in[0][d].first & 1)
			dq = d;
	if (dq < 0 || dq >= dst->rank || dst->nmap[dq] || q.nmap[dq] < 1)
		return 1;
	int64_t cut = 1;
	for (int k = 0; k < q.nmap[dq]; k++)
		cut *= q.dm.size[q.map[dq][k]];
	if (cut != n || dst->shape[dq] % cut)
		return 1;
	*start = *dst;
	start->nmap[dq] = q.nmap[dq];
	memcpy(start->map[dq], q.map[dq], sizeof q.map[dq]);
	return n;
}

/* Edge e (cp_edge) from src to the attention whose key or value layout is
 * dst (its gradient's grad), the ring starting from start over n ranks
 * (cp_ring_start), `hide` seconds of the kernel beside it (cp_hide): the
 * seconds the step waits for; with bk, times of it booked there and the
 * exchange's hidden part in bk->hidden_s */
static double cp_edge_cost(const pl_problem *p, int e, const pl_layout *src, const pl_layout *dst,
                           const pl_layout *grad, const pl_layout *start, int64_t n, double hide,
                           double times, pl_commbook *bk)
{
	int rg = p->g->tensors[p->edges[e].tensor].requires_grad,
	    ft = pl_problem_edge_fwd_times(p, e);
	if (n <= 1)
		return edge_book_layouts(p, src, dst, grad, rg, ft, 0, times, bk);
	double before = edge_book_layouts(p, src, start, start, rg, ft, 0, times, bk);
	/* the backward exchanges the K/V chunks again beside their gradients'
	 * (each framework keeps only its own chunk from the forward: Transformer
	 * Engine's AttnFuncWithCPAndKVP2P and ...KVAllGather, PyTorch's
	 * _templated_ring_attention_backward) */
	double ring = edge_book_layouts(p, start, dst, grad, rg, ft + (rg ? 1 : 0), 0, times, bk);
	double x = pl_overlap_exposed(ring, 0, hide, PL_OVERLAP_SLOWDOWN);
	if (bk)
		bk->hidden_s += times * (ring - x);
	return before + x;
}

/* What an edge's table depends on beyond its ends' layouts: how often its
 * forward redistribution runs, and for a ring whether the attention's
 * forward runs twice (its kernel hides more) */
static int edge_runs(const pl_problem *p, int e)
{
	int rerun = cp_edge(p, e) && p->job.recompute &&
	            pl_rc_reruns(p->job.recompute[p->edges[e].dst_op]);
	return pl_problem_edge_fwd_times(p, e) + (rerun ? 4 : 0);
}

/* pl_cost_edge from scratch; with bk, times of it booked there */
static double edge_scratch(const pl_problem *p, int e, const int64_t *src_split,
                           const int64_t *dst_split, double times, pl_commbook *bk)
{
	const pl_edge *ed = &p->edges[e];
	pl_layout src, dst, grad;
	pl_edge_layouts(p, e, src_split, dst_split, &src, &dst);
	pl_op_input_grad_layout(p->g, &p->g->ops[ed->dst_op], dst_split, p->devices, ed->dst_slot,
	                        &grad);
	if (cp_edge(p, e)) {
		pl_layout start;
		int64_t n = cp_ring_start(p, e, dst_split, &dst, &start);
		return cp_edge_cost(p, e, &src, &dst, &grad, &start, n,
		                    cp_hide(p, ed->dst_op, dst_split, n), times, bk);
	}
	return edge_book_layouts(p, &src, &dst, &grad, p->g->tensors[ed->tensor].requires_grad,
	                         pl_problem_edge_fwd_times(p, e), fp8_moves(p, e), times, bk);
}

void pl_cost_edge_comm(const pl_problem *p, int e, const int64_t *src_split,
                       const int64_t *dst_split, double times, pl_commbook *bk)
{
	edge_scratch(p, e, src_split, dst_split, times, bk);
}

/* a linear layer's product: one weight and one activation, not the output
 * layer (what reaches the loss without another product) */
static int tp_overlap_gemm(const pl_graph *g, int o)
{
	const pl_op *op = &g->ops[o];
	if (!(pl_op_traits(op) & PL_OPT_LINEAR) || op->ninputs != 2)
		return 0;
	const pl_tensor *a = &g->tensors[op->in[0]], *b = &g->tensors[op->in[1]];
	if ((a->role == PL_ROLE_PARAM) == (b->role == PL_ROLE_PARAM))
		return 0;
	return !reaches_loss(g, op->out[0], 0);
}

double pl_cost_edge_exposed(const pl_problem *p, int e, const int64_t *src_split,
                            const int64_t *dst_split, double c)
{
	if (!(p->job.overlap & PL_OVERLAP_TP) || !(c > 0))
		return c;
	const pl_edge *ed = &p->edges[e];
	const pl_graph *g = p->g;
	if (ed->src_is_input)
		return c; /* a weight's gradient sum, not an activation */
	int gemm;
	const int64_t *split;
	double share = 1;
	const pl_tensor *t = &g->tensors[ed->tensor];
	if (tp_overlap_gemm(g, ed->src_op)) {
		/* its output's reduce-scatter (forward) and the gradient's all-gather
		 * (backward) run beside its products, shared by the tensor's readers */
		gemm = ed->src_op;
		split = src_split;
		share = 1.0 / (t->nconsumers > 1 ? t->nconsumers : 1);
	} else if (tp_overlap_gemm(g, ed->dst_op) && t->role != PL_ROLE_PARAM) {
		/* its input's all-gather (forward) and the input gradient's
		 * reduce-scatter (backward) */
		gemm = ed->dst_op;
		split = dst_split;
	} else {
		return c;
	}
	pl_layout src, dst;
	pl_redist r;
	pl_edge_layouts(p, e, src_split, dst_split, &src, &dst);
	pl_redistribute(&src, &dst, &r);
	int64_t n = 1;
	for (int k = 0; k < r.n; k++)
		if (r.p[k].kind != PL_PRIM_SLICE && r.p[k].group_size > n)
			n = r.p[k].group_size;
	if (n <= 1)
		return c;
	pl_nodeparts pt;
	pl_cost_node_parts(p, gemm, split, &pt);
	int rc = p->job.recompute && pl_rc_reruns(p->job.recompute[gemm]);
	double hide = share * (pt.fwd_s * (rc ? 2 : 1) + pt.bwd_s);
	/* one chunk's share has nothing beside it; the rest slows the GEMMs
	 * beside it as any collective does (PL_OVERLAP_SLOWDOWN) */
	return pl_overlap_exposed(c, c / (double)n, hide, PL_OVERLAP_SLOWDOWN);
}

/* ---- the memo of prices from scratch (pl_problem_memo) ---- */

/* slots per table at most (entries up to three quarters of them): then it
 * starts afresh. Edges: 24 bytes a slot and the entry's key (the two
 * splits); nodes: also their parts (320 bytes). rec's whole-job search of
 * GPT-3 13B on 16 devices keeps at most 3,700 edges and 100 nodes a point. */
#define MEMO_EDGES (1u << 20)
#define MEMO_NODES (1u << 16)

typedef struct memo_slot {
	uint64_t h;
	uint32_t key; /* 1 + the offset of its key words in keys; 0: free */
	uint32_t val; /* the offset of its value in vals */
	int32_t cls;
} memo_slot;

/* One table: per key (a class and its splits' words) a value of width
 * doubles. */
typedef struct memo_tab {
	memo_slot *slot;
	size_t cap, n; /* cap: a power of two */
	int64_t *keys;
	size_t nkeys, capkeys;
	double *vals;
	size_t nvals, capvals, width, max;
} memo_tab;

/* edges: a price; nodes: their parts (doubles alone) */
_Static_assert(sizeof(pl_nodeparts) % sizeof(double) == 0, "pl_nodeparts: doubles");
struct pl_cost_memo {
	memo_tab edge, node;
};

static void memo_tab_free(memo_tab *t)
{
	free(t->slot);
	free(t->keys);
	free(t->vals);
}

static int memo_tab_init(memo_tab *t, size_t width, size_t max)
{
	*t = (memo_tab){.cap = 1024, .width = width, .max = max};
	return (t->slot = pl_calloc(t->cap, sizeof *t->slot)) ? 0 : -1;
}

static uint64_t memo_hash(int cls, const int64_t *s, int ns, const int64_t *d, int nd)
{
	uint64_t h = pl_hash_bytes(PL_HASH_SEED, &cls, sizeof cls);
	h = pl_hash_bytes(h, s, sizeof *s * (size_t)ns);
	return pl_hash_bytes(h, d, sizeof *d * (size_t)nd);
}

/* the slot of the key (s then d, ns + nd words), or the free slot where it
 * would go */
static memo_slot *memo_find(const memo_tab *t, uint64_t h, int cls, const int64_t *s, int ns,
                            const int64_t *d, int nd)
{
	for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		memo_slot *q = &t->slot[i];
		if (!q->key)
			return q;
		/* (no keys stored at all when every key is empty: an op without
		 * loops) */
		const int64_t *k = t->keys ? t->keys + (q->key - 1) : NULL;
		if (q->h == h && q->cls == cls && (!ns || !memcmp(k, s, sizeof *s * (size_t)ns)) &&
		    (!nd || !memcmp(k + ns, d, sizeof *d * (size_t)nd)))
			return q;
	}
}

static int memo_grow(memo_tab *t)
{
	memo_slot *old = t->slot, *ns = pl_calloc(2 * t->cap, sizeof *ns);
	if (!ns)
		return -1;
	size_t oc = t->cap;
	t->slot = ns;
	t->cap *= 2;
	for (size_t i = 0; i < oc; i++)
		if (old[i].key) {
			size_t j = old[i].h & (t->cap - 1);
			while (ns[j].key)
				j = (j + 1) & (t->cap - 1);
			ns[j] = old[i];
		}
	free(old);
	return 0;
}

/* at least n more elements of size each at *buf (len used, cap room) */
static int memo_reserve(void **buf, size_t *cap, size_t len, size_t n, size_t size)
{
	if (len + n <= *cap)
		return 0;
	size_t c = 2 * (*cap + n);
	void *b = pl_realloc(*buf, size * c);
	if (!b)
		return -1;
	*buf = b;
	*cap = c;
	return 0;
}

/* room for one more entry of len key words: the table doubled at three
 * quarters full, or emptied at its most slots. 0, or -1 out of memory. */
static int memo_room(memo_tab *t, size_t len)
{
	if (4 * (t->n + 1) > 3 * t->cap) {
		if (t->cap >= t->max) {
			memset(t->slot, 0, sizeof *t->slot * t->cap);
			t->n = t->nkeys = t->nvals = 0;
		} else if (memo_grow(t))
			return -1;
	}
	if (memo_reserve((void **)&t->keys, &t->capkeys, t->nkeys, len, sizeof *t->keys) ||
	    memo_reserve((void **)&t->vals, &t->capvals, t->nvals, t->width, sizeof *t->vals))
		return -1;
	return 0;
}

/* the value kept for the key, or NULL; *h receives the key's hash */
static const double *memo_get(const memo_tab *t, uint64_t *h, int cls, const int64_t *s, int ns,
                              const int64_t *d, int nd)
{
	*h = memo_hash(cls, s, ns, d, nd);
	const memo_slot *q = memo_find(t, *h, cls, s, ns, d, nd);
	return q->key ? t->vals + q->val : NULL;
}

/* keeps v (width doubles) for the key (left out when out of memory) */
static void memo_put(memo_tab *t, uint64_t h, int cls, const int64_t *s, int ns, const int64_t *d,
                     int nd, const double *v)
{
	if (memo_room(t, (size_t)(ns + nd)))
		return;
	memo_slot *q = memo_find(t, h, cls, s, ns, d, nd);
	if (ns) /* (a node's key has no second split: d NULL) */
		memcpy(t->keys + t->nkeys, s, sizeof *s * (size_t)ns);
	if (nd)
		memcpy(t->keys + t->nkeys + ns, d, sizeof *d * (size_t)nd);
	memcpy(t->vals + t->nvals, v, sizeof *v * t->width);
	*q = (memo_slot){
	    .h = h, .key = (uint32_t)(t->nkeys + 1), .val = (uint32_t)t->nvals, .cls = cls};
	t->nkeys += (size_t)(ns + nd);
	t->nvals += t->width;
	t->n++;
}

int pl_problem_memo(pl_problem *p, int on)
{
	struct pl_cost_memo *m = p->memo;
	if (!on) {
		if (m) {
			memo_tab_free(&m->edge);
			memo_tab_free(&m->node);
			free(m);
			p->memo = NULL;
		}
		return 0;
	}
	if (m)
		return 0;
	m = pl_calloc(1, sizeof *m);
	if (!m || memo_tab_init(&m->edge, 1, MEMO_EDGES) ||
	    memo_tab_init(&m->node, sizeof(pl_nodeparts) / sizeof(double), MEMO_NODES)) {
		if (m) {
			memo_tab_free(&m->edge);
			memo_tab_free(&m->node);
		}
		free(m);
		return -1;
	}
	p->memo = m;
	return 0;
}

/* edge e from scratch, through p's memo when on */
static double edge_memo_scratch(const pl_problem *p, int e, const int64_t *src_split,
                                const int64_t *dst_split)
{
	if (!p->memo)
		return edge_scratch(p, e, src_split, dst_split, 0, NULL);
	const pl_edge *ed = &p->edges[e];
	memo_tab *t = &p->memo->edge;
	int cls = p->edge_class[e], ns = p->g->ops[ed->src_op].spec.nloops,
	    nd = p->g->ops[ed->dst_op].spec.nloops;
	uint64_t h;
	const double *v = memo_get(t, &h, cls, src_split, ns, dst_split, nd);
	if (v)
		return *v;
	double x = edge_scratch(p, e, src_split, dst_split, 0, NULL);
	memo_put(t, h, cls, src_split, ns, dst_split, nd, &x);
	return x;
}

/* op's parts from scratch through p's memo (on) */
static void node_memo_parts(const pl_problem *p, int op, const int64_t *split, pl_nodeparts *out)
{
	memo_tab *t = &p->memo->node;
	int cls = p->op_class[op], nl = p->g->ops[op].spec.nloops;
	uint64_t h;
	const double *v = memo_get(t, &h, cls, split, nl, NULL, 0);
	if (v) {
		memcpy(out, v, sizeof *out);
		return;
	}
	node_parts(p, op, split, out, NULL);
	memo_put(t, h, cls, split, nl, NULL, 0, (const double *)out);
}

double pl_cost_edge(const pl_problem *p, int e, const int64_t *src_split, const int64_t *dst_split)
{
	const pl_edge *ed = &p->edges[e];
	const double *tab = p->edge_tab[p->edge_class[e]];
	if (tab) {
		int a = candidate_of(p, ed->src_op, src_split),
		    b = a >= 0 ? candidate_of(p, ed->dst_op, dst_split) : -1;
		if (b >= 0)
			return tab[(size_t)a * (size_t)p->nstrat[ed->dst_op] + (size_t)b];
	}
	return edge_memo_scratch(p, e, src_split, dst_split);
}

/* ---- the problem ---- */

void pl_problem_free(pl_problem *p)
{
	if (!p)
		return;
	pl_problem_memo(p, 0);
	for (int o = 0; o < p->nops; o++) {
		int own = !p->op_class || p->op_class[o] == o;
		if (p->strat && own)
			free(p->strat[o]);
		if (p->node && own)
			free(p->node[o]);
		if (p->parts && own)
			free(p->parts[o]);
		if (p->op_edges)
			free(p->op_edges[o]);
	}
	for (int e = 0; e < p->nedges && p->edge_tab; e++)
		if ((!p->edge_class || p->edge_class[e] == e) &&
		    !(p->edge_borrowed && p->edge_borrowed[e]))
			free(p->edge_tab[e]);
	free(p->edge_borrowed);
	free(p->op_class);
	free(p->layout_class);
	free(p->edge_class);
	free(p->parts);
	free((void *)p->job.recompute);
	free(p->roles);
	free(p->stream);
	free(p->kept);
	free(p->runs_memo);
	free(p->saves_in);
	free(p->fp8);
	free(p->kept_fp8);
	free(p->nstrat);
	free(p->strat);
	free(p->node);
	free(p->edges);
	free(p->op_edges);
	free(p->op_nedges);
	free(p->param_owner);
	free(p->edge_tab);
	free(p);
}

/* ---- op classes ---- */

static int tensor_same(const pl_tensor *a, const pl_tensor *b)
{
	if (a->rank != b->rank || a->dtype != b->dtype || a->requires_grad != b->requires_grad ||
	    a->role != b->role)
		return 0;
	return !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank);
}

static int op_same_as(const pl_problem *p, int a, int b, int recompute_too)
{
	const pl_op *x = &p->g->ops[a], *y = &p->g->ops[b];
	if (x->type != y->type || x->ninputs != y->ninputs || x->noutputs != y->noutputs ||
	    x->has_strategy != y->has_strategy || x->replica_minor != y->replica_minor ||
	    memcmp(&x->spec, &y->spec, sizeof x->spec) ||
	    memcmp(x->attrs, y->attrs, sizeof *x->attrs))
		return 0;
	if (x->has_strategy && memcmp(x->strategy, y->strategy, sizeof(int64_t) * PL_MAX_LOOPS))
		return 0;
	/* priced by more than its own shapes: a view or a clone, a bias in a
	 * product's epilogue, a mask in a softmax's kernel */
	if (x->view != y->view || x->copy != y->copy ||
	    pl_op_fusion(p->g, x) != pl_op_fusion(p->g, y))
		return 0;
	if (recompute_too && p->job.recompute && p->job.recompute[a] != p->job.recompute[b])
		return 0;
	for (int i = 0; i < x->noutputs; i++)
		if ((p->kept && p->kept[x->out[i]] != p->kept[y->out[i]]) ||
		    (p->kept_fp8 && p->kept_fp8[x->out[i]] != p->kept_fp8[y->out[i]]))
			return 0;
	if (p->fp8 && p->fp8[a] != p->fp8[b])
		return 0;
	if (p->roles && memcmp(p->roles + (size_t)a * PL_MAX_LOOPS,
	                       p->roles + (size_t)b * PL_MAX_LOOPS, PL_MAX_LOOPS))
		return 0;
	if (p->stream && memcmp(p->stream + (size_t)a * PL_MAX_LOOPS,
	                        p->stream + (size_t)b * PL_MAX_LOOPS, PL_MAX_LOOPS))
		return 0;
	for (int i = 0; i < x->ninputs; i++) {
		if (!tensor_same(&p->g->tensors[x->in[i]], &p->g->tensors[y->in[i]]))
			return 0;
		if ((p->param_owner[x->in[i]] == a) != (p->param_owner[y->in[i]] == b))
			return 0;
		for (int j = 0; j < i; j++) /* the same tensor read twice */
			if ((x->in[i] == x->in[j]) != (y->in[i] == y->in[j]))
				return 0;
	}
	for (int i = 0; i < x->noutputs; i++)
		if (!tensor_same(&p->g->tensors[x->out[i]], &p->g->tensors[y->out[i]]))
			return 0;
	return 1;
}

static int op_same(const pl_problem *p, int a, int b)
{
	return op_same_as(p, a, b, 1);
}

/* the same layouts for every candidate: recompute changes only node costs */
static int op_same_layouts(const pl_problem *p, int a, int b)
{
	return op_same_as(p, a, b, 0);
}

/* the graph's hashes, made at load; else made here */
static uint64_t op_hash(const pl_problem *p, int o)
{
	return p->g->op_hash ? p->g->op_hash[o] : pl_op_hash(p->g, o);
}

/* the key of an edge's class: its ends' layout classes, slots and end
 * kind, and how often its forward redistribution runs (edge_runs) */
static void edge_key(const pl_problem *p, int e, int key[6])
{
	const pl_edge *a = &p->edges[e];
	key[0] = p->layout_class[a->src_op];
	key[1] = p->layout_class[a->dst_op];
	key[2] = a->src_slot;
	key[3] = a->dst_slot;
	key[4] = a->src_is_input;
	key[5] = edge_runs(p, e);
}

static uint64_t edge_hash(const pl_problem *p, int e)
{
	int key[6];
	edge_key(p, e, key);
	return pl_hash_bytes(PL_HASH_SEED, key, sizeof key);
}

static int edge_same(const pl_problem *p, int a, int b)
{
	int ka[6], kb[6];
	edge_key(p, a, ka);
	edge_key(p, b, kb);
	return !memcmp(ka, kb, sizeof ka);
}

/* Classes by hashing: cls[i] = the first j with same(p, j, i). Returns 0, or
 * -1 when out of memory. */
static int first_equal(const pl_problem *p, int n, uint64_t (*hash)(const pl_problem *, int),
                       int (*same)(const pl_problem *, int, int), int *cls)
{
	size_t cap = 16;
	while (cap < 2 * (size_t)n)
		cap *= 2;
	int *slot = pl_malloc(sizeof *slot * cap);
	uint64_t *hs = pl_malloc(sizeof *hs * (size_t)(n + 1));
	if (!slot || !hs) {
		free(slot);
		free(hs);
		return -1;
	}
	for (size_t i = 0; i < cap; i++)
		slot[i] = -1;
	for (int o = 0; o < n; o++) {
		hs[o] = hash(p, o);
		size_t i = hs[o] & (cap - 1);
		cls[o] = o;
		for (; slot[i] >= 0; i = (i + 1) & (cap - 1))
			if (hs[slot[i]] == hs[o] && same(p, slot[i], o)) {
				cls[o] = slot[i];
				break;
			}
		if (cls[o] == o)
			slot[i] = o;
	}
	free(slot);
	free(hs);
	return 0;
}

/* Ops with equal type, spec and tensors share candidates and node tables;
 * edges between the same layout classes (the op classes with recompute
 * flags ignored), slots, end kinds and consumer recompute share a table. */
static int classify_ops_and_edges(pl_problem *p)
{
	p->op_class = pl_malloc(sizeof *p->op_class * (size_t)(p->nops + 1));
	p->layout_class = pl_malloc(sizeof *p->layout_class * (size_t)(p->nops + 1));
	p->edge_class = pl_malloc(sizeof *p->edge_class * (size_t)(p->nedges + 1));
	if (!p->op_class || !p->layout_class || !p->edge_class)
		return -1;
	if (first_equal(p, p->nops, op_hash, op_same, p->op_class))
		return -1;
	if (!p->job.recompute)
		memcpy(p->layout_class, p->op_class, sizeof *p->op_class * (size_t)p->nops);
	else if (first_equal(p, p->nops, op_hash, op_same_layouts, p->layout_class))
		return -1;
	return first_equal(p, p->nedges, edge_hash, edge_same, p->edge_class);
}

/* p->kept: the activations some op saves for its backward (which tensors an
 * op saves does not depend on its strategy). -1 out of memory. */
static int keep_saved(pl_problem *p)
{
	const pl_graph *g = p->g;
	p->kept = pl_calloc((size_t)g->ntensors + 1, 1);
	p->saves_in = pl_calloc((size_t)g->nops + 1, 1);
	if (!p->kept || !p->saves_in)
		return -1;
	if (p->c->gemm_fp8) {
		p->fp8 = pl_calloc((size_t)g->nops + 1, 1);
		p->kept_fp8 = pl_calloc((size_t)g->ntensors + 1, 1);
		if (!p->fp8 || !p->kept_fp8)
			return -1;
		/* the first FP8 reader of an activation casts it for all
		 * (fp8_kernels) */
		for (int o = 0; o < g->nops; o++) {
			int f = pl_cost_fp8_op(p->c, g, o);
			p->fp8[o] = (uint8_t)f;
			if (!f)
				continue;
			int t = pl_view_base(g, g->ops[o].in[2 - f]);
			if (p->kept_fp8[t] & 2)
				p->fp8[o] |= PL_FP8_SHARED;
			p->kept_fp8[t] |= 2; /* a mark, cleared below */
		}
		for (int t = 0; t < g->ntensors; t++)
			p->kept_fp8[t] = 0;
	}
	int64_t ones[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		ones[l] = 1;
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		pl_opwork w;
		program_switches(p->c, &w);
		pl_op_rule_get(op->type)->work(g, op, ones, &w);
		p->saves_in[o] = w.saves_in;
		for (int i = 0; i < op->ninputs; i++) {
			if (!(w.saves_in >> i & 1))
				continue;
			if (p->fp8 && p->fp8[o] && i == 2 - (p->fp8[o] & PL_FP8_SLOT) &&
			    fp8_input_copy(p->c))
				p->kept_fp8[op->in[i]] = 1; /* kept as its FP8 copy */
			else /* a view keeps its base's whole storage */
				p->kept[pl_view_base(g, op->in[i])] = 1;
		}
		for (int i = 0; i < op->noutputs; i++)
			if (w.saves_out >> i & 1)
				p->kept[op->out[i]] = 1;
	}
	return 0;
}

/* Whether split keeps to degrees d and the problem's model span. */
static int admits_with(const pl_problem *p, int op, const int64_t *split, const pl_degrees *d)
{
	const uint8_t *roles = p->roles + (size_t)op * PL_MAX_LOOPS;
	if (p->max_model > 0) {
		int64_t model = 1;
		for (int l = 0; l < p->g->ops[op].spec.nloops; l++)
			if (roles[l] == PL_LOOP_MODEL)
				model *= split[l];
		if (model > p->max_model)
			return 0;
	}
	return pl_split_keeps_degrees(p->g, &p->g->ops[op], roles,
	                              p->stream ? p->stream + (size_t)op * PL_MAX_LOOPS : NULL,
	                              split, d);
}

int pl_problem_admits(const pl_problem *p, int op, const int64_t *split)
{
	return !p->roles || admits_with(p, op, split, &p->job.degrees);
}

/* The most devices one op's model loops may be cut over on a mesh of
 * `devices` (PL_MAX_TP_ANY: any): the job's max_tp when set; else
 * (PL_MAX_TP_NODE), on a mesh that spans nodes, one node's devices, or a
 * fixed tp larger than that. */
static int64_t model_span(const pl_job *job, const pl_cluster *c, int64_t devices)
{
	int64_t node = c->devices_per_node > 0 ? c->devices_per_node : devices, span;
	if (job->max_tp != PL_MAX_TP_NODE)
		span = job->max_tp > 0 ? job->max_tp : PL_MAX_TP_ANY;
	else if (devices <= node)
		span = PL_MAX_TP_ANY;
	else
		span = job->degrees.tp > node ? job->degrees.tp : node;
	return span >= devices ? PL_MAX_TP_ANY : span;
}

/* Whether the search may cut op o's loop l: the loop is splittable and,
 * where the cluster's loss runs gathered (pl_cluster.loss_gathered), it is
 * not a SoftmaxCrossEntropy's classes, nor (fixed degrees without context
 * parallelism) its sequence: the whole loss on every tensor-parallel rank,
 * cut only as the data is. */
int pl_problem_cuttable(const pl_problem *p, int o, int l)
{
	const pl_op *op = &p->g->ops[o];
	if (!op->spec.loop[l].splittable)
		return 0;
	if (op->type != PL_OP_SCE || !p->c->loss_gathered)
		return 1;
	const pl_tensor *x = &p->g->tensors[op->in[0]];
	if (op->spec.in[0][x->rank - 1].first == l)
		return 0;
	return !p->roles || p->job.degrees.cp > 1 ||
	       p->roles[(size_t)o * PL_MAX_LOOPS + (size_t)l] != PL_LOOP_SEQ;
}

/* Op o as the search may cut it: op itself, or (a loss the cluster runs
 * gathered) a copy in tmp whose classes are not splittable. */
static const pl_op *cut_view(const pl_problem *p, int o, pl_op *tmp)
{
	const pl_op *op = &p->g->ops[o];
	if (op->type != PL_OP_SCE || !p->c->loss_gathered)
		return op;
	*tmp = *op;
	for (int l = 0; l < op->spec.nloops; l++)
		tmp->spec.loop[l].splittable = (uint8_t)pl_problem_cuttable(p, o, l);
	return tmp;
}

/* Keeps op o's candidates from `from` on that keep degrees d (those
 * before stay); the new count */
static int keep_from(pl_problem *p, int o, int from, const pl_degrees *d)
{
	int nl = p->g->ops[o].spec.nloops, k = from;
	for (int s = from; s < p->nstrat[o]; s++) {
		const int64_t *sp = p->strat[o] + (size_t)s * (size_t)nl;
		if (!admits_with(p, o, sp, d))
			continue;
		if (k != s)
			memmove(p->strat[o] + (size_t)k * (size_t)nl, sp,
			        sizeof(int64_t) * (size_t)nl);
		k++;
	}
	return p->nstrat[o] = k;
}

/* Appends after op o's first `from` candidates its cuts over `want` of the
 * devices (replicated over the rest) that keep degrees d; the new count, or
 * -1 out of memory. */
static int append_product(pl_problem *p, int o, int from, int64_t want, const pl_degrees *d)
{
	pl_op tmp;
	const pl_op *op = cut_view(p, o, &tmp);
	int nl = op->spec.nloops, n = pl_op_enumerate_product(op, p->devices, want, NULL, 0);
	int64_t *st =
	    pl_realloc(p->strat[o], sizeof(int64_t) * ((size_t)(from + n) * (size_t)nl + 1));
	if (!st)
		return -1;
	p->strat[o] = st;
	p->nstrat[o] =
	    from + pl_op_enumerate_product(op, p->devices, want, st + (size_t)from * (size_t)nl, n);
	return keep_from(p, o, from, d);
}

/* The same over the largest divisor D/q (q >= 2) of the devices that has
 * such cuts: the new count (from: none), or -1 out of memory. */
static int replicated_from(pl_problem *p, int o, int from, const pl_degrees *d)
{
	for (int64_t q = 2; q <= p->devices; q++) {
		if (p->devices % q)
			continue;
		int k = append_product(p, o, from, p->devices / q, d);
		if (k != from)
			return k;
	}
	return from;
}

/* The free search's cuts over fewer than all devices: after op o's
 * candidates (each with product `full`) its cuts over every other divisor of
 * the devices, the largest first, each replicated over the rest of the mesh:
 * what a fixed degree gives an op (a weight's transpose cut over one
 * data-parallel group, a norm replicated over the tensor-parallel ranks, a
 * layer cut over one pipeline stage's devices), so that no fixed-degree
 * search finds a plan the free one does not. The new count, or -1 out of
 * memory. */
static int add_replicated(pl_problem *p, int o, int64_t full)
{
	pl_op tmp;
	const pl_op *op = cut_view(p, o, &tmp);
	size_t nl = (size_t)op->spec.nloops;
	for (int64_t q = 2; q <= p->devices; q++) {
		int64_t want = p->devices / q;
		if (p->devices % q || want >= full)
			continue;
		int n = pl_op_enumerate_product(op, p->devices, want, NULL, 0);
		if (!n)
			continue;
		int from = p->nstrat[o];
		int64_t *st =
		    pl_realloc(p->strat[o], sizeof(int64_t) * ((size_t)(from + n) * nl + 1));
		if (!st)
			return -1;
		p->strat[o] = st;
		p->nstrat[o] =
		    from + pl_op_enumerate_product(op, p->devices, want, st + (size_t)from * nl, n);
	}
	return p->nstrat[o];
}

/* Drops op o's candidates from `from` on that one before it already is. */
static int drop_repeats(pl_problem *p, int o, int from)
{
	int nl = p->g->ops[o].spec.nloops, kept = from;
	size_t row = sizeof(int64_t) * (size_t)nl;
	for (int s = from; s < p->nstrat[o]; s++) {
		const int64_t *sp = p->strat[o] + (size_t)s * (size_t)nl;
		int dup = 0;
		for (int t = 0; t < from && !dup; t++)
			dup = !memcmp(p->strat[o] + (size_t)t * (size_t)nl, sp, row);
		if (!dup)
			memmove(p->strat[o] + (size_t)kept++ * (size_t)nl, sp, row);
	}
	return p->nstrat[o] = kept;
}

/* Sequence parallelism left to the search: op o, reading no weight, also
 * gets its cuts over D/tp replicated over the tensor-parallel ranks, and
 * every candidate it would have without sequence parallelism (its k
 * candidates hold those that fill the mesh; the replicated ones of the
 * fallback are appended), so that the search is never worse than with
 * either. The new count, or -1 out of memory. */
static int add_unsequenced(pl_problem *p, int o, int k)
{
	int nl = p->g->ops[o].spec.nloops;
	pl_degrees off = p->job.degrees;
	off.seq_parallel = PL_SEQ_PAR_OFF;
	int covered = 0;
	for (int s = 0; s < k && !covered; s++) {
		const int64_t *sp = p->strat[o] + (size_t)s * (size_t)nl;
		covered = pl_split_product(&p->g->ops[o], sp) == p->devices &&
		          admits_with(p, o, sp, &off);
	}
	int n = append_product(p, o, k, p->devices / p->job.degrees.tp, &off);
	if (n >= 0)
		n = drop_repeats(p, o, k);
	if (n >= 0 && !covered && (n = replicated_from(p, o, n, &off)) >= 0)
		n = drop_repeats(p, o, k);
	return n;
}

/* Drops op o's candidates that break the job's fixed degrees. When none
 * keeps them on every device (an op whose only cut is the batch under dp x
 * tp), the op replicated: its cuts over the largest divisor of the devices
 * that keeps them (Megatron replicates such ops over the tensor-parallel
 * group). With sequence parallelism left to the search, an op that reads no
 * weight has the candidates of both (add_unsequenced). PL_EINVAL naming the
 * op when none is left; -1 out of memory. */
static pl_status keep_degrees(pl_problem *p, int o, pl_err *err)
{
	const pl_op *op = &p->g->ops[o];
	const pl_degrees *d = &p->job.degrees;
	int nl = op->spec.nloops, k = keep_from(p, o, 0, d);
	if (!k)
		k = replicated_from(p, o, 0, d);
	if (k > 0 && d->tp > 1 && d->seq_parallel == PL_SEQ_PAR_AUTO && p->stream &&
	    !pl_op_reads_weight(p->g, op))
		k = add_unsequenced(p, o, k);
	if (k < 0)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	if (k)
		return PL_OK;
	static const char *const role[] = {"model", "sequence", "experts", "batch"};
	char loops[256] = "";
	size_t n = 0;
	for (int l = 0; l < nl && n < sizeof loops; l++)
		n += (size_t)snprintf(loops + n, sizeof loops - n, "%s%lld (%s%s)", l ? ", " : "",
		                      (long long)op->spec.loop[l].size,
		                      role[p->roles[(size_t)o * PL_MAX_LOOPS + l]],
		                      op->spec.loop[l].splittable ? "" : ", kept whole");
	return pl_err_set(err, PL_EINVAL,
	                  "%s: op '%s': no cut of its loops %s over %lld devices keeps to data "
	                  "parallel %lld, tensor parallel %lld, context parallel %lld, expert "
	                  "parallel %lld (0: free)",
	                  p->g->path, op->name, loops, (long long)p->devices, (long long)d->dp,
	                  (long long)d->tp, (long long)d->cp, (long long)d->ep);
}

pl_status pl_problem_new(pl_problem **out, const pl_graph *g, const pl_cluster *c, pl_err *err)
{
	return pl_problem_new_job(out, g, c, NULL, err);
}

/* The job's settings (the recompute flags copied): 0, or -1 out of
 * memory. */
static int problem_job(pl_problem *p, const pl_job *job)
{
	p->job.micro_batches = job && job->micro_batches > 0 ? job->micro_batches : 1;
	p->job.stages = job && job->stages > 0 ? job->stages : 1;
	p->job.virtual_stages = job && job->virtual_stages > 1 ? job->virtual_stages : 1;
	p->job.max_virtual = job && job->max_virtual > 1 ? job->max_virtual : 0;
	p->job.overlap =
	    job ? job->overlap & (PL_OVERLAP_GRAD | PL_OVERLAP_TP | PL_OVERLAP_PARAM) : 0;
	p->job.zero = job && job->zero > 0 && job->zero < PL_ZERO_LEVELS ? job->zero : 0;
	if ((job && job->recompute) || pl_graph_recomputes(p->g)) {
		uint8_t *rc = pl_recompute_with_model(p->g, job ? job->recompute : NULL);
		if (!rc)
			return -1;
		p->job.recompute = rc;
	}
	if (job) {
		p->job.degrees = job->degrees;
		p->job.max_tp = job->max_tp;
	}
	p->job.replicas = job ? job->replicas : PL_REPLICAS_AUTO;
	return 0;
}

/* The per-op and per-edge arrays (at most one edge per op input), the
 * model span, whether replicated cuts are candidates, and the loop roles
 * and streamed loops where the degrees or the model span need them: 0, or
 * -1 out of memory. */
static int problem_arrays(pl_problem *p)
{
	const pl_graph *g = p->g;
	int maxe = 0;
	for (int o = 0; o < g->nops; o++)
		maxe += g->ops[o].ninputs;
	p->nstrat = pl_calloc((size_t)g->nops, sizeof *p->nstrat);
	p->strat = pl_calloc((size_t)g->nops, sizeof *p->strat);
	p->node = pl_calloc((size_t)g->nops, sizeof *p->node);
	p->parts = pl_calloc((size_t)g->nops, sizeof *p->parts);
	p->op_edges = pl_calloc((size_t)g->nops, sizeof *p->op_edges);
	p->op_nedges = pl_calloc((size_t)g->nops, sizeof *p->op_nedges);
	p->edges = pl_calloc((size_t)maxe + 1, sizeof *p->edges);
	p->edge_tab = pl_calloc((size_t)maxe + 1, sizeof *p->edge_tab);
	p->param_owner = pl_malloc(sizeof *p->param_owner * (size_t)(g->ntensors + 1));
	if (!p->nstrat || !p->strat || !p->node || !p->parts || !p->op_edges || !p->op_nedges ||
	    !p->edges || !p->edge_tab || !p->param_owner)
		return -1;
	for (int t = 0; t < g->ntensors; t++)
		p->param_owner[t] = -1;
	p->max_model = model_span(&p->job, p->c, p->devices);
	p->replicas =
	    !pl_degrees_any(&p->job.degrees) &&
	    (p->job.replicas == PL_REPLICAS_ALL ||
	     (p->job.replicas == PL_REPLICAS_AUTO && p->devices <= PL_REPLICAS_AUTO_DEVICES));
	if (pl_degrees_any(&p->job.degrees) || p->max_model > 0) {
		p->roles = pl_malloc((size_t)g->nops * PL_MAX_LOOPS + 1);
		if (!p->roles || pl_loop_roles(g, p->roles))
			return -1;
	}
	if (p->job.degrees.seq_parallel == PL_SEQ_PAR_OFF ||
	    (p->job.degrees.seq_parallel == PL_SEQ_PAR_AUTO && p->job.degrees.tp > 1)) {
		p->stream = pl_malloc((size_t)g->nops * PL_MAX_LOOPS + 1);
		if (!p->stream || pl_stream_loops(g, p->roles, p->stream))
			return -1;
	}
	return 0;
}

/* The edges (an activation from its producer; a param from the first op
 * that reads it, its owner, to each other reader; data none) and each op's
 * incident edges: 0, or -1 out of memory. */
static int problem_edges(pl_problem *p)
{
	const pl_graph *g = p->g;
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		for (int i = 0; i < op->ninputs; i++) {
			int t = op->in[i];
			const pl_tensor *tt = &g->tensors[t];
			pl_edge ed = {.dst_op = o, .dst_slot = i, .tensor = t};
			if (tt->producer >= 0) {
				ed.src_op = tt->producer;
				ed.src_slot = tt->producer_slot;
			} else if (tt->role == PL_ROLE_PARAM) {
				if (p->param_owner[t] < 0) {
					p->param_owner[t] = o;
					continue;
				}
				if (p->param_owner[t] == o)
					continue; /* the same op reads it twice: one layout */
				ed.src_op = p->param_owner[t];
				ed.src_is_input = 1;
				for (int j = 0; j < g->ops[ed.src_op].ninputs; j++)
					if (g->ops[ed.src_op].in[j] == t) {
						ed.src_slot = j;
						break;
					}
			} else {
				continue; /* data arrives in whatever layout the op asks for */
			}
			p->edges[p->nedges++] = ed;
		}
	}
	for (int e = 0; e < p->nedges; e++) {
		p->op_nedges[p->edges[e].src_op]++;
		if (p->edges[e].dst_op != p->edges[e].src_op)
			p->op_nedges[p->edges[e].dst_op]++;
	}
	for (int o = 0; o < g->nops; o++) {
		p->op_edges[o] = pl_malloc(sizeof(int) * (size_t)(p->op_nedges[o] + 1));
		if (!p->op_edges[o])
			return -1;
		p->op_nedges[o] = 0;
	}
	for (int e = 0; e < p->nedges; e++) {
		int s = p->edges[e].src_op, d = p->edges[e].dst_op;
		p->op_edges[s][p->op_nedges[s]++] = e;
		if (d != s)
			p->op_edges[d][p->op_nedges[d]++] = e;
	}
	return 0;
}

/* Class representative o's candidates: its annotation alone, else its
 * splits over the devices (replicated ones too where the problem offers
 * them), kept to the fixed degrees. */
static pl_status problem_candidates(pl_problem *p, int o, pl_err *err)
{
	const pl_graph *g = p->g;
	const pl_op *op = &g->ops[o];
	int nl = op->spec.nloops > 0 ? op->spec.nloops : 1;
	if (op->has_strategy) {
		pl_status cs = pl_op_check_split(op, op->strategy, p->devices, err);
		if (cs) {
			pl_err_prefix(err,
			              "%s: op '%s': the annotated strategy does not fit "
			              "%lld devices",
			              g->path, op->name, (long long)p->devices);
			return cs;
		}
		p->nstrat[o] = 1;
		p->strat[o] = pl_calloc((size_t)nl, sizeof(int64_t));
		if (!p->strat[o])
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		memcpy(p->strat[o], op->strategy, sizeof(int64_t) * (size_t)op->spec.nloops);
		return PL_OK;
	}
	/* with data parallelism fixed, an op with no batch to cut (a weight's
	 * transpose) is cut over one data-parallel group and replicated over
	 * the groups */
	int64_t dev = p->devices, dp = p->job.degrees.dp;
	if (p->roles && dp > 1 && dev % dp == 0 &&
	    !pl_op_can_cut_role(op, p->roles + (size_t)o * PL_MAX_LOOPS, PL_LOOP_DATA))
		dev /= dp;
	pl_op tmp;
	const pl_op *cv = cut_view(p, o, &tmp);
	int n = pl_op_enumerate(cv, dev, NULL, 0);
	p->strat[o] = pl_calloc((size_t)n * (size_t)nl + 1, sizeof(int64_t));
	if (!p->strat[o])
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	p->nstrat[o] = pl_op_enumerate(cv, dev, p->strat[o], n);
	if (p->replicas && n > 0 && add_replicated(p, o, pl_split_product(op, p->strat[o])) < 0)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	return p->roles ? keep_degrees(p, o, err) : PL_OK;
}

/* A problem is built in one order, each step needing the ones before: the
 * job's settings and recompute flags, the edges, the param owners, the kept
 * activations, the op classes, then each class's candidates (kept to the
 * fixed degrees). */
pl_status pl_problem_new_job(pl_problem **out, const pl_graph *g, const pl_cluster *c,
                             const pl_job *job, pl_err *err)
{
	pl_status st = PL_OK;
	pl_problem *p = pl_calloc(1, sizeof *p);
	if (!p)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	p->g = g;
	p->c = c;
	p->devices = pl_cluster_devices_total(c);
	if (problem_job(p, job)) {
		free(p);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	p->nops = g->nops;
	if (problem_arrays(p) || problem_edges(p) || keep_saved(p) || classify_ops_and_edges(p)) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (int o = 0; o < g->nops; o++) {
		if (p->op_class[o] != o) { /* same candidates as its class */
			p->nstrat[o] = p->nstrat[p->op_class[o]];
			p->strat[o] = p->strat[p->op_class[o]];
			continue;
		}
		if ((st = problem_candidates(p, o, err)))
			goto cleanup;
	}
	*out = p;
	p = NULL;
cleanup:
	pl_problem_free(p);
	return st;
}

const pl_nodecost *pl_problem_node(pl_problem *p, int o)
{
	int rep = p->op_class[o];
	if (rep != o)
		return p->node[o] = (pl_nodecost *)pl_problem_node(p, rep);
	if (!p->node[o]) {
		pl_nodecost *n = pl_malloc(sizeof *n * (size_t)p->nstrat[o]);
		pl_nodeparts *pt = pl_malloc(sizeof *pt * (size_t)p->nstrat[o]);
		if (!n || !pt) {
			free(n);
			free(pt);
			return NULL;
		}
		int nl = p->g->ops[o].spec.nloops;
		for (int s = 0; s < p->nstrat[o]; s++) { /* (threads build these: no memo) */
			node_parts(p, o, p->strat[o] + (size_t)s * nl, &pt[s], NULL);
			pl_cost_fold(p, o, &pt[s], &n[s]);
		}
		p->parts[o] = pt;
		p->node[o] = n;
	}
	return p->node[o];
}

double pl_problem_least_plan_memory(pl_problem *p)
{
	/* once per op class (its ops share the node table), summed in op order */
	double least = 0, *per = pl_malloc(sizeof *per * ((size_t)p->nops + 1));
	if (!per)
		return -1;
	for (int op = 0; op < p->nops; op++) {
		int c = p->op_class[op];
		if (c == op && (per[c] = pl_problem_least_memory(p, op)) < 0) {
			least = -1;
			break;
		}
		least += per[c];
	}
	free(per);
	return least;
}

const pl_nodeparts *pl_problem_parts(pl_problem *p, int o)
{
	if (!pl_problem_node(p, o))
		return NULL;
	return p->parts[p->op_class[o]];
}

void pl_problem_set_zero(pl_problem *p, int zero)
{
	p->job.zero = zero > 0 && zero < PL_ZERO_LEVELS ? zero : 0;
	for (int o = 0; o < p->nops; o++)
		if (p->op_class[o] == o && p->node[o])
			for (int s = 0; s < p->nstrat[o]; s++)
				pl_cost_fold(p, o, &p->parts[o][s], &p->node[o][s]);
}

double pl_problem_least_memory(pl_problem *p, int op)
{
	const pl_nodecost *n = pl_problem_node(p, op);
	if (!n)
		return -1;
	double m = n[0].mem_bytes;
	for (int k = 1; k < p->nstrat[op]; k++)
		if (n[k].mem_bytes < m)
			m = n[k].mem_bytes;
	return m;
}

/* Distinct layouts of one end of an edge: idx[s] is the class of strategy s. */
static int classify(pl_layout *uniq, int *idx, const pl_layout *all, int n)
{
	int nu = 0;
	for (int s = 0; s < n; s++) {
		int k = 0;
		while (k < nu && !pl_layout_equal(&uniq[k], &all[s]))
			k++;
		if (k == nu)
			uniq[nu++] = all[s];
		idx[s] = k;
	}
	return nu;
}

/* An edge table in the making: the distinct layouts of its two ends, their
 * pairs' prices (rows of distinct producer layouts, which threads can share
 * out), and per candidate its layout's index. The layouts' device matrices
 * are few (an op's matrix is its splits), and a pair's refinement depends
 * on them only: rows go in the order of their matrix (rows), so that a run
 * of rows shares the refinements against each consumer matrix. */
typedef struct edge_job {
	int e, ns, nd, nsu, ndu, rg, fwd_times, nsm, ndm;
	int cp; /* a ring's edge (cp_edge): priced per consumer candidate at the end */
	int f8; /* its forward redistribution moves FP8 (fp8_moves) */
	pl_layout *su, *du; /* du: input layout and gradient layout, side by side */
	int *si, *di;
	pl_devmat *sm, *dm; /* the distinct matrices of su and du */
	int *smi, *dmi;     /* per distinct layout: its matrix (dmi -1: grad's differs) */
	int *rows;          /* the rows of su, by matrix */
	double *pair;
} edge_job;

static void edge_job_free(edge_job *j)
{
	free(j->su);
	free(j->du);
	free(j->si);
	free(j->di);
	free(j->sm);
	free(j->dm);
	free(j->smi);
	free(j->dmi);
	free(j->rows);
	free(j->pair);
	memset(j, 0, sizeof *j);
}

/* the index of dm in the n distinct matrices of ms, added if new */
static int matrix_class(pl_devmat *ms, int *n, const pl_devmat *dm)
{
	int k = 0;
	while (k < *n && !pl_devmat_equal(&ms[k], dm))
		k++;
	if (k == *n)
		ms[(*n)++] = *dm;
	return k;
}

static int edge_job_matrices(edge_job *j)
{
	j->sm = pl_malloc(sizeof *j->sm * ((size_t)j->nsu + 1));
	j->dm = pl_malloc(sizeof *j->dm * ((size_t)j->ndu + 1));
	j->smi = pl_malloc(sizeof *j->smi * ((size_t)j->nsu + 1));
	j->dmi = pl_malloc(sizeof *j->dmi * ((size_t)j->ndu + 1));
	j->rows = pl_malloc(sizeof *j->rows * ((size_t)j->nsu + 1));
	if (!j->sm || !j->dm || !j->smi || !j->dmi || !j->rows)
		return -1;
	for (int a = 0; a < j->nsu; a++)
		j->smi[a] = matrix_class(j->sm, &j->nsm, &j->su[a].dm);
	for (int b = 0; b < j->ndu; b++)
		j->dmi[b] = pl_devmat_equal(&j->du[2 * b].dm, &j->du[2 * b + 1].dm)
		                ? matrix_class(j->dm, &j->ndm, &j->du[2 * b].dm)
		                : -1;
	int n = 0; /* counting sort of the rows by matrix */
	for (int c = 0; c < j->nsm; c++)
		for (int a = 0; a < j->nsu; a++)
			if (j->smi[a] == c)
				j->rows[n++] = a;
	return 0;
}

static int edge_job_plan(const pl_problem *p, int e, edge_job *j)
{
	const pl_edge *ed = &p->edges[e];
	int ns = p->nstrat[ed->src_op], nd = p->nstrat[ed->dst_op];
	const pl_op *so = &p->g->ops[ed->src_op], *dop = &p->g->ops[ed->dst_op];
	int nls = so->spec.nloops, nld = dop->spec.nloops;
	*j = (edge_job){.e = e,
	                .ns = ns,
	                .nd = nd,
	                .rg = p->g->tensors[ed->tensor].requires_grad,
	                .fwd_times = pl_problem_edge_fwd_times(p, e),
	                .f8 = fp8_moves(p, e),
	                .cp = cp_edge(p, e)};
	pl_layout *sl = pl_malloc(sizeof *sl * (size_t)ns),
	          *dl = pl_malloc(sizeof *dl * (size_t)nd * 2);
	j->su = pl_malloc(sizeof *j->su * (size_t)ns);
	j->du = pl_malloc(sizeof *j->du * (size_t)nd * 2);
	j->si = pl_malloc(sizeof *j->si * (size_t)ns);
	j->di = pl_malloc(sizeof *j->di * (size_t)nd);
	if (!sl || !dl || !j->su || !j->du || !j->si || !j->di)
		goto fail;
	for (int a = 0; a < ns; a++) {
		const int64_t *sp = p->strat[ed->src_op] + (size_t)a * nls;
		if (ed->src_is_input)
			pl_op_input_layout(p->g, so, sp, p->devices, ed->src_slot, &sl[a]);
		else
			pl_op_output_layout(p->g, so, sp, p->devices, ed->src_slot, &sl[a]);
	}
	/* a consumer end is its input layout and its gradient layout, side by side */
	for (int b = 0; b < nd; b++) {
		const int64_t *dp = p->strat[ed->dst_op] + (size_t)b * nld;
		pl_op_input_layout(p->g, dop, dp, p->devices, ed->dst_slot, &dl[2 * b]);
		pl_op_input_grad_layout(p->g, dop, dp, p->devices, ed->dst_slot, &dl[2 * b + 1]);
	}
	j->nsu = classify(j->su, j->si, sl, ns);
	for (int b = 0; b < nd; b++) {
		int k = 0;
		while (k < j->ndu && !(pl_layout_equal(&j->du[2 * k], &dl[2 * b]) &&
		                       pl_layout_equal(&j->du[2 * k + 1], &dl[2 * b + 1])))
			k++;
		if (k == j->ndu) {
			j->du[2 * j->ndu] = dl[2 * b];
			j->du[2 * j->ndu + 1] = dl[2 * b + 1];
			j->ndu++;
		}
		j->di[b] = k;
	}
	j->pair = pl_malloc(sizeof *j->pair * (size_t)j->nsu * (size_t)j->ndu);
	if (!j->pair || edge_job_matrices(j))
		goto fail;
	free(sl);
	free(dl);
	return 0;
fail:
	free(sl);
	free(dl);
	edge_job_free(j);
	return -1;
}

/* Prices the rows rows[i0..i1) of the distinct producer layouts. Per
 * consumer matrix it keeps the refinement against the current row's matrix
 * (ftag: which one) and the row's layout put on it (etag: which row); per
 * consumer layout, its input and gradient layouts put on the refinement
 * against the current row's matrix (btag: which matrix; rows come by
 * matrix, so a run of rows shares them). */
static void edge_job_rows(const pl_problem *p, edge_job *j, int i0, int i1)
{
	if (j->cp) /* priced per consumer candidate in edge_job_finish */
		return;
	size_t n = (size_t)j->ndm + 1, nb = (size_t)j->ndu + 1;
	pl_refinement *f = pl_malloc(sizeof *f * n);
	pl_layout *on = pl_malloc(sizeof *on * 2 * n);  /* the row's layout, and without partials */
	pl_layout *dg = pl_malloc(sizeof *dg * 2 * nb); /* consumer layouts put on f */
	int *ftag = pl_malloc(sizeof *ftag * n), *etag = pl_malloc(sizeof *etag * n),
	    *btag = pl_malloc(sizeof *btag * nb);
	int cached = f && on && dg && ftag && etag && btag;
	for (int c = 0; cached && c < j->ndm; c++)
		ftag[c] = etag[c] = -1;
	for (int b = 0; cached && b < j->ndu; b++)
		btag[b] = -1;
	for (int i = i0; i < i1; i++) {
		int a = j->rows[i], cs = j->smi[a];
		for (int b = 0; b < j->ndu; b++) {
			int cd = j->dmi[b];
			const pl_layout *dst = &j->du[2 * b], *grad = &j->du[2 * b + 1];
			double *out = &j->pair[(size_t)a * j->ndu + b];
			if (!cached || cd < 0) {
				*out =
				    edge_cost_layouts(p, &j->su[a], dst, grad, j->rg, j->fwd_times, j->f8);
				continue;
			}
			if (ftag[cd] != cs) {
				pl_refine(&j->sm[cs], &j->dm[cd], &f[cd]);
				ftag[cd] = cs;
				etag[cd] = -1;
			}
			if (etag[cd] != a) {
				pl_refine_layout(&f[cd], 0, &j->su[a], &on[2 * cd]);
				on[2 * cd + 1] = on[2 * cd];
				on[2 * cd + 1].partial = 0;
				etag[cd] = a;
			}
			if (btag[b] != cs) {
				pl_refine_layout(&f[cd], 1, dst, &dg[2 * b]);
				if (j->rg)
					pl_refine_layout(&f[cd], 1, grad, &dg[2 * b + 1]);
				btag[b] = cs;
			}
			*out = edge_cost_on(p, &f[cd], &on[2 * cd], &on[2 * cd + 1], &dg[2 * b],
			                    &dg[2 * b + 1], j->rg, j->fwd_times, j->f8);
		}
	}
	free(f);
	free(on);
	free(dg);
	free(ftag);
	free(etag);
	free(btag);
}

/* spreads the priced pairs over the candidates and publishes the table */
static int edge_job_finish(pl_problem *p, edge_job *j)
{
	double *tab = pl_malloc(sizeof *tab * (size_t)j->ns * (size_t)j->nd);
	if (tab) {
		for (int a = 0; !j->cp && a < j->ns; a++)
			for (int b = 0; b < j->nd; b++)
				tab[(size_t)a * j->nd + b] =
				    j->pair[(size_t)j->si[a] * j->ndu + j->di[b]];
		if (j->cp) { /* priced here per consumer candidate: its ring and kernel */
			const pl_edge *ed = &p->edges[j->e];
			int nl = p->g->ops[ed->dst_op].spec.nloops;
			for (int b = 0; b < j->nd; b++) {
				const int64_t *sp = p->strat[ed->dst_op] + (size_t)b * nl;
				const pl_layout *dl = &j->du[2 * j->di[b]];
				pl_layout start;
				int64_t n = cp_ring_start(p, j->e, sp, dl, &start);
				double k = cp_hide(p, ed->dst_op, sp, n);
				for (int u = 0; u < j->nsu; u++)
					j->pair[u] = cp_edge_cost(p, j->e, &j->su[u], dl, dl + 1, &start,
					                          n, k, 0, NULL);
				for (int a = 0; a < j->ns; a++)
					tab[(size_t)a * j->nd + b] = j->pair[j->si[a]];
			}
		}
		p->edge_tab[j->e] = tab;
	}
	edge_job_free(j);
	return tab ? 0 : -1;
}

/* A sibling's table of edge e, the same as p's would be (the forward
 * redistribution run as often, edge_runs), or NULL. */
static double *sibling_table(const pl_problem *p, int e)
{
	int ft = edge_runs(p, e);
	for (const pl_problem *q = p->share_next; q && q != p; q = q->share_next) {
		double *t = q->edge_tab[q->edge_class[e]];
		if (t && edge_runs(q, e) == ft)
			return t;
	}
	return NULL;
}

/* Whether a sibling has the table of class representative e: then p takes
 * it. */
static int borrow(pl_problem *p, int e)
{
	double *t = sibling_table(p, e);
	if (t) {
		p->edge_tab[e] = t;
		p->edge_borrowed[e] = 1;
	}
	return t != NULL;
}

int pl_problem_edge_priced(const pl_problem *p, int e)
{
	return p->edge_tab[p->edge_class[e]] || sibling_table(p, e);
}

int pl_problem_share(pl_problem *a, pl_problem *b)
{
	if (a == b || a->g != b->g || a->devices != b->devices || a->c != b->c)
		return -1;
	for (int o = 0; o < a->nops; o++)
		if (a->nstrat[o] != b->nstrat[o] || memcmp(a->strat[o], b->strat[o],
		                                           sizeof(int64_t) * (size_t)a->nstrat[o] *
		                                               (size_t)a->g->ops[o].spec.nloops))
			return -1;
	if (!a->edge_borrowed)
		a->edge_borrowed = pl_calloc((size_t)a->nedges + 1, 1);
	if (!b->edge_borrowed)
		b->edge_borrowed = pl_calloc((size_t)b->nedges + 1, 1);
	if (!a->edge_borrowed || !b->edge_borrowed)
		return -1;
	/* b (alone) goes in after a */
	b->share_next = a->share_next ? a->share_next : a;
	a->share_next = b;
	return 0;
}

int pl_problem_unshare(pl_problem *p)
{
	if (!p->share_next)
		return 0;
	for (int e = 0; e < p->nedges; e++)
		if (p->edge_borrowed[e]) {
			const pl_edge *ed = &p->edges[e];
			size_t n = (size_t)p->nstrat[ed->src_op] * (size_t)p->nstrat[ed->dst_op];
			double *t = pl_malloc(sizeof *t * (n + 1));
			if (!t)
				return -1;
			memcpy(t, p->edge_tab[e], sizeof *t * n);
			p->edge_tab[e] = t;
			p->edge_borrowed[e] = 0;
		}
	for (int e = 0; e < p->nedges; e++) /* members of a class point at its table */
		if (p->edge_class[e] != e && p->edge_tab[e])
			p->edge_tab[e] = p->edge_tab[p->edge_class[e]];
	pl_problem *q = p->share_next;
	while (q->share_next != p)
		q = q->share_next;
	q->share_next = p->share_next == q ? NULL : p->share_next;
	p->share_next = NULL;
	return 0;
}

const double *pl_problem_edge(pl_problem *p, int e)
{
	if (p->edge_tab[e])
		return p->edge_tab[e];
	if (p->edge_class[e] != e)
		return p->edge_tab[e] = (double *)pl_problem_edge(p, p->edge_class[e]);
	if (p->share_next && borrow(p, e))
		return p->edge_tab[e];
	edge_job j;
	if (edge_job_plan(p, e, &j))
		return NULL;
	edge_job_rows(p, &j, 0, j.nsu);
	edge_job_finish(p, &j);
	return p->edge_tab[e];
}

void pl_cost_plan(const pl_problem *p, int64_t *const *splits, pl_plancost *out,
                  pl_nodecost *per_op)
{
	memset(out, 0, sizeof *out);
	double span = pl_job_span(&p->job);
	for (int o = 0; o < p->nops; o++) {
		pl_nodecost n;
		pl_nodeparts pt;
		pl_jobshare js;
		pl_cost_node_parts(p, o, splits[o], &pt);
		pl_parts_split(p, o, &pt, &js);
		pl_cost_fold(p, o, &pt, &n);
		out->optimizer_s += js.step_compute_s / span;
		out->compute_s += n.compute_s;
		out->comm_s += n.comm_s;
		out->mem_bytes += n.mem_bytes;
		if (per_op)
			per_op[o] = n;
	}
	double scale = pl_job_step_scale(&p->job);
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		double t = pl_cost_edge(p, e, splits[ed->src_op], splits[ed->dst_op]);
		out->comm_s += t;
		if (per_op)
			per_op[ed->dst_op].comm_s += t;
	}
	if (scale != 1) {
		out->compute_s *= scale;
		out->comm_s *= scale;
		out->optimizer_s *= scale;
		for (int o = 0; per_op && o < p->nops; o++) {
			per_op[o].compute_s *= scale;
			per_op[o].comm_s *= scale;
		}
	}
	out->step_s = out->compute_s + out->comm_s;
}

/* ---- parallel preparation ---- */

/* Work shared out over threads in two rounds: first each edge table's
 * layouts and each node table, then the edge tables' rows in chunks (a
 * table of millions of pairs would otherwise keep one thread busy while the
 * others wait). Each item writes only its own part. */
typedef struct prep_chunk {
	int job, a0, a1;
} prep_chunk;

typedef struct prep {
	pl_problem *p;
	const int *work; /* round 0: edges (>= 0), op indices encoded as -1 - op */
	edge_job *jobs;  /* round 0 plans jobs[i] for work item i that is an edge */
	prep_chunk *chunks;
	atomic_int failed;
	double deadline; /* pl_now() seconds; 0 none */
	atomic_int late; /* a chunk found the deadline past: tables unfinished */
} prep;

static int prep_late(prep *w)
{
	if (w->deadline <= 0)
		return 0;
	if (atomic_load(&w->late))
		return 1;
	if (pl_now() <= w->deadline)
		return 0;
	atomic_store(&w->late, 1);
	return 1;
}

static void prep_item(void *ctx, int i)
{
	prep *w = ctx;
	int k = w->work[i];
	if (prep_late(w))
		return;
	int bad = k >= 0 ? edge_job_plan(w->p, k, &w->jobs[i]) : !pl_problem_node(w->p, -1 - k);
	if (bad)
		atomic_store(&w->failed, 1);
}

static void prep_chunk_rows(void *ctx, int i)
{
	prep *w = ctx;
	const prep_chunk *c = &w->chunks[i];
	if (prep_late(w))
		return;
	edge_job_rows(w->p, &w->jobs[c->job], c->a0, c->a1);
}

#define PREP_CHUNK_PAIRS 4096

int pl_problem_prepare(pl_problem *p, const int *edges, int nedges, int threads)
{
	return pl_problem_prepare_by(p, edges, nedges, threads, 0);
}

int pl_problem_prepare_by(pl_problem *p, const int *edges, int nedges, int threads, double deadline)
{
	/* representatives only: each table is written by exactly one thread */
	size_t nwork = (size_t)nedges + (size_t)p->nops + 1;
	int *work = pl_malloc(sizeof *work * nwork);
	edge_job *jobs = pl_calloc(nwork, sizeof *jobs);
	char *seen = pl_calloc((size_t)p->nops + 1, 1),
	     *queued = pl_calloc((size_t)p->nedges + 1, 1);
	prep_chunk *chunks = NULL;
	int rc = -1, n = 0, ne = 0;
	if (!work || !jobs || !seen || !queued)
		goto done;
	for (int i = 0; i < nedges; i++) {
		int e = p->edge_class[edges[i]];
		if (!p->edge_tab[e] && !queued[e] && !(p->share_next && borrow(p, e))) {
			queued[e] = 1;
			work[n++] = e;
		}
		const pl_edge *ed = &p->edges[e];
		seen[p->op_class[ed->src_op]] = seen[p->op_class[ed->dst_op]] = 1;
	}
	ne = n;
	for (int o = 0; o < p->nops; o++)
		if (seen[o] && !p->node[o])
			work[n++] = -1 - o;
	prep w = {.p = p, .work = work, .jobs = jobs, .deadline = deadline};
	atomic_init(&w.failed, 0);
	atomic_init(&w.late, 0);
	pl_parallel_for(n, threads, prep_item, &w);
	if (atomic_load(&w.failed))
		goto done;
	if (atomic_load(&w.late)) {
		rc = 1;
		goto done;
	}
	size_t nchunk = 0;
	for (int i = 0; i < ne; i++) {
		int rows = jobs[i].ndu > 0 ? PREP_CHUNK_PAIRS / jobs[i].ndu + 1 : jobs[i].nsu;
		nchunk += (size_t)(jobs[i].nsu + rows - 1) / (size_t)rows;
	}
	chunks = pl_malloc(sizeof *chunks * (nchunk + 1));
	if (!chunks)
		goto done;
	int nc = 0;
	for (int i = 0; i < ne; i++) {
		int rows = jobs[i].ndu > 0 ? PREP_CHUNK_PAIRS / jobs[i].ndu + 1 : jobs[i].nsu;
		for (int a = 0; a < jobs[i].nsu; a += rows)
			chunks[nc++] =
			    (prep_chunk){i, a, a + rows < jobs[i].nsu ? a + rows : jobs[i].nsu};
	}
	w.chunks = chunks;
	pl_parallel_for(nc, threads, prep_chunk_rows, &w);
	if (atomic_load(&w.late)) { /* no table published half priced */
		rc = 1;
		goto done;
	}
	rc = 0;
	for (int i = 0; i < ne; i++)
		if (edge_job_finish(p, &jobs[i]))
			rc = -1;
done:
	for (int i = 0; jobs && i < ne; i++)
		edge_job_free(&jobs[i]);
	free(jobs);
	free(chunks);
	free(work);
	free(seen);
	free(queued);
	return rc;
}
