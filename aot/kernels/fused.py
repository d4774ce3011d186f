"""The loop a fused elementwise tree runs as (aot/passes/fuse_elementwise.py): written into the
entry point by the code generator, each op the C expression of its kernel. No kernel function:
aotc_fused.h brings the inline helpers (fast_math.h) the expressions call. Pow by a constant exponent
is the exception: no kernel computes it, fused loops alone do (pow_expression), where aotc_pow_f32
calls powf."""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_float
from aot.ir.schemas import FUSED_ELEMENTWISE as FUSED
from aot.ir.schemas import FUSED_POW, pow_by_multiplies
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


def pow_expression(exponent: float) -> str:
    """{0} ** exponent for an exponent pow_by_multiplies takes, as C: x^n by squaring, x^(k + 1/2) by
    aotc_pow_half_f32 (aotc_fused.h: sqrt(x) x^k, with pow's answers at -0 and -inf), a negative exponent
    1 / x^|e|. x * x and x * x * x are onnxruntime's own Pow by 2 and 3; the others are within a few ulp of
    powf, and give its NaNs, infinities and signed zeros: x^0 is 1 (NaN too), a negative base NaN under a
    half-integer, 0^-n an infinity of the sign of 0^n."""
    assert pow_by_multiplies(exponent), exponent
    whole = int(abs(exponent))

    def power(n: int) -> str:
        if n == 1:
            return "{0}"
        half = power(n // 2)
        square = f"({half} * {half})"
        return f"({square} * {{0}})" if n % 2 else square

    if abs(exponent) != whole:
        magnitude = f"aotc_pow_half_f32({{0}}, {whole})"
    else:
        magnitude = power(whole) if whole else "1.0f"
    return f"1.0f / {magnitude}" if exponent < 0 else magnitude


def _expression(op: str, operands: tuple, args: list[str]) -> str:
    if op == FUSED_POW:  # (the exponent is a constant: FuseElementwise checked)
        return pow_expression(operands[1][1]).format(args[0])
    return (UNARY.get(op) or BINARY[op]).format(*args)


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
        expr = _expression(op, operands, args)
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
