"""MergeComposite: each vendor pattern match becomes one Composite node, tagged with its vendor.

Vendors are tried in the user's priority order, and each vendor's patterns in
its own order (longest first). A node belongs to at most one composite, and a
match is skipped when a node in it is claimed by a higher-priority vendor
(annotated by hand, or taken op by op) — so results are deterministic and the
user's order decides every conflict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from aot.ir import Graph, Node
from aot.partition.pattern import match_at
from aot.passes.base import Pass

if TYPE_CHECKING:
    from aot.vendor.base import Vendor


def make_composite(graph: Graph, nodes: list[Node], composite: str, compiler: str) -> Node:
    root = nodes[-1]
    body = graph.subgraph(nodes, f"{composite}:{root.name}", [root.outputs[0]])
    ext = [i for i in dict.fromkeys(i for n in nodes for i in n.inputs if i) if i in body.inputs
           or graph.tensors[i].data is not None]
    return Node("Composite", root.name, ext, [root.outputs[0]],
                {"composite": composite, "compiler": compiler, "body": body},
                origin=tuple(s for n in nodes for s in n.sources()))


def unwrap_composites(graph: Graph, keep: set[str] | None = None) -> Graph:
    """Replace Composite nodes (all, or those not in `keep`) by the nodes they hold."""
    g = graph.copy()
    nodes: list[Node] = []
    for n in g.nodes:
        if n.op == "Composite" and (keep is None or n.name not in keep):
            nodes.extend(n.attrs["body"].nodes)
        else:
            nodes.append(n)
    g.nodes = nodes
    return g


@dataclass(frozen=True)
class MergeComposite(Pass):
    vendors: tuple[Vendor, ...]
    fixed: tuple[tuple[str, str], ...] = ()  # (node name, target) from manual annotation
    name: ClassVar[str] = "merge-composite"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        fixed = dict(self.fixed)
        claimed: set[str] = set()
        composites: dict[str, Node] = {}  # root name -> composite node
        members: dict[str, str] = {}  # node name -> root name
        for rank, vendor in enumerate(self.vendors):
            higher = self.vendors[:rank]
            producers, consumers = g.producers(), g.consumers()
            for pattern in vendor.patterns:
                for root in reversed(g.nodes):
                    if root.name in claimed:
                        continue
                    nodes = match_at(root, pattern, g, producers, consumers, claimed)
                    if nodes is None:
                        continue
                    if any(fixed.get(n.name, vendor.name) != vendor.name for n in nodes):
                        continue
                    if any(fixed.get(n.name) != vendor.name and any(h.check(n, g) for h in higher)
                           for n in nodes):
                        continue
                    node = make_composite(g, nodes, pattern.name, vendor.name)
                    composites[root.name] = node
                    for n in nodes:
                        claimed.add(n.name)
                        members[n.name] = root.name
        out: list[Node] = []
        for n in g.nodes:
            if n.name in composites:
                out.append(composites[n.name])
            elif n.name not in members:
                out.append(n)
        g.nodes = out
        return g
