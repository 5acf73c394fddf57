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
 *   and Dropout are dropped (eval exports); Constant nodes feed the above;
 *   Reshape to a shape known at import; computations on shapes (Shape, Gather,
 *   Unsqueeze, Squeeze, Concat, Cast, ConstantOfShape, arithmetic on their
 *   values) folded, with the shapes the importer infers as ONNX defines them;
 *   Slice or Split of a linear layer's output along its last axis (a fused
 *   q, k, v projection) imported as that layer's weight and bias cut into
 *   slices; Slice of an initializer (a mask sliced to the sequence);
 *   LayerNormalization (opset 17); GELU in its tanh form fused into Gelu;
 *   Attention (opset 23), 4-D or 3-D, without mask or key/value cache.
 *
 * Anything else is refused naming the node, its op type and the opset, with
 * the list above. ONNX exports are forward graphs: --loss cross-entropy
 * (the default) appends SoftmaxCrossEntropy on the first output against an
 * integer labels input, and on every other output of its shape (auxiliary
 * classifiers) against the same labels; a graph that computes its loss
 * (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss) is taken with its
 * outputs as they are, as --loss none takes them. */

#include "graph/onnx/internal.h"

/* whether float initializer t holds an infinity or a NaN */
static int nonfinite(const Onnx__TensorProto *t)
{
	for (size_t i = 0; i < t->n_float_data; i++)
		if (!isfinite(t->float_data[i]))
			return 1;
	for (size_t i = 0; i < t->n_double_data; i++)
		if (!isfinite(t->double_data[i]))
			return 1;
	if (!t->has_raw_data || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		return 0;
	for (size_t i = 0; i + 4 <= t->raw_data.len; i += 4) {
		float f;
		memcpy(&f, t->raw_data.data + i, 4);
		if (!isfinite(f))
			return 1;
	}
	return 0;
}

/* whether no gradient can reach tensor `name` from what reads it: every
 * reader compares it, casts it to bool, or is a Where reading it as its
 * condition, directly or through views (Slice, Reshape, Unsqueeze, Squeeze,
 * Identity, Cast) -- a mask buffer (GPT-2's tril of ones), which training
 * never changes */
static int no_gradient(imp *m, const char *name, int depth)
{
	int who[16];
	int k = pl__onnx_consumers(m, name, who, 16);
	if (k < 1 || k > 16 || depth > 6)
		return 0;
	for (size_t i = 0; i < m->g->n_output; i++)
		if (m->g->output[i]->name && !strcmp(m->g->output[i]->name, name))
			return 0;
	static const char *const compare[] = {"Equal",       "Less",           "Greater",
	                                      "LessOrEqual", "GreaterOrEqual", "Not"};
	static const char *const view[] = {"Slice",   "Reshape",  "Unsqueeze",
	                                   "Squeeze", "Identity", "Cast"};
	for (int j = 0; j < k; j++) {
		const Onnx__NodeProto *n = m->g->node[who[j]];
		const char *t = n->op_type ? n->op_type : "";
		int ok = !strcmp(t, "Cast") && pl__onnx_attr_i(n, "to", 1) == 9;
		for (size_t c = 0; c < sizeof compare / sizeof *compare; c++)
			ok |= !strcmp(t, compare[c]);
		if (!strcmp(t, "Where")) {
			ok = 1;
			for (size_t i = 1; i < n->n_input; i++)
				ok &= strcmp(n->input[i], name) != 0;
		}
		for (size_t c = 0; !ok && c < sizeof view / sizeof *view; c++)
			if (!strcmp(t, view[c]) && n->n_output >= 1 && n->n_input >= 1 &&
			    !strcmp(n->input[0], name) && n->output[0][0])
				ok = no_gradient(m, n->output[0], depth + 1);
		if (!ok)
			return 0;
	}
	return 1;
}

/* a graph input or initializer's declaration */
static pl_status declare(imp *m, const char *name, const Onnx__TypeProto__Tensor *tt,
                         const Onnx__TensorProto *init)
{
	if (!name || !name[0])
		return pl_err_set(m->err, PL_EINVAL, "%s: a graph input or initializer has no name",
		                  m->path);
	int32_t et = init ? init->data_type : tt && tt->has_elem_type ? tt->elem_type : 1;
	const char *dt = pl__onnx_dtype_name(et);
	if (!dt)
		return pl_err_set(
		    m->err, PL_EINVAL,
		    "%s: tensor '%s': element type %d is not one of float32, float16, "
		    "bfloat16, float64, int32, int64",
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
	int is_float = et == 1 || et == 10 || et == 16;
	/* a float buffer holding an infinity (a causal mask of -inf), or one no
	 * gradient reaches (a mask compared or a Where's condition), is not
	 * trained: a constant, its values read */
	int buffer = init && is_float && (nonfinite(init) || no_gradient(m, name, 0));
	if (init)
		pl__onnx_set_tensor(m, name, init, is_float && !buffer ? FEW_VALUES : MAX_VALUES);
	else
		pl__onnx_set_info(m, name, (int)n, shape, 0, NULL);
	tinfo *ti = pl__onnx_known(m, name);
	if (init && (!is_float || buffer) && ti) /* an index buffer, a mask: a constant */
		ti->cons = 1;
	if (ti)
		ti->init = init;
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", pl__onnx_int_list(shape, n));
	cJSON_AddStringToObject(t, "role",
	                        !init                 ? "input"
	                        : is_float && !buffer ? "param"
	                                              : "const");
	cJSON_AddStringToObject(t, "dtype", dt);
	pl_json_add(m->tensors, name, t);
	return PL_OK;
}

/* --const: the params whose names match one of the patterns become const
 * (a buffer the exporter wrote as an initializer: no gradient, no optimizer
 * state). A pattern that matches no param is an error naming it. */
static pl_status keep_constant(imp *m, const pl_onnx_opts *o)
{
	for (int k = 0; o && k < o->nconsts; k++) {
		int hit = 0;
		cJSON *t;
		cJSON_ArrayForEach (t, m->tensors) {
			const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
			if (role && !strcmp(role, "param") &&
			    !fnmatch(o->consts[k], t->string, 0)) {
				cJSON_ReplaceItemInObject(t, "role", cJSON_CreateString("const"));
				hit = 1;
			}
		}
		if (!hit)
			return pl_err_set(m->err, PL_EINVAL,
			                  "%s: --const '%s': no initializer the model trains is "
			                  "named so (shell patterns: *, ?, [...])",
			                  m->path, o->consts[k]);
	}
	return PL_OK;
}

/* Every const the model declares gets its values: those folded at import,
 * or an initializer's read from the file (a buffer made constant). One whose
 * values are past the bound, or computed by an op not folded on values, is
 * refused naming it; one whose values the file does not hold (an initializer
 * of dims only) stays without them: it plans, and the executor refuses to
 * run it rather than invent them. */
static pl_status check_consts(imp *m)
{
	cJSON *t;
	cJSON_ArrayForEach (t, m->tensors) {
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(t, "role"));
		if (!role || strcmp(role, "const") || cJSON_GetObjectItem(t, "values"))
			continue;
		tinfo *k = pl__onnx_known(m, t->string);
		if (k && k->nval > 0 && k->nval == pl__onnx_elems(k)) {
			pl__onnx_const_values(t, k->val, k->nval, 0);
			continue;
		}
		const Onnx__TensorProto *init = k ? k->init : NULL;
		int64_t n = 1;
		cJSON *d;
		cJSON_ArrayForEach (d, cJSON_GetObjectItem(t, "shape"))
			if (__builtin_mul_overflow(n, (int64_t)d->valuedouble, &n) || n > BIG)
				n = BIG;
		if (n > MAX_VALUES || (k && k->over))
			return pl_err_set(
			    m->err, PL_EINVAL,
			    "%s: constant '%s': %lld values, more than the importer keeps of one "
			    "(at most %d, 16 MiB as float32: a 2048x2048 mask; %lld in all)",
			    m->path, t->string, (long long)n, MAX_VALUES, (long long)MAX_HELD);
		if (init) {
			/* (room for the n the declaration says; an initializer of more
			 * values than its declaration holds gives none) */
			double *v = pl__onnx_scratch(m, n);
			int nv = pl__onnx_tensor_values(init, v, n);
			if (nv == n)
				pl__onnx_const_values(t, v, n, 0);
			continue; /* else its dims only: run refuses it, naming it */
		}
		if (n == 0 || (k && k->nodata))
			continue;
		const char *by = "?", *op = "?";
		for (size_t i = 0; i < m->g->n_node; i++)
			for (size_t j = 0; j < m->g->node[i]->n_output; j++)
				if (!strcmp(pl__onnx_resolve(m, m->g->node[i]->output[j]),
				            t->string)) {
					by = m->g->node[i]->name && m->g->node[i]->name[0]
					         ? m->g->node[i]->name
					         : t->string;
					op = m->g->node[i]->op_type ? m->g->node[i]->op_type : "?";
				}
		return pl_err_set(m->err, PL_EINVAL,
		                  "%s: constant '%s' (node '%s', %s): its values are not computed "
		                  "at import (%s is not folded on values)",
		                  m->path, t->string, by, op, op);
	}
	return PL_OK;
}

/* Graph output y's dimensions into ls (a symbolic one: what the import
 * inferred, else the batch); its rank, or -1 where it has no shape, -2 where
 * a dimension stays symbolic (*bad: which) */
static int output_dims(imp *m, const Onnx__ValueInfoProto *y, int64_t ls[16], size_t *bad)
{
	const Onnx__TensorShapeProto *sh =
	    y->type && y->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
	            y->type->tensor_type->shape
	        ? y->type->tensor_type->shape
	        : NULL;
	if (!sh || sh->n_dim < 1 || sh->n_dim > 16)
		return -1;
	tinfo *yi = pl__onnx_known(m, y->name); /* the shape the import inferred, if any */
	for (size_t d = 0; d < sh->n_dim; d++) {
		const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
		ls[d] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		                dim->dim_value > 0
		            ? dim->dim_value
		        : yi && yi->rank == (int)sh->n_dim ? yi->dims[d]
		                                           : m->batch;
		if (ls[d] <= 0) {
			*bad = d;
			return -2;
		}
	}
	return (int)sh->n_dim;
}

/* SoftmaxCrossEntropy op `name` of logits y (of rank `rank`; classes on
 * dimension 1 when on1, moved last by a Transpose `name`.classes_last)
 * against "labels", its loss `name` pushed onto outs */
static void ce_op(imp *m, const char *y, int rank, int on1, const char *name, cJSON *outs)
{
	char tr_name[256], logits[256];
	snprintf(tr_name, sizeof tr_name, "%s.classes_last", name);
	snprintf(logits, sizeof logits, "%s.logits", name);
	if (on1) { /* classes moved last, where SoftmaxCrossEntropy takes them */
		int64_t perm[16];
		int k = 0;
		perm[k++] = 0;
		for (int d = 2; d < rank; d++)
			perm[k++] = d;
		perm[k++] = 1;
		cJSON *tr = pl__onnx_add_op(m, tr_name, "Transpose");
		pl__onnx_io(m, tr, "inputs", y);
		pl_json_push(cJSON_GetObjectItem(tr, "outputs"), cJSON_CreateString(logits));
		cJSON *at = cJSON_AddObjectToObject(tr, "attrs");
		pl_json_add(at, "perm", pl__onnx_int_list(perm, rank));
	}
	cJSON *op = pl__onnx_add_op(m, name, "SoftmaxCrossEntropy");
	if (on1)
		pl_json_push(cJSON_GetObjectItem(op, "inputs"), cJSON_CreateString(logits));
	else
		pl__onnx_io(m, op, "inputs", y);
	pl_json_push(cJSON_GetObjectItem(op, "inputs"), cJSON_CreateString("labels"));
	pl_json_push(cJSON_GetObjectItem(op, "outputs"), cJSON_CreateString(name));
	pl_json_push(outs, cJSON_CreateString(name));
}

/* The loss --loss cross-entropy appends: SoftmaxCrossEntropy of the graph's
 * first output (its classes moved last where they are at axis 1) against an
 * int64 labels input of its other dimensions; "loss" added to outs. Every
 * further output of the first's shape is an auxiliary classifier trained on
 * the same labels (GoogLeNet's and Inception v3's in training mode, a
 * segmentation model's aux head): its cross-entropy "loss.auxN" is a loss
 * too (the step's loss is their sum), as those models train them */
static pl_status add_ce_loss(imp *m, const pl_onnx_opts *o, cJSON *outs)
{
	/* labels: the first output's shape without its class dimension */
	const Onnx__ValueInfoProto *y = m->g->output[0];
	if (!y->name)
		return pl_err_set(m->err, PL_EINVAL, "%s: graph output 0 has no name", m->path);
	int64_t ls[16];
	size_t bad = 0;
	int rank = output_dims(m, y, ls, &bad);
	if (rank == -1)
		return pl_err_set(m->err, PL_EINVAL,
		                  "%s: output '%s' has no shape: --loss cross-entropy needs one "
		                  "(export with shapes inferred), or --loss none",
		                  m->path, y->name);
	if (rank < 0)
		return pl_err_set(m->err, PL_EINVAL,
		                  "%s: output '%s': dimension %zu is symbolic; --batch N sets "
		                  "the batch",
		                  m->path, y->name, bad);
	/* the classes' axis: 1 or the last (auto: 1 from rank 4, as PyTorch's
	 * CrossEntropyLoss takes [N, C, d1, ...]; a language model's
	 * [B, S, V] keeps the last) */
	int ax = o ? o->loss_axis : 0;
	int on1 = rank >= 3 && (ax == 1 || (ax == 0 && rank >= 4));
	/* the labels: the output's dimensions but the classes' */
	int64_t lab[16];
	int nl = 0;
	for (int d = 0; d < rank; d++)
		if (d != (on1 ? 1 : rank - 1))
			lab[nl++] = ls[d];
	cJSON *lt = cJSON_CreateObject();
	pl_json_add(lt, "shape", pl__onnx_int_list(lab, nl));
	cJSON_AddStringToObject(lt, "role", "input");
	cJSON_AddStringToObject(lt, "dtype", "int64");
	pl_json_add(m->tensors, "labels", lt);
	ce_op(m, y->name, rank, on1, "loss", outs);
	for (size_t i = 1, aux = 1; i < m->g->n_output; i++) {
		const Onnx__ValueInfoProto *a = m->g->output[i];
		int64_t as[16];
		if (!a->name || output_dims(m, a, as, &bad) != rank ||
		    memcmp(as, ls, (size_t)rank * sizeof *ls))
			continue;
		char name[32];
		snprintf(name, sizeof name, "loss.aux%zu", aux++);
		ce_op(m, a->name, rank, on1, name, outs);
	}
	return PL_OK;
}

/* Whether the graph computes its loss itself (SoftmaxCrossEntropyLoss,
 * NegativeLogLikelihoodLoss: a model exported with its loss): then the
 * default --loss takes its outputs as they are */
static int carries_loss(const Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_node; i++)
		if (g->node[i]->op_type &&
		    (!strcmp(g->node[i]->op_type, "SoftmaxCrossEntropyLoss") ||
		     !strcmp(g->node[i]->op_type, "NegativeLogLikelihoodLoss")))
			return 1;
	return 0;
}

/* The graph's initializers and inputs, declared tensors */
static pl_status declare_graph(imp *m)
{
	pl_status st = PL_OK;
	for (size_t i = 0; i < m->g->n_initializer && !st; i++) {
		const char *name = m->g->initializer[i]->name;
		if (name && pl__onnx_decl(m, name))
			return pl_err_set(m->err, PL_EINVAL,
			                  "%s: initializer '%s' is declared twice (a graph names each "
			                  "tensor once)",
			                  m->path, name);
		st = declare(m, name, NULL, m->g->initializer[i]);
	}
	for (size_t i = 0; i < m->g->n_input && !st; i++) {
		const Onnx__ValueInfoProto *v = m->g->input[i];
		if (!v->name || !v->name[0]) {
			st = pl_err_set(m->err, PL_EINVAL, "%s: graph input %zu has no name",
			                m->path, i);
			break;
		}
		if (pl__onnx_decl(m, v->name))
			continue; /* an initializer listed as an input too (older exports) */
		if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
			st = pl_err_set(m->err, PL_EINVAL, "%s: input '%s' is not a tensor",
			                m->path, v->name);
			break;
		}
		st = declare(m, v->name, v->type->tensor_type, NULL);
	}
	return st;
}

/* A tied weight, folded: an exporter-made initializer ("onnx::...", 2-D)
 * whose values are those of a weight the model names, transposed (a
 * language model's head tied to its embedding, x @ wte.T, the transpose
 * folded at export) is that weight read through a Transpose op, not a
 * param of its own. Only where the file holds both tensors' values: the
 * dims alone would match any other square or transposed weight (and values
 * all one fill, a zero-initialised layer's, would match any other). */
static void retie_transposes(imp *m)
{
	const Onnx__GraphProto *g = m->g;
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *x = g->initializer[i];
		if (!x->name || strncmp(x->name, "onnx::", 6) || x->n_dims != 2 ||
		    !pl__onnx_is_param(m, x->name) || x->dims[0] < 1 || x->dims[1] < 1 ||
		    x->dims[0] > BIG / x->dims[1])
			continue;
		size_t r = (size_t)x->dims[0], c = (size_t)x->dims[1], size, n;
		const unsigned char *xd, *yd;
		/* one value throughout (a zero-initialised layer): no tie told */
		if (!(size = pl__onnx_elem_data(x, &xd, &n)) || n != r * c || pl__onnx_one_fill(x))
			continue;
		for (size_t j = 0; j < g->n_initializer; j++) {
			const Onnx__TensorProto *y = g->initializer[j];
			if (!y->name || !strncmp(y->name, "onnx::", 6) || y->n_dims != 2 ||
			    y->dims[0] != x->dims[1] || y->dims[1] != x->dims[0] ||
			    y->data_type != x->data_type || !pl__onnx_is_param(m, y->name) ||
			    pl__onnx_elem_data(y, &yd, &n) != size || n != r * c)
				continue;
			int same = 1; /* x[a][b] == y[b][a] */
			for (size_t a = 0; a < r && same; a++)
				for (size_t b = 0; b < c && same; b++)
					same = !memcmp(xd + (a * c + b) * size,
					               yd + (b * r + a) * size, size);
			if (!same)
				continue;
			char op[600];
			snprintf(op, sizeof op, "%s.tied", x->name);
			if (pl__onnx_decl(m, op))
				continue;
			cJSON_DeleteItemFromObjectCaseSensitive(m->tensors, x->name);
			int64_t perm[2] = {1, 0};
			pl__onnx_emit_shaped(m, op, "Transpose", y->name, x->name, "perm", perm, 2);
			tinfo *t = pl__onnx_known(m, x->name);
			if (t)
				t->init = NULL;
			break;
		}
	}
}

/* The model of ONNX file data: its tensors declared, its nodes imported,
 * then the loss the user asked for */
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
	pl__onnx_inlined fn;
	pl_status ist = pl__onnx_inline(mp, path, &fn, err);
	if (ist) {
		pl__onnx_inlined_free(&fn);
		onnx__model_proto__free_unpacked(mp, NULL);
		return ist;
	}
	const Onnx__GraphProto *g = &fn.g;
	imp m = {.g = g,
	         .path = path,
	         .batch = o ? o->batch : 0,
	         .dropout = o ? o->dropout : NULL,
	         .ce_loss = o && o->loss ? !strcmp(o->loss, "cross-entropy") : !carries_loss(g),
	         .err = err};
	for (size_t i = 0; i < mp->n_opset_import; i++)
		if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0])
			m.opset = mp->opset_import[i]->version;
	cJSON *root = cJSON_CreateObject(), *outs = NULL;
	m.tensors = cJSON_CreateObject();
	m.ops = cJSON_CreateArray();
	/* an If's branch taken inline adds its nodes' aliases and names */
	size_t branch = 0;
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t k = 0; g->node[i]->op_type && !strcmp(g->node[i]->op_type, "If") &&
		                   k < g->node[i]->n_attribute;
		     k++) {
			const Onnx__GraphProto *b = g->node[i]->attribute[k]->g;
			for (size_t j = 0; b && j < b->n_node && j < 64; j++)
				branch += 1 + b->node[j]->n_output;
			branch += b ? b->n_output + g->node[i]->n_output : 0;
		}
	m.nalias_cap = g->n_node + 1 + branch;
	m.alias_from = pl_calloc(m.nalias_cap, sizeof *m.alias_from);
	m.alias_to = pl_calloc(m.nalias_cap, sizeof *m.alias_to);
	m.skip = pl_calloc(g->n_node + 1, 1);
	m.padded = pl_calloc(g->n_node + 1, sizeof *m.padded);
	size_t names = g->n_initializer + g->n_input + 1 + branch;
	for (size_t i = 0; i < g->n_node; i++)
		names += g->node[i]->n_output;
	for (m.ninfo = 64; m.ninfo < 2 * names; m.ninfo *= 2)
		;
	m.info = pl_calloc(m.ninfo, sizeof *m.info);
	pl_status st = PL_OK;
	if (!m.alias_from || !m.alias_to || !m.skip || !m.padded || !m.info) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	st = declare_graph(&m);
	if (!st)
		retie_transposes(&m);
	if (!st)
		st = pl__onnx_not_training(&m);
	for (size_t i = 0; i < g->n_node && !st; i++)
		if (!m.skip[i])
			st = pl__onnx_node(&m, (int)i);
	if (st)
		goto done;
	if (g->n_output < 1) {
		st = pl_err_set(err, PL_EINVAL, "%s: the graph has no outputs", path);
		goto done;
	}
	outs = cJSON_CreateArray();
	const char *loss = o && o->loss ? o->loss : carries_loss(g) ? "none" : "cross-entropy";
	if (!strcmp(loss, "cross-entropy")) {
		if ((st = add_ce_loss(&m, o, outs)))
			goto done;
	} else if (!strcmp(loss, "none")) {
		for (size_t i = 0; i < g->n_output; i++)
			if (g->output[i]->name)
				pl_json_push(outs, cJSON_CreateString(
				                       pl__onnx_resolve(&m, g->output[i]->name)));
	} else {
		st = pl_err_set(err, PL_EINVAL, "--loss %s: expected cross-entropy or none", loss);
		goto done;
	}
	if ((st = keep_constant(&m, o)))
		goto done;
	pl__onnx_drop_unread(&m, outs);
	if ((st = check_consts(&m)))
		goto done;
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
	free(m.padded);
	for (size_t i = 0; m.info && i < m.ninfo; i++) {
		free(m.info[i].val);
		free(m.info[i].name);
	}
	free(m.info);
	free(m.scratch);
	pl__onnx_inlined_free(&fn);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (st)
		cJSON_Delete(root);
	else
		*out = root;
	return st;
}
