"""The kernel tests written in C (tests/kernels_c/test_<family>_kernels.c): every kernel of the conv, gemm and
pool families, and of those in REF_FAMILIES (attention, elementwise, fused, norm, recurrent, reduce, resize,
signal, tflm_signal, random, philox ...), against its reference kernel (runtime_c/kernels/<family>/<family>_ref.c)
over random shapes, with a fixed seed; REF_FAMILIES' tests also run on the Cortex-M4 and M55 boards under qemu.

Each test program is compiled with gcc -O2 under AddressSanitizer and UndefinedBehaviorSanitizer
(-std=c99 -Wall -Wextra -Werror) against the runtime sources a bundle ships for the family
(aot/emit_c/runtime_files.py) and its reference, and fails on any mismatch or any read or write past
a tensor (its buffers are heap allocations of exactly their size). Two host builds take the kernels'
other block sizes: -march=native (a host bundle's: GEMM tiles of 6 x 16 with AVX) and the baseline
ISA with AOTC_DW3_BLOCK=1 (6 x 8 tiles on x86-64 SSE2; the depthwise 3 x 3 kernel output by output,
as on targets without vector units). The pool test also runs with AOTC_NO_INTRINSICS: the plain-C
twins of pool_int8.c's SSE2 paths and of pool_avx512.h's AVX-512 float MaxPool (pool.c's maxpool_rows_f32),
which the native build must take on hosts with AVX-512F. The conv and gemm tests also run on a
Cortex-M4 and a Cortex-M55 under qemu, with fewer shapes: the M4 with and without the VLDM inline
assembly, the M55 with and without its Helium intrinsics. The quant test (every int8 / uint8 kernel
against quant_ref.c, exactly) runs on every Cortex-M board: the DSP extension's paths on the M4 (with
and without their inline assembly) and the M55, plain C and the integer requantisation on the M3, which
the host also builds. The tests of shape, index, detect, loss and tflite_int8 run on the host builds and
on the M4 and M55. All kernel sources and tests must also compile cleanly with clang.
"""

from __future__ import annotations

import os
import platform
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import compiler_launcher, require_tool

from aot.emit_c.runtime_files import family_files, kernel_families
from aot.paths import cmake_dir, kernel_file, kernel_include_flags, kernels_dir

TESTS_C = Path(__file__).resolve().parent
SEED = 1
# the families whose kernels each test links (conv's call the GEMM core), and shapes per entry point
CALLS = {"conv": ("conv", "gemm"), "gemm": ("gemm",), "pool": ("pool",), "quant": ("quant",)}
SHAPES = {"conv": 600, "gemm": 1000, "pool": 1000, "quant": 600}
M4_SHAPES = 100  # per conv entry point on the Cortex-M4 (qemu)
# the families whose references are <family>_ref.c (issue 49), one a line: the families the test links, shapes
# per entry point on the host builds, and on the M4 and the M55 boards
REF_FAMILIES = {
    "attention": (("attention",), 1000, (100, 100)),
    "detect": (("detect",), 1000, (150, 150)),
    "index": (("index",), 1000, (150, 150)),
    "loss": (("loss",), 1000, (150, 150)),
    "random": (("random",), 300, (30, 30)),
    "philox": (("philox",), 300, (30, 30)),
    "shape": (("shape",), 600, (60, 60)),
    "tflite_int8": (("tflite_int8",), 600, (100, 100)),
    "tflite_hybrid": (("tflite_hybrid",), 600, (100, 100)),
    "elementwise": (("elementwise",), 150, (12, 12)),
    "fused": (("fused", "elementwise"), 1500, (200, 200)),  # (trees of ops)
    "norm": (("norm",), 1000, (60, 60)),
    "recurrent": (("recurrent", "gemm"), 600, (60, 60)),
    "reduce": (("reduce",), 600, (40, 40)),
    "resize": (("resize",), 1000, (100, 100)),
    "signal": (("signal",), 1000, (100, 100)),
    "tflm_signal": (("tflm_signal",), 300, (30, 30)),
}
CALLS |= {f: calls for f, (calls, _, _) in REF_FAMILIES.items()}
SHAPES |= {f: shapes for f, (_, shapes, _) in REF_FAMILIES.items()}
BOARD_SHAPES = {f: board for f, (_, _, board) in REF_FAMILIES.items()}
WARNINGS = ["-std=c99", "-Wall", "-Wextra", "-Werror"]
# -fno-var-tracking: line numbers in the reports without gcc tracking variable locations, which took
# half the compile time of the unrolled conv kernels under the sanitizers (conv_depthwise_kxk.c 25 -> 14 s)
SANITIZE = ["-O2", "-g", "-fno-var-tracking", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer"]
# AOTC_TEST_X86_PATHS: the AVX-512 paths' entries, which the conv and pool tests give every case, return on a
# case their path does not take instead of aborting (runtime_c/kernels/common/paths_avx512.h)
HOST_BUILDS = {"native": ["-march=native", "-DAOTC_TEST_X86_PATHS"], "generic": ["-DAOTC_DW3_BLOCK=1"]}
CORTEX_M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def write_fused_ops_header(directory: Path) -> Path:
    """fused_ops.h, tests/kernels_c/test_fused_kernels.c's view of aot/kernels/fused.py: each op's C expression
    as fused.py writes it into the fused loop, in a function fused_<Op> of its operands, and the lists
    FUSED_UNARY and FUSED_BINARY. Returns the directory to put on the include path."""
    from aot.kernels.fused import BINARY, UNARY

    lines = ["/* Written by tests/kernels_c/test_kernels_c.py from aot/kernels/fused.py: the fused loop's "
             "expressions. */",
             "#ifndef AOTC_FUSED_OPS_H", "#define AOTC_FUSED_OPS_H", '#include "aotc_fused.h"']
    lines += [f"static inline float fused_{op}(float a) {{ return {e.format('a')}; }}" for op, e in UNARY.items()]
    lines += [f"static inline float fused_{op}(float a, float b) {{ return {e.format('a', 'b')}; }}"
              for op, e in BINARY.items()]
    lines += ["#define FUSED_UNARY(X) " + " ".join(f"X({op})" for op in UNARY),
              "#define FUSED_BINARY(X) " + " ".join(f"X({op})" for op in BINARY), "#endif", ""]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fused_ops.h").write_text("\n".join(lines))
    return directory


def c_sources(family: str) -> list[Path]:
    """The C files the test of `family` links: the test, what bundles ship for the families it
    calls, and the family's reference kernels."""
    shipped = dict.fromkeys(f for fam in CALLS[family] for f in family_files(fam) if f.endswith(".c"))
    ref = kernels_dir() / family / f"{family}_ref.c"
    return [TESTS_C / f"test_{family}_kernels.c", *map(kernel_file, shipped), *([ref] if ref.is_file() else [])]


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict:
    """Objects compiled so far in this module, by (compiler, flags, source): the GEMM core once for
    the conv and gemm tests."""
    directory = tmp_path_factory.mktemp("objects")
    return {"dir": directory, "include": write_fused_ops_header(directory / "include")}


def compile_and_link(objects: dict, cc: str, sources: list[Path], flags: list[str], exe: Path,
                     link: list[str] = ()) -> None:
    """Each source to an object (two at a time: the machine has two cores), then one link."""
    incs = [*kernel_include_flags(), f"-I{TESTS_C}", *([f"-I{objects['include']}"] if "include" in objects else [])]

    def one(src: Path) -> Path:
        key = (cc, tuple(flags), src)
        if key not in objects:
            obj = objects["dir"] / f"{len(objects)}-{src.stem}.o"
            r = subprocess.run([*compiler_launcher(), cc, *flags, *incs, "-c", str(src), "-o", str(obj)],
                               capture_output=True, text=True)
            assert r.returncode == 0, f"{cc} {src.name}:\n{r.stderr[-4000:]}"
            objects[key] = obj
        return objects[key]

    with ThreadPoolExecutor(max_workers=2) as pool:
        objs = list(pool.map(one, sources))
    r = subprocess.run([cc, *flags, *map(str, objs), *link, "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, f"linking {exe.name}:\n{r.stderr[-4000:]}"


def run_checked(cmd: list[str], timeout: int, env: dict[str, str] | None = None) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    assert r.returncode == 0, f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}"
    return r.stdout


@pytest.mark.parametrize("build", ["native", "generic", pytest.param("native-all", marks=pytest.mark.slow),
                                   pytest.param("generic-all", marks=pytest.mark.slow)])
@pytest.mark.parametrize("family", sorted(CALLS))
def test_kernels_match_reference(tmp_path, objects, family, build):
    """Every entry point of the family against its reference under ASan/UBSan, SHAPES random shapes each."""
    require_tool("gcc")
    if build.startswith("native") and platform.machine() not in ("x86_64", "aarch64", "arm64"):
        pytest.skip("-march=native: x86-64 and aarch64 hosts")
    exe = tmp_path / f"test_{family}_kernels"
    compile_and_link(objects, "gcc", c_sources(family), [*WARNINGS, *SANITIZE, *HOST_BUILDS[build.split("-")[0]]], exe)
    # by default the native build runs half the shapes and the baseline-ISA build a third as many, other ones (its
    # own seed): every entry point and its fixed edge cases on both; all the shapes of both with -m slow
    seed, shapes = {"native": (SEED, SHAPES[family] // 2), "generic": (SEED + 1, SHAPES[family] // 3)}.get(
        build, (SEED, SHAPES[family]))
    out = run_checked([str(exe), str(seed), str(shapes)], timeout=300,
                      env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0"})
    assert "MISMATCH" not in out and " ok " in out, out
    if family == "pool" and build.startswith("native") and _host_has_avx512f():
        # the float MaxPool's AVX-512 rows (pool_avx512.h) took a share of the shapes
        assert "aotc_maxpool_f32 AVX-512 path: 0 shapes" not in out and "AVX-512 path:" in out, out


def _host_has_avx512f() -> bool:
    """Whether -march=native builds here have AVX-512F (Linux hosts: /proc/cpuinfo's flags)."""
    try:
        return " avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def test_pool_kernels_plain_c(tmp_path, objects):
    """The pool test built with AOTC_NO_INTRINSICS: the plain-C twins of pool_int8.c's SSE2 paths (the 8-bit
    MaxPool's passes down rows and across columns), as targets without SSE2 build them."""
    require_tool("gcc")
    exe = tmp_path / "test_pool_kernels_plain"
    compile_and_link(objects, "gcc", c_sources("pool"), [*WARNINGS, *SANITIZE, "-DAOTC_NO_INTRINSICS"], exe)
    out = run_checked([str(exe), str(SEED + 2), str(SHAPES["pool"] // 3)], timeout=300)
    assert "MISMATCH" not in out and "aotc_maxpool_u8" in out and " ok " in out, out


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


@pytest.mark.parametrize(("family", "build"), [(f, b) for f in ("conv", "gemm") for b in sorted(M_BUILDS)
                                               # (gemm.c has no LDM, and no Helium path to build at -Os)
                                               if not (f == "gemm" and b in ("m55-no-asm", "m55-mve-os"))
                                               and b != "m4-no-dsp-asm"]
                         + [("pool", "m55-mve")]  # (Helium's global average pool)
                         + [(f, b) for f in sorted(BOARD_SHAPES) for b in ("m4-asm", "m55-mve")]
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


def run_on_board(objects: dict, tmp_path: Path, family: str, board: str, cpu: list[str], shapes: int) -> str:
    """The family's C test built for a Cortex-M board and run under qemu (semihosting)."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    support = cmake_dir() / "cortex-m"
    exe = tmp_path / f"test_{family}_kernels.elf"
    level = [] if any(f.startswith("-O") for f in cpu) else ["-O2"]  # (a build's own level)
    flags = [*WARNINGS, *cpu, *level, "-ffunction-sections", "-fdata-sections", f"-I{support}"]
    link = [f"-T{support / f'{board}.ld'}", f"-L{support}", "--specs=nano.specs", "--specs=rdimon.specs",
            "-nostartfiles", "-Wl,--gc-sections", "-u", "_printf_float"]
    compile_and_link(objects, "arm-none-eabi-gcc", [*c_sources(family), support / "startup.c"], flags, exe, link)
    args = ",".join(f"arg={a}" for a in (f"test_{family}_kernels", SEED, shapes))
    return run_checked(["qemu-system-arm", "-M", board, "-nographic", "-monitor", "none", "-serial", "none",
                        "-semihosting-config", f"enable=on,target=native,{args}", "-kernel", str(exe)], timeout=600)


@pytest.mark.parametrize("core", sorted(QUANT_BOARDS))
def test_quant_on_cortex_m(tmp_path, objects, core):
    """tests/kernels_c/test_quant_kernels.c on qemu's boards: every core gives the definition's integers."""
    board, cpu, shapes = QUANT_BOARDS[core]
    out = run_on_board(objects, tmp_path, "quant", board, cpu, shapes)
    assert "MISMATCH" not in out and " ok " in out, out


def test_quant_integer_requantisation_on_host(tmp_path, objects):
    """The M3's requantisation in integers (AOTC_REQUANT_FIXED), built on the host under the
    sanitizers: many more random and tie cases than a board run takes."""
    require_tool("gcc")
    exe = tmp_path / "test_quant_kernels_fixed"
    compile_and_link(objects, "gcc", c_sources("quant"), [*WARNINGS, *SANITIZE, "-DAOTC_REQUANT_FIXED=1"], exe)
    out = run_checked([str(exe), str(SEED), "1000"], timeout=300)
    assert "MISMATCH" not in out and " ok " in out, out


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


@pytest.mark.parametrize("level", ["-O2", "-Os"])
def test_dsp_kernels_compile_with_clang_for_cortex_m4(tmp_path, level):
    """The int8 kernels' DSP paths, inline assembly included, compiled by clang for the Cortex-M4:
    an asm block that gcc allocates registers for may need more than clang's allocator finds (the
    depthwise band's two-position block, 14 registers, failed there). The TFLM signal kernels too (the
    FFT's complex products by ACLE's DSP intrinsics)."""
    require_tool("clang", "arm-none-eabi-gcc")
    sources = [kernel_file(f) for fam in ("tflite_int8", "tflm_signal") for f in family_files(fam) if f.endswith(".c")]
    flags = ["--target=arm-none-eabi", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
             level, *WARNINGS, *arm_libc_includes(), *kernel_include_flags()]

    def one(src: Path) -> str:
        r = subprocess.run(["clang", *flags, "-c", str(src), "-o", str(tmp_path / f"{src.stem}.o")],
                           capture_output=True, text=True)
        return "" if r.returncode == 0 else f"{src.name}:\n{r.stderr[-3000:]}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = [e for e in pool.map(one, sources) if e]
    assert not errors, "\n".join(errors)
