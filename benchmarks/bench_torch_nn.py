#!/usr/bin/python3
"""torch.nn and torch.nn.functional in training graphs, as a user exports them:
each of about 100 small modules (one layer, activation, norm, pool, loss or
tensor operation around a Linear or a Conv) exported with torch.onnx.export
in training mode (TorchScript exporter, opset OPSET, no constant folding, a
symbolic batch), then `planner import --batch 4` (with --loss none where the
graph carries its loss or its output has no shape). Prints one line per
module (ok, the exporter's refusal, or the importer's message) and a count.
Needs Debian's python3-torch and python3-onnx (the tests do not: this is a
coverage survey, recorded in docs/benchmarks.md).

Usage: /usr/bin/python3 benchmarks/bench_torch_nn.py [BUILD_DIR] [OPSET]"""
import os
import subprocess
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("bench_torch_nn: needs Debian's python3-torch and python3-onnx")


class W(nn.Module):
    """f(self, *inputs) over the modules mods"""

    def __init__(s, f, mods=()):
        super().__init__()
        s.f = f
        s.m = nn.ModuleList(mods)

    def forward(s, *x):
        return s.f(s, *x)


B = 4
CASES = {
 'bilinear': (W(lambda s,x: s.m[0](x,x), [nn.Bilinear(16,16,8)]), [(B,16)]),
 'unfold2': (W(lambda s,x: s.m[0](F.unfold(x,3,padding=1).transpose(1,2)), [nn.Linear(27,8)]), [(B,3,8,8)]),
 'fold': (W(lambda s,x: F.fold(s.m[0](x).transpose(1,2), (8,8), 2, stride=2), [nn.Linear(16,12)]), [(B,16,16)]),
 'pixelshuffle': (W(lambda s,x: F.pixel_shuffle(s.m[0](x),2), [nn.Conv2d(3,12,3,padding=1)]), [(B,3,8,8)]),
 'pixelunshuffle': (W(lambda s,x: s.m[0](F.pixel_unshuffle(x,2)), [nn.Conv2d(12,4,3,padding=1)]), [(B,3,8,8)]),
 'channelshuffle': (W(lambda s,x: nn.ChannelShuffle(2)(s.m[0](x)), [nn.Conv2d(3,8,3,padding=1)]), [(B,3,8,8)]),
 'adaptivemax': (W(lambda s,x: nn.AdaptiveMaxPool2d((2,2))(s.m[0](x)).flatten(1), [nn.Conv2d(3,8,3)]), [(B,3,8,8)]),
 'adaptiveavg3': (W(lambda s,x: nn.AdaptiveAvgPool2d((3,3))(s.m[0](x)).flatten(1), [nn.Conv2d(3,8,3,padding=1)]), [(B,3,9,9)]),
 'upsample_bilinear_ac': (W(lambda s,x: F.interpolate(s.m[0](x), scale_factor=2, mode='bilinear', align_corners=True), [nn.Conv2d(3,4,3,padding=1)]), [(B,3,8,8)]),
 'convT_groups': (W(lambda s,x: s.m[0](x), [nn.ConvTranspose2d(4,8,3,stride=2,groups=2)]), [(B,4,8,8)]),
 'conv_dilated_groups': (W(lambda s,x: s.m[0](x), [nn.Conv2d(4,8,3,dilation=2,groups=4)]), [(B,4,12,12)]),
 'conv1d': (W(lambda s,x: s.m[0](x), [nn.Conv1d(4,8,5,padding=2)]), [(B,4,16)]),
 'conv3d': (W(lambda s,x: s.m[1](s.m[0](x)), [nn.Conv3d(2,4,3,padding=1), nn.BatchNorm3d(4)]), [(B,2,6,6,6)]),
 'transformer': (W(lambda s,x: s.m[0](x,x), [nn.Transformer(16,2,1,1,32,batch_first=True)]), [(B,5,16)]),
 'decoder': (W(lambda s,x: s.m[0](x,x), [nn.TransformerDecoder(nn.TransformerDecoderLayer(16,2,32,batch_first=True,norm_first=True),2)]), [(B,5,16)]),
 'mha_kdim': (W(lambda s,x: s.m[0](x, x[:, :, :8], x[:, :, 8:])[0], [nn.MultiheadAttention(16,2,kdim=8,vdim=8,batch_first=True)]), [(B,5,16)]),
 'glu': (W(lambda s,x: F.glu(s.m[0](x)), [nn.Linear(8,16)]), [(B,8)]),
 'logsigmoid': (W(lambda s,x: F.logsigmoid(s.m[0](x)), [nn.Linear(8,8)]), [(B,8)]),
 'softmin': (W(lambda s,x: F.softmin(s.m[0](x),dim=-1), [nn.Linear(8,8)]), [(B,8)]),
 'hardtanh_relu6': (W(lambda s,x: F.relu6(F.hardtanh(s.m[0](x),-2,2)), [nn.Linear(8,8)]), [(B,8)]),
 'cosine': (W(lambda s,x: F.cosine_similarity(s.m[0](x), s.m[1](x)), [nn.Linear(8,8), nn.Linear(8,8)]), [(B,8)]),
 'pairwise': (W(lambda s,x: F.pairwise_distance(s.m[0](x), s.m[1](x)), [nn.Linear(8,8), nn.Linear(8,8)]), [(B,8)]),
 'normalize': (W(lambda s,x: F.normalize(s.m[0](x),dim=-1), [nn.Linear(8,8)]), [(B,8)]),
 'lstmcell': (W(lambda s,x: s.m[0](x)[0], [nn.LSTMCell(8,16)]), [(B,8)]),
 'grucell': (W(lambda s,x: s.m[0](x), [nn.GRUCell(8,16)]), [(B,8)]),
 'rnncell': (W(lambda s,x: s.m[0](x), [nn.RNNCell(8,16)]), [(B,8)]),
 'std_var': (W(lambda s,x: s.m[0](x).std(-1) + s.m[0](x).var(0).sum(), [nn.Linear(8,8)]), [(B,8)]),
 'logsumexp': (W(lambda s,x: torch.logsumexp(s.m[0](x),-1), [nn.Linear(8,8)]), [(B,8)]),
 'norm': (W(lambda s,x: torch.norm(s.m[0](x),dim=-1) + torch.linalg.vector_norm(s.m[0](x),ord=3,dim=-1), [nn.Linear(8,8)]), [(B,8)]),
 'roll_flip': (W(lambda s,x: torch.roll(s.m[0](x),2,1) + torch.flip(s.m[0](x),[1]), [nn.Linear(8,8)]), [(B,8)]),
 'cumsum_cumprod': (W(lambda s,x: torch.cumsum(s.m[0](x),1) + torch.cumprod(s.m[0](x),1), [nn.Linear(8,8)]), [(B,8)]),
 'einsum3': (W(lambda s,x: torch.einsum('bi,bj,ij->b', s.m[0](x), x, s.m[1].weight), [nn.Linear(8,8), nn.Linear(8,8)]), [(B,8)]),
 'baddbmm': (W(lambda s,x: torch.baddbmm(s.m[0](x), s.m[0](x), s.m[0](x).transpose(1,2)), [nn.Linear(4,4)]), [(B,4,4)]),
 'clamp_tensor': (W(lambda s,x: torch.clamp(s.m[0](x), min=s.m[1](x)), [nn.Linear(8,8), nn.Linear(8,8)]), [(B,8)]),
 'gather_idx': (W(lambda s,x: torch.gather(s.m[0](x),1,torch.argsort(x,1)), [nn.Linear(8,8)]), [(B,8)]),
 'sort': (W(lambda s,x: torch.sort(s.m[0](x),1)[0], [nn.Linear(8,8)]), [(B,8)]),
 'index_select': (W(lambda s,x: torch.index_select(s.m[0](x),1,torch.tensor([0,2,4])), [nn.Linear(8,8)]), [(B,8)]),
 'embedding_pad': (W(lambda s,x: s.m[0]((x.abs()*10).long().clamp(0,9)).sum(1), [nn.Embedding(10,8,padding_idx=0)]), [(B,8)]),
 'embedding_maxnorm': (W(lambda s,x: s.m[0]((x.abs()*10).long().clamp(0,9)).sum(1), [nn.Embedding(10,8,max_norm=1.0)]), [(B,8)]),
 'cdist': (W(lambda s,x: torch.cdist(s.m[0](x), s.m[0](x)), [nn.Linear(8,8)]), [(B,5,8)]),
 'tril_mask': (W(lambda s,x: torch.tril(s.m[0](x)) , [nn.Linear(8,8)]), [(B,8,8)]),
 'sdpa': (W(lambda s,x: F.scaled_dot_product_attention(s.m[0](x),s.m[0](x),s.m[0](x),is_causal=True), [nn.Linear(8,8)]), [(B,2,5,8)]),
 'prelu_ch': (W(lambda s,x: s.m[1](s.m[0](x)), [nn.Conv2d(3,4,3), nn.PReLU(4)]), [(B,3,8,8)]),
 'instancenorm_affine': (W(lambda s,x: s.m[1](s.m[0](x)), [nn.Conv2d(3,4,3), nn.InstanceNorm2d(4,affine=True)]), [(B,3,8,8)]),
 'layernorm_nobias': (W(lambda s,x: s.m[0](x), [nn.LayerNorm(8, elementwise_affine=True)]), [(B,8)]),
 'maxpool_ceil': (W(lambda s,x: F.max_pool2d(s.m[0](x),3,2,ceil_mode=True), [nn.Conv2d(3,4,3)]), [(B,3,9,9)]),
 'avgpool_ceil_nopad': (W(lambda s,x: F.avg_pool2d(s.m[0](x),3,2,padding=1,ceil_mode=True,count_include_pad=False), [nn.Conv2d(3,4,3)]), [(B,3,9,9)]),
 'lppool1d': (W(lambda s,x: F.lp_pool1d(s.m[0](x),2,3), [nn.Conv1d(3,4,3)]), [(B,3,12)]),
 'softplus_beta': (W(lambda s,x: F.softplus(s.m[0](x),beta=2,threshold=5), [nn.Linear(8,8)]), [(B,8)]),
 'silu_mish_hswish': (W(lambda s,x: F.silu(s.m[0](x))+F.mish(s.m[0](x))+F.hardswish(s.m[0](x)), [nn.Linear(8,8)]), [(B,8)]),
 'tanhshrink_softshrink': (W(lambda s,x: F.tanhshrink(s.m[0](x))+F.softshrink(s.m[0](x)), [nn.Linear(8,8)]), [(B,8)]),
 'rrelu_eval': (W(lambda s,x: F.rrelu(s.m[0](x),training=False), [nn.Linear(8,8)]), [(B,8)]),
 'dropout2d': (W(lambda s,x: F.dropout2d(s.m[0](x),0.2,training=True), [nn.Conv2d(3,4,3)]), [(B,3,8,8)]),
 'alphadropout': (W(lambda s,x: F.alpha_dropout(s.m[0](x),0.2,training=True), [nn.Linear(8,8)]), [(B,8)]),
 'unflatten': (W(lambda s,x: s.m[0](x).unflatten(1,(2,4)).sum(2), [nn.Linear(8,8)]), [(B,8)]),
 'chunk_cat': (W(lambda s,x: torch.cat(list(reversed(s.m[0](x).chunk(4,1))),1), [nn.Linear(8,8)]), [(B,8)]),
 'repeat_interleave': (W(lambda s,x: s.m[0](x).repeat_interleave(2,1), [nn.Linear(8,8)]), [(B,8)]),
 'amax_amin': (W(lambda s,x: s.m[0](x).amax(1)+s.m[0](x).amin(1), [nn.Linear(8,8)]), [(B,8)]),
 'masked_fill_neg': (W(lambda s,x: s.m[0](x).masked_fill(x>0, float('-inf')).softmax(-1), [nn.Linear(8,8)]), [(B,8)]),
 'meshgrid_linspace': (W(lambda s,x: s.m[0](x) + torch.linspace(0,1,8), [nn.Linear(8,8)]), [(B,8)]),
 'topk': (W(lambda s,x: torch.topk(s.m[0](x),3,1)[0], [nn.Linear(8,8)]), [(B,8)]),
 'nll_loss': (W(lambda s,x: F.nll_loss(F.log_softmax(s.m[0](x),-1), torch.zeros(B,dtype=torch.long)), [nn.Linear(8,8)]), [(B,8)]),
 'mse_loss': (W(lambda s,x: F.mse_loss(s.m[0](x), x), [nn.Linear(8,8)]), [(B,8)]),
 'l1_smoothl1': (W(lambda s,x: F.l1_loss(s.m[0](x), x)+F.smooth_l1_loss(s.m[0](x), x), [nn.Linear(8,8)]), [(B,8)]),
 'bce_logits': (W(lambda s,x: F.binary_cross_entropy_with_logits(s.m[0](x), torch.sigmoid(x)), [nn.Linear(8,8)]), [(B,8)]),
 'kl_div': (W(lambda s,x: F.kl_div(F.log_softmax(s.m[0](x),-1), F.softmax(x,-1), reduction='batchmean'), [nn.Linear(8,8)]), [(B,8)]),
 'ce_smoothing': (W(lambda s,x: F.cross_entropy(s.m[0](x), torch.zeros(B,dtype=torch.long), label_smoothing=0.1), [nn.Linear(8,8)]), [(B,8)]),
 'lstm_proj': (W(lambda s,x: s.m[0](x)[0], [nn.LSTM(8,16,proj_size=4,batch_first=True)]), [(B,5,8)]),
 'gru_bi2': (W(lambda s,x: s.m[0](x)[0], [nn.GRU(8,16,num_layers=2,bidirectional=True,batch_first=True)]), [(B,5,8)]),
 'mha_attnmask': (W(lambda s,x: s.m[0](x,x,x,attn_mask=torch.triu(torch.full((5,5),float('-inf')),1))[0], [nn.MultiheadAttention(16,2,batch_first=True)]), [(B,5,16)]),
 'enc_padmask': (W(lambda s,x,m: s.m[0](x,src_key_padding_mask=m>0), [nn.TransformerEncoder(nn.TransformerEncoderLayer(16,2,32,batch_first=True),2)]), [(B,5,16),(B,5)]),
 'layernorm2d': (W(lambda s,x: s.m[0](x), [nn.LayerNorm([5,8])]), [(B,5,8)]),
 'one_hot': (W(lambda s,x: s.m[0](F.one_hot(x.argmax(-1),8).float()), [nn.Linear(8,4)]), [(B,8)]),
 'arange_pos': (W(lambda s,x: s.m[0](x) + s.m[1](torch.arange(x.shape[1])), [nn.Linear(8,8), nn.Embedding(16,8)]), [(B,5,8)]),
 'upsample_nearest': (W(lambda s,x: s.m[1](F.interpolate(s.m[0](x),scale_factor=2,mode='nearest')), [nn.Conv2d(3,4,3,padding=1), nn.Conv2d(4,2,3,padding=1)]), [(B,3,8,8)]),
 'adaptiveavg1d': (W(lambda s,x: F.adaptive_avg_pool1d(s.m[0](x),4), [nn.Conv1d(3,4,3)]), [(B,3,18)]),
 'embbag_max': (W(lambda s,x: s.m[0]((x.abs()*10).long().clamp(0,9)), [nn.EmbeddingBag(10,8,mode='max')]), [(B,6)]),
 'where_scalar': (W(lambda s,x: torch.where(x>0, s.m[0](x), torch.tensor(0.0)), [nn.Linear(8,8)]), [(B,8)]),
 'expand_as': (W(lambda s,x: s.m[0](x).mean(1,keepdim=True).expand_as(x) * x, [nn.Linear(8,8)]), [(B,8)]),
 'new_zeros_cat': (W(lambda s,x: torch.cat([s.m[0](x), x.new_zeros(x.shape[0],2)],1), [nn.Linear(8,8)]), [(B,8)]),
 'matmul_4d': (W(lambda s,x: s.m[0](x) @ s.m[0](x).transpose(-1,-2), [nn.Linear(8,8)]), [(B,2,5,8)]),
 'softmax_dim0': (W(lambda s,x: F.softmax(s.m[0](x),0), [nn.Linear(8,8)]), [(B,8)]),
 'log_softmax_mid': (W(lambda s,x: F.log_softmax(s.m[0](x),1), [nn.Linear(8,8)]), [(B,5,8)]),
 'sigmoid_mul_gate': (W(lambda s,x: s.m[0](x)*torch.sigmoid(s.m[1](x)), [nn.Linear(8,8),nn.Linear(8,8)]), [(B,8)]),
 'depthwise_sep': (W(lambda s,x: s.m[1](s.m[0](x)), [nn.Conv2d(8,8,3,padding=1,groups=8), nn.Conv2d(8,16,1)]), [(B,8,8,8)]),
 'convtranspose1d': (W(lambda s,x: s.m[0](x), [nn.ConvTranspose1d(4,8,4,stride=2,padding=1)]), [(B,4,8)]),
 'maxpool_indices_unpool': (W(lambda s,x: F.max_unpool2d(*F.max_pool2d(s.m[0](x),2,return_indices=True),2), [nn.Conv2d(3,4,3,padding=1)]), [(B,3,8,8)]),
 'batchnorm1d_seq': (W(lambda s,x: s.m[1](s.m[0](x).transpose(1,2)), [nn.Linear(8,8), nn.BatchNorm1d(8)]), [(B,5,8)]),
 'groupnorm1': (W(lambda s,x: s.m[1](s.m[0](x)), [nn.Conv2d(3,8,3), nn.GroupNorm(1,8)]), [(B,3,8,8)]),
 'erf_gelu_tanh': (W(lambda s,x: F.gelu(s.m[0](x),approximate='tanh'), [nn.Linear(8,8)]), [(B,8)]),
 'pow_tensor': (W(lambda s,x: torch.pow(s.m[0](x).abs()+1, x.abs()), [nn.Linear(8,8)]), [(B,8)]),
 'reciprocal_rsqrt': (W(lambda s,x: torch.rsqrt(s.m[0](x).abs()+1)+torch.reciprocal(s.m[0](x).abs()+1), [nn.Linear(8,8)]), [(B,8)]),
 'argmin_gather': (W(lambda s,x: s.m[0](x).gather(1, x.argmin(1,keepdim=True)), [nn.Linear(8,8)]), [(B,8)]),
 'scatter_add': (W(lambda s,x: torch.zeros(B,8).scatter_add(1,(x.abs()*7).long().clamp(0,7),s.m[0](x)), [nn.Linear(8,8)]), [(B,8)]),
 'index_put': (W(lambda s,x: (lambda y: y.index_put((torch.tensor([0,2]),), torch.ones(2,8)))(s.m[0](x)), [nn.Linear(8,8)]), [(B,8)]),
 'stack_unbind': (W(lambda s,x: torch.stack(list(s.m[0](x).unbind(1)),2), [nn.Linear(8,8)]), [(B,3,8)]),
 'var_mean': (W(lambda s,x: torch.var_mean(s.m[0](x),1)[0], [nn.Linear(8,8)]), [(B,8)]),
 'float64_cast': (W(lambda s,x: s.m[0](x).double().sum(-1).float(), [nn.Linear(8,8)]), [(B,8)]),
 'bool_mask_mul': (W(lambda s,x: s.m[0](x)*(x>0), [nn.Linear(8,8)]), [(B,8)]),
 'isin_like_eq': (W(lambda s,x: s.m[0](x)*(x.argmax(-1,keepdim=True)==torch.arange(8)).float(), [nn.Linear(8,8)]), [(B,8)]),
 'clamp_min': (W(lambda s,x: s.m[0](x).clamp_min(0.1).log(), [nn.Linear(8,8)]), [(B,8)]),
 'swish_hardsig': (W(lambda s,x: F.hardsigmoid(s.m[0](x))*s.m[0](x), [nn.Linear(8,8)]), [(B,8)]),
 'embedding_scale_grad': (W(lambda s,x: s.m[0]((x.abs()*10).long().clamp(0,9)).sum(1), [nn.Embedding(10,8,scale_grad_by_freq=True)]), [(B,6)]),
 'conv2d_padding_same': (W(lambda s,x: s.m[0](x), [nn.Conv2d(3,4,4,padding='same')]), [(B,3,8,8)]),
 'conv_reflect': (W(lambda s,x: s.m[0](x), [nn.Conv2d(3,4,3,padding=1,padding_mode='reflect')]), [(B,3,8,8)]),
 'conv_circular': (W(lambda s,x: s.m[0](x), [nn.Conv2d(3,4,3,padding=1,padding_mode='circular')]), [(B,3,8,8)]),
}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    opset = int(sys.argv[2]) if len(sys.argv) > 2 else 14
    planner = os.path.join(build, "planner")
    torch.manual_seed(0)
    counts = {"ok": 0, "export": 0, "import": 0}
    with tempfile.TemporaryDirectory() as t:
        for name, (mod, shapes) in CASES.items():
            mod.train()
            xs = tuple(torch.randn(*s) for s in shapes)
            names = ["x", "m"][:len(xs)]
            path = os.path.join(t, name + ".onnx")
            try:
                torch.onnx.export(mod, xs, path, opset_version=opset,
                                  training=torch.onnx.TrainingMode.TRAINING,
                                  do_constant_folding=False, input_names=names,
                                  dynamic_axes={n: {0: "batch"} for n in names})
            except Exception as e:  # the exporter's own refusal
                counts["export"] += 1
                print("%-24s export refused: %s" % (name, str(e).split("\n")[0][:110]))
                continue
            why = ""
            for extra in ([], ["--loss", "none"]):
                r = subprocess.run([planner, "import", path, "--batch", "4", "-o",
                                    os.path.join(t, name + ".json")] + extra,
                                   capture_output=True, text=True)
                if r.returncode == 0:
                    break
                why = r.stderr.split("; the importer knows")[0].strip()
            if r.returncode == 0:
                counts["ok"] += 1
                print("%-24s ok" % name)
            else:
                counts["import"] += 1
                print("%-24s import refused: %s" % (name, why[why.find("node"):][:160]))
    print("%d modules: %d imported, %d refused by the importer, %d refused by the exporter "
          "(opset %d, torch %s)" % (len(CASES), counts["ok"], counts["import"], counts["export"],
                                     opset, torch.__version__))


if __name__ == "__main__":
    main()
