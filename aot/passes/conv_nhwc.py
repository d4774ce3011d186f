"""Convs that read and write channels last in place of the Transposes around them.

ConvReadsNHWC: a Transpose from NHWC to NCHW read only by convs becomes those convs reading NHWC.

tf2onnx feeds a Keras model's channels-last input to its first Conv through
`Transpose(perm=[0, 3, 1, 2])`: a pass over the whole input (VWW MobileNet's 96 x 96 x 3
costs as much as its first conv's epilogue), and the ONNX form the TFLite converter's NHWC
needs. The implicit GEMM (aotc_conv_implicit_f32) reads any input through strides, so the
conv reads the NHWC tensor itself: the node keeps its ONNX attributes and gets
`aotc_in_nhwc=1` (conv.py then takes only that kernel, and packs W^T's rows in (ky, kx, c)
order, so a kernel row's taps over all channels are one contiguous run of the input).

Legal when every reader of the Transpose's output is a 2-D Conv or FusedConv reading it as its
input X only, with one group and constant weights, and the output is not a graph output.
Runs on the host graph after partitioning (a vendor still sees the plain ops).

ConvWritesNHWC, the other half: a Transpose(perm=[0, 2, 3, 1]) of a conv's output (the TFLite
frontend's NCHW float convs read in NHWC order by a Flatten, a graph output; tf2onnx's Transpose
before Flatten) becomes the conv storing its output channels last (`aotc_out_nhwc=1`: the
implicit GEMM's and ConvTranspose's store take an NHWC stride; no pass over the data). Between the
conv and the Transpose may stand unary elementwise ops and Slices, each the only reader of its
input: they move after the store and compute on the NHWC value (a Slice's starts and steps permuted).
Convs taken: ConvTranspose, and Conv/FusedConv of 2-D, one group, constant weights, no residual
(conv.py then takes the implicit GEMM); other producers keep the Transpose.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from aot.ir import Graph, Node
from aot.ir.schemas import NHWC_ATTR, OUT_NHWC_ATTR, reads_nhwc, writes_nhwc
from aot.passes.base import Pass

_TO_NHWC = [0, 2, 3, 1]
# single-input elementwise ops (any constant inputs after the first are scalars): layout-agnostic
_UNARY = ("Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSwish", "HardSigmoid", "Elu", "Selu", "Abs", "Neg",
          "Exp", "Log", "Sqrt", "Floor", "Ceil", "Softplus", "Identity")


@dataclass(frozen=True)
class ConvReadsNHWC(Pass):
    name: ClassVar[str] = "conv-reads-nhwc"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        consumers = g.consumers()
        outputs = set(g.outputs)
        drop: set[str] = set()
        for t in g.nodes:
            if t.op != "Transpose" or list(t.attrs.get("perm", ())) != [0, 3, 1, 2]:
                continue
            y = t.outputs[0]
            readers = consumers.get(y, [])
            if y in outputs or not readers or g.tensors[t.inputs[0]].dtype != "float32":
                continue
            if not all(self._takes(n, y, g) for n in readers):
                continue
            for n in readers:
                n.inputs[0] = t.inputs[0]
                n.attrs = dict(n.attrs, **{NHWC_ATTR: 1})
                n.origin = n.sources() + t.sources()
            drop.add(t.name)
            g.tensors.pop(y, None)
        g.nodes = [n for n in g.nodes if n.name not in drop]
        return g

    @staticmethod
    def _takes(n: Node, y: str, g: Graph) -> bool:
        return (n.op in ("Conv", "FusedConv") and n.inputs[0] == y and y not in n.inputs[1:]
                and not reads_nhwc(n) and n.attrs.get("group", 1) == 1 and len(g.tensors[y].shape) == 4
                and g.const(n.inputs[1]) is not None)


@dataclass(frozen=True)
class ConvWritesNHWC(Pass):
    name: ClassVar[str] = "conv-writes-nhwc"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        while self._fold_one(g):
            pass
        return g

    def _fold_one(self, g: Graph) -> bool:
        producers, consumers, outputs = g.producers(), g.consumers(), set(g.outputs)
        for t in g.nodes:
            if t.op != "Transpose" or list(t.attrs.get("perm", ())) != _TO_NHWC:
                continue
            chain: list[Node] = []  # from the Transpose back to the conv
            v = t.inputs[0]
            while True:
                p = producers.get(v)
                if v in outputs or len(consumers.get(v, [])) != 1 or p is None:
                    p = None
                    break
                if self._writes(p, g):
                    break
                if not self._commutes(p, g):
                    p = None
                    break
                chain.append(p)
                v = p.inputs[0]
            if p is None:
                continue
            self._fold(g, t, p, chain[::-1])
            return True
        return False

    @staticmethod
    def _fold(g: Graph, t: Node, conv: Node, chain: list[Node]) -> None:
        nodes = [conv, *chain]
        for k, n in enumerate(nodes):
            old = g.tensors.pop(n.outputs[0])
            # renamed: the value is not the ONNX tensor of that name (aotc compare matches taps by name)
            name = _fresh(g, f"{old.name}_nhwc")
            g.tensors[name] = replace(old, name=name, shape=tuple(old.shape[i] for i in _TO_NHWC))
            n.outputs[0] = name
            if k + 1 < len(nodes):
                nodes[k + 1].inputs[0] = name
            if n.op == "Slice":  # its per-dim starts and steps, in the NHWC value's dim order
                n.attrs = dict(n.attrs, **{key: [n.attrs[key][i] for i in _TO_NHWC] for key in ("starts", "steps")})
        last = ([conv, *chain])[-1]
        g.tensors.pop(last.outputs[0], None)
        last.outputs[0] = t.outputs[0]
        conv.attrs = dict(conv.attrs, **{OUT_NHWC_ATTR: 1})
        conv.origin = conv.sources() + t.sources()
        g.nodes = [n for n in g.nodes if n is not t]

    @staticmethod
    def _writes(n: Node, g: Graph) -> bool:
        y = g.tensors[n.outputs[0]]
        if len(y.shape) != 4 or y.dtype != "float32" or writes_nhwc(n) or len(n.outputs) != 1:
            return False
        if n.op == "ConvTranspose":
            return True
        return (n.op in ("Conv", "FusedConv") and n.attrs.get("group", 1) == 1 and g.const(n.inputs[1]) is not None
                and not (n.op == "FusedConv" and len(n.inputs) > 3 and n.inputs[3]))

    @staticmethod
    def _commutes(n: Node, g: Graph) -> bool:
        if len(n.outputs) != 1 or len(g.tensors[n.outputs[0]].shape) != 4:
            return False
        if n.op in _UNARY:
            return all(not i or (g.const(i) is not None and g.tensors[i].size == 1) for i in n.inputs[1:])
        return n.op == "Slice" and len(n.inputs) == 1 and all(len(n.attrs.get(k, ())) == 4 for k in ("starts", "steps"))


def _fresh(g: Graph, name: str) -> str:
    base, k = name, 1
    while name in g.tensors:
        name, k = f"{base}_{k}", k + 1
    return name
