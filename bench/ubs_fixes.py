"""Issue 64: how much of a model's conv weights the exact vpmaddubsw path would have to fix (aot/kernels/quant_ubs.py).

    python3 bench/ubs_fixes.py MODEL.tflite|MODEL.onnx ...

quant_ubs clips each 16-bit lane's four weights (bytes 0, 1 or 2, 3 of a pair of quads) to sums within +-128 and
lists what it took as fix quads, which the kernel adds one vpmaddubsw at a time. That pays where few quads need a
fix: the QDQ convs' per-tensor weights (ResNet-18 QDQ: 2 % of its channels' quads). This prints, for every int8
CONV_2D (.tflite, its rows padded per kernel row as tflite_int8_packed.c reads them) or QDQ Conv (.onnx), the share
of (channel, quad) with a fix, the fix entries per quad, and the share of the quads of a block of 16 channels with
any fix: what a channels-in-lanes tile (tflite_int8_packed.c's: one broadcast quad x 16 channels' weights) would
add a position at a time.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from aot.kernels.quant_ubs import ubs_weights
from aot.kernels.tflite_int8 import pack_kp

BLOCK = 16  # output channels of a block of tflite_int8_packed.c's CONV_2D


def conv_rows(path: Path) -> list[np.ndarray]:
    """Each int8 conv's weights as rows [out_c, kp] of whole quads, in the order the patches hold them."""
    if path.suffix == ".tflite":
        from aot.frontend.tflite import load_tflite
        model, tflite = load_tflite(path), True
    else:
        model, tflite = onnx.load(str(path)), False
    out = []
    for init in model.graph.initializer:
        w = numpy_helper.to_array(init)
        if w.dtype != np.int8 or w.ndim != 4 or w.shape[0 if tflite else 1] == 1:  # (depthwise: not these kernels)
            continue
        if tflite:  # [oc, kh, kw, c]: each kernel row's kw c bytes padded to whole quads (tfl_pk_direct)
            oc, kh, kw, c = w.shape
            rows = np.zeros((oc, kh, pack_kp(kw * c)), np.int8)
            rows[:, :, :kw * c] = w.reshape(oc, kh, kw * c)
            out.append(rows.reshape(oc, -1))
        else:  # [oc, c, kh, kw]
            rows = w.reshape(w.shape[0], -1)
            padded = np.zeros((rows.shape[0], pack_kp(rows.shape[1])), np.int8)
            padded[:, :rows.shape[1]] = rows
            out.append(padded)
    return out


def shares(rows: np.ndarray) -> tuple[int, int, int, int, int]:
    """(quads, channel quads fixed, fix entries, 16-channel block quads, those with a fix) of one conv."""
    m, kp = rows.shape
    fix = ubs_weights(rows, 1)[1]
    blocks4 = -(-m // 4)
    keys = fix[blocks4 + 1::2]
    block_of = np.repeat(np.arange(blocks4), np.diff(fix[:blocks4 + 1]))
    chan = block_of * 4 + (keys & 3)
    quad = keys >> 2
    fixed = len(set(zip(chan.tolist(), quad.tolist(), strict=True)))
    block16 = len(set(zip((chan // BLOCK).tolist(), quad.tolist(), strict=True)))
    return m * (kp // 4), fixed, len(keys), -(-m // BLOCK) * (kp // 4), block16


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", type=Path)
    args = ap.parse_args()
    print("| model | convs | mean abs w | channel quads fixed | fix entries / channel quad "
          "| 16-channel quads with a fix |")
    print("|---|---:|---:|---:|---:|---:|")
    for path in args.models:
        convs = conv_rows(path)
        tot = np.zeros(5, np.int64)
        for rows in convs:
            tot += shares(rows)
        mean = np.concatenate([np.abs(r.astype(np.int32)[r != 0]) for r in convs]).mean()
        print(f"| {path.name} | {len(convs)} | {mean:.1f} | {100 * tot[1] / tot[0]:.1f} % | {tot[2] / tot[0]:.3f} | "
              f"{100 * tot[4] / tot[3]:.1f} % |")


if __name__ == "__main__":
    main()
