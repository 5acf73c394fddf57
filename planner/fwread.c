/* Framework configuration readers (planner/fwread.h): command-line arguments,
 * a YAML subset (block mappings of scalars; sequences and block scalars are
 * skipped whole), a TOML subset (tables of one-line key = value) and JSON,
 * each flattened to (dotted key, scalar) entries. The one idea: nothing is
 * guessed -- a line the subset does not cover is an error naming it, except
 * the YAML constructs that cannot hold a key we read, which are skipped. */
#include "planner/fwread.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/alloc.h"
#include "graph/json.h"

void pl_fw_kvs_free(pl_fw_kvs *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->n; i++) {
		free(k->kv[i].key);
		free(k->kv[i].val);
	}
	free(k->kv);
	memset(k, 0, sizeof *k);
}

const pl_fw_kv *pl_fw_get(const pl_fw_kvs *k, const char *key)
{
	for (int i = k->n - 1; i >= 0; i--)
		if (!strcmp(k->kv[i].key, key))
			return &k->kv[i];
	return NULL;
}

/* copies of key[0..kl) and val[0..vl) (val NULL: a switch) appended */
static pl_status add(pl_fw_kvs *k, const char *key, size_t kl, const char *val, size_t vl, int line,
                     const char *where, pl_err *err)
{
	if (kl > PL_FW_MAX_TEXT || (val && vl > PL_FW_MAX_TEXT))
		return pl_err_set(err, PL_EINVAL, "%s:%d: a key or value longer than %d bytes",
		                  where, line, PL_FW_MAX_TEXT);
	if (k->n >= PL_FW_MAX_ENTRIES)
		return pl_err_set(err, PL_EINVAL, "%s: more than %d entries", where,
		                  PL_FW_MAX_ENTRIES);
	if (k->n == k->cap) {
		int cap = k->cap ? 2 * k->cap : 32;
		pl_fw_kv *n = pl_realloc(k->kv, (size_t)cap * sizeof *n);
		if (!n)
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		k->kv = n;
		k->cap = cap;
	}
	pl_fw_kv *e = &k->kv[k->n];
	e->key = pl_malloc(kl + 1);
	e->val = val ? pl_malloc(vl + 1) : NULL;
	if (!e->key || (val && !e->val)) {
		free(e->key);
		free(e->val);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	memcpy(e->key, key, kl);
	e->key[kl] = 0;
	if (val) {
		memcpy(e->val, val, vl);
		e->val[vl] = 0;
	}
	e->line = line;
	k->n++;
	return PL_OK;
}

/* ---- command-line arguments ---- */

/* Tokens as a POSIX shell splits them (quotes, backslash-newline, '#'
 * comments); "--k=v" and "--k v" are entries, other words are skipped. */
static pl_status read_args(const char *s, size_t len, const char *where, pl_fw_kvs *out,
                           pl_err *err)
{
	char *tok = pl_malloc(len + 1);
	char *prev = NULL; /* a "--flag" waiting for its value */
	int prev_line = 0;
	pl_status st = PL_OK;
	if (!tok)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	size_t i = 0;
	int line = 1;
	for (;;) {
		while (i < len && (isspace((unsigned char)s[i]) ||
		                   (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n'))) {
			if (s[i] == '\\')
				i++;
			if (s[i] == '\n')
				line++;
			i++;
		}
		if (i >= len)
			break;
		if (s[i] == '#') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		size_t n = 0;
		int tline = line, quoted = 0;
		while (i < len && !isspace((unsigned char)s[i])) {
			char c = s[i++];
			if (c == '\'' || c == '"') {
				quoted = 1;
				while (i < len && s[i] != c) {
					if (c == '"' && s[i] == '\\' && i + 1 < len)
						i++;
					if (s[i] == '\n')
						line++;
					tok[n++] = s[i++];
				}
				if (i >= len) {
					st = pl_err_set(err, PL_EINVAL,
					                "%s:%d: unterminated %c quote", where,
					                tline, c);
					goto done;
				}
				i++;
			} else if (c == '\\' && i < len) {
				if (s[i] == '\n') {
					i++;
					line++;
				} else {
					tok[n++] = s[i++];
				}
			} else {
				tok[n++] = c;
			}
		}
		tok[n] = 0;
		int flag = !quoted && n > 2 && tok[0] == '-' && tok[1] == '-';
		if (prev && !flag) { /* the waiting flag's value */
			st = add(out, prev, strlen(prev), tok, n, prev_line, where, err);
			free(prev);
			prev = NULL;
			if (st)
				goto done;
			continue;
		}
		if (prev) { /* a switch */
			st = add(out, prev, strlen(prev), NULL, 0, prev_line, where, err);
			free(prev);
			prev = NULL;
			if (st)
				goto done;
		}
		if (!flag)
			continue; /* the launcher, the script, a positional */
		char *eq = strchr(tok, '=');
		if (eq) {
			if ((st = add(out, tok, (size_t)(eq - tok), eq + 1, strlen(eq + 1), tline,
			              where, err)))
				goto done;
		} else {
			if (n > PL_FW_MAX_TEXT) {
				st =
				    pl_err_set(err, PL_EINVAL, "%s:%d: a flag longer than %d bytes",
				               where, tline, PL_FW_MAX_TEXT);
				goto done;
			}
			if (!(prev = pl_strdup(tok))) {
				st = pl_err_set(err, PL_ENOMEM, "out of memory");
				goto done;
			}
			prev_line = tline;
		}
	}
	if (prev)
		st = add(out, prev, strlen(prev), NULL, 0, prev_line, where, err);
done:
	free(prev);
	free(tok);
	return st;
}

/* ---- YAML and TOML lines ---- */

/* s[0..*n) without spaces at both ends (the start moved) */
static const char *trim(const char *s, size_t *n)
{
	while (*n && isspace((unsigned char)*s)) {
		s++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)s[*n - 1]))
		(*n)--;
	return s;
}

/* The length of s[0..n) before a comment ('#' after a space or at the
 * start, outside quotes); -1 for an unterminated quote. */
static long before_comment(const char *s, size_t n)
{
	char q = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (q) {
			if (c == '\\' && q == '"' && i + 1 < n)
				i++;
			else if (c == q)
				q = 0;
		} else if (c == '"' || c == '\'') {
			q = c;
		} else if (c == '#' && (i == 0 || isspace((unsigned char)s[i - 1]))) {
			return (long)i;
		}
	}
	return q ? -1 : (long)n;
}

/* A scalar without its quotes (a quoted one's text as is: the keys we read
 * hold numbers, words and booleans) */
static const char *unquote(const char *s, size_t *n)
{
	if (*n >= 2 && (s[0] == '"' || s[0] == '\'') && s[*n - 1] == s[0]) {
		*n -= 2;
		return s + 1;
	}
	return s;
}

#define YAML_DEPTH   32
#define YAML_ANCHORS 64

typedef struct yaml_state {
	int nstack;
	int indent[YAML_DEPTH];
	char *key[YAML_DEPTH];
	int nanchor;
	char *anchor[YAML_ANCHORS], *anchor_val[YAML_ANCHORS];
} yaml_state;

static void yaml_free(yaml_state *y)
{
	for (int i = 0; i < y->nstack; i++)
		free(y->key[i]);
	for (int i = 0; i < y->nanchor; i++) {
		free(y->anchor[i]);
		free(y->anchor_val[i]);
	}
}

/* the dotted path of the stack and k[0..kn) into a fresh string */
static char *yaml_path(const yaml_state *y, const char *k, size_t kn)
{
	size_t len = kn + 1;
	for (int i = 0; i < y->nstack; i++)
		len += strlen(y->key[i]) + 1;
	char *p = pl_malloc(len);
	if (!p)
		return NULL;
	p[0] = 0;
	for (int i = 0; i < y->nstack; i++) {
		strcat(p, y->key[i]);
		strcat(p, ".");
	}
	strncat(p, k, kn);
	return p;
}

/* The line of s (len bytes) that starts at *i, without its newline or a
 * carriage return before it, its length into *n; *i moves past it. NULL at
 * the end. */
static const char *next_line(const char *s, size_t len, size_t *i, size_t *n)
{
	if (*i >= len)
		return NULL;
	size_t e = *i;
	while (e < len && s[e] != '\n')
		e++;
	const char *l = s + *i;
	*n = e - *i;
	*i = e + 1;
	if (*n && l[*n - 1] == '\r')
		(*n)--;
	return l;
}

/* A line's text before its comment, trimmed, into *b and *bn; PL_EINVAL
 * naming where:line for an unterminated quote */
static pl_status line_body(const char *l, size_t n, const char *where, int line, const char **b,
                           size_t *bn, pl_err *err)
{
	long c = before_comment(l, n);
	if (c < 0)
		return pl_err_set(err, PL_EINVAL, "%s:%d: unterminated quote", where, line);
	*bn = (size_t)c;
	*b = trim(l, bn);
	return PL_OK;
}

/* A line's 'key: value' (b, bn: its text): the key unquoted and the value
 * trimmed; PL_EINVAL naming where:line where there is none */
static pl_status yaml_key_value(const char *b, size_t bn, const char *where, int line,
                                const char **key, size_t *kn, const char **v, size_t *vn,
                                pl_err *err)
{
	/* key: the text before the first ": " (or a ':' ending the line) */
	size_t k = 0;
	char q = 0;
	for (; k < bn; k++) {
		if (q) {
			if (b[k] == q)
				q = 0;
		} else if (b[k] == '"' || b[k] == '\'') {
			q = b[k];
		} else if (b[k] == ':' && (k + 1 == bn || b[k + 1] == ' ')) {
			break;
		}
	}
	if (k == bn)
		return pl_err_set(err, PL_EINVAL, "%s:%d: expected 'key: value', got '%.*s'", where,
		                  line, (int)(bn > 60 ? 60 : bn), b);
	*kn = k;
	*key = trim(b, kn);
	*key = unquote(*key, kn);
	*vn = bn - k - 1;
	*v = trim(b + k + 1, vn);
	if (!*kn)
		return pl_err_set(err, PL_EINVAL, "%s:%d: an empty key", where, line);
	return PL_OK;
}

/* A value's anchor (&name: *anchor, *an) and tag (!tag) taken off, an
 * alias (*name) resolved to its anchor's value */
static pl_status yaml_anchors(const yaml_state *y, const char **v, size_t *vn, char **anchor,
                              size_t *an, const char *where, int line, pl_err *err)
{
	if (*vn && (*v)[0] == '&') {
		size_t a = 1;
		while (a < *vn && !isspace((unsigned char)(*v)[a]))
			a++;
		*anchor = (char *)*v + 1;
		*an = a - 1;
		*v += a;
		*vn -= a;
		*v = trim(*v, vn);
	}
	if (*vn && (*v)[0] == '!') { /* a tag: the value after it */
		size_t a = 0;
		while (a < *vn && !isspace((unsigned char)(*v)[a]))
			a++;
		*v += a;
		*vn -= a;
		*v = trim(*v, vn);
	}
	if (*vn && (*v)[0] == '*') {
		int found = -1;
		for (int a = 0; a < y->nanchor; a++)
			if (strlen(y->anchor[a]) == *vn - 1 &&
			    !memcmp(y->anchor[a], *v + 1, *vn - 1))
				found = a;
		if (found < 0)
			return pl_err_set(err, PL_EINVAL, "%s:%d: alias '%.*s' of no anchor above",
			                  where, line, (int)(*vn > 60 ? 60 : *vn), *v);
		*v = y->anchor_val[found];
		*vn = strlen(*v);
	}
	return PL_OK;
}

/* A mapping opens at key (indented ind) */
static pl_status yaml_open(yaml_state *y, const char *key, size_t kn, int ind, const char *where,
                           int line, pl_err *err)
{
	if (y->nstack >= YAML_DEPTH)
		return pl_err_set(err, PL_EINVAL, "%s:%d: nested deeper than %d", where, line,
		                  YAML_DEPTH);
	if (kn > PL_FW_MAX_TEXT || !(y->key[y->nstack] = pl_malloc(kn + 1)))
		return pl_err_set(err, kn > PL_FW_MAX_TEXT ? PL_EINVAL : PL_ENOMEM, "%s:%d: %s",
		                  where, line,
		                  kn > PL_FW_MAX_TEXT ? "key too long" : "out of memory");
	memcpy(y->key[y->nstack], key, kn);
	y->key[y->nstack][kn] = 0;
	y->indent[y->nstack++] = ind;
	return PL_OK;
}

/* anchor (an bytes) names val from here on */
static pl_status yaml_keep_anchor(yaml_state *y, const char *anchor, size_t an, const char *val,
                                  pl_err *err)
{
	if (y->nanchor >= YAML_ANCHORS)
		return PL_OK;
	y->anchor[y->nanchor] = pl_malloc(an + 1);
	y->anchor_val[y->nanchor] = pl_strdup(val);
	if (!y->anchor[y->nanchor] || !y->anchor_val[y->nanchor]) {
		free(y->anchor[y->nanchor]);
		free(y->anchor_val[y->nanchor]);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	memcpy(y->anchor[y->nanchor], anchor, an);
	y->anchor[y->nanchor++][an] = 0;
	return PL_OK;
}

/* A line's indentation (*ind spaces); PL_EINVAL for a tab in it */
static pl_status yaml_indent(const char *l, size_t n, const char *where, int line, int *ind,
                             pl_err *err)
{
	*ind = 0;
	while ((size_t)*ind < n && l[*ind] == ' ')
		(*ind)++;
	if ((size_t)*ind < n && l[*ind] == '\t')
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: a tab in the indentation (YAML "
		                  "indents with spaces)",
		                  where, line);
	return PL_OK;
}

static pl_status read_yaml(const char *s, size_t len, const char *where, pl_fw_kvs *out,
                           pl_err *err)
{
	yaml_state y = {0};
	pl_status st = PL_OK;
	int line = 0, skip_above = -1; /* skip lines indented deeper than this */
	size_t i = 0, n;
	const char *l;
	while ((l = next_line(s, len, &i, &n))) {
		line++;
		int ind;
		size_t bn = 0, kn = 0, vn = 0, an = 0;
		const char *b = l, *key = l, *v = l;
		char *anchor = NULL;
		if ((st = yaml_indent(l, n, where, line, &ind, err)) ||
		    (st = line_body(l, n, where, line, &b, &bn, err)))
			goto done;
		if (!bn || (bn == 3 && (!memcmp(b, "---", 3) || !memcmp(b, "...", 3))))
			continue;
		if (skip_above >= 0 && ind > skip_above)
			continue;
		skip_above = -1;
		if (b[0] == '-' && (bn == 1 || b[1] == ' ')) { /* a sequence: none of ours */
			skip_above = ind;
			continue;
		}
		if (b[0] == '%' || b[0] == '[' || b[0] == '{' || b[0] == '?') {
			st =
			    pl_err_set(err, PL_EINVAL,
			               "%s:%d: expected 'key: value' (directives, flow collections "
			               "at the top and complex keys are not read)",
			               where, line);
			goto done;
		}
		if ((st = yaml_key_value(b, bn, where, line, &key, &kn, &v, &vn, err)))
			goto done;
		while (y.nstack && y.indent[y.nstack - 1] >= ind) {
			y.nstack--;
			free(y.key[y.nstack]);
		}
		/* an anchor (&name) before a value is kept; an alias (*name) resolved */
		if ((st = yaml_anchors(&y, &v, &vn, &anchor, &an, where, line, err)))
			goto done;
		if (vn && (v[0] == '|' || v[0] == '>')) { /* a block scalar: skipped */
			skip_above = ind;
			continue;
		}
		if (vn && (v[0] == '[' || v[0] == '{') && v[vn - 1] != (v[0] == '[' ? ']' : '}')) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s:%d: a flow collection over several lines is not read",
			                where, line);
			goto done;
		}
		if (!vn) { /* a mapping opens */
			if ((st = yaml_open(&y, key, kn, ind, where, line, err)))
				goto done;
			continue;
		}
		v = unquote(v, &vn);
		char *path = yaml_path(&y, key, kn);
		if (!path) {
			st = pl_err_set(err, PL_ENOMEM, "out of memory");
			goto done;
		}
		st = add(out, path, strlen(path), v, vn, line, where, err);
		free(path);
		if (st || (anchor &&
		           (st = yaml_keep_anchor(&y, anchor, an, out->kv[out->n - 1].val, err))))
			goto done;
	}
done:
	yaml_free(&y);
	return st;
}

static pl_status read_toml(const char *s, size_t len, const char *where, pl_fw_kvs *out,
                           pl_err *err)
{
	char *table = pl_strdup("");
	pl_status st = PL_OK;
	int line = 0;
	size_t i = 0, n;
	const char *l;
	if (!table)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	while ((l = next_line(s, len, &i, &n))) {
		line++;
		size_t bn = 0;
		const char *b = l;
		if ((st = line_body(l, n, where, line, &b, &bn, err)))
			goto done;
		if (!bn)
			continue;
		if (b[0] == '[') {
			int arr = bn >= 2 && b[1] == '[';
			size_t hn = bn - (arr ? 4 : 2);
			if (bn < (size_t)(arr ? 5 : 3) || b[bn - 1] != ']' ||
			    (arr && b[bn - 2] != ']')) {
				st =
				    pl_err_set(err, PL_EINVAL,
				               "%s:%d: expected [table] or [[table]]", where, line);
				goto done;
			}
			const char *h = trim(b + (arr ? 2 : 1), &hn);
			if (hn > PL_FW_MAX_TEXT) {
				st = pl_err_set(err, PL_EINVAL, "%s:%d: table name too long", where,
				                line);
				goto done;
			}
			char *t = pl_malloc(hn + 4);
			if (!t) {
				st = pl_err_set(err, PL_ENOMEM, "out of memory");
				goto done;
			}
			/* an array of tables' keys are "name[].key": never one of ours */
			snprintf(t, hn + 4, "%.*s%s.", (int)hn, h, arr ? "[]" : "");
			free(table);
			table = t;
			continue;
		}
		const char *eq = memchr(b, '=', bn);
		if (!eq) {
			st = pl_err_set(err, PL_EINVAL, "%s:%d: expected 'key = value', got '%.*s'",
			                where, line, (int)(bn > 60 ? 60 : bn), b);
			goto done;
		}
		size_t kn = (size_t)(eq - b), vn = bn - kn - 1;
		const char *k = trim(b, &kn);
		const char *v = trim(eq + 1, &vn);
		k = unquote(k, &kn);
		if (!kn || !vn) {
			st =
			    pl_err_set(err, PL_EINVAL, "%s:%d: an empty key or value", where, line);
			goto done;
		}
		if (vn >= 3 && (!memcmp(v, "\"\"\"", 3) || !memcmp(v, "'''", 3))) {
			st = pl_err_set(err, PL_EINVAL, "%s:%d: multi-line strings are not read",
			                where, line);
			goto done;
		}
		if ((v[0] == '[' && v[vn - 1] != ']') || (v[0] == '{' && v[vn - 1] != '}')) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s:%d: an array or table over several lines is not read",
			                where, line);
			goto done;
		}
		if ((v[0] == '"' || v[0] == '\'') && (vn < 2 || v[vn - 1] != v[0])) {
			st = pl_err_set(err, PL_EINVAL, "%s:%d: unterminated string", where, line);
			goto done;
		}
		v = unquote(v, &vn);
		size_t tn = strlen(table);
		if (tn + kn > PL_FW_MAX_TEXT) {
			st = pl_err_set(err, PL_EINVAL, "%s:%d: key too long", where, line);
			goto done;
		}
		char *key = pl_malloc(tn + kn + 1);
		if (!key) {
			st = pl_err_set(err, PL_ENOMEM, "out of memory");
			goto done;
		}
		memcpy(key, table, tn);
		memcpy(key + tn, k, kn);
		key[tn + kn] = 0;
		st = add(out, key, tn + kn, v, vn, line, where, err);
		free(key);
		if (st)
			goto done;
	}
done:
	free(table);
	return st;
}

/* ---- JSON ---- */

static pl_status flatten(const cJSON *o, char *path, size_t plen, int depth, const char *where,
                         pl_fw_kvs *out, pl_err *err)
{
	if (depth > 64)
		return pl_err_set(err, PL_EINVAL, "%s: nested deeper than 64", where);
	const cJSON *c;
	cJSON_ArrayForEach (c, o) {
		size_t kl = strlen(c->string ? c->string : "");
		if (plen + kl + 2 > PL_FW_MAX_TEXT)
			return pl_err_set(err, PL_EINVAL, "%s: a key longer than %d bytes", where,
			                  PL_FW_MAX_TEXT);
		size_t n = plen;
		if (n)
			path[n++] = '.';
		memcpy(path + n, c->string ? c->string : "", kl);
		n += kl;
		path[n] = 0;
		pl_status st = PL_OK;
		char num[64];
		if (cJSON_IsObject(c)) {
			st = flatten(c, path, n, depth + 1, where, out, err);
		} else if (cJSON_IsString(c)) {
			st = add(out, path, n, c->valuestring, strlen(c->valuestring), 0, where,
			         err);
		} else if (cJSON_IsNumber(c)) {
			snprintf(num, sizeof num, "%.17g", c->valuedouble);
			st = add(out, path, n, num, strlen(num), 0, where, err);
		} else if (cJSON_IsBool(c) || cJSON_IsNull(c)) {
			const char *w = cJSON_IsTrue(c)    ? "true"
			                : cJSON_IsFalse(c) ? "false"
			                                   : "null";
			st = add(out, path, n, w, strlen(w), 0, where, err);
		} else { /* an array: its text */
			char *t = cJSON_PrintUnformatted(c);
			if (!t)
				return pl_err_set(err, PL_ENOMEM, "out of memory");
			st = add(out, path, n, t, strlen(t), 0, where, err);
			free(t);
		}
		if (st)
			return st;
	}
	return PL_OK;
}

static pl_status read_json(const char *s, size_t len, const char *where, pl_fw_kvs *out,
                           pl_err *err)
{
	cJSON *doc = NULL;
	pl_status st = pl_json_parse(s, len, where, &doc, err);
	if (st)
		return st;
	char *path = pl_malloc(PL_FW_MAX_TEXT + 2);
	if (!path)
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
	else if (!cJSON_IsObject(doc))
		st = pl_err_set(err, PL_EINVAL, "%s: expected a JSON object", where);
	else
		st = flatten(doc, (path[0] = 0, path), 0, 0, where, out, err);
	free(path);
	cJSON_Delete(doc);
	return st;
}

pl_status pl_fw_read(pl_fw_syntax syntax, const char *text, size_t len, const char *where,
                     pl_fw_kvs *out, pl_err *err)
{
	if (!text || !out || !where)
		return pl_err_set(err, PL_EINVAL, "pl_fw_read: NULL argument");
	if (memchr(text, 0, len))
		return pl_err_set(err, PL_EINVAL, "%s: a NUL byte (not a text file)", where);
	switch (syntax) {
	case PL_FW_ARGS: return read_args(text, len, where, out, err);
	case PL_FW_YAML: return read_yaml(text, len, where, out, err);
	case PL_FW_TOML: return read_toml(text, len, where, out, err);
	case PL_FW_JSON: return read_json(text, len, where, out, err);
	case PL_FW_SYNTAX_COUNT: break;
	}
	return pl_err_set(err, PL_EINVAL, "pl_fw_read: unknown syntax %d", (int)syntax);
}
