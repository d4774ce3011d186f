"""The gated activations exporters write as two ops, back into one:

    SiLU        y = Mul(x, Sigmoid(x))                                  ->  Swish(x, alpha=1)
    HardSwish   y = Mul(x, HardSigmoid(x, alpha=1/6, beta=0.5))         ->  HardSwish(x)

(either operand order of the Mul). torch exports nn.SiLU this way, 65 times in EfficientNet-B0:
one pass over the tensor instead of two, no buffer for the gate, and the gate's e^x vectorised
(aotc_swish_f32). The fused node takes the Mul's place and says which ONNX nodes it stands for.

Legal when the gate is read only by the Mul and is not a graph output, and all of it is float32
of one shape (no broadcasting). Runs on the host graph after partitioning, like FuseEpilogue: a
vendor still sees the plain ops it has patterns for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node
from aot.passes.base import Pass

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
            g.tensors.pop(s, None)
        g.nodes = [replace.get(n.name, n) for n in g.nodes if n.name not in absorbed or n.name in replace]
        return g


def _fused_op(node: Node) -> str | None:
    if node.op == "Sigmoid":
        return "Swish"
    if node.op == "HardSigmoid" and float(np.float32(node.attrs.get("alpha", 0.2))) == _SIXTH \
            and float(node.attrs.get("beta", 0.5)) == 0.5:
        return "HardSwish"
    return None
