/* search::job, costmodel::pipeline -- whole-job plans. Stage boundaries
 * equal the best of all splits; the outer search with one stage equals the
 * brute-force optimum over every micro-batch count, ZeRO level, recompute
 * choice and per-op plan, with or without first-pass bounds from relaxed
 * dps; the pipeline price with one stage is the per-op
 * price; memory that only pipeline stages or ZeRO relieve gets them, and a
 * model that fits gets neither; micro-batch graphs divide the batch. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "costmodel/pipeline.h"
#include "graph/model.h"
#include "search/job.h"
#include "tests/util/randgraph.h"

/* x[B, H] through L blocks of MatMul(H x H) + Relu */
static char *mlp_json(int64_t batch, int64_t hidden, int layers)
{
	size_t cap = 8192;
	char *s = malloc(cap);
	size_t n = 0;
	n += (size_t)snprintf(s + n, cap - n,
	                      "{\"format\": \"planner.model/1\", \"name\": \"m\", \"tensors\": "
	                      "{\"x\": {\"shape\": [%lld, %lld], \"role\": \"input\"}",
	                      (long long)batch, (long long)hidden);
	for (int l = 0; l < layers; l++)
		n += (size_t)snprintf(s + n, cap - n,
		                      ", \"w%d\": {\"shape\": [%lld, %lld], \"role\": \"param\"}",
		                      l, (long long)hidden, (long long)hidden);
	n += (size_t)snprintf(s + n, cap - n, "}, \"ops\": [");
	for (int l = 0; l < layers; l++) {
		char in[16];
		snprintf(in, sizeof in, l ? "a%d" : "x", l - 1);
		n += (size_t)snprintf(s + n, cap - n,
		                      "%s{\"name\": \"mm%d\", \"type\": \"MatMul\", \"inputs\": "
		                      "[\"%s\", \"w%d\"], \"outputs\": [\"h%d\"]}, "
		                      "{\"name\": \"act%d\", \"type\": \"Relu\", \"inputs\": "
		                      "[\"h%d\"], \"outputs\": [\"a%d\"]}",
		                      l ? ", " : "", l, in, l, l, l, l, l);
	}
	snprintf(s + n, cap - n, "]}");
	return s;
}

/* |a - b| <= tol, with both numbers in the message when not */
static void near(double a, double b, double tol)
{
	if (!(fabs(a - b) <= tol))
		fail_msg("%.17g != %.17g (tolerance %.3g)", a, b, tol);
}

static pl_graph *load(const char *json)
{
	pl_graph *g;
	pl_err err;
	if (pl_graph_load_json(&g, json, strlen(json), "m.json", &err))
		fail_msg("%s", err.msg);
	return g;
}

/* ---- stage boundaries against every split ---- */

static double brute_split(const pl_segcost *seg, int K, int64_t pp, int64_t m, double lim,
                          int64_t k, int64_t dpn, int *cut, int s, int from, double best)
{
	if (s == pp - 1) {
		cut[s] = from;
		cut[pp] = K;
		double sum = 0, mx = 0;
		for (int q = 0; q < pp; q++) {
			double t = 0, st = 0, act = 0;
			for (int j = cut[q]; j < cut[q + 1]; j++) {
				t += seg[j].t;
				st += seg[j].state;
				act += seg[j].act;
			}
			if (q > 0)
				t += seg[cut[q]].p2p[pl_stage_link(k, dpn, q)];
			int64_t inflight = pp - q < m ? pp - q : m;
			if (lim > 0 && st + (double)inflight * act > lim)
				return best;
			sum += t;
			mx = t > mx ? t : mx;
		}
		double v = sum + (double)(m - 1) * mx;
		return v < best ? v : best;
	}
	cut[s] = from;
	for (int next = from + 1; next <= K - (int)(pp - s - 1); next++) {
		cut[s + 1] = next;
		best = brute_split(seg, K, pp, m, lim, k, dpn, cut, s + 1, next, best);
	}
	return best;
}

static void partition_equals_every_split(void **state)
{
	(void)state;
	rg_rng r = {777};
	int checked = 0, infeasible = 0;
	for (int it = 0; it < 400; it++) {
		int K = 1 + rg_int(&r, 8);
		int64_t pp = 1 + rg_int(&r, 4), m = 1 + rg_int(&r, 6);
		int64_t k = 1 << rg_int(&r, 4), dpn = 8; /* stages of 1..8 devices */
		pl_segcost seg[8];
		double total_mem = 0;
		for (int j = 0; j < K; j++) {
			seg[j].t = 1 + rg_int(&r, 100);
			seg[j].state = rg_int(&r, 50);
			seg[j].act = rg_int(&r, 20);
			seg[j].p2p[0] = rg_int(&r, 5);
			seg[j].p2p[1] = seg[j].p2p[0] + rg_int(&r, 10);
			total_mem += seg[j].state + (double)m * seg[j].act;
		}
		double lim = rg_int(&r, 3) ? total_mem * (0.2 + 0.6 * rg_int(&r, 100) / 100.0) : 0;
		int first[9], cut[9], proven;
		double got = pl_pipeline_partition(seg, K, pp, m, lim, k, dpn, first, &proven);
		double want = K < pp ? INFINITY
		                     : brute_split(seg, K, pp, m, lim, k, dpn, cut, 0, 0, INFINITY);
		if (want == INFINITY) {
			assert_true(got < 0);
			infeasible++;
			continue;
		}
		assert_true(proven);
		near(got, want, 1e-9 * want);
		/* the split it hands back costs what it says */
		assert_int_equal(first[0], 0);
		assert_int_equal(first[pp], K);
		double sum = 0, mx = 0;
		for (int s = 0; s < pp; s++) {
			assert_true(first[s + 1] > first[s]);
			double t = 0;
			for (int j = first[s]; j < first[s + 1]; j++)
				t += seg[j].t;
			if (s > 0)
				t += seg[first[s]].p2p[pl_stage_link(k, dpn, s)];
			sum += t;
			mx = t > mx ? t : mx;
		}
		near(sum + (double)(m - 1) * mx, got, 1e-9 * got);
		checked++;
	}
	assert_true(checked > 150);
	assert_true(infeasible > 10);
}

/* ---- one stage: the outer search against brute force ---- */

static pl_problem *job_problem(pl_graph *gm, const pl_cluster *c, int64_t m, int zero, int rc,
                               uint8_t *flags)
{
	pl_job job = {.micro_batches = m, .stages = 1, .zero = zero, .recompute = NULL};
	if (rc) {
		if (!pl_job_recompute_flags(gm, rc, flags))
			return NULL; /* nothing this mode recomputes: no such point */
		job.recompute = flags;
	}
	pl_problem *p;
	pl_err err;
	if (pl_problem_new_job(&p, gm, c, &job, &err))
		fail_msg("%s", err.msg);
	return p;
}

/* The least step over every point and every per-op plan, each priced whole
 * (pl_job_price: its tensors and its transient bytes, which are a maximum
 * over the backward, not a sum a searcher's tables hold), under each of
 * nlim limits at once (lims[k], 0: none), one enumeration: best[k] over
 * every plan, plain[k] over those without ZeRO and recompute (either may be
 * NULL); and the least memory any plan needs */
static void brute_job_limits(const pl_graph *g, const pl_cluster *c, int nlim, const double *lims,
                             double *best, double *plain, double *least)
{
	for (int k = 0; k < nlim; k++) {
		if (best)
			best[k] = INFINITY;
		if (plain)
			plain[k] = INFINITY;
	}
	*least = INFINITY;
	for (int64_t m = 1; m <= pl_graph_batch(g); m *= 2) {
		pl_graph *gm;
		pl_err err;
		assert_int_equal(pl_graph_microbatch(g, m, &gm, &err), PL_OK);
		uint8_t flags[64];
		for (int rc = 0; rc < PL_RECOMPUTE_MODES; rc++)
			for (int z = 0; z < PL_ZERO_LEVELS; z++) {
				pl_problem *p = job_problem(gm, c, m, z, rc, flags);
				if (!p)
					continue;
				int at[64] = {0}, stage[64] = {0};
				int64_t *sp[64];
				for (;;) {
					for (int op = 0; op < p->nops; op++)
						sp[op] = p->strat[op] +
						         (size_t)at[op] *
						             (size_t)gm->ops[op].spec.nloops;
					pl_jobcost jc;
					assert_int_equal(pl_job_price(p, sp, stage, 8, NULL, &jc),
					                 0);
					near(jc.bubble_s, 0, 1e-12);
					for (int k = 0; k < nlim; k++) {
						if (lims[k] != 0 && jc.mem_bytes > lims[k])
							continue;
						if (best && jc.step_s < best[k])
							best[k] = jc.step_s;
						if (plain && rc == 0 && z == 0 &&
						    jc.step_s < plain[k])
							plain[k] = jc.step_s;
					}
					*least = fmin(*least, jc.mem_bytes);
					int op = 0;
					while (op < p->nops && ++at[op] == p->nstrat[op])
						at[op++] = 0;
					if (op == p->nops)
						break;
				}
				pl_problem_free(p);
			}
		pl_graph_free(gm);
	}
}

/* The one-stage models held to brute force: 3-layer MLPs of these hidden
 * sizes and batches, on 2 devices */
#define BRUTE_MODELS 4
static pl_graph *brute_model(int k, pl_cluster *c)
{
	static const int64_t hidden[BRUTE_MODELS] = {64, 4096, 1024, 4096};
	static const int64_t batch[BRUTE_MODELS] = {8, 4, 16, 65536};
	char *json = mlp_json(batch[k], hidden[k], 3);
	pl_graph *g = load(json);
	free(json);
	pl_err err;
	assert_int_equal(pl_cluster_devices(c, 2, &err), PL_OK);
	return g;
}

static void one_stage_search_equals_brute_force(void **state)
{
	(void)state;
	int bound = 0, differs = 0, proven = 0, runs = 0, off = 0;
	for (int c0 = 0; c0 < BRUTE_MODELS; c0++) {
		pl_cluster c;
		pl_err err;
		pl_graph *g = brute_model(c0, &c);
		double none = 0, least, free_best;
		brute_job_limits(g, &c, 1, &none, &free_best, NULL, &least);
		/* limits from "nothing fits" to "the fastest fits", every plan
		 * enumerated once for all of them */
		double lims[6], alls[6], plains[6], unused;
		for (int k = 0; k <= 5; k++)
			lims[k] = k == 5 ? 0 : least * (0.9 + 0.25 * k);
		brute_job_limits(g, &c, 6, lims, alls, plains, &unused);
		for (int k = 0; k <= 5; k++) {
			double lim = lims[k], all = alls[k], plain = plains[k];
			for (int fastest = 0; fastest < 2; fastest++)
				for (int relax = 0; relax < 3; relax++) {
					/* the search's rule: the best plan, unless (without
					 * fastest) one without the memory measures is within
					 * PL_JOB_SIMPLER of it */
					double want =
					    !fastest && plain <= all * (1 + PL_JOB_SIMPLER)
					        ? plain
					        : fmin(plain, all);
					/* first-pass bounds from relaxed dps (every edge, or the
					 * larger ones, left out) change the work, not the answer */
					static const double relax_pairs[] = {0, 1, 6};
					pl_search_opts o = {.memory_limit = lim,
					                    .dp.relax_pairs = relax_pairs[relax]};
					pl_job_opts jo = PL_JOB_OPTS_AUTO;
					jo.stages = 1;
					jo.fastest = fastest;
					pl_job_plan jp;
					pl_status st = pl_search_job(g, &c, &o, &jo, &jp, &err);
					if (want == INFINITY) {
						assert_int_equal(st, PL_EINFEASIBLE);
						continue;
					}
					if (st)
						fail_msg("%s", err.msg);
					/* the answer, in a plan that fits; proven always without
					 * a limit, and under one where the relaxation (the
					 * tensors' sum under the limit less the least transient
					 * bytes any plan needs) reaches it */
					assert_true(lim == 0 ||
					            jp.cost.mem_bytes <= lim * (1 + 1e-12));
					/* the answer where it is proven; an unproven one (a
					 * point's plan under the limit retried beside its
					 * transient bytes) is never faster than it */
					if (jp.optimal)
						near(jp.cost.step_s, want, 1e-9 * want);
					else if (jp.cost.step_s < want * (1 - 1e-9))
						fail_msg("unproven %.17g below the optimum %.17g",
						         jp.cost.step_s, want);
					off += !jp.optimal && jp.cost.step_s > want * (1 + 1e-9);
					assert_true(jp.optimal || lim > 0);
					proven += jp.optimal && lim > 0;
					runs += lim > 0;
					bound += want > free_best * (1 + 1e-9) && !relax;
					differs += !relax && fastest && want < plain * (1 - 1e-9) &&
					           plain <= all * (1 + PL_JOB_SIMPLER);
					pl_job_plan_free(&jp);
				}
		}
		pl_graph_free(g);
	}
	print_message("%d of %d answers under a limit proven; %d unproven ones above the "
	              "optimum\n",
	              proven, runs, off);
	assert_true(bound >= 2);         /* some limits did bind */
	assert_true(differs >= 1);       /* and fastest changed some answer */
	assert_true(2 * proven >= runs); /* most answers under a limit are proven */
}

/* The search's rule (without fastest) from brute-force optima: the best
 * plan, unless one without the memory measures is within PL_JOB_SIMPLER */
static double rule(double plain, double all)
{
	return plain <= all * (1 + PL_JOB_SIMPLER) ? plain : fmin(plain, all);
}

/* With a headroom below the limit (pl_job_opts.headroom), the answer is the
 * rule's answer within the headroom where it is within PL_JOB_HEADROOM of
 * the rule's answer within the limit, else the latter: each side from
 * brute force over every point and per-op plan of one stage. (The plan
 * within the limit needs more than the headroom whenever the two differ:
 * one within it as fast would be the answer within the headroom too.) */
static void headroom_keeps_room_within_its_margin(void **state)
{
	(void)state;
	static const double room[] = {0.7, 0.85, 0.95};
	int moved = 0, kept_faster = 0, runs = 0, missed = 0, mid_moved = 0;
	for (int c0 = 0; c0 < BRUTE_MODELS; c0++) {
		pl_cluster c;
		pl_err err;
		pl_graph *g = brute_model(c0, &c);
		/* limits about the memory of the fastest plan (the search's, without
		 * a limit), and each one's headrooms: every plan enumerated once for
		 * all of them */
		pl_search_opts free_o = {0};
		pl_job_opts free_jo = PL_JOB_OPTS_AUTO;
		free_jo.stages = 1;
		free_jo.fastest = 1;
		pl_job_plan fp;
		if (pl_search_job(g, &c, &free_o, &free_jo, &fp, &err))
			fail_msg("%s", err.msg);
		double fast_mem = fp.cost.mem_bytes, unused;
		pl_job_plan_free(&fp);
		double lims[16], alls[16], plains[16];
		int n = 0;
		for (int k = 0; k < 4; k++) {
			double lim = fast_mem * (0.8 + 0.15 * k);
			lims[n++] = lim;
			for (int f = 0; f < 3; f++)
				lims[n++] = lim * room[f];
		}
		brute_job_limits(g, &c, n, lims, alls, plains, &unused);
		for (int k = 0; k < n; k += 4) {
			double a = rule(plains[k], alls[k]);
			for (int f = 1; f <= 3; f++) {
				double b = rule(plains[k + f], alls[k + f]);
				double want = b <= a * (1 + PL_JOB_HEADROOM) ? b : a;
				pl_search_opts o = {.memory_limit = lims[k]};
				pl_job_opts jo = PL_JOB_OPTS_AUTO;
				jo.stages = 1;
				jo.headroom = lims[k + f];
				pl_job_plan jp;
				pl_status st = pl_search_job(g, &c, &o, &jo, &jp, &err);
				if (a == INFINITY) { /* no plan within the limit */
					assert_int_equal(st, PL_EINFEASIBLE);
					continue;
				}
				if (st)
					fail_msg("%s", err.msg);
				runs++;
				assert_true(jp.cost.mem_bytes <= lims[k] * (1 + 1e-12));
				if (jp.headroom_over_s > 0) {
					/* a plan with room, within the margin of the limit's
					 * optimum, said so; where proven, the rule's answer
					 * within the headroom */
					moved++;
					near(jp.headroom_over_s, a, 1e-9 * a);
					assert_true(jp.cost.mem_bytes <= lims[k + f] * (1 + 1e-12));
					assert_true(jp.cost.step_s <= a * (1 + PL_JOB_HEADROOM) * (1 + 1e-9));
					assert_true(jp.cost.step_s >= b * (1 - 1e-9));
					if (jp.optimal)
						near(jp.cost.step_s, want, 1e-9 * want);
				} else {
					/* the limit's answer (where proven): a plan with room
					 * that only a Pareto dp finds is not looked for */
					if (jp.optimal)
						near(jp.cost.step_s, a, 1e-9 * a);
					missed += want > a * (1 + 1e-9);
				}
				kept_faster += b < INFINITY && b > a * (1 + PL_JOB_HEADROOM);
				pl_job_plan_free(&jp);
				/* fastest's searches have no headroom: the limit's answer */
				jo.headroom = 0;
				jo.fastest = 1;
				if (pl_search_job(g, &c, &o, &jo, &jp, &err))
					fail_msg("%s", err.msg);
				if (jp.optimal)
					near(jp.cost.step_s, fmin(plains[k], alls[k]),
					     1e-9 * jp.cost.step_s);
				assert_true(jp.headroom_over_s == 0);
				pl_job_plan_free(&jp);
			}
			/* two levels: the first's headroom, else the second's (the
			 * median band's), each on the same terms */
			static const int pair[3][2] = {{1, 2}, {1, 3}, {2, 3}};
			for (int q = 0; q < 3; q++) {
				int f1 = pair[q][0], f2 = pair[q][1];
				double b1 = rule(plains[k + f1], alls[k + f1]);
				double b2 = rule(plains[k + f2], alls[k + f2]);
				double want = b1 <= a * (1 + PL_JOB_HEADROOM)   ? b1
				              : b2 <= a * (1 + PL_JOB_HEADROOM) ? b2
				                                                : a;
				pl_search_opts o = {.memory_limit = lims[k]};
				pl_job_opts jo = PL_JOB_OPTS_AUTO;
				jo.stages = 1;
				jo.headroom = lims[k + f1];
				jo.headroom_mid = lims[k + f2];
				pl_job_plan jp;
				pl_status st = pl_search_job(g, &c, &o, &jo, &jp, &err);
				if (a == INFINITY) {
					assert_int_equal(st, PL_EINFEASIBLE);
					continue;
				}
				if (st)
					fail_msg("%s", err.msg);
				assert_true(jp.cost.mem_bytes <= lims[k] * (1 + 1e-12));
				if (jp.headroom_over_s > 0) {
					near(jp.headroom_over_s, a, 1e-9 * a);
					double lim = lims[k + (jp.headroom_mid ? f2 : f1)];
					assert_true(jp.cost.mem_bytes <= lim * (1 + 1e-12));
					assert_true(jp.cost.step_s <= a * (1 + PL_JOB_HEADROOM) * (1 + 1e-9));
					assert_true(jp.cost.step_s >= (jp.headroom_mid ? b2 : b1) * (1 - 1e-9));
					mid_moved += jp.headroom_mid;
					if (jp.optimal)
						near(jp.cost.step_s, want, 1e-9 * want);
				} else {
					assert_false(jp.headroom_mid);
					if (jp.optimal)
						near(jp.cost.step_s, a, 1e-9 * a);
				}
				pl_job_plan_free(&jp);
			}
		}
		pl_graph_free(g);
	}
	print_message("%d answers moved to a plan with room for the second level\n", mid_moved);
	assert_true(mid_moved >= 1); /* the second level did bind */
	print_message("%d of %d answers moved to a plan with room; %d kept the faster one; %d "
	              "plans with room within the margin not looked for (a Pareto dp's)\n",
	              moved, runs, kept_faster, missed);
	assert_true(moved >= 2);       /* the headroom did bind */
	assert_true(kept_faster >= 1); /* and its margin kept the faster plan somewhere */
}

/* The first pass climbs relaxed dps (each keeping larger tables) before a
 * point's exact dp; their bounds decide only which points are planned, so
 * with one stage, where the search is exact, the answer is the one without
 * them. The example GPT on 8 devices has tables of many sizes (its
 * attention MatMuls have dozens of candidates), so rungs are climbed. */
/* examples/gpt-small.json on the cluster preset named */
static pl_graph *example_gpt(const char *preset, pl_cluster *c)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/examples/gpt-small.json", getenv("PL_SOURCE_DIR"));
	pl_graph *g;
	pl_err err;
	if (pl_graph_load_file(&g, path, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(pl_cluster_preset(c, preset, &err), PL_OK);
	return g;
}

static void relaxed_bounds_change_the_work_not_the_answer(void **state)
{
	(void)state;
	pl_cluster c;
	pl_err err;
	pl_graph *g = example_gpt("h100x8", &c);
	pl_job_opts jo = PL_JOB_OPTS_AUTO;
	jo.stages = 1;
	/* the relaxation is what is tested, not the candidates: the cuts of all
	 * devices only (replicated cuts make each of these 48 searches 7x
	 * slower; test_free and test_dp cover that space) */
	jo.replicas = PL_REPLICAS_NONE;
	pl_search_opts o = {.dp.relax_pairs = 1e300}; /* no rung: exact dps only */
	pl_job_plan free_plan, want, jr;
	assert_int_equal(pl_search_job(g, &c, &o, &jo, &free_plan, &err), PL_OK);
	int relaxed = 0, limits = 0, compared = 0;
	for (int k = 0; k <= 11; k++) {
		jo.fastest = k >= 5; /* without the preference for simpler plans too */
		/* and, without a limit (every plan fits), pipeline stages searched
		 * too: the first point planned is not the best one */
		jo.stages = k >= 10 ? PL_AUTO : 1;
		double lim =
		    k % 5 == 4 || k >= 10 ? 0 : free_plan.cost.mem_bytes * (0.2 + 0.25 * (k % 5));
		o = (pl_search_opts){.memory_limit = lim, .dp.relax_pairs = 1e300};
		pl_status sw = pl_search_job(g, &c, &o, &jo, &want, &err);
		limits += sw == PL_OK && lim > 0 && want.cost.step_s > free_plan.cost.step_s;
		static const double relax_pairs[] = {1, 30, 1000};
		for (int i = 0; i < 3; i++) {
			o.dp.relax_pairs = relax_pairs[i];
			pl_status st = pl_search_job(g, &c, &o, &jo, &jr, &err);
			assert_int_equal(st, sw);
			if (st)
				continue;
			assert_true(lim == 0 || jr.cost.mem_bytes <= lim);
			assert_int_equal(want.relaxed, 0);
			relaxed += jr.relaxed;
			/* compared where the answer is proven, or without a limit, where
			 * the first pass alone decides (with pipeline stages a point's
			 * plan is its exact dp's, split; a point is ruled out only by a
			 * bound of that dp) */
			if (want.optimal || lim == 0) {
				near(jr.cost.step_s, want.cost.step_s, 1e-9 * want.cost.step_s);
				assert_int_equal(jr.optimal, want.optimal);
				compared++;
			}
			pl_job_plan_free(&jr);
		}
		if (sw == PL_OK)
			pl_job_plan_free(&want);
	}
	pl_job_plan_free(&free_plan);
	pl_graph_free(g);
	print_message("%d relaxed dps; %d answers compared, %d under a binding limit\n", relaxed,
	              compared, limits);
	assert_true(relaxed >= 20);
	/* the 12 answers without a limit, and those proven under one (fewer
	 * since a plan's transient bytes count: the relaxation that proves an
	 * answer leaves them out) */
	assert_true(compared >= 18);
	assert_true(limits >= 2);
}

/* The plans the search keeps per point and memory price (plan_memo: asked
 * again by the headroom passes, the price walks and the second walk of a
 * pipelined point) change the work, not the answer: the example GPT on two
 * H100 nodes, every dimension searched, under limits from none down to a
 * fifth of the fastest plan's memory, with and without a headroom (one
 * level and two), gives bit for bit the same plan -- status, step, memory,
 * stages, interleaving, per-op choices, counts -- with and without the memo
 * (pl_search_hooks.job_no_memo). */
static void kept_plans_change_the_work_not_the_answer(void **state)
{
	(void)state;
	pl_cluster c;
	pl_err err;
	pl_graph *g = example_gpt("h100x8:2", &c);
	pl_job_opts jo = PL_JOB_OPTS_AUTO;
	jo.replicas = PL_REPLICAS_NONE; /* the memo is what is tested, not the candidates */
	pl_search_opts o = {0};
	pl_job_plan free_plan;
	assert_int_equal(pl_search_job(g, &c, &o, &jo, &free_plan, &err), PL_OK);
	double fast_mem = free_plan.cost.mem_bytes;
	pl_job_plan_free(&free_plan);
	const pl_search_hooks off = {.job_no_memo = 1};
	int compared = 0, planned = 0, headroom_taken = 0;
	for (int k = 0; k < 5; k++) {
		double lim = k == 0 ? 0 : fast_mem * (1.2 - 0.25 * k);
		for (int h = 0; h < 3; h++) {
			jo.headroom = lim > 0 && h > 0 ? lim * 0.8 : 0;
			jo.headroom_mid = lim > 0 && h == 2 ? lim * 0.9 : 0;
			pl_job_plan a, b;
			pl_err ea = {{0}}, eb = {{0}};
			o = (pl_search_opts){.memory_limit = lim};
			pl_status sa = pl_search_job(g, &c, &o, &jo, &a, &ea);
			o.hooks = &off;
			pl_status sb = pl_search_job(g, &c, &o, &jo, &b, &eb);
			assert_int_equal(sa, sb);
			compared++;
			if (sa) {
				assert_string_equal(ea.msg, eb.msg);
				continue;
			}
			planned++;
			headroom_taken += a.headroom_over_s > 0;
			assert_true(a.cost.step_s == b.cost.step_s);
			assert_true(a.cost.mem_bytes == b.cost.mem_bytes);
			assert_true(a.headroom_over_s == b.headroom_over_s);
			assert_int_equal(a.headroom_mid, b.headroom_mid);
			assert_int_equal(a.points, b.points);
			assert_int_equal(a.pruned, b.pruned);
			assert_int_equal(a.relaxed, b.relaxed);
			assert_int_equal(a.optimal, b.optimal);
			assert_int_equal(a.p->job.stages, b.p->job.stages);
			assert_int_equal(a.p->job.micro_batches, b.p->job.micro_batches);
			assert_int_equal(a.p->job.zero, b.p->job.zero);
			assert_int_equal(a.p->job.virtual_stages, b.p->job.virtual_stages);
			assert_int_equal(a.p->nops, b.p->nops);
			for (int op = 0; op < a.p->nops; op++) {
				assert_memory_equal(pl_search_result_split(a.p, &a.r, op),
				                    pl_search_result_split(b.p, &b.r, op),
				                    sizeof(int64_t) * (size_t)g->ops[op].spec.nloops);
				assert_int_equal(a.stage[op], b.stage[op]);
			}
			pl_job_plan_free(&a);
			pl_job_plan_free(&b);
		}
	}
	pl_graph_free(g);
	print_message("%d searches compared, %d with a plan, %d kept one with room\n", compared,
	              planned, headroom_taken);
	assert_true(planned >= 8);
	assert_true(headroom_taken >= 1); /* the headroom's pass ran and answered */
}

/* ---- the node bound against priced plans ---- */

/* A plan's schedules priced together (pl_job_price_schedules, 1..vmax chunks
 * a device) against each priced alone (pl_job_price): under a limit at one
 * schedule's peak, the fastest within it (the first of equals) and whether a
 * faster one was over it (the whole-job search prices leaner plans then).
 * Returns that flag. */
static int schedules_as_each(pl_problem *p, int64_t *const *sp, const int *stage, int64_t vmax,
                             rg_rng *rng)
{
	pl_jobcost each[9];
	assert_true(vmax < 9);
	for (int64_t u = 1; u <= vmax; u++) {
		p->job.virtual_stages = u;
		assert_int_equal(pl_job_price(p, sp, stage, 8, NULL, &each[u]), 0);
	}
	p->job.virtual_stages = 1;
	double lim = each[1 + rg_int(rng, (int)vmax)].mem_bytes;
	int64_t want = 0;
	for (int64_t u = 1; u <= vmax; u++)
		if (each[u].mem_bytes <= lim && (!want || each[u].step_s < each[want].step_s))
			want = u;
	int faster = 0;
	for (int64_t u = 1; u <= vmax; u++)
		faster |= each[u].step_s < each[want].step_s;
	pl_jobcost js;
	int cramped = -1;
	assert_int_equal(pl_job_price_schedules(p, sp, stage, 8, 1, vmax, lim, NULL, &js, &cramped),
	                 want);
	assert_int_equal(cramped, faster);
	near(js.step_s, each[want].step_s, 0);
	near(js.mem_bytes, each[want].mem_bytes, 0);
	/* without a limit: the fastest, nothing over it */
	assert_true(pl_job_price_schedules(p, sp, stage, 8, 1, vmax, 0, NULL, &js, &cramped) > 0);
	assert_int_equal(cramped, 0);
	return faster;
}

/* The bound the whole-job search prunes points with before any edge table
 * (pl_job_least: the least node time of every op, times the step scale) is
 * never above the step pl_job_price gives a plan of the point: random plans
 * (a random candidate per op, a random split into stages at the clean cuts,
 * plain 1F1B or up to the chunks the point allows) of every point (stage
 * count, micro-batch count, ZeRO level, recompute mode) of an MLP and the
 * example GPT on two H100 nodes, under the real pricing; and never above
 * the point's dp optimum (with stages, the relaxation's, which bounds the
 * point), which comes within 1.5x of it on most points (it is not
 * vacuous). */
static void node_bound_never_exceeds_a_priced_plan(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/examples/gpt-small.json", getenv("PL_SOURCE_DIR"));
	pl_graph *gs[2];
	pl_err err;
	char *json = mlp_json(64, 512, 4);
	gs[0] = load(json);
	free(json);
	if (pl_graph_load_file(&gs[1], path, &err))
		fail_msg("%s", err.msg);
	pl_cluster c;
	assert_int_equal(pl_cluster_preset(&c, "h100x8:2", &err), PL_OK);
	int64_t D = pl_cluster_devices_total(&c);
	rg_rng rng = {20261203};
	int points = 0, plans = 0, interleaved = 0, pipelined = 0, tight = 0, cramped = 0;
	for (int gi = 0; gi < 2; gi++) {
		const pl_graph *g = gs[gi];
		for (int64_t m = 1; m <= pl_graph_batch(g) && m <= 8; m *= 2) {
			pl_graph *gm;
			assert_int_equal(pl_graph_microbatch(g, m, &gm, &err), PL_OK);
			int *cuts = malloc(sizeof *cuts * ((size_t)gm->nops + 2));
			uint8_t *flags = malloc((size_t)gm->nops + 1);
			int K = pl_clean_cuts(gm, cuts) - 1;
			assert_true(K >= 1);
			int64_t **sp = malloc(sizeof *sp * (size_t)gm->nops);
			int *stage = malloc(sizeof *stage * ((size_t)gm->nops + 1));
			for (int64_t pp = 1; pp <= 16 && pp <= K; pp *= 2) {
				pl_cluster mesh;
				assert_int_equal(pl_stage_mesh(&c, D / pp, &mesh), 0);
				/* the chunks a plan may have: Megatron's rule (m a multiple
				 * of pp) and a segment per chunk on every stage */
				int64_t vmax = pp > 1 && m % pp == 0 ? K / pp : 1;
				vmax = vmax > 4 ? 4 : vmax < 1 ? 1 : vmax;
				for (int rc = 0; rc < PL_RECOMPUTE_MODES; rc++)
					for (int z = 0; z < PL_ZERO_LEVELS; z++) {
						if (!pl_zero_pipeline_ok(z, pp) ||
						    (rc && !pl_job_recompute_flags(gm, rc, flags)))
							continue;
						pl_job job = {.micro_batches = m,
						              .stages = pp,
						              .zero = z,
						              .recompute = rc ? flags : NULL,
						              .max_virtual = vmax > 1 ? vmax : 0};
						pl_problem *p;
						if (pl_problem_new_job(&p, gm, &mesh, &job, &err))
							fail_msg("%s", err.msg);
						double least[3];
						assert_int_equal(pl_job_least(p, least), 0);
						double bound = least[0] * pl_job_step_scale(&p->job);
						assert_true(bound > 0);
						double lowest = INFINITY;
						points++;
						for (int k = 0; k < 30; k++) {
							/* the first plan: each op on its fastest
							 * candidate alone, the rest at random */
							for (int op = 0; op < p->nops; op++) {
								int at = rg_int(&rng, p->nstrat[op]);
								const pl_nodecost *n = pl_problem_node(p, op);
								for (int a = 0; k == 0 && a < p->nstrat[op]; a++)
									if (n[a].compute_s + n[a].comm_s <
									    n[at].compute_s + n[at].comm_s)
										at = a;
								sp[op] = p->strat[op] +
								         (size_t)at * (size_t)gm->ops[op].spec.nloops;
							}
							/* pp - 1 distinct boundaries among cuts 1..K-1 */
							int first[17] = {0};
							for (;;) {
								int used[256] = {0}, ok = 1;
								for (int s = 1; s < pp; s++) {
									int b = 1 + rg_int(&rng, K - 1);
									ok &= !used[b];
									used[b] = 1;
								}
								if (!ok)
									continue;
								int s = 1;
								for (int b = 1; b < K; b++)
									if (used[b])
										first[s++] = b;
								break;
							}
							first[pp] = K;
							for (int s = 0; s < pp; s++)
								for (int op = cuts[first[s]];
								     op < cuts[first[s + 1]]; op++)
									stage[op] = s;
							int64_t v = 1 + rg_int(&rng, (int)vmax);
							p->job.virtual_stages = v;
							pl_jobcost jc;
							assert_int_equal(
							    pl_job_price(p, sp, stage, 8, NULL, &jc), 0);
							p->job.virtual_stages = 1;
							if (vmax > 1)
								cramped += schedules_as_each(p, sp, stage,
								                             vmax, &rng);
							if (!(jc.step_s >= bound * (1 - 1e-12)))
								fail_msg("%s, pp %lld, m %lld, v %lld, ZeRO "
								         "%d, recompute %d: a plan's step "
								         "%.17g is below the bound %.17g",
								         g->path, (long long)pp,
								         (long long)m, (long long)v, z, rc,
								         jc.step_s, bound);
							lowest = fmin(lowest, jc.step_s);
							plans++;
							interleaved += v > 1;
							pipelined += pp > 1;
						}
						/* the point's dp optimum (with stages, of the
						 * relaxation that bounds it) is above it too */
						pl_search_opts o = {0};
						pl_search_result r;
						assert_int_equal(pl_search_dp(p, &o, &r, &err), PL_OK);
						assert_true(r.step_s >= bound * (1 - 1e-12));
						lowest = fmin(lowest, r.step_s);
						pl_search_result_free(&r);
						tight += lowest <= 1.5 * bound;
						pl_problem_free(p);
					}
			}
			free(sp);
			free(stage);
			free(cuts);
			free(flags);
			pl_graph_free(gm);
		}
		pl_graph_free(gs[gi]);
	}
	print_message("%d points, %d plans (%d pipelined, %d interleaved, %d with a faster "
	              "schedule over a limit), %d bounds within 1.5x of their best plan or dp "
	              "optimum\n",
	              points, plans, pipelined, interleaved, cramped, tight);
	assert_true(points >= 100);
	assert_true(interleaved >= 300);
	assert_true(cramped >= 30);
	assert_true(2 * tight >= points);
}

/* ---- what memory forces ---- */

/* data parallel is fastest and its replicated optimizer state dominates
 * memory: 4 layers of 4096 x 4096 fp32, a batch of 8192 rows, on 8 H100s */
static pl_graph *big_mlp(pl_cluster *c)
{
	char *json = mlp_json(8192, 4096, 4);
	pl_graph *g = load(json);
	free(json);
	pl_err err;
	assert_int_equal(pl_cluster_preset(c, "h100x8", &err), PL_OK);
	return g;
}

static void memory_forces_stages_or_zero_and_a_fitting_model_gets_neither(void **state)
{
	(void)state;
	pl_cluster c;
	pl_err err;
	pl_graph *g = big_mlp(&c);
	pl_problem *p;
	assert_int_equal(pl_problem_new(&p, g, &c, &err), PL_OK);
	double least = 0;
	for (int op = 0; op < p->nops; op++)
		least += pl_problem_least_memory(p, op);
	pl_search_opts o = {0};
	pl_search_result fast, tight;
	assert_int_equal(pl_search_dp(p, &o, &fast, &err), PL_OK);
	assert_true(fast.mem_bytes > 1.5 * least); /* the fastest plan replicates weights */

	pl_job_opts jo = PL_JOB_OPTS_AUTO;
	pl_job_plan jp;
	/* the fastest per-op plan fits: one stage, and no ZeRO unless sharding
	 * the optimizer step makes a plan more than PL_JOB_SIMPLER faster
	 * (otherwise the same step) */
	double fast_tr = pl_search_result_transient(p, &fast);
	assert_true(fast_tr > 0);
	o.memory_limit = 1.01 * (fast.mem_bytes + fast_tr);
	assert_int_equal(pl_search_job(g, &c, &o, &jo, &jp, &err), PL_OK);
	assert_int_equal(jp.p->job.stages, 1);
	if (jp.p->job.zero)
		assert_true(jp.cost.step_s * (1 + PL_JOB_SIMPLER) < fast.step_s);
	else
		near(jp.cost.step_s, fast.step_s, 1e-9 * fast.step_s);
	pl_job_plan_free(&jp);
	/* it does not: per-op planning alone must cut the weights (tensor
	 * parallel everywhere); sharding the optimizer state or splitting the
	 * layers into stages is cheaper, and the job search takes one of them */
	o.memory_limit = 0.5 * (least + fast.mem_bytes);
	/* the per-op plan whose tensors fit beside its transient bytes: under
	 * the limit less the transient bytes of the last plan that did not */
	pl_search_opts to = o;
	double tight_s = INFINITY; /* none fits */
	for (int k = 0; k < 8; k++) {
		pl_status ts = pl_search_dp(p, &to, &tight, &err);
		if (ts == PL_EINFEASIBLE)
			break;
		assert_int_equal(ts, PL_OK);
		double tr = pl_search_result_transient(p, &tight);
		int fits = tight.mem_bytes + tr <= o.memory_limit;
		if (fits)
			tight_s = tight.step_s;
		pl_search_result_free(&tight);
		if (fits)
			break;
		to.memory_limit = o.memory_limit - tr;
	}
	assert_true(tight_s > fast.step_s);
	assert_int_equal(pl_search_job(g, &c, &o, &jo, &jp, &err), PL_OK);
	assert_true(jp.p->job.stages > 1 || jp.p->job.zero > 0);
	assert_true(jp.cost.mem_bytes <= o.memory_limit);
	assert_true(jp.cost.step_s < tight_s);
	/* relaxed first-pass bounds rule out only points that cannot win: never
	 * a slower plan */
	for (int relax = 1; relax <= 64; relax *= 8) {
		pl_job_plan jr;
		o.dp.relax_pairs = relax;
		assert_int_equal(pl_search_job(g, &c, &o, &jo, &jr, &err), PL_OK);
		assert_true(jr.cost.mem_bytes <= o.memory_limit);
		assert_true(jr.cost.step_s <= jp.cost.step_s * (1 + 1e-12));
		pl_job_plan_free(&jr);
	}
	o.dp.relax_pairs = 0;
	pl_job_plan_free(&jp);
	pl_search_result_free(&fast);
	pl_problem_free(p);
	pl_graph_free(g);
}

/* ---- stopping early ---- */

/* A search stopped after a few planned points (as when its time limit runs
 * out) returns the best plan so far, not proven, and never a better one than
 * the whole search (it did a prefix of the same work); with nothing planned
 * yet it fails with the time limit. */
static void a_stopped_search_keeps_its_best_plan(void **state)
{
	(void)state;
	pl_cluster c;
	pl_err err;
	pl_graph *g = big_mlp(&c);
	pl_job_opts jo = PL_JOB_OPTS_AUTO;
	pl_search_opts o = {.memory_limit = 40.0 * (1 << 30)};
	pl_job_plan all, some;
	assert_int_equal(pl_search_job(g, &c, &o, &jo, &all, &err), PL_OK);
	int stops = 0;
	pl_search_hooks hooks = {0};
	o.hooks = &hooks;
	for (int n = 1; n <= 3; n++) {
		hooks.job_stop_after = n;
		if (pl_search_job(g, &c, &o, &jo, &some, &err))
			fail_msg("stopped after %d: %s", n, err.msg);
		if (strstr(some.why, "ran out")) {
			stops++;
			assert_false(some.optimal);
			assert_non_null(strstr(some.why, "the best plan so far"));
		}
		assert_true(some.cost.mem_bytes <= o.memory_limit);
		assert_true(some.cost.step_s >= all.cost.step_s * (1 - 1e-12));
		pl_job_plan_free(&some);
	}
	assert_true(stops >= 1);
	o.hooks = NULL;
	o.time_limit_s = 1e-9; /* before any plan */
	assert_int_equal(pl_search_job(g, &c, &o, &jo, &some, &err), PL_ETIMEOUT);
	assert_non_null(strstr(err.msg, "time limit"));
	pl_job_plan_free(&all);
	pl_graph_free(g);
}

/* ---- micro-batches ---- */

static void micro_batch_graphs_divide_the_batch(void **state)
{
	(void)state;
	char *json = mlp_json(12, 64, 2);
	pl_graph *g = load(json), *gm;
	free(json);
	pl_err err;
	assert_int_equal(pl_graph_batch(g), 12);
	assert_int_equal(pl_graph_microbatch(g, 4, &gm, &err), PL_OK);
	assert_int_equal(gm->tensors[pl_graph_find_tensor(gm, "x")].shape[0], 3);
	assert_int_equal(gm->tensors[pl_graph_find_tensor(gm, "a1")].shape[0], 3);
	assert_int_equal(gm->tensors[pl_graph_find_tensor(gm, "w1")].shape[0], 64);
	assert_string_equal(gm->sha256, g->sha256);
	/* a micro-batch of a micro-batch is refused, and 5 does not divide 12 */
	pl_graph *bad = NULL;
	assert_int_equal(pl_graph_microbatch(gm, 2, &bad, &err), PL_EINVAL);
	pl_graph_free(gm);
	assert_int_equal(pl_graph_microbatch(g, 5, &bad, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "tensors.x.shape"));
	assert_non_null(strstr(err.msg, "5 micro-batches"));
	assert_null(bad);
	pl_graph_free(g);
}

/* The interleaved 1F1B schedule against Narayanan et al. 2021 (§2.2.2): with
 * pp balanced stages of t per micro-batch, m micro-batches and v chunks per
 * device, a step is (m + (pp - 1) / v) t plus the once-a-step work, the
 * sends of every stage v times over; the first stage holds pp + (pp - 1) / v
 * micro-batches of its activations (Korthikanti et al. 2022 §4.2.3), stage s
 * ((pp - s - 1) 2 + (v - 1) pp + 1) / v (Megatron's warm-up count, plus the
 * micro-batch in progress, in chunks of a v-th); v = 1 is plain 1F1B
 * (pp - s). */
static void interleaved_schedule_as_published(void **state)
{
	(void)state;
	for (int64_t pp = 2; pp <= 8; pp *= 2)
		for (int64_t v = 1; v <= 4; v++) {
			int64_t m = 4 * pp;
			pl_stagecost st[8];
			memset(st, 0, sizeof st);
			for (int s = 0; s < pp; s++) {
				st[s].mb_compute_s = 1.0;
				st[s].mb_comm_s = 0.25; /* of which sends */
				st[s].p2p_s = 0.25;
				st[s].step_comm_s = 0.5;
			}
			pl_jobcost jc;
			pl_job_combine(st, pp, m, v, 0, &jc);
			double t = 1.25 + (double)(v - 1) * 0.25;
			near(jc.step_s, ((double)m + (double)(pp - 1) / (double)v) * t + 0.5,
			     1e-12);
			near(jc.bubble_s, (double)(pp - 1) / (double)v * t, 1e-12);
			double first = pl_job_inflight(pp, m, v, 0);
			near(first, v > 1 ? (double)pp + (double)(pp - 1) / (double)v : (double)pp,
			     1e-12);
			for (int64_t s = 0; s < pp; s++)
				near(pl_job_inflight(pp, m, v, s),
				     v > 1
				         ? (double)(2 * (pp - s - 1) + (v - 1) * pp + 1) / (double)v
				         : (double)(pp - s),
				     1e-12);
		}
	/* never more than the micro-batches there are */
	near(pl_job_inflight(8, 2, 4, 0), 2, 0);
}

/* The gradient reduction overlapped with the last backward in buckets (PyTorch
 * DDP): what the backward cannot hide stays, and never less than the last
 * 25 MiB bucket's share; off, all of it. */
static void overlapped_reduction_keeps_its_last_bucket(void **state)
{
	(void)state;
	pl_stagecost s = {.step_reduce_s = 1.0, .grad_bytes = 4 * PL_GRAD_BUCKET_BYTES};
	s.mb_bwd_s = 0.6;
	near(pl_job_exposed_reduce(&s, 0), 1.0, 0);
	near(pl_job_exposed_reduce(&s, 1), 0.4, 1e-15);
	s.mb_bwd_s = 0.9; /* the backward hides all but the last of 4 buckets */
	near(pl_job_exposed_reduce(&s, 1), 0.25, 1e-15);
	s.grad_bytes = PL_GRAD_BUCKET_BYTES / 2; /* one bucket: nothing to overlap */
	near(pl_job_exposed_reduce(&s, 1), 1.0, 0);
	/* in the step: once a step, u = optimizer + exposed reduction */
	pl_stagecost st[1] = {{.mb_compute_s = 1,
	                       .step_compute_s = 0.1,
	                       .step_comm_s = 1.0,
	                       .step_reduce_s = 1.0,
	                       .mb_bwd_s = 0.9,
	                       .grad_bytes = 4 * PL_GRAD_BUCKET_BYTES}};
	pl_jobcost off, on;
	pl_job_combine(st, 1, 4, 1, 0, &off);
	pl_job_combine(st, 1, 4, 1, 1, &on);
	near(off.step_s, 4 + 0.1 + 1.0, 1e-12);
	near(on.step_s, 4 + 0.1 + 0.25, 1e-12);
	near(on.comm_s, 0.25, 1e-12);
}

/* Parameter all-gathers run ahead of use (--overlap-param-gather): each of
 * a stage's gathers hides behind the compute of its pass, its first op's
 * gather has nothing beside it, and the compute runs 1 + sigma times as long
 * while a collective runs beside it (sigma = PL_OVERLAP_SLOWDOWN, 18.9 %,
 * Lee et al. 2025). Beside h seconds of compute a gather of c seconds, f of
 * them first, leaves f + max(c - f - h, (c - f) sigma / (1 + sigma)) exposed:
 * the compute done while the rest runs is (c - f) / (1 + sigma), so the pass
 * ends max(c - f, h + (c - f) - (c - f) / (1 + sigma)) after the first.
 * By hand, sigma' = 0.189 / 1.189 = 0.158957:
 *  ZeRO-3, a micro-batch of 0.4 s forward and 0.6 s backward compute whose
 *  gathers take 0.4 s in either pass (0.1 s the forward's first, 0.05 s the
 *  backward's): forward 0.1 + max(0.3 - 0.4, 0.3 sigma') = 0.147687,
 *  backward 0.05 + max(0.35 - 0.6, 0.35 sigma') = 0.105635; of its 0.9 s of
 *  communication 0.1 + 0.147687 + 0.105635 = 0.353322 stays.
 *  With 0.2 s forward and 0.3 s backward compute the gathers outlast it:
 *  forward 0.1 + (0.3 - 0.2) = 0.2, backward 0.05 + max(0.05, 0.055635).
 *  ZeRO-1, the step's 0.4 s all-gather of updated weights (0.1 s its first
 *  op's) beside the next step's first forward of 0.4 s: 0.1 + 0.3 sigma'. */
static void overlapped_param_gathers_by_hand(void **state)
{
	(void)state;
	const double sg = 0.189 / 1.189;
	near(PL_OVERLAP_SLOWDOWN, 0.189, 0);
	pl_stagecost z3 = {.mb_compute_s = 1.0,
	                   .mb_bwd_s = 0.6,
	                   .mb_comm_s = 0.9,
	                   .mb_gather_s = 0.8,
	                   .gather_first_s = 0.1,
	                   .gather_last_s = 0.05};
	near(pl_job_exposed_mb(&z3, 0), 0.9, 0);
	near(pl_job_exposed_mb(&z3, PL_OVERLAP_GRAD | PL_OVERLAP_TP), 0.9, 0);
	near(pl_job_exposed_mb(&z3, PL_OVERLAP_PARAM), 0.1 + 0.1 + 0.3 * sg + 0.05 + 0.35 * sg,
	     1e-12);
	near(0.1 + 0.1 + 0.3 * sg + 0.05 + 0.35 * sg, 0.353322, 1e-6);
	/* in the step, m micro-batches of it */
	pl_jobcost off, on;
	pl_stagecost st[1] = {z3};
	st[0].step_compute_s = 0.1;
	pl_job_combine(st, 1, 4, 1, 0, &off);
	pl_job_combine(st, 1, 4, 1, PL_OVERLAP_PARAM, &on);
	near(off.step_s, 4 * (1.0 + 0.9) + 0.1, 1e-12);
	near(on.step_s, 4 * (1.0 + 0.353322) + 0.1, 4e-6);
	near(on.comm_s, 4 * 0.353322, 4e-6);
	/* gathers longer than the compute beside them */
	z3.mb_compute_s = 0.5;
	z3.mb_bwd_s = 0.3;
	near(pl_job_exposed_mb(&z3, PL_OVERLAP_PARAM), 0.1 + 0.2 + 0.05 + 0.35 * sg, 1e-12);
	/* ZeRO-1: the step's all-gather of updated weights beside the next
	 * forward; the gradient reduction's overlap is its own switch */
	pl_stagecost z1 = {.mb_compute_s = 1.0,
	                   .mb_bwd_s = 0.6,
	                   .step_comm_s = 1.0,
	                   .step_reduce_s = 0.6,
	                   .step_gather_s = 0.4,
	                   .step_gather_first_s = 0.1,
	                   .grad_bytes = 0.5 * PL_GRAD_BUCKET_BYTES};
	near(pl_job_exposed_step(&z1, 0), 1.0, 0);
	near(pl_job_exposed_step(&z1, PL_OVERLAP_PARAM), 0.6 + 0.1 + 0.3 * sg, 1e-12);
	near(pl_job_exposed_step(&z1, PL_OVERLAP_PARAM | PL_OVERLAP_GRAD), 0.6 + 0.1 + 0.3 * sg,
	     1e-12); /* one bucket of gradients: nothing of it to overlap */
	/* one op's gathers: all first, nothing hidden */
	z1.step_gather_first_s = 0.4;
	near(pl_job_exposed_step(&z1, PL_OVERLAP_PARAM), 1.0, 1e-15);
	/* the helper: the gradient reduction's formula is its case sigma = 0 */
	near(pl_overlap_exposed(1.0, 0.25, 0.6, 0), fmax(1.0 - 0.6, 0.25), 1e-15);
	near(pl_overlap_exposed(1.0, 0.25, 0.9, 0), 0.25, 1e-15);
	near(pl_overlap_exposed(0, 0, 1.0, 0.189), 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(partition_equals_every_split),
	    cmocka_unit_test(one_stage_search_equals_brute_force),
	    cmocka_unit_test(headroom_keeps_room_within_its_margin),
	    cmocka_unit_test(kept_plans_change_the_work_not_the_answer),
	    cmocka_unit_test(relaxed_bounds_change_the_work_not_the_answer),
	    cmocka_unit_test(node_bound_never_exceeds_a_priced_plan),
	    cmocka_unit_test(memory_forces_stages_or_zero_and_a_fitting_model_gets_neither),
	    cmocka_unit_test(micro_batch_graphs_divide_the_batch),
	    cmocka_unit_test(a_stopped_search_keeps_its_best_plan),
	    cmocka_unit_test(interleaved_schedule_as_published),
	    cmocka_unit_test(overlapped_reduction_keeps_its_last_bucket),
	    cmocka_unit_test(overlapped_param_gathers_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
