/* Variable elimination with min-size greedy ordering.
 *
 * Invariant (scalar mode): after eliminating x, the new table g over the
 * neighbours N of x holds g(N) = min_x sum of the tables that mentioned x, so
 * the sum of the live tables, minimized over the live variables, equals the
 * optimum of the original sum. Pareto mode keeps every (time, memory) point
 * not dominated at each entry; memory is additive and nonnegative, so points
 * over the limit are dropped early without losing the optimum. Exact unless
 * a Pareto set had to be cut to `cap` points (v->truncated).
 * Cost: sum over eliminations of |table| * |domain|, times the Pareto sizes. */
#include "search/ve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <time.h>

#include "graph/clock.h"
#include "graph/parallel.h"
#include "graph/alloc.h"

int ve_init(ve *v, int nvar, const int *dom)
{
	memset(v, 0, sizeof *v);
	v->nvar = nvar;
	v->dom = dom;
	v->vf = pl_calloc((size_t)nvar + 1, sizeof *v->vf);
	v->nvf = pl_calloc((size_t)nvar + 1, sizeof *v->nvf);
	v->capvf = pl_calloc((size_t)nvar + 1, sizeof *v->capvf);
	v->active = pl_calloc((size_t)nvar + 1, 1);
	v->keep = pl_calloc((size_t)nvar + 1, 1);
	v->done = pl_calloc((size_t)nvar + 1, 1);
	v->order = pl_malloc(sizeof *v->order * ((size_t)nvar + 1));
	v->var_factor = pl_malloc(sizeof *v->var_factor * ((size_t)nvar + 1));
	v->max_entries = (size_t)1 << 26;
	v->max_total = (size_t)1 << 27;
	v->cap = 256;
	if (!v->vf || !v->nvf || !v->capvf || !v->active || !v->keep || !v->done || !v->order ||
	    !v->var_factor)
		return -1;
	for (int i = 0; i < nvar; i++)
		v->var_factor[i] = -1;
	return 0;
}

void ve_free(ve *v)
{
	for (int i = 0; i < v->nf; i++) {
		ve_factor *f = &v->f[i];
		if (f->borrowed)
			continue;
		free(f->own_t);
		free(f->arg);
		free(f->pstart);
		free(f->pcount);
		free(f->pts);
		free(f->trace);
	}
	for (int i = 0; i < v->nvar && v->vf; i++)
		free(v->vf[i]);
	free(v->f);
	free(v->vf);
	free(v->nvf);
	free(v->capvf);
	free(v->active);
	free(v->keep);
	free(v->done);
	free(v->order);
	free(v->var_factor);
	memset(v, 0, sizeof *v);
}

static int link_var(ve *v, int var, int fi)
{
	if (v->nvf[var] == v->capvf[var]) {
		int cap = v->capvf[var] ? 2 * v->capvf[var] : 8;
		int *n = pl_realloc(v->vf[var], sizeof *n * (size_t)cap);
		if (!n)
			return -1;
		v->vf[var] = n;
		v->capvf[var] = cap;
	}
	v->vf[var][v->nvf[var]++] = fi;
	return 0;
}

static int new_factor(ve *v)
{
	if (v->nf == v->capf) {
		int cap = v->capf ? 2 * v->capf : 64;
		ve_factor *n = pl_realloc(v->f, sizeof *n * (size_t)cap);
		if (!n)
			return -1;
		v->f = n;
		v->capf = cap;
	}
	memset(&v->f[v->nf], 0, sizeof v->f[v->nf]);
	v->f[v->nf].alive = 1;
	v->f[v->nf].elim = -1;
	return v->nf++;
}

static int register_factor(ve *v, int fi)
{
	ve_factor *f = &v->f[fi];
	v->alive_minm += f->minm;
	for (int k = 0; k < f->nv; k++) {
		v->active[f->vars[k]] = 1;
		if (link_var(v, f->vars[k], fi))
			return -1;
	}
	return 0;
}

/* A new input table over vars; returns its index or -1. */
static int new_input(ve *v, int nv, const int *vars, const size_t *stride, size_t size)
{
	if (nv > VE_MAXK)
		return -1;
	int fi = new_factor(v);
	if (fi < 0)
		return -1;
	ve_factor *f = &v->f[fi];
	f->nv = nv;
	for (int k = 0; k < nv; k++) {
		f->vars[k] = vars[k];
		f->stride[k] = stride[k];
	}
	f->size = size;
	return fi;
}

int ve_add(ve *v, int nv, const int *vars, const size_t *stride, size_t size, const double *t,
           const double *m)
{
	int fi = new_input(v, nv, vars, stride, size);
	if (fi < 0)
		return -1;
	ve_factor *f = &v->f[fi];
	f->t = t;
	f->m = m;
	f->minm = 0;
	if (m && size) {
		f->minm = m[0];
		for (size_t e = 1; e < size; e++)
			if (m[e] < f->minm)
				f->minm = m[e];
	}
	return register_factor(v, fi);
}

int ve_add_pareto(ve *v, int nv, const int *vars, const size_t *stride, size_t size,
                  const ve_factor *from)
{
	int fi = new_input(v, nv, vars, stride, size);
	if (fi < 0)
		return -1;
	ve_factor *f = &v->f[fi];
	f->pstart = from->pstart;
	f->pcount = from->pcount;
	f->pts = from->pts;
	f->npts = from->npts;
	f->borrowed = 1;
	f->minm = from->minm;
	return register_factor(v, fi);
}

/* The live tables mentioning x and the union of their scopes without x;
 * -1 when more than VE_MAXF tables mention x, -2 when their scopes hold more
 * than VE_MAXK other variables. */
static int gather(const ve *v, int x, int *F, int *nF, int *N, int *nN, double *size)
{
	*nF = 0;
	*nN = 0;
	*size = 1;
	for (int i = 0; i < v->nvf[x]; i++) {
		int fi = v->vf[x][i];
		const ve_factor *f = &v->f[fi];
		if (!f->alive)
			continue;
		int dup = 0;
		for (int j = 0; j < *nF; j++)
			dup |= F[j] == fi;
		if (dup)
			continue;
		if (*nF == VE_MAXF)
			return -1;
		F[(*nF)++] = fi;
		for (int k = 0; k < f->nv; k++) {
			int u = f->vars[k], seen = u == x;
			for (int j = 0; j < *nN && !seen; j++)
				seen = N[j] == u;
			if (!seen) {
				if (*nN == VE_MAXK)
					return -2;
				N[(*nN)++] = u;
				*size *= v->dom[u];
			}
		}
	}
	/* sorted scope: deterministic tables */
	for (int i = 1; i < *nN; i++)
		for (int j = i; j > 0 && N[j - 1] > N[j]; j--) {
			int t = N[j];
			N[j] = N[j - 1];
			N[j - 1] = t;
		}
	return 0;
}

static size_t stride_of(const ve_factor *f, int var)
{
	for (int k = 0; k < f->nv; k++)
		if (f->vars[k] == var)
			return f->stride[k];
	return 0;
}

/* ---- Pareto sets ---- */

/* A Pareto list shifted by (t0, m0): its points ascend in time and descend in
 * memory, as every stored set does (merge writes them so). */
typedef struct plist {
	double t0, m0;
	const ve_point *p;
	int n, k;
} plist;

/* a list's next point in the merge's heap */
typedef struct head {
	double t, m;
	int list;
} head;

typedef struct pbuf {
	ve_point *st[VE_MAXF]; /* the running sum's set after each source table */
	size_t capst[VE_MAXF];
	ve_point *cand; /* every x's set; trace: offset of its choices in pool */
	size_t capc;
	int32_t *pool; /* per candidate: x, then a point per source table */
	size_t cappool;
	ve_point *out;
	size_t capo;
	plist *lists;
	size_t capl;
	head *heap;
	int *xstart;
	size_t caph, capx;
} pbuf;

/* p with room for need > *cap elements, or NULL with p kept */
static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	void *n = pl_realloc(p, elem * c);
	if (n)
		*cap = c;
	return n;
}

#define GROW(a, cap, need)                                                                         \
	do {                                                                                       \
		if ((need) > (cap)) {                                                              \
			void *grown_ = grow((a), &(cap), (need), sizeof *(a));                     \
			if (!grown_)                                                               \
				return -1;                                                         \
			(a) = grown_;                                                              \
		}                                                                                  \
	} while (0)

static int head_less(const head *a, const head *b)
{
	return a->t < b->t || (a->t == b->t && a->m < b->m);
}

static void sift_down(head *h, int nh, int i)
{
	head x = h[i];
	for (;;) {
		int c = 2 * i + 1;
		if (c >= nh)
			break;
		if (c + 1 < nh && head_less(&h[c + 1], &h[c]))
			c++;
		if (!head_less(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* The first element from l->k on whose memory is below `bound` (at most
 * `bound` if !strict), or l->n: memory descends along a list. */
static int first_below(const plist *l, double bound, int strict)
{
#define BELOW(i) (strict ? l->m0 + l->p[i].m < bound : l->m0 + l->p[i].m <= bound)
	int lo = l->k, step = 1;
	if (lo >= l->n || BELOW(lo))
		return lo;
	/* gallop: the answer is usually near */
	int hi = lo + 1;
	while (hi < l->n && !BELOW(hi)) {
		lo = hi;
		step *= 2;
		hi = lo + step;
	}
	if (hi > l->n)
		hi = l->n;
	lo++; /* p[lo - 1] is not below; the answer is in [lo, hi] */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (BELOW(mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
#undef BELOW
}

/* The Pareto set of the union of lists L under the limit, in ascending time,
 * cut to v->cap (evenly, the extremes kept; flags truncation). A k-way merge
 * by time keeps a point when it needs less memory than every point before it,
 * so a list moves on past the points that need as much as the last one kept.
 * out[i].trace = list << 32 | element. Returns the count, or -1. */
static int merge(ve *v, plist *L, int nl, head **heap, size_t *caph, ve_point **out, size_t *capo)
{
	GROW(*heap, *caph, (size_t)nl + 1);
	head *h = *heap;
	int nh = 0;
	for (int i = 0; i < nl; i++) {
		plist *l = &L[i];
		if (v->limit > 0)
			l->k = first_below(l, v->eff_limit, 0);
		if (l->k < l->n)
			h[nh++] = (head){l->t0 + l->p[l->k].t, l->m0 + l->p[l->k].m, i};
	}
	for (int i = nh / 2 - 1; i >= 0; i--)
		sift_down(h, nh, i);
	int n = 0;
	double best_m = 0;
	while (nh > 0) {
		plist *l = &L[h[0].list];
		if (n == 0 || h[0].m < best_m) {
			GROW(*out, *capo, (size_t)n + 1);
			(*out)[n].t = h[0].t;
			(*out)[n].m = h[0].m;
			(*out)[n].trace = (int64_t)h[0].list << 32 | l->k;
			n++;
			best_m = h[0].m;
		}
		l->k++; /* skip what the point kept last dominates */
		l->k = first_below(l, best_m, 1);
		if (l->k == l->n) {
			h[0] = h[--nh];
		} else {
			h[0].t = l->t0 + l->p[l->k].t;
			h[0].m = l->m0 + l->p[l->k].m;
		}
		sift_down(h, nh, 0);
	}
	if (n > v->cap) {
		v->truncated = 1;
		for (int i = 0; i < v->cap; i++)
			(*out)[i] = (*out)[(size_t)i * (size_t)(n - 1) / (size_t)(v->cap - 1)];
		n = v->cap;
	}
	return n;
}

/* points of factor f at entry e (input tables have exactly one) */
static int points_at(const ve_factor *f, size_t e, const ve_point **pts, ve_point *one)
{
	if (f->pts) {
		*pts = f->pts + f->pstart[e];
		return f->pcount[e];
	}
	one->t = f->t ? f->t[e] : 0;
	one->m = f->m ? f->m[e] : 0;
	one->trace = -1;
	*pts = one;
	return 1;
}

/* Pareto set of one entry of the new table: over x, the Minkowski sum of the
 * source tables' sets. Appends the result to g. */
static int pareto_entry(ve *v, ve_factor *g, const int *F, int nF, const size_t *base,
                        const size_t *sx, int dx, pbuf *B, size_t entry)
{
	const ve_point zero = {0, 0, -1};
	size_t nc = 0, npool = 0;
	GROW(B->xstart, B->capx, 2 * (size_t)dx);
	GROW(B->lists, B->capl, (size_t)dx);
	for (int x = 0; x < dx; x++) {
		const ve_point *cur = &zero;
		int ncur = 1;
		for (int j = 0; j < nF && ncur > 0; j++) {
			ve_point one;
			const ve_point *pts;
			int np = points_at(&v->f[F[j]], base[j] + (size_t)x * sx[j], &pts, &one);
			/* one list per point of the smaller set: a smaller heap */
			int swap = np < ncur, nl = swap ? np : ncur;
			GROW(B->lists, B->capl, (size_t)nl);
			for (int i = 0; i < nl; i++)
				B->lists[i] = swap ? (plist){pts[i].t, pts[i].m, cur, ncur, 0}
				                   : (plist){cur[i].t, cur[i].m, pts, np, 0};
			ncur = merge(v, B->lists, nl, &B->heap, &B->caph, &B->st[j], &B->capst[j]);
			if (ncur < 0)
				return -1;
			cur = B->st[j];
			for (int i = 0; swap && i < ncur; i++) { /* trace: point of cur << 32 | q */
				int64_t tr = B->st[j][i].trace;
				B->st[j][i].trace = (tr & 0xffffffff) << 32 | tr >> 32;
			}
		}
		B->xstart[2 * x] = (int)nc;
		B->xstart[2 * x + 1] = ncur;
		GROW(B->cand, B->capc, nc + (size_t)ncur);
		GROW(B->pool, B->cappool, npool + (size_t)ncur * (size_t)(nF + 1));
		for (int i = 0; i < ncur; i++) { /* the choices behind each point */
			int32_t *c = B->pool + npool;
			c[0] = x;
			int64_t e = i;
			for (int j = nF - 1; j >= 0; j--) {
				int64_t tr = B->st[j][e].trace;
				c[1 + j] = (int32_t)(tr & 0xffffffff);
				e = tr >> 32;
			}
			B->cand[nc] = (ve_point){cur[i].t, cur[i].m, (int64_t)npool};
			nc++;
			npool += (size_t)nF + 1;
		}
	}
	for (int x = 0; x < dx; x++)
		B->lists[x] = (plist){0, 0, B->cand + B->xstart[2 * x], B->xstart[2 * x + 1], 0};
	int n = merge(v, B->lists, dx, &B->heap, &B->caph, &B->out, &B->capo);
	if (n < 0)
		return -1;
	/* store */
	size_t need = g->npts + (size_t)n;
	ve_point *np = pl_realloc(g->pts, sizeof *np * (need + 1));
	if (!np)
		return -1;
	g->pts = np;
	int32_t *nt =
	    pl_realloc(g->trace, sizeof *nt * (g->ntrace + (size_t)n * (size_t)(nF + 1) + 1));
	if (!nt)
		return -1;
	g->trace = nt;
	g->pstart[entry] = (int64_t)g->npts;
	g->pcount[entry] = n;
	for (int i = 0; i < n; i++) {
		int64_t tr = B->out[i].trace;
		const ve_point *c = &B->cand[B->xstart[2 * (tr >> 32)] + (tr & 0xffffffff)];
		ve_point *o = &g->pts[g->npts++];
		o->t = B->out[i].t;
		o->m = B->out[i].m;
		o->trace = (int64_t)g->ntrace;
		memcpy(g->trace + g->ntrace, B->pool + c->trace, sizeof *nt * (size_t)(nF + 1));
		g->ntrace += (size_t)nF + 1;
	}
	return 0;
}

/* Scalar mode: entries [e0, e1) of the table g that eliminating x makes. */
typedef struct scalar_job {
	const ve *v;
	ve_factor *g;
	const double *ft[VE_MAXF];
	size_t sN[VE_MAXF][VE_MAXK], sx[VE_MAXF];
	int nF, nN, dx;
	const int *N;
	size_t e0, e1;
	int rows;    /* by whole rows (scalar_rows): e0 and e1 on row boundaries */
	double *acc; /* dx sums, or a row's */
	int late;    /* set when v->deadline passed part way (the table is unfinished) */
} scalar_job;

/* entries between two looks at the clock while a table is filled: one table
 * may hold 1e8 entries (seconds), and a time limit must hold within it */
#define VE_CLOCK_EVERY 65536

/* Past v's deadline (none: never). */
static int ve_late(const ve *v)
{
	return v->deadline > 0 && pl_now() > v->deadline;
}

/* A row of sums: sum[l] = f[l * sl] where first (0 + f: the same value), else
 * sum[l] + f[l * sl]; sl 1 (contiguous) and 0 (one value along the row) get
 * loops of their own, which the compiler vectorises. */
static void row_add(double *restrict sum, const double *restrict f, size_t sl, size_t len,
                    int first)
{
	if (first) {
		if (sl == 1)
			memcpy(sum, f, sizeof *sum * len);
		else
			for (size_t l = 0; l < len; l++)
				sum[l] = f[l * sl];
	} else if (sl == 1) {
		for (size_t l = 0; l < len; l++)
			sum[l] += f[l];
	} else if (sl == 0) {
		for (size_t l = 0; l < len; l++)
			sum[l] += f[0];
	} else {
		for (size_t l = 0; l < len; l++)
			sum[l] += f[l * sl];
	}
}

/* The row's minima over x updated with value xv's sums: sum[l] + f[l * sl]
 * (f NULL: sum[l] alone); a strictly smaller sum wins, so the least x wins
 * ties. Without branches, which the sums' order makes unpredictable (the
 * compiler turns a plain select back into one): minpd is v < b ? v : b lane
 * by lane, and the index follows the same comparison's mask. */
static void row_min(double *restrict best, int *restrict arg, const double *restrict sum,
                    const double *restrict f, size_t sl, size_t len, int xv)
{
	size_t l = 0;
#if defined(__SSE2__)
	for (; l + 2 <= len; l += 2) {
		__m128d v = _mm_loadu_pd(sum + l), b = _mm_loadu_pd(best + l);
		if (f)
			v = _mm_add_pd(v, sl == 1 ? _mm_loadu_pd(f + l)
			                          : _mm_set_pd(f[(l + 1) * sl], f[l * sl]));
		_mm_storeu_pd(best + l, _mm_min_pd(v, b));
		if (arg) {
			int m = _mm_movemask_pd(_mm_cmplt_pd(v, b));
			arg[l] += (xv - arg[l]) & -(m & 1);
			arg[l + 1] += (xv - arg[l + 1]) & -(m >> 1 & 1);
		}
	}
#endif
	for (; l < len; l++) {
		double v = f ? sum[l] + f[l * sl] : sum[l];
		if (v < best[l]) {
			best[l] = v;
			if (arg)
				arg[l] = xv;
		}
	}
}

/* Whole rows of g (runs of its last variable L): for each value of x, every
 * table's slice along L is added into a row of sums, which then updates the
 * row's minima. The sums per entry are the same in the same order as entry
 * by entry, and the least x wins ties as there, so the tables are
 * bit-identical; but the inner loops run along L (contiguous in the tables
 * that end in it) instead of along x (strided in all but one), and the last
 * table's slice is added as the minima are taken. */
static void scalar_rows(scalar_job *w)
{
	const ve *v = w->v;
	int digit[VE_MAXK] = {0}, nN = w->nN, nF = w->nF, dx = w->dx;
	size_t len = (size_t)v->dom[w->N[nN - 1]], rem = w->e0 / len, base[VE_MAXF];
	for (int k = nN - 2; k >= 0; k--) {
		size_t d = (size_t)v->dom[w->N[k]];
		digit[k] = (int)(rem % d);
		rem /= d;
	}
	int live[VE_MAXF], nl = 0; /* the tables there are */
	for (int j = 0; j < nF; j++)
		if (w->ft[j])
			live[nl++] = j;
	double *sum = w->acc, *best_row;
	int *arg_row;
	size_t since = 0;
	for (size_t e = w->e0; e < w->e1; e += len) {
		if ((since += len * (size_t)dx) >= VE_CLOCK_EVERY) {
			since = 0;
			if (ve_late(v)) {
				w->late = 1;
				return;
			}
		}
		for (int j = 0; j < nF; j++) {
			size_t b = 0;
			for (int k = 0; k < nN - 1; k++)
				b += (size_t)digit[k] * w->sN[j][k];
			base[j] = b;
		}
		best_row = w->g->own_t + e;
		arg_row = w->g->arg ? w->g->arg + e : NULL;
		for (size_t l = 0; l < len; l++)
			best_row[l] = 1e300;
		if (arg_row)
			memset(arg_row, 0, sizeof *arg_row * len);
		for (int xv = 0; xv < dx; xv++) {
			if (nl == 0) { /* no table: every sum is 0 */
				for (size_t l = 0; l < len; l++)
					sum[l] = 0;
				row_min(best_row, arg_row, sum, NULL, 0, len, xv);
				continue;
			}
			for (int i = 0; i < nl - 1; i++) {
				int j = live[i];
				row_add(sum, w->ft[j] + base[j] + (size_t)xv * w->sx[j], w->sN[j][nN - 1], len,
				        i == 0);
			}
			int j = live[nl - 1];
			const double *f = w->ft[j] + base[j] + (size_t)xv * w->sx[j];
			size_t sl = w->sN[j][nN - 1];
			if (nl == 1) /* the one table's slice is the sums (0 + f) */
				row_add(sum, f, sl, len, 1);
			row_min(best_row, arg_row, sum, nl == 1 ? NULL : f, sl, len, xv);
		}
		for (int k = nN - 2; k >= 0; k--) {
			if (++digit[k] < v->dom[w->N[k]])
				break;
			digit[k] = 0;
		}
	}
}

static void *scalar_range(void *arg)
{
	scalar_job *w = arg;
	if (w->rows) {
		scalar_rows(w);
		return NULL;
	}
	const ve *v = w->v;
	int digit[VE_MAXK] = {0}, nN = w->nN, nF = w->nF, dx = w->dx;
	size_t rem = w->e0, base[VE_MAXF];
	for (int k = nN - 1; k >= 0; k--) { /* e0 in mixed radix, last variable fastest */
		size_t d = (size_t)v->dom[w->N[k]];
		digit[k] = (int)(rem % d);
		rem /= d;
	}
	double *acc = w->acc;
	size_t since = 0;
	for (size_t e = w->e0; e < w->e1; e++) {
		if ((since += (size_t)dx) >= VE_CLOCK_EVERY) {
			since = 0;
			if (ve_late(v)) {
				w->late = 1;
				return NULL;
			}
		}
		for (int j = 0; j < nF; j++) {
			size_t b = 0;
			for (int k = 0; k < nN; k++)
				b += (size_t)digit[k] * w->sN[j][k];
			base[j] = b;
		}
		/* table by table over x: the same sums in the same order as value by
		 * value, and a contiguous table is one vector add */
		for (int xv = 0; xv < dx; xv++)
			acc[xv] = 0;
		for (int j = 0; j < nF; j++) {
			if (!w->ft[j])
				continue;
			const double *f = w->ft[j] + base[j];
			size_t st = w->sx[j];
			if (st == 1)
				for (int xv = 0; xv < dx; xv++)
					acc[xv] += f[xv];
			else
				for (int xv = 0; xv < dx; xv++)
					acc[xv] += f[(size_t)xv * st];
		}
		double best = 1e300;
		int arg = 0;
		for (int xv = 0; xv < dx; xv++)
			if (acc[xv] < best) {
				best = acc[xv];
				arg = xv;
			}
		w->g->own_t[e] = best;
		if (w->g->arg)
			w->g->arg[e] = arg;
		for (int k = nN - 1; k >= 0; k--) {
			if (++digit[k] < v->dom[w->N[k]])
				break;
			digit[k] = 0;
		}
	}
	return NULL;
}

/* entries x values x tables from which a table's entries are split over two
 * threads: the whole-job search solves many mid-sized tables (Llama-2 70B on
 * 4096 devices: 4e6 took 3.0-3.3 s, 2.5e5 2.8-3.1 s, 3e4 no faster on the
 * 2-core VM) */
#define VE_SPLIT_WORK 2.5e5
#define VE_ROW_MIN    8 /* by rows when the last variable has this many values */

static void scalar_half(void *ctx, int i)
{
	scalar_range((scalar_job *)ctx + i);
}

/* Every entry, the second half on a second thread when the table is large
 * and the machine has a second core (entries are independent). 0, or -1 out
 * of memory; job->late when the deadline stopped it part way. */
static int scalar_entries(scalar_job *job, size_t size)
{
	size_t len = job->nN > 0 ? (size_t)job->v->dom[job->N[job->nN - 1]] : 1;
	size_t nacc = len > (size_t)job->dx ? len : (size_t)job->dx;
	job->rows = len >= VE_ROW_MIN;
	job->e0 = 0;
	job->e1 = size;
	/* the second thread's share: whole rows */
	size_t half = job->rows ? size / len / 2 * len : size / 2;
	scalar_job two[2] = {*job, *job};
	two[0].acc = pl_malloc(sizeof *job->acc * nacc);
	two[1].acc = pl_malloc(sizeof *job->acc * nacc);
	int rc = two[0].acc && two[1].acc ? 0 : -1;
	if (rc == 0 && half > 0 && (double)size * job->dx * job->nF >= VE_SPLIT_WORK &&
	    pl_threads(0) >= 2) {
		two[0].e1 = two[1].e0 = half;
		pl_parallel_for(2, 2, scalar_half, two);
	} else if (rc == 0) {
		scalar_range(&two[0]);
	}
	job->late = two[0].late || two[1].late;
	free(two[0].acc);
	free(two[1].acc);
	return rc;
}

/* Table gi, made by eliminating x from the tables F, takes their place */
static int finish_combine(ve *v, int x, const int *F, int nF, int gi)
{
	for (int j = 0; j < nF; j++) {
		v->f[F[j]].alive = 0;
		v->alive_minm -= v->f[F[j]].minm;
	}
	if (x >= 0) {
		v->var_factor[x] = gi;
		v->done[x] = 1;
		v->order[v->norder++] = x;
	}
	return register_factor(v, gi) ? -1 : gi;
}

/* Builds the table that replaces the tables F after eliminating x (x < 0: a
 * final combination with no variable). */
static int combine(ve *v, int x, const int *F, int nF, const int *N, int nN, double dsize)
{
	if (dsize > (double)v->max_entries) {
		snprintf(v->fail, sizeof v->fail,
		         "a table of %.3g entries would be needed (limit %zu): the graph is too "
		         "entangled for exact dp",
		         dsize, v->max_entries);
		return -1;
	}
	if ((double)v->built + dsize > (double)v->max_total) {
		snprintf(v->fail, sizeof v->fail,
		         "the tables would hold %.3g entries in all (limit %zu): the graph is too "
		         "entangled for exact dp",
		         (double)v->built + dsize, v->max_total);
		return -1;
	}
	v->built += (size_t)dsize;
	int gi = new_factor(v);
	if (gi < 0)
		return -1;
	ve_factor *g = &v->f[gi];
	size_t size = (size_t)dsize;
	g->nv = nN;
	size_t s = 1;
	for (int k = nN - 1; k >= 0; k--) {
		g->vars[k] = N[k];
		g->stride[k] = s;
		s *= (size_t)v->dom[N[k]];
	}
	g->size = size;
	g->elim = x;
	g->nsrc = nF;
	for (int j = 0; j < nF; j++)
		g->src[j] = F[j];
	if (v->dry) /* the scopes alone (ve_run's dry run): no table built */
		return finish_combine(v, x, F, nF, gi);
	int dx = x >= 0 ? v->dom[x] : 1;
	size_t sN[VE_MAXF][VE_MAXK] = {{0}}, sx[VE_MAXF] = {0}, base[VE_MAXF] = {0};
	for (int j = 0; j < nF; j++) {
		sx[j] = x >= 0 ? stride_of(&v->f[F[j]], x) : 0;
		for (int k = 0; k < nN; k++)
			sN[j][k] = stride_of(&v->f[F[j]], N[k]);
	}
	pbuf B = {0};
	int rc = 0;
	if (v->pareto) {
		g->pstart = pl_malloc(sizeof *g->pstart * size);
		g->pcount = pl_malloc(sizeof *g->pcount * size);
		if (!g->pstart || !g->pcount)
			rc = -1;
	} else {
		g->own_t = pl_malloc(sizeof *g->own_t * size);
		g->arg = x >= 0 ? pl_malloc(sizeof *g->arg * size) : NULL;
		g->t = g->own_t;
		if (!g->own_t || (x >= 0 && !g->arg))
			rc = -1;
	}
	const double *ft[VE_MAXF] = {0};
	int late = 0;
	double rest = v->alive_minm;
	for (int j = 0; j < nF; j++) {
		ft[j] = v->f[F[j]].t;
		rest -= v->f[F[j]].minm;
	}
	/* a point of g needs at least `rest` more memory from the other tables */
	v->eff_limit = v->limit - (rest > 0 ? rest * (1 - 1e-12) : 0);
	if (!v->pareto) {
		if (rc == 0) {
			scalar_job job = {.v = v, .g = g, .nF = nF, .nN = nN, .dx = dx, .N = N};
			memcpy(job.ft, ft, sizeof ft);
			memcpy(job.sN, sN, sizeof sN);
			memcpy(job.sx, sx, sizeof sx);
			rc = scalar_entries(&job, size);
			late = job.late;
		}
	} else {
		int digit[VE_MAXK] = {0};
		for (size_t e = 0; rc == 0 && e < size; e++) {
			if ((e & 1023) == 1023 && ve_late(v)) {
				late = 1;
				break;
			}
			for (int j = 0; j < nF; j++) {
				size_t b = 0;
				for (int k = 0; k < nN; k++)
					b += (size_t)digit[k] * sN[j][k];
				base[j] = b;
			}
			rc = pareto_entry(v, g, F, nF, base, sx, dx, &B, e);
			for (int k = nN - 1; k >= 0;
			     k--) { /* next assignment, last variable fastest */
				if (++digit[k] < v->dom[N[k]])
					break;
				digit[k] = 0;
			}
		}
	}
	for (int j = 0; j < VE_MAXF; j++)
		free(B.st[j]);
	free(B.cand);
	free(B.pool);
	free(B.out);
	free(B.lists);
	free(B.heap);
	free(B.xstart);
	if (rc || late) {
		/* the table stays registered (freed with v), unfinished: ve_run fails */
		snprintf(v->fail, sizeof v->fail, rc ? "out of memory" : "the time limit ran out");
		return -1;
	}
	g = &v->f[gi];
	g->minm = 0;
	if (v->pareto) {
		int any = 0;
		for (size_t k = 0; k < g->npts; k++)
			if (!any++ || g->pts[k].m < g->minm)
				g->minm = g->pts[k].m;
	}
	return finish_combine(v, x, F, nF, gi);
}

/* ve_run's queue of candidates: the cheapest elimination first (least work,
 * then fewest tables, then the lowest variable, as a scan in variable order
 * would pick), entries of a variable whose tables changed since skipped */
typedef struct cand {
	double work;
	int nf, x;
	unsigned ver;
} cand;

static int cand_less(const cand *a, const cand *b)
{
	return a->work != b->work ? a->work < b->work
	       : a->nf != b->nf   ? a->nf < b->nf
	                          : a->x < b->x;
}

static void heap_push(cand *h, size_t *n, cand c)
{
	size_t i = (*n)++;
	while (i > 0 && cand_less(&c, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = c;
}

static cand heap_pop(cand *h, size_t *n)
{
	cand top = h[0], last = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && cand_less(&h[c + 1], &h[c]))
			c++;
		if (!cand_less(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

/* x's candidate at its current tables */
static cand candidate(const ve *v, int x, unsigned ver)
{
	int F[VE_MAXF], N[VE_MAXK], nF, nN;
	double size;
	if (gather(v, x, F, &nF, N, &nN, &size))
		size = 1e300; /* too wide for now; maybe later */
	return (cand){.work = size * v->dom[x], .nf = nF, .x = x, .ver = ver};
}

/* Greedy elimination, the cheapest variable first. An elimination changes
 * the tables of the variables in its new table's scope and no others, so
 * only those are priced again (a version per variable marks the stale
 * queue entries): O((n + n K) log n) for n variables and scopes of K, where
 * scanning every variable at each step was O(n^2). */
static int eliminate(ve *v)
{
	int F[VE_MAXF], N[VE_MAXK], nF, nN, rc = 0;
	size_t cap = (size_t)v->nvar * (VE_MAXK + 1) + 16, n = 0;
	cand *h = pl_malloc(sizeof *h * cap);
	unsigned *ver = pl_calloc((size_t)v->nvar + 1, sizeof *ver);
	if (!h || !ver) {
		snprintf(v->fail, sizeof v->fail, "out of memory");
		rc = -1;
		goto done;
	}
	for (int x = 0; x < v->nvar; x++)
		if (v->active[x] && !v->keep[x] && !v->done[x])
			heap_push(h, &n, candidate(v, x, 0));
	for (unsigned long step = 0; n > 0; step++) {
		if ((step & 255) == 0 && v->deadline > 0 && pl_now() > v->deadline) {
			snprintf(v->fail, sizeof v->fail, "the time limit ran out");
			rc = -1;
			break;
		}
		cand c = heap_pop(h, &n);
		if (c.ver != ver[c.x] || v->done[c.x])
			continue;
		double size;
		int best = c.x, wide = gather(v, best, F, &nF, N, &nN, &size);
		if (wide == -1)
			snprintf(v->fail, sizeof v->fail,
			         "an op has more than %d neighbouring tables: the graph is too "
			         "entangled for exact dp",
			         VE_MAXF);
		else if (wide)
			snprintf(v->fail, sizeof v->fail,
			         "every op left would join more than %d others in one table: the "
			         "graph is too entangled for exact dp",
			         VE_MAXK);
		if (wide || combine(v, best, F, nF, N, nN, size) < 0) {
			rc = -1;
			break;
		}
		for (int k = 0; k < nN; k++) { /* the new table's scope: priced again */
			int u = N[k];
			if (!v->active[u] || v->keep[u] || v->done[u])
				continue;
			if (n == cap) {
				cand *nh = pl_realloc(h, sizeof *nh * (cap *= 2));
				if (!nh) {
					snprintf(v->fail, sizeof v->fail, "out of memory");
					rc = -1;
					goto done;
				}
				h = nh;
			}
			heap_push(h, &n, candidate(v, u, ++ver[u]));
		}
	}
done:
	free(h);
	free(ver);
	return rc;
}

/* v's structure without its tables (c's factors point at v's tables, which
 * a dry run never reads): 0, or -1 out of memory */
static int dry_copy(const ve *v, ve *c)
{
	*c = *v;
	c->dry = 1;
	size_t n = (size_t)v->nvar + 1;
	c->f = pl_malloc(sizeof *c->f * ((size_t)v->nf + 1));
	c->capf = v->nf + 1;
	c->vf = pl_calloc(n, sizeof *c->vf);
	c->nvf = pl_malloc(sizeof *c->nvf * n);
	c->capvf = pl_malloc(sizeof *c->capvf * n);
	c->active = pl_malloc(n);
	c->keep = pl_malloc(n);
	c->done = pl_malloc(n);
	c->order = pl_malloc(sizeof *c->order * n);
	c->var_factor = pl_malloc(sizeof *c->var_factor * n);
	if (!c->f || !c->vf || !c->nvf || !c->capvf || !c->active || !c->keep || !c->done ||
	    !c->order || !c->var_factor)
		return -1;
	memcpy(c->f, v->f, sizeof *c->f * (size_t)v->nf);
	memcpy(c->nvf, v->nvf, sizeof *c->nvf * n);
	memcpy(c->capvf, v->capvf, sizeof *c->capvf * n);
	memcpy(c->active, v->active, n);
	memcpy(c->keep, v->keep, n);
	memcpy(c->done, v->done, n);
	memcpy(c->order, v->order, sizeof *c->order * n);
	memcpy(c->var_factor, v->var_factor, sizeof *c->var_factor * n);
	for (int x = 0; x < v->nvar; x++) {
		if (!v->capvf[x])
			continue;
		if (!(c->vf[x] = pl_malloc(sizeof *c->vf[x] * (size_t)v->capvf[x])))
			return -1;
		memcpy(c->vf[x], v->vf[x], sizeof *c->vf[x] * (size_t)v->nvf[x]);
	}
	return 0;
}

static void dry_free(ve *c)
{
	for (int x = 0; c->vf && x < c->nvar; x++)
		free(c->vf[x]);
	free(c->vf);
	free(c->f);
	free(c->nvf);
	free(c->capvf);
	free(c->active);
	free(c->keep);
	free(c->done);
	free(c->order);
	free(c->var_factor);
}

/* Eliminates the scopes first, building no table: the order is the real
 * run's (it depends on the scopes alone), so a graph too entangled for
 * exact dp -- a table over VE_MAXK variables, or more entries than
 * max_entries or max_total -- is refused before any table is filled rather
 * than after filling up to max_total entries (DenseNet-201 on 64 devices:
 * 9 s). Then the real elimination. */
int ve_run(ve *v)
{
	if (!v->dry) {
		ve c;
		int tangled =
		    dry_copy(v, &c) == 0 && eliminate(&c) != 0 && strstr(c.fail, "too entangled");
		if (tangled)
			memcpy(v->fail, c.fail, sizeof v->fail);
		dry_free(&c);
		if (tangled)
			return -1;
	}
	return eliminate(v);
}

static size_t index_of(const ve_factor *f, const int *a)
{
	size_t e = 0;
	for (int k = 0; k < f->nv; k++)
		e += (size_t)a[f->vars[k]] * f->stride[k];
	return e;
}

double ve_value(const ve *v, const int *a)
{
	double s = 0;
	for (int i = 0; i < v->nf; i++) {
		const ve_factor *f = &v->f[i];
		if (f->alive && f->t)
			s += f->t[index_of(f, a)];
	}
	return s;
}

void ve_backtrack(const ve *v, int *a)
{
	for (int k = v->norder - 1; k >= 0; k--) {
		int x = v->order[k];
		const ve_factor *g = &v->f[v->var_factor[x]];
		a[x] = g->arg[index_of(g, a)];
	}
}

int ve_min_marginals(const ve *v, double **mm)
{
	int rc = -1;
	double **out = pl_calloc((size_t)v->nf + 1, sizeof *out);
	if (!out)
		return -1;
	for (int x = 0; x < v->nvar; x++)
		if (v->active[x] && mm[x])
			for (int k = 0; k < v->dom[x]; k++)
				mm[x][k] = 1e300;
	/* the tables left are constants (every variable was eliminated); each
	 * one's outside is the sum of the others */
	for (int i = 0; i < v->nf; i++) {
		const ve_factor *f = &v->f[i];
		if (!f->alive)
			continue;
		if (f->nv || !f->t || !(out[i] = pl_malloc(sizeof *out[i])))
			goto done;
		out[i][0] = 0;
		for (int j = 0; j < v->nf; j++)
			if (j != i && v->f[j].alive)
				out[i][0] += v->f[j].t[0];
	}
	for (int gi = v->nf - 1; gi >= 0; gi--) {
		const ve_factor *g = &v->f[gi];
		if (g->elim < 0)
			continue; /* an input table */
		if (!out[gi] || v->pareto)
			goto done;
		int x = g->elim, nF = g->nsrc, nN = g->nv, dx = v->dom[x];
		size_t sN[VE_MAXF][VE_MAXK], sx[VE_MAXF], base[VE_MAXF];
		const double *ft[VE_MAXF];
		double *fo[VE_MAXF];
		for (int j = 0; j < nF; j++) {
			const ve_factor *f = &v->f[g->src[j]];
			ft[j] = f->t;
			sx[j] = stride_of(f, x);
			for (int k = 0; k < nN; k++)
				sN[j][k] = stride_of(f, g->vars[k]);
			fo[j] = NULL;
			if (f->elim >= 0) { /* a made table: its outside is wanted */
				if (!(fo[j] = out[g->src[j]] = pl_malloc(sizeof *fo[j] * f->size)))
					goto done;
				for (size_t e = 0; e < f->size; e++)
					fo[j][e] = 1e300;
			}
		}
		double *m = mm[x];
		int digit[VE_MAXK] = {0};
		for (size_t e = 0; e < g->size; e++) {
			for (int j = 0; j < nF; j++) {
				size_t b = 0;
				for (int k = 0; k < nN; k++)
					b += (size_t)digit[k] * sN[j][k];
				base[j] = b;
			}
			double o = out[gi][e];
			for (int xv = 0; xv < dx; xv++) {
				double s = o;
				for (int j = 0; j < nF; j++)
					s += ft[j][base[j] + (size_t)xv * sx[j]];
				if (m && s < m[xv])
					m[xv] = s;
				for (int j = 0; j < nF; j++) {
					if (!fo[j])
						continue;
					size_t q = base[j] + (size_t)xv * sx[j];
					double r = s - ft[j][q];
					if (r < fo[j][q])
						fo[j][q] = r;
				}
			}
			for (int k = nN - 1; k >= 0; k--) {
				if (++digit[k] < v->dom[g->vars[k]])
					break;
				digit[k] = 0;
			}
		}
		free(out[gi]);
		out[gi] = NULL;
	}
	rc = 0;
done:
	for (int i = 0; i < v->nf; i++)
		free(out[i]);
	free(out);
	return rc;
}

int ve_combine_rest(ve *v, const int *N, int nN)
{
	int F[VE_MAXF], nF = 0;
	double size = 1;
	for (int i = 0; i < v->nf; i++)
		if (v->f[i].alive) {
			if (nF == VE_MAXF) {
				snprintf(v->fail, sizeof v->fail, "too many tables left after dp");
				return -1;
			}
			F[nF++] = i;
		}
	for (int k = 0; k < nN; k++)
		size *= v->dom[N[k]];
	return combine(v, -1, F, nF, N, nN, size);
}

void ve_pareto_backtrack(ve *v, int f, int point, int *a)
{
	ve_factor *r = &v->f[f];
	const ve_point *p = &r->pts[r->pstart[index_of(r, a)] + point];
	for (int j = 0; j < r->nsrc; j++)
		v->f[r->src[j]].chosen = r->trace[p->trace + 1 + j];
	for (int k = v->norder - 1; k >= 0; k--) {
		int x = v->order[k];
		ve_factor *g = &v->f[v->var_factor[x]];
		const ve_point *q = &g->pts[g->pstart[index_of(g, a)] + g->chosen];
		a[x] = g->trace[q->trace];
		for (int j = 0; j < g->nsrc; j++)
			v->f[g->src[j]].chosen = g->trace[q->trace + 1 + j];
	}
}

int ve_pareto_solve(ve *v, int *a, double *t, double *m)
{
	int F[VE_MAXF], nF = 0;
	for (int i = 0; i < v->nf; i++)
		if (v->f[i].alive) {
			if (nF == VE_MAXF || v->f[i].nv) {
				snprintf(v->fail, sizeof v->fail, "internal: tables left after dp");
				return -1;
			}
			F[nF++] = i;
		}
	int root = combine(v, -1, F, nF, NULL, 0, 1);
	if (root < 0)
		return -1;
	ve_factor *r = &v->f[root];
	if (r->pcount[0] == 0)
		return -1;
	const ve_point *p = &r->pts[0]; /* sorted by time: the first fits and is fastest */
	*t = p->t;
	*m = p->m;
	ve_pareto_backtrack(v, root, 0, a);
	return 0;
}
