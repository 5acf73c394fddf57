/* The memory-price search (price.h). */
#include "search/price.h"

#include <math.h>

/* asks for the plan at lam and folds it into the bound; 0 when there is one */
static int ask(const pl_price_opts *o, pl_price_result *r, double lam, pl_priced *p, int *asked)
{
	(*asked)++;
	int st = o->plan(o->ud, lam, r->bound, p);
	if (st < 0) {
		r->failed = 1;
		return -1;
	}
	if (st == PL_PRICE_DONE) {
		r->done = 1;
		return -1;
	}
	double value = p->t + lam * (p->m - o->limit);
	if (o->limit > 0 && value > r->bound) {
		r->bound = value;
		r->lambda = lam;
	}
	/* within the limit and as fast as the bound: no plan within it is faster */
	if (o->limit > 0 && p->fits && p->t <= r->bound * (1 + 1e-12))
		r->optimal = 1;
	return 0;
}

static void take(const pl_price_opts *o, pl_price_result *r, const pl_priced *p)
{
	int side = p->fits;
	if (side) {
		r->b = *p;
		r->have_b = 1;
	} else {
		r->a = *p;
		r->have_a = 1;
	}
	if (o->keep)
		o->keep(o->ud, side);
}

void pl_price_search(const pl_price_opts *o, pl_price_result *r)
{
	*r = (pl_price_result){.bound = -HUGE_VAL};
	pl_priced p;
	int asked = 0;
	if (o->at0) {
		p = *o->at0;
		if (o->limit > 0) {
			r->bound = p.t;
			r->lambda = 0;
			r->optimal = p.fits;
		}
	} else if (ask(o, r, 0, &p, &asked)) {
		return;
	}
	take(o, r, &p);
	if (p.fits || !(p.m > 0))
		return; /* the fastest plan fits */
	/* grow: 4x at a time from a's time per byte until a plan fits */
	double la = 0, lb = 0, lam = fmax(p.t / p.m, 1e-300);
	for (; asked < o->max_plans; lam *= 4) {
		if (ask(o, r, lam, &p, &asked))
			return;
		take(o, r, &p);
		if (r->optimal)
			return;
		if (p.fits) {
			lb = lam;
			break;
		}
		if (o->least_m > 0 && p.m <= o->least_m * (1 + 1e-9))
			return; /* the least memory, and it does not fit */
		la = lam;
	}
	/* walk: where the lines of a and b cross, until nothing is below it */
	while (r->have_b && asked < o->max_plans && r->a.m > r->b.m) {
		lam = (r->b.t - r->a.t) / (r->a.m - r->b.m);
		if (!(lam > la && lam < lb))
			return; /* the lines meet at an end: no better price between */
		if (ask(o, r, lam, &p, &asked))
			return;
		if (r->optimal) {
			take(o, r, &p);
			return;
		}
		double tol = 1e-12 * (fabs(r->a.t) + fabs(r->b.t));
		if (p.t + lam * p.m >= r->a.t + lam * r->a.m - tol)
			return; /* a and b are adjacent on the hull: the bound's peak */
		take(o, r, &p);
		if (p.fits)
			lb = lam;
		else
			la = lam;
	}
}
