"""The fused residual ADD's linear form (aot/qmath.py residual_linear, which the packed CONV_2D takes: issue 64):
exact against LiteRT's ADD arithmetic on every pair where it is given, refused where the ADD rounds in a way no
floor of a linear form does."""
from __future__ import annotations

import numpy as np
import pytest

from aot.frontend.tflite.quant import add_multipliers
from aot.qmath import add_s8_exact, residual_linear


def _add_loop(x1: int, x2: int, zeros: tuple[int, int, int], m: tuple[int, ...]) -> int:
    """add_one of tflite_int8_internal.h in Python integers (high_mul's floor, divide_by_pot's ties away)."""
    def requant(acc: int, mult: int, shift: int) -> int:
        high = (acc * mult + (1 << 30)) >> 31
        right = -shift
        mask = (1 << right) - 1
        return (high >> right) + ((high & mask) > (mask >> 1) + (high < 0))
    a = requant((x1 - zeros[0]) << 20, m[0], m[1])
    b = requant((x2 - zeros[1]) << 20, m[2], m[3])
    return requant(a + b, m[4], m[5]) + zeros[2]


# (scales of the conv's output, the residual and the ADD's output; zero points), as ResNet-50's and MobileNetV2's
CASES = [((0.31, 0.17, 0.21), (-25, -1, -128), (-128, 127), (-128, 127), False),
         ((0.052, 0.11, 0.093), (-128, -35, -128), (-128, 127), (-128, 127), False),
         ((0.2, 0.2, 0.27), (3, -7, 5), (-60, 90), (-128, 127), True),
         ((0.04, 0.07, 0.05), (11, 0, -128), (-128, 127), (-128, 40), True)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_linear_form_is_the_add_on_every_pair(case):
    (sv, se, so), (zv, ze, zo), y_range, conv_range, conv_x1 = CASES[case]
    s1, s2 = (sv, se) if conv_x1 else (se, sv)
    z1, z2 = (zv, ze) if conv_x1 else (ze, zv)
    m = add_multipliers(s1, s2, so)
    a, b, c, sh = residual_linear((z1, z2, zo), m, y_range, conv_range, conv_x1)
    assert sh > 0, "no form found"
    v = np.arange(conv_range[0], conv_range[1] + 1)[:, None]
    e = np.arange(-128, 128)[None, :]
    form = np.clip((a * v + b * e + c) >> sh, *y_range)
    x1, x2 = (v, e) if conv_x1 else (e, v)
    exact = np.clip(add_s8_exact(x1, x2, (z1, z2, zo), m), *y_range)
    assert np.array_equal(form, exact)
    for i, j in [(0, 0), (5, 200), (-1, -1), (len(v) // 2, 128)]:  # add_s8_exact against the C loop's arithmetic
        p, q = (int(v[i, 0]), int(e[0, j])) if conv_x1 else (int(e[0, j]), int(v[i, 0]))
        assert add_s8_exact(np.int64(p), np.int64(q), (z1, z2, zo), m) == _add_loop(p, q, (z1, z2, zo), m)
    assert np.abs(a * v + b * e + c).max() < 2 ** 31


def test_no_form_where_the_add_rounds_ties_away_from_zero():
    """The residual at a quarter of the conv's and the output's scale: the sum's halves, d1 + d2 / 4 at d2 = 2 mod
    4, are ties all over the range, rounded up where the sum is above zero and down where below, which no floor((a v
    + b e + c) / 2^sh) does (near zero one can: a slope a step past a half): refused, (0, 0, 0, 0)."""
    m = add_multipliers(1.0, 0.25, 1.0)
    assert residual_linear((0, 0, 0), m, (-128, 127), (-128, 127), True) == (0, 0, 0, 0)
