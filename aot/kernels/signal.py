"""Host ops of the 'signal' family (runtime_c/kernels/signal/signal.c): ONNX DFT as a dense complex linear map
along its axis, the weights tabulated here in float64 and stored as float32 (no trigonometry in C).

canonical/signal.py gives the node `axis` (non-negative), `length` (the DFT length N), `inverse` and `onesided`;
an axis read at run time that the shapes do not pin comes as `axis_choices`, one call each, the run-time
value picking one (else AOTC_ERR_SHAPE), as Reduce's axes do."""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_int
from aot.ir import Graph, Node
from aot.ir.schemas import dft_out_shape
from aot.kernels.base import HostOp, NodeContext


def dft_plan(x_shape: tuple[int, ...], axis: int, length: int, inverse: bool, onesided: bool) -> dict:
    """Sizes and weights of a DFT of x along `axis` (numpy's fft, ifft, rfft-like one-sided, irfft)."""
    n_in, in_c = x_shape[axis], x_shape[-1]
    irfft = inverse and onesided
    k = length if inverse else (length // 2 + 1 if onesided else length)
    m = min(n_in, length // 2 + 1) if irfft else min(n_in, length)
    j, t = np.meshgrid(np.arange(k), np.arange(m), indexing="ij")
    angle = 2.0 * np.pi * ((j * t) % length) / length * (1.0 if inverse else -1.0)
    wr, wi = np.cos(angle), np.sin(angle)
    if inverse:
        scale = np.full(m, 1.0 / length)
        if irfft:  # the other half of the spectrum: conjugates, so twice the real part (not at 0 and N/2)
            scale = scale * np.where((np.arange(m) == 0) | (2 * np.arange(m) == length), 1.0, 2.0)
            wi[:, (np.arange(m) == 0) | (2 * np.arange(m) == length)] = 0.0
        wr, wi = wr * scale, wi * scale
    return {"outer": int(np.prod(x_shape[:axis], dtype=np.int64)), "m": m,
            "inner": int(np.prod(x_shape[axis + 1:-1], dtype=np.int64)), "k": k, "in_c": in_c,
            "out_c": 1 if irfft else 2, "wr": wr.astype(np.float32), "wi": wi.astype(np.float32),
            "out_shape": dft_out_shape(x_shape, axis, length, inverse, onesided)}


def _call(ctx: NodeContext, axis: int, length: int) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    a = ctx.attrs
    plan = dft_plan(ctx.shape(x), axis, length, bool(a["inverse"]), bool(a["onesided"]))
    what = f"DFT of {list(ctx.shape(x))} along axis {axis}, length {length}"
    wr = ctx.const_array(f"wr{axis}", plan["wr"].reshape(-1), comment=f"{what}: real parts of the weights")
    wi = ctx.const_array(f"wi{axis}", plan["wi"].reshape(-1), comment=f"{what}: imaginary parts")
    p = ctx.params("aotc_dft_params", {
        "outer": c_int(plan["outer"]), "n": c_int(ctx.shape(x)[axis]), "m": c_int(plan["m"]),
        "inner": c_int(plan["inner"]), "k": c_int(plan["k"]),
        "in_c": str(plan["in_c"]), "out_c": str(plan["out_c"]), "wr": wr, "wi": wi,
    }, comment=f"{what} -> {list(ctx.shape(y))}")
    ctx.call("aotc_dft_f32", p, ctx.ptr(x), ctx.ptr(y))


def _emit(ctx: NodeContext) -> None:
    choices = ctx.attrs.get("axis_choices")
    if not choices:
        _call(ctx, ctx.attrs["axis"], ctx.attrs["length"])
        return
    rank, axis_in = len(ctx.shape(ctx.inputs[0])), ctx.inputs[1]
    ctx.line("{")
    ctx.line(f"    const int64_t a_ = (int64_t)*{ctx.ptr(axis_in)};")
    ctx.line(f"    const int64_t axis_ = a_ < 0 ? a_ + {rank} : a_;")
    for k, (axis, length) in enumerate(choices):
        ctx.line(f"    {'if' if k == 0 else '} else if'} (axis_ == {axis}) {{")
        _call(ctx, axis, length)
    ctx.line("    } else {")
    ctx.line("        return AOTC_ERR_SHAPE;")
    ctx.line("    }")
    ctx.line("}")


def _check(node: Node, graph: Graph) -> str | None:
    x = graph.tensors[node.inputs[0]]
    if x.shape[-1] not in (1, 2):
        return f"the last dimension of {list(x.shape)} must be 1 (real) or 2 (complex)"
    for axis, length in node.attrs.get("axis_choices") or [(node.attrs["axis"], node.attrs["length"])]:
        plan = dft_plan(x.shape, axis, length, bool(node.attrs["inverse"]), bool(node.attrs["onesided"]))
        if plan["k"] * plan["m"] > 1 << 20:
            return f"a DFT of length {length} is too long for the tabulated kernel"
    return None


OPS: dict[str, HostOp] = {
    "DFT": HostOp(_emit, family="signal", check=_check),
}
