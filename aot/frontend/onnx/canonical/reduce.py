"""The Reduce ops (aot/kernels/reduce.py): axes and keepdims as attributes, also where the axes are given
at run time; ReduceMax/ReduceMin of bool in float32."""

from __future__ import annotations

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import const_input, data_only, positive_axis, shape_of
from aot.ir import Graph, Node, Tensor


def reduce(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """Every Reduce* op -> attrs {axes: sorted unique non-negative, never empty; keepdims}.
    Axes come from the attribute before opset 18 (13 for ReduceSum), from input 1 after;
    no axes means all of them, unless noop_with_empty_axes makes the node an Identity."""
    rank = len(shape_of(graph, node.inputs[0]))
    axes_from_input = opset >= 18 or (node.op == "ReduceSum" and opset >= 13)
    if axes_from_input and len(node.inputs) > 1 and node.inputs[1] and graph.const(node.inputs[1]) is None:
        return _reduce_runtime_axes(node, graph)
    if axes_from_input:
        v = const_input(graph, node, 1, f"{node.op} axes")
        axes = v.tolist() if v is not None else []
    else:
        axes = list(node.attrs.get("axes", []))
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return [Node("Identity", node.name, node.inputs[:1], node.outputs, origin=node.sources())]
        axes = list(range(rank))
    node.attrs = {"axes": sorted({positive_axis(int(a), rank, node) for a in axes}),
                  "keepdims": int(node.attrs.get("keepdims", 1))}
    data_only(node)
    return None


MAX_AXES_CHOICES = 8  # run-time Reduce axes: the axis sets the shapes allow, one compiled call each


def reduce_bool(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """ReduceMax/ReduceMin of bool (opset 20: any, all) -> the float32 reduction between two Casts (exact)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    if x.dtype != "bool":
        return reduce(node, graph, opset)
    wide, result = f"{x.name}__as_f32_{node.name}", f"{y.name}__f32"
    graph.tensors[wide] = Tensor(wide, x.shape, "float32")
    graph.tensors[result] = Tensor(result, y.shape, "float32")
    widen = Node("Cast", f"{node.name}__widen", [x.name], [wide], {"to": "float32", "saturate": 1}, node.sources())
    narrow = Node("Cast", f"{node.name}__narrow", [result], [y.name], {"to": "bool", "saturate": 1}, node.sources())
    node.inputs = [wide, *node.inputs[1:]]
    node.outputs = [result]
    done = reduce(node, graph, opset)
    return [widen, *(done if done is not None else [node]), narrow]


# reductions that leave a single element as it is: over size-1 axes they are the identity
_IDENTITY_ON_ONE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")


def _reduce_runtime_axes(node: Node, graph: Graph) -> list[Node] | None:
    """Reduce axes given at run time (issue 16): the static input and the declared output shape pin them,
    so they are compiled from the shapes and the run-time value is not read. Where the shapes leave a choice
    (e.g. [3, 3] -> [3]: axis 0 or 1), each axis set they allow is compiled and the kernel reads the axes to
    take the one they name; axes that name none of them make the run return AOTC_ERR_SHAPE."""
    x, y = shape_of(graph, node.inputs[0]), shape_of(graph, node.outputs[0])
    keepdims = int(node.attrs.get("keepdims", 1))
    zeros_shape = tuple(1 if k == 0 else n for k, n in enumerate(x)) if keepdims else tuple(x[1:])
    if y == zeros_shape:
        # An output shape the model does not declare was inferred by running the node on zeros (load.py):
        # axes [0], which says nothing of the run-time axes. A declared shape that is the same is refused too.
        raise AotcError(f"{node.op} axes (input 1) must be a constant (computed at run time, they are taken from "
                        f"the declared output shape, and {list(y)} cannot be told from a guess)", node=node)
    unpinned = AotcError(f"{node.op} axes (input 1) are computed at run time and the shapes {list(x)} -> "
                         f"{list(y)} do not pin them: make input 1 a constant", node=node)
    import itertools

    if keepdims:
        if len(x) != len(y) or any(o not in (1, i) for i, o in zip(x, y, strict=True)):
            raise unpinned
        axes = [k for k, (i, o) in enumerate(zip(x, y, strict=True)) if o == 1 and i != 1]
        ones = [k for k, n in enumerate(x) if n == 1]
        fits = [sorted({*axes, *a}) for r in range(len(ones) + 1) for a in itertools.combinations(ones, r)]
        if node.op in _IDENTITY_ON_ONE:  # over size-1 axes these leave each element as it is
            fits = [axes]
    else:
        fits = [sorted(a) for r in range(len(x) + 1) for a in itertools.combinations(range(len(x)), r)
                if [n for k, n in enumerate(x) if k not in a] == list(y)]
    if graph.tensors[node.inputs[1]].size:  # the axes name one axis at least (an empty one is a constant)
        fits = [f for f in fits if f] or fits
    if not fits or len(fits) > MAX_AXES_CHOICES or node.attrs.get("noop_with_empty_axes", 0) and len(fits) > 1:
        raise unpinned
    if len(fits) > 1:  # the shapes leave a choice: the kernel reads the axes and takes the one they name
        node.attrs = {"axes": fits[0], "keepdims": keepdims, "axes_choices": fits}
        node.inputs = node.inputs[:2]
        return None
    axes = fits[0]
    if not axes:
        return [Node("Identity", node.name, node.inputs[:1], node.outputs, origin=node.sources())]
    node.attrs = {"axes": axes, "keepdims": keepdims}
    data_only(node)
    return None
