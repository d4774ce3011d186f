"""PruneRegions: each vendor's last say over the regions formed for it (TVM's prune_*_subgraphs).

`Vendor.keep_region(nodes, graph)` sees a region's nodes (in graph order) in the main
graph; False sends the region back to the host, e.g. a region with no compute-heavy
op is not worth a call across the DLTensor boundary. Its composites are unwrapped
into the plain nodes they hold, and `--explain` says which vendor sent them back.
Regions drawn by hand, or holding a node placed by hand, are kept as the user said.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from aot.ir import Node
from aot.partition.state import HOST, PartitionState, PartitionStep

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
                    keep([nodes[n] for n in r.nodes], g):
                kept.append(r)
            else:
                sent_back.update({n: r.target for n in r.nodes})
        if not sent_back:
            return replace(state, regions=tuple(kept))
        g = g.copy()
        targets = dict(state.targets)
        refusals = {n: dict(why) for n, why in state.refusals.items()}
        out: list[Node] = []
        for n in g.nodes:
            vendor = sent_back.get(n.name)
            plain = n.attrs["body"].nodes if vendor and n.op == "Composite" else [n]
            if vendor:
                del targets[n.name]
                for m in plain:
                    targets[m.name] = HOST
                    refusals.setdefault(m.name, {})[vendor] = f"{vendor} sent its region back to the host (keep_region)"
            out.extend(plain)
        g.nodes = out
        return replace(state, graph=g, targets=targets, refusals=refusals, regions=tuple(kept))
