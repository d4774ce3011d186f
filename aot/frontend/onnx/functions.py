"""ONNX ops that aotc has no kernel for but that onnx defines as a function of other ops: each node is
replaced by its function body (onnx's own, built for the node's attributes and input types), so it
compiles as the ops it is made of. RotaryEmbedding (23), LinearAttention and CausalConvWithState
(27), GroupNormalization (18, 21), SwiGLU (28) and ai.onnx.preview's FlexAttention go this way
(issue 51); a node of the body aotc cannot compile is refused as any other node is.

The ops are listed, not found: an op aotc has a kernel or a canonical rule for keeps it (the frontend
does not read the kernel table), and tests/frontend/test_opsets.py checks that every op with a function body is
in one place or the other (or named there as left alone)."""

from __future__ import annotations

import onnx
import onnx.inliner
from onnx import helper

FUNCTION_OPS = frozenset({"RotaryEmbedding", "LinearAttention", "CausalConvWithState", "GroupNormalization",
                          "SwiGLU"})
PREVIEW = "ai.onnx.preview"
PREVIEW_FUNCTION_OPS = frozenset({"FlexAttention"})  # of the domain PREVIEW
_DOMAIN = "aotc.function"


def expandable(node: onnx.NodeProto) -> bool:
    """Whether the node is one of the ops replaced by their bodies."""
    return (node.domain in ("", "ai.onnx") and node.op_type in FUNCTION_OPS) or \
        (node.domain == PREVIEW and node.op_type in PREVIEW_FUNCTION_OPS)


def _types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # the types known without inference are enough for most bodies
        pass
    g = model.graph
    types = {vi.name: vi.type for vi in [*g.input, *g.value_info, *g.output]}
    for init in g.initializer:
        types[init.name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
    return types


def _body(node: onnx.NodeProto, opset: int, types: dict[str, onnx.TypeProto]) -> onnx.FunctionProto | None:
    """The node's function body at the model's opset of its domain, or None where onnx has none for it."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "" if node.domain == "ai.onnx" else node.domain)
    except onnx.defs.SchemaError:
        return None
    try:
        if schema.has_context_dependent_function:  # built from the node's attributes and its inputs' types
            version = max(v for v in schema.context_dependent_function_opset_versions if v <= opset)
            in_types = [types.get(name, onnx.TypeProto()).SerializeToString() for name in node.input]
            body = schema.get_context_dependent_function_with_opset_version(version, node.SerializeToString(),
                                                                              in_types)
        elif schema.has_function:
            body = schema.get_function_with_opset_version(max(v for v in schema.function_opset_versions
                                                              if v <= opset))
        else:
            return None
    except Exception:  # no body at this opset, or none for these inputs: the node stays, and is refused
        return None
    return onnx.FunctionProto.FromString(body) if body else None


def expand_functions(model: onnx.ModelProto, opset: int) -> int:
    """Every top-level node of FUNCTION_OPS (PREVIEW_FUNCTION_OPS) replaced by its function body, in place;
    how many were. `opset`: the default domain's."""
    nodes = {k for k, n in enumerate(model.graph.node) if expandable(n)}
    opsets = {imp.domain: imp.version for imp in model.opset_import}
    if not nodes:
        return 0
    types = _types(model)
    expanded = 0
    local = onnx.ModelProto()  # the bodies as local functions of a copy, inlined by onnx's inliner
    local.CopyFrom(model)
    for k in sorted(nodes):
        node, copy = model.graph.node[k], local.graph.node[k]
        body = _body(node, opset if node.domain in ("", "ai.onnx") else opsets.get(node.domain, 1), types)
        if body is None:
            continue
        fn = onnx.FunctionProto()
        fn.CopyFrom(body)
        fn.domain, fn.name = _DOMAIN, f"{node.op_type}_{expanded}"
        for imp in fn.opset_import:  # the body as of its op's version, read at the model's (the inliner
            if imp.domain in ("", "ai.onnx") and imp.version != opset:  # wants one version per domain)
                imp.version = opset
        copy.domain, copy.op_type = _DOMAIN, fn.name
        local.functions.append(fn)
        expanded += 1
    if not expanded:
        return 0
    local.opset_import.append(helper.make_opsetid(_DOMAIN, 1))
    try:
        inlined = onnx.inliner.inline_selected_functions(local, [(_DOMAIN, f.name) for f in local.functions
                                                                 if f.domain == _DOMAIN])
    except RuntimeError:  # onnx cannot inline them here: the nodes stay, and are refused by name
        return 0
    kept = [imp for imp in inlined.opset_import if imp.domain != _DOMAIN]
    del inlined.opset_import[:]
    inlined.opset_import.extend(kept)
    functions = [f for f in inlined.functions if f.domain != _DOMAIN]
    del inlined.functions[:]
    inlined.functions.extend(functions)
    model.CopyFrom(inlined)
    return expanded
