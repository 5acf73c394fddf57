/* Starting values for `planner run`: an ONNX file's initializers as the
 * params (pl_onnx_weights matches them by name) and a batch from .npy or raw
 * little-endian files. The .npy header is parsed strictly (it is a Python
 * dict literal: exactly the three keys numpy writes, nothing else), since a
 * file of another shape or kind than the model's input is a user's mistake
 * to name, not to guess around. */
#include "planner/values.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/alloc.h"
#include "graph/onnx.h"

/* ---- .npy ---- */

typedef struct npy_kind {
	const char *descr;
	int width, is_float;
} npy_kind;

static const npy_kind kinds[] = {{"<f4", 4, 1}, {"<f8", 8, 1}, {"<f2", 2, 1},
                                 {"<i8", 8, 0}, {"<i4", 4, 0}, {"<i2", 2, 0},
                                 {"|i1", 1, 0}, {"|u1", 1, 0}, {"|b1", 1, 0}};
#define KINDS "<f4, <f8, <f2, <i8, <i4, <i2, |i1, |u1, |b1"

static const npy_kind *kind_of(const char *descr)
{
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (!strcmp(descr, kinds[k].descr))
			return &kinds[k];
	return NULL;
}

typedef struct hdr {
	const char *p, *end, *start, *path;
	pl_err *err;
} hdr;

static void skip_ws(hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t'))
		h->p++;
}

static int eat(hdr *h, char c)
{
	skip_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return 1;
	}
	return 0;
}

/* a quoted string ('...' or "...", no escapes) into buf */
static int quoted(hdr *h, char *buf, size_t cap)
{
	skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return -1;
	char q = *h->p++;
	size_t n = 0;
	while (h->p < h->end && *h->p != q && *h->p != '\\' && n + 1 < cap)
		buf[n++] = *h->p++;
	if (h->p >= h->end || *h->p != q)
		return -1;
	h->p++;
	buf[n] = 0;
	return 0;
}

static pl_status bad_header(hdr *h, const char *what)
{
	return pl_err_set(h->err, PL_EINVAL, "%s: .npy header: %s (at character %lld of '%.*s')",
	                  h->path, what, (long long)(h->p - h->start), (int)(h->end - h->start),
	                  h->start);
}

pl_status pl_npy_parse(const unsigned char *b, size_t len, const char *path, pl_npy *out,
                       pl_err *err)
{
	memset(out, 0, sizeof *out);
	if (len < 10 || memcmp(b, "\x93NUMPY", 6))
		return pl_err_set(err, PL_EINVAL, "%s: not a .npy file (no \\x93NUMPY magic)",
		                  path);
	int major = b[6], minor = b[7];
	if (major < 1 || major > 3 || minor != 0)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: .npy version %d.%d: expected 1.0, 2.0 or 3.0", path, major,
		                  minor);
	size_t hl, at = major == 1 ? 10 : 12;
	if (len < at)
		return pl_err_set(err, PL_EINVAL, "%s: .npy header length: the file ends first",
		                  path);
	hl = major == 1
	         ? (size_t)b[8] | (size_t)b[9] << 8
	         : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
	if (hl > len - at)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: .npy header length %zu: the file has %zu bytes after it",
		                  path, hl, len - at);
	hdr h = {(const char *)b + at, (const char *)b + at + hl, (const char *)b + at, path, err};
	/* numpy pads the dict with spaces and ends it with a newline */
	while (h.end > h.p && (h.end[-1] == ' ' || h.end[-1] == '\n'))
		h.end--;
	if (!eat(&h, '{'))
		return bad_header(&h, "expected a dict '{...}'");
	int seen[3] = {0};
	int fortran = 0;
	char key[32], descr[16] = "";
	for (;;) {
		skip_ws(&h);
		if (eat(&h, '}'))
			break;
		if (quoted(&h, key, sizeof key) || !eat(&h, ':'))
			return bad_header(&h, "expected a quoted key and ':'");
		int k = !strcmp(key, "descr")           ? 0
		        : !strcmp(key, "fortran_order") ? 1
		        : !strcmp(key, "shape")         ? 2
		                                        : -1;
		if (k < 0 || seen[k]) {
			char m[96];
			snprintf(m, sizeof m, "key '%s' %s", key,
			         k < 0 ? "is not one of descr, fortran_order, shape" : "twice");
			return bad_header(&h, m);
		}
		seen[k] = 1;
		if (k == 0 && quoted(&h, descr, sizeof descr))
			return bad_header(&h, "'descr': expected a quoted type such as '<f4'");
		if (k == 1) {
			skip_ws(&h);
			if (h.end - h.p >= 4 && !strncmp(h.p, "True", 4))
				fortran = 1, h.p += 4;
			else if (h.end - h.p >= 5 && !strncmp(h.p, "False", 5))
				h.p += 5;
			else
				return bad_header(&h, "'fortran_order': expected True or False");
		}
		if (k == 2) {
			if (!eat(&h, '('))
				return bad_header(&h, "'shape': expected a tuple '(...)'");
			while (!eat(&h, ')')) {
				skip_ws(&h);
				char *e;
				if (h.p >= h.end || !isdigit((unsigned char)*h.p))
					return bad_header(
					    &h, "'shape': expected non-negative integers");
				long long d = strtoll(h.p, &e, 10);
				if (e > h.end || d > ((int64_t)1 << 40) || out->rank >= PL_MAX_RANK)
					return bad_header(&h,
					                  "'shape': a dimension or the rank is too "
					                  "large");
				h.p = e;
				out->shape[out->rank++] = d;
				if (!eat(&h, ',') && (skip_ws(&h), h.p < h.end && *h.p != ')'))
					return bad_header(&h, "'shape': expected ',' or ')'");
			}
		}
		if (!eat(&h, ',')) {
			if (!eat(&h, '}'))
				return bad_header(&h, "expected ',' or '}' after a value");
			break;
		}
	}
	skip_ws(&h);
	if (h.p != h.end)
		return bad_header(&h, "text after the dict");
	if (!seen[0] || !seen[1] || !seen[2])
		return pl_err_set(err, PL_EINVAL, "%s: .npy header: no '%s'", path,
		                  !seen[0]   ? "descr"
		                  : !seen[1] ? "fortran_order"
		                             : "shape");
	const npy_kind *kd = kind_of(descr);
	if (!kd)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: .npy header: 'descr' is '%s'; expected one of " KINDS
		                  " (little-endian)",
		                  path, descr);
	if (fortran)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: .npy header: 'fortran_order' is True; write the array in C "
		                  "order (numpy.ascontiguousarray)",
		                  path);
	int64_t n = 1;
	for (int d = 0; d < out->rank; d++)
		n *= out->shape[d];
	size_t data = len - at - hl;
	if ((double)n * kd->width != (double)data)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: .npy data: %zu bytes; the header's shape and '%s' need %.0f",
		                  path, data, descr, (double)n * kd->width);
	snprintf(out->descr, sizeof out->descr, "%s", descr);
	out->data = b + at + hl;
	out->bytes = data;
	out->width = kd->width;
	return PL_OK;
}

/* ---- values ---- */

static pl_status push(pl_start_values *sv, const char *name, float *v, int64_t n, pl_err *err)
{
	if (sv->n == sv->cap) {
		int cap = sv->cap ? 2 * sv->cap : 16;
		pl_exec_values *nv = pl_realloc(sv->v, sizeof *nv * (size_t)cap);
		if (!nv) {
			free(v);
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		}
		sv->v = nv;
		sv->cap = cap;
	}
	sv->v[sv->n++] = (pl_exec_values){name, v, n};
	return PL_OK;
}

static int given(const pl_start_values *sv, const char *name)
{
	for (int k = 0; k < sv->n; k++)
		if (!strcmp(sv->v[k].name, name))
			return 1;
	return 0;
}

pl_status pl_values_weights(pl_start_values *sv, const char *path, const pl_graph *g, pl_err *err)
{
	char *buf = NULL;
	size_t len;
	float **v = NULL;
	pl_status st = pl_read_file(path, &buf, &len, err);
	if (!st)
		st = pl_onnx_weights((const unsigned char *)buf, len, path, g, &v, err);
	free(buf);
	for (int t = 0; !st && t < g->ntensors; t++)
		if (v[t]) {
			if (given(sv, g->tensors[t].name)) {
				st =
				    pl_err_set(err, PL_EINVAL, "%s: --weights: '%s' is given twice",
				               path, g->tensors[t].name);
				break;
			}
			st = push(sv, g->tensors[t].name, v[t], pl_tensor_elems(&g->tensors[t]),
			          err);
			v[t] = NULL;
			sv->nweights += !st;
		}
	for (int t = 0; v && t < g->ntensors; t++)
		free(v[t]);
	free(v);
	return st;
}

static void shape_text(const int64_t *s, int rank, char *buf, size_t cap)
{
	buf[0] = 0;
	for (int d = 0; d < rank; d++)
		snprintf(buf + strlen(buf), cap - strlen(buf), "%s%lld", d ? ", " : "",
		         (long long)s[d]);
}

/* element i of an integer .npy array */
static int64_t npy_int(const pl_npy *a, size_t i)
{
	const unsigned char *p = a->data + i * (size_t)a->width;
	uint64_t u = 0;
	for (int k = 0; k < a->width; k++)
		u |= (uint64_t)p[k] << 8 * k;
	if (a->descr[0] == '|' && a->descr[1] == 'u')
		return (int64_t)u;
	if (a->descr[1] == 'b')
		return u != 0;
	int bits = 8 * a->width; /* sign-extended */
	if (bits < 64 && (u >> (bits - 1) & 1))
		u |= ~(uint64_t)0 << bits;
	return (int64_t)u;
}

static float npy_float(const pl_npy *a, size_t i)
{
	const unsigned char *p = a->data + i * (size_t)a->width;
	if (a->width == 4) {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	if (a->width == 8) {
		double d;
		memcpy(&d, p, 8);
		return (float)d;
	}
	unsigned h = p[0] | p[1] << 8; /* IEEE half */
	int e = (h >> 10) & 31, f = h & 1023;
	double v = e == 0    ? ldexp(f, -24)
	           : e == 31 ? (f ? NAN : INFINITY)
	                     : ldexp(f + 1024, e - 25);
	return (float)(h & 0x8000 ? -v : v);
}

pl_status pl_values_batch(pl_start_values *sv, const char *spec, const pl_graph *g, pl_err *err)
{
	/* NAME=FILE when NAME is one of the model's inputs; else the one input */
	const char *eq = strchr(spec, '='), *path = spec;
	int t = -1, ninputs = 0, only = -1;
	char names[256] = "";
	for (int k = 0; k < g->ntensors; k++)
		if (g->tensors[k].role == PL_ROLE_INPUT && g->tensors[k].producer < 0) {
			ninputs++;
			only = k;
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
			         ninputs > 1 ? ", " : "", g->tensors[k].name);
		}
	if (eq) {
		char name[512];
		snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
		t = pl_graph_find_tensor(g, name);
		if (t >= 0 && g->tensors[t].role != PL_ROLE_INPUT)
			return pl_err_set(
			    err, PL_EINVAL,
			    "--batch-file %s: '%s' is a %s, not an input of the model "
			    "(its inputs: %s; --weights gives params)",
			    spec, name, pl_role_name(g->tensors[t].role), names);
		if (t >= 0)
			path = eq + 1;
	}
	/* FILE alone for the one input; a NAME= that names none is a mistake
	 * unless the whole of spec is a file's name */
	if (t < 0 && ninputs == 1 && (!eq || access(spec, F_OK) == 0))
		t = only;
	if (t < 0)
		return pl_err_set(err, PL_EINVAL,
		                  "--batch-file %s: expected NAME=FILE, NAME one of the model's "
		                  "inputs: %s",
		                  spec, ninputs ? names : "(none)");
	const pl_tensor *pt = &g->tensors[t];
	if (given(sv, pt->name))
		return pl_err_set(err, PL_EINVAL, "--batch-file %s: input '%s' is given twice",
		                  spec, pt->name);
	int is_int = pt->dtype == PL_DT_INT32 || pt->dtype == PL_DT_INT64;
	int64_t n = pl_tensor_elems(pt);
	char want[160];
	shape_text(pt->shape, pt->rank, want, sizeof want);
	char *buf = NULL;
	size_t len;
	pl_status st = pl_read_file(path, &buf, &len, err);
	if (st)
		return st;
	pl_npy a;
	const unsigned char *b = (const unsigned char *)buf;
	if (len >= 6 && !memcmp(b, "\x93NUMPY", 6)) {
		if ((st = pl_npy_parse(b, len, path, &a, err)))
			goto done;
		char got[160];
		shape_text(a.shape, a.rank, got, sizeof got);
		int same = a.rank == pt->rank;
		for (int d = 0; same && d < a.rank; d++)
			same = a.shape[d] == pt->shape[d];
		int a_float = kind_of(a.descr)->is_float;
		if (!same || a_float == is_int) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s: .npy header: %s (%s, shape (%s)); input '%s' is %s "
			                "[%s]%s",
			                path, !same ? "'shape'" : "'descr'", a.descr, got, pt->name,
			                pl_dtype_name(pt->dtype), want,
			                !same    ? ""
			                : is_int ? ": expected an integer descr (<i8, <i4, ...)"
			                         : ": expected a float descr (<f4, <f8, <f2)");
			goto done;
		}
	} else { /* raw: float32 (or a float64 input's float64), or int64 / int32
		  * by the size */
		int f64 = pt->dtype == PL_DT_FLOAT64;
		int w = is_int || f64 ? (len == (size_t)n * 4 ? 4 : 8) : 4;
		if (len != (size_t)n * (size_t)w) {
			st = pl_err_set(
			    err, PL_EINVAL,
			    "%s: %zu bytes: not a .npy file (no \\x93NUMPY magic), and a "
			    "raw little-endian file for input '%s' [%s] holds %s (%lld "
			    "bytes%s)",
			    path, len, pt->name, want,
			    is_int ? "int64 or int32 values"
			    : f64  ? "float64 or float32 values"
			           : "float32 values",
			    (long long)n * (is_int || f64 ? 8 : 4),
			    is_int || f64 ? " or half as many" : "");
			goto done;
		}
		a = (pl_npy){.rank = pt->rank, .data = b, .bytes = len, .width = w};
		snprintf(a.descr, sizeof a.descr, "%s",
		         is_int   ? (w == 8 ? "<i8" : "<i4")
		         : w == 8 ? "<f8"
		                  : "<f4");
	}
	float *v = pl_malloc(sizeof(float) * (size_t)(n ? n : 1));
	if (!v) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	for (int64_t i = 0; i < n; i++) {
		if (!is_int) {
			v[i] = npy_float(&a, (size_t)i);
			continue;
		}
		int64_t x = npy_int(&a, (size_t)i);
		if (x > (1 << 24) || x < -(1 << 24)) {
			free(v);
			st =
			    pl_err_set(err, PL_EINVAL,
			               "%s: element %lld of input '%s' is %lld: beyond 2^24, which "
			               "the executor's float32 does not hold exactly",
			               path, (long long)i, pt->name, (long long)x);
			goto done;
		}
		v[i] = (float)x;
	}
	st = push(sv, pt->name, v, n, err);
done:
	free(buf);
	return st;
}

void pl_values_free(pl_start_values *sv)
{
	for (int k = 0; sv && k < sv->n; k++)
		free((void *)sv->v[k].v);
	if (sv) {
		free(sv->v);
		memset(sv, 0, sizeof *sv);
	}
}
