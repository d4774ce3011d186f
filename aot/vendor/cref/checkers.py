"""Which nodes cref takes. One small predicate per ONNX op; a refusal says why."""

from __future__ import annotations

import numpy as np

from aot.ir import Graph, Node
from aot.vendor.base import ACCEPT, Reject, Verdict


def _float32(node: Node, graph: Graph) -> Verdict | None:
    for t in [*node.inputs, *node.outputs]:
        if t and graph.tensors[t].dtype != "float32":
            return Reject(f"cref takes float32 only ({t} is {graph.tensors[t].dtype})")
    return None


def check_binary(node: Node, graph: Graph) -> Verdict:
    """Add/Sub/Mul: b has a's shape, is a scalar, or is a row broadcast over a's last dim."""
    if (r := _float32(node, graph)) is not None:
        return r
    a, b, y = (graph.tensors[t].shape for t in (node.inputs[0], node.inputs[1], node.outputs[0]))
    if a != y:
        return Reject("cref broadcasts only its second operand")
    b_len = int(np.prod(b, dtype=np.int64))
    if b == a or b_len == 1 or (len(a) >= 1 and b_len == a[-1] and all(d == 1 for d in b[:-1])):
        return ACCEPT
    return Reject(f"cref cannot broadcast {list(b)} to {list(a)}")


def check_unary(node: Node, graph: Graph) -> Verdict:
    r = _float32(node, graph)
    return ACCEPT if r is None else r


def check_gemm(node: Node, graph: Graph) -> Verdict:
    if (r := _float32(node, graph)) is not None:
        return r
    if node.op == "Gemm" and node.attrs.get("transA", 0):
        return Reject("cref Gemm needs transA=0")
    if any(len(graph.tensors[t].shape) != 2 for t in node.inputs[:2]):
        return Reject("cref multiplies 2-D matrices only")
    if len(node.inputs) > 2 and node.inputs[2]:
        c, y = graph.tensors[node.inputs[2]].shape, graph.tensors[node.outputs[0]].shape
        if c not in ((), (1,), (y[1],), (1, y[1]), tuple(y)):
            return Reject(f"cref Gemm cannot broadcast C {list(c)}")
    return ACCEPT


CHECKERS = {
    "Add": check_binary, "Sub": check_binary, "Mul": check_binary,
    "Relu": check_unary, "Sigmoid": check_unary, "Tanh": check_unary,
    "Gemm": check_gemm, "MatMul": check_gemm,
}
