"""Normalisation ops against onnxruntime: BatchNormalization, InstanceNormalization, LRN, Softmax, LogSoftmax."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from opcheck import model_case, op_case, shared_build

from aot.compiler import compile_model
from aot.errors import AotcError

rng = np.random.default_rng(7)


def _f32(*shape: int, positive: bool = False, offset: float = 0.0) -> np.ndarray:
    x = rng.standard_normal(shape).astype(np.float32)
    return (np.abs(x) + 0.1 if positive else x) + np.float32(offset)


def _bn_params(c: int) -> dict[str, np.ndarray]:
    return {"scale": _f32(c), "bias": _f32(c), "mean": _f32(c), "var": _f32(c, positive=True)}


def _bn(case_id: str, shape: tuple, opset: int = 15, runtime_params: bool = False, **attrs):
    params = _bn_params(shape[1])
    if runtime_params:  # parameters as graph inputs: scale and shift are computed at run time
        return op_case(case_id, "BatchNormalization", {"x": shape, **params}, attrs=attrs, opset=opset)
    return op_case(case_id, "BatchNormalization", {"x": shape}, consts=params, attrs=attrs, opset=opset)


def _chain(case_id: str, x_shape: tuple, nodes: list[onnx.NodeProto], consts: dict[str, np.ndarray],
           opset: int = 13):
    """x -> nodes -> y, with intermediates in the arena (so in-place reuse is exercised)."""
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", 1, x_shape)],
                              [helper.make_tensor_value_info("y", 1, None)],
                              [onnx.numpy_helper.from_array(v, k) for k, v in consts.items()])
    return model_case(case_id, graph, {"x": _f32(*x_shape)}, opset)


CASES = [
    # BatchNormalization: opset 7, 9, 14, 15 forms; ranks 2..5; constant and run-time parameters
    _bn("bn_4d_opset7", (2, 3, 4, 5), opset=7),
    _bn("bn_4d_opset7_spatial1_momentum", (1, 3, 4, 4), opset=7, spatial=1, momentum=0.8),
    _bn("bn_4d_opset9", (2, 3, 4, 5), opset=9, epsilon=1e-3),
    _bn("bn_4d_opset14", (1, 4, 3, 3), opset=14, training_mode=0),
    _bn("bn_4d_opset15", (2, 5, 3, 4), opset=15),
    _bn("bn_rank2", (6, 7), opset=15),
    _bn("bn_rank3", (2, 4, 9), opset=9),
    _bn("bn_rank5", (1, 3, 2, 3, 4), opset=14),
    _bn("bn_runtime_params", (2, 3, 5, 5), opset=15, runtime_params=True),
    _bn("bn_runtime_params_rank2_opset7", (4, 6), opset=7, runtime_params=True, epsilon=1e-2),
    # BatchNormalization that cannot fold into a Conv: after an Add, in place in the arena, then Relu
    _chain("bn_after_add_inplace", (1, 4, 5, 5), [
        helper.make_node("Add", ["x", "b"], ["s"]),
        helper.make_node("BatchNormalization", ["s", "scale", "bias", "mean", "var"], ["t"], epsilon=1e-4),
        helper.make_node("Relu", ["t"], ["y"]),
    ], {"b": _f32(1, 4, 1, 1), **_bn_params(4)}, opset=15),

    # InstanceNormalization: ranks 3..5, epsilon, constant and run-time scale/bias, a large mean
    op_case("in_3d", "InstanceNormalization", {"x": (2, 3, 10)}, consts={"s": _f32(3), "b": _f32(3)}),
    op_case("in_4d_opset7", "InstanceNormalization", {"x": (2, 4, 5, 6)}, consts={"s": _f32(4), "b": _f32(4)},
            opset=7),
    op_case("in_5d_eps", "InstanceNormalization", {"x": (1, 2, 3, 4, 5)}, consts={"s": _f32(2), "b": _f32(2)},
            attrs={"epsilon": 1e-2}, opset=21),
    op_case("in_runtime_params", "InstanceNormalization", {"x": (2, 3, 7, 7), "s": (3,), "b": (3,)}),
    op_case("in_large_mean", "InstanceNormalization", {"x": _f32(1, 3, 16, 16, offset=100.0)},
            consts={"s": _f32(3), "b": _f32(3)}),
    op_case("in_spatial_1", "InstanceNormalization", {"x": (2, 3, 1, 1)}, consts={"s": _f32(3), "b": _f32(3)}),
    _chain("in_inplace", (1, 3, 6, 6), [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("InstanceNormalization", ["r", "s", "b"], ["t"]),
        helper.make_node("Neg", ["t"], ["y"]),
    ], {"s": _f32(3), "b": _f32(3)}),
]

# LRN: sizes 1 up to beyond C, defaults
for size in (1, 3, 5, 9):
    CASES.append(op_case(f"lrn_size{size}", "LRN", {"x": (2, 6, 4, 5)},
                         attrs={"size": size, "alpha": 0.02, "beta": 0.6, "bias": 1.5}))
CASES += [
    op_case("lrn_defaults_opset7", "LRN", {"x": (1, 8, 3, 3)}, attrs={"size": 3}, opset=7),
    op_case("lrn_alexnet", "LRN", {"x": (1, 16, 7, 7)}, attrs={"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 2.0}),
]

# Softmax / LogSoftmax: both axis semantics (opset < 13 flattens at axis, opset >= 13 is one axis)
SOFTMAX = [
    # (tag, shape, opset, axis or None for the default)
    ("4d_axis1_opset11", (2, 3, 4, 5), 11, 1),  # softmax over 3*4*5 values
    ("4d_axis1_opset13", (2, 3, 4, 5), 13, 1),  # softmax over 3 values, inner = 20
    ("4d_default_opset11", (2, 3, 4, 5), 11, None),  # default axis 1
    ("4d_default_opset13", (2, 3, 4, 5), 13, None),  # default axis -1
    ("4d_neg3_opset11", (2, 3, 4, 5), 11, -3),
    ("4d_neg2_opset13", (2, 3, 4, 5), 13, -2),
    ("3d_axis0_opset7", (3, 4, 5), 7, 0),
    ("3d_axis0_opset21", (3, 4, 5), 21, 0),
    ("2d_last_opset9", (5, 17), 9, -1),
    ("2d_last_opset13", (5, 17), 13, -1),
    ("1d_opset13", (33,), 13, 0),
]
for op, tag in (("Softmax", "softmax"), ("LogSoftmax", "logsoftmax")):
    for sub, shape, opset, axis in SOFTMAX:
        attrs = {} if axis is None else {"axis": axis}
        CASES.append(op_case(f"{tag}_{sub}", op, {"x": shape}, attrs=attrs, opset=opset))
    # large logits: only a max-subtracting kernel stays finite
    CASES.append(op_case(f"{tag}_large_values", op, {"x": _f32(3, 40) * 80.0}, attrs={"axis": 1}))
    CASES.append(op_case(f"{tag}_large_values_inner", op, {"x": _f32(2, 6, 8) * 80.0}, attrs={"axis": 1}))
    CASES.append(_chain(f"{tag}_inplace_inner", (2, 5, 3, 4), [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node(op, ["r"], ["t"], axis=1),
        helper.make_node("Neg", ["t"], ["y"]),
    ], {}))


# LRN that onnxruntime does not run (it takes odd sizes and 4-D input only), checked against the ONNX
# spec's formula instead: the sum runs over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]
LRN_SPEC = [("lrn_even_size2", (2, 6, 4, 5), 2), ("lrn_even_size4", (1, 7, 3, 3), 4),
            ("lrn_rank3", (2, 5, 6), 3), ("lrn_rank5", (1, 6, 2, 3, 2), 5)]
SPEC_CASES = [op_case(tag, "LRN", {"x": shape}, attrs={"size": size, "alpha": 0.02, "beta": 0.6, "bias": 1.5})
              for tag, shape, size in LRN_SPEC]


def lrn_spec(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    x64 = x.astype(np.float64)
    sq = np.zeros_like(x64)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1], c + -(-(size - 1) // 2) + 1)
        sq[:, c] = np.sum(x64[:, lo:hi] ** 2, axis=1)
    return (x64 / (bias + alpha / size * sq) ** beta).astype(np.float32)


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES + SPEC_CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id,shape,size", LRN_SPEC, ids=[t[0] for t in LRN_SPEC])
def test_lrn_matches_spec(built, case_id, shape, size):
    x = built.cases[case_id].feeds["x"]
    (ours,) = built.run(case_id)
    np.testing.assert_allclose(ours, lrn_spec(x, size, 0.02, 0.6, 1.5), rtol=1e-5, atol=1e-5)


# --- refused at compile time ----------------------------------------------------------------

def _bn_model(opset: int, outputs: tuple = ("y",), **attrs):
    return op_case("refused", "BatchNormalization", {"x": (2, 3, 4, 4)}, consts=_bn_params(3), attrs=attrs,
                   opset=opset, outputs=list(outputs)).model


REFUSED = [
    ("bn_training_mode", _bn_model(15, training_mode=1), "training mode"),
    ("bn_statistics_outputs", _bn_model(15, outputs=("y", "mean_out", "var_out"), training_mode=1),
     "training mode"),
    ("bn_spatial0", _bn_model(7, spatial=0), "spatial=0"),
    ("instance_norm_rank2", op_case("refused", "InstanceNormalization", {"x": (2, 3)},
                                    consts={"s": _f32(3), "b": _f32(3)}).model, "rank 2"),
    ("lrn_rank2", op_case("refused", "LRN", {"x": (2, 3)}, attrs={"size": 3}).model, "rank 2"),
]


@pytest.mark.parametrize("case_id,model,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused(case_id, model, message):
    with pytest.raises(AotcError, match=message):
        compile_model(model)
