"""Issue 50's last builtins, against LiteRT on models written with the schema (tflite_written.py): quantized
FLOOR_DIV / FLOOR_MOD on the raw integers as LiteRT computes them, and int32 FLOOR_DIV."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tflite import _require_litert  # noqa: E402
from tflite_written import Written, compare  # noqa: E402


@pytest.mark.parametrize("op", ["FLOOR_DIV", "FLOOR_MOD"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32"])
def test_floor_div_mod_integers(tmp_path, op, dtype):
    """int8 and int16 (quantized, scales unlike) and int32: every output bit for bit as BUILTIN_REF, the
    extremes of the type, a broadcast divisor, mixed signs (not the least value // -1: out of the type, LiteRT's
    double-to-integer cast of it is undefined, and its loops disagree)."""
    _require_litert()
    info = np.iinfo(np.dtype(dtype))
    quant = dtype != "int32"
    w = Written()
    a = w.tensor([2, 3, 8], dtype, quant=(0.05, -3 if dtype == "int8" else 0) if quant else None)
    b = w.tensor([3, 8], dtype, quant=(0.04, 5 if dtype == "int8" else 0) if quant else None)
    y = w.tensor([2, 3, 8], dtype, quant=(0.07, 1 if dtype == "int8" else 0) if quant else None)
    w.op(op, [a, b], [y])
    model = w.save(tmp_path / "m.tflite", [a, b], [y])
    rng = np.random.default_rng(1)
    lo, hi = max(info.min, -40000), min(info.max, 40000)
    xa = rng.integers(lo, hi + 1, (2, 3, 8)).astype(dtype)
    xb = rng.integers(-9, 10, (3, 8)).astype(dtype)
    xb[xb == 0] = 7
    xa[0, 0, :4] = [info.min, info.min, info.max, 0]
    xb[0, :4] = [-2, 1, -1, -3]
    xb[1, :3] = [info.max, info.min, info.min + 1] if dtype != "int32" else [3, -3, 5]
    compare(model, [xa, xb], sanitize=dtype == "int8")
