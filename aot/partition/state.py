"""The typed values partitioning passes along: what its steps share, and what it hands on.

    PartitionState   between the steps: the graph, hand placements, targets, refusals, regions
    Partitioned      the result: the graph with its Functions, the vendors, why nodes stayed home

Each step fills in its part of the state (AnnotateTarget the targets and refusals,
MergeCompilerRegions the regions ...) and returns a new one; nothing travels
beside the graph. `PartitionState.verify` is what the pass runner checks after every step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from aot.errors import AotcError
from aot.ir import Graph
from aot.passes.base import verify_graph

if TYPE_CHECKING:
    from aot.vendor.base import Vendor

HOST = "host"
SENT_BACK = "{vendor} sent its region back (keep_region)"  # the refusal of a node a vendor declined

Refusals = Mapping[str, Mapping[str, str]]  # node name -> vendor -> why it did not take the node


@dataclass(frozen=True)
class Region:
    """Nodes of the main graph that will become one Function for `target`."""

    target: str
    nodes: tuple[str, ...]  # node names, in graph order
    manual: bool = False  # drawn by the user: taken as given, never pruned
    symbol: str | None = None  # its function's global symbol, when fixed (a partition read back from ONNX)


@dataclass(frozen=True)
class PartitionState:
    graph: Graph
    manual: Mapping[str, str] = field(default_factory=dict)  # node -> target placed by hand
    manual_regions: tuple[Region, ...] = ()  # regions drawn by hand (their nodes are in `manual` too)
    targets: Mapping[str, str] | None = None  # node -> HOST or a vendor; None before AnnotateTarget
    refusals: Refusals = field(default_factory=dict)
    regions: tuple[Region, ...] | None = None  # None before MergeCompilerRegions, and once outlined
    # node -> the vendors whose keep_region sent it back (PruneRegions): the next round offers it to the others
    declined: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def verify(self) -> None:
        """The graph verifies (functions and calls included) and the state fits it: every name it
        holds is a node of the main graph, each node has one target, each vendor node lies in
        exactly one region of its target, and Composite nodes sit only where a vendor takes them."""
        verify_graph(self.graph)
        nodes = {n.name: n for n in self.graph.nodes}
        stray = [n for n in [*self.manual, *(m for r in self.manual_regions for m in r.nodes)] if n not in nodes]
        if stray:
            raise AotcError(f"hand-placed node(s) {', '.join(stray[:5])} are not in the graph")
        if self.targets is None:
            composite = next((n for n in self.graph.nodes if n.op == "Composite"), None)
            if composite is not None:
                raise AotcError("composite node without a target", node=composite)
            return
        unknown = [n for n in self.targets if n not in nodes]
        untargeted = [n for n in nodes if n not in self.targets]
        if unknown or untargeted:
            raise AotcError(f"targets do not match the graph: {', '.join((unknown + untargeted)[:5])}")
        for n in self.graph.nodes:
            if n.op == "Composite" and self.targets[n.name] != n.attrs["compiler"]:
                raise AotcError(f"composite of {n.attrs['compiler']} targeted at {self.targets[n.name]}", node=n)
        if self.regions is None:
            return
        region_of: dict[str, int] = {}
        for k, r in enumerate(self.regions):
            for m in r.nodes:
                if m not in nodes:
                    raise AotcError(f"region {k} ({r.target}) holds '{m}', which is not in the graph")
                if m in region_of:
                    raise AotcError(f"regions {region_of[m]} and {k} both hold", node=nodes[m])
                if self.targets[m] != r.target or r.target == HOST:
                    raise AotcError(f"region {k} for {r.target} holds a node targeted at {self.targets[m]}",
                                    node=nodes[m])
                region_of[m] = k
        outside = next((n for n in self.graph.nodes if self.targets[n.name] != HOST and n.name not in region_of), None)
        if outside is not None:
            raise AotcError(f"targeted at {self.targets[outside.name]} but in no region", node=outside)


class PartitionStep:
    """One step of partitioning: a name and a pure run(state) -> state (a Step for run_passes)."""

    name: ClassVar[str] = "partition-step"

    def run(self, state: PartitionState) -> PartitionState:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Partitioned:
    """What partitioning hands on: the main graph (one Call per Function), the vendors in the
    user's priority order (their codegen turns the Functions into C), and why each node a vendor
    refused stayed where it is (`aotc partition --explain`)."""

    graph: Graph
    vendors: tuple[Vendor, ...] = ()
    refusals: Refusals = field(default_factory=dict)
    # each vendor's options (--vendor-opt V.KEY=VALUE), its defaults filled in: for its transform and codegen
    options: dict[str, dict[str, str]] = field(default_factory=dict)
