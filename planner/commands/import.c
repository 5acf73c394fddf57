/* planner import: an ONNX model written as planner.model/1. */
#include "planner/commands/commands.h"
#include "graph/model.h"

/* An ONNX model's appended cross-entropy (o: the import's options): which
 * dimension of the first output it takes as the classes, said on stderr
 * where that output has rank 3 or more -- at rank 3 auto's choice (the
 * last: a language model's [B, S, vocabulary]) may be a sequence model's
 * [N, C, L], which PyTorch's CrossEntropyLoss takes on dimension 1; and
 * each auxiliary classifier's loss (loss.auxN) that was appended too */
static void loss_axis_note(const pl_graph *g, const char *path, const pl_onnx_opts *o)
{
	int l = pl_graph_find_op(g, "loss");
	if ((o->loss && strcmp(o->loss, "cross-entropy")) || l < 0 || g->ops[l].type != PL_OP_SCE ||
	    g->ops[l].ninputs < 2)
		return;
	/* the appended one reads the labels input the importer adds; a graph's
	 * own loss named "loss" (a constant target, say) is not this note's */
	const pl_tensor *lab = &g->tensors[g->ops[l].in[1]];
	if (strcmp(lab->name, "labels") || lab->role != PL_ROLE_INPUT)
		return;
	const pl_tensor *y = &g->tensors[g->ops[l].in[0]];
	int moved = y->producer >= 0 && !strcmp(g->ops[y->producer].name, "loss.classes_last");
	if (moved)
		y = &g->tensors[g->ops[y->producer].in[0]];
	for (int i = 0; i < g->noutputs; i++) {
		const pl_tensor *t = &g->tensors[g->outputs[i]];
		const pl_op *a = t->producer >= 0 ? &g->ops[t->producer] : NULL;
		if (!a || strncmp(a->name, "loss.aux", 8))
			continue;
		const pl_tensor *x = &g->tensors[a->in[0]]; /* the logits, classes moved last? */
		if (x->producer >= 0 && strstr(g->ops[x->producer].name, ".classes_last"))
			x = &g->tensors[g->ops[x->producer].in[0]];
		fprintf(stderr,
		        "planner: note: %s: output '%s' has the first output's shape: an "
		        "auxiliary classifier, its cross-entropy against the same labels is a "
		        "loss too (%s; --loss none takes the graph's outputs as they are)\n",
		        path, x->name, a->name);
	}
	if (y->rank < 3)
		return;
	char shape[160] = "";
	for (int d = 0; d < y->rank; d++)
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld",
		         d ? ", " : "", (long long)y->shape[d]);
	fprintf(stderr,
	        "planner: note: %s: the appended cross-entropy takes the classes on %s of "
	        "output '%s' [%s]%s\n",
	        path, moved ? "dimension 1" : "the last dimension", y->name, shape,
	        o->loss_axis ? " (--loss-axis)"
	        : moved      ? " (auto at rank 4 and more, as PyTorch's CrossEntropyLoss takes "
	                       "[N, C, d1, ...]; --loss-axis last for classes last)"
	                     : " (auto at rank 3: a language model's [B, S, vocabulary]; "
	                       "--loss-axis 1 for [N, C, L], as PyTorch's CrossEntropyLoss takes "
	                       "it)");
}

/* the length of the ONNX node's name in the name of an op imported from it
 * (the importer names the ops it makes of one node NODE.suffix; the node's
 * own name has no dot after its last slash, "/layers.0/linear1/MatMul") */
static size_t node_len(const char *op)
{
	const char *slash = strrchr(op, '/'), *dot = strchr(slash ? slash : op, '.');
	return dot ? (size_t)(dot - op) : strlen(op);
}

/* A param the exporter named ("onnx::...": a weight folded at export, a
 * transposed MatMul weight) that several ops read: imported as one param
 * they share, as the file has it. PyTorch's eval-mode export merges
 * initializers of equal values, so the copies of an untrained layer
 * (copy.deepcopy, nn.TransformerEncoder's clones) arrive as one; a model
 * that ties them (ALBERT's layers) arrives the same way, and the file cannot
 * tell the two apart: said on stderr, with how to export them apart. */
static void shared_note(const pl_graph *g, const char *path)
{
	int said = 0, more = 0;
	for (int t = 0; t < g->ntensors; t++) {
		const pl_tensor *x = &g->tensors[t];
		if (x->role != PL_ROLE_PARAM || strncmp(x->name, "onnx::", 6))
			continue;
		int first = -1, readers = 0; /* ONNX nodes reading it */
		for (int c = 0; c < x->nconsumers; c++) {
			const char *op = g->ops[x->consumers[c]].name;
			size_t n = node_len(op);
			int seen = 0;
			for (int e = 0; e < c && !seen; e++) {
				const char *before = g->ops[x->consumers[e]].name;
				seen = node_len(before) == n && !strncmp(before, op, n);
			}
			first = first < 0 ? x->consumers[c] : first;
			readers += !seen;
		}
		if (readers < 2)
			continue;
		if (said++ == 3) {
			more = 1;
			continue;
		}
		fprintf(stderr,
		        "planner: note: %s: param '%s', a weight the exporter made, is read by %d "
		        "ops ('%s' and %d more): imported as one weight they share\n",
		        path, x->name, readers, g->ops[first].name, readers - 1);
	}
	if (more)
		fprintf(stderr, "planner: note: %s: %d such params in all\n", path, said);
	if (said)
		fprintf(
		    stderr,
		    "planner: note: %s: right where the model ties them; PyTorch's eval-mode "
		    "export also merges weights of equal values, so layers copied from one and "
		    "never trained (copy.deepcopy, nn.TransformerEncoder's clones) look tied: "
		    "export with training=torch.onnx.TrainingMode.TRAINING to keep them apart; "
		    "a buffer written as a weight (a mask) is made constant with --const NAME\n",
		    path);
}

/* the notes an ONNX import prints on stderr (the loss's axis, weights
 * shared), whichever command imported it */
void pl_cli_import_notes(const pl_graph *g, const char *path, const pl_onnx_opts *o)
{
	if (!pl_onnx_path(path))
		return;
	shared_note(g, path);
	loss_axis_note(g, path, o);
}

/* the importer's operators, wrapped to 80 columns after a heading */
static void help_ops(void)
{
	const char *s = pl_onnx_supported();
	fputs("\nONNX operators the importer reads:\n", stdout);
	while (*s) {
		size_t n = strlen(s), take = n;
		if (n > 78) { /* the last space within 78 columns */
			take = 78;
			while (take > 0 && s[take] != ' ')
				take--;
			if (!take)
				take = 78;
		}
		printf("  %.*s\n", (int)take, s);
		s += take;
		while (*s == ' ')
			s++;
	}
}

int pl_cmd_import(int argc, char **argv)
{
	static const char *const help =
	    "usage: planner import MODEL.onnx -o MODEL.json [--batch N] [--loss "
	    "cross-entropy|none]\n"
	    "                      [--const PATTERN]... [--dropout auto|keep|drop]\n\n"
	    "Writes an ONNX model as a planner.model/1 file (every command that takes a\n"
	    "MODEL also takes MODEL.onnx directly, with the same options). Initializers\n"
	    "become params (dims are enough: data are read of small ones and of merged\n"
	    "copies only), graph inputs inputs; shape subgraphs are folded, GELU (Erf or\n"
	    "tanh form) and decomposed LayerNorm recognised, Identity dropped, Dropout as\n"
	    "--dropout says. The ops of transformer and torchvision exports (Gemm, MatMul,\n"
	    "Conv, BatchNormalization, pools, element-wise ops, Softmax, Transpose,\n"
	    "Reshape, Gather, Concat, Slice, Expand, ReduceMean, ...) are imported;\n"
	    "anything else exits 2 naming the node, its op type and opset, and the\n"
	    "supported ops. A weight the exporter made (onnx::...) that several nodes read\n"
	    "is one param they share: a note on stderr names it (an eval export merges\n"
	    "equal weights of copied layers).\n\n"
	    "options:\n"
	    "  -o, --output MODEL.json  where to write it (atomically)\n"
	    "  --batch N             the batch where an input's dimension 0 is symbolic\n"
	    "  --loss cross-entropy|none  training semantics: SoftmaxCrossEntropy of the\n"
	    "                        first output against an int64 labels input (default;\n"
	    "                        each other output of its shape, an auxiliary\n"
	    "                        classifier, gets one too), or none when the graph\n"
	    "                        already ends in its loss (the default, too, when it\n"
	    "                        has a SoftmaxCrossEntropyLoss or a\n"
	    "                        NegativeLogLikelihoodLoss)\n"
	    "  --loss-axis 1|last|auto  the first output's axis of classes for that loss:\n"
	    "                        auto (default) takes dimension 1 of a rank-4+ output\n"
	    "                        (segmentation [N, C, H, W], as PyTorch's\n"
	    "                        CrossEntropyLoss) and the last of others (a language\n"
	    "                        model's [B, S, vocabulary]); at rank 3 and more a\n"
	    "                        note on stderr says which dimension was taken\n"
	    "  --const PATTERN       initializers whose names match (shell pattern: *, ?,\n"
	    "                        [...]; * matches dots too) stay constant: buffers,\n"
	    "                        such as a causal mask, that exporters write like\n"
	    "                        weights (no gradient, no optimizer state);\n"
	    "                        repeatable; one matching nothing exits 2\n"
	    "  --dropout auto|keep|drop  Dropout nodes: kept as the planner's Dropout where\n"
	    "                        the export trains with them (training_mode true and\n"
	    "                        a ratio above 0; auto, the default), always, or never\n"
	    "  -h, --help            this text\n\n"
	    "example:\n"
	    "  planner import mlp.onnx --batch 64 -o mlp.json\n"
	    "  planner search mlp.onnx --batch 64 --devices 8\n"
	    "  planner import gpt2.onnx --batch 8 --const 'h.[0-9].bias' -o gpt2.json\n";
	pl_cli_common co = {0};
	const char *out = NULL;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_IMPORT, "import", help, &co);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP:
			if (!a.rc) /* --help: and every op the importer reads */
				help_ops();
			return a.rc;
		case 'o': out = optarg; break;
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("import", "expected one MODEL.onnx file%s",
		                    optind < argc - 1 ? ", got more" : "");
	if (!out)
		return pl_cli_usage("import", "-o MODEL.json: where to write the model%s", "");
	pl_err err = {{0}};
	char *buf = NULL, *txt = NULL;
	size_t len;
	cJSON *doc = NULL;
	pl_graph *g = NULL;
	pl_status st = pl_read_file(argv[optind], &buf, &len, &err);
	if (!st)
		st = pl_onnx_to_model((const unsigned char *)buf, len, argv[optind], &co.onnx, &doc,
		                      &err);
	if (!st && !(txt = pl_cli_doc_text(doc)))
		st = pl_err_set(&err, PL_ENOMEM, "out of memory");
	/* checked as every model is before it is written */
	if (!st)
		st = pl_graph_load_json(&g, txt, strlen(txt), argv[optind], &err);
	if (!st)
		st = pl_output_write(out, txt, &err);
	if (!st)
		fprintf(pl_output_is_stdout(out) ? stderr : stdout,
		        "wrote %s: %d ops, %d tensors\n", out, g->nops, g->ntensors);
	if (!st)
		pl_cli_import_notes(g, argv[optind], &co.onnx);
	pl_graph_free(g);
	free(txt);
	cJSON_Delete(doc);
	free(buf);
	return st ? pl_cli_fail(st, &err) : 0;
}
