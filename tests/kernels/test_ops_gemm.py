"""Gemm and MatMul against onnxruntime: transposes, alpha/beta, C broadcasting, constant
(packed) and run-time B, numpy MatMul semantics (1-D operands, broadcast batch dims), and
sizes that leave partial register tiles, k-blocks and row blocks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx import helper
from opcheck import as_float64, op_case, shared_build

from aot.compiler import compile_model
from aot.errors import AotcError

_rng = np.random.default_rng(7)


def w(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def gemm(case_id: str, m: int, k: int, n: int, *, trans_a: int = 0, trans_b: int = 0, const_b: bool = True,
         c: tuple | str | None = "n", const_c: bool = True, opset: int = 13, **attrs) -> object:
    """A Gemm of op(A) m x k by op(B) k x n; C of shape `c` ("n": [n]; None: no C)."""
    a_shape = (k, m) if trans_a else (m, k)
    b_shape = (n, k) if trans_b else (k, n)
    inputs: dict = {"a": a_shape}
    consts: dict = {}
    (consts if const_b else inputs)["b"] = w(*b_shape) if const_b else b_shape
    order = ["a", "b"]
    if c is not None:
        c_shape = (n,) if c == "n" else c
        (consts if const_c else inputs)["c"] = w(*c_shape) if const_c else c_shape
        order.append("c")
    if trans_a:
        attrs["transA"] = 1
    if trans_b:
        attrs["transB"] = 1
    return op_case(case_id, "Gemm", inputs, consts=consts, attrs=attrs, opset=opset, input_order=order)


CASES = [
    # B a constant, packed at compile time
    gemm("gemm_const_b_bias", 3, 5, 20),
    gemm("gemm_trans_b_const", 4, 9, 40, trans_b=1),
    gemm("gemm_trans_a", 7, 6, 17, trans_a=1),
    gemm("gemm_trans_ab", 7, 6, 17, trans_a=1, trans_b=1),
    gemm("gemm_alpha_beta", 5, 8, 18, alpha=0.5, beta=-2.0),
    gemm("gemm_beta_zero", 5, 8, 18, beta=0.0),
    gemm("gemm_no_c", 6, 8, 32, c=None),
    gemm("gemm_no_c_opset11", 6, 8, 32, c=None, opset=11),
    gemm("gemm_opset7", 3, 4, 16, opset=7),
    gemm("gemm_opset9", 3, 4, 16, opset=9, alpha=2.0),
    gemm("gemm_narrow_b", 5, 7, 3),  # n < one panel: B stays plain
    gemm("gemm_narrow_b_trans", 5, 7, 3, trans_b=1),
    gemm("gemm_gemv", 1, 300, 100),  # one row: the single-row kernel
    gemm("gemm_fc_batch", 2, 512, 1000, trans_b=1),
    gemm("gemm_k_blocks", 13, 600, 35),  # three k-blocks of the core
    gemm("gemm_row_blocks", 200, 300, 20),  # more rows than one row block of the core
    gemm("gemm_k_one", 8, 1, 33),
    # C broadcast forms
    gemm("gemm_c_scalar", 4, 5, 18, c=()),
    gemm("gemm_c_one", 4, 5, 18, c=(1,), beta=0.7),
    gemm("gemm_c_row", 4, 5, 18, c=(1, 18)),
    gemm("gemm_c_col", 4, 5, 18, c=(4, 1), beta=1.5),
    gemm("gemm_c_full", 4, 5, 18, c=(4, 18)),
    gemm("gemm_c_1x1", 4, 5, 18, c=(1, 1)),
    gemm("gemm_c_runtime_full", 6, 5, 19, c=(6, 19), const_c=False, beta=0.25),
    gemm("gemm_c_runtime_row", 6, 5, 19, c=(19,), const_c=False),
    # B computed at run time: plain, or packed by the kernel when transposed
    gemm("gemm_runtime_b", 9, 7, 21, const_b=False),
    gemm("gemm_runtime_b_trans", 9, 7, 21, const_b=False, trans_b=1),
    gemm("gemm_runtime_b_trans_a", 9, 7, 21, const_b=False, trans_a=1, trans_b=1, alpha=-1.0),
    gemm("gemm_runtime_b_wide", 20, 300, 50, const_b=False),
    op_case("gemm_const_a", "Gemm", {"b": (6, 20)}, consts={"a": w(5, 6), "c": w(20)}, input_order=["a", "b", "c"]),
]


def matmul(case_id: str, a: tuple, b: tuple, *, const_b: bool = False, opset: int = 13) -> object:
    if const_b:
        return op_case(case_id, "MatMul", {"a": a}, consts={"b": w(*b)}, opset=opset)
    return op_case(case_id, "MatMul", {"a": a, "b": b}, opset=opset)


CASES += [
    matmul("matmul_2d", (5, 7), (7, 9)),
    matmul("matmul_2d_const", (5, 7), (7, 40), const_b=True),
    matmul("matmul_opset9", (3, 4), (4, 5), opset=9),
    matmul("matmul_vec_mat", (7,), (7, 20)),
    matmul("matmul_mat_vec", (6, 7), (7,)),
    matmul("matmul_vec_vec", (9,), (9,)),
    matmul("matmul_vec_vec_const", (9,), (9,), const_b=True),
    matmul("matmul_3d_vec", (2, 3, 5), (5,)),
    matmul("matmul_vec_3d", (5,), (2, 5, 3)),
    matmul("matmul_batch_shared_b", (2, 3, 4, 5), (5, 6)),  # batches fold into rows
    matmul("matmul_batch_shared_b_const", (2, 3, 4, 5), (5, 24), const_b=True),
    matmul("matmul_broadcast_a", (4, 5), (2, 5, 6)),
    matmul("matmul_broadcast_both", (1, 3, 4, 5), (2, 1, 5, 6)),
    matmul("matmul_batched", (2, 3, 4, 5), (2, 3, 5, 6)),
    matmul("matmul_batched_const", (2, 7, 5), (2, 5, 20), const_b=True),
    matmul("matmul_batched_const_narrow", (3, 7, 5), (1, 5, 4), const_b=True),
    matmul("matmul_rank5", (2, 1, 2, 3, 4), (3, 1, 4, 2)),
    matmul("matmul_linear", (1, 64, 300), (300, 40), const_b=True),
    matmul("matmul_runtime_k_blocks", (1, 70, 300), (300, 45)),
    matmul("matmul_attention", (1, 4, 33, 16), (1, 4, 16, 33)),
    matmul("matmul_runtime_partial_panels", (2, 30, 40), (2, 40, 21)),
]

# Every case again with no memory to spare (the only step of a one-node graph is its peak): the
# core without its block copies, a plain B's partial last panel read in place.
CASES += [dataclasses.replace(c, id=f"tight_{c.id}", scratch_floor=0) for c in CASES]

# float64 (gemm_f64.c): the same products in double, against onnxruntime's double Gemm and MatMul: short
# row tiles, columns past one tile (gemm_fc_batch: 1000), a B read by columns (run-time transB), C broadcast
_BY_ID = {c.id: c for c in CASES}
CASES += [as_float64(_BY_ID[i]) for i in (
    "gemm_const_b_bias", "gemm_trans_b_const", "gemm_trans_ab", "gemm_alpha_beta", "gemm_no_c", "gemm_c_col",
    "gemm_c_scalar", "gemm_c_runtime_full", "gemm_runtime_b", "gemm_runtime_b_trans", "gemm_runtime_b_trans_a",
    "gemm_k_blocks", "gemm_fc_batch", "gemm_gemv", "gemm_const_a",
    "matmul_2d", "matmul_2d_const", "matmul_vec_mat", "matmul_mat_vec", "matmul_vec_vec", "matmul_3d_vec",
    "matmul_batch_shared_b", "matmul_broadcast_a", "matmul_broadcast_both", "matmul_batched", "matmul_batched_const",
    "matmul_rank5", "matmul_attention", "matmul_runtime_k_blocks")]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


# --- refused at compile time ----------------------------------------------------------------

def _int_matmul():
    a = helper.make_tensor_value_info("a", 6, [2, 3])
    b = helper.make_tensor_value_info("b", 6, [3, 4])
    y = helper.make_tensor_value_info("y", 6, None)
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "g", [a, b], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


REFUSED = [
    ("matmul_int32", _int_matmul(), "dtype int32 is not supported"),
]


@pytest.mark.parametrize("case_id,model,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused(case_id, model, message):
    with pytest.raises(AotcError, match=message):
        compile_model(model)
