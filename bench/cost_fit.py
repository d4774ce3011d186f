"""Issue 67, "monotone budgets": fit aot/kernels/tflite_cost.py's constants (COST) to measured est. cycles.

Input: the curve.json files `aotc curve MODEL --target mps2-an386 --curve ram --points 16 -o DIR` wrote (each
point a --ram-budget and the est. cycles of one inference under qemu, Release). Each point is compiled again here
and its choices' features (tflite_cost.features) summed over the schedule; the constants are the non-negative least
squares fit of every point's cycles less its model's unbudgeted cycles to its features less the unbudgeted build's
(the MACs and everything else the budgets leave alone cancel).

A point is compiled again under the COST it was planned with (a file's "cost": --measure writes the COST it ran
under; a curve file's "plan" entry), not this checkout's: a schedule's own choices are the cheapest by COST
(FULLY_CONNECTED's blocks, which tiles a greedy search trades first), so under other constants the same budget and
option compile to other blocks than were measured, and the fit's features would move with the constants it writes
(issue 67, costfit3: the autoencoder's forced points fitted under the constants they had produced paired 689,863
est. cycles, measured on 90 blocks, with the 18 blocks those constants plan at 1518; the fit was not reproducible
and left fc_rewiden 0).

A file whose unbudgeted build is compiled again as measured (its stored features) is fitted against it; the others
get a free offset: a file's unbudgeted build was measured by the aotc of its day, whose unbudgeted plan this
checkout may no longer make (IC ResNet-8's now runs CONV_2D_1..2 in bands, DS-CNN's takes the free overlaps), so its
points are fitted against each other, not against that build (the offsets printed; without them the fit's rms was
156 K, with them 109 K before conv_undoubled_out and dw_no_column were measured, 120 K after; issue 67's costfit).

    PYTHONPATH=$PWD python3 bench/cost_fit.py DIR/curve.json ... [--points FILE.json ...] [--write]
    PYTHONPATH=$PWD python3 bench/cost_fit.py --measure MODEL B1 B2 ... -o FILE.json

--measure compiles the model at each budget once per schedule the planner compares there (aot/plan/choice.py's
options, each forced in turn), builds and counts each under qemu (aot/curve.py Measurer) and writes their
features and est. cycles (with the unbudgeted build's) to FILE.json, which --points then fits with the curves:
the choices the planner rejects are measured too, so the fit sees every kind of trade.

Prints the constants, and per point the measured and estimated difference; --write puts the constants in
aot/kernels/tflite_cost.py (COST). The measurements COST was fitted to are kept in bench/results/cost_fit/ (the
curves of the greedy planner before the options, DS-CNN's options forced one by one, VWW's at its three least
budgets of bench/results/curves.json, 28128, 29637 and 31146, and at 43221 and 41712, where a refit's bands ran 0.1 %
slower than main's greedy (forced_vww_mobilenet_bands.json), and the autoencoder's at 2457-955 three times, planned
under three COSTs (f624a07's, costfit2's and main's at 4e53924; 768 and 860 with main's): without them the
FULLY_CONNECTED terms are not told apart). The autoencoder's curve (curve_ad_autoencoder.json) is left out: its
points took the first FULLY_CONNECTED blocks that fit, before the cheapest by the estimate (1e66000), so no COST
compiles them again as measured.

    F=bench/results/cost_fit; PYTHONPATH=$PWD python3 bench/cost_fit.py \
        $F/curve_{ic_resnet8,kws_dscnn,micro_speech_quantized,vww_mobilenet}.json \
        --points $F/forced_{kws_dscnn,vww_mobilenet,vww_mobilenet_bands}.json \
        $F/forced_{ad_autoencoder,ad_autoencoder_costfit2,ad_autoencoder_main}.json [--write]

--write replaces COST's fitted values only (not COST_HELIUM's, whose keys of the same names are the M55's).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import aot.compiler as compiler  # noqa: E402
from aot.ir import Graph  # noqa: E402
from aot.kernels import tflite_cost  # noqa: E402
from aot.plan.buffers import Plan  # noqa: E402

MODELS = {"kws_dscnn_int8.tflite": "bench/models/keras/kws_dscnn_int8.tflite",
          "vww_mobilenet_int8.tflite": "bench/models/keras/vww_mobilenet_int8.tflite",
          "ic_resnet8_int8.tflite": "bench/models/keras/ic_resnet8_int8.tflite",
          "ad_autoencoder_int8.tflite": "bench/models/keras/ad_autoencoder_int8.tflite",
          "micro_speech_quantized.tflite": "bench/models/tflm/micro_speech_quantized.tflite"}


def schedule_features(model: Path, budget: int | None, force: str | None = None,
                      cost: dict[str, float] | None = None) -> dict[str, float]:
    """The summed features of the schedule aotc compiles for the model at the budget (mps2-an386); force: the
    name of the option (aot/plan/choice.py) to take, else the planner's choice; cost: the COST to plan under."""
    return _compile(model, budget, force, cost)[1]


@contextmanager
def planned_under(cost: dict[str, float] | None) -> Iterator[None]:
    """COST's values replaced by `cost`'s while compiling: a schedule's own choices (FULLY_CONNECTED's blocks, the
    tiles a greedy trades first) are the cheapest by COST, so a point is compiled again as it was measured only
    under the COST it was planned with, and the fit's features do not move with the constants it writes."""
    if cost is None:
        yield
        return
    saved = dict(tflite_cost.COST)
    tflite_cost.COST.update({k: v for k, v in cost.items() if k in saved})
    try:
        yield
    finally:
        tflite_cost.COST.clear()
        tflite_cost.COST.update(saved)


@contextmanager
def captured_plans() -> Iterator[list[tuple]]:
    """A list that receives the (graph, plan) of each select_and_plan while compiling: the last is the schedule the
    bundle holds, whose choices' features a fit reads."""
    seen: list[tuple] = []
    real = compiler.select_and_plan

    def spy(graph, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        sel, plan = real(graph, *a, **k)
        seen.append((graph, plan))
        return sel, plan

    compiler.select_and_plan = spy
    try:
        yield seen
    finally:
        compiler.select_and_plan = real


def _compile(model: Path, budget: int | None, force: str | None = None,
             cost: dict[str, float] | None = None) -> tuple:
    """(the bundle, its schedule's summed features) at the budget, the option named `force` taken, planned under
    `cost` (None: this checkout's COST)."""
    real_cheapest = compiler.cheapest

    def forced(options, estimate):  # noqa: ANN001, ANN202
        return real_cheapest([o for o in options if o[0] == force], estimate)

    if force is not None:
        compiler.cheapest = forced
    try:
        with planned_under(cost), captured_plans() as seen:
            bundle = compiler.compile_file(model, replace(compiler.Options(name="m", target="mps2-an386",
                                                                           build_type="Release"), ram_budget=budget))
    finally:
        compiler.cheapest = real_cheapest
    total: dict[str, float] = {}
    for f in plan_features(*seen[-1]).values():
        for k, v in f.items():
            total[k] = total.get(k, 0.0) + v
    return bundle, total


def plan_features(graph: Graph, plan: Plan, helium: bool = False) -> dict[str, dict[str, float]]:
    """Each node the plan chose a kernel for: its estimate's features (tflite_cost.features; overlapped where the
    plan overlaps it), those with any."""
    over = set(plan.techniques.get("overlap", ()))
    return {n.name: f for n in graph.nodes if n.name in plan.choices
            and (f := tflite_cost.features(n, graph, plan.choices[n.name], n.name in over, helium=helium))}


def measure(model: Path, budgets: list[int], out: Path) -> None:
    """Every option at every budget, built and counted (--measure)."""
    import tempfile

    from aot.curve import Measurer

    names: list[str] = []
    real = compiler.cheapest

    def spy(options, estimate):  # noqa: ANN001, ANN202
        names[:] = [o[0] for o in options]
        return real(options, estimate)

    work = Path(tempfile.mkdtemp(prefix="aotc-costfit-"))
    m = Measurer("mps2-an386", "Release", work)
    bundle, f0 = _compile(model, None)
    cycles, _, _ = m.measure("ram", bundle)
    rows = [{"budget": None, "option": None, "cycles": cycles, "features": f0}]
    print(f"none: {cycles:,}", flush=True)
    for b in budgets:
        compiler.cheapest = spy
        try:
            compiler.compile_file(model, compiler.Options(name="m", target="mps2-an386", ram_budget=b))
        finally:
            compiler.cheapest = real
        for name in list(names):
            try:
                bundle, f = _compile(model, b, name)
            except compiler.AotcError as e:
                print(f"{b} {name}: {e.one_line()[:100]}", flush=True)
                continue
            cycles, _, same = m.measure("ram", bundle)
            assert same, (b, name)
            rows.append({"budget": b, "option": name, "arena": bundle.metadata.get("memory", {}).get("arena_bytes"),
                         "cycles": cycles, "features": f})
            print(f"{b} {name}: {cycles:,}", flush=True)
    out.write_text(json.dumps({"model": str(model), "cost": dict(tflite_cost.COST), "rows": rows}, indent=1) + "\n")


def same_features(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two schedules' summed features are the same (a file's unbudgeted build compiled again as measured)."""
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) < 1e-6 for k in {*a, *b})


def curve_file(path: Path) -> tuple[dict, dict[str, float] | None]:
    """A curve.json's RAM curve and the COST its points are compiled again under (its "plan" entry)."""
    c = json.loads(path.read_text())
    if not isinstance(c, list):
        return c.get("ram", c), c.get("cost")
    plan = next((x["cost"] for x in c if x["kind"] == "plan"), None)
    return next(x for x in c if x["kind"] == "ram"), plan


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("curves", nargs="*")
    p.add_argument("--points", nargs="*", default=[], help="files --measure wrote")
    p.add_argument("--measure", nargs="+", metavar="MODEL_OR_BUDGET")
    p.add_argument("-o", "--output")
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    if args.measure:
        measure(Path(args.measure[0]), [int(b) for b in args.measure[1:]], Path(args.output))
        return
    keys = [k for k in tflite_cost.COST if k not in tflite_cost.MEASURED]  # the measured ones are kept

    def fitted_part(f: dict[str, float], f0: dict[str, float], cycles: float) -> float:
        return cycles - sum(tflite_cost.COST[k] * (f.get(k, 0.0) - f0.get(k, 0.0)) for k in tflite_cost.MEASURED)
    files = len(args.points) + len(args.curves)
    rows, ys, names = [], [], []

    def point(f: dict[str, float], f0: dict[str, float], dy: float, file: int | None, name: tuple) -> None:
        """A budgeted point: its features over the unbudgeted build's, and its file's offset (+1, -1: free; None:
        its unbudgeted build compiled again as measured, no offset)."""
        offset = [0.0] * (2 * files)
        if file is not None:
            offset[2 * file: 2 * file + 2] = [1.0, -1.0]
        rows.append([f.get(k, 0.0) - f0.get(k, 0.0) for k in keys] + offset)
        ys.append(fitted_part(f, f0, dy))
        names.append(name)
    for i, path in enumerate(args.points):
        d = json.loads(Path(path).read_text())
        base = next(r for r in d["rows"] if r["budget"] is None)
        f0 = schedule_features(Path(d["model"]), None, cost=d.get("cost"))
        same_base = d.get("cost") is not None and same_features(f0, base.get("features", {}))
        for r in d["rows"]:  # the features again, by this checkout's tflite_cost, planned as measured
            if r["budget"] is not None:
                f = schedule_features(Path(d["model"]), r["budget"], r["option"], d.get("cost"))
                point(f, f0, r["cycles"] - base["cycles"], None if same_base else i,
                      (Path(d["model"]).name, f'{r["budget"]} {r["option"]}'))
    for i, path in enumerate(args.curves, len(args.points)):
        c, cost = curve_file(Path(path))
        model = ROOT / MODELS[c["model"]]
        base = next(q for q in c["points"] if q["budget"] is None)
        f0 = schedule_features(model, None, cost=cost)
        for q in c["points"]:  # the curve's planner: "greedy" (before the options, aot/plan/choice.py)
            if q["budget"] is not None:
                f = schedule_features(model, q["budget"], "greedy", cost)
                point(f, f0, q["cycles"] - base["cycles"], i, (c["model"], q["budget"]))
    from scipy.optimize import nnls
    a, y = np.array(rows), np.array(ys, dtype=float)
    scale = np.maximum(np.abs(a).max(axis=0), 1.0)
    coef, _ = nnls(a / scale, y)
    coef = coef / scale
    for k, v in zip(keys, coef[:len(keys)], strict=True):
        print(f"{k:>16} {v:10.4f}")
    for i, path in enumerate([*args.points, *args.curves]):
        print(f"{'offset':>16} {coef[len(keys) + 2 * i] - coef[len(keys) + 2 * i + 1]:+10,.0f} {Path(path).name}")
    est = a @ coef
    for (m, b), got, e in zip(names, y, est, strict=True):
        print(f"{m:32} {str(b):>8} measured {got:+11,.0f} estimated {e:+11,.0f}")
    print(f"rms residual {np.sqrt(np.mean((est - y) ** 2)):,.0f} est. cycles over {len(y)} points")
    if args.write:
        src = ROOT / "aot" / "kernels" / "tflite_cost.py"
        text = src.read_text()
        start = text.index("COST: dict[str, float] = {")  # COST's block only (COST_HELIUM's keys are the M55's)
        end = text.index("\n}\n", start)
        block = text[start:end]
        for k, v in zip(keys, coef[:len(keys)], strict=True):
            block = re.sub(rf'("{k}": )[0-9.e+-]+,', rf"\g<1>{float(f'{v:.4g}')!r},", block)
        src.write_text(text[:start] + block + text[end:])


if __name__ == "__main__":
    main()
