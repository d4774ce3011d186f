"""Data movement ops: views, Concat, Split, Slice, Transpose, Pad, Gather and Cast.

Reshape-like ops are views: the planner gives them their input's bytes, and the
generator emits a copy only when that is impossible (e.g. the view is a graph output).
The other ops move bytes and are dtype-agnostic: the element size is a parameter.
Everything is reduced here to a few kernels (runtime_c/kernels/shape/shape.c):

    Slice, Concat, Split, Transpose -> aotc_strided_copy (N-d copy, strides in elements)
    Transpose swapping two blocks   -> aotc_transpose2d  (cache-blocked, e.g. NCHW <-> NHWC)
    Pad                             -> aotc_pad
    Gather                          -> aotc_gather_i64 / aotc_gather_i32 (by index dtype)
    Cast                            -> aotc_cast

Shapes are simplified before they reach C: dims of size 1 are dropped and neighbouring
dims that stay contiguous are merged, so a Concat on axis 1 of NCHW tensors becomes a
2-d copy of rows and a Slice of whole rows a single memcpy-like run.
"""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_comment, c_int, c_ints
from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext

ANY_DTYPE = ("float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool",
             "float16", "bfloat16")
MAX_RANK = 8  # AOTC_MAX_RANK
INT32_MAX = 2**31 - 1

# aotc_cast_type in aotc_shape.h
CAST_TYPES = {
    "float32": "AOTC_CAST_F32", "float64": "AOTC_CAST_F64", "int64": "AOTC_CAST_I64", "int32": "AOTC_CAST_I32",
    "int16": "AOTC_CAST_I16", "int8": "AOTC_CAST_I8", "uint8": "AOTC_CAST_U8", "bool": "AOTC_CAST_BOOL",
    "uint16": "AOTC_CAST_U16", "uint32": "AOTC_CAST_U32", "uint64": "AOTC_CAST_U64",
    "float16": "AOTC_CAST_F16", "bfloat16": "AOTC_CAST_BF16",
    "int4": "AOTC_CAST_I4", "uint4": "AOTC_CAST_U4", "int2": "AOTC_CAST_I2", "uint2": "AOTC_CAST_U2",
    "float8_e4m3fn": "AOTC_CAST_F8E4M3FN", "float8_e4m3fnuz": "AOTC_CAST_F8E4M3FNUZ", "float8_e5m2": "AOTC_CAST_F8E5M2",
    "float8_e5m2fnuz": "AOTC_CAST_F8E5M2FNUZ", "float4_e2m1fn": "AOTC_CAST_F4E2M1",
    "float8_e8m0fnu": "AOTC_CAST_F8E8M0",
}
# one byte each: views and Cast, nothing that makes values
SMALL_INTS = ("int4", "uint4", "int2", "uint2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
              "float4_e2m1fn", "float8_e8m0fnu")
ROUND_MODES = {"up": "AOTC_ROUND_UP", "down": "AOTC_ROUND_DOWN", "nearest": "AOTC_ROUND_NEAREST"}  # aotc_shape.h
PAD_MODES = {"constant": "AOTC_PAD_CONSTANT", "edge": "AOTC_PAD_EDGE", "reflect": "AOTC_PAD_REFLECT",
             "wrap": "AOTC_PAD_WRAP"}


# --- layout helpers ------------------------------------------------------------------

def contiguous_strides(shape: tuple[int, ...] | list[int]) -> list[int]:
    """Row-major strides in elements."""
    strides, acc = [0] * len(shape), 1
    for k in range(len(shape) - 1, -1, -1):
        strides[k] = acc
        acc *= shape[k]
    return strides


def merge_dims(shape: list[int], *strides: list[int]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims, then merge each dim into the previous one wherever that is
    contiguous over it in every stride list. Returns (shape, strides lists), rank >= 1."""
    dims = [(n, [s[k] for s in strides]) for k, n in enumerate(shape) if n != 1]
    merged: list[tuple[int, list[int]]] = []
    for n, st in dims:
        if merged:
            pn, pst = merged[-1]
            if all(p == s * n for p, s in zip(pst, st, strict=True)):
                merged[-1] = (pn * n, st)
                continue
        merged.append((n, st))
    if not merged:
        merged = [(1, [0] * len(strides))]
    return [m[0] for m in merged], [[m[1][i] for m in merged] for i in range(len(strides))]


def _nelem(shape: tuple[int, ...] | list[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _strided_copy(ctx: NodeContext, shape: list[int], src: str, src_strides: list[int], src_offset: int,
                  dst: str, dst_strides: list[int], dst_offset: int, comment: str) -> None:
    shape, (ss, ds) = merge_dims(shape, src_strides, dst_strides)
    # The comment goes beside the call: Concat and Split declare one params struct per call,
    # and ModelEmitter.declare_params only tells apart same-named structs without a comment.
    ctx.comment(comment)
    p = ctx.params("aotc_strided_copy_params", {
        "rank": str(len(shape)), "elem_size": str(ctx.tensor(src).itemsize), "shape": c_ints(shape),
        "src_strides": c_ints(ss), "dst_strides": c_ints(ds),
        "src_offset": c_int(src_offset), "dst_offset": c_int(dst_offset),
    })
    ctx.call("aotc_strided_copy", p, ctx.ptr(src), ctx.ptr(dst))


def _empty(ctx: NodeContext) -> bool:
    """True (after a comment) when every output is empty: nothing to move."""
    if all(ctx.tensor(o).size == 0 for o in ctx.outputs if o):
        ctx.comment("empty output: nothing to do")
        return True
    return False


# --- emitters --------------------------------------------------------------------------

def emit_copy(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    ctx.call("aotc_copy", f"{ctx.tensor(y).nbytes}u", ctx.ptr(x), ctx.ptr(y))


def emit_concat(ctx: NodeContext) -> None:
    """One strided copy per input into its place along the axis."""
    if _empty(ctx):
        return
    y, axis = ctx.outputs[0], ctx.attrs["axis"]
    out_shape = ctx.shape(y)
    out_strides = contiguous_strides(out_shape)
    at = 0
    for x in ctx.inputs:
        shape = list(ctx.shape(x))
        where = f"{c_comment(x)} {shape} at {at} of {list(out_shape)}"
        if ctx.emitter.written_in_place(x, y, at * out_strides[axis] * ctx.tensor(y).itemsize):
            ctx.comment(f"Concat axis {axis}: {where}: written there by its producer, no copy")
        elif _nelem(shape):
            _strided_copy(ctx, shape, x, contiguous_strides(shape), 0, y, out_strides, at * out_strides[axis],
                          f"Concat axis {axis}: {where}")
        at += shape[axis]


def emit_split(ctx: NodeContext) -> None:
    """One strided copy per output from its place along the axis."""
    if _empty(ctx):
        return
    x, axis = ctx.inputs[0], ctx.attrs["axis"]
    in_shape = ctx.shape(x)
    in_strides = contiguous_strides(in_shape)
    at = 0
    for y, size in zip(ctx.outputs, ctx.attrs["split"], strict=True):
        shape = list(ctx.shape(y))
        if ctx.emitter.written_in_place(y, x, at * in_strides[axis] * ctx.tensor(x).itemsize):
            ctx.comment(f"Split axis {axis}: {c_comment(y)} {shape} is bytes {at} on of {c_comment(x)}, no copy")
        elif _nelem(shape):
            _strided_copy(ctx, shape, x, in_strides, at * in_strides[axis], y, contiguous_strides(shape), 0,
                          f"Split axis {axis}: {c_comment(y)} {shape} from {at} of {list(in_shape)}")
        at += size


def emit_slice(ctx: NodeContext) -> None:
    """Output index i along dim k reads input index starts[k] + i * steps[k]."""
    if _empty(ctx):
        return
    x, y = ctx.inputs[0], ctx.outputs[0]
    starts, steps = ctx.attrs["starts"], ctx.attrs["steps"]
    in_strides = contiguous_strides(ctx.shape(x))
    offset = sum(s * st for s, st in zip(starts, in_strides, strict=True))
    if all(s == 1 for s in steps) and ctx.emitter.written_in_place(y, x, offset * ctx.tensor(x).itemsize):
        ctx.comment(f"Slice {list(ctx.shape(x))} -> {list(ctx.shape(y))}: a contiguous block of the input, no copy")
        return
    src_strides = [step * st for step, st in zip(steps, in_strides, strict=True)]
    out_shape = list(ctx.shape(y))
    _strided_copy(ctx, out_shape, x, src_strides, offset, y, contiguous_strides(out_shape), 0,
                  f"Slice {list(ctx.shape(x))} -> {out_shape}: starts {starts}, steps {steps}")


def transpose2d_layout(shape: list[int], src_strides: list[int], dst_strides: list[int]) -> list[int] | None:
    """(batch, rows, cols) when the merged copy is a batch of 2-d transposes, else None."""
    if len(shape) not in (2, 3):
        return None
    (c, r), (sc, sr), (dc, dr) = shape[-2:], src_strides[-2:], dst_strides[-2:]
    if not (sc == 1 and sr == c and dr == 1 and dc == r):
        return None
    if len(shape) == 3 and not (src_strides[0] == dst_strides[0] == r * c):
        return None
    return [shape[0] if len(shape) == 3 else 1, r, c]


def emit_transpose(ctx: NodeContext) -> None:
    if _empty(ctx):
        return
    x, y, perm = ctx.inputs[0], ctx.outputs[0], ctx.attrs["perm"]
    in_strides = contiguous_strides(ctx.shape(x))
    out_shape = list(ctx.shape(y))
    shape, (ss, ds) = merge_dims(out_shape, [in_strides[p] for p in perm], contiguous_strides(out_shape))
    comment = f"Transpose {list(ctx.shape(x))} perm {perm} -> {out_shape}"
    brc = transpose2d_layout(shape, ss, ds)
    if brc is None:
        _strided_copy(ctx, shape, x, ss, 0, y, ds, 0, comment)
        return
    p = ctx.params("aotc_transpose2d_params", {
        "batch": str(brc[0]), "rows": str(brc[1]), "cols": str(brc[2]), "elem_size": str(ctx.tensor(x).itemsize),
    }, comment=f"{comment}: {brc[0]} x [{brc[1]}, {brc[2]}] matrices")
    ctx.call("aotc_transpose2d", p, ctx.ptr(x), ctx.ptr(y))


def pad_layout(in_shape: tuple[int, ...], pads: list[int], mode: str) -> dict[str, list[int] | int]:
    """aotc_pad fields (ONNX pads may be negative: crop first, then pad what is left), plus
    `block`: how many tensor elements make one kernel element."""
    rank = len(in_shape)
    strides = contiguous_strides(in_shape)
    dims, offset = [], 0  # (out, region, pad_begin, stride, uncropped)
    for k in range(rank):
        begin, end = pads[k], pads[k + rank]
        crop_b, crop_e = max(0, -begin), max(0, -end)
        region = max(0, in_shape[k] - crop_b - crop_e)
        offset += crop_b * strides[k] if region else 0
        out = max(0, begin) + region + max(0, end)
        dims.append([out, region, max(0, begin), strides[k], region == in_shape[k]])
    # drop dims that neither pad nor hold more than one element
    kept = [d for d in dims if not (d[0] == 1 and d[1] == 1)] or [[1, 1, 0, 1, True]]
    merged: list[list] = []
    for d in kept:
        if merged:
            prev = merged[-1]
            plain = d[0] == d[1] and d[4]  # d is neither padded nor cropped
            prev_plain = prev[0] == prev[1] and prev[2] == 0
            # Rows of a plain dim move as a block; edge/reflect/wrap need the outer dim plain too.
            if plain and prev[3] == d[3] * d[1] and (mode == "constant" or prev_plain):
                n = d[1]
                merged[-1] = [prev[0] * n, prev[1] * n, prev[2] * n, d[3], prev[4]]
                continue
        merged.append(d)
    block = 1  # elements per kernel element
    last = merged[-1]
    if mode != "constant" and len(merged) > 1 and last[0] == last[1] and last[2] == 0 and last[4] \
            and last[3] == 1:
        # Contiguous trailing dims that are neither padded nor cropped (C of NHWC) move as one
        # element, so edge/reflect/wrap borders copy whole pixels. (Constant mode merged them above.)
        block = last[1]
        merged = [[d[0], d[1], d[2], d[3] // block, d[4]] for d in merged[:-1]]
        offset //= block
    return {"out_shape": [d[0] for d in merged], "in_shape": [d[1] for d in merged],
            "pads_begin": [d[2] for d in merged], "src_strides": [d[3] for d in merged], "src_offset": offset,
            "block": block}


def emit_pad(ctx: NodeContext) -> None:
    if _empty(ctx):
        return
    x, y = ctx.inputs[0], ctx.outputs[0]
    mode, pads = ctx.attrs["mode"], ctx.attrs["pads"]
    lay = pad_layout(ctx.shape(x), pads, mode)
    p = ctx.params("aotc_pad_params", {
        "rank": str(len(lay["out_shape"])), "elem_size": str(ctx.tensor(x).itemsize * lay["block"]),
        "mode": PAD_MODES[mode],
        "out_shape": c_ints(lay["out_shape"]), "in_shape": c_ints(lay["in_shape"]),
        "pads_begin": c_ints(lay["pads_begin"]), "src_strides": c_ints(lay["src_strides"]),
        "src_offset": c_int(lay["src_offset"]),
    }, comment=f"Pad {mode} {list(ctx.shape(x))} pads {pads} -> {list(ctx.shape(y))}")
    value = "NULL"
    if mode == "constant" and len(ctx.inputs) > 1:  # constant_value computed at run time (one element)
        value = ctx.ptr(ctx.inputs[1])
    elif mode == "constant":
        value = ctx.const_array("value", np.array([ctx.attrs["value"]], dtype=ctx.dtype(x)),
                                comment=f"Pad value for {c_comment(ctx.node.name)}")
    ctx.call("aotc_pad", p, ctx.ptr(x), value, ctx.ptr(y))


def _values_as_int64(ctx: NodeContext, names: list[str]) -> list[str]:
    """C expressions of int64 arrays holding the (int32 or int64) run-time values of `names` ("" -> NULL):
    an int64 tensor as it is, an int32 one widened into a local array (declared in the caller's block)."""
    exprs = []
    for k, name in enumerate(names):
        if not name:
            exprs.append("NULL")
        elif ctx.dtype(name) == "int64":
            exprs.append(ctx.ptr(name))
        else:
            n = ctx.tensor(name).size
            ctx.line(f"    int64_t w{k}_[{max(n, 1)}];")
            ctx.line(f"    for (i_ = 0; i_ < {n}; ++i_) w{k}_[i_] = {ctx.ptr(name)}[i_];")
            exprs.append(f"w{k}_")
    return exprs


def emit_slice_values(ctx: NodeContext) -> None:
    """SliceValues (canonical/shape.py): a Slice whose starts/ends/axes/steps are read at run time; the
    kernel works out the window and returns AOTC_ERR_SHAPE when it is not the compiled output shape."""
    if _empty(ctx):
        return
    x, y = ctx.inputs[0], ctx.outputs[0]
    names = [*ctx.inputs[1:5], *[""] * (5 - len(ctx.inputs))]
    shape_in, shape_out = ctx.shape(x), ctx.shape(y)
    p = ctx.params("aotc_slice_values_params", {
        "rank": str(len(shape_in)), "elem_size": str(ctx.tensor(x).itemsize),
        "in_shape": c_ints(shape_in), "out_shape": c_ints(shape_out),
    }, comment=f"Slice {list(shape_in)} -> {list(shape_out)}, its starts, ends, axes and steps read at run time")
    ctx.line("{")
    ctx.line("    int32_t i_;")
    starts, ends, axes, steps = _values_as_int64(ctx, names)
    ctx.line("    (void)i_;")
    ctx.line(f"    if (aotc_slice_values({p}, {ctx.tensor(names[0]).size}, {starts}, {ends}, {axes}, {steps}, "
             f"{ctx.ptr(x)}, {ctx.ptr(y)}) != 0)")
    ctx.line("        return AOTC_ERR_SHAPE;")
    ctx.line("}")


def emit_pad_values(ctx: NodeContext) -> None:
    """PadValues (canonical/shape.py): a Pad whose pads (and axes) are read at run time; the kernel returns
    AOTC_ERR_SHAPE when they do not give the compiled output shape."""
    if _empty(ctx):
        return
    x, y = ctx.inputs[0], ctx.outputs[0]
    pads, value_in, axes = [*ctx.inputs[1:4], *[""] * (4 - len(ctx.inputs))]
    mode = ctx.attrs["mode"]
    shape_in, shape_out = ctx.shape(x), ctx.shape(y)
    p = ctx.params("aotc_pad_values_params", {
        "rank": str(len(shape_in)), "elem_size": str(ctx.tensor(x).itemsize), "mode": PAD_MODES[mode],
        "in_shape": c_ints(shape_in), "out_shape": c_ints(shape_out),
    }, comment=f"Pad {mode} {list(shape_in)} -> {list(shape_out)}, its pads read at run time")
    value = "NULL"
    if mode == "constant" and value_in:  # constant_value computed at run time (one element)
        value = ctx.ptr(value_in)
    elif mode == "constant":
        value = ctx.const_array("value", np.array([ctx.attrs["value"]], dtype=ctx.dtype(x)),
                                comment=f"Pad value for {c_comment(ctx.node.name)}")
    ctx.line("{")
    ctx.line("    int32_t i_;")
    pads_c, axes_c = _values_as_int64(ctx, [pads, axes])
    ctx.line("    (void)i_;")
    ctx.line(f"    if (aotc_pad_values({p}, {ctx.tensor(pads).size // 2}, {pads_c}, {axes_c}, {ctx.ptr(x)}, {value}, "
             f"{ctx.ptr(y)}) != 0)")
    ctx.line("        return AOTC_ERR_SHAPE;")
    ctx.line("}")


def check_values_ints(node: Node, graph: Graph) -> str | None:
    """The run-time parameters of SliceValues/PadValues are int32 or int64 (ONNX allows both)."""
    for name in node.inputs[1:]:
        if name and name != (node.inputs[2] if node.op == "PadValues" else None) and \
                graph.tensors[name].dtype not in ("int64", "int32"):
            return f"input '{name}' is {graph.tensors[name].dtype}, not int64 or int32"
    return check_sizes(node, graph)


def emit_gather(ctx: NodeContext) -> None:
    if _empty(ctx):
        return
    data, indices = ctx.inputs[0], ctx.inputs[1]
    y, axis = ctx.outputs[0], ctx.attrs["axis"]
    shape = ctx.shape(data)
    p = ctx.params("aotc_gather_params", {
        "outer": str(_nelem(shape[:axis])), "axis_dim": str(shape[axis]),
        "n_indices": str(_nelem(ctx.shape(indices))),
        "block_bytes": c_int(_nelem(shape[axis + 1:]) * ctx.tensor(data).itemsize),
    }, comment=f"Gather axis {axis}: {list(shape)} with indices {list(ctx.shape(indices))} -> {list(ctx.shape(y))}")
    kernel = "aotc_gather_i64" if ctx.dtype(indices) == "int64" else "aotc_gather_i32"
    ctx.call(kernel, p, ctx.ptr(data), ctx.ptr(indices), ctx.ptr(y))


def emit_cast(ctx: NodeContext) -> None:
    if _empty(ctx):
        return
    x, y = ctx.inputs[0], ctx.outputs[0]
    if ctx.dtype(x) == ctx.dtype(y):
        emit_copy(ctx)
        return
    if ctx.dtype(y) == "float8_e8m0fnu":  # Cast-24's round_mode, with saturate
        ctx.call("aotc_cast_e8m0", f"{ctx.tensor(y).size}u", CAST_TYPES[ctx.dtype(x)],
                 str(ctx.attrs.get("saturate", 1)), ROUND_MODES[ctx.attrs.get("round_mode", "up")], ctx.ptr(x),
                 ctx.ptr(y))
        return
    if ctx.dtype(y).startswith("float8") and not ctx.attrs.get("saturate", 1):
        ctx.call("aotc_cast_f8", f"{ctx.tensor(y).size}u", CAST_TYPES[ctx.dtype(x)], CAST_TYPES[ctx.dtype(y)], "0",
                 ctx.ptr(x), ctx.ptr(y))
        return
    ctx.call("aotc_cast", f"{ctx.tensor(y).size}u", CAST_TYPES[ctx.dtype(x)], CAST_TYPES[ctx.dtype(y)],
             ctx.ptr(x), ctx.ptr(y))


# --- compile-time checks -------------------------------------------------------------------

def check_sizes(node: Node, graph: Graph) -> str | None:
    """Ranks fit the params structs; element counts fit the kernels' int32 dims."""
    for t in (t for t in [*node.inputs, *node.outputs] if t):
        tensor = graph.tensors[t]
        if len(tensor.shape) > MAX_RANK:
            return f"tensor '{t}' has rank {len(tensor.shape)} (at most {MAX_RANK} is supported)"
        if tensor.size > INT32_MAX:
            return f"tensor '{t}' has {tensor.size} elements (at most {INT32_MAX} are supported)"
    return None


def check_pad(node: Node, graph: Graph) -> str | None:
    reason = check_sizes(node, graph)
    if reason:
        return reason
    shape, pads, mode = graph.tensors[node.inputs[0]].shape, node.attrs["pads"], node.attrs["mode"]
    rank = len(shape)
    for k in range(rank):
        begin, end = pads[k], pads[k + rank]
        region = shape[k] - max(0, -begin) - max(0, -end)
        if mode != "constant" and region <= 0 and (begin > 0 or end > 0):
            return f"Pad mode '{mode}' cannot pad axis {k}: nothing of it is left after cropping"
        if mode == "reflect" and max(begin, end) > region - 1:
            # onnxruntime refuses these too; numpy would reflect repeatedly
            return (f"Pad mode 'reflect' pads axis {k} by {max(begin, end)}, more than its "
                    f"length {region} minus 1")
    return None


def check_gather(node: Node, graph: Graph) -> str | None:
    reason = check_sizes(node, graph)
    if reason:
        return reason
    indices = node.inputs[1]
    if graph.tensors[indices].dtype not in ("int64", "int32"):
        return f"Gather indices of dtype {graph.tensors[indices].dtype} are not supported (int64, int32)"
    n = graph.tensors[node.inputs[0]].shape[node.attrs["axis"]]
    value = graph.const(indices)
    if value is not None and value.size and not (-n <= value.min() and value.max() < n):
        return f"Gather indices out of range [{-n}, {n - 1}]"
    return None


def check_cast(node: Node, graph: Graph) -> str | None:
    to = graph.tensors[node.outputs[0]].dtype
    if to not in CAST_TYPES:
        return f"Cast to {to} is not supported (supported: {', '.join(CAST_TYPES)})"
    return None


def _mover(emit, check=check_sizes) -> HostOp:
    return HostOp(emit, family="shape", dtypes=ANY_DTYPE, check=check)


_VIEW = HostOp(emit_copy, family="shape", dtypes=(*ANY_DTYPE, *SMALL_INTS), view=True)


def emit_check_values(ctx: NodeContext) -> None:
    """CheckValues (canonical/shape.py): a run-time input must hold the values the declared shapes pinned;
    otherwise the run returns AOTC_ERR_SHAPE before this node writes anything. Then y is x."""
    x, values, y = ctx.inputs[0], ctx.inputs[1], ctx.outputs[0]
    expected, skip = ctx.attrs["expected"], ctx.attrs.get("skip", ())  # skip: positions any value may take
    test = " || ".join(f"v_[{k}] != {c_int(e)}" for k, e in enumerate(expected) if k not in skip) or "0"
    ctx.line(f"{{ /* {c_comment(values)} must be {expected}: the shapes were compiled for it */")
    ctx.line(f"    const {ctx.ctype(values)} *v_ = {ctx.ptr(values)};")
    ctx.line(f"    if ({test}) return AOTC_ERR_SHAPE;")
    ctx.line("}")
    if ctx.tensor(y).nbytes:
        ctx.line(f"if ((const void *)({ctx.ptr(x)}) != (const void *)({ctx.ptr(y)}))")
        ctx.line(f"    aotc_copy({ctx.tensor(y).nbytes}u, {ctx.ptr(x)}, {ctx.ptr(y)});")


def check_bitcast(node: Node, graph: Graph) -> str | None:
    """BitCast (opset 26) reinterprets the bytes: a view, between types of one size."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    if x.itemsize != y.itemsize or x.shape != y.shape:
        return f"BitCast from {x.dtype} to {y.dtype} changes the element size"
    if y.dtype == "bool" and x.dtype != "bool":
        return "BitCast to bool is not supported (a byte other than 0 or 1 is not a bool)"
    return None


OPS: dict[str, HostOp] = {
    "Reshape": _VIEW,
    "Flatten": _VIEW,
    "Squeeze": _VIEW,
    "Unsqueeze": _VIEW,
    "Identity": _VIEW,
    "CheckValues": HostOp(emit_check_values, family="shape", dtypes=ANY_DTYPE, inplace=0),
    "BitCast": HostOp(emit_copy, family="shape", dtypes=ANY_DTYPE, view=True, check=check_bitcast),
    "Concat": _mover(emit_concat),
    "Split": _mover(emit_split),
    "Slice": _mover(emit_slice),
    "SliceValues": _mover(emit_slice_values, check_values_ints),
    "PadValues": _mover(emit_pad_values, check_values_ints),
    "Transpose": _mover(emit_transpose),
    "Pad": _mover(emit_pad, check_pad),
    "Gather": _mover(emit_gather, check_gather),
    "Cast": HostOp(emit_cast, family="shape", dtypes=tuple(CAST_TYPES), check=check_cast),
}
