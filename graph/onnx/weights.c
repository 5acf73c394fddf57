/* The ONNX importer (graph/onnx/): an ONNX file's initializers as a run's starting weights
 * (pl_onnx_weights). */
#include "graph/onnx/internal.h"

/* ---- weights: an ONNX file's initializers as starting values ---- */

static float half_float(uint16_t h)
{
	int e = (h >> 10) & 31, f = h & 1023;
	double v = e == 0    ? ldexp(f, -24)
	           : e == 31 ? (f ? NAN : INFINITY)
	                     : ldexp(f + 1024, e - 25);
	return (float)(h & 0x8000 ? -v : v);
}

/* initializer t's n values as floats into v: 0, or -1 (with *why) */
static int init_floats(const Onnx__TensorProto *t, float *v, int64_t n, const char **why)
{
	size_t k = (size_t)n;
	int dt = t->data_type;
	*why = "it holds dims only (no data: export it with its weights)";
	if (t->has_data_location &&
	    t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		*why = "its data are in an external file (save the model with its data inside: "
		       "onnx.save(model, path, save_as_external_data=False))";
		return -1;
	}
	if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t->n_float_data == k) {
		memcpy(v, t->float_data, sizeof(float) * k);
		return 0;
	}
	if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE && t->n_double_data == k) {
		for (size_t i = 0; i < k; i++)
			v[i] = (float)t->double_data[i];
		return 0;
	}
	int half = dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16,
	    bf = dt == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
	if ((half || bf) && t->n_int32_data == k) { /* 16 bits in each int32 */
		for (size_t i = 0; i < k; i++) {
			uint32_t b = (uint32_t)t->int32_data[i] & 0xffff;
			if (half)
				v[i] = half_float((uint16_t)b);
			else
				memcpy(&v[i], &(uint32_t){b << 16}, 4);
		}
		return 0;
	}
	if (!t->has_raw_data || !t->raw_data.len)
		return -1;
	size_t w = dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? 8 : half || bf ? 2 : 4;
	*why = "its raw data are not as many bytes as its dims say";
	if (t->raw_data.len != w * k)
		return -1;
	const unsigned char *r = t->raw_data.data; /* little-endian, as ONNX stores them */
	for (size_t i = 0; i < k; i++) {
		if (w == 8) {
			double d;
			memcpy(&d, r + 8 * i, 8);
			v[i] = (float)d;
		} else if (w == 4) {
			memcpy(&v[i], r + 4 * i, 4);
		} else {
			uint16_t b = (uint16_t)(r[2 * i] | r[2 * i + 1] << 8);
			if (half)
				v[i] = half_float(b);
			else
				memcpy(&v[i], &(uint32_t){(uint32_t)b << 16}, 4);
		}
	}
	return 0;
}

static const Onnx__TensorProto *initializer(const Onnx__GraphProto *g, const char *name, size_t len)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name && strlen(g->initializer[i]->name) == len &&
		    !strncmp(g->initializer[i]->name, name, len))
			return g->initializer[i];
	return NULL;
}

/* initializer `name`, or the one a chain of Identity nodes makes it (the
 * exporter merges initializers of equal values and names the others as
 * Identities of the one kept; the importer keeps each a param) */
static const Onnx__TensorProto *initializer_via(const Onnx__GraphProto *g, const char *name,
                                                size_t len)
{
	for (int depth = 0; depth < 16 && name; depth++) {
		const Onnx__TensorProto *t = initializer(g, name, len);
		if (t)
			return t;
		const char *from = NULL;
		for (size_t i = 0; i < g->n_node && !from; i++) {
			const Onnx__NodeProto *n = g->node[i];
			if (n->op_type && !strcmp(n->op_type, "Identity") && n->n_input == 1 &&
			    n->n_output == 1 && strlen(n->output[0]) == len &&
			    !strncmp(n->output[0], name, len))
				from = n->input[0];
		}
		name = from;
		len = from ? strlen(from) : 0;
	}
	return NULL;
}

/* tensor t's values from initializer `name` (all of it), or from columns
 * lo..hi of the last dimension of the initializer a name 'W[lo:hi]' names */
static pl_status weight_of(const Onnx__GraphProto *og, const char *path, const pl_tensor *t,
                           float **out, pl_err *err)
{
	const char *name = t->name, *br = strrchr(name, '[');
	long long lo = 0, hi = 0;
	int cut = 0;
	const Onnx__TensorProto *it = initializer_via(og, name, strlen(name));
	if (!it && br && sscanf(br, "[%lld:%lld]%n", &lo, &hi, &cut) == 2 && br[cut] == 0)
		it = initializer_via(og, name, (size_t)(br - name));
	else
		cut = 0;
	*out = NULL;
	if (!it)
		return t->role == PL_ROLE_PARAM
		           ? pl_err_set(err, PL_EINVAL,
		                        "%s: --weights: the model's param '%s' is not an "
		                        "initializer of this file (it must be the file the model "
		                        "was imported from)",
		                        path, name)
		           : PL_OK; /* a const the file does not hold: the executor refuses it */
	int dt = it->data_type;
	if (dt != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
	    dt != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE &&
	    dt != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 &&
	    dt != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: --weights: initializer '%s' has element type %d, not a "
		                  "float type",
		                  path, it->name, dt);
	/* the shape: the tensor's, but for a cut the last dimension whole */
	int64_t n = 1, last = it->n_dims ? it->dims[it->n_dims - 1] : 1;
	int same = (int)it->n_dims == t->rank;
	for (int d = 0; same && d < t->rank; d++)
		same = it->dims[d] == (cut && d == t->rank - 1 ? last : t->shape[d]);
	if (!same || (cut && (lo < 0 || hi > last || hi - lo != t->shape[t->rank - 1]))) {
		char a[160] = "", b[160] = "";
		for (size_t d = 0; d < it->n_dims && d < 16; d++)
			snprintf(a + strlen(a), sizeof a - strlen(a), "%s%lld", d ? ", " : "",
			         (long long)it->dims[d]);
		for (int d = 0; d < t->rank; d++)
			snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", d ? ", " : "",
			         (long long)t->shape[d]);
		return pl_err_set(err, PL_EINVAL,
		                  "%s: --weights: initializer '%s' has shape [%s]; the model's "
		                  "%s '%s' is [%s]",
		                  path, it->name, a, pl_role_name(t->role), name, b);
	}
	for (size_t d = 0; d < it->n_dims; d++)
		n *= it->dims[d];
	float *all = pl_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
	if (!all)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	const char *why;
	if (n > 0 && init_floats(it, all, n, &why)) {
		free(all);
		return pl_err_set(err, PL_EINVAL, "%s: --weights: initializer '%s': %s", path,
		                  it->name, why);
	}
	if (cut) { /* columns lo..hi of each row, in place */
		int64_t w = hi - lo, rows = last ? n / last : 0;
		for (int64_t r = 0; r < rows; r++)
			memmove(all + r * w, all + r * last + lo, sizeof(float) * (size_t)w);
	}
	*out = all;
	return PL_OK;
}

pl_status pl_onnx_weights(const unsigned char *data, size_t len, const char *path,
                          const pl_graph *g, float ***vals, pl_err *err)
{
	*vals = NULL;
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
	if (!mp || !mp->graph) {
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return pl_err_set(err, PL_EINVAL,
		                  "%s: --weights: not an ONNX model (no ModelProto with a graph)",
		                  path);
	}
	float **v = pl_calloc((size_t)g->ntensors + 1, sizeof *v);
	pl_status st = v ? PL_OK : pl_err_set(err, PL_ENOMEM, "out of memory");
	for (int t = 0; t < g->ntensors && !st; t++) {
		const pl_tensor *pt = &g->tensors[t];
		if (pt->producer < 0 &&
		    (pt->role == PL_ROLE_PARAM || (pt->role == PL_ROLE_CONST && !pt->values)))
			st = weight_of(mp->graph, path, pt, &v[t], err);
	}
	onnx__model_proto__free_unpacked(mp, NULL);
	if (st) {
		for (int t = 0; v && t < g->ntensors; t++)
			free(v[t]);
		free(v);
		return st;
	}
	*vals = v;
	return PL_OK;
}
