/* planner search: the search, its summary, --top K, --why-not. */
#include "planner/commands/commands.h"

static void on_progress(void *ud, const char *msg)
{
	(void)ud;
	fprintf(stderr, "planner: %s\n", msg);
}

static const char *const search_help =
    "usage: planner search MODEL [options]\n"
    "\n"
    "Finds, for every op of MODEL (planner.model/1 JSON), how to cut its tensors across the\n"
    "devices so that a training step is fastest under the cost model and fits in memory.\n"
    "\n"
    "options:\n"
    "  --devices N           one node of N devices (H100 SXM preset); default 8\n"
    "  --cluster FILE|PRESET cluster.json, or a preset: h100x8, h200x8, a100x8, a100-80gx8,\n"
    "                        dgx2-v100, cpu [:NODES]; an x8 preset with another count of\n"
    "                        GPUs a node: h100x4 (one node of 4), a100-80gx4:2\n"
    "  --mode MODE           dp (exact, default) | ilp (GLPK) | rec (fast) |\n"
    "                        propagate (from annotations) | auto | brute (small graphs)\n"
    "  --memory-limit BYTES  per-device limit: a number, with K/M/G/T or KiB/MiB/GiB/TiB,\n"
    "                        or 'none'; default: the device memory of the cluster. A plan\n"
    "                        fits with its weights, gradients, optimizer states, kept\n"
    "                        activations, transient bytes (gradients and scratch at their\n"
    "                        most in the backward) and the reserve\n"
    "  --memory-reserve BYTES  of the limit, what the runtime keeps (CUDA context, NCCL\n"
    "                        buffers, allocator); default: the cluster's (GPU presets:\n"
    "                        1.5 GiB + 5 % of the memory; cpu: 0)\n"
    "  --attention-kernel K  the fused attention kernel the job runs, priced at its\n"
    "                        measured rate for the op's shape: flash2 (the GPU presets'\n"
    "                        default), flash3, cudnn (Transformer Engine), flash1, triton,\n"
    "                        or none (the GEMM curve)\n"
    "  --loss-kernel K       how the job computes its cross-entropy loss: unfused (the\n"
    "                        default: PyTorch's cross_entropy, 16-bit logits in fp32,\n"
    "                        as Megatron-LM, torchtitan and autocast run it) or fused\n"
    "                        (one kernel on the logits' dtype: flash-attn's or Liger's,\n"
    "                        llm-foundry's default)\n"
    "  --loss-parallel P     where the loss runs under tensor parallelism: vocab (the\n"
    "                        default: each rank on its slice of the vocabulary, as\n"
    "                        Megatron-LM and torchtitan) or gathered (the logits\n"
    "                        all-gathered and the whole loss on every rank, as Aleph\n"
    "                        Alpha's scaling and Hugging Face models under TP)\n"
    "  --grad-dtype D        16-bit params' gradients: fp32 (the default: accumulated\n"
    "                        and reduced in fp32 main gradients, as Megatron-LM),\n"
    "                        param (in the params' dtype, cast to fp32 only for the\n"
    "                        optimizer step, as Aleph Alpha's scaling) or param+fp32\n"
    "                        (in the params' dtype, added into a whole fp32 gradient\n"
    "                        after every micro-batch: DeepSpeed's bf16 optimizer)\n"
    "  --grad-reduce R       the once-a-step gradient reduction of ZeRO 0 and 1: as-grad\n"
    "                        (the default: in the gradients' dtype, reduce-scattered\n"
    "                        under ZeRO 1, as Megatron's DDP and distributed optimizer)\n"
    "                        or fp32-all-reduce (cast to fp32 in flat buckets and\n"
    "                        all-reduced whole, under ZeRO 1 too, as Aleph Alpha's\n"
    "                        scaling)\n"
    "  --grad-accumulation A how each micro-batch but the first adds its weight\n"
    "                        gradients into the kept ones: fused (the default: in the\n"
    "                        weight-gradient GEMM, as Megatron-LM's gradient\n"
    "                        accumulation fusion, or into ZeRO 2/3's shards) or\n"
    "                        autograd (a kernel of its own a param, as PyTorch's\n"
    "                        AccumulateGrad: Aleph Alpha's scaling, DDP under no_sync)\n"
    "  --param-shard S       what ZeRO 3 keeps of a 16-bit param: param (the default:\n"
    "                        its shard beside the fp32 master's, as DeepSpeed and\n"
    "                        Megatron FSDP) or fp32 (the fp32 master's shard alone,\n"
    "                        cast when gathered, as PyTorch FSDP: torchtitan,\n"
    "                        llm-foundry)\n"
    "  --norm-kernel K       how norms run: fused (the default: one kernel each way, as\n"
    "                        apex, Transformer Engine and PyTorch's LayerNorm) or\n"
    "                        unfused (eager PyTorch's pow, mean, rsqrt and products,\n"
    "                        as a hand-written RMSNorm without a fused kernel)\n"
    "  --mask-kernel K       how a mask before a softmax runs: fused (the default: in\n"
    "                        the softmax kernel, as Megatron's FusedScaleMaskSoftmax and\n"
    "                        PyTorch's scaled_dot_product_attention) or unfused (eager\n"
    "                        PyTorch's masked_fill or add, a kernel of its own each way)\n"
    "  --loss-metrics N      cross-entropies the training loop computes over the logits\n"
    "                        beside the loss, every micro-batch, without gradients\n"
    "                        (training metrics), each priced as PyTorch's cross_entropy\n"
    "                        forward: 0 (the default) to 16; llm-foundry's MPT under\n"
    "                        Composer computes 2 (LanguageCrossEntropy, Perplexity)\n"
    "  --batch-norm sync|local  training-mode batch norm where the batch is cut: sync\n"
    "                        (the default: statistics all-reduced over the ranks,\n"
    "                        SyncBatchNorm, what one device computes) or local (each\n"
    "                        rank its own, as DDP's BatchNorm: no collective)\n"
    "  --stage-output freed|buffered  the model's output (the logits) after the loss:\n"
    "                        freed (the default) or buffered (a pipeline engine's\n"
    "                        buffers keep the last two micro-batches' outputs on the\n"
    "                        last stage, as Aleph Alpha's scaling and DeepSpeed's\n"
    "                        pipeline engine)\n"
    "  --gemm-dtype D        the linear layers' GEMMs: param (the default: in the\n"
    "                        params' dtype), fp8 (Transformer Engine's FP8, as\n"
    "                        Megatron-LM's --fp8-format and NeMo's fp8: their casts,\n"
    "                        FP8 weight copies and FP8 saved inputs), fp8-tensorwise\n"
    "                        or fp8-rowwise (torchao's Float8 recipes, as torchtitan's\n"
    "                        float8 converter runs them: dynamic scales, every\n"
    "                        operand cast each micro-batch); the output layer and\n"
    "                        attention stay 16-bit; FP8 needs an H100 or H200\n"
    "  --cp-exchange E       how context parallelism passes keys and values: ring (the\n"
    "                        default: chunk by chunk beside each block's kernel, as\n"
    "                        Transformer Engine's p2p in Megatron-LM and NeMo),\n"
    "                        allgather (all-gathered beside the first block, as\n"
    "                        PyTorch's context_parallel in torchtitan, with its\n"
    "                        ring attention's fp32 merges) or\n"
    "                        allgather-sync (before the attention, as Transformer\n"
    "                        Engine's all_gather: nothing hidden)\n"
    "  --load CKPT           keep the strategies of the ops named in CKPT\n"
    "  --time-limit SECONDS  the whole command (reading the model too) within it and\n"
    "                        about a second: the best plan found by then (not proven,\n"
    "                        its gap to a bound said where known), exit 3 if none; ilp,\n"
    "                        auto and whole-job searches keep theirs, dp and rec have\n"
    "                        none before their end; without --mode, exact dp gets 60 %\n"
    "                        of it and auto's fall-back the rest. Without it and\n"
    "                        without --mode, exact dp gets 60 s, then the search\n"
    "                        plans with auto and prints the gap to a bound\n"
    "  --pareto-cap N        (time, memory) points kept per table entry when the memory\n"
    "                        limit binds (default 256); a cut set makes the plan unproven\n"
    "  --dump-lp FILE        ilp: write the instance in CPLEX LP format\n"
    "  --ilp-edges flow|cost ilp's edge encoding: flow (default) or one cost column\n"
    "                        per edge (slower; for comparison)\n"
    "\n"
    "The default search (no --mode, nothing of the layout given) plans per op, then\n"
    "the whole job where that is faster or no per-op plan fits; a given --mode plans\n"
    "per op unless one of the options below is given.\n"
    "\n"
    "whole-job plan: any of these makes the search plan the whole job; each fixes its\n"
    "dimension and every dimension not given is searched (pipeline stages,\n"
    "micro-batches, ZeRO, recompute; MODE then plans each stage's mesh):\n"
    "  --job                 fix nothing: search every dimension\n"
    "  --pp, --pipeline-stages N|auto   pipeline stages (1F1B), N dividing the devices\n"
    "  --dp N                data parallel: every op cuts the batch into N pieces\n"
    "  --tp N                tensor parallel: every op that reads a weight cuts it N ways\n"
    "                        (Megatron's column/row pairs, head-split attention, vocab-\n"
    "                        parallel head); dp x tp x cp x pp = the devices, and the\n"
    "                        one of dp, tp not given is what is left\n"
    "  --cp N                context parallel: the sequence cut N ways (1 unless given)\n"
    "  --ep N                expert parallel: the experts cut N ways (N divides dp x cp)\n"
    "  --micro-batches N|auto     micro-batches per step, N dividing the batch\n"
    "  --micro-batch-size N  sequences per micro-batch per data-parallel rank\n"
    "                        (Megatron's; batch = N x dp x micro-batches)\n"
    "  --virtual-stages N|auto   model chunks per device (interleaved 1F1B); 1: plain\n"
    "                        1F1B; default: searched where micro-batches fill the stages\n"
    "  --zero 0|1|2|3|auto   optimizer sharding: 1 states, 2 + gradients, 3 + weights;\n"
    "                        2 and 3 do not go with pipeline stages (as DeepSpeed)\n"
    "  --recompute none|full|selective|selective-op|auto  full: every repeated layer\n"
    "                        recomputes (Megatron's full); selective: each attention core\n"
    "                        (QK^T, softmax, dropout, xV) recomputes, as Megatron's\n"
    "                        selective; selective-op: every repeated layer but its fused\n"
    "                        attention and every other weight product, as torchtitan's\n"
    "                        per-op selective checkpointing (never chosen by auto)\n"
    "  --overlap-grad-reduce on|off  the once-a-step gradient reduction overlaps the\n"
    "                        last micro-batch's backward in 25 MiB buckets (PyTorch DDP,\n"
    "                        Megatron's --overlap-grad-reduce); default off\n"
    "  --tp-comm-overlap on|off  a linear layer's activation all-gathers and reduce-\n"
    "                        scatters overlap its GEMMs in chunks (Transformer Engine's\n"
    "                        userbuffers: Megatron's --tp-comm-overlap, NeMo's\n"
    "                        ub_tp_comm_overlap; torchtitan's async TP); default off\n"
    "  --overlap-param-gather on|off  parameter all-gathers run ahead of use beside the\n"
    "                        compute: ZeRO-3's per-layer gathers prefetched (FSDP,\n"
    "                        DeepSpeed's overlap_comm), ZeRO-1/2's updated weights\n"
    "                        gathered during the next forward (Megatron's\n"
    "                        --overlap-param-gather); default off\n"
    "  --sequence-parallel on|off|auto  with tensor parallelism, the ops that read\n"
    "                        no weight (norms, dropouts, residual adds): on cuts them\n"
    "                        over the tensor-parallel ranks (Megatron's --sequence-\n"
    "                        parallel), off replicates them there, the sequence cut\n"
    "                        only by --cp; default auto: the search chooses per op\n"
    "  --max-tp N            the most devices one op's tensor-parallel cut (its weights',\n"
    "                        heads' or vocabulary's pieces) may span; default: one node's\n"
    "                        where the mesh spans nodes (as Megatron-LM); 0: any. Any mode\n"
    "  --replicate on|off|auto  with degrees free, each op's cuts over fewer than all\n"
    "                        devices (replicated over the rest) are candidates too, as a\n"
    "                        fixed degree gives them; off: only cuts of all devices (the\n"
    "                        plan is proven over those); default auto: on for a cluster\n"
    "                        of up to 8 devices. Any mode\n"
    "  --stage-cuts layers|even|uniform|any  where pipeline stages may split the\n"
    "                        model: layers, only between whole repeated layers (the plan\n"
    "                        can be exported); even, the same number of layers on every\n"
    "                        stage, the embedding on the first and the head on the last\n"
    "                        (Megatron-LM's and NeMo's num_layers / pp); uniform, the\n"
    "                        embedding, each layer, the final norm and the head as\n"
    "                        items, the first stages one item longer where they do not\n"
    "                        divide (DeepSpeed's and Aleph Alpha's scaling's\n"
    "                        partition_uniform). even and uniform do not balance memory:\n"
    "                        the first stage keeps the most micro-batches. any (default):\n"
    "                        at any point one activation crosses, such as between a\n"
    "                        layer's attention and its MLP\n"
    "  --framework F         only plans framework F can state and run: megatron, nemo,\n"
    "                        torchtitan, deepspeed, megatron-deepspeed, mindformers.\n"
    "                        One whole-job search a tensor-parallel degree of F's (1, 2,\n"
    "                        4, ... within a node; the one given), every op cut by the\n"
    "                        degrees, F's ZeRO levels, stage split and interleaving,\n"
    "                        sequence parallelism with tp; the first of each search's\n"
    "                        best configurations that 'planner export --to F' states is\n"
    "                        that degree's plan, the fastest of them the answer\n"
    "                        (search.framework, search.space). Dimensions given stay.\n"
    "                        Priced as F runs by default: its attention, loss and norm\n"
    "                        kernels, loss parallelism, gradient dtype, batch-norm\n"
    "                        statistics and gradient-reduction overlap (printed as\n"
    "                        'F defaults:', search.framework_defaults); an option\n"
    "                        given wins\n"
    "  --fastest             take the fastest plan; by default one without pipeline\n"
    "                        stages, ZeRO and recompute is kept when within 2% of it,\n"
    "                        the default search (no --mode, no layout given) takes\n"
    "                        plain data parallelism when within 2% of its plan, and\n"
    "                        where the plan's peak times " PL_MEM_BAND_TEXT " (the memory prediction's\n"
    "                        error: 90% of published peaks) is over the limit, the\n"
    "                        fastest plan with that room is kept when within 5%, else\n"
    "                        one with room for the median error (" PL_MEM_BAND_MID_TEXT ")\n"
    "  rank order: tp fastest, then cp, dp, pp (Megatron's)\n"
    "\n"
    "output:\n"
    "  -o, --output CKPT     write the strategy checkpoint (atomically)\n"
    "  --json                print the checkpoint JSON on stdout instead of the table\n"
    "  --progress            report progress on stderr\n"
    "  --why-not \"OPTIONS\"  also solve with OPTIONS added (any of the above, e.g.\n"
    "                        \"--tp 8 --pp 4\") and print, instead of the plan, how that\n"
    "                        plan compares with the chosen one (explain --diff; --json\n"
    "                        for its JSON) and whether it is proven best under them\n"
    /* an ONNX MODEL's import options, and -h */
    PL_HELP_ONNX_OPTIONS "\n"
    "examples:\n"
    "  planner search examples/gpt-small.json --cluster h100x8 -o plan.json\n"
    "  planner search examples/gpt-small.json --devices 8 --why-not \"--tp 2 --pp 1\"\n"
    "  planner search examples/gpt-small.json --devices 8 --job --top 5 -o plan.json\n"
    "  planner search gpt3-13b.json --cluster h100x8:2 --job -o plan.json\n"
    "  planner search gpt3-13b.json --cluster h100x8:2 --dp 2 --tp 2 --pp 4 -o plan.json\n";

/* A scratch file for a checkpoint (path into buf); 0, or -1. */
static int scratch_file(char *buf, size_t n, const char *text)
{
	const char *dir = getenv("TMPDIR");
	snprintf(buf, n, "%s/planner-why-not-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(buf);
	if (fd < 0)
		return -1;
	size_t len = text ? strlen(text) : 0;
	int bad = text && write(fd, text, len) != (ssize_t)len;
	return close(fd) || bad ? (unlink(buf), -1) : 0;
}

/* search --why-not OPTS: the same search with OPTS appended to its options
 * (the last of an option wins), its plan compared with the chosen one by
 * explain --diff. chosen is the chosen plan's text, out where it was
 * written (or NULL). */
static pl_status search_why_not(int argc, char **argv, const char *why_not, const char *out,
                                const char *chosen, int json, pl_err *err)
{
	char a[4096] = "", b[4096] = "";
	char *opts = pl_strdup(why_not);
	char **av = pl_calloc((size_t)argc + strlen(why_not) / 2 + 8, sizeof *av);
	pl_status st = PL_OK;
	if (!opts || !av) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	if ((!out && scratch_file(a, sizeof a, chosen)) || scratch_file(b, sizeof b, NULL)) {
		st = pl_err_set(err, PL_EWRITE, "--why-not: cannot write a scratch file: %s",
		                strerror(errno));
		goto done;
	}
	/* the same arguments without --why-not, -o and --json; then OPTS */
	int n = 0;
	for (int i = 0; i < argc; i++) {
		const char *x = argv[i];
		int with_value =
		    !strcmp(x, "--why-not") || !strcmp(x, "-o") || !strcmp(x, "--output");
		if (with_value) {
			i++;
			continue;
		}
		if (!strncmp(x, "--why-not=", 10) || !strncmp(x, "--output=", 9) ||
		    (!strncmp(x, "-o", 2) && x[2]) || !strcmp(x, "--json"))
			continue;
		av[n++] = argv[i];
	}
	for (char *t = strtok(opts, " \t\n"); t; t = strtok(NULL, " \t\n"))
		av[n++] = t;
	av[n++] = "-o";
	av[n++] = b;
	av[n] = NULL;
	/* the second search quietly: its messages stay, its table does not */
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	if (saved < 0 || null < 0 || dup2(null, 1) < 0) {
		st = pl_err_set(err, PL_EDEVICE, "--why-not: cannot redirect output");
		goto done;
	}
	close(null);
	int save_optind = optind;
	optind = 0;
	int rc = pl_cmd_search(n, av);
	optind = save_optind;
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	if (rc) {
		st = pl_err_set(err, rc == 3 ? PL_EINFEASIBLE : PL_EINVAL,
		                "--why-not \"%s\": no plan under those options (above)", why_not);
		goto done;
	}
	if (!json)
		printf("why not %s:\n", why_not);
	char label[4200];
	snprintf(label, sizeof label, "the plan with %s", why_not);
	rc = pl_cli_explain_diff(out ? out : a, out ? NULL : "the chosen plan", b, label, json);
	if (rc)
		st = pl_err_set(err, PL_EINVAL, "--why-not: the comparison failed (above)");
done:
	if (a[0])
		unlink(a);
	if (b[0])
		unlink(b);
	free(av);
	free(opts);
	return st;
}

/* A document's text as search and import write it (a newline at the end); NULL when
 * out of memory. */
char *pl_cli_doc_text(const cJSON *ck)
{
	char *txt = cJSON_Print(ck);
	size_t tl = txt ? strlen(txt) : 0;
	char *txtn = txt ? pl_realloc(txt, tl + 2) : NULL;
	if (!txtn) {
		free(txt);
		return NULL;
	}
	txtn[tl] = '\n';
	txtn[tl + 1] = 0;
	return txtn;
}

/* A plan's size of group `name` (1 when it has none). */
static long long group_size(const pl_ckpt_doc *d, const char *name)
{
	int n = pl_ckpt_group_size(pl_ckpt_doc_groups(d, name), 0);
	return n > 0 ? n : 1;
}

/* A "recompute" (a checkpoint's or an alternative's): none when absent */
static int recompute_of(const char *name)
{
	int rc = pl_recompute_parse(name);
	return rc < 0 ? PL_RECOMPUTE_NONE : rc;
}

/* The checkpoint's whole-job configuration, as the alternatives list it. */
static void ck_config(const pl_ckpt_doc *d, long long *pp, long long *m, int *zero, int *rc)
{
	*pp = (long long)pl_ckpt_or(d->v.pp_stages, 1);
	*m = (long long)pl_ckpt_or(d->v.pp_micro_batches, 1);
	*zero = (int)pl_ckpt_or(d->v.optimizer_shard, 0);
	*rc = recompute_of(d->v.recompute);
}

/* What makes two plans' configurations differ: dp, tp, pp, ep, micro-batches,
 * interleaving, recompute and ZeRO where it shards anything (dp > 1). */
static void config_key(const pl_ckpt_doc *d, long long key[8])
{
	long long pp, m;
	int z, rc;
	ck_config(d, &pp, &m, &z, &rc);
	key[0] = group_size(d, "dp");
	key[1] = group_size(d, "tp");
	key[2] = pp;
	key[3] = group_size(d, "ep");
	key[4] = m;
	key[5] = (long long)pl_ckpt_or(d->v.pp_virtual_stages, 1);
	key[6] = rc;
	key[7] = key[0] > 1 ? z : 0;
}

/* search --top's order: the faster step first; steps within 1e-12 of each
 * other by config_key (dp, tp, pp, ep, micro-batches, chunks, recompute,
 * ZeRO), smaller first, so that ties rank the same on every run */
static int top_before(const pl_ckpt_doc *a, const pl_ckpt_doc *b)
{
	double sa = pl_ckpt_or(a->v.step_s, 0), sb = pl_ckpt_or(b->v.step_s, 0);
	if (fabs(sa - sb) > 1e-12 * fmax(fabs(sa), fabs(sb)))
		return sa < sb;
	long long ka[8], kb[8];
	config_key(a, ka);
	config_key(b, kb);
	for (int i = 0; i < 8; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i];
	return 0;
}

/* path "plan.json" and rank k: "plan.k.json" (".k" at the end without an extension) */
static void ranked_path(char *buf, size_t n, const char *path, int k)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (dot && (!slash || dot > slash) && dot != path && dot[-1] != '/')
		snprintf(buf, n, "%.*s.%d%s", (int)(dot - path), path, k, dot);
	else
		snprintf(buf, n, "%s.%d", path, k);
}

/* search --top's table (or {"top": [...]} with json) of the n ranked plans */
static void print_top(const pl_ckpt_doc *ds, int n, char (*paths)[4200], int files, int json)
{
	cJSON *list = json ? cJSON_CreateArray() : NULL;
	if (!json)
		printf("the %d best configurations (each the best plan with it; 1 is the chosen "
		       "plan)\n"
		       " # %5s %5s %5s %5s %5s %9s %9s %11s %12s %10s  %s\n",
		       n, "dp", "tp", "pp", "ep", "zero", "recomp", "micro", "step s", "memory GiB",
		       "proven", files ? "file" : "");
	for (int i = 0; i < n; i++) {
		const pl_ckpt_doc *c = &ds[i];
		long long pp, m;
		int z, rc;
		ck_config(c, &pp, &m, &z, &rc);
		double step = pl_ckpt_or(c->v.step_s, 0), mem = pl_ckpt_or(c->v.peak_mem_bytes, 0);
		int proven = c->v.optimal;
		if (json) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "rank", i + 1);
			cJSON_AddNumberToObject(e, "dp", (double)group_size(c, "dp"));
			cJSON_AddNumberToObject(e, "tp", (double)group_size(c, "tp"));
			cJSON_AddNumberToObject(e, "pp", (double)pp);
			cJSON_AddNumberToObject(e, "ep", (double)group_size(c, "ep"));
			cJSON_AddNumberToObject(e, "zero", z);
			cJSON_AddStringToObject(e, "recompute", pl_recompute_name(rc));
			cJSON_AddNumberToObject(e, "micro_batches", (double)m);
			cJSON_AddNumberToObject(e, "step_seconds", step);
			cJSON_AddNumberToObject(e, "peak_memory_bytes", mem);
			cJSON_AddBoolToObject(e, "optimal", proven);
			if (files)
				cJSON_AddStringToObject(e, "file", paths[i]);
			pl_json_push(list, e);
		} else {
			printf("%2d %5lld %5lld %5lld %5lld %5d %9s %9lld %11.6g %12.2f %10s  %s\n",
			       i + 1, group_size(c, "dp"), group_size(c, "tp"), pp,
			       group_size(c, "ep"), z, pl_recompute_name(rc), m, step,
			       mem / 1073741824.0, proven ? "yes" : "no", paths[i]);
		}
	}
	if (json) {
		cJSON *root = cJSON_CreateObject();
		pl_json_add(root, "top", list);
		char *txt = cJSON_Print(root);
		if (txt)
			puts(txt);
		free(txt);
		cJSON_Delete(root);
	}
}

/* The plan solved again at an alternative's point (its dimensions fixed):
 * PL_OK with *c (NULL: no plan there after all), or PL_ENOMEM */
static pl_status solve_alt(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *po,
                           long long pp, long long m, int z, int rc, cJSON **c, pl_err *err)
{
	pl_plan_opts o = *po;
	o.top = 0;
	o.so.progress = NULL;
	o.jo.stages = pp;
	o.jo.micro_batches = m;
	o.jo.micro_batch_size = PL_AUTO;
	o.jo.zero = z;
	o.jo.recompute = rc;
	*c = NULL;
	pl_err e2 = {{0}};
	pl_status s2 = pl_plan_search(g, cl, &o, c, NULL, &e2);
	if (s2 == PL_ENOMEM) {
		*err = e2;
		return s2;
	}
	if (s2) /* no plan at this point after all: the next one */
		*c = NULL;
	return PL_OK;
}

/* search --top K: ck is the chosen plan (rank 1, the search's plan as without
 * --top); the same search keeping K points apart lists the points it planned
 * (search.alternatives), and the best K - 1 other configurations are solved
 * again with their dimensions fixed (what `search` with those options
 * returns), ranked by step, written beside out, and listed. */
static pl_status search_top(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *po,
                            const pl_ckpt_doc *d0, cJSON *ck, int k, const char *out, int json,
                            pl_err *err)
{
	cJSON *cks[PL_MAX_TOP] = {ck};
	pl_ckpt_doc ds[PL_MAX_TOP] = {*d0}, da = {0};
	char paths[PL_MAX_TOP][4200] = {{0}};
	int n = 1;
	pl_status st = PL_OK;
	long long pp0, m0;
	int z0, r0;
	ck_config(d0, &pp0, &m0, &z0, &r0);
	/* the points: the same search keeping the best k apart (it may explore
	 * more of them than the search whose plan is rank 1) */
	cJSON *all = NULL;
	if (k > 1) {
		pl_plan_opts o = *po;
		o.top = k;
		o.so.progress = NULL;
		if ((st = pl_plan_search(g, cl, &o, &all, NULL, err)) ||
		    (st = pl_ckpt_doc_read(all, &da, err)))
			goto done;
	}
	for (int i = 0; i < da.nalts && n < k; i++) {
		const pl_ckpt_alt *a = &da.alts[i];
		long long pp = (long long)pl_ckpt_or(a->stages, 1),
		          m = (long long)pl_ckpt_or(a->micro_batches, 1);
		int z = (int)pl_ckpt_or(a->zero, 0);
		int rc = recompute_of(a->recompute);
		if (pp == pp0 && m == m0 && z == z0 && rc == r0)
			continue; /* the chosen plan's point */
		cJSON *c;
		if ((st = solve_alt(g, cl, po, pp, m, z, rc, &c, err)))
			goto done;
		if (!c)
			continue;
		if ((st = pl_ckpt_doc_read(c, &ds[n], err))) {
			cks[n++] = c;
			goto done;
		}
		long long key[8], other[8];
		int same = 0;
		config_key(&ds[n], key);
		for (int j = 0; j < n && !same; j++) {
			config_key(&ds[j], other);
			same = !memcmp(key, other, sizeof key);
		}
		if (same) { /* ZeRO without data parallelism, say: the same plan */
			pl_ckpt_doc_free(&ds[n]);
			cJSON_Delete(c);
			continue;
		}
		cks[n++] = c;
	}
	/* ranks 2..n by step (the re-solved plans' own prices), steps equal to
	 * 1e-12 (the same plan's sums in another order) by configuration */
	for (int i = 2; i < n; i++)
		for (int j = i; j > 1 && top_before(&ds[j], &ds[j - 1]); j--) {
			cJSON *t = cks[j];
			cks[j] = cks[j - 1];
			cks[j - 1] = t;
			pl_ckpt_doc td = ds[j];
			ds[j] = ds[j - 1];
			ds[j - 1] = td;
		}
	for (int i = 1; out && i < n; i++) {
		ranked_path(paths[i], sizeof paths[i], out, i + 1);
		char *txt = pl_cli_doc_text(cks[i]);
		if (!txt) {
			st = pl_err_set(err, PL_ENOMEM, "out of memory");
			goto done;
		}
		st = pl_output_write(paths[i], txt, err);
		free(txt);
		if (st)
			goto done;
	}
	if (out)
		snprintf(paths[0], sizeof paths[0], "%s", out);
	print_top(ds, n, paths, out != NULL, json);
	if (n < k && !json)
		printf("(%d asked for: the search found plans at %d points)\n", k, n);
done:
	for (int i = 1; i < n; i++) {
		pl_ckpt_doc_free(&ds[i]);
		cJSON_Delete(cks[i]);
	}
	pl_ckpt_doc_free(&da);
	cJSON_Delete(all);
	return st;
}

int pl_cli_parse_max_tp(const char *arg, long long *v)
{
	return pl_parse_ll(arg, v) || *v < 0 || *v > PL_MAX_DEVICES;
}

/* How long the default search (no --mode, no --time-limit) gives exact dp
 * before it plans with auto: PL_DEFAULT_DP_SECONDS, 60 s; the environment
 * variable of the same name sets another (tests). */
#define PL_DEFAULT_DP_SECONDS 60.0

/* With --time-limit, the default search's share of it for exact dp (the
 * rest: auto's fall-back, should dp not end) */
#define PL_DEFAULT_DP_SHARE 0.6

static double default_dp_seconds(void)
{
	const char *v = getenv("PL_DEFAULT_DP_SECONDS");
	char *end;
	double s = v ? strtod(v, &end) : 0;
	return v && *v && !*end && s > 0 && isfinite(s) ? s : PL_DEFAULT_DP_SECONDS;
}

/* search's options as given */
typedef struct search_args {
	pl_cli_common co;
	const char *mode, *load, *out, *dump_lp, *why_not, *framework;
	int mode_given, json, prog, cap;
	int cost_edges; /* --ilp-edges: -1 not given */
	int top;        /* --top K */
	pl_job_request jr;
} search_args;

/* --overlap-grad-reduce, --sequence-parallel */
static int on_off_option(int ch, const char *arg, pl_job_request *jr)
{
	int sp = ch == OPT_SP, auto_ok = sp && !strcmp(arg, "auto");
	if (strcmp(arg, "on") && strcmp(arg, "off") && !auto_ok)
		return pl_cli_usage("search", "--%s %s: expected on or off%s",
		                    sp ? "sequence-parallel" : "overlap-grad-reduce", arg,
		                    sp ? " or auto" : "");
	*(sp ? &jr->seq_parallel : &jr->overlap) =
	    auto_ok ? pl_dim_auto() : pl_dim_value(!strcmp(arg, "on"));
	return 0;
}

/* --dp, --tp, --cp, --ep, --micro-batch-size (name: the option as given) */
static int degree_option(int ch, const char *arg, const char *name, pl_job_request *jr)
{
	long long v;
	if (pl_parse_ll(arg, &v) || v < 1 || v > (1LL << 30))
		return pl_cli_usage("search", "--%s %s: expected an integer >= 1", name, arg);
	*(ch == OPT_DP   ? &jr->dp
	  : ch == OPT_TP ? &jr->tp
	  : ch == OPT_CP ? &jr->cp
	  : ch == OPT_EP ? &jr->ep
	                 : &jr->micro_batch_size) = pl_dim_value(v);
	return 0;
}

/* --replicate, --stage-cuts, --recompute: a word each */
static int word_option(int ch, const char *arg, pl_job_request *jr)
{
	if (ch == OPT_REPLICATE) {
		if (!strcmp(arg, "auto"))
			jr->replicas = pl_dim_auto();
		else if (!strcmp(arg, "on") || !strcmp(arg, "off"))
			jr->replicas = pl_dim_value(!strcmp(arg, "on"));
		else
			return pl_cli_usage("search", "--replicate %s: expected on, off or auto",
			                    arg);
		return 0;
	}
	if (ch == OPT_STAGE_CUTS) {
		/* indexed as pl_job_opts.layer_cuts */
		static const char *const cuts[] = {"any", "layers", "even", "uniform"};
		int k = 0;
		while (k < 4 && strcmp(arg, cuts[k]))
			k++;
		if (k == 4)
			return pl_cli_usage(
			    "search", "--stage-cuts %s: expected layers, even, uniform or any",
			    arg);
		jr->layer_cuts = pl_dim_value(k);
		return 0;
	}
	if (!strcmp(arg, "auto"))
		jr->recompute = pl_dim_auto();
	else if (pl_recompute_parse(arg) < 0)
		return pl_cli_usage(
		    "search",
		    "--recompute %s: expected none, full, selective, selective-op or auto", arg);
	else
		jr->recompute = pl_dim_value(pl_recompute_parse(arg));
	return 0;
}

/* One of the options of a whole-job plan (--job, --pp, --dp, --zero, ...;
 * name: the option as given): 0 when taken, an exit status, or -1 when ch
 * is not one of them. */
static int job_option(int ch, const char *arg, const char *name, pl_job_request *jr)
{
	long long v;
	switch (ch) {
	case 'J': jr->all = 1; return 0;
	case 'F': jr->fastest = 1; return 0;
	case 'S':
		if (pl_dim_parse(arg, 1, 1 << 20, &jr->stages))
			return pl_cli_usage("search", "--%s %s: expected 'auto' or an integer >= 1",
			                    name, arg);
		return 0;
	case 'B':
		if (pl_dim_parse(arg, 1, 1 << 30, &jr->micro_batches))
			return pl_cli_usage(
			    "search", "--micro-batches %s: expected 'auto' or an integer >= 1",
			    arg);
		return 0;
	case OPT_MAX_TP:
		if (pl_cli_parse_max_tp(arg, &v))
			return pl_cli_usage("search", MAX_TP_EXPECTED, arg);
		jr->max_tp = pl_dim_value(v);
		return 0;
	case OPT_VS:
		if (pl_dim_parse(arg, 1, PL_JOB_MAX_VIRTUAL, &jr->virtual_stages))
			return pl_cli_usage("search",
			                    "--virtual-stages %s: expected 'auto' or an integer "
			                    "from 1 to %d",
			                    arg, PL_JOB_MAX_VIRTUAL);
		return 0;
	case 'Z':
		if (pl_dim_parse(arg, 0, 3, &jr->zero))
			return pl_cli_usage("search", "--zero %s: expected 0, 1, 2, 3 or 'auto'",
			                    arg);
		return 0;
	case OPT_TP_OVERLAP:
	case OPT_PARAM_OVERLAP:
		if (strcmp(arg, "on") && strcmp(arg, "off"))
			return pl_cli_usage(
			    "search", "--%s %s: expected on or off",
			    ch == OPT_TP_OVERLAP ? "tp-comm-overlap" : "overlap-param-gather", arg);
		*(ch == OPT_TP_OVERLAP ? &jr->tp_overlap : &jr->param_overlap) =
		    pl_dim_value(!strcmp(arg, "on"));
		return 0;
	case OPT_OVERLAP:
	case OPT_SP: return on_off_option(ch, arg, jr);
	case OPT_DP:
	case OPT_TP:
	case OPT_CP:
	case OPT_EP:
	case OPT_MBS: return degree_option(ch, arg, name, jr);
	case OPT_REPLICATE:
	case OPT_STAGE_CUTS:
	case 'R': return word_option(ch, arg, jr);
	}
	return -1;
}

/* search's options but the shared ones and a whole job's: 0 when taken, or
 * an exit status */
static int search_option(int ch, const char *arg, search_args *s)
{
	long long v;
	switch (ch) {
	case 'm':
		s->mode = arg;
		s->mode_given = 1;
		break;
	case 'l': s->load = arg; break;
	case 'o': s->out = arg; break;
	case 'P':
		if (pl_parse_ll(arg, &v) || v < 2 || v > 1000000)
			return pl_cli_usage("search", "--pareto-cap %s: expected an integer >= 2",
			                    arg);
		s->cap = (int)v;
		break;
	case 'j': s->json = 1; break;
	case OPT_WHY_NOT: s->why_not = arg; break;
	case OPT_TOP:
		if (pl_parse_ll(arg, &v) || v < 1 || v > PL_MAX_TOP)
			return pl_cli_usage("search", "--top %s: expected an integer from 1 to %d",
			                    arg, PL_MAX_TOP);
		s->top = (int)v;
		break;
	case 'L': s->dump_lp = arg; break;
	case 'E':
		if (strcmp(arg, "flow") && strcmp(arg, "cost"))
			return pl_cli_usage("search", "--ilp-edges %s: expected flow or cost", arg);
		s->cost_edges = !strcmp(arg, "cost");
		break;
	case 'p': s->prog = 1; break;
	case OPT_FRAMEWORK: s->framework = arg; break;
	}
	return 0;
}

/* search's options read into s: -1 when the search goes on, else the exit
 * status (--help, a bad option) */
static int search_parse(int argc, char **argv, search_args *s)
{
	*s = (search_args){.mode = "dp", .cost_edges = -1, .jr = PL_JOB_REQUEST_INIT};
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_SEARCH, "search", search_help, &s->co);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		if (ch == PL_CLI_STOP)
			return a.rc;
		int rc = job_option(ch, optarg, a.longs[a.li].name, &s->jr);
		if (rc < 0)
			rc = search_option(ch, optarg, s);
		if (rc)
			return rc;
	}
	return -1;
}

/* The options together, and the plan's options from them (po): -1 when the
 * search goes on, else the exit status */
static int search_check(const search_args *s, int argc, pl_plan_opts *po)
{
	if (optind != argc - 1)
		return pl_cli_usage("search", "expected one MODEL file%s",
		                    optind < argc - 1 ? ", got more" : "");
	if (s->dump_lp && strcmp(s->mode, "ilp"))
		return pl_cli_usage("search", "--dump-lp goes with --mode ilp%s", "");
	if (s->cost_edges >= 0 && strcmp(s->mode, "ilp"))
		return pl_cli_usage("search", "--ilp-edges goes with --mode ilp%s", "");
	char modes[128];
	if (!pl_searcher_get(s->mode))
		return pl_cli_usage("search", "--mode %s: expected one of %s", s->mode,
		                    pl_searcher_names(modes, sizeof modes));
	pl_err err = {{0}};
	*po = (pl_plan_opts){.mode = s->mode};
	if (pl_plan_opts_job(po, &s->jr, 0, &err))
		return pl_cli_usage("search", "%s", err.msg);
	if (s->framework && (s->top || s->why_not || s->load))
		return pl_cli_usage("search", "--framework plans alone: without %s",
		                    s->top       ? "--top"
		                    : s->why_not ? "--why-not"
		                                 : "--load");
	if (s->top && !po->job)
		return pl_cli_usage("search",
		                    "--top ranks whole-job configurations: it goes with --job or a "
		                    "fixed dimension (--pp, --dp, --tp, --zero, ...)%s",
		                    "");
	if (s->top && s->why_not)
		return pl_cli_usage("search", "--top and --why-not: one at a time%s", "");
	if (s->framework) {
		int known = 0;
		for (int i = 0; i < pl_export_count(); i++)
			known |= !strcmp(s->framework, pl_export_name(i));
		char nb[PL_EXPORT_NAMES_MAX];
		if (!known)
			return pl_cli_usage("search", "--framework %s: expected %s", s->framework,
			                    pl_export_names(nb, sizeof nb));
	}
	return -1;
}

/* --framework: its pricing defaults on the cluster and the request, an
 * option given kept; *defaults what it set (search.framework_defaults) */
static pl_status framework_defaults(search_args *s, pl_cluster *cl, cJSON **defaults, pl_err *err)
{
	const pl_cli_common *co = &s->co;
	unsigned given =
	    (co->attention ? 1u << PL_FW_PRICE_ATTENTION : 0) |
	    (co->loss ? 1u << PL_FW_PRICE_LOSS : 0) |
	    (co->loss_par ? 1u << PL_FW_PRICE_LOSS_PARALLEL : 0) |
	    (co->grad_dt ? 1u << PL_FW_PRICE_GRAD_DTYPE : 0) |
	    (co->grad_red ? 1u << PL_FW_PRICE_GRAD_REDUCE : 0) |
	    (co->grad_acc ? 1u << PL_FW_PRICE_GRAD_ACC : 0) |
	    (co->param_shard ? 1u << PL_FW_PRICE_PARAM_SHARD : 0) |
	    (co->norm_k ? 1u << PL_FW_PRICE_NORM : 0) | (co->mask_k ? 1u << PL_FW_PRICE_MASK : 0) |
	    (co->bn ? 1u << PL_FW_PRICE_BATCH_NORM : 0) |
	    (co->cp_ex ? 1u << PL_FW_PRICE_CP_EXCHANGE : 0) |
	    (s->jr.overlap.how != PL_GIVEN_NOT ? 1u << PL_FW_PRICE_OVERLAP : 0) |
	    (s->jr.tp_overlap.how != PL_GIVEN_NOT ? 1u << PL_FW_PRICE_TP_OVERLAP : 0) |
	    (s->jr.param_overlap.how != PL_GIVEN_NOT ? 1u << PL_FW_PRICE_PARAM_OVERLAP : 0);
	return pl_export_defaults(s->framework, given, cl, &s->jr, defaults, err);
}

/* The search within the time it has (t_cmd: the command's start): the
 * default search (no --mode) bounded, with auto's fall-back where exact dp
 * does not end or finds the graph too entangled. */
static pl_status search_run(pl_graph *g, const pl_cluster *cl, search_args *s, pl_plan_opts *po,
                            double t_cmd, cJSON **ck, double *secs, pl_err *err)
{
	pl_search_opts lim = pl_cli_common_search_opts(&s->co, cl);
	po->so = (pl_search_opts){.memory_limit = lim.memory_limit,
	                          .time_limit_s = lim.time_limit_s,
	                          .dp.pareto_cap = s->cap,
	                          .ilp.dump_lp = s->dump_lp,
	                          .ilp.cost_edges = s->cost_edges > 0,
	                          .progress = s->prog || isatty(2) ? on_progress : NULL};
	/* the default search is bounded: exact dp for at most default_dp_seconds
	 * (unless --time-limit says otherwise), then auto's plan */
	double bound = !s->mode_given && !(lim.time_limit_s > 0) ? default_dp_seconds() : 0;
	double search_t0 = pl_now();
	if (bound > 0)
		po->so.time_limit_s = bound;
	else /* every phase gets what is left of --time-limit */
		po->so.time_limit_s = pl_time_left(t_cmd, lim.time_limit_s);
	/* the default search with --time-limit, a per-op plan: exact dp gets
	 * PL_DEFAULT_DP_SHARE of what is left, auto's fall-back the rest (a
	 * whole-job search keeps its best plan at the limit: all of it) */
	double share = !s->mode_given && !s->framework && !po->job && lim.time_limit_s > 0
	                   ? PL_DEFAULT_DP_SHARE * po->so.time_limit_s
	                   : 0;
	if (share > 0)
		po->so.time_limit_s = share;
	/* a per-op plan: auto's fall-back runs on the problem dp failed on, in
	 * what is left of the limit (without one, as below: auto from the start) */
	int fell_back = 0;
	if (share > 0) {
		po->fallback = 1;
		po->fallback_s = pl_time_left(t_cmd, lim.time_limit_s);
		po->fell_back = &fell_back;
	}
	/* the default whole-job search plans a graph too entangled for exact dp
	 * with rec at each point (unproven, search.why says so) */
	po->jo.rec_fallback = !s->mode_given && !s->framework;
	pl_status st = s->framework
	                   ? pl_export_search(g, cl, po, &s->jr, s->framework, ck, secs, err)
	                   : pl_plan_search(g, cl, po, ck, secs, err);
	po->jo.rec_fallback = 0;
	po->fallback = 0;
	if (fell_back == 1)
		fprintf(stderr,
		        "planner: note: exact dp did not end within %.3g s (%g %% of the time "
		        "limit); the default search plans it with --mode auto in the rest\n",
		        share, 100 * PL_DEFAULT_DP_SHARE);
	else if (fell_back == 2)
		fprintf(stderr,
		        "planner: note: exact dp: the graph is too entangled; the default search "
		        "plans it with --mode auto\n");
	/* without --time-limit (a per-op plan or a whole job), or a whole job
	 * with one whose dp found the graph too entangled: auto from the start */
	int timed_out = st == PL_ETIMEOUT && bound > 0;
	if (st && !s->framework && !s->mode_given && !share &&
	    (timed_out || strstr(err->msg, "too entangled for exact dp"))) {
		/* the default search plans every graph: dp where its tables stay
		 * small and it ends in time, else auto's fall-back (rec and a local
		 * search, the gap to a lower bound said) */
		if (timed_out)
			fprintf(
			    stderr,
			    "planner: note: exact dp did not end within the default search's "
			    "%g s (--time-limit S gives it longer); the default search plans it "
			    "with --mode auto\n",
			    bound);
		else
			fprintf(stderr,
			        "planner: note: %s; the default search plans it with --mode auto\n",
			        err->msg);
		po->mode = "auto";
		po->so.time_limit_s = pl_time_left(t_cmd, lim.time_limit_s);
		st = pl_plan_search(g, cl, po, ck, secs, err);
	}
	/* the default search's space is the whole job's: a per-op plan is its
	 * point of one stage and micro-batch without ZeRO or recompute */
	if (!s->framework && !s->mode_given && !s->top) {
		/* without --time-limit, bounded as the per-op search is */
		po->so.time_limit_s = bound > 0 ? bound : pl_time_left(t_cmd, lim.time_limit_s);
		st = pl_plan_whole_job(g, cl, po, &s->jr, 0, st, ck, secs, err);
	}
	if (st == PL_ETIMEOUT && lim.time_limit_s > 0 && search_t0 - t_cmd > 0) {
		/* the searcher names the time it was given: what was left */
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof err->msg - n,
		         " (--time-limit %g s counts from the command's start; the search began "
		         "%.3g s into it, after reading the model)",
		         lim.time_limit_s, search_t0 - t_cmd);
	}
	return st;
}

/* propagate: where fronts met, and what it costs */
static void print_conflicts(const pl_ckpt_doc *d)
{
	for (int k = 0; k < d->nconflicts; k++) {
		const pl_ckpt_conflict *c = &d->conflicts[k];
		fprintf(stderr,
		        "planner: conflict: fronts meet at edge '%s' -> '%s' (tensor '%s'), "
		        "adding %.3g s\n",
		        c->from, c->to, c->tensor, c->seconds);
	}
}

/* The plan written (-o) and said: --why-not's or --top's answer, else the
 * summary and the table, or (--json) the checkpoint; what is said is read
 * from the checkpoint's typed view */
static pl_status search_print(int argc, char **argv, pl_graph *g, const pl_cluster *cl,
                              pl_plan_opts *po, const search_args *s, cJSON *ck, double secs,
                              pl_err *err)
{
	pl_ckpt_doc d;
	pl_status st = pl_ckpt_doc_read(ck, &d, err);
	char *txt = st ? NULL : pl_cli_doc_text(ck);
	if (st || !txt) {
		pl_ckpt_doc_free(&d);
		return st ? st : pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	print_conflicts(&d);
	if (s->out && (st = pl_output_write(s->out, txt, err)))
		goto done;
	if (s->why_not) {
		st = search_why_not(argc, argv, s->why_not, s->out, txt, s->json, err);
		goto done;
	}
	if (s->top) {
		st = search_top(g, cl, po, &d, ck, s->top, s->out, s->json, err);
		goto done;
	}
	/* with the plan on standard output (-o -, -o /dev/stdout) the summary
	 * goes to standard error, so that the output stays one JSON document */
	FILE *say = s->out && pl_output_is_stdout(s->out) ? stderr : stdout;
	if (s->json) {
		if (say == stdout)
			fputs(txt, stdout);
	} else {
		pl_cli_print_totals(&d, say);
		fprintf(say, "search took %.3f s\n", secs);
		pl_cli_print_table(&d, say, 60);
		if (s->out)
			fprintf(say, "wrote %s\n", s->out);
	}
done:
	pl_ckpt_doc_free(&d);
	free(txt);
	return st;
}

int pl_cmd_search(int argc, char **argv)
{
	double t_cmd = pl_now(); /* --time-limit counts from here: reading the model too */
	search_args s;
	pl_plan_opts po;
	int rc = search_parse(argc, argv, &s);
	if (rc >= 0 || (rc = search_check(&s, argc, &po)) >= 0)
		return rc;
	pl_err err = {{0}};
	pl_graph *g = NULL;
	cJSON *ck = NULL, *loaded = NULL;
	cJSON *fw_defaults = NULL; /* search.framework_defaults */
	char *text = NULL;
	pl_cluster cl;
	pl_status st;
	size_t len;
	double secs = 0;
	if ((st = pl_cli_load_model(&g, argv[optind], &s.co.onnx, &err)) ||
	    (st = pl_cli_resolve_cluster(&s.co, &cl, &err)))
		goto cleanup;
	if (s.framework && (st = framework_defaults(&s, &cl, &fw_defaults, &err)))
		goto cleanup;
	if (s.load) {
		if ((st = pl_read_file(s.load, &text, &len, &err)))
			goto cleanup;
		if ((st = pl_json_parse(text, len, s.load, &loaded, &err)))
			goto cleanup;
		po.keep = loaded;
		po.keep_where = s.load;
	}
	if ((st = search_run(g, &cl, &s, &po, t_cmd, &ck, &secs, &err)))
		goto cleanup;
	if (fw_defaults) {
		cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(ck, "search"),
		                      "framework_defaults", fw_defaults);
		fw_defaults = NULL;
	}
	/* the default search, nothing of the layout given: plain data
	 * parallelism where it is within PL_JOB_SIMPLER of the fastest plan */
	int plain = !s.framework && !s.mode_given && !s.load && !s.dump_lp && !s.top;
	if (plain && !s.jr.fastest) {
		po.so.time_limit_s = pl_time_left(t_cmd, s.co.tlimit);
		pl_plan_prefer_dp(g, &cl, &po, &s.jr, &ck, &secs);
	}
	st = search_print(argc, argv, g, &cl, &po, &s, ck, secs, &err);
cleanup:
	cJSON_Delete(fw_defaults);
	cJSON_Delete(ck);
	cJSON_Delete(loaded);
	free(text);
	pl_graph_free(g);
	return st ? pl_cli_fail(st, &err) : 0;
}
