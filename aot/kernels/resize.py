"""Host ops of the 'resize' family (kernels in runtime_c/kernels/resize/resize.c): ONNX Resize and Upsample.

canonical/resize.py turns Upsample-7/9 and Resize-10..19 into one Resize with `mode`,
`coordinate_transformation_mode`, `nearest_mode`, per-axis float32 `scales`,
`cubic_coeff_a` and `exclude_outside`; the output shape is static. Everything that
depends on coordinates is computed here, once, in `source_coordinate` and the three
`*_taps` functions, with onnxruntime's float32 arithmetic (so that nearest picks
the same pixel at exact halves). The C kernels only gather and blend:

- nearest: one table per axis maps each output index to an input element offset;
  any axes may scale.
- linear, cubic: one table per resized axis gives 2 (linear) or 4 (cubic) source
  offsets and weights per output index. One kernel call resizes up to two axes
  (anywhere in the shape: NCHW, NHWC, 2-D ...); more axes chain calls through
  arena scratch.

Like onnxruntime, an output shape equal to the input shape is a plain copy, and an
axis whose scale is exactly 1 maps each index to itself.

GridSample (resize.c) and DeformConv (resize_deform_conv.c: GridSample's bilinear reads at each
kernel tap's offset position, then a convolution's dot products) sample at coordinates read at run time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aot.csource.format import c_float, c_int, c_ints
from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext, fixed_scratch

MAX_RANK = 8
F32 = np.float32
INT32_MAX = 2**31 - 1


# --- coordinates (onnxruntime's formulas, float32 like its kernels) ---------------

def source_coordinate(mode: str, j: int, scale: float, n_in: int, n_out: int) -> float:
    """Input coordinate of output index j along one axis (coordinate_transformation_mode `mode`)."""
    x, s, half = F32(j), F32(scale), F32(0.5)
    if mode == "asymmetric":
        return float(x / s)
    if mode == "half_pixel":
        return float((x + half) / s - half)
    if mode == "pytorch_half_pixel":  # onnxruntime: 0 for a 1-long output (the ONNX text says -0.5)
        return float((x + half) / s - half) if n_out > 1 else 0.0
    if mode == "tf_half_pixel_for_nn":
        return float((x + half) / s)
    if mode == "align_corners":
        return float(x * F32(n_in - 1) / F32(n_out - 1)) if n_out > 1 else 0.0
    if mode == "half_pixel_symmetric":
        adjustment = F32(n_out) / (s * F32(n_in))
        offset = F32(n_in) / F32(2) * (F32(1) - adjustment)
        return float(F32(float(offset) + (j + 0.5) / float(s) - 0.5))  # onnxruntime: this line in double
    raise ValueError(f"coordinate_transformation_mode '{mode}'")


# onnxruntime (1.31) rounds a coordinate within this distance of a half as an exact half, so that
# float32 noise in (j + 0.5) / scale does not decide the tie (its issue #28291); floor and ceil are exact.
HALF_TIE = 1e-6


def nearest_index(x: float, mode: str, downscale: bool) -> int:
    """Pixel picked by nearest_mode `mode` at coordinate x (before clamping to the input)."""
    below = math.floor(x)
    frac = x - below  # exact: x is a float32 value
    tie = abs(frac - 0.5) <= HALF_TIE
    if mode == "floor":
        return below
    if mode == "ceil":
        return math.ceil(x)
    if mode == "simple":  # Upsample and Resize-10 in onnxruntime: ceil when shrinking, else floor
        return math.ceil(x) if downscale else below
    if mode == "round_prefer_floor":
        return below + 1 if frac > 0.5 and not tie else below
    if mode == "round_prefer_ceil":
        return below + 1 if frac > 0.5 or tie else below
    raise ValueError(f"nearest_mode '{mode}'")


def nearest_taps(a: dict, scale: float, n_in: int, n_out: int) -> list[int]:
    """Input index of each output index along one axis."""
    if F32(scale) == 1:
        return list(range(n_out))
    ctm, mode = a["coordinate_transformation_mode"], a["nearest_mode"]
    return [min(max(nearest_index(source_coordinate(ctm, j, scale, n_in, n_out), mode, scale < 1), 0), n_in - 1)
            for j in range(n_out)]


def linear_taps(a: dict, scale: float, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each [n_out, 2]: the two neighbours, coordinate clamped into the input."""
    idx = np.zeros((n_out, 2), np.int64)
    w = np.zeros((n_out, 2), np.float32)
    for j in range(n_out):
        x = F32(j) if F32(scale) == 1 else F32(source_coordinate(a["coordinate_transformation_mode"], j, scale,
                                                                   n_in, n_out))
        x = min(max(x, F32(0)), F32(n_in - 1))
        x1 = min(int(x), n_in - 1)
        x2 = min(x1 + 1, n_in - 1)
        d1, d2 = abs(x - F32(x1)), abs(x - F32(x2))
        if x1 == x2:
            d1 = d2 = F32(0.5)
        idx[j], w[j] = (x1, x2), (d2, d1)
    return idx, w


def cubic_coefficients(t: np.float32, a: np.float32) -> list[np.float32]:
    """Keys cubic convolution weights of the samples at -1, 0, 1, 2 for fraction t (float32)."""
    one, two = F32(1), F32(2)

    def far(d: np.float32) -> np.float32:  # 1 < |d| < 2
        return ((a * d - F32(5) * a) * d + F32(8) * a) * d - F32(4) * a

    def near(d: np.float32) -> np.float32:  # |d| <= 1
        return ((a + two) * d - (a + F32(3))) * d * d + one

    return [far(t + one), near(t), near(one - t), far(two - t)]


def cubic_taps(a: dict, scale: float, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each [n_out, 4]; edge samples repeat, or drop out with exclude_outside."""
    coeff_a = F32(a["cubic_coeff_a"])
    idx = np.zeros((n_out, 4), np.int64)
    w = np.zeros((n_out, 4), np.float32)
    for j in range(n_out):
        x = F32(j) if F32(scale) == 1 else F32(source_coordinate(a["coordinate_transformation_mode"], j, scale,
                                                                   n_in, n_out))
        base = math.floor(x)
        coeffs = cubic_coefficients(x - F32(base), coeff_a)
        taps = [base - 1 + k for k in range(4)]
        if a["exclude_outside"]:
            coeffs = [c if 0 <= t < n_in else F32(0) for c, t in zip(coeffs, taps, strict=True)]
            total = F32(sum(coeffs, F32(0)))
            coeffs = [c / total for c in coeffs]
        idx[j] = [min(max(t, 0), n_in - 1) for t in taps]
        w[j] = coeffs
    return idx, w


def antialias_taps(a: dict, scale: float, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each [n_out, taps]: Resize antialias=1 on an axis that shrinks (scale < 1), the ONNX
    reference's filter (onnx/reference/ops/op_resize.py): the linear (triangle) or cubic kernel widened by
    1 / scale, over taps = 2 * ceil-ish(support / scale) samples around the coordinate, weights normalised to
    sum 1, samples beyond the edges repeating the edge one (or dropping out with exclude_outside). The
    coordinate is onnxruntime's float32 one; the weights are worked out in double, as the reference does."""
    s = float(F32(scale))
    support = 1.0 if a["mode"] == "linear" else 2.0
    first = math.floor(-support / s) + 1  # kernel offset of the first tap, relative to floor(x) + 1
    taps = 2 - 2 * first
    coeff_a = float(F32(a["cubic_coeff_a"]))
    idx = np.zeros((n_out, taps), np.int64)
    w = np.zeros((n_out, taps), np.float32)
    for j in range(n_out):
        x = float(F32(source_coordinate(a["coordinate_transformation_mode"], j, scale, n_in, n_out)))
        base = math.floor(x)
        ratio = x - base
        if ratio == 0:  # the reference takes the sample left of a whole coordinate as base: ratio 1
            base, ratio = base - 1, 1.0
        coeffs = [antialias_weight(a["mode"], s * (first + k - ratio), coeff_a) for k in range(taps)]
        total = sum(coeffs)
        coeffs = [c / total for c in coeffs]
        tap_idx = [base + first + k for k in range(taps)]
        if a["exclude_outside"]:
            coeffs = [c if 0 <= t < n_in else 0.0 for c, t in zip(coeffs, tap_idx, strict=True)]
            total = sum(coeffs)
            coeffs = [c / total for c in coeffs] if total else coeffs
        idx[j] = [min(max(t, 0), n_in - 1) for t in tap_idx]
        w[j] = coeffs
    return idx, w


def antialias_weight(mode: str, d: float, coeff_a: float) -> float:
    """The linear (triangle) or Keys cubic kernel at distance d, in double."""
    d = abs(d)
    if mode == "linear":
        return min(max(1.0 - d, 0.0), 1.0)
    d2 = d * d
    d3 = d * d2
    if d <= 1:
        return (coeff_a + 2) * d3 - (coeff_a + 3) * d2 + 1
    if d < 2:
        return coeff_a * d3 - 5 * coeff_a * d2 + 8 * coeff_a * d - 4 * coeff_a
    return 0.0


def axis_taps(a: dict, scale: float, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """Linear or cubic taps of one axis, antialiased when asked for and the axis shrinks."""
    if a.get("antialias", 0) and F32(scale) < 1:
        return antialias_taps(a, scale, n_in, n_out)
    return (linear_taps if a["mode"] == "linear" else cubic_taps)(a, scale, n_in, n_out)


# --- planning ---------------------------------------------------------------------

def resized_axes(node: Node) -> list[int]:
    """Axes that need interpolation (onnxruntime: those whose scale is not exactly 1)."""
    return [k for k, s in enumerate(node.attrs["scales"]) if F32(s) != 1]


def is_copy(node: Node, graph: Graph) -> bool:
    return graph.tensors[node.inputs[0]].shape == graph.tensors[node.outputs[0]].shape


@dataclass
class Pass:
    """One call of aotc_resize_f32: resizes `axes` (one or two) of a tensor of shape `src`."""
    axes: tuple[int, ...]
    src: tuple[int, ...]
    dst: tuple[int, ...]


def interpolation_passes(node: Node, graph: Graph) -> list[Pass]:
    """Resized axes in pairs from the innermost; each pair is one pass over the data."""
    shape = list(graph.tensors[node.inputs[0]].shape)
    out = graph.tensors[node.outputs[0]].shape
    axes = resized_axes(node)
    groups = [tuple(axes[max(0, k - 2):k]) for k in range(len(axes), 0, -2)]
    passes = []
    for g in groups:
        src = tuple(shape)
        for ax in g:
            shape[ax] = out[ax]
        passes.append(Pass(g, src, tuple(shape)))
    return passes


def scratch_floats(passes: list[Pass]) -> tuple[int, int]:
    """Sizes of the two ping-pong regions for the intermediate results (pass k writes region k % 2)."""
    regions = [0, 0]
    for k, p in enumerate(passes[:-1]):
        regions[k % 2] = max(regions[k % 2], int(np.prod(p.dst, dtype=np.int64)))
    return regions[0], regions[1]


def _check(node: Node, graph: Graph) -> str | None:
    x = graph.tensors[node.inputs[0]].shape
    y = graph.tensors[node.outputs[0]].shape
    a = node.attrs
    if len(x) == 0:
        return "a scalar input cannot be resized"
    if graph.tensors[node.inputs[0]].dtype != "float32" and a["mode"] != "nearest" and not is_copy(node, graph):
        return f"{a['mode']} Resize of {graph.tensors[node.inputs[0]].dtype} is not supported (nearest is)"
    if 0 in x or 0 in y:
        return f"a zero-size dimension ({list(x)} -> {list(y)}) is not supported"
    if len(a["scales"]) != len(x):
        return f"{len(a['scales'])} scales for a rank-{len(x)} input"
    if any(s <= 0 for s in a["scales"]):
        return f"scales must be positive (got {a['scales']})"
    if a["coordinate_transformation_mode"] not in ("half_pixel", "pytorch_half_pixel", "align_corners",
                                                   "asymmetric", "tf_half_pixel_for_nn", "half_pixel_symmetric"):
        return f"coordinate_transformation_mode '{a['coordinate_transformation_mode']}' is not supported"
    if a["mode"] == "nearest" and a["nearest_mode"] not in ("round_prefer_floor", "round_prefer_ceil", "floor",
                                                            "ceil", "simple"):
        return f"nearest_mode '{a['nearest_mode']}' is not supported"
    if a["mode"] == "nearest" and len(x) > MAX_RANK and not is_copy(node, graph):
        return f"rank {len(x)} is above {MAX_RANK}"
    if max(int(np.prod(x, dtype=np.int64)), int(np.prod(y, dtype=np.int64))) > INT32_MAX:
        return "tensors of 2^31 elements or more are not supported"
    return None


def _scratch(node: Node, graph: Graph) -> int:
    if node.attrs["mode"] == "nearest" or is_copy(node, graph):
        return 0
    return 4 * sum(scratch_floats(interpolation_passes(node, graph)))


# --- emission ---------------------------------------------------------------------

def _emit_nearest(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    xs, ys, scales = ctx.shape(x), ctx.shape(y), ctx.attrs["scales"]
    strides = [int(np.prod(xs[k + 1:], dtype=np.int64)) for k in range(len(xs))]
    # dims as (output length, input offsets, identity?); 1 -> 1 dims drop out, neighbouring identity dims merge
    dims: list[tuple[int, list[int], bool]] = []
    for k in range(len(xs)):
        if xs[k] == ys[k] == 1:
            continue
        src = nearest_taps(ctx.attrs, scales[k], xs[k], ys[k])
        ident = src == list(range(xs[k]))
        if ident and dims and dims[-1][2]:
            n = dims[-1][0] * ys[k]
            dims[-1] = (n, [i * strides[k] for i in range(n)], True)
        else:
            dims.append((ys[k], [i * strides[k] for i in src], ident))
    dims = dims or [(1, [0], True)]
    table = [v for d in dims for v in d[1]]
    starts = [sum(len(d[1]) for d in dims[:k]) for k in range(len(dims))]
    arr = ctx.const_array("offsets", np.array(table, np.int32),
                          comment=f"{ctx.node.op}: input element offset of each output index, dim by dim")
    p = ctx.params("aotc_resize_nearest_params", {
        "rank": str(len(dims)), "out_shape": c_ints([d[0] for d in dims]), "start": c_ints(starts),
        "offsets": arr,
    }, comment=f"Resize nearest ({ctx.attrs['coordinate_transformation_mode']}, {ctx.attrs['nearest_mode']}): "
               f"{list(xs)} -> {list(ys)}")
    ctx.call(f"aotc_resize_nearest_{ctx.suffix(x)}", p, ctx.ptr(x), ctx.ptr(y))


def _emit_pass(ctx: NodeContext, k: int, ps: Pass, src: str, dst: str) -> None:
    a = ctx.attrs
    taps_fn = axis_taps
    axes = ps.axes if len(ps.axes) == 2 else (None, ps.axes[0])
    h, w = axes
    in_w, inner = ps.src[w], int(np.prod(ps.src[w + 1:], dtype=np.int64))
    if h is None:
        outer, mid, in_h = int(np.prod(ps.src[:w], dtype=np.int64)), 1, 1
        idx_h, wt_h = np.zeros((1, 1), np.int64), np.ones((1, 1), np.float32)
    else:
        outer, mid, in_h = (int(np.prod(ps.src[:h], dtype=np.int64)), int(np.prod(ps.src[h + 1:w], dtype=np.int64)),
                            ps.src[h])
        idx_h, wt_h = taps_fn(a, a["scales"][h], ps.src[h], ps.dst[h])
    idx_w, wt_w = taps_fn(a, a["scales"][w], ps.src[w], ps.dst[w])
    mid_stride = in_w * inner
    tag = str(k) if k else ""  # names of the tables of the second and later passes
    names = {
        "offset_h": ctx.const_array(f"offset_h{tag}", (idx_h * mid * mid_stride).astype(np.int32)),
        "weight_h": ctx.const_array(f"weight_h{tag}", wt_h),
        "offset_w": ctx.const_array(f"offset_w{tag}", (idx_w * inner).astype(np.int32)),
        "weight_w": ctx.const_array(f"weight_w{tag}", wt_w),
    }
    p = ctx.params("aotc_resize_params", {
        "outer": str(outer), "out_h": str(idx_h.shape[0]), "mid": str(mid), "out_w": str(idx_w.shape[0]),
        "inner": str(inner), "taps_h": str(idx_h.shape[1]), "taps_w": str(idx_w.shape[1]),
        "x_outer_stride": str(in_h * mid * mid_stride), "x_mid_stride": str(mid_stride), **names,
    }, comment=f"Resize {a['mode']} ({a['coordinate_transformation_mode']}) along axes "
               f"{[ax for ax in axes if ax is not None]}: {list(ps.src)} -> {list(ps.dst)}")
    ctx.call("aotc_resize_f32", p, src, dst)


def _emit(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    if is_copy(ctx.node, ctx.graph):  # onnxruntime copies whenever no dim changes, whatever the scales
        ctx.line(f"memcpy({ctx.ptr(y)}, {ctx.ptr(x)}, {ctx.tensor(y).nbytes}u);")
        return
    if ctx.attrs["mode"] == "nearest":
        _emit_nearest(ctx)
        return
    passes = interpolation_passes(ctx.node, ctx.graph)
    if not passes:
        raise ctx.fail(f"scales {ctx.attrs['scales']} resize no axis, yet the shape changes")
    src = ctx.ptr(x)
    for k, ps in enumerate(passes):
        if k == len(passes) - 1:
            dst = ctx.ptr(y)
        else:  # intermediate results alternate between two regions of the scratch
            dst = ctx.scratch("float") + (f" + {scratch_floats(passes)[0]}" if k % 2 else "")
        _emit_pass(ctx, k, ps, src, dst)
        src = dst


# --- scales read at run time (ResizeValues, canonical/resize.py) ----------------------------------

RESIZE_MODES = {"nearest": "AOTC_RESIZE_NEAREST", "linear": "AOTC_RESIZE_LINEAR", "cubic": "AOTC_RESIZE_CUBIC"}
CTM = {"half_pixel": "AOTC_CTM_HALF_PIXEL", "pytorch_half_pixel": "AOTC_CTM_PYTORCH_HALF_PIXEL",
       "align_corners": "AOTC_CTM_ALIGN_CORNERS", "asymmetric": "AOTC_CTM_ASYMMETRIC",
       "tf_half_pixel_for_nn": "AOTC_CTM_TF_HALF_PIXEL_FOR_NN", "half_pixel_symmetric": "AOTC_CTM_HALF_PIXEL_SYMMETRIC",
       "tf_crop_and_resize": "AOTC_CTM_TF_CROP_AND_RESIZE"}
NEAREST = {"round_prefer_floor": "AOTC_NEAREST_ROUND_PREFER_FLOOR",
           "round_prefer_ceil": "AOTC_NEAREST_ROUND_PREFER_CEIL",
           "floor": "AOTC_NEAREST_FLOOR", "ceil": "AOTC_NEAREST_CEIL", "simple": "AOTC_NEAREST_SIMPLE"}


KEEP = {"stretch": "0", "not_larger": "AOTC_KEEP_NOT_LARGER", "not_smaller": "AOTC_KEEP_NOT_SMALLER"}


def _check_values(node: Node, graph: Graph) -> str | None:
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    a = node.attrs
    if not x.shape or len(x.shape) > MAX_RANK:
        return f"a rank-{len(x.shape)} input is not supported (1 to {MAX_RANK})"
    if node.op == "ResizeCrop" and (x.dtype != "float32" or graph.tensors[node.inputs[1]].dtype != "float32"):
        return "Resize tf_crop_and_resize takes float32 data and a float32 roi"
    given = "int64" if a.get("policy", "stretch") != "stretch" else "float32"
    if node.op == "ResizeCrop":
        given = "float32"
    if x.dtype != "float32" or graph.tensors[node.inputs[1]].dtype != given:
        return "Resize with scales or sizes computed at run time takes float32 data (and float32 scales)"
    if 0 in x.shape or 0 in y.shape:
        return f"a zero-size dimension ({list(x.shape)} -> {list(y.shape)}) is not supported"
    if a["coordinate_transformation_mode"] not in CTM:
        return f"coordinate_transformation_mode '{a['coordinate_transformation_mode']}' is not supported"
    if a["mode"] not in RESIZE_MODES or (a["mode"] == "nearest" and a["nearest_mode"] not in NEAREST):
        return f"mode '{a['mode']}' (nearest_mode '{a['nearest_mode']}') is not supported"
    if max(x.size, y.size, int(np.prod(np.maximum(x.shape, y.shape), dtype=np.int64))) > INT32_MAX:
        return "tensors of 2^31 elements or more are not supported"
    return None


def _scratch_values(node: Node, graph: Graph) -> int:
    """aotc_resize_scales_f32's scratch (aotc_resize.h): the tables, and two intermediate regions."""
    x, y = graph.tensors[node.inputs[0]].shape, graph.tensors[node.outputs[0]].shape
    if node.op == "ResizeCrop":  # no copy (the roi crops) and an int32 flag per output index of every axis
        return 4 * sum(y) + (4 * sum(y) if node.attrs["mode"] == "nearest" else _interp_scratch(node, x, y))
    if x == y:
        return 0
    if node.attrs["mode"] == "nearest":
        return 4 * sum(y)
    return _interp_scratch(node, x, y)


def _interp_scratch(node: Node, x: tuple[int, ...], y: tuple[int, ...]) -> int:
    """aotc_resize_scales_f32's scratch for linear and cubic: two regions and four tables."""
    cap = 4 * max(y)  # entries of each of the four tables
    if node.attrs.get("antialias", 0):  # the widened kernel's taps times out, at most
        cap = max(cap, *(4 * i + 2 * o + 8 for i, o in zip(x, y, strict=True)))
    return 4 * (2 * int(np.prod(np.maximum(x, y), dtype=np.int64)) + 4 * cap)


def _emit_values(ctx: NodeContext) -> None:
    """ResizeValues: the coordinates and weights worked out at run time from the scales; AOTC_ERR_SHAPE when
    the scales do not give the compiled output shape."""
    x, scales, y = ctx.inputs[0], ctx.inputs[1], ctx.outputs[0]
    a = ctx.attrs
    xs, ys = ctx.shape(x), ctx.shape(y)
    p = ctx.params("aotc_resize_scales_params", {
        "rank": str(len(xs)), "mode": RESIZE_MODES[a["mode"]], "ctm": CTM[a["coordinate_transformation_mode"]],
        "nearest_mode": NEAREST.get(a["nearest_mode"], "0"), "cubic_a": c_float(a["cubic_coeff_a"]),
        "exclude_outside": str(int(a["exclude_outside"])), "in_shape": c_ints(xs), "out_shape": c_ints(ys),
        "n_scales": str(len(a["axes"])), "axes": c_ints(a["axes"]), "policy": KEEP[a.get("policy", "stretch")],
        **({"antialias": "1"} if a.get("antialias", 0) else {}),
        **({"extrapolation": c_float(a["extrapolation_value"])} if ctx.node.op == "ResizeCrop" else {}),
    }, comment=f"Resize {a['mode']} ({a['coordinate_transformation_mode']}): {list(xs)} -> {list(ys)}, "
               f"the {_read_at_run_time(ctx.node)} of axes {a['axes']} read at run time")
    scratch = ctx.scratch("float") if ctx.choice.scratch else "NULL"
    if ctx.node.op == "ResizeCrop":
        fn = "aotc_resize_crop_f32"
    else:
        fn = "aotc_resize_scales_f32" if a.get("policy", "stretch") == "stretch" else "aotc_resize_sizes_f32"
    ctx.line(f"if ({fn}({p}, {ctx.ptr(scales)}, {ctx.ptr(x)}, {ctx.ptr(y)}, {scratch}) != 0)")
    ctx.line("    return AOTC_ERR_SHAPE;")


def _read_at_run_time(node: Node) -> str:
    if node.op == "ResizeCrop":
        return "roi"
    return "sizes" if node.attrs.get("policy", "stretch") != "stretch" else "scales"


GRID_MODES = {"nearest": "AOTC_GRID_NEAREST", "linear": "AOTC_GRID_LINEAR", "bilinear": "AOTC_GRID_LINEAR",
              "cubic": "AOTC_GRID_CUBIC", "bicubic": "AOTC_GRID_CUBIC"}  # opset 16 says bilinear, bicubic
GRID_PADDING = {"zeros": "AOTC_GRID_ZEROS", "border": "AOTC_GRID_BORDER", "reflection": "AOTC_GRID_REFLECTION"}


def _check_grid_sample(node: Node, graph: Graph) -> str | None:
    x, grid = graph.tensors[node.inputs[0]].shape, graph.tensors[node.inputs[1]].shape
    nd = len(x) - 2
    if not 1 <= nd <= 3:
        return f"GridSample over {nd} spatial axes is not supported (1 to 3)"
    if len(grid) != nd + 2 or grid[0] != x[0] or grid[-1] != nd:
        return f"grid {list(grid)} does not fit input {list(x)}"
    if node.attrs.get("mode", "linear") not in GRID_MODES:
        return f"GridSample mode '{node.attrs.get('mode')}' is not supported"
    if node.attrs.get("padding_mode", "zeros") not in GRID_PADDING:
        return f"GridSample padding_mode '{node.attrs.get('padding_mode')}' is not supported"
    if graph.tensors[node.inputs[1]].dtype != "float32":
        return "the grid must be float32"
    return None


def _emit_grid_sample(ctx: NodeContext) -> None:
    x, grid, y = ctx.inputs[0], ctx.inputs[1], ctx.outputs[0]
    xs, gs = ctx.shape(x), ctx.shape(grid)
    nd = len(xs) - 2
    p = ctx.params("aotc_grid_sample_params", {
        "n": str(xs[0]), "c": str(xs[1]), "nd": str(nd), "in": c_ints(list(xs[2:]) + [1] * (3 - nd)),
        "out_count": str(int(np.prod(gs[1:-1], dtype=np.int64))),
        "mode": GRID_MODES[ctx.attrs.get("mode", "linear")],
        "padding": GRID_PADDING[ctx.attrs.get("padding_mode", "zeros")],
        "align_corners": str(int(ctx.attrs.get("align_corners", 0))),
    }, comment=f"GridSample of {list(xs)} at grid {list(gs)} -> {list(ctx.shape(y))}")
    ctx.call("aotc_grid_sample_f32", p, ctx.ptr(x), ctx.ptr(grid), ctx.ptr(y))


# --- DeformConv: GridSample's bilinear reads at each tap's offset position, then the dot products --------------

def _deform_attrs(node: Node, graph: Graph) -> tuple[list[int], list[int], list[int], list[int]]:
    """kernel_shape, strides, pads (top, left, bottom, right) and dilations, their defaults filled in."""
    a = node.attrs
    k = [int(v) for v in a.get("kernel_shape", graph.tensors[node.inputs[1]].shape[2:])]
    return (k, [int(v) for v in a.get("strides", [1, 1])], [int(v) for v in a.get("pads", [0, 0, 0, 0])],
            [int(v) for v in a.get("dilations", [1, 1])])


def _check_deform_conv(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    ins = list(node.inputs)
    x, w, off = (t[i] for i in ins[:3])
    if len(x.shape) != 4:
        return f"DeformConv over {len(x.shape) - 2} spatial axes is not supported (2)"
    if any(t[i].dtype != "float32" for i in ins if i):
        return "every input must be float32"
    k, s, p, d = _deform_attrs(node, graph)
    group, og = int(node.attrs.get("group", 1)), int(node.attrs.get("offset_group", 1))
    n, c, h, wd = x.shape
    oc = w.shape[0]
    if len(k) != 2 or len(s) != 2 or len(p) != 4 or len(d) != 2 or tuple(k) != tuple(w.shape[2:]) or \
            c != w.shape[1] * group or oc % group or c % og:
        return f"weights {list(w.shape)}, group {group}, offset_group {og} do not fit input {list(x.shape)}"
    oh = (h + p[0] + p[2] - (k[0] - 1) * d[0] - 1) // s[0] + 1
    ow = (wd + p[1] + p[3] - (k[1] - 1) * d[1] - 1) // s[1] + 1
    y = t[node.outputs[0]].shape
    if y != (n, oc, oh, ow) or off.shape != (n, og * 2 * k[0] * k[1], oh, ow):
        return f"offset {list(off.shape)} or output {list(y)} does not fit the output [{n}, {oc}, {oh}, {ow}]"
    if len(ins) > 3 and ins[3] and t[ins[3]].shape != (oc,):
        return f"bias {list(t[ins[3]].shape)} is not [{oc}]"
    if len(ins) > 4 and ins[4] and t[ins[4]].shape != (n, og * k[0] * k[1], oh, ow):
        return f"mask {list(t[ins[4]].shape)} is not [{n}, {og * k[0] * k[1]}, {oh}, {ow}]"
    return None


def _emit_deform_conv(ctx: NodeContext) -> None:
    ins = list(ctx.inputs) + ["", ""]
    x, w, off, b, m = ins[:5]
    y = ctx.outputs[0]
    k, s, pads, d = _deform_attrs(ctx.node, ctx.graph)
    n, c, h, wd = ctx.shape(x)
    _, oc, oh, ow = ctx.shape(y)
    p = ctx.params("aotc_deform_conv_params", {
        "n": c_int(n), "in_c": c_int(c), "in_h": c_int(h), "in_w": c_int(wd), "out_c": c_int(oc), "out_h": c_int(oh),
        "out_w": c_int(ow), "k_h": c_int(k[0]), "k_w": c_int(k[1]), "stride_h": c_int(s[0]), "stride_w": c_int(s[1]),
        "pad_top": c_int(pads[0]), "pad_left": c_int(pads[1]), "dil_h": c_int(d[0]), "dil_w": c_int(d[1]),
        "group": c_int(int(ctx.attrs.get("group", 1))), "offset_group": c_int(int(ctx.attrs.get("offset_group", 1))),
    }, comment=f"DeformConv of {[n, c, h, wd]} by {k[0]} x {k[1]} to {[n, oc, oh, ow]}")
    ctx.call("aotc_deform_conv_f32", p, ctx.ptr(x), ctx.ptr(w), ctx.ptr(off), ctx.ptr(b) if b else "NULL",
             ctx.ptr(m) if m else "NULL", ctx.scratch("float"), ctx.ptr(y))


def _deform_scratch(node: Node, graph: Graph) -> int:
    """aotc_deform_conv_f32's column: a float per input channel and kernel tap."""
    k = _deform_attrs(node, graph)[0]
    return 4 * graph.tensors[node.inputs[0]].shape[1] * k[0] * k[1]


OPS: dict[str, HostOp] = {
    "DeformConv": HostOp(_emit_deform_conv, family="resize", check=_check_deform_conv,
                         kernels=(fixed_scratch("", _deform_scratch),)),
    "GridSample": HostOp(_emit_grid_sample, family="resize", check=_check_grid_sample),
    "Resize": HostOp(_emit, family="resize", check=_check, kernels=(fixed_scratch("", _scratch),),
                     dtypes=("float32", "int8", "uint8")),
    "ResizeValues": HostOp(_emit_values, family="resize", check=_check_values,
                           kernels=(fixed_scratch("", _scratch_values),), dtypes=("float32",)),
    "ResizeCrop": HostOp(_emit_values, family="resize", check=_check_values,
                         kernels=(fixed_scratch("", _scratch_values),), dtypes=("float32",)),
}
