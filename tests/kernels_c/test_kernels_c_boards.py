"""The C kernel tests (tests/kernels_c/test_<family>_kernels.c) on Cortex-M cores under qemu, and the kernels
under clang. The conv and gemm tests run on a Cortex-M4 and a Cortex-M55, with fewer shapes than the host's:
the M4 with and without the VLDM inline assembly, the M55 with and without its Helium intrinsics. The quant
test (every int8 / uint8 kernel against quant_ref.c, exactly) runs on every Cortex-M board: the DSP
extension's paths on the M4 (with and without their inline assembly) and the M55, plain C and the integer
requantisation on the M3. The tests of REF_FAMILIES run on the M4 and the M55. All kernel sources and tests
must also compile cleanly with clang. One board run and the clang check are in the fast tier (each skips
where its tools are missing); the rest in the full one, where the tests of one source under many macro sets
(the --flash-budget forms, the cores' own orders) run each set at one optimisation level, the levels in turn
(conftest.levels_in_turn), and `--tier all` every set at every level.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import levels_in_turn, require_tool
from kernel_builds import (
    BOARD_SHAPES,
    CORTEX_M4,
    M4_SHAPES,
    TESTS_C,
    WARNINGS,
    board_shapes,
    has_m_profile_code,
    object_store,
    run_on_board,
    write_fused_ops_header,
)

from aot.emit_c.runtime_files import family_files, kernel_families
from aot.paths import kernel_file, kernel_include_flags, kernels_dir


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict:
    return object_store(tmp_path_factory.mktemp("objects"))


# the conv and gemm tests on Cortex-M cores: the M4's register tiles in scalar registers, loaded
# with VLDM (microkernel.h's inline assembly), and the same kernels with the plain-C loads
# (AOTC_NO_ASM); the M55's Helium kernels (arm_mve.h), with the plain loads of their LDMs
# (AOTC_NO_ASM), and their plain-C fallback (AOTC_NO_MVE)
# (the M55 runs 12 shapes: its heap is what its 512 KB DTCM leaves, too small for some of 100)
M_BUILDS = {
    "m4-asm": ("mps2-an386", CORTEX_M4, M4_SHAPES),
    "m4-no-asm": ("mps2-an386", [*CORTEX_M4, "-DAOTC_NO_ASM"], M4_SHAPES),
    # the int8 DSP paths' C-intrinsics fallback, as compilers without GNU assembly build it
    "m4-no-dsp-asm": ("mps2-an386", [*CORTEX_M4, "-DAOTC_DSP_NO_ASM"], M4_SHAPES),
    "m55-mve": ("mps3-an547", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"], 12),
    "m55-no-mve": ("mps3-an547", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-DAOTC_NO_MVE"], 12),
    "m55-no-asm": ("mps3-an547", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-DAOTC_NO_ASM"], 12),
    # -Os (MinSizeRel firmware): gcc 12 once computed a loop counter wrongly there only (conv_dw3_mve.h)
    "m55-mve-os": ("mps3-an547", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-Os"], 12),
}


def _boards_in_turn(families: list[str]) -> list:
    """(family, build) for each family on the M4 and the M55: in the full tier both where the family has M-profile
    code, else one, the boards in turn (family k on board k mod 2: every board keeps families), the other in the
    exhaustive tier."""
    out, k = [], 0
    for f in families:
        own = has_m_profile_code(f)
        for j, b in enumerate(("m4-asm", "m55-mve")):
            out.append(pytest.param(f, b, marks=() if own or j == k % 2 else pytest.mark.slow))
        k += not own
    return out


@pytest.mark.full
@pytest.mark.parametrize(("family", "build"), [(f, b) for f in ("conv", "gemm") for b in sorted(M_BUILDS)
                                               # (gemm.c has no LDM, and no Helium path to build at -Os)
                                               if not (f == "gemm" and b in ("m55-no-asm", "m55-mve-os"))
                                               and b != "m4-no-dsp-asm"]
                         + [("pool", "m55-mve")]  # (Helium's global average pool)
                         + _boards_in_turn(sorted(BOARD_SHAPES))
                         + [("tflite_int8", "m4-no-dsp-asm")])
def test_kernels_on_cortex_m(tmp_path, objects, family, build):
    """The conv and gemm tests on qemu's mps2-an386 (Cortex-M4F, no vector unit: 4 x 4 GEMM tiles,
    runs of 5 x 4 in the implicit GEMM, a whole panel per row of a GEMV, depthwise rows in
    registers) and mps3-an547 (Cortex-M55, Helium), fewer shapes, and the pool test on the M55 (its
    global average pool); output and exit code through semihosting."""
    board, cpu, shapes = M_BUILDS[build]
    if family in BOARD_SHAPES:
        shapes = BOARD_SHAPES[family][board == "mps3-an547"]
    out = run_on_board(objects, tmp_path, family, board, cpu, shapes)
    assert "MISMATCH" not in out and " ok " in out, out


# the int8 kernels on each Cortex-M core: the DSP extension's paths (M4, M55; on the M4 also its
# C-intrinsics fallback, as compilers without GNU assembly build it), plain C and the integer
# requantisation (M3); shapes per entry point
QUANT_BOARDS = {
    "m4": ("mps2-an386", CORTEX_M4, 150),
    "m4-no-asm": ("mps2-an386", [*CORTEX_M4, "-DAOTC_DSP_NO_ASM"], 60),
    "m55": ("mps3-an547", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"], 80),
    "m3": ("mps2-an385", ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"], 60),
}


# the M4's DSP paths in the fast tier
@pytest.mark.parametrize("core", [pytest.param(c, marks=() if c == "m4" else pytest.mark.full) for c in QUANT_BOARDS])
def test_quant_on_cortex_m(tmp_path, objects, core):
    """tests/kernels_c/test_quant_kernels.c on qemu's boards: every core gives the definition's integers."""
    board, cpu, shapes = QUANT_BOARDS[core]
    out = run_on_board(objects, tmp_path, "quant", board, cpu, shapes)
    assert "MISMATCH" not in out and " ok " in out, out


@pytest.mark.full
@pytest.mark.parametrize("level", ["-O3", "-O2", "-Os"])
def test_depthwise_multiplier_path_on_the_m4(tmp_path, objects, level):
    """DEPTHWISE_CONV_2D at depth multipliers above 1 by the DSP path (tfl_depthwise_s8_mult: its assembly's pairs of
    positions, the outputs requantised there or from the sums, C past 10 columns): test_tflite_int8_kernels.c's
    "(multiplier)" entry on the M4 at each level a bundle builds at: multipliers 2, 3 and 8 (and 5, 16), 1 to 4 input
    channels, odd and even window widths, SAME and VALID padding, strides 1 and 2, row dilation, per-channel
    multipliers and shifts, micro_speech's layer; LiteRT's reference arithmetic (tflite_int8_ref.c) bit for bit."""
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, level], 400, only="multiplier")
    assert "MISMATCH" not in out and f"(multiplier) ok ({board_shapes(400)} shapes)" in out, out


# the Cortex-M7's and M33's own schedules of the DSP paths' loops (quant_dsp.h, AOTC_DSP_M7: the dense layers'
# interleaved quads, the 4 x 2 block's quads, the 6-wide depthwise rows; AOTC_DSP_M33: the 4 x 2 block's quads), on by
# the M7's double-precision FPU and by Armv8-M mainline
CORES_OF_THEIR_OWN = {"m7": ("mps2-an500", ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"]),
                      "m33": ("mps2-an505", ["-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard",
                                             "-mfpu=fpv5-sp-d16"])}


@pytest.mark.full
@pytest.mark.parametrize(("core", "family", "shapes", "level"),
                         levels_in_turn((c, f, n) for c in sorted(CORES_OF_THEIR_OWN)
                                        for f, n in (("tflite_int8", 100), ("quant", 80))))
def test_dsp_paths_in_the_m7_and_m33_orders(tmp_path, objects, core, family, shapes, level):
    """The int8 kernels on qemu's mps2-an500 (Cortex-M7) and mps2-an505 (M33) at the levels of a Release and a
    MinSizeRel bundle, where the core's schedules replace the M4's: test_tflite_int8_kernels.c (FULLY_CONNECTED of 1
    to 40 quads, interleaved or not, a quad count past every multiple of 4 (the loop's entry); CONV_2D's 4 x 2 blocks,
    whose loop is entered past (-nq) mod 8 or 16 quads; DEPTHWISE_CONV_2D's ring, 6 q wide) against LiteRT's
    reference arithmetic, and test_quant_kernels.c (QGemm's interleaved weights, QLinearConv's 4 x 2 block) against
    quant_ref.c, bit for bit."""
    board, cpu = CORES_OF_THEIR_OWN[core]
    # (of the int8 entries, the ones those schedules are in: the others are the M4's code for another core, which the
    # M4's and the M55's runs check; all of them took 38 s of CI a core)
    scheduled = "aotc_tfl_fc_s8|aotc_tfl_conv_s8|aotc_tfl_conv_add_s8|aotc_tfl_depthwise_s8"
    only = scheduled if family == "tflite_int8" else ""
    out = run_on_board(objects, tmp_path, family, board, [*cpu, level], shapes, only=only)
    assert "MISMATCH" not in out and " ok " in out, out
    if family == "tflite_int8":
        assert re.search(r"^aotc_tfl_fc_s8 +ok", out, re.M) and re.search(r"^aotc_tfl_conv_s8 +ok", out, re.M), out


@pytest.mark.full
@pytest.mark.parametrize(("entry", "level"), levels_in_turn(["aotc_tfl_conv_s8", "aotc_tfl_conv_add_s8"]))
def test_conv_dsp_paths_on_the_m4(tmp_path, objects, entry, level):
    """CONV_2D on the M4's DSP path at the levels IC02's benchmark builds at (test_tflite_int8_kernels.c's entries,
    LiteRT's reference arithmetic in tflite_int8_ref.c bit for bit): patches of several blocks (3 x 3 over 29 to 40
    channels: balanced blocks, TFL_DSP_BLOCK_QUADS), their last block requantised in the kernel
    (tfl_dsp_mac4x2_rqa) on the groups whose channels all take the usual requantisation, a fifth of the cases with
    a channel at a right shift of 23 (TFL_DSP_CONV_RIGHT) and a fifth at 24 (that group by the store), odd tiles
    and channel counts; with the residual ADD fused, its tables summed and requantised in one loop
    (tfl_dsp_residual_fast), with and without TFLite's sign term (a third of the draws at the ADD's zero point
    -128)."""
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, level], 300, only=entry)
    assert "MISMATCH" not in out and re.search(rf"{entry} +ok \({board_shapes(300)} shapes\)", out), out


def test_kernels_compile_cleanly_with_clang(tmp_path):
    """Every kernel source, shipped or reference, and the C tests: -std=c99 -Wall -Wextra -Werror on clang."""
    require_tool("clang")
    sources = sorted({kernel_file(f) for fam in kernel_families() for f in family_files(fam) if f.endswith(".c")}
                     | set(kernels_dir().glob("*/*_ref.c"))
                     # test_overlap_kernels.c includes the cases its test module writes: that module builds it
                     | {c for c in TESTS_C.glob("*.c") if c.name != "test_overlap_kernels.c"})
    incs = [*kernel_include_flags(), f"-I{TESTS_C}", f"-I{write_fused_ops_header(tmp_path)}"]

    def one(src: Path) -> str:
        r = subprocess.run(["clang", *WARNINGS, "-fsyntax-only", *incs, str(src)], capture_output=True, text=True)
        return "" if r.returncode == 0 else f"{src.name}:\n{r.stderr[-3000:]}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = [e for e in pool.map(one, sources) if e]
    assert not errors, "\n".join(errors)


def arm_libc_includes() -> list[str]:
    """arm-none-eabi-gcc's C library headers (not its own compiler headers: clang brings its arm_acle.h)."""
    r = subprocess.run(["arm-none-eabi-gcc", "-xc", "-E", "-v", os.devnull], capture_output=True, text=True)
    lines = r.stderr.split("#include <...> search starts here:")[-1].split("End of search list.")[0].split()
    gcc_own = Path("/usr/lib/gcc").resolve()
    return [f"-isystem{d}" for d in (Path(p).resolve() for p in lines) if gcc_own not in d.parents]


CLANG_CORES = {"m4": ["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16"], "m7": ["-mcpu=cortex-m7", "-mfpu=fpv5-d16"],
               "m33": ["-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16"]}


@pytest.mark.full
@pytest.mark.parametrize(("core", "level"), levels_in_turn(sorted(CLANG_CORES), ("-O2", "-Os")))
def test_dsp_kernels_compile_with_clang_for_cortex_m(tmp_path, core, level):
    """The int8 kernels' DSP paths, inline assembly included, compiled by clang for the Cortex-M4, and for the M7 and
    M33, whose loops have orders of their own (quant_dsp.h's AOTC_DSP_M7, AOTC_DSP_M33: clang's assembler took no
    `ldr.w` with a negative offset there): an asm block that gcc allocates registers for may need more than clang's
    allocator finds (the depthwise band's two-position block, 14 registers, failed there). The TFLM signal kernels
    too (the FFT's complex products by ACLE's DSP intrinsics)."""
    require_tool("clang", "arm-none-eabi-gcc")
    sources = [kernel_file(f) for fam in ("tflite_int8", "tflm_signal") for f in family_files(fam) if f.endswith(".c")]
    flags = ["--target=arm-none-eabi", *CLANG_CORES[core], "-mthumb", "-mfloat-abi=hard",
             level, *WARNINGS, *arm_libc_includes(), *kernel_include_flags()]

    def one(src: Path) -> str:
        r = subprocess.run(["clang", *flags, "-c", str(src), "-o", str(tmp_path / f"{src.stem}.o")],
                           capture_output=True, text=True)
        return "" if r.returncode == 0 else f"{src.name}:\n{r.stderr[-3000:]}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = [e for e in pool.map(one, sources) if e]
    assert not errors, "\n".join(errors)


# Helium's entries on the M55 (tflite_int8_mve.h's assembly loops), the word of their names test_tflite_int8_kernels.c
# takes, and the entries each must report
HELIUM_ENTRIES = {
    "conv": ("aotc_tfl_conv", ("aotc_tfl_conv_s8", "aotc_tfl_conv_add_s8", r"aotc_tfl_conv_s8 \(pointwise, late\)",
                               r"aotc_tfl_conv_add_s8 \(residual, late\)")),
    "depthwise": ("aotc_tfl_depthwise_s8", ("aotc_tfl_depthwise_s8", r"aotc_tfl_depthwise_s8 \(ring\)",
                                            r"aotc_tfl_depthwise_s8 \(ring, 6 q wide\)")),
    "fc": ("aotc_tfl_fc_s8", ("aotc_tfl_fc_s8",)),
}


@pytest.mark.full
@pytest.mark.parametrize(("op", "level"),  # -O0: a Debug build's (the assembly's C forms)
                         levels_in_turn(sorted(HELIUM_ENTRIES), ("-O3", "-O2", "-Os", "-O0"), each=2))
def test_helium_paths_on_the_m55(tmp_path, objects, op, level):
    """CONV_2D (alone and with its fused ADD), DEPTHWISE_CONV_2D and FULLY_CONNECTED by Helium's paths on the M55,
    at each level a bundle builds at (the assembly loops take every general register there but sp and pc: each
    level's register allocation must fit): test_tflite_int8_kernels.c's entries, LiteRT's reference arithmetic
    (tflite_int8_ref.c) bit for bit. CONV_2D: tfl_mve_dot4q's tail-predicated DLSTP / LETP loop (patch lengths with
    every tail past whole vectors of 16, and none), a position's groups (tfl_mve_dot_groups) and their usual
    requantisation (tfl_mve_requant_groups), 1 x 1 layers 4 channels over every position (tfl_mve_pw_group), 4 to 24
    channels out (the last group of 4 overlapping the one before), windows of 1 to 5 x 5, strides, dilations,
    padding, the usual requantisation and others; the fused residual ADD in vectors, and by tables
    (tfl_mve_residual_fast, "(residual, late)": no upper clamp, half at the zero point -128). DEPTHWISE_CONV_2D:
    MobileNet's and KWS's 3 x 3 layers of 4n channels (tfl_mve_dw3_row's blocks of 3 and of 2 at column strides 1
    and 2, rows of 2 to 30, SAME and VALID), the others by the DSP path. FULLY_CONNECTED: tfl_mve_dot4q's and
    tfl_mve_sum4q's loops, any input length, and the layers of under 4 outputs by the plain loop: no DSP rows in the
    image (issue 67: Helium's path takes every layer they would)."""
    only, entries = HELIUM_ENTRIES[op]
    cpu = ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", level]
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps3-an547", cpu, 150, only=only)
    for entry in entries:
        assert re.search(rf"^{entry} +ok \({board_shapes(150)} shapes\)$", out, re.M), out
    assert "MISMATCH" not in out, out
    if op == "fc":
        elf = tmp_path / "test_tflite_int8_kernels.elf"
        fc = "".join(_code_of(elf, f) for f in ("aotc_tfl_fc_s8", "tfl_fc_", "tfl_dsp_fc_"))
        assert "<aotc_tfl_fc_s8>:" in fc and not re.search(r"<tfl_(dsp_fc_store|fc_widen|fc_rows_compact|fc_s8_dsp)"
                                                           r"[.>]|\tsmlad", fc), fc[-2000:]


# the compact depthwise path alone (a --flash-budget level's, aot/flash.py "dw-compact"): every other depthwise DSP
# path left out, as the level's aotc_symbols.h leaves them
COMPACT_DW = ["-DAOTC_TFL_DW_DSP=0", "-DAOTC_TFL_DW_MULT=0"]


@pytest.mark.full
@pytest.mark.parametrize("level", ["-O3", "-Os"])
def test_compact_depthwise_path_on_the_m4(tmp_path, objects, level):
    """DEPTHWISE_CONV_2D by the compact DSP path (tfl_depthwise_s8_compact, issue 67) on the M4 at a Release's and a
    MinSizeRel's level: test_tflite_int8_kernels.c's depthwise entries (random windows, strides, dilations and pads,
    channel counts not a multiple of 4: the last group's tail, depth multipliers 2, 3, 8 and more, MobileNet's 3 x 3,
    clamps narrower than int8, per-channel multipliers and shifts) against LiteRT's reference arithmetic bit for bit;
    the path is in the image (its own function, not the plain loop's)."""
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, *COMPACT_DW, level], 300,
                       only="depthwise_s8")
    assert "MISMATCH" not in out and re.search(rf"aotc_tfl_depthwise_s8 +ok \({board_shapes(300)} shapes\)", out), out
    assert re.search(r"aotc_tfl_depthwise_s8 \(multiplier\) +ok", out), out
    syms = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "test_tflite_int8_kernels.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert "tfl_depthwise_s8_compact" in syms


# the compact multiplier path alone (a --flash-budget level's, aot/flash.py "dw-compact" on a layer of depth multiplier
# above 1): the multiplier path and the compact one left out, as the level's aotc_symbols.h leaves them on micro_speech
MULT_COMPACT_DW = ["-DAOTC_TFL_DW_DSP=0", "-DAOTC_TFL_DW_MULT=0", "-DAOTC_TFL_DW_COMPACT=0"]


@pytest.mark.full
@pytest.mark.parametrize(("pairs", "level"), levels_in_turn([1, 0]))
def test_compact_multiplier_path_on_the_m4(tmp_path, objects, level, pairs):
    """DEPTHWISE_CONV_2D at depth multipliers above 1 by the compact multiplier path (tfl_depthwise_s8_multc, issue 67)
    on the M4 at a Release's and a MinSizeRel's level, two positions a turn and (AOTC_TFL_DW_MULTC_PAIRS 0, the
    "dwm-single" level) one, each output by requant_double: test_tflite_int8_kernels.c's multiplier entry (multipliers
    2, 3, 5, 8 and 16: blocks of 4 outputs and a last part, 1 to 4 input channels, windows to 10 x 9 with odd widths,
    strides 1 to 3 (stride 1's pairs two positions apart, odd positions unaligned), row dilation, micro_speech's layer)
    against LiteRT's reference arithmetic bit for bit; the path is in the image, one position's store only at 0."""
    flags = [*MULT_COMPACT_DW, f"-DAOTC_TFL_DW_MULTC_PAIRS={pairs}"]
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, *flags, level], 300,
                       only="depthwise_s8")
    ok = rf"aotc_tfl_depthwise_s8 \(multiplier\) +ok \({board_shapes(300)} shapes\)"
    assert "MISMATCH" not in out and re.search(ok, out), out
    syms = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "test_tflite_int8_kernels.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert "tfl_depthwise_s8_multc" in syms
    assert ("tfl_dsp_dwmc_store1" in syms) == (pairs == 0), syms
    assert bool(re.search(r"tfl_dsp_dwmc_store\b", syms)) == (pairs == 1), syms


# no depthwise DSP path: the plain loop in its faster form (aot/flash.py "dw-plain", as the level's aotc_symbols.h
# says: depth multiplier 1 without divisions; "fc-small" and the levels after it divide at every multiplier,
# AOTC_TFL_DW_LOOP_M1 0), or in its smallest form with its multiplier-4 path beside it, as a --ram-budget that leaves a
# layer of multiplier 4, 8, ... no scratch compiles them (AOTC_TFL_DW_SMALL_MULT4)
PLAIN_DW = {"dw-plain": [f"-DAOTC_TFL_DW_{m}=0" for m in ("DSP", "MULT", "COMPACT", "MULT_COMPACT", "LOOP_SMALL")],
            "fc-small": [f"-DAOTC_TFL_DW_{m}=0" for m in ("DSP", "MULT", "COMPACT", "MULT_COMPACT", "LOOP_SMALL",
                                                           "LOOP_M1")],
            "starved": [f"-DAOTC_TFL_DW_{m}=0" for m in ("DSP", "MULT", "COMPACT", "MULT_COMPACT")]}


@pytest.mark.full
@pytest.mark.parametrize(("form", "level"), levels_in_turn(sorted(PLAIN_DW)))
def test_plain_depthwise_loop_on_the_m4(tmp_path, objects, form, level):
    """DEPTHWISE_CONV_2D by the plain loop on the M4: at the dw-plain level its faster form (4 output channels at a
    time, their input channels' offsets at a depth multiplier above 1, at multiplier 1 0 to 3 without divisions; at
    fc-small by divisions at every multiplier, AOTC_TFL_DW_LOOP_M1 0; a last part channel by channel), without scratch
    under a budget its smallest form; in both, at multipliers 4, 8, ... a window function of two taps a turn by SMLABB
    / SMLATB, an odd last tap alone, in assembly at -O3 and -Os (issue 67): test_tflite_int8_kernels.c's depthwise
    entries against LiteRT's reference arithmetic bit for bit; no depthwise DSP function in the image but that
    window's."""
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, *PLAIN_DW[form], level], 300,
                       only="depthwise_s8")
    assert "MISMATCH" not in out and re.search(rf"aotc_tfl_depthwise_s8 +ok \({board_shapes(300)} shapes\)", out), out
    assert re.search(r"aotc_tfl_depthwise_s8 \(multiplier\) +ok", out), out
    syms = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "test_tflite_int8_kernels.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert not re.search(r"tfl_depthwise_s8_(compact|multc|mult|dsp)\b", syms), syms
    assert "tfl_dw_m4_window" in syms, syms


# the compact conv path alone (a --flash-budget level's, aot/flash.py "conv-compact"): every other conv DSP path
# left out but the fused ADD's, as the level's aotc_symbols.h leaves them
COMPACT_CONV = [f"-DAOTC_TFL_CONV_{m}=0" for m in ("ROWS", "RGB", "FUSED", "SINGLE", "DBL", "FLOOR", "SIGN", "ODD",
                                                  "PLAIN", "LAST")]


@pytest.mark.full
@pytest.mark.parametrize(("entry", "level"), levels_in_turn(["aotc_tfl_conv_s8", "aotc_tfl_conv_add_s8"]))
def test_compact_conv_path_on_the_m4(tmp_path, objects, entry, level):
    """CONV_2D (alone and with its residual ADD fused) by the compact DSP path (tfl_conv_s8_compact, issue 67) on the
    M4 at a Release's and a MinSizeRel's level: test_tflite_int8_kernels.c's entries (patches of any length, a last
    part of under 4 bytes, odd channel counts, pads, strides, dilations, right shifts past 22, clamps narrower than
    int8) against LiteRT's reference arithmetic bit for bit; the path is in the image."""
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, *COMPACT_CONV, level], 300,
                       only=entry)
    assert "MISMATCH" not in out and re.search(rf"{entry} +ok \({board_shapes(300)} shapes\)", out), out
    syms = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "test_tflite_int8_kernels.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert "tfl_conv_s8_compact" in syms


@pytest.mark.full
@pytest.mark.parametrize(("entry", "level"),
                         levels_in_turn(["aotc_tfl_conv_s8", "aotc_tfl_conv_add_s8", "aotc_tfl_depthwise_s8"]))
def test_portable_loops_on_the_m4(tmp_path, objects, entry, level):
    """CONV_2D (alone and with its residual ADD) and DEPTHWISE_CONV_2D by the portable kernels' plain loops on the M4
    (AOTC_NO_INTRINSICS, the --flash-budget level "portable" builds at -Os; issue 67: the convs two positions by two
    output channels, 1 x 1 ones without the input offset, a last odd channel or position alone; depth multiplier 1 by
    fixed offsets): test_tflite_int8_kernels.c's entries (pointwise and windowed, odd channel and position counts, pads,
    strides, dilations) against LiteRT's reference arithmetic bit for bit; no DSP path in the image."""
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, "-DAOTC_NO_INTRINSICS", level],
                       300, only=entry)
    assert "MISMATCH" not in out and re.search(rf"{entry} +ok \({board_shapes(300)} shapes\)", out), out
    syms = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "test_tflite_int8_kernels.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert not re.search(r"tfl_(conv|depthwise)_s8_(compact|multc|mult|dsp)\b|tfl_dsp_", syms), syms


# FULLY_CONNECTED's --flash-budget forms (aot/flash.py, issue 67), as the levels' aotc_symbols.h set them: the compact
# DSP rows two outputs a turn ("fc-compact"), one a turn with no sums in scratch ("fc-small"), the portable 4-output
# loop ("portable"), the smallest loops with two outputs a turn ("portable-fc2") and one ("portable-small")
FC_FORMS = {
    "fc-compact": (["-DAOTC_TFL_FC_DSP=0"], None, r"aotc_dsp_gemv4"),
    "fc-small": (["-DAOTC_TFL_FC_DSP=0", "-DAOTC_TFL_FC_PAIRS=0"], "tfl_fc_dot_small", r"aotc_dsp_gemv4"),
    "portable": (["-DAOTC_NO_INTRINSICS"], "tfl_fc_dot4_plain", r"tfl_fc_dot_small|aotc_dsp_"),
    "portable-fc2": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0"], None, r"tfl_fc_dot|aotc_dsp_"),
    "portable-small": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_FC_PAIRS=0"], None,
                       r"tfl_fc_dot|aotc_dsp_"),
}


@pytest.mark.full
@pytest.mark.parametrize(("form", "level"), levels_in_turn(FC_FORMS))
def test_fc_flash_budget_forms_on_the_m4(tmp_path, objects, form, level):
    """FULLY_CONNECTED in each --flash-budget level's form on the M4 at a Release's and a MinSizeRel's level:
    test_tflite_int8_kernels.c's entry (1 to 4 rows, inputs 1 to 160 with tails of 1 to 3 past the last quad, 1 to 32
    outputs, odd counts: the last pair overlapping the one before, a RAM budget's blocks of kq quads and ob outputs, the
    weights interleaved by blocks of 4 rows) against LiteRT's reference arithmetic bit for bit; the form's function in
    the image where it has its own, the others' not."""
    flags, own, absent = FC_FORMS[form]
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, *flags, level], 300,
                       only="aotc_tfl_fc_s8")
    assert "MISMATCH" not in out and re.search(rf"aotc_tfl_fc_s8 +ok \({board_shapes(300)} shapes\)", out), out
    syms = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "test_tflite_int8_kernels.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert own is None or own in syms, syms
    assert not re.search(absent, syms), syms


@pytest.mark.full
@pytest.mark.parametrize(("entry", "pairs", "level"),
                         levels_in_turn((e, p) for e in ("aotc_tfl_conv_s8", "aotc_tfl_conv_add_s8") for p in (1, 0)))
def test_small_conv_path_on_the_m4(tmp_path, objects, entry, pairs, level):
    """CONV_2D (alone and with its residual ADD fused) by the compact path one position at a time (tfl_conv_s8_small,
    the --flash-budget levels "conv-small" and, one output channel a turn, "conv-smallest"; issue 67) on the M4 at a
    Release's and a MinSizeRel's level: test_tflite_int8_kernels.c's entries (patches of any length, a last part of
    under 4 bytes, odd channel counts: the last with the one before, one channel alone, pads, strides, dilations)
    against LiteRT's reference arithmetic bit for bit; the path is in the image, the 2 x 2 kernel not."""
    flags = [*COMPACT_CONV, "-DAOTC_TFL_CONV_2X2=0", f"-DAOTC_TFL_CONV_PAIRS={pairs}"]
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps2-an386", [*CORTEX_M4, *flags, level], 300, only=entry)
    assert "MISMATCH" not in out and re.search(rf"{entry} +ok \({board_shapes(300)} shapes\)", out), out
    syms = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "test_tflite_int8_kernels.elf")], capture_output=True,
                          text=True, check=True).stdout
    assert "tfl_conv_s8_small" in syms and "tfl_dsp_cs_sums" in syms and "tfl_dsp_cc_2x2" not in syms, syms



def _syms(elf: Path) -> str:
    return subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout


def _code(elf: Path, fn: str) -> str:
    """Function fn's disassembly (objdump names few MVE instructions: DLSTP, VMUL.I32 and VQRDMULH among them)."""
    code = subprocess.run(["arm-none-eabi-objdump", "-d", f"--disassemble={fn}", str(elf)], capture_output=True,
                          text=True, check=True).stdout
    assert f"<{fn}>:" in code, (fn, code[-400:])
    return code


def _code_of(elf: Path, prefix: str) -> str:
    """The disassembly of every function whose name starts with prefix (a static one gcc renamed: .constprop, .part)."""
    code = subprocess.run(["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True, text=True, check=True).stdout
    return "\n\n".join(b for b in code.split("\n\n") if re.match(rf"[0-9a-f]+ <{re.escape(prefix)}[.>]", b.strip()))


# The M55's --flash-budget forms between Helium's kernels and the portable ones (aot/flash.py HELIUM_LEVELS, issue 67),
# as the levels' aotc_symbols.h set them: the entries each runs, and a test of the image that fails where the form's
# macros change nothing
M55_FORMS: dict[str, tuple[list[str], str, Callable[[Path], bool]]] = {
    # Helium's CONV_2D by its general loop alone (tfl_mve_dot4q's DLSTP loop): one requantisation in its code (seven
    # with the 1 x 1, grouped and usual forms)
    "mve-conv-compact": (["-DAOTC_TFL_MVE_CONV_FAST=0"], "aotc_tfl_conv",
                         lambda e: "dlstp" in (c := _code(e, "tfl_conv_s8_mve")) and c.count("vqrdmulh") == 1),
    # and each channel's dot product alone, 16 bytes a turn in 8-bit lanes (tfl_mve_dot1_8's DLSTP.8 loop, objdump
    # names no VMLADAVA; no DLSTP.16: the "mve-conv-single8" and "mve-conv-single" levels), 4 outputs still
    # requantised as one vector
    "mve-conv-single8": (["-DAOTC_TFL_MVE_CONV_FAST=0", "-DAOTC_TFL_MVE_CONV_QUAD=0"], "aotc_tfl_conv",
                         lambda e: "dlstp.16" not in (c := _code(e, "tfl_conv_s8_mve")) and "dlstp.8" in c
                         and c.count("vqrdmulh") == 1),
    # no Helium CONV_2D: the compact DSP conv one position and one channel a turn
    "mve-conv": (["-DAOTC_TFL_MVE_CONV=0", *COMPACT_CONV, "-DAOTC_TFL_CONV_2X2=0", "-DAOTC_TFL_CONV_PAIRS=0"],
                 "aotc_tfl_conv", lambda e: "tfl_conv_s8_small" in (s := _syms(e)) and "tfl_conv_s8_mve" not in s),
    # no Helium 3 x 3 depthwise (its VMUL.I32 rows): Helium's compact loop (8 channels a vector in 16-bit lanes, its x
    # less x_zero by VSUB.I16; the "mve-dw-compact" level, the compact DSP path left out), the plain loop
    "mve-dw-compact": (["-DAOTC_TFL_MVE_DW=0", *COMPACT_DW, "-DAOTC_TFL_DW_COMPACT=0"], "aotc_tfl_depthwise_s8",
                       lambda e: "vsub.i16" in _code_of(e, "tfl_depthwise_s8_mvec")
                       and "vmul.i32" not in _code(e, "aotc_tfl_depthwise_s8")
                       and "tfl_depthwise_s8_compact" not in _syms(e)),
    # nor that: Helium's loop of last resort alone (4 channels a vector, their input bytes gathered; "mve-dw-small")
    "mve-dw-small": (["-DAOTC_TFL_MVE_DW=0", "-DAOTC_TFL_MVE_DW_COMPACT=0", *COMPACT_DW, "-DAOTC_TFL_DW_COMPACT=0",
                      "-DAOTC_TFL_DW_MULT_COMPACT=0"], "aotc_tfl_depthwise_s8",
                     lambda e: "tfl_depthwise_s8_mves" in (s := _syms(e)) and "tfl_depthwise_s8_mvec" not in s
                     and "tfl_depthwise_s8_compact" not in s and "tfl_depthwise_s8_multc" not in s),
    # the compact DSP depthwise path, that loop after it
    "mve-dw": (["-DAOTC_TFL_MVE_DW=0", "-DAOTC_TFL_MVE_DW_COMPACT=0", *COMPACT_DW], "aotc_tfl_depthwise_s8",
               lambda e: "tfl_depthwise_s8_compact" in _syms(e)
               and "vmul.i32" not in _code(e, "aotc_tfl_depthwise_s8")),
    "mve-dw-plain": (["-DAOTC_TFL_MVE_DW=0", "-DAOTC_TFL_MVE_DW_COMPACT=0", *COMPACT_DW, "-DAOTC_TFL_DW_COMPACT=0",
                      "-DAOTC_TFL_DW_MULT_COMPACT=0", "-DAOTC_TFL_DW_LOOP_SMALL=0"], "aotc_tfl_depthwise_s8",
                     lambda e: "tfl_depthwise_s8_compact" not in _syms(e)
                     and "vmul.i32" not in _code(e, "aotc_tfl_depthwise_s8")),
    # the portable kernels (AOTC_NO_INTRINSICS, their smallest loops as on the M55) with their dot products and
    # requantisation by Helium (AOTC_TFL_PORTABLE_MVE, the "portable-mve" level): the conv's DLSTP loop (and its fused
    # ADD's lanes), the depthwise's VMUL.I32 lanes
    "portable-mve-conv": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_PORTABLE_MVE_S8=0",
                           "-DAOTC_TFL_PORTABLE_MVE_PW=0", "-DAOTC_TFL_PORTABLE_MVE_WIN=0"], "aotc_tfl_conv",
                          lambda e: "dlstp" in _code_of(e, "tfl_conv_s8") + _code_of(e, "aotc_tfl_conv_s8")
                          and "tfl_conv_s8_mve" not in (s := _syms(e)) and "tfl_conv_s8_pmve8" not in s),
    # (-O3 inlines tfl_conv_s8 in aotc_tfl_conv_s8)
    # the "portable-mve-s8" level's conv (AOTC_TFL_PORTABLE_MVE_S8): 4 channels over every position by VMLADAVA.S8, x's
    # zero point by the weights' sums (tfl_conv_s8_pmve8: windows whose rows are whole vectors, clipped or not), small
    # windows by a stack patch (tfl_conv_s8_pmve8_patch), the others (column dilation 2) by the loop above
    "portable-mve-s8-conv": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0"], "aotc_tfl_conv",
                             lambda e: "dlstp.8" in "".join(_code_of(e, f) for f in (
                                 "tfl_conv_s8", "aotc_tfl_conv_s8", "tfl_conv_s8_pmve8", "tfl_conv_s8_pmve8_patch"))
                             and "tfl_conv_s8_mve" not in _syms(e)),  # (the widened loop's DLSTP.16 only without)
    # the "portable-mve-dot8" level's convs (AOTC_TFL_PORTABLE_MVE_PW, _WIN, each where its layers are): the pointwise
    # layers, or those whose window rows are whole vectors (clipped or not), 4 channels over every position by one
    # noinline 8-bit dot product call a window (tfl_pmve_dot8: DLSTP.8), the others by the portable-mve loop
    "portable-mve-dot8-pw": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_PORTABLE_MVE_S8=0",
                              "-DAOTC_TFL_PORTABLE_MVE_WIN=0"], "aotc_tfl_conv",
                             lambda e: "dlstp.8" in _code_of(e, "tfl_pmve_dot8")
                             and "tfl_conv_s8_pmve_pw" in (s := _syms(e)) and "tfl_conv_s8_pmve_win" not in s
                             and "tfl_conv_s8_pmve8" not in s),
    "portable-mve-dot8-win": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_PORTABLE_MVE_S8=0",
                               "-DAOTC_TFL_PORTABLE_MVE_PW=0"], "aotc_tfl_conv",
                              lambda e: "dlstp.8" in _code_of(e, "tfl_pmve_dot8")
                              and "tfl_conv_s8_pmve_win" in (s := _syms(e)) and "tfl_conv_s8_pmve_pw" not in s
                              and "tfl_conv_s8_pmve8" not in s),
    # "portable-mve-conv" (PORTABLE_MVE_RQ and _DW 0): the conv's outputs requantised one by one, by requant_double
    # where a fused ADD's code is compiled
    "portable-mve-conv-only": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_PORTABLE_MVE_RQ=0",
                                "-DAOTC_TFL_PORTABLE_MVE_DW=0"], "aotc_tfl_conv",
                               lambda e: "dlstp" in (c := _code_of(e, "tfl_conv_s8") + _code_of(e, "aotc_tfl_conv_s8"))
                               and "vqrdmulh" not in c and "tfl_conv_s8_pmve8" not in _syms(e)),
    "portable-mve-dw": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0"], "aotc_tfl_depthwise_s8",
                        lambda e: "vmul.i32" in _code_of(e, "aotc_tfl_depthwise_s8")
                        and "tfl_depthwise_s8_mve" not in _syms(e)),
    # with their outputs requantised one by one in C (AOTC_TFL_PORTABLE_MVE_RQ 0, "portable-mve-dots"): no VQRDMULH
    "portable-mve-dots-conv": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_PORTABLE_MVE_RQ=0"],
                               "aotc_tfl_conv", lambda e: "dlstp" in (c := _code_of(e, "tfl_conv_s8")
                                                                      + _code_of(e, "aotc_tfl_conv_s8"))
                               and "vqrdmulh" not in c),
    "portable-mve-dots-dw": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_PORTABLE_MVE_RQ=0"],
                             "aotc_tfl_depthwise_s8",
                             lambda e: "vmul.i32" in (c := _code_of(e, "aotc_tfl_depthwise_s8"))
                             and "vqrdmulh" not in c),
    # the conv's outputs alone requantised by vectors ("portable-mve-rqconv": PORTABLE_MVE_RQ_ADD and _RQ_DW 0): the
    # conv's VQRDMULH lanes, its fused ADD by tfl_residual_run (one VQRDMULH requantisation where portable-mve has four)
    "portable-mve-rqconv-conv": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0", "-DAOTC_TFL_PORTABLE_MVE_S8=0",
                                  "-DAOTC_TFL_PORTABLE_MVE_RQ_ADD=0", "-DAOTC_TFL_PORTABLE_MVE_PW=0",
                                  "-DAOTC_TFL_PORTABLE_MVE_WIN=0"], "aotc_tfl_conv",
                                 lambda e: "dlstp" in (c := "".join(_code_of(e, f) for f in (
                                     "tfl_conv_s8", "aotc_tfl_conv_s8", "aotc_tfl_conv_add_s8", "tfl_pmve_rq")))
                                 and 0 < c.count("vqrdmulh") < 4),
    "portable-mve-rqconv-dw": (["-DAOTC_NO_INTRINSICS", "-DAOTC_TFL_PORTABLE_FAST=0",
                                "-DAOTC_TFL_PORTABLE_MVE_RQ_DW=0"], "aotc_tfl_depthwise_s8",
                               lambda e: "vmul.i32" in (c := _code_of(e, "aotc_tfl_depthwise_s8"))
                               and "vqrdmulh" not in c),
    # Helium's FULLY_CONNECTED one output at a time (AOTC_TFL_MVE_FC_QUAD 0, where FULLY_CONNECTED leads: one DLSTP.8
    # loop of VMLADAVA and VADDVA inline in aotc_tfl_fc_s8), every layer's: no 4-output path, DSP rows or plain loop
    "mve-fc-one": (["-DAOTC_TFL_MVE_FC_QUAD=0", "-DAOTC_TFL_FC_DSP=0", "-DAOTC_TFL_FC_PAIRS=0"], "aotc_tfl_fc_s8",
                       lambda e: "dlstp.8" in (c := _code(e, "aotc_tfl_fc_s8"))
                       and "tfl_fc_s8_mve" not in (s := _syms(e)) and "tfl_fc_dot_small" not in s
                       and "ldrsb" not in c),
    # no Helium FULLY_CONNECTED (its DLSTP loops): the DSP path's smallest rows
    "mve-fc": (["-DAOTC_TFL_MVE_FC=0", "-DAOTC_TFL_FC_DSP=0", "-DAOTC_TFL_FC_PAIRS=0"], "aotc_tfl_fc_s8",
               lambda e: "tfl_fc_dot_small" in _syms(e) and "dlstp" not in _code(e, "aotc_tfl_fc_s8")),
    # nor those ("mve-conv-single", where FULLY_CONNECTED does little of the work): the plain loop, no DSP code (no
    # SXTB16 widening, no SMLAD)
    "mve-conv-single-fc": (["-DAOTC_TFL_MVE_FC=0", "-DAOTC_TFL_FC_DSP=0", "-DAOTC_TFL_FC_PAIRS=0",
                            "-DAOTC_TFL_FC_SMALL=0"], "aotc_tfl_fc_s8",
                           lambda e: "tfl_fc_dot_small" not in _syms(e)
                           and not re.search(r"\tsmla[dt]|\tsxtb16|dlstp", _code(e, "aotc_tfl_fc_s8"))),
    # AVERAGE_POOL_2D by the plain loop there (AOTC_TFL_POOL_DSP 0): no SXTAB16 sums
    "mve-conv-single-pool": (["-DAOTC_TFL_POOL_DSP=0"], "aotc_tfl_avgpool_s8",
                             lambda e: "sxtab16" not in _code_of(e, "aotc_tfl_avgpool_s8") + _code_of(e, "pool")),
}


@pytest.mark.full
@pytest.mark.parametrize(("form", "level"), levels_in_turn(M55_FORMS))
def test_helium_flash_budget_forms_on_the_m55(tmp_path, objects, form, level):
    """The M55's --flash-budget forms (issue 67: AOTC_TFL_MVE_CONV_FAST, _CONV, _DW, _FC 0, with the DSP levels' macros
    as aotc_symbols.h sets them) at a Release's and a MinSizeRel's level on mps3-an547: test_tflite_int8_kernels.c's
    entries (CONV_2D alone and with its fused ADD: patch lengths with every tail past whole vectors of 16, odd channel
    counts, pads, strides, dilations; the depthwise layers of any window and multiplier; FULLY_CONNECTED of any input
    length) against LiteRT's reference arithmetic bit for bit; the form's code in the image, Helium's left out."""
    flags, only, check = M55_FORMS[form]
    cpu = ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", *flags, level]
    out = run_on_board(objects, tmp_path, "tflite_int8", "mps3-an547", cpu, 150, only=only)
    assert "MISMATCH" not in out and re.search(rf" +ok \({board_shapes(150)} shapes\)$", out, re.M), out
    assert check(tmp_path / "test_tflite_int8_kernels.elf"), form
