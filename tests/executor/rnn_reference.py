#!/usr/bin/env python3
"""Reference outputs of the recurrent-layer checks in test_exec.c
(recurrent_matches_references): PyTorch's nn.LSTM (bidirectional),
nn.GRU and nn.RNN, and ONNX's documented equations in numpy for what PyTorch
cannot export (GRU with linear_before_reset 0, a reverse layer, an LSTM's
cell state of every step, checked against PyTorch's c_n). Inputs are
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


def torch_y(cell, x, w, r, b, perm, D, state=None):
    """Y [S, D, N, H] of PyTorch's layer with ONNX's weights (gate order
    permuted to PyTorch's), from the initial state given (h0, or (h0, c0)
    for an LSTM; [D, N, H] each)"""
    return torch_run(cell, x, w, r, b, perm, D, state)[0]


def torch_run(cell, x, w, r, b, perm, D, state=None):
    """torch_y's Y, and the layer's final state(s) as PyTorch returns them"""
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
        if state is None:
            y, last = m(torch.tensor(x))
        elif isinstance(state, tuple):
            y, last = m(torch.tensor(x), tuple(torch.tensor(v) for v in state))
        else:
            y, last = m(torch.tensor(x), torch.tensor(state))
    return y.numpy().reshape(S, N, D, H).transpose(0, 2, 1, 3), last


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


def onnx_lstm_cells(x, w, r, b, h0, c0, D):
    """ONNX's LSTM equations with bias and initial states, both directions:
    the cell state of every step, [S, D, N, H] (what cell_states gives)"""
    cells = np.zeros((S, D, N, H), np.float32)
    for d in range(D):
        Wi, Wo, Wf, Wc = np.split(w[d], 4)
        Ri, Ro, Rf, Rc = np.split(r[d], 4)
        bw, br = np.split(b[d], 2)
        bi, bo, bf, bc = np.split(bw + br, 4)
        h, c = h0[d].copy(), c0[d].copy()
        for t in (range(S - 1, -1, -1) if d == 1 else range(S)):
            xt = x[t]
            i = sig(xt @ Wi.T + h @ Ri.T + bi)
            f = sig(xt @ Wf.T + h @ Rf.T + bf)
            cc = np.tanh(xt @ Wc.T + h @ Rc.T + bc)
            c = f * c + i * cc
            o = sig(xt @ Wo.T + h @ Ro.T + bo)
            h = o * np.tanh(c)
            cells[t, d] = c
    return cells


x, w, r, b = inputs(2, 4)
print(c_array("lstm_bi_y", torch_y(torch.nn.LSTM, x, w, r, b, [0, 2, 3, 1], 2)))
# given initial states: Y (PyTorch's) and every step's cells (the equations'
# in numpy, whose last steps must be PyTorch's c_n)
h0 = vals(2 * N * H, 11, 13, 0.1).reshape(2, N, H)
c0 = vals(2 * N * H, 13, 17, 0.1).reshape(2, N, H)
y, (hn, cn) = torch_run(torch.nn.LSTM, x, w, r, b, [0, 2, 3, 1], 2, (h0, c0))
cells = onnx_lstm_cells(x, w, r, b, h0, c0, 2)
assert np.allclose(cells[S - 1, 0], cn.numpy()[0], atol=1e-6)
assert np.allclose(cells[0, 1], cn.numpy()[1], atol=1e-6)
print(c_array("lstm_bi_state_y", y))
print(c_array("lstm_bi_state_cells", cells))
x, w, r, b = inputs(1, 3)
print(c_array("gru_y", torch_y(torch.nn.GRU, x, w, r, b, [1, 0, 2], 1)))
print(c_array("gru_state_y", torch_y(torch.nn.GRU, x, w, r, b, [1, 0, 2], 1,
                                     vals(N * H, 11, 13, 0.1).reshape(1, N, H))))
print(c_array("gru_lbr0_reverse_y", onnx_gru(x, w, r, b, 0, True)))
x, w, r, b = inputs(1, 1)
print(c_array("rnn_y", torch_y(torch.nn.RNN, x, w, r, b, [0], 1)))
x, w, r, b = inputs(1, 4)
print(c_array("lstm_reverse_y", onnx_lstm(x, w, r, True)))
