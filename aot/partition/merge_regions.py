"""MergeCompilerRegions: join adjacent nodes of one vendor into regions, never creating a cycle.

Nodes are visited in execution order. A node joins the region of one of its
producers that has the same target, unless another of its inputs depends on that
region through a node outside it (then the region's output would leave it and
come back: a cycle between regions). Otherwise it starts a new region. On a chain
this yields one region per maximal run of same-target nodes, the fewest possible.
Manual regions are fixed: nodes join no other region and no other node joins them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph
from aot.partition.annotate_target import HOST
from aot.passes.base import Pass


@dataclass(frozen=True)
class MergeCompilerRegions(Pass):
    fixed_regions: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (target, node names)
    name: ClassVar[str] = "merge-compiler-regions"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        targets: dict[str, str] = g.meta["targets"]
        producers = g.producers()
        regions: list[dict] = []
        region_of: dict[str, int] = {}
        fixed_ids: set[int] = set()
        for target, names in self.fixed_regions:
            rid = len(regions)
            regions.append({"target": target, "nodes": []})
            fixed_ids.add(rid)
            for nm in names:
                region_of[nm] = rid
        deps: dict[str, set[int]] = {}  # regions a node's result depends on, its own included
        for n in g.nodes:
            preds = list(dict.fromkeys(producers[i].name for i in n.inputs if i in producers))
            upstream = set().union(*(deps[p] for p in preds)) if preds else set()
            target = targets[n.name]
            if n.name in region_of:  # a manual region (validated convex beforehand)
                rid = region_of[n.name]
            elif target == HOST:
                deps[n.name] = upstream
                continue
            else:
                rid = None
                for p in preds:
                    r = region_of.get(p)
                    if r is None or r in fixed_ids or regions[r]["target"] != target:
                        continue
                    if all(r not in deps[q] for q in preds if region_of.get(q) != r):
                        rid = r
                        break
                if rid is None:
                    rid = len(regions)
                    regions.append({"target": target, "nodes": []})
                region_of[n.name] = rid
            regions[rid]["nodes"].append(n.name)
            deps[n.name] = upstream | {rid}
        g.meta["regions"] = [r for r in regions if r["nodes"]]
        return g
