"""The vendor guide's example, as a user has it: examples/vendors/mynpu pip-installed into a site folder of its
own (as test_vendor_plugin.py installs plugin_vendor), then only the `aotc` command line, in processes with
that folder on PYTHONPATH: its listing, zoo models compiled through it against onnxruntime, `aotc compare`
inside its functions, its own op, its refusals, the vendor test kit, Cortex-M boards under qemu (one of them
the board the package registers), and the arena its planned workspace gives against a bump allocation and
against the host alone."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
import pytest
import zoo
from conftest import first_fast, require_tool
from modelcheck import global_symbols, outside_prefix, reference, sanitize_args, sanitizing

from aot.build import build, cmake_exe
from aot.compiler import Options, compile_model

MYNPU = Path(__file__).resolve().parents[2] / "examples" / "vendors" / "mynpu"
AOTC = [sys.executable, "-m", "aot.cli"]
TOLERANCE = 1e-4  # DESIGN.md: fp32 max abs error <= 1e-4 x max(1, max |ref|)


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """The environment of a user who ran `pip install examples/vendors/mynpu` (from a copy, so that pip's
    build folders never land in the repository)."""
    tmp = tmp_path_factory.mktemp("mynpu")
    src = tmp / "src"
    shutil.copytree(MYNPU, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(src)], check=True)
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))


def aotc(env: dict[str, str], *args: object, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([*AOTC, *map(str, args)], capture_output=True, text=True, env=env)
    if check:
        assert r.returncode == 0, f"aotc {' '.join(map(str, args))}: {r.stdout[-2000:]}{r.stderr[-3000:]}"
    return r


def compile_build(env: dict[str, str], tmp: Path, model: onnx.ModelProto, name: str, *options: str,
                  target: str = "host", sanitize: bool = False) -> tuple[Path, dict]:
    """`aotc MODEL -o OUT --vendor mynpu OPTIONS` (which configures OUT for the target: mynpu's own board is
    known only where the package is installed), OUT configured again with -Werror (and the sanitizers), built."""
    src, out = tmp / f"{name}.onnx", tmp / name
    onnx.save(model, src)
    aotc(env, src, "-o", out, "--vendor", "mynpu", "--target", target, *options)
    subprocess.run([cmake_exe(), "-S", out / "bundle", "-B", out, "-DAOTC_WARNINGS_AS_ERRORS=ON",
                    *(sanitize_args(out / "bundle") if sanitize else ())], check=True, capture_output=True)
    build(out)
    return out, json.loads((out / "bundle" / "metadata.json").read_text())


def run(env: dict[str, str], out: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    np.savez(out.parent / f"{out.name}_in.npz", **feeds)
    results = out.parent / f"{out.name}_out.npz"
    aotc(env, "run", out, "--inputs", out.parent / f"{out.name}_in.npz", "--outputs", results)
    with np.load(results) as res:
        return {k: res[k] for k in res.files}


def check_outputs(ours: dict[str, np.ndarray], refs: list[np.ndarray], meta: dict) -> list[float]:
    """Each output within DESIGN.md's tolerance of onnxruntime's: the max abs errors."""
    errors = []
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        err = float(np.abs(ours[spec["name"]] - ref).max())
        assert err <= TOLERANCE * max(1.0, float(np.abs(ref).max())), (spec["name"], err)
        errors.append(err)
    return errors


def test_listed_with_its_options_and_its_board(env):
    listed = aotc(env, "--list-vendors").stdout
    assert "  mynpu " in listed, listed
    assert "--vendor-opt mynpu.block=4|8" in listed and "--vendor-opt mynpu.graph_passes=on|off" in listed
    boards = aotc(env, "--list-targets").stdout
    assert "[aotc-mynpu 0.1.0, entry point mynpu-devkit = aotc_mynpu.board:DEVKIT]" in boards, boards


@pytest.mark.full  # the fast tier's time (a build and run of a model); the compile-only checks stay fast
def test_resnet_through_mynpu_matches_onnxruntime(env, tmp_path):
    """ResNet-8: the convs, residual Adds and Relus in one mynpu function (each block end one mynpu.Conv), the
    classifier's Gemm a 1x1 conv in a second (the graph pass); the transposes to NHWC on the host, none inside;
    a device handle in each function's state; the workspace placed by aotc's planner."""
    model = zoo.resnet()
    out, meta = compile_build(env, tmp_path, model, "resnet")
    feeds = zoo.random_inputs(model)
    check_outputs(run(env, out, feeds), reference(model, feeds), meta)

    assert meta["vendor_graph_passes"] == {"mynpu": ["mynpu.gemm_as_conv"]}
    body, head = meta["partition"]
    assert body["ops"] == ["mynpu.Conv"] * 9 and head["ops"] == ["mynpu.Conv"]
    assert sum(n.startswith("add") for n in body["nodes"]) == 3  # the residual Adds, fused into their convs
    assert "Gemm" not in [n["op"] for n in meta["nodes"]] and "Transpose" in [n["op"] for n in meta["nodes"]]
    c_file = (out / "bundle" / "vendor" / "mynpu" / f"{body['symbol']}.c").read_text()
    assert "mynpu_permute" not in c_file.split("#if defined(AOTC_TAPS)")[0]  # layouts folded, not run
    assert c_file.count("mynpu_conv2d(") == 9
    state = {s: v["bytes"] for s, v in meta["memory"]["vendor_state"].items()}
    assert state == {body["symbol"]: 24, head["symbol"]: 24}  # a mynpu_device each
    shipped = (out / "bundle" / "vendor" / "mynpu" / "mynpu.c").read_text()
    assert shipped == (MYNPU / "aotc_mynpu" / "device" / "mynpu.c").read_text()

    # the arena: the vendor's intermediates placed by aotc's planner, against one after another (a bump
    # allocator), and the whole arena against the same model on the host alone
    planned, stacked = body["workspace_bytes"], body["workspace_stacked_bytes"]
    assert body["workspace_lower_bound_bytes"] <= planned <= stacked
    assert planned < stacked  # the blocks' tensors share bytes
    host = compile_model(model, Options()).metadata["memory"]["arena_bytes"]
    print(f"\nresnet arena: mynpu {meta['memory']['arena_bytes']} B (workspace {planned} B planned, {stacked} B "
          f"stacked, lower bound {body['workspace_lower_bound_bytes']} B), host only {host} B")


def examples_module() -> ModuleType:
    """The package's example models (aotc_mynpu/examples.py), read from its file: it needs only onnx and numpy,
    and importing the package itself here would register mynpu in this test process."""
    spec = importlib.util.spec_from_file_location("mynpu_examples", MYNPU / "aotc_mynpu" / "examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def refusal_cases(tmp: Path) -> list[tuple[tuple[object, ...], str]]:
    """Each (arguments, the one line it is refused with): a target mynpu is not on, its op with a scale it
    cannot store (its infer's AotcError, reported as mynpu's, naming the node), a value its option does not take,
    and its op without it."""
    onnx.save(zoo.resnet(), tmp / "resnet.onnx")
    examples = examples_module()
    onnx.save(examples.requant_model(scale=0.0), tmp / "rq0.onnx")
    onnx.save(examples.requant_model(), tmp / "rq.onnx")
    return [
        ((tmp / "resnet.onnx", "--vendor", "mynpu", "--target", "mps2-an385"),
         "aotc: error: vendor mynpu does not support target mps2-an385: mynpu is attached to the mynpu-devkit, "
         "mps2-an386, mps3-an547 boards only"),
        ((tmp / "rq0.onnx", "--vendor", "mynpu"),
         "aotc: error: vendor mynpu, infer of com.mynpu.Requant: node 'rq' (Requant): com.mynpu.Requant needs a "
         "scale > 0, not 0.0"),
        ((tmp / "resnet.onnx", "--vendor", "mynpu", "--vendor-opt", "mynpu.block=16"),
         "aotc: error: vendor option mynpu.block takes 4 | 8, not '16'"),
        ((tmp / "rq.onnx",), "aotc: error: node 'rq' (Requant): operator domain 'com.mynpu' is not supported"),
    ]


@pytest.mark.parametrize("case", first_fast(range(4), 2))
def test_refusals_are_one_line_each(env, tmp_path, case):
    args, message = refusal_cases(tmp_path)[case]
    r = aotc(env, *args, "-o", tmp_path / "never", check=False)
    assert r.returncode == 2 and r.stderr.startswith(message) and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "never").exists()


def test_partition_show_explains(env, tmp_path):
    """--show lists mynpu's graph pass, its passes per function and its report as the compile makes them;
    --explain gives the checkers' reasons (MobileNetV3's 5x5 depthwise convs and HardSwish stay on the host)."""
    onnx.save(zoo.mobilenet_v3_small(32, 10), tmp_path / "mbv3.onnx")
    r = aotc(env, "partition", tmp_path / "mbv3.onnx", "--vendor", "mynpu", "--show", "--explain")
    assert "mynpu: graph passes=mynpu.gemm_as_conv" in r.stdout
    assert "passes=mynpu.fuse_residual,mynpu.nhwc,mynpu.block_weights" in r.stdout
    assert "mynpu's conv unit has 3x3 and 1x1 kernels, not 5x5" in r.stdout and "does not take HardSwish" in r.stdout
    table = r.stdout.split("\n\n")[0].split("functions;")[0]
    assert "mynpu.Conv" in table and "Transpose" not in table  # the functions as compiled: no layout inside


@pytest.mark.full
@pytest.mark.parametrize(("name", "build_model"), [("squeezenet", zoo.squeezenet),
                                                   ("squeezenet11_224", zoo.squeezenet11_224),
                                                   ("mobilenet_v3_small", zoo.mobilenet_v3_small)])
def test_zoo_models_match_onnxruntime(env, tmp_path, name, build_model):
    """SqueezeNet (the zoo's and 1.1 at 224) and MobileNetV3-small (224): what mynpu refuses (pools, Concat,
    5x5 depthwise, HardSwish, the squeeze-excite's Mul) stays on the host, the rest runs on it."""
    model = build_model()
    out, meta = compile_build(env, tmp_path, model, name, "--vendor-opt", "mynpu.block=8")
    feeds = zoo.random_inputs(model)
    errors = check_outputs(run(env, out, feeds), reference(model, feeds), meta)
    assert all(f["compiler"] == "mynpu" and f["mynpu_block"] == 8 for f in meta["partition"])
    # the device library's names under the bundle's prefix too (Artifact.symbols): another model's bundle links
    # beside this one
    lib = out / f"lib{name}.a"
    assert "mynpu_conv2d" not in global_symbols(lib) and not outside_prefix(lib, name, meta["symbol_prefix"])
    print(f"\n{name}: {len(meta['partition'])} mynpu functions, max abs error {max(errors):.3g}")


@pytest.mark.full
def test_requant_model_and_compare(env, tmp_path):
    """The package's example model holds mynpu's own op; its twin (QuantizeLinear + DequantizeLinear) is
    onnxruntime's reference, for the outputs and for `aotc compare`, which finds each tensor inside the function
    (mynpu taps them in the model's layout) within tolerance. Built under the sanitizers in the full tier."""
    rq, twin = tmp_path / "rq.onnx", tmp_path / "rq_ref.onnx"  # as the package's command writes them
    subprocess.run([sys.executable, "-m", "aotc_mynpu.examples", "-o", rq, "--reference", twin], check=True, env=env)
    out, meta = compile_build(env, tmp_path, onnx.load(rq), "rq", sanitize=sanitizing())
    (fn,) = meta["partition"]
    assert fn["ops"] == ["mynpu.Conv", "com.mynpu.Requant", "mynpu.Conv"], fn["ops"]
    x = np.random.default_rng(3).standard_normal((1, 3, 12, 12)).astype(np.float32)
    check_outputs(run(env, out, {"x": x}), reference(onnx.load(twin), {"x": x}), meta)
    np.savez(tmp_path / "x.npz", x=x)
    r = aotc(env, "compare", twin, out, "--inputs", tmp_path / "x.npz")
    assert "aotc: no divergence" in r.stdout and "DIVERGES" not in r.stdout, r.stdout
    inside = [line for line in r.stdout.splitlines() if f"{fn['symbol']}/" in line]
    assert len(inside) == 3 and all(line.rstrip().endswith("ok") for line in inside), r.stdout


@pytest.mark.full
def test_compare_resnet_inside_functions(env, tmp_path):
    model = zoo.resnet()
    out, _ = compile_build(env, tmp_path, model, "resnet", "--vendor-opt", "mynpu.graph_passes=off")
    r = aotc(env, "compare", out)
    assert "aotc: no divergence" in r.stdout and "DIVERGES" not in r.stdout, r.stdout
    assert r.stdout.count("mynpu.Conv") == 9 and "Gemm" in r.stdout  # the head on the host: the pass is off


@pytest.mark.full
def test_vendor_test_kit(env):
    """`aotc vendor-test mynpu`, with each block size: every case mynpu claims matches onnxruntime."""
    for block in ("4", "8"):
        r = aotc(env, "vendor-test", "mynpu", "--vendor-opt", f"block={block}", check=False)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        first = r.stdout.splitlines()[0]
        assert " 0 FAILED" in first and " 0 build errors" in first, first
        print(f"\nblock {block}: {first}")


@pytest.mark.full
@pytest.mark.parametrize("board", ["mps2-an386", "mynpu-devkit"])
def test_on_a_cortex_m_board(env, tmp_path, board):
    """ResNet-8 through mynpu on a Cortex-M4F under qemu-system-arm, against onnxruntime: on mps2-an386, and on
    mynpu's own board (registered by the package: entry-point group aotc.targets), which runs on that machine."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    model = zoo.resnet()
    out, meta = compile_build(env, tmp_path, model, "resnet_m4", target=board)
    assert meta["target"] == board
    feeds = zoo.random_inputs(model)
    check_outputs(run(env, out, feeds), reference(model, feeds), meta)
