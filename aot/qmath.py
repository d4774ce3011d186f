"""The arithmetic of quantized tensors as onnxruntime computes it, at compile time: shared by the
frontend, the QDQ rewrite and the int8 kernels' constants (scales, tables, folded biases)."""

from __future__ import annotations

import numpy as np

INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535),
             "int32": (-(2 ** 31), 2 ** 31 - 1)}


def dequantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int) -> np.ndarray:
    """(x - zero_point) * scale in float32, per-tensor or along `axis`, as the spec defines it."""
    shape = [1] * x.ndim
    if scale.size > 1:
        shape[axis] = scale.size
    s = np.asarray(scale, np.float32).reshape(shape if scale.size > 1 else ())
    z = np.asarray(zero_point, np.int64).reshape(shape if scale.size > 1 else ())
    return ((x.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


def quantize(x: np.ndarray, scale: float, zero_point: int, dtype: str) -> np.ndarray:
    """onnxruntime's QuantizeLinear on float32: x / scale (a division), rounded half to even, plus
    the zero point, saturated; NaN becomes the zero point."""
    lo, hi = INT_RANGE[dtype]
    q = np.rint(np.asarray(x, np.float32) / np.float32(scale)).astype(np.float64) + zero_point
    return np.clip(np.nan_to_num(q, nan=zero_point), lo, hi).astype(dtype)


def requant_scale(x_scale: float, w_scale: np.ndarray, y_scale: float) -> np.ndarray:
    """x_scale * w_scale / y_scale in float32, in onnxruntime's order (QLinearConv's output_scales)."""
    return (np.float32(x_scale) * np.asarray(w_scale, np.float32).reshape(-1)) / np.float32(y_scale)


def lookup_table(op: str, attrs: dict, in_dtype: str, x_scale: float, x_zero: int, y_scale: float, y_zero: int,
                 out_dtype: str, opset: int) -> np.ndarray | None:
    """Q(f(DQ(v))) for every 8-bit v in order, f being the float op evaluated by onnx's reference
    implementation (the float op's own answer on each input); None if f cannot be evaluated."""
    from onnx import helper

    from aot.ir.evaluate import evaluate_node

    if in_dtype not in ("int8", "uint8"):
        return None
    lo, hi = INT_RANGE[in_dtype]
    values = np.arange(lo, hi + 1).astype(in_dtype)
    floats = dequantize(values, np.float32(x_scale), np.int64(x_zero), 0)
    proto = helper.make_node(op, ["x"], ["y"], **attrs)
    try:
        (y,) = evaluate_node(proto, [floats], [helper.make_opsetid("", max(opset, 14 if op == "HardSwish" else 13))])
    except Exception:
        return None
    return quantize(y.astype(np.float32), y_scale, y_zero, out_dtype)


def softmax_table(x_scale: float, n: int, signed: bool) -> np.ndarray:
    """onnxruntime's QLinearSoftmax table: round(qscale * exp((i - 255) * x_scale)) as uint32 for the
    256 distances i - 255 of an input from its row's maximum, qscale keeping a row's sum of n entries
    within 32 bits; an int8 input's entries sit at index (i - 128) mod 256."""
    qscale = min(float(2 ** 32 - 1) / float(n), float(0x7FFFFF))
    i = np.arange(256, dtype=np.float64)
    values = np.rint(qscale * np.exp((i - 255.0) * float(np.float32(x_scale)))).astype(np.uint32)
    if not signed:
        return values
    table = np.empty(256, np.uint32)
    table[(np.arange(256) - 128) % 256] = values
    return table


def softmax_output_scale(y_scale: float) -> int:
    """QLinearSoftmax's output multiplier: (uint32)(1.0f / y_scale), a float division truncated."""
    return int(np.float32(1.0) / np.float32(y_scale))


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """C's fmaf elementwise: a * b + c on float32 with one rounding. The product is exact in
    float64; the sum is rounded to float64 by round-to-odd (the error of the float64 sum, found
    by Knuth's TwoSum, pushes an even result one unit toward it), which then rounds correctly to
    float32 (53 >= 24 + 2 bits)."""
    with np.errstate(all="ignore"):
        p = np.asarray(a, np.float32).astype(np.float64) * np.asarray(b, np.float32).astype(np.float64)
        c64 = np.asarray(c, np.float32).astype(np.float64)
        s = np.asarray(p + c64, np.float64)
        bb = s - p
        e = (p - (s - bb)) + (c64 - bb)
        even = (s.view(np.int64) & 1) == 0
        fix = (e != 0) & even & np.isfinite(s) & (s != 0)
        s = np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32)


def qadd_constants(a_scale: float, a_zero: int, b_scale: float, b_zero: int, y_scale: float,
                   y_zero: int, scalar_a: bool = False) -> tuple[np.float32, np.float32, np.float32]:
    """QLinearAdd as onnxruntime's AVX2 kernel (MlasQLinearAddKernelAvx2Helper) computes it:
    y = round(fma(a, a_mult, fma(b, b_mult, bias))), a_mult = a_scale / y_scale, b_mult = b_scale / y_scale,
    and bias = y_zero - fma(a_mult, a_zero, b_mult * b_zero): gcc contracts the C++ expression
    `ScaleRatio_AC * ZeroPointA + ScaleRatio_BC * ZeroPointB` to that fma (the unfused sum moved 3 of
    25,088 outputs of a ResNet-18 add by one LSB). When a is the broadcast scalar, onnxruntime swaps the
    operands, so bias = y_zero - fma(b_mult, b_zero, a_mult * a_zero) and y = round(fma(b, b_mult,
    fma(a, a_mult, bias))). All float32; returns (a_mult, b_mult, bias)."""
    a_mult, b_mult = np.float32(a_scale) / np.float32(y_scale), np.float32(b_scale) / np.float32(y_scale)
    za, zb = np.float32(a_zero), np.float32(b_zero)
    zero_part = fma32(b_mult, zb, a_mult * za) if scalar_a else fma32(a_mult, za, b_mult * zb)
    return a_mult, b_mult, np.float32(np.float32(y_zero) - zero_part)


def global_avgpool_scale(x_scale: float, y_scale: float, size: int) -> np.float32:
    """QLinearGlobalAveragePool's requantisation scale, x_scale / (y_scale * size) in float32 in that
    order (onnxruntime's MLAS); the sums have x_zero * size taken off."""
    return np.float32(x_scale) / (np.float32(y_scale) * np.float32(size))


# TFLite's integer requantisation (LiteRT's reference kernels), used by the .tflite frontend and by the passes that
# fold int8 ops into tables
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def saturating_rounding_doubling_high_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(a * b * 2) >> 32 rounded to nearest, ties away from zero; INT32_MIN * INT32_MIN saturates."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    high = np.where(s >= 0, s >> 31, -((-s) >> 31))  # C division: truncation toward zero
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, high).astype(np.int64)


def rounding_divide_by_pot(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """x / 2^exponent rounded to nearest, ties away from zero."""
    x, exponent = np.asarray(x, np.int64), np.asarray(exponent, np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x: np.ndarray, multiplier: np.ndarray, shift: np.ndarray,
                                     single_rounding: bool = True) -> np.ndarray:
    """TFLite's requantisation of an int32 accumulator: x * multiplier * 2^(shift - 31), rounded.

    single_rounding: one 64-bit product, rounded half up by one arithmetic shift. Otherwise double
    rounding: RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2^left, m), right). LiteRT's
    reference kernels round FULLY_CONNECTED once and conv/depthwise twice (measured bit for bit:
    runtime_c/kernels/tflite_int8/aotc_tflite_int8.h)."""
    shift = np.asarray(shift, np.int64)
    if single_rounding:
        total = 31 - shift
        return (np.asarray(x, np.int64) * np.asarray(multiplier, np.int64) + (np.int64(1) << (total - 1))) >> total
    left, right = np.maximum(shift, 0), np.maximum(-shift, 0)
    x = (np.asarray(x, np.int64) << left).astype(np.int32).astype(np.int64)  # int32 wrap, as in C++
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), right)
