"""TFLite's elementwise builtins -> ONNX: unary math, binary arithmetic and comparisons (broadcast, in
the layout the inputs already have), clamps, casts and selects (float and the unquantized types)."""

from __future__ import annotations

import numpy as np
from onnx import helper

from aot.frontend.onnx.contrib import DOMAIN as CONTRIB_DOMAIN
from aot.frontend.tflite.builder import (
    NHWC,
    OnnxBuilder,
)
from aot.frontend.tflite.lowering import (
    ACT_NONE,
    atan2,
    binary_inputs,
    finish,
    float_only,
)
from aot.frontend.tflite.reader import TflOp

_UNARY = {"LOGISTIC": "Sigmoid", "TANH": "Tanh", "RELU": "Relu", "ABS": "Abs", "EXP": "Exp", "NEG": "Neg",
          "SQRT": "Sqrt", "RSQRT": None, "LOG": "Log", "FLOOR": "Floor", "CEIL": "Ceil", "ELU": "Elu",
          "HARD_SWISH": "HardSwish", "SIN": "Sin", "COS": "Cos", "SQUARE": None, "ROUND": "Round",
          "LOGICAL_NOT": "Not", "SIGN": "Sign"}


_BINARY = {"ADD": "Add", "SUB": "Sub", "MUL": "Mul", "DIV": "Div", "MAXIMUM": "Max", "MINIMUM": "Min",
           "LESS": "Less", "LESS_EQUAL": "LessOrEqual", "GREATER": "Greater", "GREATER_EQUAL": "GreaterOrEqual",
           "EQUAL": "Equal", "LOGICAL_AND": "And", "LOGICAL_OR": "Or", "PRELU": "PRelu",
           "POW": "Pow", "BITWISE_XOR": "BitwiseXor"}


def _binary(b: OnnxBuilder, op: TflOp) -> None:
    names, layout = binary_inputs(b, op)
    act = getattr(op.options, "fusedActivationFunction", ACT_NONE) if op.options is not None else ACT_NONE
    finish(b, op, _BINARY[op.op], names, layout, act)


def _not_equal(b: OnnxBuilder, op: TflOp) -> None:
    names, layout = binary_inputs(b, op)
    finish(b, op, "Not", [b.node("Equal", names, hint=f"{op.name}_equal")], layout)


def _squared_difference(b: OnnxBuilder, op: TflOp) -> None:
    """(x - y)^2: a Sub, then a Mul of the difference by itself."""
    names, layout = binary_inputs(b, op)
    d = b.node("Sub", names, hint=f"{op.name}_sub")
    finish(b, op, "Mul", [d, d], layout)


def _floor_mod(b: OnnxBuilder, op: TflOp) -> None:
    """FLOOR_MOD: the remainder with the divisor's sign. Integers: ONNX Mod (fmod 0 is that remainder).
    Floats: as TFLite's kernel, C's fmodf (Mod with fmod 1), plus the divisor where the remainder is
    nonzero and its sign is not the divisor's."""
    names, layout = binary_inputs(b, op)
    if b.tensor(op.inputs[0]).dtype != "float32":
        finish(b, op, "Mod", names, layout, fmod=0)
        return
    r = b.node("Mod", names, hint=f"{op.name}_fmod", fmod=1)
    zero = b.const(np.float32(0.0), "zero")
    signs_differ = b.node("Xor", [b.node("Less", [names[1], zero], hint=f"{op.name}_y_neg"),
                                  b.node("Less", [r, zero], hint=f"{op.name}_r_neg")], hint=f"{op.name}_differ")
    nonzero = b.node("Not", [b.node("Equal", [r, zero], hint=f"{op.name}_r_zero")], hint=f"{op.name}_nonzero")
    fix = b.node("And", [nonzero, signs_differ], hint=f"{op.name}_fix")
    finish(b, op, "Where", [fix, b.node("Add", [r, names[1]], hint=f"{op.name}_plus_y"), r], layout)


def _gelu(b: OnnxBuilder, op: TflOp) -> None:
    """GELU: x Phi(x) (com.microsoft Gelu), or with approximate=true the tanh form TFLite's kernel uses
    (com.microsoft FastGelu, the same formula)."""
    float_only(b, op, 0)
    layout = b.prefers(op.inputs[0])
    approximate = bool(op.options is not None and getattr(op.options, "approximate", False))
    finish(b, op, "FastGelu" if approximate else "Gelu", [b.value(op.inputs[0], layout)], layout,
           domain=CONTRIB_DOMAIN)


def _unary(b: OnnxBuilder, op: TflOp) -> None:
    layout = b.prefers(op.inputs[0])
    x = b.value(op.inputs[0], layout)
    if op.op == "RSQRT":
        finish(b, op, "Reciprocal", [b.node("Sqrt", [x], hint=f"{op.name}_sqrt")], layout)
        return
    if op.op == "SQUARE":
        finish(b, op, "Mul", [x, x], layout)
        return
    finish(b, op, _UNARY[op.op], [x], layout)


def _clip(lo: float, hi: float):
    def lower(b: OnnxBuilder, op: TflOp) -> None:
        layout = b.prefers(op.inputs[0])
        finish(b, op, "Clip", [b.value(op.inputs[0], layout), b.const(np.float32(lo), "lo"),
                                b.const(np.float32(hi), "hi")], layout)
    return lower


def _leaky_relu(b: OnnxBuilder, op: TflOp) -> None:
    layout = b.prefers(op.inputs[0])
    finish(b, op, "LeakyRelu", [b.value(op.inputs[0], layout)], layout, alpha=float(op.options.alpha))


def _cast(b: OnnxBuilder, op: TflOp) -> None:
    to = helper.np_dtype_to_tensor_dtype(np.dtype(b.tensor(op.outputs[0]).dtype))
    layout = b.prefers(op.inputs[0])
    finish(b, op, "Cast", [b.value(op.inputs[0], layout)], layout, to=to)


def floor_div_ints(b: OnnxBuilder, names: list[str], hint: str) -> str:
    """a // b floored, on int32 copies of two integer tensors (LiteRT's floor(double(a) / double(b))): ONNX's
    integer Div truncates, so one is taken off where the remainder is nonzero and its sign is not the divisor's."""
    i32 = helper.np_dtype_to_tensor_dtype(np.dtype(np.int32))
    a, d = (b.node("Cast", [n], hint=f"{hint}_wide{k}", to=i32) for k, n in enumerate(names))
    q = b.node("Div", [a, d], hint=f"{hint}_trunc")
    r = b.node("Sub", [a, b.node("Mul", [q, d], hint=f"{hint}_qd")], hint=f"{hint}_rem")
    zero = b.const(np.int32(0), "zero")
    differ = b.node("Xor", [b.node("Less", [r, zero], hint=f"{hint}_r_neg"),
                            b.node("Less", [d, zero], hint=f"{hint}_d_neg")], hint=f"{hint}_differ")
    fix = b.node("And", [b.node("Not", [b.node("Equal", [r, zero], hint=f"{hint}_r_zero")], hint=f"{hint}_nonzero"),
                         differ], hint=f"{hint}_fix")
    return b.node("Sub", [q, b.node("Cast", [fix], hint=f"{hint}_one", to=i32)], hint=f"{hint}_floor")


def _floor_div(b: OnnxBuilder, op: TflOp) -> None:
    """FLOOR_DIV: floats, Floor of the Div; int32, floor_div_ints."""
    names, layout = binary_inputs(b, op)
    dtype = b.tensor(op.inputs[0]).dtype
    if dtype == "int32":
        finish(b, op, "Identity", [floor_div_ints(b, names, op.name)], layout)
        return
    float_only(b, op, 0)
    finish(b, op, "Floor", [b.node("Div", names, hint=f"{op.name}_div")], layout)


def _select(b: OnnxBuilder, op: TflOp) -> None:
    """SELECT / SELECT_V2 (the latter broadcasting, as numpy does) are ONNX Where; on quantized integers
    when both inputs are quantized as the output (ops.py's move check)."""
    if b.tensor(op.inputs[1]).quant is None:
        float_only(b, op, 1)
    finish(b, op, "Where", [b.value(i, NHWC) for i in op.inputs[:3]], NHWC)


def _atan2(b: OnnxBuilder, op: TflOp) -> None:
    float_only(b, op, 0)
    (y, x), layout = binary_inputs(b, op)
    out = b.out_name(op.outputs[0], layout)
    atan2(b, y, x, op.name, out)
    b.set(op.outputs[0], layout, out)


def _add_n(b: OnnxBuilder, op: TflOp) -> None:
    finish(b, op, "Sum", [b.value(i, NHWC) for i in op.inputs], NHWC)


OPS = {
    **{k: _binary for k in _BINARY}, **{k: _unary for k in _UNARY},
    "RELU6": _clip(0.0, 6.0), "RELU_N1_TO_1": _clip(-1.0, 1.0), "RELU_0_TO_1": _clip(0.0, 1.0),
    "LEAKY_RELU": _leaky_relu, "SQUARED_DIFFERENCE": _squared_difference, "NOT_EQUAL": _not_equal,
    "SELECT": _select, "SELECT_V2": _select, "ADD_N": _add_n, "CAST": _cast, "FLOOR_DIV": _floor_div,
    "FLOOR_MOD": _floor_mod, "GELU": _gelu, "ATAN2": _atan2,
}
