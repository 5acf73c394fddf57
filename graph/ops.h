/* Operator rules: the one place that knows an operator's sharding semantics.
 * A rule infers output shapes and the op's loop space at import, and prices
 * the local shard of one strategy in FLOPs, bytes moved, kept activations and
 * the collectives the op needs by itself. The cost model turns these into
 * seconds; the executor carries them out. */
#ifndef PL_OPS_H
#define PL_OPS_H

#include "graph/graph.h"

typedef enum pl_coll {
	PL_COLL_ALL_REDUCE,
	PL_COLL_ALL_GATHER,
	PL_COLL_REDUCE_SCATTER,
	PL_COLL_ALL_TO_ALL,
	PL_COLL_SEND_RECV,
	PL_COLL_COUNT
} pl_coll;

/* An op type's name as the model format spells it ("MatMul"; "?" past
 * the last) */
const char *pl_optype_name(pl_optype t);
/* Whether t is the type its name parses to: not so for a type that shares
 * another's name (Pow by a tensor is the model's "Pow" with two inputs), which
 * a table keyed by names (a cluster's kernel_scale) lists under the other */
int pl_optype_owns_name(pl_optype t);
/* The names of the attributes' values, as ONNX spells them (NULL past the
 * last): Resize's modes, coordinate transformations and roundings; Pad's
 * modes; a recurrent layer's directions; GridSample's padding modes */
const char *pl_resize_mode_name(int v);
const char *pl_resize_coord_name(int v);
const char *pl_resize_nearest_name(int v);
const char *pl_pad_mode_name(int v);
const char *pl_rnn_direction_name(int v);
const char *pl_grid_padding_name(int v);

/* The attributes an op of type has where its model gives none (ONNX's
 * defaults, and the format's own for the others): set on a, the others
 * left. The model reader and the ONNX importer start every op from them. */
void pl_attrs_default(pl_optype type, pl_attrs *a);

const char *pl_coll_name(pl_coll c);
/* Every collective's name as messages list them ("all_reduce, ... or
 * send_recv"), into buf[0..n); returns buf. */
const char *pl_coll_names(char *buf, size_t n);

/* A collective an op needs by itself, over the ranks that differ only in the
 * split of one loop. bytes is S as nccl-tests counts it. */
typedef struct pl_opcoll {
	pl_coll kind;
	int loop;
	int backward;
	double bytes;
} pl_opcoll;

typedef struct pl_opwork {
	double gemm_flops_fwd, gemm_flops_bwd; /* tensor-core work */
	/* the output elements those GEMMs write (MatMul: the product's output
	 * forward, each input's gradient backward); 0 where the op's GEMMs are
	 * not priced by their shape (Conv, attention, recurrent cells) */
	double gemm_outs_fwd, gemm_outs_bwd;
	double vec_flops_fwd, vec_flops_bwd;   /* other arithmetic */
	double bytes_fwd, bytes_bwd;           /* memory traffic of the kernels */
	int kernels_fwd, kernels_bwd;
	double saved_bytes; /* activations kept from forward to backward */
	/* workspace the kernels hold while they run, beyond the op's inputs,
	 * outputs and saved bytes (a 16-bit loss's fp32 copy of the logits);
	 * transient memory at the op's forward and backward */
	double scratch_fwd, scratch_bwd;
	/* in, set by the caller before work(): the loss runs as one fused kernel
	 * (pl_cluster.loss_kernel); 0: as PyTorch's cross_entropy */
	int fused_loss;
	/* in, set by the caller: cross-entropies over the logits that the loop
	 * computes beside the loss each micro-batch, without gradients
	 * (pl_cluster.loss_metrics: training metrics) */
	int loss_metrics;
	/* in, set by the caller: norms run as PyTorch's composite ops (a pow,
	 * a mean, an rsqrt, products and casts, each its own kernel) instead of
	 * one fused kernel (pl_cluster.norm_kernel "unfused") */
	int unfused_norm;
	/* in, set by the caller: a mask before a softmax runs as a kernel of
	 * its own each way, as eager PyTorch (pl_cluster.mask_kernel "unfused");
	 * else in the softmax kernel */
	int unfused_mask;
	/* in, set by the caller: training-mode batch norm keeps each rank's
	 * statistics local (pl_cluster.bn_local; no collective) */
	int local_bn;
	/* in, set by the caller: a fused attention whose queries are cut over
	 * context-parallel ranks runs as PyTorch's ring attention, one kernel a
	 * key/value block and each block's output merged in fp32 by eager
	 * element-wise kernels (pl_cluster.cp_exchange "allgather": torch's
	 * context_parallel) */
	int cp_merge;
	/* memory-bound kernels the op runs beside its main ones (a ring
	 * attention's merges and gradient accumulation): their bytes and
	 * launches, priced at the memory bandwidth and launch cost whatever
	 * prices the main kernels, and added to their time */
	double side_bytes_fwd, side_bytes_bwd;
	int side_kernels_fwd, side_kernels_bwd;
	/* which tensors saved_bytes holds, at this op's local layout: inputs
	 * (bit i) and outputs (bit j); the rest is the op's own (dropout masks,
	 * norm statistics, loss probabilities). The cost model counts a saved
	 * tensor once, at its producer's layout (costmodel/cost.c). */
	uint8_t saves_in, saves_out;
	int ncoll;
	pl_opcoll coll[4];
	/* a fused attention's shape, for kernels priced by their measured rate
	 * (costmodel/attention.h): local query length, head dimension, causal
	 * mask; head_dim 0 for every other op */
	double attn_seq, attn_head_dim;
	int attn_causal;
} pl_opwork;

/* What the rest of the planner may ask of an op type, so that no code outside
 * graph/ops/ decides by the type itself. */
enum {
	PL_OPT_GEMM = 1u << 0,     /* a matrix product: its weights are a layer's */
	PL_OPT_ANCHOR = 1u << 1,   /* holds a large weight or the loss: placed first */
	PL_OPT_NORM = 1u << 2,     /* a normalisation: input 1 is a scale starting at one */
	PL_OPT_EXPERTS = 1u << 3,  /* MoE routing: attrs.groups counts whole token groups */
	PL_OPT_DISPATCH = 1u << 4, /* sends tokens to experts: output 0 leads with them */
	/* the attention's softmax, or the fused attention: where a layer's
	 * attention part sits (planner/parts.c) */
	PL_OPT_ATTENTION = 1u << 5,
	/* a whole attention core by itself (the fused attention): selective
	 * recompute runs it again alone */
	PL_OPT_ATTENTION_CORE = 1u << 6,
	/* a product that is a linear layer when one input is a param: what
	 * Transformer Engine runs in FP8 (pl_cluster.gemm_fp8) */
	PL_OPT_LINEAR = 1u << 7,
	/* the training loss: an output layer feeding it stays 16-bit under FP8 */
	PL_OPT_LOSS = 1u << 8,
};

enum { PL_DOMAIN_ANY, PL_DOMAIN_POSITIVE, PL_DOMAIN_UNIT, PL_DOMAIN_ABOVE_ONE };

typedef struct pl_op_rule {
	const char *name;
	int min_inputs, max_inputs, noutputs;
	unsigned traits; /* PL_OPT_* */
	/* Checks inputs and attributes, sets output shapes and dtypes
	 * (g->tensors[op->out[i]]) and fills op->spec. */
	pl_status (*infer)(pl_graph *g, pl_op *op, pl_err *err);
	/* Work of the local shard for split counts split[nloops]. */
	void (*work)(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
	/* The values an integer input holds lie in [0, range): a Gather's
	 * indices, a loss's labels. NULL, or 0 for an input, when none. */
	int64_t (*index_range)(const pl_graph *g, const pl_op *op, int input);
	/* The domain an input's values must lie in, where the function is
	 * defined and its slope finite (PL_DOMAIN_*; 0: any): synthetic values
	 * of it, drawn where it holds none of its own, are drawn inside it
	 * (PL_DOMAIN_POSITIVE, a variance or a divisor: [0.5, 1.5);
	 * PL_DOMAIN_UNIT, Asin's: [-0.5, 0.5); PL_DOMAIN_ABOVE_ONE, Acosh's:
	 * [1.5, 2.5)). NULL when no input has one. */
	int (*positive_input)(const pl_graph *g, const pl_op *op, int input);
} pl_op_rule;

/* The case labels of every op type that is not element-wise, for switches
 * over the element-wise ones: they end with it and stay exhaustive, so the
 * compiler names a new type that one of them misses. */
#define PL_CASES_NOT_ELEMENTWISE                                                                   \
	case PL_OP_MATMUL:                                                                         \
	case PL_OP_SOFTMAX:                                                                        \
	case PL_OP_LAYERNORM:                                                                      \
	case PL_OP_RMSNORM:                                                                        \
	case PL_OP_GATHER:                                                                         \
	case PL_OP_RESHAPE:                                                                        \
	case PL_OP_TRANSPOSE:                                                                      \
	case PL_OP_REDUCESUM:                                                                      \
	case PL_OP_REDUCEMEAN:                                                                     \
	case PL_OP_SCE:                                                                            \
	case PL_OP_MOE_DISPATCH:                                                                   \
	case PL_OP_MOE_COMBINE:                                                                    \
	case PL_OP_CONV:                                                                           \
	case PL_OP_CONVTRANSPOSE:                                                                  \
	case PL_OP_RNN:                                                                            \
	case PL_OP_GRU:                                                                            \
	case PL_OP_LSTM:                                                                           \
	case PL_OP_CUMSUM:                                                                         \
	case PL_OP_REDUCEMAX:                                                                      \
	case PL_OP_REDUCEMIN:                                                                      \
	case PL_OP_REDUCEPROD:                                                                     \
	case PL_OP_PAD:                                                                            \
	case PL_OP_MAXPOOL:                                                                        \
	case PL_OP_AVGPOOL:                                                                        \
	case PL_OP_BATCHNORM:                                                                      \
	case PL_OP_EXPAND:                                                                         \
	case PL_OP_CONCAT:                                                                         \
	case PL_OP_SLICE:                                                                          \
	case PL_OP_RESIZE:                                                                         \
	case PL_OP_ATTENTION:                                                                      \
	case PL_OP_ARGMAX:                                                                         \
	case PL_OP_ARGMIN:                                                                         \
	case PL_OP_TOPK:                                                                           \
	case PL_OP_ONEHOT:                                                                         \
	case PL_OP_GATHERELEMENTS:                                                                 \
	case PL_OP_GRIDSAMPLE:                                                                     \
	case PL_OP_COUNT

/* An Attention op's head size and value head size (whole on every rank). */
void pl_attention_head_sizes(const pl_op *op, int64_t *d, int64_t *dv);

/* The traits of op's type (PL_OPT_*). */
unsigned pl_op_traits(const pl_op *op);
/* How an element-wise op is priced by its place in the graph: nonzero when
 * it runs inside a product's epilogue or a softmax's kernel (its
 * neighbours decide, not its own shapes), else 0. Ops that differ here are
 * not priced alike. */
int pl_op_fusion(const pl_graph *g, const pl_op *op);

/* Returns the rule for a type; never NULL for a valid type. */
const pl_op_rule *pl_op_rule_get(pl_optype t);
/* Maps an ONNX-style name to a type; returns -1 if unknown, -2 if known but
 * not supported yet (Split). */
int pl_optype_parse(const char *s, pl_optype *out);

/* Checks split counts against the loop space and the device count.
 * Returns PL_OK or PL_EINVAL with a message about the op. */
pl_status pl_op_check_split(const pl_op *op, const int64_t *split, int64_t devices, pl_err *err);

/* MindSpore-style per-input tuples <-> loop splits.
 * to_tuples writes tuples[i][d] for every input i and dim d. */
void pl_op_split_to_tuples(const pl_graph *g, const pl_op *op, const int64_t *split,
                           int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK]);
/* ranks[i] is the number of entries given for input i. */
pl_status pl_op_tuples_to_split(const pl_graph *g, const pl_op *op,
                                int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK], const int *ranks,
                                int ntuples, int64_t *split, pl_err *err);

/* Enumerates candidate strategies: split counts per loop whose product is D
 * (or, if no such split exists, the largest product that divides D), each
 * split dividing its loop and only splittable loops split. Writes up to max
 * strategies (nloops each) into out and returns how many exist. */
int pl_op_enumerate(const pl_op *op, int64_t devices, int64_t *out, int max);
/* The same with product `want` (a divisor of devices): the op replicated
 * over devices / want copies. */
int pl_op_enumerate_product(const pl_op *op, int64_t devices, int64_t want, int64_t *out, int max);

int64_t pl_split_product(const pl_op *op, const int64_t *split);

/* MoE: the slots each expert has in each token group (see ops/moe.c). */
int64_t pl_moe_capacity(const pl_attrs *a, int64_t tokens, int64_t experts);

#endif
