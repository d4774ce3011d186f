"""int8 .tflite convs in a bundle built as on an x86-64 machine without AVX-512 (`--host-isa generic`,
-march=x86-64-v3: tflite_int8_packed.c's TFL_PK_AVX2 CONV_2D, its runs of positions in lanes), against LiteRT's
reference kernels, bit for bit. The models cover 1 x 1 and 3 x 3 convs, stride 2 and pads (moves_int8, padded_int8,
person_int8), a fused residual ADD and two chunks of channels, the last 16 wide, over 400 positions whose last run
is 16 (split_int8, residual_int8), a dilated conv (tiles of patches gathered from x), a 10 x 8 window on one channel
(quads that end mid-row: dwmult_int8), and blocks of 8 channels (moves_int8): the lanes path's requantisation in
position lanes, its transposed sums for the residual and short blocks, and the pairs path for a run's last few
positions."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from modelcheck import build_bundle, run_bundle

from aot.targets import host_cpu_flags

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
