"""Partitioning, as steps users of other BYOC systems know, each a pass over a typed state:

    AnnotateTarget -> MergeComposite -> MergeCompilerRegions -> PruneRegions -> PartitionGraph

`partition_for(graph, vendors)` runs them in that order through the pass runner
(aot/passes/base.py), which verifies the graph and the state after every step.
What the steps share (hand placements, each node's target, the vendors' refusals,
the regions) is a `PartitionState` (state.py) passed from one to the next. The
result is a `Partitioned`: the main graph with one Call node per region and the
regions as Functions in `graph.functions`, the vendors, and the refusals. Nodes of a region a
vendor's keep_region sends back are offered to the vendors after it, in another round of the
first four steps (TVM sends them to the host; a second vendor that takes them is the better home).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from aot.ir import Graph
from aot.partition.annotate_target import AnnotateTarget
from aot.partition.manual import resolve
from aot.partition.merge_composite import MergeComposite
from aot.partition.merge_regions import MergeCompilerRegions
from aot.partition.partition_graph import PartitionGraph
from aot.partition.prune_regions import PruneRegions
from aot.partition.state import HOST, Partitioned, PartitionState, PartitionStep, Region
from aot.passes.base import run_passes

if TYPE_CHECKING:
    from aot.vendor.base import Vendor


def partition_steps(vendors: Sequence[Vendor], model_name: str) -> tuple[PartitionStep, ...]:
    """The pipeline, in order; `vendors` by the user's priority."""
    vendors = tuple(vendors)
    return (
        AnnotateTarget(vendors),  # each node: a hand placement, else the first vendor whose checker takes it
        MergeComposite(vendors),  # pattern matches become Composite nodes of their vendor
        MergeCompilerRegions(),  # neighbours of one vendor join into regions, no cycle between regions
        PruneRegions(vendors),  # each vendor may send a region back to the host
        PartitionGraph(model_name),  # each region becomes a Function and a Call
    )


def partition_for(graph: Graph, vendors: Sequence[Vendor], annotations: list[dict] | None = None,
                  model_name: str | None = None) -> Partitioned:
    """Partition `graph` for `vendors` (priority order), honouring manual `annotations`."""
    vendors = tuple(vendors)
    if not vendors:
        return Partitioned(graph)
    manual = resolve(annotations or [], graph, [v.name for v in vendors])
    start = PartitionState(graph, manual=manual.placements(), manual_regions=manual.manual_regions())
    *rounds, outline = partition_steps(vendors, model_name or graph.name)
    while True:  # a region a vendor sends back is offered to the next vendors, in a new round
        state = run_passes(start, rounds, verify=PartitionState.verify)
        if state.declined == start.declined:
            break
        start = replace(start, declined=state.declined)
    state = run_passes(state, [outline], verify=PartitionState.verify)
    return Partitioned(state.graph, vendors, state.refusals)


__all__ = ["HOST", "AnnotateTarget", "MergeComposite", "MergeCompilerRegions", "PartitionGraph", "PartitionState",
           "PartitionStep", "Partitioned", "PruneRegions", "Region", "partition_for", "partition_steps"]
