/* brute: exhaustive enumeration of every combination of candidates, the
 * oracle the tests hold dp (and later ilp) against. Exact by construction;
 * cost prod(nstrat) * (ops + edges), so only for small graphs: it refuses
 * more than 5e7 combinations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"
#include "graph/alloc.h"
#include "graph/clock.h"

pl_status pl_search_brute(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = pl_now();
	memset(r, 0, sizeof *r);
	double combos = 1;
	for (int op = 0; op < p->nops; op++)
		combos *= p->nstrat[op];
	if (combos > 5e7)
		return pl_err_set(
		    err, PL_EINVAL,
		    "brute: %.3g combinations are too many to enumerate (at most 5e7); "
		    "use --mode dp",
		    combos);
	const double **et = pl_malloc(sizeof *et * ((size_t)p->nedges + 1));
	const pl_nodecost **nc = pl_malloc(sizeof *nc * ((size_t)p->nops + 1));
	int *cur = pl_calloc((size_t)p->nops + 1, sizeof *cur);
	r->choice = pl_calloc((size_t)p->nops + 1, sizeof *r->choice);
	pl_status st = PL_OK;
	if (!et || !nc || !cur || !r->choice) {
		st = pl_err_set(err, PL_ENOMEM, "brute: out of memory");
		goto cleanup;
	}
	for (int e = 0; e < p->nedges; e++)
		if (!(et[e] = pl_problem_edge(p, e))) {
			st = pl_err_set(err, PL_ENOMEM, "brute: out of memory");
			goto cleanup;
		}
	for (int op = 0; op < p->nops; op++)
		if (!(nc[op] = pl_problem_node(p, op))) {
			st = pl_err_set(err, PL_ENOMEM, "brute: out of memory");
			goto cleanup;
		}
	double best = 1e300, best_m = 0, least_m = 1e300;
	int found = 0;
	for (;;) {
		double t = 0, m = 0;
		for (int op = 0; op < p->nops; op++) {
			t += nc[op][cur[op]].compute_s + nc[op][cur[op]].comm_s;
			m += nc[op][cur[op]].mem_bytes;
		}
		for (int e = 0; e < p->nedges; e++) {
			const pl_edge *ed = &p->edges[e];
			t += et[e][(size_t)cur[ed->src_op] * (size_t)p->nstrat[ed->dst_op] +
			           cur[ed->dst_op]];
		}
		if (m < least_m)
			least_m = m;
		if ((o->memory_limit <= 0 || m <= o->memory_limit) && t < best) {
			best = t;
			best_m = m;
			found = 1;
			memcpy(r->choice, cur, sizeof *cur * (size_t)p->nops);
		}
		int k = 0;
		while (k < p->nops && ++cur[k] == p->nstrat[k])
			cur[k++] = 0;
		if (k == p->nops)
			break;
	}
	r->min_mem_bytes = least_m;
	if (!found) {
		st = pl_search_err_no_fit(err, o->memory_limit, least_m);
		goto cleanup;
	}
	(void)best;
	(void)best_m;
	if (pl_search_result_price(p, r)) { /* the step under the problem's job */
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto cleanup;
	}
	r->optimal = 1;
cleanup:
	free(et);
	free(nc);
	free(cur);
	r->seconds = pl_now() - t0;
	if (st)
		pl_search_result_free(r);
	return st;
}
