"""Hybrid TFLite models (issue 50): dynamic-range quantisation as the converter writes it (Optimize.DEFAULT, no
representative dataset: int8 weights, float32 activations; examples/make_tflite_models.py HYBRID), which LiteRT
runs with its hybrid kernels (the float input quantized to int8 at run time, int32 sums). aotc computes as
they do (aot/frontend/tflite/hybrid.py, runtime_c/kernels/tflite_hybrid/): bit-exact with LiteRT's reference
kernels, within float tolerance of its default ones, with the weights kept int8."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import tiered
from modelcheck import aotc
from tflite_reference import reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tflite import MODELS, _compile_build_run, _require_litert  # noqa: E402

# hybrid_mlp: FULLY_CONNECTED, asymmetric and (last) symmetric input quantisation, fused RELU, a float FC between;
# hybrid_conv: per-channel CONV_2D (also grouped and dilated), DEPTHWISE_CONV_2D (multiplier 4, stride 2, RELU6);
# hybrid_conv_pt: one scale per weight tensor (LiteRT's symmetric per-tensor conv path); int4_dynamic: hybrid_mlp's
# float model through ai-edge-quantizer's dynamic_wi4_afp32 (INT4 weights, unpacked when read, symmetric inputs);
# int4_weight_only: its weight_only_wi4_afp32 (a DEQUANTIZE of each INT4 weight: float arithmetic, within tolerance)
# embed_hybrid: EMBEDDING_LOOKUP of int8 rows (a scale per row, and one scale) into float32 (written with the schema)
# hybrid_deconv: Keras Conv2DTranspose (TRANSPOSE_CONV, its float sums in LiteRT's scatter order)
HYBRID = ["hybrid_mlp", "hybrid_conv", "hybrid_conv_pt", "int4_dynamic", "int4_weight_only", "embed_hybrid",
          "hybrid_deconv"]
NOT_EXACT = {"int4_weight_only"}  # float sums in another order than LiteRT's


@pytest.mark.parametrize("name", tiered(HYBRID, {"hybrid_conv", "int4_dynamic"}))
def test_hybrid_model_matches_litert(tmp_path, name):
    """Bit-exact with LiteRT's reference kernels (BUILTIN_REF); within 1e-5 of each output's scale of its default
    kernels (which compute some float products in another order, and int4 weights by a path of their own).
    Compiling the int8 weights dequantized instead is 2.5e-3 off on hybrid_mlp, beyond float tolerance: the
    input's run-time rounding is part of the result."""
    _require_litert()
    model = MODELS / f"{name}.tflite"
    meta, feeds, ours = _compile_build_run(tmp_path, model)
    ins = [feeds[s["name"]] for s in meta["inputs"]]
    for builtin in (False, True):
        for spec, ref in zip(meta["outputs"], reference(model, ins, tmp_path, builtin=builtin).values(), strict=True):
            got = ours[spec["name"]]
            assert got.shape == ref.shape
            if not builtin and name not in NOT_EXACT:
                assert np.array_equal(got, ref), f"{name}: {int(np.sum(got != ref))} elements differ from BUILTIN_REF"
            err = float(np.abs(got.astype(np.float64) - ref).max())
            assert err <= 1e-5 * max(1.0, float(np.abs(ref).max())), f"{name}: max error {err:.3g}"


def test_hybrid_weights_stay_int8(tmp_path):
    """The bundle keeps the file's int8 weights (and a float scale and an int32 row sum per output channel)."""
    from aot.frontend.tflite import read_tflite

    model = MODELS / "hybrid_conv.tflite"
    m = read_tflite(model)
    int8_bytes = sum(t.data.nbytes for t in m.tensors if t.data is not None and t.dtype == "int8")
    out = tmp_path / "out"
    aotc(model, "-o", out)
    weights = json.loads((out / "bundle" / "metadata.json").read_text())["memory"]["weights_bytes"]
    assert int8_bytes > 10_000 and weights < 1.5 * int8_bytes, (weights, int8_bytes)


def test_grouped_conv_with_one_scale_refused_by_name(tmp_path):
    """A grouped hybrid CONV_2D with one weight scale: LiteRT's Prepare refuses it, so does aotc, in one line."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf((MODELS / "hybrid_conv.tflite").read_bytes(), 0)
    sg = m.subgraphs[0]
    conv = [o for o in sg.operators if m.operatorCodes[o.opcodeIndex].builtinCode == sch.BuiltinOperator.CONV_2D][1]
    q = sg.tensors[conv.inputs[1]].quantization
    q.scale, q.zeroPoint, q.quantizedDimension = [float(np.max(q.scale))], [0], 0
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    path = tmp_path / "grouped.tflite"
    path.write_bytes(bytes(fb.Output()))
    r = aotc(path, "-o", tmp_path / "out", check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "CONV_2D_1" in r.stderr and "grouped CONV_2D with one weight scale" in r.stderr, r.stderr


@pytest.mark.full
def test_hybrid_lstm_streams_like_litert(tmp_path):

    """hybrid_lstm: a tf_keras LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM) with int8 gate weights: x and h quantized at
    every step, as LiteRT's LstmStepHybrid (recurrent.py, by hybrid_fc), inside the step loop. Four calls of one
    interpreter, the state carried, against four runs that feed each run's state outputs back: within 1e-5 of
    each output's scale of the reference and the default kernels (measured 1.2e-7: the gates' sigmoid and tanh
    round differently)."""
    _require_litert()
    from test_tflite import _frames

    from aot.build import run_bundle

    model = MODELS / "hybrid_lstm.tflite"
    meta, _, _ = _compile_build_run(tmp_path, model)
    states = meta["inputs"][1:]
    n_out = len(meta["outputs"]) - len(states)
    frames = _frames(meta, 4)
    for builtin in (False, True):
        refs = reference(model, [np.stack(frames)], tmp_path, builtin=builtin, runs=True)
        wants = [refs[f"output_{k}"] for k in range(n_out)]
        state = {s["name"]: np.zeros(s["shape"], np.float32) for s in states}
        for r, frame in enumerate(frames):
            ours, _ = run_bundle(tmp_path / "out", meta, [frame, *(state[s["name"]] for s in states)])
            for spec, want in zip(meta["outputs"][:n_out], wants, strict=True):
                err = float(np.abs(ours[spec["name"]].astype(np.float64) - want[r]).max())
                assert err <= 1e-5 * max(1.0, float(np.abs(want[r]).max())), f"call {r}: max error {err:.3g}"
            state = {s["name"]: ours[s["name"] + "_next"] for s in states}


def test_packed_int4_and_int2_unpacked_low_bits_first():
    """LiteRT's UnpackPackedIntToInt8: the first element in each byte's lowest bits, two's complement."""
    from aot.frontend.tflite.reader import unpack_bits

    raw = np.array([0x7F, 0x08, 0xFF], np.uint8)
    assert unpack_bits(raw, 5, 4, True).tolist() == [-1, 7, -8, 0, -1]
    assert unpack_bits(raw, 6, 4, False).tolist() == [15, 7, 8, 0, 15, 15]
    assert unpack_bits(np.array([0b11100100], np.uint8), 4, 2, True).tolist() == [0, 1, -2, -1]


def _patched(tmp_path: Path, name: str, patch) -> Path:
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf((MODELS / name).read_bytes(), 0)
    patch(sch, m.subgraphs[0])
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    path = tmp_path / f"patched_{name}"
    path.write_bytes(bytes(fb.Output()))
    return path


def _refusal(path: Path, tmp_path: Path) -> str:
    r = aotc(path, "-o", tmp_path / "out", check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    return r.stderr


def test_blockwise_and_unquantized_integer_weights_refused_by_name(tmp_path):
    """Weights quantized by blocks (ai-edge-quantizer's blockwise recipes: a float16 scale per block of a row) are
    refused by name rather than read with no scale; so are integer weights with no quantisation parameters under a
    float op, which would otherwise be read as their raw values."""
    def blockwise(sch, sg):
        q = sg.tensors[sg.operators[0].inputs[1]].quantization
        q.detailsType, q.details = sch.QuantizationDetails.BlockwiseQuantization, sch.BlockwiseQuantizationT()
        q.details.scales, q.details.zeroPoints, q.details.blockSize = 0, -1, 32

    def unquantized(sch, sg):
        sg.tensors[sg.operators[0].inputs[1]].quantization = None

    err = _refusal(_patched(tmp_path, "int4_dynamic.tflite", blockwise), tmp_path)
    assert "FULLY_CONNECTED_0" in err and "quantized by blocks" in err, err
    err = _refusal(_patched(tmp_path, "hybrid_mlp.tflite", unquantized), tmp_path)
    assert "FULLY_CONNECTED_0" in err and "int8 weights" in err, err
