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

The float lowerings live by family, as aot/kernels/ and the ONNX canonical rules do: nn.py (convs,
fully connected, pools, softmax), elementwise.py, arrays.py (data movement), reduce.py, control.py
(WHILE, IF, resource variables); lowering.py holds what they share. This module walks the ops and
picks one. Quantized ops go to int8.py (aotc's internal NHWC int8 ops, TFLite's arithmetic); what it
does not cover yet is refused by name.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import helper

from aot.errors import AotcError
from aot.frontend.tflite import (
    arrays,
    bounded,
    complex64,
    detect,
    elementwise,
    hybrid,
    index,
    mediapipe,
    nn,
    reduce,
    resolver,
    signal,
    stablehlo,
    window,
)
from aot.frontend.tflite.builder import (
    NCHW,
    NHWC,
    TO_NHWC,
    OnnxBuilder,
    op_error,
    value_info,
)
from aot.frontend.tflite.control import (
    assign_variable,
    call_once,
    finish_variables,
    fold_constant_op,
    lower_case,
    lower_composite,
    lower_if,
    lower_while,
    read_variable,
    var_handle,
)
from aot.frontend.tflite.int8 import is_quantized, lower_int8, lower_quantize
from aot.frontend.tflite.lowering import ACT_NONE
from aot.frontend.tflite.reader import OpName, TflModel, TflOp
from aot.frontend.tflite.reference_types import NO_KERNEL, no_kernel
from aot.frontend.tflite.state import state_metadata
from aot.ir import tflite_ops as tfl

OPSET = 17
QUANT_KEY = "aotc.io_quantization"  # metadata_props: {tensor: {scale, zero_point}} of quantized inputs/outputs




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
    for i in [*model.inputs, *model.outputs]:  # (one an op reads or writes is refused by that op: complex64.py)
        if model.tensors[i].dtype == complex64.COMPLEX:
            raise AotcError(f"tensor '{model.tensors[i].name}' is a complex64 graph input or output, which aotc does "
                            "not support: complex64 stays inside the graph")
    outputs = []
    for o in model.outputs:
        name = b.names[o]
        have = b.values.get(o, {})
        if have.get(NHWC) != name:  # computed in NCHW, or an input or constant passed through
            src = have.get(NCHW) if NHWC not in have and NCHW in have else b.value(o, NHWC)
            b.node("Transpose" if src == have.get(NCHW) else "Identity", [src], [name], hint=f"{name}_out",
                   **({"perm": list(TO_NHWC)} if src == have.get(NCHW) else {}))
        outputs.append(value_info(model.tensors[o], name, run_rows=bool(b.rows)))
    inputs = [value_info(model.tensors[i], b.names[i]) for i in model.inputs if model.tensors[i].data is None]
    finish_variables(b)
    inputs += b.extra_inputs
    outputs += b.extra_outputs
    graph = helper.make_graph(b.nodes, "tflite", inputs, outputs, b.inits, value_info=b.value_infos)
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid(tfl.DOMAIN, 1)] if b.value_infos else [])
    opsets += [helper.make_opsetid(d, 1) for d in sorted(_contrib_domains(graph))]
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


def _contrib_domains(graph: onnx.GraphProto) -> set[str]:
    """The domains other than ONNX's and aotc's TFLite ops that the graph's nodes (and its loops' and
    branches' bodies) use: onnxruntime's com.microsoft for GELU."""
    found = set()
    for n in graph.node:
        if n.domain not in ("", "ai.onnx", tfl.DOMAIN):
            found.add(n.domain)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                found |= _contrib_domains(a.g)
    return found


def lower_ops(b: OnnxBuilder) -> None:
    """Every op of b's (sub)graph, in order."""
    for op in b.m.ops:
        check_arity(b, op)
        if complex64.check_complex(b, op):  # complex64 only between RFFT2D and COMPLEX_ABS / REAL / IMAG
            complex64.reshape(b, op)
            continue
        if op.op.startswith("CUSTOM:") and op.op[7:] in detect.CUSTOM:  # float or quantized inputs alike
            detect.CUSTOM[op.op[7:]](b, op)
            continue
        if op.op in _MOVES and _moves_quantized(b, op):
            if op.op in _NOT_INT16 and any(b.tensor(i).dtype == "int16" for i in _data_inputs(op)):
                raise op_error(op, f"{op.op} of int16 (16x8) is not supported: TFLite defines it on int8 only "
                               "(LiteRT's kernels and the converter refuse int16)")
            if _moves_values_unchanged(b, op):
                _OPS[op.op](b, op)  # int8 data movement: the same ONNX ops, on int8 tensors
                continue
            if op.op != "CONCATENATION":  # (lower_int8 says why for CONCATENATION)
                raise op_error(op, f"quantized {op.op} whose output is quantized unlike its input is not supported "
                               "(TFLite's kernels require equal scales and zero points)")
        if op.op in _STATE_OPS:  # resource variables hold any type's raw values, as LiteRT copies them
            _OPS[op.op](b, op)
            continue
        if op.op == "CAST" and is_quantized(b, op):  # LiteRT casts the raw integers, whatever their scale
            _OPS["CAST"](b, op)
            continue
        if is_quantized(b, op) and op.op not in ("QUANTIZE", "DEQUANTIZE"):
            lower_int8(b, op)
            continue
        if hybrid.is_hybrid(b, op):  # float input, int8 weights: LiteRT's hybrid kernels
            (_OPS[op.op] if op.op in hybrid.HYBRID_ELSEWHERE else hybrid.lower_hybrid)(b, op)
            continue
        _check_op(b, op)
        if fold_constant_op(b, op):
            continue
        fn = _OPS.get(op.op)
        if fn is None:
            if op.op.startswith("CUSTOM:"):
                raise AotcError(f"custom op '{op.op[7:]}' is not supported", node=OpName(op))
            why = f": {NO_KERNEL}" if no_kernel(op.op) else ""
            raise AotcError(f"TFLite op {op.op} is not supported{why}", node=OpName(op))
        fn(b, op)


# the fewest inputs and outputs each op's lowering reads (TFLite's definition of the op); (1, 1) when not listed
_ARITY: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("ADD", "SUB", "MUL", "DIV", "POW", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "FLOOR_DIV",
                     "FLOOR_MOD", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL", "NOT_EQUAL",
                     "LOGICAL_AND", "LOGICAL_OR", "PAD", "PADV2", "MIRROR_PAD", "TRANSPOSE", "GATHER", "GATHER_ND",
                     "TILE", "EXPAND_DIMS", "BATCH_MATMUL", "FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D",
                     "CONV_3D", "SPLIT", "MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY",
                     "REDUCE_ALL", "ARG_MAX", "ARG_MIN", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "FILL",
                     "BROADCAST_TO", "PRELU", "CUMSUM", "SEGMENT_SUM", "REVERSE_V2", "ATAN2", "TOPK_V2",
                     "BROADCAST_ARGS", "RIGHT_SHIFT", "BITWISE_XOR", "EMBEDDING_LOOKUP", "ASSIGN_VARIABLE",
                     "REVERSE_SEQUENCE", "SQUARED_DIFFERENCE", "STABLEHLO_ADD", "STABLEHLO_SUBTRACT",
                     "STABLEHLO_MULTIPLY", "STABLEHLO_DIVIDE", "STABLEHLO_MAXIMUM", "STABLEHLO_MINIMUM",
                     "STABLEHLO_POWER", "STABLEHLO_REMAINDER", "STABLEHLO_AND", "STABLEHLO_OR"), (2, 1)),
    **dict.fromkeys(("TRANSPOSE_CONV", "CONV_3D_TRANSPOSE", "SPLIT_V", "SLICE", "SPACE_TO_BATCH_ND",
                     "BATCH_TO_SPACE_ND", "SELECT", "SELECT_V2", "SCATTER_ND", "RANGE", "UNSORTED_SEGMENT_SUM",
                     "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_MIN", "DYNAMIC_UPDATE_SLICE",
                     "SPARSE_TO_DENSE", "STABLEHLO_SELECT", "STABLEHLO_CLAMP",
                     "STABLEHLO_DYNAMIC_UPDATE_SLICE"), (3, 1)),
    "STRIDED_SLICE": (4, 1), "ONE_HOT": (4, 1), "SVDF": (5, 1), "RNN": (5, 1), "UNIDIRECTIONAL_SEQUENCE_RNN": (5, 1),
    "LSTM": (20, 1), "UNIDIRECTIONAL_SEQUENCE_LSTM": (20, 1), "BIDIRECTIONAL_SEQUENCE_LSTM": (48, 1),
    "BIDIRECTIONAL_SEQUENCE_RNN": (12, 1), "VAR_HANDLE": (0, 1), "CALL_ONCE": (0, 0), "WHILE": (0, 0),
    "IF": (1, 0), "STABLEHLO_COMPOSITE": (0, 0), "NON_MAX_SUPPRESSION_V4": (5, 2), "NON_MAX_SUPPRESSION_V5": (6, 3),
    "REDUCE_WINDOW": (5, 1), "MATRIX_SET_DIAG": (2, 1), "STABLEHLO_RNG_BIT_GENERATOR": (1, 2), "UNIQUE": (1, 2),
    "CUSTOM:MaxPoolingWithArgmax2D": (1, 2), "STABLEHLO_PAD": (2, 1),
}
_ARITY["EMBEDDING_LOOKUP_SPARSE"] = (5, 1)
_ARITY["TOPK_V2"] = (2, 2)  # (values and indices)
_ARITY["ASSIGN_VARIABLE"] = (2, 0)  # (after the table's (2, 1) group: it has no output)
# ops whose inputs include optional ones (-1) before the last required one: only their count is checked
_OPTIONAL_INSIDE = frozenset({"LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM",
                              "BIDIRECTIONAL_SEQUENCE_RNN", "SVDF", "RNN", "UNIDIRECTIONAL_SEQUENCE_RNN"})


# the ranks the lowerings index: op -> {input k: rank} (the output's, "out")
_RANKS: dict[str, dict[int | str, int]] = {
    **dict.fromkeys(("CONV_2D", "DEPTHWISE_CONV_2D"), {0: 4, 1: 4, "out": 4}),
    "TRANSPOSE_CONV": {1: 4, 2: 4, "out": 4}, "CONV_3D": {0: 5, 1: 5, "out": 5},
    "CONV_3D_TRANSPOSE": {1: 5, 2: 5, "out": 5},
    **dict.fromkeys(("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D", "SPACE_TO_DEPTH", "DEPTH_TO_SPACE",
                     "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"), {0: 4, "out": 4}),
    "FULLY_CONNECTED": {1: 2}, "RNN": {0: 2, 1: 2, 2: 2}, "UNIDIRECTIONAL_SEQUENCE_RNN": {0: 3, 1: 2, 2: 2},
}


# op -> (its bias input, the axis of its weights (input 1) that counts the output channels)
_BIAS = {"CONV_2D": (2, 0), "FULLY_CONNECTED": (2, 0), "DEPTHWISE_CONV_2D": (2, 3), "TRANSPOSE_CONV": (3, 0),
         "CONV_3D": (2, 4), "CONV_3D_TRANSPOSE": (3, 3)}


# ops whose output is of their first input's type (TFLite's kernels refuse any other): a file that says otherwise
# would reach the C as a call on mismatched pointers
_SAME_TYPE = frozenset({
    "ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "BITWISE_XOR", "RIGHT_SHIFT", "FLOOR_DIV", "FLOOR_MOD",
    "SQUARED_DIFFERENCE", "POW", "NEG", "ABS", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU", "TANH",
    "LOGISTIC", "EXP", "LOG", "SQRT", "RSQRT", "SIN", "COS", "FLOOR", "CEIL", "ROUND", "SQUARE", "SIGN", "ELU",
    "HARD_SWISH", "ATAN2", "TRANSPOSE", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TILE", "REVERSE_V2",
})
# ops whose output is bool whatever their inputs
_BOOL_OUT = frozenset({"EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "LOGICAL_AND",
                       "LOGICAL_OR", "LOGICAL_NOT", "IS_FINITE"})
_HANDLE_OPS = frozenset({"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE", "WHILE", "IF",
                         "STABLEHLO_COMPOSITE", "STABLEHLO_CASE", "STABLEHLO_WHILE"})


def check_arity(b: OnnxBuilder, op: TflOp) -> None:
    """Refuse an op with fewer inputs or outputs than its lowering reads, a required input left out (-1), or an
    input of another rank than its lowering indexes (a conv's 4-D weights), before any lowering reads them."""
    if op.op.startswith("builtin "):
        return
    ins, outs = _ARITY.get(op.op, (1, 1))
    if len(op.inputs) < ins or len(op.outputs) < outs:
        raise op_error(op, f"{op.op.split(':')[-1]} takes at least {ins} input(s) and {outs} output(s); this one has "
                       f"{len(op.inputs)} and {len(op.outputs)}")
    if op.op not in _OPTIONAL_INSIDE:
        missing = next((k for k in range(ins) if op.inputs[k] < 0), None)
        if missing is not None:
            raise op_error(op, f"its input {missing} is left out (-1), but {op.op.split(':')[-1]} requires it")
    if any(i < 0 for i in op.outputs):
        raise op_error(op, "an output is left out (-1)")
    if op.op in _SAME_TYPE and op.inputs[0] >= 0 and b.tensor(op.outputs[0]).dtype != b.tensor(op.inputs[0]).dtype:
        x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
        raise op_error(op, f"its output '{y.name}' is {y.dtype}, its input '{x.name}' {x.dtype}: {op.op} gives its "
                       "input's type")
    if op.op in _BOOL_OUT and b.tensor(op.outputs[0]).dtype != "bool":
        y = b.tensor(op.outputs[0])
        raise op_error(op, f"its output '{y.name}' is {y.dtype}; {op.op} gives bool")
    if op.op not in _HANDLE_OPS:
        handle = next((b.tensor(i) for i in [*op.inputs, *op.outputs] if i >= 0 and b.tensor(i).dtype == "resource"),
                      None)
        if handle is not None:
            raise op_error(op, f"tensor '{handle.name}' is a resource handle, which {op.op} does not take")
    for k, rank in _RANKS.get(op.op, {}).items():
        i = op.outputs[0] if k == "out" else op.inputs[k]
        t = b.tensor(i)
        if len(t.shape) != rank:
            what = "output" if k == "out" else f"input {k}"
            raise op_error(op, f"its {what} '{t.name}' is {list(t.shape)}; {op.op} takes a {rank}-D one there")
    if op.op in _BIAS and len(op.inputs) > _BIAS[op.op][0] and op.inputs[_BIAS[op.op][0]] >= 0:
        k, axis = _BIAS[op.op]
        w, bias = b.tensor(op.inputs[1]), b.tensor(op.inputs[k])
        if len(w.shape) > axis and int(np.prod(bias.shape, dtype=np.int64)) != w.shape[axis]:
            raise op_error(op, f"its bias '{bias.name}' is {list(bias.shape)} for weights '{w.name}' of "
                           f"{w.shape[axis]} output channels ({list(w.shape)}): {op.op} takes one bias per channel")
    if op.op in _RANKS or op.op in _SAME_TYPE:  # ops that keep a non-empty input non-empty
        y = b.tensor(op.outputs[0])
        if 0 in y.shape and op.inputs[0] >= 0 and 0 not in b.tensor(op.inputs[0]).shape:
            raise op_error(op, f"its output '{y.name}' is declared {list(y.shape)}, with no elements, from an input "
                           f"of {list(b.tensor(op.inputs[0]).shape)}")


# ops that only move data: on int8 / int16 tensors they are the float lowering, when no value changes its
# quantisation (else they would requantise, which is refused). REDUCE_MAX / REDUCE_MIN pick elements and
# ARG_MAX / ARG_MIN their indices: a positive scale keeps the order of the integers. SHAPE reads only the
# shape, FILL copies its value.
_MOVES = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS", "CONCATENATION", "STRIDED_SLICE", "PAD", "PADV2", "TILE",
          "RESIZE_NEAREST_NEIGHBOR", "TRANSPOSE", "GATHER", "GATHER_ND", "SLICE", "SPLIT", "SPLIT_V", "PACK",
          "UNPACK", "SPACE_TO_DEPTH", "DEPTH_TO_SPACE", "BROADCAST_TO", "MIRROR_PAD", "REVERSE_V2",
          "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "REDUCE_MAX", "REDUCE_MIN", "ARG_MAX", "ARG_MIN", "SELECT",
          "SELECT_V2", "SHAPE", "FILL", "STABLEHLO_GATHER", "STABLEHLO_SCATTER")
_STATE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")
_NOT_INT16 = ("SPACE_TO_DEPTH", "DEPTH_TO_SPACE", "ARG_MAX", "ARG_MIN")  # LiteRT's kernels take no int16
_ALL = -1
_DATA_INPUTS = {"CONCATENATION": _ALL, "PACK": _ALL, "SPLIT": (1,), "SELECT": (1, 2), "SELECT_V2": (1, 2),
                "FILL": (1,), "STABLEHLO_SCATTER": (0, 2)}  # the inputs whose values an op moves (else the first)
_INDEX_OUTPUT = ("ARG_MAX", "ARG_MIN", "SHAPE")  # their outputs are indices or a shape, not quantized


def _data_inputs(op: TflOp) -> list[int]:
    k = _DATA_INPUTS.get(op.op, (0,))
    return [i for i in (op.inputs if k == _ALL else [op.inputs[j] for j in k]) if i >= 0]


def _moves_quantized(b: OnnxBuilder, op: TflOp) -> bool:
    """The op moves quantized integers: its data inputs (op.inputs[0] for most) are."""
    return any(b.tensor(i).dtype in ("int8", "uint8", "int16") and b.tensor(i).quant is not None
               for i in _data_inputs(op))


def _moves_values_unchanged(b: OnnxBuilder, op: TflOp) -> bool:
    """Every output holds its inputs' integers under the same type, scale and zero point (for ARG_MAX /
    ARG_MIN / SHAPE: the input is quantized per tensor, so its integers order as its values)."""
    if op.op == "CONCATENATION" and op.options.fusedActivationFunction != ACT_NONE:
        return False
    data = [b.tensor(i) for i in _data_inputs(op)]
    if any(x.quant is None or x.quant.per_channel for x in data):
        return False
    if op.op in _INDEX_OUTPUT:
        return True
    for o in op.outputs:
        y = b.tensor(o)
        for x in data:
            if x.dtype != y.dtype or y.quant is None or x.quant.scale[0] != y.quant.scale[0] \
                    or x.quant.zero_point[0] != y.quant.zero_point[0]:
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










# --- ops -------------------------------------------------------------------------------


























































































def _quantize(b: OnnxBuilder, op: TflOp) -> None:
    lower_quantize(b, op)


def _dequantize(b: OnnxBuilder, op: TflOp) -> None:
    x = b.tensor(op.inputs[0])
    if x.data is not None and x.dtype == "float16":  # float16 weights: the constant, widened
        b.values[op.outputs[0]] = {NHWC: b.const(x.data.astype(np.float32), b.names[op.outputs[0]])}
        return
    lower_quantize(b, op)


def _densify(b: OnnxBuilder, op: TflOp) -> None:
    """DENSIFY of a constant is done by the reader (reader.py); LiteRT's kernel takes nothing else."""
    raise op_error(op, "DENSIFY of a run-time tensor is not supported: LiteRT's kernel takes a constant sparse "
                   "tensor only (aotc densifies those when it reads the file)")


_OPS = {
    **nn.OPS, **elementwise.OPS, **arrays.OPS, **reduce.OPS, **index.OPS, **mediapipe.OPS, **resolver.OPS,
    **signal.OPS, **complex64.OPS, **bounded.OPS, **window.OPS, **stablehlo.OPS,
    "QUANTIZE": _quantize, "DEQUANTIZE": _dequantize, "WHILE": lower_while, "IF": lower_if,
    "VAR_HANDLE": var_handle, "READ_VARIABLE": read_variable, "ASSIGN_VARIABLE": assign_variable,
    "CALL_ONCE": call_once, "STABLEHLO_COMPOSITE": lower_composite, "STABLEHLO_CASE": lower_case,
    "DENSIFY": _densify,
}

FLOAT_BUILTINS = frozenset(k for k in _OPS if not k.startswith("CUSTOM:"))  # lowered for float tensors
# the custom ops lowered (reader.py lets them by)
CUSTOM_LOWERED = frozenset(k[7:] for k in _OPS if k.startswith("CUSTOM:")) | frozenset(detect.CUSTOM)
QUANTIZED_MOVES = frozenset(_MOVES)  # on int8 tensors too: the same ONNX ops move the integers
QUANTIZED_MOVES_16 = QUANTIZED_MOVES - frozenset(_NOT_INT16)  # and on int16 (16x8) ones
