"""The ai.onnx.ml ops skl2onnx writes for scikit-learn's common estimators, written as ai.onnx ops on import
(issue 69), as foreign.py does for Binarizer and TreeEnsemble: the models' parameters are attributes, so each
op is a formula over them (MatMul, Add, a comparison, Where, Gather, Softmax or Sigmoid, ArgMax) that aotc
compiles as any other graph.

Semantics are onnxruntime's (its CPU kernels, which skl2onnx's exports are checked against), where onnx's
reference implementation agrees; the tests compare with onnxruntime on committed skl2onnx models.

- LinearClassifier / LinearRegressor: X W^T + b in float; a classifier's label is its class label at the
  first maximal raw score (a one-column binary model: the second label where the score is > 0), its scores
  after post_transform (NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT as onnxruntime approximates it).
- SVMClassifier / SVMRegressor: the kernel (LINEAR, POLY, RBF, SIGMOID) of every row with every support
  vector, then the one-vs-one decision values as one matrix product, votes, and Platt's probability for two
  classes. Probability with more than two classes (libsvm's pairwise coupling, an iterative solve) is refused.
- TreeEnsembleClassifier / TreeEnsembleRegressor (ai.onnx.ml 1 and 3): the trees' paths as tree_ensemble.py
  builds them for TreeEnsemble, then base values, the binary case and post_transform as above.
- Normalizer, Scaler, Imputer, OneHotEncoder (integer categories), LabelEncoder (numbers), ZipMap.

A bundle returns tensors, so two outputs change type, and metadata.json says so on the output
(`output_notes`): ZipMap's sequence of maps is returned as the [N, classes] float tensor it wraps (note
{"zipmap": {"classes": [...]}}), and a label of string classes (classlabels_strings) as the int64 class index
(note {"class_index": {"classes": [...]}}).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from aot.errors import AotcError, OnnxNodeName

POST_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")
_NUMERIC = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32)
_OLD_MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5}


def _refuse(node: onnx.NodeProto, why: str) -> AotcError:
    return AotcError(why, node=OnnxNodeName(node))


def _text(v: object) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _list(attrs: dict[str, Any], name: str) -> list:
    v = attrs.get(name)
    if v is None:
        return []
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v).ravel().tolist()
    return list(v)


def _floats(attrs: dict[str, Any], name: str, tensor: str | None = None) -> np.ndarray:
    """A float list attribute, or its `_as_tensor` form (ai.onnx.ml 3), in double."""
    values = _list(attrs, tensor) if tensor and tensor in attrs else _list(attrs, name)
    return np.asarray(values, np.float64)


def _post(attrs: dict[str, Any], node: onnx.NodeProto) -> str:
    p = _text(attrs.get("post_transform", "NONE"))
    if p not in POST_TRANSFORMS:
        raise _refuse(node, f"post_transform '{p}' is not one of {', '.join(POST_TRANSFORMS)}")
    return p


class MlContext:
    """What a lowering reads beyond its node: the inferred element types and (partial) shapes, and where it
    records the outputs whose type changes (output name -> note for metadata.json)."""

    def __init__(self, elems: dict[str, int], dims: dict[str, list[int | None]], graph_outputs: set[str]):
        self.elems, self.dims, self.graph_outputs = elems, dims, graph_outputs
        self.notes: dict[str, dict] = {}
        self.retyped: dict[str, tuple[int, list[int | None] | None]] = {}  # graph output -> new elem, shape
        self.constants: dict[str, onnx.TensorProto] = {}  # small initializers (shapes, indices) inference reads
        self.opset = 18  # the model's ai.onnx opset (ReduceMax takes its axes as an input from 18 on)

    def features(self, name: str, node: onnx.NodeProto) -> int | None:
        d = self.dims.get(name)
        if d is None:
            return None
        if len(d) not in (1, 2):
            raise _refuse(node, f"input '{name}' must be a vector or a matrix [N, F] (it has rank {len(d)})")
        return d[-1]


def _out(node: onnx.NodeProto, k: int) -> str | None:
    return node.output[k] if len(node.output) > k and node.output[k] else None


def _as_float_rows(b: Any, x: str, elem: int | None, features: int, node: onnx.NodeProto) -> str:
    """X as float32 [N, F] (a vector is one row, as onnxruntime reads it)."""
    if elem not in _NUMERIC:
        raise _refuse(node, "X must be float, double, int64 or int32")
    xf = x if elem == TensorProto.FLOAT else b.op("Cast", x, to=TensorProto.FLOAT)
    return b.op("Reshape", xf, b.const(np.array([-1, features], np.int64), np.int64))


def _reduce_max(b: Any, x: str, ctx: MlContext | None, keepdims: int = 1) -> str:
    """ReduceMax over the last axis, in the form of the model's opset (axes an attribute before 18)."""
    if ctx is not None and ctx.opset < 18:
        return b.op("ReduceMax", x, axes=[-1], keepdims=keepdims)
    return b.op("ReduceMax", x, b.const(np.array([-1], np.int64), np.int64), keepdims=keepdims)


def _transform(b: Any, scores: str, post: str, out: str | None = None, ctx: MlContext | None = None) -> str:
    """post_transform of scores [N, E] (float), as onnxruntime writes it."""
    if post == "NONE":
        return b.op("Identity", scores, out=out) if out else scores
    if post == "LOGISTIC":
        return b.op("Sigmoid", scores, out=out)
    if post == "SOFTMAX":
        return b.op("Softmax", scores, axis=-1, out=out)
    if post == "SOFTMAX_ZERO":  # a score of (nearly) 0 stays out of the exponentials; all of them 0: 0.5 each
        top = _reduce_max(b, scores, ctx)
        small = b.op("LessOrEqual", b.op("Abs", scores), b.const(1e-7))
        e = b.op("Where", small, b.op("Mul", scores, b.op("Exp", b.op("Neg", top))),
                 b.op("Exp", b.op("Sub", scores, top)))
        total = b.op("ReduceSum", e, b.const(np.array([-1], np.int64), np.int64), keepdims=1)
        return b.op("Where", b.op("Equal", total, b.const(0.0)), b.const(0.5), b.op("Div", e, total), out=out)
    # PROBIT: sqrt(2) * erfinv(2 p - 1), with the approximation of erfinv (a = 0.147) onnxruntime uses
    x = b.op("Sub", b.op("Mul", scores, b.const(2.0)), b.const(1.0))
    sign = b.op("Where", b.op("Less", x, b.const(0.0)), b.const(-1.0), b.const(1.0))
    ln = b.op("Log", b.op("Mul", b.op("Sub", b.const(1.0), x), b.op("Add", b.const(1.0), x)))
    v = b.op("Add", b.const(2.0 / (math.pi * 0.147)), b.op("Mul", b.const(0.5), ln))
    v3 = b.op("Sub", b.op("Sqrt", b.op("Sub", b.op("Mul", v, v), b.op("Div", ln, b.const(0.147)))), v)
    return b.op("Mul", b.op("Mul", sign, b.op("Sqrt", v3)), b.const(1.41421356), out=out)


def _labels(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> tuple[np.ndarray, bool]:
    """The class labels as int64 and whether they stand for strings (classlabels_strings: the label output
    becomes the class index, noted in metadata.json)."""
    ints = _list(attrs, "classlabels_ints") or _list(attrs, "classlabels_int64s")
    strings = [_text(s) for s in _list(attrs, "classlabels_strings")]
    if ints and strings:
        raise _refuse(node, "both integer and string class labels are given")
    if strings:
        label = _out(node, 0)
        if label is not None:
            if label not in ctx.graph_outputs:
                raise _refuse(node, "a label of string classes is compiled only as a model output (the bundle "
                                    "returns its class index)")
            ctx.notes[label] = {"class_index": {"classes": strings}}
            ctx.retyped[label] = (TensorProto.INT64, None)
        return np.arange(len(strings), dtype=np.int64), True
    return np.asarray(ints, np.int64), False


def _write_label(b: Any, node: onnx.NodeProto, labels: np.ndarray, index: str) -> None:
    """The label output: labels[index] (index int64 [N])."""
    out = _out(node, 0)
    if out is not None:
        b.op("Gather", b.array(labels), index, axis=0, out=out)


def _binary_scores(b: Any, s: str, post: str, out: str | None, all_positive: bool,
                   ctx: MlContext | None = None) -> None:
    """Two columns from one score s [N, 1] as onnxruntime's write_scores adds the second class: [1 - s, s]
    for weights all positive, else the transform of [-s, s] (PROBIT keeps the one column)."""
    if out is None:
        return
    if post == "PROBIT":
        _transform(b, s, post, out, ctx=ctx)
    elif all_positive:
        b.op("Concat", b.op("Sub", b.const(1.0), s), s, axis=1, out=out)
    else:
        _transform(b, b.op("Concat", b.op("Neg", s), s, axis=1), post, out, ctx=ctx)


def linear_classifier(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    post = _post(attrs, node)
    coef = _floats(attrs, "coefficients")
    intercepts = _floats(attrs, "intercepts")
    labels, _ = _labels(b, node, attrs, ctx)
    f = ctx.features(node.input[0], node)
    e = len(intercepts) if len(intercepts) else (len(coef) // f if f else 0)
    if f is not None and e and e * f < len(coef):
        # more coefficients than the declared input's features take (onnxruntime's own logreg_iris.onnx: 12
        # for 3 classes, X declared [3, 2]): onnxruntime reads the first E x F as the [E, F] matrix, so does aotc
        coef = coef[:e * f]
    if not e or len(coef) % e or (f is not None and len(coef) != e * f):
        raise _refuse(node, f"{len(coef)} coefficients do not make {e or '?'} rows of the input's {f} features")
    f = len(coef) // e
    if len(labels) < 2 or e not in (1, len(labels)):
        raise _refuse(node, f"{e} coefficient rows for {len(labels)} classes (one row, or one per class)")
    x = _as_float_rows(b, node.input[0], ctx.elems.get(node.input[0]), f, node)
    raw = b.op("MatMul", x, b.array(coef.reshape(e, f).T.astype(np.float32)))
    if len(intercepts):
        raw = b.op("Add", raw, b.array(intercepts.astype(np.float32)))
    if e == 1:  # one score: the second class where it is > 0
        pos = b.op("Greater", b.op("Reshape", raw, b.const(np.array([-1], np.int64), np.int64)), b.const(0.0))
        if _out(node, 0):
            label = labels[1] if len(labels) == 2 else 1
            negative = labels[0] if len(labels) == 2 else 0
            b.op("Where", pos, b.const(label, np.int64), b.const(negative, np.int64), out=_out(node, 0))
        if len(labels) == 2 and _out(node, 1):  # onnxruntime's two columns: [1 - t, t], t the logistic or s
            if post == "PROBIT":
                raise _refuse(node, "PROBIT of a one-row binary LinearClassifier is not supported (onnxruntime "
                                    "writes no defined scores for it)")
            t = b.op("Sigmoid", raw) if post == "LOGISTIC" else raw
            b.op("Concat", b.op("Sub", b.const(1.0), t), t, axis=1, out=_out(node, 1))
        elif _out(node, 1):
            _transform(b, raw, post, _out(node, 1), ctx=ctx)
        return
    _write_label(b, node, labels, b.op("ArgMax", raw, axis=1, keepdims=0))
    if _out(node, 1):
        _transform(b, raw, post, _out(node, 1), ctx=ctx)


def linear_regressor(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    post = _post(attrs, node)
    if post not in ("NONE", "PROBIT"):
        raise _refuse(node, f"post_transform '{post}' of a regressor is not supported (NONE, PROBIT)")
    coef = _floats(attrs, "coefficients")
    intercepts = _floats(attrs, "intercepts")
    targets = int(attrs.get("targets", 1))
    if targets < 1 or len(coef) % targets or (len(intercepts) not in (0, targets)):
        raise _refuse(node, f"{len(coef)} coefficients and {len(intercepts)} intercepts for {targets} targets")
    f = len(coef) // targets
    got = ctx.features(node.input[0], node)
    if got is not None and got != f:
        raise _refuse(node, f"{len(coef)} coefficients do not make {targets} rows of the input's {got} features")
    x = _as_float_rows(b, node.input[0], ctx.elems.get(node.input[0]), f, node)
    y = b.op("MatMul", x, b.array(coef.reshape(targets, f).T.astype(np.float32)))
    if len(intercepts):
        y = b.op("Add", y, b.array(intercepts.astype(np.float32)))
    _transform(b, y, post, _out(node, 0), ctx=ctx)


def normalizer(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    norm = _text(attrs.get("norm", "MAX"))
    axes = b.const(np.array([-1], np.int64), np.int64)
    elem = ctx.elems.get(node.input[0])
    if elem not in _NUMERIC:
        raise _refuse(node, "X must be float, double, int64 or int32")
    x = node.input[0] if elem == TensorProto.FLOAT else b.op("Cast", node.input[0], to=TensorProto.FLOAT)
    f = ctx.features(node.input[0], node)
    if f is not None and len(ctx.dims[node.input[0]]) == 1:  # a vector is one row
        x = b.op("Reshape", x, b.const(np.array([1, f], np.int64), np.int64))
    if norm == "MAX":  # onnxruntime divides by the row's maximum, not its largest magnitude
        b.op("Div", x, _reduce_max(b, x, ctx), out=node.output[0])
        return
    if norm == "L1":
        div = b.op("ReduceSum", b.op("Abs", x), axes, keepdims=1)
    elif norm == "L2":
        div = b.op("Sqrt", b.op("ReduceSum", b.op("Mul", x, x), axes, keepdims=1))
    else:
        raise _refuse(node, f"norm '{norm}' is not one of MAX, L1, L2")
    b.op("Div", x, b.op("Max", div, b.const(1e-30)), out=node.output[0])


def scaler(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    f = ctx.features(node.input[0], node)
    offset, scale = _floats(attrs, "offset"), _floats(attrs, "scale")
    for name, v in (("offset", offset), ("scale", scale)):
        if len(v) > 1 and f is not None and len(v) != f:
            raise _refuse(node, f"{name} has {len(v)} values for {f} features (1 or one per feature)")
    elem = ctx.elems.get(node.input[0])
    if elem not in _NUMERIC:
        raise _refuse(node, "X must be float, double, int64 or int32")
    x = node.input[0] if elem == TensorProto.FLOAT else b.op("Cast", node.input[0], to=TensorProto.FLOAT)
    if len(offset):
        x = b.op("Sub", x, b.array(offset.astype(np.float32)))
    if len(scale):
        x = b.op("Mul", x, b.array(scale.astype(np.float32)))
    b.op("Identity", x, out=node.output[0])


def imputer(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    elem = ctx.elems.get(node.input[0])
    floats, ints = _list(attrs, "imputed_value_floats"), _list(attrs, "imputed_value_int64s")
    f = ctx.features(node.input[0], node)
    if elem in (TensorProto.FLOAT, TensorProto.DOUBLE) and floats:
        dtype, values, replaced = np.float32, floats, float(attrs.get("replaced_value_float", 0.0))
    elif elem in (TensorProto.INT64, TensorProto.INT32) and ints:
        dtype, values, replaced = np.int64, ints, int(attrs.get("replaced_value_int64", 0))
    else:
        raise _refuse(node, "Imputer takes float or double X with imputed_value_floats, int64 or int32 X with "
                            "imputed_value_int64s")
    if len(values) > 1 and f is not None and len(values) != f:
        raise _refuse(node, f"{len(values)} imputed values for {f} features (1 or one per feature)")
    if elem == TensorProto.INT32:
        dtype = np.int32
    elif elem == TensorProto.DOUBLE:
        dtype = np.float64
    x = node.input[0]
    hit = b.op("IsNaN", x) if replaced != replaced else b.op("Equal", x, b.const(replaced, dtype))
    b.op("Where", hit, b.array(np.asarray(values, dtype)), x, out=node.output[0])


def one_hot_encoder(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    cats = _list(attrs, "cats_int64s")
    if _list(attrs, "cats_strings") or not cats:
        raise _refuse(node, "OneHotEncoder of string categories is not supported (cats_int64s)")
    elem = ctx.elems.get(node.input[0])
    if elem not in _NUMERIC:
        raise _refuse(node, "X must be int64, int32, float or double")
    # onnxruntime reads a float category as the integer it truncates to; an unknown value is a row of zeros
    # (with zeros=0 onnxruntime fails the run instead: the bundle has no run-time error to give)
    x = node.input[0] if elem == TensorProto.INT64 else b.op("Cast", node.input[0], to=TensorProto.INT64)
    hits = b.op("Equal", b.op("Unsqueeze", x, b.const(np.array([-1], np.int64), np.int64)),
                b.array(np.asarray(cats, np.int64)))
    b.op("Cast", hits, to=TensorProto.FLOAT, out=node.output[0])


def label_encoder(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    def pick(*names: str) -> tuple[str, list] | None:
        for n in names:
            if n in attrs:
                return n, _list(attrs, n)
        return None

    keys = pick("keys_int64s", "keys_floats", "keys_tensor")
    values = pick("values_int64s", "values_floats", "values_tensor")
    if keys is None or values is None or "keys_strings" in attrs or "values_strings" in attrs:
        raise _refuse(node, "LabelEncoder is compiled for numbers only (keys and values int64 or float)")
    if len(keys[1]) != len(values[1]) or not keys[1]:
        raise _refuse(node, f"{len(keys[1])} keys for {len(values[1])} values")
    elem = ctx.elems.get(node.input[0])
    key_dtype = {TensorProto.INT64: np.int64, TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
                 TensorProto.INT32: np.int32, TensorProto.INT16: np.int16}.get(elem or 0)
    if key_dtype is None:
        raise _refuse(node, "X must be int64, int32, int16, float or double")
    if values[0] == "values_tensor":
        vt = attrs["values_tensor"]
        out_dtype = helper.tensor_dtype_to_np_dtype(vt.data_type)
    else:
        out_dtype = np.int64 if values[0] == "values_int64s" else np.float32
    if "default_tensor" in attrs:
        default = numpy_helper.to_array(attrs["default_tensor"]).ravel()[0]
    elif out_dtype == np.int64:
        default = attrs.get("default_int64", -1)
    else:
        default = attrs.get("default_float", -0.0)
    keys_arr = np.asarray(keys[1], key_dtype)
    hits = b.op("Equal", b.op("Unsqueeze", node.input[0], b.const(np.array([-1], np.int64), np.int64)),
                b.array(keys_arr))
    if np.issubdtype(keys_arr.dtype, np.floating) and np.isnan(keys_arr).any():  # a NaN key matches NaN
        nan_keys = b.array(np.isnan(keys_arr))
        x_nan = b.op("IsNaN", b.op("Unsqueeze", node.input[0], b.const(np.array([-1], np.int64), np.int64)))
        hits = b.op("Or", hits, b.op("And", x_nan, nan_keys))
    hit_f = b.op("Cast", hits, to=TensorProto.FLOAT)
    first = b.op("ArgMax", hit_f, axis=-1, keepdims=0)
    found = b.op("Greater", _reduce_max(b, hit_f, ctx, keepdims=0), b.const(0.0, np.float32))
    mapped = b.op("Gather", b.array(np.asarray(values[1], out_dtype)), first, axis=0)
    b.op("Where", found, mapped, b.const(default, out_dtype), out=node.output[0])


def zipmap(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    ints = _list(attrs, "classlabels_int64s")
    strings = [_text(s) for s in _list(attrs, "classlabels_strings")]
    out = node.output[0]
    if out not in ctx.graph_outputs:
        raise _refuse(node, "ZipMap's sequence of maps is compiled only as a model output (the bundle returns "
                            "the probability tensor it wraps)")
    if ctx.elems.get(node.input[0]) != TensorProto.FLOAT:
        raise _refuse(node, "ZipMap wraps a float tensor")
    b.op("Identity", node.input[0], out=out)
    ctx.notes[out] = {"zipmap": {"classes": ints or strings,
                                 "what": "the [N, classes] probability tensor ZipMap wraps, a column per class"}}
    ctx.retyped[out] = (TensorProto.FLOAT, ctx.dims.get(node.input[0]))


# --- support vector machines ------------------------------------------------------------------------------

def _kernel(b: Any, x: str, vectors: np.ndarray, kernel: str, params: list[float]) -> str:
    """K [N, V]: the kernel of every row of x [N, F] with every row of `vectors` [V, F] (float)."""
    gamma, coef0, degree = (list(params) + [0.0, 0.0, 0.0])[:3]
    if kernel == "RBF":  # exp(-gamma |x - v|^2), the differences summed as onnxruntime sums them
        diff = b.op("Sub", b.op("Unsqueeze", x, b.const(np.array([1], np.int64), np.int64)),
                    b.array(vectors.astype(np.float32)))
        dist = b.op("ReduceSum", b.op("Mul", diff, diff), b.const(np.array([-1], np.int64), np.int64), keepdims=0)
        return b.op("Exp", b.op("Mul", dist, b.const(-gamma)))
    dot = b.op("MatMul", x, b.array(vectors.T.astype(np.float32)))
    if kernel == "LINEAR":
        return dot
    s = b.op("Add", b.op("Mul", dot, b.const(gamma)), b.const(coef0))
    if kernel == "SIGMOID":
        return b.op("Tanh", s)
    d = int(degree)
    if d == degree and 1 <= d <= 4:  # a small integer power as products, exact as onnxruntime's pow is
        p = s
        for _ in range(d - 1):
            p = b.op("Mul", p, s)
        return p
    return b.op("Pow", s, b.const(degree))


def _svm_common(node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> tuple[str, list[float], int]:
    kernel = _text(attrs.get("kernel_type", "LINEAR"))
    if kernel not in KERNELS:
        raise _refuse(node, f"kernel_type '{kernel}' is not one of {', '.join(KERNELS)}")
    params = [float(p) for p in _list(attrs, "kernel_params")]
    return kernel, params, 0


def svm_classifier(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    kernel, params, _ = _svm_common(node, attrs, ctx)
    post = _post(attrs, node)
    labels, _ = _labels(b, node, attrs, ctx)
    k = len(labels)
    coef = _floats(attrs, "coefficients")
    rho = _floats(attrs, "rho")
    per_class = [int(v) for v in _list(attrs, "vectors_per_class")]
    sv = _floats(attrs, "support_vectors")
    prob_a, prob_b = _floats(attrs, "prob_a"), _floats(attrs, "prob_b")
    if k < 2:
        raise _refuse(node, "an SVMClassifier needs at least 2 classes")
    if len(prob_a) and k > 2:
        raise _refuse(node, f"probability of {k} classes (libsvm's iterative pairwise coupling) is not supported;"
                            " export without probability, or with two classes")
    if len(prob_a) != len(prob_b):
        raise _refuse(node, f"{len(prob_a)} prob_a for {len(prob_b)} prob_b")
    f_in = ctx.features(node.input[0], node)
    if not per_class:  # linear mode: a coefficient row per class, the kernel with it
        if len(coef) % k:
            raise _refuse(node, f"{len(coef)} coefficients do not make {k} rows")
        f = len(coef) // k
        if f_in is not None and f_in != f:
            raise _refuse(node, f"{len(coef)} coefficients do not make {k} rows of the input's {f_in} features")
        if len(prob_a):
            raise _refuse(node, "probability without support vectors is not supported")
        x = _as_float_rows(b, node.input[0], ctx.elems.get(node.input[0]), f, node)
        scores = b.op("Add", _kernel(b, x, coef.reshape(k, f), kernel, params),
                      b.const(float(rho[0]) if len(rho) else 0.0))
        _write_label(b, node, labels, b.op("ArgMax", scores, axis=1, keepdims=0))
        if _out(node, 1):
            _transform(b, scores, post, _out(node, 1), ctx=ctx)
        return
    v = sum(per_class)
    pairs = k * (k - 1) // 2
    if len(per_class) != k or v == 0 or len(sv) % v or len(coef) != (k - 1) * v or len(rho) != pairs:
        raise _refuse(node, f"vectors_per_class, support_vectors, coefficients and rho do not describe {k} classes "
                            f"of one-vs-one machines")
    f = len(sv) // v
    if f_in is not None and f_in != f:
        raise _refuse(node, f"support vectors of {f} features for an input of {f_in}")
    x = _as_float_rows(b, node.input[0], ctx.elems.get(node.input[0]), f, node)
    kern = _kernel(b, x, sv.reshape(v, f), kernel, params)  # [N, V]
    start = np.concatenate([[0], np.cumsum(per_class)])
    c = coef.reshape(k - 1, v)
    m = np.zeros((v, pairs), np.float64)  # decision value of pair p: K @ m[:, p] + rho[p]
    wins = np.zeros((pairs, k), np.float32)  # the class a positive decision votes for
    loses = np.zeros((pairs, k), np.float32)
    p = 0
    for i in range(k):
        for j in range(i + 1, k):
            m[start[i]:start[i + 1], p] = c[j - 1, start[i]:start[i + 1]]
            m[start[j]:start[j + 1], p] = c[i, start[j]:start[j + 1]]
            wins[p, i], loses[p, j] = 1.0, 1.0
            p += 1
    dec = b.op("Add", b.op("MatMul", kern, b.array(m.astype(np.float32))), b.array(rho.astype(np.float32)))
    # the label is the vote's winner (the first of the most voted), with probability too, as onnxruntime's
    pos = b.op("Cast", b.op("Greater", dec, b.const(0.0)), to=TensorProto.FLOAT)
    votes = b.op("Add", b.op("MatMul", pos, b.array(wins - loses)), b.array(loses.sum(axis=0)))
    _write_label(b, node, labels, b.op("ArgMax", votes, axis=1, keepdims=0))
    if not _out(node, 1):
        return
    if len(prob_a):  # two classes: Platt's sigmoid, clipped as libsvm clips it, then libsvm's coupling
        val = b.op("Add", b.op("Mul", dec, b.const(float(prob_a[0]))), b.const(float(prob_b[0])))
        p01 = b.op("Clip", b.op("Sigmoid", b.op("Neg", val)), b.const(1e-7), b.const(1 - 1e-7))
        _transform(b, _couple_two(b, p01), post, _out(node, 1), ctx=ctx)
    elif pairs == 1:
        _binary_scores(b, dec, post, _out(node, 1), all_positive=False, ctx=ctx)
    else:
        _transform(b, dec, post, _out(node, 1), ctx=ctx)


def _couple_two(b: Any, r01: str) -> str:
    """[N, 2] probabilities from the pairwise one r01 [N, 1] as libsvm's multiclass_probability finds them for
    two classes (onnxruntime's): its iteration from [1/2, 1/2] stops once within 0.005 / 2 of the optimum,
    which for two classes takes at most two sweeps, so two masked sweeps are the whole loop."""
    one = b.const(1.0)
    r10 = b.op("Sub", one, r01)
    q = [[b.op("Mul", r10, r10), b.op("Neg", b.op("Mul", r10, r01))], [None, b.op("Mul", r01, r01)]]
    q[1][0] = q[0][1]
    p = [b.op("Mul", r01, b.const(0.0)), None]
    p[0] = b.op("Add", p[0], b.const(0.5))
    p[1] = p[0]
    for _ in range(2):
        qp = [b.op("Add", b.op("Mul", q[t][0], p[0]), b.op("Mul", q[t][1], p[1])) for t in range(2)]
        pqp = b.op("Add", b.op("Mul", p[0], qp[0]), b.op("Mul", p[1], qp[1]))
        err = b.op("Max", b.op("Abs", b.op("Sub", qp[0], pqp)), b.op("Abs", b.op("Sub", qp[1], pqp)))
        active = b.op("GreaterOrEqual", err, b.const(0.005 / 2))
        new_p = list(p)
        for t in range(2):
            diff = b.op("Div", b.op("Sub", pqp, qp[t]), q[t][t])
            new_p[t] = b.op("Add", new_p[t], diff)
            grow = b.op("Add", one, diff)
            pqp = b.op("Div", b.op("Add", pqp, b.op("Mul", diff, b.op("Add", b.op("Mul", diff, q[t][t]),
                                                                         b.op("Mul", b.const(2.0), qp[t])))),
                       b.op("Mul", grow, grow))
            new_p = [b.op("Div", v, grow) for v in new_p]
            qp = [b.op("Div", b.op("Add", qp[u], b.op("Mul", diff, q[t][u])), grow) for u in range(2)]
        p = [b.op("Where", active, new_p[t], p[t]) for t in range(2)]
    return b.op("Concat", p[0], p[1], axis=1)


def svm_regressor(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    kernel, params, _ = _svm_common(node, attrs, ctx)
    post = _post(attrs, node)
    if post != "NONE":
        raise _refuse(node, f"post_transform '{post}' of SVMRegressor is not supported (NONE)")
    coef, rho = _floats(attrs, "coefficients"), _floats(attrs, "rho")
    n = int(attrs.get("n_supports", 0))
    sv = _floats(attrs, "support_vectors")
    f_in = ctx.features(node.input[0], node)
    if n > 0:
        if len(sv) % n or len(coef) != n:
            raise _refuse(node, f"{len(sv)} support vector values and {len(coef)} coefficients for {n} supports")
        f = len(sv) // n
        if f_in is not None and f_in != f:
            raise _refuse(node, f"support vectors of {f} features for an input of {f_in}")
        x = _as_float_rows(b, node.input[0], ctx.elems.get(node.input[0]), f, node)
        y = b.op("MatMul", _kernel(b, x, sv.reshape(n, f), kernel, params),
                 b.array(coef.reshape(n, 1).astype(np.float32)))
    else:  # linear mode: the kernel of X with the coefficients
        f = len(coef)
        x = _as_float_rows(b, node.input[0], ctx.elems.get(node.input[0]), f, node)
        y = _kernel(b, x, coef.reshape(1, f), kernel, params)
    y = b.op("Add", y, b.const(float(rho[0]) if len(rho) else 0.0))
    if int(attrs.get("one_class", 0)):
        y = b.op("Where", b.op("Greater", y, b.const(0.0)), b.const(1.0), b.const(-1.0))
    b.op("Identity", y, out=node.output[0])


# --- tree ensembles of ai.onnx.ml 1 and 3 -------------------------------------------------------------------

def _trees(node: onnx.NodeProto, attrs: dict[str, Any], prefix: str) -> dict:
    """The old ensembles' node table (nodes keyed (tree, node)) in TreeEnsemble's terms: branch nodes with
    feature, mode, split, NaN direction; every root-to-leaf path; each leaf's (target, weight) list."""
    tree_ids = [int(v) for v in _list(attrs, "nodes_treeids")]
    node_ids = [int(v) for v in _list(attrs, "nodes_nodeids")]
    modes = [_text(m) for m in _list(attrs, "nodes_modes")]
    features = [int(v) for v in _list(attrs, "nodes_featureids")]
    splits = _floats(attrs, "nodes_values", "nodes_values_as_tensor")
    true_ids = [int(v) for v in _list(attrs, "nodes_truenodeids")]
    false_ids = [int(v) for v in _list(attrs, "nodes_falsenodeids")]
    tracks = [int(v) for v in _list(attrs, "nodes_missing_value_tracks_true")] or [0] * len(modes)
    n = len(tree_ids)
    if not n or any(len(a) != n for a in (node_ids, modes, features, true_ids, false_ids, tracks)) or \
            len(splits) not in (0, n):
        raise _refuse(node, "the nodes_* attributes are not of one length")
    if len(splits) == 0:
        splits = np.zeros(n)
    at = {(t, i): k for k, (t, i) in enumerate(zip(tree_ids, node_ids, strict=True))}
    if len(at) != n:
        raise _refuse(node, "two nodes have the same tree and node id")
    for m in modes:
        if m != "LEAF" and m not in _OLD_MODES:
            raise _refuse(node, f"node mode '{m}' is not one of BRANCH_LEQ .. BRANCH_NEQ, LEAF")
    ids = _list(attrs, f"{prefix}_ids")
    w_tree, w_node = _list(attrs, f"{prefix}_treeids"), _list(attrs, f"{prefix}_nodeids")
    weights = _floats(attrs, f"{prefix}_weights", f"{prefix}_weights_as_tensor")
    if not (len(ids) == len(w_tree) == len(w_node) == len(weights)):
        raise _refuse(node, f"the {prefix}_* attributes are not of one length")
    leaves: dict[int, list[tuple[int, float]]] = {}
    for t, i, target, w in zip(w_tree, w_node, ids, weights, strict=True):
        k = at.get((int(t), int(i)))
        if k is None or modes[k] != "LEAF":
            raise _refuse(node, f"a weight names tree {t} node {i}, which is not a leaf")
        leaves.setdefault(k, []).append((int(target), float(w)))
    roots = sorted({t for t in tree_ids})
    paths: list[tuple[list[tuple[int, bool]], int]] = []

    def walk(k: int, prefix_steps: list[tuple[int, bool]], depth: int) -> None:
        if depth > n:
            raise _refuse(node, "its trees have a cycle")
        if modes[k] == "LEAF":
            paths.append((prefix_steps, k))
            return
        t = tree_ids[k]
        for taken, child in ((True, true_ids[k]), (False, false_ids[k])):
            c = at.get((t, child))
            if c is None:
                raise _refuse(node, f"tree {t} node {node_ids[k]} points at node {child}, which is not in it")
            walk(c, [*prefix_steps, (k, taken)], depth + 1)

    for t in roots:
        root = at.get((t, 0)) if (t, 0) in at else min(k for k in range(n) if tree_ids[k] == t)
        walk(root, [], 0)
    return {"paths": paths, "leaves": leaves, "features": features, "splits": splits, "tracks": tracks,
            "modes": [_OLD_MODES.get(m, -1) for m in modes], "trees": len(roots)}


def _tree_sums(b: Any, node: onnx.NodeProto, trees: dict, targets: int, ctx: MlContext) -> str:
    """[N, targets] float: each target's sum of the weights of the leaves each row reaches."""
    from aot.frontend.onnx.tree_ensemble import paths_matrix

    x = node.input[0]
    f = ctx.features(x, node)
    elem = ctx.elems.get(x)
    if elem not in _NUMERIC:
        raise _refuse(node, "X must be float, double, int64 or int32")
    if any(f is not None and not 0 <= ft < f for ft in trees["features"]):
        raise _refuse(node, "a feature id is out of range")
    weights = np.zeros((len(trees["paths"]), targets), np.float64)
    for p, (_, leaf) in enumerate(trees["paths"]):
        for target, w in trees["leaves"].get(leaf, []):
            if not 0 <= target < targets:
                raise _refuse(node, f"a leaf weight's target {target} is out of range (0 to {targets - 1})")
            weights[p, target] += w
    return paths_matrix(b.op, b.array, x, trees["paths"], trees["features"], trees["modes"],
                        trees["splits"], trees["tracks"], {}, weights, node)


def tree_regressor(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    post = _post(attrs, node)
    if post != "NONE":
        raise _refuse(node, f"post_transform '{post}' of a regressor is not supported (NONE)")
    agg = _text(attrs.get("aggregate_function", "SUM"))
    if agg not in ("SUM", "AVERAGE"):
        raise _refuse(node, f"aggregate_function '{agg}' is not supported (SUM, AVERAGE)")
    targets = int(attrs.get("n_targets", 1))
    trees = _trees(node, attrs, "target")
    y = _tree_sums(b, node, trees, targets, ctx)
    if agg == "AVERAGE":
        y = b.op("Div", y, b.const(float(trees["trees"])))
    base = _floats(attrs, "base_values", "base_values_as_tensor")
    if len(base) not in (0, targets):
        raise _refuse(node, f"{len(base)} base values for {targets} targets")
    if len(base):
        y = b.op("Add", y, b.array(base.astype(np.float32)))
    b.op("Identity", y, out=node.output[0])


def tree_classifier(b: Any, node: onnx.NodeProto, attrs: dict[str, Any], ctx: MlContext) -> None:
    post = _post(attrs, node)
    labels, _ = _labels(b, node, attrs, ctx)
    k = len(labels)
    if k < 2:
        raise _refuse(node, "a TreeEnsembleClassifier needs at least 2 classes")
    trees = _trees(node, attrs, "class")
    used = sorted({t for ws in trees["leaves"].values() for t, _ in ws})
    base = _floats(attrs, "base_values", "base_values_as_tensor")
    binary = k == 2 and len(used) == 1  # one score column, as onnxruntime's binary case
    if binary and used[0] != 0:
        raise _refuse(node, "a binary ensemble's weights are on class 1 only, which is not supported")
    scores = _tree_sums(b, node, trees, 1 if binary else k, ctx)
    if binary:
        if len(base) not in (0, 1, 2):
            raise _refuse(node, f"{len(base)} base values for a binary ensemble")
        if len(base):
            scores = b.op("Add", scores, b.const(float(base[0])))
        positive = all(w >= 0 for ws in trees["leaves"].values() for _, w in ws)
        pos = b.op("Greater", b.op("Reshape", scores, b.const(np.array([-1], np.int64), np.int64)),
                   b.const(0.5 if positive else 0.0))
        if _out(node, 0):
            b.op("Where", pos, b.const(labels[1], np.int64), b.const(labels[0], np.int64), out=_out(node, 0))
        _binary_scores(b, scores, post, _out(node, 1), all_positive=positive and post == "NONE", ctx=ctx)
        return
    if len(base) not in (0, k):
        raise _refuse(node, f"{len(base)} base values for {k} classes")
    if len(base):
        scores = b.op("Add", scores, b.array(base.astype(np.float32)))
    _write_label(b, node, labels, b.op("ArgMax", scores, axis=1, keepdims=0))
    if _out(node, 1):
        _transform(b, scores, post, _out(node, 1), ctx=ctx)


LOWERINGS = {
    "LinearClassifier": linear_classifier, "LinearRegressor": linear_regressor, "Normalizer": normalizer,
    "Scaler": scaler, "Imputer": imputer, "OneHotEncoder": one_hot_encoder, "LabelEncoder": label_encoder,
    "ZipMap": zipmap, "SVMClassifier": svm_classifier, "SVMRegressor": svm_regressor,
    "TreeEnsembleClassifier": tree_classifier, "TreeEnsembleRegressor": tree_regressor,
}
