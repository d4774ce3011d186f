"""Host ops of the 'quant' family for the dense layers: QGemm and QLinearMatMul (constant B, on the quant
family's kernels, runtime_c/kernels/quant/), QLinearMatMulValues (its parameters read at run time), and the
M-profile dense candidates TFLite's FULLY_CONNECTED shares (dsp_dense_kernels). The convs and the other
QLinear ops are quant.py's."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from aot.ir import Graph, Node
from aot.kernels.base import Candidate, HostOp, KernelChoice, KernelFacts, NodeContext
from aot.kernels.quant import INT8, M_PROFILE, SUFFIX, check_8bit, int8_weights, interleave_rows, out_range
from aot.qmath import requant_scale

# --- QGemm / QLinearMatMul ------------------------------------------------------------------

def _gemm_inputs(node: Node) -> dict[str, str]:
    """The named inputs of QGemm and QLinearMatMul (which has no bias)."""
    ins = list(node.inputs) + [""] * (9 - len(node.inputs))
    if node.op == "QLinearMatMul":
        keys = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero", "bias")
    else:
        keys = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "bias", "y_scale", "y_zero")
    return dict(zip(keys, ins, strict=True))


def _emit_qgemm(ctx: NodeContext) -> None:
    names = _gemm_inputs(ctx.node)
    a, y = names["a"], ctx.outputs[0]
    k = ctx.shape(a)[-1]
    m = math.prod(ctx.shape(a)[:-1])
    b = ctx.const(names["b"])
    b_kn = b.T if ctx.attrs.get("transB", 0) else b
    n = b_kn.shape[1]
    b_zero = np.broadcast_to(ctx.const(names["b_zero"]).reshape(-1), (n,))
    bt, b_zero = int8_weights(np.ascontiguousarray(b_kn.T), b_zero)
    a_zero = int(ctx.const(names["a_zero"]).reshape(-1)[0])
    bias = ctx.const(names["bias"]).astype(np.int64).reshape(-1) if names["bias"] else np.zeros(n, np.int64)
    bias = np.broadcast_to(bias, (n,))
    # sum_k (a - a_zero)(b - b_zero) = sum_k a (b - b_zero) - a_zero sum_k (b - b_zero): the second term is constant
    folded = bias - a_zero * (bt.astype(np.int64) - b_zero[:, None]).sum(axis=1)
    a_scale = ctx.const(names["a_scale"]).reshape(-1)[0]
    scale = requant_scale(a_scale, ctx.const(names["b_scale"]), ctx.const(names["y_scale"]).reshape(-1)[0])
    y_zero = int(ctx.const(names["y_zero"]).reshape(-1)[0])
    lo, hi = out_range(ctx, y_zero)
    b_zero_ptr = ctx.const_array("b_zero", b_zero.astype(np.int32)) if b_zero.any() else "NULL"
    il4 = ctx.choice.detail == "il4"
    p = ctx.params("aotc_qgemm_params", {
        "m": str(m), "n": str(n), "k": str(k), "y_zero": str(y_zero), "y_lo": lo, "y_hi": hi,
        "scale": ctx.const_array("scale", scale), "per_column": str(int(scale.size > 1)),
        "bias": ctx.const_array("bias", folded.astype(np.int32)), "b_zero": b_zero_ptr, "il4": str(int(il4)),
    }, comment=f"{ctx.node.op} {list(ctx.shape(a))} x [{k}, {n}] -> {list(ctx.shape(y))}; bias less "
               f"a_zero ({a_zero}) x the column sums of B" + ("; B's rows interleaved by blocks of 4" if il4 else ""))
    if il4:
        bt = interleave_rows(bt, 4)
    ctx.call(ctx.choice.kernel, p, ctx.ptr(a), ctx.const_array("bt", bt), ctx.ptr(y),
             ctx.scratch("uint32_t"))


def dsp_gemv_scratch(k: int, n: int) -> int:
    """AOTC_QGEMM_SCRATCH(k, n) and AOTC_TFL_FC_SCRATCH(k, n): a row of the input widened to 16-bit
    pairs (8 bytes a quad of k) and its n sums."""
    return 8 * (k // 4) + 4 * n


def dsp_dense_kernels(shape: Callable[[Node, Graph], tuple[int, int, bool]], kernel: Callable[[Node, Graph], str],
                      symbols: tuple[str, ...]) -> tuple[Candidate, ...]:
    """The dense layers' kernels (QGemm / QLinearMatMul here, TFLite's FULLY_CONNECTED): on the
    M-profile boards (the DSP extension's SMLAD, aotc_dsp_gemv4) a row of the input is widened once
    into scratch, and without Helium the weights' rows are interleaved by blocks of 4 where
    shape(node, graph) = (k, n, interleavable) allows (aotc_dsp_gemv4_il); the host kernels need no
    scratch. kernel(node, graph): the C function that runs the node, one of `symbols` (by its type)."""
    def interleaved(node: Node, graph: Graph) -> KernelChoice | None:
        k, n, ok = shape(node, graph)
        return KernelChoice(kernel(node, graph), dsp_gemv_scratch(k, n), detail="il4",
                            assumes={"AOTC_DSP_IL": 1}) if ok else None

    def widened(node: Node, graph: Graph) -> KernelChoice:
        return KernelChoice(kernel(node, graph), dsp_gemv_scratch(*shape(node, graph)[:2]))

    def within(choice: KernelChoice | None, budget: int) -> KernelChoice | None:
        """Under a RAM budget's "tiles" the widened row is scratch the budget may refuse: the plain loop
        (no scratch, more instructions) then runs the node."""
        return choice if choice is not None and choice.scratch <= budget else None

    first, also = symbols[0], symbols[1:]
    return (
        # (TargetTraits.dsp: the DSP extension without Helium)
        Candidate(first, lambda n, g, budget: interleaved(n, g), applies=lambda n, g, t: t.dsp,
                  facts=KernelFacts(isa="arm-dsp"), also=also,
                  fit_least=lambda n, g, budget: within(interleaved(n, g), budget)),
        Candidate(first, lambda n, g, budget: widened(n, g), facts=M_PROFILE, also=also,
                  fit_least=lambda n, g, budget: within(widened(n, g), budget)),
        Candidate(first, lambda n, g, budget: KernelChoice(kernel(n, g)), also=also),
    )


def _qgemm_shape(node: Node, graph: Graph) -> tuple[int, int, bool]:
    """k, n, and whether B's rows may be interleaved by blocks of 4 (k and n multiples of 4)."""
    k = graph.tensors[_gemm_inputs(node)["a"]].shape[-1]
    n = graph.tensors[node.outputs[0]].shape[-1]
    return k, n, k % 4 == 0 and n % 4 == 0 and k >= 4 and n >= 4


QGEMM_KERNELS = dsp_dense_kernels(_qgemm_shape, lambda n, g: f"aotc_qgemm_{SUFFIX[g.tensors[n.inputs[0]].dtype]}",
                                  ("aotc_qgemm_i8", "aotc_qgemm_u8"))


def _check_qgemm(node: Node, graph: Graph) -> str | None:
    names = _gemm_inputs(node)
    a = node.attrs
    if a.get("transA", 0):
        return "transA is not supported"
    if a.get("alpha", 1.0) != 1.0:
        return f"alpha {a['alpha']} is not supported"
    if node.op == "QGemm" and not names["y_scale"]:
        return "QGemm with a float output (no y_scale) is not supported"
    b = graph.tensors[names["b"]]
    if b.data is None or len(b.shape) != 2:
        return "B must be a constant matrix"
    if names["bias"] and graph.const(names["bias"]) is None:
        return "the bias must be a constant"
    # A of more than 2 dims: its rows flattened, as for QLinearMatMul (the QDQ pass makes QGemm of a MatMul whose
    # A is a transformer's [batch, tokens, features]: issue 69)
    a_shape, y_shape = graph.tensors[names["a"]].shape, graph.tensors[node.outputs[0]].shape
    n = b.shape[0] if a.get("transB", 0) else b.shape[1]
    if tuple(y_shape) != (*a_shape[:-1], n):
        return f"A {list(a_shape)} by B {list(b.shape)} does not give {list(y_shape)} row by row"
    return check_8bit(node, graph, (0, 3))


# --- QLinearMatMul with run-time parameters (canonical/quant.py) --------------------------------------

def _check_qmm_values(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    a, b, y = t[node.inputs[0]].shape, t[node.inputs[3]].shape, t[node.outputs[0]].shape
    if len(a) < 2 or len(b) < 2 or len(b) > len(a) or (len(b) > 2 and b[:-2] != a[:-2]):
        return f"QLinearMatMul of {list(a)} by {list(b)} is not supported (b 2-D or with a's batch dims)"
    if a[-1] != b[-2] or tuple(y) != (*a[:-1], b[-1]):
        return f"QLinearMatMul of {list(a)} by {list(b)} does not give {list(y)}"
    if a[-1] * 255 * 255 > 2**31 - 1:
        return f"a sum of {a[-1]} products could overflow int32"
    for k in (1, 4, 6):
        if t[node.inputs[k]].dtype != "float32":
            return f"scale (input {k}) of dtype {t[node.inputs[k]].dtype} is not supported"
    return None


def _emit_qmm_values(ctx: NodeContext) -> None:
    """QLinearMatMulValues: B, the scales and zero points read at run time (aotc_quant.h)."""
    a, a_s, a_z, b, b_s, b_z, y_s, y_z = ctx.inputs[:8]
    y = ctx.outputs[0]
    sa, sb = ctx.shape(a), ctx.shape(b)
    p = ctx.params("aotc_qlinear_matmul_values_params", {
        "batch": str(int(np.prod(sa[:-2], dtype=np.int64))), "b_batched": str(int(len(sb) > 2)),
        "m": str(sa[-2]), "k": str(sa[-1]), "n": str(sb[-1]),
        "a_signed": str(int(ctx.dtype(a) == "int8")), "b_signed": str(int(ctx.dtype(b) == "int8")),
        "y_signed": str(int(ctx.dtype(y) == "int8")), "half_scales": str(int(ctx.attrs.get("half_scales", 0))),
    }, comment=f"QLinearMatMul {list(sa)} x {list(sb)}, its parameters read at run time")
    ctx.call("aotc_qlinear_matmul_values", p, ctx.ptr(a), ctx.ptr(a_s), ctx.ptr(a_z), ctx.ptr(b), ctx.ptr(b_s),
             ctx.ptr(b_z), ctx.ptr(y_s), ctx.ptr(y_z), ctx.ptr(y))


OPS: dict[str, HostOp] = {
    "QGemm": HostOp(_emit_qgemm, family="quant", dtypes=INT8, check=_check_qgemm, kernels=QGEMM_KERNELS),
    "QLinearMatMulValues": HostOp(_emit_qmm_values, family="quant", dtypes=INT8, check=_check_qmm_values),
    "QLinearMatMul": HostOp(_emit_qgemm, family="quant", dtypes=INT8, check=_check_qgemm, kernels=QGEMM_KERNELS),
}
