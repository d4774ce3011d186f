"""int8 models against onnxruntime and against their fp32 selves: exactness, latency, memory.

    python bench/int8.py [--models resnet mobilenetv2 ...] [--imagenet] [--repeat 30] [--rounds 3]

Each zoo model is quantized as users do (examples/quantize.py: onnxruntime's quantize_static,
per-channel, QDQ with int8 activations and QOperator with uint8 ones), compiled for the host,
built and run. Per model and form the table gives:
- the model's outputs against onnxruntime as users run it (default optimisations, one thread), over
  SEEDS input sets: the share of output elements identical and the largest difference in LSB of the
  output's DequantizeLinear scale;
- onnxruntime against itself: its outputs with every graph optimisation against none, in the same
  measure. Where it fuses a QDQ group it runs an integer kernel; where it does not (QDQ convs and
  adds with int8 activations on x86, often), it runs DequantizeLinear -> float op -> QuantizeLinear
  and its float sums round differently from any integer kernel's: this column is how well defined
  the reference is;
- every 8-bit activation (each exposed as a graph output) against onnxruntime running that exposed
  graph. Exposing a QDQ group's tensors stops onnxruntime fusing it, so for QDQ forms this compares
  our integer kernels with its float path everywhere: a diagnostic, not what users see;
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
from quantcheck import output_lsb  # noqa: E402
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


SEEDS = (3, 4, 5)


def _diff(ours: list[np.ndarray], refs: list[np.ndarray], lsb: list[float | None]) -> tuple[int, int, float]:
    """(identical elements, elements, largest difference in LSB; in float units where no LSB)."""
    equal = total = 0
    worst = 0.0
    for o, r, step in zip(ours, refs, lsb, strict=True):
        d = np.abs(o.astype(np.float64) - r.astype(np.float64)) / (step or 1.0)
        equal, total, worst = equal + int((d == 0).sum()), total + d.size, max(worst, float(d.max(initial=0)))
    return equal, total, worst


def _outputs(model: onnx.ModelProto, name: str, work: Path) -> tuple[str, str]:
    """Outputs as users see them, over SEEDS: ours against onnxruntime, and onnxruntime against itself
    with no graph optimisation. Cells: 'identical % / max LSB'."""
    import onnxruntime as ort

    out, meta = _compile(model, f"{name}_plain", work)
    none = ort.SessionOptions()
    none.intra_op_num_threads = 1
    none.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    unoptimized = ort.InferenceSession(model.SerializeToString(), none, providers=["CPUExecutionProvider"])
    default, lsb = _session(model), output_lsb(model)
    mine, self_ = [0, 0, 0.0], [0, 0, 0.0]
    for seed in SEEDS:
        feeds = zoo.random_inputs(model, seed=seed)
        refs = default.run(None, feeds)
        ours, _ = run_bundle(out, meta, [feeds[s["name"]] for s in meta["inputs"]])
        for acc, got in ((mine, [ours[s["name"]] for s in meta["outputs"]]), (self_, unoptimized.run(None, feeds))):
            e, t, w = _diff(got, refs, lsb)
            acc[0], acc[1], acc[2] = acc[0] + e, acc[1] + t, max(acc[2], w)

    def cell(acc: list) -> str:
        unit = "" if all(s is not None for s in lsb) else " (float)"
        return f"{acc[0] / max(acc[1], 1):.2%} / {acc[2]:.3g}{unit}"
    return cell(mine), cell(self_)


def _exactness(model: onnx.ModelProto, feeds: dict, name: str, work: Path) -> tuple[float, int]:
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
    return equal / max(total, 1), worst


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=["lenet", "resnet", "mobilenetv2", "mobilenetv2_96",
                                                    "mobilenetv1_96", "dscnn_kws", "inception", "squeezenet"])
    p.add_argument("--imagenet", action="store_true", help="also ResNet-18 and MobileNetV2 at 224 x 224")
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    names = args.models + (["resnet18_224", "mobilenetv2_224"] if args.imagenet else [])
    print("| model | form | outputs: identical / max LSB | onnxruntime vs itself | every activation (exposed) "
          "| bundle us | onnxruntime us | ratio | arena int8 / fp32 B | ratio | without graph I/O "
          "| weights int8 / fp32 B | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="aotc-int8-") as tmp:
        work = Path(tmp)
        for name in names:
            fp32 = zoo.build(name)
            _, fp32_meta = _compile(fp32, f"{name}_fp32", work)
            feeds = zoo.random_inputs(fp32, seed=3)
            for fmt, activations in FORMS:
                model = quantized(fp32, fmt, activations=activations)
                tag = f"{name}_{fmt.lower()}"
                share, worst = _exactness(model, feeds, tag, work)
                mine, itself = _outputs(model, tag, work)
                out, meta = _compile(model, tag, work)
                onnx.save(model, work / f"{tag}.onnx")
                np.savez(work / f"{tag}_in.npz", **feeds)
                row = bench_one(out, meta, inputs_npz=str(work / f"{tag}_in.npz"), repeat=args.repeat,
                                model=str(work / f"{tag}.onnx"), rounds=args.rounds)
                a8, a32 = meta["memory"]["arena_bytes"], fp32_meta["memory"]["arena_bytes"]
                # the graph's float input and output are in both arenas alike
                inner = (a8 - meta["memory"]["io_bytes"]) / max(a32 - fp32_meta["memory"]["io_bytes"], 1)
                w8, w32 = meta["memory"]["weights_bytes"], fp32_meta["memory"]["weights_bytes"]
                print(f"| {name} | {fmt} {activations} | {mine} | {itself} | {share:.4%} / {worst} "
                      f"| {row.bundle_us:.1f} | {row.ort_us:.1f} | {row.ratio:.2f} | {a8} / {a32} | {a8 / a32:.3f} "
                      f"| {inner:.3f} | {w8} / {w32} | {w8 / w32:.3f} |", flush=True)


if __name__ == "__main__":
    main()
