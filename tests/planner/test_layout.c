/* planner::layout -- redistribution plans, checked by running them: for every
 * pair of layouts of a 2-D tensor on meshes of 2..12 devices (every device
 * matrix, every way to map its axes to dimensions, partial sums or
 * replication), each rank's data is built from a known global tensor, the
 * planned primitives are simulated with NCCL's semantics on explicit rank
 * groups, and every rank must end with exactly its piece of the target. The
 * bytes each primitive declares (what the cost model prices) are checked
 * against the buffers the simulation moved. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "graph/layout.h"

#define DIM  24
#define MAXD 12

typedef struct buf {
	int64_t n0, n1;
	double v[DIM * DIM];
} buf;

static double G[DIM][DIM], R[DIM][DIM];

/* offset and size of dim d of rank's piece */
static void piece(const pl_layout *l, int d, int64_t rank, int64_t *off, int64_t *len)
{
	int64_t idx = pl_devmat_coord(&l->dm, l->map[d], l->nmap[d], rank), parts = 1;
	for (int k = 0; k < l->nmap[d]; k++)
		parts *= l->dm.size[l->map[d][k]];
	*len = DIM / parts;
	*off = idx * *len;
}

static void fill(const pl_layout *l, int64_t rank, buf *b)
{
	int64_t o0, o1;
	piece(l, 0, rank, &o0, &b->n0);
	piece(l, 1, rank, &o1, &b->n1);
	int8_t pax[PL_MAX_AXES];
	int np = 0;
	int64_t nparts = 1;
	for (int a = 0; a < l->dm.n; a++)
		if (l->partial >> a & 1) {
			pax[np++] = (int8_t)a;
			nparts *= l->dm.size[a];
		}
	double q = (double)pl_devmat_coord(&l->dm, pax, np, rank);
	for (int64_t i = 0; i < b->n0; i++)
		for (int64_t j = 0; j < b->n1; j++) {
			double g = G[o0 + i][o1 + j], r = R[o0 + i][o1 + j];
			/* parts differ but sum to g */
			b->v[i * b->n1 + j] = g / nparts + (q - (nparts - 1) / 2.0) * r;
		}
}

static void sub(const buf *in, int dim, int64_t k, int64_t parts, buf *out)
{
	out->n0 = dim == 0 ? in->n0 / parts : in->n0;
	out->n1 = dim == 1 ? in->n1 / parts : in->n1;
	int64_t o0 = dim == 0 ? k * out->n0 : 0, o1 = dim == 1 ? k * out->n1 : 0;
	for (int64_t i = 0; i < out->n0; i++)
		for (int64_t j = 0; j < out->n1; j++)
			out->v[i * out->n1 + j] = in->v[(o0 + i) * in->n1 + o1 + j];
}

static void cat(const buf *parts, int64_t n, int dim, buf *out)
{
	out->n0 = dim == 0 ? parts[0].n0 * n : parts[0].n0;
	out->n1 = dim == 1 ? parts[0].n1 * n : parts[0].n1;
	for (int64_t p = 0; p < n; p++)
		for (int64_t i = 0; i < parts[p].n0; i++)
			for (int64_t j = 0; j < parts[p].n1; j++) {
				int64_t oi = dim == 0 ? p * parts[0].n0 + i : i;
				int64_t oj = dim == 1 ? p * parts[0].n1 + j : j;
				out->v[oi * out->n1 + oj] = parts[p].v[i * parts[p].n1 + j];
			}
}

static double nbytes(const buf *b)
{
	return (double)(b->n0 * b->n1) * 4;
}

static buf cur[MAXD], nxt[MAXD], tmp[MAXD];

static void simulate(const pl_prim *p, int64_t D)
{
	int64_t mem[MAXD];
	for (int64_t r = 0; r < D; r++) {
		int64_t idx, n = pl_prim_group(p, r, mem, &idx);
		assert_int_equal(n, p->group_size);
		switch (p->kind) {
		case PL_PRIM_SLICE:
			sub(&cur[r], p->dim, idx, n, &nxt[r]);
			assert_true(fabs(p->bytes - nbytes(&nxt[r])) < 0.5);
			break;
		case PL_PRIM_ALL_GATHER:
			for (int64_t k = 0; k < n; k++)
				tmp[k] = cur[mem[k]];
			cat(tmp, n, p->dim, &nxt[r]);
			assert_true(fabs(p->bytes - nbytes(&nxt[r])) < 0.5);
			break;
		case PL_PRIM_ALL_REDUCE:
		case PL_PRIM_REDUCE_SCATTER: {
			buf s = cur[mem[0]];
			for (int64_t k = 1; k < n; k++)
				for (int64_t e = 0; e < s.n0 * s.n1; e++)
					s.v[e] += cur[mem[k]].v[e];
			assert_true(fabs(p->bytes - nbytes(&s)) < 0.5);
			if (p->kind == PL_PRIM_ALL_REDUCE)
				nxt[r] = s;
			else
				sub(&s, p->dim, idx, n, &nxt[r]);
			break;
		}
		case PL_PRIM_ALL_TO_ALL:
			/* member k sends me its idx-th chunk along dim2 */
			for (int64_t k = 0; k < n; k++)
				sub(&cur[mem[k]], p->dim2, idx, n, &tmp[k]);
			cat(tmp, n, p->dim, &nxt[r]);
			assert_true(fabs(p->bytes - nbytes(&cur[r])) < 0.5);
			break;
		case PL_PRIM_COUNT: fail_msg("not a primitive");
		}
	}
	memcpy(cur, nxt, sizeof(buf) * (size_t)D);
}

/* ---- enumerating layouts ---- */

typedef struct lset {
	pl_layout *l;
	int n, cap;
} lset;

static void push(lset *s, const pl_layout *l)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->l = realloc(s->l, sizeof *s->l * (size_t)s->cap);
	}
	s->l[s->n++] = *l;
}

/* every axis: dim 0, dim 1, partial or replicated; a dim's axes in the
 * order chosen by `rev` (major first, or reversed) */
static void layouts_of(const pl_devmat *dm, int allow_partial, lset *out)
{
	int choices = allow_partial ? 4 : 3, total = 1;
	for (int a = 0; a < dm->n; a++)
		total *= choices;
	for (int code = 0; code < total; code++)
		for (int rev = 0; rev < 2; rev++) {
			pl_layout l;
			memset(&l, 0, sizeof l);
			l.dm = *dm;
			l.rank = 2;
			l.shape[0] = l.shape[1] = DIM;
			l.elem_bytes = 4;
			int c = code, ok = 1;
			int8_t axes[2][PL_MAX_AXES];
			int na[2] = {0, 0};
			for (int a = 0; a < dm->n; a++, c /= choices) {
				int k = c % choices;
				if (k < 2)
					axes[k][na[k]++] = (int8_t)a;
				else if (k == 3)
					l.partial |= 1u << a;
			}
			if (rev && na[0] < 2 && na[1] < 2)
				continue;
			for (int d = 0; d < 2; d++) {
				int64_t parts = 1;
				for (int k = 0; k < na[d]; k++) {
					int8_t ax = rev ? axes[d][na[d] - 1 - k] : axes[d][k];
					l.map[d][k] = ax;
					parts *= dm->size[ax];
				}
				l.nmap[d] = (int8_t)na[d];
				ok &= DIM % parts == 0;
			}
			if (ok)
				push(out, &l);
		}
}

static void matrices(int64_t D, int64_t *cur, int n, pl_devmat *out, int *nout)
{
	int64_t prod = 1;
	for (int k = 0; k < n; k++)
		prod *= cur[k];
	if (prod == D) {
		memset(&out[*nout], 0, sizeof out[*nout]);
		out[*nout].n = n;
		memcpy(out[*nout].size, cur, sizeof(int64_t) * (size_t)n);
		(*nout)++;
		return;
	}
	if (n == 3)
		return;
	for (int64_t f = 2; f <= D / prod; f++)
		if ((D / prod) % f == 0) {
			cur[n] = f;
			matrices(D, cur, n + 1, out, nout);
		}
}

static void every_pair_round_trips(void **state)
{
	(void)state;
	srand(7);
	for (int i = 0; i < DIM; i++)
		for (int j = 0; j < DIM; j++) {
			G[i][j] = i * DIM + j + 1;
			R[i][j] = (double)(rand() % 1000) / 7.0;
		}
	static const int64_t meshes[] = {1, 2, 3, 4, 6, 8, 12};
	long pairs = 0, collectives = 0;
	for (size_t m = 0; m < sizeof meshes / sizeof *meshes; m++) {
		int64_t D = meshes[m], tmpv[4];
		pl_devmat dms[64];
		int ndm = 0;
		if (D == 1) {
			memset(&dms[0], 0, sizeof dms[0]);
			ndm = 1;
		} else {
			matrices(D, tmpv, 0, dms, &ndm);
		}
		lset src = {0}, dst = {0};
		for (int k = 0; k < ndm; k++) {
			layouts_of(&dms[k], 1, &src);
			layouts_of(&dms[k], 0, &dst);
		}
		for (int a = 0; a < src.n; a++)
			for (int b = 0; b < dst.n; b++) {
				pl_redist r;
				pl_redistribute(&src.l[a], &dst.l[b], &r);
				for (int64_t k = 0; k < D; k++)
					fill(&src.l[a], k, &cur[k]);
				for (int i = 0; i < r.n; i++) {
					simulate(&r.p[i], D);
					collectives += r.p[i].kind != PL_PRIM_SLICE;
				}
				for (int64_t k = 0; k < D; k++) {
					buf want;
					fill(&dst.l[b], k, &want);
					assert_int_equal(cur[k].n0, want.n0);
					assert_int_equal(cur[k].n1, want.n1);
					for (int64_t e = 0; e < want.n0 * want.n1; e++)
						if (fabs(cur[k].v[e] - want.v[e]) >
						    1e-9 * (1 + fabs(want.v[e])))
							fail_msg("D=%lld pair %d->%d rank %lld "
							         "element %lld: "
							         "%g, want %g",
							         (long long)D, a, b, (long long)k,
							         (long long)e, cur[k].v[e],
							         want.v[e]);
				}
				/* the same layout needs nothing */
				if (pl_layout_equal(&src.l[a], &dst.l[b]))
					assert_int_equal(r.n, 0);
				pairs++;
			}
		free(src.l);
		free(dst.l);
	}
	print_message("%ld layout pairs simulated, %ld collectives\n", pairs, collectives);
	assert_true(pairs > 10000);
}

/* Megatron's row-parallel output: partial over the tp axis; the next op wants
 * the rows cut along the same axis (sequence parallel) -> one reduce-scatter. */
static void partial_to_split_is_reduce_scatter(void **state)
{
	(void)state;
	pl_layout s, d;
	memset(&s, 0, sizeof s);
	s.dm.n = 1;
	s.dm.size[0] = 8;
	s.rank = 2;
	s.shape[0] = 2048;
	s.shape[1] = 1024;
	s.elem_bytes = 2;
	d = s;
	s.partial = 1;
	d.nmap[0] = 1;
	d.map[0][0] = 0;
	pl_redist r;
	pl_redistribute(&s, &d, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.p[0].kind, PL_PRIM_REDUCE_SCATTER);
	assert_int_equal(r.p[0].group_size, 8);
	/* ... and to replicated: one all-reduce of the whole buffer */
	d.nmap[0] = 0;
	pl_redistribute(&s, &d, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.p[0].kind, PL_PRIM_ALL_REDUCE);
	assert_true(r.p[0].bytes == 2048.0 * 1024 * 2);
	/* rows cut -> columns cut on the same axis: one all-to-all */
	s.partial = 0;
	s.nmap[0] = 1;
	s.map[0][0] = 0;
	d.nmap[0] = 0;
	d.nmap[1] = 1;
	d.map[1][0] = 0;
	pl_redistribute(&s, &d, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.p[0].kind, PL_PRIM_ALL_TO_ALL);
}

static void groups_and_link_classes(void **state)
{
	(void)state;
	/* 16 ranks as [2, 8]: axis 1 stays inside a node of 8, axis 0 crosses */
	pl_prim p = {.kind = PL_PRIM_ALL_REDUCE, .naxes = 1};
	p.dm.n = 2;
	p.dm.size[0] = 2;
	p.dm.size[1] = 8;
	p.axes[0] = 1;
	p.group_size = 8;
	int64_t mem[16], idx;
	pl_prim_group(&p, 11, mem, &idx);
	assert_int_equal(mem[0], 8);
	assert_int_equal(mem[7], 15);
	assert_int_equal(idx, 3);
	assert_true(pl_prim_intra_node(&p, 8));
	p.axes[0] = 0;
	p.group_size = 2;
	pl_prim_group(&p, 11, mem, &idx);
	assert_int_equal(mem[0], 3);
	assert_int_equal(mem[1], 11);
	assert_false(pl_prim_intra_node(&p, 8));
	/* both axes, first one most significant */
	p.naxes = 2;
	p.axes[0] = 1;
	p.axes[1] = 0;
	p.group_size = 16;
	pl_prim_group(&p, 0, mem, &idx);
	assert_int_equal(mem[1], 8);
	assert_int_equal(mem[2], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_pair_round_trips),
	    cmocka_unit_test(partial_to_split_is_reduce_scatter),
	    cmocka_unit_test(groups_and_link_classes),
	};
	return cmocka_run_group_tests_name("planner::layout", tests, NULL, NULL);
}
