"""Host ops of the 'tflite_hybrid' family: TFLite's hybrid kernels (float32 activations, int8 weights: what the
converter writes for dynamic-range quantisation), runtime_c/kernels/tflite_hybrid/. The TFLite frontend
(aot/frontend/tflite/hybrid.py) writes a TflHybridQuantize of the float input, then the op reading its int8
values, scales and offsets; the weights stay int8 (a quarter of float32's flash), each row's sum is computed
here once for the asymmetric offset's share of the products.
"""

from __future__ import annotations

import math

import numpy as np

from aot.csource.format import c_float, c_int
from aot.kernels.base import HostOp, NodeContext


def _emit_quantize(ctx: NodeContext) -> None:
    x = ctx.inputs[0]
    q, scale, offset = ctx.outputs
    size = int(ctx.attrs["size"])
    batches = math.prod(ctx.shape(x)) // size
    kind = "asymmetric" if ctx.attrs["asymmetric"] else "symmetric"
    p = ctx.params("aotc_tfl_hybrid_quantize_params", {
        "batches": c_int(batches), "size": c_int(size), "asymmetric": c_int(int(ctx.attrs["asymmetric"]))},
        comment=f"{list(ctx.shape(x))} to int8, {batches} batch(es) of {size} each with its own {kind} scale, "
                "at run time (LiteRT's hybrid kernels)")
    ctx.call("aotc_tfl_hybrid_quantize_f32", p, ctx.ptr(x), ctx.ptr(q), ctx.ptr(scale), ctx.ptr(offset))


def _w_scale(ctx: NodeContext, channels: int) -> str:
    scale = np.broadcast_to(np.asarray(ctx.attrs["w_scale"], np.float32).reshape(-1), (channels,))
    return ctx.const_array("w_scale", np.ascontiguousarray(scale), "the int8 weights' scale per output channel")


def _bias(ctx: NodeContext) -> str:
    return ctx.ptr(ctx.inputs[4]) if len(ctx.inputs) > 4 and ctx.inputs[4] else "NULL"


def _args(ctx: NodeContext) -> list[str]:
    return [ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]), ctx.ptr(ctx.inputs[2]), ctx.ptr(ctx.inputs[3]),
            _bias(ctx), ctx.ptr(ctx.outputs[0])]


def _emit_fc(ctx: NodeContext) -> None:
    w = ctx.const(ctx.inputs[3])
    out, depth = w.shape
    rows = math.prod(ctx.shape(ctx.inputs[0])) // depth
    sums = w.astype(np.int64).sum(axis=1).astype(np.int32)
    p = ctx.params("aotc_tfl_hybrid_fc_params", {
        "rows": c_int(rows), "in": c_int(depth), "out": c_int(out), "w_scale": _w_scale(ctx, out),
        "w_sums": ctx.const_array("w_sums", sums, "the sum of each row of the int8 weights"),
        "y_min": c_float(ctx.attrs["y_min"]), "y_max": c_float(ctx.attrs["y_max"])},
        comment=f"hybrid FULLY_CONNECTED [{rows}, {depth}] x int8 [{out}, {depth}]^T, int32 sums scaled to float")
    ctx.call("aotc_tfl_hybrid_fc_f32", p, *_args(ctx))


def _channel_sums(w: np.ndarray, depthwise: bool) -> np.ndarray:
    """Each output channel's weights summed over its whole filter: a conv's [O, kh, kw, I] over all but O, a
    depthwise conv's [1, kh, kw, O] over all but O."""
    w = w.astype(np.int64)
    return (w.reshape(-1, w.shape[3]).sum(axis=0) if depthwise else w.reshape(w.shape[0], -1).sum(axis=1)).astype(
        np.int32)


def _emit_conv(ctx: NodeContext) -> None:
    a = ctx.attrs
    n, h, w, c = ctx.shape(ctx.inputs[0])
    _, oh, ow, oc = ctx.shape(ctx.outputs[0])
    depthwise = ctx.node.op == "TflHybridDepthwiseConv2D"
    transpose = ctx.node.op == "TflHybridTransposeConv"
    weights = ctx.const(ctx.inputs[3])
    p = ctx.params("aotc_tfl_hybrid_conv_params", {
        "n": c_int(n), "h": c_int(h), "w": c_int(w), "c": c_int(c), "oh": c_int(oh), "ow": c_int(ow),
        "oc": c_int(oc), "kh": c_int(a["kernel"][0]), "kw": c_int(a["kernel"][1]), "sh": c_int(a["strides"][0]),
        "sw": c_int(a["strides"][1]), "dh": c_int(a["dilations"][0]), "dw": c_int(a["dilations"][1]),
        "pad_top": c_int(a["pads"][0]), "pad_left": c_int(a["pads"][1]),
        "depth_multiplier": c_int(oc // c if depthwise else 1), "in_c": c_int(1 if depthwise else weights.shape[3]),
        "order": c_int(int(a["order"])), "w_scale": _w_scale(ctx, oc),
        "w_sums": "NULL" if transpose else ctx.const_array("w_sums", _channel_sums(weights, depthwise),
                                                           "each output channel's filter summed over every tap"),
        "y_min": c_float(a["y_min"]), "y_max": c_float(a["y_max"])},
        comment=f"hybrid {_TFL[ctx.node.op]} NHWC {[n, h, w, c]} -> {[n, oh, ow, oc]}, int8 weights, int32 sums "
                "scaled to float")
    ctx.call(_FN[ctx.node.op], p, *_args(ctx))


_TFL = {"TflHybridConv2D": "CONV_2D", "TflHybridDepthwiseConv2D": "DEPTHWISE_CONV_2D",
        "TflHybridTransposeConv": "TRANSPOSE_CONV"}
_FN = {"TflHybridConv2D": "aotc_tfl_hybrid_conv_f32", "TflHybridDepthwiseConv2D": "aotc_tfl_hybrid_depthwise_f32",
       "TflHybridTransposeConv": "aotc_tfl_hybrid_transpose_conv_f32"}


OPS: dict[str, HostOp] = {
    "TflHybridQuantize": HostOp(_emit_quantize, family="tflite_hybrid", dtypes=("float32",)),
    "TflHybridFullyConnected": HostOp(_emit_fc, family="tflite_hybrid", dtypes=("int8",)),
    "TflHybridConv2D": HostOp(_emit_conv, family="tflite_hybrid", dtypes=("int8",)),
    "TflHybridDepthwiseConv2D": HostOp(_emit_conv, family="tflite_hybrid", dtypes=("int8",)),
    "TflHybridTransposeConv": HostOp(_emit_conv, family="tflite_hybrid", dtypes=("int8",)),
}
