"""Elementwise ops: unary activations (in place) and numpy-broadcasting binary ops."""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_float, c_ints
from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext

MAX_RANK = 8


def broadcast_layout(out: tuple[int, ...], a: tuple[int, ...], b: tuple[int, ...]
                     ) -> tuple[list[int], list[int], list[int]]:
    """(shape, a_strides, b_strides) after dropping size-1 output dims and merging dims that
    broadcast alike, so the C loop nest is as shallow as possible."""
    rank = len(out)

    def strides(shape: tuple[int, ...]) -> list[int]:
        shape = (1,) * (rank - len(shape)) + tuple(shape)
        st, acc = [0] * rank, 1
        for k in range(rank - 1, -1, -1):
            st[k] = acc if shape[k] != 1 else 0
            acc *= shape[k]
        return st

    sa, sb = strides(a), strides(b)
    dims = [(out[k], sa[k], sb[k]) for k in range(rank) if out[k] != 1]
    merged: list[list[int]] = []
    for n, x, y in dims:
        if merged:
            pn, px, py = merged[-1]
            if px == x * n and py == y * n:  # previous dim is contiguous over this one, for a and b
                merged[-1] = [pn * n, x, y]
                continue
        merged.append([n, x, y])
    if not merged:
        merged = [[1, 0, 0]]
    if len(merged) > MAX_RANK:
        raise ValueError("broadcast rank too large")
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


def _emit_binary(kernel: str):
    def emit(ctx: NodeContext) -> None:
        a, b = ctx.inputs[0], ctx.inputs[1]
        y = ctx.outputs[0]
        shape, sa, sb = broadcast_layout(ctx.shape(y), ctx.shape(a), ctx.shape(b))
        p = ctx.params("aotc_broadcast", {
            "rank": str(len(shape)), "shape": c_ints(shape), "a_strides": c_ints(sa), "b_strides": c_ints(sb),
        }, comment=f"{ctx.node.op}: {list(ctx.shape(a))} with {list(ctx.shape(b))} -> {list(ctx.shape(y))}")
        ctx.call(f"aotc_{kernel}_f32", p, ctx.ptr(a), ctx.ptr(b), ctx.ptr(y))
    return emit


def _emit_unary(kernel: str, *attrs: str):
    def emit(ctx: NodeContext) -> None:
        x, y = ctx.inputs[0], ctx.outputs[0]
        n = int(np.prod(ctx.shape(y), dtype=np.int64))
        extra = [c_float(ctx.attrs[k]) for k in attrs]
        ctx.call(f"aotc_{kernel}_f32", f"{n}u", ctx.ptr(x), ctx.ptr(y), *extra)
    return emit


def _emit_gelu(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    n = int(np.prod(ctx.shape(y), dtype=np.int64))
    kernel = "gelu_tanh" if ctx.attrs["approximate"] == "tanh" else "gelu"
    ctx.call(f"aotc_{kernel}_f32", f"{n}u", ctx.ptr(x), ctx.ptr(y))


def _same_dtypes(node: Node, graph: Graph) -> str | None:
    """Both operands float32 (Pow may have an integer exponent in ONNX; the kernels take float only)."""
    dtypes = {graph.tensors[i].dtype for i in node.inputs if i}
    return None if dtypes == {"float32"} else f"operands of dtypes {', '.join(sorted(dtypes))} are not supported"


def _binary(kernel: str) -> HostOp:
    return HostOp(_emit_binary(kernel), family="elementwise", inplace=0, check=_same_dtypes)


def _unary(kernel: str, *attrs: str) -> HostOp:
    return HostOp(_emit_unary(kernel, *attrs), family="elementwise", inplace=0)


OPS: dict[str, HostOp] = {
    "Add": _binary("add"),
    "Sub": _binary("sub"),
    "Mul": _binary("mul"),
    "Div": _binary("div"),
    "Max": _binary("max"),
    "Min": _binary("min"),
    "Pow": _binary("pow"),
    "PRelu": _binary("prelu"),
    "Relu": _unary("relu"),
    "Sigmoid": _unary("sigmoid"),
    "Tanh": _unary("tanh"),
    "HardSwish": _unary("hard_swish"),
    "Exp": _unary("exp"),
    "Log": _unary("log"),
    "Sqrt": _unary("sqrt"),
    "Neg": _unary("neg"),
    "Abs": _unary("abs"),
    "Erf": _unary("erf"),
    "Reciprocal": _unary("reciprocal"),
    "Floor": _unary("floor"),
    "Ceil": _unary("ceil"),
    "Softplus": _unary("softplus"),
    "Gelu": HostOp(_emit_gelu, family="elementwise", inplace=0),
    "LeakyRelu": _unary("leaky_relu", "alpha"),
    "Elu": _unary("elu", "alpha"),
    "Clip": _unary("clip", "min", "max"),
    "HardSigmoid": _unary("hard_sigmoid", "alpha", "beta"),
}
