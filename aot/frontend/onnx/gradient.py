"""ai.onnx.preview.training's Gradient written out as ops (issue 51): the reverse-mode derivative of
its `y` with respect to each of its `xs`, through the nodes of the graph between them.

Covered: Add, Sub, Mul, Div and Neg whose operands all have one static shape (no broadcasting, so no
gradient has to be summed back to a smaller shape), the Gradient's inputs being its xs (and zs) by name,
as the spec's examples and the backend tests write it. Anything else on the path is refused naming the
node; a Gradient is never answered by a partial derivative.
"""

from __future__ import annotations

import onnx
from onnx import helper

from aot.errors import AotcError, OnnxNodeName

TRAINING = "ai.onnx.preview.training"
_OPS = ("Add", "Sub", "Mul", "Div", "Neg")


def _shapes(model: onnx.ModelProto) -> tuple[dict[str, tuple[int, ...] | None], dict[str, int]]:
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    out: dict[str, tuple[int, ...] | None] = {}
    elems: dict[str, int] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        tt = vi.type.tensor_type
        elems[vi.name] = tt.elem_type
        static = tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim)
        out[vi.name] = tuple(d.dim_value for d in tt.shape.dim) if static else None
    for init in g.initializer:
        out[init.name], elems[init.name] = tuple(init.dims), init.data_type
    return out, elems


def _gradient(model: onnx.ModelProto, node: onnx.NodeProto, k: int,
              shapes: dict[str, tuple[int, ...] | None], elems: dict[str, int]) -> list[onnx.NodeProto]:
    """The nodes that compute `node`'s outputs."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    xs = [x.decode() for x in attrs.get("xs", [])]
    zs = [z.decode() for z in attrs.get("zs", [])]
    y = attrs.get("y", b"").decode()
    if list(node.input) != xs + zs:
        raise AotcError("Gradient is compiled where its inputs are its xs and zs themselves", node=OnnxNodeName(node))
    producer = {o: n for n in model.graph.node[:k] for o in n.output}
    # the nodes between xs and y, in the graph's order
    on_path: list[onnx.NodeProto] = []
    reaches: dict[str, bool] = {x: True for x in xs}
    for n in model.graph.node[:k]:
        if any(reaches.get(i, False) for i in n.input):
            on_path.append(n)
            for o in n.output:
                reaches[o] = True
    if y not in producer and y not in xs:
        raise AotcError(f"Gradient's y '{y}' is not computed before it", node=OnnxNodeName(node))
    base = node.name or f"Gradient_{k}"
    nodes: list[onnx.NodeProto] = []
    count = [0]

    def op(op_type: str, *inputs: str, out: str | None = None, **kw: object) -> str:
        count[0] += 1
        name = f"{base}/{op_type}_{count[0]}"
        nodes.append(helper.make_node(op_type, list(inputs), [out or name], name=name, **kw))
        return out or name

    def filled(t: str, value: float) -> str:  # a tensor of t's shape and type, every element `value`
        elem = elems.get(t, onnx.TensorProto.FLOAT)
        c = op("Constant", value=helper.make_tensor(f"{base}_c{count[0]}", elem, [], [value]))
        return op("Expand", c, op("Shape", t))

    grads: dict[str, list[str]] = {y: [filled(y, 1.0)]}
    for n in reversed(on_path):
        outs = [o for o in n.output if grads.get(o)]
        if not outs:
            continue
        if n.domain not in ("", "ai.onnx") or n.op_type not in _OPS:
            raise AotcError(f"Gradient through {n.op_type} is not supported (only {', '.join(_OPS)})",
                            node=OnnxNodeName(n))
        shape = {shapes.get(t) for t in [*n.input, *n.output]}
        if len(shape) != 1 or None in shape:
            raise AotcError("Gradient through operands of different or unknown shapes is not supported",
                            node=OnnxNodeName(n))
        g = grads[n.output[0]][0] if len(grads[n.output[0]]) == 1 else op("Sum", *grads[n.output[0]])
        a = n.input[0]
        b = n.input[1] if len(n.input) > 1 else ""
        if n.op_type == "Neg":
            contrib = {a: op("Neg", g)}
        elif n.op_type == "Add":
            contrib = {a: g, b: g} if a != b else {a: op("Add", g, g)}
        elif n.op_type == "Sub":
            contrib = {a: g, b: op("Neg", g)} if a != b else {}
        elif n.op_type == "Mul":
            contrib = {a: op("Mul", g, b), b: op("Mul", g, a)} if a != b else {a: op("Mul", op("Add", g, g), a)}
        else:  # Div: d(a/b) = g / b da - g a / b^2 db
            if a == b:
                contrib = {}
            else:
                contrib = {a: op("Div", g, b), b: op("Neg", op("Div", op("Mul", g, a), op("Mul", b, b)))}
        for t, d in contrib.items():
            if reaches.get(t, False):
                grads.setdefault(t, []).append(d)
    for x, out in zip(xs, node.output, strict=False):
        if not out:
            continue
        parts = grads.get(x, [])
        if not parts:  # y does not depend on x
            op("Identity", filled(x, 0.0), out=out)
        elif len(parts) == 1:
            op("Identity", parts[0], out=out)
        else:
            op("Sum", *parts, out=out)
    return nodes


def lower_gradients(model: onnx.ModelProto) -> None:
    """Each top-level Gradient node replaced, in place, by the ops of its derivative."""
    shapes, elems = _shapes(model)
    nodes: list[onnx.NodeProto] = []
    for k, node in enumerate(model.graph.node):
        if node.domain == TRAINING and node.op_type == "Gradient":
            nodes.extend(_gradient(model, node, k, shapes, elems))
        else:
            nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
