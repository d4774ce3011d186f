"""Elementwise ops: unary activations (in place), numpy-broadcasting binary ops, comparisons (-> bool), and the
logical and bitwise ops, over every dtype the IR holds where ONNX allows it (kernels per dtype suffix)."""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_double, c_float, c_ints
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


FLOATS = ("float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = (*SIGNED, *UNSIGNED)
NUMERIC = (*FLOATS, *INTS)


def _emit_binary(kernel: str):
    def emit(ctx: NodeContext) -> None:
        a, b = ctx.inputs[0], ctx.inputs[1]
        y = ctx.outputs[0]
        shape, sa, sb = broadcast_layout(ctx.shape(y), ctx.shape(a), ctx.shape(b))
        p = ctx.params("aotc_broadcast", {
            "rank": str(len(shape)), "shape": c_ints(shape), "a_strides": c_ints(sa), "b_strides": c_ints(sb),
        }, comment=f"{ctx.node.op}: {list(ctx.shape(a))} with {list(ctx.shape(b))} -> {list(ctx.shape(y))}")
        ctx.call(f"aotc_{kernel(ctx) if callable(kernel) else kernel}_{ctx.suffix(a)}", p, ctx.ptr(a), ctx.ptr(b),
                 ctx.ptr(y))
    return emit


def _emit_unary(kernel, **attrs: float):
    """`kernel`: its name, or a function of the node giving it; `attrs`: the op's float attributes, in the
    kernel's argument order, with their ONNX defaults."""
    def emit(ctx: NodeContext) -> None:
        x, y = ctx.inputs[0], ctx.outputs[0]
        n = int(np.prod(ctx.shape(y), dtype=np.int64))
        # a float64 kernel's parameters are doubles, of the float32 values ONNX's attributes hold (onnxruntime's)
        literal = (lambda v: c_double(np.float32(v))) if ctx.dtype(x) == "float64" else c_float
        extra = [literal(ctx.attrs.get(k, default)) for k, default in attrs.items()]
        name = kernel(ctx) if callable(kernel) else kernel
        ctx.call(f"aotc_{name}_{ctx.suffix(x)}", f"{n}u", ctx.ptr(x), ctx.ptr(y), *extra)
    return emit


def _emit_gelu(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    n = int(np.prod(ctx.shape(y), dtype=np.int64))
    kernel = "gelu_tanh" if ctx.attrs["approximate"] == "tanh" else "gelu"
    ctx.call(f"aotc_{kernel}_{ctx.suffix(x)}", f"{n}u", ctx.ptr(x), ctx.ptr(y))


def _same_dtypes(node: Node, graph: Graph) -> str | None:
    """Both operands of one dtype (ONNX's binary ops say so; Pow alone may mix, and its kernels do not)."""
    dtypes = {graph.tensors[i].dtype for i in node.inputs if i}
    return None if len(dtypes) == 1 else f"operands of dtypes {', '.join(sorted(dtypes))} are not supported"


def _mod_kernel(ctx: NodeContext) -> str:
    return "fmod" if ctx.attrs.get("fmod", 0) else "mod"


def _check_mod(node: Node, graph: Graph) -> str | None:
    return _same_dtypes(node, graph)  # floats with fmod=0: floored, as numpy (onnx's reference)


def _isinf_kernel(ctx: NodeContext) -> str:
    pos, neg = ctx.attrs.get("detect_positive", 1), ctx.attrs.get("detect_negative", 1)
    return "isinf" if pos and neg else "isinf_pos" if pos else "isinf_neg"


def _check_isinf(node: Node, graph: Graph) -> str | None:
    if not node.attrs.get("detect_positive", 1) and not node.attrs.get("detect_negative", 1):
        return "IsInf detecting neither infinity is not supported"
    return None


BOTH = (0, 1)  # a binary op's operands


def _binary(kernel, dtypes: tuple[str, ...] = ("float32",), check=_same_dtypes, inplace: int | None = 0,
            budget_inplace: tuple[int, ...] = ()) -> HostOp:
    return HostOp(_emit_binary(kernel), family="elementwise", dtypes=dtypes, inplace=inplace, check=check,
                  budget_inplace=budget_inplace)


def _compare(kernel: str, dtypes: tuple[str, ...] = NUMERIC) -> HostOp:
    """-> bool: never in place (bool is one byte, the operands may be wider)."""
    return _binary(kernel, dtypes, inplace=None)


def _unary(kernel: str, dtypes: tuple[str, ...] = ("float32",), **attrs: float) -> HostOp:
    return HostOp(_emit_unary(kernel, **attrs), family="elementwise", dtypes=dtypes, inplace=0)


OPS: dict[str, HostOp] = {
    # under a RAM budget either operand of the same shape as the output may be overwritten: AOTC_BINARY reads
    # element i of both before it writes element i, in order (elementwise_impl.h)
    "Add": _binary("add", NUMERIC, budget_inplace=BOTH),
    "Sub": _binary("sub", NUMERIC, budget_inplace=BOTH),
    "Mul": _binary("mul", NUMERIC, budget_inplace=BOTH),
    "Div": _binary("div", NUMERIC, budget_inplace=BOTH),
    "Max": _binary("max", NUMERIC),
    "Min": _binary("min", NUMERIC),
    "Pow": _binary("pow", (*FLOATS, *SIGNED)),
    "PRelu": _binary("prelu", FLOATS),
    "Mod": _binary(_mod_kernel, NUMERIC, check=_check_mod),
    "Equal": _compare("equal", (*NUMERIC, "bool")),
    "Less": _compare("less"),
    "LessOrEqual": _compare("less_equal"),
    "Greater": _compare("greater"),
    "GreaterOrEqual": _compare("greater_equal"),
    "And": _binary("and", ("bool",)),
    "Or": _binary("or", ("bool",)),
    "Xor": _binary("xor", ("bool",)),
    "BitwiseAnd": _binary("bitwise_and", INTS),
    "BitwiseOr": _binary("bitwise_or", INTS),
    "BitwiseXor": _binary("bitwise_xor", INTS),
    "BitShift": _binary(lambda ctx: "shift_left" if ctx.attrs["direction"] == "LEFT" else "shift_right", INTS),
    "Relu": _unary("relu", FLOATS),
    "Sigmoid": _unary("sigmoid", FLOATS),
    "Tanh": _unary("tanh", FLOATS),
    "HardSwish": _unary("hard_swish", FLOATS),
    "Swish": _unary("swish", alpha=1.0),
    "Exp": _unary("exp", FLOATS),
    "Log": _unary("log", FLOATS),
    "Sqrt": _unary("sqrt", FLOATS),
    "Neg": _unary("neg", (*FLOATS, *SIGNED)),
    "Abs": _unary("abs", NUMERIC),
    "Sign": _unary("sign", NUMERIC),
    "Not": _unary("not", ("bool",)),
    "BitwiseNot": _unary("bitwise_not", INTS),
    "Erf": _unary("erf", FLOATS),
    "Reciprocal": _unary("reciprocal", FLOATS),
    "Floor": _unary("floor", FLOATS),
    "Ceil": _unary("ceil", FLOATS),
    "Round": _unary("round", FLOATS),
    "Softplus": _unary("softplus", FLOATS),
    "Softsign": _unary("softsign", FLOATS),
    "Sin": _unary("sin", FLOATS),
    "Cos": _unary("cos", FLOATS),
    "Tan": _unary("tan", FLOATS),
    "Asin": _unary("asin", FLOATS),
    "Acos": _unary("acos", FLOATS),
    "Atan": _unary("atan", FLOATS),
    "Sinh": _unary("sinh", FLOATS),
    "Cosh": _unary("cosh", FLOATS),
    "Asinh": _unary("asinh", FLOATS),
    "Acosh": _unary("acosh", FLOATS),
    "Atanh": _unary("atanh", FLOATS),
    "IsNaN": HostOp(_emit_unary("isnan"), family="elementwise", dtypes=FLOATS),
    "IsInf": HostOp(_emit_unary(_isinf_kernel), family="elementwise", dtypes=FLOATS, check=_check_isinf),
    "Gelu": HostOp(_emit_gelu, family="elementwise", dtypes=FLOATS, inplace=0),
    "LeakyRelu": _unary("leaky_relu", FLOATS, alpha=0.01),
    "Elu": _unary("elu", FLOATS, alpha=1.0),
    "Selu": _unary("selu", FLOATS, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875),
    "Celu": _unary("celu", alpha=1.0),
    "ThresholdedRelu": _unary("thresholded_relu", FLOATS, alpha=1.0),
    "Shrink": _unary("shrink", FLOATS, lambd=0.5, bias=0.0),
    "Clip": _unary("clip", FLOATS, min=-np.inf, max=np.inf),
    "HardSigmoid": _unary("hard_sigmoid", FLOATS, alpha=0.2, beta=0.5),
}
