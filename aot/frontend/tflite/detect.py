"""TFLite's custom op TFLite_Detection_PostProcess (issue 50), the last op of every SSD-style detector:
box decoding against constant anchors, then non-max suppression (LiteRT's fast, class-agnostic path or
its regular per-class one), written as aotc's TflDetectionPostProcess (aot/ir/tflite_ops.py) and run by
runtime_c/kernels/detect/detect_postprocess.c.

The options are the op's flexbuffer map, read with the `flatbuffers` package's flexbuffers module (the
names and defaults of LiteRT's Init: detections_per_class 100, use_regular_nms false). What LiteRT checks
only when it runs is checked here, once, since the anchors are constant: an anchor of negative height or
width (LiteRT's ValidateBoxes fails on every call), an IoU threshold outside (0, 1], a class column count
that is not num_classes or num_classes + 1. Box encodings and class predictions may be float32 or uint8
(LiteRT's types) or int8 (dequantized the same way; LiteRT refuses them), read by the kernel as
(q - zero) * scale; quantized anchors are dequantized here with that float arithmetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.reader import TflOp
from aot.ir import tflite_ops as tfl

NAME = "TFLite_Detection_PostProcess"
_INTS = ("max_detections", "max_classes_per_detection", "detections_per_class", "num_classes")
_FLOATS = ("nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale", "h_scale", "w_scale")
_DEFAULTS: dict[str, Any] = {"detections_per_class": 100, "use_regular_nms": False}


def options(op: TflOp) -> dict[str, Any]:
    """The op's options from its flexbuffer: ints, floats and use_regular_nms as a bool."""
    from flatbuffers import flexbuffers

    raw = op.options if isinstance(op.options, bytes) else b""
    try:
        m = flexbuffers.Loads(raw) if raw else None
    except Exception as e:
        raise op_error(op, f"{NAME}'s custom options are not a flexbuffer map ({e})") from e
    if not isinstance(m, dict):
        raise op_error(op, f"{NAME}'s custom options are not a flexbuffer map")
    out: dict[str, Any] = {}
    for key in (*_INTS, *_FLOATS, "use_regular_nms"):
        value = m.get(key, _DEFAULTS.get(key))
        if value is None:
            raise op_error(op, f"{NAME} has no option '{key}'")
        out[key] = bool(value) if key == "use_regular_nms" else int(value) if key in _INTS else \
            float(np.float32(value))
    return out


def _dequantized(t: Any) -> np.ndarray:
    """A constant as float32: quantized integers as LiteRT's Dequantizer, (float(q) - zero) * scale in float."""
    if t.dtype == "float32":
        return np.asarray(t.data, np.float32)
    q = t.quant
    return (t.data.astype(np.float32) - np.float32(int(q.zero_point[0]))) * np.float32(q.scale[0])


def lower_detection_postprocess(b: OnnxBuilder, op: TflOp) -> None:
    """TFLite_Detection_PostProcess -> TflDetectionPostProcess, every option and shape checked."""
    if len(op.inputs) != 3 or len(op.outputs) != 4 or min(op.inputs) < 0:
        raise op_error(op, f"{NAME} takes 3 inputs and gives 4 outputs ({len(op.inputs)} and {len(op.outputs)} here)")
    o = options(op)
    enc, cls, anchors = (b.tensor(i) for i in op.inputs)
    if len(enc.shape) != 3 or enc.shape[0] != 1 or enc.shape[2] < 4:
        raise op_error(op, f"box encodings of shape {list(enc.shape)}: [1, boxes, >= 4] expected (batch 1)")
    boxes = enc.shape[1]
    if len(cls.shape) != 3 or cls.shape[:2] != (1, boxes):
        raise op_error(op, f"class predictions of shape {list(cls.shape)}: [1, {boxes}, classes] expected")
    if anchors.shape != (boxes, 4):
        raise op_error(op, f"anchors of shape {list(anchors.shape)}: [{boxes}, 4] expected")
    if anchors.data is None:
        raise op_error(op, "the anchors are computed at run time; aotc needs them constant")
    if enc.dtype != cls.dtype or enc.dtype not in ("float32", "uint8", "int8"):
        raise op_error(op, f"{NAME} of {enc.dtype} box encodings and {cls.dtype} class predictions is not supported "
                       "(both float32, uint8 or int8)")
    quantized = enc.dtype != "float32"
    for t, what in ((enc, "box encodings"), (cls, "class predictions"), (anchors, "anchors")):
        if quantized and (t.quant is None or t.quant.per_channel or not float(t.quant.scale[0]) > 0):
            raise op_error(op, f"{enc.dtype} {what} need one positive scale and a zero point")
    if anchors.dtype != ("float32" if not quantized else enc.dtype):
        raise op_error(op, f"anchors of {anchors.dtype} with {enc.dtype} box encodings are not supported")
    nc, md, mc, dpc = o["num_classes"], o["max_detections"], o["max_classes_per_detection"], o["detections_per_class"]
    if nc < 1 or cls.shape[2] - nc not in (0, 1):
        raise op_error(op, f"num_classes {nc} with {cls.shape[2]} class columns: the columns must be num_classes or "
                       "num_classes + 1 (a background column first)")
    if md < 1 or mc < 1 or (o["use_regular_nms"] and dpc < 1):
        raise op_error(op, f"max_detections {md}, max_classes_per_detection {mc} and detections_per_class {dpc} must "
                       "be positive")
    if not 0.0 < o["nms_iou_threshold"] <= 1.0:
        raise op_error(op, f"nms_iou_threshold {o['nms_iou_threshold']:g} is not in (0, 1] (LiteRT refuses it)")
    if any(o[k] == 0.0 for k in ("y_scale", "x_scale", "h_scale", "w_scale")):
        raise op_error(op, "a box scale (y_scale, x_scale, h_scale, w_scale) is zero")
    if boxes * cls.shape[2] >= 2 ** 31:
        raise op_error(op, f"{boxes} boxes of {cls.shape[2]} classes: too many scores (fewer than 2^31)")
    a = _dequantized(anchors)
    if (a[:, 2:] < 0).any():
        row = int(np.argwhere(a[:, 2:] < 0)[0][0])
        raise op_error(op, f"anchor {row} has a negative height or width ({a[row].tolist()}): LiteRT's decoded "
                       "boxes would fail its check on every call")
    rows = md * mc
    shapes = [(1, rows, 4), (1, rows), (1, rows), (1,)]
    for i, shape in zip(op.outputs, shapes, strict=True):
        t = b.tensor(i)
        if t.dtype != "float32":
            raise op_error(op, f"output '{t.name}' is {t.dtype}: {NAME}'s outputs are float32")
        if t.shape and tuple(t.shape) != shape:
            raise op_error(op, f"output '{t.name}' is declared {list(t.shape)}; the options give {list(shape)}")
        t.shape = shape  # an undeclared (empty) shape: the options' (LiteRT sizes the outputs from them too)
    attrs: dict[str, Any] = {k: o[k] for k in (*_INTS, *_FLOATS)}
    attrs["use_regular_nms"] = int(o["use_regular_nms"])
    if quantized:
        attrs.update(box_scale=float(enc.quant.scale[0]), box_zero=int(enc.quant.zero_point[0]),
                     score_scale=float(cls.quant.scale[0]), score_zero=int(cls.quant.zero_point[0]))
    anchors_name = b.const(np.ascontiguousarray(a, np.float32), f"{b.names[op.inputs[2]]}_f32")
    outs = [b.names[i] for i in op.outputs]
    b.nodes.append(helper.make_node(tfl.DETECTION_POSTPROCESS, [b.value(op.inputs[0], NHWC),
                                                                b.value(op.inputs[1], NHWC), anchors_name], outs,
                                    name=b.fresh(op.name), domain=tfl.DOMAIN, **attrs))
    for name, shape in zip(outs, shapes, strict=True):
        b.value_infos.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(np.float32)),
                                                           list(shape)))
    for i, name in zip(op.outputs, outs, strict=True):
        b.values[i] = {NHWC: name}


CUSTOM = {NAME: lower_detection_postprocess}  # the custom ops lowered (aot/frontend/tflite/reader.py's CUSTOM_OPS)
