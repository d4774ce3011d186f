"""Detection ops (issue 18): TopK, NonMaxSuppression and NonZero (runtime_c/kernels/detect/detect.c),
TFLite's TFLite_Detection_PostProcess (issue 50, detect_postprocess.c), its NON_MAX_SUPPRESSION_V4 / _V5
(detect_tfl_nms.c) and RoiAlign (issue 51, detect_roialign.c).

NonMaxSuppression and NonZero write a number of rows that depends on the data. The frontend plans
their output at a bound (aot/frontend/onnx/bounded.py); the kernel returns the rows it wrote, which the
emitter keeps in a C local (the tensor's extent) for the ops that read the tensor, and for the
outputs struct when it is a graph output.
"""

from __future__ import annotations

import numpy as np

from aot.csource.format import C_TYPES, DTYPE_SUFFIX, c_float, c_int, c_ints
from aot.ir import Graph, Node
from aot.ir.extents import sym_c
from aot.kernels.base import Candidate, HostOp, KernelChoice, NodeContext, fixed_scratch
from aot.kernels.c_defines import define
from aot.kernels.shape import MAX_RANK, check_sizes

TOPK_DTYPES = ("float32", "int64", "int32", "uint64")
ALL_DTYPES = tuple(C_TYPES)


def _nelem(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


# --- TopK ------------------------------------------------------------------------------------

def topk_k(node: Node, graph: Graph) -> int | None:
    """k, from the attribute (opset < 10) or the constant input; None when computed at run time."""
    if "k" in node.attrs:
        return int(node.attrs["k"])
    k = graph.const(node.inputs[1]) if len(node.inputs) > 1 else None
    return None if k is None else int(np.asarray(k).reshape(-1)[0])


def _topk_axis(node: Node, graph: Graph) -> int:
    rank = len(graph.tensors[node.inputs[0]].shape)
    axis = int(node.attrs.get("axis", -1))
    return axis + rank if axis < 0 else axis


def _emit_topk(ctx: NodeContext) -> None:
    x = ctx.inputs[0]
    values, indices = ctx.outputs[:2]
    shape, axis = ctx.shape(x), _topk_axis(ctx.node, ctx.graph)
    k = topk_k(ctx.node, ctx.graph)
    largest = int(ctx.attrs.get("largest", 1))
    em = ctx.emitter
    bounded = getattr(em, "bounded_axis", {})
    p = ctx.params("aotc_topk_params", {
        "outer": c_int(_nelem(shape[:axis])), "n": c_int(shape[axis]), "inner": c_int(_nelem(shape[axis + 1:])),
        "k": c_int(k), "largest": str(largest),
    }, comment=f"TopK {'largest' if largest else 'smallest'} {k} of {list(shape)} along axis {axis}")
    if values not in bounded:
        ctx.call(f"aotc_topk_{ctx.suffix(x)}", p, ctx.ptr(x), ctx.ptr(values), ctx.ptr(indices))
        return
    # rows known at run time: the first n of x's (its extent), the best min(k, n) kept (a new extent)
    n = em.extent_var(x) if x in bounded else c_int(shape[axis])
    k_rows = sym_c(ctx.attrs.get("k_rows", k), em.extent_var)
    ind = ctx.ptr(indices) if indices else ctx.scratch("int64_t")
    ctx.line(f"const int64_t {em.extent_var(values)} = aotc_topk_rows_{ctx.suffix(x)}({p}, {n}, {k_rows}, "
             f"{ctx.ptr(x)}, {ctx.ptr(values)}, {ind});")


def _check_topk(node: Node, graph: Graph) -> str | None:
    shape = graph.tensors[node.inputs[0]].shape
    if not shape:
        return "a scalar input has no axis"
    if not 0 <= _topk_axis(node, graph) < len(shape):
        return f"axis {node.attrs.get('axis', -1)} is out of range for rank {len(shape)}"
    k = topk_k(node, graph)
    if k is None:
        return "k is computed at run time: aotc needs it constant"
    if not 0 < k <= shape[_topk_axis(node, graph)]:
        return f"k = {k} is not in 1..{shape[_topk_axis(node, graph)]}"
    return check_sizes(node, graph)


# --- NonMaxSuppression ------------------------------------------------------------------------

def _scalar(ctx: NodeContext, index: int, kind: str, default: str) -> str:
    """C expression of an optional scalar input: its value when constant, a read when not."""
    if index >= len(ctx.inputs) or not ctx.inputs[index]:
        return default
    value = ctx.const(ctx.inputs[index])
    if value is None:
        return f"{ctx.ptr(ctx.inputs[index])}[0]"
    v = np.asarray(value).reshape(-1)[0]
    return c_int(int(v)) if kind == "int" else c_float(float(v))


def _emit_nms(ctx: NodeContext) -> None:
    boxes, scores = ctx.inputs[:2]
    y = ctx.outputs[0]
    batches, classes, n = ctx.shape(scores)
    bound = ctx.shape(y)[0]
    center = int(ctx.attrs.get("center_point_box", 0))
    p = ctx.params("aotc_nms_params", {
        "batches": c_int(batches), "classes": c_int(classes), "boxes": c_int(n), "center_point_box": str(center),
        "max_rows": c_int(bound),
    }, comment=f"NonMaxSuppression of {n} boxes, {classes} classes, {batches} batches: at most {bound} rows")
    has_score = len(ctx.inputs) > 4 and bool(ctx.inputs[4])
    # boxes whose rows are known at run time (torchvision's batched_nms): only that many are candidates
    n_boxes = ctx.emitter.extent_var(scores) if scores in getattr(ctx.emitter, "bounded_axis", {}) else c_int(n)
    ctx.line(f"const int64_t {ctx.emitter.extent_var(y)} = aotc_nms_f32({p}, {n_boxes}, {ctx.ptr(boxes)}, "
             f"{ctx.ptr(scores)}, "
             f"{_scalar(ctx, 2, 'int', '0')}, {_scalar(ctx, 3, 'float', '0.0f')}, {int(has_score)}, "
             f"{_scalar(ctx, 4, 'float', '0.0f')}, {ctx.scratch('int32_t')}, {ctx.ptr(y)});")


def _nms_scratch(node: Node, graph: Graph) -> int:
    """The candidates' heap (int32 a box) and the kept boxes' extents and areas (5 floats a box)."""
    n = graph.tensors[node.inputs[0]].shape[1]
    return 4 * (n + (n & 1)) + 20 * n


def _check_nms(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    boxes, scores = t[node.inputs[0]], t[node.inputs[1]]
    if boxes.dtype != "float32" or scores.dtype != "float32":
        return "boxes and scores must be float32"
    if len(boxes.shape) != 3 or boxes.shape[2] != 4 or len(scores.shape) != 3 or \
            scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
        return f"boxes {list(boxes.shape)} and scores {list(scores.shape)} are not [B, N, 4] and [B, C, N]"
    if int(node.attrs.get("center_point_box", 0)) not in (0, 1):
        return f"center_point_box {node.attrs['center_point_box']} is not 0 or 1"
    for k, dtype in ((2, "int64"), (3, "float32"), (4, "float32")):
        if len(node.inputs) > k and node.inputs[k] and t[node.inputs[k]].dtype != dtype:
            return f"input {k} must be a {dtype} scalar"
    return check_sizes(node, graph)


# --- TFLite_Detection_PostProcess (aotc.tflite's TflDetectionPostProcess) ---------------------------------

def _detection_scratch(node: Node, graph: Graph) -> int:
    """aotc_detect.h's: 4-byte cells, 6 a box (its decoded corners, a score, a heap slot), the kept boxes
    (at most the limit of the path, or the boxes), and for the regular path two lists of the best so far."""
    a = node.attrs
    boxes = graph.tensors[node.inputs[0]].shape[1]
    regular = bool(a["use_regular_nms"])
    limit = int(a["detections_per_class"] if regular else a["max_detections"])
    return 4 * (6 * boxes + min(limit, boxes) + (4 * int(a["max_detections"]) if regular else 0))


def _detection_fit(node: Node, graph: Graph, budget: int) -> KernelChoice:
    """The function for the inputs' type, with its fixed scratch (the budget cannot shrink it)."""
    suffix = DTYPE_SUFFIX[graph.tensors[node.inputs[0]].dtype]
    return KernelChoice(f"aotc_detection_postprocess_{suffix}", _detection_scratch(node, graph))


def _emit_detection(ctx: NodeContext) -> None:
    enc, cls, anchors = ctx.inputs
    a = ctx.attrs
    _, boxes, stride = ctx.shape(enc)
    columns = ctx.shape(cls)[2]
    regular = int(a["use_regular_nms"])
    p = ctx.params("aotc_detection_params", {
        "boxes": c_int(boxes), "box_stride": c_int(stride), "classes": c_int(a["num_classes"]),
        "label_offset": c_int(columns - int(a["num_classes"])), "max_detections": c_int(a["max_detections"]),
        "max_classes_per_detection": c_int(a["max_classes_per_detection"]),
        "detections_per_class": c_int(a["detections_per_class"]), "regular_nms": str(regular),
        "score_threshold": c_float(a["nms_score_threshold"]), "iou_threshold": c_float(a["nms_iou_threshold"]),
        "y_scale": c_float(a["y_scale"]), "x_scale": c_float(a["x_scale"]), "h_scale": c_float(a["h_scale"]),
        "w_scale": c_float(a["w_scale"]), "box_scale": c_float(a.get("box_scale", 1.0)),
        "score_scale": c_float(a.get("score_scale", 1.0)), "box_zero": c_int(a.get("box_zero", 0)),
        "score_zero": c_int(a.get("score_zero", 0)),
    }, comment=f"TFLite_Detection_PostProcess of {boxes} boxes, {a['num_classes']} classes: "
               f"{'regular' if regular else 'fast'} NMS, at most {a['max_detections']} detections")
    ctx.call(ctx.choice.kernel, p, ctx.ptr(enc), ctx.ptr(cls), ctx.ptr(anchors),
             *(ctx.ptr(y) for y in ctx.outputs), ctx.scratch("float"))


def _check_detection(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    enc, cls, anchors = (t[i] for i in node.inputs)
    if enc.dtype != cls.dtype:
        return f"box encodings of {enc.dtype} and class predictions of {cls.dtype}: one type expected"
    if anchors.dtype != "float32" or graph.const(node.inputs[2]) is None:
        return "the anchors must be a float32 constant"
    if any(t[y].dtype != "float32" for y in node.outputs):
        return "the outputs must be float32"
    return check_sizes(node, graph)


# --- NON_MAX_SUPPRESSION_V4 / _V5 (aotc.tflite's TflNonMaxSuppression) ------------------------------------------

TFL_NMS_SCRATCH_PER_BOX = define("aotc_detect.h", "AOTC_TFL_NMS_SCRATCH_PER_BOX")


def _tfl_nms_scratch(node: Node, graph: Graph) -> int:
    """aotc_detect.h's: AOTC_TFL_NMS_SCRATCH_PER_BOX bytes a box."""
    return TFL_NMS_SCRATCH_PER_BOX * graph.tensors[node.inputs[0]].shape[0]


def _emit_tfl_nms(ctx: NodeContext) -> None:
    boxes, scores = ctx.inputs
    indices, selected, count = ctx.outputs
    a = ctx.attrs
    n = ctx.shape(boxes)[0]
    p = ctx.params("aotc_tfl_nms_params", {
        "boxes": c_int(n), "max_output": c_int(a["max_output"]), "iou_threshold": c_float(a["iou_threshold"]),
        "score_threshold": c_float(a["score_threshold"]), "sigma": c_float(a["sigma"]),
    }, comment=f"NON_MAX_SUPPRESSION of {n} boxes: at most {a['max_output']}"
               f"{', soft (sigma ' + repr(float(a['sigma'])) + ')' if float(a['sigma']) > 0 else ''}")
    ctx.call("aotc_tfl_nms_f32", p, ctx.ptr(boxes), ctx.ptr(scores), ctx.ptr(indices),
             ctx.ptr(selected) if selected else "NULL", ctx.ptr(count), ctx.scratch("float"))


def _check_tfl_nms(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    boxes, scores = t[node.inputs[0]], t[node.inputs[1]]
    if boxes.dtype != "float32" or scores.dtype != "float32":
        return "boxes and scores must be float32"
    if len(boxes.shape) != 2 or boxes.shape[1] != 4 or scores.shape != boxes.shape[:1]:
        return f"boxes {list(boxes.shape)} and scores {list(scores.shape)} are not [N, 4] and [N]"
    return check_sizes(node, graph)


# --- run-time integers and fills made from extents (aot/frontend/onnx/bounded.py) --------------------

def _emit_rows_value(ctx: NodeContext) -> None:
    """The values of a Shape of bounded rows (and the arithmetic on it) written where a node that is
    not shape arithmetic reads them (an If's condition)."""
    y = ctx.outputs[0]
    for k, v in enumerate(ctx.attrs["values"]):
        ctx.line(f"{ctx.ptr(y)}[{k}] = {sym_c(v, ctx.emitter.extent_var)};")


def _emit_fill_rows(ctx: NodeContext) -> None:
    """ConstantOfShape(Shape(rows)): the value in each row of the extent (torchvision's labels)."""
    y = ctx.outputs[0]
    value = np.asarray(ctx.attrs["value"]).reshape(-1)[0]
    v = c_float(float(value)) if ctx.dtype(y) == "float32" else f"({C_TYPES[ctx.dtype(y)]}){int(value)}"
    rows = ctx.emitter.extent_var(y)
    ctx.line(f"for (int64_t aotc_row = 0; aotc_row < {rows}; ++aotc_row) {ctx.ptr(y)}[aotc_row] = {v};")


def _check_fill_rows(node: Node, graph: Graph) -> str | None:
    dtype = graph.tensors[node.outputs[0]].dtype
    return None if dtype in ("float32", "int64", "int32", "bool", "uint8", "int8") else f"a fill of {dtype}"


# --- a declared row count (aot/frontend/onnx/bounded.py's pin_declared_rows) --------------------------

def _emit_exact_rows(ctx: NodeContext) -> None:
    """The declared rows of a bounded tensor: the run returns AOTC_ERR_SHAPE when the data gave another
    count (before this node writes anything), else those rows are copied."""
    x, y = ctx.inputs[0], ctx.outputs[0]
    em = ctx.emitter
    axis = em.bounded_axis[x]
    shape, rows = ctx.shape(x), ctx.shape(y)[axis]
    outer, inner = _nelem(shape[:axis]), _nelem(shape[axis + 1:])
    ctx.line(f"if ({em.extent_var(x)} != {rows}) return AOTC_ERR_SHAPE; /* the model declares {rows} rows */")
    nbytes = f"{rows * inner}u * sizeof *{ctx.ptr(y)}"
    if outer == 1:
        ctx.line(f"memcpy({ctx.ptr(y)}, {ctx.ptr(x)}, {nbytes});")
        return
    ctx.line(f"for (int64_t aotc_o = 0; aotc_o < {outer}; ++aotc_o) memcpy({ctx.ptr(y)} + aotc_o * {rows * inner}, "
             f"{ctx.ptr(x)} + aotc_o * {shape[axis] * inner}, {nbytes});")


# --- RoiAlign ----------------------------------------------------------------------------------

def _roialign_half_pixel(node: Node, graph: Graph) -> str:
    """The coordinate mode: RoiAlign-10 has none (it shifts nothing: output_half_pixel), 16 defaults to
    half_pixel."""
    default = "half_pixel" if (graph.info.opset or 16) >= 16 else "output_half_pixel"
    mode = node.attrs.get("coordinate_transformation_mode", default)
    return mode.decode() if isinstance(mode, bytes) else str(mode)


def _emit_roialign(ctx: NodeContext) -> None:
    x, rois, batch = ctx.inputs[:3]
    y = ctx.outputs[0]
    n, c, h, w = ctx.shape(x)
    r, _, oh, ow = ctx.shape(y)
    mode = str(ctx.attrs.get("mode", "avg"))
    coords = _roialign_half_pixel(ctx.node, ctx.graph)
    p = ctx.params("aotc_roialign_params", {
        "batches": c_int(n), "channels": c_int(c), "height": c_int(h), "width": c_int(w), "rois": c_int(r),
        "out_h": c_int(oh), "out_w": c_int(ow), "sampling_ratio": c_int(int(ctx.attrs.get("sampling_ratio", 0))),
        "max_mode": str(int(mode == "max")), "half_pixel": str(int(coords == "half_pixel")),
        "spatial_scale": c_float(float(ctx.attrs.get("spatial_scale", 1.0))),
    }, comment=f"RoiAlign {mode} of {list(ctx.shape(x))}, {r} ROIs to {oh} x {ow} ({coords})")
    ctx.line(f"if (aotc_roialign_f32({p}, {ctx.ptr(x)}, {ctx.ptr(rois)}, {ctx.ptr(batch)}, {ctx.ptr(y)}) != 0) "
             "return AOTC_ERR_SHAPE; /* a batch index out of range */")


def _check_roialign(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    x, rois, batch = (t[i] for i in node.inputs[:3])
    y = t[node.outputs[0]]
    if x.dtype != "float32" or rois.dtype != "float32" or batch.dtype != "int64":
        return "X and rois must be float32 and batch_indices int64"
    if len(x.shape) != 4 or len(rois.shape) != 2 or rois.shape[1] != 4 or batch.shape != rois.shape[:1]:
        return f"X {list(x.shape)}, rois {list(rois.shape)}, batch_indices {list(batch.shape)}: [N, C, H, W], " \
               "[R, 4] and [R] expected"
    if y.shape[:2] != (rois.shape[0], x.shape[1]) or len(y.shape) != 4:
        return f"output {list(y.shape)} is not [R, C, output_height, output_width]"
    if str(node.attrs.get("mode", "avg")) not in ("avg", "max"):
        return f"mode '{node.attrs['mode']}' is not avg or max"
    if _roialign_half_pixel(node, graph) not in ("half_pixel", "output_half_pixel"):
        return f"coordinate_transformation_mode '{node.attrs['coordinate_transformation_mode']}' is not supported"
    if int(node.attrs.get("sampling_ratio", 0)) < 0:
        return f"sampling_ratio {node.attrs['sampling_ratio']} is negative"
    return check_sizes(node, graph)


# --- NonZero ------------------------------------------------------------------------------

def _emit_nonzero(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    shape = ctx.shape(x)
    bound = ctx.shape(y)[1]
    p = ctx.params("aotc_nonzero_params", {
        "rank": str(len(shape)), "elem_size": str(ctx.tensor(x).itemsize),
        "is_float": str(int(ctx.dtype(x) in ("float32", "float64"))), "n": c_int(_nelem(shape)),
        "max_rows": c_int(bound), "shape": c_ints(list(shape)),
    }, comment=f"NonZero of {list(shape)}: at most {bound} elements")
    ctx.line(f"const int64_t {ctx.emitter.extent_var(y)} = aotc_nonzero({p}, {ctx.ptr(x)}, {ctx.ptr(y)});")


def _check_nonzero(node: Node, graph: Graph) -> str | None:
    shape = graph.tensors[node.inputs[0]].shape
    if not shape or len(shape) > MAX_RANK:
        return f"input of rank {len(shape)}: 1 to {MAX_RANK} supported"
    return check_sizes(node, graph)


OPS: dict[str, HostOp] = {
    "TopK": HostOp(_emit_topk, family="detect", dtypes=TOPK_DTYPES, check=_check_topk),
    "NonMaxSuppression": HostOp(_emit_nms, family="detect", dtypes=("float32",), check=_check_nms,
                                kernels=(fixed_scratch("", _nms_scratch),)),
    "RowsValue": HostOp(_emit_rows_value, family="detect"),
    "FillRows": HostOp(_emit_fill_rows, family="detect", dtypes=ALL_DTYPES, check=_check_fill_rows),
    "TflDetectionPostProcess": HostOp(_emit_detection, family="detect", dtypes=("float32", "uint8", "int8"),
                                      check=_check_detection, kernels=(Candidate(
                                          "aotc_detection_postprocess_f32", _detection_fit,
                                          also=("aotc_detection_postprocess_u8", "aotc_detection_postprocess_i8")),)),
    "TflNonMaxSuppression": HostOp(_emit_tfl_nms, family="detect", dtypes=("float32",), check=_check_tfl_nms,
                                   kernels=(fixed_scratch("aotc_tfl_nms_f32", _tfl_nms_scratch),)),
    "ExactRows": HostOp(_emit_exact_rows, family="detect", dtypes=ALL_DTYPES),
    "RoiAlign": HostOp(_emit_roialign, family="detect", dtypes=("float32",), check=_check_roialign),
    "NonZero": HostOp(_emit_nonzero, family="detect",
                      dtypes=("float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"),
                      check=_check_nonzero),
}
