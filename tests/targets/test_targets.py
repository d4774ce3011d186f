"""Cross targets: models on Cortex-M boards (qemu-system-arm) and Linux on Arm and RISC-V
(qemu-user) through the user's path (aotc -> cmake --build -> aotc run), matching onnxruntime;
the fit check; footprint vs binutils' size; a firmware project that add_subdirectory()s a bundle.

Builds are shared: every (model, target) pair is compiled and built once per module, two at
a time, and the tests look at the results."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import first_fast, require_tool
from onnx import TensorProto, helper, numpy_helper
from opcheck import assert_close

from aot.build import cmake_exe, runner_command
from aot.footprint import parse_elf
from aot.targets import TARGETS, get_target, place

AOTC = [sys.executable, "-m", "aot.cli"]
CORTEX_M = ["mps2-an385", "mps2-an386", "mps2-an505", "mps2-an500", "mps3-an547"]
LINUX = ["aarch64-linux", "armv7-linux", "riscv64-linux"]
SIZE_TOOL = {"mps2-an385": "arm-none-eabi-size", "mps2-an386": "arm-none-eabi-size",
             "mps2-an505": "arm-none-eabi-size", "mps2-an500": "arm-none-eabi-size",
             "mps3-an547": "arm-none-eabi-size", "aarch64-linux": "aarch64-linux-gnu-size",
             "armv7-linux": "arm-linux-gnueabihf-size", "riscv64-linux": "riscv64-linux-gnu-size"}


def embed_model() -> onnx.ModelProto:
    """An embedding lookup (int64 input, a 256 KiB table that goes to the weights blob)
    followed by elementwise ops: little compute, so it is quick even on a soft-float M3."""
    rng = np.random.default_rng(7)
    table = rng.standard_normal((1024, 64)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (1, 64)).astype(np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["e"], name="embed"),
             helper.make_node("Mul", ["e", "scale"], ["m"], name="scale"),
             helper.make_node("Tanh", ["m"], ["y"], name="tanh")]
    g = helper.make_graph(nodes, "embed", [helper.make_tensor_value_info("ids", TensorProto.INT64, [8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 64])],
                          [numpy_helper.from_array(table, "table"), numpy_helper.from_array(scale, "scale")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def mcu_convs_model() -> onnx.ModelProto:
    """The Cortex-M conv paths in one small net: a 3-channel stem at stride 2 (implicit GEMM runs at
    sx = 2, rows whose last positions are fewer than a run); depthwise 3 x 3 convs at stride 1 and 2
    on rows of 17, 9 and 5 outputs (the M4's row blocks of 8, 4 and 3 outputs, the M55's vectors,
    the last ending at the row's end or predicated; edges, two-row bands), with a Relu6 and a Relu;
    1 x 1 convs on the implicit GEMM, a plane in one run of positions, with a narrow last block of
    channels (10 = 4 + 4 + 2), a Relu fused or none."""
    b = zoo.Builder("mcu_convs", opset=13)
    x = b.input("input", (1, 3, 24, 34))
    x = b.relu6(b.conv(x, 8, 3, stride=2))  # 12 x 17
    x = b.relu6(b.conv(x, 8, 3, group=8))
    x = b.relu(b.conv(x, 10, 1, pad=0))
    x = b.relu6(b.conv(x, 10, 3, stride=2, group=10))  # 6 x 9
    x = b.relu(b.conv(x, 10, 3, group=10))
    x = b.relu6(b.conv(x, 10, 3, stride=2, group=10))  # 3 x 5
    return b.build([b.conv(x, 6, 1, pad=0)])


def model_and_inputs(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    if name == "embed":
        ids = np.array([0, 1023, 5, 77, 512, 3, 999, 64], dtype=np.int64)
        return embed_model(), {"ids": ids}
    if name == "mcu_convs":
        model = mcu_convs_model()
        return model, zoo.random_inputs(model)
    model = zoo.build(name)
    return model, zoo.random_inputs(model)


# (model, target) pairs built for the whole module: a dense model (mlp, weights in a blob) on
# every cross target, a CNN (lenet) on the soft-float M3 and on the M55, the embedding
# model (int64 input) on the M3, and the Cortex-M conv paths (mcu_convs) on the M4, the M33 (its
# code and data at the Secure aliases), the M7 and the M55.
PAIRS = ([("mlp", t) for t in CORTEX_M + LINUX] + [("lenet", "mps2-an385"), ("lenet", "mps3-an547"),
                                                    ("embed", "mps2-an385"), ("mcu_convs", "mps2-an386"),
                                                    ("mcu_convs", "mps2-an505"), ("mcu_convs", "mps2-an500"),
                                                    ("mcu_convs", "mps3-an547")])


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def tools_for(target: str) -> list[str]:
    t = get_target(target)
    return [t.compiler, t.emulator[0]]


@dataclass
class Built:
    out: Path
    meta: dict
    outputs: dict[str, np.ndarray]
    feeds: dict[str, np.ndarray]
    model: onnx.ModelProto


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} -> exit {r.returncode}\n{r.stdout[-3000:]}\n"
                             f"{r.stderr[-3000:]}")
    return r


def compile_build_run(root: Path, name: str, target: str) -> Built:
    model, feeds = model_and_inputs(name)
    d = root / f"{name}-{target}"
    d.mkdir(parents=True)
    src, out = d / f"{name}.onnx", d / "out"
    onnx.save(model, src)
    run([*AOTC, str(src), "-o", str(out), "--target", target])
    run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"])
    run([cmake_exe(), "--build", str(out)])
    np.savez(d / "in.npz", **feeds)
    run([*AOTC, "run", str(out), "--inputs", str(d / "in.npz"), "--outputs", str(d / "res.npz")])
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    return Built(out, meta, dict(np.load(d / "res.npz")), feeds, model)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """Futures of every PAIRS build whose tools are installed (two builds at a time)."""
    root = tmp_path_factory.mktemp("targets")
    pool = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)))
    futures: dict[tuple[str, str], Future] = {}
    for name, target in PAIRS:
        if all(shutil.which(t) for t in tools_for(target)):
            futures[(name, target)] = pool.submit(compile_build_run, root, name, target)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def ctest_exe() -> str:
    return shutil.which("ctest") or str(Path(cmake_exe()).with_name("ctest"))


def get_build(builds, name: str, target: str) -> Built:
    require_tool(*tools_for(target))
    return builds[(name, target)].result()


# --- listing and unknown targets ---------------------------------------------------------------

def test_list_targets_shows_every_target_with_memory():
    r = run([*AOTC, "--list-targets"])
    for name in ["host", *CORTEX_M, *LINUX]:
        assert re.search(rf"^{re.escape(name)}\s", r.stdout, re.MULTILINE), r.stdout
    an385 = next(line for line in r.stdout.splitlines() if line.startswith("mps2-an385"))
    assert "4 MiB" in an385 and "16 MiB" in an385 and "Cortex-M3" in an385


def test_unknown_target_is_refused_with_the_known_ones(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(embed_model(), src)
    r = subprocess.run([*AOTC, str(src), "-o", str(tmp_path / "out"), "--target", "cortex-m99"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cortex-m99" in lines[0], r.stderr
    assert all(t in lines[0] for t in TARGETS), lines[0]
    assert not (tmp_path / "out").exists()


# --- models under qemu match onnxruntime ------------------------------------------------------------

@pytest.mark.full
@pytest.mark.parametrize("name,target", PAIRS, ids=[f"{m}-{t}" for m, t in PAIRS])
def test_model_on_target_matches_onnxruntime(builds, name, target):
    b = get_build(builds, name, target)
    assert b.meta["target"] == target
    for spec, ref in zip(b.meta["outputs"], reference(b.model, b.feeds), strict=True):
        assert_close(b.outputs[spec["name"]], ref, f"{name} on {target}: {spec['name']}")


@pytest.mark.full
def test_ctest_runs_the_runner_under_qemu(builds):
    b = get_build(builds, "mlp", "mps2-an385")
    r = run([ctest_exe(), "--output-on-failure"], cwd=b.out)
    assert "100% tests passed" in r.stdout, r.stdout


@pytest.mark.full
def test_timing_under_qemu_is_not_reported(builds, tmp_path):
    b = get_build(builds, "embed", "mps2-an385")
    np.savez(tmp_path / "in.npz", **b.feeds)
    r = run([*AOTC, "run", str(b.out), "--inputs", str(tmp_path / "in.npz"), "--outputs",
             str(tmp_path / "o.npz"), "--repeat", "3"])
    assert "not meaningful" in r.stderr and "median" not in r.stdout, (r.stdout, r.stderr)


@pytest.mark.full
def test_bare_metal_exit_codes_come_back_through_semihosting(builds, tmp_path):
    """A missing input file: the runner's exit code 66 is qemu's exit code."""
    b = get_build(builds, "embed", "mps2-an385")
    cmd = runner_command(get_target("mps2-an385"), b.out / "runner.elf", ["missing.bin", "o.bin"])
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 66, (r.returncode, r.stderr)
    assert "cannot open missing.bin" in r.stderr


# --- the fit check ----------------------------------------------------------------------------------

@pytest.mark.full
def test_bench_on_a_board_counts_instructions_per_inference_and_per_mac(builds):
    """aotc bench on a Cortex-M bundle: qemu with aotc's counting plugin (built from source here),
    instructions of one inference, the M4's estimated cycles, MACs from the graph, the outputs' error
    against onnxruntime, and with --profile where they go."""
    b = get_build(builds, "mlp", "mps2-an386")
    require_tool("cc")
    r = run([*AOTC, "bench", str(b.out), "--profile"])
    row = next(line for line in r.stdout.splitlines() if line.startswith(f"| {b.meta['name']} |"))
    # --profile: per function, most first; a dense net at batch 1 spends nearly all in the GEMM core's
    # GEMV kernel, and the functions' counts add up to the inference's
    prof = [[c.strip() for c in line.strip("|").split("|")] for line in r.stdout.splitlines()
            if line.startswith("| ") and line.count("|") == 7 and "function" not in line]
    assert prof and prof[0][0] == "kernel_row_panel" and float(prof[0][1].rstrip("%")) > 80, r.stdout
    cells = [c.strip() for c in row.strip("|").split("|")]
    instructions, cycles, macs, per_mac, cycles_per_mac = (int(cells[2]), int(cells[3]), int(cells[4]),
                                                           float(cells[5]), float(cells[6]))
    assert macs == sum(int(np.prod(i.dims)) for i in b.model.graph.initializer if len(i.dims) == 2), row
    assert instructions > macs and abs(per_mac - instructions / macs) < 0.01, row
    # an M4 spends more cycles than instructions (loads, VFMA, taken branches), within the TRM's worst
    assert instructions < cycles < 4 * instructions and abs(cycles_per_mac - cycles / macs) < 0.01, row
    assert cells[7].endswith("%") and float(cells[8]) < 1e-4, row
    assert abs(sum(int(c[2]) for c in prof) - instructions) <= 0.01 * instructions, r.stdout
    assert abs(sum(int(c[3]) for c in prof) - cycles) <= 0.01 * cycles, r.stdout
    assert all(abs(float(c[4]) - int(c[3]) / int(c[2])) < 0.01 for c in prof if int(c[2]) > 0), r.stdout


@pytest.mark.full
def test_bench_nodes_splits_an_inference_by_node(builds):
    """aotc bench --nodes on a board: one row per node the generated code taps, in its order, with that node's
    instructions and the M4's estimated cycles (the plugin's marks at the run function and at each tap call of
    the AOTC_TAPS copy); the rows add up to the normal build's inference within the tap calls' cost."""
    b = get_build(builds, "mlp", "mps2-an386")
    require_tool("cc")
    r = run([*AOTC, "bench", str(b.out), "--nodes"])
    row = next(line for line in r.stdout.splitlines() if line.startswith(f"| {b.meta['name']} |"))
    instructions, cycles = (int(c) for c in [c.strip() for c in row.strip("|").split("|")][2:4])
    nodes = [[c.strip() for c in line.strip("|").split("|")] for line in r.stdout.splitlines()
             if re.match(r"\| \d+ \|", line)]
    code = (b.out / "bundle" / "src" / f"{b.meta['name']}.c").read_text()
    tapped = re.findall(r'AOTC_TAP\("([^"]+)"', code.split(f"{b.meta['name']}_run(")[-1])
    assert [n[1] for n in nodes] == tapped, r.stdout
    per_i, per_c = [int(n[3]) for n in nodes], [int(n[4]) for n in nodes]
    assert all(i > 0 for i in per_i) and all(i < c < 4 * i for i, c in zip(per_i, per_c, strict=True)), r.stdout
    gemms = [int(n[4]) for n in nodes if "Gemm" in n[2]]  # a dense net at batch 1: nearly all in its GEMVs
    assert len(gemms) == 3 and sum(gemms) > 0.9 * cycles, r.stdout
    assert abs(sum(per_i) - instructions) <= 0.02 * instructions, r.stdout
    assert abs(sum(per_c) - cycles) <= 0.02 * cycles, r.stdout


def test_bench_nodes_on_a_host_bundle_is_refused(tmp_path):
    """--nodes counts under qemu: on a host bundle it says so (exit 2), before building anything."""
    src, out = tmp_path / "mlp.onnx", tmp_path / "out"
    onnx.save(zoo.mlp(), src)
    run([*AOTC, str(src), "-o", str(out)])
    r = subprocess.run([*AOTC, "bench", str(out), "--nodes"], capture_output=True, text=True)
    assert r.returncode == 2 and "--nodes" in r.stderr and "host" in r.stderr, r.stderr
    assert not (out / "compare").exists()


@pytest.mark.full
@pytest.mark.parametrize("target,core", [("mps2-an505", "m33"), ("mps2-an500", "m7"), ("mps3-an547", "m55")])
def test_bench_estimates_the_cycles_of_the_m33_m7_and_m55(builds, target, core):
    """aotc bench runs the plugin with the board's core model (aot.bench.CYCLE_MODELS): an estimate
    beside the instructions, within what the core's rules allow (the M7 issues two a cycle at best, none
    of the rules costs 4 a instruction on a dense net), and the same per function with --profile."""
    b = get_build(builds, "mlp", target)
    require_tool("cc")
    r = run([*AOTC, "bench", str(b.out), "--profile"])
    row = next(line for line in r.stdout.splitlines() if line.startswith(f"| {b.meta['name']} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    instructions, cycles = int(cells[2]), int(cells[3])
    assert instructions / 2 <= cycles < 4 * instructions, row
    prof = [[c.strip() for c in line.strip("|").split("|")] for line in r.stdout.splitlines()
            if line.startswith("| ") and line.count("|") == 7 and "function" not in line]
    assert abs(sum(int(c[3]) for c in prof) - cycles) <= 0.01 * cycles, r.stdout


@pytest.mark.full
def test_bench_on_a_board_without_a_timing_model_prints_no_cycles(builds):
    """The M3 (mps2-an385): instructions only, "-" for the cycles (aotc models the M4's timing)."""
    b = get_build(builds, "mlp", "mps2-an385")
    require_tool("cc")
    r = run([*AOTC, "bench", str(b.out), "--profile"])
    row = next(line for line in r.stdout.splitlines() if line.startswith(f"| {b.meta['name']} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert int(cells[2]) > 0 and cells[3] == "-" and cells[6] == "-", row
    prof = [line for line in r.stdout.splitlines() if line.count("|") == 7 and line[:5] not in ("| fun", "|---|")]
    assert prof and all(line.split("|")[4].strip() == "-" for line in prof), r.stdout


@pytest.mark.parametrize("path", first_fast(["as-is", "no-tools"]))
def test_model_too_big_for_the_board_is_refused_with_sizes(tmp_path, path):
    """The sizes, whether or not the Arm compiler is installed ("no-tools": PATH is an empty folder)."""
    rows, dim = 90000, 64  # a 22 MiB table: more than the an385's 4 MiB flash and 16 MiB PSRAM
    table = np.zeros((rows, dim), np.float32)
    g = helper.make_graph([helper.make_node("Gather", ["table", "ids"], ["y"], name="embed")], "huge",
                          [helper.make_tensor_value_info("ids", TensorProto.INT64, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, dim])],
                          [numpy_helper.from_array(table, "table")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    src = tmp_path / "huge.onnx"
    onnx.save(m, src)
    out = tmp_path / "out"
    (tmp_path / "empty-path").mkdir()
    env = {**os.environ, "PATH": str(tmp_path / "empty-path")} if path == "no-tools" else None
    r = subprocess.run([*AOTC, str(src), "-o", str(out), "--target", "mps2-an385"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "does not fit" in lines[0] and "mps2-an385" in lines[0], lines[0]
    assert str(rows * dim * 4) in lines[0] and "16 MiB" in lines[0] and "4 MiB" in lines[0], lines[0]
    assert not out.exists()
    # The same model fits the an547, whose DDR takes the table.
    r = subprocess.run([*AOTC, str(src), "-o", str(out), "--target", "mps3-an547", "--no-configure"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    assert meta["target_info"]["placement"]["weights_blob"] == "DDR"
    assert 'REGION_ALIAS("AOTC_WEIGHTS", DDR)' in (out / "bundle/target/cortex-m/aotc_regions.ld").read_text()


def test_fit_check_places_and_refuses_arenas():
    an385 = get_target("mps2-an385")
    p = place(an385, name="m", inline_weights=1000, blob_weights=3 << 20, arena=1 << 20, io_bytes=1000)
    assert (p.weights_region, p.arena_region) == ("FLASH", "RAM")
    p = place(an385, name="m", inline_weights=1000, blob_weights=5 << 20, arena=6 << 20, io_bytes=1000)
    assert (p.weights_region, p.arena_region) == ("PSRAM", "PSRAM")
    from aot.errors import AotcError

    with pytest.raises(AotcError, match=r"arena \+ runner I/O need 17 MiB \(\d+ bytes\)"):
        place(an385, name="m", inline_weights=0, blob_weights=0, arena=17 << 20, io_bytes=0)


# --- footprint --------------------------------------------------------------------------------------

def berkeley(tool: str, path: Path, total: bool = False) -> tuple[int, int, int]:
    out = run([tool, *(["-t"] if total else []), str(path)]).stdout.strip().splitlines()
    text, data, bss = out[-1].split()[:3]
    return int(text), int(data), int(bss)


@pytest.mark.full
@pytest.mark.parametrize("target", ["mps2-an385", "mps3-an547", "aarch64-linux"])
def test_footprint_agrees_with_binutils_size(builds, target):
    b = get_build(builds, "mlp", target)
    tool = SIZE_TOOL[target]
    require_tool(tool)
    r = run([*AOTC, "footprint", str(b.out)])
    # only a board has flash; on Linux the same bytes are the program's read-only image
    assert ("flash" if target.startswith("mps") else "read-only image") in r.stdout and "RAM" in r.stdout
    fp = json.loads((b.out / "footprint.json").read_text())
    model, image = fp["model"], fp["image"]
    name = b.meta["name"]
    archive = model["archive"]  # the whole archive, as `size -t`; the model's figures: what a --gc-sections link keeps
    assert (archive["text"], archive["data"], archive["bss"]) == berkeley(tool, b.out / f"lib{name}.a", total=True)
    # (the link pads merged sections to their alignment: a few bytes more where it drops nothing, aarch64's +32)
    assert model["text"] <= archive["text"] + 256 and model["counted"].startswith("what a --gc-sections link keeps")
    runner = b.out / image["file"]
    assert (image["text"], image["data"], image["bss"]) == berkeley(tool, runner)
    assert model["flash_bytes"] == model["text"] + model["data"]
    arena = b.meta["memory"]["arena_bytes"]
    assert model["ram_bytes"] == arena + model["data"] + model["bss"] + model["stack_bytes"]
    assert model["stack_bytes"] > 0 and model["stack"]["deepest_path"][0] in (f"{name}_run", f"{name}_init")
    weights = b.meta["memory"]["weights_bytes"]
    assert model["text"] >= weights  # the weights are read-only data of the library
    # code kept per source file: the GEMM core's gemm.c and the model's own .c are there, and with
    # the code from outside the bundle they add up to no more than the image's text
    code = image["code_bytes_by_file"]
    assert code.get("gemm.c", 0) > 0 and code.get(f"{name}.c", 0) > 0, code
    assert sum(code.values()) <= image["text"]
    # ... and per function of the bundle, adding up to its files' bytes
    functions = image["code_bytes_by_function"]
    assert any(k.startswith("gemm.c:") for k in functions), functions
    assert sum(functions.values()) == sum(v for k, v in code.items() if k != "(other)")
    if get_target(target).regions:
        # Every allocated byte is in a region of the board; .data twice (its initial values in flash).
        used = sum(r["used_bytes"] for r in image["regions"].values())
        assert used == image["text"] + 2 * image["data"] + image["bss"]
        assert all(r["used_bytes"] <= r["size_bytes"] for r in image["regions"].values())


# --- a bundle that is moved, and a firmware project ---------------------------------------------------

@pytest.mark.full
def test_bundle_builds_standalone_after_a_move(builds, tmp_path):
    """OUT/bundle alone, copied elsewhere, configures for its target with no arguments."""
    b = get_build(builds, "mlp", "mps2-an386")
    moved = tmp_path / "elsewhere" / "bundle"
    shutil.copytree(b.out / "bundle", moved)
    build = tmp_path / "build"
    run([cmake_exe(), "-S", str(moved), "-B", str(build), "-DAOTC_WARNINGS_AS_ERRORS=ON"])
    run([cmake_exe(), "--build", str(build)])
    elf = build / "runner.elf"
    assert parse_elf(elf.read_bytes()).sections, "no ELF image"
    r = run([ctest_exe(), "--output-on-failure"], cwd=build)
    assert "100% tests passed" in r.stdout


FIRMWARE_CMAKE = """\
cmake_minimum_required(VERSION 3.16)
project(firmware C)
set({NAME}_BUILD_RUNNER OFF)                  # the library only
add_subdirectory({bundle} model)
add_executable(firmware main.c)
target_link_libraries(firmware PRIVATE {name})
# aotc's board support (vector table, reset handler, semihosting), with our own linker script.
aotc_board_executable(firmware LINKER_SCRIPT ${{CMAKE_CURRENT_SOURCE_DIR}}/firmware.ld)
enable_testing()
aotc_board_add_test(firmware firmware)
"""

# The firmware's own memory layout for the an386: the model's arena goes to a section of its
# choosing (.model_arena) in PSRAM; everything else as usual.
FIRMWARE_LD = """\
MEMORY {
  FLASH (rx)  : ORIGIN = 0x00000000, LENGTH = 4M
  RAM   (rwx) : ORIGIN = 0x20000000, LENGTH = 4M
  PSRAM (rwx) : ORIGIN = 0x21000000, LENGTH = 16M
}
ENTRY(Reset_Handler)
SECTIONS {
  .isr_vector : { KEEP(*(.isr_vector)) } > FLASH
  .text : { *(.text*) KEEP(*(.init)) KEEP(*(.fini)) *(.rodata*) . = ALIGN(4); } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  .init_array : { PROVIDE_HIDDEN(__init_array_start = .); KEEP(*(.init_array*));
                  PROVIDE_HIDDEN(__init_array_end = .); } > FLASH
  .fini_array : { PROVIDE_HIDDEN(__fini_array_start = .); KEEP(*(.fini_array*));
                  PROVIDE_HIDDEN(__fini_array_end = .); } > FLASH
  PROVIDE_HIDDEN(__preinit_array_start = .); PROVIDE_HIDDEN(__preinit_array_end = .);
  .model_arena (NOLOAD) : ALIGN(64) { *(.model_arena) } > PSRAM
  __data_load__ = LOADADDR(.data);
  .data : { __data_start__ = .; *(.data*) . = ALIGN(4); __data_end__ = .; } > RAM AT > FLASH
  .bss (NOLOAD) : { __bss_start__ = .; *(.bss*) *(COMMON) . = ALIGN(4); __bss_end__ = .; } > RAM
  end = .;
  __stack_top = ORIGIN(RAM) + LENGTH(RAM);
}
"""

FIRMWARE_MAIN = """\
#include <stdint.h>
#include <stdio.h>
#include "{name}.h"

/* The model's working memory, in a section of the firmware's choosing (firmware.ld). */
static uint8_t model_arena[{NAME}_ARENA_SIZE + 1u]
    __attribute__((section(".model_arena"), aligned({NAME}_ARENA_ALIGN)));
static const float input[] = {{ {values} }};
static float output[{NAME}_{OUT}_BYTES / sizeof(float)];

int main(void) {{
    struct {name}_inputs in = {{ input }};
    struct {name}_outputs out = {{ output }};
    FILE *f;
    if ((uintptr_t)model_arena < 0x21000000u || (uintptr_t)model_arena >= 0x22000000u) return 3;
    if ({name}_init(model_arena) != 0) return 1;
    if ({name}_run(&in, &out, model_arena) != 0) return 2;
    f = fopen("outputs.bin", "wb");   /* semihosting: a file on the host */
    if (!f || fwrite(output, 1, sizeof output, f) != sizeof output) return 4;
    fclose(f);
    printf("firmware: arena at %p, %u outputs written\\n", (void *)model_arena, (unsigned)(sizeof output / 4));
    return 0;
}}
"""


@pytest.mark.full
def test_firmware_project_adds_the_bundle_with_add_subdirectory(tmp_path):
    target = "mps2-an386"
    require_tool(*tools_for(target))
    model, feeds = model_and_inputs("mlp")
    src = tmp_path / "mlp.onnx"
    onnx.save(model, src)
    out = tmp_path / "out"
    run([*AOTC, str(src), "-o", str(out), "--target", target, "--no-configure"])
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    name, (inp,), (outp,) = meta["name"], meta["inputs"], meta["outputs"]
    x = feeds[inp["name"]].astype(np.float32).ravel()
    fw = tmp_path / "firmware"
    fw.mkdir()
    (fw / "CMakeLists.txt").write_text(FIRMWARE_CMAKE.format(
        name=name, NAME=name.upper(), bundle=(out / "bundle").as_posix()))
    (fw / "firmware.ld").write_text(FIRMWARE_LD)
    (fw / "main.c").write_text(FIRMWARE_MAIN.format(
        name=name, NAME=name.upper(), OUT=outp["field"].upper(), values=", ".join(v.hex() for v in x.tolist())))
    build = tmp_path / "fw-build"
    run([cmake_exe(), "-S", str(fw), "-B", str(build),
         f"-DCMAKE_TOOLCHAIN_FILE={out / 'bundle' / 'target' / 'toolchain.cmake'}", "-DAOTC_WARNINGS_AS_ERRORS=ON"])
    run([cmake_exe(), "--build", str(build)])
    mapfile = (build / "firmware.elf.map").read_text()
    assert re.search(r"^\.model_arena\s+0x0*21[0-9a-f]{6}\s", mapfile, re.MULTILINE), "arena not in PSRAM"
    r = run([ctest_exe(), "--output-on-failure", "-V"], cwd=build)
    assert "firmware: arena at 0x21" in r.stdout, r.stdout
    ours = np.fromfile(build / "outputs.bin", dtype=np.float32).reshape(outp["shape"])
    assert_close(ours, reference(model, feeds)[0], f"firmware {name} on {target}")
