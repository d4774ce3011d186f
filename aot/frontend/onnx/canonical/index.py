"""AffineGrid as a MatMul of theta by the base grid (aot/kernels/index.py runs GridSample);
ReverseSequence as a Gather of the (batch, time) rows; MaxUnpool as a ScatterND into zeros; Col2Im as a
ScatterElements adding each column's values at their (constant) image positions; TensorScatter as a
ScatterElements at each batch's write index on."""

from __future__ import annotations

import itertools

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import Builder, shape_of
from aot.ir import Graph, Node
from aot.ir.evaluate import evaluate_node


def affine_grid(node: Node, graph: Graph, opset: int) -> list[Node]:
    """AffineGrid -> theta [N, r, r+1] times the base grid's homogeneous points (a constant: onnx's
    reference on the identity theta), transposed and reshaped to [N, ..., r]. A size computed at run time
    is the declared output shape's, checked at run time (CheckValues)."""
    from onnx import helper


    theta, size = node.inputs[:2]
    y = graph.tensors[node.outputs[0]]
    n, r = shape_of(graph, theta)[0], shape_of(graph, theta)[1]
    spatial = y.shape[1:-1]
    dims = [n, 1, *spatial]  # the channel count does not matter: check it is what size says below
    b = Builder(node, graph)
    value = graph.const(size)
    if value is not None:
        dims = [int(v) for v in value.reshape(-1)]
        if [dims[0], *dims[2:]] != [n, *spatial]:
            raise AotcError(f"AffineGrid size {dims} does not give the output {list(y.shape)}", node=node)
    else:
        checked = b.tensor(shape_of(graph, theta))
        b.nodes.append(Node("CheckValues", f"{node.name}__check", [theta, size], [checked],
                            {"expected": [n, -1, *spatial], "skip": [1]}, node.sources()))
        theta = checked
    proto = helper.make_node("AffineGrid", ["in0", "in1"], ["out0"],
                             align_corners=int(node.attrs.get("align_corners", 0)))
    eye = np.eye(r, r + 1, dtype=np.float32)[None]
    base = evaluate_node(proto, [eye, np.array([1, 1, *spatial], np.int64)], [helper.make_opsetid("", opset)])[0]
    points = int(np.prod(spatial))
    homog = np.concatenate([base.reshape(points, r), np.ones((points, 1), np.float32)], axis=1).T  # [r+1, P]
    prod = b.add("MatMul", [theta, b.tensor(homog.shape, np.ascontiguousarray(homog, np.float32))], (n, r, points))
    moved = b.add("Transpose", [prod], (n, points, r), {"perm": [0, 2, 1]})
    b.add("Reshape", [moved], None, out=node.outputs[0])
    return b.nodes


def reverse_sequence(node: Node, graph: Graph, opset: int) -> list[Node]:
    """ReverseSequence -> one Gather of rows: the input viewed as [T*B, ...] (its batch and time axes,
    0 and 1 in either order, flattened), row (t, b) taken from (lens[b] - 1 - t, b) where t < lens[b],
    else from itself. With sequence_lens constant the row indices are a constant (a length beyond T is
    refused); given at run time, they are computed by Less, Sub and Where, and the rows a length
    beyond T would read past the input are zeros (onnxruntime raises an error there)."""
    x, lens = node.inputs[:2]
    shape = shape_of(graph, x)
    if len(shape) < 2:
        raise AotcError(f"ReverseSequence needs an input of rank 2 or more, got {list(shape)}", node=node)
    batch_axis, time_axis = int(node.attrs.get("batch_axis", 1)), int(node.attrs.get("time_axis", 0))
    if sorted((batch_axis, time_axis)) != [0, 1]:
        raise AotcError(f"ReverseSequence's batch_axis ({batch_axis}) and time_axis ({time_axis}) must be 0 and 1",
                        node=node)
    t_len, b_len = shape[time_axis], shape[batch_axis]
    if shape_of(graph, lens) != (b_len,):
        raise AotcError(f"sequence_lens is {list(shape_of(graph, lens))}, the batch is {b_len}", node=node)
    b = Builder(node, graph)
    rows = t_len * b_len
    time_major = time_axis == 0
    t = np.arange(t_len, dtype=np.int64)[:, None] if time_major else np.arange(t_len, dtype=np.int64)[None, :]
    batch = np.arange(b_len, dtype=np.int64)[None, :] if time_major else np.arange(b_len, dtype=np.int64)[:, None]
    value = graph.const(lens)
    if value is not None:
        n = np.asarray(value, np.int64).reshape(-1)
        if ((n < 0) | (n > t_len)).any():
            raise AotcError(f"sequence_lens {n.tolist()} must each be between 0 and the time axis' {t_len}",
                            node=node)
        n = n[None, :] if time_major else n[:, None]
        src_t = np.where(t < n, n - 1 - t, t)
        flat = src_t * b_len + batch if time_major else batch * t_len + src_t
        index = b.tensor((rows,), np.ascontiguousarray(flat.reshape(-1)), "int64")
    else:
        grid = (t_len, b_len) if time_major else (b_len, t_len)
        t_c = b.tensor(t.shape, t, "int64")
        n_c = b.add("Reshape", [lens], (1, b_len) if time_major else (b_len, 1), dtype="int64")
        inside = b.add("Less", [t_c, n_c], grid, dtype="bool")
        one = b.tensor((), np.array(1, np.int64), "int64")
        back = b.add("Sub", [b.add("Sub", [n_c, t_c], grid, dtype="int64"), one], grid, dtype="int64")
        src_t = b.add("Where", [inside, back, b.tensor(grid, np.broadcast_to(t, grid).copy(), "int64")], grid,
                      dtype="int64")
        stride = b.tensor((), np.array(b_len if time_major else 1, np.int64), "int64")
        offset = batch * (1 if time_major else t_len)
        scaled = b.add("Mul", [src_t, stride], grid, dtype="int64")
        flat = b.add("Add", [scaled, b.tensor(offset.shape, offset, "int64")], grid, dtype="int64")
        # a length beyond T (onnxruntime refuses it) reaches past its own rows: made an index out of
        # range, which Gather gives as zeros, rather than the next sequence's row
        valid = b.add("Less", [src_t, b.tensor((), np.array(t_len, np.int64), "int64")], grid, dtype="bool")
        flat = b.add("Where", [valid, flat, b.tensor((), np.array(rows, np.int64), "int64")], grid, dtype="int64")
        index = b.add("Reshape", [flat], (rows,), dtype="int64")
    dtype = graph.tensors[x].dtype
    viewed = b.add("Reshape", [x], (rows, *shape[2:]), dtype=dtype)
    gathered = b.add("Gather", [viewed, index], (rows, *shape[2:]), {"axis": 0}, dtype=dtype)
    b.add("Reshape", [gathered], None, out=node.outputs[0])
    return b.nodes


def max_unpool(node: Node, graph: Graph, opset: int) -> list[Node]:
    """MaxUnpool -> X's values scattered (ScatterND) at their flat indices into zeros of the shape the
    pooling attributes give, which an output_shape larger than it pads with zeros at the end of each
    axis (as onnx's reference and its node tests place them; onnxruntime indexes the larger shape
    instead). A run-time output_shape is the declared output's, checked at run time (CheckValues)."""
    x, indices = node.inputs[:2]
    out_shape = shape_of(graph, node.outputs[0])
    x_shape = shape_of(graph, x)
    kernel = [int(k) for k in node.attrs["kernel_shape"]]
    r = len(kernel)
    strides = [int(v) for v in node.attrs.get("strides") or [1] * r]
    pads = [int(v) for v in node.attrs.get("pads") or [0] * (2 * r)]
    inferred = (*x_shape[:2], *((x_shape[2 + d] - 1) * strides[d] - pads[d] - pads[r + d] + kernel[d]
                                for d in range(r)))
    if len(x_shape) != r + 2 or shape_of(graph, indices) != x_shape:
        raise AotcError(f"indices {list(shape_of(graph, indices))} and X {list(x_shape)} must be of one shape "
                        f"[N, C, {r} spatial dims]", node=node)
    if len(out_shape) != len(inferred) or any(o < i for o, i in zip(out_shape, inferred, strict=True)) or \
            list(out_shape[:2]) != list(inferred[:2]):
        raise AotcError(f"output {list(out_shape)} is smaller than the unpooled {list(inferred)}", node=node)
    b = Builder(node, graph)
    dtype = graph.tensors[x].dtype
    shape_in = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
    if shape_in:
        value = graph.const(shape_in)
        if value is None:
            checked = b.tensor(x_shape, dtype=dtype)
            b.nodes.append(Node("CheckValues", f"{node.name}__check", [x, shape_in], [checked],
                                {"expected": [int(v) for v in out_shape]}, node.sources()))
            x = checked
        elif [int(v) for v in value.reshape(-1)] != list(out_shape):
            raise AotcError(f"output_shape {value.reshape(-1).tolist()} is not the output's {list(out_shape)}",
                            node=node)
    total, k = int(np.prod(inferred)), int(np.prod(x_shape))
    zeros = b.tensor((total,), np.zeros(total, dtype), dtype=dtype)
    flat_i = b.add("Reshape", [indices], (k, 1), dtype="int64")
    flat_x = b.add("Reshape", [x], (k,), dtype=dtype)
    if tuple(out_shape) == tuple(inferred):
        scattered = b.add("ScatterND", [zeros, flat_i, flat_x], (total,), dtype=dtype)
        b.add("Reshape", [scattered], None, out=node.outputs[0], dtype=dtype)
        return b.nodes
    scattered = b.add("ScatterND", [zeros, flat_i, flat_x], (total,), dtype=dtype)
    grid = b.add("Reshape", [scattered], inferred, dtype=dtype)
    ends = [o - i for o, i in zip(out_shape, inferred, strict=True)]
    b.nodes.append(Node("Pad", node.name, [grid], list(node.outputs),
                        {"pads": [0] * len(ends) + ends, "mode": "constant", "value": 0}, node.sources()))
    return b.nodes


def col2im(node: Node, graph: Graph, opset: int) -> list[Node]:
    """Col2Im -> the columns [N, C * prod(block), L] viewed as [N, C, prod(block) * L] and added
    (ScatterElements, reduction add) into zeros [N, C, 1 + prod(image)] at each value's image position, a
    constant map (slot 0 takes what falls on the padding), then slot 0 dropped (a Gather) and the rest
    shaped as the image. image_shape is the declared output's; a block_shape computed at run time is the
    one that fits the input's shape (checked at run time, CheckValues), refused where two would."""
    x, image, block = node.inputs[:3]
    xs, out = shape_of(graph, x), shape_of(graph, node.outputs[0])
    r = len(out) - 2
    n, c, img = out[0], out[1], list(out[2:])
    dil = [int(v) for v in node.attrs.get("dilations") or [1] * r]
    pads = [int(v) for v in node.attrs.get("pads") or [0] * (2 * r)]
    strides = [int(v) for v in node.attrs.get("strides") or [1] * r]
    if len(xs) != 3 or xs[0] != n or r < 1 or xs[1] % c:
        raise AotcError(f"input {list(xs)} is not the columns of the output {list(out)}", node=node)
    cols, length = xs[1] // c, xs[2]

    def counts(blk: tuple[int, ...]) -> list[int] | None:
        res = []
        for d, k in enumerate(blk):
            span, eff = img[d] + pads[d] + pads[r + d], dil[d] * (k - 1) + 1
            if k < 1 or eff > span:
                return None
            res.append((span - eff) // strides[d] + 1)
        return res

    ivals, bvals = graph.const(image), graph.const(block)
    if ivals is not None and [int(v) for v in ivals.reshape(-1)] != img:
        raise AotcError(f"image_shape {ivals.reshape(-1).tolist()} is not the output's {img}", node=node)
    if bvals is not None:
        candidates = [tuple(int(v) for v in bvals.reshape(-1))]
    else:
        candidates = [blk for blk in itertools.product(*[[k for k in range(1, cols + 1) if cols % k == 0]] * r)
                      if int(np.prod(blk)) == cols]
    fits = [blk for blk in candidates if int(np.prod(blk)) == cols and (cs := counts(blk)) is not None
            and int(np.prod(cs)) == length]
    if bvals is not None and not fits:
        raise AotcError(f"block_shape {list(candidates[0])} does not give the input {list(xs)} for the output "
                        f"{list(out)}", node=node)
    if len(fits) != 1:
        shown = " and ".join(str(list(f)) for f in fits) or "none"
        raise AotcError(f"block_shape is computed at run time and the shapes fit {shown}: give it as a constant "
                        "(--input-value)", node=node)
    blk = fits[0]
    nblocks = counts(blk)
    assert nblocks is not None
    b = Builder(node, graph)
    dtype = graph.tensors[x].dtype
    if ivals is None:
        x = _checked(b, node, x, image, img, xs, dtype)
    if bvals is None:
        x = _checked(b, node, x, block, list(blk), xs, dtype)
    pixels = int(np.prod(img))
    where = np.zeros((cols, length), np.int64)  # slot in [1 + image] of column row b, block position l
    for bi, kk in enumerate(itertools.product(*[range(k) for k in blk])):
        for li, start in enumerate(itertools.product(*[range(m) for m in nblocks])):
            pos = [start[d] * strides[d] - pads[d] + kk[d] * dil[d] for d in range(r)]
            if all(0 <= p < img[d] for d, p in enumerate(pos)):
                where[bi, li] = 1 + int(np.ravel_multi_index(pos, img))
    idx = np.ascontiguousarray(np.broadcast_to(where.reshape(1, 1, -1), (n, c, cols * length)))
    viewed = b.add("Reshape", [x], (n, c, cols * length), dtype=dtype)
    zeros = b.tensor((n, c, 1 + pixels), np.zeros((n, c, 1 + pixels), dtype), dtype=dtype)
    added = b.add("ScatterElements", [zeros, b.tensor(idx.shape, idx, dtype="int64"), viewed], (n, c, 1 + pixels),
                  {"axis": 2, "reduction": "add"}, dtype=dtype)
    kept = b.add("Gather", [added, b.tensor((pixels,), np.arange(1, pixels + 1, dtype=np.int64), dtype="int64")],
                 (n, c, pixels), {"axis": 2}, dtype=dtype)
    b.add("Reshape", [kept], None, out=node.outputs[0], dtype=dtype)
    return b.nodes


def _checked(b: Builder, node: Node, x: str, values: str, expected: list[int], shape: tuple[int, ...],
             dtype: str) -> str:
    """x, once the run-time `values` are found to be `expected` (else the run returns AOTC_ERR_SHAPE)."""
    checked = b.tensor(shape, dtype=dtype)
    b.nodes.append(Node("CheckValues", f"{node.name}__check{len(b.nodes)}", [x, values], [checked],
                        {"expected": expected}, node.sources()))
    return checked


def tensor_scatter(node: Node, graph: Graph, opset: int) -> list[Node]:
    """TensorScatter -> ScatterElements of update into past_cache along the sequence axis, at rows
    write_indices[b] + j (mod the cache's length in circular mode) for batch b: a constant where
    write_indices is (or is absent: 0), else computed at run time (Reshape, Add, Mod, Expand)."""
    past, update = node.inputs[:2]
    wi = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
    ps, us = shape_of(graph, past), shape_of(graph, update)
    rank = len(ps)
    mode = node.attrs.get("mode", "linear")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    axis = int(node.attrs.get("axis", -2))
    axis = axis + rank if axis < 0 else axis
    if mode not in ("linear", "circular"):
        raise AotcError(f"mode '{mode}' is not linear or circular", node=node)
    if rank < 2 or not 0 < axis < rank or len(us) != rank or \
            any(u != p for k, (u, p) in enumerate(zip(us, ps, strict=True)) if k != axis) or us[axis] > ps[axis]:
        raise AotcError(f"update {list(us)} does not fit past_cache {list(ps)} along axis {axis}", node=node)
    steps = np.arange(us[axis], dtype=np.int64).reshape([us[axis] if k == axis else 1 for k in range(rank)])
    b = Builder(node, graph)
    dtype = graph.tensors[past].dtype
    value = np.zeros(ps[0], np.int64) if not wi else graph.const(wi)
    if value is not None:
        rows = value.astype(np.int64).reshape([ps[0]] + [1] * (rank - 1)) + steps
        if mode == "circular":
            rows = rows % ps[axis]
        if rows.min() < 0 or rows.max() >= ps[axis]:
            raise AotcError(f"write_indices {value.reshape(-1).tolist()} write past the cache's {ps[axis]} rows",
                            node=node)
        idx = b.tensor(us, np.ascontiguousarray(np.broadcast_to(rows, us)), dtype="int64")
    else:
        first = b.add("Reshape", [wi], (ps[0], *[1] * (rank - 1)), dtype="int64")
        rows = b.add("Add", [first, b.tensor(steps.shape, steps, dtype="int64")],
                     (ps[0], *[us[axis] if k == axis else 1 for k in range(1, rank)]), dtype="int64")
        if mode == "circular":
            rows = b.add("Mod", [rows, b.tensor((), np.array(ps[axis], np.int64), dtype="int64")],
                         shape_of(graph, rows), {"fmod": 0}, dtype="int64")
        idx = b.add("Expand", [rows], us, dtype="int64")
    b.add("ScatterElements", [past, idx, update], None, {"axis": axis, "reduction": "none"},
          out=node.outputs[0], dtype=dtype)
    return b.nodes
