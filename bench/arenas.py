"""Every model's arena against its bounds, and the planner's work: the check for a planner change.

    python bench/arenas.py [--models mobilenetv2 resnet ...] [--no-int8] [--no-mlperf]
                           [--targets host mps2-an386] [--json FILE] [--large [--tf-python PY]]

Compiles (no C build) the zoo's fp32 models, their int8 forms as bench/int8.py makes them
(quantize_static, QDQ int8 and QOperator uint8), and the MLPerf Tiny int8 models of
bench/models/keras (.onnx and .tflite, on the Cortex-M boards only), and prints per model and
target: the arena, the lower bound (no placement of the plan's buffers, scratch included, can be
smaller), the tight bound (the activations alone), the arena against the lower bound, the
buffers the planner placed over all its tries (load-independent, unlike the seconds also
shown), and the planner's seconds. --large adds Keras's MobileNetV2 224 full-int8 (issue 53: stock,
and with PyTorch's pads of 1 kept as PAD ops), on the boards only, made on demand into
bench/models/large/ by examples/make_tflite_models.py with the TensorFlow Python --tf-python. Run
it in two checkouts and compare the JSON: a planner change may move arenas down, never up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]
import zoo  # noqa: E402
from quantize import quantized  # noqa: E402

import aot.plan.placement as placement  # noqa: E402
import aot.plan.planner as planner  # noqa: E402
from aot.compiler import Options, compile_file  # noqa: E402

MLPERF = ROOT / "bench" / "models" / "keras"
LARGE = ROOT / "bench" / "models" / "large"
LARGE_MODELS = ("mobilenet_v2_224", "mobilenet_v2_224_torchpad")
DEFAULT_MODELS = [*zoo.MODELS, "mobilenetv1_96", "mobilenetv2_96", "dscnn_kws", "ae_dense"]


def measure(path: Path, target: str) -> dict:
    """Compile `path` for `target` and read the plan's figures; the planner's work is counted
    by wrapping its placement function for this compile."""
    work = {"placed": 0, "seconds": 0.0}
    place, place_best = placement._place, placement._place_best

    def counted(ordered, *args, **kwargs):
        work["placed"] += len(ordered)
        return place(ordered, *args, **kwargs)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return place_best(*args, **kwargs)
        finally:
            work["seconds"] += time.perf_counter() - start

    # the planner calls both by the names it imported; _place_best calls _place by placement's
    for module in (placement, planner):
        module._place, module._place_best = counted, timed
    try:
        mem = compile_file(path, Options(name="m", target=target)).metadata["memory"]
    finally:
        for module in (placement, planner):
            module._place, module._place_best = place, place_best
    return {"arena": mem["arena_bytes"], "lower": mem["lower_bound_bytes"], "tight": mem["tight_bound_bytes"],
            **work}


def large_models(tf_python: str) -> list[Path]:
    """The LARGE int8 .tflite files, each made by examples/make_tflite_models.py if not there yet."""
    missing = [n for n in LARGE_MODELS if not (LARGE / f"{n}_int8.tflite").exists()]
    if missing:
        subprocess.run([tf_python, str(ROOT / "examples" / "make_tflite_models.py"), str(LARGE), *missing], check=True)
    return [LARGE / f"{n}_int8.tflite" for n in LARGE_MODELS]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=DEFAULT_MODELS)
    p.add_argument("--targets", nargs="*", default=["host", "mps2-an386"])
    p.add_argument("--no-int8", action="store_true", help="the fp32 models only")
    p.add_argument("--no-mlperf", action="store_true", help="leave out the MLPerf Tiny int8 models")
    p.add_argument("--json", help="also write the rows to this file")
    p.add_argument("--large", action="store_true", help="also MobileNetV2 224 int8 (made on demand)")
    p.add_argument("--tf-python", default=os.environ.get("AOTC_TF_PYTHON", "/work/venvs/tf/bin/python"),
                   help="a Python with TensorFlow, to make the --large models (default $AOTC_TF_PYTHON)")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="aotc-arenas-") as tmp:
        sources: list[tuple[str, Path, list[str]]] = []
        for name in args.models:
            fp32 = zoo.build(name)
            path = Path(tmp) / f"{name}_fp32.onnx"
            onnx.save(fp32, path)
            sources.append((f"{name} fp32", path, ["host"]))
            for fmt, activations in (() if args.no_int8 else (("QDQ", "int8"), ("QOperator", "uint8"))):
                path = Path(tmp) / f"{name}_{fmt.lower()}.onnx"
                onnx.save(quantized(fp32, fmt, activations=activations), path)
                sources.append((f"{name} {fmt}", path, args.targets))
        if not args.no_mlperf:
            boards = [t for t in args.targets if t != "host"]
            sources += [(f"{m.stem} {m.suffix[1:]}", m, boards) for m in sorted(MLPERF.glob("*_int8.*"))]
        if args.large:
            sources += [(f"{m.stem} tflite", m, [t for t in args.targets if t != "host"])
                        for m in large_models(args.tf_python)]
        print("| model | target | arena B | lower bound B | tight bound B | arena / lower | buffers placed "
              "| planner s |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for label, path, targets in sources:
            for target in targets:
                r = {"model": label, "target": target, **measure(path, target)}
                rows.append(r)
                print(f"| {label} | {target} | {r['arena']} | {r['lower']} | {r['tight']} "
                      f"| {r['arena'] / max(r['lower'], 1):.3f} | {r['placed']} | {r['seconds']:.2f} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
