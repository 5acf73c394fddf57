#!/usr/bin/env python3
"""A DenseNet-121-shaped model (torchvision's densenet121: growth 32, blocks of
6, 12, 24 and 16 layers, each BN-ReLU-Conv1x1-BN-ReLU-Conv3x3 reading the
concatenation of every earlier feature map of its block, transitions halving
the channels) as planner.model/1 JSON on stdout: the entangled graph exact dp
cannot solve (its concatenations join every layer of a block). Concats of
more than 5 inputs are chains of Concats, as the ONNX importer writes them.
Usage: densenet_like.py [BATCH] > densenet.json"""
import json, sys
B=int(sys.argv[1]) if len(sys.argv)>1 else 8
growth=32; blocks=[6,12,24,16]
T={"x":{"shape":[B,3,224,224],"role":"input"},"labels":{"shape":[B],"dtype":"int64","role":"input"}}
ops=[]; n=[0]
def name(p): n[0]+=1; return f"{p}{n[0]}"
def param(shape):
    t=name("w"); T[t]={"shape":shape,"role":"param"}; return t
def conv(x,cin,cout,k,stride=1,pad=0):
    w=param([cout,cin,k,k]); y=name("c")
    ops.append({"name":y,"type":"Conv","inputs":[x,w],"outputs":[y],"attrs":{"strides":[stride,stride],"pads":[pad]*4}}); return y
def bnrelu(x,c):
    s=param([c]); b=param([c]); y=name("bn"); r=name("r")
    ops.append({"name":y,"type":"BatchNormalization","inputs":[x,s,b],"outputs":[y],"attrs":{"training_mode":1}})
    ops.append({"name":r,"type":"Relu","inputs":[y],"outputs":[r]}); return r
def concat(fs):
    fs=list(fs)
    while len(fs)>1:
        cat=name("cat"); ops.append({"name":cat,"type":"Concat","inputs":fs[:5],"outputs":[cat],"attrs":{"axis":1}}); fs=[cat]+fs[5:]
    return fs[0]
x=conv("x",3,64,7,2,3); x=bnrelu(x,64)
y=name("mp"); ops.append({"name":y,"type":"MaxPool","inputs":[x],"outputs":[y],"attrs":{"kernel_shape":[3,3],"strides":[2,2],"pads":[1,1,1,1]}}); x=y
c=64
for bi,L in enumerate(blocks):
    feats=[x]
    for l in range(L):
        if len(feats)>1:
            inp=concat(feats)
        else: inp=feats[0]
        h=bnrelu(inp,c+l*growth); h=conv(h,c+l*growth,4*growth,1); h=bnrelu(h,4*growth); h=conv(h,4*growth,growth,3,1,1)
        feats.append(h)
    x=concat(feats); c=c+L*growth
    if bi<3:
        x=bnrelu(x,c); x=conv(x,c,c//2,1); c//=2
        y=name("ap"); ops.append({"name":y,"type":"AveragePool","inputs":[x],"outputs":[y],"attrs":{"kernel_shape":[2,2],"strides":[2,2]}}); x=y
x=bnrelu(x,c)
g=name("gap"); ops.append({"name":g,"type":"ReduceMean","inputs":[x],"outputs":[g],"attrs":{"axes":[2,3],"keepdims":0}})
w=param([c,1000]); f=name("fc"); ops.append({"name":f,"type":"MatMul","inputs":[g,w],"outputs":[f]})
ops.append({"name":"loss","type":"SoftmaxCrossEntropy","inputs":[f,"labels"],"outputs":["l"]})
print(json.dumps({"format":"planner.model/1","name":"densenet-like","tensors":T,"ops":ops,"outputs":["l"]}))
