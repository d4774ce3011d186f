"""PruneRegions: each vendor's last say over the regions formed for it (TVM's prune_*_subgraphs).

`Vendor.keep_region(nodes, graph)` sees a region's nodes (in graph order) in the main
graph; False sends the region back to the host, e.g. a region with no compute-heavy
op is not worth a call across the DLTensor boundary. Its composites are unwrapped
into the plain nodes they hold, and `--explain` says which vendor sent them back. The nodes are
recorded as declined by that vendor (PartitionState.declined): partition_for then partitions again,
offering them to the vendors after it in priority, until no vendor sends anything more back.
Regions drawn by hand, or holding a node placed by hand, are kept as the user said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from aot.errors import in_vendor
from aot.ir import Graph, Node
from aot.partition.state import HOST, SENT_BACK, PartitionState, PartitionStep

if TYPE_CHECKING:
    from aot.vendor.base import Vendor


@dataclass(frozen=True)
class PruneRegions(PartitionStep):
    vendors: tuple[Vendor, ...]
    name: ClassVar[str] = "prune-regions"

    def run(self, state: PartitionState) -> PartitionState:
        assert state.regions is not None and state.targets is not None, "PruneRegions runs after MergeCompilerRegions"
        g = state.graph
        by_name = {v.name: v for v in self.vendors}
        nodes = {n.name: n for n in g.nodes}
        kept = []
        sent_back: dict[str, str] = {}  # node name -> the vendor that sent it back
        for r in state.regions:
            keep = by_name[r.target].keep_region
            if r.manual or keep is None or any(n in state.manual for n in r.nodes) or \
                    _keeps(r.target, keep, [nodes[n] for n in r.nodes], g):
                kept.append(r)
            else:
                sent_back.update({n: r.target for n in r.nodes})
        if not sent_back:
            return replace(state, regions=tuple(kept))
        g = g.copy()
        targets = dict(state.targets)
        refusals = {n: dict(why) for n, why in state.refusals.items()}
        declined = dict(state.declined)
        out: list[Node] = []
        for n in g.nodes:
            vendor = sent_back.get(n.name)
            plain = n.attrs["body"].nodes if vendor and n.op == "Composite" else [n]
            if vendor:
                del targets[n.name]
                for m in plain:
                    targets[m.name] = HOST
                    refusals.setdefault(m.name, {})[vendor] = SENT_BACK.format(vendor=vendor)
                    declined[m.name] = declined.get(m.name, frozenset()) | {vendor}
            out.extend(plain)
        g.nodes = out
        return replace(state, graph=g, targets=targets, refusals=refusals, regions=tuple(kept), declined=declined)


def _keeps(vendor: str, keep: Callable[[list[Node], Graph], bool], nodes: list[Node], graph: Graph) -> bool:
    with in_vendor(vendor, "keep_region", nodes[0]):
        return bool(keep(nodes, graph))
