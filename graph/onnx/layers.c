/* The ONNX importer (graph/onnx/): the emitters of layers: convolutions and windows, recurrent
 * layers, EmbeddingBag, index ops, Tile, DepthToSpace, Pad, Resize, Flatten, the norms, Clip,
 * BatchNormalization, Dropout. */
#include "graph/onnx/internal.h"

/* ConvTranspose: the planner's op with its groups, strides, dilations, pads
 * (auto_pad's resolved as ONNX states: the output stride x input, the total
 * padding split with the larger half at the end for SAME_UPPER) and
 * output_padding. 0, or -1 with *why */
int pl__onnx_import_convtranspose(imp *m, const Onnx__NodeProto *n, const char *name,
                                  const char **why)
{
	tinfo *x = pl__onnx_known(m, n->input[0]),
	      *w = n->n_input > 1 ? pl__onnx_known(m, n->input[1]) : NULL;
	*why = "its input's or weight's shape is not known as [batch, channels, 1 to 3 spatial "
	       "dimensions] and [input channels, output channels, the kernel]";
	if (!x || !w || x->rank < 3 || x->rank > 5 || w->rank != x->rank)
		return -1;
	int nsp = x->rank - 2;
	int64_t G = pl__onnx_attr_i(n, "group", 1);
	*why = "its group does not divide its input channels, or its weight's rows are not "
	       "the input channels";
	if (G < 1 || G > x->dims[1] || x->dims[1] % G || w->dims[0] != x->dims[1])
		return -1;
	int64_t s[3], d[3], p[6], op[3], dims[5] = {x->dims[0], w->dims[1] * G};
	*why = "it has an output_shape (give pads instead)";
	if (pl__onnx_attr(n, "output_shape"))
		return -1;
	*why = "strides, dilations, pads or output_padding has the wrong count or an "
	       "out-of-range value";
	if (pl__onnx_window_ints(m, n, "strides", nsp, 1, 1, s) ||
	    pl__onnx_window_ints(m, n, "dilations", nsp, 1, 1, d) ||
	    pl__onnx_window_ints(m, n, "pads", 2 * nsp, 0, 0, p) ||
	    pl__onnx_window_ints(m, n, "output_padding", nsp, 0, 0, op))
		return -1;
	char mode[16];
	pl__onnx_attr_str(n, "auto_pad", mode, sizeof mode);
	*why = "auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER";
	if (mode[0] && strcmp(mode, "NOTSET") && strcmp(mode, "VALID") && strncmp(mode, "SAME_", 5))
		return -1;
	for (int i = 0; i < nsp; i++) {
		int64_t span = (w->dims[2 + i] - 1) * d[i] + 1,
		        full = s[i] * (x->dims[2 + i] - 1) + op[i] + span;
		if (!strcmp(mode, "VALID")) {
			p[i] = p[nsp + i] = 0;
		} else if (!strncmp(mode, "SAME_", 5)) {
			int64_t total = full - x->dims[2 + i] * s[i];
			total = total < 0 ? 0 : total;
			p[i] = !strcmp(mode, "SAME_UPPER") ? total / 2 : total - total / 2;
			p[nsp + i] = total - p[i];
		}
		dims[2 + i] = full - p[i] - p[nsp + i];
		*why = "its pads leave no output position";
		if (dims[2 + i] < 1)
			return -1;
	}
	cJSON *o = pl__onnx_add_op(m, name, "ConvTranspose");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "inputs", n->input[1]);
	if (n->n_input > 2 && n->input[2][0])
		pl__onnx_io(m, o, "inputs", n->input[2]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	if (G > 1)
		cJSON_AddNumberToObject(at, "group", (double)G);
	pl_json_add(at, "strides", pl__onnx_int_list(s, (size_t)nsp));
	pl_json_add(at, "dilations", pl__onnx_int_list(d, (size_t)nsp));
	pl_json_add(at, "pads", pl__onnx_int_list(p, (size_t)(2 * nsp)));
	pl_json_add(at, "output_padding", pl__onnx_int_list(op, (size_t)nsp));
	pl__onnx_set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

static int all_values(imp *m, const char *name, double v);

/* Whether tensor `name` holds zeros: absent (""), zeros whose values are
 * known, or a ConstantOfShape of zeros or an Expand of such (PyTorch's
 * initial states, too many values to keep) */
static int zeros(imp *m, const char *name, int depth)
{
	if (!name[0] || all_values(m, name, 0))
		return 1;
	for (size_t i = 0; depth < 8 && i < m->g->n_node; i++) {
		const Onnx__NodeProto *n = m->g->node[i];
		if (n->n_output < 1 || strcmp(n->output[0], name) || !n->op_type)
			continue;
		if (!strcmp(n->op_type, "Expand") && n->n_input == 2)
			return zeros(m, n->input[0], depth + 1);
		if (!strcmp(n->op_type, "ConstantOfShape")) {
			const Onnx__AttributeProto *va = pl__onnx_attr(n, "value");
			double one[1];
			return !va || !va->t ||
			       (pl__onnx_tensor_values(va->t, one, 1) == 1 && one[0] == 0);
		}
		return 0;
	}
	return 0;
}

/* Whether a node or the graph's outputs read tensor `name` */
static int onnx_read(const imp *m, const char *name)
{
	int who[1];
	for (size_t k = 0; k < m->g->n_output; k++)
		if (m->g->output[k]->name && !strcmp(m->g->output[k]->name, name))
			return 1;
	return name[0] && pl__onnx_consumers(m, name, who, 1) > 0;
}

/* Whether the activations list of a recurrent node is ONNX's default for it
 * (per direction: Tanh for RNN; Sigmoid, Tanh for GRU; Sigmoid, Tanh, Tanh
 * for LSTM) or absent */
static int default_activations(const Onnx__NodeProto *n, int gates_kind, int dirs)
{
	static const char *const dflt[3][3] = {
	    {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
	const Onnx__AttributeProto *a = pl__onnx_attr(n, "activations");
	if (!a)
		return 1;
	size_t per = (size_t)gates_kind + 1;
	if (a->n_strings != per * (size_t)dirs)
		return 0;
	for (size_t k = 0; k < a->n_strings; k++) {
		const char *want = dflt[gates_kind][k % per];
		if (a->strings[k].len != strlen(want) ||
		    strncmp((const char *)a->strings[k].data, want, strlen(want)))
			return 0;
	}
	return 1;
}

/* name as the emitted op that outputs it keeps it (the importer's table
 * keeps a name's pointer: never one of a buffer on the stack), or name */
static const char *kept(imp *m, const char *name)
{
	cJSON *o = pl__onnx_producer(m, name);
	cJSON *out = o ? cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0) : NULL;
	return cJSON_IsString(out) ? out->valuestring : name;
}

/* The last state of each direction of a recurrent layer's per-step states
 * y ([S, D, batch, H]; step S-1 forward, 0 reverse) as out [D, batch, H]:
 * each Y[last, d] ([1, 1, batch, hidden]) sliced out, side by side on axis
 * 1, axes 0 and 1 swapped, then reshaped with dimension 0 copied (a
 * micro-batch cuts the batch, dimension 2). The ops are named
 * NAME.SUFFIX... */
static void emit_last_state(imp *m, const char *name, const char *suffix, const char *y, int64_t D,
                            int64_t S, int reverse, int64_t H, int64_t batch, const char *out)
{
	char part[2][600], cat[600], tr[600], buf[600];
	for (int64_t d = 0; d < D; d++) {
		int64_t last = d == 1 || reverse ? 0 : S - 1;
		int64_t axes[2] = {0, 1}, lo[2] = {last, d}, hi[2] = {last + 1, d + 1};
		snprintf(part[d], sizeof part[d], "%s.%s%lld", name, suffix, (long long)d);
		cJSON *so = pl__onnx_add_op(m, part[d], "Slice");
		pl__onnx_io(m, so, "inputs", y);
		pl__onnx_io(m, so, "outputs", part[d]);
		cJSON *sa = cJSON_AddObjectToObject(so, "attrs");
		pl_json_add(sa, "axes", pl__onnx_int_list(axes, 2));
		pl_json_add(sa, "starts", pl__onnx_int_list(lo, 2));
		pl_json_add(sa, "ends", pl__onnx_int_list(hi, 2));
	}
	const char *both = part[0];
	if (D == 2) {
		snprintf(cat, sizeof cat, "%s.%s", name, suffix);
		cJSON *co = pl__onnx_add_op(m, cat, "Concat");
		pl__onnx_io(m, co, "inputs", part[0]);
		pl__onnx_io(m, co, "inputs", part[1]);
		pl__onnx_io(m, co, "outputs", cat);
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(co, "attrs"), "axis", 1);
		both = cat;
	}
	snprintf(tr, sizeof tr, "%s.%s_directions", name, suffix);
	int64_t perm[4] = {1, 0, 2, 3}, hd[3] = {0, -1, H};
	pl__onnx_emit_shaped(m, tr, "Transpose", both, tr, "perm", perm, 4);
	snprintf(buf, sizeof buf, "%s.%s_reshape", name, suffix);
	pl__onnx_emit_shaped(m, buf, "Reshape", tr, out, "shape", hd, 3);
	int64_t hdims[3] = {D, batch, H};
	pl__onnx_set_info(m, out, 3, hdims, 0, NULL);
}

/* RNN, GRU and LSTM as the planner's op of the same name (see
 * graph/ops/rnn.c for what it computes): layout 0, the default
 * activations, no clip, peepholes, input_forget or sequence lengths (or
 * lengths all the sequence's); initial states (initial_h, LSTM's
 * initial_c) given or zeros (then left out; a B of zeros, a const, is
 * added when the states are given without one). Y_h, when read, is the
 * last step of each direction of Y, and Y_c that of a second LSTM of the
 * same inputs giving its cells (cell_states) (emit_last_state). 0, or -1
 * with *why */
int pl__onnx_import_recurrent(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const char *t = n->op_type;
	int kind = !strcmp(t, "RNN") ? 0 : !strcmp(t, "GRU") ? 1 : 2;
	int64_t G = kind == 0 ? 1 : kind == 1 ? 3 : 4;
	tinfo *x = pl__onnx_known(m, n->input[0]),
	      *w = n->n_input > 2 ? pl__onnx_known(m, n->input[1]) : NULL,
	      *r = n->n_input > 2 ? pl__onnx_known(m, n->input[2]) : NULL;
	*why = "its input's, W's or R's shape is not known as [sequence, batch, input], "
	       "[directions, gates x hidden, input], [directions, gates x hidden, hidden]";
	if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3 || w->dims[1] % G ||
	    w->dims[1] < G || w->dims[0] < 1 || w->dims[0] > 2)
		return -1;
	int64_t D = w->dims[0], H = w->dims[1] / G, S = x->dims[0];
	char dir[32];
	pl__onnx_attr_str(n, "direction", dir, sizeof dir);
	*why = "its direction must be forward, reverse or bidirectional (with W of 2 "
	       "directions), and hidden_size W's";
	if ((dir[0] && strcmp(dir, "forward") && strcmp(dir, "reverse") &&
	     strcmp(dir, "bidirectional")) ||
	    (D == 2) != !strcmp(dir, "bidirectional") || pl__onnx_attr_i(n, "hidden_size", H) != H)
		return -1;
	*why = "only layout 0, the default activations, no clip, no input_forget are supported";
	if (pl__onnx_attr_i(n, "layout", 0) != 0 || pl__onnx_attr(n, "clip") ||
	    pl__onnx_attr_i(n, "input_forget", 0) || pl__onnx_attr(n, "activation_alpha") ||
	    pl__onnx_attr(n, "activation_beta") || !default_activations(n, kind, (int)D))
		return -1;
	*why = "sequence_lens other than the whole sequence and peepholes are not supported";
	if (n->n_input > 4 && !zeros(m, n->input[4], 0) && !all_values(m, n->input[4], (double)S))
		return -1;
	if (n->n_input > 7 && !zeros(m, n->input[7], 0))
		return -1;
	/* the initial states given (not zeros) */
	const char *h0 = n->n_input > 5 && !zeros(m, n->input[5], 0) ? n->input[5] : NULL;
	const char *c0 =
	    kind == 2 && n->n_input > 6 && !zeros(m, n->input[6], 0) ? n->input[6] : NULL;
	*why = "its initial_c is given but its initial_h is zeros (give both, as nn.LSTM does)";
	if (c0 && !h0)
		return -1;
	int64_t sdims[3] = {D, x->dims[1], H};
	tinfo *hs = h0 ? pl__onnx_known(m, h0) : NULL, *cs = c0 ? pl__onnx_known(m, c0) : NULL;
	*why = "its initial states' shapes are not [directions, batch, hidden]";
	if ((h0 && (!hs || hs->rank != 3 || memcmp(hs->dims, sdims, sizeof sdims))) ||
	    (c0 && (!cs || cs->rank != 3 || memcmp(cs->dims, sdims, sizeof sdims))))
		return -1;
	const char *bias = n->n_input > 3 && n->input[3][0] ? n->input[3] : NULL;
	char zb[600];
	if (h0 && !bias) { /* B before the states: zeros (a const, not a weight) */
		snprintf(zb, sizeof zb, "%s.B", name);
		*why = "its added bias's name is taken";
		if (pl__onnx_decl(m, zb))
			return -1;
		cJSON *c = cJSON_CreateObject();
		int64_t bd[2] = {D, 2 * G * H};
		pl_json_add(c, "shape", pl__onnx_int_list(bd, 2));
		cJSON_AddStringToObject(c, "role", "const");
		pl__onnx_const_values(c, NULL, bd[0] * bd[1], 0);
		pl_json_add(m->tensors, zb, c);
		bias = zb;
	}
	int yc = kind == 2 && n->n_output > 2 && onnx_read(m, n->output[2]);
	char yname[600];
	const char *y = n->output[0][0] ? n->output[0] : yname;
	snprintf(yname, sizeof yname, "%s.Y", name);
	int64_t ydims[4] = {S, D, x->dims[1], H};
	for (int cells = 0; cells <= yc; cells++) {
		char cname[600], opname[600];
		snprintf(cname, sizeof cname, "%s.Y_cells", name);
		snprintf(opname, sizeof opname, "%s.cells", name);
		cJSON *o = pl__onnx_add_op(m, cells ? opname : name, t);
		for (int k = 0; k < 3; k++)
			pl__onnx_io(m, o, "inputs", n->input[k]);
		if (bias)
			pl__onnx_io(m, o, "inputs", bias);
		if (h0)
			pl__onnx_io(m, o, "inputs", h0);
		if (c0)
			pl__onnx_io(m, o, "inputs", c0);
		pl__onnx_io(m, o, "outputs", cells ? cname : y);
		cJSON *at = cJSON_AddObjectToObject(o, "attrs");
		cJSON_AddStringToObject(at, "direction", dir[0] ? dir : "forward");
		if (kind == 1)
			cJSON_AddNumberToObject(at, "linear_before_reset",
			                        pl__onnx_attr_i(n, "linear_before_reset", 0) != 0);
		if (cells)
			cJSON_AddNumberToObject(at, "cell_states", 1);
		pl__onnx_set_info(m, kept(m, cells ? cname : y), 4, ydims, 0, NULL);
		if (cells)
			emit_last_state(m, name, "Y_c", cname, D, S, !strcmp(dir, "reverse"), H,
			                x->dims[1], n->output[2]);
	}
	if (n->n_output > 1 && onnx_read(m, n->output[1]))
		emit_last_state(m, name, "Y_h", y, D, S, !strcmp(dir, "reverse"), H, x->dims[1],
		                n->output[1]);
	return 0;
}

/* nn.EmbeddingBag as torch's exporter writes it: a Loop over the bags whose
 * body slices bag i out of the flattened ids (from starts[i] to ends[i],
 * outer constants), gathers its rows of the weight and reduces them (mean,
 * sum or max over axis 0); no loop-carried value. Bags all of one length L,
 * the i-th starting at i L (a 2-D input's, or offsets of equal steps), are
 * a Reshape of the ids to [bags, L], a Gather and a Reduce over axis 1.
 * 0, or -1 when the Loop is not such a bag loop. */
int pl__onnx_import_embedding_bag(imp *m, const Onnx__NodeProto *n, const char *name)
{
	const Onnx__AttributeProto *b = pl__onnx_attr(n, "body");
	const Onnx__GraphProto *g = b ? b->g : NULL;
	double trips;
	if (!g || n->n_input != 2 || n->n_output != 1 || g->n_input != 2 || g->n_output != 2 ||
	    !g->input[0]->name || !g->output[1]->name ||
	    pl__onnx_scalar_of(m, n->input[0], &trips) || !(trips >= 1) ||
	    trips > (double)MAX_VALUES)
		return -1;
	const char *iter = g->input[0]->name;
	const Onnx__NodeProto *slice = NULL, *gather = NULL, *reduce = NULL;
	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *q = g->node[k];
		const char *t = q->op_type ? q->op_type : "";
		if (!strcmp(t, "Slice") && !slice)
			slice = q;
		else if (!strcmp(t, "Gather") && q->n_input == 2 && !strcmp(t, "Gather") &&
		         strcmp(q->input[1], iter) && !gather)
			gather = q;
		else if ((!strcmp(t, "ReduceMean") || !strcmp(t, "ReduceSum") ||
		          !strcmp(t, "ReduceMax")) &&
		         !reduce)
			reduce = q;
		else if (strcmp(t, "Gather") && strcmp(t, "Unsqueeze") && strcmp(t, "Constant") &&
		         strcmp(t, "Cast") && strcmp(t, "Identity"))
			return -1; /* anything else (per_sample_weights' Mul, ...) */
	}
	if (!slice || !gather || !reduce || slice->n_input < 3 || slice->n_output < 1 ||
	    gather->n_output < 1 || reduce->n_output < 1 || reduce->n_input < 1 ||
	    strcmp(gather->input[1], slice->output[0]) ||
	    strcmp(reduce->input[0], gather->output[0]) ||
	    strcmp(g->output[1]->name, reduce->output[0]) ||
	    pl__onnx_attr_i(gather, "axis", 0) != 0 || pl__onnx_attr_i(reduce, "keepdims", 1) != 0)
		return -1;
	/* the body's Constants known (ReduceSum's axes from opset 13 are one) */
	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *q = g->node[k];
		const Onnx__AttributeProto *v = pl__onnx_attr(q, "value");
		if (q->op_type && !strcmp(q->op_type, "Constant") && q->n_output == 1 && v && v->t)
			pl__onnx_set_tensor(m, q->output[0], v->t, MAX_VALUES);
	}
	const Onnx__AttributeProto *ax = pl__onnx_attr(reduce, "axes");
	tinfo *axv = reduce->n_input > 1 ? pl__onnx_valued(m, reduce->input[1]) : NULL;
	if (ax ? ax->n_ints != 1 || ax->ints[0] != 0
	       : !axv || axv->nval != 1 || axv->val[0] != 0 || reduce->n_input > 2)
		return -1;
	/* the bag bounds: Unsqueeze(Gather(outer, iter)) of starts and ends */
	const tinfo *bound[2] = {NULL, NULL};
	for (int e = 0; e < 2; e++) {
		const char *u = slice->input[1 + e];
		for (size_t k = 0; k < g->n_node && !bound[e]; k++) {
			const Onnx__NodeProto *q = g->node[k];
			if (!q->op_type || strcmp(q->op_type, "Unsqueeze") || q->n_output < 1 ||
			    strcmp(q->output[0], u) || q->n_input < 1)
				continue;
			for (size_t j = 0; j < g->n_node; j++) {
				const Onnx__NodeProto *r = g->node[j];
				if (r->op_type && !strcmp(r->op_type, "Gather") &&
				    r->n_input == 2 && r->n_output >= 1 &&
				    !strcmp(r->output[0], q->input[0]) &&
				    !strcmp(r->input[1], iter))
					bound[e] = pl__onnx_valued(m, r->input[0]);
			}
		}
	}
	tinfo *ids = pl__onnx_known(m, slice->input[0]), *w = pl__onnx_known(m, gather->input[0]);
	int64_t M = (int64_t)trips;
	if (!bound[0] || !bound[1] || bound[0]->nval < M || bound[1]->nval < M || !ids ||
	    ids->rank != 1 || !w || w->rank != 2)
		return -1;
	int64_t L = pl__onnx_to_i64(bound[1]->val[0] - bound[0]->val[0]);
	if (L < 1 || ids->dims[0] != M * L)
		return -1;
	for (int64_t i = 0; i < M; i++)
		if (pl__onnx_to_i64(bound[0]->val[i]) != i * L ||
		    pl__onnx_to_i64(bound[1]->val[i]) != (i + 1) * L)
			return -1;
	char bags[600], rows[600];
	snprintf(bags, sizeof bags, "%s.bags", name);
	snprintf(rows, sizeof rows, "%s.rows", name);
	int64_t shape[2] = {M, L};
	pl__onnx_emit_shaped(m, bags, "Reshape", slice->input[0], bags, "shape", shape, 2);
	cJSON *o = pl__onnx_add_op(m, rows, "Gather");
	pl__onnx_io(m, o, "inputs", gather->input[0]);
	pl__onnx_io(m, o, "inputs", bags);
	pl__onnx_io(m, o, "outputs", rows);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", 0);
	o = pl__onnx_add_op(m, name, reduce->op_type);
	pl__onnx_io(m, o, "inputs", rows);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	int64_t one = 1;
	pl_json_add(at, "axes", pl__onnx_int_list(&one, 1));
	cJSON_AddNumberToObject(at, "keepdims", 0);
	int64_t dims[3] = {M, L, w->dims[1]};
	pl__onnx_set_info(m, kept(m, bags), 2, shape, 0, NULL);
	pl__onnx_set_info(m, kept(m, rows), 3, dims, 0, NULL);
	dims[1] = w->dims[1];
	pl__onnx_set_info(m, n->output[0], 2, dims, 0, NULL);
	return 0;
}

/* The index ops as the planner's of the same name (graph/ops/index.c):
 * ArgMax and ArgMin (axis, keepdims, select_last_index), OneHot (its depth
 * and values constants, as attributes; its output of the values' type),
 * GatherElements, and TopK with its K a constant: the planner's TopK gives
 * the indices (output 1), and the values (output 0), when read, are
 * GatherElements of them, through which the gradient flows. 0, or -1 with
 * *why */
int pl__onnx_import_index(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const char *t = n->op_type;
	tinfo *x = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL;
	*why = "its input's shape is not known";
	if (!x || x->rank < 1)
		return -1;
	int64_t dims[16];
	if (!strcmp(t, "ArgMax") || !strcmp(t, "ArgMin")) {
		int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), x->rank);
		int keep = pl__onnx_attr_i(n, "keepdims", 1) != 0;
		*why = "its axis is out of range";
		if (ax < 0 || ax >= x->rank)
			return -1;
		cJSON *o = pl__onnx_add_op(m, name, t);
		pl__onnx_io(m, o, "inputs", n->input[0]);
		pl__onnx_io(m, o, "outputs", n->output[0]);
		cJSON *at = cJSON_AddObjectToObject(o, "attrs");
		cJSON_AddNumberToObject(at, "axis", (double)ax);
		cJSON_AddNumberToObject(at, "keepdims", keep);
		cJSON_AddNumberToObject(at, "select_last_index",
		                        pl__onnx_attr_i(n, "select_last_index", 0) != 0);
		int r = 0;
		for (int d = 0; d < x->rank; d++)
			if (d != ax || keep)
				dims[r++] = d == ax ? 1 : x->dims[d];
		pl__onnx_set_info(m, n->output[0], r, dims, 0, NULL);
		return 0;
	}
	if (!strcmp(t, "OneHot")) {
		double depth;
		tinfo *v = n->n_input > 2 ? pl__onnx_valued(m, n->input[2]) : NULL;
		*why = "its depth must be a constant from 1 to 2^31 and its values a constant "
		       "[off_value, on_value]";
		if (n->n_input < 3 || pl__onnx_scalar_of(m, n->input[1], &depth) || !(depth >= 1) ||
		    depth > 2147483648.0 || !v || v->nval != 2 || !isfinite(v->val[0]) ||
		    !isfinite(v->val[1]) || x->rank >= 8)
			return -1;
		int64_t ax = pl__onnx_attr_i(n, "axis", -1);
		ax = ax < 0 ? ax + x->rank + 1 : ax;
		*why = "its axis is out of range";
		if (ax < 0 || ax > x->rank)
			return -1;
		cJSON *o = pl__onnx_add_op(m, name, "OneHot");
		pl__onnx_io(m, o, "inputs", n->input[0]);
		pl__onnx_io(m, o, "outputs", n->output[0]);
		cJSON *at = cJSON_AddObjectToObject(o, "attrs");
		cJSON_AddNumberToObject(at, "axis", (double)ax);
		cJSON_AddNumberToObject(at, "depth", (double)(int64_t)depth);
		cJSON *vals = cJSON_AddArrayToObject(at, "values");
		cJSON_AddItemToArray(vals, cJSON_CreateNumber(v->val[0]));
		cJSON_AddItemToArray(vals, cJSON_CreateNumber(v->val[1]));
		const char *dt = v->elem ? pl__onnx_dtype_name(v->elem) : NULL;
		cJSON_AddStringToObject(at, "dtype", dt ? dt : "int64");
		for (int d = 0, o2 = 0; o2 <= x->rank; o2++)
			dims[o2] = o2 == ax ? (int64_t)depth : x->dims[d++];
		pl__onnx_set_info(m, n->output[0], x->rank + 1, dims, 0, NULL);
		return 0;
	}
	if (!strcmp(t, "GatherElements")) {
		int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), x->rank);
		tinfo *ix = n->n_input > 1 ? pl__onnx_known(m, n->input[1]) : NULL;
		*why = "its indices' shape is not known, or its axis is out of range";
		if (!ix || ix->rank != x->rank || ax < 0 || ax >= x->rank)
			return -1;
		cJSON *o = pl__onnx_add_op(m, name, "GatherElements");
		pl__onnx_io(m, o, "inputs", n->input[0]);
		pl__onnx_operand(m, o, n->input[1]);
		pl__onnx_io(m, o, "outputs", n->output[0]);
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "attrs"), "axis", (double)ax);
		pl__onnx_set_info(m, n->output[0], ix->rank, ix->dims, 0, NULL);
		return 0;
	}
	/* TopK */
	double k;
	int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", -1), x->rank);
	*why = "its K must be a constant from 1 to its axis's size, and its axis in range";
	if (n->n_input < 2 || ax < 0 || ax >= x->rank || pl__onnx_scalar_of(m, n->input[1], &k) ||
	    !(k >= 1) || k > (double)x->dims[ax])
		return -1;
	char iname[600];
	const char *idx = n->n_output > 1 && n->output[1][0] ? n->output[1] : iname;
	snprintf(iname, sizeof iname, "%s.indices", name);
	char tname[600];
	snprintf(tname, sizeof tname, "%s.indices", name);
	cJSON *o = pl__onnx_add_op(m, n->n_output > 0 && onnx_read(m, n->output[0]) ? tname : name,
	                           "TopK");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", idx);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", (double)ax);
	cJSON_AddNumberToObject(at, "k", (double)(int64_t)k);
	cJSON_AddNumberToObject(at, "largest", pl__onnx_attr_i(n, "largest", 1) != 0);
	cJSON_AddNumberToObject(at, "sorted", pl__onnx_attr_i(n, "sorted", 1) != 0);
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[ax] = (int64_t)k;
	pl__onnx_set_info(m, kept(m, idx), x->rank, dims, 0, NULL);
	if (n->n_output < 1 || !onnx_read(m, n->output[0]))
		return 0;
	cJSON *g = pl__onnx_add_op(m, name, "GatherElements");
	pl__onnx_io(m, g, "inputs", n->input[0]);
	pl__onnx_io(m, g, "inputs", idx);
	pl__onnx_io(m, g, "outputs", n->output[0]);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(g, "attrs"), "axis", (double)ax);
	pl__onnx_set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

/* Tile (torch's repeat) of x by constant repeats: x with a dimension of 1
 * before each repeated one (a Reshape), that expanded to the repeats (an
 * Expand), the pairs merged (a Reshape): each repeated dimension the whole
 * of it `repeats` times over. 0, or -1 when the shape or the repeats are
 * not known */
int pl__onnx_import_tile(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]),
	      *rp = n->n_input > 1 ? pl__onnx_valued(m, n->input[1]) : NULL;
	if (!x || !rp || rp->rank != 1 || rp->nval != x->rank || x->rank > 8)
		return -1;
	int64_t split[16], grown[16], out[16];
	int k = 0;
	for (int d = 0; d < x->rank; d++) {
		int64_t r = pl__onnx_to_i64(rp->val[d]);
		if (r < 1 || r > 1000000)
			return -1;
		if (r > 1) {
			split[k] = 1;
			grown[k++] = r;
		}
		split[k] = x->dims[d];
		grown[k++] = x->dims[d];
		if (__builtin_mul_overflow(r, x->dims[d], &out[d]) || out[d] > (INT64_C(1) << 50))
			return -1;
	}
	char a[600], b[600];
	snprintf(a, sizeof a, "%s.split", name);
	snprintf(b, sizeof b, "%s.grown", name);
	pl__onnx_emit_reshape(m, a, n->input[0], split, k, a);
	pl__onnx_emit_shaped(m, b, "Expand", a, b, "shape", grown, k);
	pl__onnx_emit_reshape(m, name, b, out, x->rank, n->output[0]);
	pl__onnx_set_info(m, n->output[0], x->rank, out, 0, NULL);
	return 0;
}

/* DepthToSpace (PixelShuffle: blocksize r, mode DCR or CRD) and
 * SpaceToDepth of x [N, C, H, W]: a Reshape, a Transpose and a Reshape, as
 * ONNX defines them. 0, or -1 when the shape is not known or r does not
 * divide it */
int pl__onnx_import_depth_space(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int64_t r = pl__onnx_attr_i(n, "blocksize", 0);
	char mode[8];
	pl__onnx_attr_str(n, "mode", mode, sizeof mode);
	int to_space = !strcmp(n->op_type, "DepthToSpace"), crd = !strcmp(mode, "CRD");
	if (!x || x->rank != 4 || r < 1 || r > 4096 ||
	    (to_space ? x->dims[1] % (r * r) : x->dims[2] % r || x->dims[3] % r))
		return -1;
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t six[6], out[4], perm[6], big = INT64_C(1) << 40;
	if (H > big || W > big || C > big) /* r (at most 4096) times them stays exact */
		return -1;
	if (to_space) {
		int64_t c = C / (r * r);
		int64_t dcr[6] = {N, r, r, c, H, W}, crd6[6] = {N, c, r, r, H, W};
		int64_t pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
		memcpy(six, crd ? crd6 : dcr, sizeof six);
		memcpy(perm, crd ? pc : pd, sizeof perm);
		out[0] = N, out[1] = c, out[2] = H * r, out[3] = W * r;
	} else {
		int64_t s6[6] = {N, C, H / r, r, W / r, r}, p6[6] = {0, 3, 5, 1, 2, 4};
		memcpy(six, s6, sizeof six);
		memcpy(perm, p6, sizeof perm);
		out[0] = N, out[1] = C * r * r, out[2] = H / r, out[3] = W / r;
	}
	char a[600], b[600];
	snprintf(a, sizeof a, "%s.blocks", name);
	snprintf(b, sizeof b, "%s.moved", name);
	pl__onnx_emit_reshape(m, a, n->input[0], six, 6, a);
	pl__onnx_emit_shaped(m, b, "Transpose", a, b, "perm", perm, 6);
	pl__onnx_emit_reshape(m, name, b, out, 4, n->output[0]);
	pl__onnx_set_info(m, n->output[0], 4, out, 0, NULL);
	return 0;
}

/* A Pad whose pads are all known and 0 (Swin pads its windows' input to a
 * multiple of the window, by nothing where the size is one) */
int pl__onnx_pads_nothing(imp *m, const Onnx__NodeProto *n)
{
	int64_t p[32];
	int np = pl__onnx_ints_of(m, n, "pads", 1, p, 32);
	tinfo *x = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL;
	if (!x || np != 2 * x->rank)
		return 0;
	for (int i = 0; i < np; i++)
		if (p[i])
			return 0;
	return 1;
}

/* A Pad's amounts for every dimension of a rank-r input, begins then ends,
 * into p (2 r entries): its pads (an attribute before opset 11, then input
 * 1), and from opset 18 its axes (input 3, a constant; negative from the
 * end), which name the dimensions the pads are for, the others left as
 * they are. -1 when they are not constants of that many entries, or an axis
 * is out of range or named twice. */
static int pad_amounts(imp *m, const Onnx__NodeProto *n, int r, int64_t *p)
{
	int64_t q[2 * PL_MAX_RANK], ax[PL_MAX_RANK];
	int na = r;
	if (r < 0 || r > PL_MAX_RANK)
		return -1;
	for (int d = 0; d < r; d++)
		ax[d] = d;
	if (n->n_input > 3 && n->input[3][0]) {
		tinfo *t = pl__onnx_valued(m, n->input[3]);
		if (!t || t->nval < 1 || t->nval > r)
			return -1;
		na = t->nval;
		for (int i = 0; i < na; i++) {
			int64_t a = pl__onnx_to_i64(t->val[i]);
			a = a < 0 ? a + r : a;
			if (a < 0 || a >= r)
				return -1;
			for (int j = 0; j < i; j++)
				if (ax[j] == a)
					return -1;
			ax[i] = a;
		}
	}
	if (pl__onnx_ints_of(m, n, "pads", 1, q, 2 * PL_MAX_RANK) != 2 * na)
		return -1;
	for (int d = 0; d < 2 * r; d++)
		p[d] = 0;
	for (int i = 0; i < na; i++) {
		p[ax[i]] = q[i];
		p[r + ax[i]] = q[na + i];
	}
	return 0;
}

/* A Pad of zeros on the spatial dimensions whose one reader is a Conv or an
 * AveragePool (torch exports AvgPool2d(count_include_pad=True) so) becomes
 * that op's padding: 0, or -1 when it is not such a Pad */
int pl__onnx_fold_pad(imp *m, const Onnx__NodeProto *n)
{
	tinfo *x = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL;
	const Onnx__AttributeProto *mode = pl__onnx_attr(n, "mode");
	const Onnx__AttributeProto *val = pl__onnx_attr(n, "value");
	double v = 0;
	int64_t p[16];
	if (!x || x->rank < 3 || x->rank > 5 ||
	    (mode && mode->has_s && (mode->s.len != 8 || memcmp(mode->s.data, "constant", 8))))
		return -1;
	if ((n->n_input > 2 && n->input[2][0] &&
	     (pl__onnx_scalar_of(m, n->input[2], &v) || v != 0)) ||
	    (val && val->has_f && val->f != 0))
		return -1;
	int r = x->rank, who;
	if (pad_amounts(m, n, r, p) || p[0] || p[1] || p[r] || p[r + 1] ||
	    pl__onnx_consumers(m, n->output[0], &who, 1) != 1)
		return -1;
	const char *c = m->g->node[who]->op_type;
	if (!c || (strcmp(c, "Conv") && strcmp(c, "AveragePool")) ||
	    strcmp(m->g->node[who]->input[0], n->output[0]))
		return -1;
	struct padded *d = &m->padded[m->npadded];
	d->out = n->output[0];
	d->in = n->input[0];
	d->nsp = r - 2;
	for (int i = 0; i < r - 2; i++) {
		if (p[2 + i] < 0 || p[2 + i] > (1 << 20) || p[r + 2 + i] < 0 ||
		    p[r + 2 + i] > (1 << 20))
			return -1;
		d->p[i] = p[2 + i];
		d->p[r - 2 + i] = p[r + 2 + i];
	}
	m->npadded++;
	return 0;
}

/* Any other Pad: the planner's Pad (constant, reflect or edge; pads an
 * attribute before opset 11, then input 1, the constant input 2 or the
 * value attribute). 0, or -1 with *why */
int pl__onnx_import_pad(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int64_t p[2 * PL_MAX_RANK];
	*why = "its input's shape is not known";
	if (!x || x->rank > PL_MAX_RANK)
		return -1;
	*why = "its pads (and axes) are not constants of two non-negative entries a dimension "
	       "padded (negative pads crop)";
	if (pad_amounts(m, n, x->rank, p))
		return -1;
	int64_t dims[16];
	for (int d = 0; d < x->rank; d++) {
		if (p[d] < 0 || p[x->rank + d] < 0 || p[d] > (1 << 20) ||
		    p[x->rank + d] > (1 << 20))
			return -1;
		dims[d] = x->dims[d] + p[d] + p[x->rank + d];
	}
	*why = "it pads the batch (dimension 0)";
	if (p[0] || p[x->rank])
		return -1;
	char mode[16];
	pl__onnx_attr_str(n, "mode", mode, sizeof mode);
	*why = "mode must be constant, reflect, edge or wrap";
	if (mode[0] && strcmp(mode, "constant") && strcmp(mode, "reflect") &&
	    strcmp(mode, "edge") && strcmp(mode, "wrap"))
		return -1;
	double v = 0;
	const Onnx__AttributeProto *va = pl__onnx_attr(n, "value");
	*why = "its constant value is not a known number";
	if (va && va->has_f)
		v = va->f;
	if (n->n_input > 2 && n->input[2][0] && pl__onnx_scalar_of(m, n->input[2], &v))
		return -1;
	cJSON *o = pl__onnx_add_op(m, name, "Pad");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(at, "pads", pl__onnx_int_list(p, (size_t)(2 * x->rank)));
	cJSON_AddStringToObject(at, "mode", mode[0] ? mode : "constant");
	cJSON_AddNumberToObject(at, "value", v);
	pl__onnx_set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

/* op o's attrs of a window over nsp spatial dimensions: its kernel_shape k
 * (NULL: a Conv's, from its weight), strides, pads (begins, then ends) and
 * dilations; returns the attrs */
cJSON *pl__onnx_window_attrs(cJSON *o, const int64_t *k, const int64_t *s, const int64_t *p,
                             const int64_t *d, int nsp)
{
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	if (k)
		pl_json_add(at, "kernel_shape", pl__onnx_int_list(k, (size_t)nsp));
	pl_json_add(at, "strides", pl__onnx_int_list(s, (size_t)nsp));
	pl_json_add(at, "pads", pl__onnx_int_list(p, (size_t)(2 * nsp)));
	pl_json_add(at, "dilations", pl__onnx_int_list(d, (size_t)nsp));
	return at;
}

/* Conv, MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool: the
 * window written out as the model format states it (auto_pad turned into
 * pads, a global pool into a window over the whole input), the output's
 * shape recorded. 0, or -1 with *why */
int pl__onnx_import_window(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	const char *t = n->op_type;
	int conv = !strcmp(t, "Conv"), global = !strncmp(t, "Global", 6),
	    maxp = strstr(t, "MaxPool") != NULL;
	const char *xname = n->n_input > 0 ? n->input[0] : "";
	const struct padded *pad = NULL;
	for (int i = 0; i < m->npadded && !pad; i++)
		if (!strcmp(m->padded[i].out, xname))
			pad = &m->padded[i];
	if (pad)
		xname = pad->in;
	tinfo *x = xname[0] ? pl__onnx_known(m, xname) : NULL;
	tinfo *w = conv && n->n_input > 1 ? pl__onnx_known(m, n->input[1]) : NULL;
	*why = "its input's shape is not known as [batch, channels, 1 to 3 spatial dimensions]";
	if (!x || x->rank < 3 || x->rank > 5)
		return -1;
	int nsp = x->rank - 2;
	*why = "its weight's shape is not known as [output channels, input channels of a group, "
	       "the kernel]";
	if (conv && (!w || w->rank != x->rank))
		return -1;
	int64_t k[3], s[3], d[3], p[6], dims[5] = {x->dims[0], conv ? w->dims[0] : x->dims[1]};
	*why = "kernel_shape, strides, dilations or pads has the wrong count or an out-of-range "
	       "value";
	if (conv || global)
		for (int i = 0; i < nsp; i++)
			k[i] = conv ? w->dims[2 + i] : x->dims[2 + i];
	else if (pl__onnx_window_ints(m, n, "kernel_shape", nsp, 0, 1, k))
		return -1;
	if (pl__onnx_window_ints(m, n, "strides", nsp, 1, 1, s) ||
	    pl__onnx_window_ints(m, n, "dilations", nsp, 1, 1, d) ||
	    pl__onnx_window_ints(m, n, "pads", 2 * nsp, 0, 0, p))
		return -1;
	/* LpPool's window is an average of the powers that counts the padding
	 * (onnx_lppool multiplies it back into their sum) */
	int include_pad =
	    strstr(n->op_type, "LpPool") ? 1 : (int)pl__onnx_attr_i(n, "count_include_pad", 0);
	if (pad) { /* a Pad of zeros before: its zeros count in an average */
		*why = "a Pad before it with pads of its own that do not count in its average";
		if (!conv && !include_pad)
			for (int i = 0; i < 2 * nsp; i++)
				if (p[i])
					return -1;
		for (int i = 0; i < 2 * nsp; i++)
			p[i] += pad->p[i];
		include_pad = 1;
	}
	char mode[16];
	pl__onnx_attr_str(n, "auto_pad", mode, sizeof mode);
	if (!mode[0])
		snprintf(mode, sizeof mode, "NOTSET");
	int same = !strncmp(mode, "SAME_", 5);
	*why = "auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER";
	if (!same && strcmp(mode, "NOTSET") && strcmp(mode, "VALID"))
		return -1;
	for (int i = 0; i < nsp; i++) {
		int64_t span = (k[i] - 1) * d[i] + 1, in = x->dims[2 + i];
		if (same) { /* the output keeps ceil(in / stride) positions */
			int64_t out = (in + s[i] - 1) / s[i], total = (out - 1) * s[i] + span - in;
			total = total < 0 ? 0 : total;
			p[i] = !strcmp(mode, "SAME_LOWER") ? (total + 1) / 2 : total / 2;
			p[nsp + i] = total - p[i];
		} else if (!strcmp(mode, "VALID")) {
			p[i] = p[nsp + i] = 0;
		}
		int64_t room = in + p[i] + p[nsp + i] - span;
		*why = "its window is larger than the padded input";
		if (room < 0)
			return -1;
		dims[2 + i] = room / s[i] + 1;
		if (!conv && pl__onnx_attr_i(n, "ceil_mode", 0) && room % s[i] &&
		    dims[2 + i] * s[i] < in + p[i])
			dims[2 + i]++;
	}
	*why = "its Indices output is not supported";
	if (maxp && n->n_output > 1 && n->output[1][0])
		return -1;
	cJSON *o = pl__onnx_add_op(m, name, conv ? "Conv" : maxp ? "MaxPool" : "AveragePool");
	pl__onnx_io(m, o, "inputs", xname);
	for (size_t i = 1; i < n->n_input && i < (conv ? 3u : 1u); i++)
		if (n->input[i][0])
			pl__onnx_io(m, o, "inputs", n->input[i]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = pl__onnx_window_attrs(o, conv ? NULL : k, s, p, d, nsp);
	if (conv)
		cJSON_AddNumberToObject(at, "group", (double)pl__onnx_attr_i(n, "group", 1));
	else
		cJSON_AddNumberToObject(at, "ceil_mode",
		                        (double)pl__onnx_attr_i(n, "ceil_mode", 0));
	if (!conv && !maxp)
		cJSON_AddNumberToObject(at, "count_include_pad", include_pad);
	pl__onnx_set_info(m, n->output[0], x->rank, dims, 0, NULL);
	return 0;
}

/* Resize (opset 10 on) and Upsample (before): the spatial dimensions to the
 * sizes, or the scales times the input's; nearest, linear or cubic, in the
 * coordinate modes the planner's Resize has. 0, or -1 with *why. */
int pl__onnx_import_resize(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	int up = !strcmp(n->op_type, "Upsample"), old = up || m->opset < 11;
	char mode[32], coord[32], near[32];
	pl__onnx_attr_str(n, "mode", mode, sizeof mode);
	pl__onnx_attr_str(n, "coordinate_transformation_mode", coord, sizeof coord);
	pl__onnx_attr_str(n, "nearest_mode", near, sizeof near);
	if (!mode[0])
		snprintf(mode, sizeof mode, "nearest");
	if (!strcmp(mode, "bilinear") || !strcmp(mode, "trilinear")) /* Upsample-7's names */
		snprintf(mode, sizeof mode, "linear");
	/* before opset 11: x_in = x_out / scale, nearest rounding down */
	if (!coord[0])
		snprintf(coord, sizeof coord, old ? "asymmetric" : "half_pixel");
	if (!near[0])
		snprintf(near, sizeof near, old ? "floor" : "round_prefer_floor");
	*why = "its input's shape is not known, or it is not 3- to 5-d";
	if (!x || x->rank < 3 || x->rank > 5)
		return -1;
	*why = "antialias, axes and the tf_* coordinate modes are not supported";
	int ok_mode = !strcmp(mode, "nearest") || !strcmp(mode, "linear") || !strcmp(mode, "cubic");
	int ok_coord = 0, ok_near = 0;
	for (int v = 0; pl_resize_coord_name(v); v++)
		ok_coord |= !strcmp(coord, pl_resize_coord_name(v));
	for (int v = 0; pl_resize_nearest_name(v); v++)
		ok_near |= !strcmp(near, pl_resize_nearest_name(v));
	int64_t exclude = pl__onnx_attr_i(n, "exclude_outside", 0);
	if (!ok_mode || !ok_coord || !ok_near || (exclude != 0 && exclude != 1) ||
	    pl__onnx_attr_i(n, "antialias", 0) || pl__onnx_attr(n, "axes"))
		return -1;
	/* the sizes (input 3), or the scales (input 2 from opset 11, 1 before,
	 * Upsample-7's attribute) */
	int64_t dims[16];
	double sc[16];
	int r = x->rank, ns = 0;
	tinfo *sz =
	    !old && n->n_input > 3 && n->input[3][0] ? pl__onnx_valued(m, n->input[3]) : NULL;
	size_t si = old ? 1 : 2;
	tinfo *st = n->n_input > si && n->input[si][0] ? pl__onnx_valued(m, n->input[si]) : NULL;
	const Onnx__AttributeProto *sa = pl__onnx_attr(n, "scales");
	*why = "its sizes or scales are not constants the importer can fold, or they change the "
	       "batch or the channels, or a scale gives a fraction of an element";
	if (sz && sz->nval == r) {
		for (int d = 0; d < r; d++)
			dims[d] = pl__onnx_to_i64(sz->val[d]);
	} else {
		if (st && st->nval == r)
			for (int d = 0; d < r; d++)
				sc[ns++] = st->val[d];
		else if (sa && (int)sa->n_floats == r)
			for (int d = 0; d < r; d++)
				sc[ns++] = sa->floats[d];
		if (ns != r)
			return -1;
		for (int d = 0; d < r; d++) {
			double o = (double)x->dims[d] * sc[d];
			if (!(sc[d] > 0) || o != floor(o) || o > (double)BIG)
				return -1;
			dims[d] = (int64_t)o;
		}
	}
	if (dims[0] != x->dims[0] || dims[1] != x->dims[1])
		return -1;
	for (int d = 2; d < r; d++)
		if (dims[d] < 1)
			return -1;
	cJSON *o = pl__onnx_add_op(m, name, "Resize");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	pl_json_add(at, "shape", pl__onnx_int_list(dims + 2, (size_t)(r - 2)));
	cJSON_AddStringToObject(at, "mode", mode);
	cJSON_AddStringToObject(at, "coordinate_transformation_mode", coord);
	cJSON_AddStringToObject(at, "nearest_mode", near);
	if (!strcmp(mode, "cubic")) {
		cJSON_AddNumberToObject(at, "cubic_coeff_a", pl__onnx_attr_f(n, "cubic_coeff_a", -0.75));
		cJSON_AddNumberToObject(at, "exclude_outside", (double)exclude);
	}
	pl__onnx_set_info(m, n->output[0], r, dims, 0, NULL);
	return 0;
}

/* Flatten: a Reshape to [the dimensions before axis, those from it] */
int pl__onnx_import_flatten(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = n->n_input > 0 ? pl__onnx_known(m, n->input[0]) : NULL;
	if (!x)
		return -1;
	int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 1), x->rank), two[2] = {1, 1};
	if (ax < 0 || ax > x->rank)
		return -1;
	for (int d = 0; d < x->rank; d++)
		if (__builtin_mul_overflow(two[d >= ax], x->dims[d], &two[d >= ax]) ||
		    two[d >= ax] > BIG)
			return -1;
	cJSON *o = pl__onnx_add_op(m, name, "Reshape");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "shape", pl__onnx_int_list(two, 2));
	pl__onnx_set_info(m, n->output[0], 2, two, 0, NULL);
	return 0;
}

/* whether every value of tensor name is known and equals v */
static int all_values(imp *m, const char *name, double v)
{
	tinfo *t = pl__onnx_valued(m, name);
	for (int i = 0; t && i < t->nval; i++)
		if (t->val[i] != v)
			return 0;
	return t != NULL && t->nval > 0;
}

/* A reduction op `opname` of `type` reading in, writing out, over the na
 * axes (none: all) */
void pl__onnx_emit_reduce(imp *m, const char *opname, const char *type, const char *in,
                          const char *out, const int64_t *ax, int na, int keepdims)
{
	cJSON *o = pl__onnx_add_op(m, opname, type);
	pl__onnx_io(m, o, "inputs", in);
	pl__onnx_io(m, o, "outputs", out);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	if (na > 0)
		pl_json_add(at, "axes", pl__onnx_int_list(ax, (size_t)na));
	cJSON_AddNumberToObject(at, "keepdims", keepdims);
}

/* An op `opname` of `type` reading a (and b), writing out */
void pl__onnx_emit_binary(imp *m, const char *opname, const char *type, const char *a,
                          const char *b, const char *out)
{
	cJSON *o = pl__onnx_add_op(m, opname, type);
	pl__onnx_io(m, o, "inputs", a);
	if (b)
		pl__onnx_io(m, o, "inputs", b);
	pl__onnx_io(m, o, "outputs", out);
}

void pl__onnx_emit_unary_op(imp *m, const char *opname, const char *type, const char *a,
                            const char *out)
{
	pl__onnx_emit_binary(m, opname, type, a, NULL, out);
}

/* Transpose op `opname` of operand `in` (a constant one declared) by perm
 * (r of them) into out */
static void emit_transpose(imp *m, const char *opname, const char *in, const int64_t *perm, int r,
                           const char *out)
{
	cJSON *o = pl__onnx_add_op(m, opname, "Transpose");
	pl__onnx_operand(m, o, in);
	pl__onnx_io(m, o, "outputs", out);
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "perm",
	            pl__onnx_int_list(perm, (size_t)r));
}

/* What a scatter puts, `placed` (of data's shape), over `data` into out (op
 * `opname`): added to it where hits is NULL (reduction add), else replacing
 * the data where hits (broadcast to it) is 1: data - data * hits + placed,
 * ops name.hit and name.kept */
static void emit_put(imp *m, const char *name, const char *data, const char *hits,
                     const char *placed, const char *opname, const char *out)
{
	const char *keep = data;
	char hit[600], kept[600];
	if (hits) {
		snprintf(hit, sizeof hit, "%s.hit", name);
		cJSON *mul = pl__onnx_add_op(m, hit, "Mul");
		pl__onnx_operand(m, mul, data);
		pl__onnx_io(m, mul, "inputs", hits);
		pl__onnx_io(m, mul, "outputs", hit);
		snprintf(kept, sizeof kept, "%s.kept", name);
		cJSON *sub = pl__onnx_add_op(m, kept, "Sub");
		pl__onnx_operand(m, sub, data);
		pl__onnx_io(m, sub, "inputs", hit);
		pl__onnx_io(m, sub, "outputs", kept);
		keep = kept;
	}
	cJSON *a = pl__onnx_add_op(m, opname, "Add");
	pl__onnx_operand(m, a, keep);
	pl__onnx_io(m, a, "inputs", placed);
	pl__onnx_io(m, a, "outputs", out);
}

/* ScatterElements (torch's scatter and scatter_add: a router's top-k placed
 * back, zeros_like(x).scatter(-1, idx, src)) in the planner's ops, along the
 * last axis: the indices one-hot over the axis ([..., k, N]; OneHot, no
 * gradient), times the updates ([..., k, 1]), summed over k: the updates
 * where the indices put them. With reduction add that is added to the data;
 * with none it replaces the data where an index hits (data - data * hits +
 * it; data of zeros, the usual case, skips that). Along another axis, the
 * same between Transposes that swap it with the last. Indices repeated in
 * one row add up (ONNX leaves which wins undefined). 0, or -1 with *why */
int pl__onnx_import_scatter(imp *m, const Onnx__NodeProto *n, const char *name, const char **why)
{
	tinfo *x = pl__onnx_known(m, n->input[0]),
	      *ix = n->n_input > 1 ? pl__onnx_known(m, n->input[1]) : NULL,
	      *u = n->n_input > 2 ? pl__onnx_known(m, n->input[2]) : NULL;
	char red[16];
	pl__onnx_attr_str(n, "reduction", red, sizeof red);
	*why = "its inputs' shapes are not known, or its indices' and updates' differ";
	if (!x || !ix || !u || x->rank < 1 || x->rank > 15 || ix->rank != x->rank ||
	    u->rank != x->rank || memcmp(ix->dims, u->dims, sizeof(int64_t) * (size_t)x->rank))
		return -1;
	int r = x->rank;
	int64_t ax = pl__onnx_axis_of(pl__onnx_attr_i(n, "axis", 0), r);
	*why = "its axis is out of range, or its indices' other dimensions are not the data's";
	if (ax < 0 || ax >= r)
		return -1;
	for (int d = 0; d < r; d++)
		if (d != ax && ix->dims[d] != x->dims[d])
			return -1;
	*why = "its reduction is neither none nor add";
	if (red[0] && strcmp(red, "none") && strcmp(red, "add"))
		return -1;
	int add = !strcmp(red, "add");
	int zeros = x->nval > 0 && x->nval == pl__onnx_elems(x);
	for (int64_t i = 0; zeros && i < x->nval; i++)
		zeros = x->val[i] == 0;
	int direct = zeros && !add; /* the sum is the output: the data not read */
	/* the axis made the last: perm swaps them (its own inverse) */
	int64_t perm[16], ud[16];
	for (int d = 0; d < r; d++)
		perm[d] = d;
	perm[ax] = r - 1;
	perm[r - 1] = ax;
	for (int d = 0; d < r; d++)
		ud[d] = u->dims[perm[d]];
	char data[600], idx[600], upd[600], out[600], last[600];
	snprintf(data, sizeof data, "%s", n->input[0]);
	snprintf(idx, sizeof idx, "%s", n->input[1]);
	snprintf(upd, sizeof upd, "%s", n->input[2]);
	snprintf(out, sizeof out, "%s", n->output[0]);
	snprintf(last, sizeof last, "%s", name); /* the op writing out */
	if (ax != r - 1) {
		snprintf(data, sizeof data, "%s.data_t", name);
		snprintf(idx, sizeof idx, "%s.indices_t", name);
		snprintf(upd, sizeof upd, "%s.updates_t", name);
		snprintf(out, sizeof out, "%s.out_t", name);
		snprintf(last, sizeof last, "%s.scatter", name);
		if (!direct)
			emit_transpose(m, data, n->input[0], perm, r, data);
		emit_transpose(m, idx, n->input[1], perm, r, idx);
		emit_transpose(m, upd, n->input[2], perm, r, upd);
	}
	char oh[600], col[600], prod[600], sum[600], op[600];
	snprintf(oh, sizeof oh, "%s.onehot", name);
	cJSON *o = pl__onnx_add_op(m, oh, "OneHot");
	pl__onnx_operand(m, o, idx);
	pl__onnx_io(m, o, "outputs", oh);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", -1);
	cJSON_AddNumberToObject(at, "depth", (double)x->dims[ax]);
	cJSON *vals = cJSON_AddArrayToObject(at, "values");
	cJSON_AddItemToArray(vals, cJSON_CreateNumber(0));
	cJSON_AddItemToArray(vals, cJSON_CreateNumber(1));
	cJSON_AddStringToObject(at, "dtype", "float32");
	ud[r] = 1;
	snprintf(op, sizeof op, "%s.column", name);
	snprintf(col, sizeof col, "%s.column", name);
	pl__onnx_emit_reshape(m, op, upd, ud, r + 1, col);
	snprintf(op, sizeof op, "%s.placed", name);
	snprintf(prod, sizeof prod, "%s.placed", name);
	pl__onnx_emit_binary(m, op, "Mul", oh, col, prod);
	int64_t k = -2;
	snprintf(op, sizeof op, "%s.sum", name);
	snprintf(sum, sizeof sum, "%s.sum", name);
	pl__onnx_emit_reduce(m, direct ? last : op, "ReduceSum", prod, direct ? out : sum, &k, 1,
	                     0);
	if (!direct) {
		char hits[600];
		if (!add) { /* data - data * hits */
			snprintf(hits, sizeof hits, "%s.hits", name);
			pl__onnx_emit_reduce(m, hits, "ReduceSum", oh, hits, &k, 1, 0);
		}
		emit_put(m, name, data, add ? NULL : hits, sum, last, out);
	}
	if (ax != r - 1)
		emit_transpose(m, name, out, perm, r, n->output[0]);
	pl__onnx_set_info(m, n->output[0], r, x->dims, 0, NULL);
	return 0;
}

/* ScatterND of rows: indices [k, 1] (each a row of the data's first
 * dimension, constant or computed at run time: index_put and index_add_ of
 * rows, a mixture of experts' tokens put back), updates [k, rest...] with the
 * data's rest. In the planner's ops, as ScatterElements is: the indices
 * one-hot over the N rows ([k, N], no gradient), transposed and multiplied
 * by the updates as a [k, R] matrix (R the rest's elements): [N, R], the
 * updates in their rows; with reduction add that is added to the data, with
 * none it replaces the rows an index hits (data - data * hits + it, hits the
 * one-hot summed over k). Repeated indices add up (ONNX leaves which wins
 * undefined). Up to 2^24 indices times rows. 0, or -1 with *why */
int pl__onnx_import_scatter_rows(imp *m, const Onnx__NodeProto *n, const char *name,
                                 const char **why)
{
	tinfo *x = n->n_input == 3 ? pl__onnx_known(m, n->input[0]) : NULL,
	      *ix = n->n_input == 3 ? pl__onnx_known(m, n->input[1]) : NULL,
	      *u = n->n_input == 3 ? pl__onnx_known(m, n->input[2]) : NULL;
	char red[16];
	pl__onnx_attr_str(n, "reduction", red, sizeof red);
	*why = "only rows are scattered: indices [n, 1] (one index into the data's first "
	       "dimension each), updates [n, the data's other dimensions], reduction none or add";
	if (!x || !ix || !u || x->rank < 1 || x->rank > 15 || ix->rank != 2 || ix->dims[1] != 1 ||
	    ix->dims[0] < 1 || u->rank != x->rank || u->dims[0] != ix->dims[0] ||
	    (red[0] && strcmp(red, "none") && strcmp(red, "add")))
		return -1;
	int64_t rows = x->dims[0], k = ix->dims[0], R = 1;
	for (int d = 1; d < x->rank; d++) {
		if (u->dims[d] != x->dims[d])
			return -1;
		R *= x->dims[d];
	}
	/* the one-hot product prices k x rows x R: a few rows of a small table
	 * (index_put), not every token of a batch put back (that needs a scatter
	 * op of its own, which the planner does not have) */
	*why = "more than 2^24 indices times rows: the one-hot product it imports as would cost "
	       "far more than the scatter";
	if ((double)k * (double)rows > (double)(1 << 24))
		return -1;
	tinfo *iv = pl__onnx_valued(m, n->input[1]);
	*why = "an index is outside the data's rows";
	for (int64_t i = 0; iv && i < iv->nval; i++) {
		int64_t r = pl__onnx_to_i64(iv->val[i]);
		if (r < -rows || r >= rows)
			return -1;
	}
	int add = !strcmp(red, "add");
	int32_t el = pl__onnx_elem_of(m, n->input[0]);
	const char *dt = el ? pl__onnx_dtype_name(el) : NULL;
	char idx[600], oh[600], oht[600], upd[600], placed[600], op[600], hits[600], flat[600];
	int64_t dk[2] = {k, 0}, perm[2] = {1, 0}, ur[2] = {k, R}, nr[2] = {rows, R};
	snprintf(idx, sizeof idx, "%s.rows", name);
	pl__onnx_emit_reshape(m, idx, n->input[1], dk, 1, idx);
	snprintf(oh, sizeof oh, "%s.onehot", name);
	cJSON *o = pl__onnx_add_op(m, oh, "OneHot");
	pl__onnx_io(m, o, "inputs", idx);
	pl__onnx_io(m, o, "outputs", oh);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", -1);
	cJSON_AddNumberToObject(at, "depth", (double)rows);
	cJSON *vals = cJSON_AddArrayToObject(at, "values");
	cJSON_AddItemToArray(vals, cJSON_CreateNumber(0));
	cJSON_AddItemToArray(vals, cJSON_CreateNumber(1));
	cJSON_AddStringToObject(at, "dtype", dt && strncmp(dt, "int", 3) ? dt : "float32");
	int64_t ohd[2] = {k, rows};
	pl__onnx_set_info(m, oh, 2, ohd, 0, NULL);
	snprintf(oht, sizeof oht, "%s.onehot_t", name);
	emit_transpose(m, oht, oh, perm, 2, oht);
	snprintf(upd, sizeof upd, "%s.updates", name);
	pl__onnx_emit_reshape(m, upd, n->input[2], ur, 2, upd);
	snprintf(flat, sizeof flat, "%s.placed", name);
	pl__onnx_emit_binary(m, flat, "MatMul", oht, upd, flat);
	pl__onnx_set_info(m, flat, 2, nr, 0, NULL);
	snprintf(placed, sizeof placed, "%s.placed_rows", name);
	pl__onnx_emit_reshape(m, placed, flat, x->dims, x->rank, placed);
	if (!add) { /* the rows an index hits, [rows, 1, ...] */
		int64_t k0 = 0, hd[16] = {rows};
		for (int d = 1; d < x->rank; d++)
			hd[d] = 1;
		snprintf(hits, sizeof hits, "%s.hits", name);
		snprintf(op, sizeof op, "%s.hit_rows", name);
		pl__onnx_emit_reduce(m, hits, "ReduceSum", oh, hits, &k0, 1, 0);
		pl__onnx_emit_reshape(m, op, hits, hd, x->rank, op);
	}
	emit_put(m, name, n->input[0], add ? NULL : op, placed, name, n->output[0]);
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return 0;
}

/* Reshape op `opname` of operand `in` (a constant one declared) into out
 * of shape dims (rank of them), its shape recorded; the output's name as the
 * op holds it */
const char *pl__onnx_emit_reshape(imp *m, const char *opname, const char *in, const int64_t *dims,
                                  int rank, const char *out)
{
	cJSON *o = pl__onnx_add_op(m, opname, "Reshape");
	pl__onnx_operand(m, o, in);
	pl__onnx_io(m, o, "outputs", out);
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "shape",
	            pl__onnx_int_list(dims, (size_t)rank));
	const char *held = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "outputs"), 0)->valuestring;
	pl__onnx_set_info(m, held, rank, dims, 0, NULL);
	return held;
}

/* A LayerNormalization `name` of x (shape dims, rank) over its dimensions
 * from `axis` on, with a constant scale (no affine parameters of its own),
 * into out. -1 when the scale's name is taken. */
static int emit_plain_norm(imp *m, const char *name, const char *x, const int64_t *dims, int rank,
                           int axis, double eps, const char *out)
{
	char sc[600];
	snprintf(sc, sizeof sc, "%s.scale", name);
	if (pl__onnx_decl(m, sc))
		return -1;
	cJSON *t = cJSON_CreateObject();
	pl_json_add(t, "shape", pl__onnx_int_list(dims + axis, (size_t)(rank - axis)));
	cJSON_AddStringToObject(t, "role", "const");
	int64_t ones = 1;
	for (int d = axis; d < rank; d++)
		ones = pl__onnx_count_mul(ones, dims[d]); /* past MAX_VALUES: none written */
	pl__onnx_const_values(t, NULL, ones, 1);
	pl_json_add(m->tensors, sc, t);
	cJSON *o = pl__onnx_add_op(m, name, "LayerNormalization");
	pl__onnx_io(m, o, "inputs", x);
	pl__onnx_io(m, o, "inputs", sc);
	pl__onnx_io(m, o, "outputs", out);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "axis", axis);
	cJSON_AddNumberToObject(at, "epsilon", eps);
	return 0;
}

/* from * scale + bias into out, scale and bias [c] reshaped to [c, 1...]
 * against dimension 1 of a tensor of `rank` dimensions (ops named after
 * `name`) */
static void emit_channel_affine(imp *m, const char *name, const char *from, const char *scale,
                                const char *bias, int64_t c, int rank, const char *out)
{
	int64_t cshape[PL_MAX_RANK];
	cshape[0] = c;
	for (int d = 1; d < rank - 1; d++)
		cshape[d] = 1;
	static const char *const part[2] = {"scale", "bias"}, *const type[2] = {"Mul", "Add"};
	char scaled[600];
	snprintf(scaled, sizeof scaled, "%s.scaled", name);
	const char *in[2] = {from, scaled}, *to[2] = {scaled, out}, *by[2] = {scale, bias};
	for (int i = 0; i < 2; i++) {
		char pc[600], buf[600];
		snprintf(pc, sizeof pc, "%s.%s_c", name, part[i]);
		snprintf(buf, sizeof buf, "%s.%s_reshape", name, part[i]);
		pl__onnx_emit_reshape(m, buf, by[i], cshape, rank - 1, pc);
		snprintf(buf, sizeof buf, "%s.%s", name, type[i]);
		cJSON *o = pl__onnx_add_op(m, buf, type[i]);
		pl__onnx_io(m, o, "inputs", in[i]);
		pl__onnx_io(m, o, "inputs", pc);
		pl__onnx_io(m, o, "outputs", to[i]);
	}
}

/* InstanceNormalization of x [N, C, S...] (scale and B [C], epsilon): a
 * LayerNormalization over the dimensions from 2 on with a constant scale,
 * then times the scale and plus B per channel — left out when they are the
 * constant ones and zeros PyTorch's GroupNorm export gives the
 * InstanceNormalization between its Reshapes to [N, groups, -1] and back
 * (its affine parameters follow as a Mul and an Add). -1 when x's shape is
 * not known or under rank 3. */
int pl__onnx_import_instancenorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]);
	if (!x || x->rank < 3 || x->rank > PL_MAX_RANK || n->n_input < 3)
		return -1;
	char y[600];
	snprintf(y, sizeof y, "%s.normalized", name);
	/* a model's own weights stay, whatever their values (a fresh one's are
	 * ones and zeros too) */
	int affine = pl__onnx_is_param(m, n->input[1]) || pl__onnx_is_param(m, n->input[2]) ||
	             !all_values(m, n->input[1], 1) || !all_values(m, n->input[2], 0);
	if (emit_plain_norm(m, name, n->input[0], x->dims, x->rank, 2,
	                    pl__onnx_attr_f(n, "epsilon", 1e-5), affine ? y : n->output[0]))
		return -1;
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	if (affine)
		emit_channel_affine(m, name, y, n->input[1], n->input[2], x->dims[1], x->rank,
		                    n->output[0]);
	return 0;
}

/* ONNX's Attention (opset 23) as the planner's: its 4-D form (Q [b, hq, s,
 * d], K and V [b, hkv, t, .]) or its 3-D form (Q [b, s, hq x d], K and V
 * [b, t, hkv x .], with q_num_heads and kv_num_heads), is_causal and scale;
 * no mask, no past key/value cache, no soft cap, its other outputs unread.
 * NULL, or why not. */
const char *pl__onnx_import_attention(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input < 3 || !n->input[1][0] || !n->input[2][0])
		return "it needs Q, K and V";
	for (size_t k = 3; k < n->n_input; k++)
		if (n->input[k][0])
			return "with an attention mask or a past key/value cache (only Q, K and V "
			       "are read)";
	for (size_t k = 1; k < n->n_output; k++) {
		int who;
		if (n->output[k][0] && pl__onnx_consumers(m, n->output[k], &who, 1) > 0)
			return "its present key/value or score outputs are read";
	}
	const Onnx__AttributeProto *cap = pl__onnx_attr(n, "softcap"),
	                           *sc = pl__onnx_attr(n, "scale");
	if (cap && cap->has_f && cap->f != 0)
		return "with a soft cap";
	tinfo *q = pl__onnx_known(m, n->input[0]), *k = pl__onnx_known(m, n->input[1]),
	      *v = pl__onnx_known(m, n->input[2]);
	if (!q || !k || !v)
		return "its inputs' shapes are not known";
	int64_t hq = pl__onnx_attr_i(n, "q_num_heads", 0),
	        hkv = pl__onnx_attr_i(n, "kv_num_heads", 0);
	if (!((q->rank == 4 && k->rank == 4 && v->rank == 4) ||
	      (q->rank == 3 && k->rank == 3 && v->rank == 3 && hq > 0 && hkv > 0 &&
	       q->dims[2] % hq == 0 && v->dims[2] % hkv == 0)))
		return "Q, K and V must be all 4-D ([batch, heads, sequence, head size]) or all "
		       "3-D ([batch, sequence, heads x head size], with q_num_heads and "
		       "kv_num_heads)";
	cJSON *o = pl__onnx_add_op(m, name, "Attention");
	for (int i = 0; i < 3; i++)
		pl__onnx_operand(m, o, n->input[i]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_CreateObject();
	cJSON_AddNumberToObject(at, "is_causal", pl__onnx_attr_i(n, "is_causal", 0) != 0);
	if (sc && sc->has_f)
		cJSON_AddNumberToObject(at, "scale", sc->f);
	if (q->rank == 3) {
		cJSON_AddNumberToObject(at, "q_num_heads", (double)hq);
		cJSON_AddNumberToObject(at, "kv_num_heads", (double)hkv);
	}
	pl_json_add(o, "attrs", at);
	int64_t dims[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
	if (q->rank == 3 && pl_size_mul(hq, v->dims[2] / hkv, &dims[2])) /* [b, s, hq x dv] */
		return "q_num_heads times V's head size overflows 64 bits";
	pl__onnx_set_info(m, n->output[0], q->rank, dims, 0, NULL);
	return NULL;
}

/* GroupNormalization (opset 18) of x [N, C, S...] in num_groups groups: x
 * reshaped to [N, G, C/G x S], a LayerNormalization over its last
 * dimension with a constant scale, then scale and bias: per group on the
 * grouped tensor where they have G elements (opsets 18 to 20), per channel
 * after reshaping back where they have C (opset 21). -1 when x's shape is
 * not known, under rank 3, the groups do not divide the channels, or the
 * scale has neither count. */
int pl__onnx_import_groupnorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	tinfo *x = pl__onnx_known(m, n->input[0]),
	      *sc = n->n_input > 1 ? pl__onnx_known(m, n->input[1]) : NULL;
	int64_t G = pl__onnx_attr_i(n, "num_groups", 0);
	if (!x || !sc || n->n_input < 3 || x->rank < 3 || x->rank > PL_MAX_RANK || G < 1 ||
	    x->dims[1] % G)
		return -1;
	int64_t C = x->dims[1], ns = pl__onnx_elems(sc), g3[3] = {x->dims[0], G, 1};
	if (ns != C && ns != G)
		return -1;
	for (int d = 1; d < x->rank; d++)
		if (pl_size_mul(g3[2], x->dims[d], &g3[2]))
			return -2; /* the sizes' product overflows 64 bits */
	g3[2] /= G;
	char grouped[600], norm3[600], buf[600], back[600];
	snprintf(grouped, sizeof grouped, "%s.grouped", name);
	snprintf(norm3, sizeof norm3, "%s.normalized3", name);
	snprintf(back, sizeof back, "%s.normalized", name);
	snprintf(buf, sizeof buf, "%s.group_reshape", name);
	pl__onnx_emit_reshape(m, buf, n->input[0], g3, 3, grouped);
	if (emit_plain_norm(m, name, grouped, g3, 3, 2, pl__onnx_attr_f(n, "epsilon", 1e-5), norm3))
		return -1;
	snprintf(buf, sizeof buf, "%s.ungroup_reshape", name);
	if (ns == G && G != C) { /* per group: on the grouped tensor, then back */
		char aff[600];
		snprintf(aff, sizeof aff, "%s.affine3", name);
		emit_channel_affine(m, name, norm3, n->input[1], n->input[2], G, 3, aff);
		pl__onnx_emit_reshape(m, buf, aff, x->dims, x->rank, n->output[0]);
	} else {
		pl__onnx_emit_reshape(m, buf, norm3, x->dims, x->rank, back);
		emit_channel_affine(m, name, back, n->input[1], n->input[2], C, x->rank,
		                    n->output[0]);
	}
	pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return 0;
}

/* Clip: its bounds, inputs 1 and 2 from opset 11 (attributes before), must be
 * constants */
int pl__onnx_import_clip(imp *m, const Onnx__NodeProto *n, const char *name)
{
	double b[2] = {-INFINITY, INFINITY};
	for (int i = 0; i < 2; i++) {
		const char *in = n->n_input > (size_t)(i + 1) ? n->input[i + 1] : "";
		const Onnx__AttributeProto *a = pl__onnx_attr(n, i ? "max" : "min");
		if (in[0] && pl__onnx_scalar_of(m, in, &b[i]))
			return -1;
		if (!in[0] && a && a->has_f)
			b[i] = a->f;
	}
	cJSON *o = pl__onnx_add_op(m, name, "Clip");
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	for (int i = 0; i < 2; i++)
		if (isfinite(b[i]))
			cJSON_AddNumberToObject(at, i ? "max" : "min", b[i]);
	pl__onnx_infer(m, n);
	return 0;
}

/* BatchNormalization: in training mode (an export with training=TRAINING:
 * training_mode 1, or below opset 14 the running statistics' outputs) the
 * batch's statistics, the running ones unused; in inference mode the running
 * statistics as constants (no gradient reaches them). Those outputs must be
 * unread. 0, or -1 */
int pl__onnx_import_batchnorm(imp *m, const Onnx__NodeProto *n, const char *name)
{
	if (n->n_input < 5 || !pl__onnx_known(m, n->input[0]))
		return -1;
	for (size_t k = 1; k < n->n_output; k++) {
		int who;
		if (n->output[k][0] && pl__onnx_consumers(m, n->output[k], &who, 1))
			return -1;
		for (size_t i = 0; n->output[k][0] && i < m->g->n_output; i++)
			if (!strcmp(m->g->output[i]->name, n->output[k]))
				return -1;
	}
	const Onnx__AttributeProto *tm = pl__onnx_attr(n, "training_mode");
	int train = tm && tm->has_i ? tm->i != 0 : n->n_output > 1;
	cJSON *o = pl__onnx_add_op(m, name, "BatchNormalization");
	for (size_t k = 0; k < (train ? 3u : 5u); k++)
		pl__onnx_io(m, o, "inputs", n->input[k]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	cJSON *at = cJSON_AddObjectToObject(o, "attrs");
	cJSON_AddNumberToObject(at, "epsilon", pl__onnx_attr_f(n, "epsilon", 1e-5));
	cJSON_AddNumberToObject(at, "training_mode", train);
	for (size_t k = 3; !train && k < 5; k++) {
		cJSON *t = pl__onnx_decl(m, pl__onnx_resolve(m, n->input[k]));
		if (t && cJSON_GetObjectItem(t, "role"))
			cJSON_ReplaceItemInObject(t, "role", cJSON_CreateString("const"));
	}
	pl__onnx_infer(m, n);
	return 0;
}

/* An op of node n's first input and output, of its shape: its attrs object */
cJSON *pl__onnx_emit_unary(imp *m, const Onnx__NodeProto *n, const char *name, const char *type)
{
	cJSON *o = pl__onnx_add_op(m, name, type);
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	tinfo *x = pl__onnx_known(m, n->input[0]);
	if (x)
		pl__onnx_set_info(m, n->output[0], x->rank, x->dims, 0, NULL);
	return cJSON_AddObjectToObject(o, "attrs");
}

/* Dropout node n's ratio (input 1 from opset 12, the attribute before; 0.5
 * when neither): 0, or -1 when it is not a constant */
int pl__onnx_dropout_ratio(const imp *m, const Onnx__NodeProto *n, double *ratio)
{
	*ratio = pl__onnx_attr_f(n, "ratio", 0.5);
	return n->n_input > 1 && n->input[1][0] ? pl__onnx_scalar_of(m, n->input[1], ratio) : 0;
}

/* Whether Dropout node n is kept: --dropout keep or drop says so; by default
 * (auto) when the export trains with it (its training_mode input a constant
 * true, and a ratio above 0; an eval export has none, or false) */
int pl__onnx_keep_dropout(imp *m, const Onnx__NodeProto *n)
{
	const char *d = m->dropout ? m->dropout : "auto";
	if (!strcmp(d, "keep") || !strcmp(d, "drop"))
		return !strcmp(d, "keep");
	double on = 0, ratio;
	return n->n_input > 2 && n->input[2][0] && !pl__onnx_scalar_of(m, n->input[2], &on) &&
	       on != 0 && !pl__onnx_dropout_ratio(m, n, &ratio) && ratio > 0;
}

/* An op of type whose attrs.shape is node n's input 1, a constant (Reshape's
 * target, Expand's shape); *target (if given) gets it. 0, or -1 when it is
 * not one the importer folded */
int pl__onnx_shape_op(imp *m, const Onnx__NodeProto *n, const char *name, const char *type,
                      tinfo *target)
{
	tinfo *sh = n->n_input > 1 ? pl__onnx_valued(m, n->input[1]) : NULL;
	if (!sh || sh->rank != 1 || sh->nval > 16)
		return -1;
	int64_t v[16];
	for (int d = 0; d < sh->nval; d++)
		v[d] = pl__onnx_to_i64(sh->val[d]);
	cJSON *o = pl__onnx_add_op(m, name, type);
	pl__onnx_io(m, o, "inputs", n->input[0]);
	pl__onnx_io(m, o, "outputs", n->output[0]);
	pl_json_add(cJSON_AddObjectToObject(o, "attrs"), "shape",
	            pl__onnx_int_list(v, (size_t)sh->nval));
	if (target) {
		target->rank = sh->nval;
		memcpy(target->dims, v, sizeof(int64_t) * (size_t)sh->nval);
	}
	return 0;
}
