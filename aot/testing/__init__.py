"""Testing with aotc, shipped in the wheel so a vendor package can use it (onnxruntime, the reference,
is an optional dependency: `pip install aotc[testing]`).

- `run_kit(vendor)`: the vendor test kit. The catalogue of op cases (`catalogue()`, aot/testing/
  cases.py) through one vendor: which cases it claimed, and whether what it computes matches onnxruntime.
  `aotc vendor-test NAME` runs it from the command line.
- The shared build it runs on (aot/testing/shared.py): `op_case`, `node_case`, `model_case` make cases,
  `shared_build(cases)` compiles them all into one shared library, `.check(case_id)` compares one with
  onnxruntime. aotc's own op tests use the same (tests/opcheck.py).
"""

from aot.testing.cases import catalogue, catalogue_ops, select
from aot.testing.kit import BUILD_ERROR, FAILED, NOT_CLAIMED, PASSED, CaseResult, Report, run_kit
from aot.testing.shared import (
    F64_TOLERANCE,
    Case,
    SharedBuild,
    as_float64,
    assert_close,
    compile_c,
    model_case,
    node_case,
    op_case,
    reference,
    sampled,
    shared_build,
    tensor_type,
)

__all__ = ["BUILD_ERROR", "F64_TOLERANCE", "FAILED", "NOT_CLAIMED", "PASSED", "Case", "CaseResult", "Report",
           "SharedBuild", "as_float64", "assert_close", "catalogue", "catalogue_ops", "run_kit", "compile_c",
           "model_case", "node_case", "op_case", "reference", "sampled", "select", "shared_build", "tensor_type"]
