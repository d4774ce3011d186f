"""--ram-budget (issue 53) beyond the TFLite int8 kernels: a float Add (Sub, Mul, Div) writes over either operand
that dies there, and the ONNX int8 convs (QLinearConv from a QDQ model) take patch blocks below their usual 9 KiB
floor, down to one lane of positions. Each budgeted bundle gives the unbudgeted one's outputs: the float one on the
host under ASan/UBSan (and onnxruntime's within DESIGN.md's tolerance), the int8 one on the M4 under qemu."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import require_tool
from modelcheck import sanitize_args
from onnx import TensorProto, helper, numpy_helper

from aot.build import build, cmake_exe, configure, run_bundle
from aot.compiler import Options, compile_file

KWS_QDQ = Path(__file__).resolve().parents[2] / "bench" / "models" / "keras" / "kws_dscnn_int8.onnx"


def _add_model(path: Path) -> None:
    """a = x W0, b = a W1, c = a + b, then c and a each read by a small MatMul: at the Add a is still alive
    and b dies, so only a budget's in-place over input 1 keeps the step at two tensors."""
    rng = np.random.default_rng(0)
    shapes = [(256, 256), (256, 256), (256, 16), (256, 16)]
    weights = [numpy_helper.from_array((rng.standard_normal(s) / 16).astype(np.float32), f"w{k}")
               for k, s in enumerate(shapes)]
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["a"]), helper.make_node("MatMul", ["a", "w1"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("MatMul", ["c", "w2"], ["d"]),
             helper.make_node("MatMul", ["a", "w3"], ["e"]), helper.make_node("Sub", ["d", "e"], ["y"])]
    graph = helper.make_graph(nodes, "add_inplace", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.mark.full
def test_float_add_writes_over_its_second_operand_under_a_budget(tmp_path):
    """12,288 B without a budget (a, b and c alive at the Add); 8,448 B with one, the Add's output over b,
    named in the report; the outputs the unbudgeted bundle's, built with ASan and UBSan."""
    model = tmp_path / "add.onnx"
    _add_model(model)
    plain = compile_file(model, Options(name="add"))
    least = compile_file(model, Options(name="add", ram_budget=8448))
    assert plain.metadata["memory"]["arena_bytes"] == 12288 and least.metadata["memory"]["arena_bytes"] == 8448
    assert least.metadata["memory"]["ram_budget"]["traded"]["inplace"]["nodes"] == ["Add_2"]
    for name, b in (("plain", plain), ("least", least)):
        b.write(tmp_path / name / "bundle")
        subprocess.run([cmake_exe(), "-S", str(tmp_path / name / "bundle"), "-B", str(tmp_path / name),
                        "-DAOTC_WARNINGS_AS_ERRORS=ON",
                        *(sanitize_args(tmp_path / name / "bundle") if name == "least" else ())],
                       check=True, capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(tmp_path / name), "-j", "2"], check=True, capture_output=True)
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((4, 256)).astype(np.float32)
        got, _ = run_bundle(tmp_path / "least", least.metadata, [x])
        want, _ = run_bundle(tmp_path / "plain", plain.metadata, [x])
        assert np.array_equal(got["y"], want["y"])
        ref = sess.run(None, {"x": x})[0]
        assert np.max(np.abs(got["y"] - ref)) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))


def test_qdq_convs_take_smaller_tiles_under_a_budget(tmp_path):
    """KWS DS-CNN's QDQ form (--quantized-io) on the M4: 20,352 B without a budget (its convs' 9 KiB patch
    floor), 17,280 B at the least budget, by smaller patch blocks; identical outputs under qemu."""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    metas = {}
    for name, budget in (("plain", None), ("least", 17280)):
        b = compile_file(KWS_QDQ, Options(name="kws", target="mps2-an386", quantized_io=True, ram_budget=budget))
        b.write(tmp_path / name / "bundle")
        configure(tmp_path / name, "mps2-an386")
        build(tmp_path / name)
        metas[name] = b.metadata
    assert metas["plain"]["memory"]["arena_bytes"] == 20352 and metas["least"]["memory"]["arena_bytes"] == 17280
    assert "scratch" in metas["least"]["memory"]["ram_budget"]["traded"]
    y = metas["plain"]["outputs"][0]["name"]
    for seed in range(2):
        x = [np.random.default_rng(seed).integers(-128, 128, tuple(i["shape"])).astype(np.int8)
             for i in metas["plain"]["inputs"]]
        got, _ = run_bundle(tmp_path / "least", metas["least"], x)
        want, _ = run_bundle(tmp_path / "plain", metas["plain"], x)
        assert np.array_equal(got[y], want[y]), seed
