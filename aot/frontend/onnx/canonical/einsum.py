"""Einsum as the ops aotc already runs (issue 15): the common forms lowered at import to Transpose,
Reshape, ReduceSum and MatMul nodes in their canonical form, never a generic interpreter.

One operand: sum out the labels the output lacks, then transpose ('ij->ji', 'ij->i', 'ii' refused).
Two operands: each is summed over the labels only it has and the output lacks, transposed to
[batch, free, contracted] (A) and [batch, contracted, free] (B), reshaped to 3-D, multiplied by
one batched MatMul, reshaped back and transposed to the output's order: 'bij,bjk->bik',
'bhqd,bhkd->bhqk', 'i,i', 'ij,jk', '...ij,...jk->...ik' and the like. Refused with one line: three or more
operands, a label repeated within an operand (diagonals), and labels whose sizes differ between the
operands (broadcasting of size-1 dims).
"""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor


def parse(equation: str, ranks: list[int]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels and the output's; an ellipsis becomes labels '.0', '.1', ... (right-aligned)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"{len(terms)} terms for {len(ranks)} inputs")
    ell = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks, strict=True) if "..." in t), default=0)

    def labels(term: str, rank: int | None) -> list[str]:
        head, dots, tail = term.partition("...")
        n = (rank - len(head) - len(tail)) if rank is not None else ell
        if not dots:
            n = 0
        if n < 0:
            raise ValueError(f"term '{term}' has more labels than its input's rank {rank}")
        return [*head, *[f".{ell - n + k}" for k in range(n)], *tail]

    operands = [labels(t, r) for t, r in zip(terms, ranks, strict=True)]
    for t, r, lab in zip(terms, ranks, operands, strict=True):
        if len(lab) != r:
            raise ValueError(f"term '{t}' has {len(lab)} labels for an input of rank {r}")
    if arrow:
        out = labels(rhs, None)
    else:  # implicit output: the ellipsis, then the labels seen once, in alphabetical order
        flat = [x for lab in operands for x in lab]
        out = [f".{k}" for k in range(ell)] + sorted(x for x in set(flat) if flat.count(x) == 1 and x[0] != ".")
    return operands, out


class _Builder:
    """New nodes and tensors for one Einsum node, named after it."""

    def __init__(self, node: Node, graph: Graph):
        self.node, self.graph, self.nodes, self.dtype = node, graph, [], graph.tensors[node.inputs[0]].dtype
        self.k = 0

    def add(self, op: str, inputs: list[str], shape: tuple[int, ...], attrs: dict, out: str | None = None) -> str:
        self.k += 1
        if out is None:
            out = f"{self.node.outputs[0]}__einsum{self.k}"
            self.graph.tensors[out] = Tensor(out, tuple(shape), self.dtype)
        self.nodes.append(Node(op, f"{self.node.name}__einsum{self.k}", inputs, [out], attrs,
                               origin=self.node.sources()))
        return out

    def reduce(self, x: str, labels: list[str], keep: set[str], sizes: dict[str, int]) -> tuple[str, list[str]]:
        axes = [k for k, lab in enumerate(labels) if lab not in keep]
        if not axes:
            return x, labels
        left = [lab for lab in labels if lab in keep]
        return self.add("ReduceSum", [x], tuple(sizes[lab] for lab in left), {"axes": axes, "keepdims": 0}), left

    def transpose(self, x: str, labels: list[str], order: list[str], sizes: dict[str, int]) -> str:
        if labels == order:
            return x
        perm = [labels.index(lab) for lab in order]
        return self.add("Transpose", [x], tuple(sizes[lab] for lab in order), {"perm": perm})

    def reshape(self, x: str, shape: tuple[int, ...], out: str | None = None) -> str:
        if out is None and self.graph.tensors[x].shape == tuple(shape):
            return x
        return self.add("Reshape", [x], shape, {}, out)


def einsum(node: Node, graph: Graph, opset: int) -> list[Node]:
    """The canonical rule: Einsum -> the nodes that compute it (see the module's docstring)."""
    eq = node.attrs.get("equation", "")
    eq = eq.decode() if isinstance(eq, bytes) else eq
    shapes = [graph.tensors[i].shape for i in node.inputs]
    try:
        operands, out = parse(eq, [len(s) for s in shapes])
    except ValueError as e:
        raise AotcError(f"Einsum equation '{eq}': {e}", node=node) from None
    if len(operands) > 2:
        raise AotcError(f"Einsum '{eq}' has {len(operands)} operands (1 or 2 are supported)", node=node)
    sizes: dict[str, int] = {}
    for labels, shape in zip(operands, shapes, strict=True):
        if len(set(labels)) != len(labels):
            raise AotcError(f"Einsum '{eq}' repeats a label within an operand (diagonals are not supported)",
                            node=node)
        for lab, n in zip(labels, shape, strict=True):
            if sizes.setdefault(lab, n) != n:
                raise AotcError(f"Einsum '{eq}': label '{lab}' has sizes {sizes[lab]} and {n} (broadcasting a "
                                "size-1 dimension is not supported)", node=node)
    b = _Builder(node, graph)
    y = node.outputs[0]
    if len(operands) == 1:
        x, labels = b.reduce(node.inputs[0], operands[0], set(out), sizes)
        if labels == out:
            b.reshape(x, graph.tensors[y].shape, out=y)  # a copy (a view) into the output
        else:
            perm = [labels.index(lab) for lab in out]
            b.add("Transpose", [x], graph.tensors[y].shape, {"perm": perm}, out=y)
        return b.nodes
    (la, lb), (a, bx) = operands, node.inputs
    a, la = b.reduce(a, la, set(lb) | set(out), sizes)
    bx, lb = b.reduce(bx, lb, set(la) | set(out), sizes)
    batch = [lab for lab in out if lab in la and lab in lb]
    contracted = [lab for lab in la if lab in lb and lab not in out]
    a_free = [lab for lab in la if lab not in lb]
    b_free = [lab for lab in lb if lab not in la]

    def size(labels: list[str]) -> int:
        return int(np.prod([sizes[lab] for lab in labels], dtype=np.int64))

    a = b.transpose(a, la, batch + a_free + contracted, sizes)
    a = b.reshape(a, (size(batch), size(a_free), size(contracted)))
    bx = b.transpose(bx, lb, batch + contracted + b_free, sizes)
    bx = b.reshape(bx, (size(batch), size(contracted), size(b_free)))
    prod = b.add("MatMul", [a, bx], (size(batch), size(a_free), size(b_free)), {})
    order = batch + a_free + b_free
    if order == out:
        b.reshape(prod, graph.tensors[y].shape, out=y)
    else:
        full = b.reshape(prod, tuple(sizes[lab] for lab in order))
        b.add("Transpose", [full], graph.tensors[y].shape, {"perm": [order.index(lab) for lab in out]}, out=y)
    return b.nodes
