"""Issue 15: the transformer blocks as torch.onnx.export writes them (tests/models/, from
examples/export_transformers.py): compile time, max error relative to each output's scale, latency
against onnxruntime on one thread (`aotc bench`: medians of rounds that time both back to back),
and the arena against the tensors' bound.

    python bench/transformers.py [WORK_DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "e2e"), str(REPO / "tests"), str(REPO / "examples")]
from test_transformer_models import ATTENTION, PLAIN, _feeds  # noqa: E402

from aot.bench import bench_one  # noqa: E402
from aot.build import cmake_exe  # noqa: E402

AOTC = [sys.executable, "-m", "aot.cli"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default="/tmp/aotc_bench_transformers")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print("| model | Attention op | compile s | max err / scale | bundle us | onnxruntime us | ratio | arena B "
          "| tensors bound B |\n|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ATTENTION + PLAIN:
        src, out = REPO / "tests" / "models" / f"{name}.onnx", work / name
        model = onnx.load(str(src))
        feeds = _feeds(model)
        np.savez(work / f"{name}_in.npz", **feeds)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([*AOTC, str(src), "-o", str(out), "--no-configure"], check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        subprocess.run([*AOTC, str(src), "-o", str(out)], check=True, capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
        meta = json.loads((out / "bundle" / "metadata.json").read_text())
        row = bench_one(out, meta, inputs_npz=str(work / f"{name}_in.npz"), repeat=50, rounds=args.rounds)
        subprocess.run([*AOTC, "run", str(out), "--inputs", str(work / f"{name}_in.npz"), "--outputs",
                        str(work / f"{name}_out.npz")], check=True, capture_output=True)
        ours = np.load(work / f"{name}_out.npz")
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        refs = ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"]).run(None, feeds)
        err = max(float(np.max(np.abs(ours[o.name] - r)) / np.max(np.abs(r)))
                  for o, r in zip(model.graph.output, refs, strict=True))
        has_attention = "yes" if name in ATTENTION else "no"
        print(f"| {name} | {has_attention} | {statistics.median(times):.2f} | {err:.1e} | {row.bundle_us:.1f} | "
              f"{row.ort_us:.1f} | {row.ratio:.2f} | {row.arena_bytes} | {row.tight_bound_bytes} |", flush=True)


if __name__ == "__main__":
    main()
