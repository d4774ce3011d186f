"""Issue 29's Cortex-M4 target: one float network compiled from its `.tflite` file and from its tf2onnx
export takes the same instructions per inference (within 2 %).

    python bench/tflite_vs_onnx_m4.py [--board mps2-an386] [--models sine keyword ...] [--keep DIR]
                                      [--tf-python /work/venvs/tf/bin/python] [--json FILE]

For each float model of tests/models/tflite/ (made by examples/make_tflite_models.py), tf2onnx 1.17
converts the `.tflite` file as a new user would (`python -m tf2onnx.convert --tflite`, opset 17; it runs
in the TensorFlow venv given by --tf-python: neither aotc nor its tests need TensorFlow). Both files are
compiled for the board at aotc's default -O3 (Release) and built; `aotc bench`'s counter runs each
runner under qemu-system-arm with aotc's instruction-counting plugin, (count(3 runs) - count(1 run)) / 2,
on the same random inputs (uniform on [-1, 1], the files' NHWC shapes; tf2onnx keeps them). qemu has no
timing model: these are instructions, not cycles. The two routes' outputs are compared on those inputs.

A model tf2onnx cannot convert, or aotc cannot compile from the export, is listed with the reason.
Prints a markdown table: per model, its MACs (from the ONNX export), the instructions of each route, the
.tflite route over the ONNX one, whether that is within 2 % ("fewer": the .tflite route takes more than
2 % fewer instructions, as where tf2onnx wraps an NHWC op in transposes to NCHW that the .tflite route
does not need), and the largest difference between the two routes' outputs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from aot.bench import board_instructions, graph_macs, insn_count_plugin  # noqa: E402
from aot.build import build, run_bundle  # noqa: E402

MODELS = ("sine", "keyword", "person", "ops", "residual", "moves", "acts", "excite", "resize", "shuffle")
TARGET_RATIO = 0.02  # the "within 2 %"


def _compile(src: Path, out: Path, board: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out), "--target", board, "--force"],
                       capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    build(out)
    return json.loads((out / "bundle" / "metadata.json").read_text())


def measure(name: str, board: str, work: Path, tf_python: str, plugin: Path) -> dict:
    """Both routes of one model: instructions, MACs, the outputs' largest difference (or the reason
    one route does not compile)."""
    tfl = ROOT / "tests" / "models" / "tflite" / f"{name}_float.tflite"
    exported = work / f"{name}.onnx"
    row: dict = {"model": name}
    if not exported.is_file():
        r = subprocess.run([tf_python, "-m", "tf2onnx.convert", "--tflite", str(tfl), "--output", str(exported),
                            "--opset", "17"], capture_output=True, text=True)
        if r.returncode != 0:
            row["error"] = "tf2onnx: " + (r.stderr.strip().splitlines() or ["failed"])[-1][:160]
            return row
    try:
        meta_t = _compile(tfl, work / f"{name}_tflite", board)
    except RuntimeError as e:
        row["error"] = f"aotc (.tflite): {e}"
        return row
    try:
        meta_o = _compile(exported, work / f"{name}_onnx", board)
    except RuntimeError as e:
        row["error"] = f"aotc (tf2onnx export): {e}"
        return row
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, s["shape"]).astype(s["dtype"]) for s in meta_t["inputs"]]
    shapes_o = [list(s["shape"]) for s in meta_o["inputs"]]
    if shapes_o != [list(s["shape"]) for s in meta_t["inputs"]]:
        row["error"] = f"input shapes differ: {shapes_o} (export) against the file's"
        return row
    row["tflite"] = board_instructions(work / f"{name}_tflite", meta_t, inputs, plugin)
    row["onnx"] = board_instructions(work / f"{name}_onnx", meta_o, inputs, plugin)
    row["macs"] = graph_macs(onnx.load(str(exported)))
    outs_t, _ = run_bundle(work / f"{name}_tflite", meta_t, inputs)
    outs_o, _ = run_bundle(work / f"{name}_onnx", meta_o, inputs)
    row["max_abs_diff"] = max(  # outputs by position: tf2onnx names them after the file's tensors too
        float(np.max(np.abs(outs_t[a["name"]].astype(np.float64) - outs_o[b["name"]]), initial=0.0))
        for a, b in zip(meta_t["outputs"], meta_o["outputs"], strict=True))
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--board", default="mps2-an386")
    p.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--tf-python", default="/work/venvs/tf/bin/python",
                   help="a Python with tf2onnx (and TensorFlow) installed")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-tflite-m4-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    plugin = insn_count_plugin(work)
    rows = []
    for name in args.models:
        rows.append(measure(name, args.board, work, args.tf_python, plugin))
        print(f"  {rows[-1]}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(f"{args.board}: instructions per inference under qemu, .tflite against its tf2onnx export\n")
    print("| model | MACs | .tflite instr | tf2onnx instr | .tflite / tf2onnx | within 2 % | max abs diff |")
    print("|---|---:|---:|---:|---:|:---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | | | | | | {r['error']} |")
            continue
        ratio = r["tflite"] / r["onnx"]
        verdict = "yes" if abs(ratio - 1) <= TARGET_RATIO else "fewer" if ratio < 1 else "no"
        print(f"| {r['model']} | {r['macs']} | {r['tflite']} | {r['onnx']} | {ratio:.3f} | {verdict} | "
              f"{r['max_abs_diff']:.1e} |")


if __name__ == "__main__":
    main()
