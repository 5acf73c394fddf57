/* The element-wise formulas of the kernels, written once for the host
 * (kernels.c) and the device (cuda_kernels.cu): both backends compute the
 * same function the same way. */
#ifndef PL_KERNEL_MATH_H
#define PL_KERNEL_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define PL_HD __host__ __device__
#else
#define PL_HD
#endif

/* the element-wise operator kinds (Identity also stands for Cast) */
enum plk_unary {
	PLK_IDENTITY,
	PLK_RELU,
	PLK_GELU,
	PLK_SILU,
	PLK_TANH,
	PLK_SIGMOID,
	PLK_DROPOUT,
	PLK_CLIP,
	PLK_HARDSIGMOID,
	PLK_HARDSWISH,
	PLK_NEG,
	PLK_EXP,
	PLK_LOG,
	PLK_SQRT,
	PLK_ABS,
	PLK_SOFTPLUS,
	PLK_SIN,
	PLK_COS,
	PLK_ERF,
	PLK_SIGN,
	PLK_TAN,
	PLK_ASIN,
	PLK_ACOS,
	PLK_ATAN,
	PLK_SINH,
	PLK_COSH,
	PLK_ASINH,
	PLK_ACOSH,
	PLK_ATANH,
	PLK_FLOOR,
	PLK_CEIL,
	PLK_ROUND,
	PLK_TRUNC, /* toward 0: a Cast to an integer type, as C's and PyTorch's */
	PLK_GELU_TANH,
	PLK_LEAKYRELU,
	PLK_ELU,
	PLK_SELU,
	PLK_CELU,
	PLK_POW
};

/* The activations with parameters, as ONNX defines them: LeakyRelu (v, or
 * a v below 0), Elu (a (e^v - 1) below 0), Selu (g times Elu's), Celu
 * (a (e^(v/a) - 1) below 0); and v to the power a; *d receives the slope (at 0 the one from
 * below, as PyTorch's backward takes it for LeakyRelu; Elu's and Celu's are
 * continuous there) */
static inline PL_HD float plk_param_unit(int kind, float v, double a, double g, float *d)
{
	if (kind == PLK_POW) { /* v^a (Pow by a constant); its slope a v^(a-1) */
		*d = (float)(a * pow(v, a - 1));
		return (float)pow(v, a);
	}
	if (v > 0) {
		*d = (float)(kind == PLK_SELU ? g : 1);
		return kind == PLK_SELU ? (float)(g * v) : v;
	}
	switch ((enum plk_unary)kind) {
	case PLK_LEAKYRELU: *d = (float)a; return (float)(a * v);
	case PLK_CELU: *d = expf((float)(v / a)); return (float)(a * expm1(v / a));
	case PLK_SELU: *d = (float)(g * a * exp(v)); return (float)(g * a * expm1(v));
	case PLK_ELU: *d = (float)(a * exp(v)); return (float)(a * expm1(v));
	case PLK_IDENTITY:
	case PLK_RELU:
	case PLK_GELU:
	case PLK_SILU:
	case PLK_TANH:
	case PLK_SIGMOID:
	case PLK_DROPOUT:
	case PLK_CLIP:
	case PLK_HARDSIGMOID:
	case PLK_HARDSWISH:
	case PLK_NEG:
	case PLK_EXP:
	case PLK_LOG:
	case PLK_SQRT:
	case PLK_ABS:
	case PLK_SOFTPLUS:
	case PLK_SIN:
	case PLK_COS:
	case PLK_ERF:
	case PLK_SIGN:
	case PLK_TAN:
	case PLK_ASIN:
	case PLK_ACOS:
	case PLK_ATAN:
	case PLK_SINH:
	case PLK_COSH:
	case PLK_ASINH:
	case PLK_ACOSH:
	case PLK_ATANH:
	case PLK_FLOOR:
	case PLK_CEIL:
	case PLK_ROUND:
	case PLK_TRUNC:
	case PLK_GELU_TANH:
	case PLK_POW: break;
	}
	*d = 1; /* not an activation with parameters */
	return v;
}

/* HardSigmoid max(0, min(1, a v + b)); with swish, v times it (ONNX's
 * HardSwish: a = 1/6, b = 1/2). The gradient where the clamp is active: 0
 * (HardSigmoid), HardSigmoid's value (HardSwish) */
static inline PL_HD float plk_hard(int swish, float v, double a, double b, float *d)
{
	double t = a * v + b, h = t < 0 ? 0 : t > 1 ? 1 : t;
	int in = t > 0 && t < 1;
	*d = (float)(swish ? h + (in ? v * a : 0) : (in ? a : 0));
	return (float)(swish ? v * h : h);
}

/* Clip to [lo, hi] (ReLU6 is [0, 6]); the gradient passes inside, bounds
 * included, as torch.clamp's does */
static inline PL_HD float plk_clip(float v, double lo, double hi, float *d)
{
	*d = v >= lo && v <= hi;
	return v < lo ? (float)lo : v > hi ? (float)hi : v;
}

/* splitmix64 */
static inline PL_HD uint64_t plk_hash64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Dropout keeps global element idx of op's output */
static inline PL_HD int plk_dropout_keep(uint64_t seed, int op, uint64_t idx, double ratio)
{
	uint64_t h = plk_hash64(seed ^ plk_hash64((uint64_t)op * 0x100000001b3ULL ^ idx));
	return (double)(h >> 11) * 0x1.0p-53 >= ratio;
}

/* f(v) of an element-wise kind other than Dropout; *d receives f'(v) */
static inline PL_HD float plk_elementwise(int kind, float v, float *d)
{
	float r = v, s, t;
	const float c = 0.7978845608028654f, a = 0.044715f;
	*d = 1;
	switch ((enum plk_unary)kind) {
	case PLK_RELU:
		r = v > 0 ? v : 0;
		*d = v > 0;
		break;
	case PLK_GELU: /* x Phi(x): ONNX's Gelu (approximate "none"), PyTorch's default */
		t = 0.5f * (1 + erff(v * 0.70710678118654752f));
		*d = t + v * 0.39894228040143268f * expf(-0.5f * v * v);
		r = v * t;
		break;
	case PLK_GELU_TANH: /* the tanh approximation (approximate "tanh", GPT-2's) */
		t = tanhf(c * (v + a * v * v * v));
		*d = 0.5f * (1 + t) + 0.5f * v * (1 - t * t) * c * (1 + 3 * a * v * v);
		r = 0.5f * v * (1 + t);
		break;
	case PLK_SILU:
		s = 1 / (1 + expf(-v));
		r = v * s;
		*d = s * (1 + v * (1 - s));
		break;
	case PLK_TANH:
		r = tanhf(v);
		*d = 1 - r * r;
		break;
	case PLK_SIGMOID:
		r = 1 / (1 + expf(-v));
		*d = r * (1 - r);
		break;
	case PLK_NEG:
		r = -v;
		*d = -1;
		break;
	case PLK_EXP:
		r = expf(v);
		*d = r;
		break;
	case PLK_LOG:
		r = logf(v);
		*d = 1 / v;
		break;
	case PLK_SQRT:
		r = sqrtf(v);
		*d = r > 0 ? 0.5f / r : 0;
		break;
	case PLK_ABS:
		r = fabsf(v);
		*d = (float)((v > 0) - (v < 0));
		break;
	case PLK_SIN:
		r = sinf(v);
		*d = cosf(v);
		break;
	case PLK_COS:
		r = cosf(v);
		*d = -sinf(v);
		break;
	case PLK_ERF: /* its slope 2/sqrt(pi) e^(-v^2) */
		r = erff(v);
		*d = 1.1283791670955126f * expf(-v * v);
		break;
	case PLK_SIGN: /* -1, 0 or 1; no slope */
		r = (float)((v > 0) - (v < 0));
		*d = 0;
		break;
	case PLK_FLOOR: /* steps: no slope */
		r = floorf(v);
		*d = 0;
		break;
	case PLK_CEIL:
		r = ceilf(v);
		*d = 0;
		break;
	case PLK_ROUND: /* halves to even, as ONNX's Round and torch.round */
		r = rintf(v);
		*d = 0;
		break;
	case PLK_TRUNC:
		r = truncf(v);
		*d = 0;
		break;
	case PLK_TAN:
		r = tanf(v);
		*d = 1 + r * r;
		break;
	case PLK_ASIN:
		r = asinf(v);
		*d = 1 / sqrtf(1 - v * v);
		break;
	case PLK_ACOS:
		r = acosf(v);
		*d = -1 / sqrtf(1 - v * v);
		break;
	case PLK_ATAN:
		r = atanf(v);
		*d = 1 / (1 + v * v);
		break;
	case PLK_SINH:
		r = sinhf(v);
		*d = coshf(v);
		break;
	case PLK_COSH:
		r = coshf(v);
		*d = sinhf(v);
		break;
	case PLK_ASINH:
		r = asinhf(v);
		*d = 1 / sqrtf(v * v + 1);
		break;
	case PLK_ACOSH:
		r = acoshf(v);
		*d = 1 / sqrtf(v * v - 1);
		break;
	case PLK_ATANH:
		r = atanhf(v);
		*d = 1 / (1 - v * v);
		break;
	case PLK_SOFTPLUS: /* log(1 + e^v), for large v v itself; its slope the sigmoid */
		r = v > 20 ? v : log1pf(expf(v));
		*d = 1 / (1 + expf(-v));
		break;
	case PLK_IDENTITY: break;
	/* their own functions (plk_clip, plk_hard, plk_param_unit; Dropout's mask) */
	case PLK_DROPOUT:
	case PLK_CLIP:
	case PLK_HARDSIGMOID:
	case PLK_HARDSWISH:
	case PLK_LEAKYRELU:
	case PLK_ELU:
	case PLK_SELU:
	case PLK_CELU:
	case PLK_POW: break;
	}
	return r;
}

/* Softmax of one row of n elements `stride` apart: y from x */
static inline PL_HD void plk_softmax_row(const float *x, float *y, int64_t n, int64_t stride)
{
	float mx = -INFINITY;
	for (int64_t j = 0; j < n; j++)
		mx = fmaxf(mx, x[j * stride]);
	double s = 0;
	for (int64_t j = 0; j < n; j++)
		s += y[j * stride] = expf(x[j * stride] - mx);
	for (int64_t j = 0; j < n; j++)
		y[j * stride] = (float)(y[j * stride] / s);
}

/* its gradient: dx from y and dy */
static inline PL_HD void plk_softmax_row_grad(const float *y, const float *dy, float *dx, int64_t n,
                                              int64_t stride)
{
	double s = 0;
	for (int64_t j = 0; j < n; j++)
		s += (double)dy[j * stride] * y[j * stride];
	for (int64_t j = 0; j < n; j++)
		dx[j * stride] = y[j * stride] * (float)(dy[j * stride] - s);
}

/* LayerNorm (mean and variance) or RMSNorm (mean 0) of one row: *mean, and
 * the reciprocal standard deviation as the result */
static inline PL_HD double plk_norm_stats(const float *xr, int64_t cols, int rms, double eps,
                                          double *mean)
{
	double m = 0, var = 0;
	if (!rms) {
		for (int64_t j = 0; j < cols; j++)
			m += xr[j];
		m /= (double)cols;
	}
	for (int64_t j = 0; j < cols; j++)
		var += (xr[j] - m) * (xr[j] - m);
	var /= (double)cols;
	*mean = m;
	return 1 / sqrt(var + eps);
}

/* the binary operator kinds: arithmetic, the larger and the smaller
 * (torch.maximum, torch.minimum) and comparisons (1 where the relation
 * holds, else 0: a mask, without gradient) */
enum plk_binary {
	PLK_ADD,
	PLK_SUB,
	PLK_MUL,
	PLK_DIV,
	PLK_MAX,
	PLK_MIN,
	PLK_EQUAL,
	PLK_LESS,
	PLK_GREATER,
	PLK_PRELU,     /* a, or a b below 0 (b the slope, ONNX's PRelu) */
	PLK_POW_TENSOR /* a to the power b */
};

static inline PL_HD float plk_binary_value(int kind, float a, float b)
{
	switch ((enum plk_binary)kind) {
	case PLK_ADD: return a + b;
	case PLK_SUB: return a - b;
	case PLK_MUL: return a * b;
	case PLK_DIV: return a / b;
	case PLK_MAX: return a > b ? a : b;
	case PLK_MIN: return a < b ? a : b;
	case PLK_EQUAL: return (float)(a == b);
	case PLK_LESS: return (float)(a < b);
	case PLK_PRELU: return a > 0 ? a : a * b;
	case PLK_POW_TENSOR: return (float)pow(a, b);
	case PLK_GREATER: return (float)(a > b);
	}
	return 0;
}

/* the gradients of a and b from the output's g; a tie of Max or Min splits
 * it in halves, as torch.maximum's backward does */
static inline PL_HD void plk_binary_grad(int kind, float a, float b, float g, float *ga, float *gb)
{
	float h = 0.5f * g;
	*ga = *gb = 0;
	switch ((enum plk_binary)kind) {
	case PLK_ADD: *ga = g, *gb = g; break;
	case PLK_SUB: *ga = g, *gb = -g; break;
	case PLK_MUL: *ga = g * b, *gb = g * a; break;
	case PLK_DIV: *ga = g / b, *gb = -g * a / (b * b); break;
	case PLK_MAX:
		*ga = a > b ? g : a == b ? h : 0;
		*gb = b > a ? g : a == b ? h : 0;
		break;
	case PLK_MIN:
		*ga = a < b ? g : a == b ? h : 0;
		*gb = b < a ? g : a == b ? h : 0;
		break;
	case PLK_PRELU:
		*ga = a > 0 ? g : g * b;
		*gb = a > 0 ? 0 : g * a;
		break;
	case PLK_POW_TENSOR: /* as PyTorch's pow_backward_self and _exponent: 0 where
	                      * the exponent is 0, and where the base is 0 under an
	                      * exponent >= 0 (else x^e log x is 0 times -inf) */
		*ga = b == 0 ? 0 : (float)(g * b * pow(a, b - 1));
		*gb = a == 0 && b >= 0 ? 0 : (float)(g * pow(a, b) * log(a));
		break;
	case PLK_EQUAL:
	case PLK_LESS:
	case PLK_GREATER: *ga = *gb = 0; break; /* masks */
	}
}

#endif
