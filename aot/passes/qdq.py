"""QDQ -> integer ops: DequantizeLinear -> float op -> QuantizeLinear groups become the QLinear ops.

onnxruntime's quantizer writes int8 models in two forms. QOperator models already hold QLinearConv,
QGemm, QLinearAdd, ...; QDQ models hold float ops between DequantizeLinear (DQ) and QuantizeLinear
(Q) nodes. This pass turns each QDQ group into the QOperator op that computes it, so one set of
integer kernels runs both forms (as onnxruntime's own QDQ transformer does):

    DQ(x) -> Conv(DQ(w), DQ(b)) [-> Relu | Clip] -> Q   =>  QLinearConv, the activation as its clamp
    DQ(a) -> Gemm | MatMul(DQ(B)) [-> act] -> Q          =>  QGemm (B constant)
    DQ(a), DQ(b) -> Add | Mul [-> act] -> Q              =>  QLinearAdd | QLinearMul
    DQ(x) -> GlobalAveragePool -> Q                      =>  QLinearGlobalAveragePool
    DQ(x) -> AveragePool -> Q                            =>  QLinearAveragePool
    DQ(xs...) -> Concat -> Q                             =>  Concat on the integers (same parameters)
                                                            or QLinearConcat
    DQ(x) -> MaxPool -> Q, same parameters               =>  MaxPool on the integers
    DQ(x) -> Sigmoid | Tanh | HardSwish | ... -> Q       =>  QLookup: a 256-entry table made here
    DQ(x) -> Softmax over the innermost axis -> Q         =>  QLinearSoftmax

Before matching, a per-tensor DQ moves below the views after it (Reshape, Flatten, Transpose, ...),
which then move integers; a DQ -> Q pair with the same parameters cancels. What is left keeps its
QuantizeLinear / DequantizeLinear kernels (mixed graphs), and a DQ of a constant folds to floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.passes.base import Pass
from aot.passes.remove_dead_nodes import RemoveDeadNodes
from aot.qmath import INT_RANGE, dequantize, lookup_table, quantize

VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity")
# ops a per-tensor DQ commutes with (a DQ is increasing, its scale being positive): the views, MaxPool,
# which picks the same element in integers as in floats, and nearest Resize (a gather)
COMMUTING = (*VIEWS, "MaxPool", "Resize")
LOOKUP = ("Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "LeakyRelu", "Relu", "Elu", "Gelu", "Exp", "Neg", "Abs")


@dataclass(frozen=True)
class LowerQDQ(Pass):
    name: ClassVar[str] = "qdq-to-integer-ops"

    def run(self, graph: Graph) -> Graph:
        if not any(n.op in ("QuantizeLinear", "DequantizeLinear") for n in graph.nodes):
            return graph
        g = graph.copy()
        _hoist_quantize(g)
        _sink_dequantize(g)
        _Rewriter(g).run()
        _cancel_pairs(g)
        g = RemoveDeadNodes().run(g)
        _fold_constant_dequantize(g)
        return g


# --- helpers ---------------------------------------------------------------------------

def _scalar(g: Graph, name: str) -> float | int | None:
    v = g.const(name)
    return None if v is None or v.size != 1 else v.reshape(()).item()


def _per_tensor(g: Graph, n: Node) -> bool:
    return g.const(n.inputs[1]) is not None and g.const(n.inputs[1]).size == 1


def _same_params(g: Graph, a: Node, b: Node) -> bool:
    """Two Q/DQ nodes with equal per-tensor scale and zero point, on the same integer type."""
    ia = a.inputs[0] if a.op == "DequantizeLinear" else a.outputs[0]
    ib = b.inputs[0] if b.op == "DequantizeLinear" else b.outputs[0]
    return (_per_tensor(g, a) and _per_tensor(g, b) and g.tensors[ia].dtype == g.tensors[ib].dtype
            and np.float32(_scalar(g, a.inputs[1])) == np.float32(_scalar(g, b.inputs[1]))
            and _scalar(g, a.inputs[2]) == _scalar(g, b.inputs[2]))


def _new_tensor(g: Graph, base: str, shape: tuple[int, ...], dtype: str, data: np.ndarray | None = None) -> str:
    name, k = base, 1
    while name in g.tensors:
        name, k = f"{base}_{k}", k + 1
    g.tensors[name] = Tensor(name, shape, dtype, data)
    return name


def _sink_dequantize(g: Graph) -> None:
    """DQ(x) -> view  =>  view(x) -> DQ, for per-tensor DQs, so the integers reach the op after the view
    (and the same through MaxPool)."""
    producer = g.producers()
    out: list[Node] = []
    for n in g.nodes:
        dq = producer.get(n.inputs[0]) if n.op in COMMUTING and n.inputs else None
        if (dq is None or dq.op != "DequantizeLinear" or not _per_tensor(g, dq) or n.outputs[0] in g.outputs
                or any(n.outputs[1:]) or not _scalar(g, dq.inputs[1]) > 0
                or (n.op == "Resize" and n.attrs.get("mode") != "nearest")):
            out.append(n)
            continue
        y = g.tensors[n.outputs[0]]
        moved = _new_tensor(g, f"{n.outputs[0]}_quantized", y.shape, g.tensors[dq.inputs[0]].dtype)
        view = Node(n.op, n.name, [dq.inputs[0], *n.inputs[1:]], [moved], dict(n.attrs), n.origin)
        after = Node("DequantizeLinear", f"{n.name}_dequantize", [moved, *dq.inputs[1:]], [n.outputs[0]],
                     dict(dq.attrs), dq.sources())
        out += [view, after]
        producer[moved], producer[n.outputs[0]] = view, after
    g.nodes = out


def _hoist_quantize(g: Graph) -> None:
    """view -> Q  =>  Q -> view, for per-tensor Qs that alone read the view: the view then moves
    integers, and the float copy it made is gone (a channels-last float input transposed before
    its QuantizeLinear took twice the float input's bytes of arena)."""
    while True:
        producer, consumers = g.producers(), g.consumers()
        for q in g.nodes:
            view = producer.get(q.inputs[0]) if q.op == "QuantizeLinear" else None
            if (view is None or view.op not in VIEWS or not _per_tensor(g, q) or not _scalar(g, q.inputs[1]) > 0
                    or len(consumers.get(view.outputs[0], [])) != 1 or view.outputs[0] in g.outputs
                    or g.const(view.inputs[0]) is not None):
                continue
            x = g.tensors[view.inputs[0]]
            early = _new_tensor(g, f"{view.inputs[0]}_quantized", x.shape, g.tensors[q.outputs[0]].dtype)
            hoisted = Node("QuantizeLinear", q.name, [x.name, *q.inputs[1:]], [early], dict(q.attrs), q.sources())
            moved = Node(view.op, view.name, [early, *view.inputs[1:]], [q.outputs[0]], dict(view.attrs), view.origin)
            at = g.nodes.index(view)
            g.nodes = [n for n in g.nodes if n is not q and n is not view]
            g.nodes[at:at] = [hoisted, moved]
            break
        else:
            return


def _cancel_pairs(g: Graph) -> None:
    """Q(DQ(x)) with the same parameters is x: its readers read x."""
    producer = g.producers()
    rename: dict[str, str] = {}
    for n in g.nodes:
        n.inputs = [rename.get(i, i) for i in n.inputs]
        if n.op != "QuantizeLinear" or n.outputs[0] in g.outputs:
            continue
        dq = producer.get(n.inputs[0])
        if dq is not None and dq.op == "DequantizeLinear" and _same_params(g, dq, n):
            rename[n.outputs[0]] = dq.inputs[0]


def _fold_constant_dequantize(g: Graph) -> None:
    kept: list[Node] = []
    for n in g.nodes:
        x = g.const(n.inputs[0]) if n.op == "DequantizeLinear" else None
        if x is None:
            kept.append(n)
            continue
        y = g.tensors[n.outputs[0]]
        g.tensors[y.name] = Tensor(y.name, y.shape, y.dtype, dequantize(x, g.const(n.inputs[1]),
                                                                          g.const(n.inputs[2]), n.attrs["axis"]))
    g.nodes = kept


# --- the rewriter ------------------------------------------------------------------------

class _Rewriter:
    def __init__(self, g: Graph):
        self.g = g
        self.producer = g.producers()
        self.consumers = g.consumers()
        self.outputs = set(g.outputs)
        self.dropped: set[str] = set()  # the Q nodes (and activations) a rewrite took in
        self.rules = {
            "Conv": self._conv, "Gemm": self._gemm, "MatMul": self._matmul, "Add": self._add, "Mul": self._mul,
            "GlobalAveragePool": self._globalaveragepool, "AveragePool": self._averagepool, "MaxPool": self._maxpool,
            "Concat": self._concat,
            "Softmax": self._softmax,
            **{op: self._lookup for op in LOOKUP},
        }

    def run(self) -> None:
        out: list[Node] = []
        for n in self.g.nodes:
            if n.name in self.dropped:
                continue
            rule = self.rules.get(n.op)
            out.append((rule(n) if rule else None) or n)
        self.g.nodes = out

    # --- pattern pieces -------------------------------------------------------------
    def dq(self, name: str, per_tensor: bool = True) -> Node | None:
        """The DequantizeLinear that computes tensor `name`, if one does (per-tensor unless asked)."""
        n = self.producer.get(name) if name else None
        if n is None or n.op != "DequantizeLinear" or (per_tensor and not _per_tensor(self.g, n)):
            return None
        return n

    def q_after(self, n: Node) -> tuple[Node, list[Node]] | None:
        """The per-tensor QuantizeLinear that alone reads n's output, through at most one Relu/Clip."""
        y, chain = n.outputs[0], []
        for _ in range(2):
            users = self.consumers.get(y, [])
            if y in self.outputs or len(users) != 1:
                return None
            user = users[0]
            if user.op == "QuantizeLinear" and _per_tensor(self.g, user):
                return user, chain
            if user.op not in ("Relu", "Clip") or chain:
                return None
            chain.append(user)
            y = user.outputs[0]
        return None

    def clamp(self, q: Node, chain: list[Node]) -> dict[str, int]:
        """The activation after the op as a clamp of the quantized output (Q is monotone, so
        Q(clip(v, a, b)) = clip(Q(v), Q(a), Q(b)))."""
        dtype = self.g.tensors[q.outputs[0]].dtype
        lo, hi = INT_RANGE[dtype]
        scale, zp = _scalar(self.g, q.inputs[1]), int(_scalar(self.g, q.inputs[2]))
        for act in chain:
            a, b = (0.0, np.inf) if act.op == "Relu" else (act.attrs["min"], act.attrs["max"])
            if np.isfinite(a):
                lo = max(lo, int(quantize(np.float32(a), scale, zp, dtype)))
            if np.isfinite(b):
                hi = min(hi, int(quantize(np.float32(b), scale, zp, dtype)))
        return {"qmin": lo, "qmax": hi}

    def replace(self, n: Node, op: str, inputs: list[str], q: Node, chain: list[Node], attrs: dict) -> Node:
        sources = (*n.sources(), *(a.name for a in chain), q.name)
        self.dropped.update([q.name, *(a.name for a in chain)])
        return Node(op, n.name, inputs, [q.outputs[0]], attrs, sources)

    def int_bias(self, bias: str, x: Node, w: Node, length: int) -> str | None:
        """The bias as int32 at scale x_scale * w_scale: the integers behind its DQ, or a float
        constant quantized here; None when neither."""
        if not bias:
            return ""
        g = self.g
        dq = self.dq(bias, per_tensor=False)
        if dq is not None and g.const(dq.inputs[0]) is not None and g.tensors[dq.inputs[0]].dtype == "int32":
            return dq.inputs[0] if g.tensors[dq.inputs[0]].size == length else None
        b = g.const(bias)
        if b is None or b.size != length:
            return None
        scale = np.float32(_scalar(g, x.inputs[1])) * np.asarray(g.const(w.inputs[1]), np.float32).reshape(-1)
        data = np.rint(b.reshape(-1).astype(np.float64) / scale).astype(np.int32)
        return _new_tensor(g, f"{bias}_int32", (length,), "int32", data)

    # --- rules: each returns the integer node, or None to leave the float op ---------
    def _conv(self, n: Node) -> Node | None:
        x, w, found = self.dq(n.inputs[0]), self.dq(n.inputs[1], per_tensor=False), self.q_after(n)
        if x is None or w is None or found is None or self.g.const(w.inputs[0]) is None:
            return None
        if not _per_tensor(self.g, w) and w.attrs["axis"] != 0:
            return None
        cout = self.g.tensors[n.inputs[1]].shape[0]
        bias = self.int_bias(n.inputs[2] if len(n.inputs) > 2 else "", x, w, cout)
        if bias is None:
            return None
        q, chain = found
        return self.replace(n, "QLinearConv", [*x.inputs, *w.inputs, *q.inputs[1:], bias], q, chain,
                            {**n.attrs, **self.clamp(q, chain)})

    def _gemm(self, n: Node) -> Node | None:
        a = n.attrs
        if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or (len(n.inputs) > 2 and n.inputs[2]
                                                                    and a.get("beta", 1.0) != 1.0):
            return None
        return self._matrix(n, trans_b=int(a.get("transB", 0)))

    def _matmul(self, n: Node) -> Node | None:
        if len(self.g.tensors[n.inputs[1]].shape) != 2 or len(self.g.tensors[n.inputs[0]].shape) < 2:
            return None
        return self._matrix(n, trans_b=0)

    def _matrix(self, n: Node, trans_b: int) -> Node | None:
        x, w, found = self.dq(n.inputs[0]), self.dq(n.inputs[1], per_tensor=False), self.q_after(n)
        if x is None or w is None or found is None or self.g.const(w.inputs[0]) is None:
            return None
        if not _per_tensor(self.g, w) and w.attrs["axis"] != (0 if trans_b else 1):
            return None
        cols = self.g.tensors[n.outputs[0]].shape[-1]
        bias = self.int_bias(n.inputs[2] if len(n.inputs) > 2 else "", x, w, cols)
        if bias is None:
            return None
        q, chain = found
        return self.replace(n, "QGemm", [*x.inputs, *w.inputs, bias, *q.inputs[1:]], q, chain,
                            {"transA": 0, "transB": trans_b, "alpha": 1.0, **self.clamp(q, chain)})

    def _binary(self, n: Node, op: str) -> Node | None:
        a, b, found = self.dq(n.inputs[0]), self.dq(n.inputs[1]), self.q_after(n)
        if a is None or b is None or found is None:
            return None
        q, chain = found
        return self.replace(n, op, [*a.inputs, *b.inputs, *q.inputs[1:]], q, chain, self.clamp(q, chain))

    def _add(self, n: Node) -> Node | None:
        return self._binary(n, "QLinearAdd")

    def _mul(self, n: Node) -> Node | None:
        return self._binary(n, "QLinearMul")

    def _unary(self, n: Node, op: str, attrs: dict) -> Node | None:
        x, found = self.dq(n.inputs[0]), self.q_after(n)
        if x is None or found is None or found[1]:
            return None
        q, chain = found
        return self.replace(n, op, [*x.inputs, *q.inputs[1:]], q, chain, attrs)

    def _globalaveragepool(self, n: Node) -> Node | None:
        return self._unary(n, "QLinearGlobalAveragePool", {})

    def _averagepool(self, n: Node) -> Node | None:
        if any(d != 1 for d in n.attrs.get("dilations", [])):  # onnxruntime's QLinearAveragePool has none
            return None
        return self._unary(n, "QLinearAveragePool", dict(n.attrs))

    def _softmax(self, n: Node) -> Node | None:
        if n.attrs["inner"] != 1:  # QLinearSoftmax runs over the innermost axis
            return None
        return self._unary(n, "QLinearSoftmax", dict(n.attrs))

    def _maxpool(self, n: Node) -> Node | None:
        x, found = self.dq(n.inputs[0]), self.q_after(n)
        if x is None or found is None or found[1] or not _same_params(self.g, x, found[0]):
            return None
        if len(n.outputs) > 1 and n.outputs[1]:
            return None
        return self.replace(n, "MaxPool", [x.inputs[0]], found[0], [], dict(n.attrs))

    def _concat(self, n: Node) -> Node | None:
        parts, found = [self.dq(i) for i in n.inputs], self.q_after(n)
        if any(p is None for p in parts) or found is None or found[1]:
            return None
        q = found[0]
        if all(_same_params(self.g, p, q) for p in parts):
            return self.replace(n, "Concat", [p.inputs[0] for p in parts], q, [], dict(n.attrs))
        return self.replace(n, "QLinearConcat", [*q.inputs[1:], *(i for p in parts for i in p.inputs)], q, [],
                            dict(n.attrs))

    def _lookup(self, n: Node) -> Node | None:
        x, found = self.dq(n.inputs[0]), self.q_after(n)
        if x is None or found is None or found[1]:
            return None
        q, g = found[0], self.g
        table = lookup_table(n.op, dict(n.attrs), g.tensors[x.inputs[0]].dtype, _scalar(g, x.inputs[1]),
                             int(_scalar(g, x.inputs[2])), _scalar(g, q.inputs[1]), int(_scalar(g, q.inputs[2])),
                             g.tensors[q.outputs[0]].dtype, int(g.info.opset or 13))
        if table is None:
            return None
        name = _new_tensor(self.g, f"{n.name}_table", (256,), self.g.tensors[q.outputs[0]].dtype,
                           table)
        return self.replace(n, "QLookup", [x.inputs[0], name], q, [], {"function": n.op})
