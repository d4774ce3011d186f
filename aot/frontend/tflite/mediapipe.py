"""MediaPipe's custom TFLite ops (issue 50), the ones its face, hand, pose and selfie models carry,
lowered to ONNX ops that compute what the published kernels (google/mediapipe,
mediapipe/util/tflite/operations/) compute:

- Convolution2DTransposeBias: TRANSPOSE_CONV with a bias input (x, weights [O, kh, kw, I], bias),
  as ConvTranspose. Its options are TfLiteTransposeConvParams memcpy'd (padding, stride_width,
  stride_height as int32); SAME pads max(0, k - (in - 1) % s - 1) in total, half before, and the
  output is s * (in - 1) + k less that.
- MaxPoolingWithArgmax2D: MAX_POOL_2D that also writes, as float32, where in its window each maximum
  is: y * filter_width + x + 0.1 (window coordinates, the padding included). MaxPool's Indices
  (positions in the input) turned into those by integer arithmetic: equal to the kernel's but on a
  window of -inf only or one whose first value is NaN. Options: TfLitePoolParams memcpy'd (padding,
  stride_width, stride_height, filter_width, filter_height, activation as int32).
- MaxUnpooling2D: the inverse: an output filter times larger, zero but where each input's index
  (truncated to an integer) puts it within its window. Where(index == position, x, 0) over the windows,
  for windows that tile the output (stride == filter; others, which overlap or leave gaps, are refused).
- Landmarks2TransformMatrix (version 2), TransformTensorBilinear (1 and 2), TransformLandmarks (2):
  options in flexbuffer maps; float arithmetic (atan2, cos, sin, bilinear sampling) in another order
  than the kernels', so close (within 1e-5 of each output's scale in tests/frontend/
  test_tflite_mediapipe.py), not bit for bit.

TfLitePadding is 1 SAME, 2 VALID (not the schema's 0 / 1); TfLiteFusedActivation 0-3 are the schema's
NONE, RELU, RELU_N1_TO_1, RELU6, and the pool kernels clamp for those only (CalculateActivationRange).
"""

from __future__ import annotations

import numpy as np

from aot.frontend.tflite.builder import NCHW, NHWC, OnnxBuilder, float_weights, op_error
from aot.frontend.tflite.lowering import ACT_NONE, ACT_RELU6, atan2, fused_act, same_pads
from aot.frontend.tflite.reader import TflOp

_SAME, _VALID = 1, 2  # TfLitePadding


def _params(op: TflOp, names: tuple[str, ...]) -> dict[str, int]:
    """The leading int32 fields of the op's memcpy'd TfLite*Params struct, by name."""
    need = 4 * len(names)
    if len(op.custom) < need:
        raise op_error(op, f"{op.op[7:]}'s custom options are {len(op.custom)} bytes; its TfLite params struct "
                       f"needs {need} ({', '.join(names)})")
    fields = dict(zip(names, (int(v) for v in np.frombuffer(op.custom[:need], "<i4")), strict=True))
    if fields["padding"] not in (_SAME, _VALID):
        raise op_error(op, f"{op.op[7:]} padding {fields['padding']} is neither SAME (1) nor VALID (2)")
    bad = [k for k in names if k != "padding" and k != "activation" and fields[k] < 1]
    if bad:
        raise op_error(op, f"{op.op[7:]} {bad[0]} {fields[bad[0]]} is not positive")
    return fields


def _float_io(b: OnnxBuilder, op: TflOp, inputs: int, outputs: int) -> None:
    if len(op.inputs) != inputs or len(op.outputs) != outputs:
        raise op_error(op, f"{op.op[7:]} takes {inputs} inputs and gives {outputs} outputs, this one "
                       f"{len(op.inputs)} and {len(op.outputs)}")
    for i in [*op.inputs, *op.outputs]:
        t = b.tensor(i)
        if t.dtype != "float32":
            raise op_error(op, f"{op.op[7:]} of {t.dtype} tensors is not supported (float32 only, as MediaPipe's "
                           "kernel)")
    if len(b.tensor(op.inputs[0]).shape) != 4:
        raise op_error(op, f"{op.op[7:]} takes a 4-D NHWC input, not {list(b.tensor(op.inputs[0]).shape)}")


def _check_shape(b: OnnxBuilder, op: TflOp, k: int, shape: tuple[int, ...]) -> None:
    """The kernel sizes its outputs itself: a file declaring another shape is refused."""
    declared = tuple(b.tensor(op.outputs[k]).shape)
    if declared and declared != shape:
        raise op_error(op, f"{op.op[7:]} output {k} is declared {list(declared)}; the kernel computes "
                       f"{list(shape)}")


def _transpose_conv_bias(b: OnnxBuilder, op: TflOp) -> None:
    _float_io(b, op, 3, 1)
    p = _params(op, ("padding", "stride_width", "stride_height"))
    w = float_weights(b, op, 1)  # [O, kh, kw, I]
    n, h, wd, c = b.tensor(op.inputs[0]).shape
    if w.ndim != 4 or w.shape[3] != c or b.tensor(op.inputs[2]).shape != (w.shape[0],):
        raise op_error(op, f"Convolution2DTransposeBias weights {list(w.shape)} and bias "
                       f"{list(b.tensor(op.inputs[2]).shape)} do not fit input channels {c}")
    kh, kw = w.shape[1:3]
    sh, sw = p["stride_height"], p["stride_width"]
    ph = max(0, kh - (h - 1) % sh - 1) if p["padding"] == _SAME else 0
    pw = max(0, kw - (wd - 1) % sw - 1) if p["padding"] == _SAME else 0
    _check_shape(b, op, 0, (n, sh * (h - 1) + kh - ph, sw * (wd - 1) + kw - pw, w.shape[0]))
    x = b.value(op.inputs[0], NCHW)
    y = b.out_name(op.outputs[0], NCHW)
    b.node("ConvTranspose", [x, b.const(w.transpose(3, 0, 1, 2), f"{op.name}_w"), b.value(op.inputs[2])], [y],
           hint=op.name, kernel_shape=[kh, kw], strides=[sh, sw], pads=[ph // 2, pw // 2, ph - ph // 2, pw - pw // 2])
    b.set(op.outputs[0], NCHW, y)


_POOL = ("padding", "stride_width", "stride_height", "filter_width", "filter_height", "activation")


def _max_pool_argmax(b: OnnxBuilder, op: TflOp) -> None:
    _float_io(b, op, 1, 2)
    p = _params(op, _POOL)
    n, h, w, c = b.tensor(op.inputs[0]).shape
    fh, fw, sh, sw = p["filter_height"], p["filter_width"], p["stride_height"], p["stride_width"]
    if p["padding"] == _SAME:
        oh, ow = (h + sh - 1) // sh, (w + sw - 1) // sw
    else:
        oh, ow = (h - fh + sh) // sh, (w - fw + sw) // sw
    if oh < 1 or ow < 1:
        raise op_error(op, f"MaxPoolingWithArgmax2D window {fh}x{fw} is larger than its VALID input {h}x{w}")
    for k in (0, 1):
        _check_shape(b, op, k, (n, oh, ow, c))
    top, bottom = same_pads(h, fh, sh, 1, oh)
    left, right = same_pads(w, fw, sw, 1, ow)
    values, where = b.fresh(f"{op.name}_max"), b.fresh(f"{op.name}_where")
    b.node("MaxPool", [b.value(op.inputs[0], NCHW)], [values, where], hint=op.name, kernel_shape=[fh, fw],
           strides=[sh, sw], pads=[top, left, bottom, right])
    act = p["activation"] if 0 <= p["activation"] <= ACT_RELU6 else ACT_NONE  # the others clamp nothing
    values = fused_act(b, values, act, op)
    b.nodes[-1].output[0] = y = b.out_name(op.outputs[0], NCHW)
    b.set(op.outputs[0], NCHW, y)
    # Indices: (plane * h + row) * w + column. The window's: (row - top of window) * fw + column - its left,
    # = r - row * (w - fw) - origin, where r = row * w + column and origin = window top * fw + window left.
    r = b.node("Mod", [where, b.const(np.int64(h * w), "plane")], hint=f"{op.name}_in_plane")
    row = b.node("Div", [r, b.const(np.int64(w), "width")], hint=f"{op.name}_row")
    shift = b.node("Mul", [row, b.const(np.int64(w - fw), "width_less_filter")], hint=f"{op.name}_row_shift")
    origin = (np.arange(oh, dtype=np.int64)[:, None] * sh - top) * fw + np.arange(ow, dtype=np.int64) * sw - left
    k = b.node("Sub", [b.node("Sub", [r, shift], hint=f"{op.name}_less_rows"),
                       b.const(origin.reshape(1, 1, oh, ow), f"{op.name}_origin")], hint=f"{op.name}_in_window")
    index = b.node("Cast", [k], hint=f"{op.name}_float", to=1)
    y1 = b.out_name(op.outputs[1], NCHW)
    b.node("Add", [index, b.const(np.float32(0.1), "tenth")], [y1], hint=f"{op.name}_index")
    b.set(op.outputs[1], NCHW, y1)


def _max_unpooling(b: OnnxBuilder, op: TflOp) -> None:
    _float_io(b, op, 2, 1)
    p = _params(op, _POOL)
    n, h, w, c = b.tensor(op.inputs[0]).shape
    fh, fw, sh, sw = p["filter_height"], p["filter_width"], p["stride_height"], p["stride_width"]
    if b.tensor(op.inputs[1]).shape != (n, h, w, c):
        raise op_error(op, f"MaxUnpooling2D indices {list(b.tensor(op.inputs[1]).shape)} are not the input's "
                       f"shape {[n, h, w, c]}")
    if (sh, sw) != (fh, fw):
        raise op_error(op, f"MaxUnpooling2D with stride {sh}x{sw} unlike its filter {fh}x{fw} is not supported "
                       "(windows that overlap or leave gaps)")
    _check_shape(b, op, 0, (n, h * fh, w * fw, c))
    # [n, h, 1, w, 1, c] against the window positions [fh, 1, fw, 1] -> [n, h, fh, w, fw, c], then [n, h*fh, w*fw, c]
    spread = b.const(np.array([n, h, 1, w, 1, c], np.int64), "spread")
    index = b.node("Cast", [b.value(op.inputs[1], NHWC)], hint=f"{op.name}_int", to=6)  # truncates, as C's int
    at = b.node("Equal", [b.node("Reshape", [index, spread], hint=f"{op.name}_index6"),
                          b.const(np.arange(fh * fw, dtype=np.int32).reshape(fh, 1, fw, 1), f"{op.name}_positions")],
                hint=f"{op.name}_at")
    x = b.node("Reshape", [b.value(op.inputs[0], NHWC), spread], hint=f"{op.name}_x6")
    y = b.node("Where", [at, x, b.const(np.float32(0), "zero")], hint=f"{op.name}_windows")
    b.node("Reshape", [y, b.const(np.array([n, h * fh, w * fw, c], np.int64), "shape")], [b.names[op.outputs[0]]],
           hint=op.name)
    b.set(op.outputs[0], NHWC, b.names[op.outputs[0]])


def _flex(op: TflOp) -> dict:
    """The op's flexbuffer map of options ({} when it has none)."""
    if not op.custom:
        return {}
    from flatbuffers import flexbuffers

    try:
        m = flexbuffers.Loads(op.custom)
    except Exception as e:  # noqa: BLE001 (any decoding failure is the file's)
        raise op_error(op, f"{op.op[7:]}'s custom options are not a flexbuffer map ({type(e).__name__})") from e
    if not isinstance(m, dict):
        raise op_error(op, f"{op.op[7:]}'s custom options are not a flexbuffer map")
    return m


class _Scalars:
    """Float32 arithmetic on small tensors, one ONNX node a step, named after the op."""

    def __init__(self, b: OnnxBuilder, op: TflOp):
        self.b, self.hint = b, op.name

    def __call__(self, onnx_op: str, *inputs: str, **attrs) -> str:
        return self.b.node(onnx_op, list(inputs), hint=f"{self.hint}_{onnx_op.lower()}", **attrs)

    def c(self, value: float | np.ndarray, hint: str = "c") -> str:
        return self.b.const(np.asarray(value, np.float32).reshape(np.shape(value) or (1,)), f"{self.hint}_{hint}")

    def pick(self, x: str, indices: list[int], hint: str) -> str:
        """x[indices] of a flat tensor."""
        return self("Gather", x, self.b.const(np.array(indices, np.int64), f"{self.hint}_{hint}"), axis=0)


def _matrix_rows(f: _Scalars, b: OnnxBuilder, op: TflOp, k: int) -> str:
    """Input k, a [1, 4, 4] transformation matrix, flat."""
    if int(np.prod(b.tensor(op.inputs[k]).shape)) != 16:
        raise op_error(op, f"{op.op[7:]} matrix {list(b.tensor(op.inputs[k]).shape)} is not 4x4")
    return f("Reshape", b.value(op.inputs[k], NHWC), b.const(np.array([16], np.int64), "flat"))


def _transform_landmarks(b: OnnxBuilder, op: TflOp) -> None:
    """TransformLandmarks (version 2, [1, N, D] landmarks, D 2 or 3): each landmark's x, y through the
    matrix's first two rows as (x, y, 0, 1), z kept."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or any(b.tensor(i).dtype != "float32" for i in
                                                          [*op.inputs, *op.outputs]):
        raise op_error(op, "TransformLandmarks takes two float32 inputs and gives one float32 output")
    shape = b.tensor(op.inputs[0]).shape
    if len(shape) != 3 or shape[0] != 1 or shape[2] not in (2, 3):
        raise op_error(op, f"TransformLandmarks of {list(shape)} is not supported (version 2's [1, N, 2 or 3]; "
                       "version 1's 4-D landmarks are not)")
    f = _Scalars(b, op)
    m = _matrix_rows(f, b, op, 1)
    lm = b.value(op.inputs[0], NHWC)
    axis2 = b.const(np.array([2], np.int64), "axis2")

    def coord(k: int) -> str:
        return f("Slice", lm, b.const(np.array([k], np.int64), "start"), b.const(np.array([k + 1], np.int64), "end"),
                 axis2)

    x, y = coord(0), coord(1)
    out = [f("Add", f("Add", f("Mul", f.pick(m, [r], "m0"), x), f("Mul", f.pick(m, [r + 1], "m1"), y)),
             f.pick(m, [r + 3], "m3")) for r in (0, 4)]
    out += [coord(2)] if shape[2] == 3 else []
    b.node("Concat", out, [b.names[op.outputs[0]]], hint=op.name, axis=2)
    b.set(op.outputs[0], NHWC, b.names[op.outputs[0]])


def _transform_tensor_bilinear(b: OnnxBuilder, op: TflOp) -> None:
    """TransformTensorBilinear: output pixel (x, y) samples the input bilinearly at the matrix's first two
    rows times (x, y, 0, 1); 0 where that falls outside [0, w - 1] x [0, h - 1]. Version 2 (options
    output_height, output_width) first moves the matrix half a pixel (align corners); version 1 (output_size)
    does not. As the kernel computes it: the four pixels around the point (Gather; 0 past the last row or
    column), weighted by the point's fractions."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or any(b.tensor(i).dtype != "float32" for i in
                                                          [*op.inputs, *op.outputs]):
        raise op_error(op, "TransformTensorBilinear takes two float32 inputs and gives one float32 output")
    o = _flex(op)
    if "output_size" in o:
        if o.get("mode", "bilinear") != "bilinear":
            raise op_error(op, f"TransformTensor mode '{o['mode']}' is not supported (bilinear only)")
        (oh, ow), half = o["output_size"][:2], False
    else:
        oh, ow, half = o.get("output_height", 0), o.get("output_width", 0), True
    n, h, w, c = b.tensor(op.inputs[0]).shape
    if n != 1 or oh < 1 or ow < 1 or h < 2 or w < 2:
        raise op_error(op, f"TransformTensorBilinear of {[n, h, w, c]} to {oh}x{ow} is not supported (batch 1, "
                       "input at least 2x2)")
    _check_shape(b, op, 0, (1, oh, ow, c))
    f = _Scalars(b, op)
    m = _matrix_rows(f, b, op, 1)
    points = oh * ow  # the output pixels, row by row
    gx = f.c(np.tile(np.arange(ow, dtype=np.float32), oh).reshape(points, 1), "out_x")
    gy = f.c(np.repeat(np.arange(oh, dtype=np.float32), ow).reshape(points, 1), "out_y")
    at, inside = [], []
    for r, size in ((0, w), (4, h)):
        m0, m1, m3 = f.pick(m, [r], "m0"), f.pick(m, [r + 1], "m1"), f.pick(m, [r + 3], "m3")
        if half:  # m3 + m0 / 2 + m1 / 2 - 1/2
            m3 = f("Add", m3, f("Sub", f("Add", f("Mul", m0, f.c(0.5)), f("Mul", m1, f.c(0.5))), f.c(0.5)))
        t = f("Add", f("Add", f("Mul", m0, gx), f("Mul", m1, gy)), m3)  # [points, 1]
        inside += [f("Not", f("Less", t, f.c(0.0))), f("Not", f("Greater", t, f.c(float(size - 1))))]
        at.append(t)
    inside_all = f("And", f("And", inside[0], inside[1]), f("And", inside[2], inside[3]))
    zero = f.c(0.0)
    tx, ty = (f("Where", inside_all, t, zero) for t in at)  # in [0, size - 1] where read at all
    fx, fy = f("Floor", tx), f("Floor", ty)
    right, lower = f("Sub", tx, fx), f("Sub", ty, fy)
    ix, iy = (f("Cast", v, to=7) for v in (fx, fy))  # int64, >= 0
    pixels = f("Reshape", b.value(op.inputs[0], NHWC), b.const(np.array([h * w, c], np.int64), "pixels"))
    one = b.const(np.array([1], np.int64), "one")
    rows, columns = (iy, f("Add", iy, one)), (ix, f("Add", ix, one))
    q = {}
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = rows[dy], columns[dx]
            ok = f("And", f("Less", yy, b.const(np.array([h], np.int64), "h")),
                   f("Less", xx, b.const(np.array([w], np.int64), "w")))  # the corner after the last: 0
            flat = f("Add", f("Mul", f("Min", yy, b.const(np.array([h - 1], np.int64), "last_row")),
                              b.const(np.array([w], np.int64), "w")),
                     f("Min", xx, b.const(np.array([w - 1], np.int64), "last_column")))
            read = f("Gather", pixels, f("Reshape", flat, b.const(np.array([points], np.int64), "points")), axis=0)
            q[dy, dx] = f("Where", ok, read, zero)  # [points, c]
    left, upper_w = f("Sub", f.c(1.0), right), f("Sub", f.c(1.0), lower)
    upper = f("Add", f("Mul", left, q[0, 0]), f("Mul", right, q[0, 1]))
    low = f("Add", f("Mul", left, q[1, 0]), f("Mul", right, q[1, 1]))
    result = f("Where", inside_all, f("Add", f("Mul", lower, low), f("Mul", upper_w, upper)), zero)
    b.node("Reshape", [result, b.const(np.array([1, oh, ow, c], np.int64), "shape")], [b.names[op.outputs[0]]],
           hint=op.name)
    b.set(op.outputs[0], NHWC, b.names[op.outputs[0]])


def _landmarks_to_transform_matrix(b: OnnxBuilder, op: TflOp) -> None:
    """Landmarks2TransformMatrix (version 2): the [1, 4, 4] matrix mapping a crop of output_height x
    output_width onto the landmarks' subset, rotated so the left and right landmarks lie at
    target_rotation_radians, scaled by scale_x, scale_y about the subset's rotated bounding box."""
    if len(op.inputs) != 1 or len(op.outputs) != 1 or any(b.tensor(i).dtype != "float32" for i in
                                                          [*op.inputs, *op.outputs]):
        raise op_error(op, "Landmarks2TransformMatrix takes a float32 input and gives a float32 output")
    shape = b.tensor(op.inputs[0]).shape
    if len(shape) != 3:
        raise op_error(op, f"Landmarks2TransformMatrix of {list(shape)} is not supported (version 2's 3-D "
                       "landmarks; version 1's 4-D ones are not)")
    o = _flex(op)
    need = ("subset_idxs", "left_rotation_idx", "right_rotation_idx", "target_rotation_radians", "output_height",
            "output_width", "scale_x", "scale_y")
    missing = [k for k in need if k not in o]
    if missing:
        raise op_error(op, f"Landmarks2TransformMatrix options lack {', '.join(missing)}")
    subset = [int(v) for v in o["subset_idxs"]]
    left, right = int(o["left_rotation_idx"]), int(o["right_rotation_idx"])
    size = int(np.prod(shape))
    if not subset or any(not 0 <= 3 * i + 1 < size for i in [*subset, left, right]) \
            or o["output_height"] <= 0 or o["output_width"] <= 0 or o["scale_x"] <= 0 or o["scale_y"] <= 0:
        raise op_error(op, f"Landmarks2TransformMatrix options {o} do not fit landmarks {list(shape)}")
    _check_shape(b, op, 0, (1, 4, 4))
    f = _Scalars(b, op)
    flat = f("Reshape", b.value(op.inputs[0], NHWC), b.const(np.array([size], np.int64), "flat"))
    lx, ly, rx, ry = (f.pick(flat, [k], "at") for k in (3 * left, 3 * left + 1, 3 * right, 3 * right + 1))
    angle = atan2(b, f("Sub", ry, ly), f("Sub", rx, lx), f"{op.name}_atan2")
    rotation = f("Sub", f.c(float(np.float32(o["target_rotation_radians"]))), angle)
    # the subset rotated by `rotation`: its box's size and centre, the centre rotated back
    xs, ys = f.pick(flat, [3 * i for i in subset], "xs"), f.pick(flat, [3 * i + 1 for i in subset], "ys")
    cos, sin = f("Cos", rotation), f("Sin", rotation)
    rx_all = f("Add", f("Mul", cos, xs), f("Mul", f("Neg", sin), ys))
    ry_all = f("Add", f("Mul", sin, xs), f("Mul", cos, ys))
    axes = b.const(np.array([0], np.int64), "axes")
    box = [f(r, v, axes, keepdims=1) for v in (rx_all, ry_all) for r in ("ReduceMin", "ReduceMax")]
    width, height = f("Sub", box[1], box[0]), f("Sub", box[3], box[2])
    mx, my = (f("Div", f("Add", box[k], box[k + 1]), f.c(2.0)) for k in (0, 2))
    back = f("Neg", rotation)
    cb, sb = f("Cos", back), f("Sin", back)
    crop_x = f("Add", f("Mul", cb, mx), f("Mul", f("Neg", sb), my))
    crop_y = f("Add", f("Mul", sb, mx), f("Mul", cb, my))
    # shift to the crop centre, rotate back, scale to the box, shift by half the output
    sx = f("Div", f("Mul", f.c(float(o["scale_x"])), width), f.c(float(o["output_width"])))
    sy = f("Div", f("Mul", f.c(float(o["scale_y"])), height), f.c(float(o["output_height"])))
    shx, shy = f.c(-o["output_width"] / 2.0), f.c(-o["output_height"] / 2.0)
    a00, a01 = f("Mul", cb, sx), f("Mul", f("Neg", sb), sy)
    a10, a11 = f("Mul", sb, sx), f("Mul", cb, sy)
    a03 = f("Add", f("Add", f("Mul", a00, shx), f("Mul", a01, shy)), crop_x)
    a13 = f("Add", f("Add", f("Mul", a10, shx), f("Mul", a11, shy)), crop_y)
    zero, one = f.c(0.0), f.c(1.0)
    rows = f("Concat", a00, a01, zero, a03, a10, a11, zero, a13, zero, zero, one, zero, zero, zero, zero, one, axis=0)
    b.node("Reshape", [rows, b.const(np.array([1, 4, 4], np.int64), "shape")], [b.names[op.outputs[0]]],
           hint=op.name)
    b.set(op.outputs[0], NHWC, b.names[op.outputs[0]])


OPS = {
    "CUSTOM:Convolution2DTransposeBias": _transpose_conv_bias,
    "CUSTOM:MaxPoolingWithArgmax2D": _max_pool_argmax,
    "CUSTOM:MaxUnpooling2D": _max_unpooling,
    "CUSTOM:Landmarks2TransformMatrix": _landmarks_to_transform_matrix,
    "CUSTOM:TransformTensorBilinear": _transform_tensor_bilinear,
    "CUSTOM:TransformLandmarks": _transform_landmarks,
}
