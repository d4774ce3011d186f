"""TFLite quantisation parameters: per-tensor or per-channel scale and zero point."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from aot.errors import AotcError
from aot.qmath import (  # noqa: F401  (re-exported: TFLite's requantisation, shared with the passes)
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)


@dataclass(frozen=True)
class QuantParams:
    scale: np.ndarray  # float32, one per channel (length 1: per tensor)
    zero_point: np.ndarray  # int64, as many as scale
    axis: int  # the quantized dimension; meaningful only per channel

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


def quant_params(q: Any, rank: int) -> QuantParams | None:
    """The tensor's parameters, or None for an unquantized tensor. Older files (person_detect) set a
    quantized_dimension on per-tensor parameters: it is ignored there, as TFLM ignores it."""
    if q is None or q.scale is None or len(q.scale) == 0:
        return None
    scale = np.asarray(q.scale, dtype=np.float32)
    zero = np.asarray(q.zeroPoint if q.zeroPoint is not None else [0] * scale.size, dtype=np.int64)
    if zero.size == 0:  # an empty zero_point vector: 0, as an absent one
        zero = np.zeros(scale.size, np.int64)
    if zero.size == 1 and scale.size > 1:
        zero = np.repeat(zero, scale.size)
    axis = int(q.quantizedDimension) if scale.size > 1 else 0
    return QuantParams(scale, zero, min(axis, max(rank - 1, 0)))


# --- TFLite's fixed-point requantisation (the arithmetic its reference kernels and TFLM use) ---------
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
_QRANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


def quantize_multiplier(real: float) -> tuple[int, int]:
    """A real multiplier as (int32 multiplier in [2^30, 2^31), shift): real = m * 2^(shift - 31).
    The fraction is rounded half away from zero, as TFLite's TfLiteRound (std::round)."""
    if real == 0.0:
        return 0, 0
    if not math.isfinite(real):  # scales each finite, but too far apart for their ratio (1e30 / 1e-30)
        raise AotcError(f"a requantisation multiplier of {real} (a ratio of the quantization scales) is not finite")
    frac, shift = math.frexp(real)
    q = int(math.floor(abs(frac) * (1 << 31) + 0.5)) * (1 if frac >= 0 else -1)
    if q == 1 << 31:
        q, shift = q // 2, shift + 1
    if shift < -31:
        return 0, 0
    if shift > 30:  # the single-rounding form's limit (a multiplier above 2^30 does not occur in practice)
        return (1 << 31) - 1, 30
    return q, shift


def activation_range(act: int, scale: float, zero_point: int, dtype: str) -> tuple[int, int]:
    """The output clamp of a fused activation, in quantized units (CalculateActivationRangeQuantized)."""
    lo, hi = _QRANGE[dtype]

    def q(v: float) -> int:
        return zero_point + int(_round_half_away(v / scale))
    if act == 1:  # RELU
        return max(lo, q(0.0)), hi
    if act == 3:  # RELU6
        return max(lo, q(0.0)), min(hi, q(6.0))
    if act == 2:  # RELU_N1_TO_1
        return max(lo, q(-1.0)), min(hi, q(1.0))
    return lo, hi


def _round_half_away(v: float) -> float:
    return math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)


def channel_multipliers(x_scale: float, w_scale: np.ndarray, y_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel (multiplier, shift) of x_scale * w_scale / y_scale, computed in double from the
    float32 scales as TFLite's PopulateConvolutionQuantizationParams does."""
    pairs = [quantize_multiplier(float(np.float64(x_scale) * np.float64(w)) / float(np.float64(y_scale)))
             for w in np.asarray(w_scale, np.float32).reshape(-1)]
    return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def mul_multiplier(scale1: float, scale2: float, output_scale: float) -> tuple[int, int]:
    """(multiplier, shift) of MUL: scale1 * scale2 / output_scale computed in float32, as LiteRT's MulPrepare
    does (TFLM's in double: the two can differ in the multiplier's last bit; measured on arith_16x8,
    LiteRT's reference differs from the double one on 1 element in 1,152)."""
    real = np.float32(np.float32(np.float32(scale1) * np.float32(scale2)) / np.float32(output_scale))
    return quantize_multiplier(float(real))


def div_multiplier(scale1: float, scale2: float, output_scale: float) -> tuple[int, int]:
    """(multiplier, shift) of DIV: scale1 / (scale2 * output_scale) in float32, as LiteRT's DivPrepare (float
    operands: the expression is float's, then widened to double for QuantizeMultiplier)."""
    real = np.float32(np.float32(scale1) / np.float32(np.float32(scale2) * np.float32(output_scale)))
    return quantize_multiplier(float(real))


SOFTMAX_DIFF_BITS = 5  # integer bits of the scaled input differences (kScaledDiffIntegerBits)


def softmax_params(beta: float, input_scale: float) -> tuple[int, int, int]:
    """(input multiplier, left shift, diff_min) of TFLite's quantized softmax: the input differences
    scaled by beta * scale into a fixed-point number with 5 integer bits; differences below diff_min
    (whose exp is 0 at that precision) give the output's minimum."""
    real = min(beta * input_scale * (1 << (31 - SOFTMAX_DIFF_BITS)), (1 << 31) - 1.0)
    mult, shift = quantize_multiplier(real)
    if shift < 0:
        raise ValueError(f"softmax input multiplier {real} is below 1")
    radius = ((1 << SOFTMAX_DIFF_BITS) - 1) * (1 << (31 - SOFTMAX_DIFF_BITS)) / (1 << shift)
    return mult, shift, -int(math.floor(radius))


def mean_multiplier(input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
    """(multiplier, shift) of TFLite's quantized MEAN: input/output scale, then divided by the number
    of elements averaged in integers (the multiplier shifted up by at most 32 bits first)."""
    mult, shift = quantize_multiplier(float(np.float64(input_scale) / np.float64(output_scale)))
    up = min(count.bit_length() - 1, 32, 31 + shift)
    return (mult << up) // count, shift - up


ADD_LEFT_SHIFT = 20  # int8 ADD/SUB: the inputs' headroom before they are rescaled to a common scale
ADD_LEFT_SHIFT_16 = 15  # 16x8 ADD: 65535 << 15 still fits the int32 sum


def add_multipliers(scale1: float, scale2: float, output_scale: float,
                    left_shift: int = ADD_LEFT_SHIFT) -> tuple[int, int, int, int, int, int]:
    """(m1, shift1, m2, shift2, m_out, shift_out) of TFLite's int8 (and 16x8) ADD/SUB: both inputs
    rescaled to twice the larger scale (after a left shift of 20, or 15), their sum rescaled to the
    output's."""
    twice = 2 * max(np.float64(scale1), np.float64(scale2))
    m1, s1 = quantize_multiplier(float(np.float64(scale1) / twice))
    m2, s2 = quantize_multiplier(float(np.float64(scale2) / twice))
    mo, so = quantize_multiplier(float(twice / ((1 << left_shift) * np.float64(output_scale))))
    return m1, s1, m2, s2, mo, so


# --- 8-bit elementwise ops as 256-entry tables: the reference kernel's arithmetic, run at compile time on
# every int8 input. LiteRT's reference LOGISTIC and TANH are such tables already (PopulateLookupTable,
# in float); LEAKY_RELU, HARD_SWISH and RELU/RELU6/RELU_N1_TO_1 are integer kernels whose output
# depends on one int8 input only, so a table computed by their own arithmetic is the same kernel.
INT8_VALUES = np.arange(-128, 128, dtype=np.int64)


def _f32(v: float) -> np.float32:
    return np.float32(v)


def lut_float(fn: str, x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """LiteRT's PopulateLookupTable<int8_t> for LOGISTIC ('logistic') and TANH ('tanh'): dequantise in
    float, the function in float, round(v / y_scale) half away from zero, clamp. The function is
    computed in double and rounded to float (glibc's expf/tanhf are correctly rounded on these inputs,
    checked against LiteRT on every int8 input: tests/frontend/test_tflite.py)."""
    with np.errstate(over="ignore"):
        deq = (_f32(x_scale) * (INT8_VALUES - x_zero).astype(np.float32)).astype(np.float32)
        if fn == "logistic":
            e = np.exp(-deq.astype(np.float64)).astype(np.float32)
            t = (np.float32(1.0) / (np.float32(1.0) + e)).astype(np.float32)
        elif fn == "tanh":
            t = np.tanh(deq.astype(np.float64)).astype(np.float32)
        else:
            raise ValueError(fn)
        inverse = np.float32(1.0) / _f32(y_scale)
        v = (t * inverse).astype(np.float32)
    rounded = np.floor(np.abs(v) + np.float32(0.5)) * np.sign(v)
    q = (rounded + np.float32(y_zero)).astype(np.int64)
    return np.clip(q, -128, 127).astype(np.int8)


def _mbqm(x: np.ndarray, mult: int, shift: int) -> np.ndarray:
    return multiply_by_quantized_multiplier(x, mult, shift, single_rounding=False)


def leaky_relu_multipliers(alpha: float, x_scale: float, y_scale: float) -> tuple[int, int, int, int]:
    """(m_identity, shift_identity, m_alpha, shift_alpha) of QuantizeLeakyRelu: x_scale/y_scale and
    alpha x_scale/y_scale, computed in float as LeakyReluPrepare does."""
    m_id, s_id = quantize_multiplier(float(_f32(x_scale) / _f32(y_scale)))
    m_a, s_a = quantize_multiplier(float(_f32(_f32(x_scale) * _f32(alpha)) / _f32(y_scale)))
    return m_id, s_id, m_a, s_a


def lut_leaky_relu(alpha: float, x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """QuantizeLeakyRelu: x - x_zero requantised by x_scale/y_scale (x >= 0) or alpha x_scale/y_scale
    (leaky_relu_multipliers); the alpha product of a negative multiplier is its magnitude's, negated."""
    m_id, s_id, m_a, s_a = leaky_relu_multipliers(alpha, x_scale, y_scale)
    x = INT8_VALUES - x_zero
    neg = _mbqm(x, abs(m_a), s_a) * (-1 if m_a < 0 else 1)
    out = y_zero + np.where(x >= 0, _mbqm(x, m_id, s_id), neg)
    return np.clip(out, -128, 127).astype(np.int8)


def lut_relu(lo: float, hi: float | None, x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """QuantizedReluX: x - x_zero requantised by x_scale/y_scale (in float), clamped to
    [y_zero + roundf(lo / y_scale), y_zero + roundf(hi / y_scale)] within int8."""
    mult, shift = quantize_multiplier(float(_f32(x_scale) / _f32(y_scale)))
    q_lo = max(-128, y_zero + int(_round_half_away(float(_f32(lo) / _f32(y_scale)))))
    q_hi = 127 if hi is None else min(127, y_zero + int(_round_half_away(float(_f32(hi) / _f32(y_scale)))))
    out = y_zero + _mbqm(INT8_VALUES - x_zero, mult, shift)
    return np.clip(out, q_lo, q_hi).astype(np.int8)


def relu16_range(lo: float, hi: float | None, y_scale: float) -> tuple[int, int]:
    """QuantizedReluX<int16_t>'s clamp (zero point 0): [roundf(lo / y_scale), roundf(hi / y_scale)] within int16."""
    q_lo = max(-32768, int(_round_half_away(float(_f32(lo) / _f32(y_scale)))))
    q_hi = 32767 if hi is None else min(32767, int(_round_half_away(float(_f32(hi) / _f32(y_scale)))))
    return q_lo, q_hi


def _i16_srdhm(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul on int16."""
    ab = a.astype(np.int64) * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    s = ab + nudge
    high = np.where(s >= 0, s >> 15, -((-s) >> 15))
    return np.where((a == -32768) & (b == -32768), 32767, high)


def _i16_rdbpot(x: np.ndarray, e: int) -> np.ndarray:
    mask = (1 << e) - 1
    return (x >> e) + ((x & mask) > ((mask >> 1) + (x < 0)))


def _i16_sat_shl(x: np.ndarray, e: int) -> np.ndarray:
    return np.clip(x * (1 << e), -32768, 32767)


def _int16_multiplier(real: float) -> tuple[int, int]:
    """QuantizeMultiplier, then DownScaleInt32ToInt16Multiplier (rounded to the top 16 bits)."""
    m, e = quantize_multiplier(real)
    return (32767 if m >= (1 << 31) - 1 - (1 << 15) else (m + (1 << 15)) >> 16), e


def lut_hard_swish(x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """TFLite's reference int8 HARD_SWISH (16-bit fixed point): x on a 2^7 finer scale, its 'relu-ish'
    factor min(max((x + 3) / 6, 0), 1) in Q0.15, their product rounded toward zero, then shifted
    to the output scale. Multipliers from float scales, as HardSwishPrepare."""
    hires = _f32(np.float32(1.0 / 128.0) * _f32(x_scale))
    out_m, out_e = _int16_multiplier(float(_f32(hires / _f32(y_scale))))
    if out_e > 0:  # LiteRT's kernel divides by 2^-out_e: it has no left shift for this
        raise ValueError(f"int8 HARD_SWISH whose output scale {y_scale:g} is below 1/128 of its input scale "
                         f"{x_scale:g} is not supported (LiteRT's kernel requires it at or above)")
    relu_m, relu_e = _int16_multiplier(float(_f32(hires / _f32(3.0 / 32768.0))))
    x = (INT8_VALUES - x_zero) * 128
    preshift = _i16_srdhm(x, out_m)
    r = x
    if relu_e > 0:
        r = _i16_sat_shl(r, relu_e - 1)
    r = _i16_srdhm(r, relu_m)
    if relu_e > 0:
        r = _i16_sat_shl(r, 1)
    if relu_e < 0:
        r = _i16_rdbpot(r, -relu_e)
    r = (r + (1 << 15)) >> 1
    prod = r * preshift
    high = np.where(prod >= 0, prod >> 15, -((-prod) >> 15))  # truncating division by 2^15
    high = np.where((r == -32768) & (preshift == -32768), 32767, high)
    out = _i16_rdbpot(high, -out_e) + y_zero
    return np.clip(out, -128, 127).astype(np.int8)


# --- 16x8's elementwise ops (int16 activations, zero point 0): LiteRT's reference kernels interpolate
# tables, which the compiler computes here and the kernels read (runtime_c/kernels/tflite_int8/tflite_int8_*.c).
def sigmoid_table_u16() -> np.ndarray:
    """The 256 anchors that LOGISTIC and TANH (tanh(x) = 2 sigmoid(2x) - 1) interpolate linearly:
    sigmoid(i / 24) in 0.16 fixed point, each raised by half the chord's sag at the midpoint of its
    segment (so that the interpolation errs evenly), rounded half up; the last is 65535, the
    saturation value (LiteRT's table, measured on every int16 input: tests/frontend/test_tflite.py)."""
    def f(v: np.ndarray) -> np.ndarray:
        return 65536.0 / (1.0 + np.exp(-v / 24.0))
    i = np.arange(256, dtype=np.float64)
    sag = f(i + 0.5) - (f(i) + f(i + 1)) / 2
    t = np.floor(f(i) + sag / 2 + 0.5)
    t[-1] = 65535
    return t.astype(np.uint16)


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLite's CheckedLog2 in float32: (x is a power of two within 1e-3 of its log, rounded log)."""
    v = np.float32(np.log(np.float32(x))) * np.float32(1.0 / np.float32(np.log(np.float32(2.0))))
    r = float(_round_half_away(float(v)))
    return abs(float(np.float32(v) - np.float32(r))) < 1e-3, int(r)


def act16_params(fn: str, x_scale: float) -> tuple[int, int]:
    """(multiplier, right shift) that bring 16x8 LOGISTIC's or TANH's int16 input to the table's scale
    (1/(3 * 4096), so that 2^17 is 10.7): a power-of-two scale becomes a multiplier 3 << shift; any
    other is scale * 3 * 4096 doubled until above 16383.5 and truncated (LiteRT's SigmoidPrepare and
    TanhPrepare, integer bits 3)."""
    pot, log2 = checked_log2(x_scale)
    left = 12 + log2
    if pot and (left == 0 or (fn == "tanh" and left == 1)):
        return 3 << left, 0
    multiplier, shift = float(np.float64(np.float32(x_scale))) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        multiplier *= 2.0
    return int(multiplier), shift


def lut_int16(fn: Any, x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """LiteRT's LUTPopulate<int16_t> in double: 513 anchors over the int16 input range, each lowered by
    half its segment's midpoint interpolation error, for a lookup that interpolates 128 steps."""
    def rnd(v: float) -> float:
        return float(_round_half_away(v))
    in_min, in_max = x_scale * (-32768 - x_zero), x_scale * (32767 - x_zero)
    out_min, out_max = y_scale * (-32768 - y_zero), y_scale * (32767 - y_zero)
    step = (in_max - in_min) / 512
    inv = 65536.0 / (out_max - out_min)
    lut = []
    for i in range(512):
        val, mid, nxt = fn(in_min + i * step), fn(in_min + i * step + step / 2), fn(in_min + (i + 1) * step)
        sample = rnd(val * inv)
        bias = rnd((rnd((nxt * inv + rnd(val * inv)) / 2) - rnd(mid * inv)) / 2)
        lut.append(min(max(sample - bias, -32768.0), 32767.0))
    lut.append(min(max(rnd(fn(in_max) * inv), -32768.0), 32767.0))
    return np.array(lut, np.int16)


def softmax16_params(beta: float, x_scale: float) -> tuple[int, int, np.ndarray, np.ndarray]:
    """16x8 SOFTMAX (LiteRT's SoftmaxInt16): (multiplier, shift) that map the input differences from the
    row's maximum onto [-65535, 0] = [-10, 0] (beta * scale in float32, as LiteRT multiplies them),
    the exp table over [-10, 0] and the 1 / (1 + x) table over [0, 1], both to [-1, 1]."""
    real = float(np.float32(np.float32(x_scale) * np.float32(beta))) / (10.0 / 65535.0)
    mult, shift = quantize_multiplier(real)
    span = 65535
    exp_lut = lut_int16(math.exp, 10.0 / span, 32767, 2.0 / span, 0)
    recip_lut = lut_int16(lambda v: 1.0 / (1.0 + v), 1.0 / span, -32768, 2.0 / span, 0)
    return mult, shift, exp_lut, recip_lut


# --- issue 50: int8 ops of one input whose LiteRT reference computes each output from its input alone -----------


def lut_abs(x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """AbsEvalQuantized: |x - x_zero|, requantised by x_scale / y_scale (in float) where the scales differ."""
    value = np.abs(INT8_VALUES - x_zero)
    if _f32(x_scale) != _f32(y_scale):
        mult, shift = quantize_multiplier(float(_f32(x_scale) / _f32(y_scale)))
        value = _mbqm(value, mult, shift)
    return np.clip(value + y_zero, -128, 127).astype(np.int8)


def lut_sqrt(x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """SqrtEvalQuantized: sqrt of x dequantised in float, divided by y_scale and truncated toward zero
    (a C cast), plus y_zero. LiteRT fails on a negative input; its entry here is sqrt of 0's."""
    deq = np.maximum((_f32(x_scale) * (INT8_VALUES - x_zero).astype(np.float32)).astype(np.float32), np.float32(0))
    root = np.sqrt(deq.astype(np.float64)).astype(np.float32)  # sqrtf: correctly rounded
    q = np.trunc((root / _f32(y_scale)).astype(np.float32)).astype(np.int64) + y_zero
    return np.clip(q, -128, 127).astype(np.int8)


def lut_log(x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """LogLUTPrepare: LUTPopulate<int8_t> of log (logf), the output's lowest value for x <= 0."""
    deq = (_f32(x_scale) * (INT8_VALUES - x_zero).astype(np.float32)).astype(np.float32)
    lowest = np.float32(np.float32(-128 - y_zero) * _f32(y_scale))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(deq <= 0, lowest, np.log(np.maximum(deq, np.float32(1e-45)).astype(np.float64)).astype(np.float32))
    v = (t.astype(np.float32) * (np.float32(1.0) / _f32(y_scale))).astype(np.float32)
    rounded = np.floor(np.abs(v) + np.float32(0.5)) * np.sign(v)
    return np.clip((rounded + np.float32(y_zero)).astype(np.int64), -128, 127).astype(np.int8)


def _sat_shl(x: int, e: int) -> int:
    """gemmlowp's SaturatingRoundingMultiplyByPOT for e > 0: x * 2^e saturated to int32."""
    threshold = (1 << (31 - e)) - 1
    return INT32_MAX if x > threshold else INT32_MIN if x < -threshold else x << e


def _srdhm(a: int, b: int) -> int:
    return int(saturating_rounding_doubling_high_mul(np.int64(a), np.int64(b)))


def inv_sqrt_multiplier(value: int) -> tuple[int, int]:
    """TFLite's GetInvSqrtQuantizedMultiplierExp(value, reverse_shift -1): 1 / sqrt(value) as a Q31
    multiplier and a left shift, by five Newton-Raphson steps in gemmlowp's fixed point (3 integer bits)."""
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = (32 - value.bit_length() - 1) // 2 - 1  # CountLeadingZeros - 1, in pairs, less one
    shift -= pairs
    value <<= 2 * pairs
    x_in = value >> 1  # F3
    half_in = int(rounding_divide_by_pot(np.int64(x_in), np.int64(1)))
    half_three = (1 << 28) + (1 << 27)
    x = 1 << 28  # F3 one
    for _ in range(5):
        x3 = _sat_shl(_srdhm(_srdhm(x, x), x), 6)  # F9 -> F3
        x = _sat_shl(_srdhm(half_three, x) - _srdhm(half_in, x3), 3)  # F6 -> F3
    x = _srdhm(x, 1518500250)  # times sqrt(2) / 2
    if shift < 0:
        x, shift = (x << -shift) & 0xFFFFFFFF, 0
        x = x - (1 << 32) if x >= 1 << 31 else x
    return x, -shift


def lut_rsqrt(x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """RsqrtEvalQuantizedInt8: 1 / sqrt(x - x_zero) by inv_sqrt_multiplier, carried 20 bits up, then
    requantised by 1 / (sqrtf(x_scale) y_scale); 127 at x = x_zero. LiteRT fails below x_zero; those
    entries are 127 here."""
    mult, shift = quantize_multiplier(1.0 / float(np.float32(np.sqrt(np.float64(_f32(x_scale))).astype(np.float32)
                                                           * _f32(y_scale))))
    out = np.empty(256, np.int64)
    for k, v in enumerate(INT8_VALUES):
        value = int(v) - x_zero
        if value <= 0:
            out[k] = 127
            continue
        m, s = inv_sqrt_multiplier(value)
        data = int(_mbqm(np.int64(1), m, s + 20))
        out[k] = int(_mbqm(np.int64(data), mult, shift - 20)) + y_zero
    return np.clip(out, -128, 127).astype(np.int8)


def compare_multipliers(scale1: float, scale2: float) -> tuple[int, int, int, int]:
    """TFLite's int8 comparisons: each input's own scale (below 1) as a Q31 multiplier and shift (the
    inputs, less their zero points and shifted 8 bits up, are brought to one real scale)."""
    m1, s1 = quantize_multiplier(float(_f32(scale1)))
    m2, s2 = quantize_multiplier(float(_f32(scale2)))
    return m1, s1, m2, s2


def prelu_multipliers(x_scale: float, alpha_scale: float, y_scale: float) -> tuple[int, int, int, int]:
    """PreluPrepare: x_scale / y_scale for x >= x_zero and x_scale alpha_scale / y_scale below, in float."""
    m1, s1 = quantize_multiplier(float(_f32(x_scale) / _f32(y_scale)))
    m2, s2 = quantize_multiplier(float(_f32(_f32(x_scale) * _f32(alpha_scale)) / _f32(y_scale)))
    return m1, s1, m2, s2


# --- issue 50: LiteRT's LUTPopulate, in float32 as its kernels call it (EXP, LOG, GELU, RSQRT on int16) ---------


def _f32_round(v: np.ndarray) -> np.ndarray:
    """TfLiteRound on float32: half away from zero."""
    return (np.floor(np.abs(v) + np.float32(0.5)) * np.sign(v)).astype(np.float32)


def lut_populate_int8(fn: Any, x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """LUTPopulate<int8_t>: each int8 input dequantised in float32, `fn` (float32 -> float32, elementwise),
    times 1 / y_scale rounded half away, plus y_zero in float, cast and clamped to int8."""
    deq = (_f32(x_scale) * (INT8_VALUES - x_zero).astype(np.float32)).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        v = (fn(deq).astype(np.float32) * (np.float32(1.0) / _f32(y_scale))).astype(np.float32)
        q = (_f32_round(v) + np.float32(y_zero)).astype(np.float64)
    return np.clip(np.nan_to_num(q, nan=0.0), -128, 127).astype(np.int64).astype(np.int8)


def lut_populate_int16(fn: Any, x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """LUTPopulateInt16<float>: 513 anchors over the int16 input range, each lowered by half its segment's
    midpoint interpolation error, every step in float32 (LiteRT's default; softmax16_params' lut_int16
    is the deprecated double one)."""
    f = np.float32
    in_min, in_max = f(f(x_scale) * f(-32768 - x_zero)), f(f(x_scale) * f(32767 - x_zero))
    out_min, out_max = f(f(y_scale) * f(-32768 - y_zero)), f(f(y_scale) * f(32767 - y_zero))
    step = f((in_max - in_min) / f(512))
    half = f(step / f(2))
    inv = f(f(65536) / f(out_max - out_min))
    i = np.arange(512, dtype=np.float32)
    at = (in_min + (i * step).astype(np.float32)).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        val, mid = fn(at).astype(np.float32), fn((at + half).astype(np.float32)).astype(np.float32)
        nxt = fn((in_min + ((i + f(1)) * step).astype(np.float32)).astype(np.float32)).astype(np.float32)
        sample = _f32_round((val * inv).astype(np.float32))
        interp = _f32_round((((nxt * inv).astype(np.float32) + sample).astype(np.float32) / f(2)).astype(np.float32))
        err = (interp - _f32_round((mid * inv).astype(np.float32))).astype(np.float32)
        bias = _f32_round((err / f(2)).astype(np.float32))
        lut = np.clip((sample - bias).astype(np.float32), -32768, 32767)
        last = np.clip(_f32_round((fn(np.array([in_max], np.float32)).astype(np.float32) * inv).astype(np.float32)),
                       -32768, 32767)
    return np.concatenate([lut, last]).astype(np.int16)


def _float32_of(fn: Any) -> Any:
    """A libm function on float32 values: computed in double, rounded once (as a correctly rounded expf)."""
    return lambda v: fn(np.asarray(v, np.float64)).astype(np.float32)


def _erfc(v: np.ndarray) -> np.ndarray:
    return np.array([math.erfc(float(t)) for t in np.asarray(v).reshape(-1)], np.float64).reshape(np.shape(v))


def gelu_transform(approximate: bool) -> Any:
    """reference_ops::GeluTransform (0.5 x erfc(-x / sqrt 2)) or GeluTransformApproximate, in float32."""
    f = np.float32
    if approximate:
        k = f(2 / math.sqrt(math.pi) * math.sqrt(0.5))

        def approx(x: np.ndarray) -> np.ndarray:
            cube = (((f(0.044715) * x).astype(f) * x).astype(f) * x).astype(f)
            t = np.tanh((k * (x + cube).astype(f)).astype(np.float64)).astype(f)
            return ((f(0.5) * x).astype(f) * (f(1) + t).astype(f)).astype(f)
        return approx

    def exact(x: np.ndarray) -> np.ndarray:
        e = _erfc((x * f(-math.sqrt(0.5))).astype(f)).astype(f)
        return ((f(0.5) * x).astype(f) * e).astype(f)
    return exact


def unary_transform(op: str, y_scale: float, y_zero: int, bits: int, approximate: bool = False) -> Any:
    """The float32 function LiteRT's EXP, LOG, RSQRT (int16) and GELU tabulate, with their cases for x <= 0."""
    f = np.float32
    if op == "EXP":
        return _float32_of(np.exp)
    if op == "GELU":
        return gelu_transform(approximate)
    if op == "LOG":  # LogLUTPrepare: the output's lowest value for x <= 0
        lowest = f(f(-(1 << (bits - 1)) - y_zero) * f(y_scale))
        return lambda x: np.where(x <= 0, lowest, np.log(np.maximum(x, f(1e-45)).astype(np.float64))).astype(f)
    if op == "RSQRT":  # int16: 32767 y_scale for x <= 0
        top = f(f(32767) * f(y_scale))
        return lambda x: np.where(x <= 0, top, (f(1) / np.sqrt(np.maximum(x, f(1e-45)).astype(np.float64))
                                                .astype(f)).astype(f)).astype(f)
    raise ValueError(op)


def squared_difference_multipliers(scale1: float, scale2: float, y_scale: float) -> tuple[int, int, int, int, int, int]:
    """SQUARED_DIFFERENCE's Prepare: both inputs (after a left shift of 7) to twice the larger scale, their
    squared difference to the output's (2^14 y_scale), in double from the float32 scales."""
    twice = float(np.float32(2) * max(np.float32(scale1), np.float32(scale2)))
    m1, s1 = quantize_multiplier(float(np.float32(scale1)) / twice)
    m2, s2 = quantize_multiplier(float(np.float32(scale2)) / twice)
    mo, so = quantize_multiplier(twice * twice / ((1 << 14) * float(np.float32(y_scale))))
    return m1, s1, m2, s2, mo, so


def matmul_multiplier(scale1: float, scale2: float, y_scale: float) -> tuple[int, int]:
    """BATCH_MATMUL's GetQuantizedConvolutionMultipler: the scales' product in float32, then over y_scale in
    double."""
    return quantize_multiplier(float(np.float32(np.float32(scale1) * np.float32(scale2))) / float(np.float32(y_scale)))


def resize_scale(size_in: int, size_out: int, align_corners: bool) -> int:
    """ResizeBilinearInteger's 10-bit source step: round(2^10 in / out), or of (in - 1) / (out - 1) with
    align_corners, in integers as LiteRT's."""
    if align_corners and size_out > 1:
        return ((1 << 10) * (size_in - 1) + (size_out - 1) // 2) // (size_out - 1)
    return ((1 << 10) * size_in + size_out // 2) // size_out
