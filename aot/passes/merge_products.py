"""x W + h R (+ b), as tf2onnx writes an LSTM cell (Gemm(x, W, C = MatMul(h, R)), then a bias Add),
becomes one Gemm over [x | h] and the stacked weights [W ; R] with the bias as its C.

One product of the combined depth instead of two costs one call and one pass over the output
instead of two, and the concatenation copies only the (short) rows of x and h; in a recurrent
loop that is once per step (issue 26: the Keras 3 LSTM as a Loop). onnxruntime's LSTM and
aotc's recurrent kernel multiply [x | h] the same way.

Legal when W and R are constants, the MatMul's result (through views) is read only by the Gemm
as its C, holds exactly the Gemm's output, and alpha = beta = 1 with A not transposed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.passes.base import Pass

_VIEWS = ("Squeeze", "Unsqueeze", "Reshape", "Flatten")


@dataclass(frozen=True)
class MergeSummedProducts(Pass):
    name: ClassVar[str] = "merge-summed-products"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        consumers, producers, outputs = g.consumers(), g.producers(), set(g.outputs)

        def sole(t: str) -> bool:
            return t not in outputs and len(consumers.get(t, [])) == 1

        drop: set[str] = set()
        replace: dict[str, list[Node]] = {}
        for n in g.nodes:
            a = n.attrs
            if n.op != "Gemm" or len(n.inputs) < 3 or not n.inputs[2] or n.name in drop:
                continue
            if a["alpha"] != 1.0 or a["beta"] != 1.0 or a["transA"]:
                continue
            x, w, c = n.inputs[:3]
            y = n.outputs[0]
            w_data = g.const(w)
            if w_data is None or g.const(x) is not None or g.tensors[y].dtype != "float32":
                continue
            chain, t = [], c
            while t in producers and producers[t].op in _VIEWS and sole(t):
                chain.append(producers[t])
                t = producers[t].inputs[0]
            p = producers.get(t)
            if p is None or p.op != "MatMul" or not sole(t) or g.tensors[c].size != g.tensors[y].size:
                continue
            h, r = p.inputs
            r_data, xs, hs = g.const(r), g.tensors[x].shape, g.tensors[h].shape
            wt = w_data.T if a["transB"] else w_data
            if r_data is None or r_data.ndim != 2 or len(hs) != 2 or hs[0] != xs[0] or r_data.shape[1] != wt.shape[1]:
                continue
            xh = _fresh(g, f"{n.name}_xh")
            g.tensors[xh] = Tensor(xh, (xs[0], xs[1] + hs[1]), "float32")
            stacked = _fresh(g, f"{n.name}_wr")
            g.tensors[stacked] = Tensor(stacked, (wt.shape[0] + r_data.shape[0], wt.shape[1]), "float32",
                                        np.ascontiguousarray(np.concatenate([wt, r_data], 0), dtype=np.float32))
            inputs, out = [xh, stacked], y
            users = consumers.get(y, [])
            if sole(y) and users[0].op == "Add":  # the bias: the Gemm's C
                add = users[0]
                bias = add.inputs[1] if add.inputs[0] == y else add.inputs[0]
                bt = g.tensors[bias]
                if (bias != y and bt.is_const and bt.dtype == "float32" and len(bt.shape) <= 2
                        and g.tensors[add.outputs[0]].shape == g.tensors[y].shape):
                    inputs, out = [xh, stacked, bias], add.outputs[0]
                    drop.add(add.name)
            origin = (*n.sources(), *p.sources(), *(v.name for v in chain))
            replace[n.name] = [Node("Concat", _fresh_node(g, f"{n.name}_concat"), [x, h], [xh], {"axis": 1}),
                               Node("Gemm", n.name, inputs, [out], {"alpha": 1.0, "beta": 1.0, "transA": 0,
                                                                    "transB": 0}, origin)]
            drop |= {p.name, *(v.name for v in chain)}
        if not replace:
            return graph
        g.nodes = [m for n in g.nodes if n.name not in drop for m in replace.get(n.name, [n])]
        return g


def _fresh(g: Graph, base: str) -> str:
    name, k = base, 1
    while name in g.tensors:
        name, k = f"{base}_{k}", k + 1
    return name


def _fresh_node(g: Graph, base: str) -> str:
    names = {n.name for n in g.nodes}
    name, k = base, 1
    while name in names:
        name, k = f"{base}_{k}", k + 1
    return name
