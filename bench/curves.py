"""Issue 67, "the curve": `aotc curve`'s RAM-versus-cycles and flash-versus-cycles points (aot/curve.py) for the
MLPerf Tiny models and TFLM's micro_speech and person_detect on the Cortex-M4 (mps2-an386, Release) or the
Cortex-M55 (mps3-an547, Helium; --target mps3-an547): per model
the unbudgeted build, the --ram-budget values stepped down to the least the compiler accepts and the
--flash-budget levels, each built and one inference counted under qemu (estimated cycles, as `aotc bench` counts
them: the plugin models both cores), with the dominated points named.

    python bench/curves.py [--target {mps2-an386,mps3-an547}]
                           [--models kws_dscnn vww_mobilenet ic_resnet8 ad_autoencoder micro_speech person_detect]
                           [--points N] [--no-flash] [--keep DIR] [--record]

With --keep DIR, DIR/<target>/<model>/metadata-ram/<budget>.json is each RAM point's metadata.json (its plan and
the schedules the budget chose among).

The TFLM models are the files under bench/models/tflm/ (README there), fed the inputs bench/flash_budget.py gives
them (cortex_m_mlperf_int8.inputs_for: uniform over an int8 input's range); the Keras ones keep aot.bench's seeded
inputs, as recorded before. TFLM's MobileNetV2 224 is left out (80 s a compile, ~600 M cycles under qemu a point:
its RAM points are bench/ram_budget.py's).

--record adds the rows to bench/results/curves.json, which docs/firmware.md's tables and the pictures
docs/curves/<model>.svg (the M4's) and docs/curves/<model>_m55.svg are rendered from (bench/docs_tables.py
--write). A row carries its target; a row without one (recorded before the M55 was) is the M4's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import record  # noqa: E402
from cortex_m_mlperf_int8 import inputs_for  # noqa: E402

from aot.compiler import Options, compile_file  # noqa: E402
from aot.curve import Measurer, flash_curve, format_table, ram_curve  # noqa: E402
from aot.progress import status  # noqa: E402

BOARD = "mps2-an386"  # the default target, and the target of a recorded row that names none
TARGETS = ("mps2-an386", "mps3-an547")
MODELS = ("kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder", "micro_speech", "person_detect")
TFLM = {"micro_speech": "micro_speech_quantized.tflite", "person_detect": "person_detect.tflite"}


def model_path(name: str) -> Path:
    """The model file of a --models name: bench/models/tflm/ for TFLM's, bench/models/keras/ for MLPerf Tiny's."""
    if name in TFLM:
        return ROOT / "bench" / "models" / "tflm" / TFLM[name]
    return ROOT / "bench" / "models" / "keras" / f"{name}_int8.tflite"


def row_target(row: dict[str, Any]) -> str:
    """The board a recorded row was measured on: rows recorded before --target are the M4's."""
    return row.get("target", BOARD)


def row_key(row: dict[str, Any]) -> tuple[str, str]:
    """What a new row replaces in bench/results/curves.json: the same model on the same board."""
    return row["model"], row_target(row)


def recorded_ram(model: str, target: str) -> tuple[dict[str, Any], str]:
    """The RAM curve recorded for a model on a board, and the aotc commit it was measured at (--no-ram: a flash
    curve measured again keeps it rather than dropping it from the row)."""
    for run in reversed(record.load(__file__)["runs"]):
        for row in run["rows"]:
            if row_key(row) == (model, target) and row.get("ram"):
                return row["ram"], row.get("ram_commit", run["aotc_commit"])
    raise SystemExit(f"--no-ram: no RAM curve of {model} on {target} is recorded")


def keeping_metadata(compile_at: Callable[[int | None], Any], folder: Path) -> Callable[[int | None], Any]:
    """compile_at, each bundle's metadata.json also written to folder/<budget or none>.json: the schedules and
    plans of a dominated point and of the point dominating it, to compare after the run (the build tree holds
    only the last point's)."""
    def compile_and_keep(budget: int | None) -> Any:
        bundle = compile_at(budget)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{'none' if budget is None else budget}.json").write_text(
            json.dumps(bundle.metadata, indent=1, default=str) + "\n")
        return bundle
    return compile_and_keep


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", default=BOARD, choices=TARGETS, help="the board (default: the M4's)")
    p.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    p.add_argument("--points", type=int, default=16, help="RAM points per model, the unbudgeted one included")
    p.add_argument("--no-flash", action="store_true",
                   help="the RAM curve only (each flash level is a library build: bench/flash_budget.py has them)")
    p.add_argument("--no-ram", action="store_true",
                   help="the flash curve only: a --record keeps the recorded row's RAM curve, naming the commit it "
                        "was measured at (ram_commit)")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--record", action="store_true",
                   help="add the rows to bench/results/curves.json (docs/firmware.md's table and docs/curves/)")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-curves-")).resolve() / args.target
    rows = []
    for name in args.models:
        model = model_path(name)
        base = Options(name="m", target=args.target, build_type="Release")
        measurer = Measurer(args.target, "Release", work / name, inputs_of=inputs_for if name in TFLM else None)
        at_ram = keeping_metadata(lambda b, m=model, o=base: compile_file(m, replace(o, ram_budget=b)),
                                  work / name / "metadata-ram")
        if args.no_ram:
            ram_row, ram_commit = recorded_ram(model.name, args.target)
        else:
            ram = ram_curve(model.name, at_ram, measurer, args.points, status)
            print(format_table(ram), flush=True)
            ram_row, ram_commit = ram.to_dict(), None
        flash = None
        if not args.no_flash:
            flash = flash_curve(model.name, lambda b, m=model, o=base: compile_file(m, replace(o, flash_budget=b)),
                                measurer, status)
            print(format_table(flash), flush=True)
        rows.append({"model": model.name, "target": args.target, "points": args.points, "ram": ram_row,
                     "flash": flash and flash.to_dict(), **({"ram_commit": ram_commit} if ram_commit else {})})
    if args.record:
        print(f"recorded in {record.record(__file__, rows, key=row_key)}", file=sys.stderr)


if __name__ == "__main__":
    main()
