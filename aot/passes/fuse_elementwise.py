"""Trees of float32 elementwise ops on one shape, as one loop (host pipeline, after FuseEpilogue).

A recurrent cell as tf2onnx writes it is a dozen such ops on 64 numbers each step (the GRU's
gates: Add, Sigmoid, Mul, Add, Tanh, Sub, Mul, Mul, Add): each a kernel call and a pass through
memory, more time than the arithmetic. Fused, the tree is one loop over the elements, each op a C
expression on registers, written by the code generator (aot/kernels/fused.py):

    for (size_t i = 0; i < 64u; ++i) {
        const float v0 = a[i] + b[i];
        const float v1 = aotc_sigmoid_poly(v0);
        y[i] = v1 * c[i];
    }

Each expression is the one its kernel computes (runtime_c/kernels/elementwise/elementwise.c; the bundle is
ISO C, so nothing is contracted across them): the fused tree gives the same bits.

A tree: each fused value has one reader, inside the tree, and is not a graph output; the tree
runs where its root ran (all its inputs are computed by then). Operands are tensors of the
root's shape, or constants of one element (written into the loop). All in one control scope.

Pow by a constant exponent that is an integer or half an integer (aot/ir/schemas.py, pow_by_multiplies)
is a member too, computed by multiplies, a square root and a division (aot/kernels/fused.py): the
tanh form of GELU as tf2onnx writes it reads Pow(x, 3.0), and aotc_pow_f32's powf per element took
a third of a Keras encoder's time (issue 64). Such a Pow alone, outside any tree, is a loop of its
own for that reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aot.ir import Graph, Node
from aot.ir.schemas import FUSED_BINARY as BINARY
from aot.ir.schemas import FUSED_ELEMENTWISE as FUSED
from aot.ir.schemas import FUSED_POW, pow_by_multiplies
from aot.ir.schemas import FUSED_UNARY as UNARY
from aot.passes.base import Pass


@dataclass(frozen=True)
class FuseElementwise(Pass):
    name: ClassVar[str] = "fuse-elementwise"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        consumers = g.consumers()
        producer = g.producers()
        outputs = set(g.outputs)
        scope = g.scopes()
        tree_of: dict[str, list[Node]] = {}  # root node name -> the tree's nodes, in program order
        member: set[str] = set()
        for n in g.nodes:
            if not _fusable(n, g):
                continue
            shape = g.tensors[n.outputs[0]].shape
            nodes = [n]
            for i in dict.fromkeys(n.inputs):
                p = producer.get(i)
                if p is None or p.name not in tree_of or scope[p.name] != scope[n.name] or i in outputs \
                        or len(consumers.get(i, [])) != 1 or g.tensors[i].shape != shape:
                    continue
                nodes = tree_of.pop(p.name) + nodes
            tree_of[n.name] = nodes
        replace: dict[str, Node] = {}
        for root, nodes in tree_of.items():
            if len(nodes) < 2 and nodes[0].op != FUSED_POW:
                continue
            member.update(m.name for m in nodes)
            replace[root] = _fused(nodes, g)
        g.nodes = [replace.get(n.name, n) for n in g.nodes if n.name not in member or n.name in replace]
        for root, nodes in tree_of.items():
            if root in replace:
                for m in nodes[:-1]:
                    g.tensors.pop(m.outputs[0], None)
        return g


def _fusable(n: Node, g: Graph) -> bool:
    if n.op not in UNARY and n.op not in BINARY and n.op != FUSED_POW or len(n.outputs) != 1 or n.attrs:
        return False
    out = g.tensors[n.outputs[0]]
    if out.dtype != "float32" or len(n.inputs) != (1 if n.op in UNARY else 2):
        return False
    if n.op == FUSED_POW and not _constant_exponent(n, g):
        return False
    for i in n.inputs:
        t = g.tensors.get(i) if i else None
        if t is None or t.dtype != "float32":
            return False
        if t.shape != out.shape and not (t.is_const and t.size == 1):
            return False
    return True


def _constant_exponent(n: Node, g: Graph) -> bool:
    """Pow(x, e) with e a constant of one element that multiplies and a square root raise x to."""
    e = g.tensors.get(n.inputs[1])
    return e is not None and e.is_const and e.size == 1 and pow_by_multiplies(float(e.data.reshape(-1)[0]))


def _fused(nodes: list[Node], g: Graph) -> Node:
    """One node for the tree: its inputs the tensors it reads from outside, its program one
    (op, operands) per member, an operand ("in", k), ("v", j) or ("const", value)."""
    value_of = {m.outputs[0]: j for j, m in enumerate(nodes)}
    inputs: dict[str, int] = {}
    program = []
    for m in nodes:
        operands = []
        for i in m.inputs:
            t = g.tensors[i]
            if i in value_of:
                operands.append(("v", value_of[i]))
            elif t.is_const and t.size == 1:
                operands.append(("const", float(t.data.reshape(-1)[0])))
            else:
                operands.append(("in", inputs.setdefault(i, len(inputs))))
        program.append((m.op, tuple(operands)))
    root = nodes[-1]
    origin = tuple(s for m in nodes for s in m.sources())
    return Node(FUSED, root.name, list(inputs), list(root.outputs), {"program": tuple(program)}, origin=origin)
