"""Several bundles in one program (issue 66). Every global symbol a bundle's runtime C defines (its kernels', its
vendors' runtimes') takes its kernel configuration's prefix, aotc_<hash8>_ (runtime/aotc_symbols.h, which
aotc_common.h and dltensor.h include first): hash8 is a hash of aotc's runtime C and of the options that change the
kernels' code (--flash-budget's portable kernels, --threads, the target, --host-isa, a third-party vendor runtime).
So bundles of one configuration define the same code under the same names, and the linker keeps one copy; bundles
of different configurations define names of their own, and each runs its own kernels. Both link into one host
program and one Cortex-M firmware, and each model gives there what it gives alone. The prefix is not the model's
name: the header is one file per configuration, so a compiler cache finds one bundle's kernel objects for
another's (the test suite's does)."""

from __future__ import annotations

import json
import os
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
from aot.emit_c.runtime_files import SymbolConfig, aotc_symbols_header, runtime_symbols_all
from aot.targets import get_target
from aot.vendor.base import Artifact

HERE = Path(__file__).resolve().parents[1]
SINE = HERE / "models" / "tflite" / "sine_int8.tflite"  # int8 FULLY_CONNECTED layers
# sine_int8's library takes only the portable kernels under these: on the M4 1,452 B portable (1,844 B at the level
# fc-small, 1,932 B at fc-compact), on the host 1,865 B in the portable kernels' smallest loops (2,213 B in their
# faster ones)
FLASH_BUDGET = {"host": 2_000, "mps2-an386": 1_800}
# zoo mobilenetv2 (an ONNX conv net, 64 x 64): arena 245,760 B; row bands take it to 212,992 B
RAM_BUDGET = 230_000
PREFIX = re.compile(r"^aotc_[0-9a-f]{8}_")


def test_symbols_header_is_one_file_per_kernel_configuration():
    """Two models of one configuration get the same runtime/aotc_symbols.h, byte for byte, which names no model
    and renames every symbol of aotc's runtime C (not only the files a bundle ships; a built-in vendor adds
    none); the options that change the kernels' code change the prefix, and those that only choose kernels
    do not. The model's C checks it reads its own configuration's header."""
    lenet = compile_model(zoo.build("lenet"), Options(name="lenet", host_isa="generic"))
    mlp = compile_model(zoo.build("mlp"), Options(name="mlp", host_isa="generic", ram_budget=10**9))
    cref = compile_model(zoo.build("lenet"), Options(name="lenet2", vendors=("cref",), host_isa="generic"))
    header = lenet.files["runtime/aotc_symbols.h"]
    assert header == mlp.files["runtime/aotc_symbols.h"] == cref.files["runtime/aotc_symbols.h"]
    assert "lenet" not in header and "mlp" not in header
    config = SymbolConfig(host_isa="generic")
    assert header == aotc_symbols_header(config)
    renamed = dict(re.findall(r"^#define (\w+) (\w+)$", header, re.M))
    assert set(renamed) == set(runtime_symbols_all()) and {"aotc_sgemm_f32", "aotc_cref_gemm_f32"} <= set(renamed)
    assert all(v == f"{config.prefix}{k}" for k, v in renamed.items())
    assert lenet.metadata["symbol_prefix"] == mlp.metadata["symbol_prefix"] == config.prefix
    assert f"#if !defined(AOTC_SYMBOLS_CONFIG_{config.hash8})" in lenet.files["src/lenet.c"]
    for h in ("aotc_common.h", "dltensor.h"):  # before any declaration of theirs
        text = lenet.files[f"runtime/{h}"]
        assert text.index('#include "aotc_symbols.h"') < text.index(";"), h

    others = {"threads": compile_model(zoo.build("mlp"), Options(name="mlp", host_isa="generic", threads=2)),
              "isa": compile_model(zoo.build("mlp"), Options(name="mlp", host_isa="avx512f")),
              "target": compile_model(zoo.build("mlp"), Options(name="mlp", target="mps2-an386"))}
    prefixes = {k: b.metadata["symbol_prefix"] for k, b in others.items()}
    prefixes["portable"] = SymbolConfig(host_isa="generic", portable=True).prefix  # (a --flash-budget level)
    prefixes["threads 4"] = SymbolConfig(host_isa="generic", threads=4).prefix
    assert len({config.prefix, *prefixes.values()}) == 6, prefixes
    assert all(PREFIX.match(p) for p in prefixes.values())


def test_third_party_vendor_runtime_keys_the_prefix():
    """A vendor runtime beyond the built-in ones (Artifact.symbols) adds its names to the header and its files'
    content to the configuration: another version of it gets other names; one declared `runtime` file keys
    it alone, so two models' bundles with the same runtime share a prefix."""
    from aot.emit_c.bundle import symbol_config
    from aot.ir import Function, Graph

    def config(runtime_c: str, fn_c: str, runtime: list[str]) -> SymbolConfig:
        graph = Graph("m", [], {}, [], [])
        graph.functions = {"m_acme_0": Function("m_acme_0", "acme", Graph("f", [], {}, [], []))}
        art = Artifact(files={"m_acme_0.c": fn_c, "acme_rt.c": runtime_c}, sources=["m_acme_0.c", "acme_rt.c"],
                       symbols=["acme_rt_run", "aotc_cref_check"], runtime=runtime)
        return symbol_config(SymbolConfig(host_isa="generic"), graph, {"m_acme_0": art})

    a = config("int acme_rt_run(void) { return 0; }", "/* model a */", ["acme_rt.c"])
    assert a.vendor_symbols == ("acme_rt_run",)  # (aotc_cref_check is a built-in one: every header has it)
    assert "#define acme_rt_run " + a.prefix + "acme_rt_run" in aotc_symbols_header(a)
    assert a.prefix == config("int acme_rt_run(void) { return 0; }", "/* model b */", ["acme_rt.c"]).prefix
    assert a.prefix != config("int acme_rt_run(void) { return 1; }", "/* model a */", ["acme_rt.c"]).prefix
    assert a.prefix != SymbolConfig(host_isa="generic").prefix
    # no `runtime` named: every file keys it (each model's bundle gets names of its own)
    assert config("x", "/* model a */", []).prefix != config("x", "/* model b */", []).prefix


def test_model_c_refuses_another_configurations_runtime(tmp_path):
    """A build that puts two bundles' runtime/ folders on one include path (an IDE's project-wide path) would
    compile a model's C against the other bundle's kernel names and headers: when the other bundle is of another
    configuration, it stops at an #error naming the model; of the same one, the headers are the same files and
    it compiles. A kernel file finds its own bundle's headers beside it whatever the path."""
    require_tool("gcc", "nm")
    for name, model, threads in (("lenet", "lenet", 1), ("mlp", "mlp", 1), ("mlp2", "mlp", 2)):
        compile_model(zoo.build(model), Options(name=name, host_isa="generic", threads=threads)).write(tmp_path / name)

    def syntax(src: Path, *order: str) -> subprocess.CompletedProcess:
        includes = [f"-I{tmp_path / n / d}" for n in order for d in ("include", "runtime")]
        return subprocess.run(["gcc", "-std=c99", "-fsyntax-only", *includes, str(src)], capture_output=True, text=True)

    lenet_c = tmp_path / "lenet" / "src" / "lenet.c"
    assert syntax(lenet_c, "lenet", "mlp2").returncode == 0
    assert syntax(lenet_c, "mlp", "lenet").returncode == 0  # the same configuration: the same headers
    wrong = syntax(lenet_c, "mlp2", "lenet")
    assert wrong.returncode != 0 and "lenet: another bundle's runtime/" in wrong.stderr, wrong.stderr
    kernel = tmp_path / "lenet" / "runtime" / "gemm.c"
    obj = tmp_path / "gemm.o"
    subprocess.run(["gcc", "-std=c99", "-c", f"-I{tmp_path / 'mlp2' / 'runtime'}",
                    f"-I{tmp_path / 'lenet' / 'runtime'}", str(kernel), "-o", str(obj)], check=True)
    prefix = json.loads((tmp_path / "lenet" / "metadata.json").read_text())["symbol_prefix"]
    assert f"{prefix}aotc_sgemm_f32" in subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout


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
{starts}
    for (pass = 0; pass < 2; ++pass) {{   /* twice, each model after the others: no state shared */
{calls}
    }}
{stops}
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
    threaded = [n for n, m in metas.items() if "threads" in m]  # --threads bundles: their pools run the kernels
    starts = [f"    if ({n}_threads_init() != 0) return 9;" for n in threaded]
    stops = [f"    {n}_threads_teardown();" for n in threaded]
    parts.append(MAIN.format(calls="\n".join(calls), count=len(metas), starts="\n".join(starts),
                             stops="\n".join(stops)))
    return "".join(parts)


def _feeds(meta: dict, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, io["shape"]).astype(np.int8) if io["dtype"] == "int8"
            else rng.standard_normal(io["shape"]).astype(np.float32) for io in meta["inputs"]]


def _several(tmp_path: Path, target: str, bundles: dict[str, tuple[Path, tuple]], build_type: str) -> dict[str, dict]:
    """Compile each bundle (name -> model file, aotc options), add them with add_subdirectory() to one CMake
    project (-Werror) that builds each one's runner, linked with its library alone, and one program linked with
    all of them; check that each library defines only names under its model's and its configuration's prefix,
    and that the program, run twice over the models (under qemu on a board), writes every output byte each
    runner writes alone. Returns the metadata by name, with "lib" (its library's global symbols) and "exe" (the
    program's) added."""
    bare = get_target(target).kind == "bare-metal"
    nm = "arm-none-eabi-nm" if bare else "nm"
    require_tool(nm, *(("arm-none-eabi-gcc", "qemu-system-arm") if bare else ("gcc",)))
    metas = {}
    for name, (model, options) in bundles.items():
        aotc(model, "-o", tmp_path / name, "--no-configure", "--target", target, "--name", name, *options)
        metas[name] = json.loads((tmp_path / name / "bundle" / "metadata.json").read_text())

    fw = tmp_path / "firmware"
    fw.mkdir()
    (fw / "CMakeLists.txt").write_text(FIRMWARE_CMAKE.format(
        subdirs="\n".join(f"add_subdirectory({(tmp_path / n / 'bundle').as_posix()} {n})" for n in metas),
        names=" ".join(metas)))
    (fw / "main.c").write_text(_main_c(metas))
    build = tmp_path / "build"
    ninja = ninja_exe()
    first = next(iter(metas))
    configure = [cmake_exe(), "-S", str(fw), "-B", str(build), f"-DCMAKE_BUILD_TYPE={build_type}",
                 "-DAOTC_WARNINGS_AS_ERRORS=ON",
                 *(["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else []),
                 *([f"-DCMAKE_TOOLCHAIN_FILE={tmp_path / first / 'bundle' / 'target' / 'toolchain.cmake'}"]
                   if bare else [])]
    for cmd in (configure, [cmake_exe(), "--build", str(build), "-j", "2"]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]

    for n, meta in metas.items():
        lib = build / n / f"lib{n}.a"
        assert not outside_prefix(lib, n, meta["symbol_prefix"], nm), (n, outside_prefix(lib, n,
                                                                                          meta["symbol_prefix"], nm))
        meta["lib"] = set(global_symbols(lib, nm))
    exe = build / f"several{get_target(target).executable_suffix}"
    exe_symbols = set(global_symbols(exe, nm))

    run = tmp_path / "run"
    run.mkdir()
    alone = {}
    for n, meta in metas.items():
        feeds = _feeds(meta, seed=len(n))
        for i, x in enumerate(feeds):
            (run / f"{n}.in.{i}").write_bytes(x.tobytes())
        outs, _ = run_bundle(build / n, meta, feeds)  # its own runner: its library alone
        alone[n] = [outs[io["name"]] for io in meta["outputs"]]
    r = subprocess.run(runner_command(get_target(target), exe.resolve(), []), cwd=run, capture_output=True,
                       text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert f"several: {len(metas)} models, 2 passes" in r.stdout
    for n, outs in alone.items():
        for p in range(2):
            for i, want in enumerate(outs):
                got = (run / f"{n}.out.{p}.{i}").read_bytes()
                assert got == want.tobytes(), (n, p, i)
    for meta in metas.values():
        meta["exe"] = exe_symbols
    return metas


def _kernels(meta: dict) -> set[str]:
    """The runtime C's names a library defines, without their prefix."""
    return set(_named(meta))


def _named(meta: dict) -> dict[str, str]:
    """The runtime C's names a library defines, without their prefix (and a kernel file's key of the M-profile paths
    it leaves out, SymbolConfig.prefix_of: an int8 FULLY_CONNECTED's file has one on the M4), to the names in full."""
    return {re.sub(r"^p[0-9a-f]{6}_", "", s.removeprefix(meta["symbol_prefix"])): s for s in meta["lib"]
            if s.startswith(meta["symbol_prefix"])}


@pytest.mark.full  # the fast tier's time (a build and run of a model); the compile-only checks stay fast
def test_bundles_of_one_and_of_two_configurations_share_one_host_program(tmp_path):
    """LeNet and an MLP compiled alike (one configuration: the same aotc_symbols.h, the same kernel names and
    code, which the linker takes once), and the MLP with --threads 2 (another: its GEMM splits its work over
    a pool, under names of its own), in one host program: each model's outputs are its runner's alone, and
    the program holds the GEMM kernel twice, once per configuration."""
    onnx.save(zoo.build("lenet"), tmp_path / "lenet.onnx")
    onnx.save(zoo.build("mlp"), tmp_path / "mlp.onnx")
    bundles = {"lenet": (tmp_path / "lenet.onnx", ()), "mlp": (tmp_path / "mlp.onnx", ()),
               "mlp_threads": (tmp_path / "mlp.onnx", ("--threads", 2))}
    metas = _several(tmp_path, "host", bundles, os.environ.get("CMAKE_BUILD_TYPE", "Release"))
    lenet, mlp, threads = metas["lenet"], metas["mlp"], metas["mlp_threads"]
    assert (tmp_path / "lenet" / "bundle" / "runtime" / "aotc_symbols.h").read_bytes() == \
        (tmp_path / "mlp" / "bundle" / "runtime" / "aotc_symbols.h").read_bytes()
    assert lenet["symbol_prefix"] == mlp["symbol_prefix"] != threads["symbol_prefix"]
    shared = lenet["lib"] & mlp["lib"]  # defined by both libraries under one name: the linker took one
    assert shared and all(s.startswith(lenet["symbol_prefix"]) for s in shared), shared
    gemm = {s for s in _kernels(mlp) & _kernels(threads) if "gemm" in s
            and {f"{mlp['symbol_prefix']}{s}", f"{threads['symbol_prefix']}{s}"} <= lenet["exe"]}
    assert gemm, (_kernels(mlp), _kernels(threads))  # each configuration's GEMM in the program


# name -> the model and the options it is compiled with (None: zoo mobilenetv2, written by the test)
BUNDLES = {
    "sine": (SINE, ()),
    "sine_small": (SINE, ("--flash-budget", FLASH_BUDGET)),  # (the target's)
    "mnv2": (None, ()),
    "mnv2_tight": (None, ("--ram-budget", RAM_BUDGET)),
    "mnv2_threads": (None, ("--threads", 2)),
}
# On the host, sine_int8's portable kernels are other files than its default's (tflite_int8_packed_fc.c): the
# default sine bundle is left out. A board has no threads.
LEFT_OUT = {"host": {"sine"}, "mps2-an386": {"mnv2_threads"}}
# pairs of bundles of different configurations that define the same kernels (each under its own prefix), and of
# one configuration (the same names: one copy in the program)
DIFFERENT = {"host": [("mnv2", "mnv2_threads")], "mps2-an386": [("sine", "sine_small")]}
SAME = {"host": [("mnv2", "mnv2_tight")], "mps2-an386": [("mnv2", "mnv2_tight")]}


@pytest.mark.full
@pytest.mark.parametrize("target", ["host", "mps2-an386"])
def test_bundles_of_different_kernel_options_share_one_program(tmp_path, target):
    """Bundles of two models, each compiled as a default build and with options: sine_int8 with --flash-budget
    (the portable kernels: on the M4 the default's kernel file built with AOTC_NO_INTRINSICS at -Os, another
    configuration), mobilenetv2 with --ram-budget (row bands: the same configuration as its default build) and,
    on the host, --threads 2 (another), in one host program and one mps2-an386 firmware under qemu."""
    onnx.save(zoo.build("mobilenetv2"), tmp_path / "mobilenetv2.onnx")
    bundles = {n: (m or tmp_path / "mobilenetv2.onnx", tuple(v[target] if isinstance(v, dict) else v for v in o))
               for n, (m, o) in BUNDLES.items() if n not in LEFT_OUT[target]}
    metas = _several(tmp_path, target, bundles, "Release")
    assert metas["sine_small"]["flash_budget"]["level"].startswith("portable"), metas["sine_small"]["flash_budget"]
    assert "bands" in metas["mnv2_tight"]["memory"]["ram_budget"]["traded"]
    for a, b in DIFFERENT[target]:
        assert metas[a]["symbol_prefix"] != metas[b]["symbol_prefix"], (a, b)
        na, nb = _named(metas[a]), _named(metas[b])
        both = set(na) & set(nb)
        # in the program (what a board's --gc-sections keeps): a kernel of both, once per configuration
        twice = {s for s in both if {na[s], nb[s]} <= metas[a]["exe"]}
        assert twice, (a, b, both)
    for a, b in SAME[target]:
        assert metas[a]["symbol_prefix"] == metas[b]["symbol_prefix"], (a, b)
        assert metas[a]["lib"] & metas[b]["lib"], (a, b)
