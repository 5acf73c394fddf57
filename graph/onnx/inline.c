/* A model's local functions (ModelProto.functions, IR version 8 on) inlined
 * into its graph before the import reads it: what torch.onnx.export writes
 * with export_modules_as_functions (a module class a function in its own
 * domain, called once per instance) and what other exporters keep as
 * functions. ONNX's rule (onnx.proto, FunctionProto; onnx.inliner does the
 * same): a node whose (domain, op_type) names a function of the model stands
 * for that function's body, the function's formal inputs and outputs bound
 * to the node's actual ones, an input the node leaves out bound to "" (an
 * optional input not given), and an attribute of a body node that refers to
 * one of the function's (ref_attr_name) taking the caller's value, else the
 * function's default (attribute_proto), else left out. The body's other
 * tensors get names of their own per call: "<call>/<function>#<k>/<name>",
 * k counting the calls inlined, so two calls never share one, and no graph
 * tensor can be hit unless the file names one so. Calls inside a body are
 * inlined too, at most MAX_DEPTH deep and MAX_NODES nodes in all (a hostile
 * file's functions calling each other twice per level would otherwise grow
 * the graph exponentially). A body node with a graph attribute (If, Loop,
 * Scan inside a function) is refused: its subgraph would keep the body's own
 * names. Functions in the default domain are left alone (they would shadow
 * ONNX's own ops). */
#include "graph/onnx/internal.h"

#define MAX_DEPTH 32
#define MAX_NODES ((size_t)1 << 20)
#define MAX_BYTES ((size_t)1 << 28) /* of the names inlining makes */

/* a function's defaults (FunctionProto.attribute_proto, field 11, IR 9 on)
 * and overload (field 13, IR 10 on): onnx.proto as Debian ships it (onnx
 * 1.12) has neither, so protobuf-c keeps them as unknown fields and they are
 * read from there */
#define FUNCTION_ATTRIBUTE_PROTO 11
#define FUNCTION_OVERLOAD        13
#define NODE_OVERLOAD            8

typedef struct fdefaults {
	Onnx__AttributeProto **a;
	size_t n;
} fdefaults;

typedef struct inliner {
	const Onnx__ModelProto *mp;
	pl__onnx_inlined *out;
	const char *path;
	pl_err *err;
	size_t calls;
	fdefaults *defs;  /* per function of mp */
	const char *root; /* the graph's node being expanded (for messages) */
	size_t bytes;     /* of the names made so far */
	int over;         /* an allocation was refused for passing MAX_BYTES */
} inliner;

/* the k-th occurrence of length-delimited field `tag` that m's generated
 * code did not know, or NULL */
static const ProtobufCMessageUnknownField *unknown(const ProtobufCMessage *m, uint32_t tag,
                                                   size_t k)
{
	for (unsigned i = 0; i < m->n_unknown_fields; i++) {
		const ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
		if (u->tag == tag && u->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED && !k--)
			return u;
	}
	return NULL;
}

/* an unknown length-delimited field's payload: protobuf-c keeps it with its
 * length prefix (a varint). 0, or -1 when the prefix does not say the rest */
static int payload(const ProtobufCMessageUnknownField *u, const uint8_t **p, size_t *n)
{
	uint64_t len = 0;
	size_t i = 0;
	for (int shift = 0; i < u->len && shift < 64; shift += 7) {
		uint8_t b = u->data[i++];
		len |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (len != u->len - i)
				return -1;
			*p = u->data + i;
			*n = (size_t)len;
			return 0;
		}
	}
	return -1;
}

/* whether two messages' unknown string fields (an overload) are the same,
 * absent and empty alike */
static int same_overload(const ProtobufCMessage *a, uint32_t ta, const ProtobufCMessage *b,
                         uint32_t tb)
{
	const ProtobufCMessageUnknownField *x = unknown(a, ta, 0), *y = unknown(b, tb, 0);
	const uint8_t *px = NULL, *py = NULL;
	size_t lx = 0, ly = 0;
	if ((x && payload(x, &px, &lx)) || (y && payload(y, &py, &ly)))
		return 0;
	return lx == ly && (!lx || !memcmp(px, py, lx));
}

/* p stays owned by out (freed with it); NULL when out of memory */
static void *own(pl__onnx_inlined *out, void *p)
{
	if (!p)
		return NULL;
	if (out->nowned == out->capowned) {
		size_t cap = out->capowned ? 2 * out->capowned : 256;
		void **n = pl_realloc(out->owned, sizeof *n * cap);
		if (!n) {
			free(p);
			return NULL;
		}
		out->owned = n;
		out->capowned = cap;
	}
	out->owned[out->nowned++] = p;
	return p;
}

/* n bytes owned by x->out, counted against MAX_BYTES; NULL out of memory or
 * past it (x->over says which) */
static void *own_alloc(inliner *x, size_t n)
{
	if (n > MAX_BYTES - x->bytes) {
		x->over = 1;
		return NULL;
	}
	x->bytes += n;
	return own(x->out, pl_malloc(n));
}

/* a + b, owned by x->out; NULL as own_alloc */
static char *own_str(inliner *x, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	char *s = own_alloc(x, la + lb + 1);
	if (!s)
		return NULL;
	memcpy(s, a, la);
	if (lb)
		memcpy(s + la, b, lb);
	s[la + lb] = '\0';
	return s;
}

/* why an allocation failed: the expansion's bound, or memory */
static pl_status alloc_failed(inliner *x)
{
	if (x->over)
		return pl_err_set(
		    x->err, PL_EINVAL,
		    "%s: node '%s': its local functions expand to more than %zu MiB of "
		    "names",
		    x->path, x->root, MAX_BYTES >> 20);
	return pl_err_set(x->err, PL_ENOMEM, "out of memory");
}

static int is_default_domain(const char *d)
{
	return !d || !d[0] || !strcmp(d, "ai.onnx");
}

/* the index of the model's function that node n calls, or -1 */
static int callee(const Onnx__ModelProto *mp, const Onnx__NodeProto *n)
{
	if (is_default_domain(n->domain) || !n->op_type)
		return -1;
	for (size_t i = 0; i < mp->n_functions; i++) {
		const Onnx__FunctionProto *f = mp->functions[i];
		if (f->name && f->domain && !strcmp(f->name, n->op_type) &&
		    !strcmp(f->domain, n->domain) &&
		    same_overload(&f->base, FUNCTION_OVERLOAD, &n->base, NODE_OVERLOAD))
			return (int)i;
	}
	return -1;
}

static int push(inliner *x, Onnx__NodeProto *n)
{
	pl__onnx_inlined *o = x->out;
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		Onnx__NodeProto **v = pl_realloc(o->nodes, sizeof *v * cap);
		if (!v)
			return -1;
		o->nodes = v;
		o->cap = cap;
	}
	o->nodes[o->n++] = n;
	return 0;
}

/* one call's bindings: formal names to actual ones, and the prefix of the
 * body's own tensors */
typedef struct frame {
	const Onnx__FunctionProto *f;
	const fdefaults *defs;
	const Onnx__NodeProto *call;
	const char *prefix;
} frame;

/* the name tensor `s` of f's body has in the graph (NULL out of memory) */
static const char *bound(inliner *x, const frame *fr, const char *s)
{
	if (!s || !s[0])
		return "";
	for (size_t i = 0; i < fr->f->n_input; i++)
		if (fr->f->input[i] && !strcmp(fr->f->input[i], s))
			return i < fr->call->n_input && fr->call->input[i] ? fr->call->input[i]
			                                                   : "";
	for (size_t i = 0; i < fr->f->n_output; i++)
		if (fr->f->output[i] && !strcmp(fr->f->output[i], s) && i < fr->call->n_output &&
		    fr->call->output[i] && fr->call->output[i][0])
			return fr->call->output[i];
	return own_str(x, fr->prefix, s);
}

/* attribute a of a body node, the caller's value put in where it refers to
 * one of f's: *res the attribute to keep, NULL to leave it out; -1 out of
 * memory */
static int resolve_attr(inliner *x, const frame *fr, Onnx__AttributeProto *a,
                        Onnx__AttributeProto **res)
{
	*res = a;
	if (!a->ref_attr_name || !a->ref_attr_name[0])
		return 0;
	const Onnx__AttributeProto *v = NULL;
	for (size_t i = 0; i < fr->call->n_attribute && !v; i++)
		if (fr->call->attribute[i]->name &&
		    !strcmp(fr->call->attribute[i]->name, a->ref_attr_name))
			v = fr->call->attribute[i];
	for (size_t i = 0; i < fr->defs->n && !v; i++)
		if (fr->defs->a[i]->name && !strcmp(fr->defs->a[i]->name, a->ref_attr_name))
			v = fr->defs->a[i];
	*res = NULL;
	if (!v)
		return 0; /* neither given nor defaulted: absent */
	Onnx__AttributeProto *c = own_alloc(x, sizeof *c);
	if (!c)
		return -1;
	*c = *v;
	c->name = a->name; /* the body node's name for it */
	c->ref_attr_name = NULL;
	*res = c;
	return 0;
}

static pl_status expand(inliner *x, const Onnx__NodeProto *n, int depth);

/* the body of f in place of call n */
static pl_status inline_call(inliner *x, const Onnx__NodeProto *n, int fi, int depth)
{
	const Onnx__FunctionProto *f = x->mp->functions[fi];
	const char *who = n->name && n->name[0]         ? n->name
	                  : n->n_output && n->output[0] ? n->output[0]
	                                                : "";
	if (depth >= MAX_DEPTH)
		return pl_err_set(
		    x->err, PL_EINVAL,
		    "%s: node '%s': its local functions call functions more than %d deep "
		    "(the last %s:%s; a function that calls itself?)",
		    x->path, x->root, MAX_DEPTH, f->domain, f->name);
	size_t len = strlen(who) + strlen(f->name) + 32;
	char *pre = own_alloc(x, len);
	if (!pre)
		return alloc_failed(x);
	snprintf(pre, len, "%s/%s#%zu/", who, f->name, x->calls++);
	frame fr = {f, &x->defs[fi], n, pre};
	for (size_t k = 0; k < f->n_node; k++) {
		const Onnx__NodeProto *b = f->node[k];
		for (size_t i = 0; i < b->n_attribute; i++)
			if (b->attribute[i]->g || b->attribute[i]->n_graphs)
				return pl_err_set(
				    x->err, PL_EINVAL,
				    "%s: node '%s': local function %s:%s: its node '%s' (%s) has a "
				    "subgraph; control flow inside a function is not supported yet",
				    x->path, x->root, f->domain, f->name, b->name ? b->name : "",
				    b->op_type ? b->op_type : "?");
		Onnx__NodeProto *c = own_alloc(x, sizeof *c);
		if (!c)
			return alloc_failed(x);
		*c = *b;
		c->name = own_str(x, pre, b->name && b->name[0] ? b->name : "node");
		c->input = own_alloc(x, sizeof *c->input * (b->n_input + 1));
		c->output = own_alloc(x, sizeof *c->output * (b->n_output + 1));
		c->attribute = own_alloc(x, sizeof *c->attribute * (b->n_attribute + 1));
		if (!c->name || !c->input || !c->output || !c->attribute)
			return alloc_failed(x);
		for (size_t i = 0; i < b->n_input; i++)
			if (!(c->input[i] = (char *)bound(x, &fr, b->input[i])))
				return alloc_failed(x);
		for (size_t i = 0; i < b->n_output; i++)
			if (!(c->output[i] = (char *)bound(x, &fr, b->output[i])))
				return alloc_failed(x);
		c->n_attribute = 0;
		for (size_t i = 0; i < b->n_attribute; i++) {
			Onnx__AttributeProto *a;
			if (resolve_attr(x, &fr, b->attribute[i], &a))
				return alloc_failed(x);
			if (a)
				c->attribute[c->n_attribute++] = a;
		}
		pl_status st = expand(x, c, depth + 1);
		if (st)
			return st;
	}
	return PL_OK;
}

/* node n, or the body of the function it calls */
static pl_status expand(inliner *x, const Onnx__NodeProto *n, int depth)
{
	int fi = callee(x->mp, n);
	if (fi >= 0)
		return inline_call(x, n, fi, depth);
	if (x->out->n >= MAX_NODES)
		return pl_err_set(x->err, PL_EINVAL,
		                  "%s: its local functions expand to more than %zu nodes", x->path,
		                  MAX_NODES);
	return push(x, (Onnx__NodeProto *)n) ? pl_err_set(x->err, PL_ENOMEM, "out of memory")
	                                     : PL_OK;
}

pl_status pl__onnx_inline(const Onnx__ModelProto *mp, const char *path, pl__onnx_inlined *out,
                          pl_err *err)
{
	memset(out, 0, sizeof *out);
	out->g = *mp->graph;
	int calls = 0;
	for (size_t i = 0; i < mp->graph->n_node && !calls; i++)
		calls = callee(mp, mp->graph->node[i]) >= 0;
	if (!calls)
		return PL_OK; /* the graph as it is */
	inliner x = {.mp = mp,
	             .out = out,
	             .path = path,
	             .err = err,
	             .defs = own(out, pl_calloc(mp->n_functions, sizeof *x.defs)),
	             .root = ""};
	if (!x.defs)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	for (size_t i = 0; i < mp->n_functions; i++) {
		const ProtobufCMessage *fm = &mp->functions[i]->base;
		size_t k = 0;
		while (unknown(fm, FUNCTION_ATTRIBUTE_PROTO, k))
			k++;
		x.defs[i].a = own(out, pl_calloc(k + 1, sizeof *x.defs[i].a));
		if (!x.defs[i].a)
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		for (size_t j = 0; j < k; j++) {
			const ProtobufCMessageUnknownField *u =
			    unknown(fm, FUNCTION_ATTRIBUTE_PROTO, j);
			const uint8_t *pd;
			size_t pn;
			Onnx__AttributeProto *a = payload(u, &pd, &pn)
			                              ? NULL
			                              : onnx__attribute_proto__unpack(NULL, pn, pd);
			if (!a)
				return pl_err_set(
				    err, PL_EINVAL,
				    "%s: local function %s:%s: attribute default %zu is not "
				    "an AttributeProto",
				    path, mp->functions[i]->domain ? mp->functions[i]->domain : "",
				    mp->functions[i]->name ? mp->functions[i]->name : "", j);
			if (out->nattrs == out->capattrs) {
				size_t cap = out->capattrs ? 2 * out->capattrs : 16;
				Onnx__AttributeProto **v = pl_realloc(out->attrs, sizeof *v * cap);
				if (!v) {
					onnx__attribute_proto__free_unpacked(a, NULL);
					return pl_err_set(err, PL_ENOMEM, "out of memory");
				}
				out->attrs = v;
				out->capattrs = cap;
			}
			out->attrs[out->nattrs++] = a;
			if (a->name)
				x.defs[i].a[x.defs[i].n++] = a;
		}
	}
	for (size_t i = 0; i < mp->graph->n_node; i++) {
		const Onnx__NodeProto *n = mp->graph->node[i];
		x.root = n->name && n->name[0]         ? n->name
		         : n->n_output && n->output[0] ? n->output[0]
		                                       : "";
		pl_status st = expand(&x, n, 0);
		if (st)
			return st;
	}
	out->g.node = out->nodes;
	out->g.n_node = out->n;
	return PL_OK;
}

void pl__onnx_inlined_free(pl__onnx_inlined *x)
{
	for (size_t i = 0; i < x->nattrs; i++)
		onnx__attribute_proto__free_unpacked(x->attrs[i], NULL);
	free(x->attrs);
	for (size_t i = 0; i < x->nowned; i++)
		free(x->owned[i]);
	free(x->owned);
	free(x->nodes);
	memset(x, 0, sizeof *x);
}
