/* Host fp32 kernels for every operator type, forward and backward, on local
 * pieces. Matrix products go through the backend's gemm (OpenBLAS on cpu). */
#include "executor/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "executor/kernel_math.h"
#include "graph/ops.h"
#include "graph/alloc.h"

uint64_t pl_hash64(uint64_t x)
{
	return plk_hash64(x);
}

int pl_dropout_keep(uint64_t seed, int op, uint64_t idx, double ratio)
{
	return plk_dropout_keep(seed, op, idx, ratio);
}

int64_t pl_kernel_axis(const pl_op *op, int rank, int64_t dflt)
{
	int64_t a = op->attrs->has_axis ? op->attrs->axis : dflt;
	return a < 0 ? a + rank : a;
}

void pl_kernel_row_strides(const pl_xt *t, int64_t *st)
{
	int64_t s = 1;
	for (int d = t->rank - 1; d >= 0; d--) {
		st[d] = s;
		s *= t->shape[d];
	}
}

void pl_kernel_bcast_strides(const pl_xt *in, const pl_xt *out, int64_t *bs)
{
	int64_t st[PL_MAX_RANK];
	pl_kernel_row_strides(in, st);
	for (int d = 0; d < out->rank; d++) {
		int di = d - (out->rank - in->rank);
		bs[d] = di >= 0 && in->shape[di] == out->shape[d] ? st[di] : 0;
	}
}

/* advances a multi-index over shape; returns 0 when it wraps */
static int next_index(int64_t *ix, const int64_t *shape, int rank)
{
	for (int d = rank - 1; d >= 0; d--) {
		if (++ix[d] < shape[d])
			return 1;
		ix[d] = 0;
	}
	return 0;
}

int pl_kernel_unary_kind(const pl_op *op)
{
	switch (op->type) {
	case PL_OP_RELU: return PLK_RELU;
	case PL_OP_GELU: return op->attrs->gelu_tanh ? PLK_GELU_TANH : PLK_GELU;
	case PL_OP_SILU: return PLK_SILU;
	case PL_OP_TANH: return PLK_TANH;
	case PL_OP_SIGMOID: return PLK_SIGMOID;
	case PL_OP_DROPOUT: return PLK_DROPOUT;
	case PL_OP_IDENTITY: return PLK_IDENTITY;
	case PL_OP_CAST: /* computed in fp32; to an integer type toward 0 */
		return op->attrs->to == PL_DT_INT32 || op->attrs->to == PL_DT_INT64 ? PLK_TRUNC
		                                                                    : PLK_IDENTITY;
	case PL_OP_CLIP: return PLK_CLIP;
	case PL_OP_HARDSIGMOID: return PLK_HARDSIGMOID;
	case PL_OP_HARDSWISH: return PLK_HARDSWISH;
	case PL_OP_NEG: return PLK_NEG;
	case PL_OP_EXP: return PLK_EXP;
	case PL_OP_LOG: return PLK_LOG;
	case PL_OP_SQRT: return PLK_SQRT;
	case PL_OP_ABS: return PLK_ABS;
	case PL_OP_SOFTPLUS: return PLK_SOFTPLUS;
	case PL_OP_SIN: return PLK_SIN;
	case PL_OP_COS: return PLK_COS;
	case PL_OP_ERF: return PLK_ERF;
	case PL_OP_SIGN: return PLK_SIGN;
	case PL_OP_TAN: return PLK_TAN;
	case PL_OP_ASIN: return PLK_ASIN;
	case PL_OP_ACOS: return PLK_ACOS;
	case PL_OP_ATAN: return PLK_ATAN;
	case PL_OP_SINH: return PLK_SINH;
	case PL_OP_COSH: return PLK_COSH;
	case PL_OP_ASINH: return PLK_ASINH;
	case PL_OP_ACOSH: return PLK_ACOSH;
	case PL_OP_ATANH: return PLK_ATANH;
	case PL_OP_FLOOR: return PLK_FLOOR;
	case PL_OP_CEIL: return PLK_CEIL;
	case PL_OP_ROUND: return PLK_ROUND;
	case PL_OP_LEAKYRELU: return PLK_LEAKYRELU;
	case PL_OP_ELU: return PLK_ELU;
	case PL_OP_SELU: return PLK_SELU;
	case PL_OP_CELU: return PLK_CELU;
	case PL_OP_POW: return PLK_POW;
	    PL_CASES_BINARY:
	case PL_OP_WHERE: /* their own kernels */
	PL_CASES_NOT_ELEMENTWISE:
		break;
	}
	return -1;
}

int pl_kernel_binary_kind(pl_optype t)
{
	switch (t) {
	case PL_OP_ADD: return PLK_ADD;
	case PL_OP_SUB: return PLK_SUB;
	case PL_OP_MUL: return PLK_MUL;
	case PL_OP_DIV: return PLK_DIV;
	case PL_OP_MAX: return PLK_MAX;
	case PL_OP_MIN: return PLK_MIN;
	case PL_OP_EQUAL: return PLK_EQUAL;
	case PL_OP_LESS: return PLK_LESS;
	case PL_OP_GREATER: return PLK_GREATER;
	case PL_OP_PRELU: return PLK_PRELU;
	case PL_OP_POW_TENSOR: return PLK_POW_TENSOR;
	case PL_OP_POW:
	case PL_OP_LEAKYRELU:
	case PL_OP_ELU:
	case PL_OP_SELU:
	case PL_OP_CELU:
	PL_CASES_UNARY_MATH:
	case PL_OP_CLIP:
	case PL_OP_HARDSIGMOID:
	case PL_OP_HARDSWISH:
	case PL_OP_WHERE:
	PL_CASES_NOT_ELEMENTWISE:
		break;
	}
	return -1;
}

/* global flat index of local element i of out (for Dropout masks) */
static uint64_t global_index(const pl_kctx *k, const pl_xt *out, int64_t i)
{
	const pl_tensor *t = &k->g->tensors[k->op->out[0]];
	uint64_t gi = 0;
	for (int d = 0; d < out->rank; d++) {
		int64_t inner = 1;
		for (int e = d + 1; e < out->rank; e++)
			inner *= out->shape[e];
		int64_t c = (i / inner) % out->shape[d];
		gi = gi * (uint64_t)t->shape[d] + (uint64_t)(c + k->out_off[d]);
	}
	return gi;
}

static int unary(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	int kind = pl_kernel_unary_kind(k->op);
	double ratio = k->op->attrs->ratio;
	/* Dropout: the global index of a row's first element, then one more per
	 * element along the row (the last dim is contiguous in both) */
	size_t row = x->rank > 0 && x->shape[x->rank - 1] > 0 ? (size_t)x->shape[x->rank - 1] : 1;
	uint64_t gi = 0;
	/* Dropout keeps its mask, one byte per element, as PyTorch's
	 * native_dropout saves a bool mask for its backward (the cost model's
	 * Dropout rule counts the same byte); the backward reads it */
	unsigned char *mask = kind == PLK_DROPOUT && k->saved && k->saved->v
	                          ? (unsigned char *)k->saved->v
	                          : NULL;
	for (size_t i = 0; i < x->n; i++, gi++) {
		float v = x->v[i], r, d;
		if (kind == PLK_DROPOUT) {
			if (i % row == 0)
				gi = global_index(k, x, (int64_t)i);
			int keep = mask && dx ? mask[i]
			           : ratio <= 0 ? 1
			                        : pl_dropout_keep(k->seed, (int)(k->op - k->g->ops), gi, ratio);
			if (mask && !dx)
				mask[i] = (unsigned char)keep;
			d = !keep ? 0 : ratio <= 0 ? 1 : (float)(1 / (1 - ratio));
			r = v * d;
		} else if (kind == PLK_CLIP) {
			r = plk_clip(v, k->op->attrs->min, k->op->attrs->max, &d);
		} else if (kind == PLK_HARDSIGMOID || kind == PLK_HARDSWISH) {
			r = plk_hard(kind == PLK_HARDSWISH, v, k->op->attrs->alpha,
			             k->op->attrs->beta, &d);
		} else if (kind >= PLK_LEAKYRELU) {
			r = plk_param_unit(
			    kind, v, kind == PLK_POW ? k->op->attrs->exponent : k->op->attrs->alpha,
			    k->op->attrs->gamma, &d);
		} else {
			r = plk_elementwise(kind, v, &d);
		}
		if (dx)
			dx->v[i] = dy->v[i] * d;
		else
			y->v[i] = r;
	}
	return 0;
}

static int binary(pl_kctx *k, const pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	int64_t sa[PL_MAX_RANK], sb[PL_MAX_RANK], ix[PL_MAX_RANK] = {0};
	const pl_xt *ref = y ? y : dy;
	pl_kernel_bcast_strides(&in[0], ref, sa);
	pl_kernel_bcast_strides(&in[1], ref, sb);
	if (din) {
		for (int i = 0; i < 2; i++)
			if (din[i].v)
				memset(din[i].v, 0, sizeof(float) * din[i].n);
	}
	int kind = pl_kernel_binary_kind(k->op->type);
	/* rows along the last dim (strides la, lb there); the outer index walks
	 * the dims before it */
	int outer = ref->rank > 0 ? ref->rank - 1 : 0;
	int64_t len = ref->rank > 0 ? ref->shape[outer] : 1;
	int64_t la = ref->rank > 0 ? sa[outer] : 0, lb = ref->rank > 0 ? sb[outer] : 0;
	size_t o = 0;
	if (len <= 0)
		return 0;
	do {
		int64_t ia = 0, ib = 0;
		for (int d = 0; d < outer; d++) {
			ia += ix[d] * sa[d];
			ib += ix[d] * sb[d];
		}
		for (int64_t j = 0; j < len; j++, o++, ia += la, ib += lb) {
			float a = in[0].v[ia], b = in[1].v[ib];
			if (!din) {
				y->v[o] = plk_binary_value(kind, a, b);
			} else {
				float ga, gb;
				plk_binary_grad(kind, a, b, dy->v[o], &ga, &gb);
				if (din[0].v)
					din[0].v[ia] += ga;
				if (din[1].v)
					din[1].v[ib] += gb;
			}
		}
	} while (outer > 0 && next_index(ix, ref->shape, outer));
	return 0;
}

/* cond ? x : y (inputs 0, 1, 2), broadcast; backward: the gradient to x
 * where cond holds, to y where not, none to cond */
static int where(pl_kctx *k, const pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	(void)k;
	int64_t s[3][PL_MAX_RANK], ix[PL_MAX_RANK] = {0};
	const pl_xt *ref = y ? y : dy;
	for (int i = 0; i < 3; i++) {
		pl_kernel_bcast_strides(&in[i], ref, s[i]);
		if (din && din[i].v)
			memset(din[i].v, 0, sizeof(float) * din[i].n);
	}
	size_t o = 0;
	do {
		int64_t at[3] = {0, 0, 0};
		for (int d = 0; d < ref->rank; d++)
			for (int i = 0; i < 3; i++)
				at[i] += ix[d] * s[i][d];
		int c = in[0].v[at[0]] != 0, from = c ? 1 : 2;
		if (!din)
			y->v[o] = in[from].v[at[from]];
		else if (din[from].v)
			din[from].v[at[from]] += dy->v[o];
		o++;
	} while (ref->rank > 0 && next_index(ix, ref->shape, ref->rank));
	return 0;
}

void pl_kernel_batch_offsets(const pl_xt *a, const pl_xt *b, const pl_xt *c, int64_t i, int64_t *oa,
                             int64_t *ob)
{
	int nb = c->rank - 2;
	int64_t rem = i, fa = 1, fb = 1;
	*oa = *ob = 0;
	for (int d = nb - 1; d >= 0; d--) {
		int64_t x = rem % c->shape[d];
		rem /= c->shape[d];
		int da = d - (nb - (a->rank - 2)), db = d - (nb - (b->rank - 2));
		if (da >= 0) {
			if (a->shape[da] == c->shape[d])
				*oa += x * fa;
			fa *= a->shape[da];
		}
		if (db >= 0) {
			if (b->shape[db] == c->shape[d])
				*ob += x * fb;
			fb *= b->shape[db];
		}
	}
}

static int matmul(pl_kctx *k, pl_xt *in, pl_xt *c, const pl_xt *dc, pl_xt *din)
{
	pl_xt *a = &in[0], *b = &in[1];
	const pl_xt *cc = c ? c : dc;
	int64_t m = a->shape[a->rank - 2], kk = a->shape[a->rank - 1], n = b->shape[b->rank - 1];
	int64_t batches = 1;
	for (int d = 0; d < cc->rank - 2; d++)
		batches *= cc->shape[d];
	if (din)
		for (int i = 0; i < 2; i++)
			if (din[i].v)
				memset(din[i].v, 0, sizeof(float) * din[i].n);
	for (int64_t i = 0; i < batches; i++) {
		int64_t oa, ob;
		pl_kernel_batch_offsets(a, b, cc, i, &oa, &ob);
		const float *pa = a->v + oa * m * kk, *pb = b->v + ob * kk * n;
		if (!din) {
			k->gemm(0, 0, m, n, kk, 1, pa, kk, pb, n, 0, c->v + i * m * n, n);
			continue;
		}
		const float *pc = dc->v + i * m * n;
		if (din[0].v) /* dA = dC B^T */
			k->gemm(0, 1, m, kk, n, 1, pc, n, pb, n, 1, din[0].v + oa * m * kk, kk);
		if (din[1].v) /* dB = A^T dC */
			k->gemm(1, 0, kk, n, m, 1, pa, kk, pc, n, 1, din[1].v + ob * kk * n, n);
	}
	return 0;
}

void pl_kernel_split3(const pl_xt *x, int64_t axis, int64_t *outer, int64_t *n, int64_t *inner)
{
	*outer = *inner = 1;
	for (int d = 0; d < axis; d++)
		*outer *= x->shape[d];
	*n = x->shape[axis];
	for (int d = (int)axis + 1; d < x->rank; d++)
		*inner *= x->shape[d];
}

static int softmax(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	int64_t outer, n, inner;
	pl_kernel_split3(x, pl_kernel_axis(k->op, x->rank, -1), &outer, &n, &inner);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t q = 0; q < inner; q++) {
			size_t base = (size_t)(o * n * inner + q);
			if (!dx)
				plk_softmax_row(x->v + base, y->v + base, n, inner);
			else
				plk_softmax_row_grad(y->v + base, dy->v + base, dx->v + base, n,
				                     inner);
		}
	return 0;
}

/* LayerNormalization (X, Scale[, B]) and RMSNormalization (X, Scale) */
static int norm(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *x = &in[0];
	int rms = k->op->type == PL_OP_RMSNORM, has_b = k->op->ninputs > 2;
	int64_t axis = pl_kernel_axis(k->op, x->rank, -1), rows = 1, cols = 1;
	for (int d = 0; d < x->rank; d++)
		*(d < axis ? &rows : &cols) *= x->shape[d];
	double eps = k->op->attrs->epsilon;
	const float *s = in[1].v, *b = has_b ? in[2].v : NULL;
	if (din) {
		for (int i = 1; i < k->op->ninputs; i++)
			if (din[i].v)
				memset(din[i].v, 0, sizeof(float) * din[i].n);
	}
	/* its statistics kept, fp32 mean and 1/std per row, as PyTorch's
	 * native_layer_norm saves them for its backward (the cost model's norm
	 * rule counts the same bytes); the backward reads them */
	float *kept = k->saved && k->saved->v ? k->saved->v : NULL;
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x->v + r * cols;
		double mean, rstd;
		if (din && kept) {
			mean = kept[2 * r];
			rstd = kept[2 * r + 1];
		} else {
			rstd = plk_norm_stats(xr, cols, rms, eps, &mean);
		}
		if (!din && kept) {
			kept[2 * r] = (float)mean;
			kept[2 * r + 1] = (float)rstd;
		}
		if (!din) {
			float *yr = y->v + r * cols;
			for (int64_t j = 0; j < cols; j++)
				yr[j] = (float)((xr[j] - mean) * rstd) * s[j] + (b ? b[j] : 0);
			continue;
		}
		const float *gr = dy->v + r * cols;
		double m1 = 0, m2 = 0; /* means of dxhat and dxhat * xhat */
		for (int64_t j = 0; j < cols; j++) {
			double xh = (xr[j] - mean) * rstd, g = (double)gr[j] * s[j];
			m1 += g;
			m2 += g * xh;
			if (din[1].v)
				din[1].v[j] += (float)(gr[j] * xh);
			if (has_b && din[2].v)
				din[2].v[j] += gr[j];
		}
		m1 /= (double)cols;
		m2 /= (double)cols;
		if (din[0].v)
			for (int64_t j = 0; j < cols; j++) {
				double xh = (xr[j] - mean) * rstd, g = (double)gr[j] * s[j];
				din[0].v[r * cols + j] =
				    (float)(rstd * (g - (rms ? 0 : m1) - xh * m2));
			}
	}
	return 0;
}

static int gather(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *x = &in[0], *ix = &in[1];
	int64_t axis = pl_kernel_axis(k->op, x->rank, 0), pre, vl, post;
	pl_kernel_split3(x, axis, &pre, &vl, &post);
	int64_t v0 = k->in_off[0][axis], vglob = k->g->tensors[k->op->in[0]].shape[axis];
	int64_t ni = (int64_t)ix->n;
	if (din && din[0].v)
		memset(din[0].v, 0, sizeof(float) * din[0].n);
	for (int64_t p = 0; p < pre; p++)
		for (int64_t i = 0; i < ni; i++) {
			int64_t id = (int64_t)ix->v[i];
			if (id < 0)
				id += vglob;
			id -= v0;
			size_t o = (size_t)((p * ni + i) * post);
			if (!din) {
				for (int64_t q = 0; q < post; q++)
					y->v[o + (size_t)q] =
					    id >= 0 && id < vl ? x->v[(p * vl + id) * post + q] : 0;
			} else if (din[0].v && id >= 0 && id < vl) {
				for (int64_t q = 0; q < post; q++)
					din[0].v[(p * vl + id) * post + q] += dy->v[o + (size_t)q];
			}
		}
	return 0;
}

/* ArgMax, ArgMin, TopK along an axis the local piece holds whole: the
 * positions of the extremes (ArgMax/ArgMin: the first, or the last with
 * select_last_index; TopK: the k largest or smallest in order, ties to the
 * lower index, as ONNX states), as floats like every integer the executor
 * holds. Forward only: no gradient flows through positions. */
static int argmax(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	(void)dy;
	if (dx)
		return 0;
	const pl_attrs *a = k->op->attrs;
	int topk = k->op->type == PL_OP_TOPK;
	int big = topk ? a->largest : k->op->type == PL_OP_ARGMAX;
	int last = !topk && a->select_last;
	int64_t kk = topk ? a->k : 1, pre, n, post;
	pl_kernel_split3(x, pl_kernel_axis(k->op, x->rank, topk ? -1 : 0), &pre, &n, &post);
	for (int64_t p = 0; p < pre; p++)
		for (int64_t q = 0; q < post; q++) {
			const float *row = x->v + p * n * post + q;
			float *out = y->v + p * kk * post + q;
			/* the order is by value, then by index (or by index from the
			 * end with select_last_index): each pick the best ranked after
			 * the one before */
			int64_t prev = -1;
			for (int64_t j = 0; j < kk; j++) {
				int64_t at = -1;
				for (int64_t i = 0; i < n; i++) {
					float v = row[i * post];
					if (prev >= 0) {
						float w = row[prev * post];
						int after =
						    (big ? v < w : v > w) ||
						    (v == w && (last ? i < prev : i > prev));
						if (!after)
							continue;
					}
					if (at < 0) {
						at = i;
						continue;
					}
					float b = row[at * post];
					if ((big ? v > b : v < b) || (v == b && last))
						at = i;
				}
				out[j * post] = (float)(at < 0 ? 0 : at);
				prev = at;
			}
		}
	return 0;
}

/* OneHot: per index its depth classes (this piece's: out_off along the
 * axis), on_value at the index (negative ones count from the end), off_value
 * elsewhere; an index outside [-depth, depth) gives a row of off_value */
static int onehot(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	(void)dy;
	if (dx)
		return 0;
	const pl_attrs *a = k->op->attrs;
	int64_t axis = pl_kernel_axis(k->op, y->rank, -1), pre, c, post;
	int64_t depth = a->depth, c0 = k->out_off[axis];
	pl_kernel_split3(y, axis, &pre, &c, &post);
	for (int64_t p = 0; p < pre; p++)
		for (int64_t j = 0; j < c; j++)
			for (int64_t q = 0; q < post; q++) {
				double id = x->v[p * post + q];
				if (id < 0)
					id += (double)depth;
				y->v[(p * c + j) * post + q] =
				    (float)(id == (double)(c0 + j) ? a->on_value : a->off_value);
			}
	return 0;
}

/* GatherElements: out[i] = data[i with its axis index replaced by
 * indices[i]] (the local piece of data holds the axis whole); backward the
 * output's gradient added at the positions read */
static int gather_elements(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *x = &in[0], *ix = &in[1];
	if (din && !din[0].v)
		return 0;
	int64_t axis = pl_kernel_axis(k->op, x->rank, 0), pre, n, post, ipre, m, ipost;
	pl_kernel_split3(x, axis, &pre, &n, &post);
	pl_kernel_split3(ix, axis, &ipre, &m, &ipost);
	if (din)
		memset(din[0].v, 0, sizeof(float) * din[0].n);
	for (int64_t p = 0; p < ipre; p++)
		for (int64_t j = 0; j < m; j++)
			for (int64_t q = 0; q < ipost; q++) {
				size_t o = (size_t)((p * m + j) * ipost + q);
				int64_t id = (int64_t)ix->v[o];
				if (id < 0)
					id += n;
				if (id < 0 || id >= n) { /* outside: 0, no gradient */
					if (!din)
						y->v[o] = 0;
					continue;
				}
				size_t s = (size_t)((p * n + id) * post + q);
				if (din)
					din[0].v[s] += dy->v[o];
				else
					y->v[o] = x->v[s];
			}
	return 0;
}

/* GridSample (graph/ops/sample.c) on the local piece (X's rows and
 * columns whole): each output position's (x, y) from the grid, in pixels
 * ((g + 1) / 2 (size - 1) with align_corners, ((g + 1) size - 1) / 2
 * without), clamped to the border (border) or reading zeros outside
 * (zeros); nearest rounds halves to even (as PyTorch's nearbyint), bilinear
 * weighs the 4 pixels around it. Backward: the output's gradient added to
 * the pixels read by their weights, and (bilinear) the grid's gradient, the
 * weights' derivatives times the pixels (0 where the border clamps). */
static int gridsample(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *x = &in[0], *gr = &in[1];
	const pl_attrs *a = k->op->attrs;
	int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
	int64_t Ho = gr->shape[1], Wo = gr->shape[2];
	float *dx = din && din[0].v ? din[0].v : NULL, *dg = din && din[1].v ? din[1].v : NULL;
	if (din && !dx && !dg)
		return 0;
	if (dx)
		memset(dx, 0, sizeof(float) * din[0].n);
	if (dg)
		memset(dg, 0, sizeof(float) * din[1].n);
	int lin = a->resize_mode == PL_RESIZE_LINEAR, border = a->grid_padding == 1;
	double sx = a->align_corners ? (double)(W - 1) / 2 : (double)W / 2;
	double sy = a->align_corners ? (double)(H - 1) / 2 : (double)H / 2;
	for (int64_t n = 0; n < N; n++)
		for (int64_t p = 0; p < Ho * Wo; p++) {
			const float *g = gr->v + (n * Ho * Wo + p) * 2;
			double fx = (g[0] + 1.0) * sx - (a->align_corners ? 0 : 0.5);
			double fy = (g[1] + 1.0) * sy - (a->align_corners ? 0 : 0.5);
			double cx = 1, cy = 1; /* the clamp's derivative */
			if (border) {
				if (fx < 0 || fx > (double)(W - 1)) {
					fx = fx < 0 ? 0 : (double)(W - 1);
					cx = 0;
				}
				if (fy < 0 || fy > (double)(H - 1)) {
					fy = fy < 0 ? 0 : (double)(H - 1);
					cy = 0;
				}
			}
			int64_t x0 = lin ? (int64_t)floor(fx) : (int64_t)nearbyint(fx);
			int64_t y0 = lin ? (int64_t)floor(fy) : (int64_t)nearbyint(fy);
			double tx = lin ? fx - (double)x0 : 0, ty = lin ? fy - (double)y0 : 0;
			double gx = 0, gy = 0;
			for (int64_t c = 0; c < C; c++) {
				const float *xc = x->v + (n * C + c) * H * W;
				size_t o = (size_t)((n * C + c) * Ho * Wo + p);
				double v[4] = {0, 0, 0, 0},
				       wt[4] = {(1 - tx) * (1 - ty), tx * (1 - ty), (1 - tx) * ty,
				                tx * ty};
				int64_t at[4];
				for (int t = 0; t < (lin ? 4 : 1); t++) {
					int64_t xx = x0 + (t & 1), yy = y0 + (t >> 1);
					at[t] = xx >= 0 && xx < W && yy >= 0 && yy < H ? yy * W + xx
					                                               : -1;
					v[t] = at[t] >= 0 ? xc[at[t]] : 0;
				}
				if (!din) {
					double s = 0;
					for (int t = 0; t < (lin ? 4 : 1); t++)
						s += wt[t] * v[t];
					y->v[o] = (float)s;
					continue;
				}
				double d = dy->v[o];
				for (int t = 0; dx && t < (lin ? 4 : 1); t++)
					if (at[t] >= 0)
						dx[(n * C + c) * H * W + at[t]] +=
						    (float)(wt[t] * d);
				if (lin) {
					gx += d * ((v[1] - v[0]) * (1 - ty) + (v[3] - v[2]) * ty);
					gy += d * ((v[2] - v[0]) * (1 - tx) + (v[3] - v[1]) * tx);
				}
			}
			if (dg && lin) {
				dg[(n * Ho * Wo + p) * 2] = (float)(gx * sx * cx);
				dg[(n * Ho * Wo + p) * 2 + 1] = (float)(gy * sy * cy);
			}
		}
	return 0;
}

static int transpose(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	int64_t perm[PL_MAX_RANK], st[PL_MAX_RANK], ix[PL_MAX_RANK] = {0};
	int n = x->rank;
	for (int d = 0; d < n; d++)
		perm[d] = k->op->attrs->nperm ? k->op->attrs->perm[d] : n - 1 - d;
	pl_kernel_row_strides(x, st);
	const pl_xt *o = y ? y : dy;
	size_t j = 0;
	do {
		int64_t src = 0;
		for (int d = 0; d < n; d++)
			src += ix[d] * st[perm[d]];
		if (!dx)
			y->v[j] = x->v[src];
		else
			dx->v[src] = dy->v[j];
		j++;
	} while (n > 0 && next_index(ix, o->shape, n));
	return 0;
}

double pl_kernel_reduce_map(const pl_kctx *k, const pl_xt *x, int64_t *ost)
{
	const pl_op *op = k->op;
	const pl_tensor *gx = &k->g->tensors[op->in[0]];
	int red[PL_MAX_RANK] = {0};
	for (int d = 0; d < x->rank; d++)
		red[d] = !op->attrs->has_axes;
	for (int a = 0; a < op->attrs->naxes; a++) {
		int64_t ax =
		    op->attrs->axes[a] < 0 ? op->attrs->axes[a] + x->rank : op->attrs->axes[a];
		red[ax] = 1;
	}
	double count = 1; /* a mean divides by the global count */
	int64_t s = 1;
	for (int d = x->rank - 1; d >= 0; d--) {
		if (red[d])
			count *= (double)gx->shape[d];
		ost[d] = red[d] ? 0 : s;
		if (!red[d])
			s *= x->shape[d];
	}
	return op->type == PL_OP_REDUCEMEAN ? 1 / count : 1;
}

/* ReduceProd (its reduced axes whole on the piece): the products in
 * double; the backward's gradient to each element the product of the
 * others, as torch.prod's: the product over the element where none of its
 * group is zero, else the product of the nonzero ones where the element is
 * the only zero, else 0 */
static int reduce_prod(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	int64_t ost[PL_MAX_RANK], ix[PL_MAX_RANK] = {0};
	pl_kernel_reduce_map(k, x, ost);
	size_t ny = y->n ? y->n : 1;
	double *nz = pl_malloc(sizeof *nz * ny); /* the product of the nonzero elements */
	int *zeros = pl_calloc(ny, sizeof *zeros);
	if (!nz || !zeros) {
		free(nz);
		free(zeros);
		return -1;
	}
	for (size_t e = 0; e < ny; e++)
		nz[e] = 1;
	for (int pass = 0; pass < (dx ? 2 : 1); pass++) {
		size_t i = 0;
		memset(ix, 0, sizeof ix);
		do {
			int64_t o = 0;
			for (int d = 0; d < x->rank; d++)
				o += ix[d] * ost[d];
			double v = x->v[i];
			if (pass == 0 && v == 0)
				zeros[o]++;
			else if (pass == 0)
				nz[o] *= v;
			else if (v != 0)
				dx->v[i] = (float)(zeros[o] ? 0 : dy->v[o] * nz[o] / v);
			else
				dx->v[i] = (float)(zeros[o] == 1 ? dy->v[o] * nz[o] : 0);
			i++;
		} while (x->rank > 0 && next_index(ix, x->shape, x->rank));
	}
	for (size_t e = 0; !dx && e < y->n; e++)
		y->v[e] = (float)(zeros[e] ? 0 : nz[e]);
	free(nz);
	free(zeros);
	return 0;
}

/* ReduceSum and ReduceMean (sums in double: the loss of a test is often
 * one), ReduceMax and ReduceMin (their reduced axes whole on the piece; the
 * backward's gradient to the first input equal to the output kept from the
 * forward) */
static int reduce(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	int64_t ost[PL_MAX_RANK], ix[PL_MAX_RANK] = {0};
	double scale = pl_kernel_reduce_map(k, x, ost);
	int ext = k->op->type == PL_OP_REDUCEMAX || k->op->type == PL_OP_REDUCEMIN;
	int mx = k->op->type == PL_OP_REDUCEMAX;
	double *acc = NULL;
	unsigned char *seen = NULL; /* an extreme: the output has its first value */
	if ((!dx && !ext && !(acc = pl_calloc(y->n ? y->n : 1, sizeof *acc))) ||
	    (ext && !(seen = pl_calloc(y->n ? y->n : 1, 1))))
		return -1;
	size_t i = 0;
	do {
		int64_t o = 0;
		for (int d = 0; d < x->rank; d++)
			o += ix[d] * ost[d];
		float v = x->v[i];
		if (!ext && !dx) {
			acc[o] += v;
		} else if (!ext) {
			dx->v[i] = (float)(dy->v[o] * scale);
		} else if (dx) {
			dx->v[i] = !seen[o] && v == y->v[o] ? dy->v[o] : 0;
			seen[o] |= v == y->v[o];
		} else if (!seen[o] || (mx ? v > y->v[o] : v < y->v[o])) {
			y->v[o] = v;
			seen[o] = 1;
		}
		i++;
	} while (x->rank > 0 && next_index(ix, x->shape, x->rank));
	for (size_t e = 0; acc && e < y->n; e++)
		y->v[e] = (float)(acc[e] * scale);
	free(acc);
	free(seen);
	return 0;
}

double pl_kernel_sce_dims(const pl_kctx *k, const pl_xt *x, int64_t *cl, int64_t *c0, int64_t *np)
{
	const pl_tensor *gx = &k->g->tensors[k->op->in[0]];
	*cl = x->shape[x->rank - 1];
	*c0 = k->in_off[0][x->rank - 1];
	*np = (int64_t)(x->n / (size_t)*cl);
	double positions = 1;
	for (int d = 0; d < gx->rank - 1; d++)
		positions *= (double)gx->shape[d];
	return positions;
}

static int sce(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *x = &in[0], *lab = &in[1];
	int64_t cl, c0, np;
	double positions = pl_kernel_sce_dims(k, x, &cl, &c0, &np);
	float *lse = k->saved->v;
	if (din) {
		if (!din[0].v)
			return 0;
		double g = dy->v[0] / positions;
		for (int64_t p = 0; p < np; p++) {
			int64_t t = (int64_t)lab->v[p] - c0;
			for (int64_t c = 0; c < cl; c++) {
				double pr = exp(x->v[p * cl + c] - lse[p]);
				din[0].v[p * cl + c] = (float)(g * (pr - (c == t)));
			}
		}
		return 0;
	}
	float *mx = pl_malloc(sizeof(float) * 3 * (size_t)(np ? np : 1));
	if (!mx)
		return -1;
	float *st = mx + np; /* per position: sum of exp, target logit */
	for (int64_t p = 0; p < np; p++) {
		float m = -INFINITY;
		for (int64_t c = 0; c < cl; c++)
			m = fmaxf(m, x->v[p * cl + c]);
		mx[p] = m;
	}
	if (k->class_allreduce && k->class_allreduce(k->ud, mx, (size_t)np, 1)) {
		free(mx);
		return -1;
	}
	for (int64_t p = 0; p < np; p++) {
		double s = 0;
		for (int64_t c = 0; c < cl; c++)
			s += exp(x->v[p * cl + c] - mx[p]);
		int64_t t = (int64_t)lab->v[p] - c0;
		st[2 * p] = (float)s;
		st[2 * p + 1] = t >= 0 && t < cl ? x->v[p * cl + t] : 0;
	}
	if (k->class_allreduce && k->class_allreduce(k->ud, st, 2 * (size_t)np, 0)) {
		free(mx);
		return -1;
	}
	double loss = 0;
	for (int64_t p = 0; p < np; p++) {
		lse[p] = mx[p] + logf(st[2 * p]);
		loss += lse[p] - st[2 * p + 1];
	}
	y->v[0] = k->loss_share ? (float)(loss / positions) : 0;
	free(mx);
	return 0;
}

/* Attention's local sizes (graph/ops/attention.c): batch, query heads,
 * key/value heads, queries, keys, head size, value head size; whether the
 * form is 3-D ([b, s, heads x d]); the row strides of Q, K, V and Y. */
typedef struct attn_dims {
	int64_t b, hq, hkv, s, t, d, dv;
	int flat;
	int64_t lq, lk, lv, ly;
} attn_dims;

static void attention_dims(const pl_kctx *k, const pl_xt *in, attn_dims *a)
{
	const pl_xt *Q = &in[0], *K = &in[1];
	pl_attention_head_sizes(k->op, &a->d, &a->dv);
	a->flat = Q->rank == 3;
	a->b = Q->shape[0];
	a->s = Q->shape[a->flat ? 1 : 2];
	a->t = K->shape[a->flat ? 1 : 2];
	a->hq = a->flat ? Q->shape[2] / a->d : Q->shape[1];
	a->hkv = a->flat ? K->shape[2] / a->d : K->shape[1];
	a->lq = a->flat ? a->hq * a->d : a->d;
	a->lk = a->flat ? a->hkv * a->d : a->d;
	a->lv = a->flat ? a->hkv * a->dv : a->dv;
	a->ly = a->flat ? a->hq * a->dv : a->dv;
}

/* where head h (of n heads, each `size` wide) of batch b starts, rows of ld */
static int64_t head_at(const attn_dims *a, int64_t b, int64_t h, int64_t n, int64_t rows,
                       int64_t size)
{
	return a->flat ? b * rows * n * size + h * size : (b * n + h) * rows * size;
}

size_t pl_kernel_saved_elems(const pl_kctx *k, const pl_xt *in)
{
	if (k->op->type == PL_OP_BATCHNORM) /* per channel: mean, 1/std */
		return 2 * (size_t)in[0].shape[1];
	if (k->op->type == PL_OP_RNN || k->op->type == PL_OP_GRU || k->op->type == PL_OP_LSTM)
		/* per step: the gates, H more (2 H when Y is the cells) */
		return (size_t)(in[0].shape[0] * in[0].shape[1] * in[1].shape[0]) *
		       (size_t)(in[1].shape[1] + in[2].shape[2] * (1 + k->op->attrs->cell_states));
	if (k->op->type == PL_OP_ATTENTION) { /* a log-sum-exp per query row */
		attn_dims a;
		attention_dims(k, in, &a);
		return (size_t)(a.b * a.hq * a.s);
	}
	if (k->op->type == PL_OP_DROPOUT) /* its mask, one byte per element */
		return (in[0].n + sizeof(float) - 1) / sizeof(float);
	if (k->op->type == PL_OP_LAYERNORM || k->op->type == PL_OP_RMSNORM) {
		/* fp32 mean and 1/std per row (rows: the dims before the axis) */
		int64_t axis = pl_kernel_axis(k->op, in[0].rank, -1), rows = 1;
		for (int d = 0; d < axis; d++)
			rows *= in[0].shape[d];
		return 2 * (size_t)rows;
	}
	if (k->op->type != PL_OP_SCE)
		return 0;
	return in[0].n / (size_t)in[0].shape[in[0].rank - 1]; /* a log-sum-exp per row */
}

/* ---- mixture of experts (see graph/ops/moe.c) ---- */

/* Routes one group of n tokens: each token's top_k experts by logit (ties to
 * the lower index), in token order, each taking its expert's next free slot
 * of the group while one is left (slot -1: dropped); w is the softmax of the
 * chosen logits. fill has E entries. */
static void moe_route(const float *logits, int64_t n, int64_t E, int64_t topk, int64_t cap,
                      int32_t *ex, int32_t *slot, float *w, int32_t *fill)
{
	memset(fill, 0, sizeof *fill * (size_t)E);
	for (int64_t t = 0; t < n; t++) {
		const float *l = logits + t * E;
		int32_t *te = ex + t * topk;
		for (int64_t j = 0; j < topk; j++) {
			int32_t b = -1;
			for (int64_t e = 0; e < E; e++) {
				int taken = 0;
				for (int64_t i = 0; i < j && !taken; i++)
					taken = te[i] == e;
				if (!taken && (b < 0 || l[e] > l[b]))
					b = (int32_t)e;
			}
			te[j] = b;
		}
		double mx = l[te[0]], sum = 0; /* te[0] holds the largest logit */
		for (int64_t j = 0; j < topk; j++)
			sum += exp((double)l[te[j]] - mx);
		for (int64_t j = 0; j < topk; j++) {
			w[t * topk + j] = (float)(exp((double)l[te[j]] - mx) / sum);
			slot[t * topk + j] = fill[te[j]] < cap ? fill[te[j]]++ : -1;
		}
	}
}

/* in[0]: tokens [T, h] (dispatch) or expert rows [E, C, h] (combine), in[1]:
 * logits [T, E]; local pieces hold whole groups and a slice of h. */
static int moe(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_op *op = k->op;
	int dispatch = op->type == PL_OP_MOE_DISPATCH;
	const pl_tensor *gl = &k->g->tensors[op->in[1]];
	int64_t T = gl->shape[0], E = gl->shape[1], topk = op->attrs->top_k;
	int64_t tg = T / op->attrs->groups, cap = pl_moe_capacity(op->attrs, T, E);
	int64_t ngroups = in[1].shape[0] / tg, h = in[0].shape[in[0].rank - 1];
	int64_t slots = ngroups * cap; /* local dim 1 of the expert rows */
	int32_t *ex = pl_malloc(sizeof *ex * (size_t)(tg * topk)),
	        *slot = pl_malloc(sizeof *slot * (size_t)(tg * topk)),
	        *fill = pl_malloc(sizeof *fill * (size_t)E);
	float *w = pl_malloc(sizeof *w * (size_t)(tg * topk));
	double *g = pl_malloc(sizeof *g * (size_t)topk); /* d loss / d weight of each choice */
	int rc = ex && slot && fill && w && g ? 0 : -1;
	if (!din) {
		memset(y->v, 0, sizeof(float) * y->n);
	} else {
		for (int i = 0; i < 2; i++)
			if (din[i].v)
				memset(din[i].v, 0, sizeof(float) * din[i].n);
	}
	for (int64_t gi = 0; rc == 0 && gi < ngroups; gi++) {
		moe_route(in[1].v + gi * tg * E, tg, E, topk, cap, ex, slot, w, fill);
		for (int64_t t = 0; t < tg; t++) {
			int64_t tok = gi * tg + t;
			double gsum = 0;
			for (int64_t j = 0; j < topk; j++) {
				int32_t s = slot[t * topk + j];
				g[j] = 0;
				if (s < 0)
					continue;
				size_t r = (size_t)((ex[t * topk + j] * slots + gi * cap + s) * h);
				float *xr = dispatch ? NULL : in[0].v + r;
				size_t tr = (size_t)(tok * h);
				if (dispatch) {
					if (!din)
						memcpy(y->v + r, in[0].v + tr,
						       sizeof(float) * (size_t)h);
					else if (din[0].v)
						for (int64_t q = 0; q < h; q++)
							din[0].v[tr + q] += dy->v[r + q];
					continue;
				}
				float wj = w[t * topk + j];
				if (!din) {
					for (int64_t q = 0; q < h; q++)
						y->v[tr + q] += wj * xr[q];
					continue;
				}
				double dot = 0;
				for (int64_t q = 0; q < h; q++) {
					dot += (double)dy->v[tr + q] * xr[q];
					if (din[0].v)
						din[0].v[r + q] = wj * dy->v[tr + q];
				}
				g[j] = dot;
				gsum += wj * dot;
			}
			if (!dispatch && din && din[1].v)
				for (int64_t j = 0; j < topk; j++)
					din[1].v[tok * E + ex[t * topk + j]] =
					    (float)(w[t * topk + j] * (g[j] - gsum));
		}
	}
	free(ex);
	free(slot);
	free(fill);
	free(w);
	free(g);
	return rc;
}

/* ---- Conv, MaxPool, AveragePool: 1 to 3 spatial dimensions, each seen as
 * three (the missing ones of size 1) ---- */

typedef struct geom {
	int64_t n, c, co; /* batch, input channels, output channels (local) */
	int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
	int64_t nin, nout, nk; /* positions of input, output, kernel */
} geom;

static void geom_of(const pl_op *op, const pl_xt *x, const pl_xt *y, const int64_t *kernel, geom *q)
{
	const pl_attrs *a = op->attrs;
	int nsp = x->rank - 2;
	q->n = x->shape[0];
	q->c = x->shape[1];
	q->co = y->shape[1];
	q->nin = q->nout = q->nk = 1;
	for (int i = 0; i < 3; i++) {
		int on = i < nsp;
		q->in[i] = on ? x->shape[2 + i] : 1;
		q->out[i] = on ? y->shape[2 + i] : 1;
		q->k[i] = on ? kernel[i] : 1;
		q->s[i] = on && a->nstrides ? a->strides[i] : 1;
		q->d[i] = on && a->ndilations ? a->dilations[i] : 1;
		q->pb[i] = on && a->npads ? a->pads[i] : 0;
		q->pe[i] = on && a->npads ? a->pads[nsp + i] : 0;
		q->nin *= q->in[i];
		q->nout *= q->out[i];
		q->nk *= q->k[i];
	}
}

/* the input position that kernel position kk of output position o reads,
 * or -1 in the padding */
static int64_t tap(const geom *q, int64_t o, int64_t kk)
{
	int64_t o2 = o % q->out[2], o1 = o / q->out[2] % q->out[1], o0 = o / q->out[2] / q->out[1];
	int64_t k2 = kk % q->k[2], k1 = kk / q->k[2] % q->k[1], k0 = kk / q->k[2] / q->k[1];
	int64_t i0 = o0 * q->s[0] - q->pb[0] + k0 * q->d[0],
	        i1 = o1 * q->s[1] - q->pb[1] + k1 * q->d[1],
	        i2 = o2 * q->s[2] - q->pb[2] + k2 * q->d[2];
	if (i0 < 0 || i0 >= q->in[0] || i1 < 0 || i1 >= q->in[1] || i2 < 0 || i2 >= q->in[2])
		return -1;
	return (i0 * q->in[1] + i1) * q->in[2] + i2;
}

/* col[c * nk + kk][o] = x[c][tap(o, kk)] for the cg channels at x */
static void im2col(const geom *q, const float *x, int64_t cg, float *col)
{
	for (int64_t c = 0; c < cg; c++)
		for (int64_t kk = 0; kk < q->nk; kk++) {
			float *row = col + (c * q->nk + kk) * q->nout;
			for (int64_t o = 0; o < q->nout; o++) {
				int64_t t = tap(q, o, kk);
				row[o] = t < 0 ? 0 : x[c * q->nin + t];
			}
		}
}

/* dx[c][tap(o, kk)] += col[c * nk + kk][o] */
static void col2im(const geom *q, const float *col, int64_t cg, float *dx)
{
	for (int64_t c = 0; c < cg; c++)
		for (int64_t kk = 0; kk < q->nk; kk++) {
			const float *row = col + (c * q->nk + kk) * q->nout;
			for (int64_t o = 0; o < q->nout; o++) {
				int64_t t = tap(q, o, kk);
				if (t >= 0)
					dx[c * q->nin + t] += row[o];
			}
		}
}

/* Conv (X, W[, B]) as a matrix product per sample and group over the
 * unfolded input. The bias is added (and its gradient taken) by the piece
 * holding the first input channels only: the others hold partial sums. */
static int conv(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *x = &in[0], *w = &in[1], *b = k->op->ninputs > 2 ? &in[2] : NULL;
	geom q;
	geom_of(k->op, x, dy ? dy : y, w->shape + 2, &q);
	int64_t cig = w->shape[1], G = q.c / cig, cog = q.co / G, rows = cig * q.nk;
	int bias = b && k->in_off[1][1] == 0;
	size_t ncol = (size_t)rows * (size_t)q.nout;
	float *col = pl_malloc(sizeof(float) * (ncol ? ncol : 1));
	if (!col)
		return -1;
	if (din)
		for (int i = 0; i < k->op->ninputs; i++)
			if (din[i].v)
				memset(din[i].v, 0, sizeof(float) * din[i].n);
	for (int64_t n = 0; n < q.n; n++)
		for (int64_t gi = 0; gi < G; gi++) {
			const float *xg = x->v + (n * q.c + gi * cig) * q.nin;
			const float *wg = w->v + gi * cog * rows;
			size_t yo = (size_t)((n * q.co + gi * cog) * q.nout);
			if (!dy) {
				im2col(&q, xg, cig, col);
				k->gemm(0, 0, cog, q.nout, rows, 1, wg, rows, col, q.nout, 0,
				        y->v + yo, q.nout);
				for (int64_t c = 0; bias && c < cog; c++)
					for (int64_t o = 0; o < q.nout; o++)
						y->v[yo + (size_t)(c * q.nout + o)] +=
						    b->v[gi * cog + c];
				continue;
			}
			const float *g = dy->v + yo;
			if (din[1].v) { /* dW_g += dY_g col^T */
				im2col(&q, xg, cig, col);
				k->gemm(0, 1, cog, rows, q.nout, 1, g, q.nout, col, q.nout, 1,
				        din[1].v + gi * cog * rows, rows);
			}
			if (din[0].v) { /* dcol = W_g^T dY_g, folded back */
				k->gemm(1, 0, rows, q.nout, cog, 1, wg, rows, g, q.nout, 0, col,
				        q.nout);
				col2im(&q, col, cig, din[0].v + (n * q.c + gi * cig) * q.nin);
			}
			for (int64_t c = 0; bias && din[2].v && c < cog; c++) {
				double s = 0;
				for (int64_t o = 0; o < q.nout; o++)
					s += g[c * q.nout + o];
				din[2].v[gi * cog + c] += (float)s;
			}
		}
	free(col);
	return 0;
}

/* ConvTranspose (X, W[, B]): per sample and group the columns W_g^T X_g
 * folded into Y_g (col2im), the Conv from Y to X read backwards (its
 * geometry: Y the input, X the output); backward dX_g = W_g im2col(dY_g),
 * dW_g += X_g im2col(dY_g)^T, dB the sums of dY. With one group the bias goes
 * to the piece holding the first input channels (the others are partial
 * sums); groups are cut whole (depthwise), so each piece adds its own. */
static int convtranspose(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *x = &in[0], *w = &in[1], *b = k->op->ninputs > 2 ? &in[2] : NULL;
	const pl_xt *yy = dy ? dy : y;
	geom q; /* q.c: Y's channels (Co), q.co: X's (Ci), q.nin: Y's positions, q.nout X's */
	geom_of(k->op, yy, x, w->shape + 2, &q);
	/* one group: the piece's input channels, whichever were cut */
	int64_t groups = k->op->attrs->group,
	        cig = groups > 1 ? k->g->tensors[k->op->in[0]].shape[1] / groups : q.co,
	        G = q.co / cig, cog = w->shape[1], rows = cog * q.nk;
	int bias = b && (groups > 1 || k->in_off[1][0] == 0);
	size_t ncol = (size_t)rows * (size_t)q.nout;
	float *col = pl_malloc(sizeof(float) * (ncol ? ncol : 1));
	if (!col)
		return -1;
	if (din) {
		for (int i = 0; i < k->op->ninputs; i++)
			if (din[i].v)
				memset(din[i].v, 0, sizeof(float) * din[i].n);
	} else {
		memset(y->v, 0, sizeof(float) * y->n);
	}
	for (int64_t n = 0; n < q.n; n++)
		for (int64_t gi = 0; gi < G; gi++) {
			size_t xo = (size_t)((n * q.co + gi * cig) * q.nout),
			       yo = (size_t)((n * q.c + gi * cog) * q.nin);
			const float *xg = x->v + xo, *wg = w->v + gi * cig * rows;
			if (!dy) {
				k->gemm(1, 0, rows, q.nout, cig, 1, wg, rows, xg, q.nout, 0, col,
				        q.nout);
				col2im(&q, col, cog, y->v + yo);
				for (int64_t c = 0; bias && c < cog; c++)
					for (int64_t o = 0; o < q.nin; o++)
						y->v[yo + (size_t)(c * q.nin + o)] +=
						    b->v[gi * cog + c];
				continue;
			}
			im2col(&q, dy->v + yo, cog, col);
			if (din[0].v) /* dX_g = W_g col */
				k->gemm(0, 0, cig, q.nout, rows, 1, wg, rows, col, q.nout, 0,
				        din[0].v + xo, q.nout);
			if (din[1].v) /* dW_g += X_g col^T */
				k->gemm(0, 1, cig, rows, q.nout, 1, xg, q.nout, col, q.nout, 1,
				        din[1].v + gi * cig * rows, rows);
			for (int64_t c = 0; bias && din[2].v && c < cog; c++) {
				double s = 0;
				for (int64_t o = 0; o < q.nin; o++)
					s += dy->v[yo + (size_t)(c * q.nin + o)];
				din[2].v[gi * cog + c] += (float)s;
			}
		}
	free(col);
	return 0;
}

/* Pad: each output element the input element it copies (a padded dimension
 * is whole on every rank, the others line up with the input's piece), or
 * -1 for a constant one */
static int64_t pad_source(const pl_attrs *a, const pl_xt *x, const int64_t *ix)
{
	int64_t at = 0;
	for (int d = 0; d < x->rank; d++) {
		int64_t n = x->shape[d], i = ix[d] - a->pads[d];
		if (i < 0 || i >= n) {
			if (a->pad_mode == PL_PAD_CONSTANT)
				return -1;
			int64_t p = 2 * (n - 1); /* reflect: mirrored as often as it takes */
			if (a->pad_mode == PL_PAD_WRAP)
				i = (i % n + n) % n;
			else if (a->pad_mode == PL_PAD_EDGE || p == 0)
				i = i < 0 ? 0 : n - 1;
			else if ((i = (i % p + p) % p) >= n)
				i = p - i;
		}
		at = at * n + i;
	}
	return at;
}

/* forward: y copies x (or the constant); backward: dx sums the gradients of
 * the output elements that copy each input element */
static int pad(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	const pl_attrs *a = k->op->attrs;
	const pl_xt *ref = y ? y : dy;
	int64_t ix[PL_MAX_RANK] = {0};
	if (dx)
		memset(dx->v, 0, sizeof(float) * dx->n);
	size_t o = 0;
	do {
		int64_t s = pad_source(a, x, ix);
		if (!dx)
			y->v[o] = s < 0 ? (float)a->pad_value : x->v[s];
		else if (s >= 0)
			dx->v[s] += dy->v[o];
		o++;
	} while (ref->rank > 0 && next_index(ix, ref->shape, ref->rank));
	return 0;
}

/* CumSum along the op's axis (whole on every piece): forward the running
 * sum from the start (or the end when reverse), each element itself
 * included unless exclusive; backward the same sum of dy from the other
 * end (an element's gradient is the sum of the gradients of the outputs
 * that include it) */
static int cumsum(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	const pl_op *op = k->op;
	const pl_xt *src = dy ? dy : x, *dst = dy ? dx : y;
	int64_t outer, len, inner;
	pl_kernel_split3(src, pl_kernel_axis(op, src->rank, -1), &outer, &len, &inner);
	int back = op->attrs->reverse != (dy != NULL); /* from the end */
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			double s = 0;
			for (int64_t j = 0; j < len; j++) {
				int64_t at = (o * len + (back ? len - 1 - j : j)) * inner + i;
				double v = src->v[at];
				if (!op->attrs->exclusive)
					s += v;
				dst->v[at] = (float)s;
				if (op->attrs->exclusive)
					s += v;
			}
		}
	return 0;
}

/* ---- recurrent layers (see graph/ops/rnn.c) ---- */

/* One local direction of a recurrent layer: X [S, N, I]; W [G H, I], R
 * [G H, H] and B [2 G H] (or NULL) of its direction; Y's rows of the
 * direction, step t's at y + t * ys (N rows of H); the scratch kept for the
 * backward, step t's at sv + t * N * ld (ld = G H + H, or G H + 2 H with
 * cells): per sample the gates after their activations, then H more (LSTM:
 * the cell; GRU: the recurrent part of the new gate, Rh h + Rbh, when the
 * reset follows it, else r h), then an LSTM's hidden state when Y gets the
 * cells (cells); h0 and c0 the initial states of the direction (N rows of
 * H; NULL: zeros). */
typedef struct rnn_dir {
	pl_optype type;
	int lbr, reverse, cells;
	int64_t S, N, I, H, G, ld;
	const float *x, *w, *r, *b, *h0, *c0;
	float *y, *sv;
	int64_t ys;
} rnn_dir;

/* the hidden state before step t (its rows *hl apart): step tp's (-1: the
 * initial one, or NULL for zeros) */
static const float *rnn_hidden(const rnn_dir *q, int64_t tp, int64_t *hl)
{
	*hl = tp >= 0 && q->cells ? q->ld : q->H;
	if (tp < 0)
		return q->h0;
	return q->cells ? q->sv + tp * q->N * q->ld + q->G * q->H + q->H : q->y + tp * q->ys;
}

static float sigm(float v)
{
	return 1 / (1 + expf(-v));
}

/* the step before t in the direction's order, or -1 */
static int64_t rnn_prev(const rnn_dir *q, int64_t t)
{
	int64_t p = q->reverse ? t + 1 : t - 1;
	return p >= 0 && p < q->S ? p : -1;
}

static int rnn_forward(pl_kctx *k, const rnn_dir *q)
{
	int64_t N = q->N, H = q->H, GH = q->G * H, ld = q->ld, hl;
	float *xw = pl_malloc(sizeof(float) * (size_t)(q->S * N * GH + 1));
	if (!xw)
		return -1;
	k->gemm(0, 1, q->S * N, GH, q->I, 1, q->x, q->I, q->w, q->I, 0, xw, GH);
	int gru = q->type == PL_OP_GRU;
	for (int64_t s = 0; s < q->S; s++) {
		int64_t t = q->reverse ? q->S - 1 - s : s, tp = rnn_prev(q, t);
		float *g = q->sv + t * N * ld, *y = q->y + t * q->ys;
		const float *hp = rnn_hidden(q, tp, &hl);
		const float *gp = tp >= 0 ? q->sv + tp * N * ld : NULL;
		for (int64_t n = 0; n < N; n++)
			for (int64_t j = 0; j < GH; j++) {
				/* GRU with the reset after the product: Rbh goes with it */
				int rb = !(gru && q->lbr && j >= 2 * H);
				g[n * ld + j] = xw[(t * N + n) * GH + j] +
				                (q->b ? q->b[j] + (rb ? q->b[GH + j] : 0) : 0);
			}
		int64_t cols = gru ? 2 * H : GH; /* GRU's new gate below */
		if (hp)
			k->gemm(0, 1, N, cols, H, 1, hp, hl, q->r, H, 1, g, ld);
		for (int64_t n = 0; n < N; n++) {
			float *gn = g + n * ld, *e = gn + GH, *yn = y + n * H;
			const float *hn = hp ? hp + n * hl : NULL;
			if (q->type == PL_OP_RNN) {
				for (int64_t h = 0; h < H; h++)
					yn[h] = gn[h] = tanhf(gn[h]);
				continue;
			}
			if (q->type == PL_OP_LSTM) { /* gates i, o, f, c */
				for (int64_t h = 0; h < H; h++) {
					float i = sigm(gn[h]), o = sigm(gn[H + h]),
					      f = sigm(gn[2 * H + h]), c = tanhf(gn[3 * H + h]);
					float cp = gp      ? gp[n * ld + GH + h]
					           : q->c0 ? q->c0[n * H + h]
					                   : 0;
					gn[h] = i;
					gn[H + h] = o;
					gn[2 * H + h] = f;
					gn[3 * H + h] = c;
					e[h] = f * cp + i * c;
					if (q->cells) { /* Y the cells; h kept after them */
						e[H + h] = o * tanhf(e[h]);
						yn[h] = e[h];
					} else {
						yn[h] = o * tanhf(e[h]);
					}
				}
				continue;
			}
			for (int64_t h = 0; h < 2 * H; h++) /* GRU: gates z, r, then n */
				gn[h] = sigm(gn[h]);
			for (int64_t h = 0; h < H; h++)
				e[h] = q->lbr ? (q->b ? q->b[GH + 2 * H + h] : 0)
				              : (hn ? gn[H + h] * hn[h] : 0);
		}
		if (gru && hp) /* the new gate's recurrent product: of h, or of r h */
			k->gemm(0, 1, N, H, H, 1, q->lbr ? hp : g + GH, q->lbr ? hl : ld,
			        q->r + 2 * H * H, H, 1, q->lbr ? g + GH : g + 2 * H, ld);
		for (int64_t n = 0; gru && n < N; n++) {
			float *gn = g + n * ld, *e = gn + GH, *yn = y + n * H;
			const float *hn = hp ? hp + n * hl : NULL;
			for (int64_t h = 0; h < H; h++) {
				float z = gn[h], r = gn[H + h];
				float nv = tanhf(gn[2 * H + h] + (q->lbr ? r * e[h] : 0));
				gn[2 * H + h] = nv;
				yn[h] = (1 - z) * nv + z * (hn ? hn[h] : 0);
			}
		}
	}
	free(xw);
	return 0;
}

/* Backpropagation through time of one direction: dy its rows of Y's
 * gradient (like y); dx, dw, dr, db, dh0, dc0 (any NULL) receive the
 * gradient, added (the initial states': what flows past the first step). */
static int rnn_backward(pl_kctx *k, const rnn_dir *q, const float *dy, float *dx, float *dw,
                        float *dr, float *db, float *dh0, float *dc0)
{
	int64_t N = q->N, H = q->H, GH = q->G * H, ld = q->ld, hl;
	int gru = q->type == PL_OP_GRU;
	float *da = pl_calloc((size_t)(q->S * N * GH + 1), sizeof(float)); /* input parts */
	float *dar = pl_malloc(sizeof(float) * (size_t)(N * GH + 1));      /* recurrent parts */
	float *dh = pl_calloc((size_t)(N * H + 1), sizeof(float));  /* into the next step back */
	float *dc = pl_calloc((size_t)(N * H + 1), sizeof(float));  /* LSTM's cell */
	float *dq = pl_malloc(sizeof(float) * (size_t)(N * H + 1)); /* GRU: of r h */
	int rc = -1;
	if (!da || !dar || !dh || !dc || !dq)
		goto out;
	for (int64_t s = q->S - 1; s >= 0; s--) {
		int64_t t = q->reverse ? q->S - 1 - s : s, tp = rnn_prev(q, t);
		const float *g = q->sv + t * N * ld, *y = q->y + t * q->ys, *dyt = dy + t * q->ys;
		const float *hp = rnn_hidden(q, tp, &hl);
		const float *gp = tp >= 0 ? q->sv + tp * N * ld : NULL;
		float *dat = da + t * N * GH;
		for (int64_t n = 0; n < N; n++) {
			const float *gn = g + n * ld, *e = gn + GH, *yn = y + n * H;
			const float *hn = hp ? hp + n * hl : NULL;
			float *an = dat + n * GH, *rn = dar + n * GH, *dhn = dh + n * H;
			for (int64_t h = 0; h < H; h++) {
				/* (Y the cells: its gradient goes to the cell) */
				float d = (q->cells ? 0 : dyt[n * H + h]) + dhn[h];
				if (q->type == PL_OP_RNN) {
					an[h] = rn[h] = d * (1 - yn[h] * yn[h]);
					dhn[h] = 0;
				} else if (q->type == PL_OP_LSTM) {
					float i = gn[h], o = gn[H + h], f = gn[2 * H + h],
					      c = gn[3 * H + h];
					float tc = tanhf(e[h]);
					float cp = gp      ? gp[n * ld + GH + h]
					           : q->c0 ? q->c0[n * H + h]
					                   : 0;
					float dcell = dc[n * H + h] + d * o * (1 - tc * tc) +
					              (q->cells ? dyt[n * H + h] : 0);
					an[h] = dcell * c * i * (1 - i);
					an[H + h] = d * tc * o * (1 - o);
					an[2 * H + h] = dcell * cp * f * (1 - f);
					an[3 * H + h] = dcell * i * (1 - c * c);
					dc[n * H + h] = dcell * f;
					for (int j = 0; j < 4; j++)
						rn[j * H + h] = an[j * H + h];
					dhn[h] = 0;
				} else {
					float z = gn[h], r = gn[H + h], nv = gn[2 * H + h];
					float hv = hn ? hn[h] : 0;
					float dn = d * (1 - z) * (1 - nv * nv);
					an[h] = rn[h] = d * (hv - nv) * z * (1 - z);
					an[2 * H + h] = dn;
					if (q->lbr) {
						an[H + h] = rn[H + h] = dn * e[h] * r * (1 - r);
						rn[2 * H + h] = dn * r;
					} else {
						rn[2 * H + h] =
						    dn; /* for Rbh; Rh's product below */
					}
					dhn[h] =
					    d * z; /* through the blend; R's part added below */
				}
			}
		}
		if (gru && !q->lbr) { /* the new gate read r h: its gradient, then r's */
			k->gemm(0, 0, N, H, H, 1, dat + 2 * H, GH, q->r + 2 * H * H, H, 0, dq, H);
			for (int64_t n = 0; n < N; n++)
				for (int64_t h = 0; h < H; h++) {
					float r = g[n * ld + H + h], hv = hp ? hp[n * hl + h] : 0;
					dat[n * GH + H + h] = dar[n * GH + H + h] =
					    dq[n * H + h] * hv * r * (1 - r);
					dh[n * H + h] += dq[n * H + h] * r;
				}
			if (dr && hp) /* Rh's gradient from r h (kept in the scratch) */
				k->gemm(1, 0, H, H, N, 1, dat + 2 * H, GH, g + GH, ld, 1,
				        dr + 2 * H * H, H);
		}
		int64_t cols = gru && !q->lbr ? 2 * H : GH; /* R's rows the product used */
		for (int64_t n = 0; db && n < N; n++)
			for (int64_t j = 0; j < GH; j++)
				db[GH + j] += dar[n * GH + j];
		if (hp) {
			k->gemm(0, 0, N, H, cols, 1, dar, GH, q->r, H, 1, dh, H);
			if (dr)
				k->gemm(1, 0, cols, H, N, 1, dar, GH, hp, hl, 1, dr, H);
		}
	}
	for (int64_t i = 0; i < N * H; i++) { /* past the first step: the initial states */
		if (dh0)
			dh0[i] += dh[i];
		if (dc0)
			dc0[i] += dc[i];
	}
	int64_t rows = q->S * N;
	if (dw)
		k->gemm(1, 0, GH, q->I, rows, 1, da, GH, q->x, q->I, 1, dw, q->I);
	for (int64_t i = 0; db && i < rows; i++)
		for (int64_t j = 0; j < GH; j++)
			db[j] += da[i * GH + j];
	if (dx)
		k->gemm(0, 0, rows, q->I, GH, 1, da, GH, q->w, q->I, 1, dx, q->I);
	rc = 0;
out:
	free(da);
	free(dar);
	free(dh);
	free(dc);
	free(dq);
	return rc;
}

/* RNN, GRU, LSTM over the local directions (the first's global index from
 * W's offset) and samples; the backward's gradients overwrite din */
static int recurrent(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_op *op = k->op;
	const pl_xt *x = &in[0], *w = &in[1], *r = &in[2], *b = op->ninputs > 3 ? &in[3] : NULL;
	const pl_xt *h0 = op->ninputs > 4 ? &in[4] : NULL, *c0 = op->ninputs > 5 ? &in[5] : NULL;
	if (!k->saved || !k->saved->v)
		return -1;
	int64_t D = w->shape[0], GH = w->shape[1], H = r->shape[2];
	int cells = op->type == PL_OP_LSTM && op->attrs->cell_states;
	rnn_dir q = {.type = op->type,
	             .lbr = op->attrs->linear_before_reset,
	             .cells = cells,
	             .ld = GH + H + (cells ? H : 0),
	             .S = x->shape[0],
	             .N = x->shape[1],
	             .I = x->shape[2],
	             .H = H,
	             .G = GH / H,
	             .ys = D * x->shape[1] * H};
	if (din)
		for (int i = 0; i < op->ninputs; i++)
			if (din[i].v)
				memset(din[i].v, 0, sizeof(float) * din[i].n);
	for (int64_t d = 0; d < D; d++) {
		int64_t gd = k->in_off[1][0] + d;
		q.reverse = op->attrs->rnn_direction == PL_RNN_REVERSE ||
		            (op->attrs->rnn_direction == PL_RNN_BIDIRECTIONAL && gd == 1);
		q.x = x->v;
		q.w = w->v + d * GH * q.I;
		q.r = r->v + d * GH * H;
		q.b = b ? b->v + d * 2 * GH : NULL;
		q.h0 = h0 ? h0->v + d * q.N * H : NULL;
		q.c0 = c0 ? c0->v + d * q.N * H : NULL;
		q.y = y->v + d * q.N * H;
		q.sv = k->saved->v + d * q.S * q.N * q.ld;
		int rc = din ? rnn_backward(k, &q, dy->v + d * q.N * H, din[0].v,
		                            din[1].v ? din[1].v + d * GH * q.I : NULL,
		                            din[2].v ? din[2].v + d * GH * H : NULL,
		                            b && din[3].v ? din[3].v + d * 2 * GH : NULL,
		                            h0 && din[4].v ? din[4].v + d * q.N * H : NULL,
		                            c0 && din[5].v ? din[5].v + d * q.N * H : NULL)
		             : rnn_forward(k, &q);
		if (rc)
			return rc;
	}
	return 0;
}

/* MaxPool (the first maximum of a window takes its gradient) and
 * AveragePool (over the window's positions in the input, or with
 * count_include_pad over those in the padded input too) */
static int pool(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	const pl_attrs *a = k->op->attrs;
	int max = k->op->type == PL_OP_MAXPOOL;
	geom q;
	geom_of(k->op, x, dy ? dy : y, a->kernel, &q);
	if (dx)
		memset(dx->v, 0, sizeof(float) * dx->n);
	for (int64_t p = 0; p < q.n * q.c; p++) {
		const float *xp = x->v + p * q.nin;
		for (int64_t o = 0; o < q.nout; o++) {
			double acc = max ? -INFINITY : 0;
			int64_t at = -1, cnt = 0;
			for (int64_t kk = 0; kk < q.nk; kk++) {
				int64_t t = tap(&q, o, kk);
				if (t < 0)
					continue;
				cnt++;
				if (!max)
					acc += xp[t];
				else if (xp[t] > acc || at < 0) {
					acc = xp[t];
					at = t;
				}
			}
			if (!max && a->count_include_pad) { /* positions inside the padded input */
				int64_t oi[3] = {o / q.out[2] / q.out[1], o / q.out[2] % q.out[1],
				                 o % q.out[2]};
				cnt = 1;
				for (int i = 0; i < 3; i++) {
					int64_t m = 0;
					for (int64_t ki = 0; ki < q.k[i]; ki++)
						m += oi[i] * q.s[i] - q.pb[i] + ki * q.d[i] <
						     q.in[i] + q.pe[i];
					cnt *= m;
				}
			}
			size_t yi = (size_t)(p * q.nout + o);
			if (!dy) {
				y->v[yi] = (float)(max ? acc : acc / (double)cnt);
				continue;
			}
			float g = dy->v[yi];
			if (max) {
				if (at >= 0)
					dx->v[p * q.nin + at] += g;
				continue;
			}
			for (int64_t kk = 0; kk < q.nk; kk++) {
				int64_t t = tap(&q, o, kk);
				if (t >= 0)
					dx->v[p * q.nin + t] += g / (float)cnt;
			}
		}
	}
	return 0;
}

/* the cubic convolution kernel of coefficient A at distance t (Keys 1981,
 * as ONNX's Resize and PyTorch's bicubic weigh their 4 taps) */
static double cubic_weight(double A, double t)
{
	t = fabs(t);
	if (t <= 1)
		return ((A + 2) * t - (A + 3)) * t * t + 1;
	if (t < 2)
		return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
	return 0;
}

#define RESIZE_TAPS 4 /* the most an axis reads (cubic) */

/* Resize along one spatial axis of `in` elements to `out`: output position
 * i reads its taps (1 nearest, 2 linear, 4 cubic) idx[k] with weights w[k],
 * as ONNX maps and rounds coordinates (pl_attrs); a tap past an edge reads
 * the edge, or with exclude_outside (cubic) is dropped and the others
 * renormalised. Returns the number of taps. */
static int resize_axis(const pl_attrs *a, int64_t in, int64_t out, int64_t i, int64_t *idx,
                       double *w)
{
	double s = (double)out / (double)in, x = 0;
	switch ((enum pl_resize_coord)a->resize_coord) {
	case PL_COORD_HALF_PIXEL: x = ((double)i + 0.5) / s - 0.5; break;
	case PL_COORD_PYTORCH_HALF_PIXEL: x = out > 1 ? ((double)i + 0.5) / s - 0.5 : 0; break;
	case PL_COORD_ALIGN_CORNERS:
		x = out > 1 ? (double)i * (double)(in - 1) / (double)(out - 1) : 0;
		break;
	case PL_COORD_ASYMMETRIC: x = (double)i / s; break;
	}
	double f = floor(x), fr = x - f, r = f;
	int n = 1;
	if (a->resize_mode == PL_RESIZE_LINEAR) {
		n = 2;
		w[0] = 1 - fr;
		w[1] = fr;
	} else if (a->resize_mode == PL_RESIZE_CUBIC) {
		n = 4;
		r = f - 1;
		double sum = 0;
		for (int k = 0; k < 4; k++) {
			int64_t at = (int64_t)f - 1 + k;
			w[k] = cubic_weight(a->cubic_coeff_a, fr - (double)(k - 1));
			if (a->exclude_outside && (at < 0 || at >= in))
				w[k] = 0;
			sum += w[k];
		}
		for (int k = 0; a->exclude_outside && sum != 0 && k < 4; k++)
			w[k] /= sum;
	} else {
		w[0] = 1;
		switch ((enum pl_resize_nearest)a->resize_nearest) {
		case PL_NEAREST_FLOOR: r = f; break;
		case PL_NEAREST_CEIL: r = ceil(x); break;
		case PL_NEAREST_ROUND_PREFER_CEIL: r = fr >= 0.5 ? f + 1 : f; break;
		case PL_NEAREST_ROUND_PREFER_FLOOR: r = fr > 0.5 ? f + 1 : f; break;
		}
	}
	for (int k = 0; k < n; k++) {
		int64_t at = (int64_t)r + k;
		idx[k] = at < 0 ? 0 : at > in - 1 ? in - 1 : at;
	}
	return n;
}

/* Resize of the local pieces (whole in their spatial dimensions): each
 * output element the weighted sum of its taps' product over the axes (1
 * nearest, 2^d linear, 4^d cubic); the gradient scattered back with the
 * same weights. */
static int resize(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	const pl_attrs *a = k->op->attrs;
	const pl_xt *o = dy ? dy : y;
	int nsp = x->rank - 2, taps = 1;
	int64_t nin = 1, nout = 1, tot = 0, in_st[PL_MAX_SPATIAL];
	for (int d = nsp - 1; d >= 0; d--) {
		in_st[d] = nin;
		nin *= x->shape[2 + d];
		nout *= o->shape[2 + d];
		tot += o->shape[2 + d];
	}
	int64_t *ix = pl_malloc(sizeof *ix * (size_t)(RESIZE_TAPS * tot + 1));
	double *wt = pl_malloc(sizeof *wt * (size_t)(RESIZE_TAPS * tot + 1));
	if (!ix || !wt) {
		free(ix);
		free(wt);
		return -1;
	}
	int64_t at[PL_MAX_SPATIAL]; /* where each axis's table starts */
	for (int d = 0, off = 0; d < nsp; off += (int)o->shape[2 + d], d++) {
		at[d] = off;
		for (int64_t i = 0; i < o->shape[2 + d]; i++)
			taps =
			    resize_axis(a, x->shape[2 + d], o->shape[2 + d], i,
			                &ix[RESIZE_TAPS * (off + i)], &wt[RESIZE_TAPS * (off + i)]);
	}
	if (dx)
		memset(dx->v, 0, sizeof(float) * dx->n);
	int combos = 1;
	for (int d = 0; d < nsp; d++)
		combos *= taps;
	for (int64_t p = 0; p < x->shape[0] * x->shape[1]; p++) {
		const float *xp = dy ? NULL : x->v + p * nin; /* (backward: not kept) */
		for (int64_t q = 0; q < nout; q++) {
			int64_t pos[PL_MAX_SPATIAL], rem = q;
			for (int d = nsp - 1; d >= 0; d--) {
				pos[d] = at[d] + rem % o->shape[2 + d];
				rem /= o->shape[2 + d];
			}
			double acc = 0;
			float g = dy ? dy->v[p * nout + q] : 0;
			for (int c = 0; c < combos; c++) {
				double w = 1;
				int64_t t = 0;
				for (int d = 0, cc = c; d < nsp; d++, cc /= taps) {
					int kk = cc % taps;
					w *= wt[RESIZE_TAPS * pos[d] + kk];
					t += ix[RESIZE_TAPS * pos[d] + kk] * in_st[d];
				}
				if (dy)
					dx->v[p * nin + t] += (float)(w * g);
				else
					acc += w * xp[t];
			}
			if (!dy)
				y->v[p * nout + q] = (float)acc;
		}
	}
	free(ix);
	free(wt);
	return 0;
}

/* BatchNormalization over [N, C, S] (S the spatial positions). Training: the
 * batch's statistics, summed here and over the ranks holding the batch's
 * other pieces (class_allreduce), kept in saved ([mean, 1/std] per local
 * channel) for the backward. Inference: the running statistics (inputs 3, 4). */
static int batchnorm(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_op *op = k->op;
	const pl_xt *x = &in[0], *sc = &in[1], *b = &in[2];
	int64_t N = x->shape[0], C = x->shape[1], S = 1;
	for (int d = 2; d < x->rank; d++)
		S *= x->shape[d];
	/* values per channel: the batch's (global) when the ranks that cut it
	 * all-reduce their sums, else this rank's own piece's */
	double M = (double)(k->class_allreduce ? k->g->tensors[op->in[0]].shape[0] : N) * (double)S;
	int train = op->attrs->training_mode;
	float *st = k->saved && k->saved->v ? k->saved->v : NULL, *sum = NULL;
	if (!st)
		return -1;
	if (!(sum = pl_malloc(sizeof(float) * (size_t)(C > 0 ? 2 * C : 1))))
		return -1;
	int rc = -1;
	if (!dy) {
		for (int64_t c = 0; c < C; c++) {
			double mean = train ? 0 : in[3].v[c], var = train ? 0 : in[4].v[c];
			st[c] = (float)mean; /* set below in training */
			if (!train)
				st[C + c] = (float)(1 / sqrt(var + op->attrs->epsilon));
		}
		for (int pass = 0; train && pass < 2; pass++) { /* the mean, then the variance */
			for (int64_t c = 0; c < C; c++) {
				double a = 0, m = st[c];
				for (int64_t n = 0; n < N; n++) {
					const float *xc = x->v + (n * C + c) * S;
					for (int64_t i = 0; i < S; i++)
						a += pass ? (xc[i] - m) * (xc[i] - m) : xc[i];
				}
				sum[c] = (float)a;
			}
			if (k->class_allreduce && k->class_allreduce(k->ud, sum, (size_t)C, 0))
				goto out;
			for (int64_t c = 0; c < C; c++)
				if (pass)
					st[C + c] =
					    (float)(1 / sqrt(sum[c] / M + op->attrs->epsilon));
				else
					st[c] = (float)(sum[c] / M);
		}
		for (int64_t n = 0; n < N; n++)
			for (int64_t c = 0; c < C; c++) {
				const float *xc = x->v + (n * C + c) * S;
				float *yc = y->v + (n * C + c) * S, m = st[c], r = st[C + c];
				for (int64_t i = 0; i < S; i++)
					yc[i] = (xc[i] - m) * r * sc->v[c] + b->v[c];
			}
		rc = 0;
		goto out;
	}
	/* sums of dy and dy * xhat per channel: the bias's and the scale's
	 * gradients here, and (all-reduced) the mean terms of dx in training */
	for (int64_t c = 0; c < C; c++) {
		double g = 0, gx = 0, m = st[c], r = st[C + c];
		for (int64_t n = 0; n < N; n++) {
			const float *xc = x->v + (n * C + c) * S, *gc = dy->v + (n * C + c) * S;
			for (int64_t i = 0; i < S; i++) {
				g += gc[i];
				gx += gc[i] * (xc[i] - m) * r;
			}
		}
		sum[c] = (float)g;
		sum[C + c] = (float)gx;
	}
	for (int i = 1; i < op->ninputs; i++)
		if (din[i].v)
			memset(din[i].v, 0, sizeof(float) * din[i].n);
	for (int64_t c = 0; c < C; c++) {
		if (din[2].v)
			din[2].v[c] = sum[c];
		if (din[1].v)
			din[1].v[c] = sum[C + c];
		/* inference: the running statistics' own gradients, should they
		 * be computed (y = (x - mean) s / sqrt(var + eps) + b) */
		double r = st[C + c];
		if (op->ninputs > 3 && din[3].v)
			din[3].v[c] = (float)(-sc->v[c] * r * sum[c]);
		if (op->ninputs > 4 && din[4].v)
			din[4].v[c] = (float)(-0.5 * sc->v[c] * r * r * sum[C + c]);
	}
	if (din[0].v) {
		if (train && k->class_allreduce &&
		    k->class_allreduce(k->ud, sum, (size_t)(2 * C), 0))
			goto out;
		for (int64_t n = 0; n < N; n++)
			for (int64_t c = 0; c < C; c++) {
				const float *xc = x->v + (n * C + c) * S,
				            *gc = dy->v + (n * C + c) * S;
				float *dc = din[0].v + (n * C + c) * S, m = st[c], r = st[C + c];
				double g = train ? sum[c] / M : 0, gx = train ? sum[C + c] / M : 0;
				for (int64_t i = 0; i < S; i++)
					dc[i] = (float)(sc->v[c] * r *
					                (gc[i] - g - (xc[i] - m) * r * gx));
			}
	}
	rc = 0;
out:
	free(sum);
	return rc;
}

/* y[i] = x[base + the output index times st] over the output (forward), or
 * the same place of dx given dy[i], summed (backward; dx zeroed first) */
static void strided(const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx, int64_t base,
                    const int64_t *st)
{
	const pl_xt *o = dy ? dy : y;
	int64_t ix[PL_MAX_RANK] = {0};
	if (dx)
		memset(dx->v, 0, sizeof(float) * dx->n);
	size_t i = 0;
	if (o->n)
		do {
			int64_t at = base;
			for (int d = 0; d < o->rank; d++)
				at += ix[d] * st[d];
			if (dx)
				dx->v[at] += dy->v[i];
			else
				y->v[i] = x->v[at];
			i++;
		} while (next_index(ix, o->shape, o->rank));
}

/* Expand: x at its broadcast index (stride 0 where it broadcasts) */
static int expand(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	(void)k;
	int64_t bs[PL_MAX_RANK];
	pl_kernel_bcast_strides(x, dy ? dy : y, bs);
	strided(x, y, dy, dx, 0, bs);
	return 0;
}

/* Concat along the op's axis: each input's stretch copied in (forward) or
 * out of the output's gradient (backward) */
static int concat(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	const pl_xt *o = dy ? dy : y;
	int64_t axis = pl_kernel_axis(k->op, o->rank, 0), outer, n, inner, at = 0;
	pl_kernel_split3(o, axis, &outer, &n, &inner);
	for (int i = 0; i < k->op->ninputs; i++) {
		int64_t ni = in[i].shape[axis], len = ni * inner;
		for (int64_t r = 0; r < outer; r++) {
			size_t oo = (size_t)((r * n + at) * inner), io = (size_t)(r * len);
			if (!dy)
				memcpy(y->v + oo, in[i].v + io, sizeof(float) * (size_t)len);
			else if (din[i].v)
				memcpy(din[i].v + io, dy->v + oo, sizeof(float) * (size_t)len);
		}
		at += ni;
	}
	return 0;
}

/* Slice: x from the sliced axes' starts on */
static int slice(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx)
{
	const pl_attrs *a = k->op->attrs;
	int64_t st[PL_MAX_RANK], base = 0;
	pl_kernel_row_strides(x, st);
	for (int i = 0; i < a->nslices; i++)
		base += a->starts[i] * st[a->axes[i]];
	strided(x, y, dy, dx, base, st);
	return 0;
}

/* Attention, as FlashAttention computes it: per query head, P =
 * softmax(scale Q K^T) with keys after the query's global position masked
 * under is_causal, Y = P V; the log-sum-exp of each row is kept (k->saved)
 * and the backward recomputes P from it rather than keeping the scores. K
 * and V are whole along the keys, Q may be a slice of the queries (its
 * offset in_off[0] along the sequence). */
static int attention(pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	attn_dims a;
	attention_dims(k, in, &a);
	int64_t s = a.s, t = a.t, grp = a.hq / a.hkv, q0 = k->in_off[0][a.flat ? 1 : 2];
	float scale =
	    (float)(k->op->attrs->has_scale ? k->op->attrs->scale : 1 / sqrt((double)a.d));
	float *lse = k->saved->v;
	float *P = pl_malloc(sizeof(float) * (size_t)(s * t) * (dy ? 2 : 1));
	if (!P)
		return -1;
	float *dP = dy ? P + s * t : NULL;
	for (int i = 1; dy && i < 3; i++)
		if (din[i].v)
			memset(din[i].v, 0, sizeof(float) * din[i].n);
	for (int64_t bh = 0; bh < a.b * a.hq; bh++) {
		int64_t b = bh / a.hq, h = bh % a.hq, kvh = h / grp;
		int64_t oq = head_at(&a, b, h, a.hq, s, a.d),
		        ok = head_at(&a, b, kvh, a.hkv, t, a.d),
		        ov = head_at(&a, b, kvh, a.hkv, t, a.dv),
		        oy = head_at(&a, b, h, a.hq, s, a.dv);
		const float *q = in[0].v + oq, *kk = in[1].v + ok, *v = in[2].v + ov;
		float *l = lse + bh * s;
		k->gemm(0, 1, s, t, a.d, scale, q, a.lq, kk, a.lk, 0, P, t);
		for (int64_t r = 0; r < s; r++) {
			float *p = P + r * t;
			int64_t n = k->op->attrs->causal ? (q0 + r + 1 < t ? q0 + r + 1 : t) : t;
			if (dy) { /* P again from the kept log-sum-exp */
				for (int64_t c = 0; c < t; c++)
					p[c] = c < n ? expf(p[c] - l[r]) : 0;
				continue;
			}
			float mx = p[0];
			for (int64_t c = 1; c < n; c++)
				mx = p[c] > mx ? p[c] : mx;
			double sum = 0;
			for (int64_t c = 0; c < n; c++)
				sum += p[c] = expf(p[c] - mx);
			for (int64_t c = 0; c < t; c++)
				p[c] = c < n ? (float)(p[c] / sum) : 0;
			l[r] = mx + (float)log(sum);
		}
		if (!dy) {
			k->gemm(0, 0, s, a.dv, t, 1, P, t, v, a.lv, 0, y->v + oy, a.ly);
			continue;
		}
		const float *g = dy->v + oy, *o = y->v + oy;
		if (din[2].v) /* dV += P^T dY */
			k->gemm(1, 0, t, a.dv, s, 1, P, t, g, a.ly, 1, din[2].v + ov, a.lv);
		k->gemm(0, 1, s, t, a.dv, 1, g, a.ly, v, a.lv, 0, dP, t); /* dP = dY V^T */
		for (int64_t r = 0; r < s; r++) { /* dS = P (dP - rowsum(dY Y)) */
			double D = 0;
			for (int64_t c = 0; c < a.dv; c++)
				D += (double)g[r * a.ly + c] * o[r * a.ly + c];
			for (int64_t c = 0; c < t; c++)
				dP[r * t + c] = P[r * t + c] * (dP[r * t + c] - (float)D);
		}
		if (din[0].v) /* dQ = scale dS K */
			k->gemm(0, 0, s, a.d, t, scale, dP, t, kk, a.lk, 0, din[0].v + oq, a.lq);
		if (din[1].v) /* dK += scale dS^T Q */
			k->gemm(1, 0, t, a.d, s, scale, dP, t, q, a.lq, 1, din[1].v + ok, a.lk);
	}
	free(P);
	return 0;
}

/* A one-input op's kernel: f(k, x, y, dy, dx) forward (dy, dx NULL) and
 * backward (y NULL unless the backward reads the output) */
typedef int (*kernel1)(pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy, pl_xt *dx);

/* f on input 0; nothing to do backward when it needs no gradient */
static int one_input(kernel1 f, int reads_y, pl_kctx *k, pl_xt *in, const pl_xt *out,
                     const pl_xt *dout, pl_xt *din)
{
	if (din && !din[0].v)
		return 0;
	return f(k, &in[0], din && !reads_y ? NULL : out, dout, din ? &din[0] : NULL);
}

static int run(pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout, pl_xt *din)
{
	switch (k->op->type) {
	case PL_OP_MATMUL:
		return matmul(k, in, (pl_xt *)out, dout, din);
	PL_CASES_BINARY:
		return binary(k, in, din ? NULL : out, dout, din);
	case PL_OP_WHERE: return where(k, in, din ? NULL : out, dout, din);
	case PL_OP_SOFTMAX: return softmax(k, &in[0], out, dout, din ? &din[0] : NULL);
	case PL_OP_ATTENTION: return attention(k, in, out, dout, din);
	case PL_OP_LAYERNORM:
	case PL_OP_RMSNORM: return norm(k, in, out, dout, din);
	case PL_OP_GATHER: return gather(k, in, out, dout, din);
	case PL_OP_TRANSPOSE: return one_input(transpose, 0, k, in, out, dout, din);
	case PL_OP_REDUCESUM:
	case PL_OP_REDUCEMEAN:
	case PL_OP_REDUCEMAX:
	case PL_OP_REDUCEMIN: return one_input(reduce, 1, k, in, out, dout, din);
	case PL_OP_REDUCEPROD: return one_input(reduce_prod, 1, k, in, out, dout, din);
	case PL_OP_SCE: return sce(k, in, out, dout, din);
	case PL_OP_MOE_DISPATCH:
	case PL_OP_MOE_COMBINE: return moe(k, in, out, dout, din);
	case PL_OP_CONV: return conv(k, in, din ? NULL : out, dout, din);
	case PL_OP_CONVTRANSPOSE: return convtranspose(k, in, din ? NULL : out, dout, din);
	case PL_OP_RNN:
	case PL_OP_GRU:
	case PL_OP_LSTM: return recurrent(k, in, out, dout, din);
	case PL_OP_CUMSUM: return one_input(cumsum, 0, k, in, out, dout, din);
	case PL_OP_ARGMAX:
	case PL_OP_ARGMIN:
	case PL_OP_TOPK: return one_input(argmax, 0, k, in, out, dout, din);
	case PL_OP_ONEHOT: return one_input(onehot, 0, k, in, out, dout, din);
	case PL_OP_GATHERELEMENTS: return gather_elements(k, in, din ? NULL : out, dout, din);
	case PL_OP_GRIDSAMPLE: return gridsample(k, in, din ? NULL : out, dout, din);
	case PL_OP_PAD: return one_input(pad, 0, k, in, out, dout, din);
	case PL_OP_BATCHNORM: return batchnorm(k, in, din ? NULL : out, dout, din);
	case PL_OP_EXPAND: return one_input(expand, 0, k, in, out, dout, din);
	case PL_OP_CONCAT: return concat(k, in, din ? NULL : out, dout, din);
	case PL_OP_SLICE: return one_input(slice, 0, k, in, out, dout, din);
	case PL_OP_MAXPOOL:
	case PL_OP_AVGPOOL: return one_input(pool, 0, k, in, out, dout, din);
	case PL_OP_RESIZE: return one_input(resize, 0, k, in, out, dout, din);
	case PL_OP_RESHAPE: /* the local pieces keep their element order */
		if (din) {
			if (din[0].v)
				memcpy(din[0].v, dout->v, sizeof(float) * din[0].n);
		} else {
			memcpy(out->v, in[0].v, sizeof(float) * out->n);
		}
		return 0;
	case PL_OP_CLIP:
	case PL_OP_HARDSIGMOID:
	case PL_OP_HARDSWISH:
	case PL_OP_LEAKYRELU:
	case PL_OP_ELU:
	case PL_OP_SELU:
	case PL_OP_CELU:
	case PL_OP_POW:
	PL_CASES_UNARY_MATH:
		return one_input(unary, 1, k, in, out, dout, din);
	case PL_OP_COUNT: break;
	}
	return -1; /* no kernel: an op type added to the IR without one */
}

int pl_kernel_forward(pl_kctx *k, pl_xt *in, pl_xt *out)
{
	return run(k, in, out, NULL, NULL);
}

int pl_kernel_backward(pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout, pl_xt *din)
{
	return run(k, in, out, dout, din);
}
