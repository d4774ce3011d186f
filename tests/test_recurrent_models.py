"""The recurrent keyword spotters as torch.onnx.export writes them (tests/models/kws_*.onnx, made by
examples/export_recurrent.py; CI needs no torch): each through aotc -> cmake -> aotc run against
onnxruntime, and the streaming models run frame by frame with their state fed back, which must
give the whole-sequence model's answer (they share its weights)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from opcheck import Case, assert_close, shared_build
from test_models import compile_build_run, reference

MODELS = Path(__file__).parent / "models"
WHOLE = ["kws_gru", "kws_lstm", "kws_gru_dynamo"]
STREAM = ["kws_gru_stream", "kws_lstm_stream"]


def _feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in model.graph.input}


@pytest.mark.parametrize("name", WHOLE + STREAM)
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
