#!/usr/bin/python3
"""Is a training-mode batch-norm model's drift between plans a wrong gradient or
ill-conditioning? (issue 50 item 4.) Exports torchvision's Inception-v3 (training
mode, no auxiliary head, dropout 0, 10 classes) with its weights, a batch of 2 images
of 299 x 299 and labels as .npy, then trains it 3 SGD steps (lr 0.01) in PyTorch in
float32 and in float64 from the same weights and batch and prints both losses: where
PyTorch's own float32 and float64 runs part after one update, the model is
ill-conditioned and no fp32 plan can be held to another's losses past step 1.
Then, with the files it writes into OUT (default /tmp/bn_conditioning):

  planner search OUT/inc.onnx --devices 1 -o one.json   (and --devices 2 --tp 2, --dp 2)
  planner run OUT/inc.onnx --strategy one.json --steps 3 --optimizer sgd --lr 0.01 \\
      --weights OUT/inc.onnx --batch-file x=OUT/x.npy --batch-file labels=OUT/labels.npy

Needs Debian's python3-torch, python3-torchvision and python3-onnx.
Run: /usr/bin/python3 benchmarks/bn_conditioning.py [OUT]"""
import copy
import os
import sys

import numpy
import onnx
import torch
import torch.nn.functional as F
import torchvision
from onnx import shape_inference

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bn_conditioning"
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
m = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True,
                                    num_classes=10)
m.train()
for mod in m.modules():
    if isinstance(mod, torch.nn.Dropout):
        mod.p = 0.0
x = torch.randn(2, 3, 299, 299)
labels = torch.randint(0, 10, (2,))
path = os.path.join(out, "inc.onnx")
torch.onnx.export(m, (x,), path, input_names=["x"], output_names=["out"], opset_version=14,
                  do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING)
onnx.save(shape_inference.infer_shapes(onnx.load(path)), path)
numpy.save(os.path.join(out, "x.npy"), x.numpy())
numpy.save(os.path.join(out, "labels.npy"), labels.numpy())
for dt in (torch.float32, torch.float64):
    mm = copy.deepcopy(m).to(dt)
    opt = torch.optim.SGD(mm.parameters(), lr=0.01)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(mm(x.to(dt)), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print("PyTorch", str(dt).replace("torch.", ""), " ".join("%.9g" % v for v in losses))
