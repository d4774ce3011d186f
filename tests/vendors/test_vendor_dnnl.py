"""The dnnl vendor (oneDNN 3.x): every op and pattern against onnxruntime, zoo models through the
CLI with --vendor dnnl, region counts of conv nets, refusals that fall back to host C.

Needs oneDNN (pip install aotc[dnnl]): skipped without it on a developer machine, failed in CI.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import pytest
import zoo
from conftest import tiered
from modelcheck import aotc, build_bundle, run_bundle
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, assert_close, model_case, op_case, shared_build
from swishcheck import check_swish

from aot.build import cmake_exe
from aot.compiler import Options, partition_model
from aot.vendor.dnnl import VENDOR as DNNL
from aot.vendor.dnnl.patterns import PATTERNS
from aot.vendor.dnnl.probe import find_onednn

ONEDNN = find_onednn()
# Single-op cases keep their region even when it holds only an elementwise op or a view.
DNNL_EVERY_REGION = dataclasses.replace(DNNL, keep_region=None)


def require_onednn() -> None:
    """Skip without oneDNN on a developer machine; fail in CI, which installs it (.ci/run)."""
    if ONEDNN is not None:
        return
    message = "oneDNN 3.x not installed (pip install -e '.[dnnl]')"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


rng = np.random.default_rng(7)


def w(*shape: int, scale: float = 0.3) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def graph_case(case_id: str, nodes: list, inputs: dict[str, tuple], outputs: list[str], inits: dict[str, np.ndarray],
               opset: int = 13) -> Case:
    feeds = {k: np.random.default_rng(len(case_id)).standard_normal(s).astype(np.float32) for k, s in inputs.items()}
    g = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info(k, TensorProto.FLOAT, s)
                                           for k, s in inputs.items()],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return model_case(case_id, g, feeds, opset)


def node(op: str, ins: list[str], out: str, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, ins, [out], name=f"{op.lower()}_{out}", **attrs)


def conv_case(case_id: str, x: tuple, cout: int, k: int, bias: bool = True, **attrs) -> Case:
    group = attrs.get("group", 1)
    consts = {"W": w(cout, x[1] // group, *([k] * (len(x) - 2)))}
    if bias:
        consts["B"] = w(cout)
    return op_case(case_id, "Conv", {"x": x}, consts=consts, attrs=attrs)


# DS-CNN's stem: a convolution on 1 channel (oneDNN picks a blocked layout for its result) before a
# depthwise one (nhwc on AVX-512): the probe sees the reorder between them and asks the stem for
# that layout (its 1-channel source is the same bytes in either layout: no reorder moves to entry)
STEM = graph_case("layout_hint_stem", [node("Conv", ["x", "W0", "B0"], "c0", strides=[2, 2], pads=[4, 1, 5, 2]),
                                       node("Relu", ["c0"], "r0"),
                                       node("Conv", ["r0", "W1", "B1"], "c1", group=64, pads=[1, 1, 1, 1]),
                                       node("Relu", ["c1"], "r1"), node("Conv", ["r1", "W2"], "y")],
                  {"x": (1, 1, 49, 10)}, ["y"],
                  {"W0": w(64, 1, 10, 4), "B0": w(64), "W1": w(64, 1, 3, 3), "B1": w(64), "W2": w(64, 64, 1, 1)})


def _cases() -> list[Case]:
    c: list[Case] = [
        # Conv: layouts (channels not a multiple of 8), strides, pads, dilation, groups, ranks
        conv_case("conv3x3", (1, 3, 12, 12), 8, 3, pads=[1, 1, 1, 1]),
        conv_case("conv_nobias_c5", (1, 5, 9, 9), 6, 3),
        conv_case("conv_stride2_asym", (2, 4, 11, 10), 16, 3, strides=[2, 2], pads=[0, 1, 2, 1]),
        conv_case("conv_dilated", (1, 4, 13, 13), 8, 3, dilations=[2, 2], pads=[2, 2, 2, 2]),
        conv_case("conv_grouped", (1, 8, 8, 8), 12, 3, group=4, pads=[1, 1, 1, 1]),
        conv_case("conv_depthwise", (1, 16, 10, 10), 16, 3, group=16, pads=[1, 1, 1, 1], strides=[2, 2]),
        conv_case("conv_1x1", (1, 24, 7, 7), 40, 1),
        conv_case("conv1d", (1, 4, 20), 6, 5, pads=[2, 2]),
        conv_case("conv3d", (1, 2, 6, 6, 6), 4, 3, pads=[1, 1, 1, 1, 1, 1]),
        conv_case("conv_same_upper", (1, 3, 9, 9), 8, 4, auto_pad="SAME_UPPER", strides=[2, 2]),
        # Gemm / MatMul
        op_case("gemm_transb", "Gemm", {"a": (3, 20)}, consts={"b": w(7, 20), "c": w(7)}, attrs={"transB": 1}),
        op_case("gemm_alpha_beta", "Gemm", {"a": (4, 6)}, consts={"b": w(6, 5), "c": w(4, 5)},
                attrs={"alpha": 0.5, "beta": 2.0}),
        op_case("gemm_scalar_c", "Gemm", {"a": (2, 6)}, consts={"b": w(6, 5), "c": w(1)}),
        op_case("gemm_no_c", "Gemm", {"a": (2, 6)}, consts={"b": w(6, 9)}),
        op_case("matmul_2d", "MatMul", {"a": (5, 12)}, consts={"b": w(12, 9)}),
        op_case("matmul_3d", "MatMul", {"a": (2, 3, 12)}, consts={"b": w(12, 4)}),
        # pooling
        op_case("maxpool_3s2p1", "MaxPool", {"x": (1, 8, 11, 11)},
                attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
        op_case("maxpool_ceil", "MaxPool", {"x": (1, 3, 10, 10)},
                attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        op_case("maxpool_dilated", "MaxPool", {"x": (1, 3, 10, 10)},
                attrs={"kernel_shape": [2, 2], "dilations": [2, 2]}),
        op_case("avgpool_exclude", "AveragePool", {"x": (1, 5, 9, 9)},
                attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
        op_case("avgpool_include", "AveragePool", {"x": (1, 5, 9, 9)},
                attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
        op_case("avgpool_ceil", "AveragePool", {"x": (1, 4, 8, 8)},
                attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        op_case("global_avgpool", "GlobalAveragePool", {"x": (2, 6, 7, 5)}),
        op_case("global_maxpool", "GlobalMaxPool", {"x": (1, 6, 7, 5)}),
        # ReduceMean over the spatial axes: average pooling over the whole image
        op_case("reducemean_spatial", "ReduceMean", {"x": (1, 6, 7, 5)}, attrs={"axes": [2, 3], "keepdims": 1}),
        op_case("reducemean_spatial_nokeep", "ReduceMean", {"x": (2, 6, 4, 3, 5)},
                attrs={"axes": [-3, -2, -1], "keepdims": 0}),
        # normalisation, softmax
        op_case("batchnorm", "BatchNormalization", {"x": (2, 6, 5, 5)},
                consts={"s": w(6), "b": w(6), "m": w(6), "v": np.abs(w(6)) + 0.5}, attrs={"epsilon": 1e-3}),
        op_case("lrn5", "LRN", {"x": (1, 10, 6, 6)}, attrs={"size": 5, "alpha": 1e-3, "beta": 0.75, "bias": 2.0}),
        op_case("softmax_last", "Softmax", {"x": (3, 10)}),
        op_case("softmax_axis1_4d", "Softmax", {"x": (2, 5, 3, 4)}, attrs={"axis": 1}),
        op_case("softmax_opset11", "Softmax", {"x": (2, 3, 4)}, attrs={"axis": 1}, opset=11),
        op_case("logsoftmax", "LogSoftmax", {"x": (4, 7)}),
        # binary (with broadcasting of the second operand, and of the first for commutative ops)
        op_case("add_same", "Add", {"a": (2, 3, 4, 5), "b": (2, 3, 4, 5)}),
        op_case("add_channel_const", "Add", {"a": (1, 6, 4, 4)}, consts={"b": w(1, 6, 1, 1)}),
        op_case("mul_first_broadcasts", "Mul", {"a": (1, 6, 1, 1), "b": (2, 6, 3, 3)}),
        op_case("sub_row", "Sub", {"a": (3, 4, 5)}, consts={"b": w(5)}),
        op_case("div", "Div", {"a": (3, 5)}, consts={"b": np.abs(w(3, 5)) + 0.5}),
        op_case("max", "Max", {"a": (4, 5), "b": (4, 5)}),
        op_case("min_scalar", "Min", {"a": (4, 5)}, consts={"b": np.array(0.1, np.float32)}),
        # unary eltwise
        *[op_case(f"eltwise_{op.lower()}", op, {"x": (2, 3, 4, 5)}, positive=op == "Sqrt", attrs=attrs)
          for op, attrs in (("Relu", {}), ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7}), ("Sigmoid", {}),
                            ("Tanh", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Exp", {}), ("Abs", {}),
                            ("Sqrt", {}))],
        op_case("eltwise_hardswish", "HardSwish", {"x": (2, 3, 4, 5)}, opset=14),
        op_case("eltwise_clip", "Clip", {"x": (2, 8)}, consts={"lo": np.array(-0.5, np.float32),
                                                             "hi": np.array(0.5, np.float32)}),
        op_case("eltwise_clip_min_only", "Clip", {"x": (2, 8)}, consts={"lo": np.array(0.0, np.float32)},
                input_order=["x", "lo"]),
        # concat and views
        op_case("concat_axis1", "Concat", {"a": (1, 3, 4, 4), "b": (1, 5, 4, 4)}, attrs={"axis": 1}),
        op_case("concat_axis2_const", "Concat", {"a": (2, 3, 4)}, consts={"b": w(2, 3, 2)}, attrs={"axis": 2}),
    ]
    # patterns: conv chains (bias Add folded, residual Add as a sum post-op, activations)
    x, cw, cb = (1, 6, 8, 8), w(8, 6, 3, 3), w(8)
    pads = {"pads": [1, 1, 1, 1]}
    for act, attrs, opset in (("Relu", {}, 13), ("Clip", {}, 10), ("Sigmoid", {}, 13), ("HardSwish", {}, 14),
                              ("LeakyRelu", {"alpha": 0.1}, 13)):
        if act == "Clip":
            attrs = {"min": 0.0, "max": 6.0}
        c.append(graph_case(f"pattern_conv_{act.lower()}", [node("Conv", ["x", "W", "B"], "c", **pads),
                                                            node(act, ["c"], "y", **attrs)],
                            {"x": x}, ["y"], {"W": cw, "B": cb}, opset))
    c.append(graph_case("pattern_conv_biasadd_relu", [node("Conv", ["x", "W"], "c", **pads),
                                                      node("Add", ["c", "B"], "a"), node("Relu", ["a"], "y")],
                        {"x": x}, ["y"], {"W": cw, "B": cb.reshape(1, 8, 1, 1)}))
    c.append(graph_case("pattern_conv_sum_input", [node("Conv", ["x", "W", "B"], "c", **pads),
                                                   node("Add", ["r", "c"], "y")],
                        {"x": x, "r": (1, 8, 8, 8)}, ["y"], {"W": cw, "B": cb}))
    # residual computed inside the region and dead after the Add: the sum runs in place
    c.append(graph_case("pattern_conv_sum_relu_inplace",
                        [node("Conv", ["x", "W0", "B"], "r", **pads), node("Relu", ["r"], "r2"),
                         node("Conv", ["r2", "W1"], "c", **pads),
                         node("Add", ["c", "r2"], "a"), node("Relu", ["a"], "y")],
                        {"x": x}, ["y"], {"W0": cw, "W1": w(8, 8, 3, 3), "B": cb}))
    # the residual is read again later: no in-place
    c.append(graph_case("pattern_conv_sum_residual_reused",
                        [node("Conv", ["x", "W0", "B"], "r", **pads),
                         node("Conv", ["r", "W1", "B"], "c", **pads),
                         node("Add", ["c", "r"], "a"), node("Relu", ["a"], "y0"),
                         node("Mul", ["r", "y0"], "y")],
                        {"x": x}, ["y"], {"W0": cw, "W1": w(8, 8, 3, 3), "B": cb}))
    # >= 16 input channels: nhwc for oneDNN's brgemm kernel where a blocked tensor comes in
    # (reordered) and a blocked residual is summed (copied into the nhwc destination first)
    c.append(graph_case("layout_nhwc_after_blocked",
                        [node("Conv", ["x", "W0", "B0"], "r0", **pads), node("Relu", ["r0"], "r"),
                         node("Conv", ["r", "W1", "B1"], "c", **pads), node("Add", ["c", "r"], "a"),
                         node("Relu", ["a"], "y0"), node("Conv", ["y0", "W2"], "y")],
                        {"x": (1, 8, 10, 10)}, ["y"],
                        {"W0": w(16, 8, 3, 3), "B0": w(16), "W1": w(16, 16, 3, 3), "B1": w(16), "W2": w(24, 16, 1, 1)}))
    # LeNet: 6 channels in nChw8c leave oneDNN only its reference kernel; the conv picks its source layout
    c.append(graph_case("layout_blocked_odd_channels",
                        [node("Conv", ["x", "W0"], "c0", pads=[2, 2, 2, 2]), node("Conv", ["c0", "W1"], "y")],
                        {"x": (1, 1, 14, 14)}, ["y"], {"W0": w(6, 1, 5, 5), "W1": w(16, 6, 5, 5)}))
    # DenseNet: a plain region input normalised (in the blocked layout) and concatenated with
    # a convolution's result, the concat normalised and convolved (brgemm over nhwc, 16 channels)
    # and concatenated again; a concat along another axis than channels
    bn = {f"{k}{c}": v for c in (8, 16) for k, v in zip("sbmv", (w(c), w(c), w(c), np.abs(w(c)) + 0.5), strict=True)}
    c.append(graph_case("layout_densenet_concat",
                        [node("BatchNormalization", ["x", "s8", "b8", "m8", "v8"], "n0"), node("Relu", ["n0"], "r0"),
                         node("Conv", ["r0", "W0"], "c0", **pads), node("Concat", ["x", "c0"], "cat0", axis=1),
                         node("BatchNormalization", ["cat0", "s16", "b16", "m16", "v16"], "n1"),
                         node("Relu", ["n1"], "r1"), node("Conv", ["r1", "W1"], "c1", **pads),
                         node("Concat", ["cat0", "c1"], "y", axis=1)],
                        {"x": (1, 8, 6, 6)}, ["y"], {**bn, "W0": w(8, 8, 3, 3), "W1": w(8, 16, 3, 3)}))
    c.append(graph_case("layout_concat_axis2_blocked",
                        [node("BatchNormalization", ["x", "s8", "b8", "m8", "v8"], "n"),
                         node("Conv", ["n", "W0", "B"], "c0", group=8, **pads),
                         node("Conv", ["c0", "W1", "B"], "c1", group=8, **pads),
                         node("Concat", ["c1", "z", "c0"], "y", axis=2)],
                        {"x": (1, 8, 8, 8), "z": (1, 8, 3, 8)}, ["y"],
                        {**bn, "W0": w(8, 1, 3, 3), "W1": w(8, 1, 3, 3), "B": cb}))
    # SiLU as exporters write it, Mul(x, Sigmoid(x)): one Swish (FuseActivation), a post-op of the conv
    # whose result both read; alone (after a region input) an eltwise of its own
    c.append(graph_case("silu_conv_post_op", [node("Conv", ["x", "W", "B"], "c", **pads), node("Sigmoid", ["c"], "s"),
                                              node("Mul", ["s", "c"], "y")],
                        {"x": x}, ["y"], {"W": cw, "B": cb}))
    c.append(graph_case("hardswish_conv_post_op",  # MobileNet-v3's x * HardSigmoid(x): a hardswish post-op
                        [node("Conv", ["x", "W", "B"], "c", **pads),
                         node("HardSigmoid", ["c"], "s", alpha=1.0 / 6.0, beta=0.5), node("Mul", ["c", "s"], "y")],
                        {"x": x}, ["y"], {"W": cw, "B": cb}))
    c.append(graph_case("silu_gemm_post_op", [node("Gemm", ["a", "G", "C"], "g", transB=1), node("Sigmoid", ["g"], "s"),
                                              node("Mul", ["g", "s"], "y")],
                        {"a": (3, 16)}, ["y"], {"G": w(21, 16), "C": w(21)}))  # 3 x 21: a masked tail of 15
    c.append(graph_case("silu_eltwise", [node("Sigmoid", ["x"], "s"), node("Mul", ["x", "s"], "y")],
                        {"x": (2, 3, 4, 5)}, ["y"], {}))
    # EfficientNet's squeeze-excite in one region: depthwise conv + SiLU, ReduceMean, 1x1 + SiLU,
    # 1x1 + Sigmoid, the per-channel Mul (binary, broadcast), the 1x1 projection
    se = [node("Conv", ["x", "Wd", "Bd"], "d", group=16, **pads), node("Sigmoid", ["d"], "ds"),
          node("Mul", ["d", "ds"], "h"), node("ReduceMean", ["h"], "m", axes=[2, 3], keepdims=1),
          node("Conv", ["m", "W1", "B1"], "q"), node("Sigmoid", ["q"], "qs"), node("Mul", ["q", "qs"], "qh"),
          node("Conv", ["qh", "W2", "B2"], "e"), node("Sigmoid", ["e"], "g"), node("Mul", ["h", "g"], "hg"),
          node("Conv", ["hg", "Wp"], "y")]
    c.append(graph_case("squeeze_excite", se, {"x": (1, 16, 9, 9)}, ["y"],
                        {"Wd": w(16, 1, 3, 3), "Bd": w(16), "W1": w(4, 16, 1, 1), "B1": w(4), "W2": w(16, 4, 1, 1),
                         "B2": w(16), "Wp": w(24, 16, 1, 1)}))
    c.append(STEM)
    c.append(graph_case("pattern_gemm_relu", [node("Gemm", ["a", "B", "C"], "g", transB=1), node("Relu", ["g"], "y")],
                        {"a": (2, 16)}, ["y"], {"B": w(10, 16), "C": w(10)}))
    c.append(graph_case("pattern_matmul_bias_sigmoid",
                        [node("MatMul", ["a", "B"], "m"), node("Add", ["m", "C"], "s"), node("Sigmoid", ["s"], "y")],
                        {"a": (3, 16)}, ["y"], {"B": w(16, 10), "C": w(10)}))
    c.append(graph_case("pattern_batchnorm_relu",
                        [node("BatchNormalization", ["x", "s", "b", "m", "v"], "n"), node("Relu", ["n"], "y")],
                        {"x": (1, 6, 5, 5)}, ["y"],
                        {"s": w(6), "b": w(6), "m": w(6), "v": np.abs(w(6)) + 0.5}))
    # a region whose tensors stay blocked inside, with a view, a region output also used inside,
    # and a concat of blocked and plain inputs
    c.append(graph_case("region_mixed",
                        [node("Conv", ["x", "W0", "B"], "c0", **pads), node("Relu", ["c0"], "r0"),
                         node("MaxPool", ["r0"], "p", kernel_shape=[2, 2], strides=[2, 2]),
                         node("Concat", ["p", "z"], "cat", axis=1),
                         node("GlobalAveragePool", ["cat"], "gap"), node("Flatten", ["gap"], "f"),
                         node("Gemm", ["f", "G"], "y", transB=1)],
                        {"x": x, "z": (1, 3, 4, 4)}, ["y", "r0"], {"W0": cw, "B": cb, "G": w(5, 11)}))
    for case in c:
        case.vendors = (DNNL_EVERY_REGION,)
    return c


CASES = _cases()

# Refused by a checker: each stays in host C (and still matches onnxruntime).
REFUSED = [
    op_case("refuse_runtime_weights", "Conv", {"x": (1, 3, 6, 6), "W": (4, 3, 3, 3)}),
    op_case("refuse_matmul_runtime_b", "MatMul", {"a": (3, 4), "b": (4, 5)}),
    op_case("refuse_avgpool_include_pad_ceil", "AveragePool", {"x": (1, 3, 8, 8)},
            attrs={"kernel_shape": [3, 3], "strides": [2, 2], "count_include_pad": 1, "ceil_mode": 1}),
    op_case("refuse_gemm_transa", "Gemm", {"a": (6, 3)}, consts={"b": w(6, 4)}, attrs={"transA": 1}),
    op_case("refuse_sub_first_broadcasts", "Sub", {"a": (1, 5), "b": (3, 5)}),
    op_case("refuse_reducemean_channels", "ReduceMean", {"x": (1, 6, 5, 5)}, attrs={"axes": [1, 2, 3]}),
]
for _c in REFUSED:
    _c.vendors = (DNNL_EVERY_REGION,)


@pytest.fixture(scope="module")
def built():
    require_onednn()
    return shared_build(CASES + REFUSED, vendor_include_dirs=(ONEDNN.include,),
                        libs=(f"-L{ONEDNN.lib}", f"-Wl,-rpath,{ONEDNN.lib}", "-ldnnl"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_op_matches_onnxruntime(built, case_id):
    built.check(case_id)
    partition = built.meta[case_id]["partition"]
    assert partition and all(p["compiler"] == "dnnl" for p in partition), "the case did not go to dnnl"
    host = [n["op"] for n in built.meta[case_id]["nodes"] if n["op"] != "Call"]
    assert host == [], f"left on the host: {host}"


@pytest.mark.parametrize("case_id", [c.id for c in REFUSED])
def test_refused_op_runs_on_host(built, case_id):
    assert built.meta[case_id]["partition"] == []
    built.check(case_id)


def test_pattern_table_lists_longer_chains_first():
    lengths = [len(p.name.split("_")) for p in PATTERNS if p.name.startswith("dnnl.conv")]
    assert lengths == sorted(lengths, reverse=True)
    assert "dnnl.conv_bias_sum_relu" in {p.name for p in PATTERNS}


PATTERN_CASES = ("pattern_conv_sum_relu_inplace", "pattern_conv_biasadd_relu", "pattern_batchnorm_relu")


def test_fusions_in_metadata(built):
    built.ensure(list(PATTERN_CASES))  # (in one library, where this run's sample left them out)
    ops = {cid: built.meta[cid]["partition"][0]["ops"] for cid in PATTERN_CASES if built.meta[cid]["partition"]}
    assert ops["pattern_conv_sum_relu_inplace"] == ["dnnl.conv", "Conv", "Relu", "dnnl.conv_sum_relu"] or \
        "dnnl.conv_sum_relu" in ops["pattern_conv_sum_relu_inplace"]
    # the bias Add is a constant per-channel Add: FoldAffine puts it in the conv's bias before partitioning
    assert ops["pattern_conv_biasadd_relu"] == ["dnnl.conv_relu"]
    assert ops["pattern_batchnorm_relu"] == ["dnnl.batchnorm_relu"]


# --- whole models through the CLI -----------------------------------------------------------

def compile_build_run(tmp_path, model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """`model` with --vendor dnnl, built with -Werror and run by `aotc run` on `feeds`: the metadata and outputs."""
    src, out = tmp_path / f"{model.graph.name}.onnx", tmp_path / "out"
    onnx.save(model, src)
    meta = build_bundle(src, out, "--vendor", "dnnl")
    return meta, run_bundle(out, feeds)


@pytest.mark.parametrize("name", tiered(sorted(zoo.MODELS), {"lenet"}))
def test_zoo_model_with_dnnl(tmp_path, name):
    require_onednn()
    model = zoo.build(name)
    feeds = zoo.random_inputs(model)
    meta, ours = compile_build_run(tmp_path, model, feeds)
    import onnxruntime as ort

    refs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        assert_close(ours[spec["name"]], ref, f"{name}:{spec['name']}")
    assert any(p["compiler"] == "dnnl" for p in meta["partition"])


@pytest.mark.parametrize("name, builder", [("resnet", zoo.resnet), ("mobilenetv2", zoo.mobilenetv2),
                                           ("resnet18_224", zoo.resnet18_224),
                                           ("mobilenetv2_224", zoo.mobilenetv2_224)])
def test_conv_nets_are_one_region(name, builder):
    """ResNet- and MobileNet-style nets: everything, including the residual adds (sum post-ops)
    and the flatten before the classifier (a view), lands in one dnnl region."""
    graph = partition_model(builder(), Options(vendors=("dnnl",))).graph
    assert [n.op for n in graph.nodes] == ["Call"]
    assert len(graph.functions) == 1
    ops = [n.attrs.get("composite", n.op) for n in next(iter(graph.functions.values())).graph.nodes]
    assert any("_sum" in op for op in ops), ops


def test_efficientnet_is_one_region_without_inside_reorders():
    """EfficientNet-B0's squeeze-excite (ReduceMean, the per-channel Mul) and SiLUs stay in the region:
    one region instead of 17, each SiLU a Swish post-op of its conv, and the probe's count of the
    reorders a run pays (reported by `aotc partition --show`): 51 before, now at most one: the stem's
    blocked result into the nhwc of the depthwise convolution after it (asking the stem for nhwc
    would only move that reorder to the input, and the stem is slower writing nhwc: not taken)."""
    require_onednn()
    from aot.compiler import codegen_functions

    parted = partition_model(zoo.efficientnet_b0_224(), Options(vendors=("dnnl",)))
    graph = parted.graph
    assert [n.op for n in graph.nodes] == ["Call"] and len(graph.functions) == 1
    (report,) = [a.report for a in codegen_functions(graph, "host", parted.vendors, parted.options).values()]
    assert "eltwise" not in report["dnnl_ops"], report["dnnl_ops"]  # every Swish and Sigmoid a post-op
    assert report["runtime_swish"] == 49  # every SiLU run by the runtime after its convolution (aotc_dnnl_swish)
    assert report["dnnl_ops"]["pool"] == 17, report["dnnl_ops"]  # 16 ReduceMeans and the GlobalAveragePool
    entry, exit_, inside = map(int, re.fullmatch(r"\d+ \(entry (\d+), exit (\d+), inside (\d+)\)",
                                                 report["reorders"]).groups())
    assert (entry, exit_) == (0, 0) and inside <= 1, report["reorders"]


@pytest.mark.parametrize("case_id", ["silu_conv_post_op", "hardswish_conv_post_op", "silu_gemm_post_op"])
def test_gated_activation_is_a_post_op(case_id):
    """Mul(x, Sigmoid(x)) and Mul(x, HardSigmoid(x)) after a Conv (the Conv's result read twice, so no
    chain pattern matches): one convolution with a swish / hardswish post-op, no other primitive
    (the values: test_op_matches_onnxruntime)."""
    require_onednn()
    from aot.compiler import codegen_functions

    case = next(c for c in CASES if c.id == case_id)
    parted = partition_model(case.model, Options(vendors=(DNNL_EVERY_REGION,)))
    (art,) = codegen_functions(parted.graph, "host", parted.vendors, parted.options).values()
    assert art.report["dnnl_ops"] == {"matmul" if "gemm" in case_id else "conv": 1}, art.report["dnnl_ops"]
    source = next(text for name, text in art.files.items() if name.endswith("_0.c"))
    # the swish runs in the runtime after the convolution (aotc_dnnl_swish), not as oneDNN's post-op
    swish = case_id.startswith("silu")
    assert art.report["runtime_swish"] == int(swish)
    assert ("AOTC_DNNL_POST_SWISH" in source) == swish and "dnnl_eltwise_swish" not in source.split("_ops[]")[1]


SWISH_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "aotc_dnnl.h"
/* argv: in.bin out.bin alpha n: swish over the first n floats of in.bin, all of them written out */
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    size_t total, n = (size_t)atol(argv[4]);
    float *x;
    if (argc != 5 || f == NULL) return 2;
    fseek(f, 0, SEEK_END);
    total = (size_t)ftell(f) / sizeof(float);
    fseek(f, 0, SEEK_SET);
    x = malloc(total * sizeof(float));
    if (x == NULL || fread(x, sizeof(float), total, f) != total) return 3;
    fclose(f);
    aotc_dnnl_swish(x, n, (float)atof(argv[3]));
    f = fopen(argv[2], "wb");
    if (f == NULL || fwrite(x, sizeof(float), total, f) != total) return 4;
    fclose(f);
    free(x);
    return 0;
}
"""


@pytest.mark.full
@pytest.mark.parametrize("path", ["avx512", "plain"])
def test_runtime_swish_accuracy(tmp_path, path):
    """aotc_dnnl_swish, the SWISH post-op (EfficientNet's 49 SiLUs): its AVX-512 code and its plain-C
    twin (AOTC_DNNL_PLAIN_SWISH), each built as bundles build (-O3 -march=native), against
    x sigmoid(alpha x) in float64 over every 4093rd finite float: within 5 ulp (3.9 measured for both),
    and within 1.1e-36 where the result is below 1e-30 (both give 0 from alpha x < -87.3 on); NaN
    stays NaN; a tail of n % 16 floats is done and nothing past n is touched."""
    require_onednn()
    from aot.paths import kernel_include_flags, runtime_dir

    if path == "avx512" and "avx512f" not in open("/proc/cpuinfo").read():
        pytest.skip("no AVX-512 on this CPU")
    rt = runtime_dir()
    (tmp_path / "main.c").write_text(SWISH_MAIN)
    exe = tmp_path / "swish"
    subprocess.run(["cc", "-std=c99", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror",
                    *(["-DAOTC_DNNL_PLAIN_SWISH"] if path == "plain" else []),
                    str(tmp_path / "main.c"), str(rt / "vendor" / "dnnl" / "aotc_dnnl.c"),
                    *kernel_include_flags(), f"-I{rt / 'vendor' / 'dnnl'}", f"-I{ONEDNN.include}",
                    f"-L{ONEDNN.lib}", f"-Wl,-rpath,{ONEDNN.lib}", "-ldnnl", "-o", str(exe)], check=True)
    if shutil.which("objdump"):  # the path under test is the one built: VSCALEFPS only in the AVX-512 code
        dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True).stdout
        assert ("vscalefps" in dis) == (path == "avx512")
    check_swish(exe, tmp_path)


def test_layout_hint_removes_inside_reorder():
    """The stem case (in the shared build, against onnxruntime): without the hint the stem's blocked
    result was reordered for the depthwise convolution; with it, only the output is, at exit."""
    require_onednn()
    from aot.compiler import codegen_functions

    parted = partition_model(STEM.model, Options(vendors=(DNNL_EVERY_REGION,)))
    (report,) = [a.report for a in codegen_functions(parted.graph, "host", parted.vendors, parted.options).values()]
    assert report["reorders"] == "1 (entry 0, exit 1, inside 0)", report["reorders"]


def onednn_exec_lines(tmp_path, name: str) -> list[str]:
    """ONEDNN_VERBOSE's line for every primitive the zoo model's runner executes (one run)."""
    model = zoo.build(name)
    feeds = zoo.random_inputs(model)
    (tmp_path / name).mkdir()
    meta, _ = compile_build_run(tmp_path / name, model, feeds)
    (tmp_path / name / "in.bin").write_bytes(b"".join(np.ascontiguousarray(feeds[s["name"]]).tobytes()
                                                      for s in meta["inputs"]))
    r = subprocess.run([str(tmp_path / name / "out" / "runner"), "in.bin", "out.bin", "1"], cwd=tmp_path / name,
                       env={**os.environ, "ONEDNN_VERBOSE": "profile_exec"}, capture_output=True, text=True,
                       check=True)
    return [ln for ln in r.stdout.splitlines() if ",exec," in ln]


@pytest.mark.full
def test_conv_kernels_chosen(tmp_path):
    """ONEDNN_VERBOSE on the runner: no convolution of LeNet or ResNet-8 is left to oneDNN's
    reference kernel, and with AVX2 every dense 3x3 one with >= 16 input channels runs the
    brgemm kernel over nhwc (build_conv's choice, docs/dnnl.md)."""
    require_onednn()
    convs = [ln for name in ("lenet", "resnet") for ln in onednn_exec_lines(tmp_path, name) if ",convolution," in ln]
    assert convs and not [ln for ln in convs if ",ref:" in ln], convs
    dense_3x3 = [ln for ln in convs if re.search(r",mb\d+_ic(\d+)oc.*kh3s.*kw3s", ln)
                 and int(re.search(r"_ic(\d+)oc", ln).group(1)) >= 16]
    assert dense_3x3
    if "avx2" in open("/proc/cpuinfo").read():
        assert all(",brg" in ln and re.search(r"src[_:]f32::blocked:acdb:", ln) for ln in dense_3x3), dense_3x3


def test_concat_and_normalisation_kernels_chosen(tmp_path):
    """ONEDNN_VERBOSE on the runner: the concats of DenseNet, Inception and SqueezeNet get their
    inputs in one layout, so none runs oneDNN's reference concat, and none of DenseNet's
    normalisations runs over plain data (ncsp_bnorm, 4-60x slower than the blocked kernel):
    DenseNet ran at twice onnxruntime's time with both (build_concat, docs/dnnl.md)."""
    require_onednn()
    lines = {name: onednn_exec_lines(tmp_path, name) for name in ("densenet", "inception", "squeezenet")}
    concats = {name: [ln for ln in lines[name] if ",concat," in ln] for name in lines}
    assert all(concats.values()), concats
    assert not [ln for name in concats for ln in concats[name] if ",ref:" in ln], concats
    bnorms = [ln for ln in lines["densenet"] if ",batch_normalization," in ln]
    assert bnorms and not [ln for ln in bnorms if ",ref:" in ln or "ncsp" in ln], bnorms


def test_missing_onednn_stops_configure_with_one_line(tmp_path):
    """Without oneDNN the bundle's CMake says what to install, in one line."""
    require_onednn()
    src, out = tmp_path / "m.onnx", tmp_path / "out"
    onnx.save(zoo.build("lenet"), src)
    aotc(src, "-o", out, "--vendor", "dnnl", "--no-configure")
    r = subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DCMAKE_DISABLE_FIND_PACKAGE_dnnl=ON"],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "aotc[dnnl] extra" in " ".join(r.stderr.split())


# --- threads: a bundle's oneDNN runs on the threads it was compiled for ---------------------------

THREADS_MAIN = r"""
#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "twoconv.h"

static unsigned char arena[TWOCONV_ARENA_SIZE] __attribute__((aligned(64)));

/* The threads this process has: /proc/self/task's entries. */
static int tasks(void) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A caller's program: `own` > 0 sets its own OpenMP thread count first. Three runs of the bundle,
 * then the threads the process has, the caller's OpenMP thread count, and the threads its own
 * parallel region gets. */
int entry(int own) {
    struct twoconv_inputs in;
    struct twoconv_outputs out;
    int k, seen = 0;
    if (own > 0) omp_set_num_threads(own);
    if (twoconv_init(arena) != 0) return 1;
    twoconv_arena_io(arena, &in, &out);
    for (k = 0; k < 3; ++k)
        if (twoconv_run(&in, &out, arena) != 0) return 2;
    printf("tasks %d max_threads %d\n", tasks(), omp_get_max_threads());
#pragma omp parallel
    {
#pragma omp single
        seen = omp_get_num_threads();
    }
    printf("own %d\n", seen);
    return 0;
}

#ifdef DIRECT
int main(int argc, char **argv) { return entry(argc > 1 ? atoi(argv[1]) : 0); }
#endif
"""

# a program that is not linked with oneDNN nor OpenMP and loads the caller's code (and so the
# bundle, oneDNN and libgomp) with dlopen, RTLD_LOCAL: none of them is in the global scope
THREADS_LOADER = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void *sym = lib != NULL ? dlsym(lib, "entry") : NULL;
    int (*entry)(int);
    if (sym == NULL) { fprintf(stderr, "%s\n", dlerror()); return 3; }
    *(void **)&entry = sym;
    return entry(argc > 2 ? atoi(argv[2]) : 0);
}
"""


@pytest.mark.full
@pytest.mark.parametrize("threads", [1, 2])
def test_bundle_runs_onednn_on_its_threads(tmp_path, threads):
    """A bundle runs oneDNN's primitives on the threads it was compiled for (1, or N with --threads N)
    whatever the caller's OMP_NUM_THREADS (unset: one OpenMP thread per core; 4), from an ordinary
    program and from one that dlopens it (RTLD_LOCAL: libgomp is not in the global scope): the process
    has that many threads after three runs (OpenMP keeps the threads it started; the program starts
    no pool of the bundle's). The caller's own OpenMP thread count is what it set before the runs,
    and its parallel regions get it. Before, a default bundle's oneDNN took every core (issue 48:
    168 ms a run of ResNet-8 on a busy 2-core machine, 0.23 ms single-threaded) or its init refused
    (more threads than the workspace probe had), and --threads 2 left the caller's count at 2."""
    require_onednn()
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([node("Conv", ["x", "W0", "B0"], "c0", pads=[1, 1, 1, 1]), node("Relu", ["c0"], "r0"),
                           node("Conv", ["r0", "W1", "B1"], "y", pads=[1, 1, 1, 1])], "twoconv", [x], [y],
                          [numpy_helper.from_array(v, k) for k, v in
                           {"W0": w(32, 16, 3, 3), "B0": w(32), "W1": w(32, 32, 3, 3), "B1": w(32)}.items()])
    src, out = tmp_path / "twoconv.onnx", tmp_path / "out"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), src)
    aotc(src, "-o", out, "--vendor", "dnnl", "--threads", threads, "--no-configure")
    assert any(p["compiler"] == "dnnl" for p in json.loads((out / "bundle" / "metadata.json").read_text())["partition"])
    subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",
                    f"-DCMAKE_PREFIX_PATH={ONEDNN.root}"], check=True, capture_output=True)
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    (tmp_path / "main.c").write_text(THREADS_MAIN)
    (tmp_path / "loader.c").write_text(THREADS_LOADER)
    link = [str(out / "libtwoconv.a"), f"-L{ONEDNN.lib}", f"-Wl,-rpath,{ONEDNN.lib}", "-ldnnl", "-lm"]
    cc = ["cc", "-std=gnu99", "-O1", "-fopenmp", "-Wall", "-Wextra", "-Werror", f"-I{out / 'bundle' / 'include'}"]
    subprocess.run([*cc, "-DDIRECT", str(tmp_path / "main.c"), *link, "-o", str(tmp_path / "direct")], check=True)
    subprocess.run([*cc, "-shared", "-fPIC", str(tmp_path / "main.c"), *link, "-o", str(tmp_path / "caller.so")],
                   check=True)
    subprocess.run(["cc", "-std=gnu99", "-Wall", "-Werror", str(tmp_path / "loader.c"), "-ldl", "-o",
                    str(tmp_path / "loader")], check=True)
    programs = {"direct": [str(tmp_path / "direct")], "dlopen": [str(tmp_path / "loader"), str(tmp_path / "caller.so")]}
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_THREAD_LIMIT", "OMP_DYNAMIC")}
    for omp in (None, "4"):
        for name, cmd in programs.items():
            for own in (0, 3):
                r = subprocess.run([*cmd, str(own)], env=env if omp is None else {**env, "OMP_NUM_THREADS": omp},
                                   capture_output=True, text=True)
                what = f"{name}, OMP_NUM_THREADS={omp}, caller's omp_set_num_threads({own})"
                assert r.returncode == 0, f"{what}: exit {r.returncode}: {r.stderr}"
                found = re.fullmatch(r"tasks (\d+) max_threads (\d+)\nown (\d+)\n", r.stdout)
                assert found, f"{what}: {r.stdout!r}"
                tasks, max_threads, seen = map(int, found.groups())
                assert tasks == threads, f"{what}: oneDNN ran on {tasks} threads"
                if own:  # the caller's setting is its own, before and after the bundle's runs
                    assert (max_threads, seen) == (3, 3), what
                elif omp:
                    assert (max_threads, seen) == (4, 4), what
