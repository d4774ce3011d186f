"""--quantized-io: integer graph inputs and outputs for quantized ONNX models.

onnxruntime's quantize_static (QDQ and QOperator forms alike) keeps a model's inputs and outputs
float: input -> QuantizeLinear -> ... -> DequantizeLinear -> output. Firmware whose sensor pipeline
already makes int8 wants the integers at the boundary, as TFLite's converter gives them
(`inference_input_type=tf.int8`): the float input alone is often the largest tensor in the arena.

This rewrite runs after the QDQ pass (aot/passes/qdq.py), so a Q it hoisted above a view now reads
the graph input directly:

- a graph input whose readers are all per-tensor QuantizeLinear nodes of one scale, zero point and
  integer type becomes an input of that type (same name); the Qs go, their readers read the input;
- a graph output made by a per-tensor DequantizeLinear becomes the DQ's integer input, under the
  output's name; the DQ goes.

Each gets {scale, zero_point} in graph.info.io_quantization (real = scale * (q - zero_point)),
as the TFLite route records its int8 inputs and outputs, so the header, metadata.json, `aotc run`
and `aotc compare` treat them alike. What cannot be made integer stays float, with a note why.
"""

from __future__ import annotations

import numpy as np

from aot.ir import Graph, Node, Tensor

INTEGER = ("int8", "uint8", "int16", "uint16")


def _params(g: Graph, n: Node) -> tuple[float, int] | None:
    """(scale, zero point) of a per-tensor Q/DQ with a positive scale and a constant zero point."""
    if len(n.inputs) < 3 or not n.inputs[2]:
        return None
    s, z = g.const(n.inputs[1]), g.const(n.inputs[2])
    if s is None or z is None or s.size != 1 or z.size != 1 or not float(s.reshape(())) > 0:
        return None
    return float(np.float32(s.reshape(()))), int(z.reshape(()))


def _not_float32(dtype: str) -> str:
    """Only float32 inputs and outputs are made integer: compare and bench feed onnxruntime float32
    (aot/npz.py onnx_feeds), and float16 Q/DQ at a model's boundary are rare."""
    return f"it is {dtype} already" if dtype in INTEGER else f"it is {dtype} (only float32 is made integer)"


def _input_refusal(g: Graph, name: str, readers: list[Node]) -> tuple[str | None, tuple[float, int, str] | None]:
    """Why input `name` must stay float (None, params) or (why, None)."""
    t = g.tensors[name]
    if t.dtype != "float32":
        return _not_float32(t.dtype), None
    if name in g.outputs:
        return "it is also a graph output", None
    if not readers:
        return "nothing reads it", None
    found: set[tuple[float, int, str]] = set()
    for n in readers:
        if n.op != "QuantizeLinear":
            return f"{n.describe()} reads it", None
        p = _params(g, n)
        dtype = g.tensors[n.outputs[0]].dtype
        if p is None:
            return f"{n.describe()} is not per-tensor", None
        if dtype not in INTEGER:
            return f"{n.describe()} makes {dtype}", None
        if n.outputs[0] in g.outputs:
            return f"{n.describe()}'s output is a graph output", None
        found.add((*p, dtype))
    if len(found) != 1:
        return "its QuantizeLinear readers differ in scale, zero point or type", None
    return None, found.pop()


def _output_refusal(g: Graph, name: str, producer: Node | None) -> tuple[str | None, tuple[float, int] | None]:
    if g.tensors[name].dtype != "float32":
        return _not_float32(g.tensors[name].dtype), None
    if producer is None:
        return "no node makes it", None
    if producer.op != "DequantizeLinear":
        return f"{producer.describe()} makes it", None
    q = producer.inputs[0]
    p = _params(g, producer)
    if p is None:
        return f"{producer.describe()} is not per-tensor", None
    if g.tensors[q].is_const:
        return f"{producer.describe()} reads a constant", None
    if q in g.inputs or q in g.outputs:
        return f"the integers {producer.describe()} reads are a graph {'input' if q in g.inputs else 'output'}", None
    if g.tensors[q].dtype not in INTEGER:
        return f"{producer.describe()} reads {g.tensors[q].dtype}", None
    if g.outputs.count(name) != 1:
        return "it is listed more than once among the outputs", None
    return None, p


def integer_io(graph: Graph) -> tuple[Graph, list[str]]:
    """The graph with integer inputs and outputs where the Q/DQ at the boundary allow, and a note for
    each input or output that stays float. graph.info.quantized_io lists what changed."""
    g = graph.copy()
    notes: list[str] = []
    io_q = dict(g.info.io_quantization)
    done: dict[str, list[str]] = {"inputs": [], "outputs": []}
    for name in g.inputs:
        consumers = g.consumers()
        why, found = _input_refusal(g, name, consumers.get(name, []))
        if why is not None:
            notes.append(f"input '{name}' stays {g.tensors[name].dtype}: {why}")
            continue
        scale, zp, dtype = found
        dropped = {n.name: n.outputs[0] for n in consumers[name]}
        rename = {q: name for q in dropped.values()}
        g.nodes = [Node(n.op, n.name, [rename.get(i, i) for i in n.inputs], n.outputs, n.attrs, n.origin)
                   for n in g.nodes if n.name not in dropped]
        for q in dropped.values():
            del g.tensors[q]
        g.tensors[name] = Tensor(name, g.tensors[name].shape, dtype)
        io_q[name] = {"scale": scale, "zero_point": zp}
        done["inputs"].append(name)
    producers = g.producers()
    for name in g.outputs:
        dq = producers.get(name)
        why, params = _output_refusal(g, name, dq)
        if why is not None:
            notes.append(f"output '{name}' stays {g.tensors[name].dtype}: {why}")
            continue
        q = dq.inputs[0]
        g.nodes = [Node(n.op, n.name, [name if i == q else i for i in n.inputs],
                        [name if o == q else o for o in n.outputs], n.attrs, n.origin)
                   for n in g.nodes if n is not dq]
        g.tensors[name] = Tensor(name, g.tensors[q].shape, g.tensors[q].dtype)
        del g.tensors[q]
        producers = g.producers()
        io_q[name] = {"scale": params[0], "zero_point": params[1]}
        done["outputs"].append(name)
    g.info.io_quantization = io_q
    g.info.quantized_io = {**done, "notes": notes}
    g.verify()
    return g, notes
