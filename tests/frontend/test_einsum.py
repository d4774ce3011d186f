"""Einsum lowered to Transpose/Reshape/ReduceSum/MatMul at import (issue 15), against onnxruntime: the forms
transformers and exporters write, and one-line refusals for what is not lowered."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from opcheck import op_case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(5)
FORMS = [
    ("batch_matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("attention_scores", "bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 6, 8)]),
    ("attention_values", "bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 8)]),
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("matmul_implicit", "ij,jk", [(3, 4), (4, 5)]),
    ("matmul_transposed_out", "ij,jk->ki", [(3, 4), (4, 5)]),
    ("inner", "i,i->", [(7,), (7,)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("ellipsis", "...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("bilinear_sum", "bn,anm->ba", [(2, 3), (4, 3, 5)]),
    ("free_summed", "ij,kj->i", [(3, 4), (5, 4)]),
    ("transpose", "ij->ji", [(3, 4)]),
    ("transpose_4d", "nchw->nhwc", [(2, 3, 4, 5)]),
    ("sum_rows", "ij->i", [(3, 4)]),
    ("sum_all", "ij->", [(3, 4)]),
    ("identity", "ij->ij", [(3, 4)]),
]
CASES = []
for tag, eq, shapes in FORMS:
    inputs = {f"x{k}": RNG.standard_normal(s).astype(np.float32) for k, s in enumerate(shapes)}
    CASES.append(op_case(f"einsum_{tag}", "Einsum", inputs, attrs={"equation": eq}, opset=12))


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("eq, shapes, match", [
    ("ii->i", [(3, 3)], "repeats a label"),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "3 operands"),
    ("ij,jk->ik", [(3, 1), (4, 5)], "broadcasting a size-1"),
])
def test_refusals(eq, shapes, match):
    inputs = [helper.make_tensor_value_info(f"x{k}", 1, s) for k, s in enumerate(shapes)]
    node = helper.make_node("Einsum", [i.name for i in inputs], ["y"], equation=eq)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    with pytest.raises(AotcError, match=match):
        compile_model(model, Options(name="m"))
