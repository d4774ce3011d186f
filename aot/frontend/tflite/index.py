"""TFLite's index builtins -> ONNX: one-hot, diagonals, scatters, segment reductions, top-k, sequence
reversal, dynamic update slices and bucketize (float and the unquantized integer types).

Where ONNX has the op with TFLite's semantics it is that op; where the two differ at the edges (a
negative one-hot index, out-of-range segment ids, clamped update starts) the lowering adds what makes
them agree, so the result is LiteRT's, not ONNX's.
"""

from __future__ import annotations

import numpy as np
import onnx

from aot.frontend.tflite.builder import (
    NHWC,
    OnnxBuilder,
    op_error,
)
from aot.frontend.tflite.lowering import (
    const_input,
    finish,
)
from aot.frontend.tflite.reader import TflOp

_I64 = onnx.TensorProto.INT64


def _int64(b: OnnxBuilder, name: str, dtype: str, hint: str) -> str:
    return name if dtype == "int64" else b.node("Cast", [name], hint=hint, to=_I64)


def _one_hot(b: OnnxBuilder, op: TflOp) -> None:
    """ONE_HOT(indices, depth, on, off): ONNX OneHot, except that a negative index is all `off` in
    TFLite (ONNX counts it from the end), so negative indices are replaced by `depth` first."""
    depth = int(const_input(b, op, 1, "depth").reshape(-1)[0])
    idx_t = b.tensor(op.inputs[0])
    idx = b.value(op.inputs[0], NHWC)
    zero = b.const(np.array(0, idx_t.dtype), "zero")
    idx = b.node("Where", [b.node("Less", [idx, zero], hint=f"{op.name}_negative"),
                           b.const(np.array(depth, idx_t.dtype), "depth"), idx], hint=f"{op.name}_indices")
    on, off = (b.node("Reshape", [b.value(op.inputs[k], NHWC), b.const(np.array([1], np.int64), "one")],
                      hint=f"{op.name}_{what}") for k, what in ((2, "on"), (3, "off")))
    values = b.node("Concat", [off, on], hint=f"{op.name}_values", axis=0)
    axis = op.options.axis if op.options is not None else -1
    finish(b, op, "OneHot", [idx, b.const(np.array([depth], np.int64), "depth"), values], NHWC, axis=axis)


def _eye(n: int, m: int) -> np.ndarray:
    return np.eye(n, m, dtype=bool)


def _matrix_diag(b: OnnxBuilder, op: TflOp) -> None:
    """MATRIX_DIAG: [..., N] -> [..., N, N], the input on the diagonal and zeros elsewhere (a Where,
    so a non-finite input leaves the zeros zero)."""
    x = b.tensor(op.inputs[0])
    n = x.shape[-1]
    col = b.node("Unsqueeze", [b.value(op.inputs[0], NHWC), b.const(np.array([-1], np.int64), "axis")],
                 hint=f"{op.name}_col")
    finish(b, op, "Where", [b.const(_eye(n, n), "eye"), col, b.const(np.array(0, x.dtype), "zero")], NHWC)


def _matrix_set_diag(b: OnnxBuilder, op: TflOp) -> None:
    """MATRIX_SET_DIAG(x [..., M, N], d [..., min(M, N)]): x with d on its main diagonal. Row i of a
    column made from d holds d[i] (rows past min(M, N) are never selected)."""
    x = b.tensor(op.inputs[0])
    m, n = x.shape[-2:]
    k = min(m, n)
    rows = b.const(np.minimum(np.arange(m), k - 1).astype(np.int64), "rows")
    d = b.node("Gather", [b.value(op.inputs[1], NHWC), rows], hint=f"{op.name}_rows", axis=-1)
    col = b.node("Unsqueeze", [d, b.const(np.array([-1], np.int64), "axis")], hint=f"{op.name}_col")
    finish(b, op, "Where", [b.const(_eye(m, n), "eye"), col, b.value(op.inputs[0], NHWC)], NHWC)


def _scatter_nd(b: OnnxBuilder, op: TflOp) -> None:
    """SCATTER_ND(indices, updates, shape): zeros of `shape` with the updates added at the indices (a
    repeated index sums, as TFLite's kernel does): ONNX ScatterND with reduction add."""
    shape = [int(v) for v in const_input(b, op, 2, "shape").reshape(-1)]
    y = b.tensor(op.outputs[0])
    idx = _int64(b, b.value(op.inputs[0], NHWC), b.tensor(op.inputs[0]).dtype, f"{op.name}_indices")
    zeros = b.const(np.zeros(shape, y.dtype), "zeros")
    finish(b, op, "ScatterND", [zeros, idx, b.value(op.inputs[1], NHWC)], NHWC, reduction="add")


# segment reductions: the ONNX reduction and the value a segment no id selects holds (TFLite's)
_SEGMENT = {"SEGMENT_SUM": ("ReduceSum", "zero"), "UNSORTED_SEGMENT_SUM": ("ReduceSum", "zero"),
            "UNSORTED_SEGMENT_PROD": ("ReduceProd", "one"), "UNSORTED_SEGMENT_MAX": ("ReduceMax", "lowest"),
            "UNSORTED_SEGMENT_MIN": ("ReduceMin", "highest")}


def _neutral(dtype: str, what: str) -> np.ndarray:
    if what in ("zero", "one"):
        return np.array(0 if what == "zero" else 1, dtype)
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    return np.array(info.min if what == "lowest" else info.max, dtype)


def _segment(b: OnnxBuilder, op: TflOp) -> None:
    """SEGMENT_SUM and UNSORTED_SEGMENT_SUM / PROD / MAX / MIN: output[s] reduces the data rows whose id
    is s. Written as a mask [S, ids..., 1...] of (ids == s), the data where the mask holds and the
    reduction's neutral value elsewhere, reduced over the id axes: ids out of [0, S) select nothing and
    an empty segment holds the neutral value (0, 1, the type's lowest or highest), as in TFLite."""
    x, ids_t, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    if op.op == "SEGMENT_SUM":  # the segments are max(ids) + 1 (the file's shape is a placeholder)
        if ids_t.data is None:
            raise op_error(op, "SEGMENT_SUM of segment ids computed at run time is not supported: its output size "
                           "depends on their values (UNSORTED_SEGMENT_SUM with num_segments is)")
        y.shape = (int(ids_t.data.max()) + 1, *x.shape[len(ids_t.shape):])
    segments, r = y.shape[0], len(ids_t.shape)
    reduce_op, neutral = _SEGMENT[op.op]
    seg = b.const(np.arange(segments, dtype=ids_t.dtype).reshape((segments,) + (1,) * r), "segments")
    mask = b.node("Equal", [b.value(op.inputs[1], NHWC), seg], hint=f"{op.name}_mask")  # [S, *ids]
    if len(x.shape) > r:
        mask = b.node("Reshape", [mask, b.const(np.array((segments, *ids_t.shape) + (1,) * (len(x.shape) - r),
                                                         np.int64), "shape")], hint=f"{op.name}_mask_rows")
    picked = b.node("Where", [mask, b.value(op.inputs[0], NHWC), b.const(_neutral(x.dtype, neutral), neutral)],
                    hint=f"{op.name}_picked")
    axes = list(range(1, r + 1))
    if reduce_op == "ReduceSum":
        finish(b, op, reduce_op, [picked, b.const(np.array(axes, np.int64), "axes")], NHWC, keepdims=0)
    else:
        finish(b, op, reduce_op, [picked], NHWC, axes=axes, keepdims=0)


def _top_k(b: OnnxBuilder, op: TflOp) -> None:
    """TOPK_V2(x, k): the k largest along the last axis, sorted, ties in index order (ONNX TopK's
    order too); TFLite's indices are int32."""
    k = int(const_input(b, op, 1, "k").reshape(-1)[0])
    values, indices = op.outputs
    idx64 = b.fresh(f"{op.name}_indices64")
    b.node("TopK", [b.value(op.inputs[0], NHWC), b.const(np.array([k], np.int64), "k")],
           [b.names[values], idx64], hint=op.name, axis=-1, largest=1, sorted=1)
    b.values[values] = {NHWC: b.names[values]}
    if b.tensor(indices).dtype == "int64":
        b.node("Identity", [idx64], [b.names[indices]], hint=f"{op.name}_indices")
    else:
        b.node("Cast", [idx64], [b.names[indices]], hint=f"{op.name}_indices", to=onnx.TensorProto.INT32)
    b.values[indices] = {NHWC: b.names[indices]}


def _reverse_sequence(b: OnnxBuilder, op: TflOp) -> None:
    """REVERSE_SEQUENCE: ONNX ReverseSequence, whose batch and time axes are 0 and 1 (others are moved
    there by a Transpose and back)."""
    x = b.tensor(op.inputs[0])
    rank = len(x.shape)
    seq, batch = op.options.seqDim % rank, op.options.batchDim % rank
    lens = _int64(b, b.value(op.inputs[1], NHWC), b.tensor(op.inputs[1]).dtype, f"{op.name}_lens")
    if {seq, batch} == {0, 1}:
        finish(b, op, "ReverseSequence", [b.value(op.inputs[0], NHWC), lens], NHWC, batch_axis=batch,
               time_axis=seq)
        return
    perm = [batch, seq, *(a for a in range(rank) if a not in (batch, seq))]
    t = b.node("Transpose", [b.value(op.inputs[0], NHWC)], hint=f"{op.name}_to_batch_time", perm=perm)
    r = b.node("ReverseSequence", [t, lens], hint=op.name, batch_axis=0, time_axis=1)
    finish(b, op, "Transpose", [r], NHWC, perm=[int(p) for p in np.argsort(perm)])


def _dynamic_update_slice(b: OnnxBuilder, op: TflOp) -> None:
    """DYNAMIC_UPDATE_SLICE(x, update, start): x with `update` written from `start`, which TFLite clamps
    to [0, dim - update dim] per axis. The indices are a constant grid of the update's coordinates plus
    the clamped start (computed at run time when the start is), written by ONNX ScatterND."""
    x, u = b.tensor(op.inputs[0]), b.tensor(op.inputs[1])
    rank = len(x.shape)
    if len(u.shape) != rank or any(ud > xd for xd, ud in zip(x.shape, u.shape, strict=True)):
        raise op_error(op, f"an update of shape {list(u.shape)} does not fit in an input of shape {list(x.shape)} "
                       "(TFLite requires the same rank, no dimension larger)")
    grid = np.stack(np.meshgrid(*(np.arange(d) for d in u.shape), indexing="ij"), axis=-1).astype(np.int64)
    start = _int64(b, b.value(op.inputs[2], NHWC), b.tensor(op.inputs[2]).dtype, f"{op.name}_start")
    hi = b.const(np.array([xd - ud for xd, ud in zip(x.shape, u.shape, strict=True)], np.int64), "start_max")
    start = b.node("Max", [b.node("Min", [start, hi], hint=f"{op.name}_clamp_hi"),
                           b.const(np.zeros(rank, np.int64), "start_min")], hint=f"{op.name}_clamp")
    idx = b.node("Add", [b.const(grid.reshape(*u.shape, rank), "grid"), start], hint=f"{op.name}_indices")
    finish(b, op, "ScatterND", [b.value(op.inputs[0], NHWC), idx, b.value(op.inputs[1], NHWC)], NHWC)


def _bucketize(b: OnnxBuilder, op: TflOp) -> None:
    """BUCKETIZE: the number of boundaries at or below each value (TFLite's upper_bound), as the sum
    over a trailing axis of (x >= boundary), summed in float (aotc's ReduceSum takes no int32)."""
    bounds = np.asarray(op.options.boundaries, np.float32)
    x_t = b.tensor(op.inputs[0])
    x = b.value(op.inputs[0], NHWC)
    col = b.node("Unsqueeze", [x, b.const(np.array([-1], np.int64), "axis")], hint=f"{op.name}_col")
    ge = b.node("GreaterOrEqual", [col, b.const(bounds.astype(x_t.dtype), "boundaries")], hint=f"{op.name}_ge")
    count = b.node("ReduceSum", [b.node("Cast", [ge], hint=f"{op.name}_ones", to=onnx.TensorProto.FLOAT),
                                 b.const(np.array([-1], np.int64), "axes")], hint=f"{op.name}_count", keepdims=0)
    finish(b, op, "Cast", [count], NHWC, to=onnx.TensorProto.INT32)  # (exact: a count below 2^24)


OPS = {
    "ONE_HOT": _one_hot, "MATRIX_DIAG": _matrix_diag, "MATRIX_SET_DIAG": _matrix_set_diag,
    "SCATTER_ND": _scatter_nd, **{k: _segment for k in _SEGMENT}, "TOPK_V2": _top_k,
    "REVERSE_SEQUENCE": _reverse_sequence, "DYNAMIC_UPDATE_SLICE": _dynamic_update_slice,
    "BUCKETIZE": _bucketize,
}
