"""TFLite's builtins whose outputs the data sizes (issue 50).

WHERE (the coordinates of the nonzero elements) and UNIQUE (the distinct values in order of first
appearance) become ONNX NonZero and Unique, which aotc compiles as bounded outputs
(aot/frontend/onnx/bounded.py): planned at the input's size, the rows a run wrote reported in
`<output>_extent`. The converter declares their rows -1 in the shape signature (a shape of 1 beside
it): a graph output so declared is left undeclared there, and the import takes the bound.

NON_MAX_SUPPRESSION_V4 / _V5 are not bounded in LiteRT: its kernel sizes the selected indices (and
V5's scores) to max_output_size and writes zeros past the count, which is an output of its own. So
they are TflNonMaxSuppression (aot/kernels/detect.py), LiteRT's algorithm at that static size, soft
NMS included.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.reader import TflOp
from aot.ir import tflite_ops as tfl


def _where(b: OnnxBuilder, op: TflOp) -> None:
    """WHERE(condition): [rows, rank] int64, the nonzero elements' coordinates in row-major order (LiteRT's
    kernel, any nonzero value): NonZero, then its [rank, rows] transposed."""
    if len(op.inputs) != 1:
        raise op_error(op, "WHERE of three inputs is SELECT_V2's, which the converter writes instead")
    x = b.tensor(op.inputs[0])
    if not x.shape:
        raise op_error(op, "WHERE of a scalar is not supported")
    nz = b.node("NonZero", [b.value(op.inputs[0], NHWC)], hint=f"{op.name}_nonzero")
    y = b.names[op.outputs[0]]
    b.node("Transpose", [nz], [y], hint=op.name, perm=[1, 0])
    b.values[op.outputs[0]] = {NHWC: y}
    b.rows.add(op.outputs[0])


def _unique(b: OnnxBuilder, op: TflOp) -> None:
    """UNIQUE(x): y, the distinct values of the 1-D x in order of first appearance, and idx, each element's
    place in y (int32 or int64): ONNX Unique unsorted, its inverse indices cast to idx's type."""
    x = b.tensor(op.inputs[0])
    if len(x.shape) != 1:
        raise op_error(op, f"UNIQUE of a {len(x.shape)}-D input: LiteRT's kernel takes 1-D ones")
    y, idx = op.outputs[0], op.outputs[1]
    want = b.tensor(idx).dtype
    inverse = b.names[idx] if want == "int64" else b.fresh(f"{b.names[idx]}_int64")
    b.nodes.append(helper.make_node("Unique", [b.value(op.inputs[0], NHWC)], [b.names[y], "", inverse],
                                    name=b.fresh(op.name), sorted=0))
    if want != "int64":
        b.node("Cast", [inverse], [b.names[idx]], hint=f"{op.name}_idx", to=helper.np_dtype_to_tensor_dtype(
            np.dtype(want)))
    b.values[y], b.values[idx] = {NHWC: b.names[y]}, {NHWC: b.names[idx]}
    b.rows.add(y)


def _scalar(b: OnnxBuilder, op: TflOp, k: int, what: str) -> float:
    t = b.tensor(op.inputs[k])
    if t.data is None:
        raise op_error(op, f"its {what} is computed at run time: aotc needs it constant (it sizes the outputs "
                       "or is a compile-time parameter of the kernel)")
    return float(np.asarray(t.data).reshape(-1)[0])


def _non_max_suppression(b: OnnxBuilder, op: TflOp) -> None:
    """NON_MAX_SUPPRESSION_V4 (boxes, scores, max_output_size, iou_threshold, score_threshold) -> indices,
    count; _V5 (and soft_nms_sigma) -> indices, scores, count: TflNonMaxSuppression."""
    soft = op.op == "NON_MAX_SUPPRESSION_V5"
    max_output = int(_scalar(b, op, 2, "max_output_size"))
    if max_output <= 0:
        raise op_error(op, f"max_output_size {max_output} selects nothing (LiteRT's kernel refuses a negative one)")
    attrs = {"max_output": max_output, "iou_threshold": _scalar(b, op, 3, "iou_threshold"),
             "score_threshold": _scalar(b, op, 4, "score_threshold"),
             "sigma": _scalar(b, op, 5, "soft_nms_sigma") if soft else 0.0}
    if attrs["sigma"] < 0:
        raise op_error(op, f"soft_nms_sigma {attrs['sigma']} is negative (LiteRT's kernel fails on it)")
    for k in (0, 1):
        if b.tensor(op.inputs[k]).dtype != "float32":
            raise op_error(op, f"its {('boxes', 'scores')[k]} are {b.tensor(op.inputs[k]).dtype}: float32 only")
    wanted = ("int32", "float32", "int32") if soft else ("int32", "int32")
    for i, dtype in zip(op.outputs, wanted, strict=True):  # (the kernel writes these types, as LiteRT's does)
        if b.tensor(i).dtype != dtype:
            raise op_error(op, f"its output '{b.tensor(i).name}' is declared {b.tensor(i).dtype}: the op gives {dtype}")
    names = [b.names[i] for i in op.outputs]
    outs = names if soft else [names[0], b.fresh(f"{op.name}_scores"), names[1]]
    b.nodes.append(helper.make_node(tfl.NON_MAX_SUPPRESSION, [b.value(op.inputs[0], NHWC),
                                                              b.value(op.inputs[1], NHWC)], outs,
                                    name=b.fresh(op.name), domain=tfl.DOMAIN, **attrs))
    shapes = ((max_output,), (max_output,), ())
    for name, dtype, shape in zip(outs, (onnx.TensorProto.INT32, onnx.TensorProto.FLOAT, onnx.TensorProto.INT32),
                                  shapes, strict=True):
        b.value_infos.append(helper.make_tensor_value_info(name, dtype, list(shape)))
    for i, name, shape in zip(op.outputs, names, shapes if soft else shapes[::2], strict=True):
        b.values[i] = {NHWC: name}
        b.tensor(i).shape, b.tensor(i).signature = shape, ()  # the file's [1] (signature [-1]): LiteRT's size

OPS = {"WHERE": _where, "UNIQUE": _unique, "NON_MAX_SUPPRESSION_V4": _non_max_suppression,
       "NON_MAX_SUPPRESSION_V5": _non_max_suppression}
