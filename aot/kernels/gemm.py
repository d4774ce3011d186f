"""Host ops of the 'gemm' family: Gemm and MatMul on the GEMM core in runtime_c/kernels/gemm/gemm.c.

The core computes C = alpha * A * B (+ beta * C_in) with every operand described by
strides, so transposed A, broadcast C and batched MatMul cost nothing. B is read in
panels of PANEL columns; a constant B (the usual weight) is packed here, at compile
time, into that layout (`pack_b`), so run time never transposes or copies it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from aot.csource.format import c_double, c_float, c_int
from aot.ir import Graph, Node
from aot.kernels.base import NO_BUDGET_LIMIT, Candidate, HostOp, KernelChoice, KernelFacts, NodeContext
from aot.kernels.c_defines import define

PANEL = define("aotc_gemm.h", "AOTC_GEMM_PANEL")  # columns per B panel
KC = define("aotc_gemm.h", "AOTC_GEMM_KC")  # rows of B per block
WORK_BYTES = KC * PANEL * 4  # AOTC_SGEMM_WORK_BYTES: the core's copy of one plain-B block, at most
INT32_MAX = 2**31 - 1
# what the layouts and block sizes above assume of aotc_gemm.h: checked where the generated code is compiled
GEMM_ASSUMES = {"AOTC_GEMM_PANEL": PANEL, "AOTC_GEMM_KC": KC}


def pack_b(b_kn: np.ndarray) -> np.ndarray:
    """A k x n matrix in gemm.c's packed layout: ceil(n / PANEL) panels of k x PANEL, zero-padded."""
    k, n = b_kn.shape
    panels = -(-n // PANEL)
    padded = np.zeros((k, panels * PANEL), np.float32)
    padded[:, :n] = b_kn
    return np.ascontiguousarray(padded.reshape(k, panels, PANEL).transpose(1, 0, 2))


def packed_size(k: int, n: int) -> int:
    """Floats in pack_b's output."""
    return -(-n // PANEL) * PANEL * k


@dataclass(frozen=True)
class BLayout:
    """How the core reads B(p, j) = b[(j / PANEL) * ps + p * rs + j % PANEL]."""

    rs: int
    ps: int
    padded: bool

    @staticmethod
    def plain(ldb: int) -> BLayout:
        return BLayout(rs=ldb, ps=PANEL, padded=False)

    @staticmethod
    def packed(k: int) -> BLayout:
        return BLayout(rs=PANEL, ps=k * PANEL, padded=True)


def sgemm_fields(m: int, n: int, k: int, a_strides: tuple[int, int], b: BLayout, ldc: int,
                 cin_strides: tuple[int, int] = (0, 0), alpha: float = 1.0, beta: float = 0.0) -> dict[str, str]:
    """Fields of an aotc_sgemm_params."""
    return {
        "m": c_int(m), "n": c_int(n), "k": c_int(k),
        "a_rs": c_int(a_strides[0]), "a_cs": c_int(a_strides[1]),
        "b_rs": c_int(b.rs), "b_ps": c_int(b.ps), "b_padded": "1" if b.padded else "0",
        "ldc": c_int(ldc), "cin_rs": c_int(cin_strides[0]), "cin_cs": c_int(cin_strides[1]),
        "alpha": c_float(alpha), "beta": c_float(beta),
    }


def activation_fields(node: Node) -> dict[str, str]:
    """The epilogue activation fields (act, act_lo, act_hi, act_alpha) of a fused node's params."""
    kind = node.attrs.get("activation", "")
    params = list(node.attrs.get("activation_params", ()))
    act, lo, hi, alpha = "AOTC_ACT_NONE", 0.0, 0.0, 0.0
    if kind == "Relu":
        act, lo, hi = "AOTC_ACT_CLAMP", 0.0, float("inf")
    elif kind == "Clip":
        act, (lo, hi) = "AOTC_ACT_CLAMP", params
    elif kind == "LeakyRelu":
        act, alpha = "AOTC_ACT_LEAKY", params[0]
    elif kind:
        raise ValueError(f"unknown fused activation {kind}")
    return {"act": act, "act_lo": c_float(lo), "act_hi": c_float(hi), "act_alpha": c_float(alpha)}


def residual(node: Node) -> str:
    """The residual a fused node adds to its output (its input 3), or ''."""
    return node.inputs[3] if node.op.startswith("Fused") and len(node.inputs) > 3 else ""


def struct_init(fields: dict[str, str], per_line: int = 5) -> str:
    """A nested struct initializer, a few fields per line."""
    items = [f".{k} = {v}" for k, v in fields.items()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "{" + ",\n        ".join(lines) + "}"


def work_bytes(k: int, budget: int) -> int:
    """Scratch for the core's copy of a plain-B block (min(k, KC) x PANEL floats) when the budget
    has room; else 0: the core runs with work = NULL (partial panels take a slower loop)."""
    need = min(k, KC) * PANEL * 4
    return need if need <= budget else 0


def _const_b_packs(n: int) -> bool:
    """A constant B is packed where its last panel's padding adds at most 2 % to it: the weights in
    flash stay within 2 % of the model's (a 120-column B would grow 6.7 %, an 84-column one 14 %)."""
    return n >= PANEL and 50 * -(-n // PANEL) * PANEL <= 51 * n


def _too_large(*sizes: int) -> str | None:
    if max(sizes, default=0) > INT32_MAX:
        return "tensor has more than 2^31 - 1 elements"
    return None


# --- Gemm ------------------------------------------------------------------------

@dataclass(frozen=True)
class GemmPlan:
    m: int
    n: int
    k: int
    b_const: bool
    b_packed: bool  # B is in the packed layout (a packed constant, or packed into scratch at run time)
    scratch: int  # bytes: the packed runtime B, or the core's work block


def _gemm_plan(node: Node, graph: Graph, budget: int = NO_BUDGET_LIMIT) -> GemmPlan:
    a_shape = graph.tensors[node.inputs[0]].shape
    b_shape = graph.tensors[node.inputs[1]].shape
    trans_a, trans_b = node.attrs["transA"], node.attrs["transB"]
    m, k = (a_shape[1], a_shape[0]) if trans_a else a_shape
    n = b_shape[0] if trans_b else b_shape[1]
    b_const = graph.const(node.inputs[1]) is not None
    if b_const:
        packed = _const_b_packs(n)
        return GemmPlan(m, n, k, True, packed, 0 if packed else work_bytes(k, budget))
    if trans_b:  # a runtime B^T is packed into scratch first
        return GemmPlan(m, n, k, False, True, packed_size(k, n) * 4)
    return GemmPlan(m, n, k, False, False, work_bytes(k, budget))


def _f64(node: Node, graph: Graph) -> bool:
    """A float64 product: gemm_f64.c's kernels (the float32 core's packing and scratch do not apply)."""
    return graph.tensors[node.inputs[0]].dtype == "float64"


def dgemm_fields(m: int, n: int, k: int, a_strides: tuple[int, int], b_strides: tuple[int, int], ldc: int,
                 cin_strides: tuple[int, int] = (0, 0), alpha: float = 1.0, beta: float = 0.0) -> dict[str, str]:
    """Fields of an aotc_dgemm_params (float64: every operand by strides, alpha and beta doubles)."""
    return {
        "m": c_int(m), "n": c_int(n), "k": c_int(k), "a_rs": c_int(a_strides[0]), "a_cs": c_int(a_strides[1]),
        "b_rs": c_int(b_strides[0]), "b_cs": c_int(b_strides[1]), "ldc": c_int(ldc),
        "cin_rs": c_int(cin_strides[0]), "cin_cs": c_int(cin_strides[1]),
        "alpha": c_double(alpha), "beta": c_double(beta),
    }


def _check_gemm(node: Node, graph: Graph) -> str | None:
    shapes = [graph.tensors[i].shape for i in node.inputs if i]
    if len(shapes[0]) != 2 or len(shapes[1]) != 2:
        return f"Gemm needs 2-D A and B, got shapes {shapes[0]} and {shapes[1]}"
    if len(shapes) > 2 and len(shapes[2]) > 2:
        return f"Gemm C must have rank <= 2, got {shapes[2]}"
    return _too_large(*(int(np.prod(s)) for s in shapes))


def _fit_gemm(node: Node, graph: Graph, budget: int) -> KernelChoice:
    plan = _gemm_plan(node, graph, budget)
    return KernelChoice("aotc_gemm_f32", plan.scratch, plan, GEMM_ASSUMES)


def _fit_gemm_f64(node: Node, graph: Graph, budget: int) -> KernelChoice:
    return KernelChoice("aotc_dgemm_f64", 0, _gemm_plan(node, graph))


def _emit_gemm_f64(ctx: NodeContext) -> None:
    """Y = alpha * op(A) * op(B) + beta * C in double: a constant B^T is laid out k x n here, a run-time one
    read by strides."""
    a, b, y = ctx.inputs[0], ctx.inputs[1], ctx.outputs[0]
    c = ctx.inputs[2] if len(ctx.inputs) > 2 and ctx.inputs[2] else ""
    plan: GemmPlan = ctx.choice.detail
    m, n, k = plan.m, plan.n, plan.k
    alpha, beta = ctx.attrs["alpha"], ctx.attrs["beta"]
    trans_a, trans_b = ctx.attrs["transA"], ctx.attrs["transB"]
    if plan.b_const and trans_b:
        b_ptr = ctx.const_array("b_kn", np.ascontiguousarray(np.asarray(ctx.const(b), np.float64).T),
                                comment="B as k x n")
        b_strides = (n, 1)
    else:
        b_ptr, b_strides = ctx.ptr(b), ((1, k) if trans_b else (n, 1))
    cin_ptr, cin_strides = "NULL", (0, 0)
    if c and beta != 0.0:
        cs = (1,) * (2 - len(ctx.shape(c))) + tuple(ctx.shape(c))
        cin_ptr = ctx.ptr(c)
        cin_strides = (cs[1] if cs[0] > 1 else 0, 1 if cs[1] > 1 else 0)
    fields = dgemm_fields(m, n, k, (1, m) if trans_a else (k, 1), b_strides, n, cin_strides, alpha, beta)
    p = ctx.params("aotc_dgemm_params", fields, comment=f"Gemm {m}x{k} * {k}x{n} in double, transA={trans_a} "
                   f"transB={trans_b}")
    ctx.call("aotc_dgemm_f64", p, ctx.ptr(a), b_ptr, cin_ptr, ctx.ptr(y))


def _emit_gemm(ctx: NodeContext) -> None:
    if _f64(ctx.node, ctx.graph):
        _emit_gemm_f64(ctx)
        return
    a, b = ctx.inputs[0], ctx.inputs[1]
    c = ctx.inputs[2] if len(ctx.inputs) > 2 and ctx.inputs[2] else ""
    y = ctx.outputs[0]
    plan: GemmPlan = ctx.choice.detail
    m, n, k = plan.m, plan.n, plan.k
    alpha, beta = ctx.attrs["alpha"], ctx.attrs["beta"]
    trans_a, trans_b = ctx.attrs["transA"], ctx.attrs["transB"]
    a_strides = (1, m) if trans_a else (k, 1)

    if plan.b_const:  # op(B) is laid out here, so the kernel never transposes it
        b_kn = np.asarray(ctx.const(b), np.float32)
        b_kn = b_kn.T if trans_b else b_kn
        if plan.b_packed:
            b_ptr = ctx.const_array("b_packed", pack_b(b_kn), comment=f"B of {ctx.node.name}, packed: "
                                    f"{-(-n // PANEL)} panels of {k} x {PANEL}")
            b_layout = BLayout.packed(k)
        else:
            b_ptr = ctx.const_array("b_kn", np.ascontiguousarray(b_kn), comment="B as k x n") if trans_b \
                else ctx.ptr(b)
            b_layout = BLayout.plain(n)
    else:  # a runtime B^T is packed by the kernel into scratch
        b_ptr = ctx.ptr(b)
        b_layout = BLayout.packed(k) if trans_b else BLayout.plain(n)
    cin_ptr, cin_strides = "NULL", (0, 0)
    if c and beta != 0.0:
        cs = (1,) * (2 - len(ctx.shape(c))) + tuple(ctx.shape(c))
        cin_ptr = ctx.ptr(c)
        cin_strides = (cs[1] if cs[0] > 1 else 0, 1 if cs[1] > 1 else 0)
    work = ctx.scratch("float") if plan.scratch else "NULL"
    fields = {**sgemm_fields(m, n, k, a_strides, b_layout, n, cin_strides, alpha, beta),
              **activation_fields(ctx.node)}
    pack_at_run_time = not plan.b_const and trans_b
    p = ctx.params("aotc_gemm_params", {"gemm": struct_init(fields), "pack_b": "1" if pack_at_run_time else "0"},
                   comment=f"Gemm {m}x{k} * {k}x{n}, transA={trans_a} transB={trans_b}")
    ctx.call(ctx.choice.kernel, p, ctx.ptr(a), b_ptr, cin_ptr, ctx.ptr(residual(ctx.node)), ctx.ptr(y), work)


# --- MatMul ------------------------------------------------------------------------

@dataclass(frozen=True)
class MatMulPlan:
    m: int  # rows per product (all batches folded in when `folded`)
    n: int
    k: int
    a_batch: tuple[int, ...]  # batch dims of A, B and the output, padded to the output's rank
    b_batch: tuple[int, ...]
    out_batch: tuple[int, ...]
    folded: bool  # one product: B is shared and A's batches stack into rows
    b_const: bool
    b_packed: bool
    scratch: int  # bytes: the core's work block for a plain B (work_bytes), or 0


def _matmul_plan(node: Node, graph: Graph, budget: int = NO_BUDGET_LIMIT) -> MatMulPlan:
    a_shape = graph.tensors[node.inputs[0]].shape
    b_shape = graph.tensors[node.inputs[1]].shape
    a2 = (1, *a_shape) if len(a_shape) == 1 else a_shape  # numpy: a 1-D A is a row, a 1-D B a column
    b2 = (*b_shape, 1) if len(b_shape) == 1 else b_shape
    m, k = a2[-2:]
    n = b2[-1]
    rank = max(len(a2), len(b2)) - 2
    a_batch = (1,) * (rank - len(a2) + 2) + tuple(a2[:-2])
    b_batch = (1,) * (rank - len(b2) + 2) + tuple(b2[:-2])
    out_batch = tuple(max(x, y) for x, y in zip(a_batch, b_batch, strict=True))
    b_shared = int(np.prod(b_batch)) == 1
    folded = b_shared and a_batch == out_batch
    b_const = graph.const(node.inputs[1]) is not None
    b_packed = b_const and _const_b_packs(n)
    if folded:
        m *= int(np.prod(a_batch))
    return MatMulPlan(m, n, k, a_batch, b_batch, out_batch, folded, b_const, b_packed,
                      0 if b_packed else work_bytes(k, budget))


def _check_matmul(node: Node, graph: Graph) -> str | None:
    shapes = [graph.tensors[i].shape for i in node.inputs[:2]]
    if any(len(s) == 0 for s in shapes):
        return "MatMul operands must have rank >= 1"
    return _too_large(*(int(np.prod(s)) for s in shapes), int(np.prod(graph.tensors[node.outputs[0]].shape)))


def _fit_matmul(node: Node, graph: Graph, budget: int, threads: int = 1) -> KernelChoice:
    """One product (the batches folded into rows) by aotc_sgemm_f32, else aotc_matmul_f32; with a --threads pool
    the folded product too by aotc_matmul_f32 as a batch of one, which splits it by column blocks over the pool
    (a transformer's linear layers, exported as MatMul)."""
    plan = _matmul_plan(node, graph, budget)
    if plan.folded and threads > 1:
        plan = dataclasses.replace(plan, folded=False, a_batch=(), b_batch=(), out_batch=())
    return KernelChoice("aotc_sgemm_f32" if plan.folded else "aotc_matmul_f32", plan.scratch, plan, GEMM_ASSUMES)


def _fit_matmul_f64(node: Node, graph: Graph, budget: int) -> KernelChoice:
    plan = dataclasses.replace(_matmul_plan(node, graph), b_packed=False, scratch=0)
    return KernelChoice("aotc_dgemm_f64" if plan.folded else "aotc_matmul_f64", 0, plan)


def _batch_offsets(batch: tuple[int, ...], out_batch: tuple[int, ...], step: int) -> np.ndarray:
    """Start (in floats) of each output batch's matrix in an operand with batch dims `batch`
    (size-1 dims broadcast) whose matrices are `step` floats apart."""
    index = np.arange(int(np.prod(batch)), dtype=np.int64).reshape(batch)
    return (np.broadcast_to(index, out_batch).reshape(-1) * step).astype(np.int32)


def _emit_matmul(ctx: NodeContext) -> None:
    a, b, y = ctx.inputs[0], ctx.inputs[1], ctx.outputs[0]
    plan: MatMulPlan = ctx.choice.detail
    m, n, k = plan.m, plan.n, plan.k
    what = f"MatMul {list(ctx.shape(a))} x {list(ctx.shape(b))} -> {list(ctx.shape(y))}"
    if _f64(ctx.node, ctx.graph):  # B as the model stores it: the kernel reads it by strides, no scratch
        fields = dgemm_fields(m, n, k, (k, 1), (n, 1), n)
        if plan.folded:
            p = ctx.params("aotc_dgemm_params", fields, comment=f"{what}: one {m}x{k} * {k}x{n} product in double")
            ctx.call(ctx.choice.kernel, p, ctx.ptr(a), ctx.ptr(b), "NULL", ctx.ptr(y))
            return
        a_off = _batch_offsets(plan.a_batch, plan.out_batch, m * k)
        b_off = _batch_offsets(plan.b_batch, plan.out_batch, k * n)
        p = ctx.params("aotc_dmatmul_params", {
            "gemm": struct_init(fields), "batch": c_int(len(a_off)),
            "a_offsets": ctx.const_array("a_offsets", a_off, comment="start of each batch's A"),
            "b_offsets": ctx.const_array("b_offsets", b_off, comment="start of each batch's B"),
        }, comment=f"{what}: {len(a_off)} products of {m}x{k} * {k}x{n} in double")
        ctx.call(ctx.choice.kernel, p, ctx.ptr(a), ctx.ptr(b), ctx.ptr(y))
        return

    if plan.b_packed:
        slices = np.asarray(ctx.const(b), np.float32).reshape(-1, k, n)
        b_ptr = ctx.const_array("b_packed", np.stack([pack_b(s) for s in slices]),
                                comment=f"B of {ctx.node.name}, packed: {len(slices)} x "
                                        f"{-(-n // PANEL)} panels of {k} x {PANEL}")
        b_step, b_layout = packed_size(k, n), BLayout.packed(k)
    else:
        b_ptr, b_step, b_layout = ctx.ptr(b), k * n, BLayout.plain(n)
    work = ctx.scratch("float") if plan.scratch else "NULL"
    fields = sgemm_fields(m, n, k, (k, 1), b_layout, n)
    if plan.folded:
        p = ctx.params("aotc_sgemm_params", fields, comment=f"{what}: one {m}x{k} * {k}x{n} product")
        ctx.call(ctx.choice.kernel, p, ctx.ptr(a), b_ptr, "NULL", ctx.ptr(y), work)
        return
    a_off = _batch_offsets(plan.a_batch, plan.out_batch, m * k)
    b_off = _batch_offsets(plan.b_batch, plan.out_batch, b_step)
    a_tab = ctx.const_array("a_offsets", a_off, comment="start of each batch's A")
    b_tab = ctx.const_array("b_offsets", b_off, comment="start of each batch's B")
    p = ctx.params("aotc_matmul_params", {
        "gemm": struct_init(fields), "batch": c_int(len(a_off)), "a_offsets": a_tab, "b_offsets": b_tab,
    }, comment=f"{what}: {len(a_off)} products of {m}x{k} * {k}x{n}")
    ctx.call(ctx.choice.kernel, p, ctx.ptr(a), b_ptr, ctx.ptr(y), work)


# the GEMM core: one kernel each, whose plain-B work block the budget may drop
GEMM = Candidate("aotc_gemm_f32", _fit_gemm, lambda n, g, t: not _f64(n, g),
                 facts=KernelFacts(threaded=True))  # column blocks over a --threads pool
MATMUL = Candidate("aotc_matmul_f32", _fit_matmul, lambda n, g, t: not _f64(n, g),
                   fit_on=lambda n, g, budget, t: _fit_matmul(n, g, budget, t.threads),
                   facts=KernelFacts(threaded=True),  # column blocks, or the batch's products, over a --threads pool
                   also=("aotc_sgemm_f32",))  # sgemm: the batches fold into one product
# float64 (gemm_f64.c): plain blocked loops in double, no scratch
GEMM_F64 = Candidate("aotc_dgemm_f64", _fit_gemm_f64, lambda n, g, t: _f64(n, g))
MATMUL_F64 = Candidate("aotc_matmul_f64", _fit_matmul_f64, lambda n, g, t: _f64(n, g), also=("aotc_dgemm_f64",))
FLOAT_DTYPES = ("float32", "float64")

OPS: dict[str, HostOp] = {
    "Gemm": HostOp(_emit_gemm, family="gemm", dtypes=FLOAT_DTYPES, kernels=(GEMM, GEMM_F64), check=_check_gemm),
    # Gemm with a fused epilogue (aot/passes/fuse_epilogue.py): + residual input 3, then the activation
    "FusedGemm": HostOp(_emit_gemm, family="gemm", kernels=(GEMM,), check=_check_gemm),
    "MatMul": HostOp(_emit_matmul, family="gemm", dtypes=FLOAT_DTYPES, kernels=(MATMUL, MATMUL_F64),
                     check=_check_matmul),
}
