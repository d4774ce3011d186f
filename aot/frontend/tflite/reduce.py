"""TFLite's reductions -> ONNX: MEAN, SUM, REDUCE_MAX / MIN / PROD, ARG_MAX / MIN and CUMSUM over
constant axes."""

from __future__ import annotations

import numpy as np
import onnx

from aot.frontend.tflite.builder import (
    NCHW,
    NHWC,
    OnnxBuilder,
    op_error,
)
from aot.frontend.tflite.lowering import (
    const_input,
    finish,
    onnx_axis,
)
from aot.frontend.tflite.reader import TflOp


def _mean(b: OnnxBuilder, op: TflOp) -> None:
    rank = len(b.tensor(op.inputs[0]).shape)
    axes = sorted({int(a) % rank for a in const_input(b, op, 1, "axes").reshape(-1)})
    keep = bool(op.options.keepDims) if op.options is not None else False
    layout = b.prefers(op.inputs[0]) if keep else NHWC
    if not keep and rank == 4 and b.prefers(op.inputs[0]) == NCHW and axes == [1, 2]:
        layout = NCHW  # a global average pool: the result [N, C] is the same in either layout
    finish(b, op, "ReduceMean", [b.value(op.inputs[0], layout)], layout,
            axes=[onnx_axis(a, rank, layout) for a in axes], keepdims=int(keep))


def _reduce(onnx_op: str):
    """SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD over constant axes, in NHWC (opset 17's ReduceSum
    takes its axes as an input, the others as an attribute)."""
    def lower(b: OnnxBuilder, op: TflOp) -> None:
        rank = len(b.tensor(op.inputs[0]).shape)
        given = const_input(b, op, 1, "axes").reshape(-1)
        if given.size and not all(-rank <= int(a) < rank for a in given):
            raise op_error(op, f"axes {given.tolist()} do not fit a rank-{rank} input")
        axes = sorted({int(a) % rank for a in given})
        keep = int(bool(op.options.keepDims)) if op.options is not None else 0
        x = b.value(op.inputs[0], NHWC)
        if b.tensor(op.inputs[0]).dtype == "int16":  # 16x8 REDUCE_MAX / MIN (ONNX's take no int16): in int32
            y = b.node(onnx_op, [b.node("Cast", [x], hint=f"{op.name}_i32", to=onnx.TensorProto.INT32)],
                       hint=op.name, axes=axes, keepdims=keep)
            finish(b, op, "Cast", [y], NHWC, to=onnx.TensorProto.INT16)
            return
        if onnx_op == "ReduceSum":
            finish(b, op, onnx_op, [x, b.const(np.array(axes, np.int64), "axes")], NHWC, keepdims=keep)
        else:
            finish(b, op, onnx_op, [x], NHWC, axes=axes, keepdims=keep)
    return lower


def _all_any(b: OnnxBuilder, op: TflOp) -> None:
    """REDUCE_ALL / REDUCE_ANY of booleans: the min / max of their int32 casts."""
    rank = len(b.tensor(op.inputs[0]).shape)
    axes = sorted({int(a) % rank for a in const_input(b, op, 1, "axes").reshape(-1)})
    keep = int(bool(op.options.keepDims)) if op.options is not None else 0
    ints = b.node("Cast", [b.value(op.inputs[0], NHWC)], hint=f"{op.name}_int", to=onnx.TensorProto.INT32)
    y = b.node("ReduceMin" if op.op == "REDUCE_ALL" else "ReduceMax", [ints], hint=op.name, axes=axes, keepdims=keep)
    finish(b, op, "Cast", [y], NHWC, to=onnx.TensorProto.BOOL)


def _arg(b: OnnxBuilder, op: TflOp) -> None:
    """ARG_MAX / ARG_MIN (the first index of the extreme, as ONNX's select_last_index=0), cast to the
    file's int32 output."""
    rank = len(b.tensor(op.inputs[0]).shape)
    axis = int(const_input(b, op, 1, "axis").reshape(-1)[0]) % rank
    onnx_op = "ArgMax" if op.op == "ARG_MAX" else "ArgMin"
    x = b.value(op.inputs[0], NHWC)
    if b.tensor(op.outputs[0]).dtype == "int64":
        finish(b, op, onnx_op, [x], NHWC, axis=axis, keepdims=0)
        return
    y = b.node(onnx_op, [x], hint=op.name, axis=axis, keepdims=0)
    finish(b, op, "Cast", [y], NHWC, to=onnx.TensorProto.INT32)


def _cumsum(b: OnnxBuilder, op: TflOp) -> None:
    rank = len(b.tensor(op.inputs[0]).shape)
    axis = int(const_input(b, op, 1, "axis").reshape(-1)[0]) % rank
    o = op.options
    finish(b, op, "CumSum", [b.value(op.inputs[0], NHWC), b.const(np.array(axis, np.int64), "axis")], NHWC,
            exclusive=int(bool(o is not None and o.exclusive)), reverse=int(bool(o is not None and o.reverse)))


OPS = {
    "MEAN": _mean, "SUM": _reduce("ReduceSum"), "REDUCE_MAX": _reduce("ReduceMax"), "REDUCE_MIN": _reduce("ReduceMin"),
    "REDUCE_PROD": _reduce("ReduceProd"), "ARG_MAX": _arg, "ARG_MIN": _arg, "CUMSUM": _cumsum,
    "REDUCE_ALL": _all_any, "REDUCE_ANY": _all_any,
}
