"""Data movement ops. Reshape-like ops are views: the planner gives them their input's bytes,
and the generator emits a copy only when that is impossible (e.g. the view is a graph output)."""

from __future__ import annotations

from aot.emit_c.ops.base import HostOp, NodeContext

ANY_DTYPE = ("float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")


def emit_copy(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    ctx.call("aotc_copy", f"{ctx.tensor(y).nbytes}u", ctx.ptr(x), ctx.ptr(y))


_VIEW = HostOp(emit_copy, family="shape", dtypes=ANY_DTYPE, view=True)

OPS: dict[str, HostOp] = {
    "Reshape": _VIEW,
    "Flatten": _VIEW,
    "Squeeze": _VIEW,
    "Unsqueeze": _VIEW,
    "Identity": _VIEW,
}
