"""TFLite builtin ops -> the ONNX operators aotc's import stage reads.

Layout: TFLite tensors are NHWC and the model's inputs and outputs stay NHWC. aotc's host conv and
pool kernels are NCHW, so a 4-D value may exist in either layout: each op asks for its inputs in
the layout it computes in, and a Transpose is written only where a value is asked for in a layout
it does not have yet (once per value). Layout-agnostic ops (elementwise, activations, concat, pad,
mean) compute in whatever layout their inputs already have, so a chain of convs, activations and
pools is transposed once at the graph input and once where it ends (a Reshape/FullyConnected or
a graph output). Neither transpose costs a pass over the data where a conv is next to it: the convs
read the NHWC input in place and store their output channels last (aot/passes/conv_nhwc.py, on the
host graph), so of issue 29 part 3's NHWC float kernels only those two conv stores were needed.

Quantized ops go to int8.py (aotc's internal NHWC int8 ops, TFLite's arithmetic); what it does not
cover yet is refused by name.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import onnx
from onnx import helper

from aot.errors import AotcError
from aot.frontend.tflite.builder import (
    NCHW,
    NHWC,
    TO_NCHW,
    TO_NHWC,
    OnnxBuilder,
    float_const,
    float_weights,
    op_error,
    value_info,
)
from aot.frontend.tflite.control import (
    assign_variable,
    call_once,
    finish_variables,
    lower_if,
    lower_while,
    read_variable,
    var_handle,
)
from aot.frontend.tflite.int8 import is_quantized, lower_int8, lower_quantize
from aot.frontend.tflite.reader import OpName, TflModel, TflOp
from aot.frontend.tflite.recurrent import lower_lstm
from aot.frontend.tflite.state import state_metadata
from aot.ir import tflite_ops as tfl

OPSET = 17
QUANT_KEY = "aotc.io_quantization"  # metadata_props: {tensor: {scale, zero_point}} of quantized inputs/outputs

# ActivationFunctionType
_ACT_NONE, _ACT_RELU, _ACT_RELU_N1_TO_1, _ACT_RELU6, _ACT_TANH = 0, 1, 2, 3, 4
_SAME = 0  # Padding.SAME (VALID = 1)

_UNARY = {"LOGISTIC": "Sigmoid", "TANH": "Tanh", "RELU": "Relu", "ABS": "Abs", "EXP": "Exp", "NEG": "Neg",
          "SQRT": "Sqrt", "RSQRT": None, "LOG": "Log", "FLOOR": "Floor", "CEIL": "Ceil", "ELU": "Elu",
          "HARD_SWISH": "HardSwish", "SIN": "Sin", "COS": "Cos", "SQUARE": None}
_BINARY = {"ADD": "Add", "SUB": "Sub", "MUL": "Mul", "DIV": "Div", "MAXIMUM": "Max", "MINIMUM": "Min",
           "LESS": "Less", "LESS_EQUAL": "LessOrEqual", "GREATER": "Greater", "GREATER_EQUAL": "GreaterOrEqual",
           "EQUAL": "Equal", "LOGICAL_AND": "And", "LOGICAL_OR": "Or", "PRELU": "PRelu"}


def to_onnx(model: TflModel) -> onnx.ModelProto:
    """The model as ONNX, NHWC at its inputs and outputs."""
    b = OnnxBuilder(model)
    for i in model.inputs:
        t = model.tensors[i]
        if t.data is not None:
            continue
        b.values[i] = {NHWC: b.names[i]}
    b.lower = lower_ops
    lower_ops(b)
    outputs = []
    for o in model.outputs:
        name = b.names[o]
        have = b.values.get(o, {})
        if have.get(NHWC) != name:  # computed in NCHW, or an input or constant passed through
            src = have.get(NCHW) if NHWC not in have and NCHW in have else b.value(o, NHWC)
            b.node("Transpose" if src == have.get(NCHW) else "Identity", [src], [name], hint=f"{name}_out",
                   **({"perm": list(TO_NHWC)} if src == have.get(NCHW) else {}))
        outputs.append(value_info(model.tensors[o], name))
    inputs = [value_info(model.tensors[i], b.names[i]) for i in model.inputs if model.tensors[i].data is None]
    finish_variables(b)
    inputs += b.extra_inputs
    outputs += b.extra_outputs
    graph = helper.make_graph(b.nodes, "tflite", inputs, outputs, b.inits, value_info=b.value_infos)
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid(tfl.DOMAIN, 1)] if b.value_infos else [])
    onnx_model = helper.make_model(graph, opset_imports=opsets,
                                   producer_name="aotc-tflite")
    onnx_model.ir_version = 8
    quantized = {b.names[i]: {"scale": float(model.tensors[i].quant.scale[0]),
                              "zero_point": int(model.tensors[i].quant.zero_point[0])}
                 for i in [*model.inputs, *model.outputs]
                 if model.tensors[i].quant is not None and not model.tensors[i].quant.per_channel
                 and model.tensors[i].dtype != "float32"}
    quantized.update(b.extra_quant)
    if quantized:  # for the header: the caller quantises its inputs and reads its outputs with them
        onnx_model.metadata_props.add(key=QUANT_KEY, value=json.dumps(quantized))
    state_metadata(b, onnx_model)
    return onnx_model


def lower_ops(b: OnnxBuilder) -> None:
    """Every op of b's (sub)graph, in order."""
    for op in b.m.ops:
        if is_quantized(b, op) and op.op in _MOVES and _moves_values_unchanged(b, op):
            _OPS[op.op](b, op)  # int8 data movement: the same ONNX ops, on int8 tensors
            continue
        if is_quantized(b, op) and op.op not in ("QUANTIZE", "DEQUANTIZE"):
            lower_int8(b, op)
            continue
        _check_op(b, op)
        fn = _OPS.get(op.op)
        if fn is None:
            if op.op.startswith("CUSTOM:"):
                raise AotcError(f"custom op '{op.op[7:]}' is not supported", node=OpName(op))
            raise AotcError(f"TFLite op {op.op} is not supported", node=OpName(op))
        fn(b, op)


# ops that only move data: on int8 tensors they are the float lowering, when no value changes its
# quantisation (else they would requantise, which is refused by lower_int8)
_MOVES = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS", "CONCATENATION", "STRIDED_SLICE", "PAD", "PADV2", "TILE",
          "RESIZE_NEAREST_NEIGHBOR", "TRANSPOSE")


def _moves_values_unchanged(b: OnnxBuilder, op: TflOp) -> bool:
    y = b.tensor(op.outputs[0])
    data = op.inputs if op.op == "CONCATENATION" else op.inputs[:1]
    if op.op == "CONCATENATION" and op.options.fusedActivationFunction != _ACT_NONE:
        return False
    for i in data:
        x = b.tensor(i)
        if x.dtype != y.dtype or x.quant is None or y.quant is None or x.quant.per_channel \
                or x.quant.scale[0] != y.quant.scale[0] or x.quant.zero_point[0] != y.quant.zero_point[0]:
            return False
    return True


def _check_op(b: OnnxBuilder, op: TflOp) -> None:
    if op.op in ("QUANTIZE", "DEQUANTIZE"):
        return
    for i in [*op.inputs, *op.outputs]:
        if i < 0:
            continue
        t = b.tensor(i)
        if t.dtype in ("int8", "uint8", "int16") and t.quant is not None:
            raise op_error(op, f"quantized ({t.dtype}) TFLite ops are not supported yet: TFLite's fixed-point "
                           "requantisation is the next part of issue 29; float models compile")


# --- helpers ---------------------------------------------------------------------------
def _act(b: OnnxBuilder, x: str, act: int, op: TflOp) -> str:
    if act == _ACT_NONE:
        return x
    if act == _ACT_RELU:
        return b.node("Relu", [x], hint=f"{op.name}_relu")
    if act in (_ACT_RELU6, _ACT_RELU_N1_TO_1):
        lo, hi = (0.0, 6.0) if act == _ACT_RELU6 else (-1.0, 1.0)
        return b.node("Clip", [x, b.const(np.float32(lo), "lo"), b.const(np.float32(hi), "hi")],
                      hint=f"{op.name}_clip")
    if act == _ACT_TANH:
        return b.node("Tanh", [x], hint=f"{op.name}_tanh")
    raise op_error(op, f"fused activation {act} is not supported")


def _finish(b: OnnxBuilder, op: TflOp, x_final_op: str, inputs: list[str], layout: str, act: int = _ACT_NONE,
            **attrs: Any) -> None:
    """Write `x_final_op` then the fused activation; the last node writes the op's output."""
    out = op.outputs[0]
    if act == _ACT_NONE:
        b.node(x_final_op, inputs, [b.out_name(out, layout)], hint=op.name, **attrs)
        b.set(out, layout, b.nodes[-1].output[0])
        return
    y = b.node(x_final_op, inputs, hint=op.name, **attrs)
    _act(b, y, act, op)
    b.nodes[-1].output[0] = name = b.out_name(out, layout)
    b.set(out, layout, name)


def _same_pads(size: int, k: int, s: int, d: int, out: int) -> tuple[int, int]:
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def _pads(b: OnnxBuilder, op: TflOp, kh: int, kw: int, sh: int, sw: int, dh: int = 1, dw: int = 1) -> list[int]:
    opts = op.options
    x, y = b.tensor(op.inputs[0]).shape, b.tensor(op.outputs[0]).shape
    if opts.padding != _SAME:
        return [0, 0, 0, 0]
    top, bottom = _same_pads(x[1], kh, sh, dh, y[1])
    left, right = _same_pads(x[2], kw, sw, dw, y[2])
    return [top, left, bottom, right]


def _bias(b: OnnxBuilder, op: TflOp, k: int) -> list[str]:
    if len(op.inputs) <= k or op.inputs[k] < 0:
        return []
    return [b.value(op.inputs[k])]


# --- ops -------------------------------------------------------------------------------
def _conv(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    w = float_weights(b, op, 1)  # [O, kh, kw, I]
    kh, kw = w.shape[1:3]
    pads = _pads(b, op, kh, kw, o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor)
    x = b.value(op.inputs[0], NCHW)
    groups = b.tensor(op.inputs[0]).shape[3] // w.shape[3]
    _finish(b, op, "Conv", [x, b.const(w.transpose(0, 3, 1, 2), f"{op.name}_w"), *_bias(b, op, 2)], NCHW,
            o.fusedActivationFunction, kernel_shape=[kh, kw], strides=[o.strideH, o.strideW],
            dilations=[o.dilationHFactor, o.dilationWFactor], pads=pads, group=groups)


def _depthwise(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    w = float_weights(b, op, 1)  # [1, kh, kw, C * multiplier]
    kh, kw = w.shape[1:3]
    pads = _pads(b, op, kh, kw, o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor)
    c = b.tensor(op.inputs[0]).shape[3]
    x = b.value(op.inputs[0], NCHW)
    _finish(b, op, "Conv", [x, b.const(w.transpose(3, 0, 1, 2), f"{op.name}_w"), *_bias(b, op, 2)], NCHW,
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
            before = total // 2 if o.padding == _SAME else 0
            pads.append((before, total - before))
            extra.append(0)
        else:
            pads.append((0, 0))
            extra.append(-total)
    x = b.value(op.inputs[2], NCHW)
    _finish(b, op, "ConvTranspose", [x, b.const(w.transpose(3, 0, 1, 2), f"{op.name}_w"), *_bias(b, op, 3)],
            NCHW, getattr(o, "fusedActivationFunction", _ACT_NONE), kernel_shape=[kh, kw],
            strides=[o.strideH, o.strideW], pads=[pads[0][0], pads[1][0], pads[0][1], pads[1][1]],
            output_padding=extra)


def _fully_connected(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    if o is not None and o.weightsFormat != 0:
        raise op_error(op, "shuffled FULLY_CONNECTED weights are not supported")
    w = float_weights(b, op, 1)  # [out, in]
    x = b.value(op.inputs[0], NHWC)
    x_shape, y_shape = b.tensor(op.inputs[0]).shape, b.tensor(op.outputs[0]).shape
    if len(x_shape) != 2 or x_shape[1] != w.shape[1]:
        x = b.node("Reshape", [x, b.const(np.array([-1, w.shape[1]], np.int64), "shape")], hint=f"{op.name}_flat")
    bias = _bias(b, op, 2)
    rows = int(np.prod(x_shape)) // w.shape[1]
    act = o.fusedActivationFunction if o is not None else _ACT_NONE
    if tuple(y_shape) == (rows, w.shape[0]):
        _finish(b, op, "Gemm", [x, b.const(w, f"{op.name}_w"), *bias], NHWC, act, transB=1)
        return
    y = b.node("Gemm", [x, b.const(w, f"{op.name}_w"), *bias], hint=op.name, transB=1)
    y = _act(b, y, act, op)
    _finish(b, op, "Reshape", [y, b.const(np.array(y_shape, np.int64), "shape")], NHWC)


def _pool(onnx_op: str):
    def lower(b: OnnxBuilder, op: TflOp) -> None:
        o = op.options
        pads = _pads(b, op, o.filterHeight, o.filterWidth, o.strideH, o.strideW)
        attrs: dict[str, Any] = {"kernel_shape": [o.filterHeight, o.filterWidth], "strides": [o.strideH, o.strideW],
                                 "pads": pads}
        if onnx_op == "AveragePool":
            attrs["count_include_pad"] = 0  # TFLite averages over the in-bounds elements only
        _finish(b, op, onnx_op, [b.value(op.inputs[0], NCHW)], NCHW, o.fusedActivationFunction, **attrs)
    return lower


def _binary(b: OnnxBuilder, op: TflOp) -> None:
    names, layout = _binary_inputs(b, op)
    act = getattr(op.options, "fusedActivationFunction", _ACT_NONE) if op.options is not None else _ACT_NONE
    _finish(b, op, _BINARY[op.op], names, layout, act)


def _not_equal(b: OnnxBuilder, op: TflOp) -> None:
    names, layout = _binary_inputs(b, op)
    _finish(b, op, "Not", [b.node("Equal", names, hint=f"{op.name}_equal")], layout)


def _squared_difference(b: OnnxBuilder, op: TflOp) -> None:
    """(x - y)^2: a Sub, then a Mul of the difference by itself."""
    names, layout = _binary_inputs(b, op)
    d = b.node("Sub", names, hint=f"{op.name}_sub")
    _finish(b, op, "Mul", [d, d], layout)


def _binary_inputs(b: OnnxBuilder, op: TflOp) -> tuple[list[str], str]:
    """An elementwise op's two inputs and its layout: NCHW when an input already is and every other
    input is 4-D or a constant (broadcast along the channels, transposed here)."""
    ins = op.inputs[:2]
    y_rank = len(b.tensor(op.outputs[0]).shape)
    layout = NCHW if y_rank == 4 and any(b.prefers(i) == NCHW for i in ins) else NHWC
    names = []
    for i in ins:
        t = b.tensor(i)
        if layout == NCHW and len(t.shape) < 4:
            if t.data is None:
                layout = NHWC
                break
    for i in ins:
        t = b.tensor(i)
        if layout == NCHW and len(t.shape) < 4:  # a constant broadcast along the trailing (channel) axes
            data = float_const(t).reshape((1,) * (4 - len(t.shape)) + t.shape).transpose(TO_NCHW)
            names.append(b.const(np.ascontiguousarray(data), f"{b.names[i]}_nchw"))
        else:
            names.append(b.value(i, layout))
    return names, layout


def _unary(b: OnnxBuilder, op: TflOp) -> None:
    layout = b.prefers(op.inputs[0])
    x = b.value(op.inputs[0], layout)
    if op.op == "RSQRT":
        _finish(b, op, "Reciprocal", [b.node("Sqrt", [x], hint=f"{op.name}_sqrt")], layout)
        return
    if op.op == "SQUARE":
        _finish(b, op, "Mul", [x, x], layout)
        return
    _finish(b, op, _UNARY[op.op], [x], layout)


def _clip(lo: float, hi: float):
    def lower(b: OnnxBuilder, op: TflOp) -> None:
        layout = b.prefers(op.inputs[0])
        _finish(b, op, "Clip", [b.value(op.inputs[0], layout), b.const(np.float32(lo), "lo"),
                                b.const(np.float32(hi), "hi")], layout)
    return lower


def _leaky_relu(b: OnnxBuilder, op: TflOp) -> None:
    layout = b.prefers(op.inputs[0])
    _finish(b, op, "LeakyRelu", [b.value(op.inputs[0], layout)], layout, alpha=float(op.options.alpha))


def _softmax(b: OnnxBuilder, op: TflOp) -> None:
    x = b.value(op.inputs[0], NHWC)
    beta = float(op.options.beta) if op.options is not None else 1.0
    if beta != 1.0:
        x = b.node("Mul", [x, b.const(np.float32(beta), "beta")], hint=f"{op.name}_beta")
    _finish(b, op, "Softmax", [x], NHWC, axis=-1)


def _reshape(b: OnnxBuilder, op: TflOp) -> None:
    shape = np.array(b.tensor(op.outputs[0]).shape, np.int64)
    _finish(b, op, "Reshape", [b.value(op.inputs[0], NHWC), b.const(shape, "shape")], NHWC)


def _axis(axis: int, rank: int, layout: str) -> int:
    axis = axis + rank if axis < 0 else axis
    return TO_NCHW.index(axis) if layout == NCHW else axis


def _concat(b: OnnxBuilder, op: TflOp) -> None:
    rank = len(b.tensor(op.outputs[0]).shape)
    live = [i for i in op.inputs if b.tensor(i).data is None]
    layout = NCHW if rank == 4 and live and all(b.prefers(i) == NCHW for i in live) else NHWC
    _finish(b, op, "Concat", [b.value(i, layout) for i in op.inputs], layout, op.options.fusedActivationFunction,
            axis=_axis(op.options.axis, rank, layout))


def _const_input(b: OnnxBuilder, op: TflOp, k: int, what: str) -> np.ndarray:
    t = b.tensor(op.inputs[k])
    if t.data is None:
        raise op_error(op, f"the {what} are computed at run time; aotc needs them constant")
    return t.data


def _mean(b: OnnxBuilder, op: TflOp) -> None:
    rank = len(b.tensor(op.inputs[0]).shape)
    axes = sorted({int(a) % rank for a in _const_input(b, op, 1, "axes").reshape(-1)})
    keep = bool(op.options.keepDims) if op.options is not None else False
    layout = b.prefers(op.inputs[0]) if keep else NHWC
    if not keep and rank == 4 and b.prefers(op.inputs[0]) == NCHW and axes == [1, 2]:
        layout = NCHW  # a global average pool: the result [N, C] is the same in either layout
    _finish(b, op, "ReduceMean", [b.value(op.inputs[0], layout)], layout,
            axes=[_axis(a, rank, layout) for a in axes], keepdims=int(keep))


def _reduce(onnx_op: str):
    """SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD over constant axes, in NHWC (opset 17's ReduceSum
    takes its axes as an input, the others as an attribute)."""
    def lower(b: OnnxBuilder, op: TflOp) -> None:
        rank = len(b.tensor(op.inputs[0]).shape)
        axes = sorted({int(a) % rank for a in _const_input(b, op, 1, "axes").reshape(-1)})
        keep = int(bool(op.options.keepDims)) if op.options is not None else 0
        x = b.value(op.inputs[0], NHWC)
        if onnx_op == "ReduceSum":
            _finish(b, op, onnx_op, [x, b.const(np.array(axes, np.int64), "axes")], NHWC, keepdims=keep)
        else:
            _finish(b, op, onnx_op, [x], NHWC, axes=axes, keepdims=keep)
    return lower


def _arg(b: OnnxBuilder, op: TflOp) -> None:
    """ARG_MAX / ARG_MIN (the first index of the extreme, as ONNX's select_last_index=0), cast to the
    file's int32 output."""
    rank = len(b.tensor(op.inputs[0]).shape)
    axis = int(_const_input(b, op, 1, "axis").reshape(-1)[0]) % rank
    onnx_op = "ArgMax" if op.op == "ARG_MAX" else "ArgMin"
    x = b.value(op.inputs[0], NHWC)
    if b.tensor(op.outputs[0]).dtype == "int64":
        _finish(b, op, onnx_op, [x], NHWC, axis=axis, keepdims=0)
        return
    y = b.node(onnx_op, [x], hint=op.name, axis=axis, keepdims=0)
    _finish(b, op, "Cast", [y], NHWC, to=onnx.TensorProto.INT32)


def _log_softmax(b: OnnxBuilder, op: TflOp) -> None:
    _finish(b, op, "LogSoftmax", [b.value(op.inputs[0], NHWC)], NHWC, axis=-1)


def _add_n(b: OnnxBuilder, op: TflOp) -> None:
    _finish(b, op, "Sum", [b.value(i, NHWC) for i in op.inputs], NHWC)


def _pack(b: OnnxBuilder, op: TflOp) -> None:
    """PACK: each input given a new axis (Unsqueeze), then concatenated along it."""
    rank = len(b.tensor(op.outputs[0]).shape)
    axis = int(op.options.axis) % rank
    axes = b.const(np.array([axis], np.int64), "axes")
    parts = [b.node("Unsqueeze", [b.value(i, NHWC), axes], hint=f"{op.name}_unsqueeze") for i in op.inputs]
    _finish(b, op, "Concat", parts, NHWC, axis=axis)


def _unpack(b: OnnxBuilder, op: TflOp) -> None:
    """UNPACK: a Split into ones along the axis, each Squeezed."""
    rank = len(b.tensor(op.inputs[0]).shape)
    axis = int(op.options.axis) % rank
    n = len(op.outputs)
    parts = [b.fresh(f"{op.name}_part{k}") for k in range(n)]
    b.node("Split", [b.value(op.inputs[0], NHWC), b.const(np.ones(n, np.int64), "split")], parts, hint=op.name,
           axis=axis)
    axes = b.const(np.array([axis], np.int64), "axes")
    for o, part in zip(op.outputs, parts, strict=True):
        b.node("Squeeze", [part, axes], [b.names[o]], hint=f"{op.name}_squeeze")
        b.values[o] = {NHWC: b.names[o]}


def _pad(b: OnnxBuilder, op: TflOp) -> None:
    pads = _const_input(b, op, 1, "paddings").astype(np.int64).reshape(-1, 2)
    layout = b.prefers(op.inputs[0])
    if layout == NCHW:
        pads = pads[list(TO_NCHW)]
    inputs = [b.value(op.inputs[0], layout), b.const(np.concatenate([pads[:, 0], pads[:, 1]]), "pads")]
    x = b.tensor(op.inputs[0])
    if op.op == "PADV2" and len(op.inputs) > 2:
        inputs.append(b.value(op.inputs[2]))
    elif x.quant is not None and x.dtype != "float32":  # a quantized tensor pads with its zero point (real 0)
        inputs.append(b.const(np.array(x.quant.zero_point[0], x.dtype), "pad_value"))
    _finish(b, op, "Pad", inputs, layout, mode="constant")


_REFLECT, _SYMMETRIC = 0, 1  # MirrorPadMode


def _mirror_pad(b: OnnxBuilder, op: TflOp) -> None:
    """REFLECT is ONNX Pad's reflect (the edge is not repeated). SYMMETRIC repeats the edge, which no
    ONNX Pad mode does: each padded axis is a Gather of the input along it with constant indices
    (p - 1 .. 0, 0 .. n - 1, n - 1 .. n - q), the mirror image including the edge."""
    x = b.tensor(op.inputs[0])
    if x.dtype != "float32":
        raise op_error(op, f"MIRROR_PAD of {x.dtype} tensors is not supported (float32 only)")
    pads = _const_input(b, op, 1, "paddings").astype(np.int64).reshape(-1, 2)
    mode = int(op.options.mode) if op.options is not None else _REFLECT
    rank = len(x.shape)
    limit = 0 if mode == _SYMMETRIC else 1  # how far a pad may reach: the whole axis, or all but the edge
    for a, (before, after) in enumerate(pads):
        if before < 0 or after < 0 or max(before, after) > x.shape[a] - limit:
            raise op_error(op, f"MIRROR_PAD pads {[int(before), int(after)]} of an axis of {x.shape[a]}: "
                               f"TFLite allows 0 to {x.shape[a] - limit}")
    layout = b.prefers(op.inputs[0])
    if mode == _REFLECT:
        if layout == NCHW:
            pads = pads[list(TO_NCHW)]
        _finish(b, op, "Pad", [b.value(op.inputs[0], layout),
                               b.const(np.concatenate([pads[:, 0], pads[:, 1]]), "pads")], layout, mode="reflect")
        return
    if mode != _SYMMETRIC:
        raise op_error(op, f"MIRROR_PAD mode {mode} is not supported")
    y = b.value(op.inputs[0], layout)
    axes = [a for a in range(rank) if pads[a].any()]
    for k, a in enumerate(axes):
        n, (before, after) = x.shape[a], pads[a]
        index = np.concatenate([np.arange(before)[::-1], np.arange(n), n - 1 - np.arange(after)]).astype(np.int64)
        inputs = [y, b.const(index, f"{op.name}_index{a}")]
        if k == len(axes) - 1:
            _finish(b, op, "Gather", inputs, layout, axis=_axis(a, rank, layout))
            return
        y = b.node("Gather", inputs, hint=f"{op.name}_axis{a}", axis=_axis(a, rank, layout))
    _finish(b, op, "Identity", [y], layout)


def _strided_slice(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    if o.ellipsisMask or o.newAxisMask:
        raise op_error(op, "STRIDED_SLICE with an ellipsis or new-axis mask is not supported")
    if getattr(o, "offset", False):
        raise op_error(op, "STRIDED_SLICE with offset=true is not supported")
    shape = b.tensor(op.inputs[0]).shape
    begin, end = _const_input(b, op, 1, "begins"), _const_input(b, op, 2, "ends")
    strides = _const_input(b, op, 3, "strides")
    starts, ends, steps = [], [], []
    for a, dim in enumerate(shape):
        s = int(strides[a])
        lo = None if o.beginMask >> a & 1 else int(begin[a])
        hi = None if o.endMask >> a & 1 else int(end[a])
        if o.shrinkAxisMask >> a & 1:
            lo = int(begin[a]) % dim
            hi, s = lo + 1, 1
        start, stop, step = slice(lo, hi, s).indices(dim)
        starts.append(start)
        ends.append(stop if stop >= 0 else -dim - 1)
        steps.append(step)
    # a 4-D slice that keeps its rank is done in NCHW when its input is there already (no transpose)
    layout = b.prefers(op.inputs[0]) if not o.shrinkAxisMask else NHWC
    if layout == NCHW:
        starts, ends, steps = ([v[a] for a in TO_NCHW] for v in (starts, ends, steps))
    x = b.value(op.inputs[0], layout)
    const = lambda v, n: b.const(np.array(v, np.int64), n)  # noqa: E731
    y_shape = b.tensor(op.outputs[0]).shape
    args = [x, const(starts, "starts"), const(ends, "ends"), const(list(range(len(shape))), "axes"),
            const(steps, "steps")]
    if o.shrinkAxisMask:
        y = b.node("Slice", args, hint=op.name)
        _finish(b, op, "Reshape", [y, const(list(y_shape), "shape")], NHWC)
    else:
        _finish(b, op, "Slice", args, layout)


def _tile(b: OnnxBuilder, op: TflOp) -> None:
    reps = _const_input(b, op, 1, "multiples").astype(np.int64).reshape(-1)
    _finish(b, op, "Tile", [b.value(op.inputs[0], NHWC), b.const(reps, "repeats")], NHWC)


def _transpose(b: OnnxBuilder, op: TflOp) -> None:
    perm = [int(v) for v in _const_input(b, op, 1, "permutation").reshape(-1)]
    _finish(b, op, "Transpose", [b.value(op.inputs[0], NHWC)], NHWC, perm=perm)


def _resize(b: OnnxBuilder, op: TflOp) -> None:
    """RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR of NHWC, as ONNX Resize along H and W (TFLite's
    align_corners and half_pixel_centers are ONNX coordinate modes)."""
    o = op.options
    y = b.tensor(op.outputs[0])
    align, half = bool(getattr(o, "alignCorners", False)), bool(getattr(o, "halfPixelCenters", False))
    nearest = op.op == "RESIZE_NEAREST_NEIGHBOR"
    if align:
        ctm = "align_corners"
    elif half:
        ctm = "tf_half_pixel_for_nn" if nearest else "half_pixel"
    else:
        ctm = "asymmetric"
    attrs: dict[str, Any] = {"mode": "nearest" if nearest else "linear", "coordinate_transformation_mode": ctm}
    if nearest:
        attrs["nearest_mode"] = "round_prefer_ceil" if align else "floor"
    sizes = b.const(np.array(y.shape, np.int64), "sizes")
    _finish(b, op, "Resize", [b.value(op.inputs[0], NHWC), "", "", sizes], NHWC, **attrs)
    # its shape is the file's: after an int8 op ONNX's inference stops, and onnx's reference evaluator
    # (aotc's fallback) has no tf_half_pixel_for_nn
    b.value_infos.append(value_info(y, b.nodes[-1].output[0]))


def _lstm(b: OnnxBuilder, op: TflOp) -> None:
    lower_lstm(b, op)


def _slice(b: OnnxBuilder, op: TflOp) -> None:
    shape = b.tensor(op.inputs[0]).shape
    begin = _const_input(b, op, 1, "begins").astype(np.int64).reshape(-1)
    size = _const_input(b, op, 2, "sizes").astype(np.int64).reshape(-1)
    end = np.where(size < 0, np.array(shape, np.int64), begin + size)
    const = lambda v, n: b.const(np.asarray(v, np.int64), n)  # noqa: E731
    _finish(b, op, "Slice", [b.value(op.inputs[0], NHWC), const(begin, "starts"), const(end, "ends"),
                             const(list(range(len(shape))), "axes")], NHWC)


def _gather(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    if o is not None and getattr(o, "batchDims", 0):
        raise op_error(op, "GATHER with batch_dims is not supported")
    rank = len(b.tensor(op.inputs[0]).shape)
    axis = int(o.axis) % rank if o is not None else 0
    _finish(b, op, "Gather", [b.value(op.inputs[0], NHWC), b.value(op.inputs[1], NHWC)], NHWC, axis=axis)


def _float_only(b: OnnxBuilder, op: TflOp, k: int) -> None:
    dtype = b.tensor(op.inputs[k]).dtype
    if dtype != "float32":
        raise op_error(op, f"{op.op} of {dtype} tensors is not supported (float32 only)")


def _gather_nd(b: OnnxBuilder, op: TflOp) -> None:
    """GATHER_ND is ONNX GatherND (batch_dims 0) with int64 indices."""
    idx = b.tensor(op.inputs[1])
    if idx.data is not None:
        indices = b.const(idx.data.astype(np.int64), f"{b.names[op.inputs[1]]}_i64")
    else:
        indices = b.node("Cast", [b.value(op.inputs[1], NHWC)], hint=f"{op.name}_i64", to=onnx.TensorProto.INT64)
    _finish(b, op, "GatherND", [b.value(op.inputs[0], NHWC), indices], NHWC)


def _select(b: OnnxBuilder, op: TflOp) -> None:
    """SELECT / SELECT_V2 (the latter broadcasting, as numpy does) are ONNX Where."""
    _float_only(b, op, 1)
    _finish(b, op, "Where", [b.value(i, NHWC) for i in op.inputs[:3]], NHWC)


def _space_depth(b: OnnxBuilder, op: TflOp) -> None:
    """SPACE_TO_DEPTH / DEPTH_TO_SPACE of NHWC: ONNX's NCHW ops on the NCHW value order the channels as
    TFLite does (block row, block column, then channel: DepthToSpace's DCR mode)."""
    _float_only(b, op, 0)
    onnx_op = "SpaceToDepth" if op.op == "SPACE_TO_DEPTH" else "DepthToSpace"
    attrs: dict[str, Any] = {"blocksize": int(op.options.blockSize)}
    if onnx_op == "DepthToSpace":
        attrs["mode"] = "DCR"
    _finish(b, op, onnx_op, [b.value(op.inputs[0], NCHW)], NCHW, **attrs)


def _batch_matmul(b: OnnxBuilder, op: TflOp) -> None:
    """BATCH_MATMUL is ONNX MatMul (batch dims broadcast as numpy does); adj_x / adj_y transpose the
    last two axes of x / y first."""
    names = []
    for k, adj in ((0, op.options is not None and op.options.adjX), (1, op.options is not None and op.options.adjY)):
        _float_only(b, op, k)
        x = b.value(op.inputs[k], NHWC)
        rank = len(b.tensor(op.inputs[k]).shape)
        if adj:
            x = b.node("Transpose", [x], hint=f"{op.name}_adj{'xy'[k]}",
                       perm=[*range(rank - 2), rank - 1, rank - 2])
        names.append(x)
    _finish(b, op, "MatMul", names, NHWC)


def _cast(b: OnnxBuilder, op: TflOp) -> None:
    to = helper.np_dtype_to_tensor_dtype(np.dtype(b.tensor(op.outputs[0]).dtype))
    layout = b.prefers(op.inputs[0])
    _finish(b, op, "Cast", [b.value(op.inputs[0], layout)], layout, to=to)


def _floor_div(b: OnnxBuilder, op: TflOp) -> None:
    """FLOOR_DIV of floats: Floor of the Div (ONNX's integer Div truncates, so integers are refused)."""
    _float_only(b, op, 0)
    names, layout = _binary_inputs(b, op)
    _finish(b, op, "Floor", [b.node("Div", names, hint=f"{op.name}_div")], layout)


def _cumsum(b: OnnxBuilder, op: TflOp) -> None:
    rank = len(b.tensor(op.inputs[0]).shape)
    axis = int(_const_input(b, op, 1, "axis").reshape(-1)[0]) % rank
    o = op.options
    _finish(b, op, "CumSum", [b.value(op.inputs[0], NHWC), b.const(np.array(axis, np.int64), "axis")], NHWC,
            exclusive=int(bool(o is not None and o.exclusive)), reverse=int(bool(o is not None and o.reverse)))


def _broadcast_to(b: OnnxBuilder, op: TflOp) -> None:
    shape = np.array(b.tensor(op.outputs[0]).shape, np.int64)
    _finish(b, op, "Expand", [b.value(op.inputs[0], NHWC), b.const(shape, "shape")], NHWC)


def _l2_normalization(b: OnnxBuilder, op: TflOp) -> None:
    """x / max(sqrt(sum of x^2 over the last axis), 1e-6), as TFLite's float kernel."""
    _float_only(b, op, 0)
    x = b.value(op.inputs[0], NHWC)
    sq = b.node("Mul", [x, x], hint=f"{op.name}_square")
    s = b.node("ReduceSum", [sq, b.const(np.array([-1], np.int64), "axes")], hint=f"{op.name}_sum", keepdims=1)
    norm = b.node("Max", [b.node("Sqrt", [s], hint=f"{op.name}_sqrt"), b.const(np.float32(1e-6), "epsilon")],
                  hint=f"{op.name}_norm")
    act = op.options.fusedActivationFunction if op.options is not None else _ACT_NONE
    _finish(b, op, "Div", [x, norm], NHWC, act)


def _split(b: OnnxBuilder, op: TflOp) -> None:
    """SPLIT (axis, x) and SPLIT_V (x, sizes, axis): the sizes are the outputs' own."""
    k_x, k_axis = (1, 0) if op.op == "SPLIT" else (0, 2)
    x = b.tensor(op.inputs[k_x])
    axis = int(_const_input(b, op, k_axis, "axis").reshape(-1)[0]) % len(x.shape)
    sizes = [b.tensor(o).shape[axis] for o in op.outputs]
    outs = [b.names[o] for o in op.outputs]
    b.node("Split", [b.value(op.inputs[k_x], NHWC), b.const(np.array(sizes, np.int64), "split")], outs,
           hint=op.name, axis=axis)
    for o, name in zip(op.outputs, outs, strict=True):
        b.values[o] = {NHWC: name}


def _quantize(b: OnnxBuilder, op: TflOp) -> None:
    lower_quantize(b, op)


def _dequantize(b: OnnxBuilder, op: TflOp) -> None:
    x = b.tensor(op.inputs[0])
    if x.data is not None and x.dtype == "float16":  # float16 weights: the constant, widened
        b.values[op.outputs[0]] = {NHWC: b.const(x.data.astype(np.float32), b.names[op.outputs[0]])}
        return
    lower_quantize(b, op)


_OPS = {
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _depthwise, "TRANSPOSE_CONV": _transpose_conv,
    "FULLY_CONNECTED": _fully_connected, "AVERAGE_POOL_2D": _pool("AveragePool"), "MAX_POOL_2D": _pool("MaxPool"),
    **{k: _binary for k in _BINARY}, **{k: _unary for k in _UNARY},
    "RELU6": _clip(0.0, 6.0), "RELU_N1_TO_1": _clip(-1.0, 1.0), "RELU_0_TO_1": _clip(0.0, 1.0),
    "LEAKY_RELU": _leaky_relu, "SOFTMAX": _softmax, "RESHAPE": _reshape, "SQUEEZE": _reshape,
    "EXPAND_DIMS": _reshape, "CONCATENATION": _concat, "MEAN": _mean, "PAD": _pad, "PADV2": _pad,
    "MIRROR_PAD": _mirror_pad,
    "STRIDED_SLICE": _strided_slice, "QUANTIZE": _quantize, "DEQUANTIZE": _dequantize, "TILE": _tile,
    "TRANSPOSE": _transpose, "RESIZE_NEAREST_NEIGHBOR": _resize, "RESIZE_BILINEAR": _resize,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm, "GATHER": _gather, "SPLIT": _split, "SLICE": _slice, "WHILE": lower_while,
    "IF": lower_if,
    "VAR_HANDLE": var_handle, "READ_VARIABLE": read_variable, "ASSIGN_VARIABLE": assign_variable,
    "CALL_ONCE": call_once, "SQUARED_DIFFERENCE": _squared_difference, "GATHER_ND": _gather_nd,
    "SELECT": _select, "SELECT_V2": _select, "SPACE_TO_DEPTH": _space_depth, "DEPTH_TO_SPACE": _space_depth,
    "BATCH_MATMUL": _batch_matmul, "NOT_EQUAL": _not_equal, "SUM": _reduce("ReduceSum"),
    "REDUCE_MAX": _reduce("ReduceMax"), "REDUCE_MIN": _reduce("ReduceMin"), "REDUCE_PROD": _reduce("ReduceProd"),
    "ARG_MAX": _arg, "ARG_MIN": _arg, "LOG_SOFTMAX": _log_softmax, "ADD_N": _add_n, "PACK": _pack,
    "UNPACK": _unpack, "SPLIT_V": _split, "CAST": _cast, "FLOOR_DIV": _floor_div, "CUMSUM": _cumsum,
    "BROADCAST_TO": _broadcast_to, "L2_NORMALIZATION": _l2_normalization,
}

FLOAT_BUILTINS = frozenset(_OPS)  # the builtins lowered for float tensors (aotc ops --tflite)
QUANTIZED_MOVES = frozenset(_MOVES)  # on int8/int16 tensors too: the same ONNX ops move the integers
