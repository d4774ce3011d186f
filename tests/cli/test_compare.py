"""aotc compare: a debug build of the bundle reports every intermediate tensor, onnxruntime computes
the same tensors, and the first node beyond tolerance is named -- a host node, or a node inside a
vendor function -- on the host and on a Cortex-M board under qemu (semihosting)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from onnx import TensorProto, helper, numpy_helper

from aot.cli import main
from aot.compare import Tap, compare_taps, format_table, read_taps, verdict
from aot.compiler import Options, compile_model
from aot.csource.tap import TAP_MAGIC
from aot.errors import AotcError
from aot.ir import Function
from aot.vendor import ACCEPT, Artifact, CodegenContext, Vendor


def aotc(capsys, *args: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def snapshot(path: Path) -> list[tuple[str, bytes]]:
    return sorted((p.relative_to(path).as_posix(), p.read_bytes()) for p in path.rglob("*") if p.is_file())


def table_rows(stdout: str) -> dict[str, str]:
    """node -> its line of the table."""
    lines = stdout.splitlines()
    return {line.split()[1]: line for line in lines[2:] if line[:1].strip() and line.split()[0].isdigit()}


# --- an injected error: a vendor whose Relu leaks ------------------------------------------------

def _faulty_codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    """Relu computed as LeakyRelu(0.1): the mistake `aotc compare` has to find. The function taps
    its node's output (ctx.tap), so the divergence is named inside the function."""
    g, sym = fn.graph, fn.global_symbol
    (node,) = g.nodes
    out = g.tensors[node.outputs[0]]
    proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
    source = "\n".join([
        *ctx.weights_includes, f'#include "{sym}.h"', "",
        f"{proto} {{",
        "    const float *x = (const float *)inputs[0]->data;",
        "    float *y = (float *)outputs[0]->data;",
        "    long i;",
        "    (void)workspace;",
        f"    for (i = 0; i < {out.size}; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.1f * x[i];",
        "    " + ctx.tap(node, out, "y"),
        "    return 0;",
        "}", ""])
    header = f'#include <stdint.h>\n#include "dltensor.h"\n{proto};\n'
    return Artifact(files={f"{sym}.c": source, f"{sym}.h": header}, sources=[f"{sym}.c"], header=f"{sym}.h")


FAULTY = Vendor("faulty", checkers={"Relu": lambda n, g: ACCEPT}, codegen=_faulty_codegen)


# --- host: clean, then an error inside a vendor function, then one in a host node -----------------

@pytest.mark.full
def test_clean_model_then_injected_errors_are_named(tmp_path, capsys):
    src, out = tmp_path / "lenet.onnx", tmp_path / "out"
    onnx.save(zoo.lenet(), src)
    rc, _, err = aotc(capsys, src, "-o", out, "--vendor", "cref", "--no-configure")
    assert rc == 0, err
    before = snapshot(out / "bundle")

    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 0, stdout + err
    rows = table_rows(stdout)
    # host nodes (a fused Conv+Relu shows both ONNX nodes), the nodes inside the cref function, its call
    assert list(rows) == ["conv3", "maxpool5", "conv8", "maxpool10", "flatten11", "lenet_cref_0/relu15",
                          "lenet_cref_0/relu19", "lenet_cref_0/gemm22", "lenet_cref_0"], stdout
    assert "conv3,relu4" in rows["conv3"] and "cref.dense_relu" in rows["lenet_cref_0/relu19"]
    assert all(line.rstrip().endswith("ok") for line in rows.values()), stdout
    assert "aotc: no divergence: 9 tensors within tolerance" in stdout
    assert snapshot(out / "bundle") == before  # the bundle under test is never touched
    assert (out / "compare" / "taps.npz").is_file() and (out / "compare" / "reference.npz").is_file()

    # the second dense layer of the cref function forgets its ReLU
    vendor_c = out / "bundle" / "vendor" / "cref" / "lenet_cref_0.c"
    text, n = re.subn(r"(p_relu19 = \{.*)\.relu = 1", r"\1.relu = 0", vendor_c.read_text())
    assert n == 1
    vendor_c.write_text(text)
    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 1, stdout + err
    rows = table_rows(stdout)
    assert rows["lenet_cref_0/relu15"].rstrip().endswith("ok")
    assert rows["lenet_cref_0/relu19"].rstrip().endswith("DIVERGES  <- first"), stdout
    assert ("aotc: first divergence: node 'relu19' (cref.dense_relu) inside function lenet_cref_0 [cref], "
            "ONNX nodes gemm18, relu19: tensor 'relu19_out'") in stdout

    # and a host node's bias goes wrong (an earlier node: it is now the first divergence)
    model_c = out / "bundle" / "src" / "lenet.c"
    text = model_c.read_text()
    bias = re.search(r"aotc_conv\w*\(&p_conv8, [^,]+, [^,]+, (\w+),", text).group(1)
    text, n = re.subn(rf"(static const float {bias}\[16\][^{{]*\{{\s*)[^,]+,", r"\g<1>0x1p+4f,", text)
    assert n == 1
    model_c.write_text(text)
    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 1, stdout + err
    assert "aotc: first divergence: node 'conv8' (FusedConv) [host], ONNX nodes conv8, relu9: tensor 'relu9_out'" \
        in stdout
    assert table_rows(stdout)["maxpool5"].rstrip().endswith("ok")


# --- a Cortex-M board under qemu: the tensors come back through semihosting ----------------------

@pytest.mark.full
def test_faulty_vendor_node_is_named_on_cortex_m_under_qemu(tmp_path, capsys):
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    src, out = tmp_path / "mlp.onnx", tmp_path / "out"
    model = zoo.mlp()
    onnx.save(model, src)
    compile_model(model, Options(name="mlp", target="mps2-an386", vendors=(FAULTY,)), source=str(src)).write(
        out / "bundle")
    np.savez(tmp_path / "in.npz", **zoo.random_inputs(model))
    rc, stdout, err = aotc(capsys, "compare", src, out, "--inputs", tmp_path / "in.npz")
    assert rc == 1, stdout + err
    rows = table_rows(stdout)
    assert list(rows)[:3] == ["gemm3", "mlp_faulty_0/relu4", "mlp_faulty_0"], stdout
    assert rows["gemm3"].rstrip().endswith("ok")
    assert ("aotc: first divergence: node 'relu4' (Relu) inside function mlp_faulty_0 [faulty], ONNX nodes relu4: "
            "tensor 'relu4_out' float32") in stdout
    assert (out / "compare" / "runner.elf").is_file()


# --- dtype-generic: integer tensors in LSB -----------------------------------------------------

def int_model() -> onnx.ModelProto:
    """float -> x10 -> int8 -> transposed -> int32 -> float: integer tensors between float ones."""
    nodes = [helper.make_node("Mul", ["x", "ten"], ["scaled"], name="scale"),
             helper.make_node("Cast", ["scaled"], ["q"], name="quantize", to=TensorProto.INT8),
             helper.make_node("Transpose", ["q"], ["qt"], name="transpose", perm=[1, 0]),
             helper.make_node("Cast", ["qt"], ["wide"], name="widen", to=TensorProto.INT32),
             helper.make_node("Cast", ["wide"], ["y"], name="back", to=TensorProto.FLOAT)]
    g = helper.make_graph(nodes, "ints", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 2])],
                          [numpy_helper.from_array(np.array(10.0, np.float32), "ten")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_integer_tensors_are_compared_in_lsb(tmp_path, capsys):
    src, out = tmp_path / "ints.onnx", tmp_path / "out"
    onnx.save(int_model(), src)
    rc, _, err = aotc(capsys, src, "-o", out, "--no-configure")
    assert rc == 0, err
    rc, stdout, err = aotc(capsys, "compare", out)  # seeded random float inputs
    assert rc == 0, stdout + err
    rows = table_rows(stdout)
    assert "int8" in rows["quantize"] and "0 LSB" in rows["quantize"] and "100.0% eq" in rows["quantize"]
    assert "int32" in rows["widen"] and "0 LSB" in rows["widen"]
    assert "float32" in rows["back"]


def test_measures_and_verdicts():
    """The table's arithmetic, without a build: floats against max(1, max |ref|), small integers
    within --lsb, int64 and bool exact, NaN where the reference has a number diverges."""
    f = np.array([[0.5, -2.0]], np.float32)
    taps = [Tap("a", "fa", f + 1e-6), Tap("b", "i8", np.array([3, 4], np.int8)),
            Tap("c", "i8b", np.array([3, 6], np.int8)), Tap("d", "idx", np.array([1, 2], np.int64)),
            Tap("e", "nan", np.array([np.nan, 1], np.float32)), Tap("f", "mine_only", f),
            Tap("sym/g", "fb", f * 3)]
    refs = {"fa": f, "i8": np.array([3, 5], np.int8), "i8b": np.array([3, 4], np.int8),
            "idx": np.array([1, 3], np.int64), "nan": np.array([0, 1], np.float32), "fb": f}
    meta = {"source_map": [{"node": n, "op": "Op", "onnx_nodes": [n]} for n in "abcdef"],
            "partition": [{"symbol": "sym", "compiler": "v", "taps": [{"node": "g", "op": "v.fused",
                                                                         "onnx_nodes": ["g1", "g2"]}]}]}
    rows = compare_taps(taps, refs, meta)
    assert [r.status for r in rows] == ["ok", "ok", "diverges", "diverges", "diverges", "no reference", "diverges"]
    assert rows[1].lsb == 1 and rows[1].equal == 0.5 and rows[2].lsb == 2
    assert rows[0].max_abs == pytest.approx(1e-6, rel=0.1) and rows[0].rel == pytest.approx(1e-6 / 2, rel=0.1)
    assert rows[4].max_abs == np.inf
    assert "first divergence: node 'c' (Op) [host], ONNX nodes c: tensor 'i8b' int8: 2 LSB apart > 1" \
        in verdict(rows)
    table = format_table(rows)
    assert "DIVERGES  <- first" in table.splitlines()[4] and table.count("<- first") == 1
    inner = compare_taps(taps[-1:], refs, meta)
    assert verdict(inner).startswith("aotc: first divergence: node 'g' (v.fused) inside function sym [v], "
                                     "ONNX nodes g1, g2")
    assert verdict(compare_taps(taps[:2], refs, meta)) == ("aotc: no divergence: 2 tensors within tolerance; "
                                                           "1 integer tensor differs by up to 1 LSB (1 element)")
    assert verdict(compare_taps(taps[:1], refs, meta)) == "aotc: no divergence: 1 tensors within tolerance"


def test_tap_file_is_read_back(tmp_path):
    def record(node: str, tensor: str, type_: str, data: bytes) -> bytes:
        return b"\0".join(s.encode() for s in (node, tensor, type_)) + b"\0" + len(data).to_bytes(8, "little") + data

    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    path = tmp_path / "taps.bin"
    path.write_bytes(TAP_MAGIC + record("n", "t/1", "int8[2,3]", x.tobytes()) + record("s", "c", "float32[]",
                                                                                       b"\0\0\x80\x3f"))
    (a, b) = read_taps(path)
    assert (a.node, a.tensor) == ("n", "t/1") and np.array_equal(a.data, x)
    assert b.data.shape == () and b.data == 1.0
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(AotcError, match="truncated"):
        read_taps(path)


def test_bad_input_is_refused_with_exit_2(tmp_path, capsys):
    rc, _, err = aotc(capsys, "compare", tmp_path)
    assert rc == 2 and err.startswith("aotc: error: ") and "no aotc bundle" in err
    src, out = tmp_path / "ints.onnx", tmp_path / "out"
    onnx.save(int_model(), src)
    assert aotc(capsys, src, "-o", out, "--no-configure")[0] == 0
    np.savez(tmp_path / "in.npz", x=np.zeros((3, 3), np.float32))
    rc, _, err = aotc(capsys, "compare", out, "--inputs", tmp_path / "in.npz")
    assert rc == 2 and "'x'" in err and "shape" in err
    rc, _, err = aotc(capsys, "compare", tmp_path / "missing.onnx", out)
    assert rc == 2 and "missing.onnx" in err
    assert not (out / "compare").exists()


@pytest.mark.parametrize("dtype,zero_point", [("int8", -3), ("uint8", 128)])
@pytest.mark.parametrize("scale", [0.0377291963, 0.003921568859, 0.5, 1.7e-5])
def test_quantized_io_meets_the_float_model_exactly(dtype, zero_point, scale):
    """--quantized-io bundles against the float ONNX model (aot/npz.py): every integer, dequantized and
    fed to the model's QuantizeLinear in onnxruntime, comes back itself; and onnxruntime's
    DequantizeLinear output quantizes back to the integers it read."""
    import onnxruntime as ort

    from aot.npz import bundle_outputs, onnx_feeds

    info = np.iinfo(dtype)
    q = np.arange(info.min, info.max + 1).astype(dtype).reshape(1, -1)
    s = numpy_helper.from_array(np.array(scale, np.float32), "s")
    z = numpy_helper.from_array(np.array(zero_point, dtype), "z")
    elem = TensorProto.INT8 if dtype == "int8" else TensorProto.UINT8
    g = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                           helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])], "qdq",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(q.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("q", elem, None)], [s, z])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    spec = {"name": "x", "dtype": dtype, "shape": list(q.shape), "scale": float(np.float32(scale)),
            "zero_point": zero_point}
    meta = {"inputs": [spec], "outputs": [{**spec, "name": "y"}]}
    feeds = onnx_feeds(meta, [q], {"x"})
    assert feeds["x"].dtype == np.float32
    y, q_back = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_array_equal(q_back, q)
    got = bundle_outputs(meta, {"y": y})["y"]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, q)
    assert onnx_feeds(meta, [q], set())["x"] is q  # the model's input is integer: fed as it is


@pytest.mark.parametrize("dtype", [TensorProto.BFLOAT16, TensorProto.FLOAT8E4M3FN, TensorProto.INT4])
def test_narrow_typed_inputs_get_seeded_values(tmp_path, capsys, dtype):
    """A bundle whose input is bfloat16 or float8 (ml_dtypes' types) is compared on seeded inputs of that
    type, fed to onnxruntime as OrtValues (issue 48: this was an internal error); int4, which
    onnxruntime's Python API cannot take, is refused in one line."""
    nodes = [helper.make_node("Cast", ["x"], ["wide"], name="widen", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["wide", "two"], ["y"], name="double")]
    g = helper.make_graph(nodes, "narrow", [helper.make_tensor_value_info("x", dtype, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    src, out = tmp_path / "narrow.onnx", tmp_path / "out"
    onnx.save(m, src)
    rc, _, err = aotc(capsys, src, "-o", out, "--no-configure")
    assert rc == 0, err
    rc, stdout, err = aotc(capsys, "compare", out)
    if dtype == TensorProto.INT4:
        assert rc == 2 and "takes no int4 inputs" in err and "internal error" not in err, err
        return
    assert rc == 0, stdout + err
    assert "no divergence" in stdout, stdout
