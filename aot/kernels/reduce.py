"""Host ops of the 'reduce' family (kernels in runtime_c/kernels/reduce/reduce.c): ONNX Reduce*.

canonical/reduce.py gives every Reduce node `axes` (sorted, non-negative, never empty: an
empty axes list means "all", and noop_with_empty_axes became an Identity) and
`keepdims`. Here the input shape is reduced to a few blocks at compile time: size-1
dims are dropped and neighbouring dims that are both kept or both reduced merge, so
(2, 3, 4, 5) over axes (2, 3) is [6 kept, 20 reduced] and over axes (0, 2) is
[2 reduced, 3 kept, 4 reduced, 5 kept]. The kernel walks x in memory order and
folds each element into its output; keepdims only changes the output's shape.
"""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_float, c_int, c_ints
from aot.ir import Graph, Node
from aot.ir.schemas import SWISH_MEAN
from aot.kernels.base import NO_SCRATCH, HostOp, NodeContext, fixed_scratch

MAX_RANK = 8

KERNELS = {
    "ReduceSum": "sum",
    "ReduceMean": "mean",
    "ReduceMax": "max",
    "ReduceMin": "min",
    "ReduceProd": "prod",
    "ReduceL1": "l1",
    "ReduceL2": "l2",
    "ReduceSumSquare": "sum_square",
    "ReduceLogSum": "log_sum",
    "ReduceLogSumExp": "log_sum_exp",
}


def reduce_layout(shape: tuple[int, ...], axes: list[int]) -> tuple[list[int], list[int]]:
    """(merged dims, y stride of each merged dim; 0 where reduced) for reducing `shape` over `axes`."""
    blocks: list[list] = []  # [size, reduced]
    for k, n in enumerate(shape):
        if n == 1:
            continue
        reduced = k in axes
        if blocks and blocks[-1][1] == reduced:
            blocks[-1][0] *= n
        else:
            blocks.append([n, reduced])
    if not blocks:
        blocks = [[1, False]]
    strides, acc = [0] * len(blocks), 1
    for k in range(len(blocks) - 1, -1, -1):
        if not blocks[k][1]:
            strides[k] = acc
            acc *= blocks[k][0]
    return [b[0] for b in blocks], strides


def _check(node: Node, graph: Graph) -> str | None:
    shape = graph.tensors[node.inputs[0]].shape
    if 0 in shape:
        return f"an input with a zero-size dimension {list(shape)} is not supported"
    for axes in node.attrs.get("axes_choices") or [node.attrs["axes"]]:
        dims, _ = reduce_layout(shape, axes)
        if len(dims) > MAX_RANK:
            return f"reducing {list(shape)} over axes {axes} needs {len(dims)} loop levels (at most {MAX_RANK})"
    if len(node.inputs) > 1 and graph.tensors[node.inputs[1]].dtype not in ("int64", "int32"):
        return f"axes of dtype {graph.tensors[node.inputs[1]].dtype} are not supported"
    return None


def _scratch(node: Node, graph: Graph) -> int:
    """ReduceLogSumExp keeps the maxima (one value per output, of its type) while it sums."""
    y = graph.tensors[node.outputs[0]]
    return y.itemsize * y.size if node.op == "ReduceLogSumExp" else 0


def _emit(ctx: NodeContext) -> None:
    choices = ctx.attrs.get("axes_choices")
    if not choices:
        _emit_call(ctx, ctx.attrs["axes"])
        return
    # axes read at run time, the shapes allowing several sets (canonical/reduce.py): one call per set, taken by
    # the set the axes name (as a bit mask, negatives counted from the end); any other: AOTC_ERR_SHAPE
    rank, axes_in = len(ctx.shape(ctx.inputs[0])), ctx.inputs[1]
    ctx.line("{")
    ctx.line(f"    const {ctx.ctype(axes_in)} *axes_ = {ctx.ptr(axes_in)};")
    ctx.line("    uint32_t mask_ = 0u;")
    ctx.line("    int32_t i_;")
    ctx.line(f"    for (i_ = 0; i_ < {ctx.tensor(axes_in).size}; ++i_) {{")
    ctx.line(f"        const int64_t a_ = axes_[i_] < 0 ? (int64_t)axes_[i_] + {rank} : (int64_t)axes_[i_];")
    ctx.line(f"        if (a_ < 0 || a_ >= {rank}) return AOTC_ERR_SHAPE;")
    ctx.line("        mask_ |= 1u << a_;")
    ctx.line("    }")
    for k, axes in enumerate(choices):
        ctx.line(f"    {'if' if k == 0 else '} else if'} (mask_ == {sum(1 << a for a in axes)}u) {{ /* axes {axes} */")
        _emit_call(ctx, axes)
    ctx.line("    } else {")
    ctx.line("        return AOTC_ERR_SHAPE;")
    ctx.line("    }")
    ctx.line("}")


def _emit_call(ctx: NodeContext, axes: list[int]) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    shape = ctx.shape(x)
    dims, y_strides = reduce_layout(shape, axes)
    count = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    p = ctx.params("aotc_reduce_params", {
        "rank": str(len(dims)), "shape": c_ints(dims), "y_strides": c_ints(y_strides),
        "y_size": c_int(ctx.tensor(y).size), "count": c_int(count),
    }, comment=f"{ctx.node.op} of {list(shape)} over axes {axes}, keepdims={ctx.attrs['keepdims']} "
               f"-> {list(ctx.shape(y))}")
    kernel = KERNELS[ctx.node.op]
    extra = [ctx.scratch(ctx.ctype(x))] if ctx.node.op == "ReduceLogSumExp" else []
    ctx.call(f"aotc_reduce_{kernel}_{ctx.suffix(x)}", p, ctx.ptr(x), ctx.ptr(y), *extra)


def _emit_swish_mean(ctx: NodeContext) -> None:
    """SwishMean (aot/passes/fuse_swish_mean.py): x's N x C planes of H x W (every dim from 2 on)."""
    x, y, m = ctx.inputs[0], ctx.outputs[0], ctx.outputs[1]
    shape = ctx.shape(x)
    planes, hw = int(np.prod(shape[:2], dtype=np.int64)), int(np.prod(shape[2:], dtype=np.int64))
    ctx.comment(f"Swish of {list(shape)} and the mean of each of its {planes} planes of {hw}")
    ctx.call("aotc_swish_mean_f32", c_int(planes), c_int(hw), ctx.ptr(x), ctx.ptr(y), ctx.ptr(m),
             c_float(ctx.attrs["alpha"]))


_INT_DTYPES = ("int8", "uint8", "int32")  # ReduceMax / ReduceMin pick an element: exact on integers

def _det_scratch(node: Node, graph: Graph) -> int:
    """Det eliminates in a double copy of one matrix."""
    n = graph.tensors[node.inputs[0]].shape[-1]
    return 8 * n * n


def _check_det(node: Node, graph: Graph) -> str | None:
    shape = graph.tensors[node.inputs[0]].shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        return f"the input must be square matrices [..., n, n], got {list(shape)}"
    if 0 in shape:
        return f"an input with a zero-size dimension {list(shape)} is not supported"
    return None


def _emit_det(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    shape = ctx.shape(x)
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    ctx.comment(f"Det of {batch} {shape[-1]} x {shape[-1]} matrices")
    ctx.call("aotc_det_f32", c_int(batch), c_int(shape[-1]), ctx.ptr(x), ctx.ptr(y), ctx.scratch("double"))


OPS: dict[str, HostOp] = {
    op: HostOp(_emit, family="reduce", check=_check,
               dtypes=("float32", "float64", *(_INT_DTYPES if op in ("ReduceMax", "ReduceMin") else ())),
               kernels=(fixed_scratch("", _scratch),) if op == "ReduceLogSumExp" else (NO_SCRATCH,))
    for op in KERNELS
}
OPS[SWISH_MEAN] = HostOp(_emit_swish_mean, family="reduce", dtypes=("float32",))
OPS["Det"] = HostOp(_emit_det, family="reduce", check=_check_det, dtypes=("float32",),
                    kernels=(fixed_scratch("", _det_scratch),))
