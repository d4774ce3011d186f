"""float64 models end to end (issue 69): a double-precision export, as a torch model's .double() gives or a
pitch detector ships, through aotc MODEL -o OUT, cmake --build OUT and aotc run, against onnxruntime (or onnx's
reference evaluator where onnxruntime has no double kernel: Conv), every output within 1e-12."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from modelcheck import compile_build_run, reference
from onnx import TensorProto, helper, numpy_helper
from opcheck import F64_TOLERANCE, assert_close

_rng = np.random.default_rng(69)


def _w(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array(_rng.standard_normal(shape) / np.sqrt(shape[-1]), name)


def _model(nodes: list, inputs: dict[str, list[int]], outputs: dict[str, list[int]], inits: list) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "f64", [helper.make_tensor_value_info(k, TensorProto.DOUBLE, s)
                                             for k, s in inputs.items()],
                              [helper.make_tensor_value_info(k, TensorProto.DOUBLE, s) for k, s in outputs.items()],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def mlp_softmax() -> onnx.ModelProto:
    """A torch.nn.Sequential(Linear, ReLU, Linear, Tanh, Linear) classifier in double, exported as torch writes
    it (MatMul + Add for a batched Linear, Gemm for a 2-D one), then Softmax and LogSoftmax over the classes."""
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]), helper.make_node("Add", ["h1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("Gemm", ["r1", "w2", "b2"], ["h2"], transB=1),
        helper.make_node("Tanh", ["h2"], ["t2"]),
        helper.make_node("Gemm", ["t2", "w3", "b3"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
        helper.make_node("LogSoftmax", ["logits"], ["log_probs"], axis=-1),
    ]
    inits = [_w("w1", 40, 64), _w("b1", 64), _w("w2", 32, 64), _w("b2", 32), _w("w3", 10, 32), _w("b3", 10)]
    return _model(nodes, {"x": [4, 40]}, {"probs": [4, 10], "log_probs": [4, 10]}, inits)


def pitch_detector() -> onnx.ModelProto:
    """A small CREPE-like pitch detector in double: 1-D convs over a frame of audio, a max over time
    (ReduceMax), a dense layer, then Sigmoid over the pitch bins and the Softmax the issue's model ends in."""
    nodes = [
        helper.make_node("Conv", ["x", "c1", "cb1"], ["y1"], strides=[2], pads=[3, 3]),
        helper.make_node("Relu", ["y1"], ["r1"]),
        helper.make_node("Conv", ["r1", "c2", "cb2"], ["y2"], pads=[2, 2], group=2),
        helper.make_node("Relu", ["y2"], ["r2"]),
        helper.make_node("ReduceMax", ["r2"], ["pooled"], axes=[2], keepdims=0),
        helper.make_node("MatMul", ["pooled", "wd"], ["h"]), helper.make_node("Add", ["h", "bd"], ["logits"]),
        helper.make_node("Sigmoid", ["logits"], ["activation"]),
        helper.make_node("Softmax", ["logits"], ["bins"], axis=1),
    ]
    inits = [_w("c1", 8, 1, 8), _w("cb1", 8), _w("c2", 16, 4, 5), _w("cb2", 16), _w("wd", 16, 24), _w("bd", 24)]
    return _model(nodes, {"x": [2, 1, 128]}, {"activation": [2, 24], "bins": [2, 24]}, inits)


def _expected(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    if any(n.op_type == "Conv" for n in model.graph.node):  # onnxruntime's CPU provider has no double Conv
        from onnx.reference import ReferenceEvaluator

        return list(ReferenceEvaluator(model).run(None, feeds))
    return reference(model, feeds)


# the fast tier: the MLP (MatMul, Gemm, Softmax); the conv net in the full tier
@pytest.mark.parametrize("name", ["mlp_softmax", pytest.param("pitch_detector", marks=pytest.mark.full)])
def test_float64_model_matches_reference(tmp_path, name):
    model = {"mlp_softmax": mlp_softmax, "pitch_detector": pitch_detector}[name]()
    feeds = {i.name: _rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
             for i in model.graph.input}
    meta, ours = compile_build_run(tmp_path, model, feeds, name, cmake_args=("-DAOTC_WARNINGS_AS_ERRORS=ON",))
    assert all(spec["dtype"] == "float64" for spec in meta["outputs"]), meta["outputs"]
    for spec, ref in zip(meta["outputs"], _expected(model, feeds), strict=True):
        assert_close(ours[spec["name"]], ref, f"{name}:{spec['name']}", F64_TOLERANCE)
