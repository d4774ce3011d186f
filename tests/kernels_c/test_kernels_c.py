"""The kernel tests written in C (tests/kernels_c/test_<family>_kernels.c), on the host: every kernel of the
conv, gemm and pool families, and of those in REF_FAMILIES (attention, elementwise, fused, norm, recurrent,
reduce, resize, signal, tflm_signal, random, philox ...), against its reference kernel
(runtime_c/kernels/<family>/<family>_ref.c) over random shapes, with a fixed seed. Each test program is
compiled -std=c99 -Wall -Wextra -Werror against the runtime sources a bundle ships for the family
(aot/emit_c/runtime_files.py) and its reference, and fails on any mismatch.

Three builds of each, by tier (tests/README.md):

- `plain` (fast tier): gcc -O2 -march=native, as a host bundle builds, without sanitizers: whether every
  kernel computes what its reference does, in the time a compile without instrumentation takes (the
  sanitizers make the kernels' compile 6 to 18 times as long).
- `native` and `generic` (full tier): under AddressSanitizer and UndefinedBehaviorSanitizer, where a read or
  write past a tensor fails (the test's buffers are heap allocations of exactly their size). `native` takes
  the kernels' block sizes for -march=native (GEMM tiles of 6 x 16 with AVX); `generic` the baseline ISA with
  AOTC_DW3_BLOCK=1 (6 x 8 tiles on x86-64 SSE2; the depthwise 3 x 3 kernel output by output, as on targets
  without vector units); only for the families whose C reads the ISA (kernel_builds.reads_the_isa), the others'
  baseline build compiling the code the native one does (in `--tier all`). The pool test also runs with
  AOTC_NO_INTRINSICS: the plain-C twins of pool_int8.c's SSE2 paths and of pool_avx512.h's AVX-512 float
  MaxPool (pool.c's maxpool_rows_f32), which the native build must take on hosts with AVX-512F; the
  tflite_int8 test with -march=x86-64-v3: the elementwise kernels' AVX2 lanes.

The same tests on the Cortex-M boards under qemu, and the kernels under clang: test_kernels_c_boards.py.
"""

from __future__ import annotations

import platform
import re
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import require_tool
from kernel_builds import (
    CALLS,
    HOST_BUILDS,
    SANITIZE,
    SEED,
    SHAPES,
    WARNINGS,
    c_sources,
    compile_and_link,
    host_has_avx2,
    host_has_avx512f,
    object_store,
    reads_the_isa,
    run_checked,
    sanitize_for,
    sanitizer_env,
)

from aot.paths import kernel_file, kernel_include_flags


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict:
    return object_store(tmp_path_factory.mktemp("objects"))


# build -> (flags, seed, shapes as a fraction of SHAPES): the plain build its own shapes; the sanitized native
# build half the shapes and the baseline-ISA build a third as many, other ones (its own seed): every entry point
# and its fixed edge cases on each; all the shapes of both with --tier all
BUILDS = {
    "plain": (["-O2", *HOST_BUILDS["native"]], SEED + 3, 2),
    "native": ([*SANITIZE, *HOST_BUILDS["native"]], SEED, 2),
    "generic": ([*SANITIZE, *HOST_BUILDS["generic"]], SEED + 1, 3),
    "native-all": ([*SANITIZE, *HOST_BUILDS["native"]], SEED, 1),
    "generic-all": ([*SANITIZE, *HOST_BUILDS["generic"]], SEED, 1),
}  # (the sanitized ones at the family's level: kernel_builds.sanitize_for)
TIER = {"plain": (), "native": pytest.mark.full, "generic": pytest.mark.full,
        "native-all": pytest.mark.slow, "generic-all": pytest.mark.slow}
# The families whose plain build is in the exhaustive tier, not the fast one: compiling their kernels took 57 of
# the fast tier's 95 s in this file (conv 23 s, elementwise 22 s, tflite_int8 12 s, against 1-6 s for each other
# family), and the full tier (CI) runs the same code against the same references in its native build, under
# the sanitizers. The fast tier still runs their kernels against onnxruntime and LiteRT through the op and model
# tests (tests/kernels/test_ops_conv.py, test_ops_elementwise.py, tests/frontend/test_tflite.py), at -O2. Likewise
# quant's and fused's (12-13 s each of the fast tier's run in CI, 2026-12-01: tests/kernels/test_quant.py and the
# elementwise op tests run their kernels).
PLAIN_IN_ALL = {"conv", "elementwise", "tflite_int8", "quant", "fused"}




def _tier(family: str, build: str) -> tuple:
    if build == "generic" and not reads_the_isa(family):
        # no path of its C depends on the ISA: the sanitized native build runs the same code (under the same
        # sanitizers, with more shapes); its baseline build is the exhaustive tier's
        return (pytest.mark.slow,)
    return TIER[build] or ((pytest.mark.slow,) if family in PLAIN_IN_ALL else ())


@pytest.mark.parametrize(("family", "build"), [pytest.param(f, b, marks=_tier(f, b), id=f"{f}-{b}")
                                               for b in BUILDS for f in sorted(CALLS)])
def test_kernels_match_reference(tmp_path, objects, family, build):
    """Every entry point of the family against its reference, SHAPES random shapes each (a share by build)."""
    require_tool("gcc")
    flags, seed, share = BUILDS[build]
    if flags[:len(SANITIZE)] == SANITIZE:
        flags = [*sanitize_for(family), *flags[len(SANITIZE):]]
    if "-march=native" in flags and platform.machine() not in ("x86_64", "aarch64", "arm64"):
        pytest.skip("-march=native: x86-64 and aarch64 hosts")
    exe = tmp_path / f"test_{family}_kernels"
    compile_and_link(objects, "gcc", c_sources(family), [*WARNINGS, *flags], exe)
    out = run_checked([str(exe), str(seed), str(SHAPES[family] // share)], timeout=300,
                      env=sanitizer_env() if build != "plain" else None)
    assert "MISMATCH" not in out and " ok " in out, out
    if family == "pool" and build in ("plain", "native", "native-all") and host_has_avx512f():
        # the float MaxPool's AVX-512 rows (pool_avx512.h) took a share of the shapes
        assert "aotc_maxpool_f32 AVX-512 path: 0 shapes" not in out and "AVX-512 path:" in out, out


@pytest.mark.full
def test_pool_kernels_plain_c(tmp_path, objects):
    """The pool test built with AOTC_NO_INTRINSICS: the plain-C twins of pool_int8.c's SSE2 paths (the 8-bit
    MaxPool's passes down rows and across columns), as targets without SSE2 build them."""
    require_tool("gcc")
    exe = tmp_path / "test_pool_kernels_plain"
    compile_and_link(objects, "gcc", c_sources("pool"), [*WARNINGS, *SANITIZE, "-DAOTC_NO_INTRINSICS"], exe)
    out = run_checked([str(exe), str(SEED + 2), str(SHAPES["pool"] // 3)], timeout=300)
    assert "MISMATCH" not in out and "aotc_maxpool_u8" in out and " ok " in out, out


# the families with AVX2 paths of their own (-march=x86-64-v3, as a host bundle without AVX-512 builds): the seed and
# the entries that must run
AVX2_FAMILIES = {
    # the elementwise MUL / ADD / SUB's 8-lane paths (tflite_int8_x86.h) and the packed CONV_2D (alone and with the
    # residual ADD), DEPTHWISE_CONV_2D and FULLY_CONNECTED on vpmaddwd (tflite_int8_packed*.c TFL_PK_AVX2),
    # MAX_POOL_2D's 32 channels a register (tflite_int8_pool.c maxpool_avx2)
    "tflite_int8": (SEED + 4, ["aotc_tfl_mul_s8 (runs)", "aotc_tfl_maxpool_s8",
                               *(f"aotc_tfl_{k}_s8_packed" for k in ("conv", "conv_add", "depthwise", "fc"))]),
    # the ONNX int8 convs' patch quads and depthwise on vpmaddwd / vpmulld (quant_impl.h, AOTC_QUANT_AVX2)
    "quant": (SEED + 5, ["aotc_qconv_patches_i8"]),
    # Softmax's rows on AVX2 (fast_math.h aotc_softmax_rows_avx2: two rows at a time, an odd one last by
    # aotc_softmax_avx2; the max, e^x, the sum and the tails by VMASKMOVPS)
    "norm": (SEED + 6, ["aotc_softmax_f32"]),
}


@pytest.mark.full
@pytest.mark.parametrize("family", sorted(AVX2_FAMILIES))
def test_kernels_avx2(tmp_path, objects, family):
    """A family's test built for AVX2 without AVX-512 (-march=x86-64-v3), under the sanitizers: the paths hosts
    without AVX-512 take, which neither the native build (AVX-512 where the host has it) nor the generic one (SSE2)
    compiles (AVX2_FAMILIES). (The kernels' objects are the AVX2 shape tests' below: the same flags.)"""
    require_tool("gcc")
    if platform.machine() != "x86_64" or not host_has_avx2():
        pytest.skip("an x86-64 host with AVX2")
    seed, entries = AVX2_FAMILIES[family]
    exe = tmp_path / f"test_{family}_kernels_avx2"
    compile_and_link(objects, "gcc", c_sources(family), [*WARNINGS, *sanitize_for(family), "-march=x86-64-v3"], exe)
    out = run_checked([str(exe), str(seed), str(SHAPES[family] // 3)], timeout=300, env=sanitizer_env())
    assert "MISMATCH" not in out and " ok " in out, out
    assert all(e in out for e in entries), out


# test_quant_avx2_shapes.c's shapes (by index): callgrind's instruction count of the kernel's entry at most this a
# multiply-add, built as a host bundle without AVX-512 builds it (-O3 -march=x86-64-v3; gcc 12). Measured at the
# commit that set them, instructions a MAC (before it: the byte quads, and the vpmulld depthwise a row of 16 lanes at
# a time): convs 0.40 (0.51), 0.63 (0.82), 0.73 (0.91), 0.95 (1.21), 2.29 (3.99); depthwise 1.21 (4.12),
# 3.10 (4.36), 2.12 (6.85), 1.25 (2.45), 2.61 (6.27). (The convs' cycles fell more than their instructions: the byte
# quads' shuffles and re-widened weights had competed with vpmaddwd for the vector ports)
# avx2q7: the last two, planes whose last patch block is 8 past whole lanes of 16, summed in vectors of 8 (0.75 -> 0.68
# and 1.27 -> 1.23; before it in whole lanes of 16); then the stride-1 patch pairs from each (ic, kh)'s padded input
# segments (qavx2_segs, qavx2_pairs_s1), not row by row with every tap's bounds: shapes 0, 4, 10, 11 0.400 -> 0.376,
# 2.29 -> 2.05, 0.683 -> 0.660, 1.232 -> 1.053.
# avx2lanes (the register block shared with the .tflite convs, common/avx2_lanes.h: no register moves in its loop):
# convs 0, 1, 2, 3, 4, 10, 11 0.365 -> 0.310, 0.438 -> 0.381, 0.735 -> 0.678, 0.975 -> 0.919, 1.79 -> 1.715,
# 0.563 -> 0.499, 0.918 -> 0.847; their bounds now about 5 % above.
QAVX2_INSTRUCTIONS_PER_MAC = [0.33, 0.40, 0.71, 0.965, 1.8, 2.5, 3.7, 4.0, 1.8, 4.2, 0.525, 0.89]


def _quant_avx2_sources() -> list[Path]:
    return [Path(__file__).resolve().parent / "test_quant_avx2_shapes.c", *c_sources("quant")[1:]]


@pytest.mark.full
def test_quant_avx2_network_shapes(tmp_path, objects):
    """The ONNX int8 convs' AVX2 paths (quant_impl.h AOTC_QUANT_AVX2: the patches as 16-bit pairs, the depthwise
    by vpmaddwd on pairs of taps, row by row and as one run over small planes) on MobileNetV2's and ResNet-18's
    layer sizes with tails, odd channel counts, stride 2, 5 x 5, packed weights and weight zero points, and the
    residual ADD fused into the stores, given the whole weights widened once (the work the plan gives a generic
    host), and again on the vpmaddubsw path (its fixes made by the test as quant_ubs.py makes them, in its 4 ways of
    p->work): exactly the
    reference under the sanitizers, and (callgrind) at most
    QAVX2_INSTRUCTIONS_PER_MAC instructions a multiply-add, which the byte quads' path and the vpmulld depthwise
    exceeded (by 1.1-3.2x)."""
    require_tool("gcc", "valgrind")
    if platform.machine() != "x86_64" or not host_has_avx2():
        pytest.skip("an x86-64 host with AVX2")
    checked = tmp_path / "test_quant_avx2_shapes"
    compile_and_link(objects, "gcc", _quant_avx2_sources(), [*WARNINGS, *SANITIZE, "-march=x86-64-v3"], checked)
    out = run_checked([str(checked), str(SEED)], timeout=300, env=sanitizer_env())
    assert "MISMATCH" not in out and out.count(" ok (") == len(QAVX2_INSTRUCTIONS_PER_MAC) + 13, out  # (+ checked only)
    assert out.count(" widened ") == 5, out
    assert out.count(" ubs-ok (") == 11, out  # the convs again by vpmaddubsw (qconv_patches_ubs)
    counted = tmp_path / "test_quant_avx2_counts"
    compile_and_link(objects, "gcc", _quant_avx2_sources(), [*WARNINGS, "-O3", "-march=x86-64-v3"], counted)
    for i, bound in enumerate(QAVX2_INSTRUCTIONS_PER_MAC):
        line = run_checked([str(counted), str(SEED), str(i)], timeout=60)
        entry = "aotc_qconv_depthwise" if "depthwise" in line else "aotc_qconv_patches"
        line, macs, ir = _count_instructions(tmp_path, counted, i, entry + ("_u8" if " u8" in line else "_i8"))
        assert ir <= bound * macs, f"{line}: {ir} instructions, {ir / macs:.2f} a MAC (at most {bound})"


@pytest.mark.full
def test_quant_vnni_network_shapes(tmp_path, objects):
    """The ONNX int8 convs' AVX-512 VNNI paths (quant_avx512vnni.h, -march=native) on test_quant_avx2_shapes.c's
    shapes, with its VNNI-only ones (MobileNetV2's 1 x 1 convs in whole blocks of 6 channels and their rests, packed
    and not; 3 x 3 depthwise convs of odd channel counts, stride 2, planes whose last blocks' windows are masked)
    and depthwise_flat given its work: exactly the reference under the sanitizers, and each shape on the paths that
    issue 64 made faster (AOTC_TEST_QX86_TRACE counts their blocks: valgrind and qemu 7.2 have no AVX-512, so no
    instruction count): every 3 x 3 depthwise without weight zero points in depthwise_flat's 3 x 3 blocks (masked
    windows too), every conv without them requantised a channel at a time in qconv_patches_one, every pointwise
    1 x 1 conv's patch quads made 64 positions a step, every dense 3 x 3 (given the plan's work: qconv_dense)
    summed for its first channels as its quad rows are made (with weight zero points 16 channels a block,
    x86_dense_dotq16; without them 8 channels of three blocks at a time, x86_dense_dotq3x8) and, without zero
    points, the rest on three blocks of positions at a time (x86_dense_dotb3x8; with them never), a 7 x 7 plane's
    one-lane last block with the three before it (x86_dense_dotb3x8n), every 1 x 1 conv at stride 2 its patch rows
    gathered on runs found once a block (x86_patch_runs), every conv requantised a channel at a time 64 positions
    at once with the clamp in bytes (x86_requant64; odd channel counts with a fused activation's narrower clamp;
    its float clamp only in convs where some channel's sums times its scale may pass 2^31: out_c a multiple of 4
    here), a
    7 x 7 plane's 49th position of a 1 x 1 conv summed on its own (x86_patch_column, not a vector of 16), every
    conv whose channels end in 1-4 past blocks of 6 those on 4 or 2 channels (x86_dot_tail); and
    QGemm (MobileNetV2's 1280 x 1000 classifier, tails of k and n, uint8, weight zero points, one scale) on
    qgemm_avx512's four rows at a time."""
    require_tool("gcc")
    cpu = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").is_file() else []
    if platform.machine() != "x86_64" or "avx512_vnni" not in cpu or "avx512vbmi" not in cpu:
        pytest.skip("an x86-64 host with AVX-512 VNNI and VBMI")
    exe = tmp_path / "test_quant_vnni_shapes"
    compile_and_link(objects, "gcc", _quant_avx2_sources(),
                     [*WARNINGS, *SANITIZE, "-march=native", "-DAOTC_TEST_QX86_TRACE"], exe)
    out = run_checked([str(exe), str(SEED)], timeout=600, env=sanitizer_env())
    rows = [line for line in out.splitlines() if " MACs)" in line]
    assert "MISMATCH" not in out and len(rows) == 26 and all(" ok (" in r for r in rows), out
    masked = 0
    for row in rows:
        n = dict(zip(*[iter(row.split(" MACs)")[1].split())] * 2, strict=True))
        assert (int(n["runs"]) > 0) == ("1x1/2" in row), row
        if " dense" in row:
            assert (int(n["dotb3"]) > 0) == ("w_zero" not in row), row
            assert (int(n["dotq3"]) > 0) == ("w_zero" not in row) and int(n["dotq"]) + int(n["dotq3"]) > 0, row
            assert (int(n["dotb3n"]) > 0) == ("7x7" in row and "w_zero" not in row), row
        elif "depthwise 3x3" in row and "w_zero" not in row:
            assert int(n["dw3"]) + int(n["dw3_masked"]) + int(n["dw3_one"]) > 0, row
            assert int(n["dw3_one"]) > 0 or " 7x7" not in row, row  # a 7 x 7 plane's blocks on one window
            masked += int(n["dw3_masked"])
        elif "depthwise" not in row and "w_zero" not in row:
            assert int(n["requant_channel"]) > 0, row
            out_c = int(re.search(r"->(\d+)", row).group(1))
            assert int(n["requant64_guard"]) == (int(n["requant64"]) if out_c % 4 == 0 else 0), row
            assert (int(n["column"]) > 0) == ("1x1 " in row and "7x7" in row and "packed" not in row), row
        if "conv 1x1 " in row:
            assert int(n["quads64"]) > 0, row
        if " dense" not in row and "depthwise" not in row:  # the last 1-4 channels of blocks of 6 on 4 or 2
            assert (int(n["tail"]) > 0) == (int(re.search(r"->(\d+)", row).group(1)) % 6 in (1, 2, 3, 4)), row
    assert masked > 0, out
    gemms = [line for line in out.splitlines() if line.startswith("qgemm ")]
    assert len(gemms) == 5 and all(" checked gemv " in g and int(g.split()[-1]) > 0 for g in gemms), out


# test_tflite_int8_avx2_shapes.c's shapes: instructions an entry's multiply-add (a table op's element) at most, as
# QAVX2_INSTRUCTIONS_PER_MAC. Measured at the commit that set them (before it, tflite_int8_packed.c re-widening the
# weights for every two positions and the depthwise 8 channels a tap, the LUT reloading p an element): CONV_2D 0.41
# (0.46), 0.22 (0.27), 0.67 (0.67: 6 quads, the output stage's); DEPTHWISE_CONV_2D 2.54 (3.61), 2.46 (3.47), 2.69
# (2.40: 40 channels, 5 x 5: the 16-channel path's last 8 lanes idle, its time still less); LUT 6.0 (7.0); SOFTMAX of
# 1000 classes (an element its "MAC") 62 (226: the plain loop's two exps an element below 1024 elements). Then
# (issue 64, avx2i8: the depthwise windows inside x by pairs of taps across rows, no edge tests a tap): DEPTHWISE 1.52
# (2.46), 1.28 (2.38), 2.45 (2.66); and (a CONV_2D's pair sums in registers to the output stage where the block's
# weights are one chunk, 16 channels requantised and stored together) CONV_2D 0.36 (0.41), 0.217 (0.224), 0.48 (0.66),
# 1 x 1 8 -> 40 (its output stage's share) 1.23 (1.79); and (a row's positions with windows inside x in one loop)
# DEPTHWISE_CONV_2D 1.14 (1.52), 0.83 (1.28)
TFL_AVX2_INSTRUCTIONS_PER_MAC = [0.39, 0.235, 0.52, 1.35, 1.3, 0.95, 2.6, 6.5, 100.0]
TFL_AVX2_ENTRIES = ["aotc_tfl_conv_s8_packed"] * 4 + ["aotc_tfl_depthwise_s8_packed"] * 3 + ["aotc_tfl_lut_s8",
                                                                                             "aotc_tfl_softmax_s8"]


def _count_instructions(tmp_path: Path, exe: Path, index: int, entry: str) -> tuple[str, int, int]:
    """(the shape's line, its multiply-adds, callgrind's instructions in `entry`) of shape `index` of a shapes test."""
    line = run_checked([str(exe), str(SEED), str(index)], timeout=60)
    macs = int(line.split("(")[-1].split()[0])
    cg = tmp_path / f"callgrind-{exe.name}-{index}.out"
    run_checked(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", "--collect-atstart=no",
                 f"--toggle-collect={entry}", str(exe), str(SEED), str(index)], timeout=300)
    ir = next(int(t.split()[1]) for t in cg.read_text().splitlines() if t.startswith(("summary:", "totals:")))
    return line.strip(), macs, ir


@pytest.mark.full
def test_tflite_int8_avx2_network_shapes(tmp_path, objects):
    """The int8 .tflite packed kernels' AVX2 paths (tflite_int8_packed.c TFL_PK_AVX2: CONV_2D's weights widened once
    a run of positions, DEPTHWISE_CONV_2D 16 channels and two taps a vpmaddwd; the LUT) on MobileNetV2's and ResNet's
    layer sizes: exactly LiteRT's reference kernels under the sanitizers, and (callgrind) at most
    TFL_AVX2_INSTRUCTIONS_PER_MAC instructions a multiply-add, which the paths before exceeded on five of them."""
    require_tool("gcc", "valgrind")
    if platform.machine() != "x86_64" or not host_has_avx2():
        pytest.skip("an x86-64 host with AVX2")
    sources = [Path(__file__).resolve().parent / "test_tflite_int8_avx2_shapes.c", *c_sources("tflite_int8")[1:]]
    checked = tmp_path / "test_tflite_int8_avx2_shapes"
    compile_and_link(objects, "gcc", sources, [*WARNINGS, *sanitize_for("tflite_int8"), "-march=x86-64-v3"], checked)
    out = run_checked([str(checked), str(SEED)], timeout=300, env=sanitizer_env())
    checked_only = 8  # (test_tflite_int8_avx2_shapes.c CHECKED_)
    assert "MISMATCH" not in out and out.count(" ok (") == len(TFL_AVX2_INSTRUCTIONS_PER_MAC) + checked_only, out
    counted = tmp_path / "test_tflite_int8_avx2_counts"
    compile_and_link(objects, "gcc", sources, [*WARNINGS, "-O3", "-march=x86-64-v3"], counted)
    for i, (bound, entry) in enumerate(zip(TFL_AVX2_INSTRUCTIONS_PER_MAC, TFL_AVX2_ENTRIES, strict=True)):
        line, macs, ir = _count_instructions(tmp_path, counted, i, entry)
        assert ir <= bound * macs, f"{line}: {ir} instructions, {ir / macs:.2f} a MAC (at most {bound})"


# test_conv_dwk_avx2_shapes.c's shapes: callgrind's instructions in aotc_conv_depthwise_kxk_f32 a multiply-add at most,
# built as a host bundle without AVX-512 builds it (-O3 -march=x86-64-v3; gcc 12), as QAVX2_INSTRUCTIONS_PER_MAC.
# Measured at the commit that set them (before it, the row blocks of 16 and 8 outputs): 0.43 (1.86), 0.71 (1.93),
# 0.59 (2.27), 0.69 (3.81), 1.59 (4.42), 0.85 (1.53), 1.22 (2.08), 0.81 (1.95), 1.06 (2.68), 0.83 (2.06), 0.65 (5.90);
# the 3 x 3 at stride 2 (aotc_conv_depthwise3x3_direct_f32) 1.30 (0.86: fewer instructions, 3.1x the time), 2.41
# (3.05), 1.60 (2.15)
DWK_AVX2_INSTRUCTIONS_PER_MAC = [0.5, 0.85, 0.7, 0.8, 1.8, 1.0, 1.4, 0.95, 1.25, 0.95, 0.75, 1.5, 2.7, 1.85]


@pytest.mark.full
def test_conv_dwk_avx2_network_shapes(tmp_path, objects):
    """The float depthwise convs' AVX2 path (conv_dwk8_avx2.h: vectors of 8 channels, a host without AVX-512; 5 x 5
    and 7 x 7, and 3 x 3 at stride 2) on EfficientNet-B0's and MobileNetV2's layer sizes with channel tails, several
    bands of rows, stride 2, asymmetric pads, residuals and each activation: the reference's result under the
    sanitizers, nothing written past the output, and (callgrind) at most DWK_AVX2_INSTRUCTIONS_PER_MAC instructions
    a multiply-add, which the row blocks exceeded on all but one (by 1.2-4.8x)."""
    _conv_avx2_shapes(tmp_path, objects, "test_conv_dwk_avx2_shapes", DWK_AVX2_INSTRUCTIONS_PER_MAC,
                      lambda i: "aotc_conv_depthwise3x3_direct_f32" if i >= 11 else "aotc_conv_depthwise_kxk_f32")


def _conv_avx2_shapes(tmp_path: Path, objects, name: str, bounds: list[float], entry: Callable[[int], str]) -> None:
    """tests/kernels_c/NAME.c with the conv kernels at -march=x86-64-v3: every shape ok under the sanitizers, then
    (callgrind, -O3) shape i's instructions in entry(i) at most bounds[i] a multiply-add."""
    require_tool("gcc", "valgrind")
    if platform.machine() != "x86_64" or not host_has_avx2():
        pytest.skip("an x86-64 host with AVX2")
    sources = [Path(__file__).resolve().parent / f"{name}.c", *c_sources("conv")[1:]]
    checked = tmp_path / name
    compile_and_link(objects, "gcc", sources, [*WARNINGS, *sanitize_for("conv"), "-march=x86-64-v3"], checked)
    out = run_checked([str(checked), str(SEED)], timeout=300, env=sanitizer_env())
    assert "MISMATCH" not in out and out.count(" ok (") == len(bounds), out
    counted = tmp_path / f"{name}_counts"
    compile_and_link(objects, "gcc", sources, [*WARNINGS, "-O3", "-march=x86-64-v3"], counted)
    for i, bound in enumerate(bounds):
        line, macs, ir = _count_instructions(tmp_path, counted, i, entry(i))
        assert ir <= bound * macs, f"{line}: {ir} instructions, {ir / macs:.2f} a MAC (at most {bound})"


# test_conv_ig_avx2_shapes.c's shapes: callgrind's instructions in aotc_conv_implicit_f32 a multiply-add at most (the
# MACs over every tap, padding's too), built as a host bundle without AVX-512 builds it (-O3 -march=x86-64-v3; gcc 12).
# Measured at the commit that set them (before it, a class's 5 positions as tiles of 3 and 2 and its single positions
# one at a time): 0.277 (0.323), 0.296 (0.309), 0.473 (0.524), 0.282 (0.272: the one corner alone, as four rows of
# ig_tile1x4, more instructions in the same chain's time), 0.471 (0.548). (Three columns innermost, IG_COLUMNS3, cost
# instructions, 0.236 -> 0.277 on the first, and save time: the test checks its order by the sums' bits.)
IG_AVX2_INSTRUCTIONS_PER_MAC = [0.30, 0.30, 0.50, 0.29, 0.51, 0.50]


@pytest.mark.full
def test_conv_ig_avx2_network_shapes(tmp_path, objects):
    """The implicit GEMM's tiles on AVX2 without AVX-512 (-march=x86-64-v3): a class's last 5 positions as one tile
    of 5 (conv_implicit.c ig_tile5) and its single positions put off and summed four at a time (ig_tile1x4), as on
    AVX-512, and classes with three kernel columns inside summed channels outermost (IG_COLUMNS3), on ResNet-50's
    7 x 7 and SqueezeNet's 13 x 13 3 x 3 convs, stride 2, a 5 x 5, a narrow tail of channels, a residual, each
    activation and a batch of 2: the reference's result under the sanitizers and, to the bit, the sums in that order
    (channels innermost there gave other bits on every shape), nothing written past the output, and (callgrind) at
    most IG_AVX2_INSTRUCTIONS_PER_MAC instructions a multiply-add, which tiles of 3 + 2 and lone corners exceeded on
    four of them."""
    _conv_avx2_shapes(tmp_path, objects, "test_conv_ig_avx2_shapes", IG_AVX2_INSTRUCTIONS_PER_MAC,
                      lambda i: "aotc_conv_implicit_f32")


# test_conv_pw_avx2_shapes.c's shapes: callgrind's instructions in aotc_conv_pointwise_f32 a multiply-add at most, built
# as a host bundle without AVX-512 builds it (-O3 -march=x86-64-v3; gcc 12). Measured at the commit that set them
# (before it, on the GEMM core's generic tiles: -DAOTC_NO_X86_PW): 0.342 (0.443), 0.307 (0.378), 0.260 (0.304), 0.303
# (0.413), 0.290 (0.423), 0.778 (1.778), 4.074 (11.566), 0.294 (0.500), 0.517 (1.146), 0.456 (1.269), past PW2_MAX_K
# on the GEMM core 0.391 both, the two copied 0.343 (0.462) and 0.320 (0.371), in two chunks 0.299 (0.315); the three
# strided ones in aotc_conv_pointwise_strided_f32 (the copy and the pointwise conv) 0.263, 0.837 and 0.861
PW_AVX2_INSTRUCTIONS_PER_MAC = [0.38, 0.34, 0.29, 0.34, 0.32, 0.86, 4.5, 0.33, 0.57, 0.51, 0.43, 0.38, 0.36, 0.33,
                                0.29, 0.92, 0.95]


@pytest.mark.full
def test_conv_pw_avx2_network_shapes(tmp_path, objects):
    """The 1 x 1 convs' AVX2 path (conv_pw_avx2.h: tiles of up to 6 output channels x 16 positions on the input as it
    is, a host without AVX-512) on MobileNetV2's and ResNet's layer sizes, with each kind of last tiles, planes ending
    in a partial block of positions, groups, a batch of 2, residuals and each activation, and strided 1 x 1 convs on
    a copy of their strided inputs (aotc_conv_pointwise_strided_f32): the reference's result
    under the sanitizers and, to the bit, the sums in the tiles' order, nothing written past the output, and
    (callgrind) at most PW_AVX2_INSTRUCTIONS_PER_MAC instructions a multiply-add."""
    _conv_avx2_shapes(tmp_path, objects, "test_conv_pw_avx2_shapes", PW_AVX2_INSTRUCTIONS_PER_MAC,
                      lambda i: "aotc_conv_pointwise_strided_f32" if i >= 14 else "aotc_conv_pointwise_f32")


@pytest.mark.full
@pytest.mark.parametrize("march", ["x86-64", "haswell", "skylake-avx512", "icelake-server"])
def test_x86_int8_paths_compile_at_each_level(tmp_path, march):
    """The int8 kernel files whose paths depend on the x86 level (SSE2, AVX2, AVX-512 without VNNI, with VNNI and
    VBMI) compile warning-free at each: an AVX-512 core without VNNI (Skylake-X) takes the AVX2 paths of the packed
    kernels, which need tflite_int8_x86.h's 8-lane requantisation there too."""
    require_tool("gcc")
    if platform.machine() != "x86_64":
        pytest.skip("an x86-64 host")
    for name in ("tflite_int8_packed.c", "tflite_int8_packed_fc.c", "tflite_int8_elementwise.c", "quant_int8.c",
                 "quant_uint8.c"):
        r = subprocess.run(["gcc", f"-march={march}", "-O1", "-std=c99", *WARNINGS, *kernel_include_flags(), "-c",
                            str(kernel_file(name)), "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
        assert r.returncode == 0, f"{name} at -march={march}: {r.stderr[-2000:]}"


def host_has_amx_int8() -> bool:
    """Whether this CPU has AMX-INT8 (Linux: /proc/cpuinfo's flags), which -march=native then builds for."""
    try:
        return "amx_int8" in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


@pytest.mark.full
def test_tflite_int8_amx_blockings(tmp_path, objects):
    """The packed CONV_2D on AMX's tiles (runtime_c/kernels/tflite_int8/tflite_int8_amx.h) against the reference,
    bit for bit, on many shapes of each way it reads the patches and blocks M and N (the test's "(AMX blockings)"
    entries: in place in the span, a compact image at stride 2, packed patches with a K tail as the 7 x 7 stem's;
    tails in M, N and K, a fused residual ADD, half of them by the compiler's linear form, a ReLU's range, a channel's
    left shift), built with -march=native as a host bundle is. Not where the CPU lacks AMX: the same entries then take
    the VNNI path, which the other entries check."""
    require_tool("gcc")
    if platform.machine() != "x86_64" or not host_has_amx_int8():
        pytest.skip("a CPU with AMX-INT8 (amx_int8 in /proc/cpuinfo): without it the packed CONV_2D runs on VNNI")
    exe = tmp_path / "test_tflite_int8_kernels_amx"
    compile_and_link(objects, "gcc", c_sources("tflite_int8"),
                     [*WARNINGS, "-O2", *HOST_BUILDS["native"]], exe)
    out = run_checked([str(exe), str(SEED + 5), "600", "(AMX blockings)"], timeout=300)
    assert "MISMATCH" not in out and out.count(" ok (600 shapes)") == 2, out


@pytest.mark.full
def test_quant_integer_requantisation_on_host(tmp_path, objects):
    """The M3's requantisation in integers (AOTC_REQUANT_FIXED), built on the host under the
    sanitizers: many more random and tie cases than a board run takes."""
    require_tool("gcc")
    exe = tmp_path / "test_quant_kernels_fixed"
    # at -O2: its 1,000 shapes a kernel ran 34 s unoptimised against 8 s of compile saved (quant_impl.h's kernels
    # compile more slowly at -O1 than at -O2)
    at_o2 = [("-O2" if f == "-O0" else f) for f in SANITIZE]
    compile_and_link(objects, "gcc", c_sources("quant"), [*WARNINGS, *at_o2, "-DAOTC_REQUANT_FIXED=1"], exe)
    out = run_checked([str(exe), str(SEED), "1000"], timeout=300)
    assert "MISMATCH" not in out and " ok " in out, out



@pytest.mark.full
@pytest.mark.parametrize("sanitizer", ["address,undefined", "thread"])
def test_quant_convs_split_over_the_pool(tmp_path, objects, sanitizer):
    """The QLinearConv kernels built as a --threads 2 bundle builds them (AOTC_THREADS=2 with threads.c, -march=native:
    on an AVX-512 VNNI host the paths of quant_avx512vnni.h split over the pool), every conv split however small
    (AOTC_QCONV_POOL_MIN_MACS=0, AOTC_QCONV_POOL_MIN_TAPS=0) where the test gives it a lane of scratch a thread (3
    shapes in 4), the fused residual ADDs by runs of elements (AOTC_QX86_ADD_POOL_MIN=0): each exactly the reference,
    under ASan/UBSan and under TSan."""
    require_tool("gcc")
    exe = tmp_path / "test_quant_kernels_pool"
    # unoptimised: gcc instruments quant_impl.h's kernels at -O1 five times as slowly (ASan/UBSan: 28 s of compile and
    # 2 s of run against 6 s and 6 s)
    flags = [*WARNINGS, "-O0", "-g", f"-fsanitize={sanitizer}", "-fno-omit-frame-pointer", *HOST_BUILDS["native"],
             "-DAOTC_THREADS=2", "-DAOTC_QCONV_POOL_MIN_MACS=0", "-DAOTC_QCONV_POOL_MIN_TAPS=0",
             "-DAOTC_QX86_ADD_POOL_MIN=0", "-pthread",
             *(["-fno-sanitize-recover=all"] if "undefined" in sanitizer else [])]
    if platform.machine() != "x86_64" or not host_has_avx512f():
        pytest.skip("an AVX-512 host: the int8 convs split on quant_avx512vnni.h's paths")
    compile_and_link(objects, "gcc", [*c_sources("quant"), kernel_file("threads.c")], flags, exe, link=["-pthread"])
    out = run_checked([str(exe), str(SEED + 64), "300"], timeout=600,
                      env={**sanitizer_env(), "TSAN_OPTIONS": "halt_on_error=1 exitcode=66"})
    assert "MISMATCH" not in out and "aotc_qconv" in out and "no pool" not in out, out


def test_pool_workers_get_their_stack_under_a_small_default(tmp_path, objects):
    """threads.c asks for AOTC_WORKER_STACK (1 MiB) where the C library's default for a new thread is smaller (musl's
    128 KiB; glibc's is the stack rlimit, 256 KiB here): the workers' 512 KiB of stack in test_threads_stack.c
    overflow without it."""
    require_tool("gcc")
    exe = tmp_path / "test_threads_stack"
    flags = [*WARNINGS, "-O1", "-DAOTC_THREADS=3", "-pthread"]
    compile_and_link(objects, "gcc", [Path(__file__).with_name("test_threads_stack.c"), kernel_file("threads.c")],
                     flags, exe, link=["-pthread"])

    def small_stack() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (256 * 1024, resource.getrlimit(resource.RLIMIT_STACK)[1]))

    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, preexec_fn=small_stack)
    assert done.returncode == 0 and done.stdout.startswith("ok"), (done.returncode, done.stdout, done.stderr)


@pytest.mark.full
def test_tflite_int8_portable_loops(tmp_path, objects):
    """The TFLite int8 CONV_2D (alone and with its residual ADD) and DEPTHWISE_CONV_2D by the plain loops of the
    portable kernels (AOTC_NO_INTRINSICS: a --flash-budget level's, issue 67: 4 output channels at a time, a last part
    of under 4, depth multipliers above 1 by their input channels' offsets) against LiteRT's reference arithmetic, under
    the sanitizers: the unbudgeted host build takes the one-channel loops, not these."""
    require_tool("gcc")
    exe = tmp_path / "test_tflite_int8_kernels_portable"
    # at the family's sanitized level (-O1): 14 s compiled and run, against 37 s at -O0
    flags = [*WARNINGS, *sanitize_for("tflite_int8"), "-DAOTC_NO_INTRINSICS"]
    compile_and_link(objects, "gcc", c_sources("tflite_int8"), flags, exe)
    for only in ("aotc_tfl_conv", "aotc_tfl_depthwise_s8"):
        out = run_checked([str(exe), str(SEED + 5), str(SHAPES["tflite_int8"] // 4), only], timeout=300,
                          env=sanitizer_env())
        assert "MISMATCH" not in out and " ok " in out, out


def _x86_functions(disassembly: str) -> dict[str, str]:
    """objdump -d's text per function symbol"""
    parts = re.split(r"^[0-9a-f]+ <([A-Za-z0-9_.]+)>:$", disassembly, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))

def _icelake_functions(tmp_path: Path, name: str) -> dict[str, str]:
    """runtime_c's NAME.c as a bundle for an AVX-512 VNNI / VBMI host builds it (-O3 -march=icelake-server): its
    functions' disassembly by name."""
    require_tool("gcc", "objdump")
    obj = tmp_path / f"{name}.o"
    subprocess.run(["gcc", "-std=c99", "-O3", "-march=icelake-server", *WARNINGS, *kernel_include_flags(), "-c",
                    str(kernel_file(f"{name}.c")), "-o", str(obj)], check=True)
    return _x86_functions(subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True,
                                         text=True, check=True).stdout)


@pytest.mark.full
@pytest.mark.parametrize("name", ["quant_int8", "quant_uint8"])
def test_quant_avx2_hot_paths_call_no_memcpy(tmp_path, name):
    """As a bundle for an x86-64 host without AVX-512 builds them (-O3 -march=x86-64-v3): the int8 convs' AVX2 paths
    call no memcpy (gcc had made their vector copy loops calls of it: a block's last outputs, a depthwise plane's rows,
    padded input rows, a depthwise row's weight vectors; 2-3 % of MobileNetV2 QDQ's time), and QuantizeLinear divides
    8 floats at a time (vdivps on ymm; one at a time it had taken 2 % of MobileNetV2's)."""
    require_tool("gcc", "objdump")
    obj = tmp_path / f"{name}.o"
    subprocess.run(["gcc", "-std=c99", "-O3", "-march=x86-64-v3", *WARNINGS, *kernel_include_flags(), "-c",
                    str(kernel_file(f"{name}.c")), "-o", str(obj)], check=True)
    funcs = _x86_functions(subprocess.run(["objdump", "-dr", "--no-show-raw-insn", str(obj)], capture_output=True,
                                          text=True, check=True).stdout)
    suffix = "_u8" if name == "quant_uint8" else "_i8"
    hot = {k: v for k, v in funcs.items() if re.match(r"aotc_(qavx2_|qconv_depthwise_avx2|qconv_patch_pairs|"
                                                        r"qconv_patches_avx2)", k)}
    assert f"aotc_qconv_depthwise_avx2{suffix}" in {k.split(".")[0] for k in hot}, sorted(funcs)
    calls = [k for k, v in hot.items() if re.search(r"\b(memcpy|memmove)\b", v)]
    assert not calls, calls
    quantize = funcs[f"aotc_quantize{suffix}"]
    assert re.search(r"vdivps .*%ymm", quantize), quantize


@pytest.mark.full
def test_reduce_mean_rows_on_avx512(tmp_path):
    """ReduceMean over the last axis of [rows, n] (a global average pool's: a QDQ MobileNetV2's 1280 rows of 49) sums
    four rows at a time in vectors of 8 with AVX-512 (reduce.c's pass_sum_rows, in pass_sum's order:
    test_reduce_kernels.c checks it bit for bit), not pass_sum's odometer a row at a time: 10.5 -> 2.4 us there (one
    thread, Zen 5; no result depends on it, so the test reads the code a bundle for an AVX-512 host builds)."""
    funcs = _icelake_functions(tmp_path, "reduce")
    rows = [k for k in funcs if k.split(".")[0] == "pass_sum_rows"]
    assert len(rows) == 1 and re.search(r"call\s+\S+ <pass_sum_rows", funcs["aotc_reduce_mean_f32"]), sorted(funcs)
    adds = [line for line in funcs[rows[0]].splitlines() if "vaddps" in line and "%ymm" in line]
    assert len(adds) >= 4, funcs[rows[0]][:3000]


@pytest.mark.full
def test_quant_vnni_dense_loops_prefetch_next_weights(tmp_path):
    """The dense 3 x 3 int8 conv's VNNI loops of three blocks (x86_dense_dotq3x8, x86_dense_dotb3x8 and its one-lane
    twin) prefetch the next 16 channels' weight rows into L2 as they read this block's: a 7 x 7 plane's 49 positions
    use each weight byte 49 times, and ResNet-18's layer-4 convs (2.4 MB of weights each, read once an inference)
    otherwise waited on memory: 400 us each, 240 us with the prefetch (one thread, Zen 5; no result depends on it, so
    the test reads the code: a prefetcht1 in each loop, as a bundle for an AVX-512 VNNI host builds it)."""
    funcs = _icelake_functions(tmp_path, "quant_int8")
    loops = {k: v for k, v in funcs.items() if k.split(".")[0] in (
        "aotc_x86_dense_dotq3x8_i8", "aotc_x86_dense_dotb3x8_i8", "aotc_x86_dense_dotb3x8n_i8")}
    assert {k.split(".")[0] for k in loops} == {"aotc_x86_dense_dotq3x8_i8", "aotc_x86_dense_dotb3x8_i8",
                                                "aotc_x86_dense_dotb3x8n_i8"}, sorted(funcs)
    missing = [k for k, v in loops.items() if "prefetcht1" not in v]
    assert not missing, missing


@pytest.mark.full
def test_int8_maxpool_one_pass_on_avx512_vbmi(tmp_path):
    """With AVX-512 BW and VBMI the 8-bit MaxPool at column stride 1 or 2 takes maxpool_direct (pool_int8.c: the
    max down the window's rows of 128 bytes, the taps across by vpermt2b, no row buffer), not the SSE2 passes through
    a row buffer that waited on their own stores (ResNet-18's int8 stem pool: 61 -> 47 us). Its results are
    test_pool_kernels.c's (random rows of 16 to 130 columns, both types); this reads the code a bundle for an
    AVX-512 VBMI host builds (the object for AVX2 and the Cortex-M cores: unchanged)."""
    funcs = _icelake_functions(tmp_path, "pool_int8")
    names = ("aotc_maxpool_i8", "aotc_maxpool_u8", "maxpool_direct")
    code = "".join(v for k, v in funcs.items() if k.startswith(names))
    assert re.search(r"\bvperm[ti]2b\b", code), sorted(funcs)


@pytest.mark.full
def test_quant_vnni_dense_segs_eight_patterns_a_step(tmp_path):
    """x86_dense_segs (the dense int8 conv's windows per index pattern, made for every block of 16 positions) takes
    eight patterns a step where the kernel has at most 8 rows, each pattern's row start and load mask picked from a
    register (vpermq) rather than loaded pattern by pattern: ResNet-18's 7 x 7 stem (37 patterns a block) 363 -> 344
    us. The windows are test_quant_kernels.c's to check (3 x 3 and 7 x 7 dense convs, the stores' tails); this reads
    the code a bundle for an AVX-512 VNNI host builds."""
    funcs = _icelake_functions(tmp_path, "quant_int8")
    segs = [v for k, v in funcs.items() if k.split(".")[0] == "aotc_x86_dense_segs_i8"]
    assert len(segs) == 1, sorted(funcs)
    assert re.search(r"\bvpermq\b", segs[0]) and re.search(r"\bvshufi64x2\b", segs[0]), segs[0][:2000]
