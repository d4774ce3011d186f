"""Index arithmetic ops (issue 15's transformer masks and positions, issue 16's breadth): Where, Expand,
Tile, ArgMax/ArgMin, Hardmax, Trilu, CumSum/CumProd, GatherElements, GatherND, ScatterElements/ScatterND, EyeLike,
OneHot, Range, SpaceToDepth and DepthToSpace (kernels in runtime_c/kernels/index/index.c).

Expand, Tile, SpaceToDepth and DepthToSpace only move bytes, so they become one strided copy each
(aotc_strided_copy of the shape family), with stride 0 where the input repeats. Their shape/repeats
inputs may be computed at run time: the declared output shape fixes the copy, so those inputs are not
read. Trilu's k, CumSum's axis and Range's start and delta may be run-time inputs too: the kernels read
them and stay in bounds for any value.
"""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_comment, c_int, c_ints
from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext, fixed_scratch
from aot.kernels.shape import ANY_DTYPE, INT32_MAX, MAX_RANK, _strided_copy, check_sizes, contiguous_strides, merge_dims

ARG_DTYPES = ("float32", "float64", "int8", "uint8", "int32", "int64")
CUMSUM_DTYPES = ("float32", "float64", "int32", "int64")


def _nelem(shape: tuple[int, ...] | list[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def check_shaped_by_values(node: Node, graph: Graph) -> str | None:
    """Expand, Tile, OneHot and Range: an output shape set by input values computed at run time is the
    declared one, or one load.py inferred by running the node on zeros, which gives an empty output (or
    fails): refused, never compiled with a guessed shape."""
    if graph.tensors[node.outputs[0]].size == 0:
        return "its output would be empty: give the shape-setting inputs as constants or declare the output's shape"
    return check_sizes(node, graph)


def _broadcast_strides(shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """Element strides of `shape` read as broadcast to `out` (numpy rules): 0 where it repeats."""
    shape = (1,) * (len(out) - len(shape)) + tuple(shape)
    strides = contiguous_strides(shape)
    return [0 if n == 1 else s for n, s in zip(shape, strides, strict=True)]


def _runtime_scalar(ctx: NodeContext, index: int, default: int) -> str:
    """C expression of an integer scalar input: its value when constant, a read of it when not."""
    if index >= len(ctx.inputs) or not ctx.inputs[index]:
        return c_int(default)
    value = ctx.const(ctx.inputs[index])
    if value is not None:
        return c_int(int(np.asarray(value).reshape(-1)[0]))
    return f"(int64_t){ctx.ptr(ctx.inputs[index])}[0]"


# --- Where ------------------------------------------------------------------------------

def where_layout(out: tuple[int, ...], *inputs: tuple[int, ...]) -> tuple[list[int], list[list[int]]]:
    """Merged (shape, strides of each input) of a broadcast over `out`."""
    return merge_dims(list(out), *[_broadcast_strides(s, out) for s in inputs])


def _emit_where(ctx: NodeContext) -> None:
    c, x, z = ctx.inputs
    y = ctx.outputs[0]
    shape, (sc, sx, sz) = where_layout(ctx.shape(y), ctx.shape(c), ctx.shape(x), ctx.shape(z))
    p = ctx.params("aotc_where_params", {
        "rank": str(len(shape)), "elem_size": str(ctx.tensor(y).itemsize), "shape": c_ints(shape),
        "c_strides": c_ints(sc), "x_strides": c_ints(sx), "z_strides": c_ints(sz),
    }, comment=f"Where: {list(ctx.shape(c))} ? {list(ctx.shape(x))} : {list(ctx.shape(z))} -> {list(ctx.shape(y))}")
    ctx.call("aotc_where", p, ctx.ptr(c), ctx.ptr(x), ctx.ptr(z), ctx.ptr(y))


def _check_where(node: Node, graph: Graph) -> str | None:
    reason = check_sizes(node, graph)
    if reason:
        return reason
    t = graph.tensors
    if t[node.inputs[1]].dtype != t[node.inputs[2]].dtype:
        return f"X and Y of dtypes {t[node.inputs[1]].dtype} and {t[node.inputs[2]].dtype}"
    shape, _ = where_layout(t[node.outputs[0]].shape, *[t[i].shape for i in node.inputs])
    return None if len(shape) <= MAX_RANK else f"the broadcast needs {len(shape)} loop levels (at most {MAX_RANK})"


# --- Expand and Tile: strided copies ---------------------------------------------------------

def tile_layout(in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
    """(shape, src strides, dst strides) of Tile as one copy: each dim k becomes (repeat, d_k)."""
    src, dst = contiguous_strides(in_shape), contiguous_strides(out_shape)
    shape: list[int] = []
    ss: list[int] = []
    ds: list[int] = []
    for d, o, s, t in zip(in_shape, out_shape, src, dst, strict=True):
        shape += [o // d, d]
        ss += [0, s]
        ds += [d * t, t]
    merged, (ss, ds) = merge_dims(shape, ss, ds)
    return merged, ss, ds


def _emit_expand(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    out = ctx.shape(y)
    _strided_copy(ctx, list(out), x, _broadcast_strides(ctx.shape(x), out), 0, y, contiguous_strides(out), 0,
                  f"Expand {list(ctx.shape(x))} -> {list(out)}")


def _emit_tile(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    shape, ss, ds = tile_layout(ctx.shape(x), ctx.shape(y))
    _strided_copy(ctx, shape, x, ss, 0, y, ds, 0, f"Tile {list(ctx.shape(x))} -> {list(ctx.shape(y))}")


def _check_expand(node: Node, graph: Graph) -> str | None:
    reason = check_shaped_by_values(node, graph)
    if reason:
        return reason
    x, y = graph.tensors[node.inputs[0]].shape, graph.tensors[node.outputs[0]].shape
    if len(x) > len(y) or any(a not in (1, b) for a, b in zip(x[::-1], y[::-1], strict=False)):
        return f"input {list(x)} does not broadcast to the output {list(y)}"
    shape, _ = merge_dims(list(y), _broadcast_strides(x, y))
    return None if len(shape) <= MAX_RANK else f"the broadcast needs {len(shape)} loop levels (at most {MAX_RANK})"


def _check_tile(node: Node, graph: Graph) -> str | None:
    reason = check_shaped_by_values(node, graph)
    if reason:
        return reason
    x, y = graph.tensors[node.inputs[0]].shape, graph.tensors[node.outputs[0]].shape
    if len(x) != len(y) or any(o % d for d, o in zip(x, y, strict=True) if d):
        return f"output {list(y)} is not a tiling of the input {list(x)}"
    shape, _, _ = tile_layout(x, y)
    return None if len(shape) <= MAX_RANK else f"the tiling needs {len(shape)} loop levels (at most {MAX_RANK})"


# --- ArgMax / ArgMin ----------------------------------------------------------------------

def _arg_axis(node: Node, graph: Graph) -> int:
    rank = len(graph.tensors[node.inputs[0]].shape)
    axis = int(node.attrs.get("axis", 0))
    return axis + rank if axis < 0 else axis


def _emit_arg(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    shape, axis = ctx.shape(x), _arg_axis(ctx.node, ctx.graph)
    p = ctx.params("aotc_arg_params", {
        "outer": c_int(_nelem(shape[:axis])), "axis_dim": c_int(shape[axis]), "inner": c_int(_nelem(shape[axis + 1:])),
        "select_last": str(int(ctx.attrs.get("select_last_index", 0))),
    }, comment=f"{ctx.node.op} of {list(shape)} over axis {axis} -> {list(ctx.shape(y))}")
    ctx.call(f"aotc_{ctx.node.op.lower()}_{ctx.suffix(x)}", p, ctx.ptr(x), ctx.ptr(y))


def _emit_hardmax(ctx: NodeContext) -> None:
    """canonical/norm.py gives Hardmax Softmax's (outer, n, inner), both axis semantics (before and after opset 13)."""
    x, y = ctx.inputs[0], ctx.outputs[0]
    p = ctx.params("aotc_arg_params", {
        "outer": c_int(ctx.attrs["outer"]), "axis_dim": c_int(ctx.attrs["n"]), "inner": c_int(ctx.attrs["inner"]),
        "select_last": "0",
    }, comment=f"Hardmax of {list(ctx.shape(x))} as [{ctx.attrs['outer']}, {ctx.attrs['n']}, {ctx.attrs['inner']}]")
    ctx.call(f"aotc_hardmax_{ctx.suffix(x)}", p, ctx.ptr(x), ctx.ptr(y))


def _check_hardmax(node: Node, graph: Graph) -> str | None:
    return "a scalar input has no axis" if not graph.tensors[node.inputs[0]].shape else check_sizes(node, graph)


def _check_arg(node: Node, graph: Graph) -> str | None:
    shape = graph.tensors[node.inputs[0]].shape
    if not shape:
        return "a scalar input has no axis to reduce"
    if not 0 <= _arg_axis(node, graph) < len(shape):
        return f"axis {node.attrs.get('axis', 0)} is out of range for rank {len(shape)}"
    return check_sizes(node, graph)


# --- Trilu ------------------------------------------------------------------------------------

def _emit_trilu(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    shape = ctx.shape(x)
    upper = int(ctx.attrs.get("upper", 1))
    p = ctx.params("aotc_trilu_params", {
        "batch": c_int(_nelem(shape[:-2])), "rows": c_int(shape[-2]), "cols": c_int(shape[-1]),
        "elem_size": str(ctx.tensor(x).itemsize), "upper": str(upper),
    }, comment=f"Trilu {'upper' if upper else 'lower'} of {list(shape)}")
    ctx.call("aotc_trilu", p, _runtime_scalar(ctx, 1, 0), ctx.ptr(x), ctx.ptr(y))


def _check_trilu(node: Node, graph: Graph) -> str | None:
    if len(graph.tensors[node.inputs[0]].shape) < 2:
        return "the input must have rank 2 or more"
    return check_sizes(node, graph)


# --- Compress --------------------------------------------------------------------------------

def _emit_compress(ctx: NodeContext) -> None:
    """The output's shape is the declared one (a condition computed at run time keeps a count the data
    decides): a condition keeping another count makes the run return AOTC_ERR_SHAPE."""
    x, cond, y = ctx.inputs[0], ctx.inputs[1], ctx.outputs[0]
    shape, out = ctx.shape(x), ctx.shape(y)
    axis = ctx.attrs.get("axis")
    if axis is None:
        outer, dim, inner, kept = 1, _nelem(shape), 1, _nelem(out)
    else:
        axis = int(axis) + len(shape) if int(axis) < 0 else int(axis)
        outer, dim, inner, kept = _nelem(shape[:axis]), shape[axis], _nelem(shape[axis + 1:]), out[axis]
    p = ctx.params("aotc_compress_params", {
        "outer": c_int(outer), "axis_dim": c_int(dim), "inner": c_int(inner),
        "elem_size": str(ctx.tensor(x).itemsize), "cond_len": c_int(_nelem(ctx.shape(cond))), "kept": c_int(kept),
    }, comment=f"Compress of {list(shape)} on axis {axis} to {list(out)}")
    ctx.line(f"if (aotc_compress({p}, {ctx.ptr(cond)}, {ctx.ptr(x)}, {ctx.ptr(y)}) != 0) return AOTC_ERR_SHAPE;")


def _check_compress(node: Node, graph: Graph) -> str | None:
    shape, out = graph.tensors[node.inputs[0]].shape, graph.tensors[node.outputs[0]].shape
    cond = graph.tensors[node.inputs[1]]
    if cond.dtype != "bool" or len(cond.shape) != 1:
        return "the condition must be a 1-D bool tensor"
    axis = node.attrs.get("axis")
    if axis is None:
        if len(out) != 1:
            return f"a Compress without axis gives a 1-D output, not {list(out)}"
    else:
        a = int(axis) + len(shape) if int(axis) < 0 else int(axis)
        if not 0 <= a < len(shape) or len(out) != len(shape) or \
                any(o != d for k, (o, d) in enumerate(zip(out, shape, strict=True)) if k != a):
            return f"output {list(out)} is not the input {list(shape)} compressed along axis {axis}"
    return check_sizes(node, graph)


# --- Unique -----------------------------------------------------------------------------------

UNIQUE_KINDS = {**dict.fromkeys(("int8", "int16", "int32", "int64"), "AOTC_UNIQUE_INT"),
                **dict.fromkeys(("uint8", "uint16", "uint32", "uint64", "bool"), "AOTC_UNIQUE_UINT"),
                "float32": "AOTC_UNIQUE_FLOAT", "float64": "AOTC_UNIQUE_FLOAT", "bfloat16": "AOTC_UNIQUE_BF16"}


def _unique_view(node: Node, graph: Graph) -> tuple[int, int, int, int | None]:
    """x as [outer, axis_dim, inner] and the axis (None: x flattened)."""
    shape = graph.tensors[node.inputs[0]].shape
    axis = node.attrs.get("axis")
    if axis is None:
        return 1, _nelem(shape), 1, None
    a = int(axis) + len(shape) if int(axis) < 0 else int(axis)
    return _nelem(shape[:a]), shape[a], _nelem(shape[a + 1:]), a


def _emit_unique(ctx: NodeContext) -> None:
    """The outputs' shapes are the declared ones (the data decides the distinct count): data with
    another count makes the run return AOTC_ERR_SHAPE. Undeclared, they are bounded (aot/frontend/onnx/
    bounded.py): planned at every slice distinct, the count the rows written (the outputs' extent)."""
    x = ctx.inputs[0]
    outer, dim, inner, axis = _unique_view(ctx.node, ctx.graph)
    y = ctx.outputs[0]
    kept = ctx.shape(y)[0 if axis is None else axis]
    sorted_ = int(ctx.attrs.get("sorted", 1))
    bounded = y in ctx.graph.info.bounded
    p = ctx.params("aotc_unique_params", {
        "outer": c_int(outer), "axis_dim": c_int(dim), "inner": c_int(inner),
        "elem_size": str(ctx.tensor(x).itemsize), "kind": UNIQUE_KINDS[ctx.dtype(x)], "sorted": str(sorted_),
        "kept": c_int(kept), "bounded": str(int(bounded)),
    }, comment=f"Unique{' sorted' if sorted_ else ''} of {list(ctx.shape(x))} along axis {axis}: "
               f"{'at most ' if bounded else ''}{kept} distinct")
    outs = [ctx.ptr(o) if o else "NULL" for o in (list(ctx.outputs) + ["", "", ""])[1:4]]
    call = f"aotc_unique({p}, {ctx.ptr(x)}, {ctx.ptr(y)}, {', '.join(outs)}, {ctx.scratch('int64_t')})"
    if bounded:
        rows = ctx.emitter.extent_var(y)
        ctx.line(f"const int64_t {rows} = {call};")
        ctx.line(f"if ({rows} < 0) return AOTC_ERR_SHAPE;")
    else:
        ctx.line(f"if ({call} != 0) return AOTC_ERR_SHAPE;")


def _unique_scratch(node: Node, graph: Graph) -> int:
    """aotc_unique's: 4 int64 a slice of the axis."""
    return 32 * _unique_view(node, graph)[1]


def _check_unique(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    x = t[node.inputs[0]]
    if x.dtype not in UNIQUE_KINDS:
        return f"a {x.dtype} input is not supported"
    axis = node.attrs.get("axis")
    if axis is not None and not -len(x.shape) <= int(axis) < len(x.shape):
        return f"axis {axis} is out of range for rank {len(x.shape)}"
    outs = [o for o in node.outputs if o]
    guessed = [o for o in outs if o in graph.info.guessed_shapes]
    if guessed:
        return (f"the shape of output '{guessed[0]}' depends on the data and the model does not declare it: "
                "declare the outputs' shapes")
    outer, dim, inner, a = _unique_view(node, graph)
    y = t[node.outputs[0]].shape
    kept = y[0] if a is None else (y[a] if len(y) == len(x.shape) else -1)
    want = [(kept,) if a is None else x.shape[:a] + (kept,) + x.shape[a + 1:], (kept,), (dim,), (kept,)]
    for k, o in enumerate(node.outputs):
        if o and (t[o].shape != want[k] or not 1 <= kept <= dim):
            return f"output '{o}' {list(t[o].shape)} does not agree with {kept} distinct of {dim}"
    return check_sizes(node, graph)


# --- CumSum ----------------------------------------------------------------------------------

def _emit_cumsum(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    shape = ctx.shape(x)
    p = ctx.params("aotc_cumsum_params", {
        "rank": str(len(shape)), "shape": c_ints(list(shape) or [1]),
        "exclusive": str(int(ctx.attrs.get("exclusive", 0))), "reverse": str(int(ctx.attrs.get("reverse", 0))),
    }, comment=f"{ctx.node.op} of {list(shape)}")
    ctx.call(f"aotc_{ctx.node.op.lower()}_{ctx.suffix(x)}", p, _runtime_scalar(ctx, 1, 0), ctx.ptr(x), ctx.ptr(y))


def _check_cumsum(node: Node, graph: Graph) -> str | None:
    if not graph.tensors[node.inputs[0]].shape:
        return "a scalar input has no axis to sum along"
    return check_sizes(node, graph)


# --- GatherElements ------------------------------------------------------------------------------

def _emit_gather_elements(ctx: NodeContext) -> None:
    data, indices = ctx.inputs[0], ctx.inputs[1]
    y = ctx.outputs[0]
    shape = ctx.shape(data)
    axis = int(ctx.attrs.get("axis", 0)) % len(shape)
    p = ctx.params("aotc_gather_elements_params", {
        "rank": str(len(shape)), "elem_size": str(ctx.tensor(data).itemsize), "axis": str(axis),
        "axis_dim": c_int(shape[axis]), "shape": c_ints(ctx.shape(indices)),
        "data_strides": c_ints(contiguous_strides(shape)),
    }, comment=f"GatherElements axis {axis}: {list(shape)} with indices {list(ctx.shape(indices))}")
    kernel = "aotc_gather_elements_i64" if ctx.dtype(indices) == "int64" else "aotc_gather_elements_i32"
    ctx.call(kernel, p, ctx.ptr(data), ctx.ptr(indices), ctx.ptr(y))


def _check_gather_elements(node: Node, graph: Graph) -> str | None:
    reason = check_sizes(node, graph)
    if reason:
        return reason
    data, indices = graph.tensors[node.inputs[0]], graph.tensors[node.inputs[1]]
    if indices.dtype not in ("int64", "int32"):
        return f"indices of dtype {indices.dtype} are not supported (int64, int32)"
    if not data.shape or len(indices.shape) != len(data.shape):
        return f"indices {list(indices.shape)} must have the rank of data {list(data.shape)}"
    if not -len(data.shape) <= int(node.attrs.get("axis", 0)) < len(data.shape):
        return f"axis {node.attrs.get('axis', 0)} is out of range for rank {len(data.shape)}"
    if max(data.size, indices.size) > INT32_MAX:
        return f"{c_comment(node.name)} is too large"
    return None


# --- EyeLike, OneHot, Range -----------------------------------------------------------------

def _emit_eye(ctx: NodeContext) -> None:
    y = ctx.outputs[0]
    rows, cols = ctx.shape(y)
    one = ctx.const_array("one", np.ones(1, dtype=np.dtype(ctx.dtype(y) if ctx.dtype(y) != "bool" else "uint8")),
                          comment=f"EyeLike's one for {c_comment(ctx.node.name)}")
    ctx.call("aotc_eye", c_int(rows), c_int(cols), c_int(int(ctx.attrs.get("k", 0))),
             str(ctx.tensor(y).itemsize), one, ctx.ptr(y))


def _check_eye(node: Node, graph: Graph) -> str | None:
    if len(graph.tensors[node.outputs[0]].shape) != 2:
        return "EyeLike makes 2-D tensors only"
    return check_sizes(node, graph)


def _one_hot_axis(node: Node, graph: Graph) -> int:
    rank = len(graph.tensors[node.outputs[0]].shape)
    axis = int(node.attrs.get("axis", -1))
    return axis + rank if axis < 0 else axis


def _emit_one_hot(ctx: NodeContext) -> None:
    indices, values = ctx.inputs[0], ctx.inputs[2]
    y = ctx.outputs[0]
    out = ctx.shape(y)
    axis = _one_hot_axis(ctx.node, ctx.graph)
    p = ctx.params("aotc_one_hot_params", {
        "outer": c_int(_nelem(out[:axis])), "depth": c_int(out[axis]), "inner": c_int(_nelem(out[axis + 1:])),
        "elem_size": str(ctx.tensor(y).itemsize),
    }, comment=f"OneHot of {list(ctx.shape(indices))}, depth {out[axis]} on axis {axis} -> {list(out)}")
    ctx.call(f"aotc_one_hot_{ctx.suffix(indices)}", p, ctx.ptr(indices), ctx.ptr(values), ctx.ptr(y))


def _check_one_hot(node: Node, graph: Graph) -> str | None:
    indices = graph.tensors[node.inputs[0]]
    if indices.dtype not in ("int64", "int32", "float32"):
        return f"indices of dtype {indices.dtype} are not supported (int64, int32, float32)"
    if not 0 <= _one_hot_axis(node, graph) < len(graph.tensors[node.outputs[0]].shape):
        return f"axis {node.attrs.get('axis', -1)} is out of range"
    depth = graph.const(node.inputs[1])
    out = graph.tensors[node.outputs[0]].shape
    if depth is not None and int(np.asarray(depth).reshape(-1)[0]) != out[_one_hot_axis(node, graph)]:
        return f"depth {int(np.asarray(depth).reshape(-1)[0])} does not match the output {list(out)}"
    return check_shaped_by_values(node, graph)


def _emit_range(ctx: NodeContext) -> None:
    """start + k delta for the output's (static) length; start, limit or delta computed at run time must give
    that length (max(ceil((limit - start) / delta), 0), in the inputs' type for floats, in double for
    integers, as ONNX's reference), else the run returns AOTC_ERR_SHAPE before writing."""
    start, limit, delta, y = ctx.inputs[0], ctx.inputs[1], ctx.inputs[2], ctx.outputs[0]
    n = ctx.tensor(y).size
    if any(ctx.const(i) is None for i in (start, limit, delta)):
        ct = ctx.ctype(start)
        wide, ceil_fn = (ct, "ceilf") if ct == "float" else ("double", "ceil")
        ctx.line(f"{{ /* the run-time start, limit and delta must give the {n} values compiled */")
        ctx.line(f"    const {wide} span_ = ({wide}){ctx.ptr(limit)}[0] - ({wide}){ctx.ptr(start)}[0];")
        ctx.line(f"    const {wide} count_ = {ceil_fn}(span_ / ({wide}){ctx.ptr(delta)}[0]);")
        test = "count_ > 0" if n == 0 else f"count_ != {n}"
        ctx.line(f"    if ({test} || count_ != count_) return AOTC_ERR_SHAPE;")
        ctx.line("}")
    ctx.call(f"aotc_range_{ctx.suffix(y)}", c_int(ctx.tensor(y).size), ctx.ptr(start), ctx.ptr(delta), ctx.ptr(y))


def _check_range(node: Node, graph: Graph) -> str | None:
    """The output length is static: when start, limit and delta are constants it must be theirs."""
    values = [graph.const(i) for i in node.inputs[:3]]
    n = graph.tensors[node.outputs[0]].size
    if all(v is not None for v in values):
        start, limit, delta = (np.asarray(v).reshape(-1)[0] for v in values)
        if delta == 0 or n != max(int(np.ceil((limit - start) / delta)), 0):
            return f"start {start}, limit {limit} and delta {delta} do not give the output's {n} values"
    return check_shaped_by_values(node, graph)


# --- SpaceToDepth and DepthToSpace: one transposing copy -------------------------------------------

def depth_space_view(op: str, mode: str, shape: tuple[int, ...], b: int) -> tuple[list[int], list[int]]:
    """The 6-d view of the input and the permutation that makes the output (ONNX's definitions)."""
    n, c, h, w = shape
    if op == "DepthToSpace":
        if mode == "CRD":
            return [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3]
        return [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
    if mode == "CRD":
        return [n, c, h // b, b, w // b, b], [0, 1, 3, 5, 2, 4]
    return [n, c, h // b, b, w // b, b], [0, 3, 5, 1, 2, 4]


def _depth_space_mode(node: Node) -> str:
    mode = node.attrs.get("mode", "DCR")
    return mode.decode() if isinstance(mode, bytes) else mode


def _emit_depth_space(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    view, perm = depth_space_view(ctx.node.op, _depth_space_mode(ctx.node), ctx.shape(x), int(ctx.attrs["blocksize"]))
    strides = contiguous_strides(view)
    shape = [view[k] for k in perm]
    _strided_copy(ctx, shape, x, [strides[k] for k in perm], 0, y, contiguous_strides(shape), 0,
                  f"{ctx.node.op} {_depth_space_mode(ctx.node)} {list(ctx.shape(x))} -> {list(ctx.shape(y))}")


def _check_depth_space(node: Node, graph: Graph) -> str | None:
    shape, b = graph.tensors[node.inputs[0]].shape, int(node.attrs.get("blocksize", 0))
    if len(shape) != 4 or b <= 0:
        return f"input {list(shape)} with blocksize {b}: 4-D input and a positive blocksize needed"
    if _depth_space_mode(node) not in ("DCR", "CRD"):
        return f"mode '{_depth_space_mode(node)}' is not DCR or CRD"
    bad = shape[1] % (b * b) if node.op == "DepthToSpace" else (shape[2] % b or shape[3] % b)
    if bad:
        return f"input {list(shape)} does not divide by blocksize {b}"
    return check_sizes(node, graph)


# --- ScatterElements and ScatterND ----------------------------------------------------------------

SCATTER_REDUCTIONS = {"none": "AOTC_SCATTER_NONE", "add": "AOTC_SCATTER_ADD", "mul": "AOTC_SCATTER_MUL",
                      "max": "AOTC_SCATTER_MAX", "min": "AOTC_SCATTER_MIN"}
# the element kinds a reduction combines (add/mul wrap on integers, max/min compare as the type; float16 in float32,
# rounded back each time); any other dtype is copied only
SCATTER_KINDS = {**dict.fromkeys(("float32", "float64"), "AOTC_SCATTER_FLOAT"), "float16": "AOTC_SCATTER_HALF",
                 **dict.fromkeys(("int8", "int16", "int32", "int64"), "AOTC_SCATTER_INT"),
                 **dict.fromkeys(("uint8", "uint16", "uint32", "uint64"), "AOTC_SCATTER_UINT")}


def _scatter_reduction(node: Node) -> str:
    r = node.attrs.get("reduction", "none")
    return r.decode() if isinstance(r, bytes) else r


def _scatter_args(ctx: NodeContext) -> tuple[str, str]:
    """The reduction and element kind arguments of a scatter kernel."""
    return SCATTER_REDUCTIONS[_scatter_reduction(ctx.node)], SCATTER_KINDS.get(ctx.dtype(ctx.inputs[0]),
                                                                             "AOTC_SCATTER_BITS")


def _emit_scatter_elements(ctx: NodeContext) -> None:
    data, indices, updates = ctx.inputs[:3]
    y = ctx.outputs[0]
    shape = ctx.shape(data)
    axis = int(ctx.attrs.get("axis", 0)) % len(shape)
    p = ctx.params("aotc_gather_elements_params", {
        "rank": str(len(shape)), "elem_size": str(ctx.tensor(data).itemsize), "axis": str(axis),
        "axis_dim": c_int(shape[axis]), "shape": c_ints(ctx.shape(indices)),
        "data_strides": c_ints(contiguous_strides(shape)),
    }, comment=f"{ctx.node.op} axis {axis}: {list(shape)} with indices {list(ctx.shape(indices))}")
    kernel = "aotc_scatter_elements_i64" if ctx.dtype(indices) == "int64" else "aotc_scatter_elements_i32"
    ctx.call(kernel, p, *_scatter_args(ctx), f"{ctx.tensor(data).nbytes}u",
             ctx.ptr(data), ctx.ptr(indices), ctx.ptr(updates), ctx.ptr(y))


def _emit_scatter_nd(ctx: NodeContext) -> None:
    data, indices, updates = ctx.inputs[:3]
    y = ctx.outputs[0]
    shape, ishape = ctx.shape(data), ctx.shape(indices)
    k = ishape[-1]
    strides = contiguous_strides(shape)
    p = ctx.params("aotc_scatter_nd_params", {
        "n": c_int(_nelem(ishape[:-1])), "k": str(k), "elem_size": str(ctx.tensor(data).itemsize),
        "slice_elems": c_int(_nelem(shape[k:])), "dims": c_ints(list(shape[:k]) or [1]),
        "strides": c_ints(strides[:k] or [1]),
    }, comment=f"ScatterND: {list(shape)} with indices {list(ishape)}")
    ctx.call("aotc_scatter_nd", p, *_scatter_args(ctx), f"{ctx.tensor(data).nbytes}u",
             ctx.ptr(data), ctx.ptr(indices), ctx.ptr(updates), ctx.ptr(y))


def _check_scatter(node: Node, graph: Graph) -> str | None:
    reason = check_sizes(node, graph)
    if reason:
        return reason
    data, indices, updates = (graph.tensors[i] for i in node.inputs[:3])
    reduction = _scatter_reduction(node)
    if reduction not in SCATTER_REDUCTIONS:
        return f"reduction '{reduction}' is not one of {', '.join(SCATTER_REDUCTIONS)}"
    if reduction != "none" and data.dtype not in SCATTER_KINDS:
        return (f"reduction '{reduction}' on {data.dtype} is not supported (it combines float16, float32, float64 and "
                f"the 8- to 64-bit integers; {data.dtype} elements are copied only)")
    if updates.dtype != data.dtype:
        return f"updates of dtype {updates.dtype} for data of dtype {data.dtype}"
    if node.op == "ScatterND":
        if indices.dtype != "int64" or not indices.shape or not 0 < indices.shape[-1] <= len(data.shape):
            return f"indices {indices.dtype}{list(indices.shape)} do not index data {list(data.shape)}"
        if updates.shape != indices.shape[:-1] + data.shape[indices.shape[-1]:]:
            return f"updates {list(updates.shape)} do not match indices {list(indices.shape)}"
        return None
    if indices.dtype not in ("int64", "int32"):
        return f"indices of dtype {indices.dtype} are not supported (int64, int32)"
    if len(indices.shape) != len(data.shape) or updates.shape != indices.shape or not data.shape:
        return f"indices {list(indices.shape)} and updates {list(updates.shape)} must have the rank of data"
    if not -len(data.shape) <= int(node.attrs.get("axis", 0)) < len(data.shape):
        return f"axis {node.attrs.get('axis', 0)} is out of range for rank {len(data.shape)}"
    return None


# --- GatherND ----------------------------------------------------------------------------------

def _emit_gather_nd(ctx: NodeContext) -> None:
    data, indices = ctx.inputs[:2]
    shape, ishape = ctx.shape(data), ctx.shape(indices)
    b, k = int(ctx.attrs.get("batch_dims", 0)), ishape[-1]
    strides = contiguous_strides(shape[b:])
    p = ctx.params("aotc_gather_nd_params", {
        "batch": c_int(_nelem(shape[:b])), "n": c_int(_nelem(ishape[b:-1])), "k": str(k),
        "elem_size": str(ctx.tensor(data).itemsize), "slice_elems": c_int(_nelem(shape[b + k:])),
        "batch_elems": c_int(_nelem(shape[b:])), "dims": c_ints(list(shape[b:b + k]) or [1]),
        "strides": c_ints(strides[:k] or [1]),
    }, comment=f"GatherND batch_dims {b}: {list(shape)} with indices {list(ishape)}")
    ctx.call("aotc_gather_nd", p, ctx.ptr(data), ctx.ptr(indices), ctx.ptr(ctx.outputs[0]))


def _check_gather_nd(node: Node, graph: Graph) -> str | None:
    reason = check_sizes(node, graph)
    if reason:
        return reason
    data, indices = graph.tensors[node.inputs[0]], graph.tensors[node.inputs[1]]
    b = int(node.attrs.get("batch_dims", 0))
    if indices.dtype != "int64" or len(indices.shape) < b + 1 or not 0 < indices.shape[-1] <= len(data.shape) - b:
        return f"indices {indices.dtype}{list(indices.shape)} do not index data {list(data.shape)}"
    if indices.shape[:b] != data.shape[:b]:
        return f"batch dims of indices {list(indices.shape)} and data {list(data.shape)} differ"
    return None


OPS: dict[str, HostOp] = {
    "Where": HostOp(_emit_where, family="index", dtypes=("bool",), check=_check_where),
    "Expand": HostOp(_emit_expand, family="shape", dtypes=ANY_DTYPE, check=_check_expand),
    "Tile": HostOp(_emit_tile, family="shape", dtypes=ANY_DTYPE, check=_check_tile),
    "ArgMax": HostOp(_emit_arg, family="index", dtypes=ARG_DTYPES, check=_check_arg),
    "ArgMin": HostOp(_emit_arg, family="index", dtypes=ARG_DTYPES, check=_check_arg),
    "Trilu": HostOp(_emit_trilu, family="index", dtypes=ANY_DTYPE, check=_check_trilu),
    "Compress": HostOp(_emit_compress, family="index", dtypes=ANY_DTYPE, check=_check_compress),
    "Unique": HostOp(_emit_unique, family="index", dtypes=tuple(UNIQUE_KINDS), check=_check_unique,
                     kernels=(fixed_scratch("", _unique_scratch),)),
    "CumSum": HostOp(_emit_cumsum, family="index", dtypes=CUMSUM_DTYPES, check=_check_cumsum),
    "CumProd": HostOp(_emit_cumsum, family="index", dtypes=CUMSUM_DTYPES, check=_check_cumsum),
    "Hardmax": HostOp(_emit_hardmax, family="index", dtypes=("float32", "float64"), check=_check_hardmax),
    "EyeLike": HostOp(_emit_eye, family="index", dtypes=ANY_DTYPE, check=_check_eye),
    "OneHot": HostOp(_emit_one_hot, family="index", dtypes=("int64", "int32", "float32"), check=_check_one_hot),
    "Range": HostOp(_emit_range, family="index", dtypes=("float32", "float64", "int16", "int32", "int64"),
                    check=_check_range),
    "SpaceToDepth": HostOp(_emit_depth_space, family="shape", dtypes=ANY_DTYPE, check=_check_depth_space),
    "DepthToSpace": HostOp(_emit_depth_space, family="shape", dtypes=ANY_DTYPE, check=_check_depth_space),
    "ScatterElements": HostOp(_emit_scatter_elements, family="index", dtypes=ANY_DTYPE, check=_check_scatter),
    "Scatter": HostOp(_emit_scatter_elements, family="index", dtypes=ANY_DTYPE, check=_check_scatter),
    "ScatterND": HostOp(_emit_scatter_nd, family="index", dtypes=ANY_DTYPE, check=_check_scatter),
    "GatherND": HostOp(_emit_gather_nd, family="index", dtypes=ANY_DTYPE, check=_check_gather_nd),
    "GatherElements": HostOp(_emit_gather_elements, family="index", dtypes=ANY_DTYPE, check=_check_gather_elements),
}
