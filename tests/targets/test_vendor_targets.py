"""Targets registered by a package (issue 65): tests/targets/plugin_board registers the board myboard-m4
(a Cortex-M4F with 512 KiB of flash and 128 KiB of RAM, at the addresses of qemu's mps2-an386, with its
own linker script and toolchain file) under the `aotc.targets` entry-point group. It is listed with its
package, the fit check counts its memory, its bundles carry its files and build without the package, and
its programs run under qemu matching onnxruntime. Clashes and broken entry points are one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from onnx import TensorProto, helper

import aot.targets
from aot.build import cmake_exe
from aot.cli import main
from aot.compiler import Options, compile_file
from aot.errors import AotcError
from aot.targets import KIB, Region, cortex_m_board, get_target, linker_memory

PLUGIN = Path(__file__).parent / "plugin_board"
PACKAGE = PLUGIN / "aotc_myboard"
AOTC = [sys.executable, "-m", "aot.cli"]
BOARD = "myboard-m4"


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """The environment of a user who pip-installed the board's package (tests/targets/plugin_board)."""
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(PLUGIN)], check=True, capture_output=True)
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))


@pytest.fixture
def register(monkeypatch, tmp_path):
    """register(name=value, ...): these entry points, and no other, in the group aotc.targets of this
    process; modules written to tmp_path import (the board's package does too)."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))

    def set_entry_points(**eps: str) -> None:
        found = [EntryPoint(name=n, value=v, group=aot.targets.GROUP) for n, v in eps.items()]
        monkeypatch.setattr(aot.targets, "entry_points", lambda group: found if group == aot.targets.GROUP else [])
        aot.targets.forget_registered()

    yield set_entry_points
    monkeypatch.undo()
    aot.targets.forget_registered()  # no test board stays registered for the next test of this worker


def big_arena_model() -> onnx.ModelProto:
    """192 KiB of activations: room on mps2-an386 (4 MiB of RAM), none on myboard-m4 (128 KiB)."""
    shape = [1, 48 * 1024]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                           helper.make_node("Neg", ["r"], ["y"], name="neg")], "wide",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aotc: error: "), err
    assert "internal error" not in err and "Traceback" not in err, err
    return lines[0]


# --- registration, listing, the bundle's files (fast) ------------------------------------------------

def test_listed_with_its_package(env):
    r = subprocess.run([*AOTC, "--list-targets"], capture_output=True, text=True, env=env, check=True)
    row = next(line for line in r.stdout.splitlines() if line.startswith(BOARD))
    assert "flash 512 KiB, SRAM 128 KiB" in row, row
    assert row.endswith("[aotc-myboard 0.1.0, entry point myboard-m4 = aotc_myboard:BOARD]"), row
    assert re.search(r"^mps2-an386 .*\[built-in\]$", r.stdout, re.M), r.stdout
    plain = subprocess.run([*AOTC, "--list-targets"], capture_output=True, text=True, check=True)
    assert BOARD not in plain.stdout  # without the package, no board


def test_bundle_carries_the_packages_files(tmp_path, register):
    """The package's toolchain file and linker script go into bundle/target/ as they are (the bundle then
    builds without the package); aotc's Cortex-M support beside them, and the placement it chose."""
    register(**{BOARD: "aotc_myboard:BOARD"})
    onnx.save(zoo.MODELS["lenet"](), tmp_path / "lenet.onnx")
    bundle = compile_file(tmp_path / "lenet.onnx", Options(name="lenet", target=BOARD))
    files = bundle.files
    assert files["target/toolchain.cmake"] == (PACKAGE / "myboard-m4.cmake").read_text()
    assert files["target/cortex-m/myboard-m4.ld"] == (PACKAGE / "myboard-m4.ld").read_text()
    assert {"target/board.cmake", "target/cortex-m/arm-none-eabi.cmake", "target/cortex-m/startup.c",
            "target/cortex-m/sections.ld", "target/cortex-m/aotc_board.h"} <= files.keys()
    assert not any("mps2-an386.ld" in f for f in files)
    assert 'REGION_ALIAS("AOTC_ARENA", RAM);' in files["target/cortex-m/aotc_regions.ld"]
    info = json.loads(files["metadata.json"])["target_info"]
    assert info["board"] == BOARD and info["registered_by"] == "entry point myboard-m4 = aotc_myboard:BOARD"
    assert {r: v["bytes"] for r, v in info["regions"].items()} == {"FLASH": 512 * KIB, "RAM": 128 * KIB}
    t = get_target(BOARD)
    assert (t.dsp, t.helium, t.vector_unit, t.emulator[:3]) == (True, False, False, ("qemu-system-arm", "-M",
                                                                                     "mps2-an386"))


def test_fit_check_counts_the_boards_own_memory(tmp_path, register, capsys):
    """A model that fits mps2-an386's 4 MiB of RAM is refused on myboard-m4's 128 KiB, naming the board and
    its memory; nothing is written."""
    register(**{BOARD: "aotc_myboard:BOARD"})
    onnx.save(big_arena_model(), tmp_path / "wide.onnx")
    compile_file(str(tmp_path / "wide.onnx"), Options(name="wide", target="mps2-an386"))
    assert main([str(tmp_path / "wide.onnx"), "-o", str(tmp_path / "out"), "--target", BOARD,
                 "--no-configure"]) == 2
    line = one_error_line(capsys)
    assert f"model 'wide' does not fit target {BOARD} (flash 512 KiB, SRAM 128 KiB)" in line, line
    assert "196,608 bytes" in line, line  # the input, which no pool of its 128 KiB holds
    assert not (tmp_path / "out").exists()
    onnx.save(zoo.MODELS["mlp"](), tmp_path / "mlp.onnx")  # 427 KiB of weights + 128 KiB of code: over its flash
    with pytest.raises(AotcError, match=f"mlp' does not fit target {BOARD}: weights need"):
        compile_file(tmp_path / "mlp.onnx", Options(name="mlp", target=BOARD))


def test_a_board_declared_without_files_gets_aotcs(register):
    """Without a linker script or toolchain file of its own, cortex_m_board() writes them from the
    declaration: the regions as its MEMORY block, the core's flags, the qemu machine (not the board's name)."""
    regions = (Region("FLASH", 0, 256 * KIB, "flash"), Region("RAM", 0x20000000, 64 * KIB, "RAM"),
               Region("PSRAM", 0x21000000, 1024 * KIB, "PSRAM"))
    t = cortex_m_board("tiny-m3", cpu="cortex-m3", regions=regions, qemu_machine="mps2-an385")
    assert {n: (o, s) for n, (o, s) in linker_memory(t.file("cortex-m/tiny-m3.ld")).items()} == \
        {r.name: (r.origin, r.size) for r in regions}
    toolchain = t.file("toolchain.cmake")
    assert "set(AOTC_BOARD tiny-m3)" in toolchain and "-mcpu=cortex-m3" in toolchain
    assert "qemu-system-arm -M mps2-an385" in toolchain
    assert (t.weights_regions, t.arena_regions, t.dsp) == (("FLASH", "PSRAM"), ("RAM", "PSRAM"), False)
    assert not cortex_m_board("dev-kit", cpu="cortex-m4", regions=regions).emulator  # a board qemu does not emulate


# --- what a package gets wrong: one line, naming the entry point ----------------------------------------

BROKEN = {
    "missing": ("no_such_module:BOARD", "failed to load: ModuleNotFoundError"),
    "not_a_target": ("bad_boards:NOT_A_TARGET", "gives int, not an aot.targets.Target"),
    "raises": ("bad_boards:raises", "failed to load: ValueError: no board here"),
    "unknown_cpu": ("bad_boards:unknown_cpu", "cpu 'cortex-m99' is not one aotc knows"),
    "script_disagrees": ("bad_boards:script_disagrees", "says RAM is 64 KiB at 0x20000000, the declaration 128 KiB"),
    "no_includes": ("bad_boards:no_includes", "must INCLUDE aotc_regions.ld"),
    "no_ram": ("bad_boards:no_ram", "among them FLASH (code, constants) and RAM"),
}

BAD_BOARDS = '''
from aot.targets import KIB, Region, cortex_m_board
REGIONS = (Region("FLASH", 0, 512 * KIB, "flash"), Region("RAM", 0x20000000, 128 * KIB, "RAM"))
SCRIPT = """MEMORY
{
  FLASH (rx) : ORIGIN = 0x0, LENGTH = 512K
  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K
}
REGION_ALIAS("AOTC_RODATA", FLASH);
INCLUDE aotc_regions.ld
INCLUDE sections.ld
"""
NOT_A_TARGET = 42
def raises():
    raise ValueError("no board here")
def unknown_cpu():
    return cortex_m_board("b", cpu="cortex-m99", regions=REGIONS)
def script_disagrees():
    return [cortex_m_board("b", cpu="cortex-m4", regions=REGIONS, linker_script=SCRIPT)]
def no_includes():
    return cortex_m_board("b", cpu="cortex-m4", regions=REGIONS,
                          linker_script=SCRIPT.replace("64K", "128K").replace("INCLUDE aotc_regions.ld", ""))
def no_ram():
    return cortex_m_board("b", cpu="cortex-m4", regions=REGIONS[:1])
'''


@pytest.mark.parametrize("case", BROKEN)
def test_broken_entry_point_is_one_line(case, tmp_path, register, capsys):
    (tmp_path / "bad_boards.py").write_text(BAD_BOARDS)
    value, message = BROKEN[case]
    register(**{BOARD: "aotc_myboard:BOARD", "b": value})
    onnx.save(zoo.MODELS["lenet"](), tmp_path / "lenet.onnx")
    assert main([str(tmp_path / "lenet.onnx"), "-o", str(tmp_path / "out"), "--target", "b"]) == 2
    line = one_error_line(capsys)
    assert message in line and f"entry point b = {value}" in line, line
    assert main(["--list-targets"]) == 0  # the others still listed, the broken one said so
    listing = capsys.readouterr().out
    assert re.search(rf"^{BOARD} ", listing, re.M) and re.search(rf"^\(refused: .*{re.escape(message)}", listing,
                                                                 re.M), listing
    assert get_target(BOARD).name == BOARD and get_target("mps2-an386").name == "mps2-an386"  # others unharmed


def test_built_in_names_and_twice_registered_names_are_refused(tmp_path, register, capsys):
    (tmp_path / "clash.py").write_text(
        "from aot.targets import KIB, Region, cortex_m_board\n"
        "R = (Region('FLASH', 0, 512 * KIB, 'flash'), Region('RAM', 0x20000000, 128 * KIB, 'RAM'))\n"
        "AN386 = cortex_m_board('mps2-an386', cpu='cortex-m4', regions=R, qemu_machine='mps2-an386')\n"
        "AGAIN = cortex_m_board('myboard-m4', cpu='cortex-m4', regions=R, qemu_machine='mps2-an386')\n")
    register(**{"mine": "clash:AN386", BOARD: "aotc_myboard:BOARD", "again": "clash:AGAIN"})
    onnx.save(zoo.MODELS["lenet"](), tmp_path / "lenet.onnx")
    assert main([str(tmp_path / "lenet.onnx"), "-o", str(tmp_path / "out"), "--target", "mps2-an386"]) == 2
    line = one_error_line(capsys)
    assert "entry point mine = clash:AN386" in line and "the name of a built-in target" in line, line
    with pytest.raises(AotcError, match="target 'myboard-m4' is registered twice, by entry point myboard-m4 = "
                                        "aotc_myboard:BOARD and by entry point again = clash:AGAIN"):
        get_target(BOARD)
    assert get_target("mps2-an385").origin == "built-in"


# --- built with arm-none-eabi-gcc, run under qemu, against onnxruntime (full) ----------------------

@pytest.mark.full
def test_builds_without_the_package_and_runs_under_qemu(tmp_path, env):
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    import onnxruntime as ort

    onnx.save(zoo.MODELS["lenet"](), tmp_path / "lenet.onnx")
    out = tmp_path / "out"
    subprocess.run([*AOTC, str(tmp_path / "lenet.onnx"), "-o", str(out), "--target", BOARD], check=True, env=env)
    without = dict(os.environ)  # without the package: the bundle holds all the build needs
    for build_dir in (out, tmp_path / "standalone"):  # aotc's build tree, and the bundle configured on its own
        if build_dir != out:
            r = subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(build_dir)], capture_output=True,
                               text=True, env=without)
            assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        r = subprocess.run([cmake_exe(), "--build", str(build_dir)], capture_output=True, text=True, env=without)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        stack_top = re.search(r"(0x[0-9a-f]+)\s+__stack_top = ", (build_dir / "runner.elf.map").read_text())
        assert stack_top and int(stack_top[1], 16) == 0x20000000 + 128 * KIB  # the board's own RAM, not an386's

    x = np.random.default_rng(5).standard_normal((1, 1, 28, 28)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=x)
    subprocess.run([*AOTC, "run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                    str(tmp_path / "got.npz")], check=True, env=env, capture_output=True)
    (want,) = ort.InferenceSession(str(tmp_path / "lenet.onnx")).run(None, {"image": x})
    got = np.load(tmp_path / "got.npz")
    np.testing.assert_allclose(got[list(got)[0]], want, rtol=1e-4, atol=1e-5)

    bench = subprocess.run([*AOTC, "bench", str(out)], capture_output=True, text=True, env=env, check=True)
    assert re.search(rf"^\| lenet \| {BOARD} \| \d+ \|", bench.stdout, re.M), bench.stdout
    gone = subprocess.run([*AOTC, "run", str(out), "--inputs", str(tmp_path / "in.npz")], capture_output=True,
                          text=True, env=without)
    assert gone.returncode == 2 and "registered by aotc-myboard 0.1.0" in gone.stderr, gone.stderr
