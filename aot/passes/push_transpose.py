"""Transposes moved below the elementwise ops that read them, until they meet their inverse.

tf2onnx writes a Keras conv net in NHWC around NCHW convs: each Conv stands between Transpose(perm=[0, 3, 1, 2])
and Transpose(perm=[0, 2, 3, 1]), and what runs between two convs (a BatchNorm as Mul and Add by per-channel
constants, the activation, hard-swish's Add/Clip/Mul, a residual Add) runs in NHWC. Those ops keep the two
Transposes apart, so SimplifyLayout cannot cancel them, and keep the per-channel Mul and Add away from the conv,
so FoldAffine cannot fold them (MobileNetV3-Large from tf2onnx kept 30 of its 128 Transposes, each a pass over
the tensor, and ran 62 Mul/Add passes that fold away). Elementwise arithmetic does not care where an element
sits, so the Transpose can move past the op:

    E(Transpose(x, p))                      Transpose(E(x), p)           E unary elementwise
    E(Transpose(x, p), c)                   Transpose(E(x, c'), p)       c constant, c' = c in x's axis order
    E(Transpose(x1, p), Transpose(x2, p))   Transpose(E(x1, x2), p)      (a residual Add in NHWC)
    E(Transpose(x, p), v)                   Transpose(E(x, v'), p)       v a run-time tensor whose bytes are in
                                                                          x's order already (squeeze-excite's
                                                                          [1, 1, 1, C] scale): v' a view of it
    R(Transpose(x, p), axes, keepdims=1)    Transpose(R(x, p[axes]), p)  R a reduction (squeeze-excite's mean)
    Pad(Transpose(x, p), pads)              Transpose(Pad(x, pads'), p)  (tf2onnx's Pad before a strided
                                                                          depthwise conv, which FoldPad folds)
    Concat(Transpose(xi, p)..., axis=a)     Transpose(Concat(xi..., axis=p[a]), p)  (an NHWC concat between
                                                                          NCHW convs; a vendor's NHWC boundaries
                                                                          around a host Concat)

With `pools` (the host side of a vendor's channels-last boundaries, aot/partition/layout.py), also:

    MaxPool(Transpose(x, to_nchw))          Transpose(MaxPool_nhwc(x), to_nchw)  a float MaxPool of values
                                                                          only, marked channels last
                                                                          (aotc_maxpool_nhwc_f32)

Legal when E's inputs have its output's rank and broadcast to no more than its shape, the values are float, and
no Transpose it reads is a graph output. A Transpose read by E alone moves; one that other nodes read too stays
for them and E gets a copy after it, when every reader of it is an op this pass moves past or another Transpose
(hard-swish's x * relu6(x + 3) reads x twice: both copies meet again at the Mul). Repeated until none moves.
The pass then cancels each with the inverse it reached (SimplifyLayout, until nothing merges), and FoldAffine
folds the affine ops into the convs. If the graph ends with more elements transposed than it began with (a
Transpose moved past a Pad or to a fan-out that never meets its inverse), the pass leaves it as it was.

The moved Transpose keeps its name and writes E's output tensor (the model's values there are unchanged); E
writes a new tensor `<output>__pre_transpose`, which `aotc compare` shows without a counterpart in the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.ir.schemas import NHWC_ATTR, OUT_NHWC_ATTR, reads_nhwc
from aot.passes.base import Pass, fresh_node_name, fresh_tensor_name
from aot.passes.simplify_layout import SimplifyLayout, moves_unit_axes_only

UNARY = frozenset({"Abs", "Ceil", "Celu", "Clip", "Cos", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid",
                   "HardSwish", "LeakyRelu", "Log", "Mish", "Neg", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid",
                   "Sin", "Softplus", "Softsign", "Sqrt", "Tanh"})
BINARY = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu"})
REDUCE = frozenset({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"})
_FLOATS = ("float32", "float16", "float64")


@dataclass(frozen=True)
class PushTransposeDown(Pass):
    name: ClassVar[str] = "push-transpose"
    # MaxPools too, run channels last: for a vendor's NHWC boundaries, where the pool's Transposes to NCHW and
    # back would each copy a tensor beside it. Off in the default pipeline: there ConvReadsNHWC/ConvWritesNHWC
    # take the transposes around convs, and the NCHW pools have the faster kernels (AVX-512).
    pools: bool = False

    def run(self, graph: Graph) -> Graph:
        if not any(n.op == "Transpose" for n in graph.nodes):
            return graph
        g = graph.copy()
        while _push_one_round(g, self.pools):
            pass
        while True:  # the inverse pairs the moves made adjacent, cancelled (a merge can make another pair)
            simpler = SimplifyLayout().run(g)
            if len(simpler.nodes) == len(g.nodes):
                break
            g = simpler
        _write_outputs_directly(g)
        return g if _transposed(g) <= _transposed(graph) else graph


def _write_outputs_directly(g: Graph) -> None:
    """A pair that cancelled at a graph output leaves a view of the same shape writing it (SimplifyLayout keeps
    the output's name): the node before the view writes the output itself, as before the Transpose moved."""
    producers, consumers = g.producers(), g.consumers()
    drop: set[str] = set()
    for n in g.nodes:
        if n.op != "Reshape" or n.outputs[0] not in g.outputs or n.inputs[0] in g.outputs:
            continue
        src, x = producers.get(n.inputs[0]), g.tensors[n.inputs[0]]
        if src is None or x.shape != g.tensors[n.outputs[0]].shape or len(consumers.get(x.name, [])) != 1:
            continue
        src.outputs = [n.outputs[0] if o == x.name else o for o in src.outputs]
        del g.tensors[x.name]
        drop.add(n.name)
    g.nodes = [n for n in g.nodes if n.name not in drop]


def _transposed(g: Graph) -> int:
    return sum(g.tensors[n.outputs[0]].size for n in g.nodes if n.op == "Transpose")


def _movable(e: Node, pools: bool = False) -> bool:
    if e.op == "MaxPool":
        return pools and len(e.inputs) == 1 and len(e.outputs) == 1 and not reads_nhwc(e)
    return (e.op in UNARY and len(e.inputs) == 1 or e.op in BINARY and len(e.inputs) == 2 or e.op == "Pad"
            and len(e.inputs) == 1 or e.op in REDUCE and len(e.inputs) == 1 and e.attrs.get("keepdims", 1) == 1
            or e.op == "Concat" and len(e.inputs) >= 1) and len(e.outputs) == 1


def _push_one_round(g: Graph, pools: bool) -> bool:
    """Every op whose inputs are Transposes it can move past, once, in graph order: whether any moved."""
    producers, consumers = g.producers(), g.consumers()
    outputs = set(g.outputs)
    moved = False
    for e in list(g.nodes):
        plan = _plan(g, e, producers, consumers, outputs, pools)
        if plan is None:
            continue
        _rewrite(g, e, *plan)
        producers, consumers = g.producers(), g.consumers()
        moved = True
    return moved


def _plan(g: Graph, e: Node, producers: dict[str, Node], consumers: dict[str, list[Node]],
          outputs: set[str], pools: bool) -> tuple[list[int], list[Node], list[Node]] | None:
    """(perm, the Transposes e reads that move or go, those that stay for other readers), or None."""
    if not _movable(e, pools):
        return None
    out = g.tensors.get(e.outputs[0])
    if out is None or out.dtype not in _FLOATS or e.op == "MaxPool" and out.dtype != "float32":
        return None
    perm: list[int] | None = None
    sole: list[Node] = []
    shared: list[Node] = []
    views: list[str] = []
    for name in dict.fromkeys(e.inputs):  # (x * x reads one Transpose twice)
        if not name or g.tensors[name].is_const:
            continue
        t = producers.get(name)
        if t is None or t.op != "Transpose":
            views.append(name)  # checked below, once the perm is known
            continue
        if name in outputs:
            return None
        if len(g.tensors[name].shape) != len(out.shape):
            return None
        p = list(t.attrs["perm"])
        if perm is not None and p != perm:
            return None
        perm = p
        readers = consumers.get(name, [])
        if all(r.name == e.name for r in readers):
            sole.append(t)
        elif all(_movable(r, pools) or r.op == "Transpose" for r in readers):  # (a Transpose reader merges with it)
            shared.append(t)
        else:
            return None
    if perm is None:
        return None
    rank = len(perm)
    if e.op == "MaxPool" and perm != [0, rank - 1, *range(1, rank - 1)]:  # only from channels last to first
        return None
    inverse = [int(i) for i in np.argsort(perm)]
    for name in views:  # another run-time input: only one whose bytes need not move (a Reshape serves)
        shape = g.tensors[name].shape
        if len(shape) != len(perm) or not moves_unit_axes_only(shape, inverse):
            return None
    if e.op in BINARY:  # the output is no larger than the inputs it moves past (a smaller one broadcasts)
        for name in e.inputs:
            if name and np.broadcast_shapes(g.tensors[name].shape, out.shape) != tuple(out.shape):
                return None
    return perm, sole, shared


def _rewrite(g: Graph, e: Node, perm: list[int], sole: list[Node], shared: list[Node]) -> None:
    inverse = [int(i) for i in np.argsort(perm)]
    rank = len(perm)
    sources = {t.outputs[0]: t.inputs[0] for t in (*sole, *shared)}
    inputs = []
    views: list[Node] = []
    for name in e.inputs:
        if name in sources:
            inputs.append(sources[name])
        elif name and g.tensors[name].is_const:
            inputs.append(_permuted_const(g, name, rank, inverse))
        elif name:  # its bytes in the input's axis order already: a view with the permuted shape
            t = g.tensors[name]
            viewed = fresh_tensor_name(g, f"{name}__transposed")
            g.tensors[viewed] = Tensor(viewed, tuple(t.shape[i] for i in inverse), t.dtype)
            views.append(Node("Reshape", fresh_node_name(g, f"{e.name}__view{len(views)}"), [name], [viewed], {}))
            inputs.append(viewed)
        else:
            inputs.append(name)
    e.inputs = inputs
    if e.op in REDUCE:  # the axes of the Transpose's output, named in its input
        e.attrs = {**e.attrs, "axes": sorted(perm[a] for a in e.attrs["axes"])}
    if e.op == "Pad":  # [begin..., end...], each in the input's axis order
        pads = list(e.attrs["pads"])
        e.attrs = {**e.attrs, "pads": [pads[inverse[i]] for i in range(rank)] +
                   [pads[rank + inverse[i]] for i in range(rank)]}
    if e.op == "MaxPool":  # its input and output channels last (the window's attributes name spatial axes)
        e.attrs = {**e.attrs, NHWC_ATTR: 1, OUT_NHWC_ATTR: 1}
    if e.op == "Concat":  # the output's axis a is the input's axis perm[a]
        e.attrs = {**e.attrs, "axis": perm[int(e.attrs["axis"]) % rank]}
    y = e.outputs[0]
    pre = fresh_tensor_name(g, f"{y}__pre_transpose")
    g.tensors[pre] = Tensor(pre, tuple(g.tensors[y].shape[i] for i in inverse), g.tensors[y].dtype)
    e.outputs = [pre]
    for t in sole:  # read by e alone, which now reads their inputs
        del g.tensors[t.outputs[0]]
    gone = {t.name for t in sole}
    if sole:
        mover = sole[0]
        mover.inputs, mover.outputs = [pre], [y]
    else:  # a copy of a Transpose that stays for its other readers
        t = shared[0]
        mover = Node("Transpose", fresh_node_name(g, f"{t.name}__after_{e.name}"), [pre], [y], {"perm": list(perm)},
                     t.origin)
    nodes = [n for n in g.nodes if n.name not in gone]
    at = nodes.index(e)
    nodes[at:at + 1] = [*views, e, mover]  # the views before e, the Transpose after it (it reads e's output)
    g.nodes = nodes


def _permuted_const(g: Graph, name: str, rank: int, inverse: list[int]) -> str:
    """The constant `name` (in the Transpose's output order) in its input's axis order, as a new constant (the
    same one when it has one element)."""
    t = g.tensors[name]
    if t.size == 1:
        return name
    full = np.asarray(t.data).reshape((1,) * (rank - len(t.shape)) + tuple(t.shape))
    value = np.ascontiguousarray(full.transpose(inverse))
    new = fresh_tensor_name(g, f"{name}__transposed")
    g.tensors[new] = Tensor(new, tuple(value.shape), t.dtype, value)
    return new
