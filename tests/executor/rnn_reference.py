#!/usr/bin/env python3
"""Reference outputs of the recurrent-layer checks in test_exec.c
(recurrent_matches_references): PyTorch's nn.LSTM (bidirectional),
nn.GRU and nn.RNN, and ONNX's documented equations in numpy for what PyTorch
cannot export (GRU with linear_before_reset 0, a reverse layer). Inputs are
the formulas below; prints the C initialisers. Run with torch installed:
    python3 tests/executor/rnn_reference.py
"""
import numpy as np
import torch

S, N, I, H = 3, 2, 3, 2


def vals(n, a, m, scale):
    """n values ((k * a) % m - m // 2) * scale: the same formula as the test"""
    return np.array([((k * a) % m - m // 2) * scale for k in range(n)], dtype=np.float32)


def inputs(D, G):
    x = vals(S * N * I, 7, 11, 0.2).reshape(S, N, I)
    w = vals(D * G * H * I, 5, 13, 0.1).reshape(D, G * H, I)
    r = vals(D * G * H * H, 3, 7, 0.15).reshape(D, G * H, H)
    b = vals(D * 2 * G * H, 2, 9, 0.05).reshape(D, 2 * G * H)
    return x, w, r, b


def c_array(name, a):
    body = ", ".join("%.8gf" % v for v in a.reshape(-1))
    return "static const float %s[%d] = {%s};" % (name, a.size, body)


def torch_y(cell, x, w, r, b, perm, D):
    """Y [S, D, N, H] of PyTorch's layer with ONNX's weights (gate order
    permuted to PyTorch's)"""
    m = cell(I, H, bidirectional=D == 2)
    with torch.no_grad():
        for d in range(D):
            sfx = "_l0" + ("_reverse" if d else "")
            G = len(perm)
            order = np.concatenate([np.arange(g * H, (g + 1) * H) for g in perm])
            getattr(m, "weight_ih" + sfx).copy_(torch.tensor(w[d][order]))
            getattr(m, "weight_hh" + sfx).copy_(torch.tensor(r[d][order]))
            getattr(m, "bias_ih" + sfx).copy_(torch.tensor(b[d][:G * H][order]))
            getattr(m, "bias_hh" + sfx).copy_(torch.tensor(b[d][G * H:][order]))
        y, _ = m(torch.tensor(x))
    return y.numpy().reshape(S, N, D, H).transpose(0, 2, 1, 3)


def sig(v):
    return 1 / (1 + np.exp(-v))


def onnx_gru(x, w, r, b, lbr, reverse):
    """ONNX's GRU equations, one direction"""
    Wz, Wr, Wh = np.split(w[0], 3)
    Rz, Rr, Rh = np.split(r[0], 3)
    Wbz, Wbr, Wbh, Rbz, Rbr, Rbh = np.split(b[0], 6)
    h = np.zeros((N, H), np.float32)
    y = np.zeros((S, 1, N, H), np.float32)
    for t in (range(S - 1, -1, -1) if reverse else range(S)):
        xt = x[t]
        z = sig(xt @ Wz.T + h @ Rz.T + Wbz + Rbz)
        rr = sig(xt @ Wr.T + h @ Rr.T + Wbr + Rbr)
        if lbr:
            n = np.tanh(xt @ Wh.T + rr * (h @ Rh.T + Rbh) + Wbh)
        else:
            n = np.tanh(xt @ Wh.T + (rr * h) @ Rh.T + Rbh + Wbh)
        h = (1 - z) * n + z * h
        y[t, 0] = h
    return y


def onnx_lstm(x, w, r, reverse):
    """ONNX's LSTM equations (gates i, o, f, c), one direction, no bias"""
    Wi, Wo, Wf, Wc = np.split(w[0], 4)
    Ri, Ro, Rf, Rc = np.split(r[0], 4)
    h = np.zeros((N, H), np.float32)
    c = np.zeros((N, H), np.float32)
    y = np.zeros((S, 1, N, H), np.float32)
    for t in (range(S - 1, -1, -1) if reverse else range(S)):
        xt = x[t]
        i = sig(xt @ Wi.T + h @ Ri.T)
        f = sig(xt @ Wf.T + h @ Rf.T)
        cc = np.tanh(xt @ Wc.T + h @ Rc.T)
        c = f * c + i * cc
        o = sig(xt @ Wo.T + h @ Ro.T)
        h = o * np.tanh(c)
        y[t, 0] = h
    return y


x, w, r, b = inputs(2, 4)
print(c_array("lstm_bi_y", torch_y(torch.nn.LSTM, x, w, r, b, [0, 2, 3, 1], 2)))
x, w, r, b = inputs(1, 3)
print(c_array("gru_y", torch_y(torch.nn.GRU, x, w, r, b, [1, 0, 2], 1)))
print(c_array("gru_lbr0_reverse_y", onnx_gru(x, w, r, b, 0, True)))
x, w, r, b = inputs(1, 1)
print(c_array("rnn_y", torch_y(torch.nn.RNN, x, w, r, b, [0], 1)))
x, w, r, b = inputs(1, 4)
print(c_array("lstm_reverse_y", onnx_lstm(x, w, r, True)))
