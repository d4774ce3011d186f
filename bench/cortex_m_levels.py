"""fp32 bundles on a Cortex-M board at -O3, -O2 and -Os: instructions per inference under qemu.

    python bench/cortex_m_levels.py [--board mps2-an386] [--models mlp ae_dense ...] [--levels O3 O2 Os]
                                    [--keep DIR] [--json FILE]

Issue 27's table: each model is compiled for the board and built three times, as CMake's Release
(-O3), RelWithDebInfo (-O2 -g; -g changes no code) and MinSizeRel (-Os) build types, which is how a
firmware project picks the level (`aotc --build-type`, or CMAKE_BUILD_TYPE). `aotc bench` counts
one inference in each: the runner under qemu-system-arm with aotc's instruction-counting plugin,
(count(3 runs) - count(1 run)) / 2. qemu has no timing model for these cores: these are
instructions, not cycles. MACs are counted from the graph (Conv, Gemm, MatMul); outputs are
checked against onnxruntime on every build.

Prints a markdown table: per model, its MACs, and per level the instructions (millions) with
instructions per MAC, the -O2 and -Os counts over -O3's, and the runner image's .text bytes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]
import zoo  # noqa: E402

from aot.bench import BoardRow, bench_board  # noqa: E402
from aot.build import build  # noqa: E402

# the names for the zoo's models
MODELS = {"mlp": "mlp", "ae_dense": "ae_dense", "lenet": "lenet", "ds_cnn": "dscnn_kws", "resnet8": "resnet",
          "mobilenet_v1 0.25 96": "mobilenetv1_96", "mobilenet_v2 0.35 96": "mobilenetv2_96"}
LEVELS = {"O3": "Release", "O2": "RelWithDebInfo", "Os": "MinSizeRel"}


def measure(name: str, level: str, board: str, work: Path) -> BoardRow:
    src = work / f"{MODELS[name]}.onnx"
    if not src.is_file():
        onnx.save(zoo.build(MODELS[name]), src)
    out = work / f"{MODELS[name]}_{board}_{level}"
    subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out), "--target", board, "--force",
                    "--build-type", LEVELS[level]], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    return bench_board(out, meta, plugin_dir=work)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--board", default="mps2-an386")
    p.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--levels", nargs="*", default=list(LEVELS), choices=list(LEVELS))
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-cortex-m-levels-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows: dict[tuple[str, str], BoardRow] = {}
    for name in args.models:
        for level in args.levels:
            r = rows[name, level] = measure(name, level, args.board, work)
            print(f"  {name} -{level}: {r.instructions} instructions, {r.per_mac:.2f}/MAC, "
                  f"max abs err {r.max_abs_err:.1e}, text {r.text_bytes} B", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"model": m, "level": lv, "instructions": r.instructions, "macs": r.macs,
              "max_abs_err": r.max_abs_err, "text_bytes": r.text_bytes} for (m, lv), r in rows.items()], indent=1))
    base = args.levels[0]
    head = ["model", "MACs", *[f"-{lv} M instr (per MAC)" for lv in args.levels],
            *[f"-{lv} / -{base}" for lv in args.levels[1:]], *[f"-{lv} text B" for lv in args.levels]]
    print(f"{args.board}: instructions per inference under qemu\n")
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for name in args.models:
        rs = [rows[name, lv] for lv in args.levels]
        cells = [name, f"{rs[0].macs / 1e6:.2f} M"]
        cells += [f"{r.instructions / 1e6:.3g} M ({r.per_mac:.2f})" for r in rs]
        cells += [f"{r.instructions / rs[0].instructions:.2f}" for r in rs[1:]]
        cells += [str(r.text_bytes) for r in rs]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
