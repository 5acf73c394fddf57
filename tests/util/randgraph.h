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
			rg_tensor *t = &act[pick];
			rg_tensor out = *t;
			snprintf(out.name, sizeof out.name, "t%d", k);
			int kind = kinds[i];
			if (t->rank != 2 && kind != 2 && kind != 3)
				kind = 2; /* keep the exotic ops on 2-D inputs */
			char sep = ops.n ? ',' : ' ';
			switch (kind) {
			case 0: /* MatMul with a weight */
			case 1: {
				long n = widths[i];
				rg_printf(&params,
				          ",\"w%d\":{\"shape\":[%ld,%ld],\"role\":\"param\"}", np,
				          t->shape[t->rank - 1], n);
				rg_printf(&ops,
				          "%c{\"name\":\"op%d\",\"type\":\"MatMul\",\"inputs\":[\"%"
				          "s\",\"w%d\"],\"outputs\":[\"%s\"]}",
				          sep, k, t->name, np, out.name);
				np++;
				out.shape[out.rank - 1] = n;
				break;
			}
			case 2:
				rg_printf(&ops,
				          "%c{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[\"%s\"]"
				          ",\"outputs\":[\"%s\"]}",
				          sep, k, rg_int(r, 2) ? "Relu" : "Gelu", t->name,
				          out.name);
				break;
			case 3: /* bias add */
				rg_printf(&params, ",\"w%d\":{\"shape\":[%ld],\"role\":\"param\"}",
				          np, t->shape[t->rank - 1]);
				rg_printf(&ops,
				          "%c{\"name\":\"op%d\",\"type\":\"Add\",\"inputs\":[\"%"
				          "s\",\"w%d\"],\"outputs\":[\"%s\"]}",
				          sep, k, t->name, np, out.name);
				np++;
				break;
			case 4:
				rg_printf(&ops,
				          "%c{\"name\":\"op%d\",\"type\":\"Softmax\",\"inputs\":["
				          "\"%s\"],\"outputs\":[\"%s\"],\"attrs\":{\"axis\":-1}}",
				          sep, k, t->name, out.name);
				break;
			case 5:
				rg_printf(&params,
				          ",\"w%d\":{\"shape\":[%ld],\"role\":\"param\"},\"w%db\":{"
				          "\"shape\":[%ld],\"role\":\"param\"}",
				          np, t->shape[1], np, t->shape[1]);
				rg_printf(
				    &ops,
				    "%c{\"name\":\"op%d\",\"type\":\"LayerNormalization\","
				    "\"inputs\":[\"%s\",\"w%d\",\"w%db\"],\"outputs\":[\"%s\"]}",
				    sep, k, t->name, np, np, out.name);
				np++;
				break;
			case 6:
				if (repeat > 1 && t->shape[0] != t->shape[1])
					goto relu; /* blocks must keep their shape to repeat */
				rg_printf(
				    &ops,
				    "%c{\"name\":\"op%d\",\"type\":\"Transpose\",\"inputs\":[\"%"
				    "s\"],\"outputs\":[\"%s\"],\"attrs\":{\"perm\":[1,0]}}",
				    sep, k, t->name, out.name);
				out.shape[0] = t->shape[1];
				out.shape[1] = t->shape[0];
				break;
			case 7: { /* residual with an earlier tensor of the same shape */
				int other = -1;
				for (int j = nact - 1; j >= lo && other < 0; j--)
					if (act[j].rank == t->rank &&
					    act[j].shape[0] == t->shape[0] &&
					    act[j].shape[1] == t->shape[1] && j != pick)
						other = j;
				if (other < 0)
					goto relu;
				rg_printf(&ops,
				          "%c{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[\"%s\","
				          "\"%s\"],\"outputs\":[\"%s\"]}",
				          sep, k, rg_int(r, 2) ? "Add" : "Mul", t->name,
				          act[other].name, out.name);
				break;
			}
			case 8: /* a weight used by the matmul as the left operand */
				rg_printf(&params,
				          ",\"w%d\":{\"shape\":[%ld,%ld],\"role\":\"param\"}", np,
				          t->shape[0], t->shape[0]);
				rg_printf(&ops,
				          "%c{\"name\":\"op%d\",\"type\":\"MatMul\",\"inputs\":["
				          "\"w%d\",\"%s\"],\"outputs\":[\"%s\"]}",
				          sep, k, np, t->name, out.name);
				np++;
				break;
			case 9: /* reshape [a,b] -> [a, b/2, 2] -> back via a second reshape later
			         */
				if (repeat > 1 || t->shape[1] % 2)
					goto relu;
				rg_printf(
				    &ops,
				    "%c{\"name\":\"op%d\",\"type\":\"Reshape\",\"inputs\":[\"%s\"],"
				    "\"outputs\":[\"%s\"],\"attrs\":{\"shape\":[%ld,%ld,2]}}",
				    sep, k, t->name, out.name, t->shape[0], t->shape[1] / 2);
				out.rank = 3;
				out.shape[1] = t->shape[1] / 2;
				out.shape[2] = 2;
				break;
			default:
			relu:
				rg_printf(&ops,
				          "%c{\"name\":\"op%d\",\"type\":\"Tanh\",\"inputs\":[\"%"
				          "s\"],\"outputs\":[\"%s\"]}",
				          sep, k, t->name, out.name);
				break;
			}
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

#endif
