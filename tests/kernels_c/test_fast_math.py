"""fast_math.h's accuracy against libm (double precision), as its header states it: the largest error
in ulps over a sweep of the float range (every 4093rd bit pattern, both signs, about a million
values per function), and the absolute error where the bound is absolute (below -87.3). Built as a
bundle builds it (-O3 -march=native: the vectorised code, gcc and clang), at -O2 on the baseline
ISA, and at -O1 under UndefinedBehaviorSanitizer with float-cast-overflow (NaN and huge arguments go
through the exponent-bit arithmetic without a float to int conversion). tests/kernels_c/test_fast_math.c
sweeps every float with argument 1 (about 7 minutes)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import require_tool
from swishcheck import check_swish

from aot.paths import kernel_file, kernel_include_flags

SOURCE = Path(__file__).resolve().parent / "test_fast_math.c"
STEP = 4093
# name: (max ulp inside its range, max absolute error outside it)
BOUNDS = {
    "exp": (1.0, 1.3e-38),
    "exp_flush": (1.0, 1.3e-38),
    "expm1": (1.5, 0.0),
    "sigmoid": (3.0, 1.3e-38),
    "tanh": (2.6, 0.0),
    "erf": (6.5, 0.0),
}
X86_BOUNDS = {"exp_flush16": (1.0, 1.3e-38)}  # Softmax's e^x on AVX-512F (fast_math.h, aotc_softmax_avx512)
BUILDS = {
    "gcc-native": ["gcc", "-O3", "-march=native"],
    "gcc-O2": ["gcc", "-O2"],
    "gcc-ubsan": ["gcc", "-O1", "-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all"],
    "clang-native": ["clang", "-O3", "-march=native"],
}


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_fast_math_accuracy(build, tmp_path):
    cmd = BUILDS[build]
    require_tool(cmd[0])
    exe = tmp_path / "fast_math"
    r = subprocess.run([*cmd, "-std=c99", "-Wall", "-Wextra", "-Werror", *kernel_include_flags(),
                        str(SOURCE), "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    r = subprocess.run([str(exe), str(STEP)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    seen = {}
    for line in r.stdout.splitlines():
        name, *vals = line.split()
        seen[name] = [float(v) for v in vals]
    assert seen.pop("nan") == [1.0], "NaN in must give NaN out"
    x86 = "-march=native" in cmd and "avx512f" in Path("/proc/cpuinfo").read_text()
    # the 16-wide e^x does the scalar aotc_exp_flush's operations: its bits, where gcc contracts nothing
    assert seen.pop("exp_flush16_bits", None) == ([0.0] if x86 and cmd[0] == "gcc" else None)
    assert set(seen) == set(BOUNDS) | (set(X86_BOUNDS) if x86 else set())
    for name, (max_ulp, arg, max_abs) in seen.items():
        ulp_bound, abs_bound = {**BOUNDS, **X86_BOUNDS}[name]
        assert max_ulp <= ulp_bound, f"{name}: {max_ulp:.3f} ulp at {arg!r} (bound {ulp_bound})"
        assert max_abs <= abs_bound, f"{name}: absolute error {max_abs:.3g} outside its ulp range"


SWISH_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void aotc_swish_f32(size_t n, const float *x, float *y, float alpha);
/* argv: in.bin out.bin alpha n: swish of the first n floats of in.bin into a copy, all of it written out */
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    size_t total, n = (size_t)atol(argv[4]);
    float *x, *y;
    if (argc != 5 || f == NULL) return 2;
    fseek(f, 0, SEEK_END);
    total = (size_t)ftell(f) / sizeof(float);
    fseek(f, 0, SEEK_SET);
    x = malloc(total * sizeof(float)), y = malloc(total * sizeof(float));
    if (x == NULL || y == NULL || fread(x, sizeof(float), total, f) != total) return 3;
    fclose(f);
    for (size_t i = 0; i < total; ++i) y[i] = x[i];
    aotc_swish_f32(n, x, y, (float)atof(argv[3]));
    f = fopen(argv[2], "wb");
    if (f == NULL || fwrite(y, sizeof(float), total, f) != total) return 4;
    fclose(f);
    return 0;
}
"""


@pytest.mark.parametrize("path", ["avx512", "plain"])
def test_swish_kernel_accuracy(tmp_path, path):
    """aotc_swish_f32 (SiLU, Sigmoid -> Mul fused): fast_math.h's AVX-512 loop (aotc_swish_avx512) and the
    plain loop (-DAOTC_NO_X86_SWISH), built -O3 -march=native, against x sigmoid(alpha x) in float64 over
    every 4093rd finite float: within 5 ulp, within 1.1e-36 where the result is below 1e-30; a tail of
    n % 16 floats is done and nothing past n is touched (tests/swishcheck.py)."""
    require_tool("gcc")
    if path == "avx512" and "avx512f" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("no AVX-512 on this CPU")
    (tmp_path / "main.c").write_text(SWISH_MAIN)
    exe = tmp_path / "swish"
    subprocess.run(["gcc", "-std=c99", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror",
                    *(["-DAOTC_NO_X86_SWISH"] if path == "plain" else []), str(tmp_path / "main.c"),
                    str(kernel_file("elementwise.c")), *kernel_include_flags(), "-lm",
                    "-o", str(exe)], check=True)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True).stdout
    assert ("vscalefps" in dis) == (path == "avx512")  # the path under test is the one built
    check_swish(exe, tmp_path)
