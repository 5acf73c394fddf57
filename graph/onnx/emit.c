/* The ONNX importer (graph/onnx/): emitting planner ops: operands, constants, refusals, slices
 * and splits of a linear layer, Einsum. */
#include "graph/onnx/internal.h"

void pl__onnx_io(imp *m, cJSON *o, const char *key, const char *name)
{
	const char *r = pl__onnx_resolve(m, name);
	tinfo *c = pl__onnx_known(m, r);
	if (c && (c->cons || c->nval > 0) && !pl__onnx_decl(m, r)) {
		/* a constant computed at import, read by an op: declared, with its
		 * values (those it lacks are named by check_consts) */
		cJSON *t = cJSON_CreateObject();
		pl_json_add(t, "shape", pl__onnx_int_list(c->dims, (size_t)c->rank));
		cJSON_AddStringToObject(t, "role", "const");
		if (c->nval > 0 && c->nval == pl__onnx_elems(c))
			pl__onnx_const_values(t, c->val, c->nval, 0);
		pl_json_add(m->tensors, r, t);
	}
	pl_json_push(cJSON_GetObjectItem(o, key), cJSON_CreateString(r));
}

/* A const's "values" on its declaration t: the n of v, or n times `fill`
 * (v NULL), at most MAX_VALUES; an infinity is the string "inf" or "-inf"
 * (JSON has no literal for it), NaN the string "nan" (the model reader
 * refuses it, naming the element) */
void pl__onnx_const_values(cJSON *t, const double *v, int64_t n, double fill)
{
	if (n < 1 || n > MAX_VALUES)
		return;
	cJSON *a = cJSON_AddArrayToObject(t, "values");
	for (int64_t i = 0; a && i < n; i++) {
		double x = v ? v[i] : fill;
		cJSON_AddItemToArray(a, isfinite(x) ? cJSON_CreateNumber(x)
		                        : x != x    ? cJSON_CreateString("nan")
		                        : x > 0     ? cJSON_CreateString("inf")
		                                    : cJSON_CreateString("-inf"));
	}
}

/* A constant scale for the norm `op` of input x (a LayerNorm without
 * affine parameters): its name in buf, declared [x's last dimension]; NULL
 * when x's shape is not known or the name is taken */
const char *pl__onnx_const_scale(imp *m, const char *op, const tinfo *x, char *buf, size_t len)
{
	snprintf(buf, len, "%s.scale", op);
	if (!x || x->rank < 1 || pl__onnx_decl(m, buf))
		return NULL;
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", pl__onnx_int_list(&x->dims[x->rank - 1], 1));
	cJSON_AddStringToObject(t, "role", "const");
	pl__onnx_const_values(t, NULL, x->dims[x->rank - 1], 1);
	pl_json_add(m->tensors, buf, t);
	return buf;
}

/* A norm fused from the nodes that end at node `last` (named after it):
 * x, its scale and (LayerNorm) its bias, over the last axis */
pl_status pl__onnx_emit_norm(imp *m, const char *x, int last, const char *type, const char *gamma,
                             const char *beta, double eps)
{
	const Onnx__NodeProto *l = m->g->node[last];
	const char *opname = l->name && l->name[0] ? l->name : l->output[0];
	char scale[600];
	tinfo *xi = pl__onnx_known(m, x);
	if (!gamma) /* no affine parameters: a constant scale */
		gamma = pl__onnx_const_scale(m, opname, xi, scale, sizeof scale);
	if (!gamma)
		return pl__onnx_unsupported(m, l, "its input's shape is not known");
	cJSON *o = pl__onnx_add_op(m, opname, type);
	pl__onnx_io(m, o, "inputs", x);
	pl__onnx_io(m, o, "inputs", gamma);
	if (beta)
		pl__onnx_io(m, o, "inputs", beta);
	pl__onnx_io(m, o, "outputs", l->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", -1);
	cJSON_AddNumberToObject(at, "epsilon", eps);
	m->skip[last] = 1;
	if (xi)
		pl__onnx_set_info(m, l->output[0], xi->rank, xi->dims, 0, NULL);
	return PL_OK;
}

/* the element type the file states for tensor name (its value_info, as
 * shape inference writes it), or 0 */
static int32_t stated_elem(const imp *m, const char *name)
{
	for (size_t k = 0; k < m->g->n_value_info; k++) {
		const Onnx__ValueInfoProto *v = m->g->value_info[k];
		if (v->name && !strcmp(v->name, name) && v->type && v->type->tensor_type &&
		    v->type->tensor_type->has_elem_type)
			return v->type->tensor_type->elem_type;
	}
	return 0;
}

/* tensor name's ONNX element type: an initializer's or Constant's, the
 * file's value_info, or a graph input's or output's type; 0 when none says */
int32_t pl__onnx_elem_of(imp *m, const char *name)
{
	const tinfo *k = pl__onnx_known(m, name);
	int32_t e = k && k->elem ? k->elem : stated_elem(m, name);
	size_t ni = m->g->n_input;
	for (size_t i = 0; !e && i < ni + m->g->n_output; i++) {
		const Onnx__ValueInfoProto *v = i < ni ? m->g->input[i] : m->g->output[i - ni];
		if (v->name && !strcmp(v->name, name) && v->type && v->type->tensor_type &&
		    v->type->tensor_type->has_elem_type)
			e = v->type->tensor_type->elem_type;
	}
	return e;
}

/* an operand: a scalar constant becomes a const tensor of shape [1] */
void pl__onnx_operand(imp *m, cJSON *o, const char *name)
{
	double v = 0;
	tinfo *k = pl__onnx_valued(m, name);
	if (!pl__onnx_decl(m, name) && (k || pl__onnx_scalar_of(m, name, &v) == 0)) {
		cJSON *t = cJSON_CreateObject();
		int64_t one = 1;
		if (k && k->rank > 0)
			pl_json_add(t, "shape", pl__onnx_int_list(k->dims, (size_t)k->rank));
		else
			pl_json_add(t, "shape", pl__onnx_int_list(&one, 1));
		cJSON_AddStringToObject(t, "role", "const");
		/* its values, which the executor computes with */
		if (k && k->nval > 0 && k->nval == pl__onnx_elems(k))
			pl__onnx_const_values(t, k->val, k->nval, 0);
		else if (!k || k->rank == 0)
			pl__onnx_const_values(t, NULL, 1, v);
		/* an integer constant compared with an integer input keeps its type,
		 * as a float64 one (of a graph computing in float64) does */
		const char *dt =
		    k ? pl__onnx_dtype_name(k->elem ? k->elem : stated_elem(m, name)) : NULL;
		if (dt && (!strncmp(dt, "int", 3) || !strcmp(dt, "float64")))
			cJSON_AddStringToObject(t, "dtype", dt);
		pl_json_add(m->tensors, name, t);
	}
	pl__onnx_io(m, o, "inputs", name);
}

pl_status pl__onnx_unsupported(imp *m, const Onnx__NodeProto *n, const char *why)
{
	char head[sizeof m->err->msg];
	static const char tail[] = ", ... ('planner import --help' lists them all)";
	int h = snprintf(head, sizeof head, "%s: node '%s' (%s, opset %lld): %s; the importer knows ",
	                 m->path, n->name && n->name[0] ? n->name : "(unnamed)", n->op_type,
	                 (long long)m->opset, why);
	/* as much of the list as the message holds, cut after a whole entry
	 * (a comma outside parentheses) */
	size_t room = h > 0 && (size_t)h + sizeof tail < sizeof head ? sizeof head - (size_t)h - sizeof tail
	                                                              : 0,
	       all = strlen(SUPPORTED), cut = 0;
	if (all <= room + sizeof tail - 1)
		return pl_err_set(m->err, PL_EINVAL, "%s%s", head, SUPPORTED);
	for (size_t i = 0, depth = 0; i < room; i++) {
		depth += SUPPORTED[i] == '(';
		depth -= SUPPORTED[i] == ')' && depth > 0;
		if (SUPPORTED[i] == ',' && !depth)
			cut = i;
	}
	return pl_err_set(m->err, PL_EINVAL, "%s%.*s%s", head, (int)cut, SUPPORTED, tail);
}

const char *pl_onnx_supported(void)
{
	return SUPPORTED;
}

/* the emitted op whose first output is name, or NULL */
cJSON *pl__onnx_producer(imp *m, const char *name)
{
	cJSON *o;
	cJSON_ArrayForEach (o, m->ops) {
		cJSON *out = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0);
		if (cJSON_IsString(out) && !strcmp(out->valuestring, name))
			return o;
	}
	return NULL;
}

static const char *op_input(cJSON *o, int k)
{
	return cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "inputs"), k));
}

static int op_is(cJSON *o, const char *type)
{
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(o, "type"));
	return t && !strcmp(t, type);
}

static cJSON *param_decl(imp *m, const char *name)
{
	cJSON *t = name ? pl__onnx_decl(m, name) : NULL;
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
	return role && !strcmp(role, "param") ? t : NULL;
}

/* a param holding columns lo..hi of param w (its last dimension cut),
 * declared under a name of its own; its name, or NULL */
static const char *param_slice(imp *m, const char *w, int64_t lo, int64_t hi)
{
	cJSON *t = param_decl(m, w), *shape = cJSON_GetObjectItem(t, "shape");
	int r = cJSON_GetArraySize(shape);
	if (r < 1 || r > 16)
		return NULL;
	int64_t dims[16];
	for (int d = 0; d < r; d++)
		dims[d] = (int64_t)cJSON_GetNumberValue(cJSON_GetArrayItem(shape, d));
	dims[r - 1] = hi - lo;
	char name[600];
	snprintf(name, sizeof name, "%s[%lld:%lld]", w, (long long)lo, (long long)hi);
	if (!pl__onnx_decl(m, name)) {
		cJSON *n = cJSON_Duplicate(t, 1);
		cJSON_ReplaceItemInObject(n, "shape", pl__onnx_int_list(dims, (size_t)r));
		pl_json_add(m->tensors, name, n);
	}
	cJSON *got = pl__onnx_decl(m, name);
	return got ? got->string : NULL;
}

/* Columns lo..hi of a linear layer's output x (torch's MultiheadAttention
 * computes q, k and v with one in_proj and slices them apart; GPT-2's c_attn
 * splits them): the layer's weight and bias are cut instead, the slice its
 * own MatMul (and bias Add) of the layer's input named `name` with output
 * `out`, so every weight stays a param and the tensors keep the shapes the
 * op rules know. The whole layer, once nothing reads it, is dropped at the
 * end (drop_unread). -1 when x is not such a layer's output. */
static int linear_columns(imp *m, const char *x_name, int64_t lo, int64_t hi, const char *name,
                          const char *out)
{
	tinfo *x = pl__onnx_known(m, x_name);
	if (!x || x->rank < 1 || lo < 0 || hi > x->dims[x->rank - 1] || hi <= lo)
		return -1;
	cJSON *add = pl__onnx_producer(m, pl__onnx_resolve(m, x_name)), *mm = add;
	const char *bias = NULL;
	if (add && op_is(add, "Add")) {
		const char *y = NULL;
		for (int k = 0; k < 2 && !bias; k++)
			if (param_decl(m, op_input(add, k))) {
				bias = op_input(add, k);
				y = op_input(add, 1 - k);
			}
		mm = y ? pl__onnx_producer(m, y) : NULL;
	}
	if (!mm || !op_is(mm, "MatMul") || !param_decl(m, op_input(mm, 1)) ||
	    (bias && cJSON_GetArraySize(cJSON_GetObjectItem(param_decl(m, bias), "shape")) != 1))
		return -1;
	const char *w = param_slice(m, op_input(mm, 1), lo, hi),
	           *b = bias ? param_slice(m, bias, lo, hi) : NULL;
	if (!w || (bias && !b))
		return -1;
	char mmname[600], mmout[600];
	snprintf(mmname, sizeof mmname, "%s.mm", name);
	snprintf(mmout, sizeof mmout, "%s.mm", out);
	cJSON *o = pl__onnx_add_op(m, bias ? mmname : name, "MatMul");
	pl__onnx_io(m, o, "inputs", op_input(mm, 0));
	pl__onnx_io(m, o, "inputs", w);
	pl__onnx_io(m, o, "outputs", bias ? mmout : out);
	if (bias) {
		o = pl__onnx_add_op(m, name, "Add");
		pl__onnx_io(m, o, "inputs", mmout);
		pl__onnx_io(m, o, "inputs", b);
		pl__onnx_io(m, o, "outputs", out);
	}
	int64_t dims[16];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[x->rank - 1] = hi - lo;
	pl__onnx_set_info(m, out, x->rank, dims, 0, NULL);
	return 0;
}

/* A Slice node's ranges on x: per sliced axis its index and [lo, hi)
 * clamped to the dimension, into axis, lo and hi (16 at most). Their count,
 * or -1 when the arguments are not known, disagree in length, name an axis x
 * does not have or step other than 1. */
static int slice_ranges_steps(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *axis,
                              int64_t *lo, int64_t *hi, int64_t *step)
{
	int64_t st[16], en[16], ax[16], sp[16];
	int ns = pl__onnx_ints_of(m, n, "starts", 1, st, 16),
	    ne = pl__onnx_ints_of(m, n, "ends", 2, en, 16),
	    na = pl__onnx_ints_of(m, n, "axes", 3, ax, 16),
	    nt = pl__onnx_ints_of(m, n, "steps", 4, sp, 16);
	if (ns < 1 || ne != ns || (na && na != ns) || (nt && nt != ns))
		return -1;
	for (int k = 0; k < ns; k++) {
		int64_t a = pl__onnx_axis_of(na ? ax[k] : k, x->rank);
		step[k] = nt ? sp[k] : 1;
		if (a < 0 || a >= x->rank || step[k] < 1)
			return -1;
		int64_t N = x->dims[a], l = st[k] < 0 ? st[k] + N : st[k],
		        h = en[k] < 0 ? en[k] + N : en[k];
		l = l < 0 ? 0 : l > N ? N : l;
		axis[k] = a;
		lo[k] = l;
		hi[k] = h > N ? N : h < l ? l : h;
	}
	return ns;
}

/* slice_ranges_steps for slices with steps of 1 (-1 for any other) */
static int slice_ranges(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *axis,
                        int64_t *lo, int64_t *hi)
{
	int64_t step[16];
	int ns = slice_ranges_steps(m, n, x, axis, lo, hi, step);
	for (int k = 0; k < ns; k++)
		if (step[k] != 1)
			return -1;
	return ns;
}

/* Emits op `name` of type reading in and writing out, its attribute key the
 * list v of n ints; returns out */
const char *pl__onnx_emit_shaped(imp *m, const char *name, const char *type, const char *in,
                                 const char *out, const char *key, const int64_t *v, int n)
{
	cJSON *o = pl__onnx_add_op(m, name, type);
	pl_json_push(cJSON_GetObjectItem(o, "inputs"), cJSON_CreateString(pl__onnx_resolve(m, in)));
	pl_json_push(cJSON_GetObjectItem(o, "outputs"),
	             cJSON_CreateString(pl__onnx_resolve(m, out)));
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), key, pl__onnx_int_list(v, (size_t)n));
	return out;
}

/* A strided Slice of an activation (Swin's patch merging, x[:, 0::2, 1::2]):
 * every stepped axis of N elements cut by its step s into [N/s, s] (a
 * Reshape), the start's element taken of each group of s (a Slice), the
 * groups' axes merged back (a Reshape). Exact when the slice runs to the end
 * of an axis that s divides and starts within the first group. 0, or -1
 * when it is not such a slice */
static int import_strided_slice(imp *m, const Onnx__NodeProto *n, const char *name, const tinfo *x,
                                int ns, const int64_t *axis, const int64_t *lo, const int64_t *hi,
                                const int64_t *step)
{
	int64_t split[16], out[16], sax[16], slo[16], shi[16];
	int r = 0, at[16];
	for (int d = 0; d < x->rank; d++) {
		int k = -1;
		for (int j = 0; j < ns; j++)
			if (axis[j] == d)
				k = j;
		at[d] = r;
		out[d] = x->dims[d];
		if (r >= 15)
			return -1;
		if (k >= 0 && step[k] > 1) {
			if (lo[k] >= step[k] || hi[k] != x->dims[d] || x->dims[d] % step[k])
				return -1;
			split[r++] = x->dims[d] / step[k];
			split[r++] = step[k];
			out[d] = x->dims[d] / step[k];
		} else {
			split[r++] = x->dims[d];
			if (k >= 0) {
				if (hi[k] <= lo[k])
					return -1;
				out[d] = hi[k] - lo[k];
			}
		}
	}
	if (r > 8) /* the planner's tensors have at most 8 dimensions */
		return -1;
	int nsl = 0;
	for (int k = 0; k < ns; k++) {
		int d = (int)axis[k], inner = step[k] > 1;
		sax[nsl] = at[d] + inner;
		slo[nsl] = lo[k];
		shi[nsl] = inner ? lo[k] + 1 : hi[k];
		nsl++;
	}
	char a[600], b[600], nm[600];
	snprintf(a, sizeof a, "%s.split", n->output[0]);
	snprintf(b, sizeof b, "%s.pick", n->output[0]);
	snprintf(nm, sizeof nm, "%s.split", name);
	pl__onnx_emit_shaped(m, nm, "Reshape", n->input[0], a, "shape", split, r);
	cJSON *o = pl__onnx_add_op(m, name, "Slice");
	pl_json_push(cJSON_GetObjectItem(o, "inputs"), cJSON_CreateString(a));
	pl_json_push(cJSON_GetObjectItem(o, "outputs"), cJSON_CreateString(b));
	cJSON *att = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(att, "axes", pl__onnx_int_list(sax, (size_t)nsl));
	pl_json_add(att, "starts", pl__onnx_int_list(slo, (size_t)nsl));
	pl_json_add(att, "ends", pl__onnx_int_list(shi, (size_t)nsl));
	snprintf(nm, sizeof nm, "%s.merge", name);
	pl__onnx_emit_shaped(m, nm, "Reshape", b, n->output[0], "shape", out, x->rank);
	pl__onnx_set_info(m, n->output[0], x->rank, out, 0, NULL);
	return 0;
}

/* A Slice of initializer t (a param or const: an attention mask sliced to
 * the sequence) is the initializer itself when it keeps every element; of a
 * const, else a tensor of its own declared with the sliced shape (its data
 * are not needed). A param cut is the Slice op on it: the whole param is
 * trained (a position table read to the sequence, a recurrent layer's
 * gates), under its own name. -1 when t is not an initializer, the slice not
 * known, or a param cut. */
static int slice_initializer(imp *m, const Onnx__NodeProto *n)
{
	cJSON *t = pl__onnx_decl(m, pl__onnx_resolve(m, n->input[0]));
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int64_t axis[16], lo[16], hi[16], dims[16];
	int ns = t && role && strcmp(role, "input") && x ? slice_ranges(m, n, x, axis, lo, hi) : -1;
	if (ns < 0)
		return -1;
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (int k = 0; k < ns; k++)
		dims[axis[k]] = hi[k] - lo[k];
	if (!memcmp(dims, x->dims, sizeof(int64_t) * (size_t)x->rank)) { /* all of it */
		pl__onnx_drop_node(m, n);
		return 0;
	}
	if (!strcmp(role, "param"))
		return -1;
	cJSON *d = cJSON_Duplicate(t, 1);
	cJSON_ReplaceItemInObject(d, "shape", pl__onnx_int_list(dims, (size_t)x->rank));
	pl_json_add(m->tensors, n->output[0], d);
	pl__onnx_set_info(m, n->output[0], x->rank, dims, 0, NULL);
	tinfo *o = pl__onnx_known(m, n->output[0]);
	if (o) /* made a constant later (--const): its values only if the file has none */
		o->nodata = x->nodata || (x->init && !x->init->has_raw_data &&
		                          !x->init->n_float_data && !x->init->n_double_data &&
		                          !x->init->n_int32_data && !x->init->n_int64_data);
	return 0;
}

/* A Slice of one axis with a negative step (torch.flip, x[::-1]): a Gather
 * of the indices it visits, an int64 const carrying them (start clamped to
 * [0, N - 1], end to [-1, N - 1], as ONNX). 0, or -1 when it is not such a
 * slice */
static int import_reversed_slice(imp *m, const Onnx__NodeProto *n, const char *name, tinfo *x)
{
	int64_t st, en, ax = 0, sp;
	if (pl__onnx_ints_of(m, n, "starts", 1, &st, 1) != 1 ||
	    pl__onnx_ints_of(m, n, "ends", 2, &en, 1) != 1 ||
	    pl__onnx_ints_of(m, n, "axes", 3, &ax, 1) < 0 ||
	    pl__onnx_ints_of(m, n, "steps", 4, &sp, 1) != 1 || sp >= 0 ||
	    (ax = pl__onnx_axis_of(ax, x->rank)) < 0 || ax >= x->rank)
		return -1;
	int64_t N = x->dims[ax];
	if (st < -N || st > N || en < -N - 1 || en > N) /* clamped as ONNX clamps them */
		st = st < -N ? -N : st > N ? N : st, en = en < -N - 1 ? -N - 1 : en > N ? N : en;
	int64_t lo = st < 0 ? st + N : st, hi = en < 0 ? en + N : en;
	lo = lo < 0 ? -1 : lo > N - 1 ? N - 1 : lo;
	hi = hi < -1 ? -1 : hi > N - 1 ? N - 1 : hi;
	int64_t by = sp < -N ? N + 1 : -sp; /* the step's size (no negation of INT64_MIN) */
	int64_t k = lo > hi ? (lo - hi - 1) / by + 1 : 0;
	if (k < 1 || k > 65536)
		return -1;
	double *ix = pl_malloc(sizeof *ix * (size_t)k);
	if (!ix)
		return -1;
	for (int64_t i = 0; i < k; i++)
		ix[i] = (double)(lo - i * by);
	char iname[600];
	snprintf(iname, sizeof iname, "%s.indices", name);
	cJSON *c = cJSON_CreateObject();
	pl_json_add(c, "shape", pl__onnx_int_list(&k, 1));
	cJSON_AddStringToObject(c, "dtype", "int64");
	cJSON_AddStringToObject(c, "role", "const");
	pl__onnx_const_values(c, ix, k, 0);
	free(ix);
	pl_json_add(m->tensors, iname, c);
	cJSON *o = pl__onnx_add_op(m, name, "Gather");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "inputs", iname);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", (double)ax);
	int64_t dims[16];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[ax] = k;
	pl__onnx_set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

/* The Slice op `name` of tensor `in` (of shape x) over ns axes, [lo, hi) of
 * each, into `out`, its shape recorded; -1 (nothing added) when a range is
 * empty */
int pl__onnx_slice_op(imp *m, const char *name, const char *in, const char *out, const tinfo *x,
                      int ns, const int64_t *axis, const int64_t *lo, const int64_t *hi)
{
	int64_t dims[16];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (int k = 0; k < ns; k++) {
		if (hi[k] <= lo[k])
			return -1;
		dims[axis[k]] = hi[k] - lo[k];
	}
	cJSON *o = pl__onnx_add_op(m, name, "Slice");
	pl__onnx_io(m, o, "inputs", in);
	pl__onnx_io(m, o, "outputs", out);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(at, "axes", pl__onnx_int_list(axis, (size_t)ns));
	pl_json_add(at, "starts", pl__onnx_int_list(lo, (size_t)ns));
	pl_json_add(at, "ends", pl__onnx_int_list(hi, (size_t)ns));
	/* (the name as the op holds it) */
	pl__onnx_set_info(m, cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0)->valuestring,
	                  x->rank, dims, 0, NULL);
	return 0;
}

/* A Slice node: of an initializer (a slice of the param or const), of one
 * axis with a negative step (a Gather), with other steps (the strided
 * form), along the last axis of a linear layer's output (the layer's weight
 * cut into columns), or any other range (the Slice op). 0, or -1 when its
 * input's shape or its ranges are not known */
int pl__onnx_import_slice(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (slice_initializer(m, n) == 0)
		return 0;
	tinfo *x = pl__onnx_known(m, n->input[0]);
	if (x && x->rank >= 1 && import_reversed_slice(m, n, name, x) == 0)
		return 0;
	int64_t axis[16], lo[16], hi[16], step[16];
	int ns = x && x->rank >= 1 ? slice_ranges_steps(m, n, x, axis, lo, hi, step) : -1;
	if (ns < 1 || ns > x->rank)
		return -1;
	for (int k = 0; k < ns; k++)
		if (step[k] != 1)
			return import_strided_slice(m, n, name, x, ns, axis, lo, hi, step);
	if (ns == 1 && axis[0] == x->rank - 1 &&
	    !linear_columns(m, n->input[0], lo[0], hi[0], name, n->output[0]))
		return 0;
	/* any other range of a tensor: the Slice op (its sliced axes kept whole) */
	return pl__onnx_slice_op(m, name, n->input[0], n->output[0], x, ns, axis, lo, hi);
}

/* Einsum's equation "ab,bc,cd->ad": each part's indices (ix[part], nix[part]
 * of them; letters, at most 16, none repeated in a part), the operands'
 * first and the output's last (*nparts of them, at most EINSUM_MAX
 * operands). 0, or -1 when it is not so written */
#define EINSUM_MAX 8
static int einsum_parse(const Onnx__AttributeProto *eq, char ix[EINSUM_MAX + 1][16],
                        int nix[EINSUM_MAX + 1], int *nparts)
{
	int part = 0, out = 0;
	memset(nix, 0, sizeof *nix * (EINSUM_MAX + 1));
	for (size_t i = 0; i < eq->s.len; i++) {
		char c = (char)eq->s.data[i];
		if (c == ' ')
			continue;
		if (c == ',' && !out && part + 1 < EINSUM_MAX)
			part++;
		else if (c == '-' && !out && i + 1 < eq->s.len && eq->s.data[i + 1] == '>') {
			out = 1;
			part++;
			i++;
		} else if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && nix[part] < 16) {
			for (int k = 0; k < nix[part]; k++)
				if (ix[part][k] == c)
					return -1;
			ix[part][nix[part]++] = c;
		} else
			return -1;
	}
	*nparts = part + 1;
	return out && part >= 2 ? 0 : -1;
}

/* Einsum of two operands that is a (batched) matrix product, as attention
 * written with einsum spells it ("bhid,bhjd->bhij"): each operand
 * transposed to [batch, its free indices, the contracted ones] and
 * reshaped to three dimensions' worth, one MatMul, reshaped and transposed
 * into the output's order. Every index of an operand is a batch index (in
 * both and the output), free (in it and the output) or contracted (in both,
 * not the output); no ellipsis, no repeated index, batch sizes equal. 0, or
 * -1 with *why. */
static int einsum2(imp *m, const char *name, const char *in0, const char *in1, const char *out,
                   char ix[3][16], const int nix[3], const char **why)
{
	tinfo *x[2] = {pl__onnx_known(m, in0), pl__onnx_known(m, in1)};
	if (!x[0] || !x[1] || x[0]->rank != nix[0] || x[1]->rank != nix[1])
		return -1;
	/* each index: its size, and where it is in the operands and output */
	char bat[16], fa[16], fb[16], con[16];
	int nb = 0, na = 0, nfb = 0, nc = 0;
	int64_t size[128] = {0};
	for (int o = 0; o < 2; o++)
		for (int k = 0; k < nix[o]; k++) {
			int c = (unsigned char)ix[o][k];
			if (size[c] && size[c] != x[o]->dims[k])
				return -1;
			size[c] = x[o]->dims[k];
		}
	for (int o = 0; o < 2; o++)
		for (int k = 0; k < nix[o]; k++) {
			char c = ix[o][k];
			int in_other = memchr(ix[1 - o], c, (size_t)nix[1 - o]) != NULL,
			    in_out = memchr(ix[2], c, (size_t)nix[2]) != NULL;
			if (!in_other && !in_out)
				return -1; /* summed in one operand alone */
			if (o == 1 && in_other)
				continue; /* met with the first operand */
			if (in_other && in_out)
				bat[nb++] = c;
			else if (in_other)
				con[nc++] = c;
			else if (o == 0)
				fa[na++] = c;
			else
				fb[nfb++] = c;
		}
	if (nb + na + nfb != nix[2] || nb + 2 > 8)
		return -1;
	for (int k = 0; k < nix[2]; k++)
		if (!size[(unsigned char)ix[2][k]])
			return -1;
	/* A to [batch, free of A, contracted], B to [batch, contracted, free of B] */
	char seq[2][16];
	int len[2] = {0, 0};
	for (int o = 0; o < 2; o++) {
		int l = 0;
		for (int k = 0; k < nb; k++)
			seq[o][l++] = bat[k];
		const char *first = o == 0 ? fa : con, *second = o == 0 ? con : fb;
		int n1 = o == 0 ? na : nc, n2 = o == 0 ? nc : nfb;
		for (int k = 0; k < n1; k++)
			seq[o][l++] = first[k];
		for (int k = 0; k < n2; k++)
			seq[o][l++] = second[k];
		len[o] = l;
	}
	char buf[4][640];
	const char *in[2];
	int64_t M = 1, N = 1, K = 1;
	*why = "the product of its operands' free or contracted dimensions (inputs' shapes) "
	       "overflows 64 bits";
	for (int k = 0; k < na; k++)
		if (pl_size_mul(M, size[(unsigned char)fa[k]], &M))
			return -1;
	for (int k = 0; k < nfb; k++)
		if (pl_size_mul(N, size[(unsigned char)fb[k]], &N))
			return -1;
	for (int k = 0; k < nc; k++)
		if (pl_size_mul(K, size[(unsigned char)con[k]], &K))
			return -1;
	for (int o = 0; o < 2; o++) {
		int64_t perm[16], shape[16];
		int moved = 0;
		for (int k = 0; k < len[o]; k++) {
			perm[k] = (const char *)memchr(ix[o], seq[o][k], (size_t)nix[o]) - ix[o];
			moved |= perm[k] != k;
		}
		in[o] = o ? in1 : in0;
		if (moved) {
			snprintf(buf[o], sizeof buf[o], "%s.t%d", name, o);
			in[o] = pl__onnx_emit_shaped(m, buf[o], "Transpose", in[o], buf[o], "perm",
			                             perm, len[o]);
		}
		for (int k = 0; k < nb; k++)
			shape[k] = size[(unsigned char)bat[k]];
		shape[nb] = o == 0 ? M : K;
		shape[nb + 1] = o == 0 ? K : N;
		if (len[o] != nb + 2 || (o == 0 ? na != 1 || nc != 1 : nc != 1 || nfb != 1)) {
			snprintf(buf[2 + o], sizeof buf[2 + o], "%s.r%d", name, o);
			in[o] = pl__onnx_emit_shaped(m, buf[2 + o], "Reshape", in[o], buf[2 + o],
			                             "shape", shape, nb + 2);
		}
	}
	/* the product [batch, M, N], then the output's shape and order */
	int64_t perm[16], shape[16];
	int moved = 0, direct = na == 1 && nfb == 1;
	char mm[640], seqo[16];
	int l = 0;
	for (int k = 0; k < nb; k++)
		seqo[l++] = bat[k];
	for (int k = 0; k < na; k++)
		seqo[l++] = fa[k];
	for (int k = 0; k < nfb; k++)
		seqo[l++] = fb[k];
	for (int k = 0; k < l; k++) {
		perm[k] = (const char *)memchr(seqo, ix[2][k], (size_t)l) - seqo;
		moved |= perm[k] != k;
		shape[k] = size[(unsigned char)seqo[k]];
	}
	/* the last of MatMul, Reshape (unless the free indices are one each) and
	 * Transpose (unless the order is the output's) writes the output, and
	 * is named as the node */
	int reshape = !direct;
	char rs[640];
	snprintf(mm, sizeof mm, reshape || moved ? "%s.mm" : "%s", name);
	snprintf(rs, sizeof rs, moved ? "%s.r" : "%s", name);
	const char *y = reshape || moved ? mm : out;
	cJSON *o = pl__onnx_add_op(m, mm, "MatMul");
	pl__onnx_io(m, o, "inputs", in[0]);
	pl__onnx_io(m, o, "inputs", in[1]);
	pl__onnx_io(m, o, "outputs", y);
	if (reshape)
		y = pl__onnx_emit_shaped(m, rs, "Reshape", y, moved ? rs : out, "shape", shape, l);
	if (moved)
		pl__onnx_emit_shaped(m, name, "Transpose", y, out, "perm", perm, l);
	int64_t od[16];
	for (int k = 0; k < nix[2]; k++)
		od[k] = size[(unsigned char)ix[2][k]];
	pl__onnx_set_info(m, out, nix[2], od, 0, NULL);
	return 0;
}

/* Einsum of two or more operands (at most EINSUM_MAX), left to right: each
 * step the product of what is made so far and the next operand (einsum2),
 * keeping the indices the output or a later operand still reads, in the
 * order they first appear; the last step writes the output in its order,
 * and the steps' tensors are named NAME.e1, NAME.e2, ... 0, or -1 with
 * *why. */
int pl__onnx_import_einsum(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const Onnx__AttributeProto *eq = pl__onnx_attr(n, "equation");
	char ix[EINSUM_MAX + 1][16];
	int nix[EINSUM_MAX + 1], np = 0;
	*why = "only products of up to 8 operands whose indices are each batch, free or "
	       "contracted at each step, left to right (no ellipsis, no index summed in one "
	       "operand alone)";
	if (!eq || !eq->has_s || n->n_output != 1 || einsum_parse(eq, ix, nix, &np) ||
	    (size_t)(np - 1) != n->n_input)
		return -1;
	int nops = np - 1;
	char step[3][16], cur[600] = "";
	int ns[3];
	const char *left = n->input[0];
	memcpy(step[0], ix[0], 16);
	ns[0] = nix[0];
	for (int i = 1; i < nops; i++) {
		memcpy(step[1], ix[i], 16);
		ns[1] = nix[i];
		char next[600];
		const char *dst = n->output[0];
		if (i + 1 < nops) { /* what the output or a later operand reads */
			ns[2] = 0;
			for (int side = 0; side < 2; side++)
				for (int k = 0; k < ns[side]; k++) {
					char c = step[side][k];
					int keep = memchr(ix[nops], c, (size_t)nix[nops]) != NULL;
					for (int j = i + 1; j < nops && !keep; j++)
						keep = memchr(ix[j], c, (size_t)nix[j]) != NULL;
					if (keep && !memchr(step[2], c, (size_t)ns[2]))
						step[2][ns[2]++] = c;
				}
			if ((size_t)snprintf(next, sizeof next, "%s.e%d", name, i) >= sizeof next ||
			    pl__onnx_decl(m, next))
				return -1;
			dst = next;
		} else {
			memcpy(step[2], ix[nops], 16);
			ns[2] = nix[nops];
		}
		char opname[600];
		if ((size_t)snprintf(opname, sizeof opname, i + 1 < nops ? "%s.e%d" : "%s", name,
		                     i) >= sizeof opname)
			return -1;
		if (einsum2(m, opname, left, n->input[i], dst, step, ns, why))
			return -1;
		if (dst != n->output[0]) {
			snprintf(cur, sizeof cur, "%s", dst);
			left = cur;
		}
		memcpy(step[0], step[2], 16);
		ns[0] = ns[2];
	}
	return 0;
}

/* The axis (*ax) and the parts' sizes of Split node n of input x, as ONNX
 * gives them (the `split` input or attribute; else equal parts, the last one
 * smaller where opset 18's num_outputs does not divide the axis): their
 * count, one per output, or -1. */
int pl__onnx_split_sizes(imp *m, const Onnx__NodeProto *n, const tinfo *x, int64_t *ax,
                         int64_t *sizes)
{
	*ax = x ? pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), x->rank) : -1;
	if (!x || x->rank < 1 || *ax < 0 || *ax >= x->rank || n->n_output < 1 || n->n_output > 16)
		return -1;
	int64_t N = x->dims[*ax], parts = (int64_t)n->n_output;
	if (n->n_input > 1 && n->input[1][0] && !pl__onnx_valued(m, n->input[1]))
		return -1; /* sizes given, not known */
	int k = pl__onnx_ints_of(m, n, "split", 1, sizes, 16);
	if (k == 0) { /* equal parts */
		int64_t each = N % parts == 0 || !pl__onnx_attr(n, "num_outputs")
		                   ? N / parts
		                   : (N + parts - 1) / parts;
		if (each * parts != N && !pl__onnx_attr(n, "num_outputs"))
			return -1;
		for (int64_t j = 0; j < parts; j++)
			sizes[j] = j < parts - 1 ? each : N - each * (parts - 1);
		k = (int)parts;
	}
	int64_t total = 0;
	for (int j = 0; j < k; j++)
		total += sizes[j] > 0 ? sizes[j] : -BIG;
	return k == (int)n->n_output && total == N ? k : -1;
}

/* Split along the last axis of a linear layer's output (GPT-2's q, k, v):
 * each output its columns (linear_columns); -1 when not such a split. */
int pl__onnx_import_split(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int64_t ax, sizes[16];
	int k = pl__onnx_split_sizes(m, n, x, &ax, sizes);
	if (k < 0)
		return -1;
	int64_t at = 0;
	char part[600];
	if (ax == x->rank - 1) { /* a linear layer's output: its weight's columns */
		snprintf(part, sizeof part, "%s.0", name);
		if (!linear_columns(m, n->input[0], 0, sizes[0], part, n->output[0])) {
			for (int j = 1; j < k; j++) {
				at += sizes[j - 1];
				snprintf(part, sizeof part, "%s.%d", name, j);
				if (linear_columns(m, n->input[0], at, at + sizes[j], part,
				                   n->output[j]))
					return -1;
			}
			return 0;
		}
	}
	for (int j = 0; j < k; j++) { /* any other tensor: a Slice each */
		int64_t dims[16], lo = at, hi = at + sizes[j];
		snprintf(part, sizeof part, "%s.%d", name, j);
		cJSON *o = pl__onnx_add_op(m, part, "Slice");
		pl__onnx_io(m, o, "inputs", n->input[0]);
		pl__onnx_io(m, o, "outputs", n->output[j]);
		cJSON *a = cJSON_AddObjectToObject(o, "attrs");
		pl_json_add(a, "axes", pl__onnx_int_list(&ax, 1));
		pl_json_add(a, "starts", pl__onnx_int_list(&lo, 1));
		pl_json_add(a, "ends", pl__onnx_int_list(&hi, 1));
		memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
		dims[ax] = sizes[j];
		pl__onnx_set_info(m, n->output[j], x->rank, dims, 0, NULL);
		at = hi;
	}
	return 0;
}

/* whether an emitted op reads name, or it is one of outs */
static int is_read(imp *m, cJSON *outs, const char *name)
{
	cJSON *p, *in;
	cJSON_ArrayForEach (p, outs)
		if (!strcmp(cJSON_GetStringValue(p), name))
			return 1;
	cJSON_ArrayForEach (p, m->ops)
		cJSON_ArrayForEach (in, cJSON_GetObjectItem(p, "inputs"))
			if (!strcmp(cJSON_GetStringValue(in), name))
				return 1;
	return 0;
}

/* Drops what nothing reads any more (a linear layer split by split_linear):
 * ops none of whose outputs is read or a graph output, then params no op
 * reads. */
void pl__onnx_drop_unread(imp *m, cJSON *outs)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (cJSON *o = m->ops->child, *next; o; o = next) {
			next = o->next;
			cJSON *out;
			int read = 0;
			cJSON_ArrayForEach (out, cJSON_GetObjectItem(o, "outputs"))
				read |= is_read(m, outs, cJSON_GetStringValue(out));
			if (!read) {
				cJSON_Delete(cJSON_DetachItemViaPointer(m->ops, o));
				changed = 1;
			}
		}
	}
	for (cJSON *t = m->tensors->child, *next; t; t = next) {
		next = t->next;
		if (param_decl(m, t->string) && !is_read(m, NULL, t->string))
			cJSON_Delete(cJSON_DetachItemViaPointer(m->tensors, t));
	}
}

/* ints_of for a window attribute of nsp entries (dflt when absent): 0, or -1
 * when it has another count or a value out of [lo, 2^20] */
int pl__onnx_window_ints(imp *m, const Onnx__NodeProto *n, const char *at, int count, int64_t dflt,
                         int64_t lo, int64_t *v)
{
	int got = pl__onnx_ints_of(m, n, at, 99, v, 2 * 3);
	if (got == 0)
		for (int i = 0; i < count; i++)
			v[i] = dflt;
	else if (got != count)
		return -1;
	for (int i = 0; i < count; i++)
		if (v[i] < lo || v[i] > (1 << 20))
			return -1;
	return 0;
}
