"""DFT: its axis, length, inverse and onesided as attributes (aot/kernels/signal.py)."""

from __future__ import annotations

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import const_input
from aot.ir import Graph, Node
from aot.ir.schemas import dft_out_shape


def dft(node: Node, graph: Graph, opset: int) -> None:
    """DFT -> attrs axis (non-negative), length (N), inverse, onesided. dft_length must be a constant; an
    axis given at run time (opset 20) is the one the shapes pin, or each axis they allow (axis_choices,
    the kernel picking the one the value names at run time)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    rank = len(x.shape)
    inverse, onesided = int(node.attrs.get("inverse", 0)), int(node.attrs.get("onesided", 0))
    length_v = const_input(graph, node, 1, "DFT dft_length")
    axis_in = node.inputs[2] if opset >= 20 and len(node.inputs) > 2 and node.inputs[2] else ""
    if axis_in and graph.const(axis_in) is not None:
        candidates = [int(graph.const(axis_in).reshape(-1)[0])]
    elif axis_in:
        candidates = list(range(rank - 1))
    else:
        candidates = [int(node.attrs.get("axis", 1 if opset < 20 else -2))]
    fits = []
    for a in candidates:
        if not -rank <= a < rank - 1 or (a < 0 and a + rank >= rank - 1):
            continue
        a %= rank
        n = int(length_v.reshape(-1)[0]) if length_v is not None else (
            2 * (x.shape[a] - 1) if inverse and onesided else x.shape[a])
        if n > 0 and dft_out_shape(x.shape, a, n, bool(inverse), bool(onesided)) == y.shape:
            fits.append((a, n))
    if not fits:
        raise AotcError(f"DFT of {list(x.shape)} gives {list(y.shape)} along no axis it allows", node=node)
    node.attrs = {"axis": fits[0][0], "length": fits[0][1], "inverse": inverse, "onesided": onesided}
    node.inputs = [node.inputs[0]]
    if axis_in and len(fits) > 1:
        node.attrs["axis_choices"] = [[a, n] for a, n in fits]
        node.inputs.append(axis_in)
