"""Opsets 1 to 6, read by upgrading the model on import to the lowest opset aotc reads (7), with
onnx's version converter: later stages only ever see opsets 7 and up. What the converter does not
upgrade right is done here first (a broadcast along an `axis` that is not the trailing one); a
model it still cannot upgrade is refused in one line naming the node it stops at."""

from __future__ import annotations

import re

import onnx
from onnx import helper, version_converter

from aot.errors import AotcError, OnnxNodeName

# the ops whose opset-1..6 forms broadcast only with broadcast=1, B aligned at `axis` of A
_LEGACY_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}


def _rank(types: dict[str, onnx.TypeProto], name: str) -> int | None:
    t = types.get(name)
    if t is None or t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
        return None
    return len(t.tensor_type.shape.dim)


def _types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """The type of every top-level tensor onnx's inference knows (inputs, initializers, values)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        inferred = model
    g = inferred.graph
    types = {vi.name: vi.type for vi in [*g.input, *g.value_info, *g.output]}
    for init in g.initializer:
        types[init.name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
    return types


def _unsqueezed(model: onnx.ModelProto, types: dict[str, onnx.TypeProto], nodes: list[onnx.NodeProto],
                node: onnx.NodeProto, trailing: int) -> None:
    """node's input 1 with `trailing` 1s appended to its shape (an opset-1 Unsqueeze, which the converter upgrades)."""
    b = types[node.input[1]].tensor_type
    rank = len(b.shape.dim)
    name = f"{node.input[1]}__for_{node.name or node.output[0]}"
    nodes.append(helper.make_node("Unsqueeze", [node.input[1]], [name], axes=list(range(rank, rank + trailing))))
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in b.shape.dim]
    model.graph.value_info.append(helper.make_tensor_value_info(name, b.elem_type, dims + [1] * trailing))
    node.input[1] = name


def align_broadcast_axes(model: onnx.ModelProto) -> int:
    """B of a legacy broadcast along a middle `axis` of A (B [C] over A [N, C, H, W] at axis 1, as
    Caffe2-era models add biases) gets the trailing 1s that put it where numpy's rule puts it; the
    converter would align it with A's trailing axes instead and fail. So does PRelu's slope [C]: before
    opset 7 it was per channel (axis 1), from 7 on it broadcasts the numpy way, and the converter keeps
    it as it is. Returns how many inputs were aligned."""
    types = _types(model)
    aligned = 0
    nodes: list[onnx.NodeProto] = []
    for node in model.graph.node:
        ra = _rank(types, node.input[0]) if len(node.input) == 2 else None
        rb = _rank(types, node.input[1]) if len(node.input) == 2 else None
        if ra is None or rb is None or node.domain not in ("", "ai.onnx"):
            nodes.append(node)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type in _LEGACY_BROADCAST and attrs.get("broadcast") == 1 and "axis" in attrs:
            axis = attrs["axis"] + ra if attrs["axis"] < 0 else attrs["axis"]
            if ra - axis - rb > 0:
                _unsqueezed(model, types, nodes, node, ra - axis - rb)
                for a in node.attribute:
                    if a.name == "axis":
                        a.i = axis
                aligned += 1
        elif node.op_type == "PRelu" and rb == 1 and ra >= 3:
            slope = types[node.input[1]].tensor_type.shape.dim[0]
            if not slope.HasField("dim_value") or slope.dim_value != 1:
                _unsqueezed(model, types, nodes, node, ra - 2)
                aligned += 1
        nodes.append(node)
    if aligned:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return aligned


def _reason(e: Exception) -> str:
    """The converter's assertion, without its source location."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    m = re.search(r"failed: (.*)", text)
    text = m.group(1) if m else re.sub(r"^\S+\.(cc|h):\d+: ", "", text)
    return text.replace("'%s'", "").replace("%lld", "?")[:200]


def _node_alone(model: onnx.ModelProto, node: onnx.NodeProto, types: dict[str, onnx.TypeProto]) -> onnx.ModelProto:
    """One node as a model of its own (its inputs typed as inference knows them), to see whether it upgrades."""
    inits = {i.name: i for i in model.graph.initializer}
    ins = [helper.make_value_info(n, types[n]) if n in types else helper.make_empty_tensor_value_info(n)
           for n in dict.fromkeys(node.input) if n]
    outs = [helper.make_value_info(n, types[n]) if n in types else helper.make_empty_tensor_value_info(n)
            for n in node.output if n]
    graph = helper.make_graph([node], "one", ins, outs, [inits[n] for n in node.input if n in inits])
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)


def _with_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    try:
        return onnx.shape_inference.infer_shapes(model)
    except Exception:
        return model


def _convert(model: onnx.ModelProto, opset: int, target: int) -> onnx.ModelProto:
    """onnx's converter one opset at a time, the shapes inferred at each: its adapters read the shapes
    of the values they change, which the oldest schemas do not infer (Reshape-1's)."""
    for version in range(opset + 1, target + 1):
        model = version_converter.convert_version(_with_shapes(model), version)
    return model


def upgrade(model: onnx.ModelProto, opset: int, target: int) -> onnx.ModelProto:
    """`model` (of default-domain `opset` < `target`) at opset `target`, or an AotcError naming the
    node the converter stops at."""
    align_broadcast_axes(model)
    # the converter reads initializers only as graph inputs (as IR 3 listed them): listed for it, then unlisted
    listed = {vi.name for vi in model.graph.input}
    added = [i for i in model.graph.initializer if i.name not in listed]
    model.graph.input.extend(helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)) for i in added)
    try:
        upgraded = _convert(model, opset, target)
    except Exception as e:
        whole = e
    else:
        names = {i.name for i in added}
        kept = [vi for vi in upgraded.graph.input if vi.name not in names]
        del upgraded.graph.input[:]
        upgraded.graph.input.extend(kept)
        return upgraded
    types = _types(model)
    for node in model.graph.node:
        try:
            _convert(_node_alone(model, node, types), opset, target)
        except Exception as e:
            raise AotcError(f"opset {opset} does not upgrade to opset {target} with onnx's version converter: "
                            f"{_reason(e)}", node=OnnxNodeName(node)) from e
    raise AotcError(f"opset {opset} does not upgrade to opset {target} with onnx's version converter: "
                    f"{_reason(whole)}") from whole
