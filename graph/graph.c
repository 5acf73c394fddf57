/* The graph IR's own functions (graph/graph.h): dtype and role names,
 * shapes' element counts, views, look-ups by name, op hashes, the batch, and
 * the one whole-file reader every command's input goes through. The model
 * reader, which builds graphs, is graph/model.c; the op rules are
 * graph/ops/. Nothing here calls either. */
#include "graph/graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/alloc.h"

static const char *const dtype_names[] = {"float32", "float16", "bfloat16",
                                          "int32",   "int64",   "float64"};
_Static_assert(sizeof dtype_names / sizeof *dtype_names == PL_DT_COUNT, "dtype names");
static const int dtype_bytes[] = {4, 2, 2, 4, 8, 8};
static const char *const role_names[] = {"input", "param", "const", "activation"};
_Static_assert(sizeof role_names / sizeof *role_names == PL_ROLE_COUNT, "role names");

const char *pl_dtype_name(pl_dtype dt)
{
	return dt < PL_DT_COUNT ? dtype_names[dt] : "?";
}
int pl_dtype_bytes(pl_dtype dt)
{
	return dt < PL_DT_COUNT ? dtype_bytes[dt] : 0;
}
const char *pl_role_name(pl_role r)
{
	return r < PL_ROLE_COUNT ? role_names[r] : "?";
}

int pl_dtype_parse(const char *s, pl_dtype *out)
{
	for (int i = 0; i < PL_DT_COUNT; i++)
		if (!strcmp(s, dtype_names[i])) {
			*out = (pl_dtype)i;
			return 0;
		}
	return -1;
}

int64_t pl_shape_elems(int rank, const int64_t *shape)
{
	/* the product of the dimensions but zeros within 64 bits: then so is
	 * the product of any of them, whatever the order */
	int64_t n = 1;
	int zero = 0;
	for (int i = 0; i < rank; i++)
		if (shape[i] < 0 || shape[i] > PL_MAX_DIM ||
		    (shape[i] && pl_size_mul(n, shape[i], &n)))
			return -1;
		else
			zero |= !shape[i];
	return zero ? 0 : n;
}

int64_t pl_tensor_elems(const pl_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++)
		n *= t->shape[i];
	return n;
}

int pl_view_base(const pl_graph *g, int t)
{
	/* a chain of views is as long as the ops that make it (each reads an
	 * earlier tensor), so it ends */
	for (int o = g->tensors[t].producer; o >= 0 && g->ops[o].view; o = g->tensors[t].producer)
		t = g->ops[o].in[0];
	return t;
}

int pl_graph_find_op(const pl_graph *g, const char *name)
{
	for (int i = 0; i < g->nops; i++)
		if (!strcmp(g->ops[i].name, name))
			return i;
	return -1;
}

int pl_graph_find_tensor(const pl_graph *g, const char *name)
{
	for (int i = 0; i < g->ntensors; i++)
		if (!strcmp(g->tensors[i].name, name))
			return i;
	return -1;
}

void pl_graph_free(pl_graph *g)
{
	if (g)
		pl_arena_free(g->arena);
}

uint64_t pl_hash_bytes(uint64_t h, const void *data, size_t n)
{
	const unsigned char *b = data;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, sizeof w);
		h = (h ^ w) * 1099511628211ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

uint64_t pl_op_hash(const pl_graph *g, int o)
{
	const pl_op *op = &g->ops[o];
	uint64_t h = pl_hash_bytes(PL_HASH_SEED, &op->type, sizeof op->type);
	h = pl_hash_bytes(h, &op->spec, sizeof op->spec);
	/* what op classes compare first: ops alike but for their attributes (a
	 * chain of Dropouts of distinct ratios) would share one bucket, every
	 * op compared with every other */
	h = pl_hash_bytes(h, op->attrs, sizeof *op->attrs);
	for (int i = 0; i < op->ninputs; i++) {
		const pl_tensor *t = &g->tensors[op->in[i]];
		h = pl_hash_bytes(h, t->shape, sizeof(int64_t) * (size_t)t->rank);
		h = pl_hash_bytes(h, &t->dtype, sizeof t->dtype);
	}
	return h;
}

int64_t pl_gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

int64_t pl_graph_batch(const pl_graph *g)
{
	int64_t b = 0;
	for (int t = 0; t < g->ntensors; t++) {
		const pl_tensor *pt = &g->tensors[t];
		if (pt->role == PL_ROLE_INPUT && pt->rank > 0)
			b = pl_gcd(pt->shape[0], b);
	}
	return b;
}

pl_status pl_read_file(const char *path, char **text, size_t *len, pl_err *err)
{
	FILE *f = !strcmp(path, "-") ? stdin : fopen(path, "rb");
	if (!f)
		return pl_err_set(err, PL_EIO, "%s: cannot open: %s", path, strerror(errno));
	char *buf = NULL;
	size_t n = 0, cap = 0, k;
	do {
		if (cap - n < 4096) { /* up to one byte past the longest file */
			cap = cap ? 2 * cap : 65536;
			if (cap > PL_MAX_FILE_BYTES + 1)
				cap = PL_MAX_FILE_BYTES + 1;
			char *nb = pl_realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				if (f != stdin)
					fclose(f);
				return pl_err_set(err, PL_ENOMEM, "out of memory");
			}
			buf = nb;
		}
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k > 0 && n <= PL_MAX_FILE_BYTES);
	int bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (bad) {
		free(buf);
		return pl_err_set(err, PL_EIO, "%s: read error", path);
	}
	if (n > PL_MAX_FILE_BYTES) { /* /dev/zero, a stream that never ends */
		free(buf);
		return pl_err_set(err, PL_EINVAL,
		                  "%s: longer than %lld bytes: not a model, plan or cluster file",
		                  path, (long long)PL_MAX_FILE_BYTES);
	}
	buf[n] = 0;
	*text = buf;
	*len = n;
	return PL_OK;
}
