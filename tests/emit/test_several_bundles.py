"""Several bundles in one program (issue 66). Every global symbol a bundle's runtime C defines (its kernels', its
vendors' runtimes') takes the model's name as its prefix (runtime/aotc_symbols.h, which aotc_common.h and
dltensor.h include first), as its public API has it: so bundles compiled with different kernel options, which
define the same kernels differently (a --flash-budget bundle's portable kernels beside the default's DSP or AVX
paths, a --ram-budget bundle), link into one host program and one Cortex-M firmware, and each gives there what it
gives alone; and nm finds no global symbol of their libraries outside their names."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from modelcheck import aotc, global_symbols, outside_prefix

from aot.build import cmake_exe, ninja_exe, run_bundle, runner_command
from aot.compiler import Options, compile_model
from aot.emit_c.runtime_files import defined_symbols
from aot.targets import get_target
from aot.vendor.base import runtime_symbols

HERE = Path(__file__).resolve().parents[1]
SINE = HERE / "models" / "tflite" / "sine_int8.tflite"  # int8 FULLY_CONNECTED layers
# sine_int8's library takes only the portable kernels under this: on the M4 3,112 B as compiled, 2,904 B at -Os,
# 1,616 B portable; on the host 73,301 B as compiled, 1,856 B portable
FLASH_BUDGET = 2_400
# zoo mobilenetv2 (an ONNX conv net, 64 x 64): arena 245,760 B; row bands take it to 212,992 B
RAM_BUDGET = 230_000


def test_symbols_header_renames_what_the_bundle_defines():
    """runtime/aotc_symbols.h renames each global symbol of the kernel files the bundle compiles and of its
    vendor's runtime, and only those, to <name>_<symbol>; the headers every file includes first include it."""
    bundle = compile_model(zoo.build("lenet"), Options(name="lenet", vendors=("cref",), host_isa="generic"))
    files = bundle.files
    shipped = [p.removeprefix("runtime/") for p in files if p.startswith("runtime/") and p.endswith(".c")]
    renamed = dict(re.findall(r"^#define (\w+) (\w+)$", files["runtime/aotc_symbols.h"], re.M))
    want = {*defined_symbols(shipped), *runtime_symbols("cref/cref.c")}
    assert set(renamed) == want and "aotc_cref_gemm_f32" in want and "aotc_sgemm_f32" in want, sorted(renamed)
    assert all(v == f"lenet_{k}" for k, v in renamed.items())
    for h in ("aotc_common.h", "dltensor.h"):  # before any declaration of theirs
        text = files[f"runtime/{h}"]
        assert text.index('#include "aotc_symbols.h"') < text.index(";"), h


def test_model_c_refuses_another_bundles_runtime(tmp_path):
    """A build that puts two bundles' runtime/ folders on one include path (an IDE's project-wide path) would
    compile a model's C with the other bundle's names for its kernels: it stops at an #error naming the model.
    A kernel file finds its own bundle's headers beside it whatever the path."""
    require_tool("gcc")
    for name, model in (("lenet", "lenet"), ("mlp", "mlp")):
        compile_model(zoo.build(model), Options(name=name, host_isa="generic")).write(tmp_path / name)

    def syntax(src: Path, *order: str) -> subprocess.CompletedProcess:
        includes = [f"-I{tmp_path / n / d}" for n in order for d in ("include", "runtime")]
        return subprocess.run(["gcc", "-std=c99", "-fsyntax-only", *includes, str(src)], capture_output=True, text=True)

    lenet_c = tmp_path / "lenet" / "src" / "lenet.c"
    assert syntax(lenet_c, "lenet", "mlp").returncode == 0
    wrong = syntax(lenet_c, "mlp", "lenet")
    assert wrong.returncode != 0 and "lenet: another bundle's runtime/ is on this file's include path" in wrong.stderr
    kernel = tmp_path / "lenet" / "runtime" / "gemm.c"
    obj = tmp_path / "gemm.o"
    subprocess.run(["gcc", "-std=c99", "-c", f"-I{tmp_path / 'mlp' / 'runtime'}", f"-I{tmp_path / 'lenet' / 'runtime'}",
                    str(kernel), "-o", str(obj)], check=True)
    assert "lenet_aotc_sgemm_f32" in subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout


# name -> the model and the options it is compiled with
BUNDLES = {
    "sine": (SINE, ()),
    "sine_small": (SINE, ("--flash-budget", FLASH_BUDGET)),
    "mnv2": (None, ()),  # None: zoo mobilenetv2, written by the test
    "mnv2_tight": (None, ("--ram-budget", RAM_BUDGET)),
}
# pairs of bundles whose libraries define the same kernels, under their names in runtime_c/ (so would clash
# unprefixed): the two sine ones on the M4 (tflite_int8_fc.c with its DSP paths and without), the two mobilenetv2
# ones everywhere. On the host, whose portable kernels for sine_int8 are other files than its default's
# (tflite_int8_packed.c, the longest compile here), the default sine bundle is left out.
SHARING = {"host": [("mnv2", "mnv2_tight")], "mps2-an386": [("sine", "sine_small"), ("mnv2", "mnv2_tight")]}
LEFT_OUT = {"host": {"sine"}, "mps2-an386": set()}

FIRMWARE_CMAKE = """\
cmake_minimum_required(VERSION 3.16)
project(several C)
{subdirs}
add_executable(several main.c)
target_link_libraries(several PRIVATE {names})
if(COMMAND aotc_board_executable)
  aotc_board_executable(several)    # bare metal: aotc's startup code and the board's linker script
endif()
"""

MAIN_HEAD = """\
#include <stdint.h>
#include <stdio.h>
{includes}

static int load(const char *path, void *p, size_t n) {{
    FILE *f = fopen(path, "rb");
    size_t got;
    if (!f) return 0;
    got = fread(p, 1, n, f);
    fclose(f);
    return got == n;
}}

static int save(const char *path, const void *p, size_t n) {{
    FILE *f = fopen(path, "wb");
    size_t put;
    if (!f) return 0;
    put = fwrite(p, 1, n, f);
    return fclose(f) == 0 && put == n;
}}
"""

RUN_ONE = """
static uint8_t arena_{name}[{NAME}_ARENA_SIZE > 0 ? {NAME}_ARENA_SIZE : 1] __attribute__((aligned({NAME}_ARENA_ALIGN)));

static int run_{name}(int pass) {{
    struct {name}_inputs in;
    struct {name}_outputs out;
    char path[64];
    if ({name}_init(arena_{name}) != 0) return 1;
    {name}_arena_io(arena_{name}, &in, &out);   /* inputs and outputs in their arena slots */
{loads}
    if ({name}_run(&in, &out, arena_{name}) != 0) return 3;
{saves}
    return 0;
}}
"""

MAIN = """
int main(void) {{
    int pass, rc;
    for (pass = 0; pass < 2; ++pass) {{   /* twice, each model after the others: no state shared */
{calls}
    }}
    printf("several: {count} models, 2 passes\\n");
    return 0;
}}
"""


def _main_c(metas: dict[str, dict]) -> str:
    parts = [MAIN_HEAD.format(includes="\n".join(f'#include "{n}.h"' for n in metas))]
    calls = []
    for k, (name, meta) in enumerate(metas.items()):
        big = name.upper()
        loads = [f'    if (!load("{name}.in.{i}", (void *)(uintptr_t)in.{io["field"]}, '
                 f'{big}_{io["field"].upper()}_BYTES)) return 2;' for i, io in enumerate(meta["inputs"])]
        saves = [f'    sprintf(path, "{name}.out.%d.{i}", pass);\n'
                 f'    if (!save(path, out.{io["field"]}, {big}_{io["field"].upper()}_BYTES)) return 4;'
                 for i, io in enumerate(meta["outputs"])]
        parts.append(RUN_ONE.format(name=name, NAME=big, loads="\n".join(loads), saves="\n".join(saves)))
        calls.append(f"        if ((rc = run_{name}(pass)) != 0) return {10 * (k + 1)} + rc;")
    parts.append(MAIN.format(calls="\n".join(calls), count=len(metas)))
    return "".join(parts)


def _feeds(meta: dict, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, io["shape"]).astype(np.int8) if io["dtype"] == "int8"
            else rng.standard_normal(io["shape"]).astype(np.float32) for io in meta["inputs"]]


@pytest.mark.full
@pytest.mark.parametrize("target", ["host", "mps2-an386"])
def test_bundles_of_different_kernel_options_share_one_program(tmp_path, target):
    """Bundles of two models, each compiled as a default build and with a budget: sine_int8 with --flash-budget
    (the portable kernels: on the M4 the default's kernel file built with AOTC_NO_INTRINSICS at -Os), mobilenetv2
    with --ram-budget (row bands), added with add_subdirectory() to one CMake project (-Werror) that builds each
    one's runner, linked with its library alone, and one program linked with all of them. Each library defines
    only names under its own (those of one model would define the same kernels otherwise); the program, run
    twice over the models (under qemu on the M4), writes every output byte each runner writes alone."""
    bare = get_target(target).kind == "bare-metal"
    nm = "arm-none-eabi-nm" if bare else "nm"
    require_tool(nm, *(("arm-none-eabi-gcc", "qemu-system-arm") if bare else ("gcc",)))
    onnx.save(zoo.build("mobilenetv2"), tmp_path / "mobilenetv2.onnx")
    metas = {}
    for name, (model, options) in BUNDLES.items():
        if name in LEFT_OUT[target]:
            continue
        aotc(model or tmp_path / "mobilenetv2.onnx", "-o", tmp_path / name, "--no-configure", "--target", target,
             "--name", name, *options)
        metas[name] = json.loads((tmp_path / name / "bundle" / "metadata.json").read_text())
    assert metas["sine_small"]["flash_budget"]["level"] == "portable", metas["sine_small"]["flash_budget"]
    assert "bands" in metas["mnv2_tight"]["memory"]["ram_budget"]["traded"]

    fw = tmp_path / "firmware"
    fw.mkdir()
    (fw / "CMakeLists.txt").write_text(FIRMWARE_CMAKE.format(
        subdirs="\n".join(f"add_subdirectory({(tmp_path / n / 'bundle').as_posix()} {n})" for n in metas),
        names=" ".join(metas)))
    (fw / "main.c").write_text(_main_c(metas))
    build = tmp_path / "build"
    ninja = ninja_exe()
    configure = [cmake_exe(), "-S", str(fw), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 "-DAOTC_WARNINGS_AS_ERRORS=ON",
                 *(["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else []),
                 *([f"-DCMAKE_TOOLCHAIN_FILE={tmp_path / 'sine' / 'bundle' / 'target' / 'toolchain.cmake'}"]
                   if bare else [])]
    for cmd in (configure, [cmake_exe(), "--build", str(build), "-j", "2"]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]

    libs = {n: build / n / f"lib{n}.a" for n in metas}
    for n, lib in libs.items():
        assert not outside_prefix(lib, n, nm), (n, outside_prefix(lib, n, nm))
    own = {n: {s.removeprefix(f"{n}_") for s in global_symbols(lib, nm)} - {"init", "run", "arena_io"}
           for n, lib in libs.items()}
    for a, b in SHARING[target]:
        assert own[a] & own[b], (a, b, own)

    run = tmp_path / "run"
    run.mkdir()
    alone = {}
    for n, meta in metas.items():
        feeds = _feeds(meta, seed=len(n))
        for i, x in enumerate(feeds):
            (run / f"{n}.in.{i}").write_bytes(x.tobytes())
        outs, _ = run_bundle(build / n, meta, feeds)  # its own runner: its library alone
        alone[n] = [outs[io["name"]] for io in meta["outputs"]]
    exe = build / f"several{get_target(target).executable_suffix}"
    r = subprocess.run(runner_command(get_target(target), exe.resolve(), []), cwd=run, capture_output=True,
                       text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert f"several: {len(metas)} models, 2 passes" in r.stdout
    for n, outs in alone.items():
        for p in range(2):
            for i, want in enumerate(outs):
                got = (run / f"{n}.out.{p}.{i}").read_bytes()
                assert got == want.tobytes(), (n, p, i)
