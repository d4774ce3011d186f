"""A bundle whose convs and MaxPools all take AVX-512F paths (aot/kernels/conv_avx512.py, aot/kernels/pool.py)
compiles their plain kernels (conv_implicit.c, pool_max.c) only when built without AVX-512F: built with it, the
paths' entries never call them (runtime_c/kernels/common/paths_avx512.h), and the bundle's CMakeLists.txt checks which
build it is on every configure."""

from __future__ import annotations

import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from modelcheck import reference
from onnx import TensorProto, helper, numpy_helper
from opcheck import assert_close

from aot.build import cmake_exe, run_bundle
from aot.compiler import Options, compile_model

PLAIN = {"conv_implicit.c", "pool_max.c"}


def native_has_avx512f() -> bool:
    """Whether the C compiler's -march=native builds here define __AVX512F__."""
    r = subprocess.run([os.environ.get("CC", "cc"), "-march=native", "-dM", "-E", "-x", "c", os.devnull],
                       capture_output=True, text=True)
    return r.returncode == 0 and "#define __AVX512F__ 1" in r.stdout


def paths_model() -> onnx.ModelProto:
    """A MaxPool 3 x 3 / 2 (aotc_maxpool_k3s2p1_f32), a 3 x 3 conv (igx3), a 3 x 3 stride-2 one (igx3s2) and a
    1 x 1 stride-2 one (igx1), on 16 to 32 channels."""
    rng = np.random.default_rng(0)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    nodes = [
        helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["a"]),
        helper.make_node("Conv", ["a", "w2", "b2"], ["c2"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "w3"], ["c3"], kernel_shape=[1, 1], strides=[2, 2]),
        helper.make_node("Add", ["c2", "c3"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    g = helper.make_graph(nodes, "paths", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 8, 8])],
                          [weight("w1", 16, 16, 3, 3), weight("b1", 16), weight("w2", 32, 16, 3, 3), weight("b2", 32),
                           weight("w3", 32, 16, 1, 1)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_avx512f_build_leaves_out_the_plain_kernels(tmp_path):
    if not native_has_avx512f():
        pytest.skip("the C compiler's -march=native does not define __AVX512F__ on this host: no build here "
                    "leaves the plain kernels out")
    model = paths_model()
    bundle = compile_model(model, Options(name="paths", host_isa="avx512f"))  # the paths, as for this host's builds
    called = set(re.findall(r"\b(aotc_(?:conv|maxpool)\w*)\(", bundle.files["src/paths.c"]))
    assert called == {"aotc_maxpool_k3s2p1_f32", "aotc_conv_igx3_f32", "aotc_conv_igx3s2_f32", "aotc_conv_igx1_f32"}
    assert all(f"runtime/{f}" in bundle.files for f in PLAIN)  # shipped, for a build without AVX-512F
    out = tmp_path / "out"
    bundle.write(out / "bundle")
    x = np.random.default_rng(1).standard_normal((1, 16, 32, 32)).astype(np.float32)
    want = reference(model, {"x": x})[0]
    # native first, then reconfigured without -march=native: the check must not keep its first answer
    for native, plain_compiled in (("ON", False), ("OFF", True)):
        subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), f"-DAOTC_NATIVE={native}",
                        "-DAOTC_WARNINGS_AS_ERRORS=ON"], check=True, capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
        compiled = {p.name.removesuffix(".o") for p in out.rglob("*.c.o")}
        assert {"conv_igx3_avx512.c", "pool_max_k3s2p1_avx512.c"} <= compiled, compiled
        assert compiled & PLAIN == (PLAIN if plain_compiled else set()), (native, compiled)
        ours, _ = run_bundle(out, bundle.metadata, [x])
        assert_close(ours["y"], want, f"AOTC_NATIVE={native}")
