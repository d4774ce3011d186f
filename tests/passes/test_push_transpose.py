"""PushTransposeDown (issue 64: tf2onnx's MobileNetV3 kept 30 of its 128 Transposes and 62 Mul/Add passes a
BatchNorm folds away): models in tf2onnx's shape, NHWC between NCHW convs, against onnxruntime, and what is left
of their Transposes once the passes ran. tests/passes/test_before_after.py pins the rewrite itself."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from opcheck import model_case, shared_build, tensor_type

from aot.compiler import lower

N = helper.make_node
_rng = np.random.default_rng(64)
TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def _f32(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) * 0.5).astype(np.float32)


def _block(k: int, x: str, c: int, se: bool, residual: bool) -> tuple[list, dict, str]:
    """One MobileNetV3 block as tf2onnx writes it, reading and writing NHWC tensor `x` of c channels: a 1 x 1 conv
    and a padded strided-1 3 x 3 depthwise conv, each between Transposes, each BatchNorm a per-channel Mul and
    Add in NHWC, hard-swish after both, squeeze-excite (a mean over H and W, two 1 x 1 convs on the pooled
    [1, 1, 1, C] tensor, a Reshape between layouts) and the residual Add in NHWC."""
    p = f"b{k}_"
    consts = {p + "w1": _f32(c, c, 1, 1), p + "s1": _f32(c), p + "t1": _f32(c), p + "wd": _f32(c, 1, 3, 3),
              p + "s2": _f32(c), p + "t2": _f32(c), p + "pads": np.array([0, 1, 1, 0, 0, 1, 1, 0], np.int64),
              p + "three": np.float32(3), p + "zero": np.float32(0), p + "six": np.float32(6),
              p + "sixth": np.float32(1 / 6)}

    def hard_swish(v: str, tag: str) -> list:
        return [N("Add", [v, p + "three"], [p + tag + "a"], name=p + tag + "hs_add"),
                N("Clip", [p + tag + "a", p + "zero", p + "six"], [p + tag + "c"], name=p + tag + "hs_clip"),
                N("Mul", [v, p + tag + "c"], [p + tag + "m"], name=p + tag + "hs_mul"),
                N("Mul", [p + tag + "m", p + "sixth"], [p + tag + "hs"], name=p + tag + "hs_div")]

    nodes = [N("Transpose", [x], [p + "x_nchw"], name=p + "t1", perm=TO_NCHW),
             N("Conv", [p + "x_nchw", p + "w1"], [p + "c1"], name=p + "conv1"),
             N("Transpose", [p + "c1"], [p + "c1_nhwc"], name=p + "t2", perm=TO_NHWC),
             N("Mul", [p + "c1_nhwc", p + "s1"], [p + "bn1m"], name=p + "bn1_mul"),
             N("Add", [p + "bn1m", p + "t1"], [p + "bn1"], name=p + "bn1_add"),
             *hard_swish(p + "bn1", "e"),
             N("Pad", [p + "ehs", p + "pads"], [p + "padded"], name=p + "pad"),
             N("Transpose", [p + "padded"], [p + "d_in"], name=p + "t3", perm=TO_NCHW),
             N("Conv", [p + "d_in", p + "wd"], [p + "dw"], name=p + "dwconv", group=c),
             N("Transpose", [p + "dw"], [p + "dw_nhwc"], name=p + "t4", perm=TO_NHWC),
             N("Mul", [p + "dw_nhwc", p + "s2"], [p + "bn2m"], name=p + "bn2_mul"),
             N("Add", [p + "bn2m", p + "t2"], [p + "bn2"], name=p + "bn2_add"),
             *hard_swish(p + "bn2", "d")]
    y = p + "dhs"
    if se:
        consts |= {p + "sew": _f32(c, c, 1, 1), p + "shape_nchw": np.array([1, c, 1, 1], np.int64),
                   p + "shape_nhwc": np.array([1, 1, 1, c], np.int64)}
        nodes += [N("ReduceMean", [y], [p + "pooled"], name=p + "se_mean", axes=[1, 2], keepdims=1),
                  N("Reshape", [p + "pooled", p + "shape_nchw"], [p + "pooled_nchw"], name=p + "se_r1"),
                  N("Conv", [p + "pooled_nchw", p + "sew"], [p + "se_c"], name=p + "se_conv"),
                  N("Sigmoid", [p + "se_c"], [p + "se_s"], name=p + "se_sigmoid"),
                  N("Reshape", [p + "se_s", p + "shape_nhwc"], [p + "se_nhwc"], name=p + "se_r2"),
                  N("Mul", [y, p + "se_nhwc"], [p + "excited"], name=p + "se_mul")]
        y = p + "excited"
    if residual:
        nodes.append(N("Add", [x, y], [p + "out"], name=p + "residual"))
        y = p + "out"
    return nodes, consts, y


def _model_case(case_id: str, blocks: list[tuple[bool, bool]], c: int = 8, hw: int = 10):
    """A stem (a 3 x 3 conv between Transposes, its BatchNorm in NHWC), then the blocks, NHWC in and out."""
    consts = {"stem_w": _f32(c, c, 3, 3), "stem_s": _f32(c), "stem_t": _f32(c)}
    nodes = [N("Transpose", ["x"], ["x_nchw"], name="stem_t1", perm=TO_NCHW),
             N("Conv", ["x_nchw", "stem_w"], ["stem"], name="stem_conv", pads=[1, 1, 1, 1]),
             N("Transpose", ["stem"], ["stem_nhwc"], name="stem_t2", perm=TO_NHWC),
             N("Mul", ["stem_nhwc", "stem_s"], ["stem_m"], name="stem_bn_mul"),
             N("Add", ["stem_m", "stem_t"], ["stem_bn"], name="stem_bn_add"),
             N("Relu", ["stem_bn"], ["stem_out"], name="stem_relu")]
    x = "stem_out"
    for k, (se, residual) in enumerate(blocks):
        more, more_consts, x = _block(k, x, c, se, residual)
        nodes += more
        consts |= more_consts
    nodes.append(N("Identity", [x], ["y"], name="out"))
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", tensor_type("float32"),
                                                                             (1, hw, hw, c))],
                              [helper.make_tensor_value_info("y", tensor_type("float32"), None)],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    return model_case(case_id, graph, {"x": _rng.standard_normal((1, hw, hw, c)).astype(np.float32)})


CASES = [_model_case("one_block", [(False, False)]),
         _model_case("squeeze_excite", [(True, False)]),
         _model_case("three_blocks_residual", [(True, True), (False, True), (True, True)])]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_only_the_transposes_of_the_graphs_input_and_output_are_left_and_the_batchnorms_fold(case_id):
    """Of the four Transposes a block, only the graph input's NHWC -> NCHW and the output's NCHW -> NHWC stay
    (ConvReadsNHWC and ConvWritesNHWC take such ones into the convs where they can), and no per-channel Mul or
    Add is left outside the convs: the ones that remain are hard-swish's and the residuals'."""
    model = next(c.model for c in CASES if c.id == case_id)
    g = lower(model)
    transposes = [n for n in g.nodes if n.op == "Transpose"]
    assert [(n.inputs[0] == "x", n.attrs["perm"]) for n in transposes] == [(True, TO_NCHW), (False, TO_NHWC)]
    assert transposes[1] is g.nodes[-1] or g.nodes[-1].inputs == transposes[1].outputs  # (an Identity to y)
    per_channel = [n.name for n in g.nodes if n.op in ("Mul", "Add") and any(
        g.tensors[i].is_const and g.tensors[i].size > 1 for i in n.inputs)]
    assert per_channel == [], per_channel
