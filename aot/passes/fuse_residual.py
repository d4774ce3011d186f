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
from aot.ir import tflite_ops as tfl
from aot.passes.base import Pass

# conv op -> (add op, fused op, indices of the ADD's two data inputs)
_PAIRS = {"QLinearConv": ("QLinearAdd", "QLinearConvAdd", (0, 3)), tfl.CONV_2D: (tfl.ADD, tfl.CONV_2D_ADD, (0, 1))}


@dataclass(frozen=True)
class FuseResidualAdd(Pass):
    name: ClassVar[str] = "fuse-residual-add"

    def run(self, graph: Graph) -> Graph:
        fusions = {conv.name: (conv, add, k) for add, conv, k, why in decisions(graph) if not why}
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


def decisions(graph: Graph) -> list[tuple[Node, Node | None, int, str]]:
    """Each ADD of the kinds above: (add, the conv fused into it or the last one considered (None:
    no operand is such a conv), which ADD operand the conv computes, why it is not fused ('' where it is))."""
    consumers = graph.consumers()
    producers = graph.producers()
    position = {n.name: i for i, n in enumerate(graph.nodes)}
    readers: dict[str, list[int]] = {}
    for i, n in enumerate(graph.nodes):
        for t in n.inputs:
            if t:
                readers.setdefault(t, []).append(i)
    outputs = set(graph.outputs)
    taken: set[str] = set()
    out = []
    for add in graph.nodes:
        data = _data_inputs(add)
        if not data:
            continue
        picked, refused = None, []
        for k, t in enumerate(data):
            conv = producers.get(t)
            if conv is None or conv.op not in _PAIRS or _PAIRS[conv.op][0] != add.op or conv.name in taken:
                continue
            reason = _why_not(graph, conv, add, k, consumers, producers, position, readers, outputs)
            if reason:
                refused.append((conv, k, reason))
            elif picked is None or position[conv.name] > position[picked[0].name]:
                picked = (conv, k)
        if picked is not None:
            taken.add(picked[0].name)
            out.append((add, picked[0], picked[1], ""))
        elif refused:  # the reason of a conv the ADD alone reads, if any: the others were never candidates
            out.append(min(((add, c, k, r) for c, k, r in refused), key=lambda d: d[3] == _SHARED))
        else:
            out.append((add, None, 0, "no operand is computed by a conv it could take"))
    return out


def explain_lines(graph: Graph) -> list[str]:
    """For `aotc partition --show --explain`: which residual ADDs the host code fuses into their conv."""
    lines = []
    for add, conv, k, why in decisions(graph):
        if why:
            lines.append(f"  {add.name} ({add.op}): not fused: {why}")
        else:
            res = _data_inputs(add)[1 - k]
            lines.append(f"  {add.name} ({add.op}) into {conv.name} ({conv.op}): one {_PAIRS[conv.op][1]}, the sum "
                         f"written over '{res}' where the plan can (it dies there)")
    return ["residual ADDs fused into their conv (fuse-residual-add):", *lines] if lines else []


_SHARED = "the conv's output is read by more than the ADD (or is a graph output)"


def _data_inputs(add: Node) -> list[str]:
    idx = next((v[2] for v in _PAIRS.values() if v[0] == add.op), None)
    if idx is None or len(add.inputs) <= max(idx):
        return []
    return [add.inputs[i] for i in idx]


def _why_not(g: Graph, conv: Node, add: Node, k: int, consumers: dict, producers: dict, position: dict,
             readers: dict, outputs: set) -> str:
    """Why conv (ADD operand k) and add may not become one node writing over the other operand ('': they may)."""
    y = conv.outputs[0]
    res = _data_inputs(add)[1 - k]
    if res == y:
        return "both operands are the conv's output"
    if y in outputs or len(consumers.get(y, [])) != 1:
        return _SHARED
    if res in outputs:
        return f"the residual '{res}' is a graph output"
    t_y, t_r, t_out = g.tensors[y], g.tensors[res], g.tensors[add.outputs[0]]
    if t_r.data is not None:
        return "the residual is a constant"
    if not (t_y.shape == t_r.shape == t_out.shape and t_y.dtype == t_r.dtype == t_out.dtype):
        return "the ADD broadcasts or changes type"
    if t_y.dtype not in ("int8", "uint8") or g.tensors[conv.inputs[0]].dtype != t_y.dtype or (
            conv.op == tfl.CONV_2D and t_y.dtype != "int8"):
        return f"{t_y.dtype} activations (the fused kernels take 8-bit ones)"
    if conv.op == "QLinearConv" and (conv.attrs.get("group", 1) != 1 or len(conv.attrs["kernel_shape"]) != 2):
        return "a grouped or non-2-D conv"
    quant = [add.inputs[i] if i < len(add.inputs) else "" for i in (1, 2, 4, 5, 6, 7)] if add.op == "QLinearAdd" else []
    if any(not t or g.tensors[t].size != 1 or g.tensors[t].data is None for t in quant):
        return "the ADD's scales or zero points are not single constants"
    at = position[conv.name]
    r_prod = producers.get(res)
    if r_prod is not None and position[r_prod.name] >= at:
        return "the residual is computed after the conv"
    if res in conv.inputs:
        return "the conv reads the residual itself"
    if not all(i < at or i == position[add.name] for i in readers.get(res, [])):
        return "the residual is read after the conv by another node: it does not die at the ADD"
    return ""


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
