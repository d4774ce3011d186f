"""The recurrent keyword spotters as torch.onnx.export writes them (tests/models/kws_*.onnx, made by
examples/export_recurrent.py; CI needs no torch): each through aotc -> cmake -> aotc run against
onnxruntime, and the streaming models run frame by frame with their state fed back, which must
give the whole-sequence model's answer (they share its weights)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import first_fast, require_tool
from modelcheck import compile_build_run, reference
from opcheck import Case, assert_close, shared_build

MODELS = Path(__file__).resolve().parents[1] / "models"
WHOLE = ["kws_gru", "kws_lstm", "kws_gru_dynamo"]
STREAM = ["kws_gru_stream", "kws_lstm_stream"]


def _feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in model.graph.input}


@pytest.mark.parametrize("name", first_fast(WHOLE + STREAM, 2))
def test_exported_model_matches_onnxruntime(tmp_path, name):
    model = onnx.load(str(MODELS / f"{name}.onnx"))
    assert {"LSTM", "GRU"} & {n.op_type for n in model.graph.node}
    feeds = _feeds(model)
    meta, ours = compile_build_run(tmp_path, model, feeds, name, cmake_args=("-DAOTC_WARNINGS_AS_ERRORS=ON",))
    for out, ref in zip(model.graph.output, reference(model, feeds), strict=True):
        assert_close(ours[out.name], ref, f"{name} {out.name}", relative=True)


@pytest.fixture(scope="module")
def streams():
    cases = [Case(n, onnx.load(str(MODELS / f"{n}.onnx")), {}) for n in STREAM]
    for c in cases:
        c.feeds = {k: np.zeros_like(v) for k, v in _feeds(c.model).items()}
    return shared_build(cases)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_streaming_equals_the_whole_sequence(streams, cell):
    """49 calls of one frame each, the state handed back (ping-pong), end where one call of 49 frames does."""
    whole = onnx.load(str(MODELS / f"kws_{cell}.onnx"))
    mfcc = _feeds(whole, seed=3)["mfcc"]
    case = streams.cases[f"kws_{cell}_stream"]
    names = [i.name for i in case.model.graph.input]
    state = [np.zeros((1, 1, 64), np.float32) for _ in names[1:]]
    for t in range(mfcc.shape[1]):
        case.feeds = dict(zip(names, [mfcc[:, t:t + 1], *state], strict=True))
        logits, *state = streams.run(case.id)
    assert_close(logits, reference(whole, {"mfcc": mfcc})[0], f"{cell} streamed", relative=True)


FIRMWARE_MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "kws_lstm_stream.h"
/* docs/firmware.md, "Streaming models": one buffer per state, then two that swap roles */
static uint8_t arena[KWS_LSTM_STREAM_ARENA_SIZE] __attribute__((aligned(KWS_LSTM_STREAM_ARENA_ALIGN)));
static float h[64], c[64], hs[2][64], cs[2][64];
static float frame[10], logits[12], mfcc[49][10];
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    int t, k = 0;
    (void)argc;
    if (!f || fread(mfcc, sizeof mfcc, 1, f) != 1) return 1;
    fclose(f);
    if (kws_lstm_stream_init(arena) != 0) return 2;
    {
        struct kws_lstm_stream_inputs in = { frame, h, c };
        struct kws_lstm_stream_outputs out = { logits, h, c };
        for (t = 0; t < 49; ++t) {
            memcpy(frame, mfcc[t], sizeof frame);
            if (kws_lstm_stream_run(&in, &out, arena) != 0) return 3;
        }
    }
    for (t = 0; t < 12; ++t) printf("%.9g ", logits[t]);
    printf("\n");
    for (t = 0; t < 49; ++t) {
        struct kws_lstm_stream_inputs in = { frame, hs[k], cs[k] };
        struct kws_lstm_stream_outputs out = { logits, hs[1 - k], cs[1 - k] };
        memcpy(frame, mfcc[t], sizeof frame);
        if (kws_lstm_stream_run(&in, &out, arena) != 0) return 4;
        k = 1 - k;
    }
    for (t = 0; t < 12; ++t) printf("%.9g ", logits[t]);
    printf("\n");
    return 0;
}
"""


@pytest.mark.full
def test_firmware_doc_streaming_calls(tmp_path):
    """The C of docs/firmware.md's streaming section, linked against the bundle's library: 49 frames
    with the state carried in one buffer (in and out of the same run), then in two that swap; both
    end at the whole-sequence model's logits."""
    from aot.build import cmake_exe

    require_tool("cc")
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "aot.cli", str(MODELS / "kws_lstm_stream.onnx"), "-o", str(out)],
                   check=True)
    subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
    (tmp_path / "main.c").write_text(FIRMWARE_MAIN)
    exe = tmp_path / "stream"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{out / 'bundle' / 'include'}",
                    str(tmp_path / "main.c"), str(out / "libkws_lstm_stream.a"), "-lm", "-o", str(exe)], check=True)
    whole = onnx.load(str(MODELS / "kws_lstm.onnx"))
    mfcc = _feeds(whole, seed=5)["mfcc"]
    mfcc.tofile(tmp_path / "mfcc.bin")
    r = subprocess.run([str(exe), str(tmp_path / "mfcc.bin")], check=True, capture_output=True, text=True)
    ref = reference(whole, {"mfcc": mfcc})[0]
    for line in r.stdout.strip().splitlines():
        assert_close(np.array([[float(v) for v in line.split()]], np.float32), ref, "streamed in C", relative=True)
