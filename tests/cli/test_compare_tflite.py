"""aotc compare on a bundle compiled from a .tflite file: the debug variant's tensors against LiteRT's, the
interpreter keeping every tensor, matched by the TFLite frontend's tensor names (aot/refs/litert.py); against
its reference kernels by default, bit for bit, or its optimised kernels (--reference-kernels); on the host and
on a Cortex-M board under qemu. Needs ai-edge-litert (the `test` extra)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool

from aot.cli import main
from aot.frontend.tflite.builder import NCHW, NHWC, tensor_of, unique_names

MODELS = Path(__file__).resolve().parents[1] / "models" / "tflite"


def aotc(capsys, *args: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def table_rows(stdout: str) -> dict[str, str]:
    """node -> its line of the table."""
    lines = stdout.splitlines()
    return {line.split()[1]: line for line in lines[2:] if line[:1].strip() and line.split()[0].isdigit()}


def require_litert() -> None:
    """Skip without ai-edge-litert on a developer machine; fail in CI, which installs the test extra."""
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("ai-edge-litert is not installed (the test extra)")
        pytest.skip("ai-edge-litert is not installed")


def compiled(tmp_path: Path, capsys, model: str, *options: str) -> Path:
    require_litert()
    out = tmp_path / "out"
    rc, _, err = aotc(capsys, MODELS / model, "-o", out, "--no-configure", *options)
    assert rc == 0, err
    return out


def test_int8_tflite_is_bit_exact_then_a_wrong_bias_is_named(tmp_path, capsys):
    """sine_int8 (three FULLY_CONNECTED) against LiteRT's reference kernels: every tensor equal. Then the
    second layer's biases go wrong in the bundle's C: that layer is the first divergence, named with its TFLite
    op and tensor, the layer before it still equal."""
    out = compiled(tmp_path, capsys, "sine_int8.tflite")
    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 0, stdout + err
    rows = table_rows(stdout)
    assert list(rows) == ["FULLY_CONNECTED_0", "FULLY_CONNECTED_1", "FULLY_CONNECTED_2"], stdout
    assert "TFLite ops" in stdout.splitlines()[0]
    assert all(re.search(r"int8 +0 LSB +100\.0% eq +ok$", line) for line in rows.values()), stdout
    assert "aotc: no divergence: 3 tensors within tolerance\n" in stdout

    model_c = out / "bundle" / "src" / "sine_int8.c"
    text, n = re.subn(r"(w_FULLY_CONNECTED_1_bias\[16\][^{]*\{)([^}]*)\}",
                      lambda m: m[1] + ", ".join(["100000"] * 16) + "}", model_c.read_text())
    assert n == 1
    model_c.write_text(text)
    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 1, stdout + err
    rows = table_rows(stdout)
    assert rows["FULLY_CONNECTED_0"].endswith("ok")
    assert rows["FULLY_CONNECTED_1"].endswith("DIVERGES  <- first"), stdout
    assert re.search(r"aotc: first divergence: node 'FULLY_CONNECTED_1' \(TflFullyConnected\) \[host\], TFLite ops "
                     r"FULLY_CONNECTED_1: tensor 'sequential_1/dense_1_2/MatMul;[^']*' \(TFLite tensor \d+\) int8: "
                     r"\d+ LSB apart > 0", stdout), stdout


def test_tensor_names_map_back_to_tflite_tensors():
    """The names the TFLite frontend gives values (builder.py) lead back to the tensor and its layout."""
    names = unique_names(["x", "conv", "x", "x_1", "a_nchw"], set())
    assert names == ["x", "conv", "x_1", "x_1_1", "a_nchw"]
    index = {n: k for k, n in enumerate(names)}
    assert tensor_of("conv", index) == (1, NHWC)
    assert tensor_of("conv_nchw", index) == (1, NCHW) and tensor_of("conv_nchw_2", index) == (1, NCHW)
    assert tensor_of("x_1_nhwc", index) == (2, "nhwc")
    assert tensor_of("a_nchw", index) == (4, NHWC)  # a tensor's own name first
    assert tensor_of("CONV_2D_0_out", index) is None and tensor_of("b_nchw", index) is None


def test_refusals_are_one_line(tmp_path, capsys):
    """--reference-kernels on an ONNX bundle; a state given to LiteRT, which keeps it inside; a custom op LiteRT
    has no kernel for; a builtin its reference resolver lacks: one line each, exit 2, before anything is built."""
    import onnx
    import zoo

    src = tmp_path / "mlp.onnx"
    onnx.save(zoo.mlp(), src)
    assert aotc(capsys, src, "-o", tmp_path / "onnx_out", "--no-configure")[0] == 0
    rc, _, err = aotc(capsys, "compare", tmp_path / "onnx_out", "--reference-kernels", "ref")
    assert rc == 2 and err.count("\n") == 1 and "--reference-kernels chooses LiteRT's kernels" in err, err

    out = compiled(tmp_path, capsys, "svdf_int8.tflite")
    np.savez(tmp_path / "in.npz", t0=np.zeros((1, 12), np.int8), t5_state=np.ones((1, 40), np.int16))
    rc, _, err = aotc(capsys, "compare", out, "--inputs", tmp_path / "in.npz")
    assert rc == 2 and err.count("\n") == 1 and "'t5_state'" in err and "keeps inside" in err, err
    assert not (out / "compare").exists()

    out = compiled(tmp_path / "fft", capsys, "tflm_fft.tflite")  # TFLM's signal ops: LiteRT has no kernels
    rc, _, err = aotc(capsys, "compare", out)
    assert rc == 2 and err == ("aotc: error: LiteRT has no kernel for the custom op SignalRfft, which "
                               "'tflm_fft.tflite' uses: there is no LiteRT reference for this model\n"), err
    assert not (out / "compare").exists()  # refused before the debug variant is built

    from aot.refs.litert import LiteRT

    failed = subprocess.CompletedProcess([], 3, "", "INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n"
                                         "ValueError: Didn't find op for builtin opcode 'ROUND' version '1'. An older "
                                         "version of this builtin might be supported.\n")
    assert LiteRT(MODELS / "sine_int8.tflite")._failure(failed) == (
        "LiteRT's reference kernels have no kernel for ROUND (version 1), which 'sine_int8.tflite' uses: compare "
        "with --reference-kernels builtin")


@pytest.mark.full
def test_float_tflite_within_tolerance_nchw_tensors_transposed_back(tmp_path, capsys):
    """keyword_float: the float convs compute in NCHW (tensors <name>_nchw), LiteRT's tensors are NHWC,
    transposed to meet them; the Flatten the frontend adds before FULLY_CONNECTED has no TFLite tensor."""
    out = compiled(tmp_path, capsys, "keyword_float.tflite")
    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 0, stdout + err
    rows = table_rows(stdout)
    assert "_nchw" in rows["CONV_2D_0"] and rows["CONV_2D_0"].endswith("ok")
    assert rows["FULLY_CONNECTED_6_flat"].endswith("no reference")
    assert sum(line.endswith(" ok") for line in rows.values()) == 9, stdout
    assert "aotc: no divergence: 9 tensors within tolerance (1 without a counterpart in LiteRT's reference " \
           "kernels)" in stdout


@pytest.mark.full
def test_optimised_kernels_differ_by_an_lsb_where_they_round_otherwise(tmp_path, capsys):
    """keyword_int8 (DS-CNN): equal to the reference kernels; LiteRT's optimised FULLY_CONNECTED rounds twice
    (its reference once) and XNNPACK's convolutions round otherwise: the first tensor 1 LSB apart is named."""
    out = compiled(tmp_path, capsys, "keyword_int8.tflite")
    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 0 and "aotc: no divergence: 8 tensors within tolerance\n" in stdout, stdout + err
    rc, stdout, err = aotc(capsys, "compare", out, "--reference-kernels", "builtin")
    assert rc == 1, stdout + err
    assert "first divergence: node 'FULLY_CONNECTED_6' (TflFullyConnected) [host], TFLite ops FULLY_CONNECTED_6" \
        in stdout and "1 LSB apart > 0" in stdout, stdout
    assert all(table_rows(stdout)[n].endswith("ok") for n in ("CONV_2D_0", "AVERAGE_POOL_2D_5", "SOFTMAX_7"))
    rc, stdout, err = aotc(capsys, "compare", out, "--reference-kernels", "default")
    assert rc == 1, stdout + err
    first = next(line for line in table_rows(stdout).values() if "<- first" in line)
    assert re.search(r"int8 +1 LSB +\d+\.\d% eq +DIVERGES", first) and "1 LSB apart > 0" in stdout, stdout


@pytest.mark.full
def test_int8_tflite_on_cortex_m_under_qemu_is_bit_exact(tmp_path, capsys):
    """sine_int8 for mps2-an386 (the M4's DSP path for FULLY_CONNECTED, interleaved weights): the tensors come
    back through semihosting, every one equal to LiteRT's reference kernels'."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    out = compiled(tmp_path, capsys, "sine_int8.tflite", "--target", "mps2-an386")
    rc, stdout, err = aotc(capsys, "compare", out)
    assert rc == 0, stdout + err
    rows = table_rows(stdout)
    assert len(rows) == 3 and all(re.search(r"0 LSB +100\.0% eq +ok$", line) for line in rows.values()), stdout
    assert (out / "compare" / "runner.elf").is_file()
