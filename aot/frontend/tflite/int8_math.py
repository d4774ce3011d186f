"""Issue 50's quantized TFLite ops beyond int8.py's: BATCH_MATMUL (int8 and 16x8), RESIZE_BILINEAR (int8,
int16), SQUARED_DIFFERENCE (int8), and the elementwise ops LiteRT's reference kernels compute by a table
(EXP, GELU, NEG on int8: 256 entries, TflLut; EXP, LOG, GELU, RSQRT on int16: LUTPopulate<int16_t>'s 513
interpolated anchors, TflLut16; NEG on int16: ONNX Neg of the raw integers). Each lowering computes what
LiteRT's Prepare computes (quant.py) and refuses, by name, what the reference refuses or what aotc would get
wrong.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import helper

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.elementwise import floor_div_ints
from aot.frontend.tflite.quant import (
    lut_populate_int8,
    lut_populate_int16,
    matmul_multiplier,
    quantize_multiplier,
    resize_scale,
    squared_difference_multipliers,
    unary_transform,
)
from aot.frontend.tflite.reader import TflOp, TflTensor
from aot.ir import tflite_ops as tfl

INT8 = ("BATCH_MATMUL", "RESIZE_BILINEAR", "SQUARED_DIFFERENCE", "EXP", "GELU", "NEG", "SUM", "REDUCE_PROD",
        "FLOOR_DIV", "FLOOR_MOD")
INT16 = ("BATCH_MATMUL", "RESIZE_BILINEAR", "EXP", "LOG", "GELU", "RSQRT", "NEG", "SUM", "REDUCE_PROD", "FLOOR_DIV",
         "FLOOR_MOD")


def lowers(b: OnnxBuilder, op: TflOp) -> bool:
    """Whether this module lowers the quantized op (by its name and its input's type)."""
    x = b.tensor(op.inputs[0])
    return op.op in (INT16 if x.dtype == "int16" else INT8 if x.dtype == "int8" else ())


def lower(b: OnnxBuilder, op: TflOp) -> None:
    {"BATCH_MATMUL": _batch_matmul, "RESIZE_BILINEAR": _resize_bilinear,
     "SQUARED_DIFFERENCE": _squared_difference, "SUM": _sum,
     "REDUCE_PROD": _reduce_prod, "FLOOR_DIV": _raw_floor, "FLOOR_MOD": _raw_floor}.get(op.op, _table)(b, op)


def _qp(t: TflTensor) -> tuple[float, int]:
    return float(t.quant.scale[0]), int(t.quant.zero_point[0])


def _per_tensor(op: TflOp, *ts: TflTensor) -> None:
    for t in ts:
        if t.quant is None or t.quant.per_channel:
            raise op_error(op, f"quantized {op.op} needs per-tensor quantized tensors ('{t.name}' is not)")


def _input(b: OnnxBuilder, idx: int) -> str:
    t = b.tensor(idx)
    return b.const(t.data, b.names[idx]) if t.data is not None else b.value(idx, NHWC)


def _emit(b: OnnxBuilder, op: TflOp, internal: str, inputs: list[str], y: TflTensor, **attrs) -> None:
    out = b.names[op.outputs[0]]
    b.nodes.append(helper.make_node(internal, inputs, [out], name=b.fresh(op.name), domain=tfl.DOMAIN,
                                    y_shape=list(y.shape), **attrs))
    b.value_infos.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(y.dtype)),
                                                       list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: out}


def _batch_matmul(b: OnnxBuilder, op: TflOp) -> None:
    """LiteRT's reference_ops::BatchMatMul: int8 x int8 -> int8 (int32 sums), int16 x int16 or int16 x int8 ->
    int16 (int64 sums, zero points 0); batch dims broadcast; adj_x / adj_y read the matrices transposed."""
    x1, x2, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    pair = (x1.dtype, x2.dtype, y.dtype)
    if pair not in (("int8", "int8", "int8"), ("int16", "int16", "int16"), ("int16", "int8", "int16")):
        raise op_error(op, f"quantized BATCH_MATMUL of {x1.dtype} and {x2.dtype} to {y.dtype} is not supported "
                       "(int8 x int8 -> int8, int16 x int16 or int16 x int8 -> int16)")
    _per_tensor(op, x1, x2, y)
    if x1.dtype == "int16" and any(_qp(t)[1] != 0 for t in (x1, x2, y)):
        raise op_error(op, "16x8 BATCH_MATMUL needs zero points 0 (LiteRT refuses others)")
    if not (2 <= len(x1.shape) <= 5 and 2 <= len(x2.shape) <= 5):
        raise op_error(op, "BATCH_MATMUL needs inputs of rank 2 to 5 (as LiteRT)")
    o = op.options
    adj_x, adj_y = bool(o is not None and o.adjX), bool(o is not None and o.adjY)
    mult, shift = matmul_multiplier(_qp(x1)[0], _qp(x2)[0], _qp(y)[0])
    _emit(b, op, tfl.BATCH_MATMUL, [_input(b, op.inputs[0]), _input(b, op.inputs[1])], y,
          x1_zero=_qp(x1)[1], x2_zero=_qp(x2)[1], y_zero=_qp(y)[1], mult=mult, shift=shift, adj_x=int(adj_x),
          adj_y=int(adj_y))


def _resize_bilinear(b: OnnxBuilder, op: TflOp) -> None:
    """ResizeBilinearInteger: the raw integers interpolated in 10-bit fixed point, so the output must be
    quantized as the input (LiteRT does not requantise: other parameters would give wrong values)."""
    x, size, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    _per_tensor(op, x, y)
    if x.dtype != y.dtype or _qp(x) != _qp(y):
        raise op_error(op, "quantized RESIZE_BILINEAR whose output is quantized unlike its input is not supported "
                       "(LiteRT interpolates the integers and does not requantise)")
    if size.data is None or len(x.shape) != 4:
        raise op_error(op, "RESIZE_BILINEAR needs a 4-D input and a constant size")
    o = op.options
    align, half = bool(o is not None and o.alignCorners), bool(o is not None and o.halfPixelCenters)
    if align and half:
        raise op_error(op, "RESIZE_BILINEAR with both align_corners and half_pixel_centers (LiteRT refuses it)")
    _, h, w, _ = x.shape
    _, oh, ow, _ = y.shape
    _emit(b, op, tfl.RESIZE_BILINEAR, [b.value(op.inputs[0], NHWC)], y, scale_h=resize_scale(h, oh, align),
          scale_w=resize_scale(w, ow, align), half_pixel=int(half))


def _squared_difference(b: OnnxBuilder, op: TflOp) -> None:
    """SQUARED_DIFFERENCE's int8 kernel: both inputs rescaled to twice the larger scale after a left shift
    of 7, their difference squared in int32 and requantised (double rounding each time)."""
    x1, x2, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    if x2.dtype != "int8" or y.dtype != "int8":
        raise op_error(op, f"quantized SQUARED_DIFFERENCE of {x1.dtype} and {x2.dtype} is not supported (int8)")
    _per_tensor(op, x1, x2, y)
    try:
        shape = np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        shape = None
    if shape != tuple(y.shape) or len(y.shape) > 6:
        raise op_error(op, f"SQUARED_DIFFERENCE of shapes {list(x1.shape)} and {list(x2.shape)} does not "
                       f"broadcast to {list(y.shape)}")
    m = squared_difference_multipliers(_qp(x1)[0], _qp(x2)[0], _qp(y)[0])
    if m[5] > 0:
        raise op_error(op, "int8 SQUARED_DIFFERENCE whose output multiplier is 1 or more is not supported (LiteRT's "
                       "kernel requires it below one)")
    _emit(b, op, tfl.SQUARED_DIFFERENCE, [_input(b, op.inputs[0]), _input(b, op.inputs[1])], y, y_min=-128,
          y_max=127, x1_zero=_qp(x1)[1], x2_zero=_qp(x2)[1], y_zero=_qp(y)[1], m=list(m))


def _reduction(b: OnnxBuilder, op: TflOp, what: str) -> tuple[TflTensor, TflTensor, tuple, tuple, list[int]]:
    """A quantized reduction's operands as LiteRT's kernels take them: x and y of one type, per-tensor, int16 with
    zero points 0; the axes constant, each once, in order. Returns x, y, their (scale, zero point)s, the axes."""
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if y.dtype != x.dtype:
        raise op_error(op, f"quantized {what} from {x.dtype} to {y.dtype} is not supported")
    _per_tensor(op, x, y)
    xq, yq = _qp(x), _qp(y)
    if x.dtype == "int16" and (xq[1] != 0 or yq[1] != 0):
        raise op_error(op, f"16x8 {what} needs zero points 0 (LiteRT's int16)")
    axes_t = b.tensor(op.inputs[1])
    if axes_t.data is None:
        raise op_error(op, "its axes are computed at run time; aotc needs them constant")
    rank = len(x.shape)
    return x, y, xq, yq, sorted({int(a) % rank for a in np.asarray(axes_t.data).reshape(-1)})


def _sum(b: OnnxBuilder, op: TflOp) -> None:
    """Quantized SUM as LiteRT's default kernel computes it (its reference kernel reads the data as uint8: nothing
    correct to be exact with): the raw integers summed exactly, then round(sum * scale + bias) in float32,
    scale = x scale / y scale and bias = -x_zero * scale * count as QuantizedMeanOrSum forms them. Where the sums
    fit int32 (count * 128, count * 32768 for int16, below 2^31) one TflSum over [outer, count, inner] (the reduced
    axes consecutive, else moved last by a Transpose); else ONNX Cast and ReduceSum in float64, then
    TflSumRequant."""
    x, y, (xs, xz), (ys, yz), axes = _reduction(b, op, "SUM")
    keep = int(bool(op.options.keepDims)) if op.options is not None else 0
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    f32 = np.float32
    scale = f32(f32(xs) / f32(ys))
    bias = f32(f32(f32(-xz) * scale) * f32(count))
    lo, hi = (-128, 127) if x.dtype == "int8" else (-32768, 32767)
    out = b.names[op.outputs[0]]
    if axes and count * (hi + 1) < 2**31:
        rank = len(x.shape)
        v, first, last = b.value(op.inputs[0], NHWC), axes[0], axes[-1]
        if axes != list(range(first, last + 1)):
            kept = [a for a in range(rank) if a not in axes]
            v = b.node("Transpose", [v], hint=f"{op.name}_reduced_last", perm=kept + axes)
            inner = 1
        else:
            inner = int(np.prod([x.shape[a] for a in range(last + 1, rank)], dtype=np.int64))
        b.nodes.append(helper.make_node(tfl.SUM, [v], [out], name=b.fresh(op.name), domain=tfl.DOMAIN, n=count,
                                        inner=inner, scale=float(scale), bias=float(bias), y_zero=yz, y_min=lo,
                                        y_max=hi))
        b.value_infos.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(y.dtype)),
                                                           list(y.shape)))
        b.values[op.outputs[0]] = {NHWC: out}
        return
    # summed in float64, exact for any count below 2^37 (the sums of int16 stay under 2^53), then int32
    wide = b.node("Cast", [b.value(op.inputs[0], NHWC)], hint=f"{op.name}_f64", to=helper.TensorProto.DOUBLE)
    sums = b.node("ReduceSum", [wide, b.const(np.array(axes, np.int64), "axes")], hint=f"{op.name}_sums",
                  keepdims=keep)
    sums = b.node("Cast", [sums], hint=f"{op.name}_i32", to=helper.TensorProto.INT32)
    b.nodes.append(helper.make_node(tfl.SUM_REQUANT, [sums], [out], name=b.fresh(op.name), domain=tfl.DOMAIN,
                                    scale=float(scale), bias=float(bias), y_zero=yz, y_min=lo, y_max=hi))
    b.value_infos.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(y.dtype)),
                                                       list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: out}


def _reduce_prod(b: OnnxBuilder, op: TflOp) -> None:
    """REDUCE_PROD of int8 / int16 (LiteRT's reference QuantizedReduceProd): the reduced axes moved last in order (a
    Transpose; each output's elements then come in LiteRT's row-major order), TflReduceProd over [rows, n], a
    Reshape to the output. Its multiplier is x scale / y scale^(1 / n) in double (GetQuantProdScaling)."""
    x, y, (xs, xz), (ys, yz), axes = _reduction(b, op, "REDUCE_PROD")
    rank = len(x.shape)
    kept = [a for a in range(rank) if a not in axes]
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    mult, shift = quantize_multiplier(float(np.float32(xs)) / math.pow(float(np.float32(ys)), 1.0 / n))
    if shift >= 8:
        raise op_error(op, f"REDUCE_PROD whose multiplier is 2^{shift} or more is not supported (LiteRT's needs less)")
    v = b.value(op.inputs[0], NHWC)
    if kept + axes != list(range(rank)):
        v = b.node("Transpose", [v], hint=f"{op.name}_reduced_last", perm=kept + axes)
    rows = int(np.prod([x.shape[a] for a in kept], dtype=np.int64))
    v = b.node("Reshape", [v, b.const(np.array([rows, n], np.int64), "rows_n")], hint=f"{op.name}_rows")
    prod = b.fresh(f"{op.name}_prod")
    b.nodes.append(helper.make_node(tfl.REDUCE_PROD, [v], [prod], name=b.fresh(op.name), domain=tfl.DOMAIN,
                                    x_zero=xz, y_zero=yz, mult=mult, shift=shift))
    b.value_infos.append(helper.make_tensor_value_info(prod, helper.np_dtype_to_tensor_dtype(np.dtype(x.dtype)),
                                                       [rows]))
    b.node("Reshape", [prod, b.const(np.array(y.shape, np.int64), "y_shape")], [b.names[op.outputs[0]]],
           hint=op.name)
    b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}


def _raw_floor(b: OnnxBuilder, op: TflOp) -> None:
    """int8 / int16 FLOOR_DIV and FLOOR_MOD as LiteRT's kernels compute them (default and reference alike): on the
    raw integers, whatever the scales and zero points say, so a quantized model gets what LiteRT gives it.
    FLOOR_DIV's one quotient out of the type (the least value // -1) is undefined there (a double cast to int8 out
    of range: -128 from its scalar loop, 127 from its 4-D one, measured); here it wraps. FLOOR_MOD is ONNX Mod (the
    divisor's sign)."""
    x1, x2, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    if not x1.dtype == x2.dtype == y.dtype:
        raise op_error(op, f"quantized {op.op} of {x1.dtype} and {x2.dtype} to {y.dtype} is not supported (LiteRT "
                       "takes one type)")
    names = [_input(b, op.inputs[0]), _input(b, op.inputs[1])]
    out = b.names[op.outputs[0]]
    if op.op == "FLOOR_MOD":
        b.node("Mod", names, [out], hint=op.name, fmod=0)
    else:
        q = floor_div_ints(b, names, op.name)
        b.node("Cast", [q], [out], hint=op.name, to=helper.np_dtype_to_tensor_dtype(np.dtype(y.dtype)))
    b.values[op.outputs[0]] = {NHWC: out}


def _table(b: OnnxBuilder, op: TflOp) -> None:
    """The table ops: int8 EXP and GELU (LUTPopulate<int8_t>), NEG (LiteRT negates the raw integers, so its
    table is -x, -128 staying -128 as the int8 cast wraps); int16 EXP, LOG, GELU, RSQRT (LUTPopulate<int16_t>,
    zero points 0)."""
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if y.dtype != x.dtype:
        raise op_error(op, f"quantized {op.op} from {x.dtype} to {y.dtype} is not supported")
    _per_tensor(op, x, y)
    (xs, xz), (ys, yz) = _qp(x), _qp(y)
    approximate = bool(op.op == "GELU" and op.options is not None and op.options.approximate)
    if x.dtype == "int8":
        if op.op == "NEG":
            table = (-np.arange(-128, 128)).astype(np.int8)  # (int8)(-x): -128 wraps to itself
        else:
            table = lut_populate_int8(unary_transform(op.op, ys, yz, 8, approximate), xs, xz, ys, yz)
        _emit(b, op, tfl.LUT, [b.value(op.inputs[0], NHWC)], y, table=[int(v) for v in table], what=op.op)
        return
    if op.op == "NEG":  # LiteRT negates the raw int16 integers (-32768 wraps to itself): ONNX Neg, which wraps alike
        b.node("Neg", [b.value(op.inputs[0], NHWC)], [b.names[op.outputs[0]]], hint=op.name)
        b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}
        return
    if xz != 0 or yz != 0:
        raise op_error(op, f"16x8 {op.op} needs zero points 0 (LiteRT's int16)")
    table = lut_populate_int16(unary_transform(op.op, ys, yz, 16, approximate), xs, xz, ys, yz)
    _emit(b, op, tfl.LUT16, [b.value(op.inputs[0], NHWC)], y, table=[int(v) for v in table], what=op.op)


__all__ = ["INT8", "INT16", "lower", "lowers"]
