"""Float builtins of LiteRT's reference resolver that aotc refused before issue 50's last part
(aot/frontend/tflite/resolver.py), against LiteRT's reference kernels: resolver2 (a tf.function through
TFLiteConverter: RIGHT_SHIFT by constant and run-time amounts, CAST through uint8 / uint16 / uint32, BITCAST,
SPARSE_TO_DENSE), stablehlo (written with the schema: STABLEHLO_ADD, _MULTIPLY, _MAXIMUM, _MINIMUM, RANK, RANGE,
DILATE) and window (REDUCE_WINDOW, STABLEHLO_REDUCE_WINDOW: aot/frontend/tflite/window.py, bit for bit);
and the builtins refused by design, each with its reason on the ops page."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import tiered
from tflite_reference import reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tflite import MODELS, _compile_build_run, _require_litert  # noqa: E402


@pytest.mark.parametrize("name", tiered(["resolver2_float", "stablehlo_float", "window_float"], {"stablehlo_float"}))
def test_resolver_builtins_match_litert_reference(tmp_path, name):
    """Every output equal to BUILTIN_REF's (integers bit for bit; the float ones here are exact too), on inputs
    that include negative integers and shift amounts out of [0, 31] (LiteRT clamps them)."""
    _require_litert()
    model = MODELS / f"{name}.tflite"
    meta, feeds, ours = _compile_build_run(tmp_path, model)
    refs = reference(model, [feeds[s["name"]] for s in meta["inputs"]], tmp_path).values()
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        got = ours[spec["name"]]
        assert got.dtype == ref.dtype and np.array_equal(got, ref), (name, spec["name"], got, ref)


def test_refused_builtins_say_why():
    """Hash tables and strings cannot be a static-arena bundle: `aotc ops --tflite` gives the reason for each
    (complex64 inside the graph compiles: RFFT2D is no longer among them, nor STABLEHLO_RNG_BIT_GENERATOR)."""
    from aot.tflite_ops_page import markdown, text

    assert "strings" in text("SKIP_GRAM") and "refused" not in text("STABLEHLO_RNG_BIT_GENERATOR")
    assert "float: yes" in text("RFFT2D") and "refused" not in text("RFFT2D")
    assert "hash tables" in markdown()


@pytest.mark.parametrize("name", tiered(["rnn_float", "rnn_hybrid", "lstmstep_float", "lstmstep_hybrid", "bidi_float",
                                         "bidi_hybrid", "svdf_float", "svdf_hybrid", "rnnshare_float",
                                         "varshare_float"], {"rnn_float", "lstmstep_hybrid"}))
def test_rnn_streams_like_litert(tmp_path, name):
    """RNN and UNIDIRECTIONAL_SEQUENCE_RNN (written with the schema: examples/make_tflite_models.py rnn_written), and
    the one-step builtin LSTM (lstm_step), BIDIRECTIONAL_SEQUENCE_RNN (merged) and _LSTM (two outputs, time-major),
    SVDF (svdf_written), float and hybrid (int8 weights: x and h quantized each step, as LiteRT's
    hybrid RnnBatchStep and LstmStepHybrid), and rnnshare (tf_keras SimpleRNNs whose WHILE reads a Bidirectional
    LSTM's state tensor, which LiteRT's LSTM has updated by then; varshare: ADDs reading the one-step LSTM's h
    tensor before and after it): three calls of one
    LiteRT interpreter, its hidden states carried, against three runs feeding each run's `_h_next` outputs back,
    from zeros; every output within 1e-5 of its scale of BUILTIN_REF's and the default kernels'."""
    from aot.build import run_bundle

    _require_litert()
    model = MODELS / f"{name}.tflite"
    meta, _, _ = _compile_build_run(tmp_path, model)
    data = [s for s in meta["inputs"] if "state" not in s]
    states = [s for s in meta["inputs"] if "state" in s]
    n_out = len(meta["outputs"]) - len(states)
    rng = np.random.default_rng(5)
    frames = [[rng.uniform(-1, 1, s["shape"]).astype(np.float32) for s in data] for _ in range(3)]
    for builtin in (False, True):
        refs = reference(model, [np.stack([f[k] for f in frames]) for k in range(len(data))], tmp_path,
                         builtin=builtin, runs=True)
        wants = [refs[f"output_{k}"] for k in range(n_out)]
        state = {s["name"]: np.zeros(s["shape"], np.float32) for s in states}
        for r, frame in enumerate(frames):
            feeds = dict(zip([s["name"] for s in data], frame, strict=True)) | state
            ours, _ = run_bundle(tmp_path / "out", meta, [feeds[s["name"]] for s in meta["inputs"]])
            for spec, want in zip(meta["outputs"][:n_out], wants, strict=True):
                err = float(np.abs(ours[spec["name"]].astype(np.float64) - want[r]).max())
                assert err <= 1e-5 * max(1.0, float(np.abs(want[r]).max())), f"{spec['name']} call {r}: {err:.3g}"
            state = {s["name"]: ours[s["name"] + "_next"] for s in states}
