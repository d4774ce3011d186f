"""The ONNX node-test suite: opt-in (`pytest -m slow`), since it compiles ~1000 models.

A case may be refused with a clear message; it may never be answered wrongly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "conformance" / "run_node_tests.py"


@pytest.mark.slow
def test_onnx_node_tests_are_passed_or_refused():
    r = subprocess.run([sys.executable, str(SCRIPT), "--by-op"], capture_output=True, text=True, timeout=3000)
    print(r.stdout)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = r.stdout.splitlines()[0]
    assert " 0 failed" in summary, r.stdout


@pytest.mark.parametrize("name", ["test_bitcast", "test_dft_", "test_castlike_FLOAT_to"])
def test_more_slices_of_the_node_tests(name):
    """Views across types, a run-time axis read by the kernel (DFT-20), the float16/bfloat16/float8 casts."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--filter", name], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert " 0 failed" in r.stdout.splitlines()[0], r.stdout


def test_a_small_slice_of_the_node_tests(tmp_path):
    """A fast sample in the normal suite: Pow cases (incl. integer exponents) pass or are refused, never wrong."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--filter", "test_pow"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert " 0 failed" in r.stdout.splitlines()[0], r.stdout
