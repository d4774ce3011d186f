"""Explicit pads folded into the window op that reads them, so no padded copy is ever made (issue 53):

    Conv(Pad(x, 0))                     Conv(x), the Pad's pads added to its own (float)
    QLinearConv(Pad(x, x_zero_point))   QLinearConv(x), likewise (a tap in the padding reads x_zero_point,
                                        which adds 0 to the sum of (x - x_zero_point) * w)
    TflConv2D / TflDepthwiseConv2D      the same with the Pad's top and left added to the op's; its bottom
      (Pad(x, x_zero))                  and right follow from the output size, which is kept. TFLite's
                                        kernels skip taps outside the input, the same as reading x_zero
    AveragePool(Pad(x, 0))              AveragePool(x) counting the pads (count_include_pad = 1), when
                                        the pool counted them already or had no pads of its own (float)
    MaxPool / TflMaxPool2D (Pad(x, v))  when v is at most every value x can take (-inf; 0 after a Relu;
                                        the lowest integer, or a Tfl op's y_min, on integers) and every
                                        window keeps an element of x: the padding never wins a max

A Pad qualifies in constant mode with a constant value, no negative pads and none on the batch or
channel axes; it goes when every reader takes it (and it is not a graph output). A Transpose between
the Pad and its readers (the TFLite float import's NHWC -> NCHW of a padded input) then reads the
unpadded tensor, the pads permuted. TFLite's converter
folds a pad into SAME itself only when it is SAME's; PyTorch's pads of 1 before a stride-2 conv are
not, and stay PAD ops before a VALID conv: in MobileNetV2 224 the first one copies 112x112x96 into
114x114x96, both alive at once, the peak of the whole plan. TFLite's AVERAGE_POOL_2D never counts its
padding, so a Pad before it stays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node
from aot.ir import tflite_ops as tfl
from aot.passes.base import Pass

_TFL_CONVS = (tfl.CONV_2D, tfl.DEPTHWISE_CONV_2D)
_READERS = (*_TFL_CONVS, tfl.MAX_POOL_2D, "Conv", "QLinearConv", "AveragePool", "MaxPool")


@dataclass(frozen=True)
class _Padded:
    """What a reader of the padded tensor needs to know: the pads in its layout ([begin..., end...] over
    every axis), the pad value, the unpadded tensor's shape and dtype, and the least value it can hold."""

    pads: list[int]
    value: float
    shape: tuple[int, ...]
    dtype: str
    low: float


@dataclass(frozen=True)
class FoldPad(Pass):
    name: ClassVar[str] = "fold-pad"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        producers = g.producers()
        consumers = g.consumers()
        outputs = set(g.outputs)
        drop: set[str] = set()
        for pad in g.nodes:
            if pad.op != "Pad" or pad.outputs[0] in outputs or pad.attrs.get("mode") != "constant" \
                    or len(pad.inputs) != 1:
                continue
            x = g.tensors[pad.inputs[0]]
            padded = _Padded([int(v) for v in pad.attrs["pads"]], pad.attrs.get("value", 0), x.shape, x.dtype,
                             _lower_bound(g, producers, pad.inputs[0]))
            readers = consumers.get(pad.outputs[0], [])
            moved = None  # a Transpose between the Pad and its readers (the TFLite float import's to NCHW)
            if len(readers) == 1 and readers[0].op == "Transpose" and readers[0].outputs[0] not in outputs:
                moved, perm = readers[0], readers[0].attrs["perm"]
                rank = len(perm)
                padded = replace(padded, pads=[padded.pads[k] for k in perm] + [padded.pads[rank + k] for k in perm],
                                 shape=tuple(x.shape[k] for k in perm))
                readers = consumers.get(moved.outputs[0], [])
            folded = [_folded_attrs(g, padded, r) for r in readers]
            if not readers or any(a is None for a in folded):
                continue
            for r, attrs in zip(readers, folded, strict=True):
                r.attrs = attrs
                r.origin = tuple(dict.fromkeys(pad.sources() + r.sources()))
            if moved is None:
                for r in readers:
                    r.inputs = [pad.inputs[0], *r.inputs[1:]]
            else:  # the Transpose reads the unpadded tensor, its output loses the pads
                moved.inputs = [pad.inputs[0]]
                t = g.tensors[moved.outputs[0]]
                g.tensors[t.name] = replace(t, shape=padded.shape)
            drop.add(pad.name)
            g.tensors.pop(pad.outputs[0], None)
        g.nodes = [n for n in g.nodes if n.name not in drop]
        return g


def _folded_attrs(g: Graph, padded: _Padded, reader: Node) -> dict | None:
    """The reader's attributes with the pads folded in, or None where that would not be exact."""
    if reader.op not in _READERS:
        return None
    rank = len(padded.shape)
    p, value = padded.pads, padded.value
    spatial = [1, 2] if reader.op.startswith("Tfl") else list(range(2, rank))
    if (rank != 4 and reader.op.startswith("Tfl")) or any(v < 0 for v in p) \
            or any(p[k] or p[k + rank] for k in range(rank) if k not in spatial):
        return None
    begin, end = [p[k] for k in spatial], [p[k + rank] for k in spatial]
    x, y = padded.shape, g.tensors[reader.outputs[0]].shape
    a = reader.attrs
    if reader.op.startswith("Tfl"):  # pads [top, left]; the bottom and right follow from the output size
        tfl_pads = [a["pads"][0] + begin[0], a["pads"][1] + begin[1]]
        if reader.op in _TFL_CONVS:
            return dict(a, pads=tfl_pads) if value == a["x_zero"] else None
        if value > padded.low or not _windows_keep_input(x[1:3], y[1:3], a["kernel"], a["strides"], [1, 1],
                                                          tfl_pads):
            return None
        return dict(a, pads=tfl_pads)
    nd = len(begin)
    old = [int(v) for v in a.get("pads", [0] * 2 * nd)]
    merged = [old[k] + begin[k] for k in range(nd)] + [old[nd + k] + end[k] for k in range(nd)]
    if reader.op == "Conv":
        return dict(a, pads=merged) if padded.dtype == "float32" and float(value) == 0.0 else None
    if reader.op == "QLinearConv":
        zero = g.const(reader.inputs[2]) if len(reader.inputs) > 2 and reader.inputs[2] else np.zeros(1)
        if zero is None or zero.size != 1 or value != int(zero.reshape(-1)[0]) \
                or padded.dtype not in ("int8", "uint8"):
            return None
        return dict(a, pads=merged)
    if reader.op == "AveragePool":
        if padded.dtype != "float32" or float(value) != 0.0 or a.get("ceil_mode", 0) or (
                any(old) and not a.get("count_include_pad", 0)):
            return None
        return dict(a, pads=merged, count_include_pad=1)
    # MaxPool: the padding must never be the max, and no window may lie in it alone
    if (len(reader.outputs) > 1 and reader.outputs[1]) or value > padded.low:
        return None
    if not _windows_keep_input(x[2:], y[2:], a["kernel_shape"], a["strides"], a.get("dilations", [1] * nd),
                               merged[:nd]):
        return None
    return dict(a, pads=merged)


def _windows_keep_input(x: tuple[int, ...], y: tuple[int, ...], kernel: list[int], strides: list[int],
                        dilations: list[int], begin: list[int]) -> bool:
    """Every window (output o of an axis reads o * stride - begin + j * dilation, j < kernel) has a tap
    inside the input."""
    return all(any(0 <= o * s - b + j * d < n for j in range(k))
               for n, m, k, s, d, b in zip(x, y, kernel, strides, dilations, begin, strict=True) for o in range(m))


def _lower_bound(g: Graph, producers: dict[str, Node], tensor: str) -> float:
    """The least value `tensor` can hold, as far as its producer says (-inf when unknown)."""
    dtype = g.tensors[tensor].dtype
    src = producers.get(tensor)
    if dtype in ("int8", "int16", "uint8"):
        low = int(np.iinfo(dtype).min)
        if src is not None and src.op.startswith("Tfl") and "y_min" in src.attrs:
            low = max(low, int(src.attrs["y_min"]))
        return low
    if src is not None and src.op == "Relu":
        return 0.0
    return -math.inf
