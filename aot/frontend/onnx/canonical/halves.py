"""float16 and bfloat16 computed in float32 (issue 16), rounded after every op as onnxruntime does.

A half tensor keeps its 2-byte type where the user sees it (graph inputs and outputs, uint16_t in C)
and wherever an op's result is stored, so each op's result is rounded to the half type (round to
nearest even) exactly once, as onnxruntime rounds an op's float result into its half output. Every
other op reads and writes float32: each half input is widened by a Cast (exact), each half output is
computed into a float32 temporary and narrowed by a Cast. Constants of a half type are widened at
compile time. Casts themselves convert directly (aotc_cast's F16/BF16 cases), so the kernels of
every op family serve the half types without a variant of their own.
"""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor

HALVES = ("float16", "bfloat16")
# ops that only move bytes of any type keep the half type (no widening round trip)
_MOVERS = {"Identity", "BitCast", "CheckValues", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat",
           "Split", "Slice", "Gather", "Expand", "Tile", "DepthToSpace", "SpaceToDepth", "GatherElements", "GatherND"}


def _wide(graph: Graph, name: str, cache: dict[str, str], before: list[Node], node: Node) -> str:
    """float32 of half tensor `name`: a constant widened now, or a Cast before `node` (one per tensor)."""
    if name in cache:
        return cache[name]
    t = graph.tensors[name]
    wide = f"{name}__as_f32"
    if t.is_const:
        graph.tensors[wide] = Tensor(wide, t.shape, "float32", np.asarray(t.data, np.float32))
    else:
        graph.tensors[wide] = Tensor(wide, t.shape, "float32")
        before.append(Node("Cast", f"{node.name}__widen_{len(cache)}", [name], [wide], {"to": "float32"},
                           node.sources()))
    cache[name] = wide
    return wide


def compute_halves_in_float(graph: Graph) -> None:
    """Rewrite `graph` (in place) so that no op but Cast and the byte movers reads or writes a half type."""
    if not any(t.dtype in HALVES for t in graph.tensors.values()):
        return
    nodes: list[Node] = []
    widened: dict[str, str] = {}
    for node in graph.nodes:
        halves_in = [i for i in node.inputs if i and graph.tensors[i].dtype in HALVES]
        halves_out = [o for o in node.outputs if o and graph.tensors[o].dtype in HALVES]
        if not halves_in and not halves_out or node.op == "Cast" or node.op in _MOVERS:
            nodes.append(node)
            continue
        if node.op in ("Loop", "If"):  # its body was rewritten on its own import: its values cross as they are
            nodes.append(node)
            continue
        if node.op == "Scan":
            raise AotcError(f"{node.op} over {graph.tensors[(halves_in + halves_out)[0]].dtype} values is not "
                            "supported (cast them to float32 around it)", node=node)
        before: list[Node] = []
        node.inputs = [_wide(graph, i, widened, before, node) if i in halves_in else i for i in node.inputs]
        after: list[Node] = []
        outs = []
        for o in node.outputs:
            if o not in halves_out:
                outs.append(o)
                continue
            t = graph.tensors[o]
            wide = f"{o}__unrounded"
            graph.tensors[wide] = Tensor(wide, t.shape, "float32")
            after.append(Node("Cast", f"{node.name}__round_{len(after)}", [wide], [o], {"to": t.dtype},
                              node.sources()))
            outs.append(wide)
        node.outputs = outs
        nodes += [*before, node, *after]
    graph.nodes = nodes  # a later reader widens the rounded half value, never the float32 temporary
