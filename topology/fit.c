/* Weighted linear least squares, the one fit behind the calibrations. */
#include "topology/fit.h"

#include <math.h>

/* y = a + b x minimising sum w (y - a - b x)^2; returns -1 if degenerate */
static int line(const double *x, const double *y, const double *w, int n, double *a, double *b)
{
	double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++) {
		s += w[i];
		sx += w[i] * x[i];
		sy += w[i] * y[i];
		sxx += w[i] * x[i] * x[i];
		sxy += w[i] * x[i] * y[i];
	}
	double det = s * sxx - sx * sx;
	if (!(s > 0) || !(fabs(det) > 1e-300 * (s * sxx + 1e-300)))
		return -1;
	*b = (s * sxy - sx * sy) / det;
	*a = (sy - *b * sx) / s;
	return 0;
}

int pl_fit_ab(const double *busbytes, const double *seconds, int n, pl_ab *out)
{
	if (n < 2 || n > 4096)
		return -1;
	double w[4096];
	int distinct = 0;
	for (int i = 0; i < n; i++) {
		if (!(seconds[i] > 0) || !(busbytes[i] >= 0))
			return -1;
		w[i] = 1.0 / (seconds[i] * seconds[i]);
		distinct |= busbytes[i] != busbytes[0];
	}
	if (!distinct)
		return -1;
	double a, b;
	if (line(busbytes, seconds, w, n, &a, &b))
		return -1;
	if (a < 0 || b < 0) {
		/* the best line through the origin, or the best constant */
		double sxy = 0, sxx = 0, sy = 0, s = 0;
		for (int i = 0; i < n; i++) {
			sxy += w[i] * busbytes[i] * seconds[i];
			sxx += w[i] * busbytes[i] * busbytes[i];
			sy += w[i] * seconds[i];
			s += w[i];
		}
		if (a < 0) {
			a = 0;
			b = sxy / sxx;
		} else {
			b = 0;
			a = sy / s;
		}
	}
	out->alpha = a;
	out->beta = b;
	return 0;
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
