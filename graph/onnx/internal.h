/* The ONNX importer's own declarations, shared by its files (graph/onnx/: inline.c,
 * values.c, folds.c, match.c, emit.c, layers.c, ops.c, read.c, weights.c); nothing outside the
 * importer includes this. Each function is described where it is defined. */
#ifndef PL_ONNX_INTERNAL_H
#define PL_ONNX_INTERNAL_H

#include <math.h>
#include <stdio.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "graph/onnx.h"
#include "onnx.pb-c.h"
#include "graph/alloc.h"
#include "graph/graph.h"
#include "graph/ops.h"
#include "graph/json.h"

#define PL_ONNX_MAX_CONCAT 5 /* the model format's inputs an op */
#define SUPPORTED                                                                                  \
	"MatMul (a vector operand too), Gemm, Einsum (of up to 8 operands), Conv, MaxPool, "       \
	"AveragePool, "                                                                            \
	"GlobalAveragePool, GlobalMaxPool, ConvTranspose (grouped too), LSTM, GRU and RNN "        \
	"(default activations; initial states, Y_h and Y_c too), Flatten, Clip, "                  \
	"HardSigmoid, HardSwish, LeakyRelu, PRelu, Elu, Selu, Celu, CumSum, Not, Or, And and Xor " \
	"(of masks), "                                                                             \
	"Pow (by a constant or a tensor), "                                                        \
	"Reciprocal, Tile, DepthToSpace, SpaceToDepth, RandomNormal(Like), RandomUniform(Like) "   \
	"and Bernoulli "                                                                           \
	"(as drawn data), "                                                                        \
	"BatchNormalization, InstanceNormalization (GroupNorm's export too), GroupNormalization, " \
	"Gelu, Resize and Upsample "                                                               \
	"(nearest, linear, cubic), Expand, Concat, ScatterND (of rows), Cast (float64 too), "      \
	"Slice "                                                                                   \
	"(steps of 1, or a step that divides the axis), Split, Pad (constant, reflect, edge, "     \
	"wrap; its axes too; not of the batch), Add, Sub, Mul, Div, Neg, Exp, Log, Sqrt, Abs, "    \
	"Relu, "                                                                                   \
	"Softplus, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Erf, Sign, "  \
	"Floor, Ceil, Round (the last four without gradient), Tanh, Sigmoid, Mish, Softsign, "     \
	"Sum, Mean, Max and Min (of any number), ThresholdedRelu, Shrink, "                        \
	"LpNormalization (p 1 or 2), LRN, LpPool, GlobalLpPool, MeanVarianceNormalization, "       \
	"ImageScaler, "                                                                            \
	"SoftmaxCrossEntropyLoss and "                                                             \
	"NegativeLogLikelihoodLoss (of a LogSoftmax; mean or sum; no class weights), CastLike, "   \
	"Equal, Less, Greater, GreaterOrEqual, LessOrEqual, IsNaN, IsInf, "                        \
	"Where, "                                                                                  \
	"Softmax, Attention (opset 23: 4-D or 3-D; no mask or cache), "                            \
	"Transpose, Gather, GatherElements, ScatterElements (and opset 9's Scatter), ArgMax, "     \
	"ArgMin, Hardmax, TopK (its K a constant), OneHot "                                        \
	"(its depth and values constants), GridSample (2-D; bilinear or nearest, zeros or "        \
	"border padding), a Loop that is nn.EmbeddingBag's of bags of one length, "                \
	"ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL2, ReduceL1, "            \
	"ReduceSumSquare, ReduceLogSumExp, ReduceLogSum, "                                         \
	"LogSoftmax, Mod and Trilu (of activations too), Reshape, RMSNormalization (opset 23), "   \
	"LayerNormalization "                                                                      \
	"(over the axes from one after the batch's on), Erf "                                      \
	"(GELU's form made one Gelu), Pow and Tanh (in tanh GELU's form), Pow and Sqrt (in "       \
	"LayerNorm's "                                                                             \
	"and RMSNorm's forms), Identity, Dropout, Constant, an If whose condition folds (its "     \
	"branch of shape work and views taken), and on constants Shape, Gather, "                  \
	"Unsqueeze, Squeeze, Concat, Cast, Size, EyeLike, ConstantOfShape, Range, Trilu, Slice, "  \
	"Split, "                                                                                  \
	"Transpose, Reshape, Expand, ScatterND, Equal, Where, Mod and arithmetic (folded); "       \
	"a model's local functions are inlined"

/* A graph with the model's local functions inlined (inline.c): g is the
 * model's graph with the expanded node list, or the graph itself when no
 * node calls one; the rest is what inlining allocated. */
typedef struct pl__onnx_inlined {
	Onnx__GraphProto g;
	Onnx__NodeProto **nodes;
	size_t n, cap;
	void **owned;
	size_t nowned, capowned;
	Onnx__AttributeProto **attrs; /* functions' defaults, unpacked */
	size_t nattrs, capattrs;
} pl__onnx_inlined;
pl_status pl__onnx_inline(const Onnx__ModelProto *mp, const char *path, pl__onnx_inlined *out,
                          pl_err *err);
void pl__onnx_inlined_free(pl__onnx_inlined *x);

/* What the importer knows of a tensor, as ONNX defines it: its shape, and
 * for constants (shape computations, masks, tables, scales) their values,
 * folded at import: at most MAX_VALUES of one tensor (the model format's
 * bound, 16 MiB as float32: a 2048x2048 causal mask), MAX_HELD held at once
 * (folded intermediates too). */
#define MAX_VALUES PL_MAX_CONST_VALUES
#define MAX_HELD   ((int64_t)1 << 25)
/* a float initializer's values are read at once only when this few (a
 * weight's are not needed; a buffer's are read when it is a constant) */
#define FEW_VALUES 64
/* Dimensions and folded values are kept within +-2^40: a hostile file's
 * huge numbers cannot overflow the arithmetic on them (the model reader
 * refuses such shapes later) */
#define BIG ((int64_t)1 << 40)
typedef struct tinfo {
	char *name; /* its own copy (an emitted op's name may be dropped); NULL: a free slot */
	int known;        /* the shape is known */
	int rank;
	int64_t dims[16];
	int nval;    /* > 0: the values are known (row-major, nval = elements) */
	double *val; /* nval of them, owned by the importer */
	/* a constant (values known or not): a mask built from shapes, an int64
	 * initializer */
	int cons;
	int over;     /* its values are past MAX_VALUES (or MAX_HELD): not kept */
	int nodata;   /* computed from an initializer or Constant the file holds no data of */
	int32_t elem; /* an initializer's or Constant's element type (0: not known) */
	const Onnx__TensorProto *init; /* the initializer it is (or an Identity's copy of) */
} tinfo;

typedef struct imp {
	const Onnx__GraphProto *g;
	tinfo *info; /* open addressing by name */
	size_t ninfo;
	const char *path;
	int64_t opset, batch;
	cJSON *tensors, *ops;
	char **alias_from, **alias_to; /* dropped nodes: output name -> input name */
	int nalias;
	size_t nalias_cap;   /* room: a node each, and each If's branches' nodes and outputs */
	unsigned char *skip; /* per node: folded into another */
	/* Pads folded into the window op that reads them: output name -> input
	 * name, the spatial pads (begins, then ends) */
	struct padded {
		const char *out, *in;
		int nsp;
		int64_t p[6];
	} * padded;
	int npadded;
	int nconst;
	double *scratch; /* values being computed (nscratch of room) */
	int64_t nscratch, held;
	const char *dropout; /* --dropout: keep, drop or auto (NULL) */
	int ce_loss;         /* cross-entropy is appended to output 0 (and its like) */
	pl_err *err;
} imp;

/* values.c */
const char *pl__onnx_resolve(const imp *m, const char *name);
tinfo *pl__onnx_known(imp *m, const char *name);
tinfo *pl__onnx_valued(imp *m, const char *name);
tinfo *pl__onnx_constlike(imp *m, const char *name);
int64_t pl__onnx_count_mul(int64_t n, int64_t k);
int64_t pl__onnx_to_i64(double x);
int64_t pl__onnx_elems(const tinfo *t);
double *pl__onnx_scratch(imp *m, int64_t n);
void pl__onnx_set_info(imp *m, const char *name, int rank, const int64_t *dims, int64_t nval,
                       const double *val);
int pl__onnx_tensor_values(const Onnx__TensorProto *t, double *v, int64_t max);
size_t pl__onnx_elem_data(const Onnx__TensorProto *t, const unsigned char **d, size_t *n);
int pl__onnx_one_fill(const Onnx__TensorProto *t);
void pl__onnx_set_tensor(imp *m, const char *name, const Onnx__TensorProto *t, int64_t max);
int pl__onnx_broadcast(const tinfo *a, const tinfo *b, int64_t *out);
double pl__onnx_bval(const tinfo *t, const int64_t *out, int r, int64_t i);
int64_t pl__onnx_axis_of(int64_t a, int rank);
int pl__onnx_ints_of(imp *m, const Onnx__NodeProto *n, const char *at, size_t k, int64_t *v,
                     int max);

/* folds.c */
int pl__onnx_fold_unsqueeze(imp *m, const Onnx__NodeProto *n, const tinfo *a);
int pl__onnx_fold(imp *m, const Onnx__NodeProto *n);
int pl__onnx_infer(imp *m, const Onnx__NodeProto *n);
const Onnx__NodeProto *pl__onnx_constant_node(const imp *m, const char *name);

/* match.c */
int pl__onnx_scalar_of(const imp *m, const char *name, double *v);
const Onnx__AttributeProto *pl__onnx_attr(const Onnx__NodeProto *n, const char *name);
void pl__onnx_attr_str(const Onnx__NodeProto *n, const char *at, char *buf, size_t len);
void pl__onnx_alias(imp *m, char *from, char *to);
void pl__onnx_drop_node(imp *m, const Onnx__NodeProto *n);
int64_t pl__onnx_attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt);
double pl__onnx_attr_f(const Onnx__NodeProto *n, const char *name, double dflt);
int pl__onnx_is_scalar(const imp *m, const char *name, double want);
int pl__onnx_consumers(const imp *m, const char *name, int *who, int max);
int pl__onnx_is_param(const imp *m, const char *name);
/* name's declaration in the model's tensor table (exact case), or NULL */
cJSON *pl__onnx_decl(const imp *m, const char *name);
int32_t pl__onnx_elem_of(imp *m, const char *name);
int pl__onnx_gelu_at(const imp *m, int i);
int pl__onnx_gelu_tanh_at(imp *m, int i);
int pl__onnx_layernorm_at(imp *m, int i, const char **gamma, const char **beta, double *eps);
int pl__onnx_rmsnorm_at(imp *m, int i, const char **gamma, double *eps);
const char *pl__onnx_dtype_name(int32_t t);
cJSON *pl__onnx_int_list(const int64_t *v, size_t n);
cJSON *pl__onnx_add_op(imp *m, const char *name, const char *type);

/* emit.c */
void pl__onnx_io(imp *m, cJSON *o, const char *key, const char *name);
void pl__onnx_const_values(cJSON *t, const double *v, int64_t n, double fill);
const char *pl__onnx_const_scale(imp *m, const char *op, const tinfo *x, char *buf, size_t len);
pl_status pl__onnx_emit_norm(imp *m, const char *x, int last, const char *type, const char *gamma,
                             const char *beta, double eps);
void pl__onnx_operand(imp *m, cJSON *o, const char *name);
pl_status pl__onnx_unsupported(imp *m, const Onnx__NodeProto *n, const char *why);
cJSON *pl__onnx_producer(imp *m, const char *name);
const char *pl__onnx_emit_shaped(imp *m, const char *name, const char *type, const char *in,
                                 const char *out, const char *key, const int64_t *v, int n);
int pl__onnx_slice_op(imp *m, const char *name, const char *in, const char *out, const tinfo *x,
                      int ns, const int64_t *axis, const int64_t *lo, const int64_t *hi);
int pl__onnx_import_slice(imp *m, const Onnx__NodeProto *n, const char *name);
int pl__onnx_import_einsum(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);
int pl__onnx_split_sizes(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *ax,
                         int64_t *sizes);
int pl__onnx_import_split(imp *m, const Onnx__NodeProto *n, const char *name);
void pl__onnx_drop_unread(imp *m, cJSON *outs);
int pl__onnx_window_ints(imp *m, const Onnx__NodeProto *n, const char *at, int count, int64_t dflt,
                         int64_t lo, int64_t *v);

/* layers.c */
int pl__onnx_import_convtranspose(imp *m, const Onnx__NodeProto *n, const char *name,
                                  const char **why);
int pl__onnx_import_recurrent(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);
int pl__onnx_import_embedding_bag(imp *m, const Onnx__NodeProto *n, const char *name);
int pl__onnx_import_index(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);
int pl__onnx_import_scatter(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);
int pl__onnx_import_scatter_rows(imp *m, const Onnx__NodeProto *n, const char *name,
                                 const char **why);
int pl__onnx_import_tile(imp *m, const Onnx__NodeProto *n, const char *name);
int pl__onnx_import_depth_space(imp *m, const Onnx__NodeProto *n, const char *name);
int pl__onnx_pads_nothing(imp *m, const Onnx__NodeProto *n);
int pl__onnx_fold_pad(imp *m, const Onnx__NodeProto *n);
int pl__onnx_import_pad(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);
int pl__onnx_import_window(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);
cJSON *pl__onnx_window_attrs(cJSON *o, const int64_t *k, const int64_t *s, const int64_t *p,
                             const int64_t *d, int nsp);
int pl__onnx_import_resize(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);
int pl__onnx_import_flatten(imp *m, const Onnx__NodeProto *n, const char *name);
const char *pl__onnx_emit_reshape(imp *m, const char *opname, const char *in, const int64_t *dims,
                                  int rank, const char *out);
void pl__onnx_emit_reduce(imp *m, const char *opname, const char *type, const char *in,
                          const char *out, const int64_t *ax, int na, int keepdims);
void pl__onnx_emit_binary(imp *m, const char *opname, const char *type, const char *a,
                          const char *b, const char *out);
void pl__onnx_emit_unary_op(imp *m, const char *opname, const char *type, const char *a,
                            const char *out);
int pl__onnx_import_instancenorm(imp *m, const Onnx__NodeProto *n, const char *name);
const char *pl__onnx_import_attention(imp *m, const Onnx__NodeProto *n, const char *name);
int pl__onnx_import_groupnorm(imp *m, const Onnx__NodeProto *n, const char *name);
int pl__onnx_import_clip(imp *m, const Onnx__NodeProto *n, const char *name);
int pl__onnx_import_batchnorm(imp *m, const Onnx__NodeProto *n, const char *name);
cJSON *pl__onnx_emit_unary(imp *m, const Onnx__NodeProto *n, const char *name, const char *type);
int pl__onnx_dropout_ratio(const imp *m, const Onnx__NodeProto *n, double *ratio);
int pl__onnx_keep_dropout(imp *m, const Onnx__NodeProto *n);
int pl__onnx_shape_op(imp *m, const Onnx__NodeProto *n, const char *name, const char *type,
                      tinfo *target);

/* ops.c */
pl_status pl__onnx_node(imp *m, int i);
pl_status pl__onnx_not_training(imp *m);

#endif
