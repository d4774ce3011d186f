"""int8 models against onnxruntime and against their fp32 selves: exactness, latency, memory.

    python bench/int8.py [--models resnet mobilenetv2 ...] [--imagenet] [--repeat 30] [--rounds 3]

Each zoo model is quantized as users do (examples/quantize.py: onnxruntime's quantize_static,
per-channel, QDQ with int8 activations and QOperator with uint8 ones), compiled for the host,
built and run. Per model and form the table gives:
- the share of integers identical to onnxruntime's and the largest difference in LSB, over every
  8-bit activation of the model (each exposed as an output), and whether onnxruntime computes
  some quantized conv in float (QDQ convs with int8 activations on x86: "float ref");
- latency of the bundle and of onnxruntime on one thread (medians over interleaved rounds) and
  their ratio;
- the arena against the fp32 bundle's (whole, and without the graph's inputs and outputs, which are
  float in both), and the weights (flash) against the fp32 bundle's.
--imagenet adds ResNet-18 and MobileNetV2 at 224 x 224 (slow to calibrate and compile).
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import zoo  # noqa: E402
from quantize import expose_integers, quantized  # noqa: E402

from aot.bench import bench_one  # noqa: E402
from aot.build import build, run_bundle  # noqa: E402

FORMS = (("QDQ", "int8"), ("QOperator", "uint8"))


def _session(model: onnx.ModelProto):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _compile(model: onnx.ModelProto, name: str, work: Path) -> tuple[Path, dict]:
    """aotc MODEL -o OUT, then cmake --build OUT, as a user does."""
    src, out = work / f"{name}.onnx", work / name
    onnx.save(model, src)
    subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out)], check=True, capture_output=True)
    build(out)
    return out, json.loads((out / "bundle" / "metadata.json").read_text())


def _exactness(model: onnx.ModelProto, feeds: dict, name: str, work: Path) -> tuple[float, int, bool]:
    from opcheck import Case
    from quantcheck import float_reference

    exposed = expose_integers(model)
    out, meta = _compile(exposed, f"{name}_exposed", work)
    inputs = [feeds[s["name"]] for s in meta["inputs"]]
    ours, _ = run_bundle(out, meta, inputs)
    refs = _session(exposed).run(None, feeds)
    equal = total = worst = 0
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        if ref.dtype.kind in "iu":
            diff = np.abs(ours[spec["name"]].astype(np.int64) - ref.astype(np.int64))
            equal, total, worst = equal + int((diff == 0).sum()), total + diff.size, max(worst, int(diff.max()))
    return equal / max(total, 1), worst, float_reference(Case(name, exposed, feeds))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=["lenet", "resnet", "mobilenetv2", "mobilenetv2_96",
                                                    "mobilenetv1_96", "dscnn_kws", "inception", "squeezenet"])
    p.add_argument("--imagenet", action="store_true", help="also ResNet-18 and MobileNetV2 at 224 x 224")
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    names = args.models + (["resnet18_224", "mobilenetv2_224"] if args.imagenet else [])
    print("| model | form | identical | max LSB | float ref | bundle us | onnxruntime us | ratio "
          "| arena int8 / fp32 B | ratio | without graph I/O | weights int8 / fp32 B | ratio |")
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="aotc-int8-") as tmp:
        work = Path(tmp)
        for name in names:
            fp32 = zoo.build(name)
            _, fp32_meta = _compile(fp32, f"{name}_fp32", work)
            feeds = zoo.random_inputs(fp32, seed=3)
            for fmt, activations in FORMS:
                model = quantized(fp32, fmt, activations=activations)
                tag = f"{name}_{fmt.lower()}"
                share, worst, float_ref = _exactness(model, feeds, tag, work)
                out, meta = _compile(model, tag, work)
                onnx.save(model, work / f"{tag}.onnx")
                np.savez(work / f"{tag}_in.npz", **feeds)
                row = bench_one(out, meta, inputs_npz=str(work / f"{tag}_in.npz"), repeat=args.repeat,
                                model=str(work / f"{tag}.onnx"), rounds=args.rounds)
                a8, a32 = meta["memory"]["arena_bytes"], fp32_meta["memory"]["arena_bytes"]
                # the graph's float input and output are in both arenas alike
                inner = (a8 - meta["memory"]["io_bytes"]) / max(a32 - fp32_meta["memory"]["io_bytes"], 1)
                w8, w32 = meta["memory"]["weights_bytes"], fp32_meta["memory"]["weights_bytes"]
                print(f"| {name} | {fmt} {activations} | {share:.4%} | {worst} | {'yes' if float_ref else 'no'} "
                      f"| {row.bundle_us:.1f} | {row.ort_us:.1f} | {row.ratio:.2f} | {a8} / {a32} | {a8 / a32:.3f} "
                      f"| {inner:.3f} | {w8} / {w32} | {w8 / w32:.3f} |", flush=True)


if __name__ == "__main__":
    main()
