"""Host ops of the 'quant' family for dynamic quantization (what onnxruntime's quantize_dynamic writes):
DynamicQuantizeLinear, MatMulInteger and ConvInteger, on the quant family's kernels
(runtime_c/kernels/quant/); the static QLinear ops are quant.py's."""

from __future__ import annotations

import math

import numpy as np

from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext
from aot.kernels.quant import INT8, SUFFIX, check_8bit_inputs, conv_geometry, int8_weights

# --- dynamic quantization: DynamicQuantizeLinear, MatMulInteger, ConvInteger -------------------

def _emit_dynamic_quantize(ctx: NodeContext) -> None:
    x, (y, scale, zero) = ctx.inputs[0], ctx.outputs[:3]
    ctx.comment("quantized with the scale and zero point of this input's own range (computed at run time)")
    ctx.call("aotc_dynamic_quantize_u8", str(math.prod(ctx.shape(x))), ctx.ptr(x), ctx.ptr(y),
             ctx.ptr(scale) if scale else "&(float){0}", ctx.ptr(zero) if zero else "&(uint8_t){0}")


def _zero_pointer(ctx: NodeContext, k: int) -> str:
    """A zero-point input read at run time (DynamicQuantizeLinear's output) or constant; NULL if omitted."""
    return ctx.ptr(ctx.inputs[k]) if len(ctx.inputs) > k and ctx.inputs[k] else "NULL"


def _emit_matmul_integer(ctx: NodeContext) -> None:
    a, b, y = ctx.inputs[0], ctx.inputs[1], ctx.outputs[0]
    b_kn = ctx.const(b)
    k, n = b_kn.shape
    b_zero = ctx.const(ctx.inputs[3]) if len(ctx.inputs) > 3 and ctx.inputs[3] else np.zeros(1, b_kn.dtype)
    bt, bz = int8_weights(np.ascontiguousarray(b_kn.T), np.broadcast_to(b_zero.reshape(-1), (n,)))
    sums = (bt.astype(np.int64) - bz[:, None]).sum(axis=1).astype(np.int32)
    ctx.comment(f"MatMulInteger {list(ctx.shape(a))} x [{k}, {n}] -> int32")
    ctx.call(f"aotc_matmul_integer_{SUFFIX[ctx.dtype(a)]}", str(math.prod(ctx.shape(a)[:-1])), str(n), str(k),
             ctx.ptr(a), _zero_pointer(ctx, 2), ctx.const_array("bt", bt), ctx.const_array("b_zero", bz),
             ctx.const_array("b_sums", sums, comment="sum over k of (B - b_zero), per column"), ctx.ptr(y))


def _check_matmul_integer(node: Node, graph: Graph) -> str | None:
    b = graph.tensors[node.inputs[1]]
    if b.data is None or len(b.shape) != 2:
        return "B must be a constant matrix"
    if len(node.inputs) > 2 and node.inputs[2] and graph.tensors[node.inputs[2]].size != 1:
        return "a per-row a_zero_point is not supported (a scalar is)"
    if len(node.inputs) > 3 and node.inputs[3] and graph.const(node.inputs[3]) is None:
        return "b_zero_point must be a constant"
    return check_8bit_inputs(node, graph, (0, 1))


def _emit_conv_integer(ctx: NodeContext) -> None:
    a = ctx.attrs
    m = ctx.shape(ctx.outputs[0])[1]
    w_const = ctx.const(ctx.inputs[1])
    w_zero = ctx.const(ctx.inputs[3]) if len(ctx.inputs) > 3 and ctx.inputs[3] else np.zeros(1, w_const.dtype)
    weights, wz = int8_weights(w_const, np.broadcast_to(w_zero.reshape(-1), (m,)))
    x_zero = ctx.const(ctx.inputs[2]) if len(ctx.inputs) > 2 and ctx.inputs[2] else None
    p = ctx.params("aotc_qconv_params", {
        **conv_geometry(ctx),
        "x_zero": str(int(x_zero.reshape(-1)[0]) if x_zero is not None else 0),
        "w_zero": ctx.const_array("w_zero", np.ascontiguousarray(wz, np.int32)),
    }, comment=f"ConvInteger {list(ctx.shape(ctx.inputs[0]))} -> {list(ctx.shape(ctx.outputs[0]))} int32: kernel "
               f"{a['kernel_shape']}, strides {a['strides']}, pads {a['pads']}, group {a['group']}")
    runtime_zero = x_zero is None and len(ctx.inputs) > 2 and ctx.inputs[2]
    ctx.call(f"aotc_conv_integer_{SUFFIX[ctx.dtype(ctx.inputs[0])]}", p, ctx.ptr(ctx.inputs[0]),
             ctx.ptr(ctx.inputs[2]) if runtime_zero else "NULL", ctx.const_array("w", weights), ctx.ptr(ctx.outputs[0]))


def _check_conv_integer(node: Node, graph: Graph) -> str | None:
    if len(node.attrs["kernel_shape"]) > 2:
        return "3-D ConvInteger is not supported (1-D and 2-D are)"
    if graph.const(node.inputs[1]) is None:
        return "weights computed at run time are not supported"
    if len(node.inputs) > 2 and node.inputs[2] and graph.tensors[node.inputs[2]].size != 1:
        return "a per-channel x_zero_point is not supported"
    if len(node.inputs) > 3 and node.inputs[3] and graph.const(node.inputs[3]) is None:
        return "w_zero_point must be a constant"
    return check_8bit_inputs(node, graph, (0, 1))


OPS: dict[str, HostOp] = {
    "DynamicQuantizeLinear": HostOp(_emit_dynamic_quantize, family="quant"),
    "MatMulInteger": HostOp(_emit_matmul_integer, family="quant", dtypes=INT8, check=_check_matmul_integer),
    "ConvInteger": HostOp(_emit_conv_integer, family="quant", dtypes=INT8, check=_check_conv_integer),
}
