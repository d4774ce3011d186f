"""AffineGrid as a MatMul of theta by the base grid (aot/kernels/index.py runs GridSample)."""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import Builder, shape_of
from aot.ir import Graph, Node
from aot.ir.evaluate import evaluate_node


def affine_grid(node: Node, graph: Graph, opset: int) -> list[Node]:
    """AffineGrid -> theta [N, r, r+1] times the base grid's homogeneous points (a constant: onnx's
    reference on the identity theta), transposed and reshaped to [N, ..., r]. A size computed at run time
    is the declared output shape's, checked at run time (CheckValues)."""
    from onnx import helper


    theta, size = node.inputs[:2]
    y = graph.tensors[node.outputs[0]]
    n, r = shape_of(graph, theta)[0], shape_of(graph, theta)[1]
    spatial = y.shape[1:-1]
    dims = [n, 1, *spatial]  # the channel count does not matter: check it is what size says below
    b = Builder(node, graph)
    value = graph.const(size)
    if value is not None:
        dims = [int(v) for v in value.reshape(-1)]
        if [dims[0], *dims[2:]] != [n, *spatial]:
            raise AotcError(f"AffineGrid size {dims} does not give the output {list(y.shape)}", node=node)
    else:
        checked = b.tensor(shape_of(graph, theta))
        b.nodes.append(Node("CheckValues", f"{node.name}__check", [theta, size], [checked],
                            {"expected": [n, -1, *spatial], "skip": [1]}, node.sources()))
        theta = checked
    proto = helper.make_node("AffineGrid", ["in0", "in1"], ["out0"],
                             align_corners=int(node.attrs.get("align_corners", 0)))
    eye = np.eye(r, r + 1, dtype=np.float32)[None]
    base = evaluate_node(proto, [eye, np.array([1, 1, *spatial], np.int64)], [helper.make_opsetid("", opset)])[0]
    points = int(np.prod(spatial))
    homog = np.concatenate([base.reshape(points, r), np.ones((points, 1), np.float32)], axis=1).T  # [r+1, P]
    prod = b.add("MatMul", [theta, b.tensor(homog.shape, np.ascontiguousarray(homog, np.float32))], (n, r, points))
    moved = b.add("Transpose", [prod], (n, points, r), {"perm": [0, 2, 1]})
    b.add("Reshape", [moved], None, out=node.outputs[0])
    return b.nodes
