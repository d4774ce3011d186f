"""The loop a fused elementwise tree runs as (aot/passes/fuse_elementwise.py): written into the
entry point by the code generator, each op the C expression of its kernel. No kernel function:
aotc_fused.h brings the inline helpers (fast_math.h) the expressions call."""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_float
from aot.ir.schemas import FUSED_ELEMENTWISE as FUSED
from aot.kernels.base import HostOp, NodeContext

# ONNX op -> C expression of its operands {0}, {1}, as runtime_c/kernels/elementwise/elementwise.c's f32 kernels
UNARY = {
    "Relu": "{0} < 0.0f ? 0.0f : {0}",
    "Sigmoid": "aotc_sigmoid_poly({0})",
    "Tanh": "aotc_tanh_poly({0})",
    "Neg": "-{0}",
    "Abs": "fabsf({0})",
    "Reciprocal": "1.0f / {0}",
    "Sqrt": "sqrtf({0})",
    "Exp": "expf({0})",
}
BINARY = {
    "Add": "{0} + {1}",
    "Sub": "{0} - {1}",
    "Mul": "{0} * {1}",
    "Div": "{0} / {1}",
    "Max": "({0} > {1} || {0} != {0}) ? {0} : {1}",
    "Min": "({0} < {1} || {0} != {0}) ? {0} : {1}",
}


def _emit(ctx: NodeContext) -> None:
    y = ctx.outputs[0]
    n = int(np.prod(ctx.shape(y), dtype=np.int64))
    ins = [ctx.ptr(i) for i in ctx.inputs]
    program = ctx.attrs["program"]
    ctx.comment(" ".join(f"v{j} = {op}({', '.join(_operand_text(o) for o in ops)})"
                         for j, (op, ops) in enumerate(program)))
    ctx.line(f"for (size_t aotc_i = 0; aotc_i < {n}u; ++aotc_i) {{")
    for j, (op, operands) in enumerate(program):
        args = [_c_operand(o, ins) for o in operands]
        expr = (UNARY.get(op) or BINARY[op]).format(*args)
        target = f"{ctx.ptr(y)}[aotc_i]" if j == len(program) - 1 else f"const float v{j}"
        ctx.line(f"    {target} = {expr};")
    ctx.line("}")


def _operand_text(o: tuple) -> str:
    kind, v = o
    return f"in{v}" if kind == "in" else f"v{v}" if kind == "v" else repr(v)


def _c_operand(o: tuple, ins: list[str]) -> str:
    kind, v = o
    if kind == "in":
        return f"{ins[v]}[aotc_i]"
    if kind == "v":
        return f"v{v}"
    return f"({c_float(v)})"


OPS: dict[str, HostOp] = {FUSED: HostOp(_emit, family="fused", inplace=0, inplace_any=True)}
