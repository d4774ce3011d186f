"""What the transposes left in TFLite float graphs cost on the host (issue 29 part 3: NHWC stays NHWC).

    python bench/tflite_transposes.py [NAME ...]      # tests/models/tflite/NAME_float.tflite

Each model is compiled and built with `-DAOTC_NATIVE=OFF -DCMAKE_C_FLAGS=-march=haswell` (valgrind
cannot decode AVX-512), its runner run under callgrind for 1 and for 11 inferences, and the
difference / 10 reported: instructions per inference, and those spent in aotc_transpose2d (the
Transpose kernel, with the copies it calls). Needs valgrind (callgrind_annotate).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aot.build as build  # noqa: E402

MODELS = ["keyword", "person", "residual", "ops", "moves", "excite"]


def counts(out: Path, meta: dict, repeat: int) -> tuple[int, int]:
    """(all instructions, those in transposes) of a runner run doing `repeat` inferences."""
    profile = out / f"callgrind.{repeat}.out"
    plain = build.runner_command
    build.runner_command = lambda target, runner, args: [  # type: ignore[assignment]
        "valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", str(runner), *args]
    try:
        rng = np.random.default_rng(0)
        build.run_bundle(out, meta, [rng.uniform(-1, 1, s["shape"]).astype(s["dtype"]) for s in meta["inputs"]],
                         repeat=repeat)
    finally:
        build.runner_command = plain
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", str(profile)], capture_output=True,
                          text=True, check=True).stdout
    total = int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))
    # inclusive: aotc_transpose2d's rows go through shape.c's copy_run, most of its cost
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(profile)], capture_output=True,
                          text=True, check=True).stdout
    transposes = sum(int(m.group(1).replace(",", "")) for m in
                     re.finditer(r"^\s*([\d,]+) \([^)]*\)\s+\S*aotc_transpose\S*", text, re.M))
    return total, transposes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", default=MODELS)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aotc-tflite-transposes-"))
    print("| float model | instructions | in transposes |\n|---|---:|---:|")
    for name in args.names:
        out = work / name
        subprocess.run([sys.executable, "-m", "aot.cli", str(ROOT / "tests/models/tflite" / f"{name}_float.tflite"),
                        "-o", str(out)], check=True, capture_output=True)
        subprocess.run([build.cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_NATIVE=OFF",
                        "-DCMAKE_C_FLAGS=-march=haswell"], check=True, capture_output=True)
        subprocess.run([build.cmake_exe(), "--build", str(out)], check=True, capture_output=True)
        meta = json.loads((out / "bundle" / "metadata.json").read_text())
        (t1, r1), (t11, r11) = counts(out, meta, 1), counts(out, meta, 11)
        total, transposes = (t11 - t1) / 10, (r11 - r1) / 10
        print(f"| {name} | {total:,.0f} | {transposes:,.0f} ({100 * transposes / total:.1f} %) |", flush=True)


if __name__ == "__main__":
    main()
