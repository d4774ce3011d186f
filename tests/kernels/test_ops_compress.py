"""Compress (issue 51) with its condition computed at run time: compiled to the declared output shape,
matching onnxruntime where the condition keeps that many slices; a condition keeping another count
makes the run return AOTC_ERR_SHAPE (-2) instead of writing a wrong shape."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from opcheck import model_case, shared_build

RNG = np.random.default_rng(51)


def _case(case_id: str, shape: tuple[int, ...], cond: list[bool], out: list[int], axis: int | None,
          dtype: int = TensorProto.FLOAT):
    attrs = {} if axis is None else {"axis": axis}
    g = helper.make_graph([helper.make_node("Compress", ["x", "c"], ["y"], **attrs)], case_id,
                          [helper.make_tensor_value_info("x", dtype, list(shape)),
                           helper.make_tensor_value_info("c", TensorProto.BOOL, [len(cond)])],
                          [helper.make_tensor_value_info("y", dtype, out)])
    x = RNG.standard_normal(shape).astype(np.float32) if dtype == TensorProto.FLOAT else \
        RNG.integers(-100, 100, size=shape).astype(np.int64)
    return model_case(case_id, g, {"x": x, "c": np.array(cond)})


CASES = [
    _case("axis0", (4, 3), [True, False, True, True], [3, 3], 0),
    _case("axis1_int64", (2, 5, 2), [False, True, False, False, True], [2, 2, 2], 1, TensorProto.INT64),
    _case("negative_axis_short_cond", (3, 4), [True, True], [3, 2], -1),  # cond shorter than the axis
    _case("flattened", (2, 3), [True, False, False, True, True], [3], None),
]
WRONG = _case("count_not_declared", (4, 3), [True, True, True, True], [3, 3], 0)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build([*CASES, WRONG], tmp_path_factory.mktemp("compress"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_compress_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_a_condition_keeping_another_count_returns_the_shape_error(built):
    with pytest.raises(AssertionError, match=r"_run returned -2"):
        built.run(WRONG.id)
