"""Issue 67, "the curve": `aotc curve`'s RAM-versus-cycles and flash-versus-cycles points (aot/curve.py) for the
MLPerf Tiny models and TFLM's micro_speech and person_detect on the Cortex-M4 (mps2-an386, Release): per model
the unbudgeted build, the --ram-budget values stepped down to the least the compiler accepts and the
--flash-budget levels, each built and one inference counted under qemu (estimated cycles, as `aotc bench` counts
them), with the dominated points named.

    python bench/curves.py [--models kws_dscnn vww_mobilenet ic_resnet8 ad_autoencoder micro_speech person_detect]
                           [--points N] [--keep DIR] [--record]

The TFLM models are the files under bench/models/tflm/ (README there), fed the inputs bench/flash_budget.py gives
them (cortex_m_mlperf_int8.inputs_for: uniform over an int8 input's range); the Keras ones keep aot.bench's seeded
inputs, as recorded before. TFLM's MobileNetV2 224 is left out (80 s a compile, ~600 M cycles under qemu a point:
its RAM points are bench/ram_budget.py's).

--record adds the rows to bench/results/curves.json, which docs/firmware.md's table and the pictures
docs/curves/<model>.svg are rendered from (bench/docs_tables.py --write).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import record  # noqa: E402
from cortex_m_mlperf_int8 import inputs_for  # noqa: E402

from aot.compiler import Options, compile_file  # noqa: E402
from aot.curve import Measurer, flash_curve, format_table, ram_curve  # noqa: E402
from aot.progress import status  # noqa: E402

BOARD = "mps2-an386"
MODELS = ("kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder", "micro_speech", "person_detect")
TFLM = {"micro_speech": "micro_speech_quantized.tflite", "person_detect": "person_detect.tflite"}


def model_path(name: str) -> Path:
    """The model file of a --models name: bench/models/tflm/ for TFLM's, bench/models/keras/ for MLPerf Tiny's."""
    if name in TFLM:
        return ROOT / "bench" / "models" / "tflm" / TFLM[name]
    return ROOT / "bench" / "models" / "keras" / f"{name}_int8.tflite"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    p.add_argument("--points", type=int, default=16, help="RAM points per model, the unbudgeted one included")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--record", action="store_true",
                   help="add the rows to bench/results/curves.json (docs/firmware.md's table and docs/curves/)")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-curves-")).resolve()
    rows = []
    for name in args.models:
        model = model_path(name)
        base = Options(name="m", target=BOARD, build_type="Release")
        measurer = Measurer(BOARD, "Release", work / name, inputs_of=inputs_for if name in TFLM else None)
        ram = ram_curve(model.name, lambda b, m=model, o=base: compile_file(m, replace(o, ram_budget=b)), measurer,
                        args.points, status)
        print(format_table(ram), flush=True)
        flash = flash_curve(model.name, lambda b, m=model, o=base: compile_file(m, replace(o, flash_budget=b)),
                            measurer, status)
        print(format_table(flash), flush=True)
        rows.append({"model": model.name, "points": args.points, "ram": ram.to_dict(), "flash": flash.to_dict()})
    if args.record:
        print(f"recorded in {record.record(__file__, rows, key=lambda r: r['model'])}", file=sys.stderr)


if __name__ == "__main__":
    main()
