"""What the device computes, per node of a partitioned function: one layer record each.

`layer_of(node, graph)` turns an ONNX node or one of accel_sim's composites into a small
record holding exactly what lowering needs (geometry, packed weights, fused activation).
The checkers build the same records to ask the tiling planner whether a node fits, so what
is accepted and what is lowered cannot disagree.

8-bit layers (the integer ops aotc lowers int8 models to: QLinearConv, QGemm, QLinearMatMul,
QLinearGlobalAveragePool, QLinearAdd, MaxPool on integers) carry a `Quant` record: their
compile-time requantisation constants, computed exactly as aotc's host kernels compute them
(aot/kernels/quant.py, aot/qmath.py), so the device's results are bit-exact with the host's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node
from aot.qmath import INT_RANGE, global_avgpool_scale, qadd_constants, requant_scale
from aot.vendor.accel_sim.tiling import ConvGeom

Act = tuple[float, float] | None  # a fused clamp [lo, hi] (ReLU is [0, inf]); None: none
VIEW_OPS = ("Flatten", "Reshape", "Squeeze", "Unsqueeze")
BINARY_OPS = ("Add", "Sub", "Mul", "Max")
POOL_OPS = ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "QLinearGlobalAveragePool")
EIGHT_BIT = ("int8", "uint8")


@dataclass
class Quant:
    """The requantisation of an 8-bit layer: y = y_zero + round_half_even(clamp((float)acc * scale[c],
    lo - y_zero, hi - y_zero)), acc summing (x - x_zero) * w in int32 (aotc_requant)."""

    dtype: str  # "int8" | "uint8": the activations, in and out (weights are int8)
    x_zero: int
    y_zero: int
    scale: np.ndarray  # float32 [channels]
    lo: int  # the output's integer range, narrowed by a fused activation
    hi: int

    @property
    def clipped(self) -> bool:
        return (self.lo, self.hi) != INT_RANGE[self.dtype]


@dataclass
class QAdd:
    """onnxruntime's QLinearAdd (MlasQLinearAdd, both operands varying): y = round_half_even(
    clamp(fma(a, a_mult, fma(b, b_mult, bias)), lo, hi)), the zero points folded into the bias."""

    dtype: str
    a_mult: np.float32
    b_mult: np.float32
    bias: np.float32
    lo: int
    hi: int

    def params(self) -> np.ndarray:
        """The device's descriptor for VADD with REQUANT: a_mult, b_mult, bias (float32)."""
        return np.array([self.a_mult, self.b_mult, self.bias], np.float32)


@dataclass
class ConvLayer:
    x: str
    y: str
    geom: ConvGeom
    weights: np.ndarray  # float32 [oc, c/groups, kh, kw] (int8 when quant)
    bias: np.ndarray | None  # float32 [oc] (int32 when quant)
    act: Act = None
    residual: str | None = None  # a tensor of y's shape added before the activation
    quant: Quant | None = None
    qadd: QAdd | None = None  # with residual: the quantized add of the requantised output and it
    residual_first: bool = False  # the residual is the QLinearAdd's first operand (a), the conv's b
    # a fused MaxPool (accel_sim.fuse_pool): its window (kh, kw), equal to its stride, no padding; y is
    # the pooled tensor, each output tile pooled in the scratchpad before it is stored
    pool: tuple[int, int] | None = None

    def reads(self) -> list[str]:
        return [self.x] + ([self.residual] if self.residual else [])


@dataclass
class GemmLayer:
    a: str  # [m, k] (leading dimensions folded into m)
    y: str
    m: int
    n: int
    k: int
    weights: np.ndarray  # float32 [n, k] (int8 when quant)
    bias: np.ndarray | None  # float32 [n] (int32 when quant)
    act: Act = None
    quant: Quant | None = None

    def reads(self) -> list[str]:
        return [self.a]


@dataclass
class PoolLayer:
    x: str
    y: str
    geom: ConvGeom  # oc == c
    average: bool
    dtype: str = "float32"
    quant: Quant | None = None  # a requantised sum of the window (QLinearGlobalAveragePool)

    def reads(self) -> list[str]:
        return [self.x]


@dataclass
class BinaryLayer:
    """y[p, q, r] = a[p, q, r] op b[q]: b varies along one contiguous block of y's axes.
    `extra` operations follow on the same tile (BatchNormalization: a Mul, then an Add)."""

    op: str  # Add | Mul | Max (Sub with a constant is an Add of its negation)
    a: str
    b: str | np.ndarray  # a tensor name, or constant data (float32 [q])
    y: str
    pqr: tuple[int, int, int]
    act: Act = None
    extra: list[tuple[str, np.ndarray]] = field(default_factory=list)  # (op, constant [q]) applied next
    qadd: QAdd | None = None  # QLinearAdd: b of a's shape

    def reads(self) -> list[str]:
        return [self.a] + ([self.b] if isinstance(self.b, str) else [])


@dataclass
class ClipLayer:
    x: str
    y: str
    size: int
    act: tuple[float, float]

    def reads(self) -> list[str]:
        return [self.x]


@dataclass
class ViewLayer:
    """Same bytes, another shape: no work unless the result must be copied out."""

    x: str
    y: str

    def reads(self) -> list[str]:
        return [self.x]


@dataclass
class TransposeLayer:
    x: str
    y: str
    shape: tuple[int, ...]  # x's
    perm: tuple[int, ...]
    itemsize: int = 4

    def reads(self) -> list[str]:
        return [self.x]


@dataclass
class ConcatLayer:
    xs: list[str]
    y: str
    outer: int  # product of y's dimensions before the axis
    chunks: list[int]  # bytes each input contributes per outer index
    row: int  # bytes of y per outer index

    def reads(self) -> list[str]:
        return list(self.xs)


Layer = ConvLayer | GemmLayer | PoolLayer | BinaryLayer | ClipLayer | ViewLayer | TransposeLayer | ConcatLayer


def activation(node: Node) -> tuple[float, float]:
    if node.op == "Relu":
        return 0.0, math.inf
    return float(node.attrs.get("min", -math.inf)), float(node.attrs.get("max", math.inf))


def conv_geom(node: Node, graph: Graph) -> ConvGeom:
    n, c, h, w = graph.tensors[node.inputs[0]].shape
    _, oc, oh, ow = graph.tensors[node.outputs[0]].shape
    a = node.attrs
    kh, kw = a["kernel_shape"]
    return ConvGeom(n, c, h, w, oc, oh, ow, kh, kw, *a["strides"], *a["dilations"], a["pads"][0], a["pads"][1],
                    a.get("group", 1))


def pool_geom(node: Node, graph: Graph) -> ConvGeom:
    n, c, h, w = graph.tensors[node.inputs[0]].shape
    oh, ow = graph.tensors[node.outputs[0]].shape[2:]
    if "Global" in node.op:
        return ConvGeom(n, c, h, w, c, 1, 1, h, w, groups=c)
    a = node.attrs
    kh, kw = a["kernel_shape"]
    return ConvGeom(n, c, h, w, c, oh, ow, kh, kw, *a["strides"], *a["dilations"], a["pads"][0], a["pads"][1], c)


def broadcast_pqr(y_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> tuple[int, int, int] | None:
    """y viewed as [p, q, r] with b indexed by q alone, or None when b's broadcast is not of
    that form (b equal to y on one contiguous block of axes and 1 elsewhere)."""
    if len(b_shape) > len(y_shape):
        return None
    b = (1,) * (len(y_shape) - len(b_shape)) + tuple(b_shape)
    varying = [k for k, (bd, yd) in enumerate(zip(b, y_shape, strict=True)) if bd != 1]
    if any(b[k] != y_shape[k] for k in varying):
        return None
    if not varying:
        return int(np.prod(y_shape, dtype=np.int64)), 1, 1
    lo, hi = varying[0], varying[-1]
    if any(b[k] != y_shape[k] for k in range(lo, hi + 1)):
        return None
    p = int(np.prod(y_shape[:lo], dtype=np.int64))
    q = int(np.prod(y_shape[lo:hi + 1], dtype=np.int64))
    return p, q, int(np.prod(y_shape[hi + 1:], dtype=np.int64))


def binary_operands(node: Node, graph: Graph) -> tuple[str, str, tuple[int, int, int]] | None:
    """(a, b, pqr) with a of y's shape and b broadcast along q, swapping commutative operands
    when needed; None when the broadcast is not one the vector unit can address."""
    y = graph.tensors[node.outputs[0]].shape
    x0, x1 = node.inputs[0], node.inputs[1]
    orders = [(x0, x1)] + ([(x1, x0)] if node.op != "Sub" else [])
    for a, b in orders:
        if graph.tensors[a].shape != y or graph.const(a) is not None:
            continue
        pqr = broadcast_pqr(y, graph.tensors[b].shape)
        if pqr is not None:
            return a, b, pqr
    return None


def batchnorm_affine(node: Node, graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Inference BatchNormalization as y = x * scale[c] + shift[c]."""
    gamma, beta, mean, var = (np.asarray(graph.const(i), np.float32) for i in node.inputs[1:5])
    scale = gamma / np.sqrt(var + np.float32(node.attrs["epsilon"]))
    return scale.astype(np.float32), (beta - mean * scale).astype(np.float32)


def conv_layer(conv: Node, graph: Graph, y: str, act: Act = None, residual: str | None = None) -> ConvLayer:
    w = graph.const(conv.inputs[1])
    b = graph.const(conv.inputs[2]) if len(conv.inputs) > 2 and conv.inputs[2] else None
    return ConvLayer(conv.inputs[0], y, conv_geom(conv, graph), np.asarray(w, np.float32),
                     None if b is None else np.asarray(b, np.float32).reshape(-1), act, residual)


def gemm_layer(core: Node, graph: Graph, y: str, bias_add: Node | None = None, act: Act = None) -> GemmLayer:
    """Gemm (transA=0, constant B and C) or MatMul (+ Add of a constant bias) as a[m,k].w[n,k]^T + bias."""
    a_shape = graph.tensors[core.inputs[0]].shape
    k = a_shape[-1]
    m = int(np.prod(a_shape[:-1], dtype=np.int64))
    bmat = np.asarray(graph.const(core.inputs[1]), np.float32)
    if core.op == "Gemm":
        at = core.attrs
        w = (bmat if at["transB"] else bmat.T) * np.float32(at["alpha"])
        c = graph.const(core.inputs[2]) if len(core.inputs) > 2 and core.inputs[2] else None
        bias = None if c is None else np.broadcast_to(np.asarray(c, np.float32).reshape(-1) * np.float32(at["beta"]),
                                                      (w.shape[0],))
    else:
        w, bias = bmat.T, None
    if bias_add is not None:
        c = next(graph.const(i) for i in bias_add.inputs if i != core.outputs[0])
        bias = np.broadcast_to(np.asarray(c, np.float32).reshape(-1), (w.shape[0],))
    return GemmLayer(core.inputs[0], y, m, w.shape[0], k, np.ascontiguousarray(w, np.float32),
                     None if bias is None else np.ascontiguousarray(bias, np.float32), act)


# --- 8-bit layers: the constants aotc's host kernels use (aot/kernels/quant.py) ------------------

def _scalar(graph: Graph, name: str) -> float | int:
    return graph.const(name).reshape(-1)[0].item()


def int8_weights(w: np.ndarray, w_zero: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights as int8 and their zero points as int32: uint8 weights less 128 with their zero
    points less 128, so w - w_zero is unchanged (as the host kernels store them)."""
    if w.dtype == np.uint8:
        return (w.astype(np.int16) - 128).astype(np.int8), w_zero.astype(np.int32) - 128
    return w.astype(np.int8), w_zero.astype(np.int32)


def out_range(node: Node, graph: Graph) -> tuple[int, int]:
    """The output's integer range, narrowed by a fused Relu / Clip (the node's qmin / qmax)."""
    lo, hi = INT_RANGE[graph.tensors[node.outputs[0]].dtype]
    return max(lo, node.attrs.get("qmin", lo)), min(hi, node.attrs.get("qmax", hi))


def qmac_inputs(node: Node) -> dict[str, str]:
    """The named inputs of QLinearConv, QGemm and QLinearMatMul (a / x, its scale and zero, the
    weights' b, scale and zero, y's, and the bias, '' when absent)."""
    ins = list(node.inputs) + [""] * (9 - len(node.inputs))
    if node.op == "QGemm":
        keys = ("x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "bias", "y_scale", "y_zero")
    else:
        keys = ("x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "bias")
    return dict(zip(keys, ins, strict=True))


def qweights(node: Node, graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(int8 weights as the device reads them, int32 zero points per output channel): conv
    [oc, c/g, kh, kw]; QGemm / QLinearMatMul [n, k]."""
    names = qmac_inputs(node)
    w = graph.const(names["w"])
    if node.op != "QLinearConv":
        w = np.ascontiguousarray(w if node.attrs.get("transB", 0) else w.T)
    zero = np.broadcast_to(np.asarray(graph.const(names["w_zero"])).reshape(-1), (w.shape[0],))
    return int8_weights(w, zero)


def _quant(node: Node, graph: Graph, channels: int) -> Quant:
    names = qmac_inputs(node)
    scale = requant_scale(_scalar(graph, names["x_scale"]), graph.const(names["w_scale"]),
                          _scalar(graph, names["y_scale"]))
    return Quant(graph.tensors[names["x"]].dtype, int(_scalar(graph, names["x_zero"])),
                 int(_scalar(graph, names["y_zero"])), np.ascontiguousarray(np.broadcast_to(scale, (channels,)),
                                                                             np.float32), *out_range(node, graph))


def _qbias(node: Node, graph: Graph, channels: int) -> np.ndarray | None:
    name = qmac_inputs(node)["bias"]
    if not name:
        return None
    return np.ascontiguousarray(np.broadcast_to(np.asarray(graph.const(name)).reshape(-1), (channels,)), np.int32)


def qconv_layer(conv: Node, graph: Graph, y: str, residual: str | None = None, qadd: QAdd | None = None,
                residual_first: bool = False) -> ConvLayer:
    g = conv_geom(conv, graph)
    w, _ = qweights(conv, graph)
    return ConvLayer(conv.inputs[0], y, g, w, _qbias(conv, graph, g.oc), None, residual, _quant(conv, graph, g.oc),
                     qadd, residual_first)


def qgemm_layer(node: Node, graph: Graph, y: str) -> GemmLayer:
    a_shape = graph.tensors[node.inputs[0]].shape
    w, _ = qweights(node, graph)
    n, k = w.shape
    return GemmLayer(node.inputs[0], y, int(np.prod(a_shape[:-1], dtype=np.int64)), n, k, w, _qbias(node, graph, n),
                     None, _quant(node, graph, n))


def qgap_layer(node: Node, graph: Graph, y: str) -> PoolLayer:
    """QLinearGlobalAveragePool: each plane's sum less x_zero * size, requantised with the scale
    x_scale / (y_scale * size) (float32, in that order)."""
    x = graph.tensors[node.inputs[0]]
    size = int(np.prod(x.shape[2:], dtype=np.int64))
    scale = global_avgpool_scale(_scalar(graph, node.inputs[1]), _scalar(graph, node.inputs[3]), size)
    q = Quant(x.dtype, int(_scalar(graph, node.inputs[2])), int(_scalar(graph, node.inputs[4])),
              np.full(x.shape[1], scale, np.float32), *INT_RANGE[x.dtype])
    return PoolLayer(node.inputs[0], y, pool_geom(node, graph), False, x.dtype, q)


def qadd_params(node: Node, graph: Graph) -> QAdd:
    """QLinearAdd's constants: the scales' ratios to the output's, the zero points in the bias."""
    a_scale, b_scale, y_scale = (np.float32(_scalar(graph, node.inputs[k])) for k in (1, 4, 6))
    a_zero, b_zero = int(_scalar(graph, node.inputs[2])), int(_scalar(graph, node.inputs[5]))
    y_zero = int(_scalar(graph, node.inputs[7]))
    a_mult, b_mult, bias = qadd_constants(a_scale, a_zero, b_scale, b_zero, y_scale, y_zero)
    return QAdd(graph.tensors[node.outputs[0]].dtype, a_mult, b_mult, bias, *out_range(node, graph))


def layer_of(node: Node, graph: Graph) -> Layer:
    """The layer record of a node of an accel_sim function (composite or single op)."""
    op = node.op
    y = node.outputs[0]
    if op == "Composite":
        body = node.attrs["body"]
        nodes = {n.op: n for n in body.nodes}
        acts = [n for n in body.nodes if n.op in ("Relu", "Clip")]
        act = activation(acts[0]) if acts else None
        if "QLinearConv" in nodes:  # qconv_add: the requantised output, then a quantized add
            conv, add = nodes["QLinearConv"], nodes["QLinearAdd"]
            first = add.inputs[0] != conv.outputs[0]
            residual = add.inputs[0] if first else add.inputs[3]
            return qconv_layer(conv, body, y, residual, qadd_params(add, body), first)
        if "Conv" in nodes:
            conv = nodes["Conv"]
            add = nodes.get("Add")
            residual = next(i for i in add.inputs if i != conv.outputs[0]) if add else None
            return conv_layer(conv, body, y, act, residual)
        core = nodes.get("Gemm") or nodes.get("MatMul")
        if core is not None:
            return gemm_layer(core, body, y, nodes.get("Add"), act)
        binary = next(n for n in body.nodes if n.op in (*BINARY_OPS, "BatchNormalization"))
        layer = layer_of(binary, body)
        assert isinstance(layer, BinaryLayer)
        layer.y, layer.act = y, act
        return layer
    if op == "Conv":
        return conv_layer(node, graph, y)
    if op == "QLinearConv":
        return qconv_layer(node, graph, y)
    if op in ("Gemm", "MatMul"):
        return gemm_layer(node, graph, y)
    if op in ("QGemm", "QLinearMatMul"):
        return qgemm_layer(node, graph, y)
    if op == "QLinearGlobalAveragePool":
        return qgap_layer(node, graph, y)
    if op in POOL_OPS:
        return PoolLayer(node.inputs[0], y, pool_geom(node, graph), "Average" in op, graph.tensors[y].dtype)
    if op == "QLinearAdd":
        a, b = node.inputs[0], node.inputs[3]
        pqr = broadcast_pqr(graph.tensors[y].shape, graph.tensors[b].shape)
        assert pqr is not None
        return BinaryLayer("Add", a, b, y, pqr, qadd=qadd_params(node, graph))
    if op in BINARY_OPS:
        found = binary_operands(node, graph)
        if found is None:
            raise AotcError("accel_sim cannot address this broadcast", node=node)
        a, b, pqr = found
        data = graph.const(b)
        if data is not None:
            b_arr = np.ascontiguousarray(np.asarray(data, np.float32).reshape(-1))
            return BinaryLayer("Add" if op == "Sub" else op, a, -b_arr if op == "Sub" else b_arr, y, pqr)
        return BinaryLayer(op, a, b, y, pqr)
    if op == "BatchNormalization":
        scale, shift = batchnorm_affine(node, graph)
        pqr = broadcast_pqr(graph.tensors[y].shape, (1, scale.size) + (1,) * (len(graph.tensors[y].shape) - 2))
        assert pqr is not None
        return BinaryLayer("Mul", node.inputs[0], scale, y, pqr, extra=[("Add", shift)])
    if op == "Transpose":
        return TransposeLayer(node.inputs[0], y, graph.tensors[node.inputs[0]].shape, tuple(node.attrs["perm"]),
                              graph.tensors[y].itemsize)
    if op in ("Relu", "Clip"):
        return ClipLayer(node.inputs[0], y, graph.tensors[y].size, activation(node))
    if op in VIEW_OPS:
        return ViewLayer(node.inputs[0], y)
    if op == "Concat":
        shape = graph.tensors[y].shape
        axis = node.attrs["axis"]
        inner = int(np.prod(shape[axis + 1:], dtype=np.int64)) * graph.tensors[y].itemsize
        return ConcatLayer(list(node.inputs), y, int(np.prod(shape[:axis], dtype=np.int64)),
                           [graph.tensors[x].shape[axis] * inner for x in node.inputs], shape[axis] * inner)
    raise AotcError("accel_sim has no lowering for this op", node=node)
