"""Issue 53: what `aotc --flash-budget`'s levels (aot/flash.py) cost on the Cortex-M4 (mps2-an386, Release): per
model and level the library's flash as aotc measures it at compile time and as `aotc footprint` measures the
build (they must agree), its code and constants, the arena, the instructions and estimated cycles of one inference
under qemu (as `aotc bench` counts them), and whether the outputs are the unbudgeted (level "none") build's.

    python bench/flash_budget.py [--models kws_dscnn_int8.tflite vww_mobilenet_int8.tflite ...] [--keep DIR]
                                 [--json FILE] [--record] [--target mps3-an547] [--levels none mve-dw-small ...]

Each level is compiled on its own (aot.flash.LEVELS narrowed to it, with a budget it meets), so every level is
measured even where an earlier one would have met a budget. Models are bench/models/keras/ file names, or paths
under bench/models/ (tflm/micro_speech_quantized.tflite, TFLM's test model). --record
adds the rows to bench/results/flash_budget.json, which docs/firmware.md's table is rendered from
(bench/docs_tables.py). --target takes another board's ladder (the M55's: mps3-an547, its HELIUM_LEVELS among the
others, est. cycles by its cycle model), --levels a part of it (the first named is the one the others are compared
with: name none first).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests")]

import record  # noqa: E402
from cortex_m_mlperf_int8 import inputs_for  # noqa: E402

from aot import flash  # noqa: E402
from aot.bench import board_counts, insn_count_plugin  # noqa: E402
from aot.build import build, configure  # noqa: E402
from aot.compiler import Options, compile_file  # noqa: E402
from aot.footprint import measure  # noqa: E402

BOARD = "mps2-an386"
MODELS = ("kws_dscnn_int8.tflite", "vww_mobilenet_int8.tflite")


def run_level(model: Path, level: flash.FlashLevel, work: Path, board: str = BOARD) -> dict:
    """Compile at one level (its figure measured at compile time), build, footprint, count under qemu."""
    saved = flash.LEVELS
    flash.LEVELS = (level,)  # (a ladder of one level: flash.levels inserts no HELIUM_LEVELS into it)
    try:
        b = compile_file(model, Options(name="m", target=board, flash_budget=10**9, build_type="Release"))
    finally:
        flash.LEVELS = saved
    out = work / f"{model.stem}_{level.name}"
    b.write(out / "bundle")
    configure(out, board, build_type="Release")
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    fp = measure(out, meta)
    inputs = inputs_for(meta)
    got: dict = {}
    count, cycles = board_counts(out, meta, inputs, insn_count_plugin(work), outputs=got)
    fb = meta["flash_budget"]
    return {"level": level.name, "flash_compile_time": fb["flash_bytes"], "flash_footprint": fp["model"]["flash_bytes"],
            "code": fb["code_bytes"], "constants": fb["weights_and_constants_bytes"],
            "image_text": fp["image"]["text"], "arena": meta["memory"]["arena_bytes"],
            "instructions": count, "cycles": cycles, "outputs": [got[s["name"]] for s in meta["outputs"]]}


def ladder_of(board: str, names: list[str] | None) -> tuple[flash.FlashLevel, ...]:
    """The board's --flash-budget levels (the M55's with HELIUM_LEVELS), or those of them named, in that order."""
    from aot.targets import get_target

    ladder = flash.levels(False, get_target(board).helium)
    if not names:
        return ladder
    by_name = {lv.name: lv for lv in ladder}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise SystemExit(f"no level {', '.join(missing)} on {board}: {', '.join(by_name)}")
    return tuple(by_name[n] for n in names)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=list(MODELS))
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--record", action="store_true",
                   help="add the rows to bench/results/flash_budget.json (docs/firmware.md's table comes from it)")
    p.add_argument("--target", default=BOARD, help=f"the board (default {BOARD}; the M55: mps3-an547)")
    p.add_argument("--levels", nargs="*", help="these levels of the board's ladder alone (default every one)")
    args = p.parse_args()
    ladder = ladder_of(args.target, args.levels)
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-flash-budget-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models:
        model = ROOT / "bench" / "models" / "keras" / name
        if not model.is_file():
            model = ROOT / "bench" / "models" / name
        levels = [run_level(model, lv, work, args.target) for lv in ladder]
        base = levels[0]
        for r in levels:
            r["same_as_none"] = all(np.array_equal(a, b) for a, b in zip(r["outputs"], base["outputs"], strict=True))
        for r in levels:
            r.pop("outputs")
            rows.append({"model": name, **({"target": args.target} if args.target != BOARD else {}), **r})
            print(json.dumps(rows[-1]), file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.record:
        def key(r: dict) -> tuple[str, str, str]:
            return r["model"], r.get("target", BOARD), r["level"]

        print(f"recorded in {record.record(__file__, rows, key=key)}", file=sys.stderr)
    print("| model | level | flash (compile time = footprint) | code | weights and constants | arena | instructions "
          "| est. cycles | outputs as level none |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    base: dict[str, dict] = {}
    for r in rows:
        b = base.setdefault(r["model"], r)
        agree = "" if r["flash_compile_time"] == r["flash_footprint"] else f" (footprint {r['flash_footprint']:,})"
        print(f"| {r['model']} | {r['level']} | {r['flash_compile_time']:,} B{agree} "
              f"({r['flash_compile_time'] / b['flash_compile_time']:.3f}x) | {r['code']:,} B | {r['constants']:,} B "
              f"| {r['arena']:,} B | {r['instructions']:,} ({r['instructions'] / b['instructions']:.2f}x) "
              f"| {r['cycles']:,} ({r['cycles'] / b['cycles']:.2f}x) | {r['same_as_none']} |")


if __name__ == "__main__":
    main()
