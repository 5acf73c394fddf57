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
#include <time.h>

double ve_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int ve_init(ve *v, int nvar, const int *dom)
{
	memset(v, 0, sizeof *v);
	v->nvar = nvar;
	v->dom = dom;
	v->vf = calloc((size_t)nvar + 1, sizeof *v->vf);
	v->nvf = calloc((size_t)nvar + 1, sizeof *v->nvf);
	v->capvf = calloc((size_t)nvar + 1, sizeof *v->capvf);
	v->active = calloc((size_t)nvar + 1, 1);
	v->keep = calloc((size_t)nvar + 1, 1);
	v->done = calloc((size_t)nvar + 1, 1);
	v->order = malloc(sizeof *v->order * ((size_t)nvar + 1));
	v->var_factor = malloc(sizeof *v->var_factor * ((size_t)nvar + 1));
	v->max_entries = (size_t)1 << 26;
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
		int *n = realloc(v->vf[var], sizeof *n * (size_t)cap);
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
		ve_factor *n = realloc(v->f, sizeof *n * (size_t)cap);
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

/* The live tables mentioning x and the union of their scopes without x. */
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
					return -1;
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

typedef struct tpoint {
	double t, m;
	int x;
	int32_t idx[VE_MAXF];
} tpoint;

static int cmp_tpoint(const void *a, const void *b)
{
	const tpoint *p = a, *q = b;
	if (p->t != q->t)
		return p->t < q->t ? -1 : 1;
	if (p->m != q->m)
		return p->m < q->m ? -1 : 1;
	return 0;
}

/* Keeps the non-dominated points within the limit; cuts to cap (evenly, the
 * extremes kept) and flags truncation. Returns the new count. */
static int prune(ve *v, tpoint *p, int n)
{
	qsort(p, (size_t)n, sizeof *p, cmp_tpoint);
	int k = 0;
	double best_m = 0;
	for (int i = 0; i < n; i++) {
		if (v->limit > 0 && p[i].m > v->eff_limit)
			continue;
		if (k > 0 && p[i].m >= best_m)
			continue;
		best_m = p[i].m;
		p[k++] = p[i];
	}
	if (k > v->cap) {
		v->truncated = 1;
		for (int i = 0; i < v->cap; i++)
			p[i] = p[(size_t)i * (size_t)(k - 1) / (size_t)(v->cap - 1)];
		k = v->cap;
	}
	return k;
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

typedef struct pbuf {
	tpoint *a, *b, *cand;
	size_t capa, capb, capc;
} pbuf;

static int grow(tpoint **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	tpoint *n = realloc(*p, sizeof *n * c);
	if (!n)
		return -1;
	*p = n;
	*cap = c;
	return 0;
}

/* Pareto set of one entry of the new table: over x, the Minkowski sum of the
 * source tables' sets. Appends the result to g. */
static int pareto_entry(ve *v, ve_factor *g, const int *F, int nF, const size_t *base,
                        const size_t *sx, int dx, pbuf *B, size_t entry)
{
	int nc = 0;
	for (int x = 0; x < dx; x++) {
		if (grow(&B->a, &B->capa, 1))
			return -1;
		int na = 1;
		B->a[0].t = 0;
		B->a[0].m = 0;
		B->a[0].x = x;
		for (int j = 0; j < nF && na > 0; j++) {
			ve_point one;
			const ve_point *pts;
			int np = points_at(&v->f[F[j]], base[j] + (size_t)x * sx[j], &pts, &one);
			if (grow(&B->b, &B->capb, (size_t)na * (size_t)np + 1))
				return -1;
			int nb = 0;
			for (int i = 0; i < na; i++)
				for (int q = 0; q < np; q++) {
					tpoint *o = &B->b[nb++];
					*o = B->a[i];
					o->t += pts[q].t;
					o->m += pts[q].m;
					o->idx[j] = q;
				}
			nb = prune(v, B->b, nb);
			tpoint *tmp = B->a;
			size_t tc = B->capa;
			B->a = B->b;
			B->capa = B->capb;
			B->b = tmp;
			B->capb = tc;
			na = nb;
		}
		if (grow(&B->cand, &B->capc, (size_t)nc + (size_t)na + 1))
			return -1;
		memcpy(B->cand + nc, B->a, sizeof *B->a * (size_t)na);
		nc += na;
	}
	nc = prune(v, B->cand, nc);
	/* store */
	size_t need = g->npts + (size_t)nc;
	ve_point *np = realloc(g->pts, sizeof *np * (need + 1));
	if (!np)
		return -1;
	g->pts = np;
	int32_t *nt =
	    realloc(g->trace, sizeof *nt * (g->ntrace + (size_t)nc * (size_t)(nF + 1) + 1));
	if (!nt)
		return -1;
	g->trace = nt;
	g->pstart[entry] = (int64_t)g->npts;
	g->pcount[entry] = nc;
	for (int i = 0; i < nc; i++) {
		ve_point *o = &g->pts[g->npts++];
		o->t = B->cand[i].t;
		o->m = B->cand[i].m;
		o->trace = (int64_t)g->ntrace;
		g->trace[g->ntrace++] = B->cand[i].x;
		for (int j = 0; j < nF; j++)
			g->trace[g->ntrace++] = B->cand[i].idx[j];
	}
	return 0;
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
	int dx = x >= 0 ? v->dom[x] : 1;
	size_t sN[VE_MAXF][VE_MAXK], sx[VE_MAXF], base[VE_MAXF] = {0};
	for (int j = 0; j < nF; j++) {
		sx[j] = x >= 0 ? stride_of(&v->f[F[j]], x) : 0;
		for (int k = 0; k < nN; k++)
			sN[j][k] = stride_of(&v->f[F[j]], N[k]);
	}
	pbuf B = {0};
	int rc = 0;
	if (v->pareto) {
		g->pstart = malloc(sizeof *g->pstart * size);
		g->pcount = malloc(sizeof *g->pcount * size);
		if (!g->pstart || !g->pcount)
			rc = -1;
	} else {
		g->own_t = malloc(sizeof *g->own_t * size);
		g->arg = x >= 0 ? malloc(sizeof *g->arg * size) : NULL;
		g->t = g->own_t;
		if (!g->own_t || (x >= 0 && !g->arg))
			rc = -1;
	}
	const double *ft[VE_MAXF];
	double rest = v->alive_minm;
	for (int j = 0; j < nF; j++) {
		ft[j] = v->f[F[j]].t;
		rest -= v->f[F[j]].minm;
	}
	/* a point of g needs at least `rest` more memory from the other tables */
	v->eff_limit = v->limit - (rest > 0 ? rest * (1 - 1e-12) : 0);
	int digit[VE_MAXK] = {0};
	for (size_t e = 0; rc == 0 && e < size; e++) {
		for (int j = 0; j < nF; j++) {
			size_t b = 0;
			for (int k = 0; k < nN; k++)
				b += (size_t)digit[k] * sN[j][k];
			base[j] = b;
		}
		if (v->pareto) {
			rc = pareto_entry(v, g, F, nF, base, sx, dx, &B, e);
		} else {
			double best = 1e300;
			int arg = 0;
			for (int xv = 0; xv < dx; xv++) {
				double sum = 0;
				for (int j = 0; j < nF; j++)
					sum += ft[j] ? ft[j][base[j] + (size_t)xv * sx[j]] : 0;
				if (sum < best) {
					best = sum;
					arg = xv;
				}
			}
			g->own_t[e] = best;
			if (g->arg)
				g->arg[e] = arg;
		}
		for (int k = nN - 1; k >= 0; k--) { /* next assignment, last variable fastest */
			if (++digit[k] < v->dom[N[k]])
				break;
			digit[k] = 0;
		}
	}
	free(B.a);
	free(B.b);
	free(B.cand);
	if (rc) {
		snprintf(v->fail, sizeof v->fail, "out of memory");
		return -1;
	}
	for (int j = 0; j < nF; j++) {
		v->f[F[j]].alive = 0;
		v->alive_minm -= v->f[F[j]].minm;
	}
	g = &v->f[gi];
	g->minm = 0;
	if (v->pareto) {
		int any = 0;
		for (size_t k = 0; k < g->npts; k++)
			if (!any++ || g->pts[k].m < g->minm)
				g->minm = g->pts[k].m;
	}
	if (x >= 0) {
		v->var_factor[x] = gi;
		v->done[x] = 1;
		v->order[v->norder++] = x;
	}
	return register_factor(v, gi) ? -1 : gi;
}

int ve_run(ve *v)
{
	int F[VE_MAXF], N[VE_MAXK], nF, nN;
	for (;;) {
		if (v->deadline > 0 && ve_now() > v->deadline) {
			snprintf(v->fail, sizeof v->fail, "the time limit ran out");
			return -1;
		}
		int best = -1;
		double best_size = 0;
		int best_nf = 0;
		for (int x = 0; x < v->nvar; x++) {
			if (!v->active[x] || v->keep[x] || v->done[x])
				continue;
			double size;
			if (gather(v, x, F, &nF, N, &nN, &size))
				size = 1e300; /* too wide for now; maybe later */
			double work = size * v->dom[x];
			if (best < 0 || work < best_size || (work == best_size && nF < best_nf)) {
				best = x;
				best_size = work;
				best_nf = nF;
			}
		}
		if (best < 0)
			return 0;
		double size;
		if (gather(v, best, F, &nF, N, &nN, &size)) {
			snprintf(v->fail, sizeof v->fail,
			         "an op has more than %d neighbouring tables: the graph is too "
			         "entangled for exact dp",
			         VE_MAXF);
			return -1;
		}
		if (combine(v, best, F, nF, N, nN, size) < 0)
			return -1;
	}
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
