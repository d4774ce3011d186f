"""Float convs in a bundle built as on an x86-64 machine without AVX-512 (`--host-isa generic`, -march=x86-64-v3),
against onnxruntime (issue 64): a 3 x 3 conv on a 7 x 7 plane (16 of Winograd F(2 x 2)'s tiles, which an AVX2 host
takes: aot/kernels/winograd.py min_tiles_avx2), and the 1 x 1 convs on planes of up to 256 positions whose tiles
prefetch the next block of W^T (conv_implicit.c IG_PF: a loop of their own in ig_tile_y), with output channels that
leave a narrow last block and a residual; a 1 x 1 conv of few input channels on a 14 x 14 plane, which
conv_pw_avx2.h's register tiles take there (aot/kernels/conv.py _implicit_beats_pointwise); and a strided 1 x 1 conv,
on a copy of its strided inputs (aotc_conv_pointwise_strided_f32)."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import require_tool
from modelcheck import build_bundle, reference, run_bundle
from onnx import TensorProto, helper, numpy_helper

from aot.kernels import winograd
from aot.targets import host_cpu_flags
from aot.testing.shared import assert_close

# name: input channels, output channels, kernel, stride, input side, residual
LAYERS = {
    "wino7": (128, 96, 3, 1, 7, True),      # Winograd on 16 tiles, at AVX2 only
    "pw7": (512, 40, 1, 1, 7, True),        # 3 blocks of 16 (the last narrow): two prefetch the next
    "pw14": (384, 48, 1, 1, 14, True),      # 196 positions, 32 full tiles
    "pw14t": (64, 40, 1, 1, 14, True),      # conv_pw_avx2.h's tiles: 196 positions, the last block of 4
    "pw8s2": (48, 32, 1, 2, 16, False),     # strided: on a copy of its strided inputs (8 x 8 out)
}


def convs() -> onnx.ModelProto:
    """Each layer of LAYERS on its own input: Conv (+ its residual input) and Relu, as ResNet's."""
    rng = np.random.default_rng(64)
    inits, nodes, inputs, outputs = [], [], [], []
    for name, (cin, cout, k, stride, side, res) in LAYERS.items():
        out_side = (side + 2 * (k // 2) - k) // stride + 1
        w = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"{name}_w"),
                  numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), f"{name}_b")]
        nodes.append(helper.make_node("Conv", [f"{name}_x", f"{name}_w", f"{name}_b"], [f"{name}_c"],
                                      kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4))
        inputs.append(helper.make_tensor_value_info(f"{name}_x", TensorProto.FLOAT, [1, cin, side, side]))
        last = f"{name}_c"
        if res:
            inputs.append(helper.make_tensor_value_info(f"{name}_r", TensorProto.FLOAT, [1, cout, out_side, out_side]))
            nodes.append(helper.make_node("Add", [last, f"{name}_r"], [f"{name}_a"]))
            last = f"{name}_a"
        nodes.append(helper.make_node("Relu", [last], [name]))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, cout, out_side, out_side]))
    graph = helper.make_graph(nodes, "convs_avx2", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_winograd_on_16_tiles_at_avx2_only():
    """ResNet-50's 7 x 7 x 512 3 x 3 convs (16 tiles of F(2 x 2)): Winograd on an AVX2 host, the implicit GEMM
    where AVX-512's direct kernels are faster (min_tiles)."""
    assert winograd.best(512, 512, 7, 7, False, avx2=True) is winograd.F2
    assert winograd.best(512, 512, 7, 7, False) is None
    assert winograd.best(512, 512, 6, 6, False, avx2=True) is None  # 9 tiles


@pytest.mark.full
def test_float_convs_at_avx2_match_onnxruntime(tmp_path: Path):
    """Every layer's outputs within the default tolerance of onnxruntime's, the 7 x 7 3 x 3 conv by Winograd."""
    require_tool("cmake", "gcc")
    if platform.machine() != "x86_64" or "avx2" not in host_cpu_flags():
        pytest.skip("an x86-64 host with AVX2")
    model = convs()
    onnx.save(model, tmp_path / "convs.onnx")
    rng = np.random.default_rng(1)
    feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
             for i in model.graph.input}
    refs = dict(zip([o.name for o in model.graph.output], reference(model, feeds), strict=True))
    out = tmp_path / "out"
    # (a scratch floor: the Winograd conv's band has the room, which the tight arena spares at no step here)
    build_bundle(tmp_path / "convs.onnx", out, "--host-isa", "generic", "--scratch-floor", 1 << 20,
                 cmake_args=("-DAOTC_NATIVE=OFF", "-DCMAKE_C_FLAGS=-march=x86-64-v3"))
    ours = run_bundle(out, feeds)
    for name, ref in refs.items():
        assert_close(ours[name], ref, name)
    source = next((out / "bundle" / "src").glob("*.c")).read_text()
    assert source.count("aotc_conv_winograd_f32(") == 1
    assert source.count("aotc_conv_implicit_f32(") == len(LAYERS) - 3  # (the 1 x 1 convs: ig_tile_y)
    assert source.count("aotc_conv_pointwise_f32(") == 1  # pw14t
    assert source.count("aotc_conv_pointwise_strided_f32(") == 1  # pw8s2
