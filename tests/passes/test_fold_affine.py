"""FoldAffine and SimplifyLayout (issue 28): the shapes tf2onnx writes, folded into the Conv / Gemm next
to them, against onnxruntime, and the host graph each leaves (what folded, what must not)."""

from __future__ import annotations

import numpy as np
import pytest
import tf2onnx_style  # examples/, on the path by conftest
from onnx import helper, numpy_helper
from opcheck import Case, model_case, shared_build, tensor_type

from aot.compiler import lower
from aot.passes import HOST_PIPELINE, simplify

_rng = np.random.default_rng(28)


def _w(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) / np.sqrt(max(1, np.prod(shape[1:])))).astype(np.float32)


def _pos(*shape: int) -> np.ndarray:
    return (0.5 + _rng.random(shape)).astype(np.float32)


def _case(case_id: str, nodes: list, inputs: dict[str, tuple], consts: dict[str, np.ndarray], outputs=("y",)):
    feeds = {k: _rng.standard_normal(s).astype(np.float32) for k, s in inputs.items()}
    graph = helper.make_graph(
        nodes, case_id,
        [helper.make_tensor_value_info(k, tensor_type("float32"), s) for k, s in inputs.items()],
        [helper.make_tensor_value_info(o, tensor_type("float32"), None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in consts.items()],
    )
    return model_case(case_id, graph, feeds)


def N(op, ins, outs, name, **attrs):  # noqa: N802
    return helper.make_node(op, ins, outs, name=name, **attrs)


def _conv_chain(case_id, x, w, affine, act="Relu", bias=True, conv_op="Conv", **attrs):
    """x -> Conv -> affine ops ((op, const, const_first)) -> act -> y."""
    consts = {"w": w}
    ins = ["x", "w"]
    if bias:
        out_ch = w.shape[0] if conv_op == "Conv" else w.shape[1] * attrs.get("group", 1)
        consts["b"] = _w(out_ch, 1).reshape(-1)
        ins.append("b")
    nodes = [N(conv_op, ins, ["t0"], "conv", **attrs)]
    for k, (op, c, first) in enumerate(affine):
        consts[f"c{k}"] = c
        pair = [f"c{k}", f"t{k}"] if first else [f"t{k}", f"c{k}"]
        nodes.append(N(op, pair, [f"t{k + 1}"], f"{op.lower()}{k}"))
    last = f"t{len(affine)}"
    if act == "Clip6":
        consts.update(lo=np.array(0, np.float32), hi=np.array(6, np.float32))
        nodes.append(N("Clip", [last, "lo", "hi"], ["y"], "act"))
    elif act == "HardSigmoid":
        nodes.append(N("HardSigmoid", [last], ["y"], "act", alpha=0.3, beta=0.4))
    elif act:
        nodes.append(N(act, [last], ["y"], "act"))
    else:
        nodes[-1].output[0] = "y"
    return _case(case_id, nodes, {"x": x}, consts)


M = 6
CASES = [
    # tf2onnx's BatchNormalization: Conv -> Mul -> Add -> Relu
    _conv_chain("conv_mul_add_relu", (1, 3, 9, 9), _w(M, 3, 3, 3),
                [("Mul", _pos(1, M, 1, 1), False), ("Add", _w(M, 1, 1), False)], pads=[1, 1, 1, 1]),
    # the Sub/Div/Mul/Add form of BatchNorm, no conv bias, Relu6
    _conv_chain("conv_nobias_bn_sub_div_mul_add_clip", (1, 4, 8, 8), _w(M, 4, 1, 1),
                [("Sub", _w(M, 1, 1), False), ("Div", _pos(M, 1, 1), False), ("Mul", _pos(M, 1, 1), True),
                 ("Add", _w(1, M, 1, 1), True)], act="Clip6", bias=False),
    _conv_chain("conv_const_minus_leaky", (1, 3, 7, 7), _w(M, 3, 3, 3), [("Sub", _w(M, 1, 1), True)],
                act="LeakyRelu", strides=[2, 2]),
    _conv_chain("depthwise_scalar_mul_add_relu", (1, M, 10, 10), _w(M, 1, 3, 3),
                [("Mul", np.array(1.7, np.float32), False), ("Add", _w(M, 1, 1), False)], group=M,
                pads=[1, 1, 1, 1]),
    _conv_chain("grouped_mul", (2, 4, 6, 6), _w(M, 2, 3, 3), [("Mul", _pos(M, 1, 1), False)], act="", group=2),
    _conv_chain("conv_hardsigmoid", (1, 3, 6, 6), _w(M, 3, 3, 3), [("Add", _w(M, 1, 1), False)],
                act="HardSigmoid"),
    _conv_chain("convtranspose_grouped_mul_add", (1, 4, 5, 5), _w(4, 3, 3, 3),
                [("Mul", _pos(1, M, 1, 1), False), ("Add", _w(M, 1, 1), False)], act="Relu",
                conv_op="ConvTranspose", group=2, strides=[2, 2]),
    # gemm: per-column Mul, [1, N] Add, LeakyRelu
    _case("gemm_transb_mul_add_leaky",
          [N("Gemm", ["x", "B", "C"], ["g"], "gemm", transB=1, beta=0.5, alpha=1.5),
           N("Mul", ["g", "s"], ["m"], "mul"), N("Add", ["m", "t"], ["a"], "add"),
           N("LeakyRelu", ["a"], ["y"], "act", alpha=0.1)],
          {"x": (3, 10)}, {"B": _w(8, 10), "C": _w(8, 1).reshape(-1), "s": _pos(8), "t": _w(1, 8)}),
    # tf2onnx's Dense: MatMul -> Add(bias); a BatchNorm after it -> one Gemm with Relu fused
    _case("matmul2d_add_mul_add_relu",
          [N("MatMul", ["x", "B"], ["g"], "matmul"), N("Add", ["g", "b"], ["a"], "bias"),
           N("Mul", ["a", "s"], ["m"], "mul"), N("Add", ["m", "t"], ["u"], "add"), N("Relu", ["u"], ["y"], "act")],
          {"x": (4, 12)}, {"B": _w(12, 8), "b": _w(8), "s": _pos(8), "t": _w(8)}),
    _case("matmul3d_mul_add",
          [N("MatMul", ["x", "B"], ["g"], "matmul"), N("Mul", ["g", "s"], ["m"], "mul"),
           N("Add", ["m", "t"], ["y"], "add")],
          {"x": (2, 3, 12)}, {"B": _w(12, 8), "s": _pos(8), "t": _w(8)}),
    # before the op: a per-input-channel scale folds through zero padding; a shift folds only without it
    _case("mul_before_padded_conv",
          [N("Mul", ["x", "s"], ["m"], "mul"), N("Conv", ["m", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1]),
           N("Relu", ["c"], ["y"], "act")],
          {"x": (1, 4, 7, 7)}, {"s": _pos(4, 1, 1), "w": _w(M, 4, 3, 3), "b": _w(M)}),
    _case("add_before_padded_conv_stays",
          [N("Add", ["x", "t"], ["m"], "add"), N("Conv", ["m", "w"], ["y"], "conv", pads=[1, 1, 1, 1])],
          {"x": (1, 4, 7, 7)}, {"t": _w(1, 4, 1, 1) + 1, "w": _w(M, 4, 3, 3)}),
    _case("sub_div_before_unpadded_grouped_conv",
          [N("Sub", ["x", "t"], ["m"], "sub"), N("Div", ["m", "s"], ["d"], "div"),
           N("Conv", ["d", "w", "b"], ["y"], "conv", group=2, strides=[2, 2])],
          {"x": (1, 4, 7, 7)}, {"t": _w(4, 1, 1), "s": _pos(4, 1, 1), "w": _w(M, 2, 3, 3), "b": _w(M)}),
    _case("add_mul_before_gemm",
          [N("Add", ["x", "t"], ["a"], "add"), N("Mul", ["a", "s"], ["m"], "mul"),
           N("Gemm", ["m", "B", "C"], ["y"], "gemm", transB=1, alpha=0.5)],
          {"x": (3, 10)}, {"t": _w(10), "s": _pos(1, 10), "B": _w(8, 10), "C": _w(8)}),
    _case("mul_add_before_matmul2d",
          [N("Mul", ["x", "s"], ["m"], "mul"), N("Add", ["m", "t"], ["a"], "add"),
           N("MatMul", ["a", "B"], ["y"], "matmul")],
          {"x": (3, 10)}, {"t": _w(10), "s": _pos(10), "B": _w(10, 8)}),
    # not folded: the conv's output is read twice; the constant is not per channel
    _case("conv_read_twice",
          [N("Conv", ["x", "w"], ["c"], "conv"), N("Mul", ["c", "s"], ["m"], "mul"),
           N("Add", ["m", "c"], ["y"], "add")],
          {"x": (1, 3, 5, 5)}, {"w": _w(M, 3, 1, 1), "s": _pos(M, 1, 1)}),
    _case("conv_mul_not_per_channel",
          [N("Conv", ["x", "w"], ["c"], "conv"), N("Mul", ["c", "s"], ["y"], "mul")],
          {"x": (1, 3, 5, 5)}, {"w": _w(M, 3, 1, 1), "s": _pos(M, 5, 1)}),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES + LAYOUT_CASES + MODEL_CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def _host(case_id: str):
    case = next(c for c in CASES + LAYOUT_CASES if c.id == case_id)
    return simplify(lower(case.model), HOST_PIPELINE)


@pytest.mark.parametrize("case_id,ops", [
    ("conv_mul_add_relu", ["FusedConv"]),
    ("conv_nobias_bn_sub_div_mul_add_clip", ["FusedConv"]),
    ("conv_const_minus_leaky", ["FusedConv"]),
    ("depthwise_scalar_mul_add_relu", ["FusedConv"]),
    ("grouped_mul", ["Conv"]),
    ("conv_hardsigmoid", ["FusedConv"]),
    ("convtranspose_grouped_mul_add", ["ConvTranspose", "Relu"]),
    ("gemm_transb_mul_add_leaky", ["FusedGemm"]),
    ("matmul2d_add_mul_add_relu", ["FusedGemm"]),
    ("matmul3d_mul_add", ["MatMul", "Add"]),
    ("mul_before_padded_conv", ["FusedConv"]),
    ("add_before_padded_conv_stays", ["Add", "Conv"]),
    ("sub_div_before_unpadded_grouped_conv", ["Conv"]),
    ("add_mul_before_gemm", ["Gemm"]),
    ("mul_add_before_matmul2d", ["Gemm"]),
    ("conv_read_twice", ["Conv", "Mul", "Add"]),
    ("conv_mul_not_per_channel", ["Conv", "Mul"]),
])
def test_host_graph(case_id, ops):
    assert [n.op for n in _host(case_id).nodes] == ops


def test_fused_node_names_every_onnx_node_it_stands_for():
    g = _host("conv_nobias_bn_sub_div_mul_add_clip")
    assert g.nodes[0].sources() == ("conv", "sub0", "div1", "mul2", "add3", "act")
    g = _host("mul_before_padded_conv")
    assert g.nodes[0].sources() == ("mul", "conv", "act")


def test_graph_output_is_not_folded_away():
    case = _case("exposed", [N("Conv", ["x", "w"], ["c"], "conv"), N("Mul", ["c", "s"], ["y"], "mul")],
                 {"x": (1, 3, 5, 5)}, {"w": _w(M, 3, 1, 1), "s": _pos(M, 1, 1)}, outputs=("c", "y"))
    assert [n.op for n in lower(case.model).nodes] == ["Conv", "Mul"]


# --- layout: tf2onnx's transposes, Pad, view chains, shape arithmetic -------------------------------------

def _shape_arith_case():
    """Shape -> Gather -> Concat -> Reshape, as tf2onnx writes a Flatten."""
    return _case("shape_arith_reshape",
                 [N("Relu", ["x"], ["r"], "relu"), N("Shape", ["r"], ["sh"], "shape"),
                  N("Gather", ["sh", "zero"], ["n"], "gather", axis=0),
                  N("Unsqueeze", ["n", "ax0"], ["n1"], "unsq"),
                  N("Concat", ["n1", "minus1"], ["ns"], "concat", axis=0),
                  N("Reshape", ["r", "ns"], ["y"], "reshape")],
                 {"x": (2, 3, 4, 4)},
                 {"zero": np.array(0, np.int64), "ax0": np.array([0], np.int64), "minus1": np.array([-1], np.int64)})


LAYOUT_CASES = [
    # NHWC input -> NCHW conv -> back to NHWC and again to NCHW (the inner pair cancels)
    _case("nhwc_pair_cancels",
          [N("Transpose", ["x"], ["xt"], "in_t", perm=[0, 3, 1, 2]), N("Conv", ["xt", "w"], ["c"], "conv"),
           N("Transpose", ["c"], ["ct"], "to_nhwc", perm=[0, 2, 3, 1]),
           N("Transpose", ["ct"], ["cn"], "to_nchw", perm=[0, 3, 1, 2]), N("Relu", ["cn"], ["y"], "relu")],
          {"x": (1, 6, 6, 3)}, {"w": _w(4, 3, 3, 3)}),
    # a one-channel NHWC input (KWS): its transpose is a view
    _case("one_channel_input_transpose_is_a_view",
          [N("Transpose", ["x"], ["xt"], "in_t", perm=[0, 3, 1, 2]),
           N("Conv", ["xt", "w"], ["y"], "conv", pads=[1, 1, 1, 1])],
          {"x": (1, 9, 5, 1)}, {"w": _w(4, 1, 3, 3)}),
    # NCHW -> NHWC of a 1 x 1 plane, then tf2onnx's Flatten (Reshape) and Dense (MatMul + Add)
    _case("transpose_flatten_dense",
          [N("GlobalAveragePool", ["x"], ["p"], "pool"), N("Transpose", ["p"], ["pt"], "to_nhwc", perm=[0, 2, 3, 1]),
           N("Reshape", ["pt", "shape"], ["f"], "flatten"), N("MatMul", ["f", "B"], ["g"], "dense"),
           N("Add", ["g", "b"], ["y"], "bias")],
          {"x": (1, 8, 5, 5)}, {"shape": np.array([1, 8], np.int64), "B": _w(8, 4), "b": _w(4)}),
    _case("pad_into_conv",
          [N("Pad", ["x", "pads"], ["xp"], "pad"), N("Conv", ["xp", "w"], ["y"], "conv", pads=[0, 1, 0, 0],
                                                    strides=[2, 2])],
          {"x": (1, 3, 8, 8)}, {"pads": np.array([0, 0, 1, 1, 0, 0, 2, 1], np.int64), "w": _w(4, 3, 3, 3)}),
    _case("pad_nonzero_value_stays",
          [N("Pad", ["x", "pads", "v"], ["xp"], "pad"), N("Conv", ["xp", "w"], ["y"], "conv")],
          {"x": (1, 3, 6, 6)}, {"pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64),
                                "v": np.array(0.5, np.float32), "w": _w(4, 3, 3, 3)}),
    _case("pad_channels_stays",
          [N("Pad", ["x", "pads"], ["xp"], "pad"), N("Conv", ["xp", "w"], ["y"], "conv")],
          {"x": (1, 3, 6, 6)}, {"pads": np.array([0, 1, 0, 0, 0, 0, 0, 0], np.int64), "w": _w(4, 4, 3, 3)}),
    _case("view_chain",
          [N("Relu", ["x"], ["r"], "relu"), N("Reshape", ["r", "s1"], ["a"], "reshape"),
           N("Unsqueeze", ["a", "ax"], ["b"], "unsq"), N("Squeeze", ["b", "ax"], ["c"], "sq"),
           N("Flatten", ["c"], ["d"], "flatten"), N("Sigmoid", ["d"], ["y"], "sig")],
          {"x": (2, 3, 4)}, {"s1": np.array([6, 4], np.int64), "ax": np.array([1], np.int64)}),
    _shape_arith_case(),
    # the NHWC -> NCHW Transpose at a Keras export's input: the convs read the NHWC input in place
    _case("nhwc_input_into_strided_conv",
          [N("Transpose", ["x"], ["xt"], "in_t", perm=[0, 3, 1, 2]),
           N("Conv", ["xt", "w", "b"], ["c"], "conv", strides=[2, 2], pads=[0, 0, 1, 1]),
           N("Relu", ["c"], ["y"], "relu")],
          {"x": (1, 11, 10, 3)}, {"w": _w(20, 3, 3, 3), "b": _w(20)}),
    _case("nhwc_input_two_convs",
          [N("Transpose", ["x"], ["xt"], "in_t", perm=[0, 3, 1, 2]),
           N("Conv", ["xt", "w1"], ["c1"], "pointwise"),
           N("Conv", ["xt", "w3"], ["c3"], "dilated", dilations=[2, 2], pads=[2, 2, 2, 2]),
           N("Add", ["c1", "c3"], ["y"], "add")],
          {"x": (2, 7, 9, 5)}, {"w1": _w(6, 5, 1, 1), "w3": _w(6, 5, 3, 3)}),
    _case("nhwc_input_depthwise_stays",
          [N("Transpose", ["x"], ["xt"], "in_t", perm=[0, 3, 1, 2]),
           N("Conv", ["xt", "w"], ["y"], "conv", group=4, pads=[1, 1, 1, 1])],
          {"x": (1, 6, 6, 4)}, {"w": _w(4, 1, 3, 3)}),
    _case("nhwc_input_read_twice_stays",
          [N("Transpose", ["x"], ["xt"], "in_t", perm=[0, 3, 1, 2]),
           N("Conv", ["xt", "w"], ["c"], "conv", pads=[1, 1, 1, 1]), N("Add", ["c", "xt"], ["y"], "add")],
          {"x": (1, 6, 6, 3)}, {"w": _w(3, 3, 3, 3)}),
]


@pytest.mark.parametrize("case_id", [c.id for c in LAYOUT_CASES])
def test_layout_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id,ops", [
    ("nhwc_pair_cancels", ["FusedConv"]),
    ("one_channel_input_transpose_is_a_view", ["Reshape", "Conv"]),
    ("transpose_flatten_dense", ["GlobalAveragePool", "Reshape", "Gemm"]),
    ("pad_into_conv", ["Conv"]),
    ("pad_nonzero_value_stays", ["Pad", "Conv"]),
    ("pad_channels_stays", ["Pad", "Conv"]),
    ("view_chain", ["Relu", "Reshape", "Sigmoid"]),
    ("shape_arith_reshape", ["Relu", "Reshape"]),
    ("nhwc_input_into_strided_conv", ["FusedConv"]),
    ("nhwc_input_two_convs", ["Conv", "FusedConv"]),
    ("nhwc_input_depthwise_stays", ["Transpose", "Conv"]),
    ("nhwc_input_read_twice_stays", ["Transpose", "FusedConv"]),
])
def test_layout_host_graph(case_id, ops):
    assert [n.op for n in _host(case_id).nodes] == ops


def test_nhwc_input_read_in_place():
    """The convs read the Transpose's input with aotc_in_nhwc set, name the Transpose in their
    origin, and take the implicit GEMM (the one kernel that reads channels last)."""
    from aot.kernels.base import TargetTraits
    from aot.select import select_kernels

    g = _host("nhwc_input_two_convs")
    assert all(n.attrs.get("aotc_in_nhwc") == 1 and n.inputs[0] == "x" for n in g.nodes)
    assert sorted(n.sources() for n in g.nodes) == [("dilated", "in_t"), ("pointwise", "add", "in_t")]
    assert {k.kernel for nk in select_kernels(g, TargetTraits()).values() for k in nk.candidates} == \
        {"aotc_conv_implicit_f32"}


def test_pad_pads_add_to_the_conv_pads():
    conv = _host("pad_into_conv").nodes[0]
    assert conv.attrs["pads"] == [1, 2, 2, 1] and conv.sources() == ("pad", "conv")


def test_explain_lists_each_fold():
    from aot.compiler import partition_model
    from aot.partition.show import explain

    case = next(c for c in CASES if c.id == "conv_mul_add_relu")
    text = explain(partition_model(case.model).graph, {})
    assert "folded (node: the ONNX nodes it computes):\n  conv (Conv): conv, mul0, add1" in text


# --- the MLPerf Tiny networks as tf2onnx writes them (examples/tf2onnx_style.py) ---------------------------

def _model_case(name: str, folded: bool):
    model = tf2onnx_style.MODELS[name](folded)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    feeds = {"input_1": _rng.standard_normal(shape).astype(np.float32)}
    return Case(f"{name}{'_folded' if folded else ''}", model, feeds)


MODEL_CASES = [_model_case(name, False) for name in tf2onnx_style.MODELS]


@pytest.mark.parametrize("case_id", [c.id for c in MODEL_CASES])
def test_tf2onnx_style_model_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("name", list(tf2onnx_style.MODELS))
def test_tf2onnx_style_model_compiles_to_the_folded_networks_graph(name):
    ours = simplify(lower(tf2onnx_style.MODELS[name](False)), HOST_PIPELINE)
    folded = simplify(lower(tf2onnx_style.MODELS[name](True)), HOST_PIPELINE)
    assert [(n.op, n.attrs.get("activation")) for n in ours.nodes] == \
        [(n.op, n.attrs.get("activation")) for n in folded.nodes]
    assert "Mul" not in {n.op for n in ours.nodes}
