"""The weight store vendors share with the host (aot/csource/weights.py): one blob policy.

Small constants are printed as C arrays, large ones go into one blob at 64-byte offsets, and
the C that reads them back sees every value bit-exact at the promised alignment."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from aot.csource import format as cformat
from aot.csource.weights import (
    C_INCLUDES,
    INLINE_WEIGHTS_LIMIT,
    SMALL_WEIGHT_BYTES,
    WEIGHT_ALIGN,
    WeightStore,
)
from aot.paths import runtime_dir
from aot.vendor import CodegenContext


def f32(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_everything_is_printed_while_the_total_is_small():
    s = WeightStore("m")
    s.add("a", f32(INLINE_WEIGHTS_LIMIT // 4 - 16), "most of the budget")
    s.add("b", f32(16), "the rest")  # exactly at the limit
    assert [a.ident for a in s.inline] == ["a", "b"] and not s.blob and not s.files()
    text = "\n".join(s.declarations())
    assert "static const float a[16368] AOTC_ALIGNED(16) = {" in text and "/* most of the budget */" in text
    assert "_weights" not in text


def test_above_the_limit_large_arrays_go_to_the_blob_aligned():
    s = WeightStore("m_v_0")
    small = s.add("small", f32(SMALL_WEIGHT_BYTES // 4), "exactly the small size: printed")
    big1 = s.add("big", np.arange(1000, dtype=np.int32), "odd size, 4000 bytes")
    big2 = s.add("big", f32(INLINE_WEIGHTS_LIMIT // 4), "a name taken: made unique")
    assert (small, big1, big2) == ("small", "big", "big_1")
    assert [a.ident for a in s.inline] == ["small"]
    offsets = {k: off for k, (off, _) in s.blob_offsets.items()}
    assert offsets == {"big": 0, "big_1": 4032}  # 4000 rounded up to a multiple of 64
    assert all(off % WEIGHT_ALIGN == 0 for off in offsets.values())
    assert s.blob[:4000] == np.arange(1000, dtype="<i4").tobytes() and s.blob[4000:4032] == bytes(32)
    assert len(s.blob) == 4032 + INLINE_WEIGHTS_LIMIT and s.nbytes == len(s.blob) + SMALL_WEIGHT_BYTES
    text = "\n".join(s.declarations())
    assert "extern const uint8_t m_v_0_weights[];" in text
    assert "#define big_1 ((const float *)(m_v_0_weights + 4032u)) /* a name taken: made unique */" in text
    assert set(s.files()) == {"m_v_0_weights.bin", "m_v_0_weights.c"} and s.sources() == ["m_v_0_weights.c"]
    assert "OBJECT_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/vendor/v/m_v_0_weights.bin" in s.cmake("vendor/v")
    with pytest.raises(RuntimeError, match="after its layout"):
        s.add("late", f32(4))


def test_the_host_can_name_its_own_link_file():
    s = WeightStore("mnist", link_file="mnist_weights.S")
    s.add("w", f32(INLINE_WEIGHTS_LIMIT // 4 + 1), 'initializer "w": float32[16385]')
    assert s.declarations()[0].startswith("/* large weights: 65540 bytes in mnist_weights.bin, linked in by "
                                          "mnist_weights.S */\nextern const uint8_t mnist_weights[];")


def test_codegen_context_gives_each_function_a_store_and_the_c_helpers():
    a = CodegenContext("m", "host", "vendor/v", "m_v_0")
    b = CodegenContext("m", "host", "vendor/v", "m_v_1")
    assert a.weights is not b.weights and a.weights.symbol == "m_v_0_weights"
    assert a.format is cformat and a.format.c_float(0.1) == "0x1.99999ap-4f"
    assert a.weights_includes == C_INCLUDES


def test_stored_arrays_read_back_bit_exact_and_aligned_in_c(tmp_path):
    """Compile the declarations and the blob's link unit with the bundle's flags; C checks every
    element and the alignment of every array."""
    s = WeightStore("t")
    arrays = {
        "tiny_f32": f32(7, 1),
        "special": np.array([-0.0, np.inf, -np.inf, 1e-45, 3.4e38], np.float32),
        "i8": np.arange(-128, 128, dtype=np.int8),
        "i64": np.array([-(2**63), 2**63 - 1, 0, 5], np.int64),
        "big_f32": f32(20_000, 2),
        "big_u8": np.arange(3001, dtype=np.uint8),
        "big_i32": np.arange(-5000, 5000, dtype=np.int32),
    }
    idents = {k: s.add(k, v, f"{k}: {v.dtype}[{v.size}]") for k, v in arrays.items()}
    assert set(s.blob_offsets) == {"big_f32", "big_u8", "big_i32"}
    for name, content in s.files().items():
        (tmp_path / name).write_bytes(content if isinstance(content, (bytes, bytearray)) else content.encode())
    checks = []
    for k, v in arrays.items():
        ctype = cformat.C_TYPES[v.dtype.name]
        expected = f"{k}_expected"
        checks.append(f"static const {ctype} {expected}[{v.size}] = {{\n{cformat.c_array_body(v)}\n}};")
        align = WEIGHT_ALIGN if k in s.blob_offsets else 16
        checks.append(f"static int check_{k}(void) {{ return memcmp({idents[k]}, {expected}, sizeof {expected}) "
                      f"!= 0 || ((uintptr_t){idents[k]} % {align}u) != 0; }}")
    main = "\n".join([*C_INCLUDES, "#include <math.h>", "#include <stdio.h>", "#include <string.h>", "",
                      *s.declarations(), "", *checks, "",
                      "int main(void) {", "    int bad = 0;",
                      *[f'    if (check_{k}()) {{ printf("{k} differs\\n"); bad = 1; }}' for k in arrays],
                      "    return bad;", "}", ""])
    (tmp_path / "main.c").write_text(main)
    cc = os.environ.get("CC", "cc")
    exe = tmp_path / "check"
    r = subprocess.run([cc, "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{runtime_dir() / 'include'}",
                        f"-I{tmp_path}", str(tmp_path / "main.c"), *[str(tmp_path / f) for f in s.sources()],
                        "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
