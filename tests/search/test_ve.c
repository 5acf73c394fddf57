/* search::ve -- variable elimination returns the least sum of its tables and
 * an assignment that attains it, whatever the shapes: tables walked entry by
 * entry (a short last variable) or by rows (a long one), stored in either
 * variable order, eliminated on one thread or split over two (the large
 * ones); and the min-marginals of every variable from a pass back over the
 * eliminations. Brute force over every assignment is the reference; the values are
 * small integers, so every sum is exact and ties are common. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "search/ve.h"
#include "tests/util/randgraph.h"

#define MAXV 5
#define MAXT 16

typedef struct table {
	int nv, vars[3];
	size_t stride[3], size;
	double *t;
} table;

typedef struct model {
	int nvar, dom[MAXV], nt;
	table tab[MAXT];
} model;

static void add_table(rg_rng *r, model *md, int nv, const int *vars)
{
	table *tb = &md->tab[md->nt++];
	tb->nv = nv;
	tb->size = 1;
	/* strides in a random variable order: the last variable is not always
	 * the contiguous one */
	int order[3] = {0, 1, 2};
	for (int k = nv - 1; k > 0; k--) {
		int j = rg_int(r, k + 1), x = order[k];
		order[k] = order[j];
		order[j] = x;
	}
	for (int k = nv - 1; k >= 0; k--) {
		int slot = order[k];
		tb->vars[slot] = vars[slot];
		tb->stride[slot] = tb->size;
		tb->size *= (size_t)md->dom[vars[slot]];
	}
	tb->t = malloc(sizeof *tb->t * tb->size);
	assert_non_null(tb->t);
	for (size_t e = 0; e < tb->size; e++)
		tb->t[e] = rg_int(r, 31);
}

static double sum_at(const model *md, const int *a)
{
	double s = 0;
	for (int i = 0; i < md->nt; i++) {
		const table *tb = &md->tab[i];
		size_t e = 0;
		for (int k = 0; k < tb->nv; k++)
			e += (size_t)a[tb->vars[k]] * tb->stride[k];
		s += tb->t[e];
	}
	return s;
}

/* the least sum over the variables not kept, with the kept ones as in a;
 * *at receives an assignment that attains it */
static double brute(const model *md, const char *keep, const int *a, int *at)
{
	int x[MAXV];
	memcpy(x, a, sizeof x);
	for (int k = 0; k < md->nvar; k++)
		if (!keep[k])
			x[k] = 0;
	double best = 1e300;
	for (;;) {
		double s = sum_at(md, x);
		if (s < best) {
			best = s;
			memcpy(at, x, sizeof x);
		}
		int k = 0;
		for (; k < md->nvar; k++) {
			if (keep[k])
				continue;
			if (++x[k] < md->dom[k])
				break;
			x[k] = 0;
		}
		if (k == md->nvar)
			return best;
	}
}

/* Eliminates every variable not in keep; then at every assignment of the
 * kept ones (all of them: every entry of the tables it made is checked) the
 * remaining tables sum to the least sum over the rest, and backtracking
 * fills in an assignment that attains it. */
static void check(const model *md, const char *keep)
{
	ve v;
	assert_int_equal(ve_init(&v, md->nvar, md->dom), 0);
	for (int i = 0; i < md->nt; i++) {
		const table *tb = &md->tab[i];
		assert_int_equal(ve_add(&v, tb->nv, tb->vars, tb->stride, tb->size, tb->t, NULL),
		                 0);
	}
	for (int k = 0; k < md->nvar; k++)
		v.keep[k] = keep[k];
	assert_int_equal(ve_run(&v), 0);
	int a[MAXV] = {0}, at[MAXV];
	for (;;) {
		double value = ve_value(&v, a), best = brute(md, keep, a, at);
		int b[MAXV];
		memcpy(b, a, sizeof b);
		ve_backtrack(&v, b);
		for (int k = 0; k < md->nvar; k++)
			assert_true(b[k] >= 0 && b[k] < md->dom[k] && (!keep[k] || b[k] == a[k]));
		if (value != best || sum_at(md, b) != best)
			fail_msg("ve %g, its assignment %g, brute %g", value, sum_at(md, b), best);
		int k = 0;
		for (; k < md->nvar; k++) {
			if (!keep[k])
				continue;
			if (++a[k] < md->dom[k])
				break;
			a[k] = 0;
		}
		if (k == md->nvar)
			break;
	}
	ve_free(&v);
}

/* A random model over nvar variables with domains drawn from doms: a table
 * per variable, per pair with probability 0.6, and sometimes one over three;
 * 0 (and nothing made) when its assignments would exceed `most`. */
static int random_model(rg_rng *r, model *md, int nvar, const int *doms, int ndoms, double most)
{
	*md = (model){.nvar = nvar};
	double combos = 1;
	for (int k = 0; k < nvar; k++)
		combos *= md->dom[k] = doms[rg_int(r, ndoms)];
	if (combos > most)
		return 0;
	for (int k = 0; k < nvar; k++)
		add_table(r, md, 1, &k);
	for (int x = 0; x < nvar; x++)
		for (int y = x + 1; y < nvar; y++)
			if (rg_int(r, 10) < 6)
				add_table(r, md, 2, (int[]){x, y});
	if (nvar >= 3 && rg_int(r, 2)) {
		int x = rg_int(r, nvar), y = (x + 1) % nvar, z = (x + 2) % nvar;
		add_table(r, md, 3, (int[]){x, y, z});
	}
	return 1;
}

static void drop(model *md)
{
	for (int i = 0; i < md->nt; i++)
		free(md->tab[i].t);
}

static void elimination_equals_brute(void **state)
{
	(void)state;
	static const int doms[] = {1, 2, 5, 7, 8, 9, 16, 33, 120};
	rg_rng r = {777};
	int graphs = 0;
	for (int i = 0; i < 400 && graphs < 150; i++) {
		model md;
		if (!random_model(&r, &md, 3 + rg_int(&r, 3), doms, 9, 2e6))
			continue;
		char keep[MAXV] = {0}; /* none, or one or two variables */
		for (int n = rg_int(&r, 3); n > 0; n--)
			keep[rg_int(&r, md.nvar)] = 1;
		check(&md, keep);
		drop(&md);
		graphs++;
	}
	assert_true(graphs >= 150);
}

/* Three long variables, every pair a table, two kept: eliminating the third
 * makes a table of 14400 entries over 150 values from three tables, which is
 * split over two threads on a machine with two cores. */
static void large_eliminations_equal_brute(void **state)
{
	(void)state;
	rg_rng r = {4242};
	for (int i = 0; i < 6; i++) {
		model md = {.nvar = 3, .dom = {120, 120, 150}};
		for (int k = 0; k < 3; k++)
			add_table(&r, &md, 1, &k);
		add_table(&r, &md, 2, (int[]){0, 1});
		add_table(&r, &md, 2, (int[]){0, 2});
		add_table(&r, &md, 2, (int[]){1, 2});
		check(&md, (char[MAXV]){1, 1, 0});
		drop(&md);
	}
}

/* With nothing kept, the pass back over the eliminations gives every
 * variable's min-marginals: at x = k, the least sum over the others. */
static void min_marginals_equal_brute(void **state)
{
	(void)state;
	static const int doms[] = {1, 2, 3, 5, 7, 9, 16, 33};
	rg_rng r = {9191};
	for (int i = 0; i < 120; i++) {
		model md;
		if (!random_model(&r, &md, 2 + rg_int(&r, 4), doms, 8, 3e5)) {
			i--;
			continue;
		}
		ve v;
		assert_int_equal(ve_init(&v, md.nvar, md.dom), 0);
		for (int t = 0; t < md.nt; t++) {
			const table *tb = &md.tab[t];
			assert_int_equal(
			    ve_add(&v, tb->nv, tb->vars, tb->stride, tb->size, tb->t, NULL), 0);
		}
		assert_int_equal(ve_run(&v), 0);
		double *mm[MAXV] = {0};
		for (int k = 0; k < md.nvar; k++)
			assert_non_null(mm[k] = malloc(sizeof *mm[k] * (size_t)md.dom[k]));
		assert_int_equal(ve_min_marginals(&v, mm), 0);
		for (int x = 0; x < md.nvar; x++) {
			char keep[MAXV] = {0};
			keep[x] = 1;
			for (int k = 0; k < md.dom[x]; k++) {
				int a[MAXV] = {0}, at[MAXV];
				a[x] = k;
				double best = brute(&md, keep, a, at);
				if (mm[x][k] != best)
					fail_msg(
					    "graph %d: min-marginal of x%d = %d is %g, brute %g", i,
					    x, k, mm[x][k], best);
			}
			free(mm[x]);
		}
		ve_free(&v);
		drop(&md);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(elimination_equals_brute),
	    cmocka_unit_test(large_eliminations_equal_brute),
	    cmocka_unit_test(min_marginals_equal_brute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
