/* GPU calibration with CUDA events, cuBLAS and NCCL (single process, one
 * communicator per group size over the first g GPUs). */
#include "topology/calibrate_gpu.h"

#include <cjson/cJSON.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topology/fit.h"

#define MAXDEV   64
#define MAXSIZES 40
#define WARMUP   5

int pl_calibrate_gpu_built(void)
{
	return 1;
}

#define CUDA_OK(call, what)                                                                        \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			st = pl_err_set(err, PL_EDEVICE, "calibrate: %s: %s", what,                \
			                cudaGetErrorString(e_));                                   \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define NCCL_OK(call, what)                                                                        \
	do {                                                                                       \
		ncclResult_t e_ = (call);                                                          \
		if (e_ != ncclSuccess) {                                                           \
			st = pl_err_set(err, PL_EDEVICE, "calibrate: %s: %s", what,                \
			                ncclGetErrorString(e_));                                   \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

static void progress(const pl_calib_opts *o, const char *what, int n)
{
	if (!o->progress)
		return;
	char msg[160];
	snprintf(msg, sizeof msg, "%s %d", what, n);
	o->progress(o->ud, msg);
}

/* cuBLAS bf16 GEMMs (fp32 accumulation) of n^3 on device 0: seconds each */
static pl_status gemm_curve(const pl_calib_opts *o, const int *sizes, int nsizes, double *secs,
                            pl_err *err)
{
	pl_status st = PL_OK;
	cublasHandle_t h = NULL;
	void *a = NULL, *b = NULL, *c = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	size_t big = (size_t)sizes[nsizes - 1];
	CUDA_OK(cudaSetDevice(0), "cudaSetDevice(0)");
	CUDA_OK(cudaMalloc(&a, big * big * 2), "cudaMalloc (GEMM A)");
	CUDA_OK(cudaMalloc(&b, big * big * 2), "cudaMalloc (GEMM B)");
	CUDA_OK(cudaMalloc(&c, big * big * 2), "cudaMalloc (GEMM C)");
	CUDA_OK(cudaMemset(a, 0, big * big * 2), "cudaMemset");
	CUDA_OK(cudaMemset(b, 0, big * big * 2), "cudaMemset");
	CUDA_OK(cudaEventCreate(&e0), "cudaEventCreate");
	CUDA_OK(cudaEventCreate(&e1), "cudaEventCreate");
	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
		st = pl_err_set(err, PL_EDEVICE, "calibrate: cublasCreate failed");
		goto out;
	}
	const float one = 1, zero = 0;
	for (int i = 0; i < nsizes; i++) {
		int n = sizes[i];
		progress(o, "cuBLAS bf16 GEMM, m = n = k =", n);
		/* enough calls for ~50 ms at 500 TFLOP/s, at least 10 */
		double flops = 2.0 * n * n * (double)n;
		int reps = (int)(2.5e13 / flops);
		reps = reps < 10 ? 10 : reps > 2000 ? 2000 : reps;
		for (int r = 0; r < WARMUP + reps; r++) {
			if (r == WARMUP)
				CUDA_OK(cudaEventRecord(e0, 0), "cudaEventRecord");
			if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF,
			                 n, b, CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n,
			                 CUBLAS_COMPUTE_32F,
			                 CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
				st = pl_err_set(err, PL_EDEVICE,
				                "calibrate: cublasGemmEx (bf16, %d^3) failed", n);
				goto out;
			}
		}
		CUDA_OK(cudaEventRecord(e1, 0), "cudaEventRecord");
		CUDA_OK(cudaEventSynchronize(e1), "cudaEventSynchronize (GEMM)");
		float ms;
		CUDA_OK(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
		secs[i] = ms * 1e-3 / reps;
	}
out:
	if (h)
		cublasDestroy(h);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	return st;
}

enum { C_AR, C_AG, C_RS, C_A2A, C_SR, NCOLL };
static const pl_coll coll_kind[NCOLL] = {PL_COLL_ALL_REDUCE, PL_COLL_ALL_GATHER,
                                         PL_COLL_REDUCE_SCATTER, PL_COLL_ALL_TO_ALL,
                                         PL_COLL_SEND_RECV};

typedef struct group {
	int g;
	ncclComm_t comm[MAXDEV];
	cudaStream_t stream[MAXDEV];
	cudaEvent_t e0[MAXDEV], e1[MAXDEV];
	float *send[MAXDEV], *recv[MAXDEV];
} group;

/* releases what a group holds (any part may be missing) and clears it */
static void group_free(group *G)
{
	for (int i = 0; i < G->g; i++) {
		cudaSetDevice(i);
		cudaFree(G->send[i]);
		cudaFree(G->recv[i]);
		if (G->e0[i])
			cudaEventDestroy(G->e0[i]);
		if (G->e1[i])
			cudaEventDestroy(G->e1[i]);
		if (G->stream[i])
			cudaStreamDestroy(G->stream[i]);
		if (G->comm[i])
			ncclCommDestroy(G->comm[i]);
	}
	memset(G, 0, sizeof *G);
}

/* one collective of S bytes (as nccl-tests counts them) on every member */
static ncclResult_t launch(group *G, int k, double S)
{
	size_t count = (size_t)(S / 4), part = count / (size_t)G->g;
	ncclResult_t r = ncclGroupStart();
	for (int i = 0; i < G->g && r == ncclSuccess; i++) {
		ncclComm_t cm = G->comm[i];
		cudaStream_t s = G->stream[i];
		switch (k) {
		case C_AR:
			r = ncclAllReduce(G->send[i], G->recv[i], count, ncclFloat, ncclSum, cm, s);
			break;
		case C_AG: r = ncclAllGather(G->send[i], G->recv[i], part, ncclFloat, cm, s); break;
		case C_RS:
			r = ncclReduceScatter(G->send[i], G->recv[i], part, ncclFloat, ncclSum, cm,
			                      s);
			break;
		case C_A2A:
			for (int p = 0; p < G->g && r == ncclSuccess; p++) {
				r = ncclSend(G->send[i] + (size_t)p * part, part, ncclFloat, p, cm,
				             s);
				if (r == ncclSuccess)
					r = ncclRecv(G->recv[i] + (size_t)p * part, part, ncclFloat,
					             p, cm, s);
			}
			break;
		default: /* a ring of pairs, as sendrecv_perf */
			r = ncclSend(G->send[i], count, ncclFloat, (i + 1) % G->g, cm, s);
			if (r == ncclSuccess)
				r = ncclRecv(G->recv[i], count, ncclFloat, (i + G->g - 1) % G->g,
				             cm, s);
			break;
		}
	}
	ncclResult_t e = ncclGroupEnd();
	return r != ncclSuccess ? r : e;
}

pl_status pl_calibrate_gpu(const pl_calib_opts *o, pl_cluster *out, cJSON **raw, pl_err *err)
{
	pl_status st = PL_OK;
	if (raw)
		*raw = NULL;
	int ndev = 0;
	cudaError_t ce = cudaGetDeviceCount(&ndev);
	if (ce != cudaSuccess || ndev < 1)
		return pl_err_set(err, PL_EDEVICE,
		                  "calibrate: no GPU (%s); '--backend cpu' calibrates the cpu "
		                  "backend, --from-nccl-tests reads nccl-tests logs",
		                  ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
	if (ndev > MAXDEV)
		ndev = MAXDEV;
	double max_bytes = o->max_bytes > 0 ? o->max_bytes : 1073741824.0;
	double sizes[MAXSIZES];
	int nsizes = 0;
	for (double s = 8; s <= max_bytes && nsizes < MAXSIZES; s *= 2)
		sizes[nsizes++] = s;
	static const int gemm_n[] = {256, 512, 1024, 2048, 4096, 8192};
	enum { NGEMM = sizeof gemm_n / sizeof *gemm_n };
	double gemm_s[NGEMM];
	group *G = calloc(1, sizeof *G);
	cJSON *r = cJSON_CreateObject();
	if (!G || !r) {
		free(G);
		cJSON_Delete(r);
		return pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
	}
	struct cudaDeviceProp prop;
	CUDA_OK(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties(0)");
	const char *preset = pl_cluster_preset_for_gpu(prop.name);
	pl_cluster_preset(out, preset ? preset : "h100x8", err);
	memset(out->coll, 0, sizeof out->coll);
	snprintf(out->device_name, sizeof out->device_name, "%.63s", prop.name);
	out->memory_bytes = (double)prop.totalGlobalMem;
	out->nodes = 1;
	out->devices_per_node = ndev;
	cJSON_AddStringToObject(r, "backend", "cuda");
	cJSON_AddStringToObject(r, "device", prop.name);
	cJSON_AddNumberToObject(r, "gpus", ndev);
	int nccl_version = 0;
	ncclGetVersion(&nccl_version);
	cJSON_AddNumberToObject(r, "nccl_version", nccl_version);

	if ((st = gemm_curve(o, gemm_n, NGEMM, gemm_s, err)))
		goto out;
	double f[NGEMM], rate[NGEMM], peak, half;
	cJSON *jg = cJSON_AddArrayToObject(r, "gemm_bf16");
	for (int i = 0; i < NGEMM; i++) {
		f[i] = 2.0 * gemm_n[i] * gemm_n[i] * (double)gemm_n[i];
		rate[i] = f[i] / gemm_s[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "n", gemm_n[i]);
		cJSON_AddNumberToObject(e, "seconds", gemm_s[i]);
		cJSON_AddNumberToObject(e, "flops_per_second", rate[i]);
		cJSON_AddItemToArray(jg, e);
	}
	if (!pl_fit_rate_curve(f, rate, NGEMM, &peak, &half) &&
	    out->peak_flops[PL_DT_BFLOAT16] > 0) {
		out->gemm_eff_max = peak / out->peak_flops[PL_DT_BFLOAT16];
		out->gemm_half_flops = half;
	}

	/* collectives over the first g GPUs: 1 (one-rank path), 2..8, powers
	 * of two, all */
	cJSON *jc = cJSON_AddArrayToObject(r, "collectives");
	int groups[MAXDEV], ngroups = 0;
	for (int g = 1; g <= ndev; g = g < 8 ? g + 1 : 2 * g)
		groups[ngroups++] = g;
	if (groups[ngroups - 1] != ndev)
		groups[ngroups++] = ndev;
	for (int gi = 0; gi < ngroups; gi++) {
		int g = groups[gi];
		memset(G, 0, sizeof *G);
		G->g = g;
		int devs[MAXDEV];
		for (int i = 0; i < g; i++)
			devs[i] = i;
		NCCL_OK(ncclCommInitAll(G->comm, g, devs), "ncclCommInitAll");
		for (int i = 0; i < g; i++) {
			CUDA_OK(cudaSetDevice(i), "cudaSetDevice");
			CUDA_OK(cudaStreamCreate(&G->stream[i]), "cudaStreamCreate");
			CUDA_OK(cudaEventCreate(&G->e0[i]), "cudaEventCreate");
			CUDA_OK(cudaEventCreate(&G->e1[i]), "cudaEventCreate");
			CUDA_OK(cudaMalloc((void **)&G->send[i], (size_t)max_bytes),
			        "cudaMalloc (send)");
			CUDA_OK(cudaMalloc((void **)&G->recv[i], (size_t)max_bytes),
			        "cudaMalloc (recv)");
			CUDA_OK(cudaMemset(G->send[i], 0, (size_t)max_bytes), "cudaMemset");
		}
		for (int k = 0; k < NCOLL; k++) {
			if (g == 1 && k != C_AR)
				continue; /* one rank: only the all-reduce path */
			char what[64];
			snprintf(what, sizeof what, "NCCL %s, GPUs:", pl_coll_name(coll_kind[k]));
			progress(o, what, g);
			double secs[MAXSIZES], bus[MAXSIZES], at[MAXSIZES];
			int n = 0;
			for (int si = 0; si < nsizes; si++) {
				double S = sizes[si];
				if ((size_t)(S / 4) < (size_t)g)
					continue; /* fewer elements than ranks */
				int reps = S < 1e8 ? 20 : 5;
				for (int it = 0; it < WARMUP + reps; it++) {
					if (it == WARMUP)
						for (int i = 0; i < g; i++) {
							CUDA_OK(cudaSetDevice(i), "cudaSetDevice");
							CUDA_OK(
							    cudaEventRecord(G->e0[i], G->stream[i]),
							    "cudaEventRecord");
						}
					NCCL_OK(launch(G, k, S), pl_coll_name(coll_kind[k]));
				}
				double worst = 0;
				for (int i = 0; i < g; i++) {
					CUDA_OK(cudaSetDevice(i), "cudaSetDevice");
					CUDA_OK(cudaEventRecord(G->e1[i], G->stream[i]),
					        "cudaEventRecord");
					CUDA_OK(cudaEventSynchronize(G->e1[i]),
					        "cudaEventSynchronize");
					float ms;
					CUDA_OK(cudaEventElapsedTime(&ms, G->e0[i], G->e1[i]),
					        "cudaEventElapsedTime");
					if (ms > worst)
						worst = ms;
				}
				secs[n] = worst * 1e-3 / reps;
				bus[n] = S * pl_bus_factor(coll_kind[k], g);
				at[n++] = S;
			}
			cJSON *e = cJSON_CreateObject(), *pts = cJSON_CreateArray();
			cJSON_AddStringToObject(e, "collective", pl_coll_name(coll_kind[k]));
			cJSON_AddNumberToObject(e, "ranks", g);
			for (int i = 0; i < n; i++) {
				cJSON *p = cJSON_CreateObject();
				cJSON_AddNumberToObject(p, "bytes", at[i]);
				cJSON_AddNumberToObject(p, "seconds", secs[i]);
				cJSON_AddItemToArray(pts, p);
			}
			cJSON_AddItemToObject(e, "points", pts);
			cJSON_AddItemToArray(jc, e);
			if (g < 2)
				continue;
			pl_ab ab[PL_FIT_MAX_RANGES];
			double lim[PL_FIT_MAX_RANGES];
			int nseg;
			pl_ab_list *l = &out->coll[coll_kind[k]][PL_LINK_INTRA];
			if (pl_fit_ab_ranges(bus, secs, n, PL_FIT_MAX_RANGES, ab, lim, &nseg) ||
			    l->n + nseg > PL_MAX_AB_SIZES)
				continue;
			double factor = pl_bus_factor(coll_kind[k], g);
			for (int s = 0; s < nseg; s++) {
				l->ranks[l->n] = g;
				l->ab[l->n] = ab[s];
				l->max_bytes[l->n++] = lim[s] > 0 ? lim[s] / factor : 0;
			}
			if (k == C_AR)
				out->link[PL_LINK_INTRA] = (pl_ab){ab[0].alpha, ab[nseg - 1].beta};
		}
		group_free(G);
	}
	time_t now = time(NULL);
	char day[32];
	strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
	snprintf(out->name, sizeof out->name, "cuda-x%d", ndev);
	snprintf(out->source, sizeof out->source,
	         "planner calibrate (cuBLAS bf16 GEMM, NCCL %d) on %d x %.60s, %s", nccl_version,
	         ndev, prop.name, day);
out:
	group_free(G);
	free(G);
	if (!st && raw)
		*raw = r;
	else
		cJSON_Delete(r);
	return st;
}
