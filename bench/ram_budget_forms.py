"""Issue 53: what `aotc --ram-budget` reaches for the other forms of the issue's models: the ONNX int8 models
onnxruntime's quantize_static writes (QDQ; bench/models/keras/*_int8.onnx, with and without --quantized-io) on
the M4, and the fp32 models on the host and the M4. Per model and target: the arena without a budget, the
liveness bound (tight_bound_bytes: the least a plan of one layer at a time needs), the least --ram-budget aotc
accepts (its refusal of a 1-byte budget) and what reached it (the techniques metadata.json's
memory.ram_budget.traded names at that budget, with the row bands' runs: R, bands, kernel calls), and the peak
the refusal names. Compile only, unless --run: then the unbudgeted bundle and the one at the least budget are
built (Release) and run on the same seeded input, their outputs compared element by element, and on the M4 one
inference's instructions counted under qemu (as `aotc bench` counts them); on the host the median of 20 runs.

    python bench/ram_budget_forms.py [--models NAME[:FLAGS] ...] [--run] [--json FILE] [--record]

NAME is a bench/models/keras/ file or a path; FLAGS: q (--quantized-io), h (host only), m (the M4 only). --record adds
the rows to bench/results/ram_budget_forms.json, which docs/firmware.md's table is rendered from
(bench/docs_tables.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import record  # noqa: E402

from aot.compiler import Options, compile_file  # noqa: E402
from aot.errors import AotcError  # noqa: E402
from aot.plan import BudgetError  # noqa: E402

MODELS = ("kws_dscnn_int8.onnx:mq", "vww_mobilenet_int8.onnx:mq", "kws_dscnn_int8.onnx:m", "vww_mobilenet_int8.onnx:m",
          "kws_dscnn.onnx", "vww_mobilenet.onnx", "kws_dscnn_int8.tflite:m", "vww_mobilenet_int8.tflite:m")


def measure(path: Path, target: str, quantized_io: bool, budget: int | None, work: Path) -> dict:
    """Build and run one form (Release) at `budget`: its outputs, and instructions (M4) or median ns (host)."""
    sys.path[:0] = [str(ROOT / "bench")]
    from cortex_m_mlperf_int8 import inputs_for

    from aot.bench import board_counts, insn_count_plugin
    from aot.build import build, run_bundle

    out = work / f"{path.stem}_{target}_{'q' if quantized_io else 'f'}_{budget or 'none'}"
    subprocess.run([sys.executable, "-m", "aot.cli", str(path), "-o", str(out), "--target", target, "--force",
                    "--build-type", "Release", *(["--quantized-io"] if quantized_io else []),
                    *(["--ram-budget", str(budget)] if budget else [])], check=True, stdout=subprocess.DEVNULL,
                   cwd=ROOT)
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    inputs = inputs_for(meta)
    got, ns = run_bundle(out, meta, inputs, repeat=0 if target != "host" else 20)
    row: dict = {"arena": meta["memory"]["arena_bytes"], "outputs": got}
    if target == "host":
        row["ns"] = ns
    else:
        row["instructions"] = board_counts(out, meta, inputs, insn_count_plugin(work), cycles=False)[0]
    return row


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
        row["bands"] = [{k: r[k] for k in ("node", "rows", "bands", "calls", "unbanded_calls")}
                        for r in traded.get("bands", {}).get("runs", [])]
    except AotcError as e:
        row["techniques"] = {"error": str(e)}
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=list(MODELS))
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--run", action="store_true", help="also build and run unbudgeted and at the least budget")
    p.add_argument("--record", action="store_true",
                   help="add the rows to bench/results/ram_budget_forms.json (docs/firmware.md's table comes from it)")
    args = p.parse_args()
    rows = []
    for spec in args.models:
        name, _, flags = spec.partition(":")
        path = Path(name) if "/" in name else ROOT / "bench" / "models" / "keras" / name
        targets = ["host"] if "h" in flags else ["mps2-an386"] if "m" in flags else ["host", "mps2-an386"]
        for target in targets:
            rows.append(one(path, target, "q" in flags))
            if args.run and "least" in rows[-1]:
                with tempfile.TemporaryDirectory(prefix="aotc-forms-") as tmp:
                    plain, least = (measure(path, target, "q" in flags, b, Path(tmp))
                                    for b in (None, rows[-1]["least"]))
                same = all(np.array_equal(plain["outputs"][k], least["outputs"][k]) for k in plain["outputs"])
                key = "instructions" if target != "host" else "ns"
                rows[-1]["run"] = {"identical": same, key: [plain.get(key), least.get(key)]}
            print(json.dumps(rows[-1]), file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.record:
        key = lambda r: (r["model"], r["target"], r["quantized_io"])  # noqa: E731
        print(f"recorded in {record.record(__file__, rows, key=key)}", file=sys.stderr)
    print("| model | target | arena | liveness bound | least --ram-budget | techniques (bytes saved) | peak named "
          "| row bands | at the least (--run) |")
    print("|---|---|---:|---:|---:|---|---|---|---|")
    for r in rows:
        if "refused" in r:
            print(f"| {r['model']} | {r['target']} | refused: {r['refused'][:120]} | | | | | | |")
            continue
        tech = ", ".join(f"{k} {v:,}" if isinstance(v, int) else k for k, v in r["techniques"].items()) or "none"
        peak = r.get("refusal", "").split("its peak is ")[-1].split(";")[0][:90] if "refusal" in r else ""
        bands = "; ".join(f"{b['bands']} bands of {b['rows']} row(s), {b['calls']} calls for {b['unbanded_calls']}"
                          for b in r.get("bands", []))
        work = ""
        if "run" in r:
            what = "instructions" if "instructions" in r["run"] else "ns"
            before, after = r["run"][what]
            work = (f"{'identical' if r['run']['identical'] else 'DIFFERENT'} outputs; {what} {before:,.0f} -> "
                    f"{after:,.0f} ({after / before:.3f}x)")
        print(f"| {r['model']}{' (--quantized-io)' if r['quantized_io'] else ''} | {r['target']} | {r['arena']:,} B "
              f"| {r['tight']:,} B | {r['least']:,} B ({r['least'] / r['arena']:.2f}x) | {tech} | {peak} | {bands} "
              f"| {work} |")


if __name__ == "__main__":
    main()
