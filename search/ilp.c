/* ilp: the strategy choice as an integer program solved with GLPK.
 *
 * Presolve first drops dominated strategies (see presolve()); a variable left
 * with one strategy has no columns, and an edge with one end fixed, or whose
 * cost is a sum of a source and a destination term, becomes objective terms
 * of its ends.
 * Columns: x[o][s] binary, one-hot per op over its alive strategies; per edge
 * left, y[e][r][c] >= 0 over the distinct rows r and columns c of its cost
 * table (strategies with equal rows are interchangeable on that edge), tied to
 * x by transportation constraints sum_c y[r][c] = sum_{s in r} x[u][s] and
 * sum_r y[r][c] = sum_{s in c} x[v][s]; with one-hot x the only solution is
 * the product, so the program is exact. Memory: sum m[o][s] x[o][s] <= limit.
 * Objective: node times + edge costs.
 * Under a memory limit the memory row is dualized first: the rest of the
 * program is the unconstrained strategy problem, which dp solves exactly, so
 * dp under a memory price gives the Lagrangian bound (lagrange()), which is at
 * least the LP relaxation's, and incumbents; dp's min-marginals at the
 * bound's price then fix every strategy that only plans slower than the best
 * one use (mm_fix()), typically 90-98 % of them, before the program is built.
 * The LP relaxation is solved next (it is often integral); otherwise
 * glp_intopt, started from the best plan, stopped by its callback at the
 * time limit.
 * Large instances (more than PL_ILP_SHARE_COLUMNS columns) share variables
 * across repeated layers 2..k, which restricts them to repeat one strategy;
 * the result then says it is optimal among such plans only. */
#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "search/price.h"
#include "search/search.h"
#include "search/ve.h"
#include "graph/alloc.h"
#include "graph/graph.h"
#include "graph/output.h"
#include "graph/clock.h"

#define PL_ILP_SHARE_COLUMNS 400000
/* GLPK's tolerances are absolute (1e-7 on reduced costs): price in
 * microseconds and measure memory in units of the limit */
#define OBJ_SCALE 1e6
/* a generous estimate of the interior-point method's seconds per nonzero;
 * a memory row, dense across every x column, makes it about 5x slower, and so
 * do cost edges (27 us per nonzero on GPT-3 1.3B on 64 devices) */
#define PL_ILP_IPM_S_PER_NZ     6e-6
#define PL_ILP_IPM_S_PER_NZ_MEM 3e-5
/* What glp_simplex spends outside its time limit without its presolve, per
 * nonzero: copying the program in (0.33 s on 4 million on a 2-core Xeon) and,
 * measured since, 6.5 s past a 12.5 s tm_lim on GPT-3 13B on 512 devices
 * (18.8 million, a 2-core EPYC): 0.35 us, doubled */
#define PL_ILP_SIMPLEX_S_PER_NZ 7e-7
/* GLPK's copies of the program in, untimed, per column (glp_add_cols) and per
 * nonzero (glp_load_matrix): 0.37 and 0.26 us measured on GPT-3 13B on 512
 * devices (9.4 M columns, 18.8 M nonzeros: 3.5 and 4.9 s on a 2-core EPYC),
 * doubled; a column brings about two nonzeros */
#define PL_ILP_ADD_COL_S 8e-7
#define PL_ILP_LOAD_NZ_S 5e-7
/* above this many nonzeros branch and bound takes the most fractional column */
#define PL_ILP_DTH_NZ 1000000

/* the test hook: rec's plan the only incumbent (pl_search_hooks) */
static int rec_only(const pl_search_opts *o)
{
	return o->hooks && o->hooks->ilp_rec_only;
}

typedef struct icol {
	int nr, nc;
	int *rc, *cc; /* strategy -> row class / column class */
	double *cost; /* nr x nc */
	int base;     /* first y column (1-based), or its cost column (cost edges); 0 if the
	               * edge is free */
	double mult;
	int src, dst; /* variables */
} icol;

typedef struct ilpctx {
	pl_problem *p;
	int *var;     /* op -> variable op (shared across repeated layers) */
	double *mult; /* per variable: how many ops it stands for */
	int *xbase;   /* per variable: first x column (1-based), 0 if it has one strategy */
	unsigned char **alive; /* per variable and strategy: kept by presolve */
	int **repl;            /* per variable and strategy: what replaced it, else -1 */
	int **col;             /* per variable and strategy: x column offset, -1 if gone */
	double **uobj;         /* per variable and strategy: objective from folded edges */
	unsigned char *efree;  /* per edge: its table is all zero */
	icol *ec;              /* per edge (only for representative edges) */
	int *erep;             /* edge -> representative edge with the same variables */
	int ncols;
	int cost_edges;    /* edges priced by one cost column each (pl_search_opts) */
	double cobj, cmem; /* objective (s) and memory of what presolve fixed */
	double deadline;
	const int *incumbent; /* per op choice, or NULL */
	int stopped;
	int agg_first, nagg; /* layer-count columns: the first, how many */
	int *agg;   /* per layer-count column: first layer's op, run len, count, strategy */
	double *xm; /* per column: memory (bytes; 0 for all but x) */
	unsigned char *xoff;      /* per column: fixed at 0 before branch and bound, or not x */
	int *act, nact;           /* the x columns not fixed (what the cuts range over) */
	double room;              /* the limit less what presolve fixed (bytes) */
	double *xv, *xa;          /* scratch for cuts: per column value, memory step */
	double *cv;               /* and a cut's values */
	int *ci;                  /* and indices */
	int nodes, cuts;          /* branch and bound: subproblems made, memory cuts added */
	const int *gfirst, *gops; /* per variable: the ops it stands for */
	int dps;                  /* dps run for the Lagrangian bound and incumbents */
} ilpctx;

/* classes of identical rows (dim 0) or columns (dim 1) of a table */
static int classes(const double *t, int nr, int nc, int by_row, int *cls, int **rep_out)
{
	int n = by_row ? nr : nc, len = by_row ? nc : nr, k = 0;
	int *rep = pl_malloc(sizeof *rep * ((size_t)n + 1));
	if (!rep)
		return -1;
	for (int i = 0; i < n; i++) {
		int found = -1;
		for (int j = 0; j < k && found < 0; j++) {
			int same = 1;
			for (int q = 0; q < len && same; q++) {
				double a = by_row ? t[(size_t)i * nc + q] : t[(size_t)q * nc + i];
				double b = by_row ? t[(size_t)rep[j] * nc + q]
				                  : t[(size_t)q * nc + rep[j]];
				same = a == b;
			}
			if (same)
				found = j;
		}
		if (found < 0) {
			rep[k] = i;
			found = k++;
		}
		cls[i] = found;
	}
	*rep_out = rep;
	return k;
}

/* x column of strategy s of variable v, 0 when v has no columns */
static int xcol(const ilpctx *c, int v, int s)
{
	return c->xbase[v] ? c->xbase[v] + c->col[v][s] : 0;
}

/* A plan's time (s) when each op takes its variable's choice (per_op: the
 * choice is per op), summed as dp prices it; its memory per device into *mem
 * when mem is not NULL. */
static double raw_value(const ilpctx *c, const int *choice, int per_op, double *mem)
{
	pl_problem *p = c->p;
	double t = 0, m = 0;
	for (int o = 0; o < p->nops; o++) {
		const pl_nodecost *nc = pl_problem_node(p, o) + choice[per_op ? o : c->var[o]];
		t += nc->compute_s + nc->comm_s;
		m += nc->mem_bytes;
	}
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		if (c->efree[e])
			continue;
		int a = choice[per_op ? ed->src_op : c->var[ed->src_op]],
		    b = choice[per_op ? ed->dst_op : c->var[ed->dst_op]];
		t += pl_problem_edge(p, e)[(size_t)a * (size_t)p->nstrat[ed->dst_op] + (size_t)b];
	}
	if (mem)
		*mem = m;
	return t;
}

/* A plan's objective (scaled like the LP's) from its choice per variable;
 * the plan's y is the product of its x. */
static double plan_value(const ilpctx *c, const int *choice)
{
	return OBJ_SCALE * raw_value(c, choice, 0, NULL);
}

static int plan_fits(const ilpctx *c, const int *choice, double limit)
{
	double m;
	raw_value(c, choice, 0, &m);
	return limit <= 0 || m <= limit;
}

/* A lower bound on every integer plan from the row duals pi of the LP: the
 * Lagrangian pi'b + sum_j u_j min(0, d_j), d_j = c_j - A_j'pi the reduced costs
 * (into d), valid for any pi with pi <= 0 on <= rows (the memory row) and
 * pi >= 0 on >= rows (cost edges), as every column lies in [0, u_j] in an
 * integer plan: u_j = 1 for x and y, its upper bound for a bounded column (a
 * cost edge's). A plan with column j at 1 costs at least bound + max(d_j, 0).
 * Returns -1 when out of memory. */
static int lp_bound(glp_prob *lp, double *pi, double *d, double *bound)
{
	int m = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
	double *val = pl_malloc(sizeof *val * ((size_t)m + 1));
	int *ind = pl_malloc(sizeof *ind * ((size_t)m + 1));
	if (!val || !ind) {
		free(val);
		free(ind);
		return -1;
	}
	double b = glp_get_obj_coef(lp, 0);
	for (int i = 1; i <= m; i++) {
		if (glp_get_row_type(lp, i) == GLP_UP) {
			pi[i] = fmin(pi[i], 0);
			b += pi[i] * glp_get_row_ub(lp, i);
		} else if (glp_get_row_type(lp, i) == GLP_LO) {
			pi[i] = fmax(pi[i], 0);
			b += pi[i] * glp_get_row_lb(lp, i);
		} else {
			b += pi[i] * glp_get_row_lb(lp, i);
		}
	}
	for (int j = 1; j <= nc; j++) {
		int len = glp_get_mat_col(lp, j, ind, val);
		d[j] = glp_get_obj_coef(lp, j);
		for (int q = 1; q <= len; q++)
			d[j] -= val[q] * pi[ind[q]];
		b +=
		    fmin(d[j], 0) * (glp_get_col_type(lp, j) == GLP_DB ? glp_get_col_ub(lp, j) : 1);
	}
	*bound = b;
	free(val);
	free(ind);
	return 0;
}

/* The interior-point solution: GLPK's return code and status, the row duals
 * pi[1..m] (clipped to their signs by lp_bound) and the column values
 * x[1..nc]; in shared memory when a child process solved it. */
typedef struct ipmsol {
	int ret, status;
	double *pi, *x;
	void *map; /* the shared mapping, else NULL (pi and x from pl_malloc) */
	size_t maplen;
} ipmsol;

typedef struct ipmhead {
	int done, ret, status;
} ipmhead;

static void ipm_read(glp_prob *lp, int ret, ipmsol *sol)
{
	int m = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
	sol->ret = ret;
	sol->status = glp_ipt_status(lp);
	for (int i = 1; i <= m; i++)
		sol->pi[i] = glp_ipt_row_dual(lp, i);
	for (int j = 1; j <= nc; j++)
		sol->x[j] = glp_ipt_col_prim(lp, j);
}

static void ipm_free(ipmsol *sol)
{
	if (sol->map) {
		munmap(sol->map, sol->maplen);
	} else {
		free(sol->pi);
		free(sol->x);
	}
	memset(sol, 0, sizeof *sol);
}

/* GLPK's interior-point method has no time limit and cannot be interrupted,
 * and its cost is the fill of its Cholesky factor, which the nonzeros do not
 * tell (DenseNet-161's concatenations on 8 devices: 63 s on a program of
 * 606,520 nonzeros that ipm_ok's estimate gave 4 s). With a deadline it runs
 * in a child process, on the copy-on-write image of the program, and writes
 * its solution into shared memory; the parent waits until the deadline and
 * kills it then. Returns 0 with *sol filled, 1 when the deadline (or the
 * child's failure, say for want of memory) left no solution, -1 when out of
 * memory here. Without fork it runs here, as without a deadline. */
static int ipm_solve(glp_prob *lp, double deadline, ipmsol *sol)
{
	int m = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
	glp_iptcp ip;
	glp_init_iptcp(&ip);
	ip.msg_lev = GLP_MSG_OFF;
	memset(sol, 0, sizeof *sol);
	/* the values after the head, aligned for doubles */
	size_t head = (sizeof(ipmhead) + sizeof(double) - 1) / sizeof(double) * sizeof(double);
	size_t len = head + sizeof(double) * ((size_t)m + 1 + (size_t)nc + 1);
	void *map = MAP_FAILED;
	if (deadline > 0)
		map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t child = map == MAP_FAILED ? -1 : fork();
	if (child < 0) {
		if (map != MAP_FAILED)
			munmap(map, len);
		sol->pi = pl_malloc(sizeof *sol->pi * ((size_t)m + 1));
		sol->x = pl_malloc(sizeof *sol->x * ((size_t)nc + 1));
		if (!sol->pi || !sol->x) {
			ipm_free(sol);
			return -1;
		}
		ipm_read(lp, glp_interior(lp, &ip), sol);
		return 0;
	}
	volatile ipmhead *h = map;
	sol->map = map;
	sol->maplen = len;
	sol->pi = (double *)((char *)map + head);
	sol->x = sol->pi + m + 1;
	if (child == 0) { /* the child: solve, write, leave without the parent's atexit */
		int ret = glp_interior(lp, &ip);
		ipm_read(lp, ret, sol);
		h->ret = sol->ret;
		h->status = sol->status;
		__atomic_store_n(&h->done, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	int wst, reaped = 0;
	while (!reaped) {
		pid_t w = waitpid(child, &wst, WNOHANG);
		if (w == child || (w < 0 && errno != EINTR)) /* ended (or reaped elsewhere) */
			break;
		if (pl_now() > deadline) {
			kill(child, SIGKILL);
			while (waitpid(child, &wst, 0) < 0 && errno == EINTR)
				;
			reaped = 1;
			break;
		}
		struct timespec nap = {0, 2000000}; /* 2 ms */
		nanosleep(&nap, NULL);
	}
	if (!__atomic_load_n(&h->done, __ATOMIC_ACQUIRE)) {
		ipm_free(sol);
		return 1;
	}
	sol->ret = h->ret;
	sol->status = h->status;
	return 0;
}

/* GLPK's interior-point method cannot be interrupted: it runs only without a
 * time limit, or when the instance is small enough for it to end well inside
 * the time left (its cost grows with the nonzeros; see docs/benchmarks.md). */
static int ipm_ok(const ilpctx *c, size_t nz, int mem_row)
{
	if (c->deadline <= 0)
		return 1;
	double per = mem_row ? PL_ILP_IPM_S_PER_NZ_MEM : PL_ILP_IPM_S_PER_NZ;
	if (c->cost_edges)
		per *= 5;
	return (double)nz * per < 0.75 * (c->deadline - pl_now());
}

/* Has the time limit run out? */
static int late(const ilpctx *c)
{
	return c->deadline > 0 && pl_now() > c->deadline;
}

/* The time left before the deadline for a dp, or 0 for none. */
static double time_left(const ilpctx *c)
{
	if (c->deadline <= 0)
		return 0;
	double left = c->deadline - pl_now();
	return left > 1e-3 ? left : 1e-3;
}

/* dp's plan per op under a memory price lambda (time + lambda x memory
 * least), into raw; its time and memory. 0, or -1 when dp fails. */
static int priced_plan(ilpctx *c, const pl_search_opts *o, double lambda, int *raw, double *t,
                       double *m)
{
	pl_search_opts d = {
	    .threads = o->threads, .dp.mem_price = lambda, .time_limit_s = time_left(c)};
	pl_search_result res;
	pl_err e;
	if (pl_search_dp(c->p, &d, &res, &e) != PL_OK)
		return -1;
	memcpy(raw, res.choice, sizeof *raw * (size_t)c->p->nops);
	pl_search_result_free(&res);
	*t = raw_value(c, raw, 1, m);
	c->dps++;
	return 0;
}

/* A plan per op as a plan per variable: each variable takes the choice of
 * the op it is (with shared layers, the other layers then repeat it), each
 * dropped strategy replaced by what replaced it in the presolve; -1 when a
 * strategy has no replacement (fixed by the min-marginals). */
static int as_variables(const ilpctx *c, const int *raw, int *out)
{
	for (int v = 0; v < c->p->nops; v++) {
		if (c->var[v] != v)
			continue;
		int k = raw[v];
		while (k >= 0 && !c->alive[v][k])
			k = c->repl[v][k];
		if (k < 0)
			return -1;
		out[v] = k;
	}
	return 0;
}

static void keep_if_better(const ilpctx *c, const int *plan, double limit, int *best,
                           double *best_val)
{
	if (!plan_fits(c, plan, limit))
		return;
	double v = plan_value(c, plan);
	if (v < *best_val) {
		*best_val = v;
		memcpy(best, plan, sizeof *best * (size_t)c->p->nops);
	}
}

/* The Lagrangian dual of the memory row, solved by dp under memory prices
 * (search/price.h: the bound is the lower envelope of the plans' lines, its
 * peak found by cutting planes). Into *lambda the peak's price, *bound
 * (seconds) the best bound; lo and hi (per variable) the last plans over and
 * within the limit, for the incumbent search, when they respect the sharing
 * (*have_lo, *have_hi); the plans within the limit are tried as incumbents
 * when `incumbents`. 0, or -1 when out of memory; a failed dp ends early
 * with what it has (*bound -HUGE_VAL when none). */
typedef struct lagctx {
	ilpctx *c;
	const pl_search_opts *o;
	int incumbents;
	int *rc, *pv, *ra, *rb; /* the last plan; as variables; a's and b's */
	int *best;
	double *best_val;
} lagctx;

static int lag_plan(void *ud, double lambda, double bound, pl_priced *out)
{
	lagctx *x = ud;
	(void)bound;
	if (late(x->c) || priced_plan(x->c, x->o, lambda, x->rc, &out->t, &out->m))
		return -1;
	double limit = x->o->memory_limit;
	out->fits = out->m <= limit;
	if (out->fits && x->incumbents && as_variables(x->c, x->rc, x->pv) == 0)
		keep_if_better(x->c, x->pv, limit, x->best, x->best_val);
	return 0;
}

static void lag_keep(void *ud, int side)
{
	lagctx *x = ud;
	memcpy(side ? x->rb : x->ra, x->rc, sizeof *x->rc * (size_t)x->c->p->nops);
}

static int lagrange(ilpctx *c, const pl_search_opts *o, int incumbents, double *lambda,
                    double *bound, int *lo, int *hi, int *have_lo, int *have_hi, int *best,
                    double *best_val)
{
	int n = c->p->nops;
	lagctx x = {.c = c,
	            .o = o,
	            .incumbents = incumbents,
	            .rc = pl_malloc(sizeof(int) * (size_t)n),
	            .pv = pl_malloc(sizeof(int) * (size_t)n),
	            .ra = pl_malloc(sizeof(int) * (size_t)n),
	            .rb = pl_malloc(sizeof(int) * (size_t)n),
	            .best = best,
	            .best_val = best_val};
	*bound = -HUGE_VAL;
	*lambda = 0;
	*have_lo = *have_hi = 0;
	int rcode = -1;
	if (x.rc && x.pv && x.ra && x.rb) {
		pl_price_result r;
		pl_price_search(&(pl_price_opts){.limit = o->memory_limit,
		                                 .max_plans = 100,
		                                 .plan = lag_plan,
		                                 .keep = lag_keep,
		                                 .ud = &x},
		                &r);
		*bound = r.bound;
		*lambda = r.lambda;
		if (r.have_a)
			*have_lo = as_variables(c, x.ra, lo) == 0;
		if (r.have_b)
			*have_hi = as_variables(c, x.rb, hi) == 0;
		rcode = 0;
	}
	free(x.rc);
	free(x.pv);
	free(x.ra);
	free(x.rb);
	return rcode;
}

/* Mixing: segments (between clean cuts) of the faster plan lo, which does
 * not fit, copied into hi, which does, while that helps and fits; then hi is
 * tried as an incumbent. -1 when out of memory. */
static int mix(ilpctx *c, double limit, const int *lo, int *hi, int *best, double *best_val)
{
	pl_problem *p = c->p;
	int n = p->nops;
	int *mid = pl_malloc(sizeof *mid * (size_t)n),
	    *cuts = pl_malloc(sizeof *cuts * ((size_t)n + 2));
	if (!mid || !cuts) {
		free(mid);
		free(cuts);
		return -1;
	}
	int ncuts = pl_clean_cuts(p->g, cuts);
	double cur = plan_value(c, hi);
	for (int improved = 1; improved && ncuts > 1;) {
		improved = 0;
		int pick = -1;
		double pick_val = cur;
		for (int sg = 0; sg + 1 < ncuts; sg++) {
			memcpy(mid, hi, sizeof *mid * (size_t)n);
			for (int op = cuts[sg]; op < cuts[sg + 1]; op++)
				mid[op] = lo[op];
			if (!memcmp(mid, hi, sizeof *mid * (size_t)n) || !plan_fits(c, mid, limit))
				continue;
			double v = plan_value(c, mid);
			if (v < pick_val) {
				pick_val = v;
				pick = sg;
			}
		}
		if (pick >= 0) {
			for (int op = cuts[pick]; op < cuts[pick + 1]; op++)
				hi[op] = lo[op];
			cur = pick_val;
			improved = 1;
		}
	}
	keep_if_better(c, hi, limit, best, best_val);
	free(mid);
	free(cuts);
	return 0;
}

/* What moving variable v of plan a to strategy k changes: time (returned)
 * and memory (*dm), over the ops it stands for and their edges. */
static double move_delta(const ilpctx *c, const int *a, int v, int k, double *dm)
{
	pl_problem *p = c->p;
	double dt = 0;
	*dm = 0;
	for (int gi = c->gfirst[v]; gi < c->gfirst[v + 1]; gi++) {
		int o = c->gops[gi];
		const pl_nodecost *nc = pl_problem_node(p, o);
		dt += nc[k].compute_s + nc[k].comm_s - nc[a[v]].compute_s - nc[a[v]].comm_s;
		*dm += nc[k].mem_bytes - nc[a[v]].mem_bytes;
		for (int q = 0; q < p->op_nedges[o]; q++) {
			int e = p->op_edges[o][q];
			const pl_edge *ed = &p->edges[e];
			int s = c->var[ed->src_op], d = c->var[ed->dst_op];
			if (c->efree[e] || (s == v && d == v && o != ed->src_op))
				continue; /* both ends here: counted at the source */
			const double *t = pl_problem_edge(p, e);
			size_t nd = (size_t)p->nstrat[ed->dst_op];
			int ns = s == v ? k : a[s], nd2 = d == v ? k : a[d];
			dt +=
			    t[(size_t)ns * nd + (size_t)nd2] - t[(size_t)a[s] * nd + (size_t)a[d]];
		}
	}
	return dt;
}

/* Single-variable moves from the best plan to alive strategies while they
 * help and fit (four passes at most). -1 when out of memory. */
static int moves(ilpctx *c, double limit, int *best, double *best_val)
{
	pl_problem *p = c->p;
	int n = p->nops;
	if (*best_val == HUGE_VAL)
		return 0;
	int *a = pl_malloc(sizeof *a * (size_t)n);
	if (!a)
		return -1;
	memcpy(a, best, sizeof *a * (size_t)n);
	double m;
	raw_value(c, a, 0, &m);
	for (int pass = 0, improved = 1; improved && pass < 4; pass++) {
		improved = 0;
		for (int v = 0; v < n; v++) {
			if (c->var[v] != v)
				continue;
			for (int k = 0; k < p->nstrat[v]; k++) {
				if (!c->alive[v][k] || k == a[v])
					continue;
				double dm, dt = move_delta(c, a, v, k, &dm);
				if (dt < 0 && (limit <= 0 || m + dm <= limit)) {
					a[v] = k;
					m += dm;
					improved = 1;
				}
			}
		}
	}
	keep_if_better(c, a, limit, best, best_val); /* priced whole: no drift */
	free(a);
	return 0;
}

/* Lagrangian fixing: a strategy goes when dp's min-marginal under the price
 * lambda, less lambda x the limit, exceeds the best plan's time ub (s) for
 * one of the ops its variable stands for: every plan within the limit that
 * uses it is slower than the best. The best plan's strategies stay. Into
 * *fixed how many went. 0, or a status (out of memory, dp's time limit). */
static pl_status mm_fix(ilpctx *c, const pl_search_opts *o, double lambda, double ub,
                        const int *best, int *fixed, pl_err *err)
{
	pl_problem *p = c->p;
	int n = p->nops;
	pl_status st = PL_OK;
	double **mm = pl_calloc((size_t)n + 1, sizeof *mm), opt;
	for (int op = 0; mm && op < n; op++)
		if (!(mm[op] = pl_malloc(sizeof *mm[op] * (size_t)p->nstrat[op])))
			goto nomem;
	if (!mm)
		goto nomem;
	pl_search_opts d = {
	    .threads = o->threads, .dp.mem_price = lambda, .time_limit_s = time_left(c)};
	if ((st = pl_dp_min_marginals(p, &d, mm, &opt, err)))
		goto done;
	double tol = 1e-9 * fabs(ub) + 1e-15, shift = lambda * o->memory_limit;
	*fixed = 0;
	for (int v = 0; v < n; v++) {
		if (c->var[v] != v)
			continue;
		for (int s = 0; s < p->nstrat[v]; s++) {
			if (!c->alive[v][s] || s == best[v])
				continue;
			double lb = -HUGE_VAL;
			for (int gi = c->gfirst[v]; gi < c->gfirst[v + 1]; gi++)
				lb = fmax(lb, mm[c->gops[gi]][s]);
			if (lb - shift > ub + tol) {
				c->alive[v][s] = 0;
				c->repl[v][s] = -1;
				(*fixed)++;
			}
		}
	}
	goto done;
nomem:
	st = pl_err_set(err, PL_ENOMEM, "ilp: out of memory");
done:
	for (int op = 0; mm && op < n; op++)
		free(mm[op]);
	free(mm);
	return st;
}

/* Column j named, printf-style (the names read in a written program) */
static void col_name(glp_prob *lp, int j, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void col_name(glp_prob *lp, int j, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	glp_set_col_name(lp, j, name);
}

/* Layer counts, for branch and bound under a memory limit: per op position
 * of a run of repeated layers and strategy, an integer column N = sum over
 * the layers of x[layer][s], the number of layers that use it. N changes no
 * bound, but the relaxation fills the limit by mixing the plans of
 * interchangeable layers: branching on one layer's x moves the mix to
 * another layer with the same bound, branching on N (cb) splits it. Added
 * after the interior-point bound (which they would only slow down).
 * Returns -1 when out of memory. */
static int add_counts(ilpctx *c, glp_prob *lp)
{
	pl_problem *p = c->p;
	pl_run cr[64];
	int ncr = pl_problem_runs(p, cr, 64);
	if (ncr <= 0)
		return 0;
	size_t most = 1, layers = 0;
	for (int k = 0; k < ncr; k++) {
		for (int i = 0; i < cr[k].len; i++)
			most += (size_t)p->nstrat[cr[k].first + i];
		layers = layers > (size_t)cr[k].count ? layers : (size_t)cr[k].count;
	}
	int *ind = pl_malloc(sizeof *ind * (layers + 2));
	double *val = pl_malloc(sizeof *val * (layers + 2));
	if (!(c->agg = pl_malloc(sizeof *c->agg * 4 * most)) || !ind || !val) {
		free(ind);
		free(val);
		return -1;
	}
	c->agg_first = c->ncols + 1;
	for (int k = 0; k < ncr; k++)
		for (int i = 0; i < cr[k].len; i++) {
			int op0 = cr[k].first + i;
			for (int sk = 0; sk < p->nstrat[op0]; sk++) {
				int len = 0;
				for (int b = 0; b < cr[k].count; b++) {
					int op = op0 + b * cr[k].len;
					if (c->xbase[op] && c->alive[op][sk] &&
					    glp_get_col_type(lp, xcol(c, op, sk)) != GLP_FX) {
						ind[++len] = xcol(c, op, sk);
						val[len] = -1;
					}
				}
				if (len < 2)
					continue;
				int *a = c->agg + 4 * c->nagg++;
				a[0] = op0;
				a[1] = cr[k].len;
				a[2] = cr[k].count;
				a[3] = sk;
				int j = glp_add_cols(lp, 1), row = glp_add_rows(lp, 1);
				col_name(lp, j, "n%d_%d", op0, sk);
				glp_set_col_kind(lp, j, GLP_IV);
				glp_set_col_bnds(lp, j, GLP_DB, 0, len);
				ind[++len] = j;
				val[len] = 1;
				glp_set_row_bnds(lp, row, GLP_FX, 0, 0);
				glp_set_mat_row(lp, row, len, ind, val);
			}
		}
	free(ind);
	free(val);
	return 0;
}

/* What add_cuts reads: per x column its memory, whether reduced-cost fixing
 * fixed it, the list of those it did not, and the room the limit leaves
 * beside what presolve fixed. Returns -1 when out of memory. */
static int cut_data(ilpctx *c, glp_prob *lp, double limit)
{
	pl_problem *p = c->p;
	size_t nc1 = (size_t)c->ncols + 1;
	if (!(c->xm = pl_calloc(nc1, sizeof *c->xm)) || !(c->xoff = pl_malloc(nc1)) ||
	    !(c->xv = pl_calloc(nc1, sizeof *c->xv)) || !(c->xa = pl_calloc(nc1, sizeof *c->xa)) ||
	    !(c->cv = pl_malloc(sizeof *c->cv * nc1)) ||
	    !(c->ci = pl_malloc(sizeof *c->ci * nc1)) ||
	    !(c->act = pl_malloc(sizeof *c->act * nc1)))
		return -1;
	memset(c->xoff, 1, nc1);
	c->room = limit - c->cmem;
	for (int v = 0; v < p->nops; v++) {
		if (c->var[v] != v || !c->xbase[v])
			continue;
		const pl_nodecost *nc = pl_problem_node(p, v);
		for (int k = 0; k < p->nstrat[v]; k++) {
			int j = xcol(c, v, k);
			if (!c->alive[v][k])
				continue;
			c->xm[j] = c->mult[v] * nc[k].mem_bytes;
			c->xoff[j] = glp_get_col_type(lp, j) == GLP_FX;
			if (!c->xoff[j])
				c->act[c->nact++] = j;
		}
	}
	return 0;
}

/* Mixed-integer rounding cuts from the memory row. Per variable take as
 * reference r the strategy the relaxation uses most; with the one-hot rows
 * the memory row reads sum_{k != r} (m_k - m_r) x_k <= b, b the limit less
 * the references' memory. For x >= 0 integer and any delta > 0, with
 * a_j = (m_k - m_r) / delta, f_j its fraction and f that of b / delta,
 *   sum_j (floor(a_j) + max(0, f_j - f) / (1 - f)) x_j <= floor(b / delta)
 * holds for every plan (Marchand and Wolsey's MIR inequality). The relaxation
 * fills the limit with a fraction of one more memory-hungry choice; the cut
 * with delta that choice's memory step says how many such steps fit, for
 * all interchangeable choices (repeated layers; the q, k and v of a layer)
 * at once, and what must give memory back for one more. Tried for the steps
 * of the fractional columns (16 at most); violated cuts join GLPK's pool. */
static void add_cuts(ilpctx *c, glp_tree *tree)
{
	glp_prob *lp = glp_ios_get_prob(tree);
	pl_problem *p = c->p;
	double b = c->room;
	for (int v = 0; v < p->nops; v++) { /* references, values xv and steps xa */
		if (c->var[v] != v || !c->xbase[v])
			continue;
		int r = -1;
		double most = -1;
		for (int k = 0; k < p->nstrat[v]; k++) {
			int j = xcol(c, v, k);
			if (c->alive[v][k] && !c->xoff[j]) {
				c->xv[j] = glp_get_col_prim(lp, j);
				if (c->xv[j] > most) {
					most = c->xv[j];
					r = j;
				}
			}
		}
		if (r < 0) /* every strategy fixed at 0: no plan left here */
			return;
		b -= c->xm[r];
		for (int k = 0; k < p->nstrat[v]; k++) {
			int j = xcol(c, v, k);
			if (c->alive[v][k] && !c->xoff[j])
				c->xa[j] = c->xm[j] - c->xm[r];
		}
	}
	double tried[16];
	int ntried = 0;
	for (int q = 0; q < c->nact && ntried < 16; q++) {
		int f = c->act[q];
		if (c->xv[f] < 1e-6 || c->xv[f] > 1 - 1e-6 || fabs(c->xa[f]) < 1)
			continue;
		double delta = fabs(c->xa[f]);
		int seen = 0;
		for (int t = 0; t < ntried && !seen; t++)
			seen = tried[t] == delta;
		if (seen)
			continue;
		tried[ntried++] = delta;
		double beta = b / delta, fb = floor(beta), fr = beta - fb;
		if (fr < 1e-6 || fr > 0.99) /* no cut, or steep coefficients */
			continue;
		int len = 0;
		double lhs = 0;
		for (int q = 0; q < c->nact; q++) {
			int j = c->act[q];
			if (c->xa[j] == 0)
				continue;
			double aj = c->xa[j] / delta, fl = floor(aj),
			       g = fl + fmax(0, aj - fl - fr) / (1 - fr);
			if (g == 0)
				continue;
			lhs += g * c->xv[j];
			len++;
			c->ci[len] = j;
			c->cv[len] = g;
		}
		if (lhs > fb + 1e-6) {
			glp_ios_add_row(tree, NULL, 101, 0, len, c->ci, c->cv, GLP_UP, fb);
			c->cuts++;
		}
	}
}

static void cb(glp_tree *tree, void *info)
{
	ilpctx *c = info;
	if (late(c)) {
		c->stopped = 1;
		glp_ios_terminate(tree);
		return;
	}
	int a_cnt, n_cnt, t_cnt;
	glp_ios_tree_size(tree, &a_cnt, &n_cnt, &t_cnt);
	c->nodes = t_cnt > c->nodes ? t_cnt : c->nodes;
	if (glp_ios_reason(tree) == GLP_IBRANCH && c->nagg) {
		/* branch on the most fractional layer count first */
		glp_prob *lp = glp_ios_get_prob(tree);
		int pick = 0;
		double far = 1e-6;
		for (int j = c->agg_first; j < c->agg_first + c->nagg; j++) {
			double x = glp_get_col_prim(lp, j), f = fabs(x - floor(x + 0.5));
			if (f > far && glp_ios_can_branch(tree, j)) {
				far = f;
				pick = j;
			}
		}
		if (pick)
			glp_ios_branch_upon(tree, pick, GLP_NO_BRNCH);
		return;
	}
	if (glp_ios_reason(tree) == GLP_ICUTGEN && c->xm) {
		add_cuts(c, tree);
		return;
	}
	if (glp_ios_reason(tree) == GLP_IHEUR && c->incumbent && glp_ios_curr_node(tree) == 1) {
		pl_problem *p = c->p;
		/* GLPK takes the point as given, without checking it against the
		 * rows (glp_ios_heur_sol: "does not check primal feasibility"); a
		 * strategy the presolve dropped has no column (xcol would name a
		 * neighbour's), so such a plan is never offered */
		for (int o = 0; o < p->nops; o++)
			if (c->var[o] == o && c->xbase[o] && !c->alive[o][c->incumbent[o]])
				return;
		double *x = pl_calloc((size_t)c->ncols + (size_t)c->nagg + 1, sizeof *x);
		if (!x)
			return;
		for (int o = 0; o < p->nops; o++)
			if (c->var[o] == o && c->xbase[o])
				x[xcol(c, o, c->incumbent[o])] = 1;
		for (int e = 0; e < p->nedges; e++) {
			const icol *ic = &c->ec[e];
			if (c->erep[e] != e || !ic->base)
				continue;
			int r = ic->rc[c->incumbent[ic->src]], k = ic->cc[c->incumbent[ic->dst]];
			if (c->cost_edges)
				x[ic->base] = OBJ_SCALE * ic->cost[r * ic->nc + k];
			else
				x[ic->base + r * ic->nc + k] = 1;
		}
		for (int q = 0; q < c->nagg; q++) {
			const int *a = c->agg + 4 * q;
			for (int b = 0; b < a[2]; b++)
				x[c->agg_first + q] += c->xbase[a[0] + b * a[1]] &&
				                       c->incumbent[a[0] + b * a[1]] == a[3];
		}
		glp_ios_heur_sol(tree, x);
		free(x);
	}
}

/* Presolve by dominance. Strategy s of a variable goes when another alive
 * strategy s2 is never worse in its place: no more memory (under a limit), and
 * its node time plus, on every incident edge, the most the edge can cost more
 * against any alive strategy of the other end, at most s's node time. Putting
 * s2 for s in any plan keeps it within the limit and no slower, and dominance
 * is transitive, so some optimum uses alive strategies only. Rounds repeat
 * while strategies go (the other ends' alive sets shrink). Symmetric
 * strategies (equal costs everywhere) are the common case on one node: all but
 * one go, which also spares branch and bound from exploring copies.
 * repl[v][s]: the strategy that replaced s (follow until alive). It stops
 * where the time limit runs out: every strategy gone by then stays sound. */
static int presolve(ilpctx *c, int limited, const int *gfirst, const int *gops)
{
	pl_problem *p = c->p;
	int n = p->nops, gone = 0, changed = 1;
	for (int round = 0; changed && round < 8; round++) {
		changed = 0;
		for (int v = 0; v < n; v++) {
			if (c->var[v] != v || p->nstrat[v] < 2)
				continue;
			if (late(c))
				return gone;
			const pl_nodecost *nc = pl_problem_node(p, v);
			unsigned char *al = c->alive[v];
			for (int s = 0; s < p->nstrat[v]; s++) {
				/* per strategy too: with repeated layers sharing a variable
				 * one of them checks every layer's edges (GPT-3 13B on 512
				 * devices: 3.5 s past a 2 s limit when checked per variable) */
				if (!al[s] || late(c))
					continue;
				double ts = nc[s].compute_s + nc[s].comm_s;
				for (int s2 = 0; s2 < p->nstrat[v] && al[s]; s2++) {
					if (s2 == s || !al[s2] ||
					    (limited && nc[s2].mem_bytes > nc[s].mem_bytes))
						continue;
					double slack = ts - (nc[s2].compute_s + nc[s2].comm_s);
					for (int gi = gfirst[v]; gi < gfirst[v + 1] && slack >= 0;
					     gi++) {
						int o = gops[gi];
						for (int k = 0; k < p->op_nedges[o] && slack >= 0;
						     k++) {
							int e = p->op_edges[o][k];
							const pl_edge *ed = &p->edges[e];
							if (c->efree[e])
								continue;
							const double *t = pl_problem_edge(p, e);
							int src = c->var[ed->src_op],
							    dst = c->var[ed->dst_op];
							int nd = p->nstrat[ed->dst_op];
							if (src ==
							    dst) { /* both ends take the strategy */
								if (o != ed->src_op)
									continue; /* counted once */
								slack -= t[(size_t)s2 * nd + s2] -
								         t[(size_t)s * nd + s];
								continue;
							}
							double worst = -HUGE_VAL;
							const unsigned char *ao =
							    c->alive[src == v ? dst : src];
							int no = p->nstrat[src == v ? ed->dst_op
							                            : ed->src_op];
							for (int q = 0; q < no; q++) {
								if (!ao[q])
									continue;
								double d =
								    src == v
								        ? t[(size_t)s2 * nd + q] -
								              t[(size_t)s * nd + q]
								        : t[(size_t)q * nd + s2] -
								              t[(size_t)q * nd + s];
								if (d > worst)
									worst = d;
							}
							slack -= worst;
						}
					}
					if (slack >= 0) {
						al[s] = 0;
						c->repl[v][s] = s2;
						gone++;
						changed = 1;
					}
				}
			}
		}
	}
	return gone;
}

/* Is the ka x kb table a sum of a row term and a column term? */
static int separable(const double *t, int ka, int kb)
{
	double big = 0;
	for (size_t q = 0; q < (size_t)ka * kb; q++)
		big = fmax(big, fabs(t[q]));
	for (int j = 1; j < ka; j++)
		for (int k = 1; k < kb; k++)
			if (fabs(t[(size_t)j * kb + k] - t[(size_t)j * kb] - t[k] + t[0]) >
			    1e-12 * big)
				return 0;
	return 1;
}

/* Adds val to the objective of strategy s of variable v, or to the constant
 * when v has no columns. */
static void add_obj(ilpctx *c, double *cobj, int v, int s, double val)
{
	if (c->xbase[v])
		c->uobj[v][s] += val;
	else
		*cobj += val;
}

/* x columns, numbered from 1, for variables with two or more strategies
 * left (c->xbase, c->col); a variable left one adds its cost to *cobj and
 * its memory to *cmem. The next column's number. */
static int x_columns(ilpctx *c, double *cobj, double *cmem)
{
	pl_problem *p = c->p;
	int col = 1;
	for (int v = 0; v < p->nops; v++) {
		if (c->var[v] != v)
			continue;
		int na = 0, last = 0;
		for (int s = 0; s < p->nstrat[v]; s++) {
			c->col[v][s] = c->alive[v][s] ? na++ : -1;
			if (c->alive[v][s])
				last = s;
		}
		if (na >= 2) {
			c->xbase[v] = col;
			col += na;
		} else {
			const pl_nodecost *nc = pl_problem_node(p, v);
			*cobj += c->mult[v] * (nc[last].compute_s + nc[last].comm_s);
			*cmem += c->mult[v] * nc[last].mem_bytes;
		}
	}
	return col;
}

/* Each edge's representative (shared: the first edge of the same variables
 * and slots) and the representatives' multiplicities */
static void edge_reps(ilpctx *c, int shared)
{
	pl_problem *p = c->p;
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		int s = c->var[ed->src_op], d = c->var[ed->dst_op];
		c->erep[e] = e;
		for (int f = 0; f < e && c->erep[e] == e && shared;
		     f++) { /* same variables, slots */
			const pl_edge *fd = &p->edges[f];
			if (c->erep[f] == f && c->var[fd->src_op] == s && c->var[fd->dst_op] == d &&
			    fd->src_slot == ed->src_slot && fd->dst_slot == ed->dst_slot &&
			    fd->src_is_input == ed->src_is_input)
				c->erep[e] = f;
		}
		icol *ic = &c->ec[c->erep[e]];
		ic->mult += 1;
		ic->src = s;
		ic->dst = d;
	}
}

/* Representative edge e's term: folded into objective terms (both ends one
 * variable, or a separable table; *folded counted), or columns from *col
 * over its table's row and column classes (ic->rc, cc, cost, base). as, bs,
 * tab: scratch of maxs, maxs, maxs^2. PL_OK or PL_ENOMEM. */
static pl_status edge_term(ilpctx *c, int e, int *as, int *bs, double *tab, int *col, double *cobj,
                           int *folded)
{
	pl_problem *p = c->p;
	icol *ic = &c->ec[e];
	const pl_edge *ed = &p->edges[e];
	int s = ic->src, d = ic->dst, ka = 0, kb = 0;
	int ns = p->nstrat[ed->src_op], nd = p->nstrat[ed->dst_op];
	const double *t = pl_problem_edge(p, e);
	if (s == d) { /* both ends are one variable: the diagonal */
		for (int k = 0; k < ns; k++)
			if (c->alive[s][k])
				add_obj(c, cobj, s, k, ic->mult * t[(size_t)k * nd + k]);
		++*folded;
		return PL_OK;
	}
	for (int k = 0; k < ns; k++)
		if (c->alive[s][k])
			as[ka++] = k;
	for (int k = 0; k < nd; k++)
		if (c->alive[d][k])
			bs[kb++] = k;
	for (int a = 0; a < ka; a++)
		for (int b = 0; b < kb; b++)
			tab[(size_t)a * kb + b] = t[(size_t)as[a] * nd + bs[b]];
	if (separable(tab, ka, kb)) {
		for (int a = 0; a < ka; a++)
			add_obj(c, cobj, s, as[a], ic->mult * tab[(size_t)a * kb]);
		for (int b = 0; b < kb; b++)
			add_obj(c, cobj, d, bs[b], ic->mult * (tab[b] - tab[0]));
		++*folded;
		return PL_OK;
	}
	int *rrep = NULL, *crep = NULL, *rcl = NULL, *ccl = NULL;
	pl_status st = PL_OK;
	ic->rc = pl_malloc(sizeof(int) * (size_t)ns);
	ic->cc = pl_malloc(sizeof(int) * (size_t)nd);
	rcl = pl_malloc(sizeof(int) * (size_t)ka);
	ccl = pl_malloc(sizeof(int) * (size_t)kb);
	if (!ic->rc || !ic->cc || !rcl || !ccl ||
	    (ic->nr = classes(tab, ka, kb, 1, rcl, &rrep)) < 0 ||
	    (ic->nc = classes(tab, ka, kb, 0, ccl, &crep)) < 0 ||
	    !(ic->cost = pl_malloc(sizeof(double) * (size_t)ic->nr * ic->nc))) {
		st = PL_ENOMEM;
		goto done;
	}
	for (int k = 0; k < ns; k++)
		ic->rc[k] = -1;
	for (int k = 0; k < nd; k++)
		ic->cc[k] = -1;
	for (int a = 0; a < ka; a++)
		ic->rc[as[a]] = rcl[a];
	for (int b = 0; b < kb; b++)
		ic->cc[bs[b]] = ccl[b];
	for (int a = 0; a < ic->nr; a++)
		for (int b = 0; b < ic->nc; b++)
			ic->cost[a * ic->nc + b] = tab[(size_t)rrep[a] * kb + crep[b]];
	ic->base = *col;
	*col += c->cost_edges ? 1 : ic->nr * ic->nc;
done:
	free(rrep);
	free(crep);
	free(rcl);
	free(ccl);
	return st;
}

/* The constraint matrix's nonzeros, 1-based as glp_load_matrix reads them */
typedef struct nzbuf {
	int *ia, *ja;
	double *ar;
	size_t nz, cap;
} nzbuf;

/* a[r][col] = v appended: 0, or -1 out of memory */
static int nz_add(nzbuf *z, int r, int col, double v)
{
	if (z->nz + 2 >= z->cap) {
		z->cap *= 2;
		int *ni = pl_realloc(z->ia, sizeof *z->ia * z->cap),
		    *nj = pl_realloc(z->ja, sizeof *z->ja * z->cap);
		double *na = pl_realloc(z->ar, sizeof *z->ar * z->cap);
		if (ni)
			z->ia = ni;
		if (nj)
			z->ja = nj;
		if (na)
			z->ar = na;
		if (!ni || !nj || !na)
			return -1;
	}
	z->nz++;
	z->ia[z->nz] = r;
	z->ja[z->nz] = col;
	z->ar[z->nz] = v;
	return 0;
}

/* Each x variable's one-hot row (its columns' names, kinds and costs set) */
static pl_status onehot_rows(ilpctx *c, glp_prob *lp, nzbuf *z, int timed)
{
	pl_problem *p = c->p;
	for (int v = 0; v < p->nops; v++) {
		if (c->var[v] != v || !c->xbase[v])
			continue;
		if (timed && late(c))
			return PL_ETIMEOUT;
		const pl_nodecost *nc = pl_problem_node(p, v);
		int row = glp_add_rows(lp, 1);
		glp_set_row_bnds(lp, row, GLP_FX, 1, 1);
		for (int k = 0; k < p->nstrat[v]; k++) {
			if (!c->alive[v][k])
				continue;
			int j = xcol(c, v, k);
			col_name(lp, j, "x%d_%d", v, k);
			glp_set_col_kind(lp, j, GLP_BV);
			glp_set_obj_coef(
			    lp, j,
			    OBJ_SCALE *
			        (c->mult[v] * (nc[k].compute_s + nc[k].comm_s) + c->uobj[v][k]));
			if (nz_add(z, row, j, 1.0))
				return PL_ENOMEM;
		}
	}
	return PL_OK;
}

/* Edge e's cost column r and its rows: r >= C[a][b] x_a - M_b (1 - x_b),
 * b a class */
static pl_status cost_edge_rows(ilpctx *c, glp_prob *lp, nzbuf *z, int e)
{
	pl_problem *p = c->p;
	icol *ic = &c->ec[e];
	const pl_edge *ed = &p->edges[e];
	int j = ic->base, first = glp_add_rows(lp, ic->nc);
	double top = 0;
	for (int q = 0; q < ic->nr * ic->nc; q++)
		top = fmax(top, ic->cost[q]);
	col_name(lp, j, "r%d", e);
	glp_set_col_bnds(lp, j, GLP_DB, 0, OBJ_SCALE * top);
	glp_set_obj_coef(lp, j, ic->mult);
	for (int b = 0; b < ic->nc; b++) {
		double big = 0;
		for (int a = 0; a < ic->nr; a++)
			big = fmax(big, ic->cost[a * ic->nc + b]);
		glp_set_row_bnds(lp, first + b, GLP_LO, -OBJ_SCALE * big, 0);
		if (nz_add(z, first + b, j, 1.0))
			return PL_ENOMEM;
		for (int k = 0; k < p->nstrat[ed->src_op]; k++)
			if (ic->rc[k] >= 0 && ic->cost[ic->rc[k] * ic->nc + b] != 0 &&
			    nz_add(z, first + b, xcol(c, ic->src, k),
			           -OBJ_SCALE * ic->cost[ic->rc[k] * ic->nc + b]))
				return PL_ENOMEM;
		for (int k = 0; k < p->nstrat[ed->dst_op]; k++)
			if (ic->cc[k] == b && big != 0 &&
			    nz_add(z, first + b, xcol(c, ic->dst, k), -OBJ_SCALE * big))
				return PL_ENOMEM;
	}
	return PL_OK;
}

/* Edge e's y columns over its classes and its transportation rows: each
 * row class's y sum to its x columns, each column class's too */
static pl_status transport_rows(ilpctx *c, glp_prob *lp, nzbuf *z, int e)
{
	pl_problem *p = c->p;
	icol *ic = &c->ec[e];
	const pl_edge *ed = &p->edges[e];
	int first = glp_add_rows(lp, ic->nr + ic->nc);
	for (int q = 0; q < ic->nr + ic->nc; q++)
		glp_set_row_bnds(lp, first + q, GLP_FX, 0, 0);
	for (int a = 0; a < ic->nr; a++)
		for (int b = 0; b < ic->nc; b++) {
			int j = ic->base + a * ic->nc + b;
			col_name(lp, j, "y%d_%d_%d", e, a, b);
			glp_set_col_bnds(lp, j, GLP_LO, 0, 0);
			glp_set_obj_coef(lp, j, OBJ_SCALE * ic->mult * ic->cost[a * ic->nc + b]);
			if (nz_add(z, first + a, j, 1.0) || nz_add(z, first + ic->nr + b, j, 1.0))
				return PL_ENOMEM;
		}
	for (int k = 0; k < p->nstrat[ed->src_op]; k++)
		if (ic->rc[k] >= 0 && nz_add(z, first + ic->rc[k], xcol(c, ic->src, k), -1.0))
			return PL_ENOMEM;
	for (int k = 0; k < p->nstrat[ed->dst_op]; k++)
		if (ic->cc[k] >= 0 &&
		    nz_add(z, first + ic->nr + ic->cc[k], xcol(c, ic->dst, k), -1.0))
			return PL_ENOMEM;
	return PL_OK;
}

/* The memory row under limit: the x columns' memory, over the limit less
 * what presolve fixed (cmem) */
static pl_status memory_row(ilpctx *c, glp_prob *lp, nzbuf *z, double limit, double cmem,
                            int *mem_row)
{
	pl_problem *p = c->p;
	*mem_row = glp_add_rows(lp, 1);
	glp_set_row_name(lp, *mem_row, "memory");
	glp_set_row_bnds(lp, *mem_row, GLP_UP, 0, 1.0 - cmem / limit);
	for (int v = 0; v < p->nops; v++) {
		if (c->var[v] != v || !c->xbase[v])
			continue;
		const pl_nodecost *nc = pl_problem_node(p, v);
		for (int k = 0; k < p->nstrat[v]; k++)
			if (c->alive[v][k] && nc[k].mem_bytes != 0 &&
			    nz_add(z, *mem_row, xcol(c, v, k),
			           c->mult[v] * nc[k].mem_bytes / limit))
				return PL_ENOMEM;
	}
	return PL_OK;
}

/* The program on the alive strategies into *lpo: x columns for variables
 * with two or more strategies left, edges folded into objective terms or y
 * columns over their classes, the one-hot and transportation rows, and the
 * memory row under a limit (*mem_row, else 0). *nzo: its nonzeros; *folded:
 * the edges folded. unbuild() undoes it. timed: PL_ETIMEOUT, and no program,
 * when the time limit runs out on the way (the edge columns made so far are
 * freed by unbuild() or the search's cleanup). Columns are numbered as they
 * are made (x, then each edge's y or cost columns), and the rows name them. */
static pl_status build(ilpctx *c, const pl_search_opts *o, int timed, int shared, int maxs,
                       glp_prob **lpo, size_t *nzo, int *mem_row_o, int *folded_o, pl_err *err)
{
	pl_problem *p = c->p;
	glp_prob *lp = NULL;
	nzbuf z = {0};
	int mem_row = 0, folded = 0;
	double cobj = 0, cmem = 0; /* objective and memory of what presolve fixed */
	int col = x_columns(c, &cobj, &cmem);
	edge_reps(c, shared);
	pl_status st = PL_OK;
	int *as = pl_malloc(sizeof *as * (size_t)maxs), *bs = pl_malloc(sizeof *bs * (size_t)maxs);
	double *tab = pl_malloc(sizeof *tab * (size_t)maxs * (size_t)maxs);
	if (!as || !bs || !tab)
		st = PL_ENOMEM;
	for (int e = 0; e < p->nedges && !st; e++) {
		if (c->erep[e] != e || c->efree[e])
			continue;
		st = timed && late(c) ? PL_ETIMEOUT
		                      : edge_term(c, e, as, bs, tab, &col, &cobj, &folded);
	}
	/* what GLPK copies in untimed must end before the deadline */
	if (!st && timed && c->deadline > 0 &&
	    (double)(col - 1) * (PL_ILP_ADD_COL_S + 2 * PL_ILP_LOAD_NZ_S) > c->deadline - pl_now())
		st = PL_ETIMEOUT;
	if (!st) {
		c->ncols = col - 1;
		c->cobj = cobj;
		c->cmem = cmem;
		lp = glp_create_prob();
		glp_set_prob_name(lp, p->g->name);
		glp_set_obj_dir(lp, GLP_MIN);
		if (c->ncols)
			glp_add_cols(lp, c->ncols);
		glp_set_obj_coef(lp, 0, OBJ_SCALE * cobj);
		z.cap = 1024;
		z.ia = pl_malloc(sizeof *z.ia * z.cap);
		z.ja = pl_malloc(sizeof *z.ja * z.cap);
		z.ar = pl_malloc(sizeof *z.ar * z.cap);
		if (!z.ia || !z.ja || !z.ar)
			st = PL_ENOMEM;
	}
	if (!st)
		st = onehot_rows(c, lp, &z, timed);
	for (int e = 0; e < p->nedges && !st; e++) {
		if (c->erep[e] != e || !c->ec[e].base)
			continue;
		st = timed && late(c) ? PL_ETIMEOUT
		     : c->cost_edges  ? cost_edge_rows(c, lp, &z, e)
		                      : transport_rows(c, lp, &z, e);
	}
	if (!st && o->memory_limit > 0)
		st = memory_row(c, lp, &z, o->memory_limit, cmem, &mem_row);
	if (!st && timed && c->deadline > 0 &&
	    (double)z.nz * PL_ILP_LOAD_NZ_S > c->deadline - pl_now())
		st = PL_ETIMEOUT;
	if (!st) {
		glp_load_matrix(lp, (int)z.nz, z.ia, z.ja, z.ar);
		*lpo = lp;
		*nzo = z.nz;
		*mem_row_o = mem_row;
		*folded_o = folded;
		lp = NULL;
	} else if (st == PL_ETIMEOUT)
		st = pl_err_set(err, PL_ETIMEOUT,
		                "ilp: the time limit ran out building the program");
	else
		st = pl_err_set(err, PL_ENOMEM, "ilp: out of memory");
	if (lp)
		glp_delete_prob(lp);
	free(z.ia);
	free(z.ja);
	free(z.ar);
	free(as);
	free(bs);
	free(tab);
	return st;
}

/* Undoes build(): the program, the edge columns and the folded terms go. */
static void unbuild(ilpctx *c, glp_prob *lp)
{
	pl_problem *p = c->p;
	glp_delete_prob(lp);
	for (int e = 0; e < p->nedges; e++) {
		free(c->ec[e].rc);
		free(c->ec[e].cc);
		free(c->ec[e].cost);
		memset(&c->ec[e], 0, sizeof c->ec[e]);
	}
	for (int v = 0; v < p->nops; v++) {
		c->xbase[v] = 0;
		if (c->var[v] == v)
			memset(c->uobj[v], 0, sizeof *c->uobj[v] * (size_t)p->nstrat[v]);
	}
}

/* ---- the search, in phases ----
 *
 * setup -> variables -> presolve -> bound (Lagrangian) -> build -> bound (LP)
 * -> fix -> branch -> assemble. Each phase is a function of the run below and
 * keeps its invariant: `best` (per variable) is the best plan found so far
 * that fits, of value best_val (HUGE_VAL while there is none); `bound` never
 * exceeds the optimum (-HUGE_VAL while there is none); once `solved` is set,
 * the phases after it change nothing and the plan is `best` (proven when
 * `proven`, and r->why says how; else `stage` names what the time limit
 * stopped). A phase returns PL_OK, or the search's error with err set. */
typedef struct ilprun {
	ilpctx c;
	pl_problem *p;
	const pl_search_opts *o;
	pl_search_result *r;
	pl_err *err;
	double t0;
	glp_prob *lp;
	int *gfirst, *gops; /* per variable v: the ops gops[gfirst[v] .. gfirst[v + 1]) */
	int *best, *lo, *hi;
	double *dj;           /* per column: reduced cost at the LP bound */
	pl_search_result inc; /* rec's plan */
	pl_status rs;         /* whether rec found one */
	pl_run runs[64];
	int nruns, shared, maxs, total, gone;
	long long full_cols; /* columns the program would have unshared */
	double least, best_val, bound, lag, lpb, lambda;
	int fixed, proven, solved, mm_fixed, folded, mem_row, lagrangian, mip;
	size_t nz;
	const char *stage; /* what the time limit stopped */
} ilprun;

static pl_status nomem(ilprun *s)
{
	return pl_err_set(s->err, PL_ENOMEM, "ilp: out of memory");
}

static int better_than_bound(const ilprun *s)
{
	return s->best_val > s->bound + 1e-9 * fabs(s->bound) + 1e-9;
}

/* The per-op arrays, the least memory any plan needs (PL_EINVAL when even
 * that is over the limit) and every edge's table, priced on every core. */
static pl_status setup(ilprun *s)
{
	pl_problem *p = s->p;
	ilpctx *c = &s->c;
	int n = p->nops, E = p->nedges;
	c->var = pl_malloc(sizeof *c->var * ((size_t)n + 1));
	c->mult = pl_calloc((size_t)n + 1, sizeof *c->mult);
	c->xbase = pl_calloc((size_t)n + 1, sizeof *c->xbase);
	c->alive = pl_calloc((size_t)n + 1, sizeof *c->alive);
	c->repl = pl_calloc((size_t)n + 1, sizeof *c->repl);
	c->col = pl_calloc((size_t)n + 1, sizeof *c->col);
	c->uobj = pl_calloc((size_t)n + 1, sizeof *c->uobj);
	c->ec = pl_calloc((size_t)E + 1, sizeof *c->ec);
	c->erep = pl_malloc(sizeof *c->erep * ((size_t)E + 1));
	c->efree = pl_calloc((size_t)E + 1, 1);
	s->gfirst = pl_calloc((size_t)n + 2, sizeof *s->gfirst);
	s->gops = pl_malloc(sizeof *s->gops * ((size_t)n + 1));
	s->r->choice = pl_calloc((size_t)n + 1, sizeof *s->r->choice);
	if (!c->var || !c->mult || !c->xbase || !c->alive || !c->repl || !c->col || !c->uobj ||
	    !c->ec || !c->erep || !c->efree || !s->gfirst || !s->gops || !s->r->choice)
		return nomem(s);
	if (s->o->time_limit_s > 0)
		c->deadline = s->t0 + s->o->time_limit_s;

	/* the least memory any plan needs (memory has no edge terms) */
	s->least = pl_problem_least_plan_memory(p);
	if (s->least < 0)
		return nomem(s);
	s->r->min_mem_bytes = s->least;
	if (s->o->memory_limit > 0 && s->least > s->o->memory_limit)
		return pl_search_err_no_fit(s->err, s->o->memory_limit, s->least);
	int *all = pl_malloc(sizeof *all * ((size_t)E + 1));
	if (!all)
		return nomem(s);
	for (int e = 0; e < E; e++)
		all[e] = e;
	int bad = pl_problem_prepare_by(p, all, E, s->o->threads, c->deadline);
	free(all);
	if (bad > 0)
		return pl_err_set(s->err, PL_ETIMEOUT,
		                  "ilp: the time limit ran out pricing the edge tables, before any "
		                  "plan");
	if (bad)
		return nomem(s);
	s->maxs = 1;
	for (int e = 0; e < E; e++) {
		const pl_edge *ed = &p->edges[e];
		const double *t = pl_problem_edge(p, e);
		size_t cells = (size_t)p->nstrat[ed->src_op] * p->nstrat[ed->dst_op];
		c->efree[e] = 1;
		for (size_t q = 0; q < cells && c->efree[e]; q++)
			c->efree[e] = t[q] == 0;
	}
	for (int op = 0; op < n; op++)
		if (p->nstrat[op] > s->maxs)
			s->maxs = p->nstrat[op];
	return PL_OK;
}

/* One variable per op, unless the program would be too large: then layers
 * 2..k of each run of repeated layers share the variables of layer 1 (the
 * plan repeats one strategy there). Every variable's strategies start alive. */
static pl_status variables(ilprun *s)
{
	pl_problem *p = s->p;
	ilpctx *c = &s->c;
	int n = p->nops, E = p->nedges;
	for (int op = 0; op < n; op++)
		s->full_cols += p->nstrat[op];
	for (int e = 0; e < E; e++)
		s->full_cols += (long long)p->nstrat[p->edges[e].src_op] / 2 + 1;
	for (int op = 0; op < n; op++)
		c->var[op] = op;
	if (s->full_cols > PL_ILP_SHARE_COLUMNS && !s->o->no_repeat) {
		s->nruns = pl_problem_runs(p, s->runs, 64);
		for (int k = 0; k < s->nruns; k++) {
			const pl_run *run = &s->runs[k];
			for (int b = 2; b < run->count; b++)
				for (int i = 0; i < run->len; i++) {
					c->var[run->first + b * run->len + i] =
					    run->first + run->len + i;
					s->shared = 1;
				}
		}
	}
	int *gfirst = s->gfirst, *gops = s->gops;
	for (int op = 0; op < n; op++) {
		c->mult[c->var[op]] += 1;
		gfirst[c->var[op] + 1]++;
	}
	for (int v = 0; v < n; v++)
		gfirst[v + 1] += gfirst[v];
	for (int op = 0; op < n; op++)
		gops[gfirst[c->var[op]]++] = op;
	for (int v = n; v > 0; v--)
		gfirst[v] = gfirst[v - 1];
	gfirst[0] = 0;
	for (int v = 0; v < n; v++) {
		if (c->var[v] != v)
			continue;
		int ns = p->nstrat[v];
		s->total += ns;
		c->alive[v] = pl_malloc((size_t)ns);
		c->repl[v] = pl_malloc(sizeof(int) * (size_t)ns);
		c->col[v] = pl_malloc(sizeof(int) * (size_t)ns);
		c->uobj[v] = pl_calloc((size_t)ns, sizeof(double));
		if (!c->alive[v] || !c->repl[v] || !c->col[v] || !c->uobj[v])
			return nomem(s);
		memset(c->alive[v], 1, (size_t)ns);
		for (int st = 0; st < ns; st++)
			c->repl[v][st] = -1;
	}
	return PL_OK;
}
/* GLPK writes the LP file by name; it is written to a private scratch file
 * and then to path by the rule every output follows (graph/output.h):
 * never through a planted link, never over a device, atomically. */
static pl_status dump_lp(glp_prob *lp, const char *path, pl_err *err)
{
	const char *dir = getenv("TMPDIR");
	char scratch[4096];
	snprintf(scratch, sizeof scratch, "%s/planner-lp-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(scratch);
	if (fd < 0)
		return pl_err_set(err, PL_EWRITE, "%s: cannot write a scratch file for the LP: %s",
		                  scratch, strerror(errno));
	close(fd);
	char *text = NULL;
	size_t len;
	pl_status st =
	    glp_write_lp(lp, NULL, scratch)
	        ? pl_err_set(err, PL_EWRITE, "%s: GLPK cannot write the LP file", scratch)
	        : pl_read_file(scratch, &text, &len, err);
	unlink(scratch);
	if (st == PL_OK)
		st = pl_output_write(path, text, err);
	free(text);
	return st;
}

/* rec's plan first (so that a time limit that runs out later still has a
 * plan), then the dominance presolve; rec's plan, mapped onto what the
 * presolve kept, is the first incumbent. With --dump-lp, the program as the
 * presolve leaves it is written for other solvers. */
static pl_status presolve_phase(ilprun *s)
{
	pl_problem *p = s->p;
	const pl_search_opts *o = s->o;
	ilpctx *c = &s->c;
	int n = p->nops;
	{
		pl_search_opts ro = *o;
		ro.progress = NULL;
		ro.time_limit_s = time_left(c);
		pl_err e2;
		s->rs = pl_search_rec(p, &ro, &s->inc, &e2);
	}
	s->gone = presolve(c, o->memory_limit > 0, s->gfirst, s->gops);
	c->gfirst = s->gfirst;
	c->gops = s->gops;
	s->best = pl_malloc(sizeof *s->best * ((size_t)n + 1));
	s->lo = pl_malloc(sizeof *s->lo * ((size_t)n + 1));
	s->hi = pl_malloc(sizeof *s->hi * ((size_t)n + 1));
	if (!s->best || !s->lo || !s->hi)
		return nomem(s);
	if (s->rs == PL_OK) { /* rec's plan, when it fits, dropped strategies replaced */
		int ok = 1;
		for (int op = 0; op < n && ok; op++)
			ok = !memcmp(pl_search_result_split(p, &s->inc, op),
			             p->strat[op] +
			                 (size_t)s->inc.choice[op] * p->g->ops[op].spec.nloops,
			             sizeof(int64_t) * (size_t)p->g->ops[op].spec.nloops);
		if (ok && as_variables(c, s->inc.choice, s->hi) == 0)
			keep_if_better(c, s->hi, o->memory_limit, s->best, &s->best_val);
	}
	if (late(c)) {
		if (s->best_val == HUGE_VAL)
			return pl_err_set(
			    s->err, PL_ETIMEOUT,
			    "ilp: the time limit ran out in the presolve, before any plan");
		s->solved = 1; /* the best plan, not proven (said in assemble) */
		s->stage = "presolve";
	}
	if (o->ilp.dump_lp) {
		pl_status st = build(c, o, 0, s->shared, s->maxs, &s->lp, &s->nz, &s->mem_row,
		                     &s->folded, s->err);
		if (st)
			return st;
		if ((st = dump_lp(s->lp, o->ilp.dump_lp, s->err)))
			return st;
		if (s->lagrangian) { /* fixing changes it: built again */
			unbuild(c, s->lp);
			s->lp = NULL;
		}
	}
	return PL_OK;
}

/* Under a memory limit, the memory row dualized: dp under a memory price
 * gives the Lagrangian bound (lagrange()) and incumbents; a plan that meets
 * the bound is optimal. Else dp's min-marginals at the bound's price fix
 * every strategy that no plan faster than the best one uses (mm_fix()), and
 * the dominance presolve runs again on what is left. */
static pl_status bound_lagrangian(ilprun *s)
{
	const pl_search_opts *o = s->o;
	ilpctx *c = &s->c;
	if (!s->lagrangian || s->solved)
		return PL_OK;
	int have_lo, have_hi;
	if (lagrange(c, o, !rec_only(o), &s->lambda, &s->lag, s->lo, s->hi, &have_lo, &have_hi,
	             s->best, &s->best_val))
		return nomem(s);
	if (!rec_only(o) && have_lo && have_hi && !s->shared &&
	    mix(c, o->memory_limit, s->lo, s->hi, s->best, &s->best_val))
		return nomem(s);
	if (!rec_only(o) && moves(c, o->memory_limit, s->best, &s->best_val))
		return nomem(s);
	if (s->lag > -HUGE_VAL)
		s->bound = OBJ_SCALE * s->lag;
	if (s->best_val < HUGE_VAL && s->lag > -HUGE_VAL) {
		if (s->bound >= s->best_val - (1e-9 * fabs(s->best_val) + 1e-9)) {
			s->proven = s->solved = 1;
			snprintf(s->r->why, sizeof s->r->why,
			         "the plan meets the Lagrangian bound of dp under a memory price");
		} else {
			pl_err e2;
			pl_status fs = mm_fix(c, o, s->lambda, s->best_val / OBJ_SCALE, s->best,
			                      &s->mm_fixed, &e2);
			if (fs == PL_ENOMEM)
				return nomem(s); /* out of time: no fixing */
			if (s->mm_fixed) {
				/* the fixing kept the best plan's strategies; the presolve on
				 * what is left may drop some of them (a neighbour's strategy
				 * that made them worth keeping is gone). The best plan then
				 * takes their replacements, no slower and no larger, so that
				 * it stays a plan of the program (see cb) */
				s->gone += s->mm_fixed + presolve(c, 1, s->gfirst, s->gops);
				if (as_variables(c, s->best, s->hi) == 0) {
					memcpy(s->best, s->hi,
					       sizeof *s->best * (size_t)c->p->nops);
					s->best_val = plan_value(c, s->best);
				}
			}
		}
	}
	if (o->progress && s->lag > -HUGE_VAL) {
		char msg[256];
		snprintf(msg, sizeof msg,
		         "ilp: Lagrangian bound %.6g s at a memory price of %.3g s/GiB (%d dps), "
		         "best plan %.6g s; dp's min-marginals fixed %d strategies (%.1f s)",
		         s->lag, s->lambda * 1073741824.0, c->dps, s->best_val / OBJ_SCALE,
		         s->mm_fixed, pl_now() - s->t0);
		o->progress(o->ud, msg);
	}
	if (!s->solved && late(c) && s->best_val < HUGE_VAL) {
		s->solved = 1; /* the best plan, not proven (said in assemble) */
		s->stage = "Lagrangian step";
	}
	return PL_OK;
}

/* The program on what the presolve and the fixing left (build()). */
static pl_status build_phase(ilprun *s)
{
	if (!s->lp && !s->solved) {
		pl_status st = build(&s->c, s->o, 1, s->shared, s->maxs, &s->lp, &s->nz,
		                     &s->mem_row, &s->folded, s->err);
		if (st == PL_ETIMEOUT && s->best_val < HUGE_VAL) {
			s->solved = 1; /* the best plan, not proven (said in assemble) */
			s->stage = "building of the program";
		} else if (st) {
			return st;
		}
	}
	if (s->o->progress && s->lp) {
		char msg[256];
		snprintf(msg, sizeof msg,
		         "ilp: presolve kept %d of %d strategies and folded %d edges; %d columns, "
		         "%d rows, %zu nonzeros%s",
		         s->total - s->gone, s->total, s->folded, s->c.ncols,
		         glp_get_num_rows(s->lp), s->nz,
		         s->shared ? " (repeated layers share variables)" : "");
		s->o->progress(s->o->ud, msg);
	}
	return PL_OK;
}

/* A bound from the LP relaxation by the interior-point method (on these
 * instances many times faster than simplex), the rounded LP solution as an
 * incumbent, and while a gap remains, more incumbents: dp under prices (when
 * the memory row was not dualized above) and single moves. */
static pl_status bound_lp(ilprun *s)
{
	pl_problem *p = s->p;
	const pl_search_opts *o = s->o;
	ilpctx *c = &s->c;
	int n = p->nops;
	s->dj = pl_malloc(sizeof *s->dj * ((size_t)c->ncols + 1));
	if (!s->dj)
		return nomem(s);
	if (!s->solved && c->ncols && ipm_ok(c, s->nz, s->mem_row)) {
		ipmsol sol;
		int got = ipm_solve(s->lp, c->deadline, &sol);
		if (got < 0)
			return nomem(s);
		int ret = got ? GLP_EFAIL : sol.ret;
		if (got)
			s->stage = "interior-point method";
		/* GLPK's interior point may call a feasible program infeasible (seen
		 * on a random instance with a plan 6e-4 of the limit inside it): no
		 * bound from it then; the simplex below decides */
		/* near the end it often stops on numerical instability at a point
		 * as good as optimal: the bound below is valid from any duals */
		if ((ret == 0 && sol.status == GLP_OPT) || ret == GLP_EINSTAB ||
		    ret == GLP_ENOCVG || ret == GLP_EITLIM) {
			if (lp_bound(s->lp, sol.pi, s->dj, &s->lpb)) {
				ipm_free(&sol);
				return nomem(s);
			}
			s->bound = fmax(s->bound, s->lpb);
			int *rc = s->r->choice;
			for (int v = 0; v < n; v++) { /* round: the largest x per variable */
				if (c->var[v] != v)
					continue;
				double most = -1;
				for (int k = 0; k < p->nstrat[v]; k++)
					if (c->alive[v][k]) {
						double x =
						    c->xbase[v] ? sol.x[xcol(c, v, k)] : 1;
						if (x > most) {
							most = x;
							rc[v] = k;
						}
					}
			}
			if (!rec_only(o) && plan_fits(c, rc, o->memory_limit) &&
			    plan_value(c, rc) < s->best_val) {
				memcpy(s->best, rc, sizeof *s->best * (size_t)n);
				s->best_val = plan_value(c, s->best);
			}
		}
		ipm_free(&sol);
	}
	if (!s->solved && !rec_only(o) && s->lpb > -HUGE_VAL && better_than_bound(s)) {
		if (s->mem_row && !s->lagrangian) { /* incumbents from dp under prices */
			int have_lo, have_hi;
			double l2, b2;
			if (lagrange(c, o, 1, &l2, &b2, s->lo, s->hi, &have_lo, &have_hi, s->best,
			             &s->best_val) ||
			    (have_lo && have_hi && !s->shared &&
			     mix(c, o->memory_limit, s->lo, s->hi, s->best, &s->best_val)))
				return nomem(s);
		}
		if (moves(c, o->memory_limit, s->best, &s->best_val))
			return nomem(s);
	}
	return PL_OK;
}

/* A plan that meets the bound is optimal; else every column whose reduced
 * cost alone exceeds the gap is fixed at 0 (no plan better than the best
 * one uses it). */
static void fix(ilprun *s)
{
	ilpctx *c = &s->c;
	double tol = 1e-9 * fabs(s->best_val) + 1e-9;
	if (s->solved) {
	} else if (s->best_val < HUGE_VAL && s->bound >= s->best_val - tol) {
		s->proven = s->solved = 1;
		snprintf(s->r->why, sizeof s->r->why, "%s",
		         c->ncols ? "a plan met the bound of the LP relaxation"
		                  : "presolve fixed every op (the LP relaxation was integral)");
	} else if (s->best_val < HUGE_VAL && s->lpb > -HUGE_VAL) {
		for (int j = 1; j <= c->ncols; j++) /* a bounded column is a cost: it stays */
			if (glp_get_col_type(s->lp, j) != GLP_DB &&
			    s->lpb + s->dj[j] > s->best_val + tol) {
				glp_set_col_bnds(s->lp, j, GLP_FX, 0, 0);
				s->fixed++;
			}
	}
	if (s->best_val < HUGE_VAL)
		c->incumbent = s->best;
	if (s->o->progress && s->lpb > -HUGE_VAL) {
		char msg[200];
		snprintf(
		    msg, sizeof msg,
		    "ilp: LP bound %.6g s, best plan %.6g s; %d of %d columns fixed by reduced "
		    "cost (%.1f s)",
		    s->lpb / OBJ_SCALE, s->best_val / OBJ_SCALE, s->fixed, c->ncols,
		    pl_now() - s->t0);
		s->o->progress(s->o->ud, msg);
	}
}

/* Simplex on what is left; an integral solution is optimal, else s->mip. */
static pl_status relax(ilprun *s)
{
	pl_problem *p = s->p;
	ilpctx *c = &s->c;
	if (s->solved)
		return PL_OK;
	if (s->mem_row && !s->shared && add_counts(c, s->lp))
		return nomem(s);
	int run = 1;
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	sm.presolve = GLP_ON;
	if (c->deadline > 0) {
		/* GLPK's presolve is not timed (1.6 s on GPT-3 1.3B on 64 devices, 4
		 * million nonzeros; over 3 minutes with cost edges): off, and the
		 * copy in comes off tm_lim */
		sm.presolve = GLP_OFF;
		double left =
		    0.95 * (c->deadline - pl_now()) - PL_ILP_SIMPLEX_S_PER_NZ * (double)s->nz;
		sm.tm_lim = left > 0.001 ? (int)(left * 1000) : 1;
		run = left > 0.001 || s->best_val == HUGE_VAL; /* else not one iteration */
	}
	int ret = run ? glp_simplex(s->lp, &sm) : GLP_ETMLIM;
	if (ret == GLP_EFAIL || ret == GLP_ESING || ret == GLP_ECOND) {
		/* a numerical failure (costs spanning many orders of magnitude):
		 * once more on the scaled program from an advanced basis, as glpsol
		 * runs it (glp_scale_prob, glp_adv_basis) */
		glp_scale_prob(s->lp, GLP_SF_AUTO);
		glp_adv_basis(s->lp, 0);
		if (c->deadline > 0) {
			double left = 0.95 * (c->deadline - pl_now());
			sm.tm_lim = left > 0.001 ? (int)(left * 1000) : 1;
		}
		ret = glp_simplex(s->lp, &sm);
	}
	if (ret == GLP_ENOPFS || glp_get_status(s->lp) == GLP_NOFEAS) {
		if ((s->fixed || s->mm_fixed) && s->best_val < HUGE_VAL) { /* none beats the best */
			s->proven = s->solved = 1;
			snprintf(s->r->why, sizeof s->r->why,
			         "%s ruled out every plan better than the best one",
			         s->fixed ? "reduced costs" : "dp's min-marginals");
			return PL_OK;
		}
		return pl_search_err_no_fit(s->err, s->o->memory_limit, s->least);
	}
	if ((ret == GLP_ETMLIM || late(c)) && s->best_val < HUGE_VAL) {
		s->solved = 1; /* the best plan, not proven (said in assemble) */
		return PL_OK;
	}
	if (ret == GLP_ETMLIM || late(c))
		return pl_err_set(s->err, PL_ETIMEOUT,
		                  "ilp: the time limit ran out in the LP relaxation (%d columns); "
		                  "raise --time-limit or use --mode dp or rec",
		                  c->ncols - s->fixed);
	if (ret != 0 || glp_get_status(s->lp) != GLP_OPT)
		return pl_err_set(s->err, PL_ESOLVER,
		                  "ilp: GLPK's simplex failed (code %d, status %d)", ret,
		                  glp_get_status(s->lp));
	/* the simplex's optimum bounds every plan better than the best one (the
	 * columns reduced costs or min-marginals fixed are in none of them); the
	 * interior point's bound from its duals may have stopped short of it */
	s->bound = fmax(s->bound, fmin(glp_get_obj_val(s->lp), s->best_val));
	int integral = 1;
	for (int v = 0; v < p->nops && integral; v++) {
		if (c->var[v] != v || !c->xbase[v])
			continue;
		for (int k = 0; k < p->nstrat[v] && integral; k++) {
			if (!c->alive[v][k])
				continue;
			double x = glp_get_col_prim(s->lp, xcol(c, v, k));
			integral = x < 1e-9 || x > 1 - 1e-9;
		}
	}
	s->mip = !integral;
	s->proven = 1;
	snprintf(s->r->why, sizeof s->r->why, "the LP relaxation was integral");
	return PL_OK;
}

/* Branch and bound (glp_intopt, started from the best plan, memory cuts and
 * the time limit in its callback) when the relaxation was fractional. */
static pl_status branch(ilprun *s)
{
	ilpctx *c = &s->c;
	if (!s->mip)
		return PL_OK;
	glp_iocp io;
	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.cb_func = cb;
	io.cb_info = c;
	io.mip_gap = 0;
	/* a column within GLPK's default 1e-5 of integral, or a node within 1e-7
	 * of the incumbent, passed for a plan a 10^-6 from the optimum (seen on a
	 * random instance): tolerances to the pricing's precision instead */
	io.tol_int = 1e-9;
	io.tol_obj = 1e-10;
	/* GLPK's default branching (Driebeck-Tomlin) evaluates a tableau row per
	 * fractional column at each node, untimed: minutes on a program of 2
	 * million nonzeros. There, the most fractional column instead. */
	if (s->nz > PL_ILP_DTH_NZ)
		io.br_tech = GLP_BR_MFV;
	if (c->deadline > 0) { /* the callback stops it; GLPK's own limit as well */
		double left = c->deadline - pl_now();
		io.tm_lim = left > 0.001 ? (int)(left * 1000) : 1;
	}
	if (s->mem_row && cut_data(c, s->lp, s->o->memory_limit))
		return nomem(s);
	int ret = glp_intopt(s->lp, &io);
	int ms = glp_mip_status(s->lp);
	if (ms == GLP_NOFEAS && !((s->fixed || s->mm_fixed) && s->best_val < HUGE_VAL))
		return pl_search_err_no_fit(s->err, s->o->memory_limit, s->least);
	int stopped = c->stopped || ret == GLP_ETMLIM;
	if (ms != GLP_OPT && ms != GLP_FEAS && ms != GLP_NOFEAS &&
	    !(stopped && s->best_val < HUGE_VAL))
		return pl_err_set(s->err, stopped ? PL_ETIMEOUT : PL_ESOLVER,
		                  stopped ? "ilp: the time limit ran out before a plan was found"
		                          : "ilp: GLPK's branch and bound failed (code %d)",
		                  ret);
	s->proven = (ms == GLP_OPT || ms == GLP_NOFEAS) && !stopped && ret == 0;
	if (!s->proven)
		snprintf(s->r->why, sizeof s->r->why,
		         "the time limit stopped branch and bound: feasible, not proven optimal");
	else
		snprintf(s->r->why, sizeof s->r->why,
		         "branch and bound proved it optimal (%d subproblems, %d memory cuts, %d "
		         "strategies fixed by dp's min-marginals)",
		         c->nodes, c->cuts, s->mm_fixed);
	/* the best plan stands: nothing better, or branch and bound none */
	s->solved = ms != GLP_OPT && ms != GLP_FEAS;
	return PL_OK;
}

/* The plan per op (the best one, or the program's solution when it is no
 * worse), what it is (why, optimal, the bound) and its price. */
static pl_status assemble(ilprun *s)
{
	pl_problem *p = s->p;
	ilpctx *c = &s->c;
	pl_search_result *r = s->r;
	int n = p->nops;
	for (int op = 0; op < n; op++) {
		int v = c->var[op];
		if (s->solved) {
			r->choice[op] = s->best[v];
			continue;
		}
		for (int k = 0; k < p->nstrat[v]; k++) {
			if (!c->alive[v][k])
				continue;
			if (!c->xbase[v] || (s->mip ? glp_mip_col_val(s->lp, xcol(c, v, k))
			                            : glp_get_col_prim(s->lp, xcol(c, v, k))) > 0.5)
				r->choice[op] = k;
		}
	}
	if (!s->solved && s->best_val < plan_value(c, r->choice)) /* never worse than the best */
		for (int op = 0; op < n; op++)
			r->choice[op] = s->best[c->var[op]];
	/* a step takes time: a bound at or below 0 (duals of an interior point
	 * far from optimal) says nothing */
	if (!s->proven && s->bound > 0) {
		double v = plan_value(c, r->choice);
		snprintf(r->why, sizeof r->why,
		         "the time limit stopped the %s: feasible, at most %.3g%% slower than "
		         "optimal (bound %.6g s)",
		         s->mip ? "branch and bound" : s->stage, 100 * (v - s->bound) / s->bound,
		         s->bound / OBJ_SCALE);
	} else if (!s->proven) {
		snprintf(
		    r->why, sizeof r->why,
		    "the time limit stopped the %s before a useful bound: feasible, not proven "
		    "optimal",
		    s->stage);
	}
	if (pl_search_result_price(p, r))
		return nomem(s);
	r->optimal = s->proven && !s->shared;
	/* the root's bound; with shared layers the LP's holds for such plans only */
	double b = s->shared ? OBJ_SCALE * s->lag : s->bound;
	r->bound_s = b > 0 ? b / OBJ_SCALE * pl_job_step_scale(&p->job) : 0;
	if (s->shared) {
		snprintf(r->why, sizeof r->why,
		         "repeated layers share one strategy (the instance has %lld columns "
		         "unshared); %s among such plans",
		         s->full_cols, s->proven ? "optimal" : "feasible");
		for (int k = 0; k < s->nruns; k++)
			r->repeated_layers += s->runs[k].count;
	}
	return PL_OK;
}

static void run_free(ilprun *s)
{
	ilpctx *c = &s->c;
	int n = s->p->nops, E = s->p->nedges;
	if (s->lp)
		glp_delete_prob(s->lp);
	for (int e = 0; c->ec && e < E; e++) {
		free(c->ec[e].rc);
		free(c->ec[e].cc);
		free(c->ec[e].cost);
	}
	free(c->agg);
	free(c->xm);
	free(c->xoff);
	free(c->act);
	free(c->xv);
	free(c->xa);
	free(c->cv);
	free(c->ci);
	for (int v = 0; v < n; v++) {
		if (c->alive)
			free(c->alive[v]);
		if (c->repl)
			free(c->repl[v]);
		if (c->col)
			free(c->col[v]);
		if (c->uobj)
			free(c->uobj[v]);
	}
	free(c->alive);
	free(c->repl);
	free(c->col);
	free(c->uobj);
	free(c->efree);
	free(c->ec);
	free(c->erep);
	free(c->var);
	free(c->mult);
	free(c->xbase);
	free(s->gfirst);
	free(s->gops);
	free(s->best);
	free(s->lo);
	free(s->hi);
	free(s->dj);
	pl_search_result_free(&s->inc);
}

pl_status pl_search_ilp(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	memset(r, 0, sizeof *r);
	ilprun s = {.c = {.p = p, .cost_edges = o->ilp.cost_edges},
	            .p = p,
	            .o = o,
	            .r = r,
	            .err = err,
	            .t0 = pl_now(),
	            .best_val = HUGE_VAL,
	            .bound = -HUGE_VAL,
	            .lag = -HUGE_VAL,
	            .lpb = -HUGE_VAL,
	            .lagrangian = o->memory_limit > 0 && !(o->hooks && o->hooks->ilp_no_lagrange),
	            .stage = "LP relaxation"};
	pl_status st;
	if (!(st = setup(&s)) && !(st = variables(&s)) && !(st = presolve_phase(&s)) &&
	    !(st = bound_lagrangian(&s)) && !(st = build_phase(&s)) && !(st = bound_lp(&s))) {
		fix(&s);
		if (!(st = relax(&s)) && !(st = branch(&s)))
			st = assemble(&s);
	}
	run_free(&s);
	r->seconds = pl_now() - s.t0;
	if (st)
		pl_search_result_free(r);
	return st;
}
