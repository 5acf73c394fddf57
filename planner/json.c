#include "planner/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "planner/alloc.h"

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

pl_status pl_json_parse(const char *text, size_t len, const char *name, cJSON **out, pl_err *err)
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
	const char *end = NULL;
	unsigned long nulls = pl_alloc_null_count();
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
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
	if (st)
		cJSON_Delete(root);
	else
		*out = root;
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
