"""Quantized TFLite ops -> aotc's internal NHWC int8 ops (domain aotc.tflite), whose kernels
(runtime_c/kernels/tflite_int8/tflite_int8_*.c) compute TFLite's fixed-point arithmetic bit for bit.

Every multiplier, shift and clamp is computed here, once, from the file's float32 scales
(quant.py); the nodes carry them as attributes and the kernels only accumulate and requantise.
The ops stay in TFLite's NHWC: no transposes are written for them.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import helper

from aot.errors import AotcError
from aot.frontend.tflite import int8_math
from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.quant import (
    ADD_LEFT_SHIFT,
    ADD_LEFT_SHIFT_16,
    act16_params,
    activation_range,
    add_multipliers,
    channel_multipliers,
    checked_log2,
    compare_multipliers,
    div_multiplier,
    leaky_relu_multipliers,
    lut_abs,
    lut_float,
    lut_hard_swish,
    lut_leaky_relu,
    lut_log,
    lut_relu,
    lut_rsqrt,
    lut_sqrt,
    mean_multiplier,
    mul_multiplier,
    prelu_multipliers,
    quantize_multiplier,
    relu16_range,
    sigmoid_table_u16,
    softmax16_params,
    softmax_params,
)
from aot.frontend.tflite.reader import TflOp
from aot.frontend.tflite.recurrent import lower_lstm_int8, lower_svdf_int8
from aot.frontend.tflite.reference_types import WHY, defined
from aot.ir import tflite_ops as tfl

# TFLite op -> internal op
INT8_OPS = {"FULLY_CONNECTED": tfl.FULLY_CONNECTED, "CONV_2D": tfl.CONV_2D, "DEPTHWISE_CONV_2D": tfl.DEPTHWISE_CONV_2D,
            "AVERAGE_POOL_2D": tfl.AVERAGE_POOL_2D, "MAX_POOL_2D": tfl.MAX_POOL_2D, "SOFTMAX": tfl.SOFTMAX,
            "MEAN": tfl.MEAN, "ADD": tfl.ADD, "SUB": tfl.SUB, "MUL": tfl.MUL, "TRANSPOSE_CONV": tfl.TRANSPOSE_CONV,
            "MAXIMUM": tfl.MAXIMUM, "MINIMUM": tfl.MINIMUM, "PRELU": tfl.PRELU, "DIV": tfl.DIV,
            **{op: tfl.LUT for op in ("LOGISTIC", "TANH", "LEAKY_RELU", "HARD_SWISH", "RELU", "RELU6", "RELU_N1_TO_1",
                                      "RELU_0_TO_1", "ABS", "RSQRT", "SQRT", "LOG")},
            **{op: tfl.COMPARE for op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")},
            # int8_math.py's (issue 50)
            "BATCH_MATMUL": tfl.BATCH_MATMUL, "RESIZE_BILINEAR": tfl.RESIZE_BILINEAR,
            "SQUARED_DIFFERENCE": tfl.SQUARED_DIFFERENCE, "EXP": tfl.LUT, "GELU": tfl.LUT, "NEG": tfl.LUT,
            "SUM": tfl.SUM_REQUANT, "L2_NORMALIZATION": tfl.L2_NORM, "REDUCE_PROD": tfl.REDUCE_PROD,
            "LOG_SOFTMAX": tfl.LOG_SOFTMAX}
# the int8 tables of one input whose LiteRT reference computes each output from its input alone (quant.py)
_TABLES = {"ABS": lut_abs, "RSQRT": lut_rsqrt, "SQRT": lut_sqrt, "LOG": lut_log}
INT16_OPS = ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "AVERAGE_POOL_2D", "MAX_POOL_2D",
             "ADD", "SUB", "MUL", "MEAN", "SOFTMAX", "LOGISTIC", "TANH", "LEAKY_RELU", *int8_math.INT16,
             "MAXIMUM", "MINIMUM", "RELU", "RELU6", "ABS", "SQRT", "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL",
             "GREATER", "GREATER_EQUAL", "PRELU", "DIV")
_RELU_RANGE = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0), "RELU_0_TO_1": (0.0, 1.0)}
_SAME = 0
_INT32 = 2  # TensorType.INT32
_INTS = ("int8", "int16", "int32")


def is_quantized(b: OnnxBuilder, op: TflOp) -> bool:
    """The op computes on quantized integers (its first input is a quantized int8/int16 tensor)."""
    k = 2 if op.op == "TRANSPOSE_CONV" else 0  # its first input is the output shape
    t = b.tensor(op.inputs[k]) if len(op.inputs) > k and op.inputs[k] >= 0 else None
    return t is not None and t.dtype in ("int8", "uint8", "int16") and t.quant is not None


def lower_int8(b: OnnxBuilder, op: TflOp) -> None:
    data = 2 if op.op == "TRANSPOSE_CONV" else 0  # the data input
    x, y = b.tensor(op.inputs[data]), b.tensor(op.outputs[0])
    internal = INT8_OPS.get(op.op)
    if int8_math.lowers(b, op):
        int8_math.lower(b, op)
        return
    if op.op == "CONCATENATION":
        raise op_error(op, "int8 CONCATENATION of inputs quantized unlike its output is not supported: TFLite's and "
                       "TFLM's int8 kernels refuse it too (the converter writes a QUANTIZE before such an input)")
    if op.op == "SVDF":
        lower_svdf_int8(b, op)
        return
    if op.op == "UNIDIRECTIONAL_SEQUENCE_LSTM":
        lower_lstm_int8(b, op)
        return
    reason = WHY.get((op.op, "int16" if x.dtype == "int16" else "int8"))
    if internal is None and reason:
        raise op_error(op, f"quantized {op.op} of {x.dtype} is not supported: {reason}")
    if internal is None:
        raise op_error(op, f"quantized {op.op} is not supported yet (aotc's TFLite int8 kernels: "
                       f"{', '.join(INT8_OPS)})")
    if internal == tfl.COMPARE:
        _lower_compare(b, op)
        return
    sixteen = x.dtype == "int16" and y.dtype == "int16"  # 16x8: int16 activations, int8 weights
    if sixteen and defined(op.op, "int16") is False:
        raise op_error(op, f"16x8 (int16) {op.op} is not supported: LiteRT's reference kernels do not define it")
    if sixteen and op.op not in INT16_OPS:
        raise op_error(op, f"16x8 (int16) {op.op} is not supported yet (aotc's 16x8 kernels: {', '.join(INT16_OPS)})")
    wide_softmax = op.op == "SOFTMAX" and x.dtype == "int8" and y.dtype == "int16"  # LiteRT's int8 -> int16
    if not (sixteen or wide_softmax or (x.dtype == "int8" and y.dtype == "int8")) or y.quant is None:
        raise op_error(op, f"quantized {op.op} from {x.dtype} to {y.dtype} is not supported yet (int8, and 16x8 for "
                       f"{', '.join(INT16_OPS)})")
    if sixteen and (int(x.quant.zero_point[0]) != 0 or int(y.quant.zero_point[0]) != 0):
        raise op_error(op, f"16x8 {op.op} with a nonzero zero point is not supported (TFLite's int16 is symmetric)")
    if x.quant.per_channel or y.quant.per_channel:
        raise op_error(op, "per-channel parameters on activations are not supported")
    o = op.options
    act = getattr(o, "fusedActivationFunction", 0)
    y_scale, y_zero = float(y.quant.scale[0]), int(y.quant.zero_point[0])
    y_min, y_max = activation_range(act, y_scale, y_zero, y.dtype)
    attrs: dict = {"y_min": y_min, "y_max": y_max, "y_shape": list(y.shape)}
    inputs = [b.value(op.inputs[data], NHWC)]
    x_scale, x_zero = float(x.quant.scale[0]), int(x.quant.zero_point[0])
    if sixteen and op.op in ("LOGISTIC", "TANH"):  # interpolated tables, not one entry per input
        _check_scale(op, y_scale, 1 / 32768, "output")
        mult, shift = act16_params(op.op.lower(), x_scale)
        internal = tfl.ACT16
        attrs = {"what": op.op, "mult": mult, "shift": shift,
                 "table": [int(v) for v in sigmoid_table_u16()], "y_shape": list(y.shape)}
    elif sixteen and op.op == "LEAKY_RELU":  # int8's arithmetic per element (no 65,536-entry table)
        internal = tfl.LEAKY_RELU16
        attrs = {"m": list(leaky_relu_multipliers(float(o.alpha), x_scale, y_scale)), "y_shape": list(y.shape)}
    elif sixteen and op.op == "ABS":  # AbsEvalQuantized<int16_t>: |x| requantised where the scales differ
        internal = tfl.ABS16
        rescale = np.float32(x_scale) != np.float32(y_scale)
        mult, shift = quantize_multiplier(float(np.float32(x_scale) / np.float32(y_scale))) if rescale else (0, 0)
        attrs = {"mult": mult, "shift": shift, "y_shape": list(y.shape)}
    elif sixteen and op.op == "SQRT":  # SqrtEvalQuantized<int16_t>: in float, truncated
        internal = tfl.SQRT16
        attrs = {"x_scale": x_scale, "y_scale": y_scale, "y_shape": list(y.shape)}
    elif sixteen and op.op in ("RELU", "RELU6"):  # QuantizedReluX<int16_t>: LEAKY_RELU's kernel, one multiplier
        internal = tfl.LEAKY_RELU16
        lo, hi = relu16_range(*_RELU_RANGE[op.op], y_scale)
        mult, shift = quantize_multiplier(float(np.float32(x_scale) / np.float32(y_scale)))
        attrs = {"m": [mult, shift, mult, shift], "y_min": lo, "y_max": hi, "y_shape": list(y.shape)}
    elif internal == tfl.LUT:
        if op.op in ("LOGISTIC", "TANH"):  # LiteRT's reference kernels are this table (computed in float)
            table = lut_float(op.op.lower(), x_scale, x_zero, y_scale, y_zero)
        elif op.op == "LEAKY_RELU":
            table = lut_leaky_relu(float(o.alpha), x_scale, x_zero, y_scale, y_zero)
        elif op.op == "HARD_SWISH":
            try:
                table = lut_hard_swish(x_scale, x_zero, y_scale, y_zero)
            except ValueError as e:
                raise op_error(op, str(e)) from None
        elif op.op in _TABLES:
            table = _TABLES[op.op](x_scale, x_zero, y_scale, y_zero)
        else:
            table = lut_relu(*_RELU_RANGE[op.op], x_scale, x_zero, y_scale, y_zero)
        attrs = {"table": [int(v) for v in table], "what": op.op, "y_shape": list(y.shape)}
    elif internal == tfl.PRELU:
        alpha = b.tensor(op.inputs[1])
        if alpha.dtype != "int8" or alpha.quant is None or alpha.quant.per_channel:
            raise op_error(op, f"{x.dtype} PRELU needs a per-tensor quantized int8 alpha (LiteRT's)")
        _check_broadcast(op, x.shape, alpha.shape, y.shape)
        lo, hi = (-32768, 32767) if sixteen else (-128, 127)
        attrs = {"y_min": lo, "y_max": hi, "y_shape": list(y.shape), "x_zero": x_zero,
                 "alpha_zero": int(alpha.quant.zero_point[0]), "y_zero": y_zero,
                 "m": list(prelu_multipliers(x_scale, float(alpha.quant.scale[0]), y_scale))}
        inputs.append(b.value(op.inputs[1], NHWC))
    elif internal in (tfl.MAXIMUM, tfl.MINIMUM):
        x2 = b.tensor(op.inputs[1])
        if x2.dtype != x.dtype or x2.quant is None or any(
                (float(t.quant.scale[0]), int(t.quant.zero_point[0])) != (y_scale, y_zero) for t in (x, x2)):
            raise op_error(op, f"quantized {op.op} needs its inputs quantized as its output (TFLite requantises "
                           "neither)")
        _check_broadcast(op, x.shape, x2.shape, y.shape)
        inputs.append(b.value(op.inputs[1], NHWC))
    elif internal == tfl.SOFTMAX and sixteen:
        _check_scale(op, y_scale, 1 / 32768, "output")
        mult, shift, exp_lut, recip_lut = softmax16_params(float(o.beta) if o is not None else 1.0, x_scale)
        attrs = {"mult": mult, "shift": shift, "exp_table": [int(v) for v in exp_lut],
                 "recip_table": [int(v) for v in recip_lut], "y_shape": list(y.shape)}
    elif internal == tfl.SOFTMAX:
        bits = 16 if wide_softmax else 8  # the output is the probability in Q0.bits less 2^(bits - 1)
        if abs(y_scale * 2 ** bits - 1) > 1e-3 or y_zero != -(1 << (bits - 1)):
            raise op_error(op, f"int8 SOFTMAX to {y.dtype} needs output scale 1/{1 << bits} and zero point "
                           f"{-(1 << (bits - 1))} (TFLite's), not {y_scale:g} and {y_zero}")
        mult, shift, diff_min = softmax_params(float(o.beta) if o is not None else 1.0, float(x.quant.scale[0]))
        attrs = {"mult": mult, "shift": shift, "diff_min": diff_min, "y_shape": list(y.shape)}
    elif internal == tfl.LOG_SOFTMAX:  # LogSoftmaxPrepare: the output at 16/256, zero point 127; beta 1
        if y_scale != 16 / 256 or y_zero != 127:
            raise op_error(op, f"int8 LOG_SOFTMAX needs output scale 16/256 and zero point 127 (LiteRT's), not "
                           f"{y_scale:g} and {y_zero}")
        # LogSoftmaxPrepare's int 1 << (31 - shift) overflows at a left shift of 0 (an input scale below 2^-26)
        if x_scale * (1 << 26) < 1:
            raise op_error(op, f"int8 LOG_SOFTMAX of input scale {x_scale:g} (below 2^-26) is undefined in LiteRT")
        mult, shift, diff_min = softmax_params(1.0, x_scale)
        reverse_mult, reverse_shift = quantize_multiplier((1 << (31 - shift)) / float(mult))
        attrs = {"mult": mult, "shift": shift, "reverse_mult": reverse_mult, "reverse_shift": reverse_shift,
                 "diff_min": diff_min, "y_shape": list(y.shape)}
    elif internal == tfl.L2_NORM:  # L2NormPrepare: the output at 1/128, zero point 0; over the last axis
        if y_scale != 1 / 128 or y_zero != 0:
            raise op_error(op, f"int8 L2_NORMALIZATION needs output scale 1/128 and zero point 0 (LiteRT's), not "
                           f"{y_scale:g} and {y_zero}")
        if act != 0:
            raise op_error(op, "int8 L2_NORMALIZATION with a fused activation is not supported")
        attrs = {"x_zero": x_zero, "y_shape": list(y.shape)}
    elif internal == tfl.DIV:
        x2 = b.tensor(op.inputs[1])
        if x2.dtype != x.dtype or x2.quant is None or x2.quant.per_channel:
            raise op_error(op, f"quantized DIV needs two per-tensor quantized {x.dtype} inputs")
        if sixteen and int(x2.quant.zero_point[0]) != 0:
            raise op_error(op, "16x8 DIV with a nonzero zero point is not supported (TFLite's int16 is symmetric)")
        _check_broadcast(op, x.shape, x2.shape, y.shape)
        mult, shift = div_multiplier(x_scale, float(x2.quant.scale[0]), y_scale)
        if shift > (15 if sixteen else 22):  # LiteRT's final shift could turn left: undefined there
            raise op_error(op, f"quantized DIV whose output multiplier is 2^{shift} or more is not supported (LiteRT's "
                           "requantisation needs it smaller)")
        attrs.update(x1_zero=x_zero, x2_zero=int(x2.quant.zero_point[0]), y_zero=y_zero,
                     m=[0, 0, 0, 0, mult, shift])
        inputs.append(b.value(op.inputs[1], NHWC))
    elif internal in (tfl.ADD, tfl.SUB, tfl.MUL):
        x2 = b.tensor(op.inputs[1])
        if x2.dtype != x.dtype or x2.quant is None or x2.quant.per_channel:
            raise op_error(op, f"quantized {op.op} needs two per-tensor quantized {x.dtype} inputs")
        if sixteen and (int(x2.quant.zero_point[0]) != 0 or getattr(o, "potScaleInt16", False) and all(
                checked_log2(float(t.quant.scale[0]))[0] for t in (x, x2, y))):
            raise op_error(op, f"16x8 {op.op} of power-of-two scales (pot_scale_int16, LiteRT's LSTM path) is not "
                           "supported")
        _check_broadcast(op, x.shape, x2.shape, y.shape)
        attrs.update(x1_zero=int(x.quant.zero_point[0]), x2_zero=int(x2.quant.zero_point[0]), y_zero=y_zero)
        if internal == tfl.MUL:
            mult, shift = mul_multiplier(float(x.quant.scale[0]), float(x2.quant.scale[0]), y_scale)
            attrs.update(m=[0, 0, 0, 0, mult, shift])
        else:
            attrs.update(m=list(add_multipliers(float(x.quant.scale[0]), float(x2.quant.scale[0]), y_scale,
                                                ADD_LEFT_SHIFT_16 if sixteen else ADD_LEFT_SHIFT)))
        inputs.append(b.value(op.inputs[1], NHWC))
    elif internal == tfl.MEAN:
        dims = _mean_dims(b, op, x.shape)
        mult, shift = mean_multiplier(float(x.quant.scale[0]), y_scale, dims[1])
        attrs = {"x_zero": int(x.quant.zero_point[0]), "y_zero": y_zero, "mult": mult, "shift": shift,
                 "y_shape": list(y.shape), "dims": dims}
    elif internal in (tfl.AVERAGE_POOL_2D, tfl.MAX_POOL_2D):
        if x.quant.scale[0] != y.quant.scale[0] or x.quant.zero_point[0] != y.quant.zero_point[0]:
            raise op_error(op, "a pool whose output is quantized unlike its input is not supported")
        attrs.update(kernel=[o.filterHeight, o.filterWidth], strides=[o.strideH, o.strideW],
                     pads=_pads_before(x.shape, y.shape, o.filterHeight, o.filterWidth, o.strideH, o.strideW, 1, 1,
                                       o.padding))
    else:
        w = b.tensor(op.inputs[1])
        if w.data is None or w.quant is None or w.dtype != "int8":
            raise op_error(op, f"{op.op} needs constant int8 weights, '{w.name}' is {w.dtype}"
                           f"{'' if w.data is not None else ' computed at run time'}")
        if np.any(w.quant.zero_point != 0):
            raise op_error(op, "weights with a nonzero zero point (asymmetric) are not supported: TFLite's are "
                               "symmetric")
        out_channels = y.shape[-1]
        mult, shift = channel_multipliers(float(x.quant.scale[0]), w.quant.scale, y_scale)
        if mult.size == 1:
            mult, shift = np.repeat(mult, out_channels), np.repeat(shift, out_channels)
        if mult.size != out_channels:
            raise op_error(op, f"{mult.size} weight scales for {out_channels} output channels")
        attrs.update(x_zero=int(x.quant.zero_point[0]), y_zero=y_zero, mult=[int(v) for v in mult],
                     shift=[int(v) for v in shift])
        inputs.append(b.const(w.data, f"{op.name}_w"))
        k_bias = 3 if internal == tfl.TRANSPOSE_CONV else 2
        if len(op.inputs) > k_bias and op.inputs[k_bias] >= 0:
            bias = b.tensor(op.inputs[k_bias])
            want = "int64" if x.dtype == "int16" else "int32"
            if x.dtype == "int16" and getattr(o, "quantizedBiasType", 0) == _INT32:
                raise op_error(op, f"16x8 {op.op} with int32 biases (quantized_bias_type INT32) is not supported: "
                               "aotc's 16x8 kernels sum in int64")
            if bias.data is None or bias.dtype != want:
                raise op_error(op, f"bias '{bias.name}' must be constant {want}, it is {bias.dtype}")
            inputs.append(b.const(bias.data, f"{op.name}_bias"))
        if internal == tfl.TRANSPOSE_CONV:
            kh, kw = w.shape[1:3]
            attrs.update(kernel=[kh, kw], strides=[o.strideH, o.strideW], dilations=[1, 1],
                         pads=_pads_before(y.shape, x.shape, kh, kw, o.strideH, o.strideW, 1, 1, o.padding))
        elif internal != tfl.FULLY_CONNECTED:
            kh, kw = w.shape[1:3]
            attrs.update(kernel=[kh, kw], strides=[o.strideH, o.strideW],
                         dilations=[o.dilationHFactor, o.dilationWFactor],
                         pads=_pads_before(x.shape, y.shape, kh, kw, o.strideH, o.strideW, o.dilationHFactor,
                                           o.dilationWFactor, o.padding))
        elif o is not None and o.weightsFormat != 0:
            raise op_error(op, "shuffled FULLY_CONNECTED weights are not supported")
    out = b.names[op.outputs[0]]
    if attrs.get("y_shape") == []:
        raise op_error(op, f"quantized {op.op} with a scalar output is not supported")
    for key in ("mult", "shift", "m", "x_zero", "y_zero", "x1_zero", "x2_zero"):
        bad = next((v for v in np.asarray(attrs.get(key, []), object).reshape(-1) if not -2**31 <= int(v) < 2**31),
                   None)
        if bad is not None:
            raise op_error(op, f"its quantization scales give a {key} of {bad}, beyond the 32-bit integers LiteRT's "
                           "kernels compute in")
    b.nodes.append(helper.make_node(internal, inputs, [out], name=b.fresh(op.name), domain=tfl.DOMAIN, **attrs))
    b.value_infos.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(y.dtype)),
                                                       list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: out}


def lower_quantize(b: OnnxBuilder, op: TflOp) -> None:
    """QUANTIZE float32 -> int8/int16 and between int8, int16 and int32 (a requantisation), DEQUANTIZE
    int8/int16 -> float32, as TFLite's reference kernels: round(x / scale) half away from zero in float;
    (q - zero) * scale computed in double; the requantisation by a fixed-point multiplier."""
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    q = y.quant if op.op == "QUANTIZE" else x.quant
    if q is None or q.per_channel or (x.quant is not None and x.quant.per_channel):
        raise op_error(op, f"{op.op} needs per-tensor quantisation parameters")
    if op.op == "QUANTIZE" and x.dtype == "float32" and y.dtype in ("int8", "int16"):
        internal, attrs = tfl.QUANTIZE, {"scale": float(q.scale[0]), "y_zero": int(q.zero_point[0])}
    elif op.op == "QUANTIZE" and x.quant is not None and ((x.dtype in _INTS and y.dtype in _INTS and (
            x.dtype != "int32" or y.dtype != "int32")) or {x.dtype, y.dtype} == {"int8", "uint8"}):
        # between int8, int16 and int32 (TFLM's Requantize), and int8 <-> uint8 (LiteRT's)
        mult, shift = quantize_multiplier(float(np.float64(x.quant.scale[0]) / np.float64(q.scale[0])))
        internal, attrs = tfl.REQUANTIZE, {"x_zero": int(x.quant.zero_point[0]), "y_zero": int(q.zero_point[0]),
                                            "mult": mult, "shift": shift}
    elif op.op == "DEQUANTIZE" and x.dtype in ("int8", "int16") and y.dtype == "float32":
        internal, attrs = tfl.DEQUANTIZE, {"scale": float(q.scale[0]), "x_zero": int(q.zero_point[0])}
    else:
        raise op_error(op, f"{op.op} from {x.dtype} to {y.dtype} is not supported (float32, int8, int16 and int32, "
                       "and int8 <-> uint8, only)")
    out = b.names[op.outputs[0]]
    b.nodes.append(helper.make_node(internal, [b.value(op.inputs[0], NHWC)], [out], name=b.fresh(op.name),
                                    domain=tfl.DOMAIN, **attrs))
    b.value_infos.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(y.dtype)),
                                                       list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: out}


def _lower_compare(b: OnnxBuilder, op: TflOp) -> None:
    """int8 EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL (bool out): TFLite's comparisons
    bring both inputs to one real scale first (each less its zero point, times 2^8, times its own scale
    as a Q31 multiplier), so inputs quantized unlike compare by value."""
    x1, x2, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    if x1.dtype not in ("int8", "int16") or x2.dtype != x1.dtype or x2.quant is None or x1.quant.per_channel \
            or x2.quant.per_channel:
        raise op_error(op, f"quantized {op.op} of {x1.dtype} and {x2.dtype} is not supported (two per-tensor "
                       "quantized int8 or int16 inputs)")
    scales = [float(t.quant.scale[0]) for t in (x1, x2)]
    if max(scales) >= 1.0:
        raise op_error(op, f"quantized {op.op} of an input with scale {max(scales):g} >= 1 is not supported (TFLite's "
                       "kernel rescales by a multiplier below one)")
    _check_broadcast(op, x1.shape, x2.shape, y.shape)
    attrs = {"what": op.op, "y_shape": list(y.shape), "x1_zero": int(x1.quant.zero_point[0]),
             "x2_zero": int(x2.quant.zero_point[0]), "m": [*compare_multipliers(*scales), 0, 0]}
    if x1.dtype == "int16" and op.op not in ("EQUAL", "NOT_EQUAL"):  # LiteRT orders int16 by the raw integers
        if (scales[0], attrs["x1_zero"]) != (scales[1], attrs["x2_zero"]):
            raise op_error(op, f"16x8 {op.op} of inputs quantized unlike is not supported: LiteRT compares the raw "
                           "int16 integers, which then do not order as the values")
        attrs.update(x1_zero=0, x2_zero=0, m=[1 << 30, 1, 1 << 30, 1, 0, 0])  # times 1: the raw integers
    out = b.names[op.outputs[0]]
    b.nodes.append(helper.make_node(tfl.COMPARE, [b.value(op.inputs[0], NHWC), b.value(op.inputs[1], NHWC)], [out],
                                    name=b.fresh(op.name), domain=tfl.DOMAIN, **attrs))
    b.value_infos.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(bool)),
                                                       list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: out}


def _check_scale(op: TflOp, scale: float, want: float, what: str) -> None:
    if abs(scale - want) > 1e-3 * want:
        raise op_error(op, f"16x8 {op.op} needs {what} scale {want:g} (LiteRT's), not {scale:g}")


def _check_broadcast(op: TflOp, a: tuple[int, ...], b: tuple[int, ...], y: tuple[int, ...]) -> None:
    try:
        shape = np.broadcast_shapes(a, b)
    except ValueError:
        shape = None
    if shape != tuple(y) or len(y) > 6:
        raise op_error(op, f"int8 {op.op} of shapes {list(a)} and {list(b)} does not broadcast to {list(y)}")


def _mean_dims(b: OnnxBuilder, op: TflOp, shape: tuple[int, ...]) -> list[int]:
    """[outer, count, inner]: the quantized MEAN's input seen as outer x count x inner, the count averaged. Any
    axes whose span holds no other axis of more than one element (the H and W of a 4-D tensor, the last axis of
    a layer norm): LiteRT's reference kernels requantise the sum of each the same way whichever axes they are
    (reference_integer_ops::Mean for H and W, QuantizedMeanOrSum otherwise)."""
    axes = b.tensor(op.inputs[1]).data
    rank = len(shape)
    if axes is None:
        raise op_error(op, "quantized MEAN over axes computed at run time is not supported")
    picked = sorted({int(a) % rank for a in axes.reshape(-1)}) if rank else []
    if any(not -rank <= int(a) < rank for a in axes.reshape(-1)) or not picked:
        raise op_error(op, f"axes {axes.reshape(-1).tolist()} for a rank-{rank} input")
    lo, hi = picked[0], picked[-1]
    if any(a not in picked and shape[a] != 1 for a in range(lo, hi + 1)):
        raise op_error(op, f"quantized MEAN over axes {picked} of {list(shape)}, which other axes separate, is not "
                       "supported")
    return [math.prod(shape[:lo]), math.prod(shape[lo:hi + 1]), math.prod(shape[hi + 1:])]


def _pads_before(x: tuple[int, ...], y: tuple[int, ...], kh: int, kw: int, sh: int, sw: int, dh: int, dw: int,
                 padding: int) -> list[int]:
    """[top, left]: TFLite's SAME pads the smaller half before (the odd pixel goes after)."""
    if padding != _SAME:
        return [0, 0]
    return [max((y[1] - 1) * sh + (kh - 1) * dh + 1 - x[1], 0) // 2,
            max((y[2] - 1) * sw + (kw - 1) * dw + 1 - x[2], 0) // 2]


__all__ = ["INT8_OPS", "INT16_OPS", "AotcError", "is_quantized", "lower_int8", "lower_quantize"]
