/* Convolution and pooling over the trailing 1 to 3 spatial dimensions, as
 * ONNX defines Conv, MaxPool and AveragePool (NCHW order).
 *
 * Conv's loops: the batch n, the channel groups g and the output channels of
 * a group, the output positions, then the input channels of a group and the
 * kernel positions (the contraction). What can be cut:
 *   - n (data parallel),
 *   - with one group: the output channels (the weight's rows, as a
 *     column-parallel linear layer) and the input channels (a contraction:
 *     partial sums in the output, as a row-parallel one),
 *   - depthwise (one input channel a group): the groups (channels of input,
 *     weight and output together);
 * never a spatial dimension (a window reaches into its neighbour's piece:
 * that would need halo exchange, which the layouts do not express), nor the
 * channels of a grouped convolution with several input channels a group.
 * Pools cut n and the channels. */
#include <math.h>
#include <stdio.h>

#include "graph/ops/internal.h"

/* the op's spatial attributes for nsp dimensions, defaults filled in; an
 * error names the attribute whose count is off */
typedef struct window {
	int nsp;
	int64_t k[PL_MAX_SPATIAL], s[PL_MAX_SPATIAL], d[PL_MAX_SPATIAL], pb[PL_MAX_SPATIAL],
	    pe[PL_MAX_SPATIAL], o[PL_MAX_SPATIAL];
} window;

static pl_status window_of(const pl_op *op, const pl_tensor *x, const int64_t *kernel, int pool,
                           window *w, pl_err *err)
{
	const pl_attrs *a = op->attrs;
	int nsp = x->rank - 2;
	w->nsp = nsp;
	if (a->nstrides && a->nstrides != nsp)
		return pl_err_set(err, PL_EINVAL, "attrs.strides has %d entries, expected %d",
		                  a->nstrides, nsp);
	if (a->ndilations && a->ndilations != nsp)
		return pl_err_set(err, PL_EINVAL, "attrs.dilations has %d entries, expected %d",
		                  a->ndilations, nsp);
	if (a->npads && a->npads != 2 * nsp)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.pads has %d entries, expected %d (the begins, then the "
		                  "ends)",
		                  a->npads, 2 * nsp);
	for (int i = 0; i < nsp; i++) {
		w->k[i] = kernel[i];
		w->s[i] = a->nstrides ? a->strides[i] : 1;
		w->d[i] = a->ndilations ? a->dilations[i] : 1;
		w->pb[i] = a->npads ? a->pads[i] : 0;
		w->pe[i] = a->npads ? a->pads[nsp + i] : 0;
		int64_t in = x->shape[2 + i], span = (w->k[i] - 1) * w->d[i] + 1,
		        room = in + w->pb[i] + w->pe[i] - span;
		if (w->pb[i] >= span || w->pe[i] >= span)
			return pl_err_set(
			    err, PL_EINVAL,
			    "spatial dimension %d: padding %lld/%lld reaches past the "
			    "window of %lld (every window must touch the input)",
			    i, (long long)w->pb[i], (long long)w->pe[i], (long long)span);
		if (room < 0)
			return pl_err_set(
			    err, PL_EINVAL,
			    "spatial dimension %d: the window (%lld with dilation) is "
			    "larger than the padded input (%lld)",
			    i, (long long)span, (long long)(in + w->pb[i] + w->pe[i]));
		int64_t o = room / w->s[i] + 1;
		if (pool && a->ceil_mode && room % w->s[i]) {
			o++;
			if ((o - 1) * w->s[i] >=
			    in + w->pb[i]) /* the last window starts in the input */
				o--;
		}
		w->o[i] = o;
	}
	return PL_OK;
}

static pl_status check_x(const pl_tensor *x, pl_err *err)
{
	if (x->rank < 3 || x->rank > 2 + PL_MAX_SPATIAL)
		return pl_err_set(err, PL_EINVAL,
		                  "input '%s' has %d dimensions; expected 3 to %d (batch, "
		                  "channels, 1 to %d spatial)",
		                  x->name, x->rank, 2 + PL_MAX_SPATIAL, PL_MAX_SPATIAL);
	return PL_OK;
}

pl_status pl__infer_conv(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0), *wt = IN(g, op, 1);
	const pl_tensor *b = op->ninputs > 2 ? IN(g, op, 2) : NULL;
	pl_status st = check_x(x, err);
	if (st)
		return st;
	int nsp = x->rank - 2;
	if (wt->rank != x->rank)
		return pl_err_set(err, PL_EINVAL,
		                  "weight '%s' has %d dimensions; expected %d (output channels, "
		                  "input channels of a group, the kernel)",
		                  wt->name, wt->rank, x->rank);
	if (wt->dtype != x->dtype || (b && b->dtype != x->dtype))
		return pl_err_set(err, PL_EINVAL, "input, weight and bias differ in dtype");
	int64_t G = op->attrs->group, ci = x->shape[1], co = wt->shape[0], cig = wt->shape[1];
	if (ci % G || co % G)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.group %lld does not divide the %lld input and %lld output "
		                  "channels",
		                  (long long)G, (long long)ci, (long long)co);
	if (cig * G != ci)
		return pl_err_set(err, PL_EINVAL,
		                  "weight '%s' has %lld input channels a group; input '%s' has "
		                  "%lld channels in %lld groups",
		                  wt->name, (long long)cig, x->name, (long long)ci, (long long)G);
	if (b && (b->rank != 1 || b->shape[0] != co))
		return pl_err_set(err, PL_EINVAL, "bias '%s' must have shape [%lld]", b->name,
		                  (long long)co);
	if (op->attrs->nkernel) {
		if (op->attrs->nkernel != nsp)
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.kernel_shape has %d entries, expected %d",
			                  op->attrs->nkernel, nsp);
		for (int i = 0; i < nsp; i++)
			if (op->attrs->kernel[i] != wt->shape[2 + i])
				return pl_err_set(err, PL_EINVAL,
				                  "attrs.kernel_shape[%d] is %lld; weight '%s' has "
				                  "%lld",
				                  i, (long long)op->attrs->kernel[i], wt->name,
				                  (long long)wt->shape[2 + i]);
	}
	window w;
	if ((st = window_of(op, x, wt->shape + 2, 0, &w, err)))
		return st;
	int64_t shape[PL_MAX_RANK] = {x->shape[0], co};
	for (int i = 0; i < nsp; i++)
		shape[2 + i] = w.o[i];
	pl__set_out(g, op, 0, x->rank, shape, x->dtype);

	int one = G == 1, depthwise = G > 1 && cig == 1;
	int ln = pl__loop_add(op, x->shape[0], PL_LOOP_PARALLEL, 1);
	pl__map(op, 1, 0, 0, ln);
	pl__map(op, 0, 0, 0, ln);
	int lg = pl__loop_add(op, G, PL_LOOP_PARALLEL, depthwise);
	int lc = pl__loop_add(op, co / G, PL_LOOP_PARALLEL, one);
	/* the output channels (and the weight's rows, the bias) are g-major */
	for (int t = 0; t < 3; t++) {
		pl_dimmap *m = t == 0 ? &op->spec.out[0][1] : &op->spec.in[t][0];
		if (t == 2 && !b)
			break;
		m->first = (int8_t)(one ? lc : lg);
		m->count = one || co == G ? 1 : (depthwise ? 2 : 0);
	}
	for (int i = 0; i < nsp; i++)
		pl__map(op, 1, 0, 2 + i, pl__loop_add(op, w.o[i], PL_LOOP_PARALLEL, 0));
	int lk = pl__loop_add(op, cig, PL_LOOP_REDUCE, one);
	if (one) {
		pl__map(op, 0, 0, 1, lk);
		pl__map(op, 0, 1, 1, lk);
	} else if (depthwise) {
		pl__map(op, 0, 0, 1, lg);
	}
	for (int i = 0; i < nsp; i++)
		pl__loop_add(op, w.k[i], PL_LOOP_REDUCE, 0);
	return PL_OK;
}

/* ConvTranspose: x [N, Ci, X...], weight [Ci, Co/G, K...] (G groups,
 * attrs.group), bias [Co]; each input position scatters its kernel's taps
 * into the output, Y = s (X - 1) + output_padding + (K - 1) d + 1 - pads, as
 * ONNX defines it (the gradient of a Conv from Y to X with the same
 * attributes); group g maps input channels g Ci/G.. to output channels
 * g Co/G... Loops: the batch; with one group the output channels (the
 * weight's columns) cut as a Conv's and the input channels a contraction
 * (partial sums in the output, the weight's rows); with several, the groups
 * (cut where a group has one input channel, taking its input channel, its
 * weight row and its output channels along: a depthwise transposed
 * convolution), then a group's output channels and input channels, never
 * cut; the input and kernel positions never (an output position gathers taps
 * of several input positions): 2 N Co Ci X K / G FLOPs, as the product of its
 * loops. */
pl_status pl__infer_convtranspose(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0), *wt = IN(g, op, 1);
	const pl_tensor *b = op->ninputs > 2 ? IN(g, op, 2) : NULL;
	const pl_attrs *a = op->attrs;
	pl_status st = check_x(x, err);
	if (st)
		return st;
	int nsp = x->rank - 2;
	if (wt->rank != x->rank || wt->shape[0] != x->shape[1])
		return pl_err_set(err, PL_EINVAL,
		                  "weight '%s' must be [input channels %lld, output channels of a "
		                  "group, the kernel] with %d dimensions",
		                  wt->name, (long long)x->shape[1], x->rank);
	int64_t G = a->group, cig = x->shape[1] / G, cog = wt->shape[1], co;
	if (x->shape[1] % G)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.group %lld does not divide the %lld input channels",
		                  (long long)G, (long long)x->shape[1]);
	if (pl_size_mul(cog, G, &co) || co > PL_MAX_DIM)
		return pl_err_set(err, PL_EINVAL,
		                  "weight '%s''s %lld output channels a group in %lld groups are "
		                  "too many",
		                  wt->name, (long long)cog, (long long)G);
	if (wt->dtype != x->dtype || (b && b->dtype != x->dtype))
		return pl_err_set(err, PL_EINVAL, "input, weight and bias differ in dtype");
	if (b && (b->rank != 1 || b->shape[0] != co))
		return pl_err_set(err, PL_EINVAL, "bias '%s' must have shape [%lld]", b->name,
		                  (long long)co);
	if ((a->nkernel && a->nkernel != nsp) || (a->nstrides && a->nstrides != nsp) ||
	    (a->ndilations && a->ndilations != nsp) || (a->npads && a->npads != 2 * nsp) ||
	    (a->noutput_padding && a->noutput_padding != nsp))
		return pl_err_set(err, PL_EINVAL,
		                  "attrs kernel_shape, strides, dilations and output_padding need "
		                  "%d entries each, pads %d",
		                  nsp, 2 * nsp);
	int64_t shape[PL_MAX_RANK] = {x->shape[0], co};
	for (int i = 0; i < nsp; i++) {
		int64_t k = wt->shape[2 + i], s = a->nstrides ? a->strides[i] : 1,
		        d = a->ndilations ? a->dilations[i] : 1,
		        op_ = a->noutput_padding ? a->output_padding[i] : 0;
		if (a->nkernel && a->kernel[i] != k)
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.kernel_shape[%d] is %lld; weight '%s' has %lld", i,
			                  (long long)a->kernel[i], wt->name, (long long)k);
		if (op_ >= s && op_ >= d)
			return pl_err_set(err, PL_EINVAL,
			                  "attrs.output_padding[%d] is %lld; it must be below the "
			                  "stride or the dilation",
			                  i, (long long)op_);
		int64_t grown;
		if (__builtin_mul_overflow(s, x->shape[2 + i] - 1, &grown) ||
		    grown > (INT64_C(1) << 50))
			return pl_err_set(
			    err, PL_EINVAL,
			    "spatial dimension %d: %lld positions at stride %lld are too "
			    "many",
			    i, (long long)x->shape[2 + i], (long long)s);
		int64_t span;
		if (pl_size_mul(k - 1, d, &span) || span > PL_MAX_DIM)
			return pl_err_set(err, PL_EINVAL,
			                  "spatial dimension %d: weight '%s''s kernel of %lld at "
			                  "attrs.dilations[%d] %lld overflows",
			                  i, wt->name, (long long)k, i, (long long)d);
		shape[2 + i] =
		    grown + op_ + span + 1 - (a->npads ? a->pads[i] + a->pads[nsp + i] : 0);
		if (shape[2 + i] < 1)
			return pl_err_set(err, PL_EINVAL,
			                  "spatial dimension %d: the pads leave no output position",
			                  i);
	}
	pl__set_out(g, op, 0, x->rank, shape, x->dtype);
	int one = G == 1, depthwise = G > 1 && cig == 1;
	int ln = pl__loop_add(op, x->shape[0], PL_LOOP_PARALLEL, 1);
	pl__map(op, 0, 0, 0, ln);
	pl__map(op, 1, 0, 0, ln);
	int lg = one ? -1 : pl__loop_add(op, G, PL_LOOP_PARALLEL, depthwise);
	int lc = pl__loop_add(op, cog, PL_LOOP_PARALLEL, one);
	pl__map(op, 0, 1, 1, lc);
	/* the output channels (and the bias) are g-major */
	for (int t = 0; t < 2; t++) {
		pl_dimmap *m = t == 0 ? &op->spec.out[0][1] : &op->spec.in[2][0];
		if (t == 1 && !b)
			break;
		m->first = (int8_t)(one ? lc : lg);
		m->count = one || cog == 1 ? 1 : (depthwise ? 2 : 0);
	}
	for (int i = 0; i < nsp; i++)
		pl__map(op, 0, 0, 2 + i, pl__loop_add(op, x->shape[2 + i], PL_LOOP_REDUCE, 0));
	int li = pl__loop_add(op, cig, PL_LOOP_REDUCE, one);
	if (one || depthwise) { /* the input channels and the weight's rows */
		pl__map(op, 0, 0, 1, one ? li : lg);
		pl__map(op, 0, 1, 0, one ? li : lg);
	}
	for (int i = 0; i < nsp; i++)
		pl__loop_add(op, wt->shape[2 + i], PL_LOOP_REDUCE, 0);
	return PL_OK;
}

void pl__work_conv(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	/* dx: the transposed convolution; dw: x with dy. No output elements:
	 * the GEMM curve's output term is fitted to cuBLAS's matrix products, and
	 * no measurement of cuDNN's convolutions by shape is at hand */
	pl__work_product(g, op, split, 0, w);
	if (op->ninputs > 2) {
		double bb = pl__local_in_bytes(g, op, 2, split);
		w->bytes_fwd += bb;
		if (IN(g, op, 2)->requires_grad) { /* db: dy summed */
			w->vec_flops_bwd += pl__local_out(g, op, 0, split);
			w->bytes_bwd += pl__local_out_bytes(g, op, 0, split) + bb;
			w->kernels_bwd++;
		}
	}
}

/* A window op's or Resize's output of `shape` (batch, channels, spatial),
 * and its loops: the batch and the channels cut through input and output,
 * each output spatial dimension a loop of its own, never cut (each output
 * position reads a neighbourhood of the input) */
static void spatial_out(pl_graph *g, pl_op *op, const pl_tensor *x, const int64_t *shape)
{
	pl__set_out(g, op, 0, x->rank, shape, x->dtype);
	for (int d = 0; d < 2; d++) {
		int l = pl__loop_add(op, x->shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 0, 0, d, l);
		pl__map(op, 1, 0, d, l);
	}
	for (int i = 0; i < x->rank - 2; i++)
		pl__map(op, 1, 0, 2 + i, pl__loop_add(op, shape[2 + i], PL_LOOP_PARALLEL, 0));
}

pl_status pl__infer_pool(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	pl_status st = check_x(x, err);
	if (st)
		return st;
	int nsp = x->rank - 2;
	if (op->attrs->nkernel != nsp)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.kernel_shape has %d entries; expected %d (one per spatial "
		                  "dimension of '%s')",
		                  op->attrs->nkernel, nsp, x->name);
	window w;
	if ((st = window_of(op, x, op->attrs->kernel, 1, &w, err)))
		return st;
	int64_t shape[PL_MAX_RANK] = {x->shape[0], x->shape[1]};
	for (int i = 0; i < nsp; i++)
		shape[2 + i] = w.o[i];
	spatial_out(g, op, x, shape);
	for (int i = 0; i < nsp; i++)
		pl__loop_add(op, w.k[i], PL_LOOP_REDUCE, 0);
	return PL_OK;
}

void pl__work_pool(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double window = 1;
	for (int i = 0; i < op->attrs->nkernel; i++)
		window *= (double)op->attrs->kernel[i];
	double out = pl__local_out(g, op, 0, split);
	double xb = pl__local_in_bytes(g, op, 0, split), yb = pl__local_out_bytes(g, op, 0, split);
	w->vec_flops_fwd = out * window;
	w->bytes_fwd = xb + yb;
	w->kernels_fwd = 1;
	if (IN(g, op, 0)->requires_grad) {
		w->vec_flops_bwd = out * window;
		w->bytes_bwd = yb + xb;
		w->kernels_bwd = 1;
		if (op->type == PL_OP_MAXPOOL) { /* the window's maximum is found again in x */
			w->saved_bytes = xb;
			w->saves_in = 1;
		}
	}
}

/* Resize: the batch and channels cut as the pools cut them; each output
 * position reads its input neighbourhood, so the spatial dimensions stay
 * whole. */
pl_status pl__infer_resize(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	pl_status st = check_x(x, err);
	if (st)
		return st;
	int nsp = x->rank - 2;
	if (op->attrs->nshape != nsp)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.shape has %d entries; expected %d (the output's size in "
		                  "each spatial dimension of '%s')",
		                  op->attrs->nshape, nsp, x->name);
	int64_t shape[PL_MAX_RANK] = {x->shape[0], x->shape[1]};
	for (int i = 0; i < nsp; i++) {
		if (op->attrs->shape[i] < 1)
			return pl_err_set(err, PL_EINVAL, "attrs.shape[%d] is %lld; expected >= 1",
			                  i, (long long)op->attrs->shape[i]);
		shape[2 + i] = op->attrs->shape[i];
	}
	spatial_out(g, op, x, shape);
	return PL_OK;
}

void pl__work_resize(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double reads = 1; /* input elements an output element reads */
	for (int i = 0; i < op->attrs->nshape; i++)
		reads *= op->attrs->resize_mode == PL_RESIZE_CUBIC    ? 4
		         : op->attrs->resize_mode == PL_RESIZE_LINEAR ? 2
		                                                      : 1;
	double out = pl__local_out(g, op, 0, split);
	double xb = pl__local_in_bytes(g, op, 0, split), yb = pl__local_out_bytes(g, op, 0, split);
	w->vec_flops_fwd = 2 * out * reads;
	w->bytes_fwd = xb + yb;
	w->kernels_fwd = 1;
	if (IN(g, op, 0)->requires_grad) { /* the gradient scattered back: no input read */
		w->vec_flops_bwd = 2 * out * reads;
		w->bytes_bwd = yb + xb;
		w->kernels_bwd = 1;
	}
}

static const char *const resize_modes[] = {"nearest", "linear", "cubic", NULL};
static const char *const resize_coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                            "asymmetric", NULL};
static const char *const resize_nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                              "ceil", NULL};

const char *pl_resize_mode_name(int v)
{
	return v >= 0 && v < 3 ? resize_modes[v] : NULL;
}

const char *pl_resize_coord_name(int v)
{
	return v >= 0 && v < 4 ? resize_coords[v] : NULL;
}

const char *pl_resize_nearest_name(int v)
{
	return v >= 0 && v < 4 ? resize_nearests[v] : NULL;
}
