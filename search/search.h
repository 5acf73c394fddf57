/* Searchers: one interface, one result. A searcher picks one candidate
 * strategy per op (pl_problem) minimizing the predicted step time subject to a
 * per-device memory limit. */
#ifndef PL_SEARCH_H
#define PL_SEARCH_H

#include "costmodel/cost.h"

/* Test hooks: NULL in production (pl_search_opts.hooks); tests set them to
 * check one part of a search on its own. */
typedef struct pl_search_hooks {
	int ilp_rec_only;    /* 1: ilp's only incumbent is rec's plan (tests check that the
	                      * bound, fixing and branch and bound stand on their own) */
	int ilp_no_lagrange; /* 1: ilp neither bounds nor fixes by dp under a memory price
	                      * (tests check the LP's bound and fixing on their own) */
	int job_stop_after;  /* the job search acts as if its time limit ran out once this
	                      * many points were planned (0: never) */
	int job_no_memo;     /* 1: the job search keeps no dp plan to ask again (plan_memo,
	                      * search/job.c): tests check that keeping them changes no answer */
} pl_search_hooks;

/* What a searcher is asked: the limits every searcher keeps, then each
 * searcher's own options (dp's, ilp's; the whole-job search's are
 * pl_job_opts, search/job.h), then the test hooks. */
typedef struct pl_search_opts {
	double memory_limit; /* bytes per device; 0 = none */
	double time_limit_s; /* 0 = none */
	int no_repeat;       /* 1: do not compress repeated layers (dp, ilp, rec; tests compare
	                      * both) */
	int threads;         /* for pricing tables and building the job search's problems;
	                      * 0: one per online CPU (at most 16) */
	void (*progress)(void *ud, const char *msg);
	void *ud;
	struct {
		int pareto_cap;     /* points kept per table entry under a memory limit (0:
		                     * default) */
		double mem_price;   /* seconds added per byte of an op's memory (a Lagrangian
		                     * price; ilp looks for its incumbent with it); 0 = none */
		double relax_pairs; /* leave out every edge whose table has more entries than
		                     * this (as if it cost nothing): the result is then a plan and
		                     * a lower bound (bound_s), not the optimum; 0 = none.
		                     * pl_search_job: its first-pass bounds' first rung
		                     * (0: 1e4; then 3x per rung); its plans are exact dps
		                     * all the same */
	} dp;
	struct {
		const char *dump_lp; /* write the instance in CPLEX LP format here */
		int cost_edges;      /* 1: price each edge by one cost column and a row per
		                      * class of the consumer's strategies (big-M) instead of
		                      * the flow (transportation) columns; for comparison:
		                      * docs/benchmarks.md */
	} ilp;
	const pl_search_hooks *hooks; /* NULL in production */
} pl_search_opts;

/* An edge where two propagation fronts met and pay a redistribution. */
typedef struct pl_conflict {
	int edge;
	double seconds;
} pl_conflict;

typedef struct pl_search_result {
	int *choice;            /* per op: index into the problem's candidates; caller frees */
	int64_t *splits;        /* optional (rec, propagate): nops x PL_MAX_LOOPS split counts that
	                         * override choice; caller frees */
	int nconflicts;         /* propagate: edges where two fronts met at a cost */
	pl_conflict *conflicts; /* caller frees (pl_search_result_free) */
	double step_s, mem_bytes;
	double bound_s; /* dp: no plan is faster (= step_s when optimal); ilp: the bound
	                 * before branching (the Lagrangian's or the LP's; 0: none) */
	int optimal;    /* proven optimal under the cost model */
	char why[256];  /* why not optimal, or notes */
	double seconds; /* search time */
	int repeated_runs, repeated_layers; /* layers solved once and reused */
	double min_mem_bytes;               /* when infeasible: least memory any plan needs */
} pl_search_result;

typedef struct pl_searcher {
	const char *name;
	pl_status (*run)(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);
} pl_searcher;

/* Looks a searcher up by mode name; NULL if unknown. */
const pl_searcher *pl_searcher_get(const char *mode);
/* The modes, the one list of their names: "dp, brute, rec, propagate, ilp,
 * auto" (for messages; the buffer is always terminated). */
const char *pl_searcher_names(char *buf, size_t n);

pl_status pl_search_dp(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);
/* dp's min-marginals: mm[o][s] = the least time + mem_price x memory of any
 * plan with op o on candidate s (every op expanded, every edge priced; relax
 * and repeat options are ignored), for every op with mm[o] not NULL;
 * *opt the least of any plan (needs mm[0]). For ilp's Lagrangian fixing. */
pl_status pl_dp_min_marginals(pl_problem *p, const pl_search_opts *o, double **mm, double *opt,
                              pl_err *err);
pl_status pl_search_brute(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);

void pl_search_result_free(pl_search_result *r);
/* The errors every searcher gives about memory, worded once:
 * no plan fits (PL_EINFEASIBLE, with the least memory any plan needs), and a
 * heuristic's plan over the limit (PL_EINFEASIBLE, with what to try instead). */
pl_status pl_search_err_no_fit(pl_err *err, double limit, double least);
pl_status pl_search_err_over_limit(pl_err *err, const char *whose, double need, double limit,
                                   const char *instead);
/* Split counts of op o in a result: r->splits if set, else the chosen candidate. */
const int64_t *pl_search_result_split(const pl_problem *p, const pl_search_result *r, int o);
/* The transient bytes of a one-stage result's plan (pl_job_transient), or
 * -1 out of memory. */
double pl_search_result_transient(const pl_problem *p, const pl_search_result *r);
/* Prices the result's plan (pl_cost_plan) into r->step_s and r->mem_bytes. */
int pl_search_result_price(const pl_problem *p, pl_search_result *r);

pl_status pl_search_rec(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);
pl_status pl_search_auto(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);
/* auto's fall-back alone, after exact dp failed for `reason` (a too
 * entangled graph, the time limit): rec's plan, or a local search's where rec
 * ran out of time, with its gap to a lower bound in r->why ("auto fell back
 * to ..."); o's time limit holds. */
pl_status pl_search_auto_fallback(pl_problem *p, const pl_search_opts *o, const char *reason,
                                  pl_search_result *r, pl_err *err);
pl_status pl_search_ilp(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);
pl_status pl_search_propagate(pl_problem *p, const pl_search_opts *o, pl_search_result *r,
                              pl_err *err);

/* ---- repeated layers (search/repeat.c) ----
 * A run is k >= 2 consecutive segments of identical structure, each joined to
 * the next by exactly one activation tensor. Segment s of run r covers ops
 * [first + s*len, first + (s+1)*len) in topological order; out_pos is the
 * position in a segment of the op producing the tensor that leaves it. */
typedef struct pl_run {
	int first, len, count, out_pos;
} pl_run;

/* Finds runs; returns their number (at most max). */
int pl_find_runs(const pl_graph *g, pl_run *runs, int max);
/* The same, where ops priced differently by the problem's job (recompute)
 * also break a repetition. Searchers use this one. */
int pl_problem_runs(const pl_problem *p, pl_run *runs, int max);
/* Segment boundaries: 0, every clean cut (after op k: cuts[] holds k + 1),
 * nops; returns how many (cuts has room for nops + 2), or -1 out of memory.
 * A clean cut has exactly one activation and no param crossing it. */
int pl_clean_cuts(const pl_graph *g, int *cuts);
/* Keeps of the nc segment boundaries of pl_clean_cuts those between whole
 * repeated layers (a run's blocks: before the first, between two, after the
 * last) and the ends; returns how many. Frameworks place whole layers on a
 * pipeline stage (Megatron's, torchtitan's, DeepSpeed's splits count
 * layers). A model with no repeated layers keeps every cut. */
int pl_layer_cuts(const pl_graph *g, int *cuts, int nc);
/* A framework's fixed pipeline split. items 0 (Megatron-LM: num_layers /
 * pp a stage; NeMo, Megatron-DeepSpeed's "type:transformer"): stage s starts
 * at repeated layer floor(s L / pp) of the L layers of all runs in order,
 * what precedes the first layer (embedding) on stage 0, what follows the
 * last (final norm, head, loss) on the last. items 1 (DeepSpeed's and Aleph
 * Alpha's scaling's partition_uniform over the layer specs: the embedding,
 * each layer, the final norm, the head): n = L + 3 items, stage s starting
 * at item s floor(n / pp) + min(s, n mod pp). cuts[0..K] are segment
 * boundaries that hold every layer's start and the last layer's end (those
 * of pl_layer_cuts or pl_clean_cuts); first[s] receives the segment stage s
 * starts at, first[pp] = K. Returns 0, or -1 when the model has too few
 * layers for pp stages, the last stage would hold the head alone, or a
 * layer's start is not a boundary. */
int pl_even_stages(const pl_graph *g, const int *cuts, int K, int64_t pp, int items, int *first);

#endif
