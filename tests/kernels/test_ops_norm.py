"""Normalisation ops against onnxruntime: BatchNormalization, InstanceNormalization, LRN, Softmax, LogSoftmax,
LayerNormalization and RMSNormalization."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from opcheck import Case, as_float64, model_case, node_case, op_case, shared_build

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
    # LpNormalization (issue 16): x over its L1/L2 norm along the axis; a row of zeros stays zeros
    op_case("lpnorm_l2_last", "LpNormalization", {"x": (3, 4, 5)}),
    op_case("lpnorm_l1_axis0", "LpNormalization", {"x": (3, 4)}, attrs={"axis": 0, "p": 1}),
    op_case("lpnorm_zero_row", "LpNormalization", {"x": np.array([[0, 0, 0], [3, 4, 0]], np.float32)},
            attrs={"axis": 1, "p": 2}),
    # MeanVarianceNormalization (issue 16): over the default axes [0, 2, 3] and others
    op_case("mvn_default", "MeanVarianceNormalization", {"x": (2, 3, 4, 5)}),
    op_case("mvn_axes_last", "MeanVarianceNormalization", {"x": (3, 8)}, attrs={"axes": [-1]}),
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
# float64 (norm_f64.c): every Softmax / LogSoftmax case above in double, against onnxruntime's double kernels
CASES += [as_float64(c) for c in list(CASES) if c.id.startswith(("softmax_", "logsoftmax_"))]


# LayerNormalization (opset 17) and RMSNormalization (opset 23): any axis, with and without bias, epsilon,
# stash_type, the optional Mean / InvStdDev outputs when read, constant scales that broadcast within a row and
# scales given at run time; rows long and short, means large beside the spread. Error relative to each output's
# own scale.
def _ln(case_id: str, x: tuple | np.ndarray, axis: int = -1, op: str = "LayerNormalization", opset: int = 17,
        bias: bool = True, outputs: tuple = ("y",), scale_shape: tuple | None = None, runtime: bool = False,
        reference: str = "onnxruntime", **attrs) -> Case:
    shape = x.shape if isinstance(x, np.ndarray) else x
    row = tuple(shape[axis:])
    params = {"scale": _f32(*(scale_shape or row))}
    if bias and op == "LayerNormalization":
        params["bias"] = _f32(*(scale_shape or row))
    inputs = {"x": x, **(params if runtime else {})}
    case = op_case(case_id, op, inputs, consts=None if runtime else params, attrs={"axis": axis, **attrs},
                   opset=opset, outputs=list(outputs), seed=len(CASES))
    kept = [o for o in case.model.graph.output if o.name]  # an omitted optional output is no graph output
    for o in kept[1:]:  # Mean and InvStdDev are of the stash type
        o.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE if attrs.get("stash_type") == 11 else 1
    del case.model.graph.output[:]
    case.model.graph.output.extend(kept)
    if opset >= 21:
        case.model.ir_version = 10  # what onnxruntime takes for these opsets
    case.relative = True
    if reference == "spec":  # neither onnxruntime nor onnx's reference has it: the op's function body, in numpy
        case.expected = _layer_norm_spec(case.feeds["x"], params["scale"], params.get("bias"), axis,
                                         attrs.get("epsilon", 1e-5), np.float64)[:len(outputs)]
        case.expected = [e for e, o in zip(case.expected, outputs, strict=True) if o]
    return case


def _layer_norm_spec(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None, axis: int, epsilon: float,
                     stash: type) -> list[np.ndarray]:
    """LayerNormalization's function body (onnx/defs/nn/defs.cc): X cast to the stash type, Mean, D = X - Mean,
    Var = mean(D * D), InvStdDev = 1 / sqrt(Var + epsilon), Normalized = D * InvStdDev cast back to X's type, then
    scaled and shifted in X's type."""
    axes = tuple(range(axis % x.ndim, x.ndim))
    xs = x.astype(stash)
    mean = xs.mean(axis=axes, keepdims=True)
    d = xs - mean
    inv = 1.0 / np.sqrt((d * d).mean(axis=axes, keepdims=True) + stash(np.float32(epsilon)))
    y = (d * inv).astype(x.dtype) * scale
    return [y + bias if bias is not None else y, mean, inv]


NORM_CASES = [
    _ln("ln_last_axis", (2, 5, 32)),
    _ln("ln_axis1_4d", (2, 3, 4, 5), axis=1),
    _ln("ln_axis0_all", (3, 4, 5), axis=0),
    _ln("ln_axis_neg2", (2, 3, 4, 5), axis=-2, epsilon=1e-3),
    _ln("ln_no_bias", (4, 24), bias=False),
    _ln("ln_rank1", (40,)),
    _ln("ln_row_of_1", (3, 4, 1)),
    _ln("ln_odd_row", (5, 13), epsilon=1e-2),
    _ln("ln_long_rows", (2, 4096)),
    _ln("ln_long_rows_large_mean", _f32(2, 3000, offset=1000.0)),
    _ln("ln_large_mean", _f32(4, 768, offset=100.0)),
    _ln("ln_tiny_spread", np.float32(5.0) + _f32(3, 64) * np.float32(1e-3)),
    _ln("ln_constant_rows", np.full((2, 16), 3.0, np.float32)),  # variance 0: y = bias
    _ln("ln_mean_invstd", (2, 3, 8), axis=-2, outputs=("y", "mean", "inv_std_dev")),
    _ln("ln_invstd_only", (3, 10), outputs=("y", "", "inv_std_dev")),
    _ln("ln_mean_only_axis0", (3, 10), axis=0, outputs=("y", "mean")),
    _ln("ln_scale_broadcast_scalar", (2, 3, 8), scale_shape=(1,)),
    _ln("ln_scale_broadcast_in_row", (2, 3, 4), axis=1, scale_shape=(4,)),
    _ln("ln_scale_leading_ones", (3, 2, 6), scale_shape=(1, 6)),
    _ln("ln_runtime_scale_bias", (2, 5, 16), runtime=True),
    _ln("ln_opset18", (2, 3, 16), opset=18),
    _ln("ln_opset24", (2, 3, 16), opset=24),
    # stash_type double (Mean / InvStdDev are float64): onnxruntime has no such kernel (NOT_IMPLEMENTED) and
    # onnx's reference implementation raises NotImplementedError; checked against the function body's arithmetic
    _ln("ln_stash_double", _f32(2, 3, 64, offset=50.0), outputs=("y", "mean", "inv_std_dev"), stash_type=11,
        reference="spec"),
    _ln("ln_stash_double_y_only", (4, 33), stash_type=11, reference="spec"),
    _chain("ln_inplace", (2, 4, 16), [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("LayerNormalization", ["r", "s", "b"], ["t"]),
        helper.make_node("Neg", ["t"], ["y"]),
    ], {"s": _f32(16), "b": _f32(16)}, opset=17),
    _ln("rms_last_axis", (2, 5, 32), op="RMSNormalization", opset=23),
    _ln("rms_axis1_4d", (2, 3, 4, 5), axis=1, op="RMSNormalization", opset=23),
    _ln("rms_axis0_all", (3, 4, 5), axis=0, op="RMSNormalization", opset=23, epsilon=1e-3),
    _ln("rms_long_rows", (2, 4096), op="RMSNormalization", opset=23),
    _ln("rms_large_values", _f32(3, 512, offset=300.0), op="RMSNormalization", opset=23),
    _ln("rms_scale_scalar", (2, 3, 8), op="RMSNormalization", opset=23, scale_shape=(1,)),
    _ln("rms_runtime_scale", (2, 5, 16), op="RMSNormalization", opset=23, runtime=True),
    _ln("rms_stash_double", (2, 3, 64), op="RMSNormalization", opset=23, stash_type=11),
    _ln("rms_opset24", (2, 3, 16), op="RMSNormalization", opset=24),
    _ln("rms_opset28", (2, 3, 16), op="RMSNormalization", opset=28),
]
CASES += NORM_CASES
# GroupNormalization (18, 21 with one scale per channel), compiled as onnx's function body (issue 51)
CASES += [node_case(f"group_norm_{tag}", "GroupNormalization",
                    {"x": rng.standard_normal(shape).astype(np.float32) * 3 + 1,
                     "scale": rng.standard_normal(shape[1]).astype(np.float32),
                     "bias": rng.standard_normal(shape[1]).astype(np.float32)}, ["x", "scale", "bias"], ["y"], 21,
                    **attrs)
          for tag, shape, attrs in [("nchw", (3, 4, 5, 5), {"num_groups": 2}),
                                    ("one_group_eps", (2, 6, 7), {"num_groups": 1, "epsilon": 1e-2}),
                                    ("group_per_channel_3d", (1, 4, 2, 3, 2), {"num_groups": 4})]]


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
    # training_mode=1 with only Y: ONNX requires the running statistics' outputs then (with them it compiles:
    # tests/frontend/test_optional_outputs.py)
    ("bn_training_mode", _bn_model(15, training_mode=1), r"should be 3 when Training_mode = True"),
    ("bn_spatial0", _bn_model(7, spatial=0), "spatial=0"),
    ("instance_norm_rank2", op_case("refused", "InstanceNormalization", {"x": (2, 3)},
                                    consts={"s": _f32(3), "b": _f32(3)}).model, "rank 2"),
    ("lrn_rank2", op_case("refused", "LRN", {"x": (2, 3)}, attrs={"size": 3}).model, "rank 2"),
    ("ln_scale_varies_across_rows", _ln("refused", (2, 3, 4), scale_shape=(3, 4)).model,
     r"scale of shape \[3, 4\] is not one value per normalised element"),
    ("ln_runtime_scale_broadcast", op_case("refused", "LayerNormalization", {"x": (2, 3, 4), "s": (1,)},
                                           opset=17).model, "computed at run time broadcasts"),
    ("ln_stash_bfloat16", _ln("refused", (2, 8), stash_type=16).model, "stash_type 16 is not supported"),
    ("rms_scalar_input", op_case("refused", "RMSNormalization", {"x": np.array(2.0, np.float32)},
                                 consts={"s": _f32(1)}, opset=23).model, "axis"),
]


@pytest.mark.parametrize("case_id,model,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused(case_id, model, message):
    with pytest.raises(AotcError, match=message):
        compile_model(model)
