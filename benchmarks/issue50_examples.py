#!/usr/bin/python3
"""Issue 50's examples, planned freely and under each fixed degree on 8 devices.

Exports with Debian's python3-torch and python3-torchvision (1.13 / 0.14) the
models the issue names that no fixture covers -- torchvision's DenseNet-121,
GoogLeNet in training mode and FCN-ResNet50, an nn.Transformer encoder-decoder
(PyTorch's defaults: d_model 512, 6 + 6 layers) and a Perceiver (cross-attention
of 64 latents over 512 inputs, then self-attention over the latents, written
here from Jaegle et al. 2021, arXiv:2103.03206, Fig. 1) -- with float
initializers' data stripped as tests/fixtures/onnx/make_fixtures.py does (the
planner needs shapes only), then runs `planner search M --devices 8` with no
degree fixed and with --dp 8 and --tp 8 (also --mode rec, as the issue ran
DenseNet), each also with --zero 0 (the issue compared plans of one stage
without ZeRO; a fixed degree makes a whole-job search, which chooses ZeRO,
micro-batches and recompute; a given --mode plans per op), and prints each plan's step (cost.step_seconds),
ZeRO level and micro-batches, and whether the free plan is at least as fast
as every fixed one. Exit 1 when a fixed plan without ZeRO beats it. Since
the twenty-second session the free search's space is the whole job's (the
per-op plan, then the whole-job search where it is faster: docs/user-guide.md),
so no fixed plan, with ZeRO or without, should beat it.

Run: /usr/bin/python3 benchmarks/issue50_examples.py BUILD_DIR [OUT_DIR]
(exporting takes about a minute; the searches a few seconds each)."""
import json
import os
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")  # the exporter's UserWarnings on every BatchNorm

build = sys.argv[1] if len(sys.argv) > 1 else "build"
out = sys.argv[2] if len(sys.argv) > 2 else "/tmp/issue50_examples"
os.makedirs(out, exist_ok=True)
planner = os.path.join(build, "planner")


def export_all():
    import onnx
    import torch
    import torchvision
    from onnx import shape_inference

    def strip(model):
        for t in model.graph.initializer:
            if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
                               onnx.TensorProto.DOUBLE) and len(t.dims) and \
                    int(torch.tensor(list(t.dims)).prod()) > 1:
                t.ClearField("raw_data")
                t.ClearField("float_data")
                t.ClearField("double_data")
        return model

    def export(name, module, args, input_names, train=False):
        path = os.path.join(out, name + ".onnx")
        if os.path.exists(path):
            return
        module.train(train)
        mode = torch.onnx.TrainingMode.TRAINING if train else torch.onnx.TrainingMode.EVAL
        torch.onnx.export(module, args, path, input_names=input_names, output_names=["out"],
                          opset_version=14, do_constant_folding=not train, training=mode)
        m = shape_inference.infer_shapes(onnx.load(path))
        onnx.save(strip(m), path)
        print(name, os.path.getsize(path), "bytes,", len(m.graph.node), "nodes", flush=True)

    class Perceiver(torch.nn.Module):
        def __init__(self, m=512, c=64, n=64, d=128, layers=6, classes=100):
            super().__init__()
            self.inp = torch.nn.Linear(c, d)
            self.latents = torch.nn.Parameter(torch.randn(1, n, d))
            self.cross = torch.nn.MultiheadAttention(d, 1, batch_first=True)
            self.blocks = torch.nn.ModuleList(
                torch.nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
                for _ in range(layers))
            self.head = torch.nn.Linear(d, classes)

        def forward(self, x):
            kv = self.inp(x)
            z = self.latents.expand(x.shape[0], -1, -1)
            z = z + self.cross(z, kv, kv, need_weights=False)[0]
            for b in self.blocks:
                z = b(z)
            return self.head(z.mean(1))

    class Seq2Seq(torch.nn.Module):
        def __init__(self, vocab=1000):
            super().__init__()
            self.emb = torch.nn.Embedding(vocab, 512)
            self.t = torch.nn.Transformer(512, 8, 6, 6, 2048, dropout=0.1, batch_first=True)
            self.out = torch.nn.Linear(512, vocab)

        def forward(self, src, tgt):
            return self.out(self.t(self.emb(src), self.emb(tgt)))

    torch.manual_seed(0)
    img = torch.randn(32, 3, 224, 224)
    export("densenet121", torchvision.models.densenet121(), (img,), ["x"])
    export("googlenet_train", torchvision.models.googlenet(aux_logits=False, init_weights=True),
           (img,), ["x"], train=True)
    export("fcn_resnet50", torchvision.models.segmentation.fcn_resnet50(
        weights=None, weights_backbone=None, aux_loss=False), (torch.randn(8, 3, 224, 224),),
        ["x"])
    export("transformer", Seq2Seq(), (torch.randint(0, 1000, (16, 64)),
                                      torch.randint(0, 1000, (16, 64))), ["src", "tgt"])
    export("perceiver", Perceiver(), (torch.randn(32, 512, 64),), ["x"])


spaces = {}  # plan file -> its search.space


def step(model, *args):
    plan = os.path.join(out, os.path.basename(model) + "." + "_".join(a.strip("-") for a in args)
                        + ".plan")
    r = subprocess.run([planner, "search", model, "--devices", "8", *args, "-o", plan],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "exit %d" % r.returncode
    p = json.load(open(plan))
    pipe = p.get("pipeline") or {}
    spaces[plan] = p["search"].get("space") or ""
    return p["cost"]["step_seconds"], "%s | %s | %s" % (
        "optimal" if p["search"].get("optimal") else "not proven",
        p.get("optimizer_shard") or 0, pipe.get("micro_batches", 1))


if __name__ == "__main__":
    export_all()
    fixed = [["--dp", "8"], ["--dp", "8", "--zero", "0"], ["--tp", "8"], ["--tp", "8", "--zero", "0"]]
    runs = [(m, [[]] + fixed) for m in ("perceiver", "fcn_resnet50", "transformer",
                                        "googlenet_train")]
    runs.append(("densenet121", [[]] + fixed + [["--mode", "rec"]] +
                 [f + ["--mode", "rec"] for f in fixed]))
    print("| model | search | step (ms) | search.optimal | ZeRO | micro-batches |")
    print("|---|---|---|---|---|---|")
    beaten = {"any ZeRO": [], "ZeRO 0 (the issue's comparison)": []}
    for name, variants in runs:
        model = os.path.join(out, name + ".onnx")
        free = {}
        for args in variants:
            s, why = step(model, *args)
            mode = "rec" if "rec" in args else "default"
            label = " ".join(args) or "free"
            print("| %s | %s | %s | %s |" % (name, label, "%.3f" % (s * 1e3) if s else "-", why),
                  flush=True)
            if s is None:
                continue
            if not [a for a in args if a in ("--dp", "--tp")]:
                free[mode] = s
                free[mode + " space"] = spaces[max(spaces, key=lambda k: os.path.getmtime(k))]
                continue
            # no fixed plan beats the default free one, nor its own mode's free one
            for m in {mode, "default"}:
                if m in free and s < free[m] * (1 - 1e-9):
                    what = "%s %s: %.3f ms < free %s %.3f ms (%.1f %%)" % (
                        name, label, s * 1e3, m, free[m] * 1e3, 100 * (free[m] / s - 1))
                    if "without ZeRO" in free[m + " space"]:
                        what += ", which the free plan's search.space states"
                    beaten["any ZeRO"].append(what)
                    if "--zero" in args:
                        beaten["ZeRO 0 (the issue's comparison)"].append(what)
    for k, v in beaten.items():
        print("free <= every fixed degree, %s: %s" % (k, "yes" if not v else "NO: " + "; ".join(v)))
    sys.exit(0 if not beaten["ZeRO 0 (the issue's comparison)"] else 1)
