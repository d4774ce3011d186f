"""The float GEMM core (runtime_c/kernels/gemm/gemm.c) before and after a change, on transformer shapes.

bench/gemm_bench.c is linked with this tree's gemm.c and with the gemm.c of a git ref (--before, default main)
whose entry points are renamed (before_sgemm_f32 ...), both gcc -O2 -march=native as a host bundle builds
(--opt to change). For each shape the program times the two back to back in --rounds rounds (this thread's CPU
time, best of 3 timings each): load that comes and goes on a shared machine hits both alike. The table has the
medians over rounds, the after/before speed ratio (the median of the per-round ratios), the share of the
FMA peak (--peak, GFLOP/s) and the share of the peak measured in each round (the rate of independent 512-bit
multiply-add chains, timed after the two; the median of the per-round shares). "peak" is that rate before and
after all the shapes.

    python bench/gemm_bench.py [--before main] [--rounds 7] [--min-ms 10] [--opt=-O2] [--peak 264]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def include_flags(runtime: Path) -> list[str]:
    kernels = runtime / "kernels"
    return [f"-I{runtime / 'include'}", *(f"-I{d}" for d in sorted(kernels.iterdir()) if d.is_dir())]


RENAMED = ("aotc_sgemm_f32", "aotc_gemm_f32", "aotc_matmul_f32", "aotc_activate_f32")


def build(before: Path, after: Path, exe: Path, opt: str) -> None:
    flags = ["gcc", "-std=c99", opt, "-march=native"]
    obj = exe.with_suffix(".before.o")
    subprocess.run([*flags, *include_flags(before), *(f"-D{f}={f.replace('aotc_', 'before_')}" for f in RENAMED),
                    "-c", str(before / "kernels" / "gemm" / "gemm.c"), "-o", str(obj)], check=True)
    subprocess.run([*flags, *include_flags(after), str(ROOT / "bench" / "gemm_bench.c"),
                    str(after / "kernels" / "gemm" / "gemm.c"), str(obj), "-o", str(exe), "-lm"], check=True)


def export_runtime(ref: str, into: Path) -> Path:
    """runtime_c of git ref `ref`, written under `into`."""
    tar = into / "runtime.tar"
    with tar.open("wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "runtime_c"], check=True, stdout=f)
    with tarfile.open(tar) as t:
        t.extractall(into, filter="data")
    return into / "runtime_c"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="main", help="git ref whose runtime_c is the baseline")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=10.0)
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--peak", type=float, default=264.0, help="GFLOP/s the shares are of")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        exe = work / "gemm_bench"
        build(export_runtime(args.before, work), ROOT / "runtime_c", exe, args.opt)
        load0 = os.getloadavg()[0]
        out = subprocess.run([str(exe), str(args.min_ms), str(args.rounds)], check=True, capture_output=True,
                             text=True).stdout
    load = (load0 + os.getloadavg()[0]) / 2
    print(f"{args.rounds} rounds, gcc {args.opt} -march=native, before = {args.before}; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"{'shape':<11} {'m x k x n':<18} {'before':>8} {'after':>8} {'ratio':>6} {'% of ' + str(args.peak):>14} "
          f"{'% of peak in round':>19}")
    for line in out.splitlines():
        name, m, k, n, b, a, ratio, pb, pa = line.split()
        if name == "peak":
            print(f"{'peak':<11} {'(FMA chains)':<18} {float(b):8.1f} {float(a):8.1f}   (start, end of the run)")
            continue
        share = f"{100 * float(b) / args.peak:5.1f} -> {100 * float(a) / args.peak:5.1f}"
        in_round = f"{100 * float(pb):5.1f} -> {100 * float(pa):5.1f}"
        print(f"{name:<11} {f'{m} x {k} x {n}':<18} {float(b):8.1f} {float(a):8.1f} {float(ratio):6.2f} {share:>14} "
              f"{in_round:>19}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
