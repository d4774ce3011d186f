"""FoldChannelScale: a per-channel scale of a 1 x 1 conv's input (squeeze-excite's Mul) as a scale of the conv's
weights, against onnxruntime: the squeeze-excite shape on 28 x 28, 16 x 16 and 7 x 7 planes with channel counts
that are not multiples of 16, the conv with a fused residual Add, a batch of two under one scale, the scale as the Mul's
first input; and where it must not fire: 264 channels on a 7 x 7 plane (the implicit GEMM's tiles, packed weights), a
stride-2 1 x 1, a 3 x 3 conv, a scale per image (batch 2), a Mul whose output has another reader, and more
output channels than positions."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from opcheck import model_case, shared_build, tensor_type

from aot.compiler import lower
from aot.kernels.conv import on_gemm_core
from aot.passes import HOST_PIPELINE, FoldChannelScale, run_passes

_rng = np.random.default_rng(64)
N = helper.make_node


def _case(case_id: str, nodes: list, shapes: dict[str, tuple[int, ...]], outputs: list[str],
          consts: dict[str, np.ndarray]):
    feeds = {k: _rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    graph = helper.make_graph(
        nodes, case_id, [helper.make_tensor_value_info(k, tensor_type("float32"), s) for k, s in shapes.items()],
        [helper.make_tensor_value_info(o, tensor_type("float32"), None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return model_case(case_id, graph, feeds, opset=13)


def _w(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) / np.sqrt(shape[1] * shape[2] * shape[3])).astype(np.float32)


def _se(case_id: str, n: int, c: int, hw: int, m: int, *, residual: bool = False, scale_first: bool = False,
        stride: int = 1, kernel: int = 1, shared_reader: bool = False):
    """x -> GlobalAveragePool -> 1 x 1 (c -> 8) -> ReLU -> 1 x 1 (8 -> c) -> Sigmoid = s; Conv(x * s) (c -> m),
    + r if `residual`; `shared_reader`: x * s is an output too."""
    conv = {"kernel_shape": [kernel, kernel], "strides": [stride, stride], "pads": [kernel // 2] * 4}
    nodes = [N("GlobalAveragePool", ["x"], ["m0"], name="pool"),
             N("Conv", ["m0", "w1", "b1"], ["r1"], name="reduce"), N("Relu", ["r1"], ["a1"], name="relu"),
             N("Conv", ["a1", "w2", "b2"], ["e1"], name="expand"), N("Sigmoid", ["e1"], ["s"], name="gate"),
             N("Mul", ["s", "x"] if scale_first else ["x", "s"], ["xs"], name="scale"),
             N("Conv", ["xs", "w3", "b3"], ["p"] if residual else ["y"], name="project", **conv)]
    oh = (hw - 1) // stride + 1
    shapes = {"x": (n, c, hw, hw)}
    if residual:
        nodes.append(N("Add", ["p", "r"], ["y"], name="add"))
        shapes["r"] = (n, m, oh, oh)
    consts = {"w1": _w(8, c, 1, 1), "b1": _w(8, 1, 1, 1)[:, 0, 0, 0], "w2": _w(c, 8, 1, 1),
              "b2": _w(c, 1, 1, 1)[:, 0, 0, 0], "w3": _w(m, c, kernel, kernel), "b3": _w(m, 1, 1, 1)[:, 0, 0, 0]}
    return _case(case_id, nodes, shapes, ["y", "xs"] if shared_reader else ["y"], consts)


def _shared_scale(case_id: str, n: int, c: int, hw: int, m: int):
    """A batch of n images under one scale [1, c, 1, 1] from an input of its own."""
    nodes = [N("Sigmoid", ["g"], ["s"], name="gate"), N("Mul", ["x", "s"], ["xs"], name="scale"),
             N("Conv", ["xs", "w3", "b3"], ["y"], name="project", kernel_shape=[1, 1])]
    return _case(case_id, nodes, {"x": (n, c, hw, hw), "g": (1, c, 1, 1)}, ["y"],
                 {"w3": _w(m, c, 1, 1), "b3": _w(m, 1, 1, 1)[:, 0, 0, 0]})


CASES = [  # (case, whether the pass fires)
    (_se("se_28x28", 1, 37, 28, 21), True),
    (_se("se_16x16_residual", 1, 24, 16, 40, residual=True), True),
    (_se("se_scale_first", 1, 20, 28, 9, scale_first=True), True),
    (_shared_scale("batch2_one_scale", 2, 19, 28, 30), True),
    (_se("se_7x7", 1, 40, 7, 24), True),
    (_se("se_7x7_wide_k", 1, 264, 7, 24), False),
    (_se("se_stride2", 1, 24, 28, 16, stride=2), False),
    (_se("se_3x3", 1, 12, 16, 8, kernel=3), False),
    (_se("se_batch2", 2, 24, 28, 16), False),
    (_se("se_xs_read_twice", 1, 24, 28, 16, shared_reader=True), False),
    (_se("se_wide_output", 1, 16, 16, 300), False),
]


@pytest.fixture(scope="module")
def built():
    return shared_build([c for c, _ in CASES])


@pytest.mark.parametrize("case_id", [c.id for c, _ in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id,fires", [(c.id, fires) for c, fires in CASES])
def test_fires_where_the_conv_runs_on_the_gemm_core(case_id, fires):
    case = next(c for c, _ in CASES if c.id == case_id)
    g = run_passes(lower(case.model), HOST_PIPELINE)
    out = run_passes(g, [FoldChannelScale(on_gemm_core)])
    scaled = [n for n in out.nodes if n.op == "Mul" and out.tensors[n.inputs[0]].is_const]
    assert bool(scaled) == fires
    if fires:
        conv = next(n for n in out.nodes if "project" in n.sources())
        assert conv.inputs[0] == "x" and conv.inputs[1] == scaled[0].outputs[0] and "xs" not in out.tensors
        assert "scale" in conv.sources()
