/* Calibration on GPUs: cuBLAS GEMM throughput at several sizes (the compute
 * efficiency curve) and NCCL all_reduce, all_gather, reduce_scatter,
 * all_to_all and send/recv over group sizes 2..n of this process's GPUs
 * (ncclCommInitAll), or over the GPUs of several processes (one each, across
 * nodes too), 8 B up to max_bytes, timed with CUDA events after a
 * warm-up, fitted per collective and group size with the size-range alpha/
 * beta fit of costmodel/fit.h. With one GPU: the GEMM curve and one-rank NCCL
 * times (no bus traffic to fit). Built when CUDA and NCCL are found;
 * otherwise it reports that and fails. */
#ifndef PL_CALIBRATE_GPU_H
#define PL_CALIBRATE_GPU_H

#include "costmodel/cluster.h"
#include "executor/calibrate.h"
#include "topology/rendezvous.h"

struct cJSON;

/* 1 when this build can calibrate GPUs (CUDA, cuBLAS and NCCL found). */
int pl_calibrate_gpu_built(void);

/* No GPU (or no CUDA in this build): PL_EDEVICE with a message saying so. */
pl_status pl_calibrate_gpu(const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw,
                           pl_err *err);

/* The same over the processes of a multi-process launch (rdv), one GPU each
 * (its place among the ranks on its host). Host names give the nodes, each
 * with as many ranks. Groups: node 0's first 2..n ranks (the intra-node
 * link), the first rank of each of 2..nodes nodes (the inter-node link as
 * the hierarchical all-reduce uses it) and, on several nodes, all ranks
 * (inter-node). Every member times its own stream; rank 0 keeps the slowest,
 * measures the GEMM curve, fits and fills *out and *raw (the other ranks
 * return PL_OK with *raw NULL). Collective: every rank calls it. A rank that
 * fails leaves the others to the rendezvous time limit, or waiting in NCCL. */
pl_status pl_calibrate_gpu_ranks(const pl_calib_opts *o, pl_rdv *rdv, pl_cluster *out,
                                 struct cJSON **raw, pl_err *err);

#endif
