"""aotc bench's reference engines (issue 64): OpenVINO beside onnxruntime and LiteRT (--openvino), every
engine's CPU time per inference, the fastest reference named, and a reference model whose inputs and
outputs are named otherwise than the bundle's (a tf2onnx export of the .tflite file it was compiled from),
matched by position. The other bench tests: tests/cli/test_cli.py (onnxruntime, threads, notes) and
tests/frontend/test_tflite.py (LiteRT)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import require_tool
from modelcheck import aotc, build_bundle
from onnx import TensorProto, helper

from aot.bench import BenchRow, LiteRT, OpenVINO, _ort_run, _ort_session, format_table, match_ports
from aot.errors import AotcError

MODELS = Path(__file__).resolve().parents[1] / "models" / "tflite"
CI = os.environ.get("CI", "").lower() == "true"


def _have(module: str, pip: str) -> bool:
    """Whether an optional engine is installed; in CI (which installs the test extra) a missing one fails."""
    try:
        importlib.import_module(module)
    except ImportError:
        if CI:
            pytest.fail(f"{pip} is not installed (CI installs the test extra)")
        return False
    return True


def _require(module: str, pip: str) -> None:
    if not _have(module, pip):
        pytest.skip(f"{pip} is not installed (pip install {pip})")


def _columns(stdout: str) -> dict[str, str]:
    """The table's one row by column name."""
    head, _, row = (line.split("|")[1:-1] for line in stdout.strip().splitlines()[:3])
    return dict(zip((h.strip() for h in head), (c.strip() for c in row), strict=True))


def _assert_refused(r, *words: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("aotc: error: "), r.stderr
    assert all(w in lines[0] for w in words), lines[0]


def _renamed(model: onnx.ModelProto, names: dict[str, str]) -> onnx.ModelProto:
    """`model` with its graph inputs and outputs renamed, as another converter names them."""
    g = model.graph
    for v in [*g.input, *g.output]:
        v.name = names.get(v.name, v.name)
    for n in g.node:
        n.input[:] = [names.get(x, x) for x in n.input]
        n.output[:] = [names.get(x, x) for x in n.output]
    return model


def _sigmoid_model(shape: list, x: str = "x", y: str = "y") -> onnx.ModelProto:
    g = helper.make_graph([helper.make_node("Sigmoid", [x], [y])], "g",
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info(y, TensorProto.FLOAT, shape)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _spec(name: str, shape: list) -> dict:
    return {"name": name, "shape": shape, "dtype": "float32"}


def test_ports_match_by_name_else_by_position_in_one_line(capsys):
    ours = [_spec("a", [1, 4]), _spec("b", [2])]
    assert match_ports("inputs", ours, [("b", (2,)), ("a", (1, 4))], "onnxruntime", "m.onnx") == [1, 0]
    assert capsys.readouterr().err == ""  # by name: nothing to say
    said: dict = {}
    assert match_ports("inputs", ours, [("input", (None, 4)), ("other", None)], "onnxruntime", "m.onnx", said) == [0, 1]
    assert match_ports("outputs", [_spec("y", [3])], [("Identity:0", (3,))], "onnxruntime", "m.onnx", said) == [0]
    assert capsys.readouterr().err == ""  # kept for one line
    from aot.bench import say_matched_by_position

    say_matched_by_position(said)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("aotc: note: 'm.onnx' names its inputs and outputs otherwise"), err
    assert "'input', 'other' for 'a', 'b'" in err[0] and "matched by position" in err[0]


@pytest.mark.parametrize(("theirs", "words"), [
    ([("input", (1, 4))], ["has 1 inputs in onnxruntime", "the bundle 2", "same network"]),
    ([("input", (1, 5)), ("other", (2,))], ["input 0", "[1, 5]", "[1, 4]", "same network"]),
    ([("input", (1, 4)), ("other", (2, 1))], ["input 1", "'other'", "[2, 1]"]),
])
def test_ports_of_another_count_or_shape_are_refused(theirs, words):
    with pytest.raises(AotcError) as e:
        match_ports("inputs", [_spec("a", [1, 4]), _spec("b", [2])], theirs, "onnxruntime", "m.onnx")
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)


def test_onnxruntime_runs_an_export_named_otherwise(tmp_path, capsys):
    """Issue 64: onnxruntime was fed the bundle's input names ('Required inputs (['input']) are missing'); the
    export's own names are matched by position, outputs too, and given back in the bundle's order."""
    path = tmp_path / "export.onnx"
    onnx.save(_sigmoid_model([2, 3], "input", "Identity:0"), path)
    meta = {"inputs": [_spec("serving_default_input:0", [2, 3])],
            "outputs": [_spec("StatefulPartitionedCall:0", [2, 3])]}
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    feeds, refs = _ort_run(_ort_session(str(path)), meta, [x], path)
    assert list(feeds) == ["input"] and np.allclose(refs[0], 1 / (1 + np.exp(-x)), atol=1e-6)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("matched by position" in ln for ln in err)  # said at once: no `said` given


def test_table_keeps_its_columns_and_adds_cpu_openvino_and_the_fastest():
    """The columns tests and docs read keep their places; CPU times, OpenVINO's figures and the fastest reference
    come after them."""
    plain = BenchRow("m", 2.0, 4.0, 1.0, 0.0, 8192, 8192, 1024, round_ratios=[0.5])
    old = format_table([plain]).splitlines()[0]
    assert old.split(" | ")[:14] == ["| model", "threads aotc/ort", "bundle us", "onnxruntime us", "ratio",
                                     "ort call floor us", "instr (M)", "busiest thread", "max abs err", "arena B",
                                     "tensors bound B", "lower bound B", "arena/tensors", "arena/lower"]
    assert old.endswith("| bundle CPU us | onnxruntime CPU us |")
    assert format_table([plain]).splitlines()[2].endswith("| - | - |")  # a runner built before cpu_ns: "-"
    row = BenchRow("m", 2.0, 4.0, 1.0, 1e-7, 8192, 8192, 1024, round_ratios=[0.5], tflite_us=3.0,
                   tflite_max_abs_err=1e-7, tflite_round_ratios=[2 / 3], best_round_ratios=[2 / 3], bundle_cpu_us=2.1,
                   ort_cpu_us=4.5, tflite_cpu_us=3.2, openvino_us=2.5, openvino_cpu_us=2.6, openvino_max_abs_err=2e-7,
                   openvino_round_ratios=[0.8], fastest="OpenVINO", fastest_round_ratios=[0.8])
    cols = _columns(format_table([row]))
    assert (cols["bundle us"], cols["onnxruntime us"], cols["ratio"], cols["LiteRT us"], cols["ratio faster"]) == \
        ("2.0", "4.0", "0.50", "3.0", "0.67")
    assert (cols["bundle CPU us"], cols["onnxruntime CPU us"], cols["LiteRT CPU us"]) == ("2.1", "4.5", "3.2")
    assert (cols["OpenVINO us"], cols["OpenVINO CPU us"], cols["ratio OpenVINO"], cols["OpenVINO max abs err"]) == \
        ("2.5", "2.6", "0.80", "2.00e-07")
    assert (cols["fastest ref"], cols["ratio fastest ref"]) == ("OpenVINO", "0.80")
    assert list(cols)[14:18] == ["LiteRT us", "ratio LiteRT", "ratio faster", "LiteRT max abs err"]


def test_openvino_missing_is_one_line_naming_the_pip_command(tmp_path, monkeypatch):
    onnx.save(_sigmoid_model([2, 3]), tmp_path / "m.onnx")
    aotc(tmp_path / "m.onnx", "-o", tmp_path / "out", "--no-configure")
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino: ImportError, as where it is not installed
    _assert_refused(aotc("bench", tmp_path / "out", "--openvino", check=False), "--openvino", "pip install openvino")


@pytest.mark.parametrize("command", ["bench", "compare"])
def test_onnxruntime_missing_is_one_line_naming_the_pip_command(tmp_path, monkeypatch, command):
    """`pip install aotc` brings no onnxruntime (the testing and test extras do): aotc bench and aotc compare on an
    ONNX model's bundle then say what to install, as a user without the extras meets them (an internal error
    before)."""
    require_tool("cmake", "gcc")
    onnx.save(_sigmoid_model([2, 3]), tmp_path / "m.onnx")
    aotc(tmp_path / "m.onnx", "-o", tmp_path / "out")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime: ImportError, as where it is missing
    args = ["bench", tmp_path / "out"] if command == "bench" else ["compare", tmp_path / "m.onnx", tmp_path / "out"]
    _assert_refused(aotc(*args, check=False), f"aotc {command}", "onnxruntime", "pip install onnxruntime")


def test_openvino_reads_onnx_and_tflite_on_one_thread(tmp_path):
    """OpenVINO on an ONNX file and on a .tflite file (which it reads too): the bundle's inputs fed by name,
    outputs in the bundle's order, latency and CPU time; a file it cannot read is one line."""
    _require("openvino", "openvino")
    from openvino import properties

    path = tmp_path / "m.onnx"
    onnx.save(_sigmoid_model([2, 3]), path)
    meta = {"inputs": [_spec("x", [2, 3])], "outputs": [_spec("y", [2, 3])]}
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    vino = OpenVINO(path, meta, [x])
    assert vino.compiled.get_property(properties.inference_num_threads()) == 1
    assert np.allclose(vino.outputs()[0], 1 / (1 + np.exp(-x)), atol=1e-6)
    latency, cpu = vino.time_cpu(20)
    assert latency > 0 and cpu > 0
    lite = MODELS / "sine_float.tflite"
    meta = {"inputs": [_spec("serving_default_keras_tensor:0", [1, 1])],
            "outputs": [_spec("StatefulPartitionedCall_1:0", [1, 1])]}
    x = np.full((1, 1), 1.5, np.float32)
    y = OpenVINO(lite, meta, [x]).outputs()[0]
    assert y.shape == (1, 1) and abs(float(y[0, 0]) - np.sin(1.5)) < 0.2  # a small net fitted to sin
    if _have("ai_edge_litert", "ai-edge-litert"):  # the same file read by aotc's frontend, in onnxruntime
        from aot.frontend.tflite import load_tflite

        onnx.save(load_tflite(lite), tmp_path / "sine.onnx")
        assert np.allclose(y, _ort_run(_ort_session(str(tmp_path / "sine.onnx")), meta, [x])[1][0], atol=1e-6)
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(AotcError, match="OpenVINO cannot run") as e:
        OpenVINO(tmp_path / "bad.onnx", meta, [np.zeros((1, 1), np.float32)])
    assert "\n" not in str(e.value)


def test_litert_and_openvino_take_a_thread_count(tmp_path):
    """LiteRT and OpenVINO on N threads (bench_one's ref_threads, bench/host_models.py --threads N): the same
    outputs as on one."""
    path = tmp_path / "m.onnx"
    onnx.save(_sigmoid_model([2, 3]), path)
    meta = {"inputs": [_spec("x", [2, 3])], "outputs": [_spec("y", [2, 3])]}
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    if _have("openvino", "openvino"):
        from openvino import properties

        vino = OpenVINO(path, meta, [x], threads=2)
        assert vino.compiled.get_property(properties.inference_num_threads()) == 2
        assert np.allclose(vino.outputs()[0], 1 / (1 + np.exp(-x)), atol=1e-6)
    if _have("ai_edge_litert", "ai-edge-litert"):
        meta = {"inputs": [_spec("serving_default_keras_tensor:0", [1, 1])],
                "outputs": [_spec("StatefulPartitionedCall_1:0", [1, 1])]}
        one = np.full((1, 1), 1.5, np.float32)
        assert np.array_equal(LiteRT(MODELS / "sine_float.tflite", meta, [one], threads=2).outputs()[0],
                              LiteRT(MODELS / "sine_float.tflite", meta, [one]).outputs()[0])


def test_litert_runs_a_file_xnnpack_refuses_on_its_builtin_kernels():
    """A pruned model's sparse FULLY_CONNECTED, which XNNPACK cannot prepare, ended `aotc bench` on a bundle of it
    ("LiteRT cannot load ... failed to delegate"): LiteRT's builtin kernels run it instead, and the bench says which
    kernels it timed; a file LiteRT cannot read at all is still one line naming both attempts."""
    _require("ai_edge_litert", "ai-edge-litert")
    meta = {"inputs": [_spec("serving_default_keras_tensor:0", [1, 1])],
            "outputs": [_spec("StatefulPartitionedCall_1:0", [1, 1])]}
    assert LiteRT(MODELS / "sine_float.tflite", meta, [np.full((1, 1), 1.5, np.float32)]).kernels == "XNNPACK"
    from ai_edge_litert.interpreter import Interpreter

    pruned = MODELS / "pruned_int8.tflite"
    spec = Interpreter(model_path=str(pruned)).get_input_details()[0]
    x = np.zeros([int(v) for v in spec["shape"]], spec["dtype"])
    lite = LiteRT(pruned, {"inputs": [_spec(spec["name"], list(x.shape))], "outputs": []}, [x])
    assert lite.kernels.startswith("builtin kernels") and lite.outputs()
    bad = MODELS.parent.parent / "README.md"
    with pytest.raises(AotcError, match="LiteRT cannot load") as e:
        LiteRT(bad, meta, [np.zeros((1, 1), np.float32)])
    assert "\n" not in str(e.value) and "with XNNPACK" in str(e.value)


def test_bench_a_tflite_bundle_against_an_export_named_otherwise(tmp_path):
    """Issue 64: `aotc bench OUT --model M.onnx` on a bundle compiled from a .tflite file, M.onnx named as tf2onnx
    names it, was an internal error; it is timed, with one line saying the names were matched by position, every
    engine's CPU time, and with --openvino OpenVINO on M.onnx and the fastest reference. An export of another
    shape is one line, exit 2."""
    _require("ai_edge_litert", "ai-edge-litert")
    from aot.frontend.tflite import load_tflite

    out, export = tmp_path / "out", tmp_path / "export.onnx"
    build_bundle(MODELS / "sine_float.tflite", out)
    onnx.save(_renamed(load_tflite(MODELS / "sine_float.tflite"), {"serving_default_keras_tensor:0": "input",
                                                                    "StatefulPartitionedCall_1:0": "Identity:0"}),
              export)
    run = aotc("bench", out, "--model", export, "--repeat", "5", "--rounds", "2", check=False)
    assert run.returncode == 0, run.stderr
    note = [ln for ln in run.stderr.splitlines() if "matched by position" in ln]
    assert len(note) == 1 and "inputs and outputs" in note[0] and "'input'" in note[0], run.stderr
    cols = _columns(run.stdout)
    assert float(cols["onnxruntime us"]) > 0 and float(cols["max abs err"]) < 1e-5, cols
    assert float(cols["bundle CPU us"]) > 0 and float(cols["onnxruntime CPU us"]) > 0, cols
    if _have("openvino", "openvino"):
        run = aotc("bench", out, "--model", export, "--repeat", "5", "--rounds", "2", "--openvino", check=False)
        assert run.returncode == 0, run.stderr
        cols = _columns(run.stdout)
        assert float(cols["OpenVINO us"]) > 0 and float(cols["OpenVINO CPU us"]) > 0, cols
        assert float(cols["OpenVINO max abs err"]) < 1e-5 and float(cols["ratio OpenVINO"]) > 0, cols
        assert cols["fastest ref"] in ("onnxruntime", "OpenVINO") and float(cols["ratio fastest ref"]) > 0, cols
        assert any("OpenVINO" in ln and "one thread" in ln for ln in run.stdout.splitlines()[3:]), run.stdout
    other = tmp_path / "other.onnx"
    onnx.save(_sigmoid_model([1, 2], "input", "Identity:0"), other)
    _assert_refused(aotc("bench", out, "--model", other, check=False), "input 0", "[1, 2]", "same network")


@pytest.mark.full
def test_bench_times_three_references_and_names_the_fastest(tmp_path):
    """An ONNX bundle with --tflite and --openvino: onnxruntime, LiteRT and OpenVINO in the same rounds, each
    engine's figures and CPU time, the columns of --tflite where they were, and the fastest of the three."""
    _require("ai_edge_litert", "ai-edge-litert")
    _require("openvino", "openvino")
    from aot.frontend.tflite import load_tflite

    src, out = tmp_path / "keyword.onnx", tmp_path / "out"
    onnx.save(load_tflite(MODELS / "keyword_float.tflite"), src)
    build_bundle(src, out)
    run = aotc("bench", out, "--tflite", MODELS / "keyword_float.tflite", "--openvino", "--repeat", "5",
               "--rounds", "2", check=False)
    assert run.returncode == 0, run.stderr
    cols = _columns(run.stdout)
    assert list(cols)[14:18] == ["LiteRT us", "ratio LiteRT", "ratio faster", "LiteRT max abs err"]
    figures = {"onnxruntime": float(cols["onnxruntime us"]), "LiteRT": float(cols["LiteRT us"]),
               "OpenVINO": float(cols["OpenVINO us"])}
    assert figures[cols["fastest ref"]] == min(figures.values()), cols
    for k in ("bundle CPU us", "onnxruntime CPU us", "LiteRT CPU us", "OpenVINO CPU us"):
        assert float(cols[k]) > 0, cols
    assert float(cols["OpenVINO max abs err"]) < 1e-4, cols


@pytest.mark.full
def test_host_models_avx2_peak_keeps_its_chains_in_registers(tmp_path):
    """bench/host_models.py's FMA peak at --isa avx2 (x86-64-v3): its chains fit AVX2's 16 registers, so the timed
    loop is FMAs and no stack traffic. With 24 chains gcc spilled 21 of them a step and the peak read 124 GFLOP/s
    on a core that does 135 (so every model's 'aotc % peak' at AVX2 came out 8 % high)."""
    require_tool("gcc", "objdump")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        host_models = importlib.import_module("host_models")
    finally:
        sys.path.pop(0)
    src, obj = tmp_path / "peak.c", tmp_path / "peak.o"
    src.write_text(host_models.PEAK_C)
    subprocess.run(["gcc", "-O2", host_models.ISAS["avx2"]["cflags"], "-c", str(src), "-o", str(obj)], check=True)
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    first = next(i for i, ln in enumerate(asm) if "vfmadd" in ln and "ps" in ln and "ymm" in ln)
    end = next(i for i in range(first, len(asm)) if "\tj" in asm[i])  # the loop's backward branch
    loop = asm[first:end]
    assert sum("vfmadd" in ln for ln in loop) >= 8 and not [ln for ln in loop if "(%rsp)" in ln], "\n".join(loop)


def test_layer_kinds_reads_convs_from_the_generated_c():
    """bench/layer_kinds.py (issue 64's per-kind table): a conv's kind and FLOPs from its aotc_conv_params as
    emit_c writes them (a depthwise conv is one group a channel; a 1 x 1 on one position is squeeze-excite's), and a
    tap's element count from its type string."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    try:
        layer_kinds = importlib.import_module("bench.layer_kinds")
    finally:
        sys.path.pop(0)
    src = "".join(
        f"static const aotc_conv_params p_{name} = {{\n    .batch = 1,\n    .group = {g},\n    .in_c = {ci},\n"
        f"    .out_c = {co},\n    .in_size = {{1, {h * s}, {h * s}}},\n    .out_size = {{1, {h}, {h}}},\n"
        f"    .kernel = {{1, {k}, {k}}},\n    .strides = {{1, {s}, {s}}},\n}};\n"
        for name, g, ci, co, h, k, s in [("DW", 144, 144, 144, 28, 5, 2), ("PW", 1, 24, 144, 56, 1, 1),
                                         ("SE", 1, 144, 6, 1, 1, 1), ("STEM", 1, 3, 32, 112, 3, 2)])
    params = layer_kinds.conv_params(src)
    kinds = {name: layer_kinds.conv_kind(p) for name, p in params.items()}
    assert kinds == {"DW": ("depthwise 5x5 stride 2 to 28x28", 2.0 * 144 * 28 * 28 * 25),
                     "PW": ("1x1 expand 56x56", 2.0 * 144 * 56 * 56 * 24),
                     "SE": ("1x1 on one position (squeeze-excite, classifier)", 2.0 * 6 * 144),
                     "STEM": ("3x3 stride 2 (stem)", 2.0 * 32 * 112 * 112 * 27)}
    assert layer_kinds.floats("float32[1,32,112,112]") == 401408
