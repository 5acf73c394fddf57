/* planner calibrate --from-runs: the only place an end-to-end measurement
 * sets a number. A user's measured steps (each a model, the plan it ran and
 * the step time, optionally the peak memory) fit four named, bounded factors
 * of their cluster (costmodel/cluster.h: kernels' rate, collectives' rate,
 * the rate of those across nodes again, kept activations' bytes); each run
 * is priced again under candidate factors, so every term of the model keeps
 * its shape and only the factor moves. The step factors minimise the squared
 * log error of the step times (Levenberg-Marquardt on the log factors,
 * within their bounds); the memory factor is the median that makes each run's predicted
 * peak its measured one. Leave-one-out: each run predicted from the others'
 * fit, the error reported. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/cluster.h"
#include "graph/alloc.h"
#include "graph/model.h"
#include "planner/checkpoint.h"
#include "planner/commands/cli.h"
#include "planner/fwlog.h"
#include "graph/graph.h"
#include "graph/json.h"
#include "graph/output.h"
#include "planner/plan.h"

typedef struct run {
	char name[128];
	pl_graph *g;
	cJSON *plan;
	char where[4096];
	double step_s, peak_bytes; /* measured; peak 0: not given */
} run;

typedef struct fitctx {
	run *r;
	int n;
	pl_cluster base; /* the runs' cluster, without factors */
	pl_err *err;
	int failed;
} fitctx;

/* the factors: the step's NS (kernels, collectives, collectives across
 * nodes again), then the memory's */
enum { F_COMPUTE, F_COMM, F_COMM_INTER, F_MEMORY, NF, NS = F_MEMORY };

/* run k priced under the factors fac[NF] */
static int price(fitctx *f, int k, const double fac[NF], double *step, double *peak)
{
	pl_cluster c = f->base;
	c.fit_compute = fac[F_COMPUTE];
	c.fit_comm = fac[F_COMM];
	c.fit_comm_inter = fac[F_COMM_INTER];
	c.fit_memory = fac[F_MEMORY];
	pl_plancost pc;
	double bubble;
	if (pl_plan_price(f->r[k].g, f->r[k].plan, f->r[k].where, &c, &pc, &bubble, NULL, NULL,
	                  f->err)) {
		f->failed = 1;
		return -1;
	}
	*step = pc.step_s;
	/* a measured peak is the framework's allocator's (max allocated): the
	 * plan's tensors, without the runtime reserve cost adds */
	*peak = pc.mem_bytes - c.memory_reserve;
	return 0;
}

/* the log errors of the step times (r[k], 0 for skip) and their derivatives
 * by the log step factors (central differences) at fac; 0, or -1 */
static int residuals(fitctx *f, const double fac[NF], int skip, double *r, double (*jac)[NS])
{
	const double h = 1e-4;
	for (int k = 0; k < f->n; k++) {
		double step, peak, t[NF];
		r[k] = 0;
		memset(jac[k], 0, sizeof jac[k]);
		if (k == skip)
			continue;
		if (price(f, k, fac, &step, &peak))
			return -1;
		r[k] = log(step / f->r[k].step_s);
		for (int i = 0; i < NS; i++) {
			double up, down;
			memcpy(t, fac, sizeof t);
			t[i] = fac[i] * exp(h);
			if (price(f, k, t, &up, &peak))
				return -1;
			t[i] = fac[i] * exp(-h);
			if (price(f, k, t, &down, &peak))
				return -1;
			jac[k][i] = (log(up) - log(down)) / (2 * h);
		}
	}
	return 0;
}

/* LAPACK's general solver, in the OpenBLAS the build links (its headers
 * ship only the BLAS part): A X = B by LU with partial pivoting,
 * column-major, A and B overwritten */
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b,
            const int *ldb, int *info);

/* x = A^-1 b for the NS x NS system (dgesv); 0, or -1 when A is singular */
static int solve_small(double A[NS][NS], const double b[NS], double x[NS])
{
	double a[NS * NS];
	int n = NS, one = 1, ipiv[NS], info = 0;
	for (int i = 0; i < NS; i++) { /* column-major */
		x[i] = b[i];
		for (int j = 0; j < NS; j++)
			a[j * NS + i] = A[i][j];
	}
	dgesv_(&n, &one, a, &n, ipiv, x, &n, &info);
	return info ? -1 : 0;
}

/* the sum of squared log errors of the step times at fac, every run but
 * skip; NAN when a run cannot be priced */
static double sq_error(fitctx *f, const double fac[NF], int skip)
{
	double e = 0;
	for (int k = 0; k < f->n; k++) {
		double step, peak;
		if (k == skip)
			continue;
		if (price(f, k, fac, &step, &peak))
			return NAN;
		double r = log(step / f->r[k].step_s);
		e += r * r;
	}
	return e;
}

/* The damped step (J^T J + mu diag(J^T J)) step = J^T r at fac; a factor at
 * a bound that the step would push past it stays there (its step 0) and the
 * others are solved without it. 0, or -1 when the system is singular. */
static int damped_step(const double JJ[NS][NS], const double Jr[NS], double mu,
                       const double fac[NF], double step[NS])
{
	double lo = log(PL_FIT_MIN), hi = log(PL_FIT_MAX);
	int fixed = 0;
	for (;;) {
		double A[NS][NS], g[NS];
		for (int a = 0; a < NS; a++) {
			g[a] = fixed >> a & 1 ? 0 : Jr[a];
			for (int b = 0; b < NS; b++)
				A[a][b] = (fixed >> a & 1) || (fixed >> b & 1) ? a == b : JJ[a][b];
			if (!(fixed >> a & 1))
				A[a][a] += mu * JJ[a][a] + 1e-12;
		}
		if (solve_small(A, g, step))
			return -1;
		int more = 0;
		for (int i = 0; i < NS; i++) {
			double x = log(fac[i]);
			if (!(fixed >> i & 1) &&
			    ((x >= hi - 1e-12 && step[i] < 0) || (x <= lo + 1e-12 && step[i] > 0))) {
				fixed |= 1 << i;
				more = 1;
			}
		}
		if (!more)
			return 0;
	}
}

/* the step factors fitted on every run but skip (-1: all): Levenberg-
 * Marquardt on the log factors, each step clamped to the bounds and taken
 * only where the error falls (else the damping grows: a plain Gauss-Newton
 * step overshoots where the terms' shares differ widely, as communication
 * across nodes against the rest, and a clamped overshoot can stick at a
 * bound). A factor no run's step depends on (no collective across nodes)
 * stays 1. */
static void fit_steps(fitctx *f, double fac[NF], int skip)
{
	for (int i = 0; i < NS; i++)
		fac[i] = 1;
	double *r = pl_calloc((size_t)f->n + 1, sizeof *r);
	double(*jac)[NS] = pl_calloc((size_t)f->n + 1, sizeof *jac);
	double mu = 1; /* the damping, relative to J^T J's diagonal */
	for (int it = 0; r && jac && it < 100; it++) {
		if (residuals(f, fac, skip, r, jac))
			break;
		double JJ[NS][NS] = {{0}}, Jr[NS] = {0}, e0 = 0;
		for (int k = 0; k < f->n; k++) {
			e0 += r[k] * r[k];
			for (int i = 0; i < NS; i++) {
				Jr[i] += jac[k][i] * r[k];
				for (int j = 0; j < NS; j++)
					JJ[i][j] += jac[k][i] * jac[k][j];
			}
		}
		double lo = log(PL_FIT_MIN), hi = log(PL_FIT_MAX), moved = 0, cand[NF];
		int took = 0;
		for (int h = 0; h < 40 && !took; h++) {
			double step[NS];
			if (damped_step(JJ, Jr, mu, fac, step))
				break;
			memcpy(cand, fac, sizeof cand);
			moved = 0;
			for (int i = 0; i < NS; i++) {
				double x = fmin(fmax(log(fac[i]) - step[i], lo), hi);
				moved += fabs(x - log(fac[i]));
				cand[i] = exp(x);
			}
			double e = sq_error(f, cand, skip);
			if (isnan(e))
				break;
			if (e < e0) {
				took = 1;
				mu = fmax(mu / 10, 1e-9);
			} else if (moved < 1e-12) {
				break; /* nothing left to move */
			} else {
				mu *= 10;
			}
		}
		if (!took)
			break;
		memcpy(fac, cand, sizeof cand);
		if (moved < 1e-9)
			break;
	}
	free(r);
	free(jac);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the memory factor: per run with a measured peak, the factor of its kept
 * activations that makes the predicted peak the measured one (the peak is
 * linear in it); the median, within [1, PL_FIT_MEM_MAX]; 1 without any */
static double fit_memory(fitctx *f, const double fac[NF])
{
	double *v = pl_malloc(sizeof *v * (size_t)(f->n + 1));
	int m = 0;
	for (int k = 0; v && k < f->n; k++) {
		double one[NF], two[NF], s, p1, p2;
		memcpy(one, fac, sizeof one);
		memcpy(two, fac, sizeof two);
		one[F_MEMORY] = 1;
		two[F_MEMORY] = 2;
		if (!(f->r[k].peak_bytes > 0) || price(f, k, one, &s, &p1) ||
		    price(f, k, two, &s, &p2) || !(p2 > p1))
			continue;
		v[m++] = 1 + (f->r[k].peak_bytes - p1) / (p2 - p1);
	}
	double r = 1;
	if (m) {
		qsort(v, (size_t)m, sizeof *v, cmp_double);
		r = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
	}
	free(v);
	return fmin(fmax(r, 1), PL_FIT_MEM_MAX);
}

/* r's measured step (and, with want_peak, its peak memory: max allocated,
 * else max reserved) from the framework's log at path, the rates in it
 * converted by r's plan (its cost's tokens and samples a step, its devices) */
static pl_status step_from_log(run *r, const char *path, int warmup, int want_peak, pl_err *err)
{
	char *text = NULL;
	size_t len;
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(r->plan, "cost");
	pl_fwlog_scale sc = {
	    .tokens_per_step = pl_json_num(cost, "tokens_per_step", 0),
	    .samples_per_step = pl_json_num(cost, "global_batch", 0),
	    .devices =
	        pl_json_num(cJSON_GetObjectItemCaseSensitive(r->plan, "cluster"), "devices", 0)};
	pl_fwlog fl = {0};
	pl_fwlog_summary sm;
	pl_status s = pl_read_file(path, &text, &len, err);
	if (!s && !(s = pl_fwlog_read(text, len, path, &fl, err)) &&
	    !(s = pl_fwlog_summarise(&fl, warmup, &sc, path, &sm, err))) {
		r->step_s = sm.step_s;
		double peak = isfinite(sm.max_allocated) ? sm.max_allocated : sm.max_reserved;
		if (want_peak && isfinite(peak) && peak > 0)
			r->peak_bytes = peak;
	}
	pl_fwlog_free(&fl);
	free(text);
	return s;
}

/* dir + name into buf (name as given when absolute); a path that does not fit is an error
 * naming the runs file's line and field, never a silently shortened path */
static pl_status run_path(char *buf, size_t size, const char *dir, const char *name,
                          const char *file, int line, const char *field, pl_err *err)
{
	int n = snprintf(buf, size, "%s%s", name[0] == '/' ? "" : dir, name);
	if (n < 0 || (size_t)n >= size)
		return pl_err_set(err, PL_EINVAL, "%s:%d: %s: expected a path shorter than %zu bytes",
		                  file, line, field, size);
	return PL_OK;
}

/* one line of RUNS: {"model", "plan", "step_seconds"[, "peak_memory_bytes", "name"]}, paths
 * relative to RUNS's folder */
static pl_status read_run(const cJSON *o, const char *file, int line, const char *dir, run *r,
                          pl_err *err)
{
	const char *model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "model")),
	           *plan = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "plan")),
	           *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "name"));
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "step_seconds"),
	            *pk = cJSON_GetObjectItemCaseSensitive(o, "peak_memory_bytes");
	const char *log = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "log"));
	const cJSON *wu = cJSON_GetObjectItemCaseSensitive(o, "warmup");
	if (!cJSON_IsObject(o) || !model || !plan)
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s:%d: expected {\"model\": PATH, \"plan\": PATH, \"step_seconds\": "
		    "S} (paths relative to the runs file)",
		    file, line);
	/* without step_seconds, the step of the framework's log (planner/fwlog.h) */
	int from_log = !st && log;
	if (!from_log &&
	    (!cJSON_IsNumber(st) || !(st->valuedouble > 0) || !isfinite(st->valuedouble)))
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: step_seconds: expected the measured step, seconds > 0 "
		                  "(or \"log\": a training log to read it from)",
		                  file, line);
	if (from_log && wu &&
	    (!cJSON_IsNumber(wu) || !(wu->valuedouble >= 0 && wu->valuedouble <= 1000000) ||
	     wu->valuedouble != floor(wu->valuedouble)))
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: warmup: expected the log's warm-up steps, 0 to 1000000",
		                  file, line);
	if (pk && (!cJSON_IsNumber(pk) || !(pk->valuedouble > 0) || !(pk->valuedouble < 1e18)))
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: peak_memory_bytes: expected bytes > 0 (or leave it out)",
		                  file, line);
	snprintf(r->name, sizeof r->name, "%s", name ? name : from_log ? log : plan);
	r->step_s = from_log ? 0 : st->valuedouble;
	r->peak_bytes = pk ? pk->valuedouble : 0;
	char path[4096];
	pl_status s = run_path(path, sizeof path, dir, model, file, line, "model", err);
	if (s || (s = pl_graph_load_file(&r->g, path, err)))
		return s;
	pl_cli_model_warnings(r->g);
	if ((s = run_path(r->where, sizeof r->where, dir, plan, file, line, "plan", err)))
		return s;
	char *text;
	size_t len;
	if ((s = pl_read_file(r->where, &text, &len, err)))
		return s;
	s = pl_json_parse(text, len, r->where, &r->plan, err);
	free(text);
	if (s || !from_log)
		return s;
	if ((s = run_path(path, sizeof path, dir, log, file, line, "log", err)))
		return s;
	if ((s = step_from_log(r, path, wu ? (int)wu->valuedouble : 1, !pk, err)))
		pl_err_prefix(err, "%s:%d", file, line);
	return s;
}

static void print_row(const char *name, double meas, double before, double after, double loo)
{
	printf("%-32.32s %10.4f %10.4f %7.3f %10.4f %7.3f %7.3f\n", name, meas, before,
	       before / meas, after, after / meas, loo / meas);
}

/* Long on purpose: the command's steps in order -- read the
 * runs, check they share a cluster, fit, leave each out, report, write. */
int pl_cmd_calibrate_runs(const char *file, const char *out)
{
	pl_err err = {{0}};
	fitctx f = {.err = &err};
	char *text = NULL, dir[4096] = "";
	size_t len;
	pl_status st = pl_read_file(file, &text, &len, &err);
	const char *slash = strrchr(file, '/');
	if (slash)
		snprintf(dir, sizeof dir, "%.*s/", (int)(slash - file), file);
	int cap = 0, line = 0;
	for (char *p = text, *nl; !st && p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		line++;
		size_t k = 0;
		while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
			k++;
		if (k == n || p[k] == '#')
			continue;
		cJSON *o = NULL;
		char where[4200];
		snprintf(where, sizeof where, "%s:%d", file, line);
		if ((st = pl_json_parse(p, n, where, &o, &err)))
			break;
		if (f.n == cap) {
			cap = cap ? 2 * cap : 16;
			run *nr = pl_realloc(f.r, sizeof *nr * (size_t)cap);
			if (!nr) {
				cJSON_Delete(o);
				st = pl_err_set(&err, PL_ENOMEM, "out of memory");
				break;
			}
			f.r = nr;
		}
		memset(&f.r[f.n], 0, sizeof f.r[f.n]);
		st = read_run(o, file, line, dir, &f.r[f.n], &err);
		f.n++;
		cJSON_Delete(o);
	}
	free(text);
	if (!st && f.n == 0)
		st = pl_err_set(&err, PL_EINVAL, "%s: no runs (one JSON object a line)", file);
	/* one cluster for all: the first run's, and every other's device the same */
	for (int k = 0; !st && k < f.n; k++) {
		pl_cluster c;
		if ((st = pl_plan_cluster(f.r[k].plan, f.r[k].where, &c, &err)))
			break;
		if (k == 0)
			f.base = c;
		else if (strcmp(c.device_name, f.base.device_name))
			st = pl_err_set(&err, PL_EINVAL,
			                "%s: the plan is for %s, the first run's for %s: fit each "
			                "device's runs apart",
			                f.r[k].where, c.device_name, f.base.device_name);
	}
	if (!st && (pl_fit(f.base.fit_compute) != 1 || pl_fit(f.base.fit_comm) != 1 ||
	            pl_fit(f.base.fit_comm_inter) != 1 || pl_fit(f.base.fit_memory) != 1)) {
		fprintf(stderr, "planner: note: the runs' cluster has fitted factors already; the "
		                "fit starts from the model without them\n");
		f.base.fit_compute = f.base.fit_comm = f.base.fit_comm_inter = f.base.fit_memory = 0;
	}
	double one[NF] = {1, 1, 1, 1}, fac[NF] = {1, 1, 1, 1};
	double *before = NULL, *loo = NULL;
	if (!st && (!(before = pl_calloc((size_t)f.n, sizeof *before)) ||
	            !(loo = pl_calloc((size_t)f.n, sizeof *loo))))
		st = pl_err_set(&err, PL_ENOMEM, "out of memory");
	for (int k = 0; !st && k < f.n; k++) {
		double peak;
		if (price(&f, k, one, &before[k], &peak))
			st = PL_EINVAL;
	}
	if (!st) {
		fit_steps(&f, fac, -1);
		fac[F_MEMORY] = fit_memory(&f, fac);
		for (int k = 0; f.n > 1 && k < f.n; k++) { /* leave-one-out */
			double t[NF] = {1, 1, 1, fac[F_MEMORY]}, peak;
			fit_steps(&f, t, k);
			price(&f, k, t, &loo[k], &peak);
		}
		st = f.failed ? PL_EINVAL : PL_OK;
	}
	if (!st) {
		printf("%d run%s on %s (%s)\n", f.n, f.n == 1 ? "" : "s", f.base.name,
		       f.base.device_name);
		printf("%-32s %10s %10s %7s %10s %7s %7s\n", "run", "measured", "model", "ratio",
		       "fitted", "ratio", "loo");
		double e0 = 0, e1 = 0, el = 0, w0 = 0, wl = 0;
		for (int k = 0; k < f.n; k++) {
			double after = NAN, peak;
			price(&f, k, fac, &after, &peak);
			print_row(f.r[k].name, f.r[k].step_s, before[k], after,
			          f.n > 1 ? loo[k] : NAN);
			e0 += fabs(before[k] / f.r[k].step_s - 1) / f.n;
			e1 += fabs(after / f.r[k].step_s - 1) / f.n;
			el += fabs(loo[k] / f.r[k].step_s - 1) / f.n;
			w0 += fabs(before[k] / f.r[k].step_s - 1) <= 0.1;
			wl += fabs(loo[k] / f.r[k].step_s - 1) <= 0.1;
		}
		printf("fitted: compute %.3f, communication %.3f (across nodes %.3f times that), "
		       "memory %.3f (bounds %.2f-%.0f each, memory 1-%.0f)\n",
		       fac[F_COMPUTE], fac[F_COMM], fac[F_COMM_INTER], fac[F_MEMORY], PL_FIT_MIN,
		       PL_FIT_MAX, PL_FIT_MEM_MAX);
		printf(
		    "mean |error|: model %.1f %% (%d of %d within 10 %%), fitted in-sample %.1f %%",
		    100 * e0, (int)w0, f.n, 100 * e1);
		if (f.n > 1)
			printf(", leave-one-out %.1f %% (%d of %d within 10 %%)", 100 * el, (int)wl,
			       f.n);
		putchar('\n');
		f.base.fit_compute = fac[F_COMPUTE];
		f.base.fit_comm = fac[F_COMM];
		f.base.fit_comm_inter = fac[F_COMM_INTER];
		f.base.fit_memory = fac[F_MEMORY];
		f.base.fit_loo = f.n > 1 ? fmin(el, 0.99) : 0; /* every later plan's band */
		snprintf(f.base.source, sizeof f.base.source,
		         "planner calibrate --from-runs %s (%d runs)", file, f.n);
		if (out) {
			cJSON *info = cJSON_CreateObject();
			cJSON_AddStringToObject(info, "runs_file", file);
			cJSON_AddNumberToObject(info, "runs", f.n);
			cJSON_AddNumberToObject(info, "mean_abs_error_before", e0);
			cJSON_AddNumberToObject(info, "mean_abs_error_fitted", e1);
			if (f.n > 1)
				cJSON_AddNumberToObject(info, "mean_abs_error_leave_one_out", el);
			st = pl_cli_write_cluster(&f.base, "fit_from_runs", info, out, 0, &err);
			if (!st)
				printf("wrote %s\n", out);
		}
	}
	for (int k = 0; k < f.n; k++) {
		pl_graph_free(f.r[k].g);
		cJSON_Delete(f.r[k].plan);
	}
	free(f.r);
	free(before);
	free(loo);
	return st ? pl_cli_fail(st, &err) : 0;
}
