"""int8 SiLU as the TFLite converter writes it, LOGISTIC then MUL(x, gate), compiled as one 256-entry table
(aot/passes/fuse_activation.py, issue 64): outputs bit for bit LiteRT's reference kernels (BUILTIN_REF) over every
int8 input, in either operand order and with a fused RELU on the MUL; a gate that is also a graph output stays two
ops."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflite_written import Written, compare  # noqa: E402


@pytest.mark.full
def test_int8_silu_is_one_table_bit_exact(tmp_path):
    pytest.importorskip("ai_edge_litert")
    w = Written()
    shape = [2, 256]
    x = w.tensor(shape, "int8", quant=(0.1, 5))
    outs = []
    # (the MUL's output scale and zero, its fused activation, the gate first, the gate also a graph output)
    for y_q, act, gate_first, shared in (((0.05, -3), 0, False, False), ((0.03, 7), 1, True, False),
                                         ((0.06, 0), 0, False, True)):
        g = w.tensor(shape, "int8", quant=(1 / 256, -128))
        w.op("LOGISTIC", [x], [g])
        y = w.tensor(shape, "int8", quant=y_q)
        w.op("MUL", [g, x] if gate_first else [x, g], [y], ("MulOptions", {"fusedActivationFunction": act}))
        outs += [y, g] if shared else [y]
    model = w.save(tmp_path / "silu.tflite", [x], outs)
    every = np.arange(-128, 128, dtype=np.int8)
    compare(model, [np.stack([every, every[::-1]])])
    src = "".join(p.read_text() for p in (tmp_path / "silu_out" / "bundle" / "src").glob("*.c"))
    assert src.count("aotc_tfl_mul_s8(") == 1, "the first two MULs are tables; the shared gate's stays a MUL"
    assert src.count("aotc_tfl_lut_s8(") == 3


def test_int8_silu_compiles_to_one_table(tmp_path):
    """The fusion itself, without LiteRT or a C build: LOGISTIC then MUL(x, gate) becomes one TflLut whose table is
    the MUL's output by input byte (a gate that is a graph output stays two ops)."""
    from aot.compiler import Options, compile_file

    w = Written()
    x = w.tensor([1, 64], "int8", quant=(0.1, 5))
    outs = []
    for shared in (False, True):
        g = w.tensor([1, 64], "int8", quant=(1 / 256, -128))
        w.op("LOGISTIC", [x], [g])
        y = w.tensor([1, 64], "int8", quant=(0.05, -3))
        w.op("MUL", [x, g], [y], ("MulOptions", {"fusedActivationFunction": 0}))
        outs += [y, g] if shared else [y]
    model = w.save(tmp_path / "silu.tflite", [x], outs)
    src = "".join(v for k, v in compile_file(model, Options(name="silu")).files.items() if k.startswith("src/"))
    assert src.count("aotc_tfl_mul_s8(") == 1 and src.count("aotc_tfl_lut_s8(") == 2, src
