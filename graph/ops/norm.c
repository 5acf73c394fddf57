/* Operators that need whole rows: Softmax (its axis), LayerNormalization and
 * RMSNormalization (the normalized axes), and SoftmaxCrossEntropy, whose class
 * axis may be split Megatron-style at the price of small all-reduces of the
 * per-position max and sums. */
#include "graph/ops/internal.h"

pl_status pl__infer_softmax(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	int64_t axis;
	pl_status st = pl__check_axis(op, x, -1, &axis, err);
	if (st)
		return st;
	pl__set_out(g, op, 0, x->rank, x->shape, x->dtype);
	for (int d = 0; d < x->rank; d++) {
		int l = pl__loop_add(op, x->shape[d], PL_LOOP_PARALLEL, d != axis);
		pl__map(op, 0, 0, d, l);
		pl__map(op, 1, 0, d, l);
	}
	return PL_OK;
}

void pl__work_softmax(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double n = pl__local_out(g, op, 0, split), b = pl__local_out_bytes(g, op, 0, split);
	w->vec_flops_fwd = 5 * n;
	w->bytes_fwd = 2 * b;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	w->vec_flops_bwd = 4 * n;
	w->bytes_bwd = 3 * b;
	w->kernels_bwd = 1;
	w->saved_bytes = b; /* the output */
	w->saves_out = 1;
}

/* CumSum: the axis kept whole (every element reads those before it), the
 * other dimensions cut as an element-wise op's; one addition an element
 * each way (the backward is the sum from the other end), nothing kept */
void pl__work_cumsum(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double n = pl__local_out(g, op, 0, split), b = pl__local_out_bytes(g, op, 0, split);
	w->vec_flops_fwd = n;
	w->bytes_fwd = 2 * b;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	w->vec_flops_bwd = n;
	w->bytes_bwd = 2 * b;
	w->kernels_bwd = 1;
}

pl_status pl__infer_norm(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	int64_t axis;
	pl_status st = pl__check_axis(op, x, -1, &axis, err);
	if (st)
		return st;
	int nn = x->rank - (int)axis;
	for (int i = 1; i < op->ninputs; i++) {
		const pl_tensor *s = IN(g, op, i);
		int ok = s->rank == nn;
		for (int d = 0; ok && d < nn; d++)
			ok = s->shape[d] == x->shape[axis + d];
		if (!ok)
			return pl_err_set(err, PL_EINVAL,
			                  "input %d '%s' must have the shape of the normalized "
			                  "dimensions %lld.. of '%s'",
			                  i, s->name, (long long)axis, x->name);
		if (s->dtype != x->dtype)
			return pl_err_set(
			    err, PL_EINVAL, "input '%s' (%s) differs in dtype from '%s' (%s)",
			    s->name, pl_dtype_name(s->dtype), x->name, pl_dtype_name(x->dtype));
	}
	pl__set_out(g, op, 0, x->rank, x->shape, x->dtype);
	for (int d = 0; d < x->rank; d++) {
		int l = pl__loop_add(op, x->shape[d], PL_LOOP_PARALLEL, d < axis);
		pl__map(op, 0, 0, d, l);
		pl__map(op, 1, 0, d, l);
		/* scale and bias are whole along the normalized axes: never split */
	}
	return PL_OK;
}

void pl__work_norm(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double n = pl__local_out(g, op, 0, split), b = pl__local_out_bytes(g, op, 0, split);
	double sb = 0;
	for (int i = 1; i < op->ninputs; i++)
		sb += pl__local_in_bytes(g, op, i, split);
	const pl_tensor *x = IN(g, op, 0);
	int64_t axis = pl__norm_axis(op->attrs->axis, x->rank), row = 1;
	for (int d = (int)axis; d < x->rank; d++)
		row *= x->shape[d];
	double rows = n / (double)row;
	w->vec_flops_fwd = (op->type == PL_OP_LAYERNORM ? 8 : 5) * n;
	w->bytes_fwd = 2 * b + sb;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	w->vec_flops_bwd = (op->type == PL_OP_LAYERNORM ? 12 : 8) * n;
	w->bytes_bwd = 3 * b + 2 * sb;
	w->kernels_bwd = 2;                /* input gradient; scale/bias gradient reduction */
	w->saved_bytes = b + rows * 2 * 4; /* input plus fp32 mean and rstd per row */
	w->saves_in = 1;
	if (w->unfused_norm) {
		/* as eager PyTorch runs the reference RMSNorm, y = (x.float() *
		 * rsqrt(mean(x.float()^2) + eps)).type_as(x) * scale (Meta's Llama
		 * reference, torchtitan's RMSNorm, Hugging Face's LlamaRMSNorm, Aleph
		 * Alpha's scaling before its u-muP rework; a LayerNorm written the
		 * same way subtracts a mean first): each op its own kernel over the
		 * n elements of e bytes, everything between the casts in fp32.
		 * Forward: .float() (read e, write 4), pow (4, 4), mean (4), the
		 * product x * r (4, 4), .type_as (4, e), the scale (e, e): 4e + 28
		 * bytes, 8 kernels with the add and rsqrt per row. Backward through
		 * them (autograd's formulas for mul, pow, mean and the casts, a
		 * product's reduced gradient one kernel of three passes): the
		 * scale's two gradients 5e, the casts back e + 4 and 4 + e, the
		 * product's two 20, mean's 4, pow's 12, the two gradients of the
		 * fp32 x added 12: 7e + 56 bytes, 10 kernels. Kept: the fp32 copy of
		 * x (pow's and the product's input; x itself only where it is fp32
		 * already) and the normalized x in e bytes (the scale's other
		 * factor), with rsqrt's result per row. The backward holds, beyond
		 * the gradients it reads and writes, three fp32 tensors at the
		 * product's backward (its incoming gradient, x's gradient and the
		 * product feeding r's reduction): 12 bytes an element. An fp32 x
		 * (e = 4) is not cast: .float() and .type_as return it, no kernels,
		 * and x itself is what pow and the product keep. */
		double e = b / n, cast = e < 4 ? e + 4 : 0; /* a cast's bytes an element */
		w->bytes_fwd = (2 * e + 20 + 2 * cast) * n + sb;
		w->kernels_fwd = cast > 0 ? 8 : 6;
		w->bytes_bwd = (5 * e + 48 + 2 * cast) * n + 2 * sb;
		w->kernels_bwd = cast > 0 ? 10 : 8;
		w->saves_in = !(cast > 0);
		w->saved_bytes = (cast > 0 ? 4 + e : 2 * e) * n + rows * 4;
		w->scratch_bwd = 12 * n;
	}
}

pl_status pl__infer_sce(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0), *y = IN(g, op, 1);
	if (x->rank < 1)
		return pl_err_set(err, PL_EINVAL, "logits '%s' must have a class dimension",
		                  x->name);
	pl_status st = pl__check_index_dtype(y, "labels", err);
	if (st)
		return st;
	int ok = y->rank == x->rank - 1;
	for (int d = 0; ok && d < y->rank; d++)
		ok = y->shape[d] == x->shape[d];
	if (!ok)
		return pl_err_set(err, PL_EINVAL,
		                  "labels '%s' must have the shape of logits '%s' without its last "
		                  "(class) dimension",
		                  y->name, x->name);
	int64_t none[1] = {1};
	pl__set_out(g, op, 0, 0, none,
	            x->dtype == PL_DT_FLOAT16 || x->dtype == PL_DT_BFLOAT16 ? PL_DT_FLOAT32
	                                                                    : x->dtype);
	for (int d = 0; d < x->rank; d++) {
		/* the loss is a mean over positions: every split leaves a partial sum */
		int l = pl__loop_add(op, x->shape[d], PL_LOOP_REDUCE, 1);
		pl__map(op, 0, 0, d, l);
		if (d < y->rank)
			pl__map(op, 0, 1, d, l);
	}
	return PL_OK;
}

/* the labels are classes of the logits' last dimension */
/* in inference mode input 4 is the running variance */
int pl__positive_batchnorm(const pl_graph *g, const pl_op *op, int input)
{
	(void)g;
	(void)op;
	return input == 4;
}

int64_t pl__range_sce(const pl_graph *g, const pl_op *op, int input)
{
	const pl_tensor *x = IN(g, op, 0);
	return input == 1 ? x->shape[x->rank - 1] : 0;
}

/* PyTorch's cross_entropy forward on n logits of b bytes (labels lb bytes):
 * 16-bit logits cast to an fp32 copy (cast: 1) that log_softmax reads, its
 * probabilities written (pb bytes), then the picked log-probabilities read
 * with the labels. Its bytes moved and kernels. */
static void torch_ce_forward(double n, double b, double lb, int cast, double *bytes, int *kernels)
{
	double pb = cast ? 4 * n : b;
	*bytes = b + pb + (cast ? 2 * pb : 0) + lb;
	*kernels = 2 + cast;
}

void pl__work_sce(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	const pl_tensor *x = IN(g, op, 0);
	double n = pl__local_in(g, op, 0, split), b = pl__local_in_bytes(g, op, 0, split);
	int lc = op->spec.in[0][x->rank - 1].first;
	double positions = n / (double)(x->shape[x->rank - 1] / split[lc]);
	double lb = pl__local_in_bytes(g, op, 1, split);
	int cast = x->dtype == PL_DT_FLOAT16 || x->dtype == PL_DT_BFLOAT16;
	w->vec_flops_fwd = 6 * n;
	w->vec_flops_bwd = 2 * n;
	w->kernels_fwd = w->kernels_bwd = 1;
	if (w->fused_loss) {
		/* one kernel each way (flash-attn's cross_entropy, Liger's): it
		 * reads the logits in their dtype, computes in fp32 registers and
		 * keeps the logits themselves and an fp32 log-sum-exp per row; the
		 * backward reads them again and writes the gradient */
		w->bytes_fwd = b + lb;
		w->bytes_bwd = 2 * b;
		w->saved_bytes = b + 4 * positions;
		w->saves_in = 1;
	} else {
		/* as PyTorch's cross_entropy (log-softmax, then the picked
		 * log-probabilities): 16-bit logits run in float32, as every
		 * framework runs them by default (autocast's float32 list has
		 * cross_entropy; Megatron-LM's loss takes logits.float() unless
		 * --fp16-lm-cross-entropy; torchtitan casts with .float()): a cast
		 * writes an fp32 copy that the softmax reads, the probabilities
		 * are kept in fp32, and the backward's fp32 gradient is cast back */
		double pb = cast ? 4 * n : b; /* the probabilities' bytes */
		torch_ce_forward(n, b, lb, cast, &w->bytes_fwd, &w->kernels_fwd);
		w->bytes_bwd = 2 * pb + (cast ? pb + b : 0);
		w->kernels_bwd = 1 + cast;
		w->saved_bytes = pb;
		w->scratch_fwd = cast ? pb : 0; /* the fp32 copy, beside the probabilities */
		w->scratch_bwd = cast ? pb : 0; /* the fp32 gradient, beside its cast */
		if (split[lc] == 1 && cast) {
			/* 16-bit logits, the classes whole: the cast's fp32 copy
			 * goes through PyTorch's cross_entropy, log_softmax
			 * then nll_loss, and autograd runs nll_loss's backward as
			 * its own kernel, which allocates a gradient of the log-
			 * probabilities' size, zero-fills it and writes the targets'
			 * entries (nll_loss_backward_out_cuda: grad_input.zero_(),
			 * then one element a position; aten/src/ATen/native/cuda/
			 * Loss.cu); log_softmax's backward reads it beside the kept
			 * probabilities and writes its own fp32 gradient. Most live
			 * at once: the probabilities, that dense gradient and
			 * log_softmax's, 3 pb; the 16-bit gradient (b, which the
			 * sweep counts at the op) comes only after the first two
			 * are given back. A vocab-parallel loss (classes cut) runs
			 * the framework's own function instead (Megatron's
			 * _VocabParallelCrossEntropy writes its gradient into the
			 * kept softmax in place). fp32 logits keep the count
			 * above: the gradient straight from the kept
			 * probabilities, as the planner's executor (which runs
			 * fp32 models) computes it and checks it against (run
			 * --profile) */
			w->scratch_bwd = 2 * pb - b;
			w->bytes_bwd += 2 * pb; /* the fill, and its read by log_softmax */
			w->kernels_bwd += 2;    /* the fill and the scatter */
		}
	}
	if (w->loss_metrics > 0) {
		/* training metrics: each the same cross_entropy again on the
		 * logits, forward only (no_grad), after the micro-batch's
		 * backward (Composer's Trainer._eval_train_metrics); priced with
		 * the loss's forward, which runs once a micro-batch as they do.
		 * Their fp32 scratch lives after the backward, when the
		 * activations are given back, and is not counted in the peak */
		double mb;
		int mk;
		torch_ce_forward(n, b, lb, cast, &mb, &mk);
		w->vec_flops_fwd += w->loss_metrics * 6 * n;
		w->bytes_fwd += w->loss_metrics * mb;
		w->kernels_fwd += w->loss_metrics * mk;
	}
	if (split[lc] > 1) { /* vocab-parallel: max, then sum-exp and target logit */
		w->ncoll = 2;
		w->coll[0] = (pl_opcoll){PL_COLL_ALL_REDUCE, lc, 0, 4 * positions};
		w->coll[1] = (pl_opcoll){PL_COLL_ALL_REDUCE, lc, 0, 8 * positions};
	}
}

/* BatchNormalization (X [N, C, spatial...], scale, B[, mean, var], each [C]):
 * per channel over the batch and the spatial positions. Loops: N, C, the
 * spatial dimensions (kept whole: their statistics are the channel's). In
 * training mode the statistics are the batch's: cut N and each piece sums its
 * part, then the pieces all-reduce the sums (synchronised batch norm, so a
 * sharded step computes what one device does): C floats twice forward (the
 * mean, then the variance about it), 2C backward. In inference mode the
 * running statistics (inputs 3 and 4) are constants: an affine map. */
pl_status pl__infer_batchnorm(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0);
	if (x->rank < 2)
		return pl_err_set(err, PL_EINVAL,
		                  "input '%s' has %d dimensions; expected [batch, channels, ...]",
		                  x->name, x->rank);
	if (!op->attrs->training_mode && op->ninputs < 5)
		return pl_err_set(
		    err, PL_EINVAL,
		    "in inference mode (attrs.training_mode 0, the default) the running "
		    "mean and variance are inputs 3 and 4");
	for (int i = 1; i < op->ninputs; i++) {
		const pl_tensor *t = IN(g, op, i);
		if (t->rank != 1 || t->shape[0] != x->shape[1])
			return pl_err_set(
			    err, PL_EINVAL,
			    "input %d '%s' must have shape [%lld] (the channels of '%s')", i,
			    t->name, (long long)x->shape[1], x->name);
		if (t->dtype != x->dtype && t->dtype != PL_DT_FLOAT32)
			return pl_err_set(err, PL_EINVAL, "input %d '%s' has dtype %s", i, t->name,
			                  pl_dtype_name(t->dtype));
	}
	pl__set_out(g, op, 0, x->rank, x->shape, x->dtype);
	for (int d = 0; d < x->rank; d++) {
		int l = pl__loop_add(op, x->shape[d], PL_LOOP_PARALLEL, d < 2);
		pl__map(op, 0, 0, d, l);
		pl__map(op, 1, 0, d, l);
		for (int i = 1; d == 1 && i < op->ninputs; i++)
			pl__map(op, 0, i, 0, l);
	}
	return PL_OK;
}

void pl__work_batchnorm(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	double n = pl__local_in(g, op, 0, split), b = pl__local_in_bytes(g, op, 0, split);
	double c = (double)(IN(g, op, 0)->shape[1] / split[1]);
	int train = op->attrs->training_mode;
	/* training: a pass for the mean, one for the variance, one to write */
	w->vec_flops_fwd = (train ? 5 : 2) * n;
	w->bytes_fwd = (train ? 3 : 2) * b;
	w->kernels_fwd = train ? 3 : 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	w->vec_flops_bwd = 6 * n;
	w->bytes_bwd = 3 * b; /* x, dy, dx */
	w->kernels_bwd = 2;
	w->saved_bytes = b + 8 * c; /* x, and the channels' mean and 1/std */
	w->saves_in = 1;
	if (train && split[0] > 1 && !w->local_bn) {
		w->ncoll = 3;
		w->coll[0] = (pl_opcoll){PL_COLL_ALL_REDUCE, 0, 0, 4 * c};
		w->coll[1] = (pl_opcoll){PL_COLL_ALL_REDUCE, 0, 0, 4 * c};
		w->coll[2] = (pl_opcoll){PL_COLL_ALL_REDUCE, 0, 1, 8 * c};
	}
}
