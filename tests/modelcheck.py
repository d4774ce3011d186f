"""Whole models through the path a user takes (aotc MODEL -o OUT, cmake --build OUT, aotc run) and
onnxruntime's answer for them: shared by the model tests of every test folder (a test module is not
importable from another folder, a helper module in tests/ is)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx

from aot.build import cmake_exe

AOTC = [sys.executable, "-m", "aot.cli"]


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's outputs for `feeds`, on one thread."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def compile_build_run(tmp_path, model: onnx.ModelProto, feeds: dict[str, np.ndarray], name: str,
                      cmake_args: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """The bundle's metadata.json and its outputs for `feeds`, built under tmp_path."""
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
