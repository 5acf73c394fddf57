/* planner report: one self-contained HTML page (inline SVG and CSS, no
 * script, nothing fetched) that shows a strategy checkpoint: the step and
 * where it goes, the device mesh coloured by each kind of group over the
 * nodes, the pipeline schedule, the memory of a device against its capacity,
 * the strategies by part of the model and per op, and the groups'
 * communication links. Everything is read from the checkpoint, so the page
 * shows the numbers `search` and `cost` print. */
#define _GNU_SOURCE
#include "planner/report.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/alloc.h"
#include "graph/json.h"
#include "planner/checkpoint.h"

#define GIB 1073741824.0
#define BIG (1 << 30) /* no count on the page is larger */

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define NPAL ((int)(sizeof palette / sizeof *palette))

/* The one way a string reaches the page: &, <, >, " and ' as entities, so
 * that no checkpoint string (a name, a mode, a group's key) can open a tag or
 * leave an attribute, in text and in quoted attributes alike. */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
}

/* printf for the page: the format is markup, every %s argument is text and
 * goes through esc (NULL is empty); %d takes an int, %f, %g and %e a
 * double, with the usual flags, width and precision. */
static void h(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void h(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			fputc(*p, f);
			continue;
		}
		char spec[16] = "%";
		size_t n = 1;
		while (p[1] && strchr("-+ #0123456789.", p[1]) && n < sizeof spec - 2)
			spec[n++] = *++p;
		char c = *++p;
		spec[n++] = c;
		spec[n] = 0;
		switch (c) {
		case 's': esc(f, va_arg(ap, const char *)); break;
		case 'd': fprintf(f, spec, va_arg(ap, int)); break;
		case 'f':
		case 'g':
		case 'e': fprintf(f, spec, va_arg(ap, double)); break;
		case '%': fputc('%', f); break;
		default:
			assert(!"report: a conversion h() does not know");
			p--;
			break;
		}
		if (!c)
			break;
	}
	va_end(ap);
}

/* a number of the checkpoint as an int in [lo, hi], else dflt (NAN: absent) */
static int ival(double v, int dflt, int lo, int hi)
{
	return isfinite(v) && v >= lo && v <= hi && v == floor(v) ? (int)v : dflt;
}

static double or0(double x)
{
	return isnan(x) ? 0 : x;
}

static void summary(FILE *f, const pl_ckpt_view *v)
{
	const char *names[] = {"compute", "communication", "optimizer", "bubble"};
	/* a number the checkpoint lacks draws as 0 */
	double part[4] = {or0(v->compute_s), or0(v->comm_s), or0(v->optimizer_s), or0(v->bubble_s)},
	       sum = 0;
	for (int i = 0; i < 4; i++)
		sum += part[i];
	fputs("<section id=\"summary\"><h2>Step</h2><p>", f);
	h(f, "<b>%.6g s</b> per step on %s (%d devices: %d nodes &times; %d)", or0(v->step_s),
	  v->cluster_name ? v->cluster_name : "?", v->devices, v->nodes, v->devices_per_node);
	if (v->has_pipeline)
		h(f, "; %d pipeline stages, %d micro-batches, %s", v->stages, v->micro_batches,
		  v->schedule);
	h(f, "; ZeRO %d, recompute %s; peak memory %.2f GiB per device.</p>\n", v->zero,
	  v->recompute ? v->recompute : "none", or0(v->peak_mem_bytes) / GIB);
	double mfu = v->mfu, tf = v->model_tflops, tok = v->tokens_per_s;
	if (isfinite(mfu) && mfu >= 0 && isfinite(tf) && tf >= 0) {
		h(f, "<p id=\"utilisation\">MFU <b>%.1f %%</b>, %.1f model TFLOP/s per device",
		  100 * mfu, tf);
		if (isfinite(tok) && tok > 0)
			h(f, ", %.0f tokens/s per device", tok);
		fputs(".</p>\n", f);
	}
	double lo = v->band_lo, hi = v->band_hi;
	if (isfinite(lo) && isfinite(hi) && lo > 0 && hi >= lo)
		h(f, "<p id=\"band\">Expected measured step: %.4g&ndash;%.4g s (%s).</p>\n", lo, hi,
		  v->band_basis ? v->band_basis : "?");
	static const char *const caveat_id[PL_CKPT_CAVEATS] = {"above-measured",
	                                                       "attention-beyond"};
	char note[640];
	for (int k = 0; k < PL_CKPT_CAVEATS; k++)
		if (pl_ckpt_caveat(v, k, note, sizeof note))
			h(f, "<p id=\"%s\">Note: %s.</p>\n", caveat_id[k], note);
	double limit = isfinite(v->memory_limit) ? v->memory_limit : 0;
	if (pl_memory_at_risk(v->peak_mem_bytes, limit)) {
		char why[128];
		pl_memory_band_basis(why, sizeof why);
		h(f,
		  "<p id=\"memory-risk\">Expected measured peak: up to %.2f GiB, over the %.2f GiB "
		  "limit (%s): the plan may run out of memory.</p>\n",
		  v->peak_mem_bytes * PL_MEM_BAND_HI / GIB, limit / GIB, why);
	}
	/* the step's parts as one bar (the overlap, when any, is what they exceed it by) */
	double w = 760, x = 0, scale = sum > 0 ? w / sum : 0;
	fputs("<svg class=\"bar\" width=\"780\" height=\"46\" role=\"img\" aria-label=\"step\">",
	      f);
	for (int i = 0; i < 4; i++) {
		double pw = part[i] * scale;
		if (pw <= 0)
			continue;
		h(f,
		  "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"22\" fill=\"%s\">"
		  "<title>%s %.6g s</title></rect>",
		  x, pw, palette[i], names[i], part[i]);
		x += pw;
	}
	x = 0;
	for (int i = 0; i < 4; i++)
		if (part[i] > 0) {
			h(f,
			  "<rect x=\"%.0f\" y=\"32\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			  "<text x=\"%.0f\" y=\"41\">%s %.4g s</text>",
			  x, palette[i], x + 14, names[i], part[i]);
			x += 190;
		}
	fputs("</svg>", f);
	const char *why = v->why;
	h(f, "<p class=\"note\">search: %s, %s", v->mode ? v->mode : "?",
	  v->optimal ? "proven optimal" : "not proven optimal");
	if (why) {
		fputs(" (", f);
		esc(f, why);
		fputs(")", f);
	}
	fputs("</p></section>\n", f);
}

/* into gi[r] for the ranks r < n drawn: the index of r's group of this kind
 * (-1: in none); one pass over the members */
static void group_index(const pl_ckpt_groups *gs, int *gi, int n)
{
	for (int r = 0; r < n; r++)
		gi[r] = -1;
	for (int k = 0; k < gs->n; k++)
		for (int i = gs->start[k]; i < gs->start[k + 1]; i++) {
			double r = gs->ranks[i]; /* NAN: not a number */
			if (r >= 0 && r < n)
				gi[(int)r] = k;
		}
}

/* one mesh per kind of group: nodes as rows, each device coloured by the
 * group it is in */
static void mesh(FILE *f, const pl_ckpt_doc *d)
{
	int D = d->v.devices >= 1 ? d->v.devices : 1, per = d->v.devices_per_node;
	if (per < 1 || per > D)
		per = D;
	int nodes = (D + per - 1) / per, shown = nodes > 64 ? 64 : nodes;
	int cols = per > 64 ? 64 : per; /* at most 64 x 64 devices drawn */
	int cell = cols > 16 ? 12 : 22;
	int drawn = shown * per < 4096 ? shown * per : 4096;
	int *gi = pl_malloc(sizeof *gi * (size_t)drawn + 1);
	if (!gi)
		return;
	fputs(
	    "<section id=\"mesh\"><h2>Device mesh</h2><p class=\"note\">Rows are nodes, squares "
	    "devices (rank order as Megatron's: tp fastest, then cp, dp, pp); each picture colours "
	    "the devices by the group of that kind they are in.</p><div class=\"meshes\">",
	    f);
	for (int q = 0; q < d->ngroups; q++) {
		const pl_ckpt_groups *gs = &d->groups[q];
		int n = gs->n, size = pl_ckpt_group_size(gs, 0);
		double wd = cols * (cell + 2) + 50, ht = shown * (cell + 2) + 24;
		group_index(gs, gi, drawn);
		h(f, "<figure class=\"mesh\" data-kind=\"%s\"><svg width=\"%.0f\" height=\"%.0f\">",
		  gs->kind, wd, ht);
		for (int nd = 0; nd < shown; nd++) {
			h(f, "<text x=\"0\" y=\"%d\">n%d</text>", 14 + nd * (cell + 2), nd);
			for (int c = 0; c < cols && nd * per + c < D; c++) {
				int r = nd * per + c, g = r < drawn ? gi[r] : -1;
				h(f,
				  "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
				  "fill=\"%s\">"
				  "<title>rank %d: %s group %d</title></rect>",
				  40 + c * (cell + 2), nd * (cell + 2), cell, cell,
				  g < 0 ? "#eee" : palette[g % NPAL], r, gs->kind, g);
			}
		}
		h(f, "</svg><figcaption>%s: %d group%s of %d%s</figcaption></figure>", gs->kind,
		  n, n == 1 ? "" : "s", size,
		  shown < nodes || cols < per ? " (the first 64 nodes and devices a node drawn)"
		                              : "");
	}
	free(gi);
	fputs("</div></section>\n", f);
}

/* 1F1B on pp stages and m micro-batches, forward a third of a stage's
 * micro-batch time and backward two thirds: per stage the order of its
 * passes (warm-up forwards, one forward one backward, cool-down backwards),
 * each starting when its stage is free and its input has arrived.
 * Long on purpose: the section's answers in order (one stage;
 * too many stages to draw; the schedule simulated, then drawn as boxes), each
 * writing into the same section. */
static void schedule(FILE *f, const pl_ckpt_doc *d)
{
	const pl_ckpt_view *v = &d->v;
	fputs("<section id=\"schedule\"><h2>Pipeline schedule</h2>", f);
	int P = ival(v->pp_stages, 1, 1, BIG), M = ival(v->pp_micro_batches, 1, 1, BIG);
	if (!v->has_pipeline || P < 1 || d->nstage_s != P) {
		double step = or0(v->step_s), opt = or0(v->optimizer_s);
		fputs("<p class=\"note\">One stage, no pipeline: every device runs the whole "
		      "step.</p><svg width=\"780\" height=\"40\">",
		      f);
		double s = step > 0 ? 700 / step : 0;
		h(f,
		  "<text x=\"0\" y=\"16\">s0</text><rect class=\"fwd\" x=\"40\" y=\"4\" "
		  "width=\"%.1f\" height=\"16\"><title>forward and backward %.6g s</title>"
		  "</rect><rect class=\"opt\" x=\"%.1f\" y=\"4\" width=\"%.1f\" height=\"16\">"
		  "<title>optimizer %.6g s</title></rect></svg></section>\n",
		  (step - opt) * s, step - opt, 40 + (step - opt) * s, fmax(opt * s, 1), opt);
		return;
	}
	if (P > 64) {
		h(f,
		  "<p class=\"note\">%d stages: too many to draw; the bubble is %.6g s of the "
		  "step.</p></section>\n",
		  P, or0(v->bubble_s));
		return;
	}
	int m = M > 48 ? 48 : M, n = 2 * m;
	int *pos = pl_malloc(sizeof *pos * (size_t)P * 2 * (size_t)m + 1); /* (s, kind, mb) -> k */
	double *tf = pl_calloc((size_t)P, sizeof *tf), *st = pl_calloc((size_t)P * n, sizeof *st);
	int *kind = pl_calloc((size_t)P * n, sizeof *kind),
	    *mb = pl_calloc((size_t)P * n, sizeof *mb);
	if (!tf || !st || !kind || !mb || !pos)
		goto done;
	for (int s = 0; s < P; s++) {
		tf[s] = or0(d->stage_s[s]);
		int warm = P - s - 1 < m ? P - s - 1 : m, k = 0, fi = 0, bi = 0;
		for (; fi < warm; fi++, k++)
			kind[s * n + k] = 0, mb[s * n + k] = fi;
		while (k < n) {
			if (fi < m)
				kind[s * n + k] = 0, mb[s * n + k] = fi++, k++;
			if (bi < m && k < n)
				kind[s * n + k] = 1, mb[s * n + k] = bi++, k++;
		}
	}
	for (int i = 0; i < P * n; i++)
		pos[((i / n) * 2 + kind[i]) * m + mb[i]] = i % n;
	/* start times: relax until nothing moves (dependencies point both ways) */
	for (int pass = 0, moved = 1; moved && pass < 4 * P * n; pass++) {
		moved = 0;
		for (int s = 0; s < P; s++)
			for (int k = 0; k < n; k++) {
				int i = s * n + k, b = kind[i];
				double t = 0;
				if (k > 0) {
					int j = i - 1;
					t = st[j] + (kind[j] ? 2 * tf[s] / 3 : tf[s] / 3);
				}
				int s2 = b ? s + 1 : s - 1; /* where the input comes from */
				if (s2 >= 0 && s2 < P) {
					int q = pos[(s2 * 2 + b) * m + mb[i]];
					double d2 = b ? 2 * tf[s2] / 3 : tf[s2] / 3;
					t = fmax(t, st[s2 * n + q] + d2);
				}
				if (t > st[i] + 1e-15) {
					st[i] = t;
					moved = 1;
				}
			}
	}
	double end = 0;
	for (int s = 0; s < P; s++) {
		int i = s * n + n - 1;
		end = fmax(end, st[i] + (kind[i] ? 2 * tf[s] / 3 : tf[s] / 3));
	}
	double opt = or0(v->optimizer_s), total = end + opt,
	       sc = total > 0 ? 700 / total : 0;
	h(f,
	  "<p class=\"note\">%s over %d stages%s: forward (light) a third of a stage's "
	  "micro-batch time, backward (dark) two thirds, idle time the bubble, then the "
	  "optimizer step%s.</p>",
	  v->schedule, P, M > m ? "" : "", M > m ? "; the first 48 micro-batches drawn" : "");
	if (strcmp(v->schedule, "1F1B"))
		fputs("<p class=\"note\">Drawn as plain 1F1B over the same stage times; the "
		      "interleaved schedule's smaller bubble is in the cost model's bubble "
		      "figure.</p>",
		      f);
	h(f, "<svg width=\"780\" height=\"%d\">", P * 22 + 20);
	for (int s = 0; s < P; s++) {
		h(f, "<text x=\"0\" y=\"%d\">s%d</text>", s * 22 + 15, s);
		for (int k = 0; k < n; k++) {
			int i = s * n + k;
			double d = kind[i] ? 2 * tf[s] / 3 : tf[s] / 3;
			h(f,
			  "<rect class=\"%s\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"18\">"
			  "<title>stage %d %s micro-batch %d</title></rect>",
			  kind[i] ? "bwd" : "fwd", 40 + st[i] * sc, s * 22, fmax(d * sc, 0.5), s,
			  kind[i] ? "backward" : "forward", mb[i]);
		}
		h(f,
		  "<rect class=\"opt\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"18\">"
		  "<title>optimizer %.6g s</title></rect>",
		  40 + end * sc, s * 22, fmax(opt * sc, 1), opt);
	}
	h(f, "<text x=\"40\" y=\"%d\">0</text><text x=\"700\" y=\"%d\">%.4g s</text></svg>",
	  P * 22 + 16, P * 22 + 16, total);
done:
	free(tf);
	free(st);
	free(kind);
	free(mb);
	free(pos);
	fputs("</section>\n", f);
}

/* one device's memory by category as boxes from x (scale sc) on row y
 * (stage s's; -1: the peak device's, with a legend); returns tot and the
 * categories' bytes added to it */
static double memory_row(FILE *f, const pl_ckpt_memory *m, double *x, double sc, int s, int y,
                         double tot)
{
	for (int k = 0; k < m->n; k++) {
		const char *c = m->e[k].name;
		double b = or0(m->e[k].bytes), w = b * sc;
		if (s < 0) {
			h(f,
			  "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"22\" fill=\"%s\">"
			  "<title>%s %.3f GiB</title></rect>",
			  *x, w, palette[k % NPAL], c, b / GIB);
			h(f,
			  "<rect x=\"%d\" y=\"34\" width=\"10\" height=\"10\" fill=\"%s\"/><text "
			  "x=\"%d\" y=\"43\">%s %.2f</text>",
			  (k % 6) * 128, palette[k % NPAL], (k % 6) * 128 + 13, c, b / GIB);
		} else {
			h(f,
			  "<rect class=\"mem\" data-category=\"%s\" x=\"%.1f\" y=\"%d\" "
			  "width=\"%.1f\" height=\"14\" fill=\"%s\"><title>stage %d %s "
			  "%.3f GiB</title></rect>",
			  c, *x, y, w, palette[k % NPAL], s, c, b / GIB);
		}
		*x += w;
		tot += b;
	}
	return tot;
}

/* the peak device's memory by category against the capacity; per stage the
 * ops' own memory */
static void memory(FILE *f, const pl_ckpt_doc *d)
{
	const pl_ckpt_view *v = &d->v;
	const cJSON *dev = cJSON_GetObjectItem(v->cluster_desc, "device"); /* planner.cluster/1 */
	double cap = pl_json_num(dev, "memory_bytes", 0), peak = or0(v->peak_mem_bytes);
	double full = fmax(cap, peak);
	fputs("<section id=\"memory\"><h2>Memory per device</h2>", f);
	h(f, "<p>Peak %.2f GiB (stage %d)", peak / GIB, ival(v->peak_mem_stage, 0, 0, BIG));
	if (cap > 0)
		h(f, " of %.2f GiB (%.1f %%)", cap / GIB, 100 * peak / cap);
	fputs(".</p><svg width=\"780\" height=\"60\">", f);
	double x = 0, sc = full > 0 ? 760 / full : 0;
	memory_row(f, &d->mem_breakdown, &x, sc, -1, 0, 0);
	if (cap > 0)
		h(f,
		  "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"28\" stroke=\"#000\" "
		  "stroke-width=\"2\"><title>capacity %.2f GiB</title></line>",
		  cap * sc, cap * sc, cap / GIB);
	fputs("</svg><p class=\"note\">GiB; the line is the device's capacity; <i>reserved</i> is "
	      "the runtime reserve (CUDA context, NCCL buffers, allocator).</p>",
	      f);
	/* per stage: its device's memory by category, on the same scale */
	int P = d->nstage_mem;
	double reserve = pl_ckpt_or(pl_ckpt_memory_of(&d->mem_breakdown, "reserved"), 0);
	if (P > 1 && P <= 256) {
		double sc2 = full > 0 ? 700 / full : 0;
		h(f, "<svg id=\"stage-memory\" width=\"780\" height=\"%d\">", P * 18 + 4);
		for (int s = 0; s < P; s++) {
			double xs = 40;
			h(f, "<g data-stage=\"%d\"><text x=\"0\" y=\"%d\">s%d</text>", s,
			  s * 18 + 12, s);
			double tot = memory_row(f, &d->stage_mem[s], &xs, sc2, s, s * 18, reserve);
			h(f,
			  "<rect class=\"mem\" data-category=\"reserved\" x=\"%.1f\" y=\"%d\" "
			  "width=\"%.1f\" height=\"14\" fill=\"%s\"><title>stage %d reserved "
			  "%.3f GiB (total %.3f GiB)</title></rect>",
			  xs, s * 18, reserve * sc2, palette[5 % NPAL], s, reserve / GIB,
			  tot / GIB);
			if (cap > 0)
				h(f,
				  "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
				  "stroke=\"#000\" stroke-width=\"2\"/>",
				  40 + cap * sc2, s * 18 - 1, 40 + cap * sc2, s * 18 + 15);
			fputs("</g>", f);
		}
		fputs(
		    "</svg><p class=\"note\">Per stage, one device's weights, gradients, optimizer "
		    "states, activations of the micro-batches it holds at once, transient bytes "
		    "(gradients and scratch at their most) and the runtime reserve (colours as "
		    "above); the line is the capacity.</p>",
		    f);
	}
	fputs("</section>\n", f);
}

/* An op's strategy as JSON writes it: [[1,8],[8,1]] ("" when it has none) */
static void strategy_text(const pl_ckpt_op *op, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	if (!op->has_strategy)
		return;
	k += (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < op->ninputs && k < n; i++) {
		k += (size_t)snprintf(buf + k, n - k, "%s[", i ? "," : "");
		for (int r = 0; r < op->rank[i] && k < n; r++)
			k += (size_t)snprintf(buf + k, n - k, "%s%d", r ? "," : "", op->split[i][r]);
		if (k < n)
			k += (size_t)snprintf(buf + k, n - k, "]");
	}
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

/* the 60 ops with the most compute + communication, in graph order: the
 * time of the 60th (-1 when there are no more than 60); t the ops' times */
static double dearest_cut(const pl_ckpt_doc *d, double *t)
{
	int n = d->nops;
	for (int k = 0; k < n; k++)
		t[k] = or0(d->ops[k].compute_s) + or0(d->ops[k].comm_s);
	if (n <= 60)
		return -1;
	double *s = pl_malloc(sizeof *s * (size_t)n), cut = -1;
	if (s) {
		memcpy(s, t, sizeof *s * (size_t)n);
		for (int i = 0; i < 60; i++) /* partial selection */
			for (int j = i + 1; j < n; j++)
				if (s[j] > s[i]) {
					double x = s[i];
					s[i] = s[j];
					s[j] = x;
				}
		cut = s[59];
		free(s);
	}
	return cut;
}

static void strategies(FILE *f, const pl_ckpt_doc *d)
{
	fputs("<section id=\"strategies\"><h2>Strategies</h2><table><tr><th>part</th><th>ops</th>"
	      "<th>weights cut</th><th>batch cut</th><th>sequence cut</th><th>experts cut</th>"
	      "<th>replicated</th><th>stages</th></tr>",
	      f);
	for (int k = 0; k < d->nparts; k++) {
		const pl_ckpt_part *p = &d->parts[k];
		fputs("<tr><td>", f);
		esc(f, p->name);
		h(f,
		  "</td><td>%d</td><td>%g</td><td>%g</td><td>%g</td><td>%s</td><td>%g</td>"
		  "<td>%d&ndash;%d</td></tr>",
		  ival(p->ops, 0, 0, BIG), pl_ckpt_or(p->weight_cut, 1), pl_ckpt_or(p->batch_cut, 1),
		  pl_ckpt_or(p->sequence_cut, 1), p->has_experts_cut ? "yes" : "–",
		  pl_ckpt_or(p->replicated, 1), ival(p->stage_first, 0, 0, BIG),
		  ival(p->stage_last, 0, 0, BIG));
	}
	fputs("</table><h3>Ops (the 60 dearest)</h3><table id=\"ops\"><tr><th>op</th><th>type</th>"
	      "<th>stage</th><th>strategy</th><th>compute ms</th><th>comm ms</th><th>memory "
	      "MiB</th></tr>",
	      f);
	double *t = pl_calloc((size_t)d->nops + 1, sizeof *t), cut = t ? dearest_cut(d, t) : -1;
	int shown = 0;
	for (int k = 0; k < d->nops; k++) {
		const pl_ckpt_op *op = &d->ops[k];
		if ((t && t[k] < cut) || shown >= 60)
			continue;
		shown++;
		fputs("<tr><td>", f);
		esc(f, op->name);
		fputs("</td><td>", f);
		esc(f, op->type ? op->type : "");
		h(f, "</td><td>%d</td><td>", ival(op->stage, 0, 0, BIG));
		char st[1024];
		strategy_text(op, st, sizeof st);
		esc(f, st);
		h(f, "</td><td>%.4f</td><td>%.4f</td><td>%.2f</td></tr>", 1e3 * or0(op->compute_s),
		  1e3 * or0(op->comm_s), or0(op->mem_bytes) / 1048576);
	}
	free(t);
	fputs("</table></section>\n", f);
}

/* each kind of group: inside a node (NVLink class) or across nodes */
static void group_links(FILE *f, const pl_ckpt_doc *d)
{
	/* the cluster's links (planner.cluster/1, topology's format) */
	const cJSON *links = cJSON_GetObjectItem(d->v.cluster_desc, "links");
	int per = d->v.devices_per_node;
	for (int q = 0; q < d->ngroups; q++) {
		const pl_ckpt_groups *gs = &d->groups[q];
		int size = pl_ckpt_group_size(gs, 0), inter = 0;
		int first = -1;
		for (int i = 0; i < size; i++) {
			double r = gs->ranks[gs->start[0] + i];
			r = isnan(r) ? 0 : r;
			int node = per > 0 && r >= 0 && r <= BIG ? (int)r / per : 0;
			if (first < 0)
				first = node;
			inter |= node != first;
		}
		const char *cls = size < 2 ? "none" : inter ? "inter_node" : "intra_node";
		double bw = pl_json_num(cJSON_GetObjectItem(links, cls), "busbw", 0);
		h(f, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s", gs->kind, gs->n, size,
		  size < 2 ? "–"
		  : inter  ? "across nodes"
		           : "inside a node",
		  bw > 0 ? "" : "–");
		if (bw > 0)
			h(f, "%.0f", bw / 1e9);
		fputs("</td></tr>", f);
	}
}

static void communication(FILE *f, const pl_ckpt_doc *d)
{
	const pl_ckpt_view *v = &d->v;
	double comm = or0(v->comm_s), hidden = or0(v->comm_hidden_s);
	h(f,
	  "<section id=\"communication\"><h2>Communication</h2><p>%.6g s per step in "
	  "collectives and redistributions the cost model prices (%.1f %% of the step).</p>"
	  "<table><tr><th>group</th><th>groups</th><th>size</th><th>link class</th>"
	  "<th>bus bandwidth GB/s</th></tr>",
	  comm, 100 * comm / fmax(pl_ckpt_or(v->step_s, 1), 1e-30));
	group_links(f, d);
	fputs("</table>", f);
	/* where the time goes: by collective and link class */
	if (d->has_comm) {
		h(f, "<table id=\"comm-by-collective\"><tr><th>collective</th><th>link "
		     "class</th><th>seconds a step</th><th>%% of communication</th><th>bus GB "
		     "per device</th></tr>");
		for (int k = 0; k < d->ncomm; k++) {
			const pl_ckpt_comm *e = &d->comm[k];
			double sec = or0(e->seconds);
			const char *link = e->link ? e->link : "";
			fputs("<tr data-link=\"", f);
			esc(f, link);
			fputs("\"><td>", f);
			esc(f, e->collective ? e->collective : "");
			fputs("</td><td>", f);
			esc(f, link);
			h(f, "</td><td>%.6g</td><td>%.1f</td><td>%.3f</td></tr>", sec,
			  comm > 0 ? 100 * sec / comm : 0, or0(e->bus_bytes) / 1e9);
		}
		if (hidden > 0)
			h(f,
			  "<tr><td>hidden behind the backward</td><td></td><td>%.6g</td>"
			  "<td>%.1f</td><td></td></tr>",
			  -hidden, comm > 0 ? -100 * hidden / comm : 0);
		h(f,
		  "</table><p class=\"note\">%s: per device a step; the rows less the "
		  "hidden part add up to the communication above.</p>",
		  v->has_pipeline ? "The bottleneck stage's" : "The plan's");
	}
	fputs("</section>\n", f);
}

pl_status pl_report_html(const cJSON *ck, const char *source, char **out, pl_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	*out = NULL;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	pl_ckpt_doc d;
	if (pl_ckpt_doc_read(ck, &d, err)) {
		fclose(f);
		free(buf);
		pl_ckpt_doc_free(&d);
		return PL_ENOMEM;
	}
	const char *name = d.v.model_name ? d.v.model_name : "plan";
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>planner: ",
	      f);
	esc(f, name);
	fputs("</title><style>\n"
	      "body{font:14px/1.4 sans-serif;margin:24px;max-width:1000px;color:#222}\n"
	      "h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}\n"
	      "svg text{font:11px sans-serif}.note{color:#555;font-size:12px}\n"
	      "table{border-collapse:collapse;font-size:12px;margin-bottom:10px}td,th{border:1px "
	      "solid #ddd;"
	      "padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}\n"
	      ".meshes{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}\n"
	      ".fwd{fill:#9ecae1}.bwd{fill:#3182bd}.opt{fill:#e6550d}\n"
	      "</style></head><body>\n<h1>",
	      f);
	esc(f, name);
	fputs(" &mdash; parallel plan</h1><p class=\"note\">", f);
	esc(f, source);
	fputs(" (model sha256 ", f);
	esc(f, d.v.model_sha256 ? d.v.model_sha256 : "?");
	fputs("), written by planner search.</p>\n", f);
	summary(f, &d.v);
	mesh(f, &d);
	schedule(f, &d);
	memory(f, &d);
	communication(f, &d);
	strategies(f, &d);
	pl_ckpt_doc_free(&d);
	fputs("</body></html>\n", f);
	if (fclose(f) || !buf || pl_alloc_null_count()) {
		free(buf);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	*out = buf;
	return PL_OK;
}
