"""QLinearMatMul whose B, scales and zero points are model inputs (issue 51): QLinearMatMulValues, whose kernel
reads them at run time, against ONNX's reference (int32 sums, the multiplier in the scales' type, ties to
even); the integer kernels' constant-parameter path is test_quant.py's."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator
from opcheck import Case, model_case, shared_build, tensor_type

from aot.compiler import compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(51)
NAMES = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"]


def _ints(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)
    return RNG.integers(lo, hi, shape).astype(dtype)


def qmm_case(case_id: str, a_shape: tuple, b_shape: tuple, types: tuple[str, str, str] = ("uint8",) * 3,
             scale_type: str = "float32", scales: tuple = (0.0215, 0.0173, 0.0871), zeros: tuple = (113, 98, 121),
             omit_zeros: bool = False, const_b: bool = False) -> Case:
    """One QLinearMatMul-21 with every parameter a model input (b a constant with const_b), expected from the
    ONNX reference."""
    ta, tb, ty = types
    values = [_ints(ta, a_shape), np.array([scales[0]], scale_type), np.array([zeros[0]], ta),
              _ints(tb, b_shape), np.array([scales[1]], scale_type), np.array([zeros[1]], tb),
              np.array([scales[2]], scale_type), np.array([zeros[2]], ty)]
    if ta == "int8":
        values[2] = np.array([zeros[0] - 128], ta)
    if tb == "int8":
        values[5] = np.array([zeros[1] - 128], tb)
    if ty == "int8":
        values[7] = np.array([zeros[2] - 128], ty)
    names = [("" if omit_zeros and "zero" in n else n) for n in NAMES]
    feeds = {n: v for n, v in zip(names, values, strict=True) if n and not (const_b and n == "b")}
    inits = [helper.make_tensor(n, tensor_type(v.dtype), v.shape, v.flatten().tolist())
             for n, v in zip(names, values, strict=True) if const_b and n == "b"]
    y_shape = (*a_shape[:-1], b_shape[-1])
    node = helper.make_node("QLinearMatMul", names, ["y"], name="qmm")
    inputs = [helper.make_tensor_value_info(n, tensor_type(v.dtype), v.shape) for n, v in feeds.items()]
    graph = helper.make_graph([node], case_id, inputs, [helper.make_tensor_value_info("y", tensor_type(ty), y_shape)],
                              inits)
    case = model_case(case_id, graph, feeds, 21)
    case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
    return case


CASES = [
    qmm_case("qmm_values_2d_uint8", (2, 4), (4, 3)),
    qmm_case("qmm_values_3d_int8", (2, 3, 5), (2, 5, 4), ("int8",) * 3),
    qmm_case("qmm_values_3d_by_2d", (3, 2, 6), (6, 5)),
    qmm_case("qmm_values_mixed_types", (4, 7), (7, 3), ("uint8", "int8", "int8")),
    qmm_case("qmm_values_float16_scales", (2, 2, 4), (2, 4, 3), ("int8",) * 3, scale_type="float16"),
    qmm_case("qmm_values_no_zero_points", (3, 8), (8, 2), omit_zeros=True),
    qmm_case("qmm_values_saturates", (2, 16), (16, 2), scales=(0.5, 0.5, 0.01)),
    qmm_case("qmm_values_const_b", (2, 4), (4, 3), const_b=True),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matches_onnx_reference(built, case):
    ours = built.run(case.id)[0]
    np.testing.assert_array_equal(ours, case.expected[0])


def test_refuses_per_axis_scales_computed_at_run_time():
    case = qmm_case("qmm_values_per_axis", (2, 4), (4, 3))
    b_scale = next(i for i in case.model.graph.input if i.name == "b_scale")
    b_scale.type.tensor_type.shape.dim[0].dim_value = 3
    with pytest.raises(AotcError, match="per-axis scale or zero point"):
        compile_model(case.model)
