/* Recurrent layers as ONNX defines them (RNN, GRU, LSTM; layout 0, the
 * default activations, no peepholes, no clip, every sequence full length,
 * full length): X [seq, batch, input], W [directions, gates x hidden,
 * input], R [directions, gates x hidden, hidden], optional B [directions, 2
 * x gates x hidden] (W's biases, then R's), optional initial_h (and LSTM's
 * initial_c) [directions, batch, hidden] (zeros when not given; ONNX's
 * inputs 5 and 6, sequence_lens left out); Y [seq, directions, batch,
 * hidden], the hidden state of every step (an LSTM with cell_states: the
 * cell state of every step). The final states are Y's last step of each
 * direction (the importer slices them out).
 *
 * Loops: the directions and the batch are independent (cut: W, R and B by
 * direction, X and Y by batch; X's gradient is a sum over the directions, the
 * weights' over the batch); the steps, the gates, the hidden units and the
 * input features never (each step needs the whole hidden state of the one
 * before). */
#include "graph/ops/internal.h"

/* gates per hidden unit */
static int64_t gates_of(pl_optype t)
{
	return t == PL_OP_LSTM ? 4 : t == PL_OP_GRU ? 3 : 1;
}

static const char *const directions[] = {"forward", "reverse", "bidirectional"};

const char *pl_rnn_direction_name(int v)
{
	return v >= 0 && v < 3 ? directions[v] : NULL;
}

pl_status pl__infer_rnn(pl_graph *g, pl_op *op, pl_err *err)
{
	const pl_tensor *x = IN(g, op, 0), *w = IN(g, op, 1), *r = IN(g, op, 2);
	const pl_tensor *b = op->ninputs > 3 ? IN(g, op, 3) : NULL;
	int64_t G = gates_of(op->type);
	if (x->rank != 3)
		return pl_err_set(err, PL_EINVAL,
		                  "input '%s' must be [sequence, batch, input features] (3 "
		                  "dimensions), it has %d",
		                  x->name, x->rank);
	int64_t dirs = op->attrs->rnn_direction == PL_RNN_BIDIRECTIONAL ? 2 : 1;
	if (w->rank != 3 || w->shape[0] != dirs || w->shape[1] % G || w->shape[2] != x->shape[2])
		return pl_err_set(
		    err, PL_EINVAL,
		    "weight '%s' must be [%lld directions, %lld x hidden, input features "
		    "%lld]",
		    w->name, (long long)dirs, (long long)G, (long long)x->shape[2]);
	int64_t H = w->shape[1] / G;
	if (r->rank != 3 || r->shape[0] != dirs || r->shape[1] != G * H || r->shape[2] != H)
		return pl_err_set(err, PL_EINVAL,
		                  "recurrence weight '%s' must be [%lld, %lld, %lld]", r->name,
		                  (long long)dirs, (long long)(G * H), (long long)H);
	if (b && (b->rank != 2 || b->shape[0] != dirs || b->shape[1] != 2 * G * H))
		return pl_err_set(err, PL_EINVAL, "bias '%s' must be [%lld, %lld]", b->name,
		                  (long long)dirs, (long long)(2 * G * H));
	int nstates = op->type == PL_OP_LSTM ? 2 : 1;
	if (op->ninputs > 4 + nstates)
		return pl_err_set(err, PL_EINVAL,
		                  "%s takes X, W, R, B and %s, %d inputs at most; it has %d",
		                  op->type == PL_OP_LSTM ? "LSTM" : "it",
		                  op->type == PL_OP_LSTM ? "initial_h, initial_c" : "initial_h",
		                  4 + nstates, op->ninputs);
	for (int i = 4; i < op->ninputs; i++) {
		const pl_tensor *h0 = IN(g, op, i);
		if (h0->rank != 3 || h0->shape[0] != dirs || h0->shape[1] != x->shape[1] ||
		    h0->shape[2] != H || h0->dtype != x->dtype)
			return pl_err_set(
			    err, PL_EINVAL,
			    "initial state '%s' must be [%lld directions, batch %lld, "
			    "hidden %lld] of the input's dtype",
			    h0->name, (long long)dirs, (long long)x->shape[1], (long long)H);
	}
	if (op->attrs->cell_states && op->type != PL_OP_LSTM)
		return pl_err_set(err, PL_EINVAL, "attrs.cell_states is LSTM's");
	if (w->dtype != x->dtype || r->dtype != x->dtype || (b && b->dtype != x->dtype))
		return pl_err_set(err, PL_EINVAL, "input, weights and bias differ in dtype");
	if (op->attrs->linear_before_reset && op->type != PL_OP_GRU)
		return pl_err_set(err, PL_EINVAL, "attrs.linear_before_reset is GRU's");
	int64_t shape[4] = {x->shape[0], dirs, x->shape[1], H};
	pl__set_out(g, op, 0, 4, shape, x->dtype);
	int ld = pl__loop_add(op, dirs, PL_LOOP_PARALLEL, 1);
	for (int i = 1; i < op->ninputs; i++)
		pl__map(op, 0, i, 0, ld);
	pl__map(op, 1, 0, 1, ld);
	int ln = pl__loop_add(op, x->shape[1], PL_LOOP_PARALLEL, 1);
	pl__map(op, 0, 0, 1, ln);
	pl__map(op, 1, 0, 2, ln);
	for (int i = 4; i < op->ninputs; i++) /* the initial states: by sample */
		pl__map(op, 0, i, 1, ln);
	int ls = pl__loop_add(op, x->shape[0], PL_LOOP_PARALLEL, 0);
	pl__map(op, 0, 0, 0, ls);
	pl__map(op, 1, 0, 0, ls);
	int lg = pl__loop_add(op, G * H, PL_LOOP_PARALLEL, 0);
	pl__map(op, 0, 1, 1, lg);
	pl__map(op, 0, 2, 1, lg);
	int lh = pl__loop_add(op, H, PL_LOOP_PARALLEL, 0);
	pl__map(op, 1, 0, 3, lh);
	pl__map(op, 0, 2, 2, lh);
	for (int i = 4; i < op->ninputs; i++)
		pl__map(op, 0, i, 2, lh);
	int li = pl__loop_add(op, x->shape[2], PL_LOOP_REDUCE, 0);
	pl__map(op, 0, 0, 2, li);
	pl__map(op, 0, 1, 2, li);
	return PL_OK;
}

/* Per local direction and sample, each step: the input's and the hidden
 * state's products with W and R (2 G H (I + H) FLOPs; the input's for all
 * steps at once, the recurrent one a small GEMM per step), the gates'
 * element-wise work as ONNX's equations count it (each gate: its two
 * products' sum and an activation of 4, as Tanh's and Sigmoid's rule count;
 * then LSTM's cell and output, 8 a hidden unit with the cell's tanh, GRU's
 * blend and reset, 5), twice that backward. Kernels: the input's product,
 * then a product and an element-wise kernel a step; backward those and the
 * weights' products. Kept for the backward: X (for W's gradient), Y (the
 * states) and the op's own gates and cells. */
void pl__work_rnn(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	const pl_tensor *x = IN(g, op, 0), *wt = IN(g, op, 1), *y = OUT(g, op, 0);
	int64_t G = gates_of(op->type), H = y->shape[3], I = x->shape[2], S = x->shape[0];
	double runs = (double)(y->shape[1] / split[0]) * (double)(x->shape[1] / split[1]);
	double steps = runs * (double)S, GH = (double)(G * H);
	double in_flops = 2 * steps * GH * (double)I, rec_flops = 2 * steps * GH * (double)H;
	double cell = op->type == PL_OP_LSTM ? 8 : op->type == PL_OP_GRU ? 5 : 0;
	double vec = steps * (5 * GH + cell * (double)H);
	int eb = pl_dtype_bytes(x->dtype);
	double xb = pl__local_in_bytes(g, op, 0, split), yb = pl__local_out_bytes(g, op, 0, split);
	double wb = 0, hb = 0; /* the weights; the initial states, read once */
	for (int i = 1; i < op->ninputs; i++)
		*(i < 4 ? &wb : &hb) += pl__local_in_bytes(g, op, i, split);
	/* the gates and cells (and the hidden states, when the output is the
	 * cells), written once */
	double gateb = steps * (GH + (double)H * (1 + op->attrs->cell_states)) * eb;
	w->gemm_flops_fwd = in_flops + rec_flops;
	w->vec_flops_fwd = vec;
	w->bytes_fwd = xb + wb + hb + yb + 2 * gateb;
	int ks = S > 100000000 ? 100000000 : (int)S; /* (a count of launches, bounded) */
	w->kernels_fwd = 1 + 2 * ks;
	if (!y->requires_grad)
		return;
	w->gemm_flops_bwd =
	    2 * rec_flops + (wt->requires_grad ? in_flops : 0) + (x->requires_grad ? in_flops : 0);
	w->vec_flops_bwd = 2 * vec;
	w->bytes_bwd = 2 * (yb + gateb) + xb + 2 * wb + 2 * hb;
	w->kernels_bwd = 2 + 2 * ks;
	w->saved_bytes = gateb + yb + (wt->requires_grad ? xb : 0);
	w->saves_out = 1;
	w->saves_in = wt->requires_grad ? 1 : 0;
}
