/* The ONNX importer (graph/onnx/): the table from ONNX op type to emitter, as graph/ops'
 * rules[] is for the planner's ops, and node(), which runs a node's emitter at its step. */
#include "graph/onnx/internal.h"

/* The ONNX operators the importer maps, each its own emitter, as the op
 * rules' rules[] holds each planner op's functions; node() finds a node's
 * type in onnx_ops[] and runs its emitter at the entry's step. Each returns
 * PL_OK (its planner ops emitted, or the node dropped) or unsupported(). */
typedef pl_status (*onnx_emit)(imp *m, const Onnx__NodeProto *n, const char *name);
/* the importers that say why they refuse a node: 0, or -1 with *why set */
typedef int (*onnx_import)(imp *m, const Onnx__NodeProto *n, const char *name, const char **why);

static int inline_if(imp *m, const Onnx__NodeProto *n, pl_status *st);
static int emit_scalar(imp *m, const char *name, const char *suffix, const char *dtype,
                       double value, char *buf, size_t len);

/* Control flow and shapes that depend on the data: not a training graph */
static pl_status onnx_control_flow(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *t = n->op_type;
	if (!strcmp(t, "Loop") && !pl__onnx_import_embedding_bag(m, n, name))
		return PL_OK; /* nn.EmbeddingBag's bags of one length */
	pl_status st;
	if (!strcmp(t, "If") && inline_if(m, n, &st))
		return st; /* its condition a constant: the branch it takes */
	char why[200];
	snprintf(why, sizeof why, "control flow (%s): not a training graph%s", t,
	         strcmp(t, "Loop") ? ""
	                           : " (nn.EmbeddingBag's Loop imports when its bags are all "
	                             "of one length, as of 2-D ids; not with offsets given at "
	                             "run time)");
	return pl__onnx_unsupported(m, n, why);
}

/* ONNX's sequences: a list of tensors built at run time (a Python list in
 * the forward, torch.split by a list of sizes in a loop), refused first as
 * control flow is */
static pl_status onnx_sequence(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	char why[300];
	snprintf(why, sizeof why,
	         "a sequence of tensors (%s): a list built at run time (a Python list in the "
	         "forward, such as torch.split by sizes in a loop) is not a training graph the "
	         "importer reads",
	         n->op_type);
	return pl__onnx_unsupported(m, n, why);
}

/* NonZero, NonMaxSuppression, Compress, Unique: outputs whose shape the
 * values decide */
static pl_status onnx_data_shaped(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	char why[160];
	snprintf(why, sizeof why, "a shape that depends on the data (%s): not a training graph",
	         n->op_type);
	return pl__onnx_unsupported(m, n, why);
}

/* opset 20: approximate "none" (the default) or "tanh" */
static pl_status onnx_gelu(imp *m, const Onnx__NodeProto *n, const char *name)
{
	char ap[16];
	pl__onnx_attr_str(n, "approximate", ap, sizeof ap);
	if (ap[0] && strcmp(ap, "none") && strcmp(ap, "tanh"))
		return pl__onnx_unsupported(m, n, "its approximate is neither none nor tanh");
	cJSON *at = pl__onnx_emit_unary(m, n, name, "Gelu");
	if (!strcmp(ap, "tanh"))
		cJSON_AddStringToObject(at, "approximate", "tanh");
	return PL_OK;
}

/* An Identity: of a merged weight, a param of its own (before folding: a
 * small weight's values are known); else folded, or dropped */
static pl_status onnx_identity(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	tinfo *in = pl__onnx_known(m, n->input[0]);
	/* The exporter's own name ("onnx::...", a folded copy of a weight) is a
	 * param of its own too where the merged values are all one value: the
	 * zero biases and unit scales of a model never trained, which no model
	 * ties (a tied weight's values are not one fill) */
	int fill = !strncmp(n->output[0], "onnx::", 6) && in && pl__onnx_one_fill(in->init);
	if (pl__onnx_is_param(m, n->input[0]) && (strncmp(n->output[0], "onnx::", 6) || fill) &&
	    !pl__onnx_decl(m, n->output[0])) {
		/* The exporter merges initializers of equal values (a fresh model's
		 * LayerNorm weights, all ones) and makes each other one an Identity
		 * of the kept one named as the model names that weight: they are the
		 * model's own weights, each a param as the model has them (a constant
		 * the exporter made, "onnx::...", stays one tensor) */
		cJSON *w = cJSON_Duplicate(pl__onnx_decl(m, pl__onnx_resolve(m, n->input[0])), 1);
		pl_json_add(m->tensors, n->output[0], w);
		tinfo *x = pl__onnx_known(m, n->input[0]), *o;
		if (x)
			pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		if (x && (o = pl__onnx_known(m, n->output[0])))
			o->init = x->init;
		return PL_OK;
	}
	if (!pl__onnx_fold(m, n)) /* else a constant, or a computation on shapes: folded */
		pl__onnx_drop_node(m, n);
	return PL_OK;
}

/* a training export's dropout (or --dropout keep): the planner's Dropout,
 * its ratio input 1 (an attribute before opset 12); else dropped */
static pl_status onnx_dropout(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (!pl__onnx_keep_dropout(m, n)) {
		pl__onnx_drop_node(m, n);
		return PL_OK;
	}
	double ratio;
	if (pl__onnx_dropout_ratio(m, n, &ratio))
		return pl__onnx_unsupported(m, n, "its ratio is not a constant");
	if (!(ratio >= 0 && ratio < 1))
		return pl__onnx_unsupported(m, n, "its ratio is not in [0, 1)");
	int who;
	if (n->n_output > 1 && n->output[1][0] && pl__onnx_consumers(m, n->output[1], &who, 1) > 0)
		return pl__onnx_unsupported(m, n, "its mask output is read");
	cJSON_AddNumberToObject(pl__onnx_emit_unary(m, n, name, "Dropout"), "ratio", ratio);
	return PL_OK;
}

static pl_status onnx_shape(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	return pl__onnx_unsupported(m, n,
	                            "the importer does not know its input's shape (export with "
	                            "static shapes, or --batch N for a symbolic batch)");
}

/* of a tensor computed at run time (a mask from an input); CastLike (opset
 * 15) to its second input's type */
static pl_status onnx_cast(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int like = !strcmp(n->op_type, "CastLike");
	int32_t el = !like             ? (int32_t)pl__onnx_attr_i(n, "to", 1)
	             : n->n_input == 2 ? pl__onnx_elem_of(m, n->input[1])
	                               : 0;
	if (like && !el)
		return pl__onnx_unsupported(m, n,
		                            "the element type of its second input is not known");
	const char *to = pl__onnx_dtype_name(el);
	if (!to)
		return pl__onnx_unsupported(m, n,
		                            "it casts to a type other than float32, float16, "
		                            "bfloat16, float64, int32, int64 or bool");
	cJSON_AddStringToObject(pl__onnx_emit_unary(m, n, name, "Cast"), "to", to);
	tinfo *y = pl__onnx_known(m, n->output[0]); /* its type, for the constants beside it */
	if (y && !y->nval)
		y->elem = el;
	return PL_OK;
}

/* The ONNX node whose output `name` is, or NULL */
static const Onnx__NodeProto *producer_node(const imp *m, const char *name)
{
	for (size_t i = 0; i < m->g->n_node; i++)
		for (size_t k = 0; k < m->g->node[i]->n_output; k++)
			if (!strcmp(m->g->node[i]->output[k], name))
				return m->g->node[i];
	return NULL;
}

/* SoftmaxCrossEntropyLoss (opset 12; PyTorch's export of F.cross_entropy in
 * a model that computes its loss) and NegativeLogLikelihoodLoss of a
 * LogSoftmax over the classes (F.nll_loss of F.log_softmax): the planner's
 * SoftmaxCrossEntropy of the scores, their classes [N, C, d1, ...] moved
 * last by a Transpose; reduction mean as it is, sum as the mean times the
 * positions (the LogSoftmax, read by nothing else, is dropped). Class
 * weights, an ignore_index inside [0, C) (the labels a run draws are),
 * per-position losses (reduction none) and a read log_prob output are
 * refused. */
static pl_status onnx_ce_loss(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input < 2 || !n->input[0][0] || !n->input[1][0])
		return pl__onnx_unsupported(m, n, "its scores or its labels are missing");
	const char *scores = n->input[0];
	if (!strcmp(n->op_type, "NegativeLogLikelihoodLoss")) {
		const Onnx__NodeProto *ls = producer_node(m, scores);
		tinfo *p = ls && ls->n_input == 1 ? pl__onnx_known(m, ls->input[0]) : NULL;
		int64_t ax = p ? pl__onnx_axis_of(pl__onnx_attr_i(ls, "axis", -1), p->rank) : -1;
		if (!p || strcmp(ls->op_type, "LogSoftmax") || ax != 1 ||
		    pl__onnx_consumers(m, scores, NULL, 0) != 1)
			return pl__onnx_unsupported(m, n,
			                            "its input is not a LogSoftmax over the "
			                            "classes (dimension 1) read by it "
			                            "alone (F.nll_loss of F.log_softmax)");
		scores = ls->input[0];
	}
	tinfo *x = pl__onnx_known(m, scores);
	if (!x || x->rank < 2 || x->rank > 15 || x->dims[1] < 1)
		return pl__onnx_unsupported(m, n, "its scores' shape is not known as [N, C, ...]");
	if (n->n_input > 2 && n->input[2][0])
		return pl__onnx_unsupported(m, n, "it weights the classes");
	int read =
	    n->n_output > 1 && n->output[1][0] && pl__onnx_consumers(m, n->output[1], NULL, 0);
	for (size_t i = 0; n->n_output > 1 && n->output[1][0] && i < m->g->n_output; i++)
		read |= m->g->output[i]->name && !strcmp(m->g->output[i]->name, n->output[1]);
	if (read)
		return pl__onnx_unsupported(m, n, "its log_prob output is read");
	char red[16];
	pl__onnx_attr_str(n, "reduction", red, sizeof red);
	if (red[0] && strcmp(red, "mean") && strcmp(red, "sum"))
		return pl__onnx_unsupported(
		    m, n,
		    "its reduction none (a loss per position) is not supported "
		    "yet: mean and sum are");
	const Onnx__AttributeProto *ig = pl__onnx_attr(n, "ignore_index");
	if (ig && ig->has_i && ig->i >= 0 && ig->i < x->dims[1])
		return pl__onnx_unsupported(
		    m, n, "its ignore_index is a class (the labels a run draws lie in [0, C))");
	int sum = !strcmp(red, "sum");
	char logits[600], mean[600], count[600];
	snprintf(logits, sizeof logits, "%s.classes_last", name);
	snprintf(mean, sizeof mean, "%s.mean", name);
	const char *y = scores;
	if (x->rank > 2) {
		int64_t perm[16], dims[16];
		int k = 0;
		perm[k++] = 0;
		for (int d = 2; d < x->rank; d++)
			perm[k++] = d;
		perm[k++] = 1;
		for (int d = 0; d < x->rank; d++)
			dims[d] = x->dims[perm[d]];
		y = pl__onnx_emit_shaped(m, logits, "Transpose", scores, logits, "perm", perm,
		                         x->rank);
		pl__onnx_set_info(m, logits, x->rank, dims, 0, NULL);
	}
	double positions = (double)pl__onnx_elems(x) / (double)x->dims[1];
	if (sum && emit_scalar(m, name, "positions", NULL, positions, count, sizeof count))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	/* the labels an operand: a constant's (F.cross_entropy against a fixed
	 * target, exported as a Constant) declared with its integer type */
	cJSON *o = pl__onnx_add_op(m, sum ? mean : name, "SoftmaxCrossEntropy");
	pl__onnx_io(m, o, "inputs", y);
	pl__onnx_operand(m, o, n->input[1]);
	pl__onnx_io(m, o, "outputs", sum ? mean : n->output[0]);
	if (sum)
		pl__onnx_emit_binary(m, name, "Mul", mean, count, n->output[0]);
	int64_t one = 1;
	pl__onnx_set_info(m, n->output[0], 0, &one, 0, NULL);
	return PL_OK;
}

static pl_status onnx_attention(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *why = pl__onnx_import_attention(m, n, name);
	return why ? pl__onnx_unsupported(m, n, why) : PL_OK;
}

static pl_status onnx_groupnorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int gr = pl__onnx_import_groupnorm(m, n, name);
	if (gr == -2)
		return pl__onnx_unsupported(
		    m, n,
		    "its input's sizes (a group's channels times positions) "
		    "overflow 64 bits");
	if (gr)
		return pl__onnx_unsupported(
		    m, n,
		    "its input's shape is not known, or num_groups does not "
		    "divide its channels, or its scale has neither a group's "
		    "nor a channel's count of elements");
	return PL_OK;
}

/* opset 17's LayerNormalization and opset 23's RMSNormalization (x /
 * sqrt(mean(x^2) + epsilon) times its scale; its stash_type, the float32
 * the statistics are kept in, is how the planner computes them anyway) as
 * the planner's, over the axes from axis on (nn.LayerNorm([H, W]): the last
 * two). RMSNormalization has no bias, and its scale is required. */
static pl_status onnx_norm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int rms = !strcmp(n->op_type, "RMSNormalization");
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int64_t axis = x ? pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", -1), x->rank) : -1;
	if (!x || axis < 1 || axis >= x->rank)
		return pl__onnx_unsupported(m, n,
		                            x ? "its axis is not one after the first (the batch's) "
		                                "of its input"
		                              : "its input's shape is not known");
	char scale[600];
	int given = n->n_input > 1 && n->input[1][0];
	if (!given && rms)
		return pl__onnx_unsupported(m, n, "it has no scale (ONNX requires one)");
	if (!given && axis != x->rank - 1)
		return pl__onnx_unsupported(m, n, "it has no scale, and more than the last axis");
	const char *g =
	    given ? n->input[1]
	          : pl__onnx_const_scale(m, name, x, scale, sizeof scale); /* none given */
	if (!g)
		return pl__onnx_unsupported(m, n, "its scale's name is taken");
	cJSON *o = pl__onnx_add_op(m, name, rms ? "RMSNormalization" : "LayerNormalization");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "inputs", g);
	if (!rms && n->n_input > 2 && n->input[2][0])
		pl__onnx_io(m, o, "inputs", n->input[2]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", axis == x->rank - 1 ? -1 : (double)axis);
	cJSON_AddNumberToObject(at, "epsilon", pl__onnx_attr_f(n, "epsilon", 1e-5));
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

static pl_status onnx_reshape(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (pl__onnx_shape_op(m, n, name, "Reshape", NULL))
		return pl__onnx_unsupported(
		    m, n, "its target shape is not a constant the importer can fold");
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* Node i, when it begins a LayerNorm, an RMSNorm or a Gelu written out in
 * primitive ops: the fused op emitted (1), else 0 */
static int onnx_fused(imp *m, int i, pl_status *st)
{
	const Onnx__NodeProto *n = m->g->node[i];
	const char *gamma, *beta = NULL;
	double eps;
	int ln = pl__onnx_layernorm_at(m, i, &gamma, &beta, &eps);
	if (ln >= 0) {
		*st =
		    pl__onnx_emit_norm(m, n->input[0], ln, "LayerNormalization", gamma, beta, eps);
		return 1;
	}
	int rms = pl__onnx_rmsnorm_at(m, i, &gamma, &eps);
	if (rms >= 0) {
		*st = pl__onnx_emit_norm(m, n->input[0], rms, "RMSNormalization", gamma, NULL, eps);
		return 1;
	}
	int q = pl__onnx_gelu_at(m, i), tanh_form = 0;
	if (q < 0 && (q = pl__onnx_gelu_tanh_at(m, i)) >= 0) {
		n = m->g->node[i]; /* named after the final node, reading the Pow's x */
		tanh_form = 1;
	}
	if (q < 0)
		return 0;
	/* named after the node that ends it */
	const Onnx__NodeProto *last = m->g->node[q];
	cJSON *o =
	    pl__onnx_add_op(m, last->name && last->name[0] ? last->name : last->output[0], "Gelu");
	if (tanh_form)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "attrs"), "approximate", "tanh");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", m->g->node[q]->output[0]);
	m->skip[q] = 1;
	tinfo *x = pl__onnx_known(m, n->input[0]);
	if (x)
		pl__onnx_set_info(m, m->g->node[q]->output[0], x->rank, x->dims, 0, NULL);
	*st = PL_OK;
	return 1;
}

/* torch pads to a multiple: here by 0, dropped; zeros before a Conv or
 * AveragePool: its padding */
static pl_status onnx_pad(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (pl__onnx_pads_nothing(m, n)) {
		pl__onnx_drop_node(m, n);
		return PL_OK;
	}
	const char *why;
	return pl__onnx_fold_pad(m, n) && pl__onnx_import_pad(m, n, name, &why)
	           ? pl__onnx_unsupported(m, n, why)
	           : PL_OK;
}

/* An op the planner has under the ONNX op's name, of the node's inputs and
 * outputs and the attributes axis, perm, axes and keepdims it has */
static pl_status onnx_same(imp *m, const Onnx__NodeProto *n, const char *name)
{
	cJSON *o = pl__onnx_add_op(m, name, n->op_type);
	for (size_t a = 0; a < n->n_input; a++)
		pl__onnx_operand(m, o, n->input[a]);
	for (size_t a = 0; a < n->n_output; a++)
		pl__onnx_io(m, o, "outputs", n->output[a]);
	cJSON *at = cJSON_CreateObject();
	const Onnx__AttributeProto *p;
	if ((p = pl__onnx_attr(n, "axis")))
		cJSON_AddNumberToObject(at, "axis", (double)p->i);
	if ((p = pl__onnx_attr(n, "perm")))
		pl_json_add(at, "perm", pl__onnx_int_list(p->ints, p->n_ints));
	if ((p = pl__onnx_attr(n, "axes")))
		pl_json_add(at, "axes", pl__onnx_int_list(p->ints, p->n_ints));
	if ((p = pl__onnx_attr(n, "keepdims")))
		cJSON_AddNumberToObject(at, "keepdims", (double)p->i);
	if (cJSON_GetArraySize(at))
		pl_json_add(o, "attrs", at);
	else
		cJSON_Delete(at);
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* MatMul; one with a vector operand (x @ v, torch.mv, torch.dot) as numpy
 * defines it: the vector made a matrix ([1, K] on the left, [K, 1] on the
 * right; Reshapes), the MatMul, and the dimension added dropped (a
 * Reshape) */
static pl_status onnx_matmul(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *a = pl__onnx_known(m, n->input[0]),
	      *b = n->n_input == 2 ? pl__onnx_known(m, n->input[1]) : NULL;
	if (!a || !b || (a->rank != 1 && b->rank != 1))
		return onnx_same(m, n, name);
	if (a->rank < 1 || b->rank < 1)
		return pl__onnx_unsupported(m, n,
		                            "an operand is a scalar (ONNX's MatMul takes none)");
	tinfo ma = *a, mb = *b; /* the operands as matrices */
	char nm[600], t[600];
	const char *x = n->input[0], *y = n->input[1];
	if (a->rank == 1) {
		ma.rank = 2, ma.dims[0] = 1, ma.dims[1] = a->dims[0];
		snprintf(nm, sizeof nm, "%s.row", name);
		snprintf(t, sizeof t, "%s.row", n->output[0]);
		x = pl__onnx_emit_reshape(m, nm, x, ma.dims, 2, t);
	}
	if (b->rank == 1) {
		mb.rank = 2, mb.dims[0] = b->dims[0], mb.dims[1] = 1;
		snprintf(nm, sizeof nm, "%s.column", name);
		snprintf(t, sizeof t, "%s.column", n->output[0]);
		y = pl__onnx_emit_reshape(m, nm, y, mb.dims, 2, t);
	}
	tinfo ba = ma, bb = mb; /* the batch dimensions broadcast */
	ba.rank -= 2;
	bb.rank -= 2;
	int64_t dims[16];
	int r = pl__onnx_broadcast(&ba, &bb, dims);
	if (r < 0 || r + 2 > 16)
		return pl__onnx_unsupported(m, n,
		                            "its operands' batch dimensions do not broadcast");
	dims[r] = ma.dims[ma.rank - 2];
	dims[r + 1] = mb.dims[mb.rank - 1];
	snprintf(nm, sizeof nm, "%s.mm", name);
	snprintf(t, sizeof t, "%s.mm", n->output[0]);
	cJSON *o = pl__onnx_add_op(m, nm, "MatMul");
	pl__onnx_operand(m, o, x);
	pl__onnx_operand(m, o, y);
	pl__onnx_io(m, o, "outputs", t);
	const char *mm = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0)->valuestring;
	pl__onnx_set_info(m, mm, r + 2, dims, 0, NULL);
	int64_t out[16];
	int k = 0;
	for (int d = 0; d < r + 2; d++)
		if (!(d == r && a->rank == 1) && !(d == r + 1 && b->rank == 1))
			out[k++] = dims[d];
	if (k == 0) /* a dot product: ONNX's scalar, [1] here (the model has no rank 0) */
		out[k++] = 1;
	pl__onnx_emit_reshape(m, name, mm, out, k, n->output[0]);
	return PL_OK;
}

/* constant indices into a tensor (ViT's x[:, 0]; Swin's relative position
 * index, reshaped): an int64 const of their shape (a scalar's is [], and
 * the axis goes); else the planner's Gather */
static pl_status onnx_gather(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (!(n->n_input == 2 && pl__onnx_constlike(m, n->input[1]) &&
	      !pl__onnx_decl(m, n->input[1])))
		return onnx_same(m, n, name);
	tinfo *ix = pl__onnx_constlike(m, n->input[1]);
	cJSON *c = cJSON_CreateObject();
	pl_json_add(c, "shape", pl__onnx_int_list(ix->dims, (size_t)ix->rank));
	cJSON_AddStringToObject(c, "dtype", "int64");
	cJSON_AddStringToObject(c, "role", "const");
	if (ix->nval > 0 && ix->nval == pl__onnx_elems(ix))
		pl__onnx_const_values(c, ix->val, ix->nval, 0);
	pl_json_add(m->tensors, n->input[1], c);
	cJSON *o = pl__onnx_add_op(m, name, "Gather");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "inputs", n->input[1]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis",
	                        (double)pl__onnx_attr_i(n, "axis", 0));
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* of a tensor (on shapes it is folded) */
static pl_status onnx_expand(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo tg = {0}, *x = pl__onnx_known(m, n->input[0]);
	if (pl__onnx_shape_op(m, n, name, "Expand", &tg))
		return pl__onnx_unsupported(m, n,
		                            "its shape is not a constant the importer can fold");
	int64_t dims[16];
	int r = x ? pl__onnx_broadcast(x, &tg, dims) : -1;
	if (r >= 0)
		pl__onnx_set_info(m, n->output[0], r, dims, 0, NULL);
	return PL_OK;
}

/* A slice assignment on a tensor (x[a:b] = y: Swin v2 zeroes the key's third
 * of its q, k, v bias so): ScatterND without reduction whose indices are
 * constants [n, 1] naming rows a, a+1, ..., a+n-1 of its data, updates of
 * those rows' shape. A Concat along axis 0 of the data's rows before, the
 * updates and the rows after (Slices of the data); other ScatterNDs on
 * tensors are refused (on constants they fold) */
static pl_status onnx_scatternd(imp *m, const Onnx__NodeProto *n, const char *name)
{
	char red[16];
	pl__onnx_attr_str(n, "reduction", red, sizeof red);
	tinfo *x = n->n_input == 3 ? pl__onnx_known(m, n->input[0]) : NULL,
	      *ix = n->n_input == 3 ? pl__onnx_valued(m, n->input[1]) : NULL,
	      *u = n->n_input == 3 ? pl__onnx_known(m, n->input[2]) : NULL;
	const char *why;
	if (!x || !ix || !u || (red[0] && strcmp(red, "none")) || x->rank < 1 || ix->rank != 2 ||
	    ix->dims[1] != 1 || ix->nval != ix->dims[0] || ix->nval < 1 || u->rank != x->rank ||
	    u->dims[0] != ix->nval)
		return pl__onnx_import_scatter_rows(m, n, name, &why)
		           ? pl__onnx_unsupported(m, n, why)
		           : PL_OK;
	int64_t rows = x->dims[0], a = pl__onnx_to_i64(ix->val[0]);
	if (a < 0)
		a += rows;
	int64_t b = a + ix->nval; /* rows [a, b) */
	int ok = a >= 0 && b <= rows;
	for (int d = 1; d < x->rank; d++)
		ok &= u->dims[d] == x->dims[d];
	for (int64_t i = 1; ok && i < ix->nval; i++)
		ok = pl__onnx_to_i64(ix->val[i]) == pl__onnx_to_i64(ix->val[0]) + i;
	if (!ok) /* scattered rows */
		return pl__onnx_import_scatter_rows(m, n, name, &why)
		           ? pl__onnx_unsupported(m, n, why)
		           : PL_OK;
	char part[2][600];
	const int64_t lo[2] = {0, b}, hi[2] = {a, rows}, axis = 0;
	cJSON *cat = NULL;
	for (int k = 0; k < 2; k++) {
		if (hi[k] <= lo[k])
			continue;
		snprintf(part[k], sizeof part[k], "%s.%s", n->output[0], k ? "after" : "before");
		pl__onnx_slice_op(m, part[k], n->input[0], part[k], x, 1, &axis, &lo[k], &hi[k]);
		if (!k) { /* the Concat after the rows before it */
			cat = pl__onnx_add_op(m, name, "Concat");
			pl__onnx_io(m, cat, "inputs", part[0]);
		}
	}
	if (!cat && b == rows) { /* the whole tensor assigned: the updates */
		pl__onnx_alias(m, n->output[0], n->input[2]);
		pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		return PL_OK;
	}
	if (!cat)
		cat = pl__onnx_add_op(m, name, "Concat");
	pl__onnx_operand(m, cat, n->input[2]);
	if (b < rows)
		pl__onnx_io(m, cat, "inputs", part[1]);
	pl__onnx_io(m, cat, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(cat, "attrs"), "axis", 0);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* of tensors (on shapes it is folded) */
static pl_status onnx_concat(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL;
	if (!x)
		return pl__onnx_unsupported(m, n, "its first input's shape is not known");
	int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), x->rank), dims[16];
	if (ax < 0 || ax >= x->rank)
		return pl__onnx_unsupported(m, n, "its axis is out of range");
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[ax] = 0;
	/* more inputs than an op takes (DenseNet's, Inception's): a chain,
	 * each link the previous one's output and the next four inputs */
	char link[600];
	const char *prev = NULL; /* the last link's output: the op keeps its copy */
	for (size_t k = 0, part = 0; k < n->n_input; part++) {
		int last = n->n_input - k <= PL_ONNX_MAX_CONCAT - (part > 0);
		if (!last)
			snprintf(link, sizeof link, "%s.part%zu", n->output[0], part);
		cJSON *o = pl__onnx_add_op(m, last ? name : link, "Concat");
		if (part)
			pl__onnx_io(m, o, "inputs", prev);
		for (int j = part > 0; j < PL_ONNX_MAX_CONCAT && k < n->n_input; j++, k++) {
			tinfo *xi = pl__onnx_known(m, n->input[k]);
			if (xi && xi->rank == x->rank)
				dims[ax] += xi->dims[ax];
			pl__onnx_operand(m, o, n->input[k]);
		}
		pl__onnx_io(m, o, "outputs", last ? n->output[0] : link);
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", (double)ax);
		if (!last) { /* (the name as the op holds it) */
			prev =
			    cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0)->valuestring;
			pl__onnx_set_info(m, prev, x->rank, dims, 0, NULL);
		}
	}
	pl__onnx_set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return PL_OK;
}

/* of a tensor: a Reshape */
static pl_status onnx_unsqueeze(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]), *o;
	if (!x || pl__onnx_fold_unsqueeze(m, n, x) || !(o = pl__onnx_known(m, n->output[0])))
		return pl__onnx_unsupported(m, n, "its input's shape or its axes are not known");
	/* computed at run time (of a trained weight whose few values the file
	 * holds, too): its shape alone, never values a later op would fold */
	pl__onnx_set_info(m, n->output[0], o->rank, o->dims, 0, NULL);
	cJSON *op = pl__onnx_add_op(m, name, "Reshape");
	pl__onnx_io(m, op, "inputs", n->input[0]);
	pl__onnx_io(m, op, "outputs", n->output[0]);
	/* axis 1 squeezed out: dimension 0 copied (0) and the one moving into
	 * its place inferred (-1), so that the batch, at either (a recurrent
	 * layer's Y is [steps, directions, batch, hidden]), follows a
	 * micro-batch's (which cuts a Reshape's dimension 0 alone) */
	int64_t dims[16];
	memcpy(dims, o->dims, sizeof(int64_t) * (size_t)o->rank);
	if (x->rank > 1 && o->rank == x->rank - 1 && x->dims[0] == o->dims[0] && x->dims[1] == 1 &&
	    o->dims[1] != 1) {
		dims[0] = 0;
		dims[1] = -1;
	}
	pl_json_add(cJSON_AddObjectToObject(op, "attrs"), "shape",
	            pl__onnx_int_list(dims, (size_t)o->rank));
	return PL_OK;
}

/* HardSigmoid and HardSwish, ONNX's defaults where the node gives none */
static pl_status onnx_hard(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int swish = !strcmp(n->op_type, "HardSwish");
	cJSON *o = pl__onnx_add_op(m, name, n->op_type);
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "alpha", swish ? 1.0 / 6 : pl__onnx_attr_f(n, "alpha", 0.2));
	cJSON_AddNumberToObject(at, "beta", swish ? 0.5 : pl__onnx_attr_f(n, "beta", 0.5));
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* LeakyRelu, Elu, Selu, Celu: alpha (and Selu's gamma) */
static pl_status onnx_alpha(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *t = n->op_type;
	pl_optype ty = PL_OP_COUNT;
	pl_attrs d = {0};
	pl_optype_parse(t, &ty);
	pl_attrs_default(ty, &d); /* ONNX's, where the node gives none */
	double a = pl__onnx_attr_f(n, "alpha", d.alpha);
	if (!strcmp(t, "Celu") && !(a != 0))
		return pl__onnx_unsupported(m, n, "its alpha is 0");
	cJSON *at = pl__onnx_emit_unary(m, n, name, t);
	cJSON_AddNumberToObject(at, "alpha", a);
	if (!strcmp(t, "Selu"))
		cJSON_AddNumberToObject(at, "gamma", pl__onnx_attr_f(n, "gamma", d.gamma));
	return PL_OK;
}

/* A constant of one element, `value`, of dtype ("int64", or NULL: the
 * model's float), declared as name.suffix (its name in buf); -1 when that
 * name is taken */
static int emit_scalar(imp *m, const char *name, const char *suffix, const char *dtype,
                       double value, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s", name, suffix);
	if (pl__onnx_decl(m, buf))
		return -1;
	cJSON *c = cJSON_CreateObject();
	int64_t one = 1;
	pl_json_add(c, "shape", pl__onnx_int_list(&one, 1));
	if (dtype)
		cJSON_AddStringToObject(c, "dtype", dtype);
	cJSON_AddStringToObject(c, "role", "const");
	pl__onnx_const_values(c, NULL, 1, value);
	pl_json_add(m->tensors, buf, c);
	return 0;
}

/* Not of mask `in` into out (op `name`): Equal to an int64 0 declared as
 * name.zero; -1 when that name is taken */
static int emit_not(imp *m, const char *name, const char *in, const char *out)
{
	char zero[600];
	if (emit_scalar(m, name, "zero", "int64", 0, zero, sizeof zero))
		return -1;
	pl__onnx_emit_binary(m, name, "Equal", in, zero, out);
	return 0;
}

/* GreaterOrEqual and LessOrEqual at run time: Not of Less and of Greater */
static pl_status onnx_or_equal(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 2)
		return pl__onnx_unsupported(m, n, "not of two inputs");
	char strict[600];
	snprintf(strict, sizeof strict, "%s.strict", name);
	cJSON *o =
	    pl__onnx_add_op(m, strict, !strcmp(n->op_type, "GreaterOrEqual") ? "Less" : "Greater");
	pl__onnx_operand(m, o, n->input[0]);
	pl__onnx_operand(m, o, n->input[1]);
	pl__onnx_io(m, o, "outputs", strict);
	if (emit_not(m, name, strict, n->output[0]))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* IsNaN (x differs from itself: Not of Equal(x, x)) and IsInf (Equal of
 * |x| to +inf, or of x to one infinity with detect_negative or
 * detect_positive 0; neither: Less(x, x), all 0): masks, without gradient */
static pl_status onnx_isnan_isinf(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 1)
		return pl__onnx_unsupported(m, n, "not of one input");
	const char *x = n->input[0];
	char a[600], inf[600];
	if (!strcmp(n->op_type, "IsNaN")) {
		snprintf(a, sizeof a, "%s.same", name);
		pl__onnx_emit_binary(m, a, "Equal", x, x, a);
		if (emit_not(m, name, a, n->output[0]))
			return pl__onnx_unsupported(m, n, "its constant's name is taken");
	} else {
		int neg = pl__onnx_attr_i(n, "detect_negative", 1) != 0,
		    pos = pl__onnx_attr_i(n, "detect_positive", 1) != 0;
		if (!neg && !pos) {
			pl__onnx_emit_binary(m, name, "Less", x, x, n->output[0]);
			pl__onnx_infer(m, n);
			return PL_OK;
		}
		/* the infinity of x's type (a float64 one after PyTorch's Cast to double) */
		int32_t xe = pl__onnx_elem_of(m, x);
		const char *xd = xe ? pl__onnx_dtype_name(xe) : NULL;
		if (emit_scalar(m, name, "inf", xd && strncmp(xd, "int", 3) ? xd : NULL,
		                pos ? INFINITY : -INFINITY, inf, sizeof inf))
			return pl__onnx_unsupported(m, n, "its constant's name is taken");
		snprintf(a, sizeof a, "%s.abs", name);
		if (neg && pos)
			pl__onnx_emit_unary_op(m, a, "Abs", x, a);
		pl__onnx_emit_binary(m, name, "Equal", neg && pos ? a : x, inf, n->output[0]);
	}
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* Mod of float tensors at run time: x - T(x / y) y, T Floor (fmod 0, the
 * divisor's sign, Python's %) or truncation (fmod 1, C's fmod: Sign times
 * Floor of Abs); the quotient's steps are flat, so the gradient is 1 to x and
 * -T(x / y) to y, as PyTorch's remainder and fmod */
static pl_status onnx_mod(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 2)
		return pl__onnx_unsupported(m, n, "not of two inputs");
	for (int i = 0; i < 2; i++) {
		tinfo *t = pl__onnx_known(m, n->input[i]);
		if (t && (t->elem == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
		          t->elem == ONNX__TENSOR_PROTO__DATA_TYPE__INT32))
			return pl__onnx_unsupported(m, n, "a Mod of integers at run time");
	}
	int fmod = pl__onnx_attr_i(n, "fmod", 0) != 0;
	char q[600], a[600], f[600], s[600], t[600], ty[600];
	snprintf(q, sizeof q, "%s.quotient", name);
	snprintf(a, sizeof a, "%s.abs", name);
	snprintf(f, sizeof f, "%s.floor", name);
	snprintf(s, sizeof s, "%s.sign", name);
	snprintf(t, sizeof t, "%s.trunc", name);
	snprintf(ty, sizeof ty, "%s.times", name);
	cJSON *o = pl__onnx_add_op(m, q, "Div");
	pl__onnx_operand(m, o, n->input[0]);
	pl__onnx_operand(m, o, n->input[1]);
	pl__onnx_io(m, o, "outputs", q);
	if (fmod) {
		pl__onnx_emit_unary_op(m, a, "Abs", q, a);
		pl__onnx_emit_unary_op(m, f, "Floor", a, f);
		pl__onnx_emit_unary_op(m, s, "Sign", q, s);
		pl__onnx_emit_binary(m, t, "Mul", s, f, t);
	} else {
		pl__onnx_emit_unary_op(m, t, "Floor", q, t);
	}
	o = pl__onnx_add_op(m, ty, "Mul");
	pl__onnx_io(m, o, "inputs", t);
	pl__onnx_operand(m, o, n->input[1]);
	pl__onnx_io(m, o, "outputs", ty);
	o = pl__onnx_add_op(m, name, "Sub");
	pl__onnx_operand(m, o, n->input[0]);
	pl__onnx_io(m, o, "inputs", ty);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* Trilu of a tensor at run time (torch.tril, triu on activations): x times a
 * constant mask of its last two dimensions, 1 on and below (upper 0) or on
 * and above (upper 1) diagonal k (input 1, a constant; 0) */
static pl_status onnx_trilu(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	double k = 0;
	if (n->n_input > 1 && n->input[1][0] && pl__onnx_scalar_of(m, n->input[1], &k))
		return pl__onnx_unsupported(m, n, "its diagonal k is not a constant");
	if (!x || x->rank < 2)
		return pl__onnx_unsupported(m, n, "its input's shape is not known");
	int64_t r = x->dims[x->rank - 2], c = x->dims[x->rank - 1], kk = pl__onnx_to_i64(k);
	if (r < 1 || c < 1 || r > MAX_VALUES / c)
		return pl__onnx_unsupported(m, n, "its mask would be past the bound on a constant's values");
	char mask[600];
	snprintf(mask, sizeof mask, "%s.mask", name);
	if (pl__onnx_decl(m, mask))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	double *v = pl__onnx_scratch(m, r * c);
	if (!v)
		return pl__onnx_unsupported(m, n, "out of memory");
	int upper = pl__onnx_attr_i(n, "upper", 1) != 0;
	for (int64_t i = 0; i < r; i++)
		for (int64_t j = 0; j < c; j++)
			v[i * c + j] = upper ? j - i >= kk : j - i <= kk;
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", pl__onnx_int_list(&x->dims[x->rank - 2], 2));
	cJSON_AddStringToObject(t, "role", "const");
	pl__onnx_const_values(t, v, r * c, 0);
	pl_json_add(m->tensors, mask, t);
	cJSON *o = pl__onnx_add_op(m, name, "Mul");
	pl__onnx_operand(m, o, n->input[0]);
	pl__onnx_io(m, o, "inputs", mask);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* Sum, Mean, Max and Min of any number of inputs (numpy broadcasting): a
 * chain of Adds (Mean's times 1/n) or of Maxes or Mins; of two, one op (Max
 * and Min as before); of one, the input itself */
static pl_status onnx_variadic(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *t = n->op_type;
	int mean = !strcmp(t, "Mean"), k = (int)n->n_input;
	const char *bin = !strcmp(t, "Max") ? "Max" : !strcmp(t, "Min") ? "Min" : "Add";
	if (k < 1 || n->n_output != 1)
		return pl__onnx_unsupported(m, n, "not of one or more inputs and one output");
	if (k == 1) {
		pl__onnx_drop_node(m, n);
		pl__onnx_infer(m, n);
		return PL_OK;
	}
	char acc[600] = "", step[600], scale[600];
	for (int i = 1; i < k; i++) {
		int last = i == k - 1 && !mean;
		snprintf(step, sizeof step, "%s.%d", name, i);
		cJSON *o = pl__onnx_add_op(m, last ? name : step, bin);
		if (i == 1)
			pl__onnx_operand(m, o, n->input[0]);
		else
			pl__onnx_io(m, o, "inputs", acc);
		pl__onnx_operand(m, o, n->input[i]);
		pl__onnx_io(m, o, "outputs", last ? n->output[0] : step);
		snprintf(acc, sizeof acc, "%s", step);
	}
	if (mean) {
		if (emit_scalar(m, name, "scale", NULL, 1.0 / k, scale, sizeof scale))
			return pl__onnx_unsupported(m, n, "its constant's name is taken");
		pl__onnx_emit_binary(m, name, "Mul", acc, scale, n->output[0]);
	}
	/* the output's shape: every input's broadcast */
	tinfo all = {.known = 1}, *x;
	int ok = (x = pl__onnx_known(m, n->input[0])) != NULL;
	if (ok) {
		all.rank = x->rank;
		memcpy(all.dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	}
	for (int i = 1; ok && i < k; i++) {
		tinfo b = all;
		ok = (x = pl__onnx_known(m, n->input[i])) != NULL &&
		     (all.rank = pl__onnx_broadcast(&b, x, all.dims)) >= 0;
	}
	if (ok)
		pl__onnx_set_info(m, n->output[0], all.rank, all.dims, 0, NULL);
	return PL_OK;
}

/* Max and Min: of two, the planner's op (onnx_same); of one or more than
 * two, a chain (onnx_variadic) */
static pl_status onnx_minmax(imp *m, const Onnx__NodeProto *n, const char *name)
{
	return n->n_input == 2 ? onnx_same(m, n, name) : onnx_variadic(m, n, name);
}

/* Where op `opname`: c ? x : y into out */
static void emit_where(imp *m, const char *opname, const char *c, const char *x, const char *y,
                       const char *out)
{
	cJSON *o = pl__onnx_add_op(m, opname, "Where");
	pl__onnx_io(m, o, "inputs", c);
	pl__onnx_io(m, o, "inputs", x);
	pl__onnx_io(m, o, "inputs", y);
	pl__onnx_io(m, o, "outputs", out);
}

/* ThresholdedRelu (x above alpha, else 0) and Shrink (x - bias above
 * lambd, x + bias below -lambd, else 0): Wheres on Greater and Less of
 * constants */
static pl_status onnx_threshold(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 1)
		return pl__onnx_unsupported(m, n, "not of one input");
	const char *x = n->input[0];
	int shrink = !strcmp(n->op_type, "Shrink");
	double at = shrink ? pl__onnx_attr_f(n, "lambd", 0.5) : pl__onnx_attr_f(n, "alpha", 1.0),
	       bias = shrink ? pl__onnx_attr_f(n, "bias", 0) : 0;
	char hi[600], lo[600], zero[600], b[600], above[600], below[600], up[600], down[600],
	    inner[600];
	if (emit_scalar(m, name, "hi", NULL, at, hi, sizeof hi) ||
	    emit_scalar(m, name, "zero", NULL, 0, zero, sizeof zero) ||
	    (shrink && (emit_scalar(m, name, "lo", NULL, -at, lo, sizeof lo) ||
	                emit_scalar(m, name, "bias", NULL, bias, b, sizeof b))))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	snprintf(above, sizeof above, "%s.above", name);
	pl__onnx_emit_binary(m, above, "Greater", x, hi, above);
	if (!shrink) {
		emit_where(m, name, above, x, zero, n->output[0]);
		pl__onnx_infer(m, n);
		return PL_OK;
	}
	snprintf(below, sizeof below, "%s.below", name);
	snprintf(up, sizeof up, "%s.minus", name);
	snprintf(down, sizeof down, "%s.plus", name);
	snprintf(inner, sizeof inner, "%s.inner", name);
	pl__onnx_emit_binary(m, below, "Less", x, lo, below);
	pl__onnx_emit_binary(m, up, "Sub", x, b, up);
	pl__onnx_emit_binary(m, down, "Add", x, b, down);
	emit_where(m, inner, below, down, zero, inner);
	emit_where(m, name, above, up, inner, n->output[0]);
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* LpNormalization: x over its L1 (p 1) or L2 (p 2) norm along axis, kept */
static pl_status onnx_lpnorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int64_t p = pl__onnx_attr_i(n, "p", 2);
	int64_t ax = x ? pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", -1), x->rank) : -1;
	if (!x || ax < 0 || ax >= x->rank)
		return pl__onnx_unsupported(m, n, "its input's shape or axis is not known");
	if (p != 1 && p != 2)
		return pl__onnx_unsupported(m, n, "its p is neither 1 nor 2");
	char a[600], s[600], r[600];
	snprintf(a, sizeof a, "%s.%s", name, p == 1 ? "abs" : "square");
	snprintf(s, sizeof s, "%s.sum", name);
	snprintf(r, sizeof r, "%s.norm", name);
	pl__onnx_emit_binary(m, a, p == 1 ? "Abs" : "Mul", n->input[0], p == 1 ? NULL : n->input[0],
	                     a);
	pl__onnx_emit_reduce(m, s, "ReduceSum", a, p == 1 ? r : s, &ax, 1, 1);
	if (p == 2)
		pl__onnx_emit_unary_op(m, r, "Sqrt", s, r);
	pl__onnx_emit_binary(m, name, "Div", n->input[0], r, n->output[0]);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* names[i] = "name.sfx[i]", for the n names a decomposition emits */
#define SUB_NAME 600
static void sub_names(char (*names)[SUB_NAME], const char *name, const char *const *sfx, int n)
{
	for (int i = 0; i < n; i++)
		snprintf(names[i], SUB_NAME, "%s.%s", name, sfx[i]);
}

/* op `opname`: `in` to the constant power e, into out */
static void emit_pow(imp *m, const char *opname, const char *in, const char *out, double e)
{
	cJSON *o = pl__onnx_add_op(m, opname, "Pow");
	pl__onnx_io(m, o, "inputs", in);
	pl__onnx_io(m, o, "outputs", out);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "exponent", e);
}

/* LRN (Caffe's local response normalization; AlexNet, GoogLeNet and
 * ZFNet as the ONNX model zoo holds them): y = x / (bias + alpha/size *
 * sum of x^2 over the size channels around each one)^beta, the window
 * floor((size-1)/2) channels before and ceil((size-1)/2) after, cut at the
 * ends (ONNX's definition). In the planner's ops: x*x, reshaped to
 * [N, 1, C, rest] so that an AveragePool of [size, 1] with those pads,
 * counting the padding, gives sum/size; reshaped back, times alpha, plus
 * bias, to the power beta, x over it */
static pl_status onnx_lrn(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input == 1 ? pl__onnx_known(m, n->input[0]) : NULL;
	if (!x || x->rank < 3 || x->rank > 15)
		return pl__onnx_unsupported(m, n, "its input's shape is not known as [N, C, ...]");
	int64_t size = pl__onnx_attr_i(n, "size", 0), rest = 1;
	if (size < 1 || size > (1 << 20))
		return pl__onnx_unsupported(m, n, "its size is not a positive window of channels");
	for (int d = 2; d < x->rank; d++)
		if (__builtin_mul_overflow(rest, x->dims[d], &rest) || rest > BIG)
			return pl__onnx_unsupported(m, n, "its input has more than 2^40 positions");
	enum { SQ, CHANNELS, WINDOW, MEAN, SCALED, BASE, DEN, NNAMES };
	static const char *const sfx[NNAMES] = {"square", "channels", "window",     "mean",
	                                        "scaled", "base",     "denominator"};
	char nm[NNAMES][SUB_NAME], alpha[SUB_NAME], bias[SUB_NAME];
	if (emit_scalar(m, name, "alpha", NULL, pl__onnx_attr_f(n, "alpha", 1e-4), alpha,
	                sizeof alpha) ||
	    emit_scalar(m, name, "bias", NULL, pl__onnx_attr_f(n, "bias", 1), bias, sizeof bias))
		return pl__onnx_unsupported(m, n, "its constants' names are taken");
	sub_names(nm, name, sfx, NNAMES);
	int64_t flat[4] = {x->dims[0], 1, x->dims[1], rest};
	int64_t k[2] = {size, 1}, one[2] = {1, 1}, pads[4] = {(size - 1) / 2, 0, size / 2, 0};
	pl__onnx_emit_binary(m, nm[SQ], "Mul", n->input[0], n->input[0], nm[SQ]);
	pl__onnx_emit_reshape(m, nm[CHANNELS], nm[SQ], flat, 4, nm[CHANNELS]);
	cJSON *o = pl__onnx_add_op(m, nm[WINDOW], "AveragePool");
	pl__onnx_io(m, o, "inputs", nm[CHANNELS]);
	pl__onnx_io(m, o, "outputs", nm[WINDOW]);
	cJSON *at = pl__onnx_window_attrs(o, k, one, pads, one, 2);
	cJSON_AddNumberToObject(at, "ceil_mode", 0);
	cJSON_AddNumberToObject(at, "count_include_pad", 1);
	pl__onnx_set_info(m, nm[WINDOW], 4, flat, 0, NULL);
	pl__onnx_emit_reshape(m, nm[MEAN], nm[WINDOW], x->dims, x->rank, nm[MEAN]);
	pl__onnx_emit_binary(m, nm[SCALED], "Mul", nm[MEAN], alpha, nm[SCALED]);
	pl__onnx_emit_binary(m, nm[BASE], "Add", nm[SCALED], bias, nm[BASE]);
	emit_pow(m, nm[DEN], nm[BASE], nm[DEN], pl__onnx_attr_f(n, "beta", 0.75));
	pl__onnx_emit_binary(m, name, "Div", n->input[0], nm[DEN], n->output[0]);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* MeanVarianceNormalization over axes (default 0, 2, 3), as ONNX's
 * function body defines it: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9),
 * the expectations ReduceMeans kept along those axes */
static pl_status onnx_mvn(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input == 1 ? pl__onnx_known(m, n->input[0]) : NULL;
	int64_t ax[16] = {0, 2, 3};
	int na = pl__onnx_ints_of(m, n, "axes", 1, ax, 16);
	if (!x)
		return pl__onnx_unsupported(m, n, "its input's shape is not known");
	if (na < 0)
		return pl__onnx_unsupported(m, n, "it has more than 16 axes");
	if (na == 0)
		na = 3;
	for (int i = 0; i < na; i++) {
		ax[i] = pl__onnx_axis_of(ax[i], x->rank);
		for (int j = 0; j < i; j++)
			if (ax[j] == ax[i])
				ax[i] = -1;
		if (ax[i] < 0 || ax[i] >= x->rank)
			return pl__onnx_unsupported(
			    m, n, "its axes are not distinct dimensions of its input");
	}
	enum { MEAN, SQ, ESQ, MSQ, VAR, SD, DEV, DEN, NNAMES };
	static const char *const sfx[NNAMES] = {"mean",     "square", "mean_square", "square_mean",
	                                        "variance", "std",    "deviation",   "denominator"};
	char nm[NNAMES][SUB_NAME], eps[SUB_NAME];
	if (emit_scalar(m, name, "epsilon", NULL, 1e-9, eps, sizeof eps))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	sub_names(nm, name, sfx, NNAMES);
	pl__onnx_emit_reduce(m, nm[MEAN], "ReduceMean", n->input[0], nm[MEAN], ax, na, 1);
	pl__onnx_emit_binary(m, nm[SQ], "Mul", n->input[0], n->input[0], nm[SQ]);
	pl__onnx_emit_reduce(m, nm[ESQ], "ReduceMean", nm[SQ], nm[ESQ], ax, na, 1);
	pl__onnx_emit_binary(m, nm[MSQ], "Mul", nm[MEAN], nm[MEAN], nm[MSQ]);
	pl__onnx_emit_binary(m, nm[VAR], "Sub", nm[ESQ], nm[MSQ], nm[VAR]);
	pl__onnx_emit_unary_op(m, nm[SD], "Sqrt", nm[VAR], nm[SD]);
	pl__onnx_emit_binary(m, nm[DEV], "Sub", n->input[0], nm[MEAN], nm[DEV]);
	pl__onnx_emit_binary(m, nm[DEN], "Add", nm[SD], eps, nm[DEN]);
	pl__onnx_emit_binary(m, name, "Div", nm[DEV], nm[DEN], n->output[0]);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* LpPool and GlobalLpPool: (the sum of |x|^p over each window)^(1/p), the
 * padding adding nothing. In the planner's ops: |x|^p (x*x for p 2), an
 * AveragePool of the window that counts the padding (import_window's, on a
 * copy of the node reading the powers), times the window's size, to the
 * power 1/p (Sqrt for p 2; nothing for p 1) */
static pl_status onnx_lppool(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int64_t p = pl__onnx_attr_i(n, "p", 2);
	tinfo *x = n->n_input == 1 ? pl__onnx_known(m, n->input[0]) : NULL;
	if (!x || x->rank < 3 || x->rank > 5)
		return pl__onnx_unsupported(m, n,
		                            "its input's shape is not known as [batch, channels, 1 "
		                            "to 3 spatial dimensions]");
	if (p < 1 || p > 64)
		return pl__onnx_unsupported(m, n, "its p is not a whole power from 1 to 64");
	int64_t k[3], size = 1;
	int nsp = x->rank - 2;
	if (!strcmp(n->op_type, "GlobalLpPool"))
		for (int i = 0; i < nsp; i++)
			k[i] = x->dims[2 + i];
	else if (pl__onnx_window_ints(m, n, "kernel_shape", nsp, 0, 1, k))
		return pl__onnx_unsupported(m, n,
		                            "its kernel_shape is not one size a spatial dimension");
	for (int i = 0; i < nsp; i++)
		if (__builtin_mul_overflow(size, k[i], &size) || size > BIG)
			return pl__onnx_unsupported(m, n,
			                            "its window has more than 2^40 positions");
	enum { PW, AB, AVG, SUM, NNAMES };
	static const char *const sfx[NNAMES] = {"power", "abs", "window", "sum"};
	char nm[NNAMES][SUB_NAME], cnt[SUB_NAME];
	if (emit_scalar(m, name, "size", NULL, (double)size, cnt, sizeof cnt))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	sub_names(nm, name, sfx, NNAMES);
	char *pw = nm[PW], *ab = nm[AB], *avg = nm[AVG], *sum = nm[SUM];
	if (p == 2) {
		pl__onnx_emit_binary(m, pw, "Mul", n->input[0], n->input[0], pw);
	} else {
		pl__onnx_emit_unary_op(m, p == 1 ? pw : ab, "Abs", n->input[0], p == 1 ? pw : ab);
		if (p > 1)
			emit_pow(m, pw, ab, pw, (double)p);
	}
	pl__onnx_set_info(m, pw, x->rank, x->dims, 0, NULL);
	Onnx__NodeProto c = *n;
	char *cin[1] = {pw}, *cout[1] = {avg};
	c.input = cin;
	c.n_input = 1;
	c.output = cout;
	c.n_output = 1;
	const char *why = NULL;
	if (pl__onnx_import_window(m, &c, avg, &why))
		return pl__onnx_unsupported(m, n, why);
	tinfo *a = pl__onnx_known(m, avg);
	pl__onnx_emit_binary(m, p == 1 ? name : sum, "Mul", avg, cnt, p == 1 ? n->output[0] : sum);
	if (p == 2) {
		pl__onnx_emit_unary_op(m, name, "Sqrt", sum, n->output[0]);
	} else if (p > 1) {
		emit_pow(m, name, sum, n->output[0], 1.0 / (double)p);
	}
	if (a)
		pl__onnx_set_info(m, n->output[0], a->rank, a->dims, 0, NULL);
	return PL_OK;
}

/* ImageScaler (an experimental op of opsets before 10; the ONNX model zoo's
 * Tiny YOLOv2 starts with one): scale * x plus a bias per channel of
 * x [N, C, ...], a constant [C, 1, ...] */
static pl_status onnx_image_scaler(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input == 1 ? pl__onnx_known(m, n->input[0]) : NULL;
	const Onnx__AttributeProto *b = pl__onnx_attr(n, "bias");
	if (!x || x->rank < 3 || x->rank > 15)
		return pl__onnx_unsupported(m, n, "its input's shape is not known as [N, C, ...]");
	if (b && (int64_t)b->n_floats != x->dims[1])
		return pl__onnx_unsupported(m, n, "its bias has not one value a channel");
	char sc[600], scaled[600], bias[600];
	if (emit_scalar(m, name, "scale", NULL, pl__onnx_attr_f(n, "scale", 1), sc, sizeof sc))
		return pl__onnx_unsupported(m, n, "its constants' names are taken");
	snprintf(scaled, sizeof scaled, "%s.scaled", name);
	snprintf(bias, sizeof bias, "%s.bias", name);
	if (!b) {
		pl__onnx_emit_binary(m, name, "Mul", n->input[0], sc, n->output[0]);
		pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		return PL_OK;
	}
	if (pl__onnx_decl(m, bias))
		return pl__onnx_unsupported(m, n, "its constants' names are taken");
	int64_t dims[15];
	dims[0] = x->dims[1];
	for (int d = 1; d < x->rank - 1; d++)
		dims[d] = 1;
	double *v = pl_malloc(sizeof *v * (size_t)b->n_floats);
	if (!v)
		return pl__onnx_unsupported(m, n, "out of memory for its bias");
	for (size_t i = 0; i < b->n_floats; i++)
		v[i] = b->floats[i];
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", pl__onnx_int_list(dims, (size_t)x->rank - 1));
	cJSON_AddStringToObject(t, "role", "const");
	pl__onnx_const_values(t, v, (int64_t)b->n_floats, 0);
	free(v);
	pl_json_add(m->tensors, bias, t);
	pl__onnx_emit_binary(m, scaled, "Mul", n->input[0], sc, scaled);
	pl__onnx_emit_binary(m, name, "Add", scaled, bias, n->output[0]);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* Hardmax: 1 at the first maximum along axis, 0 elsewhere (no gradient): the
 * planner's ArgMax, then OneHot of its depth. Before opset 13 Hardmax works
 * on the input flattened to 2-D at axis (default 1): the same op only where
 * axis is the last */
static pl_status onnx_hardmax(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input == 1 ? pl__onnx_known(m, n->input[0]) : NULL;
	if (!x || x->rank < 1 || x->rank >= 8)
		return pl__onnx_unsupported(m, n, "its input's shape is not known");
	int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", m->opset < 13 ? 1 : -1), x->rank);
	if (ax < 0 || ax >= x->rank || x->dims[ax] < 1 || x->dims[ax] > ((int64_t)1 << 31))
		return pl__onnx_unsupported(m, n, "its axis is out of range or not 1 to 2^31 long");
	if (m->opset < 13 && ax != x->rank - 1)
		return pl__onnx_unsupported(
		    m, n,
		    "before opset 13 it flattens the input at axis: only the "
		    "last axis is imported");
	char am[600];
	snprintf(am, sizeof am, "%s.argmax", name);
	cJSON *o = pl__onnx_add_op(m, am, "ArgMax");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", am);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", (double)ax);
	cJSON_AddNumberToObject(at, "keepdims", 0);
	cJSON_AddNumberToObject(at, "select_last_index", 0);
	int64_t dims[16];
	for (int d = 0, r = 0; d < x->rank; d++)
		if (d != ax)
			dims[r++] = x->dims[d];
	pl__onnx_set_info(m, am, x->rank - 1, dims, 0, NULL);
	o = pl__onnx_add_op(m, name, "OneHot");
	pl__onnx_io(m, o, "inputs", am);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", (double)ax);
	cJSON_AddNumberToObject(at, "depth", (double)x->dims[ax]);
	cJSON *vals = cJSON_AddArrayToObject(at, "values");
	cJSON_AddItemToArray(vals, cJSON_CreateNumber(0));
	cJSON_AddItemToArray(vals, cJSON_CreateNumber(1));
	cJSON_AddStringToObject(at, "dtype", "float32");
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* Mish, x tanh(softplus(x)) (opset 18), and Softsign, x / (1 + |x|), in
 * the planner's element-wise ops */
static pl_status onnx_composite(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 1)
		return pl__onnx_unsupported(m, n, "not of one input");
	const char *x = n->input[0];
	char a[600], b[600], one[600];
	snprintf(a, sizeof a, "%s.a", name);
	snprintf(b, sizeof b, "%s.b", name);
	if (!strcmp(n->op_type, "Mish")) {
		pl__onnx_emit_unary_op(m, a, "Softplus", x, a);
		pl__onnx_emit_unary_op(m, b, "Tanh", a, b);
		pl__onnx_emit_binary(m, name, "Mul", x, b, n->output[0]);
	} else {
		if (emit_scalar(m, name, "one", NULL, 1, one, sizeof one))
			return pl__onnx_unsupported(m, n, "its constant's name is taken");
		pl__onnx_emit_unary_op(m, a, "Abs", x, a);
		pl__onnx_emit_binary(m, b, "Add", a, one, b);
		pl__onnx_emit_binary(m, name, "Div", x, b, n->output[0]);
	}
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* of a mask at run time: Equal to 0 */
static pl_status onnx_not(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 1)
		return pl__onnx_unsupported(m, n, "not supported");
	if (emit_not(m, name, n->input[0], n->output[0]))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* Or, And and Xor of two masks (on constants they fold): the larger of the
 * two (Max), the smaller (Min), and whether they differ (Not of Equal) */
static pl_status onnx_logic(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input != 2)
		return pl__onnx_unsupported(m, n, "not of two inputs");
	const char *t = n->op_type;
	int xor = !strcmp(t, "Xor");
	char same[600];
	snprintf(same, sizeof same, "%s.same", name);
	cJSON *o = pl__onnx_add_op(m, xor ? same : name,
	                           xor ? "Equal" : !strcmp(t, "Or") ? "Max" : "Min");
	pl__onnx_operand(m, o, n->input[0]);
	pl__onnx_operand(m, o, n->input[1]);
	pl__onnx_io(m, o, "outputs", xor ? same : n->output[0]);
	if (xor && emit_not(m, name, same, n->output[0]))
		return pl__onnx_unsupported(m, n, "its constant's name is taken");
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* its axis a constant input */
static pl_status onnx_cumsum(imp *m, const Onnx__NodeProto *n, const char *name)
{
	double ax;
	tinfo *x = pl__onnx_known(m, n->input[0]);
	if (n->n_input < 2 || !x || pl__onnx_scalar_of(m, n->input[1], &ax) ||
	    pl__onnx_axis_of((int64_t)ax, x->rank) < 0 ||
	    pl__onnx_axis_of((int64_t)ax, x->rank) >= x->rank)
		return pl__onnx_unsupported(m, n,
		                            "its axis is not a constant within its input's rank");
	cJSON *at = pl__onnx_emit_unary(m, n, name, "CumSum");
	cJSON_AddNumberToObject(at, "axis", (double)pl__onnx_axis_of((int64_t)ax, x->rank));
	cJSON_AddNumberToObject(at, "exclusive", pl__onnx_attr_i(n, "exclusive", 0) != 0);
	cJSON_AddNumberToObject(at, "reverse", pl__onnx_attr_i(n, "reverse", 0) != 0);
	return PL_OK;
}

/* y = x W (+ b): a MatMul (W transposed first for transB) and an Add */
static pl_status onnx_gemm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (pl__onnx_attr_i(n, "transA", 0) || n->n_input < 2)
		return pl__onnx_unsupported(m, n, "transA is not supported");
	const Onnx__AttributeProto *al = pl__onnx_attr(n, "alpha"), *be = pl__onnx_attr(n, "beta");
	if ((al && al->has_f && al->f != 1) || (be && be->has_f && be->f != 1))
		return pl__onnx_unsupported(m, n, "alpha and beta other than 1 are not supported");
	char w[512], y[512];
	const char *b = n->input[1];
	if (pl__onnx_attr_i(n, "transB", 0)) { /* y = x W^T: W transposed first */
		snprintf(w, sizeof w, "%s.wT", name);
		cJSON *o = pl__onnx_add_op(m, w, "Transpose");
		pl__onnx_io(m, o, "inputs", b);
		pl__onnx_io(m, o, "outputs", w);
		int64_t perm[2] = {1, 0};
		pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "perm",
		            pl__onnx_int_list(perm, 2));
		b = w;
	}
	snprintf(y, sizeof y, "%s.mm", name);
	cJSON *o = pl__onnx_add_op(m, n->n_input > 2 ? y : name, "MatMul");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "inputs", b);
	pl__onnx_io(m, o, "outputs", n->n_input > 2 ? y : n->output[0]);
	if (n->n_input > 2) {
		o = pl__onnx_add_op(m, name, "Add");
		pl__onnx_io(m, o, "inputs", y);
		pl__onnx_io(m, o, "inputs", n->input[2]);
		pl__onnx_io(m, o, "outputs", n->output[0]);
	}
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* ReduceLogSumExp as torch.logsumexp computes it: the maximum m (kept dims)
 * subtracted, Exp, ReduceSum, Log, plus m; with log_softmax (keep 1),
 * LogSoftmax's x - m - log(sum(exp(x - m))) instead */
static void onnx_logsumexp(imp *m, const Onnx__NodeProto *n, const char *name, const int64_t *ax,
                           int na, int keep, int log_softmax)
{
	char mk[600], d[600], e[600], s[600], l[600], mx[600];
	const char *x = n->input[0];
	snprintf(mk, sizeof mk, "%s.max_kept", name);
	snprintf(d, sizeof d, "%s.shifted", name);
	snprintf(e, sizeof e, "%s.exp", name);
	snprintf(s, sizeof s, "%s.sum", name);
	snprintf(l, sizeof l, "%s.log", name);
	snprintf(mx, sizeof mx, "%s.max", name);
	pl__onnx_emit_reduce(m, mk, "ReduceMax", x, mk, ax, na, 1);
	pl__onnx_emit_binary(m, d, "Sub", x, mk, d);
	pl__onnx_emit_unary_op(m, e, "Exp", d, e);
	pl__onnx_emit_reduce(m, s, "ReduceSum", e, s, ax, na, keep);
	pl__onnx_emit_unary_op(m, l, "Log", s, l);
	if (log_softmax) {
		pl__onnx_emit_binary(m, name, "Sub", d, l, n->output[0]);
		return;
	}
	if (!keep)
		pl__onnx_emit_reduce(m, mx, "ReduceMax", x, mx, ax, na, 0);
	pl__onnx_emit_binary(m, name, "Add", l, keep ? mk : mx, n->output[0]);
}

/* The reductions: axes an attribute, or (ReduceSum from opset 13, the others
 * from 18) input 1. ReduceL2 (F.normalize's norm) is the square root of the
 * sum of squares, ReduceL1 the sum of absolute values, ReduceSumSquare the
 * sum of squares: a Mul or an Abs, the ReduceSum, a Sqrt */
static pl_status onnx_reduce_op(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const char *t = n->op_type;
	int l2 = !strcmp(t, "ReduceL2"), l1 = !strcmp(t, "ReduceL1"),
	    sq = !strcmp(t, "ReduceSumSquare"), lse = !strcmp(t, "ReduceLogSumExp"),
	    ls = !strcmp(t, "ReduceLogSum");
	int64_t ax[16];
	int na = pl__onnx_ints_of(m, n, "axes", 1, ax, 16);
	if (na < 0 || (n->n_input > 1 && n->input[1][0] && !pl__onnx_valued(m, n->input[1])) ||
	    (na == 0 && pl__onnx_attr_i(n, "noop_with_empty_axes", 0)))
		return pl__onnx_unsupported(m, n,
		                            "its axes are not a constant the importer can fold");
	int keep = pl__onnx_attr_i(n, "keepdims", 1) != 0;
	if (lse) {
		onnx_logsumexp(m, n, name, ax, na, keep, 0);
		pl__onnx_infer(m, n);
		return PL_OK;
	}
	const char *in = n->input[0], *out = n->output[0];
	char pre[600], sum[600];
	if (l2 || l1 || sq) {
		snprintf(pre, sizeof pre, "%s.%s", name, l1 ? "abs" : "square");
		pl__onnx_emit_binary(m, pre, l1 ? "Abs" : "Mul", in, l1 ? NULL : in, pre);
		in = pre;
	}
	if (l2 || ls) {
		snprintf(sum, sizeof sum, "%s.sum", name);
		out = sum;
	}
	pl__onnx_emit_reduce(m, l2 || ls ? sum : name, l2 || l1 || sq || ls ? "ReduceSum" : t, in,
	                     out, ax, na, keep);
	if (l2 || ls) /* the root of the sum of squares; the log of the sum */
		pl__onnx_emit_unary_op(m, name, l2 ? "Sqrt" : "Log", sum, n->output[0]);
	pl__onnx_infer(m, n);
	return PL_OK;
}

/* x ^ 2: x times x; x to another constant power, Reciprocal's -1: a Pow; x
 * to a power computed at run time (a learned exponent: GeM pooling's p) a Pow
 * of two inputs, the exponent of any numeric type (ONNX's T2) */
static pl_status onnx_pow(imp *m, const Onnx__NodeProto *n, const char *name)
{
	int pow_op = !strcmp(n->op_type, "Pow");
	if (pow_op && n->n_input == 2 && pl__onnx_is_scalar(m, n->input[1], 2)) {
		cJSON *o = pl__onnx_add_op(m, name, "Mul");
		pl__onnx_io(m, o, "inputs", n->input[0]);
		pl__onnx_io(m, o, "inputs", n->input[0]);
		pl__onnx_io(m, o, "outputs", n->output[0]);
		tinfo *x = pl__onnx_known(m, n->input[0]);
		if (x)
			pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		return PL_OK;
	}
	double pe = -1;
	if (pow_op && n->n_input == 2 && pl__onnx_scalar_of(m, n->input[1], &pe) != 0) {
		cJSON *o = pl__onnx_add_op(m, name, "Pow");
		pl__onnx_operand(m, o, n->input[0]);
		pl__onnx_operand(m, o, n->input[1]);
		pl__onnx_io(m, o, "outputs", n->output[0]);
		pl__onnx_infer(m, n);
		return PL_OK;
	}
	if (pow_op && n->n_input != 2)
		return pl__onnx_unsupported(m, n, "it takes two inputs, a base and an exponent");
	cJSON_AddNumberToObject(pl__onnx_emit_unary(m, n, name, "Pow"), "exponent", pe);
	return PL_OK;
}

/* 2-D (opset 16; opset 20's names too) */
static pl_status onnx_gridsample(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]),
	      *gd = n->n_input > 1 ? pl__onnx_known(m, n->input[1]) : NULL;
	char mode[32], pad[32];
	pl__onnx_attr_str(n, "mode", mode, sizeof mode);
	pl__onnx_attr_str(n, "padding_mode", pad, sizeof pad);
	if (!x || !gd || x->rank != 4 || gd->rank != 4 || gd->dims[3] != 2)
		return pl__onnx_unsupported(
		    m, n,
		    "only the 2-D form (X [N, C, H, W], grid [N, H_out, W_out, "
		    "2]) with its shapes known is supported");
	int nearest = !strcmp(mode, "nearest");
	if (mode[0] && !nearest && strcmp(mode, "bilinear") && strcmp(mode, "linear"))
		return pl__onnx_unsupported(
		    m, n,
		    "its mode (bicubic, cubic) is not supported yet: bilinear "
		    "(linear) and nearest are");
	if (pad[0] && strcmp(pad, "zeros") && strcmp(pad, "border"))
		return pl__onnx_unsupported(
		    m, n,
		    "its padding_mode reflection is not supported yet: zeros and "
		    "border are");
	cJSON *o = pl__onnx_add_op(m, name, "GridSample");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "inputs", n->input[1]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddStringToObject(at, "mode", nearest ? "nearest" : "bilinear");
	cJSON_AddStringToObject(at, "padding_mode", pad[0] ? pad : "zeros");
	cJSON_AddNumberToObject(at, "align_corners", pl__onnx_attr_i(n, "align_corners", 0) != 0);
	int64_t dims[4] = {x->dims[0], x->dims[1], gd->dims[1], gd->dims[2]};
	pl__onnx_set_info(m, n->output[0], 4, dims, 0, NULL);
	return PL_OK;
}

/* noise (a VAE's, a diffusion step's): drawn data, an input */
static pl_status onnx_random(imp *m, const Onnx__NodeProto *n, const char *name)
{
	(void)name;
	tinfo *x = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL;
	int64_t dims[16];
	int r = x ? x->rank : pl__onnx_ints_of(m, n, "shape", 99, dims, 16);
	if (x)
		memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
	if (r < 1 || pl__onnx_decl(m, n->output[0]))
		return pl__onnx_unsupported(m, n, "its shape is not known");
	cJSON *d = cJSON_CreateObject();
	pl_json_add(d, "shape", pl__onnx_int_list(dims, (size_t)r));
	cJSON_AddStringToObject(d, "role", "input");
	pl_json_add(m->tensors, n->output[0], d);
	pl__onnx_set_info(m, n->output[0], r, dims, 0, NULL);
	return PL_OK;
}

static void onnx_logsumexp(imp *m, const Onnx__NodeProto *n, const char *name, const int64_t *ax,
                           int na, int keep, int log_softmax);

/* The model's output, which the appended cross-entropy reads: its loss on
 * log-probabilities is its loss on the logits (log_softmax(log_softmax(z)) =
 * log_softmax(z)), dropped. Any other: x minus its log-sum-exp. */
static pl_status onnx_logsoftmax(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int64_t ax = x ? pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", -1), x->rank) : -1;
	if (!x || ax < 0 || ax >= x->rank)
		return pl__onnx_unsupported(m, n, "its input's shape or axis is not known");
	if (m->ce_loss && m->g->n_output > 0 && m->g->output[0]->name &&
	    !strcmp(n->output[0], m->g->output[0]->name)) {
		if (ax != x->rank - 1)
			return pl__onnx_unsupported(
			    m, n, "a LogSoftmax under the cross-entropy is imported only over the last axis");
		pl__onnx_drop_node(m, n); /* the loss computes it */
		pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
		return PL_OK;
	}
	/* elsewhere, x minus its log-sum-exp along the axis */
	onnx_logsumexp(m, n, name, &ax, 1, 1, 1);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return PL_OK;
}

/* When node() runs an op's emitter: before the checks of a node's inputs
 * (what is refused whatever its inputs), before folding (on constants an op
 * would fold), after folding, or after the fused-pattern matchers (the ops a
 * LayerNorm, an RMSNorm or a Gelu written out begins with) */
enum { EMIT_FIRST, EMIT_UNFOLDED, EMIT_FOLDED, EMIT_LAST };

typedef struct onnx_op {
	const char *type;
	int step;
	onnx_emit emit; /* its emitter; or an importer that says why it refuses: */
	onnx_import import;
	/* or one that refuses for one reason, why */
	int (*plain)(imp *m, const Onnx__NodeProto *n, const char *name);
	const char *why;
} onnx_op;

/* Max to Where (onnx_same): on tensors computed at run time (a padding mask
 * from an input, a masked_fill); on constants they fold */
static const onnx_op onnx_ops[] = {
    {"If", EMIT_FIRST, onnx_control_flow, NULL, NULL, NULL},
    {"Loop", EMIT_FIRST, onnx_control_flow, NULL, NULL, NULL},
    {"Scan", EMIT_FIRST, onnx_control_flow, NULL, NULL, NULL},
    {"NonZero", EMIT_FIRST, onnx_data_shaped, NULL, NULL, NULL},
    {"NonMaxSuppression", EMIT_FIRST, onnx_data_shaped, NULL, NULL, NULL},
    {"Compress", EMIT_FIRST, onnx_data_shaped, NULL, NULL, NULL},
    {"Unique", EMIT_FIRST, onnx_data_shaped, NULL, NULL, NULL},
    {"SequenceEmpty", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"SequenceConstruct", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"SequenceInsert", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"SequenceAt", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"SequenceErase", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"SequenceLength", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"SequenceMap", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"ConcatFromSequence", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"SplitToSequence", EMIT_FIRST, onnx_sequence, NULL, NULL, NULL},
    {"Gelu", EMIT_UNFOLDED, onnx_gelu, NULL, NULL, NULL},
    {"Identity", EMIT_UNFOLDED, onnx_identity, NULL, NULL, NULL},
    {"Dropout", EMIT_FOLDED, onnx_dropout, NULL, NULL, NULL},
    {"Shape", EMIT_FOLDED, onnx_shape, NULL, NULL, NULL},
    {"Slice", EMIT_FOLDED, NULL, NULL, pl__onnx_import_slice,
     "its input's shape is not known, or its starts, ends, "
     "axes and steps are not constants with steps of 1 and "
     "ranges that are not empty"},
    {"Cast", EMIT_FOLDED, onnx_cast, NULL, NULL, NULL},
    {"CastLike", EMIT_FOLDED, onnx_cast, NULL, NULL, NULL},
    {"Size", EMIT_FOLDED, onnx_shape, NULL, NULL, NULL},
    {"EyeLike", EMIT_FOLDED, onnx_shape, NULL, NULL, NULL},
    {"SoftmaxCrossEntropyLoss", EMIT_LAST, onnx_ce_loss, NULL, NULL, NULL},
    {"NegativeLogLikelihoodLoss", EMIT_LAST, onnx_ce_loss, NULL, NULL, NULL},
    {"Attention", EMIT_FOLDED, onnx_attention, NULL, NULL, NULL},
    {"Einsum", EMIT_FOLDED, NULL, pl__onnx_import_einsum, NULL, NULL},
    {"Split", EMIT_FOLDED, NULL, NULL, pl__onnx_import_split,
     "its input's shape or its parts' sizes are not known"},
    {"GroupNormalization", EMIT_FOLDED, onnx_groupnorm, NULL, NULL, NULL},
    {"InstanceNormalization", EMIT_FOLDED, NULL, NULL, pl__onnx_import_instancenorm,
     "its input's shape is not known, or it has fewer than 3 "
     "dimensions or 3 inputs"},
    {"LayerNormalization", EMIT_FOLDED, onnx_norm, NULL, NULL, NULL},
    {"RMSNormalization", EMIT_FOLDED, onnx_norm, NULL, NULL, NULL},
    {"Reshape", EMIT_FOLDED, onnx_reshape, NULL, NULL, NULL},
    {"Conv", EMIT_LAST, NULL, pl__onnx_import_window, NULL, NULL},
    {"MaxPool", EMIT_LAST, NULL, pl__onnx_import_window, NULL, NULL},
    {"AveragePool", EMIT_LAST, NULL, pl__onnx_import_window, NULL, NULL},
    {"GlobalAveragePool", EMIT_LAST, NULL, pl__onnx_import_window, NULL, NULL},
    {"GlobalMaxPool", EMIT_LAST, NULL, pl__onnx_import_window, NULL, NULL},
    {"Resize", EMIT_LAST, NULL, pl__onnx_import_resize, NULL, NULL},
    {"Upsample", EMIT_LAST, NULL, pl__onnx_import_resize, NULL, NULL},
    {"ConvTranspose", EMIT_LAST, NULL, pl__onnx_import_convtranspose, NULL, NULL},
    {"RNN", EMIT_LAST, NULL, pl__onnx_import_recurrent, NULL, NULL},
    {"GRU", EMIT_LAST, NULL, pl__onnx_import_recurrent, NULL, NULL},
    {"LSTM", EMIT_LAST, NULL, pl__onnx_import_recurrent, NULL, NULL},
    {"Pad", EMIT_LAST, onnx_pad, NULL, NULL, NULL},
    {"Flatten", EMIT_LAST, NULL, NULL, pl__onnx_import_flatten,
     "its input's shape is not known, or axis is out of range"},
    {"Gather", EMIT_LAST, onnx_gather, NULL, NULL, NULL},
    {"Expand", EMIT_LAST, onnx_expand, NULL, NULL, NULL},
    {"Concat", EMIT_LAST, onnx_concat, NULL, NULL, NULL},
    {"ScatterND", EMIT_LAST, onnx_scatternd, NULL, NULL, NULL},
    {"BatchNormalization", EMIT_LAST, NULL, NULL, pl__onnx_import_batchnorm,
     "its input's shape must be known and its running "
     "statistics' outputs unread"},
    {"Unsqueeze", EMIT_LAST, onnx_unsqueeze, NULL, NULL, NULL},
    {"Squeeze", EMIT_LAST, onnx_unsqueeze, NULL, NULL, NULL},
    {"HardSigmoid", EMIT_LAST, onnx_hard, NULL, NULL, NULL},
    {"HardSwish", EMIT_LAST, onnx_hard, NULL, NULL, NULL},
    {"LeakyRelu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Elu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Selu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Celu", EMIT_LAST, onnx_alpha, NULL, NULL, NULL},
    {"Not", EMIT_LAST, onnx_not, NULL, NULL, NULL},
    {"Or", EMIT_LAST, onnx_logic, NULL, NULL, NULL},
    {"And", EMIT_LAST, onnx_logic, NULL, NULL, NULL},
    {"Xor", EMIT_LAST, onnx_logic, NULL, NULL, NULL},
    {"CumSum", EMIT_LAST, onnx_cumsum, NULL, NULL, NULL},
    {"Clip", EMIT_LAST, NULL, NULL, pl__onnx_import_clip, "its bounds must be constants"},
    {"Gemm", EMIT_LAST, onnx_gemm, NULL, NULL, NULL},
    {"ReduceSum", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceMean", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceMax", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceMin", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceProd", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceL2", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceL1", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceSumSquare", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceLogSumExp", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"ReduceLogSum", EMIT_LAST, onnx_reduce_op, NULL, NULL, NULL},
    {"Pow", EMIT_LAST, onnx_pow, NULL, NULL, NULL},
    {"Reciprocal", EMIT_LAST, onnx_pow, NULL, NULL, NULL},
    {"Tile", EMIT_LAST, NULL, NULL, pl__onnx_import_tile,
     "its input's shape or its repeats are not known"},
    {"DepthToSpace", EMIT_LAST, NULL, NULL, pl__onnx_import_depth_space,
     "its input's shape must be known as [N, C, H, W] with the "
     "block dividing it"},
    {"SpaceToDepth", EMIT_LAST, NULL, NULL, pl__onnx_import_depth_space,
     "its input's shape must be known as [N, C, H, W] with the "
     "block dividing it"},
    {"GridSample", EMIT_LAST, onnx_gridsample, NULL, NULL, NULL},
    {"ArgMax", EMIT_LAST, NULL, pl__onnx_import_index, NULL, NULL},
    {"ArgMin", EMIT_LAST, NULL, pl__onnx_import_index, NULL, NULL},
    {"OneHot", EMIT_LAST, NULL, pl__onnx_import_index, NULL, NULL},
    {"TopK", EMIT_LAST, NULL, pl__onnx_import_index, NULL, NULL},
    {"GatherElements", EMIT_LAST, NULL, pl__onnx_import_index, NULL, NULL},
    {"ScatterElements", EMIT_LAST, NULL, pl__onnx_import_scatter, NULL, NULL},
    {"Scatter", EMIT_LAST, NULL, pl__onnx_import_scatter, NULL, NULL},
    {"RandomNormalLike", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"RandomUniformLike", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"Bernoulli", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"RandomNormal", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"RandomUniform", EMIT_LAST, onnx_random, NULL, NULL, NULL},
    {"LogSoftmax", EMIT_LAST, onnx_logsoftmax, NULL, NULL, NULL},
    {"MatMul", EMIT_LAST, onnx_matmul, NULL, NULL, NULL},
    {"Add", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sub", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Mul", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Div", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Relu", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Tanh", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sigmoid", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Softmax", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Transpose", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Neg", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Exp", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Log", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sqrt", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Abs", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Softplus", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Max", EMIT_LAST, onnx_minmax, NULL, NULL, NULL},
    {"Min", EMIT_LAST, onnx_minmax, NULL, NULL, NULL},
    {"Sum", EMIT_LAST, onnx_variadic, NULL, NULL, NULL},
    {"Mean", EMIT_LAST, onnx_variadic, NULL, NULL, NULL},
    {"ThresholdedRelu", EMIT_LAST, onnx_threshold, NULL, NULL, NULL},
    {"Shrink", EMIT_LAST, onnx_threshold, NULL, NULL, NULL},
    {"LpNormalization", EMIT_LAST, onnx_lpnorm, NULL, NULL, NULL},
    {"LRN", EMIT_LAST, onnx_lrn, NULL, NULL, NULL},
    {"Hardmax", EMIT_LAST, onnx_hardmax, NULL, NULL, NULL},
    {"ImageScaler", EMIT_LAST, onnx_image_scaler, NULL, NULL, NULL},
    {"LpPool", EMIT_LAST, onnx_lppool, NULL, NULL, NULL},
    {"GlobalLpPool", EMIT_LAST, onnx_lppool, NULL, NULL, NULL},
    {"MeanVarianceNormalization", EMIT_LAST, onnx_mvn, NULL, NULL, NULL},
    {"Equal", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Less", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Greater", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Where", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sin", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Cos", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Erf", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sign", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Tan", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Asin", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Acos", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Atan", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Sinh", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Cosh", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Asinh", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Acosh", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Atanh", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Floor", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Ceil", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"Round", EMIT_LAST, onnx_same, NULL, NULL, NULL},
    {"GreaterOrEqual", EMIT_LAST, onnx_or_equal, NULL, NULL, NULL},
    {"LessOrEqual", EMIT_LAST, onnx_or_equal, NULL, NULL, NULL},
    {"Mish", EMIT_LAST, onnx_composite, NULL, NULL, NULL},
    {"Mod", EMIT_LAST, onnx_mod, NULL, NULL, NULL},
    {"IsNaN", EMIT_LAST, onnx_isnan_isinf, NULL, NULL, NULL},
    {"IsInf", EMIT_LAST, onnx_isnan_isinf, NULL, NULL, NULL},
    {"Trilu", EMIT_LAST, onnx_trilu, NULL, NULL, NULL},
    {"Softsign", EMIT_LAST, onnx_composite, NULL, NULL, NULL},
    {"PRelu", EMIT_LAST, onnx_same, NULL, NULL, NULL},
};

static const onnx_op *onnx_op_of(const char *type)
{
	for (size_t k = 0; k < sizeof onnx_ops / sizeof *onnx_ops; k++)
		if (!strcmp(onnx_ops[k].type, type))
			return &onnx_ops[k];
	return NULL;
}

static pl_status run_emitter(imp *m, const Onnx__NodeProto *n, const char *name, const onnx_op *op)
{
	const char *why;
	if (op->emit)
		return op->emit(m, n, name);
	if (op->plain)
		return op->plain(m, n, name) ? pl__onnx_unsupported(m, n, op->why) : PL_OK;
	return op->import(m, n, name, &why) ? pl__onnx_unsupported(m, n, why) : PL_OK;
}

/* Whether tensor `name` is known before the run: an initializer, a
 * Constant's, a Shape's, or computed from those alone (the exporter's guard
 * of a Squeeze on a dimension it could not prove 1: an If on Equal(Shape,
 * 1)). Producers are walked at most *budget steps in all (a hostile file's
 * deep or wide graph, or its many Ifs: not known, refused). */
static int static_value(const imp *m, const char *name, int depth, int *budget)
{
	if (!name[0])
		return 1;
	if (depth > 64 || --*budget < 0)
		return 0;
	const Onnx__GraphProto *g = m->g;
	for (size_t k = 0; k < g->n_initializer; k++)
		if (g->initializer[k]->name && !strcmp(g->initializer[k]->name, name))
			return 1;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *p = g->node[i];
		for (size_t o = 0; o < p->n_output; o++)
			if (!strcmp(p->output[o], name)) {
				const char *t = p->op_type ? p->op_type : "";
				if (!strcmp(t, "Shape") || !strcmp(t, "Constant"))
					return 1;
				if (onnx_op_of(t) && onnx_op_of(t)->step == EMIT_FIRST)
					return 0;
				for (size_t k = 0; k < p->n_input; k++)
					if (!static_value(m, p->input[k], depth + 1, budget))
						return 0;
				return p->n_input > 0;
			}
	}
	return 0; /* a graph input */
}

/* A graph with control flow or shapes that depend on the data (a detection
 * model's post-processing) is refused for that first, whatever op before it
 * the importer would refuse too (Floor, Ceil): the node named says what the
 * graph is. A Loop is looked at in its turn (nn.EmbeddingBag's imports). */
pl_status pl__onnx_not_training(imp *m)
{
	int budget = 256; /* producers walked for all the Ifs (each walk step scans the graph) */
	for (size_t i = 0; i < m->g->n_node; i++) {
		const Onnx__NodeProto *n = m->g->node[i];
		const onnx_op *op = n->op_type ? onnx_op_of(n->op_type) : NULL;
		if (op && op->step == EMIT_FIRST && strcmp(n->op_type, "Loop") &&
		    !(!strcmp(n->op_type, "If") && n->n_input == 1 &&
		      static_value(m, n->input[0], 0, &budget)))
			return pl__onnx_node(m, (int)i);
	}
	return PL_OK;
}

/* Node i: its op's emitter (onnx_ops) at its step, between the checks every
 * node has (its inputs), folding and the fused-pattern matchers; an op
 * type not in the table is refused, unless it folds or a pattern takes it */
static pl_status node_run(imp *m, const Onnx__NodeProto *n, int i);

pl_status pl__onnx_node(imp *m, int i)
{
	return node_run(m, m->g->node[i], i);
}

/* the op types an If's branch may hold to be taken inline: shape work, and
 * the views and arithmetic an exporter's guard writes */
static int inline_type(const char *t)
{
	static const char *const ok[] = {"Constant", "Identity",  "Squeeze", "Unsqueeze", "Reshape",
	                                 "Flatten",  "Cast",      "Shape",   "Gather",    "Concat",
	                                 "Slice",    "Transpose", "Expand",  "Add",       "Sub",
	                                 "Mul",      "Div"};
	for (size_t k = 0; k < sizeof ok / sizeof *ok; k++)
		if (!strcmp(t, ok[k]))
			return 1;
	return 0;
}

/* An If whose condition folded to a constant: the nodes of the branch it
 * takes imported in its place (their names are the file's), its outputs
 * standing for the branch's. 1 done (*st its status), 0 not such an If (a
 * condition known only at run time, a branch of other ops or outputs) */
static int inline_if(imp *m, const Onnx__NodeProto *n, pl_status *st)
{
	tinfo *c = n->n_input == 1 ? pl__onnx_valued(m, n->input[0]) : NULL;
	if (!c || c->nval != 1)
		return 0;
	const Onnx__AttributeProto *a =
	    pl__onnx_attr(n, c->val[0] != 0 ? "then_branch" : "else_branch");
	const Onnx__GraphProto *b = a ? a->g : NULL;
	if (!b || b->n_output != n->n_output || b->n_initializer || b->n_node > 64 ||
	    (size_t)m->nalias + b->n_node + n->n_output > m->nalias_cap)
		return 0;
	for (size_t k = 0; k < b->n_node; k++)
		if (!b->node[k]->op_type || !inline_type(b->node[k]->op_type))
			return 0;
	for (size_t k = 0; k < b->n_output; k++)
		if (!b->output[k]->name || !b->output[k]->name[0])
			return 0;
	*st = PL_OK;
	for (size_t k = 0; k < b->n_node && !*st; k++)
		*st = node_run(m, b->node[k], -1);
	for (size_t k = 0; k < n->n_output && !*st; k++) {
		if (!n->output[k][0])
			continue;
		tinfo *o = pl__onnx_known(m, b->output[k]->name), *to;
		if (o)
			pl__onnx_set_info(m, n->output[k], o->rank, o->dims, o->nval, o->val);
		if (o && (to = pl__onnx_known(m, n->output[k]))) {
			to->cons = o->cons;
			to->elem = o->elem;
			to->init = o->init;
		}
		pl__onnx_alias(m, n->output[k], b->output[k]->name);
	}
	return 1;
}

/* Node n (node i of the graph, or -1: of an If's branch taken inline, which
 * the fused-pattern matchers do not see) */
static pl_status node_run(imp *m, const Onnx__NodeProto *n, int i)
{
	if (!n->op_type || n->n_output < 1 || !n->output[0][0])
		return pl_err_set(m->err, PL_EINVAL, "%s: node %d ('%s'): %s", m->path, i,
		                  n->name ? n->name : "", n->op_type ? "no output" : "no op type");
	const char *t = n->op_type, *name = n->name && n->name[0] ? n->name : n->output[0];
	const onnx_op *op = onnx_op_of(t);
	if (op && op->step == EMIT_FIRST)
		return run_emitter(m, n, name, op);
	if (n->n_input < 1 && strcmp(t, "Constant")) /* every op read below has an input 0 */
		return pl__onnx_unsupported(
		    m, n,
		    "not supported: it has no inputs, and the only op without "
		    "inputs the importer reads is Constant");
	if (!strcmp(t, "Gemm") && n->n_input < 2)
		return pl__onnx_unsupported(m, n, "too few inputs");
	if (op && op->step == EMIT_UNFOLDED)
		return run_emitter(m, n, name, op);
	if (pl__onnx_fold(m, n))
		return PL_OK; /* a constant, or a computation on shapes: folded */
	if (op && op->step == EMIT_FOLDED)
		return run_emitter(m, n, name, op);
	pl_status st;
	if (i >= 0 && onnx_fused(m, i, &st))
		return st;
	return op ? run_emitter(m, n, name, op) : pl__onnx_unsupported(m, n, "not supported");
}
