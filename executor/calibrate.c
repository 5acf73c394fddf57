/* Calibration: every rank runs the same measurement program inside one
 * launch; the ranks of a measurement start together after a barrier and rank
 * 0 of the group times the window up to the closing barrier, so contention
 * between ranks (cores, memory bandwidth) is part of what is measured. */
#include "executor/backend_impl.h"
#include "executor/calibrate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph/clock.h"
#include "graph/model.h"
#include "costmodel/cost.h"
#include "costmodel/fit.h"
#include "graph/alloc.h"
#include "graph/json.h"

#define NGEMM 6
static const int64_t gemm_n[NGEMM] = {32, 64, 128, 256, 512, 1024};

/* the vector kernels the rate is measured on, and the streaming one */
enum { K_ADD, K_GELU, K_SOFTMAX, K_LN, NKERN };
static const char *const kern_op[NKERN] = {"add", "gelu", "softmax", "ln"};

/* each point is timed over this many windows of min_seconds and the median
 * counts: what the machine gives most of the time, the way `planner run`
 * reports the median step */
#define WINDOWS 5

#define NCOLL    4 /* all_reduce, all_gather, reduce_scatter, all_to_all */
#define MAXSIZES 32

/* the kernels whose own rate is measured against the fitted model (each op
 * of the `mid` graph, in this order): activations of 2 MiB, the size of a
 * small model's on a cpu */
enum { S_ADD, S_GELU, S_SOFTMAX, S_LN, S_DROPOUT, S_TRANSPOSE, NSCALE };

typedef struct calib {
	pl_backend *be;
	pl_calib_opts o;
	int64_t R;
	pl_graph *small, *big;  /* the kernels' graphs: cache-resident and streaming */
	pl_graph *mid;          /* the scaled kernels' */
	double scale_s[NSCALE]; /* forward + backward of mid's op k */
	int ngroups;
	int64_t group[PL_MAX_AB_SIZES];
	int nsizes;
	double sizes[MAXSIZES];
	double gemm_s[NGEMM]; /* per call */
	double kern_s[NKERN]; /* forward + backward on `small` (K_ADD: on `big`) */
	double overhead_s;    /* forward + backward on one element */
	double coll_s[NCOLL][PL_MAX_AB_SIZES][MAXSIZES];
	double *start, *end; /* per rank: the current window */
	double coll_b[NCOLL][PL_MAX_AB_SIZES][MAXSIZES];
} calib;

static void progress(calib *c, int64_t rank, const char *what)
{
	if (rank == 0 && c->o.progress)
		c->o.progress(c->o.ud, what);
}

static int barrier(calib *c, pl_comm *cm, int idx)
{
	float v = 0;
	return c->be->all_reduce(cm, idx, &v, 1, 0);
}

/* every member proposes a repetition count from its time for one call; the
 * group takes the largest */
static int agree_reps(calib *c, pl_comm *cm, int idx, double one_s, long *reps)
{
	float v = (float)(c->o.min_seconds / (one_s > 1e-9 ? one_s : 1e-9));
	if (c->be->all_reduce(cm, idx, &v, 1, 1))
		return -1;
	*reps = v < 1 ? 1 : v > 1e6f ? 1000000 : (long)ceilf(v);
	return 0;
}

/* Times once(arg) on members 0..n-1 of cm, all running it together: one
 * call sizes the window (the group agrees on the repetitions), then the
 * median of WINDOWS windows, per call, lands in *out on rank 0. A window spans
 * from the first member's start to the last member's end: ranks that share a
 * core do not start together, and a window timed by one rank alone would miss
 * the work others did before it was scheduled. */
static int measure(calib *c, int64_t rank, pl_comm *cm, int64_t n, int (*once)(void *arg),
                   void *arg, double *out)
{
	double t = pl_now();
	if (once(arg))
		return -1;
	long reps;
	if (agree_reps(c, cm, (int)rank, pl_now() - t, &reps) || barrier(c, cm, (int)rank))
		return -1;
	double w[WINDOWS];
	for (int win = 0; win < WINDOWS; win++) {
		c->start[rank] = pl_now();
		for (long r = 0; r < reps; r++)
			if (once(arg))
				return -1;
		c->end[rank] = pl_now();
		if (c->be->self >= 0) { /* processes: the longest member's window */
			float span = (float)(c->end[rank] - c->start[rank]);
			if (c->be->all_reduce(cm, (int)rank, &span, 1, 1))
				return -1;
			w[win] = span / (double)reps;
			continue; /* the all-reduce ended the window for every member */
		}
		if (barrier(c, cm, (int)rank))
			return -1;
		double lo = c->start[0], hi = c->end[0];
		for (int64_t r = 1; r < n; r++) {
			lo = fmin(lo, c->start[r]);
			hi = fmax(hi, c->end[r]);
		}
		w[win] = (hi - lo) / (double)reps;
		if (barrier(c, cm, (int)rank)) /* nobody starts the next window early */
			return -1;
	}
	for (int i = 1; i < WINDOWS; i++) /* insertion sort; the median counts */
		for (int j = i; j > 0 && w[j] < w[j - 1]; j--) {
			double x = w[j];
			w[j] = w[j - 1];
			w[j - 1] = x;
		}
	if (rank == 0)
		*out = w[WINDOWS / 2];
	return 0;
}

/* values spread over [-2, 2), like activations: transcendental functions
 * take their fast paths on tiny arguments */
static void fill(float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(pl_hash64(i) >> 40) * (4.0f / 16777216.0f) - 2.0f;
}

typedef struct gemm_arg {
	pl_backend *be;
	int64_t m;
	float *a, *b, *d;
} gemm_arg;

static int gemm_once(void *arg)
{
	gemm_arg *g = arg;
	g->be->gemm(0, 0, g->m, g->m, g->m, 1, g->a, g->m, g->b, g->m, 0, g->d, g->m);
	return 0;
}

static int phase_gemm(calib *c, int64_t rank, pl_comm *world)
{
	pl_backend *be = c->be;
	size_t n = (size_t)(gemm_n[NGEMM - 1] * gemm_n[NGEMM - 1]);
	gemm_arg g = {be, 0, be->alloc(be, rank, n), be->alloc(be, rank, n),
	              be->alloc(be, rank, n)};
	int rc = -1;
	if (!g.a || !g.b || !g.d)
		goto out;
	fill(g.a, n);
	fill(g.b, n);
	for (int i = 0; i < NGEMM; i++) {
		g.m = gemm_n[i];
		if (measure(c, rank, world, c->R, gemm_once, &g, &c->gemm_s[i]))
			goto out;
	}
	rc = 0;
out:
	be->release(be, rank, g.a);
	be->release(be, rank, g.b);
	be->release(be, rank, g.d);
	return rc;
}

/* local pieces of op k of graph g: its whole tensors (one element each if tiny) */
typedef struct kern {
	pl_kctx k;
	pl_xt in[PL_MAX_OP_INPUTS], out, dout, din[PL_MAX_OP_INPUTS];
	float *buf;
} kern;

static int kern_init(calib *c, int64_t rank, const pl_graph *g, int o, int tiny, kern *kn)
{
	const pl_op *op = &g->ops[o];
	memset(kn, 0, sizeof *kn);
	kn->k.g = g;
	kn->k.op = op;
	kn->k.gemm = c->be->gemm;
	kn->k.loss_share = 1;
	size_t total = 0;
	pl_xt *xs[2 * PL_MAX_OP_INPUTS + 2];
	const pl_tensor *ts[2 * PL_MAX_OP_INPUTS + 2];
	int nx = 0;
	for (int i = 0; i < op->ninputs; i++) {
		xs[nx] = &kn->in[i];
		ts[nx++] = &g->tensors[op->in[i]];
		xs[nx] = &kn->din[i];
		ts[nx++] = &g->tensors[op->in[i]];
	}
	xs[nx] = &kn->out;
	ts[nx++] = &g->tensors[op->out[0]];
	xs[nx] = &kn->dout;
	ts[nx++] = &g->tensors[op->out[0]];
	for (int i = 0; i < nx; i++) {
		pl_xt *x = xs[i];
		x->rank = ts[i]->rank;
		x->n = 1;
		for (int d = 0; d < x->rank; d++) {
			x->shape[d] = tiny ? 1 : ts[i]->shape[d];
			x->n *= (size_t)x->shape[d];
		}
		total += x->n;
	}
	if (!(kn->buf = c->be->alloc(c->be, rank, total)))
		return -1;
	fill(kn->buf, total);
	float *p = kn->buf;
	for (int i = 0; i < nx; i++) {
		xs[i]->v = p;
		p += xs[i]->n;
	}
	return 0;
}

/* one forward and one backward, as a training step runs them */
static int step_once(void *arg)
{
	kern *kn = arg;
	return pl_kernel_forward(&kn->k, kn->in, &kn->out) ||
	       pl_kernel_backward(&kn->k, kn->in, &kn->out, &kn->dout, kn->din);
}

static int time_kernel(calib *c, int64_t rank, pl_comm *world, const pl_graph *g, int o, int tiny,
                       double *out)
{
	kern kn;
	if (kern_init(c, rank, g, o, tiny, &kn))
		return -1;
	int rc = measure(c, rank, world, c->R, step_once, &kn, out);
	c->be->release(c->be, rank, kn.buf);
	return rc;
}

static int phase_kernels(calib *c, int64_t rank, pl_comm *world)
{
	for (int k = 0; k < NKERN; k++)
		if (time_kernel(c, rank, world, k == K_ADD ? c->big : c->small, k, 0,
		                &c->kern_s[k]))
			return -1;
	for (int k = 0; k < NSCALE; k++)
		if (time_kernel(c, rank, world, c->mid, k, 0, &c->scale_s[k]))
			return -1;
	return time_kernel(c, rank, world, c->small, K_ADD, 1, &c->overhead_s);
}

static const pl_coll coll_kind[NCOLL] = {PL_COLL_ALL_REDUCE, PL_COLL_ALL_GATHER,
                                         PL_COLL_REDUCE_SCATTER, PL_COLL_ALL_TO_ALL};

typedef struct coll_arg {
	pl_backend *be;
	pl_coll kind;
	pl_comm *cm;
	int idx;
	float *send, *recv;
	size_t count;
} coll_arg;

/* one collective on a message of `bytes` as nccl-tests counts it (all_reduce:
 * the buffer; all_gather: the gathered result; reduce_scatter, all_to_all:
 * the send buffer) */
static int coll_once(void *arg)
{
	coll_arg *a = arg;
	switch (a->kind) {
	case PL_COLL_ALL_REDUCE: return a->be->all_reduce(a->cm, a->idx, a->send, a->count, 0);
	case PL_COLL_ALL_GATHER:
		return a->be->all_gather(a->cm, a->idx, a->send, a->recv, a->count);
	case PL_COLL_REDUCE_SCATTER:
		return a->be->reduce_scatter(a->cm, a->idx, a->send, a->recv, a->count);
	case PL_COLL_ALL_TO_ALL:
		return a->be->all_to_all(a->cm, a->idx, a->send, a->recv, a->count);
	case PL_COLL_SEND_RECV: /* not measured as a collective of the group */
	case PL_COLL_COUNT: break;
	}
	return -1;
}

static int phase_colls(calib *c, int64_t rank, pl_comm *world)
{
	pl_backend *be = c->be;
	size_t cap = (size_t)(c->sizes[c->nsizes - 1] / 4) + 64;
	float *send = be->alloc(be, rank, cap), *recv = be->alloc(be, rank, cap);
	int rc = -1;
	if (!send || !recv)
		goto out;
	int64_t members[1 << 12];
	for (int gi = 0; gi < c->ngroups; gi++) {
		int64_t n = c->group[gi];
		for (int64_t r = 0; r < n; r++)
			members[r] = r;
		pl_comm *cm = rank < n ? be->comm(be, rank, members, (int)n) : NULL;
		if (rank < n && !cm)
			goto out;
		for (int k = 0; k < NCOLL && rank < n; k++) {
			char what[96];
			snprintf(what, sizeof what, "%s over %lld ranks",
			         pl_coll_name(coll_kind[k]), (long long)n);
			progress(c, rank, what);
			for (int s = 0; s < c->nsizes; s++) {
				/* elements per member's chunk (all_reduce: the whole buffer) */
				size_t chunk = (size_t)(c->sizes[s] / 4 / (k == 0 ? 1 : (double)n));
				coll_arg ca = {.be = be,
				               .kind = coll_kind[k],
				               .cm = cm,
				               .idx = (int)rank,
				               .send = send,
				               .recv = recv,
				               .count = chunk ? chunk : 1};
				if (measure(c, rank, cm, n, coll_once, &ca, &c->coll_s[k][gi][s]))
					goto out;
				if (rank == 0)
					c->coll_b[k][gi][s] =
					    4.0 * (double)ca.count * (k == 0 ? 1 : (double)n);
				if (k == 0) /* keep the all-reduced values small */
					fill(send, ca.count);
			}
		}
		if (barrier(c, world, (int)rank))
			goto out;
	}
	rc = 0;
out:
	be->release(be, rank, send);
	be->release(be, rank, recv);
	return rc;
}

static int calib_rank_phases(calib *c, int64_t rank)
{
	int64_t members[1 << 12];
	for (int64_t r = 0; r < c->R; r++)
		members[r] = r;
	pl_comm *world = c->be->comm(c->be, rank, members, (int)c->R);
	if (!world)
		return -1;
	progress(c, rank, "matrix products");
	if (phase_gemm(c, rank, world))
		return -1;
	progress(c, rank, "vector kernels and memory bandwidth");
	if (phase_kernels(c, rank, world))
		return -1;
	return c->R > 1 ? phase_colls(c, rank, world) : 0;
}

static int calib_rank(void *arg, int64_t rank)
{
	calib *c = arg;
	if (!calib_rank_phases(c, rank))
		return 0;
	/* out of memory here, or another rank failed: stop the others */
	if (!c->be->failed(c->be))
		c->be->fail(c->be, rank, "out of memory during calibration");
	return -1;
}

static pl_status kernel_graph(pl_graph **g, int64_t rows, int64_t cols, pl_err *err)
{
	char text[1536];
	snprintf(
	    text, sizeof text,
	    "{\"format\": \"planner.model/1\", \"name\": \"calibrate\", \"dtype\": \"float32\","
	    " \"tensors\": {\"x\": {\"shape\": [%lld, %lld], \"role\": \"param\"},"
	    " \"y\": {\"shape\": [%lld, %lld], \"role\": \"param\"},"
	    " \"g\": {\"shape\": [%lld], \"role\": \"param\"},"
	    " \"b\": {\"shape\": [%lld], \"role\": \"param\"}},"
	    " \"ops\": ["
	    "{\"name\": \"add\", \"type\": \"Add\", \"inputs\": [\"x\", \"y\"], \"outputs\": "
	    "[\"a\"]},"
	    "{\"name\": \"gelu\", \"type\": \"Gelu\", \"inputs\": [\"x\"], \"outputs\": [\"ge\"]},"
	    "{\"name\": \"softmax\", \"type\": \"Softmax\", \"inputs\": [\"x\"], \"outputs\": "
	    "[\"s\"],"
	    " \"attrs\": {\"axis\": -1}},"
	    "{\"name\": \"ln\", \"type\": \"LayerNormalization\", \"inputs\": [\"x\", \"g\", "
	    "\"b\"],"
	    " \"outputs\": [\"l\"], \"attrs\": {\"axis\": -1, \"epsilon\": 1e-5}}]}",
	    (long long)rows, (long long)cols, (long long)rows, (long long)cols, (long long)cols,
	    (long long)cols);
	return pl_graph_load_json(g, text, strlen(text), "calibrate", err);
}

/* the op rule's work of op k of g, unsplit */
static void unsplit_work(const pl_graph *g, int k, pl_opwork *w)
{
	int64_t ones[PL_MAX_LOOPS];
	for (int i = 0; i < PL_MAX_LOOPS; i++)
		ones[i] = 1;
	memset(w, 0, sizeof *w);
	pl_op_rule_get(g->ops[k].type)->work(g, &g->ops[k], ones, w);
}

/* The kernels measured one by one against the fitted model (S_*): an Add,
 * Gelu, Softmax, LayerNorm and Dropout of [1024, 512] and a Transpose of
 * [32, 32, 512] (attention's head shuffle) */
static pl_status scale_graph(pl_graph **g, pl_err *err)
{
	static const char text[] =
	    "{\"format\": \"planner.model/1\", \"name\": \"calibrate-kernels\", "
	    "\"dtype\": \"float32\", \"tensors\": {"
	    "\"x\": {\"shape\": [1024, 512], \"role\": \"param\"},"
	    "\"y\": {\"shape\": [1024, 512], \"role\": \"param\"},"
	    "\"g\": {\"shape\": [512], \"role\": \"param\"},"
	    "\"b\": {\"shape\": [512], \"role\": \"param\"},"
	    "\"z\": {\"shape\": [32, 32, 512], \"role\": \"param\"}}, \"ops\": ["
	    "{\"name\": \"add\", \"type\": \"Add\", \"inputs\": [\"x\", \"y\"], "
	    "\"outputs\": [\"a\"]},"
	    "{\"name\": \"gelu\", \"type\": \"Gelu\", \"inputs\": [\"x\"], \"outputs\": "
	    "[\"ge\"]},"
	    "{\"name\": \"softmax\", \"type\": \"Softmax\", \"inputs\": [\"x\"], "
	    "\"outputs\": [\"s\"], \"attrs\": {\"axis\": -1}},"
	    "{\"name\": \"ln\", \"type\": \"LayerNormalization\", \"inputs\": [\"x\", "
	    "\"g\", \"b\"], \"outputs\": [\"l\"], \"attrs\": {\"axis\": -1, \"epsilon\": "
	    "1e-5}},"
	    "{\"name\": \"dropout\", \"type\": \"Dropout\", \"inputs\": [\"x\"], "
	    "\"outputs\": [\"d\"], \"attrs\": {\"ratio\": 0.1}},"
	    "{\"name\": \"transpose\", \"type\": \"Transpose\", \"inputs\": [\"z\"], "
	    "\"outputs\": [\"t\"], \"attrs\": {\"perm\": [1, 0, 2]}}]}";
	return pl_graph_load_json(g, text, strlen(text), "calibrate", err);
}

/* seconds the fitted model gives op k of g, unsplit, forward plus backward
 * (without a kernel scale: what the scale corrects) */
static double model_seconds(const pl_cluster *cl, const pl_graph *g, int k)
{
	pl_opwork w;
	double fwd, bwd;
	unsplit_work(g, k, &w);
	pl_cost_work_seconds(cl, PL_DT_FLOAT32, &w, &fwd, &bwd);
	return fwd + bwd;
}

/* the op rule's work of op k of g, unsplit, forward plus backward */
static void step_work(const pl_graph *g, int k, double *vec_flops, double *bytes)
{
	pl_opwork w;
	unsplit_work(g, k, &w);
	*vec_flops = w.vec_flops_fwd + w.vec_flops_bwd;
	*bytes = w.bytes_fwd + w.bytes_bwd;
}

static void device_name(char *out, size_t len)
{
	snprintf(out, len, "cpu");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		const char *colon = strchr(line, ':');
		if (!strncmp(line, "model name", 10) && colon) {
			colon++;
			while (*colon == ' ')
				colon++;
			snprintf(out, len, "%s", colon);
			out[strcspn(out, "\n")] = 0;
			break;
		}
	}
	fclose(f);
}

static cJSON *points(const double *bytes, const double *secs, int n, const char *xk)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, xk, bytes[i]);
		cJSON_AddNumberToObject(e, "seconds", secs[i]);
		pl_json_push(a, e);
	}
	return a;
}

static pl_status fit_cluster(calib *c, pl_cluster *cl, cJSON *raw, pl_err *err)
{
	memset(cl, 0, sizeof *cl);
	double f[NGEMM], rate[NGEMM];
	for (int i = 0; i < NGEMM; i++) {
		double m = (double)gemm_n[i];
		f[i] = 2 * m * m * m;
		rate[i] = f[i] / c->gemm_s[i];
	}
	double peak, half;
	if (pl_fit_rate_curve(f, rate, NGEMM, &peak, &half))
		return pl_err_set(err, PL_EDEVICE, "calibrate: the GEMM rates do not fit a curve");
	for (int d = 0; d < PL_DT_COUNT; d++)
		cl->peak_flops[d] = peak; /* the backend computes every dtype in fp32 */
	cl->gemm_eff_max = 1;
	cl->gemm_half_flops = half;
	double vf, by;
	step_work(c->big, K_ADD, &vf, &by);
	cl->memory_bandwidth = by / c->kern_s[K_ADD];
	cl->bw_eff = 1;
	double vflops = 0, vsecs = 0;
	for (int k = K_GELU; k < NKERN; k++) {
		step_work(c->small, k, &vf, &by);
		vflops += vf;
		vsecs += c->kern_s[k];
	}
	cl->vector_eff = vflops / vsecs / peak;
	cl->kernel_overhead_s = c->overhead_s / 2; /* a forward and a backward call */
	double mem = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	cl->memory_bytes = mem > 0 ? mem / (double)c->R : 1e9;
	cl->memory_reserve = 0; /* host memory: no CUDA context, NCCL or caching allocator */
	cl->nodes = 1;
	cl->devices_per_node = c->R;
	device_name(cl->device_name, sizeof cl->device_name);
	cl->link[PL_LINK_INTRA] = cl->link[PL_LINK_INTER] = (pl_ab){1e-5, 1e-10};

	cJSON *jg = cJSON_AddArrayToObject(raw, "gemm");
	for (int i = 0; i < NGEMM; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "m", (double)gemm_n[i]);
		cJSON_AddNumberToObject(e, "n", (double)gemm_n[i]);
		cJSON_AddNumberToObject(e, "k", (double)gemm_n[i]);
		cJSON_AddNumberToObject(e, "seconds", c->gemm_s[i]);
		cJSON_AddNumberToObject(e, "flops_per_second", rate[i]);
		pl_json_push(jg, e);
	}
	cJSON *jk = cJSON_AddObjectToObject(raw, "kernels");
	for (int k = 0; k < NKERN; k++) {
		const pl_graph *g = k == K_ADD ? c->big : c->small;
		step_work(g, k, &vf, &by);
		cJSON *e = cJSON_AddObjectToObject(jk, kern_op[k]);
		cJSON_AddNumberToObject(e, "elements",
		                        (double)pl_tensor_elems(&g->tensors[g->ops[k].out[0]]));
		cJSON_AddNumberToObject(e, "seconds", c->kern_s[k]);
		cJSON_AddNumberToObject(e, "vector_flops", vf);
		cJSON_AddNumberToObject(e, "bytes", by);
	}
	cJSON_AddNumberToObject(raw, "kernel_call_seconds", c->overhead_s);
	/* each scaled kernel: measured over what the fit above prices it at */
	cJSON *js = cJSON_AddObjectToObject(raw, "kernel_scale");
	for (int k = 0; k < NSCALE; k++) {
		const pl_op *op = &c->mid->ops[k];
		double model = model_seconds(cl, c->mid, k);
		if (!(model > 0) || !(c->scale_s[k] > 0))
			continue;
		cl->kernel_scale[op->type] = c->scale_s[k] / model;
		cJSON *e = cJSON_AddObjectToObject(js, pl_optype_name(op->type));
		cJSON_AddNumberToObject(e, "elements",
		                        (double)pl_tensor_elems(&c->mid->tensors[op->out[0]]));
		cJSON_AddNumberToObject(e, "seconds", c->scale_s[k]);
		cJSON_AddNumberToObject(e, "model_seconds", model);
	}

	cJSON *jc = cJSON_AddObjectToObject(raw, "collectives");
	for (int k = 0; k < NCOLL && c->R > 1; k++) {
		pl_ab_list *l = &cl->coll[coll_kind[k]][PL_LINK_INTRA];
		cJSON *arr = cJSON_AddArrayToObject(jc, pl_coll_name(coll_kind[k]));
		for (int gi = 0; gi < c->ngroups; gi++) {
			int64_t n = c->group[gi];
			double bus[MAXSIZES];
			for (int s = 0; s < c->nsizes; s++)
				bus[s] = c->coll_b[k][gi][s] * pl_bus_factor(coll_kind[k], n);
			pl_ab ab;
			if (pl_fit_ab(bus, c->coll_s[k][gi], c->nsizes, &ab))
				return pl_err_set(
				    err, PL_EDEVICE,
				    "calibrate: %s over %lld ranks: the times do not fit "
				    "a line",
				    pl_coll_name(coll_kind[k]), (long long)n);
			if (!(ab.beta > 0))
				ab.beta = 1e-12;
			l->ranks[l->n] = n;
			l->ab[l->n++] = ab;
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "ranks", (double)n);
			pl_json_add(e, "points",
			            points(c->coll_b[k][gi], c->coll_s[k][gi], c->nsizes, "bytes"));
			pl_json_push(arr, e);
		}
		if (k == 0) /* the link default: all-reduce over the whole node */
			cl->link[PL_LINK_INTRA] = cl->link[PL_LINK_INTER] = l->ab[l->n - 1];
	}
	return PL_OK;
}

pl_status pl_calibrate(pl_backend *be, const pl_calib_opts *o, pl_cluster *out, cJSON **raw,
                       pl_err *err)
{
	if (raw)
		*raw = NULL;
	/* host buffers: the cpu backend's threads, or its processes (each rank
	 * reads only its own) */
	if (!(be->caps & PL_CAP_HOST_MEMORY) && !(be->self >= 0 && be->gemm))
		return pl_err_set(err, PL_EDEVICE,
		                  "calibrate: the %s backend is not supported (host memory needed)",
		                  be->name);
	if (be->nranks > (1 << 12))
		return pl_err_set(err, PL_EINVAL, "calibrate: at most 4096 ranks");
	calib *c = pl_calloc(1, sizeof *c);
	if (!c)
		return pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
	c->be = be;
	c->o = *o;
	if (!(c->o.min_seconds > 0))
		c->o.min_seconds = 0.02;
	if (!(c->o.max_bytes > 0))
		c->o.max_bytes = 64.0 * 1024 * 1024;
	c->R = be->nranks;
	/* group sizes: 2..8, then powers of two, then all ranks */
	for (int64_t n = 2; n <= c->R && c->ngroups < PL_MAX_AB_SIZES - 1;
	     n = n < 8 ? n + 1 : n * 2)
		c->group[c->ngroups++] = n;
	if (c->R > 1 && c->group[c->ngroups - 1] != c->R)
		c->group[c->ngroups++] = c->R;
	for (double s = 8; s <= c->o.max_bytes && c->nsizes < MAXSIZES; s *= 4)
		c->sizes[c->nsizes++] = s;
	pl_status st;
	cJSON *r = NULL;
	c->start = pl_calloc((size_t)c->R, sizeof *c->start);
	c->end = pl_calloc((size_t)c->R, sizeof *c->end);
	if (!c->start || !c->end) {
		st = pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
		goto done;
	}
	if ((st = kernel_graph(&c->small, 128, 256, err)) ||
	    (st = kernel_graph(&c->big, 4096, 1024, err)) || (st = scale_graph(&c->mid, err)))
		goto done;
	char msg[512] = "";
	if (be->launch(be, calib_rank, c, msg, sizeof msg)) {
		st = pl_err_set(err, PL_EDEVICE, "calibrate: %s", msg);
		goto done;
	}
	if (be->self > 0) { /* processes: rank 0 holds the measurements and fits */
		st = PL_OK;
		goto done;
	}
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "backend", be->name);
	cJSON_AddNumberToObject(r, "ranks", (double)c->R);
	if ((st = fit_cluster(c, out, r, err)))
		goto done;
	time_t now = time(NULL);
	char day[32];
	strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
	int procs = be->self >= 0;
	snprintf(out->name, sizeof out->name, "%s-x%lld", procs ? "cpu-mpi" : be->name,
	         (long long)c->R);
	snprintf(out->source, sizeof out->source, "planner calibrate --backend cpu, %lld %s, %s",
	         (long long)c->R, procs ? "MPI processes" : "ranks", day);
	if (raw) {
		*raw = r;
		r = NULL;
	}
done:
	cJSON_Delete(r);
	pl_graph_free(c->small);
	pl_graph_free(c->big);
	pl_graph_free(c->mid);
	free(c->start);
	free(c->end);
	free(c);
	return st;
}
