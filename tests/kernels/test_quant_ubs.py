"""aot/kernels/quant_ubs.py: the AVX2 QDQ convs' weights for vpmaddubsw, checked by a model of the kernel's
arithmetic (quant_impl.h qconv_patches_ubs: vpmaddubsw's saturating pairs, 16-bit wrapping adds) on the patches that
drive each lane to its extremes, and by the two arrays adding up to the weights."""

from __future__ import annotations

import numpy as np
import pytest

from aot.kernels.quant_ubs import LANES, LIMIT, clip_lanes, ubs_sums, ubs_weights


def _sat16(v: np.ndarray) -> np.ndarray:
    return np.clip(v, -32768, 32767)


def _wrap16(v: np.ndarray) -> np.ndarray:
    return (v + 32768) % 65536 - 32768


def kernel_lane_sums(ubs_w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """What qubs_lanes's 16-bit lanes hold: words [..., 2 quads, 4 bytes] of weights times patch bytes x (same
    shape, 0..255): each quad's pairs by vpmaddubsw (saturating), the two quads' lanes added in 16 bits (wrapping)."""
    prod = ubs_w.astype(np.int64) * x
    pairs = _sat16(prod[..., 0::2] + prod[..., 1::2])  # [..., quad, pair]
    return _wrap16(pairs[..., 0, :] + pairs[..., 1, :])  # [..., lane A, lane B]


def extremes(words: np.ndarray) -> list[np.ndarray]:
    """The patches that take every lane to its largest and smallest sums: 255 under the positive weights (else
    0), and under the negative ones."""
    return [np.where(words > 0, 255, 0), np.where(words < 0, 255, 0), np.full(words.shape, 255)]


def exact_lane_sums(words: np.ndarray, x: np.ndarray) -> np.ndarray:
    prod = words.astype(np.int64) * x
    return np.stack([prod[..., :, [0, 1]].sum((-1, -2)), prod[..., :, [2, 3]].sum((-1, -2))], -1)


def weights(rng: np.random.Generator, m: int, kp: int) -> np.ndarray:
    """Weights heavy in large values of one sign (lanes past the limit) and -128s, with some small ones."""
    w = rng.integers(-128, 128, (m, kp))
    w[rng.random((m, kp)) < 0.2] = -128
    big = rng.random((m, kp)) < 0.3
    w[big] = rng.integers(100, 128, big.sum())
    w[rng.random((m, kp)) < 0.2] = rng.integers(-8, 8)
    return w.astype(np.int8)


@pytest.mark.parametrize("m, kp, group", [(10, 28, 1), (12, 56, 2), (64, 4, 1), (7, 132, 1), (36, 24, 3)])
def test_kernel_sums_exact_and_the_parts_add_up(m: int, kp: int, group: int):
    """Every 16-bit lane of the clipped weights exact on its extreme patches; every fix quad exact in one
    vpmaddubsw; clipped weights plus fixes are the weights."""
    w = weights(np.random.default_rng(m * kp), m, kp)
    ubs_w, ubs_fix = ubs_weights(w, group)
    words = ubs_w.view(np.int8).reshape(-1, 2, 4)  # [(block, g, c), quad, byte]
    for x in extremes(words):
        np.testing.assert_array_equal(kernel_lane_sums(words, x), exact_lane_sums(words, x))
    blocks = group * -(-(m // group) // 4)
    assert len(ubs_fix) >= blocks + 1 and ubs_fix[blocks] * 2 == len(ubs_fix) - blocks - 1
    fixes = ubs_fix[blocks + 1:].reshape(-1, 2)[:, 1].copy().view(np.int8).reshape(-1, 4).astype(np.int64)
    assert len(fixes) > 0
    for x in extremes(fixes):
        prod = fixes * x
        pairs = prod[:, 0::2] + prod[:, 1::2]
        np.testing.assert_array_equal(_sat16(pairs), pairs)
    np.testing.assert_array_equal(ubs_sums(ubs_w, ubs_fix, m, kp, group), w)


def test_clip_lanes_takes_the_largest_first():
    """A lane past the limit loses from its largest weights of that side only; lanes within keep every weight."""
    lanes = np.array([[100, 60, -3, 0], [127, 127, 127, 127], [-128, -128, 5, 90], [60, 60, -60, -60]])
    out = clip_lanes(lanes)
    np.testing.assert_array_equal(out, [[68, 60, -3, 0], [0, 0, 1, 127], [0, -128, 5, 90],
                                        [60, 60, -60, -60]])
    assert LANES == ((0, 1, 4, 5), (2, 3, 6, 7)) and LIMIT * 255 <= 32767
