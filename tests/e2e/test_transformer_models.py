"""Transformer blocks as torch.onnx.export writes them (tests/models/{vit_tiny,gpt_tiny,...}.onnx, made by
examples/export_transformers.py; CI needs no torch): each through aotc -> cmake -Werror -> aotc run
against onnxruntime, error relative to each output's own scale. The dynamo exporter's files carry the
opset-23 Attention op; the TorchScript exporter's spell attention out in plain ops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from modelcheck import compile_build_run, reference
from opcheck import Case, assert_close, shared_build

MODELS = Path(__file__).resolve().parents[1] / "models"
ATTENTION = ["vit_tiny", "gpt_tiny", "gpt_tiny_cache", "mobilevit_block"]  # dynamo, opset 23: the Attention op
PLAIN = ["vit_tiny_ts", "encoder2", "convnext_block"]


def _feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        if i.type.tensor_type.elem_type == onnx.TensorProto.INT64:  # tokens and positions
            feeds[i.name] = (np.arange(int(np.prod(shape))).reshape(shape) * 7 % 16).astype(np.int64)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Every model in one shared library (one C build for all)."""
    cases = []
    for name in ATTENTION + PLAIN:
        model = onnx.load(str(MODELS / f"{name}.onnx"))
        case = Case(name, model, _feeds(model))
        case.relative = True
        cases.append(case)
    return shared_build(cases, tmp_path_factory.mktemp("transformers"))


@pytest.mark.parametrize("name", ATTENTION + PLAIN)
def test_exported_transformer_matches_onnxruntime(build, name):
    model = build.cases[name].model
    assert ("Attention" in {n.op_type for n in model.graph.node}) == (name in ATTENTION)
    build.check(name)


def test_the_users_path_aotc_cmake_run(tmp_path):
    """The ViT through aotc -> cmake --build (-Werror) -> aotc run, as a user runs it."""
    model = onnx.load(str(MODELS / "vit_tiny.onnx"))
    feeds = _feeds(model)
    meta, ours = compile_build_run(tmp_path, model, feeds, "vit_tiny", cmake_args=("-DAOTC_WARNINGS_AS_ERRORS=ON",))
    for out, ref in zip(model.graph.output, reference(model, feeds), strict=True):
        assert_close(ours[out.name], ref, f"vit_tiny {out.name}", relative=True)
