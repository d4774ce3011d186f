"""MergeComposite: each vendor pattern match becomes one Composite node, tagged with its vendor.

Vendors are tried in the user's priority order, and each vendor's patterns in
its own order (longest first). A node belongs to at most one composite, and a
match is skipped when a node in it goes to a higher-priority vendor (annotated
by hand, or taken op by op: its target from AnnotateTarget) — so results are
deterministic and the user's order decides every conflict.

The state follows the graph: a composite takes its vendor as target, and hand
placements of the nodes it swallowed now name the composite. Then every hand
placement is checked: a node given to a vendor must be taken by it, inside one
of its composites or by its checker.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from aot.errors import AotcError, in_vendor
from aot.ir import Graph, Node
from aot.partition.pattern import match_at
from aot.partition.state import HOST, PartitionState, PartitionStep

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
class MergeComposite(PartitionStep):
    vendors: tuple[Vendor, ...]
    name: ClassVar[str] = "merge-composite"

    def run(self, state: PartitionState) -> PartitionState:
        assert state.targets is not None, "MergeComposite runs after AnnotateTarget"
        g = state.graph.copy()
        manual, targets = state.manual, state.targets
        order = {n.name: k for k, n in enumerate(g.nodes)}
        claimed: set[str] = set()
        composites: dict[str, Node] = {}  # root name -> composite node
        members: dict[str, str] = {}  # node name -> root name
        for rank, vendor in enumerate(self.vendors):
            higher = {v.name for v in self.vendors[:rank]}
            producers, consumers = g.producers(), g.consumers()
            for pattern in vendor.patterns:
                for root in reversed(g.nodes):
                    if root.name in claimed:
                        continue
                    with in_vendor(vendor.name, f"pattern {pattern.name}", root):
                        nodes = match_at(root, pattern, g, producers, consumers, claimed, order)
                    if nodes is None:
                        continue
                    if any(manual.get(n.name, vendor.name) != vendor.name for n in nodes):
                        continue  # a node placed by hand elsewhere
                    if any(n.name not in manual and targets[n.name] in higher for n in nodes):
                        continue  # a node a higher-priority vendor takes by itself
                    if any(vendor.name in state.declined.get(n.name, ()) for n in nodes):
                        continue  # the vendor sent a region with this node back in an earlier round
                    composites[root.name] = make_composite(g, nodes, pattern.name, vendor.name)
                    for n in nodes:
                        claimed.add(n.name)
                        members[n.name] = root.name
        out: list[Node] = []
        new_targets: dict[str, str] = {}
        for n in g.nodes:
            if n.name in composites:
                out.append(composites[n.name])
                new_targets[n.name] = composites[n.name].attrs["compiler"]
            elif n.name not in members:
                out.append(n)
                new_targets[n.name] = targets[n.name]
        g.nodes = out

        def home(name: str) -> str:
            return members.get(name, name)

        new_manual = {home(n): t for n, t in manual.items()}
        manual_regions = tuple(replace(r, nodes=tuple(dict.fromkeys(home(n) for n in r.nodes)))
                               for r in state.manual_regions)
        refusals = {n: why for n, why in state.refusals.items() if n not in members}
        _check_manual(g, new_manual, {v.name: v for v in self.vendors})
        return replace(state, graph=g, manual=new_manual, manual_regions=manual_regions, targets=new_targets,
                       refusals=refusals)


def _check_manual(graph: Graph, manual: dict[str, str], vendors: dict[str, Vendor]) -> None:
    """Every node placed by hand on a vendor is one it takes: inside its composite, or by its checker."""
    by_name = {n.name: n for n in graph.nodes}
    for name, target in manual.items():
        node = by_name[name]
        if target == HOST or (node.op == "Composite" and node.attrs["compiler"] == target):
            continue
        verdict = vendors[target].check(node, graph)
        if not verdict:
            raise AotcError(f"annotated for {target}, but {target} cannot take it: {verdict.reason}", node=node)
