/* Attention: fused scaled dot-product attention, as ONNX's Attention
 * (opset 23) states it and as FlashAttention runs it:
 *
 *   Y = softmax(scale * Q K^T [+ causal mask]) V        per query head
 *   4-D: Q [b, hq, s, d], K [b, hkv, t, d], V [b, hkv, t, dv] -> Y [b, hq, s, dv]
 *   3-D: Q [b, s, hq*d], K [b, t, hkv*d], V [b, t, hkv*dv] -> Y [b, s, hq*dv]
 *        (q_num_heads hq and kv_num_heads hkv given; the layout a
 *        transformer's projections write, FlashAttention's own)
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
 * layouts replicate); the group, the keys (softmax's axis) and the head
 * sizes stay whole. A heads dimension is cut by its key/value heads (the
 * first of its loops; in the 3-D form the head size follows inside it).
 *
 * The loops' order is the order of the device axes a strategy cuts them
 * over (graph/layout.c: the first loop takes the most significant axis).
 * The 3-D form puts the query positions before the heads, as the tensors
 * [b, s, heads x d] around it do: under tensor x context parallelism the
 * heads then land on the tensor-parallel ranks and the sequence on the
 * context-parallel ones, the layout Megatron and Transformer Engine run,
 * and q and the output need no move between the projections and the
 * kernel. The 4-D form keeps [b, heads, s] order. */
#include <string.h>

#include "graph/ops/internal.h"

/* the logical loops; loop_order() gives each one's place in spec.loop */
enum { L_B, L_KV, L_G, L_S, L_T, L_D, L_DV, L_N };

/* pos[L_*]: where each loop sits in an Attention of Q's rank r */
static const int *loop_order(int r)
{
	static const int four[L_N] = {0, 1, 2, 3, 4, 5, 6};
	/* B, S, KV, G, T, D, DV */
	static const int three[L_N] = {[L_B] = 0, [L_S] = 1, [L_KV] = 2, [L_G] = 3,
	                               [L_T] = 4, [L_D] = 5,  [L_DV] = 6};
	return r == 3 ? three : four;
}

/* The sizes of Q [b, hq, s, d], K and V of an Attention in either form
 * (its tensors' global shapes): 0, or -1 when they do not agree. */
static int attention_dims(const pl_graph *g, const pl_op *op, int64_t dims[7])
{
	const pl_tensor *q = IN(g, op, 0), *k = IN(g, op, 1), *v = IN(g, op, 2);
	int64_t b = q->shape[0], hq, hkv, s, t, d, dv;
	if (q->rank == 3) {
		hq = op->attrs->q_heads;
		hkv = op->attrs->kv_heads;
		if (hq < 1 || hkv < 1 || q->shape[2] % hq || v->shape[2] % hkv)
			return -1;
		s = q->shape[1];
		t = k->shape[1];
		d = q->shape[2] / hq;
		dv = v->shape[2] / hkv;
		int64_t kd;
		if (pl_size_mul(hkv, d, &kd) || k->shape[2] != kd || v->shape[1] != t)
			return -1;
	} else {
		hq = q->shape[1];
		hkv = k->shape[1];
		s = q->shape[2];
		t = k->shape[2];
		d = q->shape[3];
		dv = v->shape[3];
		if (v->shape[1] != hkv || v->shape[2] != t || k->shape[3] != d)
			return -1;
	}
	if (k->shape[0] != b || v->shape[0] != b || hq % hkv)
		return -1;
	int64_t out[7] = {b, hkv, hq / hkv, s, t, d, dv};
	memcpy(dims, out, sizeof out);
	return 0;
}

void pl_attention_head_sizes(const pl_op *op, int64_t *d, int64_t *dv)
{
	/* the head sizes sit at the same places in both orders */
	*d = op->spec.loop[loop_order(4)[L_D]].size;
	*dv = op->spec.loop[loop_order(4)[L_DV]].size;
}

pl_status pl__infer_attention(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *q = IN(g, op, 0), *k = IN(g, op, 1), *v = IN(g, op, 2);
	int r = q->rank;
	if ((r != 3 && r != 4) || k->rank != r || v->rank != r)
		return pl_err_set(
		    err, PL_EINVAL,
		    "expected Q, K and V all of rank 4 ([batch, heads, sequence, head "
		    "size]) or all of rank 3 ([batch, sequence, heads x head size], "
		    "with q_num_heads and kv_num_heads), got ranks %d, %d, %d",
		    q->rank, k->rank, v->rank);
	if (q->dtype != k->dtype || q->dtype != v->dtype || q->dtype == PL_DT_INT32 ||
	    q->dtype == PL_DT_INT64)
		return pl_err_set(err, PL_EINVAL,
		                  "expected Q, K and V of one floating-point dtype, got %s, %s, %s",
		                  pl_dtype_name(q->dtype), pl_dtype_name(k->dtype),
		                  pl_dtype_name(v->dtype));
	if (r == 3 && (op->attrs->q_heads < 1 || op->attrs->kv_heads < 1))
		return pl_err_set(err, PL_EINVAL,
		                  "the 3-D form needs attrs q_num_heads and kv_num_heads");
	int64_t n[7];
	if (attention_dims(g, op, n))
		return pl_err_set(
		    err, PL_EINVAL, "%s",
		    r == 4
		        ? "shapes do not agree: expected Q [b, hq, s, d], K [b, hkv, t, d] and V "
		          "[b, hkv, t, dv], hq a multiple of hkv"
		        : "shapes do not agree: expected Q [b, s, hq x d], K [b, t, hkv x d] and "
		          "V [b, t, hkv x dv] for q_num_heads hq, a multiple of kv_num_heads hkv");
	int64_t hq, hqdv;
	if (pl_size_mul(n[L_KV], n[L_G], &hq) || pl_size_mul(hq, n[L_DV], &hqdv))
		return pl_err_set(err, PL_EINVAL,
		                  "the heads times the value size overflows 64 bits (attrs "
		                  "q_num_heads or the inputs' shapes)");
	int64_t shape[4] = {n[L_B], hq, n[L_S], n[L_DV]}, flat[3] = {n[L_B], n[L_S], hqdv};
	pl__set_out(g, op, 0, r, r == 4 ? shape : flat, q->dtype);
	const int *at = loop_order(r);
	static const uint8_t kind[L_N] = {PL_LOOP_PARALLEL, PL_LOOP_PARALLEL, PL_LOOP_PARALLEL,
	                                  PL_LOOP_PARALLEL, PL_LOOP_PARALLEL, PL_LOOP_REDUCE,
	                                  PL_LOOP_PARALLEL},
	                     cut[L_N] = {1, 1, 0, 1, 0, 0, 0};
	int of[L_N]; /* the logical loop at each place */
	for (int l = 0; l < L_N; l++)
		of[at[l]] = l;
	for (int p = 0; p < L_N; p++)
		pl__loop_add(op, n[of[p]], (pl_loopkind)kind[of[p]], cut[of[p]]);
	/* 4-D: Q b, (kv heads, group), s, d; K b, kv heads, t, d; V ... dv.
	 * 3-D: Q b, s, (kv heads, group, d); K b, t, (kv heads, d); V ... */
	static const int qmap[4] = {L_B, L_KV, L_S, L_D}, kmap[4] = {L_B, L_KV, L_T, L_D},
	                 vmap[4] = {L_B, L_KV, L_T, L_DV}, ymap[4] = {L_B, L_KV, L_S, L_DV};
	static const int qmap3[3] = {L_B, L_S, L_KV}, kmap3[3] = {L_B, L_T, L_KV};
	for (int i = 0; i < r; i++) {
		pl__map(op, 0, 0, i, at[r == 4 ? qmap[i] : qmap3[i]]);
		pl__map(op, 0, 1, i, at[r == 4 ? kmap[i] : kmap3[i]]);
		pl__map(op, 0, 2, i, at[r == 4 ? vmap[i] : kmap3[i]]);
		pl__map(op, 1, 0, i, at[r == 4 ? ymap[i] : qmap3[i]]);
	}
	int heads = r == 4 ? 1 : 2; /* cut by its first loop, the key/value heads */
	op->spec.in[0][heads].count = op->spec.out[0][heads].count = (int8_t)(r == 4 ? 2 : 3);
	if (r == 3)
		op->spec.in[1][heads].count = op->spec.in[2][heads].count = 2;
	return PL_OK;
}

/* PyTorch's ring attention under context parallelism over n ranks
 * (torch/distributed/tensor/experimental/_attention.py, the context_parallel
 * that torchtitan runs, causal, load balanced): n kernels a pass, one a
 * key/value block, and around them eager element-wise kernels, which this
 * counts (bytes and launches, into w's side terms). The slowest rank's: the
 * last rank keeps all its queries against half of each later block, so it
 * merges whole outputs at every step. Bytes in terms of the rank's output
 * (yb, e bytes an element), queries (qb), one key/value chunk (kvb: the
 * keys and values one rank holds, e bytes an element) and its ls query
 * rows (one fp32 log-sum-exp each).
 *
 * Forward (_templated_ring_attention, _SDPAMerger with convert_to_f32): the
 * first block's output cast to fp32; at each later block its output cast to
 * fp32 and merged, out - sigmoid(lse_b - lse) * (out - out_b) (three
 * kernels over the output, two over the log-sum-exps) and lse -
 * logsigmoid(lse - lse_b) (three); before each of the first n - 1 blocks
 * the keys and values copied into one buffer to pass on (torch.cat); the
 * merged output cast back; held while it merges: the fp32 output, the
 * block's fp32 copy and the expression's two fp32 temporaries.
 * Backward (_templated_ring_attention_backward): fp32 accumulators for dQ,
 * dK and dV zeroed; each block's dQ added to dQ
 * (the whole, fp32 += 16-bit); the first block's dK and dV added to theirs,
 * each later one's (half the keys) to the first half of the one passed in
 * and the halves joined again (_partial_update: an add and a torch.cat
 * each); at every block dK and dV copied into one fp32 buffer to pass on,
 * and the keys and values again before each of the first n - 1; the
 * results cast back; held: the fp32 dQ, the fp32 dK and dV, the buffer
 * passed on, the one received and the new one. */
static void ring_merge(double n, double yb, double qb, double kvb, double ls, double e,
                       int backward, pl_opwork *w)
{
	double y = yb / e, q = qb / e, kv = kvb / e; /* elements */
	w->side_bytes_fwd = 2 * (e + 4) * y + (n - 1) * ((e + 36) * y + 56 * ls + 2 * e * kv);
	w->side_kernels_fwd = 2 + (int)(n - 1) * 10;
	w->scratch_fwd += 4 * 4 * y;
	if (!backward)
		return;
	w->scratch_bwd += 4 * q + 4 * 4 * kv;
	w->side_bytes_bwd = 4 * (q + kv)         /* the accumulators zeroed */
	                    + (8 + e) * (q + kv) /* the first block's adds */
	                    + (n - 1) * ((8 + e) * q + ((8 + e) / 2 + 8) * kv + 2 * e * kv) +
	                    8 * n * kv            /* dK, dV passed on */
	                    + (4 + e) * (q + kv); /* cast back */
	w->side_kernels_bwd = 3 + 3 + (int)(n - 1) * 6 + (int)n + 2;
}

/* FLOPs as FlashAttention-2's benchmarks count them: 4 s t d per head
 * forward (two products; half of it under a causal mask), the backward's
 * five products 2.5 times that (with dv = d) */
void pl__work_attention(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	const int *at = loop_order(IN(g, op, 0)->rank);
	int64_t size[L_N], cut[L_N];
	for (int l = 0; l < L_N; l++) {
		size[l] = op->spec.loop[at[l]].size;
		cut[l] = split[at[l]];
	}
	double rows = (double)(size[L_B] / cut[L_B]) * (double)(size[L_KV] / cut[L_KV]) *
	              (double)size[L_G] * (double)(size[L_S] / cut[L_S]);
	double t = (double)size[L_T], d = (double)size[L_D], dv = (double)size[L_DV];
	double seen = op->attrs->causal ? 0.5 : 1.0; /* the scores computed */
	double scores = rows * t * seen;
	double qb = pl__local_in_bytes(g, op, 0, split), kb = pl__local_in_bytes(g, op, 1, split),
	       vb = pl__local_in_bytes(g, op, 2, split), yb = pl__local_out_bytes(g, op, 0, split);
	double lse = 4 * rows; /* one fp32 log-sum-exp per query row */
	w->gemm_flops_fwd = 2 * scores * (d + dv);
	w->vec_flops_fwd = 5 * scores; /* scale, max, exp, sum, rescale */
	w->bytes_fwd = qb + kb + vb + yb + lse;
	w->kernels_fwd = 1;
	w->attn_seq = (double)(size[L_S] / cut[L_S]);
	w->attn_head_dim = d;
	w->attn_causal = op->attrs->causal != 0;
	int train = OUT(g, op, 0)->requires_grad;
	if (w->cp_merge && cut[L_S] > 1)
		ring_merge((double)cut[L_S], yb, qb, (kb + vb) / (double)cut[L_S], rows,
		           pl_dtype_bytes(OUT(g, op, 0)->dtype), train, w);
	if (!train)
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
