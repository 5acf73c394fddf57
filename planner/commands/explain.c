/* planner explain: a checkpoint's totals, communication, memory and per-op
 * table, --diff of two plans, --json, and the frameworks that can run it. */
#include "planner/commands/commands.h"

/* A checkpoint's communication by collective and link class (its
 * cost.communication_by_collective) as rows: index k * PL_LINK_COUNT + l for
 * collective k on link l, PL_COMM_ROWS - 1 for the local slices. Unknown
 * entries are skipped. Returns 0 when the checkpoint has none (written
 * before it, or by hand). */
#define PL_COMM_ROWS (PL_COLL_COUNT * PL_LINK_COUNT + 1)

/* row r's collective and link class, as the checkpoint names them */
static void comm_row_keys(int r, const char **coll, const char **link)
{
	int slice = r == PL_COMM_ROWS - 1;
	*coll = slice ? "slice" : pl_coll_name((pl_coll)(r / PL_LINK_COUNT));
	*link = slice ? "local" : pl_link_name(r % PL_LINK_COUNT);
}

static int comm_rows(const cJSON *ck, double *sec, double *bytes, double *hidden)
{
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(ck, "cost");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(cost, "communication_by_collective"), *e;
	for (int r = 0; r < PL_COMM_ROWS; r++)
		sec[r] = bytes[r] = 0;
	*hidden = pl_json_num(cost, "communication_hidden_seconds", 0);
	if (!cJSON_IsArray(a))
		return 0;
	cJSON_ArrayForEach (e, a) {
		const char *c = cJSON_GetStringValue(
		               cJSON_GetObjectItemCaseSensitive(e, "collective")),
		           *l = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "link"));
		int r = -1;
		for (int k = 0; c && l && r < 0 && k < PL_COMM_ROWS; k++) {
			const char *kc, *kl;
			comm_row_keys(k, &kc, &kl);
			if (!strcmp(c, kc) && !strcmp(l, kl))
				r = k;
		}
		if (r < 0)
			continue;
		sec[r] += pl_json_num(e, "seconds", 0);
		bytes[r] += pl_json_num(e, "bus_bytes", 0);
	}
	return 1;
}

static void comm_row_name(int r, char *buf, size_t n)
{
	const char *c, *l;
	comm_row_keys(r, &c, &l);
	snprintf(buf, n, "%-15s %-11s", c, l);
}

/* explain: where the communication goes (the bottleneck stage's, per device
 * a step) and, for a pipelined plan, every stage's memory by category */
/* whether the plan hides collectives beside the compute (the tensor-parallel
 * ones or the parameter gathers), not only behind the backward */
static int beside_compute(const cJSON *ck)
{
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(ck, "pipeline");
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pp, "tp_comm_overlap")) ||
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pp, "overlap_param_gather"));
}

static void print_comm_memory(const cJSON *ck, FILE *out)
{
	double sec[PL_COMM_ROWS], bytes[PL_COMM_ROWS], hidden;
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(ck, "cost");
	if (comm_rows(ck, sec, bytes, &hidden)) {
		fprintf(out, "communication by collective and link class (per device a step%s):\n",
		        cJSON_GetObjectItemCaseSensitive(ck, "pipeline") ? ", bottleneck stage"
		                                                         : "");
		fprintf(out, "  %-15s %-11s %12s %12s\n", "collective", "link", "seconds",
		        "bus bytes");
		for (int r = 0; r < PL_COMM_ROWS; r++) {
			if (!(sec[r] > 0))
				continue;
			char name[64], b[32];
			comm_row_name(r, name, sizeof name);
			pl_cli_fmt_bytes(bytes[r], b, sizeof b);
			fprintf(out, "  %s %12.6f %12s\n", name, sec[r],
			        r == PL_COMM_ROWS - 1 ? "-" : b);
		}
		if (hidden > 0)
			fprintf(out, "  %-27s %12.6f\n",
			        beside_compute(ck) ? "hidden beside the compute"
			                           : "hidden behind the backward",
			        -hidden);
		fprintf(out, "  %-27s %12.6f\n", "= communication",
		        pl_json_num(cost, "communication_seconds", 0));
	}
	const cJSON *sm = cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(ck, "pipeline"), "stage_memory_bytes"),
	            *e;
	if (!cJSON_IsArray(sm))
		return;
	fprintf(out,
	        "memory per device by stage (the peak stage's, with the reserve, is the peak):\n");
	fprintf(out, "  %-6s %12s %12s %17s %12s %12s\n", "stage", "weights", "gradients",
	        "optimizer_states", "activations", "transient");
	int k = 0;
	cJSON_ArrayForEach (e, sm) {
		char c[5][32];
		for (int j = 0; j < 5; j++)
			pl_cli_fmt_bytes(pl_json_num(e, pl_ckpt_mem_names[j], 0), c[j],
			                 sizeof c[j]);
		fprintf(out, "  %-6d %12s %12s %17s %12s %12s\n", k++, c[0], c[1], c[2], c[3],
		        c[4]);
	}
}

/* What pl_cli_explain_diff sums of plans a and b besides its JSON */
typedef struct diff_sums {
	double dt, dm; /* the per-op sums of the time's and the memory's differences */
	int changed, total;
	double step_d, mem_d, comm_d; /* the totals' differences */
	int have_comm;                /* both have communication by collective */
	double ha, hb;                /* a's and b's communication hidden behind the backward */
} diff_sums;

/* op x of plan a against y of b, summed into its part's entry of parts */
static void diff_part(cJSON *parts, const cJSON *x, int same, double t, double m)
{
	const char *pn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "part"));
	if (!pn)
		return;
	cJSON *pe = cJSON_GetObjectItemCaseSensitive(parts, pn);
	if (!pe) {
		pe = cJSON_AddObjectToObject(parts, pn);
		cJSON_AddNumberToObject(pe, "ops", 0);
		cJSON_AddNumberToObject(pe, "ops_changed", 0);
		cJSON_AddNumberToObject(pe, "seconds_delta", 0);
		cJSON_AddNumberToObject(pe, "memory_bytes_delta", 0);
	}
	const char *k[4] = {"ops", "ops_changed", "seconds_delta", "memory_bytes_delta"};
	double add[4] = {1, !same, t, m};
	for (int j = 0; pe && j < 4; j++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(pe, k[j]);
		if (v)
			cJSON_SetNumberValue(v, v->valuedouble + add[j]);
	}
}

/* Every op of a against b's of the name: out.ops (the ops that differ),
 * out.parts, the sums in d; an error where b lacks one */
static pl_status diff_ops(const cJSON *a, const cJSON *b, const char *pa, const char *pb,
                          cJSON *out, diff_sums *d, pl_err *err)
{
	const cJSON *ia = cJSON_GetObjectItemCaseSensitive(a, "parallel_strategy_item"),
	            *ib = cJSON_GetObjectItemCaseSensitive(b, "parallel_strategy_item");
	cJSON *ops = cJSON_AddArrayToObject(out, "ops");
	/* per part of the model (the ops' "part"), the ops' sums */
	cJSON *parts = cJSON_CreateObject();
	const cJSON *x;
	cJSON_ArrayForEach (x, ia) {
		const cJSON *y = cJSON_GetObjectItemCaseSensitive(ib, x->string);
		d->total++;
		if (!y) {
			cJSON_Delete(parts);
			return pl_err_set(err, PL_EINVAL, "%s: op '%s' is not in %s", pa, x->string,
			                  pb);
		}
		char s1[256], s2[256];
		pl_cli_fmt_strategy(cJSON_GetObjectItemCaseSensitive(x, "parallel_strategy"), s1,
		                    sizeof s1);
		pl_cli_fmt_strategy(cJSON_GetObjectItemCaseSensitive(y, "parallel_strategy"), s2,
		                    sizeof s2);
		double t = pl_json_num(y, "compute_seconds", 0) +
		           pl_json_num(y, "communication_seconds", 0) -
		           pl_json_num(x, "compute_seconds", 0) -
		           pl_json_num(x, "communication_seconds", 0);
		double m = pl_json_num(y, "memory_bytes", 0) - pl_json_num(x, "memory_bytes", 0);
		d->dt += t;
		d->dm += m;
		int stage_a = (int)pl_json_num(x, "stage", 0),
		    stage_b = (int)pl_json_num(y, "stage", 0);
		int same = !strcmp(s1, s2) && stage_a == stage_b && t == 0 && m == 0;
		diff_part(parts, x, same, t, m);
		if (same)
			continue;
		d->changed++;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "op", x->string);
		cJSON_AddStringToObject(o, "a", s1);
		cJSON_AddStringToObject(o, "b", s2);
		cJSON_AddNumberToObject(o, "stage_a", stage_a);
		cJSON_AddNumberToObject(o, "stage_b", stage_b);
		cJSON_AddNumberToObject(o, "seconds_delta", t);
		cJSON_AddNumberToObject(o, "memory_bytes_delta", m);
		pl_json_push(ops, o);
	}
	if (cJSON_GetArraySize(parts) > 0)
		pl_json_add(out, "parts", parts);
	else
		cJSON_Delete(parts);
	return PL_OK;
}

/* The totals' differences into out and d: communication by collective and
 * link class (the rows' deltas less the hidden part's add up to the
 * communication's), the step's and the peak memory's, and their rests */
static void diff_totals(const cJSON *a, const cJSON *b, cJSON *out, diff_sums *d)
{
	const cJSON *ca = cJSON_GetObjectItemCaseSensitive(a, "cost"),
	            *cb = cJSON_GetObjectItemCaseSensitive(b, "cost");
	d->step_d = pl_json_num(cb, "step_seconds", NAN) - pl_json_num(ca, "step_seconds", NAN);
	d->mem_d =
	    pl_json_num(cb, "peak_memory_bytes", NAN) - pl_json_num(ca, "peak_memory_bytes", NAN);
	double sa_[PL_COMM_ROWS], ba_[PL_COMM_ROWS], sb_[PL_COMM_ROWS], bb_[PL_COMM_ROWS];
	d->have_comm = comm_rows(a, sa_, ba_, &d->ha) && comm_rows(b, sb_, bb_, &d->hb);
	d->comm_d = pl_json_num(cb, "communication_seconds", NAN) -
	            pl_json_num(ca, "communication_seconds", NAN);
	cJSON_AddNumberToObject(out, "communication_seconds_delta", d->comm_d);
	if (d->have_comm) {
		cJSON *cl = cJSON_AddArrayToObject(out, "communication");
		for (int r = 0; r < PL_COMM_ROWS; r++) {
			if (!(sa_[r] > 0) && !(sb_[r] > 0))
				continue;
			cJSON *o = cJSON_CreateObject();
			const char *c, *l;
			comm_row_keys(r, &c, &l);
			cJSON_AddStringToObject(o, "collective", c);
			cJSON_AddStringToObject(o, "link", l);
			cJSON_AddNumberToObject(o, "a_seconds", sa_[r]);
			cJSON_AddNumberToObject(o, "b_seconds", sb_[r]);
			cJSON_AddNumberToObject(o, "seconds_delta", sb_[r] - sa_[r]);
			cJSON_AddNumberToObject(o, "bus_bytes_delta", bb_[r] - ba_[r]);
			pl_json_push(cl, o);
		}
		cJSON_AddNumberToObject(out, "communication_hidden_seconds_delta", d->hb - d->ha);
	}
	cJSON_AddNumberToObject(out, "step_seconds_delta", d->step_d);
	cJSON_AddNumberToObject(out, "ops_seconds_delta", d->dt);
	cJSON_AddNumberToObject(out, "rest_seconds_delta", d->step_d - d->dt);
	cJSON_AddNumberToObject(out, "peak_memory_bytes_delta", d->mem_d);
	cJSON_AddNumberToObject(out, "ops_memory_bytes_delta", d->dm);
	cJSON_AddNumberToObject(out, "rest_memory_bytes_delta", d->mem_d - d->dm);
}

/* the text of out.parts and out.ops */
static void print_diff_ops(const cJSON *out, const diff_sums *d)
{
	const cJSON *pe, *x;
	if (cJSON_GetObjectItem(out, "parts"))
		printf("\nby part of the model\n%-12s %12s %12s %12s\n", "part", "ops differ",
		       "time ms", "memory");
	cJSON_ArrayForEach (pe, cJSON_GetObjectItem(out, "parts")) {
		char mb[32], n[32];
		double m = pl_json_num(pe, "memory_bytes_delta", 0);
		pl_cli_fmt_bytes(fabs(m), mb, sizeof mb);
		snprintf(n, sizeof n, "%g/%g", pl_json_num(pe, "ops_changed", 0),
		         pl_json_num(pe, "ops", 0));
		printf("%-12s %12s %+12.4f %s%11s\n", pe->string, n,
		       1e3 * pl_json_num(pe, "seconds_delta", 0), m < 0 ? "-" : "+", mb);
	}
	printf("\n%d of %d ops differ\n%-28s %-28s %-28s %8s %12s %12s\n", d->changed, d->total,
	       "op", "A", "B", "stage", "time ms", "memory");
	cJSON_ArrayForEach (x, cJSON_GetObjectItem(out, "ops")) {
		char mb[32], st2[40];
		double m = pl_json_num(x, "memory_bytes_delta", 0);
		pl_cli_fmt_bytes(fabs(m), mb, sizeof mb);
		snprintf(st2, sizeof st2, "%g>%g", pl_json_num(x, "stage_a", 0),
		         pl_json_num(x, "stage_b", 0));
		printf("%-28s %-28s %-28s %8s %+12.4f %s%11s\n",
		       cJSON_GetStringValue(cJSON_GetObjectItem(x, "op")),
		       cJSON_GetStringValue(cJSON_GetObjectItem(x, "a")),
		       cJSON_GetStringValue(cJSON_GetObjectItem(x, "b")), st2,
		       1e3 * pl_json_num(x, "seconds_delta", 0), m < 0 ? "-" : "+", mb);
	}
}

/* the text of out.communication, then the step's and the peak memory's sums */
static void print_diff_totals(const cJSON *a, const cJSON *b, const cJSON *out, const diff_sums *d)
{
	const cJSON *x;
	if (d->have_comm) {
		printf("\ncommunication by collective and link class (per device a step)\n"
		       "%-15s %-11s %12s %12s %12s %14s\n",
		       "collective", "link", "A s", "B s", "delta s", "bus bytes");
		cJSON_ArrayForEach (x, cJSON_GetObjectItem(out, "communication")) {
			double bd = pl_json_num(x, "bus_bytes_delta", 0);
			char bb[32];
			pl_cli_fmt_bytes(fabs(bd), bb, sizeof bb);
			printf("%-15s %-11s %12.6f %12.6f %+12.6f %s%13s\n",
			       cJSON_GetStringValue(cJSON_GetObjectItem(x, "collective")),
			       cJSON_GetStringValue(cJSON_GetObjectItem(x, "link")),
			       pl_json_num(x, "a_seconds", 0), pl_json_num(x, "b_seconds", 0),
			       pl_json_num(x, "seconds_delta", 0), bd < 0 ? "-" : "+", bb);
		}
		if (d->ha > 0 || d->hb > 0)
			printf("%-27s %12.6f %12.6f %+12.6f\n", "hidden behind the backward",
			       -d->ha, -d->hb, d->ha - d->hb);
		printf("%-27s %12.6f %12.6f %+12.6f\n", "= communication",
		       pl_json_num(cJSON_GetObjectItemCaseSensitive(a, "cost"),
		                   "communication_seconds", 0),
		       pl_json_num(cJSON_GetObjectItemCaseSensitive(b, "cost"),
		                   "communication_seconds", 0),
		       d->comm_d);
	}
	double dm = d->dm, mem_d = d->mem_d;
	char m1[32], m2[32], m3[32];
	pl_cli_fmt_bytes(fabs(dm), m1, sizeof m1);
	pl_cli_fmt_bytes(fabs(mem_d - dm), m2, sizeof m2);
	pl_cli_fmt_bytes(fabs(mem_d), m3, sizeof m3);
	printf("\nstep: ops %+.6f s + pipeline and schedule (bubble, stage balance) %+.6f s = "
	       "%+.6f s\n",
	       d->dt, d->step_d - d->dt, d->step_d);
	printf("peak memory: ops %s%s + the rest (peak stage, in-flight micro-batches, "
	       "transient, reserve) %s%s = %s%s\n",
	       dm < 0 ? "-" : "+", m1, mem_d - dm < 0 ? "-" : "+", m2, mem_d < 0 ? "-" : "+", m3);
}

/* What differs between plans a and b of one model: the totals and their
 * differences; per op, the strategy and stage and the differences of its
 * time and memory; and the rest of each difference (what the per-op
 * numbers do not add up to: the pipeline's bubble and stage balance, the
 * peak stage, the transient bytes, the reserve), so that the lines add up
 * to the totals'. The JSON is made first and the text printed from it, so
 * that the two cannot disagree. label_a, label_b: how to name the plans in
 * the text (NULL: their paths) */
int pl_cli_explain_diff(const char *pa, const char *label_a, const char *pb, const char *label_b,
                        int json)
{
	pl_err err = {{0}};
	cJSON *a = NULL, *b = NULL, *out = NULL;
	pl_status st;
	diff_sums d = {0};
	if ((st = pl_cli_read_ckpt(pa, &a, &err)) || (st = pl_cli_read_ckpt(pb, &b, &err)))
		goto done;
	const char *sa = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	               cJSON_GetObjectItemCaseSensitive(a, "model"), "sha256")),
	           *sb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	               cJSON_GetObjectItemCaseSensitive(b, "model"), "sha256"));
	if (sa && sb && strcmp(sa, sb)) {
		st = pl_err_set(&err, PL_EINVAL,
		                "%s and %s are plans of different models (model.sha256 %s and %s)",
		                pa, pb, sa, sb);
		goto done;
	}
	out = cJSON_CreateObject();
	if ((st = diff_ops(a, b, pa, pb, out, &d, &err)))
		goto done;
	diff_totals(a, b, out, &d);
	if (json) {
		st = pl_cli_json_line(out, &err);
		out = NULL;
		goto done;
	}
	printf("A: %s\n", label_a ? label_a : pa);
	pl_cli_print_totals(a, stdout);
	printf("B: %s\n", label_b ? label_b : pb);
	pl_cli_print_totals(b, stdout);
	print_diff_ops(out, &d);
	print_diff_totals(a, b, out, &d);
done:
	cJSON_Delete(out);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return st ? pl_cli_fail(st, &err) : 0;
}

/* Whether each framework export writes can state the plan: per framework
 * (pl_export_name order) runs[i] = 1, or 0 and why[i] (the caller frees)
 * the reason export gives; -1 out of memory. */
static int framework_verdicts(const cJSON *ck, int *runs, char **why)
{
	int n = pl_export_count();
	char *text = cJSON_PrintUnformatted(ck);
	if (!text)
		return -1;
	for (int i = 0; i < n; i++) {
		char *out = NULL;
		pl_err e = {{0}};
		pl_status st =
		    pl_export_text(text, strlen(text), "plan", pl_export_name(i), 0, &out, &e);
		free(out);
		runs[i] = st == PL_OK;
		why[i] = NULL;
		if (st) { /* the reason, without "plan: FRAMEWORK cannot state this plan: " */
			const char *m = strstr(e.msg, "cannot state this plan: ");
			m = m ? m + strlen("cannot state this plan: ")
			      : e.msg + (strncmp(e.msg, "plan: ", 6) ? 0 : 6);
			why[i] = pl_strdup(m);
		}
	}
	free(text);
	return 0;
}

/* explain: "frameworks (planner export --to F):" and a line each */
static void print_frameworks(const cJSON *ck, FILE *out)
{
	int n = pl_export_count(), runs[16];
	char *why[16];
	if (n > 16 || framework_verdicts(ck, runs, why))
		return;
	fputs("frameworks ('planner export CKPT --to F' writes the plan as F runs it):\n", out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "  %-19s %s%s\n", pl_export_name(i),
		        runs[i] ? "can run it" : "cannot: ",
		        runs[i]  ? ""
		        : why[i] ? why[i]
		                 : "(out of memory)");
		free(why[i]);
	}
}

/* explain --json: the checkpoint's blocks a reader of the table wants, and
 * the table's rows as an array in the model's order; every value copied
 * from the checkpoint (checked by pl_cli_read_ckpt), none computed here */
static pl_status explain_json(const cJSON *ck, const char *path, pl_err *err)
{
	static const char *const blocks[] = {"model",    "cluster", "search", "cost",
	                                     "pipeline", "groups",  "parts"};
	static const char *const fields[] = {"type",
	                                     "stage",
	                                     "parallel_strategy",
	                                     "compute_seconds",
	                                     "communication_seconds",
	                                     "memory_bytes",
	                                     "flops_forward",
	                                     "flops_backward"};
	cJSON *o = cJSON_CreateObject(), *ops = NULL;
	int ok = o && cJSON_AddStringToObject(o, "format", "planner.explain/1") &&
	         cJSON_AddStringToObject(o, "checkpoint", path);
	for (size_t b = 0; ok && b < sizeof blocks / sizeof *blocks; b++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(ck, blocks[b]);
		cJSON *c = v ? cJSON_Duplicate(v, 1) : NULL;
		ok = !v || (c && cJSON_AddItemToObject(o, blocks[b], c));
		if (!ok)
			cJSON_Delete(c);
	}
	/* per framework: whether export can state the plan, and why not */
	int nf = pl_export_count(), runs[16];
	char *why[16];
	cJSON *fw = ok && nf <= 16 ? cJSON_AddObjectToObject(o, "frameworks") : NULL;
	if (fw && !framework_verdicts(ck, runs, why)) {
		for (int i = 0; i < nf; i++) {
			cJSON *v = cJSON_AddObjectToObject(fw, pl_export_name(i));
			ok = ok && v && cJSON_AddBoolToObject(v, "runs", runs[i]) &&
			     (runs[i] || (why[i] && cJSON_AddStringToObject(v, "why", why[i])));
			free(why[i]);
		}
	} else {
		ok = 0;
	}
	ok = ok && (ops = cJSON_AddArrayToObject(o, "ops"));
	const cJSON *it;
	cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(ck, "parallel_strategy_item")) {
		cJSON *r = ok ? cJSON_CreateObject() : NULL;
		ok = r && cJSON_AddItemToArray(ops, r) &&
		     cJSON_AddStringToObject(r, "name", it->string);
		for (size_t f = 0; ok && f < sizeof fields / sizeof *fields; f++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, fields[f]);
			cJSON *c = v ? cJSON_Duplicate(v, 1) : NULL;
			ok = !v || (c && cJSON_AddItemToObject(r, fields[f], c));
			if (!ok)
				cJSON_Delete(c);
		}
		if (!ok)
			break;
	}
	if (!ok) {
		cJSON_Delete(o);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	return pl_cli_json_line(o, err);
}

int pl_cmd_explain(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(
		    "usage: planner explain CKPT [--json]\n"
		    "       planner explain --diff A.json B.json [--json]\n\n"
		    "Prints the totals, the communication by collective and link class, every\n"
		    "stage's memory by category, and a per-op table of a strategy checkpoint\n"
		    "written by 'planner search': strategy, compute and communication\n"
		    "milliseconds, memory per device. With --diff, what differs between two\n"
		    "plans of one model: the totals, the differences summed by part of the model\n"
		    "(embedding, attention, mlp or experts, head), every op whose strategy, "
		    "stage,\n"
		    "time or memory differs, the communication's difference by collective and\n"
		    "link class, and the rest of the step's and the peak memory's difference\n"
		    "(pipeline bubble and balance, peak stage, transient, reserve), so that the\n"
		    "lines add up. --json prints either as one JSON object: for one checkpoint\n"
		    "its model, cluster, search, cost (totals, communication by collective and\n"
		    "link class, memory by category, utilisation), pipeline, groups and parts,\n"
		    "and \"ops\": the table's rows in the model's order (name, type, stage,\n"
		    "strategy, compute_seconds, communication_seconds, memory_bytes,\n"
		    "flops_forward, flops_backward), every number the checkpoint's.\n",
		    stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--diff")) {
		int json = argc == 5 && !strcmp(argv[4], "--json");
		if (argc != 4 && !json)
			return pl_cli_usage("explain", "--diff: expected two CKPT files%s", "");
		return pl_cli_explain_diff(argv[2], NULL, argv[3], NULL, json);
	}
	const char *in = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return pl_cli_usage("explain", "unknown option '%s'", argv[i]);
		else if (in)
			return pl_cli_usage("explain",
			                    "expected one CKPT file, got '%s' and '%s' (two plans "
			                    "compare with --diff A B)",
			                    in, argv[i]);
		else
			in = argv[i];
	}
	if (!in)
		return pl_cli_usage("explain",
		                    "expected one CKPT file (a strategy checkpoint "
		                    "written by 'planner search')%s",
		                    json ? " before or after --json" : "");
	pl_err err = {{0}};
	cJSON *ck = NULL;
	pl_status st = pl_cli_read_ckpt(in, &ck, &err);
	if (st)
		return pl_cli_fail(st, &err);
	if (json) {
		st = explain_json(ck, in, &err);
		cJSON_Delete(ck);
		return st ? pl_cli_fail(st, &err) : 0;
	}
	pl_cli_print_totals(ck, stdout);
	print_comm_memory(ck, stdout);
	print_frameworks(ck, stdout);
	pl_cli_print_table(ck, stdout, 0);
	cJSON_Delete(ck);
	return 0;
}
