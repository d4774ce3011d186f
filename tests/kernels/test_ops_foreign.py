"""The ai.onnx.ml and ai.onnx.preview.training ops written as ai.onnx ops on import (issue 51,
aot/frontend/onnx/foreign.py, gradient.py): Binarizer and ArrayFeatureExtractor against onnxruntime,
Adagrad / Adam / Momentum against onnx's reference implementation (onnxruntime's CPU build has no
training ops), Gradient against the derivative worked out by hand; what the lowering does not cover
is refused in one line."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import Case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

ML, TRAINING = "ai.onnx.ml", "ai.onnx.preview.training"
rng = np.random.default_rng(7)


def _model(case_id: str, nodes: list, feeds: dict[str, np.ndarray], outputs: list[tuple[str, int]],
           imports: dict[str, int]) -> onnx.ModelProto:
    g = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                                         a.shape) for n, a in feeds.items()],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in imports.items()])
    m.ir_version = 8
    return m


def _ml_case(case_id: str, op: str, feeds: dict[str, np.ndarray], out_type: int, onnx_reference: bool = False,
             **attrs: object) -> Case:
    """One ai.onnx.ml node, against onnxruntime (`onnx_reference`: onnx's, for a type onnxruntime lacks)."""
    node = helper.make_node(op, list(feeds), ["y"], domain=ML, **attrs)
    model = _model(case_id, [node], feeds, [("y", out_type)], {ML: 1})
    return Case(case_id, model, feeds, expected=ReferenceEvaluator(model).run(None, feeds) if onnx_reference else None)


def _training_case(case_id: str, op: str, per: int, n: int, t: int, dtype=np.float32, **attrs: object) -> Case:
    """An optimizer node over n tensors: inputs R, T, then `per` runs of n tensors (X..., G..., state...)."""
    feeds = {"R": np.array(0.1, dtype), "T": np.array(t, np.int64)}
    runs = "XGVH" if per == 4 else "XGH" if op == "Adagrad" else "XGV"
    for run in runs:
        for i in range(n):
            shape = (3, 4) if i % 2 == 0 else (5,)
            data = rng.standard_normal(shape).astype(dtype)
            feeds[f"{run}{i}"] = np.abs(data) if run == "H" else data
    outs = [f"{run}{i}_new" for run in runs if run != "G" for i in range(n)]
    node = helper.make_node(op, list(feeds), outs, domain=TRAINING, **attrs)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model(case_id, [node], feeds, [(o, elem) for o in outs], {TRAINING: 1})
    expected = ReferenceEvaluator(model).run(None, feeds)
    return Case(case_id, model, feeds, expected=[np.asarray(e).astype(dtype) for e in expected])


def _gradient_case() -> Case:
    """d = (a + b) * a - b / a with respect to a and b: dd/da = 2a + b + b / a^2, dd/db = a - 1 / a."""
    a = (rng.uniform(0.5, 2.0, (2, 3))).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    nodes = [helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Mul", ["c", "a"], ["e"]),
             helper.make_node("Div", ["b", "a"], ["f"]), helper.make_node("Sub", ["e", "f"], ["d"]),
             helper.make_node("Gradient", ["a", "b"], ["dd_da", "dd_db"], domain=TRAINING, xs=["a", "b"], y="d")]
    feeds = {"a": a, "b": b}
    model = _model("gradient_chain", nodes, feeds, [(n, TensorProto.FLOAT) for n in ("d", "dd_da", "dd_db")],
                   {"": 12, TRAINING: 1})
    expected = [(a + b) * a - b / a, 2 * a + b + b / a**2, a - 1 / a]
    return Case("gradient_chain", model, feeds, expected=[e.astype(np.float32) for e in expected])


def _tree_ensemble_case(case_id: str, dtype=np.float32, aggregate: int = 1) -> Case:
    """Two trees over 3 features: LEQ / LT / GTE / GT / EQ / NEQ / MEMBER nodes, NaNs taking the true branch
    where nodes_missing_value_tracks_true says, 2 targets; against onnx's reference."""
    x = rng.standard_normal((16, 3)).round(1).astype(dtype)
    x[::5, 0] = np.nan
    x[1::7, 2] = 0.5
    x[2::6, 1] = 2.0
    t = lambda v, d: helper.make_tensor("t", d, [len(v)], v)  # noqa: E731
    node = helper.make_node(
        "TreeEnsemble", ["x"], ["y"], domain=ML, n_targets=2, aggregate_function=aggregate, tree_roots=[0, 4],
        # tree 0: nodes 0-3; tree 1: nodes 4-6
        nodes_featureids=[0, 1, 2, 1, 2, 0, 1], nodes_modes=t([0, 1, 4, 6, 5, 2, 3], TensorProto.UINT8),
        nodes_splits=t([0.1, -0.3, 0.5, 0.0, 0.5, -0.2, 0.7], TensorProto.DOUBLE),
        nodes_truenodeids=[1, 0, 2, 3, 5, 4, 6], nodes_trueleafs=[0, 1, 1, 1, 0, 1, 1],
        nodes_falsenodeids=[2, 3, 1, 4, 6, 5, 7], nodes_falseleafs=[0, 0, 1, 1, 0, 1, 1],
        nodes_missing_value_tracks_true=[1, 0, 0, 0, 0, 1, 0],
        membership_values=t([2.0, -1.5, np.nan], TensorProto.DOUBLE),
        leaf_targetids=[0, 1, 0, 1, 1, 0, 1, 0], leaf_weights=t([1.5, -2.0, 0.25, 4.0, 3.0, -1.0, 0.5, 8.0],
                                                                 TensorProto.DOUBLE))
    feeds = {"x": x}
    model = _model(case_id, [node], feeds, [("y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))], {ML: 5})
    return Case(case_id, model, feeds, expected=ReferenceEvaluator(model).run(None, feeds))


X = rng.standard_normal((3, 4, 5)).astype(np.float32)
CASES = [
    _ml_case("binarizer_float", "Binarizer", {"x": X}, TensorProto.FLOAT, threshold=0.25),
    _ml_case("binarizer_int64", "Binarizer", {"x": np.arange(-6, 6, dtype=np.int64).reshape(3, 4)},
             TensorProto.INT64, onnx_reference=True, threshold=1.0),
    _ml_case("array_feature_extractor_2d", "ArrayFeatureExtractor",
             {"x": X[0], "i": np.array([4, 0, 2, 0], np.int64)}, TensorProto.FLOAT),
    _ml_case("array_feature_extractor_1d_int32", "ArrayFeatureExtractor",
             {"x": np.arange(7, dtype=np.int32), "i": np.array([[6, 1]], np.int64)}, TensorProto.INT32),
    _ml_case("array_feature_extractor_3d_2d_indices", "ArrayFeatureExtractor",
             {"x": X, "i": np.array([[1, 3], [0, 4]], np.int64)}, TensorProto.FLOAT),
    _training_case("adagrad_one", "Adagrad", 3, 1, t=3, decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01),
    _training_case("adagrad_two_double", "Adagrad", 3, 2, t=0, dtype=np.float64),
    _training_case("adam_first_step", "Adam", 4, 1, t=0, alpha=0.9, beta=0.99, norm_coefficient=0.01,
                   norm_coefficient_post=0.02),
    _training_case("adam_two_later_step", "Adam", 4, 2, t=5),
    _training_case("momentum_standard_first_step", "Momentum", 3, 1, t=0, alpha=0.9, beta=0.5,
                   mode="standard", norm_coefficient=0.01),
    _training_case("momentum_nesterov_two", "Momentum", 3, 2, t=2, alpha=0.8, beta=0.3, mode="nesterov",
                   norm_coefficient=0.0),
    _gradient_case(),
    _tree_ensemble_case("tree_ensemble_sum"),
    _tree_ensemble_case("tree_ensemble_average_double", np.float64, aggregate=0),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("foreign"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_foreign_ops_match_their_reference(built, case_id):
    built.check(case_id)


def test_gradient_through_an_op_it_does_not_differentiate_is_refused():
    feeds = {"a": np.ones((2,), np.float32)}
    nodes = [helper.make_node("Exp", ["a"], ["d"], name="exp"),
             helper.make_node("Gradient", ["a"], ["g"], domain=TRAINING, xs=["a"], y="d")]
    model = _model("gradient_exp", nodes, feeds, [("g", TensorProto.FLOAT)], {"": 12, TRAINING: 1})
    with pytest.raises(AotcError, match=r"node 'exp' \(Exp\): Gradient through Exp is not supported"):
        compile_model(model, Options())


def test_an_ml_op_without_a_lowering_is_refused_by_name():
    feeds = {"x": np.ones((2, 3), np.float32)}
    node = helper.make_node("FeatureVectorizer", ["x"], ["y"], domain=ML, inputdimensions=[3])  # (Normalizer is
    model = _model("vectorizer", [node], feeds, [("y", TensorProto.FLOAT)], {ML: 1})  # lowered: sklearn_ops.py)
    with pytest.raises(AotcError, match=r"\(FeatureVectorizer\): operator domain 'ai.onnx.ml' is not supported"):
        compile_model(model, Options())


def test_a_tree_ensemble_aggregating_by_max_is_refused():
    case = _tree_ensemble_case("tree_sum")  # (the reference runs on SUM; MAX set after)
    for a in case.model.graph.node[0].attribute:
        if a.name == "aggregate_function":
            a.i = 3
    with pytest.raises(AotcError, match=r"\(TreeEnsemble\): TreeEnsemble aggregate_function MIN or MAX"):
        compile_model(case.model, Options())
