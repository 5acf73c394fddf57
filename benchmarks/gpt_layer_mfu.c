/* planner-gpt-layer-mfu: the matrix products of one GPT-style transformer layer,
 * forward and backward, in bf16 with fp32 accumulation through cuBLAS, on
 * GPU 0: achieved TFLOP/s and model FLOPs utilisation against a peak (the
 * H100 SXM's dense bf16 989 TFLOP/s unless --peak says otherwise).
 *
 * The layer (tokens t = batch x seq, hidden h, heads a, head dim d = h/a):
 * QKV [t,h]x[h,3h]; scores and context, per (batch, head), [s,d]x[d,s] and
 * [s,s]x[s,d]; the output projection [t,h]x[h,h]; the MLP [t,h]x[h,4h] and
 * [t,4h]x[4h,h]. Backward runs two products per forward one (the input's and
 * the weight's gradient), so a step is 3 x (24 t h^2 + 4 b s^2 h) FLOPs --
 * the count MFU is defined with. Element-wise work (softmax, norms, GELU) is
 * not run: it is under 3% of the FLOPs and memory-bound.
 *
 * usage: planner-gpt-layer-mfu [--hidden H] [--heads A] [--seq S] [--batch B]
 *                      [--iters N] [--peak TFLOPS] [--json] */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct prod {
	const char *name;
	int ta, tb;
	long long m, n, k, batch, sa, sb, sc; /* strides in elements for batched */
	void *a, *b, *c;
} prod;

static int fail(const char *what, int code)
{
	fprintf(stderr, "planner-gpt-layer-mfu: %s failed (%d)\n", what, code);
	return 4;
}

/* C = op(A) op(B), row-major bf16, fp32 accumulation */
static cublasStatus_t run(cublasHandle_t h, const prod *p)
{
	const float one = 1, zero = 0;
	int lda = (int)(p->ta ? p->m : p->k), ldb = (int)(p->tb ? p->k : p->n), ldc = (int)p->n;
	cublasOperation_t oa = p->ta ? CUBLAS_OP_T : CUBLAS_OP_N,
	                  ob = p->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	if (p->batch == 1)
		return cublasGemmEx(h, ob, oa, (int)p->n, (int)p->m, (int)p->k, &one, p->b,
		                    CUDA_R_16BF, ldb, p->a, CUDA_R_16BF, lda, &zero, p->c,
		                    CUDA_R_16BF, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	return cublasGemmStridedBatchedEx(h, ob, oa, (int)p->n, (int)p->m, (int)p->k, &one, p->b,
	                                  CUDA_R_16BF, ldb, p->sb, p->a, CUDA_R_16BF, lda, p->sa,
	                                  &zero, p->c, CUDA_R_16BF, ldc, p->sc, (int)p->batch,
	                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static int arg_ll(int argc, char **argv, int *i, long long *v)
{
	if (*i + 1 >= argc)
		return -1;
	char *end;
	*v = strtoll(argv[++*i], &end, 10);
	return *end || *v < 1 ? -1 : 0;
}

/* The layer and the run the options ask for */
typedef struct mfu_opts {
	long long h, a, s, b, iters;
	double peak;
	int json;
} mfu_opts;

/* argv into *o: -1 to go on, else the exit code (0 after --help, 2 on a bad
 * option) */
static int parse_args(int argc, char **argv, mfu_opts *o)
{
	for (int i = 1; i < argc; i++) {
		int bad = 0;
		if (!strcmp(argv[i], "--hidden"))
			bad = arg_ll(argc, argv, &i, &o->h);
		else if (!strcmp(argv[i], "--heads"))
			bad = arg_ll(argc, argv, &i, &o->a);
		else if (!strcmp(argv[i], "--seq"))
			bad = arg_ll(argc, argv, &i, &o->s);
		else if (!strcmp(argv[i], "--batch"))
			bad = arg_ll(argc, argv, &i, &o->b);
		else if (!strcmp(argv[i], "--iters"))
			bad = arg_ll(argc, argv, &i, &o->iters);
		else if (!strcmp(argv[i], "--peak") && i + 1 < argc)
			bad = !((o->peak = strtod(argv[++i], NULL)) > 0);
		else if (!strcmp(argv[i], "--json"))
			o->json = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts("usage: planner-gpt-layer-mfu [--hidden H] [--heads A] [--seq S] "
			     "[--batch B] "
			     "[--iters N] [--peak TFLOPS] [--json]\n"
			     "One GPT-style layer's matrix products, forward and backward, bf16 on "
			     "GPU 0 (cuBLAS):\nTFLOP/s and MFU against --peak (default 989, the "
			     "H100 SXM's dense bf16).");
			return 0;
		} else
			bad = 1;
		if (bad) {
			fprintf(
			    stderr,
			    "planner-gpt-layer-mfu: bad or incomplete option '%s' (see --help)\n",
			    argv[i]);
			return 2;
		}
	}
	return -1;
}

/* nb buffers of el[i] bf16 elements and their gradients, filled with small
 * values: 0, or the exit code */
static int alloc_buffers(const size_t *el, int nb, void **buf, void **grad)
{
	cudaError_t ce;
	for (int i = 0; i < nb; i++) {
		if ((ce = cudaMalloc(&buf[i], 2 * el[i])) != cudaSuccess ||
		    (ce = cudaMalloc(&grad[i], 2 * el[i])) != cudaSuccess)
			return fail("cudaMalloc", (int)ce);
		/* small bf16 values: 0x3c00 + noise is about 0.0078 */
		size_t n = el[i];
		uint16_t *host = malloc(2 * n);
		if (!host)
			return fail("malloc", 0);
		for (size_t e = 0; e < n; e++)
			host[e] = (uint16_t)(0x3c00 + (e * 2654435761u >> 24 & 0x7f));
		cudaMemcpy(buf[i], host, 2 * n, cudaMemcpyHostToDevice);
		cudaMemcpy(grad[i], host, 2 * n, cudaMemcpyHostToDevice);
		free(host);
	}
	return 0;
}

/* Each product timed alone (iters runs after 3 warm-ups; ms[i]), then the
 * step, all of them in turn (*step_ms): 0, or the exit code */
static int time_products(cublasHandle_t hd, const prod *ps, int np, long long iters, double *ms,
                         float *step_ms)
{
	cublasStatus_t bs;
	cudaError_t ce;
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	for (int i = 0; i < np; i++) {
		for (int w = 0; w < 3; w++)
			if ((bs = run(hd, &ps[i])) != CUBLAS_STATUS_SUCCESS)
				return fail(ps[i].name, (int)bs);
		cudaEventRecord(e0, 0);
		for (long long it = 0; it < iters; it++)
			run(hd, &ps[i]);
		cudaEventRecord(e1, 0);
		cudaEventSynchronize(e1);
		float m;
		cudaEventElapsedTime(&m, e0, e1);
		ms[i] = m / (double)iters;
	}
	cudaEventRecord(e0, 0);
	for (long long it = 0; it < iters; it++)
		for (int i = 0; i < np; i++)
			run(hd, &ps[i]);
	cudaEventRecord(e1, 0);
	cudaEventSynchronize(e1);
	cudaEventElapsedTime(step_ms, e0, e1);
	*step_ms /= (float)iters;
	if ((ce = cudaGetLastError()) != cudaSuccess)
		return fail(cudaGetErrorString(ce), (int)ce);
	return 0;
}

/* Per product its ms and TFLOP/s, then the step's TFLOP/s and MFU (the
 * model's FLOPs over the step), as a table or JSON lines */
static void report(const mfu_opts *o, const char *device, const prod *ps, int np, const double *ms,
                   float step_ms)
{
	long long h = o->h, a = o->a, s = o->s, b = o->b, t = b * s;
	double flops = 0, peak = o->peak;
	int json = o->json;
	if (!json)
		printf("%s: GPT-style layer, hidden %lld, heads %lld, seq %lld, batch %lld (bf16, "
		       "cuBLAS %d)\n%-14s %10s %10s\n",
		       device, h, a, s, b, CUBLAS_VERSION, "product", "ms", "TFLOP/s");
	for (int i = 0; i < np; i++) {
		double f =
		    2.0 * (double)ps[i].m * (double)ps[i].n * (double)ps[i].k * (double)ps[i].batch;
		flops += f;
		if (json)
			printf("{\"product\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, "
			       "\"batch\": "
			       "%lld, \"ms\": %.4f, \"tflops\": %.1f}\n",
			       ps[i].name, ps[i].m, ps[i].n, ps[i].k, ps[i].batch, ms[i],
			       f / (ms[i] * 1e-3) / 1e12);
		else
			printf("%-14s %10.3f %10.1f\n", ps[i].name, ms[i],
			       f / (ms[i] * 1e-3) / 1e12);
	}
	double model = 3 * (24.0 * (double)t * (double)h * (double)h +
	                    4.0 * (double)b * (double)s * (double)s * (double)h);
	double tf = model / (step_ms * 1e-3) / 1e12;
	if (json)
		printf(
		    "{\"device\": \"%s\", \"hidden\": %lld, \"heads\": %lld, \"seq\": %lld, "
		    "\"batch\": %lld, \"step_ms\": %.4f, \"flops\": %.6g, \"model_flops\": %.6g, "
		    "\"tflops\": %.1f, \"peak_tflops\": %.0f, \"mfu\": %.4f}\n",
		    device, h, a, s, b, step_ms, flops, model, tf, peak, tf / peak);
	else
		printf("layer step %.3f ms: %.1f TFLOP/s of %.0f peak, MFU %.1f%% (model FLOPs "
		       "%.4g, products run %.4g)\n",
		       step_ms, tf, peak, 100 * tf / peak, model, flops);
}

/* options, the layer's buffers, the timed products forward and backward, the
 * report */
int main(int argc, char **argv)
{
	mfu_opts o = {.h = 5120, .a = 40, .s = 2048, .b = 4, .iters = 20, .peak = 989};
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	long long h = o.h, a = o.a, s = o.s, b = o.b;
	if (h % a) {
		fprintf(stderr,
		        "planner-gpt-layer-mfu: --hidden %lld is not a multiple of --heads %lld\n",
		        h, a);
		return 2;
	}
	int ndev = 0;
	cudaError_t ce = cudaGetDeviceCount(&ndev);
	if (ce != cudaSuccess || !ndev) {
		fprintf(stderr, "planner-gpt-layer-mfu: no GPU (%s)\n",
		        ce != cudaSuccess ? cudaGetErrorString(ce) : "no CUDA devices");
		return 4;
	}
	struct cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, 0);
	long long t = b * s, d = h / a;
	/* buffers (bf16): x, qkv, scores, context, attn-out, fc1 out, fc2 out,
	 * weights, and the same again for gradients */
	size_t el[] = {t * h, t * 3 * h, b * a * s * s, t * h,     t * h,    t * 4 * h,
	               t * h, h * 3 * h, h * h,         h * 4 * h, 4 * h * h};
	enum { X, QKV, SC, CTX, AO, F1, F2, WQKV, WO, W1, W2, NB };
	void *buf[NB], *grad[NB];
	if ((rc = alloc_buffers(el, NB, buf, grad)))
		return rc;
	/* q, k, v as [b, a, s, d] slices of qkv (a layout real kernels get by a
	 * transpose; the products are the same size) */
	char *q = buf[QKV], *k = (char *)buf[QKV] + 2 * t * h, *v = (char *)buf[QKV] + 4 * t * h;
	char *dq = grad[QKV], *dk = (char *)grad[QKV] + 2 * t * h,
	     *dv = (char *)grad[QKV] + 4 * t * h;
	long long ba = b * a, sd = s * d, ss = s * s;
	prod ps[] = {
	    /* forward */
	    {"qkv", 0, 0, t, 3 * h, h, 1, 0, 0, 0, buf[X], buf[WQKV], buf[QKV]},
	    {"scores", 0, 1, s, s, d, ba, sd, sd, ss, q, k, buf[SC]},
	    {"context", 0, 0, s, d, s, ba, ss, sd, sd, buf[SC], v, buf[CTX]},
	    {"out proj", 0, 0, t, h, h, 1, 0, 0, 0, buf[CTX], buf[WO], buf[AO]},
	    {"fc1", 0, 0, t, 4 * h, h, 1, 0, 0, 0, buf[AO], buf[W1], buf[F1]},
	    {"fc2", 0, 0, t, h, 4 * h, 1, 0, 0, 0, buf[F1], buf[W2], buf[F2]},
	    /* backward: dX = dY W^T, dW = X^T dY */
	    {"fc2 dX", 0, 1, t, 4 * h, h, 1, 0, 0, 0, grad[F2], buf[W2], grad[F1]},
	    {"fc2 dW", 1, 0, 4 * h, h, t, 1, 0, 0, 0, buf[F1], grad[F2], grad[W2]},
	    {"fc1 dX", 0, 1, t, h, 4 * h, 1, 0, 0, 0, grad[F1], buf[W1], grad[AO]},
	    {"fc1 dW", 1, 0, h, 4 * h, t, 1, 0, 0, 0, buf[AO], grad[F1], grad[W1]},
	    {"out proj dX", 0, 1, t, h, h, 1, 0, 0, 0, grad[AO], buf[WO], grad[CTX]},
	    {"out proj dW", 1, 0, h, h, t, 1, 0, 0, 0, buf[CTX], grad[AO], grad[WO]},
	    {"context dP", 0, 1, s, s, d, ba, sd, sd, ss, grad[CTX], v, grad[SC]},
	    {"context dV", 1, 0, s, d, s, ba, ss, sd, sd, buf[SC], grad[CTX], dv},
	    {"scores dQ", 0, 0, s, d, s, ba, ss, sd, sd, grad[SC], k, dq},
	    {"scores dK", 1, 0, s, d, s, ba, ss, sd, sd, grad[SC], q, dk},
	    {"qkv dX", 0, 1, t, h, 3 * h, 1, 0, 0, 0, grad[QKV], buf[WQKV], grad[X]},
	    {"qkv dW", 1, 0, h, 3 * h, t, 1, 0, 0, 0, buf[X], grad[QKV], grad[WQKV]},
	};
	int np = (int)(sizeof ps / sizeof ps[0]);
	cublasHandle_t hd;
	cublasStatus_t bs = cublasCreate(&hd);
	if (bs != CUBLAS_STATUS_SUCCESS)
		return fail("cublasCreate", (int)bs);
	double *ms = calloc((size_t)np, sizeof *ms);
	float step_ms;
	if ((rc = time_products(hd, ps, np, o.iters, ms, &step_ms)))
		return rc;
	report(&o, prop.name, ps, np, ms, step_ms);
	free(ms);
	cublasDestroy(hd);
	for (int i = 0; i < NB; i++) {
		cudaFree(buf[i]);
		cudaFree(grad[i]);
	}
	return 0;
}
