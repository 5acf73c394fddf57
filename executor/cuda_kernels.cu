// The cuda backend's kernels: the operators of kernels.c on device memory,
// one thread per element (one block per row for the row-wise operators), the same
// formulas in the same precision (sums in double where kernels.c keeps them
// in double). Launchers are declared in cuda_kernels.h.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "executor/cuda_kernels.h"

#define THREADS 256

static unsigned blocks(size_t n)
{
	size_t b = (n + THREADS - 1) / THREADS;
	if (b < 1)
		b = 1;
	return b > (1u << 20) ? (1u << 20) : (unsigned)b;
}

#define EACH(i, n)                                                                                 \
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                    \
	     i += (size_t)gridDim.x * blockDim.x)

static int launched(void)
{
	return (int)cudaGetLastError();
}

// multi-index of flat element i of shape sh (row-major)
__device__ static void unflatten(size_t i, const plk_shape &sh, int64_t *ix)
{
	for (int d = sh.rank - 1; d >= 0; d--) {
		ix[d] = (int64_t)(i % (size_t)sh.s[d]);
		i /= (size_t)sh.s[d];
	}
}

__global__ static void k_fill(float *p, size_t n, float v)
{
	EACH(i, n)
	p[i] = v;
}

__global__ static void k_add(float *y, const float *x, size_t n)
{
	EACH(i, n)
	y[i] += x[i];
}

__global__ static void k_update(int adam, float *w, const float *g, float *m, float *v, size_t n,
                                double lr, double gs, double b1, double b2, double eps, double c1,
                                double c2)
{
	EACH(e, n)
	{
		double gv = gs * g[e];
		if (!adam) {
			w[e] -= (float)(lr * gv);
			continue;
		}
		m[e] = (float)(b1 * m[e] + (1 - b1) * gv);
		v[e] = (float)(b2 * v[e] + (1 - b2) * gv * gv);
		w[e] -= (float)(lr * (m[e] / c1) / (sqrt(v[e] / c2) + eps));
	}
}

extern "C" int plk_fill(void *stream, float *p, size_t n, float value)
{
	if (n)
		k_fill<<<blocks(n), THREADS, 0, (cudaStream_t)stream>>>(p, n, value);
	return launched();
}

extern "C" int plk_add(void *stream, float *y, const float *x, size_t n)
{
	if (n)
		k_add<<<blocks(n), THREADS, 0, (cudaStream_t)stream>>>(y, x, n);
	return launched();
}

extern "C" int plk_update(void *stream, int adam, float *w, const float *g, float *m, float *v,
                          size_t n, double lr, double grad_scale, double b1, double b2, double eps,
                          double c1, double c2)
{
	if (n)
		k_update<<<blocks(n), THREADS, 0, (cudaStream_t)stream>>>(
		    adam, w, g, m, v, n, lr, grad_scale, b1, b2, eps, c1, c2);
	return launched();
}

// ---- element-wise ----

__global__ static void k_unary(int kind, const float *x, float *y, const float *dy, float *dx,
                               size_t n, plk_dropout dr)
{
	EACH(i, n)
	{
		float v = x[i], r, d;
		if (kind == PLK_DROPOUT) {
			d = 1;
			if (dr.ratio > 0) {
				int64_t ix[PLK_MAX_RANK];
				unflatten(i, dr.local, ix);
				uint64_t gi = 0;
				for (int k = 0; k < dr.local.rank; k++)
					gi = gi * (uint64_t)dr.global.s[k] +
					     (uint64_t)(ix[k] + dr.off[k]);
				d = plk_dropout_keep(dr.seed, dr.op, gi, dr.ratio)
				        ? (float)(1 / (1 - dr.ratio))
				        : 0;
			}
			r = v * d;
		} else {
			r = plk_elementwise(kind, v, &d);
		}
		if (dx)
			dx[i] = dy[i] * d;
		else
			y[i] = r;
	}
}

extern "C" int plk_unary(void *stream, int kind, const float *x, float *y, const float *dy,
                         float *dx, size_t n, const plk_dropout *dr)
{
	if (n)
		k_unary<<<blocks(n), THREADS, 0, (cudaStream_t)stream>>>(kind, x, y, dy, dx, n,
		                                                         *dr);
	return launched();
}

struct strides {
	int64_t a[PLK_MAX_RANK], b[PLK_MAX_RANK];
	int a_own, b_own; // the input's element o is output element o's alone
};

__global__ static void k_binary(int kind, const float *a, const float *b, float *y, const float *dy,
                                float *da, float *db, plk_shape out, strides st, size_t n)
{
	EACH(o, n)
	{
		int64_t ix[PLK_MAX_RANK];
		unflatten(o, out, ix);
		int64_t ia = 0, ib = 0;
		for (int d = 0; d < out.rank; d++) {
			ia += ix[d] * st.a[d];
			ib += ix[d] * st.b[d];
		}
		float va = a[ia], vb = b[ib];
		if (!dy) {
			y[o] = plk_binary_value(kind, va, vb);
			continue;
		}
		float ga, gb;
		plk_binary_grad(kind, va, vb, dy[o], &ga, &gb);
		// an input read by this output element alone takes its gradient
		// without an atomic; a broadcast one sums its readers' atomically
		if (da) {
			if (st.a_own)
				da[ia] += ga;
			else
				atomicAdd(&da[ia], ga);
		}
		if (db) {
			if (st.b_own)
				db[ib] += gb;
			else
				atomicAdd(&db[ib], gb);
		}
	}
}

extern "C" int plk_binary(void *stream, int kind, const float *a, const float *b, float *y,
                          const float *dy, float *da, float *db, const plk_shape *out,
                          const int64_t *sa, const int64_t *sb)
{
	strides st;
	size_t n = 1;
	st.a_own = st.b_own = 1;
	for (int d = out->rank - 1; d >= 0; d--) { // row-major: the last stride is 1
		st.a[d] = sa[d];
		st.b[d] = sb[d];
		st.a_own &= out->s[d] == 1 || sa[d] == (int64_t)n;
		st.b_own &= out->s[d] == 1 || sb[d] == (int64_t)n;
		n *= (size_t)out->s[d];
	}
	if (n)
		k_binary<<<blocks(n), THREADS, 0, (cudaStream_t)stream>>>(kind, a, b, y, dy, da, db,
		                                                          *out, st, n);
	return launched();
}

// ---- row-wise ----

// One block per row: its threads read the row together (coalesced where the
// row is contiguous) and reduce in a fixed tree, in double as kernels.c sums;
// only the order of the sums differs from kernels.c's.

// the block's reduction of v (a sum, or with max a maximum); every thread
// gets it. sh holds THREADS / 32 doubles.
__device__ static double block_reduce(double v, int max, double *sh)
{
	for (int o = 16; o > 0; o >>= 1) {
		double w = __shfl_down_sync(0xffffffffu, v, o);
		v = max ? fmax(v, w) : v + w;
	}
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarp = (blockDim.x + 31) >> 5;
	__syncthreads(); // sh is free again (an earlier reduction has been read)
	if (!lane)
		sh[warp] = v;
	__syncthreads();
	if (!warp) {
		v = lane < nwarp ? sh[lane] : (max ? -INFINITY : 0.0);
		for (int o = 16; o > 0; o >>= 1) {
			double w = __shfl_down_sync(0xffffffffu, v, o);
			v = max ? fmax(v, w) : v + w;
		}
		if (!lane)
			sh[0] = v;
	}
	__syncthreads();
	return sh[0];
}

#define EACH_ROW(r, rows) for (size_t r = blockIdx.x; r < (rows); r += gridDim.x)
#define EACH_COL(j, n)    for (int64_t j = threadIdx.x; j < (n); j += blockDim.x)

static unsigned row_blocks(size_t rows)
{
	return rows > (1u << 20) ? (1u << 20) : rows ? (unsigned)rows : 1u;
}

__global__ static void k_softmax(const float *x, float *y, const float *dy, float *dx,
                                 int64_t outer, int64_t n, int64_t inner)
{
	__shared__ double sh[THREADS / 32];
	EACH_ROW(r, (size_t)(outer * inner))
	{
		int64_t o = (int64_t)r / inner, q = (int64_t)r % inner;
		size_t base = (size_t)(o * n * inner + q);
		double s = 0;
		if (!dx) {
			const float *xr = x + base;
			float *yr = y + base;
			float mx = -INFINITY;
			EACH_COL(j, n)
			{
				mx = fmaxf(mx, xr[j * inner]);
			}
			mx = (float)block_reduce(mx, 1, sh);
			EACH_COL(j, n)
			{
				s += yr[j * inner] = expf(xr[j * inner] - mx);
			}
			s = block_reduce(s, 0, sh);
			EACH_COL(j, n)
			{
				yr[j * inner] = (float)(yr[j * inner] / s);
			}
		} else {
			const float *yr = y + base, *gr = dy + base;
			EACH_COL(j, n)
			{
				s += (double)gr[j * inner] * yr[j * inner];
			}
			s = block_reduce(s, 0, sh);
			EACH_COL(j, n)
			{
				dx[base + j * inner] = yr[j * inner] * (float)(gr[j * inner] - s);
			}
		}
	}
}

extern "C" int plk_softmax(void *stream, const float *x, float *y, const float *dy, float *dx,
                           int64_t outer, int64_t n, int64_t inner)
{
	if (outer * inner > 0)
		k_softmax<<<row_blocks((size_t)(outer * inner)), THREADS, 0,
		            (cudaStream_t)stream>>>(x, y, dy, dx, outer, n, inner);
	return launched();
}

__global__ static void k_norm(int rms, const float *x, const float *s, const float *b, float *y,
                              const float *dy, float *dx, float *ds, float *db, int64_t rows,
                              int64_t cols, double eps)
{
	__shared__ double sh[THREADS / 32];
	EACH_ROW(r, (size_t)rows)
	{
		const float *xr = x + r * cols;
		double mean = 0, var = 0;
		if (!rms) {
			EACH_COL(j, cols)
			{
				mean += xr[j];
			}
			mean = block_reduce(mean, 0, sh) / (double)cols;
		}
		EACH_COL(j, cols)
		{
			var += (xr[j] - mean) * (xr[j] - mean);
		}
		double rstd = 1 / sqrt(block_reduce(var, 0, sh) / (double)cols + eps);
		if (!dy) {
			float *yr = y + r * cols;
			EACH_COL(j, cols)
			{
				yr[j] = (float)((xr[j] - mean) * rstd) * s[j] + (b ? b[j] : 0);
			}
			continue;
		}
		const float *gr = dy + r * cols;
		double m1 = 0, m2 = 0;
		EACH_COL(j, cols)
		{
			double xh = (xr[j] - mean) * rstd, g = (double)gr[j] * s[j];
			m1 += g;
			m2 += g * xh;
			if (ds)
				atomicAdd(&ds[j], (float)(gr[j] * xh));
			if (db)
				atomicAdd(&db[j], gr[j]);
		}
		m1 = block_reduce(m1, 0, sh) / (double)cols;
		m2 = block_reduce(m2, 0, sh) / (double)cols;
		if (dx)
			EACH_COL(j, cols)
			{
				double xh = (xr[j] - mean) * rstd, g = (double)gr[j] * s[j];
				dx[r * cols + j] = (float)(rstd * (g - (rms ? 0 : m1) - xh * m2));
			}
	}
}

extern "C" int plk_norm(void *stream, int rms, const float *x, const float *s, const float *b,
                        float *y, const float *dy, float *dx, float *ds, float *db, int64_t rows,
                        int64_t cols, double eps)
{
	if (rows)
		k_norm<<<row_blocks((size_t)rows), THREADS, 0, (cudaStream_t)stream>>>(
		    rms, x, s, b, y, dy, dx, ds, db, rows, cols, eps);
	return launched();
}

// ---- indexing ----

__global__ static void k_gather(const float *x, const float *ix, float *y, const float *dy,
                                float *dx, int64_t pre, int64_t vl, int64_t post, int64_t ni,
                                int64_t v0, int64_t vglob)
{
	EACH(e, (size_t)(pre * ni * post))
	{
		int64_t q = (int64_t)e % post, i = (int64_t)e / post % ni,
		        p = (int64_t)e / (post * ni);
		int64_t id = (int64_t)ix[i];
		if (id < 0)
			id += vglob;
		id -= v0;
		int in = id >= 0 && id < vl;
		if (!dy)
			y[e] = in ? x[(p * vl + id) * post + q] : 0;
		else if (dx && in)
			atomicAdd(&dx[(p * vl + id) * post + q], dy[e]);
	}
}

extern "C" int plk_gather(void *stream, const float *x, const float *ix, float *y, const float *dy,
                          float *dx, int64_t pre, int64_t vl, int64_t post, int64_t ni, int64_t v0,
                          int64_t vglob)
{
	if (pre * ni * post > 0)
		k_gather<<<blocks((size_t)(pre * ni * post)), THREADS, 0, (cudaStream_t)stream>>>(
		    x, ix, y, dy, dx, pre, vl, post, ni, v0, vglob);
	return launched();
}

struct perm {
	int64_t s[PLK_MAX_RANK];
};

__global__ static void k_transpose(const float *x, float *y, const float *dy, float *dx,
                                   plk_shape out, perm src, size_t n)
{
	EACH(j, n)
	{
		int64_t ix[PLK_MAX_RANK], at = 0;
		unflatten(j, out, ix);
		for (int d = 0; d < out.rank; d++)
			at += ix[d] * src.s[d];
		if (!dx)
			y[j] = x[at];
		else
			dx[at] = dy[j];
	}
}

extern "C" int plk_transpose(void *stream, const float *x, float *y, const float *dy, float *dx,
                             const plk_shape *out, const int64_t *src)
{
	perm p;
	size_t n = 1;
	for (int d = 0; d < out->rank; d++) {
		p.s[d] = src[d];
		n *= (size_t)out->s[d];
	}
	if (n)
		k_transpose<<<blocks(n), THREADS, 0, (cudaStream_t)stream>>>(x, y, dy, dx, *out, p,
		                                                             n);
	return launched();
}

__global__ static void k_reduce_sum(const float *x, double *acc, plk_shape xs, perm ost, size_t n)
{
	EACH(i, n)
	{
		int64_t ix[PLK_MAX_RANK], o = 0;
		unflatten(i, xs, ix);
		for (int d = 0; d < xs.rank; d++)
			o += ix[d] * ost.s[d];
		atomicAdd(&acc[o], (double)x[i]);
	}
}

__global__ static void k_reduce_out(const double *acc, float *y, size_t n, double scale)
{
	EACH(e, n)
	y[e] = (float)(acc[e] * scale);
}

__global__ static void k_reduce_grad(const float *dy, float *dx, plk_shape xs, perm ost, size_t n,
                                     double scale)
{
	EACH(i, n)
	{
		int64_t ix[PLK_MAX_RANK], o = 0;
		unflatten(i, xs, ix);
		for (int d = 0; d < xs.rank; d++)
			o += ix[d] * ost.s[d];
		dx[i] = (float)(dy[o] * scale);
	}
}

extern "C" int plk_reduce(void *stream, const float *x, float *y, const float *dy, float *dx,
                          const plk_shape *xs, const int64_t *ost, size_t yn, double scale)
{
	cudaStream_t s = (cudaStream_t)stream;
	perm p;
	size_t n = 1;
	for (int d = 0; d < xs->rank; d++) {
		p.s[d] = ost[d];
		n *= (size_t)xs->s[d];
	}
	if (dx) {
		if (n)
			k_reduce_grad<<<blocks(n), THREADS, 0, s>>>(dy, dx, *xs, p, n, scale);
		return launched();
	}
	double *acc = NULL;
	cudaError_t e = cudaMallocAsync((void **)&acc, sizeof(double) * (yn ? yn : 1), s);
	if (e != cudaSuccess)
		return (int)e;
	if ((e = cudaMemsetAsync(acc, 0, sizeof(double) * (yn ? yn : 1), s)) == cudaSuccess) {
		if (n)
			k_reduce_sum<<<blocks(n), THREADS, 0, s>>>(x, acc, *xs, p, n);
		if (yn)
			k_reduce_out<<<blocks(yn), THREADS, 0, s>>>(acc, y, yn, scale);
		e = cudaGetLastError();
	}
	cudaFreeAsync(acc, s);
	return (int)e;
}

// ---- SoftmaxCrossEntropy ----

__global__ static void k_sce_max(const float *x, float *mx, int64_t np, int64_t cl)
{
	EACH(p, (size_t)np)
	{
		float m = -INFINITY;
		for (int64_t c = 0; c < cl; c++)
			m = fmaxf(m, x[p * cl + c]);
		mx[p] = m;
	}
}

__global__ static void k_sce_sum(const float *x, const float *lab, const float *mx, float *st,
                                 int64_t np, int64_t cl, int64_t c0)
{
	EACH(p, (size_t)np)
	{
		double s = 0;
		for (int64_t c = 0; c < cl; c++)
			s += exp(x[p * cl + c] - mx[p]);
		int64_t t = (int64_t)lab[p] - c0;
		st[2 * p] = (float)s;
		st[2 * p + 1] = t >= 0 && t < cl ? x[p * cl + t] : 0;
	}
}

__global__ static void k_sce_loss(const float *mx, const float *st, float *lse, float *y,
                                  int64_t np, double positions, int share)
{
	__shared__ double part[THREADS];
	double l = 0;
	for (int64_t p = threadIdx.x; p < np; p += blockDim.x) {
		lse[p] = mx[p] + logf(st[2 * p]);
		l += lse[p] - st[2 * p + 1];
	}
	part[threadIdx.x] = l;
	__syncthreads();
	if (threadIdx.x == 0) {
		double loss = 0;
		for (unsigned k = 0; k < blockDim.x; k++)
			loss += part[k];
		y[0] = share ? (float)(loss / positions) : 0;
	}
}

__global__ static void k_sce_grad(const float *x, const float *lab, const float *lse,
                                  const float *dy, float *dx, int64_t np, int64_t cl, int64_t c0,
                                  double positions)
{
	double g = dy[0] / positions;
	EACH(e, (size_t)(np * cl))
	{
		int64_t p = (int64_t)e / cl, c = (int64_t)e % cl;
		int64_t t = (int64_t)lab[p] - c0;
		double pr = exp(x[e] - lse[p]);
		dx[e] = (float)(g * (pr - (c == t)));
	}
}

extern "C" int plk_sce_max(void *stream, const float *x, float *mx, int64_t np, int64_t cl)
{
	if (np)
		k_sce_max<<<blocks((size_t)np), THREADS, 0, (cudaStream_t)stream>>>(x, mx, np, cl);
	return launched();
}

extern "C" int plk_sce_sum(void *stream, const float *x, const float *lab, const float *mx,
                           float *st, int64_t np, int64_t cl, int64_t c0)
{
	if (np)
		k_sce_sum<<<blocks((size_t)np), THREADS, 0, (cudaStream_t)stream>>>(x, lab, mx, st,
		                                                                    np, cl, c0);
	return launched();
}

extern "C" int plk_sce_loss(void *stream, const float *mx, const float *st, float *lse, float *y,
                            int64_t np, double positions, int share)
{
	k_sce_loss<<<1, THREADS, 0, (cudaStream_t)stream>>>(mx, st, lse, y, np, positions, share);
	return launched();
}

extern "C" int plk_sce_grad(void *stream, const float *x, const float *lab, const float *lse,
                            const float *dy, float *dx, int64_t np, int64_t cl, int64_t c0,
                            double positions)
{
	if (np * cl > 0)
		k_sce_grad<<<blocks((size_t)(np * cl)), THREADS, 0, (cudaStream_t)stream>>>(
		    x, lab, lse, dy, dx, np, cl, c0, positions);
	return launched();
}
