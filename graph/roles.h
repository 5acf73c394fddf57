/* What each loop of each op cuts, read off the data flow: the batch (data
 * parallel), the sequence (context parallel), the experts (expert parallel)
 * or the model (tensor parallel). Fixed configurations (--dp, --tp, --cp,
 * --ep) constrain an op's strategies by these roles. */
#ifndef PL_ROLES_H
#define PL_ROLES_H

#include <stdint.h>

#include "graph/graph.h"

typedef enum pl_loop_role {
	PL_LOOP_MODEL,  /* weights' dimensions, hidden sizes, heads, vocabulary */
	PL_LOOP_SEQ,    /* the sequence (dimension 1 of token ids or of [b, s, h] inputs) */
	PL_LOOP_EXPERT, /* the experts of a mixture (a MoEDispatch's output dimension 0) */
	PL_LOOP_DATA,   /* the batch (dimension 0 of every input) */
} pl_loop_role;

/* roles[o * PL_MAX_LOOPS + l]: the role of loop l of op o. A loop takes the
 * strongest role (data > expert > sequence > model) of the input dimensions
 * that start at it; an output dimension the role of its first loop. Inputs:
 * dimension 0 is the batch; dimension 1 is the sequence for token ids
 * (integer, rank 2) and [b, s, h] activations; params and consts are the
 * model's. Returns 0, or -1 out of memory (roles has g->nops * PL_MAX_LOOPS
 * entries). */
int pl_loop_roles(const pl_graph *g, uint8_t *roles);

/* Sequence parallelism (pl_degrees.seq_parallel). OFF, as Megatron-LM
 * without --sequence-parallel: ops that read no weight cut the sequence only
 * as context parallelism does and never the residual stream's width
 * (pl_stream_loops); what their cuts leave of the mesh replicates them
 * (norms, dropouts and residual adds computed on every tensor-parallel
 * rank). ON: they fill the mesh wherever they can (along the sequence, as
 * Megatron's --sequence-parallel, or another loop). AUTO: with tensor
 * parallelism fixed, each such op may do either, the search chooses. */
enum { PL_SEQ_PAR_AUTO = 0, PL_SEQ_PAR_ON, PL_SEQ_PAR_OFF };

/* Fixed parallel degrees of one stage's mesh (0: the search chooses), and
 * sequence parallelism (PL_SEQ_PAR_*). */
typedef struct pl_degrees {
	int64_t dp, tp, cp, ep;
	int seq_parallel;
} pl_degrees;

/* stream[o * PL_MAX_LOOPS + l] = 1 where loop l of op o runs over the width
 * of the residual stream: the model dimensions of the two activations a
 * residual connection (an Add of two activations of one shape, [b, s, h] or
 * [tokens, h]: not the rank-4 heads of a rotary embedding) sums, and
 * every dimension some op's loop ties to one of them (through the norms,
 * dropouts and adds on the way, the matmuls' contracted or output
 * dimensions on either end). Returns 0, or -1 out of memory. */
int pl_stream_loops(const pl_graph *g, const uint8_t *roles, uint8_t *stream);

/* op has a loop of this role (PL_LOOP_*) that it can cut */
int pl_op_can_cut_role(const pl_op *op, const uint8_t *roles, int role);

/* Whether an op strategy keeps to the degrees, as Megatron lays a layer
 * out: the batch loops are cut into exactly dp pieces (dp / ep where the op
 * also cuts the experts), the experts into ep, the sequence into a multiple
 * of cp. An op that reads a weight (a param of two or more dimensions:
 * matmuls, embeddings, experts) cuts its model loops into exactly tp pieces
 * and the sequence into exactly cp; any other op gives what is left of the
 * mesh to model loops (attention heads), to the sequence (sequence
 * parallel) or to replication (which candidates take only when they
 * cannot fill the mesh: pl_op_enumerate). A fused attention core (Attention)
 * whose heads divide by tp cuts them into exactly tp pieces and its
 * queries into exactly cp, as Megatron runs it. With seq_parallel OFF an op that
 * reads no weight cuts the sequence into exactly cp and no stream loop
 * (stream: the op's pl_stream_loops, may be NULL otherwise). An op with no
 * loop of a role is not held to that role's degree. */
int pl_split_keeps_degrees(const pl_graph *g, const pl_op *op, const uint8_t *roles,
                           const uint8_t *stream, const int64_t *split, const pl_degrees *d);

/* Whether t is a weight: a param of two or more dimensions (the matmuls',
 * embeddings' and experts' tables; not norms' scales or biases). What tensor
 * parallelism cuts. */
int pl_is_weight(const pl_tensor *t);

/* Whether op reads a weight (pl_is_weight). */
int pl_op_reads_weight(const pl_graph *g, const pl_op *op);

/* Whether any degree is fixed. */
int pl_degrees_any(const pl_degrees *d);

#endif
