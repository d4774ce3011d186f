"""BatchNormalization(Conv(x)) -> Conv(x) with scaled weights and shifted bias; same for Gemm.

    s  = gamma / sqrt(var + eps)
    W' = W * s   (per output channel)      B' = (B - mean) * s + beta

Legal when the Conv/Gemm output feeds only the BatchNormalization, all the
parameters are constants, and (Gemm) the channel axis is Gemm's N axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.passes.base import Pass


@dataclass(frozen=True)
class FoldBatchNorm(Pass):
    name: ClassVar[str] = "fold-batchnorm"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        producers = g.producers()
        consumers = g.consumers()
        drop: set[str] = set()
        for bn in g.nodes:
            if bn.op != "BatchNormalization":
                continue
            prod = producers.get(bn.inputs[0])
            if prod is None or prod.op not in ("Conv", "Gemm") or prod.outputs[0] in g.outputs:
                continue
            if len(consumers.get(prod.outputs[0], [])) != 1:
                continue
            params = [g.const(i) for i in bn.inputs[1:5]]
            if any(p is None for p in params) or g.const(prod.inputs[1]) is None:
                continue
            gamma, beta, mean, var = (p.astype(np.float64) for p in params)
            scale = gamma / np.sqrt(var + bn.attrs["epsilon"])
            shift = beta - mean * scale
            folded = _fold_conv(g, prod, scale, shift) if prod.op == "Conv" else _fold_gemm(g, prod, scale, shift)
            if not folded:
                continue
            prod.outputs = [bn.outputs[0]]
            prod.origin = prod.sources() + bn.sources()
            drop.add(bn.name)
        g.nodes = [n for n in g.nodes if n.name not in drop]
        return g


def _new_const(g: Graph, base: str, value: np.ndarray) -> str:
    name, k = f"{base}__bn", 1
    while name in g.tensors:
        name, k = f"{base}__bn{k}", k + 1
    value = np.asarray(value.astype(np.float32, copy=False), order="C")
    g.tensors[name] = Tensor(name, tuple(value.shape), "float32", value)
    return name


def _fold_conv(g: Graph, conv: Node, scale: np.ndarray, shift: np.ndarray) -> bool:
    w = g.const(conv.inputs[1])
    if w.dtype != np.float32:
        return False
    b = g.const(conv.inputs[2]) if len(conv.inputs) > 2 and conv.inputs[2] else np.zeros(w.shape[0])
    if b is None:
        return False
    # W * s in float64, rounded to float32, a few output channels at a time: the same values as the
    # whole product, without a float64 copy of the largest weight (19 MB in ResNet-18) at the peak
    w2 = np.empty(w.shape, np.float32)
    s = scale.reshape((-1,) + (1,) * (w.ndim - 1))
    step = max(1, (1 << 18) // max(1, w[0].size))
    for c0 in range(0, w.shape[0], step):
        w2[c0:c0 + step] = w[c0:c0 + step].astype(np.float64) * s[c0:c0 + step]
    b2 = b.astype(np.float64) * scale + shift
    conv.inputs = [conv.inputs[0], _new_const(g, conv.inputs[1], w2), _new_const(g, conv.name + "_bias", b2)]
    return True


def _fold_gemm(g: Graph, gemm: Node, scale: np.ndarray, shift: np.ndarray) -> bool:
    b = g.const(gemm.inputs[1])
    n = g.tensors[gemm.outputs[0]].shape[1]
    if b.dtype != np.float32 or scale.shape != (n,):
        return False
    b2 = b.astype(np.float64) * (scale[None, :] if not gemm.attrs["transB"] else scale[:, None])
    c_name = gemm.inputs[2] if len(gemm.inputs) > 2 else ""
    c = g.const(c_name) if c_name else np.zeros(())
    if c is None:
        return False
    c2 = (gemm.attrs["beta"] * c.astype(np.float64)) * scale + shift  # broadcasts over [.., N]
    gemm.inputs = [gemm.inputs[0], _new_const(g, gemm.inputs[1], b2), _new_const(g, gemm.name + "_bias", c2)]
    gemm.attrs = dict(gemm.attrs, beta=1.0)
    return True
