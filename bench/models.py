"""Benchmark the example models: bundle vs onnxruntime (one thread), same inputs, one run.

    python bench/models.py [--repeat 50] [--rounds 3] [--models mlp resnet ...] [--resnet18] [--no-instructions]
                           [--scratch-floor BYTES] [--keep DIR]

The model set: the zoo's test models (examples/zoo.py MODELS) and its benchmark models
(MobileNet v1 / v2 at 96x96, DS-CNN keyword spotting); --resnet18 adds ResNet-18 at
224x224 (47 MB of weights; slow under callgrind).

Prints a markdown table: latency of each, their ratio, the onnxruntime call floor,
instructions of one inference (valgrind --tool=callgrind, collected inside <name>_run
only, run under env -i: a count that machine load does not move), max abs error, and
the arena (all the RAM for activations: graph I/O lives in it) against the tight bound
and the lower bound (aot/plan/planner.py).
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
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of bundle and onnxruntime")
    p.add_argument("--models", nargs="*", default=sorted(zoo.MODELS) + ["mobilenetv1_96", "mobilenetv2_96",
                                                                        "dscnn_kws"])
    p.add_argument("--resnet18", action="store_true", help="also ResNet-18 at 224x224 (slow)")
    p.add_argument("--no-instructions", action="store_true", help="skip the callgrind instruction counts")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--scratch-floor", type=int, metavar="BYTES",
                   help="compile with aotc --scratch-floor (default 0: arenas at the tight bound); more lets "
                        "kernels take scratch above it")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models + (["resnet18_224"] if args.resnet18 else []):
        src, out = work / f"{name}.onnx", work / name
        onnx.save(zoo.build(name), src)
        floor = [] if args.scratch_floor is None else ["--scratch-floor", str(args.scratch_floor)]
        subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out), *floor], check=True,
                       stdout=subprocess.DEVNULL)
        build(out)
        meta = json.loads((out / "bundle" / "metadata.json").read_text())
        rows.append(bench_one(out, meta, repeat=args.repeat, instructions=not args.no_instructions,
                              rounds=args.rounds))
        print(f"  {name}: done", file=sys.stderr)
    print(format_table(rows), end="")


if __name__ == "__main__":
    main()
