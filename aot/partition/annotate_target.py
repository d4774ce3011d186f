"""AnnotateTarget: each node gets the target that will compile it.

A hand placement wins; otherwise the first vendor (in the user's order) whose
checker accepts the node, else the host. A node that reads or writes rows known only at run
time (aot/frontend/onnx/bounded.py: NonMaxSuppression's and what reads them) stays on the host, whose
code runs it on the rows written; a vendor function would see the bound. The vendors' reasons for refusing are
kept for `--explain`. (Whether a vendor can take a node it was given by hand is
checked once composites are known: see MergeComposite.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from aot.partition.state import HOST, SENT_BACK, PartitionState, PartitionStep

if TYPE_CHECKING:
    from aot.vendor.base import Vendor

__all__ = ["HOST", "AnnotateTarget"]


@dataclass(frozen=True)
class AnnotateTarget(PartitionStep):
    vendors: tuple[Vendor, ...]
    name: ClassVar[str] = "annotate-target"

    def run(self, state: PartitionState) -> PartitionState:
        g = state.graph
        targets: dict[str, str] = {}
        reasons: dict[str, dict[str, str]] = {}
        bounded = g.info.extent_root
        for n in g.nodes:
            if bounded and any(t in bounded for t in [*n.inputs, *n.outputs] if t):
                targets[n.name] = HOST
                reasons[n.name] = {v.name: "its rows are known only at run time (host only)" for v in self.vendors}
                continue
            if n.name in state.manual:
                targets[n.name] = state.manual[n.name]
                continue
            targets[n.name] = HOST
            for v in self.vendors:
                if v.name in state.declined.get(n.name, ()):
                    reasons.setdefault(n.name, {})[v.name] = SENT_BACK.format(vendor=v.name)
                    continue
                verdict = v.check(n, g)
                if verdict:
                    targets[n.name] = v.name
                    break
                reasons.setdefault(n.name, {})[v.name] = verdict.reason
        return replace(state, targets=targets, refusals=reasons)
