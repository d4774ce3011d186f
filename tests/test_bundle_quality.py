"""Quality bars for generated C: sanitizers, no heap, exact weights, deterministic output, clang."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from opcheck import assert_close
from test_models import compile_build_run, reference

from aot.build import cmake_exe
from aot.compiler import Options, compile_model
from aot.emit_c.cformat import c_float


def test_asan_ubsan_clean(tmp_path):
    model = zoo.build("resnet")
    feeds = zoo.random_inputs(model)
    flags = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
    meta, ours = compile_build_run(tmp_path, model, feeds, "resnet", cmake_args=(
        f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_EXE_LINKER_FLAGS={flags}", "-DCMAKE_BUILD_TYPE=Debug"))
    assert_close(ours[meta["outputs"][0]["name"]], reference(model, feeds)[0], "resnet under ASan")


def test_library_never_touches_the_heap(tmp_path):
    require_tool("nm")
    model = zoo.build("mobilenetv2")
    compile_build_run(tmp_path, model, zoo.random_inputs(model), "mobilenetv2")
    lib = tmp_path / "out" / "libmobilenetv2.a"
    undefined = subprocess.run(["nm", "-u", str(lib)], capture_output=True, text=True, check=True).stdout
    symbols = {line.split()[-1] for line in undefined.splitlines() if line.strip() and ":" not in line}
    assert symbols, "nm found no undefined symbols at all: the check would be vacuous"
    assert not symbols & {"malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign"}, symbols


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
