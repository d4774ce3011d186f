"""--widened-weights (issue 52): on a core with SMLAD the int8 CONV_2D weights the DSP path reads are also stored
widened in its layout (aotc_dsp_widen_weights4's, doubled where the MAC kernel requantises), and DEPTHWISE_CONV_2D's
fused 3 x 3 set-up (depthwise_blocks: its weights widened and doubled, terms and sums' start), constants the
footprint counts and metadata.json records; the outputs stay those of LiteRT's reference kernels; a --flash-budget
drops them first. The M4 runs of the MLPerf models with it: tests/targets/test_tflite_cortex_m.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool

from aot.build import build, configure, run_bundle
from aot.compiler import Options, compile_file
from aot.footprint import measure
from aot.kernels.tflite_int8 import depthwise_blocks, widen_weights

HERE = Path(__file__).resolve().parents[1]
PERSON = HERE / "models" / "tflite" / "person_int8.tflite"


def _widened_by_bytes(w: np.ndarray, doubled: bool) -> np.ndarray:
    """widen_weights written out a word at a time, as tfl_dsp_weights fills its block (the reference)."""
    oc, k = w.shape
    kq, groups = -(-k // 4), -(-oc // 4)
    out = np.zeros((groups, kq, 8), np.uint32)
    for g in range(groups):
        for q in range(kq):
            for j in range(4):
                c = min(4 * g + j, oc - 1)
                b = [int(w[c, 4 * q + i]) if 4 * q + i < k else 0 for i in range(4)]
                b = [2 * v if doubled else v for v in b]
                out[g, q, j] = (b[0] & 0xFFFF) | (b[2] & 0xFFFF) << 16
                out[g, q, 4 + j] = (b[1] & 0xFFFF) | (b[3] & 0xFFFF) << 16
    return out


def test_layout_is_the_run_time_widening():
    """Groups past oc repeat the last channel, rows past k are zeros, each half a signed 16-bit weight."""
    rng = np.random.default_rng(5)
    for oc, k in ((4, 8), (6, 27), (13, 10), (1, 3)):
        w = rng.integers(-128, 128, (oc, k)).astype(np.int8)
        for doubled in (False, True):
            assert np.array_equal(widen_weights(w, doubled), _widened_by_bytes(w, doubled)), (oc, k, doubled)


def _dw_set_up(w: np.ndarray, bias: np.ndarray, mult: list[int], shift: list[int], x_zero: int,
               y_zero: int) -> np.ndarray:
    """depthwise_blocks a group at a time, as tfl_depthwise_s8_dsp sets a fused group up at run time (the
    reference): each tap's SXTB16 halves doubled, tfl_dsp_dw_usual's terms, the base from the weights' sums."""
    oc = w.shape[-1]
    taps = w.reshape(9, oc).astype(np.int64)
    out = []
    for g in range(oc // 4):
        ch = 4 * g
        words = []
        for t in range(9):
            v = [2 * int(taps[t, ch + j]) & 0xFFFF for j in range(4)]
            words += [v[0] | v[2] << 16, v[1] | v[3] << 16]
        for j in range(4):
            right = -shift[ch + j]
            words += [mult[ch + j] % 2**32, ((1 << (right - 1)) + (y_zero << right)) % 2**32, right]
        words += [(2 * int(bias[ch + j]) - 2 * x_zero * int(taps[:, ch + j].sum())) % 2**32 for j in range(4)]
        out.append(words)
    return np.array(out, np.uint32)


def test_depthwise_set_up_is_the_run_time_one():
    """DEPTHWISE_CONV_2D's block a group: 18 words of doubled taps, 12 of terms, 4 of the sums' start (mod 2^32)."""
    rng = np.random.default_rng(7)
    for oc in (4, 8, 32):
        w = rng.integers(-128, 128, (1, 3, 3, oc)).astype(np.int8)
        bias = rng.integers(-(1 << 20), 1 << 20, oc)
        mult = [int(m) for m in rng.integers(1 << 30, (1 << 31) - 1, oc)]
        shift = [int(s) for s in rng.integers(-22, 0, oc)]
        for x_zero, y_zero in ((-128, -128), (5, 17), (127, -3)):
            got = depthwise_blocks(w, bias, mult, shift, x_zero, y_zero)
            assert got.shape == (oc // 4, 34)
            assert np.array_equal(got, _dw_set_up(w, bias, mult, shift, x_zero, y_zero)), (oc, x_zero, y_zero)


def test_metadata_and_weights_count_the_widened_constants():
    """With the option on the M4, metadata.json names the convs and their bytes, and the weights the bundle stores
    grow by exactly those; without it, no key and the same C as before; on the host (no SMLAD path) none."""
    plain = compile_file(PERSON, Options(name="person", target="mps2-an386"))
    wide = compile_file(PERSON, Options(name="person", target="mps2-an386", widened_weights=True))
    ww = wide.metadata["widened_weights"]
    assert "widened_weights" not in plain.metadata and ww["nodes"] and ww["bytes"] > 0
    assert wide.metadata["memory"]["weights_bytes"] == plain.metadata["memory"]["weights_bytes"] + ww["bytes"]
    assert wide.metadata["memory"]["arena_bytes"] == plain.metadata["memory"]["arena_bytes"]
    assert ".dsp_wx = " in wide.files["src/person.c"] and ".dsp_wx" not in plain.files["src/person.c"]
    # the depthwise layers' set-up too (136 bytes a group of 4 channels), counted with the convs' weights
    src = wide.files["src/person.c"]
    assert ".dsp_dw = " in src and ".dsp_dw = " not in plain.files["src/person.c"]  # (.dsp_dwb: its own)
    assert len(ww["nodes"]) == src.count(".dsp_wx = ") + src.count(".dsp_dw = ")
    host = compile_file(PERSON, Options(name="person", target="host", widened_weights=True))
    assert host.metadata["widened_weights"] == {"nodes": [], "bytes": 0}


@pytest.mark.full
def test_metadata_counts_the_layers_of_runs_in_row_bands():
    """Under a RAM budget that DS-CNN meets only with a run of convs in row bands (10,545 B: CONV_2D_0 and
    DEPTHWISE_CONV_2D_1, the same bands with and without widened weights; at its least, 9,872 B, the widened build
    takes bands of one row, not two), the layers of the run take widened weights too: metadata.json names every
    node whose params point at them, and their bytes are the growth. (VWW at 30,200 B checked the same in 45 s a
    compile; DS-CNN's take 9 s.)"""
    kws = HERE.parent / "bench" / "models" / "keras" / "kws_dscnn_int8.tflite"
    metas, src = {}, ""
    for widened in (False, True):
        b = compile_file(kws, Options(name="kws", target="mps2-an386", ram_budget=10545, widened_weights=widened))
        metas[widened], src = b.metadata, b.files["src/kws.c"]
    ww = metas[True]["widened_weights"]
    runs = metas[True]["memory"]["ram_budget"]["traded"]["bands"]["runs"]
    assert runs and all(layer in ww["nodes"] for run in runs for layer in run["layers"]), (runs, ww["nodes"])
    assert len(ww["nodes"]) == src.count(".dsp_wx = ") + src.count(".dsp_dw = ") > src.count(".dsp_dw = ") > 0
    assert metas[True]["memory"]["weights_bytes"] == metas[False]["memory"]["weights_bytes"] + ww["bytes"]


def _litert(tmp_path: Path, feeds: list[np.ndarray]) -> list[np.ndarray]:
    np.savez(tmp_path / "in.npz", input_0=np.stack(feeds))
    r = subprocess.run([sys.executable, str(HERE / "tflite_reference.py"), str(PERSON), str(tmp_path / "in.npz"),
                        str(tmp_path / "out.npz"), "--runs"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    return list(np.load(tmp_path / "out.npz")["output_0"])


@pytest.mark.full
def test_on_the_m4_footprint_and_bit_exact(tmp_path):
    """Built for the M4: the library's flash (as aotc footprint measures it) grows by at least the widened
    constants, and every output is LiteRT's reference kernels'. A --flash-budget one byte under the widened
    library drops them first (level "unwidened"), which meets it."""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    metas, flash = {}, {}
    for name, widened in (("plain", False), ("wide", True)):
        b = compile_file(PERSON, Options(name="person", target="mps2-an386", widened_weights=widened))
        b.write(tmp_path / name / "bundle")
        metas[name] = b.metadata
        configure(tmp_path / name, "mps2-an386")
        build(tmp_path / name)
        flash[name] = measure(tmp_path / name, b.metadata)["model"]["flash_bytes"]
    assert flash["wide"] - flash["plain"] >= metas["wide"]["widened_weights"]["bytes"]
    feeds = [np.random.default_rng(s).integers(-128, 128, tuple(metas["plain"]["inputs"][0]["shape"]))
             .astype(np.int8) for s in range(3)]
    try:
        import ai_edge_litert  # noqa: F401
        refs = _litert(tmp_path, feeds)
    except ImportError:
        refs = None
    y = metas["plain"]["outputs"][0]["name"]
    for r, x in enumerate(feeds):
        got, _ = run_bundle(tmp_path / "wide", metas["wide"], [x])
        want, _ = run_bundle(tmp_path / "plain", metas["plain"], [x])
        assert np.array_equal(got[y], want[y]), r
        if refs is not None:
            assert np.array_equal(got[y], refs[r]), r
    roomy = compile_file(PERSON, Options(name="person", target="mps2-an386", widened_weights=True,
                                         flash_budget=10**9)).metadata["flash_budget"]
    tight = compile_file(PERSON, Options(name="person", target="mps2-an386", widened_weights=True,
                                         flash_budget=roomy["flash_bytes"] - 1)).metadata
    assert tight["flash_budget"]["level"] == "unwidened"
    assert [t["level"] for t in tight["flash_budget"]["levels_tried"]] == ["none", "unwidened", "portable-small"]
    assert tight["widened_weights"] == {"nodes": [], "bytes": 0}
    assert json.dumps(tight["flash_budget"])  # serialisable as written
