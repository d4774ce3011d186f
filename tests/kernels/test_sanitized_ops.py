"""The op suites again with the kernels built under AddressSanitizer and UndefinedBehaviorSanitizer.

The op tests load every case's C as one shared library into this Python process, so the
sanitizer runtimes are preloaded into a child pytest (AOTC_TEST_CFLAGS, read by opcheck.py,
adds the flags). The index kernels compute their addresses by hand; they run by default on a fixed
eighth of their cases (a case left out skips). The conv and GEMM op suites, whose kernels
tests/kernels_c/test_kernels_c.py already runs under the sanitizers, and every suite whole, run with --tier all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool

# sanitizer builds: the whole file in the full tier (tests/README.md; the fast tier runs these op tests plain)
pytestmark = pytest.mark.full

TESTS = Path(__file__).resolve().parents[1]
SAMPLE = 4  # one case in 4 under the sanitizers; --tier all takes them all
SANITIZE = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"


def run_sanitized(files: list[str], sample: int = SAMPLE) -> None:
    """Run the op test `files` in a child pytest with the sanitizers, one case in `sample` (a fixed
    choice by name: opcheck.sampled)."""
    require_tool("gcc")
    runtimes = [subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True,
                               check=True).stdout.strip() for lib in ("libasan.so", "libubsan.so")]
    for lib in runtimes:
        assert Path(lib).is_file(), f"gcc has no sanitizer runtime {lib} (Debian: libgcc-12-dev)"
    env = {**os.environ, "AOTC_TEST_CFLAGS": SANITIZE, "LD_PRELOAD": " ".join(runtimes),
           "ASAN_OPTIONS": "detect_leaks=0",  # Python's own allocations are not ours to judge
           "AOTC_TEST_SAMPLE": str(sample)}
    # the files' cases of the full tier, whichever tier this test runs in: the sample is this run's choice
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
                        "--tier", "full", *[str(TESTS / f) for f in files]], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout, r.stdout[-2000:]


# By default the conv and GEMM kernels run under ASan/UBSan in tests/kernels_c/test_kernels_c.py (every entry point,
# hundreds of shapes) and inside whole nets in tests/emit/test_bundle_quality.py.
@pytest.mark.slow
def test_conv_and_gemm_kernels_under_sanitizers():
    run_sanitized(["kernels/test_ops_conv.py", "kernels/test_ops_gemm.py"], sample=2 * SAMPLE)


def test_index_kernels_under_sanitizers():
    """Where, Gather/Scatter*, Trilu and CumSum walk odometers and read run-time indices and axes, the losses
    index by their targets; the integer elementwise kernels must not overflow (issues 15, 16)."""
    # 200 cases, mostly dtype repeats: one in 16 (one in 8 took 57 s of the full tier; the index family's C runs
    # under the sanitizers on random shapes in tests/kernels_c/test_kernels_c.py too)
    run_sanitized(["kernels/test_ops_index.py", "kernels/test_ops_loss.py"], sample=4 * SAMPLE)


def test_attention_kernel_under_sanitizers():
    """Attention reads 3-D and 4-D tensors, broadcast masks, a cache and a per-batch key count by
    strides it is handed (issue 15)."""
    run_sanitized(["kernels/test_ops_attention.py"])


def test_pow_by_a_constant_under_sanitizers():
    """Pow by an integer or half an integer is a loop the code generator writes (issue 64): NaN, infinities
    and zeros through its multiplies, square roots and divisions, every case."""
    run_sanitized(["kernels/test_ops_pow.py"], sample=1)


@pytest.mark.slow
def test_all_op_kernels_under_sanitizers():
    run_sanitized(sorted(f"kernels/{p.name}" for p in TESTS.glob("kernels/test_ops_*.py")), sample=1)


def test_loops_under_sanitizers():
    """A Loop's C reads scan rows, carried states and outer values by the step counter, and stops on a
    run-time condition (issue 26): the models of tests/frontend/test_loops.py, under ASan and UBSan, one in 8
    (one in 4 took 63 s of the full tier)."""
    run_sanitized(["frontend/test_loops.py"], sample=2 * SAMPLE)


def test_detection_under_sanitizers():
    """NonMaxSuppression's heap and NonZero's odometer, and the ops that read their rows (issue 18): the
    rows past each extent are poisoned while the tensor lives, so a kernel that read or wrote one is
    reported. Every case of tests/kernels/test_ops_detect.py."""
    run_sanitized(["kernels/test_ops_detect.py"], sample=1)  # its tests read the build's metadata by case


@pytest.mark.slow  # by default the torchvision detector below takes NMS, TopK and the gathers under the sanitizers
def test_detector_under_sanitizers():
    """The SSD-Lite-style detector end to end (tests/models/ssdlite_tiny.onnx, issue 18), its rows past
    each extent poisoned: the same boxes as onnxruntime on 3 images, nothing past the rows touched."""
    run_sanitized(["e2e/test_detection.py::test_kept_boxes_match_onnxruntime"], sample=1)


def test_torchvision_detector_under_sanitizers():
    """torchvision's SSD-Lite tail (tests/models/tv_ssdlite_small.onnx, issue 18): TopK of a run-time k
    over the class rows, the classes joined along their rows, the If around NonMaxSuppression over
    them, keep[:100]; every extent's rows past it poisoned. The same detections as onnxruntime, with
    and without any (the If's empty branch)."""
    run_sanitized(["e2e/test_torchvision_detection.py::test_kept_detections_match_onnxruntime"], sample=1)


@pytest.mark.slow  # (the kernels run under the sanitizers by default in tests/kernels_c/test_kernels_c.py)
def test_tflm_signal_models_under_sanitizers():
    """TFLM's signal ops inside whole models (tests/frontend/test_tflite_signal.py: the front ends, the keyword
    spotters, the streaming ops and the FFTs of every type): TFLM's wrapping integer arithmetic is written out
    through unsigned types, so UBSan must find no overflow, and ASan no access past a state row or a frame."""
    run_sanitized(["frontend/test_tflite_signal.py"], sample=1)
