"""TFLite's network layers -> ONNX: convolutions, fully connected, pools, softmaxes, normalisation,
batch matmul and the LSTM (float; the integer forms are int8.py's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from aot.frontend.tflite.builder import (
    NCHW,
    NHWC,
    OnnxBuilder,
    float_weights,
    op_error,
)
from aot.frontend.tflite.lowering import (
    ACT_NONE,
    SAME,
    bias_input,
    finish,
    float_only,
    fused_act,
    same_pads,
    window_pads,
)
from aot.frontend.tflite.reader import TflOp
from aot.frontend.tflite.recurrent import lower_bidirectional, lower_lstm, lower_rnn, lower_svdf


def _conv(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    w = float_weights(b, op, 1)  # [O, kh, kw, I]
    kh, kw = w.shape[1:3]
    pads = window_pads(b, op, kh, kw, o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor)
    x = b.value(op.inputs[0], NCHW)
    groups = b.tensor(op.inputs[0]).shape[3] // w.shape[3]
    finish(b, op, "Conv", [x, b.const(w.transpose(0, 3, 1, 2), f"{op.name}_w"), *bias_input(b, op, 2)], NCHW,
            o.fusedActivationFunction, kernel_shape=[kh, kw], strides=[o.strideH, o.strideW],
            dilations=[o.dilationHFactor, o.dilationWFactor], pads=pads, group=groups)


def _depthwise(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    w = float_weights(b, op, 1)  # [1, kh, kw, C * multiplier]
    kh, kw = w.shape[1:3]
    pads = window_pads(b, op, kh, kw, o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor)
    c = b.tensor(op.inputs[0]).shape[3]
    x = b.value(op.inputs[0], NCHW)
    finish(b, op, "Conv", [x, b.const(w.transpose(3, 0, 1, 2), f"{op.name}_w"), *bias_input(b, op, 2)], NCHW,
            o.fusedActivationFunction, kernel_shape=[kh, kw], strides=[o.strideH, o.strideW],
            dilations=[o.dilationHFactor, o.dilationWFactor], pads=pads, group=c)


def _transpose_conv(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    w = float_weights(b, op, 1)  # [O, kh, kw, I]
    kh, kw = w.shape[1:3]
    x_shape, y_shape = b.tensor(op.inputs[2]).shape, b.tensor(op.outputs[0]).shape
    pads, extra = [], []
    for axis, (k, s) in enumerate(((kh, o.strideH), (kw, o.strideW))):
        total = (x_shape[1 + axis] - 1) * s + k - y_shape[1 + axis]
        if total >= 0:
            before = total // 2 if o.padding == SAME else 0
            pads.append((before, total - before))
            extra.append(0)
        else:
            pads.append((0, 0))
            extra.append(-total)
    x = b.value(op.inputs[2], NCHW)
    finish(b, op, "ConvTranspose", [x, b.const(w.transpose(3, 0, 1, 2), f"{op.name}_w"), *bias_input(b, op, 3)],
            NCHW, getattr(o, "fusedActivationFunction", ACT_NONE), kernel_shape=[kh, kw],
            strides=[o.strideH, o.strideW], pads=[pads[0][0], pads[1][0], pads[0][1], pads[1][1]],
            output_padding=extra)


_TO_NCDHW, _TO_NDHWC = [0, 4, 1, 2, 3], [0, 2, 3, 4, 1]


def _conv3d(b: OnnxBuilder, op: TflOp) -> None:
    """CONV_3D (NDHWC, filter [kd, kh, kw, I, O]) and CONV_3D_TRANSPOSE (output shape, filter [kd, kh, kw,
    O, I], input): ONNX Conv / ConvTranspose on NCDHW, the input and output transposed around it."""
    o = op.options
    transpose = op.op == "CONV_3D_TRANSPOSE"
    k_x, k_bias = (2, 3) if transpose else (0, 2)
    float_only(b, op, k_x)
    w = float_weights(b, op, 1)
    x_shape, y_shape = b.tensor(op.inputs[k_x]).shape, b.tensor(op.outputs[0]).shape
    ks = list(w.shape[:3])
    strides, dilations = [o.strideD, o.strideH, o.strideW], [o.dilationDFactor, o.dilationHFactor, o.dilationWFactor]
    begin, end, extra = [], [], []
    for axis in range(3):
        k, s, d = ks[axis], strides[axis], dilations[axis]
        size, out = x_shape[1 + axis], y_shape[1 + axis]
        if transpose:
            total = (size - 1) * s + (k - 1) * d + 1 - out
            before = total // 2 if o.padding == SAME and total > 0 else 0
            extra.append(max(-total, 0))
            begin.append(before)
            end.append(max(total, 0) - before)
        else:
            before, after = same_pads(size, k, s, d, out) if o.padding == SAME else (0, 0)
            begin.append(before)
            end.append(after)
    x = b.node("Transpose", [b.value(op.inputs[k_x], NHWC)], hint=f"{op.name}_ncdhw", perm=_TO_NCDHW)
    bias = [b.value(op.inputs[k_bias])] if len(op.inputs) > k_bias and op.inputs[k_bias] >= 0 else []
    attrs: dict[str, Any] = {"kernel_shape": ks, "strides": strides, "dilations": dilations, "pads": begin + end}
    if transpose:  # [kd, kh, kw, O, I] -> [I, O, kd, kh, kw]
        y = b.node("ConvTranspose", [x, b.const(w.transpose(4, 3, 0, 1, 2), f"{op.name}_w"), *bias], hint=op.name,
                   output_padding=extra, **attrs)
    else:  # [kd, kh, kw, I, O] -> [O, I, kd, kh, kw]
        groups = x_shape[4] // w.shape[3]
        y = b.node("Conv", [x, b.const(w.transpose(4, 3, 0, 1, 2), f"{op.name}_w"), *bias], hint=op.name,
                   group=groups, **attrs)
    y = fused_act(b, y, getattr(o, "fusedActivationFunction", ACT_NONE), op)
    finish(b, op, "Transpose", [y], NHWC, perm=_TO_NDHWC)


def _lrn(b: OnnxBuilder, op: TflOp) -> None:
    """LOCAL_RESPONSE_NORMALIZATION over the last (channel) axis, radius r: ONNX LRN over channels with
    size 2r + 1, whose alpha TFLite does not divide by the size (ONNX does)."""
    float_only(b, op, 0)
    o = op.options
    size = 2 * o.radius + 1
    finish(b, op, "LRN", [b.value(op.inputs[0], NCHW)], NCHW, size=size, alpha=float(o.alpha) * size,
           beta=float(o.beta), bias=float(o.bias))


def _fully_connected(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    if o is not None and o.weightsFormat != 0:
        raise op_error(op, "shuffled FULLY_CONNECTED weights are not supported")
    w = float_weights(b, op, 1)  # [out, in]
    x = b.value(op.inputs[0], NHWC)
    x_shape, y_shape = b.tensor(op.inputs[0]).shape, b.tensor(op.outputs[0]).shape
    if len(x_shape) != 2 or x_shape[1] != w.shape[1]:
        x = b.node("Reshape", [x, b.const(np.array([-1, w.shape[1]], np.int64), "shape")], hint=f"{op.name}_flat")
    bias = bias_input(b, op, 2)
    rows = int(np.prod(x_shape)) // w.shape[1]
    act = o.fusedActivationFunction if o is not None else ACT_NONE
    if tuple(y_shape) == (rows, w.shape[0]):
        finish(b, op, "Gemm", [x, b.const(w, f"{op.name}_w"), *bias], NHWC, act, transB=1)
        return
    y = b.node("Gemm", [x, b.const(w, f"{op.name}_w"), *bias], hint=op.name, transB=1)
    y = fused_act(b, y, act, op)
    finish(b, op, "Reshape", [y, b.const(np.array(y_shape, np.int64), "shape")], NHWC)


def _pool(onnx_op: str):
    def lower(b: OnnxBuilder, op: TflOp) -> None:
        o = op.options
        pads = window_pads(b, op, o.filterHeight, o.filterWidth, o.strideH, o.strideW)
        attrs: dict[str, Any] = {"kernel_shape": [o.filterHeight, o.filterWidth], "strides": [o.strideH, o.strideW],
                                 "pads": pads}
        if onnx_op == "AveragePool":
            attrs["count_include_pad"] = 0  # TFLite averages over the in-bounds elements only
        finish(b, op, onnx_op, [b.value(op.inputs[0], NCHW)], NCHW, o.fusedActivationFunction, **attrs)
    return lower


def _l2_pool(b: OnnxBuilder, op: TflOp) -> None:
    """L2_POOL_2D: the root of the mean square over each window's in-bounds elements (TFLite's kernel
    divides by their count), as Sqrt(AveragePool(x * x)) with count_include_pad 0."""
    float_only(b, op, 0)
    o = op.options
    x = b.value(op.inputs[0], NCHW)
    sq = b.node("Mul", [x, x], hint=f"{op.name}_square")
    mean = b.node("AveragePool", [sq], hint=f"{op.name}_mean", kernel_shape=[o.filterHeight, o.filterWidth],
                  strides=[o.strideH, o.strideW], pads=window_pads(b, op, o.filterHeight, o.filterWidth, o.strideH,
                                                                  o.strideW), count_include_pad=0)
    finish(b, op, "Sqrt", [mean], NCHW, o.fusedActivationFunction)


def _softmax(b: OnnxBuilder, op: TflOp) -> None:
    x = b.value(op.inputs[0], NHWC)
    beta = float(op.options.beta) if op.options is not None else 1.0
    if beta != 1.0:
        x = b.node("Mul", [x, b.const(np.float32(beta), "beta")], hint=f"{op.name}_beta")
    finish(b, op, "Softmax", [x], NHWC, axis=-1)


def _log_softmax(b: OnnxBuilder, op: TflOp) -> None:
    finish(b, op, "LogSoftmax", [b.value(op.inputs[0], NHWC)], NHWC, axis=-1)


def _l2_normalization(b: OnnxBuilder, op: TflOp) -> None:
    """x / max(sqrt(sum of x^2 over the last axis), 1e-6), as TFLite's float kernel."""
    float_only(b, op, 0)
    x = b.value(op.inputs[0], NHWC)
    sq = b.node("Mul", [x, x], hint=f"{op.name}_square")
    s = b.node("ReduceSum", [sq, b.const(np.array([-1], np.int64), "axes")], hint=f"{op.name}_sum", keepdims=1)
    norm = b.node("Max", [b.node("Sqrt", [s], hint=f"{op.name}_sqrt"), b.const(np.float32(1e-6), "epsilon")],
                  hint=f"{op.name}_norm")
    act = op.options.fusedActivationFunction if op.options is not None else ACT_NONE
    finish(b, op, "Div", [x, norm], NHWC, act)


def _batch_matmul(b: OnnxBuilder, op: TflOp) -> None:
    """BATCH_MATMUL is ONNX MatMul (batch dims broadcast as numpy does); adj_x / adj_y transpose the
    last two axes of x / y first."""
    names = []
    for k, adj in ((0, op.options is not None and op.options.adjX), (1, op.options is not None and op.options.adjY)):
        float_only(b, op, k)
        x = b.value(op.inputs[k], NHWC)
        rank = len(b.tensor(op.inputs[k]).shape)
        if adj:
            x = b.node("Transpose", [x], hint=f"{op.name}_adj{'xy'[k]}",
                       perm=[*range(rank - 2), rank - 1, rank - 2])
        names.append(x)
    finish(b, op, "MatMul", names, NHWC)


def _lstm(b: OnnxBuilder, op: TflOp) -> None:
    lower_lstm(b, op)


OPS = {
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _depthwise, "TRANSPOSE_CONV": _transpose_conv,
    "FULLY_CONNECTED": _fully_connected, "AVERAGE_POOL_2D": _pool("AveragePool"), "MAX_POOL_2D": _pool("MaxPool"),
    "L2_POOL_2D": _l2_pool,
    "SOFTMAX": _softmax, "LOG_SOFTMAX": _log_softmax, "L2_NORMALIZATION": _l2_normalization,
    "BATCH_MATMUL": _batch_matmul, "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm, "LSTM": _lstm, "RNN": lower_rnn,
    "UNIDIRECTIONAL_SEQUENCE_RNN": lower_rnn, "BIDIRECTIONAL_SEQUENCE_LSTM": lower_bidirectional,
    "BIDIRECTIONAL_SEQUENCE_RNN": lower_bidirectional, "SVDF": lower_svdf,
    "CONV_3D": _conv3d, "CONV_3D_TRANSPOSE": _conv3d, "LOCAL_RESPONSE_NORMALIZATION": _lrn,
}
