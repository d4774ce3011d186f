"""int8 models as onnxruntime's quantizer writes them (QDQ and QOperator), against onnxruntime.

Most cases expose their 8-bit activations as graph outputs (examples/quantize.py expose_integers),
so each integer tensor of the model is compared, not just the float outputs. The reference is
onnxruntime with its default graph optimisations, on one thread. Exposing a QDQ group's tensors
stops onnxruntime fusing the group, so on those cases it runs DequantizeLinear -> float op ->
QuantizeLinear everywhere; the `_plain` cases are the QDQ models as users run them (nothing exposed,
onnxruntime fusing what it can), compared at their outputs in LSB of the output's scale. The target
(issue 14): at least 99.9 % of the integers identical, none more than 1 LSB off; where onnxruntime
runs integer kernels, aotc is exact.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from functools import partial

import numpy as np
import onnx
import pytest
import zoo
from onnx import TensorProto, helper
from opcheck import Case, shared_build
from quantcheck import (
    compare_integers,
    float_reference,
    integer_reference,
    output_lsb,
    quantized_feeds,
    reference,
    residual_block,
)
from quantize import expose_integers, quantized, quantized_dynamic

from aot.qmath import INT_RANGE, fma32, qadd_constants

MODELS = [  # (zoo model, format, activation type)
    ("lenet", "QDQ", "int8"), ("lenet", "QOperator", "uint8"),
    ("resnet", "QDQ", "int8"), ("resnet", "QOperator", "uint8"),
    ("mobilenetv2", "QDQ", "int8"), ("mobilenetv2", "QOperator", "uint8"),
    ("inception", "QDQ", "int8"), ("inception", "QOperator", "uint8"),
    ("squeezenet", "QDQ", "uint8"), ("squeezenet", "QOperator", "int8"),
    ("mlp", "QDQ", "int8"), ("mlp", "QOperator", "uint8"),
    ("dscnn_kws", "QDQ", "int8"), ("shufflenet", "QDQ", "int8"),
]


def _model_case(name: str, fmt: str, activations: str, per_channel: bool = True) -> Case:
    fp32 = zoo.build(name)
    model = expose_integers(quantized(fp32, fmt, per_channel=per_channel, activations=activations))
    tag = "" if per_channel else "_per_tensor"
    return Case(f"{name}_{fmt}_{activations}{tag}", model, zoo.random_inputs(fp32, seed=7))


def _dynamic_case(name: str) -> Case:
    fp32 = zoo.build(name)
    return Case(f"{name}_dynamic", expose_integers(quantized_dynamic(fp32)), zoo.random_inputs(fp32, seed=7))


def _plain_case(name: str, activations: str) -> Case:
    fp32 = zoo.build(name)
    return Case(f"{name}_QDQ_{activations}_plain", quantized(fp32, "QDQ", activations=activations),
                zoo.random_inputs(fp32, seed=7))


PLAIN = [("resnet", "int8"), ("resnet", "uint8"), ("mobilenetv2", "int8"), ("squeezenet", "uint8"),
         ("dscnn_kws", "int8"), ("shufflenet", "int8")]
# case id -> how to make it: the quantizer runs when the module's build does, not when pytest collects the
# module in every worker (6 s of each worker's start)
CASES = ({f"{m}_{f}_{a}": partial(_model_case, m, f, a) for m, f, a in MODELS}
         | {"resnet_QDQ_int8_per_tensor": partial(_model_case, "resnet", "QDQ", "int8", per_channel=False)}
         | {f"{m}_dynamic": partial(_dynamic_case, m) for m in ("mlp", "lenet")}
         | {f"{m}_QDQ_{a}_plain": partial(_plain_case, m, a) for m, a in PLAIN})


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cases = [make() for make in CASES.values()]
    assert [c.id for c in cases] == list(CASES)
    return shared_build(cases, tmp_path_factory.mktemp("quant"))


@pytest.mark.parametrize("case_id", list(CASES))
def test_quantized_model_matches_onnxruntime(results, case_id):
    case = results.cases[case_id]
    ours, refs = results.run(case_id), reference(case)
    share, worst = compare_integers(case, ours, refs)
    if case.id.endswith("_dynamic"):  # quantize_dynamic: run-time scales, integer matmuls, float outputs
        assert share == 1.0, f"{case_id}: {share:.4%} of the integers identical"
        for o, r in zip(ours, refs, strict=True):
            if r.dtype.kind == "f":
                assert np.allclose(o, r, rtol=1e-5, atol=1e-6), case_id
    elif case.id.endswith("_plain"):
        _outputs_match_as_users_run_it(case, ours, refs)
    elif float_reference(case):
        # onnxruntime sums these convs in float: its isolated 1 LSB steps from the exact integer sums
        # grow through later layers (by the layers' scale ratios: up to 9 LSB seen on MobileNetV2). The
        # integer kernels themselves are held exact by the QOperator twins of the same models.
        assert worst <= 16 and share >= 0.99, f"{case_id}: {share:.4%} identical, max {worst} LSB"
    else:
        assert worst <= 1 and share >= 0.999, f"{case_id}: {share:.4%} identical, max {worst} LSB"


def _outputs_match_as_users_run_it(case: Case, ours: list[np.ndarray], refs: list[np.ndarray]) -> None:
    """A QDQ model as users run it: where onnxruntime fuses every group into integer kernels the float
    outputs are identical; where it leaves some conv or add in float (int8 activations on x86), its
    own answer moves by an LSB with its graph optimisation level, and 1 LSB is allowed."""
    lsb = output_lsb(case.model)
    assert all(step is not None for step in lsb), f"{case.id}: an output not made by a DequantizeLinear"
    worst = max(float(np.abs(o.astype(np.float64) - r.astype(np.float64)).max() / step)
                for o, r, step in zip(ours, refs, lsb, strict=True))
    assert worst <= (1 if float_reference(case) else 0), f"{case.id}: outputs {worst:.3g} LSB off"


def test_int8_arena_is_a_quarter_of_fp32(results):
    """int8 activations take one byte each: the int8 LeNet's arena is about a quarter of the fp32 one."""
    from aot.compiler import Options, compile_model

    fp32 = compile_model(zoo.build("lenet"), Options(name="lenet_fp32")).metadata["memory"]["arena_bytes"]
    int8 = compile_model(quantized(zoo.build("lenet")), Options(name="lenet_int8")).metadata["memory"]["arena_bytes"]
    assert int8 <= 0.26 * fp32 + 1024, (int8, fp32)


# --- one QDQ op at a time: the rewrite's patterns and the opsets ---------------------------------

def _qdq_case(case_id: str, nodes: list, inputs: dict[str, tuple], inits: dict[str, np.ndarray], outputs: list[str],
              opset: int = 13, seed: int = 0) -> Case:
    rng = np.random.default_rng(seed)
    feeds = {k: rng.standard_normal(v).astype(np.float32) for k, v in inputs.items()}
    graph = helper.make_graph(
        nodes, case_id, [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 18 else 10
    return Case(case_id, expose_integers(model), feeds)


def _q(x: str, name: str, dtype: str, scale: float, zero: int) -> tuple[list, dict]:
    """QuantizeLinear + DequantizeLinear of activation x: (nodes, initializers); gives f'{name}_q' and name."""
    z = np.array(zero, dtype=dtype)
    inits = {f"{name}_s": np.array(scale, np.float32), f"{name}_z": z}
    return [helper.make_node("QuantizeLinear", [x, f"{name}_s", f"{name}_z"], [f"{name}_q"]),
            helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s", f"{name}_z"], [name])], inits


def _conv_case(case_id: str, dtype: str, per_channel: bool, act: str | None, group: int = 1, opset: int = 13,
               w_zero: int = 0, stride: int = 1, kernel: int = 3, hw: tuple[int, int] = (9, 10),
               dilation: int = 1, cout: int | None = None, cin: int = 8, w_gain: float = 1.0) -> Case:
    rng = np.random.default_rng(1)
    cout = cout or (8 if group > 1 else 6)
    pad = (kernel - 1) * dilation // 2
    nodes, inits = _q("x", "xd", dtype, 0.03, 3 if dtype == "int8" else 120)
    w = rng.integers(-100, 100, (cout, cin // group, kernel, kernel)).astype(np.int8)
    ws = (rng.random(cout) * 0.01 + 0.002) * w_gain if per_channel else np.array(0.006 * w_gain)
    ws = ws.astype(np.float32)  # w_gain < 1: deep patches whose sums stay inside the output's range
    wz = np.full(cout, w_zero, np.int8) if per_channel else np.array(w_zero, np.int8)
    b = rng.integers(-500, 500, cout).astype(np.int32)
    bz = np.zeros_like(b) if per_channel else np.array(0, np.int32)
    inits.update(w=w, ws=ws, wz=wz, b=b, bs=(np.float32(0.03) * ws).astype(np.float32), bz=bz)
    axis = {"axis": 0} if per_channel else {}
    nodes += [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], **axis),
              helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], **axis),
              helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[pad] * 4, group=group,
                               strides=[stride, stride], dilations=[dilation, dilation])]
    y = "c"
    if act == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        y = "r"
    elif act == "clip":
        inits.update(lo=np.array(0.0, np.float32), hi=np.array(0.5, np.float32))
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["r"]))
        y = "r"
    more, qi = _q(y, "yd", dtype, 0.05, -10 if dtype == "int8" else 100)
    inits.update(qi)
    return _qdq_case(case_id, nodes + more, {"x": (1, cin, *hw)}, inits, ["yd"], opset)


def _binary_case(op: str, dtype: str, shapes: tuple = ((1, 4, 5, 6), (1, 4, 1, 6)), tag: str = "") -> Case:
    na, ia = _q("a", "ad", dtype, 0.02, 5 if dtype == "int8" else 128)
    nb, ib = _q("b", "bd", dtype, 0.03, -7 if dtype == "int8" else 120)
    ny, iy = _q("y", "yd", dtype, 0.04, 2 if dtype == "int8" else 125)
    nodes = na + nb + [helper.make_node(op, ["ad", "bd"], ["y"])] + ny
    return _qdq_case(f"{op.lower()}_{dtype}{tag}", nodes, {"a": shapes[0], "b": shapes[1]}, {**ia, **ib, **iy}, ["yd"])


def _unary_case(op: str, dtype: str = "int8", attrs: dict | None = None, opset: int = 13,
                shape: tuple[int, ...] = (1, 3, 8, 8)) -> Case:
    nx, ix = _q("x", "xd", dtype, 0.05, 0 if dtype == "int8" else 128)
    ny, iy = _q("y", "yd", dtype, 0.01, -20 if dtype == "int8" else 100)
    nodes = nx + [helper.make_node(op, ["xd"], ["y"], **(attrs or {}))] + ny
    return _qdq_case(f"{op.lower()}_{dtype}", nodes, {"x": shape}, {**ix, **iy}, ["yd"], opset)


def _gemm_case(op: str, dtype: str, per_channel: bool, x_shape: tuple[int, ...] = (3, 16)) -> Case:
    """DQ(x) op DQ(w) -> Q: QGemm after the QDQ pass; an x of more than 2 dims (a transformer's [batch, tokens,
    features] MatMul, issue 69) its rows flattened."""
    rng = np.random.default_rng(2)
    nodes, inits = _q("x", "xd", dtype, 0.02, 4 if dtype == "int8" else 130)
    w = rng.integers(-120, 120, (16, 10)).astype(np.int8)
    ws = (rng.random(10) * 0.01 + 0.002).astype(np.float32) if per_channel else np.array(0.005, np.float32)
    wz = np.zeros(10, np.int8) if per_channel else np.array(0, np.int8)
    inits.update(w=w, ws=ws, wz=wz)
    axis = {"axis": 1} if per_channel else {}
    nodes.append(helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], **axis))
    nodes.append(helper.make_node(op, ["xd", "wd"], ["y"]))
    more, qi = _q("y", "yd", dtype, 0.05, 0)
    inits.update(qi)
    rank = f"_{len(x_shape)}d" if len(x_shape) != 2 else ""
    return _qdq_case(f"{op.lower()}_{dtype}_{'pc' if per_channel else 'pt'}{rank}", nodes + more,
                     {"x": x_shape}, inits, ["yd"])


def _concat_case(same: bool) -> Case:
    na, ia = _q("a", "ad", "int8", 0.02, 0)
    nb, ib = _q("b", "bd", "int8", 0.02 if same else 0.05, 0 if same else 9)
    ny, iy = _q("y", "yd", "int8", 0.02 if same else 0.04, 0 if same else -3)
    nodes = na + nb + [helper.make_node("Concat", ["ad", "bd"], ["y"], axis=1)] + ny
    return _qdq_case(f"concat_{'same' if same else 'requant'}", nodes, {"a": (1, 3, 4, 4), "b": (1, 5, 4, 4)},
                     {**ia, **ib, **iy}, ["yd"])


def _resize_case(dtype: str) -> Case:
    nx, ix = _q("x", "xd", dtype, 0.05, 3 if dtype == "int8" else 128)
    ny, iy = _q("y", "yd", dtype, 0.05, 3 if dtype == "int8" else 128)
    nodes = nx + [helper.make_node("Resize", ["xd", "", "scales"], ["y"], mode="nearest")] + ny
    inits = {**ix, **iy, "scales": np.array([1, 1, 2, 2], np.float32)}
    return _qdq_case(f"resize_nearest_{dtype}", nodes, {"x": (1, 3, 5, 4)}, inits, ["yd"])


def _opset_case(opset: int, dtype: str) -> Case:
    """Quantize / dequantize alone (a mixed graph's float boundary) at the opsets where they changed."""
    nx, ix = _q("x", "xd", dtype, 0.07, 1 if dtype == "int8" else 128)
    return _qdq_case(f"qdq_opset{opset}_{dtype}", nx + [helper.make_node("Relu", ["xd"], ["y"])], {"x": (2, 3, 5)},
                     ix, ["y"], opset)


# QLinearAdd constants (scale a, zero a, scale b, zero b, scale y, zero y) where onnxruntime's rounding
# shows: a bias summed without gcc's fma, or a scalar's product added to it without one, moves an output
# by one LSB (found by a search against onnxruntime 1.32; test_qadd_rounding_cases_are_sensitive).
QADD_HARD = {
    "uint8": {"both": (0.09817003458738327, 124, 0.09635743498802185, 75, 0.07385504245758057, 138),
              "scalar_b": (0.08197606354951859, 161, 0.0374704971909523, 223, 0.056648582220077515, 50),
              "scalar_a": (0.033803507685661316, 201, 0.048082299530506134, 98, 0.01773396134376526, 103)},
    "int8": {"both": (0.015424792654812336, -83, 0.024307947605848312, -48, 0.03196161612868309, 54),
             "scalar_b": (0.033833347260951996, -124, 0.09990745782852173, -69, 0.029903946444392204, 89),
             "scalar_a": (0.09662383049726486, -112, 0.0663435310125351, -106, 0.09495612978935242, -39)},
}


def _qadd_operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of 8-bit values: x [1, 256, 16, 16] holds all values in each channel, s [1, 256, 1, 1]
    one value a channel."""
    lo, hi = INT_RANGE[dtype]
    vals = np.arange(lo, hi + 1).astype(dtype)
    return np.tile(vals, 256).reshape(1, 256, 16, 16), vals.reshape(1, 256, 1, 1)


def _qadd_rounding_case(dtype: str) -> Case:
    """QOperator QLinearAdds over every pair of values, in onnxruntime's three broadcast forms: both
    operands full (MLAS's vector loop), b one value a run, a one value a run (onnxruntime swaps a and b)."""
    x, s = _qadd_operands(dtype)
    elem = TensorProto.UINT8 if dtype == "uint8" else TensorProto.INT8
    operands = {"both": ("x", "s_full"), "scalar_b": ("x", "s"), "scalar_a": ("s", "x")}
    nodes, inits = [], []
    for form, (a, b) in operands.items():
        sa, za, sb, zb, sy, zy = QADD_HARD[dtype][form]
        names = [f"{form}_{k}" for k in ("sa", "za", "sb", "zb", "sy", "zy")]
        for n, v in zip(names, (sa, za, sb, zb, sy, zy), strict=True):
            inits.append(helper.make_tensor(n, TensorProto.FLOAT if n.endswith(("sa", "sb", "sy")) else elem, [], [v]))
        nodes.append(helper.make_node("QLinearAdd", [a, names[0], names[1], b, *names[2:]], [f"y_{form}"],
                                      domain="com.microsoft"))
    graph = helper.make_graph(
        nodes, f"qadd_rounding_{dtype}",
        [helper.make_tensor_value_info(n, elem, v.shape) for n, v in (("x", x), ("s", s), ("s_full", x))],
        [helper.make_tensor_value_info(f"y_{f}", elem, None) for f in operands], inits)
    s_full = np.ascontiguousarray(np.broadcast_to(s, x.shape))
    return Case(f"add_rounding_{dtype}", _contrib_model(graph), {"x": x, "s": s, "s_full": s_full})


def _contrib_model(graph: onnx.GraphProto) -> onnx.ModelProto:
    """A QOperator model: opset 13 and onnxruntime's com.microsoft ops."""
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _qavgpool_case(case_id: str, dtype: str, shape: tuple[int, ...], **attrs) -> Case:
    """com.microsoft QLinearAveragePool on random bytes: onnxruntime's float window sums, or its
    integer global pool when the window is the whole unpadded plane."""
    elem = TensorProto.UINT8 if dtype == "uint8" else TensorProto.INT8
    zeros = (7, 131) if dtype == "uint8" else (-9, 3)
    inits = [helper.make_tensor("xs", TensorProto.FLOAT, [], [0.0371]), helper.make_tensor("xz", elem, [], [zeros[0]]),
             helper.make_tensor("ys", TensorProto.FLOAT, [], [0.0193]), helper.make_tensor("yz", elem, [], [zeros[1]])]
    node = helper.make_node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", **attrs)
    graph = helper.make_graph([node], case_id, [helper.make_tensor_value_info("x", elem, shape)],
                              [helper.make_tensor_value_info("y", elem, None)], inits)
    lo, hi = INT_RANGE[dtype]
    x = np.random.default_rng(len(case_id)).integers(lo, hi + 1, shape).astype(dtype)
    return Case(case_id, _contrib_model(graph), {"x": x})


def _channels_last_input_case() -> Case:
    """A float NHWC input transposed, then quantized (tf2onnx's Keras exports quantized by quantize_static)."""
    nq, iq = _q("t", "td", "int8", 0.02, -3)
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]), *nq,
             helper.make_node("Relu", ["td"], ["r"]), *_q("r", "yd", "int8", 0.02, -128)[0]]
    return _qdq_case("quantize_after_transpose", nodes, {"x": (1, 6, 5, 3)},
                     {**iq, **_q("r", "yd", "int8", 0.02, -128)[1]}, ["yd"])


QAVGPOOL_CASES = [
    _qavgpool_case("qavgpool_pads_uint8", "uint8", (1, 3, 9, 11), kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    _qavgpool_case("qavgpool_include_pad_int8", "int8", (1, 2, 8, 8), kernel_shape=[3, 2], strides=[2, 2],
                   pads=[1, 0, 1, 1], count_include_pad=1),
    _qavgpool_case("qavgpool_ceil_int8", "int8", (2, 2, 7, 10), kernel_shape=[4, 3], strides=[3, 3], ceil_mode=1),
    _qavgpool_case("qavgpool_kws_uint8", "uint8", (1, 4, 25, 5), kernel_shape=[24, 5], strides=[24, 5]),
    _qavgpool_case("qavgpool_1d_int8", "int8", (1, 3, 20), kernel_shape=[5], strides=[2], pads=[2, 2]),
    _qavgpool_case("qavgpool_whole_plane_uint8", "uint8", (1, 5, 6, 6), kernel_shape=[6, 6]),
]


ROWS_CASES = [
    _conv_case("conv_rows_int8", "int8", True, "relu", hw=(12, 18), cout=32),
    _conv_case("conv_rows_k5_uint8", "uint8", True, None, kernel=5, hw=(7, 21), cin=12, cout=16),
    _conv_case("conv_rows_ranges_int8", "int8", False, "clip", hw=(40, 100), cin=64, cout=16, w_gain=0.1),
]


OP_CASES = [
    *[_conv_case(f"conv_{d}_{'pc' if pc else 'pt'}_{act or 'none'}", d, pc, act)
      for d in ("int8", "uint8") for pc in (True, False) for act in (None, "relu", "clip")],
    _conv_case("conv_depthwise_int8", "int8", True, "relu", group=8),
    _conv_case("conv_stride2_int8", "int8", True, None, stride=2),
    _conv_case("conv_asymmetric_weights", "int8", False, None, w_zero=5),
    _conv_case("conv_opset19", "int8", True, "relu", opset=19),
    _conv_case("conv_opset21", "uint8", True, None, opset=21),
    # the host's vector paths (quant_avx512vnni.h): pointwise convs read from the input planes (a plane of
    # whole lanes and more, one smaller than a lane), rows gathered at stride 2 past one lane,
    # depthwise convs at stride 2 past one lane, with 5 x 5 taps, and dilated (the plain path)
    _conv_case("conv_pointwise_int8", "int8", True, "relu", kernel=1),
    _conv_case("conv_pointwise_small_uint8", "uint8", False, None, kernel=1, hw=(3, 3), w_zero=3),
    _conv_case("conv_stride2_wide_uint8", "uint8", True, None, stride=2, hw=(5, 41)),
    _conv_case("conv_depthwise_stride2_wide", "int8", True, None, group=8, stride=2, hw=(6, 40)),
    _conv_case("conv_depthwise_k5_narrow", "uint8", True, "relu", group=8, kernel=5, hw=(25, 5)),
    _conv_case("conv_depthwise_dilated", "int8", False, None, group=8, dilation=2),
    # the dense windows (quant_avx512vnni.h): 16 and 8 output channels a register block, a plane smaller than
    # a window (its last channels' windows loaded masked) with a block of 4 lanes (256-bit vectors),
    # 5 x 5 taps with weight zero points (the patch sums)
    _conv_case("conv_dense_small_plane", "int8", True, "relu", hw=(6, 6), cout=27),
    _conv_case("conv_dense_k5_uint8", "uint8", False, None, kernel=5, w_zero=4, cout=20),
    # whole blocks of 16 output channels: the weights packed as the dense path reads them (the other
    # paths read them through aotc_qconv_wrow)
    _conv_case("conv_packed_int8", "int8", True, "relu", cout=32),
    _conv_case("conv_packed_k5_uint8", "uint8", False, None, kernel=5, w_zero=4, cout=16, stride=2),
    # 7 x 7 planes: 3 blocks of 16 lanes and one of 1, taken with the channels in the lanes
    _conv_case("conv_narrow_uint8", "uint8", False, None, hw=(7, 7), w_zero=3, cout=27),
    _conv_case("conv_narrow_packed", "int8", True, "relu", hw=(7, 7), cout=32),
    # deep patches whose output channels take the dense path in more than one pass (so more than one
    # register block of 16 channels, and packed): each chunk of blocks' quad rows made once into the
    # scratch and read back by every block of channels (x86_dense_quads): 3 blocks of 16 lanes and one
    # of 1 (the narrow path), and one of 16 and one of 8 lanes (256-bit vectors) with weight zero
    # points (the patch sums)
    _conv_case("conv_cached_narrow_int8", "int8", True, "relu", hw=(7, 7), cin=320, cout=32, w_gain=0.1),
    _conv_case("conv_cached_uint8", "uint8", True, None, hw=(4, 6), cin=256, cout=48, w_zero=3, w_gain=0.1),
    # stride 1, whole quads of input channels, 16 output channels a block, rows of 16 outputs and more: the weights
    # in qconv_rows's order (w_packed 2: quads of 4 input channels a tap; without VNNI, qconv_rows_plain), a grid
    # row of 19 words (a 16-lane block across two output rows), 5 x 5 taps in a 21-wide uint8 plane, and a plane
    # whose rows take more than one range of the scratch, with a clamp narrower than int8 (the bytes' clamp)
    *ROWS_CASES,
    # with no scratch to spare (aotc's default arena): the smallest patch blocks
    replace(_conv_case("conv_tight_int8", "int8", True, "relu"), scratch_floor=0),
    replace(_conv_case("conv_depthwise_tight", "uint8", False, None, group=8, stride=2), scratch_floor=0),
    # planes too small to spare 16 patch columns: no scratch (tile 0); with VNNI the dense path (3 x 3),
    # a stack block (1 x 1, with weight zero points at stride 2) or, past 64 KiB of patch, the plain path
    *[replace(c, scratch_floor=0) for c in (
        _conv_case("conv_noscratch_k3", "int8", False, "relu", hw=(3, 3), w_zero=2),
        _conv_case("conv_noscratch_packed", "uint8", True, None, hw=(3, 3), w_zero=2, cout=16),
        _conv_case("conv_noscratch_pointwise", "uint8", True, None, kernel=1, cin=128, hw=(1, 2), cout=20),
        _conv_case("conv_noscratch_stride2", "int8", False, None, kernel=1, cin=128, hw=(1, 3), stride=2, w_zero=3),
        _conv_case("conv_noscratch_deep", "uint8", True, "relu", kernel=1, cin=4112, hw=(1, 2)))],
    *[_binary_case(op, d) for op in ("Add", "Mul") for d in ("int8", "uint8")],
    # runs of whole lanes and a tail, both operands contiguous (quant_avx512vnni.h's QLinearAdd)
    *[_binary_case("Add", d, ((1, 3, 5, 21), (1, 3, 5, 21)), "_runs") for d in ("int8", "uint8")],
    *[_qadd_rounding_case(d) for d in ("int8", "uint8")],
    *[_unary_case(op) for op in ("Sigmoid", "Tanh", "HardSigmoid")],
    _unary_case("HardSwish", opset=14), _unary_case("LeakyRelu", "uint8", {"alpha": 0.1}),
    _unary_case("GlobalAveragePool"), _unary_case("GlobalAveragePool", "uint8"),
    _unary_case("Softmax"), _unary_case("Softmax", "uint8"),
    _unary_case("MaxPool", attrs={"kernel_shape": [2, 2], "strides": [2, 2]}),
    replace(_unary_case("MaxPool", "uint8", attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
            id="maxpool_ceil_uint8"),
    replace(_unary_case("MaxPool", attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}), id="maxpool_pads_int8"),
    # rows past 16 bytes (with SSE2, 16 at a time in registers, the last 16 overlapping)
    *[replace(_unary_case("MaxPool", d, attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, shape=(1, 2, 5, 28)),
              id=f"maxpool_rows_{d}") for d in ("int8", "uint8")],
    # ResNet's stem pool, 3 x 3 at stride 2: with SSE2, the even and odd bytes of the rows split (pool_int8.c)
    *[replace(_unary_case("MaxPool", d, attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
                          shape=(1, 2, 7, 41)), id=f"maxpool_s2_rows_{d}") for d in ("int8", "uint8")],
    _unary_case("AveragePool", attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    *QAVGPOOL_CASES,
    _channels_last_input_case(),
    *[_gemm_case(op, d, pc) for op in ("MatMul", "Gemm") for d in ("int8", "uint8") for pc in (True, False)],
    _gemm_case("MatMul", "int8", True, (2, 3, 16)), _gemm_case("MatMul", "uint8", False, (2, 2, 3, 16)),
    _concat_case(True), _concat_case(False), _resize_case("int8"), _resize_case("uint8"),
    *[_opset_case(o, d) for o in (10, 13, 19, 21) for d in ("int8", "uint8")],
]


@pytest.fixture(scope="module")
def op_results(tmp_path_factory):
    return shared_build(OP_CASES, tmp_path_factory.mktemp("quant_ops"))


# the conv, add and maxpool cases again built as bundles build on the host (-march=native): with
# AVX-512 VNNI, the vector paths of runtime_c/kernels/quant/quant_avx512vnni.h
NATIVE_CASES = [c for c in OP_CASES if c.id.startswith(("conv_", "add_", "maxpool"))]


@pytest.fixture(scope="module")
def native_results(tmp_path_factory):
    return shared_build(NATIVE_CASES, tmp_path_factory.mktemp("quant_native"), extra_flags=("-march=native",))


def _cpu_has(flag: str) -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return flag in f.read().split()
    except OSError:
        return False


@pytest.fixture(scope="module")
def vnni_only_results(tmp_path_factory):
    """The conv cases built for AVX-512 VNNI without VBMI (Cascade Lake): no dense path, so packed
    weights go through the VNNI patch path."""
    if not _cpu_has("avx512_vnni"):
        pytest.skip("this CPU has no AVX-512 VNNI")
    cases = [c for c in NATIVE_CASES if c.id.startswith("conv_")]
    return shared_build(cases, tmp_path_factory.mktemp("quant_vnni"), extra_flags=("-march=cascadelake",))


@pytest.mark.slow
@pytest.mark.parametrize("case_id", [c.id for c in NATIVE_CASES if c.id.startswith("conv_")])
def test_quantized_conv_vnni_without_vbmi(vnni_only_results, op_results, case_id):
    _check_op(vnni_only_results, case_id)
    for o, p in zip(vnni_only_results.run(case_id), op_results.run(case_id), strict=True):
        np.testing.assert_array_equal(o, p, err_msg=case_id)


@pytest.mark.parametrize("case_id", [c.id for c in OP_CASES])
def test_quantized_op_matches_onnxruntime(op_results, case_id):
    _check_op(op_results, case_id)


@pytest.mark.parametrize("case_id", [c.id for c in NATIVE_CASES])
def test_quantized_conv_native_matches_onnxruntime(native_results, op_results, case_id):
    """The vector paths are bit-exact with the plain ones, and so held to onnxruntime alike."""
    _check_op(native_results, case_id)
    for o, p in zip(native_results.run(case_id), op_results.run(case_id), strict=True):
        np.testing.assert_array_equal(o, p, err_msg=case_id)


def _dense_passes(cin: int, cout: int, taps: int = 9) -> int:
    """Passes over the output channels quant_avx512vnni.h's qconv_dense takes with packed weights (its room for
    a pass's weights beside AOTC_QX86_DKEEP kept blocks, in whole blocks of 16 channels)."""
    kq = -(-cin * taps // 4)
    room = 98304 - 8 * (192 + min(taps // math.gcd(taps, 4), kq) * 128)
    return -(-cout // (max(room // (kq * 64), 1) * 16))


@pytest.mark.parametrize("case_id", ["conv_cached_narrow_int8", "conv_cached_uint8"])
def test_cached_quad_rows_cases_take_that_path(case_id):
    """The conv_cached_* cases reach the dense path's quad rows made once (more than one pass, packed
    weights, and a patch block of scratch: Options' default gives any), so their native runs test it."""
    case = next(c for c in OP_CASES if c.id == case_id)
    w = next(i for i in case.model.graph.initializer if i.name == "w")
    cout, cin = w.dims[0], w.dims[1]
    assert cout % 16 == 0 and case.scratch_floor > 0
    assert _dense_passes(cin, cout) > 1, case_id


def _machine_level() -> str | None:
    from aot.targets import get_target, host_isa

    return host_isa(None, get_target("host"))


@pytest.mark.parametrize("case_id", [c.id for c in ROWS_CASES])
def test_rows_cases_take_that_path(native_results, case_id):
    """The conv_rows_* cases have their weights in qconv_rows's order (w_packed 2), and the scratch the plan gives
    conv_rows_ranges_int8 holds fewer input rows than its plane (more than one range, aotc_qx86_rows_fit). The
    cases are planned for this machine's level: only at avx512vnni is qconv_rows planned."""
    if _machine_level() != "avx512vnni":
        pytest.skip("this machine's host ISA level is not avx512vnni: qconv_rows is not planned")
    src = next((native_results.dirs[case_id] / "src").glob("*.c")).read_text()
    assert ".w_packed = 2," in src, case_id
    if case_id == "conv_rows_ranges_int8":
        tile = int(re.search(r"aotc_qconv_patches_i8\(&\w+, (\d+),", src).group(1))
        work = int(re.search(r"\.work = (\d+),", src).group(1))
        avail = -(-tile // 16) * 16 * 64 * 9 + work  # the patch block (kp = 64 x 9) and the work
        assert 0 < (avail - 64 - 512) // (64 * 101) - 3 < 40, avail


@pytest.mark.parametrize("level,rows", [("avx512vnni", True), ("avx512f", False), ("generic", False)])
def test_rows_planned_only_where_the_build_has_vnni(level, rows):
    """qconv_rows (w_packed 2) is planned at --host-isa avx512vnni only: an avx512f build may lack VNNI (Skylake-X),
    where its weights' gathering path made ResNet-18 QDQ 26 -> 33 ms; there the conv keeps the dense path's packed
    weights (w_packed 1), as before the level existed. The residual block's fused conv alike."""
    from aot.compiler import Options, compile_model

    residual = Case("residual_rows", quantized(_residual_block("rows"), "QDQ", activations="int8"), {})
    for case in [*ROWS_CASES, residual]:
        b = compile_model(case.model, Options(name="m", host_isa=level, scratch_floor=case.scratch_floor))
        src = "".join(v for k, v in b.files.items() if k.startswith("src/m") and k.endswith(".c"))
        assert src, sorted(b.files)
        assert (".w_packed = 2," in src) == rows, (level, case.id)
        assert ".w_packed = 1," in src or level != "avx512f", case.id  # the dense path's order, as on main
        assert b.metadata["host_isa"] == level
    assert "aotc_qconv_patches_add_i8(" in src  # the residual block's ADD fused into its conv


def _check_op(results, case_id: str) -> None:
    case = results.cases[case_id]
    ours, refs = results.run(case_id), reference(case)
    share, worst = compare_integers(case, ours, refs)
    assert worst <= 1 and share >= 0.99, f"{case_id}: {share:.4%} identical, max {worst} LSB"
    for o, r in zip(ours, refs, strict=True):
        if r.dtype.kind == "f":
            assert np.allclose(o, r, atol=0.0501, rtol=0), case_id  # 1 LSB at the largest scale used here


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qlinear_add_rounds_as_onnxruntime(op_results, native_results, dtype):
    """QLinearAdd exactly as onnxruntime's x86 kernel: every pair of values, each broadcast form, with
    constants where a differently rounded bias moves outputs (plain C and the AVX-512 build)."""
    refs = reference(op_results.cases[f"add_rounding_{dtype}"])
    for results in (op_results, native_results):
        for o, r in zip(results.run(f"add_rounding_{dtype}"), refs, strict=True):
            np.testing.assert_array_equal(o, r)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qadd_rounding_cases_are_sensitive(dtype):
    """The constants of the rounding test catch what they are there for: with the bias summed as
    y_zero - (a_mult a_zero + b_mult b_zero) and the scalar's product added unfused, each broadcast
    form of the test gives another output somewhere, while qadd_constants' rounding matches itself."""
    x, s = _qadd_operands(dtype)
    lo, hi = INT_RANGE[dtype]
    xf, sf = x.astype(np.float32), np.broadcast_to(s, x.shape).astype(np.float32)
    for form, (sa, za, sb, zb, sy, zy) in QADD_HARD[dtype].items():
        am, bm, bias = qadd_constants(sa, za, sb, zb, sy, zy, scalar_a=form == "scalar_a")
        naive = np.float32(zy) - (am * np.float32(za) + bm * np.float32(zb))
        if form == "scalar_a":  # a = s, b = x
            new, old = fma32(xf, bm, fma32(sf, am, bias)), fma32(xf, bm, naive + sf * am)
        elif form == "scalar_b":
            new, old = fma32(xf, am, fma32(sf, bm, bias)), fma32(xf, am, naive + sf * bm)
        else:
            new, old = fma32(xf, am, fma32(sf, bm, bias)), fma32(xf, am, fma32(sf, bm, naive))
        assert (np.clip(np.rint(new), lo, hi) != np.clip(np.rint(old), lo, hi)).any(), (dtype, form)


@pytest.mark.parametrize("case_id", [c.id for c in QAVGPOOL_CASES])
def test_qlinear_average_pool_is_exact(op_results, case_id):
    """QLinearAveragePool bit for bit as onnxruntime computes it (float sums in window order, or its
    integer global pool for a whole-plane window)."""
    for o, r in zip(op_results.run(case_id), reference(op_results.cases[case_id]), strict=True):
        np.testing.assert_array_equal(o, r)


def test_quantize_moves_above_the_transpose_of_a_float_input():
    """The transpose moves int8 bytes, not floats: the float copy it made was the arena's peak."""
    from aot.compiler import lower
    g = lower(_channels_last_input_case().model)
    transpose = next(n for n in g.nodes if n.op == "Transpose")
    assert g.tensors[transpose.inputs[0]].dtype == "int8"
    assert g.producers()[transpose.inputs[0]].op == "QuantizeLinear"


# --- a conv and its residual ADD as one node (aot/passes/fuse_residual.py) -------------------------

# (format, activations, residual first): both operand orders (onnxruntime's ADD is not symmetric in its
# rounding), int8 and uint8
RESIDUAL = [("QDQ", "int8", False), ("QDQ", "int8", True), ("QOperator", "uint8", False)]


# a block deep enough that the dense VNNI path takes its output channels in passes (208 channels, 7 x 7:
# _dense_passes), so the residual ADD goes into the stores of its cached quad rows' path; and one whose
# fused conv's input is no Relu's (its zero point not the patches' offset: the bias folds it in)
RESIDUAL_WIDE = 208
RESIDUAL_MORE = [("QOperator", "uint8", "wide"), ("QDQ", "int8", "norelu"), ("QDQ", "int8", "rows")]


def _residual_block(first: bool | str) -> onnx.ModelProto:
    if first == "wide":
        return residual_block(hw=7, channels=RESIDUAL_WIDE)
    if first == "rows":  # qconv_rows (rows of 20, 16 channels) with the ADD in its stores
        return residual_block(hw=20, channels=16)
    return residual_block(inner_relu=False) if first == "norelu" else residual_block(first)


def _residual_id(fmt: str, act: str, first: bool | str) -> str:
    return f"residual_{fmt}_{act}{'_' + first if isinstance(first, str) else '_first' if first else ''}"


def _residual_cases() -> list[Case]:
    out = []
    for fmt, act, first in [*RESIDUAL, *RESIDUAL_MORE]:
        fp32 = _residual_block(first)
        model = quantized(fp32, fmt, activations=act)
        tag = _residual_id(fmt, act, first)
        feeds = zoo.random_inputs(fp32, seed=5)
        out += [Case(tag, model, feeds), Case(f"{tag}_unfused", expose_integers(model), feeds)]
    return out


@pytest.fixture(scope="module")
def residual_results(tmp_path_factory):
    return {flags: shared_build(_residual_cases(), tmp_path_factory.mktemp("quant_residual"), extra_flags=flags)
            for flags in ((), ("-march=native",))}


@pytest.mark.parametrize("flags", [(), ("-march=native",)], ids=["plain", "native"])
@pytest.mark.parametrize("fmt,activations,first", [*RESIDUAL, *RESIDUAL_MORE],
                         ids=[f"{f}-{a}{'-first' if r else ''}" for f, a, r in RESIDUAL]
                         + [f"{f}-{a}-{r}" for f, a, r in RESIDUAL_MORE])
def test_fused_residual_add_is_the_unfused_pair_bit_for_bit(residual_results, flags, fmt, activations, first):
    """QLinearConv + QLinearAdd as one QLinearConvAdd (on hosts: the conv into scratch, then the ADD's
    kernel) gives the separate ops' integers exactly (the same model with every activation a graph
    output, so nothing fuses), and so onnxruntime's."""
    results = residual_results[flags]
    case_id = _residual_id(fmt, activations, first)
    assert first != "wide" or _dense_passes(RESIDUAL_WIDE, RESIDUAL_WIDE) > 1
    ops = [n["op"] for n in results.meta[case_id]["nodes"]]
    assert "QLinearConvAdd" in ops and "QLinearAdd" not in ops, ops
    assert "QLinearConvAdd" not in [n["op"] for n in results.meta[f"{case_id}_unfused"]["nodes"]]
    if first == "rows" and flags:  # the ADD in qconv_rows's stores
        assert ".w_packed = 2," in next((results.dirs[case_id] / "src").glob("*.c")).read_text()
    fused, unfused = results.run(case_id), results.run(f"{case_id}_unfused")
    for o, u in zip(fused, unfused, strict=False):  # y: the first output of both
        np.testing.assert_array_equal(o, u, err_msg=case_id)
    share, worst = compare_integers(results.cases[case_id], fused, reference(results.cases[case_id]))
    assert worst <= 1 and share >= 0.999, f"{case_id}: {share:.4%} identical, max {worst} LSB"


# --- --quantized-io (issues 27 and 14): the integers of the boundary's Q and DQ as the bundle's I/O ----

# (zoo model, format, activations): both quantizer forms, int8 and uint8; dscnn_kws and resnet end in a
# Softmax / Gemm whose DQ makes the output, lenet's QOperator graph in a QGemm's DQ
QIO = [("dscnn_kws", "QDQ", "int8"), ("resnet", "QOperator", "uint8"), ("lenet", "QOperator", "uint8"),
       ("mobilenetv2", "QDQ", "uint8")]


def _qio_case(name: str, fmt: str, activations: str) -> Case:
    fp32 = zoo.build(name)
    model = quantized(fp32, fmt, activations=activations)
    return Case(f"qio_{name}_{fmt}_{activations}", model, quantized_feeds(model, zoo.random_inputs(fp32, seed=7)),
                quantized_io=True)


def _qio_mixed_case() -> Case:
    """x is read by its QuantizeLinear and by a float Add, and the output is the Add's: both stay float."""
    nq, iq = _q("x", "xd", "int8", 0.05, 3)
    nodes = [*nq, helper.make_node("Add", ["xd", "x"], ["y"])]
    case = _qdq_case("qio_mixed", nodes, {"x": (1, 4, 5)}, iq, ["y"])
    del case.model.graph.output[1:]  # the integers expose_integers added
    return case


@pytest.fixture(scope="module")
def qio_results(tmp_path_factory):
    mixed = replace(_qio_mixed_case(), quantized_io=True)
    return shared_build([_qio_case(*m) for m in QIO] + [mixed, _channels_last_input_qio_case()],
                        tmp_path_factory.mktemp("quant_qio"))


@pytest.mark.parametrize("name,fmt,activations", QIO, ids=[f"{m}-{f}-{a}" for m, f, a in QIO])
def test_quantized_io_gives_onnxruntimes_integers(qio_results, name, fmt, activations):
    """The bundle takes the integers of the input's QuantizeLinear and gives those its output's
    DequantizeLinear reads: the Q and the DQ are gone, scale and zero point are in metadata.json, and
    the integers are onnxruntime's (fed the dequantized inputs, the DQ's input exposed)."""
    case_id = f"qio_{name}_{fmt}_{activations}"
    case, meta = qio_results.cases[case_id], qio_results.meta[case_id]
    ops = [n["op"] for n in meta["nodes"]]
    assert "QuantizeLinear" not in ops and "DequantizeLinear" not in ops, ops
    assert meta["quantized_io"] == {"inputs": [i.name for i in case.model.graph.input],
                                    "outputs": [o.name for o in case.model.graph.output], "notes": []}
    for spec in (*meta["inputs"], *meta["outputs"]):
        assert spec["dtype"] == activations and spec["scale"] > 0 and isinstance(spec["zero_point"], int), spec
    ours, refs = qio_results.run(case_id), integer_reference(case.model, case.feeds)
    share, worst = compare_integers(case, ours, refs)
    # where onnxruntime runs a quantized conv in float (QDQ int8 on x86), 1 LSB as test_quant's _plain cases
    assert worst <= (1 if float_reference(case) else 0), f"{case_id}: {share:.4%} identical, max {worst} LSB"


def test_quantized_io_keeps_float_what_it_cannot_make_integer(qio_results):
    """...and says why, in a note per input and output."""
    meta = qio_results.meta["qio_mixed"]
    assert [s["dtype"] for s in (*meta["inputs"], *meta["outputs"])] == ["float32", "float32"]
    assert all("scale" not in s for s in (*meta["inputs"], *meta["outputs"]))
    assert meta["quantized_io"]["inputs"] == meta["quantized_io"]["outputs"] == []
    notes = meta["quantized_io"]["notes"]
    assert notes[0].startswith("input 'x' stays float32: node") and notes[0].endswith("(Add) reads it"), notes
    assert notes[1].startswith("output 'y' stays float32: node") and notes[1].endswith("(Add) makes it"), notes
    qio_results.check("qio_mixed")


def _channels_last_input_qio_case() -> Case:
    """_channels_last_input_case as users have it: its one output, yd, a DequantizeLinear's."""
    case = _channels_last_input_case()
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    del model.graph.output[1:]  # the integers expose_integers added
    x = case.feeds["x"]
    return replace(case, id="qio_quantize_after_transpose", model=model, quantized_io=True,
                   feeds={"x": np.clip(np.rint(x / np.float32(0.02)) - 3, -128, 127).astype(np.int8)})


def test_quantized_io_takes_the_input_of_a_quantize_hoisted_above_its_transpose(qio_results):
    """tf2onnx's NHWC input -> Transpose -> QuantizeLinear: the QDQ pass hoists the Q to the input, which
    then takes its int8 in NHWC."""
    case_id = "qio_quantize_after_transpose"
    case, meta = qio_results.cases[case_id], qio_results.meta[case_id]
    assert meta["inputs"][0]["shape"] == [1, 6, 5, 3] and meta["inputs"][0]["dtype"] == "int8"
    assert (meta["inputs"][0]["scale"], meta["inputs"][0]["zero_point"]) == (float(np.float32(0.02)), -3)
    assert meta["outputs"][0]["dtype"] == "int8" and meta["quantized_io"]["notes"] == []
    x = case.feeds["x"]
    ref = reference(replace(case, feeds={"x": (x.astype(np.float32) + 3) * np.float32(0.02)}))[0]
    expected = np.clip(np.rint(ref / np.float32(0.02)) - 128, -128, 127).astype(np.int8)  # yd's DQ, undone
    np.testing.assert_array_equal(qio_results.run(case_id)[0], expected)


def test_quantized_io_is_off_by_default(results):
    meta = results.meta["dscnn_kws_QDQ_int8_plain"]
    assert "quantized_io" not in meta and meta["inputs"][0]["dtype"] == "float32"
