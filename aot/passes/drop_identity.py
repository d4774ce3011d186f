"""Identity and inference-mode Dropout forward their input: rename the consumers instead. (A Dropout left
with a training_mode input after import is a seeded training one, a kernel: aot/kernels/random.py.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node
from aot.passes.base import Pass

_FORWARDING = ("Identity", "Dropout")


@dataclass(frozen=True)
class DropIdentity(Pass):
    name: ClassVar[str] = "drop-identity"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        rename: dict[str, str] = {}
        kept: list[Node] = []
        outputs = set(g.outputs)
        for n in g.nodes:
            n.inputs = [rename.get(i, i) for i in n.inputs]
            src, dst = (n.inputs[0], n.outputs[0]) if n.inputs and n.outputs else ("", "")
            # A graph output must keep its name, so an Identity feeding it stays (as a copy),
            # unless its source is an intermediate that nothing else names: then rename the source.
            training = n.op == "Dropout" and len(n.inputs) > 2 and bool(n.inputs[2])
            if n.op in _FORWARDING and dst not in outputs and not training:
                rename[dst] = src
                continue
            kept.append(n)
        g.nodes = kept
        for t in list(rename):
            g.tensors.pop(t, None)
        return g
