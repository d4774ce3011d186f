"""TFLite's data-movement builtins -> ONNX: reshapes, concatenation and stacking, pads, slices, gathers,
tiles, transposes, resizes and the block rearrangements. Most also run on int8 / int16 tensors whose
quantization they keep (ops.py's QUANTIZED_MOVES)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import onnx

from aot.frontend.tflite.builder import (
    NCHW,
    NHWC,
    TO_NCHW,
    OnnxBuilder,
    op_error,
    value_info,
)
from aot.frontend.tflite.lowering import (
    const_input,
    finish,
    onnx_axis,
)
from aot.frontend.tflite.reader import TflOp


def _reshape(b: OnnxBuilder, op: TflOp) -> None:
    """RESHAPE / SQUEEZE / EXPAND_DIMS to the output's shape; a RESHAPE whose new shape is a constant
    the file's output shape disagrees with (a placeholder where the shape came into a WHILE or IF
    subgraph as an operand) takes the constant's, its -1 resolved."""
    y = b.tensor(op.outputs[0])
    if op.op == "RESHAPE" and len(op.inputs) > 1 and op.inputs[1] >= 0 and b.tensor(op.inputs[1]).data is not None:
        size = int(np.prod(b.tensor(op.inputs[0]).shape))
        want = [int(d) for d in b.tensor(op.inputs[1]).data.reshape(-1)]
        if want.count(-1) == 1 and size and int(np.prod([d for d in want if d != -1])):
            want[want.index(-1)] = size // int(np.prod([d for d in want if d != -1]))
        if -1 not in want and int(np.prod(want)) == size and tuple(want) != y.shape:
            b.m.tensors[op.outputs[0]] = y = replace(y, shape=tuple(want))
    shape = np.array(y.shape, np.int64)
    finish(b, op, "Reshape", [b.value(op.inputs[0], NHWC), b.const(shape, "shape")], NHWC)


def _concat(b: OnnxBuilder, op: TflOp) -> None:
    rank = len(b.tensor(op.outputs[0]).shape)
    if not -rank <= op.options.axis < rank:
        raise op_error(op, f"axis {op.options.axis} of a rank-{rank} output")
    live = [i for i in op.inputs if b.tensor(i).data is None]
    layout = NCHW if rank == 4 and live and all(b.prefers(i) == NCHW for i in live) else NHWC
    finish(b, op, "Concat", [b.value(i, layout) for i in op.inputs], layout, op.options.fusedActivationFunction,
            axis=onnx_axis(op.options.axis, rank, layout))


def _pack(b: OnnxBuilder, op: TflOp) -> None:
    """PACK: each input given a new axis (Unsqueeze), then concatenated along it."""
    rank = len(b.tensor(op.outputs[0]).shape)
    axis = int(op.options.axis) % rank
    axes = b.const(np.array([axis], np.int64), "axes")
    parts = [b.node("Unsqueeze", [b.value(i, NHWC), axes], hint=f"{op.name}_unsqueeze") for i in op.inputs]
    finish(b, op, "Concat", parts, NHWC, axis=axis)


def _unpack(b: OnnxBuilder, op: TflOp) -> None:
    """UNPACK: a Split into ones along the axis, each Squeezed."""
    rank = len(b.tensor(op.inputs[0]).shape)
    if not -rank <= int(op.options.axis) < rank:
        raise op_error(op, f"axis {int(op.options.axis)} does not fit a rank-{rank} input")
    axis = int(op.options.axis) % rank
    n = len(op.outputs)
    parts = [b.fresh(f"{op.name}_part{k}") for k in range(n)]
    b.node("Split", [b.value(op.inputs[0], NHWC), b.const(np.ones(n, np.int64), "split")], parts, hint=op.name,
           axis=axis)
    axes = b.const(np.array([axis], np.int64), "axes")
    for o, part in zip(op.outputs, parts, strict=True):
        b.node("Squeeze", [part, axes], [b.names[o]], hint=f"{op.name}_squeeze")
        b.values[o] = {NHWC: b.names[o]}


def _pad(b: OnnxBuilder, op: TflOp) -> None:
    pads = const_input(b, op, 1, "paddings").astype(np.int64).reshape(-1, 2)
    layout = b.prefers(op.inputs[0])
    if layout == NCHW:
        pads = pads[list(TO_NCHW)]
    inputs = [b.value(op.inputs[0], layout), b.const(np.concatenate([pads[:, 0], pads[:, 1]]), "pads")]
    x = b.tensor(op.inputs[0])
    if op.op == "PADV2" and len(op.inputs) > 2:
        inputs.append(b.value(op.inputs[2]))
    elif x.quant is not None and x.dtype != "float32":  # a quantized tensor pads with its zero point (real 0)
        inputs.append(b.const(np.array(x.quant.zero_point[0], x.dtype), "pad_value"))
    finish(b, op, "Pad", inputs, layout, mode="constant")


_REFLECT, _SYMMETRIC = 0, 1  # MirrorPadMode


def _mirror_pad(b: OnnxBuilder, op: TflOp) -> None:
    """REFLECT is ONNX Pad's reflect (the edge is not repeated). SYMMETRIC repeats the edge, which no
    ONNX Pad mode does: each padded axis is a Gather of the input along it with constant indices
    (p - 1 .. 0, 0 .. n - 1, n - 1 .. n - q), the mirror image including the edge."""
    x = b.tensor(op.inputs[0])
    if x.dtype != "float32" and x.quant is None:
        raise op_error(op, f"MIRROR_PAD of {x.dtype} tensors is not supported (float32 and quantized only)")
    pads = const_input(b, op, 1, "paddings").astype(np.int64)
    rank = len(x.shape)
    if pads.size != 2 * rank:
        raise op_error(op, f"its paddings hold {pads.size} values; a rank-{rank} input takes {2 * rank}")
    pads = pads.reshape(-1, 2)
    mode = int(op.options.mode) if op.options is not None else _REFLECT
    limit = 0 if mode == _SYMMETRIC else 1  # how far a pad may reach: the whole axis, or all but the edge
    for a, (before, after) in enumerate(pads):
        if before < 0 or after < 0 or max(before, after) > x.shape[a] - limit:
            raise op_error(op, f"MIRROR_PAD pads {[int(before), int(after)]} of an axis of {x.shape[a]}: "
                               f"TFLite allows 0 to {x.shape[a] - limit}")
    layout = b.prefers(op.inputs[0])
    if mode == _REFLECT:
        if layout == NCHW:
            pads = pads[list(TO_NCHW)]
        finish(b, op, "Pad", [b.value(op.inputs[0], layout),
                               b.const(np.concatenate([pads[:, 0], pads[:, 1]]), "pads")], layout, mode="reflect")
        return
    if mode != _SYMMETRIC:
        raise op_error(op, f"MIRROR_PAD mode {mode} is not supported")
    y = b.value(op.inputs[0], layout)
    axes = [a for a in range(rank) if pads[a].any()]
    for k, a in enumerate(axes):
        n, (before, after) = x.shape[a], pads[a]
        index = np.concatenate([np.arange(before)[::-1], np.arange(n), n - 1 - np.arange(after)]).astype(np.int64)
        inputs = [y, b.const(index, f"{op.name}_index{a}")]
        if k == len(axes) - 1:
            finish(b, op, "Gather", inputs, layout, axis=onnx_axis(a, rank, layout))
            return
        y = b.node("Gather", inputs, hint=f"{op.name}_axis{a}", axis=onnx_axis(a, rank, layout))
    finish(b, op, "Identity", [y], layout)


def _strided_slice(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    if o.ellipsisMask or o.newAxisMask:
        raise op_error(op, "STRIDED_SLICE with an ellipsis or new-axis mask is not supported")
    if getattr(o, "offset", False):
        raise op_error(op, "STRIDED_SLICE with offset=true is not supported")
    shape = b.tensor(op.inputs[0]).shape
    begin, end = const_input(b, op, 1, "begins"), const_input(b, op, 2, "ends")
    strides = const_input(b, op, 3, "strides")
    if not begin.size == end.size == strides.size == len(shape):
        raise op_error(op, f"begins, ends and strides of {begin.size}, {end.size} and {strides.size} values for a "
                       f"rank-{len(shape)} input")
    begin, end, strides = begin.reshape(-1), end.reshape(-1), strides.reshape(-1)
    if np.any(strides == 0):
        raise op_error(op, f"strides {strides.tolist()} hold a 0")
    starts, ends, steps = [], [], []
    for a, dim in enumerate(shape):
        s = int(strides[a])
        lo = None if o.beginMask >> a & 1 else int(begin[a])
        hi = None if o.endMask >> a & 1 else int(end[a])
        if o.shrinkAxisMask >> a & 1:
            lo = int(begin[a]) % dim
            hi, s = lo + 1, 1
        start, stop, step = slice(lo, hi, s).indices(dim)
        starts.append(start)
        ends.append(stop if stop >= 0 else -dim - 1)
        steps.append(step)
    # a 4-D slice that keeps its rank is done in NCHW when its input is there already (no transpose)
    layout = b.prefers(op.inputs[0]) if not o.shrinkAxisMask else NHWC
    if layout == NCHW:
        starts, ends, steps = ([v[a] for a in TO_NCHW] for v in (starts, ends, steps))
    x = b.value(op.inputs[0], layout)
    const = lambda v, n: b.const(np.array(v, np.int64), n)  # noqa: E731
    y_shape = b.tensor(op.outputs[0]).shape
    args = [x, const(starts, "starts"), const(ends, "ends"), const(list(range(len(shape))), "axes"),
            const(steps, "steps")]
    if o.shrinkAxisMask:
        y = b.node("Slice", args, hint=op.name)
        finish(b, op, "Reshape", [y, const(list(y_shape), "shape")], NHWC)
    else:
        finish(b, op, "Slice", args, layout)


def _tile(b: OnnxBuilder, op: TflOp) -> None:
    reps = const_input(b, op, 1, "multiples").astype(np.int64).reshape(-1)
    finish(b, op, "Tile", [b.value(op.inputs[0], NHWC), b.const(reps, "repeats")], NHWC)


def _transpose(b: OnnxBuilder, op: TflOp) -> None:
    perm = [int(v) for v in const_input(b, op, 1, "permutation").reshape(-1)]
    finish(b, op, "Transpose", [b.value(op.inputs[0], NHWC)], NHWC, perm=perm)


def _resize(b: OnnxBuilder, op: TflOp) -> None:
    """RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR of NHWC, as ONNX Resize along H and W (TFLite's
    align_corners and half_pixel_centers are ONNX coordinate modes)."""
    o = op.options
    y = b.tensor(op.outputs[0])
    align, half = bool(getattr(o, "alignCorners", False)), bool(getattr(o, "halfPixelCenters", False))
    nearest = op.op == "RESIZE_NEAREST_NEIGHBOR"
    if align:
        ctm = "align_corners"
    elif half:
        ctm = "tf_half_pixel_for_nn" if nearest else "half_pixel"
    else:
        ctm = "asymmetric"
    attrs: dict[str, Any] = {"mode": "nearest" if nearest else "linear", "coordinate_transformation_mode": ctm}
    if nearest:
        attrs["nearest_mode"] = "round_prefer_ceil" if align else "floor"
    sizes = b.const(np.array(y.shape, np.int64), "sizes")
    finish(b, op, "Resize", [b.value(op.inputs[0], NHWC), "", "", sizes], NHWC, **attrs)
    # its shape is the file's: after an int8 op ONNX's inference stops, and onnx's reference evaluator
    # (aotc's fallback) has no tf_half_pixel_for_nn
    b.value_infos.append(value_info(y, b.nodes[-1].output[0]))


def _slice(b: OnnxBuilder, op: TflOp) -> None:
    shape = b.tensor(op.inputs[0]).shape
    begin = const_input(b, op, 1, "begins").astype(np.int64).reshape(-1)
    size = const_input(b, op, 2, "sizes").astype(np.int64).reshape(-1)
    if not begin.size == size.size == len(shape):
        raise op_error(op, f"begins and sizes of {begin.size} and {size.size} values for a rank-{len(shape)} input")
    end = np.where(size < 0, np.array(shape, np.int64), begin + size)
    if np.any(begin < 0) or np.any(end > np.array(shape, np.int64)) or np.any(end < begin):
        raise op_error(op, f"begins {begin.tolist()} and sizes {size.tolist()} reach outside an input of {list(shape)}")
    y = b.tensor(op.outputs[0])
    if list(y.shape) != (end - begin).tolist():
        raise op_error(op, f"its output '{y.name}' is declared {list(y.shape)}; the slice is {(end - begin).tolist()}")
    const = lambda v, n: b.const(np.asarray(v, np.int64), n)  # noqa: E731
    finish(b, op, "Slice", [b.value(op.inputs[0], NHWC), const(begin, "starts"), const(end, "ends"),
                             const(list(range(len(shape))), "axes")], NHWC)


def _gather(b: OnnxBuilder, op: TflOp) -> None:
    o = op.options
    if o is not None and getattr(o, "batchDims", 0):
        raise op_error(op, "GATHER with batch_dims is not supported")
    rank = len(b.tensor(op.inputs[0]).shape)
    axis = int(o.axis) % rank if o is not None else 0
    finish(b, op, "Gather", [b.value(op.inputs[0], NHWC), b.value(op.inputs[1], NHWC)], NHWC, axis=axis)


def _gather_nd(b: OnnxBuilder, op: TflOp) -> None:
    """GATHER_ND is ONNX GatherND (batch_dims 0) with int64 indices."""
    idx = b.tensor(op.inputs[1])
    if idx.data is not None:
        indices = b.const(idx.data.astype(np.int64), f"{b.names[op.inputs[1]]}_i64")
    else:
        indices = b.node("Cast", [b.value(op.inputs[1], NHWC)], hint=f"{op.name}_i64", to=onnx.TensorProto.INT64)
    finish(b, op, "GatherND", [b.value(op.inputs[0], NHWC), indices], NHWC)


def _space_depth(b: OnnxBuilder, op: TflOp) -> None:
    """SPACE_TO_DEPTH / DEPTH_TO_SPACE of NHWC: ONNX's NCHW ops on the NCHW value order the channels as
    TFLite does (block row, block column, then channel: DepthToSpace's DCR mode). On quantized integers
    (which stay NHWC, as int8.py's ops compute) one Transpose between two Reshapes in NHWC."""
    x = b.tensor(op.inputs[0])
    if x.dtype != "float32":
        _space_depth_nhwc(b, op)
        return
    onnx_op = "SpaceToDepth" if op.op == "SPACE_TO_DEPTH" else "DepthToSpace"
    attrs: dict[str, Any] = {"blocksize": int(op.options.blockSize)}
    if onnx_op == "DepthToSpace":
        attrs["mode"] = "DCR"
    finish(b, op, onnx_op, [b.value(op.inputs[0], NCHW)], NCHW, **attrs)


def _space_depth_nhwc(b: OnnxBuilder, op: TflOp) -> None:
    """[N, H, W, C] seen as [N, H/b, b, W/b, b, C] (SPACE_TO_DEPTH) or [N, H, W, b, b, C/b^2]
    (DEPTH_TO_SPACE), the block axes moved beside the channels or beside H and W."""
    n, h, w, c = b.tensor(op.inputs[0]).shape
    k = int(op.options.blockSize)
    if op.op == "SPACE_TO_DEPTH":
        split, perm = [n, h // k, k, w // k, k, c], [0, 1, 3, 2, 4, 5]
    else:
        split, perm = [n, h, w, k, k, c // (k * k)], [0, 1, 3, 2, 4, 5]
    v = b.node("Reshape", [b.value(op.inputs[0], NHWC), b.const(np.array(split, np.int64), "shape")],
               hint=f"{op.name}_blocks")
    v = b.node("Transpose", [v], hint=f"{op.name}_move", perm=perm)
    finish(b, op, "Reshape", [v, b.const(np.array(b.tensor(op.outputs[0]).shape, np.int64), "shape")], NHWC)


def _broadcast_to(b: OnnxBuilder, op: TflOp) -> None:
    shape = np.array(b.tensor(op.outputs[0]).shape, np.int64)
    finish(b, op, "Expand", [b.value(op.inputs[0], NHWC), b.const(shape, "shape")], NHWC)


def _constant_output(b: OnnxBuilder, op: TflOp, value: np.ndarray) -> None:
    """An output known at compile time (shapes are static): a constant of the file's type and shape."""
    y = b.tensor(op.outputs[0])
    value = np.asarray(value)
    if value.size != int(np.prod(y.shape, dtype=np.int64)):
        raise op_error(op, f"it computes {list(value.shape)}; its output '{y.name}' is declared {list(y.shape)}")
    data = value.astype(y.dtype).reshape(y.shape)
    b.values[op.outputs[0]] = {NHWC: b.const(data, b.names[op.outputs[0]])}


def _zeros_like(b: OnnxBuilder, op: TflOp) -> None:
    _constant_output(b, op, np.zeros(b.tensor(op.outputs[0]).shape))


def _shape(b: OnnxBuilder, op: TflOp) -> None:
    _constant_output(b, op, np.array(b.tensor(op.inputs[0]).shape))


def _fill(b: OnnxBuilder, op: TflOp) -> None:
    """FILL(dims, value): the value broadcast to the output's (static) shape."""
    y, value = b.tensor(op.outputs[0]), b.tensor(op.inputs[1])
    if value.shape and int(np.prod(value.shape)) != 1:
        raise op_error(op, f"its value '{value.name}' is {list(value.shape)}, not a scalar")
    if value.data is not None:
        _constant_output(b, op, np.full(y.shape, value.data.reshape(())))
        return
    finish(b, op, "Expand", [b.value(op.inputs[1], NHWC), b.const(np.array(y.shape, np.int64), "shape")], NHWC)


def _broadcast_args(b: OnnxBuilder, op: TflOp) -> None:
    """BROADCAST_ARGS(s0, s1): the shape both broadcast to. Of valid shapes that is, after padding the
    shorter with leading ones, the larger of each pair of dims (one of them is 1 or both are equal)."""
    s0, s1 = (b.tensor(i) for i in op.inputs[:2])
    if s0.data is not None and s1.data is not None:
        a0, a1 = (const_input(b, op, k, "shapes").reshape(-1) for k in (0, 1))
        try:
            shape = np.broadcast_shapes(tuple(int(d) for d in a0), tuple(int(d) for d in a1))
        except ValueError:
            raise op_error(op, f"shapes {a0.tolist()} and {a1.tolist()} do not broadcast") from None
        _constant_output(b, op, np.array(shape))
        return
    n = max(s0.shape[0], s1.shape[0])
    padded = []
    for i, s in zip(op.inputs[:2], (s0, s1), strict=True):
        v = b.value(i, NHWC)
        if s.shape[0] < n:
            v = b.node("Concat", [b.const(np.ones(n - s.shape[0], s.dtype), "ones"), v], hint=f"{op.name}_pad", axis=0)
        padded.append(v)
    finish(b, op, "Max", padded, NHWC)


def _reverse(b: OnnxBuilder, op: TflOp) -> None:
    """REVERSE_V2 along constant axes: a Slice with step -1 on each."""
    shape = b.tensor(op.inputs[0]).shape
    given = const_input(b, op, 1, "axes").reshape(-1)
    if not all(-len(shape) <= int(a) < len(shape) for a in given):
        raise op_error(op, f"axes {given.tolist()} do not fit a rank-{len(shape)} input")
    axes = sorted({int(a) % len(shape) for a in given})
    const = lambda v, n: b.const(np.array(v, np.int64), n)  # noqa: E731
    finish(b, op, "Slice", [b.value(op.inputs[0], NHWC), const([shape[a] - 1 for a in axes], "starts"),
                            const([-shape[a] - 1 for a in axes], "ends"), const(axes, "axes"),
                            const([-1] * len(axes), "steps")], NHWC)


def _embedding_lookup(b: OnnxBuilder, op: TflOp) -> None:
    """EMBEDDING_LOOKUP(ids, params): the rows of params, a Gather along axis 0. The hybrid form (int8 rows with
    one scale or a scale per row, zero point 0; float output) as LiteRT's EvalHybrid: each gathered int8 value
    times its row's scale in float, the table kept int8."""
    params, y = b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    if params.dtype == y.dtype:
        finish(b, op, "Gather", [b.value(op.inputs[1], NHWC), b.value(op.inputs[0], NHWC)], NHWC, axis=0)
        return
    q = params.quant
    if params.dtype != "int8" or y.dtype != "float32" or q is None or np.any(q.zero_point != 0) or (
            q.per_channel and (q.axis != 0 or q.scale.size != params.shape[0])):
        raise op_error(op, f"EMBEDDING_LOOKUP of {params.dtype} rows into {y.dtype} is not supported (the hybrid form: "
                       "int8 rows, zero point 0, one scale or one a row, float32 out)")
    ids = b.value(op.inputs[0], NHWC)
    table = const_input(b, op, 1, "rows of the int8 table")
    rows = b.node("Cast", [b.node("Gather", [b.const(table, f"{op.name}_table"), ids], hint=f"{op.name}_rows",
                                  axis=0)], hint=f"{op.name}_float", to=1)
    scale = q.scale.astype(np.float32)
    if q.per_channel:  # each gathered row's scale, broadcast along the row
        scale = b.node("Gather", [b.const(scale.reshape((-1,) + (1,) * (len(params.shape) - 1)), f"{op.name}_scales"),
                                  ids], hint=f"{op.name}_row_scales", axis=0)
    else:
        scale = b.const(np.float32(scale[0]), f"{op.name}_scale")
    finish(b, op, "Mul", [rows, scale], NHWC)


def _space_to_batch(b: OnnxBuilder, op: TflOp) -> None:
    """SPACE_TO_BATCH_ND(x [N, S1..SM, rest], block, paddings): the spatial dims padded (with the zero
    point on a quantized tensor), each split into (S / b, b), the block offsets moved in front of N."""
    x = b.tensor(op.inputs[0])
    block = const_input(b, op, 1, "block shape").astype(np.int64).reshape(-1)
    pads = const_input(b, op, 2, "paddings").astype(np.int64).reshape(-1, 2)
    m, rank = len(block), len(x.shape)
    full = np.zeros((rank, 2), np.int64)
    full[1:1 + m] = pads
    inputs = [b.value(op.inputs[0], NHWC), b.const(np.concatenate([full[:, 0], full[:, 1]]), "pads")]
    if x.quant is not None and x.dtype != "float32":
        inputs.append(b.const(np.array(x.quant.zero_point[0], x.dtype), "pad_value"))
    v = b.node("Pad", inputs, hint=f"{op.name}_pad", mode="constant")
    spatial = [x.shape[1 + k] + pads[k].sum() for k in range(m)]
    split = [x.shape[0], *(d for k in range(m) for d in (spatial[k] // block[k], block[k])), *x.shape[1 + m:]]
    v = b.node("Reshape", [v, b.const(np.array(split, np.int64), "shape")], hint=f"{op.name}_split")
    perm = [*(2 + 2 * k for k in range(m)), 0, *(1 + 2 * k for k in range(m)), *range(1 + 2 * m, len(split))]
    v = b.node("Transpose", [v], hint=f"{op.name}_blocks_first", perm=perm)
    finish(b, op, "Reshape", [v, b.const(np.array(b.tensor(op.outputs[0]).shape, np.int64), "shape")], NHWC)


def _batch_to_space(b: OnnxBuilder, op: TflOp) -> None:
    """BATCH_TO_SPACE_ND(x [B, S1..SM, rest], block, crops): SPACE_TO_BATCH_ND's inverse: the batch split
    into (b1..bM, N), each block offset moved beside its spatial dim, merged, then the crops sliced off."""
    x = b.tensor(op.inputs[0])
    block = const_input(b, op, 1, "block shape").astype(np.int64).reshape(-1)
    crops = const_input(b, op, 2, "crops").astype(np.int64).reshape(-1, 2)
    m = len(block)
    n = x.shape[0] // int(np.prod(block))
    split = [*block, n, *x.shape[1:]]
    v = b.node("Reshape", [b.value(op.inputs[0], NHWC), b.const(np.array(split, np.int64), "shape")],
               hint=f"{op.name}_split")
    perm = [m, *(d for k in range(m) for d in (m + 1 + k, k)), *range(2 * m + 1, len(split))]
    v = b.node("Transpose", [v], hint=f"{op.name}_blocks_inside", perm=perm)
    merged = [n, *(x.shape[1 + k] * block[k] for k in range(m)), *x.shape[1 + m:]]
    v = b.node("Reshape", [v, b.const(np.array(merged, np.int64), "shape")], hint=f"{op.name}_merge")
    const = lambda a, name: b.const(np.array(a, np.int64), name)  # noqa: E731
    finish(b, op, "Slice", [v, const(crops[:, 0], "starts"), const([merged[1 + k] - crops[k, 1] for k in range(m)],
                                                                     "ends"),
                            const(list(range(1, 1 + m)), "axes")], NHWC)


def _split(b: OnnxBuilder, op: TflOp) -> None:
    """SPLIT (axis, x) and SPLIT_V (x, sizes, axis): the sizes are the outputs' own."""
    k_x, k_axis = (1, 0) if op.op == "SPLIT" else (0, 2)
    x = b.tensor(op.inputs[k_x])
    axis = int(const_input(b, op, k_axis, "axis").reshape(-1)[0]) % max(len(x.shape), 1)
    if any(len(b.tensor(o).shape) != len(x.shape) for o in op.outputs):
        raise op_error(op, f"its outputs are not all of its input's rank ({len(x.shape)})")
    sizes = [b.tensor(o).shape[axis] for o in op.outputs]
    outs = [b.names[o] for o in op.outputs]
    b.node("Split", [b.value(op.inputs[k_x], NHWC), b.const(np.array(sizes, np.int64), "split")], outs,
           hint=op.name, axis=axis)
    for o, name in zip(op.outputs, outs, strict=True):
        b.values[o] = {NHWC: name}


OPS = {
    "RESHAPE": _reshape, "SQUEEZE": _reshape, "EXPAND_DIMS": _reshape, "CONCATENATION": _concat, "PACK": _pack,
    "UNPACK": _unpack, "PAD": _pad, "PADV2": _pad, "MIRROR_PAD": _mirror_pad, "STRIDED_SLICE": _strided_slice,
    "TILE": _tile, "TRANSPOSE": _transpose, "RESIZE_NEAREST_NEIGHBOR": _resize, "RESIZE_BILINEAR": _resize,
    "SLICE": _slice, "GATHER": _gather, "GATHER_ND": _gather_nd, "SPACE_TO_DEPTH": _space_depth,
    "DEPTH_TO_SPACE": _space_depth, "BROADCAST_TO": _broadcast_to, "SPLIT": _split, "SPLIT_V": _split,
    "ZEROS_LIKE": _zeros_like, "SHAPE": _shape, "FILL": _fill, "BROADCAST_ARGS": _broadcast_args,
    "REVERSE_V2": _reverse, "EMBEDDING_LOOKUP": _embedding_lookup, "SPACE_TO_BATCH_ND": _space_to_batch,
    "BATCH_TO_SPACE_ND": _batch_to_space,
}
