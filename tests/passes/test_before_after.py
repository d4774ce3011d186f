"""Every pass of aot/passes/, one at a time: a small graph in, the graph it must give out (its nodes in
order, what each reads and writes, the attributes and constants it sets), and a graph it must leave as
it is. No C is compiled: each graph is a few ONNX nodes imported by the frontend (so the attributes are
the canonical ones the passes see), then the single pass through run_passes, which verifies its result.

A graph is written one node a line, `Op(inputs) -> outputs`: a constant the pass made is `<new>`, an
omitted input `-`. The other tests of passes/ check the numbers against onnxruntime; these pin the
rewrite itself. test_every_pass_has_both_cases fails when a pass is added without its two cases here."""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from collections.abc import Callable

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import aot.passes
from aot.frontend import import_model
from aot.ir import Graph
from aot.kernels.conv import on_gemm_core
from aot.passes import (
    ChannelLayerNorm,
    ConvReadsNHWC,
    ConvWritesNHWC,
    DepthwiseAsConv,
    DropIdentity,
    FoldAffine,
    FoldBatchNorm,
    FoldChannelScale,
    FoldPad,
    FuseActivation,
    FuseElementwise,
    FuseEpilogue,
    FuseNorm,
    FuseResidualAdd,
    FuseSwishMean,
    LowerQDQ,
    MergeSummedProducts,
    Pass,
    PushTransposeDown,
    RemoveDeadNodes,
    SimplifyLayout,
    run_passes,
    verify_graph,
)
from aot.passes.quantized_io import integer_io

N = helper.make_node
_TYPES = {"float32": TensorProto.FLOAT, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8}
_rng = np.random.default_rng(49)

# pass name -> the kinds of case written for it below ("fires", "stays"), filled by @case
COVERED: dict[str, set[str]] = {}


def case(p: type | Callable, kind: str) -> Callable:
    """Mark a test as the `kind` case ("fires": the rewrite; "stays": where it must not fire) of pass `p`."""
    assert kind in ("fires", "stays")

    def mark(fn: Callable) -> Callable:
        COVERED.setdefault(p.__name__, set()).add(kind)
        return fn
    return mark


def f32(*shape: int, positive: bool = False) -> np.ndarray:
    v = _rng.standard_normal(shape).astype(np.float32)
    return np.abs(v) + np.float32(0.5) if positive else v


def graph(nodes: list, inputs: dict[str, tuple[str, list[int]]], outputs: list[str],
          consts: dict[str, np.ndarray] | None = None, opset: int = 13, ms: bool = False) -> Graph:
    """The frontend's IR of a model of `nodes` (inputs name -> (dtype, shape), initializers `consts`)."""
    g = helper.make_graph(nodes, "before",
                          [helper.make_tensor_value_info(k, _TYPES[d], s) for k, (d, s) in inputs.items()],
                          [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
                          [numpy_helper.from_array(v, k) for k, v in (consts or {}).items()])
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    model = helper.make_model(g, opset_imports=opsets)
    model.ir_version = 8
    return import_model(model, "m")


def form(g: Graph, before: Graph | None = None) -> list[str]:
    """One line per node: op, inputs, outputs; a constant that is not in `before` is <new>."""
    def name(t: str) -> str:
        if not t:
            return "-"
        return "<new>" if before is not None and g.tensors[t].is_const and t not in before.tensors else t
    return [f"{n.op}({', '.join(map(name, n.inputs))}) -> {', '.join(map(name, n.outputs))}" for n in g.nodes]


def run(p: Pass, g: Graph) -> Graph:
    """The pass alone, verified (run_passes), and the graph it was given left as it was (a pass is pure)."""
    seen = form(g)
    out = run_passes(g, [p])
    assert form(g) == seen, f"{p.name} changed the graph it was given"
    return out


def stays(p: Pass, g: Graph) -> Graph:
    out = run(p, g)
    assert form(out) == form(g), f"{p.name} rewrote a graph it must leave alone"
    assert [n.attrs for n in out.nodes] == [n.attrs for n in g.nodes]
    return out


def node(g: Graph, op: str):
    (n,) = [n for n in g.nodes if n.op == op]
    return n


# --- DropIdentity --------------------------------------------------------------------------------------

@case(DropIdentity, "fires")
def test_drop_identity_forwards_identity_and_dropout():
    g = graph([N("Relu", ["x"], ["a"], name="relu"), N("Identity", ["a"], ["b"], name="id"),
               N("Dropout", ["b"], ["c"], name="drop"), N("Sigmoid", ["c"], ["y"], name="sig")],
              {"x": ("float32", [1, 4])}, ["y"])
    assert form(g) == ["Relu(x) -> a", "Identity(a) -> b", "Identity(b) -> c", "Sigmoid(c) -> y"]
    out = run(DropIdentity(), g)
    assert form(out) == ["Relu(x) -> a", "Sigmoid(a) -> y"]
    assert "b" not in out.tensors and "c" not in out.tensors


@case(DropIdentity, "stays")
def test_drop_identity_keeps_the_one_that_names_a_graph_output():
    stays(DropIdentity(), graph([N("Relu", ["x"], ["a"], name="relu"), N("Identity", ["a"], ["y"], name="id")],
                                {"x": ("float32", [1, 4])}, ["y"]))


# --- RemoveDeadNodes -----------------------------------------------------------------------------------

@case(RemoveDeadNodes, "fires")
def test_remove_dead_nodes_drops_what_reaches_no_output():
    g = graph([N("Relu", ["x"], ["y"], name="relu"), N("Sigmoid", ["x"], ["d"], name="sig"),
               N("Neg", ["d"], ["e"], name="neg")], {"x": ("float32", [1, 4])}, ["y"])
    out = run(RemoveDeadNodes(), g)
    assert form(out) == ["Relu(x) -> y"]
    assert sorted(out.tensors) == ["x", "y"]


@case(RemoveDeadNodes, "stays")
def test_remove_dead_nodes_keeps_every_node_an_output_needs():
    stays(RemoveDeadNodes(), graph([N("Relu", ["x"], ["a"], name="relu"), N("Sigmoid", ["x"], ["b"], name="sig"),
                                    N("Add", ["a", "b"], ["y"], name="add")], {"x": ("float32", [1, 4])}, ["y"]))


# --- FoldBatchNorm -------------------------------------------------------------------------------------

def _conv_bn(extra: list | None = None, outputs: tuple[str, ...] = ("y",)) -> tuple[Graph, dict]:
    c = {"w": f32(3, 2, 3, 3), "b": f32(3), "s": f32(3), "t": f32(3), "m": f32(3), "v": f32(3, positive=True)}
    nodes = [N("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             N("BatchNormalization", ["c", "s", "t", "m", "v"], ["y"], name="bn", epsilon=1e-3)]
    return graph(nodes + (extra or []), {"x": ("float32", [1, 2, 5, 5])}, list(outputs), c), c


@case(FoldBatchNorm, "fires")
def test_fold_batchnorm_scales_the_conv_weights_and_shifts_its_bias():
    g, c = _conv_bn()
    out = run(FoldBatchNorm(), g)
    assert form(out, g) == ["Conv(x, <new>, <new>) -> y"]
    conv = out.nodes[0]
    assert conv.sources() == ("conv", "bn") and conv.attrs["pads"] == [1, 1, 1, 1]
    s = c["s"].astype(np.float64) / np.sqrt(c["v"].astype(np.float64) + 1e-3)
    np.testing.assert_allclose(out.const(conv.inputs[1]), c["w"] * s[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(out.const(conv.inputs[2]), (c["b"] - c["m"]) * s + c["t"], rtol=1e-5, atol=1e-6)


@case(FoldBatchNorm, "stays")
def test_fold_batchnorm_not_when_another_node_reads_the_conv():
    g, _ = _conv_bn([N("Relu", ["c"], ["z"], name="relu")], outputs=("y", "z"))
    assert form(stays(FoldBatchNorm(), g)) == ["Conv(x, w, b) -> c", "BatchNormalization(c, s, t, m, v) -> y",
                                               "Relu(c) -> z"]


# --- LowerQDQ ------------------------------------------------------------------------------------------

_QC = {"xs": np.array(0.05, np.float32), "xz": np.array(3, np.int8), "ws": np.array(0.02, np.float32),
       "wq": np.arange(-27, 27, dtype=np.int8).reshape(3, 2, 3, 3), "wz": np.array(0, np.int8),
       "ys": np.array(0.1, np.float32), "yz": np.array(-5, np.int8)}


def _qdq_conv(quantized_out: bool) -> Graph:
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="qx"),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dqx"),
             N("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], name="dqw")]
    if quantized_out:
        nodes += [N("Conv", ["xd", "wd"], ["c"], name="conv"), N("Relu", ["c"], ["r"], name="relu"),
                  N("QuantizeLinear", ["r", "ys", "yz"], ["yq"], name="qy"),
                  N("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dqy")]
    else:
        nodes += [N("Conv", ["xd", "wd"], ["y"], name="conv")]
    return graph(nodes, {"x": ("float32", [1, 2, 5, 5])}, ["y"], _QC)


@case(LowerQDQ, "fires")
def test_lower_qdq_makes_a_qlinearconv_with_the_relu_as_its_clamp():
    out = run(LowerQDQ(), _qdq_conv(quantized_out=True))
    assert form(out) == ["QuantizeLinear(x, xs, xz) -> xq", "QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, -) -> yq",
                         "DequantizeLinear(yq, ys, yz) -> y"]
    conv = node(out, "QLinearConv")
    assert (conv.attrs["qmin"], conv.attrs["qmax"]) == (-5, 127)  # Relu: nothing below the zero point
    assert conv.sources() == ("conv", "relu", "qy") and out.tensors["yq"].dtype == "int8"


@case(LowerQDQ, "stays")
def test_lower_qdq_leaves_a_conv_whose_output_is_not_quantized():
    """No QuantizeLinear after the Conv: it stays a float Conv (its constant weights' DQ folds to floats)."""
    out = run(LowerQDQ(), _qdq_conv(quantized_out=False))
    assert form(out) == ["QuantizeLinear(x, xs, xz) -> xq", "DequantizeLinear(xq, xs, xz) -> xd", "Conv(xd, wd) -> y"]
    np.testing.assert_array_equal(out.const("wd"), _QC["wq"].astype(np.float32) * np.float32(0.02))


# --- SimplifyLayout ------------------------------------------------------------------------------------

def _pad_conv(mode: str) -> Graph:
    return graph([N("Transpose", ["x"], ["t1"], name="to_nhwc", perm=[0, 2, 3, 1]),
                  N("Transpose", ["t1"], ["t2"], name="to_nchw", perm=[0, 3, 1, 2]),
                  N("Pad", ["t2", "pads"], ["p"], name="pad", mode=mode),
                  N("Conv", ["p", "w"], ["y"], name="conv", pads=[0, 1, 0, 1])],
                 {"x": ("float32", [1, 2, 6, 6])}, ["y"],
                 {"pads": np.array([0, 0, 2, 1, 0, 0, 2, 1], np.int64), "w": f32(3, 2, 3, 3)})


@case(SimplifyLayout, "fires")
def test_simplify_layout_cancels_transposes():
    """The two Transposes compute nothing: gone. The Pad stays (folding it into the conv is FoldPad's)."""
    g = _pad_conv("constant")
    assert [n.op for n in g.nodes] == ["Transpose", "Transpose", "Pad", "Conv"]
    out = run(SimplifyLayout(), g)
    assert form(out) == ["Pad(x) -> p", "Conv(p, w) -> y"]


# --- PushTransposeDown --------------------------------------------------------------------------------

def _tf2onnx_block(out_of_block: str = "Relu", reads: str = "a") -> Graph:
    """What tf2onnx writes between two Keras convs: the first conv's output back to NHWC, its BatchNorm as a
    per-channel Mul and Add, hard-swish (x * relu6(x + 3) / 6, reading x twice), a Pad, then NCHW again for the
    next conv; `out_of_block` reads the NHWC tensor `reads` too (a Relu moves with it, a Softmax over the channels
    does not)."""
    return graph([N("Transpose", ["x"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
                  N("Mul", ["t", "s"], ["m"], name="bn_mul"), N("Add", ["m", "b"], ["a"], name="bn_add"),
                  N("Add", ["a", "three"], ["a3"], name="hs_add"),
                  N("Clip", ["a3", "zero", "six"], ["c"], name="hs_clip"),
                  N("Mul", ["a", "c"], ["h"], name="hs_mul"), N("Mul", ["h", "sixth"], ["hs"], name="hs_div"),
                  N("Pad", ["hs", "pads"], ["p"], name="pad"),
                  N("Transpose", ["p"], ["u"], name="to_nchw", perm=[0, 3, 1, 2]),
                  N("Conv", ["u", "w"], ["y"], name="conv"), N(out_of_block, [reads], ["z"], name="side", axis=-1)
                  if out_of_block == "Softmax" else N(out_of_block, [reads], ["z"], name="side")],
                 {"x": ("float32", [1, 4, 6, 6])}, ["y", "z"],
                 {"s": f32(4), "b": f32(4), "three": np.float32(3), "zero": np.float32(0), "six": np.float32(6),
                  "sixth": np.float32(1 / 6), "pads": np.array([0, 1, 1, 0, 0, 1, 1, 0], np.int64),
                  "w": f32(2, 4, 3, 3)})


@case(PushTransposeDown, "fires")
def test_push_transpose_moves_nhwc_ops_between_the_convs_until_the_transposes_cancel():
    """Every op between the two Transposes moves above them (the per-channel constants in NCHW order, the Pad's
    pads too), the pair cancels, and the Relu that also read the NHWC tensor gets the Transpose after it."""
    g = _tf2onnx_block()
    out = run(PushTransposeDown(), g)
    assert [n.op for n in out.nodes] == ["Mul", "Add", "Add", "Clip", "Mul", "Mul", "Pad", "Conv", "Relu",
                                         "Transpose"], form(out, g)
    assert node(out, "Conv").inputs[0] == node(out, "Pad").outputs[0]
    bn_mul = next(n for n in out.nodes if n.name == "bn_mul")
    np.testing.assert_array_equal(out.const(bn_mul.inputs[1]), g.const("s").reshape(1, 1, 1, 4).transpose(0, 3, 1, 2))
    assert node(out, "Pad").attrs["pads"] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert node(out, "Transpose").outputs == ["z"] and node(out, "Transpose").attrs["perm"] == [0, 2, 3, 1]


@case(PushTransposeDown, "stays")
def test_push_transpose_stays_where_a_reader_it_cannot_move_past_reads_the_transpose():
    """A Softmax over the channels reads the Transpose's output too: it must stay for it, and a copy after each op
    that moved would transpose more than before, so nothing moves."""
    stays(PushTransposeDown(), _tf2onnx_block("Softmax", reads="t"))


@case(PushTransposeDown, "fires")
def test_push_transpose_moves_past_a_concat_and_with_pools_a_maxpool_run_channels_last():
    """Two NHWC tensors back to NCHW for a MaxPool and a Concat, then to NHWC again (a vendor's channels-last
    calls around host ops): the Concat's axis becomes the NHWC one and the pairs cancel; the MaxPool moves only
    with `pools`, marked channels last."""
    g = graph([N("Transpose", ["a"], ["an"], name="a_nchw", perm=[0, 3, 1, 2]),
               N("Transpose", ["b"], ["bn"], name="b_nchw", perm=[0, 3, 1, 2]),
               N("MaxPool", ["an"], ["m"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
               N("Concat", ["m", "bn"], ["c"], name="cat", axis=1),
               N("Transpose", ["c"], ["y"], name="to_nhwc", perm=[0, 2, 3, 1])],
              {"a": ("float32", [1, 8, 8, 3]), "b": ("float32", [1, 4, 4, 5])}, ["y"], {})
    out = run(PushTransposeDown(pools=True), g)
    assert form(out) == ["MaxPool(a) -> m__pre_transpose", "Concat(m__pre_transpose, b) -> y"], form(out, g)
    assert node(out, "MaxPool").attrs["aotc_in_nhwc"] == node(out, "MaxPool").attrs["aotc_out_nhwc"] == 1
    assert node(out, "Concat").attrs["axis"] == 3
    stays(PushTransposeDown(), g)  # the Concat reads the pool's NCHW output: without pools nothing moves


# --- DepthwiseAsConv ----------------------------------------------------------------------------------

def _tfl_depthwise(channels: int) -> Graph:
    """An int8 DEPTHWISE_CONV_2D of `channels` input channels, multiplier 4, a 3 x 3 window, as the TFLite import
    writes it."""
    from aot.ir import Node, Tensor
    from aot.ir import tflite_ops as tfl

    w = np.arange(9 * 4 * channels, dtype=np.int8).reshape(1, 3, 3, 4 * channels)
    tensors = {"x": Tensor("x", (1, 6, 6, channels), "int8"), "w": Tensor("w", w.shape, "int8", w),
               "y": Tensor("y", (1, 4, 4, 4 * channels), "int8")}
    attrs = {"kernel": [3, 3], "strides": [1, 1], "dilations": [1, 1], "pads": [0, 0, 0, 0], "y_min": -128,
             "y_max": 127, "y_shape": [1, 4, 4, 4 * channels], "x_zero": 0, "y_zero": 0,
             "mult": [1 << 30] * (4 * channels), "shift": [0] * (4 * channels)}
    return Graph("m", [Node(tfl.DEPTHWISE_CONV_2D, "dw", ["x", "w"], ["y"], attrs)], tensors, ["x"], ["y"])


@case(DepthwiseAsConv, "fires")
def test_depthwise_of_one_channel_becomes_a_conv():
    g = _tfl_depthwise(1)
    out = run(DepthwiseAsConv(), g)
    assert form(out, g) == ["TflConv2D(x, <new>) -> y"]
    w = out.tensors[out.nodes[0].inputs[1]].data
    assert w.shape == (4, 3, 3, 1) and np.array_equal(w[:, :, :, 0], g.tensors["w"].data[0].transpose(2, 0, 1))


@case(DepthwiseAsConv, "stays")
def test_depthwise_of_several_channels_stays():
    stays(DepthwiseAsConv(), _tfl_depthwise(2))


# --- FoldPad -------------------------------------------------------------------------------------------

@case(FoldPad, "fires")
def test_fold_pad_moves_a_zero_pad_into_the_conv():
    out = run(FoldPad(), run(SimplifyLayout(), _pad_conv("constant")))
    assert form(out) == ["Conv(x, w) -> y"]
    conv = out.nodes[0]
    assert conv.attrs["pads"] == [2, 2, 2, 2]  # the Pad's [2, 1 | 2, 1] on top of the conv's [0, 1 | 0, 1]
    assert "pad" in conv.sources() and "conv" in conv.sources()


@case(FoldPad, "stays")
def test_fold_pad_keeps_a_reflect_pad():
    g = run(SimplifyLayout(), _pad_conv("reflect"))
    assert form(stays(FoldPad(), g)) == ["Pad(x) -> p", "Conv(p, w) -> y"]


@case(SimplifyLayout, "stays")
def test_simplify_layout_keeps_a_reflect_pad_and_a_real_transpose():
    g = graph([N("Transpose", ["x"], ["t"], name="tr", perm=[0, 2, 3, 1]), N("Relu", ["t"], ["y"], name="relu"),
               N("Pad", ["x", "pads"], ["p"], name="pad", mode="reflect"),
               N("Conv", ["p", "w"], ["z"], name="conv")],
              {"x": ("float32", [1, 2, 6, 6])}, ["y", "z"],
              {"pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "w": f32(3, 2, 3, 3)})
    assert form(stays(SimplifyLayout(), g)) == ["Transpose(x) -> t", "Relu(t) -> y", "Pad(x) -> p", "Conv(p, w) -> z"]


# --- FoldAffine ----------------------------------------------------------------------------------------

def _conv_affine(mul: np.ndarray) -> tuple[Graph, dict]:
    c = {"w": f32(3, 2, 3, 3), "b": f32(3), "s": mul, "t": f32(1, 3, 1, 1)}
    return graph([N("Conv", ["x", "w", "b"], ["c"], name="conv"), N("Mul", ["c", "s"], ["m"], name="mul"),
                  N("Add", ["m", "t"], ["y"], name="add")], {"x": ("float32", [1, 2, 5, 5])}, ["y"], c), c


@case(FoldAffine, "fires")
def test_fold_affine_takes_a_per_channel_mul_and_add_into_the_conv():
    g, c = _conv_affine(f32(1, 3, 1, 1))
    out = run(FoldAffine(), g)
    assert form(out, g) == ["Conv(x, <new>, <new>) -> y"]
    conv = out.nodes[0]
    assert conv.sources() == ("conv", "mul", "add")
    s, t = c["s"].reshape(3).astype(np.float64), c["t"].reshape(3)
    np.testing.assert_allclose(out.const(conv.inputs[1]), c["w"] * s[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(out.const(conv.inputs[2]), c["b"] * s + t, rtol=1e-5, atol=1e-6)


@case(FoldAffine, "stays")
def test_fold_affine_not_a_mul_that_varies_over_the_plane():
    g, _ = _conv_affine(f32(1, 1, 3, 3))  # one factor per pixel, not per channel
    assert form(stays(FoldAffine(), g)) == ["Conv(x, w, b) -> c", "Mul(c, s) -> m", "Add(m, t) -> y"]


# --- MergeSummedProducts -------------------------------------------------------------------------------

def _cell(outputs: list[str]) -> tuple[Graph, dict]:
    c = {"W": f32(4, 5), "R": f32(3, 5), "b": f32(5)}
    return graph([N("MatMul", ["h", "R"], ["hr"], name="hr"), N("Gemm", ["x", "W", "hr"], ["xw"], name="gemm"),
                  N("Add", ["xw", "b"], ["y"], name="bias")],
                 {"x": ("float32", [1, 4]), "h": ("float32", [1, 3])}, outputs, c), c


@case(MergeSummedProducts, "fires")
def test_merge_summed_products_is_one_gemm_over_x_and_h():
    g, c = _cell(["y"])
    out = run(MergeSummedProducts(), g)
    assert form(out, g) == ["Concat(x, h) -> gemm_xh", "Gemm(gemm_xh, <new>, b) -> y"]
    gemm = node(out, "Gemm")
    assert node(out, "Concat").attrs == {"axis": 1} and out.tensors["gemm_xh"].shape == (1, 7)
    assert gemm.attrs == {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}
    assert set(gemm.sources()) == {"gemm", "hr"}
    np.testing.assert_array_equal(out.const(gemm.inputs[1]), np.concatenate([c["W"], c["R"]]))


@case(MergeSummedProducts, "stays")
def test_merge_summed_products_not_when_h_times_r_is_read_elsewhere():
    g, _ = _cell(["y", "hr"])
    stays(MergeSummedProducts(), g)


# --- FuseNorm ------------------------------------------------------------------------------------------

def _layer_norm(outputs: list[str]) -> tuple[Graph, dict]:
    c = {"two": np.array(2, np.float32), "eps": np.array(1e-5, np.float32), "gamma": f32(8), "beta": f32(8)}
    return graph([N("ReduceMean", ["x"], ["mu"], name="rm1", axes=[-1]), N("Sub", ["x", "mu"], ["d"], name="sub"),
                  N("Pow", ["d", "two"], ["d2"], name="pow"), N("ReduceMean", ["d2"], ["var"], name="rm2", axes=[-1]),
                  N("Add", ["var", "eps"], ["ve"], name="add_eps"), N("Sqrt", ["ve"], ["std"], name="sqrt"),
                  N("Div", ["d", "std"], ["n"], name="div"), N("Mul", ["n", "gamma"], ["ng"], name="mul"),
                  N("Add", ["ng", "beta"], ["y"], name="add")], {"x": ("float32", [2, 3, 8])}, outputs, c), c


@case(FuseNorm, "fires")
def test_fuse_norm_makes_one_layer_normalization():
    g, c = _layer_norm(["y"])
    out = run(FuseNorm(), g)
    assert form(out, g) == ["LayerNormalization(x, <new>, <new>) -> y"]
    ln = out.nodes[0]
    assert ln.attrs["axis"] == 2 and ln.attrs["rows"] == 6 and ln.attrs["n"] == 8
    assert math.isclose(ln.attrs["epsilon"], 1e-5, rel_tol=1e-6)
    assert ln.sources() == ("rm1", "sub", "pow", "rm2", "add_eps", "sqrt", "div", "mul", "add")
    np.testing.assert_array_equal(out.const(ln.inputs[1]), c["gamma"])
    np.testing.assert_array_equal(out.const(ln.inputs[2]), c["beta"])


@case(FuseNorm, "fires")
def test_fuse_norm_makes_one_gelu():
    g = graph([N("Div", ["x", "sqrt2"], ["s"], name="div"), N("Erf", ["s"], ["e"], name="erf"),
               N("Add", ["e", "one"], ["e1"], name="plus1"), N("Mul", ["x", "e1"], ["m"], name="mul"),
               N("Mul", ["m", "half"], ["y"], name="half")], {"x": ("float32", [2, 8])}, ["y"],
              {"sqrt2": np.array(math.sqrt(2), np.float32), "one": np.array(1, np.float32),
               "half": np.array(0.5, np.float32)})
    out = run(FuseNorm(), g)
    assert form(out) == ["Gelu(x) -> y"] and out.nodes[0].attrs == {"approximate": "none"}
    assert out.nodes[0].sources() == ("div", "erf", "plus1", "mul", "half")


def _gelu_tanh(outputs: list[str]) -> Graph:
    """Keras' gelu(approximate=True) as tf2onnx writes it."""
    return graph([N("Pow", ["x", "three"], ["x3"], name="pow"), N("Mul", ["c2", "x3"], ["m"], name="mul_c2"),
                  N("Add", ["x", "m"], ["w"], name="add_x"), N("Mul", ["c1", "w"], ["u"], name="mul_c1"),
                  N("Tanh", ["u"], ["t"], name="tanh"), N("Add", ["one", "t"], ["t1"], name="plus1"),
                  N("Mul", ["half", "x"], ["h"], name="half"), N("Mul", ["h", "t1"], ["y"], name="mul")],
                 {"x": ("float32", [2, 8])}, outputs,
                 {"three": np.array(3, np.float32), "c2": np.array(0.044715, np.float32),
                  "c1": np.array(math.sqrt(2 / math.pi), np.float32), "one": np.array(1, np.float32),
                  "half": np.array(0.5, np.float32)})


@case(FuseNorm, "fires")
def test_fuse_norm_makes_one_gelu_of_the_tanh_form():
    out = run(FuseNorm(), _gelu_tanh(["y"]))
    assert form(out) == ["Gelu(x) -> y"] and out.nodes[0].attrs == {"approximate": "tanh"}
    assert out.nodes[0].sources() == ("half", "pow", "mul_c2", "add_x", "mul_c1", "tanh", "plus1", "mul")


@case(FuseNorm, "stays")
def test_fuse_norm_not_the_tanh_form_when_its_argument_is_an_output():
    stays(FuseNorm(), _gelu_tanh(["y", "u"]))


@case(FuseNorm, "stays")
def test_fuse_norm_not_when_the_centred_values_are_an_output():
    g, _ = _layer_norm(["y", "d"])
    stays(FuseNorm(), g)


# --- FuseActivation ------------------------------------------------------------------------------------

@case(FuseActivation, "fires")
def test_fuse_activation_makes_swish():
    g = graph([N("Sigmoid", ["x"], ["s"], name="gate"), N("Mul", ["s", "x"], ["y"], name="mul")],
              {"x": ("float32", [1, 8])}, ["y"])
    out = run(FuseActivation(), g)
    assert form(out) == ["Swish(x) -> y"] and out.nodes[0].attrs == {"alpha": 1.0}
    assert out.nodes[0].sources() == ("gate", "mul") and "s" not in out.tensors


def _decomposed_hard_swish(scaled_first: bool, divide: bool, outputs: tuple[str, ...] = ("y",)) -> Graph:
    """tf2onnx's hard-swish: x * (relu6(x + 3) / 6), or (x * relu6(x + 3)) / 6; * 1/6 or / 6."""
    sixth = [N("Div", ["c", "six"], ["g"], name="sixth")] if divide else [N("Mul", ["one_sixth", "c"], ["g"],
                                                                           name="sixth")]
    head = [N("Add", ["three", "x"], ["a"], name="plus3"), N("Clip", ["a", "zero", "six"], ["c"], name="relu6")]
    if scaled_first:
        tail = [*sixth, N("Mul", ["x", "g"], ["y"], name="mul")]
    else:
        tail = [N("Mul", ["c", "x"], ["m"], name="mul"),
                N("Div", ["m", "six"], ["y"], name="sixth") if divide else
                N("Mul", ["m", "one_sixth"], ["y"], name="sixth")]
    return graph([*head, *tail], {"x": ("float32", [1, 8])}, list(outputs),
                 {"three": np.float32(3), "zero": np.float32(0), "six": np.float32(6),
                  "one_sixth": np.float32(1 / 6)})


def test_fuse_activation_makes_hard_swish_of_tf2onnx_forms():
    for scaled_first in (True, False):
        for divide in (True, False):
            out = run(FuseActivation(), _decomposed_hard_swish(scaled_first, divide))
            assert form(out) == ["HardSwish(x) -> y"], (scaled_first, divide, form(out))
            assert set(out.nodes[0].sources()) == {"plus3", "relu6", "sixth", "mul"}


def test_fuse_activation_keeps_a_hard_swish_whose_inner_tensor_is_an_output():
    stays(FuseActivation(), _decomposed_hard_swish(True, False, ("y", "c")))


@case(FuseActivation, "stays")
def test_fuse_activation_not_when_the_gate_is_an_output():
    stays(FuseActivation(), graph([N("Sigmoid", ["x"], ["s"], name="gate"), N("Mul", ["s", "x"], ["y"], name="mul")],
                                  {"x": ("float32", [1, 8])}, ["y", "s"]))


# --- FuseEpilogue --------------------------------------------------------------------------------------

def _conv_add_relu(outputs: list[str]) -> Graph:
    return graph([N("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                  N("Add", ["c", "r"], ["a"], name="add"), N("Relu", ["a"], ["y"], name="relu")],
                 {"x": ("float32", [1, 2, 5, 5]), "r": ("float32", [1, 3, 5, 5])}, outputs,
                 {"w": f32(3, 2, 3, 3), "b": f32(3)})


@case(FuseEpilogue, "fires")
def test_fuse_epilogue_takes_the_residual_add_and_the_relu():
    out = run(FuseEpilogue(), _conv_add_relu(["y"]))
    assert form(out) == ["FusedConv(x, w, b, r) -> y"]
    fused = out.nodes[0]
    assert fused.attrs["activation"] == "Relu" and fused.attrs["activation_params"] == []
    assert fused.attrs["pads"] == [1, 1, 1, 1] and fused.sources() == ("conv", "add", "relu")


@case(FuseEpilogue, "stays")
def test_fuse_epilogue_not_when_the_conv_output_is_an_output():
    stays(FuseEpilogue(), _conv_add_relu(["y", "c"]))


# --- FuseResidualAdd -----------------------------------------------------------------------------------

def _qconv_add(outputs: list[str]) -> Graph:
    c = {"xs": np.array(0.05, np.float32), "xz": np.array(1, np.int8), "w": _rng.integers(-9, 9, (3, 2, 3, 3), np.int8),
         "ws": np.array(0.02, np.float32), "wz": np.array(0, np.int8), "ys": np.array(0.1, np.float32),
         "yz": np.array(-2, np.int8), "b": _rng.integers(-50, 50, 3, np.int32), "rs": np.array(0.07, np.float32),
         "rz": np.array(4, np.int8), "os": np.array(0.12, np.float32), "oz": np.array(0, np.int8)}
    return graph([N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["c"], name="conv",
                    pads=[1, 1, 1, 1]),
                  N("QLinearAdd", ["c", "ys", "yz", "r", "rs", "rz", "os", "oz"], ["y"], name="add",
                    domain="com.microsoft")],
                 {"x": ("int8", [1, 2, 5, 5]), "r": ("int8", [1, 3, 5, 5])}, outputs, c, ms=True)


@case(FuseResidualAdd, "fires")
def test_fuse_residual_add_writes_the_sum_from_the_conv():
    out = run(FuseResidualAdd(), _qconv_add(["y"]))
    assert form(out) == ["QLinearConvAdd(x, xs, xz, w, ws, wz, ys, yz, b, r, ys, yz, rs, rz, os, oz) -> y"]
    fused = out.nodes[0]
    assert fused.attrs["conv_is_a"] == 1 and fused.attrs["pads"] == [1, 1, 1, 1]
    assert fused.sources() == ("conv", "add") and "c" not in out.tensors


@case(FuseResidualAdd, "stays")
def test_fuse_residual_add_not_when_the_conv_output_is_an_output():
    stays(FuseResidualAdd(), _qconv_add(["y", "c"]))


# --- FuseElementwise -----------------------------------------------------------------------------------

@case(FuseElementwise, "fires")
def test_fuse_elementwise_makes_one_loop_of_a_tree():
    g = graph([N("Add", ["a", "b"], ["t"], name="add"), N("Sigmoid", ["t"], ["s"], name="sig"),
               N("Mul", ["s", "x"], ["m"], name="mul"), N("Sub", ["m", "half"], ["y"], name="sub")],
              {"a": ("float32", [2, 16]), "b": ("float32", [2, 16]), "x": ("float32", [2, 16])}, ["y"],
              {"half": np.array(0.5, np.float32)})
    out = run(FuseElementwise(), g)
    assert form(out) == ["FusedElementwise(a, b, x) -> y"]
    assert out.nodes[0].attrs["program"] == (("Add", (("in", 0), ("in", 1))), ("Sigmoid", (("v", 0),)),
                                             ("Mul", (("v", 1), ("in", 2))), ("Sub", (("v", 2), ("const", 0.5))))
    assert out.nodes[0].sources() == ("add", "sig", "mul", "sub")
    assert not {"t", "s", "m"} & set(out.tensors)


@case(FuseElementwise, "stays")
def test_fuse_elementwise_not_over_a_broadcast_operand():
    """b broadcasts (a run-time [2, 1]): the Add is no loop over one shape, and the Sigmoid alone is no tree."""
    stays(FuseElementwise(), graph([N("Add", ["a", "b"], ["t"], name="add"), N("Sigmoid", ["t"], ["y"], name="sig")],
                                   {"a": ("float32", [2, 16]), "b": ("float32", [2, 1])}, ["y"]))


# --- FuseSwishMean ------------------------------------------------------------------------------------

def _swish_mean(axes: list[int]) -> Graph:
    """A SiLU read by a ReduceMean over `axes` and by a Mul (squeeze-excite's shape, without its convs)."""
    return graph([N("Swish", ["x"], ["s"], name="swish", alpha=1.0),
                  N("ReduceMean", ["s", "axes"], ["m"], name="mean", keepdims=1),
                  N("Mul", ["s", "m"], ["y"], name="scale")],
                 {"x": ("float32", [1, 4, 3, 5])}, ["y"], {"axes": np.array(axes, np.int64)}, opset=24)


@case(FuseSwishMean, "fires")
def test_fuse_swish_mean_writes_the_means_with_the_silu():
    out = run(FuseSwishMean(), _swish_mean([2, 3]))
    assert form(out) == ["SwishMean(x) -> s, m", "Mul(s, m) -> y"]
    fused = out.nodes[0]
    assert fused.attrs == {"alpha": 1.0, "keepdims": 1} and fused.sources() == ("swish", "mean")


@case(FuseSwishMean, "stays")
def test_fuse_swish_mean_not_over_the_channels_too():
    stays(FuseSwishMean(), _swish_mean([1, 2, 3]))


# --- FoldChannelScale ---------------------------------------------------------------------------------

def _scaled_project(hw: int) -> Graph:
    """x [1, 24, hw, hw] times a run-time scale s [1, 24, 1, 1], read by a 1 x 1 conv 24 -> 8 (squeeze-excite's
    scale and the project conv after it)."""
    return graph([N("Sigmoid", ["g"], ["s"], name="gate"), N("Mul", ["x", "s"], ["xs"], name="scale"),
                  N("Conv", ["xs", "w", "b"], ["y"], name="project", kernel_shape=[1, 1])],
                 {"x": ("float32", [1, 24, hw, hw]), "g": ("float32", [1, 24, 1, 1])}, ["y"],
                 {"w": f32(8, 24, 1, 1), "b": f32(8)})


@case(FoldChannelScale, "fires")
def test_fold_channel_scale_scales_the_weights_on_a_large_plane():
    out = run(FoldChannelScale(on_gemm_core), _scaled_project(28))
    assert form(out) == ["Sigmoid(g) -> s", "Mul(w, s) -> w__scaled", "Conv(x, w__scaled, b) -> y"]
    assert "xs" not in out.tensors and out.nodes[2].sources() == ("project", "scale")


@case(FoldChannelScale, "stays")
def test_fold_channel_scale_not_where_the_conv_packs_its_weights():
    """3 x 3 positions: aotc_conv_pointwise_t_f32, whose W^T is packed at compile time."""
    stays(FoldChannelScale(on_gemm_core), _scaled_project(3))


# --- ChannelLayerNorm ---------------------------------------------------------------------------------

def _layer_norm_2d(extra: list, outputs: list[str]) -> Graph:
    """timm's LayerNorm2d as torch exports it: NCHW -> NHWC, LayerNormalization over C, back to NCHW."""
    return graph([N("Transpose", ["x"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
                  N("LayerNormalization", ["t", "s", "b"], ["u"], name="ln", axis=-1, epsilon=1e-6),
                  N("Transpose", ["u"], ["y"], name="to_nchw", perm=[0, 3, 1, 2]), *extra],
                 {"x": ("float32", [1, 5, 3, 7])}, outputs, {"s": f32(5), "b": f32(5)}, opset=17)


@case(ChannelLayerNorm, "fires")
def test_channel_layer_norm_normalises_nchw_in_place_of_the_transposes():
    g = _layer_norm_2d([], ["y"])
    out = run(ChannelLayerNorm(), g)
    assert form(out, g) == ["LayerNormalization(x, <new>, <new>) -> y"]
    ln = out.nodes[0]
    assert (ln.attrs["axis"], ln.attrs["rows"], ln.attrs["n"], ln.attrs["aotc_inner"]) == (1, 1, 5, 21)
    assert ln.sources() == ("to_nhwc", "ln", "to_nchw")
    np.testing.assert_array_equal(out.const(ln.inputs[1]), g.const("s"))
    assert "t" not in out.tensors and "u" not in out.tensors


@case(ChannelLayerNorm, "stays")
def test_channel_layer_norm_not_when_another_node_reads_the_normalised_nhwc():
    stays(ChannelLayerNorm(), _layer_norm_2d([N("Relu", ["u"], ["z"], name="relu")], ["y", "z"]))


# --- ConvReadsNHWC -------------------------------------------------------------------------------------

def _nhwc_in(extra: list, outputs: list[str], group: int = 1) -> Graph:
    return graph([N("Transpose", ["x"], ["t"], name="to_nchw", perm=[0, 3, 1, 2]),
                  N("Conv", ["t", "w"], ["y"], name="conv", group=group), *extra],
                 {"x": ("float32", [1, 6, 6, 2])}, outputs, {"w": f32(2, 2 // group, 3, 3)})


@case(ConvReadsNHWC, "fires")
def test_conv_reads_nhwc_reads_the_input_in_place_of_the_transpose():
    out = run(ConvReadsNHWC(), _nhwc_in([], ["y"]))
    assert form(out) == ["Conv(x, w) -> y"]
    assert out.nodes[0].attrs["aotc_in_nhwc"] == 1 and out.nodes[0].sources() == ("conv", "to_nchw")
    assert "t" not in out.tensors


@case(ConvReadsNHWC, "stays")
def test_conv_reads_nhwc_not_when_another_node_reads_the_transpose():
    stays(ConvReadsNHWC(), _nhwc_in([N("Relu", ["t"], ["z"], name="relu")], ["y", "z"]))


# --- ConvWritesNHWC ------------------------------------------------------------------------------------

def _nhwc_out(group: int) -> Graph:
    return graph([N("Conv", ["x", "w"], ["c"], name="conv", group=group), N("Relu", ["c"], ["r"], name="relu"),
                  N("Transpose", ["r"], ["y"], name="to_nhwc", perm=[0, 2, 3, 1])],
                 {"x": ("float32", [1, 2, 6, 6])}, ["y"], {"w": f32(2, 2 // group, 3, 3)})


@case(ConvWritesNHWC, "fires")
def test_conv_writes_nhwc_stores_channels_last_and_the_relu_follows():
    out = run(ConvWritesNHWC(), _nhwc_out(group=1))
    assert form(out) == ["Conv(x, w) -> c_nhwc", "Relu(c_nhwc) -> y"]
    assert out.nodes[0].attrs["aotc_out_nhwc"] == 1 and out.nodes[0].sources() == ("conv", "to_nhwc")
    assert out.tensors["c_nhwc"].shape == out.tensors["y"].shape == (1, 4, 4, 2)


@case(ConvWritesNHWC, "stays")
def test_conv_writes_nhwc_not_for_a_grouped_conv():
    stays(ConvWritesNHWC(), _nhwc_out(group=2))


# --- integer_io (--quantized-io) -----------------------------------------------------------------------

def _q_io(scale: np.ndarray, zero: np.ndarray) -> Graph:
    return graph([N("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q"),
                  N("Transpose", ["xq"], ["tq"], name="tr", perm=[1, 0]),
                  N("DequantizeLinear", ["tq", "s", "z"], ["y"], name="dq", axis=0)],
                 {"x": ("float32", [4, 4])}, ["y"], {"s": scale, "z": zero})


@case(integer_io, "fires")
def test_integer_io_makes_the_quantized_boundary_integer():
    out, notes = integer_io(_q_io(np.array(0.25, np.float32), np.array(-3, np.int8)))
    verify_graph(out)
    assert form(out) == ["Transpose(x) -> y"] and notes == []
    assert (out.tensors["x"].dtype, out.tensors["y"].dtype) == ("int8", "int8")
    assert out.info.io_quantization == {"x": {"scale": 0.25, "zero_point": -3}, "y": {"scale": 0.25, "zero_point": -3}}
    assert out.info.quantized_io == {"inputs": ["x"], "outputs": ["y"], "notes": []}


@case(integer_io, "stays")
def test_integer_io_keeps_per_channel_boundaries_float():
    g = _q_io(np.full(4, 0.25, np.float32), np.zeros(4, np.int8))
    out, notes = integer_io(g)
    assert form(out) == form(g) and out.tensors["x"].dtype == out.tensors["y"].dtype == "float32"
    assert notes == ["input 'x' stays float32: node 'q' (QuantizeLinear) is not per-tensor",
                     "output 'y' stays float32: node 'dq' (DequantizeLinear) is not per-tensor"]


# --- every pass has both --------------------------------------------------------------------------------

def _passes() -> set[str]:
    """Every Pass of aot/passes/ (a class defined in one of its modules), and integer_io, the one rewrite
    outside the pipelines (it returns notes beside the graph)."""
    found = {"integer_io"}
    for mod in pkgutil.iter_modules(aot.passes.__path__):
        m = importlib.import_module(f"aot.passes.{mod.name}")
        found |= {name for name, obj in inspect.getmembers(m, inspect.isclass)
                  if issubclass(obj, Pass) and obj is not Pass and obj.__module__ == m.__name__}
    return found


def test_every_pass_has_both_cases():
    passes = _passes()
    assert len(passes) >= 15
    missing = {p: {"fires", "stays"} - COVERED.get(p, set()) for p in passes}
    assert not {p: k for p, k in missing.items() if k}, "passes without a before/after case here"

