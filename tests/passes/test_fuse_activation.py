"""FuseActivation: Sigmoid -> Mul as Swish (SiLU) and HardSigmoid(1/6, 1/2) -> Mul as HardSwish,
against onnxruntime, and where it must leave the graph alone (gate read twice or a graph output,
other HardSigmoid constants, broadcasting). Also ONNX's own Swish (opset 24)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from opcheck import model_case, shared_build, tensor_type

from aot.compiler import lower
from aot.passes import FuseActivation

_rng = np.random.default_rng(5)


def _case(case_id: str, nodes: list, inputs: dict[str, tuple], outputs: list[str], opset: int = 13,
          consts: dict[str, np.ndarray] | None = None):
    feeds = {k: (_rng.standard_normal(s) * 4).astype(np.float32) for k, s in inputs.items()}
    graph = helper.make_graph(
        nodes, case_id,
        [helper.make_tensor_value_info(k, tensor_type("float32"), s) for k, s in inputs.items()],
        [helper.make_tensor_value_info(o, tensor_type("float32"), None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in (consts or {}).items()],
    )
    return model_case(case_id, graph, feeds, opset=opset)


def _conv_gate(gate: str, mul_order: tuple[str, str], **gate_attrs) -> list:
    """x -> depthwise Conv -> c -> gate -> s; y = Mul(mul_order of c and s)."""
    return [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", group=8, pads=[2, 2, 2, 2]),
            helper.make_node(gate, ["c"], ["s"], name="gate", **gate_attrs),
            helper.make_node("Mul", list(mul_order), ["y"], name="mul")]


_W = {"w": (_rng.standard_normal((8, 1, 5, 5)) / 5).astype(np.float32)}
_X = {"x": (1, 8, 9, 9)}
CASES = [
    _case("silu", _conv_gate("Sigmoid", ("c", "s")), _X, ["y"], consts=_W),
    _case("silu_gate_first", _conv_gate("Sigmoid", ("s", "c")), _X, ["y"], consts=_W),
    _case("hard_swish", _conv_gate("HardSigmoid", ("c", "s"), alpha=1.0 / 6.0, beta=0.5), _X, ["y"], consts=_W),
    _case("hard_sigmoid_other", _conv_gate("HardSigmoid", ("c", "s"), alpha=0.2, beta=0.5), _X, ["y"], consts=_W),
    _case("silu_gate_exposed", _conv_gate("Sigmoid", ("c", "s")), _X, ["y", "s"], consts=_W),
    _case("silu_gate_read_twice", _conv_gate("Sigmoid", ("c", "s")) + [
        helper.make_node("Add", ["s", "y"], ["z"], name="add")], _X, ["z"], consts=_W),
    _case("swish_opset24", [helper.make_node("Swish", ["x"], ["y"], alpha=0.7)], {"x": (3, 50)}, ["y"], opset=24),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id,ops", [
    ("silu", ["Conv", "Swish"]),
    ("silu_gate_first", ["Conv", "Swish"]),
    ("hard_swish", ["Conv", "HardSwish"]),
    ("hard_sigmoid_other", ["Conv", "HardSigmoid", "Mul"]),
    ("silu_gate_exposed", ["Conv", "Sigmoid", "Mul"]),
    ("silu_gate_read_twice", ["Conv", "Sigmoid", "Mul", "Add"]),
])
def test_fused_ops(case_id, ops):
    case = next(c for c in CASES if c.id == case_id)
    fused = FuseActivation().run(lower(case.model))
    fused.verify()
    assert [n.op for n in fused.nodes] == ops
    if ops[-1] in ("Swish", "HardSwish"):
        assert fused.nodes[-1].sources() == ("gate", "mul")


def test_broadcast_mul_is_not_fused():
    nodes = [helper.make_node("Sigmoid", ["a"], ["s"], name="gate"),
             helper.make_node("Mul", ["a", "s"], ["y"], name="mul")]
    case = _case("bcast", nodes, {"a": (1, 4, 1, 1)}, ["y"])
    g = lower(case.model)
    g.tensors["y"].shape = (1, 4, 3, 3)  # a Mul whose output is wider than its operands: not x * gate(x)
    assert [n.op for n in FuseActivation().run(g).nodes] == ["Sigmoid", "Mul"]
