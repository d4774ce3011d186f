"""Writes the scikit-learn test models of tests/e2e/test_sklearn_models.py (issue 69): small estimators
trained on iris or a small synthetic regression set with fixed seeds, exported by skl2onnx as a
scikit-learn user exports them (float32 input [None, F], ZipMap on some, zipmap=False on others).

    pip install scikit-learn skl2onnx   # only to regenerate; the tests read the committed .onnx files
    python3 tests/models/sklearn/make_sklearn_models.py

Each file stays a few KB: 5 trees of depth 3-4, a handful of support vectors' worth of data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from skl2onnx import to_onnx
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_iris, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Normalizer, OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR, LinearSVC

HERE = Path(__file__).parent
OPSET = {"": 17, "ai.onnx.ml": 3}  # what skl2onnx writes for a current onnxruntime


def main() -> None:
    x, y = load_iris(return_X_y=True)
    x = x.astype(np.float32)
    xb, yb = x[50:], (y[50:] == 2).astype(np.int64)  # versicolor vs virginica: not separable
    xr, yr = make_regression(n_samples=80, n_features=5, noise=4.0, random_state=0)
    xr = xr.astype(np.float32)
    models = {
        "logreg_binary": (LogisticRegression(max_iter=500).fit(xb, yb), xb, {}),
        "logreg_multi": (LogisticRegression(max_iter=500).fit(x, y), x, {"zipmap": False}),
        "linear_svc": (LinearSVC(random_state=0, max_iter=5000).fit(x, y), x, {}),  # (no ZipMap option)
        "svc_rbf": (SVC(kernel="rbf", gamma=0.5).fit(x, y), x, {"zipmap": False}),
        "svc_rbf_proba": (SVC(kernel="rbf", probability=True, random_state=0).fit(xb, yb), xb, {}),
        "svc_poly_binary": (SVC(kernel="poly", degree=2).fit(xb, yb), xb, {"zipmap": False}),
        "svr_rbf": (SVR(kernel="rbf", C=50.0).fit(xr, yr), xr, {}),
        "linear_regression": (LinearRegression().fit(xr, yr), xr, {}),
        "rf_classifier": (RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(x, y), x, {}),
        "rf_regressor": (RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(xr, yr), xr, {}),
        "gb_classifier": (GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0).fit(x, y), x,
                          {"zipmap": False}),
        "gb_binary": (GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0).fit(xb, yb), xb, {}),
        "gb_regressor": (GradientBoostingRegressor(n_estimators=5, max_depth=3, random_state=0).fit(xr, yr), xr, {}),
        "scaler_logreg": (Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))])
                          .fit(x, y), x, {}),
        "mlp_classifier": (MLPClassifier(hidden_layer_sizes=(8,), max_iter=2000, random_state=0).fit(x, y), x,
                           {"zipmap": False}),
    }
    # imputed and normalised numbers beside one-hot codes of a small-integer column, then a classifier
    xp = np.hstack([x[:, :3], np.round(x[:, 3:4] * 2)]).astype(np.float32)
    xp[::7, 1] = np.nan
    prep = ColumnTransformer([("num", Pipeline([("imp", SimpleImputer(strategy="mean")), ("norm", Normalizer())]),
                               [0, 1, 2]),
                              ("cat", OneHotEncoder(handle_unknown="ignore"), [3])])
    models["preprocess_logreg"] = (Pipeline([("prep", prep), ("clf", LogisticRegression(max_iter=500))]).fit(xp, y),
                                   xp, {"zipmap": False})
    for name, (model, data, options) in models.items():
        onx = to_onnx(model, data[:1], target_opset=OPSET,
                      options={id(model): options} if options else None)
        onx.doc_string = f"{type(model).__name__} for aotc's tests (make_sklearn_models.py)"
        (HERE / f"{name}.onnx").write_bytes(onx.SerializeToString())
    np.savez(HERE / "inputs.npz", iris=x, iris_binary=xb, regression=xr, preprocess=xp)


if __name__ == "__main__":
    main()
