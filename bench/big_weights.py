"""Compile and build a model with ~100 MB of weights (ResNet-50 class); report time and peak memory.

    python bench/big_weights.py [--mb 100]

The weights go into the bundle as a binary blob linked with .incbin, so the C
compiler never sees them as text; this measures that the whole path stays fast.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from aot.build import cmake_exe


def model_with_weights(mb: int) -> onnx.ModelProto:
    """A chain of square MatMuls + Relu whose weights total `mb` megabytes."""
    n = 1024
    layers = max(1, mb * 2**20 // (n * n * 4))
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for k in range(layers):
        w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{k}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{k}"], [f"m{k}"], name=f"matmul{k}"))
        nodes.append(helper.make_node("Relu", [f"m{k}"], [f"r{k}"], name=f"relu{k}"))
        x = f"r{k}"
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--mb", type=int, default=100)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aotc-big-"))
    onnx.save(model_with_weights(args.mb), work / "big.onnx")
    size = (work / "big.onnx").stat().st_size
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "aot.cli", str(work / "big.onnx"), "-o", str(work / "out")], check=True,
                   stdout=subprocess.DEVNULL)
    t1 = time.monotonic()
    subprocess.run([cmake_exe(), "--build", str(work / "out"), "-j", "2"], check=True, stdout=subprocess.DEVNULL)
    t2 = time.monotonic()
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"model {size / 2**20:.1f} MB: aotc {t1 - t0:.1f} s, cmake --build {t2 - t1:.1f} s, "
          f"total {t2 - t0:.1f} s, peak RSS of a child process {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
