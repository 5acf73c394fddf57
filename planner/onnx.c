/* The ONNX importer: a ModelProto (read with protobuf-c from the onnx.proto
 * Debian ships, generated at build time) turned into a planner.model/1
 * document, which the model reader then checks and infers like any other.
 * Weights' data are never needed: initializers become params by their dims
 * (a file whose float initializers hold dims only imports). What it knows:
 *
 *   MatMul, Gemm (transB as a Transpose of the weight, then the bias added),
 *   Add/Sub/Mul/Div (a scalar constant operand becomes a const tensor),
 *   Relu, Tanh, Sigmoid, Softmax, Transpose, Gather, ReduceMean, Erf-form
 *   GELU (x * 0.5 * (1 + erf(x / sqrt 2)), fused back into Gelu), LayerNorm
 *   decomposed over the last axis (fused back into LayerNormalization); Identity
 *   and Dropout are dropped (eval exports); Constant nodes feed the above.
 *
 * Anything else is refused naming the node, its op type and the opset, with
 * the list above. ONNX exports are forward graphs: --loss cross-entropy
 * (the default) appends SoftmaxCrossEntropy on the first output against an
 * integer labels input. */
#include "planner/onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "planner/alloc.h"
#include "planner/json.h"

#define SUPPORTED                                                                                  \
	"MatMul, Gemm, Add, Sub, Mul, Div, Relu, Tanh, Sigmoid, Softmax, Transpose, Gather, "      \
	"ReduceMean, Erf (in GELU's form), Pow and Sqrt (in LayerNorm's form), Identity, "         \
	"Dropout, Constant"

typedef struct imp {
	const Onnx__GraphProto *g;
	const char *path;
	int64_t opset, batch;
	cJSON *tensors, *ops;
	char **alias_from, **alias_to; /* dropped nodes: output name -> input name */
	int nalias;
	unsigned char *skip; /* per node: folded into another */
	int nconst;
	pl_err *err;
} imp;

/* what a dropped node's output stands for (at most one step per alias: a
 * node that names its input as its output cannot loop) */
static const char *resolve(const imp *m, const char *name)
{
	for (int step = 0, moved = 1; moved && step <= m->nalias; step++) {
		moved = 0;
		for (int i = m->nalias - 1; i >= 0 && !moved; i--)
			if (!strcmp(m->alias_from[i], name) && strcmp(m->alias_to[i], name)) {
				name = m->alias_to[i];
				moved = 1;
			}
	}
	return name;
}

static const Onnx__NodeProto *constant_node(const imp *m, const char *name)
{
	for (size_t i = 0; i < m->g->n_node; i++) {
		const Onnx__NodeProto *n = m->g->node[i];
		if (n->op_type && !strcmp(n->op_type, "Constant") && n->n_output == 1 &&
		    !strcmp(n->output[0], name))
			return n;
	}
	return NULL;
}

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
static int scalar_of(const imp *m, const char *name, double *v)
{
	const Onnx__NodeProto *c = constant_node(m, name);
	for (size_t a = 0; c && a < c->n_attribute; a++)
		if (c->attribute[a]->name && !strcmp(c->attribute[a]->name, "value") &&
		    c->attribute[a]->t)
			return tensor_scalar(c->attribute[a]->t, v);
	for (size_t i = 0; i < m->g->n_initializer; i++)
		if (m->g->initializer[i]->name && !strcmp(m->g->initializer[i]->name, name))
			return tensor_scalar(m->g->initializer[i], v);
	return -1;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t a = 0; a < n->n_attribute; a++)
		if (n->attribute[a]->name && !strcmp(n->attribute[a]->name, name))
			return n->attribute[a];
	return NULL;
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = attr(n, name);
	return a && a->has_i ? a->i : dflt;
}

static int is_scalar(const imp *m, const char *name, double want)
{
	double v;
	return scalar_of(m, name, &v) == 0 && fabs(v - want) <= 1e-3 * fabs(want);
}

/* the nodes that read name (at most max), into who; how many */
static int consumers(const imp *m, const char *name, int *who, int max)
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

static int is_param(const imp *m, const char *name)
{
	const cJSON *t = cJSON_GetObjectItem(m->tensors, name);
	return t && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(t, "role")), "param");
}

/* Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 (either Mul first):
 * the last node's index, or -1 */
static int gelu_at(const imp *m, int i)
{
	const Onnx__NodeProto *d = m->g->node[i];
	int e, a, p, q;
	if (!is_op(m, i, "Div", 2) || !is_scalar(m, d->input[1], M_SQRT2) ||
	    consumers(m, d->output[0], &e, 1) != 1 || !is_op(m, e, "Erf", 1) ||
	    consumers(m, m->g->node[e]->output[0], &a, 1) != 1 || !is_op(m, a, "Add", 2) ||
	    consumers(m, m->g->node[a]->output[0], &p, 1) != 1 || !is_op(m, p, "Mul", 2) ||
	    consumers(m, m->g->node[p]->output[0], &q, 1) != 1 || !is_op(m, q, "Mul", 2))
		return -1;
	const Onnx__NodeProto *an = m->g->node[a], *pn = m->g->node[p], *qn = m->g->node[q];
	const char *x = d->input[0];
	int one = is_scalar(m, an->input[0], 1) || is_scalar(m, an->input[1], 1);
	/* x * (1 + erf) then * 0.5 (x * 0.5 first is another form: not here) */
	int has_x = !strcmp(pn->input[0], x) || !strcmp(pn->input[1], x);
	int half = is_scalar(m, qn->input[0], 0.5) || is_scalar(m, qn->input[1], 0.5);
	if (!one || !has_x || !half)
		return -1;
	m->skip[e] = m->skip[a] = m->skip[p] = 1;
	return q;
}

/* LayerNorm as exports before opset 17 write it, over the last axis:
 * m = ReduceMean(x); d = x - m; v = ReduceMean(d ^ 2); y = d / sqrt(v + eps)
 * * gamma + beta. The final Add's index (the others marked skipped), the
 * parts into *gamma, *beta, *eps; or -1. */
static int layernorm_at(imp *m, int i, const char **gamma, const char **beta, double *eps)
{
	const Onnx__NodeProto *r = m->g->node[i];
	const Onnx__AttributeProto *ax = attr(r, "axes");
	if (!is_op(m, i, "ReduceMean", 1) || !ax || ax->n_ints != 1 || ax->ints[0] != -1)
		return -1;
	const char *x = r->input[0];
	int w[4];
	if (consumers(m, r->output[0], w, 4) != 1 || !is_op(m, w[0], "Sub", 2) ||
	    strcmp(m->g->node[w[0]]->input[0], x) ||
	    strcmp(m->g->node[w[0]]->input[1], r->output[0]))
		return -1;
	int sub = w[0], pw = -1, dv = -1;
	const char *d = m->g->node[sub]->output[0];
	if (consumers(m, d, w, 4) != 2)
		return -1;
	for (int k = 0; k < 2; k++) {
		if (is_op(m, w[k], "Pow", 2) && !strcmp(m->g->node[w[k]]->input[0], d) &&
		    is_scalar(m, m->g->node[w[k]]->input[1], 2))
			pw = w[k];
		if (is_op(m, w[k], "Div", 2) && !strcmp(m->g->node[w[k]]->input[0], d))
			dv = w[k];
	}
	int rv, ad, sq, mu, bi;
	if (pw < 0 || dv < 0 || consumers(m, m->g->node[pw]->output[0], &rv, 1) != 1 ||
	    !is_op(m, rv, "ReduceMean", 1) ||
	    consumers(m, m->g->node[rv]->output[0], &ad, 1) != 1 || !is_op(m, ad, "Add", 2) ||
	    consumers(m, m->g->node[ad]->output[0], &sq, 1) != 1 || !is_op(m, sq, "Sqrt", 1) ||
	    strcmp(m->g->node[dv]->input[1], m->g->node[sq]->output[0]) ||
	    consumers(m, m->g->node[dv]->output[0], &mu, 1) != 1 || !is_op(m, mu, "Mul", 2) ||
	    consumers(m, m->g->node[mu]->output[0], &bi, 1) != 1 || !is_op(m, bi, "Add", 2))
		return -1;
	const char *e = other_input(m, ad, m->g->node[rv]->output[0]);
	*gamma = other_input(m, mu, m->g->node[dv]->output[0]);
	*beta = other_input(m, bi, m->g->node[mu]->output[0]);
	if (!e || scalar_of(m, e, eps) || !*gamma || !*beta || !is_param(m, *gamma) ||
	    !is_param(m, *beta))
		return -1;
	int parts[] = {sub, pw, rv, ad, sq, dv, mu};
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		m->skip[parts[k]] = 1;
	return bi;
}

static const char *dtype_name(int32_t t)
{
	switch (t) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return "float32";
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return "float16";
	case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return "bfloat16";
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return "int32";
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return "int64";
	default: return NULL;
	}
}

static cJSON *int_list(const int64_t *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		pl_json_push(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static cJSON *add_op(imp *m, const char *name, const char *type)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddArrayToObject(o, "inputs");
	cJSON_AddArrayToObject(o, "outputs");
	pl_json_push(m->ops, o);
	return o;
}

static void io(imp *m, cJSON *o, const char *key, const char *name)
{
	pl_json_push(cJSON_GetObjectItem(o, key), cJSON_CreateString(resolve(m, name)));
}

/* an operand: a scalar constant becomes a const tensor of shape [1] */
static void operand(imp *m, cJSON *o, const char *name)
{
	double v;
	if (!cJSON_GetObjectItem(m->tensors, name) && scalar_of(m, name, &v) == 0) {
		cJSON *t = cJSON_CreateObject();
		int64_t one = 1;
		pl_json_add(t, "shape", int_list(&one, 1));
		cJSON_AddStringToObject(t, "role", "const");
		pl_json_add(m->tensors, name, t);
	}
	io(m, o, "inputs", name);
}

static pl_status unsupported(imp *m, const Onnx__NodeProto *n, const char *why)
{
	return pl_err_set(m->err, PL_EINVAL,
	                  "%s: node '%s' (%s, opset %lld): %s; the importer knows " SUPPORTED,
	                  m->path, n->name && n->name[0] ? n->name : "(unnamed)", n->op_type,
	                  (long long)m->opset, why);
}

static pl_status node(imp *m, int i)
{
	const Onnx__NodeProto *n = m->g->node[i];
	if (!n->op_type || n->n_output < 1 || !n->output[0][0])
		return pl_err_set(m->err, PL_EINVAL, "%s: node %d ('%s'): %s", m->path, i,
		                  n->name ? n->name : "", n->op_type ? "no output" : "no op type");
	const char *t = n->op_type, *name = n->name && n->name[0] ? n->name : n->output[0];
	if (!strcmp(t, "Identity") || !strcmp(t, "Dropout") || !strcmp(t, "Gemm"))
		if (n->n_input < 1 || (!strcmp(t, "Gemm") && n->n_input < 2))
			return unsupported(m, n, "too few inputs");
	static const char *const same[][2] = {{"MatMul", "MatMul"},   {"Add", "Add"},
	                                      {"Sub", "Sub"},         {"Mul", "Mul"},
	                                      {"Div", "Div"},         {"Relu", "Relu"},
	                                      {"Tanh", "Tanh"},       {"Sigmoid", "Sigmoid"},
	                                      {"Softmax", "Softmax"}, {"Transpose", "Transpose"},
	                                      {"Gather", "Gather"},   {"ReduceMean", "ReduceMean"}};
	if (!strcmp(t, "Constant"))
		return PL_OK; /* read where it is used */
	if (!strcmp(t, "Identity") || !strcmp(t, "Dropout")) {
		m->alias_from[m->nalias] = n->output[0];
		m->alias_to[m->nalias++] = n->input[0];
		return PL_OK;
	}
	const char *gamma, *beta;
	double eps;
	int ln = layernorm_at(m, i, &gamma, &beta, &eps);
	if (ln >= 0) { /* named after the node that ends it */
		const Onnx__NodeProto *last = m->g->node[ln];
		cJSON *o = add_op(m, last->name && last->name[0] ? last->name : last->output[0],
		                  "LayerNormalization");
		io(m, o, "inputs", n->input[0]);
		io(m, o, "inputs", gamma);
		io(m, o, "inputs", beta);
		io(m, o, "outputs", last->output[0]);
		cJSON *at = cJSON_AddObjectToObject(o, "attrs");
		cJSON_AddNumberToObject(at, "axis", -1);
		cJSON_AddNumberToObject(at, "epsilon", eps);
		m->skip[ln] = 1;
		return PL_OK;
	}
	int q = gelu_at(m, i);
	if (q >= 0) { /* named after the node that ends it */
		const Onnx__NodeProto *last = m->g->node[q];
		cJSON *o =
		    add_op(m, last->name && last->name[0] ? last->name : last->output[0], "Gelu");
		io(m, o, "inputs", n->input[0]);
		io(m, o, "outputs", m->g->node[q]->output[0]);
		m->skip[q] = 1;
		return PL_OK;
	}
	if (!strcmp(t, "Gemm")) {
		if (attr_i(n, "transA", 0) || n->n_input < 2)
			return unsupported(m, n, "transA is not supported");
		const Onnx__AttributeProto *al = attr(n, "alpha"), *be = attr(n, "beta");
		if ((al && al->has_f && al->f != 1) || (be && be->has_f && be->f != 1))
			return unsupported(m, n, "alpha and beta other than 1 are not supported");
		char w[512], y[512];
		const char *b = n->input[1];
		if (attr_i(n, "transB", 0)) { /* y = x W^T: W transposed first */
			snprintf(w, sizeof w, "%s.wT", name);
			cJSON *o = add_op(m, w, "Transpose");
			io(m, o, "inputs", b);
			io(m, o, "outputs", w);
			int64_t perm[2] = {1, 0};
			pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "perm", int_list(perm, 2));
			b = w;
		}
		snprintf(y, sizeof y, "%s.mm", name);
		cJSON *o = add_op(m, n->n_input > 2 ? y : name, "MatMul");
		io(m, o, "inputs", n->input[0]);
		io(m, o, "inputs", b);
		io(m, o, "outputs", n->n_input > 2 ? y : n->output[0]);
		if (n->n_input > 2) {
			o = add_op(m, name, "Add");
			io(m, o, "inputs", y);
			io(m, o, "inputs", n->input[2]);
			io(m, o, "outputs", n->output[0]);
		}
		return PL_OK;
	}
	for (size_t k = 0; k < sizeof same / sizeof *same; k++) {
		if (strcmp(t, same[k][0]))
			continue;
		cJSON *o = add_op(m, name, same[k][1]);
		for (size_t a = 0; a < n->n_input; a++)
			operand(m, o, n->input[a]);
		for (size_t a = 0; a < n->n_output; a++)
			io(m, o, "outputs", n->output[a]);
		cJSON *at = cJSON_CreateObject();
		const Onnx__AttributeProto *p;
		if ((p = attr(n, "axis")))
			cJSON_AddNumberToObject(at, "axis", (double)p->i);
		if ((p = attr(n, "perm")))
			pl_json_add(at, "perm", int_list(p->ints, p->n_ints));
		if ((p = attr(n, "axes")))
			pl_json_add(at, "axes", int_list(p->ints, p->n_ints));
		if ((p = attr(n, "keepdims")))
			cJSON_AddNumberToObject(at, "keepdims", (double)p->i);
		if (cJSON_GetArraySize(at))
			pl_json_add(o, "attrs", at);
		else
			cJSON_Delete(at);
		return PL_OK;
	}
	return unsupported(m, n, "not supported");
}

/* a graph input or initializer's declaration */
static pl_status declare(imp *m, const char *name, const Onnx__TypeProto__Tensor *tt,
                         const Onnx__TensorProto *init)
{
	if (!name || !name[0])
		return pl_err_set(m->err, PL_EINVAL, "%s: a graph input or initializer has no name",
		                  m->path);
	int32_t et = init ? init->data_type : tt && tt->has_elem_type ? tt->elem_type : 1;
	const char *dt = dtype_name(et);
	if (!dt)
		return pl_err_set(
		    m->err, PL_EINVAL,
		    "%s: tensor '%s': element type %d is not one of float32, float16, "
		    "bfloat16, int32, int64",
		    m->path, name, (int)et);
	int64_t shape[16];
	size_t n = init ? init->n_dims : tt && tt->shape ? tt->shape->n_dim : 0;
	if (n > 16)
		return pl_err_set(m->err, PL_EINVAL, "%s: tensor '%s': %zu dimensions", m->path,
		                  name, n);
	for (size_t d = 0; d < n; d++) {
		if (init) {
			shape[d] = init->dims[d];
			continue;
		}
		const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
		if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    dim->dim_value > 0) {
			shape[d] = dim->dim_value;
		} else if (d == 0 && m->batch > 0) {
			shape[d] = m->batch;
		} else {
			return pl_err_set(
			    m->err, PL_EINVAL,
			    "%s: input '%s': dimension %zu is symbolic ('%s'); --batch N "
			    "sets the batch (dimension 0)",
			    m->path, name, d,
			    dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
			        ? dim->dim_param
			        : "?");
		}
	}
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", int_list(shape, n));
	int is_float = et == 1 || et == 10 || et == 16;
	cJSON_AddStringToObject(t, "role", !init ? "input" : is_float ? "param" : "const");
	cJSON_AddStringToObject(t, "dtype", dt);
	pl_json_add(m->tensors, name, t);
	return PL_OK;
}

/* Long (130 lines): declarations, nodes, then the loss the user asked for. */
pl_status pl_onnx_to_model(const unsigned char *data, size_t len, const char *path,
                           const pl_onnx_opts *o, cJSON **out, pl_err *err)
{
	*out = NULL;
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
	if (!mp || !mp->graph) {
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return pl_err_set(err, PL_EINVAL,
		                  "%s: not an ONNX model (no ModelProto with a graph)", path);
	}
	const Onnx__GraphProto *g = mp->graph;
	imp m = {.g = g, .path = path, .batch = o ? o->batch : 0, .err = err};
	for (size_t i = 0; i < mp->n_opset_import; i++)
		if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0])
			m.opset = mp->opset_import[i]->version;
	cJSON *root = cJSON_CreateObject(), *outs = NULL;
	m.tensors = cJSON_CreateObject();
	m.ops = cJSON_CreateArray();
	m.alias_from = pl_calloc(g->n_node + 1, sizeof *m.alias_from);
	m.alias_to = pl_calloc(g->n_node + 1, sizeof *m.alias_to);
	m.skip = pl_calloc(g->n_node + 1, 1);
	pl_status st = PL_OK;
	if (!m.alias_from || !m.alias_to || !m.skip) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < g->n_initializer && !st; i++)
		st = declare(&m, g->initializer[i]->name, NULL, g->initializer[i]);
	for (size_t i = 0; i < g->n_input && !st; i++) {
		const Onnx__ValueInfoProto *v = g->input[i];
		if (!v->name || !v->name[0]) {
			st = pl_err_set(err, PL_EINVAL, "%s: graph input %zu has no name", path, i);
			break;
		}
		if (cJSON_GetObjectItem(m.tensors, v->name))
			continue; /* an initializer listed as an input too (older exports) */
		if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
			st = pl_err_set(err, PL_EINVAL, "%s: input '%s' is not a tensor", path,
			                v->name);
			break;
		}
		st = declare(&m, v->name, v->type->tensor_type, NULL);
	}
	for (size_t i = 0; i < g->n_node && !st; i++)
		if (!m.skip[i])
			st = node(&m, (int)i);
	if (st)
		goto done;
	if (g->n_output < 1) {
		st = pl_err_set(err, PL_EINVAL, "%s: the graph has no outputs", path);
		goto done;
	}
	outs = cJSON_CreateArray();
	const char *loss = o && o->loss ? o->loss : "cross-entropy";
	if (!strcmp(loss, "cross-entropy")) {
		/* labels: the first output's shape without its last (class) dimension */
		const Onnx__ValueInfoProto *y = g->output[0];
		if (!y->name) {
			st = pl_err_set(err, PL_EINVAL, "%s: graph output 0 has no name", path);
			goto done;
		}
		const Onnx__TensorShapeProto *sh =
		    y->type && y->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
		            y->type->tensor_type->shape
		        ? y->type->tensor_type->shape
		        : NULL;
		if (!sh || sh->n_dim < 1 || sh->n_dim > 16) {
			st = pl_err_set(
			    err, PL_EINVAL,
			    "%s: output '%s' has no shape: --loss cross-entropy needs one "
			    "(export with shapes inferred), or --loss none",
			    path, y->name);
			goto done;
		}
		int64_t ls[16];
		for (size_t d = 0; d + 1 < sh->n_dim; d++) {
			const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
			ls[d] = dim->value_case ==
			                    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
			                dim->dim_value > 0
			            ? dim->dim_value
			            : m.batch;
			if (ls[d] <= 0) {
				st = pl_err_set(
				    err, PL_EINVAL,
				    "%s: output '%s': dimension %zu is symbolic; --batch N sets "
				    "the batch",
				    path, y->name, d);
				goto done;
			}
		}
		cJSON *lt = cJSON_CreateObject();
		pl_json_add(lt, "shape", int_list(ls, sh->n_dim - 1));
		cJSON_AddStringToObject(lt, "role", "input");
		cJSON_AddStringToObject(lt, "dtype", "int64");
		pl_json_add(m.tensors, "labels", lt);
		cJSON *op = add_op(&m, "loss", "SoftmaxCrossEntropy");
		io(&m, op, "inputs", y->name);
		pl_json_push(cJSON_GetObjectItem(op, "inputs"), cJSON_CreateString("labels"));
		pl_json_push(cJSON_GetObjectItem(op, "outputs"), cJSON_CreateString("loss"));
		pl_json_push(outs, cJSON_CreateString("loss"));
	} else if (!strcmp(loss, "none")) {
		for (size_t i = 0; i < g->n_output; i++)
			if (g->output[i]->name)
				pl_json_push(outs,
				             cJSON_CreateString(resolve(&m, g->output[i]->name)));
	} else {
		st = pl_err_set(err, PL_EINVAL, "--loss %s: expected cross-entropy or none", loss);
		goto done;
	}
	cJSON_AddStringToObject(root, "format", "planner.model/1");
	cJSON_AddStringToObject(root, "name", g->name && g->name[0] ? g->name : "onnx");
	pl_json_add(root, "tensors", m.tensors);
	pl_json_add(root, "ops", m.ops);
	pl_json_add(root, "outputs", outs);
	m.tensors = m.ops = outs = NULL;
	if (pl_alloc_null_count())
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
done:
	cJSON_Delete(outs);
	cJSON_Delete(m.tensors);
	cJSON_Delete(m.ops);
	free(m.alias_from);
	free(m.alias_to);
	free(m.skip);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (st)
		cJSON_Delete(root);
	else
		*out = root;
	return st;
}
