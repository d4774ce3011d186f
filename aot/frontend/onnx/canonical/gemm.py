"""Gemm (aot/kernels/gemm.py): alpha, beta, transA and transB explicit; the inner dimensions and C's
broadcast checked."""

from __future__ import annotations

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import shape_of
from aot.ir import Graph, Node


def gemm(node: Node, graph: Graph, opset: int) -> None:
    a = node.attrs
    node.attrs = {"alpha": float(a.get("alpha", 1.0)), "beta": float(a.get("beta", 1.0)),
                  "transA": int(a.get("transA", 0)), "transB": int(a.get("transB", 0))}
    # onnx's inference checks the inner dimensions only from opset 13: a mismatch would read past A or B
    sa, sb = shape_of(graph, node.inputs[0]), shape_of(graph, node.inputs[1])
    if len(sa) != 2 or len(sb) != 2:
        raise AotcError(f"Gemm takes 2-D A and B, not {list(sa)} and {list(sb)}", node=node)
    (m, k), (k2, n) = sa[::-1] if node.attrs["transA"] else sa, sb[::-1] if node.attrs["transB"] else sb
    if k != k2:
        raise AotcError(f"A {list(sa)} (transA={node.attrs['transA']}) and B {list(sb)} (transB="
                        f"{node.attrs['transB']}) have inner dimensions {k} and {k2}", node=node)
    if len(node.inputs) > 2 and node.inputs[2]:
        sc = shape_of(graph, node.inputs[2])
        if len(sc) > 2 or any(c not in (1, d) for c, d in zip(sc[::-1], (n, m), strict=False)):
            raise AotcError(f"C {list(sc)} does not broadcast to the output [{m},{n}]", node=node)
