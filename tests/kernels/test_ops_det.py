"""Det (issue 51) against onnxruntime: one matrix and batches, 1 x 1 to 6 x 6, singular ones, and
float32 only (other dtypes refused by name)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from opcheck import model_case, shared_build

from aot.compiler import compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(51)


def _case(case_id: str, x: np.ndarray, dtype: int = TensorProto.FLOAT):
    g = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="det")], case_id,
                          [helper.make_tensor_value_info("x", dtype, list(x.shape))],
                          [helper.make_tensor_value_info("y", dtype, list(x.shape[:-2]))])
    return model_case(case_id, g, {"x": x})


_singular = RNG.standard_normal((2, 4, 4)).astype(np.float32)
_singular[:, 3] = _singular[:, 0] * 2
CASES = [
    _case("one_2x2", RNG.standard_normal((2, 2)).astype(np.float32)),
    _case("batch_3x3", RNG.standard_normal((5, 3, 3)).astype(np.float32)),
    _case("batch2_6x6", RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)),
    _case("one_1x1", np.array([[-3.5]], np.float32)),
    _case("singular", _singular),
    _case("needs_pivoting", np.array([[0, 1, 2], [3, 0, 1], [1, 2, 0]], np.float32)),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("det"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_det_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_det_of_float64_is_refused_by_name():
    with pytest.raises(AotcError, match=r"node 'det' \(Det\): .*float64"):
        compile_model(_case("f64", np.zeros((3, 3)), TensorProto.DOUBLE).model)
