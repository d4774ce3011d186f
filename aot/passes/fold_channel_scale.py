"""A per-channel scale of a 1 x 1 conv's input becomes a scale of its weights' columns (host targets):

    Mul(x, s) -> xs,  Conv(xs, W) -> y   =>   Mul(W, s) -> Ws,  Conv(x, Ws) -> y

with x [N, C, H, W], s [1, C, 1, 1] computed at run time (squeeze-excite's gate) and W [M, C, 1, 1] constant:
sum_c W[m, c] (s[c] x[c, p]) = sum_c (W[m, c] s[c]) x[c, p]. Why (issue 64): EfficientNet-B0's scale Muls ran as
passes of their own over up to 1.6 MB (85 us, 1.9 % of its time); where the project conv runs on the GEMM core
with its weights as stored (planes of 28 x 28 and more) the M x C products of the weights' Mul replace the
C x H x W of the input's, and the conv reads x where the Mul wrote xs. Rounding: s[c] x[c, p] and W[m, c] s[c] are
each one float product, so the sums differ from the model's in the last bits (within the float tolerance).

Legal (and done) when: the Mul is float32 of two inputs, one x of 4 dims, the other s of shape [1, C, 1, 1]
(either order); its output has no reader but a Conv (or FusedConv) reading it as its input X alone, in the same
control scope, and is not a graph output; the conv has constant float32 weights and takes the GEMM core with its
weights as stored (the pass's on_gemm_core: a run-time W keeps it there), and M < H x W (fewer
products than the Mul it replaces). Not on a microcontroller, whose 1 x 1 convs with constant weights take the
implicit GEMM (compile_partitioned runs this pass for the host alone).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node, Tensor
from aot.passes.base import Pass, fresh_tensor_name


@dataclass(frozen=True)
class FoldChannelScale(Pass):
    """`on_gemm_core(conv, graph)`: whether the conv runs on the GEMM core with its weights as stored (the kernel
    table's answer, aot/kernels/conv.py's on_gemm_core, which compile_partitioned passes in: passes do not import
    the kernels)."""

    on_gemm_core: Callable[[Node, Graph], bool]
    name: ClassVar[str] = "fold-channel-scale"

    def run(self, graph: Graph) -> Graph:
        if not _pairs(graph, self.on_gemm_core):
            return graph
        g = graph.copy()
        pairs = _pairs(g, self.on_gemm_core)  # g's own nodes: each conv is rewritten in its place
        g.nodes = [_scale_weights(g, n, *pairs[n.name]) if n.name in pairs else n for n in g.nodes]
        return g


def _pairs(graph: Graph, on_gemm_core: Callable[[Node, Graph], bool]) -> dict[str, tuple[Node, str, str]]:
    """Mul node name -> (the conv reading it, x, s)."""
    consumers, scope = graph.consumers(), graph.scopes()
    outs = set(graph.outputs)
    found: dict[str, tuple[Node, str, str]] = {}
    for n in graph.nodes:
        if n.op != "Mul" or len(n.inputs) != 2 or len(n.outputs) != 1 or n.outputs[0] in outs:
            continue
        readers = consumers.get(n.outputs[0], [])
        if len(readers) != 1 or scope[readers[0].name] != scope[n.name]:
            continue
        conv = readers[0]
        xs = _x_and_scale(n, graph)
        if xs is not None and _foldable(conv, n.outputs[0], xs[0], graph) and on_gemm_core(conv, graph):
            found[n.name] = (conv, *xs)
    return found


def _x_and_scale(mul: Node, graph: Graph) -> tuple[str, str] | None:
    """(x, s): x float32 [N, C, H, W] and s [1, C, 1, 1], in either order; None otherwise."""
    for x, s in (mul.inputs, mul.inputs[::-1]):
        tx, ts = graph.tensors[x], graph.tensors[s]
        if (tx.dtype == ts.dtype == "float32" and len(tx.shape) == 4 and not tx.is_const
                and ts.shape == (1, tx.shape[1], 1, 1)):
            return x, s
    return None


def _foldable(conv: Node, xs: str, x: str, graph: Graph) -> bool:
    """The conv reads xs as its X alone, with constant float32 weights [M, C, 1, 1], M < H W."""
    if conv.op not in ("Conv", "FusedConv") or conv.inputs[0] != xs or conv.inputs[1:].count(xs):
        return False
    w = graph.tensors[conv.inputs[1]]
    h, wd = graph.tensors[x].shape[2:]
    return w.is_const and w.dtype == "float32" and len(w.shape) == 4 and w.shape[0] < h * wd


def _scale_weights(g: Graph, mul: Node, conv: Node, x: str, s: str) -> Node:
    """The Mul rewritten to scale W's columns (it runs where it ran: s is ready); the conv (in its place) made to
    read x and Ws, and xs dropped."""
    w = conv.inputs[1]
    del g.tensors[mul.outputs[0]]
    ws = fresh_tensor_name(g, f"{w}__scaled")
    g.tensors[ws] = Tensor(ws, g.tensors[w].shape, "float32")
    conv.inputs = [x, ws, *conv.inputs[2:]]
    conv.origin = conv.sources() + mul.sources()
    return Node("Mul", mul.name, [w, s], [ws], dict(mul.attrs), origin=mul.sources())
