"""DFT (issue 16) against onnxruntime: forward, inverse, one-sided, inverse one-sided (to a real signal),
real and complex inputs, dft_length padding and cropping, the axis as an attribute (opset 17) and as a
run-time input (opset 20) that the shapes pin or leave open (then read at run time)."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import op_case, shared_build

RNG = np.random.default_rng(17)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _declared(case, shape):
    for n in shape:
        case.model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = n
    return case


CASES = [
    op_case("dft_real_axis1", "DFT", {"x": _x(2, 8, 3, 1)}, attrs={"axis": 1}, opset=17),
    op_case("dft_complex_axis2", "DFT", {"x": _x(2, 3, 7, 2)}, attrs={"axis": 2}, opset=17),
    op_case("dft_inverse", "DFT", {"x": _x(1, 6, 2)}, attrs={"axis": 1, "inverse": 1}, opset=17),
    op_case("dft_onesided", "DFT", {"x": _x(3, 9, 1)}, attrs={"axis": 1, "onesided": 1}, opset=17),
    op_case("dft_length_pad", "DFT", {"x": _x(2, 5, 1)}, consts={"n": np.array(8, np.int64)}, attrs={"axis": 1},
            opset=17),
    op_case("dft_length_crop", "DFT", {"x": _x(2, 9, 2)}, consts={"n": np.array(6, np.int64)}, attrs={"axis": 1},
            opset=17),
    _declared(op_case("dft_runtime_axis_open", "DFT", {"x": _x(1, 4, 5, 1), "axis": np.array(-2, np.int64)},
                      input_order=["x", "", "axis"], opset=20), (1, 4, 5, 2)),
    _declared(op_case("dft_runtime_axis_pinned", "DFT", {"x": _x(2, 10, 4, 1), "axis": np.array(1, np.int64)},
                      input_order=["x", "", "axis"], attrs={"onesided": 1}, opset=20), (2, 6, 4, 2)),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_irfft_matches_numpy():
    """Inverse one-sided (onnxruntime has no such DFT): numpy's irfft is the reference."""
    spectrum = np.fft.rfft(_x(2, 10), axis=1)
    x = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)
    case = op_case("dft_irfft", "DFT", {"x": x}, attrs={"axis": 1, "inverse": 1, "onesided": 1}, opset=17)
    out = shared_build([case]).run(case.id)[0]
    np.testing.assert_allclose(out[..., 0], np.fft.irfft(spectrum, n=10, axis=1), atol=1e-5)


def test_run_time_axis_naming_no_compiled_one_is_an_error_code():
    case = _declared(op_case("dft_axis_out_of_range", "DFT", {"x": _x(1, 4, 5, 1), "axis": np.array(3, np.int64)},
                             input_order=["x", "", "axis"], opset=20), (1, 4, 5, 2))
    with pytest.raises(AssertionError, match="returned -2"):
        shared_build([case]).run(case.id)
