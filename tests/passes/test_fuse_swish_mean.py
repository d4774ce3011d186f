"""FuseSwishMean: a SiLU (Sigmoid -> Mul, or ONNX's Swish) and the ReduceMean over its planes that reads it, as one
SwishMean kernel, against onnxruntime: squeeze-excite's shape (the SiLU read by the mean and by the scale's Mul),
keepdims 0 and 1, planes longer than the kernel's run of 4096 floats, a batch of two, tf2onnx's GlobalAveragePool;
and where it must not fire (a mean over the channels too)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from opcheck import model_case, shared_build, tensor_type

from aot.compiler import lower
from aot.ir.schemas import SWISH_MEAN
from aot.passes import FuseActivation, FuseSwishMean

_rng = np.random.default_rng(64)


def _case(case_id: str, nodes: list, shape: tuple[int, ...], outputs: list[str], opset: int = 18,
          consts: dict[str, np.ndarray] | None = None):
    feeds = {"x": (_rng.standard_normal(shape) * 3).astype(np.float32)}
    graph = helper.make_graph(
        nodes, case_id, [helper.make_tensor_value_info("x", tensor_type("float32"), shape)],
        [helper.make_tensor_value_info(o, tensor_type("float32"), None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in (consts or {}).items()],
    )
    return model_case(case_id, graph, feeds, opset=opset)


def _se(axes: list[int], keepdims: int = 1) -> list:
    """x -> SiLU -> s; m = ReduceMean(s); y = s * Sigmoid(m) (squeeze-excite without its two 1 x 1 convs)."""
    return [helper.make_node("Sigmoid", ["x"], ["g"], name="gate"),
            helper.make_node("Mul", ["x", "g"], ["s"], name="silu"),
            helper.make_node("Constant", [], ["axes"], name="axes",
                             value=numpy_helper.from_array(np.array(axes, np.int64), "axes")),
            helper.make_node("ReduceMean", ["s", "axes"], ["m"], name="mean", keepdims=keepdims),
            helper.make_node("Sigmoid", ["m"], ["e"], name="excite"),
            helper.make_node("Mul", ["s", "e"] if keepdims else ["s", "e4"], ["y"], name="scale")]


def _se_flat(shape: tuple[int, ...]) -> list:
    """keepdims 0: the means reshaped back to N, C, 1, 1 before the scale."""
    return [*_se([2, 3], keepdims=0)[:-1],
            helper.make_node("Constant", [], ["shape4"], name="shape4",
                             value=numpy_helper.from_array(np.array([shape[0], shape[1], 1, 1], np.int64), "s4")),
            helper.make_node("Reshape", ["e", "shape4"], ["e4"], name="reshape"),
            helper.make_node("Mul", ["s", "e4"], ["y"], name="scale")]


CASES = [
    _case("se_7x7", _se([2, 3]), (1, 40, 7, 7), ["y"]),
    _case("se_14x14_means_out", _se([2, 3]), (1, 24, 14, 14), ["y", "m"]),
    _case("se_keepdims0", _se_flat((1, 20, 9, 11)), (1, 20, 9, 11), ["y", "m"]),
    _case("se_large_planes", _se([2, 3]), (1, 3, 70, 70), ["y", "m"]),
    _case("se_batch2", _se([2, 3]), (2, 17, 5, 5), ["y", "m"]),
    _case("swish_opset24", [helper.make_node("Swish", ["x"], ["s"], alpha=1.5, name="swish"),
                            helper.make_node("ReduceMean", ["s", "axes"], ["m"], name="mean", keepdims=1)],
          (1, 8, 6, 6), ["m", "s"], opset=24, consts={"axes": np.array([2, 3], np.int64)}),
    _case("mean_over_channels", _se([1, 2, 3]), (1, 8, 5, 5), ["y"]),
    _case("global_average_pool", [*_se([2, 3])[:2], helper.make_node("GlobalAveragePool", ["s"], ["m"], name="mean"),
                                  *_se([2, 3])[4:]], (1, 12, 10, 10), ["y", "m"]),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id,fused", [("se_7x7", True), ("se_keepdims0", True), ("se_batch2", True),
                                           ("swish_opset24", True), ("mean_over_channels", False),
                                           ("global_average_pool", True)])
def test_fused_ops(case_id, fused):
    case = next(c for c in CASES if c.id == case_id)
    g = FuseSwishMean().run(FuseActivation().run(lower(case.model)))
    g.verify()
    ops = [n.op for n in g.nodes]
    assert (SWISH_MEAN in ops) == fused and ({"ReduceMean", "GlobalAveragePool"} & set(ops) != set()) != fused
    if fused:
        node = next(n for n in g.nodes if n.op == SWISH_MEAN)
        assert node.outputs[1] == "m" and "mean" in node.sources()
