"""Opsets 26 to 28 (issue 15, docs/opsets.md): accepted, with each changed op compiled in its new form or refused
by name; beyond 28 refused. Opsets 1 to 6 (issue 51): upgraded to 7 on import, or refused naming the node."""

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


def _legacy(case_id: str, nodes, opset: int, expected, inits=None, x_shape=(1, 4, 4, 4)):
    """A model of opset < 7 (IR 3, initializers listed as inputs as then), checked against numpy: onnxruntime
    has no kernels for most ops at these opsets."""
    case = _case(case_id, nodes, opset, inits, x_shape)
    case.model.ir_version = 3
    g = case.model.graph
    g.input.extend(helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)) for i in g.initializer)
    case.expected = [expected(case.feeds["x"])]
    return case


_rng = np.random.default_rng(6)
_bias, _scale = _rng.standard_normal(4).astype(np.float32), _rng.standard_normal(4).astype(np.float32) + 2
# Add-6 broadcasting B [C] along axis 1 of A [N, C, H, W]: numpy's rule would align B with W, and onnx's converter
# does (and fails): aotc puts B's trailing 1s in first
CASES.append(_legacy("opset6_bias_add_at_axis1", [
    helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1, name="bias")], 6,
    lambda x: x + _bias[:, None, None], {"b": _bias}))
# opset 1: consumed_inputs, Reshape's shape as an attribute, Mul-1 with broadcast at the trailing axis
CASES.append(_legacy("opset1_relu_reshape_mul", [
    helper.make_node("Relu", ["x"], ["r"], consumed_inputs=[0]),
    helper.make_node("Reshape", ["r"], ["f"], shape=[4, 16]),
    helper.make_node("Mul", ["f", "s"], ["y"], broadcast=1)], 1,
    lambda x: np.maximum(x, 0).reshape(4, 16) * np.tile(_scale, 4), {"s": np.tile(_scale, 4)}))
# opset 6 BatchNormalization (is_test, spatial) then Dropout-6 (is_test), as PyTorch 0.3 exported them
CASES.append(_legacy("opset6_batchnorm_dropout", [
    helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"], is_test=1, epsilon=1e-5),
    helper.make_node("Dropout", ["n"], ["y"], is_test=1, ratio=0.5)], 6,
    lambda x: (x - _bias[:, None, None]) / np.sqrt(_scale[:, None, None] + 1e-5) * 2 + 1,
    {"s": np.full(4, 2, np.float32), "b": np.ones(4, np.float32), "m": _bias, "v": _scale}))

# PRelu-6's slope [C] is per channel (axis 1); from opset 7 it broadcasts the numpy way, and the converter keeps it
CASES.append(_legacy("opset6_prelu_per_channel", [helper.make_node("PRelu", ["x", "slope"], ["y"])], 6,
                     lambda x: np.where(x > 0, x, x * _bias[:, None, None]), {"slope": _bias}))
# Softsign as PyTorch 0.4 exported it: a Constant (a node of no input), an Add-6 of it broadcast
CASES.append(_legacy("opset6_softsign_with_constant", [
    helper.make_node("Abs", ["x"], ["a"]),
    helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array([1.0], np.float32))),
    helper.make_node("Add", ["a", "one"], ["d"], broadcast=1),
    helper.make_node("Div", ["x", "d"], ["y"])], 6, lambda x: x / (1 + np.abs(x))))


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_opset_29_is_refused():
    case = _case("relu", [helper.make_node("Relu", ["x"], ["y"])], 28)
    case.model.opset_import[0].version = 29
    with pytest.raises(AotcError, match="opset 29 is not supported .aotc reads opsets 1 to 28"):
        compile_model(case.model)


def test_an_opset_6_model_the_converter_cannot_upgrade_is_refused_naming_the_node():
    """Training-mode BatchNormalization-6 has no opset-7 form: one line, naming the node and the converter's reason."""
    case = _legacy("bn_training", [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], is_test=0,
                                                    name="bn")], 6, lambda x: x,
                   {k: np.ones(4, np.float32) for k in "sbmv"})
    with pytest.raises(AotcError, match=r"^node 'bn' \(BatchNormalization\): opset 6 does not upgrade to opset 7 "
                                        r"with onnx's version converter: Attribute is_test must not have value 0$"):
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


def test_a_model_of_training_ops_alone_is_refused_naming_the_op():
    """A model importing only ai.onnx.preview.training was refused as importing no default-domain opset, then
    naming its first node as a training op; its Adagrad/Adam/Momentum/Gradient now compile (issue 51,
    tests/kernels/test_ops_foreign.py) and an op of the domain aotc does not read is refused naming it."""
    node = helper.make_node("Lamb", ["r", "t", "x", "g", "h"], ["x_new", "h_new"],
                            domain="ai.onnx.preview.training")  # unnamed, as onnx's node tests: named Lamb_0
    vi = [helper.make_tensor_value_info(k, TensorProto.FLOAT, [2]) for k in ("x", "g", "h")]
    scalars = [helper.make_tensor_value_info("r", TensorProto.FLOAT, []),
               helper.make_tensor_value_info("t", TensorProto.INT64, [])]
    graph = helper.make_graph([node], "train", scalars + vi,
                              [helper.make_tensor_value_info(k, TensorProto.FLOAT, [2]) for k in ("x_new", "h_new")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.preview.training", 1)])
    with pytest.raises(AotcError, match=r"^node 'Lamb_0' \(Lamb\): operator domain 'ai.onnx.preview.training' is "
                                        r"not supported \(of it aotc reads Adagrad, Adam, Gradient, Momentum\)$"):
        compile_model(model)


def test_new_ops_without_a_kernel_are_refused_by_name():
    nodes = [helper.make_node("Bernoulli", ["x"], ["y"], name="the_op")]  # random draws: no kernel, no body
    case = _case("bernoulli", nodes, 28, {})
    with pytest.raises(AotcError, match="node 'the_op' .Bernoulli.: operator is not supported"):
        compile_model(case.model)


def test_a_function_body_at_a_later_opset_is_expanded_not_a_crash():
    """RotaryEmbedding (23) in an opset-28 model: its body (written at 23) is inlined at the model's opset. It
    was onnx's inliner's RuntimeError ('incompatible opset versions'), an internal error; this node's caches
    are the wrong rank for it, so it is refused, in one line naming a node of the body."""
    nodes = [helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], name="the_op")]
    case = _case("rotary", nodes, 28, {"cos": np.ones((4, 2), np.float32), "sin": np.zeros((4, 2), np.float32)},
                 x_shape=(1, 4, 4, 4))
    with pytest.raises(AotcError, match="node '"):
        compile_model(case.model)


def test_quantize_linear_precision_other_than_float_is_refused():
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q", precision=TensorProto.FLOAT16),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    case = _case("q", nodes, 23, {"s": np.array(0.1, np.float32), "z": np.array(0, np.int8)}, x_shape=(4,))
    with pytest.raises(AotcError, match="precision 10"):
        compile_model(case.model)


def test_every_op_onnx_defines_as_a_function_has_a_kernel_a_rule_or_its_body():
    """Issue 51: an op with a function body that aotc has no kernel or canonical rule for is expanded into
    that body (aot/frontend/onnx/functions.py's list); Bernoulli (random) and SequenceMap (a subgraph over
    sequences) are left alone. An op onnx adds with a body fails this until it is placed."""
    from aot.frontend.onnx.canonical import RULES
    from aot.frontend.onnx.functions import FUNCTION_OPS
    from aot.kernels import HOST_OPS

    with_body = {s.name for s in onnx.defs.get_all_schemas_with_history()
                 if s.domain == "" and (s.has_function or s.has_context_dependent_function)}
    assert with_body - set(HOST_OPS) - set(RULES) - {"Bernoulli", "SequenceMap"} == FUNCTION_OPS
