"""How long a host bundle takes to build: `cmake --build OUT` on a freshly written bundle (issue 24 item 6:
a ResNet-18 host build in under 3 s).

    python bench/build_time.py [--models resnet18_224 mobilenetv2_224 ...] [--rounds 3] [--against REV]

Each round compiles every model with aotc (which configures the build tree, as `aotc MODEL -o OUT` does)
and times the build that follows, wall and CPU (the children's user + system time). With --against REV
the same models are compiled by that commit of aotc too (a git worktree of it), and its builds are timed
in the same rounds, interleaved with ours, so the machine's slow phases hit both alike. Prints a
markdown table: medians over the rounds, the kernel files each bundle compiles, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import zoo  # noqa: E402

from aot.build import cmake_exe  # noqa: E402

MODELS = {**zoo.MODELS, **zoo.BENCH_MODELS}
DEFAULT = ["resnet18_224", "mobilenetv2_224", "efficientnet_b0_224", "squeezenet11_224", "resnet", "dscnn_kws"]


def compile_bundle(tree: Path, model: Path, out: Path) -> None:
    """`aotc model -o out` with the aotc of source tree `tree`."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-m", "aot.cli", str(model), "-o", str(out), "--force"], check=True, env=env,
                   cwd=tree, stdout=subprocess.DEVNULL)  # (python -m puts the working folder first on sys.path)


def compiled_kernels(out: Path) -> list[str]:
    """The kernel files the build in `out` compiled: of those runtime/ holds, the plain kernels an AVX-512F
    build leaves out are not (runtime_c/kernels/common/paths_avx512.h)."""
    return sorted(p.name.removesuffix(".o") for p in out.rglob("runtime/*.c.o"))


def timed_build(out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `cmake --build out`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="*", default=DEFAULT, choices=sorted(MODELS))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--against", help="a commit whose aotc builds the same models, timed in the same rounds")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="aotc-build-time-") as tmp:
        work = Path(tmp)
        trees = {"now": ROOT}
        if args.against:
            trees[args.against] = work / "against"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(trees[args.against]),
                            args.against], check=True)
        try:
            times: dict[tuple[str, str], list[tuple[float, float]]] = {}
            files: dict[tuple[str, str], list[str]] = {}
            for name in args.models:
                onnx.save(zoo.build(name) if name in zoo.MODELS else MODELS[name](), work / f"{name}.onnx")
            for r in range(args.rounds):
                for name in args.models:
                    for tag, tree in trees.items():
                        out = work / f"{name}-{len(files)}"
                        compile_bundle(tree, work / f"{name}.onnx", out)
                        times.setdefault((name, tag), []).append(timed_build(out))
                        files[name, tag] = compiled_kernels(out)
                        shutil.rmtree(out)
                print(f"  round {r + 1} of {args.rounds}: done", file=sys.stderr)
        finally:
            if args.against:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees[args.against])],
                               check=False)
    head = "| model | kernel files | build s (wall) | CPU s |"
    rule = "|---|---:|---:|---:|"
    if args.against:
        head += f" {args.against}: files | wall | CPU | wall now / then |"
        rule += "---:|---:|---:|---:|"
    print(head)
    print(rule)
    for name in args.models:
        wall = statistics.median(w for w, _ in times[name, "now"])
        cpu = statistics.median(c for _, c in times[name, "now"])
        row = f"| {name} | {len(files[name, 'now'])} | {wall:.2f} | {cpu:.2f} |"
        if args.against:
            w0 = statistics.median(w for w, _ in times[name, args.against])
            c0 = statistics.median(c for _, c in times[name, args.against])
            row += f" {len(files[name, args.against])} | {w0:.2f} | {c0:.2f} | {wall / w0:.2f} |"
        print(row)
    print(f"\ncores: {os.cpu_count()}; medians of {args.rounds} rounds; each build from a fresh `aotc -o` "
          "(its tree configured, nothing compiled)")


if __name__ == "__main__":
    main()
