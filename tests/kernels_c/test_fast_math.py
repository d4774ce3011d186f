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
# e^x (the scalar's bits; Softmax's, x <= 0) and GELU's erf on AVX-512F (fast_math.h)
X86_BOUNDS = {"exp_flush16": (1.0, 1.3e-38), "softmax_exp16": (1.0, 1.3e-38), "erf16": (6.5, 0.0)}
AVX2_BOUNDS = {"softmax_exp8": (1.0, 1.3e-38)}  # the same without AVX-512 (-march=x86-64-v3)
BUILDS = {
    "gcc-native": ["gcc", "-O3", "-march=native"],
    "gcc-O2": ["gcc", "-O2"],
    "gcc-avx2": ["gcc", "-O3", "-march=x86-64-v3"],  # AVX2 without masks: aotc_fm_pick's bit selects
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
    avx2 = "-march=x86-64-v3" in cmd  # Softmax's e^x on AVX2 without AVX-512 (fast_math.h aotc_softmax_exp8)
    # the 16-wide e^x does the scalar aotc_exp_flush's operations: its bits, where gcc contracts nothing
    assert seen.pop("exp_flush16_bits", None) == ([0.0] if x86 and cmd[0] == "gcc" else None)
    assert set(seen) == set(BOUNDS) | (set(X86_BOUNDS) if x86 else set()) | (set(AVX2_BOUNDS) if avx2 else set())
    for name, (max_ulp, arg, max_abs) in seen.items():
        ulp_bound, abs_bound = {**BOUNDS, **X86_BOUNDS, **AVX2_BOUNDS}[name]
        assert max_ulp <= ulp_bound, f"{name}: {max_ulp:.3f} ulp at {arg!r} (bound {ulp_bound})"
        assert max_abs <= abs_bound, f"{name}: absolute error {max_abs:.3g} outside its ulp range"


VECTOR_LOOPS = r"""
#include <stddef.h>
#include "fast_math.h"
void l_exp(size_t n, const float *x, float *y) { size_t i; for (i = 0; i < n; ++i) y[i] = aotc_exp_flush(x[i]); }
void l_expm1(size_t n, const float *x, float *y) { size_t i; for (i = 0; i < n; ++i) y[i] = aotc_expm1_poly(x[i]); }
void l_silu(size_t n, const float *x, float *y, float a) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = x[i] * aotc_sigmoid_poly(a * x[i]);
}
void l_tanh(size_t n, const float *x, float *y) { size_t i; for (i = 0; i < n; ++i) y[i] = aotc_tanh_poly(x[i]); }
void l_erf(size_t n, const float *x, float *y) { size_t i; for (i = 0; i < n; ++i) y[i] = aotc_erf_poly(x[i]); }
"""


@pytest.mark.parametrize("cc", [("gcc", "-march=x86-64-v3"), ("gcc", "-march=x86-64"), ("aarch64-linux-gnu-gcc",)])
def test_fast_math_loops_vectorise_without_masks(cc, tmp_path):
    """A loop over each function vectorises where the vectors have no masks (SSE2, AVX2, NEON), as the
    activations' and Softmax's loops need on a host without AVX-512 and on Arm Linux: with plain selects gcc
    12 vectorised none of the five there (a branch with a float operation under it, from its sinking and
    jump threading) and EfficientNet-B0's SiLUs ran scalar."""
    require_tool(cc[0])
    src = tmp_path / "loops.c"
    text = VECTOR_LOOPS.lstrip("\n")
    src.write_text(text)
    r = subprocess.run([*cc, "-O3", "-std=c99", "-Wall", "-Wextra", "-Werror", *kernel_include_flags(), "-c",
                        str(src), "-o", str(tmp_path / "loops.o"), "-fopt-info-vec-optimized"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    done = {int(line.split(":")[1]) for line in r.stderr.splitlines() if "loop vectorized" in line}
    loops = {i + 1: line.strip() for i, line in enumerate(text.splitlines()) if "for (i" in line}
    assert len(loops) == 5 and not [loop for at, loop in loops.items() if at not in done], r.stderr[-2000:]


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


# path: (-march, its -D flags, the instruction only that path's swish has)
SWISH_PATHS = {
    "avx512": ("native", [], "vscalefps"),
    "plain": ("native", ["-DAOTC_NO_X86_SWISH", "-DAOTC_NO_X86_GELU"], "vscalefps"),  # both VSCALEFPS
    "avx2": ("x86-64-v3", [], "vmaskmovps"),  # fast_math.h's AVX2 loop (aotc_swish_avx2): its tail by VMASKMOVPS
    "avx2-plain": ("x86-64-v3", ["-DAOTC_NO_X86_SWISH"], "vmaskmovps"),  # the plain loop gcc vectorises (no mask)
}


@pytest.mark.parametrize("path", sorted(SWISH_PATHS))
def test_swish_kernel_accuracy(tmp_path, path):
    """aotc_swish_f32 (SiLU, Sigmoid -> Mul fused): fast_math.h's AVX-512 loop (aotc_swish_avx512), its AVX2
    loop (aotc_swish_avx2, built for x86-64-v3: a host without AVX-512) and the plain loops (-DAOTC_NO_X86_SWISH),
    built -O3, against x sigmoid(alpha x) in float64 over every 4093rd finite float: within 5 ulp, within
    1.1e-36 where the result is below 1e-30; a tail of n % 16 floats is done and nothing past n is touched
    (tests/swishcheck.py)."""
    require_tool("gcc")
    march, defines, marker = SWISH_PATHS[path]
    flags = Path("/proc/cpuinfo").read_text()
    if ("avx512f" if path == "avx512" else "avx2" if march != "native" else "") not in flags:
        pytest.skip("the path's instructions are not on this CPU")
    (tmp_path / "main.c").write_text(SWISH_MAIN)
    exe = tmp_path / "swish"
    subprocess.run(["gcc", "-std=c99", "-O3", f"-march={march}", "-Wall", "-Wextra", "-Werror", *defines,
                    str(tmp_path / "main.c"),
                    str(kernel_file("elementwise.c")), *kernel_include_flags(), "-lm",
                    "-o", str(exe)], check=True)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True).stdout
    body = "".join(f for f in dis.split("\n\n") if "swish" in f.split(">:")[0])  # the swish functions' own code
    assert (marker in body) == (not defines)  # the path under test is the one built
    check_swish(exe, tmp_path)


SWISH_WRAP = r"""
#include <stddef.h>
#include "fast_math.h"
/* -DNAME: aotc_swish_avx512 built -march=native, aotc_swish_avx2 built -march=x86-64-v3 */
void NAME(const float *x, float *y, size_t n, float alpha) {
#if AOTC_SWISH_X86
    aotc_swish_avx512(x, y, n, alpha);
#else
    aotc_swish_avx2(x, y, n, alpha);
#endif
}
"""

SWISH_PAIR_MAIN = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void swish16(const float *x, float *y, size_t n, float alpha);
void swish8(const float *x, float *y, size_t n, float alpha);
/* argv: alpha. Every 4093rd bit pattern (infinities and NaNs among them) and the edges; prints how many
 * results differ in their bits (any NaN equals any NaN) */
int main(int argc, char **argv) {
    static float x[1100000], a[1100000], b[1100000];
    static const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 86.0f, 87.3f, 88.0f, -88.7f,
                                  -88.72f, -88.73f, -89.5f, -89.6f, -100.0f, -101.0f, 1e-30f, -1e-45f};
    const float alpha = (float)atof(argv[1]);
    size_t n = 0, k, differ = 0;
    uint64_t u;
    for (u = 0; u <= 0xFFFFFFFFull; u += 4093) {
        const uint32_t w = (uint32_t)u;
        memcpy(&x[n++], &w, sizeof w);
    }
    for (k = 0; k < sizeof edges / sizeof edges[0]; ++k) x[n++] = edges[k];
    swish16(x, a, n, alpha);
    swish8(x, b, n, alpha);
    for (k = 0; k < n; ++k)
        differ += isnan(a[k]) || isnan(b[k]) ? isnan(a[k]) != isnan(b[k]) : memcmp(&a[k], &b[k], sizeof a[k]) != 0;
    printf("%zu\n", differ);
    return 0;
}
"""


@pytest.mark.full  # (two builds and a sweep of a million floats: about 2 s)
def test_swish_avx2_bits_equal_avx512(tmp_path):
    """aotc_swish8 (x86-64-v3) computes aotc_swish16's operations without VSCALEFPS (issue 64): the same bits on
    every 4093rd float pattern and the special values (0, -0, inf, -inf, NaN, either side of both clamps and of
    -88.7 where e^-t overflows), for SiLU's alpha 1 and two others."""
    require_tool("gcc")
    if "avx512f" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("aotc_swish16 needs AVX-512F on this CPU")
    (tmp_path / "wrap.c").write_text(SWISH_WRAP)
    (tmp_path / "main.c").write_text(SWISH_PAIR_MAIN)
    objs = []
    for name, march in (("swish16", "native"), ("swish8", "x86-64-v3")):
        objs.append(tmp_path / f"{name}.o")
        subprocess.run(["gcc", "-std=c99", "-O3", f"-march={march}", "-Wall", "-Wextra", "-Werror", f"-DNAME={name}",
                        *kernel_include_flags(), "-c", str(tmp_path / "wrap.c"), "-o", str(objs[-1])], check=True)
    exe = tmp_path / "pair"
    subprocess.run(["gcc", "-std=c99", "-O2", str(tmp_path / "main.c"), *map(str, objs), "-lm", "-o", str(exe)],
                   check=True)
    for alpha in ("1", "1.702", "0.5"):
        out = subprocess.run([str(exe), alpha], capture_output=True, text=True, check=True).stdout
        assert out.split() == ["0"], f"alpha {alpha}: {out.strip()} results differ from aotc_swish16's bits"


GELU_MAIN = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void GELU(size_t n, const float *x, float *y);
/* GELU (-DGELU=the kernel, -DREF=its formula) of every 4093rd float bit pattern with |v| <= 30 (and 0, +-inf,
 * NaN), in calls of n = 1 .. 40 floats (every tail of 16), each into a buffer with canaries past n. Prints
 * the largest error against REF(v) in double, as a multiple of the bound ULPS ulp(ref) + ABS |v|, then
 * whether the canaries held and NaN gave NaN. */
int main(void) {
    static float x[1100000], y[64];
    size_t n = 0, at = 0, k, len = 1;
    uint64_t u;
    double worst = 0.0;
    int canary = 1, nan_ok;
    for (u = 0; u <= 0xFFFFFFFFull; u += 4093) {
        float v;
        uint32_t b = (uint32_t)u;
        memcpy(&v, &b, sizeof v);
        if (fabsf(v) <= 30.0f) x[n++] = v;
    }
    x[n++] = 0.0f, x[n++] = INFINITY, x[n++] = -INFINITY;
    while (at < n) {
        const size_t m = len < n - at ? len : n - at;
        for (k = 0; k < 64; ++k) y[k] = 12345.0f;
        GELU(m, x + at, y);
        for (k = m; k < 64; ++k) canary &= y[k] == 12345.0f;
        for (k = 0; k < m; ++k) {
            const double v = x[at + k], ref = REF(v);
            if (isinf(v)) {
                canary &= v > 0 ? y[k] == INFINITY : isnan(y[k]); /* -inf * 0, as the plain formula */
                continue;
            }
            {
                int e;
                frexp(fabs(ref) < 1.17549435e-38 ? 1.17549435e-38 : ref, &e);
                const double bound = ULPS * ldexp(1.0, e - 24) + ABS * fabs(v);
                const double err = fabs((double)y[k] - ref) / bound;
                if (err > worst) worst = err;
            }
        }
        at += m;
        len = len % 40 + 1;
    }
    {
        const float nan_in[2] = {NAN, -NAN};
        float out[2];
        GELU(2, nan_in, out);
        nan_ok = isnan(out[0]) && isnan(out[1]);
    }
    printf("%.4f %d %d\n", worst, canary, nan_ok);
    return 0;
}
"""


# kernel -> (its formula in double, the bound's ulps and its factor of |v|, an instruction only its AVX-512 loop has)
GELUS = {
    "aotc_gelu_f32": ("0.5 * v * (1.0 + erf(v / sqrt(2.0)))", 4.0, 2.5e-7, "vrcp14ps"),
    "aotc_gelu_tanh_f32": ("0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)))",
                           8.0, 1e-7, "vscalefps"),
}


@pytest.mark.full  # (a build of elementwise.c and a sweep each: 2 to 7 s)
@pytest.mark.parametrize("path", ["avx512", "plain", "avx2", "avx2-plain"])
@pytest.mark.parametrize("kernel", sorted(GELUS))
def test_gelu_kernel_accuracy(tmp_path, kernel, path):
    """aotc_gelu_f32 and aotc_gelu_tanh_f32: fast_math.h's AVX-512 loops (aotc_gelu_avx512, aotc_gelu_tanh_avx512,
    issue 64), its AVX2 loops (aotc_gelu_avx2, aotc_gelu_tanh_avx2: built -march=x86-64-v3, a host without AVX-512)
    and the plain loops (-DAOTC_NO_X86_GELU), built -O3 (-march=native but for avx2), against GELU in float64 over
    every 4093rd float with |v| <= 30. erf form: within 4 ulp plus 2.5e-7 |v| (half the erf's absolute error,
    Abramowitz-Stegun's 1.5e-7 and its polynomial's rounding near 0 on the AVX-512 path, which takes no series
    there, times v); tanh form: 8 ulp plus 1e-7 |v| (the sigmoid of a rounded argument). Calls of 1 to 40
    floats, so every tail under the mask, and nothing past n written; +inf gives +inf, NaN gives NaN."""
    require_tool("gcc")
    flags = Path("/proc/cpuinfo").read_text()
    if ("avx512f" if path == "avx512" else "avx2" if path.startswith("avx2") else "") not in flags:
        pytest.skip("the path's instructions are not on this CPU")
    ref, ulps, per_v, marker = GELUS[kernel]
    marker = "vmaskmovps" if path.startswith("avx2") else marker  # (AOTC_MAP8's tail; the plain loops have none)
    (tmp_path / "main.c").write_text(GELU_MAIN)
    exe = tmp_path / "gelu"
    subprocess.run(["gcc", "-std=c99", "-O3", "-march=x86-64-v3" if path.startswith("avx2") else "-march=native",
                    "-Wall", "-Wextra", "-Werror",
                    f"-DGELU={kernel}", f"-DREF(v)=({ref})", f"-DULPS={ulps}", f"-DABS={per_v}",
                    *(["-DAOTC_NO_X86_GELU"] if path.endswith("plain") else []), str(tmp_path / "main.c"),
                    str(kernel_file("elementwise.c")), *kernel_include_flags(), "-lm",
                    "-o", str(exe)], check=True)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True).stdout
    body = dis.split(f"<{kernel}>:")[1].split("\n\n")[0]  # the kernel's own instructions (swish's share fast_math.h)
    assert (marker in body) == (path in ("avx512", "avx2"))  # the path under test is the one built
    worst, canary, nan_ok = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert float(worst) <= 1.0, f"error {worst} x the bound"
    assert canary == "1", "a tail wrote past n, or an infinity came out wrong"
    assert nan_ok == "1", "NaN in must give NaN out"
