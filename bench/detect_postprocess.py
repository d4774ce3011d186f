"""TFLite_Detection_PostProcess (issue 50) on an SSD MobileNet's sizes, aotc's kernel against LiteRT's (one thread).

    python bench/detect_postprocess.py [--rounds N]

Writes a .tflite file of the custom op alone for each NMS path (tests/frontend/test_tflite_detect.py's builder):
1917 anchors of SSD's six feature maps (19 x 19 x 3, then 10, 5, 3, 2, 1 cells of 6), 90 classes and a background
column, the options the Object Detection API exports (score threshold 1e-8, IoU 0.6, 10 detections, 100 a class
for the regular path), box encodings N(0, 1) and scores sigmoid(N(-4, 1.5)), seeded; compiles and builds each and
prints `aotc bench`'s line: the bundle's and LiteRT's medians in microseconds. Needs ai-edge-litert.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "frontend"))

from test_tflite_detect import _options, detection_model  # noqa: E402

CLASSES = 90


def ssd_anchors() -> np.ndarray:
    """SSD's 1917 anchors (y, x, h, w): scales 0.2 to 0.95 over the six maps, aspect ratios 1, 2, 1/2 (and 3, 1/3
    and an interpolated scale past the first map)."""
    maps, scales = [19, 10, 5, 3, 2, 1], np.linspace(0.2, 0.95, 6)
    rows = []
    for k, f in enumerate(maps):
        s = scales[k]
        s2 = np.sqrt(s * (scales[k + 1] if k + 1 < len(maps) else 1.0))
        shapes = [(0.1, 1.0), (s, 2.0), (s, 0.5)] if k == 0 else \
            [(s, 1.0), (s, 2.0), (s, 0.5), (s, 3.0), (s, 1 / 3), (s2, 1.0)]
        rows += [((i + 0.5) / f, (j + 0.5) / f, sc / np.sqrt(ar), sc * np.sqrt(ar))
                 for i in range(f) for j in range(f) for sc, ar in shapes]
    return np.array(rows, np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    anchors = ssd_anchors()
    rng = np.random.default_rng(0)
    enc = rng.normal(0, 1, (1, len(anchors), 4)).astype(np.float32)
    scores = (1 / (1 + np.exp(-rng.normal(-4, 1.5, (1, len(anchors), CLASSES + 1))))).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(Path(tmp) / "in.npz", t0=enc, t1=scores)
        for regular in (False, True):
            name = f"ssd_postprocess_{'regular' if regular else 'fast'}"
            model = Path(tmp) / f"{name}.tflite"
            model.write_bytes(detection_model(_options(
                max_detections=10, detections_per_class=100, use_regular_nms=regular, nms_score_threshold=1e-8,
                nms_iou_threshold=0.6, num_classes=CLASSES), len(anchors), CLASSES + 1, anchors))
            out = Path(tmp) / name
            aotc = [sys.executable, "-m", "aot.cli"]
            subprocess.run([*aotc, str(model), "-o", str(out)], check=True, capture_output=True)
            subprocess.run(["cmake", "--build", str(out)], check=True, capture_output=True)
            run = subprocess.run([*aotc, "bench", str(out), "--inputs", str(Path(tmp) / "in.npz"), "--rounds",
                                  str(args.rounds)], check=True, capture_output=True, text=True)
            cells = next(line for line in run.stdout.splitlines() if line.startswith(f"| {name}")).split("|")
            print(f"{name}: bundle {cells[3].strip()} us, LiteRT {cells[15].strip()} us")


if __name__ == "__main__":
    main()
