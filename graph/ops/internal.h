/* Shared helpers for the op rule files (not a public interface). */
#ifndef PL_OPS_INTERNAL_H
#define PL_OPS_INTERNAL_H

#include "graph/ops.h"

#define IN(g, op, i)  (&(g)->tensors[(op)->in[i]])
#define OUT(g, op, i) (&(g)->tensors[(op)->out[i]])

/* Adds a loop and returns its index. */
int pl__loop_add(pl_op *op, int64_t size, pl_loopkind kind, int splittable);
/* Maps dim d of input i (or output i when out is set) onto one loop. */
void pl__map(pl_op *op, int out, int i, int d, int loop);
void pl__set_out(pl_graph *g, pl_op *op, int i, int rank, const int64_t *shape, pl_dtype dt);
/* Local (per-rank) element count of input i / output i under split. */
double pl__local_in(const pl_graph *g, const pl_op *op, int i, const int64_t *split);
double pl__local_out(const pl_graph *g, const pl_op *op, int i, const int64_t *split);
/* Bytes of the same. */
double pl__local_in_bytes(const pl_graph *g, const pl_op *op, int i, const int64_t *split);
double pl__local_out_bytes(const pl_graph *g, const pl_op *op, int i, const int64_t *split);
int64_t pl__norm_axis(int64_t axis, int rank);
/* The op's `axis` attribute (dflt when absent) normalized for x, or an error. */
pl_status pl__check_axis(const pl_op *op, const pl_tensor *x, int64_t dflt, int64_t *axis,
                         pl_err *err);
/* PL_OK when x (an op's `role`: indices, labels) holds int32 or int64,
 * else an error that says so. */
pl_status pl__check_index_dtype(const pl_tensor *x, const char *role, pl_err *err);
/* PL_OK when every constant value of ix (none: indices computed at run time) addresses
 * axis `axis` of x, as ONNX allows: -n to n - 1; else an error naming the first that does
 * not. */
pl_status pl__check_index_values(const pl_tensor *ix, const pl_tensor *x, int64_t axis,
                                 pl_err *err);

pl_status pl__infer_elementwise(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_matmul(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_softmax(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_norm(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_gather(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_reshape(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_transpose(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_reduce(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_sce(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_moe(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_conv(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_convtranspose(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_pool(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_batchnorm(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_expand(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_concat(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_slice(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_pad(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_rnn(pl_graph *g, pl_op *op, pl_err *err);
pl_status pl__infer_attention(pl_graph *g, pl_op *op, pl_err *err);

void pl__work_elementwise(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_matmul(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_product(const pl_graph *g, const pl_op *op, const int64_t *split, int outs,
                      pl_opwork *w);
void pl__work_softmax(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_norm(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_gather(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_view(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_transpose(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_reduce(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_sce(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
int64_t pl__range_gather(const pl_graph *g, const pl_op *op, int input);
int64_t pl__range_sce(const pl_graph *g, const pl_op *op, int input);
pl_status pl__infer_resize(pl_graph *g, pl_op *op, pl_err *err);
void pl__work_resize(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
int pl__positive_divisor(const pl_graph *g, const pl_op *op, int input);
int pl__positive_power(const pl_graph *g, const pl_op *op, int input);
int pl__positive_operand(const pl_graph *g, const pl_op *op, int input);
int pl__positive_batchnorm(const pl_graph *g, const pl_op *op, int input);
void pl__work_moe(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_conv(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_pool(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_batchnorm(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_copy(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_cumsum(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_rnn(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
void pl__work_attention(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
pl_status pl__infer_argmax(pl_graph *g, pl_op *op, pl_err *err);
void pl__work_argmax(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
pl_status pl__infer_onehot(pl_graph *g, pl_op *op, pl_err *err);
void pl__work_onehot(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);
int64_t pl__range_onehot(const pl_graph *g, const pl_op *op, int input);
pl_status pl__infer_gather_elements(pl_graph *g, pl_op *op, pl_err *err);
void pl__work_gather_elements(const pl_graph *g, const pl_op *op, const int64_t *split,
                              pl_opwork *w);
int64_t pl__range_gather_elements(const pl_graph *g, const pl_op *op, int input);
pl_status pl__infer_gridsample(pl_graph *g, pl_op *op, pl_err *err);
void pl__work_gridsample(const pl_graph *g, const pl_op *op, const int64_t *split, pl_opwork *w);

#endif
