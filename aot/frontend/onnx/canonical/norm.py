"""Softmax and its kin (as outer, n, inner), the normalisations (batch, layer, RMS: their axes and
epsilons as attributes; mean-variance and Lp: the ops aotc runs), as aot/kernels/norm.py reads them."""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import Builder, positive_axis, shape_of
from aot.ir import Graph, Node, Tensor


def mean_variance_normalization(node: Node, graph: Graph, opset: int) -> list[Node]:
    """MeanVarianceNormalization -> (x - mean) / sqrt(mean((x - mean)^2) + 1e-9) over the axes (kept);
    onnx's function body (mean of the squares minus the squared mean) differs in the last bits only."""
    b, x = Builder(node, graph), node.inputs[0]
    shape = shape_of(graph, x)
    axes = sorted({positive_axis(int(a), len(shape), node) for a in node.attrs.get("axes", [0, 2, 3])})
    kept = tuple(1 if k in axes else n for k, n in enumerate(shape))
    red = {"axes": axes, "keepdims": 1}
    d = b.add("Sub", [x, b.add("ReduceMean", [x], kept, red)], shape)
    var = b.add("ReduceMean", [b.add("Mul", [d, d], shape)], kept, red)
    eps = b.tensor((), np.array(1e-9, np.float32))
    b.add("Div", [d, b.add("Sqrt", [b.add("Add", [var, eps], kept)], kept)], None, out=node.outputs[0])
    return b.nodes


def lp_normalization(node: Node, graph: Graph, opset: int) -> list[Node]:
    """LpNormalization -> x / ReduceL1 or ReduceL2 of x along the axis (kept), the norm at least the least
    denormal, so a row of zeros stays zeros (onnx's reference and onnxruntime give 0 there, not NaN)."""
    x = graph.tensors[node.inputs[0]]
    p = int(node.attrs.get("p", 2))
    if p not in (1, 2):
        raise AotcError(f"LpNormalization p={p} is not valid (1 or 2)", node=node)
    if x.dtype != "float32":
        raise AotcError(f"LpNormalization of {x.dtype} is not supported (float32)", node=node)
    axis = positive_axis(int(node.attrs.get("axis", -1)), len(x.shape), node)
    norm = f"{node.outputs[0]}__norm"
    graph.tensors[norm] = Tensor(norm, tuple(1 if k == axis else n for k, n in enumerate(x.shape)), "float32")
    floor, tiny = f"{norm}_floor", f"{norm}_tiny"
    graph.tensors[floor] = Tensor(floor, graph.tensors[norm].shape, "float32")
    graph.tensors[tiny] = Tensor(tiny, (), "float32", np.array(np.finfo(np.float32).smallest_subnormal, np.float32))
    return [Node(f"ReduceL{p}", f"{node.name}__norm", [x.name], [norm], {"axes": [axis], "keepdims": 1},
                 node.sources()),
            Node("Max", f"{node.name}__floor", [norm, tiny], [floor], origin=node.sources()),
            Node("Div", node.name, [x.name, floor], node.outputs, origin=node.sources())]


def softmax(node: Node, graph: Graph, opset: int) -> None:
    """Both axis semantics as (outer, n, inner): reduce over n, for each outer and inner index."""
    shape = shape_of(graph, node.inputs[0])
    rank = len(shape)
    if opset < 13:
        axis = positive_axis(node.attrs.get("axis", 1), rank, node)
        outer, n, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis:])), 1
    else:
        axis = positive_axis(node.attrs.get("axis", -1), rank, node)
        outer, n, inner = int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:]))
    node.attrs = {"outer": outer, "n": n, "inner": inner}


def layer_norm(node: Node, graph: Graph, opset: int) -> None:
    """LayerNormalization (opset 17) and RMSNormalization (opset 23) -> attrs axis (non-negative),
    epsilon, stash (the dtype the statistics are computed in: float32 or float64), and X as
    [rows, n]: n the product of the dims from the axis on, each row normalised on its own."""
    x = shape_of(graph, node.inputs[0])
    if not x:
        raise AotcError(f"{node.op} of a scalar is not defined (X needs a rank of at least 1)", node=node)
    axis = positive_axis(int(node.attrs.get("axis", -1)), len(x), node)
    stash = int(node.attrs.get("stash_type", 1))
    if stash not in (1, 11):
        raise AotcError(f"stash_type {stash} is not supported (1: float, 11: double)", node=node)
    node.attrs = {"axis": axis, "epsilon": float(node.attrs.get("epsilon", 1e-5)),
                  "stash": "float32" if stash == 1 else "float64",
                  "rows": int(np.prod(x[:axis], dtype=np.int64)), "n": int(np.prod(x[axis:], dtype=np.int64))}


def _batchnorm_training(node: Node, graph: Graph, x: tuple[int, ...]) -> list[Node]:
    """Training-mode BatchNormalization as onnx's reference computes it: the batch's mean and (population)
    variance over every axis but 1, Y = scale (X - mean) / sqrt(var + epsilon) + B, and the running
    statistics input * momentum + batch's * (1 - momentum) as outputs 1 and 2."""
    if len(x) < 2 or any(graph.tensors[i].dtype != "float32" for i in node.inputs[:5]):
        raise AotcError("training-mode BatchNormalization is compiled for float32 X of rank 2 or more", node=node)
    eps, momentum = float(node.attrs.get("epsilon", 1e-5)), float(node.attrs.get("momentum", 0.9))
    b = Builder(node, graph)
    c = x[1]
    kept = (1, c, *[1] * (len(x) - 2))
    reduce = {"axes": [a for a in range(len(x)) if a != 1], "keepdims": 1}
    mean = b.add("ReduceMean", [node.inputs[0]], kept, reduce)
    centred = b.add("Sub", [node.inputs[0], mean], x)
    var = b.add("ReduceMean", [b.add("Mul", [centred, centred], x)], kept, reduce)

    def scalar(v: float) -> str:
        return b.tensor((), np.array(v, np.float32))

    std = b.add("Sqrt", [b.add("Add", [var, scalar(eps)], kept)], kept)
    scale = b.add("Reshape", [node.inputs[1]], kept)
    bias = b.add("Reshape", [node.inputs[2]], kept)
    b.add("Add", [b.add("Div", [b.add("Mul", [scale, centred], x), std], x), bias], None, out=node.outputs[0])
    for k, (running, batch) in enumerate(((node.inputs[3], mean), (node.inputs[4], var)), start=1):
        if len(node.outputs) > k and node.outputs[k]:
            flat = b.add("Reshape", [batch], (c,))
            terms = [b.add("Mul", [running, scalar(momentum)], (c,)), b.add("Mul", [flat, scalar(1 - momentum)], (c,))]
            b.nodes.append(Node("Add", f"{node.name}__running_{k}", terms, [node.outputs[k]], {}, node.sources()))
    return b.nodes


def batchnorm(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """Inference-form BatchNormalization (opsets 7..15) -> epsilon only; momentum does not apply.

    Training mode (training_mode=1, opset 14+) normalises by the batch's own mean and variance and gives
    the running statistics updated by momentum: a deterministic formula, written as Reduce and elementwise
    ops (_batchnorm_training, issue 51). Before opset 14 its statistics outputs are refused on import
    (aot/frontend/onnx/optional_outputs.py, which also dropped the unread extra outputs of training_mode=0
    and refused read ones)."""
    if opset < 9 and node.attrs.get("spatial", 1) == 0:
        raise AotcError("BatchNormalization spatial=0 is not supported", node=node)
    x = shape_of(graph, node.inputs[0])
    channels = x[1] if len(x) > 1 else 1
    for name, what in zip(node.inputs[1:5], ("scale", "B", "mean", "var"), strict=False):
        if name and shape_of(graph, name) != (channels,):  # onnx's inference does not look
            raise AotcError(f"BatchNormalization's {what} is {list(shape_of(graph, name))}, but X {list(x)} has "
                            f"{channels} channels", node=node)
    if node.attrs.get("training_mode", 0):
        return _batchnorm_training(node, graph, x)
    node.attrs = {"epsilon": float(node.attrs.get("epsilon", 1e-5))}
    node.outputs = node.outputs[:1]
