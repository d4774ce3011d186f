"""Row bands on the ONNX route (issue 53; aot/kernels/nchw_bands.py): runs of NCHW convs (QLinearConv from a QDQ
model, its fused residual QLinearConvAdd, float Conv) through a --ram-budget's peak, computed a band of rows
across all channels at a time. On a conv chain with a depthwise conv at stride 2, pads, a residual block and a
5 x 3 window (tests/plan/nchw_chain.py), each budgeted bundle gives every output element of the unbudgeted one:
int8 on the host under ASan/UBSan and on the M4 under qemu, float on the host under ASan/UBSan (its band calls
run the kernel its whole call runs). A budget bands cannot meet is refused naming the runs fused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from modelcheck import sanitize_args
from nchw_chain import float_chain, qdq_chain

from aot.build import cmake_exe, configure, run_bundle
from aot.compiler import Options, compile_file
from aot.kernels.nchw_bands import _direct, _pitches
from aot.kernels.tflite_bands import Layer, schedule
from aot.plan import BudgetError


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("chain")
    float_chain(d / "f32.onnx", block=False)
    qdq_chain(d / "qdq.onnx")
    return {"f32": d / "f32.onnx", "qdq": d / "qdq.onnx"}


def _least(model: Path, opts: Options) -> int:
    with pytest.raises(BudgetError) as e:
        compile_file(model, Options(**{**opts.__dict__, "ram_budget": 1}))
    return e.value.least_bytes


def _runs(meta: dict) -> list[dict]:
    return meta["memory"]["ram_budget"]["traded"]["bands"]["runs"]


def _feeds(meta: dict, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, s["shape"]).astype(np.int8) if s["dtype"] == "int8"
            else rng.standard_normal(s["shape"]).astype(np.float32) for s in meta["inputs"]]


def _same_on_host(tmp_path: Path, model: Path, opts: Options, budget: int) -> dict:
    """Build the unbudgeted and the budgeted host bundles (the latter with ASan and UBSan, -Werror) and compare
    every output element on three inputs; the budgeted bundle's metadata."""
    metas = {}
    for name, b in (("plain", None), ("banded", budget)):
        bundle = compile_file(model, Options(**{**opts.__dict__, "ram_budget": b}))
        bundle.write(tmp_path / name / "bundle")
        metas[name] = bundle.metadata
        subprocess.run([cmake_exe(), "-S", str(tmp_path / name / "bundle"), "-B", str(tmp_path / name),
                        "-DAOTC_WARNINGS_AS_ERRORS=ON", *(sanitize_args(tmp_path / name / "bundle") if b else ())],
                       check=True, capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(tmp_path / name), "-j", "2"], check=True, capture_output=True)
    assert metas["banded"]["memory"]["arena_bytes"] <= budget
    for seed in range(3):
        feeds = _feeds(metas["plain"], seed)
        got, _ = run_bundle(tmp_path / "banded", metas["banded"], feeds)
        want, _ = run_bundle(tmp_path / "plain", metas["plain"], feeds)
        for k in want:
            assert np.array_equal(got[k], want[k]), (seed, k)
    return metas["banded"]


def test_line_buffer_pitches_follow_their_readers():
    """A line buffer is laid out as its reader's input that band (plane pitch = the rows the reader reads), so
    the pitch before a band is the one of the last band its reader ran; a layer writes straight into its line
    buffer only where its reader (1 x 1, stride 1) reads exactly its new rows."""
    layers = [Layer(40, 40, 1, 1, 0, 1, 8, 96), Layer(40, 20, 3, 2, 1, 1, 96, 48), Layer(20, 20, 1, 1, 0, 1, 48, 24)]
    sched = schedule(layers, 3)
    pitches = _pitches(sched)
    for b, band in enumerate(sched.bands):
        for k in range(2):
            before, now = pitches[b][k]
            assert now == (band.calls[k + 1].h if band.calls[k + 1].oh else before)
            assert b == 0 or before == pitches[b - 1][k][1]
    assert _direct(sched, 3) == (False, True, False)


@pytest.mark.full
def test_qdq_chain_in_bands_identical_on_the_host(tmp_path, models):
    """The QDQ chain (--quantized-io): unbudgeted 47,984 B on the host, the liveness bound 34,560 B; its least
    with bands fuses the stem's run and the residual block (ending in the QLinearConvAdd)."""
    opts = Options(name="chain", quantized_io=True)
    least = _least(models["qdq"], opts)
    plain = compile_file(models["qdq"], opts).metadata["memory"]
    assert least < plain["tight_bound_bytes"] * 0.8
    meta = _same_on_host(tmp_path, models["qdq"], opts, least)
    runs = _runs(meta)
    assert any(r["layers"][-1] == "Conv_31" for r in runs)  # the residual block's projection + Add
    assert all(r["calls"] > r["unbanded_calls"] for r in runs)


@pytest.mark.full
def test_fp32_chain_in_bands_identical_on_the_host(tmp_path, models):
    """The float chain without the residual block (138,240 B unbudgeted): 1x1, depthwise 3x3 at stride 2 (the flat
    kernel) and 1x1 in bands, each band call on the kernel of the unbanded call; every output bit the unbudgeted
    bundle's."""
    opts = Options(name="chain")
    plain = compile_file(models["f32"], opts).metadata["memory"]
    least = _least(models["f32"], opts)
    assert least < plain["arena_bytes"] * 0.6
    meta = _same_on_host(tmp_path, models["f32"], opts, least)
    for r in _runs(meta):
        assert all(len(k) == 1 for k in r["kernels"].values())


def test_refusal_names_the_runs_fused(models):
    """Below the least with bands, one line naming the runs fused in row bands and the least arena."""
    opts = Options(name="chain", quantized_io=True, target="mps2-an386")
    least = _least(models["qdq"], opts)
    with pytest.raises(BudgetError) as e:
        compile_file(models["qdq"], Options(**{**opts.__dict__, "ram_budget": least - 16}))
    msg = str(e.value)
    assert f"the least arena aotc reaches is {least:,} B" in msg and "runs of convs in row bands: bands_" in msg
    assert "\n" not in msg


@pytest.mark.full
def test_qdq_chain_in_bands_identical_on_the_m4(tmp_path, models):
    """On the M4 (the DSP paths under qemu) at the least budget: 44,992 B unbudgeted, every output element the
    unbudgeted bundle's."""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    opts = Options(name="chain", quantized_io=True, target="mps2-an386")
    least = _least(models["qdq"], opts)
    metas = {}
    for name, b in (("plain", None), ("banded", least)):
        bundle = compile_file(models["qdq"], Options(**{**opts.__dict__, "ram_budget": b}))
        bundle.write(tmp_path / name / "bundle")
        metas[name] = bundle.metadata
        configure(tmp_path / name, "mps2-an386")
    assert metas["plain"]["memory"]["arena_bytes"] == 44992 and metas["banded"]["memory"]["arena_bytes"] == least
    assert _runs(metas["banded"])
    for seed in range(2):
        feeds = _feeds(metas["plain"], seed)
        got, _ = run_bundle(tmp_path / "banded", metas["banded"], feeds)
        want, _ = run_bundle(tmp_path / "plain", metas["plain"], feeds)
        for k in want:
            assert np.array_equal(got[k], want[k]), (seed, k)
