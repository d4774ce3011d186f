"""MergeCompilerRegions: join adjacent nodes of one vendor into regions, never creating a cycle.

Nodes are visited in execution order. A node joins the region of one of its
producers that has the same target if, with each region contracted to a single
call, the graph of what has been visited stays acyclic (a region's result may
not leave it and come back, directly through another region or through host
nodes). Otherwise it starts a new region. On a chain this yields one region per
maximal run of same-target nodes, the fewest possible. Manual regions are fixed:
their nodes join no other region and no other node joins them.
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
        visited: list = []
        for n in g.nodes:
            preds = list(dict.fromkeys(producers[i].name for i in n.inputs if i in producers))
            visited.append(n)
            target = targets[n.name]
            if n.name in region_of:  # a manual region (validated convex beforehand)
                rid = region_of[n.name]
            elif target == HOST:
                continue
            else:
                rid = None
                for p in preds:
                    r = region_of.get(p)
                    if r is None or r in fixed_ids or regions[r]["target"] != target:
                        continue
                    region_of[n.name] = r
                    if _acyclic(visited, region_of, producers):
                        rid = r
                        break
                    del region_of[n.name]
                if rid is None:
                    rid = len(regions)
                    regions.append({"target": target, "nodes": []})
                region_of[n.name] = rid
            regions[rid]["nodes"].append(n.name)
        g.meta["regions"] = [r for r in regions if r["nodes"]]
        return g


def _acyclic(nodes: list, region_of: dict[str, int], producers: dict) -> bool:
    """Is the graph of `nodes`, each region contracted to one vertex, free of cycles? (Kahn's algorithm)"""
    def vertex(name: str) -> object:
        return ("r", region_of[name]) if name in region_of else name

    names = {n.name for n in nodes}
    edges: dict[object, set[object]] = {}
    indegree: dict[object, int] = {vertex(n.name): 0 for n in nodes}
    for n in nodes:
        v = vertex(n.name)
        for i in n.inputs:
            p = producers.get(i)
            if p is None or p.name not in names:
                continue
            u = vertex(p.name)
            if u != v and v not in edges.setdefault(u, set()):
                edges[u].add(v)
                indegree[v] += 1
    ready = [v for v, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        for v in edges.get(u, ()):
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    return seen == len(indegree)
