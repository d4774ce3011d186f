"""Resize and Upsample (aot/kernels/resize.py): every version as Resize with explicit per-axis scales."""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import const_input, data_only, positive_axis, shape_of
from aot.ir import Graph, Node


def _round_half_away(v: np.float32) -> int:
    return int(np.floor(abs(float(v)) + 0.5)) * (1 if v >= 0 else -1)


def _resize_sizes(node: Node, graph: Graph, scales: np.ndarray | None, y: tuple[int, ...]) -> np.ndarray | None:
    """Resize's sizes: the constant, or, computed at run time with the default "stretch" policy and no
    scales, the output shape's sizes on the resized axes (issue 16): they are the output shape, so the run-time
    value is not read. An output shape the model does not declare was inferred on zero sizes (load.py): empty,
    and the Resize kernels refuse it."""
    inputs = node.inputs
    runtime = len(inputs) > 3 and inputs[3] and graph.const(inputs[3]) is None
    if not runtime:
        return const_input(graph, node, 3, "Resize sizes")
    if (scales is not None and scales.size) or node.attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise AotcError("Resize sizes (input 3) must be a constant (computed at run time, they are taken from "
                        "the output shape only with keep_aspect_ratio_policy 'stretch')", node=node)
    rank = len(y)
    return np.array([y[positive_axis(int(ax), rank, node)] for ax in node.attrs.get("axes", range(rank))], np.int64)


def _runtime_scales(node: Node, graph: Graph, opset: int) -> str:
    """The scales input when it is computed at run time (and not empty), else ""."""
    if node.op == "Upsample" and opset < 9:
        return ""
    at = 1 if node.op == "Upsample" or opset < 11 else 2
    name = node.inputs[at] if len(node.inputs) > at else ""
    if not name or graph.const(name) is not None or graph.tensors[name].size == 0:
        return ""
    return name


def _runtime_sizes_kept_aspect(node: Node, graph: Graph, opset: int) -> str:
    """The sizes input when computed at run time under keep_aspect_ratio_policy not_larger / not_smaller (the
    output shape does not give them: the kernel reads them), with no scales; else ""."""
    if node.op == "Upsample" or opset < 18 or node.attrs.get("keep_aspect_ratio_policy", "stretch") == "stretch":
        return ""
    name = node.inputs[3] if len(node.inputs) > 3 else ""
    scales = node.inputs[2] if len(node.inputs) > 2 else ""
    if not name or graph.const(name) is not None or (scales and graph.tensors[scales].size):
        return ""
    return name


def _antialias(node: Node, mode: str) -> int:
    """antialias=1: linear and cubic widen their kernel on axes that shrink (aot/kernels/resize.py
    antialias_taps); onnxruntime and the ONNX reference both refuse it with mode nearest."""
    if mode not in ("linear", "cubic"):
        raise AotcError(f"Resize antialias=1 with mode {mode} is not supported (onnxruntime and the ONNX "
                        "reference refuse it: linear and cubic only)", node=node)
    return 1


def _crop(node: Node, graph: Graph, mode: str, nearest: str, cubic_a: float, exclude: int, extrap: float) -> None:
    """tf_crop_and_resize, the output shape known -> ResizeCrop (aot/kernels/resize.py) over x and the roi,
    which the kernel reads (a constant or computed at run time alike)."""
    a = node.attrs
    rank = len(shape_of(graph, node.inputs[0]))
    axes = [positive_axis(int(ax), rank, node) for ax in a.get("axes", range(rank))]
    roi = node.inputs[1] if len(node.inputs) > 1 else ""
    if not roi or graph.tensors[roi].size == 0:
        raise AotcError("Resize tf_crop_and_resize needs a roi (input 1)", node=node)
    if graph.tensors[roi].size != 2 * len(axes):
        raise AotcError(f"Resize roi has {graph.tensors[roi].size} values for {len(axes)} axes "
                        f"({2 * len(axes)} expected: starts, then ends)", node=node)
    if a.get("antialias", 0):
        raise AotcError("Resize antialias=1 with tf_crop_and_resize is not supported", node=node)
    node.op = "ResizeCrop"
    node.attrs = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize", "nearest_mode": nearest,
                  "cubic_coeff_a": cubic_a, "exclude_outside": exclude, "axes": axes, "policy": "stretch",
                  "extrapolation_value": extrap}
    node.inputs = [node.inputs[0], roi]


def _resize_values(node: Node, graph: Graph, opset: int, scales: str, sizes: str = "") -> None:
    """Resize/Upsample whose scales are computed at run time -> ResizeValues (aot/kernels/resize.py): the
    declared output shape is compiled in, the kernel reads the scales and works out coordinates and weights
    per run (AOTC_ERR_SHAPE when the scales do not give the compiled shape)."""
    from aot.frontend.onnx.canonical.shape import pinned_shape

    pinned_shape(node, graph, "Resize sizes" if sizes else "Resize scales")
    a = node.attrs
    rank = len(shape_of(graph, node.inputs[0]))
    if node.op == "Upsample" or opset < 11:
        ctm, nearest, cubic_a, exclude = "asymmetric", "simple", -0.75, 0
        axes = list(range(rank))
    else:
        if not sizes and len(node.inputs) > 3 and node.inputs[3]:
            raise AotcError("Resize has both scales and sizes", node=node)
        ctm = a.get("coordinate_transformation_mode", "half_pixel")
        if ctm == "tf_crop_and_resize":
            raise AotcError("Resize coordinate_transformation_mode tf_crop_and_resize is not supported", node=node)
        if ctm == "align_corners" and shape_of(graph, node.inputs[0]) != shape_of(graph, node.outputs[0]):
            # ONNX divides by in * scale - 1, onnxruntime by out - 1: they differ unless in * scale is whole
            raise AotcError("Resize align_corners with scales computed at run time is not supported: ONNX "
                            "(in x scale - 1) and onnxruntime (out - 1) place the samples differently unless "
                            "in x scale is a whole number, which is known only at run time; give sizes or "
                            "constant scales", node=node)
        nearest = a.get("nearest_mode", "round_prefer_floor")
        cubic_a, exclude = a.get("cubic_coeff_a", -0.75), a.get("exclude_outside", 0)
        axes = [positive_axis(int(ax), rank, node) for ax in a.get("axes", range(rank))]
    if len(set(axes)) != len(axes):
        raise AotcError(f"Resize axes {axes} repeat an axis", node=node)
    given = sizes or scales
    if graph.tensors[given].size != len(axes):
        what = "sizes" if sizes else "scales"
        raise AotcError(f"Resize has {graph.tensors[given].size} {what} for {len(axes)} axes", node=node)
    if sizes and graph.tensors[sizes].dtype != "int64":
        raise AotcError(f"Resize sizes of dtype {graph.tensors[sizes].dtype} (int64 expected)", node=node)
    policy = a.get("keep_aspect_ratio_policy", "stretch") if sizes else "stretch"
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise AotcError(f"Resize keep_aspect_ratio_policy '{policy}' is not valid", node=node)
    node.op = "ResizeValues"
    node.attrs = {"mode": a.get("mode", "nearest"), "coordinate_transformation_mode": ctm, "nearest_mode": nearest,
                  "cubic_coeff_a": float(cubic_a), "exclude_outside": int(exclude), "axes": axes, "policy": policy}
    if a.get("antialias", 0):
        node.attrs["antialias"] = _antialias(node, node.attrs["mode"])
    node.inputs = [node.inputs[0], given]


def resize(node: Node, graph: Graph, opset: int) -> None:
    """Upsample and every Resize version -> Resize with explicit per-axis float32 scales.

    attrs: mode (nearest, linear, cubic), coordinate_transformation_mode, nearest_mode,
    scales (one per axis: the given scales, or else float32(out) / float32(in) as
    onnxruntime computes them, with keep_aspect_ratio_policy applied), cubic_coeff_a,
    exclude_outside, extrapolation_value. Upsample and Resize-10 have no nearest_mode:
    onnxruntime rounds down when enlarging an axis and up when shrinking it, which is
    nearest_mode "simple" here (not an ONNX value). The output shape must be the one
    onnxruntime computes (float32 scale times input size, truncated); ONNX shape
    inference rounds in double and can differ by one, which is refused."""
    scales_in = _runtime_scales(node, graph, opset)
    sizes_in = "" if scales_in else _runtime_sizes_kept_aspect(node, graph, opset)
    if scales_in or sizes_in:
        _resize_values(node, graph, opset, scales_in, sizes_in)
        return
    x = shape_of(graph, node.inputs[0])
    y = shape_of(graph, node.outputs[0])
    rank = len(x)
    a = node.attrs
    expected: list[int] | None = None  # onnxruntime's output shape when sizes define it
    if node.op == "Upsample" or opset < 11:
        scales = a.get("scales") if opset < 9 else const_input(graph, node, 1, "scales")
        mode = a.get("mode", "nearest")
        ctm, nearest = "asymmetric", "simple"
        cubic_a, exclude, extrap = -0.75, 0, 0.0
    else:
        scales_v = const_input(graph, node, 2, "Resize scales")
        sizes_v = _resize_sizes(node, graph, scales_v, y)
        scales = scales_v if scales_v is not None and scales_v.size else None
        if scales is None and (sizes_v is None or not sizes_v.size):
            raise AotcError("Resize needs scales or sizes", node=node)
        mode = a.get("mode", "nearest")
        ctm = a.get("coordinate_transformation_mode", "half_pixel")
        nearest = a.get("nearest_mode", "round_prefer_floor")
        cubic_a, exclude = a.get("cubic_coeff_a", -0.75), a.get("exclude_outside", 0)
        extrap = a.get("extrapolation_value", 0.0)
        axes = [positive_axis(int(ax), rank, node) for ax in a.get("axes", range(rank))]
        given = scales if scales is not None else sizes_v
        if len(given) != len(axes):
            what = "scales" if scales is not None else "sizes"
            raise AotcError(f"Resize has {len(given)} {what} for {len(axes)} axes", node=node)
        full = [np.float32(1.0)] * rank
        if scales is not None:
            for k, ax in enumerate(axes):
                full[ax] = np.float32(scales[k])
        else:
            expected = list(x)
            for k, ax in enumerate(axes):
                expected[ax] = int(sizes_v[k])
                full[ax] = np.float32(expected[ax]) / np.float32(x[ax])
            policy = a.get("keep_aspect_ratio_policy", "stretch")
            if policy not in ("stretch", "not_larger", "not_smaller"):
                raise AotcError(f"Resize keep_aspect_ratio_policy '{policy}' is not valid", node=node)
            if policy != "stretch":  # one scale for all the listed axes
                common = (min if policy == "not_larger" else max)(full[ax] for ax in axes)
                full = [common if k in axes else np.float32(1.0) for k in range(rank)]
                expected = [_round_half_away(common * np.float32(n)) if k in axes else n for k, n in enumerate(x)]
        scales = full
    if scales is None:
        raise AotcError("Upsample needs scales", node=node)
    if len(scales) != rank:
        raise AotcError(f"Resize has {len(scales)} scales for a rank-{rank} input", node=node)
    if expected is None:
        expected = [int(np.float32(s) * np.float32(n)) for s, n in zip(scales, x, strict=True)]
    if tuple(expected) != tuple(y):
        raise AotcError(f"Resize output shape {list(y)} (ONNX shape inference) differs from onnxruntime's "
                        f"{expected} (float32 scale times input size); give sizes instead of scales", node=node)
    if mode not in ("nearest", "linear", "cubic"):
        raise AotcError(f"Resize mode '{mode}' is not supported", node=node)
    if ctm == "tf_crop_and_resize":
        _crop(node, graph, mode, nearest, float(cubic_a), int(exclude), float(extrap))
        return
    node.op = "Resize"
    node.attrs = {"mode": mode, "coordinate_transformation_mode": ctm, "nearest_mode": nearest,
                  "scales": [float(s) for s in scales], "cubic_coeff_a": float(cubic_a),
                  "exclude_outside": int(exclude), "extrapolation_value": float(extrap)}
    if a.get("antialias", 0):
        node.attrs["antialias"] = _antialias(node, mode)
    data_only(node)
