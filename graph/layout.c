/* Layouts and the redistribution planner.
 *
 * Both layouts are first rewritten on the common refinement of their device
 * matrices (possible when the row-major block boundaries of one nest in the
 * other's, which holds whenever D is a prime power and in most other cases).
 * There the plan is: resolve partial sums (reduce-scatter straight into a
 * dimension the target cuts next along that axis, else one all-reduce), undo
 * cuts the target does not share (all-to-all when the freed axis is the next
 * cut of another dimension, else all-gather), then cut locally (slice).
 * Without a common refinement: all-reduce, all-gather everything, slice.
 * Each primitive carries its device matrix and group axes, so a group is
 * recomputed the same way by the cost model, the executor and the tests. */
#include "graph/layout.h"

#include <assert.h>
#include <string.h>

static const char *const prim_names[] = {"slice", "all_gather", "all_to_all", "reduce_scatter",
                                         "all_reduce"};
_Static_assert(sizeof prim_names / sizeof *prim_names == PL_PRIM_COUNT, "prim names");

const char *pl_prim_name(pl_prim_kind k)
{
	return k < PL_PRIM_COUNT ? prim_names[k] : "?";
}

pl_coll pl_prim_coll(pl_prim_kind k)
{
	switch (k) {
	case PL_PRIM_ALL_GATHER: return PL_COLL_ALL_GATHER;
	case PL_PRIM_ALL_TO_ALL: return PL_COLL_ALL_TO_ALL;
	case PL_PRIM_REDUCE_SCATTER: return PL_COLL_REDUCE_SCATTER;
	case PL_PRIM_ALL_REDUCE: return PL_COLL_ALL_REDUCE;
	case PL_PRIM_SLICE: /* local: no collective */
	case PL_PRIM_COUNT: break;
	}
	return PL_COLL_COUNT;
}

int64_t pl_devmat_product(const pl_devmat *dm)
{
	int64_t p = 1;
	for (int a = 0; a < dm->n; a++)
		p *= dm->size[a];
	return p;
}

static void strides(const pl_devmat *dm, int64_t *s)
{
	int64_t acc = 1;
	for (int a = dm->n - 1; a >= 0; a--) {
		s[a] = acc;
		acc *= dm->size[a];
	}
}

void pl_op_devmat(const pl_op *op, const int64_t *split, int64_t devices, pl_devmat *dm,
                  int *loop_axis)
{
	memset(dm, 0, sizeof *dm);
	int64_t rep = devices / pl_split_product(op, split);
	if (rep > 1 && !op->replica_minor)
		dm->size[dm->n++] = rep;
	for (int l = 0; l < op->spec.nloops; l++) {
		loop_axis[l] = -1;
		if (split[l] > 1) {
			loop_axis[l] = dm->n;
			dm->size[dm->n++] = split[l];
		}
	}
	if (rep > 1 && op->replica_minor)
		dm->size[dm->n++] = rep;
}

static void base_layout(const pl_tensor *t, const pl_dimmap *m, const int *loop_axis,
                        const int64_t *split, const pl_devmat *dm, pl_layout *out)
{
	memset(out, 0, sizeof *out);
	out->dm = *dm;
	out->rank = t->rank;
	out->elem_bytes = pl_dtype_bytes(t->dtype);
	for (int d = 0; d < t->rank; d++) {
		out->shape[d] = t->shape[d];
		if (m[d].count && split[m[d].first] > 1) {
			out->nmap[d] = 1;
			out->map[d][0] = (int8_t)loop_axis[m[d].first];
		}
	}
}

/* The layout of op's input i (or output i when output) under split, before
 * any partial sums; la: each loop's device-matrix axis (-1: not split) */
static void op_layout(const pl_graph *g, const pl_op *op, const int64_t *split, int64_t devices,
                      int output, int i, int *la, pl_layout *out)
{
	pl_devmat dm;
	pl_op_devmat(op, split, devices, &dm, la);
	if (output)
		base_layout(&g->tensors[op->out[i]], op->spec.out[i], la, split, &dm, out);
	else
		base_layout(&g->tensors[op->in[i]], op->spec.in[i], la, split, &dm, out);
}

void pl_op_input_layout(const pl_graph *g, const pl_op *op, const int64_t *split, int64_t devices,
                        int i, pl_layout *out)
{
	int la[PL_MAX_LOOPS];
	op_layout(g, op, split, devices, 0, i, la, out);
}

void pl_op_output_layout(const pl_graph *g, const pl_op *op, const int64_t *split, int64_t devices,
                         int i, pl_layout *out)
{
	int la[PL_MAX_LOOPS];
	op_layout(g, op, split, devices, 1, i, la, out);
	for (int l = 0; l < op->spec.nloops; l++)
		if (la[l] >= 0 && op->spec.loop[l].kind == PL_LOOP_REDUCE)
			out->partial |= 1u << la[l];
}

void pl_op_input_grad_layout(const pl_graph *g, const pl_op *op, const int64_t *split,
                             int64_t devices, int i, pl_layout *out)
{
	int la[PL_MAX_LOOPS];
	op_layout(g, op, split, devices, 0, i, la, out);
	uint32_t seen = 0;
	for (int d = 0; d < out->rank; d++)
		for (int k = 0; k < out->nmap[d]; k++)
			seen |= 1u << out->map[d][k];
	for (int l = 0; l < op->spec.nloops; l++)
		if (la[l] >= 0 && !(seen >> la[l] & 1))
			out->partial |= 1u << la[l];
}

int pl_devmat_equal(const pl_devmat *a, const pl_devmat *b)
{
	if (a->n != b->n)
		return 0;
	for (int k = 0; k < a->n; k++)
		if (a->size[k] != b->size[k])
			return 0;
	return 1;
}

int pl_layout_equal(const pl_layout *a, const pl_layout *b)
{
	if (a->rank != b->rank || a->partial != b->partial || a->elem_bytes != b->elem_bytes ||
	    !pl_devmat_equal(&a->dm, &b->dm))
		return 0;
	for (int d = 0; d < a->rank; d++) {
		if (a->shape[d] != b->shape[d] || a->nmap[d] != b->nmap[d])
			return 0;
		for (int k = 0; k < a->nmap[d]; k++)
			if (a->map[d][k] != b->map[d][k])
				return 0;
	}
	return 1;
}

void pl_layout_local_shape(const pl_layout *l, int64_t *shape)
{
	for (int d = 0; d < l->rank; d++) {
		shape[d] = l->shape[d];
		for (int k = 0; k < l->nmap[d]; k++)
			shape[d] /= l->dm.size[l->map[d][k]];
	}
}

double pl_layout_local_bytes(const pl_layout *l)
{
	int64_t s[PL_MAX_RANK];
	pl_layout_local_shape(l, s);
	double b = l->elem_bytes;
	for (int d = 0; d < l->rank; d++)
		b *= (double)s[d];
	return b;
}

/* ---- common refinement of two device matrices ---- */

static int breakpoints(const pl_devmat *dm, int64_t *bp)
{
	int n = 0;
	int64_t acc = 1;
	bp[n++] = 1;
	for (int a = dm->n - 1; a >= 0; a--) {
		acc *= dm->size[a];
		bp[n++] = acc;
	}
	return n;
}

static int refine(const pl_devmat *a, const pl_devmat *b, pl_devmat *r)
{
	int64_t ba[PL_MAX_AXES + 1], bb[PL_MAX_AXES + 1], u[2 * PL_MAX_AXES + 2];
	int na = breakpoints(a, ba), nb = breakpoints(b, bb), nu = 0, i = 0, j = 0;
	while (i < na || j < nb) { /* merge two ascending lists */
		int64_t v = j >= nb || (i < na && ba[i] <= bb[j]) ? ba[i] : bb[j];
		if (i < na && ba[i] == v)
			i++;
		if (j < nb && bb[j] == v)
			j++;
		u[nu++] = v;
	}
	if (nu - 1 > PL_MAX_AXES)
		return 0;
	memset(r, 0, sizeof *r);
	r->n = nu - 1;
	for (int k = 1; k < nu; k++) {
		if (u[k] % u[k - 1])
			return 0;
		r->size[nu - 1 - k] = u[k] / u[k - 1];
	}
	return 1;
}

/* where each axis of in falls on its refinement r: the axes of r it covers */
static void cover_of(const pl_devmat *in, const pl_devmat *r, int8_t (*cover)[PL_MAX_AXES],
                     int8_t *ncover)
{
	int64_t so[PL_MAX_AXES], sr[PL_MAX_AXES];
	strides(in, so);
	strides(r, sr);
	for (int k = 0; k < in->n; k++) {
		int64_t lo = so[k], hi = so[k] * in->size[k];
		ncover[k] = 0;
		for (int j = 0; j < r->n; j++)
			if (sr[j] >= lo && sr[j] * r->size[j] <= hi)
				cover[k][ncover[k]++] = (int8_t)j;
	}
}

static void expand(const pl_layout *in, const pl_devmat *r, const int8_t (*cover)[PL_MAX_AXES],
                   const int8_t *ncover, pl_layout *out)
{
	*out = *in;
	out->dm = *r;
	out->partial = 0;
	for (int d = 0; d < in->rank; d++) {
		int n = 0;
		for (int k = 0; k < in->nmap[d]; k++)
			for (int c = 0; c < ncover[in->map[d][k]]; c++)
				out->map[d][n++] = cover[in->map[d][k]][c];
		out->nmap[d] = (int8_t)n;
	}
	for (int k = 0; k < in->dm.n; k++)
		if (in->partial >> k & 1)
			for (int c = 0; c < ncover[k]; c++)
				out->partial |= 1u << cover[k][c];
}

void pl_refine(const pl_devmat *a, const pl_devmat *b, pl_refinement *out)
{
	out->ok = refine(a, b, &out->r);
	if (!out->ok)
		return;
	cover_of(a, &out->r, out->cover[0], out->ncover[0]);
	cover_of(b, &out->r, out->cover[1], out->ncover[1]);
}

/* ---- planning ---- */

typedef struct planner_state {
	pl_layout cur;
	int64_t local[PL_MAX_RANK];
	pl_redist *out;
} planner_state;

static double local_bytes(const planner_state *s)
{
	double b = s->cur.elem_bytes;
	for (int d = 0; d < s->cur.rank; d++)
		b *= (double)s->local[d];
	return b;
}

static void emit(planner_state *s, pl_prim_kind kind, const int8_t *axes, int naxes, int dim,
                 int dim2, double bytes)
{
	assert(s->out->n < PL_MAX_PRIMS);
	if (s->out->n >= PL_MAX_PRIMS)
		return;
	pl_prim *p = &s->out->p[s->out->n++];
	p->kind = kind;
	/* only the live part of the matrix: this is the planner's hot path */
	p->dm.n = s->cur.dm.n;
	memcpy(p->dm.size, s->cur.dm.size, sizeof(int64_t) * (size_t)s->cur.dm.n);
	p->naxes = naxes;
	p->group_size = 1;
	for (int k = 0; k < naxes; k++) {
		p->axes[k] = axes[k];
		p->group_size *= s->cur.dm.size[axes[k]];
	}
	p->dim = dim;
	p->dim2 = dim2;
	p->bytes = bytes;
}

/* One all-reduce over every axis still holding partial sums. */
static void reduce_partial(planner_state *s)
{
	pl_layout *cur = &s->cur;
	if (!cur->partial)
		return;
	int8_t axes[PL_MAX_AXES];
	int n = 0;
	for (int a = 0; a < cur->dm.n; a++)
		if (cur->partial >> a & 1)
			axes[n++] = (int8_t)a;
	emit(s, PL_PRIM_ALL_REDUCE, axes, n, -1, -1, local_bytes(s));
	cur->partial = 0;
}

/* Is cur's list for d a proper prefix of tgt's, followed there by axis a? */
static int next_cut_is(const pl_layout *cur, const pl_layout *tgt, int d, int a)
{
	int n = cur->nmap[d];
	if (n >= tgt->nmap[d])
		return 0;
	for (int k = 0; k < n; k++)
		if (cur->map[d][k] != tgt->map[d][k])
			return 0;
	return tgt->map[d][n] == a;
}

static int common_prefix(const pl_layout *a, const pl_layout *b, int d)
{
	int k = 0;
	while (k < a->nmap[d] && k < b->nmap[d] && a->map[d][k] == b->map[d][k])
		k++;
	return k;
}

static void plan_refined(planner_state *s, const pl_layout *tgt)
{
	pl_layout *cur = &s->cur;
	/* 1. partial sums */
	for (int changed = 1; changed && cur->partial;) {
		changed = 0;
		for (int a = 0; a < cur->dm.n; a++) {
			if (!(cur->partial >> a & 1))
				continue;
			for (int d = 0; d < cur->rank; d++) {
				if (!next_cut_is(cur, tgt, d, a))
					continue;
				int8_t ax = (int8_t)a;
				double before = local_bytes(s);
				emit(s, PL_PRIM_REDUCE_SCATTER, &ax, 1, d, -1, before);
				cur->map[d][cur->nmap[d]++] = ax;
				s->local[d] /= cur->dm.size[a];
				cur->partial &= ~(1u << a);
				changed = 1;
				break;
			}
		}
	}
	reduce_partial(s);
	/* 2a. all-to-all where a freed axis is another dimension's next cut */
	for (int d = 0; d < cur->rank; d++) {
		int k = common_prefix(cur, tgt, d);
		if (cur->nmap[d] - k != 1)
			continue;
		int a = cur->map[d][k];
		for (int e = 0; e < cur->rank; e++) {
			if (e == d || !next_cut_is(cur, tgt, e, a))
				continue;
			int8_t ax = (int8_t)a;
			emit(s, PL_PRIM_ALL_TO_ALL, &ax, 1, d, e, local_bytes(s));
			cur->nmap[d] = (int8_t)k;
			s->local[d] *= cur->dm.size[a];
			cur->map[e][cur->nmap[e]++] = ax;
			s->local[e] /= cur->dm.size[a];
			break;
		}
	}
	/* 2b. all-gather what the target does not cut the same way */
	for (int d = 0; d < cur->rank; d++) {
		int k = common_prefix(cur, tgt, d);
		int n = cur->nmap[d] - k;
		if (n <= 0)
			continue;
		int64_t g = 1;
		for (int j = k; j < cur->nmap[d]; j++)
			g *= cur->dm.size[cur->map[d][j]];
		s->local[d] *= g;
		emit(s, PL_PRIM_ALL_GATHER, &cur->map[d][k], n, d, -1, local_bytes(s));
		cur->nmap[d] = (int8_t)k;
	}
	/* 3. local cuts */
	for (int d = 0; d < cur->rank; d++) {
		int k = cur->nmap[d], n = tgt->nmap[d] - k;
		if (n <= 0)
			continue;
		for (int j = k; j < tgt->nmap[d]; j++) {
			cur->map[d][cur->nmap[d]++] = tgt->map[d][j];
			s->local[d] /= cur->dm.size[tgt->map[d][j]];
		}
		emit(s, PL_PRIM_SLICE, &tgt->map[d][k], n, d, -1, local_bytes(s));
	}
}

static void plan_fallback(planner_state *s, const pl_layout *tgt)
{
	pl_layout *cur = &s->cur;
	reduce_partial(s);
	for (int d = 0; d < cur->rank; d++) {
		if (!cur->nmap[d])
			continue;
		s->local[d] = cur->shape[d];
		emit(s, PL_PRIM_ALL_GATHER, cur->map[d], cur->nmap[d], d, -1, local_bytes(s));
		cur->nmap[d] = 0;
	}
	cur->dm = tgt->dm;
	for (int d = 0; d < cur->rank; d++) {
		if (!tgt->nmap[d])
			continue;
		for (int j = 0; j < tgt->nmap[d]; j++)
			s->local[d] /= tgt->dm.size[tgt->map[d][j]];
		emit(s, PL_PRIM_SLICE, tgt->map[d], tgt->nmap[d], d, -1, local_bytes(s));
	}
}

void pl_refine_layout(const pl_refinement *f, int side, const pl_layout *l, pl_layout *out)
{
	if (f->ok)
		expand(l, &f->r, f->cover[side], f->ncover[side], out);
	else
		*out = *l;
}

void pl_redistribute_on(const pl_refinement *f, const pl_layout *src, const pl_layout *dst,
                        pl_redist *out)
{
	out->n = 0;
	planner_state s;
	s.out = out;
	s.cur = *src;
	pl_layout_local_shape(&s.cur, s.local);
	if (f->ok)
		plan_refined(&s, dst);
	else
		plan_fallback(&s, dst);
}

void pl_redistribute(const pl_layout *src, const pl_layout *dst, pl_redist *out)
{
	pl_refinement f;
	pl_layout a, b;
	pl_refine(&src->dm, &dst->dm, &f);
	pl_refine_layout(&f, 0, src, &a);
	pl_refine_layout(&f, 1, dst, &b);
	pl_redistribute_on(&f, &a, &b, out);
}

/* ---- groups ---- */

int64_t pl_devmat_coord(const pl_devmat *dm, const int8_t *axes, int naxes, int64_t rank)
{
	int64_t s[PL_MAX_AXES], c = 0;
	strides(dm, s);
	for (int k = 0; k < naxes; k++)
		c = c * dm->size[axes[k]] + (rank / s[axes[k]]) % dm->size[axes[k]];
	return c;
}

int64_t pl_prim_group(const pl_prim *p, int64_t rank, int64_t *members, int64_t *index)
{
	int64_t s[PL_MAX_AXES], base = rank;
	strides(&p->dm, s);
	for (int k = 0; k < p->naxes; k++)
		base -= ((rank / s[p->axes[k]]) % p->dm.size[p->axes[k]]) * s[p->axes[k]];
	for (int64_t i = 0; i < p->group_size; i++) {
		int64_t r = base, rem = i;
		for (int k = p->naxes - 1; k >= 0; k--) {
			int64_t sz = p->dm.size[p->axes[k]];
			r += (rem % sz) * s[p->axes[k]];
			rem /= sz;
		}
		if (members)
			members[i] = r;
	}
	if (index)
		*index = pl_devmat_coord(&p->dm, p->axes, p->naxes, rank);
	return p->group_size;
}

int pl_prim_intra_node(const pl_prim *p, int64_t devices_per_node)
{
	int64_t s[PL_MAX_AXES];
	strides(&p->dm, s);
	for (int k = 0; k < p->naxes; k++) {
		int64_t block = s[p->axes[k]] * p->dm.size[p->axes[k]];
		if (devices_per_node % block)
			return 0;
	}
	return 1;
}

int64_t pl_prim_node_spread(const pl_prim *p, int64_t devices_per_node, int64_t *per_node)
{
	/* Counts the members r < devices_per_node of rank 0's group without
	 * listing them: with the group axes in devmat order (strides falling),
	 * the later axes add less than one stride of the earlier, so the members
	 * with coordinate c on axis a lie in [c s_a, (c + 1) s_a): whole blocks
	 * below the bound count fully, one partial block is counted the same way
	 * on the later axes. */
	int64_t s[PL_MAX_AXES], rest[PL_MAX_AXES + 1], k = 0, n = devices_per_node;
	int8_t ax[PL_MAX_AXES];
	int na = p->naxes;
	strides(&p->dm, s);
	memcpy(ax, p->axes, sizeof *ax * (size_t)na);
	for (int i = 1; i < na; i++) /* insertion sort: a handful of axes */
		for (int j = i; j > 0 && ax[j - 1] > ax[j]; j--) {
			int8_t t = ax[j];
			ax[j] = ax[j - 1];
			ax[j - 1] = t;
		}
	rest[na] = 1;
	for (int i = na - 1; i >= 0; i--)
		rest[i] = rest[i + 1] * p->dm.size[ax[i]];
	int i = 0;
	for (; i < na; i++) {
		int64_t q = n / s[ax[i]];
		if (q >= p->dm.size[ax[i]]) {
			k += rest[i];
			break;
		}
		k += q * rest[i + 1];
		n -= q * s[ax[i]];
	}
	if (i == na && n > 0)
		k++; /* the member at the partial block's start */
	*per_node = k;
	return (p->group_size + k - 1) / k;
}

void pl_layout_ms(const pl_layout *l, int64_t *dev_matrix, int *ndev, int64_t *tensor_map)
{
	int n = l->dm.n;
	if (n == 0) {
		dev_matrix[0] = 1;
		*ndev = 1;
	} else {
		for (int a = 0; a < n; a++)
			dev_matrix[a] = l->dm.size[a];
		*ndev = n;
	}
	for (int d = 0; d < l->rank; d++)
		tensor_map[d] = l->nmap[d] ? n - 1 - l->map[d][0] : -1;
}

int pl_layout_partial_allreduce(const pl_layout *l, pl_prim *out)
{
	if (!l->partial)
		return 0;
	*out = (pl_prim){.kind = PL_PRIM_ALL_REDUCE,
	                 .dm = l->dm,
	                 .group_size = 1,
	                 .bytes = pl_layout_local_bytes(l),
	                 .dim = -1,
	                 .dim2 = -1};
	for (int a = 0; a < l->dm.n; a++)
		if (l->partial >> a & 1) {
			out->axes[out->naxes++] = (int8_t)a;
			out->group_size *= l->dm.size[a];
		}
	return 1;
}

int pl_op_coll_prim(const pl_op *op, const int64_t *split, int64_t devices, const pl_opcoll *c,
                    pl_prim *out)
{
	pl_devmat dm;
	int la[PL_MAX_LOOPS];
	pl_op_devmat(op, split, devices, &dm, la);
	if (la[c->loop] < 0)
		return 0;
	*out = (pl_prim){.dm = dm, .naxes = 1, .bytes = c->bytes, .dim = -1, .dim2 = -1};
	out->axes[0] = (int8_t)la[c->loop];
	out->group_size = dm.size[la[c->loop]];
	out->kind = c->kind == PL_COLL_ALL_GATHER       ? PL_PRIM_ALL_GATHER
	            : c->kind == PL_COLL_REDUCE_SCATTER ? PL_PRIM_REDUCE_SCATTER
	            : c->kind == PL_COLL_ALL_TO_ALL     ? PL_PRIM_ALL_TO_ALL
	                                                : PL_PRIM_ALL_REDUCE;
	return 1;
}
