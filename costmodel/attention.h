/* Fused attention priced by its shape: the measured throughput of each
 * kernel (FlashAttention-1, -2, -3, cuDNN, Triton, xformers) on each GPU by
 * direction, causal mask, head dimension and sequence length, as the
 * FlashAttention papers and repository publish it
 * (costmodel/attention_measured.csv, compiled into pl_attn_rows). FLOPs are
 * counted as they count them: forward 4 s^2 d per head (halved under a
 * causal mask), backward 2.5 times that. */
#ifndef PL_ATTENTION_H
#define PL_ATTENTION_H

typedef struct pl_attn_row {
	const char *gpu, *kernel, *direction; /* direction: "fwd", "bwd", "fwd_bwd" */
	int causal, head_dim, seqlen;
	double flops; /* FLOP/s measured */
} pl_attn_row;

extern const pl_attn_row pl_attn_rows[];
extern const int pl_attn_nrows;

/* The FLOP/s of `kernel` on the GPU named `device` (the table's GPU of the
 * same family: A100 for any A100, H100 for H100 and H200), forward (bwd 0)
 * or backward (bwd 1), with or without a causal mask, at head dimension d
 * and sequence length s: interpolated linearly in log2(s) between the
 * measured lengths (the nearest at either end) and linearly in d between
 * the measured head dimensions. Where the table has only forward+backward
 * (A100), that rate serves both; a backward without its causal measurement
 * is derived from forward and forward+backward, or from the non-causal
 * backward times the forward's causal/non-causal ratio. Ampere-style kernels
 * measured on A100 only (the Triton FlashAttention, xformers) run on another
 * GPU at FlashAttention-1's rate there times their A100 ratio to it. 0 when
 * the table has nothing for the kernel on that GPU. */
double pl_attention_rate(const char *device, const char *kernel, int bwd, int causal, double d,
                         double s);

/* The longest sequence at which `kernel` was measured on the GPU named
 * `device` (its family's part, as pl_attention_rate reads the table; for an
 * Ampere-style kernel on another GPU, the shorter of its A100 measurements
 * and FlashAttention-1's there): longer sequences are priced at that
 * length's rate. 0 when the table has nothing for the kernel on that GPU. */
int pl_attention_longest(const char *device, const char *kernel);

/* The dense 16-bit tensor-core peaks of the parts the table measured, which
 * the presets describe too (NVIDIA's datasheets: H100 SXM5 1,979 TFLOP/s
 * BF16/FP16 with sparsity, 989 dense; A100 SXM4 312 dense) */
#define PL_H100_PEAK_16 9.89e14
#define PL_A100_PEAK_16 3.12e14

/* The dense 16-bit peak FLOP/s of the part the table measured for the GPU
 * named `device` (its family's: H100 SXM5 for H100 and H200, A100 SXM4 for
 * A100), the presets' own (PL_H100_PEAK_16, PL_A100_PEAK_16); 0 where the
 * table has no part of that family. A device of the family with another
 * 16-bit peak runs the measured kernels at that peak's ratio to this one:
 * a power or clock limit slows the tensor cores of a fused attention as it
 * slows a GEMM's (the caller scales the rate, costmodel/cost.c). */
double pl_attention_part_peak(const char *device);

/* Whether `kernel` names a kernel of the table (for any GPU). */
int pl_attention_kernel_known(const char *kernel);

#endif
