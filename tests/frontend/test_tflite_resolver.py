"""Float builtins of LiteRT's reference resolver that aotc refused before issue 50's last part
(aot/frontend/tflite/resolver.py), against LiteRT's reference kernels: resolver2 (a tf.function through
TFLiteConverter: RIGHT_SHIFT by constant and run-time amounts, CAST through uint8 / uint16 / uint32, BITCAST,
SPARSE_TO_DENSE) and stablehlo (written with the schema: STABLEHLO_ADD, _MULTIPLY, _MAXIMUM, _MINIMUM, RANK, RANGE);
and the builtins refused by design, each with its reason on the ops page."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tflite import MODELS, _compile_build_run, _reference, _require_litert  # noqa: E402


@pytest.mark.parametrize("name", ["resolver2_float", "stablehlo_float"])
def test_resolver_builtins_match_litert_reference(tmp_path, name):
    """Every output equal to BUILTIN_REF's (integers bit for bit; the float ones here are exact too), on inputs
    that include negative integers and shift amounts out of [0, 31] (LiteRT clamps them)."""
    _require_litert()
    model = MODELS / f"{name}.tflite"
    meta, feeds, ours = _compile_build_run(tmp_path, model)
    refs = _reference(tmp_path, model, [feeds[s["name"]] for s in meta["inputs"]])
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        got = ours[spec["name"]]
        assert got.dtype == ref.dtype and np.array_equal(got, ref), (name, spec["name"], got, ref)


def test_refused_builtins_say_why():
    """Random numbers, hash tables, strings and complex tensors cannot be a static-arena bundle: `aotc ops --tflite`
    gives the reason for each."""
    from aot.tflite_ops_page import markdown, text

    assert "random numbers" in text("RANDOM_UNIFORM") and "complex64" in text("RFFT2D")
    assert "hash tables" in markdown()
