"""Conv/Gemm -> [Add residual] -> [Relu | Clip | LeakyRelu] becomes one FusedConv / FusedGemm node.

The host kernels apply the epilogue as each output tile is written (bias, then the
residual, then the activation), so the Add and the activation cost no pass over
memory and their outputs need no buffers. The fused node follows onnxruntime's
com.microsoft FusedConv: inputs (X, W, B or '', Z), Z the residual (optional), and
attributes `activation` ('Relu', 'Clip', 'LeakyRelu' or '') and `activation_params`
(Clip: [min, max]; LeakyRelu: [alpha]). FusedGemm is the same over Gemm's (A, B, C).

Legal when every tensor absorbed is read only by the next node of the chain and is
not a graph output, the residual has exactly the output's shape and dtype (no
broadcasting), and the output is float32. Runs on the host graph after partitioning
(a vendor still sees the plain ops it has patterns for).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node
from aot.passes.base import Pass

_FUSABLE = {"Conv": "FusedConv", "Gemm": "FusedGemm"}


@dataclass(frozen=True)
class FuseEpilogue(Pass):
    name: ClassVar[str] = "fuse-epilogue"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        consumers = g.consumers()
        producers = g.producers()
        position = {n.name: i for i, n in enumerate(g.nodes)}
        outputs = set(g.outputs)
        absorbed: set[str] = set()
        replace: dict[str, Node] = {}  # name of the node whose place the fused node takes -> fused node

        def sole_consumer(tensor: str) -> Node | None:
            users = consumers.get(tensor, [])
            if tensor in outputs or len(users) != 1 or users[0].name in absorbed:
                return None
            return users[0]

        for node in g.nodes:
            if node.op not in _FUSABLE or node.name in absorbed:
                continue
            out = node.outputs[0]
            t = g.tensors[out]
            if t.dtype != "float32" or (node.op == "Conv" and len(t.shape) < 3):
                continue
            chain: list[Node] = []
            res = ""
            cur = out
            nxt = sole_consumer(cur)
            if nxt is not None and nxt.op == "Add" and len(nxt.inputs) == 2:
                other = nxt.inputs[1] if nxt.inputs[0] == cur else nxt.inputs[0]
                ot = g.tensors[other]
                if other != cur and ot.shape == t.shape and ot.dtype == t.dtype:
                    chain.append(nxt)
                    res, cur = other, nxt.outputs[0]
                    nxt = sole_consumer(cur)
            act, params = _activation(nxt, g)
            if act:
                chain.append(nxt)
                cur = nxt.outputs[0]
            if not chain:
                continue
            inputs = list(node.inputs) + [""] * (3 - len(node.inputs))
            if res:
                inputs.append(res)
            fused = Node(
                name=node.name, op=_FUSABLE[node.op], inputs=inputs, outputs=[cur],
                attrs=dict(node.attrs, activation=act, activation_params=params),
                origin=node.sources() + tuple(s for c in chain for s in c.sources()),
            )
            # The fused node runs where the conv ran, unless the residual is computed later:
            # then where the Add ran (all of its inputs exist by then).
            res_prod = producers.get(res) if res else None
            at = chain[0].name if res_prod is not None and position[res_prod.name] > position[node.name] \
                else node.name
            replace[at] = fused
            absorbed.update(c.name for c in chain)
            absorbed.add(node.name)
            for tname in [out, *(c.outputs[0] for c in chain[:-1])]:
                g.tensors.pop(tname, None)
        g.nodes = [replace[n.name] if n.name in replace else n for n in g.nodes
                   if n.name in replace or n.name not in absorbed]
        return g


def _activation(node: Node | None, g: Graph) -> tuple[str, list[float]]:
    if node is None or g.tensors[node.outputs[0]].dtype != "float32":
        return "", []
    if node.op == "Relu":
        return "Relu", []
    if node.op == "Clip" and "min" in node.attrs and "max" in node.attrs:
        return "Clip", [float(node.attrs["min"]), float(node.attrs["max"])]
    if node.op == "LeakyRelu":
        return "LeakyRelu", [float(node.attrs.get("alpha", 0.01))]
    return "", []
