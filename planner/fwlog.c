/* Training-log readers (planner/fwlog.h): each line is cleaned (ANSI colour
 * codes dropped, control bytes blanked, bounded), then asked in turn whether
 * it is a step report or a memory report of one of the frameworks, by the
 * words the framework prints around its numbers -- found anywhere on the
 * line, so the launchers' prefixes ("[rank0]:", "[default3]:", "0: ",
 * "stdout: ", a host name) and the loggers' time stamps do not matter. The
 * one idea: a key must stand as a word (not inside a longer name:
 * "MemAllocated=" is not read inside "MaxMemAllocated="). */
#include "planner/fwlog.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/alloc.h"

/* sized by its initializer: the header's [PL_FWLOG_KIND_COUNT] declaration makes a
 * missing name a compile error */
const char *const pl_fwlog_kind_names[] = {"Megatron-LM", "NeMo", "torchtitan", "DeepSpeed"};

void pl_fwlog_free(pl_fwlog *l)
{
	if (!l)
		return;
	free(l->steps);
	free(l->mems);
	memset(l, 0, sizeof *l);
}

/* ---- the words of a line ---- */

static int is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* key in s where it starts a word (the byte before it not a letter, digit
 * or '_'), or NULL */
static const char *find_word(const char *s, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = strstr(s, key); p; p = strstr(p + 1, key))
		if ((p == s || !is_name_char(p[-1])) && kl)
			return p;
	return NULL;
}

/* A number at *s (after blanks): digits with optional thousands commas
 * ("10,050"), a fraction and an exponent; no sign, no "nan" or "inf".
 * 1 and *v, *end past it; 0 when there is none. */
static int read_number(const char *s, double *v, const char **end)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char buf[64];
	size_t n = 0;
	const char *p = s;
	int digits = 0;
	while (n < sizeof buf - 1 &&
	       (isdigit((unsigned char)*p) ||
	        (*p == ',' && digits && isdigit((unsigned char)p[1]) &&
	         isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3])))) {
		if (*p != ',') {
			buf[n++] = *p;
			digits++;
		}
		p++;
	}
	if (*p == '.' && n < sizeof buf - 1) {
		buf[n++] = *p++;
		while (n < sizeof buf - 1 && isdigit((unsigned char)*p)) {
			buf[n++] = *p++;
			digits++;
		}
	}
	if (!digits)
		return 0;
	if (n < sizeof buf - 3 && (*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) ||
	     ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
		buf[n++] = *p++;
		if (*p == '+' || *p == '-')
			buf[n++] = *p++;
		while (n < sizeof buf - 1 && isdigit((unsigned char)*p))
			buf[n++] = *p++;
	}
	buf[n] = 0;
	double x = strtod(buf, NULL);
	if (!isfinite(x))
		return 0;
	*v = x;
	if (end)
		*end = p;
	return 1;
}

/* The number after the word key: 1 (and *v), 0 when key is not on the line,
 * -1 when it is but no number follows. */
static int num_after(const char *s, const char *key, double *v)
{
	const char *p = find_word(s, key);
	if (!p)
		return 0;
	return read_number(p + strlen(key), v, NULL) ? 1 : -1;
}

/* the number after key followed by unit (after blanks): as num_after */
static int num_unit_after(const char *s, const char *key, const char *unit, double *v)
{
	const char *p = find_word(s, key), *e;
	if (!p)
		return 0;
	if (!read_number(p + strlen(key), v, &e))
		return -1;
	while (*e == ' ')
		e++;
	return strncmp(e, unit, strlen(unit)) ? -1 : 1;
}

/* a step number: a whole number below 10^15 */
static int step_ok(double v)
{
	return v >= 0 && v < 1e15 && v == floor(v);
}

/* The rank a launcher's prefix names: "[rankN]:" (torchrun --tee / torch's
 * log prefix), "[defaultN]:" (torchrun's --role default), "N: " (srun -l),
 * Megatron's "[Rank N]"; -1 without one. */
static int line_rank(const char *s)
{
	double v;
	const char *e;
	for (int k = 0; k < 4; k++) { /* prefixes may nest: "0: [rank0]:" */
		while (*s == ' ')
			s++;
		if (!strncmp(s, "[rank", 5) && read_number(s + 5, &v, &e) && *e == ']' &&
		    step_ok(v) && v < 1e7)
			return (int)v;
		if (!strncmp(s, "[default", 8) && read_number(s + 8, &v, &e) && *e == ']' &&
		    step_ok(v) && v < 1e7)
			return (int)v;
		if (isdigit((unsigned char)*s) && read_number(s, &v, &e) && e[0] == ':' &&
		    e[1] == ' ' && step_ok(v) && v < 1e7)
			return (int)v;
		/* a prefix without a rank ("stdout: ", "host: ", "[host:1]:"): past it */
		const char *c = strstr(s, ": ");
		if (!c || c - s > 64 || memchr(s, ' ', (size_t)(c - s)))
			break;
		s = c + 2;
	}
	const char *r = strstr(s, "[Rank ");
	if (r && read_number(r + 6, &v, &e) && *e == ']' && step_ok(v) && v < 1e7)
		return (int)v;
	return -1;
}

/* ---- reports ---- */

static pl_status add_step(pl_fwlog *l, const pl_fwlog_step *s, pl_err *err)
{
	if (l->nsteps >= PL_FWLOG_MAX_REPORTS)
		return PL_OK; /* the first ones kept */
	if (l->nsteps == l->cap_steps) {
		int cap = l->cap_steps ? 2 * l->cap_steps : 64;
		pl_fwlog_step *n = pl_realloc(l->steps, (size_t)cap * sizeof *n);
		if (!n)
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		l->steps = n;
		l->cap_steps = cap;
	}
	l->steps[l->nsteps++] = *s;
	return PL_OK;
}

static pl_status add_mem(pl_fwlog *l, const pl_fwlog_mem *m, pl_err *err)
{
	if (l->nmems >= PL_FWLOG_MAX_REPORTS)
		return PL_OK;
	if (l->nmems == l->cap_mems) {
		int cap = l->cap_mems ? 2 * l->cap_mems : 64;
		pl_fwlog_mem *n = pl_realloc(l->mems, (size_t)cap * sizeof *n);
		if (!n)
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		l->mems = n;
		l->cap_mems = cap;
	}
	l->mems[l->nmems++] = *m;
	return PL_OK;
}

static void unread(pl_fwlog *l, int line, const char *why)
{
	if (!l->unread++) {
		l->first_unread = line;
		snprintf(l->unread_why, sizeof l->unread_why, "%s", why);
	}
}

static const double MiB = 1048576.0, GiB = 1073741824.0;

/* Megatron-LM's (and Megatron-DeepSpeed's) " iteration N/ M | ... |
 * elapsed time per iteration (ms): T | ... throughput per GPU
 * (TFLOP/s/GPU): F": the number after "iteration" that a '/' follows */
static int megatron_step(const char *s, pl_fwlog_step *st)
{
	double t, v;
	int k = num_after(s, "elapsed time per iteration (ms):", &t);
	if (k <= 0)
		return k;
	for (const char *p = find_word(s, "iteration"); p; p = find_word(p + 1, "iteration")) {
		const char *e;
		if (read_number(p + 9, &v, &e) && step_ok(v)) {
			while (*e == ' ')
				e++;
			if (*e == '/') {
				st->step = (int64_t)v;
				st->step_s = t / 1e3;
				if (num_after(s, "throughput per GPU (TFLOP/s/GPU):", &v) > 0)
					st->tflops = v;
				return st->step_s > 0 ? 1 : -1;
			}
		}
	}
	return -1;
}

/* NeMo 2's progress line: "Training epoch E, iteration I/N | ... |
 * global_step: G | ... | train_step_timing in s: T" (the step: G, else I) */
static int nemo_step(const char *s, pl_fwlog_step *st)
{
	double t, v;
	int k = num_after(s, "train_step_timing in s:", &t);
	if (k <= 0)
		return k;
	if (num_after(s, "global_step:", &v) > 0 && step_ok(v))
		st->step = (int64_t)v;
	else if (num_after(s, "iteration", &v) > 0 && step_ok(v))
		st->step = (int64_t)v;
	else
		return -1;
	st->step_s = t;
	return t > 0 ? 1 : -1;
}

/* torchtitan: "step: N  loss: L  [grad_norm: G]  memory: X GiB(P%)  tps: R
 * tflops: F  mfu: M%" (some forks add "elapsed_time_per_step: Ts"); a line
 * needs "step:" and "tps:" ("step:" alone is also DeepSpeed's timer key) */
static int titan_step(const char *s, pl_fwlog_step *st, pl_fwlog_mem *m)
{
	double n, r, v;
	if (!find_word(s, "tps:") || !find_word(s, "step:"))
		return 0;
	if (num_after(s, "step:", &n) <= 0 || !step_ok(n) || num_after(s, "tps:", &r) <= 0 ||
	    !(r > 0))
		return -1;
	st->step = (int64_t)n;
	st->tokens_per_s = r;
	if (num_after(s, "tflops:", &v) > 0)
		st->tflops = v;
	if (num_unit_after(s, "elapsed_time_per_step:", "s", &v) > 0 && v > 0)
		st->step_s = v;
	if (num_unit_after(s, "memory:", "GiB", &v) > 0)
		m->max_reserved = v * GiB; /* torchtitan prints max_reserved_gib */
	return 1;
}

/* DeepSpeed's ThroughputTimer: "E/N, SamplesPerSec=R, MemAllocated=xGB,
 * MaxMemAllocated=yGB" (0.5), "E/N, RunningAvgSamplesPerSec=R,
 * CurrSamplesPerSec=C, ..." (0.7), "epoch=E/micro_step=M/global_step=G,
 * RunningAvg..." (2023-): the step is G, else N */
static int ds_step(const char *s, pl_fwlog_step *st, pl_fwlog_mem *m)
{
	const char *key = NULL,
	           *keys[] = {"CurrSamplesPerSec=", "RunningAvgSamplesPerSec=", "SamplesPerSec="};
	for (int i = 0; i < 3 && !key; i++)
		if (find_word(s, keys[i]))
			key = keys[i];
	if (!key)
		return 0;
	double r, v;
	if (num_after(s, key, &r) <= 0 || !(r > 0))
		return -1;
	if (num_after(s, "global_step=", &v) > 0 && step_ok(v))
		st->step = (int64_t)v;
	else { /* "E/N," just before the first rate */
		const char *first = find_word(s, "RunningAvgSamplesPerSec=");
		if (!first)
			first = find_word(s, "SamplesPerSec=");
		const char *p = first;
		while (p > s && (p[-1] == ' ' || p[-1] == ','))
			p--;
		const char *e = p;
		while (p > s && isdigit((unsigned char)p[-1]))
			p--;
		if (p == e || p == s || p[-1] != '/' || !read_number(p, &v, NULL) || !step_ok(v))
			return -1;
		st->step = (int64_t)v;
	}
	st->samples_per_s = r;
	if (num_unit_after(s, "MemAllocated=", "GB", &v) > 0)
		m->allocated = v * GiB;
	if (num_unit_after(s, "MaxMemAllocated=", "GB", &v) > 0)
		m->max_allocated = v * GiB;
	return 1;
}

/* Megatron-LM's report_memory: "[Rank R] (after N iterations) memory (MB) |
 * allocated: A | max allocated: B | reserved: C | max reserved: D" (2020:
 * without "[Rank R]") */
static int megatron_mem(const char *s, pl_fwlog_mem *m)
{
	if (!strstr(s, "memory (MB)"))
		return 0;
	double v;
	int any = 0;
	if (num_after(s, "| allocated:", &v) > 0)
		m->allocated = v * MiB, any = 1;
	if (num_after(s, "| max allocated:", &v) > 0)
		m->max_allocated = v * MiB, any = 1;
	if (num_after(s, "| reserved:", &v) > 0)
		m->reserved = v * MiB, any = 1;
	if (num_after(s, "| max reserved:", &v) > 0)
		m->max_reserved = v * MiB, any = 1;
	return any ? 1 : -1;
}

/* DeepSpeed's see_memory_usage: "MA x GB  Max_MA y GB  CA z GB  Max_CA w GB" */
static int ds_mem(const char *s, pl_fwlog_mem *m)
{
	if (!find_word(s, "Max_MA") || !find_word(s, "Max_CA"))
		return 0;
	double a, b, c, d;
	if (num_unit_after(s, "MA", "GB", &a) <= 0 || num_unit_after(s, "Max_MA", "GB", &b) <= 0 ||
	    num_unit_after(s, "CA", "GB", &c) <= 0 || num_unit_after(s, "Max_CA", "GB", &d) <= 0)
		return -1;
	m->allocated = a * GiB;
	m->max_allocated = b * GiB;
	m->reserved = c * GiB;
	m->max_reserved = d * GiB;
	return 1;
}

/* One cleaned line: its reports appended. */
static pl_status read_line(pl_fwlog *l, const char *s, int line, pl_err *err)
{
	pl_fwlog_step st = {.line = line,
	                    .rank = -1,
	                    .step_s = NAN,
	                    .tokens_per_s = NAN,
	                    .samples_per_s = NAN,
	                    .tflops = NAN};
	pl_fwlog_mem m = {.line = line,
	                  .rank = -1,
	                  .allocated = NAN,
	                  .max_allocated = NAN,
	                  .reserved = NAN,
	                  .max_reserved = NAN};
	int k;
	pl_status rc = PL_OK;
	if ((k = nemo_step(s, &st)) != 0)
		st.kind = PL_FWLOG_NEMO;
	else if ((k = megatron_step(s, &st)) != 0)
		st.kind = PL_FWLOG_MEGATRON;
	else if ((k = titan_step(s, &st, &m)) != 0)
		st.kind = PL_FWLOG_TORCHTITAN;
	else if ((k = ds_step(s, &st, &m)) != 0)
		st.kind = PL_FWLOG_DEEPSPEED;
	if (k < 0)
		unread(l, line,
		       st.kind == PL_FWLOG_NEMO       ? "NeMo's 'train_step_timing in s: T' with "
		                                        "'global_step: G' or 'iteration I/N'"
		       : st.kind == PL_FWLOG_MEGATRON ? "Megatron-LM's 'iteration N/ M' and "
		                                        "'elapsed time per iteration (ms): T' "
		                                        "(T > 0)"
		       : st.kind == PL_FWLOG_TORCHTITAN
		           ? "torchtitan's 'step: N' and 'tps: R' (R > 0)"
		           : "DeepSpeed's 'E/N, SamplesPerSec=R' or 'global_step=G, "
		             "...SamplesPerSec=R' (R > 0)");
	if (k > 0) {
		st.rank = m.rank = line_rank(s);
		m.kind = st.kind;
		if ((rc = add_step(l, &st, err)))
			return rc;
		if ((isfinite(m.allocated) || isfinite(m.max_allocated) ||
		     isfinite(m.max_reserved)) &&
		    (rc = add_mem(l, &m, err)))
			return rc;
		return PL_OK;
	}
	pl_fwlog_mem mm = {.line = line,
	                   .rank = -1,
	                   .allocated = NAN,
	                   .max_allocated = NAN,
	                   .reserved = NAN,
	                   .max_reserved = NAN};
	if ((k = megatron_mem(s, &mm)) != 0)
		mm.kind = PL_FWLOG_MEGATRON;
	else if ((k = ds_mem(s, &mm)) != 0)
		mm.kind = PL_FWLOG_DEEPSPEED;
	if (k > 0) {
		mm.rank = line_rank(s);
		return add_mem(l, &mm, err);
	}
	/* DeepSpeed's config print: "  train_batch_size ............. 32" */
	const char *p = find_word(s, "train_batch_size");
	if (p) {
		p += strlen("train_batch_size");
		while (*p == ' ')
			p++;
		double v;
		if (*p == '.' && (p = p + strspn(p, ". ")) && read_number(p, &v, NULL) && v >= 1 &&
		    v < 1e12)
			l->train_batch = v;
	}
	return PL_OK;
}

pl_status pl_fwlog_read(const char *text, size_t len, const char *where, pl_fwlog *out, pl_err *err)
{
	(void)where;
	out->train_batch = NAN;
	char *buf = pl_malloc(PL_FWLOG_MAX_LINE + 1);
	if (!buf)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	size_t i = 0;
	pl_status st = PL_OK;
	while (!st && i < len) {
		/* a line ends at '\n' or '\r' (progress bars redraw with '\r') */
		size_t j = i;
		while (j < len && text[j] != '\n' && text[j] != '\r')
			j++;
		if (out->lines < 2147483000)
			out->lines++;
		if (j - i > PL_FWLOG_MAX_LINE) {
			out->long_lines++;
		} else {
			size_t n = 0;
			for (size_t k = i; k < j; k++) {
				unsigned char c = (unsigned char)text[k];
				if (c ==
				    0x1b) { /* ESC: CSI "[...final", OSC "]...BEL", or one byte */
					if (k + 1 < j && text[k + 1] == '[') {
						k += 2;
						while (k < j && !((unsigned char)text[k] >= 0x40 &&
						                  (unsigned char)text[k] <= 0x7e))
							k++;
					} else if (k + 1 < j && text[k + 1] == ']') {
						k += 2;
						while (k < j && text[k] != 0x07 &&
						       !(text[k] == 0x1b && k + 1 < j &&
						         text[k + 1] == '\\'))
							k++;
						if (k < j && text[k] == 0x1b)
							k++;
					} else
						k++;
					continue;
				}
				buf[n++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
			}
			buf[n] = 0;
			st = read_line(out, buf, out->lines, err);
		}
		/* "\r\n" is one line end */
		i = j + 1;
		if (j < len && text[j] == '\r' && i < len && text[i] == '\n')
			i++;
	}
	free(buf);
	return st;
}

/* ---- the measured step ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *const kind_example[] = {
    "Megatron-LM's ' iteration N/ M | ... | elapsed time per iteration (ms): T'",
    "NeMo's 'Training epoch E, iteration I/N | ... | train_step_timing in s: T'",
    "torchtitan's 'step: N  loss: L  memory: X GiB(P%)  tps: R ...'",
    "DeepSpeed's 'E/N, ...SamplesPerSec=R, MemAllocated=xGB, ...' (steps_per_print)"};
_Static_assert(sizeof kind_example / sizeof *kind_example == PL_FWLOG_KIND_COUNT,
               "one example line a framework");

/* The error for a log with no step report the reader knows */
static pl_status no_steps(const pl_fwlog *l, const char *where, pl_err *err)
{
	char more[400] = "";
	if (l->unread)
		snprintf(more, sizeof more, "; line %d has a step marker but not %s",
		         l->first_unread, l->unread_why);
	if (l->long_lines)
		snprintf(more + strlen(more), sizeof more - strlen(more),
		         "; %d line%s longer than %d bytes not read", l->long_lines,
		         l->long_lines == 1 ? "" : "s", PL_FWLOG_MAX_LINE);
	return pl_err_set(err, PL_EINVAL,
	                  "%s: no training step report in %d line%s (expected %s, %s, "
	                  "%s or %s)%s",
	                  where, l->lines, l->lines == 1 ? "" : "s", kind_example[0],
	                  kind_example[1], kind_example[2], kind_example[3], more);
}

/* Report r's step in seconds (*x), and s->step_from how it was had: the
 * time printed, or torchtitan's tokens a second or DeepSpeed's samples a
 * second converted (batch: the samples a step) */
static pl_status report_seconds(const pl_fwlog *l, const pl_fwlog_step *r,
                                const pl_fwlog_scale *scale, double batch, const char *where,
                                pl_fwlog_summary *s, double *x, pl_err *err)
{
	if (isfinite(r->step_s)) {
		*x = r->step_s;
		s->step_from = s->kind == PL_FWLOG_MEGATRON ? "elapsed time per iteration"
		               : s->kind == PL_FWLOG_NEMO   ? "train_step_timing"
		                                            : "elapsed_time_per_step";
	} else if (isfinite(r->tokens_per_s)) {
		if (!(scale->tokens_per_step > 0 && scale->devices > 0))
			return pl_err_set(err, PL_EINVAL,
			                  "%s:%d: torchtitan prints tokens a second per device "
			                  "(tps), not the step: expected the plan's tokens a "
			                  "step and devices to convert it",
			                  where, r->line);
		*x = scale->tokens_per_step / (r->tokens_per_s * scale->devices);
		s->step_from = "tokens a step / (tps x devices)";
	} else {
		if (!(batch > 0))
			return pl_err_set(err, PL_EINVAL,
			                  "%s:%d: DeepSpeed prints samples a second, not the "
			                  "step: expected the log's 'train_batch_size' (its "
			                  "config print) or the plan's global batch to convert it",
			                  where, r->line);
		*x = batch / r->samples_per_s;
		s->step_from = isfinite(l->train_batch) ? "train_batch_size / SamplesPerSec"
		                                        : "the plan's global batch / SamplesPerSec";
	}
	if (!(*x > 0 && isfinite(*x)))
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: expected a step of a positive, finite number of "
		                  "seconds (%s), got %g",
		                  where, r->line, s->step_from, *x);
	return PL_OK;
}

/* the most memory allocated and reserved the log reports, and its line */
static void summarise_memory(const pl_fwlog *l, pl_fwlog_summary *s)
{
	for (int i = 0; i < l->nmems; i++) {
		const pl_fwlog_mem *m = &l->mems[i];
		double a = isfinite(m->max_allocated) ? m->max_allocated : m->allocated,
		       r = isfinite(m->max_reserved) ? m->max_reserved : m->reserved;
		if (isfinite(a) && !(a <= s->max_allocated)) {
			s->max_allocated = a;
			s->mem_line = m->line;
		}
		if (isfinite(r) && !(r <= s->max_reserved)) {
			s->max_reserved = r;
			if (!isfinite(s->max_allocated))
				s->mem_line = m->line;
		}
	}
}

pl_status pl_fwlog_summarise(const pl_fwlog *l, int warmup, const pl_fwlog_scale *scale,
                             const char *where, pl_fwlog_summary *out, pl_err *err)
{
	static const pl_fwlog_scale none = {0, 0, 0};
	if (!scale)
		scale = &none;
	pl_fwlog_summary s = {.first_step = -1,
	                      .last_step = -1,
	                      .step_s = NAN,
	                      .step_min_s = NAN,
	                      .step_max_s = NAN,
	                      .max_allocated = NAN,
	                      .max_reserved = NAN};
	int kind = -1;
	for (int k = 0; k < PL_FWLOG_KIND_COUNT && kind < 0; k++)
		for (int i = 0; i < l->nsteps; i++)
			if (l->steps[i].kind == (pl_fwlog_kind)k) {
				kind = k;
				break;
			}
	if (kind < 0)
		return no_steps(l, where, err);
	s.kind = (pl_fwlog_kind)kind;
	if (warmup < 0)
		warmup = 0;
	if (warmup > l->nsteps) /* no more distinct steps than reports */
		warmup = l->nsteps;
	int64_t *seen = pl_malloc(sizeof *seen * (size_t)(warmup + 1));
	double *t = pl_malloc(sizeof *t * (size_t)(l->nsteps + 1));
	int *ranks = pl_malloc(sizeof *ranks * 65);
	pl_status st = PL_OK;
	if (!seen || !t || !ranks) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto cleanup;
	}
	int nseen = 0, nranks = 0, last_line = 0;
	double batch = isfinite(l->train_batch) ? l->train_batch : scale->samples_per_step;
	for (int i = 0; i < l->nsteps; i++) {
		const pl_fwlog_step *r = &l->steps[i];
		if (r->kind != s.kind)
			continue;
		s.reports++;
		last_line = r->line;
		int warm = 0;
		for (int k = 0; k < nseen && !warm; k++)
			warm = seen[k] == r->step;
		if (!warm && nseen < warmup) {
			seen[nseen++] = r->step;
			warm = 1;
		}
		if (warm)
			continue;
		double x = 0;
		if ((st = report_seconds(l, r, scale, batch, where, &s, &x, err)))
			goto cleanup;
		t[s.used++] = x;
		if (s.first_step < 0 || r->step < s.first_step)
			s.first_step = r->step;
		if (r->step > s.last_step)
			s.last_step = r->step;
		int known = r->rank < 0;
		for (int k = 0; k < nranks && !known; k++)
			known = ranks[k] == r->rank;
		if (!known && nranks < 64)
			ranks[nranks++] = r->rank;
	}
	s.warmup_steps = nseen;
	s.ranks = nranks;
	if (!s.used) {
		st = pl_err_set(err, PL_EINVAL,
		                "%s: %d step report%s of %s, all in the first %d step%s taken as "
		                "warm-up (the last on line %d): expected reports after the "
		                "warm-up (log more steps, or --warmup 0)",
		                where, s.reports, s.reports == 1 ? "" : "s",
		                pl_fwlog_kind_names[s.kind], warmup, warmup == 1 ? "" : "s",
		                last_line);
		goto cleanup;
	}
	qsort(t, (size_t)s.used, sizeof *t, cmp_double);
	s.step_s = s.used % 2 ? t[s.used / 2] : (t[s.used / 2 - 1] + t[s.used / 2]) / 2;
	s.step_min_s = t[0];
	s.step_max_s = t[s.used - 1];
	summarise_memory(l, &s);
	*out = s;
cleanup:
	free(seen);
	free(t);
	free(ranks);
	return st;
}
