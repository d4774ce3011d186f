"""TensorScatter (issue 51), lowered to a ScatterElements (canonical/index.py): against onnx's
reference, linear and circular (wrapping past the cache's end), write_indices a model input, a constant
or absent, the sequence axis -2 or another."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, shared_build

RNG = np.random.default_rng(51)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _case(case_id: str, past: tuple[int, ...], update: tuple[int, ...], indices: list[int] | None, *,
          runtime: bool = True, **attrs):
    ins = [helper.make_tensor_value_info("past", F, list(past)),
           helper.make_tensor_value_info("update", F, list(update))]
    inits, names = [], ["past", "update"]
    feeds = {"past": RNG.standard_normal(past).astype(np.float32),
             "update": RNG.standard_normal(update).astype(np.float32)}
    if indices is not None:
        names.append("wi")
        if runtime:
            ins.append(helper.make_tensor_value_info("wi", I64, [len(indices)]))
            feeds["wi"] = np.array(indices, np.int64)
        else:
            inits.append(helper.make_tensor("wi", I64, [len(indices)], indices))
    g = helper.make_graph([helper.make_node("TensorScatter", names, ["y"], **attrs)], case_id, ins,
                          [helper.make_tensor_value_info("y", F, list(past))], inits)
    case = model_case(case_id, g, feeds, opset=24)
    case.model.ir_version = 10
    case.expected = ReferenceEvaluator(case.model).run(None, feeds)
    return case


CASES = [
    _case("linear_runtime", (2, 3, 6, 4), (2, 3, 2, 4), [0, 4]),
    _case("circular_runtime_wraps", (3, 5, 2), (3, 3, 2), [4, 1, 3], mode="circular"),
    _case("linear_constant", (2, 6, 3), (2, 2, 3), [1, 3], runtime=False),
    _case("circular_constant_wraps", (2, 4, 3), (2, 3, 3), [2, 3], runtime=False, mode="circular"),
    _case("absent_indices", (2, 5, 3), (2, 2, 3), None),
    _case("axis_1_of_4", (2, 6, 3, 2), (2, 2, 3, 2), [3, 0], axis=1),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("tensor_scatter"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_tensor_scatter_matches_onnx_reference(built, case_id):
    built.check(case_id)
