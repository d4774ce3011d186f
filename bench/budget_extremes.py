"""The two ends of a model's budget curves, through the command line only, so that an older checkout's compiler runs
it as well (--src DIR: that tree's `aot` package): per model, on one board, the unbudgeted build's est. cycles and
library flash, the least arena (`--ram-budget 1` is refused with it) built and counted, and the least library flash
(`--flash-budget 1` likewise) built and counted. Why (issue 67's closing table): `aotc curve` did not exist when the
issue was filed, and the curves' own first and last points need it; these four numbers a model per side do not.

    python bench/budget_extremes.py --work DIR [--src TREE] [--target mps2-an386] [--models FILE ...] [--json FILE]

A WORK directory used before is taken as it is: its bundles are built and counted again, not compiled again.

Each step is `aotc MODEL -o ...`, `cmake --build`, `aotc bench` (its seeded inputs; est. cycles from the qemu plugin)
and `aotc footprint`. The bench and footprint steps always run this checkout's aotc (an old tree's `aotc bench` could
not count a model its LiteRT refused: TFLM's person_detect), on the bundles the --src compiler wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = [ROOT / "bench" / "models" / "keras" / f"{m}_int8.tflite"
          for m in ("kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder")] + \
         [ROOT / "bench" / "models" / "tflm" / f for f in ("micro_speech_quantized.tflite", "person_detect.tflite")]
CLI = "import sys; from aot.cli import main; sys.argv[0] = 'aotc'; sys.exit(main())"


def aotc(src: Path | None, *args: str, cwd: Path) -> str:
    """One aotc command by the --src tree's package (else this checkout's), its stdout and stderr together."""
    env = dict(os.environ, PYTHONPATH=str(src or ROOT))
    r = subprocess.run([sys.executable, "-c", CLI, *args], cwd=cwd, env=env, capture_output=True, text=True)
    return r.stdout + r.stderr


def least(text: str, phrase: str) -> int | None:
    m = re.search(phrase + r" ([0-9,]+) B", text)
    return int(m.group(1).replace(",", "")) if m else None


def counted(out: Path, cwd: Path) -> dict:
    """Build OUT, count one inference (`aotc bench`) and measure its flash (`aotc footprint`)."""
    subprocess.run(["cmake", "--build", str(out)], capture_output=True, check=True)
    row = {}
    for line in aotc(None, "bench", str(out), cwd=cwd).splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and cells[2].startswith("mps"):
            row["instructions"], row["cycles"] = int(cells[3]), int(cells[4])
    m = re.search(r"flash [0-9.]+ [KM]iB \((\d+) B", aotc(None, "footprint", str(out), cwd=cwd))
    row["flash"] = int(m.group(1)) if m else None
    return row


def extremes(model: Path, target: str, work: Path, src: Path | None) -> dict:
    """One model's row; what an earlier run left in WORK (a bundle, a refusal) is taken, not compiled again."""
    d = work / model.stem
    d.mkdir(parents=True, exist_ok=True)

    def compiled(name: str, *options: str) -> Path:
        if not (d / name / "bundle" / "metadata.json").exists():
            aotc(src, str(model), "-o", str(d / name), "--target", target, *options, cwd=work)
        return d / name

    row: dict = {"model": model.stem, "target": target, "none": counted(compiled("none"), work)}
    for kind, option, phrase in (("ram", "--ram-budget", "least arena aotc reaches is"),
                                 ("flash", "--flash-budget", "least aotc reaches is")):
        refusal = d / f"{kind}1.txt"
        if not refusal.exists():
            refusal.write_text(aotc(src, str(model), "-o", str(d / f"{kind}1"), "--target", target, option, "1",
                                    cwd=work))
        row[f"least_{kind}"] = n = least(refusal.read_text(), phrase)
        if n is not None:
            row[f"at_least_{kind}"] = counted(compiled(f"{kind}_least", option, str(n)), work)
    return row


def table(rows: list[dict]) -> str:
    """Markdown: the least flash as the footprint measures the least-flash bundle (the refusal's figure is the
    compiler's own, by the footprint rules of its day)."""
    def at(r: dict, k: str) -> str:
        m = r.get(f"at_least_{k}")
        if not m:
            return "-"
        n = m["flash"] if k == "flash" else r[f"least_{k}"]
        return f"{n:,} B ({m['cycles'] / r['none']['cycles']:.3f}x)"
    out = ["| model | target | unbudgeted est. cycles | library flash | least arena (its est. cycles) | "
           "least flash (its est. cycles) |", "|---|---|---:|---:|---:|---:|"]
    out += [f"| {r['model']} | {r['target']} | {r['none']['cycles']:,} | {r['none']['flash']:,} B | {at(r, 'ram')} | "
            f"{at(r, 'flash')} |" for r in rows]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--src", type=Path, help="a checkout whose aot package compiles (default: this one)")
    ap.add_argument("--target", default="mps2-an386")
    ap.add_argument("--models", nargs="+", type=Path, default=MODELS)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    rows = []
    for m in a.models:
        print(f"{m.name} on {a.target} ...", file=sys.stderr, flush=True)
        rows.append(extremes(m.resolve(), a.target, a.work.resolve(), a.src.resolve() if a.src else None))
    print(table(rows))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
