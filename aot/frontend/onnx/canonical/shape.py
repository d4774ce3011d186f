"""Data movement (aot/kernels/shape.py): Reshape and its kin, Concat, Split, Slice, Pad, Transpose,
Gather, Cast, CastLike, Dropout; CenterCropPad as a Pad; a window's size or ConstantOfShape's shape
computed at run time, which the declared output shape pins (checked at run time)."""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import const_input, data_only, positive_axis, shape_of
from aot.ir import Graph, Node, Tensor
from aot.ir.evaluate import evaluate_node


def _checked(node: Node, graph: Graph, data: str, values: str, expected: list[int], out: str) -> Node:
    """CheckValues: `out` is `data` once the run-time `values` are found to be `expected` (the values the
    declared output shape pins); other values make the run return AOTC_ERR_SHAPE (aot/kernels/shape.py)."""
    if graph.tensors[values].dtype not in ("int64", "int32") or graph.tensors[values].size != len(expected):
        raise AotcError(f"input '{values}' ({graph.tensors[values].dtype}{list(graph.tensors[values].shape)}) "
                        "must be a constant", node=node)
    return Node("CheckValues", f"{node.name}__check" if out != node.outputs[0] else node.name, [data, values], [out],
                {"expected": [int(v) for v in expected]}, node.sources())


def from_declared_shape(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """HannWindow/HammingWindow/BlackmanWindow and ConstantOfShape whose size or shape is computed at run
    time: the declared output shape pins it, so the output is a constant (onnx's reference on that size)
    copied out once the run-time value is checked to be it."""
    from onnx import helper


    arg = node.inputs[0]
    if graph.const(arg) is not None:
        return None
    y = graph.tensors[node.outputs[0]]
    expected = list(y.shape) if node.op == "ConstantOfShape" else [y.shape[0]] if len(y.shape) == 1 else None
    if expected is None:
        raise AotcError(f"{node.op}'s output must be 1-D", node=node)
    arg_t = graph.tensors[arg]
    proto = helper.make_node(node.op, ["in0"], ["out0"])
    for k, v in node.attrs.items():
        proto.attribute.append(helper.make_attribute(k, v))
    shown = np.array(expected if node.op == "ConstantOfShape" else expected[0], dtype=arg_t.dtype)
    value = evaluate_node(proto, [shown], [helper.make_opsetid("", opset)])[0]
    if value.shape != y.shape or value.dtype.name != y.dtype:
        raise AotcError(f"{node.op} gives {value.dtype.name}{list(value.shape)}, declared {y.dtype}{list(y.shape)}",
                        node=node)
    const = f"{node.outputs[0]}__value"
    graph.tensors[const] = Tensor(const, y.shape, y.dtype, value)
    return [_checked(node, graph, const, arg, expected, node.outputs[0])]


def center_crop_pad(node: Node, graph: Graph, opset: int) -> list[Node]:
    """CenterCropPad -> one Pad: negative pads crop (the start at (in - out) / 2, rounded down), positive
    ones pad with zeros (the begin (out - in) / 2, rounded down). A shape computed at run time is the
    declared output shape's, checked at run time (CheckValues)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    rank = len(x.shape)
    axes = [positive_axis(int(a), rank, node) for a in node.attrs.get("axes", range(rank))]
    shape_in = node.inputs[1]
    value = graph.const(shape_in)
    nodes, data = [], x.name
    if value is None:
        data = f"{node.outputs[0]}__checked"
        graph.tensors[data] = Tensor(data, x.shape, x.dtype)
        nodes.append(_checked(node, graph, x.name, shape_in, [y.shape[a] for a in axes], data))
        target = list(y.shape)
    else:
        if value.size != len(axes):
            raise AotcError(f"CenterCropPad has {value.size} sizes for {len(axes)} axes", node=node)
        target = list(x.shape)
        for k, a in enumerate(axes):
            target[a] = int(value.reshape(-1)[k])
    if tuple(target) != y.shape:
        raise AotcError(f"CenterCropPad to {target}, declared {list(y.shape)}", node=node)
    pads = [0] * 2 * rank
    for a in range(rank):
        diff = target[a] - x.shape[a]
        begin = diff // 2 if diff >= 0 else -((-diff) // 2)
        pads[a], pads[a + rank] = begin, diff - begin
    nodes.append(Node("Pad", node.name, [data], node.outputs, {"pads": pads, "mode": "constant", "value": 0},
                      node.sources()))
    return nodes


def topk(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """TopK whose k is computed at run time: the declared output shape pins it (the outputs' size along the
    axis), so the node takes that k as a constant once the run-time k is checked to be it (CheckValues)."""
    if opset < 10 or len(node.inputs) < 2 or graph.const(node.inputs[1]) is not None:
        return None
    pinned_shape(node, graph, "TopK's k")
    x, k_in = graph.tensors[node.inputs[0]], node.inputs[1]
    if not x.shape:
        return None  # the kernel's check refuses a scalar
    axis = positive_axis(int(node.attrs.get("axis", -1)), len(x.shape), node)
    k = graph.tensors[node.outputs[0]].shape[axis]
    data = f"{node.outputs[0]}__checked"
    graph.tensors[data] = Tensor(data, x.shape, x.dtype)
    const = f"{node.outputs[0]}__k"
    graph.tensors[const] = Tensor(const, (1,), "int64", np.array([k], np.int64))
    check = _checked(node, graph, x.name, k_in, [k], data)
    node.inputs = [data, const, *node.inputs[2:]]
    return [check, node]


def view(node: Node, graph: Graph, opset: int) -> None:
    """Reshape/Flatten/Squeeze/Unsqueeze: only the (known) output shape matters."""
    node.attrs = {}
    data_only(node)


def concat(node: Node, graph: Graph, opset: int) -> None:
    node.attrs["axis"] = positive_axis(node.attrs["axis"], len(shape_of(graph, node.outputs[0])), node)


def split(node: Node, graph: Graph, opset: int) -> None:
    rank = len(shape_of(graph, node.inputs[0]))
    axis = positive_axis(node.attrs.get("axis", 0), rank, node)
    sizes = [shape_of(graph, o)[axis] if o else None for o in node.outputs]
    if None in sizes:  # an unused output still occupies its part of the input
        raise AotcError("Split with an omitted output is not supported", node=node)
    node.attrs = {"axis": axis, "split": sizes}
    data_only(node)


def _runtime(graph: Graph, names: list[str]) -> bool:
    """Whether any of these (optional) inputs is computed at run time."""
    return any(name and graph.const(name) is None for name in names)


def pinned_shape(node: Node, graph: Graph, what: str) -> None:
    """A node that reads `what` at run time takes its output shape from the model: refused when that shape
    was only guessed on import (the node run on zeros, aot/frontend/onnx/to_ir.py), not declared or inferred."""
    if any(o in graph.info.guessed_shapes for o in node.outputs if o):
        raise AotcError(f"{what} computed at run time set the output shape, which the model neither declares nor "
                        "lets shape inference find: declare the output's shape or give the value (--input-value)",
                        node=node)


def _vector(graph: Graph, node: Node, name: str, what: str) -> int:
    """Length of a 1-D int32/int64 parameter input, which a kernel reads at run time."""
    t = graph.tensors[name]
    if t.dtype not in ("int64", "int32") or len(t.shape) != 1:
        raise AotcError(f"{what} must be a 1-D int64 or int32 tensor, got {t.dtype}{list(t.shape)}", node=node)
    return t.shape[0]


def _slice_values(node: Node, graph: Graph) -> None:
    """Slice whose starts, ends, axes or steps are computed at run time -> SliceValues: the declared (or
    inferred) output shape is compiled in; the kernel reads the values and returns AOTC_ERR_SHAPE when
    they give another shape (aot/kernels/shape.py)."""
    pinned_shape(node, graph, "Slice starts, ends, axes or steps")
    rank = len(shape_of(graph, node.inputs[0]))
    names = [*node.inputs[1:5], *[""] * (5 - len(node.inputs))]
    what = ("Slice starts", "Slice ends", "Slice axes", "Slice steps")
    lengths = {_vector(graph, node, name, w) for name, w in zip(names, what, strict=True) if name}
    if len(lengths) != 1:
        raise AotcError("Slice starts, ends, axes and steps differ in length", node=node)
    if lengths.pop() > rank:
        raise AotcError(f"Slice has more starts than the input's rank {rank}", node=node)
    node.op, node.attrs, node.inputs = "SliceValues", {}, [node.inputs[0], *names]


def _pad_values(node: Node, graph: Graph, mode: str) -> None:
    """Pad whose pads or axes are computed at run time -> PadValues: the output shape is compiled in; the
    kernel reads pads and axes and returns AOTC_ERR_SHAPE when they give another shape."""
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise AotcError(f"Pad mode '{mode}' is not supported (constant, reflect, edge, wrap)", node=node)
    pinned_shape(node, graph, "Pad pads or axes")
    rank = len(shape_of(graph, node.inputs[0]))
    pads, axes = node.inputs[1], node.inputs[3] if len(node.inputs) > 3 else ""
    n = _vector(graph, node, pads, "Pad pads")
    if n % 2 or n // 2 > rank or (axes and _vector(graph, node, axes, "Pad axes") != n // 2) \
            or (not axes and n != 2 * rank):
        raise AotcError(f"Pad has {n} pads for rank {rank}" + (" and its axes" if axes else ""), node=node)
    value_in = node.inputs[2] if len(node.inputs) > 2 else ""
    value: object = 0
    if value_in and graph.const(value_in) is not None:
        v = graph.const(value_in)
        value, value_in = (v.reshape(-1)[0].item() if v.size else 0), ""
    elif value_in and graph.tensors[value_in].size != 1:
        raise AotcError("Pad constant_value must be a single value", node=node)
    if mode != "constant":
        value_in = ""
    node.op, node.attrs = "PadValues", {"mode": mode, "value": value}
    node.inputs = [node.inputs[0], pads, value_in, axes]


def slice_(node: Node, graph: Graph, opset: int) -> None:
    shape = shape_of(graph, node.inputs[0])
    rank = len(shape)
    if opset < 10:
        starts, ends = node.attrs["starts"], node.attrs["ends"]
        axes = node.attrs.get("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    elif _runtime(graph, node.inputs[1:5]):
        _slice_values(node, graph)
        return
    else:
        starts = const_input(graph, node, 1, "Slice starts").tolist()
        ends = const_input(graph, node, 2, "Slice ends").tolist()
        axes_v = const_input(graph, node, 3, "Slice axes")
        steps_v = const_input(graph, node, 4, "Slice steps")
        axes = axes_v.tolist() if axes_v is not None else list(range(len(starts)))
        steps = steps_v.tolist() if steps_v is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise AotcError("Slice starts, ends, axes and steps differ in length", node=node)
    full_starts, full_steps = [0] * rank, [1] * rank
    seen: set[int] = set()
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        a = positive_axis(int(a), rank, node)
        if a in seen:
            raise AotcError(f"Slice axis {a} is repeated", node=node)
        seen.add(a)
        if st == 0:
            raise AotcError("Slice step 0 is not valid", node=node)
        if st < 0 and int(e) in (2**63 - 1, 2**31 - 1):
            # onnxruntime reads this end as "through index 0"; the ONNX spec (and its shape
            # inference, which gave the output shape) clamps it to dim - 1: an empty slice.
            raise AotcError(f"Slice on axis {a} with a negative step and end {int(e)} (INT_MAX) is not "
                            "supported: ONNX gives an empty slice, onnxruntime slices to index 0; "
                            "use INT_MIN as the end to slice to index 0", node=node)
        # ONNX clamps a start to [0, dim] (step > 0) or [0, dim - 1] (step < 0), unlike Python's
        # slice.indices (which yields an empty slice for a negative step and a start below -dim).
        # The end only sets the count, which the output shape already gives.
        dim, s = shape[a], int(s)
        s = s + dim if s < 0 else s
        full_starts[a] = min(max(s, 0), dim if st > 0 else dim - 1)
        full_steps[a] = int(st)
    node.attrs = {"starts": full_starts, "steps": full_steps}
    data_only(node)


def pad(node: Node, graph: Graph, opset: int) -> None:
    rank = len(shape_of(graph, node.inputs[0]))
    mode = node.attrs.get("mode", "constant")
    if opset < 11:
        pads, value = [int(p) for p in node.attrs["pads"]], float(node.attrs.get("value", 0.0))
    elif _runtime(graph, [node.inputs[1], *node.inputs[3:4]]):
        _pad_values(node, graph, mode)
        return
    else:
        pads = const_input(graph, node, 1, "Pad pads").astype(np.int64).reshape(-1).tolist()
        runtime_value = len(node.inputs) > 2 and node.inputs[2] and graph.const(node.inputs[2]) is None
        v = None if runtime_value else const_input(graph, node, 2, "Pad constant_value")
        value = v.reshape(-1)[0].item() if v is not None and v.size else 0  # int, float or bool
        axes_v = const_input(graph, node, 3, "Pad axes")
        if axes_v is not None:
            axes = [positive_axis(int(a), rank, node) for a in axes_v.reshape(-1).tolist()]
            if len(pads) != 2 * len(axes):
                raise AotcError(f"Pad has {len(pads)} pads for {len(axes)} axes", node=node)
            full = [0] * 2 * rank
            for k, a in enumerate(axes):
                full[a], full[a + rank] = pads[k], pads[k + len(axes)]
            pads = full
    if len(pads) != 2 * rank:
        raise AotcError(f"Pad has {len(pads)} pads for rank {rank}", node=node)
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise AotcError(f"Pad mode '{mode}' is not supported (constant, reflect, edge, wrap)", node=node)
    node.attrs = {"pads": pads, "mode": mode, "value": value}
    if opset >= 11 and runtime_value and mode == "constant":  # read at run time: the kernel takes its address
        if graph.tensors[node.inputs[2]].size != 1:
            raise AotcError("Pad constant_value must be a single value", node=node)
        node.inputs = [node.inputs[0], node.inputs[2]]
        return
    data_only(node)


def transpose(node: Node, graph: Graph, opset: int) -> None:
    rank = len(shape_of(graph, node.inputs[0]))
    perm = [int(p) for p in node.attrs.get("perm", reversed(range(rank)))]
    if sorted(perm) != list(range(rank)):
        raise AotcError(f"Transpose perm {perm} is not a permutation of 0..{rank - 1}", node=node)
    node.attrs = {"perm": perm}


def gather(node: Node, graph: Graph, opset: int) -> None:
    node.attrs["axis"] = positive_axis(node.attrs.get("axis", 0), len(shape_of(graph, node.inputs[0])), node)


def dropout(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """Inference-mode Dropout -> Identity; a mask that is read (an unread one was dropped on import)
    becomes a constant: all true, as ONNX defines it from opset 12 (output = data * mask * scale with
    nothing dropped). A read mask before opset 12, which the spec leaves undefined in inference, was
    refused on import (aot/frontend/onnx/optional_outputs.py). Training (training_mode true or only known
    at run time, opset 12+) draws a random mask: with a seed, as onnx's reference draws it (numpy's
    RandomState(seed), a kernel: aot/kernels/random.py); without one it is refused. Ratio does not matter
    in inference."""
    training = node.inputs[2] if len(node.inputs) > 2 else ""
    if training:
        value = graph.const(training)
        if value is None or bool(np.asarray(value).reshape(-1)[0]):
            if "seed" in node.attrs:
                return None  # the seeded kernel, which reads ratio and training_mode at run time
            when = "computed at run time" if value is None else "true"
            raise AotcError(f"Dropout's training_mode (input 2) is {when} and the node has no seed: its random "
                            "mask is unspecified (a seed draws it as onnx's reference does)", node=node)
    mask = node.outputs[1] if len(node.outputs) > 1 else ""
    if mask:
        t = graph.tensors[mask]
        graph.tensors[mask] = Tensor(mask, t.shape, t.dtype, np.ones(t.shape, dtype=t.dtype))
    return [Node("Identity", node.name, node.inputs[:1], node.outputs[:1], origin=node.sources())]


def cast(node: Node, graph: Graph, opset: int) -> None:
    saturate = int(node.attrs.get("saturate", 1))  # opset 19: to float8, clamp (1) or overflow to NaN/inf (0)
    to = graph.tensors[node.outputs[0]].dtype
    mode = node.attrs.get("round_mode", "up")  # opset 24: how a cast to float8e8m0 rounds; no other type reads it
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("up", "down", "nearest"):
        raise AotcError(f"Cast round_mode '{mode}' is not one of up, down, nearest", node=node)
    node.attrs = {"to": to, "saturate": saturate, **({"round_mode": mode} if to == "float8_e8m0fnu" else {})}


def cast_like(node: Node, graph: Graph, opset: int) -> None:
    """CastLike (opset 15; ONNX's function bodies use it, e.g. Gelu's and LayerNormalization's) ->
    Cast to the dtype of its second input."""
    node.op = "Cast"
    data_only(node)
    cast(node, graph, opset)
