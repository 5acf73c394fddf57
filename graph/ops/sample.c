/* GridSample (2-D, as ONNX's opset 16 defines it): X [N, C, H, W] read at
 * the positions of grid [N, Ho, Wo, 2] ((x, y) in [-1, 1]: the corner
 * pixels' centres with align_corners, their outer edges without), bilinear
 * or nearest, positions outside read as zeros or clamped to the border; Y
 * [N, C, Ho, Wo]. The gradient goes to X (scattered to the taps read) and,
 * bilinear, to the grid.
 *
 * Loops: the batch (X, grid, Y cut), the channels (X and Y; the grid read
 * whole by every channel group, its gradient a sum over them), the output
 * rows and columns (grid and Y; X whole: any position may be read). X's
 * rows and columns are never cut. */
#include "graph/ops/internal.h"

static const char *const padding_modes[] = {"zeros", "border", NULL};

const char *pl_grid_padding_name(int v)
{
	return v >= 0 && v < 2 ? padding_modes[v] : NULL;
}

pl_status pl__infer_gridsample(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0), *gr = IN(g, op, 1);
	if (x->rank != 4)
		return pl_err_set(err, PL_EINVAL,
		                  "input '%s' must be [N, C, H, W] (4 dimensions: 2-D sampling), "
		                  "it has %d",
		                  x->name, x->rank);
	if (gr->rank != 4 || gr->shape[0] != x->shape[0] || gr->shape[3] != 2)
		return pl_err_set(err, PL_EINVAL, "grid '%s' must be [N %lld, H_out, W_out, 2]",
		                  gr->name, (long long)x->shape[0]);
	if (gr->dtype != x->dtype)
		return pl_err_set(err, PL_EINVAL, "grid '%s' and input '%s' differ in dtype",
		                  gr->name, x->name);
	if (op->attrs->resize_mode != PL_RESIZE_LINEAR &&
	    op->attrs->resize_mode != PL_RESIZE_NEAREST)
		return pl_err_set(err, PL_EINVAL, "attrs.mode: expected bilinear or nearest");
	int64_t shape[4] = {x->shape[0], x->shape[1], gr->shape[1], gr->shape[2]};
	pl__set_out(g, op, 0, 4, shape, x->dtype);
	int ln = pl__loop_add(op, shape[0], PL_LOOP_PARALLEL, 1);
	pl__map(op, 0, 0, 0, ln);
	pl__map(op, 0, 1, 0, ln);
	pl__map(op, 1, 0, 0, ln);
	int lc = pl__loop_add(op, shape[1], PL_LOOP_PARALLEL, 1);
	pl__map(op, 0, 0, 1, lc);
	pl__map(op, 1, 0, 1, lc);
	for (int d = 2; d < 4; d++) {
		int l = pl__loop_add(op, shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 0, 1, d - 1, l);
		pl__map(op, 1, 0, d, l);
	}
	return PL_OK;
}

/* Per output element: its taps (4 bilinear, 1 nearest) weighed, 2 FLOPs a
 * tap, and the weights from the position (8 a position a channel group);
 * backward the same scattered to X and, bilinear, the grid's gradient (as
 * much again). X, the grid and Y's bytes each way; X and the grid kept. */
void pl__work_gridsample(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double taps = op->attrs->resize_mode == PL_RESIZE_LINEAR ? 4 : 1;
	double out = pl__local_out(g, op, 0, split), pos = pl__local_in(g, op, 1, split) / 2;
	double xb = pl__local_in_bytes(g, op, 0, split), gb = pl__local_in_bytes(g, op, 1, split);
	double yb = pl__local_out_bytes(g, op, 0, split);
	w->vec_flops_fwd = 2 * taps * out + 8 * pos;
	w->bytes_fwd = xb + gb + yb;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	int dgrid = IN(g, op, 1)->requires_grad && taps > 1;
	w->vec_flops_bwd = (2 + 2 * dgrid) * taps * out + 8 * pos;
	w->bytes_bwd = 2 * xb + 2 * gb + yb;
	w->kernels_bwd = 1;
	w->saved_bytes = xb + gb;
	w->saves_in = 3;
}
