"""TFLite's REDUCE_WINDOW and STABLEHLO_REDUCE_WINDOW (issue 50) onto ONNX Slice and elementwise ops.

LiteRT's kernel (stablehlo_reduce_window.cc) pads the input (STABLEHLO_REDUCE_WINDOW: with the init value), then
reduces each window, starting from the init value and taking the window's elements in row-major order. The same
is one strided Slice of the (padded) input per window offset, all of the output's shape, folded left from the
init value by the reduction's op: the same operations in the same order, so floats agree bit for bit. Windows of
more than MAX_WINDOW elements are refused (one node each), as are base dilations and a STABLEHLO body other than
one elementwise op of its two inputs.
"""

from __future__ import annotations

import itertools

import numpy as np

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.reader import TflOp

MAX_WINDOW = 64  # window elements: each a Slice and an op
# REDUCE_WINDOW's ReduceWindowFunction -> the ONNX op (MUL, MINIMUM, MAXIMUM, ALL, ANY, ADD)
_FUNCTIONS = {1: "Add", 2: "Mul", 3: "Min", 4: "Max", 5: "And", 6: "Or"}
# STABLEHLO_REDUCE_WINDOW bodies of one op of the two block arguments
_BODIES = {"ADD": "Add", "STABLEHLO_ADD": "Add", "MUL": "Mul", "STABLEHLO_MULTIPLY": "Mul", "MINIMUM": "Min",
           "STABLEHLO_MINIMUM": "Min", "MAXIMUM": "Max", "STABLEHLO_MAXIMUM": "Max", "LOGICAL_AND": "And",
           "LOGICAL_OR": "Or"}


def _reduce(b: OnnxBuilder, op: TflOp, x: str, shape: list[int], init: str, fn: str, dims: list[int],
            strides: list[int], dilations: list[int]) -> None:
    """The output of reducing `x` (of `shape`) over windows `dims` by `fn`, from `init`, into op.outputs[0]."""
    rank = len(shape)
    if not len(dims) == len(strides) == len(dilations) == rank:
        raise op_error(op, f"its window has {len(dims)}, {len(strides)} and {len(dilations)} dimensions for an input "
                       f"of rank {rank}")
    if min([*dims, *strides, *dilations], default=1) < 1:
        raise op_error(op, "its window dimensions, strides and dilations must be positive")
    count = int(np.prod(dims, dtype=np.int64))
    if count > MAX_WINDOW:
        raise op_error(op, f"a window of {count} elements is not supported (at most {MAX_WINDOW})")
    out = [(s - (d - 1) * r - 1) // t + 1 for s, d, t, r in zip(shape, dims, strides, dilations, strict=True)]
    if min(out, default=1) < 1:
        raise op_error(op, f"its window {dims} (dilated by {dilations}) is larger than the input {shape}")
    y = b.tensor(op.outputs[0])
    if list(y.shape) != out:
        raise op_error(op, f"its output is declared {list(y.shape)}; the window gives {out}")
    axes = b.const(np.arange(rank, dtype=np.int64), "axes")
    steps = b.const(np.array(strides, np.int64), "steps")
    acc = b.node("Expand", [init, b.const(np.array(out, np.int64), "shape")], hint=f"{op.name}_init")
    for k, offset in enumerate(itertools.product(*(range(d) for d in dims))):
        starts = [o * r for o, r in zip(offset, dilations, strict=True)]
        ends = [s + (n - 1) * t + 1 for s, n, t in zip(starts, out, strides, strict=True)]
        part = b.node("Slice", [x, b.const(np.array(starts, np.int64), "starts"),
                                b.const(np.array(ends, np.int64), "ends"), axes, steps], hint=f"{op.name}_w{k}")
        last = k == count - 1
        acc = b.node(fn, [acc, part], [b.names[op.outputs[0]]] if last else None, hint=f"{op.name}_{fn.lower()}{k}")
    b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}


def _ints(b: OnnxBuilder, op: TflOp, k: int, what: str) -> list[int]:
    t = b.tensor(op.inputs[k])
    if t.data is None:
        raise op_error(op, f"its {what} are computed at run time; aotc needs them constant")
    return [int(v) for v in np.asarray(t.data).reshape(-1)]


def _init(b: OnnxBuilder, op: TflOp) -> str:
    init = b.tensor(op.inputs[1])
    if init.quant is not None or b.tensor(op.inputs[0]).quant is not None:
        raise op_error(op, f"quantized {op.op} is not supported (LiteRT's kernel reduces the raw integers)")
    return b.node("Reshape", [b.value(op.inputs[1], NHWC), b.const(np.array([1], np.int64), "one")],
                  hint=f"{op.name}_init1")


def lower_reduce_window(b: OnnxBuilder, op: TflOp) -> None:
    """REDUCE_WINDOW(input, init, window_shape, window_strides, window_dilations): no padding, no base dilation."""
    fn = _FUNCTIONS.get(int(op.options.reduceFunction) if op.options is not None else 0)
    if fn is None:
        raise op_error(op, "its reduce_function is UNSUPPORTED (LiteRT's kernel refuses it)")
    x = b.tensor(op.inputs[0])
    _reduce(b, op, b.value(op.inputs[0], NHWC), list(x.shape), _init(b, op), fn, _ints(b, op, 2, "window dimensions"),
            _ints(b, op, 3, "window strides"), _ints(b, op, 4, "window dilations"))


def lower_stablehlo_reduce_window(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_REDUCE_WINDOW(input, init) with a body subgraph of one elementwise op: the input padded with the
    init value, then REDUCE_WINDOW's windows."""
    o = op.options
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise op_error(op, "STABLEHLO_REDUCE_WINDOW of several inputs is not supported")
    body = b.subgraphs[o.bodySubgraphIndex]
    if len(body.ops) != 1 or body.ops[0].op not in _BODIES or sorted(body.ops[0].inputs) != sorted(body.inputs) \
            or list(body.ops[0].outputs) != list(body.outputs) or len(set(body.inputs)) != 2:
        raise op_error(op, "its body is not one elementwise op of its two arguments (ADD, MUL, MINIMUM, MAXIMUM, AND, "
                       "OR), which aotc supports")
    x = b.tensor(op.inputs[0])
    rank = len(x.shape)
    base = [int(v) for v in (o.baseDilations if o.baseDilations is not None else [1] * rank)]
    if any(v != 1 for v in base):
        raise op_error(op, f"base dilations {base} are not supported")
    pads = [int(v) for v in (o.padding if o.padding is not None else [0] * 2 * rank)]
    if min(pads, default=0) < 0:
        raise op_error(op, f"negative padding {pads} is not supported")
    init = _init(b, op)
    value, shape = b.value(op.inputs[0], NHWC), list(x.shape)
    if any(pads):
        before, after = pads[0::2], pads[1::2]
        value = b.node("Pad", [value, b.const(np.array(before + after, np.int64), "pads"),
                               b.node("Reshape", [init, b.const(np.array([], np.int64), "scalar")],
                                      hint=f"{op.name}_pad_value")], hint=f"{op.name}_pad")
        shape = [s + p + q for s, p, q in zip(shape, before, after, strict=True)]
    ints = lambda v: [int(e) for e in (v if v is not None else [1] * rank)]  # noqa: E731
    _reduce(b, op, value, shape, init, _BODIES[body.ops[0].op], ints(o.windowDimensions), ints(o.windowStrides),
            ints(o.windowDilations))


OPS = {"REDUCE_WINDOW": lower_reduce_window, "STABLEHLO_REDUCE_WINDOW": lower_stablehlo_reduce_window}
