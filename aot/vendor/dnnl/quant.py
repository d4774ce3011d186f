"""int8 ops for oneDNN: QLinearConv, QGemm and QLinearMatMul as oneDNN's integer primitives.

What aotc's int8 ops compute (aot/kernels/quant.py, runtime_c/kernels/quant/aotc_quant.h; onnxruntime's
arithmetic) is, per output channel c,

    acc = sum (x - x_zero) * (w - w_zero[c]) + bias[c]                          (int32)
    y   = round_half_even(clamp((float)acc * scale[c], qmin - y_zero, qmax - y_zero)) + y_zero
    scale[c] = (x_scale * w_scale[c]) / y_scale                                 (float32)

and what oneDNN 3.x computes for an integer convolution, matmul or inner product is
(doc/programming_model/attributes_quantization.md, src/cpu/ref_convolution_int8.cpp)

    acc = sum (x - zp_src) * w                                                  (int32)
    d   = (float)acc * (scale_src * scale_wei[c]) + bias_f32[c];  d = post_ops(d)
    y   = saturate(round_nearest_even(d / scale_dst + zp_dst))

so each op is given, to compute exactly what aotc's host kernels compute:

- x_zero as the source zero point (oneDNN's compensation for it is integer: exact);
- no scales at all, so that d = (float)acc + bias, the int32 bias given as float32 (exact while
  |acc|, |bias| and their sum are below 2^24, where (float)(acc + bias) is exact too);
- the requantisation as post-ops: a binary multiply by scale[c] (one float32 product, as the host
  does; oneDNN's weight scales would multiply before the bias is added, and its destination scale
  is applied as a multiply by its inverse), a clip to [qmin - y_zero, qmax - y_zero] for a fused
  Relu / Clip (qmin / qmax narrower than the type's range), and a round half to even when
  y_zero is not 0, so that oneDNN adds the zero point to a whole number (adding it to the
  unrounded float could round a value next to a half-integer onto it);
- y_zero as the destination zero point; oneDNN then saturates and converts (exactly).

Weights must have a zero point of 0 (symmetric, as onnxruntime's quantizer writes int8 weights):
oneDNN's convolution has no weight zero points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aot.ir import Graph, Node
from aot.qmath import INT_RANGE, qadd_constants, requant_scale

INT8 = ("int8", "uint8")


@dataclass
class QLinear:
    """An int8 conv or dense layer as oneDNN takes it (see the module docstring)."""

    x: str
    y: str
    weights: np.ndarray  # int8: [OC, IC/g, k...] for a conv, [K, N] for a dense layer
    scale: np.ndarray  # float32 [C]: the requantisation scale of each output channel
    bias: np.ndarray | None  # float32 [C]: the int32 bias as float32 (None: no bias)
    x_zero: int
    y_zero: int
    clip: tuple[float, float] | None  # (lo, hi) of the scaled result, when narrower than the type


def _scalar(graph: Graph, name: str) -> float | int | None:
    value = graph.const(name) if name else None
    return None if value is None or value.size != 1 else value.reshape(-1)[0].item()


def int8_weights(w: np.ndarray, w_zero: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint8 weights less 128 with their zero points less 128 (w - w_zero unchanged), as aotc's
    host kernels store them; int8 weights as they are."""
    if w.dtype == np.uint8:
        return (w.astype(np.int16) - 128).astype(np.int8), w_zero.astype(np.int32) - 128
    return w.astype(np.int8), w_zero.astype(np.int32)


def gemm_inputs(node: Node) -> dict[str, str]:
    """The named inputs of QGemm and QLinearMatMul (which has no bias)."""
    ins = list(node.inputs) + [""] * (9 - len(node.inputs))
    if node.op == "QLinearMatMul":
        keys = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero", "bias")
    else:
        keys = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "bias", "y_scale", "y_zero")
    return dict(zip(keys, ins, strict=True))


def _names(node: Node) -> dict[str, str]:
    if node.op == "QLinearConv":
        ins = list(node.inputs) + [""] * (9 - len(node.inputs))
        keys = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero", "bias")
        return dict(zip(keys, ins, strict=True))
    return gemm_inputs(node)


def why_not(node: Node, graph: Graph) -> str | None:
    """Why oneDNN cannot run this QLinearConv / QGemm / QLinearMatMul as aotc defines it (None: it can)."""
    names = _names(node)
    x, y = graph.tensors[names["a"]], graph.tensors[node.outputs[0]]
    if x.dtype not in INT8 or y.dtype != x.dtype:
        return f"dnnl's int8 ops take int8 or uint8 activations of one type ({x.dtype} -> {y.dtype})"
    w = graph.const(names["b"])
    if w is None or w.dtype.name not in INT8:
        return "dnnl needs constant int8 or uint8 weights"
    for k in ("a_scale", "a_zero", "y_scale", "y_zero"):
        if not names[k] or _scalar(graph, names[k]) is None:
            return f"dnnl needs a per-tensor {k.replace('a_', 'input ').replace('y_', 'output ')}"
    if not np.float32(_scalar(graph, names["y_scale"])) > 0:
        return "dnnl needs a positive output scale"
    if names["bias"] and graph.const(names["bias"]) is None:
        return "dnnl needs a constant bias"
    channels = w.shape[0] if node.op == "QLinearConv" else y.shape[-1]
    w_scale = graph.const(names["b_scale"])
    w_zero = graph.const(names["b_zero"])
    if w_scale is None or w_scale.size not in (1, channels) or w_zero is None or w_zero.size not in (1, channels):
        return "dnnl needs constant weight scales and zero points, per tensor or per output channel"
    _, zeros = int8_weights(w, w_zero.reshape(-1))
    if zeros.any():
        return "dnnl takes weights with a zero point of 0 only (symmetric int8, as onnxruntime writes them)"
    return None


def _output_range(node: Node, graph: Graph, y_zero: int) -> tuple[float, float] | None:
    lo, hi = INT_RANGE[graph.tensors[node.outputs[0]].dtype]
    qlo, qhi = max(lo, node.attrs.get("qmin", lo)), min(hi, node.attrs.get("qmax", hi))
    if (qlo, qhi) == (lo, hi):
        return None
    return float(qlo - y_zero), float(qhi - y_zero)


def qlinear(node: Node, graph: Graph) -> QLinear:
    """The oneDNN form of an accepted (why_not is None) QLinearConv, QGemm or QLinearMatMul."""
    names = _names(node)
    w = graph.const(names["b"])
    if node.op == "QGemm" and node.attrs.get("transB", 0):
        w = w.T
    w_zero = graph.const(names["b_zero"]).reshape(-1)
    weights, _ = int8_weights(np.ascontiguousarray(w), w_zero)
    channels = weights.shape[0] if node.op == "QLinearConv" else weights.shape[1]
    scale = np.broadcast_to(requant_scale(_scalar(graph, names["a_scale"]), graph.const(names["b_scale"]),
                                          _scalar(graph, names["y_scale"])), (channels,)).astype(np.float32)
    bias = None
    if names["bias"]:
        bias = np.broadcast_to(graph.const(names["bias"]).reshape(-1), (channels,)).astype(np.float32)
    y_zero = int(_scalar(graph, names["y_zero"]))
    return QLinear(names["a"], node.outputs[0], np.ascontiguousarray(weights), np.ascontiguousarray(scale), bias,
                   int(_scalar(graph, names["a_zero"])), y_zero, _output_range(node, graph, y_zero))


@dataclass
class QAdd:
    """QLinearAdd as onnxruntime computes it (MlasQLinearAdd), and oneDNN's binary add with it:

        y = round_half_even(clamp(a * a_mult + b * b_mult + bias, qmin, qmax))
        a_mult = a_scale / y_scale, b_mult = b_scale / y_scale,
        bias = y_zero - fma(a_mult, a_zero, b_mult * b_zero)   (float32: aot/qmath.py qadd_constants)

    on the integers a and b as they are: their scales are oneDNN's source scales, the bias a linear
    post-op (1 * d + bias), and a fused Relu / Clip (qmin / qmax) a clip post-op after it. onnxruntime
    sums with fused multiply-adds, oneDNN with separate products and sums: float32 roundings that
    move a result only when it lies within a few ulps of a half-integer."""

    a_mult: float
    b_mult: float
    bias: float
    clip: tuple[float, float] | None


def qadd(node: Node, graph: Graph) -> QAdd:
    a_scale, a_zero, b_scale, b_zero, y_scale, y_zero = (
        graph.const(node.inputs[k]).reshape(-1)[0].item() for k in (1, 2, 4, 5, 6, 7))
    a_mult, b_mult, bias = qadd_constants(a_scale, a_zero, b_scale, b_zero, y_scale, y_zero)
    lo, hi = INT_RANGE[graph.tensors[node.outputs[0]].dtype]
    qlo, qhi = max(lo, node.attrs.get("qmin", lo)), min(hi, node.attrs.get("qmax", hi))
    clip = None if (qlo, qhi) == (lo, hi) else (float(qlo), float(qhi))
    return QAdd(float(a_mult), float(b_mult), float(bias), clip)
