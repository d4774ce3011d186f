"""int8 .tflite convs in a bundle built as on an x86-64 machine without AVX-512 (`--host-isa generic`,
-march=x86-64-v3: tflite_int8_packed.c's TFL_PK_AVX2 CONV_2D, its runs of positions in lanes), against LiteRT's
reference kernels, bit for bit. The models cover 1 x 1 and 3 x 3 convs, stride 2 and pads (moves_int8, padded_int8,
person_int8), a fused residual ADD and two chunks of channels, the last 16 wide, over 400 positions whose last run
is 16 (split_int8, residual_int8), a dilated conv (tiles of patches gathered from x), a 10 x 8 window on one channel
(quads that end mid-row: dwmult_int8), and blocks of 8 channels (moves_int8): the lanes path's requantisation in
position lanes, its transposed sums for the residual and short blocks, and the pairs path for a run's last few
positions. residual_model's layers are fused residual ADDs on 16-channel-multiple blocks (the lanes path's residual in
channel lanes after the bytes' transposition) with extreme scales and zero points."""

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

MODELS = Path(__file__).resolve().parents[1] / "models" / "tflite"
NAMES = ["split_int8", "residual_int8", "moves_int8", "padded_int8", "person_int8", "dwmult_int8"]


@pytest.mark.full
@pytest.mark.parametrize("name", NAMES)
def test_int8_tflite_convs_at_avx2_bit_exact_with_litert(tmp_path: Path, name: str):
    """Every output exactly LiteRT's reference kernels' (BUILTIN_REF) on random int8 inputs, the bundle built for
    x86-64-v3 under the sanitizers (where the tier builds them)."""
    from tflite_reference import reference

    require_tool("cmake", "gcc")
    if platform.machine() != "x86_64" or "avx2" not in host_cpu_flags():
        pytest.skip("an x86-64 host with AVX2")
    model = MODELS / f"{name}.tflite"
    out = tmp_path / "out"
    meta = build_bundle(model, out, "--host-isa", "generic", sanitize=True,
                        cmake_args=("-DAOTC_NATIVE=OFF", "-DCMAKE_C_FLAGS=-march=x86-64-v3"))
    assert "aotc_tfl_conv_s8_packed" in (out / "bundle" / "src" / f"{meta['name']}.c").read_text()
    rng = np.random.default_rng(64)
    feeds = []
    for spec in meta["inputs"]:
        info = np.iinfo(spec["dtype"])
        feeds.append(rng.integers(info.min, info.max + 1, spec["shape"]).astype(spec["dtype"]))
    ours = run_bundle(out, feeds)
    refs = reference(model, feeds, tmp_path)
    assert len(ours) == len(refs)
    for (got_name, got), ref in zip(ours.items(), refs.values(), strict=True):
        np.testing.assert_array_equal(got.reshape(ref.shape), ref, err_msg=f"{name}: {got_name}")


# name: channels, kernel, plane, the conv's output (scale, zero), the residual's, the ADD's, the conv the ADD's first
RESIDUAL = {
    "even": (32, 1, (6, 8), (0.05, -3), (0.05, 5), (0.07, -10), True),
    "res_big": (16, 3, (5, 7), (0.01, 127), (0.6, -128), (0.5, 0), False),  # m1 / m2 ~ 60: the conv rescaled little
    "conv_big": (48, 1, (4, 9), (0.9, -128), (0.008, 127), (0.95, 127), True),
    "tiny_out": (16, 1, (3, 8), (0.02, 40), (0.03, -60), (0.004, -128), False),  # most sums clamped
    "huge_out": (32, 3, (8, 8), (0.04, -100), (0.05, 100), (2.5, 120), True),    # a few levels, near the top
}


def residual_model(path: Path) -> Path:
    """Each RESIDUAL layer: CONV_2D (per-channel int8 weights, SAME) on its own input, whose output's only reader
    is an ADD with a second input (the residual), so that the compiler fuses the two."""
    rng = np.random.default_rng(65)
    w = Written()
    sch = w.sch
    inputs, outputs = [], []
    for c, k, (h, wd), (cs, cz), (rs, rz), (ys, yz), conv_first in RESIDUAL.values():
        ic = 8
        x = w.tensor([1, h, wd, ic], "int8", quant=(0.05, int(rng.integers(-20, 20))))
        scales = (rng.uniform(0.5, 1.5, c) * 0.01).astype(np.float32)
        wt = w.tensor([c, k, k, ic], "int8", data=rng.integers(-127, 128, (c, k, k, ic)))
        w.per_channel(wt, scales, 0)
        b = w.tensor([c], "int32", data=rng.integers(-3000, 3000, c))
        w.per_channel(b, scales * 0.05, 0)
        # the conv's output scale set so that its values span the range, then the layer's scale scaling that
        y = w.tensor([1, h, wd, c], "int8", quant=(cs, cz))
        w.op("CONV_2D", [x, wt, b], [y], ("Conv2DOptions", {
            "padding": sch.Padding.SAME, "strideW": 1, "strideH": 1, "fusedActivationFunction": 0,
            "dilationWFactor": 1, "dilationHFactor": 1}), version=3)
        r = w.tensor([1, h, wd, c], "int8", quant=(rs, rz))
        s = w.tensor([1, h, wd, c], "int8", quant=(ys, yz))
        w.op("ADD", [y, r] if conv_first else [r, y], [s], ("AddOptions", {}))
        inputs += [x, r]
        outputs.append(s)
    return w.save(path, inputs, outputs)


@pytest.mark.full
def test_fused_residual_in_lanes_at_avx2_bit_exact_with_litert(tmp_path: Path):
    """The fused residual ADD of 16-channel blocks, requantised in position lanes, bit for bit LiteRT's reference
    kernels on every layer of RESIDUAL, under the sanitizers (where the tier builds them)."""
    pytest.importorskip("ai_edge_litert")
    from tflite_reference import reference

    require_tool("cmake", "gcc")
    if platform.machine() != "x86_64" or "avx2" not in host_cpu_flags():
        pytest.skip("an x86-64 host with AVX2")
    model = residual_model(tmp_path / "res.tflite")
    out = tmp_path / "out"
    meta = build_bundle(model, out, "--host-isa", "generic", sanitize=True,
                        cmake_args=("-DAOTC_NATIVE=OFF", "-DCMAKE_C_FLAGS=-march=x86-64-v3"))
    assert (out / "bundle" / "src" / f"{meta['name']}.c").read_text().count("aotc_tfl_conv_add_s8_packed(") == \
        len(RESIDUAL)
    rng = np.random.default_rng(2)
    feeds = [rng.integers(-128, 128, s["shape"]).astype(np.int8) for s in meta["inputs"]]
    refs = list(reference(model, feeds, tmp_path).values())
    res = run_bundle(out, feeds)
    ours = [res[s["name"]] for s in meta["outputs"]]
    for name, got, ref in zip(RESIDUAL, ours, refs, strict=True):
        np.testing.assert_array_equal(got.reshape(ref.shape), ref, err_msg=name)


def test_residual_model_covers_both_forms_of_the_add(tmp_path: Path):
    """residual_model's layers fuse, and take both of the AVX2 output stage's forms of the ADD: the compiler's linear
    form (lin_sh set) on some layers, the ADD's own arithmetic (no form exact) on others (compile only)."""
    model = residual_model(tmp_path / "res.tflite")
    aotc(model, "-o", tmp_path / "out", "--no-configure", "--host-isa", "generic")
    text = "".join(f.read_text() for f in (tmp_path / "out" / "bundle" / "src").glob("*.c"))
    assert text.count("aotc_tfl_conv_add_s8_packed(") == len(RESIDUAL)
    assert 0 < text.count(".lin_sh = ") < len(RESIDUAL)
