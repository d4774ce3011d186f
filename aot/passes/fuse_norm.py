"""LayerNormalization and Gelu as exporters decompose them, back into the one-node ops.

torch's TorchScript exporter (opset < 17, and the dynamo exporter where it does not emit the op)
writes LayerNorm and Gelu as chains of plain ops:

    LayerNorm   mean = ReduceMean(x, trailing axes, keepdims)   d = Sub(x, mean)
                var = ReduceMean(Pow(d, 2) | Mul(d, d))   std = Sqrt(Add(var, eps))
                y = Div(d, std)  [-> Mul(y, weight)  [-> Add(y, bias)]]
    Gelu        y = Mul(Mul(x, Add(Erf(Div(x, sqrt 2) | Mul(x, 1 / sqrt 2)), 1)), 0.5)
                (or the 0.5 applied to x or to Add(Erf, 1) first)
                and its tanh form (Keras' gelu(approximate=True) through tf2onnx), Erf(...) above being
                Tanh(Mul(sqrt(2 / pi), Add(x, 0.044715 x^3))), the cube and its constant any tree of Muls (or Pow(x, 3))

Each chain becomes one LayerNormalization (statistics in one pass over each row, no mean, d, var
or std buffers: aotc_layer_norm_f32) or one Gelu (one pass instead of five). The fused node takes
the place of the chain's last node and says which ONNX nodes it stands for (origin).

Legal when every intermediate is read only inside the chain and is not a graph output, the data
is float32, the reductions run over X's trailing axes, epsilon and the Gelu constants are scalar
constants (within 1e-6 of sqrt 2, 1, 0.5), and the weight and bias are constants that broadcast
within a row (otherwise the chain stops before them: Div alone is a LayerNormalization with scale
1). Runs on the host graph after partitioning, like FuseEpilogue: a vendor still sees the plain
ops it has patterns for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.passes.base import Pass


@dataclass(frozen=True)
class FuseNorm(Pass):
    name: ClassVar[str] = "fuse-norm"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        m = _Matcher(g)
        for node in list(g.nodes):
            if node.name in m.absorbed:
                continue
            if node.op == "Div":
                m.layer_norm(node)
            elif node.op == "Erf":
                m.gelu(node)
            elif node.op == "Tanh":
                m.gelu_tanh(node)
        g.nodes = [m.replace.get(n.name, n) for n in g.nodes if n.name not in m.absorbed or n.name in m.replace]
        return g


class _Matcher:
    def __init__(self, g: Graph):
        self.g = g
        self.producers = g.producers()
        self.consumers = g.consumers()
        self.outputs = set(g.outputs)
        self.absorbed: set[str] = set()
        self.replace: dict[str, Node] = {}  # name of the chain's last node -> the fused node

    # --- helpers ------------------------------------------------------------------------------
    def made_by(self, tensor: str, op: str) -> Node | None:
        n = self.producers.get(tensor)
        return n if n is not None and n.op == op and n.name not in self.absorbed else None

    def only_read_by(self, tensor: str, *readers: Node) -> bool:
        """`tensor` is an intermediate of the chain: read by exactly `readers`, not a graph output."""
        users = self.consumers.get(tensor, [])
        return tensor not in self.outputs and {u.name for u in users} == {r.name for r in readers}

    def scalar(self, tensor: str) -> float | None:
        v = self.g.const(tensor)
        return float(v.reshape(-1)[0]) if v is not None and v.size == 1 and v.dtype == np.float32 else None

    def other(self, node: Node, tensor: str) -> str | None:
        """The other operand of a binary node that reads `tensor`."""
        if len(node.inputs) != 2 or tensor not in node.inputs:
            return None
        return node.inputs[1] if node.inputs[0] == tensor else node.inputs[0]

    def sole_reader(self, tensor: str, op: str) -> Node | None:
        users = self.consumers.get(tensor, [])
        if tensor in self.outputs or len(users) != 1 or users[0].op != op or users[0].name in self.absorbed:
            return None
        return users[0]

    def fuse(self, chain: list[Node], fused: Node) -> None:
        fused.origin = tuple(s for n in chain for s in n.sources())
        self.absorbed.update(n.name for n in chain)
        self.replace[chain[-1].name] = fused

    def f32(self, *tensors: str) -> bool:
        return all(self.g.tensors[t].dtype == "float32" for t in tensors)

    # --- LayerNormalization -------------------------------------------------------------------
    def layer_norm(self, div: Node) -> None:
        d, std = div.inputs
        sub, sqrt = self.made_by(d, "Sub"), self.made_by(std, "Sqrt")
        if sub is None or sqrt is None:
            return
        x, mean = sub.inputs
        rm1 = self.made_by(mean, "ReduceMean")
        add_eps = self.made_by(sqrt.inputs[0], "Add")
        if rm1 is None or rm1.inputs[0] != x or add_eps is None:
            return
        var = next((i for i in add_eps.inputs if self.made_by(i, "ReduceMean")), None)
        eps = self.scalar(self.other(add_eps, var)) if var else None
        if var is None or eps is None:
            return
        rm2 = self.made_by(var, "ReduceMean")
        square = self.producers.get(rm2.inputs[0])
        if square is None or square.name in self.absorbed:
            return
        if not ((square.op == "Pow" and square.inputs[0] == d and self.scalar(square.inputs[1]) == 2.0)
                or (square.op == "Mul" and square.inputs == [d, d])):
            return
        shape = self.g.tensors[x].shape
        rank = len(shape)
        axes = rm1.attrs.get("axes")
        if not axes or axes != rm2.attrs.get("axes") or axes != list(range(rank - len(axes), rank)):
            return
        if rm1.attrs.get("keepdims") != 1 or rm2.attrs.get("keepdims") != 1:
            return
        if self.g.tensors[d].shape != shape or self.g.tensors[div.outputs[0]].shape != shape or not self.f32(x):
            return
        chain = [rm1, sub, square, rm2, add_eps, sqrt, div]
        if not (self.only_read_by(mean, sub) and self.only_read_by(d, square, div)
                and self.only_read_by(square.outputs[0], rm2) and self.only_read_by(var, add_eps)
                and self.only_read_by(add_eps.outputs[0], sqrt) and self.only_read_by(std, div)):
            return
        axis = axes[0]
        row = shape[axis:]
        out, scale, bias = div.outputs[0], None, None
        mul = self.sole_reader(out, "Mul")
        if mul is not None:
            scale = _row_const(self.g.const(self.other(mul, out) or ""), shape, axis)
            if scale is not None and self.g.tensors[mul.outputs[0]].shape == shape:
                chain.append(mul)
                out = mul.outputs[0]
                add = self.sole_reader(out, "Add")
                if add is not None:
                    bias = _row_const(self.g.const(self.other(add, out) or ""), shape, axis)
                    if bias is not None and self.g.tensors[add.outputs[0]].shape == shape:
                        chain.append(add)
                        out = add.outputs[0]
                    else:
                        bias = None
            else:
                scale = None
        n = math.prod(row)
        inputs = [x, self.new_const(f"{rm1.name}__scale", scale if scale is not None else np.ones(row, np.float32)),
                  self.new_const(f"{rm1.name}__bias", bias) if bias is not None else ""]
        attrs = {"axis": axis, "epsilon": eps, "stash": "float32", "rows": math.prod(shape[:axis]), "n": n}
        self.fuse(chain, Node("LayerNormalization", rm1.name, inputs, [out], attrs))

    def new_const(self, base: str, value: np.ndarray) -> str:
        name, k = base, 1
        while name in self.g.tensors:
            name, k = f"{base}{k}", k + 1
        value = np.ascontiguousarray(value, dtype=np.float32)
        self.g.tensors[name] = Tensor(name, tuple(value.shape), "float32", value)
        return name

    # --- Gelu ---------------------------------------------------------------------------------
    def gelu(self, erf: Node) -> None:
        scaled = erf.inputs[0]
        pre = self.producers.get(scaled)
        if pre is None or pre.name in self.absorbed or not self.only_read_by(scaled, erf):
            return
        x = next((i for i in pre.inputs if self.g.const(i) is None), None)
        c = self.scalar(self.other(pre, x)) if x is not None else None
        if c is None or not ((pre.op == "Div" and pre.inputs[1] != x and _near(c, math.sqrt(2.0)))
                             or (pre.op == "Mul" and _near(c, 1.0 / math.sqrt(2.0)))):
            return
        self.gelu_tail(x, erf, [pre, erf], "none")

    def gelu_tanh(self, tanh: Node) -> None:
        """Gelu's tanh form: Tanh(Mul(sqrt(2 / pi), Add(x, Mul(0.044715, x^3)))), x^3 as Pow(x, 3) or two Muls
        (either constant on either side), then the same tail as the erf form's."""
        u = self.producers.get(tanh.inputs[0])
        if u is None or u.op != "Mul" or u.name in self.absorbed or not self.only_read_by(u.outputs[0], tanh):
            return
        w_name = next((i for i in u.inputs if self.g.const(i) is None), None)
        if w_name is None or not _near(self.scalar(self.other(u, w_name)), math.sqrt(2.0 / math.pi)):
            return
        w = self.made_by(w_name, "Add")
        if w is None or not self.only_read_by(w_name, u):
            return
        for x, m_name in ((w.inputs[0], w.inputs[1]), (w.inputs[1], w.inputs[0])):
            product = self.product_of(m_name, w, x)
            if product is not None and product[1] == 3 and _near(product[2], 0.044715):
                self.gelu_tail(x, tanh, [*product[0], w, u, tanh], "tanh")
                return

    def product_of(self, t: str, reader: Node, x: str, depth: int = 0) -> tuple[list[Node], int, float] | None:
        """t as a product of x's and scalar constants, made by Muls (and Pow(x, 3)) that only this product reads
        (`reader` reads t): the nodes, in order, how many x's and the constants' product; None where another
        tensor is a factor. Any tree of them: tf2onnx writes 0.044715 * Pow(x, 3) or x * (x * x) times the
        constant, jax2tf (Magika's classifier) x * (x * (0.044715 * x))."""
        if t == x:
            return [], 1, 1.0
        if (c := self.scalar(t)) is not None:
            return [], 0, c
        n = self.producers.get(t)
        if n is None or depth > 4 or n.name in self.absorbed or not self.only_read_by(t, reader):
            return None
        if n.op == "Pow" and n.inputs[0] == x and _near(self.scalar(n.inputs[1]), 3.0):
            return [n], 3, 1.0
        if n.op != "Mul" or (n.inputs[0] == n.inputs[1] != x):  # (a square of a product: not an exporter's cube)
            return None
        nodes: list[Node] = []
        xs, const = 0, 1.0
        for i in n.inputs:
            part = self.product_of(i, n, x, depth + 1)
            if part is None:
                return None
            nodes, xs, const = [*nodes, *part[0]], xs + part[1], const * part[2]
        return [*nodes, n], xs, const

    def gelu_tail(self, x: str, f: Node, chain: list[Node], approximate: str) -> None:
        """From f (Erf or Tanh, the last of `chain`): Add(f, 1) times x times 0.5, in any of the three orders."""
        plus1 = self.sole_reader(f.outputs[0], "Add")
        if plus1 is None or not _near(self.scalar(self.other(plus1, f.outputs[0])), 1.0):
            return
        mul = self.sole_reader(plus1.outputs[0], "Mul")
        if mul is None:
            return
        other = self.other(mul, plus1.outputs[0])
        chain = [*chain, plus1, mul]
        if other == x:  # x * (1 + erf) * 0.5
            half = self.sole_reader(mul.outputs[0], "Mul")
            if half is None or not _near(self.scalar(self.other(half, mul.outputs[0])), 0.5):
                return
            chain.append(half)
        elif _near(self.scalar(other), 0.5):  # x * ((1 + erf) * 0.5)
            last = self.sole_reader(mul.outputs[0], "Mul")
            if last is None or self.other(last, mul.outputs[0]) != x:
                return
            chain.append(last)
        else:  # (x * 0.5) * (1 + erf)
            h = self.made_by(other or "", "Mul")
            if h is None or x not in h.inputs or not _near(self.scalar(self.other(h, x)), 0.5) \
                    or not self.only_read_by(h.outputs[0], mul):
                return
            chain.insert(0, h)
        out = chain[-1].outputs[0]
        if self.g.tensors[out].shape != self.g.tensors[x].shape or not self.f32(x, out):
            return
        self.fuse(chain, Node("Gelu", f.name, [x], [out], {"approximate": approximate}))


def _near(v: float | None, want: float) -> bool:
    return v is not None and abs(v - want) <= 1e-6 * abs(want)


def _row_const(value: np.ndarray | None, x_shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """A constant weight or bias as one float per element of a row of X (shaped as the dims from `axis`), or
    None if it is not a float32 constant that broadcasts within a row."""
    if value is None or value.dtype != np.float32 or value.ndim > len(x_shape):
        return None
    shape = (1,) * (len(x_shape) - value.ndim) + value.shape
    row = x_shape[axis:]
    if any(d != 1 for d in shape[:axis]) or any(d not in (1, r) for d, r in zip(shape[axis:], row, strict=True)):
        return None
    return np.broadcast_to(value.reshape(shape[axis:]), row)
