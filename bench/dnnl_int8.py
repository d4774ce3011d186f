"""Benchmark the dnnl vendor's int8 ops: the int8 dnnl bundle against onnxruntime on the same int8
model, and against the fp32 dnnl bundle of the float model it was quantized from; one thread each.

    python bench/dnnl_int8.py [--repeat 50] [--rounds 5] [--models resnet mobilenetv2 ...]
                              [--format QOperator|QDQ] [--activations uint8|int8] [--keep DIR]

Each model is quantized by onnxruntime's quantize_static (examples/quantize.py), both models are
compiled with --vendor dnnl and built with CMake (Release), and the four engines (int8 and fp32
bundles, timed by their runners in C; onnxruntime on the int8 and on the fp32 model, one intra-op
thread) run back to back in each of --rounds rounds, as `aotc bench` and bench/dnnl.py time them.
Figures are medians over the rounds, ratios medians of the per-round ratios (exactness against
onnxruntime is tests/vendors/test_vendor_dnnl_int8.py's). OMP_NUM_THREADS=1 is set before anything starts.
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before oneDNN or onnxruntime can start a thread pool

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import zoo  # noqa: E402
from quantize import quantized  # noqa: E402

from aot.bench import _ort_session, time_ort  # noqa: E402
from aot.build import build, run_bundle  # noqa: E402

MODELS = {"resnet18_224": zoo.resnet18_224, "mobilenetv2_224": zoo.mobilenetv2_224, **zoo.MODELS}
DEFAULT = ["resnet", "mobilenetv2", "lenet"]
ENGINES = ("int8", "ort_int8", "fp32", "ort_fp32")


def _bundle(src: Path, out: Path) -> dict:
    subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out), "--vendor", "dnnl"], check=True,
                   stdout=subprocess.DEVNULL)
    build(out)
    return json.loads((out / "bundle" / "metadata.json").read_text())


def bench_model(name: str, work: Path, fmt: str, activations: str, repeat: int, rounds: int) -> dict:
    fp32 = MODELS[name]()
    srcs = {"fp32": work / f"{name}_fp32.onnx", "int8": work / f"{name}_int8.onnx"}
    onnx.save(fp32, srcs["fp32"])
    onnx.save(quantized(fp32, fmt, activations=activations), srcs["int8"])
    metas = {k: _bundle(src, work / f"{name}_{k}_dnnl") for k, src in srcs.items()}
    inputs = [np.asarray(x) for x in zoo.random_inputs(fp32, seed=7).values()]
    sessions = {f"ort_{k}": _ort_session(str(src)) for k, src in srcs.items()}
    feeds = {i.name: x for i, x in zip(sessions["ort_fp32"].get_inputs(), inputs, strict=True)}
    times: dict[str, list[float]] = {e: [] for e in ENGINES}
    for _ in range(rounds):
        for k in ("int8", "fp32"):
            _, ns = run_bundle(work / f"{name}_{k}_dnnl", metas[k], inputs, repeat=repeat)
            times[k].append(ns / 1e3)
            times[f"ort_{k}"].append(time_ort(sessions[f"ort_{k}"], feeds, repeat))
    row = {"model": name, "regions": len(metas["int8"]["partition"]),
           "host_nodes": sorted({n["op"] for n in metas["int8"]["nodes"] if n["op"] != "Call"})}
    row.update({f"{e}_us": statistics.median(t) for e, t in times.items()})
    for a, b in (("int8", "ort_int8"), ("int8", "fp32"), ("fp32", "ort_fp32")):
        row[f"{a}/{b}"] = statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))
    return row


def table(rows: list[dict]) -> str:
    head = ("| model | int8 dnnl us | ort int8 us | fp32 dnnl us | ort fp32 us | int8/ort int8 | int8/fp32 dnnl "
            "| fp32 dnnl/ort fp32 | dnnl regions | host ops |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
    return head + "".join(
        f"| {r['model']} | {r['int8_us']:.0f} | {r['ort_int8_us']:.0f} | {r['fp32_us']:.0f} | {r['ort_fp32_us']:.0f} "
        f"| {r['int8/ort_int8']:.2f} | {r['int8/fp32']:.2f} | {r['fp32/ort_fp32']:.2f} | {r['regions']} "
        f"| {', '.join(r['host_nodes'])} |\n" for r in rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians over them)")
    p.add_argument("--models", nargs="*", default=DEFAULT, choices=sorted(MODELS))
    p.add_argument("--format", choices=("QOperator", "QDQ"), default="QOperator")
    p.add_argument("--activations", choices=("uint8", "int8"), default="uint8")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-bench-dnnl-int8-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models:
        rows.append(bench_model(name, work, args.format, args.activations, args.repeat, args.rounds))
        print(f"  {name}: done", file=sys.stderr)
    print(f"{args.format}, {args.activations} activations, int8 weights per channel")
    print(table(rows), end="")


if __name__ == "__main__":
    main()
