"""mynpu's graph pass, run on the whole model before partitioning (Vendor.graph_passes; TVM's
partition_for_<name>): the model in the form mynpu takes, before any checker sees it.

mynpu has no dense (fully connected) unit, but a dense layer is a 1x1 convolution over a 1x1 image:

    Gemm(A[M,K], B, C)  ->  Reshape(A) [M,K,1,1] -> Conv 1x1 (W [N,K,1,1], bias [N]) -> Reshape [M,N]

so the classifier heads of ResNet and MobileNet run on mynpu too. The result is plain ONNX: a Conv
that mynpu then leaves to the host (a hand annotation, another vendor first) still runs there.
`--vendor-opt mynpu.graph_passes=off` skips the pass.
"""

from __future__ import annotations

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.vendor import Pass


def _fresh(g: Graph, base: str) -> str:
    name, k = base, 1
    while name in g.tensors:
        name, k = f"{base}_{k}", k + 1
    return name


def _as_conv(node: Node, g: Graph) -> tuple[np.ndarray, np.ndarray] | None:
    """The 1x1 conv's weights [N, K, 1, 1] and bias [N] of a float32 Gemm with constant B and a bias that is
    per output (or none), else None. alpha and beta are folded into them."""
    a = node.attrs
    if a["transA"] or len(g.tensors[node.inputs[0]].shape) != 2:
        return None
    if any(g.tensors[t].dtype != "float32" for t in (*node.inputs, *node.outputs) if t):
        return None
    b = g.const(node.inputs[1])
    if b is None:
        return None
    w = (b if a["transB"] else b.T).astype(np.float32) * np.float32(a["alpha"])  # [N, K]
    n = w.shape[0]
    c = g.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else np.zeros(n, np.float32)
    if c is None or c.size not in (1, n) or (c.ndim == 2 and c.shape[0] != 1):
        return None  # a bias computed at run time, or one per row: not a conv's
    bias = np.broadcast_to(c.reshape(-1), (n,)).astype(np.float32) * np.float32(a["beta"])
    return w.reshape(n, -1, 1, 1).copy(), bias.copy()


class GemmAsConv(Pass):
    """Each float32 Gemm with constant weights becomes a 1x1 Conv between two Reshapes (module docstring)."""

    name = "mynpu.gemm_as_conv"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        out: list[Node] = []
        for n in g.nodes:
            conv = _as_conv(n, g) if n.op == "Gemm" else None
            if conv is None:
                out.append(n)
                continue
            w, bias = conv
            (m, k), nout = g.tensors[n.inputs[0]].shape, w.shape[0]
            names = {key: _fresh(g, f"{n.name}__{key}") for key in ("w", "b", "x4", "y4")}
            g.tensors[names["w"]] = Tensor(names["w"], w.shape, "float32", w)
            g.tensors[names["b"]] = Tensor(names["b"], bias.shape, "float32", bias)
            g.tensors[names["x4"]] = Tensor(names["x4"], (m, k, 1, 1), "float32")
            g.tensors[names["y4"]] = Tensor(names["y4"], (m, nout, 1, 1), "float32")
            conv_attrs = {"kernel_shape": [1, 1], "strides": [1, 1], "dilations": [1, 1], "pads": [0, 0, 0, 0],
                          "group": 1}
            out += [Node("Reshape", f"{n.name}__to4d", [n.inputs[0]], [names["x4"]], origin=n.sources()),
                    Node("Conv", f"{n.name}__conv", [names["x4"], names["w"], names["b"]], [names["y4"]],
                         conv_attrs, origin=n.sources()),
                    Node("Reshape", f"{n.name}__to2d", [names["y4"]], list(n.outputs), origin=n.sources())]
        g.nodes = out
        return g


GRAPH_PASSES = (GemmAsConv(),)
