"""FuseEpilogue: Conv/Gemm -> [Add residual] -> [Relu | Clip | LeakyRelu] as one node, against
onnxruntime on every kernel path (im2col in one and several k-blocks, 1 x 1 with several GEMM
k-blocks, depthwise, Gemm), and the node counts it leaves."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from opcheck import model_case, shared_build, tensor_type

from aot.compiler import lower
from aot.passes import FuseEpilogue

_rng = np.random.default_rng(11)


def _w(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def _model(case_id: str, nodes: list, inputs: dict[str, tuple], consts: dict[str, np.ndarray], outputs: list[str]):
    feeds = {k: _rng.standard_normal(s).astype(np.float32) for k, s in inputs.items()}
    graph = helper.make_graph(
        nodes, case_id,
        [helper.make_tensor_value_info(k, tensor_type("float32"), s) for k, s in inputs.items()],
        [helper.make_tensor_value_info(o, tensor_type("float32"), None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in consts.items()],
    )
    return model_case(case_id, graph, feeds)


def _act(kind: str, x: str, y: str) -> list:
    if kind == "relu":
        return [helper.make_node("Relu", [x], [y], name=f"{y}_act")]
    if kind == "clip":
        return [helper.make_node("Clip", [x, "clip_lo", "clip_hi"], [y], name=f"{y}_act")]
    if kind == "leaky":
        return [helper.make_node("LeakyRelu", [x], [y], name=f"{y}_act", alpha=0.2)]
    raise ValueError(kind)


_CLIP = {"clip_lo": np.array(0.0, np.float32), "clip_hi": np.array(0.5, np.float32)}


def conv_case(case_id: str, x: tuple, weight: tuple, act: str, *, residual: bool = False, bias: bool = True,
              **attrs):
    """x -> Conv -> [+ r] -> act -> y; the residual r is a second input of the output's shape."""
    consts = {"w": _w(*weight), **_CLIP}
    ins = ["x", "w"]
    if bias:
        consts["b"] = _w(weight[0], 1).reshape(-1)
        ins.append("b")
    nodes = [helper.make_node("Conv", ins, ["c"], name="conv", **attrs)]
    inputs = {"x": x}
    cur = "c"
    if residual:
        probe = _model("probe", nodes, inputs, consts, ["c"])  # the output shape, from onnxruntime
        from opcheck import reference
        inputs["r"] = reference(probe)[0].shape
        nodes.append(helper.make_node("Add", ["r", cur], ["y" if act == "none" else "s"], name="add"))
        cur = "s"
    if act != "none":
        nodes += _act(act, cur, "y")
    return _model(case_id, nodes, inputs, consts, ["y"])


def gemm_case(case_id: str, m: int, k: int, n: int, act: str, *, residual: bool = False, **attrs):
    b = _w(n, k) if attrs.get("transB") else _w(k, n)
    consts = {"B": b, "C": _w(n, 1).reshape(-1), **_CLIP}
    nodes = [helper.make_node("Gemm", ["A", "B", "C"], ["g"], name="gemm", **attrs)]
    inputs = {"A": (m, k)}
    cur = "g"
    if residual:
        inputs["r"] = (m, n)
        nodes.append(helper.make_node("Add", [cur, "r"], ["s"], name="add"))
        cur = "s"
    nodes += _act(act, cur, "y")
    return _model(case_id, nodes, inputs, consts, ["y"])


def downsample_case(case_id: str):
    """Add(conv_a(x), conv_b(x)) -> Relu, conv_b after conv_a: the fused node takes the Add's place."""
    consts = {"wa": _w(8, 4, 3, 3), "wb": _w(8, 4, 1, 1), "ba": _w(8, 1).reshape(-1)}
    nodes = [
        helper.make_node("Conv", ["x", "wa", "ba"], ["a"], name="conv_a", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Conv", ["x", "wb"], ["b"], name="conv_b", strides=[2, 2]),
        helper.make_node("Add", ["a", "b"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["y"], name="relu"),
    ]
    return _model(case_id, nodes, {"x": (1, 4, 9, 9)}, consts, ["y"])


CASES = [
    conv_case("im2col_relu", (1, 3, 9, 10), (5, 3, 3, 3), "relu", pads=[1, 1, 1, 1]),
    conv_case("im2col_nobias_clip", (1, 3, 9, 10), (5, 3, 3, 3), "clip", bias=False, strides=[2, 2]),
    conv_case("im2col_kblocks_res_relu", (1, 40, 8, 8), (40, 40, 3, 3), "relu", residual=True, pads=[1, 1, 1, 1]),
    conv_case("im2col_res_only", (1, 6, 7, 7), (6, 6, 3, 3), "none", residual=True, pads=[1, 1, 1, 1]),
    conv_case("s1_grouped_batch_blocks_res_relu", (2, 6, 20, 20), (6, 3, 3, 3), "relu", residual=True, group=2,
              pads=[1, 1, 1, 1]),
    conv_case("pointwise_clip", (1, 8, 6, 7), (12, 8, 1, 1), "clip"),
    conv_case("pointwise_kblocks_res_leaky", (1, 300, 5, 5), (20, 300, 1, 1), "leaky", residual=True),
    conv_case("pointwise_res_relu", (2, 16, 9, 9), (16, 16, 1, 1), "relu", residual=True),
    conv_case("depthwise_clip", (1, 8, 11, 11), (8, 1, 3, 3), "clip", group=8, pads=[1, 1, 1, 1], strides=[2, 2]),
    conv_case("depthwise_res_relu", (1, 8, 10, 10), (8, 1, 3, 3), "relu", residual=True, group=8,
              pads=[1, 1, 1, 1]),
    conv_case("flat_rgb_stride2_leaky", (1, 3, 12, 12), (8, 3, 3, 3), "leaky", strides=[2, 2], pads=[1, 1, 1, 1]),
    conv_case("pointwise_few_positions_res_clip", (1, 24, 3, 3), (24, 24, 1, 1), "clip", residual=True),
    conv_case("pointwise_few_positions_relu", (1, 24, 2, 2), (40, 24, 1, 1), "relu"),
    gemm_case("gemm_relu", 3, 20, 40, "relu"),
    gemm_case("gemm_transb_res_leaky", 7, 300, 24, "leaky", residual=True, transB=1),
    gemm_case("gemm_res_clip_small_n", 5, 10, 6, "clip", residual=True),
    downsample_case("downsample_add_relu"),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def _host_graph(case_id: str):
    case = next(c for c in CASES if c.id == case_id)
    g = lower(case.model)
    return g, FuseEpilogue().run(g)


@pytest.mark.parametrize("case_id,before,after,op", [
    ("im2col_relu", 2, 1, "FusedConv"),
    ("im2col_kblocks_res_relu", 3, 1, "FusedConv"),
    ("im2col_res_only", 2, 1, "FusedConv"),
    ("pointwise_kblocks_res_leaky", 3, 1, "FusedConv"),
    ("depthwise_res_relu", 3, 1, "FusedConv"),
    ("gemm_transb_res_leaky", 3, 1, "FusedGemm"),
    ("downsample_add_relu", 4, 2, "FusedConv"),
])
def test_node_count_drops(case_id, before, after, op):
    g, fused = _host_graph(case_id)
    assert len(g.nodes) == before
    assert len(fused.nodes) == after
    fused.verify()
    node = next(n for n in fused.nodes if n.op == op)
    assert len(node.sources()) == before - after + 1


def test_downsample_runs_where_the_add_ran():
    _, fused = _host_graph("downsample_add_relu")
    assert [n.op for n in fused.nodes] == ["Conv", "FusedConv"]
    assert fused.nodes[1].inputs[3] == "b"


def test_not_fused_when_the_output_is_read_twice_or_is_a_graph_output():
    consts = {"w": _w(4, 4, 1, 1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu"),
             helper.make_node("Add", ["c", "y"], ["z"], name="add")]
    case = _model("twice", nodes, {"x": (1, 4, 3, 3)}, consts, ["z"])
    assert [n.op for n in FuseEpilogue().run(lower(case.model)).nodes] == ["Conv", "Relu", "Add"]
    case = _model("exposed", nodes[:2], {"x": (1, 4, 3, 3)}, consts, ["c", "y"])
    assert [n.op for n in FuseEpilogue().run(lower(case.model)).nodes] == ["Conv", "Relu"]


def test_broadcast_add_is_not_a_residual():
    # s a run-time input (a constant one FoldAffine folds into the bias before this pass runs)
    consts = {"w": _w(4, 4, 1, 1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Add", ["c", "s"], ["y"], name="add")]
    case = _model("bcast", nodes, {"x": (1, 4, 3, 3), "s": (1, 4, 1, 1)}, consts, ["y"])
    assert [n.op for n in FuseEpilogue().run(lower(case.model)).nodes] == ["Conv", "Add"]
