/* Tensor layouts on device matrices, and redistribution between them.
 *
 * A device matrix cuts the D ranks row-major into axes (axis 0 is the major
 * one): rank = sum coord[a] * stride[a]. A layout maps each tensor dimension to
 * an ordered list of axes (major first; the dimension is cut into the product
 * of their sizes) and may hold partial sums over some axes. A redistribution
 * is the list of primitives that turns one layout into another; the cost model
 * prices that list and the executor runs it, so it is computed in one place. */
#ifndef PL_LAYOUT_H
#define PL_LAYOUT_H

#include <stdint.h>

#include "graph/graph.h"
#include "graph/ops.h"

#define PL_MAX_AXES  16
#define PL_MAX_PRIMS 12

typedef struct pl_devmat {
	int n;
	int64_t size[PL_MAX_AXES]; /* every size > 1; product = D */
} pl_devmat;

typedef struct pl_layout {
	pl_devmat dm;
	int rank;
	int64_t shape[PL_MAX_RANK]; /* global shape */
	int8_t nmap[PL_MAX_RANK];
	int8_t map[PL_MAX_RANK][PL_MAX_AXES];
	uint32_t partial; /* bit a: partial sums over axis a */
	int elem_bytes;
} pl_layout;

typedef enum pl_prim_kind {
	PL_PRIM_SLICE,          /* local: keep this rank's piece of dim along axes */
	PL_PRIM_ALL_GATHER,     /* concatenate dim over the group */
	PL_PRIM_ALL_TO_ALL,     /* gather dim, scatter dim2 over the group */
	PL_PRIM_REDUCE_SCATTER, /* sum over the group, scatter dim */
	PL_PRIM_ALL_REDUCE,     /* sum over the group */
	PL_PRIM_COUNT
} pl_prim_kind;

typedef struct pl_prim {
	pl_prim_kind kind;
	pl_devmat dm;
	int naxes;
	int8_t axes[PL_MAX_AXES]; /* group axes, first one most significant */
	int dim, dim2;
	int64_t group_size;
	double bytes; /* S as nccl-tests counts it; for SLICE the bytes kept */
} pl_prim;

typedef struct pl_redist {
	int n;
	pl_prim p[PL_MAX_PRIMS];
} pl_redist;

const char *pl_prim_name(pl_prim_kind k);
/* The NCCL collective a primitive is (PL_COLL_COUNT for SLICE). */
pl_coll pl_prim_coll(pl_prim_kind k);

int64_t pl_devmat_product(const pl_devmat *dm);

/* The device matrix of an op strategy: one axis per split loop, in loop
 * order, and a replication axis if the splits use fewer than D devices:
 * the first (major) axis, or the last where op->replica_minor.
 * loop_axis[l] receives the axis of loop l or -1. */
void pl_op_devmat(const pl_op *op, const int64_t *split, int64_t devices, pl_devmat *dm,
                  int *loop_axis);
/* Layout an op needs for input i / produces for output i. */
void pl_op_input_layout(const pl_graph *g, const pl_op *op, const int64_t *split, int64_t devices,
                        int i, pl_layout *out);
void pl_op_output_layout(const pl_graph *g, const pl_op *op, const int64_t *split, int64_t devices,
                         int i, pl_layout *out);
/* Layout of the gradient of input i as the op's backward leaves it: partial
 * sums over every axis that splits a loop this input does not see. */
void pl_op_input_grad_layout(const pl_graph *g, const pl_op *op, const int64_t *split,
                             int64_t devices, int i, pl_layout *out);

/* The all-reduce over the partial axes of l (a gradient left partial by an
 * op's backward, summed over its replicas). Returns 0 if l holds no partial
 * sums, else 1 with *out filled. */
int pl_layout_partial_allreduce(const pl_layout *l, pl_prim *out);
/* The primitive of one of an op's own collectives (pl_opwork.coll) under
 * split: over the ranks that differ only in the split of c->loop. Returns 0
 * if that loop is not split (nothing to run), else 1 with *out filled. */
int pl_op_coll_prim(const pl_op *op, const int64_t *split, int64_t devices, const pl_opcoll *c,
                    pl_prim *out);

/* Plans src -> dst (dst must hold no partial sums; same global shape).
 * Always succeeds for valid layouts. */
void pl_redistribute(const pl_layout *src, const pl_layout *dst, pl_redist *out);

/* pl_redistribute's first step, which depends on the two device matrices
 * only: their common refinement r (ok = 0: there is none) and, per side, the
 * axes of r each axis of that side's matrix covers. An edge table prices
 * many layout pairs on few pairs of matrices. */
typedef struct pl_refinement {
	int ok;
	pl_devmat r;
	int8_t cover[2][PL_MAX_AXES][PL_MAX_AXES];
	int8_t ncover[2][PL_MAX_AXES];
} pl_refinement;
void pl_refine(const pl_devmat *a, const pl_devmat *b, pl_refinement *out);
/* A layout on side `side` of f (its matrix is that side's), put on the
 * refinement; a copy where f has none. */
void pl_refine_layout(const pl_refinement *f, int side, const pl_layout *l, pl_layout *out);
/* pl_redistribute for layouts that pl_refine_layout put on f from opposite
 * sides. */
void pl_redistribute_on(const pl_refinement *f, const pl_layout *src, const pl_layout *dst,
                        pl_redist *out);

int pl_devmat_equal(const pl_devmat *a, const pl_devmat *b);
int pl_layout_equal(const pl_layout *a, const pl_layout *b);
/* Local piece shape of a layout (dims cut by their axes). */
void pl_layout_local_shape(const pl_layout *l, int64_t *shape);
double pl_layout_local_bytes(const pl_layout *l);

/* The members of the group of prim p that contains rank, in group order.
 * Returns the group size; *index receives rank's position in it. */
int64_t pl_prim_group(const pl_prim *p, int64_t rank, int64_t *members, int64_t *index);
/* Coordinate of rank along the axes of p's group (mixed radix, first axis most
 * significant) -- the piece index a SLICE keeps. */
int64_t pl_devmat_coord(const pl_devmat *dm, const int8_t *axes, int naxes, int64_t rank);
/* Whether every group of p lies inside one node of devices_per_node ranks. */
int pl_prim_intra_node(const pl_prim *p, int64_t devices_per_node);
/* How the group of p that holds rank 0 spreads over nodes of devices_per_node
 * ranks: returns the nodes it touches; *per_node receives how many of its
 * ranks share rank 0's node. */
int64_t pl_prim_node_spread(const pl_prim *p, int64_t devices_per_node, int64_t *per_node);

/* Writes the MindSpore-style layout fields: dev_matrix, tensor_map (counted
 * from the right, -1 = not split). Dims cut along several axes are written
 * with the major axis only. */
void pl_layout_ms(const pl_layout *l, int64_t *dev_matrix, int *ndev, int64_t *tensor_map);

#endif
