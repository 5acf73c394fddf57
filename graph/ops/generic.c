/* The operator table and what is common to all rules: candidate enumeration,
 * MindSpore per-input tuples <-> per-loop splits, strategy checks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/ops/internal.h"
#include "graph/parse.h"

static const pl_op_rule rules[] = {
    [PL_OP_MATMUL] = {"MatMul", 2, 2, 1, PL_OPT_GEMM | PL_OPT_ANCHOR | PL_OPT_LINEAR,
                      pl__infer_matmul, pl__work_matmul, NULL},
    [PL_OP_ADD] = {"Add", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SUB] = {"Sub", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_MUL] = {"Mul", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_DIV] = {"Div", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                   pl__positive_divisor},
    [PL_OP_RELU] = {"Relu", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_GELU] = {"Gelu", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SILU] = {"Silu", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_TANH] = {"Tanh", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SIGMOID] = {"Sigmoid", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SOFTMAX] = {"Softmax", 1, 1, 1, PL_OPT_ATTENTION, pl__infer_softmax, pl__work_softmax,
                       NULL},
    [PL_OP_LAYERNORM] = {"LayerNormalization", 2, 3, 1, PL_OPT_NORM, pl__infer_norm, pl__work_norm,
                         NULL},
    [PL_OP_RMSNORM] = {"RMSNormalization", 2, 2, 1, PL_OPT_NORM, pl__infer_norm, pl__work_norm,
                       NULL},
    [PL_OP_GATHER] = {"Gather", 2, 2, 1, PL_OPT_ANCHOR, pl__infer_gather, pl__work_gather,
                      pl__range_gather},
    [PL_OP_RESHAPE] = {"Reshape", 1, 1, 1, 0, pl__infer_reshape, pl__work_view, NULL},
    [PL_OP_TRANSPOSE] = {"Transpose", 1, 1, 1, 0, pl__infer_transpose, pl__work_transpose, NULL},
    [PL_OP_REDUCESUM] = {"ReduceSum", 1, 1, 1, 0, pl__infer_reduce, pl__work_reduce, NULL},
    [PL_OP_REDUCEMEAN] = {"ReduceMean", 1, 1, 1, 0, pl__infer_reduce, pl__work_reduce, NULL},
    [PL_OP_DROPOUT] = {"Dropout", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SCE] = {"SoftmaxCrossEntropy", 2, 2, 1, PL_OPT_ANCHOR | PL_OPT_LOSS, pl__infer_sce,
                   pl__work_sce, pl__range_sce},
    [PL_OP_IDENTITY] = {"Identity", 1, 1, 1, 0, pl__infer_elementwise, pl__work_view, NULL},
    [PL_OP_CAST] = {"Cast", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_MOE_DISPATCH] = {"MoEDispatch", 2, 2, 1, PL_OPT_EXPERTS | PL_OPT_DISPATCH, pl__infer_moe,
                            pl__work_moe, NULL},
    [PL_OP_MOE_COMBINE] = {"MoECombine", 2, 2, 1, PL_OPT_EXPERTS, pl__infer_moe, pl__work_moe,
                           NULL},
    [PL_OP_CONV] = {"Conv", 2, 3, 1, PL_OPT_GEMM | PL_OPT_ANCHOR, pl__infer_conv, pl__work_conv,
                    NULL},
    [PL_OP_MAXPOOL] = {"MaxPool", 1, 1, 1, 0, pl__infer_pool, pl__work_pool, NULL},
    [PL_OP_AVGPOOL] = {"AveragePool", 1, 1, 1, 0, pl__infer_pool, pl__work_pool, NULL},
    [PL_OP_CLIP] = {"Clip", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_BATCHNORM] = {"BatchNormalization", 3, 5, 1, PL_OPT_NORM, pl__infer_batchnorm,
                         pl__work_batchnorm, NULL, pl__positive_batchnorm},
    [PL_OP_EXPAND] = {"Expand", 1, 1, 1, 0, pl__infer_expand, pl__work_copy, NULL},
    [PL_OP_CONCAT] = {"Concat", 1, PL_MAX_OP_INPUTS, 1, 0, pl__infer_concat, pl__work_copy, NULL},
    [PL_OP_SLICE] = {"Slice", 1, 1, 1, 0, pl__infer_slice, pl__work_copy, NULL},
    [PL_OP_HARDSIGMOID] = {"HardSigmoid", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise,
                           NULL},
    [PL_OP_HARDSWISH] = {"HardSwish", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise,
                         NULL},
    [PL_OP_RESIZE] = {"Resize", 1, 1, 1, 0, pl__infer_resize, pl__work_resize, NULL},
    [PL_OP_NEG] = {"Neg", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_EXP] = {"Exp", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_LOG] = {"Log", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                   pl__positive_operand},
    [PL_OP_SQRT] = {"Sqrt", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                    pl__positive_operand},
    [PL_OP_ABS] = {"Abs", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SOFTPLUS] = {"Softplus", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_MAX] = {"Max", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_MIN] = {"Min", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_EQUAL] = {"Equal", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_LESS] = {"Less", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_GREATER] = {"Greater", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_WHERE] = {"Where", 3, 3, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SIN] = {"Sin", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_COS] = {"Cos", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_CONVTRANSPOSE] = {"ConvTranspose", 2, 3, 1, PL_OPT_GEMM | PL_OPT_ANCHOR,
                             pl__infer_convtranspose, pl__work_conv, NULL},
    [PL_OP_PAD] = {"Pad", 1, 1, 1, 0, pl__infer_pad, pl__work_copy, NULL},
    [PL_OP_RNN] = {"RNN", 3, 5, 1, PL_OPT_GEMM | PL_OPT_ANCHOR, pl__infer_rnn, pl__work_rnn, NULL},
    [PL_OP_GRU] = {"GRU", 3, 5, 1, PL_OPT_GEMM | PL_OPT_ANCHOR, pl__infer_rnn, pl__work_rnn, NULL},
    [PL_OP_LEAKYRELU] = {"LeakyRelu", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise,
                         NULL},
    [PL_OP_ELU] = {"Elu", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SELU] = {"Selu", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_CELU] = {"Celu", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_PRELU] = {"PRelu", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_REDUCEMAX] = {"ReduceMax", 1, 1, 1, 0, pl__infer_reduce, pl__work_reduce, NULL},
    [PL_OP_REDUCEMIN] = {"ReduceMin", 1, 1, 1, 0, pl__infer_reduce, pl__work_reduce, NULL},
    [PL_OP_POW] = {"Pow", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                   pl__positive_power},
    [PL_OP_CUMSUM] = {"CumSum", 1, 1, 1, 0, pl__infer_softmax, pl__work_cumsum, NULL},
    [PL_OP_LSTM] = {"LSTM", 3, 6, 1, PL_OPT_GEMM | PL_OPT_ANCHOR, pl__infer_rnn, pl__work_rnn,
                    NULL},
    [PL_OP_ATTENTION] = {"Attention", 3, 3, 1, PL_OPT_ATTENTION | PL_OPT_ATTENTION_CORE,
                         pl__infer_attention, pl__work_attention, NULL},
    [PL_OP_ARGMAX] = {"ArgMax", 1, 1, 1, 0, pl__infer_argmax, pl__work_argmax, NULL},
    [PL_OP_ARGMIN] = {"ArgMin", 1, 1, 1, 0, pl__infer_argmax, pl__work_argmax, NULL},
    [PL_OP_TOPK] = {"TopK", 1, 1, 1, 0, pl__infer_argmax, pl__work_argmax, NULL},
    [PL_OP_ONEHOT] = {"OneHot", 1, 1, 1, 0, pl__infer_onehot, pl__work_onehot, pl__range_onehot},
    [PL_OP_GATHERELEMENTS] = {"GatherElements", 2, 2, 1, 0, pl__infer_gather_elements,
                              pl__work_gather_elements, pl__range_gather_elements},
    [PL_OP_GRIDSAMPLE] = {"GridSample", 2, 2, 1, 0, pl__infer_gridsample, pl__work_gridsample,
                          NULL},
    [PL_OP_ERF] = {"Erf", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SIGN] = {"Sign", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_TAN] = {"Tan", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_ASIN] = {"Asin", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                    pl__positive_operand},
    [PL_OP_ACOS] = {"Acos", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                    pl__positive_operand},
    [PL_OP_ATAN] = {"Atan", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_SINH] = {"Sinh", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_COSH] = {"Cosh", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_ASINH] = {"Asinh", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_ACOSH] = {"Acosh", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                     pl__positive_operand},
    [PL_OP_ATANH] = {"Atanh", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                     pl__positive_operand},
    [PL_OP_FLOOR] = {"Floor", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_CEIL] = {"Ceil", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_ROUND] = {"Round", 1, 1, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL},
    [PL_OP_REDUCEPROD] = {"ReduceProd", 1, 1, 1, 0, pl__infer_reduce, pl__work_reduce, NULL},
    [PL_OP_POW_TENSOR] = {"Pow", 2, 2, 1, 0, pl__infer_elementwise, pl__work_elementwise, NULL,
                          pl__positive_operand},
};
_Static_assert(sizeof rules / sizeof *rules == PL_OP_COUNT, "one rule per op type");

static const char *const coll_names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                         "send_recv"};
_Static_assert(sizeof coll_names / sizeof *coll_names == PL_COLL_COUNT, "collective names");

const char *pl_coll_name(pl_coll c)
{
	return c < PL_COLL_COUNT ? coll_names[c] : "?";
}

static const char *coll_at(int i)
{
	return coll_names[i];
}

const char *pl_coll_names(char *buf, size_t n)
{
	return pl_join_names(buf, n, PL_COLL_COUNT, coll_at);
}

const pl_op_rule *pl_op_rule_get(pl_optype t)
{
	return t < PL_OP_COUNT ? &rules[t] : NULL;
}
unsigned pl_op_traits(const pl_op *op)
{
	return op->type < PL_OP_COUNT ? rules[op->type].traits : 0;
}
const char *pl_optype_name(pl_optype t)
{
	return t < PL_OP_COUNT ? rules[t].name : "?";
}

int pl_optype_owns_name(pl_optype t)
{
	pl_optype first;
	return !pl_optype_parse(pl_optype_name(t), &first) && first == t;
}

int pl_optype_parse(const char *s, pl_optype *out)
{
	for (int i = 0; i < PL_OP_COUNT; i++)
		if (!strcmp(s, rules[i].name)) {
			*out = (pl_optype)i;
			return 0;
		}
	static const char *const later[] = {"Split"};
	for (size_t i = 0; i < sizeof later / sizeof *later; i++)
		if (!strcmp(s, later[i]))
			return -2;
	return -1;
}

int64_t pl__norm_axis(int64_t axis, int rank)
{
	return axis < 0 ? axis + rank : axis;
}

pl_status pl__check_axis(const pl_op *op, const pl_tensor *x, int64_t dflt, int64_t *axis,
                         pl_err *err)
{
	int64_t a = op->attrs->has_axis ? op->attrs->axis : dflt;
	*axis = pl__norm_axis(a, x->rank);
	if (*axis < 0 || *axis >= x->rank)
		return pl_err_set(err, PL_EINVAL,
		                  "attrs.axis %lld is out of range for '%s' with %d dimensions",
		                  (long long)a, x->name, x->rank);
	return PL_OK;
}

pl_status pl__check_index_dtype(const pl_tensor *x, const char *role, pl_err *err)
{
	if (x->dtype != PL_DT_INT32 && x->dtype != PL_DT_INT64)
		return pl_err_set(err, PL_EINVAL, "%s '%s' must be int32 or int64, not %s", role,
		                  x->name, pl_dtype_name(x->dtype));
	return PL_OK;
}

pl_status pl__check_index_values(const pl_tensor *ix, const pl_tensor *x, int64_t axis, pl_err *err)
{
	int64_t n = x->shape[axis];
	for (int64_t i = 0; ix->values && i < pl_tensor_elems(ix); i++)
		if (!(ix->values[i] >= -(double)n && ix->values[i] <= (double)n - 1))
			return pl_err_set(err, PL_EINVAL,
			                  "constant indices '%s'[%lld] = %g: outside axis %lld of "
			                  "'%s' (size %lld): expected -%lld to %lld",
			                  ix->name, (long long)i, (double)ix->values[i],
			                  (long long)axis, x->name, (long long)n, (long long)n,
			                  (long long)n - 1);
	return PL_OK;
}

int pl__loop_add(pl_op *op, int64_t size, pl_loopkind kind, int splittable)
{
	int l = op->spec.nloops++;
	op->spec.loop[l].size = size;
	op->spec.loop[l].kind = (uint8_t)kind;
	op->spec.loop[l].splittable = (uint8_t)(splittable && size > 1);
	return l;
}

void pl__map(pl_op *op, int out, int i, int d, int loop)
{
	pl_dimmap *m = out ? &op->spec.out[i][d] : &op->spec.in[i][d];
	m->first = (int8_t)loop;
	m->count = 1;
}

void pl__set_out(pl_graph *g, pl_op *op, int i, int rank, const int64_t *shape, pl_dtype dt)
{
	pl_tensor *t = OUT(g, op, i);
	t->rank = rank;
	for (int d = 0; d < rank; d++)
		t->shape[d] = shape[d];
	t->dtype = dt;
}

static double local_elems(const pl_tensor *t, const pl_dimmap *m, const int64_t *split)
{
	double n = 1;
	for (int d = 0; d < t->rank; d++)
		n *= (double)(m[d].count ? t->shape[d] / split[m[d].first] : t->shape[d]);
	return n;
}

double pl__local_in(const pl_graph *g, const pl_op *op, int i, const int64_t *split)
{
	return local_elems(IN(g, op, i), op->spec.in[i], split);
}

double pl__local_out(const pl_graph *g, const pl_op *op, int i, const int64_t *split)
{
	return local_elems(OUT(g, op, i), op->spec.out[i], split);
}

double pl__local_in_bytes(const pl_graph *g, const pl_op *op, int i, const int64_t *split)
{
	return pl__local_in(g, op, i, split) * pl_dtype_bytes(IN(g, op, i)->dtype);
}

double pl__local_out_bytes(const pl_graph *g, const pl_op *op, int i, const int64_t *split)
{
	return pl__local_out(g, op, i, split) * pl_dtype_bytes(OUT(g, op, i)->dtype);
}

int64_t pl_split_product(const pl_op *op, const int64_t *split)
{
	int64_t p = 1;
	for (int l = 0; l < op->spec.nloops; l++)
		p *= split[l];
	return p;
}

pl_status pl_op_check_split(const pl_op *op, const int64_t *split, int64_t devices, pl_err *err)
{
	for (int l = 0; l < op->spec.nloops; l++) {
		const pl_loop *lp = &op->spec.loop[l];
		if (split[l] < 1)
			return pl_err_set(err, PL_EINVAL, "split %lld of loop %d is not positive",
			                  (long long)split[l], l);
		if (split[l] > 1 && !lp->splittable)
			return pl_err_set(err, PL_EINVAL,
			                  "loop %d (size %lld) cannot be split by this operator", l,
			                  (long long)lp->size);
		if (lp->size % split[l])
			return pl_err_set(err, PL_EINVAL,
			                  "a dimension of size %lld cannot be cut into %lld equal "
			                  "slices",
			                  (long long)lp->size, (long long)split[l]);
	}
	int64_t p = pl_split_product(op, split);
	if (devices > 0 && devices % p)
		return pl_err_set(err, PL_EINVAL,
		                  "the splits multiply to %lld, which does not divide the %lld "
		                  "devices",
		                  (long long)p, (long long)devices);
	return PL_OK;
}

void pl_op_split_to_tuples(const pl_graph *g, const pl_op *op, const int64_t *split,
                           int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK])
{
	for (int i = 0; i < op->ninputs; i++)
		for (int d = 0; d < IN(g, op, i)->rank; d++) {
			const pl_dimmap *m = &op->spec.in[i][d];
			tuples[i][d] = m->count ? split[m->first] : 1;
		}
}

pl_status pl_op_tuples_to_split(const pl_graph *g, const pl_op *op,
                                int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK], const int *ranks,
                                int ntuples, int64_t *split, pl_err *err)
{
	int from_in[PL_MAX_LOOPS], from_dim[PL_MAX_LOOPS];
	if (ntuples != op->ninputs)
		return pl_err_set(err, PL_EINVAL, "expected %d tuples (one per input), got %d",
		                  op->ninputs, ntuples);
	for (int l = 0; l < op->spec.nloops; l++)
		split[l] = 0;
	for (int i = 0; i < op->ninputs; i++) {
		const pl_tensor *t = IN(g, op, i);
		if (ranks[i] != t->rank)
			return pl_err_set(
			    err, PL_EINVAL,
			    "tuple %d has %d entries but input '%s' has %d dimensions", i, ranks[i],
			    t->name, t->rank);
		for (int d = 0; d < t->rank; d++) {
			const pl_dimmap *m = &op->spec.in[i][d];
			int64_t v = tuples[i][d];
			if (v < 1)
				return pl_err_set(err, PL_EINVAL,
				                  "tuple %d entry %d: %lld is not positive", i, d,
				                  (long long)v);
			if (!m->count || !op->spec.loop[m->first].splittable) {
				if (v != 1)
					return pl_err_set(
					    err, PL_EINVAL,
					    "input '%s' dimension %d cannot be split by "
					    "this operator (got %lld, expected 1)",
					    t->name, d, (long long)v);
				if (!m->count)
					continue;
			}
			int l = m->first;
			if (split[l] && split[l] != v)
				return pl_err_set(
				    err, PL_EINVAL,
				    "input '%s' dimension %d is cut %lld ways but input "
				    "'%s' dimension %d, the same loop, is cut %lld ways",
				    t->name, d, (long long)v, IN(g, op, from_in[l])->name,
				    from_dim[l], (long long)split[l]);
			split[l] = v;
			from_in[l] = i;
			from_dim[l] = d;
		}
	}
	for (int l = 0; l < op->spec.nloops; l++)
		if (!split[l])
			split[l] = 1;
	return pl_op_check_split(op, split, 0, err);
}

typedef struct enum_state {
	const pl_op *op;
	int64_t devices, want;
	int64_t cur[PL_MAX_LOOPS];
	int64_t *out;
	int max, n;
	int64_t best; /* largest product seen that divides devices */
} enum_state;

static void enum_rec(enum_state *s, int l, int64_t prod)
{
	if (l == s->op->spec.nloops) {
		if (prod > s->best)
			s->best = prod;
		if (prod == s->want) {
			if (s->n < s->max)
				memcpy(s->out + (size_t)s->n * s->op->spec.nloops, s->cur,
				       sizeof(int64_t) * (size_t)s->op->spec.nloops);
			s->n++;
		}
		return;
	}
	const pl_loop *lp = &s->op->spec.loop[l];
	int64_t room = s->devices / prod;
	/* the cuts of this loop: the divisors of gcd(room, size), ascending,
	 * found up to the square root (a loop over every d <= room took
	 * seconds per op on a million devices) */
	int64_t g = lp->splittable ? pl_gcd(room, lp->size) : 1;
	int64_t lo[4096], hi[4096];
	int nlo = 0, nhi = 0;
	for (int64_t d = 1; d * d <= g && nlo < 4096; d++)
		if (g % d == 0) {
			lo[nlo++] = d;
			if (d != g / d)
				hi[nhi++] = g / d;
		}
	for (int k = 0; k < nlo + nhi; k++) {
		int64_t d = k < nlo ? lo[k] : hi[nhi - 1 - (k - nlo)];
		s->cur[l] = d;
		enum_rec(s, l + 1, prod * d);
	}
}

int pl_op_enumerate_product(const pl_op *op, int64_t devices, int64_t want, int64_t *out, int max)
{
	enum_state s = {.op = op, .devices = devices, .want = want, .out = out, .max = max};
	enum_rec(&s, 0, 1);
	return s.n;
}

int pl_op_enumerate(const pl_op *op, int64_t devices, int64_t *out, int max)
{
	enum_state s = {.op = op, .devices = devices, .want = devices, .out = out, .max = max};
	enum_rec(&s, 0, 1);
	if (s.n == 0) { /* no strategy uses every device: take the largest product */
		s.want = s.best;
		s.n = 0;
		enum_rec(&s, 0, 1);
	}
	return s.n;
}

/* An op of type's attributes before its attrs are read: ONNX's defaults,
 * where ONNX has the attribute, and the format's own for the others. */
void pl_attrs_default(pl_optype type, pl_attrs *a)
{
	a->epsilon = 1e-5;
	a->ratio = 0.5;
	a->keepdims = 1;
	a->axis = -1;
	a->top_k = 2;
	a->groups = 1;
	a->capacity_factor = 1.25;
	a->group = 1;
	a->alpha = 1.0 / 6;
	a->beta = 0.5;
	a->min = -INFINITY;
	a->max = INFINITY;
	a->cubic_coeff_a = -0.75;
	/* ONNX's defaults of the activations with parameters */
	if (type == PL_OP_LEAKYRELU)
		a->alpha = 0.01;
	else if (type == PL_OP_ELU || type == PL_OP_CELU)
		a->alpha = 1;
	if (type == PL_OP_POW)
		a->exponent = 1;
	a->largest = a->sorted = 1;
	a->k = a->depth = 1;
	a->on_value = 1;
	if (type == PL_OP_ONEHOT)
		a->to = PL_DT_INT64;
	if (type == PL_OP_GRIDSAMPLE) /* ONNX's default */
		a->resize_mode = PL_RESIZE_LINEAR;
	if (type == PL_OP_SELU) {
		a->alpha = 1.67326319217681884765625;
		a->gamma = 1.05070102214813232421875;
	}
}
