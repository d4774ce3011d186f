"""MediaPipe's custom TFLite ops (issue 50), the ones its face, hand, pose and selfie models carry,
lowered to ONNX ops that compute them exactly as the published kernels (google/mediapipe,
mediapipe/util/tflite/operations/) do:

- Convolution2DTransposeBias: TRANSPOSE_CONV with a bias input (x, weights [O, kh, kw, I], bias),
  as ConvTranspose. Its options are TfLiteTransposeConvParams memcpy'd (padding, stride_width,
  stride_height as int32); SAME pads max(0, k - (in - 1) % s - 1) in total, half before, and the
  output is s * (in - 1) + k less that.
- MaxPoolingWithArgmax2D: MAX_POOL_2D that also writes, as float32, where in its window each maximum
  is: y * filter_width + x + 0.1 (window coordinates, the padding included). MaxPool's Indices
  (positions in the input) turned into those by integer arithmetic. Options: TfLitePoolParams memcpy'd
  (padding, stride_width, stride_height, filter_width, filter_height, activation as int32).
- MaxUnpooling2D: the inverse: an output filter times larger, zero but where each input's index
  (truncated to an integer) puts it within its window. Where(index == position, x, 0) over the windows,
  for windows that tile the output (stride == filter), the only case the kernel's padding is 0.

TfLitePadding is 1 SAME, 2 VALID (not the schema's 0 / 1); TfLiteFusedActivation 0-3 are the schema's
NONE, RELU, RELU_N1_TO_1, RELU6, and the pool kernels clamp for those only (CalculateActivationRange).
"""

from __future__ import annotations

import numpy as np

from aot.frontend.tflite.builder import NCHW, NHWC, OnnxBuilder, float_weights, op_error
from aot.frontend.tflite.lowering import ACT_NONE, ACT_RELU6, fused_act, same_pads
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


OPS = {
    "CUSTOM:Convolution2DTransposeBias": _transpose_conv_bias,
    "CUSTOM:MaxPoolingWithArgmax2D": _max_pool_argmax,
    "CUSTOM:MaxUnpooling2D": _max_unpooling,
}
