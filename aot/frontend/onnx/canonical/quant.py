"""Canonical forms of the quantization ops (the rules of canonical/, for int8).

After these rules every QuantizeLinear / DequantizeLinear has its zero point as a constant input
of the integer type (the spec's default 0 made explicit) and a non-negative `axis` (used only
when the scale is a vector: per-channel), and scales and zero points are constants; QLinearConv
and QLinearAveragePool carry the same explicit window attributes as Conv and AveragePool.
Everything the int8 kernels read of a quantized tensor is then a constant known at compile time.
"""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor
from aot.qmath import lookup_table

# the scale/zero-point inputs of each op, as (scale index, zero point index, integer tensor index)
QPARAMS: dict[str, tuple[tuple[int, int, int], ...]] = {
    "QuantizeLinear": ((1, 2, -1),),  # -1: the output
    "DequantizeLinear": ((1, 2, 0),),
    "QLinearConv": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QLinearMatMul": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QGemm": ((1, 2, 0), (4, 5, 3), (7, 8, -1)),
    "QLinearAdd": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QLinearMul": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QLinearGlobalAveragePool": ((1, 2, 0), (3, 4, -1)),
    "QLinearAveragePool": ((1, 2, 0), (3, 4, -1)),
    "QLinearSigmoid": ((1, 2, 0), (3, 4, -1)),
    "QLinearLeakyRelu": ((1, 2, 0), (3, 4, -1)),
    "QLinearSoftmax": ((1, 2, 0), (3, 4, -1)),
}


def _zero_point(node: Node, graph: Graph, scale_at: int, zp_at: int, of: str) -> None:
    """Make an omitted zero point an explicit constant of the integer tensor's type."""
    while len(node.inputs) <= zp_at:
        node.inputs.append("")
    if node.inputs[zp_at]:
        if graph.const(node.inputs[zp_at]) is None:
            raise AotcError(f"zero point (input {zp_at}) must be a constant", node=node)
        return
    dtype = graph.tensors[of].dtype
    name = f"{node.name}__zero_point{zp_at}"
    shape = graph.tensors[node.inputs[scale_at]].shape
    graph.tensors[name] = Tensor(name, shape, dtype, np.zeros(shape, dtype))
    node.inputs[zp_at] = name


def quant_params(node: Node, graph: Graph, opset: int) -> None:
    for scale_at, zp_at, of in QPARAMS[node.op]:
        if scale_at >= len(node.inputs) or not node.inputs[scale_at]:
            if node.op == "QGemm" and scale_at == 7:  # QGemm without y_scale: float output
                continue
            raise AotcError(f"scale (input {scale_at}) is missing", node=node)
        if graph.const(node.inputs[scale_at]) is None:
            raise AotcError(f"scale (input {scale_at}) must be a constant", node=node)
        _zero_point(node, graph, scale_at, zp_at, node.outputs[0] if of == -1 else node.inputs[of])


def quantize_linear(node: Node, graph: Graph, opset: int) -> None:
    """QuantizeLinear / DequantizeLinear: explicit zero point, non-negative axis; blocked scales and a
    division in another precision than float32 (QuantizeLinear-23's `precision`) refused."""
    if node.attrs.get("block_size", 0):
        raise AotcError("blocked quantization (block_size) is not supported", node=node)
    precision = int(node.attrs.get("precision", 0))  # QuantizeLinear-23: the type x / y_scale is computed in
    if precision not in (0, 1):
        raise AotcError(f"precision {precision} (x / y_scale computed in a type other than float32) is not supported",
                        node=node)
    quant_params(node, graph, opset)
    x = graph.tensors[node.inputs[0]]
    scale = graph.tensors[node.inputs[1]]
    axis = int(node.attrs.get("axis", 1))
    if scale.size > 1:
        rank = len(x.shape)
        if not -rank <= axis < rank:
            raise AotcError(f"axis {axis} is out of range for rank {rank}", node=node)
        axis %= rank
        if len(scale.shape) != 1 or scale.shape[0] != x.shape[axis]:
            raise AotcError(f"scale shape {list(scale.shape)} does not match axis {axis} of {list(x.shape)}",
                            node=node)
    node.attrs = {"axis": axis}


def tabulated(node: Node, graph: Graph, opset: int) -> list[Node]:
    """QLinearSigmoid / QLinearLeakyRelu: a function of one 8-bit input becomes a QLookup of its
    256 answers (onnxruntime's kernels tabulate them the same way)."""
    quant_params(node, graph, opset)
    x, xs, xz, ys, yz = node.inputs[:5]
    op = node.op.removeprefix("QLinear")
    attrs = {"alpha": float(node.attrs.get("alpha", 0.01))} if op == "LeakyRelu" else {}
    out_dtype = graph.tensors[node.outputs[0]].dtype
    table = lookup_table(op, attrs, graph.tensors[x].dtype, graph.const(xs).item(), int(graph.const(xz).item()),
                         graph.const(ys).item(), int(graph.const(yz).item()), out_dtype, opset)
    if table is None:
        raise AotcError(f"cannot tabulate {op} over the 8-bit inputs", node=node)
    name = f"{node.name}__table"
    graph.tensors[name] = Tensor(name, (256,), out_dtype, table)
    return [Node("QLookup", node.name, [x, name], node.outputs, {"function": op}, node.sources())]


RULES = {
    "QuantizeLinear": quantize_linear,
    "DequantizeLinear": quantize_linear,
    **{op: quant_params for op in QPARAMS if op not in ("QuantizeLinear", "DequantizeLinear")},
    "QLinearSigmoid": tabulated,
    "QLinearLeakyRelu": tabulated,
}
