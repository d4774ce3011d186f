"""Whole models through the path a user takes: aotc MODEL -o OUT, cmake --build OUT, aotc run."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
import zoo
from opcheck import assert_close

from aot.build import cmake_exe

AOTC = [sys.executable, "-m", "aot.cli"]


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def compile_build_run(tmp_path, model: onnx.ModelProto, feeds: dict[str, np.ndarray], name: str,
                      cmake_args: tuple[str, ...] = ()) -> tuple[dict, dict]:
    src, out = tmp_path / f"{name}.onnx", tmp_path / "out"
    onnx.save(model, src)
    subprocess.run([*AOTC, str(src), "-o", str(out)], check=True)
    if cmake_args:
        subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), *cmake_args],
                       check=True, capture_output=True)
    subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
    np.savez(tmp_path / "in.npz", **feeds)
    subprocess.run([*AOTC, "run", str(out), "--inputs", str(tmp_path / "in.npz"),
                    "--outputs", str(tmp_path / "res.npz")], check=True)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    return meta, dict(np.load(tmp_path / "res.npz"))


# DenseNet (38 s) also runs under the sanitizers in test_bundle_quality.py: whole here only with -m slow.
# MobileNetV3-Small at 224 x 224, a benchmark model: HardSwish and HardSigmoid (squeeze-excite) throughout.
@pytest.mark.parametrize("name", [pytest.param(m, marks=pytest.mark.slow) if m == "densenet" else m
                                  for m in [*sorted(zoo.MODELS), "mobilenet_v3_small"]])
def test_model_matches_onnxruntime(tmp_path, name):
    model = zoo.build(name)
    feeds = zoo.random_inputs(model)
    meta, ours = compile_build_run(tmp_path, model, feeds, name,
                                   cmake_args=("-DAOTC_WARNINGS_AS_ERRORS=ON",))
    refs = reference(model, feeds)
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        assert_close(ours[spec["name"]], ref, f"{name}:{spec['name']}")
    mem = meta["memory"]
    assert mem["arena_bytes"] <= 1.10 * mem["lower_bound_bytes"], mem
    # the tight bound (planner docstring) leaves out kernel scratch; graph I/O is in the arena
    assert 0 < mem["tight_bound_bytes"] <= mem["arena_bytes"] and mem["io_in_arena"], mem
