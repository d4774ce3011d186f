"""A LayerNormalization over the channels of an NCHW tensor, in place of the Transposes around it.

timm's LayerNorm2d (ConvNeXt, and the norms of other channels-first torch models) is exported as

    t = Transpose(x, perm=[0, 2, 3, 1])     NCHW -> NHWC
    u = LayerNormalization(t, scale, bias, axis=-1)
    y = Transpose(u, perm=[0, 3, 1, 2])     NHWC -> NCHW

Each Transpose is a pass over the tensor, and the normalisation runs over rows of C contiguous floats
(40 in ConvNeXt-atto's first stage), too short for wide vectors. The three become one LayerNormalization
of x itself with attribute aotc_inner = H * W (schemas.NORM_INNER_ATTR): x as [N, C, H * W], each
position's C values, H * W apart, normalised together (aotc_layer_norm_inner_f32: vectors along the
positions). ConvNeXt-atto's first-stage LayerNorm2d took 61 + 84 us (Transpose, LayerNormalization) and
the 1 x 1 conv after it read NHWC (ConvReadsNHWC) at 320 us where the same conv on NCHW takes 171 us.

Legal when both Transposes are 4-D float32 with those perms, the LayerNormalization normalises the last
axis only in float32 statistics and writes only Y, its scale and bias (if any) are constants that hold
one value per channel (broadcast from fewer), and t and u are read only inside the chain and are not
graph outputs. Runs on the host graph after FuseNorm (which makes the LayerNormalization of a decomposed
chain) and before ConvReadsNHWC (which would otherwise take the second Transpose into the conv).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.ir.schemas import NORM_INNER_ATTR
from aot.passes.base import Pass, fresh_tensor_name

_TO_NHWC = [0, 2, 3, 1]
_TO_NCHW = [0, 3, 1, 2]


@dataclass(frozen=True)
class ChannelLayerNorm(Pass):
    name: ClassVar[str] = "channel-layer-norm"

    def run(self, graph: Graph) -> Graph:
        if not any(n.op == "LayerNormalization" for n in graph.nodes):
            return graph
        g = graph.copy()
        producers, consumers, outputs = g.producers(), g.consumers(), set(g.outputs)
        drop: set[str] = set()
        for ln in g.nodes:
            match = self._match(ln, g, producers, consumers, outputs)
            if match is None:
                continue
            t1, t2 = match
            c = g.tensors[t1.inputs[0]].shape[1]
            inputs = [t1.inputs[0]]
            for k, what in ((1, "scale"), (2, "bias")):
                if k < len(ln.inputs) and ln.inputs[k]:
                    value = np.broadcast_to(g.const(ln.inputs[k]).reshape(-1), (c,))  # 1 or c values (_match)
                    name = fresh_tensor_name(g, f"{ln.name}__{what}_c")
                    g.tensors[name] = Tensor(name, (c,), "float32", np.ascontiguousarray(value, dtype=np.float32))
                    inputs.append(name)
                else:
                    inputs.append("")
            n, _, h, w = g.tensors[t1.inputs[0]].shape
            for t in (t1.outputs[0], ln.outputs[0]):
                g.tensors.pop(t, None)
            ln.inputs = inputs
            ln.outputs = [t2.outputs[0]]
            ln.attrs = {**ln.attrs, "axis": 1, "rows": n, "n": c, NORM_INNER_ATTR: h * w}
            ln.origin = t1.sources() + ln.sources() + t2.sources()
            drop |= {t1.name, t2.name}
        if not drop:
            return graph
        g.nodes = [n for n in g.nodes if n.name not in drop]
        return g

    @staticmethod
    def _match(ln: Node, g: Graph, producers: dict, consumers: dict, outputs: set) -> tuple[Node, Node] | None:
        """(the Transpose before, the one after) where the chain is legal, else None."""
        if ln.op != "LayerNormalization" or ln.attrs.get(NORM_INNER_ATTR, 1) != 1:
            return None
        if ln.attrs.get("stash") != "float32" or any(o for o in ln.outputs[1:]):
            return None
        t = ln.inputs[0]
        t1 = producers.get(t)
        if t1 is None or t1.op != "Transpose" or list(t1.attrs.get("perm", ())) != _TO_NHWC:
            return None
        x = g.tensors[t1.inputs[0]]
        if x.dtype != "float32" or len(x.shape) != 4 or ln.attrs.get("axis") != 3:
            return None
        u = ln.outputs[0]
        readers = consumers.get(u, [])
        if len(readers) != 1 or readers[0].op != "Transpose" or list(readers[0].attrs.get("perm", ())) != _TO_NCHW:
            return None
        t2 = readers[0]
        if t in outputs or u in outputs or [n.name for n in consumers.get(t, [])] != [ln.name]:
            return None
        c = x.shape[1]
        for k in (1, 2):
            if k < len(ln.inputs) and ln.inputs[k]:
                v = g.const(ln.inputs[k])
                if v is None or g.tensors[ln.inputs[k]].dtype != "float32":
                    return None
                if v.size not in (1, c):
                    return None
        return t1, t2
