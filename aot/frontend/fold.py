"""Shape inference and constant folding on the ONNX model, iterated to a fixed point.

ONNX shape inference stops at values computed at run time from shapes
(Shape -> Gather -> Concat -> Reshape). Folding such chains turns them into
initializers, after which inference can see through the Reshape, which may
expose more folding. Folding evaluates nodes with onnx's own reference
implementation, so every op's semantics come from the ONNX project, not us.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator

from aot.errors import AotcError
from aot.frontend import contrib

# Ops whose result is not a function of their inputs.
_NONDETERMINISTIC = {
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
}
MAX_ROUNDS = 32
# Quantization ops stay in the graph even on constant inputs: the QDQ rewrite (aot/passes/qdq.py)
# reads the integer weights behind a DequantizeLinear, and folds what it does not fuse itself
# (onnx's reference evaluator has no DequantizeLinear below opset 19).
_QUANT = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
          "MatMulInteger", "ConvInteger"}


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """onnx's shape inference, with the com.microsoft ops' shapes filled in between its rounds."""
    for _ in range(MAX_ROUNDS):
        try:
            model = shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
        except Exception as e:  # onnx raises a variety of types for inconsistent models
            raise AotcError(f"shape inference failed: {str(e).splitlines()[0]}") from e
        if not contrib.fill_shapes(model):
            break
    return model


def static_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...] | None]:
    """Shape of every named value that inference knows; None where a dim is unknown."""
    out: dict[str, tuple[int, ...] | None] = {}
    g = model.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type
        if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
            out.setdefault(vi.name, None)
            continue
        dims = t.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            out[vi.name] = tuple(int(d.dim_value) for d in dims)
        else:
            out.setdefault(vi.name, None)
    for init in g.initializer:
        out[init.name] = tuple(init.dims)
    return out


def evaluate_node(node: onnx.NodeProto, inputs: list[np.ndarray | None],
                  opset_imports: list[onnx.OperatorSetIdProto]) -> list[np.ndarray]:
    """Run one node with onnx's reference implementation."""
    names = [f"in{i}" if x is not None else "" for i, x in enumerate(inputs)]
    outs = [f"out{i}" if o else "" for i, o in enumerate(node.output)]
    n = helper.make_node(node.op_type, names, outs, domain=node.domain)
    n.attribute.extend(node.attribute)
    graph = helper.make_graph([n], "fold", [], [helper.make_value_info(o, onnx.TypeProto()) for o in outs if o])
    model = helper.make_model(graph, opset_imports=opset_imports)
    model.ir_version = onnx.IR_VERSION
    feeds = {name: x for name, x in zip(names, inputs, strict=True) if name}
    results = ReferenceEvaluator(model).run(None, feeds)
    return [np.asarray(r) for r in results]


def _fold_once(model: onnx.ModelProto) -> bool:
    g = model.graph
    consts: dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    shapes = static_shapes(model)
    keep: list[onnx.NodeProto] = []
    folded: dict[str, np.ndarray] = {}
    for node in g.node:
        value = _try_fold(node, consts, shapes, list(model.opset_import))
        if value is None:
            keep.append(node)
            continue
        for name, arr in zip(node.output, value, strict=False):
            if name:
                consts[name] = arr
                folded[name] = arr
    if not folded:
        return False
    graph_outputs = {o.name for o in g.output}
    # A folded graph output stays computable: keep its node as an Identity of a constant.
    del g.node[:]
    g.node.extend(keep)
    used = {i for n in keep for i in n.input} | graph_outputs
    for name, arr in folded.items():
        if name in used:
            g.initializer.append(numpy_helper.from_array(np.asarray(arr, order="C"), name))
    return True


def _try_fold(node: onnx.NodeProto, consts: dict[str, np.ndarray],
              shapes: dict[str, tuple[int, ...] | None], opsets: list) -> list[np.ndarray] | None:
    if node.domain not in ("", "ai.onnx") or node.op_type in _NONDETERMINISTIC or node.op_type in _QUANT:
        return None
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return None
    op = node.op_type
    if op in ("Shape", "Size"):
        shape = shapes.get(node.input[0])
        if shape is None:
            return None
        return evaluate_node(node, [np.zeros(shape, np.float32)], opsets)
    inputs = [consts.get(i) if i else None for i in node.input]
    if any(i and i not in consts for i in node.input):
        return None
    if op != "Constant" and not any(x is not None for x in inputs):
        return None
    try:
        return evaluate_node(node, inputs, opsets)
    except Exception as e:
        raise AotcError(f"cannot evaluate constant: {str(e).splitlines()[0]}",
                        node=_Named(node)) from e


class _Named:
    """Adapter so errors on raw ONNX nodes print like errors on IR nodes."""

    def __init__(self, node: onnx.NodeProto):
        self.node = node

    def describe(self) -> str:
        return f"node '{self.node.name or '?'}' ({self.node.op_type})"


def fold_to_fixed_point(model: onnx.ModelProto) -> onnx.ModelProto:
    model = infer_shapes(model)
    for _ in range(MAX_ROUNDS):
        if not _fold_once(model):
            break
        del model.graph.value_info[:]
        model = infer_shapes(model)
    return model
