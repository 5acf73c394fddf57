/* The outer search of a whole training job (see job.h).
 *
 * Points: pp (divisors of D whose stage mesh tiles the nodes), m (divisors of
 * the batch), recompute (none, every repeated layer, or attention cores) and
 * ZeRO 0..3. For each point the inner searcher plans one stage mesh on one
 * micro-batch with the job folded into the node costs (pl_problem_new_job).
 * With one stage that plan's price is the step and the inner searcher's
 * optimum is the point's optimum. With pp stages the inner problem is the
 * relaxation "all stages on one mesh, memory summed over stages with one
 * micro-batch in flight" whose optimum bounds the point from below; stage
 * boundaries then come from pl_pipeline_partition on that plan, and if no
 * split fits, the inner memory budget shrinks and the plan is redone. */
#include "search/job.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ops.h"
#include "graph/model.h"
#include "graph/layout.h"
#include "graph/parallel.h"
#include "search/price.h"
#include "search/ve.h"
#include "graph/alloc.h"
#include "graph/clock.h"

#define PART_MAX_SCANS 20000
/* first-pass bounds: relaxed dps leave out the edges with larger tables,
 * first those with more than RELAX_FIRST entries (opts relax_pairs), then
 * RELAX_STEP times more at each rung (see next_rung) */
#define RELAX_FIRST 10000.0
#define RELAX_STEP  3.0

/* ---- stage boundaries ---- */

static double part_dp(const double *T, const double *S, const double *A, const pl_segcost *seg,
                      int K, int64_t pp, int64_t m, double lim, int64_t k, int64_t dpn, double tmax,
                      double *f, int *arg)
{
	const double inf = INFINITY;
	for (size_t q = 0; q < (size_t)(pp + 1) * (size_t)(K + 1); q++)
		f[q] = inf;
	f[0] = 0;
	for (int s = 0; s < pp; s++) {
		double inflight = pl_job_inflight(pp, m, 1, s);
		int link = s > 0 ? pl_stage_link(k, dpn, s) : 0;
		double *fs = f + (size_t)s * (K + 1), *fn = f + (size_t)(s + 1) * (K + 1);
		int *an = arg + (size_t)(s + 1) * (K + 1);
		/* the first i whose stage [i, j) is within tmax, and within the
		 * memory limit, only grow with j (prefix sums): the i before them
		 * are skipped as the checks below would skip them */
		int i_t = s, i_m = s;
		for (int j = s + 1; j <= K - (int)(pp - s - 1); j++) {
			double best = inf;
			int bi = -1;
			while (i_t < j && T[j] - T[i_t] > tmax)
				i_t++;
			while (lim > 0 && i_m < j &&
			       S[j] - S[i_m] + inflight * (A[j] - A[i_m]) > lim)
				i_m++;
			for (int i = i_t > i_m ? i_t : i_m; i < j; i++) {
				if (fs[i] == inf)
					continue;
				double t = T[j] - T[i] + (s > 0 ? seg[i].p2p[link] : 0);
				if (t > tmax)
					continue;
				double mem = S[j] - S[i] + inflight * (A[j] - A[i]);
				if (lim > 0 && mem > lim)
					continue;
				if (fs[i] + t < best) {
					best = fs[i] + t;
					bi = i;
				}
			}
			fn[j] = best;
			an[j] = bi;
		}
	}
	return f[(size_t)pp * (K + 1) + K];
}

/* first[] from arg; returns the largest stage time */
static double part_read(const double *T, const pl_segcost *seg, int K, int64_t pp, int64_t k,
                        int64_t dpn, const int *arg, int *first)
{
	int j = K;
	double mx = 0;
	first[pp] = K;
	for (int64_t s = pp; s > 0; s--) {
		int i = arg[(size_t)s * (K + 1) + j];
		first[s - 1] = i;
		double t =
		    T[j] - T[i] + (s > 1 ? seg[i].p2p[pl_stage_link(k, dpn, (int)s - 1)] : 0);
		if (t > mx)
			mx = t;
		j = i;
	}
	return mx;
}

/* Sorts n doubles ascending by an LSD radix sort on their bits (8 passes of a
 * byte, a pass skipped where every key has the same byte): the keys map to
 * unsigned integers in the order of the values (the sign bit set on
 * non-negative values, every bit flipped on negative ones). The list of stage
 * times is K(K+1)-ish long and sorted once per partition: qsort's compare
 * callback was 4 % of a GPT-3 175B search on 4096 devices. Equal values stay
 * equal and -0 sorts before +0 (they compare equal, so the deduplication that
 * follows treats them as one, as it did). tmp holds n entries. */
static void sort_doubles(double *v, double *tmp, size_t n)
{
	uint64_t *a = (uint64_t *)tmp, *b = (uint64_t *)v;
	for (size_t i = 0; i < n; i++) {
		uint64_t k;
		memcpy(&k, &v[i], sizeof k);
		a[i] = (k >> 63) ? ~k : k | (UINT64_C(1) << 63);
	}
	for (int sh = 0; sh < 64; sh += 8) {
		size_t cnt[256] = {0};
		for (size_t i = 0; i < n; i++)
			cnt[(a[i] >> sh) & 255]++;
		if (n && cnt[(a[0] >> sh) & 255] == n)
			continue; /* one byte value: the order stays */
		size_t pos = 0;
		for (int d = 0; d < 256; d++) {
			size_t c = cnt[d];
			cnt[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			b[cnt[(a[i] >> sh) & 255]++] = a[i];
		uint64_t *t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = a[i];
		k = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
		memcpy(&v[i], &k, sizeof k);
	}
}

/* What the boundary searches below share: the prefix sums of one plan's
 * segments and part_dp's tables. */
typedef struct {
	const double *T, *S, *A;
	const pl_segcost *seg;
	int K, mono;
	int64_t pp, m, k, dpn;
	double lim;
	double *f;
	int *arg;
	unsigned char *reach;
} part_ctx;

/* Whether some split has every stage within tmax and the memory limit, what
 * part_dp's f[pp][K] < inf says, without its sums: stage by stage, which
 * segment ends a stage can reach, found with one pointer per stage. A start i
 * that cannot close a stage at j (not reachable, the stage's time above tmax
 * or its memory above the limit) cannot close one at j + 1 either: T, S and A
 * are prefix sums of non-negative finite terms (cx->mono) and rounding is
 * monotone, so each expression part_dp compares only grows with j. Every pair
 * is checked with part_dp's own expressions, so the two agree exactly: O(pp K)
 * where part_dp takes O(pp K w), w the starts a stage's end may have. */
static int part_fits(const part_ctx *cx, double tmax)
{
	if (!cx->mono)
		return part_dp(cx->T, cx->S, cx->A, cx->seg, cx->K, cx->pp, cx->m, cx->lim, cx->k,
		               cx->dpn, tmax, cx->f, cx->arg) < INFINITY;
	const double *T = cx->T, *S = cx->S, *A = cx->A;
	int K = cx->K;
	unsigned char *cur = cx->reach, *next = cx->reach + K + 1;
	memset(cur, 0, (size_t)K + 1);
	cur[0] = 1;
	for (int s = 0; s < cx->pp; s++) {
		double inflight = pl_job_inflight(cx->pp, cx->m, 1, s);
		int link = s > 0 ? pl_stage_link(cx->k, cx->dpn, s) : 0, any = 0, i = s;
		memset(next, 0, (size_t)K + 1);
		for (int j = s + 1; j <= K - (int)(cx->pp - s - 1); j++) {
			for (; i < j; i++) {
				if (!cur[i])
					continue;
				double t = T[j] - T[i] + (s > 0 ? cx->seg[i].p2p[link] : 0);
				if (t > tmax)
					continue;
				double mem = S[j] - S[i] + inflight * (A[j] - A[i]);
				if (cx->lim > 0 && mem > cx->lim)
					continue;
				break;
			}
			if (i < j)
				next[j] = any = 1;
		}
		if (!any)
			return 0;
		unsigned char *x = cur;
		cur = next;
		next = x;
	}
	return cur[K];
}

static void swap_doubles(double *a, double *b)
{
	double x = *a;
	*a = *b;
	*b = x;
}

/* The least value of v[0..n) that part_fits takes (it takes every value above
 * one it takes), or INFINITY if none; v is reordered. A binary search by
 * selection: each test splits what is left around a pivot (the median of
 * three), so about log2 n tests and O(n) moves in all, where sorting the K^2
 * stage times first took 6 % of a GPT-3 175B search. */
static double least_fitting(const part_ctx *cx, double *v, size_t n)
{
	double ans = INFINITY;
	size_t a = 0, b = n;
	while (a < b) {
		double x = v[a], y = v[a + (b - a) / 2], z = v[b - 1];
		double piv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
		/* [a, lt) below the pivot, [lt, gt) equal to it, [gt, b) above */
		size_t lt = a, i = a, gt = b;
		while (i < gt) {
			if (v[i] < piv)
				swap_doubles(&v[lt++], &v[i++]);
			else if (v[i] > piv)
				swap_doubles(&v[i], &v[--gt]);
			else
				i++;
		}
		if (part_fits(cx, piv)) {
			ans = piv;
			b = lt;
		} else {
			a = gt;
		}
	}
	return ans;
}

/* One bound c of the scan: the dp's split with every stage within c, taken
 * into first[] (and *best) when its sum + (m - 1) x its largest stage beats
 * *best. tmp holds pp + 1 entries. */
static void scan_bound(const part_ctx *cx, double c, double *best, int *first, int *tmp)
{
	double sum = part_dp(cx->T, cx->S, cx->A, cx->seg, cx->K, cx->pp, cx->m, cx->lim, cx->k,
	                     cx->dpn, c, cx->f, cx->arg);
	if (sum == INFINITY)
		return;
	double mx = part_read(cx->T, cx->seg, cx->K, cx->pp, cx->k, cx->dpn, cx->arg, tmp);
	double v = sum + (double)(cx->m - 1) * mx;
	if (v < *best) {
		*best = v;
		memcpy(first, tmp, sizeof *first * (size_t)(cx->pp + 1));
	}
}

double pl_pipeline_partition(const pl_segcost *seg, int K, int64_t pp, int64_t m, double mem_limit,
                             int64_t stage_devices, int64_t devices_per_node, int *first,
                             int *proven)
{
	*proven = 1;
	if (K < pp || pp < 1)
		return -1;
	double *T = pl_malloc(sizeof *T * (size_t)(K + 1)),
	       *S = pl_malloc(sizeof *S * (size_t)(K + 1)),
	       *A = pl_malloc(sizeof *A * (size_t)(K + 1));
	double *f = pl_malloc(sizeof *f * (size_t)(pp + 1) * (size_t)(K + 1));
	int *arg = pl_malloc(sizeof *arg * (size_t)(pp + 1) * (size_t)(K + 1));
	int *tmp = pl_malloc(sizeof *tmp * (size_t)(pp + 1));
	unsigned char *reach = pl_malloc(2 * ((size_t)K + 1));
	size_t ncand = 0, capc = (size_t)K * (size_t)(K + 1) * 3 / 2 + 4;
	double *cand = NULL, result = -1;
	if (!T || !S || !A || !f || !arg || !tmp || !reach)
		goto done;
	part_ctx cx = {.T = T,
	               .S = S,
	               .A = A,
	               .seg = seg,
	               .K = K,
	               .mono = 1,
	               .pp = pp,
	               .m = m,
	               .k = stage_devices,
	               .dpn = devices_per_node,
	               .lim = mem_limit,
	               .f = f,
	               .arg = arg,
	               .reach = reach};
	T[0] = S[0] = A[0] = 0;
	for (int j = 0; j < K; j++) {
		T[j + 1] = T[j] + seg[j].t;
		S[j + 1] = S[j] + seg[j].state;
		A[j + 1] = A[j] + seg[j].act;
		const double terms[] = {seg[j].t, seg[j].state, seg[j].act, seg[j].p2p[0],
		                        seg[j].p2p[1]};
		for (size_t q = 0; q < sizeof terms / sizeof *terms; q++)
			if (!(terms[q] >= 0 && terms[q] < INFINITY))
				cx.mono = 0;
	}
	if (m <= 1) { /* the step is the sum: no bound on stage times */
		if (part_dp(T, S, A, seg, K, pp, m, mem_limit, stage_devices, devices_per_node,
		            INFINITY, f, arg) < INFINITY) {
			double mx =
			    part_read(T, seg, K, pp, stage_devices, devices_per_node, arg, first);
			(void)mx;
			result = f[(size_t)pp * (K + 1) + K];
		}
		goto done;
	}
	/* no split fits even without a bound on stage times: say so at once */
	if (!part_fits(&cx, INFINITY))
		goto done;
	/* every stage time a split can have */
	cand = pl_malloc(sizeof *cand * capc * 2);
	if (!cand)
		goto done;
	for (int i = 0; i < K; i++)
		for (int j = i + 1; j <= K; j++) {
			double t = T[j] - T[i];
			if (i == 0) {
				cand[ncand++] = t;
			} else {
				cand[ncand++] = t + seg[i].p2p[0];
				cand[ncand++] = t + seg[i].p2p[1];
			}
		}
	/* the smallest bound a split fits within (feasibility grows with it) */
	double c0 = least_fitting(&cx, cand, ncand);
	if (c0 == INFINITY)
		goto done;
	/* Alpa's scan: at bound c the DP's split costs at most min sum + (m-1) c, so
	 * scanning every bound from c0 up to the optimum's largest stage finds it;
	 * stop once any split with a stage >= c costs more than the best (sum >=
	 * T[K]). After c0 only the bounds below that stop are sorted, ascending. */
	double best = INFINITY;
	scan_bound(&cx, c0, &best, first, tmp);
	size_t u = 0;
	for (size_t w = 0; w < ncand; w++)
		if (cand[w] > c0 && !(T[K] + (double)(m - 1) * cand[w] >= best))
			cand[u++] = cand[w];
	sort_doubles(cand, cand + capc, u);
	ncand = 0;
	for (size_t w = 0; w < u; w++)
		if (!ncand || cand[w] != cand[ncand - 1])
			cand[ncand++] = cand[w];
	for (size_t q = 0, scans = 1; q < ncand; q++) {
		if (T[K] + (double)(m - 1) * cand[q] >= best)
			break;
		if (++scans > PART_MAX_SCANS) {
			*proven = 0;
			break;
		}
		scan_bound(&cx, cand[q], &best, first, tmp);
	}
	result = best < INFINITY ? best : -1;
done:
	free(T);
	free(S);
	free(A);
	free(f);
	free(arg);
	free(tmp);
	free(reach);
	free(cand);
	return result;
}

/* ---- recompute ---- */

/* an activation computed by the model (not data, a param or a constant) */
static int computed(const pl_graph *g, int t)
{
	return g->tensors[t].producer >= 0;
}

/* a product of two computed activations (attention's Q.K^T and P.V) */
static int activation_product(const pl_graph *g, const pl_op *op)
{
	return (pl_op_traits(op) & PL_OPT_GEMM) && op->ninputs == 2 && computed(g, op->in[0]) &&
	       computed(g, op->in[1]);
}

/* op's one computed input of its output's shape when every other input is
 * not computed (a scale, a mask, a bias): the chain an attention core's
 * element-wise steps form; -1 otherwise */
static int chain_input(const pl_graph *g, const pl_op *op)
{
	const pl_tensor *o = &g->tensors[op->out[0]];
	int found = -1;
	for (int i = 0; i < op->ninputs; i++) {
		const pl_tensor *t = &g->tensors[op->in[i]];
		if (!computed(g, op->in[i]))
			continue;
		if (found >= 0 || t->rank != o->rank ||
		    memcmp(t->shape, o->shape, sizeof(int64_t) * (size_t)o->rank))
			return -1;
		found = op->in[i];
	}
	return found;
}

/* Flags the attention core around Softmax op sm (see pl_job_recompute_flags);
 * 0 when the ops around it are not one. */
static int attention_core(const pl_graph *g, int sm, uint8_t *flags)
{
	enum { MAX_CHAIN = 8 };
	int core[2 * MAX_CHAIN + 1], n = 0, o = sm;
	for (int k = 0;; k++) { /* back to Q.K^T */
		const pl_op *op = &g->ops[o];
		core[n++] = o;
		if (o != sm && activation_product(g, op))
			break;
		int t = o == sm ? op->in[0] : chain_input(g, op);
		if (k == MAX_CHAIN || t < 0 || !computed(g, t) || op->noutputs != 1)
			return 0;
		o = g->tensors[t].producer;
	}
	for (int k = 0, t = g->ops[sm].out[0];; k++) { /* forward to P.V */
		if (k == MAX_CHAIN || g->tensors[t].nconsumers != 1)
			return 0;
		o = g->tensors[t].consumers[0];
		const pl_op *op = &g->ops[o];
		core[n++] = o;
		if (activation_product(g, op))
			break;
		if (chain_input(g, op) != t || op->noutputs != 1)
			return 0;
		t = op->out[0];
	}
	for (int i = 0; i < n; i++)
		flags[core[i]] = 1;
	return 1;
}

int pl_job_recompute_flags(const pl_graph *g, int mode, uint8_t *flags)
{
	int blocks = 0;
	memset(flags, 0, (size_t)g->nops);
	if (mode == PL_RECOMPUTE_SELECTIVE) {
		for (int o = 0; o < g->nops; o++) {
			unsigned tr = pl_op_traits(&g->ops[o]);
			if (tr & PL_OPT_ATTENTION_CORE) { /* a fused core: itself */
				flags[o] = 1;
				blocks++;
			} else if (tr & PL_OPT_ATTENTION) {
				blocks += attention_core(g, o, flags);
			}
		}
		return blocks;
	}
	if (mode != PL_RECOMPUTE_FULL && mode != PL_RECOMPUTE_SELECTIVE_OP)
		return 0;
	pl_run runs[64];
	int nr = pl_find_runs(g, runs, 64);
	for (int k = 0; k < nr; k++)
		for (int b = 0; b < runs[k].count; b++) {
			int first = runs[k].first + b * runs[k].len, mm = 0;
			for (int i = 0; i < runs[k].len; i++) {
				const pl_op *op = &g->ops[first + i];
				unsigned tr = pl_op_traits(op);
				flags[first + i] = PL_RC_RERUN;
				if (mode != PL_RECOMPUTE_SELECTIVE_OP)
					continue;
				/* saved: the fused attention and the 1st, 3rd, ... weight product
				 */
				int weight_mm = (tr & PL_OPT_GEMM) && !activation_product(g, op);
				if ((tr & PL_OPT_ATTENTION_CORE) || (weight_mm && mm++ % 2 == 0))
					flags[first + i] = PL_RC_SAVED;
			}
			flags[first + runs[k].out_pos] = PL_RC_RERUN_OUT;
			blocks++;
		}
	return blocks;
}

/* ---- the outer search ---- */

void pl_job_plan_free(pl_job_plan *jp)
{
	if (!jp)
		return;
	pl_search_result_free(&jp->r);
	pl_problem_free(jp->p);
	pl_graph_free(jp->g);
	free(jp->stage);
	free(jp->stages);
	free(jp->alts);
	memset(jp, 0, sizeof *jp);
}

/* segment costs of a plan between the graph's clean cuts */
static pl_segcost *segments(const pl_problem *p, const pl_search_result *r, const int *cuts, int K)
{
	const pl_graph *g = p->g;
	pl_segcost *seg = pl_calloc((size_t)K + 1, sizeof *seg);
	int *segof = pl_malloc(sizeof *segof * ((size_t)p->nops + 1));
	if (!seg || !segof) {
		free(seg);
		free(segof);
		return NULL;
	}
	for (int j = 0; j < K; j++)
		for (int o = cuts[j]; o < cuts[j + 1]; o++) {
			pl_stagecost acc = {0};
			double act = 0;
			pl_job_op_cost(p, o, pl_search_result_split(p, r, o), &acc, &act);
			seg[j].t += acc.mb_compute_s + acc.mb_comm_s;
			seg[j].state += acc.mem_bytes;
			seg[j].act += act;
			segof[o] = j;
		}
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		const int64_t *ss = pl_search_result_split(p, r, ed->src_op),
		              *ds = pl_search_result_split(p, r, ed->dst_op);
		seg[segof[ed->dst_op]].t += pl_cost_edge(p, e, ss, ds);
		int a = segof[ed->src_op], b = segof[ed->dst_op];
		if (a == b || ed->src_is_input)
			continue;
		/* the activation crossing cuts a+1..b, sent once to the stage after */
		const pl_tensor *t = &g->tensors[ed->tensor];
		int dup = 0;
		for (int k = 0; k < t->nconsumers && !dup; k++)
			dup = t->consumers[k] < ed->dst_op && segof[t->consumers[k]] > a;
		if (dup)
			continue;
		pl_layout src, dst;
		pl_edge_layouts(p, e, ss, ds, &src, &dst);
		double bytes = pl_layout_local_bytes(&src);
		for (int j = a + 1; j <= b; j++)
			for (int l = 0; l < 2; l++)
				seg[j].p2p[l] += pl_p2p_link_time(p->c, bytes, t->requires_grad, l);
	}
	free(segof);
	return seg;
}

/* points of one m and pp: the ZeRO levels, with each recompute mode */
#define MAX_SIBLINGS (PL_RECOMPUTE_MODES * PL_ZERO_LEVELS)

/* a problem per (m, pp, recompute); points add the ZeRO level */
typedef struct prob {
	pl_problem *p;
	pl_cluster mesh; /* the problem points at it */
	int mi;          /* index of its micro-batch graph and cuts */
	int64_t m, pp;
	int rc;
	pl_degrees deg; /* of its stage mesh */
	int64_t vs; /* chunks per device: PL_AUTO chosen per plan (interleaved 1F1B), else fixed */
	int64_t vmax; /* the most chunks per device a plan of it may be given */
	int even;     /* a fixed split (pl_even_stages): 1 even layers, 2 uniform items */
	/* as built (build_one): per ZeRO level the least memory a plan needs and
	 * the node bound; or why not */
	double least[PL_ZERO_LEVELS], node_bound[PL_ZERO_LEVELS];
	pl_status st;
	pl_err err;
	int oom, late;
	/* one stage: the floor of its plans' transient bytes
	 * (pl_job_transient_floor), once known */
	double tfloor;
	int tfloor_known;
} prob;

/* A point's dp plans by memory price (0: the unconstrained one), kept so
 * that a price asked again is not solved again: the headroom passes ask the
 * first pass's unconstrained plans and its price search's growing prices
 * (they depend on the point, not on the limit) again, and priced_stages'
 * second walk its first's. dp's plan depends only on the problem, its ZeRO
 * level and the price, so a kept plan is the one dp would return. */
typedef struct kept_plan {
	double lambda;
	pl_search_result r;
} kept_plan;

typedef struct plan_memo {
	kept_plan *v;
	int n, cap;
} plan_memo;

typedef struct point {
	int prob, zero;
	plan_memo *memo; /* NULL until a plan is kept */
	int plain;         /* no pipeline stages, ZeRO or recompute the search chose */
	double bound;      /* the unconstrained optimum: no plan of the point is faster */
	double mem;        /* that plan's memory per stage mesh device, summed over stages */
	int done;          /* planned (or shown infeasible) in the first pass */
	int fit;           /* the unconstrained plan fits (with its stages) */
	int cramped;       /* ... but only with a slower schedule than its fastest */
	double node_bound; /* each op on its fastest candidate, edges free */
	int bounded;       /* bound is from a dp: the unconstrained optimum or below it */
	double rung;       /* the last relaxed dp's table limit (0: none) */
	int exact;         /* the first pass ran its exact dp */
	int nsib;          /* points of the same m and pp (-1: not listed yet) */
	int sib[MAX_SIBLINGS];
	double sib_diff[MAX_SIBLINGS]; /* sibling_bound's difference; NAN: not yet */
} point;

/* With pl_job_opts.top > 1: per point (prob x ZeRO level) the best step of
 * a plan that fits (INFINITY: none yet), its memory and interleaving, and the
 * k-th best of those steps, below which a point can still be among them. */
typedef struct topk {
	int k, n;
	double *step, *mem;
	int64_t *vs;
	double kth;
} topk;

static void topk_offer(topk *t, int at, double step, double mem, int64_t vs)
{
	if (!(step < t->step[at]))
		return;
	t->step[at] = step;
	t->mem[at] = mem;
	t->vs[at] = vs;
	/* the k-th best: k passes of "least above the last", O(k n) per offer */
	double last = -INFINITY;
	int taken = 0;
	for (int r = 0; r < t->k; r++) {
		double least = INFINITY;
		int count = 0;
		for (int i = 0; i < t->n; i++)
			if (t->step[i] > last && t->step[i] < least)
				least = t->step[i];
		for (int i = 0; i < t->n; i++)
			count += t->step[i] == least;
		if (least == INFINITY)
			break;
		taken += count;
		last = least;
		if (taken >= t->k)
			break;
	}
	t->kth = taken >= t->k ? last : INFINITY;
}

/* the best plan of plain points [0] and of the others [1] */
typedef struct slot {
	pl_search_result r;
	int *stage;
	pl_stagecost *stages;
	pl_jobcost cost;
	int prob, zero;
	int64_t vs; /* model chunks per device (interleaved 1F1B), 1: plain 1F1B */
	topk *tk;   /* the run's, or NULL (both slots point at it) */
} slot;

/* Can a step this point could reach still change the answer? The answer is
 * the best plain plan if it is within `margin` of the best other one. */
static double useful_below(const slot *b, int plain, double margin)
{
	double s0 = b[0].cost.step_s, s1 = b[1].cost.step_s;
	double u = plain ? fmin(s0, s1 * (1 + margin)) : fmin(s1, s0 / (1 + margin));
	return b[0].tk ? fmax(u, b[0].tk->kth) : u; /* or be among the top points */
}

static void progress(const pl_search_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void progress(const pl_search_opts *o, const char *fmt, ...)
{
	if (!o->progress)
		return;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	o->progress(o->ud, msg);
}

static int divisors(int64_t n, int64_t *out, int max)
{
	int k = 0;
	for (int64_t d = 1; d <= n && k < max; d++)
		if (n % d == 0)
			out[k++] = d;
	return k;
}

static int cmp_node_bound(const void *a, const void *b)
{
	double x = ((const point *)a)->node_bound, y = ((const point *)b)->node_bound;
	return x < y ? -1 : x > y;
}

/* A lower bound of the difference between p's and q's price of edge e over
 * its candidate pairs: 0 when p runs its forward redistribution at least as
 * often as q (the same table, or p's is q's plus that redistribution again,
 * as for an edge into an op p recomputes); -INFINITY when p runs it less
 * (the difference needs both tables priced, which costs more than the bound
 * saves). */
static double edge_least_diff(const pl_problem *p, const pl_problem *q, int e)
{
	return pl_problem_edge_fwd_times(p, e) >= pl_problem_edge_fwd_times(q, e) ? 0 : -INFINITY;
}

/* Points of one micro-batch count and stage count (siblings: ZeRO level and
 * recompute differ) have the same candidates, differ in node costs, and in
 * the price of the edges whose forward redistribution one runs more often
 * (into an op one recomputes, or out of one that holds what its consumer
 * keeps, pl_problem_edge_fwd_times). For any plan, time_P = time_Q +
 * the sum over ops of (node_P - node_Q) and over edges of (edge_P - edge_Q),
 * so P's optimum is at least Q's plus the sum of the least differences: a
 * bound for P from a sibling's optimum (q_opt, or any lower bound of it)
 * without a dp. -INFINITY when the candidates differ, q runs an edge's
 * forward redistribution more often than p, or out of memory. */
static double sibling_bound(pl_problem *p, int zp, pl_problem *q, int zq, double q_opt)
{
	pl_problem pz = *p, qz = *q;
	pz.job.zero = zp;
	qz.job.zero = zq;
	/* ops of one class in p and one in q differ alike: per p class, the q
	 * class seen first (-1: none yet) and their least difference */
	int *seen = pl_malloc(sizeof *seen * (size_t)p->nops);
	double *diff = pl_malloc(sizeof *diff * (size_t)p->nops), sum = 0;
	if (!seen || !diff) {
		free(seen);
		free(diff);
		return -INFINITY;
	}
	for (int op = 0; op < p->nops; op++)
		seen[op] = -1;
	for (int op = 0; op < p->nops && sum > -INFINITY; op++) {
		int cp = p->op_class[op], cq = q->op_class[op];
		if (seen[cp] == cq) {
			sum += diff[cp];
			continue;
		}
		int nl = p->g->ops[op].spec.nloops, n = p->nstrat[op];
		const pl_nodeparts *a = pl_problem_parts(p, op), *b = pl_problem_parts(q, op);
		if (n != q->nstrat[op] || !a || !b ||
		    memcmp(p->strat[op], q->strat[op], sizeof(int64_t) * (size_t)n * (size_t)nl)) {
			sum = -INFINITY;
			break;
		}
		double least = INFINITY;
		for (int k = 0; k < n; k++) {
			pl_nodecost x, y;
			pl_cost_fold(&pz, op, &a[k], &x);
			pl_cost_fold(&qz, op, &b[k], &y);
			least = fmin(least, (x.compute_s + x.comm_s) - (y.compute_s + y.comm_s));
		}
		if (seen[cp] < 0) {
			seen[cp] = cq;
			diff[cp] = least;
		}
		sum += least;
	}
	for (int e = 0; e < p->nedges && sum > -INFINITY; e++)
		sum += edge_least_diff(p, q, e);
	free(seen);
	free(diff);
	return q_opt + sum * pl_job_step_scale(&p->job);
}

/* the problems of the first pass, built on the threads */
typedef struct build {
	prob *probs;
	pl_graph *const *gms;
	uint8_t *(*flags)[PL_RECOMPUTE_MODES]; /* per micro-batch graph and mode */
	int z0, z1;
	const pl_search_opts *o;
	int64_t max_tp; /* pl_job_opts's */
	int replicas;   /* pl_job_opts's */
	double t0;
	double M; /* the memory limit per device (0: none) */
} build;

/* search/job.h says why least[0] times the step scale bounds every plan of p */
int pl_job_least(pl_problem *p, double least[3])
{
	double *per = pl_malloc(sizeof *per * 3 * ((size_t)p->nops + 1));
	if (!per)
		return -1;
	least[0] = least[1] = least[2] = 0;
	for (int op = 0; op < p->nops; op++) {
		int c = p->op_class[op];
		double *q = per + 3 * (size_t)c;
		if (c == op) {
			const pl_nodecost *n = pl_problem_node(p, op);
			const pl_nodeparts *pt = pl_problem_parts(p, op);
			if (!n || !pt) {
				free(per);
				return -1;
			}
			q[0] = q[1] = q[2] = INFINITY;
			for (int k = 0; k < p->nstrat[op]; k++) {
				pl_jobshare js;
				pl_parts_split(p, op, &pt[k], &js);
				q[0] = fmin(q[0], n[k].compute_s + n[k].comm_s);
				q[1] = fmin(q[1], js.state_bytes);
				q[2] = fmin(q[2], js.act_bytes);
			}
		}
		for (int i = 0; i < 3; i++)
			least[i] += q[i];
	}
	free(per);
	return 0;
}

/* The most chunks per device (interleaved 1F1B), at most vmax, with which
 * a plan of pp stages and m micro-batches could fit M per device: with v
 * chunks every stage holds at least the last stage's micro-batches in
 * flight (pl_job_inflight falls with the stage), so the stages together
 * hold at least the least state plus that many times the least
 * activations; above pp x M some stage is over M. 1 when no v > 1 could
 * fit (plain 1F1B, which the point's own memory check covers). */
static int64_t chunks_within(int64_t pp, int64_t m, int64_t vmax, double M, double state,
                             double act)
{
	int64_t v = vmax;
	while (v > 1 && M > 0 && state + pl_job_inflight(pp, m, v, pp - 1) * act > M * (double)pp)
		v--;
	return v;
}

/* Builds problem q with its node tables and, per ZeRO level, the least
 * memory and the node bound; writes only probs[q]. */
static void build_one(void *ctx, int q)
{
	const build *w = ctx;
	prob *pb = &w->probs[q];
	if (w->o->time_limit_s > 0 && pl_now() - w->t0 > w->o->time_limit_s) {
		pb->late = 1;
		return;
	}
	pl_job job = {.micro_batches = pb->m,
	              .stages = pb->pp,
	              .max_virtual = pb->vmax,
	              .recompute = pb->rc ? w->flags[pb->mi][pb->rc] : NULL,
	              .degrees = pb->deg,
	              .max_tp = w->max_tp,
	              /* a pipelined point's plan is cut into stages from one
	               * relaxed plan, not proven: with the cuts over fewer devices
	               * its relaxation partitioned into a slower pipeline
	               * (gpt13b-2layers, 2 stages on 16 devices: +2.3 %), so such
	               * points keep the cuts of all of a stage's devices */
	              .replicas = pb->pp > 1 ? PL_REPLICAS_NONE : w->replicas};
	pb->st = pl_problem_new_job(&pb->p, w->gms[pb->mi], &pb->mesh, &job, &pb->err);
	if (pb->st)
		return;
	/* the chunks a plan within the limit can have, at its least state (the
	 * ZeRO level that holds least): the bounds allow for no more */
	int64_t vfit = 1;
	double times[PL_ZERO_LEVELS];
	for (int z = w->z0; z <= w->z1; z++) {
		pl_problem_set_zero(pb->p, z);
		double least[3];
		pb->least[z] = pl_problem_least_plan_memory(pb->p);
		if (pb->least[z] < 0 || pl_job_least(pb->p, least)) {
			pb->oom = 1;
			return;
		}
		times[z] = least[0];
		if (pl_zero_pipeline_ok(z, pb->pp)) {
			int64_t v =
			    chunks_within(pb->pp, pb->m, pb->vmax, w->M, least[1], least[2]);
			vfit = v > vfit ? v : vfit;
		}
	}
	if (vfit < pb->vmax) {
		pb->vmax = vfit;
		pb->p->job.max_virtual = vfit > 1 ? vfit : 0;
	}
	/* the node bound under the chunks allowed for */
	for (int z = w->z0; z <= w->z1; z++)
		pb->node_bound[z] = times[z] * pl_job_step_scale(&pb->p->job);
}

/* Whether the relaxation would leave an edge out whose table is not priced
 * yet (one that is priced costs the exact dp nothing). */
static int relax_saves(const pl_problem *p, double relax)
{
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		if ((double)p->nstrat[ed->src_op] * (double)p->nstrat[ed->dst_op] > relax &&
		    !pl_problem_edge_priced(p, e))
			return 1;
	}
	return 0;
}

/* The relaxed dp a point climbs to after rung `rung` (0: none yet): `first`,
 * then tables RELAX_STEP times larger, and at least one more table than the
 * last rung kept. 0 when that dp would leave out no table still unpriced:
 * the exact dp costs no more, so it is due. */
static double next_rung(const pl_problem *p, double rung, double first)
{
	double next = rung > 0 ? rung * RELAX_STEP : first, least = INFINITY;
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		double n = (double)p->nstrat[ed->src_op] * (double)p->nstrat[ed->dst_op];
		if (n > rung && n < least)
			least = n;
	}
	if (least > next && least < INFINITY)
		next = least;
	return relax_saves(p, next) ? next : 0;
}

/* A point's lower bound now: its node bound, its dps' bound and its
 * siblings' (sibling_bound; the difference from each folded once). */
static double point_lb(point *pts, int npt, const prob *probs, int k)
{
	point *pt = &pts[k];
	const prob *pb = &probs[pt->prob];
	double lb = pt->bounded ? fmax(pt->node_bound, pt->bound) : pt->node_bound;
	if (pt->nsib < 0) {
		pt->nsib = 0;
		for (int q = 0; q < npt && pt->nsib < MAX_SIBLINGS; q++) {
			const prob *qb = &probs[pts[q].prob];
			if (q != k && qb->mi == pb->mi && qb->pp == pb->pp) {
				pt->sib[pt->nsib] = q;
				pt->sib_diff[pt->nsib++] = NAN;
			}
		}
	}
	for (int i = 0; i < pt->nsib; i++) {
		const point *sb = &pts[pt->sib[i]];
		if (!sb->bounded)
			continue;
		if (isnan(pt->sib_diff[i]))
			pt->sib_diff[i] =
			    sibling_bound(pb->p, pt->zero, probs[sb->prob].p, sb->zero, 0);
		lb = fmax(lb, sb->bound + pt->sib_diff[i]);
	}
	return lb;
}

static int cmp_point(const void *a, const void *b)
{
	double x = ((const point *)a)->bound, y = ((const point *)b)->bound;
	return x < y ? -1 : x > y;
}

/* the plans kept over all points of a search stop growing here (bytes of
 * choices; a plan of GPT-3 175B's 1,160 ops holds 4.6 kB) */
#define MEMO_MAX_BYTES ((size_t)64 << 20)

static int result_copy(const pl_problem *p, const pl_search_result *r, pl_search_result *out)
{
	*out = *r;
	out->choice = NULL;
	out->splits = NULL;
	out->conflicts = NULL;
	out->nconflicts = 0;
	size_t nc = sizeof *r->choice * (size_t)p->nops,
	       ns = sizeof *r->splits * (size_t)p->nops * PL_MAX_LOOPS;
	if (r->choice && !(out->choice = pl_malloc(nc)))
		return -1;
	if (r->splits && !(out->splits = pl_malloc(ns))) {
		pl_search_result_free(out);
		return -1;
	}
	if (r->choice)
		memcpy(out->choice, r->choice, nc);
	if (r->splits)
		memcpy(out->splits, r->splits, ns);
	return 0;
}

/* The plan kept for pt at price lambda, copied into *r: 1, or 0 when none
 * is kept (or no memory to copy it). */
static int memo_get(const point *pt, const pl_problem *p, double lambda, pl_search_result *r)
{
	for (int i = 0; pt->memo && i < pt->memo->n; i++)
		if (pt->memo->v[i].lambda == lambda)
			return result_copy(p, &pt->memo->v[i].r, r) == 0;
	return 0;
}

/* Keeps a copy of dp's plan r of pt at price lambda; *used counts the
 * bytes kept by the search (nothing past MEMO_MAX_BYTES, or when memory is
 * short: the memo only saves time). */
static void memo_put(size_t *used, point *pt, const pl_problem *p, double lambda,
                     const pl_search_result *r)
{
	size_t bytes = sizeof *r->choice * (size_t)p->nops;
	if (r->conflicts || r->splits || !r->choice || *used + bytes > MEMO_MAX_BYTES)
		return;
	if (!pt->memo && !(pt->memo = pl_calloc(1, sizeof *pt->memo)))
		return;
	plan_memo *m = pt->memo;
	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 4;
		kept_plan *v = realloc(m->v, sizeof *v * (size_t)cap);
		if (!v)
			return;
		m->v = v;
		m->cap = cap;
	}
	if (result_copy(p, r, &m->v[m->n].r))
		return;
	m->v[m->n++].lambda = lambda;
	*used += bytes;
}

static void memo_free(point *pt)
{
	for (int i = 0; pt->memo && i < pt->memo->n; i++)
		pl_search_result_free(&pt->memo->v[i].r);
	if (pt->memo)
		free(pt->memo->v);
	free(pt->memo);
	pt->memo = NULL;
}

/* try_plan's outcomes */
typedef enum {
	TRY_NOMEM = -1, /* out of memory */
	TRY_BEST = 0,   /* it fits and beats the slot's best: the slot took it */
	TRY_FITS = 1,   /* it fits but does not beat the slot's best */
	TRY_OVER = 2,   /* its stages (or schedule) do not fit */
} try_outcome;

/* Stages and price of plan r on a point; r is consumed (taken by the slot,
 * or freed). *cramped (may be NULL): it fits, but only with a slower
 * schedule than its fastest (fewer interleaved chunks: memory). */
static try_outcome try_plan(const pl_cluster *c, const prob *pb, int pbi, int *const *cutsv,
                            const int *Kv, int zero, pl_search_result *r, double M, int *proven,
                            slot *best, int *cramped)
{
	pl_problem *p = pb->p;
	int64_t pp = pb->pp, D = pl_cluster_devices_total(c);
	const int *cuts = cutsv[pb->mi];
	int K = Kv[pb->mi];
	int *first = pl_calloc((size_t)pp + 1, sizeof *first);
	int *stage = pl_calloc((size_t)p->nops + 1, sizeof *stage);
	pl_stagecost *sc = pl_calloc((size_t)pp, sizeof *sc);
	int64_t **sp = pl_malloc(sizeof *sp * (size_t)p->nops);
	try_outcome rc = TRY_NOMEM;
	int tight = 0; /* a faster schedule was over M */
	if (!first || !stage || !sc || !sp)
		goto done;
	*proven = 1;
	if (pp > 1 && pb->even) {
		/* the framework's split: memory is checked with the schedule below */
		if (pl_even_stages(p->g, cuts, K, pp, pb->even == 2, first)) {
			rc = TRY_OVER;
			goto done;
		}
		for (int s = 0; s < pp; s++)
			for (int op = cuts[first[s]]; op < cuts[first[s + 1]]; op++)
				stage[op] = s;
	} else if (pp > 1) {
		pl_segcost *seg = segments(p, r, cuts, K);
		if (!seg)
			goto done;
		double v = pl_pipeline_partition(seg, K, pp, pb->m, M, D / pp, c->devices_per_node,
		                                 first, proven);
		free(seg);
		if (v < 0) {
			rc = TRY_OVER;
			goto done;
		}
		for (int s = 0; s < pp; s++)
			for (int op = cuts[first[s]]; op < cuts[first[s + 1]]; op++)
				stage[op] = s;
	}
	for (int op = 0; op < p->nops; op++)
		sp[op] = (int64_t *)pl_search_result_split(p, r, op);
	/* the schedule: plain 1F1B, or interleaved over v chunks per device where
	 * the micro-batches fill whole rounds of the stages (Megatron asks m to be
	 * a multiple of pp) and every stage has v segments to make chunks of */
	int64_t v0 = pb->vs > 0 ? pb->vs : 1, v1 = v0, vbest = 0;
	if (pb->vs == PL_AUTO && pp > 1 && pb->m % pp == 0) {
		v1 = PL_JOB_AUTO_VIRTUAL;
		for (int s = 0; s < pp; s++)
			if (first[s + 1] - first[s] < v1)
				v1 = first[s + 1] - first[s];
	}
	if (v0 > 1 && (pp == 1 || pb->m % pp || v1 < v0)) {
		rc = TRY_OVER;
		goto done;
	}
	pl_jobcost jc;
	vbest = pl_job_price_schedules(p, sp, stage, c->devices_per_node, v0, v1, M, sc, &jc,
	                               &tight);
	if (vbest < 0)
		goto done;
	rc = TRY_OVER;
	if (!vbest)
		goto done;
	rc = TRY_FITS;
	if (best->tk)
		topk_offer(best->tk, pbi * PL_ZERO_LEVELS + zero, jc.step_s, jc.mem_bytes, vbest);
	/* the faster plan; of two as fast, the one that needs less memory */
	if (jc.step_s > best->cost.step_s ||
	    (jc.step_s == best->cost.step_s && jc.mem_bytes >= best->cost.mem_bytes))
		goto done;
	pl_search_result_free(&best->r);
	free(best->stage);
	free(best->stages);
	best->r = *r;
	memset(r, 0, sizeof *r);
	best->stage = stage;
	best->stages = sc;
	best->cost = jc;
	best->prob = pbi;
	best->zero = zero;
	best->vs = vbest;
	stage = NULL;
	sc = NULL;
	rc = TRY_BEST;
done:
	if (cramped)
		*cramped = tight;
	pl_search_result_free(r);
	free(first);
	free(stage);
	free(sc);
	free(sp);
	return rc;
}

/* dp's plan of a point's inner problem minimising time + lambda * memory
 * (unconstrained otherwise); 0, or -1 when dp failed. */
/* A point's plans under memory prices (search/price.h), each tried as the
 * point's plan where it fits. */
typedef struct pricectx {
	const pl_cluster *c;
	const prob *pb;
	int pbi;
	int *const *cutsv;
	const int *Kv;
	point *pt;
	const pl_search_opts *io;
	double lim, M, margin, scale;
	slot *best;
	size_t *memo_bytes;
	int stages;   /* fits: the plan's stages fit (else: its memory is within lim) */
	int strict;   /* stages: ... with the plan's fastest schedule */
	int cramped;  /* a plan's stages fitted only with a slower schedule */
	double m_out; /* the memory of the last plan that did not fit (stages) */
	int proven, nomem;
} pricectx;

static int price_plan(void *ud, double lambda, double bound, pl_priced *out)
{
	pricectx *x = ud;
	double useful = useful_below(x->best, x->pt->plain, x->margin);
	if (!x->stages && x->scale * bound >= useful)
		return PL_PRICE_DONE; /* the bound alone settles the point */
	pl_search_opts d = *x->io;
	d.dp.mem_price = lambda;
	pl_search_result r = {0};
	pl_err err = {{0}};
	if (!memo_get(x->pt, x->pb->p, lambda, &r)) {
		if (pl_search_dp(x->pb->p, &d, &r, &err))
			return -1;
		memo_put(x->memo_bytes, x->pt, x->pb->p, lambda, &r);
	}
	if (!r.optimal) {
		pl_search_result_free(&r);
		return -1;
	}
	out->t = r.step_s / x->scale;
	out->m = r.mem_bytes;
	int tried = !x->stages && out->m <= x->lim;
	if (x->stages || tried) {
		int cramped;
		try_outcome fit = try_plan(x->c, x->pb, x->pbi, x->cutsv, x->Kv, x->pt->zero, &r,
		                           x->M, &x->proven, &x->best[!x->pt->plain], &cramped);
		if (fit == TRY_NOMEM) {
			x->nomem = 1;
			return -1;
		}
		out->fits = fit == TRY_BEST || fit == TRY_FITS;
		x->cramped |= out->fits && cramped;
		if (x->strict && cramped)
			out->fits = 0; /* a price may buy room for its fastest schedule */
	} else {
		pl_search_result_free(&r);
		out->fits = 0;
	}
	if (x->stages && !out->fits) {
		/* the price buys no more memory, or costs too much time */
		if (!(out->m < x->m_out) || out->t * x->scale >= useful)
			return PL_PRICE_DONE;
		x->m_out = out->m;
	}
	return 0;
}

/* A price search's context for point pt of problem pb: no limit, no
 * stages (lagrange() and priced_stages() set theirs) */
static pricectx price_ctx(const pl_cluster *c, const prob *pb, int pbi, int *const *cutsv,
                          const int *Kv, point *pt, const pl_search_opts *io, double M,
                          double margin, slot *best, size_t *memo_bytes)
{
	return (pricectx){.c = c,
	                  .pb = pb,
	                  .pbi = pbi,
	                  .cutsv = cutsv,
	                  .Kv = Kv,
	                  .pt = pt,
	                  .io = io,
	                  .M = M,
	                  .margin = margin,
	                  .scale = pl_job_step_scale(&pb->p->job),
	                  .best = best,
	                  .memo_bytes = memo_bytes};
}

/* lagrange's outcomes */
typedef enum {
	LAG_NOMEM = -1,  /* out of memory */
	LAG_PARETO = 0,  /* the Pareto dp is still needed */
	LAG_USELESS = 1, /* the bound reaches `useful_below`: nothing here can
	                  * change the answer */
	LAG_OPTIMUM = 2, /* a plan within the limit is as fast as the bound (the
	                  * inner optimum; with one stage the point's) */
} lag_outcome;

/* Lagrangian bounds for a point's inner problem under memory `lim`, before
 * its (much slower) Pareto dp: for any price, dp's plan minimising raw time
 * + price x memory gives optimum under lim >= scale x (time + price x
 * (memory - lim)) (raw: the tables' time, step = scale x raw). Plans within
 * the limit are tried as the point's plans. */
static lag_outcome lagrange(const pl_cluster *c, const prob *pb, int pbi, int *const *cutsv,
                            const int *Kv, point *pt, const pl_search_opts *io, double lim,
                            double M, double margin, slot *best, size_t *memo_bytes)
{
	pricectx x = price_ctx(c, pb, pbi, cutsv, Kv, pt, io, M, margin, best, memo_bytes);
	double scale = x.scale;
	x.lim = lim;
	/* "fits" is the plan's: its tensors and its transient bytes (a plan
	 * within lim may not fit beside them) */
	pl_priced at0 = {pt->bound / scale, pt->mem, pt->fit};
	pl_price_result r;
	pl_price_search(&(pl_price_opts){.limit = lim,
	                                 .max_plans = 16,
	                                 .least_m = pb->least[pt->zero],
	                                 .at0 = &at0,
	                                 .plan = price_plan,
	                                 .ud = &x},
	                &r);
	if (x.nomem)
		return LAG_NOMEM;
	if (r.optimal)
		return pb->pp == 1 && x.proven ? LAG_OPTIMUM : LAG_PARETO;
	return scale * r.bound >= useful_below(best, pt->plain, margin) ? LAG_USELESS : LAG_PARETO;
}

/* With pipeline stages the inner problem sums memory over the stages with
 * one micro-batch in flight; it does not see 1F1B stack micro-batches on the
 * first stages, so its plan may not split into stages that fit. Plans under
 * a memory price trade time for memory along the inner problem's convex
 * hull: the price search runs with "fits" meaning the plan's stages fit, so
 * it ends between the last plan that did not and the first that did. It
 * stops early when a price buys no more memory, or when a plan that does
 * not fit is as slow as `useful_below` (a plan's step is at least its inner
 * time, which grows with the price). Where a plan's stages fit only with a
 * slower schedule than its fastest (fewer interleaved chunks: they keep
 * fewer micro-batches of activations), a second walk runs with "fits"
 * meaning with the fastest schedule, so that a larger memory limit does not
 * end the search at a slower plan than a smaller one would. A heuristic, as
 * the split of one relaxed plan into stages is. 0, or -1 out of memory. */
static int priced_stages(const pl_cluster *c, const prob *pb, int pbi, int *const *cutsv,
                         const int *Kv, point *pt, const pl_search_opts *io, double M,
                         double margin, slot *best, size_t *memo_bytes)
{
	pricectx x = price_ctx(c, pb, pbi, cutsv, Kv, pt, io, M, margin, best, memo_bytes);
	double scale = x.scale;
	x.stages = 1;
	x.cramped = pt->cramped;
	x.m_out = INFINITY;
	pl_priced at0 = {pt->bound / scale, pt->mem, 0};
	pl_price_result r;
	if (!pt->fit) /* to the first plan whose stages fit */
		pl_price_search(
		    &(pl_price_opts){.max_plans = 32, .at0 = &at0, .plan = price_plan, .ud = &x},
		    &r);
	if (!x.nomem && x.cramped) {
		/* then, where one fitted only with fewer interleaved chunks than
		 * its fastest schedule, on to leaner plans that afford them */
		x.strict = 1;
		x.m_out = INFINITY;
		pl_price_search(
		    &(pl_price_opts){.max_plans = 32, .at0 = &at0, .plan = price_plan, .ud = &x},
		    &r);
	}
	return x.nomem ? -1 : 0;
}

/* One inner search's time limit: what is left of the job's (a quarter of it
 * while no plan is found, so that a slow inner searcher such as ilp leaves
 * time for other points and stops with its best plan), so that no inner
 * search runs past the job's limit. */
static void inner_deadline(pl_search_opts *io, const pl_search_opts *o, double t0, const slot *best)
{
	if (o->time_limit_s <= 0)
		return;
	double left = fmax(0.01, o->time_limit_s - (pl_now() - t0));
	io->time_limit_s = best[0].prob < 0 && best[1].prob < 0 ? fmax(0.01, left / 4) : left;
}

/* The time limit ran out (or, in tests, job_stop_after points were planned). */
static int out_of_time(const pl_search_opts *o, double t0, int planned)
{
	return (o->time_limit_s > 0 && pl_now() - t0 > o->time_limit_s) ||
	       (o->hooks && o->hooks->job_stop_after > 0 && planned >= o->hooks->job_stop_after);
}

static pl_status timed_out(pl_err *err, const pl_search_opts *o, int points)
{
	return pl_err_set(err, PL_ETIMEOUT,
	                  "job: the time limit of %.3g s ran out (%d points of pipeline stages x "
	                  "micro-batches x ZeRO x recompute bounded so far)",
	                  o->time_limit_s, points);
}

/* The degrees of a stage mesh of k devices from the fixed ones (see
 * pl_job_opts). 0, or -1 with why[] saying why they do not fit. */
static void degree_name(char *buf, size_t n, int64_t v)
{
	if (v > 0)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "(free)");
}

static int stage_degrees(const pl_degrees *fix, int64_t k, int64_t pp, pl_degrees *out, char *why,
                         size_t n)
{
	*out = *fix;
	int64_t cp = fix->cp > 0 ? fix->cp : 1;
	if (fix->dp > 0 || fix->tp > 0) {
		out->cp = cp;
		int64_t known = cp * (fix->dp > 0 ? fix->dp : 1) * (fix->tp > 0 ? fix->tp : 1);
		if (k % known || (fix->dp > 0 && fix->tp > 0 && known != k)) {
			char d[32], t[32];
			degree_name(d, sizeof d, fix->dp);
			degree_name(t, sizeof t, fix->tp);
			snprintf(why, n,
			         "with %lld pipeline stages a stage has %lld devices, which data "
			         "parallel %s x tensor parallel %s x context parallel %lld cannot "
			         "fill (dp x tp x cp x pp must be the %lld devices)",
			         (long long)pp, (long long)k, d, t, (long long)cp,
			         (long long)(k * pp));
			return -1;
		}
		if (fix->dp <= 0)
			out->dp = k / known;
		if (fix->tp <= 0)
			out->tp = k / known;
	} else if (k % cp) {
		snprintf(why, n,
		         "with %lld pipeline stages a stage has %lld devices, which context "
		         "parallel %lld does not divide",
		         (long long)pp, (long long)k, (long long)cp);
		return -1;
	}
	if (fix->ep > 0 && out->dp > 0 && (out->dp * cp) % fix->ep) {
		snprintf(why, n,
		         "expert parallel %lld does not divide data parallel %lld x context "
		         "parallel %lld (the experts are spread over the data-parallel ranks)",
		         (long long)fix->ep, (long long)out->dp, (long long)cp);
		return -1;
	}
	return 0;
}

/* ---- the search, in phases ----
 *
 * Points: pp (divisors of D whose stage mesh tiles the nodes), m (divisors of
 * the batch), recompute, ZeRO. enumerate -> bound -> solve -> assemble, over
 * the run below. Invariant after each phase: best[0] is the best plan found
 * without pipeline stages, ZeRO or recompute beyond what was asked (plain),
 * best[1] the best with them (prob -1 while none), each priced by
 * pl_job_price; a point marked done needs no more work (planned to its
 * optimum, or bounded out); all_exact says whether every plan so far is its
 * point's proven optimum. Pipeline stages, ZeRO and recompute are memory
 * measures: where the search chooses them, the best plan without them is kept
 * if it is within PL_JOB_SIMPLER of the best with them (unless jo->fastest).
 * A phase returns PL_OK, or the search's error with err set. */
typedef struct jobrun {
	const pl_graph *g;
	const pl_cluster *c;
	const pl_search_opts *o;
	const pl_job_opts *jo;
	pl_job_plan *out;
	pl_err *err;
	double t0, margin, M;
	const pl_searcher *inner;
	pl_search_opts io; /* the inner searches' options: exact, no limit */
	int64_t D, B;
	int64_t pps[64], ms[64]; /* stage counts and micro-batch counts tried */
	int npp, nm, z0, z1, r0, r1;
	pl_status first_err; /* the first point that failed to build, and why */
	pl_err ferr;
	pl_status solver_st; /* the first inner search that failed other than by memory */
	pl_err solver_err;
	double least_need; /* the least memory any one-stage point needs */
	/* of pipelined points, the least of a device's share of what a plan of
	 * the point needs (its stages' sum over the stages), in-flight
	 * micro-batches aside: a bound below what its fullest stage needs */
	double least_share;
	int all_exact, nprob, npt;
	int fell_back; /* dp gave the points over to rec: the graph is too entangled */
	char skipped[1100];  /* why the last point skipped was */
	int stopped;        /* the time limit ran out with a plan: where (second pass: npt + k) */
	int planned;        /* points that ran a dp */
	/* the headroom's pass: a point's plans under memory prices are its
	 * plans, no Pareto dp (the pass is not proven where one was needed) */
	int no_pareto;
	size_t memo_bytes; /* the points' kept plans (plan_memo) */
	pl_graph *gms[64];
	int *cutsv[64], Kv[64];
	uint8_t *flagsv[64][PL_RECOMPUTE_MODES]; /* [0]: none */
	prob *probs;
	point *pts;
	slot best[2];
	topk tk; /* with jo->top > 1 */
} jobrun;

static pl_status job_nomem(jobrun *s)
{
	return pl_err_set(s->err, PL_ENOMEM, "out of memory");
}

/* A point's inner search other than dp (rec, ilp's incumbent) prices
 * splits off the candidate lists many times, and try_plan the plan it
 * returns again: p keeps those prices (pl_problem_memo) until the point is
 * done. 0, or -1 out of memory. */
static int memo_on(const jobrun *s, pl_problem *p)
{
	return s->inner == pl_searcher_get("dp") ? 0 : pl_problem_memo(p, 1);
}

/* An inner search failed: kept when it is the first that failed other than
 * by memory or time (a graph too entangled for exact dp), so that a job
 * without a plan says why rather than that none fits. */
static void inner_failed(jobrun *s, pl_status st, const pl_err *e)
{
	if (!s->solver_st && st != PL_EINFEASIBLE && st != PL_ETIMEOUT) {
		s->solver_st = st;
		s->solver_err = *e;
	}
}

/* dp refused a point's graph as too entangled for exact tables (a property
 * of the graph's shape, the same at every point), and the caller asked for
 * the fall-back (pl_job_opts.rec_fallback): the job plans this and every
 * later point with rec, which plans any graph; its plans are not proven, so
 * neither is the job's (why says so). 1 when it switched: run the point
 * again. */
static int inner_fallback(jobrun *s, pl_status st, const pl_err *e)
{
	if (!s->jo->rec_fallback || st != PL_ESOLVER || s->inner != pl_searcher_get("dp") ||
	    !strstr(e->msg, "too entangled"))
		return 0;
	s->inner = pl_searcher_get("rec");
	s->all_exact = 0;
	s->fell_back = 1;
	return 1;
}

/* The fixed dimensions checked against each other and the devices; the
 * stage counts (pps) and micro-batch counts (ms) to try. */
static pl_status job_options(jobrun *s)
{
	const pl_graph *g = s->g;
	const pl_job_opts *jo = s->jo;
	pl_err *err = s->err;
	int64_t D = s->D, B = s->B;
	/* the caller's contract (search/job.h): PL_AUTO or a value, never 0 */
	const struct {
		const char *name;
		int64_t v, lo, hi;
	} dim[] = {{"stages", jo->stages, 1, INT64_MAX},
	           {"micro_batches", jo->micro_batches, 1, INT64_MAX},
	           {"virtual_stages", jo->virtual_stages, 1, INT64_MAX},
	           {"micro_batch_size", jo->micro_batch_size, 1, INT64_MAX},
	           {"zero", jo->zero, 0, PL_ZERO_LEVELS - 1},
	           {"recompute", jo->recompute, 0, PL_RECOMPUTE_MODES - 1}};
	for (size_t i = 0; i < sizeof dim / sizeof *dim; i++)
		if (dim[i].v != PL_AUTO && (dim[i].v < dim[i].lo || dim[i].v > dim[i].hi))
			return pl_err_set(
			    err, PL_EINVAL,
			    "job options: %s %lld: expected PL_AUTO (searched) or %lld to "
			    "%lld",
			    dim[i].name, (long long)dim[i].v, (long long)dim[i].lo,
			    (long long)dim[i].hi);
	if (jo->stages != PL_AUTO && D % jo->stages) {
		char list[256] = "";
		int nd = divisors(D, s->pps, 64);
		size_t len = 0;
		for (int k = 0; k < nd && len < sizeof list; k++)
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld",
			                        k ? ", " : "", (long long)s->pps[k]);
		return pl_err_set(err, PL_EINVAL,
		                  "pipeline stages %lld do not divide the %lld devices (%lld would "
		                  "sit idle); the divisors are %s",
		                  (long long)jo->stages, (long long)D, (long long)(D % jo->stages),
		                  list);
	}
	if (jo->degrees.ep > 1) {
		int experts = 0;
		for (int o = 0; o < g->nops && !experts; o++)
			experts = (pl_op_traits(&g->ops[o]) & PL_OPT_DISPATCH) != 0;
		if (!experts)
			return pl_err_set(
			    err, PL_EINVAL,
			    "expert parallel %lld: %s has no experts (no MoEDispatch op)",
			    (long long)jo->degrees.ep, g->path);
	}
	if (jo->stages != PL_AUTO && jo->zero != PL_AUTO &&
	    !pl_zero_pipeline_ok(jo->zero, jo->stages))
		return pl_err_set(err, PL_EINVAL, "ZeRO %d with %lld pipeline stages: %s", jo->zero,
		                  (long long)jo->stages, PL_ZERO_PIPELINE_WHY);
	s->npp = jo->stages != PL_AUTO ? 1 : divisors(D, s->pps, 64);
	if (jo->stages == PL_AUTO && pl_degrees_any(&jo->degrees)) {
		/* the stage counts the fixed degrees leave */
		int k = 0;
		char why[512] = "", w[512];
		pl_degrees deg;
		for (int b = 0; b < s->npp; b++)
			if (!stage_degrees(&jo->degrees, D / s->pps[b], s->pps[b], &deg, w,
			                   sizeof w))
				s->pps[k++] = s->pps[b];
			else if (!why[0])
				memcpy(why, w, sizeof why);
		if (!k)
			return pl_err_set(
			    err, PL_EINVAL,
			    "no pipeline stage count goes with the fixed degrees on %lld "
			    "devices (data parallel x tensor parallel x context parallel "
			    "must divide them, and expert parallel divide data parallel x "
			    "context parallel); for example, %s",
			    (long long)D, why);
		s->npp = k;
	}
	s->nm = jo->micro_batches != PL_AUTO ? 1 : B > 0 ? divisors(B, s->ms, 64) : 1;
	if (jo->stages != PL_AUTO)
		s->pps[0] = jo->stages;
	if (jo->micro_batch_size != PL_AUTO && jo->degrees.dp > 0 && jo->micro_batches == PL_AUTO) {
		/* Megatron: batch = micro-batch size x dp x micro-batches */
		int64_t per = jo->micro_batch_size * jo->degrees.dp;
		if (B <= 0 || B % per)
			return pl_err_set(
			    err, PL_EINVAL,
			    "micro-batch size %lld x data parallel %lld does not divide "
			    "the batch of %lld",
			    (long long)jo->micro_batch_size, (long long)jo->degrees.dp,
			    (long long)B);
		s->nm = 1;
		s->ms[0] = B / per;
	} else if (jo->micro_batches != PL_AUTO) {
		s->ms[0] = jo->micro_batches;
	} else if (B <= 0) {
		s->ms[0] = 1;
	}
	s->z0 = jo->zero != PL_AUTO ? jo->zero : 0;
	s->z1 = jo->zero != PL_AUTO ? jo->zero : PL_ZERO_LEVELS - 1;
	s->r0 = jo->recompute != PL_AUTO ? jo->recompute : 0;
	s->r1 = jo->recompute != PL_AUTO ? jo->recompute : PL_RECOMPUTE_MODES - 1;
	return PL_OK;
}

/* The most chunks per device (interleaved 1F1B) a plan of pp stages and m
 * micro-batches may be given (try_plan's choice): the fixed count, or with
 * the count free up to PL_JOB_AUTO_VIRTUAL where m fills rounds of the stages,
 * and never more than each stage has segments of the K between clean cuts
 * (some stage has at most K / pp). What the point's lower bound allows for. */
static int64_t most_chunks(const pl_job_opts *jo, int64_t m, int64_t pp, int K)
{
	if (jo->virtual_stages != PL_AUTO)
		return jo->virtual_stages > 1 ? jo->virtual_stages : 1;
	if (pp <= 1 || m % pp)
		return 1;
	int64_t v = K / pp;
	return v < 1 ? 1 : v > PL_JOB_AUTO_VIRTUAL ? PL_JOB_AUTO_VIRTUAL : v;
}

/* The problems of stage count pp for micro-batch graph a (and recompute),
 * appended to s->probs; a fixed configuration that cannot be is an error, a
 * searched one is skipped (s->skipped says why). */
/* Whether the job searches recompute mode rc (pl_job_opts.recompute_mask) */
static int searched(const pl_job_opts *jo, int rc)
{
	if (jo->recompute != PL_AUTO)
		return 1;
	int mask = jo->recompute_mask ? jo->recompute_mask : (1 << PL_RECOMPUTE_SEARCHED) - 1;
	return mask >> rc & 1;
}

static pl_status enumerate_stages(jobrun *s, int a, const int *blocks)
{
	const pl_job_opts *jo = s->jo;
	int64_t m = s->ms[a], D = s->D, B = s->B;
	int K = s->Kv[a];
	for (int b = 0; b < s->npp; b++) {
		int64_t pp = s->pps[b];
		pl_degrees deg;
		char why[sizeof s->skipped];
		if (stage_degrees(&jo->degrees, D / pp, pp, &deg, why, sizeof why)) {
			if (jo->stages != PL_AUTO)
				return pl_err_set(s->err, PL_EINVAL, "%s", why);
			snprintf(s->skipped, sizeof s->skipped, "%s", why);
			continue;
		}
		if (jo->virtual_stages > 1 && (pp == 1 || m % pp)) {
			snprintf(
			    s->skipped, sizeof s->skipped,
			    "%lld chunks per device (interleaved 1F1B) need pipeline stages and "
			    "micro-batches a multiple of them (Megatron's rule); %lld "
			    "micro-batches over %lld stages are not",
			    (long long)jo->virtual_stages, (long long)m, (long long)pp);
			continue;
		}
		int64_t dpd = deg.dp > 0 ? deg.dp : 1;
		if (B > 0 && ((B / m) % dpd || (jo->micro_batch_size != PL_AUTO &&
		                                jo->micro_batch_size * dpd * m != B))) {
			snprintf(
			    s->skipped, sizeof s->skipped,
			    "%lld micro-batches of %lld sequences with %lld pipeline stages do "
			    "not give each of data parallel %lld ranks %s",
			    (long long)m, (long long)(B / m), (long long)pp, (long long)dpd,
			    jo->micro_batch_size != PL_AUTO ? "the micro-batch size asked for"
			                                    : "a whole number of sequences");
			continue;
		}
		pl_cluster mesh;
		int even = jo->layer_cuts >= 2 ? jo->layer_cuts - 1 : 0, *first = NULL;
		if (even && pp > 1 && pp <= K &&
		    (!(first = pl_malloc(sizeof *first * (size_t)(pp + 1))) ||
		     pl_even_stages(s->gms[a], s->cutsv[a], K, pp, even == 2, first))) {
			int nomem = !first;
			free(first);
			if (nomem)
				return job_nomem(s);
			if (jo->stages != PL_AUTO)
				return pl_err_set(
				    s->err, PL_EINVAL,
				    "%lld pipeline stages split %s (--stage-cuts %s): the "
				    "model has too few repeated layers, or a layer does "
				    "not start at a clean cut",
				    (long long)pp,
				    even == 2 ? "uniformly over the embedding, the layers, "
				                "the final norm and the head"
				              : "with the same number of layers",
				    even == 2 ? "uniform" : "even");
			continue;
		}
		free(first);
		if (pp > K || pl_stage_mesh(s->c, D / pp, &mesh)) {
			if (jo->stages != PL_AUTO)
				return pl_err_set(
				    s->err, PL_EINVAL, "%lld pipeline stages: %s", (long long)pp,
				    pp > K ? "the model has fewer clean cuts (one activation, "
				             "no param crossing)"
				           : "a stage's devices do not tile the nodes");
			continue;
		}
		for (int rc = s->r0; rc <= s->r1; rc++)
			if ((!rc || blocks[rc]) && searched(jo, rc)) /* nothing it recomputes */
				s->probs[s->nprob++] = (prob){.mesh = mesh,
				                              .mi = a,
				                              .m = m,
				                              .pp = pp,
				                              .rc = rc,
				                              .deg = deg,
				                              .vs = jo->virtual_stages,
				                              .even = even,
				                              .vmax = most_chunks(jo, m, pp, K)};
	}
	return PL_OK;
}

/* The points: per micro-batch count its graph, clean cuts and recompute
 * flags; per stage count and recompute a problem, built on the threads; per
 * ZeRO level a point, with its node bound, unless no plan of it fits. */
static pl_status enumerate(jobrun *s)
{
	const pl_job_opts *jo = s->jo;
	pl_status st;
	size_t nprob = (size_t)s->nm * (size_t)s->npp * PL_RECOMPUTE_MODES;
	s->probs = pl_calloc(nprob + 1, sizeof *s->probs);
	s->pts = pl_calloc(nprob * PL_ZERO_LEVELS + 1, sizeof *s->pts);
	if (!s->probs || !s->pts)
		return job_nomem(s);
	if (jo->top > 1) {
		size_t n = nprob * PL_ZERO_LEVELS; /* one per point: prob x ZeRO level */
		s->tk = (topk){.k = jo->top, .n = (int)n, .kth = INFINITY};
		s->tk.step = pl_malloc(sizeof *s->tk.step * (n + 1));
		s->tk.mem = pl_malloc(sizeof *s->tk.mem * (n + 1));
		s->tk.vs = pl_malloc(sizeof *s->tk.vs * (n + 1));
		if (!s->tk.step || !s->tk.mem || !s->tk.vs)
			return job_nomem(s);
		for (size_t i = 0; i < n; i++)
			s->tk.step[i] = INFINITY;
		s->best[0].tk = s->best[1].tk = &s->tk;
	}
	/* every micro-batch count's graph, the model read once (it was read once
	 * per count: 12 % of a GPT-3 175B search) */
	pl_status gst[sizeof s->ms / sizeof *s->ms];
	pl_err gerr[sizeof s->ms / sizeof *s->ms];
	pl_graph_microbatches(s->g, s->nm, s->ms, s->gms, gst, gerr,
	                      s->o->time_limit_s > 0 ? s->t0 + s->o->time_limit_s : 0);
	for (int a = 0; a < s->nm; a++) {
		if (out_of_time(s->o, s->t0, 0))
			return timed_out(s->err, s->o, s->out->points);
		pl_err e2 = gerr[a];
		pl_status s2 = gst[a];
		if (!s2 && jo->annotate)
			s2 = jo->annotate(jo->annotate_ud, s->gms[a], &e2);
		if (s2) {
			if (s->nm == 1) { /* asked for: say why not */
				*s->err = e2;
				return s2;
			}
			snprintf(s->skipped, sizeof s->skipped, "%s", e2.msg);
			continue;
		}
		pl_graph *gm = s->gms[a];
		s->cutsv[a] = pl_malloc(sizeof *s->cutsv[a] * ((size_t)gm->nops + 2));
		int blocks[PL_RECOMPUTE_MODES] = {0};
		for (int r = 1; r < PL_RECOMPUTE_MODES; r++)
			if ((s->flagsv[a][r] = pl_malloc((size_t)gm->nops + 1)))
				blocks[r] = pl_job_recompute_flags(gm, r, s->flagsv[a][r]);
		int nc = s->cutsv[a] ? pl_clean_cuts(gm, s->cutsv[a]) : -1;
		if (nc > 0 && jo->layer_cuts)
			nc = pl_layer_cuts(gm, s->cutsv[a], nc);
		if (nc < 0 || !s->flagsv[a][PL_RECOMPUTE_FULL] ||
		    !s->flagsv[a][PL_RECOMPUTE_SELECTIVE])
			return job_nomem(s);
		s->Kv[a] = nc - 1;
		int r = jo->recompute;
		if (r != PL_AUTO && r != PL_RECOMPUTE_NONE && !blocks[r])
			return pl_err_set(
			    s->err, PL_EINVAL, "recompute %s: the model has %s",
			    pl_recompute_name(r),
			    r == PL_RECOMPUTE_FULL || r == PL_RECOMPUTE_SELECTIVE_OP
			        ? "no repeated layers (it re-runs every repeated layer)"
			        : "no attention core (a product of two activations into a Softmax, "
			          "on into a product with another activation, or a fused "
			          "Attention) to recompute");
		if ((st = enumerate_stages(s, a, blocks)))
			return st;
	}
	if (!s->nprob)
		return pl_err_set(s->err, PL_EINVAL, "no whole-job configuration is possible: %s",
		                  s->skipped[0] ? s->skipped
		                                : "no micro-batch count divides the batch");
	build bw = {.probs = s->probs,
	            .gms = s->gms,
	            .flags = s->flagsv,
	            .z0 = s->z0,
	            .z1 = s->z1,
	            .o = s->o,
	            .max_tp = s->jo->max_tp,
	            .replicas = s->jo->replicas,
	            .t0 = s->t0,
	            .M = s->M};
	pl_parallel_for(s->nprob, s->o->threads, build_one, &bw);
	/* problems of one micro-batch count and stage count (recompute differs)
	 * price each edge table they share once */
	for (int q = 0; q < s->nprob; q++)
		for (int r = 0; r < q && s->probs[q].p && !s->probs[q].st; r++)
			if (s->probs[r].p && !s->probs[r].st && s->probs[r].mi == s->probs[q].mi &&
			    s->probs[r].pp == s->probs[q].pp) {
				s->probs[q].p->c = s->probs[r].p->c; /* the same stage mesh */
				pl_problem_share(s->probs[r].p, s->probs[q].p);
				break;
			}
	for (int q = 0; q < s->nprob; q++) {
		prob *pb = &s->probs[q];
		if (pb->oom)
			return job_nomem(s);
		if (pb->late)
			return timed_out(s->err, s->o, s->out->points);
		if (pb->st) {
			if (!s->first_err) {
				s->first_err = pb->st;
				s->ferr = pb->err;
			}
			continue;
		}
		int mask = pb->pp > 1 && jo->zero_mask_pp ? jo->zero_mask_pp : jo->zero_mask;
		for (int z = s->z0; z <= s->z1; z++) {
			if (!pl_zero_pipeline_ok(z, pb->pp) ||
			    (jo->zero == PL_AUTO && mask && !(mask >> z & 1)))
				continue;
			if (pb->pp == 1 && pb->least[z] < s->least_need)
				s->least_need = pb->least[z];
			if (pb->pp > 1 && pb->least[z] / (double)pb->pp < s->least_share)
				s->least_share = pb->least[z] / (double)pb->pp;
			s->out->points++;
			if (s->M > 0 && pb->least[z] > s->M * (double)pb->pp)
				continue; /* no plan of this point fits */
			point *pt = &s->pts[s->npt++];
			pt->prob = q;
			pt->zero = z;
			pt->plain = (jo->stages != PL_AUTO || pb->pp == 1) &&
			            (jo->zero != PL_AUTO || z == 0) &&
			            (jo->recompute != PL_AUTO || pb->rc == 0);
			pt->node_bound = pb->node_bound[z];
		}
	}
	return PL_OK;
}

/* How much looser a point's bound is for the interleaved schedules it may
 * be given than for plain 1F1B: (m + pp - 1) / (m + (pp - 1) / V) >= 1 */
static double plain_ratio(const prob *pb)
{
	pl_job plain = pb->p->job;
	plain.max_virtual = 1;
	plain.virtual_stages = 1;
	return pl_job_step_scale(&plain) / pl_job_step_scale(&pb->p->job);
}

/* First pass, best first: every point's unconstrained optimum, a lower bound
 * of it; where that plan fits it is the point's optimum. Each round takes the
 * point of least bound (its node bound, its dps' and its siblings'), unless
 * that bound cannot beat the best plan so far (then the point is out). On
 * large stage meshes the exact dp prices tables of millions of entries, so a
 * point climbs rungs of relaxed dps first (next_rung): each keeps larger
 * tables, its bound rises towards the optimum, and the tables it priced stay
 * for the next. The exact dp runs when no rung would save pricing. So only
 * points whose bounds stay below the best plan pay for their largest tables. */
static pl_status bound(jobrun *s)
{
	const pl_search_opts *o = s->o;
	point *pts = s->pts;
	slot *best = s->best;
	qsort(pts, (size_t)s->npt, sizeof *pts, cmp_node_bound);
	for (int k = 0; k < s->npt; k++)
		pts[k].nsib = -1;
	const double first_rung = o->dp.relax_pairs > 0 ? o->dp.relax_pairs : RELAX_FIRST;
	for (int finished = 0, rounds = 0;; rounds++) {
		int k = -1;
		double klb = INFINITY;
		for (int i = 0; i < s->npt; i++) {
			point *pt = &pts[i];
			if (pt->done || pt->exact)
				continue;
			double lb = point_lb(pts, s->npt, s->probs, i);
			/* refined first: the least bound its plain 1F1B schedule allows
			 * (interleaving's looser bound prunes, it does not lead: points
			 * whose plain schedules look best usually hold the answer, and
			 * the sooner it is known the more points it prunes) */
			double key = lb * plain_ratio(&s->probs[pt->prob]);
			if (lb >= useful_below(best, pt->plain, s->margin)) {
				s->out->pruned++;
				pt->done = 1;
				finished++;
			} else if (k < 0 || key < klb) {
				k = i;
				klb = key;
			}
		}
		if (k < 0)
			break;
		if (out_of_time(o, s->t0, s->planned)) {
			if (best[0].prob < 0 && best[1].prob < 0)
				return timed_out(s->err, o, s->out->points);
			s->stopped = finished + 1; /* keep the best plan so far */
			break;
		}
		if (rounds % 16 == 0)
			progress(
			    o,
			    "job: %d of %d points bounded or planned, least bound %.6g s (best "
			    "step so far %.6g s)",
			    finished, s->npt, klb, fmin(best[0].cost.step_s, best[1].cost.step_s));
		point *pt = &pts[k];
		prob *pb = &s->probs[pt->prob];
		pl_problem *p = pb->p;
		pl_problem_set_zero(p, pt->zero);
		pl_search_result r = {0};
		pl_err e2 = {{0}};
		s->planned++;
		double rung =
		    s->inner == pl_searcher_get("dp") ? next_rung(p, pt->rung, first_rung) : 0;
		if (rung > 0) {
			pl_search_opts ro = s->io;
			inner_deadline(&ro, o, s->t0, best);
			ro.dp.relax_pairs = rung;
			if (!pl_search_dp(p, &ro, &r, &e2)) {
				pt->bound = pt->bounded ? fmax(pt->bound, r.bound_s) : r.bound_s;
				pt->bounded = 1;
				pt->rung = rung;
				s->out->relaxed++;
				pl_search_result_free(&r);
				continue;
			}
		}
		pt->exact = 1;
		finished++;
		inner_deadline(&s->io, o, s->t0, best);
		if (memo_on(s, p))
			return job_nomem(s);
		int is_dp = s->inner == pl_searcher_get("dp"), kept = is_dp && memo_get(pt, p, 0, &r);
		pl_status is = kept ? PL_OK : s->inner->run(p, &s->io, &r, &e2);
		if (!kept && !is && is_dp)
			memo_put(&s->memo_bytes, pt, p, 0, &r);
		if (is && inner_fallback(s, is, &e2)) {
			if (memo_on(s, p))
				return job_nomem(s);
			e2 = (pl_err){{0}};
			is = s->inner->run(p, &s->io, &r, &e2);
		}
		if (is) {
			pl_problem_memo(p, 0);
			inner_failed(s, is, &e2);
			pt->bound = 0; /* plan it in the second pass */
			pt->bounded = 0;
			continue;
		}
		pt->bound = r.optimal ? r.step_s : 0;
		pt->bounded = r.optimal;
		pt->mem = r.mem_bytes;
		int ropt = r.optimal;
		double rstep = r.step_s;
		int proven;
		try_outcome fit = try_plan(s->c, pb, pt->prob, s->cutsv, s->Kv, pt->zero, &r, s->M,
		                           &proven, &best[!pt->plain], &pt->cramped);
		pl_problem_memo(p, 0);
		if (fit == TRY_NOMEM)
			return job_nomem(s);
		/* the unconstrained optimum fits: the point's optimum (with one
		 * stage; with more, its stages are one split of one relaxed plan) */
		pt->fit = fit == TRY_BEST || fit == TRY_FITS;
		pt->done = (fit == TRY_BEST || rstep >= useful_below(best, pt->plain, s->margin)) &&
		           ropt && pb->pp == 1 && proven;
		if (fit == TRY_BEST && (pb->pp > 1 || !proven || !ropt))
			s->all_exact = 0;
	}
	return PL_OK;
}

/* One point under the memory limit: the inner search with the limit (and
 * tighter ones while its plan's stages do not fit). */
static pl_status solve_point(jobrun *s, point *pt, prob *pb, pl_search_opts *lo, double lim)
{
	int fitted = 0, exact = 0;
	for (int tries = 0; tries < 6 && !fitted; tries++) {
		lo->memory_limit = lim;
		pl_search_result r = {0};
		pl_err e2 = {{0}};
		inner_deadline(lo, s->o, s->t0, s->best);
		if (memo_on(s, pb->p))
			return job_nomem(s);
		pl_status is = s->inner->run(pb->p, lo, &r, &e2);
		if (is && inner_fallback(s, is, &e2)) {
			if (memo_on(s, pb->p))
				return job_nomem(s);
			e2 = (pl_err){{0}};
			is = s->inner->run(pb->p, lo, &r, &e2);
		}
		if (is) {
			inner_failed(s, is, &e2);
			exact = tries == 0 && is == PL_EINFEASIBLE; /* none fits */
			break;
		}
		if (r.optimal && r.step_s >= useful_below(s->best, pt->plain, s->margin)) {
			pl_search_result_free(&r);
			exact = tries == 0; /* its optimum, or a bound of it: no better */
			break;
		}
		int ropt = r.optimal;
		double tr = pb->pp == 1 ? pl_search_result_transient(pb->p, &r) : 0;
		int proven;
		try_outcome fit = tr < 0 ? TRY_NOMEM
		                         : try_plan(s->c, pb, pt->prob, s->cutsv, s->Kv, pt->zero,
		                                    &r, s->M, &proven, &s->best[!pt->plain], NULL);
		if (fit == TRY_NOMEM) {
			pl_search_result_free(&r);
			return job_nomem(s);
		}
		/* one stage: a plan within the limit whose transient bytes do not
		 * fit beside it is tried again with room for them */
		fitted = fit == TRY_BEST || (pb->pp == 1 && fit == TRY_FITS);
		exact = pb->pp == 1 && ropt && proven && fit != TRY_OVER && tries == 0;
		lim = pb->pp == 1 && s->M - tr > 0 && s->M - tr < lim ? s->M - tr : lim * 0.8;
	}
	pl_problem_memo(pb->p, 0);
	if (!exact)
		s->all_exact = 0;
	return PL_OK;
}

/* Second pass, best bound first: plan under the memory limit where the
 * unconstrained optimum did not fit, while the bound can still matter: by
 * memory prices (lagrange(), priced_stages()) where the inner search is dp,
 * else by the inner search under the limit (solve_point()). */
static pl_status solve(jobrun *s)
{
	const pl_search_opts *o = s->o;
	point *pts = s->pts;
	slot *best = s->best;
	int is_dp = s->inner == pl_searcher_get("dp");
	qsort(pts, (size_t)s->npt, sizeof *pts, cmp_point);
	for (int k = 0; k < s->npt && !s->stopped; k++) {
		point *pt = &pts[k];
		if (pt->done)
			continue;
		if (fmax(pt->bound, pt->node_bound) >= useful_below(best, pt->plain, s->margin)) {
			s->out->pruned++;
			continue;
		}
		if (out_of_time(o, s->t0, s->planned)) {
			if (best[0].prob < 0 && best[1].prob < 0)
				return timed_out(s->err, o, s->out->points);
			s->stopped = s->npt + k + 1;
			break;
		}
		prob *pb = &s->probs[pt->prob];
		pl_problem *p = pb->p;
		s->planned++;
		progress(o, "job: pp %lld, m %lld, zero %d, recompute %s: planning under the limit",
		         (long long)pb->pp, (long long)pb->m, pt->zero, pl_recompute_name(pb->rc));
		pl_problem_set_zero(p, pt->zero);
		pl_search_opts lo = *o;
		lo.progress = NULL;
		lo.dp.relax_pairs = 0;
		/* one stage: a plan fits only if its tensors fit beside the least
		 * transient bytes any plan of it needs (a relaxation: its answer
		 * proves a plan that fits) */
		if (pb->pp == 1 && s->M > 0 && !pb->tfloor_known) {
			if ((pb->tfloor = pl_job_transient_floor(p)) < 0)
				return job_nomem(s);
			pb->tfloor_known = 1;
		}
		double lim = s->M > 0 ? s->M * (double)pb->pp - (pb->pp == 1 ? pb->tfloor : 0) : 0;
		if (s->M > 0 && lim <= 0)
			continue; /* nothing of it fits */
		/* over the limit, or (one stage) within it but not beside its
		 * transient bytes */
		inner_deadline(&s->io, o, s->t0, best); /* for lagrange() and priced_stages() */
		if (lim > 0 && is_dp && pt->bound > 0 &&
		    (pt->mem > lim || (pb->pp == 1 && pt->exact && !pt->fit))) {
			lag_outcome lr = lagrange(s->c, pb, pt->prob, s->cutsv, s->Kv, pt, &s->io,
			                          lim, s->M, s->margin, best, &s->memo_bytes);
			if (lr == LAG_NOMEM)
				return job_nomem(s);
			if (lr == LAG_USELESS) {
				s->out->pruned++;
				continue;
			}
			if (lr == LAG_OPTIMUM && pb->pp == 1)
				continue; /* its optimum, taken if it was the best */
			if (s->no_pareto && pb->pp == 1) {
				s->all_exact = 0; /* its plans under prices only */
				continue;
			}
		}
		if (pb->pp > 1 && is_dp && pt->bound > 0) {
			s->all_exact = 0;
			if (pt->fit && !pt->cramped)
				continue; /* planned in the first pass */
			if (priced_stages(s->c, pb, pt->prob, s->cutsv, s->Kv, pt, &s->io, s->M,
			                  s->margin, best, &s->memo_bytes))
				return job_nomem(s);
			continue;
		}
		pl_status st = solve_point(s, pt, pb, &lo, lim);
		if (st)
			return st;
	}
	return PL_OK;
}

/* The answer's slot: the best plain plan where it is within the margin of
 * the best other one */
static int winner(const jobrun *s)
{
	const slot *b = s->best;
	return b[0].prob >= 0 && b[0].cost.step_s <= b[1].cost.step_s * (1 + s->margin) ? 0 : 1;
}

static void slot_free(slot *b)
{
	pl_search_result_free(&b->r);
	free(b->stage);
	free(b->stages);
}

/* One level of the third pass: both passes again under the limit H, for a
 * plan within ceiling. Every point's bounds hold under any limit, and the
 * slots start empty at that ceiling (useful_below reads them so), so points
 * that cannot reach it are bounded out at once; the points whose
 * unconstrained optima may fit H are tried again (their exact dps find their
 * tables priced), the others go to the second pass as they are. 1 where a
 * plan was found within the ceiling and the time limit (in s->best), 0 where
 * none was (s->best emptied), or -1 and *st on failure. */
static int headroom_at(jobrun *s, double H, double ceiling, pl_status *st)
{
	double M = s->M;
	for (int k = 0; k < 2; k++)
		s->best[k] = (slot){.prob = -1, .tk = s->best[k].tk};
	s->best[1].cost.step_s = ceiling;
	s->best[0].cost.step_s = ceiling * (1 + s->margin);
	if (s->jo->beat_s > 0) /* the plain plan held outside */
		s->best[0].cost.step_s = fmin(s->best[0].cost.step_s, s->jo->beat_s);
	for (int k = 0; k < s->npt; k++) {
		point *pt = &s->pts[k];
		/* an unconstrained optimum over H on every stage together cannot
		 * fit it: its exact dp is not run again */
		pt->exact = pt->exact && pt->mem > H * (double)s->probs[pt->prob].pp;
		pt->done = pt->fit = pt->cramped = 0;
	}
	s->M = H;
	s->no_pareto = 1;
	*st = bound(s);
	if (!*st)
		*st = solve(s);
	s->M = M;
	s->no_pareto = 0;
	int v = winner(s);
	int take = !*st && !s->stopped && s->best[v].prob >= 0 && s->best[v].cost.step_s <= ceiling;
	s->stopped = 0;
	if (!take) {
		slot_free(&s->best[0]);
		slot_free(&s->best[1]);
	}
	return take ? 1 : *st == PL_ENOMEM ? -1 : 0;
}

/* Third pass, where the winner needs more than jo->headroom: a plan at most
 * PL_JOB_HEADROOM slower within it (headroom_at), else within
 * jo->headroom_mid where the winner needs more than that too. The answer
 * with room replaces the winner where one is found; else the winner stays.
 * Counts and notes stay those of the search within the limit. */
static pl_status headroom(jobrun *s)
{
	const double H[2] = {s->jo->headroom, s->jo->headroom_mid};
	int w = winner(s);
	if (!(H[0] > 0) || !(s->M > H[0]) || s->stopped || s->best[w].prob < 0 ||
	    s->best[w].cost.mem_bytes <= H[0])
		return PL_OK;
	double over = s->best[w].cost.step_s, need = s->best[w].cost.mem_bytes,
	       ceiling = over * (1 + PL_JOB_HEADROOM);
	slot kept[2] = {s->best[0], s->best[1]};
	int pruned = s->out->pruned, relaxed = s->out->relaxed, all_exact = s->all_exact;
	pl_err err0 = *s->err;
	pl_status st = PL_OK;
	int took = 0, level = 0;
	for (; level < 2 && !took; level++) {
		if (level > 0 && !(H[level] > H[0] && s->M > H[level] && need > H[level]))
			break;
		took = headroom_at(s, H[level], ceiling, &st);
		if (took < 0)
			break;
	}
	s->out->pruned = pruned;
	s->out->relaxed = relaxed;
	if (took > 0) {
		slot_free(&kept[0]);
		slot_free(&kept[1]);
		s->all_exact &= all_exact;
		s->out->headroom_over_s = over;
		s->out->headroom_mid = level > 1;
	} else {
		s->best[0] = kept[0];
		s->best[1] = kept[1];
		s->all_exact = all_exact;
	}
	if (st == PL_ENOMEM)
		return st;
	*s->err = err0; /* out of time there: the winner stands */
	return PL_OK;
}

/* The winner handed over to out (priced with the overlap when asked for),
 * and what it is (why, optimal). */
static pl_status assemble(jobrun *s)
{
	const pl_job_opts *jo = s->jo;
	pl_job_plan *out = s->out;
	slot *best = s->best;
	int w = winner(s);
	if (best[w].prob < 0) {
		if (s->first_err && s->least_need == INFINITY) {
			*s->err = s->ferr;
			return s->first_err;
		}
		if (s->solver_st && (s->M <= 0 || s->least_need <= s->M)) {
			*s->err = s->solver_err; /* not memory: the inner search could not plan */
			return s->solver_st;
		}
		if (s->least_need == INFINITY && s->least_share < INFINITY)
			return pl_err_set(
			    s->err, PL_EINFEASIBLE,
			    "no plan fits the memory limit of %.0f bytes per device: every point "
			    "tried is pipelined, and none could be split into stages that each "
			    "fit with their micro-batches in flight%s (a device's share of a plan "
			    "is "
			    "at least %.0f bytes before them); more stages, fewer micro-batches in "
			    "flight, recompute or ZeRO need less",
			    s->M,
			    s->jo->layer_cuts == 2
			        ? " and the same number of layers (--stage-cuts even)"
			    : s->jo->layer_cuts == 3 ? " and a uniform split (--stage-cuts uniform)"
			                             : "",
			    s->least_share);
		return pl_search_err_no_fit(s->err, s->M,
		                            s->least_need < INFINITY ? s->least_need : 0);
	}
	prob *wp = &s->probs[best[w].prob];
	if (pl_problem_unshare(wp->p)) /* it outlives the others */
		return job_nomem(s);
	out->p = wp->p;
	out->g = s->gms[wp->mi];
	out->mesh = wp->mesh;
	out->p->c = &out->mesh; /* probs[] goes away */
	pl_problem_set_zero(out->p, best[w].zero);
	out->p->job.virtual_stages = best[w].vs;
	if (jo->overlap) {
		/* plans are ranked without the overlap (every bound above holds for
		 * that step); the chosen one is priced with it */
		int64_t **sp = pl_malloc(sizeof *sp * ((size_t)out->p->nops + 1));
		if (!sp)
			return job_nomem(s);
		for (int op = 0; op < out->p->nops; op++)
			sp[op] = (int64_t *)pl_search_result_split(out->p, &best[w].r, op);
		out->p->job.overlap = jo->overlap;
		int bad = pl_job_price(out->p, sp, best[w].stage, s->c->devices_per_node,
		                       best[w].stages, &best[w].cost);
		free(sp);
		if (bad)
			return job_nomem(s);
	}
	out->r = best[w].r;
	out->stage = best[w].stage;
	out->stages = best[w].stages;
	out->cost = best[w].cost;
	memset(&best[w], 0, sizeof best[w]);
	/* each point's plan is the optimum of the step without overlap; the overlap
	 * is priced on it afterwards */
	out->optimal = s->all_exact && !s->stopped && !jo->overlap;
	out->fell_back = s->fell_back;
	int n = snprintf(
	    out->why, sizeof out->why,
	    "%d points (pipeline stages x micro-batches x ZeRO x recompute), %d bounded out%s",
	    out->points, out->pruned,
	    s->all_exact ? ""
	                 : "; not proven optimal: pipelined points split one relaxed plan into "
	                   "stages, or a point's plan under the limit is not proven");
	if (s->fell_back && n > 0 && (size_t)n < sizeof out->why)
		n += snprintf(out->why + n, sizeof out->why - (size_t)n,
		              "; the graph is too entangled for exact dp: rec planned each point");
	int stopped = s->stopped, npt = s->npt;
	if (stopped) {
		/* the proven gap: no plan of any point beats its node bound, or the
		 * bound its relaxed or exact plan proved */
		double least = out->cost.step_s;
		for (int k = 0; k < npt; k++) {
			const point *pt = &s->pts[k];
			least = fmin(least, pt->bounded ? fmax(pt->node_bound, pt->bound)
			                                : pt->node_bound);
		}
		out->gap = least > 0 ? out->cost.step_s / least - 1 : INFINITY;
		out->bound_s = least;
	}
	if (stopped && n > 0 && (size_t)n < sizeof out->why)
		n += snprintf(out->why + n, sizeof out->why - (size_t)n,
		              "; the time limit of %.3g s ran out at point %d of %d %s: the best "
		              "plan so far, within %.1f %% of %.6g s (a bound no plan beats)",
		              s->o->time_limit_s, stopped > npt ? stopped - npt : stopped, npt,
		              stopped > npt ? "planned under the memory limit"
		                            : "bounded (best bound first)",
		              100 * out->gap, out->bound_s);
	if (jo->overlap && n > 0 && (size_t)n < sizeof out->why)
		n += snprintf(
		    out->why + n, sizeof out->why - (size_t)n,
		    "; plans are ranked without the %s%s%s%s%s overlap, and "
		    "the chosen one is priced with it",
		    jo->overlap & PL_OVERLAP_GRAD ? "gradient reduction's" : "",
		    jo->overlap & PL_OVERLAP_GRAD && jo->overlap & ~PL_OVERLAP_GRAD ? " and " : "",
		    jo->overlap & PL_OVERLAP_TP ? "tensor-parallel collectives'" : "",
		    jo->overlap & PL_OVERLAP_TP && jo->overlap & PL_OVERLAP_PARAM ? " and " : "",
		    jo->overlap & PL_OVERLAP_PARAM ? "parameter all-gathers'" : "");
	/* the simpler plan kept: the least step a plan with pipeline stages, ZeRO
	 * or recompute may have (the best one found, or a point's lower bound that
	 * only the preference's margin kept from being planned) */
	if (w == 0 && s->margin > 0) {
		double least = best[1].prob >= 0 ? best[1].cost.step_s : INFINITY;
		for (int k = 0; k < s->npt; k++) {
			const point *pt = &s->pts[k];
			if (!pt->plain)
				least = fmin(least, pt->bounded ? fmax(pt->node_bound, pt->bound)
				                                : pt->node_bound);
		}
		/* every point with them was planned, or bounded out at or above
		 * min(best[1], the kept step / (1 + margin)) */
		double floor = out->cost.step_s / (1 + s->margin);
		if (best[1].prob >= 0)
			floor = fmin(floor, best[1].cost.step_s);
		least = fmax(least, floor);
		if (least < out->cost.step_s)
			out->simpler_than_s = least;
	}
	if (w == 0 && best[1].prob >= 0 && best[0].cost.step_s > best[1].cost.step_s && n > 0 &&
	    (size_t)n < sizeof out->why)
		snprintf(out->why + n, sizeof out->why - (size_t)n,
		         "; within %g%% of the best plan with pipeline stages, ZeRO or recompute "
		         "(%.6g s), so without them",
		         100 * s->margin, best[1].cost.step_s);
	return PL_OK;
}

static void jobrun_free(jobrun *s)
{
	for (int k = 0; k < 2; k++)
		slot_free(&s->best[k]);
	for (int q = 0; s->probs && q < s->nprob; q++)
		if (s->probs[q].p != s->out->p)
			pl_problem_free(s->probs[q].p);
	for (int a = 0; a < s->nm; a++) {
		if (s->gms[a] != s->out->g)
			pl_graph_free(s->gms[a]);
		free(s->cutsv[a]);
		for (int r = 0; r < PL_RECOMPUTE_MODES; r++)
			free(s->flagsv[a][r]);
	}
	for (int k = 0; s->pts && k < s->npt; k++)
		memo_free(&s->pts[k]);
	free(s->probs);
	free(s->pts);
	free(s->tk.step);
	free(s->tk.mem);
	free(s->tk.vs);
}

static int alt_cmp(const void *x, const void *y)
{
	const pl_job_alt *a = x, *b = y;
	if (a->step_s != b->step_s)
		return a->step_s < b->step_s ? -1 : 1;
	return (a->mem_bytes > b->mem_bytes) - (a->mem_bytes < b->mem_bytes);
}

/* Every point with a plan that fits, by step, into out->alts. */
static pl_status list_alts(jobrun *s)
{
	topk *t = &s->tk;
	if (!t->step)
		return PL_OK;
	pl_job_alt *a = pl_malloc(sizeof *a * ((size_t)t->n + 1));
	if (!a)
		return job_nomem(s);
	int n = 0;
	for (int i = 0; i < t->n; i++) {
		if (t->step[i] == INFINITY)
			continue;
		const prob *pb = &s->probs[i / PL_ZERO_LEVELS];
		a[n++] = (pl_job_alt){.pp = pb->pp,
		                      .m = pb->m,
		                      .vs = t->vs[i],
		                      .zero = i % PL_ZERO_LEVELS,
		                      .recompute = pb->rc,
		                      .step_s = t->step[i],
		                      .mem_bytes = t->mem[i]};
	}
	qsort(a, (size_t)n, sizeof *a, alt_cmp);
	s->out->alts = a;
	s->out->nalts = n;
	return PL_OK;
}

pl_status pl_search_job(const pl_graph *g, const pl_cluster *c, const pl_search_opts *o,
                        const pl_job_opts *jo, pl_job_plan *out, pl_err *err)
{
	memset(out, 0, sizeof *out);
	jobrun run = {.g = g,
	              .c = c,
	              .o = o,
	              .jo = jo,
	              .out = out,
	              .err = err,
	              .t0 = pl_now(),
	              .margin = jo->fastest ? 0 : PL_JOB_SIMPLER,
	              .M = o->memory_limit,
	              .inner = jo->inner ? jo->inner : pl_searcher_get("dp"),
	              .io = *o,
	              .D = pl_cluster_devices_total(c),
	              .B = pl_graph_batch(g),
	              .least_need = INFINITY,
	              .least_share = INFINITY,
	              .all_exact = 1,
	              .best = {{.prob = -1}, {.prob = -1}}};
	jobrun *s = &run;
	s->best[0].cost.step_s = s->best[1].cost.step_s = INFINITY;
	if (jo->beat_s > 0) /* a plain plan of that step, held outside */
		s->best[0].cost.step_s = jo->beat_s;
	s->io.progress = NULL;
	s->io.memory_limit = 0;
	s->io.dp.relax_pairs = 0; /* the inner searches are exact */
	if (o->hooks && o->hooks->job_no_memo)
		s->memo_bytes = MEMO_MAX_BYTES; /* full: no plan is kept */
	pl_status st;
	if (!(st = job_options(s)) && !(st = enumerate(s)) && !(st = bound(s)) &&
	    !(st = solve(s)) && !(st = headroom(s)) && !(st = assemble(s)))
		st = list_alts(s);
	jobrun_free(s);
	out->seconds = pl_now() - s->t0;
	if (st)
		pl_job_plan_free(out);
	return st;
}
