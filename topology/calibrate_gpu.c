/* GPU calibration with CUDA events, cuBLAS and NCCL: in one process, one
 * communicator per group size over the first g GPUs (ncclCommInitAll); in
 * several, one GPU each, a communicator per group from a unique id that rank
 * 0 broadcasts over the rendezvous (ncclCommInitRankConfig, non-blocking:
 * every wait on another rank -- the communicator, each collective, the
 * timed run -- polls NCCL's state against the rendezvous timeout and aborts
 * the communicator past it, so a rank that dies stops the others instead of
 * leaving them in NCCL). */
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
#include <unistd.h>

#include "costmodel/fit.h"
#include "graph/alloc.h"
#include "graph/clock.h"
#include "graph/json.h"

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
	/* random bf16 values in +-[0.5, 2): GEMMs on zeros draw less power and
	 * run at clocks real data do not get */
	{
		uint16_t *host = pl_malloc(big * big * 2);
		if (!host) {
			st = pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
			goto out;
		}
		uint64_t x = 0x9E3779B97F4A7C15u;
		for (size_t i = 0; i < big * big; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			host[i] =
			    (uint16_t)((x >> 63) << 15 | (126u + (x >> 62 & 1)) << 7 | (x & 0x7f));
		}
		cudaError_t ea = cudaMemcpy(a, host, big * big * 2, cudaMemcpyHostToDevice),
		            eb = cudaMemcpy(b, host, big * big * 2, cudaMemcpyHostToDevice);
		free(host);
		CUDA_OK(ea, "cudaMemcpy (GEMM A)");
		CUDA_OK(eb, "cudaMemcpy (GEMM B)");
	}
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

enum coll { C_AR, C_AG, C_RS, C_A2A, C_SR, NCOLL };
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

/* releases what a group holds (any part may be missing) and clears it; its
 * communicators finalized together (one thread drives them all), then
 * destroyed */
static void group_free(group *G)
{
	if (ncclGroupStart() == ncclSuccess) {
		for (int i = 0; i < G->g; i++)
			if (G->comm[i]) {
				cudaSetDevice(i);
				ncclCommFinalize(G->comm[i]);
			}
		ncclGroupEnd();
	}
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

/* member i of a group of g posts one collective of S bytes (as nccl-tests
 * counts them) on its stream; inside ncclGroupStart/End */
static ncclResult_t post(ncclComm_t cm, cudaStream_t s, float *send, float *recv, int g, int i,
                         int k, double S)
{
	size_t count = (size_t)(S / 4), part = count / (size_t)g;
	ncclResult_t r = ncclSuccess;
	switch ((enum coll)k) {
	case C_AR: return ncclAllReduce(send, recv, count, ncclFloat, ncclSum, cm, s);
	case C_AG: return ncclAllGather(send, recv, part, ncclFloat, cm, s);
	case C_RS: return ncclReduceScatter(send, recv, part, ncclFloat, ncclSum, cm, s);
	case C_A2A:
		for (int p = 0; p < g && r == ncclSuccess; p++) {
			r = ncclSend(send + (size_t)p * part, part, ncclFloat, p, cm, s);
			if (r == ncclSuccess)
				r = ncclRecv(recv + (size_t)p * part, part, ncclFloat, p, cm, s);
		}
		return r;
	case C_SR: /* a ring of pairs, as sendrecv_perf */
		r = ncclSend(send, count, ncclFloat, (i + 1) % g, cm, s);
		return r == ncclSuccess ? ncclRecv(recv, count, ncclFloat, (i + g - 1) % g, cm, s)
		                        : r;
	case NCOLL: break;
	}
	return ncclInvalidArgument;
}

/* one collective on every member of a group of this process's GPUs */
static ncclResult_t launch(group *G, int k, double S)
{
	ncclResult_t r = ncclGroupStart();
	for (int i = 0; i < G->g && r == ncclSuccess; i++)
		r = post(G->comm[i], G->stream[i], G->send[i], G->recv[i], G->g, i, k, S);
	ncclResult_t e = ncclGroupEnd();
	return r != ncclSuccess ? r : e;
}

/* message sizes 8 B .. max_bytes in steps of 2 */
static int message_sizes(const pl_calib_opts *o, double *sizes)
{
	double max_bytes = o->max_bytes > 0 ? o->max_bytes : 1073741824.0;
	int n = 0;
	for (double s = 8; s <= max_bytes && n < MAXSIZES; s *= 2)
		sizes[n++] = s;
	return n;
}

/* group sizes: 1 .. 8, then powers of two, and n */
static int group_sizes(int n, int first, int *out)
{
	int k = 0;
	for (int g = first; g <= n; g = g < 8 ? g + 1 : 2 * g)
		out[k++] = g;
	if (k == 0 || out[k - 1] != n)
		out[k++] = n;
	return k;
}

/* adds the fit of one collective over one group (bus bytes against seconds)
 * to the cluster's lines of that link; 1 when it fitted */
static int add_fit(pl_cluster *out, int k, int link, int g, const double *at, const double *secs,
                   int n)
{
	double bus[MAXSIZES];
	for (int i = 0; i < n; i++)
		bus[i] = at[i] * pl_bus_factor(coll_kind[k], g);
	pl_ab ab[PL_FIT_MAX_RANGES];
	double lim[PL_FIT_MAX_RANGES];
	int nseg;
	pl_ab_list *l = &out->coll[coll_kind[k]][link];
	if (pl_fit_ab_ranges(bus, secs, n, PL_FIT_MAX_RANGES, ab, lim, &nseg))
		return 0;
	/* a full list takes one line for this group, or says it cannot */
	if (l->n + nseg > PL_MAX_AB_SIZES &&
	    (l->n + 1 > PL_MAX_AB_SIZES || pl_fit_ab_ranges(bus, secs, n, 1, ab, lim, &nseg))) {
		fprintf(stderr,
		        "planner calibrate: %s over %d ranks not recorded: a cluster holds at most "
		        "%d lines per collective and link\n",
		        pl_coll_name(coll_kind[k]), g, PL_MAX_AB_SIZES);
		return 0;
	}
	double factor = pl_bus_factor(coll_kind[k], g);
	for (int s = 0; s < nseg; s++) {
		l->ranks[l->n] = g;
		l->ab[l->n] = ab[s];
		l->max_bytes[l->n++] = lim[s] > 0 ? lim[s] / factor : 0;
	}
	if (k == C_AR)
		out->link[link] = (pl_ab){ab[0].alpha, ab[nseg - 1].beta};
	return 1;
}

/* the raw points of one collective over one group */
static void add_raw(cJSON *jc, int k, int g, const char *link, const double *at, const double *secs,
                    int n)
{
	cJSON *e = cJSON_CreateObject(), *pts = cJSON_CreateArray();
	cJSON_AddStringToObject(e, "collective", pl_coll_name(coll_kind[k]));
	cJSON_AddNumberToObject(e, "ranks", g);
	if (link)
		cJSON_AddStringToObject(e, "link", link);
	for (int i = 0; i < n; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "bytes", at[i]);
		cJSON_AddNumberToObject(p, "seconds", secs[i]);
		pl_json_push(pts, p);
	}
	pl_json_add(e, "points", pts);
	pl_json_push(jc, e);
}

/* the GEMM curve into *out and the raw record */
static pl_status gemm_fit(const pl_calib_opts *o, pl_cluster *out, cJSON *r, pl_err *err)
{
	static const int gemm_n[] = {256, 512, 1024, 2048, 4096, 8192};
	enum { NGEMM = sizeof gemm_n / sizeof *gemm_n };
	double gemm_s[NGEMM], f[NGEMM], rate[NGEMM], peak, half;
	pl_status st = gemm_curve(o, gemm_n, NGEMM, gemm_s, err);
	if (st)
		return st;
	cJSON *jg = cJSON_AddArrayToObject(r, "gemm_bf16");
	for (int i = 0; i < NGEMM; i++) {
		f[i] = 2.0 * gemm_n[i] * gemm_n[i] * (double)gemm_n[i];
		rate[i] = f[i] / gemm_s[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "n", gemm_n[i]);
		cJSON_AddNumberToObject(e, "seconds", gemm_s[i]);
		cJSON_AddNumberToObject(e, "flops_per_second", rate[i]);
		pl_json_push(jg, e);
	}
	if (!pl_fit_rate_curve(f, rate, NGEMM, &peak, &half) &&
	    out->peak_flops[PL_DT_BFLOAT16] > 0) {
		/* square GEMMs cannot tell the output term from the ceiling: the
		 * preset's steps kept, its rate at the preset's ratio to the ceiling */
		double was = out->gemm_eff_max;
		out->gemm_eff_max = peak / out->peak_flops[PL_DT_BFLOAT16];
		if (was > 0)
			out->gemm_k_max *= out->gemm_eff_max / was;
		out->gemm_half_flops = half;
	}
	return PL_OK;
}

/* the cluster a device starts from: its preset, without collective lines */
static pl_status device_cluster(int dev, pl_cluster *out, cJSON *r, pl_err *err)
{
	struct cudaDeviceProp prop;
	cudaError_t e = cudaGetDeviceProperties(&prop, dev);
	if (e != cudaSuccess)
		return pl_err_set(err, PL_EDEVICE, "calibrate: cudaGetDeviceProperties(%d): %s",
		                  dev, cudaGetErrorString(e));
	const char *preset = pl_cluster_preset_for_gpu(prop.name);
	pl_cluster_preset(out, preset ? preset : "h100x8", err);
	memset(out->coll, 0, sizeof out->coll);
	snprintf(out->device_name, sizeof out->device_name, "%.63s", prop.name);
	out->memory_bytes = (double)prop.totalGlobalMem;
	out->memory_reserve = pl_cluster_gpu_reserve(out->memory_bytes);
	cJSON_AddStringToObject(r, "backend", "cuda");
	cJSON_AddStringToObject(r, "device", prop.name);
	int v = 0;
	ncclGetVersion(&v);
	cJSON_AddNumberToObject(r, "nccl_version", v);
	return PL_OK;
}

static void name_source(pl_cluster *out, int nodes, int per_node)
{
	time_t now = time(NULL);
	char day[32];
	strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
	int v = 0;
	ncclGetVersion(&v);
	if (nodes > 1)
		snprintf(out->name, sizeof out->name, "cuda-x%d:%d", per_node, nodes);
	else
		snprintf(out->name, sizeof out->name, "cuda-x%d", per_node);
	snprintf(out->source, sizeof out->source,
	         "planner calibrate (cuBLAS bf16 GEMM, NCCL %d) on %d x %d x %.60s, %s", v, nodes,
	         per_node, out->device_name, day);
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
	int nsizes = message_sizes(o, sizes);
	group *G = pl_calloc(1, sizeof *G);
	cJSON *r = cJSON_CreateObject();
	if (!G || !r) {
		free(G);
		cJSON_Delete(r);
		return pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
	}
	if ((st = device_cluster(0, out, r, err)))
		goto out;
	out->nodes = 1;
	out->devices_per_node = ndev;
	cJSON_AddNumberToObject(r, "gpus", ndev);
	if ((st = gemm_fit(o, out, r, err)))
		goto out;

	/* collectives over the first g GPUs: 1 (one-rank path), 2..8, powers
	 * of two, all */
	cJSON *jc = cJSON_AddArrayToObject(r, "collectives");
	int groups[MAXDEV + 2];
	int ngroups = group_sizes(ndev, 1, groups);
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
			double secs[MAXSIZES], at[MAXSIZES];
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
				at[n++] = S;
			}
			add_raw(jc, k, g, NULL, at, secs, n);
			if (g >= 2)
				add_fit(out, k, PL_LINK_INTRA, g, at, secs, n);
		}
		group_free(G);
	}
	name_source(out, 1, ndev);
out:
	group_free(G);
	free(G);
	if (!st && raw)
		*raw = r;
	else
		cJSON_Delete(r);
	return st;
}

/* ---- several processes, one GPU each ---- */

#define HOSTLEN 64

/* one group of ranks to measure: its members in rank order and link class */
typedef struct rgroup {
	int n, link;
	int *member;
} rgroup;

/* The groups every rank lists alike from the node of each rank: node 0's
 * first g ranks (the intra-node link, g = 2..per_node), the first rank of
 * each of the first g nodes (the inter-node link as the hierarchical
 * all-reduce uses it, g = 2..nodes) and, on several nodes, every rank. */
static int plan_groups(int world, const int *node_of, int nodes, int per_node, rgroup *out)
{
	int sz[MAXDEV + 2], n = 0;
	int *by_node = pl_malloc(sizeof *by_node * (size_t)nodes);
	if (!by_node)
		return -1;
	for (int k = 0; k < nodes; k++)
		by_node[k] = -1;
	for (int q = world - 1; q >= 0; q--)
		by_node[node_of[q]] = q; /* each node's first rank */
	int ng = group_sizes(per_node, 2, sz);
	for (int i = 0; i < ng && per_node >= 2; i++) {
		rgroup *G = &out[n++];
		*G = (rgroup){.n = sz[i], .link = PL_LINK_INTRA};
		G->member = pl_malloc(sizeof *G->member * (size_t)sz[i]);
		for (int q = 0, m = 0; G->member && m < sz[i]; q++)
			if (node_of[q] == 0)
				G->member[m++] = q;
	}
	ng = nodes >= 2 ? group_sizes(nodes, 2, sz) : 0;
	for (int i = 0; i < ng; i++) {
		rgroup *G = &out[n++];
		*G = (rgroup){.n = sz[i], .link = PL_LINK_INTER};
		G->member = pl_malloc(sizeof *G->member * (size_t)sz[i]);
		for (int m = 0; G->member && m < sz[i]; m++)
			G->member[m] = by_node[m];
	}
	if (nodes >= 2 && per_node >= 2) {
		rgroup *G = &out[n++];
		*G = (rgroup){.n = world, .link = PL_LINK_INTER};
		G->member = pl_malloc(sizeof *G->member * (size_t)world);
		for (int q = 0; G->member && q < world; q++)
			G->member[q] = q;
	}
	free(by_node);
	for (int i = 0; i < n; i++)
		if (!out[i].member)
			return -1;
	return n;
}

/* Every rank: the host names gathered at rank 0, which numbers the nodes in
 * order of their first rank and checks that each holds as many ranks; the
 * numbers broadcast back. */
static pl_status find_nodes(pl_rdv *rdv, int *node_of, int *nodes, int *per_node, pl_err *err)
{
	char me[HOSTLEN] = {0}, *all = NULL;
	gethostname(me, sizeof me - 1);
	if (rdv->rank == 0 && !(all = pl_calloc((size_t)rdv->world, HOSTLEN)))
		return pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
	pl_status st = pl_rdv_gather(rdv, me, all, HOSTLEN, err);
	int hdr[3] = {0, 0, 0}; /* nodes, ranks per node, a rank of another count */
	if (!st && rdv->rank == 0) {
		int *count = pl_calloc((size_t)rdv->world, sizeof *count);
		if (!count) {
			free(all);
			return pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
		}
		for (int q = 0; q < rdv->world; q++) {
			int first = -1; /* the first rank on q's host */
			for (int p = 0; p < q && first < 0; p++)
				if (!strncmp(all + (size_t)p * HOSTLEN, all + (size_t)q * HOSTLEN,
				             HOSTLEN))
					first = p;
			node_of[q] = first < 0 ? hdr[0]++ : node_of[first];
			count[node_of[q]]++;
		}
		hdr[1] = count[0];
		for (int k = 1; k < hdr[0]; k++)
			if (count[k] != hdr[1])
				hdr[2] = k;
		free(count);
	}
	free(all);
	if (!st)
		st = pl_rdv_bcast(rdv, hdr, sizeof hdr, err);
	if (!st)
		st = pl_rdv_bcast(rdv, node_of, sizeof *node_of * (size_t)rdv->world, err);
	if (st)
		return st;
	if (hdr[2])
		return pl_err_set(err, PL_EINVAL,
		                  "calibrate: node 0 holds %d ranks and node %d another count; "
		                  "launch as many ranks on every node",
		                  hdr[1], hdr[2]);
	*nodes = hdr[0];
	*per_node = hdr[1];
	return PL_OK;
}

/* Waits, polling, until the non-blocking communicator has done what was
 * asked of it and (ev) the stream has passed ev. Past timeout_s, or on an
 * NCCL error, the communicator is aborted (*comm = NULL) and PL_EDEVICE
 * says what waited. */
static pl_status nccl_wait(ncclComm_t *comm, cudaEvent_t ev, double timeout_s, const char *what,
                           pl_err *err)
{
	double t0 = pl_now();
	const char *bad = NULL;
	char m[200] = "";
	for (;;) {
		ncclResult_t ns = ncclSuccess;
		ncclCommGetAsyncError(*comm, &ns);
		if (ns != ncclSuccess && ns != ncclInProgress) {
			snprintf(m, sizeof m, "%s", ncclGetErrorString(ns));
			bad = m;
		} else if (ns == ncclSuccess) {
			cudaError_t e = ev ? cudaEventQuery(ev) : cudaSuccess;
			if (e == cudaSuccess)
				return PL_OK;
			if (e != cudaErrorNotReady) {
				snprintf(m, sizeof m, "%s", cudaGetErrorString(e));
				bad = m;
			}
		}
		if (!bad && pl_now() - t0 > timeout_s) {
			snprintf(m, sizeof m,
			         "waited %.0f s for the other ranks (one of them stopped?)",
			         timeout_s);
			bad = m;
		}
		if (bad) {
			ncclCommAbort(*comm);
			*comm = NULL;
			return pl_err_set(err, PL_EDEVICE, "calibrate: %s: %s", what, bad);
		}
		struct timespec ts = {0, 50 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* A communicator's end: finalized (what is in flight flushed), then
 * destroyed; aborted if the finalize does not finish in time */
static void comm_end(ncclComm_t *comm, double timeout_s)
{
	pl_err e2;
	if (!*comm)
		return;
	ncclResult_t f = ncclCommFinalize(*comm);
	if (f != ncclSuccess && f != ncclInProgress) {
		ncclCommAbort(*comm);
	} else if (nccl_wait(comm, NULL, timeout_s, "finalizing", &e2) == PL_OK) {
		ncclCommDestroy(*comm); /* (nccl_wait aborted it otherwise) */
	}
	*comm = NULL;
}

/* Collective k on group G, this rank its member idx (or -1): the seconds
 * of each message size with an element per rank (at[i], secs[i]; *nout of
 * them), 0 where this rank is not a member */
static pl_status time_sizes(ncclComm_t *comm, cudaStream_t stream, cudaEvent_t e0, cudaEvent_t e1,
                            float *send, float *recv, const rgroup *G, int idx, int k,
                            const double *sizes, int nsizes, double wait_s, double *secs,
                            double *at, int *nout, pl_err *err)
{
	pl_status st = PL_OK;
	int n = 0;
	for (int si = 0; si < nsizes; si++) {
		double S = sizes[si];
		if ((size_t)(S / 4) < (size_t)G->n)
			continue; /* fewer elements than ranks */
		at[n] = S;
		if (idx < 0) {
			n++;
			continue; /* not a member: its time stays 0 */
		}
		int reps = S < 1e8 ? 20 : 5;
		for (int it = 0; it < WARMUP + reps; it++) {
			if (it == WARMUP)
				CUDA_OK(cudaEventRecord(e0, stream), "cudaEventRecord");
			NCCL_OK(ncclGroupStart(), "ncclGroupStart");
			ncclResult_t pr = post(*comm, stream, send, recv, G->n, idx, k, S);
			ncclResult_t pe = ncclGroupEnd();
			if (pe == ncclInProgress) /* queued once NCCL says so */
				pe = ncclSuccess;
			NCCL_OK(pr != ncclSuccess && pr != ncclInProgress ? pr : pe,
			        pl_coll_name(coll_kind[k]));
			if ((st = nccl_wait(comm, NULL, wait_s, pl_coll_name(coll_kind[k]), err)))
				goto out;
		}
		CUDA_OK(cudaEventRecord(e1, stream), "cudaEventRecord");
		if ((st = nccl_wait(comm, e1, wait_s, pl_coll_name(coll_kind[k]), err)))
			goto out;
		float ms;
		CUDA_OK(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
		secs[n++] = ms * 1e-3 / reps;
	}
out:
	*nout = n;
	return st;
}

/* Group G's communicator, this rank its member idx (none when idx < 0): rank
 * 0's unique id broadcast to every rank, each member's comm made */
static pl_status join_group(pl_rdv *rdv, const rgroup *G, int me, int idx, ncclComm_t *comm,
                            double wait_s, pl_err *err)
{
	pl_status st = PL_OK;
	ncclUniqueId id;
	if (me == 0)
		NCCL_OK(ncclGetUniqueId(&id), "ncclGetUniqueId");
	if ((st = pl_rdv_bcast(rdv, &id, sizeof id, err)))
		goto out;
	if (idx >= 0) {
		ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
		cfg.blocking = 0;
		ncclResult_t ie = ncclCommInitRankConfig(comm, G->n, id, idx, &cfg);
		NCCL_OK(ie == ncclInProgress ? ncclSuccess : ie, "ncclCommInitRankConfig");
		if ((st = nccl_wait(comm, NULL, wait_s, "creating a communicator", err)))
			goto out;
	}
out:
	return st;
}

/* Every rank takes the same rendezvous and NCCL steps in
 * the same order (a rank that skipped one would leave the others waiting
 * until the timeout), and every handle it makes is released at out:. The
 * steps: who has a GPU, the nodes, the device, the GEMM fit (rank 0), then
 * per group and collective the timed sizes, the slowest member's time. */
pl_status pl_calibrate_gpu_ranks(const pl_calib_opts *o, pl_rdv *rdv, pl_cluster *out, cJSON **raw,
                                 pl_err *err)
{
	pl_status st = PL_OK;
	if (raw)
		*raw = NULL;
	int ndev = 0, world = rdv->world, me = rdv->rank;
	cudaError_t ce = cudaGetDeviceCount(&ndev);
	/* every rank says whether it has a GPU before anyone waits on NCCL */
	int ok = ce == cudaSuccess && ndev >= 1, *oks = pl_calloc((size_t)world, sizeof *oks);
	int *node_of = pl_calloc((size_t)world, sizeof *node_of);
	rgroup *groups = pl_calloc(2 * MAXDEV + 8, sizeof *groups);
	cJSON *r = cJSON_CreateObject();
	ncclComm_t comm = NULL;
	cudaStream_t stream = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	float *send = NULL, *recv = NULL;
	double *all_secs = NULL;
	int ngroups = 0;
	/* how long a rank waits for the others in NCCL (every rank is there
	 * once the rendezvous is done: a longer wait means one stopped) */
	double wait_s = rdv->timeout_s > 0 && rdv->timeout_s < 300 ? rdv->timeout_s : 300;
	if (!oks || !node_of || !groups || !r) {
		st = pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
		goto out;
	}
	if ((st = pl_rdv_gather(rdv, &ok, oks, sizeof ok, err)))
		goto out;
	int missing = -1;
	for (int q = 0; me == 0 && q < world; q++)
		if (!oks[q] && missing < 0)
			missing = q;
	if ((st = pl_rdv_bcast(rdv, &missing, sizeof missing, err)))
		goto out;
	if (missing >= 0) {
		st = pl_err_set(err, PL_EDEVICE, "calibrate: rank %d has no GPU%s%s", missing,
		                missing == me && ce != cudaSuccess ? ": " : "",
		                missing == me && ce != cudaSuccess ? cudaGetErrorString(ce) : "");
		goto out;
	}
	int nodes = 0, per_node = 0, local = 0;
	if ((st = find_nodes(rdv, node_of, &nodes, &per_node, err)))
		goto out;
	/* the GPU: this rank's place among the ranks on its host (where each
	 * process sees one GPU, that one) */
	for (int q = 0; q < me; q++)
		local += node_of[q] == node_of[me];
	int dev = local % ndev;
	CUDA_OK(cudaSetDevice(dev), "cudaSetDevice");
	if (per_node > MAXDEV || nodes > MAXDEV) {
		st = pl_err_set(err, PL_EINVAL,
		                "calibrate: %d nodes of %d ranks; at most %d of each are measured",
		                nodes, per_node, MAXDEV);
		goto out;
	}
	if ((st = device_cluster(dev, out, r, err)))
		goto out;
	out->nodes = nodes;
	out->devices_per_node = per_node;
	cJSON_AddNumberToObject(r, "ranks", world);
	cJSON_AddNumberToObject(r, "nodes", nodes);
	if (me == 0 && (st = gemm_fit(o, out, r, err)))
		goto out;
	if ((ngroups = plan_groups(world, node_of, nodes, per_node, groups)) < 0) {
		ngroups = 2 * MAXDEV + 8;
		st = pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
		goto out;
	}
	double max_bytes = o->max_bytes > 0 ? o->max_bytes : 1073741824.0, sizes[MAXSIZES];
	int nsizes = message_sizes(o, sizes);
	CUDA_OK(cudaStreamCreate(&stream), "cudaStreamCreate");
	CUDA_OK(cudaEventCreate(&e0), "cudaEventCreate");
	CUDA_OK(cudaEventCreate(&e1), "cudaEventCreate");
	CUDA_OK(cudaMalloc((void **)&send, (size_t)max_bytes), "cudaMalloc (send)");
	CUDA_OK(cudaMalloc((void **)&recv, (size_t)max_bytes), "cudaMalloc (recv)");
	CUDA_OK(cudaMemset(send, 0, (size_t)max_bytes), "cudaMemset");
	all_secs = pl_calloc((size_t)world * MAXSIZES, sizeof *all_secs);
	if (!all_secs) {
		st = pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
		goto out;
	}
	cJSON *jc = cJSON_AddArrayToObject(r, "collectives");
	for (int gi = 0; gi < ngroups; gi++) {
		rgroup *G = &groups[gi];
		int idx = -1;
		for (int m = 0; m < G->n; m++)
			if (G->member[m] == me)
				idx = m;
		if ((st = join_group(rdv, G, me, idx, &comm, wait_s, err)))
			goto out;
		for (int k = 0; k < NCOLL; k++) {
			char what[80];
			snprintf(what, sizeof what,
			         "NCCL %s, %s ranks:", pl_coll_name(coll_kind[k]),
			         G->link == PL_LINK_INTRA ? "intra-node" : "inter-node");
			if (me == 0)
				progress(o, what, G->n);
			double secs[MAXSIZES] = {0}, at[MAXSIZES];
			int n = 0;
			if ((st = time_sizes(&comm, stream, e0, e1, send, recv, G, idx, k, sizes,
			                     nsizes, wait_s, secs, at, &n, err)))
				goto out;
			/* the slowest member's time per size */
			if ((st = pl_rdv_gather(rdv, secs, all_secs, sizeof secs, err)))
				goto out;
			if (me != 0)
				continue;
			for (int i = 0; i < n; i++)
				for (int q = 1; q < world; q++)
					if (all_secs[(size_t)q * MAXSIZES + i] > secs[i])
						secs[i] = all_secs[(size_t)q * MAXSIZES + i];
			add_raw(jc, k, G->n, G->link == PL_LINK_INTRA ? "intra_node" : "inter_node",
			        at, secs, n);
			add_fit(out, k, G->link, G->n, at, secs, n);
		}
		comm_end(&comm, wait_s);
	}
	name_source(out, nodes, per_node);
out:
	if (comm && st) { /* a failure: the others may be gone */
		ncclCommAbort(comm);
		comm = NULL;
	}
	comm_end(&comm, wait_s);
	cudaFree(send);
	cudaFree(recv);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	if (stream)
		cudaStreamDestroy(stream);
	for (int gi = 0; groups && gi < ngroups; gi++)
		free(groups[gi].member);
	free(groups);
	free(all_secs);
	free(oks);
	free(node_of);
	if (!st && raw && me == 0)
		*raw = r;
	else
		cJSON_Delete(r);
	return st;
}
