"""ReverseSequence against onnxruntime (issue 51: Keras 3's bidirectional LSTM through tf2onnx): time-major
and batch-major, sequence_lens constant (one constant Gather) and given at run time (indices computed)."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import op_case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(51)


def _case(case_id: str, shape: tuple[int, ...], lens: list[int], *, batch_axis: int, time_axis: int,
          runtime: bool, dtype: str = "float32"):
    x = RNG.standard_normal(shape).astype(dtype) if dtype.startswith("float") else \
        RNG.integers(-50, 50, size=shape).astype(dtype)
    n = np.array(lens, np.int64)
    inputs, consts = ({"x": x, "lens": n}, None) if runtime else ({"x": x}, {"lens": n})
    return op_case(case_id, "ReverseSequence", inputs, consts=consts, out_dtype=dtype,
                   attrs={"batch_axis": batch_axis, "time_axis": time_axis}, input_order=["x", "lens"])


CASES = []
for runtime in (False, True):
    tag = "runtime" if runtime else "const"
    CASES += [
        _case(f"time_major_{tag}", (5, 3, 4), [5, 1, 3], batch_axis=1, time_axis=0, runtime=runtime),
        _case(f"batch_major_{tag}", (3, 5, 2, 2), [2, 5, 4], batch_axis=0, time_axis=1, runtime=runtime),
        _case(f"batch_major_2d_{tag}", (4, 6), [6, 0, 1, 3], batch_axis=0, time_axis=1, runtime=runtime),
        _case(f"time_major_int64_{tag}", (4, 2), [3, 4], batch_axis=1, time_axis=0, runtime=runtime, dtype="int64"),
    ]


# a run-time length beyond T: onnxruntime raises; the rows it would read past the input are zeros, never
# the next sequence's (batch-major rows are adjacent in memory)
_over = _case("batch_major_too_long_runtime", (3, 4), [2, 6, 4], batch_axis=0, time_axis=1, runtime=True)
_x = _over.feeds["x"]
_over.expected = [np.stack([np.r_[_x[0, 1::-1], _x[0, 2:]], np.r_[0, 0, _x[1, 3:1:-1]].astype(np.float32),
                            _x[2, ::-1]])]  # row 1, t = 0..3, reads x[1, 5 - t]: past the input for t < 2
CASES.append(_over)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("sequence"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_reverse_sequence(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("attrs,lens,words", [
    ({"batch_axis": 1, "time_axis": 1}, [1, 2, 3], ["batch_axis (1) and time_axis (1)"]),
    ({"batch_axis": 1, "time_axis": 0}, [1, 6, 3], ["sequence_lens [1, 6, 3]", "between 0 and", "5"]),
])
def test_bad_reverse_sequence_is_refused(attrs, lens, words):
    case = op_case("bad", "ReverseSequence", {"x": (5, 3)}, consts={"lens": np.array(lens, np.int64)}, attrs=attrs)
    with pytest.raises(AotcError) as e:
        compile_model(case.model, Options(name="bad"))
    for w in words:
        assert w in str(e.value), str(e.value)
