"""The AVX2 QDQ convs' weights for vpmaddubsw (quant_impl.h qconv_patches_ubs), made exact at compile time.

vpmaddubsw multiplies unsigned bytes (the patch: x + offset, 0..255) by signed ones and adds each pair into a
saturating 16-bit lane; the kernel adds two of them (quads 2 g and 2 g + 1) in 16 bits before one vpmaddwd with
ones, so each 16-bit lane holds 4 products: bytes 0, 1 of both quads (lane A) or bytes 2, 3 (lane B). That is exact
when the lane's positive weights sum to at most 128 and its negative ones to at least -128 (255 x 128 = 32640):
no pair saturates and the 16-bit sum cannot wrap. Weights past that are clipped, largest first, and what was taken
goes to a short list of quads (`fix`) that the kernel adds by one vpmaddubsw each (pairs within +-128: exact).
"""

from __future__ import annotations

import numpy as np

LIMIT = 128  # a lane's sum of positive weights, and of negative ones' magnitudes, at most (255 x 128 <= 32767)
LANES = ((0, 1, 4, 5), (2, 3, 6, 7))  # the bytes of a pair of quads that share a 16-bit lane


def clip_lanes(lanes: np.ndarray) -> np.ndarray:
    """lanes [..., 4]: each lane's weights with its positive ones cut to sum at most LIMIT, and its negative ones
    to at least -LIMIT, the largest first (few weights changed, so few quads to fix)."""
    out = lanes.astype(np.int32)
    for sign in (1, -1):
        mag = np.maximum(sign * out, 0)
        excess = np.maximum(mag.sum(-1) - LIMIT, 0)
        order = np.argsort(-mag, axis=-1, kind="stable")
        for i in range(lanes.shape[-1]):
            at = order[..., i:i + 1]
            val = np.take_along_axis(mag, at, -1)[..., 0]
            take = np.minimum(excess, val)
            np.put_along_axis(mag, at, (val - take)[..., None], -1)
            excess = excess - take
        out = np.where(sign * out > 0, sign * mag, out)
    return out


def pair_safe(quad: np.ndarray) -> np.ndarray:
    """The part of a quad (4 ints) that one vpmaddubsw sums exactly: each pair of the same sign within LIMIT."""
    part = quad.copy()
    for i in (0, 2):
        a, b = int(part[i]), int(part[i + 1])
        if a * b > 0 and abs(a) + abs(b) > LIMIT:
            s = 1 if a > 0 else -1
            part[i] = s * min(abs(a), LIMIT)
            part[i + 1] = s * (LIMIT - abs(part[i]))
    return part


def _words(quads: np.ndarray) -> np.ndarray:
    """int8 quads [..., 4] as the int32 words the kernel broadcasts."""
    return np.ascontiguousarray(quads.astype(np.int8)).view(np.int32)[..., 0]


def ubs_weights(w: np.ndarray, group: int) -> tuple[np.ndarray, np.ndarray]:
    """w [out_c, kp] int8 (kp whole quads) -> (ubs_w, ubs_fix) as aotc_qconv_params has them: the clipped weights,
    per group, block of 4 channels and pair of quads g, words [g][c][h]; and the block offsets then entries
    (c | q << 2, quad word) of what the clipping took."""
    m, kp = w.shape
    mg = m // group
    mg4, ng = -(-mg // 4), -(-kp // 8)
    full = np.zeros((group, mg4 * 4, ng * 8), np.int32)
    full[:, :mg, :kp] = w.reshape(group, mg, kp)
    grouped = full.reshape(group, mg4 * 4, ng, 8)
    clipped = grouped.copy()
    for lane in LANES:
        clipped[..., list(lane)] = clip_lanes(grouped[..., list(lane)])
    rest = (grouped - clipped).reshape(group, mg4, 4, ng * 2, 4)
    ubs_w = _words(clipped.reshape(group, mg4, 4, ng, 2, 4).transpose(0, 1, 3, 2, 4, 5)).reshape(-1)
    offsets, entries = [0], []
    for g in range(group):
        for b in range(mg4):
            for c, q in zip(*np.nonzero(rest[g, b].any(-1)), strict=True):
                quad = rest[g, b, c, q].copy()
                while quad.any():
                    part = pair_safe(quad)
                    entries += [int(c) | int(q) << 2, int(_words(part))]
                    quad -= part
            offsets.append(len(entries) // 2)
    return ubs_w.astype(np.int32), np.array(offsets + entries, np.int32)


def ubs_sums(ubs_w: np.ndarray, ubs_fix: np.ndarray, m: int, kp: int, group: int) -> np.ndarray:
    """The weights [out_c, kp] that ubs_weights' two arrays add up to (their test: w itself)."""
    mg = m // group
    mg4, ng = -(-mg // 4), -(-kp // 8)
    quads = ubs_w.view(np.int8).reshape(group, mg4, ng, 4, 2, 4).transpose(0, 1, 3, 2, 4, 5).astype(np.int32)
    quads = quads.reshape(group, mg4, 4, ng * 2, 4).copy()
    blocks = group * mg4
    for blk in range(blocks):
        for e in range(int(ubs_fix[blk]), int(ubs_fix[blk + 1])):
            at = blocks + 1 + 2 * e
            key, word = int(ubs_fix[at]), ubs_fix[at + 1:at + 2]
            quads[blk // mg4, blk % mg4, key & 3, key >> 2] += word.view(np.int8).astype(np.int32)
    return quads.reshape(group, mg4 * 4, ng * 8)[:, :mg, :kp].reshape(m, kp)
