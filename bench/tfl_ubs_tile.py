"""Issue 64: the .tflite CONV_2D's AVX2 tile alone, vpmaddwd against exact vpmaddubsw (bench/tfl_ubs_tile.c).

    python3 bench/tfl_ubs_tile.py [--kq 144 576] [--weights uniform laplace MODEL.tflite ...] [--work DIR]

For each weight source and kq (quads of a patch: 3 x 3 x 64 is 144) this writes a block of 16 channels' weights,
the clipped ones and their fix entries from aot/kernels/quant_ubs.py (ubs_weights for the positions-in-lanes
layout; clip_lanes and pair_safe for a 16-channel block's), 64 positions of random patch bytes and their exact
sums, builds bench/tfl_ubs_tile.c (gcc -O3 -march=x86-64-v3: an AVX2 machine's bundle) and prints its GMAC/s
(tiles A to F; F_BLOCKS=4 in the environment: F's patch block shared by 64 channels).
Weights: `uniform` in -127..127 (what the bench's int8 .tflite nets hold: Keras's random initialisation quantised
per channel), `laplace` (peaked, scaled per channel to 127: few fixes), or a .tflite's largest conv (16 of its
channels, their rows repeated to kq quads).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from aot.kernels.quant_ubs import LANES, clip_lanes, pair_safe, ubs_weights

ROOT = Path(__file__).resolve().parent.parent
POSITIONS = 64  # a run of tflite_int8_packed.c's CONV_2D (TFL_PK_RUN)


def block_weights(source: str, kq: int, rng: np.random.Generator) -> np.ndarray:
    """16 channels' weights [16, 4 kq] (int32 values of int8) from `source`."""
    if source == "uniform":
        return rng.integers(-127, 128, (16, kq * 4)).astype(np.int32)
    if source == "laplace":
        w = rng.laplace(0, 1, (16, kq * 4))
        return np.round(w / np.abs(w).max(1, keepdims=True) * 127).astype(np.int32)
    from ubs_fixes import conv_rows  # (bench/, the script's folder)
    big = max(conv_rows(Path(source)), key=lambda r: r.size)
    rows = np.resize(big[:16].astype(np.int32), (16, big.shape[1]))
    return np.concatenate([rows] * -(-kq * 4 // rows.shape[1]), 1)[:, :kq * 4]


def channel_block_fixes(w: np.ndarray) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    """The clipped weights [kq][16][4] of a channels-in-lanes block, and its fix entries (quad, [16][4]): each
    channel's residual quad split into pair-safe parts, the block's j-th parts one entry."""
    kq = w.shape[1] // 4
    lanes = w.reshape(16, kq // 2, 8)
    clipped = lanes.copy()
    for lane in LANES:
        clipped[..., list(lane)] = clip_lanes(lanes[..., list(lane)])
    rest = (lanes - clipped).reshape(16, kq, 4)
    fixes = []
    for q in range(kq):
        parts: list[np.ndarray] = []
        for c in range(16):
            quad, j = rest[c, q].copy(), 0
            while quad.any():
                part = pair_safe(quad)
                quad -= part
                if len(parts) <= j:
                    parts.append(np.zeros((16, 4), np.int32))
                parts[j][c], j = part, j + 1
        fixes += [(q, p) for p in parts]
    return clipped.reshape(16, kq, 4).transpose(1, 0, 2), fixes


def write_data(path: Path, w: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """bench/tfl_ubs_tile.c's input; returns the fix entries per quad of the 16-channel block and per channel quad."""
    kq = w.shape[1] // 4
    clipped, fixes = channel_block_fixes(w)
    uw, fx = ubs_weights(w.astype(np.int8), 1)
    x = rng.integers(0, 256, (POSITIONS, kq * 4)).astype(np.uint8)
    ref = x.astype(np.int64) @ w.T.astype(np.int64)
    with path.open("wb") as f:
        np.array([kq, POSITIONS, len(fixes)], np.int32).tofile(f)
        w.reshape(16, kq, 4).transpose(1, 0, 2).astype(np.int8).tofile(f)
        clipped.astype(np.int8).tofile(f)
        for q, part in fixes:
            np.array([q], np.int32).tofile(f)
            part.astype(np.int8).tofile(f)
        x.tofile(f)
        ref.astype(np.int32).tofile(f)
        np.array([uw.size, fx.size], np.int32).tofile(f)
        uw.astype(np.int32).tofile(f)
        fx.astype(np.int32).tofile(f)
    return len(fixes) / kq, (fx.size - 5) / 2 / (16 * kq)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kq", type=int, nargs="+", default=[144, 576], help="quads of a patch (even, up to 2048)")
    ap.add_argument("--weights", nargs="+", default=["uniform", "laplace"])
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="tfl_ubs_tile-"))
    work.mkdir(parents=True, exist_ok=True)
    exe = work / "tfl_ubs_tile"
    subprocess.run(["gcc", "-O3", "-march=x86-64-v3", "-Wall", "-Wextra", "-Werror",
                    str(ROOT / "bench" / "tfl_ubs_tile.c"), "-o", str(exe)], check=True)
    print("| weights (fix entries / 16-channel quad, / channel quad) | kq | tile | GMAC/s | sums wrong |")
    print("|---|---:|---|---:|---:|")
    for source in args.weights:
        for kq in args.kq:
            rng = np.random.default_rng(7)
            data = work / f"{Path(source).stem}_{kq}.bin"
            block, channel = write_data(data, block_weights(source, kq, rng), rng)
            label = f"{Path(source).name} ({block:.2f}, {channel:.3f})"
            print(subprocess.run([str(exe), str(data), label], check=True, capture_output=True, text=True).stdout,
                  end="", flush=True)


if __name__ == "__main__":
    main()
