/* The ONNX importer (graph/onnx/): attributes, aliases of dropped nodes, consumers, and the
 * matchers of exports' written-out patterns (GELU, LayerNorm, RMSNorm). */
#include "graph/onnx/internal.h"

/* a tensor's single float value (raw, float or double data): 0, or -1 when
 * it is not one number */
static int tensor_scalar(const Onnx__TensorProto *t, double *v)
{
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] != 1)
			return -1;
	if (t->n_float_data == 1) {
		*v = t->float_data[0];
		return 0;
	}
	if (t->n_double_data == 1) {
		*v = t->double_data[0];
		return 0;
	}
	if (t->has_raw_data && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
	    t->raw_data.len == 4) {
		float f;
		memcpy(&f, t->raw_data.data, 4);
		*v = f;
		return 0;
	}
	if (t->has_raw_data && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE &&
	    t->raw_data.len == 8) {
		memcpy(v, t->raw_data.data, 8);
		return 0;
	}
	return -1;
}

/* the value of a scalar Constant node's output, or of a scalar initializer */
int pl__onnx_scalar_of(const imp *m, const char *name, double *v)
{
	if (!name)
		return -1;
	tinfo *t = pl__onnx_valued((imp *)m, name);
	if (t) {
		if (t->nval != 1)
			return -1;
		*v = t->val[0];
		return 0;
	}
	const Onnx__NodeProto *c = pl__onnx_constant_node(m, name);
	for (size_t a = 0; c && a < c->n_attribute; a++)
		if (c->attribute[a]->name && !strcmp(c->attribute[a]->name, "value") &&
		    c->attribute[a]->t)
			return tensor_scalar(c->attribute[a]->t, v);
	for (size_t i = 0; i < m->g->n_initializer; i++)
		if (m->g->initializer[i]->name && !strcmp(m->g->initializer[i]->name, name))
			return tensor_scalar(m->g->initializer[i], v);
	return -1;
}

const Onnx__AttributeProto *pl__onnx_attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t a = 0; a < n->n_attribute; a++)
		if (n->attribute[a]->name && !strcmp(n->attribute[a]->name, name))
			return n->attribute[a];
	return NULL;
}

/* The string attribute `at` of n into buf ("" when absent or too long) */
void pl__onnx_attr_str(const Onnx__NodeProto *n, const char *at, char *buf, size_t len)
{
	const Onnx__AttributeProto *a = pl__onnx_attr(n, at);
	buf[0] = 0;
	if (a && a->has_s && a->s.len < len) {
		memcpy(buf, a->s.data, a->s.len);
		buf[a->s.len] = 0;
	}
}

/* Tensor `from` stands for tensor `to` from now on */
void pl__onnx_alias(imp *m, char *from, char *to)
{
	m->alias_from[m->nalias] = from;
	m->alias_to[m->nalias++] = to;
}

/* Node n dropped: its output stands for its input 0 from now on */
void pl__onnx_drop_node(imp *m, const Onnx__NodeProto *n)
{
	pl__onnx_alias(m, n->output[0], n->input[0]);
}

int64_t pl__onnx_attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = pl__onnx_attr(n, name);
	return a && a->has_i ? a->i : dflt;
}

double pl__onnx_attr_f(const Onnx__NodeProto *n, const char *name, double dflt)
{
	const Onnx__AttributeProto *a = pl__onnx_attr(n, name);
	return a && a->has_f ? a->f : dflt;
}

int pl__onnx_is_scalar(const imp *m, const char *name, double want)
{
	double v;
	return pl__onnx_scalar_of(m, name, &v) == 0 && fabs(v - want) <= 1e-3 * fabs(want);
}

/* the nodes that read name (at most max), into who; how many */
int pl__onnx_consumers(const imp *m, const char *name, int *who, int max)
{
	int n = 0;
	for (size_t i = 0; i < m->g->n_node; i++)
		for (size_t k = 0; k < m->g->node[i]->n_input; k++)
			if (!strcmp(m->g->node[i]->input[k], name)) {
				if (n < max)
					who[n] = (int)i;
				n++;
				break;
			}
	return n;
}

static int is_op(const imp *m, int i, const char *type, size_t inputs)
{
	const Onnx__NodeProto *n = i >= 0 ? m->g->node[i] : NULL;
	return n && n->op_type && !strcmp(n->op_type, type) && n->n_input == inputs &&
	       n->n_output >= 1;
}

/* the input of two-input node i that is not `other` (NULL when neither is) */
static const char *other_input(const imp *m, int i, const char *other)
{
	const Onnx__NodeProto *n = m->g->node[i];
	return !strcmp(n->input[0], other)   ? n->input[1]
	       : !strcmp(n->input[1], other) ? n->input[0]
	                                     : NULL;
}

cJSON *pl__onnx_decl(const imp *m, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(m->tensors, name);
}

int pl__onnx_is_param(const imp *m, const char *name)
{
	const cJSON *t = pl__onnx_decl(m, pl__onnx_resolve(m, name));
	return t && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(t, "role")), "param");
}

/* Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 (either Mul first):
 * the last node's index, or -1 */
int pl__onnx_gelu_at(const imp *m, int i)
{
	const Onnx__NodeProto *d = m->g->node[i];
	int e = -1, a = -1, p = -1, q = -1;
	if (!is_op(m, i, "Div", 2) || !pl__onnx_is_scalar(m, d->input[1], M_SQRT2) ||
	    pl__onnx_consumers(m, d->output[0], &e, 1) != 1 || !is_op(m, e, "Erf", 1) ||
	    pl__onnx_consumers(m, m->g->node[e]->output[0], &a, 1) != 1 || !is_op(m, a, "Add", 2) ||
	    pl__onnx_consumers(m, m->g->node[a]->output[0], &p, 1) != 1 || !is_op(m, p, "Mul", 2) ||
	    pl__onnx_consumers(m, m->g->node[p]->output[0], &q, 1) != 1 || !is_op(m, q, "Mul", 2))
		return -1;
	const Onnx__NodeProto *an = m->g->node[a], *pn = m->g->node[p], *qn = m->g->node[q];
	const char *x = d->input[0];
	int one = pl__onnx_is_scalar(m, an->input[0], 1) || pl__onnx_is_scalar(m, an->input[1], 1);
	/* x * (1 + erf) then * 0.5 (x * 0.5 first is another form: not here) */
	int has_x = !strcmp(pn->input[0], x) || !strcmp(pn->input[1], x);
	int half =
	    pl__onnx_is_scalar(m, qn->input[0], 0.5) || pl__onnx_is_scalar(m, qn->input[1], 0.5);
	if (!one || !has_x || !half)
		return -1;
	m->skip[e] = m->skip[a] = m->skip[p] = 1;
	return q;
}

/* GELU in its tanh form (GPT-2's gelu_new, torch's approximate="tanh"):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), from the Pow of x to the
 * final product, as 0.5 x times (1 + tanh) or x times (1 + tanh) then 0.5.
 * The final node's index (the others marked skipped; a Mul of x by 0.5
 * emitted before, no longer read, is dropped at the end), or -1. */
int pl__onnx_gelu_tanh_at(imp *m, int i)
{
	const Onnx__NodeProto *pw = m->g->node[i];
	int q = -1, r = -1, t = -1, u = -1, v = -1, f = -1;
	if (!is_op(m, i, "Pow", 2) || !pl__onnx_is_scalar(m, pw->input[1], 3))
		return -1;
	const char *x = pw->input[0];
	if (pl__onnx_consumers(m, pw->output[0], &q, 1) != 1 || !is_op(m, q, "Mul", 2) ||
	    !pl__onnx_is_scalar(m, other_input(m, q, pw->output[0]), 0.044715) ||
	    pl__onnx_consumers(m, m->g->node[q]->output[0], &r, 1) != 1 || !is_op(m, r, "Add", 2) ||
	    !other_input(m, r, m->g->node[q]->output[0]) ||
	    strcmp(other_input(m, r, m->g->node[q]->output[0]), x) ||
	    pl__onnx_consumers(m, m->g->node[r]->output[0], &t, 1) != 1 || !is_op(m, t, "Mul", 2) ||
	    !pl__onnx_is_scalar(m, other_input(m, t, m->g->node[r]->output[0]), 0.7978845608) ||
	    pl__onnx_consumers(m, m->g->node[t]->output[0], &u, 1) != 1 ||
	    !is_op(m, u, "Tanh", 1) ||
	    pl__onnx_consumers(m, m->g->node[u]->output[0], &v, 1) != 1 || !is_op(m, v, "Add", 2) ||
	    !pl__onnx_is_scalar(m, other_input(m, v, m->g->node[u]->output[0]), 1) ||
	    pl__onnx_consumers(m, m->g->node[v]->output[0], &f, 1) != 1 || !is_op(m, f, "Mul", 2))
		return -1;
	const char *w = other_input(m, f, m->g->node[v]->output[0]);
	int h = -1, last = f;
	for (size_t k = 0; w && k < m->g->n_node && h < 0; k++) /* w = x * 0.5 ? */
		if (m->g->node[k]->n_output && !strcmp(m->g->node[k]->output[0], w))
			h = (int)k;
	int halved = h >= 0 && is_op(m, h, "Mul", 2) && other_input(m, h, x) &&
	             pl__onnx_is_scalar(m, other_input(m, h, x), 0.5);
	if (!halved) { /* x * (1 + tanh), then * 0.5 */
		int g = -1;
		if (!w || strcmp(w, x) ||
		    pl__onnx_consumers(m, m->g->node[f]->output[0], &g, 1) != 1 ||
		    !is_op(m, g, "Mul", 2) ||
		    !pl__onnx_is_scalar(m, other_input(m, g, m->g->node[f]->output[0]), 0.5))
			return -1;
		last = g;
		m->skip[f] = 1;
	}
	m->skip[q] = m->skip[r] = m->skip[t] = m->skip[u] = m->skip[v] = 1;
	return last;
}

/* LayerNorm as exports before opset 17 write it, over the last axis:
 * m = ReduceMean(x); d = x - m; v = ReduceMean(d ^ 2); y = d / sqrt(v + eps)
 * * gamma + beta. The final Add's index (the others marked skipped), the
 * parts into *gamma, *beta, *eps; or -1. */
int pl__onnx_layernorm_at(imp *m, int i, const char **gamma, const char **beta, double *eps)
{
	const Onnx__NodeProto *r = m->g->node[i];
	const Onnx__AttributeProto *ax = pl__onnx_attr(r, "axes");
	if (!is_op(m, i, "ReduceMean", 1) || !ax || ax->n_ints != 1 || ax->ints[0] != -1)
		return -1;
	const char *x = r->input[0];
	int w[4];
	if (pl__onnx_consumers(m, r->output[0], w, 4) != 1 || !is_op(m, w[0], "Sub", 2) ||
	    strcmp(m->g->node[w[0]]->input[0], x) ||
	    strcmp(m->g->node[w[0]]->input[1], r->output[0]))
		return -1;
	int sub = w[0], pw = -1, dv = -1;
	const char *d = m->g->node[sub]->output[0];
	if (pl__onnx_consumers(m, d, w, 4) != 2)
		return -1;
	for (int k = 0; k < 2; k++) {
		if (is_op(m, w[k], "Pow", 2) && !strcmp(m->g->node[w[k]]->input[0], d) &&
		    pl__onnx_is_scalar(m, m->g->node[w[k]]->input[1], 2))
			pw = w[k];
		if (is_op(m, w[k], "Div", 2) && !strcmp(m->g->node[w[k]]->input[0], d))
			dv = w[k];
	}
	int rv = -1, ad = -1, sq = -1, mu = -1, bi = -1;
	if (pw < 0 || dv < 0 || pl__onnx_consumers(m, m->g->node[pw]->output[0], &rv, 1) != 1 ||
	    !is_op(m, rv, "ReduceMean", 1) ||
	    pl__onnx_consumers(m, m->g->node[rv]->output[0], &ad, 1) != 1 ||
	    !is_op(m, ad, "Add", 2) ||
	    pl__onnx_consumers(m, m->g->node[ad]->output[0], &sq, 1) != 1 ||
	    !is_op(m, sq, "Sqrt", 1) || strcmp(m->g->node[dv]->input[1], m->g->node[sq]->output[0]))
		return -1;
	const char *e = other_input(m, ad, m->g->node[rv]->output[0]);
	if (!e || pl__onnx_scalar_of(m, e, eps))
		return -1;
	*gamma = *beta = NULL;
	if (pl__onnx_consumers(m, m->g->node[dv]->output[0], &mu, 1) == 1 &&
	    is_op(m, mu, "Mul", 2) &&
	    pl__onnx_consumers(m, m->g->node[mu]->output[0], &bi, 1) == 1 &&
	    is_op(m, bi, "Add", 2)) {
		*gamma = other_input(m, mu, m->g->node[dv]->output[0]);
		*beta = other_input(m, bi, m->g->node[mu]->output[0]);
	}
	if (!*gamma || !*beta || !pl__onnx_is_param(m, *gamma) || !pl__onnx_is_param(m, *beta)) {
		*gamma = *beta = NULL; /* without affine parameters: the Div ends it */
		mu = bi = dv;
		dv = -1;
	}
	int parts[] = {sub, pw, rv, ad, sq, dv, mu};
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		if (parts[k] >= 0)
			m->skip[parts[k]] = 1;
	return bi;
}

/* RMSNorm as exports write it (LLaMA's, T5's), over the last axis: v =
 * ReduceMean(x ^ 2); y = x * (1 / sqrt(v + eps)) * gamma, the reciprocal a
 * Reciprocal, a Div of 1, or a Div of x itself; i is the Pow. The final
 * Mul's index (the others marked skipped), its parts into *gamma, *eps; or
 * -1. */
int pl__onnx_rmsnorm_at(imp *m, int i, const char **gamma, double *eps)
{
	const Onnx__NodeProto *pw = m->g->node[i];
	if (!is_op(m, i, "Pow", 2) || !pl__onnx_is_scalar(m, pw->input[1], 2))
		return -1;
	const char *x = pw->input[0];
	tinfo *xi = pl__onnx_known(m, x);
	int rv = -1, ad = -1, sq = -1, inv = -1, mu = -1, mw = -1;
	if (!xi || pl__onnx_consumers(m, pw->output[0], &rv, 1) != 1 ||
	    !is_op(m, rv, "ReduceMean", 1))
		return -1;
	const Onnx__AttributeProto *ax = pl__onnx_attr(m->g->node[rv], "axes");
	if (!ax || ax->n_ints != 1 || (ax->ints[0] != -1 && ax->ints[0] != xi->rank - 1) ||
	    !pl__onnx_attr_i(m->g->node[rv], "keepdims", 1))
		return -1;
	if (pl__onnx_consumers(m, m->g->node[rv]->output[0], &ad, 1) != 1 ||
	    !is_op(m, ad, "Add", 2) ||
	    pl__onnx_consumers(m, m->g->node[ad]->output[0], &sq, 1) != 1 ||
	    !is_op(m, sq, "Sqrt", 1) ||
	    pl__onnx_consumers(m, m->g->node[sq]->output[0], &inv, 1) != 1)
		return -1;
	const char *s = m->g->node[sq]->output[0];
	const Onnx__NodeProto *iv = m->g->node[inv];
	if (is_op(m, inv, "Div", 2) && !strcmp(iv->input[0], x) && !strcmp(iv->input[1], s)) {
		mu = inv; /* x / sqrt(v + eps) */
		inv = -1;
	} else if ((is_op(m, inv, "Reciprocal", 1) ||
	            (is_op(m, inv, "Div", 2) && pl__onnx_is_scalar(m, iv->input[0], 1) &&
	             !strcmp(iv->input[1], s))) &&
	           pl__onnx_consumers(m, iv->output[0], &mu, 1) == 1 && is_op(m, mu, "Mul", 2)) {
		const char *o = other_input(m, mu, iv->output[0]);
		if (!o || strcmp(o, x))
			return -1;
	} else {
		return -1;
	}
	if (pl__onnx_consumers(m, m->g->node[mu]->output[0], &mw, 1) != 1 ||
	    !is_op(m, mw, "Mul", 2))
		return -1;
	const char *e = other_input(m, ad, m->g->node[rv]->output[0]);
	*gamma = other_input(m, mw, m->g->node[mu]->output[0]);
	if (!e || pl__onnx_scalar_of(m, e, eps) || !*gamma || !pl__onnx_is_param(m, *gamma))
		return -1;
	int parts[] = {i, rv, ad, sq, inv, mu};
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		if (parts[k] >= 0)
			m->skip[parts[k]] = 1;
	return mw;
}

const char *pl__onnx_dtype_name(int32_t t)
{
	switch (t) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return "float32";
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return "float16";
	case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return "bfloat16";
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return "int32";
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return "int64";
	case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return "float64";
	/* a boolean mask fed to the model: integers 0 and 1 (data; no gradient) */
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return "int64";
	default: return NULL;
	}
}

cJSON *pl__onnx_int_list(const int64_t *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		pl_json_push(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

cJSON *pl__onnx_add_op(imp *m, const char *name, const char *type)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddArrayToObject(o, "inputs");
	cJSON_AddArrayToObject(o, "outputs");
	pl_json_push(m->ops, o);
	return o;
}
