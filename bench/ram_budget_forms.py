"""Issue 53: what `aotc --ram-budget` reaches for the other forms of the issue's models: the ONNX int8 models
onnxruntime's quantize_static writes (QDQ; bench/models/keras/*_int8.onnx, with and without --quantized-io) on
the M4, and the fp32 models on the host and the M4. Per model and target: the arena without a budget, the
liveness bound (tight_bound_bytes: the least a plan of one layer at a time needs), the least --ram-budget aotc
accepts (its refusal of a 1-byte budget) and what reached it (the techniques metadata.json's
memory.ram_budget.traded names at that budget), and the peak the refusal names. Compile only: no build.

    python bench/ram_budget_forms.py [--models NAME[:FLAGS] ...] [--json FILE]

NAME is a bench/models/keras/ file or a path; FLAGS: q (--quantized-io), h (host only), m (the M4 only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from aot.compiler import Options, compile_file  # noqa: E402
from aot.errors import AotcError  # noqa: E402
from aot.plan import BudgetError  # noqa: E402

MODELS = ("kws_dscnn_int8.onnx:mq", "vww_mobilenet_int8.onnx:mq", "kws_dscnn_int8.onnx:m", "vww_mobilenet_int8.onnx:m",
          "kws_dscnn.onnx", "vww_mobilenet.onnx", "kws_dscnn_int8.tflite:m", "vww_mobilenet_int8.tflite:m")


def one(path: Path, target: str, quantized_io: bool) -> dict:
    opts = Options(name="m", target=target, quantized_io=quantized_io)
    try:
        plain = compile_file(path, opts).metadata["memory"]
    except AotcError as e:  # a model the board cannot hold: its refusal in the table
        return {"model": path.name, "target": target, "quantized_io": quantized_io, "refused": str(e)}
    row = {"model": path.name, "target": target, "quantized_io": quantized_io, "arena": plain["arena_bytes"],
           "tight": plain["tight_bound_bytes"]}
    try:
        compile_file(path, Options(**{**opts.__dict__, "ram_budget": 1}))
        row["least"] = 1
    except BudgetError as e:
        row["least"] = e.least_bytes
        row["refusal"] = str(e)
    try:
        met = compile_file(path, Options(**{**opts.__dict__, "ram_budget": row["least"]})).metadata["memory"]
        traded = met.get("ram_budget", {}).get("traded", {})
        row["techniques"] = {k: (v.get("bytes_saved") if isinstance(v, dict) else None) for k, v in traded.items()}
    except AotcError as e:
        row["techniques"] = {"error": str(e)}
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=list(MODELS))
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args()
    rows = []
    for spec in args.models:
        name, _, flags = spec.partition(":")
        path = Path(name) if "/" in name else ROOT / "bench" / "models" / "keras" / name
        targets = ["host"] if "h" in flags else ["mps2-an386"] if "m" in flags else ["host", "mps2-an386"]
        for target in targets:
            rows.append(one(path, target, "q" in flags))
            print(json.dumps(rows[-1]), file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print("| model | target | arena | liveness bound | least --ram-budget | techniques (bytes saved) | peak named |")
    print("|---|---|---:|---:|---:|---|---|")
    for r in rows:
        if "refused" in r:
            print(f"| {r['model']} | {r['target']} | refused: {r['refused'][:120]} | | | | |")
            continue
        tech = ", ".join(f"{k} {v:,}" if isinstance(v, int) else k for k, v in r["techniques"].items()) or "none"
        peak = r.get("refusal", "").split("its peak is ")[-1].split(";")[0][:90] if "refusal" in r else ""
        print(f"| {r['model']}{' (--quantized-io)' if r['quantized_io'] else ''} | {r['target']} | {r['arena']:,} B "
              f"| {r['tight']:,} B | {r['least']:,} B ({r['least'] / r['arena']:.2f}x) | {tech} | {peak} |")


if __name__ == "__main__":
    main()
