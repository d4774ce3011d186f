"""Partitioning, in the four steps users of other BYOC systems know:

    MergeComposite -> AnnotateTarget -> MergeCompilerRegions -> PartitionGraph

`partition_for(graph, vendors)` runs them in that order (as TVM's partition_for_*
does), honouring manual annotations, and gives each vendor a last say over its
regions (`keep_region`). The result is the main graph with one Call node per
region and the regions as Functions in `graph.functions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aot.ir import Graph
from aot.partition.annotate_target import HOST, AnnotateTarget
from aot.partition.manual import Annotations, check_vendor_takes, resolve
from aot.partition.merge_composite import MergeComposite, unwrap_composites
from aot.partition.merge_regions import MergeCompilerRegions
from aot.partition.partition_graph import PartitionGraph

if TYPE_CHECKING:
    from aot.vendor.base import Vendor


def partition_for(graph: Graph, vendors: list[Vendor], annotations: list[dict] | None = None,
                  model_name: str | None = None) -> Graph:
    if not vendors:
        return graph
    by_name = {v.name: v for v in vendors}
    ann = resolve(annotations or [], graph, list(by_name)) if annotations else Annotations()
    fixed = ann.fixed_targets()
    g = MergeComposite(tuple(vendors), fixed).run(graph)
    check_vendor_takes(g, ann, by_name)
    home = {n.name: n.name for n in g.nodes}
    for n in g.nodes:
        if n.op == "Composite":
            home.update({m.name: n.name for m in n.attrs["body"].nodes})
    fixed_g = tuple((home[n], t) for n, t in fixed)
    regions = tuple((t, tuple(dict.fromkeys(home[n] for n in names))) for t, names in ann.regions)
    g = AnnotateTarget(tuple(vendors), fixed_g).run(g)
    g = MergeCompilerRegions(regions).run(g)
    g = _prune(g, by_name, {n for _, names in regions for n in names})
    g = PartitionGraph(model_name or graph.name).run(g)
    g = unwrap_composites(g)  # composites left in the main graph (none normally) run on the host
    g.verify()
    return g


def _prune(g: Graph, vendors: dict[str, Vendor], manual: set[str]) -> Graph:
    """Vendors may send regions back to the host (e.g. a region with no compute-heavy op)."""
    from aot.partition.partition_graph import outline

    kept = []
    targets = dict(g.meta["targets"])
    for region in g.meta["regions"]:
        v = vendors[region["target"]]
        if v.keep_region and not set(region["nodes"]) & manual:
            by_name = {n.name: n for n in g.nodes}
            fn, _ = outline(g, [by_name[n] for n in region["nodes"]], "probe", v.name)
            if not v.keep_region(fn):
                targets.update({n: HOST for n in region["nodes"]})
                continue
        kept.append(region)
    g = g.copy()
    g.meta["regions"], g.meta["targets"] = kept, targets
    return g


__all__ = ["AnnotateTarget", "MergeComposite", "MergeCompilerRegions", "PartitionGraph", "partition_for"]
