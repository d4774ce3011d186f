"""torchvision's SSD-Lite detector as torch.onnx.export writes it (issue 18): the same SSD,
SSDLiteHead and postprocess code as ssdlite320_mobilenet_v3_large, on MobileNetV3 at width 0.25
with 4 classes (tests/models/tv_ssdlite_small.onnx, from examples/export_torchvision_ssdlite.py
--small). Its tail: per-class NonZero, TopK with k = min(100, rows), the labels as ConstantOfShape of
the kept rows, torch.cat of the classes along their rows, an If on numel() == 0 around boxes.max()
and NonMaxSuppression over those rows, keep[:100] and the gathers of the kept rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import tiered
from opcheck import Case, reference, shared_build

MODEL = Path(__file__).resolve().parents[1] / "models" / "tv_ssdlite_small.onnx"
BOUND = 100  # detections_per_img
SCENES = {"scene_0": 0, "scene_1": 1, "scene_2": 2}


def scene(seed: int, size: int = 320) -> np.ndarray:
    """A synthetic scene: a sky-to-ground gradient, soft blobs, a few solid rectangles and noise."""
    r = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / size
    img = np.stack([0.3 + 0.5 * y, 0.4 + 0.3 * y, 0.8 - 0.5 * y]).astype(np.float32)
    for _ in range(4):
        cy, cx, s = r.random(3)
        col = r.random(3)
        g = np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (0.02 + 0.05 * s))
        img = img * (1 - g) + col[:, None, None] * g
    for _ in range(3):
        y0, x0 = r.integers(0, size - 60, 2)
        h, w = r.integers(30, 120, 2)
        img[:, y0:y0 + h, x0:x0 + w] = r.random(3)[:, None, None]
    return np.clip(img + 0.03 * r.standard_normal(img.shape), 0, 1).astype(np.float32)


@pytest.fixture(scope="module")
def built():
    model = onnx.load(str(MODEL))
    cases = [Case(name, model, {"image": scene(seed)}) for name, seed in SCENES.items()]
    cases.append(Case("flat", model, {"image": np.full((3, 320, 320), 0.5, np.float32)}))
    return shared_build(cases)


@pytest.mark.parametrize("name", tiered([*SCENES, "flat"], {"flat"}))
def test_kept_detections_match_onnxruntime(built, name):
    """The same detections kept, in the same order, with the same labels; boxes (in pixels, up to
    320) and scores to the backbone's float rounding."""
    boxes, scores, labels = built.run(name)
    ref_boxes, ref_scores, ref_labels = reference(built.cases[name])
    assert len(labels) < BOUND  # not saturated
    if name != "flat":
        assert len(labels) > 0
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(boxes, ref_boxes, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(scores, ref_scores, rtol=0, atol=1e-6)


def test_outputs_are_bounded(built):
    meta = built.meta["scene_0"]
    for spec, shape in zip(meta["outputs"], ([BOUND, 4], [BOUND], [BOUND]), strict=True):
        assert spec["shape"] == shape and spec["extent"]["max"] == BOUND


@pytest.mark.slow
def test_on_the_cortex_m55_board(tmp_path):
    """The same bundle for mps3-an547 (Cortex-M55, Helium) under qemu keeps the same detections as
    onnxruntime (about 206 M instructions an inference under qemu: slow)."""
    import json
    import subprocess
    import sys

    from conftest import require_tool

    from aot.build import run_bundle

    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "cmake")
    out = tmp_path / "m55"
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(MODEL), "--target", "mps3-an547", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    image = scene(0)
    outputs, _ = run_bundle(out, meta, [image])  # builds it first
    ref_boxes, ref_scores, ref_labels = reference(Case("x", onnx.load(str(MODEL)), {"image": image}))
    names = [o["name"] for o in meta["outputs"]]
    assert len(ref_labels) > 0
    np.testing.assert_array_equal(outputs[names[2]], ref_labels)
    np.testing.assert_allclose(outputs[names[0]], ref_boxes, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(outputs[names[1]], ref_scores, rtol=0, atol=1e-6)
