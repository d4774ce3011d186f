"""What the float lowerings of TFLite builtins share: the fused activation, writing an op's last node
under the output's name in a layout (`finish`), SAME padding, constant operands, axes across layouts."""

from __future__ import annotations

from typing import Any

import numpy as np

from aot.frontend.tflite.builder import (
    NCHW,
    NHWC,
    TO_NCHW,
    OnnxBuilder,
    float_const,
    op_error,
)
from aot.frontend.tflite.reader import TflOp

# ActivationFunctionType
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6, ACT_TANH = 0, 1, 2, 3, 4  # ActivationFunctionType


SAME = 0  # Padding.SAME (VALID = 1)


def fused_act(b: OnnxBuilder, x: str, act: int, op: TflOp) -> str:
    if act == ACT_NONE:
        return x
    if act == ACT_RELU:
        return b.node("Relu", [x], hint=f"{op.name}_relu")
    if act in (ACT_RELU6, ACT_RELU_N1_TO_1):
        lo, hi = (0.0, 6.0) if act == ACT_RELU6 else (-1.0, 1.0)
        return b.node("Clip", [x, b.const(np.float32(lo), "lo"), b.const(np.float32(hi), "hi")],
                      hint=f"{op.name}_clip")
    if act == ACT_TANH:
        return b.node("Tanh", [x], hint=f"{op.name}_tanh")
    raise op_error(op, f"fused activation {act} is not supported")


def finish(b: OnnxBuilder, op: TflOp, x_final_op: str, inputs: list[str], layout: str, act: int = ACT_NONE,
            **attrs: Any) -> None:
    """Write `x_final_op` then the fused activation; the last node writes the op's output."""
    out = op.outputs[0]
    if act == ACT_NONE:
        b.node(x_final_op, inputs, [b.out_name(out, layout)], hint=op.name, **attrs)
        b.set(out, layout, b.nodes[-1].output[0])
        return
    y = b.node(x_final_op, inputs, hint=op.name, **attrs)
    fused_act(b, y, act, op)
    b.nodes[-1].output[0] = name = b.out_name(out, layout)
    b.set(out, layout, name)


def atan2(b: OnnxBuilder, y: str, x: str, hint: str, out: str | None = None) -> str:
    """atan2(y, x) of float32 values: atan(y / x), plus pi (y >= 0) or minus pi (y < 0) where x < 0, and 0
    where both are 0 (y / x is then NaN); x = 0 alone gives atan(+-inf) = +-pi/2, as atan2 does. The last
    node writes `out` when given."""
    zero = b.const(np.float32(0.0), "zero")
    q = b.node("Atan", [b.node("Div", [y, x], hint=f"{hint}_ratio")], hint=f"{hint}_atan")
    turn = b.node("Where", [b.node("Less", [y, zero], hint=f"{hint}_y_neg"), b.const(np.float32(-np.pi), "minus_pi"),
                            b.const(np.float32(np.pi), "pi")], hint=f"{hint}_turn")
    left = b.node("Where", [b.node("Less", [x, zero], hint=f"{hint}_x_neg"),
                            b.node("Add", [q, turn], hint=f"{hint}_turned"), q], hint=f"{hint}_left")
    origin = b.node("And", [b.node("Equal", [x, zero], hint=f"{hint}_x_zero"),
                            b.node("Equal", [y, zero], hint=f"{hint}_y_zero")], hint=f"{hint}_origin")
    return b.node("Where", [origin, zero, left], [out] if out else None, hint=hint)


def same_pads(size: int, k: int, s: int, d: int, out: int) -> tuple[int, int]:
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def window_pads(b: OnnxBuilder, op: TflOp, kh: int, kw: int, sh: int, sw: int, dh: int = 1, dw: int = 1) -> list[int]:
    opts = op.options
    x, y = b.tensor(op.inputs[0]).shape, b.tensor(op.outputs[0]).shape
    if opts.padding != SAME:
        return [0, 0, 0, 0]
    top, bottom = same_pads(x[1], kh, sh, dh, y[1])
    left, right = same_pads(x[2], kw, sw, dw, y[2])
    return [top, left, bottom, right]


def bias_input(b: OnnxBuilder, op: TflOp, k: int) -> list[str]:
    if len(op.inputs) <= k or op.inputs[k] < 0:
        return []
    return [b.value(op.inputs[k])]


def binary_inputs(b: OnnxBuilder, op: TflOp) -> tuple[list[str], str]:
    """An elementwise op's two inputs and its layout: NCHW when an input already is and every other
    input is 4-D or a constant (broadcast along the channels, transposed here)."""
    ins = op.inputs[:2]
    y_rank = len(b.tensor(op.outputs[0]).shape)
    layout = NCHW if y_rank == 4 and any(b.prefers(i) == NCHW for i in ins) else NHWC
    names = []
    for i in ins:
        t = b.tensor(i)
        if layout == NCHW and len(t.shape) < 4:
            if t.data is None:
                layout = NHWC
                break
    for i in ins:
        t = b.tensor(i)
        if layout == NCHW and len(t.shape) < 4:  # a constant broadcast along the trailing (channel) axes
            data = float_const(t).reshape((1,) * (4 - len(t.shape)) + t.shape).transpose(TO_NCHW)
            names.append(b.const(np.ascontiguousarray(data), f"{b.names[i]}_nchw"))
        else:
            names.append(b.value(i, layout))
    return names, layout


def const_input(b: OnnxBuilder, op: TflOp, k: int, what: str) -> np.ndarray:
    """Input k, a constant of integers (axes, shapes, paddings, indices: every such input of TFLite's ops)."""
    t = b.tensor(op.inputs[k])
    if t.data is None:
        raise op_error(op, f"the {what} are computed at run time; aotc needs them constant")
    if not np.issubdtype(t.data.dtype, np.integer):
        raise op_error(op, f"the {what} ('{t.name}') are {t.dtype}; {op.op} takes them as integers")
    return t.data


def float_only(b: OnnxBuilder, op: TflOp, k: int) -> None:
    dtype = b.tensor(op.inputs[k]).dtype
    if dtype != "float32":
        raise op_error(op, f"{op.op} of {dtype} tensors is not supported (float32 only)")


def onnx_axis(axis: int, rank: int, layout: str) -> int:
    axis = axis + rank if axis < 0 else axis
    return TO_NCHW.index(axis) if layout == NCHW else axis
