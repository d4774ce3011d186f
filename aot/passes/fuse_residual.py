"""An int8 conv whose only reader is a residual ADD becomes one node that writes the sum:

    QLinearConv -> QLinearAdd(., r)   =>  QLinearConvAdd   (ONNX route: QOperator and lowered QDQ)
    TflConv2D   -> TflAdd(., r)       =>  TflConv2DAdd     (TFLite route)

The fused kernels compute each conv output exactly as the conv does (its own requantisation to its
own int8 scale and clamp), then the ADD's integer math with the residual element r exactly as the
ADD kernel does, and store the sum. Each residual element is read just before the sum is written
over it, so the output may take the residual's buffer (HostOp.inplace: the planner joins them when
nothing reads r later): at a ResNet block's end two activations are live instead of three, which is
the arena's peak of an int8 ResNet on a microcontroller (issue 27: ResNet-8 at 0.9x TFLM's arena).

Legal (and done) when: the conv is a plain one (group 1, 2-D, 8-bit), its output is read by the ADD
alone and is not a graph output; the ADD has no broadcasting (r has the output's shape and type);
r is computed before the conv (the fused node runs where the conv ran) and nothing after the conv
but the ADD reads it, and it is no graph output, so that r dies at the fused node. Where both ADD
operands are such convs, the one that runs later is fused (the other's output is then r). Runs on
the host graph after partitioning, like FuseEpilogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node
from aot.passes.base import Pass

# conv op -> (add op, fused op, indices of the ADD's two data inputs)
_PAIRS = {"QLinearConv": ("QLinearAdd", "QLinearConvAdd", (0, 3)), "TflConv2D": ("TflAdd", "TflConv2DAdd", (0, 1))}


@dataclass(frozen=True)
class FuseResidualAdd(Pass):
    name: ClassVar[str] = "fuse-residual-add"

    def run(self, graph: Graph) -> Graph:
        consumers = graph.consumers()
        producers = graph.producers()
        position = {n.name: i for i, n in enumerate(graph.nodes)}
        readers: dict[str, list[int]] = {}
        for i, n in enumerate(graph.nodes):
            for t in n.inputs:
                if t:
                    readers.setdefault(t, []).append(i)
        outputs = set(graph.outputs)
        fusions: dict[str, tuple[Node, Node, int]] = {}  # conv name -> (conv, add, which ADD operand it is)
        for add in graph.nodes:
            picked = None
            for k, t in enumerate(_data_inputs(add)):
                conv = producers.get(t)
                if conv is None or conv.op not in _PAIRS or _PAIRS[conv.op][0] != add.op or conv.name in fusions:
                    continue
                if _fusable(graph, conv, add, k, consumers, producers, position, readers, outputs) and (
                        picked is None or position[conv.name] > position[picked[0].name]):
                    picked = (conv, k)
            if picked is not None:
                fusions[picked[0].name] = (picked[0], add, picked[1])
        if not fusions:
            return graph
        g = graph.copy()
        absorbed = {add.name for _, add, _ in fusions.values()}
        nodes = []
        for n in g.nodes:
            if n.name in absorbed:
                continue
            if n.name in fusions:
                conv, add, k = fusions[n.name]
                nodes.append(_fused(conv, add, k))
                g.tensors.pop(conv.outputs[0], None)
            else:
                nodes.append(n)
        g.nodes = nodes
        return g


def _data_inputs(add: Node) -> list[str]:
    idx = next((v[2] for v in _PAIRS.values() if v[0] == add.op), None)
    if idx is None or len(add.inputs) <= max(idx):
        return []
    return [add.inputs[i] for i in idx]


def _fusable(g: Graph, conv: Node, add: Node, k: int, consumers: dict, producers: dict, position: dict,
             readers: dict, outputs: set) -> bool:
    """Whether conv (ADD operand k) and add may become one node writing over the other operand."""
    y = conv.outputs[0]
    data = _data_inputs(add)
    res = data[1 - k]
    if res == y or y in outputs or len(consumers.get(y, [])) != 1 or res in outputs:
        return False
    t_y, t_r, t_out = g.tensors[y], g.tensors[res], g.tensors[add.outputs[0]]
    if t_r.data is not None or not (t_y.shape == t_r.shape == t_out.shape and t_y.dtype == t_r.dtype == t_out.dtype):
        return False
    if t_y.dtype not in ("int8", "uint8") or (conv.op == "TflConv2D" and t_y.dtype != "int8"):
        return False
    if conv.op == "QLinearConv" and (conv.attrs.get("group", 1) != 1 or len(conv.attrs["kernel_shape"]) != 2
                                     or g.tensors[conv.inputs[0]].dtype != t_y.dtype):
        return False
    if conv.op == "TflConv2D" and g.tensors[conv.inputs[0]].dtype != "int8":
        return False
    at = position[conv.name]
    r_prod = producers.get(res)
    if r_prod is not None and position[r_prod.name] >= at:
        return False  # r is computed after the conv: the fused node could not run in the conv's place
    # r dies at the fused node: nothing after the conv reads it but the ADD (the conv itself does not)
    return all(i < at or i == position[add.name] for i in readers.get(res, [])) and res not in conv.inputs


def _fused(conv: Node, add: Node, k: int) -> Node:
    fused_op = _PAIRS[conv.op][1]
    res = _data_inputs(add)[1 - k]
    if fused_op == "QLinearConvAdd":
        # conv's 9 inputs (the bias '' where omitted), r, then the ADD's scales and zero points
        inputs = [*conv.inputs, *[""] * (9 - len(conv.inputs)), res, *add.inputs[1:3], *add.inputs[4:8]]
        attrs = dict(conv.attrs, conv_is_a=int(k == 0),
                     **{f"add_{q}": add.attrs[q] for q in ("qmin", "qmax") if q in add.attrs})
    else:
        inputs = [*conv.inputs, *[""] * (3 - len(conv.inputs)), res]
        attrs = dict(conv.attrs, add=dict(add.attrs), conv_is_x1=int(k == 0))
    return Node(fused_op, conv.name, inputs, list(add.outputs), attrs, origin=conv.sources() + add.sources())
