"""Conv and ConvTranspose against onnxruntime: 1-D, 2-D and 3-D; strides, dilations,
asymmetric pads, auto_pad; groups (depthwise, with a channel multiplier, grouped);
each kernel path (the implicit GEMM, im2col in several blocks, 1 x 1, depthwise, transpose in
blocks); bias or not, weights as constants or run-time inputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from opcheck import op_case, shared_build

from aot.compiler import compile_model, lower
from aot.emit_c.ops.conv import _conv_plan
from aot.errors import AotcError

_rng = np.random.default_rng(3)


def w(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def conv(case_id: str, x: tuple, weight: tuple, *, bias: bool = True, const_w: bool = True, opset: int = 13,
         op: str = "Conv", **attrs) -> object:
    """`weight` is ONNX's W shape: [M, C/group, k...] for Conv, [C, M/group, k...] for ConvTranspose."""
    out_c = weight[0] if op == "Conv" else weight[1] * attrs.get("group", 1)
    inputs: dict = {"x": x}
    consts: dict = {}
    (consts if const_w else inputs)["w"] = w(*weight) if const_w else weight
    order = ["x", "w"]
    if bias:
        consts["b"] = w(out_c)
        order.append("b")
    return op_case(case_id, op, inputs, consts=consts, attrs=attrs, opset=opset, input_order=order)


def conv_t(case_id: str, x: tuple, weight: tuple, **kw) -> object:
    return conv(case_id, x, weight, op="ConvTranspose", **kw)


CASES = [
    # im2col + GEMM
    conv("conv3x3_pad1", (1, 3, 9, 9), (4, 3, 3, 3), pads=[1, 1, 1, 1]),
    conv("conv3x3_no_bias", (1, 3, 9, 9), (4, 3, 3, 3), bias=False),
    conv("conv_stride2_asym_pads", (2, 3, 9, 10), (5, 3, 3, 3), strides=[2, 2], pads=[0, 1, 2, 1]),
    conv("conv_dilated", (1, 4, 12, 11), (6, 4, 3, 2), dilations=[2, 3], pads=[2, 1, 1, 2]),
    conv("conv_strided_dilated", (1, 2, 15, 14), (3, 2, 3, 3), strides=[2, 3], dilations=[2, 2], pads=[1, 2, 0, 1]),
    conv("conv_pads_beyond_kernel", (1, 2, 4, 5), (3, 2, 3, 3), pads=[4, 3, 3, 4]),
    conv("conv_kernel_covers_input", (1, 2, 3, 3), (3, 2, 3, 3)),
    conv("conv_same_upper", (1, 3, 8, 9), (4, 3, 4, 3), strides=[2, 2], auto_pad="SAME_UPPER"),
    conv("conv_same_lower", (1, 3, 8, 9), (4, 3, 4, 3), strides=[2, 2], auto_pad="SAME_LOWER"),
    conv("conv_same_1x1_stride2_even", (1, 4, 8, 8), (3, 4, 1, 1), strides=[2, 2], auto_pad="SAME_UPPER"),
    conv("conv_same_lower_1x1_stride2_even", (1, 4, 8, 6), (3, 4, 1, 1), strides=[2, 2], auto_pad="SAME_LOWER"),
    conv("conv_valid", (1, 3, 8, 9), (4, 3, 3, 3), strides=[2, 1], auto_pad="VALID"),
    conv("conv_opset7", (1, 3, 7, 7), (2, 3, 3, 3), pads=[1, 1, 1, 1], opset=7),
    conv("conv_opset11", (1, 3, 7, 7), (2, 3, 3, 3), auto_pad="SAME_UPPER", opset=11),
    conv("conv_kernel_shape_attr", (1, 3, 7, 7), (2, 3, 3, 2), kernel_shape=[3, 2]),
    conv("conv_blocks", (1, 40, 20, 20), (30, 40, 3, 3), pads=[1, 1, 1, 1]),  # 2 k-blocks x 2 position blocks
    conv("conv_wide_k", (1, 64, 9, 9), (20, 64, 5, 5), pads=[2, 2, 2, 2]),  # k = 1600: 7 k-blocks
    conv("conv_runtime_weights", (1, 3, 8, 8), (5, 3, 3, 3), const_w=False, pads=[1, 0, 1, 0]),
    conv("conv_1x1_strided", (1, 8, 9, 9), (6, 8, 1, 1), strides=[2, 2]),
    conv("conv_1x1_padded", (1, 8, 5, 5), (6, 8, 1, 1), pads=[1, 1, 1, 1]),
    conv("conv_grouped", (1, 6, 7, 7), (9, 2, 3, 3), group=3, pads=[1, 1, 1, 1]),
    conv("conv_grouped_shufflenet", (1, 24, 8, 8), (24, 8, 3, 3), group=3, pads=[1, 1, 1, 1], strides=[2, 2]),
    # 1 x 1, stride 1: GEMM on the input in place
    conv("conv_1x1", (2, 8, 5, 7), (20, 8, 1, 1)),
    conv("conv_1x1_no_bias", (1, 16, 6, 6), (7, 16, 1, 1), bias=False),
    conv("conv_1x1_grouped", (1, 12, 5, 5), (9, 4, 1, 1), group=3),
    conv("conv_1x1_large", (1, 64, 15, 15), (40, 64, 1, 1)),
    conv("conv_1x1_runtime_weights", (1, 8, 4, 4), (5, 8, 1, 1), const_w=False),
    # depthwise: direct loop
    conv("conv_depthwise", (1, 6, 9, 9), (6, 1, 3, 3), group=6, pads=[1, 1, 1, 1]),
    conv("conv_depthwise_stride2", (2, 6, 10, 9), (6, 1, 3, 3), group=6, pads=[1, 0, 1, 1], strides=[2, 2]),
    conv("conv_depthwise_right_border", (1, 3, 7, 9), (3, 1, 3, 3), group=3, pads=[0, 0, 2, 2]),
    conv("conv_depthwise_wider_than_input", (1, 2, 6, 3), (2, 1, 3, 5), group=2, pads=[1, 2, 1, 2]),
    conv("conv_depthwise_multiplier", (1, 4, 8, 8), (12, 1, 3, 3), group=4, pads=[1, 1, 1, 1]),
    conv("conv_s1_blocks_mid_row", (2, 4, 17, 19), (6, 2, 3, 5), group=2, pads=[1, 2, 0, 3]),
    conv("conv_depthwise_multiplier_stride2", (1, 4, 9, 7), (8, 1, 3, 3), group=4, pads=[1, 1, 1, 1], strides=[2, 2]),
    conv("conv_depthwise_stride_1x2", (1, 3, 8, 9), (3, 1, 3, 3), group=3, pads=[1, 1, 1, 1], strides=[1, 2]),
    conv("conv_depthwise_one_column", (1, 2, 5, 1), (2, 1, 3, 3), group=2, pads=[1, 1, 1, 1]),
    conv("conv_single_channel_many_outputs", (1, 1, 12, 7), (8, 1, 5, 3), strides=[2, 2], pads=[2, 1, 2, 1]),
    conv("conv_depthwise_dilated", (1, 5, 11, 12), (5, 1, 3, 3), group=5, dilations=[2, 3], pads=[2, 3, 2, 3]),
    conv("conv_depthwise_5x5_no_bias", (1, 3, 8, 8), (3, 1, 5, 5), group=3, pads=[2, 2, 2, 2], bias=False),
    conv("conv_depthwise_same", (1, 4, 7, 8), (4, 1, 3, 3), group=4, strides=[2, 2], auto_pad="SAME_LOWER"),
    conv("conv_single_channel", (1, 1, 10, 10), (8, 1, 5, 5), pads=[2, 2, 2, 2]),
    conv("conv_depthwise_runtime_weights", (1, 3, 6, 6), (3, 1, 3, 3), group=3, const_w=False),
    # 3 x 3, few input channels per group: flat passes per plane
    conv("conv3x3_flat_rgb_stride2", (2, 3, 10, 12), (8, 3, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv3x3_flat_rgb_odd", (1, 3, 9, 7), (5, 3, 3, 3), pads=[1, 1, 1, 1], bias=False),
    conv("conv3x3_flat_grouped", (1, 4, 7, 6), (6, 2, 3, 3), group=2, pads=[1, 1, 1, 1]),
    conv("conv3x3_flat_single_channel", (1, 1, 8, 8), (6, 1, 3, 3), strides=[2, 2], pads=[1, 0, 1, 1]),
    conv("conv_depthwise_flat_pads_at_end", (1, 4, 8, 8), (4, 1, 3, 3), group=4, strides=[2, 2], pads=[0, 0, 1, 1]),
    conv("conv_depthwise_flat_batch", (2, 5, 6, 5), (5, 1, 3, 3), group=5, pads=[1, 1, 1, 1]),
    conv("conv_depthwise_flat_tiny", (1, 3, 1, 2), (3, 1, 3, 3), group=3, strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv_depthwise_flat_large", (1, 2, 70, 70), (2, 1, 3, 3), group=2, pads=[1, 1, 1, 1]),
    conv("conv_depthwise_flat_rows_past_output", (1, 4, 7, 8), (4, 1, 3, 3), group=4, strides=[2, 2],
         pads=[0, 1, 1, 1]),
    conv("conv3x3_flat_large_stride2", (1, 3, 130, 129), (4, 3, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1]),
    # 1 x 1 on fewer positions than a panel: X^T * W^T
    conv("conv_1x1_few_positions", (1, 20, 3, 3), (40, 20, 1, 1)),
    conv("conv_1x1_few_positions_grouped", (2, 12, 2, 3), (18, 4, 1, 1), group=3, bias=False),
    conv("conv_1x1_one_position_blocks", (1, 16, 1, 1), (300, 16, 1, 1)),
    # 1-D and 3-D
    conv("conv1d", (2, 3, 20), (4, 3, 5), pads=[2, 1], strides=[2]),
    conv("conv1d_dilated", (1, 4, 30), (6, 4, 3), dilations=[4], pads=[4, 4]),
    conv("conv1d_1x1", (1, 4, 30), (6, 4, 1)),
    conv("conv1d_depthwise", (1, 4, 17), (4, 1, 3), group=4, pads=[1, 1], strides=[2]),
    conv("conv1d_same", (1, 2, 11), (3, 2, 4), auto_pad="SAME_UPPER"),
    conv("conv3d", (1, 2, 5, 6, 7), (3, 2, 3, 3, 3), pads=[1, 1, 1, 1, 0, 1]),
    conv("conv3d_strided", (1, 3, 7, 6, 8), (4, 3, 3, 2, 3), strides=[2, 1, 2], dilations=[1, 2, 1]),
    conv("conv3d_1x1", (1, 4, 3, 4, 5), (2, 4, 1, 1, 1)),
    conv("conv3d_depthwise", (1, 3, 5, 5, 5), (3, 1, 3, 3, 3), group=3, pads=[1, 1, 1, 1, 1, 1]),
]

CASES += [
    conv_t("convt_stride2", (1, 4, 5, 5), (4, 3, 3, 3), strides=[2, 2]),
    conv_t("convt_no_bias", (1, 4, 5, 5), (4, 3, 3, 3), bias=False),
    conv_t("convt_pads_output_padding", (1, 4, 5, 6), (4, 3, 3, 3), strides=[2, 2], pads=[1, 1, 1, 0],
           output_padding=[1, 1]),
    conv_t("convt_output_shape", (1, 2, 4, 4), (2, 3, 3, 3), strides=[2, 2], output_shape=[8, 7]),
    conv_t("convt_output_shape_pads_ignored", (1, 2, 4, 4), (2, 3, 3, 3), strides=[2, 2], output_shape=[8, 8],
           pads=[1, 1, 1, 1]),
    conv_t("convt_same_upper", (1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], auto_pad="SAME_UPPER"),
    conv_t("convt_same_lower", (1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], auto_pad="SAME_LOWER"),
    conv_t("convt_valid", (1, 2, 4, 4), (2, 3, 3, 3), strides=[2, 2], auto_pad="VALID"),
    conv_t("convt_grouped_dilated", (2, 4, 5, 6), (4, 2, 3, 2), strides=[2, 1], group=2, dilations=[1, 2]),
    conv_t("convt_depthwise", (1, 3, 5, 5), (3, 1, 4, 4), strides=[2, 2], group=3, pads=[1, 1, 1, 1]),
    conv_t("convt_stride_past_kernel", (1, 2, 4, 4), (2, 2, 2, 2), strides=[3, 3]),
    conv_t("convt_blocks", (1, 16, 16, 16), (16, 40, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1]),
    conv_t("convt_runtime_weights", (1, 3, 4, 4), (3, 2, 3, 3), const_w=False, strides=[2, 2]),
    conv_t("convt_opset7", (1, 2, 3, 3), (2, 2, 3, 3), strides=[2, 2], opset=7),
    conv_t("convt1d", (1, 4, 7), (4, 3, 4), strides=[3]),
    conv_t("convt1d_output_shape", (1, 2, 6), (2, 3, 3), strides=[2], output_shape=[12]),
    conv_t("convt3d", (1, 2, 3, 4, 3), (2, 3, 3, 3, 2), strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1]),
]


# The scratch-free direct kernel's tiles: 16- and 4-column strips with a last overlapping one,
# strides 1, 2 and 3, dilated taps, output channels not a multiple of its 4-channel tile, residual.
CASES += [
    conv("conv_direct_wide", (1, 5, 12, 40), (6, 5, 3, 3), pads=[1, 1, 1, 1]),
    conv("conv_direct_stride3_dilated", (1, 3, 23, 41), (7, 3, 3, 5), strides=[3, 3], dilations=[2, 1],
         pads=[1, 2, 0, 1]),
    conv("conv_direct_stride2_narrow", (1, 2, 13, 11), (5, 2, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1]),
]

# The implicit GEMM's tiles: several output-channel panels with a narrow last one, positions not
# a multiple of its tiles, border classes with no tap inside (the bias alone), one input channel
# under a wide kernel (columns innermost); and the GEMM paths that remain for run-time weights.
CASES += [
    conv("conv_implicit_panels", (1, 20, 9, 11), (37, 20, 3, 3), pads=[1, 1, 1, 1]),
    conv("conv_implicit_no_taps_at_borders", (1, 6, 5, 4), (18, 6, 3, 3), pads=[3, 2, 4, 3], strides=[2, 1]),
    conv("conv_implicit_wide_kernel_one_channel", (1, 1, 49, 10), (24, 1, 10, 4), strides=[2, 2],
         pads=[4, 1, 5, 1]),
    conv("conv_runtime_weights_s1", (1, 6, 8, 9), (5, 6, 3, 3), const_w=False, pads=[1, 1, 1, 1]),
    conv("conv_runtime_weights_strided", (1, 5, 11, 9), (7, 5, 3, 3), const_w=False, strides=[2, 2],
         pads=[1, 1, 1, 1]),
]

# Every Conv again with no memory to spare (a one-node graph's only step is its peak): the
# kernels' scratch-free paths (direct loops, the plain depthwise, the GEMM without its B copy).
CASES += [dataclasses.replace(c, id=f"tight_{c.id}", scratch_floor=0) for c in CASES
          if c.id.startswith("conv") and not c.id.startswith("convt")]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


# --- the kernel each case exercises ------------------------------------------------------------

@pytest.mark.parametrize("case_id,kernel", [
    ("conv_depthwise", "aotc_conv3x3_flat_f32"),
    ("conv3x3_flat_rgb_stride2", "aotc_conv3x3_flat_f32"),
    ("conv3x3_flat_grouped", "aotc_conv3x3_flat_f32"),
    ("conv3x3_flat_single_channel", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_flat_pads_at_end", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_flat_tiny", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_flat_rows_past_output", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_stride2", "aotc_conv_depthwise3x3_f32"),  # a 0 start pad, input past 2 * OW columns
    ("conv_depthwise_right_border", "aotc_conv_depthwise3x3_f32"),
    ("conv_depthwise_dilated", "aotc_conv_depthwise_f32"),
    ("conv_1x1_few_positions", "aotc_conv_pointwise_t_f32"),
    ("conv_1x1_one_position_blocks", "aotc_conv_pointwise_t_f32"),
    ("conv_1x1", "aotc_conv_pointwise_f32"),
    ("conv_1x1_runtime_weights", "aotc_conv_pointwise_f32"),
    ("conv_implicit_panels", "aotc_conv_implicit_f32"),
    ("conv_implicit_wide_kernel_one_channel", "aotc_conv_implicit_f32"),
    ("conv_1x1_strided", "aotc_conv_implicit_f32"),
    ("conv1d", "aotc_conv_implicit_f32"),
    ("conv_runtime_weights_s1", "aotc_conv_s1_f32"),
    ("conv_runtime_weights_strided", "aotc_conv_f32"),
    ("conv3d", "aotc_conv_f32"),
])
def test_kernel_choice(case_id, kernel):
    graph = lower(next(c for c in CASES if c.id == case_id).model)
    node = next(n for n in graph.nodes if n.op == "Conv")
    assert _conv_plan(node, graph).kernel == kernel


# --- refused at compile time ----------------------------------------------------------------

REFUSED = [
    # onnx shape inference grows the output by output_padding, onnxruntime does not
    ("convt_same_output_padding", conv_t("r", (1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], auto_pad="SAME_UPPER",
                                         output_padding=[1, 1]).model, "disagree on its output size"),
    ("convt_output_shape_too_large", conv_t("r", (1, 2, 4, 4), (2, 3, 3, 3), strides=[2, 2],
                                            output_shape=[10, 9]).model, "larger than the full output"),
    ("convt_negative_pads", conv_t("r", (1, 2, 4, 4), (2, 3, 3, 3), strides=[2, 2], pads=[-1, 0, 0, -1]).model,
     "pads must not be negative"),
    ("conv_same_dilated", conv("r", (1, 3, 10, 9), (4, 3, 3, 3), dilations=[2, 2], auto_pad="SAME_UPPER").model,
     "dilations > 1 is not supported"),
    # onnxruntime shifts the windows when the SAME padding would be below -1
    ("conv_same_negative_pad", conv("r", (1, 2, 9, 9), (3, 2, 1, 1), strides=[5, 5], auto_pad="SAME_UPPER").model,
     "padding is negative"),
    ("conv_4d", conv("r", (1, 1, 3, 3, 3, 3), (1, 1, 2, 2, 2, 2)).model, "4 spatial dims is not supported"),
]


@pytest.mark.parametrize("case_id,model,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused(case_id, model, message):
    with pytest.raises(AotcError, match=message):
        compile_model(model)
