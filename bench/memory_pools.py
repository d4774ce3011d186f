"""Issue 53: a plan across memory pools (--memory-pool) on the boards, against the one-pool build.

Per model: the one-pool build (the arena in RAM), the whole arena in the slow memory (what the fit check
did before pools for an arena over RAM), and two pools with the fast one smaller than the arena (a
quarter, a half; RAM then PSRAM on mps2-an386, --fast-share); on mps3-an547 also three pools (DTCM "RAM",
SRAM, DDR). Per build: bytes per pool, the instructions of one inference under qemu and, on the M4,
its estimated cycles with no wait states and with --wait-state cycles per data access to the slow
memories (an assumption: qemu models none), medians of --runs runs; outputs bit for bit the one-pool
build's.

    python bench/memory_pools.py [--models pooled kws_dscnn_int8 vww_mobilenet_int8] [--wait 2] [--runs 3] [--record]

--record adds the rows to bench/results/memory_pools.json, which docs/firmware.md's tables are rendered from
(bench/docs_tables.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT / "examples")]

import record  # noqa: E402
from cortex_m_mlperf_int8 import inputs_for  # noqa: E402
from poolmodels import pooled_model  # noqa: E402

from aot.bench import board_counts, insn_count_plugin  # noqa: E402
from aot.build import build, run_bundle  # noqa: E402

KERAS = ROOT / "bench" / "models" / "keras"


def model_file(name: str, work: Path) -> Path:
    if name == "pooled":
        path = work / "pooled.onnx"
        onnx.save(pooled_model(), path)
        return path
    return KERAS / f"{name}.tflite"


def one(model: Path, target: str, label: str, pools: list[str], work: Path, waits: dict[str, int],
        runs: int) -> dict:
    out = work / f"{model.stem}-{target}-{''.join(c if c.isalnum() else '_' for c in label)}"
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(model), "-o", str(out), "--target", target, "--force",
                        *(a for p in pools for a in ("--memory-pool", p))], capture_output=True, text=True)
    if r.returncode != 0:  # a refusal (a pool too small for the inputs): its line in the table
        return {"label": label, "target": target, "refused": r.stderr.strip()}
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    inputs = inputs_for(meta)
    plugin = insn_count_plugin(work)
    plain = [board_counts(out, meta, inputs, plugin) for _ in range(runs)]
    waited = [board_counts(out, meta, inputs, plugin, wait_states=waits) for _ in range(runs)] if waits else []
    got, _ = run_bundle(out, meta, inputs)
    med = statistics.median
    return {"label": label, "target": target,
            "pools": {p["name"]: p["bytes"] for p in meta["memory"].get("pools", ())}
            or {meta["target_info"]["placement"]["arena"]: meta["memory"]["arena_bytes"]},
            "instructions": med(c for c, _ in plain),
            "cycles": med(c for _, c in plain) if plain[0][1] is not None else None,
            "cycles_waits": med(c for _, c in waited) if waited and waited[0][1] is not None else None,
            "outputs": [got[s["name"]] for s in meta["outputs"]]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["pooled", "kws_dscnn_int8", "vww_mobilenet_int8"])
    ap.add_argument("--wait", type=int, default=2, help="wait states per data access to PSRAM (default 2)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="keep the builds here")
    ap.add_argument("--record", action="store_true",
                    help="add the rows to bench/results/memory_pools.json (docs/firmware.md's tables come from it)")
    args = ap.parse_args()
    recorded: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="aotc-pools-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print("| model | target | build | bytes per pool | instructions | est. M4 cycles | "
              f"est. M4 cycles, PSRAM +{args.wait}/access | outputs as one pool |")
        print("|---|---|---|---|---:|---:|---:|---|")
        for name in args.models:
            model = model_file(name, work)
            base = one(model, "mps2-an386", "one pool", [], work, {"PSRAM": args.wait}, args.runs)
            arena = sum(base["pools"].values())
            rows = [base,
                    one(model, "mps2-an386", "all in PSRAM", [f"PSRAM:{arena}"], work, {"PSRAM": args.wait},
                        args.runs)]
            for share in (2, 4):
                fast = -(-arena // share // 16) * 16
                rows.append(one(model, "mps2-an386", f"two pools, RAM 1/{share}", [f"RAM:{fast}", "PSRAM:4M"],
                                work, {"PSRAM": args.wait}, args.runs))
            m55 = one(model, "mps3-an547", "one pool", [], work, {}, args.runs)
            rows.append(m55)
            quarter, half = -(-arena // 4 // 16) * 16, -(-arena // 2 // 16) * 16
            rows.append(one(model, "mps3-an547", "three pools", [f"RAM:{quarter}", f"SRAM:{half}", "DDR:4M"],
                            work, {}, args.runs))
            for r in rows:
                if "refused" in r:
                    print(f"| {name} | {r['target']} | {r['label']} | refused: {r['refused']} | | | | |")
                    recorded.append({"model": name, **r})
                    continue
                ref = base if r["target"] == "mps2-an386" else m55
                same = all(np.array_equal(a, b) for a, b in zip(r["outputs"], ref["outputs"], strict=True))
                recorded.append({"model": name, **{k: v for k, v in r.items() if k != "outputs"},
                                 "same_as_one_pool": same, "wait_states": {"PSRAM": args.wait}, "runs": args.runs})
                pools = ", ".join(f"{k} {v}" for k, v in r["pools"].items())
                cyc = "-" if r["cycles"] is None else f"{r['cycles']:.0f}"
                cw = "-" if r["cycles_waits"] is None else f"{r['cycles_waits']:.0f}"
                print(f"| {name} | {r['target']} | {r['label']} | {pools} | {r['instructions']:.0f} | {cyc} | {cw} "
                      f"| {'bit-exact' if same else 'DIFFER'} |", flush=True)
    if args.record:
        key = lambda r: (r["model"], r["target"], r["label"])  # noqa: E731
        print(f"recorded in {record.record(__file__, recorded, key=key)}", file=sys.stderr)


if __name__ == "__main__":
    main()
