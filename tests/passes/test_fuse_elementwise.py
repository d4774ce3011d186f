"""FuseElementwise (aot/passes/fuse_elementwise.py): trees of float32 elementwise ops as one loop.
Which trees fuse, and that the fused loop gives the same bits as the separate kernels (against a
build with the pass left out) and matches onnxruntime: a GRU cell's gates as tf2onnx writes them,
and the Keras 3 GRU spotter (tests/models/kws_gru_keras.onnx) whose body is such a cell."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, shared_build

import aot.compiler
from aot.compiler import Options, compile_model, lower
from aot.passes import HOST_PIPELINE, FuseElementwise, run_passes

MODELS = Path(__file__).resolve().parents[1] / "models"
H = 37  # not a multiple of any vector width


def _vi(name: str, shape: list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def gru_gates() -> onnx.ModelProto:
    """h' = (1 - z) * tanh(xh + r * hh) + z * h, z = sigmoid(xz + hz), r = sigmoid(xr + hr); z read twice."""
    nodes = [
        helper.make_node("Add", ["xz", "hz"], ["z_in"]), helper.make_node("Sigmoid", ["z_in"], ["z"]),
        helper.make_node("Add", ["xr", "hr"], ["r_in"]), helper.make_node("Sigmoid", ["r_in"], ["r"]),
        helper.make_node("Mul", ["r", "hh"], ["rh"]), helper.make_node("Add", ["xh", "rh"], ["n_in"]),
        helper.make_node("Tanh", ["n_in"], ["n"]), helper.make_node("Sub", ["one", "z"], ["zc"]),
        helper.make_node("Mul", ["zc", "n"], ["a"]), helper.make_node("Mul", ["z", "h"], ["b"]),
        helper.make_node("Add", ["a", "b"], ["h_new"]),
        helper.make_node("Max", ["h_new", "floor"], ["h_out"]),  # a full-size constant operand
    ]
    ins = ["xz", "hz", "xr", "hr", "xh", "hh", "h"]
    graph = helper.make_graph(nodes, "gates", [_vi(i, [1, H]) for i in ins], [_vi("h_out", [1, H])],
                              [numpy_helper.from_array(np.float32(1.0), "one"),
                               numpy_helper.from_array(np.full((1, H), -0.5, np.float32), "floor")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32) * 3
            for i in model.graph.input}


def test_a_gru_cell_is_two_loops():
    """z has two readers, so it ends a tree; the rest is one tree, with the constants in it."""
    graph = run_passes(lower(gru_gates()), HOST_PIPELINE)
    ops = [n.op for n in graph.nodes]
    assert ops == ["FusedElementwise", "FusedElementwise"], ops
    last = graph.nodes[-1]
    assert last.op == "FusedElementwise" and last.outputs == ["h_out"]
    assert [op for op, _ in last.attrs["program"]][-1] == "Max"
    assert "floor" in last.inputs and "one" not in last.inputs  # a full-size constant is read, a scalar inlined


def test_broadcast_operands_are_not_fused():
    nodes = [helper.make_node("Add", ["x", "bias"], ["a"]), helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "g", [_vi("x", [2, H]), _vi("bias", [1, H])], [_vi("y", [2, H])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert [n.op for n in run_passes(lower(model), (FuseElementwise(),)).nodes] == ["Add", "Relu"]


def _pow_graph(exponent: np.ndarray | None):
    """y = Relu(x ** e): e a constant (an initializer) or, for None, an input."""
    nodes = [helper.make_node("Pow", ["x", "e"], ["p"], name="pow"), helper.make_node("Relu", ["p"], ["y"])]
    e = [numpy_helper.from_array(exponent, "e")] if exponent is not None else []
    ins = [_vi("x", [2, H])] + ([] if e else [_vi("e", [])])
    graph = helper.make_graph(nodes, "g", ins, [_vi("y", [2, H]), _vi("p", [2, H])], e)
    return lower(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


@pytest.mark.parametrize("exponent", [3.0, -1.0, 0.5, -2.5, 8.0, 0.0])
def test_pow_by_a_constant_is_a_loop_alone(exponent):
    """Issue 64: Pow by an integer or half an integer up to 8 is a loop of multiplies even alone (here its
    output is also a graph output, so the Relu cannot take it into its tree)."""
    graph = run_passes(_pow_graph(np.array(exponent, np.float32)), (FuseElementwise(),))
    assert [n.op for n in graph.nodes] == ["FusedElementwise", "Relu"]
    assert graph.nodes[0].attrs["program"] == (("Pow", (("in", 0), ("const", exponent))),)


@pytest.mark.parametrize("exponent", [np.array(1 / 3, np.float32), np.array(9.0, np.float32),
                                      np.array([[2.0], [3.0]], np.float32), None])
def test_pow_by_other_exponents_keeps_its_kernel(exponent):
    """powf's Pow: an exponent not a multiple of 1/2, beyond 8, of more than one value, or computed."""
    graph = run_passes(_pow_graph(exponent), (FuseElementwise(),))
    assert [n.op for n in graph.nodes] == ["Pow", "Relu"]


def test_the_loop_is_in_the_c():
    c = compile_model(gru_gates(), Options(name="gates")).files["src/gates.c"]
    assert c.count("for (size_t aotc_i = 0; aotc_i < 37u; ++aotc_i) {") == 2, c
    assert "aotc_sigmoid_poly(" in c and "aotc_tanh_poly(" in c and "aotc_add_f32" not in c


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """The same cases built with the host pipeline as it is, and without FuseElementwise."""
    gru = onnx.load(str(MODELS / "kws_gru_keras.onnx"))
    cases = lambda: [Case("gates", gru_gates(), _feeds(gru_gates())), Case("kws_gru_keras", gru, _feeds(gru))]  # noqa: E731
    fused = shared_build(cases(), tmp_path_factory.mktemp("fused"))
    unfused_pipeline = tuple(p for p in HOST_PIPELINE if not isinstance(p, FuseElementwise))
    mp = pytest.MonkeyPatch()
    mp.setattr(aot.compiler, "HOST_PIPELINE", unfused_pipeline)
    try:
        unfused = shared_build(cases(), tmp_path_factory.mktemp("unfused"))
    finally:
        mp.undo()
    return fused, unfused


@pytest.mark.parametrize("case", ["gates", "kws_gru_keras"])
def test_fused_is_bit_identical_and_matches_onnxruntime(builds, case):
    fused, unfused = builds
    fused.check(case)
    for a, b in zip(fused.run(case), unfused.run(case), strict=True):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), case
