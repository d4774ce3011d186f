"""What onnx itself knows of a model, for every stage that asks: one node's value by onnx's reference
evaluator (constant folding, the quantisation arithmetic's reference, extents), and the shapes its
inference wrote."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator


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
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # e.g. a division by zero: the value is the answer
        warnings.simplefilter("ignore")
        results = ReferenceEvaluator(model).run(None, feeds)
        return [np.asarray(r) for r in results]
