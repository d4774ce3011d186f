"""FoldPad (issue 53): explicit pads folded into the conv, depthwise conv or pool that reads them. The pass on
hand-made graphs (graph before -> graph after, and where it must leave the Pad), ONNX models against
onnxruntime (float pools, QLinearConv of a QOperator model's integer Pad), and a TFLite model whose PADs
go: fewer nodes and a smaller arena. tests/frontend/test_tflite.py runs tests/models/tflite/padded_*.tflite
against LiteRT's reference kernels (bit-exact for int8, with ASan and UBSan too) and
tests/targets/test_tflite_cortex_m.py on the M4's DSP paths."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import model_case, shared_build, tensor_type

from aot.ir import Graph, Node, Tensor
from aot.ir import tflite_ops as tfl
from aot.passes import FoldPad, run_passes

TFLITE = Path(__file__).resolve().parents[1] / "models" / "tflite"


def _tfl_conv(op: str, x: str, y: str, name: str, y_shape: tuple, x_zero: int = -5, pads=(0, 0),
              kernel=(3, 3), strides=(2, 2)) -> Node:
    return Node(op, name, [x, f"{name}_w"], [y], {
        "kernel": list(kernel), "strides": list(strides), "dilations": [1, 1], "pads": list(pads), "x_zero": x_zero,
        "y_zero": 3, "y_min": -128, "y_max": 127, "y_shape": list(y_shape), "mult": [1 << 30] * y_shape[-1],
        "shift": [0] * y_shape[-1]})


def _tfl_pool(op: str, x: str, y: str, name: str, y_shape: tuple, kernel=(3, 3), strides=(2, 2)) -> Node:
    return Node(op, name, [x], [y], {"kernel": list(kernel), "strides": list(strides), "pads": [0, 0],
                                     "y_min": -128, "y_max": 127, "y_shape": list(y_shape)})


def _graph(nodes: list[Node], shapes: dict[str, tuple], outputs: list[str], dtype: str = "int8") -> Graph:
    tensors = {k: Tensor(k, s, dtype) for k, s in shapes.items()}
    for n in nodes:
        if n.op in (tfl.CONV_2D, tfl.DEPTHWISE_CONV_2D):
            c = shapes[n.inputs[0]][-1]
            oc = n.attrs["y_shape"][-1]
            w = np.ones((1 if n.op == tfl.DEPTHWISE_CONV_2D else oc, 3, 3, oc if n.op == tfl.DEPTHWISE_CONV_2D else c),
                        np.int8)
            tensors[n.inputs[1]] = Tensor(n.inputs[1], w.shape, "int8", w)
    return Graph(name="g", nodes=nodes, tensors=tensors, inputs=["x"], outputs=outputs)


def _pad(x: str, y: str, pads: list[int], value: float, name: str = "pad") -> Node:
    return Node("Pad", name, [x], [y], {"pads": pads, "mode": "constant", "value": value})


def _fold(g: Graph) -> Graph:
    return run_passes(g, [FoldPad()])


def _ops(g: Graph) -> list[str]:
    return [n.op for n in g.nodes]


# NHWC [1, 12, 12, 8] padded by 1 on every side (PyTorch's) -> a stride-2 3x3 depthwise conv -> [1, 6, 6, 8]
_NHWC_PAD = [0, 1, 1, 0, 0, 1, 1, 0]
_SHAPES = {"x": (1, 12, 12, 8), "xp": (1, 14, 14, 8), "y": (1, 6, 6, 8), "z": (1, 6, 6, 8)}


def test_tfl_depthwise_takes_the_pad():
    g = _graph([_pad("x", "xp", _NHWC_PAD, -5), _tfl_conv(tfl.DEPTHWISE_CONV_2D, "xp", "y", "dw", (1, 6, 6, 8))],
               _SHAPES, ["y"])
    after = _fold(g)
    dw, = after.nodes
    assert dw.op == tfl.DEPTHWISE_CONV_2D and dw.inputs[0] == "x" and dw.attrs["pads"] == [1, 1]
    assert dw.attrs["y_shape"] == [1, 6, 6, 8] and dw.sources() == ("pad", "dw") and "xp" not in after.tensors
    assert g.nodes[1].inputs[0] == "xp"  # the pass works on a copy


def test_tfl_conv_adds_the_pad_to_its_own_and_keeps_asymmetric_pads():
    """SAME's [1, 0] plus a Pad of (2, 0) rows and (3, 1) columns: [3, 3]; the bottom and right follow from
    the output size."""
    g = _graph([_pad("x", "xp", [0, 2, 3, 0, 0, 0, 1, 0], -5),
                _tfl_conv(tfl.CONV_2D, "xp", "y", "conv", (1, 7, 8, 8), pads=(1, 0))],
               {"x": (1, 12, 12, 8), "xp": (1, 14, 16, 8), "y": (1, 7, 8, 8)}, ["y"])
    conv, = _fold(g).nodes
    assert conv.inputs[0] == "x" and conv.attrs["pads"] == [3, 3]


@pytest.mark.parametrize(("why", "pads", "value", "outputs"), [
    ("value not the zero point", _NHWC_PAD, 0, ["y"]),
    ("pads channels", [0, 1, 1, 1, 0, 1, 1, 0], -5, ["y"]),
    ("negative pads (a crop)", [0, 2, 2, 0, 0, -1, -1, 0], -5, ["y"]),
    ("padded tensor is a graph output", _NHWC_PAD, -5, ["y", "xp"]),
])
def test_tfl_pad_stays(why, pads, value, outputs):
    shapes = dict(_SHAPES, xp=(1, 12 + pads[1] + pads[5], 12 + pads[2] + pads[6], 8 + pads[3] + pads[7]))
    g = _graph([_pad("x", "xp", pads, value), _tfl_conv(tfl.DEPTHWISE_CONV_2D, "xp", "y", "dw", (1, 6, 6, 8))],
               shapes, outputs)
    assert _ops(_fold(g)) == ["Pad", tfl.DEPTHWISE_CONV_2D], why


def test_pad_read_by_two_convs_goes_when_both_take_it():
    nodes = [_pad("x", "xp", _NHWC_PAD, -5), _tfl_conv(tfl.DEPTHWISE_CONV_2D, "xp", "y", "dw", (1, 6, 6, 8)),
             _tfl_conv(tfl.CONV_2D, "xp", "z", "conv", (1, 6, 6, 8))]
    after = _fold(_graph(nodes, _SHAPES, ["y", "z"]))
    assert _ops(after) == [tfl.DEPTHWISE_CONV_2D, tfl.CONV_2D]
    assert all(n.inputs[0] == "x" and n.attrs["pads"] == [1, 1] for n in after.nodes)


def test_pad_stays_when_one_reader_cannot_take_it():
    """TFLite's AVERAGE_POOL_2D leaves the padding out of its count: a Pad before it is not foldable, so
    the depthwise conv reading the same Pad keeps reading the padded copy."""
    nodes = [_pad("x", "xp", _NHWC_PAD, -5), _tfl_conv(tfl.DEPTHWISE_CONV_2D, "xp", "y", "dw", (1, 6, 6, 8)),
             _tfl_pool(tfl.AVERAGE_POOL_2D, "xp", "z", "avg", (1, 6, 6, 8))]
    after = _fold(_graph(nodes, _SHAPES, ["y", "z"]))
    assert _ops(after) == ["Pad", tfl.DEPTHWISE_CONV_2D, tfl.AVERAGE_POOL_2D]
    assert after.nodes[1].inputs[0] == "xp" and after.nodes[1].attrs["pads"] == [0, 0]


@pytest.mark.parametrize(("y_min", "value", "pads", "kernel", "folds"), [
    (-5, -5, _NHWC_PAD, 3, True),        # after a RELU: nothing is below the zero point
    (-128, -128, _NHWC_PAD, 3, True),    # the lowest int8 never wins a max
    (-128, -5, _NHWC_PAD, 3, False),     # x may hold less than the padding
    (-5, -5, [0, 3, 3, 0, 0, 3, 3, 0], 3, False),  # the first window lies in the padding alone
])
def test_tfl_max_pool_takes_a_pad_that_never_wins(y_min, value, pads, kernel, folds):
    conv = _tfl_conv(tfl.CONV_2D, "x0", "x", "relu_conv", (1, 12, 12, 8), strides=(1, 1), pads=(1, 1))
    conv.attrs["y_min"] = y_min
    h = 12 + pads[1] + pads[5]
    out = (h - kernel) // 2 + 1
    nodes = [conv, _pad("x", "xp", pads, value), _tfl_pool(tfl.MAX_POOL_2D, "xp", "y", "max", (1, out, out, 8),
                                                           kernel=(kernel, kernel))]
    g = _graph(nodes, {"x0": (1, 12, 12, 8), "x": (1, 12, 12, 8), "xp": (1, h, h, 8), "y": (1, out, out, 8)}, ["y"])
    g.inputs = ["x0"]
    after = _fold(g)
    assert _ops(after) == [tfl.CONV_2D, tfl.MAX_POOL_2D] if folds else [tfl.CONV_2D, "Pad", tfl.MAX_POOL_2D]
    if folds:
        assert after.nodes[1].attrs["pads"] == [pads[1], pads[2]]


def _float_graph(nodes: list[Node], shapes: dict[str, tuple], outputs: list[str]) -> Graph:
    g = _graph(nodes, shapes, outputs, "float32")
    for n in nodes:
        if n.op == "Conv":
            w = np.ones((4, shapes[n.inputs[0]][1], 3, 3), np.float32)
            g.tensors[n.inputs[1]] = Tensor(n.inputs[1], w.shape, "float32", w)
    return g


def _nchw_window(op: str, x: str, y: str, **attrs) -> Node:
    base = {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [1, 1], "pads": [0, 0, 0, 0]}
    if op == "Conv":
        base.update(group=1)
        return Node(op, op.lower(), [x, "w"], [y], dict(base, **attrs))
    base.update(ceil_mode=0, **({"count_include_pad": 0} if op == "AveragePool" else {}))
    return Node(op, op.lower(), [x], [y], dict(base, **attrs))


def test_transpose_between_pad_and_conv_reads_the_unpadded_tensor():
    """The TFLite float import pads the NHWC input, then transposes it to NCHW for the Conv: the Transpose
    now reads the input, its output loses the pads, the Conv takes them (permuted to NCHW)."""
    nodes = [_pad("x", "xp", [0, 2, 1, 0, 0, 0, 3, 0], 0.0),
             Node("Transpose", "t", ["xp"], ["xt"], {"perm": [0, 3, 1, 2]}),
             _nchw_window("Conv", "xt", "y", pads=[1, 0, 0, 0])]
    g = _float_graph(nodes, {"x": (1, 9, 8, 3), "xp": (1, 11, 12, 3), "xt": (1, 3, 11, 12), "y": (1, 4, 5, 5)},
                     ["y"])
    after = _fold(g)
    assert _ops(after) == ["Transpose", "Conv"]
    assert after.nodes[0].inputs == ["x"] and after.tensors["xt"].shape == (1, 3, 9, 8)
    assert after.nodes[1].attrs["pads"] == [3, 1, 0, 3]


@pytest.mark.parametrize(("op", "attrs", "value", "after"), [
    ("AveragePool", {}, 0.0, {"pads": [1, 1, 1, 1], "count_include_pad": 1}),
    ("AveragePool", {"pads": [1, 0, 0, 1], "count_include_pad": 1}, 0.0, {"pads": [2, 1, 1, 2]}),
    ("AveragePool", {"pads": [1, 0, 0, 1]}, 0.0, None),   # its own pads are left out of the count
    ("AveragePool", {"ceil_mode": 1}, 0.0, None),
    ("AveragePool", {}, 0.5, None),
    ("MaxPool", {}, -math.inf, {"pads": [1, 1, 1, 1]}),
    ("MaxPool", {}, 0.0, None),                           # x is not known to be >= 0 here
    ("Conv", {}, 0.0, {"pads": [1, 1, 1, 1]}),
    ("Conv", {}, 1.0, None),
])
def test_float_window_ops(op, attrs, value, after):
    nodes = [_pad("x", "xp", [0, 0, 1, 1, 0, 0, 1, 1], value), _nchw_window(op, "xp", "y", **attrs)]
    oc = 4 if op == "Conv" else 3
    g = _float_graph(nodes, {"x": (1, 3, 9, 9), "xp": (1, 3, 11, 11), "y": (1, oc, 5, 5)}, ["y"])
    folded = _fold(g)
    if after is None:
        assert _ops(folded) == ["Pad", op]
    else:
        assert _ops(folded) == [op] and folded.nodes[0].inputs[0] == "x"
        assert {k: folded.nodes[0].attrs[k] for k in after} == after


def test_max_pool_after_relu_takes_a_zero_pad():
    nodes = [Node("Relu", "relu", ["x"], ["r"]), _pad("r", "rp", [0, 0, 1, 1, 0, 0, 1, 1], 0.0),
             _nchw_window("MaxPool", "rp", "y")]
    g = _float_graph(nodes, {"x": (1, 3, 9, 9), "r": (1, 3, 9, 9), "rp": (1, 3, 11, 11), "y": (1, 3, 5, 5)}, ["y"])
    assert _ops(_fold(g)) == ["Relu", "MaxPool"]


# --- against onnxruntime ----------------------------------------------------------------------------------

_rng = np.random.default_rng(53)


def _float_case(case_id: str, nodes: list, consts: dict[str, np.ndarray], shape=(1, 3, 9, 10)):
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", tensor_type("float32"), shape)],
                              [helper.make_tensor_value_info("y", tensor_type("float32"), None)],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return model_case(case_id, graph, {"x": _rng.standard_normal(shape).astype(np.float32)})


def _qlinear_case(case_id: str, value: int):
    """A QOperator model's integer Pad (value: the input's zero point, 131) before a QLinearConv."""
    w = _rng.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8)
    consts = {"pads": np.array([0, 0, 2, 1, 0, 0, 0, 2], np.int64), "v": np.array(value, np.uint8),
              "xs": np.array(0.02, np.float32), "xz": np.array(131, np.uint8), "w": w,
              "ws": np.array(0.01, np.float32), "wz": np.array(0, np.int8), "ys": np.array(0.3, np.float32),
              "yz": np.array(120, np.uint8), "b": _rng.integers(-500, 500, 4).astype(np.int32)}
    nodes = [helper.make_node("Pad", ["x", "pads", "v"], ["xp"], name="pad"),
             helper.make_node("QLinearConv", ["xp", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                              name="conv", strides=[2, 2], pads=[1, 0, 0, 1])]
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", TensorProto.UINT8, (1, 3, 9, 10))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return model_case(case_id, graph, {"x": _rng.integers(0, 256, (1, 3, 9, 10)).astype(np.uint8)})


_PADS = {"pads": np.array([0, 0, 2, 0, 0, 0, 1, 3], np.int64)}
# every max pool window below keeps an input element (a window of padding alone would keep the Pad)
_MAX_PADS = {"pads": np.array([0, 0, 2, 1, 0, 0, 1, 2], np.int64)}
CASES = [
    _float_case("avgpool_counts_the_pad", [
        helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad"),
        helper.make_node("AveragePool", ["xp"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2])], _PADS),
    _float_case("avgpool_with_pads_counted", [
        helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad"),
        helper.make_node("AveragePool", ["xp"], ["y"], name="pool", kernel_shape=[3, 2], pads=[1, 1, 0, 1],
                         count_include_pad=1)], _PADS),
    _float_case("maxpool_after_relu", [
        helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Pad", ["r", "pads"], ["rp"], name="pad"),
        helper.make_node("MaxPool", ["rp"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 1])], _MAX_PADS),
    _float_case("maxpool_minus_infinity", [
        helper.make_node("Pad", ["x", "pads", "v"], ["xp"], name="pad"),
        helper.make_node("MaxPool", ["xp"], ["y"], name="pool", kernel_shape=[2, 3], strides=[1, 2])],
        {"pads": np.array([0, 0, 1, 1, 0, 0, 1, 2], np.int64), "v": np.array(-np.inf, np.float32)}),
    _qlinear_case("qlinearconv_zero_point_pad", 131),
    _qlinear_case("qlinearconv_other_pad_stays", 7),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize(("case_id", "ops"), [
    ("avgpool_counts_the_pad", ["AveragePool"]), ("avgpool_with_pads_counted", ["AveragePool"]),
    ("maxpool_after_relu", ["Relu", "MaxPool"]), ("maxpool_minus_infinity", ["MaxPool"]),
    ("qlinearconv_zero_point_pad", ["QLinearConv"]), ("qlinearconv_other_pad_stays", ["Pad", "QLinearConv"]),
])
def test_onnx_graph_after(case_id, ops):
    from aot.compiler import lower

    model = next(c.model for c in CASES if c.id == case_id)
    assert [n.op for n in lower(model).nodes] == ops


def test_tflite_pads_go_and_the_arena_shrinks(monkeypatch):
    """padded_int8: every PAD but the one before AVERAGE_POOL_2D is folded, and the plan no longer holds
    padded copies beside their sources."""
    import aot.compiler
    from aot.compiler import Options, compile_file
    from aot.frontend import import_model, load_model
    from aot.passes import DEFAULT_PIPELINE, simplify

    model = TFLITE / "padded_int8.tflite"
    g = simplify(import_model(load_model(model), "m"))
    pads = [n for n in g.nodes if n.op == "Pad"]
    assert len(pads) == 1 and [r.op for r in g.consumers()[pads[0].outputs[0]]] == [tfl.AVERAGE_POOL_2D]

    def arena() -> int:
        return compile_file(model, Options(name="m", target="mps2-an386")).metadata["memory"]["arena_bytes"]
    folded = arena()
    monkeypatch.setattr(aot.compiler, "simplify", lambda graph, pipeline=DEFAULT_PIPELINE: simplify(
        graph, tuple(p for p in pipeline if not isinstance(p, FoldPad))))
    assert folded < arena()
