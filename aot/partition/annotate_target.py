"""AnnotateTarget: each node gets the target that will compile it.

A composite already belongs to its vendor; a manual annotation wins; otherwise
the first vendor (in the user's order) whose checker accepts the node, else the
host. The vendors' reasons for refusing are kept for `--explain`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from aot.ir import Graph
from aot.passes.base import Pass

if TYPE_CHECKING:
    from aot.vendor.base import Vendor

HOST = "host"


@dataclass(frozen=True)
class AnnotateTarget(Pass):
    vendors: tuple[Vendor, ...]
    fixed: tuple[tuple[str, str], ...] = ()  # (node name, target) from manual annotation
    name: ClassVar[str] = "annotate-target"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        fixed = dict(self.fixed)
        targets: dict[str, str] = {}
        reasons: dict[str, dict[str, str]] = {}
        for n in g.nodes:
            if n.op == "Composite":
                targets[n.name] = n.attrs["compiler"]
                continue
            if n.name in fixed:
                targets[n.name] = fixed[n.name]
                continue
            targets[n.name] = HOST
            for v in self.vendors:
                verdict = v.check(n, g)
                if verdict:
                    targets[n.name] = v.name
                    break
                reasons.setdefault(n.name, {})[v.name] = verdict.reason
        g.meta["targets"] = targets
        g.meta["refusals"] = reasons
        return g
