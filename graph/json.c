#include "graph/json.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/alloc.h"

static void line_col(const char *text, const char *at, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (const char *p = text; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* 1 when s is valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF) */
static int utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s++;
		if (c < 0x80)
			continue;
		int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 ? 1 : -1;
		if (n < 0 || c > 0xF4)
			return 0;
		uint32_t cp = c & (0x3Fu >> n);
		for (int k = 0; k < n; k++, s++) {
			if ((*s & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (*s & 0x3Fu);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return 0;
	}
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Where a value sits, as a chain up to the document; written out as
 * "tensors.x.shape" or "ops[3].inputs" only for a message. */
typedef struct jpath {
	const struct jpath *up; /* NULL: the document */
	const char *key;        /* the member's key, or NULL: element `index` */
	int index;
} jpath;

static size_t render(const jpath *p, char *buf, size_t n)
{
	if (!p || !p->up) {
		buf[0] = 0;
		return 0;
	}
	size_t k = render(p->up, buf, n);
	int w = p->key ? snprintf(buf + k, n - k, "%s%s", k ? "." : "", p->key)
	               : snprintf(buf + k, n - k, "[%d]", p->index);
	k += w > 0 ? (size_t)w : 0;
	return k < n ? k : n - 1;
}

static pl_status fail_at(pl_err *err, const char *name, const jpath *at, const char *what)
{
	char w[512];
	render(at, w, sizeof w);
	return pl_err_set(err, PL_EINVAL, "%s: %s: %s", name, w[0] ? w : "(document)", what);
}

static pl_status check(const cJSON *o, const char *name, const jpath *at, pl_err *err)
{
	if (cJSON_IsNumber(o) && !isfinite(o->valuedouble))
		return fail_at(err, name, at, "the number is not finite");
	if (cJSON_IsString(o) && !utf8_ok((const unsigned char *)o->valuestring))
		return fail_at(err, name, at, "the string is not valid UTF-8");
	if (!cJSON_IsObject(o) && !cJSON_IsArray(o))
		return PL_OK;
	int n = cJSON_GetArraySize(o), i = 0;
	const char **keys = NULL;
	if (cJSON_IsObject(o) && n > 1 && !(keys = pl_malloc(sizeof *keys * (size_t)n)))
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory", name);
	const cJSON *c;
	pl_status st = PL_OK;
	cJSON_ArrayForEach (c, o) {
		jpath here = {at, c->string, i};
		if (c->string && !utf8_ok((const unsigned char *)c->string)) {
			st = fail_at(err, name, &here, "the key is not valid UTF-8");
			break;
		}
		if (keys)
			keys[i] = c->string;
		i++;
		if ((st = check(c, name, &here, err)))
			break;
	}
	if (!st && keys) {
		qsort(keys, (size_t)n, sizeof *keys, cmp_str);
		for (int k = 1; k < n && !st; k++)
			if (!strcmp(keys[k - 1], keys[k])) {
				jpath dup = {at, keys[k], 0};
				st = fail_at(err, name, &dup,
				             "declared twice (a key may appear once in an object)");
			}
	}
	free(keys);
	return st;
}

/* The sizes a document may have, checked on the text before cJSON builds a
 * tree (64 bytes a value): no array or object holds more than
 * PL_JSON_MAX_ITEMS values and the document no more than PL_JSON_MAX_VALUES,
 * so a file of one huge array cannot take gigabytes to be refused. */
static pl_status bounded(const char *text, size_t len, const char *name, pl_err *err)
{
	enum { DEPTH = 1024 }; /* deeper than cJSON's nesting limit, which reports it */
	uint32_t commas[DEPTH];
	uint64_t values = 1;
	int depth = 0;
	const char *bad = NULL, *what = NULL;
	int limit = 0;
	for (size_t i = 0; i < len && !bad; i++) {
		char c = text[i];
		if (c == '"') { /* skip the string, escapes included */
			for (i++; i < len && text[i] != '"'; i++)
				if (text[i] == '\\')
					i++;
		} else if (c == '[' || c == '{') {
			if (depth < DEPTH)
				commas[depth] = 0;
			depth++;
			values++;
		} else if (c == ']' || c == '}') {
			depth -= depth > 0;
		} else if (c == ',') {
			values++;
			if (depth > 0 && depth <= DEPTH && ++commas[depth - 1] >= PL_JSON_MAX_ITEMS)
				bad = text + i, what = "values in one array or object",
				limit = PL_JSON_MAX_ITEMS;
		}
		if (!bad && values > PL_JSON_MAX_VALUES)
			bad = text + i, what = "values in the document", limit = PL_JSON_MAX_VALUES;
	}
	if (!bad)
		return PL_OK;
	int line, col;
	line_col(text, bad, &line, &col);
	return pl_err_set(err, PL_EINVAL, "%s:%d:%d: more than %d %s", name, line, col, limit,
	                  what);
}

/* ---- long arrays of numbers, read without a node per number ---- */

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the '[' or '{' at *p and the white space after it: 1 with *p past
 * `close` when the list is empty, else 0 with *p at its first item */
static int list_open(const char **p, const char *end, char close)
{
	*p = skip_ws(*p + 1, end);
	if (*p < end && **p == close) {
		++*p;
		return 1;
	}
	return 0;
}

/* After an item of a list closed by `close`, white space skipped: 1 with *p
 * past the close when the list ends there, 0 with *p at the next item (past
 * the ',' and white space), -1 when neither follows (not as JSON writes it) */
static int list_next(const char **p, const char *end, char close)
{
	const char *q = skip_ws(*p, end);
	if (q < end && *q == close) {
		*p = q + 1;
		return 1;
	}
	if (q >= end || *q != ',')
		return -1;
	*p = skip_ws(q + 1, end);
	return 0;
}

/* The number at p as JSON's grammar writes it, at most 63 characters
 * (cJSON's buffer): its end and, in *x, its value as strtod reads it (not
 * checked: callers refuse what they do not take); NULL when it is none. */
static const char *json_number(const char *p, const char *end, double *x)
{
	const char *q = p;
	q += q < end && *q == '-';
	if (q >= end || *q < '0' || *q > '9')
		return NULL;
	if (*q == '0')
		q++;
	else
		while (q < end && *q >= '0' && *q <= '9')
			q++;
	if (q < end && *q == '.') {
		const char *d = ++q;
		while (q < end && *q >= '0' && *q <= '9')
			q++;
		if (q == d)
			return NULL;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		q += q < end && (*q == '+' || *q == '-');
		const char *d = q;
		while (q < end && *q >= '0' && *q <= '9')
			q++;
		if (q == d)
			return NULL;
	}
	char buf[64];
	if (q - p > 63)
		return NULL;
	memcpy(buf, p, (size_t)(q - p));
	buf[q - p] = 0;
	*x = strtod(buf, NULL);
	return q;
}

/* A number as JSON writes it at p (what cJSON reads the same way: at most
 * 63 characters, its buffer) or the strings "inf" and "-inf"; its value in
 * *v and the end, or NULL. */
static const char *scan_number(const char *p, const char *end, float *v)
{
	if (end - p >= 5 && !memcmp(p, "\"inf\"", 5)) {
		*v = INFINITY;
		return p + 5;
	}
	if (end - p >= 6 && !memcmp(p, "\"-inf\"", 6)) {
		*v = -INFINITY;
		return p + 6;
	}
	double x;
	const char *q = json_number(p, end, &x);
	/* what the reader refuses goes to cJSON, which names it */
	if (!q || !isfinite(x) || fabs(x) > FLT_MAX) /* float32's largest: nan_to_num's */
		return NULL;
	*v = (float)x;
	return q;
}

/* The array at p ('['): all numbers, at least PL_JSON_NUMBERS_MIN and fewer
 * than PL_JSON_MAX_ITEMS of them: into a new pl_json_numarray, its end
 * (after ']') returned; else NULL (or PL_ENOMEM in *st). */
static const char *scan_array(const char *p, const char *end, struct pl_json_numarray *a,
                              pl_status *st)
{
	int64_t n = 0;
	float v;
	/* numbers, one comma between two, then ']' (no trailing comma) */
	for (const char *q = skip_ws(p + 1, end);; q = skip_ws(q + 1, end)) {
		if (!(q = scan_number(q, end, &v)))
			return NULL;
		n++;
		q = skip_ws(q, end);
		if (q < end && *q == ']')
			break;
		if (q >= end || *q != ',')
			return NULL;
	}
	if (n < PL_JSON_NUMBERS_MIN || n >= PL_JSON_MAX_ITEMS)
		return NULL;
	if (!(a->v = pl_malloc(sizeof(float) * (size_t)n))) {
		*st = PL_ENOMEM;
		return NULL;
	}
	a->count = 0;
	const char *q = skip_ws(p + 1, end);
	for (;; q = skip_ws(q + 1, end)) {
		q = skip_ws(scan_number(q, end, &a->v[a->count++]), end);
		if (*q == ']')
			break;
	}
	return q + 1;
}

/* The long arrays of numbers under `key` in text: read into nums, their
 * ordinals among the document's arrays in ord, and blanked in a copy of
 * the text (*copy; NULL when there is none), newlines kept so that every
 * line and column cJSON reports stays the text's. */
static pl_status scan_numbers(const char *text, size_t len, const char *key, char **copy,
                              pl_json_numbers *nums, int64_t **ord)
{
	const char *end = text + len, *kstart = NULL;
	size_t klen = strlen(key), cap = 0;
	int64_t arrays = 0;
	int had = *copy != NULL; /* then text is *copy, blanked in place */
	for (const char *p = text; p < end; p++) {
		if (*p == '"') {
			const char *s = p + 1;
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
			if (p >= end) /* not closed: cJSON says where */
				break;
			kstart = (size_t)(p - s) == klen && !memcmp(s, key, klen) ? p + 1 : NULL;
			continue;
		}
		if (*p != '[')
			continue;
		const char *k = kstart;
		kstart = NULL;
		arrays++;
		if (!k)
			continue;
		k = skip_ws(k, end);
		if (k >= end || *k != ':' || skip_ws(k + 1, end) != p)
			continue;
		struct pl_json_numarray a = {0};
		pl_status st = PL_OK;
		const char *after = scan_array(p, end, &a, &st);
		if (st)
			return st;
		if (!after)
			continue;
		if (!*copy && !(*copy = pl_malloc(len + 1))) {
			free(a.v);
			return PL_ENOMEM;
		}
		if ((size_t)nums->n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct pl_json_numarray *na = pl_realloc(nums->a, sizeof *na * nc);
			int64_t *no = na ? pl_realloc(*ord, sizeof *no * nc) : NULL;
			if (na)
				nums->a = na;
			if (!na || !no) {
				free(a.v);
				return PL_ENOMEM;
			}
			*ord = no;
			cap = nc;
		}
		nums->a[nums->n] = a;
		(*ord)[nums->n++] = arrays - 1;
		p = after - 1;
	}
	if (!nums->n)
		return PL_OK;
	if (!had) {
		memcpy(*copy, text, len);
		(*copy)[len] = 0;
	}
	/* blank each array's inside (its ordinal says which '[' it is) */
	int64_t at = 0;
	int next = 0;
	for (size_t i = 0; i < len && next < nums->n; i++) {
		char c = text[i];
		if (c == '"') {
			for (i++; i < len && text[i] != '"'; i++)
				if (text[i] == '\\')
					i++;
		} else if (c == '[' && at++ == (*ord)[next]) {
			for (i++; text[i] != ']'; i++)
				if (text[i] != '\n')
					(*copy)[i] = ' ';
			next++;
		}
	}
	return PL_OK;
}

/* Marks the arrays of the tree that the scanner read: an array's valueint
 * (which cJSON leaves 0 in an array) is its index in nums plus one. The
 * tree's arrays in document order are its text's '[' in order. */
static void mark_arrays(cJSON *n, int64_t *at, const int64_t *ord, int nord, int *next)
{
	for (; n && *next < nord; n = n->next) {
		if (cJSON_IsArray(n) && (*at)++ == ord[*next])
			n->valueint = ++*next;
		if (n->child)
			mark_arrays(n->child, at, ord, nord, next);
	}
}

void pl_json_numbers_free(pl_json_numbers *nums)
{
	if (!nums)
		return;
	for (int i = 0; i < nums->n; i++)
		free(nums->a[i].v);
	free(nums->a);
	nums->a = NULL;
	nums->n = 0;
}

const float *pl_json_numbers_of(const pl_json_numbers *nums, const cJSON *a, int64_t *count)
{
	if (!nums || !cJSON_IsArray(a) || a->valueint < 1 || a->valueint > nums->n)
		return NULL;
	*count = nums->a[a->valueint - 1].count;
	return nums->a[a->valueint - 1].v;
}

/* ---- values the reader does not read, checked but never built ---- */

/* Deepest nesting of a value blanked (cJSON refuses past 1000: a deeper
 * value is left to it, which says where) */
#define SKIP_DEPTH 512

typedef struct span {
	const char *s;
	size_t n;
} span;

typedef struct skipper {
	const char *text, *end;
	span *keys; /* the keys of the objects open in the value being checked */
	size_t nkeys, cap;
	int oom;
} skipper;

static int cmp_span(const void *a, const void *b)
{
	const span *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The string at p ('"') when cJSON reads it as these bytes and check() takes
 * it: no escape but the one-letter ones (none in a key: its bytes are then
 * what is compared), no control character, valid UTF-8 as utf8_ok has it.
 * Its end (after '"'), or NULL. */
static const char *valid_string(const char *p, const char *end, int key)
{
	for (p++; p < end;) {
		unsigned c = (unsigned char)*p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (key || end - p < 2 || !strchr("\"\\/bfnrt", p[1]) || !p[1])
				return NULL;
			p += 2;
			continue;
		}
		if (c < 0x80) {
			p++;
			continue;
		}
		int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 ? 1 : -1;
		if (n < 0 || c > 0xF4 || end - p <= n)
			return NULL;
		uint32_t cp = c & (0x3Fu >> n);
		for (int k = 1; k <= n; k++) {
			if ((p[k] & 0xC0) != 0x80)
				return NULL;
			cp = cp << 6 | (p[k] & 0x3Fu);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return NULL;
		p += n + 1;
	}
	return NULL;
}

/* The number at p as JSON writes it, at most 63 characters (cJSON's buffer)
 * and finite as strtod reads it (check()); its end or NULL. */
static const char *valid_number(const char *p, const char *end)
{
	double x;
	const char *q = json_number(p, end, &x);
	return q && isfinite(x) ? q : NULL;
}

/* The value at p (white space skipped) when pl_json_parse would take it
 * whole (cJSON parses it, check() finds nothing: no key twice, strings
 * valid, numbers finite) and it nests at most SKIP_DEPTH deep counting
 * depth; its end, or NULL: leave it to cJSON, whose message it gets. */
static const char *valid_value(skipper *s, const char *p, int depth)
{
	const char *end = s->end;
	p = skip_ws(p, end);
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		return valid_string(p, end, 0);
	case 't':
		return end - p >= 4 && !memcmp(p, "true", 4) ? p + 4 : NULL;
	case 'f':
		return end - p >= 5 && !memcmp(p, "false", 5) ? p + 5 : NULL;
	case 'n':
		return end - p >= 4 && !memcmp(p, "null", 4) ? p + 4 : NULL;
	case '[':
		if (depth + 1 > SKIP_DEPTH)
			return NULL;
		if (list_open(&p, end, ']'))
			return p;
		for (;;) {
			if (!(p = valid_value(s, p, depth + 1)))
				return NULL;
			int last = list_next(&p, end, ']');
			if (last)
				return last > 0 ? p : NULL;
		}
	case '{': {
		if (depth + 1 > SKIP_DEPTH)
			return NULL;
		size_t base = s->nkeys;
		const char *r = NULL;
		if (list_open(&p, end, '}'))
			return p;
		for (;;) {
			const char *k = p, *ke;
			if (p >= end || *p != '"' || !(ke = valid_string(p, end, 1)))
				break;
			if (s->nkeys == s->cap) {
				size_t nc = s->cap ? 2 * s->cap : 64;
				span *nk = pl_realloc(s->keys, sizeof *nk * nc);
				if (!nk) {
					s->oom = 1;
					break;
				}
				s->keys = nk;
				s->cap = nc;
			}
			s->keys[s->nkeys++] = (span){k + 1, (size_t)(ke - k - 2)};
			p = skip_ws(ke, end);
			if (p >= end || *p != ':' || !(p = valid_value(s, p + 1, depth + 1)))
				break;
			int last = list_next(&p, end, '}');
			if (last) {
				r = last > 0 ? p : NULL;
				break;
			}
		}
		/* no key twice (check() says which, cJSON having built it) */
		size_t n = s->nkeys - base;
		if (r && n > 1) {
			qsort(s->keys + base, n, sizeof *s->keys, cmp_span);
			for (size_t i = base + 1; i < s->nkeys && r; i++)
				if (!cmp_span(&s->keys[i - 1], &s->keys[i]))
					r = NULL;
		}
		s->nkeys = base;
		return r;
	}
	default:
		return valid_number(p, end);
	}
}

/* The end of the value at p, as cJSON would delimit it if it reads it
 * (strings with their escapes, brackets matched); NULL at the end of the
 * text. Nothing is checked: such a value is the reader's and cJSON's. */
static const char *any_value(const char *p, const char *end)
{
	p = skip_ws(p, end);
	if (p >= end)
		return NULL;
	if (*p == '"') {
		for (p++; p < end && *p != '"'; p++)
			if (*p == '\\')
				p++;
		return p < end ? p + 1 : NULL;
	}
	if (*p == '[' || *p == '{') {
		int64_t depth = 0;
		for (; p < end; p++) {
			if (*p == '"') {
				for (p++; p < end && *p != '"'; p++)
					if (*p == '\\')
						p++;
				if (p >= end)
					return NULL;
			} else if (*p == '[' || *p == '{') {
				depth++;
			} else if ((*p == ']' || *p == '}') && --depth == 0) {
				return p + 1;
			}
		}
		return NULL;
	}
	while (p < end && !strchr(",]} \t\n\r:", *p))
		p++;
	return p;
}

static int known_key(const pl_json_shape *sh, const char *k, size_t n)
{
	for (int i = 0; i < sh->nkeys; i++)
		if (strlen(sh->keys[i]) == n && !memcmp(sh->keys[i], k, n))
			return 1;
	return 0;
}

static const pl_json_shape *field_shape(const pl_json_shape *sh, const char *k, size_t n)
{
	for (int i = 0; i < sh->nfields; i++)
		if (strlen(sh->fields[i].key) == n && !memcmp(sh->fields[i].key, k, n))
			return sh->fields[i].shape;
	return sh->each;
}

/* Walks the value at p that has shape sh (NULL: none known), blanking in
 * *copy (made on the first) the value of each key sh's objects do not read
 * that valid_value takes: "0" and spaces, newlines kept, so that cJSON
 * builds a number where it was and every line and column stays the
 * text's. Returns the value's end, or NULL: the text is not as the walk
 * expects (cJSON reads the rest and says what is wrong). */
static const char *walk(skipper *s, const char *p, const pl_json_shape *sh, char **copy,
                        int depth)
{
	const char *end = s->end;
	p = skip_ws(p, end);
	if (!sh || p >= end || (*p != '{' && *p != '['))
		return any_value(p, end);
	if (*p == '[') {
		if (list_open(&p, end, ']'))
			return p;
		for (;;) {
			if (!(p = walk(s, p, sh->each, copy, depth + 1)) || s->oom)
				return NULL;
			int last = list_next(&p, end, ']');
			if (last)
				return last > 0 ? p : NULL;
		}
	}
	if (list_open(&p, end, '}'))
		return p;
	for (;;) {
		const char *k = p, *ke = p < end && *p == '"' ? any_value(p, end) : NULL;
		if (!ke)
			return NULL;
		p = skip_ws(ke, end);
		if (p >= end || *p != ':')
			return NULL;
		const char *v = skip_ws(p + 1, end), *ve = NULL;
		/* a key with an escape may be a known one written so: never skipped */
		if (sh->keys && !memchr(k, '\\', (size_t)(ke - k)) &&
		    !known_key(sh, k + 1, (size_t)(ke - k - 2))) {
			if ((ve = valid_value(s, v, depth))) {
				if (!*copy) {
					size_t len = (size_t)(end - s->text);
					if (!(*copy = pl_malloc(len + 1))) {
						s->oom = 1;
						return NULL;
					}
					memcpy(*copy, s->text, len);
					(*copy)[len] = 0;
				}
				char *c = *copy + (v - s->text);
				*c++ = '0';
				for (; c < *copy + (ve - s->text); c++)
					if (*c != '\n')
						*c = ' ';
			} else if (s->oom) {
				return NULL;
			}
		}
		if (!ve && !(ve = walk(s, v, field_shape(sh, k + 1, (size_t)(ke - k - 2)), copy,
		                       depth + 1)))
			return NULL;
		if (s->oom)
			return NULL;
		p = ve;
		int last = list_next(&p, end, '}');
		if (last)
			return last > 0 ? p : NULL;
	}
}

static pl_status parse(const char *text, size_t len, const char *name, const char *key,
                       const pl_json_shape *shape, cJSON **out, pl_json_numbers *nums,
                       pl_err *err);

pl_status pl_json_parse(const char *text, size_t len, const char *name, cJSON **out, pl_err *err)
{
	return parse(text, len, name, NULL, NULL, out, NULL, err);
}

pl_status pl_json_parse_numbers(const char *text, size_t len, const char *name, const char *key,
                                cJSON **out, pl_json_numbers *nums, pl_err *err)
{
	return parse(text, len, name, key, NULL, out, nums, err);
}

pl_status pl_json_parse_shaped(const char *text, size_t len, const char *name,
                               const pl_json_shape *shape, const char *key, cJSON **out,
                               pl_json_numbers *nums, pl_err *err)
{
	return parse(text, len, name, key, shape, out, nums, err);
}

static pl_status parse(const char *text, size_t len, const char *name, const char *key,
                       const pl_json_shape *shape, cJSON **out, pl_json_numbers *nums,
                       pl_err *err)
{
	*out = NULL;
	int line, col;
	if (memchr(text, 0, len)) {
		line_col(text, memchr(text, 0, len), &line, &col);
		return pl_err_set(err, PL_EINVAL, "%s:%d:%d: a NUL byte in the file", name, line,
		                  col);
	}
	pl_status bst = bounded(text, len, name, err);
	if (bst)
		return bst;
	char *copy = NULL;
	int64_t *ord = NULL;
	if (shape) { /* unread values blanked in a copy before cJSON sees them */
		skipper sk = {.text = text, .end = text + len};
		walk(&sk, text, shape, &copy, 0);
		free(sk.keys);
		if (sk.oom) {
			free(copy);
			return pl_err_set(err, PL_ENOMEM, "%s: out of memory", name);
		}
	}
	if (key && (bst = scan_numbers(copy ? copy : text, len, key, &copy, nums, &ord))) {
		free(copy);
		free(ord);
		pl_json_numbers_free(nums);
		return pl_err_set(err, bst, "%s: out of memory", name);
	}
	const char *end = NULL;
	unsigned long nulls = pl_alloc_null_count();
	cJSON *root = cJSON_ParseWithLengthOpts(copy ? copy : text, len, &end, 0);
	if (copy) { /* positions in the text, not the copy */
		end = end ? text + (end - copy) : NULL;
		if (root && nums && nums->n) {
			int64_t at = 0;
			int next = 0;
			mark_arrays(root, &at, ord, nums->n, &next);
		}
		free(copy);
	}
	free(ord);
	if (!root)
		pl_json_numbers_free(nums);
	if (!root && pl_alloc_null_count() != nulls)
		return pl_err_set(err, PL_ENOMEM, "%s: out of memory reading it", name);
	if (!root) {
		line_col(text, end && end >= text && end <= text + len ? end : text, &line, &col);
		return pl_err_set(err, PL_EINVAL, "%s:%d:%d: malformed JSON", name, line, col);
	}
	const char *p = end;
	while (p < text + len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	pl_status st = PL_OK;
	if (p < text + len) {
		line_col(text, p, &line, &col);
		st = pl_err_set(err, PL_EINVAL, "%s:%d:%d: unexpected data after the JSON document",
		                name, line, col);
	} else {
		st = check(root, name, &(jpath){NULL, NULL, 0}, err);
	}
	if (st) {
		cJSON_Delete(root);
		pl_json_numbers_free(nums);
	} else {
		*out = root;
	}
	return st;
}

int pl_json_add(cJSON *obj, const char *key, cJSON *item)
{
	if (item && obj && cJSON_AddItemToObject(obj, key, item))
		return 1;
	cJSON_Delete(item);
	return 0;
}

int pl_json_push(cJSON *arr, cJSON *item)
{
	if (item && arr && cJSON_AddItemToArray(arr, item))
		return 1;
	cJSON_Delete(item);
	return 0;
}

double pl_json_num(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int pl_json_int(const cJSON *o, const char *key, int dflt, int lo, int hi)
{
	double v = pl_json_num(o, key, dflt);
	return isfinite(v) && v >= lo && v <= hi && v == floor(v) ? (int)v : dflt;
}
