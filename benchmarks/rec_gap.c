/* rec against dp on random graphs (issue 47, item 3): per case the ratio of
 * rec's predicted step to dp's proven optimum, with and without a memory
 * limit (half-way between the least memory any plan needs and what dp's
 * fastest plan takes), on 2, 3, 4, 6, 8 and 12 devices. Graphs come from the
 * test suite's generators (tests/util/randgraph.h): the chain-with-residuals
 * models of rg_model (one in three of four repeated blocks) and the
 * irregular ones of rg_model_mixed (fan-out,
 * fan-in, concat, mixed ranks, convs). A markdown row per case where rec is
 * more than 1 % off (all rows with -v), then a summary. With --all, ilp
 * and (on at most 2e6 combinations) brute force too, without a memory
 * limit: the cases where dp, ilp and brute do not agree are counted.
 * Usage: planner-bench-rec [-v] [--all] [CASES (default 240)] [SEED (default 47)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "graph/model.h"
#include "search/ve.h"
#include "tests/util/randgraph.h"

/* dp = ilp = brute (brute where it runs, on at most 2e6 combinations) on
 * problem p of case i, dp's result rd: 1 when they disagree (a row said);
 * *brutes counts the brute runs */
static int exact_check(pl_problem *p, const pl_search_result *rd, int i, int *brutes)
{
	pl_err err;
	pl_search_result ri, rb;
	pl_search_opts oi = {.time_limit_s = 60};
	double combos = 1;
	for (int op = 0; op < p->nops; op++)
		combos *= p->nstrat[op];
	int bad = 0;
	if (pl_search_ilp(p, &oi, &ri, &err) == PL_OK) {
		bad |= ri.step_s > rd->step_s * (1 + 1e-6) || ri.step_s < rd->step_s * (1 - 1e-6);
		pl_search_result_free(&ri);
	} else {
		bad = 1;
	}
	if (combos <= 2e6 && pl_search_brute(p, &oi, &rb, &err) == PL_OK) {
		bad |= rb.step_s > rd->step_s * (1 + 1e-6) || rb.step_s < rd->step_s * (1 - 1e-6);
		++*brutes;
		pl_search_result_free(&rb);
	}
	if (bad)
		printf("| %d | dp, ilp and brute disagree |||||||\n", i);
	return bad;
}

/* Both plans of problem p (graph g), op by op, on stderr: dp's (rd) and
 * rec's (rr, unless rec failed) under limit */
static void dump_plans(const pl_graph *g, pl_problem *p, const pl_search_result *rd,
                       const pl_search_result *rr, int rec_failed, double limit)
{
	for (int op = 0; op < g->nops; op++) { /* both plans, op by op */
		fprintf(stderr, "%s limit %g:", g->ops[op].name, limit);
		for (int w = 0; w < 1 + !rec_failed; w++) {
			const int64_t *sp = pl_search_result_split(p, w ? rr : rd, op);
			fprintf(stderr, " %s (", w ? "rec" : "dp");
			for (int l = 0; l < g->ops[op].spec.nloops; l++)
				fprintf(stderr, "%s%lld", l ? "," : "", (long long)sp[l]);
			pl_nodecost nc;
			pl_cost_node(p, op, sp, &nc);
			fprintf(stderr, ") t %.3g m %.4g", nc.compute_s + nc.comm_s, nc.mem_bytes);
		}
		fprintf(stderr, "\n");
	}
}

int main(int argc, char **argv)
{
	int verbose = 0, all = 0, narg = 0;
	const char *pos[2] = {NULL, NULL};
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--all"))
			all = 1;
		else if (narg < 2)
			pos[narg++] = argv[i];
	int cases = pos[0] ? atoi(pos[0]) : 240;
	uint64_t seed = pos[1] ? strtoull(pos[1], NULL, 10) : 47;
	static const int devs[] = {2, 3, 4, 6, 8, 12};
	rg_rng r = {seed};
	int n = 0, nok = 0, worse = 0, over = 0, failed = 0, skipped = 0;
	int exact = 0, brutes = 0, disagree = 0; /* --all */
	double worst = 1, sum = 0, rec_s = 0, dp_s = 0, worst_rec_s = 0;
	printf("| case | graph | ops | devices | limit | dp step s | rec step s | rec/dp |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < cases; i++) {
		int mixed = i % 3 != 0;
		char *json = mixed ? rg_model_mixed(&r, 3 + rg_int(&r, 14))
		                   : rg_model(&r, 2 + rg_int(&r, 7), 1 + 3 * (i % 9 == 0));
		int D = devs[i % 6];
		if (getenv("REC_GAP_DUMP") && atoi(getenv("REC_GAP_DUMP")) == i)
			fprintf(stderr, "%s\n", json); /* the case's model, to look at */
		pl_graph *g;
		pl_err err;
		if (pl_graph_load_json(&g, json, strlen(json), "random.json", &err)) {
			fprintf(stderr, "case %d: %s\n%s\n", i, err.msg, json);
			free(json);
			failed++;
			continue;
		}
		free(json);
		pl_cluster c;
		pl_problem *p;
		pl_job job = {.replicas = PL_REPLICAS_AUTO};
		if (pl_cluster_devices(&c, D, &err) || pl_problem_new_job(&p, g, &c, &job, &err)) {
			fprintf(stderr, "case %d: %s\n", i, err.msg);
			pl_graph_free(g);
			failed++;
			continue;
		}
		for (int lim = 0; lim < 2; lim++) {
			pl_search_opts o = {.time_limit_s = 60};
			pl_search_result rd, rr;
			if (lim) {
				if (pl_search_dp(p, &o, &rd, &err))
					break;
				double least = pl_problem_least_plan_memory(p), fast = rd.mem_bytes;
				pl_search_result_free(&rd);
				if (!(fast > least * 1.01))
					break; /* no limit that binds */
				o.memory_limit = (least + fast) / 2;
			}
			if (pl_search_dp(p, &o, &rd, &err)) {
				skipped++; /* too entangled for dp, or no plan fits */
				continue;
			}
			if (all && !lim) { /* dp = ilp = brute where brute runs */
				int bad = exact_check(p, &rd, i, &brutes);
				exact++;
				disagree += bad;
			}
			pl_status st = pl_search_rec(p, &o, &rr, &err);
			double ratio = st ? 1e9 : rr.step_s / rd.step_s;
			n++;
			dp_s += rd.seconds;
			if (!st) {
				rec_s += rr.seconds;
				if (rr.seconds > worst_rec_s)
					worst_rec_s = rr.seconds;
			}
			if (!st) {
				sum += ratio;
				nok++;
			}
			worse += ratio > 1.01;
			over += ratio > 1.15;
			if (ratio > worst)
				worst = ratio;
			if (verbose || ratio > 1.01) {
				char lb[32] = "none";
				if (lim)
					snprintf(lb, sizeof lb, "%.4g B", o.memory_limit);
				if (st)
					printf("| %d | %s | %d | %d | %s | %.5g | (%s) | - |\n", i,
					       mixed ? "mixed" : "chain", g->nops, D, lb, rd.step_s,
					       err.msg);
				else
					printf("| %d | %s | %d | %d | %s | %.5g | %.5g | %.3f |\n",
					       i, mixed ? "mixed" : "chain", g->nops, D, lb,
					       rd.step_s, rr.step_s, ratio);
			}
			if (getenv("REC_GAP_DUMP") && atoi(getenv("REC_GAP_DUMP")) == i)
				dump_plans(g, p, &rd, &rr, st != PL_OK, o.memory_limit);
			if (!st)
				pl_search_result_free(&rr);
			pl_search_result_free(&rd);
		}
		pl_problem_free(p);
		pl_graph_free(g);
	}
	printf("\n%d cases (%d graphs, seed %llu): rec > 1.01 x dp in %d, > 1.15 x dp in %d "
	       "(refusals count as over: %d); worst %.3f, mean %.4f; rec %.1f ms in all "
	       "(slowest %.2f ms), dp %.1f ms; %d dp could not plan, %d graphs failed to load\n",
	       n, cases, (unsigned long long)seed, worse, over, n - nok, worst, nok ? sum / nok : 0,
	       rec_s * 1e3, worst_rec_s * 1e3, dp_s * 1e3, skipped, failed);
	if (all)
		printf("dp = ilp = brute (where brute ran) on %d of %d graphs without a limit "
		       "(brute ran on %d)\n",
		       exact - disagree, exact, brutes);
	return 0;
}
