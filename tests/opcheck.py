"""The op tests' shared C build, which ships in the wheel as aot.testing (aot/testing/shared.py) so vendors
test with it too: re-exported under its old name for the tests that import it by name. The suite's own
settings reach it through the environment tests/conftest.py sets: the run's ccache as
CMAKE_C_COMPILER_LAUNCHER, the fast tier's sample as AOTC_TEST_SAMPLE."""

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

__all__ = ["F64_TOLERANCE", "Case", "SharedBuild", "as_float64", "assert_close", "compile_c", "model_case",
           "node_case", "op_case", "reference", "sampled", "shared_build", "tensor_type"]
