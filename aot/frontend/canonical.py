"""Canonical attributes: resolve ONNX opset differences once, in one place.

ONNX moved many parameters from attributes to inputs over its versions (Clip's
min/max, Slice's starts/ends, Pad's pads, Squeeze's axes, Reduce axes, Resize's
scales ...) and changed some meanings (Softmax's axis before and after opset 13).
Each rule here turns a node of any supported opset into one canonical form:
constant parameter inputs become attributes, defaults are filled in, negative
axes are made positive, auto_pad becomes explicit pads. Kernels, passes and
vendors then see a single form and never look at the opset.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor

Rule = Callable[[Node, Graph, int], "list[Node] | None"]


def canonicalize(graph: Graph, opset: int) -> None:
    new_nodes: list[Node] = []
    for node in graph.nodes:
        rule = RULES.get(node.op)
        replaced = rule(node, graph, opset) if rule else None
        new_nodes.extend(replaced if replaced is not None else [node])
    graph.nodes = new_nodes


# --- helpers ------------------------------------------------------------------

def _const(graph: Graph, node: Node, idx: int, what: str) -> np.ndarray | None:
    """Constant value of optional input `idx`; None when omitted; error when computed at run time."""
    if idx >= len(node.inputs) or not node.inputs[idx]:
        return None
    value = graph.const(node.inputs[idx])
    if value is None:
        raise AotcError(f"{what} (input {idx}) must be a constant", node=node)
    return value


def _shape(graph: Graph, name: str) -> tuple[int, ...]:
    return graph.tensors[name].shape


def _axis(axis: int, rank: int, node: Node) -> int:
    if not -rank <= axis < max(rank, 1):
        raise AotcError(f"axis {axis} is out of range for rank {rank}", node=node)
    return axis + rank if axis < 0 else axis


def _data_only(node: Node, n: int = 1) -> None:
    node.inputs = node.inputs[:n]


# --- convolution and pooling ----------------------------------------------------

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


def _window_attrs(node: Node, in_shape: tuple[int, ...], kernel: tuple[int, ...]) -> None:
    nd = len(kernel)
    strides = list(node.attrs.get("strides", [1] * nd))
    dilations = list(node.attrs.get("dilations", [1] * nd))
    pads = _spatial_pads(node, in_shape[2:], kernel, strides, dilations)
    node.attrs.update(kernel_shape=list(kernel), strides=strides, dilations=dilations, pads=pads)
    node.attrs.pop("auto_pad", None)


def conv(node: Node, graph: Graph, opset: int) -> None:
    w = _shape(graph, node.inputs[1])
    _window_attrs(node, _shape(graph, node.inputs[0]), tuple(node.attrs.get("kernel_shape", w[2:])))
    node.attrs.setdefault("group", 1)


def conv_transpose(node: Node, graph: Graph, opset: int) -> None:
    x = _shape(graph, node.inputs[0])
    w = _shape(graph, node.inputs[1])
    y = _shape(graph, node.outputs[0])
    nd = len(x) - 2
    kernel = list(node.attrs.get("kernel_shape", w[2:]))
    strides = list(node.attrs.get("strides", [1] * nd))
    dilations = list(node.attrs.get("dilations", [1] * nd))
    out_pad = list(node.attrs.get("output_padding", [0] * nd))
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if "output_shape" in node.attrs or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        # total padding follows from the (known) output size
        begin, end = [], []
        for i in range(nd):
            total = strides[i] * (x[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 - y[2 + i]
            total = max(total, 0)
            if auto_pad == "SAME_UPPER" or (auto_pad != "SAME_LOWER" and "output_shape" in node.attrs):
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
        pads = begin + end
    elif auto_pad == "VALID":
        pads = [0] * 2 * nd
    else:
        pads = list(node.attrs.get("pads", [0] * 2 * nd))
    node.attrs = dict(kernel_shape=kernel, strides=strides, dilations=dilations, pads=pads,
                      output_padding=out_pad, group=node.attrs.get("group", 1))


def pool(node: Node, graph: Graph, opset: int) -> None:
    if node.op == "MaxPool" and len(node.outputs) > 1 and node.outputs[1]:
        raise AotcError("MaxPool's Indices output is not supported", node=node)
    if node.attrs.get("storage_order", 0) != 0:
        raise AotcError("MaxPool storage_order=1 is not supported", node=node)
    _window_attrs(node, _shape(graph, node.inputs[0]), tuple(node.attrs["kernel_shape"]))
    node.attrs.setdefault("ceil_mode", 0)
    node.attrs.setdefault("count_include_pad", 0)
    node.outputs = node.outputs[:1]


# --- elementwise ---------------------------------------------------------------

def clip(node: Node, graph: Graph, opset: int) -> None:
    if opset < 11:
        lo, hi = node.attrs.get("min", -np.inf), node.attrs.get("max", np.inf)
    else:
        lo_v, hi_v = _const(graph, node, 1, "Clip min"), _const(graph, node, 2, "Clip max")
        lo = float(lo_v) if lo_v is not None else -np.inf
        hi = float(hi_v) if hi_v is not None else np.inf
    node.attrs = {"min": float(lo), "max": float(hi)}
    _data_only(node)


def _defaults(**defaults: object) -> Rule:
    def rule(node: Node, graph: Graph, opset: int) -> None:
        for k, v in defaults.items():
            node.attrs.setdefault(k, v)
    return rule


def variadic(binary_op: str) -> Rule:
    """Sum/Max/Min of n inputs -> a chain of n-1 broadcasting binary nodes."""
    def rule(node: Node, graph: Graph, opset: int) -> list[Node] | None:
        ins = [i for i in node.inputs if i]
        if len(ins) == 1:
            return [Node("Identity", node.name, ins, node.outputs)]
        if len(ins) == 2:
            node.op = binary_op
            return None
        out = graph.tensors[node.outputs[0]]
        chain: list[Node] = []
        acc = ins[0]
        for k, nxt in enumerate(ins[1:], start=1):
            last = k == len(ins) - 1
            dst = node.outputs[0] if last else f"{node.outputs[0]}__{binary_op.lower()}{k}"
            if not last:
                shape = np.broadcast_shapes(_shape(graph, acc), _shape(graph, nxt))
                graph.tensors[dst] = Tensor(dst, tuple(shape), out.dtype)
            chain.append(Node(binary_op, f"{node.name}" if last else f"{node.name}__{k}", [acc, nxt], [dst]))
            acc = dst
        return chain
    return rule


def softmax(node: Node, graph: Graph, opset: int) -> None:
    """Both axis semantics as (outer, n, inner): reduce over n, for each outer and inner index."""
    shape = _shape(graph, node.inputs[0])
    rank = len(shape)
    if opset < 13:
        axis = _axis(node.attrs.get("axis", 1), rank, node)
        outer, n, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis:])), 1
    else:
        axis = _axis(node.attrs.get("axis", -1), rank, node)
        outer, n, inner = int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:]))
    node.attrs = {"outer": outer, "n": n, "inner": inner}


# --- data movement ---------------------------------------------------------------

def view(node: Node, graph: Graph, opset: int) -> None:
    """Reshape/Flatten/Squeeze/Unsqueeze: only the (known) output shape matters."""
    node.attrs = {}
    _data_only(node)


def concat(node: Node, graph: Graph, opset: int) -> None:
    node.attrs["axis"] = _axis(node.attrs["axis"], len(_shape(graph, node.outputs[0])), node)


def split(node: Node, graph: Graph, opset: int) -> None:
    rank = len(_shape(graph, node.inputs[0]))
    axis = _axis(node.attrs.get("axis", 0), rank, node)
    sizes = [_shape(graph, o)[axis] if o else None for o in node.outputs]
    if None in sizes:  # an unused output still occupies its part of the input
        raise AotcError("Split with an omitted output is not supported", node=node)
    node.attrs = {"axis": axis, "split": sizes}
    _data_only(node)


def slice_(node: Node, graph: Graph, opset: int) -> None:
    shape = _shape(graph, node.inputs[0])
    rank = len(shape)
    if opset < 10:
        starts, ends = node.attrs["starts"], node.attrs["ends"]
        axes = node.attrs.get("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = _const(graph, node, 1, "Slice starts").tolist()
        ends = _const(graph, node, 2, "Slice ends").tolist()
        axes_v = _const(graph, node, 3, "Slice axes")
        steps_v = _const(graph, node, 4, "Slice steps")
        axes = axes_v.tolist() if axes_v is not None else list(range(len(starts)))
        steps = steps_v.tolist() if steps_v is not None else [1] * len(starts)
    full_starts, full_steps = [0] * rank, [1] * rank
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        a = _axis(int(a), rank, node)
        if st == 0:
            raise AotcError("Slice step 0 is not valid", node=node)
        begin, _, step = slice(int(s), int(e), int(st)).indices(shape[a])
        full_starts[a], full_steps[a] = begin, step
    node.attrs = {"starts": full_starts, "steps": full_steps}
    _data_only(node)


def pad(node: Node, graph: Graph, opset: int) -> None:
    rank = len(_shape(graph, node.inputs[0]))
    mode = node.attrs.get("mode", "constant")
    if opset < 11:
        pads, value = list(node.attrs["pads"]), float(node.attrs.get("value", 0.0))
    else:
        pads = _const(graph, node, 1, "Pad pads").astype(np.int64).tolist()
        v = _const(graph, node, 2, "Pad constant_value")
        value = float(v) if v is not None and v.size else 0.0
        axes_v = _const(graph, node, 3, "Pad axes")
        if axes_v is not None:
            full = [0] * 2 * rank
            axes = [_axis(int(a), rank, node) for a in axes_v.tolist()]
            for k, a in enumerate(axes):
                full[a], full[a + rank] = pads[k], pads[k + len(axes)]
            pads = full
    if mode not in ("constant", "reflect", "edge"):
        raise AotcError(f"Pad mode '{mode}' is not supported (constant, reflect, edge)", node=node)
    node.attrs = {"pads": pads, "mode": mode, "value": value}
    _data_only(node)


def transpose(node: Node, graph: Graph, opset: int) -> None:
    rank = len(_shape(graph, node.inputs[0]))
    node.attrs["perm"] = list(node.attrs.get("perm", reversed(range(rank))))


def gather(node: Node, graph: Graph, opset: int) -> None:
    node.attrs["axis"] = _axis(node.attrs.get("axis", 0), len(_shape(graph, node.inputs[0])), node)


def reduce(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    rank = len(_shape(graph, node.inputs[0]))
    axes_from_input = opset >= 18 or (node.op == "ReduceSum" and opset >= 13)
    if axes_from_input:
        v = _const(graph, node, 1, f"{node.op} axes")
        axes = v.tolist() if v is not None else []
    else:
        axes = list(node.attrs.get("axes", []))
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return [Node("Identity", node.name, node.inputs[:1], node.outputs)]
        axes = list(range(rank))
    node.attrs = {"axes": sorted(_axis(int(a), rank, node) for a in axes),
                  "keepdims": int(node.attrs.get("keepdims", 1))}
    _data_only(node)
    return None


def resize(node: Node, graph: Graph, opset: int) -> None:
    """Upsample and every Resize version -> Resize with explicit per-axis scales."""
    x = _shape(graph, node.inputs[0])
    y = _shape(graph, node.outputs[0])
    a = node.attrs
    if node.op == "Upsample" or opset < 11:
        scales = a.get("scales") if opset < 9 else _const(graph, node, 1, "scales")
        mode = a.get("mode", "nearest")
        ctm, nearest = "asymmetric", "floor"
        cubic_a, exclude, extrap = -0.75, 0, 0.0
    else:
        scales_v = _const(graph, node, 2, "Resize scales")
        sizes_v = _const(graph, node, 3, "Resize sizes")
        scales = scales_v if scales_v is not None and scales_v.size else None
        if scales is None and (sizes_v is None or not sizes_v.size):
            raise AotcError("Resize needs scales or sizes", node=node)
        mode = a.get("mode", "nearest")
        ctm = a.get("coordinate_transformation_mode", "half_pixel")
        nearest = a.get("nearest_mode", "round_prefer_floor")
        cubic_a, exclude = a.get("cubic_coeff_a", -0.75), a.get("exclude_outside", 0)
        extrap = a.get("extrapolation_value", 0.0)
        if a.get("antialias", 0):
            raise AotcError("Resize antialias=1 is not supported", node=node)
        axes = a.get("axes")
        if scales is not None and axes is not None:
            full = [1.0] * len(x)
            for k, ax in enumerate(axes):
                full[_axis(ax, len(x), node)] = float(scales[k])
            scales = full
        if ctm == "tf_crop_and_resize":
            raise AotcError("Resize coordinate_transformation_mode tf_crop_and_resize is not supported",
                            node=node)
    if scales is None:
        scales = [yo / xi for yo, xi in zip(y, x, strict=True)]
    if mode not in ("nearest", "linear", "cubic"):
        raise AotcError(f"Resize mode '{mode}' is not supported", node=node)
    node.op = "Resize"
    node.attrs = {"mode": mode, "coordinate_transformation_mode": ctm, "nearest_mode": nearest,
                  "scales": [float(s) for s in scales], "cubic_coeff_a": float(cubic_a),
                  "exclude_outside": int(exclude), "extrapolation_value": float(extrap)}
    _data_only(node)


def batchnorm(node: Node, graph: Graph, opset: int) -> None:
    if opset < 9 and node.attrs.get("spatial", 1) == 0:
        raise AotcError("BatchNormalization spatial=0 is not supported", node=node)
    if any(o for o in node.outputs[1:]) and node.attrs.get("training_mode", 0):
        raise AotcError("BatchNormalization in training mode is not supported", node=node)
    node.attrs = {"epsilon": float(node.attrs.get("epsilon", 1e-5))}
    node.outputs = node.outputs[:1]


def dropout(node: Node, graph: Graph, opset: int) -> None:
    if len(node.outputs) > 1 and node.outputs[1]:
        # the mask of an inference-mode Dropout is all ones
        raise AotcError("Dropout's mask output is not supported", node=node)
    node.outputs = node.outputs[:1]
    _data_only(node)


def cast(node: Node, graph: Graph, opset: int) -> None:
    node.attrs = {"to": graph.tensors[node.outputs[0]].dtype}


def gemm(node: Node, graph: Graph, opset: int) -> None:
    a = node.attrs
    node.attrs = {"alpha": float(a.get("alpha", 1.0)), "beta": float(a.get("beta", 1.0)),
                  "transA": int(a.get("transA", 0)), "transB": int(a.get("transB", 0))}


RULES: dict[str, Rule] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "MaxPool": pool,
    "AveragePool": pool,
    "Clip": clip,
    "LeakyRelu": _defaults(alpha=0.01),
    "Elu": _defaults(alpha=1.0),
    "HardSigmoid": _defaults(alpha=0.2, beta=0.5),
    "LRN": _defaults(alpha=1e-4, beta=0.75, bias=1.0),
    "InstanceNormalization": _defaults(epsilon=1e-5),
    "Sum": variadic("Add"),
    "Max": variadic("Max"),
    "Min": variadic("Min"),
    "Softmax": softmax,
    "LogSoftmax": softmax,
    "Reshape": view,
    "Flatten": view,
    "Squeeze": view,
    "Unsqueeze": view,
    "Concat": concat,
    "Split": split,
    "Slice": slice_,
    "Pad": pad,
    "Transpose": transpose,
    "Gather": gather,
    "ReduceMean": reduce,
    "ReduceSum": reduce,
    "ReduceMax": reduce,
    "Resize": resize,
    "Upsample": resize,
    "BatchNormalization": batchnorm,
    "Dropout": dropout,
    "Cast": cast,
    "Gemm": gemm,
}
