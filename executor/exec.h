/* The executor: lowers a model and a plan (split counts per op) to one SPMD
 * program -- per op, the redistributions of its inputs, its local kernel, and
 * in reverse the backward kernels, the gradient redistributions, the gradient
 * all-reduces and the optimizer update -- and runs it on a backend. The
 * collectives are the ones the cost model prices: the same pl_redistribute
 * lists on the same edges, the op rules' own collectives and the same
 * gradient all-reduces.
 *
 * Data is synthetic and deterministic: a param element, an input element or
 * a Dropout mask bit is a hash of (seed, tensor, global index), so any plan
 * on any number of ranks sees the same numbers; or given (opts.values: a
 * framework's weights and batch). All arithmetic is fp32 (a
 * model's 16-bit dtypes are computed in fp32). */
#ifndef PL_EXEC_H
#define PL_EXEC_H

#include <stdint.h>

#include "executor/backend.h"
#include "graph/graph.h"

typedef enum pl_optimizer { PL_OPT_SGD, PL_OPT_ADAM } pl_optimizer;

typedef struct pl_exec_opts {
	uint64_t seed;
	pl_optimizer optimizer;
	double lr;         /* 0: 1e-3 for Adam, 1e-2 for SGD */
	double grad_scale; /* the update sees the gradient times this (0: 1) */
	/* tests: this rank fails when it reaches this op's forward (-1: none) */
	int64_t fail_rank;
	int fail_op;
	/* pl_exec_profile's per-op times: on a device that queues its work
	 * (cuda), each stage's first rank waits for each op's work before reading the clock, so
	 * each op is charged its own time (a slower step; off: the times are
	 * those of the host queueing the work) */
	int profile;
	/* starting values given by name (NULL, 0: every param and data input
	 * drawn from the seed): a param's or a const's (row-major, every
	 * element), or a data input's (the whole batch: the rows of every
	 * micro-batch, m times the graph's elements); integers as floats (exact
	 * below 2^24). Borrowed: they must outlive the executor (a data input is
	 * read at every step). Errors (PL_EINVAL) name the tensor: none so
	 * named, a computed one, another count, an index out of its range. */
	const struct pl_exec_values *values;
	int nvalues;
	/* training-mode batch norm: each rank's statistics its own (the
	 * cluster's batch_norm "local", DDP's BatchNorm); 0: all-reduced over the
	 * ranks that cut the batch, what one device computes */
	int local_batchnorm;
} pl_exec_opts;

typedef struct pl_exec_values {
	const char *name;
	const float *v;
	int64_t n;
} pl_exec_values;

typedef struct pl_exec pl_exec;

/* A whole-job plan's settings, as the cost model prices them
 * (costmodel/cost.h's pl_job) for one stage:
 *   micro_batches  m >= 1: g is one micro-batch's graph (pl_graph_microbatch);
 *                  a step runs m forward and backward passes, accumulating the
 *                  params' gradients, and reduces them once (ZeRO 0, 1);
 *   zero           0..3 over each param's replicas (the ranks its gradient is
 *                  reduced over): 1 reduce-scatters the accumulated gradients,
 *                  updates a shard of the weights with a shard of Adam's state
 *                  and all-gathers them; 2 reduce-scatters every micro-batch's
 *                  gradients into a shard; 3 also keeps a shard of the weights,
 *                  all-gathered before every micro-batch's forward and backward;
 *   recompute      per op (NULL: none): its forward, input redistributions
 *                  included, runs again before the backward.
 * The data of micro-batch k are rows k*B/m.. of the whole batch, so a plan's
 * losses equal the one-device, one-micro-batch losses. */
typedef struct pl_exec_job {
	int64_t micro_batches;
	int zero;
	const uint8_t *recompute;
	/* pipeline stages (0, 1: none) and per op its stage (non-decreasing);
	 * the splits are then for devices / stages ranks, and rank R is rank
	 * R % (devices / stages) of stage R / (devices / stages) (pp outermost,
	 * as Megatron numbers them). Each stage runs Megatron's 1F1B schedule
	 * over the micro-batches, holding at most stages - s of them; the
	 * tensors that cross a stage boundary (relayed through the stages
	 * between producer and consumer) and their gradients move between the
	 * same local rank of neighbouring stages.
	 * With virtual_stages v > 1 (interleaved 1F1B, Narayanan et al. 2021
	 * §2.2.2) stage[] holds each op's model chunk, 0..stages x v - 1 in op
	 * order, and chunk j runs on stage j mod stages; every stage runs
	 * Megatron's interleaved schedule (schedules.py,
	 * forward_backward_pipelining_with_interleaving: its warm-up of
	 * (stages - s - 1) x 2 + (v - 1) x stages chunk forwards, then one
	 * forward and one backward in turn), with micro-batches a multiple of
	 * the stages. Each exchange between chunks is a meeting of the two
	 * stages at the same place of one order of every forward, backward and
	 * exchange of the step (the schedules run together, each exchange right
	 * after what it carries is computed), so no stage waits on one that waits
	 * on it. */
	int64_t stages;
	const int *stage;
	int64_t virtual_stages; /* 0, 1: plain 1F1B */
} pl_exec_job;

/* splits[op] holds nloops split counts for `devices` ranks (checked here:
 * PL_EINVAL naming the op when one does not fit). The backend must have
 * `devices` ranks; the executor does not own it. job: NULL for a per-op plan
 * (one micro-batch, no ZeRO, no recompute, one stage). */
pl_status pl_exec_new(pl_exec **out, const pl_graph *g, int64_t devices, int64_t *const *splits,
                      pl_backend *be, const pl_exec_opts *o, pl_err *err);
pl_status pl_exec_new_job(pl_exec **out, const pl_graph *g, int64_t devices, int64_t *const *splits,
                          const pl_exec_job *job, pl_backend *be, const pl_exec_opts *o,
                          pl_err *err);
void pl_exec_free(pl_exec *ex);

/* One training step: forward, backward and (if update) the optimizer.
 * *loss receives the sum of the graph's outputs. PL_EDEVICE when a rank
 * failed; the message names the rank. Dropout masks change with each step
 * that updates. */
pl_status pl_exec_step(pl_exec *ex, int update, double *loss, pl_err *err);

/* Reads a tensor's whole value (what=0) or the gradient the last step left
 * for it (what=1) into global (its element count), assembling the ranks'
 * pieces and summing partial sums. Returns 0, or -1 if the tensor has no
 * such buffer (data inputs; gradients of tensors that need none) or the
 * backend failed to copy. */
int pl_exec_read(const pl_exec *ex, int tensor, int what, float *global);

/* Sets a param's whole value (its element count) on every rank. Returns 0,
 * or -1 if t is not a param or the backend failed to copy. */
int pl_exec_write(pl_exec *ex, int tensor, const float *global);

/* Number of collectives and bytes (as nccl-tests counts them) one step ran on
 * rank 0, by kind (pl_prim_kind, without SLICE). */
void pl_exec_comm_stats(const pl_exec *ex, int64_t *count, double *bytes);

/* Wall time per op in the last step, on the first rank of its stage (ranks
 * as processes: every process has every op's, summed): compute (forward and
 * backward kernels, gradient accumulation, the optimizer for the params the
 * op owns) and communication (redistributing its inputs, forward and
 * backward, and its gradient all-reduces) -- the split the cost model's
 * per-op table uses. Arrays of g->nops. */
void pl_exec_profile(const pl_exec *ex, double *compute_s, double *comm_s);

/* Bytes the executor allocated for rank 0 (or this process's rank), by the
 * categories of the cost model's breakdown (checkpoint.h's first five):
 * params' values, their gradients, Adam's moments; activations (tensors'
 * values, op inputs after redistribution, what backward keeps); transient
 * (activation gradients and scratch, at their most; ZeRO 3's gathered
 * weights). All fp32; buffers stay allocated for the run, as a caching
 * allocator keeps them (what is live when: pl_exec_memory_peak). */
enum {
	PL_EXEC_MEM_WEIGHTS,
	PL_EXEC_MEM_GRADIENTS,
	PL_EXEC_MEM_OPTIMIZER,
	PL_EXEC_MEM_ACTIVATIONS,
	PL_EXEC_MEM_TRANSIENT,
	PL_EXEC_MEM
};
void pl_exec_memory(const pl_exec *ex, double *bytes);

/* The most bytes live at once on that rank, by the same categories, as a
 * framework's allocator counts its tensors (PyTorch's max_memory_allocated):
 * weights, gradients and optimizer state for the whole run; an activation
 * from the op that computes it until its last reader's forward, or, when a
 * backward reads it (the op rules' saved inputs and outputs, a recomputed
 * layer's output, what goes to a later stage), until its micro-batch's
 * backward ends; an op's copy of an input in the layout it reads (gathered,
 * exchanged) during its forward and, when its backward reads it and the
 * producer holds the tensor, made again for its backward (as Megatron's
 * sequence parallelism gathers again); a recomputed op's outputs again from
 * the recompute, as long as its own forward would keep them (what the
 * segment's backward reads; the rest freed as in a forward); an
 * activation gradient from its first contribution until its producer's
 * backward; scratch while in use; ZeRO 3's gathered weights while gathered,
 * ZeRO 2 and 3's whole gradients until reduce-scattered. Buffers themselves
 * stay cached for the next micro-batch, as a caching allocator keeps them. */
void pl_exec_memory_peak(const pl_exec *ex, double *bytes);
/* The most bytes of every category live at once on that rank (each
 * category's own most, above, may come at different times): what the plan's
 * peak memory less its runtime reserve predicts; at (NULL, or PL_EXEC_MEM
 * doubles) receives the categories at that moment, what its breakdown
 * predicts. */
double pl_exec_memory_peak_total(const pl_exec *ex, double *at);

#endif
