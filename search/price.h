/* The memory-price search: plans that minimise time + lambda x memory, for
 * prices lambda (seconds per byte) found as a Lagrangian dual is, used by ilp
 * (the dual of its memory row) and by the whole-job search (a point's bound
 * under the limit, and plans whose stages fit). Internal to search/.
 *
 * Each plan at a price is a line t + lambda (m - limit) in lambda; their lower
 * envelope is concave and bounds from below every plan within the limit (the
 * Lagrangian bound). From the plan at price 0 (a), the price grows 4x at a
 * time from a's time per byte until a plan fits (b); then each price is where
 * the lines of the last plan that does not fit (a) and of the first that does
 * (b) cross, and its plan replaces the one on its side, until a plan is no
 * lower than that crossing: a and b are then adjacent vertices of the convex
 * hull of (memory, time), and the crossing is the envelope's peak (Kelley's
 * cutting planes in one dimension; no plan is met twice). */
#ifndef PL_SEARCH_PRICE_H
#define PL_SEARCH_PRICE_H

/* a plan at a price: its raw time and memory, and whether it fits */
typedef struct pl_priced {
	double t, m;
	int fits;
} pl_priced;

/* the plan at `lambda` into *out; `bound` is the best Lagrangian bound so far
 * (-HUGE_VAL while none). Returns 0, PL_PRICE_DONE to end the search (its
 * answer is known, or nothing more can matter), or -1 when no plan came (the
 * search ends with what it has). */
#define PL_PRICE_DONE 1
typedef int (*pl_price_fn)(void *ud, double lambda, double bound, pl_priced *out);
/* the last plan became a (side 0) or b (side 1); may be NULL */
typedef void (*pl_price_keep_fn)(void *ud, int side);

typedef struct pl_price_opts {
	/* the Lagrangian bound against this memory (fits must then be m <= limit);
	 * 0: no bound, fits is the caller's own test */
	double limit;
	int max_plans; /* prices tried at most, the plan at 0 included */
	/* the least memory any plan has (0: unknown): a plan of it that does
	 * not fit ends the growth, since every higher price gives a plan of
	 * that memory and time */
	double least_m;
	const pl_priced *at0; /* the plan at price 0 when known, else asked for */
	pl_price_fn plan;
	pl_price_keep_fn keep;
	void *ud;
} pl_price_opts;

typedef struct pl_price_result {
	double bound;  /* the best bound, seconds (-HUGE_VAL: none) */
	double lambda; /* its price */
	pl_priced a, b;
	int have_a, have_b;
	int optimal; /* a plan within the limit met the bound: the optimum under it */
	int done;    /* the plan function ended the search */
	int failed;  /* the plan function found no plan */
} pl_price_result;

void pl_price_search(const pl_price_opts *o, pl_price_result *r);

#endif
