"""ChannelLayerNorm (issue 64: ConvNeXt's LayerNorm2d, Transpose -> LayerNormalization over C -> Transpose):
models of that shape against onnxruntime, compiled with the pass (one LayerNormalization over the channels of
NCHW, aotc_layer_norm_inner_f32) and without a Transpose left. Positions of a block of 32 and a tail (7 x 9),
fewer than a block (4 x 4), two images, and LayerNorm2d's weight and bias broadcast from one value.
tests/passes/test_before_after.py pins the rewrite itself."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from opcheck import model_case, shared_build, tensor_type

from aot.compiler import lower
from aot.passes import HOST_PIPELINE, run_passes

N = helper.make_node
_rng = np.random.default_rng(64)


def _case(case_id: str, n: int, c: int, h: int, w: int, scalar_affine: bool = False):
    """A 3 x 3 conv, LayerNorm2d as torch exports it (its mean far from 0: the shift), a 1 x 1 conv to 2c."""
    s = np.float32(1.5) if scalar_affine else (1.0 + 0.2 * _rng.standard_normal(c)).astype(np.float32)
    b = np.float32(-0.25) if scalar_affine else (0.1 * _rng.standard_normal(c)).astype(np.float32)
    consts = {"w0": (0.3 * _rng.standard_normal((c, c, 3, 3))).astype(np.float32),
              "b0": np.full(c, 20.0, np.float32), "s": s, "b": b,
              "w1": (0.3 * _rng.standard_normal((2 * c, c, 1, 1))).astype(np.float32)}
    nodes = [N("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
             N("Transpose", ["c0"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
             N("LayerNormalization", ["t", "s", "b"], ["u"], name="ln", axis=-1, epsilon=1e-6),
             N("Transpose", ["u"], ["v"], name="to_nchw", perm=[0, 3, 1, 2]),
             N("Conv", ["v", "w1"], ["y"], name="conv1")]
    x = helper.make_tensor_value_info("x", tensor_type("float32"), (n, c, h, w))
    graph = helper.make_graph(nodes, case_id, [x],
                              [helper.make_tensor_value_info("y", tensor_type("float32"), None)],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    return model_case(case_id, graph, {"x": _rng.standard_normal((n, c, h, w)).astype(np.float32)}, opset=17)


CASES = [_case("block_and_tail", 1, 24, 7, 9), _case("under_a_block", 2, 5, 4, 4),
         _case("scalar_affine", 1, 8, 5, 7, scalar_affine=True)]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.full
@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_the_transposes_are_gone_and_the_norm_runs_over_channels(case_id):
    g = run_passes(lower(next(c.model for c in CASES if c.id == case_id)), HOST_PIPELINE)
    assert [n.op for n in g.nodes if n.op == "Transpose"] == []
    (ln,) = [n for n in g.nodes if n.op == "LayerNormalization"]
    x = g.tensors[ln.inputs[0]].shape
    assert ln.attrs["aotc_inner"] == x[2] * x[3] and ln.attrs["n"] == x[1]
