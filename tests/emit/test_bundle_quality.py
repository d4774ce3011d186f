"""Quality bars for generated C: sanitizers, no heap, exact weights, deterministic output, clang."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool, tiered
from hypothesis import given, settings
from hypothesis import strategies as st
from modelcheck import compile_build_run, global_symbols, outside_prefix, reference
from onnx import TensorProto, helper, numpy_helper
from opcheck import assert_close

from aot.build import cmake_exe
from aot.compiler import Options, compile_model
from aot.csource.format import c_float
from aot.targets import host_has_avx512


@pytest.mark.parametrize("name", tiered(["lenet", "mobilenetv2"], {"lenet"}))
def test_library_never_touches_the_heap_and_defines_only_its_own_names(tmp_path, name):
    """No allocation; and every global symbol of the library begins with the model's name or, its runtime C's,
    with its kernel configuration's prefix (runtime/aotc_symbols.h), so that another bundle can share its program
    (tests/emit/test_several_bundles.py). MobileNetV2's more kernels (depthwise, pointwise, residual adds) in the
    full tier: its build took 10 s of the fast one."""
    require_tool("nm")
    model = zoo.build(name)
    meta, _ = compile_build_run(tmp_path, model, zoo.random_inputs(model), name)
    prefix = meta["symbol_prefix"]
    lib = tmp_path / "out" / f"lib{name}.a"
    undefined = subprocess.run(["nm", "-u", str(lib)], capture_output=True, text=True, check=True).stdout
    symbols = {line.split()[-1] for line in undefined.splitlines() if line.strip() and ":" not in line}
    assert symbols, "nm found no undefined symbols at all: the check would be vacuous"
    assert not symbols & {"malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign"}, symbols
    defined = global_symbols(lib)
    assert f"{name}_run" in defined and any(s.startswith(f"{prefix}aotc_") for s in defined), defined
    assert not outside_prefix(lib, name, prefix), outside_prefix(lib, name, prefix)


def big_weight_model(k: int = 512, n: int = 700) -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    w = rng.standard_normal((k, n)).astype(np.float32)
    w[0, :4] = [np.float32(1e-45), -0.0, np.float32(3.4e38), np.float32(1 / 3)]  # denormal, -0, huge, inexact
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "big", [x], [y],
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_large_weights_are_a_bit_exact_blob(tmp_path):
    model = big_weight_model()
    w = numpy_helper.to_array(model.graph.initializer[0])
    bundle = compile_model(model, Options(name="big"))
    blob = bundle.files["src/big_weights.bin"]
    # Every weight is stored bit-for-bit (the emitter may pack it into another order, and pad it).
    have_bits, have_counts = np.unique(np.frombuffer(blob[: len(blob) // 4 * 4], np.uint32), return_counts=True)
    want_bits, want_counts = np.unique(w.view(np.uint32), return_counts=True)
    idx = np.searchsorted(have_bits, want_bits)
    assert (idx < len(have_bits)).all() and (have_bits[np.minimum(idx, len(have_bits) - 1)] == want_bits).all()
    assert (have_counts[idx] >= want_counts).all()
    c_text = bundle.files["src/big.c"]
    assert len(c_text) < 20_000, "large weights must not be printed as C text"
    feeds = {"x": np.random.default_rng(0).standard_normal((2, 512)).astype(np.float32)}
    meta, ours = compile_build_run(tmp_path, model, feeds, "big")
    assert_close(ours["y"], reference(model, feeds)[0], "big MatMul")


@settings(max_examples=300)
@given(st.floats(width=32, allow_nan=False))
def test_small_weights_print_as_exact_hex_floats(v):
    text = c_float(v)
    if "INFINITY" in text:
        assert np.isinf(v) and text.startswith("-") == (v < 0)
        return
    back = np.float32(float.fromhex(text.rstrip("f")))
    assert back.tobytes() == np.float32(v).tobytes(), (v, text)


def test_output_is_deterministic():
    model = zoo.build("inception")
    a = compile_model(model, Options(name="inc")).files
    b = compile_model(model, Options(name="inc")).files
    assert a == b


@pytest.mark.full
def test_builds_warning_free_with_clang(tmp_path):
    if shutil.which("clang") is None:
        require_tool("clang")
    model = zoo.build("squeezenet")
    feeds = zoo.random_inputs(model)
    src, out = tmp_path / "m.onnx", tmp_path / "out"
    onnx.save(model, src)
    bundle = compile_model(model, Options(name="sq"))
    bundle.write(out / "bundle")
    subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DCMAKE_C_COMPILER=clang",
                    "-DAOTC_WARNINGS_AS_ERRORS=ON"], check=True, capture_output=True)
    r = subprocess.run([cmake_exe(), "--build", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
    assert feeds


@pytest.mark.parametrize("name", ["lenet"])
def test_header_is_the_whole_api(name):
    text = compile_model(zoo.build(name), Options(name=name)).files[f"include/{name}.h"]
    for needle in (f"#define {name.upper()}_ARENA_SIZE", f"struct {name}_inputs", f"struct {name}_outputs",
                   f"int32_t {name}_init(void *arena);", f"int32_t {name}_run("):
        assert needle in text


def test_model_whose_output_is_a_folded_constant():
    """No kernel runs at all: the output is a constant copied out (found by the ONNX node tests)."""
    from opcheck import model_case, shared_build

    value = helper.make_tensor("v", TensorProto.FLOAT, [5], [1.0, -2.0, 3.5, 0.0, 1e-3])
    g = helper.make_graph([helper.make_node("Constant", [], ["y"], name="c", value=value)], "const", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])])
    case = model_case("const_out", g, {})
    shared_build([case]).check("const_out")


ARENA_IO_MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "{name}.h"
static unsigned char arena[{NAME}_ARENA_SIZE + 1u] __attribute__((aligned(64)));
static float x_own[{NAME}_{IN}_BYTES / 4], y_own[{NAME}_{OUT}_BYTES / 4];
int main(void) {{
    struct {name}_inputs in;
    struct {name}_outputs out;
    size_t i;
    for (i = 0; i < sizeof x_own / 4; ++i) x_own[i] = (float)((i * 37u) % 101u) / 50.0f - 1.0f;
    if ({name}_init(arena) != 0) return 3;
    in.{in_field} = x_own; /* the caller's own buffers: run copies in and out */
    out.{out_field} = y_own;
    if ({name}_run(&in, &out, arena) != 0) return 4;
    {name}_arena_io(arena, &in, &out); /* zero copy: the input written into its slot */
    if ((const unsigned char *)in.{in_field} != arena + {NAME}_{IN}_ARENA_OFFSET) return 5;
    if ((const void *){name}_input_{in_field}(arena) != in.{in_field}) return 8;
    if ((const void *){name}_output_{out_field}(arena) != out.{out_field}) return 9;
    memcpy({name}_input_{in_field}(arena), x_own, sizeof x_own); /* typed and writable: no cast */
    if ({name}_run(&in, &out, arena) != 0) return 6;
    if (memcmp({name}_output_{out_field}(arena), y_own, sizeof y_own) != 0) return 7;
    printf("arena io ok\n");
    return 0;
}}
"""


@pytest.mark.full
@pytest.mark.parametrize("name,floor", [("densenet", 0), pytest.param("densenet", 1 << 20, marks=pytest.mark.slow),
                                        ("resnet", 0)])
def test_arena_io_and_tight_arena_under_sanitizers(tmp_path, name, floor):
    """Whole nets under ASan/UBSan (resnet at the default scratch floor, 0, is the bundle users build)
    match onnxruntime through the runner; their zero-copy I/O slots give the same result as
    caller-owned buffers; the in-place Concat slices and the scratch-free kernels (a fused residual
    in resnet) stay clean."""
    require_tool("gcc")
    model = zoo.build(name)
    src, out = tmp_path / f"{name}.onnx", tmp_path / "out"
    onnx.save(model, src)
    args = [sys.executable, "-m", "aot.cli", str(src), "-o", str(out), "--no-configure"]
    subprocess.run(args + ([] if floor is None else ["--scratch-floor", str(floor)]), check=True)
    flags = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -fno-var-tracking -O1"
    subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), f"-DCMAKE_C_FLAGS={flags}",
                    "-DCMAKE_BUILD_TYPE=Debug", "-DAOTC_WARNINGS_AS_ERRORS=ON"], check=True, capture_output=True)
    subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    if floor == 0:
        assert meta["memory"]["arena_bytes"] == meta["memory"]["tight_bound_bytes"]
        # the scratch-free 3 x 3 kernel: AVX-512's block (conv_igb_avx512.c), else the implicit GEMM's tiles
        scratch_free = "aotc_conv_igb_f32(" if host_has_avx512() else "aotc_conv_implicit_f32("
        assert scratch_free in (out / "bundle" / "src" / f"{name}.c").read_text()
    fin, fout = meta["inputs"][0]["field"], meta["outputs"][0]["field"]
    main = tmp_path / "main.c"
    main.write_text(ARENA_IO_MAIN.format(name=name, NAME=name.upper(), IN=fin.upper(), OUT=fout.upper(),
                                         in_field=fin, out_field=fout))
    exe = tmp_path / "check"
    subprocess.run(["gcc", *flags.split(), "-std=c99", "-Wall", "-Wextra", "-Werror",
                    f"-I{out / 'bundle' / 'include'}", str(main), str(out / f"lib{name}.a"), "-lm", "-o", str(exe)],
                   check=True)
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout == "arena io ok\n"
    # and the runner (the copy-in path) matches onnxruntime
    feeds = zoo.random_inputs(model)
    np.savez(tmp_path / "in.npz", **feeds)
    subprocess.run([sys.executable, "-m", "aot.cli", "run", str(out), "--inputs", str(tmp_path / "in.npz"),
                    "--outputs", str(tmp_path / "res.npz")], check=True)
    ours = dict(np.load(tmp_path / "res.npz"))
    assert_close(ours[meta["outputs"][0]["name"]], reference(model, feeds)[0], f"{name} floor={floor}")


def _in_place_cases() -> dict[str, onnx.ModelProto]:
    """x read where the caller holds it (Relu, Add), and x split into halves planned inside its slot (copied in)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    read = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                              helper.make_node("Add", ["r", "x"], ["y"], name="add")], "read", [x], [y])
    split = helper.make_graph([helper.make_node("Split", ["x"], ["s0", "s1"], name="sp", axis=1, num_outputs=2),
                               helper.make_node("Relu", ["s0"], ["r"], name="relu"),
                               helper.make_node("Add", ["r", "s1"], ["y"], name="add")], "split", [x], [y])
    return {g.name: helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]) for g in (read, split)}


def test_inputs_read_in_place_only_where_nothing_shares_their_slot():
    """The input copy is left out where the input is alone in its slot while read (the planted bug, dropping
    _alone_while_live, reads the split halves' bytes that were never copied in); the copy stays for a
    caller's pointer not 16-byte aligned."""
    for name, model in _in_place_cases().items():
        c = compile_model(model, Options(name=name)).files[f"src/{name}.c"]
        in_place = "graph input read where the caller holds it" in c
        assert in_place == (name == "read"), name
        assert ("if (in->x != " in c) != in_place  # else the copy only for an unaligned caller:
        assert in_place == ("% 16u == 0u ? in->x : memcpy(a + " in c)


@pytest.mark.parametrize("name", ["read", "split"])
def test_inputs_read_in_place_match_onnxruntime(tmp_path, name):
    """Both cases' runner outputs (their inputs 64-byte aligned) equal onnxruntime's."""
    model = _in_place_cases()[name]
    feeds = {"x": np.random.default_rng(7).standard_normal((1, 4, 6)).astype(np.float32)}
    _, ours = compile_build_run(tmp_path, model, feeds, name)
    np.testing.assert_array_equal(ours["y"], reference(model, feeds)[0])


UNALIGNED_MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "read.h"
static unsigned char arena[READ_ARENA_SIZE + 1u] __attribute__((aligned(64)));
static float own[READ_X_BYTES / 4] __attribute__((aligned(64)));
static float moved[READ_X_BYTES / 4 + 1] __attribute__((aligned(64)));
static float y0[READ_Y_BYTES / 4], y1[READ_Y_BYTES / 4];
int main(void) {
    struct read_inputs in;
    struct read_outputs out;
    size_t i;
    if (read_init(arena) != 0) return 3;
    for (i = 0; i < READ_X_BYTES / 4; ++i) own[i] = moved[i + 1] = (float)((i * 37u) % 11u) - 5.0f;
    in.x = own, out.y = y0; /* 64-byte aligned: read where it is */
    if (read_run(&in, &out, arena) != 0) return 4;
    in.x = moved + 1, out.y = y1; /* the same values 4 bytes past: copied into its slot first */
    if (read_run(&in, &out, arena) != 0) return 5;
    if (memcmp(y0, y1, sizeof y0) != 0) return 6;
    printf("%g %g\n", (double)y0[0], (double)y0[1]);
    return 0;
}
"""


def test_input_read_in_place_and_copied_agree(tmp_path):
    """One bundle run on the caller's aligned input (read in place) and on the same values 4 bytes further (not
    16-byte aligned: copied into its slot): the same outputs, Relu(x) + x of the values (-5 and 4 - 5 first)."""
    require_tool("gcc")
    out = tmp_path / "out"
    compile_model(_in_place_cases()["read"], Options(name="read")).write(out / "bundle")
    subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"],
                   check=True, capture_output=True)
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    main, exe = tmp_path / "main.c", tmp_path / "check"
    main.write_text(UNALIGNED_MAIN)
    subprocess.run(["gcc", "-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{out / 'bundle' / 'include'}",
                    str(main), str(out / "libread.a"), "-lm", "-o", str(exe)], check=True)
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout == "-5 -1\n"
