/* Cluster presets and cluster.json. Every built-in number is documented with
 * its source in docs/cost-model.md; change both together. */
#include "costmodel/cluster.h"
#include "costmodel/attention.h"

#include "graph/graph.h"
#include "graph/json.h"
#include "graph/parse.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The GEMM curve of docs/cost-model.md, "Compute". Its ceiling is the
 * Maximum Achievable Matmul FLOPS (Bekman, ml-engineering,
 * compute/accelerator): 792.1 of H100 SXM's 989 TFLOP/s. Its shape is fitted,
 * with this roofline, to XLA's published table of cuBLAS bf16 GEMMs
 * measured on H100 SXM (375 shapes, batch 1-4, 256 to 4096 a side;
 * tests/fixtures/gemm/xla_sm90_bf16.csv) over its 155 shapes of 4 Mi output
 * elements or more (a wave of 128x256 tiles on 132 SMs; a training GEMM's
 * tokens x features): a latency (the half-rate point) of 0.95 us of work
 * at the ceiling, and 160 reduction steps an output element costs beyond its
 * own at 0.88 of peak (the tiles' prologue and epilogue, which short
 * reductions amortise worst). Other GPUs keep the latency, the steps and
 * the output term's ratio to the ceiling, and set the ceiling from their own
 * MAMF. */
#define GEMM_H100_MAX     0.801
#define GEMM_H100_K_MAX   0.88
#define GEMM_HALF_SECONDS 0.95e-6
#define GEMM_OUT_K        160

/* FP8 GEMMs on H100 SXM (docs/cost-model.md, "FP8 GEMMs"): dense peak
 * 1979 TFLOP/s (NVIDIA H100 datasheet); the asymptote is the marginal rate of
 * cuBLASLt's FP8 GEMMs (what Transformer Engine calls) on random data as
 * Azure publishes them for ND H100 v5, 16384^3 -> 32768^3: 1.383 PFLOP/s =
 * 0.699 of peak */
#define FP8_H100_PEAK 1.979e15
#define FP8_H100_MAX  0.699

static void gemm_curve(pl_cluster *c, double gemm_max, double k_max)
{
	c->gemm_out_k = GEMM_OUT_K;
	c->gemm_k_max = k_max;
	c->gemm_eff_max = gemm_max;
	/* whole FLOPs: a number cJSON writes with the digits that read it back
	 * (it prints 15 and takes one within an ulp for the same), so that a
	 * checkpoint's cluster prices its plan to the last bit */
	c->gemm_half_flops = round(GEMM_HALF_SECONDS * gemm_max * c->peak_flops[PL_DT_FLOAT16]);
}

static void common_defaults(pl_cluster *c)
{
	gemm_curve(c, GEMM_H100_MAX, GEMM_H100_K_MAX);
	c->vector_eff = 0.5;
	c->bw_eff = 0.80;            /* streaming kernels reach ~80% of HBM bandwidth */
	c->kernel_overhead_s = 5e-6; /* launch + tail per kernel */
}

static void h100(pl_cluster *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->device_name, sizeof c->device_name, "H100-SXM");
	c->memory_bytes = 85899345920.0; /* 80 GiB HBM3 */
	c->peak_flops[PL_DT_BFLOAT16] = PL_H100_PEAK_16;
	c->peak_flops[PL_DT_FLOAT16] = PL_H100_PEAK_16;
	c->peak_flops[PL_DT_FLOAT32] = 6.7e13;
	c->peak_flops[PL_DT_INT32] = 6.7e13;
	c->peak_flops[PL_DT_INT64] = 6.7e13;
	c->peak_flops[PL_DT_FLOAT64] = 6.7e13; /* FP64 Tensor Core */
	c->memory_bandwidth = 3.35e12;
	c->fp8_peak_flops = FP8_H100_PEAK;
	c->fp8_gemm_eff_max = FP8_H100_MAX;
	c->link[PL_LINK_INTRA] = (pl_ab){2.0e-5, 1.0 / 3.68e11}; /* nccl-tests, 8x H100 NVSwitch */
	c->link[PL_LINK_INTER] = (pl_ab){3.0e-5, 1.0 / 4.8e10};  /* 400 Gb/s NDR per GPU */
	common_defaults(c);
	/* fused attention: FlashAttention-3 reaches up to 75 % of peak in FP16
	 * (Shah et al. 2024), the GEMM curve's asymptote 0.782 */
	c->kernel_scale[PL_OP_ATTENTION] = GEMM_H100_MAX / 0.75;
	/* FlashAttention-2: PyTorch's SDPA flash backend, llm-foundry, Hugging
	 * Face; the measured rates of costmodel/attention_measured.csv */
	snprintf(c->attention_kernel, sizeof c->attention_kernel, "flash2");
	c->devices_per_node = 8;
	c->nodes = 1;
	c->memory_reserve = pl_cluster_gpu_reserve(c->memory_bytes);
	snprintf(c->source, sizeof c->source, "preset h100x8 (datasheet + recorded nccl-tests)");
}

/* The runtime's share of a GPU's memory that no tensor of the plan gets:
 * the CUDA context with cuBLAS workspaces (1 GiB), NCCL's buffers (0.5 GiB)
 * and the caching allocator's fragmentation (5 % of the memory). Sources and
 * reasoning: docs/cost-model.md, "Memory reserve". */
double pl_cluster_gpu_reserve(double memory_bytes)
{
	return 1.5 * 1073741824.0 + 0.05 * memory_bytes;
}

static void h200(pl_cluster *c)
{
	h100(c);
	snprintf(c->device_name, sizeof c->device_name, "H200-SXM");
	c->memory_bytes = 141e9; /* 141 GB HBM3e */
	c->memory_bandwidth = 4.8e12;
	c->memory_reserve = pl_cluster_gpu_reserve(c->memory_bytes);
	snprintf(c->source, sizeof c->source, "preset h200x8 (datasheet; links as h100x8)");
}

static void a100(pl_cluster *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->device_name, sizeof c->device_name, "A100-SXM4-40GB");
	c->memory_bytes = 42949672960.0;
	c->peak_flops[PL_DT_BFLOAT16] = PL_A100_PEAK_16;
	c->peak_flops[PL_DT_FLOAT16] = PL_A100_PEAK_16;
	c->peak_flops[PL_DT_FLOAT32] = 1.95e13;
	c->peak_flops[PL_DT_INT32] = 1.95e13;
	c->peak_flops[PL_DT_INT64] = 1.95e13;
	c->peak_flops[PL_DT_FLOAT64] = 1.95e13; /* FP64 Tensor Core */
	c->memory_bandwidth = 1.555e12;
	c->link[PL_LINK_INTRA] = (pl_ab){2.0e-5, 1.0 / 2.3e11}; /* nccl-tests, 8x A100 NVSwitch */
	c->link[PL_LINK_INTER] = (pl_ab){3.0e-5, 1.0 / 2.4e10}; /* 200 Gb/s HDR per GPU */
	common_defaults(c);
	/* MAMF (Bekman, ml-engineering): 267.9 of 312 TFLOP/s on A100 SXM; the
	 * output term's rate at H100's ratio to its ceiling, 0.859 x 0.88/0.801 */
	gemm_curve(c, 0.859, 0.944);
	/* fused attention: FlashAttention-2 reaches 50-73 % of A100's peak
	 * (Dao 2023): its best, against the GEMM curve's ceiling */
	c->kernel_scale[PL_OP_ATTENTION] = c->gemm_eff_max / 0.73;
	snprintf(c->attention_kernel, sizeof c->attention_kernel, "flash2");
	c->devices_per_node = 8;
	c->nodes = 1;
	c->memory_reserve = pl_cluster_gpu_reserve(c->memory_bytes);
	snprintf(c->source, sizeof c->source, "preset a100x8 (datasheet + recorded nccl-tests)");
}

/* DGX A100 80 GB: HBM2e at 2.039 TB/s; links as the 40 GB DGX (8x 200 Gb/s
 * HDR per node, NVSwitch) */
static void a100_80g(pl_cluster *c)
{
	a100(c);
	snprintf(c->device_name, sizeof c->device_name, "A100-SXM4-80GB");
	c->memory_bytes = 85899345920.0;
	c->memory_bandwidth = 2.039e12;
	c->memory_reserve = pl_cluster_gpu_reserve(c->memory_bytes);
	snprintf(c->source, sizeof c->source,
	         "preset a100-80gx8 (datasheet + recorded nccl-tests)");
}

static void v100(pl_cluster *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->device_name, sizeof c->device_name, "V100-SXM3-32GB");
	c->memory_bytes = 34359738368.0;
	c->peak_flops[PL_DT_FLOAT16] = 1.25e14;
	c->peak_flops[PL_DT_BFLOAT16] = 1.57e13; /* no bf16 tensor cores */
	c->peak_flops[PL_DT_FLOAT32] = 1.57e13;
	c->peak_flops[PL_DT_INT32] = 1.57e13;
	c->peak_flops[PL_DT_INT64] = 1.57e13;
	c->peak_flops[PL_DT_FLOAT64] = 7.8e12;
	c->memory_bandwidth = 9.0e11;
	c->link[PL_LINK_INTRA] = (pl_ab){2.0e-5, 1.0 / 1.3e11}; /* NVSwitch, 6 NVLink2 */
	c->link[PL_LINK_INTER] = (pl_ab){3.0e-5, 1.0 / 1.2e10}; /* 100 Gb/s EDR per GPU */
	common_defaults(c);
	c->devices_per_node = 16;
	c->nodes = 1;
	c->memory_reserve = pl_cluster_gpu_reserve(c->memory_bytes);
	snprintf(c->source, sizeof c->source, "preset dgx2-v100 (datasheet)");
}

/* The cpu backend on the 2-core Intel Xeon VM the project is developed on,
 * one rank per core: `planner calibrate --backend cpu --ranks 2`, 2026-11-21
 * (recorded in tests/fixtures/cluster/cpu-x2-calibrated.json; a test holds
 * the preset to it). Other machines: calibrate. */
static void cpu2(pl_cluster *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->device_name, sizeof c->device_name, "Intel Xeon core (cpu backend, fp32)");
	c->memory_bytes = 12638251008.0; /* the host's memory over 2 ranks */
	for (int d = 0; d < PL_DT_COUNT; d++)
		c->peak_flops[d] = 8.87e10; /* every dtype runs in fp32 */
	c->gemm_eff_max = 1;
	c->gemm_half_flops = 4.19e4;
	c->vector_eff = 5.62e-3; /* 0.50 GFLOP/s of Gelu/Softmax/LayerNorm */
	c->memory_bandwidth = 2.39e9;
	c->bw_eff = 1;
	c->kernel_overhead_s = 2.0e-8;
	static const struct {
		pl_coll coll;
		double alpha, beta;
	} fit[] = {{PL_COLL_ALL_REDUCE, 1.07e-5, 3.36e-10},
	           {PL_COLL_ALL_GATHER, 9.88e-6, 1.00e-10},
	           {PL_COLL_REDUCE_SCATTER, 1.14e-5, 1.99e-10},
	           {PL_COLL_ALL_TO_ALL, 1.09e-5, 1.17e-10}};
	for (size_t i = 0; i < sizeof fit / sizeof *fit; i++)
		c->coll[fit[i].coll][PL_LINK_INTRA] =
		    (pl_ab_list){.n = 1, .ranks = {2}, .ab = {{fit[i].alpha, fit[i].beta}}};
	c->link[PL_LINK_INTRA] = c->link[PL_LINK_INTER] = (pl_ab){1.07e-5, 3.36e-10};
	c->devices_per_node = 2;
	c->nodes = 1;
	snprintf(c->source, sizeof c->source,
	         "preset cpu (planner calibrate --backend cpu --ranks 2 on a 2-core Xeon VM)");
}

/* The presets: the one list of their names (help texts, messages, the API's
 * documentation and the docs are tested against it: tests/costmodel/test_cost.c
 * and test_cli) and the GPUs each stands for in pl_cluster_preset_for_gpu. */
static const struct {
	const char *name;
	void (*fill)(pl_cluster *c);
} presets[] = {{"h100x8", h100},         {"h200x8", h200},       {"a100x8", a100},
               {"a100-80gx8", a100_80g}, {"dgx2-v100", v100},    {"cpu", cpu2}};

int pl_cluster_npresets(void)
{
	return (int)(sizeof presets / sizeof *presets);
}

const char *pl_cluster_preset_name(int i)
{
	return i >= 0 && i < pl_cluster_npresets() ? presets[i].name : NULL;
}

/* "h100x8, h200x8, ..., cpu" */
static void preset_list(char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < pl_cluster_npresets() && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", presets[i].name);
}

/* The preset base names: an exact name, or an "x8" preset's name with
 * another count of GPUs a node after its 'x' (h100x4: one node of 4 H100s,
 * the preset's GPU and links; *per_node set). -1: no preset; -2: an x8
 * preset's name with a count that is not 1 to PL_MAX_DEVICES. */
static int preset_index(const char *base, long long *per_node)
{
	for (int p = 0; p < pl_cluster_npresets(); p++)
		if (!strcmp(base, presets[p].name))
			return p;
	const char *x = strrchr(base, 'x');
	if (!x || !isdigit((unsigned char)x[1]))
		return -1;
	for (int p = 0; p < pl_cluster_npresets(); p++) {
		const char *px = strrchr(presets[p].name, 'x');
		if (!px || strcmp(px, "x8") ||
		    (size_t)(px - presets[p].name) != (size_t)(x - base) ||
		    strncmp(base, presets[p].name, (size_t)(x - base)))
			continue;
		char *end;
		errno = 0;
		long long g = strtoll(x + 1, &end, 10);
		if (errno || *end || g < 1 || g > PL_MAX_DEVICES)
			return -2;
		*per_node = g;
		return p;
	}
	return -1;
}

pl_status pl_cluster_preset(pl_cluster *c, const char *name, pl_err *err)
{
	char base[64];
	const char *colon = strchr(name, ':');
	size_t n = colon ? (size_t)(colon - name) : strlen(name);
	if (n >= sizeof base)
		n = sizeof base - 1;
	memcpy(base, name, n);
	base[n] = 0;
	long long nodes = 1;
	if (colon) {
		char *end;
		errno = 0;
		nodes = strtoll(colon + 1, &end, 10);
		if (errno || *end || nodes < 1 || nodes > 1000000)
			return pl_err_set(
			    err, PL_EINVAL,
			    "--cluster %s: the node count after ':' must be an integer from 1 "
			    "to 1000000",
			    name);
	}
	long long per_node = 0; /* 0: the preset's own */
	int p = preset_index(base, &per_node);
	if (p == -2)
		return pl_err_set(err, PL_EINVAL,
		                  "--cluster %s: the GPUs a node after 'x' must be an integer "
		                  "from 1 to %d",
		                  name, PL_MAX_DEVICES);
	if (p < 0) {
		char list[256];
		preset_list(list, sizeof list);
		return pl_err_set(err, PL_EINVAL,
		                  "--cluster %s: not a file and not a preset (presets: %s, each "
		                  "optionally ':NODES'; an x8 preset with another count of GPUs "
		                  "a node, as h100x4)",
		                  name, list);
	}
	presets[p].fill(c);
	if (per_node)
		c->devices_per_node = per_node;
	if (nodes * c->devices_per_node > PL_MAX_DEVICES)
		return pl_err_set(err, PL_EINVAL,
		                  "--cluster %s: at most %d devices (%lld nodes of %lld)", name,
		                  PL_MAX_DEVICES, nodes, (long long)c->devices_per_node);
	c->nodes = nodes;
	snprintf(c->name, sizeof c->name, "%s", name);
	return PL_OK;
}

const char *pl_cluster_preset_for_gpu(const char *device)
{
	static const struct {
		const char *key, *preset;
	} families[] = {{"H100", "h100x8"},          {"H200", "h200x8"},
	                {"H800", "h100x8"},          {"A100-SXM4-80GB", "a100-80gx8"},
	                {"A100 80GB", "a100-80gx8"}, {"A100-80GB", "a100-80gx8"},
	                {"A100", "a100x8"},          {"A800", "a100x8"},
	                {"V100", "dgx2-v100"}};
	for (size_t i = 0; i < sizeof families / sizeof *families; i++)
		if (strstr(device, families[i].key))
			return families[i].preset;
	return NULL;
}

pl_status pl_cluster_devices(pl_cluster *c, int64_t devices, pl_err *err)
{
	if (devices < 1 || devices > PL_MAX_DEVICES)
		return pl_err_set(err, PL_EINVAL,
		                  "--devices %lld: expected a device count from 1 to %d",
		                  (long long)devices, PL_MAX_DEVICES);
	h100(c);
	c->devices_per_node = devices;
	c->nodes = 1;
	snprintf(c->name, sizeof c->name, "h100x%lld", (long long)devices);
	return PL_OK;
}

pl_status pl_cluster_set_reserve(pl_cluster *c, double reserve, const char *what, pl_err *err)
{
	if (!(reserve >= 0) || reserve >= c->memory_bytes)
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s %.0f: expected from 0 to less than the device memory %.0f bytes", what,
		    reserve, c->memory_bytes);
	c->memory_reserve = reserve;
	return PL_OK;
}

int64_t pl_cluster_devices_total(const pl_cluster *c)
{
	return c->nodes * c->devices_per_node;
}

pl_status pl_cluster_set_attention(pl_cluster *c, const char *kernel, const char *what, pl_err *err)
{
	if (*kernel &&
	    (strlen(kernel) >= sizeof c->attention_kernel || !pl_attention_kernel_known(kernel)))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: '%s': expected an attention kernel of the measured table "
		                  "(flash1, flash2, flash3, cudnn, triton, flash_triton, xformers) "
		                  "or none (\"\" in a cluster file)",
		                  what, kernel);
	snprintf(c->attention_kernel, sizeof c->attention_kernel, "%s", kernel);
	return PL_OK;
}

/* A two-way choice of the training program: *flag = 1 for `one`, 0 for
 * `zero`; anything else PL_EINVAL with what, the value and `expect` */
static pl_status set_choice(int *flag, const char *v, const char *zero, const char *one,
                            const char *expect, const char *what, pl_err *err)
{
	if (strcmp(v, zero) && strcmp(v, one))
		return pl_err_set(err, PL_EINVAL, "%s: '%s': expected %s", what, v, expect);
	*flag = !strcmp(v, one);
	return PL_OK;
}

/* The two-way choices of the training program: pl_cluster_set_NAME (through
 * set_choice) and pl_cluster_NAME_name for each, declared in cluster.h */
#define TWO_WAY(name, field, zero, one, expect)                                                    \
	pl_status pl_cluster_set_##name(pl_cluster *c, const char *v, const char *what,            \
	                                pl_err *err)                                               \
	{                                                                                          \
		return set_choice(&c->field, v, zero, one, expect, what, err);                     \
	}                                                                                          \
	const char *pl_cluster_##name##_name(const pl_cluster *c)                                  \
	{                                                                                          \
		return c->field ? one : zero;                                                      \
	}
TWO_WAY(loss, loss_fused, "unfused", "fused",
        "fused (one kernel, the logits in their dtype) or unfused (PyTorch's "
        "cross_entropy, in fp32)")
TWO_WAY(loss_parallel, loss_gathered, "vocab", "gathered",
        "vocab (each tensor-parallel rank computes the loss on its slice of "
        "the vocabulary) or gathered (the logits all-gathered, the whole loss "
        "on every rank)")
TWO_WAY(grad_reduce, grad_fp32_allreduce, "as-grad", "fp32-all-reduce",
        "as-grad (the gradients reduced in their dtype, reduce-scattered "
        "under ZeRO 1) or fp32-all-reduce (cast to fp32 and all-reduced "
        "whole, under ZeRO 1 too)")
TWO_WAY(grad_accumulation, grad_acc_autograd, "fused", "autograd",
        "fused (each micro-batch's weight gradients added in the GEMM that "
        "makes them, or into ZeRO 2/3's shards) or autograd (a kernel of its "
        "own a param, as PyTorch's AccumulateGrad)")
TWO_WAY(param_shard, param_shard_fp32, "param", "fp32",
        "param (ZeRO 3 keeps a 16-bit param's shard beside its fp32 master's: "
        "DeepSpeed, Megatron FSDP) or fp32 (the fp32 master's shard alone, cast "
        "when gathered: PyTorch FSDP's mixed precision)")
TWO_WAY(norm, norm_unfused, "fused", "unfused",
        "fused (one kernel each way) or unfused (eager PyTorch's composite ops)")
TWO_WAY(mask, mask_unfused, "fused", "unfused",
        "fused (a softmax's mask applied in the softmax kernel) or unfused "
        "(eager PyTorch's masked_fill or add, a kernel of its own each way)")
TWO_WAY(stage_output, output_buffered, "freed", "buffered",
        "freed (the model's output given back after the loss) or buffered "
        "(a pipeline buffer keeps the last two micro-batches' outputs)")
TWO_WAY(batch_norm, bn_local, "sync", "local",
        "sync (statistics all-reduced over the ranks that cut the batch: "
        "SyncBatchNorm) or local (each rank's own, as DDP's BatchNorm)")
#undef TWO_WAY

int pl_memory_at_risk(double peak_bytes, double limit_bytes)
{
	return limit_bytes > 0 && peak_bytes * PL_MEM_BAND_HI > limit_bytes;
}

void pl_memory_band_basis(char *basis, size_t n)
{
	snprintf(basis, n, "90 %% of %d published runs measured at most %.2fx the predicted peak",
	         PL_MEM_BAND_RUNS, PL_MEM_BAND_HI);
}

double pl_cluster_seen_tflops(const pl_cluster *c, const char **family, const char **gemm)
{
	static const struct {
		const char *name, *family;
		double tflops[2]; /* 16-bit, FP8 GEMMs */
	} seen[] = {
	    {"A100", "A100", {PL_SEEN_TFLOPS_A100_16, 0}},
	    {"A800", "A100", {PL_SEEN_TFLOPS_A100_16, 0}},
	    {"H100", "H100", {PL_SEEN_TFLOPS_H100_16, PL_SEEN_TFLOPS_H100_FP8}},
	    {"H800", "H100", {PL_SEEN_TFLOPS_H100_16, PL_SEEN_TFLOPS_H100_FP8}},
	    {"H200", "H200", {PL_SEEN_TFLOPS_H200_16, PL_SEEN_TFLOPS_H200_FP8}},
	};
	int f8 = c->gemm_fp8 != 0;
	for (size_t i = 0; i < sizeof seen / sizeof *seen; i++)
		if (strstr(c->device_name, seen[i].name) && seen[i].tflops[f8] > 0) {
			*family = seen[i].family;
			*gemm = f8 ? "FP8" : "16-bit";
			return seen[i].tflops[f8];
		}
	return 0;
}

void pl_cluster_step_band(const pl_cluster *c, double step, double *lo, double *hi, char *basis,
                          size_t n)
{
	if (c && c->fit_loo > 0 && c->fit_loo < 1) {
		*lo = step * (1 - c->fit_loo);
		*hi = step * (1 + c->fit_loo);
		snprintf(basis, n,
		         "calibrated: the fit to your runs predicts them within %.1f %% on average "
		         "(leave-one-out)",
		         100 * c->fit_loo);
		return;
	}
	*lo = step * PL_BAND_LO;
	*hi = step * PL_BAND_HI;
	snprintf(basis, n,
	         "uncalibrated: 80 %% of %d published GPU training runs measured %.2f-%.2fx the "
	         "prediction; "
	         "planner calibrate --from-runs narrows it",
	         PL_BAND_RUNS, PL_BAND_LO, PL_BAND_HI);
}

/* The index of v among the n names; -1 (err: what, v and expect) when it is
 * none of them */
static int name_index(const char *const *names, int n, const char *v, const char *expect,
                      const char *what, pl_err *err)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v, names[i]))
			return i;
	pl_err_set(err, PL_EINVAL, "%s: '%s': expected %s", what, v, expect);
	return -1;
}

static const char *const grad_dtype_names[PL_GRAD_DTYPES] = {
    [PL_GRAD_FP32] = "fp32", [PL_GRAD_PARAM] = "param", [PL_GRAD_PARAM_FP32] = "param+fp32"};

pl_status pl_cluster_set_grad_dtype(pl_cluster *c, const char *dtype, const char *what, pl_err *err)
{
	int i = name_index(grad_dtype_names, PL_GRAD_DTYPES, dtype,
	                   "fp32 (16-bit params' gradients accumulated and reduced in fp32), param "
	                   "(in the params' own dtype) or param+fp32 (in the params' dtype, added "
	                   "into a whole fp32 gradient that is reduced)",
	                   what, err);
	if (i >= 0)
		c->grad_dtype = (pl_grad_dtype)i;
	return i >= 0 ? PL_OK : PL_EINVAL;
}

const char *pl_cluster_grad_dtype_name(const pl_cluster *c)
{
	return grad_dtype_names[c->grad_dtype];
}

static const char *const cp_exchange_names[PL_CP_EXCHANGES] = {
    [PL_CP_RING] = "ring",
    [PL_CP_ALLGATHER] = "allgather",
    [PL_CP_ALLGATHER_SYNC] = "allgather-sync",
};

pl_status pl_cluster_set_cp_exchange(pl_cluster *c, const char *how, const char *what, pl_err *err)
{
	int i = name_index(cp_exchange_names, PL_CP_EXCHANGES, how,
	                   "ring (K/V chunks passed round the ranks beside each block's kernel: "
	                   "Transformer Engine's p2p), allgather (all-gathered beside the first "
	                   "block: PyTorch's context_parallel, torchtitan) or allgather-sync "
	                   "(all-gathered before the attention: Transformer Engine's all_gather)",
	                   what, err);
	if (i >= 0)
		c->cp_exchange = (pl_cp_exchange)i;
	return i >= 0 ? PL_OK : PL_EINVAL;
}

const char *pl_cluster_cp_exchange_name(const pl_cluster *c)
{
	return cp_exchange_names[c->cp_exchange];
}

static const char *const gemm_dtype_names[PL_GEMM_DTYPES] = {
    [PL_GEMM_PARAM] = "param",
    [PL_GEMM_FP8] = "fp8",
    [PL_GEMM_FP8_TENSORWISE] = "fp8-tensorwise",
    [PL_GEMM_FP8_ROWWISE] = "fp8-rowwise",
};

pl_status pl_cluster_set_gemm_dtype(pl_cluster *c, const char *dtype, const char *what,
                                    pl_err *err)
{
	int i = name_index(gemm_dtype_names, PL_GEMM_DTYPES, dtype,
	                   "param (linear layers' GEMMs in the params' own dtype), fp8 (in FP8 "
	                   "with Transformer Engine's delayed scaling), fp8-tensorwise or "
	                   "fp8-rowwise (torchao's Float8 with dynamic tensorwise or rowwise "
	                   "scaling)",
	                   what, err);
	if (i >= 0)
		c->gemm_fp8 = i;
	return i >= 0 ? PL_OK : PL_EINVAL;
}

const char *pl_cluster_gemm_dtype_name(const pl_cluster *c)
{
	return pl_gemm_dtype_name(c->gemm_fp8);
}

int pl_gemm_dtype_parse(const char *name)
{
	return name_index(gemm_dtype_names, PL_GEMM_DTYPES, name, "", "", NULL);
}

const char *pl_gemm_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < PL_GEMM_DTYPES ? gemm_dtype_names[dtype] : NULL;
}

pl_status pl_cluster_check(const pl_cluster *c, const char *what, pl_err *err)
{
	if (c->gemm_fp8 && !(c->fp8_peak_flops > 0))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: %s: the cluster's device %s has no FP8 tensor cores (FP8 "
		                  "GEMMs need Hopper or newer: H100, H200); use param",
		                  what, pl_cluster_gemm_dtype_name(c),
		                  c->device_name[0] ? c->device_name : "(unnamed)");
	return PL_OK;
}

double pl_bus_factor(pl_coll coll, int64_t n)
{
	if (n <= 1)
		return 0;
	/* every collective named (no default:): a new one is a compiler warning
	 * here, never silently priced as another (NCCL's busBw factors,
	 * nccl-tests' doc/PERFORMANCE.md) */
	switch (coll) {
	case PL_COLL_ALL_REDUCE: return 2.0 * (double)(n - 1) / (double)n;
	case PL_COLL_SEND_RECV: return 1.0;
	case PL_COLL_ALL_GATHER:
	case PL_COLL_REDUCE_SCATTER:
	case PL_COLL_ALL_TO_ALL: return (double)(n - 1) / (double)n;
	case PL_COLL_COUNT: break;
	}
	return 0; /* not a collective */
}

pl_ab pl_cluster_ab(const pl_cluster *c, pl_coll coll, int link, int64_t n, double bytes)
{
	const pl_ab_list *l = &c->coll[coll][link];
	if (l->n == 0)
		return c->link[link];
	int64_t ranks = l->ranks[0], bestd = INT64_MAX;
	for (int i = 0; i < l->n; i++) {
		int64_t d = l->ranks[i] == 0 ? INT64_MAX - 1 : llabs(l->ranks[i] - n);
		if (d < bestd) {
			bestd = d;
			ranks = l->ranks[i];
		}
	}
	/* of the lines for that group size: the tightest range holding bytes,
	 * else the widest one */
	int best = -1, widest = -1;
	double best_lim = INFINITY, widest_lim = 0;
	for (int i = 0; i < l->n; i++) {
		if (l->ranks[i] != ranks)
			continue;
		double lim = l->max_bytes[i] > 0 ? l->max_bytes[i] : INFINITY;
		if (widest < 0 || lim > widest_lim) {
			widest = i;
			widest_lim = lim;
		}
		if (lim >= bytes && (best < 0 || lim < best_lim)) {
			best = i;
			best_lim = lim;
		}
	}
	return l->ab[best >= 0 ? best : widest];
}

double pl_cluster_coll_time(const pl_cluster *c, pl_coll coll, int link, int64_t n, double bytes)
{
	if (n <= 1)
		return 0;
	pl_ab ab = pl_cluster_ab(c, coll, link, n, bytes);
	double rate = pl_fit(c->fit_comm) * (link == PL_LINK_INTER ? pl_fit(c->fit_comm_inter) : 1);
	return (ab.alpha + bytes * pl_bus_factor(coll, n) * ab.beta) / rate;
}

/* NCCL's tuning model for a ring with the Simple protocol (the one NCCL
 * runs large messages with): a collective's latency is its base latency plus
 * one hop latency a step of the ring, a network hop's across nodes
 * (src/graph/tuning.cc, ncclTunerConstantsDefaults: baseLatencies Ring
 * Simple 8.4 us; hwLatencies NVLINK Ring Simple 3.4 us, NET Ring Simple 14 us;
 * ncclTopoTuneModel: 2(n - 1) steps for all-reduce, n - 1 for all-gather and
 * reduce-scatter, of which 2(m - 1) or m - 1 cross nodes, and with m > 1 nodes
 * an in-node step costs at least 3 network post overheads of 1 us). */
#define RING_BASE_US   8.4
#define RING_NVLINK_US 3.4
#define RING_NET_US    14.0
#define NET_POST_US    (3 * 1.0)

double pl_cluster_ring_latency(pl_coll coll, int64_t n, int64_t m)
{
	if (n <= 1)
		return 0;
	int ar = coll == PL_COLL_ALL_REDUCE;
	int64_t steps = ar ? 2 * (n - 1) : n - 1, across = m <= 1 ? 0 : ar ? 2 * (m - 1) : m - 1;
	double in_node = m > 1 ? fmax(RING_NVLINK_US, NET_POST_US) : RING_NVLINK_US;
	return (RING_BASE_US + (double)(steps - across) * in_node + (double)across * RING_NET_US) *
	       1e-6;
}

/* A collective of S bytes over n ranks, k in each node, across nodes: the
 * slower of the two links each rank drives at once, its NIC with nic_traffic
 * bytes (the inter-node line looked up at nic_size) and its NVLink with
 * nvl_traffic (the intra-node line for k ranks at S), after a latency (NAN:
 * the inter-node line's alpha) */
static double busiest_link(const pl_cluster *c, pl_coll coll, int64_t n, int64_t k, double S,
                           double nic_size, double nic_traffic, double nvl_traffic,
                           double latency)
{
	pl_ab nic = pl_cluster_ab(c, coll, PL_LINK_INTER, n, nic_size),
	      nvl = pl_cluster_ab(c, coll, PL_LINK_INTRA, k, S);
	double t_nic = nic_traffic * nic.beta / pl_fit(c->fit_comm_inter),
	       t_nvl = nvl_traffic * nvl.beta;
	return ((isnan(latency) ? nic.alpha : latency) + (t_nic > t_nvl ? t_nic : t_nvl)) /
	       pl_fit(c->fit_comm);
}

double pl_cluster_ring_time(const pl_cluster *c, pl_coll coll, int64_t n, int64_t k, double bytes)
{
	if (n <= 1 || k <= 1 || n % k || n == k)
		return pl_cluster_coll_time(c, coll, PL_LINK_INTER, n, bytes);
	double f = pl_bus_factor(coll, n);
	return busiest_link(c, coll, n, k, bytes, bytes / (double)k, bytes / (double)k * f, bytes * f,
	                    pl_cluster_ring_latency(coll, n, n / k));
}

int pl_cluster_measured_at(const pl_cluster *c, pl_coll coll, int link, int64_t n)
{
	const pl_ab_list *l = &c->coll[coll][link];
	for (int i = 0; i < l->n; i++)
		if (l->ranks[i] == n)
			return 1;
	return 0;
}

double pl_cluster_alltoall_time(const pl_cluster *c, int64_t n, int64_t k, double bytes)
{
	if (n <= 1 || k <= 1 || n % k || n == k)
		return pl_cluster_coll_time(c, PL_COLL_ALL_TO_ALL, PL_LINK_INTER, n, bytes);
	return busiest_link(c, PL_COLL_ALL_TO_ALL, n, k, bytes, bytes,
	                    (double)(n - k) / (double)n * bytes,
	                    (double)(k - 1) / (double)n * bytes, NAN);
}

/* ---- cluster.json ---- */

#define FAIL(...) pl_err_set(err, PL_EINVAL, __VA_ARGS__)
#define NUM_MAX   1e18 /* an exabyte, an exaFLOP/s: no device's number is larger */

/* o.key into *out: a finite number from min to max */
static pl_status num_in(const cJSON *o, const char *key, double *out, int required, double min,
                        double max, const char *file, const char *where, pl_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v) {
		if (required)
			return FAIL("%s: %s%s: missing; expected a number", file, where, key);
		return PL_OK;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min ||
	    v->valuedouble > max)
		return isinf(max)
		           ? FAIL("%s: %s%s: expected a finite number >= %g", file, where, key, min)
		           : FAIL("%s: %s%s: expected a finite number from %g to %g", file, where,
		                  key, min, max);
	*out = v->valuedouble;
	return PL_OK;
}

/* A quantity (bytes, FLOP/s, bytes/s, seconds): below 1e18, so that a file
 * written back reads back. Efficiencies are fractions: num_in to 1. */
static pl_status num(const cJSON *o, const char *key, double *out, int required, double min,
                     const char *file, const char *where, pl_err *err)
{
	return num_in(o, key, out, required, min, NUM_MAX, file, where, err);
}

/* A count: an integer from min to max (bounds documented in docs/formats.md). */
static pl_status count(const cJSON *o, const char *key, double *out, int required, double min,
                       double max, const char *file, const char *where, pl_err *err)
{
	pl_status st = num_in(o, key, out, required, min, HUGE_VAL, file, where, err);
	if (st)
		return st;
	if (*out > max || *out != floor(*out))
		return FAIL("%s: %s%s: expected an integer from %.0f to %.0f", file, where, key,
		            min, max);
	return PL_OK;
}

static const char *const link_keys[PL_LINK_COUNT] = {"intra_node", "inter_node"};

const char *pl_link_name(int link)
{
	return link >= 0 && link < PL_LINK_COUNT ? link_keys[link] : "?";
}

/* Every key of object o must be one of known[0..n): a typo is an error that
 * names the key and the nearest known one, never a silent default. */
static pl_status check_keys(const cJSON *o, const char *const *known, int n, const char *file,
                            const char *where, pl_err *err)
{
	const cJSON *e;
	cJSON_ArrayForEach (e, o) {
		int k = 0;
		while (k < n && strcmp(e->string, known[k]))
			k++;
		if (k < n)
			continue;
		char list[512] = "";
		size_t len = 0;
		for (int j = 0; j < n && len < sizeof list; j++)
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
			                        j ? ", " : "", known[j]);
		return FAIL("%s: %s%s: unknown key (did you mean '%s'?); expected one of %s", file,
		            where, e->string, pl_nearest_word(e->string, known, n), list);
	}
	return PL_OK;
}
#define CHECK_KEYS(o, where, ...)                                                                  \
	do {                                                                                       \
		static const char *const known_[] = {__VA_ARGS__};                                 \
		pl_status s_ = check_keys(o, known_, (int)(sizeof known_ / sizeof *known_), file,  \
		                          where, err);                                             \
		if (s_)                                                                            \
			return s_;                                                                 \
	} while (0)

static pl_status parse_ab(const cJSON *v, pl_ab_list *l, const char *file, const char *where,
                          pl_err *err)
{
	char w[256];
	if (cJSON_IsObject(v)) {
		char wd[256];
		snprintf(wd, sizeof wd, "%s.", where);
		CHECK_KEYS(v, wd, "alpha", "beta");
		l->n = 1;
		l->ranks[0] = 0;
		l->max_bytes[0] = 0;
		pl_status st;
		if ((st = num(v, "alpha", &l->ab[0].alpha, 1, 0, file, where, err)) ||
		    (st = num(v, "beta", &l->ab[0].beta, 1, 0, file, where, err)))
			return st;
		return PL_OK;
	}
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > PL_MAX_AB_SIZES)
		return FAIL("%s: %s: expected {\"alpha\", \"beta\"} or a list of at most %d "
		            "{\"ranks\", \"alpha\", \"beta\"[, \"max_bytes\"]}",
		            file, where, PL_MAX_AB_SIZES);
	const cJSON *e;
	l->n = 0;
	cJSON_ArrayForEach (e, v) {
		snprintf(w, sizeof w, "%s[%d].", where, l->n);
		if (!cJSON_IsObject(e))
			return FAIL("%s: %s[%d]: expected {\"ranks\", \"alpha\", \"beta\"[, "
			            "\"max_bytes\"]}",
			            file, where, l->n);
		CHECK_KEYS(e, w, "ranks", "alpha", "beta", "max_bytes");
		double ranks = 0;
		pl_status st;
		l->max_bytes[l->n] = 0;
		if ((st = count(e, "ranks", &ranks, 1, 2, PL_MAX_DEVICES, file, w, err)) ||
		    (st = num(e, "alpha", &l->ab[l->n].alpha, 1, 0, file, w, err)) ||
		    (st = num(e, "beta", &l->ab[l->n].beta, 1, 0, file, w, err)) ||
		    (st = num(e, "max_bytes", &l->max_bytes[l->n], 0, 1, file, w, err)))
			return st;
		l->ranks[l->n++] = (int64_t)ranks;
	}
	return PL_OK;
}

/* device.kernel_scale (absent: every op type 1, whatever the defaults
 * held): {op type: a positive finite factor}, an unknown type named with the
 * nearest known one */
static pl_status parse_kernel_scale(pl_cluster *c, const cJSON *ks, const char *file, pl_err *err)
{
	memset(c->kernel_scale, 0, sizeof c->kernel_scale);
	if (!ks)
		return PL_OK;
	if (!cJSON_IsObject(ks))
		return FAIL("%s: device.kernel_scale: expected an object of op type: factor", file);
	const cJSON *e;
	cJSON_ArrayForEach (e, ks) {
		pl_optype t;
		if (pl_optype_parse(e->string, &t)) {
			const char *names[PL_OP_COUNT];
			for (int k = 0; k < PL_OP_COUNT; k++)
				names[k] = pl_optype_name((pl_optype)k);
			return FAIL(
			    "%s: device.kernel_scale.%s: not an op type (did you mean '%s'?)", file,
			    e->string, pl_nearest_word(e->string, names, PL_OP_COUNT));
		}
		if (!cJSON_IsNumber(e) || !(e->valuedouble > 0) || !isfinite(e->valuedouble))
			return FAIL("%s: device.kernel_scale.%s: expected a positive finite number",
			            file, e->string);
		for (int k = 0; k < PL_OP_COUNT; k++) /* every type of that name */
			if (!strcmp(pl_optype_name((pl_optype)k), e->string))
				c->kernel_scale[k] = e->valuedouble;
	}
	return PL_OK;
}

/* device.peak_flops: FLOP/s per dtype, and float8's (FP8 tensor cores) */
static pl_status parse_peak_flops(pl_cluster *c, const cJSON *pf, const char *file, pl_err *err)
{
	if (!pf)
		return PL_OK;
	if (!cJSON_IsObject(pf))
		return FAIL("%s: device.peak_flops: expected an object of dtype: "
		            "FLOP/s",
		            file);
	const cJSON *e;
	cJSON_ArrayForEach (e, pf) {
		pl_dtype dt;
		if (!strcmp(e->string, "float8")) { /* FP8 tensor cores */
			if (!cJSON_IsNumber(e) ||
			    !(e->valuedouble >= 0 && e->valuedouble <= NUM_MAX))
				return FAIL("%s: device.peak_flops.float8: expected a "
				            "number from 0 (no FP8 tensor cores) to %g",
				            file, NUM_MAX);
			c->fp8_peak_flops = e->valuedouble;
			continue;
		}
		if (pl_dtype_parse(e->string, &dt))
			return FAIL("%s: device.peak_flops.%s: not a dtype", file, e->string);
		if (!cJSON_IsNumber(e) || !(e->valuedouble > 0 && e->valuedouble <= NUM_MAX))
			return FAIL("%s: device.peak_flops.%s: expected a positive "
			            "number up to %g",
			            file, e->string, NUM_MAX);
		c->peak_flops[dt] = e->valuedouble;
	}
	/* a file written before float64 was a dtype: its float32 rate (the
	 * GPUs' FP64 tensor cores run at their FP32 rate; V100 at half) */
	const cJSON *f32 = cJSON_GetObjectItemCaseSensitive(pf, "float32");
	if (f32 && !cJSON_GetObjectItemCaseSensitive(pf, "float64"))
		c->peak_flops[PL_DT_FLOAT64] = c->peak_flops[PL_DT_FLOAT32];
	return PL_OK;
}

/* what a training-metric count must be, said by the option and the cluster file alike */
#define LOSS_METRICS_EXPECT "expected a count of training-metric cross-entropies, 0 to %d"

/* v is a count of training metrics: whole, 0 to PL_LOSS_METRICS_MAX */
static int loss_metrics_ok(double v)
{
	return v >= 0 && v <= PL_LOSS_METRICS_MAX && v == (int)v;
}

pl_status pl_cluster_set_loss_metrics(pl_cluster *c, const char *count, const char *what,
                                      pl_err *err)
{
	char *end;
	errno = 0;
	long n = strtol(count, &end, 10);
	if (end == count || *end || errno || !loss_metrics_ok((double)n))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: '%s': " LOSS_METRICS_EXPECT " (llm-foundry's MPT under Composer: 2)",
		                  what, count, PL_LOSS_METRICS_MAX);
	c->loss_metrics = (int)n;
	return PL_OK;
}

/* device: its memory and reserve, bandwidth, efficiencies, kernel scales,
 * the training program's kernels and its peak FLOP/s */
static pl_status parse_device(pl_cluster *c, const cJSON *dev, const char *file, pl_err *err)
{
	pl_status st;
	const cJSON *v;
	if (!dev)
		return PL_OK;
	if (!cJSON_IsObject(dev))
		return FAIL("%s: device: expected an object", file);
	CHECK_KEYS(dev, "device.", "name", "memory_bytes", "memory_bandwidth", "peak_flops",
	           "gemm_efficiency", "vector_efficiency", "bandwidth_efficiency",
	           "kernel_overhead", "memory_reserve_bytes", "kernel_scale", "attention_kernel",
	           "loss_kernel", "loss_parallel", "grad_dtype", "grad_reduce", "grad_accumulation",
	           "param_shard", "norm_kernel", "mask_kernel", "batch_norm", "stage_output",
	           "gemm_dtype", "cp_exchange", "loss_metrics");
	v = cJSON_GetObjectItemCaseSensitive(dev, "name");
	if (cJSON_IsString(v))
		snprintf(c->device_name, sizeof c->device_name, "%s", v->valuestring);
	/* the reserve follows the memory unless given */
	if ((st = num(dev, "memory_bytes", &c->memory_bytes, 0, 1, file, "device.", err)))
		return st;
	c->memory_reserve = pl_cluster_gpu_reserve(c->memory_bytes);
	if ((st = num(dev, "memory_reserve_bytes", &c->memory_reserve, 0, 0, file, "device.", err)))
		return st;
	char wr[300];
	snprintf(wr, sizeof wr, "%s: device.memory_reserve_bytes", file);
	if ((st = pl_cluster_set_reserve(c, c->memory_reserve, wr, err)))
		return st;
	if ((st = num(dev, "memory_bandwidth", &c->memory_bandwidth, 0, 1, file, "device.", err)))
		return st;
	if ((st = num_in(dev, "vector_efficiency", &c->vector_eff, 0, 1e-9, 1, file, "device.",
	                 err)) ||
	    (st = num_in(dev, "bandwidth_efficiency", &c->bw_eff, 0, 1e-9, 1, file, "device.",
	                 err)) ||
	    (st = num(dev, "kernel_overhead", &c->kernel_overhead_s, 0, 0, file, "device.", err)))
		return st;
	const cJSON *ge = cJSON_GetObjectItemCaseSensitive(dev, "gemm_efficiency");
	if (ge) {
		if (!cJSON_IsObject(ge))
			return FAIL("%s: device.gemm_efficiency: expected {\"max\", "
			            "\"half_flops\", \"out_k\", \"k_max\"}",
			            file);
		CHECK_KEYS(ge, "device.gemm_efficiency.", "max", "half_flops", "out_k", "k_max",
		           "fp8_max");
		/* the file's own curve: without out_k, one of FLOPs alone (as every
		 * curve written before the term was) */
		c->gemm_out_k = c->gemm_k_max = 0;
		if ((st = num_in(ge, "max", &c->gemm_eff_max, 1, 1e-9, 1, file,
		                 "device.gemm_efficiency.", err)) ||
		    (st = num(ge, "half_flops", &c->gemm_half_flops, 1, 0, file,
		              "device.gemm_efficiency.", err)) ||
		    (st = num(ge, "out_k", &c->gemm_out_k, 0, 0, file, "device.gemm_efficiency.",
		              err)) ||
		    (st = num_in(ge, "k_max", &c->gemm_k_max, c->gemm_out_k > 0, 1e-9, 1, file,
		                 "device.gemm_efficiency.", err)) ||
		    (st = num_in(ge, "fp8_max", &c->fp8_gemm_eff_max, 0, 1e-9, 1, file,
		                 "device.gemm_efficiency.", err)))
			return st;
	}
	if ((st = parse_kernel_scale(c, cJSON_GetObjectItemCaseSensitive(dev, "kernel_scale"), file,
	                             err)))
		return st;
	/* what the training program runs: each a string its setter reads */
	static const struct {
		const char *key;
		pl_status (*set)(pl_cluster *, const char *, const char *, pl_err *);
	} program[] = {{"attention_kernel", pl_cluster_set_attention},
	               {"loss_kernel", pl_cluster_set_loss},
	               {"loss_parallel", pl_cluster_set_loss_parallel},
	               {"grad_dtype", pl_cluster_set_grad_dtype},
	               {"grad_reduce", pl_cluster_set_grad_reduce},
	               {"grad_accumulation", pl_cluster_set_grad_accumulation},
	               {"param_shard", pl_cluster_set_param_shard},
	               {"norm_kernel", pl_cluster_set_norm},
	               {"mask_kernel", pl_cluster_set_mask},
	               {"batch_norm", pl_cluster_set_batch_norm},
	               {"stage_output", pl_cluster_set_stage_output},
	               {"gemm_dtype", pl_cluster_set_gemm_dtype},
	               {"cp_exchange", pl_cluster_set_cp_exchange}};
	for (size_t i = 0; i < sizeof program / sizeof *program; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(dev, program[i].key);
		char wk[300];
		snprintf(wk, sizeof wk, "%s: device.%s", file, program[i].key);
		if (v && !cJSON_IsString(v))
			return FAIL("%s: expected a string", wk);
		if (v && (st = program[i].set(c, v->valuestring, wk, err)))
			return st;
	}
	v = cJSON_GetObjectItemCaseSensitive(dev, "loss_metrics");
	if (v) {
		if (!cJSON_IsNumber(v) || !loss_metrics_ok(v->valuedouble))
			return FAIL("%s: device.loss_metrics: " LOSS_METRICS_EXPECT, file,
			            PL_LOSS_METRICS_MAX);
		c->loss_metrics = (int)v->valuedouble;
	}
	return parse_peak_flops(c, cJSON_GetObjectItemCaseSensitive(dev, "peak_flops"), file, err);
}

/* fitted: the factors `calibrate --from-runs` fitted (what else it records
 * is information: runs, errors, the runs file) */
static pl_status parse_fitted(pl_cluster *c, const cJSON *fit, const char *file, pl_err *err)
{
	pl_status st;
	if (!fit)
		return PL_OK;
	if (!cJSON_IsObject(fit))
		return FAIL("%s: fitted: expected an object of factors", file);
	if ((st = num_in(fit, "compute", &c->fit_compute, 0, PL_FIT_MIN, PL_FIT_MAX, file,
	                 "fitted.", err)) ||
	    (st = num_in(fit, "communication", &c->fit_comm, 0, PL_FIT_MIN, PL_FIT_MAX, file,
	                 "fitted.", err)) ||
	    (st = num_in(fit, "communication_inter_node", &c->fit_comm_inter, 0, PL_FIT_MIN,
	                 PL_FIT_MAX, file, "fitted.", err)) ||
	    (st = num_in(fit, "memory", &c->fit_memory, 0, 1, PL_FIT_MEM_MAX, file, "fitted.",
	                 err)) ||
	    (st =
	         num_in(fit, "leave_one_out_error", &c->fit_loo, 0, 0, 0.99, file, "fitted.", err)))
		return st;
	return PL_OK;
}

/* links: each link class's bus bandwidth and latency */
static pl_status parse_links(pl_cluster *c, const cJSON *links, const char *file, pl_err *err)
{
	pl_status st;
	if (!links)
		return PL_OK;
	if (!cJSON_IsObject(links))
		return FAIL("%s: links: expected an object", file);
	CHECK_KEYS(links, "links.", "intra_node", "inter_node");
	for (int k = 0; k < PL_LINK_COUNT; k++) {
		const cJSON *lk = cJSON_GetObjectItemCaseSensitive(links, link_keys[k]);
		if (!lk)
			continue;
		char where[64];
		snprintf(where, sizeof where, "links.%s.", link_keys[k]);
		if (!cJSON_IsObject(lk))
			return FAIL("%s: links.%s: expected {\"busbw\", \"latency\"}", file,
			            link_keys[k]);
		CHECK_KEYS(lk, where, "busbw", "latency");
		double bw = 1.0 / c->link[k].beta;
		if ((st = num(lk, "busbw", &bw, 0, 1, file, where, err)) ||
		    (st = num(lk, "latency", &c->link[k].alpha, 0, 0, file, where, err)))
			return st;
		c->link[k].beta = 1.0 / bw;
	}
	return PL_OK;
}

/* collectives: per collective and link class, an alpha-beta */
static pl_status parse_collectives(pl_cluster *c, const cJSON *colls, const char *file, pl_err *err)
{
	pl_status st;
	if (!colls)
		return PL_OK;
	if (!cJSON_IsObject(colls))
		return FAIL("%s: collectives: expected an object", file);
	const cJSON *e;
	cJSON_ArrayForEach (e, colls) {
		int ci = -1;
		for (int k = 0; k < PL_COLL_COUNT; k++)
			if (!strcmp(e->string, pl_coll_name((pl_coll)k)))
				ci = k;
		char names[128];
		if (ci < 0)
			return FAIL("%s: collectives.%s: expected %s", file, e->string,
			            pl_coll_names(names, sizeof names));
		char wc[64];
		snprintf(wc, sizeof wc, "collectives.%s.", e->string);
		if (!cJSON_IsObject(e))
			return FAIL("%s: collectives.%s: expected an object of link class: "
			            "alpha-beta",
			            file, e->string);
		CHECK_KEYS(e, wc, "intra_node", "inter_node");
		for (int k = 0; k < PL_LINK_COUNT; k++) {
			const cJSON *lk = cJSON_GetObjectItemCaseSensitive(e, link_keys[k]);
			char where[128];
			snprintf(where, sizeof where, "collectives.%s.%s", e->string, link_keys[k]);
			if (lk && (st = parse_ab(lk, &c->coll[ci][k], file, where, err)))
				return st;
		}
	}
	return PL_OK;
}

/* The cluster format's keys, checked in the order docs/formats.md lists
 * them. */
static pl_status parse_cluster(pl_cluster *c, const cJSON *root, const char *file, pl_err *err)
{
	pl_status st;
	if (!cJSON_IsObject(root))
		return FAIL("%s: expected a JSON object", file);
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "planner.cluster/1"))
		return FAIL("%s: format: expected \"planner.cluster/1\"", file);
	CHECK_KEYS(root, "", "format", "name", "nodes", "devices_per_node", "device", "links",
	           "collectives", "source", "calibration", "topology", "fitted", "fit_from_runs");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (cJSON_IsString(v))
		snprintf(c->name, sizeof c->name, "%s", v->valuestring);
	double nodes = 1, dpn = 8;
	if ((st = count(root, "nodes", &nodes, 1, 1, PL_MAX_DEVICES, file, "", err)) ||
	    (st = count(root, "devices_per_node", &dpn, 1, 1, PL_MAX_DEVICES, file, "", err)))
		return st;
	if (nodes * dpn > PL_MAX_DEVICES)
		return FAIL("%s: nodes %g x devices_per_node %g: at most %d devices", file, nodes,
		            dpn, PL_MAX_DEVICES);
	c->nodes = (int64_t)nodes;
	c->devices_per_node = (int64_t)dpn;
	if ((st = parse_device(c, cJSON_GetObjectItemCaseSensitive(root, "device"), file, err)))
		return st;
	if ((st = parse_fitted(c, cJSON_GetObjectItemCaseSensitive(root, "fitted"), file, err)))
		return st;
	if ((st = parse_links(c, cJSON_GetObjectItemCaseSensitive(root, "links"), file, err)))
		return st;
	if ((st = parse_collectives(c, cJSON_GetObjectItemCaseSensitive(root, "collectives"), file,
	                            err)))
		return st;
	v = cJSON_GetObjectItemCaseSensitive(root, "source");
	if (cJSON_IsString(v))
		snprintf(c->source, sizeof c->source, "%s", v->valuestring);
	char wg[300];
	snprintf(wg, sizeof wg, "%s: device.gemm_dtype", file);
	return pl_cluster_check(c, wg, err);
}

static cJSON *ab_json(const pl_ab *ab)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "alpha", ab->alpha);
	cJSON_AddNumberToObject(o, "beta", ab->beta);
	return o;
}

cJSON *pl_cluster_to_json(const pl_cluster *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "format", "planner.cluster/1");
	cJSON_AddStringToObject(o, "name", c->name);
	cJSON_AddNumberToObject(o, "nodes", (double)c->nodes);
	cJSON_AddNumberToObject(o, "devices_per_node", (double)c->devices_per_node);
	cJSON *dev = cJSON_AddObjectToObject(o, "device");
	cJSON_AddStringToObject(dev, "name", c->device_name);
	cJSON_AddNumberToObject(dev, "memory_bytes", c->memory_bytes);
	cJSON_AddNumberToObject(dev, "memory_reserve_bytes", c->memory_reserve);
	cJSON *pf = cJSON_AddObjectToObject(dev, "peak_flops");
	for (int d = 0; d < PL_DT_COUNT; d++)
		if (c->peak_flops[d] > 0)
			cJSON_AddNumberToObject(pf, pl_dtype_name((pl_dtype)d), c->peak_flops[d]);
	cJSON_AddNumberToObject(pf, "float8", c->fp8_peak_flops);
	cJSON_AddNumberToObject(dev, "memory_bandwidth", c->memory_bandwidth);
	cJSON *ge = cJSON_AddObjectToObject(dev, "gemm_efficiency");
	cJSON_AddNumberToObject(ge, "max", c->gemm_eff_max);
	cJSON_AddNumberToObject(ge, "half_flops", c->gemm_half_flops);
	if (c->gemm_out_k > 0) {
		cJSON_AddNumberToObject(ge, "out_k", c->gemm_out_k);
		cJSON_AddNumberToObject(ge, "k_max", c->gemm_k_max);
	}
	if (c->fp8_gemm_eff_max > 0)
		cJSON_AddNumberToObject(ge, "fp8_max", c->fp8_gemm_eff_max);
	cJSON_AddNumberToObject(dev, "vector_efficiency", c->vector_eff);
	cJSON_AddNumberToObject(dev, "bandwidth_efficiency", c->bw_eff);
	cJSON_AddNumberToObject(dev, "kernel_overhead", c->kernel_overhead_s);
	cJSON *ks = NULL;
	for (int k = 0; k < PL_OP_COUNT; k++)
		if (c->kernel_scale[k] > 0 && pl_optype_owns_name((pl_optype)k)) {
			if (!ks)
				ks = cJSON_AddObjectToObject(dev, "kernel_scale");
			cJSON_AddNumberToObject(ks, pl_optype_name((pl_optype)k),
			                        c->kernel_scale[k]);
		}
	/* always written: a reader starts from the H100 defaults */
	cJSON_AddStringToObject(dev, "attention_kernel", c->attention_kernel);
	cJSON_AddStringToObject(dev, "loss_kernel", pl_cluster_loss_name(c));
	cJSON_AddStringToObject(dev, "loss_parallel", pl_cluster_loss_parallel_name(c));
	cJSON_AddStringToObject(dev, "grad_dtype", pl_cluster_grad_dtype_name(c));
	cJSON_AddStringToObject(dev, "grad_reduce", pl_cluster_grad_reduce_name(c));
	cJSON_AddStringToObject(dev, "grad_accumulation", pl_cluster_grad_accumulation_name(c));
	cJSON_AddStringToObject(dev, "param_shard", pl_cluster_param_shard_name(c));
	cJSON_AddStringToObject(dev, "norm_kernel", pl_cluster_norm_name(c));
	cJSON_AddStringToObject(dev, "mask_kernel", pl_cluster_mask_name(c));
	cJSON_AddStringToObject(dev, "batch_norm", pl_cluster_batch_norm_name(c));
	cJSON_AddStringToObject(dev, "stage_output", pl_cluster_stage_output_name(c));
	cJSON_AddStringToObject(dev, "gemm_dtype", pl_cluster_gemm_dtype_name(c));
	cJSON_AddStringToObject(dev, "cp_exchange", pl_cluster_cp_exchange_name(c));
	if (c->loss_metrics) /* written only when some: files before it had none */
		cJSON_AddNumberToObject(dev, "loss_metrics", c->loss_metrics);
	if (pl_fit(c->fit_compute) != 1 || pl_fit(c->fit_comm) != 1 ||
	    pl_fit(c->fit_comm_inter) != 1 || pl_fit(c->fit_memory) != 1 || c->fit_loo > 0) {
		cJSON *f = cJSON_AddObjectToObject(o, "fitted");
		cJSON_AddNumberToObject(f, "compute", pl_fit(c->fit_compute));
		cJSON_AddNumberToObject(f, "communication", pl_fit(c->fit_comm));
		if (pl_fit(c->fit_comm_inter) != 1)
			cJSON_AddNumberToObject(f, "communication_inter_node", pl_fit(c->fit_comm_inter));
		cJSON_AddNumberToObject(f, "memory", pl_fit(c->fit_memory));
		if (c->fit_loo > 0)
			cJSON_AddNumberToObject(f, "leave_one_out_error", c->fit_loo);
	}
	cJSON *links = cJSON_AddObjectToObject(o, "links");
	for (int k = 0; k < PL_LINK_COUNT; k++) {
		cJSON *l = cJSON_AddObjectToObject(links, link_keys[k]);
		cJSON_AddNumberToObject(l, "busbw", 1.0 / c->link[k].beta);
		cJSON_AddNumberToObject(l, "latency", c->link[k].alpha);
	}
	cJSON *colls = cJSON_AddObjectToObject(o, "collectives");
	for (int ci = 0; ci < PL_COLL_COUNT; ci++) {
		cJSON *co = NULL;
		for (int k = 0; k < PL_LINK_COUNT; k++) {
			const pl_ab_list *l = &c->coll[ci][k];
			if (!l->n)
				continue;
			if (!co)
				co = cJSON_AddObjectToObject(colls, pl_coll_name((pl_coll)ci));
			if (l->n == 1 && l->ranks[0] == 0) {
				pl_json_add(co, link_keys[k], ab_json(&l->ab[0]));
				continue;
			}
			cJSON *arr = cJSON_AddArrayToObject(co, link_keys[k]);
			for (int i = 0; i < l->n; i++) {
				cJSON *e = cJSON_CreateObject();
				cJSON_AddNumberToObject(e, "ranks", (double)l->ranks[i]);
				cJSON_AddNumberToObject(e, "alpha", l->ab[i].alpha);
				cJSON_AddNumberToObject(e, "beta", l->ab[i].beta);
				if (l->max_bytes[i] > 0)
					cJSON_AddNumberToObject(e, "max_bytes", l->max_bytes[i]);
				pl_json_push(arr, e);
			}
		}
	}
	cJSON_AddStringToObject(o, "source", c->source);
	return o;
}

pl_status pl_cluster_from_json(pl_cluster *c, const cJSON *root, const char *where, pl_err *err)
{
	pl_cluster tmp;
	h100(&tmp);
	snprintf(tmp.name, sizeof tmp.name, "cluster");
	pl_status st = parse_cluster(&tmp, root, where, err);
	if (!st)
		*c = tmp;
	return st;
}

pl_status pl_cluster_load_json(pl_cluster *c, const char *text, size_t len, const char *name,
                               pl_err *err)
{
	cJSON *root;
	pl_status st = pl_json_parse(text, len, name, &root, err);
	if (!st)
		st = pl_cluster_from_json(c, root, name, err);
	cJSON_Delete(root);
	return st;
}

pl_status pl_cluster_load_file(pl_cluster *c, const char *path, pl_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	pl_status st = pl_read_file(path, &buf, &len, err);
	if (st)
		return st;
	st = pl_cluster_load_json(c, buf, len, path, err);
	free(buf);
	return st;
}

pl_status pl_cluster_resolve(pl_cluster *c, const char *arg, pl_err *err)
{
	struct stat sb;
	if (stat(arg, &sb) == 0)
		return pl_cluster_load_file(c, arg, err);
	return pl_cluster_preset(c, arg, err);
}
