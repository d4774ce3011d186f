"""Malformed .tflite files are refused in one line naming the tensor or op (issue 69), not an internal error.

Each case breaks one thing in a repo model through TFLite's object API (ModelT), repacks it and runs
`aotc FILE -o OUT --no-configure` in this process: exit 2, the exact message, OUT not made. One case per
class of malformation the reader's checks (aot/frontend/tflite/validate.py) or a lowering's catch; the
fuzzer (tests/cli/test_fuzz_tflite.py) finds the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from modelcheck import aotc

MODELS = Path(__file__).resolve().parents[1] / "models" / "tflite"


def _sch():
    return pytest.importorskip("ai_edge_litert.schema_py_generated")


def _pack(model) -> bytes:
    import flatbuffers

    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _fc0(m):
    return m.subgraphs[0].operators[0]


def _tensor(m, k: int):
    return m.subgraphs[0].tensors[k]


def _set(obj, **fields):
    for k, v in fields.items():
        setattr(obj, k, v)


def _options(m, op_index: int, name: str):
    sch = _sch()
    op = m.subgraphs[0].operators[op_index]
    op.builtinOptionsType = getattr(sch.BuiltinOptions, name) if name else 0
    op.builtinOptions = getattr(sch, name + "T")() if name else None


def _quant(m, k: int, **fields):
    _set(_tensor(m, k).quantization, **fields)


def _const(m, k: int, values, dtype: str):
    """Tensor k's constant replaced by `values` (its shape and buffer both)."""
    import numpy as np

    data = np.asarray(values, dtype)
    _tensor(m, k).shape = list(data.shape)
    m.buffers[_tensor(m, k).buffer].data = list(data.tobytes())


def _op_tensor(m, op_index: int, k: int) -> int:
    return m.subgraphs[0].operators[op_index].inputs[k]


def _while_body_is_main(m):
    while_op = m.subgraphs[0].operators[3]
    while_op.builtinOptions.bodySubgraphIndex = 0


# (model, what is broken, the mutation, the message after "aotc: error: ")
SINE, KWS, IFC, ARR = "sine_float", "keyword_int8", "ifconst_float", "arrays_16x8"
CASES: list[tuple[str, str, Callable, str]] = [
    (SINE, "op input index", lambda m: _set(_fc0(m), inputs=[0, 99, 6]),
     "node 'FULLY_CONNECTED_0' (FULLY_CONNECTED): its inputs name tensor 99, but the subgraph has 10 tensors"),
    (SINE, "op output index", lambda m: _set(_fc0(m), outputs=[-1]),
     "node 'FULLY_CONNECTED_0' (FULLY_CONNECTED): its outputs name tensor -1, but the subgraph has 10 tensors"),
    (SINE, "intermediate index", lambda m: _set(_fc0(m), intermediates=[10]),
     "node 'FULLY_CONNECTED_0' (FULLY_CONNECTED): its intermediates name tensor 10, but the subgraph has 10 tensors"),
    (SINE, "subgraph output index", lambda m: _set(m.subgraphs[0], outputs=[12]),
     "cannot read model 'model.tflite': subgraph 0's outputs name tensor 12, but it has 10 tensors"),
    (SINE, "opcode index", lambda m: _set(_fc0(m), opcodeIndex=7),
     "cannot read model 'model.tflite': operator 0 has opcode index 7, but the file has 1 operator codes"),
    (SINE, "buffer index", lambda m: _set(_tensor(m, 5), buffer=1000),
     "tensor 'sequential_1/dense_1/MatMul' names buffer 1000, but the file has 13"),
    (SINE, "buffer after the file", lambda m: _set(m.buffers[_tensor(m, 5).buffer], data=None, offset=4096, size=64),
     "cannot read model 'model.tflite': buffer 6 lies at bytes 4096..4160 of a {size}-byte file"),
    (SINE, "buffer size", lambda m: _set(m.buffers[_tensor(m, 4).buffer], data=list(range(10))),
     "tensor 'sequential_1/dense_1_2/MatMul' is float32[16, 16]: 1024 bytes, but its buffer holds 10"),
    (SINE, "shape against data", lambda m: _set(_tensor(m, 5), shape=[16, 2]),
     "tensor 'sequential_1/dense_1/MatMul' is float32[16, 2]: 128 bytes, but its buffer holds 64"),
    (SINE, "negative dimension", lambda m: _set(_tensor(m, 7), shape=[1, -16]),
     "tensor 'sequential_1/dense_1/MatMul;sequential_1/dense_1/Relu;sequential_1/dense_1/BiasAdd' has shape "
     "[1, -16]: a negative dimension"),
    (SINE, "2 GiB tensor", lambda m: _set(_tensor(m, 7), shape=[65536, 65536]),
     "tensor 'sequential_1/dense_1/MatMul;sequential_1/dense_1/Relu;sequential_1/dense_1/BiasAdd' is "
     "float32[65536, 65536], 16 GiB: aotc refuses tensors of 2 GiB or more"),
    (SINE, "variable constant", lambda m: _set(_tensor(m, 5), isVariable=True),
     "tensor 'sequential_1/dense_1/MatMul' is a variable (state an op writes) and also a constant"),
    (SINE, "options of another op", lambda m: _options(m, 0, "AddOptions"),
     "node 'FULLY_CONNECTED_0' (FULLY_CONNECTED): its options table is AddOptions, not the FullyConnectedOptions "
     "it reads"),
    (SINE, "options missing", lambda m: _options(m, 0, ""),
     "node 'FULLY_CONNECTED_0' (FULLY_CONNECTED): it has no options table (FullyConnectedOptions)"),
    (SINE, "too few inputs", lambda m: _set(_fc0(m), inputs=[0]),
     "node 'FULLY_CONNECTED_0' (FULLY_CONNECTED): FULLY_CONNECTED takes at least 2 input(s) and 1 output(s); "
     "this one has 1 and 1"),
    (SINE, "required input left out", lambda m: _set(_fc0(m), inputs=[0, -1, 6]),
     "node 'FULLY_CONNECTED_0' (FULLY_CONNECTED): its input 1 is left out (-1), but FULLY_CONNECTED requires it"),
    (KWS, "weights' rank", lambda m: _set(_tensor(m, 11), shape=[16, 40]),
     "node 'CONV_2D_0' (CONV_2D): its input 1 'sequential_1_1/conv2d_1/convolution' is [16, 40]; CONV_2D "
     "takes a 4-D one there"),
    (KWS, "stride 0", lambda m: _set(m.subgraphs[0].operators[0].builtinOptions, strideH=0),
     "node 'CONV_2D_0' (CONV_2D): its option strideH is 0; it must be 1 or more"),
    (KWS, "padding", lambda m: _set(m.subgraphs[0].operators[5].builtinOptions, padding=7),
     "node 'AVERAGE_POOL_2D_5' (AVERAGE_POOL_2D): its padding is 7, neither SAME (0) nor VALID (1)"),
    (KWS, "NaN scale", lambda m: _quant(m, 0, scale=[float("nan")]),
     "tensor 'serving_default_keras_tensor_4:0' has quantization scale nan: a scale must be finite and positive"),
    (KWS, "zero scale", lambda m: _quant(m, 0, scale=[0.0]),
     "tensor 'serving_default_keras_tensor_4:0' has quantization scale 0.0: a scale must be finite and positive"),
    (KWS, "zero point out of range", lambda m: _quant(m, 0, zeroPoint=[300]),
     "tensor 'serving_default_keras_tensor_4:0' (int8) has zero point 300, outside -128..127"),
    (KWS, "per-channel lengths", lambda m: _quant(m, 2, zeroPoint=[0, 0, 0]),
     "tensor 'sequential_1_1/conv2d_2_1/convolution' has 16 quantization scales and 3 zero points"),
    (KWS, "per-channel axis", lambda m: _quant(m, 3, quantizedDimension=0),
     "tensor 'sequential_1_1/depthwise_conv2d_1_2/depthwise' has 16 quantization scales along dimension 0, of size 1"),
    (KWS, "per-channel axis out of rank", lambda m: _quant(m, 2, quantizedDimension=4),
     "tensor 'sequential_1_1/conv2d_2_1/convolution' is quantized per channel along dimension 4 of a rank-4 tensor"),
    (IFC, "subgraph index out of range", lambda m: _set(m.subgraphs[0].operators[2].builtinOptions,
                                                         thenSubgraphIndex=9),
     "node 'IF_2' (IF): its options name subgraph 9, but the file has subgraphs 0..4 (0 being the main one)"),
    (IFC, "subgraph calling itself", _while_body_is_main,
     "node 'WHILE_3' (WHILE): its options name subgraph 0, but the file has subgraphs 0..4 (0 being the main one)"),
    ("hybrid_lstm", "input with no elements", lambda m: _set(_tensor(m, 0), shape=[0, 5, 32]),
     "input 'serving_default_input_1:0' is [0, 5, 32]: an input with no elements"),
    (SINE, "subgraph input twice", lambda m: _set(m.subgraphs[0], inputs=[0, 0]),
     "tensor 'serving_default_keras_tensor:0' is listed twice among subgraph 0's inputs"),
    (KWS, "bias of another length",  # the fully-connected layer's [12, 16] weights as the first conv's bias
     lambda m: _set(m.subgraphs[0].operators[0], inputs=[*m.subgraphs[0].operators[0].inputs[:2], _op_tensor(m, 6, 1)]),
     "node 'CONV_2D_0' (CONV_2D): its bias 'sequential_1_1/dense_3_1/MatMul1' is [12, 16] for weights "
     "'sequential_1_1/conv2d_1/convolution' of 16 output channels ([16, 10, 4, 1]): CONV_2D takes one bias per "
     "channel"),
    (IFC, "WHILE condition without output", lambda m: _set(m.subgraphs[3], outputs=[]),
     "node 'WHILE_3' (WHILE): its condition subgraph 'while_cond' gives 0 output(s); WHILE takes 1 from it"),
    (IFC, "IF branch of two outputs", lambda m: _set(m.subgraphs[2], outputs=[7, 6]),
     "node 'IF_2' (IF): its then subgraph 'cond_true_130' gives 2 output(s); IF takes 1 from it"),
    # checked where the op is lowered
    (ARR, "float strides", lambda m: (_const(m, _op_tensor(m, 15, 3), [1.0, 1.0, 1.0, 1.0], "float32"),
                                      _set(_tensor(m, _op_tensor(m, 15, 3)), type=0)),
     "node 'STRIDED_SLICE_15' (STRIDED_SLICE): the strides ('functional_1_1/lambda_30_1/strided_slice') are float32; "
     "STRIDED_SLICE takes them as integers"),
    (ARR, "slice declared of another rank", lambda m: _set(_tensor(m, 26), shape=[1, 2, 3, 2, 1]),
     "node 'SLICE_3' (SLICE): its output 'StatefulPartitionedCall_1:1' is declared [1, 2, 3, 2, 1]; the slice is "
     "[1, 2, 3, 2]"),
    ("moves_float", "concatenation axis", lambda m: _set(m.subgraphs[0].operators[2].builtinOptions, axis=-5),
     "node 'CONCATENATION_2' (CONCATENATION): axis -5 of a rank-4 output"),
    ("math16_16x8", "comparison declared float16", lambda m: _set(_tensor(m, 30), type=1),
     "node 'EQUAL_19' (EQUAL): its output 't30' is float16; EQUAL gives bool"),
    ("acts_int8", "hard-swish output scale", lambda m: _quant(m, 6, scale=[1e-30]),
     "node 'HARD_SWISH_5' (HARD_SWISH): int8 HARD_SWISH whose output scale 1e-30 is below 1/128 of its input scale "
     "0.00784227 is not supported (LiteRT's kernel requires it at or above)"),
    ("ints_float", "update larger than its input", lambda m: _set(_tensor(m, 13), shape=[3, 4]),
     "node 'DYNAMIC_UPDATE_SLICE_7' (DYNAMIC_UPDATE_SLICE): an update of shape [1, 2, 3] does not fit in an input "
     "of shape [3, 4] (TFLite requires the same rank, no dimension larger)"),
    (ARR, "zero stride", lambda m: _const(m, _op_tensor(m, 15, 3), [1, 0, 1, 1], "int32"),
     "node 'STRIDED_SLICE_15' (STRIDED_SLICE): strides [1, 0, 1, 1] hold a 0"),
    (ARR, "paddings of another rank", lambda m: _const(m, _op_tensor(m, 11, 1), [[0, 0], [1, 1], [1, 1]], "int32"),
     "node 'MIRROR_PAD_11' (MIRROR_PAD): its paddings hold 6 values; a rank-4 input takes 8"),
    (ARR, "slice sizes of another rank", lambda m: _const(m, _op_tensor(m, 3, 2), [1, 2], "int32"),
     "node 'SLICE_3' (SLICE): begins and sizes of 4 and 2 values for a rank-4 input"),
    ("stablehlo_float", "RANGE without end", lambda m: _const(m, _op_tensor(m, 7, 2), 0.0, "float32"),
     "node 'RANGE_7' (RANGE): RANGE(1.0, 3.0, 0.0) has no end"),
    ("stablehlo_float", "RANGE of 2e9 elements (not allocated)",
     lambda m: _const(m, _op_tensor(m, 7, 2), 1e-9, "float32"),
     "node 'RANGE_7' (RANGE): RANGE gives 2000000057 elements where the file declares [4]"),
    ("stream_float", "READ_VARIABLE of a value", lambda m: _set(m.subgraphs[0].operators[3], inputs=[0]),
     "node 'READ_VARIABLE_3' (READ_VARIABLE): its input 'serving_default_input_1:0' is not the handle a VAR_HANDLE "
     "made"),
    ("svdf_float", "SVDF rank", lambda m: _set(m.subgraphs[0].operators[0].builtinOptions, rank=3),
     "node 'SVDF_0' (SVDF): SVDF of rank 3 on input [2, 12], feature weights [8, 12] and time weights [8, 5]: "
     "2-D tensors, and filters a multiple of the rank needed"),
    ("svdf_int8", "integer SVDF's weights without scales", lambda m: _quant(m, 1, scale=[], zeroPoint=[]),
     "node 'SVDF_0' (SVDF): integer SVDF needs quantization parameters on tensor 't1'"),
    ("person_16x8", "a pool's output declared empty", lambda m: _set(_tensor(m, 15), shape=[1, 0, 6, 16]),
     "node 'MAX_POOL_2D_5' (MAX_POOL_2D): its output 'sequential_1_1/max_pooling2d_1/MaxPool2d' is declared "
     "[1, 0, 6, 16], with no elements, from an input of [1, 12, 12, 16]"),
    ("bounded_float", "NMS scores declared int16", lambda m: _set(_tensor(m, 20), type=7),
     "node 'NON_MAX_SUPPRESSION_V5_1' (NON_MAX_SUPPRESSION_V5): its output 'Identity_8' is declared int16: the op "
     "gives float32"),
]


@pytest.mark.parametrize("model,what,mutate,message", CASES, ids=[c[1] for c in CASES])
def test_malformed_tflite_is_refused_in_one_line(tmp_path, model, what, mutate, message):
    sch = _sch()
    m = sch.ModelT.InitFromPackedBuf((MODELS / f"{model}.tflite").read_bytes(), 0)
    mutate(m)
    data = _pack(m)
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    out = tmp_path / "out"
    ran = aotc(path, "-o", out, "--no-configure", check=False)
    expected = "aotc: error: " + message.replace("'model.tflite'", f"'{path}'").replace("{size}", str(len(data)))
    assert (ran.returncode, ran.stderr.strip()) == (2, expected), what
    assert not out.exists()  # refused before anything is written


def test_a_subgraph_that_runs_itself_is_refused(tmp_path):
    """WHILE whose body is the subgraph holding it: the lowering would inline it forever."""
    sch = _sch()
    from aot.errors import AotcError
    from aot.frontend.tflite.validate import _no_cycle

    with pytest.raises(AotcError, match="subgraph 1, which is already running it"):
        _no_cycle({0: [(1, None)], 1: [(2, None)], 2: [(1, None)]})
    m = sch.ModelT.InitFromPackedBuf((MODELS / f"{IFC}.tflite").read_bytes(), 0)
    body = m.subgraphs[0].operators[3].builtinOptions.bodySubgraphIndex
    again = m.subgraphs[0].operators[3]  # the body runs the WHILE again (on tensors of its own)
    again.inputs, again.outputs = [0] * len(again.inputs), [0] * len(again.outputs)
    m.subgraphs[body].operators = [again]
    path = tmp_path / "model.tflite"
    path.write_bytes(_pack(m))
    ran = aotc(path, "-o", tmp_path / "out", "--no-configure", check=False)
    assert ran.returncode == 2 and "is already running it (a subgraph may not call itself)" in ran.stderr, ran.stderr


def test_every_repo_model_passes_the_checks():
    """The checks refuse no model the repo holds (they are the files the converters write)."""
    _sch()
    from aot.frontend.tflite.reader import read_tflite

    for path in sorted(MODELS.parent.rglob("*.tflite")):
        read_tflite(path)


def test_tensors_without_names_take_their_index(tmp_path):
    """A file whose tensors have empty names (a stripped or damaged one) compiles, each named by its index: the
    ONNX the frontend writes names every value (the seed-70 fuzz's reduce_float case ended in a KeyError)."""
    import json

    sch = _sch()
    m = sch.ModelT.InitFromPackedBuf((MODELS / "reduce_float.tflite").read_bytes(), 0)
    for t in m.subgraphs[0].tensors:
        t.name = b""
    path = tmp_path / "model.tflite"
    path.write_bytes(_pack(m))
    aotc(path, "-o", tmp_path / "out", "--no-configure")
    meta = json.loads((tmp_path / "out" / "bundle" / "metadata.json").read_text())
    assert [i["name"] for i in meta["inputs"]] == ["tensor_0"]


def test_rank1_per_channel_scales_along_another_dimension_are_read_along_the_only_one(tmp_path):
    """TFLM's person_detect sets quantized_dimension 3 on its rank-1 per-channel conv biases: TFLM reads them along
    their only axis, and so does aotc (compiled, not refused as a malformed axis)."""
    sch = _sch()
    m = sch.ModelT.InitFromPackedBuf((MODELS / "person_int8.tflite").read_bytes(), 0)
    biases = [t for t in m.subgraphs[0].tensors if len(t.shape) == 1 and t.quantization is not None
              and t.quantization.scale is not None and len(t.quantization.scale) > 1]
    assert biases
    for t in biases:
        t.quantization.quantizedDimension = 3
    path = tmp_path / "model.tflite"
    path.write_bytes(_pack(m))
    aotc(path, "-o", tmp_path / "out", "--no-configure")
