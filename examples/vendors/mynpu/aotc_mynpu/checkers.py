"""Which single nodes mynpu takes, each refusal with the reason `aotc partition --show --explain` prints.

mynpu's conv unit does 3x3 and 1x1 kernels, stride 1 or 2, group 1 or depthwise, float32; its
vector unit adds and rectifies. Attributes are canonical (aotc resolved every opset's form: explicit
pads, no auto_pad), so nothing here looks at the opset.
"""

from __future__ import annotations

from aot.ir import Graph, Node
from aot.vendor import ACCEPT, Reject, Verdict


def _float32(node: Node, graph: Graph) -> Verdict | None:
    for t in (*node.inputs, *node.outputs):
        if t and graph.tensors[t].dtype != "float32":
            return Reject(f"mynpu computes float32 only ({t} is {graph.tensors[t].dtype})")
    return None


def check_conv(node: Node, graph: Graph) -> Verdict:
    """Conv -> mynpu_conv2d: 2-D, 3x3 or 1x1, stride 1 or 2, pads up to k // 2, group 1 or depthwise."""
    if (bad := _float32(node, graph)) is not None:
        return bad
    x, w = graph.tensors[node.inputs[0]], graph.tensors[node.inputs[1]]
    if len(x.shape) != 4:
        return Reject(f"mynpu convolves 2-D images (rank 4), not rank {len(x.shape)}")
    if w.data is None:
        return Reject("mynpu needs constant weights: it blocks them at compile time")
    if len(node.inputs) > 2 and node.inputs[2] and graph.const(node.inputs[2]) is None:
        return Reject("mynpu needs a constant bias")
    a = node.attrs
    kh, kw = a["kernel_shape"]
    if (kh, kw) not in ((3, 3), (1, 1)):
        return Reject(f"mynpu's conv unit has 3x3 and 1x1 kernels, not {kh}x{kw}")
    if a["strides"][0] != a["strides"][1] or a["strides"][0] not in (1, 2):
        return Reject(f"mynpu strides 1 or 2, the same on both axes, not {a['strides']}")
    if any(d != 1 for d in a["dilations"]):
        return Reject(f"mynpu has no dilated convolution (dilations {a['dilations']})")
    if any(p < 0 or p > kh // 2 for p in a["pads"]):
        return Reject(f"mynpu pads a {kh}x{kw} conv by at most {kh // 2}, not {a['pads']}")
    cin, cout = x.shape[1], w.shape[0]
    if a["group"] != 1 and not (a["group"] == cin == cout):
        return Reject(f"mynpu takes group 1 or depthwise (group = channels in = channels out), not group "
                      f"{a['group']} with {cin} -> {cout} channels")
    return ACCEPT


def check_relu(node: Node, graph: Graph) -> Verdict:
    return _float32(node, graph) or ACCEPT


def check_add(node: Node, graph: Graph) -> Verdict:
    """Add of two computed tensors of one shape (a residual): mynpu's adder has no broadcast."""
    if (bad := _float32(node, graph)) is not None:
        return bad
    out = graph.tensors[node.outputs[0]].shape
    if any(graph.const(i) is not None for i in node.inputs):
        return Reject("mynpu adds two computed tensors (a residual), not a constant")
    if any(graph.tensors[i].shape != out for i in node.inputs):
        return Reject("mynpu adds tensors of one shape: no broadcasting")
    return ACCEPT


CHECKERS = {"Conv": check_conv, "Relu": check_relu, "Add": check_add}
