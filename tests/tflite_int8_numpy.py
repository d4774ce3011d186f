"""TFLite's integer kernels in numpy, on aotc's fixed-point helpers (aot/frontend/tflite/quant.py).

The specification the C kernels of issue 29's int8 slice must meet: test_tflite.py checks each op
here bit for bit against LiteRT's reference kernels (BUILTIN_REF), op by op, on the interpreter's own
intermediate tensors. NHWC throughout, as TFLite's and CMSIS-NN's kernels are.
"""

from __future__ import annotations

import numpy as np

from aot.frontend.tflite.quant import activation_range, channel_multipliers, multiply_by_quantized_multiplier
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
