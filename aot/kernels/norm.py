"""Host ops of the 'norm' family (kernels in runtime_c/kernels/norm/norm.c).

BatchNormalization (inference form) becomes one multiply-add per element: with constant
parameters its per-channel scale and shift are computed here, in float64, and emitted as
constant arrays; parameters known only at run time are turned into scale and shift in
scratch space by a small prepare kernel first. Softmax and LogSoftmax arrive canonical as
(outer, n, inner), which covers both ONNX axis semantics. LayerNormalization and
RMSNormalization arrive as (rows, n): each row of n elements is normalised by its own
statistics, computed in one pass (runtime_c/kernels/norm/aotc_norm.h says how, and how accurately).
"""

from __future__ import annotations

import math

import numpy as np

from aot.csource.format import c_float
from aot.ir import Graph, Node
from aot.ir.schemas import NORM_INNER_ATTR
from aot.kernels.base import HostOp, NodeContext, fixed_scratch


def _channels_layout(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(batch, channels, product of the dims after the channel axis)."""
    return shape[0], shape[1], int(np.prod(shape[2:], dtype=np.int64))


def _min_rank(rank: int):
    def check(node: Node, graph: Graph) -> str | None:
        got = len(graph.tensors[node.inputs[0]].shape)
        return f"input rank {got} is below {rank} (expected N, C, ...)" if got < rank else None
    return check


# --- BatchNormalization -------------------------------------------------------------------

def _bn_params_const(node: Node, graph: Graph) -> bool:
    return all(graph.const(i) is not None for i in node.inputs[1:5])


def _check_batchnorm(node: Node, graph: Graph) -> str | None:
    reason = _min_rank(2)(node, graph)
    if reason:
        return reason
    channels = graph.tensors[node.inputs[0]].shape[1]
    for what, name in zip(("scale", "B", "mean", "var"), node.inputs[1:5], strict=True):
        shape = graph.tensors[name].shape
        if shape != (channels,):
            return f"{what} has shape {list(shape)}, expected [{channels}] (one value per channel)"
        if graph.tensors[name].dtype != "float32":
            return f"{what} has dtype {graph.tensors[name].dtype}, expected float32"
    return None


def _batchnorm_scratch(node: Node, graph: Graph) -> int:
    if _bn_params_const(node, graph):
        return 0
    return 2 * graph.tensors[node.inputs[0]].shape[1] * 4


def _emit_batchnorm(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    batch, channels, inner = _channels_layout(ctx.shape(x))
    eps = float(ctx.attrs["epsilon"])
    gamma, beta, mean, var = ctx.inputs[1:5]
    if _bn_params_const(ctx.node, ctx.graph):
        g, b, m, v = (ctx.const(i).astype(np.float64) for i in (gamma, beta, mean, var))
        s = g / np.sqrt(v + eps)
        scale = ctx.const_array("scale", s.astype(np.float32), comment="gamma / sqrt(var + epsilon)")
        shift = ctx.const_array("shift", (b - m * s).astype(np.float32), comment="beta - mean * scale")
    else:
        scratch = ctx.scratch("float")
        scale, shift = scratch, f"{scratch} + {channels}"
        p = ctx.params("aotc_batchnorm_prepare_params", {"channels": str(channels), "epsilon": c_float(eps)},
                       comment=f"BatchNormalization epsilon {eps}; parameters known at run time")
        ctx.call("aotc_batchnorm_prepare_f32", p, *(ctx.ptr(i) for i in (gamma, beta, mean, var)), scale, shift)
    ctx.call("aotc_batchnorm_f32", str(batch), str(channels), str(inner), ctx.ptr(x), scale, shift, ctx.ptr(y))


# --- InstanceNormalization, LRN ---------------------------------------------------------------

def _emit_instance_norm(ctx: NodeContext) -> None:
    x, scale, bias = ctx.inputs[:3]
    y = ctx.outputs[0]
    batch, channels, spatial = _channels_layout(ctx.shape(x))
    p = ctx.params("aotc_instance_norm_params", {
        "batch": str(batch), "channels": str(channels), "spatial": str(spatial),
        "epsilon": c_float(ctx.attrs["epsilon"]),
    }, comment=f"InstanceNormalization {list(ctx.shape(x))}, epsilon {ctx.attrs['epsilon']}")
    ctx.call("aotc_instance_norm_f32", p, ctx.ptr(x), ctx.ptr(scale), ctx.ptr(bias), ctx.ptr(y))


def _check_lrn(node: Node, graph: Graph) -> str | None:
    size = node.attrs.get("size")
    if not isinstance(size, int) or size < 1:
        return f"size {size!r} must be a positive integer"
    return _min_rank(3)(node, graph)


def _emit_lrn(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    batch, channels, spatial = _channels_layout(ctx.shape(x))
    a = ctx.attrs
    size = int(a["size"])
    p = ctx.params("aotc_lrn_params", {
        "batch": str(batch), "channels": str(channels), "spatial": str(spatial),
        "before": str((size - 1) // 2), "after": str(math.ceil((size - 1) / 2)),
        "alpha_over_size": c_float(np.float32(a["alpha"]) / np.float32(size)),
        "beta": c_float(a["beta"]), "bias": c_float(a["bias"]),
    }, comment=f"LRN size {size}, alpha {a['alpha']}, beta {a['beta']}, bias {a['bias']}")
    ctx.call("aotc_lrn_f32", p, ctx.ptr(x), ctx.ptr(y))


# --- LayerNormalization, RMSNormalization ---------------------------------------------------

def _row_shape(node: Node, graph: Graph) -> tuple[int, ...]:
    """The normalised dims: X's from the axis on."""
    return graph.tensors[node.inputs[0]].shape[node.attrs["axis"]:]


def _row_param_reason(node: Node, graph: Graph, k: int, what: str) -> str | None:
    """Why input k (Scale or B, broadcast against X by numpy's rules) cannot be one value per
    element of a row: it varies across rows, or it is computed at run time and broadcasts."""
    if k >= len(node.inputs) or not node.inputs[k]:
        return None
    x = graph.tensors[node.inputs[0]].shape
    t = graph.tensors[node.inputs[k]]
    if t.dtype != "float32":
        return f"{what} has dtype {t.dtype}, expected float32"
    axis, row = node.attrs["axis"], _row_shape(node, graph)
    if len(t.shape) > len(x):
        return f"{what} of shape {list(t.shape)} has more dims than X {list(x)}"
    shape = (1,) * (len(x) - len(t.shape)) + t.shape
    if any(d != 1 for d in shape[:axis]) or \
            any(d not in (1, r) for d, r in zip(shape[axis:], row, strict=True)):
        return (f"{what} of shape {list(t.shape)} is not one value per normalised element of X {list(x)} "
                f"(axis {axis}): only a {what} that broadcasts within a row is supported")
    if not t.is_const and shape[axis:] != row:
        return f"{what} of shape {list(t.shape)} computed at run time broadcasts over the row {list(row)}: " \
               "not supported (a constant one is)"
    return None


def _check_layer_norm(node: Node, graph: Graph) -> str | None:
    if node.attrs.get(NORM_INNER_ATTR, 1) != 1:  # ChannelLayerNorm's: n constant values each, Y only
        return None
    for k, what in ((1, "scale"), (2, "bias")):
        reason = _row_param_reason(node, graph, k, what)
        if reason:
            return reason
    for o in node.outputs[1:]:
        if o and graph.tensors[o].dtype != node.attrs["stash"]:
            return f"output '{o}' is {graph.tensors[o].dtype}, expected {node.attrs['stash']} (stash_type)"
    return None


def _row_operand(ctx: NodeContext, k: int, what: str) -> str:
    """Input k as n floats: itself when it already is, else broadcast here (a constant)."""
    if k >= len(ctx.inputs) or not ctx.inputs[k]:
        return "NULL"
    name = ctx.inputs[k]
    row = _row_shape(ctx.node, ctx.graph)
    value = ctx.const(name)
    if value is None or value.size == int(np.prod(row, dtype=np.int64)):
        return ctx.ptr(name)
    full = np.broadcast_to(value.reshape(value.shape[max(0, value.ndim - len(row)):]), row).reshape(-1)
    return ctx.const_array(what, np.ascontiguousarray(full, dtype=np.float32),
                           comment=f"{what} {list(value.shape)} broadcast over the row {list(row)}")


def _emit_layer_norm(ctx: NodeContext) -> None:
    a = ctx.attrs
    x, outs = ctx.inputs[0], [*ctx.outputs, "", ""]
    rms = ctx.node.op == "RMSNormalization"
    inner = a.get(NORM_INNER_ATTR, 1)
    if inner != 1:  # over the middle dim of [rows, n, inner] (aot/passes/channel_norm.py)
        fields = {"rows": str(a["rows"]), "n": str(a["n"]), "inner": str(inner), "epsilon": c_float(a["epsilon"])}
        p = ctx.params("aotc_layer_norm_inner_params", fields,
                       comment=f"LayerNormalization of {list(ctx.shape(x))} over dim {a['axis']} "
                               f"(as [{a['rows']}, {a['n']}, {inner}]), epsilon {a['epsilon']}")
        bias = ctx.ptr(ctx.inputs[2]) if len(ctx.inputs) > 2 and ctx.inputs[2] else "NULL"
        ctx.call("aotc_layer_norm_inner_f32", p, ctx.ptr(x), ctx.ptr(ctx.inputs[1]), bias, ctx.ptr(outs[0]))
        return
    stats = "f64stats_" if a["stash"] == "float64" else ""
    fields = {"rows": str(a["rows"]), "n": str(a["n"]), "epsilon": c_float(a["epsilon"])}
    p = ctx.params("aotc_layer_norm_params", fields,
                   comment=f"{ctx.node.op} of {list(ctx.shape(x))} over the dims from axis {a['axis']}, "
                           f"epsilon {a['epsilon']}, statistics in {a['stash']}")
    scale = _row_operand(ctx, 1, "scale")
    if rms:
        ctx.call(f"aotc_rms_norm_{stats}f32", p, ctx.ptr(x), scale, ctx.ptr(outs[0]))
    else:
        ctx.call(f"aotc_layer_norm_{stats}f32", p, ctx.ptr(x), scale, _row_operand(ctx, 2, "bias"), ctx.ptr(outs[0]),
                 ctx.ptr(outs[1]), ctx.ptr(outs[2]))


# --- Softmax, LogSoftmax ---------------------------------------------------------------------

def _softmax_scratch(node: Node, graph: Graph) -> int:
    """Per column of the [n, inner] block its max and sum, in the input's type (float or double)."""
    inner = node.attrs["inner"]
    return 2 * inner * np.dtype(graph.tensors[node.inputs[0]].dtype).itemsize if inner > 1 else 0


def _emit_softmax(kernel: str):
    def emit(ctx: NodeContext) -> None:
        a = ctx.attrs
        p = ctx.params("aotc_softmax_params", {"outer": str(a["outer"]), "n": str(a["n"]), "inner": str(a["inner"])},
                       comment=f"{ctx.node.op} over {list(ctx.shape(ctx.inputs[0]))} as [outer, n, inner]")
        x = ctx.inputs[0]
        scratch = ctx.scratch(ctx.ctype(x)) if a["inner"] > 1 else "NULL"
        ctx.call(f"aotc_{kernel}_{ctx.suffix(x)}", p, ctx.ptr(x), ctx.ptr(ctx.outputs[0]), scratch)
    return emit


OPS: dict[str, HostOp] = {
    "BatchNormalization": HostOp(_emit_batchnorm, family="norm", inplace=0, check=_check_batchnorm,
                                 kernels=(fixed_scratch("", _batchnorm_scratch),)),
    "InstanceNormalization": HostOp(_emit_instance_norm, family="norm", inplace=0, check=_min_rank(3)),
    "LRN": HostOp(_emit_lrn, family="norm", check=_check_lrn),
    "LayerNormalization": HostOp(_emit_layer_norm, family="norm", inplace=0, check=_check_layer_norm),
    "RMSNormalization": HostOp(_emit_layer_norm, family="norm", inplace=0, check=_check_layer_norm),
    "Softmax": HostOp(_emit_softmax("softmax"), family="norm", inplace=0, dtypes=("float32", "float64"),
                      kernels=(fixed_scratch("", _softmax_scratch),)),
    "LogSoftmax": HostOp(_emit_softmax("log_softmax"), family="norm", inplace=0, dtypes=("float32", "float64"),
                         kernels=(fixed_scratch("", _softmax_scratch),)),
}
