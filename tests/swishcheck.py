"""The sweep both SiLU kernels are held to (aotc_swish_f32 in tests/kernels_c/test_fast_math.py, aotc_dnnl_swish in
tests/vendors/test_vendor_dnnl.py): a program `exe in.bin out.bin alpha n` that applies the kernel to the first n
floats of in.bin and writes all of them out, against x sigmoid(alpha x) in float64."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np


def check_swish(exe: Path, work: Path, max_ulp: float = 5.0) -> None:
    """Every 4093rd finite float and the edges (0, -0, -87.3's neighbours, NaN): within max_ulp, within
    1.1e-36 where the result is below 1e-30 (0 from alpha x < -87.3 on); a tail of n % 16 floats done and
    nothing past n touched; NaN in, NaN out; inf gives inf and -inf NaN (-inf * sigmoid(-inf))."""
    x = np.arange(0, 2**32, 4093, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x[np.isfinite(x)], np.float32([0.0, -0.0, 1e-30, -87.0, -88.0, 88.0, np.nan])])
    n = len(x) - 3  # the last 3 must come back untouched (and n % 16 != 0: the masked tail)
    assert n % 16
    for alpha in (1.0, 1.702):
        x.tofile(work / "in.bin")
        subprocess.run([str(exe), "in.bin", "out.bin", str(alpha), str(n)], cwd=work, check=True)
        y = np.fromfile(work / "out.bin", dtype=np.float32)
        np.testing.assert_array_equal(y[n:], x[n:])
        with np.errstate(over="ignore"):
            a = (np.float32(alpha) * x[:n]).astype(np.float64)  # alpha x rounded to float, as a float kernel has it
            ref = x[:n].astype(np.float64) / (1.0 + np.exp(-a))
        got = y[:n].astype(np.float64)
        tiny = np.abs(ref) < 1e-30
        assert np.abs(got - ref)[tiny].max() < 1.1e-36  # |x| e^-87.3 at most
        ulps = np.abs(got - ref)[~tiny] / np.spacing(np.abs(ref[~tiny]).astype(np.float32)).astype(np.float64)
        assert ulps.max() <= max_ulp, (alpha, ulps.max(), x[:n][~tiny][ulps.argmax()])
    np.float32([np.nan] * 17).tofile(work / "in.bin")
    subprocess.run([str(exe), "in.bin", "out.bin", "1", "17"], cwd=work, check=True)
    assert np.isnan(np.fromfile(work / "out.bin", dtype=np.float32)).all()
    # infinities: x sigmoid(x) is inf at inf and, as the op's Mul(X, Sigmoid(X)), -inf * 0 = NaN at -inf
    np.float32([np.inf, -np.inf] * 9).tofile(work / "in.bin")
    subprocess.run([str(exe), "in.bin", "out.bin", "1", "18"], cwd=work, check=True)
    y = np.fromfile(work / "out.bin", dtype=np.float32)
    assert (y[0::2] == np.inf).all() and np.isnan(y[1::2]).all(), y
