"""Unique (issue 51) with its outputs' shapes declared in the model: compiled to them, matching onnxruntime
where the data has that many distinct values or slices (flattened or along an axis, sorted or in order of
first occurrence, outputs left out); data with another count makes the run return AOTC_ERR_SHAPE (-2). A model
that leaves the count undeclared gets bounded outputs (planned at every slice distinct, the count their run-time
extent, as NonZero's); along an axis that is not outermost that is refused in one line."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from opcheck import model_case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

NP = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.INT64: np.int64,
      TensorProto.INT8: np.int8}


def _graph(case_id: str, x: np.ndarray, dtype: int, axis: int | None, sort: int, outputs: int,
           declared: bool = True) -> onnx.GraphProto:
    """Unique of x with its first `outputs` outputs, their shapes declared from numpy's answer."""
    a = None if axis is None else axis % x.ndim
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=a)
    k = len(idx)
    attrs = {"sorted": sort} if axis is None else {"sorted": sort, "axis": axis}
    names = ["Y", "indices", "inverse_indices", "counts"][:outputs]
    shapes = [list(y.shape), [k], [int(np.prod(x.shape)) if a is None else x.shape[a]], [k]]
    types = [dtype, TensorProto.INT64, TensorProto.INT64, TensorProto.INT64]
    return helper.make_graph([helper.make_node("Unique", ["X"], names, **attrs)], case_id,
                             [helper.make_tensor_value_info("X", dtype, list(x.shape))],
                             [helper.make_tensor_value_info(n, types[i], shapes[i] if declared else None)
                              for i, n in enumerate(names)])


def _case(case_id: str, x: list, dtype: int = TensorProto.FLOAT, axis: int | None = None, sort: int = 1,
          outputs: int = 4, declared: bool = True):
    arr = np.array(x, NP[dtype])
    return model_case(case_id, _graph(case_id, arr, dtype, axis, sort, outputs, declared), {"X": arr})


X6 = [2.0, 1.0, 1.0, 3.0, 4.0, 3.0]
CASES = [
    _case("sorted_flat", X6),
    _case("first_occurrence_flat", X6, sort=0),
    _case("int64_2d_flattened", [[5, -1, 5], [0, -1, 7]], TensorProto.INT64),
    _case("double_negative_zero", [0.0, -0.0, 1.5, -2.0, 1.5], TensorProto.DOUBLE),
    _case("int8_y_and_indices", [3, 3, -7, 0, 3], TensorProto.INT8, outputs=2),
    _case("rows_axis0", [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 3.0, 4.0]], axis=0),
    _case("columns_negative_axis", [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 3.0, 3.0]], axis=-1),
    _case("middle_axis_3d", [[[1, 1], [0, 1], [2, 1], [0, 1]], [[1, 1], [0, 1], [2, 1], [0, 1]]], TensorProto.INT64,
          axis=1),
    _case("middle_axis_unsorted", [[[3, 1], [0, 1], [3, 1], [-2, 1]]], TensorProto.INT64, axis=1, sort=0),
    # the count undeclared: bounded outputs, their rows the count
    _case("undeclared_sorted_flat", X6, declared=False),
    _case("undeclared_first_occurrence_int64", [[5, -1, 5], [0, -1, 7]], TensorProto.INT64, sort=0, declared=False),
    _case("undeclared_rows_axis0", [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 3.0, 4.0]], axis=0, declared=False),
    _case("undeclared_y_and_indices_one_value", [7.0, 7.0, 7.0], outputs=2, declared=False),
]
# compiled for four distinct values (X6's), run on data with five
WRONG = model_case("another_count", _graph("another_count", np.array(X6, np.float32), TensorProto.FLOAT, None, 1, 4),
                   {"X": np.array([2.0, 1.0, 5.0, 3.0, 4.0, 3.0], np.float32)})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build([*CASES, WRONG], tmp_path_factory.mktemp("unique"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_unique_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_data_with_another_count_returns_the_shape_error(built):
    with pytest.raises(AssertionError, match=r"_run returned -2"):
        built.run(WRONG.id)


def test_an_undeclared_count_along_an_inner_axis_is_refused():
    x = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], np.float32)
    g = _graph("undeclared", x, TensorProto.FLOAT, 1, 1, 4, declared=False)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(AotcError, match=r"\(Unique\): its count is not declared and its slices along axis 1 of "
                                        r"\[2, 3\] are not outermost"):
        compile_model(model, Options())
