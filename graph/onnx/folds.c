/* The ONNX importer (graph/onnx/): computations on known values folded at import (shapes,
 * masks, scales): one folder an operator, and ONNX's output shapes of the ops the importer
 * emits. */
#include "graph/onnx/internal.h"

/* Unsqueeze / Squeeze of a: the output's shape (and a's values, if known)
 * recorded. 0, or -1 when the axes are not known */
int pl__onnx_fold_unsqueeze(imp *m, const Onnx__NodeProto *n, const tinfo *a)
{
	int64_t ax[16], dims[16];
	int na = pl__onnx_ints_of(m, n, "axes", 1, ax, 16), r = 0;
	if (na < 0)
		return -1;
	if (!strcmp(n->op_type, "Unsqueeze")) {
		int out = a->rank + na, src = 0;
		if (out > 16)
			return -1;
		for (int d = 0; d < out; d++) {
			int ins = 0;
			for (int k = 0; k < na; k++)
				ins |= pl__onnx_axis_of(ax[k], out) == d;
			dims[r++] = ins || src >= a->rank ? 1 : a->dims[src++];
		}
	} else {
		for (int d = 0; d < a->rank; d++) {
			int drop = na == 0 && a->dims[d] == 1;
			for (int k = 0; k < na; k++)
				drop |= pl__onnx_axis_of(ax[k], a->rank) == d;
			if (!drop)
				dims[r++] = a->dims[d];
		}
	}
	pl__onnx_set_info(m, n->output[0], r, dims, a->nval ? (int)pl__onnx_elems(a) : 0, a->val);
	return 0;
}

/* A weight (or graph input) whose values the file holds: still trained (or
 * fed), never folded as a constant. */
static int trained(imp *m, const char *name)
{
	cJSON *d = pl__onnx_decl(m, pl__onnx_resolve(m, name));
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(d, "role"));
	return role && strcmp(role, "const");
}

/* The n values of a view of known values a (its rank; output shape dims):
 * output coordinate d walks input dimension src[d] from lo[d] by step[d]
 * (a Slice: src the identity; a Transpose: src the permutation, lo 0, step 1) */
static void view_values(const tinfo *a, const int64_t *dims, const int64_t *src, const int64_t *lo,
                        const int64_t *step, int64_t n, double *v)
{
	int64_t at[16] = {0};
	for (int64_t i = 0; i < n; i++) {
		int64_t in_at[16], k = 0, stride = 1;
		for (int d = 0; d < a->rank; d++)
			in_at[src[d]] = lo[d] + at[d] * step[d];
		for (int d = a->rank - 1; d >= 0; d--) {
			k += in_at[d] * stride;
			stride *= a->dims[d];
		}
		v[i] = a->val[k];
		for (int d = a->rank - 1; d >= 0 && ++at[d] == dims[d]; d--)
			at[d] = 0;
	}
}

/* Slice of known values a (ONNX's semantics: negative starts and ends
 * count from the end and are clamped, negative steps walk back; torch's pad
 * reverses its pads so): the output's values recorded. 0, or -1 when the
 * ranges are not constants */
static int fold_slice(imp *m, const Onnx__NodeProto *n, const tinfo *a)
{
	int64_t st[16], en[16], ax[16], sp[16], lo[16], step[16], dims[16];
	int ns = pl__onnx_ints_of(m, n, "starts", 1, st, 16),
	    ne = pl__onnx_ints_of(m, n, "ends", 2, en, 16);
	int na = pl__onnx_ints_of(m, n, "axes", 3, ax, 16),
	    nsp = pl__onnx_ints_of(m, n, "steps", 4, sp, 16);
	if (ns < 1 || ne != ns || (na && na != ns) || (nsp && nsp != ns) || a->rank > 16)
		return -1;
	for (int d = 0; d < a->rank; d++) {
		lo[d] = 0;
		step[d] = 1;
		dims[d] = a->dims[d];
	}
	for (int k = 0; k < ns; k++) {
		int64_t d = na ? pl__onnx_axis_of(ax[k], a->rank) : k, len, s = nsp ? sp[k] : 1, b,
		        e;
		if (d < 0 || d >= a->rank || s == 0)
			return -1;
		len = a->dims[d];
		b = st[k] < 0 ? st[k] + len : st[k];
		e = en[k] < 0 ? en[k] + len : en[k];
		if (s > 0) {
			b = b < 0 ? 0 : b > len ? len : b;
			e = e < 0 ? 0 : e > len ? len : e;
			dims[d] = e > b ? (e - b + s - 1) / s : 0;
		} else {
			b = b < 0 ? -1 : b > len - 1 ? len - 1 : b;
			e = e < -1 ? -1 : e > len - 1 ? len - 1 : e;
			dims[d] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
		}
		lo[d] = b;
		step[d] = s;
	}
	int64_t no = 1;
	for (int d = 0; d < a->rank; d++)
		no = pl__onnx_count_mul(no, dims[d]);
	if (!a->nval) { /* a constant's shape alone */
		pl__onnx_set_info(m, n->output[0], a->rank, dims, 0, NULL);
		return 0;
	}
	double *v = pl__onnx_scratch(m, no);
	if (!v)
		return -1;
	int64_t same[16] = {0};
	for (int d = 0; d < a->rank; d++)
		same[d] = d;
	view_values(a, dims, same, lo, step, no, v);
	pl__onnx_set_info(m, n->output[0], a->rank, dims, (int)no, v);
	return 0;
}

/* Expand node n of a: its output's dimensions (a broadcast with the shape
 * its input 1 holds) into dims, their count; -1 when not known */
static int expand_dims(imp *m, const Onnx__NodeProto *n, const tinfo *a, int64_t *dims)
{
	tinfo *sh = pl__onnx_valued(m, n->input[1]), e = {.known = 1};
	if (!sh || sh->rank != 1 || sh->nval > 16)
		return -1;
	e.rank = sh->nval;
	for (int d = 0; d < e.rank; d++)
		e.dims[d] = pl__onnx_to_i64(sh->val[d]);
	return pl__onnx_broadcast(a, &e, dims);
}

/* Split node n on a constant a: each output's shape, and its values where
 * a's are known and few. 0, or -1 (not folded). */
static int fold_split(imp *m, const Onnx__NodeProto *n, const tinfo *a)
{
	int64_t ax, sizes[16], at = 0;
	int k = pl__onnx_split_sizes(m, n, a, &ax, sizes);
	if (k < 0 || a->rank > 16)
		return -1;
	for (int j = 0; j < k; j++) {
		int64_t dims[16], lo[16], step[16], same[16], no = 1;
		for (int d = 0; d < a->rank; d++) {
			dims[d] = d == ax ? sizes[j] : a->dims[d];
			lo[d] = d == ax ? at : 0;
			step[d] = 1;
			same[d] = d;
			no = pl__onnx_count_mul(no, dims[d]);
		}
		at += sizes[j];
		double *v = a->nval ? pl__onnx_scratch(m, no) : NULL;
		if (a->nval && !v)
			return -1;
		if (a->nval)
			view_values(a, dims, same, lo, step, no, v);
		pl__onnx_set_info(m, n->output[j], a->rank, dims, a->nval ? (int)no : 0, v);
	}
	return 0;
}

/* Why constant o, an output of node n, has no values: too many (past
 * MAX_VALUES, or an input's were: over) or an input's are not in the file
 * (nodata); neither: the importer does not compute n's op on values */
static void why_not_valued(imp *m, const Onnx__NodeProto *n, tinfo *o)
{
	o->over = pl__onnx_elems(o) > MAX_VALUES || o->over;
	for (size_t k = 0; k < n->n_input; k++) {
		tinfo *x = n->input[k][0] ? pl__onnx_known(m, n->input[k]) : NULL;
		if (x && x->over)
			o->over = 1;
		if (x && x->nodata)
			o->nodata = 1;
	}
}

/* Output j of node n, folded, recorded as a constant (why it has no values,
 * when it has none); 0 when its shape is not known */
static int mark_constant(imp *m, const Onnx__NodeProto *n, size_t j)
{
	tinfo *o = pl__onnx_known(m, n->output[j]);
	if (!o)
		return 0;
	if (!o->nval)
		why_not_valued(m, n, o);
	o->cons = 1;
	return 1;
}

/* Node n on constants only, some of them with values not kept (a shifted
 * window's attention mask, built from zeros by slice assignments and
 * compared; an int64 index buffer reshaped): its output is a constant of
 * the shape ONNX gives it, values not kept (the planner needs none; the
 * executor fills consts itself). 1 folded, 0 not (not every input is a
 * constant, or an op the importer cannot shape). */
static int fold_constant(imp *m, const Onnx__NodeProto *n)
{
	static const char *const same[] = {
	    "Cast",  "Not",   "Neg",        "Identity",  "Sqrt",
	    "Floor", "Ceil",  "Abs",        "Exp",       "Log",
	    "Relu",  "Sign",  "Reciprocal", "ScatterND", "ScatterElements",
	    "Trilu", "Sin",   "Cos",        "Tan",       "Asin",
	    "Acos",  "Atan",  "Sinh",       "Cosh",      "Asinh",
	    "Acosh", "Atanh", "Round"};
	static const char *const bin[] = {"Add",
	                                  "Sub",
	                                  "Mul",
	                                  "Div",
	                                  "Pow",
	                                  "Mod",
	                                  "Equal",
	                                  "Less",
	                                  "Greater",
	                                  "LessOrEqual",
	                                  "GreaterOrEqual",
	                                  "And",
	                                  "Or",
	                                  "Xor",
	                                  "Max",
	                                  "Min"};
	const char *t = n->op_type;
	if (n->n_input < 1 || n->n_output < 1 || !n->output[0][0])
		return 0;
	for (size_t k = 0; k < n->n_input; k++)
		if (n->input[k][0] && !pl__onnx_constlike(m, n->input[k]))
			return 0;
	for (size_t k = 0; k < n->n_input; k++)
		if (n->input[k][0] && trained(m, n->input[k]))
			return 0;
	tinfo *a = pl__onnx_known(m, n->input[0]);
	int64_t dims[16];
	int r = -1;
	if (!a)
		return 0;
	for (size_t k = 0; k < sizeof same / sizeof *same && r < 0; k++)
		if (!strcmp(t, same[k])) {
			r = a->rank;
			memcpy(dims, a->dims, sizeof(int64_t) * (size_t)r);
		}
	for (size_t k = 0; k < sizeof bin / sizeof *bin && r < 0; k++)
		if (!strcmp(t, bin[k]) && n->n_input == 2 && pl__onnx_known(m, n->input[1]))
			r = pl__onnx_broadcast(a, pl__onnx_known(m, n->input[1]), dims);
	if (r < 0 && !strcmp(t, "Where") && n->n_input == 3 && pl__onnx_known(m, n->input[1]) &&
	    pl__onnx_known(m, n->input[2])) {
		tinfo xy = {.known = 1};
		xy.rank = pl__onnx_broadcast(pl__onnx_known(m, n->input[1]),
		                             pl__onnx_known(m, n->input[2]), xy.dims);
		r = xy.rank < 0 ? -1 : pl__onnx_broadcast(a, &xy, dims);
	}
	if (r < 0 && !strcmp(t, "ConstantOfShape") && a->nval > 0 && a->rank == 1 &&
	    a->nval <= 16) {
		r = a->nval;
		for (int d = 0; d < r; d++)
			if ((dims[d] = pl__onnx_to_i64(a->val[d])) < 0)
				return 0;
	}
	if (r < 0 && !strcmp(t, "Range") && n->n_input == 3) {
		tinfo *lo = pl__onnx_valued(m, n->input[0]), *hi = pl__onnx_valued(m, n->input[1]),
		      *st = pl__onnx_valued(m, n->input[2]);
		if (!lo || !hi || !st || lo->nval != 1 || hi->nval != 1 || st->nval != 1 ||
		    st->val[0] == 0)
			return 0;
		double k = ceil((hi->val[0] - lo->val[0]) / st->val[0]);
		r = 1;
		dims[0] = k > 0 ? pl__onnx_to_i64(k) : 0;
		double *v = pl__onnx_scratch(m, dims[0]);
		if (v) { /* the values themselves */
			for (int64_t i = 0; i < dims[0]; i++)
				v[i] = lo->val[0] + (double)i * st->val[0];
			pl__onnx_set_info(m, n->output[0], 1, dims, (int)dims[0], v);
			return 1;
		}
	}
	if (r < 0 && !strcmp(t, "Expand") && n->n_input == 2 &&
	    (r = expand_dims(m, n, a, dims)) < 0)
		return 0;
	if (r < 0 && !strcmp(t, "Concat")) {
		int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), a->rank);
		if (ax < 0 || ax >= a->rank)
			return 0;
		r = a->rank;
		memcpy(dims, a->dims, sizeof(int64_t) * (size_t)r);
		dims[ax] = 0;
		for (size_t k = 0; k < n->n_input; k++) {
			tinfo *x = pl__onnx_known(m, n->input[k]);
			if (!x || x->rank != r)
				return 0;
			if ((dims[ax] += x->dims[ax]) > BIG) /* a hostile file's many inputs */
				return 0;
		}
	}
	if (r >= 0) {
		pl__onnx_set_info(m, n->output[0], r, dims, 0, NULL);
	} else if (!strcmp(t, "Unsqueeze") || !strcmp(t, "Squeeze")) {
		if (pl__onnx_fold_unsqueeze(m, n, a))
			return 0;
	} else if (!strcmp(t, "Slice") && n->n_input >= 3) {
		if (fold_slice(m, n, a))
			return 0;
	} else if (!strcmp(t, "Split")) { /* every output a constant */
		if (fold_split(m, n, a))
			return 0;
		for (size_t j = 0; j < n->n_output; j++)
			if (!mark_constant(m, n, j))
				return 0;
		return 1;
	} else if ((!strcmp(t, "Reshape") || !strcmp(t, "Transpose")) && !pl__onnx_infer(m, n)) {
	} else {
		return 0;
	}
	return mark_constant(m, n, 0);
}

/* What a folder says of node n: FOLD_SEE, whether its output now has
 * values decides; FOLD_NOT, not folded; FOLD_DONE, folded. Each folds one
 * operator on known values (a the values of input 0; *el the output's
 * element type, where known), as onnx_ops[] emits them */
enum { FOLD_NOT = -1, FOLD_SEE = 0, FOLD_DONE = 1 };
typedef int (*onnx_fold)(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el);

/* A Constant: its value tensor, or (opset 12 on) value_float, value_int (a
 * scalar), value_floats, value_ints (a 1-D list), as onnxscript's exporters
 * and function bodies write them */
static int fold_const_node(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)a, (void)el;
	for (size_t k = 0; k < n->n_attribute; k++) {
		const Onnx__AttributeProto *at = n->attribute[k];
		const char *an = at->name ? at->name : "";
		/* value_float(s): float32; value_int(s): int64 */
		int over = 0, f = !strncmp(an, "value_f", 7);
		if (at->t && !strcmp(an, "value")) {
			pl__onnx_set_tensor(m, n->output[0], at->t, MAX_VALUES);
		} else if (!strcmp(an, "value_float") || !strcmp(an, "value_int")) {
			double v = f ? (double)at->f : (double)at->i;
			int64_t none[1] = {0};
			pl__onnx_set_info(m, n->output[0], 0, none, 1, &v);
		} else if (!strcmp(an, "value_floats") || !strcmp(an, "value_ints")) {
			int64_t cnt = (int64_t)(f ? at->n_floats : at->n_ints),
			        len = cnt <= MAX_VALUES ? cnt : 0;
			double *v = len > 0 ? pl__onnx_scratch(m, len) : NULL;
			if (!v)
				len = 0; /* too many to keep: known by its shape */
			for (int64_t i = 0; i < len; i++)
				v[i] = f ? (double)at->floats[i] : (double)at->ints[i];
			pl__onnx_set_info(m, n->output[0], 1, &cnt, len, v);
			over = cnt > 0 && !len;
		} else {
			continue;
		}
		tinfo *c = pl__onnx_known(m, n->output[0]);
		if (c) { /* its values kept, or too many to keep: a constant still */
			c->cons = 1;
			c->over |= over;
			if (strcmp(an, "value"))
				c->elem = f ? 1 : 7;
		}
	}
	return FOLD_DONE;
}

static int fold_shape(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	double *v = pl__onnx_scratch(m, 64);
	int64_t dims[1];
	if (!a)
		return FOLD_NOT;
	int64_t lo = pl__onnx_axis_of(pl__onnx_attr_i(n, "start", 0), a->rank),
	        hi = pl__onnx_axis_of(pl__onnx_attr_i(n, "end", a->rank), a->rank);
	lo = lo < 0 ? 0 : lo > a->rank ? a->rank : lo;
	hi = hi < lo ? lo : hi > a->rank ? a->rank : hi;
	for (int64_t d = lo; d < hi; d++)
		v[d - lo] = (double)a->dims[d];
	dims[0] = hi - lo;
	pl__onnx_set_info(m, n->output[0], 1, dims, (int)(hi - lo), v);
	return FOLD_DONE;
}

static double un_copy(double x)
{
	return x;
}
static double un_bool(double x)
{
	return x != 0;
}
static double un_neg(double x)
{
	return -x;
}
static double un_not(double x)
{
	return x == 0;
}
static double un_relu(double x)
{
	return x > 0 ? x : 0;
}
static double un_sign(double x)
{
	return (x > 0) - (x < 0);
}
static double un_reciprocal(double x)
{
	return 1 / x;
}
static double un_sigmoid(double x)
{
	return 1 / (1 + exp(-x));
}

static const struct {
	const char *type;
	double (*f)(double);
} unary_values[] = {
    {"Identity", un_copy}, {"Floor", floor},  {"Ceil", ceil},      {"Sqrt", sqrt},
    {"Neg", un_neg},       {"Not", un_not},   {"Abs", fabs},       {"Exp", exp},
    {"Log", log},          {"Relu", un_relu}, {"Sign", un_sign},   {"Reciprocal", un_reciprocal},
    {"Sin", sin},          {"Cos", cos},      {"Tanh", tanh},      {"Sigmoid", un_sigmoid},
    {"Erf", erf},          {"Tan", tan},      {"Asin", asin},      {"Acos", acos},
    {"Atan", atan},        {"Sinh", sinh},    {"Cosh", cosh},      {"Asinh", asinh},
    {"Acosh", acosh},      {"Atanh", atanh},  {"Round", nearbyint}};

/* f of each of a's values */
static int fold_map(imp *m, const Onnx__NodeProto *n, const tinfo *a, double (*f)(double))
{
	int64_t ne = pl__onnx_elems(a);
	double *v = pl__onnx_scratch(m, ne);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < ne; i++)
		v[i] = f(a->val[i]);
	pl__onnx_set_info(m, n->output[0], a->rank, a->dims, ne, v);
	return FOLD_SEE;
}

/* the element-wise functions of one input; Not's output is a bool */
static int fold_unary(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	size_t k = 0;
	while (strcmp(unary_values[k].type, n->op_type))
		k++;
	int st = fold_map(m, n, a, unary_values[k].f);
	if (st == FOLD_SEE && !strcmp(n->op_type, "Not"))
		*el = 9;
	return st;
}

/* to bool, to an integer, to a float */
/* what a cast to ONNX element type `to` does to a value: bool 0 or 1, an
 * integer truncated, a float kept */
static double (*cast_map(int64_t to))(double)
{
	return to == 9 ? un_bool : to != 1 && to != 10 && to != 11 && to != 16 ? trunc : un_copy;
}

static int fold_cast(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	int64_t to = pl__onnx_attr_i(n, "to", 1);
	int st = fold_map(m, n, a, cast_map(to));
	if (st == FOLD_SEE)
		*el = (int32_t)to;
	return st;
}

/* CastLike (opset 15): a Cast to its second input's element type, whose
 * values need not be known; folded when the first's are */
static int fold_castlike(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	int32_t to = n->n_input == 2 ? pl__onnx_elem_of(m, n->input[1]) : 0;
	if (!to || !a || !pl__onnx_valued(m, n->input[0]) || trained(m, n->input[0]))
		return FOLD_NOT;
	int st = fold_map(m, n, a, cast_map(to));
	tinfo *o = st == FOLD_SEE ? pl__onnx_valued(m, n->output[0]) : NULL;
	if (!o)
		return FOLD_NOT;
	o->cons = 1;
	o->elem = to;
	return FOLD_DONE;
}

/* Size: its input's element count, from its shape */
static int fold_size(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (!a)
		return FOLD_NOT;
	double v = (double)pl__onnx_elems(a);
	int64_t dims[1] = {1};
	pl__onnx_set_info(m, n->output[0], 0, dims, 1, &v);
	return FOLD_DONE;
}

/* EyeLike: ones on the diagonal k of its 2-D input's shape, zeros elsewhere,
 * a constant whatever the input's values */
static int fold_eyelike(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (!a || a->rank != 2)
		return FOLD_NOT;
	int64_t k = pl__onnx_attr_i(n, "k", 0), ne = pl__onnx_elems(a);
	double *v = pl__onnx_scratch(m, ne);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < ne; i++)
		v[i] = i % a->dims[1] - i / a->dims[1] == k;
	pl__onnx_set_info(m, n->output[0], 2, a->dims, ne, v);
	tinfo *o = pl__onnx_valued(m, n->output[0]);
	if (!o)
		return FOLD_NOT;
	o->cons = 1;
	o->elem = (int32_t)pl__onnx_attr_i(n, "dtype", a->elem ? a->elem : 1);
	return FOLD_DONE;
}

/* of a shape's entries (torch.std's count of the reduced elements) */
static int fold_reduce_entries(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (!(a->rank == 1 && (n->n_input < 2 || !n->input[1][0])))
		return FOLD_SEE;
	int keep = pl__onnx_attr_i(n, "keepdims", 1) != 0, prod = !strcmp(n->op_type, "ReduceProd");
	double r = prod;
	int64_t dims[1] = {1};
	for (int64_t i = 0; i < pl__onnx_elems(a); i++)
		r = prod ? r * a->val[i] : r + a->val[i];
	pl__onnx_set_info(m, n->output[0], keep, dims, 1, &r);
	return FOLD_SEE;
}

static double bin_add(double x, double y)
{
	return x + y;
}
static double bin_sub(double x, double y)
{
	return x - y;
}
static double bin_mul(double x, double y)
{
	return x * y;
}
static double bin_div(double x, double y)
{
	return y != 0 ? x / y : 0;
}
static double bin_int_div(double x, double y) /* of integers */
{
	double v = y != 0 ? x / y : 0;
	return x == trunc(x) && y == trunc(y) ? trunc(v) : v;
}
static double bin_equal(double x, double y)
{
	return x == y;
}
static double bin_mod(double x, double y) /* Mod (fmod 0): the divisor's sign */
{
	return y != 0 ? x - y * floor(x / y) : 0;
}
static double bin_less(double x, double y)
{
	return x < y;
}
static double bin_greater(double x, double y)
{
	return x > y;
}
static double bin_less_eq(double x, double y)
{
	return x <= y;
}
static double bin_greater_eq(double x, double y)
{
	return x >= y;
}
static double bin_and(double x, double y)
{
	return x != 0 && y != 0;
}
static double bin_or(double x, double y)
{
	return x != 0 || y != 0;
}
static double bin_xor(double x, double y)
{
	return (x != 0) != (y != 0);
}
static double bin_max(double x, double y)
{
	return x > y ? x : y;
}
static double bin_min(double x, double y)
{
	return x < y ? x : y;
}

/* the element-wise functions of two inputs, broadcast; logic's is a bool */
static const struct {
	const char *type;
	double (*f)(double, double);
	int logic;
} binary_values[] = {{"Add", bin_add, 0},
                     {"Sub", bin_sub, 0},
                     {"Mul", bin_mul, 0},
                     {"Div", bin_div, 0},
                     {"Equal", bin_equal, 1},
                     {"Pow", pow, 0},
                     {"Mod", bin_mod, 0},
                     {"Less", bin_less, 1},
                     {"Greater", bin_greater, 1},
                     {"LessOrEqual", bin_less_eq, 1},
                     {"GreaterOrEqual", bin_greater_eq, 1},
                     {"And", bin_and, 1},
                     {"Or", bin_or, 1},
                     {"Xor", bin_xor, 1},
                     {"Max", bin_max, 0},
                     {"Min", bin_min, 0}};

static int fold_binary(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	if (n->n_input != 2)
		return FOLD_SEE;
	size_t k = 0;
	while (strcmp(binary_values[k].type, n->op_type))
		k++;
	tinfo *b = pl__onnx_valued(m, n->input[1]);
	if (!b) /* an input left out ("") */
		return FOLD_NOT;
	int64_t dims[16];
	int r = pl__onnx_broadcast(a, b, dims);
	int64_t no = 1;
	for (int d = 0; d < r && no <= MAX_VALUES; d++)
		no = pl__onnx_count_mul(no, dims[d]);
	double *v;
	if (r < 0 || !(v = pl__onnx_scratch(m, no)))
		return FOLD_NOT;
	/* a division of integers is one (neither operand known to be a float) */
	int fl = a->elem == 1 || a->elem == 10 || a->elem == 11 || a->elem == 16 || b->elem == 1 ||
	         b->elem == 10 || b->elem == 11 || b->elem == 16;
	double (*f)(double, double) =
	    binary_values[k].f == bin_div && !fl ? bin_int_div : binary_values[k].f;
	for (int64_t i = 0; i < no; i++)
		v[i] = f(pl__onnx_bval(a, dims, r, i), pl__onnx_bval(b, dims, r, i));
	pl__onnx_set_info(m, n->output[0], r, dims, no, v);
	*el = binary_values[k].logic ? 9 : *el ? *el : b->elem;
	return FOLD_SEE;
}

/* along any axis */
static int fold_gather(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (n->n_input != 2)
		return FOLD_SEE;
	tinfo *ix = pl__onnx_valued(m, n->input[1]);
	int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), a->rank), pre = 1, post = 1,
	        no, dims[16];
	if (!ix || ax < 0 || ax >= a->rank || a->rank + ix->rank > 17)
		return FOLD_NOT;
	int r = 0;
	if (pl__onnx_elems(a) == 0 || ix->nval == 0) /* nothing to gather: not folded */
		return FOLD_NOT;
	for (int d = 0; d < a->rank; d++) {
		if (d < ax)
			pre *= a->dims[d]; /* within a's elements, at most MAX_VALUES */
		if (d > ax)
			post *= a->dims[d];
		if (d != ax)
			dims[r++] = a->dims[d];
		else
			for (int e = 0; e < ix->rank; e++)
				dims[r++] = ix->dims[e];
	}
	no = pre * (int64_t)ix->nval * post;
	double *v = pl__onnx_scratch(m, no);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < ix->nval; i++) {
		int64_t j = pl__onnx_axis_of(pl__onnx_to_i64(ix->val[i]), (int)a->dims[ax]);
		if (j < 0 || j >= a->dims[ax])
			return FOLD_NOT;
		for (int64_t p = 0; p < pre; p++)
			for (int64_t q = 0; q < post; q++)
				v[(p * ix->nval + i) * post + q] =
				    a->val[(p * a->dims[ax] + j) * post + q];
	}
	pl__onnx_set_info(m, n->output[0], r, dims, no, v);
	return FOLD_SEE;
}

static int fold_unsqueeze_values(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	return pl__onnx_fold_unsqueeze(m, n, a) ? FOLD_NOT : FOLD_SEE;
}

/* along any axis */
static int fold_concat(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), a->rank), pre = 1, post = 1,
	        at = 0, dims[16];
	if (ax < 0 || ax >= a->rank)
		return FOLD_NOT;
	memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
	dims[ax] = 0;
	for (size_t k = 0; k < n->n_input; k++) {
		tinfo *x = pl__onnx_valued(m, n->input[k]);
		if (!x || x->rank != a->rank)
			return FOLD_NOT;
		for (int d = 0; d < a->rank; d++)
			if (d != ax && x->dims[d] != a->dims[d])
				return FOLD_NOT;
		if ((dims[ax] += x->dims[ax]) > BIG) /* a hostile file's many inputs */
			return FOLD_NOT;
	}
	int64_t no = 1;
	for (int d = 0; d < a->rank; d++)
		if (__builtin_mul_overflow(pre, d < ax ? a->dims[d] : 1, &pre) ||
		    __builtin_mul_overflow(post, d > ax ? a->dims[d] : 1, &post))
			return FOLD_NOT;
	double *v;
	if (dims[ax] > BIG || __builtin_mul_overflow(pre, dims[ax], &no) ||
	    __builtin_mul_overflow(no, post, &no) || !(v = pl__onnx_scratch(m, no)))
		return FOLD_NOT;
	for (size_t k = 0; k < n->n_input; k++) {
		tinfo *x = pl__onnx_valued(m, n->input[k]);
		for (int64_t p = 0; p < pre; p++)
			for (int64_t i = 0; i < x->dims[ax] * post; i++)
				v[(p * dims[ax] + at) * post + i] =
				    x->val[p * x->dims[ax] * post + i];
		at += x->dims[ax];
	}
	pl__onnx_set_info(m, n->output[0], a->rank, dims, no, v);
	return FOLD_SEE;
}

/* cond ? x : y, broadcast */
static int fold_where(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	if (n->n_input != 3)
		return FOLD_SEE;
	tinfo *x = pl__onnx_valued(m, n->input[1]), *y = pl__onnx_valued(m, n->input[2]), xy;
	int64_t d2[16], dims[16];
	int r = x && y ? pl__onnx_broadcast(x, y, d2) : -1;
	if (r < 0)
		return FOLD_NOT;
	xy.rank = r;
	memcpy(xy.dims, d2, sizeof(int64_t) * (size_t)r);
	if ((r = pl__onnx_broadcast(a, &xy, dims)) < 0)
		return FOLD_NOT;
	int64_t no = 1;
	for (int d = 0; d < r && no <= MAX_VALUES; d++)
		no = pl__onnx_count_mul(no, dims[d]);
	double *v = pl__onnx_scratch(m, no);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < no; i++)
		v[i] = pl__onnx_bval(a, dims, r, i) != 0 ? pl__onnx_bval(x, dims, r, i)
		                                         : pl__onnx_bval(y, dims, r, i);
	pl__onnx_set_info(m, n->output[0], r, dims, no, v);
	*el = x->elem ? x->elem : y->elem;
	return FOLD_SEE;
}

/* the triangle of the last two axes */
static int fold_trilu(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (a->rank < 2)
		return FOLD_SEE;
	int64_t up = pl__onnx_attr_i(n, "upper", 1), kk = 0, rows = a->dims[a->rank - 2],
	        cols = a->dims[a->rank - 1], ne = pl__onnx_elems(a);
	tinfo *kt = n->n_input > 1 && n->input[1][0] ? pl__onnx_valued(m, n->input[1]) : NULL;
	if (n->n_input > 1 && n->input[1][0] && (!kt || kt->nval != 1))
		return FOLD_NOT;
	if (kt)
		kk = pl__onnx_to_i64(kt->val[0]);
	double *v = pl__onnx_scratch(m, ne);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < ne; i++) {
		int64_t c = i % cols, rw = (i / cols) % rows;
		v[i] = (up ? c - rw >= kk : c - rw <= kk) ? a->val[i] : 0;
	}
	pl__onnx_set_info(m, n->output[0], a->rank, a->dims, ne, v);
	return FOLD_SEE;
}

/* data a with the slices the index tuples name replaced by updates */
static int fold_scatter_nd(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (!(n->n_input == 3 && !pl__onnx_attr(n, "reduction")))
		return FOLD_SEE;
	tinfo *ix = pl__onnx_valued(m, n->input[1]), *up = pl__onnx_valued(m, n->input[2]);
	int64_t q = ix && ix->rank > 0 ? ix->dims[ix->rank - 1] : -1, slice = 1,
	        ne = pl__onnx_elems(a);
	double *v;
	if (q < 1 || q > a->rank || !up || ne < 1 || !(v = pl__onnx_scratch(m, ne)))
		return FOLD_NOT;
	for (int d = (int)q; d < a->rank; d++)
		slice *= a->dims[d];
	int64_t tuples = ix->nval / q;
	if (up->nval != tuples * slice)
		return FOLD_NOT;
	memcpy(v, a->val, sizeof(double) * (size_t)ne);
	for (int64_t j = 0; j < tuples; j++) {
		int64_t at = 0;
		for (int d = 0; d < q; d++) {
			int64_t c =
			    pl__onnx_axis_of(pl__onnx_to_i64(ix->val[j * q + d]), (int)a->dims[d]);
			if (c < 0 || c >= a->dims[d])
				return FOLD_NOT;
			at = at * a->dims[d] + c;
		}
		memcpy(v + at * slice, up->val + j * slice, sizeof(double) * (size_t)slice);
	}
	pl__onnx_set_info(m, n->output[0], a->rank, a->dims, ne, v);
	return FOLD_SEE;
}

/* values kept, shape changed */
static int fold_reshape(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (n->n_input != 2)
		return FOLD_SEE;
	if (pl__onnx_infer(m, n))
		return FOLD_NOT;
	tinfo *o = pl__onnx_known(m, n->output[0]);
	if (!o || pl__onnx_elems(o) != pl__onnx_elems(a))
		return FOLD_NOT;
	pl__onnx_set_info(m, n->output[0], o->rank, o->dims, pl__onnx_elems(a), a->val);
	return FOLD_SEE;
}

/* any steps */
static int fold_slice_values(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	return n->n_input >= 3 && fold_slice(m, n, a) ? FOLD_NOT : FOLD_SEE;
}

static int fold_split_values(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	return fold_split(m, n, a) == 0 ? FOLD_DONE : FOLD_NOT;
}

/* values broadcast to a shape */
static int fold_expand(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	if (n->n_input != 2)
		return FOLD_SEE;
	int64_t dims[16];
	int r = expand_dims(m, n, a, dims);
	int64_t no = 1;
	for (int d = 0; d < r && no <= MAX_VALUES; d++)
		no = pl__onnx_count_mul(no, dims[d]);
	double *v;
	if (r < 0 || !(v = pl__onnx_scratch(m, no)))
		return FOLD_NOT;
	for (int64_t i = 0; i < no; i++)
		v[i] = pl__onnx_bval(a, dims, r, i);
	pl__onnx_set_info(m, n->output[0], r, dims, no, v);
	return FOLD_SEE;
}

static int fold_transpose(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	(void)el;
	int64_t perm[16], dims[16], ne = pl__onnx_elems(a);
	int np = pl__onnx_ints_of(m, n, "perm", 99, perm, 16);
	if (a->rank > 16 || (np && np != a->rank))
		return FOLD_NOT;
	for (int d = 0; d < a->rank; d++) {
		if (!np)
			perm[d] = a->rank - 1 - d;
		if (perm[d] < 0 || perm[d] >= a->rank)
			return FOLD_NOT;
		dims[d] = a->dims[perm[d]];
	}
	int64_t zero[16] = {0}, one[16];
	for (int d = 0; d < a->rank; d++)
		one[d] = 1;
	double *v = pl__onnx_scratch(m, ne);
	if (!v)
		return FOLD_NOT;
	view_values(a, dims, perm, zero, one, ne, v);
	pl__onnx_set_info(m, n->output[0], a->rank, dims, ne, v);
	return FOLD_SEE;
}

static int fold_constant_of_shape(imp *m, const Onnx__NodeProto *n, tinfo *a, int32_t *el)
{
	double fill = 0, one[1];
	int64_t dims[16];
	const Onnx__AttributeProto *va = pl__onnx_attr(n, "value");
	if (va && va->t && pl__onnx_tensor_values(va->t, one, 1) == 1)
		fill = one[0];
	*el = va && va->t ? va->t->data_type : 1;
	int64_t no = 1;
	if (a->rank != 1 || a->nval > 16)
		return FOLD_NOT;
	for (int i = 0; i < a->nval; i++) {
		dims[i] = pl__onnx_to_i64(a->val[i]);
		if (dims[i] < 0 || dims[i] > MAX_VALUES || (no *= dims[i]) > MAX_VALUES)
			return FOLD_NOT;
	}
	double *v = pl__onnx_scratch(m, no);
	if (!v)
		return FOLD_NOT;
	for (int64_t i = 0; i < no; i++)
		v[i] = fill;
	pl__onnx_set_info(m, n->output[0], a->nval, dims, no, v);
	return FOLD_SEE;
}

/* The operators folded on known values; any, before the checks of its
 * inputs' values (Constant, Shape: a shape is known without them) */
static const struct {
	const char *type;
	onnx_fold fold;
	int any;
} onnx_folds[] = {
    {"Constant", fold_const_node, 1},
    {"Shape", fold_shape, 1},
    {"Size", fold_size, 1},
    {"EyeLike", fold_eyelike, 1},
    {"CastLike", fold_castlike, 1},
    {"Cast", fold_cast, 0},
    {"Identity", fold_unary, 0},
    {"Floor", fold_unary, 0},
    {"Ceil", fold_unary, 0},
    {"Sqrt", fold_unary, 0},
    {"Neg", fold_unary, 0},
    {"Not", fold_unary, 0},
    {"Abs", fold_unary, 0},
    {"Exp", fold_unary, 0},
    {"Log", fold_unary, 0},
    {"Relu", fold_unary, 0},
    {"Sign", fold_unary, 0},
    {"Reciprocal", fold_unary, 0},
    {"Sin", fold_unary, 0},
    {"Cos", fold_unary, 0},
    {"Tanh", fold_unary, 0},
    {"Sigmoid", fold_unary, 0},
    {"Erf", fold_unary, 0},
    {"Tan", fold_unary, 0},
    {"Asin", fold_unary, 0},
    {"Acos", fold_unary, 0},
    {"Atan", fold_unary, 0},
    {"Sinh", fold_unary, 0},
    {"Cosh", fold_unary, 0},
    {"Asinh", fold_unary, 0},
    {"Acosh", fold_unary, 0},
    {"Atanh", fold_unary, 0},
    {"Round", fold_unary, 0},
    {"ReduceProd", fold_reduce_entries, 0},
    {"ReduceSum", fold_reduce_entries, 0},
    {"Add", fold_binary, 0},
    {"Sub", fold_binary, 0},
    {"Mul", fold_binary, 0},
    {"Div", fold_binary, 0},
    {"Equal", fold_binary, 0},
    {"Pow", fold_binary, 0},
    {"Mod", fold_binary, 0},
    {"Less", fold_binary, 0},
    {"Greater", fold_binary, 0},
    {"LessOrEqual", fold_binary, 0},
    {"GreaterOrEqual", fold_binary, 0},
    {"And", fold_binary, 0},
    {"Or", fold_binary, 0},
    {"Xor", fold_binary, 0},
    {"Max", fold_binary, 0},
    {"Min", fold_binary, 0},
    {"Gather", fold_gather, 0},
    {"Unsqueeze", fold_unsqueeze_values, 0},
    {"Squeeze", fold_unsqueeze_values, 0},
    {"Concat", fold_concat, 0},
    {"Where", fold_where, 0},
    {"Trilu", fold_trilu, 0},
    {"ScatterND", fold_scatter_nd, 0},
    {"Reshape", fold_reshape, 0},
    {"Slice", fold_slice_values, 0},
    {"Split", fold_split_values, 0},
    {"Expand", fold_expand, 0},
    {"Transpose", fold_transpose, 0},
    {"ConstantOfShape", fold_constant_of_shape, 0},
};

/* Folds node n when it computes on known values only (a shape computation):
 * records its output's shape and values, emits nothing. 1 folded, 0 not:
 * the folder of its operator (onnx_folds) once its inputs' values are
 * known, none trained */
static int fold_values(imp *m, const Onnx__NodeProto *n)
{
	tinfo *a = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL;
	if (!pl__onnx_scratch(m, 64))
		return 0;
	onnx_fold f = NULL;
	int any = 0;
	for (size_t k = 0; k < sizeof onnx_folds / sizeof *onnx_folds; k++)
		if (!strcmp(onnx_folds[k].type, n->op_type)) {
			f = onnx_folds[k].fold;
			any = onnx_folds[k].any;
		}
	int32_t el = 0;
	if (any)
		return f(m, n, a, &el) == FOLD_DONE;
	for (size_t k = 0; k < n->n_input; k++) /* every input's values known, none trained */
		if (n->input[k][0] && (!pl__onnx_valued(m, n->input[k]) || trained(m, n->input[k])))
			return 0;
	if (!a || n->n_input < 1)
		return 0;
	el = a->elem; /* the output's element type, where known */
	int st = f ? f(m, n, a, &el) : FOLD_SEE;
	if (st != FOLD_SEE)
		return st == FOLD_DONE;
	tinfo *o = pl__onnx_valued(m, n->output[0]);
	if (!o) /* not an op folded here */
		return 0;
	o->cons = 1;
	o->elem = el;
	return 1;
}

/* Folds node n when it computes on constants only: their values when they
 * are known and few, else a constant of known shape (fold_constant). */
int pl__onnx_fold(imp *m, const Onnx__NodeProto *n)
{
	return fold_values(m, n) || fold_constant(m, n);
}

/* ONNX's output shape of an op the importer emits (node n): 0, or -1 when
 * it cannot tell (a later Shape of it is then refused) */
int pl__onnx_infer(imp *m, const Onnx__NodeProto *n)
{
	const char *t = n->op_type;
	tinfo *a = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL,
	      *b = n->n_input > 1 ? pl__onnx_known(m, n->input[1]) : NULL;
	int64_t dims[16];
	int r = -1;
	if (!a)
		return -1;
	if (!strcmp(t, "MatMul") && b && a->rank >= 2 && b->rank >= 2) {
		tinfo ba = *a, bb = *b; /* the batch dimensions broadcast */
		ba.rank -= 2;
		bb.rank -= 2;
		r = pl__onnx_broadcast(&ba, &bb, dims);
		if (r < 0 || r + 2 > 16)
			return -1;
		dims[r] = a->dims[a->rank - 2];
		dims[r + 1] = b->dims[b->rank - 1];
		r += 2;
	} else if (!strcmp(t, "Gemm") && b && a->rank == 2 && b->rank == 2) {
		dims[0] = a->dims[0];
		dims[1] = pl__onnx_attr_i(n, "transB", 0) ? b->dims[0] : b->dims[1];
		r = 2;
	} else if ((!strcmp(t, "Add") || !strcmp(t, "Sub") || !strcmp(t, "Mul") ||
	            !strcmp(t, "Div") || !strcmp(t, "Pow") || !strcmp(t, "Max") ||
	            !strcmp(t, "Min") || !strcmp(t, "Equal") || !strcmp(t, "Less") ||
	            !strcmp(t, "Greater") || !strcmp(t, "GreaterOrEqual") ||
	            !strcmp(t, "LessOrEqual") || !strcmp(t, "PRelu") || !strcmp(t, "Or") ||
	            !strcmp(t, "And") || !strcmp(t, "Xor")) &&
	           b) {
		r = pl__onnx_broadcast(a, b, dims);
	} else if (!strcmp(t, "Where") && b && n->n_input == 3 && pl__onnx_known(m, n->input[2])) {
		tinfo xy = {.known = 1};
		xy.rank = pl__onnx_broadcast(b, pl__onnx_known(m, n->input[2]), xy.dims);
		r = xy.rank < 0 ? -1 : pl__onnx_broadcast(a, &xy, dims);
	} else if (!strcmp(t, "Transpose")) {
		int64_t perm[16];
		int np = pl__onnx_ints_of(m, n, "perm", 99, perm, 16);
		for (int d = 0; d < a->rank; d++) {
			int64_t from =
			    np == a->rank ? pl__onnx_axis_of(perm[d], a->rank) : a->rank - 1 - d;
			if (from < 0 || from >= a->rank)
				return -1; /* not a permutation: the model reader says so */
			dims[d] = a->dims[from];
		}
		r = a->rank;
	} else if (!strcmp(t, "Gather") && b) {
		int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), a->rank);
		r = 0;
		for (int d = 0; d < a->rank; d++)
			if (d == ax)
				for (int e = 0; e < b->rank && r < 16; e++)
					dims[r++] = b->dims[e];
			else if (r < 16)
				dims[r++] = a->dims[d];
	} else if (!strcmp(t, "ReduceMean") || !strcmp(t, "ReduceSum") || !strcmp(t, "ReduceL2") ||
	           !strcmp(t, "ReduceL1") || !strcmp(t, "ReduceSumSquare") ||
	           !strcmp(t, "ReduceMax") || !strcmp(t, "ReduceMin") || !strcmp(t, "ReduceProd") ||
	           !strcmp(t, "ReduceLogSumExp")) {
		int64_t ax[16];
		int na = pl__onnx_ints_of(m, n, "axes", 1, ax, 16),
		    keep = (int)pl__onnx_attr_i(n, "keepdims", 1);
		r = 0;
		for (int d = 0; d < a->rank; d++) {
			int red = na <= 0;
			for (int k = 0; k < na; k++)
				red |= pl__onnx_axis_of(ax[k], a->rank) == d;
			if (!red)
				dims[r++] = a->dims[d];
			else if (keep)
				dims[r++] = 1;
		}
	} else if (!strcmp(t, "Reshape") && b && b->nval && b->nval <= 16) {
		int64_t prod = pl__onnx_elems(a), rest = 1;
		int neg = -1;
		r = b->nval;
		for (int d = 0; d < r; d++) {
			int64_t x = pl__onnx_to_i64(b->val[d]);
			dims[d] = x == 0 && !pl__onnx_attr_i(n, "allowzero", 0) && d < a->rank
			              ? a->dims[d]
			              : x;
			if (dims[d] == -1)
				neg = d;
			else if (__builtin_mul_overflow(rest, dims[d], &rest) || rest > BIG)
				return -1;
		}
		if (neg >= 0)
			dims[neg] = rest > 0 ? prod / rest : 0;
	} else { /* element-wise and normalisations: the first input's shape */
		r = a->rank;
		memcpy(dims, a->dims, sizeof(int64_t) * (size_t)r);
	}
	if (r < 0)
		return -1;
	pl__onnx_set_info(m, n->output[0], r, dims, 0, NULL);
	return 0;
}

const Onnx__NodeProto *pl__onnx_constant_node(const imp *m, const char *name)
{
	for (size_t i = 0; i < m->g->n_node; i++) {
		const Onnx__NodeProto *n = m->g->node[i];
		if (n->op_type && !strcmp(n->op_type, "Constant") && n->n_output == 1 &&
		    !strcmp(n->output[0], name))
			return n;
	}
	return NULL;
}
