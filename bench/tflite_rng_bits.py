"""STABLEHLO_RNG_BIT_GENERATOR (issue 50) against LiteRT: host time (aotc bench: medians of rounds, one thread,
LiteRT's default kernels) of 1M uint32 words (4 MB) from each algorithm, and instructions of one inference on
the Cortex-M4 (mps2-an386 under qemu, with the TRM's cycle estimate) for 16K words (64 KB: the board's RAM).

    python bench/tflite_rng_bits.py [--no-m4] [CASE ...]

Cases: philox_u32 (PHILOX, a 3-word state), threefry_u32 (THREEFRY), philox_u64 (DEFAULT into uint64: the words
paired). The state is the model's input; the models are written with the schema (tests/frontend/tflite_written.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "frontend"))

from tflite_written import Written  # noqa: E402

CASES = {"philox_u32": (1, 3, "uint32"), "threefry_u32": (2, 2, "uint32"), "philox_u64": (0, 2, "uint64")}


def _model(case: str, words: int, path: Path) -> Path:
    algorithm, state_len, dtype = CASES[case]
    w = Written()
    s, nxt = w.tensor([state_len], "uint64"), w.tensor([state_len], "uint64")
    y = w.tensor([words // (2 if dtype == "uint64" else 1)], dtype)
    w.op("STABLEHLO_RNG_BIT_GENERATOR", [s], [nxt, y], ("StablehloRngBitGeneratorOptions", {"algorithm": algorithm}))
    return w.save(path, [s], [nxt, y])


def _run(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=list(CASES))
    ap.add_argument("--no-m4", action="store_true")
    args = ap.parse_args()
    aotc = [sys.executable, "-m", "aot.cli"]
    with tempfile.TemporaryDirectory() as d:
        for case in args.cases:
            for target, words in (("host", 1 << 20), *(() if args.no_m4 else (("mps2-an386", 1 << 14),))):
                model = _model(case, words, Path(d) / f"{case}_{target}.tflite")
                out = Path(d) / f"{case}_{target}"
                _run([*aotc, str(model), "-o", str(out), "--target", target])
                _run(["cmake", "--build", str(out), "-j", "2"])
                print(f"== {case} {target} ({words} words)\n{_run([*aotc, 'bench', str(out), '--rounds', '5'])}",
                      flush=True)


if __name__ == "__main__":
    main()
