"""TFLM's audio front end and a keyword spotter on a Cortex-M4 board (mps2-an386 under qemu, -O3), bit for bit
with TFLM's interpreter (issue 50): micro_speech's int8 front end (the signal library's kernels built for the
M4: the FFT's int16 butterflies, the 64-bit filter bank sums, TFLM's clz-based bit counts) and the streaming
int8 keyword spotter (that front end in float, then the int8 net through the DSP paths), over the first calls
of tests/models/tflite/tflm_signal_ref.npz, the state (noise estimate, history) carried from call to call as
in firmware; and the FFTs of tflm_fft.tflite (int16 and int32 fixed point, the latter's 64-bit products on a
32-bit core; float on the M4's single-precision FPU). (tests/frontend/test_tflite_signal.py says how the
models and the reference were made.)
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool, run_checked

from aot.build import cmake_exe, run_bundle

# qemu board runs that one fixture builds together: the whole file in the full tier (tests/README.md)
pytestmark = pytest.mark.full

HERE = Path(__file__).resolve().parents[1]
MODELS = HERE / "models" / "tflite"
CALLS = 5  # streamed calls a model (each a qemu run)


def _board(root: Path, name: str) -> tuple[list[np.ndarray], np.ndarray]:
    """The board's first output for each of the first CALLS frames, state and history fed back."""
    out = root / name
    for cmd in ([sys.executable, "-m", "aot.cli", str(MODELS / f"{name}.tflite"), "-o", str(out), "--target",
                 "mps2-an386", "--build-type", "Release"],
                [cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"],
                [cmake_exe(), "--build", str(out)]):
        run_checked(cmd)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    ref = np.load(MODELS / "tflm_signal_ref.npz")
    specs = meta["inputs"]
    state = {s["name"]: np.full(s["shape"], s["state"]["fill"], s["dtype"]) for s in specs if "state" in s}
    history = [s for s in specs if "state" not in s][1:]
    hist = [np.zeros(h["shape"], h["dtype"]) for h in history]
    outs = []
    for x in ref["frames480"][:CALLS]:
        got, _ = run_bundle(out, meta, [x.reshape(specs[0]["shape"]), *hist, *state.values()])
        outs.append(got[meta["outputs"][0]["name"]])
        hist = [got[meta["outputs"][1]["name"]]] if history else []
        state = {s["name"]: got[s["state"]["next"]] for s in specs if "state" in s}
    return outs, ref[f"{name}/out0"][:CALLS]


def _fft_board(root: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """tflm_fft's outputs on the board for the reference's inputs, and the reference's."""
    out = root / "tflm_fft"
    for cmd in ([sys.executable, "-m", "aot.cli", str(MODELS / "tflm_fft.tflite"), "-o", str(out), "--target",
                 "mps2-an386", "--build-type", "Release"],
                [cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"],
                [cmake_exe(), "--build", str(out)]):
        run_checked(cmd)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    ref = np.load(MODELS / "tflm_signal_ref.npz")
    got, _ = run_bundle(out, meta, [ref[f"tflm_fft/in{k}"][0] for k in range(len(meta["inputs"]))])
    return [got[s["name"]] for s in meta["outputs"]], [ref[f"tflm_fft/out{k}"][0] for k in range(len(meta["outputs"]))]


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    root = tmp_path_factory.mktemp("tflm_signal_m4")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_board, root, name) for name in ("tflm_frontend_int8", "tflm_kws_int8")}
        futures["tflm_fft"] = pool.submit(_fft_board, root)
        yield {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("name", ["tflm_frontend_int8", "tflm_kws_int8"])
def test_tflm_signal_on_m4_bit_exact_with_tflm(boards, name):
    ours, want = boards[name]
    for k, (got, w) in enumerate(zip(ours, want, strict=True)):
        assert np.array_equal(got.reshape(w.shape), w), f"{name} call {k}: {int((got.reshape(w.shape) != w).sum())}" \
                                                          f" of {w.size} differ"


def test_tflm_ffts_on_m4(boards):
    ours, want = boards["tflm_fft"]
    for k, (got, w) in enumerate(zip(ours, want, strict=True)):
        if w.dtype.kind == "f":
            assert float(np.abs(got.astype(np.float64) - w).max()) <= 1e-5 * max(1.0, float(np.abs(w).max())), k
        else:
            assert np.array_equal(got, w), f"output {k} ({w.dtype}): {int((got != w).sum())} of {w.size} differ"
