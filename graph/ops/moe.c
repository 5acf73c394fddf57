/* Mixture of experts, GShard style. MoEDispatch(x [T, h], logits [T, E])
 * sends every token to its top_k experts: out [E, G * Cg, h], where the T
 * tokens form G = attrs.groups consecutive groups of Tg = T / G and each
 * expert takes at most Cg = ceil(capacity_factor * top_k * Tg / E) tokens of
 * each group (the rest are dropped). MoECombine(eo [E, G * Cg, h], logits)
 * brings the experts' outputs back: y [T, h], each token the sum of its kept
 * experts' rows weighted by the softmax of its top_k logits.
 *
 * Loops: the groups (g) and the hidden size (h), both parallel. Splitting g
 * gives every rank whole groups, so routing needs nothing from other ranks and
 * a sharded run drops exactly the tokens a single device drops. The expert
 * dimension is not a loop of these ops: expert parallelism is the batched
 * expert MatMuls splitting it, and the redistribution between a dispatch
 * (capacity split by g) and an expert MatMul (experts split on the same
 * devices) is the all-to-all. */
#include "graph/ops/internal.h"

int64_t pl_moe_capacity(const pl_attrs *a, int64_t tokens, int64_t experts)
{
	double c =
	    a->capacity_factor * (double)a->top_k * (double)(tokens / a->groups) / (double)experts;
	if (!(c < 9e15)) /* a size the format can hold, and no cast past 64 bits */
		return INT64_MAX;
	int64_t cap = (int64_t)c;
	return cap < c ? cap + 1 : cap > 0 ? cap : 1;
}

pl_status pl__infer_moe(pl_graph *g, pl_op *op, pl_err *err)
{
	int dispatch = op->type == PL_OP_MOE_DISPATCH;
	const pl_tensor *x = IN(g, op, 0), *lg = IN(g, op, 1);
	const pl_attrs *a = op->attrs;
	if (lg->rank != 2)
		return pl_err_set(err, PL_EINVAL,
		                  "router logits '%s' must be [tokens, experts] (it has %d "
		                  "dimensions)",
		                  lg->name, lg->rank);
	int64_t T = lg->shape[0], E = lg->shape[1];
	if (dispatch && (x->rank != 2 || x->shape[0] != T))
		return pl_err_set(err, PL_EINVAL,
		                  "tokens '%s' must be [%lld, hidden] to match the router logits "
		                  "'%s'",
		                  x->name, (long long)T, lg->name);
	if (a->top_k > E)
		return pl_err_set(err, PL_EINVAL, "attrs.top_k %lld is more than the %lld experts",
		                  (long long)a->top_k, (long long)E);
	if (T % a->groups)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.groups %lld does not divide the %lld tokens of '%s'",
		                  (long long)a->groups, (long long)T, lg->name);
	int64_t C;
	if (pl_size_mul(a->groups, pl_moe_capacity(a, T, E), &C) || C > PL_MAX_DIM)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.groups x capacity (capacity_factor x top_k x tokens / "
		                  "experts) is past 9e15");
	if (!dispatch && (x->rank != 3 || x->shape[0] != E || x->shape[1] != C))
		return pl_err_set(err, PL_EINVAL,
		                  "expert outputs '%s' must be [%lld experts, %lld slots, hidden] "
		                  "(groups x capacity for these attrs)",
		                  x->name, (long long)E, (long long)C);
	int64_t h = x->shape[x->rank - 1]; /* rank 2 (dispatch) or 3, checked above */
	int lgp = pl__loop_add(op, a->groups, PL_LOOP_PARALLEL, 1);
	int lh = pl__loop_add(op, h, PL_LOOP_PARALLEL, 1);
	pl__map(op, 0, 1, 0, lgp); /* logits: tokens by group, experts whole */
	if (dispatch) {
		int64_t shape[3] = {E, C, h};
		pl__set_out(g, op, 0, 3, shape, x->dtype);
		pl__map(op, 0, 0, 0, lgp);
		pl__map(op, 0, 0, 1, lh);
		pl__map(op, 1, 0, 1, lgp);
		pl__map(op, 1, 0, 2, lh);
	} else {
		int64_t shape[2] = {T, h};
		pl__set_out(g, op, 0, 2, shape, x->dtype);
		pl__map(op, 0, 0, 1, lgp);
		pl__map(op, 0, 0, 2, lh);
		pl__map(op, 1, 0, 0, lgp);
		pl__map(op, 1, 0, 1, lh);
	}
	return PL_OK;
}

void pl__work_moe(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	int dispatch = op->type == PL_OP_MOE_DISPATCH;
	double xb = pl__local_in_bytes(g, op, 0, split), lb = pl__local_in_bytes(g, op, 1, split);
	double ob = pl__local_out_bytes(g, op, 0, split);
	double tokens = pl__local_in(g, op, 1, split) / (double)IN(g, op, 1)->shape[1];
	double k = (double)op->attrs->top_k, E = (double)IN(g, op, 1)->shape[1];
	double h = (double)OUT(g, op, 0)->shape[OUT(g, op, 0)->rank - 1] / (double)split[1];
	/* routing: softmax and top-k over each token's logits */
	w->vec_flops_fwd = tokens * E * (4 + k);
	w->bytes_fwd = xb + lb + ob;
	w->kernels_fwd = 2;
	w->vec_flops_bwd = w->vec_flops_fwd;
	w->bytes_bwd = xb + lb + ob;
	w->kernels_bwd = 2;
	w->saved_bytes = lb; /* the routing is recomputed from the logits */
	w->saves_in = 2;
	if (!dispatch) {
		w->vec_flops_fwd += 2 * tokens * k * h;
		w->vec_flops_bwd += 4 * tokens * k * h;
		w->saved_bytes += xb; /* the logits' gradient reads the experts' rows */
		w->saves_in |= 1;
	}
}
