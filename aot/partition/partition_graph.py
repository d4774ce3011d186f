"""PartitionGraph: outline each region into a Function called from the main graph.

Each region becomes Function(global_symbol=<model>_<vendor>_<k>, compiler=<vendor>)
whose graph holds the region's nodes and the constants they read. The main graph
gets one `Call` node in its place, reading the region's inputs (tensors it
takes from outside) and writing its outputs (tensors used outside it, or graph
outputs). Nodes are then re-ordered topologically, keeping the original order
wherever the data allows.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import ClassVar

from aot.errors import AotcError
from aot.ir import Function, Graph, Node
from aot.partition.state import PartitionState, PartitionStep


def outline(graph: Graph, nodes: list[Node], symbol: str, compiler: str,
            users: dict[str, list[str]] | None = None) -> tuple[Function, Node]:
    """`nodes` as Function `symbol` and the Call node that replaces them. `users` (tensor -> names of
    the nodes reading it) saves a pass over the graph per region when many are outlined."""
    inside = {n.name for n in nodes}
    if users is None:
        users = _users(graph)
    outputs = [o for n in nodes for o in n.outputs
               if o and (o in graph.outputs or any(u not in inside for u in users.get(o, ())))]
    body = graph.subgraph(nodes, symbol, outputs)
    fn = Function(global_symbol=symbol, compiler=compiler, graph=body)
    call = Node("Call", symbol, list(body.inputs), list(outputs), {"function": symbol, "compiler": compiler},
                origin=tuple(s for n in nodes for s in n.sources()))
    return fn, call


def _users(graph: Graph) -> dict[str, list[str]]:
    return {t: [n.name for n in ns] for t, ns in graph.consumers().items()}


def toposort(nodes: list[Node], rank: dict[str, int]) -> list[Node]:
    """Kahn's algorithm; among ready nodes the lowest `rank` goes first (stable, deterministic)."""
    producer = {o: n.name for n in nodes for o in n.outputs if o}
    by_name = {n.name: n for n in nodes}
    waiting = {n.name: {producer[i] for i in n.inputs if i in producer} for n in nodes}
    users: dict[str, list[str]] = {}
    for name, preds in waiting.items():
        for p in preds:
            users.setdefault(p, []).append(name)
    ready = [(rank[n], n) for n, preds in waiting.items() if not preds]
    heapq.heapify(ready)
    out: list[Node] = []
    while ready:
        _, name = heapq.heappop(ready)
        out.append(by_name[name])
        for u in users.get(name, []):
            waiting[u].discard(name)
            if not waiting[u]:
                heapq.heappush(ready, (rank[u], u))
    if len(out) != len(nodes):
        stuck = sorted(set(by_name) - {n.name for n in out})
        raise AotcError(f"partitioning created a cycle between regions (nodes {', '.join(stuck[:5])})")
    return out


@dataclass(frozen=True)
class PartitionGraph(PartitionStep):
    model_name: str
    name: ClassVar[str] = "partition-graph"

    def run(self, state: PartitionState) -> PartitionState:
        assert state.regions is not None, "PartitionGraph runs after MergeCompilerRegions"
        g = state.graph.copy()
        by_name = {n.name: n for n in g.nodes}
        order = {n.name: k for k, n in enumerate(g.nodes)}
        users = _users(g)
        replaced: dict[str, Node] = {}
        # a symbol fixed by the region (read back from a partitioned file) is kept if it carries
        # this model's prefix (two bundles must never export the same symbol); others are numbered
        # <model>_<vendor>_<k>, skipping the numbers the fixed ones took
        prefix = f"{self.model_name}_"
        fixed = {r.symbol for r in state.regions if r.symbol and r.symbol.startswith(prefix)}

        def numbered(compiler: str) -> Iterator[str]:
            return (s for k in itertools.count() if (s := f"{prefix}{compiler}_{k}") not in fixed)

        free = {c: numbered(c) for c in {r.target for r in state.regions}}
        for region in state.regions:
            compiler = region.target
            symbol = region.symbol if region.symbol in fixed else next(free[compiler])
            nodes = sorted((by_name[nm] for nm in region.nodes), key=lambda n: order[n.name])
            fn, call = outline(g, nodes, symbol, compiler, users)
            g.functions[symbol] = fn
            order[call.name] = order[nodes[0].name]
            for n in nodes:
                replaced[n.name] = call
        seen: set[str] = set()
        new_nodes: list[Node] = []
        for n in g.nodes:
            target = replaced.get(n.name, n)
            if target.name not in seen:
                seen.add(target.name)
                new_nodes.append(target)
        g.nodes = toposort(new_nodes, order)
        # The regions are Functions now: what was placed where is in the graph itself.
        return replace(state, graph=g, manual={}, manual_regions=(), targets=None, regions=None)
