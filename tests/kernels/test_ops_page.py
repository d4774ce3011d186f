"""The supported-ops page is generated from the kernel table: the committed docs/ops.md must be current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from onnx import TensorProto, helper

from aot.compiler import Options, compile_model
from aot.ops_page import FRONTEND, markdown, rows

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_docs_ops_page_is_current():
    assert DOCS.read_text() == markdown(), "regenerate it: aotc ops --markdown > docs/ops.md"


def test_every_kernel_op_on_the_page_is_in_the_table_with_its_dtypes():
    from aot.kernels import HOST_OPS

    for r in rows():
        if r.how == "kernel":
            assert r.dtypes == tuple(HOST_OPS[r.op].dtypes)
    conv = next(r for r in rows() if r.op == "Conv")
    assert "dnnl" in conv.vendors and "accel_sim" in conv.vendors and 22 in conv.opsets


def test_ops_the_frontend_rewrites_do_compile():
    """The page's claims about the frontend hold: each rewrite compiles (checked on the simple ones)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    for op, inputs in (("Sum", ["x", "x", "x"]), ("Dropout", ["x"]), ("CastLike", ["x", "x"])):
        assert op in FRONTEND
        g = helper.make_graph([helper.make_node(op, inputs, ["y"], name="n")], "g", [x], [y])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        compile_model(model, Options(name="m"))


def test_aotc_ops_on_the_command_line():
    run = [sys.executable, "-m", "aot.cli", "ops"]
    r = subprocess.run([*run, "LayerNormalization"], capture_output=True, text=True, check=True)
    assert "how: kernel" in r.stdout and "17" in r.stdout
    r = subprocess.run([*run, "NoSuchOp"], capture_output=True, text=True, check=True)
    assert "not compiled" in r.stdout


def test_docs_tflite_ops_page_is_current():
    from aot.tflite_ops_page import markdown

    page = DOCS.parent / "tflite-ops.md"
    assert page.read_text() == markdown(), "regenerate it: aotc ops --tflite --markdown > docs/tflite-ops.md"


def test_tflite_page_matches_what_the_frontend_lowers():
    """Each row's claims are the frontend's tables: a float builtin has a lowering, an int8 one an int8 kernel or
    a data move on the integers."""
    from aot.frontend.tflite.int8 import INT8_OPS, INT16_OPS
    from aot.tflite_ops_page import rows

    table = {r.op: r for r in rows()}
    assert table["CONV_2D"].float and table["CONV_2D"].int8 and table["CONV_2D"].int16
    assert table["RESHAPE"].int8 and table["RESHAPE"].int16  # data movement on the integers
    assert not table["CONV_3D"].int8
    assert set(INT8_OPS) | set(INT16_OPS) <= {op for op, r in table.items() if r.int8 or r.int16}


def test_aotc_ops_tflite_on_the_command_line():
    r = subprocess.run([sys.executable, "-m", "aot.cli", "ops", "--tflite", "depthwise_conv_2d"], capture_output=True,
                       text=True, check=True)
    assert "float: yes" in r.stdout and "int8: yes" in r.stdout


def test_tflite_page_lists_the_custom_op():
    """The custom ops the reader lets through are the ones the frontend lowers, and the page and `aotc ops --tflite
    NAME` say what each takes."""
    from aot.frontend.tflite import ops
    from aot.frontend.tflite.reader import CUSTOM_OPS
    from aot.tflite_ops_page import markdown

    assert set(CUSTOM_OPS) == ops.CUSTOM_LOWERED
    assert "- `TFLite_Detection_PostProcess`: float32 or uint8" in markdown()
    r = subprocess.run([sys.executable, "-m", "aot.cli", "ops", "--tflite", "tflite_detection_postprocess"],
                       capture_output=True, text=True, check=True)
    assert r.stdout.startswith("TFLite_Detection_PostProcess (custom op): ")
