"""The model without its large weights, for onnx's checker and shape inference.

Both take a ModelProto and copy it whole through C++ several times (serialise, parse, infer,
serialise, parse back): on ResNet-18 that was five copies of its 47 MB of weights at once, most of
aotc's peak memory. Neither needs the values of large tensors: a shape is computed from dims and
from small integer tensors (a Reshape's target, a Slice's starts). The skeleton lists each large
initializer as a graph input of the same type and shape instead, and its data is checked against
its dims by aotc itself (validate.check_declared), before the checker runs.
"""

from __future__ import annotations

import onnx
from onnx import helper

from aot.ir.held import HELD_BYTES, is_held  # larger initializers are left out (and held ones)


def _large(init: onnx.TensorProto) -> bool:
    return len(init.raw_data) > HELD_BYTES or is_held(init)


def skeleton(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` whose large initializers are graph inputs of their type and shape."""
    out = onnx.ModelProto()
    out.ir_version = model.ir_version
    for name in ("producer_name", "producer_version", "domain", "model_version", "doc_string"):
        setattr(out, name, getattr(model, name))
    out.opset_import.extend(model.opset_import)
    out.metadata_props.extend(model.metadata_props)
    out.functions.extend(model.functions)
    g, s = model.graph, out.graph
    s.name, s.doc_string = g.name, g.doc_string
    s.node.extend(g.node)
    s.input.extend(g.input)
    s.output.extend(g.output)
    s.value_info.extend(g.value_info)
    s.sparse_initializer.extend(g.sparse_initializer)
    s.quantization_annotation.extend(g.quantization_annotation)
    listed = {vi.name for vi in g.input}
    for init in g.initializer:
        if not _large(init):
            s.initializer.append(init)
        elif init.name not in listed:  # IR < 4 lists initializers among the inputs already
            s.input.append(helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    return out


def adopt_inference(model: onnx.ModelProto, inferred: onnx.ModelProto) -> None:
    """Take what inference on `model`'s skeleton found into `model`: the nodes (If and Loop bodies
    carry their own value_info), value_info and the graph outputs' types."""
    g, r = model.graph, inferred.graph
    for field in ("node", "value_info", "output"):
        del getattr(g, field)[:]
        getattr(g, field).extend(getattr(r, field))
