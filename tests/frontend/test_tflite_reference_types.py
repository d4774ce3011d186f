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
