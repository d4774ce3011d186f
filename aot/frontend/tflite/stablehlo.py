"""STABLEHLO_GATHER and STABLEHLO_SCATTER (issue 50) onto ONNX Gather and ScatterND of the operand flattened.

Both compute, for every element of the result (gather) or of the updates (scatter), the operand position it
reads or writes, one operand dimension d at a time: the start index the index vector gives d (start_index_map /
scatter_dims_to_operand_dims), broadcast over the batch positions, plus an iota over the window (offset) dimension
mapped to d. Their sum times d's stride is a flat index; the data moves through it. With constant indices all of
that folds at compile time. What LiteRT's kernels (stablehlo_gather.cc, stablehlo_scatter.cc) do and the
StableHLO spec leaves open is followed: gather clips each start index into [0, dim - slice size]; scatter skips an
update whose position falls outside the operand (each element by itself: a window may land in part), applying the
others in order (the last of equal positions wins under a plain update). TFLite's schema has no batching
dimensions (operand_batching_dims), so neither has aotc's lowering.
"""

from __future__ import annotations

import numpy as np

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.reader import TflOp

I64 = 7  # TensorProto.INT64
# scatter's update computation: the one op of its region (none: replace), as LiteRT's kernel recognises it
_COMPUTATIONS = {None: "none", "STABLEHLO_ADD": "add", "STABLEHLO_MULTIPLY": "mul", "STABLEHLO_MAXIMUM": "max",
                 "STABLEHLO_MINIMUM": "min"}
# the operand types a computation combines (ScatterND's reductions; integers wrap as LiteRT's do)
_COMBINED = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _ints(v) -> list[int]:
    return [int(e) for e in (v if v is not None else [])]


def _start_vectors(b: OnnxBuilder, op: TflOp, idx: int, index_vector_dim: int,
                   hint: str) -> tuple[list[str], list[int]]:
    """The index tensor's index vectors, one int64 tensor per component over the batch dimensions (the index
    tensor's other dimensions, in order), and those dimensions."""
    t = b.tensor(op.inputs[idx])
    if t.dtype not in ("int32", "int64"):
        raise op_error(op, f"{op.op} indices of {t.dtype} are not supported (int32, int64: LiteRT's kernel)")
    shape = list(t.shape)
    if not 0 <= index_vector_dim <= len(shape):
        raise op_error(op, f"{op.op} index_vector_dim {index_vector_dim} is out of range for indices {shape}")
    value = b.const(t.data, b.names[op.inputs[idx]]) if t.data is not None else b.value(op.inputs[idx], NHWC)
    value = b.node("Cast", [value], hint=f"{hint}_idx64", to=I64)
    if index_vector_dim == len(shape):
        return [value], shape
    batch = shape[:index_vector_dim] + shape[index_vector_dim + 1:]
    comps = []
    for k in range(shape[index_vector_dim]):
        s = b.node("Slice", [value, b.const(np.array([k], np.int64), "start"), b.const(np.array([k + 1], np.int64),
                   "end"), b.const(np.array([index_vector_dim], np.int64), "axis")], hint=f"{hint}_comp{k}")
        comps.append(b.node("Reshape", [s, b.const(np.array(batch or [1], np.int64), "shape")], hint=f"{hint}_vec{k}"))
    return comps, batch


def _placed(b: OnnxBuilder, x: str, rank: int, dims: list[int], sizes: list[int], hint: str) -> str:
    """`x` (of shape `sizes`) reshaped to rank `rank`, its axes at `dims`, 1 elsewhere, to broadcast."""
    shape = [1] * rank
    for d, n in zip(dims, sizes, strict=True):
        shape[d] = n
    return b.node("Reshape", [x, b.const(np.array(shape, np.int64), "shape")], hint=hint)


def _placed_shape(rank: int, dims: list[int], sizes: list[int]) -> tuple[int, ...]:
    shape = [1] * rank
    for d, n in zip(dims, sizes, strict=True):
        shape[d] = n
    return tuple(shape)


def _add(b: OnnxBuilder, acc: tuple[str, tuple[int, ...]] | None, term: tuple[str, tuple[int, ...]],
         hint: str) -> tuple[str, tuple[int, ...]]:
    """acc + term with its broadcast shape (term alone when acc is None)."""
    if acc is None:
        return term
    return b.node("Add", [acc[0], term[0]], hint=hint), tuple(np.broadcast_shapes(acc[1], term[1]))


def _iota(rank: int, axis: int, n: int) -> np.ndarray:
    shape = [1] * rank
    shape[axis] = n
    return np.arange(n, dtype=np.int64).reshape(shape)


def _flat(b: OnnxBuilder, terms: list[tuple[str, tuple[int, ...]] | None], strides: list[int], out_shape: list[int],
          hint: str) -> str:
    """sum(terms[d] * strides[d]) (each term a name and its static shape), broadcast to out_shape by an Expand only
    where the terms do not already cover it (no constant of the output's size)."""
    acc, shape = None, ()
    for d, t in enumerate(terms):
        if t is None or not strides[d]:
            continue
        scaled = b.node("Mul", [t[0], b.const(np.int64(strides[d]), "stride")], hint=f"{hint}_s{d}")
        acc = scaled if acc is None else b.node("Add", [acc, scaled], hint=f"{hint}_sum{d}")
        shape = np.broadcast_shapes(shape, t[1])
    if acc is None:
        return b.const(np.zeros(out_shape, np.int64), "zeros")  # every position 0: a constant Gather folds
    if list(shape) != list(out_shape):
        acc = b.node("Expand", [acc, b.const(np.array(out_shape, np.int64), "shape")], hint=f"{hint}_full")
    return acc


def _strides(shape: list[int]) -> list[int]:
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= n
    return out[::-1]


def lower_gather(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_GATHER(operand, start_indices): result[batch, offset] = operand[clip(start) + offset]."""
    o = op.options
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    shape, out_shape = list(x.shape), list(y.shape)
    rank, out_rank = len(shape), len(out_shape)
    offset_dims, collapsed = _ints(o.offsetDims), _ints(o.collapsedSliceDims)
    start_map, sizes = _ints(o.startIndexMap), _ints(o.sliceSizes)
    if len(sizes) != rank or any(not 0 <= s <= n for s, n in zip(sizes, shape, strict=True)) or \
            any(sizes[d] != 1 for d in collapsed) or any(not 0 <= d < rank for d in start_map + collapsed):
        raise op_error(op, f"STABLEHLO_GATHER slice sizes {sizes} / collapsed dims {collapsed} / start_index_map "
                       f"{start_map} do not fit the operand {shape}")
    comps, batch = _start_vectors(b, op, 1, int(o.indexVectorDim), op.name)
    if len(comps) != len(start_map):
        raise op_error(op, f"STABLEHLO_GATHER index vectors of {len(comps)} for start_index_map {start_map}")
    kept = [d for d in range(rank) if d not in collapsed]
    batch_dims = [d for d in range(out_rank) if d not in offset_dims]
    want = [0] * out_rank
    for d, n in zip(batch_dims, batch, strict=True):
        want[d] = n
    for d, k in zip(offset_dims, kept, strict=True):
        want[d] = sizes[k]
    if len(offset_dims) != len(kept) or len(batch_dims) != len(batch) or want != out_shape:
        raise op_error(op, f"STABLEHLO_GATHER gives {want} where the file declares {out_shape}")
    terms: list[tuple[str, tuple[int, ...]] | None] = [None] * rank
    for k, d in enumerate(start_map):
        lo, hi = b.const(np.int64(0), "zero"), b.const(np.int64(shape[d] - sizes[d]), "hi")
        s = b.node("Min", [b.node("Max", [comps[k], lo], hint=f"{op.name}_lo{d}"), hi], hint=f"{op.name}_clip{d}")
        term = (_placed(b, s, out_rank, batch_dims, batch, f"{op.name}_start{d}"), _placed_shape(out_rank, batch_dims,
                                                                                                  batch)) \
            if batch else (s, (1,))
        terms[d] = _add(b, terms[d], term, f"{op.name}_dup{d}")
    for od, d in zip(offset_dims, kept, strict=True):
        if sizes[d] > 1:
            iota = _iota(out_rank, od, sizes[d])
            terms[d] = _add(b, terms[d], (b.const(iota, "iota"), iota.shape), f"{op.name}_at{d}")
    flat = _flat(b, terms, _strides(shape), out_shape, op.name)
    data = b.node("Reshape", [b.value(op.inputs[0], NHWC), b.const(np.array([-1], np.int64), "flat")],
                  hint=f"{op.name}_operand")
    b.node("Gather", [data, flat], [b.names[op.outputs[0]]], hint=op.name, axis=0)
    b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}


def _computation(b: OnnxBuilder, op: TflOp) -> str:
    index = int(op.options.updateComputationSubgraphIndex)
    if not 0 < index < len(b.subgraphs):
        raise op_error(op, f"STABLEHLO_SCATTER's update computation subgraph {index} is not in the file")
    body = b.subgraphs[index]
    if len(body.ops) > 1 or (body.ops and body.ops[0].op not in _COMPUTATIONS):
        raise op_error(op, "its update computation is not one STABLEHLO_ADD, _MULTIPLY, _MAXIMUM or _MINIMUM or none "
                       "(LiteRT's kernel takes those alone)")
    return _COMPUTATIONS[body.ops[0].op if body.ops else None]


def lower_scatter(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_SCATTER(operand, scatter_indices, updates): operand[start + window] (op)= update, each update in
    order; one out of the operand is skipped (ScatterND into one extra element, then sliced off)."""
    o = op.options
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise op_error(op, "STABLEHLO_SCATTER of several operands is not supported (LiteRT's kernel takes one)")
    x, u = b.tensor(op.inputs[0]), b.tensor(op.inputs[2])
    reduction = _computation(b, op)
    if reduction != "none" and x.dtype not in _COMBINED:
        raise op_error(op, f"STABLEHLO_SCATTER with a {reduction} computation on {x.dtype} is not supported (it "
                       "combines float16, float32, float64 and 8- to 64-bit integers; a plain update takes every type)")
    if reduction != "none" and x.quant is not None:
        raise op_error(op, f"STABLEHLO_SCATTER with a {reduction} computation on a quantized operand is not supported "
                       "(a plain update takes it)")
    if u.dtype != x.dtype or x.quant is not None and (u.quant is None or list(u.quant.scale) != list(x.quant.scale)
                                                       or list(u.quant.zero_point) != list(x.quant.zero_point)):
        raise op_error(op, "STABLEHLO_SCATTER updates typed or quantized unlike the operand are not supported")
    shape, ushape = list(x.shape), list(u.shape)
    rank, urank = len(shape), len(ushape)
    window, inserted, to_operand = _ints(o.updateWindowDims), _ints(o.insertedWindowDims), \
        _ints(o.scatterDimsToOperandDims)
    comps, batch = _start_vectors(b, op, 1, int(o.indexVectorDim), op.name)
    scatter_dims = [d for d in range(urank) if d not in window]
    kept = [d for d in range(rank) if d not in inserted]
    if len(comps) != len(to_operand) or any(not 0 <= d < rank for d in to_operand + inserted) or \
            len(window) != len(kept) or [ushape[d] for d in scatter_dims] != batch or \
            any(ushape[w] > shape[d] for w, d in zip(window, kept, strict=True)):
        raise op_error(op, f"STABLEHLO_SCATTER's dimension numbers (window {window}, inserted {inserted}, to operand "
                       f"{to_operand}) do not fit operand {shape}, updates {ushape}")
    terms: list[tuple[str, tuple[int, ...]] | None] = [None] * rank
    for k, d in enumerate(to_operand):
        term = (_placed(b, comps[k], urank, scatter_dims, batch, f"{op.name}_start{d}"),
                _placed_shape(urank, scatter_dims, batch)) if batch else (comps[k], (1,))
        terms[d] = _add(b, terms[d], term, f"{op.name}_dup{d}")
    for w, d in zip(window, kept, strict=True):
        iota = _iota(urank, w, ushape[w])
        terms[d] = _add(b, terms[d], (b.const(iota, "iota"), iota.shape), f"{op.name}_at{d}")
    n = int(np.prod(shape, dtype=np.int64))
    flat = _flat(b, terms, _strides(shape), ushape, op.name)
    inside = None
    for d, term in enumerate(terms):
        if term is None:
            continue
        t = term[0]
        ok = b.node("And", [b.node("GreaterOrEqual", [t, b.const(np.int64(0), "zero")], hint=f"{op.name}_ge{d}"),
                            b.node("Less", [t, b.const(np.int64(shape[d]), "dim")], hint=f"{op.name}_lt{d}")],
                    hint=f"{op.name}_in{d}")
        inside = ok if inside is None else b.node("And", [inside, ok], hint=f"{op.name}_inside{d}")
    if inside is not None:
        flat = b.node("Where", [inside, flat, b.const(np.int64(n), "spare")], hint=f"{op.name}_target")
    flat = b.node("Reshape", [flat, b.const(np.array([-1, 1], np.int64), "column")], hint=f"{op.name}_rows")
    zero = np.zeros([1], np.dtype(x.dtype))
    data = b.node("Concat", [b.node("Reshape", [b.value(op.inputs[0], NHWC), b.const(np.array([-1], np.int64),
                                                                                     "flat")], hint=f"{op.name}_flat"),
                             b.const(zero, "spare")], hint=f"{op.name}_padded", axis=0)
    upd = b.value(op.inputs[2], NHWC) if u.data is None else b.const(u.data, b.names[op.inputs[2]])
    upd = b.node("Reshape", [upd, b.const(np.array([-1], np.int64), "flat")], hint=f"{op.name}_updates")
    done = b.node("ScatterND", [data, flat, upd], hint=f"{op.name}_scatter", reduction=reduction)
    done = b.node("Slice", [done, b.const(np.array([0], np.int64), "start"), b.const(np.array([n], np.int64), "end")],
                  hint=f"{op.name}_cut")
    b.node("Reshape", [done, b.const(np.array(shape, np.int64), "shape")], [b.names[op.outputs[0]]], hint=op.name)
    b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}


def _const_or_value(b: OnnxBuilder, idx: int) -> str:
    t = b.tensor(idx)
    return b.const(t.data, b.names[idx]) if t.data is not None else b.value(idx, NHWC)


def lower_embedding_lookup_sparse(b: OnnxBuilder, op: TflOp) -> None:
    """EMBEDDING_LOOKUP_SPARSE(ids, indices, dense_shape, weights, value): for each output row (a bucket of the
    sparse tensor's leading dense_shape[:-1] dimensions), the sum of weights[i] * value[ids[i]] over its
    entries, then as LiteRT's combiner: SUM as it is, MEAN divided by the sum of the weights, SQRTN by the root
    of the sum of their squares (a row with no entries stays 0). ScatterND adds each entry in order, so the sums
    are LiteRT's own. The shape must be constant (the output's shape). LiteRT divides a row each time its
    entries resume after another row's: with indices in the sparse tensor's canonical (row-sorted) order, as
    tf.sparse writes them, both agree; aotc's sums do not depend on the order."""
    ids, indices, dense, weights, value = (b.tensor(i) for i in op.inputs[:5])
    y = b.tensor(op.outputs[0])
    if dense.data is None:
        raise op_error(op, "EMBEDDING_LOOKUP_SPARSE's dense shape is computed at run time; aotc needs it constant")
    if value.dtype != "float32" or weights.dtype != "float32" or ids.dtype != "int32" or indices.dtype != "int32" \
            or value.quant is not None:
        raise op_error(op, f"EMBEDDING_LOOKUP_SPARSE of {value.dtype} values, {weights.dtype} weights is not "
                       "supported (float32 values and weights, int32 ids and indices, as LiteRT)")
    shape = [int(v) for v in np.asarray(dense.data).reshape(-1)]
    n, rank = list(indices.shape)
    rows, emb = int(value.shape[0]), [int(v) for v in value.shape[1:]]
    width = int(np.prod(emb, dtype=np.int64))
    buckets = int(np.prod(shape[:-1], dtype=np.int64))
    if len(shape) != rank or list(ids.shape) != [n] or list(weights.shape) != [n] or \
            list(y.shape) != shape[:-1] + emb:
        raise op_error(op, f"EMBEDDING_LOOKUP_SPARSE of {n} ids with indices {list(indices.shape)}, dense shape "
                       f"{shape}, value {list(value.shape)} does not give {list(y.shape)}")
    combiner = int(op.options.combiner) if op.options is not None else 0
    hint = op.name
    zero = b.const(np.int64(0), "zero")
    # ids clamped into the table (LiteRT refuses one outside it at run time; here it stays in memory)
    idx = b.node("Min", [b.node("Max", [b.node("Cast", [_const_or_value(b, op.inputs[0])], hint=f"{hint}_ids64",
                                               to=I64), zero], hint=f"{hint}_idlo"),
                         b.const(np.int64(rows - 1), "last_row")], hint=f"{hint}_idclip")
    table = b.node("Reshape", [_const_or_value(b, op.inputs[4]), b.const(np.array([rows, width], np.int64), "rows")],
                   hint=f"{hint}_table")
    w = _const_or_value(b, op.inputs[3])
    picked = b.node("Gather", [table, idx], hint=f"{hint}_rows", axis=0)
    terms = b.node("Mul", [picked, b.node("Unsqueeze", [w, b.const(np.array([1], np.int64), "axis")],
                                          hint=f"{hint}_wcol")], hint=f"{hint}_weighted")
    ind = b.node("Cast", [_const_or_value(b, op.inputs[1])], hint=f"{hint}_ind64", to=I64)
    bucket = b.const(np.zeros([n], np.int64), "zeros")
    for k, stride in enumerate(_strides(shape[:-1])):
        comp = b.node("Reshape", [b.node("Slice", [ind, b.const(np.array([k], np.int64), "start"),
                                                   b.const(np.array([k + 1], np.int64), "end"),
                                                   b.const(np.array([1], np.int64), "axis")], hint=f"{hint}_c{k}"),
                                  b.const(np.array([n], np.int64), "n")], hint=f"{hint}_col{k}")
        comp = b.node("Min", [b.node("Max", [comp, zero], hint=f"{hint}_lo{k}"),
                              b.const(np.int64(shape[k] - 1), "hi")], hint=f"{hint}_clip{k}")
        bucket = b.node("Add", [bucket, b.node("Mul", [comp, b.const(np.int64(stride), "stride")],
                                               hint=f"{hint}_s{k}")], hint=f"{hint}_bucket{k}")
    where = b.node("Unsqueeze", [bucket, b.const(np.array([1], np.int64), "axis")], hint=f"{hint}_where")

    def summed(updates: str, cols: list[int], what: str) -> str:
        return b.node("ScatterND", [b.const(np.zeros([buckets, *cols], np.float32), "zeros"), where, updates],
                      hint=f"{hint}_{what}", reduction="add")

    out = summed(terms, [width], "sums")
    if combiner in (1, 2):
        if combiner == 1:
            denom = summed(w, [], "total")
        else:
            denom = b.node("Sqrt", [summed(b.node("Mul", [w, w], hint=f"{hint}_w2"), [], "squares")],
                           hint=f"{hint}_root")
        count = summed(b.const(np.ones([n], np.float32), "ones"), [], "count")
        col = b.const(np.array([1], np.int64), "axis")
        filled = b.node("Unsqueeze", [b.node("Greater", [count, b.const(np.float32(0), "zero")], hint=f"{hint}_any"),
                                      col], hint=f"{hint}_anycol")
        divided = b.node("Div", [out, b.node("Unsqueeze", [denom, col], hint=f"{hint}_denom")], hint=f"{hint}_div")
        out = b.node("Where", [filled, divided, out], hint=f"{hint}_combined")
    elif combiner != 0:
        raise op_error(op, f"EMBEDDING_LOOKUP_SPARSE combiner {combiner} is not SUM, MEAN or SQRTN")
    b.node("Reshape", [out, b.const(np.array(y.shape, np.int64), "shape")], [b.names[op.outputs[0]]], hint=op.name)
    b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}


OPS = {"STABLEHLO_GATHER": lower_gather, "STABLEHLO_SCATTER": lower_scatter,
       "EMBEDDING_LOOKUP_SPARSE": lower_embedding_lookup_sparse}
