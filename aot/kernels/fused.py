"""The loop a fused elementwise tree runs as (aot/passes/fuse_elementwise.py): written into the
entry point by the code generator, each op the C expression of its kernel. No kernel function:
aotc_fused.h brings the inline helpers (fast_math.h) the expressions call."""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_float
from aot.kernels.base import HostOp, NodeContext
from aot.passes.fuse_elementwise import BINARY, FUSED, UNARY


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
