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


def add_s8_exact(x1: np.ndarray, x2: np.ndarray, zeros: tuple[int, int, int], m: tuple[int, ...],
                 subtract: bool = False) -> np.ndarray:
    """LiteRT's reference int8 ADD/SUB of x1 and x2 (broadcast), before its clamp: each input less its zero point
    (zeros: x1's, x2's, then y's), shifted left by 20 and rescaled (double rounding), the sum rescaled to y's scale;
    m: add_multipliers' six (m1, s1, m2, s2, m_out, s_out). The C kernels' add_one."""
    m1, s1, m2, s2, mo, so = m
    a = multiply_by_quantized_multiplier((np.asarray(x1, np.int64) - zeros[0]) << 20, m1, s1, False)
    b = multiply_by_quantized_multiplier((np.asarray(x2, np.int64) - zeros[1]) << 20, m2, s2, False)
    return multiply_by_quantized_multiplier(a - b if subtract else a + b, mo, so, False) + zeros[2]


def residual_linear(zeros: tuple[int, int, int], m: tuple[int, ...], y_range: tuple[int, int],
                    conv_range: tuple[int, int], conv_x1: bool, subtract: bool = False) -> tuple[int, int, int, int]:
    """A conv's fused residual ADD as one linear form, (a v + b e + c) >> sh, clamped to y_range, for the conv's
    outputs v over conv_range and the residual's bytes e over int8 (issue 64: the ADD's three requantisations were
    13 % of an int8 ResNet-50's time, the form is two multiplies, two adds and a shift): (a, b, c, sh), checked
    here against add_s8_exact on every pair (and that no int32 overflows), or (0, 0, 0, 0) where no such form of
    the tried ones is exact. a and b are the ADD's real scales times 2^sh, rounded, or a step or two off; c the
    least that fits every pair, where one does."""
    v = np.arange(conv_range[0], conv_range[1] + 1, dtype=np.int64)[:, None]
    e = np.arange(-128, 128, dtype=np.int64)[None, :]
    v, e = np.broadcast_arrays(v, e)
    x1, x2 = (v, e) if conv_x1 else (e, v)
    lo, hi = y_range
    y = np.clip(add_s8_exact(x1, x2, zeros, m, subtract), lo, hi)
    free_lo, free_hi = y <= lo, y >= hi  # clamped: only one side of the form's value matters
    m1, s1, m2, s2, mo, so = m
    real = lambda mult, shift: float(mult) * 2.0 ** (shift - 31)  # noqa: E731
    k1 = real(m1, s1) * real(mo, so) * 2.0 ** 20
    k2 = real(m2, s2) * real(mo, so) * 2.0 ** 20 * (-1.0 if subtract else 1.0)
    kv, ke = (k1, k2) if conv_x1 else (k2, k1)
    for sh in range(24, 7, -1):
        a0, b0 = round(kv * 2 ** sh), round(ke * 2 ** sh)
        for da in (0, -1, 1, -2, 2):
            for db in (0, -1, 1, -2, 2):
                a, b = a0 + da, b0 + db
                t = a * v + b * e
                c_lo = int(np.where(free_lo, INT32_MIN, (y << sh) - t).max())
                c_hi = int(np.where(free_hi, INT32_MAX, ((y + 1) << sh) - 1 - t).min())
                if c_lo > c_hi or abs(c_lo) > INT32_MAX:
                    continue
                # (the C form wraps in int32 as it goes: no term nor partial sum may leave it, to be plain)
                parts = (a * v, b * e, t, t + c_lo)
                if max(abs(a), abs(b)) > INT32_MAX or max(int(np.abs(q).max()) for q in parts) > INT32_MAX:
                    continue
                got = np.clip((t + c_lo) >> sh, lo, hi)
                if np.array_equal(got, y):
                    return a, b, c_lo, sh
    return 0, 0, 0, 0
