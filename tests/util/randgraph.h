/* Random small models for differential tests (dp, later ilp, against brute).
 * Each graph is written as planner.model/1 JSON and loaded through the real
 * importer. */
#ifndef PL_TEST_RANDGRAPH_H
#define PL_TEST_RANDGRAPH_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rg_rng {
	uint64_t s;
} rg_rng;

static inline uint32_t rg_next(rg_rng *r)
{
	r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(r->s >> 33);
}

static inline int rg_int(rg_rng *r, int n)
{
	return (int)(rg_next(r) % (uint32_t)n);
}

typedef struct rg_tensor {
	char name[32];
	int rank;
	long shape[3];
} rg_tensor;

typedef struct rg_buf {
	char *p;
	size_t n, cap;
} rg_buf;

static inline void rg_printf(rg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void rg_printf(rg_buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if ((size_t)k < b->cap - b->n) {
			b->n += (size_t)k;
			return;
		}
		b->cap = b->cap * 2 + 4096;
		b->p = realloc(b->p, b->cap);
	}
}

static const long rg_dims[] = {12, 24, 48, 24, 12};

/* One op of rg_model's block: kind applied to act[pick], the output's shape
 * into *out; lo is the first activation the block may read (residuals),
 * np the next weight's number. */
static inline void rg_block_op(rg_rng *r, rg_buf *params, rg_buf *ops, const rg_tensor *act,
                               int nact, int lo, int pick, int kind, long width, int repeat, int k,
                               int *np, rg_tensor *out)
{
	const rg_tensor *t = &act[pick];
	if (t->rank != 2 && kind != 2 && kind != 3)
		kind = 2; /* keep the exotic ops on 2-D inputs */
	char sep = ops->n ? ',' : ' ';
	switch (kind) {
	case 0: /* MatMul with a weight */
	case 1: {
		long n = width;
		rg_printf(params, ",\"w%d\":{\"shape\":[%ld,%ld],\"role\":\"param\"}", *np,
		          t->shape[t->rank - 1], n);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"MatMul\",\"inputs\":[\"%"
		          "s\",\"w%d\"],\"outputs\":[\"%s\"]}",
		          sep, k, t->name, *np, out->name);
		(*np)++;
		out->shape[out->rank - 1] = n;
		break;
	}
	case 2:
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[\"%s\"]"
		          ",\"outputs\":[\"%s\"]}",
		          sep, k, rg_int(r, 2) ? "Relu" : "Gelu", t->name, out->name);
		break;
	case 3: /* bias add */
		rg_printf(params, ",\"w%d\":{\"shape\":[%ld],\"role\":\"param\"}", *np,
		          t->shape[t->rank - 1]);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Add\",\"inputs\":[\"%"
		          "s\",\"w%d\"],\"outputs\":[\"%s\"]}",
		          sep, k, t->name, *np, out->name);
		(*np)++;
		break;
	case 4:
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Softmax\",\"inputs\":["
		          "\"%s\"],\"outputs\":[\"%s\"],\"attrs\":{\"axis\":-1}}",
		          sep, k, t->name, out->name);
		break;
	case 5:
		rg_printf(params,
		          ",\"w%d\":{\"shape\":[%ld],\"role\":\"param\"},\"w%db\":{"
		          "\"shape\":[%ld],\"role\":\"param\"}",
		          *np, t->shape[1], *np, t->shape[1]);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"LayerNormalization\","
		          "\"inputs\":[\"%s\",\"w%d\",\"w%db\"],\"outputs\":[\"%s\"]}",
		          sep, k, t->name, *np, *np, out->name);
		(*np)++;
		break;
	case 6:
		if (repeat > 1 && t->shape[0] != t->shape[1])
			goto relu; /* blocks must keep their shape to repeat */
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Transpose\",\"inputs\":[\"%"
		          "s\"],\"outputs\":[\"%s\"],\"attrs\":{\"perm\":[1,0]}}",
		          sep, k, t->name, out->name);
		out->shape[0] = t->shape[1];
		out->shape[1] = t->shape[0];
		break;
	case 7: { /* residual with an earlier tensor of the same shape */
		int other = -1;
		for (int j = nact - 1; j >= lo && other < 0; j--)
			if (act[j].rank == t->rank && act[j].shape[0] == t->shape[0] &&
			    act[j].shape[1] == t->shape[1] && j != pick)
				other = j;
		if (other < 0)
			goto relu;
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[\"%s\","
		          "\"%s\"],\"outputs\":[\"%s\"]}",
		          sep, k, rg_int(r, 2) ? "Add" : "Mul", t->name, act[other].name,
		          out->name);
		break;
	}
	case 8: /* a weight used by the matmul as the left operand */
		rg_printf(params, ",\"w%d\":{\"shape\":[%ld,%ld],\"role\":\"param\"}", *np,
		          t->shape[0], t->shape[0]);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"MatMul\",\"inputs\":["
		          "\"w%d\",\"%s\"],\"outputs\":[\"%s\"]}",
		          sep, k, *np, t->name, out->name);
		(*np)++;
		break;
	case 9: /* reshape [a,b] -> [a, b/2, 2] -> back via a second reshape later
	         */
		if (repeat > 1 || t->shape[1] % 2)
			goto relu;
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Reshape\",\"inputs\":[\"%s\"],"
		          "\"outputs\":[\"%s\"],\"attrs\":{\"shape\":[%ld,%ld,2]}}",
		          sep, k, t->name, out->name, t->shape[0], t->shape[1] / 2);
		out->rank = 3;
		out->shape[1] = t->shape[1] / 2;
		out->shape[2] = 2;
		break;
	default:
	relu:
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Tanh\",\"inputs\":[\"%"
		          "s\"],\"outputs\":[\"%s\"]}",
		          sep, k, t->name, out->name);
		break;
	}
}

/* Writes a random model of nops ops (block repeated `repeat` times if > 1,
 * chained through one activation). Returns malloc'd JSON. */
static inline char *rg_model(rg_rng *r, int nops, int repeat)
{
	rg_buf params = {0}, ops = {0};
	params.p = malloc(1);
	params.cap = 1;
	params.p[0] = 0;
	ops.p = malloc(1);
	ops.cap = 1;
	ops.p[0] = 0;
	rg_tensor act[64];
	int nact = 1, k = 0, np = 0;
	long B = rg_dims[rg_int(r, 5)], H = rg_dims[rg_int(r, 5)];
	act[0] = (rg_tensor){"x", 2, {B, H, 0}};
	const char *dtype = rg_int(r, 3) == 0 ? "bfloat16" : "float32";
	/* the kinds of op a block is made of, chosen once so blocks repeat */
	int kinds[16];
	for (int i = 0; i < nops; i++)
		kinds[i] = rg_int(r, 11);
	long widths[16];
	for (int i = 0; i < nops; i++)
		widths[i] = rg_dims[rg_int(r, 5)];
	for (int rep = 0; rep < (repeat > 1 ? repeat : 1); rep++) {
		/* a repeated block reads only the last activation */
		int lo = repeat > 1 ? nact - 1 : 0;
		for (int i = 0; i < nops; i++, k++) {
			int pick = repeat > 1 ? nact - 1 : lo + rg_int(r, nact - lo);
			rg_tensor out = act[pick];
			snprintf(out.name, sizeof out.name, "t%d", k);
			rg_block_op(r, &params, &ops, act, nact, lo, pick, kinds[i], widths[i],
			            repeat, k, &np, &out);
			act[nact++] = out;
		}
	}
	rg_buf all = {0};
	all.p = malloc(1);
	all.cap = 1;
	rg_printf(
	    &all,
	    "{\"format\":\"planner.model/1\",\"name\":\"random\",\"dtype\":\"%s\",\"tensors\":"
	    "{\"x\":{\"shape\":[%ld,%ld],\"role\":\"%s\"}%s},\"ops\":[%s]}",
	    dtype, B, H, rg_int(r, 2) ? "input" : "param", params.p, ops.p);
	free(params.p);
	free(ops.p);
	return all.p;
}

/* ---- irregular models (rec against dp, issue 47) ----
 * Ranks 2 to 4; any earlier activation may be read again (fan-out); residual
 * Add/Mul, Concat and activation-by-activation MatMul join branches (fan-in);
 * convolutions with batch norms on images, layer norms, softmax, reductions
 * and reshapes between ranks; a second input and a loss some of the time.
 * Dimensions are multiples of 12 (2, 3, 4, 6 and 12 divide them), scaled per
 * graph so that some graphs are compute-bound and others latency-bound. */
typedef struct rg_mt {
	char name[32];
	int rank;
	long shape[4];
} rg_mt;

static inline int rg_mt_same(const rg_mt *a, const rg_mt *b, int but)
{
	if (a->rank != b->rank)
		return 0;
	for (int d = 0; d < a->rank; d++)
		if (d != but && a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

/* an earlier activation other than t shaped like t (all dimensions, or all
 * but `but`), the latest first; -1 if none */
static inline int rg_mt_find(const rg_mt *act, int nact, int t, int but)
{
	for (int j = nact - 1; j >= 0; j--)
		if (j != t && rg_mt_same(&act[j], &act[t], but))
			return j;
	return -1;
}

static inline void rg_mt_shape(rg_buf *b, const rg_mt *t)
{
	rg_printf(b, "[");
	for (int d = 0; d < t->rank; d++)
		rg_printf(b, "%s%ld", d ? "," : "", t->shape[d]);
	rg_printf(b, "]");
}

/* One op of rg_model_mixed on the image act[pick] (rank 4): a convolution,
 * batch norm, residual or channel concat, or pooling, written to ts (weights)
 * and ops, its output's shape into *out. Returns 1 where the op falls back to
 * a unary activation (the caller writes it), 0 when written. */
static inline int rg_mixed_image_op(rg_rng *r, rg_buf *ts, rg_buf *ops, const rg_mt *act, int nact,
                                    int pick, int kind, long sc, int k, int *np, rg_mt *out)
{
	static const long base[] = {12, 24, 48, 96};
	const rg_mt *t = &act[pick];
	char sep = ops->n ? ',' : ' ';
	switch (kind % 6) {
	case 0:
	case 1: { /* Conv 3x3, same size */
		long co = base[rg_int(r, 2)] * (sc > 4 ? 4 : 1);
		rg_printf(ts, ",\"w%d\":{\"shape\":[%ld,%ld,3,3],\"role\":\"param\"}", *np, co,
		          t->shape[1]);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Conv\",\"inputs\":[\"%s\","
		          "\"w%d\"],\"outputs\":[\"%s\"],\"attrs\":{\"pads\":[1,1,1,1]}}",
		          sep, k, t->name, *np, out->name);
		(*np)++;
		out->shape[1] = co;
		break;
	}
	case 2:
		rg_printf(ts,
		          ",\"w%d\":{\"shape\":[%ld],\"role\":\"param\"},\"w%db\":{"
		          "\"shape\":[%ld],\"role\":\"param\"}",
		          *np, t->shape[1], *np, t->shape[1]);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"BatchNormalization\","
		          "\"inputs\":[\"%s\",\"w%d\",\"w%db\"],\"outputs\":[\"%s\"],"
		          "\"attrs\":{\"training_mode\":1}}",
		          sep, k, t->name, *np, *np, out->name);
		(*np)++;
		break;
	case 3: { /* residual, or a channel concat (DenseNet) */
		int o = rg_mt_find(act, nact, pick, -1), cat = rg_int(r, 2);
		if (cat || o < 0)
			o = rg_mt_find(act, nact, pick, 1), cat = 1;
		if (o < 0)
			return 1;
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[\"%s\","
		          "\"%s\"],\"outputs\":[\"%s\"]%s}",
		          sep, k, cat ? "Concat" : "Add", t->name, act[o].name, out->name,
		          cat ? ",\"attrs\":{\"axis\":1}" : "");
		if (cat)
			out->shape[1] += act[o].shape[1];
		break;
	}
	case 4: /* global average pool: to [B, C] */
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"ReduceMean\",\"inputs\":["
		          "\"%s\"],\"outputs\":[\"%s\"],\"attrs\":{\"axes\":[2,3],"
		          "\"keepdims\":0}}",
		          sep, k, t->name, out->name);
		out->rank = 2;
		break;
	default: return 1;
	}
	return 0;
}

/* One op of rg_model_mixed on act[pick] of rank 2 or 3, as rg_mixed_image_op */
static inline int rg_mixed_op(rg_rng *r, rg_buf *ts, rg_buf *ops, const rg_mt *act, int nact,
                              int pick, int kind, long sc, int k, int *np, rg_mt *out)
{
	static const long base[] = {12, 24, 48, 96};
	const rg_mt *t = &act[pick];
	char sep = ops->n ? ',' : ' ';
	long last = t->shape[t->rank - 1];
	switch (kind) {
	case 0:
	case 1: { /* MatMul with a weight */
		long n = base[rg_int(r, 4)] * sc;
		rg_printf(ts, ",\"w%d\":{\"shape\":[%ld,%ld],\"role\":\"param\"}", *np, last, n);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"MatMul\",\"inputs\":[\"%s\","
		          "\"w%d\"],\"outputs\":[\"%s\"]}",
		          sep, k, t->name, *np, out->name);
		(*np)++;
		out->shape[out->rank - 1] = n;
		break;
	}
	case 2: /* bias */
		rg_printf(ts, ",\"w%d\":{\"shape\":[%ld],\"role\":\"param\"}", *np, last);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Add\",\"inputs\":[\"%s\","
		          "\"w%d\"],\"outputs\":[\"%s\"]}",
		          sep, k, t->name, *np, out->name);
		(*np)++;
		break;
	case 3:
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Softmax\",\"inputs\":[\"%s\"],"
		          "\"outputs\":[\"%s\"],\"attrs\":{\"axis\":-1}}",
		          sep, k, t->name, out->name);
		break;
	case 4:
		rg_printf(ts,
		          ",\"w%d\":{\"shape\":[%ld],\"role\":\"param\"},\"w%db\":{"
		          "\"shape\":[%ld],\"role\":\"param\"}",
		          *np, last, *np, last);
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"LayerNormalization\","
		          "\"inputs\":[\"%s\",\"w%d\",\"w%db\"],\"outputs\":[\"%s\"],"
		          "\"attrs\":{\"axis\":-1}}",
		          sep, k, t->name, *np, *np, out->name);
		(*np)++;
		break;
	case 5: { /* residual */
		int o = rg_mt_find(act, nact, pick, -1);
		if (o < 0)
			return 1;
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[\"%s\","
		          "\"%s\"],\"outputs\":[\"%s\"]}",
		          sep, k, rg_int(r, 2) ? "Add" : "Mul", t->name, act[o].name, out->name);
		break;
	}
	case 6: { /* concat along the last axis */
		int o = rg_mt_find(act, nact, pick, t->rank - 1);
		if (o < 0)
			return 1;
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Concat\",\"inputs\":[\"%s\","
		          "\"%s\"],\"outputs\":[\"%s\"],\"attrs\":{\"axis\":-1}}",
		          sep, k, t->name, act[o].name, out->name);
		out->shape[out->rank - 1] += act[o].shape[t->rank - 1];
		break;
	}
	case 7:
		if (t->rank == 2 && t->shape[0] != t->shape[1] && rg_int(r, 2))
			return 1; /* a 2-D transpose moves the batch: rarely */
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Transpose\",\"inputs\":["
		          "\"%s\"]"
		          ",\"outputs\":[\"%s\"],\"attrs\":{\"perm\":%s}}",
		          sep, k, t->name, out->name, t->rank == 2 ? "[1,0]" : "[0,2,1]");
		out->shape[t->rank - 1] = t->shape[t->rank - 2];
		out->shape[t->rank - 2] = last;
		break;
	case 8: { /* scores: t x transpose(other), both [B, S, H] */
		int o = t->rank == 3 ? rg_mt_find(act, nact, pick, 1) : -1;
		if (o < 0)
			o = pick;
		if (t->rank != 3)
			return 1;
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"Transpose\",\"inputs\":["
		          "\"%s\"]"
		          ",\"outputs\":[\"%sT\"],\"attrs\":{\"perm\":[0,2,1]}}",
		          sep, k, act[o].name, out->name);
		rg_printf(ops,
		          ",{\"name\":\"op%dm\",\"type\":\"MatMul\",\"inputs\":[\"%s\","
		          "\"%sT\"],\"outputs\":[\"%s\"]}",
		          k, t->name, out->name, out->name);
		out->shape[2] = act[o].shape[1];
		/* the other's [B, H', S] keeps a name nobody else reads */
		break;
	}
	case 9: /* between ranks: [B, H] -> [B, H/3, 3] and [B, S, H] -> [B, S*H] */
		if (t->rank == 2) {
			rg_printf(ops,
			          "%c{\"name\":\"op%d\",\"type\":\"Reshape\","
			          "\"inputs\":[\"%"
			          "s\"],\"outputs\":[\"%s\"],\"attrs\":{\"shape\":["
			          "%ld,%ld,"
			          "3]}}",
			          sep, k, t->name, out->name, t->shape[0], last / 3);
			out->rank = 3;
			out->shape[1] = last / 3;
			out->shape[2] = 3;
		} else {
			rg_printf(ops,
			          "%c{\"name\":\"op%d\",\"type\":\"Reshape\","
			          "\"inputs\":[\"%"
			          "s\"],\"outputs\":[\"%s\"],\"attrs\":{\"shape\":["
			          "%ld,%ld]}}",
			          sep, k, t->name, out->name, t->shape[0],
			          t->shape[1] * t->shape[2]);
			out->rank = 2;
			out->shape[1] = t->shape[1] * t->shape[2];
		}
		break;
	case 10: /* mean over the sequence: [B, S, H] -> [B, H] */
		if (t->rank != 3)
			return 1;
		rg_printf(ops,
		          "%c{\"name\":\"op%d\",\"type\":\"ReduceMean\",\"inputs\":"
		          "[\"%s\"]"
		          ",\"outputs\":[\"%s\"],\"attrs\":{\"axes\":[1],"
		          "\"keepdims\":0}}",
		          sep, k, t->name, out->name);
		out->rank = 2;
		out->shape[1] = last;
		break;
	default: return 1;
	}
	return 0;
}

/* Writes a random irregular model of about nops ops. Returns malloc'd JSON. */
static inline char *rg_model_mixed(rg_rng *r, int nops)
{
	static const long base[] = {12, 24, 48, 96};
	static const long scale[] = {1, 4, 16, 64};
	rg_buf ts = {0}, ops = {0};
	ts.p = calloc(1, 1);
	ts.cap = 1;
	ops.p = calloc(1, 1);
	ops.cap = 1;
	rg_mt act[96];
	int nact = 0, np = 0, k = 0;
	long sc = scale[rg_int(r, 4)], B = 12L << rg_int(r, 3);
	const char *dtype = rg_int(r, 3) == 0 ? "bfloat16" : "float32";
	int rank = 2 + rg_int(r, 3);
	rg_mt x = {"x", rank, {B, 0, 0, 0}};
	if (rank == 2) {
		x.shape[1] = base[rg_int(r, 4)] * sc;
	} else if (rank == 3) {
		x.shape[1] = base[rg_int(r, 2)] * (sc > 4 ? 4 : 1);
		x.shape[2] = base[rg_int(r, 4)] * sc;
	} else {
		x.shape[1] = base[rg_int(r, 2)] * (sc > 4 ? 4 : 1);
		x.shape[2] = x.shape[3] = 4 + 2 * rg_int(r, 3);
	}
	act[nact++] = x;
	rg_printf(&ts, "\"x\":{\"shape\":");
	rg_mt_shape(&ts, &x);
	rg_printf(&ts, ",\"role\":\"input\"}");
	if (rg_int(r, 3) == 0) { /* a second input, as a 2-D side branch */
		rg_mt y = {"y", 2, {B, base[rg_int(r, 4)] * sc, 0, 0}};
		act[nact++] = y;
		rg_printf(&ts, ",\"y\":{\"shape\":[%ld,%ld],\"role\":\"input\"}", y.shape[0],
		          y.shape[1]);
	}
	for (int i = 0; i < nops && nact < 90; i++) {
		/* read the latest activation most often, any earlier one otherwise */
		int pick = rg_int(r, 2) ? nact - 1 : rg_int(r, nact);
		const rg_mt *t = &act[pick];
		rg_mt out = *t;
		snprintf(out.name, sizeof out.name, "t%d", k);
		int kind = rg_int(r, 12);
		int un =
		    t->rank == 4
		        ? rg_mixed_image_op(r, &ts, &ops, act, nact, pick, kind, sc, k, &np, &out)
		        : rg_mixed_op(r, &ts, &ops, act, nact, pick, kind, sc, k, &np, &out);
		if (un) {
			static const char *unary[] = {"Relu", "Gelu", "Tanh", "Sigmoid"};
			rg_printf(&ops,
			          "%c{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[\"%s\"],"
			          "\"outputs\":[\"%s\"]}",
			          ops.n ? ',' : ' ', k, unary[rg_int(r, 4)], t->name, out.name);
		}
		act[nact++] = out;
		k++;
	}
	/* a classifier head and its loss on a 2-D activation, half the time */
	const rg_mt *t = &act[nact - 1];
	if (t->rank == 2 && rg_int(r, 2)) {
		rg_printf(&ts,
		          ",\"wl\":{\"shape\":[%ld,12],\"role\":\"param\"},\"labels\":{\"shape\":"
		          "[%ld],\"dtype\":\"int32\",\"role\":\"input\"}",
		          t->shape[1], t->shape[0]);
		rg_printf(&ops,
		          ",{\"name\":\"head\",\"type\":\"MatMul\",\"inputs\":[\"%s\",\"wl\"],"
		          "\"outputs\":[\"logits\"]},{\"name\":\"loss\",\"type\":"
		          "\"SoftmaxCrossEntropy\",\"inputs\":[\"logits\",\"labels\"],\"outputs\":["
		          "\"l\"]}",
		          t->name);
	}
	rg_buf all = {0};
	all.p = calloc(1, 1);
	all.cap = 1;
	rg_printf(&all,
	          "{\"format\":\"planner.model/1\",\"name\":\"mixed\",\"dtype\":\"%s\",\"tensors\":"
	          "{%s},\"ops\":[%s]}",
	          dtype, ts.p, ops.p);
	free(ts.p);
	free(ops.p);
	return all.p;
}

#endif
