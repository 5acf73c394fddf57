/* MatMul with numpy batching: loops are the broadcast batch dimensions, then
 * m, n and the contraction k. Splitting k leaves partial sums in the output,
 * which the consumer's redistribution reduces (all-reduce or reduce-scatter). */
#include "graph/ops/internal.h"

pl_status pl__infer_matmul(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *a = IN(g, op, 0), *b = IN(g, op, 1);
	if (a->rank < 2 || b->rank < 2)
		return pl_err_set(err, PL_EINVAL,
		                  "inputs must have at least 2 dimensions ('%s' has %d, '%s' has "
		                  "%d)",
		                  a->name, a->rank, b->name, b->rank);
	if (a->dtype != b->dtype)
		return pl_err_set(err, PL_EINVAL, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
		                  a->name, pl_dtype_name(a->dtype), b->name,
		                  pl_dtype_name(b->dtype));
	int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1];
	int64_t kb = b->shape[b->rank - 2], n = b->shape[b->rank - 1];
	if (k != kb)
		return pl_err_set(err, PL_EINVAL,
		                  "inner dimensions differ: '%s' has %lld columns, '%s' has %lld "
		                  "rows",
		                  a->name, (long long)k, b->name, (long long)kb);
	int ba = a->rank - 2, bb = b->rank - 2, nb = ba > bb ? ba : bb;
	int64_t shape[PL_MAX_RANK];
	for (int d = 0; d < nb; d++) {
		int da = d - (nb - ba), db = d - (nb - bb);
		int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
		if (sa != sb && sa != 1 && sb != 1)
			return pl_err_set(err, PL_EINVAL,
			                  "batch dimension %d does not broadcast: '%s' has %lld, "
			                  "'%s' has %lld",
			                  d, a->name, (long long)sa, b->name, (long long)sb);
		shape[d] = sa > sb ? sa : sb;
	}
	shape[nb] = m;
	shape[nb + 1] = n;
	pl__set_out(g, op, 0, nb + 2, shape, a->dtype);
	for (int d = 0; d < nb; d++) {
		int l = pl__loop_add(op, shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 1, 0, d, l);
		int da = d - (nb - ba), db = d - (nb - bb);
		if (da >= 0 && a->shape[da] == shape[d] && shape[d] > 1)
			pl__map(op, 0, 0, da, l);
		if (db >= 0 && b->shape[db] == shape[d] && shape[d] > 1)
			pl__map(op, 0, 1, db, l);
	}
	int lm = pl__loop_add(op, m, PL_LOOP_PARALLEL, 1);
	int ln = pl__loop_add(op, n, PL_LOOP_PARALLEL, 1);
	int lk = pl__loop_add(op, k, PL_LOOP_REDUCE, 1);
	pl__map(op, 0, 0, a->rank - 2, lm);
	pl__map(op, 0, 0, a->rank - 1, lk);
	pl__map(op, 0, 1, b->rank - 2, lk);
	pl__map(op, 0, 1, b->rank - 1, ln);
	pl__map(op, 1, 0, nb, lm);
	pl__map(op, 1, 0, nb + 1, ln);
	return PL_OK;
}

/* A product's work: 2 FLOPs per point of its loop space, each input's
 * gradient another product of as many; an input's gradient needs the other
 * input, kept unless it is a param. outs: the GEMMs state the elements they
 * write (the output forward, each input's gradient backward), which the GEMM
 * curve prices by shape (docs/cost-model.md, "Compute"). Shared by MatMul and
 * Conv. */
void pl__work_product(const pl_graph *g, const pl_op *op, const int64_t *split, int outs,
                      pl_opwork *w)
{
	double flops = 2;
	for (int l = 0; l < op->spec.nloops; l++)
		flops *= (double)(op->spec.loop[l].size / split[l]);
	double ab = pl__local_in_bytes(g, op, 0, split), bb = pl__local_in_bytes(g, op, 1, split);
	double cb = pl__local_out_bytes(g, op, 0, split);
	w->gemm_flops_fwd = flops;
	w->bytes_fwd = ab + bb + cb;
	w->kernels_fwd = 1;
	const pl_tensor *a = IN(g, op, 0), *b = IN(g, op, 1);
	if (outs)
		w->gemm_outs_fwd = cb / pl_dtype_bytes(OUT(g, op, 0)->dtype);
	if (a->requires_grad) { /* dA from dC and B */
		w->gemm_flops_bwd += flops;
		w->gemm_outs_bwd += outs ? ab / pl_dtype_bytes(a->dtype) : 0;
		w->bytes_bwd += cb + bb + ab;
		w->kernels_bwd++;
		if (b->role != PL_ROLE_PARAM) {
			w->saved_bytes += bb;
			w->saves_in |= 2;
		}
	}
	if (b->requires_grad) { /* dB from A and dC */
		w->gemm_flops_bwd += flops;
		w->gemm_outs_bwd += outs ? bb / pl_dtype_bytes(b->dtype) : 0;
		w->bytes_bwd += cb + ab + bb;
		w->kernels_bwd++;
		if (a->role != PL_ROLE_PARAM && a != b) {
			w->saved_bytes += ab;
			w->saves_in |= 1;
		}
	}
}

void pl__work_matmul(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	pl__work_product(g, op, split, 1, w);
}
