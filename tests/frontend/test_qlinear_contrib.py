"""The com.microsoft QLinear ops onnxruntime's quantize_static writes in QOperator form (issue 51):
QLinearAdd, QLinearMul, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearSoftmax, in one small float CNN quantized as users quantize it
(examples/quantize.py `quantized`: quant_pre_process, then quantize_static with calibration data),
uint8 and int8 activations. Every integer tensor is exposed as an output (expose_integers) and must
equal onnxruntime's, bit for bit."""

from __future__ import annotations

import functools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, shared_build
from quantcheck import compare_integers, reference
from quantize import expose_integers, quantized

QLINEAR = {"QLinearAdd", "QLinearMul", "QLinearConcat", "QLinearSigmoid", "QLinearLeakyRelu",
           "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearSoftmax"}


def float_cnn(seed: int = 5) -> onnx.ModelProto:
    """x [1, 3, 12, 12] -> Conv -> LeakyRelu = a; a * Sigmoid(a) = m; Conv(m) + a; Concat with m;
    AveragePool 2x2; GlobalAveragePool; Flatten; Gemm; Softmax."""
    rng = np.random.default_rng(seed)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)) * 0.3, "b1": rng.standard_normal(8) * 0.1,
             "w2": rng.standard_normal((8, 8, 1, 1)) * 0.3, "b2": rng.standard_normal(8) * 0.1,
             "w3": rng.standard_normal((16, 10)) * 0.5, "b3": rng.standard_normal(10) * 0.1}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["c1"], ["a"], alpha=0.1),
        helper.make_node("Sigmoid", ["a"], ["s"]),
        helper.make_node("Mul", ["a", "s"], ["m"]),
        helper.make_node("Conv", ["m", "w2", "b2"], ["c2"]),
        helper.make_node("Add", ["c2", "a"], ["r"]),
        helper.make_node("Concat", ["r", "m"], ["cat"], axis=1),
        helper.make_node("AveragePool", ["cat"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "qlinear_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                              [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


FEEDS = {"x": np.random.default_rng(7).standard_normal((1, 3, 12, 12)).astype(np.float32)}
ACTIVATIONS = ("uint8", "int8")


@functools.cache
def models() -> dict[str, onnx.ModelProto]:
    """The CNN quantized with each activation type: in a test, not at import (onnxruntime's quantizer imports sympy
    and took 7 s of every worker's collection)."""
    return {act: quantized(float_cnn(), "QOperator", activations=act) for act in ACTIVATIONS}


def test_quantize_static_writes_the_qlinear_ops():
    for m in models().values():
        assert QLINEAR <= {n.op_type for n in m.graph.node if n.domain == "com.microsoft"}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cases = [Case(f"qlinear_cnn_{act}", expose_integers(m), FEEDS) for act, m in models().items()]
    return shared_build(cases, tmp_path_factory.mktemp("qlinear_contrib"))


@pytest.mark.parametrize("case_id", [f"qlinear_cnn_{act}" for act in ACTIVATIONS])
def test_qlinear_ops_match_onnxruntime_exactly(results, case_id):
    case = results.cases[case_id]
    ours, refs = results.run(case_id), reference(case)
    share, worst = compare_integers(case, ours, refs)
    assert share == 1.0, f"{case_id}: {share:.4%} of the integers identical, max {worst} LSB"
    for o, r in zip(ours, refs, strict=True):
        if r.dtype.kind == "f":
            np.testing.assert_array_equal(o, r, err_msg=case_id)
