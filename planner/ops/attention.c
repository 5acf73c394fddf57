/* Attention: fused scaled dot-product attention, as ONNX's Attention
 * (opset 23) states it in its 4-D form and as FlashAttention runs it:
 *
 *   Y = softmax(scale * Q K^T [+ causal mask]) V
 *   Q [b, hq, s, d], K [b, hkv, t, d], V [b, hkv, t, dv] -> Y [b, hq, s, dv]
 *
 * with hq a multiple of hkv (grouped-query attention: query head h reads
 * key/value head h / (hq / hkv)). The kernel never stores the s x t scores:
 * it keeps Q, K, V, Y and one log-sum-exp per query row, and the backward
 * recomputes the scores from them (Dao et al., FlashAttention-2, 2023).
 *
 * Loops: batch, key/value heads, the query heads of a group, query
 * positions, key positions, head size, value head size. Batch, key/value
 * heads and query positions may be cut (a cut of the query positions is
 * context parallelism: every rank needs all keys and values, which the
 * layouts replicate); the group (a later loop of the query's head
 * dimension), the keys (softmax's axis) and the head sizes stay whole. */
#include <math.h>

#include "planner/ops/internal.h"

enum { L_B, L_KV, L_G, L_S, L_T, L_D, L_DV };

pl_status pl__infer_attention(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *q = IN(g, op, 0), *k = IN(g, op, 1), *v = IN(g, op, 2);
	if (q->rank != 4 || k->rank != 4 || v->rank != 4)
		return pl_err_set(err, PL_EINVAL,
		                  "expected Q, K and V of rank 4 ([batch, heads, sequence, head "
		                  "size]), got ranks %d, %d, %d",
		                  q->rank, k->rank, v->rank);
	if (q->dtype != k->dtype || q->dtype != v->dtype || q->dtype == PL_DT_INT32 ||
	    q->dtype == PL_DT_INT64)
		return pl_err_set(err, PL_EINVAL,
		                  "expected Q, K and V of one floating-point dtype, got %s, %s, %s",
		                  pl_dtype_name(q->dtype), pl_dtype_name(k->dtype),
		                  pl_dtype_name(v->dtype));
	int64_t b = q->shape[0], hq = q->shape[1], s = q->shape[2], d = q->shape[3];
	int64_t hkv = k->shape[1], t = k->shape[2], dv = v->shape[3];
	if (k->shape[0] != b || v->shape[0] != b || v->shape[1] != hkv || v->shape[2] != t ||
	    k->shape[3] != d)
		return pl_err_set(err, PL_EINVAL,
		                  "shapes do not agree: expected Q [b, hq, s, d], K [b, hkv, t, "
		                  "d] and V [b, hkv, t, dv]");
	if (hq % hkv)
		return pl_err_set(err, PL_EINVAL,
		                  "%lld query heads are not a multiple of %lld key/value heads",
		                  (long long)hq, (long long)hkv);
	int64_t shape[4] = {b, hq, s, dv};
	pl__set_out(g, op, 0, 4, shape, q->dtype);
	pl__loop_add(op, b, PL_LOOP_PARALLEL, 1);
	pl__loop_add(op, hkv, PL_LOOP_PARALLEL, 1);
	pl__loop_add(op, hq / hkv, PL_LOOP_PARALLEL, 0);
	pl__loop_add(op, s, PL_LOOP_PARALLEL, 1);
	pl__loop_add(op, t, PL_LOOP_PARALLEL, 0);
	pl__loop_add(op, d, PL_LOOP_REDUCE, 0);
	pl__loop_add(op, dv, PL_LOOP_PARALLEL, 0);
	/* Q: b, (kv heads, group), s, d; K: b, kv heads, t, d; V: ... dv */
	static const int qmap[4] = {L_B, L_KV, L_S, L_D}, kmap[4] = {L_B, L_KV, L_T, L_D},
	                 vmap[4] = {L_B, L_KV, L_T, L_DV}, ymap[4] = {L_B, L_KV, L_S, L_DV};
	for (int i = 0; i < 4; i++) {
		pl__map(op, 0, 0, i, qmap[i]);
		pl__map(op, 0, 1, i, kmap[i]);
		pl__map(op, 0, 2, i, vmap[i]);
		pl__map(op, 1, 0, i, ymap[i]);
	}
	op->spec.in[0][1].count = op->spec.out[0][1].count = 2; /* heads: kv head major */
	return PL_OK;
}

/* FLOPs as FlashAttention-2's benchmarks count them: 4 s t d per head
 * forward (two products; half of it under a causal mask), the backward's
 * five products 2.5 times that (with dv = d) */
void pl__work_attention(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	const pl_loop *L = op->spec.loop;
	double rows = (double)(L[L_B].size / split[L_B]) * (double)(L[L_KV].size / split[L_KV]) *
	              (double)L[L_G].size * (double)(L[L_S].size / split[L_S]);
	double t = (double)L[L_T].size, d = (double)L[L_D].size, dv = (double)L[L_DV].size;
	double seen = op->attrs.causal ? 0.5 : 1.0; /* the scores computed */
	double scores = rows * t * seen;
	double qb = pl__local_in_bytes(g, op, 0, split), kb = pl__local_in_bytes(g, op, 1, split),
	       vb = pl__local_in_bytes(g, op, 2, split), yb = pl__local_out_bytes(g, op, 0, split);
	double lse = 4 * rows; /* one fp32 log-sum-exp per query row */
	w->gemm_flops_fwd = 2 * scores * (d + dv);
	w->vec_flops_fwd = 5 * scores; /* scale, max, exp, sum, rescale */
	w->bytes_fwd = qb + kb + vb + yb + lse;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	/* scores again, dV = P^T dY, dP = dY V^T, dQ = dS K, dK = dS^T Q */
	w->gemm_flops_bwd = 2 * scores * (3 * d + 2 * dv);
	w->vec_flops_bwd = 5 * scores;                    /* exp, dS = P (dP - D) */
	w->bytes_bwd = 2 * (qb + kb + vb) + 2 * yb + lse; /* + dY; dQ, dK, dV written */
	w->kernels_bwd = 2; /* D = rowsum(dY Y), then the fused backward */
	w->saved_bytes = yb + lse;
	w->saves_out = 1;
	for (int i = 0; i < 3; i++)
		if (IN(g, op, i)->role != PL_ROLE_PARAM) {
			w->saved_bytes += i == 0 ? qb : i == 1 ? kb : vb;
			w->saves_in |= (uint8_t)(1u << i);
		}
}
