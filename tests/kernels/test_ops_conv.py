"""Conv and ConvTranspose against onnxruntime: 1-D, 2-D and 3-D; strides, dilations,
asymmetric pads, auto_pad; groups (depthwise, with a channel multiplier, grouped);
each kernel path (the implicit GEMM, im2col in several blocks, 1 x 1, depthwise, transpose in
blocks); bias or not, weights as constants or run-time inputs; fused residuals and activations.
The depthwise 3 x 3 kernel without scratch also runs on its own, on buffers of exactly the
tensors' sizes, under AddressSanitizer."""

from __future__ import annotations

import dataclasses
import subprocess

import numpy as np
import pytest
from conftest import require_tool
from onnx import helper, numpy_helper
from opcheck import Case, as_float64, model_case, node_case, op_case, shared_build, tensor_type

from aot.compiler import Options, compile_model, lower
from aot.errors import AotcError
from aot.kernels import winograd
from aot.kernels.base import NO_BUDGET_LIMIT, TargetTraits
from aot.paths import kernel_file, kernel_include_flags
from aot.select import candidates, choose

_rng = np.random.default_rng(3)



def _float_case(case_id: str, nodes: list, inputs: dict[str, tuple], consts: dict[str, np.ndarray]) -> Case:
    """A float32 graph of `nodes` with output y, random standard-normal inputs of the given shapes."""
    feeds = {k: _rng.standard_normal(v).astype(np.float32) for k, v in inputs.items()}
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info(k, tensor_type("float32"), v.shape)
                                               for k, v in feeds.items()],
                              [helper.make_tensor_value_info("y", tensor_type("float32"), None)],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return model_case(case_id, graph, feeds)

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
    # 36 positions (a partial panel of 4) and 32 channels: the implicit GEMM's tiles of 6 x 16
    conv("conv_1x1_implicit_partial_panel", (1, 24, 6, 6), (32, 24, 1, 1)),
    # 125 positions: the GEMM's last panel (13 columns) as a full tile ending at the last column
    conv("conv_1x1_last_panel_shifted", (1, 16, 25, 5), (20, 16, 1, 1)),
    conv("conv_1x1_few_positions_grouped", (2, 12, 2, 3), (18, 4, 1, 1), group=3, bias=False),
    conv("conv_1x1_one_position_blocks", (1, 16, 1, 1), (300, 16, 1, 1)),
    # AVX-512 paths of the implicit GEMM (conv_ig_avx512.h), 16 positions x 16 channels in registers:
    # 3 x 3 same size (a partial last vector), stride 2 on rows of 8 and of 16, 1 x 1 stride 2
    conv("conv3x3_same_16_channels", (1, 12, 9, 10), (16, 12, 3, 3), pads=[1, 1, 1, 1]),
    conv("conv3x3_stride2_rows_of_8", (1, 5, 15, 16), (32, 5, 3, 3), strides=[2, 2], pads=[0, 0, 1, 1]),
    conv("conv3x3_stride2_rows_of_16", (1, 4, 6, 33), (16, 4, 3, 3), strides=[2, 2], pads=[0, 0, 0, 0]),
    conv("conv_1x1_stride2_16_channels", (1, 16, 16, 16), (20, 16, 1, 1), strides=[2, 2]),
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


def conv_fused(case_id: str, x: tuple, weight: tuple, act: str, *, residual: bool = True, nhwc_in: bool = False,
               **attrs) -> object:
    """x -> Conv -> [+ r] -> act -> y, which the compiler fuses into one FusedConv: `act` is 'relu',
    'clip' (to [0, 0.5]), 'leaky' (alpha 0.2) or 'none'; r, an input of the output's shape. nhwc_in: x
    (shape `x` is NCHW) comes channels last through Transpose(0, 3, 1, 2), which the conv then reads
    itself (aot/passes/conv_nhwc.py, ConvReadsNHWC)."""
    kh, kw = weight[2:]
    (pt, pl, pb, pr), (sy, sx) = attrs.get("pads", [0] * 4), attrs.get("strides", [1, 1])
    out = (x[0], weight[0], (x[2] + pt + pb - kh) // sy + 1, (x[3] + pl + pr - kw) // sx + 1)
    consts = {"w": w(*weight), "b": w(weight[0]), "lo": np.array(0.0, np.float32), "hi": np.array(0.5, np.float32)}
    nodes = [helper.make_node("Conv", ["xc" if nhwc_in else "x", "w", "b"], ["c"], name="conv", **attrs)]
    if nhwc_in:
        nodes.insert(0, helper.make_node("Transpose", ["x"], ["xc"], name="to_nchw", perm=[0, 3, 1, 2]))
    inputs, cur = {"x": (x[0], *x[2:], x[1]) if nhwc_in else x}, "c"
    if residual:
        inputs["r"] = out
        nodes.append(helper.make_node("Add", ["c", "r"], ["s"], name="add"))
        cur = "s"
    if act == "relu":
        nodes.append(helper.make_node("Relu", [cur], ["y"], name="act"))
    elif act == "clip":
        nodes.append(helper.make_node("Clip", [cur, "lo", "hi"], ["y"], name="act"))
    elif act == "leaky":
        nodes.append(helper.make_node("LeakyRelu", [cur], ["y"], name="act", alpha=0.2))
    else:
        nodes[-1].output[0] = "y"
    return _float_case(case_id, nodes, inputs, consts)


# Depthwise 3 x 3 at stride 1 and 2 with pads of 0 and 1 (aotc_conv_depthwise3x3_direct_f32 in
# their tight_* copies, and at stride 2 where that beats the flat kernel): pads mixed per side,
# odd and even sizes, planes 1 to 3 rows high and 1, 2, 3 or 5 wide (their runs read the rows and
# planes next to theirs, and the first and last outputs of the tensor are checked), rows longer
# than a flat run (128 outputs) and planes of several runs, a channel multiplier, batch 2, no bias,
# and a fused residual and activation.
CASES += [
    conv("conv_dw3_s1", (1, 4, 9, 8), (4, 1, 3, 3), group=4, pads=[1, 1, 1, 1]),
    conv("conv_dw3_s1_no_pads", (1, 3, 7, 9), (3, 1, 3, 3), group=3),
    conv("conv_dw3_s1_pads_mixed", (2, 3, 8, 7), (3, 1, 3, 3), group=3, pads=[0, 1, 1, 0]),
    conv("conv_dw3_s1_pads_at_end", (1, 3, 6, 5), (3, 1, 3, 3), group=3, pads=[1, 0, 0, 1]),
    conv("conv_dw3_s1_top_left", (1, 2, 5, 6), (2, 1, 3, 3), group=2, pads=[1, 1, 0, 0]),
    conv("conv_dw3_s2_even", (1, 4, 10, 12), (4, 1, 3, 3), group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv_dw3_s2_odd", (1, 3, 11, 13), (3, 1, 3, 3), group=3, strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv_dw3_s2_no_pads", (1, 3, 9, 10), (3, 1, 3, 3), group=3, strides=[2, 2]),
    conv("conv_dw3_s2_pads_mixed", (2, 2, 8, 9), (2, 1, 3, 3), group=2, strides=[2, 2], pads=[0, 1, 1, 0]),
    conv("conv_dw3_s2_same_upper", (1, 3, 8, 10), (3, 1, 3, 3), group=3, strides=[2, 2], auto_pad="SAME_UPPER"),
    conv("conv_dw3_s2_wide_rows", (1, 2, 6, 30), (2, 1, 3, 3), group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv_dw3_w1_h3", (1, 3, 3, 1), (3, 1, 3, 3), group=3, pads=[1, 1, 1, 1]),
    conv("conv_dw3_w2_h1", (1, 3, 1, 2), (3, 1, 3, 3), group=3, pads=[1, 1, 1, 1]),
    conv("conv_dw3_w3_h2", (1, 3, 2, 3), (3, 1, 3, 3), group=3, pads=[1, 1, 1, 1]),
    conv("conv_dw3_w5_h3_batch", (2, 4, 3, 5), (4, 1, 3, 3), group=4, pads=[1, 1, 1, 1]),
    conv("conv_dw3_w3_h3_no_pads", (1, 2, 3, 3), (2, 1, 3, 3), group=2),
    conv("conv_dw3_w5_h1_pads_mixed", (1, 2, 1, 5), (2, 1, 3, 3), group=2, pads=[1, 0, 1, 1]),
    conv("conv_dw3_w5_h1_s2", (1, 3, 1, 5), (3, 1, 3, 3), group=3, strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv_dw3_w2_h3_s2", (1, 3, 3, 2), (3, 1, 3, 3), group=3, strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv_dw3_w1_h2_s2", (2, 2, 2, 1), (2, 1, 3, 3), group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("conv_dw3_rows_past_a_run", (1, 2, 4, 130), (2, 1, 3, 3), group=2, pads=[1, 1, 1, 1]),
    conv("conv_dw3_plane_of_runs", (1, 3, 70, 5), (3, 1, 3, 3), group=3, pads=[1, 1, 1, 1]),
    conv("conv_dw3_kws", (1, 16, 25, 5), (16, 1, 3, 3), group=16, pads=[1, 1, 1, 1]),
    conv("conv_dw3_multiplier", (1, 3, 7, 6), (9, 1, 3, 3), group=3, pads=[1, 1, 1, 1]),
    conv("conv_dw3_multiplier_s2_batch", (2, 2, 9, 8), (6, 1, 3, 3), group=2, strides=[2, 2], pads=[0, 1, 1, 1]),
    conv("conv_dw3_no_bias", (1, 4, 6, 7), (4, 1, 3, 3), group=4, pads=[1, 1, 1, 1], bias=False),
    conv("conv_dw3_s2_no_bias", (1, 4, 7, 6), (4, 1, 3, 3), group=4, strides=[2, 2], pads=[1, 1, 1, 1], bias=False),
    conv_fused("conv_dw3_res_relu", (1, 6, 9, 10), (6, 1, 3, 3), "relu", group=6, pads=[1, 1, 1, 1]),
    conv_fused("conv_dw3_res_clip_s2", (2, 4, 9, 11), (4, 1, 3, 3), "clip", group=4, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv_fused("conv_dw3_res_leaky_no_pads", (1, 5, 6, 7), (5, 1, 3, 3), "leaky", group=5),
    conv_fused("conv_dw3_clip", (1, 4, 8, 8), (4, 1, 3, 3), "clip", residual=False, group=4, pads=[1, 1, 1, 1]),
    conv_fused("conv_dw3_leaky_s2", (1, 3, 10, 9), (3, 1, 3, 3), "leaky", residual=False, group=3, strides=[2, 2],
               pads=[0, 1, 1, 1]),
    conv_fused("conv_dw3_res_only_h1", (1, 4, 1, 6), (4, 1, 3, 3), "none", group=4, pads=[1, 1, 1, 1]),
    # the padded kernel keeps the other pads
    conv("conv_depthwise_padded_stride2", (1, 3, 10, 9), (3, 1, 3, 3), group=3, strides=[2, 2], pads=[2, 1, 1, 2]),
]

# Depthwise 3, 5 and 7 wide (aotc_conv_depthwise_kxk_f32): EfficientNet's 5 x 5 at strides 1 and 2, ConvNeXt's
# 7 x 7, rows shorter than a block (7, 14), several blocks with the last moved left (30, 33), pads wider
# than the kernel's half, a kernel taller than wide, row stride 3, 1-D, and the fused epilogue.
CASES += [
    conv("conv_dwk5_s1_14", (1, 4, 14, 14), (4, 1, 5, 5), group=4, pads=[2, 2, 2, 2]),
    conv("conv_dwk5_s1_7", (1, 3, 7, 7), (3, 1, 5, 5), group=3, pads=[2, 2, 2, 2]),
    conv("conv_dwk5_s2_28", (1, 3, 28, 28), (3, 1, 5, 5), group=3, strides=[2, 2], pads=[2, 2, 2, 2]),
    conv("conv_dwk5_s2_odd", (2, 2, 15, 33), (2, 1, 5, 5), group=2, strides=[2, 2], pads=[1, 2, 3, 0]),
    conv("conv_dwk7_s1_16", (1, 4, 16, 16), (4, 1, 7, 7), group=4, pads=[3, 3, 3, 3]),
    conv("conv_dwk7_s1_wide", (1, 2, 5, 30), (2, 1, 7, 7), group=2, pads=[3, 3, 3, 3], bias=False),
    conv("conv_dwk7_s2_pads_wide", (1, 2, 9, 20), (2, 1, 7, 7), group=2, strides=[2, 2], pads=[5, 4, 0, 6]),
    conv("conv_dwk3_pads2_multiplier", (1, 2, 6, 18), (6, 1, 3, 3), group=2, pads=[2, 2, 2, 2]),
    conv("conv_dwk_5x3_row_stride3", (1, 3, 13, 21), (3, 1, 5, 3), group=3, strides=[3, 1], pads=[2, 1, 2, 1]),
    conv("conv_dwk_1d", (1, 4, 40), (4, 1, 5), group=4, strides=[2], pads=[2, 2]),
    conv_fused("conv_dwk5_res_relu", (1, 4, 12, 20), (4, 1, 5, 5), "relu", group=4, pads=[2, 2, 2, 2]),
    conv_fused("conv_dwk7_leaky_s2", (1, 3, 11, 17), (3, 1, 7, 7), "leaky", residual=False, group=3,
               strides=[2, 2], pads=[3, 3, 3, 3]),
]

# Every Conv again with no memory to spare (a one-node graph's only step is its peak): the
# kernels' scratch-free paths (direct loops, the plain depthwise, the GEMM without its B copy).
CASES += [dataclasses.replace(c, id=f"tight_{c.id}", scratch_floor=0) for c in CASES
          if c.id.startswith("conv") and not c.id.startswith("convt")]



def nhwc_out(case_id: str, x: tuple, weight: tuple, *, op: str = "Conv", between: tuple[str, ...] = (),
             nhwc_in: bool = False, flatten: bool = False, residual: bool = False, **attrs) -> object:
    """x -> [Transpose to NCHW] -> Conv or ConvTranspose -> [+ r] -> `between` ('relu', 'slice': rows
    1, 3, ...) -> Transpose(0, 2, 3, 1) -> [Flatten] -> y: the conv stores channels last
    (aot/passes/conv_nhwc.py, ConvWritesNHWC)."""
    out_c = weight[0] if op == "Conv" else weight[1] * attrs.get("group", 1)
    consts = {"w": w(*weight), "b": w(out_c), "starts": np.array([1], np.int64), "ends": np.array([99], np.int64),
              "axes": np.array([2], np.int64), "steps": np.array([2], np.int64)}
    inputs = {"x": (x[0], *x[2:], x[1]) if nhwc_in else x}
    nodes = [helper.make_node("Transpose", ["x"], ["xc"], perm=[0, 3, 1, 2])] if nhwc_in else []
    nodes.append(helper.make_node(op, ["xc" if nhwc_in else "x", "w", "b"], ["c0"], **attrs))
    cur = "c0"
    if residual:
        probe = onnx_shape(helper.make_graph(nodes, "p", [helper.make_tensor_value_info(
            "x", tensor_type("float32"), inputs["x"])], [helper.make_tensor_value_info("c0", 1, None)],
            [numpy_helper.from_array(consts[k], k) for k in ("w", "b")]), "c0")
        inputs["r"] = probe
        nodes.append(helper.make_node("Add", [cur, "r"], ["s"]))
        cur = "s"
    for k, what in enumerate(between):
        nxt = f"b{k}"
        if what == "relu":
            nodes.append(helper.make_node("Relu", [cur], [nxt]))
        else:
            nodes.append(helper.make_node("Slice", [cur, "starts", "ends", "axes", "steps"], [nxt]))
        cur = nxt
    nodes.append(helper.make_node("Transpose", [cur], ["t" if flatten else "y"], perm=[0, 2, 3, 1]))
    if flatten:
        nodes.append(helper.make_node("Flatten", ["t"], ["y"]))
    return _float_case(case_id, nodes, inputs, consts)


def onnx_shape(graph: object, name: str) -> tuple[int, ...]:
    import onnx

    inferred = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    vi = next(v for v in inferred.graph.output if v.name == name)
    return tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)


# A Transpose to NHWC after a conv (a TFLite float graph's map read in NHWC order, tf2onnx's Transpose
# before Flatten): the implicit GEMM's tiles (several panels, a narrow last one, positions not a
# multiple of a tile, border classes, batch 2, strides) and ConvTranspose (groups, batch) store the
# output channels last, through a fused activation, a Relu and a Slice; with a residual the Transpose
# stays (nhwc_out_residual_kept).
NHWC_OUT = [
    nhwc_out("nhwc_out_implicit_panels", (1, 20, 9, 11), (37, 20, 3, 3), pads=[1, 1, 1, 1]),
    nhwc_out("nhwc_out_strided_batch", (2, 6, 11, 10), (18, 6, 3, 3), strides=[2, 2], pads=[0, 1, 1, 2]),
    nhwc_out("nhwc_out_relu_slice_flatten", (1, 16, 10, 10), (8, 16, 3, 3), pads=[1, 1, 1, 1],
             between=("relu", "slice"), flatten=True),
    # a shape the AVX-512 3 x 3 path (conv_ig_avx512.h) takes when the output is NCHW: it must turn this one down
    nhwc_out("nhwc_out_igx3_shape", (1, 16, 8, 16), (16, 16, 3, 3), pads=[1, 1, 1, 1]),
    nhwc_out("nhwc_out_read_nhwc_too", (1, 7, 8, 9), (16, 7, 3, 3), pads=[1, 1, 1, 1], nhwc_in=True, flatten=True),
    nhwc_out("nhwc_out_residual_kept", (1, 5, 6, 7), (9, 5, 3, 3), pads=[1, 1, 1, 1], residual=True),
    nhwc_out("nhwc_out_convt_stride2", (1, 4, 5, 6), (4, 3, 3, 3), op="ConvTranspose", strides=[2, 2],
             pads=[1, 1, 0, 0], between=("relu",)),
    nhwc_out("nhwc_out_convt_grouped_batch", (2, 6, 4, 5), (6, 2, 2, 3), op="ConvTranspose", group=3,
             strides=[2, 1], flatten=True),
]
CASES += NHWC_OUT

# AVX-512 tiles of 8 output channels x 32 positions (conv_posx_avx512.h), built -march=native below:
# 1 x 1 with K outside 8/16/24/32 (a last tile of fewer than 8 channels, a masked last block,
# groups and batches, K = 128, outputs past L2), and one-channel stems (KWS's 10 x 4 stride 2, rows too wide for one
# vpermps in chunks of 5 rows, a dilated one on a batch of 2)
POSX = [
    conv_fused("posx_1x1_k40_res_clip", (1, 40, 9, 7), (20, 40, 1, 1), "clip"),
    conv("posx_1x1_kws", (1, 64, 25, 5), (64, 64, 1, 1), bias=False),
    conv_fused("posx_1x1_grouped_batch_leaky", (2, 96, 8, 8), (32, 48, 1, 1), "leaky", group=2),
    conv_fused("posx_1x1_k128_relu", (1, 128, 4, 8), (24, 128, 1, 1), "relu", residual=False),
    # outputs of 2 MiB or more: each group of 8 output channels over a span of positions (POSX_OUT_BYTES; two spans
    # of the 1.1 MiB of inputs, POSX_SPAN_BYTES), a batch, a last group of 6 channels, a masked last block; grouped
    conv_fused("posx_1x1_spans_batch_res_clip", (2, 36, 80, 97), (70, 36, 1, 1), "clip"),
    conv_fused("posx_1x1_spans_grouped_leaky", (1, 48, 96, 96), (144, 24, 1, 1), "leaky", group=2, residual=False),
    conv_fused("posx_stem_kws_res_relu", (1, 1, 49, 10), (36, 1, 10, 4), "relu", strides=[2, 2], pads=[4, 1, 5, 1]),
    conv_fused("posx_stem_wide_rows_chunks", (1, 1, 40, 60), (32, 1, 5, 5), "clip", pads=[2, 2, 2, 2]),
    conv_fused("posx_stem_batch_dilated_leaky", (2, 1, 20, 17), (40, 1, 3, 5), "leaky", residual=False,
               strides=[1, 2], dilations=[2, 1], pads=[1, 2, 0, 1]),
]
CASES += POSX

# Winograd F(2 x 2, 3 x 3) (conv_winograd.c): odd and even sizes (a last tile row and column half
# outside), tile rows longer than 16 tiles and bands of several tile rows (a partial last panel, a last
# band shorter than the others), 256-wide rows (the stack buffers' limit), batches, no bias, every
# epilogue; input and output channels differ
WINO = [
    conv_fused("wino_res_relu_odd", (1, 64, 15, 17), (40, 64, 3, 3), "relu", pads=[1, 1, 1, 1]),
    conv_fused("wino_bands_clip", (1, 72, 40, 42), (32, 72, 3, 3), "clip", residual=False, pads=[1, 1, 1, 1]),
    conv_fused("wino_batch_leaky", (2, 64, 16, 16), (24, 64, 3, 3), "leaky", pads=[1, 1, 1, 1]),
    conv("wino_wide_rows_no_bias", (1, 64, 5, 256), (32, 64, 3, 3), pads=[1, 1, 1, 1], bias=False),
    conv("wino_tall_odd", (1, 65, 67, 9), (35, 65, 3, 3), pads=[1, 1, 1, 1]),
]
CASES += WINO
# with --fast-math, Winograd F(4 x 4, 3 x 3) (conv_winograd4.c), where its model expects more than F(2 x 2)'s:
# a last tile row and column 1 to 3 outputs short, bands of several tile rows and a shorter last one, rows
# of 64 tiles (its stack buffers' limit), batches, no bias, every epilogue
WINO4 = [dataclasses.replace(c, fast_math=True) for c in (
    conv_fused("wino4_res_relu_odd", (1, 64, 13, 14), (64, 64, 3, 3), "relu", pads=[1, 1, 1, 1]),
    conv_fused("wino4_batch_leaky", (2, 64, 16, 16), (24, 64, 3, 3), "leaky", pads=[1, 1, 1, 1]),
    conv("wino4_wide_rows_no_bias", (1, 96, 6, 256), (96, 96, 3, 3), pads=[1, 1, 1, 1], bias=False),
    conv("wino4_tall_odd", (1, 128, 67, 11), (96, 128, 3, 3), pads=[1, 1, 1, 1]),
)] + [
    # F(4 x 4)'s rounding grows with the conv's sums (about 25 here, unit weights over 72 x 9 inputs), not
    # with its outputs (clipped to [0, 0.5]): 4.4e-4 here, past the default tolerance, which is why it is
    # taken only with --fast-math
    dataclasses.replace(conv_fused("wino4_bands_clip", (1, 72, 40, 42), (32, 72, 3, 3), "clip", residual=False,
                                   pads=[1, 1, 1, 1]), fast_math=True, atol_scale=1e-3),
]
CASES += WINO4



def _causal_conv(case_id: str, b: int, c: int, t: int, k: int, bias: bool = False, past: bool = False, **attrs):
    """CausalConvWithState (27), compiled as onnx's function body (issue 51): depthwise, causal, its state."""
    f = lambda *shape: _rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    feeds = {"x": f(b, c, t), "w": f(c, 1, k)}
    inputs = ["x", "w", "", ""]
    if bias:
        feeds["bias"], inputs[2] = f(c), "bias"
    if past:
        feeds["past"], inputs[3] = f(b, c, k - 1), "past"
    while not inputs[-1]:
        inputs.pop()
    return node_case(case_id, "CausalConvWithState", feeds, inputs, ["y", "state"], 27, **attrs)


CASES += [
    _causal_conv("causal_conv_state", 2, 4, 8, 4),
    _causal_conv("causal_conv_state_silu_past_bias", 2, 6, 5, 3, bias=True, past=True, activation="silu"),
    _causal_conv("causal_conv_state_decode_step", 1, 8, 1, 4, past=True),
]


# float64 (conv_f64.c, a direct loop in double) on the shapes above: onnxruntime has no double Conv, so
# onnx's reference evaluator gives the expected outputs
_BY_ID = {c.id: c for c in CASES}
CASES += [as_float64(_BY_ID[i], onnx_reference=True) for i in (
    "conv3x3_pad1", "conv3x3_no_bias", "conv_stride2_asym_pads", "conv_dilated", "conv_strided_dilated",
    "conv_pads_beyond_kernel", "conv_same_lower", "conv_wide_k", "conv_runtime_weights", "conv_1x1_strided",
    "conv_grouped", "conv_1x1", "conv_depthwise_multiplier", "conv_depthwise_one_column", "conv1d", "conv1d_dilated",
    "conv3d", "conv3d_strided")]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


# Built -march=native only (below): the AVX-512 paths of conv_igb_avx512.c (igb3: 3 x 3 same-size
# convs that Winograd and igx3 leave, output channels a multiple of 8; 3 vectors of positions x 8 output
# channels, planes of 1 to 5 vectors, a partial panel of 8, groups, batch 2, every epilogue, 33 to 96
# input channels; implicit3_m12: 12 output channels, the implicit GEMM's tiles) and conv_dwk_avx512.c
# (depthwise 3/5/7 rows at strides 1 and 2, flat small planes), conv_stem_avx512.h (RGB stems, 3 x 3
# and 7 x 7 at stride 2, rows of 1 and 2 vectors, odd sizes, pads 0 to 3), with four of the kxk cases above.
NATIVE = [
    # 1-D convs at stride 1 on posx's line tiles (conv_posx_avx512.h's posx_line): jax2tf's Conv1D as a [5, 1] kernel
    # on a W of 1 (full blocks of 32 and a partial one), a line along W with pads (8 channels and 4 single ones), and
    # ONNX 1-D convs, grouped and dilated with pads, and of 9 taps
    conv_fused("posx_line_h5_res_relu", (1, 24, 70, 1), (16, 24, 5, 1), "relu"),
    conv_fused("posx_line_w3_pads_clip", (2, 8, 1, 45), (12, 8, 1, 3), "clip", residual=False, pads=[0, 1, 0, 1]),
    conv("posx_line_1d_dilated_grouped", (1, 16, 50), (16, 8, 3), group=2, pads=[2, 2], dilations=[2]),
    conv("posx_line_1d_k9_no_bias", (1, 5, 40), (8, 5, 9), pads=[4, 4], bias=False),
    conv_fused("igb3_res_relu_7x7", (1, 72, 7, 7), (48, 72, 3, 3), "relu", pads=[1, 1, 1, 1]),
    conv_fused("igb3_clip_m24", (1, 68, 5, 9), (24, 68, 3, 3), "clip", residual=False, pads=[1, 1, 1, 1]),
    conv_fused("igb3_leaky_batch", (2, 65, 9, 8), (8, 65, 3, 3), "leaky", residual=False, pads=[1, 1, 1, 1]),
    conv_fused("igb3_tail3_res_leaky", (1, 66, 9, 11), (16, 66, 3, 3), "leaky", pads=[1, 1, 1, 1]),
    conv("igb3_grouped_no_bias", (1, 160, 6, 6), (16, 80, 3, 3), group=2, pads=[1, 1, 1, 1], bias=False),
    conv_fused("igb3_8x8_c96_res", (1, 96, 8, 8), (32, 96, 3, 3), "relu", pads=[1, 1, 1, 1]),
    # a plane of 360 positions at the tight arena, where Winograd finds no memory (igb on any plane since 1efd0b6)
    dataclasses.replace(conv_fused("igb3_20x18_c256_tight", (1, 256, 20, 18), (16, 256, 3, 3), "relu",
                                   pads=[1, 1, 1, 1]), scratch_floor=0),
    conv_fused("ig3_res_relu_7x7", (1, 40, 7, 7), (48, 40, 3, 3), "relu", pads=[1, 1, 1, 1]),
    conv_fused("ig3_clip_m24", (1, 36, 5, 9), (24, 36, 3, 3), "clip", residual=False, pads=[1, 1, 1, 1]),
    conv_fused("ig3_leaky_batch", (2, 33, 9, 8), (8, 33, 3, 3), "leaky", residual=False, pads=[1, 1, 1, 1]),
    conv_fused("ig3_tail3_res_leaky", (1, 34, 9, 11), (16, 34, 3, 3), "leaky", pads=[1, 1, 1, 1]),
    conv("ig3_grouped_no_bias", (1, 80, 6, 6), (16, 40, 3, 3), group=2, pads=[1, 1, 1, 1], bias=False),
    conv_fused("ig3_8x8_c64_resnet8", (1, 64, 8, 8), (64, 64, 3, 3), "relu", pads=[1, 1, 1, 1]),
    conv_fused("implicit3_m12_res_relu_10x9", (1, 40, 10, 9), (12, 40, 3, 3), "relu", pads=[1, 1, 1, 1]),
    # conv_ig_avx512.h's igx3 past 32 input channels: planes of at least 28 x 28, up to 128 channels (a
    # 29-wide plane's vectors span rows); one position fewer goes to the implicit GEMM
    conv_fused("igx3_c40_28x28_res_relu", (1, 40, 28, 28), (16, 40, 3, 3), "relu", pads=[1, 1, 1, 1]),
    # (no scratch to spare: with it, Winograd takes this one, WINO below)
    dataclasses.replace(conv_fused("igx3_c72_30x29_clip", (1, 72, 30, 29), (32, 72, 3, 3), "clip", residual=False,
                                   pads=[1, 1, 1, 1]), scratch_floor=0),
    conv_fused("ig3_c40_27x29_leaky", (1, 40, 27, 29), (16, 40, 3, 3), "leaky", residual=False, pads=[1, 1, 1, 1]),
    # 1 x 1 convs the plan gives the implicit GEMM (positions ending in a partial panel) go to
    # conv_posx_avx512.h's tiles reading the packed W^T (groups: a group's panels)
    conv_fused("posx_1x1_packed_res_relu", (1, 24, 17, 17), (48, 24, 1, 1), "relu"),
    conv_fused("posx_1x1_packed_grouped_leaky", (1, 40, 17, 17), (32, 20, 1, 1), "leaky", group=2, residual=False),
    # 1 x 1 convs with 64+ input channels on small planes (conv_pwc_avx512.c: tiles of 4 to 8 positions x 48
    # output channels, transposed on the store): 7 x 7 (tiles of 7) into 100 channels (a partial last
    # vector; the plan's implicit GEMM for 256+ input channels), 14 x 14 (tiles of 8 and 7), 13 x 13,
    # stride-2 shortcuts on rows of 7 and 14 (and an odd input), groups, batch 2, every epilogue
    conv_fused("pwc_7x7_k256_m100_res_clip", (1, 256, 7, 7), (100, 256, 1, 1), "clip"),
    conv_fused("pwc_14x14_relu", (1, 96, 14, 14), (64, 96, 1, 1), "relu", residual=False),
    conv_fused("pwc_13x13_k256_leaky", (1, 256, 13, 13), (40, 256, 1, 1), "leaky", residual=False),
    conv_fused("pwc_s2_14x14_res_relu", (1, 64, 14, 14), (48, 64, 1, 1), "relu", strides=[2, 2]),
    conv_fused("pwc_s2_odd_batch_leaky", (2, 72, 27, 27), (20, 72, 1, 1), "leaky", strides=[2, 2]),
    conv("pwc_grouped_no_bias", (1, 160, 7, 7), (32, 80, 1, 1), group=2, bias=False),
    conv_fused("pwc_27x27_k256_relu", (1, 256, 27, 27), (32, 256, 1, 1), "relu", residual=False),  # after posx's turn
    # the next block's W^T prefetched in the tiles' loops: 520 input channels into 5 blocks (the last of 8 channels,
    # its panel zero-padded) on 7 x 7
    conv_fused("pwc_7x7_k520_m200_res_relu", (1, 520, 7, 7), (200, 520, 1, 1), "relu"),
    # widening stride-2 shortcuts on inputs of 256 KiB or more: aotc_conv_pwcs2_f32 copies the strided inputs into
    # scratch (an odd row of 33: a 17-wide output row in two vectors, the last input column read) and runs the
    # stride-1 tiles; groups (each group's 256 output channels over its 64 inputs)
    conv_fused("pwcs2_33x33_res_relu", (1, 64, 33, 33), (256, 64, 1, 1), "relu", strides=[2, 2]),
    conv_fused("pwcs2_grouped_leaky", (1, 128, 23, 23), (512, 64, 1, 1), "leaky", residual=False, group=2,
               strides=[2, 2]),
    conv_fused("dwkx5_rows_res_clip", (1, 3, 40, 36), (3, 1, 5, 5), "clip", group=3, pads=[2, 2, 2, 2]),
    conv_fused("dwkx3_s2_long_rows_leaky", (2, 3, 9, 70), (3, 1, 3, 3), "leaky", residual=False, group=3,
               strides=[2, 2], pads=[1, 1, 1, 1]),
    conv_fused("dwkx7_flat_leaky", (1, 4, 10, 9), (4, 1, 7, 7), "leaky", residual=False, group=4, pads=[3, 3, 3, 3]),
    dataclasses.replace(conv("dwkx3_pads2_rows", (1, 2, 6, 18), (2, 1, 3, 3), group=2, pads=[2, 2, 2, 2]),
                        scratch_floor=0),
    conv_fused("rgb_stem_igx3", (1, 3, 32, 32), (16, 3, 3, 3), "relu", residual=False, pads=[1, 1, 1, 1]),
    conv_fused("stemx_rgb_s2_clip", (1, 3, 40, 36), (32, 3, 3, 3), "clip", residual=False, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv_fused("stemx_pads0_relu", (1, 3, 37, 41), (32, 3, 3, 3), "relu", residual=False, strides=[2, 2]),
    conv_fused("stemx_k7_res_relu", (1, 3, 40, 38), (16, 3, 7, 7), "relu", strides=[2, 2], pads=[3, 3, 3, 3]),
    conv_fused("stemx_res_leaky_odd_batch", (2, 3, 33, 37), (16, 3, 3, 3), "leaky", strides=[2, 2],
               pads=[1, 1, 1, 1]),
    # the 3 x 3 stem reading a channels-last input (a .tflite's, tf2onnx's folded Transpose): TF's SAME pads (at the
    # end only) on rows of a vector and a tail, a residual on a width past whole vectors of 16 pixels, 4 channels
    # (the scalar split) in a batch; the 7 x 7 stays on the implicit GEMM
    conv_fused("stemx_nhwc_tf_same_clip", (1, 3, 40, 36), (32, 3, 3, 3), "clip", residual=False, nhwc_in=True,
               strides=[2, 2], pads=[0, 0, 1, 1]),
    conv_fused("stemx_nhwc_res_relu", (1, 3, 38, 45), (16, 3, 3, 3), "relu", nhwc_in=True, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv_fused("nhwc_k7_stem_stays_implicit", (1, 3, 38, 45), (16, 3, 7, 7), "relu", nhwc_in=True, strides=[2, 2],
               pads=[3, 3, 3, 3]),
    conv_fused("stemx_nhwc_c4_leaky_batch", (2, 4, 33, 37), (16, 4, 3, 3), "leaky", residual=False, nhwc_in=True,
               strides=[2, 2], pads=[1, 1, 1, 1]),
    # channels-last stems into a multiple of 64 channels (conv_implicit_avx512.h, ig_stem64: 6 positions x 64
    # channels over a zero-padded copy of the rows): rows of 6 + 5 and 6 + 1 positions, uneven pads, 4 channels at
    # stride 1 without an activation, a batch of 128 channels; with a residual the general tiles keep it
    conv_fused("stem64_nhwc_k7_relu", (1, 3, 38, 45), (64, 3, 7, 7), "relu", residual=False, nhwc_in=True,
               strides=[2, 2], pads=[3, 3, 3, 3]),
    conv_fused("stem64_nhwc_k7_uneven_clip_batch", (2, 3, 33, 37), (128, 3, 7, 7), "clip", residual=False,
               nhwc_in=True, strides=[2, 2], pads=[2, 3, 4, 3]),
    conv_fused("stem64_nhwc_c4_k5_s1_none", (1, 4, 12, 17), (64, 4, 5, 5), "none", residual=False, nhwc_in=True),
    conv_fused("stem64_nhwc_k7_res_stays", (1, 3, 20, 22), (64, 3, 7, 7), "relu", nhwc_in=True, strides=[2, 2],
               pads=[3, 3, 3, 3]),
    *[c for c in CASES
      if c.id in ("conv_dwk5_s1_14", "conv_dwk5_s2_odd", "conv_dwk7_s2_pads_wide", "conv_dwk5_res_relu")],
    *WINO,
    # conv_ig_avx512.h's igx3s2 with pads of 1 at the start (a torch export's): rows of 16 and 32 outputs, odd
    # input sizes, a top pad without a left one and the reverse, every epilogue
    conv_fused("igx3s2_pads1_res_relu", (1, 16, 32, 32), (32, 16, 3, 3), "relu", strides=[2, 2], pads=[1, 1, 1, 1]),
    conv_fused("igx3s2_pads1_odd_clip", (2, 8, 31, 63), (16, 8, 3, 3), "clip", residual=False, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv_fused("igx3s2_top_pad_only_leaky", (1, 12, 33, 33), (16, 12, 3, 3), "leaky", strides=[2, 2],
               pads=[1, 0, 0, 0]),
    conv("igx3s2_left_pad_only", (1, 6, 32, 32), (16, 6, 3, 3), strides=[2, 2], pads=[0, 1, 1, 0]),
    # rows of 8 (two to a vector) with a left pad: ResNet-8's 16 x 16 -> 8 x 8, an odd 15-wide input, a batch
    conv_fused("igx3s2_rows8_pads1_res_relu", (1, 32, 16, 16), (32, 32, 3, 3), "relu", strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv_fused("igx3s2_rows8_pads1_odd_leaky", (2, 5, 15, 15), (16, 5, 3, 3), "leaky", residual=False, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    # igx3s2 on rows that are not 8 or 16k wide: ResNet-18's 28-, 14- and 7-wide outputs (runs of 16 across the rows'
    # ends; pairs of 7-wide rows), pairs of 6-wide rows from an odd input without pads, 12-wide rows on an odd height
    conv_fused("igx3s2_rows28_res_relu", (1, 16, 56, 56), (32, 16, 3, 3), "relu", strides=[2, 2], pads=[1, 1, 1, 1]),
    conv_fused("igx3s2_rows14_batch_clip", (2, 8, 28, 28), (16, 8, 3, 3), "clip", residual=False, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv_fused("igx3s2_pairs7_res_relu", (1, 24, 14, 14), (32, 24, 3, 3), "relu", strides=[2, 2], pads=[1, 1, 1, 1]),
    conv("igx3s2_pairs6_pads0_batch", (2, 5, 13, 13), (16, 5, 3, 3), strides=[2, 2]),
    conv_fused("igx3s2_rows12_leaky", (1, 16, 23, 24), (16, 16, 3, 3), "leaky", residual=False, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv("conv_s2_rows10_stays_implicit", (1, 16, 21, 21), (16, 16, 3, 3), strides=[2, 2]),  # no left pad
    # conv_igx1_avx512.c: 1 x 1 at stride 2 on 8, 16 and 24 input channels, rows of 8 (two to a vector), of 16 from an
    # odd input, of 32; a batch
    conv("igx1_k16_rows8", (1, 16, 16, 16), (32, 16, 1, 1), strides=[2, 2]),
    conv_fused("igx1_k24_odd_batch_res_relu", (2, 24, 31, 31), (16, 24, 1, 1), "relu", strides=[2, 2]),
    conv_fused("igx1_k8_rows32_leaky", (1, 8, 12, 64), (48, 8, 1, 1), "leaky", residual=False, strides=[2, 2]),
    # conv_dw3_avx512.c's stride-1 rows on planes of more than 1024 outputs: rows of 2 1/2 vectors and of exactly 2,
    # a channel multiplier, a batch, every epilogue
    conv_fused("dw3x_rows_res_clip", (1, 3, 40, 40), (3, 1, 3, 3), "clip", group=3, pads=[1, 1, 1, 1]),
    conv_fused("dw3x_rows_mult_batch_leaky", (2, 2, 33, 32), (4, 1, 3, 3), "leaky", residual=False, group=2,
               pads=[1, 1, 1, 1]),
    conv("dw3x_rows_tall_no_bias", (1, 2, 100, 17), (2, 1, 3, 3), group=2, pads=[1, 1, 1, 1], bias=False),
    # conv_dw3_avx512.c's stride-2 rows in vectors of 15 outputs, past two vectors (a first pad of 0 or 1, odd widths)
    conv_fused("dw3x_s2_wide_rows_res_clip", (1, 4, 20, 112), (4, 1, 3, 3), "clip", group=4, strides=[2, 2],
               pads=[1, 1, 1, 1]),
    conv_fused("dw3x_s2_wide_pads0_leaky", (2, 3, 9, 201), (3, 1, 3, 3), "leaky", residual=False, group=3,
               strides=[2, 2], pads=[0, 0, 1, 1]),
]


def _posx_sum_order_case() -> Case:
    """A 1 x 1 conv of 16 input channels (8 -> 32: aotc_conv_pointwise_f32's pwx loops took them before issue 64)
    whose every output sums the terms 2^24, 1, 1, -2^24, 0, ...: 0 in k order from the bias (posx's one chain
    per output), 1 in pwx's two chains of even and odd k added at the end."""
    wt = np.zeros((8, 16, 1, 1), np.float32)
    wt[:, 0], wt[:, 1], wt[:, 2], wt[:, 3] = 2.0 ** 24, 1.0, 1.0, -(2.0 ** 24)
    x = np.ones((1, 16, 16, 16), np.float32)
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w", "b"], ["y"])], "posx_sum_order",
                              [helper.make_tensor_value_info("x", tensor_type("float32"), x.shape)],
                              [helper.make_tensor_value_info("y", tensor_type("float32"), None)],
                              [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(np.zeros(8, np.float32), "b")])
    return model_case("posx_k16_sum_order", graph, {"x": x})


POSX_ORDER = _posx_sum_order_case()


@pytest.fixture(scope="module")
def built_native():
    """The NHWC-store, POSX and NATIVE cases built -march=native, as bundles are: the AVX-512 conv paths
    (conv_ig_avx512.h, conv_dw3_avx512.c, conv_posx_avx512.h, conv_igb_avx512.c, conv_dwk_avx512.c) exist only
    then; the first must leave the NHWC-store convs to the NHWC store."""
    return shared_build(NHWC_OUT + POSX + NATIVE + [POSX_ORDER], extra_flags=("-march=native",))


@pytest.mark.parametrize("case_id", [c.id for c in NHWC_OUT + NATIVE])
def test_nhwc_store_matches_onnxruntime_native(built_native, case_id):
    built_native.check(case_id)


@pytest.mark.parametrize("case_id", [c.id for c in POSX])
def test_posx_matches_onnxruntime_native(built_native, case_id):
    built_native.check(case_id)


@pytest.mark.full
def test_pointwise_few_input_channels_take_posx_native(built_native):
    """One thread, AVX-512: aotc_conv_pointwise_f32 runs 1 x 1 convs of 8 to 32 input channels on posx's tiles
    (8 output channels x 32 positions: MobileNet-v2's 16 -> 96 112 x 112 1.2x faster on Zen 5 than the pwx loops,
    which keep the shapes posx declines), as the sum's order shows."""
    from aot.targets import host_has_avx512

    if not host_has_avx512():
        pytest.skip("the host has no AVX-512F: the build has neither path")
    (y,) = built_native.run(POSX_ORDER.id)
    assert np.array_equal(y, np.zeros((1, 8, 16, 16), np.float32)), np.unique(y)


def test_wide_pointwise_on_whole_panels_stays_on_the_gemm_core():
    """256 input channels on 28 x 28 (whole panels): the GEMM core, which AVX2 runs 14-16 % faster
    than the implicit GEMM's tiles; on 27 x 27, the implicit GEMM (conv_pwc_avx512.c with AVX-512)."""
    for hw, kernel in ((28, "aotc_conv_pointwise_f32"), (27, "aotc_conv_implicit_f32")):
        graph = lower(conv("c", (1, 256, hw, hw), (32, 256, 1, 1)).model)
        node = next(n for n in graph.nodes if n.op == "Conv")
        assert choose(node, graph, candidates(node, graph, TargetTraits()), NO_BUDGET_LIMIT).kernel == kernel


@pytest.mark.parametrize("case_id,kernel,avx512_kernel", [
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_igb_f32") for c in NATIVE if c.id.startswith(("igb3_", "ig3_"))],
    ("implicit3_m12_res_relu_10x9", "aotc_conv_implicit_f32", "aotc_conv_implicit_f32"),
    ("igx3_c40_28x28_res_relu", "aotc_conv_implicit_f32", "aotc_conv_igx3_f32"),
    ("igx3_c72_30x29_clip", "aotc_conv_implicit_f32", "aotc_conv_igx3_f32"),
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_igx3s2_f32") for c in NATIVE if c.id.startswith("igx3s2_")],
    ("conv_s2_rows10_stays_implicit", "aotc_conv_implicit_f32", "aotc_conv_implicit_f32"),
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_igx1_f32") for c in NATIVE if c.id.startswith("igx1_")],
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_posx_f32") for c in NATIVE if c.id.startswith("posx_line_")],
    ("posx_1x1_packed_res_relu", "aotc_conv_implicit_f32", "aotc_conv_posx_f32"),
    ("posx_1x1_packed_grouped_leaky", "aotc_conv_implicit_f32", "aotc_conv_posx_f32"),
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_pwc_f32") for c in NATIVE if c.id.startswith("pwc_")],
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_pwcs2_f32") for c in NATIVE if c.id.startswith("pwcs2_")],
    ("dwkx5_rows_res_clip", "aotc_conv_depthwise_kxk_f32", "aotc_conv_depthwise_kxk_f32"),
    ("dwkx7_flat_leaky", "aotc_conv_depthwise_kxk_f32", "aotc_conv_depthwise_kxk_f32"),
    ("dwkx3_pads2_rows", "aotc_conv_depthwise_kxk_f32", "aotc_conv_depthwise_kxk_f32"),
    ("stemx_rgb_s2_clip", "aotc_conv3x3_flat_f32", "aotc_conv3x3_flat_f32"),
    ("stemx_res_leaky_odd_batch", "aotc_conv3x3_flat_f32", "aotc_conv3x3_flat_f32"),
    ("stemx_pads0_relu", "aotc_conv_implicit_f32", "aotc_conv_stemx_f32"),
    ("stemx_k7_res_relu", "aotc_conv_implicit_f32", "aotc_conv_stemx_f32"),
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_stemx_f32") for c in NATIVE if c.id.startswith("stemx_nhwc_")],
    ("nhwc_k7_stem_stays_implicit", "aotc_conv_implicit_f32", "aotc_conv_implicit_f32"),
    *[(c.id, "aotc_conv_implicit_f32", "aotc_conv_implicit_f32") for c in NATIVE if c.id.startswith("stem64_")],
])
def test_native_cases_reach_their_kernel(case_id, kernel, avx512_kernel):
    """The NATIVE cases' convs go to the kernel whose AVX-512 path they are written for (aot/kernels/conv_avx512.py);
    without AVX-512, to the kernel that path belongs to. (That the path then takes the conv, the native build
    checks: an entry given a conv its path does not take aborts, runtime_c/kernels/common/paths_avx512.h.)"""
    case = next(c for c in NATIVE if c.id == case_id)
    graph = lower(case.model)
    nhwc = "nhwc_" in case_id
    if nhwc:  # the conv reads the input channels last once the host passes ran
        from aot.passes import HOST_PIPELINE, simplify

        graph = simplify(graph, HOST_PIPELINE)
    node = next(n for n in graph.nodes if n.op in ("Conv", "FusedConv"))
    assert nhwc == bool(node.attrs.get("aotc_in_nhwc"))
    budget = 0 if case.scratch_floor == 0 else NO_BUDGET_LIMIT
    for traits, want in ((TargetTraits(), kernel), (TargetTraits(vector_unit=True, avx512=True), avx512_kernel)):
        assert choose(node, graph, candidates(node, graph, traits), budget).kernel == want


@pytest.mark.parametrize("case", NHWC_OUT, ids=[c.id for c in NHWC_OUT])
def test_transpose_to_nhwc_folded(case):
    """The Transpose after the conv is gone, the conv stores NHWC (not with a residual)."""
    from aot.passes import HOST_PIPELINE, simplify

    graph = simplify(lower(case.model), HOST_PIPELINE)
    kept = case.id == "nhwc_out_residual_kept"
    assert sum(n.op == "Transpose" for n in graph.nodes) == kept
    assert any(n.attrs.get("aotc_out_nhwc") for n in graph.nodes) != kept


# --- the kernel each case exercises ------------------------------------------------------------

@pytest.mark.parametrize("case_id,kernel", [
    ("conv_depthwise", "aotc_conv3x3_flat_f32"),
    ("conv3x3_flat_rgb_stride2", "aotc_conv3x3_flat_f32"),
    ("conv3x3_flat_grouped", "aotc_conv3x3_flat_f32"),
    ("conv3x3_flat_single_channel", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_flat_pads_at_end", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_flat_tiny", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_flat_rows_past_output", "aotc_conv3x3_flat_f32"),
    ("conv_depthwise_stride2", "aotc_conv_depthwise3x3_direct_f32"),  # (not flat: a 0 start pad, input past 2 OW)
    ("conv_depthwise_padded_stride2", "aotc_conv_depthwise3x3_f32"),
    ("conv_depthwise_right_border", "aotc_conv_depthwise3x3_f32"),
    ("conv_depthwise_dilated", "aotc_conv_depthwise_f32"),
    ("conv_1x1_few_positions", "aotc_conv_pointwise_t_f32"),
    ("conv_1x1_one_position_blocks", "aotc_conv_pointwise_t_f32"),
    ("conv_1x1", "aotc_conv_pointwise_f32"),
    ("conv_1x1_runtime_weights", "aotc_conv_pointwise_f32"),
    *[(c.id, "aotc_conv_pointwise_f32") for c in POSX if c.id.startswith("posx_1x1")],
    *[(c.id, "aotc_conv_implicit_f32") for c in POSX if c.id.startswith("posx_stem")],
    ("conv_implicit_panels", "aotc_conv_implicit_f32"),
    ("conv_implicit_wide_kernel_one_channel", "aotc_conv_implicit_f32"),
    ("conv_1x1_strided", "aotc_conv_implicit_f32"),
    ("conv1d", "aotc_conv_implicit_f32"),
    ("conv_runtime_weights_s1", "aotc_conv_s1_f32"),
    ("conv_runtime_weights_strided", "aotc_conv_f32"),
    ("conv3d", "aotc_conv_f32"),
    # with scratch, stride 2: where the last block of a row of outputs is nearly full (OW % 8 >= 5;
    # conv_depthwise_flat_pads_at_end above, OW = 4, stays flat)
    ("conv_dw3_s2_odd", "aotc_conv_depthwise3x3_direct_f32"),
    ("conv_dw3_s2_even", "aotc_conv_depthwise3x3_direct_f32"),
    # no scratch (tight_*: budget 0): every depthwise 3 x 3 at strides 1 or 2 with pads of 0 or 1
    *[(c.id, "aotc_conv_depthwise3x3_direct_f32") for c in CASES if c.id.startswith("tight_conv_dw3")],
    ("tight_conv_depthwise", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_stride2", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_same", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_one_column", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_multiplier_stride2", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_runtime_weights", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_flat_tiny", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_flat_large", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_flat_rows_past_output", "aotc_conv_depthwise3x3_direct_f32"),
    ("tight_conv_depthwise_padded_stride2", "aotc_conv_depthwise_kxk_f32"),  # a pad of 2
    ("tight_conv_depthwise_stride_1x2", "aotc_conv_depthwise_kxk_f32"),
    # (with scratch, a 3 x 3 stays on its padded plane)
    *[(c.id, "aotc_conv_depthwise_kxk_f32") for c in CASES
      if c.id.startswith(("conv_dwk", "tight_conv_dwk")) and c.id != "conv_dwk3_pads2_multiplier"],
    ("conv_dwk3_pads2_multiplier", "aotc_conv_depthwise3x3_f32"),
    ("tight_conv_depthwise_dilated", "aotc_conv_depthwise_f32"),
    *[(c.id, "aotc_conv_winograd_f32") for c in WINO],
    *[(c.id, "aotc_conv_winograd4_f32") for c in WINO4],
])
def test_kernel_choice(case_id, kernel):
    graph = lower(next(c for c in CASES if c.id == case_id).model)
    node = next(n for n in graph.nodes if n.op == "Conv")
    budget = 0 if case_id.startswith("tight_") else NO_BUDGET_LIMIT
    traits = TargetTraits(fast_math=next(c for c in CASES if c.id == case_id).fast_math)
    assert choose(node, graph, candidates(node, graph, traits), budget).kernel == kernel


def test_winograd4_only_with_fast_math():
    """F(4 x 4, 3 x 3) rounds past the default tolerance on some inputs (wino4_bands_clip): without
    --fast-math the same convs take another kernel, and a bundle with it names the nodes that took it."""
    for case in WINO4:
        graph = lower(case.model)
        node = next(n for n in graph.nodes if n.op == "Conv")
        assert choose(node, graph, candidates(node, graph, TargetTraits()), NO_BUDGET_LIMIT).kernel != \
            "aotc_conv_winograd4_f32", case.id
    case = WINO4[0]
    assert "fast_math" not in compile_model(case.model, Options(scratch_floor=1 << 30)).metadata
    fast = compile_model(case.model, Options(scratch_floor=1 << 30, fast_math=True))
    assert fast.metadata["fast_math"] == {"nodes": ["conv"]}


def test_winograd_with_threads_by_bands_or_on_convs_of_enough_work_per_float_streamed():
    """With --threads, a conv that can run by bands (a band a thread, the products of every output channel in
    its lane) keeps Winograd whatever its intensity: ResNet-18's and ResNet-50's 64-channel 56 x 56 convs; one
    that cannot (its lane would not hold a tile row's products of every output channel) keeps it only at 64
    multiply-adds per float of V and M or more (by blocks of output channels)."""
    assert winograd.best(64, 64, 56, 56, False, threads=2) is winograd.F2
    assert winograd.F2.runs_by_bands(56, 56, 64, 64, 2)
    assert winograd.best(128, 128, 28, 28, False, threads=2) is winograd.F2
    assert winograd.best(256, 256, 14, 14, True, threads=2) is winograd.F4
    assert winograd.best(64, 64, 56, 56, False) is winograd.F2
    # 2048 + 2048 channels: no lane holds even one tile row's products of every output channel
    assert not winograd.F2.runs_by_bands(56, 56, 2048, 2048, 2)
    assert winograd.threads_allow(winograd.F2, 2048, 2048, 56, 56, 2)  # intensity 1024
    assert not winograd.threads_allow(winograd.F2, 2048, 32, 56, 56, 2)  # intensity 31, and no band fits a lane


def test_winograd_bands_fill_whole_panels():
    """A band's GEMMs run its tiles rounded up to whole panels, so bands are cut where that wastes least:
    ResNet-18's 56 x 56 convs (28 tiles per row) in bands of 8 rows (224 tiles, 14 panels), not 7 (196, one
    panel of 4); within the budget, else the next best; none when not even one row fits."""
    scratch = 16 * ((64 + 64) * 224 + 2 * winograd.PITCH_PAD) * 4  # V and M, each matrix padded (4 KiB aliasing)
    assert winograd.F2.band_rows(56, 56, 64, 64, 1 << 30) == (8, scratch)
    assert winograd.F2.band_rows(56, 56, 64, 64, scratch - 1)[0] == 4  # 112 tiles: 7 panels
    assert winograd.F2.band_rows(56, 56, 64, 64, 16 * 128 * 32 * 4 - 1) is None


def test_winograd_with_threads_bands_fit_a_lane_per_thread():
    """With threads a Winograd conv's scratch is a lane per thread (conv_winograd.h), at most LANE_FLOATS, its
    bands cut so that the busiest thread runs the fewest GEMM columns: by bands (each thread whole bands, the
    products of every output channel in its lane) where there are as many bands as threads, else by blocks of
    LANE_M output channels (each thread the band's transformed inputs and a block's products)."""
    lanes = 2 * winograd.LANE_FLOATS * 4
    rows, scratch = winograd.F2.band_rows(28, 28, 128, 128, lanes, threads=2)
    # by bands: 8 tile rows (112 tiles, 7 panels) and 6 (84 tiles, 6 panels), one a thread; by blocks, all 14
    # rows would take 16 x 192 x 208 floats, past a lane, and 11 rows leave 3 (1 + 10 panels on each thread)
    assert (rows, scratch) == (8, 2 * 16 * ((128 + 128) * 112 + 2 * winograd.PITCH_PAD) * 4)
    assert winograd.F2.lane_floats(8, 14, 14, 128, 128, 2) == (16 * (256 * 112 + 2 * winograd.PITCH_PAD), True)
    # ResNet-50's 256-channel 14 x 14 convs: 4 and 3 tile rows (28 and 21 tiles, a panel pair each), not one
    # band of 49 tiles in 4 blocks of 64 channels
    assert winograd.F2.band_rows(14, 14, 256, 256, lanes, threads=2)[0] == 4
    # a 12 x 12 plane of 128 channels: one band (36 tiles, 3 panels) by 2 blocks of 64 channels beats two bands
    # of 18 tiles (2 panels each)
    rows, scratch = winograd.F2.band_rows(12, 12, 128, 128, lanes, threads=2)
    assert (rows, scratch) == (6, 2 * 16 * ((128 + winograd.LANE_M) * 48 + 2 * winograd.PITCH_PAD) * 4)
    assert not winograd.F2.lane_floats(6, 6, 6, 128, 128, 2)[1]
    rows, _ = winograd.F2.band_rows(28, 28, 1024, 1024, lanes, threads=2)  # a lane holds fewer tile rows
    assert 16 * (1024 + 1024) * ((rows * 14 + 15) // 16 * 16) <= winograd.LANE_FLOATS
    assert winograd.F2.band_rows(28, 28, 8192, 8192, lanes, threads=2) is None  # not one tile row fits


@pytest.mark.parametrize("case_id,kernel", [
    ("conv3x3_flat_single_channel", "aotc_conv3x3_flat_f32"),  # 4 output channels: igx3 takes multiples of 16
    ("conv_depthwise", "aotc_conv3x3_flat_f32"),
    ("conv3x3_flat_rgb_stride2", "aotc_conv3x3_flat_f32"),
    ("stemx_res_leaky_odd_batch", "aotc_conv3x3_flat_f32"),  # stride 2
    ("rgb_stem_igx3", "aotc_conv_igx3_f32"),
])
def test_kernel_choice_on_avx512_host(case_id, kernel):
    """On an AVX-512 host the 3 x 3 same-size full convs of few channels go to the implicit GEMM's igx3 path,
    the rest stays flat."""
    case = next(c for c in CASES + NATIVE if c.id == case_id)
    graph = lower(case.model)
    node = next(n for n in graph.nodes if n.op == "Conv")
    assert choose(node, graph, candidates(node, graph, TargetTraits(avx512=True)), NO_BUDGET_LIMIT).kernel == kernel


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


# --- the depthwise 3 x 3 kernel on tensors in buffers of exactly their size ---------------------

DW3_SWEEP = r"""
#include "aotc_conv.h"
#include "aotc_gemm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned seed = 1;
static float rnd(void) { seed = seed * 1103515245u + 12345u; return (float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f; }
static float *buffer(size_t n) { /* exactly n floats, random */
    float *b = malloc(n * sizeof(float) + 1);
    size_t i;
    for (i = 0; i < n; ++i) b[i] = rnd();
    return b;
}

/* One conv against a plain loop; 1 if it differs. */
static int check(int N, int C, int mult, int IH, int IW, int s, const int *pad, int bias, int res, int act) {
    const int OH = (IH + pad[0] + pad[2] - 3) / s + 1, OW = (IW + pad[1] + pad[3] - 3) / s + 1, M = C * mult;
    const size_t xn = (size_t)N * C * IH * IW, yn = (size_t)N * M * OH * OW;
    float *x, *w, *b, *r, *y;
    aotc_conv_params p = {0};
    size_t i;
    int n, o, oy, ox, ky, kx, bad = 0;
    if (IH + pad[0] + pad[2] < 3 || IW + pad[1] + pad[3] < 3) return 0;
    x = buffer(xn), w = buffer((size_t)M * 9), b = bias ? buffer(M) : NULL, r = res ? buffer(yn) : NULL, y = buffer(yn);
    p.batch = N, p.group = C, p.in_c = C, p.out_c = M;
    p.in_size[0] = 1, p.in_size[1] = IH, p.in_size[2] = IW, p.out_size[0] = 1, p.out_size[1] = OH, p.out_size[2] = OW;
    p.kernel[0] = 1, p.kernel[1] = 3, p.kernel[2] = 3, p.strides[0] = 1, p.strides[1] = s, p.strides[2] = s;
    p.dilations[0] = p.dilations[1] = p.dilations[2] = 1, p.pads[1] = pad[0], p.pads[2] = pad[1];
    p.act = act, p.act_lo = 0.0f, p.act_hi = 0.5f, p.act_alpha = 0.1f;
    aotc_conv_depthwise3x3_direct_f32(&p, x, w, b, r, y);
    for (n = 0; n < N; ++n) for (o = 0; o < M; ++o) for (oy = 0; oy < OH; ++oy) for (ox = 0; ox < OW; ++ox) {
        double v = b ? b[o] : 0.0;
        for (ky = 0; ky < 3; ++ky) for (kx = 0; kx < 3; ++kx) {
            const int iy = oy * s - pad[0] + ky, ix = ox * s - pad[1] + kx;
            if (iy >= 0 && iy < IH && ix >= 0 && ix < IW)
                v += (double)w[o * 9 + ky * 3 + kx] * x[((size_t)(n * C + o / mult) * IH + iy) * IW + ix];
        }
        i = ((size_t)(n * M + o) * OH + oy) * OW + ox;
        v += r ? r[i] : 0.0;
        if (act == AOTC_ACT_CLAMP) v = v < 0.0 ? 0.0 : v > 0.5 ? 0.5 : v;
        if (act == AOTC_ACT_LEAKY && v < 0.0) v *= 0.1;
        if (!(fabs(y[i] - v) <= 1e-5)) bad = 1;
    }
    if (bad) printf("differs: N %d C %d x %d, %d x %d, stride %d, pads %d %d %d %d\n", N, C, mult, IH, IW, s, pad[0],
                    pad[1], pad[2], pad[3]);
    free(x), free(w), free(b), free(r), free(y);
    return bad;
}

int main(void) {
    int bad = 0, s, k, IH, IW, pad[4];
    for (s = 1; s <= 2; ++s) for (k = 0; k < 16; ++k) { /* every mix of pads of 0 and 1 */
        pad[0] = k & 1, pad[1] = k >> 1 & 1, pad[2] = k >> 2 & 1, pad[3] = k >> 3 & 1;
        for (IH = 1; IH <= 9; ++IH) for (IW = 1; IW <= 11; ++IW) {
            const int v = IH * 7 + IW * 3 + k; /* batch, channels, multiplier, bias, residual, activation */
            bad += check(1 + (v & 1), 1 + v % 3, 1 + (v >> 2 & 1), IH, IW, s, pad, v & 1, v >> 1 & 1, v % 3);
        }
        bad += check(2, 2, 1, 5, 300 + k, s, pad, 1, k & 1, AOTC_ACT_CLAMP);      /* rows longer than a flat run */
        bad += check(1, 3, 2, 70, 5 + k, s, pad, 1, k & 1, k % 3);                /* planes of several runs */
        bad += check(1, 2, 1, 33, 127 + k % 3, s, pad, 0, 1, AOTC_ACT_NONE);      /* runs of 126 to 128 outputs */
    }
    return bad != 0;
}
"""


@pytest.mark.full
@pytest.mark.parametrize("block", [None, 1], ids=["blocks", "one_by_one"])
def test_depthwise3x3_direct_reads_and_writes_only_its_tensors(tmp_path, block):
    """aotc_conv_depthwise3x3_direct_f32 with every tensor in a buffer of exactly its size, under
    AddressSanitizer and UndefinedBehaviorSanitizer, against a plain loop: strides 1 and 2, every
    mix of pads of 0 and 1, planes of 1 to 9 rows by 1 to 11 columns, a multiplier, batch, bias,
    residual and activations; with the runs in blocks (rounded up where they stay inside the
    tensors) and output by output (AOTC_DW3_BLOCK=1, as on targets without vector units)."""
    require_tool("gcc")
    (tmp_path / "sweep.c").write_text(DW3_SWEEP)
    exe = tmp_path / "sweep"
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O0", "-std=c99", "-Wall", "-Wextra",
             "-Werror"] + ([f"-DAOTC_DW3_BLOCK={block}"] if block else [])  # (-O0: quick to build; the same paths)
    subprocess.run(["gcc", *flags, *kernel_include_flags(), str(tmp_path / "sweep.c"),
                    *(str(kernel_file(f)) for f in ("conv_depthwise3x3_direct.c", "conv_dw3_avx512.c",
                                                    "conv_dwk_avx512.c", "gemm.c")), "-lm", "-o", str(exe)],
                   check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, env={"ASAN_OPTIONS": "detect_leaks=1"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
