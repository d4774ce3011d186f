"""Fold constant per-channel affine ops (Mul, Add, Sub, Div; HardSigmoid's affine part) into the
weights and bias of the Conv, ConvTranspose, Gemm or MatMul next to them.

Exporters that do not fold BatchNorm write it as elementwise ops: tf2onnx writes a Keras
BatchNormalization as `Conv -> Mul(per-channel) -> Add(per-channel)`; others write Sub/Div by a
mean and a deviation. Each is a pass over the tensor at run time, and stands between the conv
and its activation, so the epilogue fusion (fuse_epilogue.py) cannot take the activation.

After the op (y = P(x), z = y * s + t with s, t constant along every axis but the channel's):

    Conv / ConvTranspose    W' = W * s per output channel          B' = B * s + t
    Gemm                    B' = B * s per column (row if transB)  C' = beta * C * s + t, beta = 1
    MatMul (2-D const B)    B' = B * s per column;  with a shift: Gemm(A, B', t) when A is 2-D,
                            else MatMul(A, B') -> one Add of t

Sub(y, c) is + (-c), Sub(c, y) is y * -1 + c, Div(y, c) is y * (1 / c); Div(c, y) is not affine.
HardSigmoid(y) = Clip(alpha * y + beta, 0, 1): the affine part folds, a Clip(0, 1) is left (and
fuses). Legal when y is read only by that op and is not a graph output (the producer changes);
chains fold one op at a time, to a fixed point.

Before the op (P(z), z = x * s + t, s and t constant along every axis but the input channel's):

    scale   Conv / ConvTranspose: W scaled per input channel (a padded zero times s is still
            zero, so padding does not matter); Gemm (transA = 0), MatMul: B's rows (K) scaled
    shift   Conv with no padding: B' = B + sum over (input channel, taps) of W * t. With padding
            the shift does not fold: the padded border reads 0, not t. Never for ConvTranspose.
            Gemm (transA = 0): C' = beta * C + alpha * t @ B; MatMul with 2-D A: Gemm(A, B, t @ B)

Legal when z is read only by P and is not a graph output, and the chain of constant ops does not
start at a product or quotient of two run-time tensors (the tail of a decomposed LayerNorm or Gelu,
left to FuseNorm). The folded node keeps its name, computes the op's output tensor (a new name where a
Clip is left after it: its values are no longer the model's tensor's) and records the nodes it absorbed
in its origin (metadata.json's source map, `aotc partition --show --explain`).
Weights are computed in float64 and stored as float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.passes.base import Pass, fresh_tensor_name

_PRODUCERS = ("Conv", "ConvTranspose", "Gemm", "MatMul")
_AFFINE = ("Mul", "Add", "Sub", "Div")


@dataclass(frozen=True)
class FoldAffine(Pass):
    name: ClassVar[str] = "fold-affine"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        changed = True
        while changed:
            changed = False
            consumers = g.consumers()
            producers = g.producers()
            outputs = set(g.outputs)
            drop: set[str] = set()
            for node in g.nodes:
                if node.op not in _PRODUCERS or node.name in drop or not _weights_ok(g, node):
                    continue
                users = consumers.get(node.outputs[0], [])
                if len(users) == 1 and node.outputs[0] not in outputs and users[0].name not in drop:
                    e = users[0]
                    if _fold_after(g, node, e):
                        drop.add(e.name)
                        changed = True
                        break  # consumers/producers are stale: recompute
                pre = producers.get(node.inputs[0])
                if (pre is not None and pre.name not in drop and node.inputs[0] not in outputs
                        and len(consumers.get(node.inputs[0], [])) == 1 and not _ends_a_norm(g, producers, pre)
                        and _fold_before(g, pre, node)):
                    drop.add(pre.name)
                    changed = True
                    break
            g.nodes = [n for n in g.nodes if n.name not in drop]
        return g


# --- what is foldable -------------------------------------------------------------------------------------

def _weights_ok(g: Graph, node: Node) -> bool:
    w = g.const(node.inputs[1]) if len(node.inputs) > 1 else None
    if w is None or w.dtype != np.float32 or g.tensors[node.outputs[0]].dtype != "float32":
        return False
    if node.op == "MatMul":
        return w.ndim == 2 and len(g.tensors[node.inputs[0]].shape) >= 1
    if node.op == "Gemm":
        return len(node.inputs) < 3 or not node.inputs[2] or g.const(node.inputs[2]) is not None
    return len(node.inputs) < 3 or not node.inputs[2] or g.const(node.inputs[2]) is not None


def _channel_axis(node: Node, rank: int, before: bool) -> int | None:
    if node.op in ("Conv", "ConvTranspose"):
        return 1
    if node.op == "Gemm":
        return None if before and node.attrs["transA"] else 1
    return rank - 1  # MatMul: N after, K before


def _per_channel(c: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """c as a float64 vector over `axis` of `shape`, if it varies along that axis only and does not
    broadcast `shape` any larger; else None."""
    rank = len(shape)
    if c.ndim > rank or not np.issubdtype(c.dtype, np.floating):
        return None
    cs = (1,) * (rank - c.ndim) + tuple(c.shape)
    if any(d != 1 for k, d in enumerate(cs) if k != axis) or cs[axis] not in (1, shape[axis]):
        return None
    flat = c.astype(np.float64).reshape(-1)
    return np.broadcast_to(flat, (shape[axis],)).copy() if flat.size == 1 else flat


def _affine(g: Graph, e: Node, y: str, axis: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, shift) with e(y) = y * scale + shift per channel of `axis`, or None."""
    shape = g.tensors[y].shape
    if e.outputs[0] not in g.tensors or g.tensors[e.outputs[0]].shape != shape or \
            g.tensors[e.outputs[0]].dtype != "float32":
        return None
    n = shape[axis]
    if e.op == "HardSigmoid":
        return np.full(n, float(e.attrs["alpha"])), np.full(n, float(e.attrs["beta"]))
    if e.op not in _AFFINE or len(e.inputs) != 2 or e.inputs.count(y) != 1:
        return None
    first = e.inputs[0] == y
    c = g.const(e.inputs[1] if first else e.inputs[0])
    if c is None:
        return None
    v = _per_channel(c, shape, axis)
    if v is None:
        return None
    one, zero = np.ones(n), np.zeros(n)
    if e.op == "Mul":
        return v, zero
    if e.op == "Add":
        return one, v
    if e.op == "Sub":
        return (one, -v) if first else (-one, v)
    if e.op == "Div" and first and np.all(v != 0):
        return 1.0 / v, zero
    return None


# --- after the op -------------------------------------------------------------------------------------

def _fold_after(g: Graph, node: Node, e: Node) -> bool:
    y = node.outputs[0]
    axis = _channel_axis(node, len(g.tensors[y].shape), before=False)
    st = _affine(g, e, y, axis) if axis is not None else None
    if st is None:
        return False
    scale, shift = st
    w = g.const(node.inputs[1]).astype(np.float64)
    if node.op == "Conv":
        w2 = w * scale.reshape((-1,) + (1,) * (w.ndim - 1))
        b = _bias(g, node, w.shape[0])
        _set(g, node, w2, b * scale + shift)
    elif node.op == "ConvTranspose":
        group = int(node.attrs["group"])
        c_in, m_g = w.shape[0], w.shape[1]
        idx = (np.arange(c_in)[:, None] // (c_in // group)) * m_g + np.arange(m_g)[None, :]
        w2 = w * scale[idx].reshape(idx.shape + (1,) * (w.ndim - 2))
        b = _bias(g, node, m_g * group)
        _set(g, node, w2, b * scale + shift)
    elif node.op == "Gemm":
        w2 = w * (scale[:, None] if node.attrs["transB"] else scale[None, :])
        c = g.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else np.zeros(())
        c2 = node.attrs["beta"] * c.astype(np.float64) * scale + shift
        _set(g, node, w2, c2)
        node.attrs = dict(node.attrs, beta=1.0)
    else:  # MatMul
        w2 = w * scale[None, :]
        if not np.any(shift):
            _set(g, node, w2, None)
        elif len(g.tensors[node.inputs[0]].shape) == 2:
            _to_gemm(g, node, w2, shift)
        elif e.op in ("Add", "Sub") and np.all(scale == 1.0) and len(e.inputs) == 2:
            return False  # MatMul -> Add of a bias already: nothing to gain
        else:  # MatMul(A, B') -> Add(shift): the Add takes e's place
            _set(g, node, w2, None)
            bias = _const(g, f"{e.name}_bias", shift.astype(np.float32))
            mid = fresh_tensor_name(g, f"{y}__scaled")
            g.tensors[mid] = Tensor(mid, g.tensors[y].shape, "float32")
            add = Node("Add", e.name, [mid, bias], list(e.outputs), origin=e.sources())
            node.outputs = [mid]
            node.origin = node.sources()
            g.nodes.insert(g.nodes.index(e), add)
            e.name = e.name + "__folded"  # the original is dropped by the caller
            return True
    if e.op == "HardSigmoid":  # the affine part is folded; Clip(0, 1) is left, reading y as scaled
        e.op, e.attrs = "Clip", {"min": 0.0, "max": 1.0}
        node.origin = node.sources()
        # y's values are no longer the model's: a new name, so nothing (`aotc compare` inside a vendor function
        # that takes the conv without the Clip) holds it against the model's tensor y
        scaled = fresh_tensor_name(g, f"{y}__affine")
        g.tensors[scaled] = Tensor(scaled, g.tensors[y].shape, "float32")
        del g.tensors[y]
        node.outputs = [scaled]
        e.inputs = [scaled if i == y else i for i in e.inputs]
        return False
    node.origin = node.sources() + e.sources()
    node.outputs = list(e.outputs)
    return True


# --- before the op ------------------------------------------------------------------------------------

def _fold_before(g: Graph, e: Node, node: Node) -> bool:
    z = node.inputs[0]
    if e.op not in _AFFINE:
        return False
    rank = len(g.tensors[z].shape)
    axis = _channel_axis(node, rank, before=True)
    st = _affine(g, e, next((i for i in e.inputs if g.const(i) is None), ""), axis) \
        if axis is not None and sum(g.const(i) is None for i in e.inputs) == 1 else None
    if st is None:
        return False
    x = next(i for i in e.inputs if g.const(i) is None)
    if g.tensors[x].shape != g.tensors[z].shape:
        return False
    scale, shift = st
    has_shift = bool(np.any(shift))
    w = g.const(node.inputs[1]).astype(np.float64)
    if node.op in ("Conv", "ConvTranspose"):
        if has_shift and (node.op == "ConvTranspose" or any(node.attrs["pads"])):
            return False
        group = int(node.attrs["group"])
        if node.op == "Conv":  # W [M, C/g, taps]: input channel of (m, j) = (m // (M/g)) * (C/g) + j
            m, c_g = w.shape[0], w.shape[1]
            idx = (np.arange(m)[:, None] // (m // group)) * c_g + np.arange(c_g)[None, :]
            per = scale[idx].reshape(idx.shape + (1,) * (w.ndim - 2))
            b = _bias(g, node, m)
            if has_shift:  # sum over each filter's taps of W * t (W before the scale: z = x * s + t)
                b = b + (w * shift[idx].reshape(per.shape)).reshape(m, -1).sum(axis=1)
            _set(g, node, w * per, b)
        else:  # W [C, M/g, taps]: row c is input channel c
            _set(g, node, w * scale.reshape((-1,) + (1,) * (w.ndim - 1)), _bias(g, node, w.shape[1] * group))
    elif node.op == "Gemm":
        trans_b = node.attrs["transB"]
        k_rows = w.T if trans_b else w  # [K, N]
        c = g.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else np.zeros(())
        c2 = node.attrs["beta"] * c.astype(np.float64) + node.attrs["alpha"] * (shift @ k_rows)
        w2 = w * (scale[None, :] if trans_b else scale[:, None])
        _set(g, node, w2, c2)
        node.attrs = dict(node.attrs, beta=1.0)
    else:  # MatMul, B [K, N]
        w2 = w * scale[:, None]
        if not has_shift:
            _set(g, node, w2, None)
        elif rank == 2:
            _to_gemm(g, node, w2, shift @ w)
        else:
            return False
    node.inputs[0] = x
    node.origin = e.sources() + node.sources()
    return True


def _ends_a_norm(g: Graph, producers: dict[str, Node], e: Node) -> bool:
    """e ends a chain of constant affine ops that starts at a product or quotient of two run-time
    tensors: the tail of a decomposed LayerNorm (Div(centred, std) -> Mul(gamma) -> Add(beta)) or erf
    Gelu (Mul(x, 1 + erf) -> Mul(0.5)). FuseNorm fuses those on the host graph, after partitioning:
    folding their last ops into the next MatMul would leave it a form it does not know."""
    seen = 0
    while e is not None and e.op in _AFFINE and seen < 16:
        runtime = [i for i in e.inputs if g.const(i) is None]
        if len(runtime) != 1:
            return seen > 0 and e.op in ("Mul", "Div") and len(runtime) == 2
        e, seen = producers.get(runtime[0]), seen + 1
    return False


# --- rewriting ----------------------------------------------------------------------------------------

def _bias(g: Graph, node: Node, n: int) -> np.ndarray:
    b = g.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    return np.zeros(n) if b is None else b.astype(np.float64)


def _const(g: Graph, base: str, value: np.ndarray) -> str:
    name = fresh_tensor_name(g, base)
    value = np.ascontiguousarray(value, dtype=np.float32)
    g.tensors[name] = Tensor(name, tuple(value.shape), "float32", value)
    return name


def _set(g: Graph, node: Node, w: np.ndarray, bias: np.ndarray | None) -> None:
    """New constants for the node's weights (input 1) and, unless None, its bias (input 2)."""
    inputs = [node.inputs[0], _const(g, f"{node.name}_W", w)]
    if bias is not None:
        inputs.append(_const(g, f"{node.name}_B", bias))
    elif len(node.inputs) > 2:
        inputs.append(node.inputs[2])
    node.inputs = inputs + list(node.inputs[3:])


def _to_gemm(g: Graph, node: Node, w: np.ndarray, bias: np.ndarray) -> None:
    """MatMul(A, B) with 2-D A becomes Gemm(A, B', bias)."""
    node.op = "Gemm"
    node.attrs = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}
    node.inputs = node.inputs[:2]
    _set(g, node, w, bias)
