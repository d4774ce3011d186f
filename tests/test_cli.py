"""The command line contract: bad input gives exit 2, one line naming the problem, OUT untouched."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from aot.build import cmake_exe

AOTC = [sys.executable, "-m", "aot.cli"]


def aotc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*AOTC, *args], capture_output=True, text=True)


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


def test_unsupported_op(tmp_path, existing_out):
    onnx.save(tiny_model(op="Det", shape=[3, 3]), tmp_path / "det.onnx")
    before = snapshot(existing_out)
    assert_refused(aotc(str(tmp_path / "det.onnx"), "-o", str(existing_out)), "the_node", "Det")
    assert snapshot(existing_out) == before


def test_unsupported_dtype(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, tmp_path / "f16.onnx")
    assert_refused(aotc(str(tmp_path / "f16.onnx"), "-o", str(tmp_path / "out")), "float16")


def test_unsupported_opset(tmp_path):
    onnx.save(tiny_model(opset=6), tmp_path / "old.onnx")
    assert_refused(aotc(str(tmp_path / "old.onnx"), "-o", str(tmp_path / "out")), "opset 6")


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


@pytest.mark.parametrize("arg,words", [("z=4,3", ["'z'", "not an input"]), ("x=4", ["rank 1"]),
                                       ("x=0,3", ["positive"])])
def test_bad_input_shape_is_refused(tmp_path, arg, words):
    onnx.save(tiny_model(shape=["batch", 3]), tmp_path / "dyn.onnx")
    assert_refused(aotc(str(tmp_path / "dyn.onnx"), "-o", str(tmp_path / "out"), "--input-shape", arg), *words)


def test_bench_times_bundle_and_onnxruntime_in_rounds(tmp_path):
    src, out = tmp_path / "sig.onnx", tmp_path / "out"
    onnx.save(tiny_model("Sigmoid", [4, 64]), src)
    assert aotc(str(src), "-o", str(out)).returncode == 0
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    r = aotc("bench", str(out), "--repeat", "5", "--rounds", "2")
    assert r.returncode == 0, r.stderr
    row = r.stdout.strip().splitlines()[-1].split("|")
    assert row[1].strip() == "sig"
    bundle_us, ort_us, ratio = (float(row[k]) for k in (2, 3, 4))
    assert bundle_us > 0 and ort_us > 0 and ratio > 0
    assert float(row[8]) == float(row[9])  # the arena (I/O inside) is the tight bound: nothing else is live


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
