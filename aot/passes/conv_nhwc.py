"""A Transpose from NHWC to NCHW read only by convs becomes those convs reading NHWC.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node
from aot.passes.base import Pass

NHWC_ATTR = "aotc_in_nhwc"


def reads_nhwc(node: Node) -> bool:
    """Whether this conv node reads its input X channels last (set by ConvReadsNHWC)."""
    return bool(node.attrs.get(NHWC_ATTR, 0))


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
