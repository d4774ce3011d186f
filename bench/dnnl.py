"""Benchmark the dnnl vendor: host-C bundle, dnnl bundle and onnxruntime, one thread each, one run.

    python bench/dnnl.py [--repeat 20] [--rounds 3] [--models resnet18_224 mobilenetv2_224 ...] [--keep DIR]
                         [--fast-math]

Every model is compiled twice (host C only, and --vendor dnnl), both bundles are built with
CMake (Release) and timed by their runner (median over --repeat runs after a warm-up, timed in
C); onnxruntime (CPU provider, one intra-op thread, default graph optimisations) is timed on the
same inputs in the same process, the three back to back in each of --rounds rounds (the
figures are medians over the rounds, so load that comes and goes on a shared machine hits all
three alike). OMP_NUM_THREADS=1 is set before anything starts, so oneDNN runs single-threaded
too (its workspace is also sized for one thread at compile time). Prints a markdown table with
the median latencies and the ratios against onnxruntime, and what those latencies are as a share
of one core's fp32 peak: the model's MACs (aot.bench.graph_macs) x 2 over the time, against the
FLOP/s of 16 independent chains of vector FMAs as wide as the compiler targets here (-march=native),
the best of 7 tries, run 3 times before and 3 times after the models (the largest kept).
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

from aot.bench import _ort_session, graph_macs, time_ort  # noqa: E402
from aot.build import build, run_bundle  # noqa: E402

MODELS = {**zoo.MODELS, **zoo.BENCH_MODELS}
# issue 24's table: ResNet-8, MobileNet-v1 0.25 96, MobileNet-v2 0.35 96, DS-CNN and the four 224 x 224 nets
DEFAULT = ["resnet", "mobilenetv1_96", "mobilenetv2_96", "dscnn_kws", "resnet18_224", "mobilenetv2_224",
           "efficientnet_b0_224", "squeezenet11_224"]


PEAK_C = r"""
#include <stdio.h>
#include <time.h>
#if defined(__AVX512F__)
#define WIDTH 64
#else
#define WIDTH 32
#endif
typedef float vec __attribute__((vector_size(WIDTH)));
enum { LANES = WIDTH / 4, CHAINS = 16 };
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(void) {
    const long iters = 20000000;
    double best = 0;
    int r, i, l;
    for (r = 0; r < 7; ++r) {
        vec a[CHAINS], b, c, s;
        double t;
        long it;
        for (l = 0; l < LANES; ++l) b[l] = 1.0000001f, c[l] = 1e-7f;
        for (i = 0; i < CHAINS; ++i)
            for (l = 0; l < LANES; ++l) a[i][l] = (float)i;
        t = now();
        for (it = 0; it < iters; ++it)
#pragma GCC unroll 16
            for (i = 0; i < CHAINS; ++i) a[i] = a[i] * b + c;
        t = now() - t;
        s = a[0];
        for (i = 1; i < CHAINS; ++i) s += a[i];
        if (s[0] == 1.25f) printf("-");
        if (2.0 * LANES * CHAINS * iters / t / 1e9 > best) best = 2.0 * LANES * CHAINS * iters / t / 1e9;
    }
    printf("%.2f\n", best);
    return 0;
}
"""


def fma_peak_gflops(work: Path) -> float:
    """One core's fp32 FMA peak (GFLOP/s): 16 independent chains of the widest vector FMA, best of 7."""
    src, exe = work / "peak.c", work / "peak"
    src.write_text(PEAK_C)
    subprocess.run(["cc", "-O2", "-march=native", "-ffp-contract=fast", str(src), "-o", str(exe)], check=True)
    return float(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


def _bundle(src: Path, out: Path, flags: list[str]) -> dict:
    args = [sys.executable, "-m", "aot.cli", str(src), "-o", str(out), *flags]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    build(out)
    return json.loads((out / "bundle" / "metadata.json").read_text())


def bench_model(name: str, work: Path, repeat: int, rounds: int, fast_math: bool = False) -> dict:
    """Both bundles and onnxruntime timed back to back in each of `rounds` rounds: load that
    comes and goes on a shared machine then hits all three alike. Each engine's figure is its
    median over the rounds, each ratio the median of the per-round ratios."""
    src = work / f"{name}.onnx"
    model = MODELS[name]()
    onnx.save(model, src)
    rng = np.random.default_rng(0)
    row: dict = {"model": name, "gflop": 2 * graph_macs(model) / 1e9}
    flags = {"host": [], "dnnl": ["--vendor", "dnnl"], **({"fast": ["--fast-math"]} if fast_math else {})}
    metas = {label: _bundle(src, work / f"{name}_{label}", f) for label, f in flags.items()}
    meta = metas["dnnl"]
    row["regions"] = len(meta["partition"])
    row["host_nodes"] = sum(1 for n in meta["nodes"] if n["op"] != "Call")
    # reorders each run pays, over the regions (the probe's count: "3 (entry 1, exit 1, inside 1)")
    row["reorders"] = sum(int(str(p.get("reorders", "0")).split()[0]) for p in meta["partition"])
    inputs = [rng.standard_normal(s["shape"]).astype(s["dtype"]) for s in meta["inputs"]]
    sess = _ort_session(str(src))
    feeds = {i.name: x for i, x in zip(sess.get_inputs(), inputs, strict=True)}
    refs = sess.run(None, feeds)
    times: dict[str, list[float]] = {**{label: [] for label in flags}, "ort": []}
    outputs = {}
    for _ in range(rounds):
        for label in flags:
            outputs[label], ns = run_bundle(work / f"{name}_{label}", metas[label], inputs, repeat=repeat)
            times[label].append(ns / 1e3)
        times["ort"].append(time_ort(sess, feeds, repeat))
    for label, t in times.items():
        row[f"{label}_us"] = statistics.median(t)
    for label in flags:
        row[f"{label}_ratio"] = statistics.median(a / b for a, b in zip(times[label], times["ort"], strict=True))
        row[f"{label}_err"] = max(float(np.max(np.abs(o.astype(np.float64) - r)))
                                  for o, r in zip(outputs[label].values(), refs, strict=True))
    row["max_abs_err"] = max(row["host_err"], row["dnnl_err"])
    return row


def table(rows: list[dict], peak: float) -> str:
    """The markdown table; `peak`: one core's fp32 GFLOP/s (fma_peak_gflops)."""
    def share(r: dict, label: str) -> str:
        return f"{100 * r['gflop'] / (r[f'{label}_us'] * 1e-6) / peak:.0f} %"

    head = ("| model | host C us | dnnl us | onnxruntime us | host/ort | dnnl/ort | GFLOP | dnnl % peak | ort % peak "
            "| dnnl regions | reorders/run | host nodes | max abs err |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    body = "".join(
        f"| {r['model']} | {r['host_us']:.0f} | {r['dnnl_us']:.0f} | {r['ort_us']:.0f} | "
        f"{r['host_ratio']:.2f} | {r['dnnl_ratio']:.2f} | {r['gflop']:.2f} | {share(r, 'dnnl')} | {share(r, 'ort')} | "
        f"{r['regions']} | {r['reorders']} | {r['host_nodes']} | {r['max_abs_err']:.1e} |\n" for r in rows)
    if not all("fast_us" in r for r in rows):
        return head + body
    fast = ("\n| model | host C --fast-math us | fast/ort | fast/host | max abs err |\n|---|---:|---:|---:|---:|\n" +
            "".join(f"| {r['model']} | {r['fast_us']:.0f} | {r['fast_ratio']:.2f} | "
                    f"{r['fast_us'] / r['host_us']:.2f} | {r['fast_err']:.1e} |\n" for r in rows))
    return head + body + fast


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians over them)")
    p.add_argument("--models", nargs="*", default=DEFAULT, choices=sorted(MODELS))
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--fast-math", action="store_true",
                   help="also time a host-C bundle compiled with --fast-math (a second table)")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-bench-dnnl-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    peak = max(fma_peak_gflops(work) for _ in range(3))
    for name in args.models:
        rows.append(bench_model(name, work, args.repeat, args.rounds, args.fast_math))
        print(f"  {name}: done", file=sys.stderr)
    peak = max(peak, *(fma_peak_gflops(work) for _ in range(3)))
    print(table(rows, peak), end="")
    print(f"\nfp32 peak of one core: {peak:.1f} GFLOP/s (FMA chains as wide as -march=native targets, best of 7)")


if __name__ == "__main__":
    main()
