/* Data-movement operators: Gather (embedding lookup; splitting the gathered
 * axis of the table leaves partial sums, Megatron's vocab-parallel embedding),
 * Reshape (dimension groups; only the major dimension of a merged group may be
 * split), Transpose, ReduceSum/ReduceMean (reduced axes leave partial sums). */
#include <string.h>

#include "graph/ops/internal.h"

pl_status pl__infer_gather(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0), *ix = IN(g, op, 1);
	int64_t axis;
	pl_status st = pl__check_axis(op, x, 0, &axis, err);
	if (st)
		return st;
	if ((st = pl__check_index_dtype(ix, "indices", err)))
		return st;
	if ((st = pl__check_index_values(ix, x, axis, err)))
		return st;
	int rank = x->rank - 1 + ix->rank;
	if (rank > PL_MAX_RANK)
		return pl_err_set(err, PL_EINVAL,
		                  "the output would have %d dimensions, at most %d "
		                  "are supported",
		                  rank, PL_MAX_RANK);
	int64_t shape[PL_MAX_RANK];
	int o = 0;
	for (int d = 0; d < axis; d++)
		shape[o++] = x->shape[d];
	for (int d = 0; d < ix->rank; d++)
		shape[o++] = ix->shape[d];
	for (int d = (int)axis + 1; d < x->rank; d++)
		shape[o++] = x->shape[d];
	pl__set_out(g, op, 0, rank, shape, x->dtype);
	o = 0;
	for (int d = 0; d < axis; d++) {
		int l = pl__loop_add(op, x->shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 0, 0, d, l);
		pl__map(op, 1, 0, o++, l);
	}
	for (int d = 0; d < ix->rank; d++) {
		int l = pl__loop_add(op, ix->shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 0, 1, d, l);
		pl__map(op, 1, 0, o++, l);
	}
	for (int d = (int)axis + 1; d < x->rank; d++) {
		int l = pl__loop_add(op, x->shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 0, 0, d, l);
		pl__map(op, 1, 0, o++, l);
	}
	int lv = pl__loop_add(op, x->shape[axis], PL_LOOP_REDUCE, 1);
	pl__map(op, 0, 0, (int)axis, lv);
	return PL_OK;
}

/* the indices address the gathered axis */
int64_t pl__range_gather(const pl_graph *g, const pl_op *op, int input)
{
	const pl_tensor *x = IN(g, op, 0);
	int64_t ax = op->attrs->has_axis ? op->attrs->axis : 0;
	return input == 1 ? x->shape[ax < 0 ? ax + x->rank : ax] : 0;
}

void pl__work_gather(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double ob = pl__local_out_bytes(g, op, 0, split), ib = pl__local_in_bytes(g, op, 1, split);
	w->vec_flops_fwd = 0;
	w->bytes_fwd = 2 * ob + ib;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	w->vec_flops_bwd = pl__local_out(g, op, 0, split); /* scatter-add */
	w->bytes_bwd = 2 * ob + ib + pl__local_in_bytes(g, op, 0, split);
	w->kernels_bwd = 2; /* zero the table gradient, scatter-add */
	w->saved_bytes = ib;
	w->saves_in = 2;
}

/* Reshape target per ONNX: 0 copies the input dimension, -1 is inferred. */
static pl_status reshape_target(const pl_tensor *x, const pl_attrs *a, int64_t *shape, pl_err *err)
{
	if (a->nshape == 0)
		return pl_err_set(err, PL_EINVAL, "attrs.shape: expected the target shape");
	int64_t known = 1, total = pl_tensor_elems(x);
	int infer = -1;
	for (int d = 0; d < a->nshape; d++) {
		int64_t v = a->shape[d];
		if (v == 0) {
			if (d >= x->rank)
				return pl_err_set(err, PL_EINVAL,
				                  "attrs.shape[%d] is 0 but '%s' has "
				                  "only %d dimensions",
				                  d, x->name, x->rank);
			v = x->shape[d];
		} else if (v == -1) {
			if (infer >= 0)
				return pl_err_set(err, PL_EINVAL,
				                  "attrs.shape has more than one -1");
			infer = d;
			continue;
		} else if (v < 0) {
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.shape[%d] is %lld; expected a positive "
			                  "size, 0 or -1",
			                  d, (long long)v);
		}
		shape[d] = v;
		if (pl_size_mul(known, v, &known))
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.shape: the sizes' product overflows 64 bits "
			                  "('%s' has %lld elements)",
			                  x->name, (long long)total);
	}
	if (infer >= 0) {
		if (known == 0 || total % known)
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.shape: cannot infer the -1 entry: "
			                  "%lld elements are not a multiple of %lld",
			                  (long long)total, (long long)known);
		shape[infer] = total / known;
		known *= shape[infer];
	}
	if (known != total)
		return pl_err_set(err, PL_EINVAL, "attrs.shape has %lld elements but '%s' has %lld",
		                  (long long)known, x->name, (long long)total);
	return PL_OK;
}

pl_status pl__infer_reshape(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	int64_t shape[PL_MAX_RANK] = {0};
	pl_status st = reshape_target(x, op->attrs, shape, err);
	if (st)
		return st;
	int orank = op->attrs->nshape;
	pl__set_out(g, op, 0, orank, shape, x->dtype);
	/* walk both shapes, grouping runs of equal element count */
	int i = 0, o = 0;
	while (i < x->rank || o < orank) {
		if (i < x->rank && x->shape[i] == 1) {
			i++;
			continue;
		}
		if (o < orank && shape[o] == 1) {
			o++;
			continue;
		}
		if (i >= x->rank || o >= orank)
			break;
		int i0 = i, o0 = o;
		int64_t pi = x->shape[i++], po = shape[o++];
		while (pi != po) {
			if (pi < po)
				pi *= x->shape[i++];
			else
				po *= shape[o++];
		}
		int ni = i - i0, no = o - o0;
		pl_dimmap *min = op->spec.in[0], *mout = op->spec.out[0];
		if (ni == 1) { /* one input dim splits into output dims */
			int first = op->spec.nloops;
			for (int k = 0; k < no; k++) {
				int l = pl__loop_add(op, shape[o0 + k], PL_LOOP_PARALLEL, k == 0);
				pl__map(op, 1, 0, o0 + k, l);
			}
			min[i0] = (pl_dimmap){(int8_t)first, (int8_t)no};
		} else if (no == 1) { /* input dims merge into one output dim */
			int first = op->spec.nloops;
			for (int k = 0; k < ni; k++) {
				int l =
				    pl__loop_add(op, x->shape[i0 + k], PL_LOOP_PARALLEL, k == 0);
				pl__map(op, 0, 0, i0 + k, l);
			}
			mout[o0] = (pl_dimmap){(int8_t)first, (int8_t)ni};
		} else { /* m:n regrouping: kept whole */
			pl__loop_add(op, pi, PL_LOOP_PARALLEL, 0);
		}
	}
	return PL_OK;
}

pl_status pl__infer_transpose(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	int64_t perm[PL_MAX_RANK], shape[PL_MAX_RANK] = {0};
	int n = op->attrs->nperm;
	if (n == 0) { /* ONNX default: reverse */
		n = x->rank;
		for (int d = 0; d < n; d++)
			perm[d] = n - 1 - d;
	} else {
		memcpy(perm, op->attrs->perm, sizeof perm);
	}
	if (n != x->rank)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.perm has %d entries but '%s' has %d "
		                  "dimensions",
		                  n, x->name, x->rank);
	int seen[PL_MAX_RANK] = {0};
	for (int d = 0; d < n; d++) {
		if (perm[d] < 0 || perm[d] >= n || seen[perm[d]]++)
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.perm is not a permutation of 0..%d", n - 1);
		shape[d] = x->shape[perm[d]];
	}
	pl__set_out(g, op, 0, n, shape, x->dtype);
	for (int d = 0; d < n; d++)
		pl__map(op, 0, 0, d, pl__loop_add(op, x->shape[d], PL_LOOP_PARALLEL, 1));
	for (int d = 0; d < n; d++)
		pl__map(op, 1, 0, d, (int)perm[d]);
	return PL_OK;
}

void pl__work_transpose(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double b = pl__local_out_bytes(g, op, 0, split);
	w->bytes_fwd = 2 * b;
	w->kernels_fwd = 1;
	if (OUT(g, op, 0)->requires_grad) {
		w->bytes_bwd = 2 * b;
		w->kernels_bwd = 1;
	}
}

pl_status pl__infer_reduce(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	int reduced[PL_MAX_RANK] = {0};
	if (!op->attrs->has_axes) {
		for (int d = 0; d < x->rank; d++)
			reduced[d] = 1;
	}
	for (int k = 0; k < op->attrs->naxes; k++) {
		int64_t ax = pl__norm_axis(op->attrs->axes[k], x->rank);
		if (ax < 0 || ax >= x->rank)
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.axes[%d] = %lld is out of range for "
			                  "'%s' with %d dimensions",
			                  k, (long long)op->attrs->axes[k], x->name, x->rank);
		reduced[ax] = 1;
	}
	int64_t shape[PL_MAX_RANK];
	int o = 0;
	int outdim[PL_MAX_RANK];
	for (int d = 0; d < x->rank; d++) {
		outdim[d] = -1;
		if (!reduced[d]) {
			outdim[d] = o;
			shape[o++] = x->shape[d];
		} else if (op->attrs->keepdims) {
			shape[o++] = 1;
		}
	}
	pl__set_out(g, op, 0, o, shape, x->dtype);
	/* a maximum, minimum or product keeps its reduced axes whole: its
	 * pieces would need a max- or product-reduce, and a cut leaves partial
	 * sums */
	int extreme = op->type == PL_OP_REDUCEMAX || op->type == PL_OP_REDUCEMIN ||
	              op->type == PL_OP_REDUCEPROD;
	for (int d = 0; d < x->rank; d++) {
		int l =
		    pl__loop_add(op, x->shape[d], reduced[d] ? PL_LOOP_REDUCE : PL_LOOP_PARALLEL,
		                 !(reduced[d] && extreme));
		pl__map(op, 0, 0, d, l);
		if (outdim[d] >= 0)
			pl__map(op, 1, 0, outdim[d], l);
	}
	return PL_OK;
}

void pl__work_reduce(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double n = pl__local_in(g, op, 0, split), ib = pl__local_in_bytes(g, op, 0, split);
	double ob = pl__local_out_bytes(g, op, 0, split);
	w->vec_flops_fwd = n;
	w->bytes_fwd = ib + ob;
	w->kernels_fwd = 1;
	if (OUT(g, op, 0)->requires_grad) {
		w->vec_flops_bwd = op->type == PL_OP_REDUCEMEAN ? n : 0;
		w->bytes_bwd = ib + ob;
		w->kernels_bwd = 1;
		if (op->type == PL_OP_REDUCEMAX || op->type == PL_OP_REDUCEMIN ||
		    op->type == PL_OP_REDUCEPROD) {
			/* the gradient goes to the first extreme: the input read
			 * against the output (both kept); a product's to each
			 * element, the product of the others: the input and the
			 * product kept */
			w->vec_flops_bwd = n;
			w->bytes_bwd += ib;
			w->saved_bytes = ib + ob;
			w->saves_in = 1;
			w->saves_out = 1;
		}
	}
}

/* Expand: x broadcast (numpy's rule, both ways) with attrs.shape. One loop per
 * output dimension; a dimension x has is cut with it, one x broadcasts is
 * kept whole. The gradient sums over the broadcast. */
pl_status pl__infer_expand(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	const pl_attrs *a = op->attrs;
	int rank = x->rank > a->nshape ? x->rank : a->nshape;
	int64_t shape[PL_MAX_RANK] = {0};
	for (int d = 0; d < rank; d++) {
		int dx = d - (rank - x->rank), ds = d - (rank - a->nshape);
		int64_t sx = dx >= 0 ? x->shape[dx] : 1, ss = ds >= 0 ? a->shape[ds] : 1;
		if (ss < 1 || (sx != ss && sx != 1 && ss != 1))
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.shape dimension %d (%lld) does not broadcast with "
			                  "'%s' (%lld)",
			                  d, (long long)ss, x->name, (long long)sx);
		shape[d] = sx > ss ? sx : ss;
	}
	pl__set_out(g, op, 0, rank, shape, x->dtype);
	for (int d = 0; d < rank; d++) {
		int dx = d - (rank - x->rank), has = dx >= 0 && x->shape[dx] == shape[d];
		/* a dimension x broadcasts is kept whole: the checkpoint states a
		 * strategy by the inputs' cuts, and x has none to show it */
		int l = pl__loop_add(op, shape[d], PL_LOOP_PARALLEL, has);
		pl__map(op, 1, 0, d, l);
		if (has && shape[d] > 1)
			pl__map(op, 0, 0, dx, l);
	}
	return PL_OK;
}

/* Concat along attrs.axis: one loop per output dimension, the axis kept
 * whole (each input holds a stretch of it) */
pl_status pl__infer_concat(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *a = IN(g, op, 0);
	int64_t axis;
	pl_status st = pl__check_axis(op, a, 0, &axis, err);
	if (st)
		return st;
	int64_t shape[PL_MAX_RANK];
	for (int d = 0; d < a->rank; d++)
		shape[d] = a->shape[d];
	shape[axis] = 0;
	for (int i = 0; i < op->ninputs; i++) {
		const pl_tensor *t = IN(g, op, i);
		int ok = t->rank == a->rank && t->dtype == a->dtype;
		for (int d = 0; ok && d < a->rank; d++)
			ok = d == axis || t->shape[d] == a->shape[d];
		if (!ok)
			return pl_err_set(err, PL_EINVAL,
			                  "input '%s' does not match '%s' in dtype, rank or a "
			                  "dimension other than axis %lld",
			                  t->name, a->name, (long long)axis);
		shape[axis] += t->shape[axis];
	}
	pl__set_out(g, op, 0, a->rank, shape, a->dtype);
	for (int d = 0; d < a->rank; d++) {
		int l = pl__loop_add(op, shape[d], PL_LOOP_PARALLEL, d != axis);
		pl__map(op, 1, 0, d, l);
		for (int i = 0; d != axis && i < op->ninputs; i++)
			pl__map(op, 0, i, d, l);
	}
	return PL_OK;
}

/* both copy: every input read, the output written (and back in backward) */
void pl__work_copy(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	if (op->view) /* a Slice that is a view of its input: no kernel, no bytes */
		return;
	double in = 0, out = pl__local_out_bytes(g, op, 0, split);
	for (int i = 0; i < op->ninputs; i++)
		in += pl__local_in_bytes(g, op, i, split);
	w->bytes_fwd = in + out;
	w->kernels_fwd = 1;
	if (OUT(g, op, 0)->requires_grad) {
		w->bytes_bwd = in + out;
		w->vec_flops_bwd = op->type == PL_OP_EXPAND ? pl__local_out(g, op, 0, split) : 0;
		w->kernels_bwd = 1;
	}
}

static const char *const pad_modes[] = {"constant", "reflect", "edge", "wrap", NULL};

const char *pl_pad_mode_name(int v)
{
	return v >= 0 && v < 4 ? pad_modes[v] : NULL;
}

/* Pad: attrs.pads the begins, then the ends, of every dimension (ONNX's
 * order); a padded dimension is kept whole (its new elements copy or mirror
 * the input's edges; reflect mirrors again past the far edge, as numpy.pad
 * and ONNX's reference do), the others cut input and output together. Not
 * the batch (dimension 0): micro-batches cut it. */
pl_status pl__infer_pad(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	const pl_attrs *a = op->attrs;
	if (a->npads != 2 * x->rank)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.pads has %d entries; expected %d (the begins, then the "
		                  "ends, of every dimension of '%s')",
		                  a->npads, 2 * x->rank, x->name);
	if (a->pads[0] || a->pads[x->rank])
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.pads: the batch (dimension 0) cannot be padded");
	int64_t shape[PL_MAX_RANK];
	for (int d = 0; d < x->rank; d++)
		shape[d] = x->shape[d] + a->pads[d] + a->pads[x->rank + d];
	pl__set_out(g, op, 0, x->rank, shape, x->dtype);
	for (int d = 0; d < x->rank; d++) {
		int whole = a->pads[d] || a->pads[x->rank + d];
		int l = pl__loop_add(op, shape[d], PL_LOOP_PARALLEL, !whole);
		pl__map(op, 1, 0, d, l);
		if (!whole)
			pl__map(op, 0, 0, d, l);
	}
	return PL_OK;
}

/* Slice: a range of each of some axes (step 1). One loop per output
 * dimension; a sliced axis is kept whole (its piece would not line up with
 * the input's), the others cut input and output together. */
pl_status pl__infer_slice(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	pl_attrs *a = (pl_attrs *)op->attrs; /* the op's own record (graph/model.c) */
	if (!a->has_axes || a->naxes != a->nslices || a->nslices < 1)
		return pl_err_set(
		    err, PL_EINVAL,
		    "attrs.axes, attrs.starts and attrs.ends must give one entry each "
		    "per sliced axis");
	int64_t shape[PL_MAX_RANK] = {0};
	int sliced[PL_MAX_RANK] = {0};
	for (int d = 0; d < x->rank; d++)
		shape[d] = x->shape[d];
	for (int i = 0; i < a->nslices; i++) {
		int64_t ax = pl__norm_axis(a->axes[i], x->rank);
		if (ax < 0 || ax >= x->rank || sliced[ax])
			return pl_err_set(
			    err, PL_EINVAL,
			    "attrs.axes[%d] (%lld) is out of range for '%s' or repeated", i,
			    (long long)a->axes[i], x->name);
		int64_t N = x->shape[ax], lo = a->starts[i] < 0 ? a->starts[i] + N : a->starts[i],
		        hi = a->ends[i] < 0 ? a->ends[i] + N : a->ends[i];
		lo = lo < 0 ? 0 : lo > N ? N : lo;
		hi = hi > N ? N : hi;
		if (hi <= lo)
			return pl_err_set(err, PL_EINVAL,
			                  "attrs: axis %lld's range [%lld, %lld) is empty",
			                  (long long)ax, (long long)lo, (long long)hi);
		a->axes[i] = ax; /* normalised for the kernels */
		a->starts[i] = lo;
		a->ends[i] = hi;
		shape[ax] = hi - lo;
		sliced[ax] = 1;
	}
	pl__set_out(g, op, 0, x->rank, shape, x->dtype);
	for (int d = 0; d < x->rank; d++) {
		int l = pl__loop_add(op, shape[d], PL_LOOP_PARALLEL, !sliced[d]);
		pl__map(op, 1, 0, d, l);
		if (!sliced[d])
			pl__map(op, 0, 0, d, l);
	}
	return PL_OK;
}
