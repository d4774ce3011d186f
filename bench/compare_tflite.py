"""Issue 66: `aotc compare` on .tflite files, layer by layer against LiteRT's three kernel choices.

    python bench/compare_tflite.py [MODEL.tflite ...] [--target T] [--kernels ref builtin default] [--keep DIR]
                                   [--markdown]

Each model (default: the MLPerf Tiny int8 files in bench/models/keras and ../shared/models; TFLM's example models
are files of a tflite-micro checkout to give: hello_world_int8, micro_speech_quantized, person_detect, ...; the
tflm_*.tflite files in tests/models/tflite use TFLM's signal ops, which LiteRT has no kernels for) is compiled
for the target, its debug variant built and run once on seeded random inputs (aotc compare's own), and its
tapped tensors compared with LiteRT's under each --reference-kernels choice (one interpreter run each; the
bundle's taps are taken once). Per model and choice: the tensors compared, those without a LiteRT counterpart,
the first tensor that differs (the node and its LSB or float error), and how many integer tensors and elements
differ and by how many LSB at most.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from aot.build import run_bundle  # noqa: E402
from aot.compare import compare_taps, debug_variant, first_divergence, random_inputs, read_taps  # noqa: E402
from aot.compiler import Options, compile_file  # noqa: E402
from aot.errors import AotcError  # noqa: E402
from aot.npz import start_values  # noqa: E402
from aot.refs.litert import LiteRT  # noqa: E402

MODELS = [*(ROOT / "bench" / "models" / "keras" / f"{n}_int8.tflite" for n in
            ("kws_dscnn", "ad_autoencoder", "ic_resnet8", "vww_mobilenet")),
          *(ROOT.parent / "shared" / "models" / n for n in ("mlperf_tiny_ic02_resnet_large_int8.tflite",
                                                            "tflm_mobilenet_v2_quantized_1x3x224x224.tflite"))]


def one(model: Path, target: str, kernels: list[str], work: Path) -> list[dict]:
    out = work / model.stem
    t0 = time.perf_counter()
    try:
        compile_file(model, Options(name="m", target=target)).write(out / "bundle")
    except AotcError as e:
        return [{"model": model.name, "kernels": "-", "error": f"aotc refuses it: {e}"}]
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    meta["source"] = str(model)
    inputs = random_inputs(meta)
    starts = start_values(meta, out / "bundle")
    inputs = [starts.get(s["name"], x) for s, x in zip(meta["inputs"], inputs, strict=True)]
    dbg = debug_variant(out, meta)
    run_bundle(dbg, meta, inputs, taps=dbg / "taps.bin")
    taps = read_taps(dbg / "taps.bin")
    bundle_s = time.perf_counter() - t0
    names = list(dict.fromkeys(t.tensor for t in taps))
    rows = []
    for k in kernels:
        ref = LiteRT(model, k)
        t1 = time.perf_counter()
        try:
            refs = ref.values(meta, inputs, names)
        except AotcError as e:
            rows.append({"model": model.name, "kernels": k, "error": str(e)})
            continue
        table = compare_taps(taps, refs, meta, lsb=0)
        compared = [r for r in table if r.status in ("ok", "diverges")]
        first = first_divergence(table)
        ints = [r for r in compared if r.integer and r.lsb]
        floats = [r for r in compared if not r.integer]
        rows.append({
            "model": model.name, "kernels": k, "taps": len(table), "compared": len(compared),
            "no_counterpart": len(table) - len(compared),
            "first": None if first is None else f"{first.node} ({first.op}): " + (
                f"{first.lsb} LSB, {first.unequal} of {int(np.prod(first.shape))}" if first.integer
                else f"{first.rel:.1e} x max(1, |ref|)"),
            "int_tensors_differ": len(ints), "int_elements_differ": sum(r.unequal for r in ints),
            "max_lsb": max((r.lsb for r in ints), default=0),
            "one_lsb_elements": sum(int(np.count_nonzero(
                np.abs(t.data.astype(np.int64) - refs[t.tensor].reshape(t.data.shape).astype(np.int64)) == 1))
                for t in taps if t.tensor in refs and t.data.dtype.kind in "iu" and refs[t.tensor].size == t.data.size),
            "float_max_rel": max((r.rel for r in floats), default=None),
            "bundle_s": round(bundle_s, 1), "litert_s": round(time.perf_counter() - t1, 1)})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| model | kernels | tensors compared (no counterpart) | first that differs | "
             "int tensors / elements differing (of them 1 LSB apart) | max LSB |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['kernels']} | {r['error']} | | | |")
            continue
        lines.append(f"| {r['model']} | {r['kernels']} | {r['compared']} ({r['no_counterpart']}) | "
                     f"{r['first'] or 'none'} | {r['int_tensors_differ']} / {r['int_elements_differ']} "
                     f"({r['one_lsb_elements']}) | {r['max_lsb']} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--target", default="host")
    p.add_argument("--kernels", nargs="+", default=["ref", "builtin", "default"])
    p.add_argument("--keep", type=Path, help="keep the bundles here")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="aotc-compare-tflite-"))
    rows = []
    for model in args.models or [m for m in MODELS if m.is_file()]:
        for row in one(model, args.target, args.kernels, work):
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.markdown:
        print(markdown(rows))


if __name__ == "__main__":
    main()
