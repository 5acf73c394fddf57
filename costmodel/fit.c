/* Weighted linear least squares, the one fit behind the calibrations. */
#include "costmodel/fit.h"

#include <math.h>
#include <stdlib.h>
#include "graph/alloc.h"

/* Weighted sums of a run of points; a line's fit and its squared error
 * follow from them alone, so a segment costs O(1) with prefix sums. */
typedef struct sums {
	double s, sx, sy, sxx, sxy, syy;
} sums;

static void add(sums *a, double x, double y, double w)
{
	a->s += w;
	a->sx += w * x;
	a->sy += w * y;
	a->sxx += w * x * x;
	a->sxy += w * x * y;
	a->syy += w * y * y;
}

static sums diff(const sums *hi, const sums *lo)
{
	return (sums){hi->s - lo->s,     hi->sx - lo->sx,   hi->sy - lo->sy,
	              hi->sxx - lo->sxx, hi->sxy - lo->sxy, hi->syy - lo->syy};
}

/* y = a + b x minimising sum w (y - a - b x)^2 with a, b >= 0; returns the
 * weighted squared error, or -1 if the points do not determine a line */
static double fit_sums(const sums *m, double *a, double *b)
{
	double det = m->s * m->sxx - m->sx * m->sx;
	if (!(m->s > 0) || !(fabs(det) > 1e-12 * (m->s * m->sxx + 1e-300)))
		return -1;
	*b = (m->s * m->sxy - m->sx * m->sy) / det;
	*a = (m->sy - *b * m->sx) / m->s;
	if (*a < 0) { /* the best line through the origin */
		*a = 0;
		*b = m->sxx > 0 ? m->sxy / m->sxx : 0;
	}
	if (*b < 0) { /* the best constant */
		*b = 0;
		*a = m->sy / m->s;
	}
	double e = m->syy - 2 * *a * m->sy - 2 * *b * m->sxy + *a * *a * m->s +
	           2 * *a * *b * m->sx + *b * *b * m->sxx;
	return e > 0 ? e : 0;
}

/* the fit of points [i, j) from prefix sums */
static double segment(const sums *P, int i, int j, double *a, double *b)
{
	sums m = diff(&P[j], &P[i]);
	return fit_sums(&m, a, b);
}

static int line(const double *x, const double *y, const double *w, int n, double *a, double *b)
{
	sums m = {0};
	for (int i = 0; i < n; i++)
		add(&m, x[i], y[i], w[i]);
	return fit_sums(&m, a, b) < 0 ? -1 : 0;
}

int pl_fit_ab(const double *busbytes, const double *seconds, int n, pl_ab *out)
{
	double max_bytes;
	int nseg;
	return pl_fit_ab_ranges(busbytes, seconds, n, 1, out, &max_bytes, &nseg);
}

int pl_fit_ab_ranges(const double *busbytes, const double *seconds, int n, int maxseg, pl_ab *ab,
                     double *max_busbytes, int *nseg)
{
	enum { MINPTS = 3, MAXSEG = PL_FIT_MAX_RANGES };
	if (n < 2 || maxseg < 1)
		return -1;
	for (int i = 0; i < n; i++)
		if (!(seconds[i] > 0) || !(busbytes[i] >= 0) ||
		    (maxseg > 1 && i && busbytes[i] < busbytes[i - 1]))
			return -1;
	if (maxseg > MAXSEG)
		maxseg = MAXSEG;
	if (n < 2 * MINPTS)
		maxseg = 1;
	/* P[i]: sums of the first i points, weights 1/y^2 (relative error).
	 * Segments start and end at cut points: 0, n, and the indices where the
	 * size grows (no size is split between two segments); beyond MAXCUT of
	 * them, MAXCUT spread evenly over the rows, so the fit stays O(k C^2)
	 * for any log (exact below MAXCUT cuts, as every nccl-tests sweep is).
	 * E[k][c]: least error of the points before cut c in k segments, from
	 * the cut where its last segment starts (segmented least squares). */
	enum { MAXCUT = 512 };
	sums *P = pl_calloc((size_t)n + 1, sizeof *P);
	int *cut = pl_malloc(((size_t)n + 1) * sizeof *cut);
	double *E = pl_malloc((size_t)(MAXSEG + 1) * (MAXCUT + 2) * sizeof *E);
	int *from = pl_malloc((size_t)(MAXSEG + 1) * (MAXCUT + 2) * sizeof *from);
	int rc = -1;
	if (!P || !E || !from || !cut)
		goto out;
	for (int i = 0; i < n; i++) {
		P[i + 1] = P[i];
		add(&P[i + 1], busbytes[i], seconds[i], 1.0 / (seconds[i] * seconds[i]));
	}
	int nc = 0;
	for (int i = 0; i <= n; i++)
		if (i == 0 || i == n || busbytes[i - 1] < busbytes[i])
			cut[nc++] = i;
	if (nc > MAXCUT) { /* keep MAXCUT of them, the first and the last included */
		int m = 0;
		for (int t = 0; t < MAXCUT; t++) {
			int c = (int)((long long)t * (nc - 1) / (MAXCUT - 1));
			if (!m || cut[c] != cut[m - 1])
				cut[m++] = cut[c];
		}
		nc = m;
	}
#define AT(A, k, c) A[(size_t)(k) * (MAXCUT + 2) + (size_t)(c)]
	double a, b;
	for (int c = 0; c < nc; c++)
		AT(E, 1, c) = cut[c] >= 2 ? segment(P, 0, cut[c], &a, &b) : -1;
	if (AT(E, 1, nc - 1) < 0)
		goto out;
	for (int k = 2; k <= maxseg; k++)
		for (int c = 0; c < nc; c++) {
			AT(E, k, c) = -1;
			for (int d = 1; d < c && cut[d] <= cut[c] - MINPTS; d++) {
				if (cut[d] < (k - 1) * MINPTS || AT(E, k - 1, d) < 0)
					continue;
				double e = segment(P, cut[d], cut[c], &a, &b);
				if (e >= 0 &&
				    (AT(E, k, c) < 0 || AT(E, k - 1, d) + e < AT(E, k, c))) {
					AT(E, k, c) = AT(E, k - 1, d) + e;
					AT(from, k, c) = d;
				}
			}
		}
	/* another line must earn its place: a quarter less error, and only
	 * while the fit is worse than 1% rms */
	int k = 1, last = nc - 1;
	while (k < maxseg && AT(E, k + 1, last) >= 0 &&
	       AT(E, k + 1, last) < 0.75 * AT(E, k, last) && AT(E, k, last) > n * 1e-4)
		k++;
	int end = last;
	for (int s = k - 1; s >= 0; s--) {
		int start = s ? AT(from, s + 1, end) : 0;
		segment(P, cut[start], cut[end], &ab[s].alpha, &ab[s].beta);
		max_busbytes[s] = s + 1 < k ? busbytes[cut[end] - 1] : 0;
		end = start;
	}
#undef AT
	*nseg = k;
	rc = 0;
out:
	free(P);
	free(cut);
	free(E);
	free(from);
	return rc;
}

int pl_fit_rate_curve(const double *flops, const double *rate, int n, double *peak, double *half)
{
	/* 1/rate = 1/peak + (half/peak) / f: a line in 1/f */
	if (n < 2 || n > 4096)
		return -1;
	double x[4096], y[4096], w[4096];
	for (int i = 0; i < n; i++) {
		if (!(flops[i] > 0) || !(rate[i] > 0))
			return -1;
		x[i] = 1.0 / flops[i];
		y[i] = 1.0 / rate[i];
		w[i] = 1.0 / (y[i] * y[i]);
	}
	double a, b;
	if (line(x, y, w, n, &a, &b) || !(a > 0))
		return -1;
	*peak = 1.0 / a;
	*half = b > 0 ? b / a : 0;
	return 0;
}
