"""Host ops of the 'recurrent' family: ONNX LSTM, GRU and RNN (runtime_c/kernels/recurrent.c).

The sequence is a loop in C, never unrolled. Constant weights are packed here, once, into the
GEMM core's panel layout (aot/kernels/gemm.py pack_b), transposed so the products are X * W^T
and H * R^T, and the two biases are summed into one vector the input projection adds. Weights
known only at run time are packed by the kernel into its scratch. The scratch (the projection
of every step, the gates, the states) is the planner's, sized by `_layout`: where the memory
spare at the node's step cannot hold every step's projection, each step projects its own input
just before it (one product per step instead of one in all; the arena stays at the bound).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aot.csource.format import c_float
from aot.ir import Graph, Node
from aot.kernels.base import Candidate, HostOp, KernelChoice, NodeContext
from aot.kernels.gemm import GEMM_ASSUMES, BLayout, pack_b, packed_size, sgemm_fields, struct_init

_ACT_MACROS = {
    "Relu": "RELU", "Tanh": "TANH", "Sigmoid": "SIGMOID", "Affine": "AFFINE", "LeakyRelu": "LEAKY_RELU",
    "ThresholdedRelu": "THRESHOLDED_RELU", "ScaledTanh": "SCALED_TANH", "HardSigmoid": "HARD_SIGMOID",
    "Elu": "ELU", "Softsign": "SOFTSIGN", "Softplus": "SOFTPLUS",
}
_ALIGN = 16  # floats: each scratch region starts on a 64-byte boundary


def _input(node: Node, k: int) -> str:
    return node.inputs[k] if k < len(node.inputs) else ""


def _is_const(node: Node, graph: Graph, k: int) -> bool:
    name = _input(node, k)
    return not name or graph.const(name) is not None


@dataclass(frozen=True)
class Layout:
    """The kernel's scratch, in floats from its start (aotc_rnn_params.off_*)."""

    offsets: dict[str, int]
    floats: int
    step_proj: bool  # each step's projection before the step (batch rows), not all at once (seq * batch)


def _layout(node: Node, graph: Graph, step_proj: bool) -> Layout:
    a = node.attrs
    hid, gh = a["hidden"], a["gates"] * a["hidden"]
    gru = a["cell"] == "GRU"
    sizes = {
        "proj": (1 if step_proj else a["seq"]) * a["batch"] * gh, "gates": a["batch"] * gh, "h": a["batch"] * hid,
        "c": a["batch"] * hid if a["cell"] == "LSTM" else 0, "rh": a["batch"] * hid if gru else 0,
        "w": 0 if _is_const(node, graph, 1) else packed_size(a["input"], gh),
        "r": 0 if _is_const(node, graph, 2) else packed_size(hid, 2 * hid if gru else gh),
        "r_h": packed_size(hid, hid) if gru and not _is_const(node, graph, 2) else 0,
        "bias": 0 if _is_const(node, graph, 3) else gh,
        "rb_h": hid if gru and not _is_const(node, graph, 3) else 0,
    }
    offsets, at = {}, 0
    for key, size in sizes.items():
        offsets[key] = at
        at += -(-size // _ALIGN) * _ALIGN
    return Layout(offsets, at, step_proj)


def _check(node: Node, graph: Graph) -> str | None:
    for k, name in enumerate(node.inputs):
        if not name:
            continue
        want = "int32" if k == 4 else "float32"
        if graph.tensors[name].dtype != want:
            return f"input {k} '{name}' is {graph.tensors[name].dtype}, expected {want}"
    return None  # run-time weights are packed by the kernel


def _fit_whole(node: Node, graph: Graph, budget: int) -> KernelChoice | None:
    """Every step's input projection in one product: the fastest, if its scratch fits."""
    layout = _layout(node, graph, step_proj=False)
    return KernelChoice("aotc_rnn_f32", layout.floats * 4, layout, GEMM_ASSUMES) if layout.floats * 4 <= budget \
        else None


def _fit_step(node: Node, graph: Graph, budget: int) -> KernelChoice:
    """Each step's projection just before it: scratch for one step (the gates and the states)."""
    layout = _layout(node, graph, step_proj=True)
    return KernelChoice("aotc_rnn_f32", layout.floats * 4, layout, GEMM_ASSUMES)


def _direction_weights(ctx: NodeContext, d: int) -> dict[str, str]:
    """aotc_rnn_weights of direction d: compile-time packed arrays where the inputs are constants."""
    a = ctx.attrs
    hid, gh, gru = a["hidden"], a["gates"] * a["hidden"], a["cell"] == "GRU"
    out = {"w": "NULL", "r": "NULL", "r_h": "NULL", "bias": "NULL", "rb_h": "NULL"}
    w, r, b = (ctx.const(_input(ctx.node, k)) if _input(ctx.node, k) else None for k in (1, 2, 3))
    if w is not None:
        out["w"] = ctx.const_array(f"w{d}_packed", pack_b(np.asarray(w[d], np.float32).T),
                                   comment=f"W[{d}]^T ({a['input']} x {gh}), packed")
    if r is not None:
        rd = np.asarray(r[d], np.float32)
        cols = 2 * hid if gru else gh
        out["r"] = ctx.const_array(f"r{d}_packed", pack_b(rd[:cols].T), comment=f"R[{d}]^T ({hid} x {cols}), packed")
        if gru:
            out["r_h"] = ctx.const_array(f"rh{d}_packed", pack_b(rd[2 * hid:].T),
                                         comment=f"Rh[{d}]^T ({hid} x {hid}), packed")
    if b is not None:
        wb, rb = (np.asarray(v, np.float32) for v in (b[d, :gh], b[d, gh:]))
        bias = wb + rb
        if gru and a["linear_before_reset"]:
            bias[2 * hid:] = wb[2 * hid:]
            out["rb_h"] = ctx.const_array(f"rbh{d}", rb[2 * hid:].copy(), comment=f"Rbh[{d}]")
        out["bias"] = ctx.const_array(f"bias{d}", bias, comment=f"Wb[{d}] + Rb[{d}]")
    return out


def _activation_init(funcs: list[tuple[str, float, float]]) -> str:
    items = [f"{{AOTC_RNN_ACT_{_ACT_MACROS[n]}, {c_float(al)}, {c_float(be)}}}" for n, al, be in funcs]
    items += ["{0, 0.0f, 0.0f}"] * (3 - len(items))
    return "{" + ", ".join(items) + "}"


def _emit(ctx: NodeContext) -> None:
    a = ctx.attrs
    node = ctx.node
    layout: Layout = ctx.choice.detail
    hid, gh, gru = a["hidden"], a["gates"] * a["hidden"], a["cell"] == "GRU"
    dirs = a["directions"]
    weights = [_direction_weights(ctx, d) for d in range(dirs)]
    weights += [dict.fromkeys(weights[0], "NULL")] * (2 - dirs)
    acts = [*a["activations"], []][:2]
    rec_cols = 2 * hid if gru else gh
    step_rs = a["input"] if a["layout"] == 0 else a["seq"] * a["input"]  # X's step between batch entries
    fields = {
        "cell": f"AOTC_CELL_{a['cell']}", "gates": str(a["gates"]), "seq": str(a["seq"]), "batch": str(a["batch"]),
        "input": str(a["input"]), "hidden": str(hid), "directions": str(dirs), "reverse": str(a["reverse"]),
        "layout": str(a["layout"]), "clip": c_float(a["clip"]),
        "linear_before_reset": str(a["linear_before_reset"]), "input_forget": str(a["input_forget"]),
        "act": "{" + ", ".join(_activation_init(f) for f in acts) + "}",
        "weights": "{" + ", ".join(struct_init(w) for w in weights) + "}",
        "step_proj": str(int(layout.step_proj)),
        "proj": struct_init(sgemm_fields(a["batch"] if layout.step_proj else a["seq"] * a["batch"], gh, a["input"],
                                         (step_rs if layout.step_proj else a["input"], 1),
                                         BLayout.packed(a["input"]), gh, (0, 1), beta=1.0)),
        "rec": struct_init(sgemm_fields(a["batch"], rec_cols, hid, (hid, 1), BLayout.packed(hid), gh)),
        "rec_h": struct_init(sgemm_fields(a["batch"], hid if gru else 0, hid, (hid, 1), BLayout.packed(hid), gh,
                                          (0, 1), beta=1.0)),
        **{f"off_{k}": str(v) for k, v in layout.offsets.items()},
    }
    direction = "bidirectional" if dirs == 2 else ("reverse" if a["reverse"] else "forward")
    p = ctx.params("aotc_rnn_params", fields,
                   comment=f"{a['cell']} {direction}, {a['seq']} steps, batch {a['batch']}, input {a['input']}, "
                           f"hidden {hid}, layout {a['layout']}")
    ins = [_input(node, k) for k in range(8)]
    runtime = [ins[k] if ins[k] and ctx.const(ins[k]) is None else "" for k in (1, 2, 3)]
    outs = [*ctx.outputs, "", "", ""][:3]
    ctx.comment(f"ONNX node '{node.name}' ({a['cell']}): a loop over {a['seq']} steps")
    ctx.call("aotc_rnn_f32", p, ctx.ptr(ins[0]), *(ctx.ptr(n) for n in runtime), ctx.ptr(ins[4]),
             ctx.ptr(ins[5]), ctx.ptr(ins[6]), ctx.ptr(ins[7]), *(ctx.ptr(o) for o in outs), ctx.scratch("float"))


# the same kernel, with the whole projection when the memory allows, else a step's at a time
WHOLE = Candidate("aotc_rnn_f32", _fit_whole)
STEP = Candidate("aotc_rnn_f32", _fit_step)

OPS: dict[str, HostOp] = {
    op: HostOp(_emit, family="recurrent", needs=("gemm",), kernels=(WHOLE, STEP), check=_check)
    for op in ("LSTM", "GRU", "RNN")
}
