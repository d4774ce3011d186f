"""TFLite's integer kernels in numpy, on aotc's fixed-point helpers (aot/frontend/tflite/quant.py).

The specification the C kernels of issue 29's int8 slice must meet: tests/frontend/test_tflite.py checks each op
here bit for bit against LiteRT's reference kernels (BUILTIN_REF), op by op, on the interpreter's own
intermediate tensors. NHWC throughout, as TFLite's and CMSIS-NN's kernels are.
"""

from __future__ import annotations

import math

import numpy as np

from aot.frontend.tflite.quant import (
    ADD_LEFT_SHIFT,
    INT32_MAX,
    INT32_MIN,
    SOFTMAX_DIFF_BITS,
    activation_range,
    add_multipliers,
    channel_multipliers,
    mean_multiplier,
    mul_multiplier,
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    softmax_params,
)
from aot.frontend.tflite.reader import TflModel, TflOp

_SAME = 0


def _pad_before(size: int, k: int, s: int, d: int, out: int, padding: int) -> int:
    if padding != _SAME:
        return 0
    return max((out - 1) * s + (k - 1) * d + 1 - size, 0) // 2


def _requant(acc: np.ndarray, op: TflOp, m: TflModel, w_index: int) -> np.ndarray:
    x, w, y = (m.tensors[i] for i in (op.inputs[0], op.inputs[w_index], op.outputs[0]))
    mult, shift = channel_multipliers(float(x.quant.scale[0]), w.quant.scale, float(y.quant.scale[0]))
    if mult.size == 1:
        mult, shift = np.repeat(mult, acc.shape[-1]), np.repeat(shift, acc.shape[-1])
    # LiteRT's reference FULLY_CONNECTED rounds once, its conv and depthwise twice (aotc_tflite_int8.h)
    single = op.op == "FULLY_CONNECTED"
    out = multiply_by_quantized_multiplier(acc, mult, shift, single_rounding=single) + int(y.quant.zero_point[0])
    lo, hi = activation_range(getattr(op.options, "fusedActivationFunction", 0), float(y.quant.scale[0]),
                              int(y.quant.zero_point[0]), y.dtype)
    return np.clip(out, lo, hi).astype(y.dtype)


def _bias(op: TflOp, m: TflModel, k: int, channels: int) -> np.ndarray:
    if len(op.inputs) > k and op.inputs[k] >= 0:
        return m.tensors[op.inputs[k]].data.astype(np.int64)
    return np.zeros(channels, np.int64)


def fully_connected(op: TflOp, m: TflModel, x: np.ndarray) -> np.ndarray:
    w = m.tensors[op.inputs[1]].data.astype(np.int64)  # [out, in], symmetric: zero point 0
    xz = int(m.tensors[op.inputs[0]].quant.zero_point[0])
    acc = (x.reshape(-1, w.shape[1]).astype(np.int64) - xz) @ w.T + _bias(op, m, 2, w.shape[0])
    return _requant(acc, op, m, 1).reshape(m.tensors[op.outputs[0]].shape)


def _conv(op: TflOp, m: TflModel, x: np.ndarray, depthwise: bool) -> np.ndarray:
    o = op.options
    w = m.tensors[op.inputs[1]].data.astype(np.int64)  # conv [O, kh, kw, I]; depthwise [1, kh, kw, C*mult]
    y_shape = m.tensors[op.outputs[0]].shape
    n, h, wd, c = x.shape
    kh, kw = w.shape[1:3]
    dh, dw = o.dilationHFactor, o.dilationWFactor
    top = _pad_before(h, kh, o.strideH, dh, y_shape[1], o.padding)
    left = _pad_before(wd, kw, o.strideW, dw, y_shape[2], o.padding)
    xz = int(m.tensors[op.inputs[0]].quant.zero_point[0])
    xs = x.astype(np.int64) - xz  # out-of-bounds taps add nothing: padding is the zero point
    ph, pw = (y_shape[1] - 1) * o.strideH + (kh - 1) * dh + 1, (y_shape[2] - 1) * o.strideW + (kw - 1) * dw + 1
    padded = np.zeros((n, max(ph, h + top), max(pw, wd + left), c), np.int64)
    padded[:, top:top + h, left:left + wd] = xs
    acc = np.zeros(y_shape, np.int64)
    mult = w.shape[3] // c if depthwise else 1
    for i in range(kh):
        for j in range(kw):
            patch = padded[:, i * dh:i * dh + (y_shape[1] - 1) * o.strideH + 1:o.strideH,
                           j * dw:j * dw + (y_shape[2] - 1) * o.strideW + 1:o.strideW]
            if depthwise:
                acc += np.repeat(patch, mult, axis=3) * w[0, i, j]
            else:
                acc += patch @ w[:, i, j, :].T
    acc += _bias(op, m, 2, y_shape[3])
    return _requant(acc, op, m, 1)


def conv_2d(op: TflOp, m: TflModel, x: np.ndarray) -> np.ndarray:
    return _conv(op, m, x, depthwise=False)


def depthwise_conv_2d(op: TflOp, m: TflModel, x: np.ndarray) -> np.ndarray:
    return _conv(op, m, x, depthwise=True)


def _pool(op: TflOp, m: TflModel, x: np.ndarray, average: bool) -> np.ndarray:
    o = op.options
    y = m.tensors[op.outputs[0]]
    top = _pad_before(x.shape[1], o.filterHeight, o.strideH, 1, y.shape[1], o.padding)
    left = _pad_before(x.shape[2], o.filterWidth, o.strideW, 1, y.shape[2], o.padding)
    out = np.zeros(y.shape, np.int64)
    for oy in range(y.shape[1]):
        for ox in range(y.shape[2]):
            y0, x0 = oy * o.strideH - top, ox * o.strideW - left
            win = x[:, max(y0, 0):min(y0 + o.filterHeight, x.shape[1]),
                    max(x0, 0):min(x0 + o.filterWidth, x.shape[2])].astype(np.int64)
            if average:
                total, count = win.sum(axis=(1, 2)), win.shape[1] * win.shape[2]
                # rounded half away from zero, in C's truncating division
                out[:, oy, ox] = np.where(total > 0, (total + count // 2) // count,
                                          -((-total + count // 2) // count))
            else:
                out[:, oy, ox] = win.max(axis=(1, 2))
    lo, hi = activation_range(o.fusedActivationFunction, float(y.quant.scale[0]), int(y.quant.zero_point[0]),
                              y.dtype)
    return np.clip(out, lo, hi).astype(y.dtype)


def average_pool_2d(op: TflOp, m: TflModel, x: np.ndarray) -> np.ndarray:
    return _pool(op, m, x, average=True)


def max_pool_2d(op: TflOp, m: TflModel, x: np.ndarray) -> np.ndarray:
    return _pool(op, m, x, average=False)


KERNELS = {"FULLY_CONNECTED": fully_connected, "CONV_2D": conv_2d, "DEPTHWISE_CONV_2D": depthwise_conv_2d,
           "AVERAGE_POOL_2D": average_pool_2d, "MAX_POOL_2D": max_pool_2d}


# --- softmax: gemmlowp's fixed point, in TFLite's reference order ----------------------------------------
def _srdhm(a: int, b: int) -> int:
    return int(saturating_rounding_doubling_high_mul(np.int64(a), np.int64(b)))


def _rdbpot(x: int, e: int) -> int:
    return int(rounding_divide_by_pot(np.int64(x), np.int64(e)))


def _shl_sat(x: int, e: int) -> int:
    threshold = (1 << (31 - e)) - 1
    return INT32_MAX if x > threshold else INT32_MIN if x < -threshold else x << e


def _wrap(x: int) -> int:
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def _exp_quarter(a: int) -> int:
    """exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor series around -1/8."""
    x = _wrap(a + (1 << 28))
    x2 = _srdhm(x, x)
    x3 = _srdhm(x2, x)
    x4 = _srdhm(x2, x2)
    x4_over_4 = _rdbpot(x4, 2)
    poly = _rdbpot(_wrap(_srdhm(_wrap(x4_over_4 + x3), round((1 << 31) / 3)) + x2), 1)
    c = round(math.exp(-1 / 8) * (1 << 31))
    return _wrap(c + _srdhm(c, _wrap(x + poly)))


def _exp_negative(a: int) -> int:
    """exp(a) for a <= 0 with 5 integer bits (Q5.26) -> Q0.31."""
    frac = 31 - SOFTMAX_DIFF_BITS
    quarter = 1 << (frac - 2)
    a_mod = _wrap((a & (quarter - 1)) - quarter)
    result = _exp_quarter(_shl_sat(a_mod, SOFTMAX_DIFF_BITS))
    remainder = _wrap(a_mod - a)
    for exponent in range(-2, SOFTMAX_DIFF_BITS):
        if remainder & (1 << (frac + exponent)):
            result = _srdhm(result, round(math.exp(-(2.0 ** exponent)) * (1 << 31)))
    return INT32_MAX if a == 0 else result


def _reciprocal(x: int, integer_bits: int) -> tuple[int, int]:
    """(1 / x scaled into Q0.31, bits over unit) for a positive fixed-point x with `integer_bits`."""
    headroom = 32 - int(x).bit_length()
    over = integer_bits - headroom
    a = _wrap(((x << headroom) & 0xFFFFFFFF) - (1 << 31))
    s = a + INT32_MAX
    half = _wrap(int((s + (1 if s >= 0 else -1)) / 2))
    one_f2 = 1 << 29
    y = _wrap(round(48 / 17 * (1 << 29)) + _srdhm(half, round(-32 / 17 * (1 << 29))))
    for _ in range(3):
        e = _wrap(one_f2 - _srdhm(half, y))
        y = _wrap(y + _shl_sat(_srdhm(y, e), 2))
    return _shl_sat(y, 1), over


def softmax(op: TflOp, m: TflModel, x: np.ndarray) -> np.ndarray:
    xt, y = m.tensors[op.inputs[0]], m.tensors[op.outputs[0]]
    mult, shift, diff_min = softmax_params(float(op.options.beta), float(xt.quant.scale[0]))
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    out = np.empty(rows.shape, np.int64)
    for r, row in enumerate(rows):
        top = int(row.max())
        scaled = [(_srdhm(_wrap(int(v - top) << shift), mult) if v - top >= diff_min else None) for v in row]
        exps = [None if s is None else _exp_negative(s) for s in scaled]
        total = 0
        for e in exps:
            if e is not None:
                total = _wrap(total + _rdbpot(e, 12))
        recip, over = _reciprocal(total, 12)
        for k, e in enumerate(exps):
            out[r, k] = -128 if e is None else \
                min(max(_rdbpot(_srdhm(recip, e), over + 31 - 8) - 128, -128), 127)
    return out.reshape(y.shape).astype(y.dtype)


def mean(op: TflOp, m: TflModel, x: np.ndarray) -> np.ndarray:
    """MEAN over H and W of NHWC: the sum less the zero points, requantised once (double rounding)."""
    xt, y = m.tensors[op.inputs[0]], m.tensors[op.outputs[0]]
    count = x.shape[1] * x.shape[2]
    acc = x.astype(np.int64).sum(axis=(1, 2)) - int(xt.quant.zero_point[0]) * count
    mult, shift = mean_multiplier(float(xt.quant.scale[0]), float(y.quant.scale[0]), count)
    out = multiply_by_quantized_multiplier(acc, mult, shift, single_rounding=False) + int(y.quant.zero_point[0])
    return np.clip(out, -128, 127).astype(y.dtype).reshape(y.shape)


def _add_sub(op: TflOp, m: TflModel, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    (a, b), y = (m.tensors[i] for i in op.inputs[:2]), m.tensors[op.outputs[0]]
    m1, s1, m2, s2, mo, so = add_multipliers(float(a.quant.scale[0]), float(b.quant.scale[0]), float(y.quant.scale[0]))
    u = multiply_by_quantized_multiplier((x1.astype(np.int64) - int(a.quant.zero_point[0])) << ADD_LEFT_SHIFT, m1, s1,
                                         single_rounding=False)
    v = multiply_by_quantized_multiplier((x2.astype(np.int64) - int(b.quant.zero_point[0])) << ADD_LEFT_SHIFT, m2, s2,
                                         single_rounding=False)
    total = u + v if op.op == "ADD" else u - v
    out = multiply_by_quantized_multiplier(total, mo, so, single_rounding=False) + int(y.quant.zero_point[0])
    lo, hi = activation_range(op.options.fusedActivationFunction, float(y.quant.scale[0]), int(y.quant.zero_point[0]),
                              y.dtype)
    return np.clip(out, lo, hi).astype(y.dtype)


def _mul(op: TflOp, m: TflModel, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    (a, b), y = (m.tensors[i] for i in op.inputs[:2]), m.tensors[op.outputs[0]]
    mult, shift = mul_multiplier(float(a.quant.scale[0]), float(b.quant.scale[0]), float(y.quant.scale[0]))
    prod = (x1.astype(np.int64) - int(a.quant.zero_point[0])) * (x2.astype(np.int64) - int(b.quant.zero_point[0]))
    out = multiply_by_quantized_multiplier(prod, mult, shift, single_rounding=False) + int(y.quant.zero_point[0])
    lo, hi = activation_range(op.options.fusedActivationFunction, float(y.quant.scale[0]), int(y.quant.zero_point[0]),
                              y.dtype)
    return np.clip(out, lo, hi).astype(y.dtype)


# two-input ops: (op, model, first input, second input)
BINARY = {"ADD": _add_sub, "SUB": _add_sub, "MUL": _mul}
KERNELS["SOFTMAX"] = softmax
KERNELS["MEAN"] = mean


# --- DIV (issue 50): LiteRT's DivElementwise -------------------------------------------------------------
def div(x1: np.ndarray, x2: np.ndarray, zeros: tuple[int, int, int], mult: int, shift: int,
        clamp: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """LiteRT's DivElementwise of integer arrays x1 / x2 (broadcast), zeros (x1, x2, y): v2's reciprocal in Q0.31
    (GetReciprocal), v1 shifted by its redundant sign bits, requantised by (mult, shift), double rounding; and each
    element's final right shift. LiteRT's RoundingDivideByPOT is undefined past 31 (its x86 build masks the shift);
    this spec rounds there as the arithmetic defines, to 0 (or -1 for INT32_MIN / 2^32)."""
    v1 = x1.astype(np.int64) - zeros[0]
    v2 = x2.astype(np.int64) - zeros[1]
    v1, v2 = np.broadcast_arrays(np.where(v2 < 0, -v1, v1), np.abs(v2))
    table = {int(v): _reciprocal(int(v), 31) for v in np.unique(v2)}
    inv = np.vectorize(lambda v: table[int(v)][0], otypes=[np.int64])(v2)
    over = np.vectorize(lambda v: table[int(v)][1], otypes=[np.int64])(v2)
    u = np.where(v1 < 0, ~v1, v1)
    headroom = 31 - np.vectorize(lambda v: int(v).bit_length(), otypes=[np.int64])(u)
    q = saturating_rounding_doubling_high_mul(v1 << headroom, inv)
    e = over + headroom - shift
    p = saturating_rounding_doubling_high_mul(q, np.int64(mult))
    r = np.where(e > 31, np.where((e == 32) & (p == INT32_MIN), -1, 0),
                 rounding_divide_by_pot(p, np.minimum(e, 31)))
    return np.clip(r + zeros[2], *clamp), e


# --- L2_NORMALIZATION (issue 50): LiteRT's reference_integer_ops::L2Normalization -------------------------
def l2_normalization(x: np.ndarray, x_zero: int) -> np.ndarray:
    """int8 over the last axis: each row's sum of squares, its inverse square root (GetInvSqrtQuantizedMultiplierExp,
    quant.py inv_sqrt_multiplier), each x - x_zero requantised by it into the output's 1/128 scale (double
    rounding), clamped."""
    from aot.frontend.tflite.quant import inv_sqrt_multiplier

    v = x.astype(np.int64) - x_zero
    rows = v.reshape(-1, v.shape[-1])
    out = np.empty_like(rows)
    for r, row in enumerate(rows):
        mult, shift = inv_sqrt_multiplier(int((row * row).sum()))
        out[r] = multiply_by_quantized_multiplier(row, mult, shift + 7, single_rounding=False)
    return np.clip(out, -128, 127).astype(np.int8).reshape(x.shape)
