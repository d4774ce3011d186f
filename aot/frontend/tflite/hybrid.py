"""Hybrid TFLite ops (float32 activations, int8 weights) -> aotc's hybrid ops (aot/ir/tflite_ops.py), run as
LiteRT's hybrid kernels run them (issue 50).

Dynamic-range quantisation (the converter's Optimize.DEFAULT without a representative dataset) stores the
weights of FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D as int8 with a scale (per channel or per tensor)
and leaves the activations float. LiteRT does not dequantize those weights: its hybrid kernels quantize the
float input to int8 at run time, a scale per batch (fully_connected.cc EvalHybridDense: each row, symmetric or,
with asymmetric_quantize_inputs, asymmetric; conv.cc EvalHybrid: each image, symmetric, when every filter scale
is equal, else EvalHybridPerChannel: asymmetric; depthwise_conv.cc EvalHybridPerChannel: asymmetric), sum the
int8 products in int32 and scale each sum back to float. Dequantizing the weights at compile time would
compute without the input's rounding, which differs from LiteRT by up to about half an input step times the
weights (far beyond float tolerance), so aotc computes as LiteRT does: a TflHybridQuantize node, then the op
on its int8 values, with the weights kept int8 (a quarter of the float bytes in flash).
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.lowering import (
    ACT_NONE,
    ACT_RELU,
    ACT_RELU6,
    ACT_RELU_N1_TO_1,
    ACT_TANH,
    SAME,
    window_pads,
)
from aot.frontend.tflite.reader import TflOp
from aot.ir import tflite_ops as tfl

HYBRID_OPS = {"FULLY_CONNECTED": tfl.HYBRID_FULLY_CONNECTED, "CONV_2D": tfl.HYBRID_CONV_2D,
              "DEPTHWISE_CONV_2D": tfl.HYBRID_DEPTHWISE_CONV_2D, "TRANSPOSE_CONV": tfl.HYBRID_TRANSPOSE_CONV}
# ops whose hybrid form another module lowers (recurrent.py: its products by hybrid_fc), by their int8 weights' input
HYBRID_ELSEWHERE = {"UNIDIRECTIONAL_SEQUENCE_LSTM": 2, "LSTM": 2, "RNN": 1, "UNIDIRECTIONAL_SEQUENCE_RNN": 1,
                    "BIDIRECTIONAL_SEQUENCE_LSTM": 2, "BIDIRECTIONAL_SEQUENCE_RNN": 1, "EMBEDDING_LOOKUP": 1,
                    "SVDF": 1}
_CLAMP = {ACT_NONE: (-np.inf, np.inf), ACT_RELU: (0.0, np.inf), ACT_RELU6: (0.0, 6.0), ACT_RELU_N1_TO_1: (-1.0, 1.0),
          ACT_TANH: (-np.inf, np.inf)}


def is_hybrid(b: OnnxBuilder, op: TflOp) -> bool:
    """A float32 input and quantized integer weights: LiteRT runs the op's hybrid kernel."""
    k = HYBRID_ELSEWHERE.get(op.op, 1)
    if (op.op not in HYBRID_OPS and op.op not in HYBRID_ELSEWHERE) or len(op.inputs) <= k or op.inputs[k] < 0:
        return False
    # (EMBEDDING_LOOKUP's input 0: the ids; TRANSPOSE_CONV's: the output shape)
    x = b.tensor(op.outputs[0] if op.op == "EMBEDDING_LOOKUP" else op.inputs[2 if op.op == "TRANSPOSE_CONV" else 0])
    w = b.tensor(op.inputs[k])
    return x.dtype == "float32" and w.dtype in ("int8", "uint8", "int16") and w.quant is not None


def _quantize(b: OnnxBuilder, hint: str, x: str, shape: tuple[int, ...], size: int, asymmetric: bool) -> list[str]:
    """A TflHybridQuantize node of value `x` (of `shape`), a batch every `size` elements: [q, scale, offset]."""
    batches = int(np.prod(shape)) // size
    outs = [b.fresh(f"{hint}_{part}") for part in ("q", "scale", "offset")]
    b.nodes.append(helper.make_node(tfl.HYBRID_QUANTIZE, [x], outs, name=b.fresh(f"{hint}_quantize"),
                                    domain=tfl.DOMAIN, size=size, asymmetric=int(asymmetric)))
    for name, dtype, dims in zip(outs, (np.int8, np.float32, np.int32), (shape, (batches,), (batches,)), strict=True):
        b.value_infos.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                                           list(dims)))
    return outs


def hybrid_fc(b: OnnxBuilder, hint: str, x: str, shape: tuple[int, ...], w: np.ndarray, scales: np.ndarray,
              bias: str | None, asymmetric: bool) -> str:
    """x [..., in] (float32) times int8 w [out, in] as LiteRT's hybrid FULLY_CONNECTED, each row of x quantized on
    its own; `scales` the weights' per output row (or one), bias a float32 [out] or None. Returns the [rows, out]
    output, for the recurrent ops' products (recurrent.py)."""
    out, depth = w.shape
    rows = int(np.prod(shape)) // depth
    ins = [*_quantize(b, hint, x, shape, depth, asymmetric), b.const(w, f"{hint}_w"), *([bias] if bias else [])]
    y = b.fresh(f"{hint}_y")
    b.nodes.append(helper.make_node(tfl.HYBRID_FULLY_CONNECTED, ins, [y], name=b.fresh(hint), domain=tfl.DOMAIN,
                                    w_scale=[float(v) for v in np.asarray(scales, np.float32).reshape(-1)],
                                    y_min=-np.inf, y_max=np.inf, y_shape=[rows, out]))
    b.value_infos.append(helper.make_tensor_value_info(y, helper.TensorProto.FLOAT, [rows, out]))
    return y


def lower_hybrid(b: OnnxBuilder, op: TflOp) -> None:
    """FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D or TRANSPOSE_CONV of a float input by int8 weights, as LiteRT's
    hybrid kernel."""
    transpose = op.op == "TRANSPOSE_CONV"
    k_x, k_bias = (2, 3) if transpose else (0, 2)  # TRANSPOSE_CONV's inputs: output shape, weights, input, bias
    x, w, y = b.tensor(op.inputs[k_x]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    o = op.options
    if w.dtype != "int8" or w.data is None:
        raise op_error(op, f"hybrid {op.op} needs constant int8 weights, '{w.name}' is {w.dtype}"
                       f"{'' if w.data is not None else ' computed at run time'}")
    if np.any(w.quant.zero_point != 0):
        raise op_error(op, f"hybrid {op.op} with weights of a nonzero zero point is not supported (LiteRT refuses it)")
    if y.dtype != "float32":
        raise op_error(op, f"hybrid {op.op} to {y.dtype} is not supported (float32 out)")
    act = getattr(o, "fusedActivationFunction", ACT_NONE) if o is not None else ACT_NONE
    if act not in _CLAMP:
        raise op_error(op, f"fused activation {act} is not supported")
    scales = w.quant.scale.astype(np.float32)
    y_min, y_max = _CLAMP[act]
    attrs: dict = {"y_min": float(y_min), "y_max": float(y_max), "y_shape": list(y.shape)}
    if op.op == "FULLY_CONNECTED":
        if o is not None and o.weightsFormat != 0:
            raise op_error(op, "shuffled FULLY_CONNECTED weights are not supported")
        out, depth = w.shape
        _check_scales(op, w, scales, out, 0)
        asymmetric = bool(o is not None and o.asymmetricQuantizeInputs)
        ins = _quantize(b, op.name, b.value(op.inputs[k_x], NHWC), x.shape, depth, asymmetric)
        attrs["w_scale"] = [float(s) for s in scales]
    else:
        if len(x.shape) != 4:
            raise op_error(op, f"hybrid {op.op} of a {len(x.shape)}-D input is not supported (NHWC)")
        _, h, wd, c = x.shape
        depthwise = op.op == "DEPTHWISE_CONV_2D"
        oc = y.shape[3]
        kh, kw = w.shape[1:3]
        if transpose:  # transpose_conv.cc EvalHybrid: asymmetric, one scale repeated per channel
            _check_scales(op, w, scales, oc, 0)
            asymmetric, order = True, 1
        elif depthwise:  # LiteRT reads a scale per output channel (one scale for one channel only)
            _check_scales(op, w, scales, oc, 3)
            asymmetric, order = True, 0
        else:
            groups = c // w.shape[3]
            _check_scales(op, w, scales, oc, 0)
            if groups != 1 and scales.size == 1:
                raise op_error(op, "hybrid grouped CONV_2D with one weight scale is not supported (LiteRT's Prepare "
                               "refuses it: its grouped hybrid conv reads a scale per output channel)")
            per_channel = groups != 1 or bool(np.any(scales != scales[0]))  # conv.cc's is_hybrid_per_channel
            asymmetric, order = per_channel, int(per_channel)
            if not per_channel:
                scales = scales[:1]
        ins = _quantize(b, op.name, b.value(op.inputs[k_x], NHWC), x.shape, h * wd * c, asymmetric)
        if transpose:  # SAME: the smaller half of the overhang before, as TFLite's transpose conv padding
            same = o.padding == SAME
            top, left = (max((x.shape[1 + a] - 1) * s + k - y.shape[1 + a], 0) // 2 if same else 0
                         for a, (k, s) in enumerate(((kh, o.strideH), (kw, o.strideW))))
            dilations = [1, 1]
        else:
            top, left, _, _ = window_pads(b, op, kh, kw, o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor)
            dilations = [o.dilationHFactor, o.dilationWFactor]
        attrs.update(w_scale=[float(s) for s in scales], order=order, kernel=[kh, kw], strides=[o.strideH, o.strideW],
                     dilations=dilations, pads=[top, left])
    ins.append(b.const(w.data, f"{op.name}_w"))
    if len(op.inputs) > k_bias and op.inputs[k_bias] >= 0:
        bias = b.tensor(op.inputs[k_bias])
        if bias.dtype != "float32":
            raise op_error(op, f"hybrid {op.op} needs a float32 bias, '{bias.name}' is {bias.dtype}")
        ins.append(b.value(op.inputs[k_bias], NHWC))
    out = b.names[op.outputs[0]] if act != ACT_TANH else b.fresh(f"{op.name}_pre_tanh")
    b.nodes.append(helper.make_node(HYBRID_OPS[op.op], ins, [out], name=b.fresh(op.name), domain=tfl.DOMAIN,
                                    **attrs))
    b.value_infos.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(np.float32)),
                                                       list(y.shape)))
    if act == ACT_TANH:
        out = b.node("Tanh", [out], [b.names[op.outputs[0]]], hint=f"{op.name}_tanh")
    b.values[op.outputs[0]] = {NHWC: out}


def _check_scales(op: TflOp, w, scales: np.ndarray, channels: int, axis: int) -> None:
    if scales.size not in (1, channels) or (scales.size > 1 and w.quant.axis != axis) or (
            scales.size == 1 and axis == 3 and channels > 1):
        raise op_error(op, f"hybrid {op.op} needs a weight scale per output channel (axis {axis}) or one for all, "
                       f"'{w.name}' has {scales.size} along axis {w.quant.axis}")


__all__ = ["HYBRID_OPS", "hybrid_fc", "is_hybrid", "lower_hybrid"]
