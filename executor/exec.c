/* Lowering and the SPMD interpreter. Every rank walks the same program:
 *   forward, per op in topological order: each input is produced in the
 *     layout the op's strategy needs (a redistribution from the tensor's home
 *     layout -- its producer's output layout, or for a param its owner's input
 *     layout -- or synthetic data sliced directly), then the local kernel;
 *   backward, per op in reverse: the local backward kernel leaves each input
 *     gradient in pl_op_input_grad_layout (partial over the axes of loops the
 *     input does not see); a param's owner all-reduces it over those axes,
 *     every other edge redistributes it back to the home layout and adds it;
 *   update: SGD or Adam on each rank's piece of every param.
 * These are the cost model's edges, redistribution lists and gradient
 * all-reduces, built by the same functions. */
#include "executor/backend_impl.h"
#include "executor/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/cost.h"
#include "graph/layout.h"
#include "graph/ops.h"
#include "graph/clock.h"
#include "graph/alloc.h"

enum { IN_DATA, IN_ALIAS, IN_REDIST };

/* the most pipeline stages an interleaved plan runs on */
#define PL_EXEC_MAX_STAGES 256

/* one step of a stage's interleaved program: a chunk's forward or backward
 * of micro-batch mb (k: the chunk), or an exchange over the boundary after
 * chunk k (activations up, gradients down) */
enum xa_kind { XA_FWD, XA_BWD, XA_ACT, XA_GRAD };
typedef struct xact {
	int kind, mb, k;
} xact;

typedef struct xin {
	int tensor, kind;
	pl_layout l;     /* the layout the op reads */
	pl_redist fwd;   /* home -> l (IN_REDIST) */
	int grad, owner; /* needs a gradient; is the param's owner slot */
	pl_layout gl;    /* gradient as the backward kernel leaves it */
	pl_redist bwd;   /* gl -> home without partial sums (not the owner) */
	pl_prim sync;    /* owner: all-reduce over gl's partial axes (naxes 0: none) */
} xin;

/* A scratch buffer of the rank's backend. Every step asks for the same sizes
 * in the same order, so buffers freed in one step serve the next: after the
 * first step a rank allocates (and page-faults) nothing. */
typedef struct sbuf {
	size_t cap, used; /* used: the floats asked for (what the live bytes count) */
	float *p;
	int busy;
} sbuf;

typedef struct rankst {
	/* val, inb and saved are those of the micro-batch running: one of the
	 * stage's slots (sval, sinb, ssaved; a pipeline stage holds several
	 * micro-batches in flight), whose param entries are shared */
	float **val, **dval, **m, **v, **saved;
	float ***sval, ***ssaved;
	float *(**sinb)[PL_MAX_OP_INPUTS];
	int nslot, cur; /* slots, and the one running */
	/* per param reduced over replicas (sync): the complete gradients of its
	 * other consumers (cacc), ZeRO >= 2's accumulated gradient shard (gsh),
	 * ZeRO 3's weight shard (wsh) */
	float **cacc, **gsh, **wsh;
	double *lacc; /* per graph output's element: the step's sum over micro-batches */
	float *pend;  /* the gradients the next stage sent (boundary_elems after its stage) */
	float *(*inb)[PL_MAX_OP_INPUTS];
	sbuf *pool; /* every scratch buffer of the rank, busy or free */
	int npool, cappool;
	double mem[PL_EXEC_MEM]; /* bytes allocated, by category (exec.h) */
	/* bytes live now and at most, by category, as a framework's allocator
	 * counts what its tensors hold (buffers stay cached for the next
	 * micro-batch, as a caching allocator keeps them): per slot which
	 * values, redistributed inputs and kept scratch are live, per tensor
	 * whether its gradient is */
	double live[PL_EXEC_MEM], peak[PL_EXEC_MEM];
	double peak_all, at_peak[PL_EXEC_MEM]; /* the most of all live at once; then */
	char **vlive, **ilive, *glive, *wlive; /* wlive: ZeRO 3's gathered weights */
	char *segdone; /* per recomputed segment (its first op): recomputed this micro-batch */
} rankst;

struct pl_exec {
	const pl_graph *g;
	int64_t D;
	int64_t **split;
	pl_backend *be;
	pl_exec_opts o;
	xin (*in)[PL_MAX_OP_INPUTS];
	pl_layout *out_l; /* per op */
	pl_layout *home;  /* per tensor */
	char *has_home;
	int *owner;     /* per tensor: owning op of a param, else -1 */
	int64_t *range; /* per integer data tensor: values are in [0, range) */
	char *positive; /* per data tensor: the domain its values are drawn in (PL_DOMAIN_*) */
	const float **given; /* per tensor: its starting values (opts.values), or NULL */
	rankst *rs;
	int step, adam_t;
	/* a whole-job plan (pl_exec_job) */
	int64_t m;     /* micro-batches a step */
	int zero;      /* ZeRO level */
	uint8_t *rc;   /* per op: recomputed (NULL: none) */
	pl_prim *sync; /* per tensor: a param's gradient reduction over its replicas */
	/* pipeline stages: pp of M ranks each; per op its stage; per tensor the
	 * stages that hold it (a computed one: its producer's to its last
	 * consumer's; a param: its owner's), -1 for data */
	int64_t pp, M;
	int *stage, *tlo, *thi;
	/* interleaved 1F1B: V model chunks a stage (stage[] holds chunks, chunk j
	 * on stage j % pp); per stage its program (interleaved()) */
	int64_t V;
	struct xact *prog[PL_EXEC_MAX_STAGES];
	int nprog[PL_EXEC_MAX_STAGES];
	/* live-memory accounting: per computed tensor whether it is held until
	 * the backward (kept by the op rules and not recomputed, a recomputed
	 * layer's output, or sent to a later stage) and its last consumer; per
	 * op the inputs its backward reads */
	char *held;
	/* the same in a recomputed forward: what the segment's backward reads
	 * (its ops' saved inputs and outputs) lives until then, as autograd
	 * keeps a checkpointed layer's saved tensors and frees the rest */
	char *held_re;
	int *last, *seg_lo; /* seg_lo: a recomputed op's segment's first op */
	uint8_t *keep_in;
	char *other; /* per tensor: a param another op than its owner reads with a gradient */
	int64_t stat_count[PL_PRIM_COUNT];
	double stat_bytes[PL_PRIM_COUNT];
	double *prof; /* per op on its stage's first rank, the last step: compute, communication */
};

static size_t local_elems(const pl_layout *l)
{
	int64_t s[PL_MAX_RANK];
	pl_layout_local_shape(l, s);
	size_t n = 1;
	for (int d = 0; d < l->rank; d++)
		n *= (size_t)s[d];
	return n;
}

static void mem_take(rankst *st, int cat, double bytes)
{
	st->live[cat] += bytes;
	if (st->live[cat] > st->peak[cat])
		st->peak[cat] = st->live[cat];
	double all = 0;
	for (int k = 0; k < PL_EXEC_MEM; k++)
		all += st->live[k];
	if (all > st->peak_all) {
		st->peak_all = all;
		memcpy(st->at_peak, st->live, sizeof st->at_peak);
	}
}

/* flag *on becomes live (taking bytes under cat; *on is then 1 + cat) or 0
 * (giving them back to the category they were taken under) */
static void mem_mark(rankst *st, char *on, int want, int cat, double bytes)
{
	if (!on || (*on != 0) == (want != 0))
		return;
	if (want) {
		*on = (char)(1 + cat);
		mem_take(st, cat, bytes);
	} else {
		st->live[*on - 1] -= bytes;
		*on = 0;
	}
}

/* A buffer of at least n floats: the smallest free one that fits, else a new one. */
static float *scratch(pl_exec *ex, int64_t rank, size_t n)
{
	rankst *st = &ex->rs[rank];
	int best = -1;
	for (int i = 0; i < st->npool; i++)
		if (!st->pool[i].busy && st->pool[i].cap >= n &&
		    (best < 0 || st->pool[i].cap < st->pool[best].cap))
			best = i;
	if (best >= 0) { /* as a caching allocator splits a larger block: n counted */
		st->pool[best].busy = 1;
		st->pool[best].used = n;
		mem_take(st, PL_EXEC_MEM_TRANSIENT, sizeof(float) * (double)n);
		return st->pool[best].p;
	}
	if (st->npool == st->cappool) {
		int nc = st->cappool ? 2 * st->cappool : 64;
		sbuf *np = pl_realloc(st->pool, sizeof *np * (size_t)nc);
		if (!np)
			return NULL;
		st->pool = np;
		st->cappool = nc;
	}
	size_t cap = n ? n : 1;
	float *p = ex->be->alloc(ex->be, rank, cap);
	if (p) {
		st->pool[st->npool++] = (sbuf){cap, n, p, 1};
		mem_take(st, PL_EXEC_MEM_TRANSIENT, sizeof(float) * (double)n);
		st->mem[PL_EXEC_MEM_TRANSIENT] += sizeof(float) * (double)cap;
	}
	return p;
}

/* Gives a scratch buffer back to the rank's pool (NULL: nothing). */
static void unscratch(pl_exec *ex, int64_t rank, float *p)
{
	rankst *st = &ex->rs[rank];
	for (int i = 0; p && i < st->npool; i++)
		if (st->pool[i].p == p) {
			st->pool[i].busy = 0;
			st->live[PL_EXEC_MEM_TRANSIENT] -= sizeof(float) * (double)st->pool[i].used;
			return;
		}
}

static void piece_offsets(const pl_layout *l, int64_t rank, int64_t *off)
{
	int64_t s[PL_MAX_RANK];
	pl_layout_local_shape(l, s);
	for (int d = 0; d < l->rank; d++)
		off[d] = pl_devmat_coord(&l->dm, l->map[d], l->nmap[d], rank) * s[d];
}

static void to_xt(const pl_layout *l, float *v, pl_xt *x)
{
	x->rank = l->rank;
	pl_layout_local_shape(l, x->shape);
	x->n = local_elems(l);
	x->v = v;
}

/* calls fn(global flat index, local index) for each element of rank's piece */
static void each_global(const pl_layout *l, int64_t rank, void (*fn)(void *, uint64_t, size_t),
                        void *ud)
{
	int64_t s[PL_MAX_RANK], off[PL_MAX_RANK], ix[PL_MAX_RANK] = {0};
	pl_layout_local_shape(l, s);
	piece_offsets(l, rank, off);
	size_t n = local_elems(l);
	for (size_t i = 0; i < n; i++) {
		uint64_t gi = 0;
		for (int d = 0; d < l->rank; d++)
			gi = gi * (uint64_t)l->shape[d] + (uint64_t)(ix[d] + off[d]);
		fn(ud, gi, i);
		for (int d = l->rank - 1; d >= 0; d--) {
			if (++ix[d] < s[d])
				break;
			ix[d] = 0;
		}
	}
}

/* ---- synthetic data ---- */

typedef struct gen {
	float *dst;
	uint64_t key, off; /* off: added to the global index (earlier micro-batches' elements) */
	double lo, hi;
	int64_t range;       /* > 0: integers in [0, range) */
	const float *values; /* a const's own (by global index), or NULL */
} gen;

static void gen_one(void *ud, uint64_t gi, size_t i)
{
	gen *q = ud;
	if (q->values) {
		q->dst[i] = q->values[gi + q->off];
		return;
	}
	uint64_t h = pl_hash64(q->key ^ pl_hash64(gi + q->off));
	if (q->range > 0) {
		q->dst[i] = (float)(h % (uint64_t)q->range);
		return;
	}
	double u = (double)(h >> 11) * 0x1.0p-53;
	q->dst[i] = (float)(q->lo + (q->hi - q->lo) * u);
}

/* the synthetic value of rank's piece (layout l) of tensor t, into buffer
 * dst; data inputs of micro-batch mb (rows after the earlier ones') */
static int fill_tensor(const pl_exec *ex, int t, const pl_layout *l, int64_t rank, int mb,
                       float *dst)
{
	const pl_graph *g = ex->g;
	const pl_tensor *pt = &g->tensors[t];
	size_t n = local_elems(l);
	float *host = pl_malloc(sizeof(float) * (n ? n : 1));
	if (!host)
		return -1;
	gen q = {.dst = host,
	         .key = pl_hash64(ex->o.seed * 0x9e3779b97f4a7c15ULL + (uint64_t)t),
	         .values = ex->given[t] ? ex->given[t] : pt->values};
	if (pt->role == PL_ROLE_INPUT) /* a constant is the same in every micro-batch */
		q.off = (uint64_t)mb * (uint64_t)pl_tensor_elems(pt);
	if (pt->role == PL_ROLE_PARAM) {
		const pl_op *ow = &g->ops[ex->owner[t]];
		int norm_scale = (pl_op_traits(ow) & PL_OPT_NORM) && ow->in[1] == t;
		/* a product's weight: uniform over +-1/sqrt(fan-in), the fan-in its
		 * contraction (a MatMul's rows, a Conv's input channels of a group
		 * times its kernel) */
		double fan = pt->rank >= 2 ? (double)pt->shape[pt->rank - 2] : 0;
		if ((pl_op_traits(ow) & PL_OPT_GEMM) && ow->in[1] == t) {
			fan = 1;
			for (int l = 0; l < ow->spec.nloops; l++)
				if (ow->spec.loop[l].kind == PL_LOOP_REDUCE)
					fan *= (double)ow->spec.loop[l].size;
		}
		double s = fan > 0 ? 1 / sqrt(fan) : 0.1;
		q.lo = (norm_scale ? 1 : 0) - s;
		q.hi = (norm_scale ? 1 : 0) + s;
	} else if (ex->range[t] > 0) {
		q.range = ex->range[t];
	} else if (ex->positive[t]) {
		static const double lo[] = {[PL_DOMAIN_POSITIVE] = 0.5,
		                            [PL_DOMAIN_UNIT] = -0.5,
		                            [PL_DOMAIN_ABOVE_ONE] = 1.5};
		q.lo = lo[(int)ex->positive[t]];
		q.hi = q.lo + 1;
	} else {
		q.lo = -1;
		q.hi = 1;
	}
	each_global(l, rank % ex->M, gen_one, &q); /* the piece of the rank in its stage */
	int rc = ex->be->upload(ex->be, rank, dst, host, n);
	free(host);
	return rc;
}

/* ---- redistribution on one rank ---- */

/* copies piece k of n along dim of x (shape s) into dst */
static int take_piece(pl_backend *be, int64_t r, const float *x, const int64_t *s, int rank,
                      int dim, int64_t k, int64_t n, float *dst)
{
	int64_t pre = 1, post = 1;
	for (int d = 0; d < dim; d++)
		pre *= s[d];
	for (int d = dim + 1; d < rank; d++)
		post *= s[d];
	int64_t len = s[dim] / n;
	return be->copy(be, r, dst, (size_t)(len * post), x + k * len * post,
	                (size_t)(s[dim] * post), (size_t)(len * post), (size_t)pre);
}

/* parts[k] (each of shape s) concatenated along dim into dst */
static int put_pieces(pl_backend *be, int64_t r, const float *parts, const int64_t *s, int rank,
                      int dim, int64_t n, float *dst)
{
	int64_t pre = 1, post = 1, piece = 1;
	for (int d = 0; d < rank; d++)
		piece *= s[d];
	for (int d = 0; d < dim; d++)
		pre *= s[d];
	for (int d = dim + 1; d < rank; d++)
		post *= s[d];
	int64_t len = s[dim];
	for (int64_t k = 0; k < n; k++)
		if (be->copy(be, r, dst + k * len * post, (size_t)(n * len * post),
		             parts + k * piece, (size_t)(len * post), (size_t)(len * post),
		             (size_t)pre))
			return -1;
	return 0;
}

typedef struct rankctx {
	pl_exec *ex;
	int64_t rank; /* the backend's rank */
	int mb;       /* the micro-batch running */
	int64_t lr;   /* the rank in its stage's mesh (layouts and groups are of it) */
	int s;        /* its stage */
	int k;        /* the model chunk running (the stage, with plain 1F1B) */
} rankctx;

static int failed(rankctx *rc, const char *what)
{
	rc->ex->be->fail(rc->ex->be, rc->rank, what);
	return -1;
}

static pl_comm *group_comm(rankctx *rc, const pl_prim *p, int *idx)
{
	int64_t members[4096], id;
	if (p->group_size > 4096)
		return NULL;
	int64_t n = pl_prim_group(p, rc->lr, members, &id);
	for (int64_t k = 0; k < n; k++) /* the stage's mesh ranks, as the backend's */
		members[k] += rc->rank - rc->lr;
	*idx = (int)id;
	return rc->ex->be->comm(rc->ex->be, rc->rank, members, (int)n);
}

static void count_prim(rankctx *rc, const pl_prim *p)
{
	if (rc->rank != 0 || p->kind == PL_PRIM_SLICE)
		return;
	rc->ex->stat_count[p->kind]++;
	rc->ex->stat_bytes[p->kind] += p->bytes;
}

/* whether dim is the outermost of shape s that is cut into pieces (every
 * dim before it of size 1): its pieces are contiguous blocks */
static int outermost(const int64_t *s, int dim)
{
	for (int d = 0; d < dim; d++)
		if (s[d] != 1)
			return 0;
	return 1;
}

/* Runs r on src (local piece of layout l), leaving the result in dst (sized
 * for the target layout). As a framework's collectives do, each step reads
 * the last one's buffer and the last writes dst: a scratch buffer only
 * where a collective needs its pieces packed (a gather or an all-to-all
 * along a dimension that is not the outermost cut) and between steps. */
static int run_redist(rankctx *rc, const pl_layout *l, const pl_redist *r, const float *src,
                      float *dst, size_t dst_n)
{
	pl_exec *ex = rc->ex;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	int64_t s[PL_MAX_RANK];
	pl_layout_local_shape(l, s);
	size_t n = local_elems(l);
	if (r->n == 0 && dst_n == n) /* nothing to exchange: one copy */
		return be->copy(be, R, dst, n, src, n, n, 1);
	const float *cur = src;
	float *own = NULL; /* cur, when it is a scratch buffer of this call */
	for (int i = 0; i < r->n; i++) {
		const pl_prim *p = &r->p[i];
		int idx = 0;
		pl_comm *cm = NULL;
		count_prim(rc, p);
		int64_t g = p->group_size;
		if (p->kind == PL_PRIM_SLICE) {
			int64_t members[4096], id;
			if (g > 4096) {
				unscratch(ex, R, own);
				return failed(rc, "a rank group larger than 4096");
			}
			pl_prim_group(p, rc->lr, members, &id);
			idx = (int)id;
		} else if (!(cm = group_comm(rc, p, &idx))) {
			unscratch(ex, R, own);
			return be->failed(be) ? -1
			                      : failed(rc, "cannot create a communicator (out of "
			                                   "memory, or a group larger than 4096)");
		}
		size_t nn = n; /* this step's output */
		if (p->kind == PL_PRIM_ALL_GATHER)
			nn = n * (size_t)g;
		else if (p->kind == PL_PRIM_SLICE || p->kind == PL_PRIM_REDUCE_SCATTER)
			nn = n / (size_t)g;
		int last = i == r->n - 1 && nn == dst_n;
		float *nx = last ? dst : scratch(ex, R, nn), *tmp = NULL, *recv = NULL;
		int bad = !nx;
		if (!bad) {
			switch (p->kind) {
			case PL_PRIM_SLICE:
				bad = take_piece(be, R, cur, s, l->rank, p->dim, idx, g, nx);
				s[p->dim] /= g;
				break;
			case PL_PRIM_ALL_REDUCE:
				bad = be->copy(be, R, nx, n, cur, n, n, 1) ||
				      be->all_reduce(cm, idx, nx, n, 0);
				break;
			case PL_PRIM_ALL_GATHER:
				if (outermost(s, p->dim)) { /* the pieces concatenate in place */
					bad = be->all_gather(cm, idx, cur, nx, n);
				} else {
					bad = !(tmp = scratch(ex, R, nn)) ||
					      be->all_gather(cm, idx, cur, tmp, n) ||
					      put_pieces(be, R, tmp, s, l->rank, p->dim, g, nx);
				}
				s[p->dim] *= g;
				break;
			case PL_PRIM_REDUCE_SCATTER: {
				/* Within one index of the dimensions before dim, the
				 * pieces along dim are contiguous and in member order,
				 * and this member's piece of it lands contiguous in nx
				 * at the same index: one reduce-scatter per outer index,
				 * nothing packed (a whole packed copy is what the cost
				 * model does not count: it stages the output only). */
				size_t outer = 1;
				for (int d = 0; d < p->dim; d++)
					outer *= (size_t)s[d];
				size_t in = n / outer, piece = nn / outer;
				for (size_t a = 0; a < outer && !bad; a++)
					bad = be->reduce_scatter(cm, idx, cur + a * in, nx + a * piece,
					                         piece);
				s[p->dim] /= g;
				break;
			}
			case PL_PRIM_ALL_TO_ALL: {
				size_t c = n / (size_t)g;
				int64_t ps[PL_MAX_RANK];
				memcpy(ps, s, sizeof ps);
				ps[p->dim2] /= g;
				/* send chunk k along dim2 to member k; put what comes along dim */
				bad = !(tmp = scratch(ex, R, n)) || !(recv = scratch(ex, R, n));
				for (int64_t k = 0; k < g && !bad; k++)
					bad = take_piece(be, R, cur, s, l->rank, p->dim2, k, g,
					                 tmp + (size_t)k * c);
				bad = bad || be->all_to_all(cm, idx, tmp, recv, c) ||
				      put_pieces(be, R, recv, ps, l->rank, p->dim, g, nx);
				memcpy(s, ps, sizeof ps);
				s[p->dim] *= g;
				break;
			}
			case PL_PRIM_COUNT: bad = 1; break; /* not a primitive */
			}
		}
		unscratch(ex, R, recv);
		unscratch(ex, R, tmp);
		unscratch(ex, R, own);
		own = nx == dst ? NULL : nx;
		cur = nx;
		n = nn;
		if (bad) {
			unscratch(ex, R, own);
			if (be->failed(be))
				return -1;
			return failed(rc, "out of memory in a redistribution");
		}
	}
	if (n != dst_n) {
		unscratch(ex, R, own);
		return failed(rc, "internal error: a redistribution ended with the wrong size");
	}
	int bad = cur != dst && be->copy(be, R, dst, n, cur, n, n, 1);
	unscratch(ex, R, own);
	return bad ? -1 : 0;
}

/* ---- the program ---- */

/* The clock of the per-op profile (each stage's first rank records its
 * ops): when profiling on a device that queues its work, after that work is
 * done, so each op is charged its own */
static double prof_now(const rankctx *rc)
{
	pl_exec *ex = rc->ex;
	if (ex->o.profile && rc->lr == 0 && ex->be->wait)
		ex->be->wait(ex->be, rc->rank);
	return pl_now();
}

typedef struct sce_ud {
	rankctx *rc;
	pl_comm *cm;
	int idx;
} sce_ud;

static int sce_allreduce(void *ud, float *buf, size_t n, int max)
{
	sce_ud *u = ud;
	pl_exec *ex = u->rc->ex;
	if (u->rc->rank == 0) {
		ex->stat_count[PL_PRIM_ALL_REDUCE]++;
		ex->stat_bytes[PL_PRIM_ALL_REDUCE] += 4.0 * (double)n;
	}
	return ex->be->all_reduce(u->cm, u->idx, buf, n, max);
}

static void kctx_init(rankctx *rc, int o, pl_kctx *k, pl_xt *saved)
{
	pl_exec *ex = rc->ex;
	const pl_op *op = &ex->g->ops[o];
	memset(k, 0, sizeof *k);
	k->g = ex->g;
	k->op = op;
	k->gemm = ex->be->gemm;
	k->rank = rc->rank;
	k->seed = pl_hash64(ex->o.seed ^ (uint64_t)ex->step * 0x5851f42d4c957f2dULL);
	for (int i = 0; i < op->ninputs; i++)
		piece_offsets(&ex->in[o][i].l, rc->lr, k->in_off[i]);
	piece_offsets(&ex->out_l[o], rc->lr, k->out_off);
	if (ex->g->tensors[op->out[0]].rank > 0)
		k->out_off[0] += rc->mb * ex->g->tensors[op->out[0]].shape[0];
	k->loss_share = 1;
	k->saved = saved;
}

/* The rank group of the op's own collectives, as its rule reports them (the
 * cost model prices the same list): SoftmaxCrossEntropy's split class axis. */
static int op_coll_group(rankctx *rc, int o, sce_ud *u, pl_kctx *k)
{
	pl_exec *ex = rc->ex;
	const pl_op *op = &ex->g->ops[o];
	pl_opwork w;
	pl_prim p;
	memset(&w, 0, sizeof w);
	w.local_bn = ex->o.local_batchnorm;
	pl_op_rule_get(op->type)->work(ex->g, op, ex->split[o], &w);
	if (!w.ncoll || !pl_op_coll_prim(op, ex->split[o], ex->M, &w.coll[0], &p))
		return 0;
	u->rc = rc;
	if (!(u->cm = group_comm(rc, &p, &u->idx)))
		return failed(rc, "out of memory creating a communicator");
	k->class_allreduce = sce_allreduce;
	k->ud = u;
	k->loss_share = u->idx == 0;
	return 0;
}

/* Op o's forward on the rank: each input produced in the layout the op
 * reads, then its kernel. */
/* the live flags of slot k: tensor t's value, op o's input i (i =
 * PL_MAX_OP_INPUTS: what it keeps) */
static char *vflag(rankst *st, int t)
{
	return st->vlive ? &st->vlive[st->cur][t] : NULL;
}

static char *iflag(rankst *st, int o, int i)
{
	return st->ilive ? &st->ilive[st->cur][(size_t)o * (PL_MAX_OP_INPUTS + 1) + (size_t)i]
	                 : NULL;
}

static double bytes_of(const pl_layout *l)
{
	return sizeof(float) * (double)local_elems(l);
}

/* bytes op o keeps from its forward to its backward in its own buffer
 * (SoftmaxCrossEntropy's log-sum-exp) */
static double saved_bytes(const pl_exec *ex, int o)
{
	pl_xt in[PL_MAX_OP_INPUTS];
	for (int j = 0; j < ex->g->ops[o].ninputs; j++)
		to_xt(&ex->in[o][j].l, NULL, &in[j]);
	pl_kctx k = {.g = ex->g, .op = &ex->g->ops[o]};
	return sizeof(float) * (double)pl_kernel_saved_elems(&k, in);
}

/* Whether op o's input i is redistributed again for its backward
 * (pl_regathers, as the cost model prices it): its copy in the layout the op
 * reads is given back after the forward and made again before the backward. */
static int regathered(const pl_exec *ex, int o, int i)
{
	return ex->in[o][i].kind == IN_REDIST && pl_regathers(ex->g, ex->rc, o, i, ex->keep_in[o]);
}

/* Op o's forward on the rank: each input produced in the layout the op
 * reads, then its kernel. Live memory: its output and what it keeps become
 * live; an input copy its backward does not read, and a value whose last
 * reader this is and that nothing keeps, are given back (in a recompute,
 * nothing the segment's backward reads: held_re). */
static int op_forward_as(rankctx *rc, int o, int recomputing)
{
	pl_exec *ex = rc->ex;
	const pl_op *op = &ex->g->ops[o];
	rankst *st = &ex->rs[rc->rank];
	pl_xt in[PL_MAX_OP_INPUTS], out, saved;
	double t0 = prof_now(rc);
	/* what a recompute brings back lives for the backward that reads it: the
	 * backward's working set (transient), as the cost model counts it */
	const int A = recomputing ? PL_EXEC_MEM_TRANSIENT : PL_EXEC_MEM_ACTIVATIONS;
	for (int i = 0; i < op->ninputs; i++) {
		xin *xi = &ex->in[o][i];
		if (xi->kind != IN_ALIAS)
			mem_mark(st, iflag(st, o, i), 1, A, bytes_of(&xi->l));
		float *b = st->inb[o][i];
		if (xi->kind == IN_ALIAS)
			b = st->val[xi->tensor];
		else if (xi->kind == IN_REDIST &&
		         run_redist(rc, &ex->home[xi->tensor], &xi->fwd, st->val[xi->tensor], b,
		                    local_elems(&xi->l)))
			return -1;
		to_xt(&xi->l, b, &in[i]);
	}
	to_xt(&ex->out_l[o], st->val[op->out[0]], &out);
	double t1 = prof_now(rc);
	pl_kctx k;
	saved.v = st->saved[o];
	kctx_init(rc, o, &k, &saved);
	sce_ud u = {0};
	if (op_coll_group(rc, o, &u, &k))
		return -1;
	if (ex->be->forward(ex->be, &k, in, &out))
		return ex->be->failed(ex->be) ? -1 : failed(rc, "out of memory in a kernel");
	if (rc->lr == 0) {
		ex->prof[2 * o + 1] += t1 - t0;
		ex->prof[2 * o] += prof_now(rc) - t1;
	}
	mem_mark(st, vflag(st, op->out[0]), 1, A, bytes_of(&ex->out_l[o]));
	/* a recomputed op keeps nothing, but in its recompute what its backward
	 * reads; one saved inside a recomputed layer keeps what its kernel saved
	 * (its output is held) and gathers its inputs again (regathered) */
	int keeps = recomputing || !ex->rc || !ex->rc[o] || ex->rc[o] == PL_RC_SAVED;
	/* what its kernel kept: live while it runs, then kept for a backward
	 * that will read it, else given back */
	if (st->saved[o])
		mem_mark(st, iflag(st, o, PL_MAX_OP_INPUTS), 1, A, saved_bytes(ex, o));
	if (st->saved[o] && (!keeps || !ex->g->tensors[op->out[0]].requires_grad))
		mem_mark(st, iflag(st, o, PL_MAX_OP_INPUTS), 0, A, saved_bytes(ex, o));
	const char *held = recomputing ? ex->held_re : ex->held;
	for (int i = 0; i < op->ninputs; i++) {
		xin *xi = &ex->in[o][i];
		if (xi->kind != IN_ALIAS &&
		    (!(keeps && (ex->keep_in[o] >> i & 1)) || regathered(ex, o, i)))
			mem_mark(st, iflag(st, o, i), 0, A, bytes_of(&xi->l));
		int t = xi->tensor;
		if (ex->owner[t] < 0 && ex->has_home[t] && !held[t] && ex->last[t] == o)
			mem_mark(st, vflag(st, t), 0, A, bytes_of(&ex->home[t]));
	}
	return 0;
}

static int op_forward(rankctx *rc, int o)
{
	return op_forward_as(rc, o, 0);
}

/* After a micro-batch's backward: its activations and activation gradients
 * are given back. */
static void drop_micro_batch(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	for (int t = 0; st->vlive && t < ex->g->ntensors; t++)
		if (ex->has_home[t] && ex->owner[t] < 0 &&
		    (ex->V <= 1 || (ex->tlo[t] <= rc->k && rc->k <= ex->thi[t]))) {
			mem_mark(st, vflag(st, t), 0, PL_EXEC_MEM_ACTIVATIONS,
			         bytes_of(&ex->home[t]));
			mem_mark(st, &st->glive[t], 0, PL_EXEC_MEM_TRANSIENT,
			         bytes_of(&ex->home[t]));
		}
	for (int o = 0; st->ilive && o < ex->g->nops; o++)
		for (int i = 0; i <= PL_MAX_OP_INPUTS && (ex->V <= 1 || ex->stage[o] == rc->k);
		     i++) {
			char *f = iflag(st, o, i);
			if (*f)
				mem_mark(st, f, 0, PL_EXEC_MEM_ACTIVATIONS,
				         i < PL_MAX_OP_INPUTS ? bytes_of(&ex->in[o][i].l)
				                              : saved_bytes(ex, o));
		}
}

/* the rank's place in param t's replica group: its comm and index, the
 * group size and the shard length c (the local piece of n elements padded
 * to a multiple of the group) */
static pl_comm *replicas(rankctx *rc, int t, int *idx, size_t *r, size_t *c)
{
	const pl_prim *p = &rc->ex->sync[t];
	size_t n = local_elems(&rc->ex->home[t]);
	*r = (size_t)p->group_size;
	*c = (n + *r - 1) / *r;
	return group_comm(rc, p, idx);
}

/* elements of shard idx (length c) that lie inside the n of the piece */
static size_t shard_len(size_t n, size_t c, int idx)
{
	size_t lo = (size_t)idx * c;
	return lo >= n ? 0 : n - lo < c ? n - lo : c;
}

/* Where stage-mesh rank lr's ZeRO shard of param t lies in its local piece:
 * the shard length c into *c and the rank's index in the replica group
 * (returned; -1 for a group larger than 4096). */
static int shard_of(const pl_exec *ex, int t, int64_t lr, size_t *c)
{
	size_t n = local_elems(&ex->home[t]), g = (size_t)ex->sync[t].group_size;
	int64_t members[4096], id;
	*c = (n + g - 1) / g;
	if (g > 4096)
		return -1;
	pl_prim_group(&ex->sync[t], lr, members, &id);
	return (int)id;
}

/* ZeRO: every replica's shard (c elements at shard, padded) gathered into
 * the param's whole local piece w */
static int gather_shards(rankctx *rc, int t, const float *shard, float *w)
{
	pl_exec *ex = rc->ex;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	int idx;
	size_t r, c, n = local_elems(&ex->home[t]);
	pl_comm *cm = replicas(rc, t, &idx, &r, &c);
	float *send = scratch(ex, R, c), *recv = scratch(ex, R, r * c);
	pl_prim q = ex->sync[t];
	q.kind = PL_PRIM_ALL_GATHER;
	count_prim(rc, &q);
	int bad = !cm || !send || !recv || be->copy(be, R, send, c, shard, c, c, 1) ||
	          be->all_gather(cm, idx, send, recv, c) || be->copy(be, R, w, n, recv, n, n, 1);
	unscratch(ex, R, send);
	unscratch(ex, R, recv);
	return bad ? (be->failed(be) ? -1 : failed(rc, "out of memory gathering weights")) : 0;
}

/* ZeRO 3's gathered weights given back (after a forward or backward) */
static void drop_weights(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	for (int t = 0; st->wlive && t < ex->g->ntensors; t++)
		if (st->wlive[t])
			mem_mark(st, &st->wlive[t], 0, PL_EXEC_MEM_TRANSIENT,
			         bytes_of(&ex->home[t]));
}

/* ZeRO 3: each param's weights gathered from its replicas' shards (before a
 * micro-batch's forward, and again before its backward) */
static int gather_weights(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	for (int t = 0; t < ex->g->ntensors; t++) {
		if (!st->wsh[t])
			continue;
		double t0 = prof_now(rc);
		if (gather_shards(rc, t, st->wsh[t], st->val[t]))
			return -1;
		mem_mark(st, &st->wlive[t], 1, PL_EXEC_MEM_TRANSIENT, bytes_of(&ex->home[t]));
		if (rc->lr == 0)
			ex->prof[2 * ex->owner[t] + 1] += prof_now(rc) - t0;
	}
	return 0;
}

/* ---- pipeline stages ---- */

/* whether computed tensor t crosses the boundary after stage s: held there
 * and by a later stage */
static int crosses(const pl_exec *ex, int t, int s)
{
	return ex->owner[t] < 0 && ex->tlo[t] >= 0 && ex->tlo[t] <= s && s < ex->thi[t];
}

/* floats of the boundary after stage s: every crossing tensor's local piece */
static size_t boundary_elems(const pl_exec *ex, int s)
{
	size_t n = 0;
	for (int t = 0; t < ex->g->ntensors; t++)
		if (crosses(ex, t, s))
			n += local_elems(&ex->home[t]);
	return n;
}

/* Where in the rank's pending gradients those of the boundary after chunk
 * k, micro-batch slot `slot`, go: with plain 1F1B one buffer of the
 * boundary after the stage; interleaved, per slot the boundaries after each
 * of the stage's chunks, in chunk order. */
static size_t pend_at(const pl_exec *ex, int64_t s, int slot, int k)
{
	if (ex->V <= 1)
		return 0;
	size_t per = 0, at = 0;
	for (int64_t j = s; j + 1 < ex->pp * ex->V; j += ex->pp) {
		if (j < k)
			at += boundary_elems(ex, (int)j);
		per += boundary_elems(ex, (int)j);
	}
	return (size_t)slot * per + at;
}

/* The micro-batch i's slot becomes the rank's current activations. */
static void use_slot(rankctx *rc, int i)
{
	rankst *st = &rc->ex->rs[rc->rank];
	int k = i % st->nslot;
	st->cur = k;
	st->val = st->sval[k];
	st->inb = st->sinb[k];
	st->saved = st->ssaved[k];
}

enum { X_ACT = 1, X_GRAD = 2 };

/* One exchange over the boundary after chunk lo (a stage, with plain
 * 1F1B), between the rank at the same place of the two stages' meshes, as an
 * all-gather of the two: what it sends (X_ACT: the crossing tensors' values
 * of micro-batch slot's, going up; X_GRAD: their gradients, going down; 0:
 * zeros) and what it takes (X_ACT into slot's values; X_GRAD into the
 * pending gradients the backward of slot adds; 0: nothing). */
static int exchange(rankctx *rc, int lo, int send, int take, int slot)
{
	pl_exec *ex = rc->ex;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	rankst *st = &ex->rs[R];
	int64_t below = lo % ex->pp, above = (lo + 1) % ex->pp;
	int idx = rc->s == below ? 0 : 1;
	size_t n = boundary_elems(ex, lo);
	if (!n)
		return 0;
	int64_t members[2] = {below * ex->M + rc->lr, above * ex->M + rc->lr};
	pl_comm *cm = be->comm(be, R, members, 2);
	float *mine = scratch(ex, R, n), *both = scratch(ex, R, 2 * n);
	float **vals = slot >= 0 ? st->sval[slot % st->nslot] : NULL;
	double t0 = prof_now(rc);
	int bad = !cm || !mine || !both || be->fill(be, R, mine, n, 0);
	size_t at = 0;
	for (int t = 0; t < ex->g->ntensors && !bad; t++) {
		if (!crosses(ex, t, lo))
			continue;
		size_t k = local_elems(&ex->home[t]);
		const float *src = send == X_ACT ? vals[t] : send == X_GRAD ? st->dval[t] : NULL;
		if (src)
			bad = be->copy(be, R, mine + at, k, src, k, k, 1);
		at += k;
	}
	bad = bad || be->all_gather(cm, idx, mine, both, n);
	const float *theirs = bad ? NULL : both + (size_t)(1 - idx) * n;
	at = 0;
	for (int t = 0; t < ex->g->ntensors && !bad && take; t++) {
		if (!crosses(ex, t, lo))
			continue;
		size_t k = local_elems(&ex->home[t]);
		float *dst =
		    take == X_ACT
		        ? vals[t]
		        : st->pend + pend_at(ex, rc->s, slot < 0 ? 0 : slot % st->nslot, lo) + at;
		if (dst)
			bad = be->copy(be, R, dst, k, theirs + at, k, k, 1);
		at += k;
	}
	if (!bad && take == X_GRAD) /* held until its backward takes it */
		mem_take(st, PL_EXEC_MEM_TRANSIENT, sizeof(float) * (double)n);
	unscratch(ex, R, mine);
	unscratch(ex, R, both);
	if (rc->rank == 0)
		ex->prof[2 * (ex->g->nops)] += prof_now(rc) - t0;
	return bad ? (be->failed(be) ? -1 : failed(rc, "out of memory between stages")) : 0;
}

/* backward: the gradients the next stage sent for what it read, added */
static int take_pending(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	size_t at = pend_at(ex, rc->s, st->cur, rc->k);
	for (int t = 0; t < ex->g->ntensors; t++) {
		if (!crosses(ex, t, rc->k))
			continue;
		size_t k = local_elems(&ex->home[t]);
		if (st->dval[t] && ex->be->add(ex->be, rc->rank, st->dval[t], st->pend + at, k))
			return -1;
		if (st->dval[t])
			mem_mark(st, &st->glive[t], 1, PL_EXEC_MEM_TRANSIENT,
			         sizeof(float) * (double)k);
		at += k;
	}
	/* the received gradients are given back */
	st->live[PL_EXEC_MEM_TRANSIENT] -= sizeof(float) * (double)boundary_elems(ex, rc->k);
	return 0;
}

static int forward(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	const pl_graph *g = ex->g;
	rankst *st = &ex->rs[rc->rank];
	if (ex->zero == 3 && gather_weights(rc))
		return -1;
	for (int o = 0; o < g->nops; o++) {
		if (ex->stage[o] != rc->k)
			continue; /* another pipeline stage's (or chunk's) */
		if (ex->o.fail_rank == rc->rank && ex->o.fail_op == o) {
			char m[300];
			snprintf(m, sizeof m, "injected fault in the forward of op '%s'",
			         g->ops[o].name);
			return failed(rc, m);
		}
		for (int i = 0; ex->m > 1 && i < g->ops[o].ninputs;
		     i++) /* this micro-batch's rows */
			if (ex->in[o][i].kind == IN_DATA &&
			    fill_tensor(ex, ex->in[o][i].tensor, &ex->in[o][i].l, rc->rank, rc->mb,
			                st->inb[o][i]))
				return -1;
		if (op_forward(rc, o))
			return -1;
	}
	drop_weights(rc);
	if (ex->m == 1)
		return 0;
	for (int k = 0, at = 0; k < g->noutputs; k++) { /* the step's loss: the mean */
		int t = g->outputs[k];
		size_t n = local_elems(&ex->home[t]);
		if (!st->val[t] || ex->tlo[t] != rc->k) { /* another stage's, or chunk's */
			at += (int)n;
			continue;
		}
		float *host = pl_malloc(sizeof(float) * (n ? n : 1));
		if (!host || ex->be->download(ex->be, rc->rank, host, st->val[t], n)) {
			free(host);
			return host ? -1 : failed(rc, "out of memory");
		}
		for (size_t e = 0; e < n; e++)
			st->lacc[at + (int)e] += host[e] / (double)ex->m;
		at += (int)n;
		free(host);
	}
	return 0;
}

/* After the step's micro-batches: each output holds the step's mean. */
static int set_outputs(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	for (int k = 0, at = 0; ex->m > 1 && k < ex->g->noutputs; k++) {
		int t = ex->g->outputs[k];
		size_t n = local_elems(&ex->home[t]);
		if (!st->val[t]) {
			at += (int)n;
			continue;
		}
		float *host = pl_malloc(sizeof(float) * (n ? n : 1));
		if (!host)
			return failed(rc, "out of memory");
		for (size_t e = 0; e < n; e++) {
			host[e] = (float)st->lacc[at + (int)e];
			st->lacc[at + (int)e] = 0;
		}
		int bad = ex->be->upload(ex->be, rc->rank, st->val[t], host, n);
		free(host);
		if (bad)
			return -1;
		at += (int)n;
	}
	return 0;
}

/* The gradient reduction over each param's replicas once its micro-batch's
 * backward is done: ZeRO 2 and 3 reduce-scatter every micro-batch's
 * gradients into the shard; ZeRO 0 all-reduces the accumulated gradients
 * after the last micro-batch (ZeRO 1 reduce-scatters them in update). Then
 * the other consumers' complete contributions are added. */
/* A gradient bucket being filled: params whose reduction runs over one group
 * (comm, idx), their gradients packed into one all-reduce as PyTorch DDP and
 * Megatron pack them (PL_GRAD_BUCKET_BYTES, the size the cost model prices) */
typedef struct gbucket {
	pl_comm *cm;
	int idx, n;
	int t[256];
	size_t elems;
} gbucket;

/* all-reduces the bucket's gradients as one buffer, then adds each param's
 * complete contributions of its other consumers; the time is each param's
 * share by elements */
static int flush_bucket(rankctx *rc, gbucket *b)
{
	pl_exec *ex = rc->ex;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	rankst *st = &ex->rs[R];
	if (!b->n)
		return 0;
	double t0 = prof_now(rc);
	int one = b->n == 1;
	float *buf = one ? st->dval[b->t[0]] : scratch(ex, R, b->elems);
	int bad = !buf;
	size_t at = 0;
	for (int i = 0; i < b->n && !bad && !one; i++) {
		size_t k = local_elems(&ex->home[b->t[i]]);
		bad = be->copy(be, R, buf + at, k, st->dval[b->t[i]], k, k, 1);
		at += k;
	}
	bad = bad || be->all_reduce(b->cm, b->idx, buf, b->elems, 0);
	at = 0;
	for (int i = 0; i < b->n && !bad; i++) {
		int t = b->t[i];
		size_t k = local_elems(&ex->home[t]);
		if (!one)
			bad = be->copy(be, R, st->dval[t], k, buf + at, k, k, 1);
		if (!bad && st->cacc[t])
			bad = be->add(be, R, st->dval[t], st->cacc[t], k);
		at += k;
	}
	if (!one)
		unscratch(ex, R, buf);
	double dt = prof_now(rc) - t0;
	for (int i = 0; i < b->n && rc->lr == 0; i++)
		ex->prof[2 * ex->owner[b->t[i]] + 1] +=
		    dt * (double)local_elems(&ex->home[b->t[i]]) / (double)b->elems;
	b->n = 0;
	b->elems = 0;
	return bad ? (be->failed(be) ? -1 : failed(rc, "out of memory reducing gradients")) : 0;
}

static int reduce_grads(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	rankst *st = &ex->rs[R];
	int last = rc->mb == ex->m - 1;
	gbucket b = {0};
	const size_t cap = (size_t)(PL_GRAD_BUCKET_BYTES / sizeof(float));
	for (int t = 0; t < ex->g->ntensors; t++) {
		if (ex->owner[t] < 0 || !st->dval[t] || !ex->sync[t].naxes)
			continue;
		size_t n = local_elems(&ex->home[t]);
		double t0 = prof_now(rc);
		int bad = 0;
		if (ex->zero >= 2) {
			int idx;
			size_t r, c;
			pl_comm *cm = replicas(rc, t, &idx, &r, &c);
			float *send = scratch(ex, R, r * c), *part = scratch(ex, R, c);
			pl_prim q = ex->sync[t];
			q.kind = PL_PRIM_REDUCE_SCATTER;
			count_prim(rc, &q);
			bad = !cm || !send || !part || be->fill(be, R, send, r * c, 0) ||
			      be->copy(be, R, send, n, st->dval[t], n, n, 1) ||
			      be->reduce_scatter(cm, idx, send, part, c) ||
			      be->add(be, R, st->gsh[t], part, c);
			mem_mark(st, &st->glive[t], 0, PL_EXEC_MEM_TRANSIENT,
			         sizeof(float) * (double)n);
			unscratch(ex, R, send);
			unscratch(ex, R, part);
			if (rc->lr == 0)
				ex->prof[2 * ex->owner[t] + 1] += prof_now(rc) - t0;
		} else if (ex->zero == 0 && last) { /* into the bucket of its group */
			int idx;
			pl_comm *cm = group_comm(rc, &ex->sync[t], &idx);
			count_prim(rc, &ex->sync[t]);
			if (!cm)
				bad = 1;
			else if (b.n &&
			         (cm != b.cm || idx != b.idx || b.n == 256 || b.elems + n > cap) &&
			         flush_bucket(rc, &b))
				return -1;
			if (!bad) {
				b.cm = cm;
				b.idx = idx;
				b.t[b.n++] = t;
				b.elems += n;
			}
		}
		if (bad)
			return be->failed(be) ? -1 : failed(rc, "out of memory reducing gradients");
	}
	return flush_bucket(rc, &b);
}

/* Recompute, as Megatron's checkpointed layers run it: when the backward
 * reaches a recomputed segment (a run of recomputed ops, a layer of full
 * recompute or an attention core of selective), the segment's forward (its
 * input redistributions included) runs again first, but for the ops a
 * selective checkpoint saved (PL_RC_SAVED: their outputs are held). */
static int recompute_at(rankctx *rc, int o)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	if (!ex->rc || !ex->rc[o] || st->segdone[ex->seg_lo[o]])
		return 0;
	st->segdone[ex->seg_lo[o]] = 1;
	for (int k = ex->seg_lo[o]; k <= o; k++) /* a saved op is not run again */
		if (ex->stage[k] == rc->k && ex->rc[k] != PL_RC_SAVED && op_forward_as(rc, k, 1))
			return -1;
	return 0;
}

/* After op o's backward nothing reads its output, its input copies or
 * what it kept: given back. */
static void drop_after_backward(rankctx *rc, int o)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	const pl_op *op = &ex->g->ops[o];
	enum { A = PL_EXEC_MEM_ACTIVATIONS };
	mem_mark(st, vflag(st, op->out[0]), 0, A, bytes_of(&ex->out_l[o]));
	for (int i = 0; i < op->ninputs; i++)
		if (ex->in[o][i].kind != IN_ALIAS)
			mem_mark(st, iflag(st, o, i), 0, A, bytes_of(&ex->in[o][i].l));
	mem_mark(st, iflag(st, o, PL_MAX_OP_INPUTS), 0, A, saved_bytes(ex, o));
}

/* Whether op o's backward writes input i's gradient straight into the
 * tensor's gradient, as an autograd engine keeps a first contribution: an
 * activation's, the first (nothing added yet), in the tensor's own layout,
 * and no other input of o the same tensor. */
static int first_in_place(const pl_exec *ex, const rankst *st, int o, int i)
{
	const xin *xi = &ex->in[o][i];
	int t = xi->tensor;
	if (ex->owner[t] >= 0 || st->glive[t] || !st->dval[t] || xi->bwd.n > 0 ||
	    local_elems(&xi->gl) != local_elems(&ex->home[t]) || (st->cacc && st->cacc[t]))
		return 0;
	for (int j = 0; j < ex->g->ops[o].ninputs; j++)
		if (j != i && ex->in[o][j].tensor == t)
			return 0;
	return 1;
}

/* One op's backward on its rank: inputs regathered where the forward freed
 * them, the kernel, and each input's gradient brought home and added
 * (directly into the home buffer when it is the first and in place). */
static int backward_op(rankctx *rc, int o)
{
	pl_exec *ex = rc->ex;
	const pl_graph *g = ex->g;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	rankst *st = &ex->rs[R];
	const pl_op *op = &g->ops[o];
	int any = 0;
	if (ex->stage[o] != rc->k)
		return 0;
	if (recompute_at(rc, o))
		return -1;
	for (int i = 0; i < op->ninputs; i++)
		any |= ex->in[o][i].grad;
	if (!any || !st->dval[op->out[0]])
		return 0;
	pl_xt in[PL_MAX_OP_INPUTS], out, dout, din[PL_MAX_OP_INPUTS], saved;
	char direct[PL_MAX_OP_INPUTS] = {0};
	memset(din, 0, sizeof din);
	double t0 = prof_now(rc), tc = 0;
	int bad = 0;
	for (int i = 0; i < op->ninputs && !bad; i++) {
		xin *xi = &ex->in[o][i];
		if (regathered(ex, o, i)) {
			double tb = prof_now(rc);
			mem_mark(st, iflag(st, o, i), 1, PL_EXEC_MEM_ACTIVATIONS, bytes_of(&xi->l));
			bad = run_redist(rc, &ex->home[xi->tensor], &xi->fwd, st->val[xi->tensor],
			                 st->inb[o][i], local_elems(&xi->l));
			tc += prof_now(rc) - tb;
		}
		to_xt(&xi->l, xi->kind == IN_ALIAS ? st->val[xi->tensor] : st->inb[o][i], &in[i]);
		if (xi->grad) {
			to_xt(&xi->gl, NULL, &din[i]);
			direct[i] = first_in_place(ex, st, o, i);
			if (direct[i]) {
				din[i].v = st->dval[xi->tensor];
				mem_mark(st, &st->glive[xi->tensor], 1, PL_EXEC_MEM_TRANSIENT,
				         bytes_of(&ex->home[xi->tensor]));
			} else {
				din[i].v = scratch(ex, R, din[i].n);
			}
			bad |= !din[i].v;
		}
	}
	to_xt(&ex->out_l[o], st->val[op->out[0]], &out);
	to_xt(&ex->out_l[o], st->dval[op->out[0]], &dout);
	pl_kctx k;
	saved.v = st->saved[o];
	kctx_init(rc, o, &k, &saved);
	sce_ud u = {0}; /* the op's own collectives (BatchNormalization's sums) */
	if (!bad && op_coll_group(rc, o, &u, &k))
		bad = 1;
	if (!bad)
		bad = be->backward(be, &k, in, &out, &dout, din) ? 1 : 0;
	for (int i = 0; i < op->ninputs && !bad; i++) {
		xin *xi = &ex->in[o][i];
		if (!xi->grad || direct[i])
			continue;
		int t = xi->tensor;
		size_t n = local_elems(&ex->home[t]);
		float *add = din[i].v, *into = st->dval[t];
		double tb = prof_now(rc);
		/* (the owner's part is reduced in reduce_grads); a gradient in
		 * the home layout already is added as it is */
		if (!xi->owner) {
			if (xi->bwd.n > 0 || local_elems(&xi->gl) != n) {
				add = scratch(ex, R, n);
				bad = !add || run_redist(rc, &xi->gl, &xi->bwd, din[i].v, add, n);
			}
			if (st->cacc && st->cacc[t])
				into = st->cacc[t]; /* complete already: not reduced again */
		}
		tc += prof_now(rc) - tb;
		if (!bad)
			bad = be->add(be, R, into, add, n);
		if (into == st->dval[t] && ex->owner[t] < 0)
			mem_mark(st, &st->glive[t], 1, PL_EXEC_MEM_TRANSIENT,
			         sizeof(float) * (double)n);
		if (add != din[i].v)
			unscratch(ex, R, add);
	}
	for (int i = 0; i < op->ninputs; i++)
		if (!direct[i])
			unscratch(ex, R, din[i].v);
	/* its output's gradient is spent, and what its backward read */
	mem_mark(st, &st->glive[op->out[0]], 0, PL_EXEC_MEM_TRANSIENT, bytes_of(&ex->out_l[o]));
	drop_after_backward(rc, o);
	if (rc->lr == 0) {
		ex->prof[2 * o] += prof_now(rc) - t0 - tc;
		ex->prof[2 * o + 1] += tc;
	}
	if (bad)
		return be->failed(be) ? -1 : failed(rc, "out of memory in backward");
	return 0;
}

static int backward(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	const pl_graph *g = ex->g;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	rankst *st = &ex->rs[R];
	if (ex->zero == 3 && gather_weights(rc))
		return -1;
	if (st->segdone)
		memset(st->segdone, 0, (size_t)g->nops);
	/* activations' gradients start at zero; params' accumulate over the
	 * step's micro-batches (ZeRO 2 and 3 move them to the shard each time) */
	for (int t = 0; t < g->ntensors; t++) {
		int param = ex->owner[t] >= 0, shard = param && ex->zero >= 2 && ex->sync[t].naxes;
		/* the first micro-batch of the param's chunk */
		int first = param && rc->mb == 0 && ex->tlo[t] == rc->k;
		size_t n = local_elems(&ex->home[t]);
		if (st->dval[t] && (!param || first || shard) && be->fill(be, R, st->dval[t], n, 0))
			return -1;
		if (shard) /* the whole gradients live until reduce-scattered */
			mem_mark(st, &st->glive[t], 1, PL_EXEC_MEM_TRANSIENT,
			         sizeof(float) * (double)n);
		if (st->cacc && st->cacc[t] && first && be->fill(be, R, st->cacc[t], n, 0))
			return -1;
	}
	for (int k = 0; k < g->noutputs; k++) { /* the step's loss is the micro-batches' mean */
		int t = g->outputs[k];
		if (st->dval[t] &&
		    be->fill(be, R, st->dval[t], local_elems(&ex->home[t]), (float)(1.0 / ex->m)))
			return -1;
		if (st->dval[t])
			mem_mark(st, &st->glive[t], 1, PL_EXEC_MEM_TRANSIENT,
			         bytes_of(&ex->home[t]));
	}
	if (rc->k + 1 < ex->pp * ex->V && take_pending(rc))
		return -1; /* the gradients of what the next stage read */
	for (int o = g->nops - 1; o >= 0; o--)
		if (backward_op(rc, o))
			return -1;
	drop_weights(rc);
	int bad = ex->V > 1 ? 0 : reduce_grads(rc); /* interleaved: after the schedule */
	drop_micro_batch(rc);
	return bad;
}

/* A micro-batch's forward on the rank's stage, in its slot. */
static int run_forward(rankctx *rc, int i)
{
	rc->mb = i;
	use_slot(rc, i);
	return forward(rc);
}

static int run_backward(rankctx *rc, int i)
{
	rc->mb = i;
	use_slot(rc, i);
	return backward(rc);
}

/* Megatron's 1F1B schedule (schedules.py, forward_backward_pipelining_
 * without_interleaving) on the rank's stage s of pp: w = min(pp - s - 1, m)
 * forwards, then m - w times one forward and one backward, then the w
 * backwards left. Every exchange pairs with the neighbour's at the same
 * point of its schedule: recv_forward with send_forward,
 * send_forward_recv_backward with send_backward_recv_forward, recv_backward
 * with send_backward. With one stage: each micro-batch's forward and
 * backward in turn. */
static int schedule(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	int m = (int)ex->m, s = rc->s, up = s + 1 < ex->pp, down = s > 0;
	int warm = (int)(ex->pp - s - 1) < m ? (int)(ex->pp - s - 1) : m, rem = m - warm;
	for (int i = 0; i < warm; i++)
		if ((down && exchange(rc, s - 1, 0, X_ACT, i)) || run_forward(rc, i) ||
		    (up && exchange(rc, s, X_ACT, 0, i)))
			return -1;
	if (rem > 0 && down && exchange(rc, s - 1, 0, X_ACT, warm))
		return -1;
	for (int i = 0; i < rem; i++) {
		int f = warm + i;
		if (run_forward(rc, f) || (up && exchange(rc, s, X_ACT, X_GRAD, f)) ||
		    run_backward(rc, i) ||
		    (down && exchange(rc, s - 1, X_GRAD, i + 1 < rem ? X_ACT : 0, f + 1)))
			return -1;
	}
	for (int i = rem; i < m; i++)
		if ((up && exchange(rc, s, 0, X_GRAD, -1)) || run_backward(rc, i) ||
		    (down && exchange(rc, s - 1, X_GRAD, 0, -1)))
			return -1;
	return 0;
}

/* Stage s's program of the interleaved schedule (Megatron's order of chunk
 * forwards and backwards: forward number f is micro-batch
 * (f / (pp v)) pp + f % pp of local chunk (f % (pp v)) / pp, a backward the
 * same with the chunks from the last) and the exchanges, all stages' steps
 * put in one order: each stage runs on while its next step has what it
 * needs, each exchange goes in right after the step that computes what it
 * carries, into both stages' programs. The stages then meet at every
 * exchange in the same order, so none waits on one that waits on it. -1 out
 * of memory, or when the order stalls (it does not for micro-batches a
 * multiple of the stages). */
static int interleaved(pl_exec *ex)
{
	int pp = (int)ex->pp, V = (int)ex->V, m = (int)ex->m, K = pp * V, total = m * V;
	xact *task[PL_EXEC_MAX_STAGES];
	int at[PL_EXEC_MAX_STAGES] = {0}, cap = 2 * total + 4 * total + 1, rc = -1;
	char *done =
	    pl_calloc((size_t)m * (size_t)K * 4 + 1, 1); /* per mb, chunk: F, B, act, grad */
	for (int d = 0; d < pp; d++) {
		task[d] = pl_malloc(sizeof *task[d] * (size_t)(2 * total + 1));
		ex->prog[d] = pl_malloc(sizeof *ex->prog[d] * (size_t)cap);
		ex->nprog[d] = 0;
	}
	for (int d = 0; d < pp; d++)
		if (!task[d] || !ex->prog[d])
			goto out;
	if (!done)
		goto out;
	for (int d = 0; d < pp; d++) {
		int warm = m == pp ? total : (pp - d - 1) * 2 + (V - 1) * pp, n = 0, f = 0, b = 0;
		warm = warm < total ? warm : total;
		for (int i = 0; i < 2 * total; i++) {
			int fwd = i < warm     ? 1
			          : f == total ? 0
			          : b == total ? 1
			                       : (i - warm) % 2 == 0;
			int x = fwd ? f++ : b++, c = (x % K) / pp;
			task[d][n++] = (xact){fwd ? XA_FWD : XA_BWD, (x / K) * pp + x % pp,
			                      (fwd ? c : V - 1 - c) * pp + d};
		}
	}
#define DONE(mb, k, w) done[((size_t)(mb) * (size_t)K + (size_t)(k)) * 4 + (w)]
	for (int left = 2 * total * pp; left > 0;) {
		int moved = 0;
		for (int d = 0; d < pp; d++)
			while (at[d] < 2 * total) {
				xact t = task[d][at[d]];
				int ready = t.kind == XA_FWD
				                ? t.k == 0 || DONE(t.mb, t.k - 1, 2)
				                : DONE(t.mb, t.k, 0) &&
				                      (t.k == K - 1 || DONE(t.mb, t.k, 3));
				if (!ready)
					break;
				ex->prog[d][ex->nprog[d]++] = t;
				DONE(t.mb, t.k, t.kind == XA_FWD ? 0 : 1) = 1;
				at[d]++;
				left--;
				moved = 1;
				/* what it computed goes on to the next chunk's (previous
				 * chunk's) stage */
				int kb = t.kind == XA_FWD ? t.k : t.k - 1;
				if ((t.kind == XA_FWD && t.k + 1 < K) ||
				    (t.kind == XA_BWD && t.k > 0)) {
					xact x = {t.kind == XA_FWD ? XA_ACT : XA_GRAD, t.mb, kb};
					int other = (t.kind == XA_FWD ? t.k + 1 : t.k - 1) % pp;
					ex->prog[d][ex->nprog[d]++] = x;
					ex->prog[other][ex->nprog[other]++] = x;
					if (t.kind == XA_FWD)
						DONE(t.mb, kb, 2) =
						    1; /* chunk kb's output is there */
					else
						DONE(t.mb, kb, 3) =
						    1; /* chunk kb's output's gradient */
				}
			}
		if (!moved)
			goto out;
	}
#undef DONE
	rc = 0;
out:
	for (int d = 0; d < pp; d++)
		free(task[d]);
	free(done);
	return rc;
}

/* Stage s's program: its chunks' forwards and backwards and its part of
 * every exchange; then the gradients of its params reduced, as after the
 * last micro-batch's backward with plain 1F1B. */
static int schedule_interleaved(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	for (int i = 0; i < ex->nprog[rc->s]; i++) {
		const xact *a = &ex->prog[rc->s][i];
		int r = -1;
		switch ((enum xa_kind)a->kind) {
		case XA_FWD:
			rc->k = a->k;
			r = run_forward(rc, a->mb);
			break;
		case XA_BWD:
			rc->k = a->k;
			r = run_backward(rc, a->mb);
			break;
		case XA_ACT: {
			int below = a->k % ex->pp == rc->s;
			r = exchange(rc, a->k, below ? X_ACT : 0, below ? 0 : X_ACT, a->mb);
			break;
		}
		case XA_GRAD: {
			int below = a->k % ex->pp == rc->s;
			r = exchange(rc, a->k, below ? 0 : X_GRAD, below ? X_GRAD : 0, a->mb);
			break;
		}
		}
		if (r)
			return -1;
	}
	rc->mb = (int)ex->m - 1;
	return reduce_grads(rc);
}

/* ZeRO: the rank's shard of param t's gradient (ZeRO 1 reduce-scatters
 * the accumulated gradients now; 2 and 3 hold it), its other consumers'
 * contributions added, updates its shard of the weights with its shard of
 * Adam's state; ZeRO 1 and 2 then all-gather the weights (3 gathers them
 * before the next use). */
static int update_shard(rankctx *rc, int t, const pl_update *u)
{
	pl_exec *ex = rc->ex;
	pl_backend *be = ex->be;
	int64_t R = rc->rank;
	rankst *st = &ex->rs[R];
	int idx;
	size_t r, c, n = local_elems(&ex->home[t]);
	pl_comm *cm = replicas(rc, t, &idx, &r, &c);
	size_t len = shard_len(n, c, idx), lo = (size_t)idx * c;
	float *g = scratch(ex, R, c), *send = ex->zero == 1 ? scratch(ex, R, r * c) : NULL;
	int bad = !cm || !g || (ex->zero == 1 && !send);
	if (!bad && ex->zero == 1) {
		pl_prim q = ex->sync[t];
		q.kind = PL_PRIM_REDUCE_SCATTER;
		count_prim(rc, &q);
		bad = be->fill(be, R, send, r * c, 0) ||
		      be->copy(be, R, send, n, st->dval[t], n, n, 1) ||
		      be->reduce_scatter(cm, idx, send, g, c);
	} else if (!bad) {
		bad =
		    be->copy(be, R, g, c, st->gsh[t], c, c, 1) || be->fill(be, R, st->gsh[t], c, 0);
	}
	if (!bad && len && st->cacc[t])
		bad = be->add(be, R, g, st->cacc[t] + lo, len);
	float *w = ex->zero == 3 ? st->wsh[t] : st->val[t] + lo;
	if (!bad && len)
		bad = be->update(be, R, u, w, g, st->m[t], st->v[t], len);
	if (!bad && ex->zero < 3) {
		float *shard = scratch(ex, R, c);
		bad = !shard || be->fill(be, R, shard, c, 0) ||
		      (len && be->copy(be, R, shard, len, w, len, len, 1)) ||
		      gather_shards(rc, t, shard, st->val[t]);
		unscratch(ex, R, shard);
	}
	unscratch(ex, R, g);
	unscratch(ex, R, send);
	return bad ? (be->failed(be) ? -1 : failed(rc, "out of memory updating a shard")) : 0;
}

static int update(rankctx *rc)
{
	pl_exec *ex = rc->ex;
	rankst *st = &ex->rs[rc->rank];
	pl_update u = {.adam = ex->o.optimizer == PL_OPT_ADAM,
	               .lr = ex->o.lr > 0                     ? ex->o.lr
	                     : ex->o.optimizer == PL_OPT_ADAM ? 1e-3
	                                                      : 1e-2,
	               .grad_scale = ex->o.grad_scale > 0 ? ex->o.grad_scale : 1,
	               .b1 = 0.9,
	               .b2 = 0.999,
	               .eps = 1e-8};
	u.c1 = 1 - pow(u.b1, ex->adam_t);
	u.c2 = 1 - pow(u.b2, ex->adam_t);
	for (int t = 0; t < ex->g->ntensors; t++) {
		if (ex->owner[t] < 0 || !st->dval[t])
			continue;
		double t0 = prof_now(rc);
		if (ex->zero && ex->sync[t].naxes
		        ? update_shard(rc, t, &u)
		        : ex->be->update(ex->be, rc->rank, &u, st->val[t], st->dval[t], st->m[t],
		                         st->v[t], local_elems(&ex->home[t])))
			return -1;
		if (rc->lr == 0)
			ex->prof[2 * ex->owner[t]] += prof_now(rc) - t0;
	}
	return set_outputs(rc);
}

typedef struct steparg {
	pl_exec *ex;
	int update;
} steparg;

static int rank_step(void *arg, int64_t rank)
{
	steparg *sa = arg;
	int s = (int)(rank / sa->ex->M);
	rankctx rc = {sa->ex, rank, 0, rank % sa->ex->M, s, s};
	if (sa->ex->V > 1 ? schedule_interleaved(&rc) : schedule(&rc))
		return -1;
	rc.mb = 0;
	use_slot(&rc, 0);
	return sa->update ? update(&rc) : set_outputs(&rc);
}

pl_status pl_exec_step(pl_exec *ex, int upd, double *loss, pl_err *err)
{
	steparg sa = {ex, upd};
	memset(ex->stat_count, 0, sizeof ex->stat_count);
	memset(ex->prof, 0, sizeof(double) * 2 * (size_t)ex->g->nops);
	memset(ex->stat_bytes, 0, sizeof ex->stat_bytes);
	if (upd)
		ex->adam_t++;
	char msg[512];
	int rc = ex->be->launch(ex->be, rank_step, &sa, msg, sizeof msg);
	ex->step += upd; /* Dropout masks change with each training step */
	if (rc)
		return pl_err_set(err, PL_EDEVICE, "%s backend: %s", ex->be->name, msg);
	/* ranks as processes: each op's times are its stage's first process's */
	if (ex->o.profile && ex->be->self >= 0 &&
	    ex->be->sum_host(ex->be, ex->prof, 2 * (size_t)ex->g->nops + 1))
		return pl_err_set(err, PL_EDEVICE, "%s backend: summing the profile failed",
		                  ex->be->name);
	double l = 0;
	for (int k = 0; k < ex->g->noutputs; k++) {
		int t = ex->g->outputs[k];
		size_t n = (size_t)pl_tensor_elems(&ex->g->tensors[t]);
		float *v = pl_malloc(sizeof(float) * (n ? n : 1));
		if (!v)
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		if (!pl_exec_read(ex, t, 0, v))
			for (size_t e = 0; e < n; e++)
				l += v[e];
		free(v);
	}
	if (loss)
		*loss = l;
	return PL_OK;
}

typedef struct copyud {
	float *global, *local;
	int add_to_global;
} copyud;

static void copy_one(void *ud, uint64_t gi, size_t i)
{
	copyud *u = ud;
	if (u->add_to_global)
		u->global[gi] += u->local[i];
	else
		u->local[i] = u->global[gi];
}

/* Whether rank r runs in this process. */
static int here(const pl_exec *ex, int64_t r)
{
	return ex->be->self < 0 || ex->be->self == r;
}

int pl_exec_read(const pl_exec *ex, int t, int what, float *global)
{
	if (t < 0 || t >= ex->g->ntensors || !ex->has_home[t])
		return -1;
	pl_layout l = ex->home[t];
	int64_t me = ex->be->self < 0 ? 0 : ex->be->self;
	if (what) {
		if (!ex->rs[me].dval[t])
			return -1;
		l.partial = 0;
	}
	const pl_tensor *pt = &ex->g->tensors[t];
	size_t total = (size_t)pl_tensor_elems(pt);
	memset(global, 0, sizeof(float) * total);
	uint32_t used = l.partial;
	for (int d = 0; d < l.rank; d++)
		for (int k = 0; k < l.nmap[d]; k++)
			used |= 1u << l.map[d][k];
	int8_t rep[PL_MAX_AXES];
	int nrep = 0;
	for (int a = 0; a < l.dm.n; a++)
		if (!(used >> a & 1))
			rep[nrep++] = (int8_t)a;
	size_t n = local_elems(&l);
	float *host = pl_malloc(sizeof(float) * (n ? n : 1));
	if (!host)
		return -1;
	int rc = 0;
	/* ZeRO 3's weights: each replica adds its shard (the whole ones are stale
	 * after an update) */
	int shards = !what && ex->zero == 3 && ex->owner[t] >= 0 && ex->sync[t].naxes;
	for (int64_t r = 0; r < ex->D && !rc; r++) {
		int64_t lr = r % ex->M;
		if (!here(ex, r) || r / ex->M != ex->tlo[t] % ex->pp ||
		    (!shards && nrep && pl_devmat_coord(&l.dm, rep, nrep, lr) != 0))
			continue; /* another process's or stage's, or a replica */
		if (shards) {
			size_t c;
			int id = shard_of(ex, t, lr, &c);
			size_t len = id < 0 ? 0 : shard_len(n, c, id);
			memset(host, 0, sizeof(float) * n);
			rc = len ? ex->be->download(ex->be, r, host + (size_t)id * c,
			                            ex->rs[r].wsh[t], len)
			         : 0;
		} else {
			rc = ex->be->download(ex->be, r, host,
			                      what ? ex->rs[r].dval[t] : ex->rs[r].val[t], n);
		}
		copyud u = {global, host, 1};
		if (!rc)
			each_global(&l, lr, copy_one, &u);
	}
	free(host);
	if (ex->be->self >= 0) { /* the pieces of every process, summed */
		double *sum = pl_malloc(sizeof(double) * (total + 1));
		if (!sum)
			return -1; /* the other processes wait: the caller aborts */
		for (size_t e = 0; e < total; e++)
			sum[e] = global[e];
		sum[total] = rc ? 1 : 0;
		if (ex->be->sum_host(ex->be, sum, total + 1))
			rc = -1;
		for (size_t e = 0; e < total; e++)
			global[e] = (float)sum[e];
		if (sum[total] > 0)
			rc = -1;
		free(sum);
	}
	return rc;
}

int pl_exec_write(pl_exec *ex, int t, const float *global)
{
	if (t < 0 || t >= ex->g->ntensors || ex->owner[t] < 0)
		return -1;
	const pl_layout *l = &ex->home[t];
	size_t n = local_elems(l);
	float *host = pl_malloc(sizeof(float) * (n ? n : 1));
	if (!host)
		return -1;
	int rc = 0;
	for (int64_t r = 0; r < ex->D && !rc; r++) {
		if (!here(ex, r) || r / ex->M != ex->tlo[t] % ex->pp)
			continue;
		copyud u = {(float *)global, host, 0};
		each_global(l, r % ex->M, copy_one, &u);
		rc = ex->be->upload(ex->be, r, ex->rs[r].val[t], host, n);
		if (!rc && ex->rs[r].wsh[t]) { /* ZeRO 3: the rank's shard of it */
			size_t c;
			int id = shard_of(ex, t, r % ex->M, &c);
			size_t len = id < 0 ? 0 : shard_len(n, c, id);
			rc = len ? ex->be->upload(ex->be, r, ex->rs[r].wsh[t],
			                          host + (size_t)id * c, len)
			         : 0;
		}
	}
	free(host);
	return rc;
}

void pl_exec_comm_stats(const pl_exec *ex, int64_t *count, double *bytes)
{
	memcpy(count, ex->stat_count, sizeof ex->stat_count);
	memcpy(bytes, ex->stat_bytes, sizeof ex->stat_bytes);
}

/* ---- building ---- */

void pl_exec_free(pl_exec *ex)
{
	if (!ex)
		return;
	const pl_graph *g = ex->g;
	pl_backend *be = ex->be;
	for (int64_t r = 0; ex->rs && r < ex->D; r++) {
		rankst *st = &ex->rs[r];
		for (int k = 0; st->sval && k < st->nslot; k++) {
			for (int t = 0; st->sval[k] && t < g->ntensors; t++)
				if (k == 0 || !ex->owner ||
				    ex->owner[t] < 0) /* params: shared by slots */
					be->release(be, r, st->sval[k][t]);
			for (int o = 0; o < g->nops; o++) {
				if (st->ssaved && st->ssaved[k])
					be->release(be, r, st->ssaved[k][o]);
				for (int i = 0; st->sinb && st->sinb[k] && i < PL_MAX_OP_INPUTS;
				     i++)
					be->release(be, r, st->sinb[k][o][i]);
			}
			if (st->sval[k])
				free(st->sval[k]);
			if (st->ssaved && st->ssaved[k])
				free(st->ssaved[k]);
			if (st->sinb && st->sinb[k])
				free(st->sinb[k]);
		}
		free(st->sval);
		free(st->ssaved);
		free(st->sinb);
		be->release(be, r, st->pend);
		for (int t = 0; t < g->ntensors; t++) {
			if (st->dval)
				be->release(be, r, st->dval[t]);
			if (st->m)
				be->release(be, r, st->m[t]);
			if (st->v)
				be->release(be, r, st->v[t]);
			if (st->cacc)
				be->release(be, r, st->cacc[t]);
			if (st->gsh)
				be->release(be, r, st->gsh[t]);
			if (st->wsh)
				be->release(be, r, st->wsh[t]);
		}
		free(st->dval);
		free(st->m);
		free(st->v);
		free(st->cacc);
		free(st->gsh);
		free(st->wsh);
		free(st->lacc);
		for (int k = 0; k < st->nslot; k++) {
			if (st->vlive)
				free(st->vlive[k]);
			if (st->ilive)
				free(st->ilive[k]);
		}
		free(st->vlive);
		free(st->ilive);
		free(st->glive);
		free(st->wlive);
		free(st->segdone);
		for (int i = 0; i < st->npool; i++)
			be->release(be, r, st->pool[i].p);
		free(st->pool);
	}
	free(ex->rs);
	for (int o = 0; ex->split && o < g->nops; o++)
		free(ex->split[o]);
	free(ex->split);
	free(ex->in);
	free(ex->out_l);
	free(ex->home);
	free(ex->has_home);
	free(ex->owner);
	free(ex->range);
	free(ex->positive);
	free(ex->given);
	free(ex->prof);
	free(ex->sync);
	free(ex->other);
	free(ex->stage);
	for (int d = 0; d < PL_EXEC_MAX_STAGES; d++)
		free(ex->prog[d]);
	free(ex->tlo);
	free(ex->thi);
	free(ex->held);
	free(ex->held_re);
	free(ex->last);
	free(ex->seg_lo);
	free(ex->keep_in);
	free(ex->rc);
	free(ex);
}

/* A buffer of n floats for rank r, counted under category cat. */
static float *counted(pl_exec *ex, int64_t r, size_t n, int cat)
{
	float *p = ex->be->alloc(ex->be, r, n);
	if (p)
		ex->rs[r].mem[cat] += sizeof(float) * (double)n;
	return p;
}

/* whether rank r's stage holds tensor t (its value) */
static int holds(const pl_exec *ex, int64_t r, int t)
{
	int s = (int)(r / ex->M);
	if (!ex->has_home[t] || ex->tlo[t] < 0)
		return 0;
	for (int k = ex->tlo[t]; k <= ex->thi[t]; k++) /* a chunk of its on the stage */
		if (k % ex->pp == s)
			return 1;
	return 0;
}

/* A param's buffers on rank r (its owner's stage): weights, gradients,
 * Adam's moments, and the ZeRO shards (Adam's state (1), the accumulated
 * gradients (2; the whole ones live for one micro-batch's backward) and the
 * weights (3; the whole ones only while gathered)). */
static int alloc_param(pl_exec *ex, int64_t r, int t)
{
	rankst *st = &ex->rs[r];
	size_t n = local_elems(&ex->home[t]), state = n, c = n;
	int zero = ex->sync[t].naxes ? ex->zero : 0;
	if (zero) {
		size_t rr = (size_t)ex->sync[t].group_size;
		c = (n + rr - 1) / rr;
		state = c;
	}
	if (!(st->val[t] =
	          counted(ex, r, n, zero == 3 ? PL_EXEC_MEM_TRANSIENT : PL_EXEC_MEM_WEIGHTS)) ||
	    (ex->g->tensors[t].requires_grad &&
	     !(st->dval[t] =
	           counted(ex, r, n, zero < 2 ? PL_EXEC_MEM_GRADIENTS : PL_EXEC_MEM_TRANSIENT))) ||
	    fill_tensor(ex, t, &ex->home[t], r, 0, st->val[t]))
		return -1;
	if (ex->o.optimizer == PL_OPT_ADAM &&
	    (!(st->m[t] = counted(ex, r, state, PL_EXEC_MEM_OPTIMIZER)) ||
	     !(st->v[t] = counted(ex, r, state, PL_EXEC_MEM_OPTIMIZER)) ||
	     ex->be->fill(ex->be, r, st->m[t], state, 0) ||
	     ex->be->fill(ex->be, r, st->v[t], state, 0)))
		return -1;
	if (ex->sync[t].naxes && ex->other[t] &&
	    !(st->cacc[t] = counted(ex, r, n, PL_EXEC_MEM_GRADIENTS)))
		return -1;
	if (zero >= 2 && (!(st->gsh[t] = counted(ex, r, c, PL_EXEC_MEM_GRADIENTS)) ||
	                  ex->be->fill(ex->be, r, st->gsh[t], c, 0)))
		return -1;
	if (zero == 3) { /* the rank's shard of the weights it was given */
		int id = shard_of(ex, t, r % ex->M, &c);
		if (id < 0)
			return -1;
		size_t len = shard_len(n, c, id);
		if (!(st->wsh[t] = counted(ex, r, c, PL_EXEC_MEM_WEIGHTS)) ||
		    ex->be->fill(ex->be, r, st->wsh[t], c, 0) ||
		    (len && ex->be->copy(ex->be, r, st->wsh[t], len, st->val[t] + (size_t)id * c,
		                         len, len, 1)))
			return -1;
	}
	return 0;
}

/* Slot k's activations on rank r: the computed tensors its stage holds,
 * its ops' redistributed inputs and data, what they keep (param entries
 * are the shared ones). */
static int alloc_slot(pl_exec *ex, int64_t r, int k)
{
	const pl_graph *g = ex->g;
	rankst *st = &ex->rs[r];
	size_t nt = (size_t)g->ntensors + 1, no = (size_t)g->nops + 1;
	float **val = st->sval[k] = pl_calloc(nt, sizeof(float *));
	float *(*inb)[PL_MAX_OP_INPUTS] = st->sinb[k] = pl_calloc(no, sizeof *inb);
	float **saved = st->ssaved[k] = pl_calloc(no, sizeof(float *));
	if (!val || !inb || !saved)
		return -1;
	for (int t = 0; t < g->ntensors; t++) {
		if (ex->owner[t] >= 0)
			val[t] = st->sval[0][t]; /* NULL in slot 0 until alloc_param */
		else if (holds(ex, r, t) && !(val[t] = counted(ex, r, local_elems(&ex->home[t]),
		                                               PL_EXEC_MEM_ACTIVATIONS)))
			return -1;
	}
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		if (ex->stage[o] % ex->pp != r / ex->M)
			continue;
		pl_xt in[PL_MAX_OP_INPUTS];
		for (int i = 0; i < op->ninputs; i++) {
			xin *xi = &ex->in[o][i];
			to_xt(&xi->l, NULL, &in[i]);
			if (xi->kind == IN_ALIAS)
				continue;
			if (!(inb[o][i] =
			          counted(ex, r, local_elems(&xi->l), PL_EXEC_MEM_ACTIVATIONS)))
				return -1;
			if (xi->kind == IN_DATA &&
			    fill_tensor(ex, xi->tensor, &xi->l, r, 0, inb[o][i]))
				return -1;
		}
		pl_kctx kc = {.g = g, .op = op};
		size_t ns = pl_kernel_saved_elems(&kc, in);
		if (ns && !(saved[o] = counted(ex, r, ns, PL_EXEC_MEM_ACTIVATIONS)))
			return -1;
	}
	return 0;
}

static int alloc_rank(pl_exec *ex, int64_t r)
{
	const pl_graph *g = ex->g;
	rankst *st = &ex->rs[r];
	int s = (int)(r / ex->M);
	size_t nt = (size_t)g->ntensors + 1;
	/* 1F1B: stage s holds at most pp - s micro-batches in flight; the
	 * interleaved program may hold any of them */
	st->nslot = (int)(ex->V > 1 ? ex->m : ex->pp - s < ex->m ? ex->pp - s : ex->m);
	st->sval = pl_calloc((size_t)st->nslot, sizeof *st->sval);
	st->ssaved = pl_calloc((size_t)st->nslot, sizeof *st->ssaved);
	st->sinb = pl_calloc((size_t)st->nslot, sizeof *st->sinb);
	st->dval = pl_calloc(nt, sizeof(float *));
	st->m = pl_calloc(nt, sizeof(float *));
	st->v = pl_calloc(nt, sizeof(float *));
	st->cacc = pl_calloc(nt, sizeof(float *));
	st->gsh = pl_calloc(nt, sizeof(float *));
	st->wsh = pl_calloc(nt, sizeof(float *));
	size_t nout = 1;
	for (int k = 0; k < g->noutputs; k++)
		nout += local_elems(&ex->home[g->outputs[k]]);
	st->lacc = pl_calloc(nout, sizeof *st->lacc);
	size_t np = ex->V > 1        ? pend_at(ex, s, st->nslot, 0)
	            : s + 1 < ex->pp ? boundary_elems(ex, s)
	                             : 0;
	st->pend = np ? counted(ex, r, np, PL_EXEC_MEM_TRANSIENT) : NULL;
	if (!st->sval || !st->ssaved || !st->sinb || !st->dval || !st->m || !st->v || !st->cacc ||
	    !st->gsh || !st->wsh || !st->lacc || (np && !st->pend) || alloc_slot(ex, r, 0))
		return -1;
	st->val = st->sval[0];
	for (int t = 0; t < g->ntensors; t++) {
		if (!holds(ex, r, t))
			continue;
		if (ex->owner[t] >= 0) {
			if (alloc_param(ex, r, t))
				return -1;
		} else if (g->tensors[t].requires_grad &&
		           !(st->dval[t] = counted(ex, r, local_elems(&ex->home[t]),
		                                   PL_EXEC_MEM_TRANSIENT))) {
			return -1;
		}
	}
	for (int k = 1; k < st->nslot; k++)
		if (alloc_slot(ex, r, k))
			return -1;
	st->inb = st->sinb[0];
	st->saved = st->ssaved[0];
	/* live memory: the persistent buffers from the start */
	st->vlive = pl_calloc((size_t)st->nslot, sizeof *st->vlive);
	st->ilive = pl_calloc((size_t)st->nslot, sizeof *st->ilive);
	st->glive = pl_calloc(nt, 1);
	st->wlive = pl_calloc(nt, 1);
	st->segdone = pl_calloc((size_t)g->nops + 1, 1);
	if (!st->vlive || !st->ilive || !st->glive || !st->wlive || !st->segdone)
		return -1;
	for (int k = 0; k < st->nslot; k++)
		if (!(st->vlive[k] = pl_calloc(nt, 1)) ||
		    !(st->ilive[k] = pl_calloc(((size_t)g->nops + 1) * (PL_MAX_OP_INPUTS + 1), 1)))
			return -1;
	for (int c = PL_EXEC_MEM_WEIGHTS; c <= PL_EXEC_MEM_OPTIMIZER; c++)
		st->live[c] = st->peak[c] = st->mem[c];
	mem_take(st, PL_EXEC_MEM_WEIGHTS, 0); /* the total so far */
	return 0;
}

pl_status pl_exec_new(pl_exec **out, const pl_graph *g, int64_t D, int64_t *const *splits,
                      pl_backend *be, const pl_exec_opts *o, pl_err *err)
{
	return pl_exec_new_job(out, g, D, splits, NULL, be, o, err);
}

/* opts.values into ex->given: each names a param, a const or a data input
 * and has its count (a data input: every micro-batch's); an index (a
 * Gather's, a loss's labels) is an integer in the range its consumer takes */
static pl_status take_values(pl_exec *ex, pl_err *err)
{
	const pl_graph *g = ex->g;
	for (int k = 0; k < ex->o.nvalues; k++) {
		const pl_exec_values *gv = &ex->o.values[k];
		int t = gv->name ? pl_graph_find_tensor(g, gv->name) : -1;
		if (t < 0)
			return pl_err_set(
			    err, PL_EINVAL,
			    "executor: values for '%s': the model has no tensor so named",
			    gv->name ? gv->name : "(null)");
		const pl_tensor *pt = &g->tensors[t];
		if (pt->producer >= 0)
			return pl_err_set(
			    err, PL_EINVAL,
			    "executor: values for '%s': it is computed by op '%s', not "
			    "an input, param or const",
			    pt->name, g->ops[pt->producer].name);
		int64_t want = pl_tensor_elems(pt) * (pt->role == PL_ROLE_INPUT ? ex->m : 1);
		if (gv->n != want || !gv->v)
			return pl_err_set(err, PL_EINVAL,
			                  "executor: values for %s '%s': %lld given, %lld expected",
			                  pl_role_name(pt->role), pt->name, (long long)gv->n,
			                  (long long)want);
		for (int o = 0; o < g->nops; o++) /* indices in their consumers' ranges */
			for (int i = 0; i < g->ops[o].ninputs; i++) {
				const pl_op_rule *rule = pl_op_rule_get(g->ops[o].type);
				int64_t range = g->ops[o].in[i] == t && rule->index_range
				                    ? rule->index_range(g, &g->ops[o], i)
				                    : 0;
				for (int64_t e = 0; range > 0 && e < gv->n; e++)
					if (!(gv->v[e] >= 0 && gv->v[e] < (float)range &&
					      gv->v[e] == floorf(gv->v[e])))
						return pl_err_set(
						    err, PL_EINVAL,
						    "executor: values for '%s': element %lld is "
						    "%g; "
						    "op '%s' (%s) takes integers from 0 to %lld",
						    pt->name, (long long)e, (double)gv->v[e],
						    g->ops[o].name, pl_optype_name(g->ops[o].type),
						    (long long)range - 1);
			}
		ex->given[t] = gv->v;
	}
	return PL_OK;
}

/* What a plan must be for the executor to run it: micro-batches and ZeRO in
 * range, the backend's ranks, stages (or model chunks) in the ops' order,
 * every constant with its values, every op's cut fitting a stage's devices. */
static pl_status check_job(const pl_graph *g, int64_t D, int64_t *const *splits,
                           const pl_exec_job *job, const pl_backend *be, const pl_exec_opts *o,
                           pl_err *err)
{
	if (job->micro_batches < 1 || job->zero < 0 || job->zero > 3)
		return pl_err_set(err, PL_EINVAL,
		                  "executor: micro-batches %lld, ZeRO %d: expected >= 1 and 0..3",
		                  (long long)job->micro_batches, job->zero);
	if (be->nranks != D)
		return pl_err_set(err, PL_EINVAL,
		                  "the %s backend has %lld ranks, the plan needs %lld", be->name,
		                  (long long)be->nranks, (long long)D);
	int64_t pp = job->stages > 1 ? job->stages : 1, M = D / pp;
	if (D % pp)
		return pl_err_set(err, PL_EINVAL, "executor: %lld ranks do not make %lld stages",
		                  (long long)D, (long long)pp);
	int64_t V = job->virtual_stages > 1 && pp > 1 ? job->virtual_stages : 1;
	if (V > 1 && (job->micro_batches % pp || pp > PL_EXEC_MAX_STAGES))
		return pl_err_set(
		    err, PL_EINVAL,
		    "executor: the interleaved schedule needs micro-batches a "
		    "multiple of the stages and at most %d stages (%lld micro-batches, "
		    "%lld stages)",
		    PL_EXEC_MAX_STAGES, (long long)job->micro_batches, (long long)pp);
	for (int k = 0; k < g->nops && pp > 1; k++)
		if (!job->stage || job->stage[k] < 0 || job->stage[k] >= pp * V ||
		    (k && job->stage[k] < job->stage[k - 1]))
			return pl_err_set(
			    err, PL_EINVAL,
			    "executor: op '%s': %s %d: expected 0..%lld, not below the "
			    "%s of the op before",
			    g->ops[k].name, V > 1 ? "model chunk" : "stage",
			    job->stage ? job->stage[k] : -1, (long long)(pp * V) - 1,
			    V > 1 ? "chunk" : "stage");
	/* a constant is computed with its own values: one without them (an
	 * initializer of dims only) is refused, never drawn, unless given */
	for (int k = 0; k < g->nops; k++)
		for (int i = 0; i < g->ops[k].ninputs; i++) {
			const pl_tensor *pt = &g->tensors[g->ops[k].in[i]];
			int v = 0;
			while (v < o->nvalues && strcmp(o->values[v].name, pt->name))
				v++;
			if (pt->role == PL_ROLE_CONST && !pt->values && pl_tensor_elems(pt) > 0 &&
			    v == o->nvalues)
				return pl_err_set(err, PL_EINVAL,
				                  "executor: const '%s' (read by op '%s') has no "
				                  "values: the executor "
				                  "never invents a constant's; give its \"values\" "
				                  "in the model (an "
				                  "ONNX initializer: export it with its data, or "
				                  "planner run --weights), or declare it a param",
				                  pt->name, g->ops[k].name);
		}
	for (int k = 0; k < g->nops; k++) {
		pl_status st = pl_op_check_split(&g->ops[k], splits[k], M, err);
		if (st) {
			pl_err_prefix(err, "op '%s': the strategy does not fit %lld devices",
			              g->ops[k].name, (long long)M);
			return st;
		}
	}
	return PL_OK;
}

/* The per-op and per-tensor tables of a new executor; -1 when out of memory
 * (pl_exec_free frees what was allocated). */
static int alloc_tables(pl_exec *ex, const pl_exec_job *job, int64_t *const *splits)
{
	const pl_graph *g = ex->g;
	int64_t D = ex->D;
	size_t nt = (size_t)g->ntensors + 1, no = (size_t)g->nops + 1;
	ex->split = pl_calloc(no, sizeof *ex->split);
	ex->in = pl_calloc(no, sizeof *ex->in);
	ex->out_l = pl_calloc(no, sizeof *ex->out_l);
	ex->home = pl_calloc(nt, sizeof *ex->home);
	ex->has_home = pl_calloc(nt, 1);
	ex->owner = pl_malloc(sizeof(int) * nt);
	ex->range = pl_calloc(nt, sizeof *ex->range);
	ex->positive = pl_calloc(nt, 1);
	ex->given = pl_calloc(nt, sizeof *ex->given);
	ex->rs = pl_calloc((size_t)D, sizeof *ex->rs);
	ex->prof = pl_calloc(2 * (size_t)no + 2, sizeof *ex->prof);
	ex->sync = pl_calloc(nt, sizeof *ex->sync);
	ex->stage = pl_calloc(no, sizeof *ex->stage);
	ex->tlo = pl_malloc(sizeof *ex->tlo * nt);
	ex->thi = pl_malloc(sizeof *ex->thi * nt);
	ex->held = pl_calloc(nt, 1);
	ex->held_re = pl_calloc(nt, 1);
	ex->last = pl_malloc(sizeof *ex->last * nt);
	ex->seg_lo = pl_malloc(sizeof *ex->seg_lo * no);
	ex->keep_in = pl_calloc(no, 1);
	ex->other = pl_calloc(nt, 1);
	int rcs = job->recompute || pl_graph_recomputes(g); /* the model's too */
	if (rcs)
		ex->rc = pl_recompute_with_model(g, job->recompute);
	if (!ex->split || !ex->in || !ex->out_l || !ex->home || !ex->has_home || !ex->owner ||
	    !ex->range || !ex->positive || !ex->given || !ex->rs || !ex->prof || !ex->sync ||
	    !ex->other || !ex->stage || !ex->tlo || !ex->thi || !ex->held || !ex->held_re ||
	    !ex->last || !ex->keep_in || !ex->seg_lo || (rcs && !ex->rc))
		return -1;
	for (int k = 0; k < g->nops; k++) {
		int nl = g->ops[k].spec.nloops;
		if (!(ex->split[k] = pl_malloc(sizeof(int64_t) * (size_t)(nl ? nl : 1))))
			return -1;
		memcpy(ex->split[k], splits[k], sizeof(int64_t) * (size_t)nl);
	}
	return 0;
}

/* Homes: each producer's output where it computes it, each param where its
 * first reader (its owner) reads it; every input's kind (data, alias of the
 * home, redistributed) and layout. */
static void place_inputs(pl_exec *ex)
{
	const pl_graph *g = ex->g;
	int64_t M = ex->M;
	for (int t = 0; t < g->ntensors; t++)
		ex->owner[t] = -1;
	/* homes: producers' outputs, params' owners (first consumer) */
	for (int k = 0; k < g->nops; k++) {
		const pl_op *op = &g->ops[k];
		pl_op_output_layout(g, op, ex->split[k], M, 0, &ex->out_l[k]);
		ex->home[op->out[0]] = ex->out_l[k];
		ex->has_home[op->out[0]] = 1;
		for (int i = 0; i < op->ninputs; i++) {
			int t = op->in[i];
			const pl_tensor *pt = &g->tensors[t];
			xin *xi = &ex->in[k][i];
			xi->tensor = t;
			pl_op_input_layout(g, op, ex->split[k], M, i, &xi->l);
			if (pt->producer < 0 && pt->role != PL_ROLE_PARAM) {
				xi->kind = IN_DATA;
				/* integer data: indices of a Gather, labels of a loss */
				int64_t range = 0;
				const pl_op_rule *rule = pl_op_rule_get(op->type);
				if (rule->index_range)
					range = rule->index_range(g, op, i);
				if (range == 0 &&
				    (pt->dtype == PL_DT_INT32 || pt->dtype == PL_DT_INT64))
					range = 2;
				if (range > 0 && (ex->range[t] == 0 || range < ex->range[t]))
					ex->range[t] = range;
				if (rule->positive_input && !ex->positive[t])
					ex->positive[t] = (char)rule->positive_input(g, op, i);
				continue;
			}
			if (pt->role == PL_ROLE_PARAM && (ex->owner[t] < 0 || ex->owner[t] == k)) {
				if (ex->owner[t] < 0) {
					ex->owner[t] = k;
					ex->home[t] = xi->l;
					ex->has_home[t] = 1;
				}
				xi->kind = IN_ALIAS;
				xi->owner = 1;
			} else {
				xi->kind = IN_REDIST;
			}
			xi->grad = pt->requires_grad;
		}
	}
}

/* Every input's redistribution from its home and, for inputs that need a
 * gradient, the way back (an owner's all-reduce, or a redistribution). */
static void plan_redistributions(pl_exec *ex)
{
	const pl_graph *g = ex->g;
	int64_t M = ex->M;
	/* redistributions and gradient paths */
	for (int k = 0; k < g->nops; k++) {
		const pl_op *op = &g->ops[k];
		for (int i = 0; i < op->ninputs; i++) {
			xin *xi = &ex->in[k][i];
			if (xi->kind == IN_DATA)
				continue;
			const pl_layout *h = &ex->home[xi->tensor];
			if (xi->kind == IN_REDIST) {
				pl_redistribute(h, &xi->l, &xi->fwd);
				if (xi->fwd.n == 0 && pl_layout_equal(h, &xi->l))
					xi->kind = IN_ALIAS;
			}
			if (!xi->grad)
				continue;
			pl_op_input_grad_layout(g, op, ex->split[k], M, i, &xi->gl);
			if (xi->owner) {
				if (!pl_layout_partial_allreduce(&xi->gl, &xi->sync))
					xi->sync.naxes = 0;
				ex->sync[xi->tensor] = xi->sync;
			} else {
				ex->other[xi->tensor] |= ex->owner[xi->tensor] >= 0;
				pl_layout back = *h;
				back.partial = 0;
				pl_redistribute(&xi->gl, &back, &xi->bwd);
			}
		}
	}
}

static void place_stages(pl_exec *ex, const pl_exec_job *job)
{
	const pl_graph *g = ex->g;
	int64_t pp = ex->pp;
	/* stages: per op (copied), per tensor the stages that hold it */
	for (int k = 0; pp > 1 && k < g->nops; k++)
		ex->stage[k] = job->stage[k];
	for (int t = 0; t < g->ntensors; t++) {
		const pl_tensor *pt = &g->tensors[t];
		ex->tlo[t] = ex->thi[t] = -1;
		if (ex->owner[t] >= 0)
			ex->tlo[t] = ex->thi[t] = ex->stage[ex->owner[t]];
		else if (pt->producer >= 0)
			ex->tlo[t] = ex->thi[t] = ex->stage[pt->producer];
		for (int c = 0; pt->producer >= 0 && c < pt->nconsumers; c++)
			if (ex->stage[pt->consumers[c]] > ex->thi[t])
				ex->thi[t] = ex->stage[pt->consumers[c]];
	}
}

static void live_memory(pl_exec *ex)
{
	const pl_graph *g = ex->g;
	/* live memory: what each op's backward reads (as the cost model counts
	 * kept activations), each tensor's last reader, whether it is held */
	int64_t ones[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		ones[l] = 1;
	for (int t = 0; t < g->ntensors; t++)
		ex->last[t] = -1;
	for (int k = 0; k < g->nops; k++) {
		const pl_op *op = &g->ops[k];
		pl_opwork w;
		memset(&w, 0, sizeof w);
		pl_op_rule_get(op->type)->work(g, op, ones, &w);
		ex->keep_in[k] = w.saves_in;
		int keeps = !ex->rc || !ex->rc[k];
		for (int i = 0; i < op->ninputs; i++) {
			int t = op->in[i];
			ex->last[t] = k;
			/* kept by a reader, unless its producer is recomputed (as the
			 * cost model counts a kept tensor: once, at its producer) */
			int p = g->tensors[t].producer;
			if ((w.saves_in >> i & 1) && (p < 0 || !ex->rc || !ex->rc[p]))
				ex->held[t] = 1;
			if (w.saves_in >> i & 1)
				ex->held_re[t] = 1;
		}
		for (int i = 0; i < op->noutputs; i++) {
			if ((keeps && (w.saves_out >> i & 1)) ||
			    (ex->rc && (ex->rc[k] == PL_RC_RERUN_OUT || ex->rc[k] == PL_RC_SAVED)))
				ex->held[op->out[i]] = 1;
			if (w.saves_out >> i & 1)
				ex->held_re[op->out[i]] = 1;
		}
	}
	/* recomputed segments: runs of recomputed ops, each ending after an op
	 * that keeps its output (a layer of full recompute) */
	for (int k = 0; k < g->nops; k++)
		ex->seg_lo[k] = !ex->rc || !ex->rc[k] ? -1
		                : k && ex->rc[k - 1] && ex->rc[k - 1] != PL_RC_RERUN_OUT &&
		                        ex->stage[k - 1] == ex->stage[k]
		                    ? ex->seg_lo[k - 1]
		                    : k;
	for (int t = 0; t < g->ntensors; t++) /* sent to a later stage, or a graph output */
		if (ex->thi[t] > ex->tlo[t])
			ex->held[t] = 1;
	for (int k = 0; k < g->noutputs; k++)
		ex->held[g->outputs[k]] = 1;
	for (int t = 0; t < g->ntensors; t++)
		ex->held_re[t] |= ex->held[t];
}

/* Tied weights across stages do not run yet: a param read on another stage
 * than its owner's is refused. */
static pl_status check_tied(const pl_exec *ex, pl_err *err)
{
	const pl_graph *g = ex->g;
	for (int k = 0; k < g->nops; k++) /* a param read on another stage than its owner's */
		for (int i = 0; i < g->ops[k].ninputs; i++) {
			int t = g->ops[k].in[i];
			if (ex->owner[t] >= 0 && ex->stage[k] != ex->stage[ex->owner[t]]) {
				return pl_err_set(
				    err, PL_EINVAL,
				    "executor: param '%s' is read on stages %d and %d "
				    "(tied weights across stages do not run yet)",
				    g->tensors[t].name, ex->stage[ex->owner[t]], ex->stage[k]);
			}
		}
	return PL_OK;
}

pl_status pl_exec_new_job(pl_exec **out, const pl_graph *g, int64_t D, int64_t *const *splits,
                          const pl_exec_job *job, pl_backend *be, const pl_exec_opts *o,
                          pl_err *err)
{
	*out = NULL;
	pl_exec_job none = {.micro_batches = 1};
	if (!job)
		job = &none;
	pl_status st = check_job(g, D, splits, job, be, o, err);
	if (st)
		return st;
	int64_t pp = job->stages > 1 ? job->stages : 1;
	pl_exec *ex = pl_calloc(1, sizeof *ex);
	if (!ex)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	ex->g = g;
	ex->D = D;
	ex->pp = pp;
	ex->M = D / pp;
	ex->V = job->virtual_stages > 1 && pp > 1 ? job->virtual_stages : 1;
	ex->be = be;
	ex->o = *o;
	ex->m = job->micro_batches;
	ex->zero = job->zero;
	if (alloc_tables(ex, job, splits))
		goto nomem;
	place_inputs(ex);
	plan_redistributions(ex);
	place_stages(ex, job);
	live_memory(ex);
	if ((st = check_tied(ex, err)) || (st = take_values(ex, err))) {
		pl_exec_free(ex);
		return st;
	}
	if (ex->V > 1 && interleaved(ex))
		goto nomem;
	for (int64_t r = 0; r < D; r++)
		if (here(ex, r) && alloc_rank(ex, r))
			goto nomem;
	*out = ex;
	return PL_OK;
nomem:
	pl_exec_free(ex);
	return pl_err_set(err, PL_ENOMEM, "out of memory building the per-rank programs");
}

void pl_exec_memory_peak(const pl_exec *ex, double *bytes)
{
	int64_t me = ex->be->self < 0 ? 0 : ex->be->self;
	for (int k = 0; k < PL_EXEC_MEM; k++)
		bytes[k] = ex->rs[me].peak[k];
}

double pl_exec_memory_peak_total(const pl_exec *ex, double *at)
{
	const rankst *st = &ex->rs[ex->be->self < 0 ? 0 : ex->be->self];
	if (at)
		memcpy(at, st->at_peak, sizeof st->at_peak);
	return st->peak_all;
}

void pl_exec_memory(const pl_exec *ex, double *bytes)
{
	int64_t me = ex->be->self < 0 ? 0 : ex->be->self;
	for (int k = 0; k < PL_EXEC_MEM; k++)
		bytes[k] = ex->rs[me].mem[k];
}

void pl_exec_profile(const pl_exec *ex, double *compute_s, double *comm_s)
{
	for (int o = 0; o < ex->g->nops; o++) {
		compute_s[o] = ex->prof[2 * o];
		comm_s[o] = ex->prof[2 * o + 1];
	}
}
