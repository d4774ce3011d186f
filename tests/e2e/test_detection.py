"""An SSD-Lite-style detector as torch.onnx.export writes it (issue 18; examples/export_detection.py):
backbone, top-down Resize, two heads, box decoding, per-class NonMaxSuppression, the kept boxes,
scores and classes. Its outputs' rows are known only at run time (at most 40)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from opcheck import Case, reference, shared_build

MODEL = Path(__file__).resolve().parents[1] / "models" / "ssdlite_tiny.onnx"
BOUND, KEPT = 40, 23  # 10 boxes a class x 4 classes; what the test image keeps


def _image(seed: int = 18) -> np.ndarray:  # examples/export_detection.py's test_image() for seed 18
    return np.random.default_rng(seed).random((1, 3, 96, 96), dtype=np.float32)


@pytest.fixture(scope="module")
def built():
    model = onnx.load(str(MODEL))
    cases = [Case(f"ssd_{seed}", model, {"image": _image(seed)}) for seed in (18, 1, 2)]
    return shared_build(cases)


@pytest.mark.parametrize("seed", [18, 1, 2])
def test_kept_boxes_match_onnxruntime(built, seed):
    """The same boxes kept, in the same order, with the same classes; their coordinates and scores to
    the conv, exp and sigmoid arithmetic's ulp (bit for bit for the export's own image)."""
    boxes, scores, classes = built.run(f"ssd_{seed}")
    ref_boxes, ref_scores, ref_classes = reference(built.cases[f"ssd_{seed}"])
    assert 0 < len(classes) < BOUND  # not trivial, not saturated
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_allclose(boxes, ref_boxes, rtol=0, atol=1e-6)
    np.testing.assert_allclose(scores, ref_scores, rtol=0, atol=1e-6)


def test_outputs_are_bounded(built):
    meta = built.meta["ssd_18"]
    for spec, shape in zip(meta["outputs"], ([BOUND, 4], [BOUND], [BOUND]), strict=True):
        assert spec["shape"] == shape and spec["extent"] == {"axis": 0, "max": BOUND, "field": f"{spec['name']}_extent"}
    assert len(built.run("ssd_18")[2]) == KEPT


@pytest.mark.full
def test_aotc_run_prints_the_kept_boxes(tmp_path):
    out = tmp_path / "ssd"
    aotc = [sys.executable, "-m", "aot.cli"]
    r = subprocess.run([*aotc, str(MODEL), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    np.savez(tmp_path / "in.npz", image=_image())
    r = subprocess.run([*aotc, "run", str(out), "--inputs", str(tmp_path / "in.npz")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{KEPT} rows of boxes, scores, classes:" in r.stdout
    ref_boxes, ref_scores, ref_classes = reference(Case("x", onnx.load(str(MODEL)), {"image": _image()}))
    last = r.stdout.strip().splitlines()[-1]  # "     22: x1 y1 x2 y2 | score | class"
    assert last.split(":")[0].strip() == str(KEPT - 1) and last.split("|")[-1].strip() == str(ref_classes[-1])


@pytest.mark.full
def test_on_the_cortex_m55_board(tmp_path):
    """The same bundle for mps3-an547 (Cortex-M55, Helium) under qemu keeps the same boxes as
    onnxruntime, through the user's path (aotc -> cmake --build -> the runner)."""
    import json

    from conftest import require_tool

    from aot.build import run_bundle

    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "cmake")
    out = tmp_path / "m55"
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(MODEL), "--target", "mps3-an547", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    outputs, _ = run_bundle(out, meta, [_image()])  # builds it first
    ref_boxes, ref_scores, ref_classes = reference(Case("x", onnx.load(str(MODEL)), {"image": _image()}))
    np.testing.assert_array_equal(outputs["classes"], ref_classes)
    np.testing.assert_allclose(outputs["boxes"], ref_boxes, rtol=0, atol=1e-6)
    np.testing.assert_allclose(outputs["scores"], ref_scores, rtol=0, atol=1e-6)


@pytest.mark.parametrize("vendor", ["accel_sim"])
def test_backbone_offloads_post_processing_stays(vendor):
    """A vendor takes the convolutions; NonMaxSuppression and every node on its rows stay on the host."""
    from aot.compiler import Options, partition_model

    parted = partition_model(onnx.load(str(MODEL)), Options(name="ssd", vendors=(vendor,)))
    calls = [n for n in parted.graph.nodes if n.op == "Call"]
    assert calls, "the vendor took nothing"
    bounded = parted.graph.info.extent_root
    host_tail = [n for n in parted.graph.nodes if any(t in bounded for t in [*n.inputs, *n.outputs] if t)]
    assert {n.op for n in host_tail} >= {"NonMaxSuppression", "Gather"}
    assert not any(n.op == "Call" for n in host_tail)
