"""Issue 28: the tf2onnx-style MLPerf Tiny networks (examples/tf2onnx_style.py) against the same networks
with BatchNorm folded, compiled with and without the passes that fold what tf2onnx writes
(SimplifyLayout, FoldAffine), each timed by `aotc bench` (bundle / onnxruntime, one thread, median of
rounds) and counted by callgrind (instructions of one inference, not noisy).

    python bench/tf2onnx_fold.py [WORK_DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))

import onnx  # noqa: E402
import tf2onnx_style  # noqa: E402

import aot.compiler as compiler  # noqa: E402
from aot.build import build as aot_build  # noqa: E402
from aot.build import configure  # noqa: E402
from aot.passes import DEFAULT_PIPELINE, FoldAffine, SimplifyLayout, simplify  # noqa: E402

WITHOUT = tuple(p for p in DEFAULT_PIPELINE if not isinstance(p, (FoldAffine, SimplifyLayout)))


def build(model_path: Path, out: Path, fold: bool) -> None:
    saved = compiler.simplify
    if not fold:  # partition_model's simplify without the issue-28 passes (HOST_PIPELINE is passed explicitly)
        compiler.simplify = lambda g, pipeline=None: simplify(g, WITHOUT if pipeline is None else pipeline)
    try:
        bundle = compiler.compile_file(model_path, compiler.Options(name=model_path.stem))
    finally:
        compiler.simplify = saved
    bundle.write(out / "bundle")
    configure(out, "host")
    aot_build(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default="/tmp/tf2onnx_fold")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, make in tf2onnx_style.MODELS.items():
        for folded in (False, True):
            path = work / f"{name}{'_folded' if folded else ''}.onnx"
            onnx.save(make(folded), str(path))
            for fold in (False, True):
                out = work / f"{path.stem}_{'after' if fold else 'before'}"
                build(path, out, fold)
                r = subprocess.run(["aotc", "bench", str(out), "--rounds", str(args.rounds), "--instructions"],
                                   capture_output=True, text=True, check=True)
                ratio = re.search(r"([0-9.]+)x", r.stdout)
                insns = re.search(r"([0-9,]+) instructions", r.stdout)
                rows.append((path.stem, "after" if fold else "before", ratio.group(1) if ratio else "?",
                             insns.group(1) if insns else "?"))
                print(*rows[-1], flush=True)
                print(r.stdout, flush=True)


if __name__ == "__main__":
    main()
