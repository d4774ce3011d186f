"""How the C kernel tests (tests/kernels_c/test_<family>_kernels.c) are built and run: the families each
test links, its shapes per build, the flag sets, compiling and linking with the run's compiler cache, and
running a test program on the host or on a Cortex-M board under qemu (semihosting). Shared by
test_kernels_c.py (the host builds), test_kernels_c_boards.py (the boards, clang) and test_overlap_kernels.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import compiler_launcher, current_tier, require_tool

from aot.emit_c.runtime_files import family_files
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
# The sanitized builds compile at -O0: gcc instruments unoptimised code in about half the time, and most families'
# shapes run in about as long (measured per family, native build, compile + run, machine at load ~5, 2026-11-27:
# elementwise 34 -> 19 s, quant 45 -> 14 s (its files were at -O2: gcc is slow on quant_impl.h's kernels at -O1),
# fused 17 -> 11 s, the small families about half). The tests of SANITIZED_AT_O1's families run long enough
# unoptimised to lose what the compile saves (tflite_int8 34 -> 66 s, conv 39 -> 36 s): they build at -O1, as
# AddressSanitizer's documentation advises for speed, with -fno-var-tracking (line numbers in the reports without
# gcc tracking variable locations, which took half the unrolled conv kernels' compile time at -O1).
SANITIZE = ["-O0", "-g", "-fno-var-tracking", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer"]
SANITIZED_AT_O1 = {"tflite_int8", "conv"}


def sanitize_for(family: str) -> list[str]:
    """The sanitized build's flags for the C test of `family`."""
    return [("-O1" if f == "-O0" else f) for f in SANITIZE] if family in SANITIZED_AT_O1 else SANITIZE


# AOTC_TEST_X86_PATHS: the AVX-512 paths' entries, which the conv and pool tests give every case, return on a
# case their path does not take instead of aborting (runtime_c/kernels/common/paths_avx512.h)
HOST_BUILDS = {"native": ["-march=native", "-DAOTC_TEST_X86_PATHS"], "generic": ["-DAOTC_DW3_BLOCK=1"]}
CORTEX_M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def write_fused_ops_header(directory: Path) -> Path:
    """fused_ops.h, tests/kernels_c/test_fused_kernels.c's view of aot/kernels/fused.py: each op's C expression
    as fused.py writes it into the fused loop, in a function fused_<Op> of its operands, and the lists
    FUSED_UNARY and FUSED_BINARY. Returns the directory to put on the include path."""
    from aot.kernels.fused import BINARY, UNARY

    lines = ["/* Written by tests/kernels_c/kernel_builds.py from aot/kernels/fused.py: the fused loop's "
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


# what in a kernel's C reads the ISA it is built for (an intrinsic path, a block size for it)
ISA_READS = re.compile(r"__AVX|__SSE|immintrin|__ARM|__aarch64__|__x86_64__|AOTC_NO_INTRINSICS|AOTC_DW3_BLOCK")


# what in a kernel's C is the M-profile's own (the DSP extension, Helium, the inline assembly)
M_PROFILE_READS = re.compile(r"__ARM_FEATURE|arm_mve\.h|mve_select\.h|microkernel\.h|AOTC_NO_ASM|AOTC_NO_MVE|AOTC_DSP")


def _reads(family: str, pattern: re.Pattern, harness: bool = True) -> bool:
    """Whether the shipped files and headers of the families the family's test calls (and with `harness` its test
    and reference) match `pattern`."""
    shipped = {kernel_file(f) for fam in CALLS[family] for f in family_files(fam)}
    return any(pattern.search(p.read_text()) for p in {*(c_sources(family) if harness else ()), *shipped})


def reads_the_isa(family: str) -> bool:
    """Whether the C the family's test links (its test, the shipped files and headers of the families it calls,
    its reference) has a path that depends on the ISA or AOTC_DW3_BLOCK: else its baseline-ISA build compiles
    the same code as its native one."""
    return _reads(family, ISA_READS)


def has_m_profile_code(family: str) -> bool:
    """Whether the kernels the family's test calls have code of the M-profile's own: else they compile the same C
    for the M4 and the M55."""
    return _reads(family, M_PROFILE_READS, harness=False)


def object_store(directory: Path) -> dict:
    """Where a module keeps the objects it compiled, by (compiler, flags, source): the GEMM core once for the
    conv and gemm tests (the run's compiler cache shares them between modules)."""
    return {"dir": directory, "include": write_fused_ops_header(directory / "include")}


def is_harness(src: Path) -> bool:
    """A test program's own C, not a kernel under test: the test, a family's reference, a board's startup."""
    return src.parent == TESTS_C or is_reference(src) or src.name == "startup.c"


def is_reference(src: Path) -> bool:
    """A family's reference kernels (<family>_ref.c): the oracle the test compares against, not code under test."""
    return src.stem.endswith("_ref")


def unsanitized(flags: list[str]) -> list[str]:
    """A sanitized build's flags for its reference (is_reference): -O2, no sanitizers. The kernels and the test's
    own C (the buffers it hands them) stay instrumented; the reference sanitized at -O0 / -O1 took 40 % of
    tflite_int8's sanitized run (8.5 of 20.4 s)."""
    if not any(f.startswith("-fsanitize") for f in flags):
        return flags
    dropped = ("-fsanitize", "-fno-sanitize", "-O", "-g", "-fno-var-tracking", "-fno-omit-frame-pointer")
    return [f for f in flags if not f.startswith(dropped)] + ["-O2"]


def compile_and_link(objects: dict, cc: str, sources: list[Path], flags: list[str], exe: Path,
                     link: list[str] = (), harness_level: str | None = None,
                     reference_level: str | None = None) -> None:
    """Each source to an object (two at a time: the machine has two cores), then one link. With `harness_level`
    the test's own C (is_harness) builds at that level whatever level the kernels are tested at, and with
    `reference_level` the family's reference at its own: under qemu an -Os or -O0 reference took a third or more
    of a run, and the boards' test programs took 3x the compile at -O2 that they take at -Og (the M4's
    test_elementwise_kernels.c 8.5 s against 2.9 s), where they run in about the same time. A sanitized build's
    reference builds without the sanitizers (unsanitized). The reference builds without the kernels' macros (-D:
    the forms under test), which it does not read, so that the run's compiler cache finds it again: the board
    tests built it once per macro set and level (15 of 30 s of tflite_int8's compiles that missed)."""
    incs = [*kernel_include_flags(), f"-I{TESTS_C}", *([f"-I{objects['include']}"] if "include" in objects else [])]
    harness_flags = [f for f in flags if not f.startswith("-O")] + [harness_level] if harness_level else flags
    reference_flags = [f for f in unsanitized(flags if reference_level is None else
                                              [*(f for f in flags if not f.startswith("-O")), reference_level])
                       if not f.startswith("-D")]

    def one(src: Path) -> Path:
        src_flags = reference_flags if is_reference(src) else harness_flags if is_harness(src) else flags
        key = (cc, tuple(src_flags), src)
        if key not in objects:
            obj = objects["dir"] / f"{len(objects)}-{src.stem}.o"
            r = subprocess.run([*compiler_launcher(), cc, *src_flags, *incs, "-c", str(src), "-o", str(obj)],
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


def board_shapes(shapes: int) -> int:
    """The random shapes an entry a board run draws where its test asks for `shapes`: all of them in `--tier all`,
    half as many in the fast and full tiers where the test asks for more than BOARD_FEW. qemu's runs were most of the
    board tests' time in CI (497 of 837 s of tools' time in test_kernels_c_boards.py, 2026-12-01); the host builds of
    the same C draw 600-1,000. (One seed's draws run on across a program's entries, so an entry after the first
    draws other shapes at another count: a run of few shapes was sized to fit the board's memory, the M55's conv
    test's 12 among them, and keeps its count.)"""
    return shapes if current_tier() == "all" or shapes <= BOARD_FEW else shapes // 2


BOARD_FEW = 24


def run_on_board(objects: dict, tmp_path: Path, family: str, board: str, cpu: list[str], shapes: int,
                 only: str = "") -> str:
    """The family's C test built for a Cortex-M board and run under qemu (semihosting), board_shapes(shapes) random
    shapes an entry; `only`: words of the names of the entries to run, separated by '|', where the test takes them
    (test_tflite_int8_kernels.c)."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    support = cmake_dir() / "cortex-m"
    exe = tmp_path / f"test_{family}_kernels.elf"
    level = [] if any(f.startswith("-O") for f in cpu) else ["-O2"]  # (a build's own level)
    flags = [*WARNINGS, *cpu, *level, "-ffunction-sections", "-fdata-sections", f"-I{support}"]
    link = [f"-T{support / f'{board}.ld'}", f"-L{support}", "--specs=nano.specs", "--specs=rdimon.specs",
            "-nostartfiles", "-Wl,--gc-sections", "-u", "_printf_float"]
    compile_and_link(objects, "arm-none-eabi-gcc", [*c_sources(family), support / "startup.c"], flags, exe, link,
                     harness_level="-Og", reference_level="-O2")
    args = ",".join(f"arg={a}" for a in (f"test_{family}_kernels", SEED, board_shapes(shapes),
                                         *([only] if only else [])))
    return run_checked(["qemu-system-arm", "-M", board, "-nographic", "-monitor", "none", "-serial", "none",
                        "-semihosting-config", f"enable=on,target=native,{args}", "-kernel", str(exe)], timeout=600)


def host_has_avx512f() -> bool:
    """Whether -march=native builds here have AVX-512F (Linux hosts: /proc/cpuinfo's flags)."""
    try:
        return " avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def host_has_avx2() -> bool:
    """Whether this host runs AVX2 code (Linux hosts: /proc/cpuinfo's flags)."""
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def sanitizer_env() -> dict[str, str]:
    return {**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0"}
