"""MergeCompilerRegions: join adjacent nodes of one vendor into regions, never creating a cycle.

Nodes are visited in execution order. A node joins the region of one of its
producers that has the same target if, with each region contracted to a single
call, the graph stays acyclic (a region's result may not leave it and come back,
directly through another region or through host nodes). Otherwise it starts a new
region. On a chain this yields one region per maximal run of same-target nodes,
the fewest possible. Manual regions are fixed: their nodes join no other region
and no other node joins them. A region keeps to one control scope (Graph.scopes):
nodes of a loop body or an If branch never share a call with nodes outside it, or
with the other branch's.

The cycle test is incremental, so the step stays near-linear on large graphs: the
contracted graph (one vertex per region, one per host node) keeps a topological
order. A node joining region R adds edges into R from its other producers; if they
all come before R in the order, no cycle can appear. Otherwise a search forward
from R, bounded by the latest such producer, either reaches one (a cycle: refuse)
or finds what must move after them, and only that window is renumbered (after
Pearce and Kelly's dynamic topological order).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from aot.errors import AotcError
from aot.partition.state import HOST, PartitionState, PartitionStep, Region


@dataclass
class _Contracted:
    """The visited part of the graph with each region contracted to one vertex, in a topological order."""

    succ: list[set[int]] = field(default_factory=list)  # vertex -> successor vertices
    pos: list[int] = field(default_factory=list)  # vertex -> position in the order
    at: list[int] = field(default_factory=list)  # position -> vertex

    def add(self, preds: list[int]) -> int:
        v = len(self.succ)
        self.succ.append(set())
        self.pos.append(len(self.at))
        self.at.append(v)
        for p in preds:
            self.succ[p].add(v)
        return v

    def join(self, v: int, preds: list[int]) -> bool:
        """Add edges preds -> v (a node of `preds`' results joins vertex v) unless that closes a cycle."""
        others = [p for p in preds if p != v]
        if not others:
            return True
        lo, hi = self.pos[v], max(self.pos[p] for p in others)
        if hi > lo:
            targets = set(others)
            reach, stack = {v}, [v]
            while stack:
                for y in self.succ[stack.pop()]:
                    if y in targets:
                        return False
                    if self.pos[y] <= hi and y not in reach:
                        reach.add(y)
                        stack.append(y)
            window = self.at[lo:hi + 1]
            moved = [x for x in window if x not in reach] + [x for x in window if x in reach]
            for k, x in enumerate(moved, lo):
                self.at[k] = x
                self.pos[x] = k
        for p in others:
            self.succ[p].add(v)
        return True


@dataclass(frozen=True)
class MergeCompilerRegions(PartitionStep):
    name: ClassVar[str] = "merge-compiler-regions"

    def run(self, state: PartitionState) -> PartitionState:
        assert state.targets is not None, "MergeCompilerRegions runs after AnnotateTarget"
        g, targets = state.graph, state.targets
        producers = g.producers()
        scope = g.scopes()
        manual_of = {n: k for k, r in enumerate(state.manual_regions) for n in r.nodes}
        graph = _Contracted()
        vertex: dict[str, int] = {}  # node name -> its vertex
        members: dict[int, list[str]] = {}  # vertex of a region -> its nodes
        manual_vertex: dict[int, int] = {}  # manual region index -> its vertex
        fixed: set[int] = set()  # vertices of manual regions
        auto: list[int] = []  # vertices of regions formed here, in creation order
        for n in g.nodes:
            preds = list(dict.fromkeys(vertex[producers[i].name] for i in n.inputs if i in producers))
            target = targets[n.name]
            if n.name in manual_of:
                k = manual_of[n.name]
                v = manual_vertex.get(k)
                if v is None:
                    v = manual_vertex[k] = graph.add(preds)
                    members[v] = []
                    fixed.add(v)
                elif scope[members[v][0]] != scope[n.name] if members[v] else False:
                    raise AotcError(f"the region annotated for {target} holds nodes inside and outside a loop or "
                                    "branch; annotate each part as a region of its own", node=n)
                elif not graph.join(v, preds):
                    raise AotcError(f"the region annotated for {target} would form a cycle with the regions "
                                    "around it; add the nodes between them to it or split it", node=n)
            elif target == HOST:
                vertex[n.name] = graph.add(preds)
                continue
            else:
                v = next((u for u in preds if u in members and u not in fixed and targets[members[u][0]] == target
                          and scope[members[u][0]] == scope[n.name] and graph.join(u, preds)), None)
                if v is None:
                    v = graph.add(preds)
                    members[v] = []
                    auto.append(v)
            vertex[n.name] = v
            members[v].append(n.name)
        regions = [replace(r, nodes=tuple(members[manual_vertex[k]]))
                   for k, r in enumerate(state.manual_regions) if k in manual_vertex]
        regions += [Region(targets[members[v][0]], tuple(members[v])) for v in auto]
        return replace(state, regions=tuple(regions))
