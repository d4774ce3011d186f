"""The command line contract: bad input gives exit 2, one line naming the problem, OUT untouched;
paths are checked before any work; what a command did is said in a line or two."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import first_fast
from modelcheck import aotc as in_process
from onnx import TensorProto, helper

from aot.build import cmake_exe

AOTC = [sys.executable, "-m", "aot.cli"]


def aotc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess | object:
    """`aotc ARGS` as a user runs it: its exit code, stdout and stderr. In this process (modelcheck.aotc: the
    command's own main(), its SystemExit and output caught; a Python start and onnx import per call were most
    of this file's time), or in a process of its own with `env` (another PATH: a machine without tools)."""
    if env is None:
        return in_process(*args, check=False)
    return subprocess.run([*AOTC, *args], capture_output=True, text=True, env=env)


def without_tools(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH is an empty folder: no cross compiler, no qemu, as on a new user's
    machine (aotc itself runs from sys.executable, so it needs nothing from PATH to refuse a model)."""
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    return {**os.environ, "PATH": str(empty)}


def tiny_model(op: str = "Relu", shape: list = (2, 3), opset: int = 13) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node(op, ["x"], ["y"], name="the_node")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


@pytest.fixture
def existing_out(tmp_path):
    """An OUT that already holds something: a failed compile must leave it exactly as it was."""
    out = tmp_path / "out"
    (out / "bundle").mkdir(parents=True)
    (out / "bundle" / "keep.txt").write_text("previous build")
    (out / "bundle" / "metadata.json").write_text("{}")  # what marks a folder as aotc's output
    return out


def snapshot(path):
    return sorted((p.relative_to(path).as_posix(), p.read_bytes() if p.is_file() else b"")
                  for p in path.rglob("*"))


def assert_refused(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("aotc: error: ")
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_truncated_file(tmp_path, existing_out):
    data = tiny_model().SerializeToString()
    (tmp_path / "bad.onnx").write_bytes(data[: len(data) // 2])
    before = snapshot(existing_out)
    assert_refused(aotc(str(tmp_path / "bad.onnx"), "-o", str(existing_out)), "bad.onnx")
    assert snapshot(existing_out) == before


def test_not_onnx(tmp_path, existing_out):
    (tmp_path / "junk.onnx").write_text("this is not a model")
    assert_refused(aotc(str(tmp_path / "junk.onnx"), "-o", str(existing_out)), "junk.onnx")


def test_missing_file(tmp_path):
    assert_refused(aotc(str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "out")), "nope.onnx")
    assert not (tmp_path / "out").exists()


def test_dynamic_dimension(tmp_path, existing_out):
    onnx.save(tiny_model(shape=["batch", 3]), tmp_path / "dyn.onnx")
    before = snapshot(existing_out)
    assert_refused(aotc(str(tmp_path / "dyn.onnx"), "-o", str(existing_out)), "'x'", "batch")
    assert snapshot(existing_out) == before


def _shared_dims_model() -> onnx.ModelProto:
    """input_ids and mask [batch, sequence] (an exporter's named dimensions), pix [batch, 3, ?, ?]."""
    ins = [helper.make_tensor_value_info("input_ids", TensorProto.FLOAT, ["batch", "sequence"]),
           helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "sequence"]),
           helper.make_tensor_value_info("pix", TensorProto.FLOAT, ["batch", 3, None, None])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "z")]
    nodes = [helper.make_node("Add", ["input_ids", "mask"], ["y"]), helper.make_node("Relu", ["pix"], ["z"])]
    return helper.make_model(helper.make_graph(nodes, "g", ins, outs), opset_imports=[helper.make_opsetid("", 17)])


def test_every_dynamic_input_is_named_at_once(tmp_path):
    """One try names them all, with the options that fix them (issue 69: a model of four such inputs took four)."""
    onnx.save(_shared_dims_model(), tmp_path / "dyn.onnx")
    r = in_process(tmp_path / "dyn.onnx", "-o", tmp_path / "out", "--no-configure", check=False)
    assert_refused(r, "3 inputs have dynamic dimensions: 'input_ids' [batch, sequence], 'mask' [batch, sequence], "
                      "'pix' [batch, 3, ?, ?]", "--dim batch=N --dim sequence=N --input-shape pix=batch,3,D2,D3")
    assert not (tmp_path / "out").exists()


def test_dim_fixes_a_named_dimension_wherever_it_appears(tmp_path):
    onnx.save(_shared_dims_model(), tmp_path / "dyn.onnx")
    out = tmp_path / "out"
    r = in_process(tmp_path / "dyn.onnx", "-o", out, "--no-configure", "--dim", "batch=2", "--dim", "sequence=5",
                   check=False)  # pix's unnamed sizes are still missing: named alone, with what fixes them
    assert_refused(r, "input 'pix' has a dynamic dimension 2", "--input-shape pix=2,3,D2,D3")
    in_process(tmp_path / "dyn.onnx", "-o", out, "--no-configure", "--dim", "batch=2", "--dim", "sequence=5",
               "--input-shape", "pix=2,3,4,4")
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    assert [i["shape"] for i in meta["inputs"]] == [[2, 5], [2, 5], [2, 3, 4, 4]]
    r = in_process(tmp_path / "dyn.onnx", "-o", tmp_path / "other", "--dim", "batchsize=2", check=False)
    assert_refused(r, "--dim names 'batchsize', which no input's dimension is called (the inputs' named "
                      "dimensions: batch, sequence)")


def test_unsupported_op(tmp_path, existing_out):
    onnx.save(tiny_model(op="Bernoulli", shape=[3, 3]), tmp_path / "bernoulli.onnx")
    before = snapshot(existing_out)
    assert_refused(aotc(str(tmp_path / "bernoulli.onnx"), "-o", str(existing_out)), "the_node", "Bernoulli")
    assert snapshot(existing_out) == before


def test_unsupported_dtype(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [2])
    model = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, tmp_path / "c64.onnx")
    assert_refused(aotc(str(tmp_path / "c64.onnx"), "-o", str(tmp_path / "out")), "complex64")


def test_unsupported_opset(tmp_path):
    onnx.save(tiny_model(opset=29), tmp_path / "new.onnx")
    assert_refused(aotc(str(tmp_path / "new.onnx"), "-o", str(tmp_path / "out")), "opset 29")


def test_unknown_target(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    assert_refused(aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), "--target", "z80"), "z80", "host")
    assert not (tmp_path / "out").exists()


def test_debug_shows_traceback(tmp_path):
    (tmp_path / "junk.onnx").write_text("junk")
    r = aotc(str(tmp_path / "junk.onnx"), "-o", str(tmp_path / "out"), "--debug")
    assert r.returncode == 2 and "Traceback" in r.stderr


def test_run_with_wrong_inputs(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    out = tmp_path / "out"
    assert aotc(str(tmp_path / "m.onnx"), "-o", str(out)).returncode == 0
    np.savez(tmp_path / "in.npz", x=np.zeros((3, 3), np.float32))
    assert_refused(aotc("run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                        str(tmp_path / "o.npz")), "'x'", "shape")
    np.savez(tmp_path / "in2.npz", z=np.zeros((2, 3), np.float32))
    assert_refused(aotc("run", str(out), "--inputs", str(tmp_path / "in2.npz"), "--outputs",
                        str(tmp_path / "o.npz")), "'x'")


def test_compile_build_run(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    out = tmp_path / "out"
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    r = aotc("run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz"),
             "--repeat", "5")
    assert r.returncode == 0, r.stderr
    assert "median" in r.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["y"], np.maximum(x, 0))


def test_input_shape_makes_a_dynamic_model_static(tmp_path):
    onnx.save(tiny_model(shape=["batch", 3]), tmp_path / "dyn.onnx")
    out = tmp_path / "out"
    r = aotc(str(tmp_path / "dyn.onnx"), "-o", str(out), "--input-shape", "x=4,3")
    assert r.returncode == 0, r.stderr
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    np.savez(tmp_path / "in.npz", x=x)
    r = aotc("run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz"))
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["y"], np.maximum(x, 0))


@pytest.mark.parametrize("arg,words", first_fast([("z=4,3", ["'z'", "not an input"]), ("x=4", ["rank 1"]),
                                       ("x=0,3", ["positive"])]))
def test_bad_input_shape_is_refused(tmp_path, arg, words):
    onnx.save(tiny_model(shape=["batch", 3]), tmp_path / "dyn.onnx")
    assert_refused(aotc(str(tmp_path / "dyn.onnx"), "-o", str(tmp_path / "out"), "--input-shape", arg), *words)


@pytest.mark.full
def test_bench_times_bundle_and_onnxruntime_in_rounds(tmp_path):
    src, out = tmp_path / "sig.onnx", tmp_path / "out"
    onnx.save(tiny_model("Sigmoid", [4, 64]), src)
    assert aotc(str(src), "-o", str(out)).returncode == 0
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    r = aotc("bench", str(out), "--repeat", "5", "--rounds", "2")
    assert r.returncode == 0, r.stderr
    row = r.stdout.strip().splitlines()[-1].split("|")
    assert row[1].strip() == "sig" and row[2].strip() == "1/1"  # threads: the bundle's / onnxruntime's
    bundle_us, ort_us, ratio = (float(row[k]) for k in (3, 4, 5))
    assert bundle_us > 0 and ort_us > 0 and ratio > 0
    assert float(row[10]) == float(row[11])  # the arena (I/O inside) is the tight bound: nothing else is live


@pytest.mark.full
def test_bench_finds_external_data_from_any_folder(tmp_path):
    """A model whose weights are in model.onnx.data, benchmarked from another folder: onnxruntime reads the data
    beside the model, not in the current folder (issue 69: bench said onnxruntime could not run the model)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])
    w = onnx.numpy_helper.from_array(np.random.default_rng(0).normal(size=(64, 32)).astype(np.float32), "w")
    model = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "ext", [x], [y], [w]),
                              opset_imports=[helper.make_opsetid("", 13)])
    (tmp_path / "model").mkdir()
    src, out, elsewhere = tmp_path / "model" / "ext.onnx", tmp_path / "out", tmp_path / "elsewhere"
    onnx.save(model, src, save_as_external_data=True, location="ext.onnx.data", size_threshold=0)
    assert (tmp_path / "model" / "ext.onnx.data").is_file()
    assert aotc(str(src), "-o", str(out)).returncode == 0
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    elsewhere.mkdir()
    repo = str(Path(__file__).resolve().parents[2])  # (this checkout's aot, from another folder)
    r = subprocess.run([*AOTC, "bench", str(out), "--repeat", "2", "--rounds", "1"], capture_output=True, text=True,
                       cwd=elsewhere, env={**os.environ, "PYTHONPATH": repo})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1].split("|")[1].strip() == "ext"


@pytest.mark.full
def test_bench_on_a_model_onnxruntime_cannot_run_is_one_line(tmp_path):
    """A bfloat16 DepthToSpace compiles (aotc moves any type), but onnxruntime has no CPU kernel for it: aotc bench
    says so in one line, exit 2 (it was an internal error)."""
    x = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [1, 8, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [1, 2, 4, 4])
    g = helper.make_graph([helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2)], "g", [x], [y])
    src, out = tmp_path / "bf.onnx", tmp_path / "out"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]), src)
    assert aotc(str(src), "-o", str(out)).returncode == 0
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    assert_refused(aotc("bench", str(out), "--repeat", "2", "--rounds", "1"), "onnxruntime cannot run the model",
                   "DepthToSpace", "aotc run")


def test_internal_error_is_one_line_with_its_own_exit_code(tmp_path, monkeypatch, capsys):
    """A bug of ours is not a bad model: one line that says so, names the exception, exit 3."""
    from aot import cli, compiler

    def broken(*args, **kwargs):
        raise KeyError("some_table_entry")

    monkeypatch.setattr(compiler, "compile_file", broken)
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    assert cli.main([str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out")]) == cli.EXIT_INTERNAL == 3
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aotc: internal error"), lines
    assert "KeyError" in lines[0] and "--debug" in lines[0]
    assert not (tmp_path / "out").exists()
    assert cli.main([str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), "--debug"]) == 3
    assert "Traceback" in capsys.readouterr().err


# --- issue 17: every bad input refused cleanly, every name safe ------------------------------------------
def _model(nodes, inputs, outputs, inits=(), opset: int = 13, value_info=()) -> onnx.ModelProto:
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info)),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _vi(name: str, elem=TensorProto.FLOAT, shape=None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _refused(tmp_path, model: onnx.ModelProto, existing_out, *words: str) -> None:
    onnx.save(model, tmp_path / "m.onnx")
    before = snapshot(existing_out)
    assert_refused(aotc(str(tmp_path / "m.onnx"), "-o", str(existing_out)), *words)
    assert snapshot(existing_out) == before


@pytest.mark.parametrize("fold", first_fast([False, True]))
def test_initializer_with_more_data_than_its_dims_is_refused(tmp_path, existing_out, fold):
    from onnx import numpy_helper

    w = numpy_helper.from_array(np.ones(3, np.float32), "w")
    w.raw_data = np.ones(5, np.float32).tobytes()  # 20 bytes for float32[3]
    c = numpy_helper.from_array(np.ones(3, np.float32), "c")
    nodes = [helper.make_node("Add", ["w", "c"], ["t"], name="fold"), helper.make_node("Add", ["x", "t"], ["y"])] \
        if fold else [helper.make_node("Add", ["x", "w"], ["y"])]
    _refused(tmp_path, _model(nodes, [_vi("x", shape=[2, 3])], [_vi("y")], [w, c]), existing_out,
             "initializer 'w'", "20 bytes", "float32[3]")


@pytest.mark.parametrize("x_shape,y_shape,words", first_fast([
    ([2**31, 12], None, ["input 'x'", "[2147483648,12]", "96 GiB", "2 GiB"]),
    ([2**40], None, ["input 'x'", "4 TiB"]),
    ([2, 3], [2**31, 12], ["graph output 'y'", "96 GiB"]),
]))
def test_huge_declared_dimension_is_refused_before_any_allocation(tmp_path, existing_out, x_shape, y_shape, words):
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", shape=x_shape)], [_vi("y", shape=y_shape)])
    _refused(tmp_path, model, existing_out, *words)


@pytest.mark.full
def test_huge_folded_constant_is_refused_before_it_is_computed(tmp_path, existing_out):
    """ConstantOfShape of a constant shape: the size is known before evaluation, and checked there."""
    from onnx import numpy_helper

    shape = numpy_helper.from_array(np.array([2**20, 2**20], np.int64), "shape")
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["big"], name="make_big"),
             helper.make_node("ReduceMax", ["big"], ["m"], keepdims=0), helper.make_node("Add", ["x", "m"], ["y"])]
    _refused(tmp_path, _model(nodes, [_vi("x", shape=[2])], [_vi("y")], [shape]), existing_out,
             "make_big", "ConstantOfShape", "4 TiB")


@pytest.mark.full
def test_arena_beyond_any_target_is_refused(tmp_path, existing_out):
    """Every tensor is under the limit (1 GiB each), the arena with the runner's input copy is not."""
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", shape=[2**28])], [_vi("y")])
    _refused(tmp_path, model, existing_out, "arena", "2 GiB")


@pytest.mark.parametrize("where", first_fast(["input", "output"]))
def test_unknown_element_type_is_refused(tmp_path, existing_out, where):
    model = tiny_model()
    vi = model.graph.input[0] if where == "input" else model.graph.output[0]
    vi.type.tensor_type.elem_type = 77
    _refused(tmp_path, model, existing_out, f"'{vi.name}'", "element type 77")


@pytest.mark.parametrize("elem,shape,words", first_fast([
    (TensorProto.INT32, [2, 3], ["declared int32[2,3]", "float32[2,3]"]),
    (TensorProto.FLOAT, [2, 4], ["declared float32[2,4]"]),
    (TensorProto.FLOAT, [3, 2], ["declared float32[3,2]"]),
    (TensorProto.FLOAT, [6], ["declared float32[6]"]),
    (TensorProto.FLOAT, [1, 2, 3], ["declared float32[1,2,3]"]),
]))
def test_graph_output_declaration_contradicting_inference_is_refused(tmp_path, existing_out, elem, shape, words):
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", shape=[2, 3])], [_vi("y", elem, shape)])
    _refused(tmp_path, model, existing_out, "graph output 'y'", *words)


@pytest.mark.full
def test_graph_output_declaration_with_symbolic_dims_is_accepted(tmp_path):
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", shape=[2, 3])], [_vi("y", shape=["n", 3])])
    onnx.save(model, tmp_path / "m.onnx")
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), "--no-configure")
    assert r.returncode == 0 and not r.stderr, r.stderr


@pytest.mark.full
def test_value_info_contradicting_inference_is_refused(tmp_path, existing_out):
    nodes = [helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    model = _model(nodes, [_vi("x", shape=[2, 3])], [_vi("y")], value_info=[_vi("t", shape=[5, 5])])
    _refused(tmp_path, model, existing_out, "'t'", "declared float32[5,5]", "float32[2,3]")


@pytest.mark.full
def test_input_types_the_op_does_not_allow_are_refused(tmp_path, existing_out):
    from onnx import numpy_helper

    b = numpy_helper.from_array(np.ones(4, np.int32), "b")
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    model = _model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc")], [_vi("x", shape=[2, 3])],
                   [_vi("y")], [w, b])
    _refused(tmp_path, model, existing_out, "'fc' (Gemm)", "float32 and int32")


def _div_by_zero() -> list:
    from onnx import numpy_helper

    return [numpy_helper.from_array(np.array([1.0, 0.0], np.float32), "num"),
            numpy_helper.from_array(np.array([0.0, 0.0], np.float32), "den")]


@pytest.mark.full
def test_no_stray_warning_before_the_refusal(tmp_path, existing_out):
    """Folding 1/0 and 0/0 makes numpy warn inside onnx's reference evaluator: not on aotc's stderr."""
    nodes = [helper.make_node("Div", ["num", "den"], ["q"], name="div"), helper.make_node("Add", ["x", "q"], ["s"]),
             helper.make_node("Bernoulli", ["s"], ["y"], name="draw")]
    model = _model(nodes, [_vi("x", shape=[2, 2])], [_vi("y")], _div_by_zero())
    _refused(tmp_path, model, existing_out, "'draw' (Bernoulli)")


@pytest.mark.full
def test_no_stray_warning_on_success(tmp_path):
    nodes = [helper.make_node("Div", ["num", "den"], ["q"], name="div"), helper.make_node("Add", ["x", "q"], ["y"])]
    onnx.save(_model(nodes, [_vi("x", shape=[2])], [_vi("y")], _div_by_zero()), tmp_path / "m.onnx")
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), "--no-configure")
    assert r.returncode == 0 and r.stderr == "", r.stderr


NASTY = ["int", "static", "restrict", "EOF", "SIZE_MAX", "errno", "a*/b", "line\nbreak", 'say "hi"', "back\\slash",
         "100%s%n", "??/", "/*", "x.y", "x_y", "X_Y", "main", "class", "aotc_run", "t_x", "\u2028", "é", "",
         "long" * 40]


def nasty_names_model() -> onnx.ModelProto:
    """Inputs, outputs, initializers and nodes named with C keywords and macros, comment and string
    breakers, names that collide once made identifiers, and one of 160 characters."""
    from onnx import numpy_helper

    nodes, inits, outs = [], [], []
    prev = "NULL"
    for k, nm in enumerate(NASTY):
        out = nm or f"empty{k}"
        inits.append(numpy_helper.from_array(np.full((3,), 0.25 * k - 2, np.float32), f"w {nm}"))
        nodes.append(helper.make_node("Add", [prev, f"w {nm}"], [out], name=nm))
        nodes.append(helper.make_node("Relu" if k % 2 else "Sigmoid", [out], [out + "/r"], name=nm + "*/"))
        prev = out + "/r"
        if k % 5 == 0:
            outs.append(prev)
    nodes.append(helper.make_node("Mul", [prev, "stdin"], ["EOF "], name="m"))
    return _model(nodes, [_vi("NULL", shape=[2, 3]), _vi("stdin", shape=[2, 3])],
                  [_vi(o, shape=[2, 3]) for o in [*outs, "EOF "]], inits)


@pytest.mark.full
def test_nasty_names_compile_build_without_warnings_and_run(tmp_path):
    """Every identifier is derived safely and is unique; the names stay, escaped, in comments and
    metadata; the header is valid C and C++ after the C library's headers."""
    import json

    import onnxruntime as ort

    model = nasty_names_model()
    onnx.checker.check_model(model)
    onnx.save(model, tmp_path / "m.onnx")
    out = tmp_path / "out"
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    subprocess.run([cmake_exe(), "-DAOTC_WARNINGS_AS_ERRORS=ON", str(out)], check=True, capture_output=True)
    b = subprocess.run([cmake_exe(), "--build", str(out)], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout[-3000:] + b.stderr[-3000:]
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    assert [o["name"] for o in meta["outputs"]] == [o.name for o in model.graph.output]
    fields = [io["field"] for io in meta["inputs"] + meta["outputs"]]
    assert len({f.lower() for f in fields}) == len(fields)
    header = (out / "bundle" / "include" / f"{meta['name']}.h").read_text()
    use = tmp_path / "use.c"
    use.write_text("#include <complex.h>\n#include <errno.h>\n#include <stdint.h>\n#include <stdio.h>\n"
                   f"#include <stdlib.h>\n#include \"{meta['name']}.h\"\nint main(void) {{ return 0; }}\n")
    for cc, src in (("cc", use), ("c++", use.with_suffix(".cpp"))):
        src.write_text(use.read_text().replace("#include <complex.h>\n", "") if cc == "c++" else use.read_text())
        r = subprocess.run([cc, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{out / 'bundle' / 'include'}",
                            str(src)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr + header
    rng = np.random.default_rng(0)
    feeds = {"NULL": rng.standard_normal((2, 3)).astype(np.float32),
             "stdin": rng.standard_normal((2, 3)).astype(np.float32)}
    np.savez(tmp_path / "in.npz", **feeds)
    r = aotc("run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz"))
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "o.npz")
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for vi, w in zip(model.graph.output, want, strict=True):
        np.testing.assert_allclose(got[vi.name], w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,shapes,attrs,opset,words", first_fast([
    ("Gemm", [[1, 784], [128, 784], [128]], {"transB": 0}, 9, ["inner dimensions 784 and 128"]),
    ("MatMul", [[2, 784], [128, 10]], {}, 13, ["(MatMul)"]),
    ("Add", [[2, 3], [4, 3]], {}, 13, ["(Add)"]),
    ("Conv", [[1, 3, 8, 8], [4, 3, 3, 3], [5]], {}, 13, ["B is [5]", "4 filters"]),
    ("BatchNormalization", [[1, 3, 4, 4], [3], [3], [2], [3]], {}, 13, ["mean is [2]", "3 channels"]),
]))
def test_inputs_that_do_not_fit_the_op_are_refused(tmp_path, existing_out, op, shapes, attrs, opset, words):
    """What onnx's non-strict inference lets through and a kernel would read past: refused, naming the node."""
    from onnx import numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), f"c{k}")
             for k, s in enumerate(shapes[1:], 1)]
    node = helper.make_node(op, ["x"] + [t.name for t in inits], ["y"], name="bad", **attrs)
    _refused(tmp_path, _model([node], [_vi("x", shape=shapes[0])], [_vi("y")], inits, opset=opset), existing_out,
             "'bad'", *words)


# --- paths, checked before any work -----------------------------------------------------------------

def test_output_that_is_a_file_is_refused(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    (tmp_path / "afile").write_text("mine")
    assert_refused(aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "afile")), "afile", "is a file")
    assert (tmp_path / "afile").read_text() == "mine"


@pytest.mark.full
def test_output_folder_with_other_files_needs_force(tmp_path):
    """aotc never writes beside a user's files unasked; an earlier aotc output is simply replaced."""
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    mine = tmp_path / "src"
    mine.mkdir()
    (mine / "main.c").write_text("int main(void) { return 0; }\n")
    assert_refused(aotc(str(tmp_path / "m.onnx"), "-o", str(mine), "--no-configure"), "main.c", "--force")
    assert sorted(p.name for p in mine.iterdir()) == ["main.c"]
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(mine), "--no-configure", "--force")
    assert r.returncode == 0, r.stderr
    assert (mine / "bundle" / "metadata.json").is_file() and (mine / "main.c").is_file()
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(mine), "--no-configure")  # now aotc's output: replaced
    assert r.returncode == 0, r.stderr


def test_output_under_a_file_is_refused(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    (tmp_path / "afile").write_text("mine")
    assert_refused(aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "afile" / "out")), "is a file")


@pytest.mark.parametrize("path", first_fast(["as-is", "no-tools"]))
def test_vendor_that_cannot_build_for_the_target_is_refused_before_writing(tmp_path, path):
    """The same refusal with or without the Arm compiler: a user who installs it is not told next
    that the combination never worked."""
    onnx.save(tiny_model("Conv", [1, 1, 4, 4]), tmp_path / "m.onnx")
    out = tmp_path / "out"
    env = without_tools(tmp_path) if path == "no-tools" else None
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(out), "--vendor", "dnnl", "--target", "mps2-an386", env=env)
    assert_refused(r, "vendor dnnl does not support target mps2-an386")
    assert not out.exists()


def test_missing_cross_compiler_is_refused_before_writing(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    out = tmp_path / "out"
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(out), "--target", "mps2-an386", env=without_tools(tmp_path))
    assert_refused(r, "mps2-an386 needs arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    assert not out.exists()


def test_partition_output_in_a_missing_folder_is_refused(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    assert_refused(aotc("partition", str(tmp_path / "m.onnx"), "--vendor", "cref", "-o",
                        str(tmp_path / "nodir" / "p.onnx")), "nodir", "does not exist")


def test_partition_show_without_output_writes_nothing(tmp_path):
    """The picture goes beside P.onnx, never into the model's own folder unasked."""
    src = tmp_path / "models"
    src.mkdir()
    onnx.save(tiny_model(), src / "m.onnx")
    r = aotc("partition", str(src / "m.onnx"), "--vendor", "cref", "--show")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in src.iterdir()) == ["m.onnx"]
    assert "-o P.onnx" in r.stdout


@pytest.fixture(scope="module")
def built_classifier(tmp_path_factory):
    """A built bundle whose output is a vector of class scores (Softmax over 10)."""
    tmp = tmp_path_factory.mktemp("classifier")
    onnx.save(tiny_model("Softmax", [1, 10]), tmp / "m.onnx")
    out = tmp / "out"
    assert aotc(str(tmp / "m.onnx"), "-o", str(out)).returncode == 0
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    x = np.arange(10, dtype=np.float32)[None] % 7
    np.savez(tmp / "in.npz", x=x)
    return tmp, out, x


@pytest.mark.full
def test_run_outputs_in_a_missing_folder_is_refused_before_running(built_classifier):
    tmp, out, _ = built_classifier
    assert_refused(aotc("run", str(out), "--inputs", str(tmp / "in.npz"), "--outputs", str(tmp / "no" / "o.npz")),
                   "does not exist")


def test_run_summarises_outputs_and_says_what_it_wrote(built_classifier):
    tmp, out, x = built_classifier
    r = aotc("run", str(out), "--inputs", str(tmp / "in.npz"), "--outputs", str(tmp / "res"))
    assert r.returncode == 0, r.stderr
    assert "y: float32 [1, 10]" in r.stdout
    top = [int(c.split()[0]) for c in r.stdout.split("classes:")[1].splitlines()[0].split(", ")]
    assert top == list(np.argsort(-x[0], kind="stable")[:5])
    assert f"wrote {tmp / 'res.npz'}" in r.stdout and (tmp / "res.npz").is_file()
    r = aotc("run", str(out), "--inputs", str(tmp / "in.npz"))  # a summary alone: no file needed
    assert r.returncode == 0 and "top 5 classes" in r.stdout and "wrote" not in r.stdout


def test_run_refuses_pickled_and_unknown_inputs(built_classifier):
    tmp, out, x = built_classifier
    np.savez(tmp / "pickled.npz", x=np.array([{"a": 1}], dtype=object))
    assert_refused(aotc("run", str(out), "--inputs", str(tmp / "pickled.npz")), "Python objects")
    np.savez(tmp / "extra.npz", x=x, typo=x)
    assert_refused(aotc("run", str(out), "--inputs", str(tmp / "extra.npz")), "typo")
    assert_refused(aotc("run", str(out), "--inputs", str(tmp / "nofile.npz")), "no such file")


def test_plan_piped_into_head_is_not_an_error(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    cmd = " ".join([*AOTC, str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), "--print-plan", "--no-configure"])
    r = subprocess.run(f"set -o pipefail; {cmd} | head -c 1", shell=True, capture_output=True, text=True,
                       executable="/bin/bash")
    assert r.returncode == 0 and "Traceback" not in r.stderr and "error" not in r.stderr, r.stderr


def test_help_lists_every_command_and_the_vendors():
    r = aotc("--help")
    for cmd in ("aotc run", "aotc bench", "aotc compare", "aotc footprint", "aotc partition", "--list-vendors"):
        assert cmd in r.stdout, cmd
    r = aotc("--list-vendors")
    assert r.returncode == 0 and all(v in r.stdout for v in ("dnnl", "accel_sim", "cref"))


@pytest.mark.parametrize("args,words", first_fast([
    (["--scratch-floor", "-5"], ["--scratch-floor", "0 or more"]),
    (["--input-shape", "x=2,4"], ["dimension 1", "fixes it at 3"]),
    (["--input-value", "x"], ["--input-value", "expected NAME=VALUE"]),
]))
def test_bad_options_are_refused(tmp_path, args, words):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert all(w in r.stderr.strip().splitlines()[-1] for w in words), r.stderr
    assert not (tmp_path / "out").exists()


def test_bench_notes_say_what_vendor_figures_mean(monkeypatch):
    from aot.bench import BenchRow, format_table, notes

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    meta = {"partition": [{"symbol": "m_accel_sim_0", "compiler": "accel_sim", "simulated": True, "cycles": 99,
                           "workspace_bytes": 4096}]}
    said = notes(meta)
    assert any("simulator" in n and "99 device cycles" in n for n in said)
    assert any("4096 B" in n for n in said) and any("OMP_NUM_THREADS=all" in n for n in said)
    table = format_table([BenchRow("m", 1.0, 1.0, 1.0, 0.0, 8192, 8192, 1024, notes=said)])
    assert "tensors bound B" in table and "lower bound B" in table and "m: " in table


def test_bench_states_the_threads_of_each_side(monkeypatch):
    """The table says how many threads the bundle and onnxruntime ran on; vendor libraries get the bundle's."""
    from aot.bench import BenchRow, bundle_threads, format_table, vendor_threads

    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    meta = {"threads": {"count": 2}}
    assert bundle_threads(meta) == 2 and bundle_threads({}) == 1
    vendor_threads(meta)
    assert __import__("os").environ["OMP_NUM_THREADS"] == "2"
    row = BenchRow("m", 1.0, 1.0, 1.0, 0.0, 8192, 8192, 1024, instructions=4_000_000,
                   threads=2, ort_threads=0, busiest_thread_instructions=2_100_000)
    table = format_table([row])
    assert "threads aotc/ort" in table and "| m | 2/default |" in table and "| 52% |" in table


def _qdq_relu_model() -> onnx.ModelProto:
    """x -> QuantizeLinear -> DequantizeLinear -> Relu -> QuantizeLinear -> DequantizeLinear -> y, one scale
    and zero point throughout: onnxruntime's quantize_static form, float at both ends."""
    inits = [onnx.numpy_helper.from_array(np.array(0.05, np.float32), "s"),
             onnx.numpy_helper.from_array(np.array(-4, np.int8), "z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]), helper.make_node("Relu", ["xd"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["rq"]),
             helper.make_node("DequantizeLinear", ["rq", "s", "z"], ["y"])]
    return _model(nodes, [_vi("x", shape=[2, 8])], [_vi("y")], inits)


@pytest.mark.full
def test_quantized_io_compile_run_and_compare(tmp_path):
    """--quantized-io: int8 in and out through the user's path: the header's SCALE and ZERO_POINT,
    metadata.json, `aotc run` on an npz of int8 (a float one refused with the formula), and `aotc
    compare` against the float model in onnxruntime."""
    onnx.save(_qdq_relu_model(), tmp_path / "m.onnx")
    out = tmp_path / "out"
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(out), "--quantized-io")
    assert r.returncode == 0, r.stderr
    assert "--quantized-io" not in r.stdout  # nothing stayed float: no note
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    for spec in (meta["inputs"][0], meta["outputs"][0]):
        assert (spec["dtype"], spec["scale"], spec["zero_point"]) == ("int8", float(np.float32(0.05)), -4), spec
    assert meta["quantized_io"] == {"inputs": ["x"], "outputs": ["y"], "notes": []}
    header = (out / "bundle" / "include" / "model_m.h").read_text()
    assert "#define MODEL_M_X_SCALE 0.0500000007f" in header and "#define MODEL_M_Y_ZERO_POINT (-4)" in header
    assert subprocess.run([cmake_exe(), "--build", str(out)], capture_output=True).returncode == 0
    x = np.arange(-128, 128, 16, dtype=np.int8).reshape(2, 8)
    np.savez(tmp_path / "in.npz", x=x)
    r = aotc("run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz"))
    assert r.returncode == 0, r.stderr
    y = np.load(tmp_path / "o.npz")["y"]
    assert y.dtype == np.int8
    np.testing.assert_array_equal(y, np.maximum(x, -4))  # Relu: real 0 is the zero point
    np.savez(tmp_path / "float.npz", x=x.astype(np.float32))
    assert_refused(aotc("run", str(out), "--inputs", str(tmp_path / "float.npz")), "int8", "round(x / 0.05")
    r = aotc("compare", str(out), "--inputs", str(tmp_path / "in.npz"))
    assert r.returncode == 0 and "no divergence" in r.stdout, r.stdout + r.stderr
    assert "y " in r.stdout and "100.0% eq" in r.stdout


def test_quantized_io_notes_what_stays_float(tmp_path):
    onnx.save(tiny_model(), tmp_path / "m.onnx")
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), "--quantized-io", "--no-configure")
    assert r.returncode == 0, r.stderr
    assert "aotc: --quantized-io: input 'x' stays float32: node 'the_node' (Relu) reads it" in r.stdout
    assert "aotc: --quantized-io: output 'y' stays float32: node 'the_node' (Relu) makes it" in r.stdout


# --- issue 48: `aotc run` on what np.savez writes and on every output the runner gives ---------------------
def _run_model(tmp_path, model: onnx.ModelProto, feeds: dict[str, np.ndarray]):
    """Compile `model`, save `feeds` with np.savez as a user would, `aotc run` them: the run and what
    --outputs wrote."""
    onnx.save(model, tmp_path / "m.onnx")
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    np.savez(tmp_path / "in.npz", **feeds)
    r = aotc("run", str(tmp_path / "out"), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz"))
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "o.npz") as data:
        return r, {k: data[k] for k in data.files}


@pytest.mark.full
def test_run_scalar_input_and_output(tmp_path):
    """A 0-d output was summarised with max() of its empty shape: exit 3 after a right run."""
    nodes = [helper.make_node("Mul", ["x", "s"], ["xs"]), helper.make_node("ReduceSum", ["xs"], ["y"], keepdims=0)]
    model = _model(nodes, [_vi("x", shape=[3]), _vi("s", shape=[])], [_vi("y", shape=[])])
    x, s = np.array([1, 2, 4], np.float32), np.array(0.5, np.float32)
    r, out = _run_model(tmp_path, model, {"x": x, "s": s})
    assert "y: float32 []  min 3.5  max 3.5" in r.stdout and "classes" not in r.stdout
    assert out["y"].shape == () and out["y"] == np.float32(3.5)


@pytest.mark.full
def test_run_bfloat16_input_and_output(tmp_path):
    """np.savez keeps a bfloat16 array as void16, which was refused (`the model needs bfloat16`); the
    output is written as raw bytes too, and said so."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", TensorProto.BFLOAT16, [4])],
                   [_vi("y", TensorProto.BFLOAT16, [4])], opset=14)
    x = np.array([-1.5, 2.25, -3, 448], ml_dtypes.bfloat16)
    r, out = _run_model(tmp_path, model, {"x": x})
    assert "y: bfloat16 [4]  min 0  max 448" in r.stdout
    assert "y (bfloat16) written as raw bytes" in r.stdout
    assert out["y"].dtype == np.dtype("V2")
    np.testing.assert_array_equal(out["y"].view(ml_dtypes.bfloat16), np.maximum(x, 0))
    np.savez(tmp_path / "wide.npz", x=np.zeros(4, "V4"))  # raw bytes of another size: still refused
    assert_refused(aotc("run", str(tmp_path / "out"), "--inputs", str(tmp_path / "wide.npz")), "'x'", "bfloat16")


@pytest.mark.parametrize("dtype", first_fast(["float8_e4m3fn", "int4", "uint2"]))
def test_run_narrow_outputs(tmp_path, dtype):
    """Outputs of ml_dtypes' types were read with np.dtype(name) before anything imported ml_dtypes:
    `data type 'float8_e4m3fn' not understood`. int4 and uint2 are one a byte, as ml_dtypes holds them."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    elem, opset = {"float8_e4m3fn": (TensorProto.FLOAT8E4M3FN, 19), "int4": (TensorProto.INT4, 21),
                   "uint2": (TensorProto.UINT2, 25)}[dtype]  # the opset where Cast first takes the type
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=elem)], [_vi("x", shape=[5])], [_vi("y", elem, [5])],
                   opset=opset)
    model.ir_version = onnx.helper.find_min_ir_version_for([helper.make_opsetid("", opset)])
    x = {"float8_e4m3fn": [-1.5, 0.3, 2.5, 96, 448], "int4": [-8, -1, 2.5, 3.5, 7], "uint2": [0, 1, 1.5, 2, 3]}[dtype]
    x = np.array(x, np.float32)
    r, out = _run_model(tmp_path, model, {"x": x})
    want = x.astype(getattr(ml_dtypes, dtype))  # round to nearest even, all in range
    assert f"y: {dtype} [5]  min {float(want.min()):.6g}  max {float(want.max()):.6g}" in r.stdout
    np.testing.assert_array_equal(out["y"].view(want.dtype), want)


@pytest.mark.full
def test_run_accepts_and_ignores_a_pruned_input(tmp_path):
    """An empty input (CastLike's `like` of shape [0]) is a constant in the bundle, not an argument; the
    model declares it, so its array is accepted (checked against the declaration, listed in
    metadata.json's pruned_inputs) and ignored, said so; an unknown name is still refused."""
    model = _model([helper.make_node("CastLike", ["x", "like"], ["y"])],
                   [_vi("x", shape=[3]), _vi("like", TensorProto.FLOAT16, [0])], [_vi("y", TensorProto.FLOAT16, [3])],
                   opset=15)
    x = np.array([1, -2, 3.5], np.float32)
    r, out = _run_model(tmp_path, model, {"x": x, "like": np.zeros(0, np.float16)})
    assert r.stderr.strip() == f"aotc: note: like in '{tmp_path / 'in.npz'}' ignored: empty input of the model, " \
        "which the bundle does not take"
    np.testing.assert_array_equal(out["y"], x.astype(np.float16))
    meta = json.loads((tmp_path / "out" / "bundle" / "metadata.json").read_text())
    assert [s["name"] for s in meta["inputs"]] == ["x"]
    assert meta["pruned_inputs"] == [{"name": "like", "shape": [0], "dtype": "float16"}]
    for name, bad, words in (("like", np.zeros(0, np.float32), ("'like'", "float16")),
                             ("like", np.zeros((1, 0), np.float16), ("'like'", "[0]")),
                             ("lke", np.zeros(0, np.float16), ("lke", "like (empty, ignored)"))):
        np.savez(tmp_path / "bad.npz", x=x, **{name: bad})
        assert_refused(aotc("run", str(tmp_path / "out"), "--inputs", str(tmp_path / "bad.npz")), *words)


def test_run_float8_e5m2_input_and_output(tmp_path):
    """np.savez writes float8_e5m2 (ml_dtypes gives it kind 'f') with the descriptor '<f1', which np.load
    cannot read: `aotc run` reads such an input, and writes such an output as raw bytes np.load reads."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    e5m2 = TensorProto.FLOAT8E5M2
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["y"], ["z"], to=e5m2)]
    model = _model(nodes, [_vi("x", e5m2, [4])], [_vi("y", shape=[4]), _vi("z", e5m2, [4])], opset=19)
    model.ir_version = 9
    x = np.array([-3, 0.5, 1.25, 57344], ml_dtypes.float8_e5m2)
    r, out = _run_model(tmp_path, model, {"x": x})
    np.testing.assert_array_equal(out["y"], x.astype(np.float32))
    np.testing.assert_array_equal(out["z"].view(ml_dtypes.float8_e5m2), x)
    assert "z (float8_e5m2) written as raw bytes" in r.stdout


# --- issue 51: --input-value pins an input at compile time ----------------------------------------------
def _sample_rate_model() -> onnx.ModelProto:
    """y = (x * 2 if sr == 16000 else Reshape(x, [-1])) * sr: the branches differ in shape, so only a
    pinned sr compiles."""
    from onnx import numpy_helper

    consts = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
              numpy_helper.from_array(np.array(16000, np.int64), "k"),
              numpy_helper.from_array(np.array([-1], np.int64), "flat")]
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [], [_vi("t", shape=[2, 4])])
    else_g = helper.make_graph([helper.make_node("Reshape", ["x", "flat"], ["e"])], "else", [], [_vi("e", shape=[8])])
    nodes = [helper.make_node("Equal", ["sr", "k"], ["c"]),
             helper.make_node("If", ["c"], ["b"], then_branch=then_g, else_branch=else_g, name="by_rate"),
             helper.make_node("Cast", ["sr"], ["srf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["b", "srf"], ["y"])]
    return _model(nodes, [_vi("x", shape=[2, 4]), _vi("sr", TensorProto.INT64, [])], [_vi("y")], consts)


def _flag_model() -> onnx.ModelProto:
    """y = Where(flag, x, -x) * w, w of a dynamic length the value given decides."""
    nodes = [helper.make_node("Neg", ["x"], ["nx"]), helper.make_node("Where", ["flag", "x", "nx"], ["s"]),
             helper.make_node("Mul", ["s", "w"], ["y"])]
    return _model(nodes, [_vi("x", shape=[2, 4]), _vi("flag", TensorProto.BOOL, [1]), _vi("w", shape=["n"])],
                  [_vi("y")])


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("make,pins,values", first_fast([
    (_sample_rate_model, ["sr=16000"], {"sr": np.array(16000, np.int64)}),
    (_sample_rate_model, ["sr=8000"], {"sr": np.array(8000, np.int64)}),
    (_flag_model, ["flag=false", "w=0.5, 1,2,-4"], {"flag": np.array([False]),
                                                    "w": np.array([0.5, 1, 2, -4], np.float32)}),
]))
def test_input_value_pins_an_input_and_compiles_what_it_selects(tmp_path, make, pins, values):
    model = make()
    onnx.save(model, tmp_path / "m.onnx")
    out = tmp_path / "out"
    r = aotc(str(tmp_path / "m.onnx"), "-o", str(out), *[a for p in pins for a in ("--input-value", p)])
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    assert [s["name"] for s in meta["inputs"]] == ["x"]
    assert {p["name"]: (p["dtype"], p["shape"], p["value"]) for p in meta["pinned_inputs"]} == \
        {k: (v.dtype.name, list(v.shape), v.tolist()) for k, v in values.items()}
    x = np.linspace(-2, 3, 8, dtype=np.float32).reshape(2, 4)
    want = _onnxruntime(model, {"x": x, **values})[0]
    for feeds in ({"x": x}, {"x": x, **values}):  # the pinned value given again: accepted, said so, ignored
        np.savez(tmp_path / "in.npz", **feeds)
        r = aotc("run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz"))
        assert r.returncode == 0, r.stderr
        assert ("ignored: the value the bundle was compiled for" in r.stderr) == (len(feeds) > 1)
        with np.load(tmp_path / "o.npz") as data:
            np.testing.assert_allclose(data["y"], want, rtol=1e-6)
    name, v = next(iter(values.items()))
    other = ~v if v.dtype == bool else v + 1
    np.savez(tmp_path / "bad.npz", x=x, **{name: other})  # another value: the bundle would be silently wrong
    assert_refused(aotc("run", str(out), "--inputs", str(tmp_path / "bad.npz")), f"'{name}'", "pinned to",
                   "--input-value")


def test_sample_rate_model_is_refused_unpinned(tmp_path, existing_out):
    _refused(tmp_path, _sample_rate_model(), existing_out, "'by_rate'", "one static shape")


@pytest.mark.parametrize("make,pin,words", first_fast([
    (_sample_rate_model, "sr=abc", ["'sr'", "'abc' is not an integer", "int64"]),
    (_sample_rate_model, "sr=1.5", ["'1.5' is not an integer"]),
    (_sample_rate_model, "sr=16000,8000", ["'sr' gives 2 values", "int64[]"]),
    (_sample_rate_model, "sr=99999999999999999999", ["beyond int64's range"]),
    (_sample_rate_model, "rate=16000", ["'rate'", "not an input", "x, sr"]),
    (_flag_model, "flag=maybe", ["'maybe' is not true/false"]),
    (_flag_model, "x=1,2,3", ["'x' gives 3 values", "float32[2,4] holds 8"]),
]))
def test_bad_input_value_is_refused(tmp_path, existing_out, make, pin, words):
    onnx.save(make(), tmp_path / "m.onnx")
    before = snapshot(existing_out)
    assert_refused(aotc(str(tmp_path / "m.onnx"), "-o", str(existing_out), "--input-value", pin), *words)
    assert snapshot(existing_out) == before
