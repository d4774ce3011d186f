"""Benchmark the example models: bundle vs onnxruntime (one thread), same inputs, one run.

    python bench/models.py [--repeat 50] [--models mlp resnet ...] [--keep DIR]

Prints a markdown table: latency of each, their ratio, the onnxruntime call
floor, max abs error, and the arena against its lower bound.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import zoo  # noqa: E402

from aot.bench import bench_one, format_table  # noqa: E402
from aot.build import build  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--models", nargs="*", default=sorted(zoo.MODELS))
    p.add_argument("--keep", help="build here instead of a temporary directory")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-bench-"))
    rows = []
    for name in args.models:
        src, out = work / f"{name}.onnx", work / name
        onnx.save(zoo.build(name), src)
        subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        build(out)
        meta = json.loads((out / "bundle" / "metadata.json").read_text())
        rows.append(bench_one(out, meta, repeat=args.repeat))
        print(f"  {name}: done", file=sys.stderr)
    print(format_table(rows), end="")


if __name__ == "__main__":
    main()
