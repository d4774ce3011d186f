"""A SiLU whose output a ReduceMean over its planes reads becomes one node that writes both (host pipeline):

    Swish(x) -> y,  ReduceMean(y, axes=[2, ..]) -> m   =>   SwishMean(x) -> y, m
    Swish(x) -> y,  GlobalAveragePool(y) -> m          =>   SwishMean(x) -> y, m      (tf2onnx's form)

EfficientNet's squeeze-excite blocks read each SiLU's output twice: the global mean (a pass of its own over up to
1.2 MB) and the scale's Mul. The fused kernel (runtime_c/kernels/reduce/reduce_swish_mean.c) sums each run of whole
planes right after writing it, while it is in L1 (issue 64). y keeps every reader it had; the ReduceMean's readers
read m, which is ready earlier (the fused node runs where the Swish ran).

Legal (and done) when: the Swish is float32 with one input, the ReduceMean reads it as its only input (axes an
attribute) over every dim from 2 on (each of the N x C planes is contiguous), or a GlobalAveragePool reads it, in
the same control scope. keepdims only changes m's shape (a GlobalAveragePool's is 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node
from aot.ir.schemas import SWISH_MEAN
from aot.passes.base import Pass


@dataclass(frozen=True)
class FuseSwishMean(Pass):
    name: ClassVar[str] = "fuse-swish-mean"

    def run(self, graph: Graph) -> Graph:
        pairs = _pairs(graph)
        if not pairs:
            return graph
        g = graph.copy()
        absorbed = {mean.name for mean in pairs.values()}
        g.nodes = [_fused(n, pairs[n.name]) if n.name in pairs else n for n in g.nodes if n.name not in absorbed]
        return g


def _pairs(graph: Graph) -> dict[str, Node]:
    """Swish node name -> the ReduceMean fused into it (the first over its planes, where several read it)."""
    producers = graph.producers()
    scope = graph.scopes()
    out: dict[str, Node] = {}
    for n in graph.nodes:
        swish = producers.get(n.inputs[0]) if n.op in ("ReduceMean", "GlobalAveragePool") and n.inputs else None
        if swish is None or swish.op != "Swish" or swish.name in out or scope[swish.name] != scope[n.name]:
            continue
        if _plane_mean(n, graph) and _one_float_input(swish, graph):
            out[swish.name] = n
    return out


def _plane_mean(n: Node, graph: Graph) -> bool:
    """A GlobalAveragePool, or a ReduceMean over every dim from 2 on (its axes an attribute), of one float32 input."""
    x = graph.tensors[n.inputs[0]]
    if len(n.inputs) != 1 or len(n.outputs) != 1 or x.dtype != "float32" or len(x.shape) < 3:
        return False
    return n.op == "GlobalAveragePool" or (not n.attrs.get("axes_choices")
                                           and list(n.attrs.get("axes", [])) == list(range(2, len(x.shape))))


def _one_float_input(n: Node, graph: Graph) -> bool:
    return len(n.inputs) == 1 and len(n.outputs) == 1 and graph.tensors[n.inputs[0]].dtype == "float32"


def _fused(swish: Node, mean: Node) -> Node:
    return Node(SWISH_MEAN, swish.name, list(swish.inputs), [swish.outputs[0], mean.outputs[0]],
                {"alpha": float(swish.attrs.get("alpha", 1.0)), "keepdims": int(mean.attrs.get("keepdims", 1))},
                origin=swish.sources() + mean.sources())
