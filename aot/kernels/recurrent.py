"""Host ops of the 'recurrent' family: ONNX LSTM, GRU and RNN (runtime_c/kernels/recurrent/recurrent.c).

The sequence is a loop in C, never unrolled. Constant weights are packed here, once, into the
GEMM core's panel layout (aot/kernels/gemm.py pack_b), transposed so the products are X * W^T
and H * R^T, and the two biases are summed into one vector the input projection adds. Weights
known only at run time are packed by the kernel into its scratch. The scratch (the projection
of every step, the gates, the states) is the planner's, sized by `_layout`: where the memory
spare at the node's step cannot hold every step's projection, W and R are stacked instead and each
step is one product [x_t | H] * [W^T; R^T] (the arena stays at the bound, and as fast).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aot.csource.format import c_float
from aot.ir import Graph, Node
from aot.kernels.base import Candidate, HostOp, KernelChoice, NodeContext, TargetTraits
from aot.kernels.gemm import GEMM_ASSUMES, BLayout, pack_b, packed_size, sgemm_fields, struct_init
from aot.kernels.quant import int8_weights

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
    # no projection ahead: each step's one product [x_t | H] * [W^T; R^T] (batch rows, not seq * batch)
    step_proj: bool


def _weights_const(node: Node, graph: Graph) -> bool:
    return _is_const(node, graph, 1) and _is_const(node, graph, 2)


def _layout(node: Node, graph: Graph, step_proj: bool) -> Layout:
    a = node.attrs
    hid, gh, n_in, batch = a["hidden"], a["gates"] * a["hidden"], a["input"], a["batch"]
    gru = a["cell"] == "GRU"
    r_runtime = not _is_const(node, graph, 2)
    if step_proj:  # W and R stacked (packed at run time unless both are constants); H beside x_t
        w = 0 if _weights_const(node, graph) else packed_size(n_in + hid, gh)
        sizes = {"proj": 0, "xh": batch * (n_in + hid), "h": 0, "w": w, "r": 0}
    else:
        sizes = {"proj": a["seq"] * batch * gh, "xh": 0, "h": batch * hid,
                 "w": 0 if _is_const(node, graph, 1) else packed_size(n_in, gh),
                 "r": packed_size(hid, 2 * hid if gru else gh) if r_runtime else 0}
    sizes |= {
        "gates": batch * gh, "c": batch * hid if a["cell"] == "LSTM" else 0, "rh": batch * hid if gru else 0,
        "r_h": packed_size(hid, hid) if gru and r_runtime else 0,
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
    """No projection ahead, W and R stacked: scratch for one step ([x_t | H], the gates, the states)."""
    layout = _layout(node, graph, step_proj=True)
    return KernelChoice("aotc_rnn_f32", layout.floats * 4, layout, GEMM_ASSUMES)


def _direction_weights(ctx: NodeContext, d: int, step_proj: bool) -> dict[str, str]:
    """aotc_rnn_weights of direction d: compile-time packed arrays where the inputs are constants
    (step_proj: W and R stacked into one, when both are)."""
    a = ctx.attrs
    hid, gh, gru = a["hidden"], a["gates"] * a["hidden"], a["cell"] == "GRU"
    out = {"w": "NULL", "r": "NULL", "r_h": "NULL", "bias": "NULL", "rb_h": "NULL"}
    w, r, b = (ctx.const(_input(ctx.node, k)) if _input(ctx.node, k) else None for k in (1, 2, 3))
    cols = 2 * hid if gru else gh  # R's columns in the main product (GRU: z and r)
    rd = np.asarray(r[d], np.float32) if r is not None else None
    if step_proj and w is not None and rd is not None:
        r_t = np.zeros((hid, gh), np.float32)
        r_t[:, :cols] = rd[:cols].T
        stacked = np.vstack([np.asarray(w[d], np.float32).T, r_t])
        out["w"] = ctx.const_array(f"wr{d}_packed", pack_b(stacked),
                                   comment=f"[W[{d}]^T; R[{d}]^T] ({a['input'] + hid} x {gh}), packed")
    elif not step_proj and w is not None:
        out["w"] = ctx.const_array(f"w{d}_packed", pack_b(np.asarray(w[d], np.float32).T),
                                   comment=f"W[{d}]^T ({a['input']} x {gh}), packed")
    if rd is not None and not step_proj:
        out["r"] = ctx.const_array(f"r{d}_packed", pack_b(rd[:cols].T), comment=f"R[{d}]^T ({hid} x {cols}), packed")
    if rd is not None and gru:
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
    step = layout.step_proj
    weights = [_direction_weights(ctx, d, step) for d in range(dirs)]
    weights += [dict.fromkeys(weights[0], "NULL")] * (2 - dirs)
    acts = [*a["activations"], []][:2]
    n_in, lbr = a["input"], a["linear_before_reset"]
    if step:  # one product a step: [x_t | H] (rows input + hidden apart) by [W^T; R^T], + bias
        rec = sgemm_fields(a["batch"], gh, n_in + hid, (n_in + hid, 1), BLayout.packed(n_in + hid), gh, (0, 1),
                           beta=1.0)
    else:
        rec = sgemm_fields(a["batch"], 2 * hid if gru else gh, hid, (hid, 1), BLayout.packed(hid), gh)
    # GRU's h gate: H Rh^T + Rbh (linear_before_reset; into rh when step) or (r * H) Rh^T, added to
    # the gates' projection already there when step
    rec_h_in = (0, 1) if lbr else ((gh, 1) if step else (0, 0))
    rec_h = sgemm_fields(a["batch"], hid if gru else 0, hid, (n_in + hid if step and lbr else hid, 1),
                         BLayout.packed(hid), hid if step and lbr else gh, rec_h_in, beta=1.0)
    fields = {
        "cell": f"AOTC_CELL_{a['cell']}", "gates": str(a["gates"]), "seq": str(a["seq"]), "batch": str(a["batch"]),
        "input": str(n_in), "hidden": str(hid), "directions": str(dirs), "reverse": str(a["reverse"]),
        "layout": str(a["layout"]), "clip": c_float(a["clip"]),
        "linear_before_reset": str(lbr), "input_forget": str(a["input_forget"]),
        "act": "{" + ", ".join(_activation_init(f) for f in acts) + "}",
        "weights": "{" + ", ".join(struct_init(w) for w in weights) + "}",
        "step_proj": str(int(step)),
        "proj": struct_init(sgemm_fields(a["seq"] * a["batch"], gh, n_in, (n_in, 1), BLayout.packed(n_in), gh,
                                         (0, 1), beta=1.0)),
        "rec": struct_init(rec), "rec_h": struct_init(rec_h),
        **{f"off_{k}": str(layout.offsets[k]) for k in
           ("proj", "xh", "gates", "h", "c", "rh", "w", "r", "r_h", "bias", "rb_h")},
    }
    direction = "bidirectional" if dirs == 2 else ("reverse" if a["reverse"] else "forward")
    p = ctx.params("aotc_rnn_params", fields,
                   comment=f"{a['cell']} {direction}, {a['seq']} steps, batch {a['batch']}, input {a['input']}, "
                           f"hidden {hid}, layout {a['layout']}")
    ins = [_input(node, k) for k in range(8)]
    runtime = [ins[k] if ins[k] and ctx.const(ins[k]) is None else "" for k in (1, 2, 3)]
    if step and (runtime[0] or runtime[1]):  # the kernel stacks W and R: it reads both
        runtime[:2] = ins[1:3]
    outs = [*ctx.outputs, "", "", ""][:3]
    ctx.comment(f"ONNX node '{node.name}' ({a['cell']}): a loop over {a['seq']} steps")
    ctx.call("aotc_rnn_f32", p, ctx.ptr(ins[0]), *(ctx.ptr(n) for n in runtime), ctx.ptr(ins[4]),
             ctx.ptr(ins[5]), ctx.ptr(ins[6]), ctx.ptr(ins[7]), *(ctx.ptr(o) for o in outs), ctx.scratch("float"))


# the same kernel: the whole projection ahead when the memory allows, else W and R stacked, one product a step
WHOLE = Candidate("aotc_rnn_f32", _fit_whole)
STEP = Candidate("aotc_rnn_f32", _fit_step)


# --- com.microsoft DynamicQuantizeLSTM: 8-bit W and R, X and each step's H quantized at run time ---------

def _q8_layout(node: Node, chunk: int) -> dict[str, int]:
    """aotc_lstm_q8_params' work offsets (bytes, each on a 64-byte boundary), "chunk" and "bytes": the whole."""
    a = node.attrs
    hid, batch = a["hidden"], a["batch"]
    # (a chunk of one step: its X W go to the gates before its H R are summed, into the same int32s)
    sizes = {"xq": chunk * batch * a["input"], "hq": batch * hid, "acc": 4 * batch * 4 * hid,
             "xacc": 4 * chunk * batch * 4 * hid if chunk > 1 else 0, "gates": 4 * batch * 4 * hid,
             "h": 4 * batch * hid, "c": 4 * batch * hid}
    offsets, at = {}, 0
    for key, size in sizes.items():
        offsets[key] = at
        at += -(-size // 64) * 64
    if chunk == 1:
        offsets["xacc"] = offsets["acc"]
    return offsets | {"chunk": chunk, "bytes": at}


Q8_CHUNK = 16  # steps whose x W are one product, where the step's spare memory holds their sums


def _fit_q8(node: Node, graph: Graph, budget: int, target: TargetTraits) -> KernelChoice:
    """On a core with caches, the most steps (up to Q8_CHUNK) whose products with W the spare memory holds: each
    chunk reads W once, not once a step (issue 64: a three-layer 256-unit LSTM read its 256 KiB W and R from L2
    at every step, 1.18x onnxruntime's time; 1.00x with the memory for chunks of 16 in every layer). A Cortex-M
    reads W from flash at the same cost either way: one step (the C compiles no chunks there)."""
    mcu = target.scalar_tiles or target.helium or target.dsp
    chunk = 1 if mcu else min(node.attrs["seq"], Q8_CHUNK)
    while chunk > 1 and _q8_layout(node, chunk)["bytes"] > budget:
        chunk //= 2
    layout = _q8_layout(node, chunk)
    return KernelChoice("aotc_lstm_q8_f32", layout["bytes"], layout, {"AOTC_LSTM_Q8_PANEL": Q8_PANEL})


def _check_q8(node: Node, graph: Graph) -> str | None:
    if _input(node, 3) and graph.const(node.inputs[3]) is None:
        return "a bias B computed at run time is not supported (a constant is)"
    for k in (5, 6, 7):
        if _input(node, k) and graph.tensors[node.inputs[k]].dtype != "float32":
            return f"input {k} '{node.inputs[k]}' is {graph.tensors[node.inputs[k]].dtype}, expected float32"
    return None


Q8_PANEL = 64  # aotc_recurrent.h's AOTC_LSTM_Q8_PANEL


def _q8_panels(mat: np.ndarray) -> np.ndarray:
    """k x n int8 as aotc_lstm_q8_weights has it: panels of Q8_PANEL columns (the last one's missing columns
    zero), each its rows in quads (rows past k zero), each quad column by column with its 4 rows together: the
    order AVX-512 VNNI's VPDPBUSD multiplies in (4 uint8 of the input times 4 int8 of each column)."""
    k, n = mat.shape
    padded = np.zeros((-(-k // 4) * 4, -(-n // Q8_PANEL) * Q8_PANEL), np.int8)
    padded[:k, :n] = mat
    # [quad, row in quad, panel, column] -> [panel, quad, column, row in quad]
    quads = padded.reshape(-1, 4, padded.shape[1] // Q8_PANEL, Q8_PANEL)
    return np.ascontiguousarray(quads.transpose(2, 0, 3, 1)).reshape(-1)


def _q8_weights(ctx: NodeContext, d: int) -> dict[str, str]:
    """Direction d's aotc_lstm_q8_weights: W and R as int8 (input or hidden x gates * hidden, as the op
    has them) with their columns' sums, the scales per gate unit, the zero point (one a direction: the
    canonical rule checked), Wb + Rb."""
    units = 4 * ctx.attrs["hidden"]
    out = {}
    for k, key, at in ((1, "w", 8), (2, "r", 10)):
        scale = np.asarray(ctx.const(ctx.node.inputs[at]), np.float32).reshape(ctx.attrs["directions"], -1)[d]
        zero = ctx.const(ctx.node.inputs[at + 1]).reshape(ctx.attrs["directions"], -1)[d][:1]
        mat, zero32 = int8_weights(np.ascontiguousarray(ctx.const(ctx.node.inputs[k])[d]), zero)
        sums = (mat.astype(np.int64) - int(zero32[0])).sum(axis=0).astype(np.int32)
        what = "W" if key == "w" else "R"
        out |= {key: ctx.const_array(f"{key}{d}", _q8_panels(mat),
                                     comment=f"{what}[{d}], {mat.shape[0]} x {units}, in panels of {Q8_PANEL} columns"),
                f"{key}_sums": ctx.const_array(f"{key}{d}_sums", sums, comment=f"sum of each column of {what}[{d}] "
                                                                              "less its zero point"),
                f"{key}_scale": ctx.const_array(f"{key}{d}_scale", np.broadcast_to(scale, (units,)).copy(),
                                                comment=f"{what}_scale[{d}] per gate unit"),
                f"{key}_zero": str(int(zero32[0]))}
    bias = ctx.const(_input(ctx.node, 3)) if _input(ctx.node, 3) else None
    out["bias"] = "NULL" if bias is None else ctx.const_array(
        f"bias{d}", np.asarray(bias[d, :units], np.float32) + np.asarray(bias[d, units:], np.float32),
        comment=f"Wb[{d}] + Rb[{d}]")
    return out


def _emit_q8(ctx: NodeContext) -> None:
    a, node = ctx.attrs, ctx.node
    layout: dict[str, int] = ctx.choice.detail
    dirs = a["directions"]
    weights = [_q8_weights(ctx, d) for d in range(dirs)]
    acts = [*a["activations"], []][:2]
    rnn = {"cell": "AOTC_CELL_LSTM", "gates": "4", "seq": str(a["seq"]), "batch": str(a["batch"]),
           "input": str(a["input"]), "hidden": str(a["hidden"]), "directions": str(dirs), "reverse": str(a["reverse"]),
           "clip": c_float(a["clip"]), "input_forget": str(a["input_forget"]),
           "act": "{" + ", ".join(_activation_init(f) for f in acts) + "}"}
    fields = {"rnn": struct_init(rnn), "weights": "{" + ", ".join(struct_init(w) for w in weights) + "}",
              **{f"off_{k}": str(layout[k]) for k in ("xq", "hq", "acc", "xacc", "gates", "h", "c")},
              "chunk": str(layout["chunk"])}
    direction = "bidirectional" if dirs == 2 else ("reverse" if a["reverse"] else "forward")
    p = ctx.params("aotc_lstm_q8_params", fields,
                   comment=f"DynamicQuantizeLSTM {direction}, {a['seq']} steps, batch {a['batch']}, input "
                           f"{a['input']}, hidden {a['hidden']}")
    outs = [*ctx.outputs, "", "", ""][:3]
    ctx.comment(f"com.microsoft node '{node.name}' (DynamicQuantizeLSTM): a loop over {a['seq']} steps, X and "
                "each H quantized to uint8 at run time")
    ctx.call("aotc_lstm_q8_f32", p, ctx.ptr(node.inputs[0]), *(ctx.ptr(_input(node, k)) for k in (5, 6, 7)),
             *(ctx.ptr(o) for o in outs), ctx.scratch("uint8_t"))


OPS: dict[str, HostOp] = {
    op: HostOp(_emit, family="recurrent", needs=("gemm",), kernels=(WHOLE, STEP), check=_check)
    for op in ("LSTM", "GRU", "RNN")
}
Q8 = Candidate("aotc_lstm_q8_f32", lambda n, g, budget: _fit_q8(n, g, budget, TargetTraits()), fit_on=_fit_q8)
OPS["DynamicQuantizeLSTM"] = HostOp(_emit_q8, family="recurrent", needs=("gemm",), check=_check_q8, kernels=(Q8,))
