"""Issue 15, part 2: the recurrent keyword spotters (tests/models/kws_*.onnx, from
examples/export_recurrent.py): compile time, then `aotc bench` (bundle / onnxruntime, one thread,
median of rounds; max abs error; arena against the bound), at aotc's default (no scratch above the
tensors' peak: each step projects its own input) and with --scratch-floor (every step's
projection in one product before the loop). Also the unrolled form the issue started from: the
compile time of an LSTM written out step by step in plain ops, as a user had to before.

    python bench/recurrent.py [WORK_DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx

REPO = Path(__file__).resolve().parents[1]
MODELS = ["kws_gru", "kws_lstm", "kws_gru_dynamo", "kws_gru_stream", "kws_lstm_stream"]
AOTC = [sys.executable, "-m", "aot.cli"]


def compile_seconds(model: Path, out: Path, extra: list[str], repeats: int = 3) -> float:
    """Median wall time of `aotc MODEL -o OUT` (the CLI as a user runs it, Python start-up included)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([*AOTC, str(model), "-o", str(out), *extra], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def relative_error(out: Path, model: Path, work: Path) -> float:
    """Max abs error of the bundle against onnxruntime, over the largest |reference| of each output."""
    import onnxruntime as ort

    m = onnx.load(str(model))
    rng = np.random.default_rng(1)
    feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
             for i in m.graph.input}
    np.savez(work / "in.npz", **feeds)
    subprocess.run([*AOTC, "run", str(out), "--inputs", str(work / "in.npz"), "--outputs", str(work / "res.npz")],
                   check=True, capture_output=True)
    ours = np.load(work / "res.npz")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    refs = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    return max(float(np.max(np.abs(ours[o.name] - r)) / np.max(np.abs(r))) for o, r in zip(m.graph.output, refs,
                                                                                           strict=True))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default="/tmp/aotc_bench_recurrent")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--unrolled", type=Path, help="kws_lstm_unrolled.onnx from examples/export_recurrent.py")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print("| model | mode | compile s | bundle us | onnxruntime us | ratio | max err / scale | arena B | "
          "tensors bound B | arena / tensors |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    models = [REPO / "tests" / "models" / f"{name}.onnx" for name in MODELS]
    models += [args.unrolled] if args.unrolled else []
    for model in models:
        name = model.stem
        for mode, extra in (("default", []), ("scratch-floor 1M", ["--scratch-floor", str(1 << 20)])):
            out = work / f"{name}_{mode.split()[0]}"
            seconds = compile_seconds(model, out, extra)
            subprocess.run(["cmake", "--build", str(out), "-j", "2"], check=True, capture_output=True)
            r = subprocess.run([*AOTC, "bench", str(out), "--repeat", "200", "--rounds", str(args.rounds)],
                               check=True, capture_output=True, text=True)
            row = [c.strip() for c in r.stdout.strip().splitlines()[-1].strip("|").split("|")]
            bundle_us, ort_us, ratio, arena, tensors, ratio_t = row[1], row[2], row[3], row[7], row[8], row[10]
            err = relative_error(out, model, work)
            print(f"| {name} | {mode} | {seconds:.2f} | {bundle_us} | {ort_us} | {ratio} | {err:.2e} | {arena} | "
                  f"{tensors} | {ratio_t} |", flush=True)


if __name__ == "__main__":
    main()
