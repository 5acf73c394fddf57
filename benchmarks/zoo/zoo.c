/* planner-zoo: writes planner.model/1 JSON for the model zoo -- MLPs, the
 * GPT-style decoder (GPT-3 sizes of the paper's table 2.1), Llama-2 (RMSNorm,
 * SwiGLU, grouped-query attention for 70B), BERT-large, and mixtures of experts
 * (Mixtral 8x7B and Alpa's GShard-style MoE suite).
 * Usage: planner-zoo NAME [--layers L --hidden H --heads A --seq S --vocab V
 *        --batch B --dtype T ...] > model.json;  planner-zoo --list */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/output.h"

typedef struct cfg {
	const char *name;
	const char *arch; /* gpt, llama, bert, mlp, mlp-block */
	long layers, hidden, heads, head_dim, kv_heads, ffn, seq, vocab, batch;
	const char *dtype;
	long classes, tokens;
	long experts, top_k, moe_every; /* MoE feed-forward in every moe_every-th layer */
	/* dropout ratio where Megatron has it: on the embeddings, on the attention
	 * probabilities, and on the attention and MLP outputs before their
	 * residual adds. -1: by arch (GPT, BERT: 0.1, Megatron's
	 * --attention-dropout and --hidden-dropout defaults; Llama: 0) */
	double dropout;
} cfg;

/* --attention fused: each layer's attention as one fused Attention op
 * (FlashAttention: no scores kept, causal for the decoders, no dropout of
 * the probabilities); else MatMul, Softmax, Dropout, MatMul as Megatron's
 * unfused path */
static int fused;
/* --attention-output copied (with --attention fused): the kernel's output,
 * which its backward keeps, is laid out again for the output projection in
 * two copies, heads before the sequence and back, and the projection keeps
 * the second: Aleph Alpha's scaling rearranges FlashAttention's
 * [(b s), heads, dh] output to [(b heads), s, dh] in flash_attention and to
 * [b, s, (heads dh)] before its dense layer (core/nn/attention/attention.py),
 * each a copy (einops' rearrange of a permutation), while
 * flash_attn_varlen_func saves its own output for the backward. shared: the
 * projection reads the kernel's output itself (a view). */
static int out_copies;
/* --softmax-mask masked-fill (with unfused attention): the scores cloned and
 * filled with a constant where the causal mask says before the softmax, as
 * Aleph Alpha's scaling runs its torch kernel (MaskedSoftmaxTorch,
 * core/nn/masked_softmax/masked_softmax.py: the scores are a view, so
 * x.clone(), then x.masked_fill_(mask, -10000.0), then softmax): an
 * Identity with "copy": 1 (the clone: copied forward, its gradient handed
 * back) and a Where on the constant mask [1, 1, s, s] (its fill a constant
 * scalar). How the Where runs is the cluster's (--mask-kernel: fused into
 * the softmax, or eager). implicit (default): the softmax masks by itself
 * (Megatron's upper-triangular kernel), no op. */
static int mask_fill;
/* --rotary eager (Llama): q and k rotated as eager PyTorch runs RoPE,
 * q * cos + rotate_half(q) * sin with rotate_half(x) = cat(-x2, x1) on the
 * head dimension's halves (Aleph Alpha's scaling, core/nn/rotary.py
 * apply_rotary_pos_emb; Hugging Face's Llama): a Neg, a Concat, two Muls by
 * the constant tables [s, 1, head dim] and an Add, each a kernel, the halves
 * views; the rotated q and k are new tensors the attention reads. none
 * (default): no rotation priced (a fused RoPE kernel's few bytes). */
static int rotary;
/* --attention-inputs views (with --projections qkv and a fused attention):
 * q, k and v are views of the fused projection's output (a reshape and a
 * split: PyTorch's views), so the kernel's saved v keeps that whole buffer,
 * q's and k's thirds too, alive beside the rotated q and k it also saves:
 * Aleph Alpha's scaling with qkv_in_one (its default), whose value is a
 * split of query_key_value's output (split_tensor_along_last_dim) that
 * flash_attn_varlen_func saves (flash_attn_interface.py: q, k, v, out and
 * the log-sum-exp). copies (default): each its own tensor. */
static int qkv_views;
/* --projections qkv: q, k and v as one GEMM, as Megatron-LM (linear_qkv),
 * Megatron-DeepSpeed (query_key_value) and Aleph Alpha's scaling (qkv_in_one)
 * run them; fused: also a Llama MLP's gate and up as one (Megatron-LM's
 * linear_fc1 with a gated linear unit): under tensor and sequence
 * parallelism one all-gather of the norm's output and one reduction of its
 * gradient instead of one per projection. The output is laid out per head
 * group ([.., kv heads, q heads per group + 2, head dim]; the MLP's as
 * [.., ffn, 2]) so a cut of its heads (or ffn) keeps each rank's q, k, v
 * (gate, up) local, as Megatron lays out its fused weight; Slices take
 * them apart. */
static int fuse_proj; /* 1: q, k, v fused; 2: also gate and up */
/* --swiglu fused: a Llama feed-forward's SiLU and product as one kernel
 * that keeps only its inputs, gate and up, and runs the SiLU again in its
 * backward, as Megatron-core's fused SwiGLU (--swiglu with
 * --bias-swiglu-fusion: megatron/core/fusions/fused_bias_swiglu.py,
 * SwiGLUFunction saves its input y = [gate; up] and swiglu_back recomputes
 * silu(y_1)): the Silu op states "recompute": 1, so its output is not kept
 * and its forward runs again in the backward. unfused (default): PyTorch's
 * autograd keeps gate (the SiLU's input), silu(gate) and up (the
 * product's inputs) */
static int swiglu_fused;

static double dropout_of(const cfg *c)
{
	if (c->dropout >= 0)
		return c->dropout;
	return strcmp(c->arch, "llama") ? 0.1 : 0;
}

/* x -> Dropout(ratio) -> out, or out = x's name when there is no dropout */
static const char *dropout(const cfg *c, const char *name, const char *x, const char *out);

/* GPT-3 (Brown et al. 2020, table 2.1); batch in sequences of 2048 tokens
 * (0.5M..3.2M tokens); vocabulary 50257 padded to 50304 as Megatron does. */
static const cfg zoo[] = {
    {"gpt3-125m", "gpt", 12, 768, 12, 64, 0, 3072, 2048, 50304, 256, "bfloat16", 0, 0, 0, 0, 0, -1},
    {"gpt3-350m", "gpt", 24, 1024, 16, 64, 0, 4096, 2048, 50304, 256, "bfloat16", 0, 0, 0, 0, 0,
     -1},
    {"gpt3-760m", "gpt", 24, 1536, 16, 96, 0, 6144, 2048, 50304, 256, "bfloat16", 0, 0, 0, 0, 0,
     -1},
    {"gpt3-1.3b", "gpt", 24, 2048, 24, 128, 0, 8192, 2048, 50304, 512, "bfloat16", 0, 0, 0, 0, 0,
     -1},
    {"gpt3-2.7b", "gpt", 32, 2560, 32, 80, 0, 10240, 2048, 50304, 512, "bfloat16", 0, 0, 0, 0, 0,
     -1},
    {"gpt3-6.7b", "gpt", 32, 4096, 32, 128, 0, 16384, 2048, 50304, 1024, "bfloat16", 0, 0, 0, 0, 0,
     -1},
    {"gpt3-13b", "gpt", 40, 5140, 40, 128, 0, 20560, 2048, 50304, 1024, "bfloat16", 0, 0, 0, 0, 0,
     -1},
    {"gpt3-175b", "gpt", 96, 12288, 96, 128, 0, 49152, 2048, 50304, 1536, "bfloat16", 0, 0, 0, 0, 0,
     -1},
    /* Llama 2 (Touvron et al. 2023): 4M-token batches of 4096-token sequences */
    {"llama2-7b", "llama", 32, 4096, 32, 128, 32, 11008, 4096, 32000, 1024, "bfloat16", 0, 0, 0, 0,
     0, -1},
    {"llama2-70b", "llama", 80, 8192, 64, 128, 8, 28672, 4096, 32000, 1024, "bfloat16", 0, 0, 0, 0,
     0, -1},
    /* Mixtral 8x7B (Jiang et al. 2024): Llama-style, every feed-forward 8 SwiGLU
     * experts, top 2; 4M-token batches of 4096-token sequences */
    {"mixtral-8x7b", "llama", 32, 4096, 32, 128, 8, 14336, 4096, 32000, 1024, "bfloat16", 0, 0, 8,
     2, 1, -1},
    /* Alpa's MoE suite (GShard-style: every other layer an MoE of GELU experts,
     * top 2, ffn 4 H; sequence 1024, 16 heads, vocabulary 32000) */
    {"moe-380m", "gpt", 8, 768, 16, 48, 0, 3072, 1024, 32000, 1024, "bfloat16", 0, 0, 8, 2, 2, -1},
    {"moe-1.3b", "gpt", 16, 768, 16, 48, 0, 3072, 1024, 32000, 1024, "bfloat16", 0, 0, 16, 2, 2,
     -1},
    {"moe-2.4b", "gpt", 16, 1024, 16, 64, 0, 4096, 1024, 32000, 1024, "bfloat16", 0, 0, 16, 2, 2,
     -1},
    {"moe-10b", "gpt", 24, 1024, 16, 64, 0, 4096, 1024, 32000, 1024, "bfloat16", 0, 0, 48, 2, 2,
     -1},
    /* BERT-large (Devlin et al. 2019): 24 layers, 1024 hidden, 16 heads, seq 512 */
    {"bert-large", "bert", 24, 1024, 16, 64, 0, 4096, 512, 30522, 256, "float32", 0, 0, 0, 0, 0,
     -1},
    /* a small GPT for examples and tests */
    {"gpt-small", "gpt", 4, 256, 4, 64, 0, 1024, 128, 1024, 16, "float32", 0, 0, 0, 0, 0, -1},
    /* MLP: large batch, small hidden size */
    {"mlp", "mlp", 2, 256, 0, 0, 0, 0, 0, 0, 8192, "float32", 16, 0, 0, 0, 0, -1},
    /* one transformer MLP block with its residual: hidden 12288 (GPT-3 175B), 2048 tokens */
    {"mlp-block", "mlp-block", 1, 12288, 0, 0, 0, 49152, 0, 0, 0, "bfloat16", 0, 2048, 0, 0, 0, -1},
};

static int first;
static void sep(void)
{
	if (!first)
		printf(",\n");
	first = 0;
}

static void tensor(const char *name, const char *role, const char *dtype, int n, const long *s)
{
	sep();
	printf("    \"%s\": {\"shape\": [", name);
	for (int i = 0; i < n; i++)
		printf("%s%ld", i ? ", " : "", s[i]);
	printf("], \"role\": \"%s\"", role);
	if (dtype)
		printf(", \"dtype\": \"%s\"", dtype);
	printf("}");
}

#define T(name, role, ...)                                                                         \
	do {                                                                                       \
		long s_[] = {__VA_ARGS__};                                                         \
		tensor(name, role, NULL, (int)(sizeof s_ / sizeof *s_), s_);                       \
	} while (0)

/* an op with the field flag set to 1 ("recompute": its framework runs its
 * forward again in the backward; "view": its output a view of its input;
 * "copy": an Identity that is a clone), none where flag is NULL */
static void op_flag(const char *name, const char *type, const char *in, const char *out,
                    const char *attrs, const char *flag)
{
	sep();
	printf("    {\"name\": \"%s\", \"type\": \"%s\", \"inputs\": [%s], \"outputs\": [\"%s\"]",
	       name, type, in, out);
	if (attrs)
		printf(", \"attrs\": %s", attrs);
	if (flag)
		printf(", \"%s\": 1", flag);
	printf("}");
}

static void op_rc(const char *name, const char *type, const char *in, const char *out,
                  const char *attrs, int recompute)
{
	op_flag(name, type, in, out, attrs, recompute ? "recompute" : NULL);
}

static void op(const char *name, const char *type, const char *in, const char *out,
               const char *attrs)
{
	op_flag(name, type, in, out, attrs, NULL);
}

/* an op whose output is a view of its input ("view": 1) where view is 1 */
static void op_view(const char *name, const char *type, const char *in, const char *out,
                    const char *attrs, int view)
{
	op_flag(name, type, in, out, attrs, view ? "view" : NULL);
}

static char nb[64][96];
static int nbi;
/* formats a name into a rotating buffer */
static const char *N(const char *fmt, long l)
{
	char *b = nb[nbi++ % 64];
	snprintf(b, 96, fmt, l);
	return b;
}
static char qb[16][320];
static int qbi;
static const char *Q2(const char *a, const char *b)
{
	char *o = qb[qbi++ % 16];
	snprintf(o, 320, "\"%s\", \"%s\"", a, b);
	return o;
}
static const char *Q3(const char *a, const char *b, const char *c)
{
	char *o = qb[qbi++ % 16];
	snprintf(o, 320, "\"%s\", \"%s\", \"%s\"", a, b, c);
	return o;
}
static const char *Q1(const char *a)
{
	char *o = qb[qbi++ % 16];
	snprintf(o, 320, "\"%s\"", a);
	return o;
}

static const char *dropout(const cfg *c, const char *name, const char *x, const char *out)
{
	double r = dropout_of(c);
	if (!(r > 0))
		return x;
	char at[64];
	snprintf(at, sizeof at, "{\"ratio\": %g}", r);
	op(name, "Dropout", Q1(x), out, at);
	return out;
}

static int is_moe(const cfg *c, long l)
{
	return c->experts > 0 && (l + 1) % c->moe_every == 0;
}

static void header(const cfg *c)
{
	printf("{\n  \"format\": \"planner.model/1\",\n  \"name\": \"%s\",\n  \"dtype\": \"%s\",\n"
	       "  \"tensors\": {\n",
	       c->name, c->dtype);
	first = 1;
}

static void transformer_params(const cfg *c)
{
	long H = c->hidden, A = c->heads, dh = c->head_dim, F = c->ffn;
	long kvw = (c->kv_heads ? c->kv_heads : A) * dh;
	for (long l = 0; l < c->layers; l++) {
		T(N("l%ld.ln1.g", l), "param", H);
		if (strcmp(c->arch, "llama"))
			T(N("l%ld.ln1.b", l), "param", H);
		if (fuse_proj) {
			T(N("l%ld.wqkv", l), "param", H, A * dh + 2 * kvw);
		} else {
			T(N("l%ld.wq", l), "param", H, A * dh);
			T(N("l%ld.wk", l), "param", H, kvw);
			T(N("l%ld.wv", l), "param", H, kvw);
		}
		T(N("l%ld.wo", l), "param", A * dh, H);
		T(N("l%ld.ln2.g", l), "param", H);
		if (strcmp(c->arch, "llama"))
			T(N("l%ld.ln2.b", l), "param", H);
		if (is_moe(c, l)) {
			long E = c->experts;
			T(N("l%ld.wr", l), "param", H, E);
			if (!strcmp(c->arch, "llama")) {
				T(N("l%ld.wg", l), "param", E, H, F);
				T(N("l%ld.wu", l), "param", E, H, F);
				T(N("l%ld.wd", l), "param", E, F, H);
			} else {
				T(N("l%ld.w1", l), "param", E, H, F);
				T(N("l%ld.w2", l), "param", E, F, H);
			}
		} else if (!strcmp(c->arch, "llama")) {
			if (fuse_proj == 2) {
				T(N("l%ld.wgu", l), "param", H, 2 * F);
			} else {
				T(N("l%ld.wg", l), "param", H, F);
				T(N("l%ld.wu", l), "param", H, F);
			}
			T(N("l%ld.wd", l), "param", F, H);
		} else {
			T(N("l%ld.w1", l), "param", H, F);
			T(N("l%ld.b1", l), "param", F);
			T(N("l%ld.w2", l), "param", F, H);
			T(N("l%ld.b2", l), "param", H);
		}
	}
}

static void norm(const cfg *c, const char *name, const char *x, const char *g, const char *b,
                 const char *out)
{
	if (!strcmp(c->arch, "llama"))
		op(name, "RMSNormalization", Q2(x, g), out, "{\"axis\": -1, \"epsilon\": 1e-5}");
	else
		op(name, "LayerNormalization", Q3(x, g, b), out,
		   "{\"axis\": -1, \"epsilon\": 1e-5}");
}

/* q, k, v [B, S, heads * dh] -> Attention in its 3-D form (the layout the
 * projections write, FlashAttention's own) -> ctx2 [B, S, A * dh] */
/* The q or k the attention reads: the projection's, or rotated */
static const char *qk(long l, char which)
{
	return N(which == 'q' ? (rotary ? "l%ld.qr.out" : "l%ld.q.out")
	                      : (rotary ? "l%ld.kr.out" : "l%ld.k.out"),
	         l);
}

/* x ([B, S, n * dh]) rotated as eager RoPE (--rotary eager) into lN.Tr.out,
 * T "q" or "k" */
static void rope(const cfg *c, long l, const char *T, long n)
{
	long B = c->batch, S = c->seq, dh = c->head_dim;
	char f[8][40], sh[128], sl[2][96];
	static const char *const part[8] = {"4", "a", "b", "nb", "rh", "m1", "m2", "r4"};
	for (int i = 0; i < 8; i++)
		snprintf(f[i], sizeof f[i], "l%%ld.%s_rope%s.out", T, part[i]);
	char in[40], out[40], nm[40];
	snprintf(in, sizeof in, "l%%ld.%s.out", T);
	snprintf(out, sizeof out, "l%%ld.%sr.out", T);
	snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld, %ld]}", B, S, n, dh);
	snprintf(nm, sizeof nm, "l%%ld.%s_rope4", T);
	op_view(N(nm, l), "Reshape", Q1(N(in, l)), N(f[0], l), sh, 1);
	for (int h = 0; h < 2; h++) {
		snprintf(sl[h], sizeof sl[h], "{\"axes\": [3], \"starts\": [%ld], \"ends\": [%ld]}",
		         h ? dh / 2 : 0, h ? dh : dh / 2);
		snprintf(nm, sizeof nm, "l%%ld.%s_rope%s", T, h ? "b" : "a");
		op_view(N(nm, l), "Slice", Q1(N(f[0], l)), N(f[1 + h], l), sl[h], 1);
	}
	snprintf(nm, sizeof nm, "l%%ld.%s_ropenb", T);
	op(N(nm, l), "Neg", Q1(N(f[2], l)), N(f[3], l), NULL);
	snprintf(nm, sizeof nm, "l%%ld.%s_roperh", T);
	op(N(nm, l), "Concat", Q2(N(f[3], l), N(f[1], l)), N(f[4], l), "{\"axis\": 3}");
	snprintf(nm, sizeof nm, "l%%ld.%s_ropem1", T);
	op(N(nm, l), "Mul", Q2(N(f[0], l), "rope_cos"), N(f[5], l), NULL);
	snprintf(nm, sizeof nm, "l%%ld.%s_ropem2", T);
	op(N(nm, l), "Mul", Q2(N(f[4], l), "rope_sin"), N(f[6], l), NULL);
	snprintf(nm, sizeof nm, "l%%ld.%s_ropeadd", T);
	op(N(nm, l), "Add", Q2(N(f[5], l), N(f[6], l)), N(f[7], l), NULL);
	snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld]}", B, S, n * dh);
	snprintf(nm, sizeof nm, "l%%ld.%s_rope3", T);
	op_view(N(nm, l), "Reshape", Q1(N(f[7], l)), N(out, l), sh, 1);
}

static void fused_attention(const cfg *c, long l)
{
	char at[128];
	snprintf(at, sizeof at, "{\"q_num_heads\": %ld, \"kv_num_heads\": %ld%s}", c->heads,
	         c->kv_heads ? c->kv_heads : c->heads,
	         strcmp(c->arch, "bert") ? ", \"is_causal\": 1" : "");
	op(N("l%ld.attn", l), "Attention", Q3(qk(l, 'q'), qk(l, 'k'), N("l%ld.v.out", l)),
	   N("l%ld.ctx2.out", l), at);
}

/* The softmax's input of layer l: the scores, or with --softmax-mask
 * masked-fill their clone filled where the mask says */
static const char *masked(long l)
{
	if (!mask_fill)
		return N("l%ld.scores.out", l);
	op_flag(N("l%ld.scores_clone", l), "Identity", Q1(N("l%ld.scores.out", l)),
	        N("l%ld.scores_clone.out", l), NULL, "copy");
	op(N("l%ld.mask_fill", l), "Where",
	   Q3("attn_mask", "attn_fill", N("l%ld.scores_clone.out", l)), N("l%ld.masked.out", l),
	   NULL);
	return N("l%ld.masked.out", l);
}

static void attention(const cfg *c, long l, const char *x, const char *out)
{
	/* x and out may point into N's ring of names, which the ops below wrap */
	char xb[96], ob[96];
	snprintf(xb, sizeof xb, "%s", x);
	snprintf(ob, sizeof ob, "%s", out);
	x = xb;
	out = ob;
	long B = c->batch, S = c->seq, A = c->heads, dh = c->head_dim;
	long KV = c->kv_heads && c->kv_heads != A ? c->kv_heads : 0;
	char a[256], sh[128];
	if (fuse_proj) {
		long kv = KV ? KV : A, G = A / kv;
		char sl[160];
		op(N("l%ld.qkv", l), "MatMul", Q2(x, N("l%ld.wqkv", l)), N("l%ld.qkv.out", l),
		   NULL);
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld, %ld, %ld]}", B, S, kv, G + 2,
		         dh);
		op_view(N("l%ld.qkv5", l), "Reshape", Q1(N("l%ld.qkv.out", l)),
		        N("l%ld.qkv5.out", l), sh, qkv_views);
		static const char *const part[3] = {"q", "k", "v"};
		for (int i = 0; i < 3; i++) {
			long lo = i == 0 ? 0 : G + i - 1, hi = i == 0 ? G : lo + 1;
			char f5[32], f5o[32], f[32], fo[32];
			snprintf(f5, sizeof f5, "l%%ld.%s_part", part[i]);
			snprintf(f5o, sizeof f5o, "l%%ld.%s_part.out", part[i]);
			snprintf(f, sizeof f, "l%%ld.%s", part[i]);
			snprintf(fo, sizeof fo, "l%%ld.%s.out", part[i]);
			snprintf(sl, sizeof sl,
			         "{\"axes\": [3], \"starts\": [%ld], \"ends\": [%ld]}", lo, hi);
			op_view(N(f5, l), "Slice", Q1(N("l%ld.qkv5.out", l)), N(f5o, l), sl,
			        qkv_views);
			snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld]}", B, S,
			         (i == 0 ? A : kv) * dh);
			op_view(N(f, l), "Reshape", Q1(N(f5o, l)), N(fo, l), sh, qkv_views);
		}
	} else {
		op(N("l%ld.q", l), "MatMul", Q2(x, N("l%ld.wq", l)), N("l%ld.q.out", l), NULL);
		op(N("l%ld.k", l), "MatMul", Q2(x, N("l%ld.wk", l)), N("l%ld.k.out", l), NULL);
		op(N("l%ld.v", l), "MatMul", Q2(x, N("l%ld.wv", l)), N("l%ld.v.out", l), NULL);
	}
	if (rotary) {
		rope(c, l, "q", A);
		rope(c, l, "k", KV ? KV : A);
	}
	if (fused) {
		fused_attention(c, l);
	} else if (!KV) {
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld, %ld]}", B, S, A, dh);
		op(N("l%ld.q4", l), "Reshape", Q1(qk(l, 'q')), N("l%ld.q4.out", l), sh);
		op(N("l%ld.k4", l), "Reshape", Q1(qk(l, 'k')), N("l%ld.k4.out", l), sh);
		op(N("l%ld.v4", l), "Reshape", Q1(N("l%ld.v.out", l)), N("l%ld.v4.out", l), sh);
		op(N("l%ld.qt", l), "Transpose", Q1(N("l%ld.q4.out", l)), N("l%ld.qt.out", l),
		   "{\"perm\": [0, 2, 1, 3]}");
		op(N("l%ld.kt", l), "Transpose", Q1(N("l%ld.k4.out", l)), N("l%ld.kt.out", l),
		   "{\"perm\": [0, 2, 3, 1]}");
		op(N("l%ld.vt", l), "Transpose", Q1(N("l%ld.v4.out", l)), N("l%ld.vt.out", l),
		   "{\"perm\": [0, 2, 1, 3]}");
		op(N("l%ld.scores", l), "MatMul", Q2(N("l%ld.qt.out", l), N("l%ld.kt.out", l)),
		   N("l%ld.scores.out", l), NULL);
		op(N("l%ld.probs", l), "Softmax", Q1(masked(l)), N("l%ld.probs.out", l),
		   "{\"axis\": -1}");
		op(N("l%ld.ctx", l), "MatMul",
		   Q2(dropout(c, N("l%ld.attn_drop", l), N("l%ld.probs.out", l),
		              N("l%ld.attn_drop.out", l)),
		      N("l%ld.vt.out", l)),
		   N("l%ld.ctx.out", l), NULL);
		op(N("l%ld.ctxt", l), "Transpose", Q1(N("l%ld.ctx.out", l)), N("l%ld.ctxt.out", l),
		   "{\"perm\": [0, 2, 1, 3]}");
	} else { /* grouped-query attention: heads as (kv heads, group) */
		long G = A / KV;
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld, %ld, %ld]}", B, S, KV, G, dh);
		op(N("l%ld.q5", l), "Reshape", Q1(qk(l, 'q')), N("l%ld.q5.out", l), sh);
		op(N("l%ld.qt", l), "Transpose", Q1(N("l%ld.q5.out", l)), N("l%ld.qt.out", l),
		   "{\"perm\": [0, 2, 3, 1, 4]}");
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld, %ld]}", B, S, KV, dh);
		op(N("l%ld.k4", l), "Reshape", Q1(qk(l, 'k')), N("l%ld.k4.out", l), sh);
		op(N("l%ld.v4", l), "Reshape", Q1(N("l%ld.v.out", l)), N("l%ld.v4.out", l), sh);
		op(N("l%ld.kt", l), "Transpose", Q1(N("l%ld.k4.out", l)), N("l%ld.kt.out", l),
		   "{\"perm\": [0, 2, 3, 1]}");
		op(N("l%ld.vt", l), "Transpose", Q1(N("l%ld.v4.out", l)), N("l%ld.vt.out", l),
		   "{\"perm\": [0, 2, 1, 3]}");
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, 1, %ld, %ld]}", B, KV, dh, S);
		op(N("l%ld.k5", l), "Reshape", Q1(N("l%ld.kt.out", l)), N("l%ld.k5.out", l), sh);
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, 1, %ld, %ld]}", B, KV, S, dh);
		op(N("l%ld.v5", l), "Reshape", Q1(N("l%ld.vt.out", l)), N("l%ld.v5.out", l), sh);
		op(N("l%ld.scores", l), "MatMul", Q2(N("l%ld.qt.out", l), N("l%ld.k5.out", l)),
		   N("l%ld.scores.out", l), NULL);
		op(N("l%ld.probs", l), "Softmax", Q1(masked(l)), N("l%ld.probs.out", l),
		   "{\"axis\": -1}");
		op(N("l%ld.ctx", l), "MatMul",
		   Q2(dropout(c, N("l%ld.attn_drop", l), N("l%ld.probs.out", l),
		              N("l%ld.attn_drop.out", l)),
		      N("l%ld.v5.out", l)),
		   N("l%ld.ctx.out", l), NULL);
		op(N("l%ld.ctxt", l), "Transpose", Q1(N("l%ld.ctx.out", l)), N("l%ld.ctxt.out", l),
		   "{\"perm\": [0, 3, 1, 2, 4]}");
	}
	if (!fused) {
		snprintf(a, sizeof a, "{\"shape\": [%ld, %ld, %ld]}", B, S, A * dh);
		op(N("l%ld.ctx2", l), "Reshape", Q1(N("l%ld.ctxt.out", l)), N("l%ld.ctx2.out", l),
		   a);
	} else if (out_copies) {
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld, %ld]}", B, S, A, dh);
		op(N("l%ld.ctx4", l), "Reshape", Q1(N("l%ld.ctx2.out", l)), N("l%ld.ctx4.out", l),
		   sh);
		op(N("l%ld.ctxh", l), "Transpose", Q1(N("l%ld.ctx4.out", l)), N("l%ld.ctxh.out", l),
		   "{\"perm\": [0, 2, 1, 3]}");
		op(N("l%ld.ctxs", l), "Transpose", Q1(N("l%ld.ctxh.out", l)), N("l%ld.ctxs.out", l),
		   "{\"perm\": [0, 2, 1, 3]}");
		snprintf(a, sizeof a, "{\"shape\": [%ld, %ld, %ld]}", B, S, A * dh);
		op(N("l%ld.ctx3", l), "Reshape", Q1(N("l%ld.ctxs.out", l)), N("l%ld.ctx3.out", l),
		   a);
	}
	op(N("l%ld.proj", l), "MatMul",
	   Q2(fused && out_copies ? N("l%ld.ctx3.out", l) : N("l%ld.ctx2.out", l), N("l%ld.wo", l)),
	   out, NULL);
}

/* Llama's feed-forward: down(silu(gate(x)) * up(x)); batched over the experts
 * when x is a dispatch's [E, slots, H] and the weights [E, ., .] */
static void swiglu(const cfg *c, long l, const char *x, const char *out)
{
	char xb[96], ob[96]; /* as in attention() */
	snprintf(xb, sizeof xb, "%s", x);
	snprintf(ob, sizeof ob, "%s", out);
	x = xb;
	out = ob;
	if (fuse_proj == 2 && !is_moe(c, l)) {
		long B = c->batch, S = c->seq, F = c->ffn;
		char sh[96];
		op(N("l%ld.gu", l), "MatMul", Q2(x, N("l%ld.wgu", l)), N("l%ld.gu.out", l), NULL);
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld, 2]}", B, S, F);
		op(N("l%ld.gu4", l), "Reshape", Q1(N("l%ld.gu.out", l)), N("l%ld.gu4.out", l), sh);
		op(N("l%ld.gate4", l), "Slice", Q1(N("l%ld.gu4.out", l)), N("l%ld.gate4.out", l),
		   "{\"axes\": [3], \"starts\": [0], \"ends\": [1]}");
		op(N("l%ld.up4", l), "Slice", Q1(N("l%ld.gu4.out", l)), N("l%ld.up4.out", l),
		   "{\"axes\": [3], \"starts\": [1], \"ends\": [2]}");
		snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld]}", B, S, F);
		op(N("l%ld.gate", l), "Reshape", Q1(N("l%ld.gate4.out", l)), N("l%ld.gate.out", l),
		   sh);
		op(N("l%ld.up", l), "Reshape", Q1(N("l%ld.up4.out", l)), N("l%ld.up.out", l), sh);
	} else {
		op(N("l%ld.gate", l), "MatMul", Q2(x, N("l%ld.wg", l)), N("l%ld.gate.out", l),
		   NULL);
		op(N("l%ld.up", l), "MatMul", Q2(x, N("l%ld.wu", l)), N("l%ld.up.out", l), NULL);
	}
	op_rc(N("l%ld.silu", l), "Silu", Q1(N("l%ld.gate.out", l)), N("l%ld.silu.out", l), NULL,
	      swiglu_fused);
	op(N("l%ld.glu", l), "Mul", Q2(N("l%ld.silu.out", l), N("l%ld.up.out", l)),
	   N("l%ld.glu.out", l), NULL);
	op(N("l%ld.down", l), "MatMul", Q2(N("l%ld.glu.out", l), N("l%ld.wd", l)), out, NULL);
}

/* tokens [B S, H] -> router -> dispatch [E, slots, H] -> batched experts ->
 * combine; capacity per sequence (groups = B: micro-batches cut whole groups) */
static void moe_mlp(const cfg *c, long l, const char *x, const char *out)
{
	long B = c->batch, S = c->seq, H = c->hidden;
	char sh[96], at[160];
	snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld]}", B * S, H);
	op(N("l%ld.tok", l), "Reshape", Q1(x), N("l%ld.tok.out", l), sh);
	op(N("l%ld.router", l), "MatMul", Q2(N("l%ld.tok.out", l), N("l%ld.wr", l)),
	   N("l%ld.router.out", l), NULL);
	snprintf(at, sizeof at, "{\"top_k\": %ld, \"groups\": %ld, \"capacity_factor\": 1.25}",
	         c->top_k, B);
	op(N("l%ld.dispatch", l), "MoEDispatch", Q2(N("l%ld.tok.out", l), N("l%ld.router.out", l)),
	   N("l%ld.dispatch.out", l), at);
	const char *d = N("l%ld.dispatch.out", l), *e;
	if (!strcmp(c->arch, "llama")) {
		e = N("l%ld.down.out", l);
		swiglu(c, l, d, e);
	} else {
		op(N("l%ld.fc1", l), "MatMul", Q2(d, N("l%ld.w1", l)), N("l%ld.fc1.out", l), NULL);
		op(N("l%ld.gelu", l), "Gelu", Q1(N("l%ld.fc1.out", l)), N("l%ld.gelu.out", l),
		   NULL);
		op(N("l%ld.fc2", l), "MatMul", Q2(N("l%ld.gelu.out", l), N("l%ld.w2", l)),
		   N("l%ld.fc2.out", l), NULL);
		e = N("l%ld.fc2.out", l);
	}
	op(N("l%ld.combine", l), "MoECombine", Q2(e, N("l%ld.router.out", l)),
	   N("l%ld.combine.out", l), at);
	snprintf(sh, sizeof sh, "{\"shape\": [%ld, %ld, %ld]}", B, S, H);
	op(N("l%ld.untok", l), "Reshape", Q1(N("l%ld.combine.out", l)), out, sh);
}

static void mlp(const cfg *c, long l, const char *x, const char *out)
{
	if (is_moe(c, l)) {
		moe_mlp(c, l, x, out);
		return;
	}
	if (!strcmp(c->arch, "llama")) {
		swiglu(c, l, x, out);
		return;
	}
	op(N("l%ld.fc1", l), "MatMul", Q2(x, N("l%ld.w1", l)), N("l%ld.fc1.out", l), NULL);
	op(N("l%ld.bias1", l), "Add", Q2(N("l%ld.fc1.out", l), N("l%ld.b1", l)),
	   N("l%ld.bias1.out", l), NULL);
	op(N("l%ld.gelu", l), "Gelu", Q1(N("l%ld.bias1.out", l)), N("l%ld.gelu.out", l), NULL);
	op(N("l%ld.fc2", l), "MatMul", Q2(N("l%ld.gelu.out", l), N("l%ld.w2", l)),
	   N("l%ld.fc2.out", l), NULL);
	op(N("l%ld.bias2", l), "Add", Q2(N("l%ld.fc2.out", l), N("l%ld.b2", l)), out, NULL);
}

static void transformer(const cfg *c)
{
	long B = c->batch, S = c->seq, H = c->hidden, V = c->vocab;
	int post_ln = !strcmp(c->arch, "bert");
	header(c);
	tensor("tokens", "input", "int32", 2, (long[]){B, S});
	tensor("labels", "input", "int32", 2, (long[]){B, S});
	T("wte", "param", V, H);
	if (strcmp(c->arch, "llama"))
		T("wpe", "param", S, H);
	transformer_params(c);
	T("lnf.g", "param", H);
	if (strcmp(c->arch, "llama"))
		T("lnf.b", "param", H);
	T("lm_head", "param", H, V);
	if (rotary) {
		T("rope_cos", "const", S, 1, c->head_dim);
		T("rope_sin", "const", S, 1, c->head_dim);
	}
	if (mask_fill && !fused) {
		long KV = c->kv_heads && c->kv_heads != c->heads ? c->kv_heads : 0;
		if (KV)
			T("attn_mask", "const", 1, 1, 1, S, S);
		else
			T("attn_mask", "const", 1, 1, S, S);
		T("attn_fill", "const", 1);
	}
	printf("\n  },\n  \"ops\": [\n");
	first = 1;
	op("embed", "Gather", Q2("wte", "tokens"), "embed.out", "{\"axis\": 0}");
	const char *x = "embed.out";
	if (strcmp(c->arch, "llama")) {
		op("pos", "Add", Q2("embed.out", "wpe"), "x0", NULL);
		x = "x0";
	}
	x = dropout(c, "embed_drop", x, "embed_drop.out");
	char cur[96];
	snprintf(cur, sizeof cur, "%s", x);
	for (long l = 0; l < c->layers; l++) {
		char r1[96], r2[96];
		snprintf(r1, sizeof r1, "l%ld.res1", l);
		snprintf(r2, sizeof r2, "l%ld.res2", l);
		if (post_ln) { /* BERT: x = LN(x + attn(x)); x = LN(x + mlp(x)) */
			attention(c, l, cur, N("l%ld.attn.out", l));
			op(N("l%ld.add1", l), "Add",
			   Q2(cur, dropout(c, N("l%ld.attn_out_drop", l), N("l%ld.attn.out", l),
			                   N("l%ld.attn_out_drop.out", l))),
			   N("l%ld.add1.out", l), NULL);
			norm(c, N("l%ld.ln1", l), N("l%ld.add1.out", l), N("l%ld.ln1.g", l),
			     N("l%ld.ln1.b", l), r1);
			mlp(c, l, r1, N("l%ld.mlp.out", l));
			op(N("l%ld.add2", l), "Add",
			   Q2(r1, dropout(c, N("l%ld.mlp_drop", l), N("l%ld.mlp.out", l),
			                  N("l%ld.mlp_drop.out", l))),
			   N("l%ld.add2.out", l), NULL);
			norm(c, N("l%ld.ln2", l), N("l%ld.add2.out", l), N("l%ld.ln2.g", l),
			     N("l%ld.ln2.b", l), r2);
		} else { /* pre-LN: x = x + attn(LN(x)); x = x + mlp(LN(x)) */
			norm(c, N("l%ld.ln1", l), cur, N("l%ld.ln1.g", l), N("l%ld.ln1.b", l),
			     N("l%ld.ln1.out", l));
			attention(c, l, N("l%ld.ln1.out", l), N("l%ld.attn.out", l));
			op(N("l%ld.add1", l), "Add",
			   Q2(cur, dropout(c, N("l%ld.attn_out_drop", l), N("l%ld.attn.out", l),
			                   N("l%ld.attn_out_drop.out", l))),
			   r1, NULL);
			norm(c, N("l%ld.ln2", l), r1, N("l%ld.ln2.g", l), N("l%ld.ln2.b", l),
			     N("l%ld.ln2.out", l));
			mlp(c, l, N("l%ld.ln2.out", l), N("l%ld.mlp.out", l));
			op(N("l%ld.add2", l), "Add",
			   Q2(r1, dropout(c, N("l%ld.mlp_drop", l), N("l%ld.mlp.out", l),
			                  N("l%ld.mlp_drop.out", l))),
			   r2, NULL);
		}
		snprintf(cur, sizeof cur, "%s", r2);
	}
	norm(c, "lnf", cur, "lnf.g", "lnf.b", "lnf.out");
	op("logits", "MatMul", Q2("lnf.out", "lm_head"), "logits.out", NULL);
	op("loss", "SoftmaxCrossEntropy", Q2("logits.out", "labels"), "loss.out", NULL);
	printf("\n  ],\n  \"outputs\": [\"loss.out\"]\n}\n");
	(void)H;
}

static void mlp_model(const cfg *c)
{
	long B = c->batch, H = c->hidden;
	header(c);
	T("x", "input", B, H);
	tensor("labels", "input", "int32", 1, (long[]){B});
	for (long l = 0; l < c->layers; l++) {
		T(N("w%ld", l), "param", H, H);
		T(N("b%ld", l), "param", H);
	}
	T("wout", "param", H, c->classes);
	printf("\n  },\n  \"ops\": [\n");
	first = 1;
	char cur[64] = "x";
	for (long l = 0; l < c->layers; l++) {
		op(N("fc%ld", l), "MatMul", Q2(cur, N("w%ld", l)), N("fc%ld.out", l), NULL);
		op(N("bias%ld", l), "Add", Q2(N("fc%ld.out", l), N("b%ld", l)), N("bias%ld.out", l),
		   NULL);
		op(N("relu%ld", l), "Relu", Q1(N("bias%ld.out", l)), N("relu%ld.out", l), NULL);
		snprintf(cur, sizeof cur, "relu%ld.out", l);
	}
	op("out", "MatMul", Q2(cur, "wout"), "logits", NULL);
	op("loss", "SoftmaxCrossEntropy", Q2("logits", "labels"), "loss.out", NULL);
	printf("\n  ],\n  \"outputs\": [\"loss.out\"]\n}\n");
}

static void mlp_block(const cfg *c)
{
	long T_ = c->tokens, H = c->hidden, F = c->ffn;
	header(c);
	T("x", "input", T_, H);
	T("w1", "param", H, F);
	T("w2", "param", F, H);
	printf("\n  },\n  \"ops\": [\n");
	first = 1;
	op("fc1", "MatMul", Q2("x", "w1"), "h", NULL);
	op("gelu", "Gelu", Q1("h"), "a", NULL);
	op("fc2", "MatMul", Q2("a", "w2"), "y", NULL);
	op("residual", "Add", Q2("x", "y"), "out", NULL);
	printf("\n  ],\n  \"outputs\": [\"out\"]\n}\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: planner-zoo NAME [--layers L] [--hidden H] [--heads A] [--head-dim D]\n"
	           "                   [--kv-heads K] [--ffn F] [--seq S] [--vocab V] [--batch B]\n"
	           "                   [--tokens T] [--classes C] [--experts E] [--top-k K]\n"
	           "                   [--dtype float32|float16|bfloat16] [--dropout P]\n"
	           "                   [--attention unfused|fused]\n"
	           "                   [--attention-output shared|copied]\n"
	           "                   [--softmax-mask implicit|masked-fill]\n"
	           "                   [--rotary none|eager] [--attention-inputs copies|views]\n"
	           "                   [--projections separate|qkv|fused]\n"
	           "                   [--swiglu unfused|fused]\n"
	           "       planner-zoo --list\n"
	           "Writes a planner.model/1 JSON model to stdout. GPT and BERT have dropout\n"
	           "(default 0.1) where Megatron does: embeddings, attention probabilities, and\n"
	           "the attention and MLP outputs before their residual adds. --attention fused\n"
	           "computes each layer's attention as one Attention op (FlashAttention: the\n"
	           "scores are not kept, decoders are causal, no dropout of the probabilities);\n"
	           "--attention-output copied lays its output out again for the projection in\n"
	           "two copies, the projection keeping the second (Aleph Alpha's scaling).\n"
	           "--softmax-mask masked-fill (unfused attention) clones the scores and fills\n"
	           "them where a constant causal mask says before the softmax (Aleph Alpha's\n"
	           "torch kernel; planner's --mask-kernel prices the fill fused or eager).\n"
	           "--rotary eager rotates a Llama's q and k as eager PyTorch's RoPE (negation,\n"
	           "concatenation, two products and a sum). --attention-inputs views (with\n"
	           "--projections qkv) makes q, k and v views of the fused projection's output,\n"
	           "so a fused attention that saves v keeps the whole output (Aleph Alpha's\n"
	           "qkv_in_one).\n"
	           "--projections qkv makes q, k and v one GEMM (Megatron-LM, Megatron-DeepSpeed,\n"
	           "Aleph Alpha's scaling), fused also a Llama MLP's gate and up (Megatron-LM):\n"
	           "under tensor and sequence parallelism one all-gather of the norm's output\n"
	           "instead of one per projection. --swiglu fused runs a Llama MLP's SiLU\n"
	           "and product as one kernel that keeps only gate and up and recomputes the\n"
	           "SiLU in its backward (Megatron-core's fused SwiGLU).\n");
}

/* The options that take one of two values, each setting a flag: 1 where
 * the value is `on` (the message lists a, then b) */
typedef struct zoo_switch {
	const char *option, *a, *b, *on, *why;
	int *var;
} zoo_switch;
static const zoo_switch switches[] = {
    {"--swiglu", "unfused", "fused", "fused", " (SiLU recomputed in the backward)", &swiglu_fused},
    {"--attention", "fused", "unfused", "fused", "", &fused},
    {"--attention-output", "shared", "copied", "copied", "", &out_copies},
    {"--rotary", "none", "eager", "eager", "", &rotary},
    {"--attention-inputs", "copies", "views", "views", "", &qkv_views},
    {"--softmax-mask", "implicit", "masked-fill", "masked-fill", "", &mask_fill},
};

static const zoo_switch *switch_of(const char *option)
{
	for (size_t i = 0; i < sizeof switches / sizeof *switches; i++)
		if (!strcmp(option, switches[i].option))
			return &switches[i];
	return NULL;
}

static int zoo_main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < sizeof zoo / sizeof *zoo; i++)
			printf("%-12s %-9s layers %3ld hidden %5ld heads %3ld seq %4ld batch %4ld "
			       "%s\n",
			       zoo[i].name, zoo[i].arch, zoo[i].layers, zoo[i].hidden, zoo[i].heads,
			       zoo[i].seq, zoo[i].batch, zoo[i].dtype);
		return 0;
	}
	cfg c;
	const zoo_switch *sw;
	size_t i = 0;
	while (i < sizeof zoo / sizeof *zoo && strcmp(zoo[i].name, argv[1]))
		i++;
	if (i == sizeof zoo / sizeof *zoo) {
		fprintf(stderr, "planner-zoo: unknown model '%s' (see --list)\n", argv[1]);
		return 2;
	}
	c = zoo[i];
	int kv_given = 0;
	for (int a = 2; a < argc; a++) {
		if (a + 1 >= argc) {
			fprintf(stderr, "planner-zoo: %s needs a value\n", argv[a]);
			return 2;
		}
		const char *k = argv[a], *v = argv[++a];
		char *end;
		long n = strtol(v, &end, 10);
		int isnum = *end == 0 && n > 0;
		long *dst = !strcmp(k, "--layers")     ? &c.layers
		            : !strcmp(k, "--hidden")   ? &c.hidden
		            : !strcmp(k, "--heads")    ? &c.heads
		            : !strcmp(k, "--head-dim") ? &c.head_dim
		            : !strcmp(k, "--kv-heads") ? &c.kv_heads
		            : !strcmp(k, "--ffn")      ? &c.ffn
		            : !strcmp(k, "--seq")      ? &c.seq
		            : !strcmp(k, "--vocab")    ? &c.vocab
		            : !strcmp(k, "--batch")    ? &c.batch
		            : !strcmp(k, "--tokens")   ? &c.tokens
		            : !strcmp(k, "--classes")  ? &c.classes
		            : !strcmp(k, "--experts")  ? &c.experts
		            : !strcmp(k, "--top-k")    ? &c.top_k
		                                       : NULL;
		if (!strcmp(k, "--dtype")) {
			c.dtype = v;
		} else if (!strcmp(k, "--projections")) {
			if (strcmp(v, "fused") && strcmp(v, "qkv") && strcmp(v, "separate")) {
				fprintf(
				    stderr,
				    "planner-zoo: --projections %s: expected separate, qkv (q, k "
				    "and v as one GEMM) or fused (also gate and up)\n",
				    v);
				return 2;
			}
			fuse_proj = !strcmp(v, "fused") ? 2 : !strcmp(v, "qkv");
		} else if ((sw = switch_of(k))) {
			if (strcmp(v, sw->a) && strcmp(v, sw->b)) {
				fprintf(stderr, "planner-zoo: %s %s: expected %s or %s%s\n", k, v,
				        sw->a, sw->b, sw->why);
				return 2;
			}
			*sw->var = !strcmp(v, sw->on);
		} else if (!strcmp(k, "--dropout")) {
			c.dropout = strtod(v, &end);
			if (*end || !(c.dropout >= 0 && c.dropout < 1)) {
				fprintf(stderr, "planner-zoo: --dropout %s: expected 0 <= P < 1\n",
				        v);
				return 2;
			}
		} else if (!dst || !isnum) {
			fprintf(stderr,
			        "planner-zoo: %s %s: unknown option or not a positive integer\n", k,
			        v);
			return 2;
		} else {
			*dst = n;
			kv_given |= dst == &c.kv_heads;
		}
	}
	/* a model with as many key/value heads as heads keeps that when --heads
	 * changes them (grouped-query attention is asked for with --kv-heads) */
	if (!kv_given && zoo[i].kv_heads == zoo[i].heads)
		c.kv_heads = c.heads;
	if (c.kv_heads > 0 && c.heads % c.kv_heads) {
		fprintf(stderr,
		        "planner-zoo: %ld key/value heads do not divide %ld heads (each group of "
		        "query heads shares one): give --kv-heads K with K dividing --heads\n",
		        c.kv_heads, c.heads);
		return 2;
	}
	if (c.experts > 0 && !c.moe_every) /* --experts on a dense model: every layer */
		c.moe_every = 1;
	if (c.experts > 0 && !c.top_k)
		c.top_k = 2;
	if (!strcmp(c.arch, "mlp"))
		mlp_model(&c);
	else if (!strcmp(c.arch, "mlp-block"))
		mlp_block(&c);
	else
		transformer(&c);
	return 0;
}

/* the model goes to standard output (planner-zoo NAME > model.json): a write
 * that failed there (a full disk, ulimit -f) is exit 4, never a truncated
 * model with exit 0 */
int main(int argc, char **argv)
{
	signal(SIGXFSZ, SIG_IGN);
	return pl_output_close_stdout("planner-zoo", zoo_main(argc, argv));
}
