"""Optional node outputs that nothing reads are dropped on import, before any op is checked.

Older exporters declare every output an op has: Dropout's mask, MaxPool's Indices,
LSTM's Y_h, ... even when no node and no graph output reads them. Such an output
becomes "" (omitted, as an omitted optional input is), trailing ones are cut, so
folding, shape inference, the canonical rules, kernels and vendors all see an op
without it. An output that is read keeps its name and the op's rule decides what
to do with it (compute it, or refuse with a reason).

Some outputs have no value in inference, and are refused here, in one line, before
folding or shape inference evaluates the op (onnx's reference evaluator gets them
wrong or fails on them):

- BatchNormalization before opset 14: declaring the statistics outputs is what
  selects training mode (ONNX's "Output case #1: Y, mean, var, saved_mean, saved_var
  (training mode)"), and onnxruntime then normalises Y by the batch's own statistics
  even when nothing reads them. Dropping them would change Y: refused, read or not.
- BatchNormalization from opset 14 with training_mode=0: extra outputs are invalid;
  unread ones are dropped, read ones refused. (training_mode=1 is refused by the
  op's canonical rule.)
- Dropout's mask before opset 12, when read: the spec leaves it undefined in
  inference (onnxruntime writes zeros, the ONNX reference ones). From opset 12 it
  is all true (aot/frontend/onnx/canonical/shape.py, `dropout`).
"""

from __future__ import annotations

import onnx
from onnx import defs, helper

from aot.errors import AotcError, OnnxNodeName


def drop_unread_optional_outputs(model: onnx.ModelProto, opset: int) -> list[tuple[str, str]]:
    """In place: refuse the optional outputs inference does not define (above), then every unread
    optional output of a default-domain node becomes "" (trailing ones are removed). Returns the
    (node, output) pairs dropped."""
    g = model.graph
    read = _read_names(g) | {o.name for o in g.output}
    dropped: list[tuple[str, str]] = []
    for node in g.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        _refuse_undefined(node, opset, read)
        optional = _optional_output_slots(node.op_type, opset)
        if node.op_type == "BatchNormalization" and any(a.name == "training_mode" and a.i for a in node.attribute):
            optional = set()  # training mode must declare its running statistics (its schema's check)
        for k, name in enumerate(node.output):
            if name and k in optional and name not in read:
                dropped.append((node.name, name))
                node.output[k] = ""
        while len(node.output) > 1 and not node.output[-1]:
            del node.output[-1]
    if dropped:  # their value_info would describe tensors that no longer exist
        gone = {name for _, name in dropped}
        kept = [vi for vi in g.value_info if vi.name not in gone]
        del g.value_info[:]
        g.value_info.extend(kept)
    return dropped


def _refuse_undefined(node: onnx.NodeProto, opset: int, read: set[str]) -> None:
    """One line for an optional output that inference gives no value (see the module docstring)."""
    if node.op_type == "BatchNormalization":
        extra = [o for o in node.output[1:] if o]
        if opset < 14 and extra:
            raise AotcError(f"BatchNormalization with statistics outputs ({', '.join(extra)}) is training mode "
                            "before opset 14 (Y normalised by the batch's own statistics); aotc compiles "
                            "inference only: declare Y alone", node=OnnxNodeName(node))
        training = next((helper.get_attribute_value(a) for a in node.attribute if a.name == "training_mode"), 0)
        if opset >= 14 and not training and any(o in read for o in extra):
            raise AotcError(f"BatchNormalization with training_mode=0 has no statistics outputs to give "
                            f"({', '.join(o for o in extra if o in read)} read)", node=OnnxNodeName(node))
    if node.op_type == "Dropout" and opset < 12 and len(node.output) > 1 and node.output[1] in read:
        raise AotcError(f"Dropout's mask before opset 12 has no value in inference (the spec leaves it undefined; "
                        f"onnxruntime writes zeros, the ONNX reference ones): '{node.output[1]}' is read",
                        node=OnnxNodeName(node))


def _optional_output_slots(op_type: str, opset: int) -> set[int]:
    """Positions of the op's outputs that its schema marks optional (none for an unknown op)."""
    try:
        schema = defs.get_schema(op_type, opset, "")
    except Exception:  # not an ONNX op at this opset: refused later, with its own reason
        return set()
    return {k for k, p in enumerate(schema.outputs) if p.option == defs.OpSchema.FormalParameterOption.Optional}


def _read_names(graph: onnx.GraphProto) -> set[str]:
    """Every name a node of `graph` or of its subgraphs (If/Loop/Scan bodies) takes as input."""
    names: set[str] = set()
    for node in graph.node:
        names.update(i for i in node.input if i)
        for a in node.attribute:
            subgraphs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
            for sub in subgraphs:
                names |= _read_names(sub) | {o.name for o in sub.output}
    return names
