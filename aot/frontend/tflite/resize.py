"""--input-shape for a .tflite file: an input whose shape signature leaves a dimension -1 (the converter's
dynamic size) is resized as LiteRT's ResizeInputTensor does, and the shapes of what follows are worked out
again op by op (issue 50: pyopen-wakeword's melspectrogram.tflite, stored as [1, 1] with signature [-1, -1],
which the package resizes to [1, 1760] audio samples before its first invoke).

The file stores every tensor's shape for the placeholder size; the lowerings read those shapes (a Reshape's
target, a conv's padding), so they are recomputed before lowering, from the same rules as LiteRT's Prepare.
An op that reads a resized tensor and has no rule here is refused by name (its shapes would be wrong)."""

from __future__ import annotations

import math

import numpy as np

from aot.errors import AotcError
from aot.frontend.tflite.reader import OpName, TflModel, TflOp

SAME = 0  # Padding.SAME (VALID = 1)

_SAME_SHAPE = {"ABS", "CAST", "CEIL", "COS", "DEQUANTIZE", "ELU", "EXP", "FLOOR", "GELU", "HARD_SWISH",
               "L2_NORMALIZATION", "LEAKY_RELU", "LOG", "LOGISTIC", "LOG_SOFTMAX", "NEG", "QUANTIZE", "RELU", "RELU6",
               "RELU_N1_TO_1", "RELU_0_TO_1", "ROUND", "RSQRT", "SIGN", "SIN", "SOFTMAX", "SQRT", "SQUARE", "TANH",
               "LOGICAL_NOT"}
_BROADCAST = {"ADD", "SUB", "MUL", "DIV", "MINIMUM", "MAXIMUM", "POW", "SQUARED_DIFFERENCE", "FLOOR_DIV", "FLOOR_MOD",
              "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "LOGICAL_AND", "LOGICAL_OR",
              "PRELU", "ATAN2"}
_REDUCE = {"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "REDUCE_ANY", "REDUCE_ALL"}


def resize_inputs(m: TflModel, shapes: dict[str, tuple[int, ...]]) -> None:
    """Give the inputs named in `shapes` (by TFLite tensor name) those shapes, where their shape signatures
    allow it, and every tensor computed from them its new shape. Names and ranks the file does not have are
    left to --input-shape's own checks (aot/frontend/onnx/load.py), which then find the shapes equal."""
    by_name = {m.tensors[i].name: i for i in m.inputs}
    changed: set[int] = set()
    for name, shape in shapes.items():
        i = by_name.get(name)
        if i is None or len(shape) != len(m.tensors[i].shape) or tuple(shape) == m.tensors[i].shape:
            continue
        t = m.tensors[i]
        signature = t.signature if len(t.signature) == len(t.shape) else t.shape
        fixed = [k for k, (d, s, old) in enumerate(zip(shape, signature, t.shape, strict=True))
                 if d != old and s >= 0]
        if fixed:
            k = fixed[0]
            raise AotcError(f"--input-shape gives input '{name}' dimension {k} = {shape[k]}, but the TFLite file "
                            f"fixes it at {t.shape[k]} (shape signature {list(signature)}); only its -1 dimensions "
                            "can be set")
        if any(d <= 0 for d in shape):
            raise AotcError(f"--input-shape for '{name}' must be positive sizes, got {list(shape)}")
        t.shape = tuple(int(d) for d in shape)
        changed.add(i)
    for op in m.ops if changed else []:
        if not any(i in changed for i in op.inputs if i >= 0):
            continue
        got = _shapes(m, op)
        for o, shape in zip(op.outputs, got, strict=True):
            if tuple(shape) != m.tensors[o].shape:
                m.tensors[o].shape = tuple(int(d) for d in shape)
                changed.add(o)


def _const(m: TflModel, op: TflOp, k: int) -> list[int]:
    t = m.tensors[op.inputs[k]]
    if t.data is None:
        raise AotcError(f"input {k} is computed at run time; with a resized input (--input-shape) aotc works out "
                        "shapes only from constant axes, permutations and sizes", node=OpName(op))
    return [int(v) for v in np.asarray(t.data).reshape(-1)]


def _window(size: int, k: int, stride: int, dilation: int, padding: int) -> int:
    if padding == SAME:
        return -(-size // stride)
    return (size - (k - 1) * dilation - 1) // stride + 1


def _shapes(m: TflModel, op: TflOp) -> list[tuple[int, ...]]:
    """The output shapes of `op` from its inputs' (LiteRT's Prepare of each op)."""
    x = m.tensors[op.inputs[0]].shape
    o = op.options
    name = op.op
    if name in _SAME_SHAPE:
        return [x]
    if name in _BROADCAST:
        return [tuple(np.broadcast_shapes(x, m.tensors[op.inputs[1]].shape))]
    if name == "EXPAND_DIMS":
        axis = _const(m, op, 1)[0]
        axis = axis + len(x) + 1 if axis < 0 else axis
        return [(*x[:axis], 1, *x[axis:])]
    if name == "SQUEEZE":
        dims = [d + len(x) if d < 0 else d for d in (o.squeezeDims if o is not None and o.squeezeDims is not None
                                                      else [])]
        return [tuple(d for k, d in enumerate(x) if not (k in dims or (not dims and d == 1)))]
    if name == "TRANSPOSE":
        return [tuple(x[p] for p in _const(m, op, 1))]
    if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w = m.tensors[op.inputs[1]].shape
        h = _window(x[1], w[1], o.strideH, o.dilationHFactor, o.padding)
        wd = _window(x[2], w[2], o.strideW, o.dilationWFactor, o.padding)
        return [(x[0], h, wd, w[0] if name == "CONV_2D" else w[3])]
    if name in ("MAX_POOL_2D", "AVERAGE_POOL_2D", "L2_POOL_2D"):
        return [(x[0], _window(x[1], o.filterHeight, o.strideH, 1, o.padding),
                 _window(x[2], o.filterWidth, o.strideW, 1, o.padding), x[3])]
    if name == "BATCH_MATMUL":
        y = m.tensors[op.inputs[1]].shape
        rows = x[-1] if o is not None and o.adjX else x[-2]
        cols = y[-2] if o is not None and o.adjY else y[-1]
        return [(*np.broadcast_shapes(x[:-2], y[:-2]), rows, cols)]
    if name == "FULLY_CONNECTED":
        units = m.tensors[op.inputs[1]].shape[0]
        if o is not None and o.keepNumDims:
            return [(*x[:-1], units)]
        return [(math.prod(x) // m.tensors[op.inputs[1]].shape[1], units)]
    if name in _REDUCE:
        axes = {a + len(x) if a < 0 else a for a in _const(m, op, 1)}
        keep = o is not None and o.keepDims
        return [tuple(1 if k in axes else d for k, d in enumerate(x) if keep or k not in axes)]
    if name == "RESHAPE":
        new = _const(m, op, 1) if len(op.inputs) > 1 and op.inputs[1] >= 0 else list(o.newShape)
        if -1 in new:
            known = math.prod(d for d in new if d != -1)
            new[new.index(-1)] = math.prod(x) // max(known, 1)
        if math.prod(new) != math.prod(x):
            raise AotcError(f"a constant new shape {new} that does not hold the resized input's "
                            f"{math.prod(x)} elements ({list(x)})", node=OpName(op))
        return [tuple(new)]
    if name == "CONCATENATION":
        axis = o.axis + len(x) if o.axis < 0 else o.axis
        parts = [m.tensors[i].shape for i in op.inputs]
        return [(*x[:axis], sum(p[axis] for p in parts), *x[axis + 1:])]
    if name in ("PAD", "PADV2", "MIRROR_PAD"):
        pads = _const(m, op, 1)
        return [tuple(d + pads[2 * k] + pads[2 * k + 1] for k, d in enumerate(x))]
    raise AotcError(f"{name} reads an input resized by --input-shape, and aotc does not work out its shapes "
                    "again (give the size the file was converted for)", node=OpName(op))
