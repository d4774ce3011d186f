"""Elementwise ops (aot/kernels/elementwise.py): Clip's bounds as attributes (or Max/Min where they are
computed at run time), attribute defaults filled in, variadic Sum/Max/Min/Mean as chains of binary ops,
Mish as the ops aotc runs, Gelu's approximation, Pow's exponent as the base's type."""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import Builder, Rule, const_input, data_only, shape_of
from aot.ir import Graph, Node, Tensor


def mish(node: Node, graph: Graph, opset: int) -> list[Node]:
    """Mish -> x * tanh(softplus(x)), in x's type (float32 or float64)."""
    b, x = Builder(node, graph), node.inputs[0]
    shape, dtype = shape_of(graph, x), graph.tensors[x].dtype
    b.add("Mul", [x, b.add("Tanh", [b.add("Softplus", [x], shape, dtype=dtype)], shape, dtype=dtype)], None,
          out=node.outputs[0])
    return b.nodes


def clip(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    x = graph.tensors[node.inputs[0]]
    bounds_in = [(k, node.inputs[k]) for k in (1, 2) if opset >= 11 and len(node.inputs) > k and node.inputs[k]]
    for k, what in ((1, "min"), (2, "max")):  # before opset 11 the bounds are attributes
        if opset < 11 and what in node.attrs:
            name = f"{node.name}__{what}"
            graph.tensors[name] = Tensor(name, (), x.dtype, np.array(node.attrs[what], dtype=x.dtype))
            bounds_in.append((k, name))
    if x.dtype != "float32" or any(graph.const(b) is None for _, b in bounds_in):
        return _clip_as_max_min(node, graph, x, bounds_in)
    if opset < 11:
        lo, hi = node.attrs.get("min", -np.inf), node.attrs.get("max", np.inf)
    else:
        bounds = []
        for k, what, default in ((1, "min", -np.inf), (2, "max", np.inf)):
            v = const_input(graph, node, k, f"Clip {what}")
            if v is not None and v.size != 1:  # the spec says a scalar; onnxruntime takes any one value
                raise AotcError(f"Clip {what} has shape {list(v.shape)}: it must be a single value", node=node)
            bounds.append(float(v.reshape(())) if v is not None else default)
        lo, hi = bounds
    node.attrs = {"min": float(lo), "max": float(hi)}
    data_only(node)


def _clip_as_max_min(node: Node, graph: Graph, x: Tensor, bounds: list[tuple[int, str]]) -> list[Node]:
    """Clip with a bound computed at run time, or of a dtype other than float32 -> Max(x, min) then
    Min(., max) (NaN stays NaN; min > max gives max, as onnxruntime's std::min(std::max(x, lo), hi))."""
    for k, b in bounds:
        if graph.tensors[b].size != 1:
            what = "min" if k == 1 else "max"
            raise AotcError(f"Clip {what} has shape {list(graph.tensors[b].shape)}: it must be a single value",
                            node=node)
    if not bounds:
        return [Node("Identity", node.name, node.inputs[:1], node.outputs, origin=node.sources())]
    nodes, acc = [], node.inputs[0]
    for j, (k, b) in enumerate(bounds):
        last = j == len(bounds) - 1
        dst = node.outputs[0] if last else f"{node.outputs[0]}__clip_min"
        if not last:
            graph.tensors[dst] = Tensor(dst, x.shape, x.dtype)
        if graph.tensors[b].shape != () and x.shape == ():  # a [1] bound would widen the output's shape
            raise AotcError("Clip of a scalar by a bound of shape [1] is not supported", node=node)
        nodes.append(Node("Max" if k == 1 else "Min", node.name if last else f"{node.name}__min", [acc, b], [dst],
                          origin=node.sources()))
        acc = dst
    return nodes


def with_defaults(**defaults: object) -> Rule:
    def rule(node: Node, graph: Graph, opset: int) -> None:
        for k, v in defaults.items():
            node.attrs.setdefault(k, v)
    return rule


def variadic(binary_op: str) -> Rule:
    """Sum/Max/Min of n inputs -> a chain of n-1 broadcasting binary nodes."""
    def rule(node: Node, graph: Graph, opset: int) -> list[Node] | None:
        ins = [i for i in node.inputs if i]
        if len(ins) == 1:
            return [Node("Identity", node.name, ins, node.outputs, origin=node.sources())]
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
                shape = np.broadcast_shapes(shape_of(graph, acc), shape_of(graph, nxt))
                graph.tensors[dst] = Tensor(dst, tuple(shape), out.dtype)
            chain.append(Node(binary_op, f"{node.name}" if last else f"{node.name}__{k}", [acc, nxt], [dst],
                              origin=node.sources()))
            acc = dst
        return chain
    return rule


def mean(node: Node, graph: Graph, opset: int) -> list[Node]:
    """Mean of n inputs -> their Sum (a chain of broadcasting Adds) divided by n."""
    ins = [i for i in node.inputs if i]
    if len(ins) == 1:
        return [Node("Identity", node.name, ins, node.outputs, origin=node.sources())]
    y = graph.tensors[node.outputs[0]]
    total, count = f"{y.name}__sum", f"{y.name}__count"
    graph.tensors[total] = Tensor(total, y.shape, y.dtype)
    graph.tensors[count] = Tensor(count, (), y.dtype, np.array(len(ins), dtype=y.dtype))
    add = Node("Sum", f"{node.name}__sum", ins, [total], origin=node.sources())
    adds = variadic("Add")(add, graph, opset) or [add]
    return [*adds, Node("Div", node.name, [total, count], node.outputs, origin=node.sources())]


def gelu(node: Node, graph: Graph, opset: int) -> None:
    approximate = node.attrs.get("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise AotcError(f"Gelu approximate '{approximate}' is not valid (none, tanh)", node=node)
    node.attrs = {"approximate": approximate}


def prelu(node: Node, graph: Graph, opset: int) -> None:
    """PRelu's slope broadcasts to X one way (numpy's rule, X's shape kept): another slope is refused,
    where onnx's inference lets it through and the kernel would read it as if it broadcast."""
    x, slope = (graph.tensors[i] for i in node.inputs[:2])
    try:
        fits = np.broadcast_shapes(x.shape, slope.shape) == tuple(x.shape)
    except ValueError:
        fits = False
    if not fits:
        raise AotcError(f"PRelu slope of shape {list(slope.shape)} does not broadcast to X of shape "
                        f"{list(x.shape)}", node=node)


INTEGER_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _pow_int_by_float(node: Node, graph: Graph, x: Tensor, e: Tensor) -> list[Node]:
    """An integer base by a float exponent: computed in double and truncated back to the base's type, as
    onnxruntime (static_cast<T>(std::pow(x, y))) and onnx's reference (np.power(...).astype) do."""
    nodes, operands = [], []
    for t in (x, e):
        if t.dtype == "float64":
            operands.append(t.name)
            continue
        name = f"{t.name}__{node.name}_f64"
        graph.tensors[name] = Tensor(name, t.shape, "float64")
        nodes.append(Node("Cast", f"{name}__cast", [t.name], [name], {"to": "float64"}, node.sources()))
        operands.append(name)
    y = graph.tensors[node.outputs[0]]
    power = f"{y.name}__f64"
    graph.tensors[power] = Tensor(power, y.shape, "float64")
    nodes.append(Node("Pow", node.name, operands, [power], {}, node.sources()))
    nodes.append(Node("Cast", f"{node.name}__to_{x.dtype}", [power], [y.name], {"to": x.dtype}, node.sources()))
    return nodes


def pow_(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """Pow of a float base by an integer exponent (ONNX lets the exponent's type differ) -> the exponent
    Cast to the base's type first, so one float kernel serves; an integer base keeps its own kernel."""
    x, e = (graph.tensors[i] for i in node.inputs[:2])
    if x.dtype in INTEGER_BASES and e.dtype in ("float32", "float64"):
        return _pow_int_by_float(node, graph, x, e)
    if x.dtype not in ("float32", "float64") or x.dtype == e.dtype or e.dtype.startswith("float"):
        return None
    cast_e = f"{e.name}__as_{x.dtype}"
    if e.is_const:
        graph.tensors[cast_e] = Tensor(cast_e, e.shape, x.dtype, e.data.astype(x.dtype))
        node.inputs = [node.inputs[0], cast_e]
        return None
    graph.tensors[cast_e] = Tensor(cast_e, e.shape, x.dtype)
    to_x = Node("Cast", f"{node.name}__exponent", [e.name], [cast_e], {"to": x.dtype}, node.sources())
    node.inputs = [node.inputs[0], cast_e]
    return [to_x, node]
