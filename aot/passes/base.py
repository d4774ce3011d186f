"""The pass protocol (after xDSL's ModulePass): a name and a pure run(graph) -> graph."""

from __future__ import annotations

from typing import ClassVar

from aot.ir import Graph


class Pass:
    name: ClassVar[str] = "pass"

    def run(self, graph: Graph) -> Graph:  # pragma: no cover - interface
        raise NotImplementedError
