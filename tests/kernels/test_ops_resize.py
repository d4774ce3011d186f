"""Resize (opset 10, 11, 13, 18, 19) and Upsample (7, 9) against onnxruntime: nearest, linear and cubic
modes, every coordinate_transformation_mode (tf_crop_and_resize with its roi), antialias, every nearest_mode, scales or
sizes, up and down by integer and non-integer factors, opset-18 axes and keep_aspect_ratio_policy."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from opcheck import Case, model_case, op_case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError


def resize_case(tag: str, shape: tuple, *, scales: list | None = None, sizes: list | None = None,
                opset: int = 13, axes: list | None = None, **attrs) -> Case:
    """One Resize node; roi/scales/sizes laid out as the opset wants them (empty or omitted when unused)."""
    if axes is not None:
        attrs["axes"] = axes
    consts: dict[str, np.ndarray] = {}
    order = ["x"]
    if opset < 11:
        consts["scales"] = np.array(scales, np.float32)
        order.append("scales")
    else:
        if opset < 13:  # roi and scales are required inputs; empty when unused
            consts["roi"] = np.array([], np.float32)
            order.append("roi")
        else:
            order.append("")
        if scales is not None:
            consts["scales"] = np.array(scales, np.float32)
            order.append("scales")
        elif opset < 13:
            consts["no_scales"] = np.array([], np.float32)
            order.append("no_scales")
        else:
            order.append("")
        if sizes is not None:
            consts["sizes"] = np.array(sizes, np.int64)
            order.append("sizes")
    return op_case(f"{tag}_op{opset}", "Resize", {"x": shape}, consts=consts, attrs=attrs, opset=opset,
                   input_order=order)


def upsample_case(tag: str, shape: tuple, scales: list, opset: int, mode: str = "nearest") -> Case:
    if opset < 9:
        return op_case(f"upsample_{tag}_op{opset}", "Upsample", {"x": shape},
                       attrs={"mode": mode, "scales": [float(v) for v in scales]}, opset=opset)
    return op_case(f"upsample_{tag}_op{opset}", "Upsample", {"x": shape},
                   consts={"scales": np.array(scales, np.float32)}, attrs={"mode": mode}, opset=opset)


CTMS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]

CASES: list[Case] = []
# nearest: halving and doubling put source coordinates on exact halves, where the modes differ
for ctm in CTMS:
    for nm in NEAREST_MODES:
        CASES.append(resize_case(f"nearest_{ctm}_{nm}_scales", (1, 2, 6, 8), scales=[1, 1, 0.5, 2],
                                 mode="nearest", coordinate_transformation_mode=ctm, nearest_mode=nm))
        CASES.append(resize_case(f"nearest_{ctm}_{nm}_sizes", (1, 2, 7, 8), sizes=[1, 2, 4, 13],
                                 mode="nearest", coordinate_transformation_mode=ctm, nearest_mode=nm))
CASES += [resize_case(f"nearest_tf_half_pixel_for_nn_{nm}", (1, 2, 5, 6), scales=[1, 1, 0.6, 1.5], opset=11,
                      mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode=nm)
          for nm in NEAREST_MODES]
# linear and cubic: every transformation, up and down, integer and non-integer factors
for ctm in CTMS:
    CASES += [
        resize_case(f"linear_{ctm}_up", (1, 2, 4, 5), scales=[1, 1, 2, 2.5], mode="linear",
                    coordinate_transformation_mode=ctm),
        resize_case(f"linear_{ctm}_down", (2, 3, 9, 10), sizes=[2, 3, 4, 7], mode="linear",
                    coordinate_transformation_mode=ctm),
        resize_case(f"linear_{ctm}_mixed", (1, 1, 6, 5), scales=[1, 1, 0.5, 3], mode="linear",
                    coordinate_transformation_mode=ctm, opset=11),
        resize_case(f"cubic_{ctm}_up", (1, 2, 5, 6), scales=[1, 1, 1.7, 2], mode="cubic",
                    coordinate_transformation_mode=ctm),
        resize_case(f"cubic_{ctm}_down", (1, 2, 9, 11), sizes=[1, 2, 5, 4], mode="cubic",
                    coordinate_transformation_mode=ctm),
        resize_case(f"cubic_{ctm}_exclude", (1, 1, 6, 7), scales=[1, 1, 2.5, 0.6], mode="cubic",
                    coordinate_transformation_mode=ctm, exclude_outside=1),
    ]
CASES += [
    resize_case("cubic_coeff_a", (1, 2, 5, 6), scales=[1, 1, 2, 1.5], mode="cubic", cubic_coeff_a=-0.5),
    resize_case("cubic_a_exclude", (1, 2, 4, 4), sizes=[1, 2, 9, 3], mode="cubic", cubic_coeff_a=-0.6,
                exclude_outside=1, coordinate_transformation_mode="pytorch_half_pixel"),
    # an output length of 1: pytorch_half_pixel and align_corners take coordinate 0
    resize_case("linear_pytorch_len1", (1, 1, 5, 6), sizes=[1, 1, 1, 3], mode="linear",
                coordinate_transformation_mode="pytorch_half_pixel"),
    resize_case("cubic_pytorch_len1", (1, 1, 5, 6), sizes=[1, 1, 1, 3], mode="cubic",
                coordinate_transformation_mode="pytorch_half_pixel"),
    resize_case("cubic_align_len1", (1, 1, 5, 6), sizes=[1, 1, 4, 1], mode="cubic",
                coordinate_transformation_mode="align_corners"),
    resize_case("nearest_len1_to_many", (1, 1, 1, 3), sizes=[1, 1, 4, 7], mode="nearest"),
    resize_case("linear_len1_to_many", (1, 1, 1, 3), sizes=[1, 1, 4, 7], mode="linear"),
    # layouts and ranks
    resize_case("linear_2d", (5, 7), scales=[1.5, 0.7], mode="linear"),
    resize_case("linear_2d_one_axis", (5, 7), scales=[1, 2.5], mode="linear"),
    resize_case("linear_nhwc", (2, 4, 5, 3), scales=[1, 2, 1.5, 1], mode="linear"),
    resize_case("linear_nhwc_align", (1, 5, 4, 8), sizes=[1, 3, 7, 8], mode="linear",
                coordinate_transformation_mode="align_corners"),
    resize_case("linear_3d_trilinear", (3, 4, 5), scales=[2, 0.5, 1.6], mode="linear"),
    resize_case("linear_5d_trilinear", (1, 2, 3, 4, 5), scales=[1, 1, 2, 1.5, 0.6], mode="linear"),
    resize_case("linear_big", (1, 3, 32, 32), scales=[1, 1, 2, 2], mode="linear"),
    resize_case("cubic_2d", (6, 5), sizes=[4, 9], mode="cubic"),
    resize_case("nearest_5d_all_axes", (2, 3, 2, 3, 4), scales=[2, 0.5, 1.5, 1, 2], mode="nearest"),
    resize_case("nearest_rank1", (7,), scales=[1.6], mode="nearest", nearest_mode="round_prefer_ceil"),
    resize_case("nearest_3d", (3, 4, 5), sizes=[5, 4, 2], mode="nearest", nearest_mode="floor"),
    resize_case("nearest_nhwc", (1, 3, 4, 5), scales=[1, 2, 2, 1], mode="nearest"),
    resize_case("nearest_big_2x", (2, 8, 16, 16), scales=[1, 1, 2, 2], mode="nearest",
                coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    # unchanged shape: a copy, whatever the scale says; a scale of 1.1 on a 5-long axis still resamples
    resize_case("nearest_copy", (1, 2, 5, 5), scales=[1, 1, 1.1, 1.1], mode="nearest"),
    resize_case("linear_copy", (1, 2, 5, 5), scales=[1, 1, 1.1, 1.0], mode="linear"),
    resize_case("nearest_partial_11", (1, 2, 5, 6), scales=[1, 1, 1.1, 2], mode="nearest"),
    resize_case("linear_partial_11", (1, 2, 5, 6), scales=[1, 1, 1.1, 2], mode="linear"),
    # opset 18: axes, keep_aspect_ratio_policy
    resize_case("axes_scales", (1, 2, 4, 6), scales=[2, 0.5], axes=[2, 3], opset=18, mode="linear"),
    resize_case("axes_negative", (1, 2, 4, 6), scales=[1.5], axes=[-2], opset=18, mode="nearest"),
    resize_case("axes_sizes", (1, 2, 4, 6), sizes=[9], axes=[3], opset=18, mode="cubic"),
    resize_case("keep_not_larger", (1, 2, 4, 6), sizes=[1, 2, 9, 9], opset=18, mode="linear",
                keep_aspect_ratio_policy="not_larger"),
    resize_case("keep_not_smaller", (1, 2, 4, 6), sizes=[1, 2, 9, 9], opset=18, mode="nearest",
                keep_aspect_ratio_policy="not_smaller"),
    resize_case("keep_axes_not_larger", (1, 2, 5, 7), sizes=[3, 3], axes=[2, 3], opset=18, mode="nearest",
                keep_aspect_ratio_policy="not_larger"),
    resize_case("keep_axes_not_smaller", (1, 2, 5, 7), sizes=[3, 3], axes=[2, 3], opset=18, mode="linear",
                keep_aspect_ratio_policy="not_smaller", coordinate_transformation_mode="align_corners"),
    resize_case("keep_stretch", (1, 2, 5, 7), sizes=[3, 3], axes=[3, 2], opset=18, mode="linear",
                keep_aspect_ratio_policy="stretch"),
    # opset 19: half_pixel_symmetric (differs from half_pixel when the output length is rounded)
    resize_case("symmetric_nearest", (1, 2, 5, 7), scales=[1, 1, 0.7, 1.55], opset=19, mode="nearest",
                coordinate_transformation_mode="half_pixel_symmetric"),
    resize_case("symmetric_linear", (1, 2, 5, 7), scales=[1, 1, 0.7, 1.55], opset=19, mode="linear",
                coordinate_transformation_mode="half_pixel_symmetric"),
    resize_case("symmetric_cubic_sizes", (1, 2, 5, 7), sizes=[1, 2, 3, 11], opset=19, mode="cubic",
                coordinate_transformation_mode="half_pixel_symmetric"),
    # Resize-10: asymmetric; nearest floors when enlarging and rounds up when shrinking (onnxruntime)
    resize_case("nearest_up", (1, 2, 3, 4), scales=[1, 1, 2, 2.5], opset=10, mode="nearest"),
    resize_case("nearest_down", (1, 2, 7, 9), scales=[1, 1, 0.6, 0.45], opset=10, mode="nearest"),
    resize_case("linear_up", (1, 2, 3, 4), scales=[1, 1, 2, 1.5], opset=10, mode="linear"),
    resize_case("linear_down", (1, 2, 7, 9), scales=[1, 1, 0.6, 0.45], opset=10, mode="linear"),
    # Upsample
    upsample_case("nearest", (1, 2, 3, 4), [1, 1, 2, 3], opset=7),
    upsample_case("linear", (1, 2, 3, 4), [1, 1, 2, 2], opset=7, mode="linear"),
    upsample_case("nearest_frac", (1, 2, 3, 4), [1, 1, 1.5, 2.5], opset=9),
    upsample_case("nearest_nc", (1, 2, 3, 4), [2, 3, 1, 1], opset=9),
    upsample_case("linear_frac", (1, 2, 3, 4), [1, 1, 2.5, 1.7], opset=9, mode="linear"),
]




def runtime_sizes_case(tag: str, shape: tuple, sizes: list[int], axes: list[int] | None = None, **attrs) -> Case:
    """sizes an input of the model (issue 16): taken from the declared output shape, the value not read."""
    if axes is not None:
        attrs["axes"] = axes
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    case = op_case(f"runtime_sizes_{tag}", "Resize", {"x": x, "sizes": np.array(sizes, np.int64)}, attrs=attrs,
                   opset=18, input_order=["x", "", "", "sizes"])
    out = list(shape)
    for k, ax in enumerate(axes if axes is not None else range(len(shape))):
        out[ax] = sizes[k]
    for n in out:
        case.model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = n
    return case


CASES += [runtime_sizes_case("linear_up", (1, 2, 3, 4), [1, 2, 5, 7], mode="linear"),
          runtime_sizes_case("nearest_down_axes", (1, 2, 6, 8), [4, 3], axes=[2, 3], mode="nearest")]


def runtime_scales_case(tag: str, shape: tuple, scales: list[float], axes: list[int] | None = None,
                        opset: int = 18, declared: tuple | None = None, op: str = "Resize", **attrs) -> Case:
    """scales an input of the model (issue 51): the declared output shape compiled in, the coordinates and
    weights worked out from the scales at run time (aot/kernels/resize.py ResizeValues)."""
    if axes is not None:
        attrs["axes"] = axes
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    feeds = {"x": x, "scales": np.array(scales, np.float32)}
    order = ["x", "scales"] if op == "Upsample" else ["x", "", "scales"]
    case = op_case(f"runtime_scales_{tag}", op, feeds, attrs=attrs, opset=opset, input_order=order)
    out = list(shape)
    for k, ax in enumerate(axes if axes is not None else range(len(shape))):
        out[ax] = 0 if declared else int(np.float32(scales[k]) * np.float32(shape[ax]))
    for n in declared or out:
        case.model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = n
    return case


RUNTIME_SCALES = [
    *[runtime_scales_case(f"nearest_{nm}", (1, 2, 5, 6), [1, 1, 0.6, 1.5], mode="nearest", nearest_mode=nm)
      for nm in NEAREST_MODES],
    runtime_scales_case("nearest_up_2x", (1, 2, 3, 4), [1, 1, 2, 2], mode="nearest"),
    runtime_scales_case("nearest_tf_half_pixel_for_nn", (1, 2, 5, 6), [1, 1, 0.6, 1.5], mode="nearest",
                        coordinate_transformation_mode="tf_half_pixel_for_nn"),
    runtime_scales_case("nearest_asymmetric_axes", (1, 2, 4, 5), [1.5, 2.5], axes=[3, 2], mode="nearest",
                        coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    *[runtime_scales_case(f"linear_{ctm}", (1, 2, 4, 5), [1, 1, 2.5, 0.6], mode="linear",
                          coordinate_transformation_mode=ctm)
      for ctm in ("half_pixel", "pytorch_half_pixel", "asymmetric", "half_pixel_symmetric")],
    runtime_scales_case("linear_one_axis", (2, 3, 7), [1, 1, 1.7], mode="linear"),
    runtime_scales_case("cubic_half_pixel", (1, 2, 4, 5), [1, 1, 1.8, 0.7], mode="cubic"),
    runtime_scales_case("cubic_exclude_outside", (1, 2, 4, 5), [1, 1, 0.6, 2.2], mode="cubic", exclude_outside=1,
                        cubic_coeff_a=-0.5),
    runtime_scales_case("cubic_asymmetric", (1, 1, 5, 4), [1, 1, 1.5, 3], mode="cubic",
                        coordinate_transformation_mode="asymmetric"),
    runtime_scales_case("same_shape_copies", (1, 1, 4, 5), [1, 1, 1.1, 1], mode="linear"),
    runtime_scales_case("upsample_nearest", (1, 2, 3, 4), [1, 1, 2, 3], opset=9, op="Upsample"),
    runtime_scales_case("upsample_linear", (1, 2, 3, 4), [1, 1, 2.5, 1.7], opset=9, op="Upsample", mode="linear"),
]
CASES += RUNTIME_SCALES

# antialias=1 (opset 18): axes that shrink filter with the kernel widened by 1 / scale (onnxruntime and the
# ONNX reference agree); constant scales, sizes and scales read at run time, up to 12 taps an index
ANTIALIAS = [
    *[resize_case(f"antialias_{mode}_{tag}", (1, 2, 7, 9), opset=18, mode=mode, antialias=1, **given)
      for mode in ("linear", "cubic")
      for tag, given in (("scales", {"scales": [1, 1, 0.6, 0.45]}), ("sizes", {"sizes": [1, 2, 3, 5]}),
                         ("mixed", {"scales": [1, 1, 1.5, 0.3]}))],
    resize_case("antialias_cubic_exclude_outside", (1, 2, 7, 9), scales=[1, 1, 0.5, 0.4], opset=18, mode="cubic",
                antialias=1, exclude_outside=1, cubic_coeff_a=-0.5),
    *[runtime_scales_case(f"antialias_{mode}", (1, 2, 7, 9), [1, 1, 0.6, 0.45], mode=mode, antialias=1)
      for mode in ("linear", "cubic")],
    runtime_scales_case("antialias_linear_asymmetric", (1, 1, 8, 30), [1, 1, 0.5, 0.2], mode="linear",
                        antialias=1, coordinate_transformation_mode="asymmetric"),
]
CASES += ANTIALIAS


def crop_case(tag: str, shape: tuple, roi: list[float], out: tuple, runtime_roi: bool = True, opset: int = 18,
              axes: list[int] | None = None, **attrs) -> Case:
    """coordinate_transformation_mode tf_crop_and_resize: sizes constant, the roi a model input (read by the
    kernel) or a constant; the output shape declared."""
    if axes is not None:
        attrs["axes"] = axes
    listed = axes if axes is not None else range(len(shape))
    sizes = np.array([out[ax] for ax in listed], np.int64)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    roi_v = np.array(roi, np.float32)
    feeds = {"x": x, "roi": roi_v} if runtime_roi else {"x": x}
    consts = {"sizes": sizes} if runtime_roi else {"roi": roi_v, "sizes": sizes}
    order = ["x", "roi", "", "sizes"]
    if opset < 13:  # scales a required input, empty
        consts["no_scales"] = np.array([], np.float32)
        order[2] = "no_scales"
    case = op_case(f"crop_{tag}", "Resize", feeds, consts=consts, opset=opset, input_order=order,
                   attrs={"coordinate_transformation_mode": "tf_crop_and_resize", **attrs})
    for n in out:
        case.model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = n
    return case


# tf_crop_and_resize: rois inside and beyond [0, 1] (extrapolated samples), a crop that keeps an axis's size,
# one-long outputs, opset-18 axes in either order, roi constant or read at run time
CROP = [
    crop_case("linear", (1, 2, 6, 7), [0, 0, 0.2, 0.3, 1, 1, 0.8, 0.9], (1, 2, 4, 5), mode="linear"),
    crop_case("linear_extrapolate", (1, 2, 6, 7), [0, 0, -0.2, 0.4, 1, 1, 0.7, 1.5], (1, 2, 5, 4), mode="linear",
              extrapolation_value=3.5),
    crop_case("linear_one_long", (1, 1, 5, 6), [0, 0, 0.3, 0.1, 1, 1, 0.6, 0.9], (1, 1, 1, 3), mode="linear"),
    crop_case("linear_constant_roi", (1, 2, 6, 7), [0, 0, 0.1, -0.3, 1, 1, 1.2, 0.8], (1, 2, 5, 3),
              runtime_roi=False, mode="linear", extrapolation_value=-1.0),
    crop_case("linear_axes_3_2", (1, 2, 6, 7), [0.3, 0.2, 0.9, 1.1], (1, 2, 4, 5), axes=[3, 2], mode="linear"),
    crop_case("cubic", (1, 2, 6, 7), [0, 0, 0.2, -0.1, 1, 1, 0.9, 0.8], (1, 2, 4, 6), mode="cubic"),
    crop_case("nearest", (1, 2, 6, 7), [0, 0, 0.15, -0.1, 1, 1, 0.85, 1.2], (1, 2, 4, 6), mode="nearest",
              extrapolation_value=9.0),
    crop_case("linear_opset11", (1, 2, 6, 7), [0, 0, 0.2, 0.3, 1, 1, 0.8, 0.9], (1, 2, 4, 5), opset=11,
              mode="linear"),
]
CASES += CROP


def kept_aspect_case(tag: str, shape: tuple, sizes: list[int], axes: list[int], declared: tuple, policy: str,
                     **attrs) -> Case:
    """sizes a model input under keep_aspect_ratio_policy not_larger / not_smaller: the kernel reads them."""
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    case = op_case(f"runtime_sizes_{tag}", "Resize", {"x": x, "sizes": np.array(sizes, np.int64)},
                   attrs={"axes": axes, "keep_aspect_ratio_policy": policy, **attrs}, opset=18,
                   input_order=["x", "", "", "sizes"])
    for n in declared:
        case.model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = n
    return case


CASES += [kept_aspect_case("not_larger_nearest", (1, 2, 4, 6), [3, 7], [2, 3], (1, 2, 3, 5), "not_larger",
                           mode="nearest"),
          kept_aspect_case("not_smaller_linear", (1, 2, 4, 6), [5, 7], [2, 3], (1, 2, 5, 8), "not_smaller",
                           mode="linear"),
          kept_aspect_case("not_larger_cubic", (1, 1, 5, 4), [8, 9], [2, 3], (1, 1, 8, 6), "not_larger",
                           mode="cubic")]
RUNTIME_SIZES_WRONG = [kept_aspect_case("wrong_not_larger", (1, 2, 4, 6), [4, 7], [2, 3], (1, 2, 3, 5),
                                        "not_larger", mode="nearest"),
                       kept_aspect_case("wrong_zero_size", (1, 2, 4, 6), [0, 7], [2, 3], (1, 2, 3, 5),
                                        "not_smaller", mode="linear")]

# scales that do not give the declared shape, or no shape at all: the run returns AOTC_ERR_SHAPE
RUNTIME_SCALES_WRONG = [
    runtime_scales_case("wrong_other_shape", (1, 1, 2, 2), [1, 1, 3, 2], declared=(1, 1, 4, 4), mode="linear"),
    runtime_scales_case("wrong_negative", (1, 1, 2, 2), [1, 1, -2, 2], declared=(1, 1, 4, 4), mode="nearest"),
    runtime_scales_case("wrong_nan", (1, 1, 2, 2), [1, 1, float("nan"), 2], declared=(1, 1, 4, 4), mode="cubic"),
    runtime_scales_case("wrong_huge", (1, 1, 2, 2), [1, 1, 3e38, 2], declared=(1, 1, 4, 4), mode="linear"),
    runtime_scales_case("wrong_antialias", (1, 1, 8, 8), [1, 1, 0.25, 0.5], declared=(1, 1, 4, 4), mode="cubic",
                        antialias=1),
]


# GridSample (issue 16): every mode, padding and align_corners in 2-D against onnxruntime, with grid points
# beyond [-1, 1] so every padding rule is exercised; 1-D and 3-D (opset 20) against onnx's reference
_GRID_RNG = np.random.default_rng(20)
for mode in ("nearest", "linear", "cubic"):
    for padding in ("zeros", "border", "reflection"):
        for align in (0, 1):
            grid = _GRID_RNG.uniform(-1.6, 1.6, (2, 4, 5, 2)).astype(np.float32)
            CASES.append(op_case(f"gridsample_{mode}_{padding}_{align}", "GridSample",
                                 {"x": (2, 3, 5, 6), "grid": grid},
                                 attrs={"mode": mode, "padding_mode": padding, "align_corners": align}, opset=20))
CASES.append(op_case("gridsample_opset16_bilinear", "GridSample", {"x": (1, 2, 4, 4),
                                                                   "grid": _GRID_RNG.uniform(-1, 1, (1, 3, 3, 2))
                                                                   .astype(np.float32)},
                     attrs={"mode": "bilinear"}, opset=16))
for tag, xs, gs in (("1d", (2, 2, 7), (2, 5, 1)), ("3d", (1, 2, 3, 4, 5), (1, 2, 3, 4, 3))):
    for mode in ("nearest", "linear"):
        case = op_case(f"gridsample_{tag}_{mode}", "GridSample",
                       {"x": xs, "grid": _GRID_RNG.uniform(-1.3, 1.3, gs).astype(np.float32)},
                       attrs={"mode": mode, "padding_mode": "reflection"}, opset=20)
        case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
        CASES.append(case)


# AffineGrid (opset 20): theta times the base grid, 2-D and 3-D, both align_corners; size constant or an
# input the declared output shape pins (checked at run time)
for align in (0, 1):
    CASES.append(op_case(f"affine_grid_2d_{align}", "AffineGrid", {"theta": (2, 2, 3)},
                         consts={"size": np.array([2, 3, 4, 5], np.int64)}, attrs={"align_corners": align}, opset=20))
    CASES.append(op_case(f"affine_grid_3d_{align}", "AffineGrid", {"theta": (1, 3, 4)},
                         consts={"size": np.array([1, 2, 3, 4, 2], np.int64)}, attrs={"align_corners": align},
                         opset=20))
_runtime_size = op_case("affine_grid_runtime_size", "AffineGrid", {"theta": (2, 2, 3),
                                                                   "size": np.array([2, 7, 3, 4], np.int64)}, opset=20)
for _n in (2, 3, 4, 2):
    _runtime_size.model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = _n
CASES.append(_runtime_size)


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


# --- beyond onnxruntime: linear on axes it does not take, cubic antialias on axes it does not
# take, a tf_crop_and_resize that keeps the shape, checked against the ONNX reference -------

BEYOND = [
    resize_case("linear_4d_three_axes", (2, 3, 4, 5), scales=[1, 1.5, 2, 0.6], mode="linear"),
    resize_case("linear_5d_four_axes", (2, 3, 2, 3, 4), scales=[1.5, 1, 2, 0.7, 1.3], mode="linear",
                coordinate_transformation_mode="asymmetric"),
    resize_case("linear_6d_five_axes", (2, 3, 2, 3, 2, 3), scales=[1, 2, 1.5, 0.7, 2, 1.4], mode="linear"),
    resize_case("linear_1d", (9,), scales=[1.7], mode="linear", coordinate_transformation_mode="asymmetric"),
    resize_case("cubic_nchw_outer", (2, 3, 4, 5), scales=[1, 2, 1, 1.5], mode="cubic"),
    runtime_scales_case("antialias_cubic_mixed_axes", (2, 7, 9), [2.5, 0.3], axes=[2, 1], mode="cubic", antialias=1,
                        exclude_outside=1),
    # onnxruntime copies x when the shape does not change, whatever the roi; the reference crops
    crop_case("linear_same_size", (1, 1, 5, 5), [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.6], (1, 1, 5, 5), mode="linear"),
    resize_case("antialias_linear_three_axes", (3, 2, 7, 9), scales=[0.7, 1, 0.5, 0.25], opset=18, mode="linear",
                antialias=1, coordinate_transformation_mode="pytorch_half_pixel"),
]


@pytest.fixture(scope="module")
def built_beyond():
    return shared_build(BEYOND)


@pytest.mark.parametrize("case_id", [c.id for c in BEYOND])
def test_matches_onnx_reference(built_beyond, case_id):
    case = built_beyond.cases[case_id]
    ours = built_beyond.run(case_id)[0]
    ref = ReferenceEvaluator(case.model).run(None, case.feeds)[0]
    np.testing.assert_allclose(ours, ref, atol=1e-5 * max(1.0, float(np.max(np.abs(ref)))))


# --- refused --------------------------------------------------------------------------

def _compile(node_inputs: list, consts: dict, attrs: dict, opset: int = 13, x_type: int = 1,
             extra_inputs: list | None = None, shape: tuple = (1, 1, 4, 4)):
    x = helper.make_tensor_value_info("x", x_type, shape)
    node = helper.make_node("Resize", node_inputs, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [x, *(extra_inputs or [])],
                              [helper.make_tensor_value_info("y", x_type, None)],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = model_case("m", graph, {}, opset).model
    return compile_model(model, Options(name="m"))


SCALES = {"scales": np.array([1, 1, 2, 2], np.float32)}


def test_refuses_tf_crop_and_resize_roi_of_another_length():
    consts = {"roi": np.array([0.1, 0.1, 0.9, 0.9], np.float32), **SCALES}
    with pytest.raises(AotcError, match=r"roi has 4 values for 4 axes \(8 expected"):
        _compile(["x", "roi", "scales"], consts, {"mode": "linear",
                                                  "coordinate_transformation_mode": "tf_crop_and_resize"})


def test_refuses_nearest_antialias():
    """onnxruntime and the ONNX reference both refuse antialias=1 with mode nearest: no answer to match."""
    with pytest.raises(AotcError, match="antialias=1 with mode nearest"):
        _compile(["x", "", "scales"], {"scales": np.array([1, 1, 0.5, 0.5], np.float32)},
                 {"mode": "nearest", "antialias": 1}, opset=18)


def test_refuses_scales_computed_at_run_time_without_a_declared_shape():
    s = helper.make_tensor_value_info("s", 1, [4])
    with pytest.raises(AotcError, match="scales computed at run time set the output shape"):
        _compile(["x", "", "s"], {}, {"mode": "nearest"}, extra_inputs=[s])


def test_refuses_align_corners_with_scales_computed_at_run_time():
    case = runtime_scales_case("align_corners", (1, 1, 4, 4), [1, 1, 0.8, 0.8], mode="linear",
                               coordinate_transformation_mode="align_corners")
    with pytest.raises(AotcError, match="align_corners with scales computed at run time"):
        compile_model(case.model)


@pytest.mark.parametrize("case", RUNTIME_SCALES_WRONG + RUNTIME_SIZES_WRONG,
                         ids=[c.id for c in RUNTIME_SCALES_WRONG + RUNTIME_SIZES_WRONG])
def test_run_time_scales_for_another_shape_return_an_error_code(case):
    with pytest.raises(AssertionError, match="returned -2"):
        shared_build([case]).run(case.id)


def test_refuses_output_shape_onnxruntime_computes_differently():
    # 5 * float32(2.6) is 12.9999995: ONNX shape inference says 12, onnxruntime (in float32) says 13
    with pytest.raises(AotcError, match=r"shape \[1, 1, 10, 12\] .* differs from onnxruntime's \[1, 1, 10, 13\]"):
        _compile(["x", "", "scales"], {"scales": np.array([1, 1, 2, 2.6], np.float32)}, {"mode": "linear"},
                 shape=(1, 1, 5, 5))


def test_integer_data_nearest_only():
    """8-bit tensors (quantized models) resize by nearest, a gather; their interpolation is refused."""
    _compile(["x", "", "scales"], SCALES, {"mode": "nearest"}, x_type=2)
    with pytest.raises(AotcError, match="linear Resize of uint8 is not supported"):
        _compile(["x", "", "scales"], SCALES, {"mode": "linear"}, x_type=2)
    with pytest.raises(AotcError, match="dtype int32 is not supported"):
        _compile(["x", "", "scales"], SCALES, {"mode": "nearest"}, x_type=6)
