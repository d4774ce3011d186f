"""The table of quantized forms LiteRT's reference kernels define (aot/frontend/tflite/reference_types.py),
which `aotc ops --tflite` reads to say "refused: why" or "-", against the installed LiteRT."""

from __future__ import annotations

import pytest

from aot.frontend.tflite.reference_types import REFERENCE


@pytest.mark.slow
def test_reference_table_is_what_builtin_ref_runs(tmp_path):
    """Every (op, int8 / int16) the table lists runs, or fails, on BUILTIN_REF as it says (a one-op model per
    form: tests/tflite_probe.py; about a minute)."""
    pytest.importorskip("ai_edge_litert")
    import tflite_probe

    assert tflite_probe.probe(tmp_path) == REFERENCE


def test_page_says_refused_or_undefined():
    """A form the reference defines and aotc does not compile reads "refused: ..."; one it does not define, "-"."""
    from aot.tflite_ops_page import text

    assert "int8: -" in text("CUMSUM") and "16x8: -" in text("CUMSUM")  # LiteRT's CUMSUM takes no int8
    assert "16x8: -" in text("SQUARED_DIFFERENCE")  # int8 only
    assert set(REFERENCE) >= {"BATCH_MATMUL", "RESIZE_BILINEAR", "SQUARED_DIFFERENCE", "EXP", "GELU"}


@pytest.mark.slow
def test_kernel_table_is_what_litert_registers(tmp_path):
    """Every builtin one of LiteRT's resolvers has no kernel for is in KERNELS, as the probe finds it (a float32
    one-op model per builtin, each resolver: `python tests/tflite_probe.py --kernels`; a few minutes)."""
    pytest.importorskip("ai_edge_litert")
    import tflite_probe

    from aot.frontend.tflite.reference_types import KERNELS
    from aot.tflite_ops_page import builtin_names

    found = tflite_probe.kernels(tmp_path, builtin_names())
    assert {op: v for op, v in found.items() if v != (True, True)} == KERNELS
