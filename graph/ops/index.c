/* Index ops: ArgMax, ArgMin and TopK (the positions of the extremes along
 * one axis), OneHot (indices to one-hot rows), and GatherElements (torch.gather:
 * the elements of data at indices along one axis; TopK's values are it).
 * The first four give integers (or constants of OneHot's values) that no
 * gradient flows through; GatherElements passes its data's gradient back to
 * the positions read.
 *
 * Loops: the searched axis of ArgMax/ArgMin/TopK stays whole (an extreme of
 * pieces would need a reduction of (value, index) pairs); every other
 * dimension is cut as an element-wise op's. OneHot's classes stay whole (a
 * strategy is stated by the inputs' cuts, and no input has them). GatherElements cuts its
 * indices' dimensions; data's axis stays whole (any position may be read). */
#include "graph/ops/internal.h"

pl_status pl__infer_argmax(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	int topk = op->type == PL_OP_TOPK;
	int64_t axis;
	pl_status st = pl__check_axis(op, x, topk ? -1 : 0, &axis, err);
	if (st)
		return st;
	if (topk && op->attrs->k > x->shape[axis])
		return pl_err_set(
		    err, PL_EINVAL, "attrs.k = %lld is more than axis %lld of '%s' holds (%lld)",
		    (long long)op->attrs->k, (long long)axis, x->name, (long long)x->shape[axis]);
	int64_t shape[PL_MAX_RANK];
	int o = 0, outdim[PL_MAX_RANK];
	for (int d = 0; d < x->rank; d++) {
		outdim[d] = d == axis ? -1 : o;
		if (d != axis)
			shape[o++] = x->shape[d];
		else if (topk)
			shape[o++] = op->attrs->k;
		else if (op->attrs->keepdims)
			shape[o++] = 1;
	}
	pl__set_out(g, op, 0, o, shape, PL_DT_INT64);
	g->tensors[op->out[0]].requires_grad = 0; /* positions: no gradient */
	for (int d = 0; d < x->rank; d++) {
		int l = pl__loop_add(op, x->shape[d], d == axis ? PL_LOOP_REDUCE : PL_LOOP_PARALLEL,
		                     d != axis);
		pl__map(op, 0, 0, d, l);
		if (outdim[d] >= 0)
			pl__map(op, 1, 0, outdim[d], l);
	}
	return PL_OK;
}

/* A comparison an element (TopK's: one against each of the k kept, as a
 * selection of k does); the input read, the positions written; no backward */
void pl__work_argmax(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double n = pl__local_in(g, op, 0, split);
	w->vec_flops_fwd = n * (op->type == PL_OP_TOPK ? (double)op->attrs->k : 1);
	w->bytes_fwd = pl__local_in_bytes(g, op, 0, split) + pl__local_out_bytes(g, op, 0, split);
	w->kernels_fwd = 1;
}

pl_status pl__infer_onehot(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *ix = IN(g, op, 0);
	pl_status st = pl__check_index_dtype(ix, "indices", err);
	if (st)
		return st;
	if (ix->rank + 1 > PL_MAX_RANK)
		return pl_err_set(err, PL_EINVAL,
		                  "the output would have %d dimensions, at most %d are supported",
		                  ix->rank + 1, PL_MAX_RANK);
	int64_t axis = op->attrs->has_axis ? op->attrs->axis : -1;
	axis = axis < 0 ? axis + ix->rank + 1 : axis;
	if (axis < 0 || axis > ix->rank)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.axis = %lld is out of range for an output of %d "
		                  "dimensions",
		                  (long long)op->attrs->axis, ix->rank + 1);
	int64_t shape[PL_MAX_RANK];
	for (int d = 0, o = 0; o <= ix->rank; o++)
		shape[o] = o == axis ? op->attrs->depth : ix->shape[d++];
	pl__set_out(g, op, 0, ix->rank + 1, shape, op->attrs->to);
	g->tensors[op->out[0]].requires_grad = 0;
	for (int d = 0, o = 0; o <= ix->rank; o++) {
		int l = pl__loop_add(op, shape[o], PL_LOOP_PARALLEL, o != axis);
		pl__map(op, 1, 0, o, l);
		if (o != axis)
			pl__map(op, 0, 0, d++, l);
	}
	return PL_OK;
}

int64_t pl__range_onehot(const pl_graph *g, const pl_op *op, int input)
{
	(void)g;
	return input == 0 ? op->attrs->depth : 0;
}

/* an output element written (a comparison); no backward */
void pl__work_onehot(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double ob = pl__local_out_bytes(g, op, 0, split);
	w->vec_flops_fwd = pl__local_out(g, op, 0, split);
	w->bytes_fwd = pl__local_in_bytes(g, op, 0, split) + ob;
	w->kernels_fwd = 1;
}

pl_status pl__infer_gather_elements(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0), *ix = IN(g, op, 1);
	int64_t axis;
	pl_status st = pl__check_axis(op, x, 0, &axis, err);
	if (st)
		return st;
	if ((st = pl__check_index_dtype(ix, "indices", err)))
		return st;
	int ok = ix->rank == x->rank;
	for (int d = 0; ok && d < x->rank; d++)
		ok = d == axis || ix->shape[d] == x->shape[d];
	if (!ok)
		return pl_err_set(err, PL_EINVAL,
		                  "indices '%s' must have the dimensions of '%s' but axis %lld "
		                  "(%d of them)",
		                  ix->name, x->name, (long long)axis, x->rank);
	if ((st = pl__check_index_values(ix, x, axis, err)))
		return st;
	pl__set_out(g, op, 0, ix->rank, ix->shape, x->dtype);
	g->tensors[op->out[0]].requires_grad = x->requires_grad;
	for (int d = 0; d < x->rank; d++) {
		int l = pl__loop_add(op, ix->shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 1, 0, d, l);
		pl__map(op, 0, 1, d, l);
		if (d != axis)
			pl__map(op, 0, 0, d, l);
	}
	return PL_OK;
}

int64_t pl__range_gather_elements(const pl_graph *g, const pl_op *op, int input)
{
	const pl_tensor *x = IN(g, op, 0);
	int64_t ax = op->attrs->has_axis ? op->attrs->axis : 0;
	return input == 1 ? x->shape[ax < 0 ? ax + x->rank : ax] : 0;
}

/* As Gather: the output written from the positions read; backward the data's
 * gradient zeroed and the output's scattered into it (indices kept) */
void pl__work_gather_elements(const pl_graph *g, const pl_op *op, const int64_t *split,
                              pl_opwork *w)
{
	double ob = pl__local_out_bytes(g, op, 0, split), ib = pl__local_in_bytes(g, op, 1, split);
	w->bytes_fwd = 2 * ob + ib;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	w->vec_flops_bwd = pl__local_out(g, op, 0, split);
	w->bytes_bwd = 2 * ob + ib + pl__local_in_bytes(g, op, 0, split);
	w->kernels_bwd = 2;
	w->saved_bytes = ib;
	w->saves_in = 2;
}
