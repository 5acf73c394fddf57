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

static int comm_rows(const pl_ckpt_doc *d, double *sec, double *bytes, double *hidden)
{
	for (int r = 0; r < PL_COMM_ROWS; r++)
		sec[r] = bytes[r] = 0;
	*hidden = pl_ckpt_or(d->v.comm_hidden_s, 0);
	if (!d->has_comm)
		return 0;
	for (int k = 0; k < d->ncomm; k++) {
		const pl_ckpt_comm *e = &d->comm[k];
		const char *c = e->collective, *l = e->link;
		int r = -1;
		for (int q = 0; c && l && r < 0 && q < PL_COMM_ROWS; q++) {
			const char *kc, *kl;
			comm_row_keys(q, &kc, &kl);
			if (!strcmp(c, kc) && !strcmp(l, kl))
				r = q;
		}
		if (r < 0)
			continue;
		sec[r] += pl_ckpt_or(e->seconds, 0);
		bytes[r] += pl_ckpt_or(e->bus_bytes, 0);
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
static void print_comm_memory(const pl_ckpt_doc *d, FILE *out)
{
	double sec[PL_COMM_ROWS], bytes[PL_COMM_ROWS], hidden;
	const pl_ckpt_view *v = &d->v;
	if (comm_rows(d, sec, bytes, &hidden)) {
		fprintf(out, "communication by collective and link class (per device a step%s):\n",
		        v->has_pipeline ? ", bottleneck stage" : "");
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
		/* whether the plan hides collectives beside the compute (the
		 * tensor-parallel ones or the parameter gathers), not only behind
		 * the backward */
		if (hidden > 0)
			fprintf(out, "  %-27s %12.6f\n",
			        v->tp_comm_overlap || v->overlap_param_gather
			            ? "hidden beside the compute"
			            : "hidden behind the backward",
			        -hidden);
		fprintf(out, "  %-27s %12.6f\n", "= communication", pl_ckpt_or(v->comm_s, 0));
	}
	if (!d->has_stage_mem)
		return;
	fprintf(out,
	        "memory per device by stage (the peak stage's, with the reserve, is the peak):\n");
	fprintf(out, "  %-6s %12s %12s %17s %12s %12s\n", "stage", "weights", "gradients",
	        "optimizer_states", "activations", "transient");
	for (int k = 0; k < d->nstage_mem; k++) {
		char c[5][32];
		for (int j = 0; j < 5; j++)
			pl_cli_fmt_bytes(
			    pl_ckpt_or(pl_ckpt_memory_of(&d->stage_mem[k], pl_ckpt_mem_names[j]), 0),
			    c[j], sizeof c[j]);
		fprintf(out, "  %-6d %12s %12s %17s %12s %12s\n", k, c[0], c[1], c[2], c[3], c[4]);
	}
}

/* One op that differs between plans a and b. */
typedef struct diff_op {
	const char *op;
	char a[256], b[256]; /* the strategies */
	int stage_a, stage_b;
	double t, m; /* its time's and memory's differences */
} diff_op;

/* The ops of one part of the model, summed. */
typedef struct diff_part {
	const char *name;
	double ops, changed, t, m;
} diff_part;

/* What pl_cli_explain_diff finds of plans a and b: its JSON is made from
 * this and the text printed from it, so that the two cannot disagree */
typedef struct diff_sums {
	double dt, dm; /* the per-op sums of the time's and the memory's differences */
	int changed, total;
	double step_d, mem_d, comm_d; /* the totals' differences */
	int have_comm;                /* both have communication by collective */
	double ha, hb;                /* a's and b's communication hidden behind the backward */
	double sa[PL_COMM_ROWS], ba[PL_COMM_ROWS], sb[PL_COMM_ROWS], bb[PL_COMM_ROWS];
	diff_op *ops; /* changed of them */
	diff_part *parts;
	int nparts;
} diff_sums;

/* op x of plan a against its b, summed into its part's entry */
static void diff_part_add(diff_sums *d, const pl_ckpt_op *x, int same, double t, double m)
{
	if (!x->part)
		return;
	int k = 0;
	while (k < d->nparts && strcmp(d->parts[k].name, x->part))
		k++;
	if (k == d->nparts)
		d->parts[d->nparts++] = (diff_part){.name = x->part};
	diff_part *pe = &d->parts[k];
	pe->ops += 1;
	pe->changed += !same;
	pe->t += t;
	pe->m += m;
}

/* b's op of the name (the first), or NULL */
static const pl_ckpt_op *find_op(const pl_ckpt_doc *b, const char *name)
{
	for (int k = 0; name && k < b->nops; k++)
		if (b->ops[k].name && !strcmp(b->ops[k].name, name))
			return &b->ops[k];
	return NULL;
}

/* Every op of a against b's of the name: the ops that differ, the parts,
 * the sums in d; an error where b lacks one */
static pl_status diff_ops(const pl_ckpt_doc *a, const pl_ckpt_doc *b, const char *pa,
                          const char *pb, diff_sums *d, pl_err *err)
{
	d->ops = pl_calloc((size_t)a->nops + 1, sizeof *d->ops);
	d->parts = pl_calloc((size_t)a->nops + 1, sizeof *d->parts);
	if (!d->ops || !d->parts)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	for (int k = 0; k < a->nops; k++) {
		const pl_ckpt_op *x = &a->ops[k], *y = find_op(b, x->name);
		d->total++;
		if (!y)
			return pl_err_set(err, PL_EINVAL, "%s: op '%s' is not in %s", pa, x->name,
			                  pb);
		diff_op *o = &d->ops[d->changed];
		pl_cli_fmt_strategy(x, o->a, sizeof o->a);
		pl_cli_fmt_strategy(y, o->b, sizeof o->b);
		double t = pl_ckpt_or(y->compute_s, 0) + pl_ckpt_or(y->comm_s, 0) -
		           pl_ckpt_or(x->compute_s, 0) - pl_ckpt_or(x->comm_s, 0);
		double m = pl_ckpt_or(y->mem_bytes, 0) - pl_ckpt_or(x->mem_bytes, 0);
		d->dt += t;
		d->dm += m;
		int stage_a = (int)pl_ckpt_or(x->stage, 0), stage_b = (int)pl_ckpt_or(y->stage, 0);
		int same = !strcmp(o->a, o->b) && stage_a == stage_b && t == 0 && m == 0;
		diff_part_add(d, x, same, t, m);
		if (same)
			continue;
		d->changed++;
		o->op = x->name;
		o->stage_a = stage_a;
		o->stage_b = stage_b;
		o->t = t;
		o->m = m;
	}
	return PL_OK;
}

/* The totals' differences into d: communication by collective and link
 * class (the rows' deltas less the hidden part's add up to the
 * communication's), the step's and the peak memory's */
static void diff_totals(const pl_ckpt_doc *a, const pl_ckpt_doc *b, diff_sums *d)
{
	/* a total either lacks is NAN (math.h's, as the JSON says it) */
	d->step_d = pl_ckpt_or(b->v.step_s, NAN) - pl_ckpt_or(a->v.step_s, NAN);
	d->mem_d = pl_ckpt_or(b->v.peak_mem_bytes, NAN) - pl_ckpt_or(a->v.peak_mem_bytes, NAN);
	d->have_comm = comm_rows(a, d->sa, d->ba, &d->ha) && comm_rows(b, d->sb, d->bb, &d->hb);
	d->comm_d = pl_ckpt_or(b->v.comm_s, NAN) - pl_ckpt_or(a->v.comm_s, NAN);
}

/* The diff as JSON: the ops that differ, the parts, the totals and their rests */
static cJSON *diff_json(const diff_sums *d)
{
	cJSON *out = cJSON_CreateObject();
	cJSON *ops = cJSON_AddArrayToObject(out, "ops");
	for (int k = 0; k < d->changed; k++) {
		const diff_op *x = &d->ops[k];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "op", x->op);
		cJSON_AddStringToObject(o, "a", x->a);
		cJSON_AddStringToObject(o, "b", x->b);
		cJSON_AddNumberToObject(o, "stage_a", x->stage_a);
		cJSON_AddNumberToObject(o, "stage_b", x->stage_b);
		cJSON_AddNumberToObject(o, "seconds_delta", x->t);
		cJSON_AddNumberToObject(o, "memory_bytes_delta", x->m);
		pl_json_push(ops, o);
	}
	cJSON *parts = d->nparts > 0 ? cJSON_AddObjectToObject(out, "parts") : NULL;
	for (int k = 0; parts && k < d->nparts; k++) {
		cJSON *pe = cJSON_AddObjectToObject(parts, d->parts[k].name);
		cJSON_AddNumberToObject(pe, "ops", d->parts[k].ops);
		cJSON_AddNumberToObject(pe, "ops_changed", d->parts[k].changed);
		cJSON_AddNumberToObject(pe, "seconds_delta", d->parts[k].t);
		cJSON_AddNumberToObject(pe, "memory_bytes_delta", d->parts[k].m);
	}
	cJSON_AddNumberToObject(out, "communication_seconds_delta", d->comm_d);
	if (d->have_comm) {
		cJSON *cl = cJSON_AddArrayToObject(out, "communication");
		for (int r = 0; r < PL_COMM_ROWS; r++) {
			if (!(d->sa[r] > 0) && !(d->sb[r] > 0))
				continue;
			cJSON *o = cJSON_CreateObject();
			const char *c, *l;
			comm_row_keys(r, &c, &l);
			cJSON_AddStringToObject(o, "collective", c);
			cJSON_AddStringToObject(o, "link", l);
			cJSON_AddNumberToObject(o, "a_seconds", d->sa[r]);
			cJSON_AddNumberToObject(o, "b_seconds", d->sb[r]);
			cJSON_AddNumberToObject(o, "seconds_delta", d->sb[r] - d->sa[r]);
			cJSON_AddNumberToObject(o, "bus_bytes_delta", d->bb[r] - d->ba[r]);
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
	return out;
}

/* "+1.00 MiB" of a difference m into buf, the bytes right-aligned in width */
static void fmt_delta_bytes(double m, int width, char *buf, size_t n)
{
	char mb[32];
	pl_cli_fmt_bytes(fabs(m), mb, sizeof mb);
	snprintf(buf, n, "%s%*s", m < 0 ? "-" : "+", width, mb);
}

/* the text of the parts and the ops that differ */
static void print_diff_ops(const diff_sums *d)
{
	if (d->nparts > 0)
		printf("\nby part of the model\n%-12s %12s %12s %12s\n", "part", "ops differ",
		       "time ms", "memory");
	for (int k = 0; k < d->nparts; k++) {
		const diff_part *pe = &d->parts[k];
		char mb[48], n[32];
		fmt_delta_bytes(pe->m, 11, mb, sizeof mb);
		snprintf(n, sizeof n, "%g/%g", pe->changed, pe->ops);
		printf("%-12s %12s %+12.4f %s\n", pe->name, n, 1e3 * pe->t, mb);
	}
	printf("\n%d of %d ops differ\n%-28s %-28s %-28s %8s %12s %12s\n", d->changed, d->total,
	       "op", "A", "B", "stage", "time ms", "memory");
	for (int k = 0; k < d->changed; k++) {
		const diff_op *x = &d->ops[k];
		char mb[48], st2[40];
		fmt_delta_bytes(x->m, 11, mb, sizeof mb);
		snprintf(st2, sizeof st2, "%g>%g", (double)x->stage_a, (double)x->stage_b);
		printf("%-28s %-28s %-28s %8s %+12.4f %s\n", x->op, x->a, x->b, st2, 1e3 * x->t,
		       mb);
	}
}

/* the text of the communication's differences, then the step's and the peak
 * memory's sums */
static void print_diff_totals(const pl_ckpt_doc *a, const pl_ckpt_doc *b, const diff_sums *d)
{
	if (d->have_comm) {
		printf("\ncommunication by collective and link class (per device a step)\n"
		       "%-15s %-11s %12s %12s %12s %14s\n",
		       "collective", "link", "A s", "B s", "delta s", "bus bytes");
		for (int r = 0; r < PL_COMM_ROWS; r++) {
			if (!(d->sa[r] > 0) && !(d->sb[r] > 0))
				continue;
			const char *c, *l;
			comm_row_keys(r, &c, &l);
			char bb[48];
			fmt_delta_bytes(d->bb[r] - d->ba[r], 13, bb, sizeof bb);
			printf("%-15s %-11s %12.6f %12.6f %+12.6f %s\n", c, l, d->sa[r], d->sb[r],
			       d->sb[r] - d->sa[r], bb);
		}
		if (d->ha > 0 || d->hb > 0)
			printf("%-27s %12.6f %12.6f %+12.6f\n", "hidden behind the backward",
			       -d->ha, -d->hb, d->ha - d->hb);
		printf("%-27s %12.6f %12.6f %+12.6f\n", "= communication",
		       pl_ckpt_or(a->v.comm_s, 0), pl_ckpt_or(b->v.comm_s, 0), d->comm_d);
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

/* Two checkpoints read and typed (PL_OK) or an error */
static pl_status read_two(const char *pa, const char *pb, cJSON **a, cJSON **b, pl_ckpt_doc *da,
                          pl_ckpt_doc *db, pl_err *err)
{
	pl_status st;
	if ((st = pl_cli_read_ckpt(pa, a, err)) || (st = pl_cli_read_ckpt(pb, b, err)) ||
	    (st = pl_ckpt_doc_read(*a, da, err)) || (st = pl_ckpt_doc_read(*b, db, err)))
		return st;
	const char *sa = da->v.model_sha256, *sb = db->v.model_sha256;
	if (sa && sb && strcmp(sa, sb))
		return pl_err_set(err, PL_EINVAL,
		                  "%s and %s are plans of different models (model.sha256 %s and %s)",
		                  pa, pb, sa, sb);
	return PL_OK;
}

/* What differs between plans a and b of one model: the totals and their
 * differences; per op, the strategy and stage and the differences of its
 * time and memory; and the rest of each difference (what the per-op
 * numbers do not add up to: the pipeline's bubble and stage balance, the
 * peak stage, the transient bytes, the reserve), so that the lines add up
 * to the totals'. The differences are found once (diff_sums) and both the
 * JSON and the text made from them, so that the two cannot disagree.
 * label_a, label_b: how to name the plans in the text (NULL: their paths) */
int pl_cli_explain_diff(const char *pa, const char *label_a, const char *pb, const char *label_b,
                        int json)
{
	pl_err err = {{0}};
	cJSON *a = NULL, *b = NULL;
	pl_ckpt_doc da = {0}, db = {0};
	pl_status st;
	diff_sums d = {0};
	if ((st = read_two(pa, pb, &a, &b, &da, &db, &err)) ||
	    (st = diff_ops(&da, &db, pa, pb, &d, &err)))
		goto done;
	diff_totals(&da, &db, &d);
	if (json) {
		st = pl_cli_json_line(diff_json(&d), &err);
		goto done;
	}
	printf("A: %s\n", label_a ? label_a : pa);
	pl_cli_print_totals(&da, stdout);
	printf("B: %s\n", label_b ? label_b : pb);
	pl_cli_print_totals(&db, stdout);
	print_diff_ops(&d);
	print_diff_totals(&da, &db, &d);
done:
	free(d.ops);
	free(d.parts);
	pl_ckpt_doc_free(&da);
	pl_ckpt_doc_free(&db);
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

static const char explain_help[] =
    "usage: planner explain CKPT [--json]\n"
    "       planner explain --diff A.json B.json [--json]\n\n"
    "Prints the totals, the communication by collective and link class, every\n"
    "stage's memory by category, and a per-op table of a strategy checkpoint\n"
    "written by 'planner search': strategy, compute and communication\n"
    "milliseconds, memory per device. With --diff, what differs between two\n"
    "plans of one model: the totals, the differences summed by part of the model\n"
    "(embedding, attention, mlp or experts, head), every op whose strategy, stage,\n"
    "time or memory differs, the communication's difference by collective and\n"
    "link class, and the rest of the step's and the peak memory's difference\n"
    "(pipeline bubble and balance, peak stage, transient, reserve), so that the\n"
    "lines add up. --json prints either as one JSON object: for one checkpoint\n"
    "its model, cluster, search, cost (totals, communication by collective and\n"
    "link class, memory by category, utilisation), pipeline, groups and parts,\n"
    "and \"ops\": the table's rows in the model's order (name, type, stage,\n"
    "strategy, compute_seconds, communication_seconds, memory_bytes,\n"
    "flops_forward, flops_backward), every number the checkpoint's.\n"
    "\n"
    "options:\n"
    "  --diff       compare two checkpoints (A, then B)\n"
    "  --json       one JSON object instead of the text\n"
    "  -h, --help   this text\n";

int pl_cmd_explain(int argc, char **argv)
{
	int json = 0, diff = 0;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_EXPLAIN, "explain", explain_help, NULL);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 'j': json = 1; break;
		case 'D': diff = 1; break;
		}
	}
	int n = argc - optind;
	if (diff) {
		if (n != 2)
			return pl_cli_usage("explain", "--diff: expected two CKPT files%s", "");
		return pl_cli_explain_diff(argv[optind], NULL, argv[optind + 1], NULL, json);
	}
	if (n > 1)
		return pl_cli_usage("explain",
		                    "expected one CKPT file, got '%s' and '%s' (two plans "
		                    "compare with --diff A B)",
		                    argv[optind], argv[optind + 1]);
	if (n < 1)
		return pl_cli_usage("explain",
		                    "expected one CKPT file (a strategy checkpoint "
		                    "written by 'planner search')%s",
		                    json ? " before or after --json" : "");
	const char *in = argv[optind];
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
	pl_ckpt_doc d;
	if (!(st = pl_ckpt_doc_read(ck, &d, &err))) {
		pl_cli_print_totals(&d, stdout);
		print_comm_memory(&d, stdout);
		print_frameworks(ck, stdout);
		pl_cli_print_table(&d, stdout, 0);
	}
	pl_ckpt_doc_free(&d);
	cJSON_Delete(ck);
	return st ? pl_cli_fail(st, &err) : 0;
}
