"""Issue 28's closing table: the MLPerf Tiny networks exported from Keras (bench/keras_mlperf.py,
committed under bench/models/keras) against both references a Keras user has.

Host: each tf2onnx export and its BatchNorm-folded twin compiled for the host and timed by `aotc bench`
(bench_one) with onnxruntime and LiteRT (the TFLiteConverter file; one thread each, XNNPACK in LiteRT)
in the same rounds; ratios are medians of per-round ratios. Cortex-M4 (mps2-an386): instructions of
one inference under qemu (bench_board), tf2onnx export against the folded twin. Arena against the
tensors' tight bound.

    python bench/keras_bench.py [WORK_DIR] [--rounds 5] [--models kws_dscnn ...] [--no-m4] [--no-host]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import aot.compiler as compiler  # noqa: E402
from aot.bench import bench_board, bench_one  # noqa: E402
from aot.build import build, configure  # noqa: E402

MODELS_DIR = REPO / "bench" / "models" / "keras"
NAMES = ("kws_dscnn", "ic_resnet8", "vww_mobilenet", "ad_autoencoder")


def compiled(model: Path, out: Path, target: str) -> dict:
    """Compile, configure and build `model` for `target` into `out`; its metadata."""
    bundle = compiler.compile_file(model, compiler.Options(name=model.stem, target=target))
    bundle.write(out / "bundle")
    configure(out, target)
    build(out)
    return json.loads((out / "bundle" / "metadata.json").read_text())


def host(work: Path, names: list[str], rounds: int, repeat: int) -> None:
    print("| model | tf2onnx export / ort | folded / ort | LiteRT / ort | export / faster | faster "
          "| arena B | tensors bound B | folded arena B | LiteRT err |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for name in names:
        export, folded = MODELS_DIR / f"{name}.onnx", MODELS_DIR / f"{name}_folded.onnx"
        me = compiled(export, work / f"{name}_host", "host")
        mf = compiled(folded, work / f"{name}_folded_host", "host")
        re = bench_one(work / f"{name}_host", me, repeat=repeat, rounds=rounds,
                       tflite=str(MODELS_DIR / f"{name}.tflite"))
        rf = bench_one(work / f"{name}_folded_host", mf, repeat=repeat, rounds=rounds)
        lite_ort = statistics.median(a / b for a, b in zip(re.round_ratios, re.tflite_round_ratios, strict=True))
        faster = "LiteRT" if re.tflite_us < re.ort_us else "onnxruntime"
        print(f"| {name} | {re.ratio:.2f} | {rf.ratio:.2f} | {lite_ort:.2f} | {re.best_ratio:.2f} | {faster} "
              f"| {re.arena_bytes} | {re.tight_bound_bytes} | {rf.arena_bytes} | {re.tflite_max_abs_err:.1e} |",
              flush=True)
        print(f"<!-- {name}: bundle {re.bundle_us:.1f} us, folded {rf.bundle_us:.1f} us, onnxruntime "
              f"{re.ort_us:.1f} us, LiteRT {re.tflite_us:.1f} us; rounds export/ort "
              f"{' '.join(f'{x:.2f}' for x in re.round_ratios)}, export/faster "
              f"{' '.join(f'{x:.2f}' for x in re.best_round_ratios)} -->", flush=True)


def m4(work: Path, names: list[str]) -> None:
    print("| model | tf2onnx export instr | folded instr | export / folded | export arena B | folded arena B |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        rows, arenas = [], []
        for stem in (name, f"{name}_folded"):
            out = work / f"{stem}_m4"
            meta = compiled(MODELS_DIR / f"{stem}.onnx", out, "mps2-an386")
            rows.append(bench_board(out, meta))
            arenas.append(meta["memory"]["arena_bytes"])
        print(f"| {name} | {rows[0].instructions} | {rows[1].instructions} | "
              f"{rows[0].instructions / rows[1].instructions:.4f} | {arenas[0]} | {arenas[1]} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default="/tmp/keras_bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--models", nargs="*", default=list(NAMES))
    ap.add_argument("--no-m4", action="store_true", help="skip the Cortex-M4 instruction counts")
    ap.add_argument("--no-host", action="store_true", help="skip the host timing")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if not args.no_host:
        host(work, args.models, args.rounds, args.repeat)
    if not args.no_m4:
        m4(work, args.models)


if __name__ == "__main__":
    main()
