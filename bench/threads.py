"""--threads N against onnxruntime: ResNet-18 224 and MobileNet-v2 224 (examples/zoo.py; --models adds
ResNet-50 224), each
compiled once with one thread and once with N, timed in interleaved rounds beside onnxruntime at one
thread, at N and at its default (one intra-op thread per core). Every round times all five back to
back, so load that comes and goes on a shared machine hits them alike; the ratios are per round,
and the table gives their median and their spread (min - max over rounds).

Before and after the N-thread bundle and onnxruntime's default of each round, bench/pingpong.c
measures the round trip of a cache line between CPUs 0 and 1. On this VM it is 60-100 ns in some
phases and about 340 ns in others (the vCPUs on different dies), and a two-thread bundle whose
kernels pass data between the cores is up to 1.5 x slower in the far phase: a second table splits
the N-thread ratio by phase (near: both round trips under FAR_NS; far: both above; a round that
changed phase in between counts in neither). The far phase comes and goes over minutes: --far K
runs more rounds, up to --max-rounds, until each model has K far ones.

    python bench/threads.py [--models resnet50_224 mobilenetv2_224] [--threads 2] [--rounds 7]
                           [--repeat 10] [--far K] [--max-rounds 60] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import zoo  # noqa: E402

from aot.bench import _ort_session, settle_after_ort, time_ort  # noqa: E402
from aot.build import cmake_exe, run_bundle  # noqa: E402

MODELS = {"resnet18_224": zoo.resnet18_224, "mobilenetv2_224": zoo.mobilenetv2_224,
          "resnet50_224": zoo.resnet50_224}
DEFAULT = ["resnet18_224", "mobilenetv2_224"]
FAR_NS = 200  # a cache line's round trip between the cores above this: the far phase


def pingpong(work: Path) -> Path:
    exe = work / "pingpong"
    subprocess.run(["cc", "-O2", "-pthread", str(ROOT / "bench" / "pingpong.c"), "-o", str(exe)], check=True)
    return exe


def round_trip_ns(exe: Path) -> float:
    return float(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)


def build(work: Path, name: str, threads: int) -> tuple[Path, dict]:
    src, out = work / f"{name}.onnx", work / f"{name}_t{threads}"
    if not src.is_file():
        onnx.save(MODELS[name](), src)
    # compiled and built every time: a bundle left in --work by an earlier run is the code of then
    subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out), "--force",
                    "--threads", str(threads)], check=True, capture_output=True)
    subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
    return out, json.loads((out / "bundle" / "metadata.json").read_text())


def ratio(times: dict[str, list[float]], a: str, b: str) -> list[float]:
    """a / b in each round."""
    return [x / y for x, y in zip(times[a], times[b], strict=True)]


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", choices=sorted(MODELS), default=DEFAULT)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--far", type=int, default=0, help="rounds in the far phase to reach per model")
    p.add_argument("--max-rounds", type=int, default=60)
    p.add_argument("--work", default="/tmp/aotc-bench-threads")
    args = p.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    n = args.threads
    pp = pingpong(work)
    phases: list[tuple[str, float, float, float]] = []  # (model, round trips before, after, aotc NT / ort default)
    print(f"| model | aotc {n}T ms | ort 1T ms | ort {n}T ms | ort default ms | aotc 1T / ort 1T | "
          f"aotc {n}T / ort {n}T | aotc {n}T / ort default | aotc {n}T speed-up over aotc 1T |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.models:
        (o1, m1), (on, mn) = build(work, name, 1), build(work, name, n)
        x = zoo.random_inputs(onnx.load(str(work / f"{name}.onnx")))
        feeds, inputs = x, list(x.values())
        sessions = {t: _ort_session(str(work / f"{name}.onnx"), t) for t in (1, n, 0)}
        times: dict[str, list[float]] = {k: [] for k in ("a1", "an", "o1", "on", "o0")}
        far = 0
        while len(times["an"]) < args.rounds or (far < args.far and len(times["an"]) < args.max_rounds):
            # each engine after the multi-threaded sessions' spinning threads are quiet (aot.bench.ORT_SPIN_SETTLE_S),
            # so no run shares its cores with them
            settle_after_ort(0)
            before = round_trip_ns(pp)
            times["an"].append(run_bundle(on, mn, inputs, repeat=args.repeat)[1] / 1e6)
            times["o0"].append(time_ort(sessions[0], feeds, args.repeat) / 1e3)
            after = round_trip_ns(pp)
            far += before > FAR_NS and after > FAR_NS
            settle_after_ort(0)
            times["on"].append(time_ort(sessions[n], feeds, args.repeat) / 1e3)
            settle_after_ort(n)
            times["a1"].append(run_bundle(o1, m1, inputs, repeat=args.repeat)[1] / 1e6)
            times["o1"].append(time_ort(sessions[1], feeds, args.repeat) / 1e3)
            phases.append((name, before, after, times["an"][-1] / times["o0"][-1]))

        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"| {name} | {med['an']:.1f} | {med['o1']:.1f} | {med['on']:.1f} | {med['o0']:.1f} | "
              f"{spread(ratio(times, 'a1', 'o1'))} | {spread(ratio(times, 'an', 'on'))} | "
              f"{spread(ratio(times, 'an', 'o0'))} | "
              f"{spread(ratio(times, 'a1', 'an'))} |", flush=True)
    print(f"(per-round ratios: median (min-max) over {args.rounds} or more rounds of {args.repeat} runs each)")
    print(f"\n| model | phase | rounds | cache-line round trip ns | aotc {n}T / ort default |")
    print("|---|---|---:|---:|---:|")
    for name in args.models:
        for phase, near in (("near", True), ("far", False)):
            rows = [((a + b) / 2, r) for m, a, b, r in phases
                    if m == name and (a < FAR_NS) == near and (b < FAR_NS) == near]
            if rows:
                rts = [rt for rt, _ in rows]
                print(f"| {name} | {phase} | {len(rows)} | {statistics.median(rts):.0f} "
                      f"({min(rts):.0f}-{max(rts):.0f}) | {spread([r for _, r in rows])} |")


if __name__ == "__main__":
    main()
