/* Element-wise operators (unary; binary and Where with numpy broadcasting;
 * comparisons; Dropout, Cast, Identity): one parallel loop per output
 * dimension; a broadcast input dimension is never split, so that input is
 * replicated along the loop. */
#include <math.h>
#include <stdio.h>

#include "graph/ops/internal.h"

/* Sign, Floor, Ceil and Round: flat between their steps, so no gradient
 * (torch.sign's, floor's, ceil's and round's is zero) */
static int is_step(pl_optype t)
{
	return t == PL_OP_SIGN || t == PL_OP_FLOOR || t == PL_OP_CEIL || t == PL_OP_ROUND;
}

/* Equal, Less, Greater: 1 where the relation holds, else 0, as int64 (a
 * mask: no gradient) */
static int is_compare(pl_optype t)
{
	return t == PL_OP_EQUAL || t == PL_OP_LESS || t == PL_OP_GREATER;
}

static void shape_str(const pl_tensor *t, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "[");
	for (int d = 0; d < t->rank && k < n; d++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "",
		                      (long long)t->shape[d]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

pl_status pl__infer_elementwise(pl_graph *g, pl_op *op, pl_err *err)
{
	/* Where's condition (input 0) is read as true where not 0, of any dtype */
	int where = op->type == PL_OP_WHERE, first = where;
	const pl_tensor *a = IN(g, op, first);
	/* Pow's exponent may be of another type (ONNX's T1 and T2): the
	 * power takes the base's */
	for (int i = first + 1; i < (op->type == PL_OP_POW_TENSOR ? 1 : op->ninputs); i++) {
		const pl_tensor *b = IN(g, op, i);
		if (a->dtype != b->dtype)
			return pl_err_set(
			    err, PL_EINVAL, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
			    a->name, pl_dtype_name(a->dtype), b->name, pl_dtype_name(b->dtype));
	}
	int64_t shape[PL_MAX_RANK];
	int rank = 0;
	for (int i = 0; i < op->ninputs; i++)
		rank = IN(g, op, i)->rank > rank ? IN(g, op, i)->rank : rank;
	for (int d = 0; d < rank; d++) { /* numpy broadcasting over every input */
		const pl_tensor *wide = NULL;
		shape[d] = 1;
		for (int i = 0; i < op->ninputs; i++) {
			const pl_tensor *t = IN(g, op, i);
			int dt = d - (rank - t->rank);
			int64_t s = dt >= 0 ? t->shape[dt] : 1;
			if (s != 1 && shape[d] != 1 && s != shape[d]) {
				char bufa[128], bufb[128];
				shape_str(wide, bufa, sizeof bufa);
				shape_str(t, bufb, sizeof bufb);
				return pl_err_set(err, PL_EINVAL,
				                  "inputs '%s' %s and '%s' %s do not broadcast: "
				                  "dimension %d is %lld against %lld",
				                  wide->name, bufa, t->name, bufb, d,
				                  (long long)shape[d], (long long)s);
			}
			if (s != 1) {
				shape[d] = s;
				wide = t;
			}
		}
	}
	pl_dtype dt = op->type == PL_OP_CAST ? op->attrs->to
	              : is_compare(op->type) ? PL_DT_INT64
	                                     : a->dtype;
	pl__set_out(g, op, 0, rank, shape, dt);
	if (is_compare(op->type) || is_step(op->type)) /* a mask; a sign or a rounding, flat */
		g->tensors[op->out[0]].requires_grad = 0;
	if (where) /* no gradient reaches the condition */
		g->tensors[op->out[0]].requires_grad =
		    IN(g, op, 1)->requires_grad || IN(g, op, 2)->requires_grad;
	for (int d = 0; d < rank; d++) {
		int l = pl__loop_add(op, shape[d], PL_LOOP_PARALLEL, 1);
		pl__map(op, 1, 0, d, l);
		for (int i = 0; i < op->ninputs; i++) {
			const pl_tensor *t = IN(g, op, i);
			int dd = d - (rank - t->rank);
			if (dd >= 0 && t->shape[dd] == shape[d] && shape[d] > 1)
				pl__map(op, 0, i, dd, l);
		}
	}
	return PL_OK;
}

/* FLOPs per element, forward and backward (tanh-form GELU: ~8 forward). */
static void per_elem(pl_optype t, double *fwd, double *bwd)
{
	switch (t) {
	case PL_OP_GELU:
		*fwd = 8;
		*bwd = 12;
		break;
	case PL_OP_SILU:
		*fwd = 4;
		*bwd = 6;
		break;
	case PL_OP_TANH:
	case PL_OP_SIGMOID:
	case PL_OP_ATAN:  /* its slope 1 / (1 + v^2) */
	case PL_OP_ATANH: /* 1 / (1 - v^2) */
		*fwd = 4;
		*bwd = 3;
		break;
	case PL_OP_EXP:
	case PL_OP_LOG:
	case PL_OP_ELU: /* an exponential below 0 (as Exp counts it), its slope from it */
	case PL_OP_SELU:
	case PL_OP_CELU:
		*fwd = 4;
		*bwd = 1;
		break;
	case PL_OP_PRELU: /* a select and a product; backward both inputs' */
		*fwd = 1;
		*bwd = 2;
		break;
	case PL_OP_SQRT:
	case PL_OP_TAN: /* its slope 1 + tan^2 from its value */
		*fwd = 4;
		*bwd = 2;
		break;
	case PL_OP_POW: /* exp(e log x), as Exp counts it; the slope the same again */
	case PL_OP_POW_TENSOR: /* the same; the exponent's gradient (x^e log x) too: below */
	case PL_OP_ERF: /* its slope 2/sqrt(pi) e^(-v^2): a transcendental too */
	case PL_OP_SIN:
	case PL_OP_COS: /* the backward's derivative a transcendental too */
	case PL_OP_SINH:
	case PL_OP_COSH:
	case PL_OP_ASIN: /* a square root in the slope: 1 / sqrt(1 - v^2) */
	case PL_OP_ACOS:
	case PL_OP_ASINH:
	case PL_OP_ACOSH:
		*fwd = 4;
		*bwd = 5;
		break;
	case PL_OP_SOFTPLUS:
		*fwd = 8;
		*bwd = 5;
		break;
	case PL_OP_DIV:
		*fwd = 1;
		*bwd = 3;
		break;
	case PL_OP_DROPOUT:
		*fwd = 2;
		*bwd = 1;
		break;
	case PL_OP_CAST:
		*fwd = 0;
		*bwd = 0;
		break;
	case PL_OP_ADD:
	case PL_OP_SUB:
	case PL_OP_MUL:
	case PL_OP_RELU:
	case PL_OP_LEAKYRELU:
	case PL_OP_IDENTITY:
	case PL_OP_NEG:
	case PL_OP_ABS:
	case PL_OP_MAX:
	case PL_OP_MIN:
	case PL_OP_WHERE: /* a select */
		*fwd = 1;
		*bwd = 1;
		break;
	case PL_OP_EQUAL:
	case PL_OP_LESS:
	case PL_OP_GREATER: /* no backward */
	case PL_OP_SIGN:
	case PL_OP_FLOOR:
	case PL_OP_CEIL:
	case PL_OP_ROUND:
		*fwd = 1;
		*bwd = 0;
		break;
	case PL_OP_CLIP:
	case PL_OP_HARDSIGMOID:
		*fwd = 2;
		*bwd = 1;
		break;
	case PL_OP_HARDSWISH:
		*fwd = 4;
		*bwd = 3;
		break;
	PL_CASES_NOT_ELEMENTWISE: /* their own rules price them */
		*fwd = 0;
		*bwd = 0;
		break;
	}
}

/* A bias added to a product's output, or the output scaled by a constant,
 * where nothing else reads that output: done in the product's epilogue, as
 * cuBLASLt's bias epilogue (and its bias-gradient one) and the GEMM's alpha do
 * it, and as PyTorch's addmm/baddbmm and compiled frameworks (MindSpore's
 * graph kernel fusion, XLA) run a linear layer: no kernel and no pass over the
 * output of its own (docs/cost-model.md, "Epilogues") */
static int in_epilogue(const pl_graph *g, const pl_op *op)
{
	if (op->type != PL_OP_ADD && op->type != PL_OP_MUL && op->type != PL_OP_DIV)
		return 0;
	for (int i = 0; i < (op->type == PL_OP_DIV ? 1 : 2); i++) { /* the product either side */
		const pl_tensor *a = IN(g, op, i), *b = IN(g, op, 1 - i);
		if (a->producer < 0 || a->nconsumers != 1 ||
		    !(pl_op_traits(&g->ops[a->producer]) & PL_OPT_GEMM) || b->producer >= 0 ||
		    a->rank < 1 || OUT(g, op, 0)->rank != a->rank)
			continue;
		int64_t nb = pl_tensor_elems(b);
		if (nb == 1 || (op->type == PL_OP_ADD && nb == a->shape[a->rank - 1] &&
		                b->shape[b->rank - 1] == nb))
			return 1 + (1 - i); /* 1 + the operand's input index */
	}
	return 0;
}

/* A constant mask added to attention scores that only a Softmax reads, or
 * scores filled with a constant where a mask says (masked_fill: a Where
 * whose condition needs no gradient): done in the softmax kernel, as
 * Megatron's FusedScaleMaskSoftmax (a masked_fill with its mask input) and
 * PyTorch's scaled_dot_product_attention (attn_mask) do it: the mask is
 * read, the scores are not passed over again, and the backward hands the
 * softmax's gradient through (docs/cost-model.md, "Epilogues"); not where
 * the program runs it eagerly (pl_opwork.unfused_mask). Returns 1 + the
 * mask's input index, else 0. */
static int in_softmax(const pl_graph *g, const pl_op *op)
{
	const pl_tensor *y = OUT(g, op, 0);
	if ((op->type != PL_OP_ADD && op->type != PL_OP_WHERE) || y->nconsumers != 1 ||
	    g->ops[y->consumers[0]].type != PL_OP_SOFTMAX)
		return 0;
	if (op->type == PL_OP_WHERE) {
		const pl_tensor *c = IN(g, op, 0);
		for (int i = 1; i < 3 && !c->requires_grad; i++) {
			const pl_tensor *a = IN(g, op, i), *fill = IN(g, op, 3 - i);
			if (a->producer >= 0 && a->nconsumers == 1 && a->rank == y->rank &&
			    fill->producer < 0 && !fill->requires_grad &&
			    fill->role != PL_ROLE_PARAM)
				return 1;
		}
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		const pl_tensor *a = IN(g, op, i), *mask = IN(g, op, 1 - i);
		if (a->producer >= 0 && a->nconsumers == 1 && a->rank == y->rank &&
		    mask->producer < 0 && !mask->requires_grad && mask->role != PL_ROLE_PARAM)
			return 1 + (1 - i);
	}
	return 0;
}

/* Log's and Sqrt's operand; the inverse functions' (Asin, Acos and Atanh
 * within (-1, 1), Acosh above 1) */
int pl__positive_operand(const pl_graph *g, const pl_op *op, int input)
{
	(void)g;
	if (input != 0)
		return PL_DOMAIN_ANY;
	if (op->type == PL_OP_ASIN || op->type == PL_OP_ACOS || op->type == PL_OP_ATANH)
		return PL_DOMAIN_UNIT;
	return op->type == PL_OP_ACOSH ? PL_DOMAIN_ABOVE_ONE : PL_DOMAIN_POSITIVE;
}

/* Pow's operand under a power that is not a whole number (x^1.5 is real for
 * x >= 0 alone), or a negative one (no zero to divide by) */
int pl__positive_power(const pl_graph *g, const pl_op *op, int input)
{
	(void)g;
	double e = op->attrs->exponent;
	return input == 0 && (e != floor(e) || e < 0);
}

int pl__positive_divisor(const pl_graph *g, const pl_op *op, int input)
{
	(void)g;
	(void)op;
	return input == 1;
}

int pl_op_fusion(const pl_graph *g, const pl_op *op)
{
	return in_epilogue(g, op) << 4 | in_softmax(g, op);
}

void pl__work_elementwise(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	int mk = w->unfused_mask ? 0 : in_softmax(g, op);
	if (mk) {
		w->bytes_fwd = pl__local_in_bytes(g, op, mk - 1, split);
		return;
	}
	int ep = in_epilogue(g, op);
	if (ep) { /* the bias (or scale) read; its gradient a sum the product's
		   * weight-gradient epilogue takes */
		w->bytes_fwd = pl__local_in_bytes(g, op, ep - 1, split);
		if (OUT(g, op, 0)->requires_grad && IN(g, op, ep - 1)->requires_grad)
			w->bytes_bwd = w->bytes_fwd;
		return;
	}
	double n = pl__local_out(g, op, 0, split), fe = 0, be = 0;
	double out_b = pl__local_out_bytes(g, op, 0, split), in_b = 0;
	per_elem(op->type, &fe, &be);
	for (int i = 0; i < op->ninputs; i++)
		in_b += pl__local_in_bytes(g, op, i, split);
	w->vec_flops_fwd = fe * n;
	w->bytes_fwd = in_b + out_b;
	w->kernels_fwd = 1;
	if (!OUT(g, op, 0)->requires_grad)
		return;
	w->vec_flops_bwd = be * n;
	w->kernels_bwd = 1;
	w->bytes_bwd = out_b; /* gradient of the output */
	for (int i = 0; i < op->ninputs; i++) {
		const pl_tensor *t = IN(g, op, i);
		if (t->requires_grad)
			w->bytes_bwd += pl__local_in_bytes(g, op, i, split);
	}
	switch (op->type) {
	case PL_OP_ADD:
	case PL_OP_SUB:
	case PL_OP_IDENTITY:
	case PL_OP_NEG:
	case PL_OP_CAST:
	case PL_OP_EQUAL:
	case PL_OP_LESS:
	case PL_OP_GREATER:
	case PL_OP_SIGN:
	case PL_OP_FLOOR:
	case PL_OP_CEIL:
	case PL_OP_ROUND: break;   /* backward needs no forward value */
	case PL_OP_WHERE:          /* which of x and y takes the gradient: the condition */
	case PL_OP_MAX:
	case PL_OP_MIN:   /* which input takes it: both values, as torch.maximum keeps */
	case PL_OP_PRELU: /* x (its sign picks the slope) and a computed slope */
		for (int i = 0; i < (op->type == PL_OP_WHERE ? 1 : 2); i++)
			if (IN(g, op, i)->role != PL_ROLE_PARAM &&
			    IN(g, op, i)->role != PL_ROLE_CONST) {
				w->saved_bytes += pl__local_in_bytes(g, op, i, split);
				w->saves_in |= (uint8_t)(1u << i);
			}
		w->bytes_bwd += w->saved_bytes;
		break;
	case PL_OP_MUL:
	case PL_OP_DIV: /* each input's gradient needs the other input; a weight
	                 * or a constant (a buffer: RoPE's cos and sin) is saved
	                 * by reference, its bytes its own */
		for (int i = 0; i < 2; i++)
			if (IN(g, op, 1 - i)->requires_grad &&
			    IN(g, op, i)->role != PL_ROLE_PARAM &&
			    IN(g, op, i)->role != PL_ROLE_CONST) {
				w->saved_bytes += pl__local_in_bytes(g, op, i, split);
				w->saves_in |= (uint8_t)(1u << i);
			}
		w->bytes_bwd += w->saved_bytes;
		break;
	case PL_OP_POW_TENSOR: { /* PyTorch's pow(Tensor, Tensor) (derivatives.yaml): the
		                  * base's gradient e x^(e-1) reads x and e, the exponent's
		                  * x^e log x reads x, e and the result, which it keeps */
		int req_e = IN(g, op, 1)->requires_grad;
		w->vec_flops_bwd = be * n * ((IN(g, op, 0)->requires_grad) + req_e);
		for (int i = 0; i < 2; i++)
			if (IN(g, op, i)->role != PL_ROLE_PARAM &&
			    IN(g, op, i)->role != PL_ROLE_CONST) {
				w->saved_bytes += pl__local_in_bytes(g, op, i, split);
				w->saves_in |= (uint8_t)(1u << i);
			}
		if (req_e) {
			w->saved_bytes += out_b;
			w->saves_out = 1;
		}
		w->bytes_bwd += w->saved_bytes;
		break;
	}
	case PL_OP_DROPOUT: w->saved_bytes = n; break; /* one byte of mask per element */
	case PL_OP_RELU:
	case PL_OP_CLIP:
	case PL_OP_HARDSIGMOID:
	case PL_OP_HARDSWISH:
	case PL_OP_GELU:
	case PL_OP_SILU:
	case PL_OP_TANH:
	case PL_OP_EXP:
	case PL_OP_LOG:
	case PL_OP_SQRT:
	case PL_OP_SIN:
	case PL_OP_COS:
	case PL_OP_ERF:
	case PL_OP_TAN:
	case PL_OP_ASIN:
	case PL_OP_ACOS:
	case PL_OP_ATAN:
	case PL_OP_SINH:
	case PL_OP_COSH:
	case PL_OP_ASINH:
	case PL_OP_ACOSH:
	case PL_OP_ATANH:
	case PL_OP_ABS:
	case PL_OP_SOFTPLUS:
	case PL_OP_LEAKYRELU:
	case PL_OP_ELU:
	case PL_OP_SELU:
	case PL_OP_CELU:
	case PL_OP_POW:
	case PL_OP_SIGMOID: /* unary activations keep their input (or output, the same size) */
		w->saved_bytes = in_b;
		w->saves_in = 1;
		w->bytes_bwd += in_b;
		break;
	PL_CASES_NOT_ELEMENTWISE: /* their own rules price them */
		break;
	}
}

void pl__work_view(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w)
{
	if (!op->copy) /* a view: no kernel, no bytes */
		return;
	/* a clone: one copy kernel forward; clone's backward hands the
	 * gradient back unchanged */
	w->bytes_fwd = pl__local_in_bytes(g, op, 0, split) + pl__local_out_bytes(g, op, 0, split);
	w->kernels_fwd = 1;
}
