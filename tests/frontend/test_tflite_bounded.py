"""TFLite builtins whose outputs the data sizes (issue 50; aot/frontend/tflite/bounded.py), against LiteRT's
reference kernels: bounded_float (a tf.function through TFLiteConverter, examples/make_tflite_models_graphs.py)
has WHERE and a GATHER_ND of the elements it finds, UNIQUE of int32 and float32, NON_MAX_SUPPRESSION_V4 and
_V5 (soft and hard). WHERE's and UNIQUE's outputs are bounded (their first `extent` rows compared); the NMS
outputs are LiteRT's static [max_output_size], zeros past the count."""

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
from test_tflite import MODELS, _require_litert  # noqa: E402

MODEL = MODELS / "bounded_float.tflite"


def _feeds(seed: int) -> list[np.ndarray]:
    """x on [0, 1] (WHERE keeps about half; its first row is UNIQUE's float input, with a repeat), v with
    repeats, 16 boxes in four clusters (corners in either order, one of no area), scores with a tie."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (3, 4)).astype(np.float32)
    x[0, 3] = x[0, 1]
    v = rng.integers(-3, 4, 12).astype(np.int32)
    centres = rng.integers(0, 4, (16, 2)).astype(np.float32) * 0.3
    half = rng.uniform(0.08, 0.15, (16, 2)).astype(np.float32)
    boxes = np.concatenate([centres - half, centres + half], axis=1).astype(np.float32)
    flip = rng.random(16) < 0.5
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    boxes[5, 2] = boxes[5, 0]  # no area
    scores = rng.uniform(0, 1, 16).astype(np.float32)
    scores[9] = scores[4]
    scores[5] = 0.15  # the box of no area: LiteRT selects it again and again once it is the best left (V4, hard V5)
    return [x, v, boxes, scores]


@pytest.mark.parametrize("seed", tiered([0, 1, 2], {0}))
def test_bounded_outputs_match_litert_reference(tmp_path, seed):
    """Every output equal to BUILTIN_REF's: WHERE's coordinates and GATHER_ND's values, UNIQUE's values and
    indices, on their extent's rows (the rows past it are not the output); NMS's indices and scores whole."""
    _require_litert()
    from aot.build import run_bundle

    out = tmp_path / "out"
    aotc(MODEL, "-o", out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    feeds = _feeds(seed)
    ours, _ = run_bundle(out, meta, feeds)
    refs = reference(MODEL, feeds, tmp_path).values()
    bounded = [s["name"] for s in meta["outputs"] if "extent" in s]
    assert len(bounded) == 4, bounded  # WHERE, GATHER_ND, the two UNIQUEs' values
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        got = ours[spec["name"]]
        assert got.dtype == ref.dtype and got.shape == ref.shape and np.array_equal(got, ref), \
            (spec["name"], got, ref)
