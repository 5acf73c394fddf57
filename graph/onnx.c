/* The ONNX importer: a ModelProto (read with protobuf-c from the onnx.proto
 * Debian ships, generated at build time) turned into a planner.model/1
 * document, which the model reader then checks and infers like any other.
 * Weights' data are never needed: initializers become params by their dims
 * (a file whose float initializers hold dims only imports). What it knows:
 *
 *   MatMul, Gemm (transB as a Transpose of the weight, then the bias added),
 *   Add/Sub/Mul/Div (a scalar constant operand becomes a const tensor),
 *   Relu, Tanh, Sigmoid, Softmax, Transpose, Gather, ReduceMean, Erf-form
 *   GELU (x * 0.5 * (1 + erf(x / sqrt 2)), fused back into Gelu), LayerNorm
 *   decomposed over the last axis (fused back into LayerNormalization); Identity
 *   and Dropout are dropped (eval exports); Constant nodes feed the above;
 *   Reshape to a shape known at import; computations on shapes (Shape, Gather,
 *   Unsqueeze, Squeeze, Concat, Cast, ConstantOfShape, arithmetic on their
 *   values) folded, with the shapes the importer infers as ONNX defines them;
 *   Slice or Split of a linear layer's output along its last axis (a fused
 *   q, k, v projection) imported as that layer's weight and bias cut into
 *   slices; Slice of an initializer (a mask sliced to the sequence);
 *   LayerNormalization (opset 17); GELU in its tanh form fused into Gelu;
 *   Attention (opset 23), 4-D or 3-D, without mask or key/value cache.
 *
 * Anything else is refused naming the node, its op type and the opset, with
 * the list above. ONNX exports are forward graphs: --loss cross-entropy
 * (the default) appends SoftmaxCrossEntropy on the first output against an
 * integer labels input, and on every other output of its shape (auxiliary
 * classifiers) against the same labels. */
#include "graph/onnx.h"

#include <math.h>
#include <stdio.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "graph/alloc.h"
#include "graph/graph.h"
#include "graph/ops.h"
#include "graph/json.h"

#define PL_ONNX_MAX_CONCAT 5 /* the model format's inputs an op */
#define SUPPORTED                                                                                  \
	"MatMul, Gemm, Einsum (of two operands), Conv, MaxPool, AveragePool, "                     \
	"GlobalAveragePool, GlobalMaxPool, ConvTranspose (of one group), LSTM, GRU and RNN "       \
	"(default activations; initial states, Y_h and Y_c too), Flatten, Clip, "                  \
	"HardSigmoid, HardSwish, LeakyRelu, PRelu, Elu, Selu, Celu, CumSum, Not (of a mask), "     \
	"Pow by a constant, "                                                                      \
	"Reciprocal, Tile, DepthToSpace, SpaceToDepth, RandomNormal(Like) and "                    \
	"RandomUniform(Like) "                                                                     \
	"(as drawn data), "                                                                        \
	"BatchNormalization, InstanceNormalization (GroupNorm's export too), GroupNormalization, " \
	"Gelu, Resize and Upsample "                                                               \
	"(nearest, linear, cubic), Expand, Concat, ScatterND (a slice assignment), Slice "         \
	"(steps of 1, or a step that divides the axis), Split, Pad (constant, reflect, edge, "     \
	"wrap; not of the batch), Add, Sub, Mul, Div, Neg, Exp, Log, Sqrt, Abs, Relu, "            \
	"Softplus, Sin, Cos, Tanh, Sigmoid, Max and Min (of two), Equal, Less, Greater, Where, "   \
	"Softmax, Attention (opset 23: 4-D or 3-D; no mask or cache), "                            \
	"Transpose, Gather, GatherElements, ArgMax, ArgMin, TopK (its K a constant), OneHot "      \
	"(its depth and values constants), GridSample (2-D; bilinear or nearest, zeros or "        \
	"border padding), a Loop that is nn.EmbeddingBag's of bags of one length, "                \
	"ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL2, ReduceL1, "                        \
	"ReduceSumSquare, ReduceLogSumExp, "                                                       \
	"LogSoftmax (the last op, under the cross-entropy), Reshape, LayerNormalization, Erf "     \
	"(in GELU's form), Pow and Tanh (in tanh GELU's form), Pow and Sqrt (in LayerNorm's "      \
	"and RMSNorm's forms), Identity, Dropout, Constant, and on constants Shape, Gather, "      \
	"Unsqueeze, Squeeze, Concat, Cast, ConstantOfShape, Range, Trilu, Slice, Split, "          \
	"Transpose, Reshape, Expand, ScatterND, Equal, Where, Mod and arithmetic (folded)"

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
typedef struct tinfo {
	const char *name; /* NULL: a free slot */
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

/* what a dropped node's output stands for (at most one step per alias: a
 * node that names its input as its output cannot loop) */
static const char *resolve(const imp *m, const char *name)
{
	for (int step = 0, moved = 1; moved && step <= m->nalias; step++) {
		moved = 0;
		for (int i = m->nalias - 1; i >= 0 && !moved; i--)
			if (!strcmp(m->alias_from[i], name) && strcmp(m->alias_to[i], name)) {
				name = m->alias_to[i];
				moved = 1;
			}
	}
	return name;
}

/* ---- shapes and folded values ---- */

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name);
static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt);
static int infer(imp *m, const Onnx__NodeProto *n);
static double *scratch(imp *m, int64_t n);

static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* the entry of name (created empty when add), or NULL */
static tinfo *info_at(imp *m, const char *name, int add)
{
	if (!name || !m->info)
		return NULL;
	name = resolve(m, name);
	for (size_t i = name_hash(name) & (m->ninfo - 1), k = 0; k < m->ninfo;
	     i = (i + 1) & (m->ninfo - 1), k++) {
		if (!m->info[i].name) {
			if (!add)
				return NULL;
			m->info[i].name = name;
			return &m->info[i];
		}
		if (!strcmp(m->info[i].name, name))
			return &m->info[i];
	}
	return NULL;
}

static tinfo *known(imp *m, const char *name)
{
	tinfo *t = info_at(m, name, 0);
	return t && t->known ? t : NULL;
}

static int64_t elems(const tinfo *t);
/* its values known: kept, or none to keep (an empty slice of a shape) */
static tinfo *valued(imp *m, const char *name)
{
	tinfo *t = known(m, name);
	return t && (t->nval > 0 || (t->rank > 0 && elems(t) == 0)) ? t : NULL;
}

/* a constant: its values known, or computed from constants only */
static tinfo *constlike(imp *m, const char *name)
{
	tinfo *t = known(m, name);
	return t && (t->nval > 0 || t->cons) ? t : NULL;
}

/* Dimensions and folded values are kept within +-2^40: a hostile file's
 * huge numbers cannot overflow the arithmetic on them (the model reader
 * refuses such shapes later) */
#define BIG ((int64_t)1 << 40)

/* n * k of sizes, saturated past MAX_VALUES (never a 64-bit overflow:
 * scratch refuses it, nothing is folded) */
static int64_t count_mul(int64_t n, int64_t k)
{
	int64_t r;
	return pl_size_mul(n, k, &r) || r > INT64_C(1) << 62 ? INT64_C(1) << 62 : r;
}

static int64_t to_i64(double x)
{
	return x != x ? 0 : x > (double)BIG ? BIG : x < -(double)BIG ? -BIG : (int64_t)x;
}

static int64_t elems(const tinfo *t)
{
	int64_t n = 1;
	for (int d = 0; d < t->rank; d++)
		if (__builtin_mul_overflow(n, t->dims[d], &n) || n > BIG)
			return BIG;
	return n;
}

/* room for n values being computed (the importer's scratch, reused by the
 * next call), or NULL when n is past MAX_VALUES or memory is short */
static double *scratch(imp *m, int64_t n)
{
	if (n < 0 || n > MAX_VALUES)
		return NULL;
	if (n > m->nscratch) {
		double *s = realloc(m->scratch, sizeof(double) * (size_t)(n < 64 ? 64 : n));
		if (!s)
			return NULL;
		m->scratch = s;
		m->nscratch = n < 64 ? 64 : n;
	}
	return m->scratch;
}

/* records name's shape (and values, nval of them: 0 for none; a copy is
 * kept, within MAX_VALUES and MAX_HELD, else the tensor is marked over) */
static void set_info(imp *m, const char *name, int rank, const int64_t *dims, int64_t nval,
                     const double *val)
{
	tinfo *t = info_at(m, name, 1);
	if (!t || rank < 0 || rank > 16)
		return;
	t->known = 1;
	t->rank = rank;
	for (int d = 0; d < rank; d++)
		t->dims[d] = dims[d] < 0 ? 0 : dims[d] > BIG ? BIG : dims[d];
	double *keep = NULL;
	t->over = 0;
	if (nval > MAX_VALUES || (nval > 0 && m->held + nval > MAX_HELD))
		t->over = 1;
	else if (nval > 0 && (keep = malloc(sizeof(double) * (size_t)nval)))
		memcpy(keep, val, sizeof(double) * (size_t)nval);
	else if (nval > 0)
		t->over = 1; /* out of memory: refused as too large */
	m->held -= t->nval;
	free(t->val);
	t->val = keep;
	t->nval = keep ? (int)nval : 0;
	m->held += t->nval;
}

/* a TensorProto's values (at most max of them, numeric) into v (room for
 * max): their count, or 0 */
static int tensor_values(const Onnx__TensorProto *t, double *v, int64_t max)
{
	int64_t n = 1;
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] < 0 || t->dims[d] > max || (n *= t->dims[d]) > max)
			return 0;
	if (n < 1 || !v)
		return 0;
	size_t k = (size_t)n;
#define TAKE(arr, cnt)                                                                             \
	if (t->cnt == k) {                                                                         \
		for (size_t i = 0; i < k; i++)                                                     \
			v[i] = (double)t->arr[i];                                                  \
		return (int)k;                                                                     \
	}
	TAKE(int64_data, n_int64_data)
	TAKE(int32_data, n_int32_data)
	TAKE(float_data, n_float_data)
	TAKE(double_data, n_double_data)
#undef TAKE
	if (!t->has_raw_data)
		return 0;
	/* little-endian elements of one size each, as many as the dims say */
	const unsigned char *r = t->raw_data.data;
	size_t size = 0;
	switch (t->data_type) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
	case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: size = 8; break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: size = 4; break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: size = 1; break;
	default: return 0;
	}
	if (t->raw_data.len != size * k)
		return 0;
	for (size_t i = 0; i < k; i++) {
		const unsigned char *at = r + size * i;
		int64_t i64;
		int32_t i32;
		float f;
		switch (t->data_type) {
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
			memcpy(&i64, at, 8);
			v[i] = (double)i64;
			break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
			memcpy(&i32, at, 4);
			v[i] = i32;
			break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
			memcpy(&f, at, 4);
			v[i] = f;
			break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: memcpy(&v[i], at, 8); break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: v[i] = (signed char)*at; break;
		default: v[i] = *at; break; /* bool, uint8 */
		}
	}
	return (int)k;
}

/* records a TensorProto's shape and values (at most max of them) under
 * name: those it does not hold are marked nodata, too many over */
static void set_tensor(imp *m, const char *name, const Onnx__TensorProto *t, int64_t max)
{
	if (t->n_dims > 16)
		return;
	int64_t dims[16], n = 1;
	for (size_t d = 0; d < t->n_dims; d++) {
		dims[d] = t->dims[d];
		if (dims[d] < 0 || __builtin_mul_overflow(n, dims[d], &n) || n > BIG)
			n = BIG;
	}
	double *v = scratch(m, n <= max ? n : 0);
	int nv = n <= max ? tensor_values(t, v, max) : 0;
	set_info(m, name, (int)t->n_dims, dims, nv, v);
	tinfo *k = known(m, name);
	if (k) {
		k->elem = t->data_type;
		if (n > 0 && !k->nval && !k->over) {
			if (n > MAX_VALUES)
				k->over = 1;
			else if (max == MAX_VALUES) /* every value asked for: none held */
				k->nodata = 1;
		}
	}
}

/* numpy broadcasting of a and b into out; -1 when they do not broadcast */
static int broadcast(const tinfo *a, const tinfo *b, int64_t *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	for (int d = 0; d < r; d++) {
		int da = d - (r - a->rank), db = d - (r - b->rank);
		int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
		if (x != y && x != 1 && y != 1)
			return -1;
		out[d] = x == 1 ? y : x;
	}
	return r;
}

/* the element of t (a broadcast operand of rank r) at index i of out */
static double bval(const tinfo *t, const int64_t *out, int r, int64_t i)
{
	int64_t at = 0, stride = 1;
	for (int d = r - 1; d >= 0; d--) {
		int64_t c = i % out[d];
		i /= out[d];
		int dt = d - (r - t->rank);
		if (dt >= 0) {
			at += (t->dims[dt] == 1 ? 0 : c) * stride;
			stride *= t->dims[dt];
		}
	}
	return t->val[at];
}

static int64_t axis_of(int64_t a, int rank)
{
	return a < 0 ? a + rank : a;
}

/* the int list of an attribute or (opsets that moved it) of input k */
static int ints_of(imp *m, const Onnx__NodeProto *n, const char *at, size_t k, int64_t *v, int max)
{
	const Onnx__AttributeProto *a = attr(n, at);
	if (a && a->n_ints) {
		if (a->n_ints > (size_t)max)
			return -1;
		for (size_t i = 0; i < a->n_ints; i++)
			v[i] = a->ints[i];
		return (int)a->n_ints;
	}
	tinfo *t = k < n->n_input && n->input[k][0] ? valued(m, n->input[k]) : NULL;
	if (!t || t->nval > max)
		return t ? -1 : 0;
	for (int i = 0; i < t->nval; i++)
		v[i] = to_i64(t->val[i]);
	return t->nval;
}

/* Unsqueeze / Squeeze of a: the output's shape (and a's values, if known)
 * recorded. 0, or -1 when the axes are not known */
static int fold_unsqueeze(imp *m, const Onnx__NodeProto *n, const tinfo *a)
{
	int64_t ax[16], dims[16];
	int na = ints_of(m, n, "axes", 1, ax, 16), r = 0;
	if (na < 0)
		return -1;
	if (!strcmp(n->op_type, "Unsqueeze")) {
		int out = a->rank + na, src = 0;
		if (out > 16)
			return -1;
		for (int d = 0; d < out; d++) {
			int ins = 0;
			for (int k = 0; k < na; k++)
				ins |= axis_of(ax[k], out) == d;
			dims[r++] = ins || src >= a->rank ? 1 : a->dims[src++];
		}
	} else {
		for (int d = 0; d < a->rank; d++) {
			int drop = na == 0 && a->dims[d] == 1;
			for (int k = 0; k < na; k++)
				drop |= axis_of(ax[k], a->rank) == d;
			if (!drop)
				dims[r++] = a->dims[d];
		}
	}
	set_info(m, n->output[0], r, dims, a->nval ? (int)elems(a) : 0, a->val);
	return 0;
}

/* A weight (or graph input) whose values the file holds: still trained (or
 * fed), never folded as a constant. */
static int trained(imp *m, const char *name)
{
	cJSON *d = cJSON_GetObjectItem(m->tensors, resolve(m, name));
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(d, "role"));
	return role && strcmp(role, "const");
}

/* The n values of a view of known values a (its rank; output shape dims):
 * output coordinate d walks input dimension src[d] from lo[d] by step[d]
 * (a Slice: src the identity; a Transpose: src the permutation, lo 0, step 1) */
static void view_values(const tinfo *a, const int64_t *dims, const int64_t *src, const int64_t *lo,
                        const int64_t *step, int64_t n, double *v)
{
	int64_t at[16] = {0};
	for (int64_t i = 0; i < n; i++) {
		int64_t in_at[16], k = 0, stride = 1;
		for (int d = 0; d < a->rank; d++)
			in_at[src[d]] = lo[d] + at[d] * step[d];
		for (int d = a->rank - 1; d >= 0; d--) {
			k += in_at[d] * stride;
			stride *= a->dims[d];
		}
		v[i] = a->val[k];
		for (int d = a->rank - 1; d >= 0 && ++at[d] == dims[d]; d--)
			at[d] = 0;
	}
}

/* Slice of known values a (ONNX's semantics: negative starts and ends
 * count from the end and are clamped, negative steps walk back; torch's pad
 * reverses its pads so): the output's values recorded. 0, or -1 when the
 * ranges are not constants */
static int fold_slice(imp *m, const Onnx__NodeProto *n, const tinfo *a)
{
	int64_t st[16], en[16], ax[16], sp[16], lo[16], step[16], dims[16];
	int ns = ints_of(m, n, "starts", 1, st, 16), ne = ints_of(m, n, "ends", 2, en, 16);
	int na = ints_of(m, n, "axes", 3, ax, 16), nsp = ints_of(m, n, "steps", 4, sp, 16);
	if (ns < 1 || ne != ns || (na && na != ns) || (nsp && nsp != ns) || a->rank > 16)
		return -1;
	for (int d = 0; d < a->rank; d++) {
		lo[d] = 0;
		step[d] = 1;
		dims[d] = a->dims[d];
	}
	for (int k = 0; k < ns; k++) {
		int64_t d = na ? axis_of(ax[k], a->rank) : k, len, s = nsp ? sp[k] : 1, b, e;
		if (d < 0 || d >= a->rank || s == 0)
			return -1;
		len = a->dims[d];
		b = st[k] < 0 ? st[k] + len : st[k];
		e = en[k] < 0 ? en[k] + len : en[k];
		if (s > 0) {
			b = b < 0 ? 0 : b > len ? len : b;
			e = e < 0 ? 0 : e > len ? len : e;
			dims[d] = e > b ? (e - b + s - 1) / s : 0;
		} else {
			b = b < 0 ? -1 : b > len - 1 ? len - 1 : b;
			e = e < -1 ? -1 : e > len - 1 ? len - 1 : e;
			dims[d] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
		}
		lo[d] = b;
		step[d] = s;
	}
	int64_t no = 1;
	for (int d = 0; d < a->rank; d++)
		no = count_mul(no, dims[d]);
	if (!a->nval) { /* a constant's shape alone */
		set_info(m, n->output[0], a->rank, dims, 0, NULL);
		return 0;
	}
	double *v = scratch(m, no);
	if (!v)
		return -1;
	int64_t same[16] = {0};
	for (int d = 0; d < a->rank; d++)
		same[d] = d;
	view_values(a, dims, same, lo, step, no, v);
	set_info(m, n->output[0], a->rank, dims, (int)no, v);
	return 0;
}

static int split_sizes(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *ax,
                       int64_t *sizes);

/* Expand node n of a: its output's dimensions (a broadcast with the shape
 * its input 1 holds) into dims, their count; -1 when not known */
static int expand_dims(imp *m, const Onnx__NodeProto *n, const tinfo *a, int64_t *dims)
{
	tinfo *sh = valued(m, n->input[1]), e = {.known = 1};
	if (!sh || sh->rank != 1 || sh->nval > 16)
		return -1;
	e.rank = sh->nval;
	for (int d = 0; d < e.rank; d++)
		e.dims[d] = to_i64(sh->val[d]);
	return broadcast(a, &e, dims);
}

/* Split node n on a constant a: each output's shape, and its values where
 * a's are known and few. 0, or -1 (not folded). */
static int fold_split(imp *m, const Onnx__NodeProto *n, const tinfo *a)
{
	int64_t ax, sizes[16], at = 0;
	int k = split_sizes(m, n, a, &ax, sizes);
	if (k < 0 || a->rank > 16)
		return -1;
	for (int j = 0; j < k; j++) {
		int64_t dims[16], lo[16], step[16], same[16], no = 1;
		for (int d = 0; d < a->rank; d++) {
			dims[d] = d == ax ? sizes[j] : a->dims[d];
			lo[d] = d == ax ? at : 0;
			step[d] = 1;
			same[d] = d;
			no = count_mul(no, dims[d]);
		}
		at += sizes[j];
		double *v = a->nval ? scratch(m, no) : NULL;
		if (a->nval && !v)
			return -1;
		if (a->nval)
			view_values(a, dims, same, lo, step, no, v);
		set_info(m, n->output[j], a->rank, dims, a->nval ? (int)no : 0, v);
	}
	return 0;
}

/* Node n on constants only, some of them with values not kept (a shifted
 * window's attention mask, built from zeros by slice assignments and
 * compared; an int64 index buffer reshaped): its output is a constant of
 * the shape ONNX gives it, values not kept (the planner needs none; the
 * executor fills consts itself). 1 folded, 0 not (not every input is a
 * constant, or an op the importer cannot shape). */
/* Why constant o, an output of node n, has no values: too many (past
 * MAX_VALUES, or an input's were: over) or an input's are not in the file
 * (nodata); neither: the importer does not compute n's op on values */
static void why_not_valued(imp *m, const Onnx__NodeProto *n, tinfo *o)
{
	o->over = elems(o) > MAX_VALUES || o->over;
	for (size_t k = 0; k < n->n_input; k++) {
		tinfo *x = n->input[k][0] ? known(m, n->input[k]) : NULL;
		if (x && x->over)
			o->over = 1;
		if (x && x->nodata)
			o->nodata = 1;
	}
}

static int fold_constant(imp *m, const Onnx__NodeProto *n)
{
	static const char *const same[] = {
	    "Cast",  "Not",  "Neg",        "Identity",  "Sqrt",
	    "Floor", "Ceil", "Abs",        "Exp",       "Log",
	    "Relu",  "Sign", "Reciprocal", "ScatterND", "ScatterElements",
	    "Trilu", "Sin",  "Cos"};
	static const char *const bin[] = {"Add",
	                                  "Sub",
	                                  "Mul",
	                                  "Div",
	                                  "Pow",
	                                  "Mod",
	                                  "Equal",
	                                  "Less",
	                                  "Greater",
	                                  "LessOrEqual",
	                                  "GreaterOrEqual",
	                                  "And",
	                                  "Or",
	                                  "Xor",
	                                  "Max",
	                                  "Min"};
	const char *t = n->op_type;
	if (n->n_input < 1 || n->n_output < 1 || !n->output[0][0])
		return 0;
	for (size_t k = 0; k < n->n_input; k++)
		if (n->input[k][0] && !constlike(m, n->input[k]))
			return 0;
	for (size_t k = 0; k < n->n_input; k++)
		if (n->input[k][0] && trained(m, n->input[k]))
			return 0;
	tinfo *a = known(m, n->input[0]);
	int64_t dims[16];
	int r = -1;
	if (!a)
		return 0;
	for (size_t k = 0; k < sizeof same / sizeof *same && r < 0; k++)
		if (!strcmp(t, same[k])) {
			r = a->rank;
			memcpy(dims, a->dims, sizeof(int64_t) * (size_t)r);
		}
	for (size_t k = 0; k < sizeof bin / sizeof *bin && r < 0; k++)
		if (!strcmp(t, bin[k]) && n->n_input == 2 && known(m, n->input[1]))
			r = broadcast(a, known(m, n->input[1]), dims);
	if (r < 0 && !strcmp(t, "Where") && n->n_input == 3 && known(m, n->input[1]) &&
	    known(m, n->input[2])) {
		tinfo xy = {.known = 1};
		xy.rank = broadcast(known(m, n->input[1]), known(m, n->input[2]), xy.dims);
		r = xy.rank < 0 ? -1 : broadcast(a, &xy, dims);
	}
	if (r < 0 && !strcmp(t, "ConstantOfShape") && a->nval > 0 && a->rank == 1 &&
	    a->nval <= 16) {
		r = a->nval;
		for (int d = 0; d < r; d++)
			if ((dims[d] = to_i64(a->val[d])) < 0)
				return 0;
	}
	if (r < 0 && !strcmp(t, "Range") && n->n_input == 3) {
		tinfo *lo = valued(m, n->input[0]), *hi = valued(m, n->input[1]),
		      *st = valued(m, n->input[2]);
		if (!lo || !hi || !st || lo->nval != 1 || hi->nval != 1 || st->nval != 1 ||
		    st->val[0] == 0)
			return 0;
		double k = ceil((hi->val[0] - lo->val[0]) / st->val[0]);
		r = 1;
		dims[0] = k > 0 ? to_i64(k) : 0;
		double *v = scratch(m, dims[0]);
		if (v) { /* the values themselves */
			for (int64_t i = 0; i < dims[0]; i++)
				v[i] = lo->val[0] + (double)i * st->val[0];
			set_info(m, n->output[0], 1, dims, (int)dims[0], v);
			return 1;
		}
	}
	if (r < 0 && !strcmp(t, "Expand") && n->n_input == 2 &&
	    (r = expand_dims(m, n, a, dims)) < 0)
		return 0;
	if (r < 0 && !strcmp(t, "Concat")) {
		int64_t ax = axis_of(attr_i(n, "axis", 0), a->rank);
		if (ax < 0 || ax >= a->rank)
			return 0;
		r = a->rank;
		memcpy(dims, a->dims, sizeof(int64_t) * (size_t)r);
		dims[ax] = 0;
		for (size_t k = 0; k < n->n_input; k++) {
			tinfo *x = known(m, n->input[k]);
			if (!x || x->rank != r)
				return 0;
			if ((dims[ax] += x->dims[ax]) > BIG) /* a hostile file's many inputs */
				return 0;
		}
	}
	if (r >= 0) {
		set_info(m, n->output[0], r, dims, 0, NULL);
	} else if (!strcmp(t, "Unsqueeze") || !strcmp(t, "Squeeze")) {
		if (fold_unsqueeze(m, n, a))
			return 0;
	} else if (!strcmp(t, "Slice") && n->n_input >= 3) {
		if (fold_slice(m, n, a))
			return 0;
	} else if (!strcmp(t, "Split")) { /* every output a constant */
		if (fold_split(m, n, a))
			return 0;
		for (size_t j = 0; j < n->n_output; j++) {
			tinfo *o = known(m, n->output[j]);
			if (!o)
				return 0;
			if (!o->nval)
				why_not_valued(m, n, o);
			o->cons = 1;
		}
		return 1;
	} else if ((!strcmp(t, "Reshape") || !strcmp(t, "Transpose")) && !infer(m, n)) {
	} else {
		return 0;
	}
	tinfo *o = known(m, n->output[0]);
	if (!o)
		return 0;
	if (!o->nval)
		why_not_valued(m, n, o);
	o->cons = 1;
	return 1;
}

/* What a folder says of node n: FOLD_SEE, whether its output now has
 * values decides; FOLD_NOT, not folded; FOLD_DONE, folded. Each folds one
 * operator on known values (a the values of input 0; *el the output's
 * element type, where known), as onnx_ops[] emits them */
enum { FOLD_NOT = -1, FOLD_SEE = 0, FOLD_DONE = 1 };
typedef int (*onnx_fold)(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el);

static int fold_const_node(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)a, (void)el;
	for (size_t k = 0; k < n->n_attribute; k++)
		if (n->attribute[k]->t && n->attribute[k]->name &&
		    !strcmp(n->attribute[k]->name, "value")) {
			set_tensor(m, n->output[0], n->attribute[k]->t, MAX_VALUES);
			tinfo *c = known(m, n->output[0]);
			if (c) /* its values kept, or too many to keep: a constant still */
				c->cons = 1;
		}
	return FOLD_DONE;
}

static int fold_shape(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	double *v = scratch(m, 64);
	int64_t dims[1];
	if (!a)
		return FOLD_NOT;
	int64_t lo = axis_of(attr_i(n, "start", 0), a->rank),
	        hi = axis_of(attr_i(n, "end", a->rank), a->rank);
	lo = lo < 0 ? 0 : lo > a->rank ? a->rank : lo;
	hi = hi < lo ? lo : hi > a->rank ? a->rank : hi;
	for (int64_t d = lo; d < hi; d++)
		v[d - lo] = (double)a->dims[d];
	dims[0] = hi - lo;
	set_info(m, n->output[0], 1, dims, (int)(hi - lo), v);
	return FOLD_DONE;
}

static double un_copy(double x)
{
	return x;
}
static double un_bool(double x)
{
	return x != 0;
}
static double un_neg(double x)
{
	return -x;
}
static double un_not(double x)
{
	return x == 0;
}
static double un_relu(double x)
{
	return x > 0 ? x : 0;
}
static double un_sign(double x)
{
	return (x > 0) - (x < 0);
}
static double un_reciprocal(double x)
{
	return 1 / x;
}
static double un_sigmoid(double x)
{
	return 1 / (1 + exp(-x));
}

static const struct {
	const char *type;
	double (*f)(double);
} unary_values[] = {
    {"Identity", un_copy}, {"Floor", floor},  {"Ceil", ceil},    {"Sqrt", sqrt},
    {"Neg", un_neg},       {"Not", un_not},   {"Abs", fabs},     {"Exp", exp},
    {"Log", log},          {"Relu", un_relu}, {"Sign", un_sign}, {"Reciprocal", un_reciprocal},
    {"Sin", sin},          {"Cos", cos},      {"Tanh", tanh},    {"Sigmoid", un_sigmoid},
    {"Erf", erf}};

/* f of each of a's values */
static int fold_map(imp *m, const Onnx__NodeProto *n, const tinfo *a, double (*f)(double))
{
	int64_t ne = elems(a);
	double *v = scratch(m, ne);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < ne; i++)
		v[i] = f(a->val[i]);
	set_info(m, n->output[0], a->rank, a->dims, ne, v);
	return FOLD_SEE;
}

/* the element-wise functions of one input; Not's output is a bool */
static int fold_unary(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	size_t k = 0;
	while (strcmp(unary_values[k].type, n->op_type))
		k++;
	int st = fold_map(m, n, a, unary_values[k].f);
	if (st == FOLD_SEE && !strcmp(n->op_type, "Not"))
		*el = 9;
	return st;
}

/* to bool, to an integer, to a float */
static int fold_cast(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	int64_t to = attr_i(n, "to", 1);
	int st = fold_map(m, n, a,
	                  to == 9                                       ? un_bool
	                  : to != 1 && to != 10 && to != 11 && to != 16 ? trunc
	                                                                : un_copy);
	if (st == FOLD_SEE)
		*el = (int32_t)to;
	return st;
}

/* of a shape's entries (torch.std's count of the reduced elements) */
static int fold_reduce_entries(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (!(a->rank == 1 && (n->n_input < 2 || !n->input[1][0])))
		return FOLD_SEE;
	int keep = (int)attr_i(n, "keepdims", 1), prod = !strcmp(n->op_type, "ReduceProd");
	double r = prod;
	int64_t dims[1] = {1};
	for (int64_t i = 0; i < elems(a); i++)
		r = prod ? r * a->val[i] : r + a->val[i];
	set_info(m, n->output[0], keep, dims, 1, &r);
	return FOLD_SEE;
}

static double bin_add(double x, double y)
{
	return x + y;
}
static double bin_sub(double x, double y)
{
	return x - y;
}
static double bin_mul(double x, double y)
{
	return x * y;
}
static double bin_div(double x, double y)
{
	return y != 0 ? x / y : 0;
}
static double bin_int_div(double x, double y) /* of integers */
{
	double v = y != 0 ? x / y : 0;
	return x == trunc(x) && y == trunc(y) ? trunc(v) : v;
}
static double bin_equal(double x, double y)
{
	return x == y;
}
static double bin_mod(double x, double y) /* Mod (fmod 0): the divisor's sign */
{
	return y != 0 ? x - y * floor(x / y) : 0;
}
static double bin_less(double x, double y)
{
	return x < y;
}
static double bin_greater(double x, double y)
{
	return x > y;
}
static double bin_less_eq(double x, double y)
{
	return x <= y;
}
static double bin_greater_eq(double x, double y)
{
	return x >= y;
}
static double bin_and(double x, double y)
{
	return x != 0 && y != 0;
}
static double bin_or(double x, double y)
{
	return x != 0 || y != 0;
}
static double bin_xor(double x, double y)
{
	return (x != 0) != (y != 0);
}
static double bin_max(double x, double y)
{
	return x > y ? x : y;
}
static double bin_min(double x, double y)
{
	return x < y ? x : y;
}

/* the element-wise functions of two inputs, broadcast; logic's is a bool */
static const struct {
	const char *type;
	double (*f)(double, double);
	int logic;
} binary_values[] = {{"Add", bin_add, 0},
                     {"Sub", bin_sub, 0},
                     {"Mul", bin_mul, 0},
                     {"Div", bin_div, 0},
                     {"Equal", bin_equal, 1},
                     {"Pow", pow, 0},
                     {"Mod", bin_mod, 0},
                     {"Less", bin_less, 1},
                     {"Greater", bin_greater, 1},
                     {"LessOrEqual", bin_less_eq, 1},
                     {"GreaterOrEqual", bin_greater_eq, 1},
                     {"And", bin_and, 1},
                     {"Or", bin_or, 1},
                     {"Xor", bin_xor, 1},
                     {"Max", bin_max, 0},
                     {"Min", bin_min, 0}};

static int fold_binary(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	if (n->n_input != 2)
		return FOLD_SEE;
	size_t k = 0;
	while (strcmp(binary_values[k].type, n->op_type))
		k++;
	tinfo *b = valued(m, n->input[1]);
	if (!b) /* an input left out ("") */
		return FOLD_NOT;
	int64_t dims[16];
	int r = broadcast(a, b, dims);
	int64_t no = 1;
	for (int d = 0; d < r && no <= MAX_VALUES; d++)
		no = count_mul(no, dims[d]);
	double *v;
	if (r < 0 || !(v = scratch(m, no)))
		return FOLD_NOT;
	/* a division of integers is one (neither operand known to be a float) */
	int fl = a->elem == 1 || a->elem == 10 || a->elem == 11 || a->elem == 16 || b->elem == 1 ||
	         b->elem == 10 || b->elem == 11 || b->elem == 16;
	double (*f)(double, double) =
	    binary_values[k].f == bin_div && !fl ? bin_int_div : binary_values[k].f;
	for (int64_t i = 0; i < no; i++)
		v[i] = f(bval(a, dims, r, i), bval(b, dims, r, i));
	set_info(m, n->output[0], r, dims, no, v);
	*el = binary_values[k].logic ? 9 : *el ? *el : b->elem;
	return FOLD_SEE;
}

/* along any axis */
static int fold_gather(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (n->n_input != 2)
		return FOLD_SEE;
	tinfo *ix = valued(m, n->input[1]);
	int64_t ax = axis_of(attr_i(n, "axis", 0), a->rank), pre = 1, post = 1, no, dims[16];
	if (!ix || ax < 0 || ax >= a->rank || a->rank + ix->rank > 17)
		return FOLD_NOT;
	int r = 0;
	if (elems(a) == 0 || ix->nval == 0) /* nothing to gather: not folded */
		return FOLD_NOT;
	for (int d = 0; d < a->rank; d++) {
		if (d < ax)
			pre *= a->dims[d]; /* within a's elements, at most MAX_VALUES */
		if (d > ax)
			post *= a->dims[d];
		if (d != ax)
			dims[r++] = a->dims[d];
		else
			for (int e = 0; e < ix->rank; e++)
				dims[r++] = ix->dims[e];
	}
	no = pre * (int64_t)ix->nval * post;
	double *v = scratch(m, no);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < ix->nval; i++) {
		int64_t j = axis_of(to_i64(ix->val[i]), (int)a->dims[ax]);
		if (j < 0 || j >= a->dims[ax])
			return FOLD_NOT;
		for (int64_t p = 0; p < pre; p++)
			for (int64_t q = 0; q < post; q++)
				v[(p * ix->nval + i) * post + q] =
				    a->val[(p * a->dims[ax] + j) * post + q];
	}
	set_info(m, n->output[0], r, dims, no, v);
	return FOLD_SEE;
}

static int fold_unsqueeze_values(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	return fold_unsqueeze(m, n, a) ? FOLD_NOT : FOLD_SEE;
}

/* along any axis */
static int fold_concat(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	int64_t ax = axis_of(attr_i(n, "axis", 0), a->rank), pre = 1, post = 1, at = 0, dims[16];
	if (ax < 0 || ax >= a->rank)
		return FOLD_NOT;
	memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
	dims[ax] = 0;
	for (size_t k = 0; k < n->n_input; k++) {
		tinfo *x = valued(m, n->input[k]);
		if (!x || x->rank != a->rank)
			return FOLD_NOT;
		for (int d = 0; d < a->rank; d++)
			if (d != ax && x->dims[d] != a->dims[d])
				return FOLD_NOT;
		if ((dims[ax] += x->dims[ax]) > BIG) /* a hostile file's many inputs */
			return FOLD_NOT;
	}
	int64_t no = 1;
	for (int d = 0; d < a->rank; d++)
		if (__builtin_mul_overflow(pre, d < ax ? a->dims[d] : 1, &pre) ||
		    __builtin_mul_overflow(post, d > ax ? a->dims[d] : 1, &post))
			return FOLD_NOT;
	double *v;
	if (dims[ax] > BIG || __builtin_mul_overflow(pre, dims[ax], &no) ||
	    __builtin_mul_overflow(no, post, &no) || !(v = scratch(m, no)))
		return FOLD_NOT;
	for (size_t k = 0; k < n->n_input; k++) {
		tinfo *x = valued(m, n->input[k]);
		for (int64_t p = 0; p < pre; p++)
			for (int64_t i = 0; i < x->dims[ax] * post; i++)
				v[(p * dims[ax] + at) * post + i] =
				    x->val[p * x->dims[ax] * post + i];
		at += x->dims[ax];
	}
	set_info(m, n->output[0], a->rank, dims, no, v);
	return FOLD_SEE;
}

/* cond ? x : y, broadcast */
static int fold_where(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	if (n->n_input != 3)
		return FOLD_SEE;
	tinfo *x = valued(m, n->input[1]), *y = valued(m, n->input[2]), xy;
	int64_t d2[16], dims[16];
	int r = x && y ? broadcast(x, y, d2) : -1;
	if (r < 0)
		return FOLD_NOT;
	xy.rank = r;
	memcpy(xy.dims, d2, sizeof(int64_t) * (size_t)r);
	if ((r = broadcast(a, &xy, dims)) < 0)
		return FOLD_NOT;
	int64_t no = 1;
	for (int d = 0; d < r && no <= MAX_VALUES; d++)
		no = count_mul(no, dims[d]);
	double *v = scratch(m, no);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < no; i++)
		v[i] = bval(a, dims, r, i) != 0 ? bval(x, dims, r, i) : bval(y, dims, r, i);
	set_info(m, n->output[0], r, dims, no, v);
	*el = x->elem ? x->elem : y->elem;
	return FOLD_SEE;
}

/* the triangle of the last two axes */
static int fold_trilu(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (a->rank < 2)
		return FOLD_SEE;
	int64_t up = attr_i(n, "upper", 1), kk = 0, rows = a->dims[a->rank - 2],
	        cols = a->dims[a->rank - 1], ne = elems(a);
	tinfo *kt = n->n_input > 1 && n->input[1][0] ? valued(m, n->input[1]) : NULL;
	if (n->n_input > 1 && n->input[1][0] && (!kt || kt->nval != 1))
		return FOLD_NOT;
	if (kt)
		kk = to_i64(kt->val[0]);
	double *v = scratch(m, ne);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < ne; i++) {
		int64_t c = i % cols, rw = (i / cols) % rows;
		v[i] = (up ? c - rw >= kk : c - rw <= kk) ? a->val[i] : 0;
	}
	set_info(m, n->output[0], a->rank, a->dims, ne, v);
	return FOLD_SEE;
}

/* data a with the slices the index tuples name replaced by updates */
static int fold_scatter_nd(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (!(n->n_input == 3 && !attr(n, "reduction")))
		return FOLD_SEE;
	tinfo *ix = valued(m, n->input[1]), *up = valued(m, n->input[2]);
	int64_t q = ix && ix->rank > 0 ? ix->dims[ix->rank - 1] : -1, slice = 1, ne = elems(a);
	double *v;
	if (q < 1 || q > a->rank || !up || ne < 1 || !(v = scratch(m, ne)))
		return FOLD_NOT;
	for (int d = (int)q; d < a->rank; d++)
		slice *= a->dims[d];
	int64_t tuples = ix->nval / q;
	if (up->nval != tuples * slice)
		return FOLD_NOT;
	memcpy(v, a->val, sizeof(double) * (size_t)ne);
	for (int64_t j = 0; j < tuples; j++) {
		int64_t at = 0;
		for (int d = 0; d < q; d++) {
			int64_t c = axis_of(to_i64(ix->val[j * q + d]), (int)a->dims[d]);
			if (c < 0 || c >= a->dims[d])
				return FOLD_NOT;
			at = at * a->dims[d] + c;
		}
		memcpy(v + at * slice, up->val + j * slice, sizeof(double) * (size_t)slice);
	}
	set_info(m, n->output[0], a->rank, a->dims, ne, v);
	return FOLD_SEE;
}

/* values kept, shape changed */
static int fold_reshape(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (n->n_input != 2)
		return FOLD_SEE;
	if (infer(m, n))
		return FOLD_NOT;
	tinfo *o = known(m, n->output[0]);
	if (!o || elems(o) != elems(a))
		return FOLD_NOT;
	set_info(m, n->output[0], o->rank, o->dims, elems(a), a->val);
	return FOLD_SEE;
}

/* any steps */
static int fold_slice_values(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	return n->n_input >= 3 && fold_slice(m, n, a) ? FOLD_NOT : FOLD_SEE;
}

static int fold_split_values(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	return fold_split(m, n, a) == 0 ? FOLD_DONE : FOLD_NOT;
}

/* values broadcast to a shape */
static int fold_expand(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (n->n_input != 2)
		return FOLD_SEE;
	int64_t dims[16];
	int r = expand_dims(m, n, a, dims);
	int64_t no = 1;
	for (int d = 0; d < r && no <= MAX_VALUES; d++)
		no = count_mul(no, dims[d]);
	double *v;
	if (r < 0 || !(v = scratch(m, no)))
		return FOLD_NOT;
	for (int64_t i = 0; i < no; i++)
		v[i] = bval(a, dims, r, i);
	set_info(m, n->output[0], r, dims, no, v);
	return FOLD_SEE;
}

static int fold_transpose(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	int64_t perm[16], dims[16], ne = elems(a);
	int np = ints_of(m, n, "perm", 99, perm, 16);
	if (a->rank > 16 || (np && np != a->rank))
		return FOLD_NOT;
	for (int d = 0; d < a->rank; d++) {
		if (!np)
			perm[d] = a->rank - 1 - d;
		if (perm[d] < 0 || perm[d] >= a->rank)
			return FOLD_NOT;
		dims[d] = a->dims[perm[d]];
	}
	int64_t zero[16] = {0}, one[16];
	for (int d = 0; d < a->rank; d++)
		one[d] = 1;
	double *v = scratch(m, ne);
	if (!v)
		return FOLD_NOT;
	view_values(a, dims, perm, zero, one, ne, v);
	set_info(m, n->output[0], a->rank, dims, ne, v);
	return FOLD_SEE;
}

static int fold_constant_of_shape(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	double fill = 0, one[1];
	int64_t dims[16];
	const Onnx__AttributeProto *va = attr(n, "value");
	if (va && va->t && tensor_values(va->t, one, 1) == 1)
		fill = one[0];
	*el = va && va->t ? va->t->data_type : 1;
	int64_t no = 1;
	if (a->rank != 1 || a->nval > 16)
		return FOLD_NOT;
	for (int i = 0; i < a->nval; i++) {
		dims[i] = to_i64(a->val[i]);
		if (dims[i] < 0 || dims[i] > MAX_VALUES || (no *= dims[i]) > MAX_VALUES)
			return FOLD_NOT;
	}
	double *v = scratch(m, no);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < no; i++)
		v[i] = fill;
	set_info(m, n->output[0], a->nval, dims, no, v);
	return FOLD_SEE;
}

/* The operators folded on known values; any, before the checks of its
 * inputs' values (Constant, Shape: a shape is known without them) */
static const struct {
	const char *type;
	onnx_fold fold;
	int any;
} onnx_folds[] = {
    {"Constant", fold_const_node, 1},
    {"Shape", fold_shape, 1},
    {"Cast", fold_cast, 0},
    {"Identity", fold_unary, 0},
    {"Floor", fold_unary, 0},
    {"Ceil", fold_unary, 0},
    {"Sqrt", fold_unary, 0},
    {"Neg", fold_unary, 0},
    {"Not", fold_unary, 0},
    {"Abs", fold_unary, 0},
    {"Exp", fold_unary, 0},
    {"Log", fold_unary, 0},
    {"Relu", fold_unary, 0},
    {"Sign", fold_unary, 0},
    {"Reciprocal", fold_unary, 0},
    {"Sin", fold_unary, 0},
    {"Cos", fold_unary, 0},
    {"Tanh", fold_unary, 0},
    {"Sigmoid", fold_unary, 0},
    {"Erf", fold_unary, 0},
    {"ReduceProd", fold_reduce_entries, 0},
    {"ReduceSum", fold_reduce_entries, 0},
    {"Add", fold_binary, 0},
    {"Sub", fold_binary, 0},
    {"Mul", fold_binary, 0},
    {"Div", fold_binary, 0},
    {"Equal", fold_binary, 0},
    {"Pow", fold_binary, 0},
    {"Mod", fold_binary, 0},
    {"Less", fold_binary, 0},
    {"Greater", fold_binary, 0},
    {"LessOrEqual", fold_binary, 0},
    {"GreaterOrEqual", fold_binary, 0},
    {"And", fold_binary, 0},
    {"Or", fold_binary, 0},
    {"Xor", fold_binary, 0},
    {"Max", fold_binary, 0},
    {"Min", fold_binary, 0},
    {"Gather", fold_gather, 0},
    {"Unsqueeze", fold_unsqueeze_values, 0},
    {"Squeeze", fold_unsqueeze_values, 0},
    {"Concat", fold_concat, 0},
    {"Where", fold_where, 0},
    {"Trilu", fold_trilu, 0},
    {"ScatterND", fold_scatter_nd, 0},
    {"Reshape", fold_reshape, 0},
    {"Slice", fold_slice_values, 0},
    {"Split", fold_split_values, 0},
    {"Expand", fold_expand, 0},
    {"Transpose", fold_transpose, 0},
    {"ConstantOfShape", fold_constant_of_shape, 0},
};

/* Folds node n when it computes on known values only (a shape computation):
 * records its output's shape and values, emits nothing. 1 folded, 0 not:
 * the folder of its operator (onnx_folds) once its inputs' values are
 * known, none trained */
static int fold_values(imp *m, const Onnx__NodeProto *n)
{
	tinfo *a = n->n_input > 0 ? known(m, n->input[0]) : NULL;
	if (!scratch(m, 64))
		return 0;
	onnx_fold f = NULL;
	int any = 0;
	for (size_t k = 0; k < sizeof onnx_folds / sizeof *onnx_folds; k++)
		if (!strcmp(onnx_folds[k].type, n->op_type)) {
			f = onnx_folds[k].fold;
			any = onnx_folds[k].any;
		}
	int32_t el = 0;
	if (any)
		return f(m, n, a, &el) == FOLD_DONE;
	for (size_t k = 0; k < n->n_input; k++) /* every input's values known, none trained */
		if (n->input[k][0] && (!valued(m, n->input[k]) || trained(m, n->input[k])))
			return 0;
	if (!a || n->n_input < 1)
		return 0;
	el = a->elem; /* the output's element type, where known */
	int st = f ? f(m, n, a, &el) : FOLD_SEE;
	if (st != FOLD_SEE)
		return st == FOLD_DONE;
	tinfo *o = valued(m, n->output[0]);
	if (!o) /* not an op folded here */
		return 0;
	o->cons = 1;
	o->elem = el;
	return 1;
}

/* Folds node n when it computes on constants only: their values when they
 * are known and few, else a constant of known shape (fold_constant). */
static int fold(imp *m, const Onnx__NodeProto *n)
{
	return fold_values(m, n) || fold_constant(m, n);
}

/* ONNX's output shape of an op the importer emits (node n): 0, or -1 when
 * it cannot tell (a later Shape of it is then refused) */
static int infer(imp *m, const Onnx__NodeProto *n)
{
	const char *t = n->op_type;
	tinfo *a = n->n_input > 0 ? known(m, n->input[0]) : NULL,
	      *b = n->n_input > 1 ? known(m, n->input[1]) : NULL;
	int64_t dims[16];
	int r = -1;
	if (!a)
		return -1;
	if (!strcmp(t, "MatMul") && b && a->rank >= 2 && b->rank >= 2) {
		tinfo ba = *a, bb = *b; /* the batch dimensions broadcast */
		ba.rank -= 2;
		bb.rank -= 2;
		r = broadcast(&ba, &bb, dims);
		if (r < 0 || r + 2 > 16)
			return -1;
		dims[r] = a->dims[a->rank - 2];
		dims[r + 1] = b->dims[b->rank - 1];
		r += 2;
	} else if (!strcmp(t, "Gemm") && b && a->rank == 2 && b->rank == 2) {
		dims[0] = a->dims[0];
		dims[1] = attr_i(n, "transB", 0) ? b->dims[0] : b->dims[1];
		r = 2;
	} else if ((!strcmp(t, "Add") || !strcmp(t, "Sub") || !strcmp(t, "Mul") ||
	            !strcmp(t, "Div") || !strcmp(t, "Pow") || !strcmp(t, "Max") ||
	            !strcmp(t, "Min") || !strcmp(t, "Equal") || !strcmp(t, "Less") ||
	            !strcmp(t, "Greater") || !strcmp(t, "PRelu")) &&
	           b) {
		r = broadcast(a, b, dims);
	} else if (!strcmp(t, "Where") && b && n->n_input == 3 && known(m, n->input[2])) {
		tinfo xy = {.known = 1};
		xy.rank = broadcast(b, known(m, n->input[2]), xy.dims);
		r = xy.rank < 0 ? -1 : broadcast(a, &xy, dims);
	} else if (!strcmp(t, "Transpose")) {
		int64_t perm[16];
		int np = ints_of(m, n, "perm", 99, perm, 16);
		for (int d = 0; d < a->rank; d++) {
			int64_t from = np == a->rank ? axis_of(perm[d], a->rank) : a->rank - 1 - d;
			if (from < 0 || from >= a->rank)
				return -1; /* not a permutation: the model reader says so */
			dims[d] = a->dims[from];
		}
		r = a->rank;
	} else if (!strcmp(t, "Gather") && b) {
		int64_t ax = axis_of(attr_i(n, "axis", 0), a->rank);
		r = 0;
		for (int d = 0; d < a->rank; d++)
			if (d == ax)
				for (int e = 0; e < b->rank && r < 16; e++)
					dims[r++] = b->dims[e];
			else if (r < 16)
				dims[r++] = a->dims[d];
	} else if (!strcmp(t, "ReduceMean") || !strcmp(t, "ReduceSum") || !strcmp(t, "ReduceL2") ||
	           !strcmp(t, "ReduceL1") || !strcmp(t, "ReduceSumSquare") ||
	           !strcmp(t, "ReduceMax") || !strcmp(t, "ReduceMin") ||
	           !strcmp(t, "ReduceLogSumExp")) {
		int64_t ax[16];
		int na = ints_of(m, n, "axes", 1, ax, 16), keep = (int)attr_i(n, "keepdims", 1);
		r = 0;
		for (int d = 0; d < a->rank; d++) {
			int red = na <= 0;
			for (int k = 0; k < na; k++)
				red |= axis_of(ax[k], a->rank) == d;
			if (!red)
				dims[r++] = a->dims[d];
			else if (keep)
				dims[r++] = 1;
		}
	} else if (!strcmp(t, "Reshape") && b && b->nval && b->nval <= 16) {
		int64_t prod = elems(a), rest = 1;
		int neg = -1;
		r = b->nval;
		for (int d = 0; d < r; d++) {
			int64_t x = to_i64(b->val[d]);
			dims[d] =
			    x == 0 && !attr_i(n, "allowzero", 0) && d < a->rank ? a->dims[d] : x;
			if (dims[d] == -1)
				neg = d;
			else if (__builtin_mul_overflow(rest, dims[d], &rest) || rest > BIG)
				return -1;
		}
		if (neg >= 0)
			dims[neg] = rest > 0 ? prod / rest : 0;
	} else { /* element-wise and normalisations: the first input's shape */
		r = a->rank;
		memcpy(dims, a->dims, sizeof(int64_t) * (size_t)r);
	}
	if (r < 0)
		return -1;
	set_info(m, n->output[0], r, dims, 0, NULL);
	return 0;
}

static const Onnx__NodeProto *constant_node(const imp *m, const char *name)
{
	for (size_t i = 0; i < m->g->n_node; i++) {
		const Onnx__NodeProto *n = m->g->node[i];
		if (n->op_type && !strcmp(n->op_type, "Constant") && n->n_output == 1 &&
		    !strcmp(n->output[0], name))
			return n;
	}
	return NULL;
}

/* a tensor's single float value (raw, float or double data): 0, or -1 when
 * it is not one number */
static int tensor_scalar(const Onnx__TensorProto *t, double *v)
{
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] != 1)
			return -1;
	if (t->n_float_data == 1) {
		*v = t->float_data[0];
		return 0;
	}
	if (t->n_double_data == 1) {
		*v = t->double_data[0];
		return 0;
	}
	if (t->has_raw_data && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
	    t->raw_data.len == 4) {
		float f;
		memcpy(&f, t->raw_data.data, 4);
		*v = f;
		return 0;
	}
	if (t->has_raw_data && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE &&
	    t->raw_data.len == 8) {
		memcpy(v, t->raw_data.data, 8);
		return 0;
	}
	return -1;
}

/* the value of a scalar Constant node's output, or of a scalar initializer */
static int scalar_of(const imp *m, const char *name, double *v)
{
	if (!name)
		return -1;
	tinfo *t = valued((imp *)m, name);
	if (t) {
		if (t->nval != 1)
			return -1;
		*v = t->val[0];
		return 0;
	}
	const Onnx__NodeProto *c = constant_node(m, name);
	for (size_t a = 0; c && a < c->n_attribute; a++)
		if (c->attribute[a]->name && !strcmp(c->attribute[a]->name, "value") &&
		    c->attribute[a]->t)
			return tensor_scalar(c->attribute[a]->t, v);
	for (size_t i = 0; i < m->g->n_initializer; i++)
		if (m->g->initializer[i]->name && !strcmp(m->g->initializer[i]->name, name))
			return tensor_scalar(m->g->initializer[i], v);
	return -1;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t a = 0; a < n->n_attribute; a++)
		if (n->attribute[a]->name && !strcmp(n->attribute[a]->name, name))
			return n->attribute[a];
	return NULL;
}

/* The string attribute `at` of n into buf ("" when absent or too long) */
static void attr_str(const Onnx__NodeProto *n, const char *at, char *buf, size_t len)
{
	const Onnx__AttributeProto *a = attr(n, at);
	buf[0] = 0;
	if (a && a->has_s && a->s.len < len) {
		memcpy(buf, a->s.data, a->s.len);
		buf[a->s.len] = 0;
	}
}

/* Tensor `from` stands for tensor `to` from now on */
static void alias(imp *m, char *from, char *to)
{
	m->alias_from[m->nalias] = from;
	m->alias_to[m->nalias++] = to;
}

/* Node n dropped: its output stands for its input 0 from now on */
static void drop_node(imp *m, const Onnx__NodeProto *n)
{
	alias(m, n->output[0], n->input[0]);
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = attr(n, name);
	return a && a->has_i ? a->i : dflt;
}

static int is_scalar(const imp *m, const char *name, double want)
{
	double v;
	return scalar_of(m, name, &v) == 0 && fabs(v - want) <= 1e-3 * fabs(want);
}

/* the nodes that read name (at most max), into who; how many */
static int consumers(const imp *m, const char *name, int *who, int max)
{
	int n = 0;
	for (size_t i = 0; i < m->g->n_node; i++)
		for (size_t k = 0; k < m->g->node[i]->n_input; k++)
			if (!strcmp(m->g->node[i]->input[k], name)) {
				if (n < max)
					who[n] = (int)i;
				n++;
				break;
			}
	return n;
}

static int is_op(const imp *m, int i, const char *type, size_t inputs)
{
	const Onnx__NodeProto *n = i >= 0 ? m->g->node[i] : NULL;
	return n && n->op_type && !strcmp(n->op_type, type) && n->n_input == inputs &&
	       n->n_output >= 1;
}

/* the input of two-input node i that is not `other` (NULL when neither is) */
static const char *other_input(const imp *m, int i, const char *other)
{
	const Onnx__NodeProto *n = m->g->node[i];
	return !strcmp(n->input[0], other)   ? n->input[1]
	       : !strcmp(n->input[1], other) ? n->input[0]
	                                     : NULL;
}

static int is_param(const imp *m, const char *name)
{
	const cJSON *t = cJSON_GetObjectItem(m->tensors, resolve(m, name));
	return t && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(t, "role")), "param");
}

/* Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 (either Mul first):
 * the last node's index, or -1 */
static int gelu_at(const imp *m, int i)
{
	const Onnx__NodeProto *d = m->g->node[i];
	int e = -1, a = -1, p = -1, q = -1;
	if (!is_op(m, i, "Div", 2) || !is_scalar(m, d->input[1], M_SQRT2) ||
	    consumers(m, d->output[0], &e, 1) != 1 || !is_op(m, e, "Erf", 1) ||
	    consumers(m, m->g->node[e]->output[0], &a, 1) != 1 || !is_op(m, a, "Add", 2) ||
	    consumers(m, m->g->node[a]->output[0], &p, 1) != 1 || !is_op(m, p, "Mul", 2) ||
	    consumers(m, m->g->node[p]->output[0], &q, 1) != 1 || !is_op(m, q, "Mul", 2))
		return -1;
	const Onnx__NodeProto *an = m->g->node[a], *pn = m->g->node[p], *qn = m->g->node[q];
	const char *x = d->input[0];
	int one = is_scalar(m, an->input[0], 1) || is_scalar(m, an->input[1], 1);
	/* x * (1 + erf) then * 0.5 (x * 0.5 first is another form: not here) */
	int has_x = !strcmp(pn->input[0], x) || !strcmp(pn->input[1], x);
	int half = is_scalar(m, qn->input[0], 0.5) || is_scalar(m, qn->input[1], 0.5);
	if (!one || !has_x || !half)
		return -1;
	m->skip[e] = m->skip[a] = m->skip[p] = 1;
	return q;
}

/* GELU in its tanh form (GPT-2's gelu_new, torch's approximate="tanh"):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), from the Pow of x to the
 * final product, as 0.5 x times (1 + tanh) or x times (1 + tanh) then 0.5.
 * The final node's index (the others marked skipped; a Mul of x by 0.5
 * emitted before, no longer read, is dropped at the end), or -1. */
static int gelu_tanh_at(imp *m, int i)
{
	const Onnx__NodeProto *pw = m->g->node[i];
	int q = -1, r = -1, t = -1, u = -1, v = -1, f = -1;
	if (!is_op(m, i, "Pow", 2) || !is_scalar(m, pw->input[1], 3))
		return -1;
	const char *x = pw->input[0];
	if (consumers(m, pw->output[0], &q, 1) != 1 || !is_op(m, q, "Mul", 2) ||
	    !is_scalar(m, other_input(m, q, pw->output[0]), 0.044715) ||
	    consumers(m, m->g->node[q]->output[0], &r, 1) != 1 || !is_op(m, r, "Add", 2) ||
	    !other_input(m, r, m->g->node[q]->output[0]) ||
	    strcmp(other_input(m, r, m->g->node[q]->output[0]), x) ||
	    consumers(m, m->g->node[r]->output[0], &t, 1) != 1 || !is_op(m, t, "Mul", 2) ||
	    !is_scalar(m, other_input(m, t, m->g->node[r]->output[0]), 0.7978845608) ||
	    consumers(m, m->g->node[t]->output[0], &u, 1) != 1 || !is_op(m, u, "Tanh", 1) ||
	    consumers(m, m->g->node[u]->output[0], &v, 1) != 1 || !is_op(m, v, "Add", 2) ||
	    !is_scalar(m, other_input(m, v, m->g->node[u]->output[0]), 1) ||
	    consumers(m, m->g->node[v]->output[0], &f, 1) != 1 || !is_op(m, f, "Mul", 2))
		return -1;
	const char *w = other_input(m, f, m->g->node[v]->output[0]);
	int h = -1, last = f;
	for (size_t k = 0; w && k < m->g->n_node && h < 0; k++) /* w = x * 0.5 ? */
		if (m->g->node[k]->n_output && !strcmp(m->g->node[k]->output[0], w))
			h = (int)k;
	int halved = h >= 0 && is_op(m, h, "Mul", 2) && other_input(m, h, x) &&
	             is_scalar(m, other_input(m, h, x), 0.5);
	if (!halved) { /* x * (1 + tanh), then * 0.5 */
		int g = -1;
		if (!w || strcmp(w, x) || consumers(m, m->g->node[f]->output[0], &g, 1) != 1 ||
		    !is_op(m, g, "Mul", 2) ||
		    !is_scalar(m, other_input(m, g, m->g->node[f]->output[0]), 0.5))
			return -1;
		last = g;
		m->skip[f] = 1;
	}
	m->skip[q] = m->skip[r] = m->skip[t] = m->skip[u] = m->skip[v] = 1;
	return last;
}

/* LayerNorm as exports before opset 17 write it, over the last axis:
 * m = ReduceMean(x); d = x - m; v = ReduceMean(d ^ 2); y = d / sqrt(v + eps)
 * * gamma + beta. The final Add's index (the others marked skipped), the
 * parts into *gamma, *beta, *eps; or -1. */
static int layernorm_at(imp *m, int i, const char **gamma, const char **beta, double *eps)
{
	const Onnx__NodeProto *r = m->g->node[i];
	const Onnx__AttributeProto *ax = attr(r, "axes");
	if (!is_op(m, i, "ReduceMean", 1) || !ax || ax->n_ints != 1 || ax->ints[0] != -1)
		return -1;
	const char *x = r->input[0];
	int w[4];
	if (consumers(m, r->output[0], w, 4) != 1 || !is_op(m, w[0], "Sub", 2) ||
	    strcmp(m->g->node[w[0]]->input[0], x) ||
	    strcmp(m->g->node[w[0]]->input[1], r->output[0]))
		return -1;
	int sub = w[0], pw = -1, dv = -1;
	const char *d = m->g->node[sub]->output[0];
	if (consumers(m, d, w, 4) != 2)
		return -1;
	for (int k = 0; k < 2; k++) {
		if (is_op(m, w[k], "Pow", 2) && !strcmp(m->g->node[w[k]]->input[0], d) &&
		    is_scalar(m, m->g->node[w[k]]->input[1], 2))
			pw = w[k];
		if (is_op(m, w[k], "Div", 2) && !strcmp(m->g->node[w[k]]->input[0], d))
			dv = w[k];
	}
	int rv = -1, ad = -1, sq = -1, mu = -1, bi = -1;
	if (pw < 0 || dv < 0 || consumers(m, m->g->node[pw]->output[0], &rv, 1) != 1 ||
	    !is_op(m, rv, "ReduceMean", 1) ||
	    consumers(m, m->g->node[rv]->output[0], &ad, 1) != 1 || !is_op(m, ad, "Add", 2) ||
	    consumers(m, m->g->node[ad]->output[0], &sq, 1) != 1 || !is_op(m, sq, "Sqrt", 1) ||
	    strcmp(m->g->node[dv]->input[1], m->g->node[sq]->output[0]))
		return -1;
	const char *e = other_input(m, ad, m->g->node[rv]->output[0]);
	if (!e || scalar_of(m, e, eps))
		return -1;
	*gamma = *beta = NULL;
	if (consumers(m, m->g->node[dv]->output[0], &mu, 1) == 1 && is_op(m, mu, "Mul", 2) &&
	    consumers(m, m->g->node[mu]->output[0], &bi, 1) == 1 && is_op(m, bi, "Add", 2)) {
		*gamma = other_input(m, mu, m->g->node[dv]->output[0]);
		*beta = other_input(m, bi, m->g->node[mu]->output[0]);
	}
	if (!*gamma || !*beta || !is_param(m, *gamma) || !is_param(m, *beta)) {
		*gamma = *beta = NULL; /* without affine parameters: the Div ends it */
		mu = bi = dv;
		dv = -1;
	}
	int parts[] = {sub, pw, rv, ad, sq, dv, mu};
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		if (parts[k] >= 0)
			m->skip[parts[k]] = 1;
	return bi;
}

/* RMSNorm as exports write it (LLaMA's, T5's), over the last axis: v =
 * ReduceMean(x ^ 2); y = x * (1 / sqrt(v + eps)) * gamma, the reciprocal a
 * Reciprocal, a Div of 1, or a Div of x itself; i is the Pow. The final
 * Mul's index (the others marked skipped), its parts into *gamma, *eps; or
 * -1. */
static int rmsnorm_at(imp *m, int i, const char **gamma, double *eps)
{
	const Onnx__NodeProto *pw = m->g->node[i];
	if (!is_op(m, i, "Pow", 2) || !is_scalar(m, pw->input[1], 2))
		return -1;
	const char *x = pw->input[0];
	tinfo *xi = known(m, x);
	int rv = -1, ad = -1, sq = -1, inv = -1, mu = -1, mw = -1;
	if (!xi || consumers(m, pw->output[0], &rv, 1) != 1 || !is_op(m, rv, "ReduceMean", 1))
		return -1;
	const Onnx__AttributeProto *ax = attr(m->g->node[rv], "axes");
	if (!ax || ax->n_ints != 1 || (ax->ints[0] != -1 && ax->ints[0] != xi->rank - 1) ||
	    !attr_i(m->g->node[rv], "keepdims", 1))
		return -1;
	if (consumers(m, m->g->node[rv]->output[0], &ad, 1) != 1 || !is_op(m, ad, "Add", 2) ||
	    consumers(m, m->g->node[ad]->output[0], &sq, 1) != 1 || !is_op(m, sq, "Sqrt", 1) ||
	    consumers(m, m->g->node[sq]->output[0], &inv, 1) != 1)
		return -1;
	const char *s = m->g->node[sq]->output[0];
	const Onnx__NodeProto *iv = m->g->node[inv];
	if (is_op(m, inv, "Div", 2) && !strcmp(iv->input[0], x) && !strcmp(iv->input[1], s)) {
		mu = inv; /* x / sqrt(v + eps) */
		inv = -1;
	} else if ((is_op(m, inv, "Reciprocal", 1) ||
	            (is_op(m, inv, "Div", 2) && is_scalar(m, iv->input[0], 1) &&
	             !strcmp(iv->input[1], s))) &&
	           consumers(m, iv->output[0], &mu, 1) == 1 && is_op(m, mu, "Mul", 2)) {
		const char *o = other_input(m, mu, iv->output[0]);
		if (!o || strcmp(o, x))
			return -1;
	} else {
		return -1;
	}
	if (consumers(m, m->g->node[mu]->output[0], &mw, 1) != 1 || !is_op(m, mw, "Mul", 2))
		return -1;
	const char *e = other_input(m, ad, m->g->node[rv]->output[0]);
	*gamma = other_input(m, mw, m->g->node[mu]->output[0]);
	if (!e || scalar_of(m, e, eps) || !*gamma || !is_param(m, *gamma))
		return -1;
	int parts[] = {i, rv, ad, sq, inv, mu};
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		if (parts[k] >= 0)
			m->skip[parts[k]] = 1;
	return mw;
}

static const char *dtype_name(int32_t t)
{
	switch (t) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return "float32";
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return "float16";
	case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return "bfloat16";
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return "int32";
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return "int64";
	/* a boolean mask fed to the model: integers 0 and 1 (data; no gradient) */
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return "int64";
	default: return NULL;
	}
}

static cJSON *int_list(const int64_t *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		pl_json_push(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static cJSON *add_op(imp *m, const char *name, const char *type)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddArrayToObject(o, "inputs");
	cJSON_AddArrayToObject(o, "outputs");
	pl_json_push(m->ops, o);
	return o;
}

static void const_values(cJSON *t, const double *v, int64_t n, double fill);

static void io(imp *m, cJSON *o, const char *key, const char *name)
{
	const char *r = resolve(m, name);
	tinfo *c = known(m, r);
	if (c && (c->cons || c->nval > 0) && !cJSON_GetObjectItem(m->tensors, r)) {
		/* a constant computed at import, read by an op: declared, with its
		 * values (those it lacks are named by check_consts) */
		cJSON *t = cJSON_CreateObject();
		pl_json_add(t, "shape", int_list(c->dims, (size_t)c->rank));
		cJSON_AddStringToObject(t, "role", "const");
		if (c->nval > 0 && c->nval == elems(c))
			const_values(t, c->val, c->nval, 0);
		pl_json_add(m->tensors, r, t);
	}
	pl_json_push(cJSON_GetObjectItem(o, key), cJSON_CreateString(r));
}

static pl_status unsupported(imp *m, const Onnx__NodeProto *n, const char *why);

/* A const's "values" on its declaration t: the n of v, or n times `fill`
 * (v NULL), at most MAX_VALUES; an infinity is the string "inf" or "-inf"
 * (JSON has no literal for it), NaN the string "nan" (the model reader
 * refuses it, naming the element) */
static void const_values(cJSON *t, const double *v, int64_t n, double fill)
{
	if (n < 1 || n > MAX_VALUES)
		return;
	cJSON *a = cJSON_AddArrayToObject(t, "values");
	for (int64_t i = 0; a && i < n; i++) {
		double x = v ? v[i] : fill;
		cJSON_AddItemToArray(a, isfinite(x) ? cJSON_CreateNumber(x)
		                        : x != x    ? cJSON_CreateString("nan")
		                        : x > 0     ? cJSON_CreateString("inf")
		                                    : cJSON_CreateString("-inf"));
	}
}

/* A constant scale for the norm `op` of input x (a LayerNorm without
 * affine parameters): its name in buf, declared [x's last dimension]; NULL
 * when x's shape is not known or the name is taken */
static const char *const_scale(imp *m, const char *op, const tinfo *x, char *buf, size_t len)
{
	snprintf(buf, len, "%s.scale", op);
	if (!x || x->rank < 1 || cJSON_GetObjectItem(m->tensors, buf))
		return NULL;
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", int_list(&x->dims[x->rank - 1], 1));
	cJSON_AddStringToObject(t, "role", "const");
	const_values(t, NULL, x->dims[x->rank - 1], 1);
	pl_json_add(m->tensors, buf, t);
	return buf;
}

/* A norm fused from the nodes that end at node `last` (named after it):
 * x, its scale and (LayerNorm) its bias, over the last axis */
static pl_status emit_norm(imp *m, const char *x, int last, const char *type, const char *gamma,
                           const char *beta, double eps)
{
	const Onnx__NodeProto *l = m->g->node[last];
	const char *opname = l->name && l->name[0] ? l->name : l->output[0];
	char scale[600];
	tinfo *xi = known(m, x);
	if (!gamma) /* no affine parameters: a constant scale */
		gamma = const_scale(m, opname, xi, scale, sizeof scale);
	if (!gamma)
		return unsupported(m, l, "its input's shape is not known");
	cJSON *o = add_op(m, opname, type);
	io(m, o, "inputs", x);
	io(m, o, "inputs", gamma);
	if (beta)
		io(m, o, "inputs", beta);
	io(m, o, "outputs", l->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", -1);
	cJSON_AddNumberToObject(at, "epsilon", eps);
	m->skip[last] = 1;
	if (xi)
		set_info(m, l->output[0], xi->rank, xi->dims, 0, NULL);
	return PL_OK;
}

/* the element type the file states for tensor name (its value_info, as
 * shape inference writes it), or 0 */
static int32_t stated_elem(const imp *m, const char *name)
{
	for (size_t k = 0; k < m->g->n_value_info; k++) {
		const Onnx__ValueInfoProto *v = m->g->value_info[k];
		if (v->name && !strcmp(v->name, name) && v->type && v->type->tensor_type &&
		    v->type->tensor_type->has_elem_type)
			return v->type->tensor_type->elem_type;
	}
	return 0;
}

/* an operand: a scalar constant becomes a const tensor of shape [1] */
static void operand(imp *m, cJSON *o, const char *name)
{
	double v = 0;
	tinfo *k = valued(m, name);
	if (!cJSON_GetObjectItem(m->tensors, name) && (k || scalar_of(m, name, &v) == 0)) {
		cJSON *t = cJSON_CreateObject();
		int64_t one = 1;
		if (k && k->rank > 0)
			pl_json_add(t, "shape", int_list(k->dims, (size_t)k->rank));
		else
			pl_json_add(t, "shape", int_list(&one, 1));
		cJSON_AddStringToObject(t, "role", "const");
		/* its values, which the executor computes with */
		if (k && k->nval > 0 && k->nval == elems(k))
			const_values(t, k->val, k->nval, 0);
		else if (!k || k->rank == 0)
			const_values(t, NULL, 1, v);
		/* an integer constant compared with an integer input keeps its type */
		const char *dt = k ? dtype_name(k->elem ? k->elem : stated_elem(m, name)) : NULL;
		if (dt && !strncmp(dt, "int", 3))
			cJSON_AddStringToObject(t, "dtype", dt);
		pl_json_add(m->tensors, name, t);
	}
	io(m, o, "inputs", name);
}

static pl_status unsupported(imp *m, const Onnx__NodeProto *n, const char *why)
{
	return pl_err_set(m->err, PL_EINVAL,
	                  "%s: node '%s' (%s, opset %lld): %s; the importer knows " SUPPORTED,
	                  m->path, n->name && n->name[0] ? n->name : "(unnamed)", n->op_type,
	                  (long long)m->opset, why);
}

/* the emitted op whose first output is name, or NULL */
static cJSON *producer(imp *m, const char *name)
{
	cJSON *o;
	cJSON_ArrayForEach (o, m->ops) {
		cJSON *out = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0);
		if (cJSON_IsString(out) && !strcmp(out->valuestring, name))
			return o;
	}
	return NULL;
}

static const char *op_input(cJSON *o, int k)
{
	return cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "inputs"), k));
}

static int op_is(cJSON *o, const char *type)
{
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(o, "type"));
	return t && !strcmp(t, type);
}

static cJSON *param_decl(imp *m, const char *name)
{
	cJSON *t = name ? cJSON_GetObjectItem(m->tensors, name) : NULL;
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
	return role && !strcmp(role, "param") ? t : NULL;
}

/* a param holding columns lo..hi of param w (its last dimension cut),
 * declared under a name of its own; its name, or NULL */
static const char *param_slice(imp *m, const char *w, int64_t lo, int64_t hi)
{
	cJSON *t = param_decl(m, w), *shape = cJSON_GetObjectItem(t, "shape");
	int r = cJSON_GetArraySize(shape);
	if (r < 1 || r > 16)
		return NULL;
	int64_t dims[16];
	for (int d = 0; d < r; d++)
		dims[d] = (int64_t)cJSON_GetNumberValue(cJSON_GetArrayItem(shape, d));
	dims[r - 1] = hi - lo;
	char name[600];
	snprintf(name, sizeof name, "%s[%lld:%lld]", w, (long long)lo, (long long)hi);
	if (!cJSON_GetObjectItem(m->tensors, name)) {
		cJSON *n = cJSON_Duplicate(t, 1);
		cJSON_ReplaceItemInObject(n, "shape", int_list(dims, (size_t)r));
		pl_json_add(m->tensors, name, n);
	}
	cJSON *got = cJSON_GetObjectItem(m->tensors, name);
	return got ? got->string : NULL;
}

/* Columns lo..hi of a linear layer's output x (torch's MultiheadAttention
 * computes q, k and v with one in_proj and slices them apart; GPT-2's c_attn
 * splits them): the layer's weight and bias are cut instead, the slice its
 * own MatMul (and bias Add) of the layer's input named `name` with output
 * `out`, so every weight stays a param and the tensors keep the shapes the
 * op rules know. The whole layer, once nothing reads it, is dropped at the
 * end (drop_unread). -1 when x is not such a layer's output. */
static int linear_columns(imp *m, const char *x_name, int64_t lo, int64_t hi, const char *name,
                          const char *out)
{
	tinfo *x = known(m, x_name);
	if (!x || x->rank < 1 || lo < 0 || hi > x->dims[x->rank - 1] || hi <= lo)
		return -1;
	cJSON *add = producer(m, resolve(m, x_name)), *mm = add;
	const char *bias = NULL;
	if (add && op_is(add, "Add")) {
		const char *y = NULL;
		for (int k = 0; k < 2 && !bias; k++)
			if (param_decl(m, op_input(add, k))) {
				bias = op_input(add, k);
				y = op_input(add, 1 - k);
			}
		mm = y ? producer(m, y) : NULL;
	}
	if (!mm || !op_is(mm, "MatMul") || !param_decl(m, op_input(mm, 1)) ||
	    (bias && cJSON_GetArraySize(cJSON_GetObjectItem(param_decl(m, bias), "shape")) != 1))
		return -1;
	const char *w = param_slice(m, op_input(mm, 1), lo, hi),
	           *b = bias ? param_slice(m, bias, lo, hi) : NULL;
	if (!w || (bias && !b))
		return -1;
	char mmname[600], mmout[600];
	snprintf(mmname, sizeof mmname, "%s.mm", name);
	snprintf(mmout, sizeof mmout, "%s.mm", out);
	cJSON *o = add_op(m, bias ? mmname : name, "MatMul");
	io(m, o, "inputs", op_input(mm, 0));
	io(m, o, "inputs", w);
	io(m, o, "outputs", bias ? mmout : out);
	if (bias) {
		o = add_op(m, name, "Add");
		io(m, o, "inputs", mmout);
		io(m, o, "inputs", b);
		io(m, o, "outputs", out);
	}
	int64_t dims[16];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[x->rank - 1] = hi - lo;
	set_info(m, out, x->rank, dims, 0, NULL);
	return 0;
}

/* A Slice node's ranges on x: per sliced axis its index and [lo, hi)
 * clamped to the dimension, into axis, lo and hi (16 at most). Their count,
 * or -1 when the arguments are not known, disagree in length, name an axis x
 * does not have or step other than 1. */
static int slice_ranges_steps(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *axis,
                              int64_t *lo, int64_t *hi, int64_t *step)
{
	int64_t st[16], en[16], ax[16], sp[16];
	int ns = ints_of(m, n, "starts", 1, st, 16), ne = ints_of(m, n, "ends", 2, en, 16),
	    na = ints_of(m, n, "axes", 3, ax, 16), nt = ints_of(m, n, "steps", 4, sp, 16);
	if (ns < 1 || ne != ns || (na && na != ns) || (nt && nt != ns))
		return -1;
	for (int k = 0; k < ns; k++) {
		int64_t a = axis_of(na ? ax[k] : k, x->rank);
		step[k] = nt ? sp[k] : 1;
		if (a < 0 || a >= x->rank || step[k] < 1)
			return -1;
		int64_t N = x->dims[a], l = st[k] < 0 ? st[k] + N : st[k],
		        h = en[k] < 0 ? en[k] + N : en[k];
		l = l < 0 ? 0 : l > N ? N : l;
		axis[k] = a;
		lo[k] = l;
		hi[k] = h > N ? N : h < l ? l : h;
	}
	return ns;
}

/* slice_ranges_steps for slices with steps of 1 (-1 for any other) */
static int slice_ranges(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *axis,
                        int64_t *lo, int64_t *hi)
{
	int64_t step[16];
	int ns = slice_ranges_steps(m, n, x, axis, lo, hi, step);
	for (int k = 0; k < ns; k++)
		if (step[k] != 1)
			return -1;
	return ns;
}

/* Emits op `name` of type reading in and writing out, its attribute key the
 * list v of n ints; returns out */
static const char *emit_shaped(imp *m, const char *name, const char *type, const char *in,
                               const char *out, const char *key, const int64_t *v, int n)
{
	cJSON *o = add_op(m, name, type);
	pl_json_push(cJSON_GetObjectItem(o, "inputs"), cJSON_CreateString(resolve(m, in)));
	pl_json_push(cJSON_GetObjectItem(o, "outputs"), cJSON_CreateString(resolve(m, out)));
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), key, int_list(v, (size_t)n));
	return out;
}

/* A strided Slice of an activation (Swin's patch merging, x[:, 0::2, 1::2]):
 * every stepped axis of N elements cut by its step s into [N/s, s] (a
 * Reshape), the start's element taken of each group of s (a Slice), the
 * groups' axes merged back (a Reshape). Exact when the slice runs to the end
 * of an axis that s divides and starts within the first group. 0, or -1
 * when it is not such a slice */
static int import_strided_slice(imp *m, const Onnx__NodeProto *n, const char *name, const tinfo *x,
                                int ns, const int64_t *axis, const int64_t *lo, const int64_t *hi,
                                const int64_t *step)
{
	int64_t split[16], out[16], sax[16], slo[16], shi[16];
	int r = 0, at[16];
	for (int d = 0; d < x->rank; d++) {
		int k = -1;
		for (int j = 0; j < ns; j++)
			if (axis[j] == d)
				k = j;
		at[d] = r;
		out[d] = x->dims[d];
		if (r >= 15)
			return -1;
		if (k >= 0 && step[k] > 1) {
			if (lo[k] >= step[k] || hi[k] != x->dims[d] || x->dims[d] % step[k])
				return -1;
			split[r++] = x->dims[d] / step[k];
			split[r++] = step[k];
			out[d] = x->dims[d] / step[k];
		} else {
			split[r++] = x->dims[d];
			if (k >= 0) {
				if (hi[k] <= lo[k])
					return -1;
				out[d] = hi[k] - lo[k];
			}
		}
	}
	if (r > 8) /* the planner's tensors have at most 8 dimensions */
		return -1;
	int nsl = 0;
	for (int k = 0; k < ns; k++) {
		int d = (int)axis[k], inner = step[k] > 1;
		sax[nsl] = at[d] + inner;
		slo[nsl] = lo[k];
		shi[nsl] = inner ? lo[k] + 1 : hi[k];
		nsl++;
	}
	char a[600], b[600], nm[600];
	snprintf(a, sizeof a, "%s.split", n->output[0]);
	snprintf(b, sizeof b, "%s.pick", n->output[0]);
	snprintf(nm, sizeof nm, "%s.split", name);
	emit_shaped(m, nm, "Reshape", n->input[0], a, "shape", split, r);
	cJSON *o = add_op(m, name, "Slice");
	pl_json_push(cJSON_GetObjectItem(o, "inputs"), cJSON_CreateString(a));
	pl_json_push(cJSON_GetObjectItem(o, "outputs"), cJSON_CreateString(b));
	cJSON *att = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(att, "axes", int_list(sax, (size_t)nsl));
	pl_json_add(att, "starts", int_list(slo, (size_t)nsl));
	pl_json_add(att, "ends", int_list(shi, (size_t)nsl));
	snprintf(nm, sizeof nm, "%s.merge", name);
	emit_shaped(m, nm, "Reshape", b, n->output[0], "shape", out, x->rank);
	set_info(m, n->output[0], x->rank, out, 0, NULL);
	return 0;
}

/* A Slice of initializer t (a param or const: an attention mask sliced to
 * the sequence) is the initializer itself when it keeps every element, else
 * a tensor of its own declared with the sliced shape (its data are not
 * needed). -1 when t is not an initializer or the slice not known. */
static int slice_initializer(imp *m, const Onnx__NodeProto *n)
{
	cJSON *t = cJSON_GetObjectItem(m->tensors, resolve(m, n->input[0]));
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
	tinfo *x = known(m, n->input[0]);
	int64_t axis[16], lo[16], hi[16], dims[16];
	int ns = t && role && strcmp(role, "input") && x ? slice_ranges(m, n, x, axis, lo, hi) : -1;
	if (ns < 0)
		return -1;
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (int k = 0; k < ns; k++)
		dims[axis[k]] = hi[k] - lo[k];
	if (!memcmp(dims, x->dims, sizeof(int64_t) * (size_t)x->rank)) { /* all of it */
		drop_node(m, n);
		return 0;
	}
	cJSON *d = cJSON_Duplicate(t, 1);
	cJSON_ReplaceItemInObject(d, "shape", int_list(dims, (size_t)x->rank));
	pl_json_add(m->tensors, n->output[0], d);
	set_info(m, n->output[0], x->rank, dims, 0, NULL);
	tinfo *o = known(m, n->output[0]);
	if (o) /* made a constant later (--const): its values only if the file has none */
		o->nodata = x->nodata || (x->init && !x->init->has_raw_data &&
		                          !x->init->n_float_data && !x->init->n_double_data &&
		                          !x->init->n_int32_data && !x->init->n_int64_data);
	return 0;
}

/* Slice along the last axis of a linear layer's output, or of an
 * initializer; -1 when neither. */
/* A Slice of one axis with a negative step (torch.flip, x[::-1]): a Gather
 * of the indices it visits, an int64 const carrying them (start clamped to
 * [0, N - 1], end to [-1, N - 1], as ONNX). 0, or -1 when it is not such a
 * slice */
static int import_reversed_slice(imp *m, const Onnx__NodeProto *n, const char *name, tinfo *x)
{
	int64_t st, en, ax = 0, sp;
	if (ints_of(m, n, "starts", 1, &st, 1) != 1 || ints_of(m, n, "ends", 2, &en, 1) != 1 ||
	    ints_of(m, n, "axes", 3, &ax, 1) < 0 || ints_of(m, n, "steps", 4, &sp, 1) != 1 ||
	    sp >= 0 || (ax = axis_of(ax, x->rank)) < 0 || ax >= x->rank)
		return -1;
	int64_t N = x->dims[ax];
	if (st < -N || st > N || en < -N - 1 || en > N) /* clamped as ONNX clamps them */
		st = st < -N ? -N : st > N ? N : st, en = en < -N - 1 ? -N - 1 : en > N ? N : en;
	int64_t lo = st < 0 ? st + N : st, hi = en < 0 ? en + N : en;
	lo = lo < 0 ? -1 : lo > N - 1 ? N - 1 : lo;
	hi = hi < -1 ? -1 : hi > N - 1 ? N - 1 : hi;
	int64_t by = sp < -N ? N + 1 : -sp; /* the step's size (no negation of INT64_MIN) */
	int64_t k = lo > hi ? (lo - hi - 1) / by + 1 : 0;
	if (k < 1 || k > 65536)
		return -1;
	double *ix = pl_malloc(sizeof *ix * (size_t)k);
	if (!ix)
		return -1;
	for (int64_t i = 0; i < k; i++)
		ix[i] = (double)(lo - i * by);
	char iname[600];
	snprintf(iname, sizeof iname, "%s.indices", name);
	cJSON *c = cJSON_CreateObject();
	pl_json_add(c, "shape", int_list(&k, 1));
	cJSON_AddStringToObject(c, "dtype", "int64");
	cJSON_AddStringToObject(c, "role", "const");
	const_values(c, ix, k, 0);
	free(ix);
	pl_json_add(m->tensors, iname, c);
	cJSON *o = add_op(m, name, "Gather");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "inputs", iname);
	io(m, o, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", (double)ax);
	int64_t dims[16];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[ax] = k;
	set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

/* The Slice op `name` of tensor `in` (of shape x) over ns axes, [lo, hi) of
 * each, into `out`, its shape recorded; -1 (nothing added) when a range is
 * empty */
static int slice_op(imp *m, const char *name, const char *in, const char *out, const tinfo *x,
                    int ns, const int64_t *axis, const int64_t *lo, const int64_t *hi)
{
	int64_t dims[16];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (int k = 0; k < ns; k++) {
		if (hi[k] <= lo[k])
			return -1;
		dims[axis[k]] = hi[k] - lo[k];
	}
	cJSON *o = add_op(m, name, "Slice");
	io(m, o, "inputs", in);
	io(m, o, "outputs", out);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(at, "axes", int_list(axis, (size_t)ns));
	pl_json_add(at, "starts", int_list(lo, (size_t)ns));
	pl_json_add(at, "ends", int_list(hi, (size_t)ns));
	/* (tinfo keeps the name's pointer: the op's string, which out may not outlive) */
	set_info(m, cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0)->valuestring, x->rank,
	         dims, 0, NULL);
	return 0;
}

static int import_slice(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (slice_initializer(m, n) == 0)
		return 0;
	tinfo *x = known(m, n->input[0]);
	if (x && x->rank >= 1 && import_reversed_slice(m, n, name, x) == 0)
		return 0;
	int64_t axis[16], lo[16], hi[16], step[16];
	int ns = x && x->rank >= 1 ? slice_ranges_steps(m, n, x, axis, lo, hi, step) : -1;
	if (ns < 1 || ns > x->rank)
		return -1;
	for (int k = 0; k < ns; k++)
		if (step[k] != 1)
			return import_strided_slice(m, n, name, x, ns, axis, lo, hi, step);
	if (ns == 1 && axis[0] == x->rank - 1 &&
	    !linear_columns(m, n->input[0], lo[0], hi[0], name, n->output[0]))
		return 0;
	/* any other range of a tensor: the Slice op (its sliced axes kept whole) */
	return slice_op(m, name, n->input[0], n->output[0], x, ns, axis, lo, hi);
}

/* Einsum's equation "ab,bc->ac": each part's indices (ix[part], nix[part]
 * of them; letters, at most 16, none repeated). 0, or -1 when it is not two
 * operands and an output so written */
static int einsum_parse(const Onnx__AttributeProto *eq, char ix[3][16], int nix[3])
{
	int part = 0;
	for (size_t i = 0; i < eq->s.len; i++) {
		char c = (char)eq->s.data[i];
		if (c == ' ')
			continue;
		if (c == ',' && part == 0)
			part = 1;
		else if (c == '-' && part == 1 && i + 1 < eq->s.len && eq->s.data[i + 1] == '>') {
			part = 2;
			i++;
		} else if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && nix[part] < 16) {
			for (int k = 0; k < nix[part]; k++)
				if (ix[part][k] == c)
					return -1;
			ix[part][nix[part]++] = c;
		} else
			return -1;
	}
	return part == 2 ? 0 : -1;
}

/* Einsum of two operands that is a (batched) matrix product, as attention
 * written with einsum spells it ("bhid,bhjd->bhij"): each operand
 * transposed to [batch, its free indices, the contracted ones] and
 * reshaped to three dimensions' worth, one MatMul, reshaped and transposed
 * into the output's order. Every index of an operand is a batch index (in
 * both and the output), free (in it and the output) or contracted (in both,
 * not the output); no ellipsis, no repeated index, batch sizes equal. 0, or
 * -1 with *why. */
static int import_einsum(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const Onnx__AttributeProto *eq = attr(n, "equation");
	char ix[3][16];
	int nix[3] = {0, 0, 0};
	*why = "only a product of two operands whose indices are each batch, free or contracted "
	       "(no ellipsis, no index summed in one operand alone)";
	if (!eq || !eq->has_s || n->n_input != 2 || n->n_output != 1 || einsum_parse(eq, ix, nix))
		return -1;
	tinfo *x[2] = {known(m, n->input[0]), known(m, n->input[1])};
	if (!x[0] || !x[1] || x[0]->rank != nix[0] || x[1]->rank != nix[1])
		return -1;
	/* each index: its size, and where it is in the operands and output */
	char bat[16], fa[16], fb[16], con[16];
	int nb = 0, na = 0, nfb = 0, nc = 0;
	int64_t size[128] = {0};
	for (int o = 0; o < 2; o++)
		for (int k = 0; k < nix[o]; k++) {
			int c = (unsigned char)ix[o][k];
			if (size[c] && size[c] != x[o]->dims[k])
				return -1;
			size[c] = x[o]->dims[k];
		}
	for (int o = 0; o < 2; o++)
		for (int k = 0; k < nix[o]; k++) {
			char c = ix[o][k];
			int in_other = memchr(ix[1 - o], c, (size_t)nix[1 - o]) != NULL,
			    in_out = memchr(ix[2], c, (size_t)nix[2]) != NULL;
			if (!in_other && !in_out)
				return -1; /* summed in one operand alone */
			if (o == 1 && in_other)
				continue; /* met with the first operand */
			if (in_other && in_out)
				bat[nb++] = c;
			else if (in_other)
				con[nc++] = c;
			else if (o == 0)
				fa[na++] = c;
			else
				fb[nfb++] = c;
		}
	if (nb + na + nfb != nix[2] || nb + 2 > 8)
		return -1;
	for (int k = 0; k < nix[2]; k++)
		if (!size[(unsigned char)ix[2][k]])
			return -1;
	/* A to [batch, free of A, contracted], B to [batch, contracted, free of B] */
	char seq[2][16];
	int len[2] = {0, 0};
	for (int o = 0; o < 2; o++) {
		int l = 0;
		for (int k = 0; k < nb; k++)
			seq[o][l++] = bat[k];
		const char *first = o == 0 ? fa : con, *second = o == 0 ? con : fb;
		int n1 = o == 0 ? na : nc, n2 = o == 0 ? nc : nfb;
		for (int k = 0; k < n1; k++)
			seq[o][l++] = first[k];
		for (int k = 0; k < n2; k++)
			seq[o][l++] = second[k];
		len[o] = l;
	}
	char buf[4][600];
	const char *in[2];
	int64_t M = 1, N = 1, K = 1;
	*why = "the product of its operands' free or contracted dimensions (inputs' shapes) "
	       "overflows 64 bits";
	for (int k = 0; k < na; k++)
		if (pl_size_mul(M, size[(unsigned char)fa[k]], &M))
			return -1;
	for (int k = 0; k < nfb; k++)
		if (pl_size_mul(N, size[(unsigned char)fb[k]], &N))
			return -1;
	for (int k = 0; k < nc; k++)
		if (pl_size_mul(K, size[(unsigned char)con[k]], &K))
			return -1;
	for (int o = 0; o < 2; o++) {
		int64_t perm[16], shape[16];
		int moved = 0;
		for (int k = 0; k < len[o]; k++) {
			perm[k] = (const char *)memchr(ix[o], seq[o][k], (size_t)nix[o]) - ix[o];
			moved |= perm[k] != k;
		}
		in[o] = n->input[o];
		if (moved) {
			snprintf(buf[o], sizeof buf[o], "%s.t%d", name, o);
			in[o] = emit_shaped(m, buf[o], "Transpose", in[o], buf[o], "perm", perm,
			                    len[o]);
		}
		for (int k = 0; k < nb; k++)
			shape[k] = size[(unsigned char)bat[k]];
		shape[nb] = o == 0 ? M : K;
		shape[nb + 1] = o == 0 ? K : N;
		if (len[o] != nb + 2 || (o == 0 ? na != 1 || nc != 1 : nc != 1 || nfb != 1)) {
			snprintf(buf[2 + o], sizeof buf[2 + o], "%s.r%d", name, o);
			in[o] = emit_shaped(m, buf[2 + o], "Reshape", in[o], buf[2 + o], "shape",
			                    shape, nb + 2);
		}
	}
	/* the product [batch, M, N], then the output's shape and order */
	int64_t perm[16], shape[16];
	int moved = 0, direct = na == 1 && nfb == 1;
	char mm[600], seqo[16];
	int l = 0;
	for (int k = 0; k < nb; k++)
		seqo[l++] = bat[k];
	for (int k = 0; k < na; k++)
		seqo[l++] = fa[k];
	for (int k = 0; k < nfb; k++)
		seqo[l++] = fb[k];
	for (int k = 0; k < l; k++) {
		perm[k] = (const char *)memchr(seqo, ix[2][k], (size_t)l) - seqo;
		moved |= perm[k] != k;
		shape[k] = size[(unsigned char)seqo[k]];
	}
	/* the last of MatMul, Reshape (unless the free indices are one each) and
	 * Transpose (unless the order is the output's) writes the output, and
	 * is named as the node */
	int reshape = !direct;
	char rs[600];
	snprintf(mm, sizeof mm, reshape || moved ? "%s.mm" : "%s", name);
	snprintf(rs, sizeof rs, moved ? "%s.r" : "%s", name);
	const char *y = reshape || moved ? mm : n->output[0];
	cJSON *o = add_op(m, mm, "MatMul");
	io(m, o, "inputs", in[0]);
	io(m, o, "inputs", in[1]);
	io(m, o, "outputs", y);
	if (reshape)
		y = emit_shaped(m, rs, "Reshape", y, moved ? rs : n->output[0], "shape", shape, l);
	if (moved)
		emit_shaped(m, name, "Transpose", y, n->output[0], "perm", perm, l);
	int64_t od[16];
	for (int k = 0; k < nix[2]; k++)
		od[k] = size[(unsigned char)ix[2][k]];
	set_info(m, n->output[0], nix[2], od, 0, NULL);
	return 0;
}

/* The axis (*ax) and the parts' sizes of Split node n of input x, as ONNX
 * gives them (the `split` input or attribute; else equal parts, the last one
 * smaller where opset 18's num_outputs does not divide the axis): their
 * count, one per output, or -1. */
static int split_sizes(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *ax,
                       int64_t *sizes)
{
	*ax = x ? axis_of(attr_i(n, "axis", 0), x->rank) : -1;
	if (!x || x->rank < 1 || *ax < 0 || *ax >= x->rank || n->n_output < 1 || n->n_output > 16)
		return -1;
	int64_t N = x->dims[*ax], parts = (int64_t)n->n_output;
	if (n->n_input > 1 && n->input[1][0] && !valued(m, n->input[1]))
		return -1; /* sizes given, not known */
	int k = ints_of(m, n, "split", 1, sizes, 16);
	if (k == 0) { /* equal parts */
		int64_t each =
		    N % parts == 0 || !attr(n, "num_outputs") ? N / parts : (N + parts - 1) / parts;
		if (each * parts != N && !attr(n, "num_outputs"))
			return -1;
		for (int64_t j = 0; j < parts; j++)
			sizes[j] = j < parts - 1 ? each : N - each * (parts - 1);
		k = (int)parts;
	}
	int64_t total = 0;
	for (int j = 0; j < k; j++)
		total += sizes[j] > 0 ? sizes[j] : -BIG;
	return k == (int)n->n_output && total == N ? k : -1;
}

/* Split along the last axis of a linear layer's output (GPT-2's q, k, v):
 * each output its columns (linear_columns); -1 when not such a split. */
static int import_split(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]);
	int64_t ax, sizes[16];
	int k = split_sizes(m, n, x, &ax, sizes);
	if (k < 0)
		return -1;
	int64_t at = 0;
	char part[600];
	if (ax == x->rank - 1) { /* a linear layer's output: its weight's columns */
		snprintf(part, sizeof part, "%s.0", name);
		if (!linear_columns(m, n->input[0], 0, sizes[0], part, n->output[0])) {
			for (int j = 1; j < k; j++) {
				at += sizes[j - 1];
				snprintf(part, sizeof part, "%s.%d", name, j);
				if (linear_columns(m, n->input[0], at, at + sizes[j], part,
				                   n->output[j]))
					return -1;
			}
			return 0;
		}
	}
	for (int j = 0; j < k; j++) { /* any other tensor: a Slice each */
		int64_t dims[16], lo = at, hi = at + sizes[j];
		snprintf(part, sizeof part, "%s.%d", name, j);
		cJSON *o = add_op(m, part, "Slice");
		io(m, o, "inputs", n->input[0]);
		io(m, o, "outputs", n->output[j]);
		cJSON *a = cJSON_AddObjectToObject(o, "attrs");
		pl_json_add(a, "axes", int_list(&ax, 1));
		pl_json_add(a, "starts", int_list(&lo, 1));
		pl_json_add(a, "ends", int_list(&hi, 1));
		memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
		dims[ax] = sizes[j];
		set_info(m, n->output[j], x->rank, dims, 0, NULL);
		at = hi;
	}
	return 0;
}

/* whether an emitted op reads name, or it is one of outs */
static int is_read(imp *m, cJSON *outs, const char *name)
{
	cJSON *p, *in;
	cJSON_ArrayForEach (p, outs)
		if (!strcmp(cJSON_GetStringValue(p), name))
			return 1;
	cJSON_ArrayForEach (p, m->ops)
		cJSON_ArrayForEach (in, cJSON_GetObjectItem(p, "inputs"))
			if (!strcmp(cJSON_GetStringValue(in), name))
				return 1;
	return 0;
}

/* Drops what nothing reads any more (a linear layer split by split_linear):
 * ops none of whose outputs is read or a graph output, then params no op
 * reads. */
static void drop_unread(imp *m, cJSON *outs)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (cJSON *o = m->ops->child, *next; o; o = next) {
			next = o->next;
			cJSON *out;
			int read = 0;
			cJSON_ArrayForEach (out, cJSON_GetObjectItem(o, "outputs"))
				read |= is_read(m, outs, cJSON_GetStringValue(out));
			if (!read) {
				cJSON_Delete(cJSON_DetachItemViaPointer(m->ops, o));
				changed = 1;
			}
		}
	}
	for (cJSON *t = m->tensors->child, *next; t; t = next) {
		next = t->next;
		if (param_decl(m, t->string) && !is_read(m, NULL, t->string))
			cJSON_Delete(cJSON_DetachItemViaPointer(m->tensors, t));
	}
}

/* ints_of for a window attribute of nsp entries (dflt when absent): 0, or -1
 * when it has another count or a value out of [lo, 2^20] */
static int window_ints(imp *m, const Onnx__NodeProto *n, const char *at, int count, int64_t dflt,
                       int64_t lo, int64_t *v)
{
	int got = ints_of(m, n, at, 99, v, 2 * 3);
	if (got == 0)
		for (int i = 0; i < count; i++)
			v[i] = dflt;
	else if (got != count)
		return -1;
	for (int i = 0; i < count; i++)
		if (v[i] < lo || v[i] > (1 << 20))
			return -1;
	return 0;
}

/* ConvTranspose of one group: the planner's op with its strides, dilations,
 * pads (auto_pad's resolved as ONNX states: the output stride x input, the
 * total padding split with the larger half at the end for SAME_UPPER) and
 * output_padding. 0, or -1 with *why */
static int import_convtranspose(imp *m, const Onnx__NodeProto *n, const char *name,
                                const char **why)
{
	tinfo *x = known(m, n->input[0]), *w = n->n_input > 1 ? known(m, n->input[1]) : NULL;
	*why = "its input's or weight's shape is not known as [batch, channels, 1 to 3 spatial "
	       "dimensions] and [input channels, output channels, the kernel]";
	if (!x || !w || x->rank < 3 || x->rank > 5 || w->rank != x->rank)
		return -1;
	int nsp = x->rank - 2;
	int64_t s[3], d[3], p[6], op[3], dims[5] = {x->dims[0], w->dims[1]};
	*why = "it has more than one group, or an output_shape (give pads instead)";
	if (attr_i(n, "group", 1) != 1 || attr(n, "output_shape"))
		return -1;
	*why = "strides, dilations, pads or output_padding has the wrong count or an "
	       "out-of-range value";
	if (window_ints(m, n, "strides", nsp, 1, 1, s) ||
	    window_ints(m, n, "dilations", nsp, 1, 1, d) ||
	    window_ints(m, n, "pads", 2 * nsp, 0, 0, p) ||
	    window_ints(m, n, "output_padding", nsp, 0, 0, op))
		return -1;
	char mode[16];
	attr_str(n, "auto_pad", mode, sizeof mode);
	*why = "auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER";
	if (mode[0] && strcmp(mode, "NOTSET") && strcmp(mode, "VALID") && strncmp(mode, "SAME_", 5))
		return -1;
	for (int i = 0; i < nsp; i++) {
		int64_t span = (w->dims[2 + i] - 1) * d[i] + 1,
		        full = s[i] * (x->dims[2 + i] - 1) + op[i] + span;
		if (!strcmp(mode, "VALID")) {
			p[i] = p[nsp + i] = 0;
		} else if (!strncmp(mode, "SAME_", 5)) {
			int64_t total = full - x->dims[2 + i] * s[i];
			total = total < 0 ? 0 : total;
			p[i] = !strcmp(mode, "SAME_UPPER") ? total / 2 : total - total / 2;
			p[nsp + i] = total - p[i];
		}
		dims[2 + i] = full - p[i] - p[nsp + i];
		*why = "its pads leave no output position";
		if (dims[2 + i] < 1)
			return -1;
	}
	cJSON *o = add_op(m, name, "ConvTranspose");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "inputs", n->input[1]);
	if (n->n_input > 2 && n->input[2][0])
		io(m, o, "inputs", n->input[2]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(at, "strides", int_list(s, (size_t)nsp));
	pl_json_add(at, "dilations", int_list(d, (size_t)nsp));
	pl_json_add(at, "pads", int_list(p, (size_t)(2 * nsp)));
	pl_json_add(at, "output_padding", int_list(op, (size_t)nsp));
	set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

static int all_values(imp *m, const char *name, double v);

/* Whether tensor `name` holds zeros: absent (""), zeros whose values are
 * known, or a ConstantOfShape of zeros or an Expand of such (PyTorch's
 * initial states, too many values to keep) */
static int zeros(imp *m, const char *name, int depth)
{
	if (!name[0] || all_values(m, name, 0))
		return 1;
	for (size_t i = 0; depth < 8 && i < m->g->n_node; i++) {
		const Onnx__NodeProto *n = m->g->node[i];
		if (n->n_output < 1 || strcmp(n->output[0], name) || !n->op_type)
			continue;
		if (!strcmp(n->op_type, "Expand") && n->n_input == 2)
			return zeros(m, n->input[0], depth + 1);
		if (!strcmp(n->op_type, "ConstantOfShape")) {
			const Onnx__AttributeProto *va = attr(n, "value");
			double one[1];
			return !va || !va->t || (tensor_values(va->t, one, 1) == 1 && one[0] == 0);
		}
		return 0;
	}
	return 0;
}

/* Whether a node or the graph's outputs read tensor `name` */
static int onnx_read(const imp *m, const char *name)
{
	int who[1];
	for (size_t k = 0; k < m->g->n_output; k++)
		if (m->g->output[k]->name && !strcmp(m->g->output[k]->name, name))
			return 1;
	return name[0] && consumers(m, name, who, 1) > 0;
}

/* Whether the activations list of a recurrent node is ONNX's default for it
 * (per direction: Tanh for RNN; Sigmoid, Tanh for GRU; Sigmoid, Tanh, Tanh
 * for LSTM) or absent */
static int default_activations(const Onnx__NodeProto *n, int gates_kind, int dirs)
{
	static const char *const dflt[3][3] = {
	    {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
	const Onnx__AttributeProto *a = attr(n, "activations");
	if (!a)
		return 1;
	size_t per = (size_t)gates_kind + 1;
	if (a->n_strings != per * (size_t)dirs)
		return 0;
	for (size_t k = 0; k < a->n_strings; k++) {
		const char *want = dflt[gates_kind][k % per];
		if (a->strings[k].len != strlen(want) ||
		    strncmp((const char *)a->strings[k].data, want, strlen(want)))
			return 0;
	}
	return 1;
}

/* name as the emitted op that outputs it keeps it (the importer's table
 * keeps a name's pointer: never one of a buffer on the stack), or name */
static const char *kept(imp *m, const char *name)
{
	cJSON *o = producer(m, name);
	cJSON *out = o ? cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0) : NULL;
	return cJSON_IsString(out) ? out->valuestring : name;
}

/* The last state of each direction of a recurrent layer's per-step states
 * y ([S, D, batch, H]; step S-1 forward, 0 reverse) as out [D, batch, H]:
 * each Y[last, d] ([1, 1, batch, hidden]) sliced out, side by side on axis
 * 1, axes 0 and 1 swapped, then reshaped with dimension 0 copied (a
 * micro-batch cuts the batch, dimension 2). The ops are named
 * NAME.SUFFIX... */
static void emit_last_state(imp *m, const char *name, const char *suffix, const char *y, int64_t D,
                            int64_t S, int reverse, int64_t H, int64_t batch, const char *out)
{
	char part[2][600], cat[600], tr[600], buf[600];
	for (int64_t d = 0; d < D; d++) {
		int64_t last = d == 1 || reverse ? 0 : S - 1;
		int64_t axes[2] = {0, 1}, lo[2] = {last, d}, hi[2] = {last + 1, d + 1};
		snprintf(part[d], sizeof part[d], "%s.%s%lld", name, suffix, (long long)d);
		cJSON *so = add_op(m, part[d], "Slice");
		io(m, so, "inputs", y);
		io(m, so, "outputs", part[d]);
		cJSON *sa = cJSON_AddObjectToObject(so, "attrs");
		pl_json_add(sa, "axes", int_list(axes, 2));
		pl_json_add(sa, "starts", int_list(lo, 2));
		pl_json_add(sa, "ends", int_list(hi, 2));
	}
	const char *both = part[0];
	if (D == 2) {
		snprintf(cat, sizeof cat, "%s.%s", name, suffix);
		cJSON *co = add_op(m, cat, "Concat");
		io(m, co, "inputs", part[0]);
		io(m, co, "inputs", part[1]);
		io(m, co, "outputs", cat);
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(co, "attrs"), "axis", 1);
		both = cat;
	}
	snprintf(tr, sizeof tr, "%s.%s_directions", name, suffix);
	int64_t perm[4] = {1, 0, 2, 3}, hd[3] = {0, -1, H};
	emit_shaped(m, tr, "Transpose", both, tr, "perm", perm, 4);
	snprintf(buf, sizeof buf, "%s.%s_reshape", name, suffix);
	emit_shaped(m, buf, "Reshape", tr, out, "shape", hd, 3);
	int64_t hdims[3] = {D, batch, H};
	set_info(m, out, 3, hdims, 0, NULL);
}

/* RNN, GRU and LSTM as the planner's op of the same name (see
 * graph/ops/rnn.c for what it computes): layout 0, the default
 * activations, no clip, peepholes, input_forget or sequence lengths (or
 * lengths all the sequence's); initial states (initial_h, LSTM's
 * initial_c) given or zeros (then left out; a B of zeros, a const, is
 * added when the states are given without one). Y_h, when read, is the
 * last step of each direction of Y, and Y_c that of a second LSTM of the
 * same inputs giving its cells (cell_states) (emit_last_state). 0, or -1
 * with *why */
static int import_recurrent(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const char *t = n->op_type;
	int kind = !strcmp(t, "RNN") ? 0 : !strcmp(t, "GRU") ? 1 : 2;
	int64_t G = kind == 0 ? 1 : kind == 1 ? 3 : 4;
	tinfo *x = known(m, n->input[0]), *w = n->n_input > 2 ? known(m, n->input[1]) : NULL,
	      *r = n->n_input > 2 ? known(m, n->input[2]) : NULL;
	*why = "its input's, W's or R's shape is not known as [sequence, batch, input], "
	       "[directions, gates x hidden, input], [directions, gates x hidden, hidden]";
	if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3 || w->dims[1] % G ||
	    w->dims[1] < G || w->dims[0] < 1 || w->dims[0] > 2)
		return -1;
	int64_t D = w->dims[0], H = w->dims[1] / G, S = x->dims[0];
	char dir[32];
	attr_str(n, "direction", dir, sizeof dir);
	*why = "its direction must be forward, reverse or bidirectional (with W of 2 "
	       "directions), and hidden_size W's";
	if ((dir[0] && strcmp(dir, "forward") && strcmp(dir, "reverse") &&
	     strcmp(dir, "bidirectional")) ||
	    (D == 2) != !strcmp(dir, "bidirectional") || attr_i(n, "hidden_size", H) != H)
		return -1;
	*why = "only layout 0, the default activations, no clip, no input_forget are supported";
	if (attr_i(n, "layout", 0) != 0 || attr(n, "clip") || attr_i(n, "input_forget", 0) ||
	    attr(n, "activation_alpha") || attr(n, "activation_beta") ||
	    !default_activations(n, kind, (int)D))
		return -1;
	*why = "sequence_lens other than the whole sequence and peepholes are not supported";
	if (n->n_input > 4 && !zeros(m, n->input[4], 0) && !all_values(m, n->input[4], (double)S))
		return -1;
	if (n->n_input > 7 && !zeros(m, n->input[7], 0))
		return -1;
	/* the initial states given (not zeros) */
	const char *h0 = n->n_input > 5 && !zeros(m, n->input[5], 0) ? n->input[5] : NULL;
	const char *c0 =
	    kind == 2 && n->n_input > 6 && !zeros(m, n->input[6], 0) ? n->input[6] : NULL;
	*why = "its initial_c is given but its initial_h is zeros (give both, as nn.LSTM does)";
	if (c0 && !h0)
		return -1;
	int64_t sdims[3] = {D, x->dims[1], H};
	tinfo *hs = h0 ? known(m, h0) : NULL, *cs = c0 ? known(m, c0) : NULL;
	*why = "its initial states' shapes are not [directions, batch, hidden]";
	if ((h0 && (!hs || hs->rank != 3 || memcmp(hs->dims, sdims, sizeof sdims))) ||
	    (c0 && (!cs || cs->rank != 3 || memcmp(cs->dims, sdims, sizeof sdims))))
		return -1;
	const char *bias = n->n_input > 3 && n->input[3][0] ? n->input[3] : NULL;
	char zb[600];
	if (h0 && !bias) { /* B before the states: zeros (a const, not a weight) */
		snprintf(zb, sizeof zb, "%s.B", name);
		*why = "its added bias's name is taken";
		if (cJSON_GetObjectItem(m->tensors, zb))
			return -1;
		cJSON *c = cJSON_CreateObject();
		int64_t bd[2] = {D, 2 * G * H};
		pl_json_add(c, "shape", int_list(bd, 2));
		cJSON_AddStringToObject(c, "role", "const");
		const_values(c, NULL, bd[0] * bd[1], 0);
		pl_json_add(m->tensors, zb, c);
		bias = zb;
	}
	int yc = kind == 2 && n->n_output > 2 && onnx_read(m, n->output[2]);
	char yname[600];
	const char *y = n->output[0][0] ? n->output[0] : yname;
	snprintf(yname, sizeof yname, "%s.Y", name);
	int64_t ydims[4] = {S, D, x->dims[1], H};
	for (int cells = 0; cells <= yc; cells++) {
		char cname[600], opname[600];
		snprintf(cname, sizeof cname, "%s.Y_cells", name);
		snprintf(opname, sizeof opname, "%s.cells", name);
		cJSON *o = add_op(m, cells ? opname : name, t);
		for (int k = 0; k < 3; k++)
			io(m, o, "inputs", n->input[k]);
		if (bias)
			io(m, o, "inputs", bias);
		if (h0)
			io(m, o, "inputs", h0);
		if (c0)
			io(m, o, "inputs", c0);
		io(m, o, "outputs", cells ? cname : y);
		cJSON *at = cJSON_AddObjectToObject(o, "attrs");
		cJSON_AddStringToObject(at, "direction", dir[0] ? dir : "forward");
		if (kind == 1)
			cJSON_AddNumberToObject(at, "linear_before_reset",
			                        attr_i(n, "linear_before_reset", 0) != 0);
		if (cells)
			cJSON_AddNumberToObject(at, "cell_states", 1);
		set_info(m, kept(m, cells ? cname : y), 4, ydims, 0, NULL);
		if (cells)
			emit_last_state(m, name, "Y_c", cname, D, S, !strcmp(dir, "reverse"), H,
			                x->dims[1], n->output[2]);
	}
	if (n->n_output > 1 && onnx_read(m, n->output[1]))
		emit_last_state(m, name, "Y_h", y, D, S, !strcmp(dir, "reverse"), H, x->dims[1],
		                n->output[1]);
	return 0;
}

/* nn.EmbeddingBag as torch's exporter writes it: a Loop over the bags whose
 * body slices bag i out of the flattened ids (from starts[i] to ends[i],
 * outer constants), gathers its rows of the weight and reduces them (mean,
 * sum or max over axis 0); no loop-carried value. Bags all of one length L,
 * the i-th starting at i L (a 2-D input's, or offsets of equal steps), are
 * a Reshape of the ids to [bags, L], a Gather and a Reduce over axis 1.
 * 0, or -1 when the Loop is not such a bag loop. */
static int import_embedding_bag(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const Onnx__AttributeProto *b = attr(n, "body");
	const Onnx__GraphProto *g = b ? b->g : NULL;
	double trips;
	if (!g || n->n_input != 2 || n->n_output != 1 || g->n_input != 2 || g->n_output != 2 ||
	    !g->input[0]->name || !g->output[1]->name || scalar_of(m, n->input[0], &trips) ||
	    !(trips >= 1) || trips > (double)MAX_VALUES)
		return -1;
	const char *iter = g->input[0]->name;
	const Onnx__NodeProto *slice = NULL, *gather = NULL, *reduce = NULL;
	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *q = g->node[k];
		const char *t = q->op_type ? q->op_type : "";
		if (!strcmp(t, "Slice") && !slice)
			slice = q;
		else if (!strcmp(t, "Gather") && q->n_input == 2 && !strcmp(t, "Gather") &&
		         strcmp(q->input[1], iter) && !gather)
			gather = q;
		else if ((!strcmp(t, "ReduceMean") || !strcmp(t, "ReduceSum") ||
		          !strcmp(t, "ReduceMax")) &&
		         !reduce)
			reduce = q;
		else if (strcmp(t, "Gather") && strcmp(t, "Unsqueeze") && strcmp(t, "Constant") &&
		         strcmp(t, "Cast") && strcmp(t, "Identity"))
			return -1; /* anything else (per_sample_weights' Mul, ...) */
	}
	if (!slice || !gather || !reduce || slice->n_input < 3 || slice->n_output < 1 ||
	    gather->n_output < 1 || reduce->n_output < 1 || reduce->n_input < 1 ||
	    strcmp(gather->input[1], slice->output[0]) ||
	    strcmp(reduce->input[0], gather->output[0]) ||
	    strcmp(g->output[1]->name, reduce->output[0]) || attr_i(gather, "axis", 0) != 0 ||
	    attr_i(reduce, "keepdims", 1) != 0)
		return -1;
	/* the body's Constants known (ReduceSum's axes from opset 13 are one) */
	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *q = g->node[k];
		const Onnx__AttributeProto *v = attr(q, "value");
		if (q->op_type && !strcmp(q->op_type, "Constant") && q->n_output == 1 && v && v->t)
			set_tensor(m, q->output[0], v->t, MAX_VALUES);
	}
	const Onnx__AttributeProto *ax = attr(reduce, "axes");
	tinfo *axv = reduce->n_input > 1 ? valued(m, reduce->input[1]) : NULL;
	if (ax ? ax->n_ints != 1 || ax->ints[0] != 0
	       : !axv || axv->nval != 1 || axv->val[0] != 0 || reduce->n_input > 2)
		return -1;
	/* the bag bounds: Unsqueeze(Gather(outer, iter)) of starts and ends */
	const tinfo *bound[2] = {NULL, NULL};
	for (int e = 0; e < 2; e++) {
		const char *u = slice->input[1 + e];
		for (size_t k = 0; k < g->n_node && !bound[e]; k++) {
			const Onnx__NodeProto *q = g->node[k];
			if (!q->op_type || strcmp(q->op_type, "Unsqueeze") || q->n_output < 1 ||
			    strcmp(q->output[0], u) || q->n_input < 1)
				continue;
			for (size_t j = 0; j < g->n_node; j++) {
				const Onnx__NodeProto *r = g->node[j];
				if (r->op_type && !strcmp(r->op_type, "Gather") &&
				    r->n_input == 2 && r->n_output >= 1 &&
				    !strcmp(r->output[0], q->input[0]) &&
				    !strcmp(r->input[1], iter))
					bound[e] = valued(m, r->input[0]);
			}
		}
	}
	tinfo *ids = known(m, slice->input[0]), *w = known(m, gather->input[0]);
	int64_t M = (int64_t)trips;
	if (!bound[0] || !bound[1] || bound[0]->nval < M || bound[1]->nval < M || !ids ||
	    ids->rank != 1 || !w || w->rank != 2)
		return -1;
	int64_t L = to_i64(bound[1]->val[0] - bound[0]->val[0]);
	if (L < 1 || ids->dims[0] != M * L)
		return -1;
	for (int64_t i = 0; i < M; i++)
		if (to_i64(bound[0]->val[i]) != i * L || to_i64(bound[1]->val[i]) != (i + 1) * L)
			return -1;
	char bags[600], rows[600];
	snprintf(bags, sizeof bags, "%s.bags", name);
	snprintf(rows, sizeof rows, "%s.rows", name);
	int64_t shape[2] = {M, L};
	emit_shaped(m, bags, "Reshape", slice->input[0], bags, "shape", shape, 2);
	cJSON *o = add_op(m, rows, "Gather");
	io(m, o, "inputs", gather->input[0]);
	io(m, o, "inputs", bags);
	io(m, o, "outputs", rows);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", 0);
	o = add_op(m, name, reduce->op_type);
	io(m, o, "inputs", rows);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	int64_t one = 1;
	pl_json_add(at, "axes", int_list(&one, 1));
	cJSON_AddNumberToObject(at, "keepdims", 0);
	int64_t dims[3] = {M, L, w->dims[1]};
	set_info(m, kept(m, bags), 2, shape, 0, NULL);
	set_info(m, kept(m, rows), 3, dims, 0, NULL);
	dims[1] = w->dims[1];
	set_info(m, n->output[0], 2, dims, 0, NULL);
	return 0;
}

/* The index ops as the planner's of the same name (graph/ops/index.c):
 * ArgMax and ArgMin (axis, keepdims, select_last_index), OneHot (its depth
 * and values constants, as attributes; its output of the values' type),
 * GatherElements, and TopK with its K a constant: the planner's TopK gives
 * the indices (output 1), and the values (output 0), when read, are
 * GatherElements of them, through which the gradient flows. 0, or -1 with
 * *why */
static int import_index(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const char *t = n->op_type;
	tinfo *x = n->n_input > 0 ? known(m, n->input[0]) : NULL;
	*why = "its input's shape is not known";
	if (!x || x->rank < 1)
		return -1;
	int64_t dims[16];
	if (!strcmp(t, "ArgMax") || !strcmp(t, "ArgMin")) {
		int64_t ax = axis_of(attr_i(n, "axis", 0), x->rank);
		int keep = attr_i(n, "keepdims", 1) != 0;
		*why = "its axis is out of range";
		if (ax < 0 || ax >= x->rank)
			return -1;
		cJSON *o = add_op(m, name, t);
		io(m, o, "inputs", n->input[0]);
		io(m, o, "outputs", n->output[0]);
		cJSON *at = cJSON_AddObjectToObject(o, "attrs");
		cJSON_AddNumberToObject(at, "axis", (double)ax);
		cJSON_AddNumberToObject(at, "keepdims", keep);
		cJSON_AddNumberToObject(at, "select_last_index",
		                        attr_i(n, "select_last_index", 0) != 0);
		int r = 0;
		for (int d = 0; d < x->rank; d++)
			if (d != ax || keep)
				dims[r++] = d == ax ? 1 : x->dims[d];
		set_info(m, n->output[0], r, dims, 0, NULL);
		return 0;
	}
	if (!strcmp(t, "OneHot")) {
		double depth;
		tinfo *v = n->n_input > 2 ? valued(m, n->input[2]) : NULL;
		*why = "its depth must be a constant from 1 to 2^31 and its values a constant "
		       "[off_value, on_value]";
		if (n->n_input < 3 || scalar_of(m, n->input[1], &depth) || !(depth >= 1) ||
		    depth > 2147483648.0 || !v || v->nval != 2 || !isfinite(v->val[0]) ||
		    !isfinite(v->val[1]) || x->rank >= 8)
			return -1;
		int64_t ax = attr_i(n, "axis", -1);
		ax = ax < 0 ? ax + x->rank + 1 : ax;
		*why = "its axis is out of range";
		if (ax < 0 || ax > x->rank)
			return -1;
		cJSON *o = add_op(m, name, "OneHot");
		io(m, o, "inputs", n->input[0]);
		io(m, o, "outputs", n->output[0]);
		cJSON *at = cJSON_AddObjectToObject(o, "attrs");
		cJSON_AddNumberToObject(at, "axis", (double)ax);
		cJSON_AddNumberToObject(at, "depth", (double)(int64_t)depth);
		cJSON *vals = cJSON_AddArrayToObject(at, "values");
		cJSON_AddItemToArray(vals, cJSON_CreateNumber(v->val[0]));
		cJSON_AddItemToArray(vals, cJSON_CreateNumber(v->val[1]));
		const char *dt = v->elem ? dtype_name(v->elem) : NULL;
		cJSON_AddStringToObject(at, "dtype", dt ? dt : "int64");
		for (int d = 0, o2 = 0; o2 <= x->rank; o2++)
			dims[o2] = o2 == ax ? (int64_t)depth : x->dims[d++];
		set_info(m, n->output[0], x->rank + 1, dims, 0, NULL);
		return 0;
	}
	if (!strcmp(t, "GatherElements")) {
		int64_t ax = axis_of(attr_i(n, "axis", 0), x->rank);
		tinfo *ix = n->n_input > 1 ? known(m, n->input[1]) : NULL;
		*why = "its indices' shape is not known, or its axis is out of range";
		if (!ix || ix->rank != x->rank || ax < 0 || ax >= x->rank)
			return -1;
		cJSON *o = add_op(m, name, "GatherElements");
		io(m, o, "inputs", n->input[0]);
		operand(m, o, n->input[1]);
		io(m, o, "outputs", n->output[0]);
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", (double)ax);
		set_info(m, n->output[0], ix->rank, ix->dims, 0, NULL);
		return 0;
	}
	/* TopK */
	double k;
	int64_t ax = axis_of(attr_i(n, "axis", -1), x->rank);
	*why = "its K must be a constant from 1 to its axis's size, and its axis in range";
	if (n->n_input < 2 || ax < 0 || ax >= x->rank || scalar_of(m, n->input[1], &k) ||
	    !(k >= 1) || k > (double)x->dims[ax])
		return -1;
	char iname[600];
	const char *idx = n->n_output > 1 && n->output[1][0] ? n->output[1] : iname;
	snprintf(iname, sizeof iname, "%s.indices", name);
	char tname[600];
	snprintf(tname, sizeof tname, "%s.indices", name);
	cJSON *o = add_op(m, n->n_output > 0 && onnx_read(m, n->output[0]) ? tname : name, "TopK");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", idx);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", (double)ax);
	cJSON_AddNumberToObject(at, "k", (double)(int64_t)k);
	cJSON_AddNumberToObject(at, "largest", attr_i(n, "largest", 1) != 0);
	cJSON_AddNumberToObject(at, "sorted", attr_i(n, "sorted", 1) != 0);
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[ax] = (int64_t)k;
	set_info(m, kept(m, idx), x->rank, dims, 0, NULL);
	if (n->n_output < 1 || !onnx_read(m, n->output[0]))
		return 0;
	cJSON *g = add_op(m, name, "GatherElements");
	io(m, g, "inputs", n->input[0]);
	io(m, g, "inputs", idx);
	io(m, g, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(g, "attrs"), "axis", (double)ax);
	set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

static void emit_reshape(imp *m, const char *opname, const char *in, const int64_t *dims, int rank,
                         const char *out);

/* Tile (torch's repeat) of x by constant repeats: x with a dimension of 1
 * before each repeated one (a Reshape), that expanded to the repeats (an
 * Expand), the pairs merged (a Reshape): each repeated dimension the whole
 * of it `repeats` times over. 0, or -1 when the shape or the repeats are
 * not known */
static int import_tile(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]), *rp = n->n_input > 1 ? valued(m, n->input[1]) : NULL;
	if (!x || !rp || rp->rank != 1 || rp->nval != x->rank || x->rank > 8)
		return -1;
	int64_t split[16], grown[16], out[16];
	int k = 0;
	for (int d = 0; d < x->rank; d++) {
		int64_t r = to_i64(rp->val[d]);
		if (r < 1 || r > 1000000)
			return -1;
		if (r > 1) {
			split[k] = 1;
			grown[k++] = r;
		}
		split[k] = x->dims[d];
		grown[k++] = x->dims[d];
		if (__builtin_mul_overflow(r, x->dims[d], &out[d]) || out[d] > (INT64_C(1) << 50))
			return -1;
	}
	char a[600], b[600];
	snprintf(a, sizeof a, "%s.split", name);
	snprintf(b, sizeof b, "%s.grown", name);
	emit_reshape(m, a, n->input[0], split, k, a);
	emit_shaped(m, b, "Expand", a, b, "shape", grown, k);
	emit_reshape(m, name, b, out, x->rank, n->output[0]);
	set_info(m, n->output[0], x->rank, out, 0, NULL);
	return 0;
}

/* DepthToSpace (PixelShuffle: blocksize r, mode DCR or CRD) and
 * SpaceToDepth of x [N, C, H, W]: a Reshape, a Transpose and a Reshape, as
 * ONNX defines them. 0, or -1 when the shape is not known or r does not
 * divide it */
static int import_depth_space(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]);
	int64_t r = attr_i(n, "blocksize", 0);
	char mode[8];
	attr_str(n, "mode", mode, sizeof mode);
	int to_space = !strcmp(n->op_type, "DepthToSpace"), crd = !strcmp(mode, "CRD");
	if (!x || x->rank != 4 || r < 1 || r > 4096 ||
	    (to_space ? x->dims[1] % (r * r) : x->dims[2] % r || x->dims[3] % r))
		return -1;
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t six[6], out[4], perm[6], big = INT64_C(1) << 40;
	if (H > big || W > big || C > big) /* r (at most 4096) times them stays exact */
		return -1;
	if (to_space) {
		int64_t c = C / (r * r);
		int64_t dcr[6] = {N, r, r, c, H, W}, crd6[6] = {N, c, r, r, H, W};
		int64_t pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
		memcpy(six, crd ? crd6 : dcr, sizeof six);
		memcpy(perm, crd ? pc : pd, sizeof perm);
		out[0] = N, out[1] = c, out[2] = H * r, out[3] = W * r;
	} else {
		int64_t s6[6] = {N, C, H / r, r, W / r, r}, p6[6] = {0, 3, 5, 1, 2, 4};
		memcpy(six, s6, sizeof six);
		memcpy(perm, p6, sizeof perm);
		out[0] = N, out[1] = C * r * r, out[2] = H / r, out[3] = W / r;
	}
	char a[600], b[600];
	snprintf(a, sizeof a, "%s.blocks", name);
	snprintf(b, sizeof b, "%s.moved", name);
	emit_reshape(m, a, n->input[0], six, 6, a);
	emit_shaped(m, b, "Transpose", a, b, "perm", perm, 6);
	emit_reshape(m, name, b, out, 4, n->output[0]);
	set_info(m, n->output[0], 4, out, 0, NULL);
	return 0;
}

/* A Pad whose pads are all known and 0 (Swin pads its windows' input to a
 * multiple of the window, by nothing where the size is one) */
static int pads_nothing(imp *m, const Onnx__NodeProto *n)
{
	int64_t p[32];
	int np = ints_of(m, n, "pads", 1, p, 32);
	tinfo *x = n->n_input > 0 ? known(m, n->input[0]) : NULL;
	if (!x || np != 2 * x->rank)
		return 0;
	for (int i = 0; i < np; i++)
		if (p[i])
			return 0;
	return 1;
}

/* A Pad of zeros on the spatial dimensions whose one reader is a Conv or an
 * AveragePool (torch exports AvgPool2d(count_include_pad=True) so) becomes
 * that op's padding: 0, or -1 when it is not such a Pad */
static int fold_pad(imp *m, const Onnx__NodeProto *n)
{
	tinfo *x = n->n_input > 0 ? known(m, n->input[0]) : NULL;
	const Onnx__AttributeProto *mode = attr(n, "mode");
	const Onnx__AttributeProto *val = attr(n, "value");
	double v = 0;
	int64_t p[16];
	if (!x || x->rank < 3 || x->rank > 5 ||
	    (mode && mode->has_s && (mode->s.len != 8 || memcmp(mode->s.data, "constant", 8))))
		return -1;
	if ((n->n_input > 2 && n->input[2][0] && (scalar_of(m, n->input[2], &v) || v != 0)) ||
	    (val && val->has_f && val->f != 0))
		return -1;
	int r = x->rank, who;
	if (ints_of(m, n, "pads", 1, p, 16) != 2 * r || p[0] || p[1] || p[r] || p[r + 1] ||
	    consumers(m, n->output[0], &who, 1) != 1)
		return -1;
	const char *c = m->g->node[who]->op_type;
	if (!c || (strcmp(c, "Conv") && strcmp(c, "AveragePool")) ||
	    strcmp(m->g->node[who]->input[0], n->output[0]))
		return -1;
	struct padded *d = &m->padded[m->npadded];
	d->out = n->output[0];
	d->in = n->input[0];
	d->nsp = r - 2;
	for (int i = 0; i < r - 2; i++) {
		if (p[2 + i] < 0 || p[2 + i] > (1 << 20) || p[r + 2 + i] < 0 ||
		    p[r + 2 + i] > (1 << 20))
			return -1;
		d->p[i] = p[2 + i];
		d->p[r - 2 + i] = p[r + 2 + i];
	}
	m->npadded++;
	return 0;
}

/* Any other Pad: the planner's Pad (constant, reflect or edge; pads an
 * attribute before opset 11, then input 1, the constant input 2 or the
 * value attribute). 0, or -1 with *why */
static int import_pad(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	tinfo *x = known(m, n->input[0]);
	int64_t p[2 * PL_MAX_RANK];
	*why = "its input's shape is not known";
	if (!x || x->rank > PL_MAX_RANK)
		return -1;
	*why = "its pads are not a constant of two non-negative entries a dimension (negative "
	       "pads crop), or it has axes";
	if (ints_of(m, n, "pads", 1, p, 2 * PL_MAX_RANK) != 2 * x->rank ||
	    (n->n_input > 3 && n->input[3][0]))
		return -1;
	int64_t dims[16];
	for (int d = 0; d < x->rank; d++) {
		if (p[d] < 0 || p[x->rank + d] < 0 || p[d] > (1 << 20) ||
		    p[x->rank + d] > (1 << 20))
			return -1;
		dims[d] = x->dims[d] + p[d] + p[x->rank + d];
	}
	*why = "it pads the batch (dimension 0)";
	if (p[0] || p[x->rank])
		return -1;
	char mode[16];
	attr_str(n, "mode", mode, sizeof mode);
	*why = "mode must be constant, reflect, edge or wrap";
	if (mode[0] && strcmp(mode, "constant") && strcmp(mode, "reflect") &&
	    strcmp(mode, "edge") && strcmp(mode, "wrap"))
		return -1;
	double v = 0;
	const Onnx__AttributeProto *va = attr(n, "value");
	*why = "its constant value is not a known number";
	if (va && va->has_f)
		v = va->f;
	if (n->n_input > 2 && n->input[2][0] && scalar_of(m, n->input[2], &v))
		return -1;
	cJSON *o = add_op(m, name, "Pad");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(at, "pads", int_list(p, (size_t)(2 * x->rank)));
	cJSON_AddStringToObject(at, "mode", mode[0] ? mode : "constant");
	cJSON_AddNumberToObject(at, "value", v);
	set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

/* Conv, MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool: the
 * window written out as the model format states it (auto_pad turned into
 * pads, a global pool into a window over the whole input), the output's
 * shape recorded. 0, or -1 with *why */
static int import_window(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const char *t = n->op_type;
	int conv = !strcmp(t, "Conv"), global = !strncmp(t, "Global", 6),
	    maxp = strstr(t, "MaxPool") != NULL;
	const char *xname = n->n_input > 0 ? n->input[0] : "";
	const struct padded *pad = NULL;
	for (int i = 0; i < m->npadded && !pad; i++)
		if (!strcmp(m->padded[i].out, xname))
			pad = &m->padded[i];
	if (pad)
		xname = pad->in;
	tinfo *x = xname[0] ? known(m, xname) : NULL;
	tinfo *w = conv && n->n_input > 1 ? known(m, n->input[1]) : NULL;
	*why = "its input's shape is not known as [batch, channels, 1 to 3 spatial dimensions]";
	if (!x || x->rank < 3 || x->rank > 5)
		return -1;
	int nsp = x->rank - 2;
	*why = "its weight's shape is not known as [output channels, input channels of a group, "
	       "the kernel]";
	if (conv && (!w || w->rank != x->rank))
		return -1;
	int64_t k[3], s[3], d[3], p[6], dims[5] = {x->dims[0], conv ? w->dims[0] : x->dims[1]};
	*why = "kernel_shape, strides, dilations or pads has the wrong count or an out-of-range "
	       "value";
	if (conv || global)
		for (int i = 0; i < nsp; i++)
			k[i] = conv ? w->dims[2 + i] : x->dims[2 + i];
	else if (window_ints(m, n, "kernel_shape", nsp, 0, 1, k))
		return -1;
	if (window_ints(m, n, "strides", nsp, 1, 1, s) ||
	    window_ints(m, n, "dilations", nsp, 1, 1, d) ||
	    window_ints(m, n, "pads", 2 * nsp, 0, 0, p))
		return -1;
	int include_pad = (int)attr_i(n, "count_include_pad", 0);
	if (pad) { /* a Pad of zeros before: its zeros count in an average */
		*why = "a Pad before it with pads of its own that do not count in its average";
		if (!conv && !include_pad)
			for (int i = 0; i < 2 * nsp; i++)
				if (p[i])
					return -1;
		for (int i = 0; i < 2 * nsp; i++)
			p[i] += pad->p[i];
		include_pad = 1;
	}
	char mode[16];
	attr_str(n, "auto_pad", mode, sizeof mode);
	if (!mode[0])
		snprintf(mode, sizeof mode, "NOTSET");
	int same = !strncmp(mode, "SAME_", 5);
	*why = "auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER";
	if (!same && strcmp(mode, "NOTSET") && strcmp(mode, "VALID"))
		return -1;
	for (int i = 0; i < nsp; i++) {
		int64_t span = (k[i] - 1) * d[i] + 1, in = x->dims[2 + i];
		if (same) { /* the output keeps ceil(in / stride) positions */
			int64_t out = (in + s[i] - 1) / s[i], total = (out - 1) * s[i] + span - in;
			total = total < 0 ? 0 : total;
			p[i] = !strcmp(mode, "SAME_LOWER") ? (total + 1) / 2 : total / 2;
			p[nsp + i] = total - p[i];
		} else if (!strcmp(mode, "VALID")) {
			p[i] = p[nsp + i] = 0;
		}
		int64_t room = in + p[i] + p[nsp + i] - span;
		*why = "its window is larger than the padded input";
		if (room < 0)
			return -1;
		dims[2 + i] = room / s[i] + 1;
		if (!conv && attr_i(n, "ceil_mode", 0) && room % s[i] &&
		    dims[2 + i] * s[i] < in + p[i])
			dims[2 + i]++;
	}
	*why = "its Indices output is not supported";
	if (maxp && n->n_output > 1 && n->output[1][0])
		return -1;
	cJSON *o = add_op(m, name, conv ? "Conv" : maxp ? "MaxPool" : "AveragePool");
	io(m, o, "inputs", xname);
	for (size_t i = 1; i < n->n_input && i < (conv ? 3u : 1u); i++)
		if (n->input[i][0])
			io(m, o, "inputs", n->input[i]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	if (!conv)
		pl_json_add(at, "kernel_shape", int_list(k, (size_t)nsp));
	pl_json_add(at, "strides", int_list(s, (size_t)nsp));
	pl_json_add(at, "pads", int_list(p, (size_t)(2 * nsp)));
	pl_json_add(at, "dilations", int_list(d, (size_t)nsp));
	if (conv)
		cJSON_AddNumberToObject(at, "group", (double)attr_i(n, "group", 1));
	else
		cJSON_AddNumberToObject(at, "ceil_mode", (double)attr_i(n, "ceil_mode", 0));
	if (!conv && !maxp)
		cJSON_AddNumberToObject(at, "count_include_pad", include_pad);
	set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

/* Resize (opset 10 on) and Upsample (before): the spatial dimensions to the
 * sizes, or the scales times the input's; nearest, linear or cubic, in the
 * coordinate modes the planner's Resize has. 0, or -1 with *why. */
static int import_resize(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	tinfo *x = known(m, n->input[0]);
	int up = !strcmp(n->op_type, "Upsample"), old = up || m->opset < 11;
	char mode[32], coord[32], near[32];
	attr_str(n, "mode", mode, sizeof mode);
	attr_str(n, "coordinate_transformation_mode", coord, sizeof coord);
	attr_str(n, "nearest_mode", near, sizeof near);
	if (!mode[0])
		snprintf(mode, sizeof mode, "nearest");
	if (!strcmp(mode, "bilinear") || !strcmp(mode, "trilinear")) /* Upsample-7's names */
		snprintf(mode, sizeof mode, "linear");
	/* before opset 11: x_in = x_out / scale, nearest rounding down */
	if (!coord[0])
		snprintf(coord, sizeof coord, old ? "asymmetric" : "half_pixel");
	if (!near[0])
		snprintf(near, sizeof near, old ? "floor" : "round_prefer_floor");
	*why = "its input's shape is not known, or it is not 3- to 5-d";
	if (!x || x->rank < 3 || x->rank > 5)
		return -1;
	*why = "antialias, axes and the tf_* coordinate modes are not supported";
	int ok_mode = !strcmp(mode, "nearest") || !strcmp(mode, "linear") || !strcmp(mode, "cubic");
	int ok_coord = 0, ok_near = 0;
	for (int v = 0; pl_resize_coord_name(v); v++)
		ok_coord |= !strcmp(coord, pl_resize_coord_name(v));
	for (int v = 0; pl_resize_nearest_name(v); v++)
		ok_near |= !strcmp(near, pl_resize_nearest_name(v));
	int64_t exclude = attr_i(n, "exclude_outside", 0);
	if (!ok_mode || !ok_coord || !ok_near || (exclude != 0 && exclude != 1) ||
	    attr_i(n, "antialias", 0) || attr(n, "axes"))
		return -1;
	/* the sizes (input 3), or the scales (input 2 from opset 11, 1 before,
	 * Upsample-7's attribute) */
	int64_t dims[16];
	double sc[16];
	int r = x->rank, ns = 0;
	tinfo *sz = !old && n->n_input > 3 && n->input[3][0] ? valued(m, n->input[3]) : NULL;
	size_t si = old ? 1 : 2;
	tinfo *st = n->n_input > si && n->input[si][0] ? valued(m, n->input[si]) : NULL;
	const Onnx__AttributeProto *sa = attr(n, "scales");
	*why = "its sizes or scales are not constants the importer can fold, or they change the "
	       "batch or the channels, or a scale gives a fraction of an element";
	if (sz && sz->nval == r) {
		for (int d = 0; d < r; d++)
			dims[d] = to_i64(sz->val[d]);
	} else {
		if (st && st->nval == r)
			for (int d = 0; d < r; d++)
				sc[ns++] = st->val[d];
		else if (sa && (int)sa->n_floats == r)
			for (int d = 0; d < r; d++)
				sc[ns++] = sa->floats[d];
		if (ns != r)
			return -1;
		for (int d = 0; d < r; d++) {
			double o = (double)x->dims[d] * sc[d];
			if (!(sc[d] > 0) || o != floor(o) || o > (double)BIG)
				return -1;
			dims[d] = (int64_t)o;
		}
	}
	if (dims[0] != x->dims[0] || dims[1] != x->dims[1])
		return -1;
	for (int d = 2; d < r; d++)
		if (dims[d] < 1)
			return -1;
	cJSON *o = add_op(m, name, "Resize");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(at, "shape", int_list(dims + 2, (size_t)(r - 2)));
	cJSON_AddStringToObject(at, "mode", mode);
	cJSON_AddStringToObject(at, "coordinate_transformation_mode", coord);
	cJSON_AddStringToObject(at, "nearest_mode", near);
	if (!strcmp(mode, "cubic")) {
		const Onnx__AttributeProto *ca = attr(n, "cubic_coeff_a");
		cJSON_AddNumberToObject(at, "cubic_coeff_a", ca && ca->has_f ? ca->f : -0.75);
		cJSON_AddNumberToObject(at, "exclude_outside", (double)exclude);
	}
	set_info(m, n->output[0], r, dims, 0, NULL);
	return 0;
}

/* Flatten: a Reshape to [the dimensions before axis, those from it] */
static int import_flatten(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input > 0 ? known(m, n->input[0]) : NULL;
	if (!x)
		return -1;
	int64_t ax = axis_of(attr_i(n, "axis", 1), x->rank), two[2] = {1, 1};
	if (ax < 0 || ax > x->rank)
		return -1;
	for (int d = 0; d < x->rank; d++)
		if (__builtin_mul_overflow(two[d >= ax], x->dims[d], &two[d >= ax]) ||
		    two[d >= ax] > BIG)
			return -1;
	cJSON *o = add_op(m, name, "Reshape");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", n->output[0]);
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "shape", int_list(two, 2));
	set_info(m, n->output[0], 2, two, 0, NULL);
	return 0;
}

/* whether every value of tensor name is known and equals v */
static int all_values(imp *m, const char *name, double v)
{
	tinfo *t = valued(m, name);
	for (int i = 0; t && i < t->nval; i++)
		if (t->val[i] != v)
			return 0;
	return t != NULL && t->nval > 0;
}

/* A reduction op `opname` of `type` reading in, writing out, over the na
 * axes (none: all) */
static void emit_reduce(imp *m, const char *opname, const char *type, const char *in,
                        const char *out, const int64_t *ax, int na, int keepdims)
{
	cJSON *o = add_op(m, opname, type);
	io(m, o, "inputs", in);
	io(m, o, "outputs", out);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	if (na > 0)
		pl_json_add(at, "axes", int_list(ax, (size_t)na));
	cJSON_AddNumberToObject(at, "keepdims", keepdims);
}

/* An op `opname` of `type` reading a (and b), writing out */
static void emit_binary(imp *m, const char *opname, const char *type, const char *a, const char *b,
                        const char *out)
{
	cJSON *o = add_op(m, opname, type);
	io(m, o, "inputs", a);
	if (b)
		io(m, o, "inputs", b);
	io(m, o, "outputs", out);
}

static void emit_unary_op(imp *m, const char *opname, const char *type, const char *a,
                          const char *out)
{
	emit_binary(m, opname, type, a, NULL, out);
}

/* A Reshape op `opname` of `in` to dims (rank entries) into `out` */
static void emit_reshape(imp *m, const char *opname, const char *in, const int64_t *dims, int rank,
                         const char *out)
{
	cJSON *o = add_op(m, opname, "Reshape");
	operand(m, o, in);
	io(m, o, "outputs", out);
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "shape", int_list(dims, (size_t)rank));
}

/* A LayerNormalization `name` of x (shape dims, rank) over its dimensions
 * from `axis` on, with a constant scale (no affine parameters of its own),
 * into out. -1 when the scale's name is taken. */
static int emit_plain_norm(imp *m, const char *name, const char *x, const int64_t *dims, int rank,
                           int axis, double eps, const char *out)
{
	char sc[600];
	snprintf(sc, sizeof sc, "%s.scale", name);
	if (cJSON_GetObjectItem(m->tensors, sc))
		return -1;
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", int_list(dims + axis, (size_t)(rank - axis)));
	cJSON_AddStringToObject(t, "role", "const");
	int64_t ones = 1;
	for (int d = axis; d < rank; d++)
		ones = count_mul(ones, dims[d]); /* past MAX_VALUES: none written */
	const_values(t, NULL, ones, 1);
	pl_json_add(m->tensors, sc, t);
	cJSON *o = add_op(m, name, "LayerNormalization");
	io(m, o, "inputs", x);
	io(m, o, "inputs", sc);
	io(m, o, "outputs", out);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", axis);
	cJSON_AddNumberToObject(at, "epsilon", eps);
	return 0;
}

/* from * scale + bias into out, scale and bias [c] reshaped to [c, 1...]
 * against dimension 1 of a tensor of `rank` dimensions (ops named after
 * `name`) */
static void emit_channel_affine(imp *m, const char *name, const char *from, const char *scale,
                                const char *bias, int64_t c, int rank, const char *out)
{
	int64_t cshape[PL_MAX_RANK];
	cshape[0] = c;
	for (int d = 1; d < rank - 1; d++)
		cshape[d] = 1;
	static const char *const part[2] = {"scale", "bias"}, *const type[2] = {"Mul", "Add"};
	char scaled[600];
	snprintf(scaled, sizeof scaled, "%s.scaled", name);
	const char *in[2] = {from, scaled}, *to[2] = {scaled, out}, *by[2] = {scale, bias};
	for (int i = 0; i < 2; i++) {
		char pc[600], buf[600];
		snprintf(pc, sizeof pc, "%s.%s_c", name, part[i]);
		snprintf(buf, sizeof buf, "%s.%s_reshape", name, part[i]);
		emit_reshape(m, buf, by[i], cshape, rank - 1, pc);
		snprintf(buf, sizeof buf, "%s.%s", name, type[i]);
		cJSON *o = add_op(m, buf, type[i]);
		io(m, o, "inputs", in[i]);
		io(m, o, "inputs", pc);
		io(m, o, "outputs", to[i]);
	}
}

/* InstanceNormalization of x [N, C, S...] (scale and B [C], epsilon): a
 * LayerNormalization over the dimensions from 2 on with a constant scale,
 * then times the scale and plus B per channel — left out when they are the
 * constant ones and zeros PyTorch's GroupNorm export gives the
 * InstanceNormalization between its Reshapes to [N, groups, -1] and back
 * (its affine parameters follow as a Mul and an Add). -1 when x's shape is
 * not known or under rank 3. */
static int import_instancenorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]);
	if (!x || x->rank < 3 || x->rank > PL_MAX_RANK || n->n_input < 3)
		return -1;
	const Onnx__AttributeProto *ep = attr(n, "epsilon");
	char y[600];
	snprintf(y, sizeof y, "%s.normalized", name);
	/* a model's own weights stay, whatever their values (a fresh one's are
	 * ones and zeros too) */
	int affine = is_param(m, n->input[1]) || is_param(m, n->input[2]) ||
	             !all_values(m, n->input[1], 1) || !all_values(m, n->input[2], 0);
	if (emit_plain_norm(m, name, n->input[0], x->dims, x->rank, 2,
	                    ep && ep->has_f ? ep->f : 1e-5, affine ? y : n->output[0]))
		return -1;
	set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	if (affine)
		emit_channel_affine(m, name, y, n->input[1], n->input[2], x->dims[1], x->rank,
		                    n->output[0]);
	return 0;
}

/* GroupNormalization (opset 18) of x [N, C, S...] in num_groups groups: x
 * reshaped to [N, G, C/G x S], a LayerNormalization over its last
 * dimension with a constant scale, then scale and bias: per group on the
 * grouped tensor where they have G elements (opsets 18 to 20), per channel
 * after reshaping back where they have C (opset 21). -1 when x's shape is
 * not known, under rank 3, the groups do not divide the channels, or the
 * scale has neither count. */
/* ONNX's Attention (opset 23) as the planner's: its 4-D form (Q [b, hq, s,
 * d], K and V [b, hkv, t, .]) or its 3-D form (Q [b, s, hq x d], K and V
 * [b, t, hkv x .], with q_num_heads and kv_num_heads), is_causal and scale;
 * no mask, no past key/value cache, no soft cap, its other outputs unread.
 * NULL, or why not. */
static const char *import_attention(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input < 3 || !n->input[1][0] || !n->input[2][0])
		return "it needs Q, K and V";
	for (size_t k = 3; k < n->n_input; k++)
		if (n->input[k][0])
			return "with an attention mask or a past key/value cache (only Q, K and V "
			       "are read)";
	for (size_t k = 1; k < n->n_output; k++) {
		int who;
		if (n->output[k][0] && consumers(m, n->output[k], &who, 1) > 0)
			return "its present key/value or score outputs are read";
	}
	const Onnx__AttributeProto *cap = attr(n, "softcap"), *sc = attr(n, "scale");
	if (cap && cap->has_f && cap->f != 0)
		return "with a soft cap";
	tinfo *q = known(m, n->input[0]), *k = known(m, n->input[1]), *v = known(m, n->input[2]);
	if (!q || !k || !v)
		return "its inputs' shapes are not known";
	int64_t hq = attr_i(n, "q_num_heads", 0), hkv = attr_i(n, "kv_num_heads", 0);
	if (!((q->rank == 4 && k->rank == 4 && v->rank == 4) ||
	      (q->rank == 3 && k->rank == 3 && v->rank == 3 && hq > 0 && hkv > 0 &&
	       q->dims[2] % hq == 0 && v->dims[2] % hkv == 0)))
		return "Q, K and V must be all 4-D ([batch, heads, sequence, head size]) or all "
		       "3-D ([batch, sequence, heads x head size], with q_num_heads and "
		       "kv_num_heads)";
	cJSON *o = add_op(m, name, "Attention");
	for (int i = 0; i < 3; i++)
		operand(m, o, n->input[i]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_CreateObject();
	cJSON_AddNumberToObject(at, "is_causal", attr_i(n, "is_causal", 0) != 0);
	if (sc && sc->has_f)
		cJSON_AddNumberToObject(at, "scale", sc->f);
	if (q->rank == 3) {
		cJSON_AddNumberToObject(at, "q_num_heads", (double)hq);
		cJSON_AddNumberToObject(at, "kv_num_heads", (double)hkv);
	}
	pl_json_add(o, "attrs", at);
	int64_t dims[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
	if (q->rank == 3 && pl_size_mul(hq, v->dims[2] / hkv, &dims[2])) /* [b, s, hq x dv] */
		return "q_num_heads times V's head size overflows 64 bits";
	set_info(m, n->output[0], q->rank, dims, 0, NULL);
	return NULL;
}

static int import_groupnorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]), *sc = n->n_input > 1 ? known(m, n->input[1]) : NULL;
	int64_t G = attr_i(n, "num_groups", 0);
	if (!x || !sc || n->n_input < 3 || x->rank < 3 || x->rank > PL_MAX_RANK || G < 1 ||
	    x->dims[1] % G)
		return -1;
	int64_t C = x->dims[1], ns = elems(sc), g3[3] = {x->dims[0], G, 1};
	if (ns != C && ns != G)
		return -1;
	for (int d = 1; d < x->rank; d++)
		if (pl_size_mul(g3[2], x->dims[d], &g3[2]))
			return -2; /* the sizes' product overflows 64 bits */
	g3[2] /= G;
	const Onnx__AttributeProto *ep = attr(n, "epsilon");
	char grouped[600], norm3[600], buf[600], back[600];
	snprintf(grouped, sizeof grouped, "%s.grouped", name);
	snprintf(norm3, sizeof norm3, "%s.normalized3", name);
	snprintf(back, sizeof back, "%s.normalized", name);
	snprintf(buf, sizeof buf, "%s.group_reshape", name);
	emit_reshape(m, buf, n->input[0], g3, 3, grouped);
	if (emit_plain_norm(m, name, grouped, g3, 3, 2, ep && ep->has_f ? ep->f : 1e-5, norm3))
		return -1;
	snprintf(buf, sizeof buf, "%s.ungroup_reshape", name);
	if (ns == G && G != C) { /* per group: on the grouped tensor, then back */
		char aff[600];
		snprintf(aff, sizeof aff, "%s.affine3", name);
		emit_channel_affine(m, name, norm3, n->input[1], n->input[2], G, 3, aff);
		emit_reshape(m, buf, aff, x->dims, x->rank, n->output[0]);
	} else {
		emit_reshape(m, buf, norm3, x->dims, x->rank, back);
		emit_channel_affine(m, name, back, n->input[1], n->input[2], C, x->rank,
		                    n->output[0]);
	}
	set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return 0;
}

/* Clip: its bounds, inputs 1 and 2 from opset 11 (attributes before), must be
 * constants */
static int import_clip(imp *m, const Onnx__NodeProto *n, const char *name)
{
	double b[2] = {-INFINITY, INFINITY};
	for (int i = 0; i < 2; i++) {
		const char *in = n->n_input > (size_t)(i + 1) ? n->input[i + 1] : "";
		const Onnx__AttributeProto *a = attr(n, i ? "max" : "min");
		if (in[0] && scalar_of(m, in, &b[i]))
			return -1;
		if (!in[0] && a && a->has_f)
			b[i] = a->f;
	}
	cJSON *o = add_op(m, name, "Clip");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	for (int i = 0; i < 2; i++)
		if (isfinite(b[i]))
			cJSON_AddNumberToObject(at, i ? "max" : "min", b[i]);
	infer(m, n);
	return 0;
}

/* BatchNormalization: in training mode (an export with training=TRAINING:
 * training_mode 1, or below opset 14 the running statistics' outputs) the
 * batch's statistics, the running ones unused; in inference mode the running
 * statistics as constants (no gradient reaches them). Those outputs must be
 * unread. 0, or -1 */
static int import_batchnorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input < 5 || !known(m, n->input[0]))
		return -1;
	for (size_t k = 1; k < n->n_output; k++) {
		int who;
		if (n->output[k][0] && consumers(m, n->output[k], &who, 1))
			return -1;
		for (size_t i = 0; n->output[k][0] && i < m->g->n_output; i++)
			if (!strcmp(m->g->output[i]->name, n->output[k]))
				return -1;
	}
	const Onnx__AttributeProto *tm = attr(n, "training_mode"), *ep = attr(n, "epsilon");
	int train = tm && tm->has_i ? tm->i != 0 : n->n_output > 1;
	cJSON *o = add_op(m, name, "BatchNormalization");
	for (size_t k = 0; k < (train ? 3u : 5u); k++)
		io(m, o, "inputs", n->input[k]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "epsilon", ep && ep->has_f ? ep->f : 1e-5);
	cJSON_AddNumberToObject(at, "training_mode", train);
	for (size_t k = 3; !train && k < 5; k++) {
		cJSON *t = cJSON_GetObjectItem(m->tensors, resolve(m, n->input[k]));
		if (t && cJSON_GetObjectItem(t, "role"))
			cJSON_ReplaceItemInObject(t, "role", cJSON_CreateString("const"));
	}
	infer(m, n);
	return 0;
}

/* An op of node n's first input and output, of its shape: its attrs object */
static cJSON *emit_unary(imp *m, const Onnx__NodeProto *n, const char *name, const char *type)
{
	cJSON *o = add_op(m, name, type);
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", n->output[0]);
	tinfo *x = known(m, n->input[0]);
	if (x)
		set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return cJSON_AddObjectToObject(o, "attrs");
}

/* Dropout node n's ratio (input 1 from opset 12, the attribute before; 0.5
 * when neither): 0, or -1 when it is not a constant */
static int dropout_ratio(const imp *m, const Onnx__NodeProto *n, double *ratio)
{
	const Onnx__AttributeProto *ra = attr(n, "ratio");
	*ratio = ra && ra->has_f ? ra->f : 0.5;
	return n->n_input > 1 && n->input[1][0] ? scalar_of(m, n->input[1], ratio) : 0;
}

/* Whether Dropout node n is kept: --dropout keep or drop says so; by default
 * (auto) when the export trains with it (its training_mode input a constant
 * true, and a ratio above 0; an eval export has none, or false) */
static int keep_dropout(imp *m, const Onnx__NodeProto *n)
{
	const char *d = m->dropout ? m->dropout : "auto";
	if (!strcmp(d, "keep") || !strcmp(d, "drop"))
		return !strcmp(d, "keep");
	double on = 0, ratio;
	return n->n_input > 2 && n->input[2][0] && !scalar_of(m, n->input[2], &on) && on != 0 &&
	       !dropout_ratio(m, n, &ratio) && ratio > 0;
}

/* An op of type whose attrs.shape is node n's input 1, a constant (Reshape's
 * target, Expand's shape); *target (if given) gets it. 0, or -1 when it is
 * not one the importer folded */
static int shape_op(imp *m, const Onnx__NodeProto *n, const char *name, const char *type,
                    tinfo *target)
{
	tinfo *sh = n->n_input > 1 ? valued(m, n->input[1]) : NULL;
	if (!sh || sh->rank != 1 || sh->nval > 16)
		return -1;
	int64_t v[16];
	for (int d = 0; d < sh->nval; d++)
		v[d] = to_i64(sh->val[d]);
	cJSON *o = add_op(m, name, type);
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", n->output[0]);
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "shape", int_list(v, (size_t)sh->nval));
	if (target) {
		target->rank = sh->nval;
		memcpy(target->dims, v, sizeof(int64_t) * (size_t)sh->nval);
	}
	return 0;
}

/* The ONNX operators the importer maps, each its own emitter, as the op
 * rules' rules[] holds each planner op's functions; node() finds a node's
 * type in onnx_ops[] and runs its emitter at the entry's step. Each returns
 * PL_OK (its planner ops emitted, or the node dropped) or unsupported(). */
typedef pl_status (*onnx_emit)(imp *m, const Onnx__NodeProto *n, const char *name);
/* the importers that say why they refuse a node: 0, or -1 with *why set */
typedef int (*onnx_import)(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);

/* Control flow and shapes that depend on the data: not a training graph */
static pl_status onnx_control_flow(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *t = n->op_type;
	if (!strcmp(t, "Loop") && !import_embedding_bag(m, n, name))
		return PL_OK; /* nn.EmbeddingBag's bags of one length */
	char why[200];
	snprintf(why, sizeof why, "control flow (%s): not a training graph%s", t,
	         strcmp(t, "Loop") ? ""
	                           : " (nn.EmbeddingBag's Loop imports when its bags are all "
	                             "of one length, as of 2-D ids; not with offsets given at "
	                             "run time)");
	return unsupported(m, n, why);
}

static pl_status onnx_data_shaped(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	return unsupported(m, n,
	                   !strcmp(n->op_type, "NonZero")
	                       ? "a shape that depends on the data (NonZero): not a training graph"
	                       : "a shape that depends on the data (NonMaxSuppression): not a "
	                         "training graph");
}

/* opset 20: approximate "none" (the default) or "tanh" */
static pl_status onnx_gelu(imp *m, const Onnx__NodeProto *n, const char *name)
{
	char ap[16];
	attr_str(n, "approximate", ap, sizeof ap);
	if (ap[0] && strcmp(ap, "none") && strcmp(ap, "tanh"))
		return unsupported(m, n, "its approximate is neither none nor tanh");
	cJSON *at = emit_unary(m, n, name, "Gelu");
	if (!strcmp(ap, "tanh"))
		cJSON_AddStringToObject(at, "approximate", "tanh");
	return PL_OK;
}

/* An Identity: of a merged weight, a param of its own (before folding: a
 * small weight's values are known); else folded, or dropped */
static pl_status onnx_identity(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	if (is_param(m, n->input[0]) && strncmp(n->output[0], "onnx::", 6) &&
	    !cJSON_GetObjectItem(m->tensors, n->output[0])) {
		/* The exporter merges initializers of equal values (a fresh model's
		 * LayerNorm weights, all ones) and makes each other one an Identity
		 * of the kept one named as the model names that weight: they are the
		 * model's own weights, each a param as the model has them (a constant
		 * the exporter made, "onnx::...", stays one tensor) */
		cJSON *w =
		    cJSON_Duplicate(cJSON_GetObjectItem(m->tensors, resolve(m, n->input[0])), 1);
		pl_json_add(m->tensors, n->output[0], w);
		tinfo *x = known(m, n->input[0]), *o;
		if (x)
			set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		if (x && (o = known(m, n->output[0])))
			o->init = x->init;
		return PL_OK;
	}
	if (!fold(m, n)) /* else a constant, or a computation on shapes: folded */
		drop_node(m, n);
	return PL_OK;
}

/* a training export's dropout (or --dropout keep): the planner's Dropout,
 * its ratio input 1 (an attribute before opset 12); else dropped */
static pl_status onnx_dropout(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (!keep_dropout(m, n)) {
		drop_node(m, n);
		return PL_OK;
	}
	double ratio;
	if (dropout_ratio(m, n, &ratio))
		return unsupported(m, n, "its ratio is not a constant");
	if (!(ratio >= 0 && ratio < 1))
		return unsupported(m, n, "its ratio is not in [0, 1)");
	int who;
	if (n->n_output > 1 && n->output[1][0] && consumers(m, n->output[1], &who, 1) > 0)
		return unsupported(m, n, "its mask output is read");
	cJSON_AddNumberToObject(emit_unary(m, n, name, "Dropout"), "ratio", ratio);
	return PL_OK;
}

static pl_status onnx_shape(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	return unsupported(m, n,
	                   "the importer does not know its input's shape (export with "
	                   "static shapes, or --batch N for a symbolic batch)");
}

/* of a tensor computed at run time (a mask from an input) */
static pl_status onnx_cast(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *to = dtype_name((int32_t)attr_i(n, "to", 1));
	if (!to)
		return unsupported(m, n,
		                   "it casts to a type other than float32, float16, "
		                   "bfloat16, int32, int64 or bool");
	cJSON_AddStringToObject(emit_unary(m, n, name, "Cast"), "to", to);
	return PL_OK;
}

static pl_status onnx_attention(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *why = import_attention(m, n, name);
	return why ? unsupported(m, n, why) : PL_OK;
}

static pl_status onnx_groupnorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int gr = import_groupnorm(m, n, name);
	if (gr == -2)
		return unsupported(m, n,
		                   "its input's sizes (a group's channels times positions) "
		                   "overflow 64 bits");
	if (gr)
		return unsupported(m, n,
		                   "its input's shape is not known, or num_groups does not "
		                   "divide its channels, or its scale has neither a group's "
		                   "nor a channel's count of elements");
	return PL_OK;
}

/* opset 17's, over the last axis */
static pl_status onnx_layernorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]);
	if (!x || axis_of(attr_i(n, "axis", -1), x->rank) != x->rank - 1)
		return unsupported(m, n, "only over the last axis");
	const Onnx__AttributeProto *ep = attr(n, "epsilon");
	char scale[600];
	const char *g = n->n_input > 1 && n->input[1][0]
	                    ? n->input[1]
	                    : const_scale(m, name, x, scale, sizeof scale); /* none given */
	if (!g)
		return unsupported(m, n, "its scale's name is taken");
	cJSON *o = add_op(m, name, "LayerNormalization");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "inputs", g);
	if (n->n_input > 2 && n->input[2][0])
		io(m, o, "inputs", n->input[2]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", -1);
	cJSON_AddNumberToObject(at, "epsilon", ep && ep->has_f ? ep->f : 1e-5);
	set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

static pl_status onnx_reshape(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (shape_op(m, n, name, "Reshape", NULL))
		return unsupported(m, n,
		                   "its target shape is not a constant the importer can fold");
	infer(m, n);
	return PL_OK;
}

/* Node i, when it begins a LayerNorm, an RMSNorm or a Gelu written out in
 * primitive ops: the fused op emitted (1), else 0 */
static int onnx_fused(imp *m, int i, pl_status *st)
{
	const Onnx__NodeProto *n = m->g->node[i];
	const char *gamma, *beta = NULL;
	double eps;
	int ln = layernorm_at(m, i, &gamma, &beta, &eps);
	if (ln >= 0) {
		*st = emit_norm(m, n->input[0], ln, "LayerNormalization", gamma, beta, eps);
		return 1;
	}
	int rms = rmsnorm_at(m, i, &gamma, &eps);
	if (rms >= 0) {
		*st = emit_norm(m, n->input[0], rms, "RMSNormalization", gamma, NULL, eps);
		return 1;
	}
	int q = gelu_at(m, i), tanh_form = 0;
	if (q < 0 && (q = gelu_tanh_at(m, i)) >= 0) {
		n = m->g->node[i]; /* named after the final node, reading the Pow's x */
		tanh_form = 1;
	}
	if (q < 0)
		return 0;
	/* named after the node that ends it */
	const Onnx__NodeProto *last = m->g->node[q];
	cJSON *o = add_op(m, last->name && last->name[0] ? last->name : last->output[0], "Gelu");
	if (tanh_form)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "attrs"), "approximate", "tanh");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", m->g->node[q]->output[0]);
	m->skip[q] = 1;
	tinfo *x = known(m, n->input[0]);
	if (x)
		set_info(m, m->g->node[q]->output[0], x->rank, x->dims, 0, NULL);
	*st = PL_OK;
	return 1;
}

/* torch pads to a multiple: here by 0, dropped; zeros before a Conv or
 * AveragePool: its padding */
static pl_status onnx_pad(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (pads_nothing(m, n)) {
		drop_node(m, n);
		return PL_OK;
	}
	const char *why;
	return fold_pad(m, n) && import_pad(m, n, name, &why) ? unsupported(m, n, why) : PL_OK;
}

/* An op the planner has under the ONNX op's name, of the node's inputs and
 * outputs and the attributes axis, perm, axes and keepdims it has */
static pl_status onnx_same(imp *m, const Onnx__NodeProto *n, const char *name)
{
	cJSON *o = add_op(m, name, n->op_type);
	for (size_t a = 0; a < n->n_input; a++)
		operand(m, o, n->input[a]);
	for (size_t a = 0; a < n->n_output; a++)
		io(m, o, "outputs", n->output[a]);
	cJSON *at = cJSON_CreateObject();
	const Onnx__AttributeProto *p;
	if ((p = attr(n, "axis")))
		cJSON_AddNumberToObject(at, "axis", (double)p->i);
	if ((p = attr(n, "perm")))
		pl_json_add(at, "perm", int_list(p->ints, p->n_ints));
	if ((p = attr(n, "axes")))
		pl_json_add(at, "axes", int_list(p->ints, p->n_ints));
	if ((p = attr(n, "keepdims")))
		cJSON_AddNumberToObject(at, "keepdims", (double)p->i);
	if (cJSON_GetArraySize(at))
		pl_json_add(o, "attrs", at);
	else
		cJSON_Delete(at);
	infer(m, n);
	return PL_OK;
}

/* constant indices into a tensor (ViT's x[:, 0]; Swin's relative position
 * index, reshaped): an int64 const of their shape (a scalar's is [], and
 * the axis goes); else the planner's Gather */
static pl_status onnx_gather(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (!(n->n_input == 2 && constlike(m, n->input[1]) &&
	      !cJSON_GetObjectItem(m->tensors, n->input[1])))
		return onnx_same(m, n, name);
	tinfo *ix = constlike(m, n->input[1]);
	cJSON *c = cJSON_CreateObject();
	pl_json_add(c, "shape", int_list(ix->dims, (size_t)ix->rank));
	cJSON_AddStringToObject(c, "dtype", "int64");
	cJSON_AddStringToObject(c, "role", "const");
	if (ix->nval > 0 && ix->nval == elems(ix))
		const_values(c, ix->val, ix->nval, 0);
	pl_json_add(m->tensors, n->input[1], c);
	cJSON *o = add_op(m, name, "Gather");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "inputs", n->input[1]);
	io(m, o, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis",
	                        (double)attr_i(n, "axis", 0));
	infer(m, n);
	return PL_OK;
}

/* of a tensor (on shapes it is folded) */
static pl_status onnx_expand(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo tg = {0}, *x = known(m, n->input[0]);
	if (shape_op(m, n, name, "Expand", &tg))
		return unsupported(m, n, "its shape is not a constant the importer can fold");
	int64_t dims[16];
	int r = x ? broadcast(x, &tg, dims) : -1;
	if (r >= 0)
		set_info(m, n->output[0], r, dims, 0, NULL);
	return PL_OK;
}

/* A slice assignment on a tensor (x[a:b] = y: Swin v2 zeroes the key's third
 * of its q, k, v bias so): ScatterND without reduction whose indices are
 * constants [n, 1] naming rows a, a+1, ..., a+n-1 of its data, updates of
 * those rows' shape. A Concat along axis 0 of the data's rows before, the
 * updates and the rows after (Slices of the data); other ScatterNDs on
 * tensors are refused (on constants they fold) */
static pl_status onnx_scatternd(imp *m, const Onnx__NodeProto *n, const char *name)
{
	char red[16];
	attr_str(n, "reduction", red, sizeof red);
	tinfo *x = n->n_input == 3 ? known(m, n->input[0]) : NULL,
	      *ix = n->n_input == 3 ? valued(m, n->input[1]) : NULL,
	      *u = n->n_input == 3 ? known(m, n->input[2]) : NULL;
	if (!x || !ix || !u || (red[0] && strcmp(red, "none")) || x->rank < 1 || ix->rank != 2 ||
	    ix->dims[1] != 1 || ix->nval != ix->dims[0] || ix->nval < 1 || u->rank != x->rank ||
	    u->dims[0] != ix->nval)
		return unsupported(m, n,
		                   "only a slice assignment is imported: constant indices "
		                   "[n, 1] of consecutive rows, updates of their shape, no "
		                   "reduction");
	int64_t rows = x->dims[0], a = to_i64(ix->val[0]);
	if (a < 0)
		a += rows;
	int64_t b = a + ix->nval; /* rows [a, b) */
	int ok = a >= 0 && b <= rows;
	for (int d = 1; d < x->rank; d++)
		ok &= u->dims[d] == x->dims[d];
	for (int64_t i = 1; ok && i < ix->nval; i++)
		ok = to_i64(ix->val[i]) == to_i64(ix->val[0]) + i;
	if (!ok)
		return unsupported(m, n,
		                   "only a slice assignment is imported: its indices must "
		                   "be consecutive rows within the data, its updates of "
		                   "their shape");
	char part[2][600];
	const int64_t lo[2] = {0, b}, hi[2] = {a, rows}, axis = 0;
	cJSON *cat = NULL;
	for (int k = 0; k < 2; k++) {
		if (hi[k] <= lo[k])
			continue;
		snprintf(part[k], sizeof part[k], "%s.%s", n->output[0], k ? "after" : "before");
		slice_op(m, part[k], n->input[0], part[k], x, 1, &axis, &lo[k], &hi[k]);
		if (!k) { /* the Concat after the rows before it */
			cat = add_op(m, name, "Concat");
			io(m, cat, "inputs", part[0]);
		}
	}
	if (!cat && b == rows) { /* the whole tensor assigned: the updates */
		alias(m, n->output[0], n->input[2]);
		set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		return PL_OK;
	}
	if (!cat)
		cat = add_op(m, name, "Concat");
	operand(m, cat, n->input[2]);
	if (b < rows)
		io(m, cat, "inputs", part[1]);
	io(m, cat, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(cat, "attrs"), "axis", 0);
	set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* of tensors (on shapes it is folded) */
static pl_status onnx_concat(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input > 0 ? known(m, n->input[0]) : NULL;
	if (!x)
		return unsupported(m, n, "its first input's shape is not known");
	int64_t ax = axis_of(attr_i(n, "axis", 0), x->rank), dims[16];
	if (ax < 0 || ax >= x->rank)
		return unsupported(m, n, "its axis is out of range");
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[ax] = 0;
	/* more inputs than an op takes (DenseNet's, Inception's): a chain,
	 * each link the previous one's output and the next four inputs */
	char link[600];
	const char *prev = NULL; /* the last link's output: the op keeps its copy */
	for (size_t k = 0, part = 0; k < n->n_input; part++) {
		int last = n->n_input - k <= PL_ONNX_MAX_CONCAT - (part > 0);
		if (!last)
			snprintf(link, sizeof link, "%s.part%zu", n->output[0], part);
		cJSON *o = add_op(m, last ? name : link, "Concat");
		if (part)
			io(m, o, "inputs", prev);
		for (int j = part > 0; j < PL_ONNX_MAX_CONCAT && k < n->n_input; j++, k++) {
			tinfo *xi = known(m, n->input[k]);
			if (xi && xi->rank == x->rank)
				dims[ax] += xi->dims[ax];
			operand(m, o, n->input[k]);
		}
		io(m, o, "outputs", last ? n->output[0] : link);
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", (double)ax);
		if (!last) { /* (tinfo keeps the name's pointer: the op's string) */
			prev =
			    cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0)->valuestring;
			set_info(m, prev, x->rank, dims, 0, NULL);
		}
	}
	set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return PL_OK;
}

/* of a tensor: a Reshape */
static pl_status onnx_unsqueeze(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]), *o;
	if (!x || fold_unsqueeze(m, n, x) || !(o = known(m, n->output[0])))
		return unsupported(m, n, "its input's shape or its axes are not known");
	cJSON *op = add_op(m, name, "Reshape");
	io(m, op, "inputs", n->input[0]);
	io(m, op, "outputs", n->output[0]);
	/* axis 1 squeezed out: dimension 0 copied (0) and the one moving into
	 * its place inferred (-1), so that the batch, at either (a recurrent
	 * layer's Y is [steps, directions, batch, hidden]), follows a
	 * micro-batch's (which cuts a Reshape's dimension 0 alone) */
	int64_t dims[16];
	memcpy(dims, o->dims, sizeof(int64_t) * (size_t)o->rank);
	if (x->rank > 1 && o->rank == x->rank - 1 && x->dims[0] == o->dims[0] && x->dims[1] == 1 &&
	    o->dims[1] != 1) {
		dims[0] = 0;
		dims[1] = -1;
	}
	pl_json_add(cJSON_AddObjectToObject(op, "attrs"), "shape", int_list(dims, (size_t)o->rank));
	return PL_OK;
}

/* HardSigmoid and HardSwish, ONNX's defaults where the node gives none */
static pl_status onnx_hard(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const Onnx__AttributeProto *al = attr(n, "alpha"), *be = attr(n, "beta");
	int swish = !strcmp(n->op_type, "HardSwish");
	cJSON *o = add_op(m, name, n->op_type);
	io(m, o, "inputs", n->input[0]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "alpha", swish ? 1.0 / 6 : al && al->has_f ? al->f : 0.2);
	cJSON_AddNumberToObject(at, "beta", !swish && be && be->has_f ? be->f : 0.5);
	infer(m, n);
	return PL_OK;
}

/* LeakyRelu, Elu, Selu, Celu: alpha (and Selu's gamma) */
static pl_status onnx_alpha(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *t = n->op_type;
	const Onnx__AttributeProto *al = attr(n, "alpha"), *ga = attr(n, "gamma");
	pl_optype ty = PL_OP_COUNT;
	pl_attrs d = {0};
	pl_optype_parse(t, &ty);
	pl_attrs_default(ty, &d); /* ONNX's, where the node gives none */
	double a = al && al->has_f ? al->f : d.alpha;
	if (!strcmp(t, "Celu") && !(a != 0))
		return unsupported(m, n, "its alpha is 0");
	cJSON *at = emit_unary(m, n, name, t);
	cJSON_AddNumberToObject(at, "alpha", a);
	if (!strcmp(t, "Selu"))
		cJSON_AddNumberToObject(at, "gamma", ga && ga->has_f ? ga->f : d.gamma);
	return PL_OK;
}

/* of a mask at run time: Equal to 0 */
static pl_status onnx_not(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 1)
		return unsupported(m, n, "not supported");
	char zero[600];
	snprintf(zero, sizeof zero, "%s.zero", name);
	if (cJSON_GetObjectItem(m->tensors, zero))
		return unsupported(m, n, "its constant's name is taken");
	cJSON *c = cJSON_CreateObject();
	int64_t one = 1;
	pl_json_add(c, "shape", int_list(&one, 1));
	cJSON_AddStringToObject(c, "dtype", "int64");
	cJSON_AddStringToObject(c, "role", "const");
	const_values(c, NULL, 1, 0);
	pl_json_add(m->tensors, zero, c);
	emit_binary(m, name, "Equal", n->input[0], zero, n->output[0]);
	infer(m, n);
	return PL_OK;
}

/* its axis a constant input */
static pl_status onnx_cumsum(imp *m, const Onnx__NodeProto *n, const char *name)
{
	double ax;
	tinfo *x = known(m, n->input[0]);
	if (n->n_input < 2 || !x || scalar_of(m, n->input[1], &ax) ||
	    axis_of((int64_t)ax, x->rank) < 0 || axis_of((int64_t)ax, x->rank) >= x->rank)
		return unsupported(m, n, "its axis is not a constant within its input's rank");
	cJSON *at = emit_unary(m, n, name, "CumSum");
	cJSON_AddNumberToObject(at, "axis", (double)axis_of((int64_t)ax, x->rank));
	cJSON_AddNumberToObject(at, "exclusive", attr_i(n, "exclusive", 0) != 0);
	cJSON_AddNumberToObject(at, "reverse", attr_i(n, "reverse", 0) != 0);
	return PL_OK;
}

/* y = x W (+ b): a MatMul (W transposed first for transB) and an Add */
static pl_status onnx_gemm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (attr_i(n, "transA", 0) || n->n_input < 2)
		return unsupported(m, n, "transA is not supported");
	const Onnx__AttributeProto *al = attr(n, "alpha"), *be = attr(n, "beta");
	if ((al && al->has_f && al->f != 1) || (be && be->has_f && be->f != 1))
		return unsupported(m, n, "alpha and beta other than 1 are not supported");
	char w[512], y[512];
	const char *b = n->input[1];
	if (attr_i(n, "transB", 0)) { /* y = x W^T: W transposed first */
		snprintf(w, sizeof w, "%s.wT", name);
		cJSON *o = add_op(m, w, "Transpose");
		io(m, o, "inputs", b);
		io(m, o, "outputs", w);
		int64_t perm[2] = {1, 0};
		pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "perm", int_list(perm, 2));
		b = w;
	}
	snprintf(y, sizeof y, "%s.mm", name);
	cJSON *o = add_op(m, n->n_input > 2 ? y : name, "MatMul");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "inputs", b);
	io(m, o, "outputs", n->n_input > 2 ? y : n->output[0]);
	if (n->n_input > 2) {
		o = add_op(m, name, "Add");
		io(m, o, "inputs", y);
		io(m, o, "inputs", n->input[2]);
		io(m, o, "outputs", n->output[0]);
	}
	infer(m, n);
	return PL_OK;
}

/* ReduceLogSumExp as torch.logsumexp computes it: the maximum m (kept dims)
 * subtracted, Exp, ReduceSum, Log, plus m */
static void onnx_logsumexp(imp *m, const Onnx__NodeProto *n, const char *name, const int64_t *ax,
                           int na, int keep)
{
	char mk[600], d[600], e[600], s[600], l[600], mx[600];
	const char *x = n->input[0];
	snprintf(mk, sizeof mk, "%s.max_kept", name);
	snprintf(d, sizeof d, "%s.shifted", name);
	snprintf(e, sizeof e, "%s.exp", name);
	snprintf(s, sizeof s, "%s.sum", name);
	snprintf(l, sizeof l, "%s.log", name);
	snprintf(mx, sizeof mx, "%s.max", name);
	emit_reduce(m, mk, "ReduceMax", x, mk, ax, na, 1);
	emit_binary(m, d, "Sub", x, mk, d);
	emit_unary_op(m, e, "Exp", d, e);
	emit_reduce(m, s, "ReduceSum", e, s, ax, na, keep);
	emit_unary_op(m, l, "Log", s, l);
	if (!keep)
		emit_reduce(m, mx, "ReduceMax", x, mx, ax, na, 0);
	emit_binary(m, name, "Add", l, keep ? mk : mx, n->output[0]);
}

/* The reductions: axes an attribute, or (ReduceSum from opset 13, the others
 * from 18) input 1. ReduceL2 (F.normalize's norm) is the square root of the
 * sum of squares, ReduceL1 the sum of absolute values, ReduceSumSquare the
 * sum of squares: a Mul or an Abs, the ReduceSum, a Sqrt */
static pl_status onnx_reduce_op(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *t = n->op_type;
	int l2 = !strcmp(t, "ReduceL2"), l1 = !strcmp(t, "ReduceL1"),
	    sq = !strcmp(t, "ReduceSumSquare"), lse = !strcmp(t, "ReduceLogSumExp");
	int64_t ax[16];
	int na = ints_of(m, n, "axes", 1, ax, 16);
	if (na < 0 || (n->n_input > 1 && n->input[1][0] && !valued(m, n->input[1])) ||
	    (na == 0 && attr_i(n, "noop_with_empty_axes", 0)))
		return unsupported(m, n, "its axes are not a constant the importer can fold");
	int keep = attr_i(n, "keepdims", 1) != 0;
	if (lse) {
		onnx_logsumexp(m, n, name, ax, na, keep);
		infer(m, n);
		return PL_OK;
	}
	const char *in = n->input[0], *out = n->output[0];
	char pre[600], sum[600];
	if (l2 || l1 || sq) {
		snprintf(pre, sizeof pre, "%s.%s", name, l1 ? "abs" : "square");
		emit_binary(m, pre, l1 ? "Abs" : "Mul", in, l1 ? NULL : in, pre);
		in = pre;
	}
	if (l2) {
		snprintf(sum, sizeof sum, "%s.sum", name);
		out = sum;
	}
	emit_reduce(m, l2 ? sum : name, l2 || l1 || sq ? "ReduceSum" : t, in, out, ax, na, keep);
	if (l2)
		emit_unary_op(m, name, "Sqrt", sum, n->output[0]);
	infer(m, n);
	return PL_OK;
}

/* x ^ 2: x times x; x to another constant power, Reciprocal's -1: a Pow */
static pl_status onnx_pow(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int pow_op = !strcmp(n->op_type, "Pow");
	if (pow_op && n->n_input == 2 && is_scalar(m, n->input[1], 2)) {
		cJSON *o = add_op(m, name, "Mul");
		io(m, o, "inputs", n->input[0]);
		io(m, o, "inputs", n->input[0]);
		io(m, o, "outputs", n->output[0]);
		tinfo *x = known(m, n->input[0]);
		if (x)
			set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		return PL_OK;
	}
	double pe = -1;
	if (pow_op && !(n->n_input == 2 && scalar_of(m, n->input[1], &pe) == 0))
		return unsupported(m, n, "not supported");
	cJSON_AddNumberToObject(emit_unary(m, n, name, "Pow"), "exponent", pe);
	return PL_OK;
}

/* 2-D (opset 16; opset 20's names too) */
static pl_status onnx_gridsample(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = known(m, n->input[0]), *gd = n->n_input > 1 ? known(m, n->input[1]) : NULL;
	char mode[32], pad[32];
	attr_str(n, "mode", mode, sizeof mode);
	attr_str(n, "padding_mode", pad, sizeof pad);
	if (!x || !gd || x->rank != 4 || gd->rank != 4 || gd->dims[3] != 2)
		return unsupported(m, n,
		                   "only the 2-D form (X [N, C, H, W], grid [N, H_out, W_out, "
		                   "2]) with its shapes known is supported");
	int nearest = !strcmp(mode, "nearest");
	if (mode[0] && !nearest && strcmp(mode, "bilinear") && strcmp(mode, "linear"))
		return unsupported(m, n,
		                   "its mode (bicubic, cubic) is not supported yet: bilinear "
		                   "(linear) and nearest are");
	if (pad[0] && strcmp(pad, "zeros") && strcmp(pad, "border"))
		return unsupported(m, n,
		                   "its padding_mode reflection is not supported yet: zeros and "
		                   "border are");
	cJSON *o = add_op(m, name, "GridSample");
	io(m, o, "inputs", n->input[0]);
	io(m, o, "inputs", n->input[1]);
	io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddStringToObject(at, "mode", nearest ? "nearest" : "bilinear");
	cJSON_AddStringToObject(at, "padding_mode", pad[0] ? pad : "zeros");
	cJSON_AddNumberToObject(at, "align_corners", attr_i(n, "align_corners", 0) != 0);
	int64_t dims[4] = {x->dims[0], x->dims[1], gd->dims[1], gd->dims[2]};
	set_info(m, n->output[0], 4, dims, 0, NULL);
	return PL_OK;
}

/* noise (a VAE's, a diffusion step's): drawn data, an input */
static pl_status onnx_random(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	tinfo *x = n->n_input > 0 ? known(m, n->input[0]) : NULL;
	int64_t dims[16];
	int r = x ? x->rank : ints_of(m, n, "shape", 99, dims, 16);
	if (x)
		memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
	if (r < 1 || cJSON_GetObjectItem(m->tensors, n->output[0]))
		return unsupported(m, n, "its shape is not known");
	cJSON *d = cJSON_CreateObject();
	pl_json_add(d, "shape", int_list(dims, (size_t)r));
	cJSON_AddStringToObject(d, "role", "input");
	pl_json_add(m->tensors, n->output[0], d);
	set_info(m, n->output[0], r, dims, 0, NULL);
	return PL_OK;
}

/* the model's output, which the appended cross-entropy reads: its loss on
 * log-probabilities is its loss on the logits (log_softmax(log_softmax(z)) =
 * log_softmax(z)), dropped */
static pl_status onnx_logsoftmax(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	if (!(m->ce_loss && m->g->n_output > 0 && m->g->output[0]->name &&
	      !strcmp(n->output[0], m->g->output[0]->name)))
		return unsupported(m, n, "not supported");
	tinfo *x = known(m, n->input[0]);
	int64_t ax = x ? axis_of(attr_i(n, "axis", -1), x->rank) : -1;
	if (!x || ax != x->rank - 1)
		return unsupported(m, n, "a LogSoftmax is imported only over the last axis");
	drop_node(m, n);
	set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* When node() runs an op's emitter: before the checks of a node's inputs
 * (what is refused whatever its inputs), before folding (on constants an op
 * would fold), after folding, or after the fused-pattern matchers (the ops a
 * LayerNorm, an RMSNorm or a Gelu written out begins with) */
enum { EMIT_FIRST, EMIT_UNFOLDED, EMIT_FOLDED, EMIT_LAST };

typedef struct onnx_op {
	const char *type;
	int step;
	onnx_emit emit; /* its emitter; or an importer that says why it refuses: */
	onnx_import import;
	/* or one that refuses for one reason, why */
	int (*plain)(imp *m, const Onnx__NodeProto *n, const char *name);
	const char *why;
} onnx_op;

/* Max to Where (onnx_same): on tensors computed at run time (a padding mask
 * from an input, a masked_fill); on constants they fold */
static const onnx_op onnx_ops[] = {
    {"If", EMIT_FIRST, onnx_control_flow, NULL, NULL, NULL},
    {"Loop", EMIT_FIRST, onnx_control_flow, NULL, NULL, NULL},
    {"Scan", EMIT_FIRST, onnx_control_flow, NULL, NULL, NULL},
    {"NonZero", EMIT_FIRST, onnx_data_shaped, NULL, NULL, NULL},
    {"NonMaxSuppression", EMIT_FIRST, onnx_data_shaped, NULL, NULL, NULL},
    {"Gelu", EMIT_UNFOLDED, onnx_gelu, NULL, NULL, NULL},
    {"Identity", EMIT_UNFOLDED, onnx_identity, NULL, NULL, NULL},
    {"Dropout", EMIT_FOLDED, onnx_dropout, NULL, NULL, NULL},
    {"Shape", EMIT_FOLDED, onnx_shape, NULL, NULL, NULL},
    {"Slice", EMIT_FOLDED, NULL, NULL, import_slice,
     "its input's shape is not known, or its starts, ends, "
     "axes and steps are not constants with steps of 1 and "
     "ranges that are not empty"},
    {"Cast", EMIT_FOLDED, onnx_cast, NULL, NULL, NULL},
    {"Attention", EMIT_FOLDED, onnx_attention, NULL, NULL, NULL},
    {"Einsum", EMIT_FOLDED, NULL, import_einsum, NULL, NULL},
    {"Split", EMIT_FOLDED, NULL, NULL, import_split,
     "its input's shape or its parts' sizes are not known"},
    {"GroupNormalization", EMIT_FOLDED, onnx_groupnorm, NULL, NULL, NULL},
    {"InstanceNormalization", EMIT_FOLDED, NULL, NULL, import_instancenorm,
     "its input's shape is not known, or it has fewer than 3 "
     "dimensions or 3 inputs"},
    {"LayerNormalization", EMIT_FOLDED, onnx_layernorm, NULL, NULL, NULL},
    {"Reshape", EMIT_FOLDED, onnx_reshape, NULL, NULL, NULL},
    {"Conv", EMIT_LAST, NULL, import_window, NULL, NULL},
    {"MaxPool", EMIT_LAST, NULL, import_window, NULL, NULL},
    {"AveragePool", EMIT_LAST, NULL, import_window, NULL, NULL},
    {"GlobalAveragePool", EMIT_LAST, NULL, import_window, NULL, NULL},
    {"GlobalMaxPool", EMIT_LAST, NULL, import_window, NULL, NULL},
    {"Resize", EMIT_LAST, NULL, import_resize, NULL, NULL},
    {"Upsample", EMIT_LAST, NULL, import_resize, NULL, NULL},
    {"ConvTranspose", EMIT_LAST, NULL, import_convtranspose, NULL, NULL},
    {"RNN", EMIT_LAST, NULL, import_recurrent, NULL, NULL},
    {"GRU", EMIT_LAST, NULL, import_recurrent, NULL, NULL},
    {"LSTM", EMIT_LAST, NULL, import_recurrent, NULL, NULL},
    {"Pad", EMIT_LAST, onnx_pad, NULL, NULL, NULL},
    {"Flatten", EMIT_LAST, NULL, NULL, import_flatten,
     "its input's shape is not known, or axis is out of range"},
    {"Gather", EMIT_LAST, onnx_gather, NULL, NULL, NULL},
    {"Expand", EMIT_LAST, onnx_expand, NULL, NULL, NULL},
    {"Concat", EMIT_LAST, onnx_concat, NULL, NULL, NULL},
    {"ScatterND", EMIT_LAST, onnx_scatternd, NULL, NULL, NULL},
    {"BatchNormalization", EMIT_LAST, NULL, NULL, import_batchnorm,
     "its input's shape must be known and its running "
     "statistics' outputs unread"},
    {"Unsqueeze", EMIT_LAST, onnx_unsqueeze, NULL, NULL, NULL},
    {"Squeeze", EMIT_LAST, onnx_unsqueeze, NULL, NULL, NULL},
    {"HardSigmoid", EMIT_LAST, onnx_hard, NULL, NULL, NULL},
    {"HardSwish", EMIT_LAST, onnx_hard, NULL, NULL, NULL},
    {"LeakyRelu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Elu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Selu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Celu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Not", EMIT_LAST, onnx_not, NULL, NULL, NULL},
    {"CumSum", EMIT_LAST, onnx_cumsum, NULL, NULL, NULL},
    {"Clip", EMIT_LAST, NULL, NULL, import_clip, "its bounds must be constants"},
    {"Gemm", EMIT_LAST, onnx_gemm, NULL, NULL, NULL},
    {"ReduceSum", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceMean", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceMax", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceMin", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceL2", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceL1", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceSumSquare", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceLogSumExp", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"Pow", EMIT_LAST, onnx_pow, NULL, NULL, NULL},
    {"Reciprocal", EMIT_LAST, onnx_pow, NULL, NULL, NULL},
    {"Tile", EMIT_LAST, NULL, NULL, import_tile, "its input's shape or its repeats are not known"},
    {"DepthToSpace", EMIT_LAST, NULL, NULL, import_depth_space,
     "its input's shape must be known as [N, C, H, W] with the "
     "block dividing it"},
    {"SpaceToDepth", EMIT_LAST, NULL, NULL, import_depth_space,
     "its input's shape must be known as [N, C, H, W] with the "
     "block dividing it"},
    {"GridSample", EMIT_LAST, onnx_gridsample, NULL, NULL, NULL},
    {"ArgMax", EMIT_LAST, NULL, import_index, NULL, NULL},
    {"ArgMin", EMIT_LAST, NULL, import_index, NULL, NULL},
    {"OneHot", EMIT_LAST, NULL, import_index, NULL, NULL},
    {"TopK", EMIT_LAST, NULL, import_index, NULL, NULL},
    {"GatherElements", EMIT_LAST, NULL, import_index, NULL, NULL},
    {"RandomNormalLike", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"RandomUniformLike", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"RandomNormal", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"RandomUniform", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"LogSoftmax", EMIT_LAST, onnx_logsoftmax, NULL, NULL, NULL},
    {"MatMul", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Add", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sub", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Mul", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Div", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Relu", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Tanh", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sigmoid", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Softmax", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Transpose", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Neg", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Exp", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Log", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sqrt", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Abs", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Softplus", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Max", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Min", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Equal", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Less", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Greater", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Where", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sin", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Cos", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"PRelu", EMIT_LAST, onnx_same, NULL, NULL, NULL},
};

static const onnx_op *onnx_op_of(const char *type)
{
	for (size_t k = 0; k < sizeof onnx_ops / sizeof *onnx_ops; k++)
		if (!strcmp(onnx_ops[k].type, type))
			return &onnx_ops[k];
	return NULL;
}

static pl_status run_emitter(imp *m, const Onnx__NodeProto *n, const char *name, const onnx_op *op)
{
	const char *why;
	if (op->emit)
		return op->emit(m, n, name);
	if (op->plain)
		return op->plain(m, n, name) ? unsupported(m, n, op->why) : PL_OK;
	return op->import(m, n, name, &why) ? unsupported(m, n, why) : PL_OK;
}

/* Node i: its op's emitter (onnx_ops) at its step, between the checks every
 * node has (its inputs), folding and the fused-pattern matchers; an op
 * type not in the table is refused, unless it folds or a pattern takes it */
static pl_status node(imp *m, int i)
{
	const Onnx__NodeProto *n = m->g->node[i];
	if (!n->op_type || n->n_output < 1 || !n->output[0][0])
		return pl_err_set(m->err, PL_EINVAL, "%s: node %d ('%s'): %s", m->path, i,
		                  n->name ? n->name : "", n->op_type ? "no output" : "no op type");
	const char *t = n->op_type, *name = n->name && n->name[0] ? n->name : n->output[0];
	const onnx_op *op = onnx_op_of(t);
	if (op && op->step == EMIT_FIRST)
		return run_emitter(m, n, name, op);
	if (n->n_input < 1 && strcmp(t, "Constant")) /* every op read below has an input 0 */
		return unsupported(m, n,
		                   "not supported: it has no inputs, and the only op without "
		                   "inputs the importer reads is Constant");
	if (!strcmp(t, "Gemm") && n->n_input < 2)
		return unsupported(m, n, "too few inputs");
	if ((!strcmp(t, "Max") || !strcmp(t, "Min")) && n->n_input != 2)
		return unsupported(m, n, "only of two inputs");
	if (op && op->step == EMIT_UNFOLDED)
		return run_emitter(m, n, name, op);
	if (fold(m, n))
		return PL_OK; /* a constant, or a computation on shapes: folded */
	if (op && op->step == EMIT_FOLDED)
		return run_emitter(m, n, name, op);
	pl_status st;
	if (onnx_fused(m, i, &st))
		return st;
	return op ? run_emitter(m, n, name, op) : unsupported(m, n, "not supported");
}

/* whether float initializer t holds an infinity or a NaN */
static int nonfinite(const Onnx__TensorProto *t)
{
	for (size_t i = 0; i < t->n_float_data; i++)
		if (!isfinite(t->float_data[i]))
			return 1;
	for (size_t i = 0; i < t->n_double_data; i++)
		if (!isfinite(t->double_data[i]))
			return 1;
	if (!t->has_raw_data || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		return 0;
	for (size_t i = 0; i + 4 <= t->raw_data.len; i += 4) {
		float f;
		memcpy(&f, t->raw_data.data + i, 4);
		if (!isfinite(f))
			return 1;
	}
	return 0;
}

/* whether no gradient can reach tensor `name` from what reads it: every
 * reader compares it, casts it to bool, or is a Where reading it as its
 * condition, directly or through views (Slice, Reshape, Unsqueeze, Squeeze,
 * Identity, Cast) -- a mask buffer (GPT-2's tril of ones), which training
 * never changes */
static int no_gradient(imp *m, const char *name, int depth)
{
	int who[16];
	int k = consumers(m, name, who, 16);
	if (k < 1 || k > 16 || depth > 6)
		return 0;
	for (size_t i = 0; i < m->g->n_output; i++)
		if (m->g->output[i]->name && !strcmp(m->g->output[i]->name, name))
			return 0;
	static const char *const compare[] = {"Equal",       "Less",           "Greater",
	                                      "LessOrEqual", "GreaterOrEqual", "Not"};
	static const char *const view[] = {"Slice",   "Reshape",  "Unsqueeze",
	                                   "Squeeze", "Identity", "Cast"};
	for (int j = 0; j < k; j++) {
		const Onnx__NodeProto *n = m->g->node[who[j]];
		const char *t = n->op_type ? n->op_type : "";
		int ok = !strcmp(t, "Cast") && attr_i(n, "to", 1) == 9;
		for (size_t c = 0; c < sizeof compare / sizeof *compare; c++)
			ok |= !strcmp(t, compare[c]);
		if (!strcmp(t, "Where")) {
			ok = 1;
			for (size_t i = 1; i < n->n_input; i++)
				ok &= strcmp(n->input[i], name) != 0;
		}
		for (size_t c = 0; !ok && c < sizeof view / sizeof *view; c++)
			if (!strcmp(t, view[c]) && n->n_output >= 1 && n->n_input >= 1 &&
			    !strcmp(n->input[0], name) && n->output[0][0])
				ok = no_gradient(m, n->output[0], depth + 1);
		if (!ok)
			return 0;
	}
	return 1;
}

/* a graph input or initializer's declaration */
static pl_status declare(imp *m, const char *name, const Onnx__TypeProto__Tensor *tt,
                         const Onnx__TensorProto *init)
{
	if (!name || !name[0])
		return pl_err_set(m->err, PL_EINVAL, "%s: a graph input or initializer has no name",
		                  m->path);
	int32_t et = init ? init->data_type : tt && tt->has_elem_type ? tt->elem_type : 1;
	const char *dt = dtype_name(et);
	if (!dt)
		return pl_err_set(
		    m->err, PL_EINVAL,
		    "%s: tensor '%s': element type %d is not one of float32, float16, "
		    "bfloat16, int32, int64",
		    m->path, name, (int)et);
	int64_t shape[16];
	size_t n = init ? init->n_dims : tt && tt->shape ? tt->shape->n_dim : 0;
	if (n > 16)
		return pl_err_set(m->err, PL_EINVAL, "%s: tensor '%s': %zu dimensions", m->path,
		                  name, n);
	for (size_t d = 0; d < n; d++) {
		if (init) {
			shape[d] = init->dims[d];
			continue;
		}
		const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
		if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    dim->dim_value > 0) {
			shape[d] = dim->dim_value;
		} else if (d == 0 && m->batch > 0) {
			shape[d] = m->batch;
		} else {
			return pl_err_set(
			    m->err, PL_EINVAL,
			    "%s: input '%s': dimension %zu is symbolic ('%s'); --batch N "
			    "sets the batch (dimension 0)",
			    m->path, name, d,
			    dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
			        ? dim->dim_param
			        : "?");
		}
	}
	int is_float = et == 1 || et == 10 || et == 16;
	/* a float buffer holding an infinity (a causal mask of -inf), or one no
	 * gradient reaches (a mask compared or a Where's condition), is not
	 * trained: a constant, its values read */
	int buffer = init && is_float && (nonfinite(init) || no_gradient(m, name, 0));
	if (init)
		set_tensor(m, name, init, is_float && !buffer ? FEW_VALUES : MAX_VALUES);
	else
		set_info(m, name, (int)n, shape, 0, NULL);
	tinfo *ti = known(m, name);
	if (init && (!is_float || buffer) && ti) /* an index buffer, a mask: a constant */
		ti->cons = 1;
	if (ti)
		ti->init = init;
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", int_list(shape, n));
	cJSON_AddStringToObject(t, "role",
	                        !init                 ? "input"
	                        : is_float && !buffer ? "param"
	                                              : "const");
	cJSON_AddStringToObject(t, "dtype", dt);
	pl_json_add(m->tensors, name, t);
	return PL_OK;
}

/* --const: the params whose names match one of the patterns become const
 * (a buffer the exporter wrote as an initializer: no gradient, no optimizer
 * state). A pattern that matches no param is an error naming it. */
static pl_status keep_constant(imp *m, const pl_onnx_opts *o)
{
	for (int k = 0; o && k < o->nconsts; k++) {
		int hit = 0;
		cJSON *t;
		cJSON_ArrayForEach (t, m->tensors) {
			const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
			if (role && !strcmp(role, "param") &&
			    !fnmatch(o->consts[k], t->string, 0)) {
				cJSON_ReplaceItemInObject(t, "role", cJSON_CreateString("const"));
				hit = 1;
			}
		}
		if (!hit)
			return pl_err_set(m->err, PL_EINVAL,
			                  "%s: --const '%s': no initializer the model trains is "
			                  "named so (shell patterns: *, ?, [...])",
			                  m->path, o->consts[k]);
	}
	return PL_OK;
}

/* Every const the model declares gets its values: those folded at import,
 * or an initializer's read from the file (a buffer made constant). One whose
 * values are past the bound, or computed by an op not folded on values, is
 * refused naming it; one whose values the file does not hold (an initializer
 * of dims only) stays without them: it plans, and the executor refuses to
 * run it rather than invent them. */
static pl_status check_consts(imp *m)
{
	cJSON *t;
	cJSON_ArrayForEach (t, m->tensors) {
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
		if (!role || strcmp(role, "const") || cJSON_GetObjectItem(t, "values"))
			continue;
		tinfo *k = known(m, t->string);
		if (k && k->nval > 0 && k->nval == elems(k)) {
			const_values(t, k->val, k->nval, 0);
			continue;
		}
		const Onnx__TensorProto *init = k ? k->init : NULL;
		int64_t n = 1;
		cJSON *d;
		cJSON_ArrayForEach (d, cJSON_GetObjectItem(t, "shape"))
			if (__builtin_mul_overflow(n, (int64_t)d->valuedouble, &n) || n > BIG)
				n = BIG;
		if (n > MAX_VALUES || (k && k->over))
			return pl_err_set(
			    m->err, PL_EINVAL,
			    "%s: constant '%s': %lld values, more than the importer keeps of one "
			    "(at most %d, 16 MiB as float32: a 2048x2048 mask; %lld in all)",
			    m->path, t->string, (long long)n, MAX_VALUES, (long long)MAX_HELD);
		if (init) {
			double *v = scratch(m, n);
			int nv = tensor_values(init, v, MAX_VALUES);
			if (nv == n)
				const_values(t, v, n, 0);
			continue; /* else its dims only: run refuses it, naming it */
		}
		if (n == 0 || (k && k->nodata))
			continue;
		const char *by = "?", *op = "?";
		for (size_t i = 0; i < m->g->n_node; i++)
			for (size_t j = 0; j < m->g->node[i]->n_output; j++)
				if (!strcmp(resolve(m, m->g->node[i]->output[j]), t->string)) {
					by = m->g->node[i]->name && m->g->node[i]->name[0]
					         ? m->g->node[i]->name
					         : t->string;
					op = m->g->node[i]->op_type ? m->g->node[i]->op_type : "?";
				}
		return pl_err_set(m->err, PL_EINVAL,
		                  "%s: constant '%s' (node '%s', %s): its values are not computed "
		                  "at import (%s is not folded on values)",
		                  m->path, t->string, by, op, op);
	}
	return PL_OK;
}

/* Graph output y's dimensions into ls (a symbolic one: what the import
 * inferred, else the batch); its rank, or -1 where it has no shape, -2 where
 * a dimension stays symbolic (*bad: which) */
static int output_dims(imp *m, const Onnx__ValueInfoProto *y, int64_t ls[16], size_t *bad)
{
	const Onnx__TensorShapeProto *sh =
	    y->type && y->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
	            y->type->tensor_type->shape
	        ? y->type->tensor_type->shape
	        : NULL;
	if (!sh || sh->n_dim < 1 || sh->n_dim > 16)
		return -1;
	tinfo *yi = known(m, y->name); /* the shape the import inferred, if any */
	for (size_t d = 0; d < sh->n_dim; d++) {
		const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
		ls[d] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		                dim->dim_value > 0
		            ? dim->dim_value
		        : yi && yi->rank == (int)sh->n_dim ? yi->dims[d]
		                                           : m->batch;
		if (ls[d] <= 0) {
			*bad = d;
			return -2;
		}
	}
	return (int)sh->n_dim;
}

/* SoftmaxCrossEntropy op `name` of logits y (of rank `rank`; classes on
 * dimension 1 when on1, moved last by a Transpose `name`.classes_last)
 * against "labels", its loss `name` pushed onto outs */
static void ce_op(imp *m, const char *y, int rank, int on1, const char *name, cJSON *outs)
{
	char tr_name[256], logits[256];
	snprintf(tr_name, sizeof tr_name, "%s.classes_last", name);
	snprintf(logits, sizeof logits, "%s.logits", name);
	if (on1) { /* classes moved last, where SoftmaxCrossEntropy takes them */
		int64_t perm[16];
		int k = 0;
		perm[k++] = 0;
		for (int d = 2; d < rank; d++)
			perm[k++] = d;
		perm[k++] = 1;
		cJSON *tr = add_op(m, tr_name, "Transpose");
		io(m, tr, "inputs", y);
		pl_json_push(cJSON_GetObjectItem(tr, "outputs"), cJSON_CreateString(logits));
		cJSON *at = cJSON_AddObjectToObject(tr, "attrs");
		pl_json_add(at, "perm", int_list(perm, rank));
	}
	cJSON *op = add_op(m, name, "SoftmaxCrossEntropy");
	if (on1)
		pl_json_push(cJSON_GetObjectItem(op, "inputs"), cJSON_CreateString(logits));
	else
		io(m, op, "inputs", y);
	pl_json_push(cJSON_GetObjectItem(op, "inputs"), cJSON_CreateString("labels"));
	pl_json_push(cJSON_GetObjectItem(op, "outputs"), cJSON_CreateString(name));
	pl_json_push(outs, cJSON_CreateString(name));
}

/* The loss --loss cross-entropy appends: SoftmaxCrossEntropy of the graph's
 * first output (its classes moved last where they are at axis 1) against an
 * int64 labels input of its other dimensions; "loss" added to outs. Every
 * further output of the first's shape is an auxiliary classifier trained on
 * the same labels (GoogLeNet's and Inception v3's in training mode, a
 * segmentation model's aux head): its cross-entropy "loss.auxN" is a loss
 * too (the step's loss is their sum), as those models train them */
static pl_status add_ce_loss(imp *m, const pl_onnx_opts *o, cJSON *outs)
{
	/* labels: the first output's shape without its class dimension */
	const Onnx__ValueInfoProto *y = m->g->output[0];
	if (!y->name)
		return pl_err_set(m->err, PL_EINVAL, "%s: graph output 0 has no name", m->path);
	int64_t ls[16];
	size_t bad = 0;
	int rank = output_dims(m, y, ls, &bad);
	if (rank == -1)
		return pl_err_set(m->err, PL_EINVAL,
		                  "%s: output '%s' has no shape: --loss cross-entropy needs one "
		                  "(export with shapes inferred), or --loss none",
		                  m->path, y->name);
	if (rank < 0)
		return pl_err_set(m->err, PL_EINVAL,
		                  "%s: output '%s': dimension %zu is symbolic; --batch N sets "
		                  "the batch",
		                  m->path, y->name, bad);
	/* the classes' axis: 1 or the last (auto: 1 from rank 4, as PyTorch's
	 * CrossEntropyLoss takes [N, C, d1, ...]; a language model's
	 * [B, S, V] keeps the last) */
	int ax = o ? o->loss_axis : 0;
	int on1 = rank >= 3 && (ax == 1 || (ax == 0 && rank >= 4));
	/* the labels: the output's dimensions but the classes' */
	int64_t lab[16];
	int nl = 0;
	for (int d = 0; d < rank; d++)
		if (d != (on1 ? 1 : rank - 1))
			lab[nl++] = ls[d];
	cJSON *lt = cJSON_CreateObject();
	pl_json_add(lt, "shape", int_list(lab, nl));
	cJSON_AddStringToObject(lt, "role", "input");
	cJSON_AddStringToObject(lt, "dtype", "int64");
	pl_json_add(m->tensors, "labels", lt);
	ce_op(m, y->name, rank, on1, "loss", outs);
	for (size_t i = 1, aux = 1; i < m->g->n_output; i++) {
		const Onnx__ValueInfoProto *a = m->g->output[i];
		int64_t as[16];
		if (!a->name || output_dims(m, a, as, &bad) != rank ||
		    memcmp(as, ls, (size_t)rank * sizeof *ls))
			continue;
		char name[32];
		snprintf(name, sizeof name, "loss.aux%zu", aux++);
		ce_op(m, a->name, rank, on1, name, outs);
	}
	return PL_OK;
}

/* The graph's initializers and inputs, declared tensors */
static pl_status declare_graph(imp *m)
{
	pl_status st = PL_OK;
	for (size_t i = 0; i < m->g->n_initializer && !st; i++)
		st = declare(m, m->g->initializer[i]->name, NULL, m->g->initializer[i]);
	for (size_t i = 0; i < m->g->n_input && !st; i++) {
		const Onnx__ValueInfoProto *v = m->g->input[i];
		if (!v->name || !v->name[0]) {
			st = pl_err_set(m->err, PL_EINVAL, "%s: graph input %zu has no name",
			                m->path, i);
			break;
		}
		if (cJSON_GetObjectItem(m->tensors, v->name))
			continue; /* an initializer listed as an input too (older exports) */
		if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
			st = pl_err_set(m->err, PL_EINVAL, "%s: input '%s' is not a tensor",
			                m->path, v->name);
			break;
		}
		st = declare(m, v->name, v->type->tensor_type, NULL);
	}
	return st;
}

/* The model of ONNX file data: its tensors declared, its nodes imported,
 * then the loss the user asked for */
pl_status pl_onnx_to_model(const unsigned char *data, size_t len, const char *path,
                           const pl_onnx_opts *o, cJSON **out, pl_err *err)
{
	*out = NULL;
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
	if (!mp || !mp->graph) {
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return pl_err_set(err, PL_EINVAL,
		                  "%s: not an ONNX model (no ModelProto with a graph)", path);
	}
	const Onnx__GraphProto *g = mp->graph;
	imp m = {.g = g,
	         .path = path,
	         .batch = o ? o->batch : 0,
	         .dropout = o ? o->dropout : NULL,
	         .ce_loss = !o || !o->loss || !strcmp(o->loss, "cross-entropy"),
	         .err = err};
	for (size_t i = 0; i < mp->n_opset_import; i++)
		if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0])
			m.opset = mp->opset_import[i]->version;
	cJSON *root = cJSON_CreateObject(), *outs = NULL;
	m.tensors = cJSON_CreateObject();
	m.ops = cJSON_CreateArray();
	m.alias_from = pl_calloc(g->n_node + 1, sizeof *m.alias_from);
	m.alias_to = pl_calloc(g->n_node + 1, sizeof *m.alias_to);
	m.skip = pl_calloc(g->n_node + 1, 1);
	m.padded = pl_calloc(g->n_node + 1, sizeof *m.padded);
	size_t names = g->n_initializer + g->n_input + 1;
	for (size_t i = 0; i < g->n_node; i++)
		names += g->node[i]->n_output;
	for (m.ninfo = 64; m.ninfo < 2 * names; m.ninfo *= 2)
		;
	m.info = pl_calloc(m.ninfo, sizeof *m.info);
	pl_status st = PL_OK;
	if (!m.alias_from || !m.alias_to || !m.skip || !m.padded || !m.info) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	st = declare_graph(&m);
	for (size_t i = 0; i < g->n_node && !st; i++)
		if (!m.skip[i])
			st = node(&m, (int)i);
	if (st)
		goto done;
	if (g->n_output < 1) {
		st = pl_err_set(err, PL_EINVAL, "%s: the graph has no outputs", path);
		goto done;
	}
	outs = cJSON_CreateArray();
	const char *loss = o && o->loss ? o->loss : "cross-entropy";
	if (!strcmp(loss, "cross-entropy")) {
		if ((st = add_ce_loss(&m, o, outs)))
			goto done;
	} else if (!strcmp(loss, "none")) {
		for (size_t i = 0; i < g->n_output; i++)
			if (g->output[i]->name)
				pl_json_push(outs,
				             cJSON_CreateString(resolve(&m, g->output[i]->name)));
	} else {
		st = pl_err_set(err, PL_EINVAL, "--loss %s: expected cross-entropy or none", loss);
		goto done;
	}
	if ((st = keep_constant(&m, o)))
		goto done;
	drop_unread(&m, outs);
	if ((st = check_consts(&m)))
		goto done;
	cJSON_AddStringToObject(root, "format", "planner.model/1");
	cJSON_AddStringToObject(root, "name", g->name && g->name[0] ? g->name : "onnx");
	pl_json_add(root, "tensors", m.tensors);
	pl_json_add(root, "ops", m.ops);
	pl_json_add(root, "outputs", outs);
	m.tensors = m.ops = outs = NULL;
	if (pl_alloc_null_count())
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
done:
	cJSON_Delete(outs);
	cJSON_Delete(m.tensors);
	cJSON_Delete(m.ops);
	free(m.alias_from);
	free(m.alias_to);
	free(m.skip);
	free(m.padded);
	for (size_t i = 0; m.info && i < m.ninfo; i++)
		free(m.info[i].val);
	free(m.info);
	free(m.scratch);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (st)
		cJSON_Delete(root);
	else
		*out = root;
	return st;
}

/* ---- weights: an ONNX file's initializers as starting values ---- */

static float half_float(uint16_t h)
{
	int e = (h >> 10) & 31, f = h & 1023;
	double v = e == 0    ? ldexp(f, -24)
	           : e == 31 ? (f ? NAN : INFINITY)
	                     : ldexp(f + 1024, e - 25);
	return (float)(h & 0x8000 ? -v : v);
}

/* initializer t's n values as floats into v: 0, or -1 (with *why) */
static int init_floats(const Onnx__TensorProto *t, float *v, int64_t n, const char **why)
{
	size_t k = (size_t)n;
	int dt = t->data_type;
	*why = "it holds dims only (no data: export it with its weights)";
	if (t->has_data_location &&
	    t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		*why = "its data are in an external file (save the model with its data inside: "
		       "onnx.save(model, path, save_as_external_data=False))";
		return -1;
	}
	if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t->n_float_data == k) {
		memcpy(v, t->float_data, sizeof(float) * k);
		return 0;
	}
	if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE && t->n_double_data == k) {
		for (size_t i = 0; i < k; i++)
			v[i] = (float)t->double_data[i];
		return 0;
	}
	int half = dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16,
	    bf = dt == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
	if ((half || bf) && t->n_int32_data == k) { /* 16 bits in each int32 */
		for (size_t i = 0; i < k; i++) {
			uint32_t b = (uint32_t)t->int32_data[i] & 0xffff;
			if (half)
				v[i] = half_float((uint16_t)b);
			else
				memcpy(&v[i], &(uint32_t){b << 16}, 4);
		}
		return 0;
	}
	if (!t->has_raw_data || !t->raw_data.len)
		return -1;
	size_t w = dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? 8 : half || bf ? 2 : 4;
	*why = "its raw data are not as many bytes as its dims say";
	if (t->raw_data.len != w * k)
		return -1;
	const unsigned char *r = t->raw_data.data; /* little-endian, as ONNX stores them */
	for (size_t i = 0; i < k; i++) {
		if (w == 8) {
			double d;
			memcpy(&d, r + 8 * i, 8);
			v[i] = (float)d;
		} else if (w == 4) {
			memcpy(&v[i], r + 4 * i, 4);
		} else {
			uint16_t b = (uint16_t)(r[2 * i] | r[2 * i + 1] << 8);
			if (half)
				v[i] = half_float(b);
			else
				memcpy(&v[i], &(uint32_t){(uint32_t)b << 16}, 4);
		}
	}
	return 0;
}

static const Onnx__TensorProto *initializer(const Onnx__GraphProto *g, const char *name, size_t len)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name && strlen(g->initializer[i]->name) == len &&
		    !strncmp(g->initializer[i]->name, name, len))
			return g->initializer[i];
	return NULL;
}

/* initializer `name`, or the one a chain of Identity nodes makes it (the
 * exporter merges initializers of equal values and names the others as
 * Identities of the one kept; the importer keeps each a param) */
static const Onnx__TensorProto *initializer_via(const Onnx__GraphProto *g, const char *name,
                                                size_t len)
{
	for (int depth = 0; depth < 16 && name; depth++) {
		const Onnx__TensorProto *t = initializer(g, name, len);
		if (t)
			return t;
		const char *from = NULL;
		for (size_t i = 0; i < g->n_node && !from; i++) {
			const Onnx__NodeProto *n = g->node[i];
			if (n->op_type && !strcmp(n->op_type, "Identity") && n->n_input == 1 &&
			    n->n_output == 1 && strlen(n->output[0]) == len &&
			    !strncmp(n->output[0], name, len))
				from = n->input[0];
		}
		name = from;
		len = from ? strlen(from) : 0;
	}
	return NULL;
}

/* tensor t's values from initializer `name` (all of it), or from columns
 * lo..hi of the last dimension of the initializer a name 'W[lo:hi]' names */
static pl_status weight_of(const Onnx__GraphProto *og, const char *path, const pl_tensor *t,
                           float **out, pl_err *err)
{
	const char *name = t->name, *br = strrchr(name, '[');
	long long lo = 0, hi = 0;
	int cut = 0;
	const Onnx__TensorProto *it = initializer_via(og, name, strlen(name));
	if (!it && br && sscanf(br, "[%lld:%lld]%n", &lo, &hi, &cut) == 2 && br[cut] == 0)
		it = initializer_via(og, name, (size_t)(br - name));
	else
		cut = 0;
	*out = NULL;
	if (!it)
		return t->role == PL_ROLE_PARAM
		           ? pl_err_set(err, PL_EINVAL,
		                        "%s: --weights: the model's param '%s' is not an "
		                        "initializer of this file (it must be the file the model "
		                        "was imported from)",
		                        path, name)
		           : PL_OK; /* a const the file does not hold: the executor refuses it */
	int dt = it->data_type;
	if (dt != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
	    dt != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE &&
	    dt != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 &&
	    dt != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: --weights: initializer '%s' has element type %d, not a "
		                  "float type",
		                  path, it->name, dt);
	/* the shape: the tensor's, but for a cut the last dimension whole */
	int64_t n = 1, last = it->n_dims ? it->dims[it->n_dims - 1] : 1;
	int same = (int)it->n_dims == t->rank;
	for (int d = 0; same && d < t->rank; d++)
		same = it->dims[d] == (cut && d == t->rank - 1 ? last : t->shape[d]);
	if (!same || (cut && (lo < 0 || hi > last || hi - lo != t->shape[t->rank - 1]))) {
		char a[160] = "", b[160] = "";
		for (size_t d = 0; d < it->n_dims && d < 16; d++)
			snprintf(a + strlen(a), sizeof a - strlen(a), "%s%lld", d ? ", " : "",
			         (long long)it->dims[d]);
		for (int d = 0; d < t->rank; d++)
			snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", d ? ", " : "",
			         (long long)t->shape[d]);
		return pl_err_set(err, PL_EINVAL,
		                  "%s: --weights: initializer '%s' has shape [%s]; the model's "
		                  "%s '%s' is [%s]",
		                  path, it->name, a, pl_role_name(t->role), name, b);
	}
	for (size_t d = 0; d < it->n_dims; d++)
		n *= it->dims[d];
	float *all = pl_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
	if (!all)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	const char *why;
	if (n > 0 && init_floats(it, all, n, &why)) {
		free(all);
		return pl_err_set(err, PL_EINVAL, "%s: --weights: initializer '%s': %s", path,
		                  it->name, why);
	}
	if (cut) { /* columns lo..hi of each row, in place */
		int64_t w = hi - lo, rows = last ? n / last : 0;
		for (int64_t r = 0; r < rows; r++)
			memmove(all + r * w, all + r * last + lo, sizeof(float) * (size_t)w);
	}
	*out = all;
	return PL_OK;
}

pl_status pl_onnx_weights(const unsigned char *data, size_t len, const char *path,
                          const pl_graph *g, float ***vals, pl_err *err)
{
	*vals = NULL;
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
	if (!mp || !mp->graph) {
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return pl_err_set(err, PL_EINVAL,
		                  "%s: --weights: not an ONNX model (no ModelProto with a graph)",
		                  path);
	}
	float **v = pl_calloc((size_t)g->ntensors + 1, sizeof *v);
	pl_status st = v ? PL_OK : pl_err_set(err, PL_ENOMEM, "out of memory");
	for (int t = 0; t < g->ntensors && !st; t++) {
		const pl_tensor *pt = &g->tensors[t];
		if (pt->producer < 0 &&
		    (pt->role == PL_ROLE_PARAM || (pt->role == PL_ROLE_CONST && !pt->values)))
			st = weight_of(mp->graph, path, pt, &v[t], err);
	}
	onnx__model_proto__free_unpacked(mp, NULL);
	if (st) {
		for (int t = 0; v && t < g->ntensors; t++)
			free(v[t]);
		free(v);
		return st;
	}
	*vals = v;
	return PL_OK;
}
