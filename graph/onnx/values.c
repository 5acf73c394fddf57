/* The ONNX importer (graph/onnx/): what the importer knows of each tensor: its shape and, for
 * constants, its values (the name table, initializers' values, broadcasting, attribute lists). */
#include "graph/onnx/internal.h"

/* what a dropped node's output stands for (at most one step per alias: a
 * node that names its input as its output cannot loop) */
const char *pl__onnx_resolve(const imp *m, const char *name)
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

/* ---- shapes and folded values ---- */

static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* the entry of name (created empty when add, holding a copy of the name:
 * an emitted op's output name is freed when pl__onnx_drop_unread drops the
 * op), or NULL */
static tinfo *info_at(imp *m, const char *name, int add)
{
	if (!name || !m->info)
		return NULL;
	name = pl__onnx_resolve(m, name);
	for (size_t i = name_hash(name) & (m->ninfo - 1), k = 0; k < m->ninfo;
	     i = (i + 1) & (m->ninfo - 1), k++) {
		if (!m->info[i].name) {
			if (!add || !(m->info[i].name = strdup(name)))
				return NULL;
			return &m->info[i];
		}
		if (!strcmp(m->info[i].name, name))
			return &m->info[i];
	}
	return NULL;
}

tinfo *pl__onnx_known(imp *m, const char *name)
{
	tinfo *t = info_at(m, name, 0);
	return t && t->known ? t : NULL;
}

/* its values known: kept, or none to keep (an empty slice of a shape) */
tinfo *pl__onnx_valued(imp *m, const char *name)
{
	tinfo *t = pl__onnx_known(m, name);
	return t && (t->nval > 0 || (t->rank > 0 && pl__onnx_elems(t) == 0)) ? t : NULL;
}

/* a constant: its values known, or computed from constants only */
tinfo *pl__onnx_constlike(imp *m, const char *name)
{
	tinfo *t = pl__onnx_known(m, name);
	return t && (t->nval > 0 || t->cons) ? t : NULL;
}

/* n * k of sizes, saturated past MAX_VALUES (never a 64-bit overflow:
 * scratch refuses it, nothing is folded) */
int64_t pl__onnx_count_mul(int64_t n, int64_t k)
{
	int64_t r;
	return pl_size_mul(n, k, &r) || r > INT64_C(1) << 62 ? INT64_C(1) << 62 : r;
}

int64_t pl__onnx_to_i64(double x)
{
	return x != x ? 0 : x > (double)BIG ? BIG : x < -(double)BIG ? -BIG : (int64_t)x;
}

int64_t pl__onnx_elems(const tinfo *t)
{
	int64_t n = 1;
	for (int d = 0; d < t->rank; d++)
		if (__builtin_mul_overflow(n, t->dims[d], &n) || n > BIG)
			return BIG;
	return n;
}

/* room for n values being computed (the importer's scratch, reused by the
 * next call), or NULL when n is past MAX_VALUES or memory is short */
double *pl__onnx_scratch(imp *m, int64_t n)
{
	if (n < 0 || n > MAX_VALUES)
		return NULL;
	if (n > m->nscratch) {
		double *s = realloc(m->scratch, sizeof(double) * (size_t)(n < 64 ? 64 : n));
		if (!s)
			return NULL;
		m->scratch = s;
		m->nscratch = n < 64 ? 64 : n;
	}
	return m->scratch;
}

/* records name's shape (and values, nval of them: 0 for none; a copy is
 * kept, within MAX_VALUES and MAX_HELD, else the tensor is marked over) */
void pl__onnx_set_info(imp *m, const char *name, int rank, const int64_t *dims, int64_t nval,
                       const double *val)
{
	tinfo *t = info_at(m, name, 1);
	if (!t || rank < 0 || rank > 16)
		return;
	t->known = 1;
	t->rank = rank;
	for (int d = 0; d < rank; d++)
		t->dims[d] = dims[d] < 0 ? 0 : dims[d] > BIG ? BIG : dims[d];
	double *keep = NULL;
	t->over = 0;
	if (nval > MAX_VALUES || (nval > 0 && m->held + nval > MAX_HELD))
		t->over = 1;
	else if (nval > 0 && (keep = malloc(sizeof(double) * (size_t)nval)))
		memcpy(keep, val, sizeof(double) * (size_t)nval);
	else if (nval > 0)
		t->over = 1; /* out of memory: refused as too large */
	m->held -= t->nval;
	free(t->val);
	t->val = keep;
	t->nval = keep ? (int)nval : 0;
	m->held += t->nval;
}

/* A float initializer's data as the file holds them: the element size (4
 * float, 8 double, 2 float16 or bfloat16), *d the bytes (raw_data, or
 * float_data's), *n the elements; 0 without data */
size_t pl__onnx_elem_data(const Onnx__TensorProto *t, const unsigned char **d, size_t *n)
{
	if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t->n_float_data) {
		*d = (const unsigned char *)t->float_data;
		*n = t->n_float_data;
		return sizeof(float);
	}
	size_t size = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE  ? 8
	              : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? 4
	              : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
	                      t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16
	                  ? 2
	                  : 0;
	if (!size || !t->has_raw_data || !t->raw_data.len || t->raw_data.len % size)
		return 0;
	*d = t->raw_data.data;
	*n = t->raw_data.len / size;
	return size;
}

/* Whether float initializer t holds two or more elements, all one value (a
 * fresh model's zero biases and unit scales, a zero-initialised layer):
 * compared bytewise; no data (stripped, external) is not */
int pl__onnx_one_fill(const Onnx__TensorProto *t)
{
	const unsigned char *d;
	size_t n, size = t ? pl__onnx_elem_data(t, &d, &n) : 0;
	if (!size || n < 2)
		return 0;
	for (size_t i = 1; i < n; i++)
		if (memcmp(d + i * size, d, size))
			return 0;
	return 1;
}

/* a TensorProto's values (at most max of them, numeric) into v (room for
 * max): their count, or 0 */
int pl__onnx_tensor_values(const Onnx__TensorProto *t, double *v, int64_t max)
{
	int64_t n = 1;
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] < 0 || t->dims[d] > max || (n *= t->dims[d]) > max)
			return 0;
	if (n < 1 || !v)
		return 0;
	size_t k = (size_t)n;
#define TAKE(arr, cnt)                                                                             \
	if (t->cnt == k) {                                                                         \
		for (size_t i = 0; i < k; i++)                                                     \
			v[i] = (double)t->arr[i];                                                  \
		return (int)k;                                                                     \
	}
	TAKE(int64_data, n_int64_data)
	TAKE(int32_data, n_int32_data)
	TAKE(float_data, n_float_data)
	TAKE(double_data, n_double_data)
#undef TAKE
	if (!t->has_raw_data)
		return 0;
	/* little-endian elements of one size each, as many as the dims say */
	const unsigned char *r = t->raw_data.data;
	size_t size = 0;
	switch (t->data_type) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
	case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: size = 8; break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: size = 4; break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: size = 1; break;
	default: return 0;
	}
	if (t->raw_data.len != size * k)
		return 0;
	for (size_t i = 0; i < k; i++) {
		const unsigned char *at = r + size * i;
		int64_t i64;
		int32_t i32;
		float f;
		switch (t->data_type) {
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
			memcpy(&i64, at, 8);
			v[i] = (double)i64;
			break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
			memcpy(&i32, at, 4);
			v[i] = i32;
			break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
			memcpy(&f, at, 4);
			v[i] = f;
			break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: memcpy(&v[i], at, 8); break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: v[i] = (signed char)*at; break;
		default: v[i] = *at; break; /* bool, uint8 */
		}
	}
	return (int)k;
}

/* records a TensorProto's shape and values (at most max of them) under
 * name: those it does not hold are marked nodata, too many over */
void pl__onnx_set_tensor(imp *m, const char *name, const Onnx__TensorProto *t, int64_t max)
{
	if (t->n_dims > 16)
		return;
	int64_t dims[16], n = 1;
	for (size_t d = 0; d < t->n_dims; d++) {
		dims[d] = t->dims[d];
		if (dims[d] < 0 || __builtin_mul_overflow(n, dims[d], &n) || n > BIG)
			n = BIG;
	}
	double *v = pl__onnx_scratch(m, n <= max ? n : 0);
	int nv = n <= max ? pl__onnx_tensor_values(t, v, max) : 0;
	pl__onnx_set_info(m, name, (int)t->n_dims, dims, nv, v);
	tinfo *k = pl__onnx_known(m, name);
	if (k) {
		k->elem = t->data_type;
		if (n > 0 && !k->nval && !k->over) {
			if (n > MAX_VALUES)
				k->over = 1;
			else if (max == MAX_VALUES) /* every value asked for: none held */
				k->nodata = 1;
		}
	}
}

/* numpy broadcasting of a and b into out; -1 when they do not broadcast */
int pl__onnx_broadcast(const tinfo *a, const tinfo *b, int64_t *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	for (int d = 0; d < r; d++) {
		int da = d - (r - a->rank), db = d - (r - b->rank);
		int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
		if (x != y && x != 1 && y != 1)
			return -1;
		out[d] = x == 1 ? y : x;
	}
	return r;
}

/* the element of t (a broadcast operand of rank r) at index i of out */
double pl__onnx_bval(const tinfo *t, const int64_t *out, int r, int64_t i)
{
	int64_t at = 0, stride = 1;
	for (int d = r - 1; d >= 0; d--) {
		int64_t c = i % out[d];
		i /= out[d];
		int dt = d - (r - t->rank);
		if (dt >= 0) {
			at += (t->dims[dt] == 1 ? 0 : c) * stride;
			stride *= t->dims[dt];
		}
	}
	return t->val[at];
}

int64_t pl__onnx_axis_of(int64_t a, int rank)
{
	return a < 0 ? a + rank : a;
}

/* the int list of an attribute or (opsets that moved it) of input k */
int pl__onnx_ints_of(imp *m, const Onnx__NodeProto *n, const char *at, size_t k, int64_t *v,
                     int max)
{
	const Onnx__AttributeProto *a = pl__onnx_attr(n, at);
	if (a && a->n_ints) {
		if (a->n_ints > (size_t)max)
			return -1;
		for (size_t i = 0; i < a->n_ints; i++)
			v[i] = a->ints[i];
		return (int)a->n_ints;
	}
	tinfo *t = k < n->n_input && n->input[k][0] ? pl__onnx_valued(m, n->input[k]) : NULL;
	if (!t || t->nval > max)
		return t ? -1 : 0;
	for (int i = 0; i < t->nval; i++)
		v[i] = pl__onnx_to_i64(t->val[i]);
	return t->nval;
}
