"""TFLM's signal library (issue 50): its audio front end and a keyword-spotting pipeline, against TFLM's own
interpreter.

The models are made by examples/make_tflm_signal_models.py as TFLM's micro_speech example makes its front end
(TFLM's signal ops for TensorFlow, TFLiteConverter): micro_speech's int8 and float audio preprocessors, one
with other parameters (a 256-point FFT, whose complex half takes kissfft's radix-2 stage; 32 channels;
clamping), and a streaming keyword spotter (front end, then a small conv net on the last 49 frames'
features, float and full-int8). tflm_signal_ref.npz holds what TFLM's interpreter (pip tflite-micro) gave for
each over 17 calls of one interpreter (a spoken 'yes', noise, a frame of -32768, silence): its state (the
spectral subtraction's noise estimate) carried from call to call. Here each bundle runs the same calls,
carrying that state as the inputs and outputs the bundle names, from the start values its metadata gives:
the five compiled into one shared library (tests/opcheck.py), and the int8 front end also as a user
builds it (aotc, cmake, aotc run).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelcheck import aotc, build_bundle

HERE = Path(__file__).resolve().parents[1]
MODELS = HERE / "models" / "tflite"
REF = MODELS / "tflm_signal_ref.npz"
FRONTENDS = ("tflm_frontend_int8", "tflm_frontend_float", "tflm_frontend_v2")
KWS = ("tflm_kws_float", "tflm_kws_int8")
STREAMING = "tflm_streaming"
FFT = "tflm_fft"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """The five models compiled by aotc into one shared library (tests/opcheck.py), run through ctypes."""
    from opcheck import Case, shared_build

    from aot.frontend.tflite import load_tflite

    names = (*FRONTENDS, *KWS, STREAMING, FFT)
    work = tmp_path_factory.mktemp("signal")
    return shared_build([Case(name, load_tflite(MODELS / f"{name}.tflite"), {}) for name in names], work)


def _start(build, name: str, spec: dict) -> np.ndarray:
    """A state input's start value, as its metadata gives it: one value for all, or the bundle's file."""
    if "fill" in spec["state"]:
        return np.full(spec["shape"], spec["state"]["fill"], spec["dtype"])
    build.meta[name]  # (built, if this run's sample left it out)
    raw = (build.dirs[name] / spec["state"]["file"]).read_bytes()
    return np.frombuffer(raw, spec["dtype"]).reshape(spec["shape"]).copy()


def _stream(build, name: str, frames: np.ndarray) -> tuple[list[np.ndarray], np.ndarray | None]:
    """Run case `name` once a frame, each state input starting from its metadata's value and then fed its
    `next` output; a KWS model's history (its second input) fed back from its second output."""
    meta, case = build.meta[name], build.cases[name]
    specs, outs_spec = meta["inputs"], meta["outputs"]
    state = {s["name"]: _start(build, name, s) for s in specs if "state" in s}
    history = name in KWS
    hist = np.zeros(specs[1]["shape"], np.float32) if history else None
    outs = []
    for x in frames:
        case.feeds = {specs[0]["name"]: x.reshape(specs[0]["shape"]).astype(specs[0]["dtype"]), **state}
        if history:
            case.feeds[specs[1]["name"]] = hist
        got = dict(zip((o["name"] for o in outs_spec), build.run(name), strict=True))
        outs.append(got[outs_spec[0]["name"]])
        if history:
            hist = got[outs_spec[1]["name"]]
        state = {s["name"]: got[s["state"]["next"]] for s in specs if "state" in s}
    return outs, hist


@pytest.mark.parametrize("name", FRONTENDS)
def test_audio_frontend_bit_exact_with_tflm(shared, name):
    """micro_speech's audio preprocessors (int8 features, float features) and a variant: every output of 17
    streamed calls equal to TFLM's, bit for bit; the noise estimate is state the caller carries, starting
    at 0 (TFLM zeroes it at Prepare)."""
    ref = np.load(REF)
    meta = shared.meta[name]
    states = [s for s in meta["inputs"] if "state" in s]
    assert [s["dtype"] for s in states] == ["uint32"] and states[0]["state"]["fill"] == 0, states
    want = ref[f"{name}/out0"]
    outs, _ = _stream(shared, name, ref[f"frames{meta['inputs'][0]['shape'][-1]}"])
    for k, (got, w) in enumerate(zip(outs, want, strict=True)):
        assert np.array_equal(got.reshape(w.shape), w), f"call {k}: {int((got.reshape(w.shape) != w).sum())} of " \
                                                          f"{w.size} differ"
    assert len({w.tobytes() for w in want}) > len(want) // 2  # the calls' features differ


@pytest.mark.parametrize("name", KWS)
def test_keyword_pipeline_matches_tflm(shared, name):
    """The streaming keyword spotter, front end and conv net in one file and one bundle: 17 calls, each with
    the history the last one returned. The history (the float front end's features) equals TFLM's bit for
    bit; the scores are within 1e-5 of TFLM's (the float net: another summation order) or equal (the int8
    net's softmax, dequantized)."""
    ref = np.load(REF)
    outs, hist = _stream(shared, name, ref["frames480"])
    assert np.array_equal(hist, ref[f"{name}/history"])
    for k, (got, w) in enumerate(zip(outs, ref[f"{name}/out0"], strict=True)):
        err = float(np.abs(got.reshape(w.shape).astype(np.float64) - w).max())
        assert err <= (1e-5 if name.endswith("float") else 0.0), f"call {k}: scores differ by {err:.3g}"


def test_streaming_ops_bit_exact_with_tflm(shared):
    """Framer (prefilled, and not: its first calls' frames incomplete, `valid` false), Delay, OverlapAdd of int16
    and float32, Stacker (its first frame repeated as left context): 5 calls with random inputs, every output
    equal to TFLM's, the circular buffers carried as state rows from their start values (a prefilled Framer's
    count of held zeros comes from the bundle's state file)."""
    ref = np.load(REF)
    meta, case = shared.meta[STREAMING], shared.cases[STREAMING]
    specs = meta["inputs"]
    state = {s["name"]: _start(shared, STREAMING, s) for s in specs if "state" in s}
    n_out = len(meta["outputs"]) - len(state)
    valid = []
    for call in range(5):
        case.feeds = {specs[k]["name"]: ref[f"{STREAMING}/in{k}"][call] for k in range(2)} | state
        got = dict(zip((o["name"] for o in meta["outputs"]), shared.run(STREAMING), strict=True))
        for k, spec in enumerate(meta["outputs"][:n_out]):
            want, ours = ref[f"{STREAMING}/out{k}"][call], got[spec["name"]]
            ours = ours.reshape(want.shape)
            if want.ndim == 3 or want.shape == (160,):  # a Framer's frames, the Stacker's stack: those not complete
                done = ours.reshape(-1, want.shape[-1]).any(axis=-1)  # TFLM leaves as they were, aotc zeroes
                ours, want = ours.reshape(done.size, -1)[done], want.reshape(done.size, -1)[done]
            assert np.array_equal(ours, want), f"call {call}, output {k}"
            if spec["dtype"] == "bool":
                valid.append(bool(want))
        state = {s["name"]: got[s["state"]["next"]] for s in specs if "state" in s}
    assert True in valid and False in valid  # frames and stacks both still incomplete and complete


def test_ffts_match_tflm(shared):
    """SignalRfft and SignalIrfft of int16 (a 256-point FFT: a radix-2 stage), int32 (128 points) and float32
    (256), each spectrum back through the inverse, on random rows: the integers equal to TFLM's (kissfft's fixed
    point), the floats within 1e-5 of each output's scale (kissfft's float arithmetic in another build)."""
    ref = np.load(REF)
    meta, case = shared.meta[FFT], shared.cases[FFT]
    case.feeds = {spec["name"]: ref[f"{FFT}/in{k}"][0] for k, spec in enumerate(meta["inputs"])}
    for k, (spec, got) in enumerate(zip(meta["outputs"], shared.run(FFT), strict=True)):
        want = ref[f"{FFT}/out{k}"][0]
        assert got.dtype == want.dtype and got.shape == want.shape, (spec["name"], got.shape, want.shape)
        if want.dtype.kind == "f":
            err = float(np.abs(got.astype(np.float64) - want).max())
            assert err <= 1e-5 * max(1.0, float(np.abs(want).max())), f"output {k}: {err:.3g}"
        else:
            assert np.array_equal(got, want), f"output {k} ({want.dtype}): {int((got != want).sum())} differ"


def test_frontend_as_a_user_builds_it(tmp_path):
    """aotc, cmake --build, the runner: the int8 front end's first three calls from `aotc run`, the state
    absent from the first call's inputs (aotc run starts it from 0 and says so), then carried."""
    ref = np.load(REF)
    out = tmp_path / "out"
    meta = build_bundle(MODELS / "tflm_frontend_int8.tflite", out)
    header = (out / "bundle" / "include" / f"{meta['name']}.h").read_text()
    assert f"{meta['name']}_reset_state" in header
    x, state = meta["inputs"][0], meta["inputs"][1]
    feeds = {x["name"]: ref["frames480"][0].reshape(x["shape"])}
    for k in range(3):
        np.savez(tmp_path / "in.npz", **feeds)
        run = aotc("run", out, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "res.npz", check=False)
        assert run.returncode == 0, run.stderr
        assert (f"state {state['name']} not in the inputs" in run.stdout + run.stderr) == (k == 0), run.stdout
        res = np.load(tmp_path / "res.npz")
        assert np.array_equal(res[meta["outputs"][0]["name"]], ref["tflm_frontend_int8/out0"][k])
        feeds = {x["name"]: ref["frames480"][k + 1].reshape(x["shape"]),
                 state["name"]: res[state["state"]["next"]]}


def _edited(tmp_path: Path, edit) -> Path:
    """micro_speech's int8 front end with `edit(model, schema)` applied to its flatbuffer."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf((MODELS / "tflm_frontend_int8.tflite").read_bytes(), 0)
    edit(m, sch)
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    path = tmp_path / "edited.tflite"
    path.write_bytes(bytes(fb.Output()))
    return path


def _custom_op(m, name: str):
    g = m.subgraphs[0]
    return next(op for op in g.operators if m.operatorCodes[op.opcodeIndex].customCode == name.encode())


def _set_options(op, **values) -> None:
    from flatbuffers import flexbuffers

    opts = flexbuffers.Loads(bytes(op.customOptions))
    opts.update(values)
    op.customOptions = np.frombuffer(flexbuffers.Dumps(opts), np.uint8)


def _rename(m, old: str, new: str) -> None:
    for c in m.operatorCodes:
        if c.customCode == old.encode():
            c.customCode = new.encode()


@pytest.mark.parametrize("edit, message", [
    (lambda m, s: _set_options(_custom_op(m, "SignalRfft"), fft_length=500),
     "node 'SignalRfft_3' (CUSTOM): SignalRfft of fft_length 500: aotc takes powers of two"),
    (lambda m, s: _set_options(_custom_op(m, "SignalRfft"), T=9),
     "SignalRfft of TensorType 9 is not supported (int16, int32, float32"),
    (lambda m, s: _set_options(_custom_op(m, "SignalEnergy"), end_index=300),
     "SignalEnergy option end_index = 300 is not in [5, 257]"),
    (lambda m, s: _rename(m, "SignalPCAN", "SignalMelFilter"),
     "custom op 'SignalMelFilter' (TFLM signal library) is not supported"),
])
def test_signal_ops_refused_by_name(tmp_path, edit, message):
    """What the kernels do not take is refused in one line naming the op, exit 2, before any C is written."""
    model = _edited(tmp_path, edit)
    run = aotc(model, "-o", tmp_path / "out", check=False)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()
