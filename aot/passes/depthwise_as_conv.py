"""An int8 DEPTHWISE_CONV_2D of one input channel is a CONV_2D: its depth multiplier m gives m output channels,
each a window of the one input channel with its own weights. Written as the conv ([1, kh, kw, m] weights as
[m, kh, kw, 1]), it takes the conv's paths (on the M4 the DSP im2col and SMLAD over the kh * kw taps) instead of
the depthwise kernels', which have no path for a multiplier above 1 (TFLM's micro_speech: 10 x 8 windows,
m = 8, about 27 instructions a MAC). The same arithmetic, term for term: TFLite's kernels sum the same products
and requantise each output channel with its own multiplier, so the result is bit-exact. Since the depthwise
kernels have a DSP path for multipliers above 1 (tfl_depthwise_s8_mult), the cores with the DSP extension but
not Helium leave this pass out (aot/compiler.py default_pipeline): there the path is faster than the conv's
patches; on the M55 Helium's CONV_2D is the faster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Tensor
from aot.ir import tflite_ops as tfl
from aot.passes.base import Pass


@dataclass(frozen=True)
class DepthwiseAsConv(Pass):
    name: ClassVar[str] = "depthwise-as-conv"

    def run(self, graph: Graph) -> Graph:
        if not any(n.op == tfl.DEPTHWISE_CONV_2D for n in graph.nodes):
            return graph
        g = graph.copy()
        for n in g.nodes:
            if n.op != tfl.DEPTHWISE_CONV_2D or len(n.inputs) < 2:
                continue
            x, w = g.tensors[n.inputs[0]], g.tensors[n.inputs[1]]
            if len(x.shape) != 4 or x.shape[3] != 1 or x.dtype != "int8" or w.data is None or len(w.shape) != 4 \
                    or w.shape[0] != 1:
                continue
            name = f"{n.inputs[1]}__as_conv"
            k = 1
            while name in g.tensors:
                name, k = f"{n.inputs[1]}__as_conv{k}", k + 1
            g.tensors[name] = Tensor(name, (w.shape[3], w.shape[1], w.shape[2], 1), w.dtype,
                                     np.ascontiguousarray(np.asarray(w.data).transpose(3, 1, 2, 0)))
            n.op = tfl.CONV_2D
            n.inputs = [n.inputs[0], name, *n.inputs[2:]]
        return g
