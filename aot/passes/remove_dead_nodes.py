"""Drop nodes none of whose outputs reach a graph output, and tensors nothing refers to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph
from aot.passes.base import Pass


@dataclass(frozen=True)
class RemoveDeadNodes(Pass):
    name: ClassVar[str] = "remove-dead-nodes"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        needed = set(g.outputs)
        kept = []
        for n in reversed(g.nodes):
            if any(o in needed for o in n.outputs if o):
                kept.append(n)
                needed.update(i for i in n.inputs if i)
        g.nodes = kept[::-1]
        referenced = needed | set(g.inputs) | {o for n in g.nodes for o in n.outputs if o}
        g.tensors = {k: t for k, t in g.tensors.items() if k in referenced}
        return g
