"""The vendor guide, followed: a third-party vendor installed as a package compiles a model,
without touching aot/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from aot.build import cmake_exe

PLUGIN = Path(__file__).parent / "plugin_vendor"


def model() -> onnx.ModelProto:
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [], [0.5])
    nodes = [helper.make_node("Mul", ["x", "scale"], ["m"], name="mul"),
             helper.make_node("Relu", ["m"], ["r"], name="relu"),
             helper.make_node("Sigmoid", ["r"], ["s"], name="sigmoid"),
             helper.make_node("LeakyRelu", ["s"], ["y"], name="leaky", alpha=0.2)]
    g = helper.make_graph(nodes, "plug", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])], [scale])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_third_party_vendor_from_a_package(tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(PLUGIN)], check=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    onnx.save(model(), tmp_path / "plug.onnx")
    out = tmp_path / "out"
    aotc = [sys.executable, "-m", "aot.cli"]
    subprocess.run([*aotc, str(tmp_path / "plug.onnx"), "-o", str(out), "--vendor", "demo"], check=True, env=env)
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(3, 5)
    np.savez(tmp_path / "in.npz", x=x)
    subprocess.run([*aotc, "run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                    str(tmp_path / "o.npz")], check=True, env=env)
    s = 1 / (1 + np.exp(-np.maximum(0.5 * x, 0)))
    np.testing.assert_allclose(np.load(tmp_path / "o.npz")["y"], np.where(s >= 0, s, 0.2 * s), rtol=1e-6)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    assert [f["compiler"] for f in meta["partition"]] == ["demo", "demo"]  # Sigmoid splits the two
    assert meta["partition"][0]["composites"][0]["name"] == "demo.scale_relu"
    unknown = subprocess.run([*aotc, str(tmp_path / "plug.onnx"), "-o", str(tmp_path / "o2"), "--vendor", "demo"],
                             capture_output=True, text=True)
    assert unknown.returncode == 2 and "demo" in unknown.stderr  # without the package on the path
