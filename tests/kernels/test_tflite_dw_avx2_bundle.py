"""int8 DEPTHWISE_CONV_2D in a bundle built as on an x86-64 machine without AVX-512 (`--host-isa generic`,
-march=x86-64-v3: tflite_int8_packed.c's AVX2 paths), against LiteRT's reference kernels bit for bit. These layers
take the pair rows' path (tfl_pk_avx2_dw16_rows: 3 x 3 and 5 x 5, strides 1 and 2, SAME and VALID padding, channel
counts not a multiple of 16 or of 8, a 7 x 7 plane, the clamp of a fused RELU6 and int8's own range) and the ones it
leaves to the window path (7 x 7 taps; a plane wider than its ring)."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from modelcheck import aotc, build_bundle, run_bundle

from aot.targets import host_cpu_flags

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "frontend"))
from tflite_written import Written  # noqa: E402

# name: channels, kernel, stride, padding, input height and width, fused activation (0 none, 3 RELU6)
LAYERS = {
    "s1_3x3_same": (40, 3, 1, "SAME", (14, 14), 0),    # 40 channels: a block of 8 short
    "s2_3x3_same": (24, 3, 2, "SAME", (15, 17), 3),    # odd plane, RELU6's clamp
    "s1_5x5_valid": (21, 5, 1, "VALID", (11, 9), 0),   # 21 channels: a block of 5
    "s2_5x5_same": (32, 5, 2, "SAME", (14, 14), 3),
    "s1_3x3_7x7": (16, 3, 1, "SAME", (7, 7), 0),       # a narrow plane: most positions at an edge
    "s1_7x7": (16, 7, 1, "SAME", (9, 9), 0),           # 7 x 7 taps: the window path
    "s1_3x3_wide": (8, 3, 1, "SAME", (3, 130), 0),     # 130 wide: past the ring (the window path)
}


def depthwise_model(path: Path) -> Path:
    """Each layer of LAYERS on its own int8 input, per-channel int8 weights (zero points 0), int32 bias."""
    rng = np.random.default_rng(64)
    w = Written()
    sch = w.sch
    inputs, outputs = [], []
    for c, k, stride, padding, (h, wd), act in LAYERS.values():
        x = w.tensor([1, h, wd, c], "int8", quant=(0.05, int(rng.integers(-20, 20))))
        scales = (rng.uniform(0.5, 1.5, c) * 0.01).astype(np.float32)
        wt = w.tensor([1, k, k, c], "int8", data=rng.integers(-127, 128, (1, k, k, c)))
        w.per_channel(wt, scales, 3)
        b = w.tensor([c], "int32", data=rng.integers(-3000, 3000, c))
        w.per_channel(b, scales * 0.05, 0)
        y_scale = 0.05 * 0.01 * 40 * k
        y = w.tensor([1, 0, 0, c], "int8", quant=(y_scale, -128 if act == 3 else int(rng.integers(-10, 10))))
        oh = (h + stride - 1) // stride if padding == "SAME" else (h - k) // stride + 1
        ow = (wd + stride - 1) // stride if padding == "SAME" else (wd - k) // stride + 1
        w.sg.tensors[y].shape = [1, oh, ow, c]
        w.op("DEPTHWISE_CONV_2D", [x, wt, b], [y], ("DepthwiseConv2DOptions", {
            "padding": getattr(sch.Padding, padding), "strideW": stride, "strideH": stride, "depthMultiplier": 1,
            "fusedActivationFunction": act, "dilationWFactor": 1, "dilationHFactor": 1}), version=3)
        inputs.append(x), outputs.append(y)
    return w.save(path, inputs, outputs)


@pytest.mark.full
def test_tflite_depthwise_at_avx2_matches_litert(tmp_path: Path):
    """Every layer's outputs bit for bit LiteRT's reference kernels, the bundle built with AVX2 and without
    AVX-512 (x86-64-v3), as `aotc` builds it on such a machine."""
    pytest.importorskip("ai_edge_litert")
    from tflite_reference import reference

    require_tool("cmake", "gcc")
    if platform.machine() != "x86_64" or "avx2" not in host_cpu_flags():
        pytest.skip("an x86-64 host with AVX2")
    model = depthwise_model(tmp_path / "dw.tflite")
    rng = np.random.default_rng(1)
    feeds = [rng.integers(-128, 128, (1, h, wd, c)).astype(np.int8) for c, _, _, _, (h, wd), _ in LAYERS.values()]
    refs = list(reference(model, feeds, tmp_path).values())
    out = tmp_path / "out"
    meta = build_bundle(model, out, "--host-isa", "generic",
                        cmake_args=("-DAOTC_NATIVE=OFF", "-DCMAKE_C_FLAGS=-march=x86-64-v3"))
    res = run_bundle(out, feeds)
    ours = [res[s["name"]] for s in meta["outputs"]]
    for name, got, ref in zip(LAYERS, ours, refs, strict=True):
        assert np.mean((ref > -128) & (ref < 127)) > 0.5, name  # (outputs across the range)
        np.testing.assert_array_equal(got, ref, err_msg=name)


def test_depthwise_model_takes_the_packed_kernel_on_every_path(tmp_path: Path):
    """depthwise_model's layers each compile to aotc_tfl_depthwise_s8_packed at --host-isa generic (the entry whose
    AVX2 paths the full-tier test runs), and LAYERS keep what those paths split on: 3 x 3, 5 x 5 and 7 x 7 taps,
    strides 1 and 2, channel counts off a multiple of 16 and of 8, a plane wider than the ring (compile only)."""
    model = depthwise_model(tmp_path / "dw.tflite")
    aotc(model, "-o", tmp_path / "out", "--no-configure", "--host-isa", "generic")
    text = "".join(f.read_text() for f in (tmp_path / "out" / "bundle" / "src").glob("*.c"))
    assert text.count("aotc_tfl_depthwise_s8_packed(") == len(LAYERS)
    kinds = list(LAYERS.values())
    assert {k for _, k, *_ in kinds} == {3, 5, 7} and {s for _, _, s, *_ in kinds} == {1, 2}
    assert any(c % 16 and c % 8 for c, *_ in kinds) and any(c % 16 and not c % 8 for c, *_ in kinds)
    assert any(wd > 120 for *_, (_, wd), _ in kinds)
