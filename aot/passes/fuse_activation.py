"""The gated activations exporters write as two ops, back into one:

    SiLU        y = Mul(x, Sigmoid(x))                                  ->  Swish(x, alpha=1)
    HardSwish   y = Mul(x, HardSigmoid(x, alpha=1/6, beta=0.5))         ->  HardSwish(x)
                y = Mul(x, Clip(x + 3, 0, 6) * 1/6)                     ->  HardSwish(x)
                y = Mul(x, Clip(x + 3, 0, 6)) * 1/6                     ->  HardSwish(x)

(either operand order of each Mul and Add; / 6 for * 1/6). tf2onnx writes Keras's hard-swish in the last two
forms, four passes over the tensor (MobileNetV3-Large: 21 times). torch exports nn.SiLU in the first, 65 times
in EfficientNet-B0: one pass over the tensor instead of two, no buffer for the gate, and the gate's e^x vectorised
(aotc_swish_f32). The fused node takes the Mul's place and says which ONNX nodes it stands for.

Legal when the gate is read only by the Mul and is not a graph output, and all of it is float32
of one shape (no broadcasting). Runs on the host graph after partitioning, like FuseEpilogue: a
vendor still sees the plain ops it has patterns for.

The int8 TFLite form, SiLU as the converter writes it (LOGISTIC then MUL, issue 64: EfficientNet-B0's MULs took a
quarter of its time), becomes one table too, the output a function of x's byte alone:

    TflMul(x, TflLut(x))  ->  TflLut(x), table[v] = the MUL's output for x = v and the gate's table[v]

(either operand order), with the MUL's integer math as LiteRT's reference kernel does it (its double rounding, zero
points and clamp: aot/frontend/tflite/quant.py), so the outputs are bit for bit the two ops'. Legal when the gate is
read by the MUL alone and is no graph output, and x, the gate and the output are int8 of one shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node
from aot.ir import tflite_ops as tfl
from aot.passes.base import Pass
from aot.qmath import multiply_by_quantized_multiplier

_SIXTH = float(np.float32(1.0 / 6.0))


@dataclass(frozen=True)
class FuseActivation(Pass):
    name: ClassVar[str] = "fuse-activation"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        consumers = g.consumers()
        outputs = set(g.outputs)
        absorbed: set[str] = set()
        replace: dict[str, Node] = {}
        gone: list[str] = []  # the tensors no node computes any more, dropped after the search
        for gate in g.nodes:
            fused_op = _fused_op(gate)
            if fused_op is None or gate.name in absorbed:
                continue
            x, s = gate.inputs[0], gate.outputs[0]
            users = consumers.get(s, [])
            if s in outputs or len(users) != 1:
                continue
            mul = users[0]
            if mul.op != "Mul" or mul.name in absorbed or sorted(mul.inputs) != sorted([x, s]) or x == s:
                continue
            ts = [g.tensors[t] for t in (x, s, mul.outputs[0])]
            if any(t.dtype != "float32" or t.shape != ts[0].shape for t in ts):
                continue
            attrs = {"alpha": 1.0} if fused_op == "Swish" else {}
            replace[mul.name] = Node(fused_op, mul.name, [x], list(mul.outputs), attrs,
                                     origin=gate.sources() + mul.sources())
            absorbed.update((gate.name, mul.name))
            gone.append(s)
        producers = g.producers()
        for n in g.nodes:  # the decomposed hard-swish, named by its last node
            found = None if n.name in absorbed else _decomposed_hard_swish(g, n, producers, consumers, outputs)
            if found is None or any(c.name in absorbed for c in found[0]):
                continue
            chain, x = found
            replace[n.name] = Node("HardSwish", n.name, [x], list(n.outputs), {},
                                   origin=tuple(dict.fromkeys(s for c in chain for s in c.sources())))
            absorbed.update(c.name for c in chain)
            gone.extend(c.outputs[0] for c in chain[:-1])
        for lut in g.nodes:  # int8 TFLite: MUL(x, LUT(x)) as one table
            found = None if lut.name in absorbed else _int8_gated(g, lut, consumers, outputs)
            if found is None or found.name in absorbed:
                continue
            replace[found.name] = _int8_table(lut, found)
            absorbed.update((lut.name, found.name))
            gone.append(lut.outputs[0])
        for t in gone:  # (after the search, which looks tensors up)
            g.tensors.pop(t, None)
        g.nodes = [replace.get(n.name, n) for n in g.nodes if n.name not in absorbed or n.name in replace]
        return g


def _scalar(g: Graph, name: str) -> float | None:
    t = g.tensors[name]
    return float(np.asarray(t.data).reshape(-1)[0]) if t.is_const and t.size == 1 else None


def _other(g: Graph, node: Node, value: float, ops: tuple[str, ...]) -> str | None:
    """The run-time operand of `node` (one of `ops`, two operands) whose other operand is the constant `value`
    (either order for Mul and Add; the divisor for Div)."""
    if node.op not in ops or len(node.inputs) != 2:
        return None
    a, b = node.inputs
    if node.op == "Div":
        return a if _scalar(g, b) == value else None
    for x, c in ((a, b), (b, a)):
        k = _scalar(g, c)
        if k is not None and float(np.float32(k)) == float(np.float32(value)) and not g.tensors[x].is_const:
            return x
    return None


def _sixth_of(g: Graph, node: Node) -> str | None:
    return _other(g, node, 1.0 / 6.0, ("Mul",)) or _other(g, node, 6.0, ("Div",))


def _decomposed_hard_swish(g: Graph, last: Node, producers: dict[str, Node], consumers: dict[str, list[Node]],
                           outputs: set[str]) -> tuple[list[Node], str] | None:
    """The nodes of x * relu6(x + 3) / 6 that end at `last` (Add, Clip, then the two Muls or Mul and Div, in
    graph order) and x, if every tensor between them is read by the next alone, is not a graph output and has
    x's shape and float32; else None."""

    def relu6_plus3(t: str) -> tuple[list[Node], str] | None:
        clip = producers.get(t)
        if clip is None or clip.op != "Clip" or clip.attrs.get("min") != 0.0 or clip.attrs.get("max") != 6.0:
            return None
        add = producers.get(clip.inputs[0])
        x = _other(g, add, 3.0, ("Add",)) if add is not None else None
        return ([add, clip], x) if x is not None else None

    chain: list[Node] | None = None
    x: str | None = None
    inner = _sixth_of(g, last)
    if inner is not None and producers.get(inner) is not None and producers[inner].op == "Mul":
        mul = producers[inner]  # (x * relu6(x + 3)) / 6
        for a, b in (mul.inputs, mul.inputs[::-1]):
            found = relu6_plus3(b)
            if found is not None and found[1] == a:
                chain, x = [*found[0], mul, last], a
                break
    if chain is None and last.op == "Mul" and len(last.inputs) == 2:
        for a, b in (last.inputs, last.inputs[::-1]):  # x * (relu6(x + 3) / 6)
            gate = producers.get(b)
            scaled = _sixth_of(g, gate) if gate is not None else None
            found = relu6_plus3(scaled) if scaled is not None else None
            if found is not None and found[1] == a:
                chain, x = [*found[0], gate, last], a
                break
    if chain is None or x is None:
        return None
    shape = g.tensors[x].shape
    for n in chain:
        t = g.tensors[n.outputs[0]]
        if t.dtype != "float32" or t.shape != shape:
            return None
    for k, c in enumerate(chain[:-1]):
        if c.outputs[0] in outputs or [r.name for r in consumers.get(c.outputs[0], [])] != [chain[k + 1].name]:
            return None
    return chain, x


def _fused_op(node: Node) -> str | None:
    if node.op == "Sigmoid":
        return "Swish"
    if node.op == "HardSigmoid" and float(np.float32(node.attrs.get("alpha", 0.2))) == _SIXTH \
            and float(node.attrs.get("beta", 0.5)) == 0.5:
        return "HardSwish"
    return None


def _int8_gated(g: Graph, lut: Node, consumers: dict[str, list[Node]], outputs: set[str]) -> Node | None:
    """The int8 TflMul computing x * lut(x) (either order), if the table's output is read by it alone, is no graph
    output, and x, the table's output and the product are int8 of one shape; else None."""
    if lut.op != tfl.LUT or len(lut.inputs) != 1:
        return None
    x, s = lut.inputs[0], lut.outputs[0]
    users = consumers.get(s, [])
    if s in outputs or len(users) != 1 or x == s:
        return None
    mul = users[0]
    if mul.op != tfl.MUL or sorted(mul.inputs) != sorted([x, s]):
        return None
    ts = [g.tensors[t] for t in (x, s, mul.outputs[0])]
    if any(t.dtype != "int8" or t.shape != ts[0].shape for t in ts):
        return None
    return mul


def _int8_table(lut: Node, mul: Node) -> Node:
    """The TflLut of mul(x, lut(x)): each input byte through the gate's table, then the MUL's arithmetic (LiteRT's
    reference MUL: (x1 - z1)(x2 - z2) requantised with double rounding, plus the output zero point, clamped)."""
    x = np.arange(-128, 128, dtype=np.int64)
    gate = np.asarray(lut.attrs["table"], np.int64)  # outputs for inputs -128..127
    a, b = (x, gate) if mul.inputs[0] == lut.inputs[0] else (gate, x)
    mult, shift = mul.attrs["m"][4], mul.attrs["m"][5]
    prod = (a - mul.attrs["x1_zero"]) * (b - mul.attrs["x2_zero"])
    y = multiply_by_quantized_multiplier(prod, np.int64(mult), np.int64(shift), single_rounding=False)
    y = np.clip(y + mul.attrs["y_zero"], mul.attrs["y_min"], mul.attrs["y_max"])
    return Node(tfl.LUT, mul.name, [lut.inputs[0]], list(mul.outputs),
                {"table": [int(v) for v in y], "what": f"{lut.attrs.get('what', 'LUT')} x MUL",
                 "y_shape": list(mul.attrs["y_shape"])}, origin=lut.sources() + mul.sources())
