"""The converter's int8 UNIDIRECTIONAL_SEQUENCE_LSTM (int8 input, weights and hidden state; int16 gates
and cell state; LiteRT's "8x8_16" integer LSTM) in plain Python, step by step: the specification an
aotc kernel for it must meet (issue 29). tests/frontend/test_tflite.py checks it bit for bit against LiteRT's
reference kernels on the interpreter's own tensors; aotc itself still refuses the op.

Written from LiteRT's definitions (lstm.cc's parameters, lstm_eval.cc's step, gemmlowp's int16
fixed-point logistic and tanh), for the variant the converter writes for a Keras LSTM: no CIFG, no
peephole, no layer normalisation, no projection.
"""

from __future__ import annotations

import numpy as np

from aot.frontend.tflite.quant import multiply_by_quantized_multiplier, quantize_multiplier


# --- gemmlowp's FixedPoint<int16_t, I> on Python ints -----------------------------------------------
def _wrap(x: int) -> int:
    return ((x + 32768) & 0xFFFF) - 32768


def _sat(x: int) -> int:
    return min(max(x, -32768), 32767)


def _mul(a: int, b: int) -> int:
    """SaturatingRoundingDoublingHighMul on int16."""
    if a == b == -32768:
        return 32767
    s = a * b + ((1 << 14) if a * b >= 0 else 1 - (1 << 14))
    return s >> 15 if s >= 0 else -((-s) >> 15)


def _rdbpot(x: int, e: int) -> int:
    mask = (1 << e) - 1
    return (x >> e) + ((x & mask) > (mask >> 1) + (x < 0))


def _shl(x: int, e: int) -> int:
    return _sat(x << e)


def _const(c32: int) -> int:
    """An int32 fixed-point constant as its int16 version (gemmlowp's RescaleConstantInitializer)."""
    return _rdbpot(c32, 16)


def _exp_quarter(a: int) -> int:
    """exp(a) for a in [-1/4, 0), Q0.15: Taylor series around -1/8."""
    ct, third = _const(1895147668), _const(715827883)
    x = _wrap(a + _const(1 << 28))
    x2 = _mul(x, x)
    x3, x4 = _mul(x2, x), _mul(x2, x2)
    t = _rdbpot(_wrap(_mul(_wrap(_rdbpot(x4, 2) + x3), third) + x2), 1)
    return _sat(ct + _mul(ct, _wrap(x + t)))


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401),
           (4, 242))


def _exp_negative(a: int, integer_bits: int) -> int:
    """exp(a) for a <= 0 in Q(integer_bits).(15 - integer_bits) -> Q0.15."""
    assert integer_bits <= 5
    frac = 15 - integer_bits
    quarter = 1 << (frac - 2)
    amq = _wrap((a & (quarter - 1)) - quarter)
    result = _exp_quarter(_shl(amq, integer_bits))
    remainder = _wrap(amq - a)
    for exponent, c in _BARREL:
        if integer_bits > exponent and remainder & (1 << (frac + exponent)):
            result = _mul(result, _const(c))
    return 32767 if a == 0 else result


def _newton(a: int) -> int:
    """2 / (1 + a) for a in [0, 1], Q2.13: three Newton-Raphson steps from 48/17 - 32/17 x."""
    s = a + 32767
    half = (s + (1 if s >= 0 else -1)) // 2 if s >= 0 else -((-s + 1) // 2)
    x = _wrap(_const(1515870810) + _mul(half, _const(-1010580540)))
    for _ in range(3):
        x = _wrap(x + _shl(_mul(x, _wrap(8192 - _mul(half, x))), 2))
    return x


def logistic(a: int, integer_bits: int = 3) -> int:
    if a == 0:
        return _const(1 << 30)
    positive = a > 0
    r = _shl(_newton(_exp_negative(_wrap(-a) if positive else a, integer_bits)), 1)
    return r if positive else _wrap(32767 - r)


def tanh(a: int, integer_bits: int) -> int:
    if a == 0:
        return 0
    negative = a < 0
    t = _shl(_wrap(_newton(_exp_negative(a if negative else _wrap(-a), integer_bits + 1)) - 8192), 2)
    return _wrap(-t) if negative else t


# --- the LSTM ---------------------------------------------------------------------------------------
def _scale(t) -> float:
    return float(np.float32(t.quantization.scale[0]))


def lstm_int8(model, op_index: int, x: np.ndarray, hidden_zp_sign: int = 1) -> np.ndarray:
    """Outputs (batch, time, n_output) of the subgraph-0 operator `op_index` of a schema ModelT, for
    int8 input x (batch, time, n_input), from zero state (the interpreter's state before its first
    invoke)."""
    sg = model.subgraphs[0]
    op = sg.operators[op_index]
    t = sg.tensors
    buf = model.buffers

    def data(i, dtype):
        return np.frombuffer(bytes(buf[t[i].buffer].data), dtype).reshape(t[i].shape).astype(np.int64)

    opts = op.builtinOptions
    x_scale, x_zp = _scale(t[op.inputs[0]]), int(t[op.inputs[0]].quantization.zeroPoint[0])
    h_t, c_t = t[op.inputs[18]], t[op.inputs[19]]
    h_scale, h_zp = _scale(h_t), int(h_t.quantization.zeroPoint[0])
    c_scale = _scale(c_t)
    c_log2 = round(float(np.log2(c_scale)))
    hidden = t[op.intermediates[4]]
    f32 = np.float32
    gates = []
    for g in range(4):  # input, forget, cell, output
        wx, wh = data(op.inputs[1 + g], np.int8), data(op.inputs[5 + g], np.int8)
        bias = data(op.inputs[12 + g], np.int32)
        m_x = quantize_multiplier(float(f32(f32(_scale(t[op.inputs[1 + g]])) * f32(x_scale)) / f32(2.0 ** -12)))
        m_h = quantize_multiplier(float(f32(f32(_scale(t[op.inputs[5 + g]])) * f32(h_scale)) / f32(2.0 ** -12)))
        gates.append((wx, wh, bias - x_zp * wx.sum(1), -h_zp * wh.sum(1), m_x, m_h))
    m_hid = quantize_multiplier(float(f32(2.0 ** -15 / float(f32(_scale(hidden))) * 2.0 ** -15)))
    hid_zp = int(hidden.quantization.zeroPoint[0])
    clip = int(min(max(f32(opts.cellClip) / f32(c_scale), -32768.0), 32767.0)) if opts.cellClip > 0 else 0
    batch, steps, _ = x.shape
    n_cell = gates[0][0].shape[0]
    out = np.zeros((batch, steps, n_cell), np.int8)
    for b in range(batch):
        h = np.zeros(n_cell, np.int64) + h_zp
        c = [0] * n_cell
        for s in range(steps):
            xs = x[b, s].astype(np.int64)
            act = []
            for g, (wx, wh, bx, bh, m_x, m_h) in enumerate(gates):
                ax = multiply_by_quantized_multiplier(wx @ xs + bx, m_x[0], m_x[1], single_rounding=False)
                ah = multiply_by_quantized_multiplier(wh @ h + bh, m_h[0], m_h[1], single_rounding=False)
                pre = [_sat(_sat(int(u)) + int(v)) for u, v in zip(ax, ah, strict=True)]
                act.append([tanh(v, 3) if g == 2 else logistic(v) for v in pre])
            i, f, g_, o = act
            for k in range(n_cell):
                # CwiseMul casts each product to int16 (wrapping), CwiseAdd saturates
                v = _sat(_wrap(_rdbpot(f[k] * c[k], 15)) + _wrap(_rdbpot(i[k] * g_[k], 30 + c_log2)))
                c[k] = min(max(v, -clip), clip) if clip else v
            # LiteRT's ApplyTanh has integer bits 0..6 only: with a cell scale below 2^-15 it writes nothing
            # and the buffer it should fill, the input gate's, is read as tanh(cell)
            th = [tanh(v, 15 + c_log2) for v in c] if 15 + c_log2 >= 0 else i
            prod = np.array([o[k] * th[k] for k in range(n_cell)], np.int64)
            hv = multiply_by_quantized_multiplier(prod, m_hid[0], m_hid[1], single_rounding=False) \
                + hidden_zp_sign * hid_zp
            h = np.clip(hv, -128, 127)
            out[b, s] = h
    return out
