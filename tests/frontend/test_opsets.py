"""Opsets 26 to 28 (issue 15, docs/opsets.md): accepted, with each changed op compiled in its new form or refused
by name; beyond 28 refused."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import model_case, shared_build

from aot.compiler import compile_model
from aot.errors import AotcError


def _model(nodes: list[onnx.NodeProto], opset: int, inits: dict[str, np.ndarray] | None = None,
           x_shape: tuple = (1, 4, 4, 4)) -> onnx.GraphProto:
    return helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                             [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])


def _case(case_id: str, nodes, opset: int, inits=None, x_shape=(1, 4, 4, 4)):
    x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
    case = model_case(case_id, _model(nodes, opset, inits, x_shape), {"x": x}, opset)
    case.model.ir_version = 10
    return case


CASES = [
    _case(f"conv_relu_opset{v}", [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                                  helper.make_node("Relu", ["c"], ["y"])], v,
          {"w": np.random.default_rng(v).standard_normal((2, 4, 3, 3)).astype(np.float32)}) for v in (26, 27, 28)
]
# ReduceLogSumExp-28 (integer types dropped, float unchanged)
CASES.append(_case("reduce_logsumexp_opset28", [helper.make_node("ReduceLogSumExp", ["x", "axes"], ["y"])], 28,
                   {"axes": np.array([1], np.int64)}))
# ops without a host kernel, on constants: folded by onnx's reference in their opset-28 / 27 forms
CASES.append(_case("spacetodepth_crd_folded", [
    helper.make_node("SpaceToDepth", ["c"], ["s"], blocksize=2, mode="CRD"),
    helper.make_node("Add", ["x", "s"], ["y"])], 28, {"c": np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)},
    x_shape=(1, 4, 2, 2)))
CASES.append(_case("mod_fmod_folded", [
    helper.make_node("Mod", ["a", "b"], ["m"], fmod=1), helper.make_node("Add", ["x", "m"], ["y"])], 28,
    {"a": np.array([-7.5, 7.5, -0.0, 3.0], np.float32), "b": np.array([2.0, -2.0, 3.0, -0.0], np.float32)},
    x_shape=(4,)))


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_opset_29_is_refused():
    case = _case("relu", [helper.make_node("Relu", ["x"], ["y"])], 28)
    case.model.opset_import[0].version = 29
    with pytest.raises(AotcError, match="opset 29 is not supported .aotc reads opsets 7 to 28"):
        compile_model(case.model)


@pytest.mark.parametrize("op,attrs,inputs", [
    ("CumProd", {}, ["x", "axis"]),  # new in 26
    ("BitShift", {"direction": "RIGHT"}, ["xi", "xi"]),  # signed types in 28
])
def test_new_ops_of_opsets_26_to_28_compute_as_onnx_defines_them(op, attrs, inputs):
    """onnxruntime does not run opset 28: onnx's reference evaluator is the reference (issue 16)."""
    from onnx.reference import ReferenceEvaluator

    nodes = [helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT32),
             helper.make_node(op, inputs, ["o"], name="the_op", **attrs),
             helper.make_node("Cast", ["o"], ["y"], to=TensorProto.FLOAT)]
    case = _case(op, nodes, 28, {"axis": np.array(0, np.int64)}, x_shape=(4,))
    case.feeds = {"x": np.array([3.0, -2.0, 5.0, 1.0], np.float32)}
    case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
    shared_build([case]).check(case.id)


def test_new_ops_without_a_kernel_are_refused_by_name():
    nodes = [helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], name="the_op")]  # new in 23
    case = _case("rotary", nodes, 28, {"cos": np.ones((4, 2), np.float32), "sin": np.zeros((4, 2), np.float32)},
                 x_shape=(1, 4, 4, 4))
    with pytest.raises(AotcError, match="node 'the_op' .RotaryEmbedding.: operator is not supported"):
        compile_model(case.model)


def test_quantize_linear_precision_other_than_float_is_refused():
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q", precision=TensorProto.FLOAT16),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    case = _case("q", nodes, 23, {"s": np.array(0.1, np.float32), "z": np.array(0, np.int8)}, x_shape=(4,))
    with pytest.raises(AotcError, match="precision 10"):
        compile_model(case.model)
