"""scikit-learn models as skl2onnx exports them (issue 69), through aotc: the ai.onnx.ml ops lowered on import
(aot/frontend/onnx/sklearn_ops.py) must give onnxruntime's outputs, labels exactly and scores to 1e-5.

The models are tests/models/sklearn/*.onnx (make_sklearn_models.py writes them; neither scikit-learn nor
skl2onnx is needed here). Each is checked two ways: the lowered ONNX model run by onnxruntime (no C: every
model in the fast tier), and the compiled bundle on the host (two models in the fast tier, the rest in the full
one) and on a Cortex-M4 under qemu (full tier). ZipMap's maps are compared as the [N, classes] tensor the
bundle returns (metadata.json says which classes its columns are). Also onnxruntime's own logreg_iris.onnx.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import require_tool, tiered
from modelcheck import build_bundle, run_bundle
from onnx import TensorProto, helper

from aot.errors import AotcError
from aot.frontend.onnx.foreign import lower_foreign

HERE = Path(__file__).resolve().parent.parent / "models" / "sklearn"
DATA = {"logreg_binary": "iris_binary", "svc_rbf_proba": "iris_binary", "svc_poly_binary": "iris_binary",
        "gb_binary": "iris_binary", "svr_rbf": "regression", "linear_regression": "regression",
        "rf_regressor": "regression", "gb_regressor": "regression", "preprocess_logreg": "preprocess"}
MODELS = sorted(p.stem for p in HERE.glob("*.onnx"))
FAST = ("rf_classifier", "svc_rbf_proba")  # trees and ZipMap; kernels, Platt and coupling
ROWS = 8


def _rows(name: str) -> np.ndarray:
    """ROWS rows spread over the data set (every class of iris; NaNs of the imputer's set among them)."""
    with np.load(HERE / "inputs.npz") as d:
        x = d[DATA.get(name, "iris")]
    return np.ascontiguousarray(x[np.arange(ROWS) * (len(x) // ROWS)])


def _ort(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    """onnxruntime's outputs, a ZipMap's list of maps as the [N, classes] tensor, columns in its order."""
    import onnxruntime as ort

    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    out = []
    for r in s.run(None, {s.get_inputs()[0].name: x}):
        if isinstance(r, list):
            r = np.array([list(row.values()) for row in r], np.float32)
        out.append(np.asarray(r))
    return out


# the poly kernel's terms cancel over the support vectors: float32 rounding in the kernel shows as 5e-5 of the
# score (onnxruntime's and aotc's kernels sum in different orders)
TOLERANCE = {"svc_poly_binary": 1e-4}


def _same(name: str, want: list[np.ndarray], got: list[np.ndarray]) -> None:
    assert len(want) == len(got), name
    for w, g in zip(want, got, strict=True):
        g = np.asarray(g).reshape(w.shape)
        if w.dtype.kind in "iu":
            np.testing.assert_array_equal(g, w, err_msg=name)
        else:
            tol = TOLERANCE.get(name.split()[0], 1e-5)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("name", MODELS)
def test_lowered_model_matches_onnxruntime(name):
    """The ai.onnx model the lowering writes, run by onnxruntime, against the original: the op semantics alone."""
    model = onnx.load(str(HERE / f"{name}.onnx"))
    x = _rows(name)
    lowered = copy.deepcopy(model)
    lower_foreign(lowered)
    assert all(n.domain in ("", "ai.onnx") for n in lowered.graph.node), name
    _same(name, _ort(model, x), _ort(lowered, x))


def _bundle(tmp_path: Path, name: str, target: str = "host") -> None:
    model = onnx.load(str(HERE / f"{name}.onnx"))
    x = _rows(name)
    out = tmp_path / f"{name}-{target}"
    meta = build_bundle(HERE / f"{name}.onnx", out, "--input-shape", f"X={ROWS},{x.shape[1]}", target=target)
    got = run_bundle(out, {"X": x})
    want = _ort(model, x)
    _same(f"{name} on {target}", want, [got[o["name"]] for o in meta["outputs"]])
    for o, m in zip(meta["outputs"], model.graph.output, strict=True):
        if m.type.HasField("sequence_type"):  # ZipMap: the columns' classes said on the output
            zipmap = next(n for n in model.graph.node if n.op_type == "ZipMap")
            classes = list(helper.get_attribute_value(zipmap.attribute[0]))
            assert o["zipmap"]["classes"] == classes, name


@pytest.mark.parametrize("name", tiered(MODELS, FAST))
def test_sklearn_model_bundle_matches_onnxruntime(tmp_path, name):
    _bundle(tmp_path, name)


@pytest.mark.full
@pytest.mark.parametrize("name", ["gb_classifier", "svc_rbf_proba", "preprocess_logreg"])
def test_sklearn_model_on_cortex_m4(tmp_path, name):
    """On the M4 too (mps2-an386 under qemu): float kernels of another compiler and libm."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    _bundle(tmp_path, name, target="mps2-an386")


@pytest.mark.full
def test_onnxruntime_logreg_iris(tmp_path):
    """onnxruntime's own example (skl2onnx's LogisticRegression, LinearClassifier + Normalizer + ZipMap); its
    input is declared [3, 2] for 12 coefficients of 3 classes, and onnxruntime reads the first 3 x 2 of them."""
    try:
        from onnxruntime.datasets import get_example
        path = Path(get_example("logreg_iris.onnx"))
    except (ImportError, FileNotFoundError, ValueError):
        pytest.skip("onnxruntime ships no logreg_iris.onnx here")
    model = onnx.load(str(path))
    x = np.array([[5.1, 3.5], [6.2, 2.9], [7.7, 3.0]], np.float32)
    out = tmp_path / "logreg_iris"
    meta = build_bundle(path, out)
    got = run_bundle(out, {"float_input": x})
    _same("logreg_iris", _ort(model, x), [got[o["name"]] for o in meta["outputs"]])
    assert meta["outputs"][1]["zipmap"]["classes"] == [0, 1, 2]


# --- single ops against onnxruntime, and what is refused ------------------------------------------------------

def _ml_model(node: onnx.NodeProto, x: onnx.ValueInfoProto, outputs: list[onnx.ValueInfoProto]) -> onnx.ModelProto:
    g = helper.make_graph([node], "t", [x], outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])


def _check_lowered(model: onnx.ModelProto, x: np.ndarray) -> None:
    lowered = copy.deepcopy(model)
    lower_foreign(lowered)
    _same(model.graph.node[0].op_type, _ort(model, x), _ort(lowered, x))


X4 = helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 4])
Y_LABEL = helper.make_tensor_value_info("label", TensorProto.INT64, [None])
Y_SCORES = helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, None])
RNG = np.random.default_rng(5)
XS = RNG.normal(size=(16, 4)).astype(np.float32)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
@pytest.mark.parametrize("rows", [3, 1])
def test_linear_classifier_post_transforms(post, rows):
    """Every post_transform, for 3 classes and for the one-row binary form (scores [-s, s] transformed)."""
    if rows == 1 and post == "PROBIT":
        pytest.skip("refused: onnxruntime's scores for it are not defined (NaN, -inf)")
    classes = [3, 5, 7] if rows == 3 else [0, 1]
    coef = (RNG.normal(size=rows * 4) * 0.3).round(3).tolist()
    node = helper.make_node("LinearClassifier", ["X"], ["label", "scores"], domain="ai.onnx.ml",
                            coefficients=coef, intercepts=[0.1] * rows, classlabels_ints=classes,
                            post_transform=post)
    x = XS.copy()
    if post == "PROBIT":  # probit of a probability-like score
        x = np.abs(x) * 0.05
    _check_lowered(_ml_model(node, X4, [Y_LABEL, Y_SCORES]), x)


@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID"])
def test_svm_kernels(kernel):
    sv = RNG.normal(size=(5, 4)).round(2)
    node = helper.make_node("SVMClassifier", ["X"], ["label", "scores"], domain="ai.onnx.ml",
                            classlabels_ints=[0, 1, 2], vectors_per_class=[2, 2, 1],
                            support_vectors=sv.ravel().tolist(), coefficients=RNG.normal(size=10).round(2).tolist(),
                            rho=[0.1, -0.2, 0.3], kernel_type=kernel, kernel_params=[0.3, 0.5, 3.0])
    _check_lowered(_ml_model(node, X4, [Y_LABEL, Y_SCORES]), XS)
    reg = helper.make_node("SVMRegressor", ["X"], ["y"], domain="ai.onnx.ml", n_supports=5,
                           support_vectors=sv.ravel().tolist(), coefficients=[0.5, -1.0, 0.25, 2.0, -0.5],
                           rho=[0.7], kernel_type=kernel, kernel_params=[0.3, 0.5, 3.0])
    _check_lowered(_ml_model(reg, X4, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 1])]), XS)


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer(norm):
    node = helper.make_node("Normalizer", ["X"], ["y"], domain="ai.onnx.ml", norm=norm)
    _check_lowered(_ml_model(node, X4, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])]), XS)


def test_scaler_imputer_label_encoder_one_hot():
    y4 = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])
    x = XS.copy()
    x[::3, 1] = np.nan
    scaler = helper.make_node("Scaler", ["X"], ["y"], domain="ai.onnx.ml", offset=[0.5, 1, 2, 3],
                              scale=[2.0, 1, 0.5, 3])
    _check_lowered(_ml_model(scaler, X4, [y4]), XS)
    imputer = helper.make_node("Imputer", ["X"], ["y"], domain="ai.onnx.ml", imputed_value_floats=[1.0, 2.0, 3.0, 4.0],
                               replaced_value_float=float("nan"))
    _check_lowered(_ml_model(imputer, X4, [y4]), x)
    xi = helper.make_tensor_value_info("X", TensorProto.INT64, [None, 3])
    ints = RNG.integers(0, 6, size=(10, 3)).astype(np.int64)
    enc = helper.make_node("LabelEncoder", ["X"], ["y"], domain="ai.onnx.ml", keys_int64s=[1, 2, 4],
                           values_floats=[0.5, -1.0, 9.0], default_float=7.0)
    _check_lowered(_ml_model(enc, xi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 3])]), ints)
    hot = helper.make_node("OneHotEncoder", ["X"], ["y"], domain="ai.onnx.ml", cats_int64s=[0, 2, 5], zeros=1)
    _check_lowered(_ml_model(hot, xi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 3, 3])]), ints)


def _refused(model: onnx.ModelProto, words: str) -> None:
    with pytest.raises(AotcError, match=words):
        lower_foreign(model)


def test_refused_by_name():
    """What the lowerings do not cover is refused in one line naming the node and op."""
    svc = onnx.load(str(HERE / "svc_rbf.onnx"))  # 3 classes: give it Platt's parameters
    node = next(n for n in svc.graph.node if n.op_type == "SVMClassifier")
    node.attribute.extend([helper.make_attribute("prob_a", [1.0, 1.0, 1.0]),
                           helper.make_attribute("prob_b", [0.0, 0.0, 0.0])])
    _refused(svc, r"\(SVMClassifier\): probability of 3 classes")
    hot = helper.make_node("OneHotEncoder", ["X"], ["y"], domain="ai.onnx.ml", cats_strings=["a"], name="hot")
    _refused(_ml_model(hot, X4, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
             r"node 'hot' \(OneHotEncoder\): OneHotEncoder of string categories")
    rf = onnx.load(str(HERE / "rf_regressor.onnx"))
    tree = next(n for n in rf.graph.node if n.op_type == "TreeEnsembleRegressor")
    tree.attribute.append(helper.make_attribute("aggregate_function", "MAX"))
    _refused(rf, r"aggregate_function 'MAX' is not supported")
    clf = helper.make_node("LinearClassifier", ["X"], ["label", "scores"], domain="ai.onnx.ml", coefficients=[1.0] * 8,
                           intercepts=[0.0, 0.0], classlabels_ints=[0, 1], post_transform="NOPE", name="lc")
    _refused(_ml_model(clf, X4, [Y_LABEL, Y_SCORES]), r"node 'lc' \(LinearClassifier\): post_transform 'NOPE'")
