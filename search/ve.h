/* Variable elimination over strategy choices (internal to search/).
 * Variables are ops (domain: their candidates); factors are tables over one
 * or more variables. Scalar mode minimizes time; Pareto mode keeps, per table
 * entry, the (time, memory) points not dominated by another, under a limit. */
#ifndef PL_VE_H
#define PL_VE_H

#include <stddef.h>
#include <stdint.h>

#define VE_MAXK 6  /* variables in one created table */
#define VE_MAXF 32 /* tables combined in one elimination */

typedef struct ve_point {
	double t, m;
	int64_t trace; /* offset into the trace pool */
} ve_point;

typedef struct ve_factor {
	int nv;
	int vars[VE_MAXK];
	size_t stride[VE_MAXK];
	size_t size;
	const double *t, *m; /* per entry (input tables, scalar-mode results) */
	double *own_t;
	int32_t *arg;    /* scalar mode: best value of the eliminated variable */
	int64_t *pstart; /* Pareto mode: points of entry e are pts[pstart[e] .. +pcount[e]] */
	int32_t *pcount;
	ve_point *pts;
	size_t npts;
	int32_t *trace; /* per point: value of the eliminated variable, then a point per source */
	size_t ntrace;
	int nsrc, src[VE_MAXF];
	int elim; /* variable eliminated to make it; -1 for an input table */
	int alive;
	int borrowed; /* Pareto arrays belong to another ve */
	double minm;  /* least memory of any entry: a lower bound for pruning */
	int chosen;   /* Pareto backtracking: the point taken */
} ve_factor;

typedef struct ve {
	int nvar;
	const int *dom;
	ve_factor *f;
	int nf, capf;
	int **vf; /* per variable: factors that mention it */
	int *nvf, *capvf;
	char *active; /* variable takes part */
	char *keep;   /* variable is not eliminated */
	char *done;
	int *order, norder;
	int *var_factor;
	int pareto, cap, truncated;
	double limit;      /* memory limit in Pareto mode, 0 = none */
	double eff_limit;  /* limit less what the other live tables need at least */
	double alive_minm; /* sum of minm over live tables */
	double deadline;   /* monotonic seconds; 0 = none */
	size_t max_entries;
	/* the most entries all tables built may hold together (they stay for
	 * the backtrack), and how many they hold: memory in proportion to what
	 * a plan needs, not to the graph's width */
	size_t max_total, built;
	int dry; /* scopes only, no tables (ve_run's first pass) */
	char fail[256];
} ve;

int ve_init(ve *v, int nvar, const int *dom);
void ve_free(ve *v);
/* Adds an input table (borrowed; must outlive v). t, m per entry; m may be NULL. */
int ve_add(ve *v, int nv, const int *vars, const size_t *stride, size_t size, const double *t,
           const double *m);
/* Adds a table of Pareto sets owned by another ve (must outlive v). */
int ve_add_pareto(ve *v, int nv, const int *vars, const size_t *stride, size_t size,
                  const ve_factor *from);
/* After ve_run with kept variables: combines the remaining tables into one
 * over the kept variables N (in that order). Returns its index or -1. */
int ve_combine_rest(ve *v, const int *N, int nN);
/* Pareto mode: given that point `point` of table f was taken at the current
 * assignment, fills the variables eliminated into f (and before). */
void ve_pareto_backtrack(ve *v, int f, int point, int *a);

/* Eliminates every active variable that is not kept. 0 on success; -1 on
 * failure with v->fail set (table too large, time limit, out of memory). */
int ve_run(ve *v);
/* Scalar mode: sum of the remaining tables at assignment a (kept variables). */
double ve_value(const ve *v, const int *a);
/* Scalar mode: fills the eliminated variables of a, given the kept ones. */
void ve_backtrack(const ve *v, int *a);
/* Pareto mode with no kept variables: picks the least-time point within the
 * limit and fills a. Returns 0, or -1 if no point fits. */
int ve_pareto_solve(ve *v, int *a, double *t, double *m);

/* Scalar mode, after ve_run with nothing kept: the min-marginals, mm[x][k] =
 * the least sum of all tables over the assignments with x = k, for every
 * active x with mm[x] not NULL (dom[x] entries each). One pass back over the
 * eliminations, with per made table the least sum of everything outside it
 * (its "outside" table): about the forward pass's work. 0, or -1 (out of
 * memory, or the ve is not in that state). */
int ve_min_marginals(const ve *v, double **mm);

#endif
