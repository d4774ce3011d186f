"""Issue 53: `aotc --ram-budget` on the Cortex-M4 (mps2-an386, Release): per model the arena without a
budget, the least budget aotc accepts (found from its refusal) and the arena there, the instructions and
estimated cycles of one inference under qemu at both (as `aotc bench` counts them), and the outputs
against LiteRT's reference kernels (identical elements); also the issue's target budgets where it
gives one (VWW 30.2 KB, KWS 12.0 KB: the refusal's line where aotc cannot meet them).

    python bench/ram_budget.py [--models kws_dscnn vww_mobilenet ic_resnet8 ad_autoencoder tflm_mobilenet_v2
                                mobilenet_v2_224 mobilenet_v2_224_torchpad] [--no-run] [--targets-only] [--keep DIR]
                               [--json FILE] [--record] [--tf-python PY] [--taps] [--also MODEL=BYTES ...]

--no-run: arenas only (no build, no qemu). --targets-only: build and run at the issue's targets (and --also)
but not at the least budget. Where runs of layers went in row bands (aot/plan/bands.py) each is listed with
its band height, bands and kernel calls. The MobileNetV2 224 models are bench/arenas.py's --large ones,
made on demand by examples/make_tflite_models.py with the TensorFlow Python --tf-python; tflm_mobilenet_v2 is
TFLM's MobileNetV2 1.0 224 int8 test model (../shared/models), which needs no TensorFlow. --record adds the rows
to bench/results/ram_budget.json, which docs/firmware.md's tables are rendered from (bench/docs_tables.py).
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
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests")]

import record  # noqa: E402
from arenas import LARGE, large_models  # noqa: E402
from cortex_m_mlperf_int8 import MODELS_DIR, inputs_for  # noqa: E402

from aot.bench import board_counts, insn_count_plugin  # noqa: E402
from aot.build import build, run_bundle  # noqa: E402
from aot.compare import debug_variant, read_taps  # noqa: E402
from aot.compiler import Options, compile_file  # noqa: E402
from aot.errors import AotcError  # noqa: E402
from aot.plan import BudgetError  # noqa: E402

BOARD = "mps2-an386"
MLPERF = ("kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder")
LARGE_NAMES = ("mobilenet_v2_224", "mobilenet_v2_224_torchpad")
SHARED = {"tflm_mobilenet_v2": ROOT.parent / "shared" / "models" / "tflm_mobilenet_v2_quantized_1x3x224x224.tflite"}
# issue 53's table (KB as 1000 B: the stricter reading; MobileNetV2's 256 KiB), and the estimated cycles it allows
# against the unbudgeted build's at those budgets
TARGETS = {"vww_mobilenet": 30_200, "kws_dscnn": 12_000, "mobilenet_v2_224": 262_144, "tflm_mobilenet_v2": 262_144}
CYCLES_TARGETS = {"vww_mobilenet": 1.15, "kws_dscnn": 1.15, "mobilenet_v2_224": 1.20, "tflm_mobilenet_v2": 1.20}


def model_path(name: str, tf_python: str | None) -> Path:
    if name in SHARED:
        return SHARED[name]
    if name in LARGE_NAMES:
        if not (LARGE / f"{name}_int8.tflite").exists():
            if tf_python is None:
                raise SystemExit(f"{name}: give --tf-python to make it (bench/arenas.py --large)")
            large_models(tf_python)
        return LARGE / f"{name}_int8.tflite"
    return MODELS_DIR / f"{name}_int8.tflite"


def least_budget(model: Path) -> int:
    """The least --ram-budget aotc accepts for the model on the board: its refusal of a 1-byte budget."""
    try:
        compile_file(model, Options(name="m", target=BOARD, ram_budget=1))
    except BudgetError as e:
        return e.least_bytes
    return 1


def references(model: Path, inputs: list[np.ndarray], work: Path) -> tuple[list[np.ndarray], str]:
    """LiteRT's outputs: its reference kernels (BUILTIN_REF, which TFLM matches bit for bit), or where
    that interpreter aborts (MobileNetV2 224: in allocate_tensors, with no message) its default kernels."""
    np.savez(work / "ref_in.npz", **{f"input_{k}": x for k, x in enumerate(inputs)})
    for how in ([], ["--builtin"]):
        r = subprocess.run([sys.executable, str(ROOT / "tests" / "tflite_reference.py"), str(model),
                            str(work / "ref_in.npz"), str(work / "ref_out.npz"), *how], capture_output=True)
        if r.returncode == 0:
            got = np.load(work / "ref_out.npz")
            return [got[f"output_{k}"] for k in range(len(got.files))], "default kernels" if how else "reference"
    raise RuntimeError(f"LiteRT could not run {model}")


def tapped(out: Path, meta: dict, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor of one run, as `aotc compare`'s debug variant (AOTC_TAPS) writes it after its node."""
    dbg = debug_variant(out, meta)
    (dbg / "taps.bin").unlink(missing_ok=True)
    run_bundle(dbg, meta, inputs, taps=dbg / "taps.bin")
    return {t.tensor: t.data for t in read_taps(dbg / "taps.bin")}


def run_one(model: Path, budget: int | None, work: Path, taps: bool = False) -> dict:
    """Compile, build and run the model under qemu (instructions, cycles, outputs against LiteRT)."""
    out = work / f"{model.stem}_{budget or 'none'}"
    subprocess.run([sys.executable, "-m", "aot.cli", str(model), "-o", str(out), "--target", BOARD, "--force",
                    "--build-type", "Release", *(["--ram-budget", str(budget)] if budget else [])],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    inputs = inputs_for(meta)
    got: dict = {}
    count, cycles = board_counts(out, meta, inputs, insn_count_plugin(work), outputs=got)
    refs, kernels = references(model, inputs, work)
    same = sum(int(np.sum(got[s["name"]].reshape(-1) == np.asarray(r).reshape(-1)))
               for s, r in zip(meta["outputs"], refs, strict=True))
    total = sum(int(np.asarray(r).size) for r in refs)
    return {"arena": meta["memory"]["arena_bytes"], "instructions": count, "cycles": cycles,
            "identical": same / max(total, 1), "litert": kernels, "ram_budget": meta["memory"].get("ram_budget"),
            "outputs": [got[s["name"]] for s in meta["outputs"]],
            **({"taps": tapped(out, meta, inputs)} if taps else {})}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=[*MLPERF, *LARGE_NAMES], choices=[*MLPERF, *SHARED, *LARGE_NAMES])
    p.add_argument("--no-run", action="store_true", help="arenas only: no build, no qemu")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--record", action="store_true",
                   help="add the rows to bench/results/ram_budget.json (docs/firmware.md's tables come from it)")
    p.add_argument("--tf-python", help="the Python with TensorFlow, to make the MobileNetV2 224 models")
    p.add_argument("--targets-only", action="store_true", help="no build and run at the least budget")
    p.add_argument("--taps", action="store_true",
                   help="also run both builds' debug variants (AOTC_TAPS): every tensor identical in both?")
    p.add_argument("--also", nargs="*", default=[], metavar="MODEL=BYTES",
                   help="more budgets to run a model at (the issue's targets, where met, run anyway)")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-ram-budget-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models:
        model = model_path(name, args.tf_python)
        plain = compile_file(model, Options(name="m", target=BOARD)).metadata["memory"]["arena_bytes"]
        least = least_budget(model)
        row = {"model": name, "arena": plain, "least_budget": least}
        more = [int(a.split("=")[1]) for a in args.also if a.split("=")[0] == name]
        if name in TARGETS:
            try:
                met = compile_file(model, Options(name="m", target=BOARD, ram_budget=TARGETS[name]))
                row["target"] = f"{TARGETS[name]} B: met, arena {met.metadata['memory']['arena_bytes']} B"
                more.append(TARGETS[name])
            except AotcError as e:
                row["target"] = f"{TARGETS[name]} B: refused: {e}"
        if not args.no_run:
            row["unbudgeted"] = run_one(model, None, work, args.taps)
            if not args.targets_only:
                row["budgeted"] = run_one(model, least, work, args.taps)
            row["more"] = {b: run_one(model, b, work) for b in more}
            if args.taps and "budgeted" in row:  # every tensor of the budgeted build against the unbudgeted one's
                a, b = row["unbudgeted"].pop("taps"), row["budgeted"].pop("taps")
                row["taps_identical"] = f"{sum(np.array_equal(a[k], b[k]) for k in a if k in b)} of {len(a)}"
        rows.append(row)
        print(json.dumps(row, default=lambda v: "..."), file=sys.stderr)
    for r in rows:  # the budget changes where outputs go, never a value: the two builds agree
        if r.get("budgeted"):
            r["budgeted"]["same_as_unbudgeted"] = all(np.array_equal(a, b) for a, b in zip(
                r["budgeted"].pop("outputs"), r["unbudgeted"]["outputs"], strict=True))
            if not r["budgeted"]["same_as_unbudgeted"]:
                print(f"{r['model']}: the budgeted build's outputs differ from the unbudgeted one's", file=sys.stderr)
        for b, m in r.get("more", {}).items():  # the same comparison at the other budgets
            same = all(np.array_equal(x, y) for x, y in zip(m.pop("outputs"), r["unbudgeted"]["outputs"], strict=True))
            m["same_as_unbudgeted"] = same
            if not same:
                print(f"{r['model']}: the build at --ram-budget {b} gives outputs the unbudgeted one does not",
                      file=sys.stderr)
        if r.get("unbudgeted"):
            r["unbudgeted"].pop("outputs")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.record:
        for r in rows:
            r["file"] = model_path(r["model"], args.tf_python).name
            r["targets_only"] = args.targets_only
            if r["model"] in TARGETS:
                r["budget_target"], r["cycles_target"] = TARGETS[r["model"]], CYCLES_TARGETS[r["model"]]
        print(f"recorded in {record.record(__file__, rows, key=lambda r: r['model'])}", file=sys.stderr)
    print("| model | arena B | least --ram-budget B (x) | M instr. before -> at it (x) | M est. cycles before -> at "
          "it (x) | identical to LiteRT ref |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        a, b = r.get("unbudgeted"), r.get("budgeted")
        if a and not b:
            print(f"| {r['model']} | {r['arena']} | {r['least_budget']} ({r['least_budget'] / r['arena']:.2f}) | "
                  f"{a['instructions'] / 1e6:.2f} | {a['cycles'] / 1e6:.2f} | {a['identical']:.2%} ({a['litert']}) |")
            continue
        insn = f"{a['instructions'] / 1e6:.2f} -> {b['instructions'] / 1e6:.2f} " \
               f"({b['instructions'] / a['instructions']:.3f})" if a else "-"
        cyc = f"{a['cycles'] / 1e6:.2f} -> {b['cycles'] / 1e6:.2f} ({b['cycles'] / a['cycles']:.3f})" \
            if a and a["cycles"] else "-"
        same = f"{a['identical']:.2%}, {b['identical']:.2%} ({a['litert']})" if a else "-"
        print(f"| {r['model']} | {r['arena']} | {r['least_budget']} ({r['least_budget'] / r['arena']:.2f}) | {insn} "
              f"| {cyc} | {same} |")
    for r in rows:
        for b, m in r.get("more", {}).items():
            a = r["unbudgeted"]
            print(f"- {r['model']} at --ram-budget {b}: arena {m['arena']} B, {m['instructions'] / 1e6:.2f} M instr. "
                  f"({m['instructions'] / a['instructions']:.3f}x), {m['cycles'] / 1e6:.2f} M est. cycles "
                  f"({m['cycles'] / a['cycles']:.3f}x{_cycles_target(r['model'], b, m['cycles'] / a['cycles'])}), "
                  f"identical {m['identical']:.2%}, to the unbudgeted build's: {m['same_as_unbudgeted']}" + _bands(m))
        if "target" in r:
            print(f"- {r['model']} at the issue's target {r['target']}")
        if "taps_identical" in r:
            print(f"- {r['model']}: tensors identical in the unbudgeted and least-budget builds: {r['taps_identical']}")


def _cycles_target(model: str, budget: int, ratio: float) -> str:
    """Against the issue's cycles target at its budget."""
    if TARGETS.get(model) != budget or model not in CYCLES_TARGETS:
        return ""
    return f", target <= {CYCLES_TARGETS[model]:.2f}x: {'met' if ratio <= CYCLES_TARGETS[model] else 'missed'}"


def _bands(m: dict) -> str:
    """The runs that went in row bands at this budget, if any."""
    runs = ((m.get("ram_budget") or {}).get("traded") or {}).get("bands", {}).get("runs", [])
    return "".join(f"; {r['layers'][0]}..{r['layers'][-1]} ({len(r['layers'])} layers) in {r['bands']} bands of "
                   f"{r['rows']} rows, {r['calls']} calls for {r['unbanded_calls']}" for r in runs)


if __name__ == "__main__":
    main()
