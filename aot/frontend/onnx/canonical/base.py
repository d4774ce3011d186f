"""What the rules of every op family share: constant inputs, shapes, axes, window attributes,
and the builder of a rewrite's nodes."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor

Rule = Callable[[Node, Graph, int], "list[Node] | None"]


def const_input(graph: Graph, node: Node, idx: int, what: str) -> np.ndarray | None:
    """Constant value of optional input `idx`; None when omitted; error when computed at run time."""
    if idx >= len(node.inputs) or not node.inputs[idx]:
        return None
    value = graph.const(node.inputs[idx])
    if value is None:
        raise AotcError(f"{what} (input {idx}) must be a constant", node=node)
    return value


def shape_of(graph: Graph, name: str) -> tuple[int, ...]:
    return graph.tensors[name].shape


def positive_axis(axis: int, rank: int, node: Node) -> int:
    if not -rank <= axis < max(rank, 1):
        raise AotcError(f"axis {axis} is out of range for rank {rank}", node=node)
    return axis + rank if axis < 0 else axis


def data_only(node: Node, n: int = 1) -> None:
    node.inputs = node.inputs[:n]


def _spatial_pads(node: Node, in_spatial: tuple[int, ...], kernel: tuple[int, ...],
                  strides: list[int], dilations: list[int]) -> list[int]:
    """Explicit ONNX pads [begin..., end...] with auto_pad resolved."""
    nd = len(in_spatial)
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = list(node.attrs.get("pads", [0] * 2 * nd))
        if len(pads) != 2 * nd:
            raise AotcError(f"pads has {len(pads)} values, expected {2 * nd}", node=node)
        return pads
    if auto_pad == "VALID":
        return [0] * 2 * nd
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise AotcError(f"auto_pad '{auto_pad}' is not valid", node=node)
    begin, end = [], []
    for i in range(nd):
        out = math.ceil(in_spatial[i] / strides[i])
        eff_k = (kernel[i] - 1) * dilations[i] + 1
        total = max(0, (out - 1) * strides[i] + eff_k - in_spatial[i])
        small, big = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else big)
        end.append(big if auto_pad == "SAME_UPPER" else small)
    return begin + end


def window_attrs(node: Node, in_shape: tuple[int, ...], kernel: tuple[int, ...]) -> None:
    nd = len(kernel)
    strides = list(node.attrs.get("strides", [1] * nd))
    dilations = list(node.attrs.get("dilations", [1] * nd))
    pads = _spatial_pads(node, in_shape[2:], kernel, strides, dilations)
    node.attrs.update(kernel_shape=list(kernel), strides=strides, dilations=dilations, pads=pads)
    node.attrs.pop("auto_pad", None)


class Builder:
    """Nodes of a rewrite in canonical form, with fresh float32 temporaries named after the node."""

    def __init__(self, node: Node, graph: Graph):
        self.node, self.graph, self.nodes, self.k = node, graph, [], 0

    def tensor(self, shape: tuple[int, ...], value: np.ndarray | None = None, dtype: str = "float32") -> str:
        self.k += 1
        name = f"{self.node.outputs[0]}__{self.node.op.lower()}{self.k}"
        self.graph.tensors[name] = Tensor(name, tuple(shape), dtype, value)
        return name

    def add(self, op: str, ins: list[str], shape: tuple[int, ...] | None, attrs: dict | None = None,
            out: str | None = None, dtype: str = "float32") -> str:
        """Append op(ins) -> a new tensor of `shape` and `dtype` (or `out`, the node's own output: the last step)."""
        out = out or self.tensor(shape, dtype=dtype)
        name = self.node.name if out in self.node.outputs else f"{self.node.name}__{len(self.nodes)}"
        self.nodes.append(Node(op, name, ins, [out], dict(attrs or {}), self.node.sources()))
        return out
