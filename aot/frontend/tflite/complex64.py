"""complex64 inside the graph (issue 50): RFFT2D, COMPLEX_ABS, REAL and IMAG, as tf.signal.stft and
tf.signal.rfft2d leave them in a converted audio model (YAMNet's spectrogram: RFFT2D then COMPLEX_ABS).

A complex64 tensor is held as float32 with a trailing dimension of 2 (re, im), ONNX DFT's layout, which
aotc compiles (aot/kernels/signal.py). RFFT2D (LiteRT's kernels/rfft2d.cc: the input's last two dimensions
cropped or zero-padded to fft_length [fl0, fl1], both powers of two, then a 2-D real FFT with no scaling,
giving [..., fl0, fl1 / 2 + 1] bins) is a one-sided DFT along the last axis then a full one along the one
before (DFT crops and pads to its length itself). COMPLEX_ABS is sqrt(re^2 + im^2) (LiteRT's complex.cc:
std::abs), REAL and IMAG pick re or im. A complex tensor is only ever read by these three, or reshaped
(RESHAPE, SQUEEZE, EXPAND_DIMS: tf.signal.stft squeezes RFFT2D's output): a complex graph input or output,
constant, or one read by any other op is refused by the op (`check_complex`).
"""

from __future__ import annotations

import numpy as np

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.reader import TflOp

COMPLEX = "complex64"
_READERS = ("COMPLEX_ABS", "REAL", "IMAG")
_RESHAPES = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")  # of a complex tensor (tf.signal.stft squeezes RFFT2D's output)


def check_complex(b: OnnxBuilder, op: TflOp) -> bool:
    """Refuse `op` where a complex64 tensor would leave the graph or reach an op other than those here; True
    when `op` reshapes a complex tensor (`reshape`)."""
    ins = [i for i in op.inputs if i >= 0]
    outs = [o for o in op.outputs if o >= 0]
    complex_in = [i for i in ins if b.tensor(i).dtype == COMPLEX]
    complex_out = [o for o in outs if b.tensor(o).dtype == COMPLEX]
    if not complex_in and not complex_out:
        return False
    if op.op == "RFFT2D" and not complex_in:
        pass
    elif op.op in _READERS and complex_in == ins[:1] and not complex_out:
        pass
    elif op.op in _RESHAPES and complex_in == ins[:1] and complex_out == outs:
        pass
    else:
        t = b.tensor((complex_in or complex_out)[0])
        raise op_error(op, f"{op.op} of complex64 tensor '{t.name}' is not supported: aotc keeps complex64 "
                       "inside the graph, between RFFT2D and COMPLEX_ABS, REAL or IMAG")
    for i in complex_in:
        t = b.tensor(i)
        if t.data is not None or i in b.m.inputs:
            what = "a constant" if t.data is not None else "a graph input"
            raise op_error(op, f"{op.op} of complex64 tensor '{t.name}', {what}, is not supported: aotc keeps "
                           "complex64 inside the graph (float32 in and out)")
    for o in complex_out:
        if o in b.m.outputs:
            raise op_error(op, f"{op.op}'s output '{b.tensor(o).name}' is a complex64 graph output, which aotc "
                           "does not support: complex64 stays inside the graph (read it with COMPLEX_ABS, REAL "
                           "or IMAG)")
    return op.op in _RESHAPES


def reshape(b: OnnxBuilder, op: TflOp) -> None:
    """RESHAPE, SQUEEZE or EXPAND_DIMS of a complex tensor: the (re, im) pairs reshaped to the output's static
    shape."""
    y = b.tensor(op.outputs[0])
    out = b.out_name(op.outputs[0], NHWC)
    b.node("Reshape", [b.value(op.inputs[0], NHWC), b.const(np.array([*y.shape, 2], np.int64), f"{op.name}_shape")],
           [out], hint=op.name)
    b.set(op.outputs[0], NHWC, out)


def _rfft2d(b: OnnxBuilder, op: TflOp) -> None:
    if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
        raise op_error(op, "RFFT2D takes an input and fft_length and gives one output")
    x, fl, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    if x.dtype != "float32" or y.dtype != COMPLEX:
        raise op_error(op, f"RFFT2D of {x.dtype} to {y.dtype}: LiteRT's kernel takes float32 to complex64")
    if fl.data is None:
        raise op_error(op, "RFFT2D's fft_length is computed at run time; aotc needs it constant")
    if fl.dtype != "int32" or fl.data.size != 2:
        raise op_error(op, f"RFFT2D's fft_length is {fl.dtype} {list(fl.shape)}; LiteRT's kernel takes 2 int32")
    fl0, fl1 = (int(v) for v in fl.data.reshape(-1))
    rank = len(x.shape)
    if rank < 2:
        raise op_error(op, f"RFFT2D of a rank-{rank} input: it transforms the last two dimensions")
    for n in (fl0, fl1):
        if n <= 0 or n & (n - 1):
            raise op_error(op, f"RFFT2D's fft_length {[fl0, fl1]} is not a pair of powers of two, which LiteRT's "
                           "kernel (fft2d) requires")
    if fl1 == 1:  # Ooura's rdft of one sample reads a second one, as the imaginary part (LiteRT gives |x| sqrt 2)
        raise op_error(op, "RFFT2D with an fft_length of 1 column is not supported: LiteRT's kernel (fft2d's rdft) "
                       "needs at least 2 and computes no DFT there")
    want = (*x.shape[:-2], fl0, fl1 // 2 + 1)
    if tuple(y.shape) != want:
        raise op_error(op, f"RFFT2D of {list(x.shape)} with fft_length {[fl0, fl1]} gives {list(want)}, "
                       f"not {list(y.shape)}")
    real = b.node("Unsqueeze", [b.value(op.inputs[0], NHWC), b.const(np.array([-1], np.int64), "last")],
                  hint=f"{op.name}_real")
    rows = b.node("DFT", [real, b.const(np.int64(fl1), f"{op.name}_fl1")], hint=f"{op.name}_rows",
                  axis=rank - 1, onesided=1)
    b.node("DFT", [rows, b.const(np.int64(fl0), f"{op.name}_fl0")], [b.names[op.outputs[0]]],
           hint=f"{op.name}_cols", axis=rank - 2)
    b.set(op.outputs[0], NHWC, b.names[op.outputs[0]])


def _reader(b: OnnxBuilder, op: TflOp) -> None:
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise op_error(op, f"{op.op} takes one input and gives one output")
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if x.dtype != COMPLEX or y.dtype != "float32" or tuple(x.shape) != tuple(y.shape):
        raise op_error(op, f"{op.op} of {x.dtype} {list(x.shape)} to {y.dtype} {list(y.shape)}: aotc takes "
                       "complex64 to float32 of the same shape")
    pair = b.value(op.inputs[0], NHWC)
    out = b.out_name(op.outputs[0], NHWC)
    if op.op == "COMPLEX_ABS":
        square = b.node("Mul", [pair, pair], hint=f"{op.name}_square")
        norm = b.node("ReduceSum", [square, b.const(np.array([-1], np.int64), "last")], hint=f"{op.name}_norm",
                      keepdims=0)
        b.node("Sqrt", [norm], [out], hint=op.name)
    else:
        b.node("Gather", [pair, b.const(np.int64(0 if op.op == "REAL" else 1), f"{op.name}_part")], [out],
               hint=op.name, axis=-1)
    b.set(op.outputs[0], NHWC, out)


OPS = {"RFFT2D": _rfft2d, "COMPLEX_ABS": _reader, "REAL": _reader, "IMAG": _reader}
