"""Peak memory of `aotc MODEL -o OUT`, against the model's weights and the Python import floor.

    python bench/compile_memory.py [MODEL.onnx ...] [--repeat 3]

With no model, ResNet-18 at 224x224 (examples/zoo.py, random weights: 47 MB) is compiled. Each
compile runs in its own process, as a user runs it; its peak RSS comes from wait4(). The floor is a
process that only imports aot.compiler (numpy, onnx, jinja2): what is left above it is aotc's own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def peak_mb(cmd: list[str]) -> float:
    """Peak resident set of one child process, in MiB."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-400:]}")
    return usage.ru_maxrss / 1024


def weights_mb(path: Path) -> float:
    """Read in a child, for the same reason as the model is made in one."""
    code = ("import onnx, sys; m = onnx.load(sys.argv[1]); "
            "print(sum(len(i.raw_data) for i in m.graph.initializer) / 2**20)")
    return float(subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True,
                                text=True).stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aotc-mem-"))
    models = args.models
    if not models:  # made in a child: a child's peak from wait4 counts its parent's peak when spawned by
        # vfork (the exec records the shared address space's high-water mark), so this process stays small
        models = [work / "resnet18_224.onnx"]
        subprocess.run([sys.executable, "-c", f"import sys, onnx; sys.path.insert(0, {str(ROOT / 'examples')!r}); "
                        f"import zoo; onnx.save(zoo.resnet18_224(), {str(models[0])!r})"], check=True)
    floor = statistics.median(peak_mb([sys.executable, "-c", "import aot.compiler"]) for _ in range(args.repeat))
    print(f"import floor (python -c 'import aot.compiler'): {floor:.0f} MiB\n")
    print("| model | weights MiB | aotc peak MiB | above the floor | above the floor / weights |")
    print("|---|---:|---:|---:|---:|")
    for model in models:
        peaks = [peak_mb([sys.executable, "-m", "aot.cli", str(model), "-o", str(work / f"out{k}"), "--no-configure"])
                 for k in range(args.repeat)]
        w, peak = weights_mb(model), statistics.median(peaks)
        print(f"| {model.name} | {w:.1f} | {peak:.0f} | {peak - floor:.0f} | {(peak - floor) / w:.2f} |")


if __name__ == "__main__":
    main()
