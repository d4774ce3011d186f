"""Layout shapes that tf2onnx and the TFLite converter write, rewritten so none costs a pass over data.

    Transpose(Transpose(x, p1), p2)     one Transpose(x, p1[p2]); none when that is the identity (its
                                        readers read x; a view when it is a graph output)
    Transpose moving only unit axes     a view (tf2onnx's NHWC -> NCHW of a one-channel input, and
                                        NCHW -> NHWC of a 1 x 1 plane before Flatten)
    view(view(x))                       one view of x (Reshape/Flatten/Squeeze/Unsqueeze: only the output
                                        shape matters; the inner one goes when nothing else reads it)

A Pad before a conv or pool is folded into it by the next pass, FoldPad (aot/passes/fold_pad.py).

Views are free already (the planner gives them their input's bytes); merging them is for fewer
nodes. A rewritten node keeps its name and records the nodes it absorbed in its origin. Shape
arithmetic (Shape -> Gather -> Concat -> Reshape) is folded by the frontend, before any pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node
from aot.passes.base import Pass

VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")


@dataclass(frozen=True)
class SimplifyLayout(Pass):
    name: ClassVar[str] = "simplify-layout"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        producers = g.producers()
        consumers = g.consumers()
        outputs = set(g.outputs)
        drop: set[str] = set()

        def sole_reader(tensor: str, node: Node) -> bool:
            return tensor not in outputs and [n.name for n in consumers.get(tensor, [])] == [node.name]

        for n in g.nodes:
            if not n.inputs or not n.inputs[0]:
                continue
            before = list(n.inputs)
            src = producers.get(n.inputs[0])
            if n.op == "Transpose":
                if src is not None and src.op == "Transpose" and src.name not in drop:
                    n.attrs = {"perm": [src.attrs["perm"][p] for p in n.attrs["perm"]]}
                    n.inputs = [src.inputs[0]]
                    n.origin = _absorb(src, n, sole_reader(src.outputs[0], n), drop)
                if moves_unit_axes_only(g.tensors[n.inputs[0]].shape, n.attrs["perm"]):
                    n.op, n.attrs = "Reshape", {}
                    src = producers.get(n.inputs[0])
            if n.op in VIEWS and g.tensors[n.inputs[0]].shape == g.tensors[n.outputs[0]].shape \
                    and n.outputs[0] not in outputs:  # no change at all: its readers read its input
                drop.add(n.name)
                for m in g.nodes:
                    m.inputs = [n.inputs[0] if i == n.outputs[0] else i for i in m.inputs]
                consumers = _consumers(g, drop)
                continue
            if n.op in VIEWS and src is not None and src.op in VIEWS and src.name not in drop:
                n.op, n.inputs = "Reshape", [src.inputs[0]]
                n.origin = _absorb(src, n, sole_reader(src.outputs[0], n), drop)
            # the readers of the inputs just bypassed are stale; the graph order is kept, so
            # refresh only what later nodes look up
            if n.inputs != before:
                consumers = _consumers(g, drop)
        g.nodes = [n for n in g.nodes if n.name not in drop]
        return g


def _consumers(g: Graph, drop: set[str]) -> dict[str, list[Node]]:
    uses: dict[str, list[Node]] = {}
    for n in g.nodes:
        if n.name not in drop:
            for i in n.inputs:
                if i:
                    uses.setdefault(i, []).append(n)
    return uses


def _absorb(src: Node, n: Node, dead: bool, drop: set[str]) -> tuple[str, ...]:
    """n's new origin: src's nodes and n's. src goes when n was its only reader (else it stays for the others)."""
    if dead:
        drop.add(src.name)
    return tuple(dict.fromkeys(src.sources() + n.sources()))


def moves_unit_axes_only(shape: tuple[int, ...], perm: list[int]) -> bool:
    """The permutation keeps the order of the axes longer than 1: the bytes do not move."""
    kept = [p for p in perm if shape[p] != 1]
    return kept == sorted(kept)
