"""Issue 67: fit COST_HELIUM's terms of the runs in row bands (aot/kernels/tflite_cost.py) to the M55's own runs,
node by node.

bench/cost_fit.py fits COST to whole curves measured on the M4; on the M55 the band terms were the M4's, and put TFLM's
MobileNetV2's first run at 41 M est. cycles over its layers for 9.7 M measured. Here each case (a model at a
--ram-budget) is compiled for mps3-an547 (Release), built and counted node by node under qemu
(aot.bench_nodes.node_counts, the plugin's M55 model), and so is the model without a budget. A run in bands' measured
extra is its est. cycles less those of the nodes it fuses in the unbudgeted build; its features are the plan's
(tflite_cost.features, helium=True) less theirs. The FREE constants are the non-negative least squares fit of the
extras (each run weighted by 1 / its extra: relative errors), the others kept as they are. A run whose depthwise lost
Helium's path (mve_dw_lost_out) is left out: which path then runs the layer depends on what the bundle links.

    PYTHONPATH=$PWD python3 bench/cost_fit_m55.py --measure [--work DIR]   # the cases, into POINTS (minutes each)
    PYTHONPATH=$PWD python3 bench/cost_fit_m55.py [--write]                # the fit of POINTS; --write: COST_HELIUM

The measurements COST_HELIUM's band terms were fitted to are bench/results/cost_fit/m55_band_runs.json (aotc 0a54be1).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from cost_fit import captured_plans, plan_features  # noqa: E402  (bench/, beside this script)

import aot.compiler as compiler  # noqa: E402
from aot.kernels import tflite_cost  # noqa: E402

M55 = "mps3-an547"
POINTS = ROOT / "bench/results/cost_fit/m55_band_runs.json"
FREE = ("mve_dw_group_call", "band_move_byte", "band_recompute_out", "band_recompute_mac", "band_group_copy_byte")
KERAS, TFLM = "bench/models/keras", "bench/models/tflm"
MOBILENET_V2 = str(ROOT.parent / "shared/models/tflm_mobilenet_v2_quantized_1x3x224x224.tflite")
CASES = {  # model -> the budgets whose plans run layers in row bands on the M55 (bench/results/curves.json's rows)
    f"{TFLM}/person_detect.tflite": (19040, 23884),
    f"{KERAS}/vww_mobilenet_int8.tflite": (27824, 33334),
    f"{KERAS}/kws_dscnn_int8.tflite": (9808,),
    f"{KERAS}/ic_resnet8_int8.tflite": (26800,),
    MOBILENET_V2: (172000, 181632),
}


def measure(model: Path, budget: int | None, work: Path) -> dict:
    """The case's nodes as counted on the M55 (node, sources, est. cycles) and its plan's features per node."""
    from aot.bench import seeded_inputs
    from aot.bench_nodes import node_counts
    from aot.build import build, configure
    from aot.qemu_plugin import insn_count_plugin

    with captured_plans() as seen:
        bundle = compiler.compile_file(model, replace(compiler.Options(name="m", target=M55, build_type="Release"),
                                                      ram_budget=budget))
    features = plan_features(*seen[-1], helium=True)
    out = work / f"{model.stem}_{budget}"
    bundle.write(out / "bundle")
    configure(out, M55, build_type="Release")
    build(out)
    rows = node_counts(out, bundle.metadata, seeded_inputs(bundle.metadata), insn_count_plugin(work))
    return {"model": model.name, "budget": budget, "arena": bundle.metadata["memory"]["arena_bytes"],
            "nodes": [{k: v for k, v in asdict(r).items() if k in ("node", "sources", "cycles")} for r in rows],
            "features": features}


def band_runs(points: list[dict]) -> list[tuple[str, int, dict[str, float]]]:
    """(name, measured extra, features less the unbudgeted nodes') of each run in bands of the budgeted points."""
    unbudgeted = {p["model"]: p for p in points if p["budget"] is None}
    runs = []
    for p in points:
        if p["budget"] is None:
            continue
        base = unbudgeted[p["model"]]
        for row in p["nodes"]:
            f = p["features"].get(row["node"], {})
            if not row["node"].startswith("bands_") or "mve_dw_lost_out" in f:
                continue
            under = [r for r in base["nodes"] if set(r["sources"]) & set(row["sources"])]
            d = dict(f)
            for r in under:
                for k, v in base["features"].get(r["node"], {}).items():
                    d[k] = d.get(k, 0.0) - v
            runs.append((f"{p['model']} {p['budget']} {row['node']}", row["cycles"] - sum(r["cycles"] for r in under),
                         d))
    return runs


def fit(runs: list[tuple[str, int, dict[str, float]]]) -> dict[str, float]:
    """FREE's constants, the others COST_HELIUM's (printed: each run's measured extra, estimated before and after)."""
    from scipy.optimize import nnls

    cost = tflite_cost.COST_HELIUM
    fixed = np.array([sum(cost[k] * v for k, v in d.items() if k not in FREE) for _, _, d in runs])
    a = np.array([[d.get(k, 0.0) for k in FREE] for _, _, d in runs])
    y = np.array([m for _, m, _ in runs], float)
    w = 1 / np.maximum(np.abs(y), 1e4)
    x, _ = nnls(a * w[:, None], (y - fixed) * w)
    got = {k: round(float(v), 3) for k, v in zip(FREE, x, strict=True)}
    for (name, m, d), f, row in zip(runs, fixed, a, strict=True):
        before = sum(cost[k] * v for k, v in d.items())
        after = f + float(row @ x)
        print(f"  {name[:72]:72s} measured {m:>11,} est. {before:>12,.0f} -> {after:>12,.0f} ({after / m:.2f}x)")
    return got


def write(constants: dict[str, float]) -> None:
    """The constants into COST_HELIUM's entries in aot/kernels/tflite_cost.py (each a line of its own there)."""
    path = ROOT / "aot/kernels/tflite_cost.py"
    text = path.read_text()
    start = text.index("COST_HELIUM: dict[str, float] = {")
    end = text.index("\n}\n", start)
    block = text[start:end]
    for k, v in constants.items():
        block, n = re.subn(rf'("{k}": )[-0-9.e]+', rf"\g<1>{v}", block)
        if n != 1:
            raise SystemExit(f"COST_HELIUM has no line of its own for {k}")
    path.write_text(text[:start] + block + text[end:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--measure", action="store_true", help="compile, build and count the cases into --points")
    ap.add_argument("--points", type=Path, default=POINTS)
    ap.add_argument("--work", type=Path, default=Path("/tmp/cost_fit_m55"))
    ap.add_argument("--write", action="store_true", help="write the fitted constants into COST_HELIUM")
    args = ap.parse_args()
    if args.measure:
        args.work.mkdir(parents=True, exist_ok=True)
        points = []
        for model, budgets in CASES.items():
            for budget in (None, *budgets):
                points.append(measure(ROOT / model, budget, args.work))  # (an absolute model path stays as it is)
                print(f"{Path(model).stem} {budget}: {points[-1]['arena']} B, "
                      f"{sum(r['cycles'] for r in points[-1]['nodes']):,} est. cycles", flush=True)
        args.points.write_text(json.dumps(points, indent=1) + "\n")
    constants = fit(band_runs(json.loads(args.points.read_text())))
    print("fitted:", constants, "\nwas:   ", {k: tflite_cost.COST_HELIUM[k] for k in FREE})
    if args.write:
        write(constants)


if __name__ == "__main__":
    main()
