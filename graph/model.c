/* Model import (docs/formats.md, "Model"): planner.model/1 JSON -> validated graph IR.
 * Every check names the file and the op or field and says what was expected;
 * ops are re-ordered topologically (stable: file order where possible) and a
 * cycle is reported with one op on it. An .onnx file is imported first
 * (graph/onnx/) and read as any model document. */
#include "graph/model.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "graph/alloc.h"
#include "graph/clock.h"
#include "graph/json.h"
#include "graph/onnx.h"
#include "graph/ops.h"
#include "graph/parse.h"
#include "graph/roles.h"

/* ---- small JSON helpers; each names the field it reads in its message ---- */

#define FAIL(...) pl_err_set(err, PL_EINVAL, __VA_ARGS__)

static pl_status get_int_array(const cJSON *a, int64_t *out, int *n, int max, int positive,
                               const char *file, const char *where, pl_err *err)
{
	if (!cJSON_IsArray(a))
		return FAIL("%s: %s: expected an array of integers", file, where);
	int k = cJSON_GetArraySize(a);
	if (k > max)
		return FAIL("%s: %s: has %d entries, at most %d are supported", file, where, k,
		            max);
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach (e, a) {
		if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble))
			return FAIL("%s: %s[%d]: expected an integer", file, where, i);
		if (fabs(e->valuedouble) > 9.0e15) /* exact in a double */
			return FAIL("%s: %s[%d]: %.17g is out of range: expected an integer of at "
			            "most 9e15 in magnitude",
			            file, where, i, e->valuedouble);
		out[i] = (int64_t)e->valuedouble;
		if (positive && out[i] <= 0)
			return FAIL("%s: %s[%d]: dimension %lld is not positive", file, where, i,
			            (long long)out[i]);
		i++;
	}
	*n = k;
	return PL_OK;
}

/* ---- building ---- */

/* Names to indices while a model is read (models of thousands of ops look
 * every input up): open addressing, -1 = empty, at most half full. */
typedef struct nameidx {
	int *slot;
	size_t cap, n;
} nameidx;

/* The ops' attribute records, each once (pl_op.attrs): open addressing on
 * their bytes, NULL = empty, at most half full. */
typedef struct attrset {
	const pl_attrs **slot;
	size_t cap, n;
} attrset;

typedef struct builder {
	pl_graph *g;
	const char *file;
	int cap_tensors;
	int64_t micro;            /* > 1: build one micro-batch (batch dimension divided by it) */
	pl_op *ops;               /* the ops as read, in file order */
	nameidx tensor_ix, op_ix; /* into g->tensors, ops */
	attrset attrs;            /* the ops' attribute records */
	const pl_json_numbers *values; /* the consts' values the scanner read */
	/* per tensor, 1: an op's output computed from params and consts alone
	 * (a weight reshaped), which holds no batch (nwhole of them known) */
	unsigned char *whole;
	int nwhole;
	/* what is read but not used (pl_graph.warnings): the first
	 * PL_GRAPH_WARNINGS lines, and how many there were */
	char *warn;
	size_t warn_len;
	int nwarn;
} builder;

/* One line of b's warnings; PL_ENOMEM when it cannot be kept. */
static pl_status warn(builder *b, pl_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pl_status warn(builder *b, pl_err *err, const char *fmt, ...)
{
	if (b->nwarn++ >= PL_GRAPH_WARNINGS)
		return PL_OK;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *w = n < 0 ? NULL : pl_realloc(b->warn, b->warn_len + (size_t)n + 2);
	if (!w)
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", b->file);
	b->warn = w;
	va_start(ap, fmt);
	vsnprintf(w + b->warn_len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->warn_len += (size_t)n;
	w[b->warn_len++] = '\n';
	w[b->warn_len] = 0;
	return PL_OK;
}

static const char *tensor_name(const builder *b, int i)
{
	return b->g->tensors[i].name;
}

static const char *op_name(const builder *b, int i)
{
	return b->ops[i].name;
}

typedef const char *(*name_of)(const builder *b, int i);

static size_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h ^ h >> 32);
}

static int idx_find(const builder *b, const nameidx *ix, name_of name, const char *s)
{
	if (!ix->cap)
		return -1;
	for (size_t i = name_hash(s) & (ix->cap - 1); ix->slot[i] >= 0; i = (i + 1) & (ix->cap - 1))
		if (!strcmp(name(b, ix->slot[i]), s))
			return ix->slot[i];
	return -1;
}

static void idx_put(const builder *b, nameidx *ix, name_of name, int k)
{
	size_t i = name_hash(name(b, k)) & (ix->cap - 1);
	while (ix->slot[i] >= 0)
		i = (i + 1) & (ix->cap - 1);
	ix->slot[i] = k;
	ix->n++;
}

/* Adds entry k (its name not there yet); 0, or -1 out of memory. */
static int idx_add(const builder *b, nameidx *ix, name_of name, int k)
{
	if (2 * (ix->n + 1) > ix->cap) {
		nameidx bigger = {.cap = ix->cap ? 2 * ix->cap : 256};
		bigger.slot = pl_malloc(sizeof *bigger.slot * bigger.cap);
		if (!bigger.slot)
			return -1;
		for (size_t i = 0; i < bigger.cap; i++)
			bigger.slot[i] = -1;
		for (size_t i = 0; i < ix->cap; i++)
			if (ix->slot[i] >= 0)
				idx_put(b, &bigger, name, ix->slot[i]);
		free(ix->slot);
		*ix = bigger;
	}
	idx_put(b, ix, name, k);
	return 0;
}

static size_t attrs_hash(const pl_attrs *a)
{
	uint64_t h = 14695981039346656037ULL, w;
	for (size_t i = 0; i + sizeof w <= sizeof *a; i += sizeof w) {
		memcpy(&w, (const char *)a + i, sizeof w);
		h = (h ^ w) * 1099511628211ULL;
	}
	return (size_t)(h ^ h >> 32);
}

/* The graph's record of attributes equal to *a, byte for byte (made in
 * the arena the first time); NULL out of memory. A Slice gets a record of
 * its own: its inference rewrites it for its input's shape. */
static const pl_attrs *attrs_record(builder *b, pl_optype type, const pl_attrs *a)
{
	attrset *s = &b->attrs;
	if (type == PL_OP_SLICE) {
		pl_attrs *own = pl_arena_alloc(b->g->arena, sizeof *own);
		if (own)
			memcpy(own, a, sizeof *own);
		return own;
	}
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		const pl_attrs **slot = pl_calloc(cap, sizeof *slot);
		if (!slot)
			return NULL;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slot[i])
				continue;
			size_t j = attrs_hash(s->slot[i]) & (cap - 1);
			while (slot[j])
				j = (j + 1) & (cap - 1);
			slot[j] = s->slot[i];
		}
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	size_t i = attrs_hash(a) & (s->cap - 1);
	for (; s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (!memcmp(s->slot[i], a, sizeof *a))
			return s->slot[i];
	pl_attrs *c = pl_arena_alloc(b->g->arena, sizeof *c);
	if (!c)
		return NULL;
	memcpy(c, a, sizeof *c);
	s->slot[i] = c;
	s->n++;
	return c;
}

static int find_tensor(const builder *b, const char *name)
{
	return idx_find(b, &b->tensor_ix, tensor_name, name);
}

/* Whether the tensor named so holds no batch: a param, a const, or an
 * earlier op's output computed from those alone (GroupNorm's scale
 * unsqueezed twice). Not found (produced later in the file): it may. */
static int batchless(const builder *b, const char *name)
{
	int t = find_tensor(b, name);
	if (t < 0)
		return 0;
	pl_role r = b->g->tensors[t].role;
	return r == PL_ROLE_PARAM || r == PL_ROLE_CONST || (t < b->nwhole && b->whole[t]);
}

/* Records the outputs of op as batchless when all its inputs (named so) are;
 * -1 out of memory */
static int mark_batchless(builder *b, const char *const *inputs, const pl_op *op)
{
	for (int i = 0; i < op->ninputs; i++)
		if (!batchless(b, inputs[i]))
			return 0;
	int n = b->g->ntensors;
	if (n > b->nwhole) {
		unsigned char *w = realloc(b->whole, (size_t)n * 2);
		if (!w)
			return -1;
		memset(w + b->nwhole, 0, (size_t)n * 2 - (size_t)b->nwhole);
		b->whole = w;
		b->nwhole = n * 2;
	}
	for (int i = 0; i < op->noutputs; i++)
		b->whole[op->out[i]] = 1;
	return 0;
}

/* One micro-batch: dim 0 (the batch) of an input tensor or a Reshape target
 * divided by b->micro; an error names what cannot be divided. */
static pl_status micro_dim0(builder *b, int64_t *dim0, const char *what, pl_err *err)
{
	if (b->micro <= 1)
		return PL_OK;
	if (*dim0 % b->micro)
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s: %s: dimension 0 (%lld) does not divide into %lld micro-batches", b->file,
		    what, (long long)*dim0, (long long)b->micro);
	*dim0 /= b->micro;
	return PL_OK;
}

static int add_tensor(builder *b, const char *name)
{
	pl_graph *g = b->g;
	if (g->ntensors == b->cap_tensors) {
		int cap = b->cap_tensors ? 2 * b->cap_tensors : 64;
		pl_tensor *t = pl_arena_alloc(g->arena, (size_t)cap * sizeof *t);
		if (!t)
			return -1;
		if (g->ntensors)
			memcpy(t, g->tensors, (size_t)g->ntensors * sizeof *t);
		g->tensors = t;
		b->cap_tensors = cap;
	}
	pl_tensor *t = &g->tensors[g->ntensors];
	memset(t, 0, sizeof *t);
	t->name = pl_arena_strdup(g->arena, name);
	if (!t->name)
		return -1;
	t->producer = -1;
	t->dtype = g->dtype;
	if (idx_add(b, &b->tensor_ix, tensor_name, g->ntensors))
		return -1;
	return g->ntensors++;
}

/* Room for every tensor the model can name (its declared tensors and its
 * ops' outputs) in one arena block: doubling in the arena keeps every
 * outgrown copy, twice the array in all. add_tensor still grows past it. */
static int reserve_tensors(builder *b, const cJSON *root)
{
	const cJSON *jt = cJSON_GetObjectItemCaseSensitive(root, "tensors"),
	            *jops = cJSON_GetObjectItemCaseSensitive(root, "ops"), *e;
	size_t n = cJSON_IsObject(jt) ? (size_t)cJSON_GetArraySize(jt) : 0;
	if (cJSON_IsArray(jops))
		cJSON_ArrayForEach (e, jops) {
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "outputs");
			int k = cJSON_IsArray(o) ? cJSON_GetArraySize(o) : 0;
			n += (size_t)(k < PL_MAX_OP_OUTPUTS ? k : PL_MAX_OP_OUTPUTS);
		}
	if (n <= (size_t)b->cap_tensors || n > INT_MAX / 2)
		return 0;
	pl_tensor *t = pl_arena_alloc(b->g->arena, n * sizeof *t);
	if (!t)
		return -1;
	if (b->g->ntensors)
		memcpy(t, b->g->tensors, (size_t)b->g->ntensors * sizeof *t);
	b->g->tensors = t;
	b->cap_tensors = (int)n;
	return 0;
}

/* The scalar attributes: each a key (for one op type, or any: -1), what
 * it must be, and where it goes in pl_attrs (with the flag that says it was
 * given, if any). What each kind checks, and its message: */
typedef enum attr_kind {
	ATTR_AXIS,    /* int64: an integer from -PL_MAX_RANK to PL_MAX_RANK */
	ATTR_FINITE,  /* double: a finite number */
	ATTR_RATIO,   /* double: a number in [0, 1) */
	ATTR_POSREAL, /* double: a finite number > 0 */
	ATTR_NUMBER,  /* double: any number but NaN */
	ATTR_BOOL,    /* int: true/false, or a number (nonzero: 1) */
	ATTR_FLAG,    /* int: the number 0 or 1 */
	ATTR_POSINT,  /* int64: an integer from 1 to 9e15 */
	ATTR_HEADS    /* int64: an integer from 1 to 1e9 */
} attr_kind;

typedef struct attr_rule {
	const char *key;
	int type;
	attr_kind kind;
	size_t off;
	ptrdiff_t given; /* offset of the int set to 1, or -1 */
} attr_rule;

#define AT(key, type, kind, field)                                                                 \
	{                                                                                          \
		key, type, kind, offsetof(pl_attrs, field), -1                                     \
	}
#define AT_GIVEN(key, type, kind, field, flag)                                                     \
	{                                                                                          \
		key, type, kind, offsetof(pl_attrs, field), offsetof(pl_attrs, flag)               \
	}
static const attr_rule attr_rules[] = {
    AT_GIVEN("axis", -1, ATTR_AXIS, axis, has_axis),
    AT("epsilon", -1, ATTR_FINITE, epsilon),
    AT("ratio", -1, ATTR_RATIO, ratio),
    AT("keepdims", -1, ATTR_BOOL, keepdims),
    AT("top_k", -1, ATTR_POSINT, top_k),
    AT("groups", -1, ATTR_POSINT, groups),
    AT("capacity_factor", -1, ATTR_POSREAL, capacity_factor),
    AT("alpha", -1, ATTR_FINITE, alpha),
    AT("beta", -1, ATTR_FINITE, beta),
    AT("gamma", -1, ATTR_FINITE, gamma),
    AT("group", -1, ATTR_POSINT, group),
    AT("ceil_mode", -1, ATTR_BOOL, ceil_mode),
    AT("count_include_pad", -1, ATTR_BOOL, count_include_pad),
    AT("training_mode", -1, ATTR_BOOL, training_mode),
    AT("min", -1, ATTR_NUMBER, min),
    AT("max", -1, ATTR_NUMBER, max),
    AT("cubic_coeff_a", PL_OP_RESIZE, ATTR_FINITE, cubic_coeff_a),
    AT("exclude_outside", PL_OP_RESIZE, ATTR_FLAG, exclude_outside),
    AT("linear_before_reset", PL_OP_GRU, ATTR_FLAG, linear_before_reset),
    AT("cell_states", PL_OP_LSTM, ATTR_FLAG, cell_states),
    AT("exclusive", PL_OP_CUMSUM, ATTR_FLAG, exclusive),
    AT("reverse", PL_OP_CUMSUM, ATTR_FLAG, reverse),
    AT("is_causal", PL_OP_ATTENTION, ATTR_BOOL, causal),
    AT("q_num_heads", PL_OP_ATTENTION, ATTR_HEADS, q_heads),
    AT("kv_num_heads", PL_OP_ATTENTION, ATTR_HEADS, kv_heads),
    AT_GIVEN("scale", PL_OP_ATTENTION, ATTR_POSREAL, scale, has_scale),
    AT("exponent", PL_OP_POW, ATTR_FINITE, exponent),
    AT("value", PL_OP_PAD, ATTR_FINITE, pad_value),
    AT("select_last_index", PL_OP_ARGMAX, ATTR_FLAG, select_last),
    AT("select_last_index", PL_OP_ARGMIN, ATTR_FLAG, select_last),
    AT("k", PL_OP_TOPK, ATTR_POSINT, k),
    AT("largest", PL_OP_TOPK, ATTR_FLAG, largest),
    AT("sorted", PL_OP_TOPK, ATTR_FLAG, sorted),
    AT("depth", PL_OP_ONEHOT, ATTR_POSINT, depth),
    AT("align_corners", PL_OP_GRIDSAMPLE, ATTR_FLAG, align_corners),
};
#undef AT
#undef AT_GIVEN

/* The rule of key for op type, or NULL. */
static const attr_rule *attr_rule_of(const char *key, int type)
{
	for (size_t i = 0; i < sizeof attr_rules / sizeof *attr_rules; i++)
		if ((attr_rules[i].type < 0 || attr_rules[i].type == type) &&
		    !strcmp(attr_rules[i].key, key))
			return &attr_rules[i];
	return NULL;
}

/* Checks e against its rule and stores it; "" when it is right, else what
 * was expected. */
static const char *attr_scalar(const attr_rule *r, const cJSON *e, pl_attrs *a, char *buf, size_t n)
{
	char *at = (char *)a + r->off;
	double v = e->valuedouble;
	int num = cJSON_IsNumber(e), whole = num && v == floor(v);
	switch (r->kind) {
	case ATTR_AXIS:
		if (!whole || fabs(v) > PL_MAX_RANK) {
			snprintf(buf, n, "an integer from %d to %d", -PL_MAX_RANK, PL_MAX_RANK);
			return buf;
		}
		*(int64_t *)at = (int64_t)v;
		break;
	case ATTR_FINITE:
	case ATTR_RATIO:
		if (!num || !isfinite(v))
			return "a finite number";
		if (r->kind == ATTR_RATIO && (v < 0 || v >= 1))
			return "a number in [0, 1)";
		*(double *)at = v;
		break;
	case ATTR_POSREAL:
		if (!num || !(v > 0) || !isfinite(v))
			return "a finite number > 0";
		*(double *)at = v;
		break;
	case ATTR_NUMBER:
		if (!num || isnan(v))
			return "a number";
		*(double *)at = v;
		break;
	case ATTR_BOOL:
		if (!num && !cJSON_IsBool(e))
			return "0 or 1";
		*(int *)at = cJSON_IsBool(e) ? cJSON_IsTrue(e) : e->valueint != 0;
		break;
	case ATTR_FLAG:
		if (!num || (v != 0 && v != 1))
			return "0 or 1";
		*(int *)at = (int)v;
		break;
	case ATTR_POSINT:
	case ATTR_HEADS:
		if (!whole || v < 1 || v > (r->kind == ATTR_HEADS ? 1e9 : 9.0e15))
			return "a positive integer";
		*(int64_t *)at = (int64_t)v;
		break;
	}
	if (r->given >= 0)
		*(int *)((char *)a + r->given) = 1;
	return "";
}

/* Every attribute name the format has, for any op type: attr_rules' and
 * those parse_attrs reads itself (a key read there belongs here too, or it is
 * neither suggested for a typo nor told apart from one on another type). */
static const char *const attr_names[] = {
    "perm",         "axes",        "shape",       "kernel_shape",
    "strides",      "dilations",   "pads",        "output_padding",
    "starts",       "ends",        "mode",        "coordinate_transformation_mode",
    "nearest_mode", "direction",   "values",      "dtype",
    "to",           "approximate", "padding_mode"};

/* A key parse_attrs does not read for op's type: a warning naming the file,
 * the op, the key and the nearest name the format has (a typo of a known
 * attribute leaves its default in place, which no model means). Not an
 * error: a model written for a later version may carry attributes this one
 * does not know. */
static pl_status unread_attr(builder *b, const pl_op *op, const char *k, pl_err *err)
{
	enum {
		NR = sizeof attr_rules / sizeof *attr_rules,
		NN = sizeof attr_names / sizeof *attr_names
	};
	const char *known[NR + NN];
	int n = 0, other = 0;
	for (int i = 0; i < NR + NN; i++) {
		const char *w = i < NR ? attr_rules[i].key : attr_names[i - NR];
		other |= !strcmp(w, k);
		known[n++] = w;
	}
	const char *near = pl_nearest_word(k, known, n);
	if (other || !near)
		return warn(b, err, "%s: op '%s': attrs.%s: not an attribute of %s; ignored",
		            b->file, op->name, k, pl_optype_name(op->type));
	return warn(b, err,
	            "%s: op '%s': attrs.%s: not an attribute of %s (did you mean '%s'?); "
	            "ignored",
	            b->file, op->name, k, pl_optype_name(op->type), near);
}

/* attrs.k of op when it is an array of integers (perm, axes, shape, a
 * window's, starts and ends): read (*taken 1), else *taken 0 */
static pl_status array_attr(builder *b, const pl_op *op, pl_attrs *a, const cJSON *e,
                            const char *where, int *taken, pl_err *err)
{
	const char *k = e->string;
	*taken = 1;
	if (!strcmp(k, "perm")) {
		pl_status st =
		    get_int_array(e, a->perm, &a->nperm, PL_MAX_RANK, 0, b->file, where, err);
		if (st)
			return st;
	} else if (!strcmp(k, "axes")) {
		pl_status st =
		    get_int_array(e, a->axes, &a->naxes, PL_MAX_RANK, 0, b->file, where, err);
		if (st)
			return st;
		a->has_axes = 1;
	} else if (!strcmp(k, "shape")) {
		pl_status st =
		    get_int_array(e, a->shape, &a->nshape, PL_MAX_RANK, 0, b->file, where, err);
		if (st)
			return st;
	} else if (!strcmp(k, "kernel_shape") || !strcmp(k, "strides") || !strcmp(k, "dilations") ||
	           !strcmp(k, "pads") || !strcmp(k, "output_padding")) {
		int pads = !strcmp(k, "pads"), opad = !strcmp(k, "output_padding");
		int64_t *v = pads                      ? a->pads
		             : opad                    ? a->output_padding
		             : !strcmp(k, "strides")   ? a->strides
		             : !strcmp(k, "dilations") ? a->dilations
		                                       : a->kernel;
		int *n = pads                      ? &a->npads
		         : opad                    ? &a->noutput_padding
		         : !strcmp(k, "strides")   ? &a->nstrides
		         : !strcmp(k, "dilations") ? &a->ndilations
		                                   : &a->nkernel;
		pl_status st = get_int_array(e, v, n, pads ? 2 * PL_MAX_RANK : PL_MAX_SPATIAL,
		                             !pads && !opad, b->file, where, err);
		if (st)
			return st;
		for (int i = 0; i < *n; i++)
			if (v[i] < 0 || v[i] > 1000000)
				return FAIL("%s: %s[%d]: expected an integer from %d to 1000000",
				            b->file, where, i, pads || opad ? 0 : 1);
	} else if (!strcmp(k, "starts") || !strcmp(k, "ends")) {
		int n = 0;
		pl_status st = get_int_array(e, !strcmp(k, "starts") ? a->starts : a->ends, &n,
		                             PL_MAX_RANK, 0, b->file, where, err);
		if (st)
			return st;
		if (a->nslices && a->nslices != n)
			return FAIL("%s: op '%s': attrs.starts and attrs.ends differ in length",
			            b->file, op->name);
		a->nslices = n;
	} else
		*taken = 0;
	return PL_OK;
}

/* attrs.k of op when it is one of the names or pairs some op types read
 * (Gelu's approximate, Pad's mode, Resize's and GridSample's modes, a
 * recurrent layer's direction, OneHot's values, a type): read (*taken 1),
 * else *taken 0 */
static pl_status named_attr(builder *b, const pl_op *op, pl_attrs *a, const cJSON *e,
                            const char *where, int *taken, pl_err *err)
{
	const char *k = e->string;
	int recurrent = op->type == PL_OP_RNN || op->type == PL_OP_GRU || op->type == PL_OP_LSTM;
	*taken = 1;
	if (op->type == PL_OP_GELU && !strcmp(k, "approximate")) {
		if (!cJSON_IsString(e) ||
		    (strcmp(e->valuestring, "none") && strcmp(e->valuestring, "tanh")))
			return FAIL("%s: %s: expected none (x Phi(x), the default) or tanh",
			            b->file, where);
		a->gelu_tanh = !strcmp(e->valuestring, "tanh");
	} else if (op->type == PL_OP_PAD && !strcmp(k, "mode")) {
		int v = 0;
		while (pl_pad_mode_name(v) &&
		       !(cJSON_IsString(e) && !strcmp(e->valuestring, pl_pad_mode_name(v))))
			v++;
		if (!pl_pad_mode_name(v))
			return FAIL("%s: %s: expected one of constant, reflect, edge, wrap",
			            b->file, where);
		a->pad_mode = v;
	} else if ((op->type == PL_OP_RESIZE &&
	            (!strcmp(k, "mode") || !strcmp(k, "coordinate_transformation_mode") ||
	             !strcmp(k, "nearest_mode"))) ||
	           (recurrent && !strcmp(k, "direction"))) {
		const char *(*name)(int) = recurrent                    ? pl_rnn_direction_name
		                           : !strcmp(k, "mode")         ? pl_resize_mode_name
		                           : !strcmp(k, "nearest_mode") ? pl_resize_nearest_name
		                                                        : pl_resize_coord_name;
		int *dst = recurrent                    ? &a->rnn_direction
		           : !strcmp(k, "mode")         ? &a->resize_mode
		           : !strcmp(k, "nearest_mode") ? &a->resize_nearest
		                                        : &a->resize_coord;
		int v = 0;
		while (name(v) && !(cJSON_IsString(e) && !strcmp(e->valuestring, name(v))))
			v++;
		if (!name(v)) {
			char known[200] = "";
			for (int i = 0; name(i); i++)
				snprintf(known + strlen(known), sizeof known - strlen(known),
				         "%s%s", i ? ", " : "", name(i));
			return FAIL("%s: %s: expected one of %s", b->file, where, known);
		}
		*dst = v;
	} else if (op->type == PL_OP_GRIDSAMPLE &&
	           (!strcmp(k, "mode") || !strcmp(k, "padding_mode"))) {
		int mode = !strcmp(k, "mode"), v = -1;
		const char *sv = cJSON_IsString(e) ? e->valuestring : "";
		if (mode)
			v = !strcmp(sv, "bilinear") || !strcmp(sv, "linear") ? PL_RESIZE_LINEAR
			    : !strcmp(sv, "nearest")                         ? PL_RESIZE_NEAREST
			                                                     : -1;
		else
			for (int i = 0; pl_grid_padding_name(i) && v < 0; i++)
				v = !strcmp(sv, pl_grid_padding_name(i)) ? i : -1;
		if (v < 0)
			return FAIL("%s: %s: expected %s", b->file, where,
			            mode ? "bilinear (or linear) or nearest" : "zeros or border");
		*(mode ? &a->resize_mode : &a->grid_padding) = v;
	} else if (op->type == PL_OP_ONEHOT && !strcmp(k, "values")) {
		const cJSON *off = cJSON_GetArrayItem(e, 0), *on = cJSON_GetArrayItem(e, 1);
		if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(off) ||
		    !cJSON_IsNumber(on) || !isfinite(off->valuedouble) ||
		    !isfinite(on->valuedouble))
			return FAIL("%s: %s: expected [off_value, on_value], two finite "
			            "numbers",
			            b->file, where);
		a->off_value = off->valuedouble;
		a->on_value = on->valuedouble;
	} else if (!strcmp(k, "to") || (op->type == PL_OP_ONEHOT && !strcmp(k, "dtype"))) {
		if (!cJSON_IsString(e) || pl_dtype_parse(e->valuestring, &a->to))
			return FAIL("%s: %s: expected one of float32, float16, bfloat16, "
			            "int32, int64, float64",
			            b->file, where);
	} else
		*taken = 0;
	return PL_OK;
}

/* An op's attrs over its type's defaults: the scalar ones by attr_rules,
 * arrays and names here (the keys that only some op types read are checked
 * only there); other keys are warned of (unread_attr) and ignored. */
static pl_status parse_attrs(builder *b, const pl_op *op, pl_attrs *a, const cJSON *jattrs,
                             pl_err *err)
{
	pl_attrs_default(op->type, a);
	if (!jattrs)
		return PL_OK;
	if (!cJSON_IsObject(jattrs))
		return FAIL("%s: op '%s': attrs: expected an object", b->file, op->name);
	const cJSON *e;
	cJSON_ArrayForEach (e, jattrs) {
		const char *k = e->string;
		char where[256];
		snprintf(where, sizeof where, "op '%s': attrs.%s", op->name, k);
		const attr_rule *r = attr_rule_of(k, op->type);
		if (r) {
			char buf[64];
			const char *want = attr_scalar(r, e, a, buf, sizeof buf);
			if (*want)
				return FAIL("%s: %s: expected %s", b->file, where, want);
			continue;
		}
		int taken;
		pl_status st = array_attr(b, op, a, e, where, &taken, err);
		if (!st && !taken)
			st = named_attr(b, op, a, e, where, &taken, err);
		if (!st && !taken)
			st = unread_attr(b, op, k, err);
		if (st)
			return st;
	}
	if (op->type == PL_OP_CLIP && a->min > a->max)
		return FAIL(
		    "%s: op '%s': attrs.min %g is above attrs.max %g: expected min <= max "
		    "(the output would be max everywhere, as ONNX defines it, which no model "
		    "means)",
		    b->file, op->name, a->min, a->max);
	return PL_OK;
}

/* Reads one op's name/type/inputs/outputs/attrs; tensors are linked later. */
typedef struct rawop {
	const cJSON *j;
	int ninputs;
	const char *inputs[PL_MAX_OP_INPUTS];
	int noutputs;
	const char *outputs[PL_MAX_OP_OUTPUTS];
	const cJSON *out_shape[PL_MAX_OP_OUTPUTS];
	const cJSON *strategy;
} rawop;

static pl_status read_names(builder *b, const char *opname, const char *field, const cJSON *arr,
                            const char **names, const cJSON **shapes, int *n, int max, pl_err *err)
{
	if (!cJSON_IsArray(arr))
		return FAIL("%s: op '%s': %s: expected an array of tensor names", b->file, opname,
		            field);
	int k = cJSON_GetArraySize(arr);
	if (k > max)
		return FAIL("%s: op '%s': %s: has %d entries, at most %d are supported", b->file,
		            opname, field, k, max);
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach (e, arr) {
		if (cJSON_IsString(e)) {
			names[i] = e->valuestring;
			if (shapes)
				shapes[i] = NULL;
		} else if (shapes && cJSON_IsObject(e) &&
		           cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "name"))) {
			names[i] = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
			shapes[i] = cJSON_GetObjectItemCaseSensitive(e, "shape");
		} else {
			return FAIL("%s: op '%s': %s[%d]: expected a tensor name", b->file, opname,
			            field, i);
		}
		i++;
	}
	*n = k;
	return PL_OK;
}

static pl_status check_shape(builder *b, const pl_op *op, const pl_tensor *t, const cJSON *js,
                             pl_err *err)
{
	int64_t shape[PL_MAX_RANK];
	int n;
	char where[256];
	snprintf(where, sizeof where, "op '%s': output '%s': shape", op->name, t->name);
	pl_status st = get_int_array(js, shape, &n, PL_MAX_RANK, 1, b->file, where, err);
	if (st)
		return st;
	int same = n == t->rank;
	for (int i = 0; same && i < n; i++)
		same = shape[i] == t->shape[i];
	if (!same) {
		char got[128] = "", want[128] = "";
		for (int i = 0; i < n; i++)
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld",
			         i ? "," : "", (long long)shape[i]);
		for (int i = 0; i < t->rank; i++)
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld",
			         i ? "," : "", (long long)t->shape[i]);
		return FAIL("%s: %s: declared [%s] but the inputs give [%s]", b->file, where, got,
		            want);
	}
	return PL_OK;
}

/* The keys the format has at the top of a model, in a tensor and in an op. */
static const char *const top_keys[] = {"format", "name", "dtype", "tensors", "ops", "outputs"};
static const char *const tensor_keys[] = {"shape", "role", "dtype", "values"};
static const char *const op_keys[] = {"name",     "type",  "inputs",    "outputs", "attrs",
                                      "strategy", "shape", "recompute", "view",    "copy"};
#define NKEYS(k) ((int)(sizeof k / sizeof *k))

/* What the reader reads of a model: the value of any other key at the top,
 * in a tensor or in an op is only warned of, so it is checked but never
 * built (a 100 MB file of such values took 4.1 GB) */
static const pl_json_shape tensor_shape = {.keys = tensor_keys, .nkeys = NKEYS(tensor_keys)};
static const pl_json_shape op_shape = {.keys = op_keys, .nkeys = NKEYS(op_keys)};
static const pl_json_shape tensors_shape = {.each = &tensor_shape};
static const pl_json_shape ops_shape = {.each = &op_shape};
static const struct pl_json_field model_fields[] = {{"tensors", &tensors_shape},
                                                    {"ops", &ops_shape}};
static const pl_json_shape model_shape = {.keys = top_keys,
                                          .nkeys = NKEYS(top_keys),
                                          .fields = model_fields,
                                          .nfields = NKEYS(model_fields)};

/* The keys of object o (the top, a tensor, an op: where, ending in what
 * goes before the key) the format does not have: a warning each naming the
 * file, the key's path and the nearest key the format has there, as for an
 * op's attributes (a typo would leave the field unread); ignored. */
static pl_status unknown_keys(builder *b, const cJSON *o, const char *const *known, int n,
                              const char *where, pl_err *err)
{
	const cJSON *e;
	cJSON_ArrayForEach (e, o) {
		int i = 0;
		while (i < n && strcmp(e->string, known[i]))
			i++;
		if (i < n)
			continue;
		pl_status st =
		    warn(b, err, "%s: %s%s: unknown key (did you mean '%s'?); ignored", b->file,
		         where, e->string, pl_nearest_word(e->string, known, n));
		if (st)
			return st;
	}
	return PL_OK;
}

/* The model file's top: format, name, dtype. */
static pl_status read_header(builder *b, const cJSON *root, pl_err *err)
{
	pl_graph *g = b->g;
	const char *file = b->file;
	if (!cJSON_IsObject(root))
		return FAIL("%s: expected a JSON object at the top", file);
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "planner.model/1"))
		return FAIL("%s: format: expected \"planner.model/1\"", file);
	const cJSON *jname = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (jname && !cJSON_IsString(jname))
		return FAIL("%s: name: expected a string", file);
	g->name = pl_arena_strdup(g->arena, jname ? jname->valuestring : "model");
	const cJSON *jdt = cJSON_GetObjectItemCaseSensitive(root, "dtype");
	g->dtype = PL_DT_FLOAT32;
	if (jdt && (!cJSON_IsString(jdt) || pl_dtype_parse(jdt->valuestring, &g->dtype)))
		return FAIL("%s: dtype: expected one of float32, float16, bfloat16, int32, int64, "
		            "float64",
		            file);
	return unknown_keys(b, root, top_keys, NKEYS(top_keys), "", err);
}

/* A const's "values": one number per element (row-major), at most
 * PL_MAX_CONST_VALUES of them; an infinity as the string "inf" or "-inf"
 * (JSON has no literal for it: a mask's -inf). None: the executor refuses
 * to run the model (it never invents a constant). */
static pl_status read_values(builder *b, const cJSON *e, pl_tensor *t, pl_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "values");
	if (!v)
		return PL_OK;
	const char *file = b->file;
	int64_t n = pl_tensor_elems(t);
	if (t->role != PL_ROLE_CONST)
		return FAIL("%s: tensors.%s.values: only a const's values are given", file,
		            e->string);
	int64_t given = 0;
	const float *read = pl_json_numbers_of(b->values, v, &given);
	if (!read && cJSON_IsArray(v))
		given = cJSON_GetArraySize(v);
	if (!cJSON_IsArray(v) || n > PL_MAX_CONST_VALUES || given != n)
		return FAIL("%s: tensors.%s.values: expected an array of its %lld elements "
		            "(at most %d)",
		            file, e->string, (long long)n, PL_MAX_CONST_VALUES);
	float *f = pl_arena_alloc(b->g->arena, sizeof(float) * (size_t)(n ? n : 1));
	if (!f)
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
	if (read) { /* checked as below by the scanner */
		memcpy(f, read, sizeof(float) * (size_t)n);
		t->values = f;
		return PL_OK;
	}
	int64_t i = 0;
	const cJSON *x;
	cJSON_ArrayForEach (x, v) {
		const char *inf = cJSON_GetStringValue(x);
		if (inf && (!strcmp(inf, "inf") || !strcmp(inf, "-inf"))) {
			f[i++] = inf[0] == '-' ? -INFINITY : INFINITY;
			continue;
		}
		if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
		    fabs(x->valuedouble) > FLT_MAX)
			return FAIL("%s: tensors.%s.values[%lld]: expected a finite float, \"inf\" "
			            "or \"-inf\"",
			            file, e->string, (long long)i);
		f[i++] = (float)x->valuedouble;
	}
	t->values = f;
	return PL_OK;
}

/* The declared tensors: inputs, params and consts with shapes and dtypes
 * (an input's batch divided among micro-batches). */
static pl_status read_tensors(builder *b, const cJSON *root, pl_err *err)
{
	pl_graph *g = b->g;
	const char *file = b->file;
	const cJSON *jt = cJSON_GetObjectItemCaseSensitive(root, "tensors");
	if (!cJSON_IsObject(jt))
		return FAIL("%s: tensors: expected an object of tensor declarations", file);
	const cJSON *e;
	cJSON_ArrayForEach (e, jt) {
		if (find_tensor(b, e->string) >= 0)
			return FAIL("%s: tensors.%s: declared twice", file, e->string);
		if (!cJSON_IsObject(e))
			return FAIL("%s: tensors.%s: expected an object with shape and role", file,
			            e->string);
		int ti = add_tensor(b, e->string);
		if (ti < 0)
			return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
		pl_tensor *t = &g->tensors[ti];
		char where[256];
		snprintf(where, sizeof where, "tensors.%s.shape", e->string);
		pl_status st = get_int_array(cJSON_GetObjectItemCaseSensitive(e, "shape"), t->shape,
		                             &t->rank, PL_MAX_RANK, 1, file, where, err);
		if (st)
			return st;
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "role");
		if (!cJSON_IsString(r))
			return FAIL(
			    "%s: tensors.%s.role: expected \"input\", \"param\" or \"const\"", file,
			    e->string);
		if (!strcmp(r->valuestring, "input"))
			t->role = PL_ROLE_INPUT;
		else if (!strcmp(r->valuestring, "param"))
			t->role = PL_ROLE_PARAM;
		else if (!strcmp(r->valuestring, "const"))
			t->role = PL_ROLE_CONST;
		else
			return FAIL(
			    "%s: tensors.%s.role: \"%s\" is not one of \"input\", \"param\", "
			    "\"const\"",
			    file, e->string, r->valuestring);
		t->requires_grad = t->role == PL_ROLE_PARAM;
		if (t->role == PL_ROLE_INPUT && t->rank > 0 &&
		    (st = micro_dim0(b, &t->shape[0], where, err)))
			return st;
		if (pl_shape_elems(t->rank, t->shape) < 0)
			return FAIL("%s: %s: the sizes' product overflows 64 bits", file, where);
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "dtype");
		if (d && (!cJSON_IsString(d) || pl_dtype_parse(d->valuestring, &t->dtype)))
			return FAIL("%s: tensors.%s.dtype: expected one of float32, float16, "
			            "bfloat16, int32, int64, float64",
			            file, e->string);
		if ((st = read_values(b, e, t, err)))
			return st;
		snprintf(where, sizeof where, "tensors.%s.", e->string);
		if ((st = unknown_keys(b, e, tensor_keys, NKEYS(tensor_keys), where, err)))
			return st;
	}
	return PL_OK;
}

/* One op of the file (ops[k]): its name, type, input and output names
 * (outputs become new activation tensors) and attributes, into b->ops[k]
 * and raw (what is linked and inferred later). */
static pl_status read_op(builder *b, const cJSON *e, int k, rawop *r, pl_err *err)
{
	pl_graph *g = b->g;
	const char *file = b->file;
	pl_op *op = &b->ops[k];
	pl_status st;
	r->j = e;
	if (!cJSON_IsObject(e))
		return FAIL("%s: ops[%d]: expected an object", file, k);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
	if (!cJSON_IsString(n) || !n->valuestring[0])
		return FAIL("%s: ops[%d].name: expected a non-empty string", file, k);
	op->name = pl_arena_strdup(g->arena, n->valuestring);
	int same = op->name ? idx_find(b, &b->op_ix, op_name, op->name) : -1;
	if (same >= 0)
		return FAIL("%s: op '%s': the name is used by ops[%d] and ops[%d]", file, op->name,
		            same, k);
	if (!op->name || idx_add(b, &b->op_ix, op_name, k))
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
	const cJSON *ty = cJSON_GetObjectItemCaseSensitive(e, "type");
	if (!cJSON_IsString(ty))
		return FAIL("%s: op '%s': type: expected an operator type name", file, op->name);
	int known = pl_optype_parse(ty->valuestring, &op->type);
	if (known == -2)
		return FAIL("%s: op '%s': type '%s' is not supported yet", file, op->name,
		            ty->valuestring);
	if (known < 0)
		return FAIL("%s: op '%s': unknown op type '%s' (expected an ONNX operator such as "
		            "MatMul, Add, Gelu, LayerNormalization, ... or SoftmaxCrossEntropy, "
		            "RMSNormalization, Silu)",
		            file, op->name, ty->valuestring);
	if ((st = read_names(b, op->name, "inputs", cJSON_GetObjectItemCaseSensitive(e, "inputs"),
	                     r->inputs, NULL, &r->ninputs, PL_MAX_OP_INPUTS, err)) ||
	    (st = read_names(b, op->name, "outputs", cJSON_GetObjectItemCaseSensitive(e, "outputs"),
	                     r->outputs, r->out_shape, &r->noutputs, PL_MAX_OP_OUTPUTS, err)))
		return st;
	if (op->type == PL_OP_POW && r->ninputs > 1) { /* the exponent a tensor */
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(e, "attrs");
		if (cJSON_GetObjectItemCaseSensitive(at, "exponent"))
			return FAIL(
			    "%s: op '%s': Pow: the exponent is given twice, as attrs.exponent and "
			    "as its second input: give one",
			    file, op->name);
		op->type = PL_OP_POW_TENSOR;
	}
	const pl_op_rule *rule = pl_op_rule_get(op->type);
	if (r->ninputs < rule->min_inputs || r->ninputs > rule->max_inputs) {
		if (rule->min_inputs == rule->max_inputs)
			return FAIL("%s: op '%s': %s takes %d input%s, got %d", file, op->name,
			            rule->name, rule->min_inputs, rule->min_inputs == 1 ? "" : "s",
			            r->ninputs);
		return FAIL("%s: op '%s': %s takes %d to %d inputs, got %d", file, op->name,
		            rule->name, rule->min_inputs, rule->max_inputs, r->ninputs);
	}
	if (r->noutputs != rule->noutputs)
		return FAIL("%s: op '%s': %s has %d output%s, got %d", file, op->name, rule->name,
		            rule->noutputs, rule->noutputs == 1 ? "" : "s", r->noutputs);
	const cJSON *os = cJSON_GetObjectItemCaseSensitive(e, "shape");
	if (os && r->noutputs == 1 && !r->out_shape[0])
		r->out_shape[0] = os;
	r->strategy = cJSON_GetObjectItemCaseSensitive(e, "strategy");
	/* the op's 0-or-1 fields: what each says, where it goes */
	static const struct {
		const char *key, *meaning;
		size_t field;
	} flags[] = {
	    {"recompute", "its forward runs again in the backward and its output is not kept",
	     offsetof(pl_op, recompute)},
	    {"view", "its output shares its input's storage", offsetof(pl_op, view)},
	    {"copy", "a clone: copied forward, its gradient handed back", offsetof(pl_op, copy)},
	};
	for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, flags[f].key);
		if (v && !(cJSON_IsNumber(v) && (v->valuedouble == 0 || v->valuedouble == 1)))
			return FAIL("%s: op '%s': %s: expected 0 or 1 (%s)", file, op->name,
			            flags[f].key, flags[f].meaning);
		*(int *)((char *)op + flags[f].field) = v && v->valuedouble == 1;
	}
	if (op->view && op->type != PL_OP_RESHAPE && op->type != PL_OP_SLICE)
		return FAIL("%s: op '%s': view: only a Reshape's or a Slice's output can share its "
		            "input's storage, not a %s's",
		            file, op->name, rule->name);
	if (op->copy && op->type != PL_OP_IDENTITY)
		return FAIL("%s: op '%s': copy: only an Identity can be a clone, not a %s", file,
		            op->name, rule->name);
	char where[256];
	snprintf(where, sizeof where, "op '%s': ", op->name);
	if ((st = unknown_keys(b, e, op_keys, NKEYS(op_keys), where, err)))
		return st;
	op->ninputs = r->ninputs;
	op->noutputs = r->noutputs;
	for (int i = 0; i < r->noutputs; i++) {
		int t = find_tensor(b, r->outputs[i]);
		if (t >= 0 && g->tensors[t].producer >= 0)
			return FAIL("%s: op '%s': output '%s' is also produced by op '%s'", file,
			            op->name, r->outputs[i], b->ops[g->tensors[t].producer].name);
		if (t >= 0)
			return FAIL(
			    "%s: op '%s': output '%s' is declared in tensors as %s; outputs "
			    "must be new names",
			    file, op->name, r->outputs[i], pl_role_name(g->tensors[t].role));
		int ti = add_tensor(b, r->outputs[i]);
		if (ti < 0)
			return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
		g->tensors[ti].role = PL_ROLE_ACTIVATION;
		g->tensors[ti].producer = k;
		g->tensors[ti].producer_slot = i;
		op->out[i] = ti;
	}
	/* zeroed whole: records are compared byte for byte, padding included */
	pl_attrs a;
	memset(&a, 0, sizeof a);
	if ((st = parse_attrs(b, op, &a, cJSON_GetObjectItemCaseSensitive(e, "attrs"), err)))
		return st;
	char what[256];
	if ((pl_op_traits(op) & PL_OPT_EXPERTS) && b->micro > 1) {
		/* a micro-batch holds whole token groups */
		snprintf(what, sizeof what, "op '%s': attrs.groups", op->name);
		if ((st = micro_dim0(b, &a.groups, what, err)))
			return st;
	}
	/* a Reshape's or an Expand's target names the batch unless it is 1 (a
	 * broadcast leaves the input's; a batch of 1 has no micro-batches: a
	 * scalar reshaped to [1, 1, ...]); not a weight's or a constant's, nor
	 * of what is computed from those alone */
	int whole = r->ninputs > 0 && batchless(b, r->inputs[0]);
	if (b->micro > 1 && mark_batchless(b, r->inputs, op))
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
	if (a.nshape > 0 && !whole && (op->type == PL_OP_RESHAPE || op->type == PL_OP_EXPAND) &&
	    a.shape[0] > 1) {
		snprintf(what, sizeof what, "op '%s': attrs.shape", op->name);
		if ((st = micro_dim0(b, &a.shape[0], what, err)))
			return st;
	}
	if (!(op->attrs = attrs_record(b, op->type, &a)))
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
	return PL_OK;
}

/* Every op's inputs resolved to tensors; indeg[o]: its inputs an op makes. */
static pl_status link_inputs(builder *b, const rawop *raw, int nops, int *indeg, pl_err *err)
{
	pl_graph *g = b->g;
	pl_op *ops = b->ops;
	for (int o = 0; o < nops; o++) {
		for (int i = 0; i < raw[o].ninputs; i++) {
			int ti = find_tensor(b, raw[o].inputs[i]);
			if (ti < 0)
				return FAIL(
				    "%s: op '%s': input '%s' is neither declared in tensors nor "
				    "produced by an op",
				    b->file, ops[o].name, raw[o].inputs[i]);
			ops[o].in[i] = ti;
			g->tensors[ti].nconsumers++;
			if (g->tensors[ti].producer >= 0)
				indeg[o]++;
		}
	}
	return PL_OK;
}

/* Topological order into order[], stable in file order (Kahn, always the
 * smallest ready op: a min-heap of the ready ones, each tensor's consumers
 * listed once); indeg[] is used up. PL_EINVAL naming an op on a cycle. */
static pl_status topo_order(builder *b, int nops, int *indeg, int *order, pl_err *err)
{
	const pl_op *ops = b->ops;
	int T = b->g->ntensors, done = 0, hn = 0;
	pl_status st = PL_OK;
	size_t nin = 0;
	for (int o = 0; o < nops; o++)
		nin += (size_t)ops[o].ninputs;
	int *cstart = pl_calloc((size_t)T + 2, sizeof *cstart);
	int *clist = pl_malloc(sizeof *clist * (nin + 1));
	int *heap = pl_malloc(sizeof *heap * ((size_t)nops + 1));
	char *placed = pl_calloc((size_t)nops + 1, 1);
	if (!cstart || !clist || !heap || !placed) {
		st = pl_err_set(err, PL_ENOMEM, "%s: out of memory", b->file);
		goto done;
	}
	for (int o = 0; o < nops; o++)
		for (int i = 0; i < ops[o].ninputs; i++)
			cstart[ops[o].in[i] + 2]++;
	for (int t = 0; t < T; t++)
		cstart[t + 2] += cstart[t + 1];
	for (int o = 0; o < nops; o++)
		for (int i = 0; i < ops[o].ninputs; i++)
			clist[cstart[ops[o].in[i] + 1]++] = o;
	/* now consumers of t are clist[cstart[t] .. cstart[t + 1]) */
	for (int o = 0; o < nops; o++)
		if (indeg[o] == 0)
			heap[hn++] = o; /* ascending: already a min-heap */
	while (done < nops) {
		if (hn == 0) {
			int on = -1;
			for (int o = 0; o < nops && on < 0; o++)
				if (!placed[o])
					on = o;
			st = FAIL("%s: op '%s': the ops form a cycle through it (an op consumes a "
			          "tensor that depends on its own output)",
			          b->file, ops[on].name);
			break;
		}
		int pick = heap[0];
		heap[0] = heap[--hn];
		for (int k = 0;;) { /* sift down */
			int l = 2 * k + 1, r = l + 1, m = k;
			if (l < hn && heap[l] < heap[m])
				m = l;
			if (r < hn && heap[r] < heap[m])
				m = r;
			if (m == k)
				break;
			int tmp = heap[k];
			heap[k] = heap[m];
			heap[m] = tmp;
			k = m;
		}
		placed[pick] = 1;
		order[done++] = pick;
		for (int i = 0; i < ops[pick].noutputs; i++) {
			int t = ops[pick].out[i];
			for (int c = cstart[t]; c < cstart[t + 1]; c++) {
				int o = clist[c];
				if (--indeg[o] != 0)
					continue;
				int k = hn++; /* sift up */
				heap[k] = o;
				while (k > 0 && heap[(k - 1) / 2] > heap[k]) {
					int tmp = heap[k];
					heap[k] = heap[(k - 1) / 2];
					heap[(k - 1) / 2] = tmp;
					k = (k - 1) / 2;
				}
			}
		}
	}
done:
	free(cstart);
	free(clist);
	free(heap);
	free(placed);
	return st;
}

/* g->ops in topological order: b->ops permuted in place (a second array
 * of ops would be the largest thing a big model holds, 1.3 KB an op), one
 * cycle of the permutation at a time; producers renumbered and every
 * tensor's consumers listed (newidx: scratch of nops). */
static pl_status place_ops(builder *b, int nops, const int *order, int *newidx, pl_err *err)
{
	pl_graph *g = b->g;
	g->nops = nops;
	g->ops = b->ops;
	for (int i = 0; i < nops; i++)
		newidx[order[i]] = i;
	/* position i takes the op read at order[i]; done[i]: position i holds
	 * its op */
	char *done = pl_calloc((size_t)nops + 1, 1);
	if (!done)
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", b->file);
	for (int i = 0; i < nops; i++) {
		if (done[i])
			continue;
		pl_op held = g->ops[i];
		int j = i;
		while (order[j] != i) {
			g->ops[j] = g->ops[order[j]];
			done[j] = 1;
			j = order[j];
		}
		g->ops[j] = held;
		done[j] = 1;
	}
	free(done);
	for (int t = 0; t < g->ntensors; t++) {
		pl_tensor *tt = &g->tensors[t];
		if (tt->producer >= 0)
			tt->producer = newidx[tt->producer];
		tt->consumers =
		    pl_arena_alloc(g->arena, (size_t)(tt->nconsumers + 1) * sizeof(int));
		tt->consumer_slots =
		    pl_arena_alloc(g->arena, (size_t)(tt->nconsumers + 1) * sizeof(int));
		if (!tt->consumers || !tt->consumer_slots)
			return pl_err_set(err, PL_ENOMEM, "%s: out of memory", b->file);
		tt->nconsumers = 0;
	}
	for (int o = 0; o < nops; o++)
		for (int i = 0; i < g->ops[o].ninputs; i++) {
			pl_tensor *tt = &g->tensors[g->ops[o].in[i]];
			tt->consumers[tt->nconsumers] = o;
			tt->consumer_slots[tt->nconsumers++] = i;
		}
	return PL_OK;
}

/* An op's strategy annotation: MindSpore tuples, one per input. */
static pl_status read_strategy(builder *b, pl_op *op, const cJSON *js, pl_err *err)
{
	const char *file = b->file;
	int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK];
	int ranks[PL_MAX_OP_INPUTS] = {0};
	int nt = 0;
	pl_status st;
	if (!cJSON_IsArray(js) || cJSON_GetArraySize(js) > PL_MAX_OP_INPUTS)
		return FAIL("%s: op '%s': strategy: expected one array of split counts per input",
		            file, op->name);
	const cJSON *tu;
	cJSON_ArrayForEach (tu, js) {
		char where[256];
		snprintf(where, sizeof where, "op '%s': strategy[%d]", op->name, nt);
		if ((st = get_int_array(tu, tuples[nt], &ranks[nt], PL_MAX_RANK, 1, file, where,
		                        err)))
			return st;
		nt++;
	}
	op->strategy = pl_arena_alloc(b->g->arena, sizeof(int64_t) * PL_MAX_LOOPS);
	if (!op->strategy)
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
	if ((st = pl_op_tuples_to_split(b->g, op, tuples, ranks, nt, op->strategy, err))) {
		pl_err_prefix(err, "%s: op '%s': strategy", file, op->name);
		return st;
	}
	op->has_strategy = 1;
	return PL_OK;
}

/* Shape inference in topological order (each op's rule), then the output
 * shapes the file declares checked and the strategy annotations read. */
static pl_status infer_shapes(builder *b, const rawop *raw, const int *order, pl_err *err)
{
	pl_graph *g = b->g;
	pl_status st;
	for (int o = 0; o < g->nops; o++) {
		pl_op *op = &g->ops[o];
		const rawop *r = &raw[order[o]];
		for (int i = 0; i < op->noutputs; i++) {
			int rg = 0;
			for (int j = 0; j < op->ninputs; j++)
				rg |= g->tensors[op->in[j]].requires_grad;
			g->tensors[op->out[i]].requires_grad = rg;
		}
		if ((st = pl_op_rule_get(op->type)->infer(g, op, err))) {
			pl_err_prefix(err, "%s: op '%s' (%s)", b->file, op->name,
			              pl_optype_name(op->type));
			return st;
		}
		/* what every later op and the search may multiply and add */
		for (int i = 0; i < op->noutputs; i++) {
			const pl_tensor *t = &g->tensors[op->out[i]];
			if (pl_shape_elems(t->rank, t->shape) >= 0)
				continue;
			char dims[256] = "";
			for (int d = 0; d < t->rank; d++)
				snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld",
				         d ? ", " : "", (long long)t->shape[d]);
			return FAIL("%s: op '%s' (%s): output '%s' of shape [%s]: a dimension past "
			            "9e15 or the sizes' product overflows 64 bits",
			            b->file, op->name, pl_optype_name(op->type), t->name, dims);
		}
		op->replica_minor = 1;
		for (int i = 0; i < op->ninputs; i++)
			if (pl_is_weight(&g->tensors[op->in[i]]))
				op->replica_minor = 0;
		for (int i = 0; i < op->noutputs; i++)
			if (r->out_shape[i] && b->micro <= 1 &&
			    (st =
			         check_shape(b, op, &g->tensors[op->out[i]], r->out_shape[i], err)))
				return st;
		if (r->strategy && (st = read_strategy(b, op, r->strategy, err)))
			return st;
	}
	return PL_OK;
}

/* The model's outputs: tensors some op produces. */
static pl_status read_outputs(builder *b, const cJSON *root, pl_err *err)
{
	pl_graph *g = b->g;
	const char *file = b->file;
	const cJSON *jo = cJSON_GetObjectItemCaseSensitive(root, "outputs"), *e;
	if (!jo)
		return PL_OK;
	if (!cJSON_IsArray(jo))
		return FAIL("%s: outputs: expected an array of tensor names", file);
	g->noutputs = cJSON_GetArraySize(jo);
	g->outputs = pl_arena_alloc(g->arena, (size_t)(g->noutputs + 1) * sizeof(int));
	int i = 0;
	cJSON_ArrayForEach (e, jo) {
		int ti = cJSON_IsString(e) ? find_tensor(b, e->valuestring) : -1;
		if (!cJSON_IsString(e))
			return FAIL("%s: outputs[%d]: expected a tensor name", file, i);
		if (ti < 0 || g->tensors[ti].producer < 0)
			return FAIL("%s: outputs[%d]: no op produces '%s'", file, i,
			            e->valuestring);
		g->outputs[i++] = ti;
	}
	return PL_OK;
}

/* The graph of a model file: header, tensors, ops (read in file order), inputs
 * linked, ops placed in topological order, shapes inferred, outputs. */
static pl_status build(builder *b, const cJSON *root, pl_err *err)
{
	pl_graph *g = b->g;
	const char *file = b->file;
	pl_status st;
	if ((st = read_header(b, root, err)))
		return st;
	if (reserve_tensors(b, root))
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
	if ((st = read_tensors(b, root, err)))
		return st;
	const cJSON *jops = cJSON_GetObjectItemCaseSensitive(root, "ops"), *e;
	if (!cJSON_IsArray(jops))
		return FAIL("%s: ops: expected an array of operators", file);
	int nops = cJSON_GetArraySize(jops);
	if (nops == 0)
		return FAIL("%s: ops: the model has no operators", file);
	b->ops = pl_arena_alloc(g->arena, (size_t)nops * sizeof *b->ops);
	rawop *raw = pl_calloc((size_t)nops, sizeof *raw);
	int *order = pl_calloc((size_t)nops, sizeof *order);
	int *indeg = pl_calloc((size_t)nops, sizeof *indeg);
	if (!b->ops || !raw || !order || !indeg) {
		st = pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
		goto cleanup;
	}
	int k = 0;
	cJSON_ArrayForEach (e, jops) {
		if ((st = read_op(b, e, k, &raw[k], err)))
			goto cleanup;
		k++;
	}
	if (!(st = link_inputs(b, raw, nops, indeg, err)) &&
	    !(st = topo_order(b, nops, indeg, order, err)) &&
	    !(st = place_ops(b, nops, order, indeg, err)) &&
	    !(st = infer_shapes(b, raw, order, err)))
		st = read_outputs(b, root, err);
cleanup:
	free(raw);
	free(order);
	free(indeg);
	return st;
}

/* A graph of one micro-batch of micro (1: the whole batch) from the parsed
 * document root (values: its consts' numbers); the source text and its
 * sha256 are the caller's to set. */
static pl_status graph_from_doc(pl_graph **out, const cJSON *root, pl_json_numbers *values,
                                const char *name, int64_t micro, pl_err *err)
{
	pl_status st;
	pl_graph *g = NULL;
	pl_arena *a = pl_arena_new();
	if (a)
		g = pl_arena_alloc(a, sizeof *g);
	if (!g) {
		pl_arena_free(a);
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", name);
	}
	g->arena = a;
	g->path = pl_arena_strdup(a, name);
	builder b = {.g = g, .file = name, .micro = micro, .values = values};
	st = build(&b, (cJSON *)root, err);
	free(b.tensor_ix.slot);
	free(b.op_ix.slot);
	free(b.attrs.slot);
	free(b.whole);
	if (!st && b.warn && !(g->warnings = pl_arena_strdup(a, b.warn)))
		st = pl_err_set(err, PL_ENOMEM, "%s: out of memory", name);
	g->nwarnings = b.nwarn;
	free(b.warn);
	if (st) {
		pl_arena_free(a);
		return st;
	}
	g->micro_batches = micro > 1 ? micro : 1;
	uint64_t *hs = pl_arena_alloc(a, sizeof *hs * ((size_t)g->nops + 1));
	if (!hs) {
		pl_arena_free(a);
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", name);
	}
	for (int o = 0; o < g->nops; o++)
		hs[o] = pl_op_hash(g, o);
	g->op_hash = hs;
	*out = g;
	return PL_OK;
}

/* g keeps a copy of the text it was read from (micro-batches are cut from
 * it), and its sha256: sha (the whole model's) or, NULL, the text's. */
static pl_status keep_source(pl_graph *g, const char *text, size_t len, const char *sha,
                             pl_err *err)
{
	g->source_len = len;
	char *src = pl_arena_alloc(g->arena, len + 1);
	if (!src)
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", g->path);
	memcpy(src, text, len);
	src[len] = 0;
	g->source = src;
	if (sha) {
		memcpy(g->sha256, sha, sizeof g->sha256);
		return PL_OK;
	}
	struct sha256_ctx ctx;
	uint8_t dig[SHA256_DIGEST_SIZE];
	sha256_init(&ctx);
	sha256_update(&ctx, len, (const uint8_t *)text);
	sha256_digest(&ctx, sizeof dig, dig);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(g->sha256 + 2 * i, 3, "%02x", dig[i]);
	return PL_OK;
}

static pl_status load_json(pl_graph **out, const char *text, size_t len, const char *name,
                           int64_t micro, pl_err *err)
{
	cJSON *root;
	/* a const's values as floats, not a node each (84 bytes a number) */
	pl_json_numbers values = {0};
	pl_status st =
	    pl_json_parse_shaped(text, len, name, &model_shape, "values", &root, &values, err);
	if (st)
		return st;
	pl_graph *g = NULL;
	st = graph_from_doc(&g, root, &values, name, micro, err);
	/* the document is not needed past here: gone before the source is copied */
	cJSON_Delete(root);
	pl_json_numbers_free(&values);
	if (!st && (st = keep_source(g, text, len, NULL, err))) {
		pl_graph_free(g);
		g = NULL;
	}
	if (!st)
		*out = g;
	return st;
}

/* Deletes from o what shape does not read: keys of its objects the format
 * does not have (their values came out of pl_json_parse_shaped as 0). */
static void drop_unread(cJSON *o, const pl_json_shape *sh)
{
	if (!o || !sh)
		return;
	if (sh->each) {
		cJSON *c;
		cJSON_ArrayForEach (c, o)
			drop_unread(c, sh->each);
		return;
	}
	if (!cJSON_IsObject(o))
		return;
	for (cJSON *c = o->child, *next; c; c = next) {
		next = c->next;
		int known = 0;
		for (int k = 0; k < sh->nkeys && !known; k++)
			known = c->string && !strcmp(c->string, sh->keys[k]);
		if (!known) {
			cJSON_Delete(cJSON_DetachItemViaPointer(o, c));
			continue;
		}
		for (int f = 0; f < sh->nfields; f++)
			if (!strcmp(c->string, sh->fields[f].key))
				drop_unread(c, sh->fields[f].shape);
	}
}

pl_status pl_graph_doc(const pl_graph *g, cJSON **out, pl_err *err)
{
	*out = NULL;
	cJSON *root = NULL;
	pl_status st = pl_json_parse_shaped(g->source, g->source_len, g->path, &model_shape, NULL,
	                                    &root, NULL, err);
	if (st)
		return st;
	drop_unread(root, &model_shape);
	*out = root;
	return PL_OK;
}

pl_status pl_graph_load_json(pl_graph **out, const char *text, size_t len, const char *name,
                             pl_err *err)
{
	if (!out || !text || !name)
		return pl_err_set(err, PL_EINVAL, "pl_graph_load_json: NULL argument");
	return load_json(out, text, len, name, 1, err);
}

pl_status pl_graph_microbatch(const pl_graph *g, int64_t m, pl_graph **out, pl_err *err)
{
	pl_status st;
	return pl_graph_microbatches(g, 1, &m, out, &st, err, 0) ? st : PL_OK;
}

int pl_graph_microbatches(const pl_graph *g, int n, const int64_t *ms, pl_graph **out,
                          pl_status *st, pl_err *err, double deadline)
{
	int bad = 0;
	for (int k = 0; k < n; k++) {
		out[k] = NULL;
		st[k] = PL_OK;
	}
	for (int k = 0; k < n; k++)
		if (!g->source || g->micro_batches != 1 || ms[k] < 1) {
			for (int j = 0; j < n; j++)
				st[j] = pl_err_set(
				    &err[j], PL_EINVAL,
				    "%s: micro-batches are cut from a whole model loaded from JSON",
				    g->path);
			return n;
		}
	/* the document read once, every micro-batch count's graph built from it */
	cJSON *root;
	pl_json_numbers values = {0};
	pl_status ps = pl_json_parse_numbers(g->source, g->source_len, g->path, "values", &root,
	                                     &values, &err[0]);
	if (ps) {
		for (int j = 0; j < n; j++) {
			st[j] = ps;
			err[j] = err[0];
		}
		return n;
	}
	for (int k = 0; k < n; k++) {
		if (deadline > 0 && pl_now() > deadline) {
			st[k] = pl_err_set(&err[k], PL_ETIMEOUT, "the time limit ran out");
			bad++;
			continue;
		}
		if ((st[k] = graph_from_doc(&out[k], root, &values, g->path, ms[k], &err[k])) ||
		    (st[k] = keep_source(out[k], g->source, g->source_len, g->sha256, &err[k]))) {
			pl_graph_free(out[k]);
			out[k] = NULL;
			bad++;
		}
	}
	cJSON_Delete(root);
	pl_json_numbers_free(&values);
	return bad;
}

int pl_onnx_path(const char *path)
{
	size_t n = strlen(path);
	return n > 5 && !strcmp(path + n - 5, ".onnx");
}

pl_status pl_graph_load_file_opts(pl_graph **out, const char *path, const pl_onnx_opts *o,
                                  pl_err *err)
{
	char *buf;
	size_t len;
	pl_status st = pl_read_file(path, &buf, &len, err);
	if (st)
		return st;
	if (pl_onnx_path(path)) { /* imported, then read like any model file */
		cJSON *doc = NULL;
		st = pl_onnx_to_model((const unsigned char *)buf, len, path, o, &doc, err);
		free(buf);
		if (st)
			return st;
		buf = cJSON_PrintUnformatted(doc);
		cJSON_Delete(doc);
		if (!buf)
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		len = strlen(buf);
	}
	st = pl_graph_load_json(out, buf, len, path, err);
	free(buf);
	return st;
}

pl_status pl_graph_load_file(pl_graph **out, const char *path, pl_err *err)
{
	return pl_graph_load_file_opts(out, path, NULL, err);
}
