"""The vendor guide, followed: a third-party vendor installed as a package compiles a model,
without touching aot/; a vendor without codegen is refused when it is found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import aot.vendor
from aot.build import cmake_exe
from aot.errors import AotcError
from aot.vendor import Vendor, find_vendor

PLUGIN = Path(__file__).parent / "plugin_vendor"
AOTC = [sys.executable, "-m", "aot.cli"]


def model(scale: np.ndarray, shape: tuple[int, int] = (3, 5)) -> onnx.ModelProto:
    nodes = [helper.make_node("Mul", ["x", "scale"], ["m"], name="mul"),
             helper.make_node("Relu", ["m"], ["r"], name="relu"),
             helper.make_node("Sigmoid", ["r"], ["s"], name="sigmoid"),
             helper.make_node("LeakyRelu", ["s"], ["y"], name="leaky", alpha=0.2)]
    g = helper.make_graph(nodes, "plug", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                          [numpy_helper.from_array(scale.astype(np.float32), "scale")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def compile_build_run(tmp_path: Path, m: onnx.ModelProto, x: np.ndarray, env: dict, name: str) -> tuple[Path, dict]:
    onnx.save(m, tmp_path / f"{name}.onnx")
    out = tmp_path / name
    subprocess.run([*AOTC, str(tmp_path / f"{name}.onnx"), "-o", str(out), "--vendor", "demo"], check=True, env=env)
    r = subprocess.run([cmake_exe(), "--build", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    np.savez(tmp_path / f"{name}_in.npz", x=x)
    subprocess.run([*AOTC, "run", str(out), "--inputs", str(tmp_path / f"{name}_in.npz"), "--outputs",
                    str(tmp_path / f"{name}_out.npz")], check=True, env=env)
    return out, dict(np.load(tmp_path / f"{name}_out.npz"))


def expected(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    s = 1 / (1 + np.exp(-np.maximum(scale * x, 0)))
    return np.where(s >= 0, s, 0.2 * s)


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """The environment of a user who pip-installed the demo vendor's package (tests/vendors/plugin_vendor)."""
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(PLUGIN)], check=True)
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))


@pytest.mark.full
def test_third_party_vendor_from_a_package(tmp_path, env):
    x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(3, 5)
    out, got = compile_build_run(tmp_path, model(np.array(0.5)), x, env, "small")
    np.testing.assert_allclose(got["y"], expected(x, np.float32(0.5)), rtol=1e-6)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    assert [f["compiler"] for f in meta["partition"]] == ["demo", "demo"]  # Sigmoid splits the two
    assert meta["partition"][0]["composites"][0]["name"] == "demo.scale_relu"

    # A constant too large to print as C: the vendor puts it in its context's weight store, and
    # the bundle links it from vendor/demo/<symbol>_weights.bin, bit-exact.
    shape = (128, 160)  # 80 KiB of float32: above the store's 64 KiB inline limit
    scale = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    out, got = compile_build_run(tmp_path, model(scale, shape), x, env, "large")
    np.testing.assert_allclose(got["y"], expected(x, scale), rtol=1e-6)
    vdir = out / "bundle" / "vendor" / "demo"
    (blob,) = vdir.glob("*_weights.bin")
    assert blob.read_bytes() == scale.tobytes()
    assert (vdir / blob.name.replace(".bin", ".c")).exists()
    assert "(large_demo_0_weights + 0u)" in (vdir / "large_demo_0.c").read_text()  # read from the blob

    unknown = subprocess.run([*AOTC, str(tmp_path / "small.onnx"), "-o", str(tmp_path / "o2"), "--vendor", "demo"],
                             capture_output=True, text=True)
    assert unknown.returncode == 2 and "demo" in unknown.stderr  # without the package on the path


def test_vendor_without_codegen_is_refused_when_created():
    with pytest.raises(AotcError, match="vendor 'half' has no codegen"):
        Vendor("half", checkers={"Relu": lambda n, g: True})


def test_vendor_without_codegen_is_refused_when_found(tmp_path, monkeypatch):
    """A registered vendor with no codegen: `--vendor half` fails at once, naming it and its entry point."""
    (tmp_path / "half_vendor.py").write_text(
        "from aot.vendor import Vendor\nVENDOR = Vendor('half', checkers={'Relu': lambda n, g: True})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = EntryPoint(name="half", value="half_vendor:VENDOR", group=aot.vendor.GROUP)
    monkeypatch.setattr(aot.vendor, "entry_points", lambda group: [ep] if group == aot.vendor.GROUP else [])
    with pytest.raises(AotcError) as e:
        find_vendor("half")
    assert "vendor 'half' has no codegen" in str(e.value) and "half_vendor:VENDOR" in str(e.value)


def test_third_party_transform_and_its_option(tmp_path, env):
    """The demo package's own pass (demo.merge_relu) and option (demo.passes), from outside the core:
    the pass runs by default and is listed by `aotc partition --show`; `--vendor-opt demo.passes=none`
    turns it off (the pass's bundle is built and run; the C of both is compared); an option the vendor
    does not declare is refused."""
    nodes = [helper.make_node("Relu", ["x"], ["r1"], name="relu1"),
             helper.make_node("Relu", ["r1"], ["r2"], name="relu2"),
             helper.make_node("Sigmoid", ["r2"], ["y"], name="sigmoid")]
    g = helper.make_graph(nodes, "relus", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 8))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 8))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, tmp_path / "relus.onnx")
    shown = subprocess.run([*AOTC, "partition", str(tmp_path / "relus.onnx"), "--vendor", "demo", "--show"],
                           capture_output=True, text=True, env=env)
    assert shown.returncode == 0 and "relus_demo_0: passes=demo.merge_relu" in shown.stdout, shown.stdout + shown.stderr
    x = np.linspace(-2, 2, 16, dtype=np.float32).reshape(2, 8)
    np.savez(tmp_path / "in.npz", x=x)
    loops = {}
    for opt in ("all", "none"):
        out = tmp_path / opt
        subprocess.run([*AOTC, str(tmp_path / "relus.onnx"), "-o", str(out), "--vendor", "demo",
                        "--vendor-opt", f"demo.passes={opt}"], check=True, env=env)
        loops[opt] = (out / "bundle" / "vendor" / "demo" / "relus_demo_0.c").read_text().count("for (i = 0;")
        if opt == "none":
            continue
        r = subprocess.run([cmake_exe(), "--build", str(out)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        subprocess.run([*AOTC, "run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                        str(tmp_path / f"{opt}.npz")], check=True, env=env)
        np.testing.assert_allclose(np.load(tmp_path / f"{opt}.npz")["y"], 1 / (1 + np.exp(-np.maximum(x, 0))),
                                   rtol=1e-6)
    assert loops == {"all": 1, "none": 2}
    bad = subprocess.run([*AOTC, str(tmp_path / "relus.onnx"), "-o", str(tmp_path / "o3"), "--vendor", "demo",
                          "--vendor-opt", "demo.passes=some"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "demo.passes takes all | none, not 'some'" in bad.stderr, bad.stderr
