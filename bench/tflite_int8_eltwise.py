"""Issue 64: TFLite's int8 MUL / ADD / SUB kernels (tflite_int8_elementwise.c) on EfficientNet-B0's shapes, this
tree's kernels against another revision's (default: main), called directly from a small C driver.

    python bench/tflite_int8_eltwise.py [--before REV] [--samples 15] [--no-host] [--m4] [CASE ...]

Host: the driver and tflite_int8_elementwise.c built as a host bundle builds them (gcc -O3 -march=native), each
kernel timed over `--samples` samples of enough calls for about 20 ms each; the median microseconds a call.
--m4: the same driver for the Cortex-M4 (mps2-an386, the tests' startup code and linker script) at -O3, -O2 and at
-Os, run under qemu-system-arm with aotc's instruction-counting plugin (runtime_c/tools/qemu_insn_count.c, its
Cortex-M4 cycle estimate): (count of 3 calls - count of 1) / 2 is one call; the ADD of same-shape inputs takes
the plan's scratch there as a bundle's does. The other revision's kernels come from `git archive REV
runtime_c/kernels`, so both builds see their own headers. Inputs are random bytes, the multipliers those of
plausible scales (aot/frontend/tflite/quant.py's rounding).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from aot.bench import insn_count_plugin  # noqa: E402

# name: (op, y, x1, x2): EfficientNet-B0's SiLU (x * sigmoid(x), same shapes), squeeze-excite ([N,H,W,C] by
# [N,1,1,C]) and residual ADD, plus the per-channel and scalar broadcasts
CASES = {
    "mul_se_112x32": ("mul", [1, 112, 112, 32], [1, 112, 112, 32], [1, 1, 1, 32]),
    "mul_same_56x144": ("mul", [1, 56, 56, 144], [1, 56, 56, 144], [1, 56, 56, 144]),
    "mul_se_28x240": ("mul", [1, 28, 28, 240], [1, 28, 28, 240], [1, 1, 1, 240]),
    "mul_chan_56x144": ("mul", [1, 56, 56, 144], [1, 56, 56, 144], [1, 1, 1, 144]),
    "mul_scalar_56x144": ("mul", [1, 56, 56, 144], [1, 56, 56, 144], [1, 1, 1, 1]),
    "mul_same_7x1152": ("mul", [1, 7, 7, 1152], [1, 7, 7, 1152], [1, 7, 7, 1152]),
    "add_same_28x40": ("add", [1, 28, 28, 40], [1, 28, 28, 40], [1, 28, 28, 40]),
    "add_same_56x24": ("add", [1, 56, 56, 24], [1, 56, 56, 24], [1, 56, 56, 24]),
    "add_chan_28x240": ("add", [1, 28, 28, 240], [1, 28, 28, 240], [1, 1, 1, 240]),
    "sub_scalar_56x24": ("sub", [1, 56, 56, 24], [1, 56, 56, 24], [1, 1, 1, 1]),
}

DRIVER = r"""
/* issue 64's benchmark driver (bench/tflite_int8_eltwise.py): one kernel call on given shapes, timed (host) or
 * repeated for an instruction count (Cortex-M) */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */
#include "aotc_tflite_int8.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(__arm__)
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif

static void multiplier(double real, int32_t *m, int32_t *shift) {
    int e;
    const double f = frexp(real, &e);
    int64_t q = (int64_t)floor(f * 2147483648.0 + 0.5);
    if (q == ((int64_t)1 << 31)) q /= 2, ++e;
    *m = (int32_t)q, *shift = e;
}

/* an input's element steps along y's 6 axes, 0 where it is broadcast (aot/kernels/tflite_int8.py's _steps) */
static int64_t steps(const int32_t *x, const int32_t *dims, int32_t *st) {
    int64_t stride = 1;
    for (int d = 5; d >= 0; --d) st[d] = x[d] == dims[d] && x[d] != 1 ? (int32_t)stride : 0, stride *= x[d];
    return stride;
}

static void call(const char *op, const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y,
                 uint32_t *scratch) {
    if (op[0] == 'm') aotc_tfl_mul_s8(p, x1, x2, y);
    else aotc_tfl_add_s8(p, x1, x2, y, scratch);
}

/* the 4 dims of a shape written d0xd1xd2xd3 (no commas: they separate qemu's options) into the last 4 of dims */
static void shape(const char *s, int32_t *dims) {
    for (int d = 2; d < 6; ++d) dims[d] = (int32_t)strtol(s, (char **)&s, 10), s += *s == 'x';
}

/* argv: op, y's shape, x1's, x2's, then samples and calls a sample (host) or calls (Cortex-M); a board's
 * semihosting command line has 8 words at most */
int main(int argc, char **argv) {
    aotc_tfl_binary_params p;
    int32_t y[6] = {1, 1, 1, 1, 1, 1}, a[6] = {1, 1, 1, 1, 1, 1}, b[6] = {1, 1, 1, 1, 1, 1};
    int64_t n1, n2, i;
    int8_t *x1, *x2, *out;
    uint32_t *scratch = NULL;
    const char *op;
    unsigned sum = 0;
    if (argc < 7) return 2;
    op = argv[1];
    shape(argv[2], y), shape(argv[3], a), shape(argv[4], b);
    memset(&p, 0, sizeof p);
    memcpy(p.dims, y, sizeof y);
    n1 = steps(a, y, p.st1), n2 = steps(b, y, p.st2);
    p.count = (int64_t)y[2] * y[3] * y[4] * y[5];
    p.broadcast = n1 != p.count || n2 != p.count;
    p.x1_zero = -3, p.x2_zero = op[0] == 'm' ? -128 : 5, p.y_zero = -7, p.y_min = -128, p.y_max = 127;
    if (op[0] == 'm') { /* x times sigmoid(x): scales 0.05 and 1/256, out 0.03 */
        multiplier(0.05 / 256.0 / 0.03, &p.mult, &p.shift);
    } else { /* ADD / SUB: scales 0.05, 0.06, out 0.08; each input to twice the larger after 2^20 */
        const double s1 = 0.05, s2 = 0.06, so = 0.08, twice = 2.0 * (s1 > s2 ? s1 : s2);
        multiplier(s1 / twice, &p.m1, &p.s1), multiplier(s2 / twice, &p.m2, &p.s2);
        multiplier(twice / (1048576.0 * so), &p.mult, &p.shift);
        p.subtract = op[0] == 's';
    }
    x1 = (int8_t *)malloc((size_t)n1), x2 = (int8_t *)malloc((size_t)n2), out = (int8_t *)malloc((size_t)p.count);
    if (x1 == NULL || x2 == NULL || out == NULL) return 3;
    srand(1);
    for (i = 0; i < n1; ++i) x1[i] = (int8_t)(rand() >> 4);
    for (i = 0; i < n2; ++i) x2[i] = (int8_t)(rand() >> 4);
#if defined(__ARM_FEATURE_DSP)
    if (op[0] != 'm' && aotc_tfl_add_s8_dsp_scratch_bytes(&p) > 0) /* the plan's scratch, as a bundle's */
        scratch = (uint32_t *)malloc((size_t)aotc_tfl_add_s8_dsp_scratch_bytes(&p));
#endif
#if defined(__arm__)
    {
        const int calls = atoi(argv[6]);
        for (int k = 0; k < calls; ++k) call(op, &p, x1, x2, out, scratch);
    }
#else
    {
        const int samples = atoi(argv[5]), calls = atoi(argv[6]);
        double *t = (double *)malloc(sizeof(double) * (size_t)samples);
        call(op, &p, x1, x2, out, scratch); /* warm */
        for (int s = 0; s < samples; ++s) {
            const double t0 = now();
            for (int k = 0; k < calls; ++k) call(op, &p, x1, x2, out, scratch);
            t[s] = (now() - t0) / calls;
        }
        qsort(t, (size_t)samples, sizeof(double), cmp);
        printf("median_us %.3f\n", 1e6 * t[samples / 2]);
        free(t);
    }
#endif
    for (i = 0; i < p.count; ++i) sum = sum * 31u + (uint8_t)out[i];
    printf("checksum %u\n", sum);
    free(x1), free(x2), free(out), free(scratch);
    return 0;
}
"""

M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def kernels_tree(rev: str | None, work: Path) -> Path:
    """runtime_c/kernels of this tree (rev None) or of git revision rev, extracted under work."""
    if rev is None:
        return ROOT / "runtime_c" / "kernels"
    raw = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev, "runtime_c/kernels"],
                         capture_output=True, check=True).stdout
    dest = work / f"kernels-{re.sub(r'[^A-Za-z0-9]', '_', rev)}"
    with tarfile.open(fileobj=BytesIO(raw)) as tar:
        tar.extractall(dest)
    return dest / "runtime_c" / "kernels"


def build(kernels: Path, work: Path, tag: str, cc: str, flags: list[str], link: list[str] = ()) -> Path:
    """The driver with kernels' tflite_int8_elementwise.c, every folder of kernels on the include path."""
    driver = work / "eltwise_driver.c"
    driver.write_text(DRIVER)
    incs = [f"-I{d}" for d in sorted(p for p in kernels.iterdir() if p.is_dir())]
    incs.append(f"-I{ROOT / 'runtime_c' / 'include'}")
    exe = work / f"driver-{tag}"
    _run([cc, "-std=c99", *flags, *incs, str(driver), str(kernels / "tflite_int8" / "tflite_int8_elementwise.c"),
          *link, "-lm", "-o", str(exe)])
    return exe


def case_args(case: str) -> list[str]:
    op, y, x1, x2 = CASES[case]
    return [op, *("x".join(map(str, s)) for s in (y, x1, x2))]


def host_time(exe: Path, case: str, samples: int) -> tuple[float, str]:
    """Median microseconds a call, and the output's checksum."""
    probe = _run([str(exe), *case_args(case), "3", "3"]).stdout
    once = float(re.search(r"median_us ([\d.]+)", probe).group(1))
    calls = max(1, int(20000 / max(once, 1e-3)))
    out = _run([str(exe), *case_args(case), str(samples), str(calls)]).stdout
    return float(re.search(r"median_us ([\d.]+)", out).group(1)), re.search(r"checksum (\d+)", out).group(1)


def m4_counts(exe: Path, case: str, plugin: Path) -> tuple[int, int, str]:
    """Instructions and estimated cycles of one call on mps2-an386, and the output's checksum."""
    got = []
    for calls in (1, 3):
        args = ",".join(f"arg={a}" for a in ("driver", *case_args(case), "1", str(calls)))
        r = _run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none", "-serial", "none",
                  "-semihosting-config", f"enable=on,target=native,{args}",
                  "-plugin", f"{plugin},arg=cycles=m4", "-kernel", str(exe)], timeout=900)
        count = lambda what, text: re.search(what + r" (\d+)", text).group(1)  # noqa: E731
        got.append((int(count("insns:", r.stderr)), int(count("cycles:", r.stderr)), count("checksum", r.stdout)))
    (i1, c1, _), (i3, c3, s3) = got
    return (i3 - i1) // 2, (c3 - c1) // 2, s3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", default=list(CASES))
    ap.add_argument("--before", default="main", help="the revision to compare with (default: main)")
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--no-host", action="store_true")
    ap.add_argument("--m4", action="store_true", help="instruction counts on the Cortex-M4 under qemu")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="aotc-eltwise-") as tmp:
        work = Path(tmp)
        trees = {"before": kernels_tree(args.before, work), "after": kernels_tree(None, work)}
        if not args.no_host:
            exes = {k: build(t, work, f"host-{k}", "gcc", ["-O3", "-march=native"]) for k, t in trees.items()}
            print(f"host (gcc -O3 -march=native), median us a call of {args.samples} samples; before = {args.before}\n")
            print("| case | before us | after us | speed-up |\n|---|---:|---:|---:|")
            for case in args.cases:
                (tb, sb), (ta, sa) = (host_time(exes[k], case, args.samples) for k in ("before", "after"))
                same = "" if sb == sa else " (outputs DIFFER)"
                print(f"| {case} | {tb:.1f} | {ta:.1f} | {tb / ta:.1f}x{same} |", flush=True)
        if args.m4:
            support = ROOT / "cmake" / "cortex-m"
            link = [str(support / "startup.c"), f"-T{support / 'mps2-an386.ld'}", f"-L{support}",
                    "--specs=nano.specs", "--specs=rdimon.specs", "-nostartfiles", "-Wl,--gc-sections"]
            plugin = insn_count_plugin(work)
            for level in ("-O3", "-O2", "-Os"):
                exes = {k: build(t, work, f"m4{level}-{k}", "arm-none-eabi-gcc",
                                 [*M4, level, "-ffunction-sections", "-fdata-sections", f"-I{support}"], link)
                        for k, t in trees.items()}
                print(f"\nCortex-M4 (mps2-an386, {level}), one call: instructions and the plugin's cycle estimate "
                      f"(millions); before = {args.before}\n")
                print("| case | before insns | after insns | before cycles | after cycles | cycles after/before |\n"
                      "|---|---:|---:|---:|---:|---:|")
                for case in args.cases:
                    (ib, cb, sb), (ia, ca, sa) = (m4_counts(exes[k], case, plugin) for k in ("before", "after"))
                    same = "" if sb == sa else " (outputs DIFFER)"
                    print(f"| {case} | {ib / 1e6:.3f} | {ia / 1e6:.3f} | {cb / 1e6:.3f} | {ca / 1e6:.3f} | "
                          f"{ca / cb:.2f}{same} |", flush=True)


if __name__ == "__main__":
    main()
