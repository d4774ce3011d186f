"""Issue 64: an int8 Transformer encoder's ops in the shapes where the host's vector paths take them (AVX-512 VNNI
BATCH_MATMUL, the tabulated SOFTMAX exps, FULLY_CONNECTED's tiles of rows, SQUARED_DIFFERENCE's runs, the MEAN of
one channel), each with tails (rows, k and columns not multiples of the tiles'), bit-exact with LiteRT's reference
kernels (BUILTIN_REF); the host build runs under AddressSanitizer and UndefinedBehaviorSanitizer where the tier
builds them. Written with the schema, as test_tflite_int8_math.py's models."""

from __future__ import annotations

import numpy as np
import pytest
from test_tflite_int8_math import Written, _bmm, bit_exact_with_builtin_ref

ROWS, K, N, HEADS = 37, 22, 70, 3  # a head's rows (a tile of 4 or 6 and a part), k past a quad, columns past 64


def attention_model() -> tuple[bytes, list[np.ndarray]]:
    """Q K^T (and with K given by rows, adj_y), its softmax and P V per head; a dense layer over the rows; a layer
    norm's mean and squared difference over the last axis; a residual ADD. The inputs: q, k^T, v, x, k."""
    w, rng = Written(), np.random.default_rng(64)
    q = w.tensor([HEADS, ROWS, K], "int8", 0.05, -3)
    kt = w.tensor([HEADS, K, ROWS + 5], "int8", 0.04, 5)
    v = w.tensor([HEADS, ROWS + 5, N], "int8", 0.03, -7)
    x = w.tensor([1, ROWS, 83], "int8", 0.02, 4)
    kr = w.tensor([HEADS, ROWS + 5, K], "int8", 0.03, 2)  # K's rows: adj_y
    w.op("BATCH_MATMUL", [q, kt], ([HEADS, ROWS, ROWS + 5], "int8", 0.2, 1), _bmm())
    scores = w.outputs[-1]
    w.op("SOFTMAX", [scores], ([HEADS, ROWS, ROWS + 5], "int8", 1 / 256, -128), ("SoftmaxOptions", {"beta": 1.0}))
    probs = w.outputs[-1]
    w.op("BATCH_MATMUL", [probs, v], ([HEADS, ROWS, N], "int8", 0.02, -2), _bmm())
    w.op("BATCH_MATMUL", [q, kr], ([HEADS, ROWS, ROWS + 5], "int8", 0.15, 0), _bmm(adj_y=True))
    weights = w.tensor([N, 83], "int8", 0.01, 0, rng.integers(-127, 128, (N, 83)).astype(np.int8))
    bias = w.tensor([N], "int32", 0.02 * 0.01, 0, rng.integers(-3000, 3000, N).astype(np.int32))
    w.op("FULLY_CONNECTED", [x, weights, bias], ([1, ROWS, N], "int8", 0.1, -5),
         ("FullyConnectedOptions", {"keepNumDims": True}))
    dense = w.outputs[-1]
    axis = w.tensor([1], "int32", data=np.array([2], np.int32))
    w.op("MEAN", [dense, axis], ([1, ROWS, 1], "int8", 0.1, -5), ("ReducerOptions", {"keepDims": True}))
    mean = w.outputs[-1]
    w.op("SQUARED_DIFFERENCE", [dense, mean], ([1, ROWS, N], "int8", 0.05, -128))
    w.op("SQUARED_DIFFERENCE", [dense, dense], ([1, ROWS, N], "int8", 0.01, -100))
    w.op("ADD", [dense, dense], ([1, ROWS, N], "int8", 0.15, 3), ("AddOptions", {}))
    shapes = ([HEADS, ROWS, K], [HEADS, K, ROWS + 5], [HEADS, ROWS + 5, N], [1, ROWS, 83], [HEADS, ROWS + 5, K])
    feeds = [rng.integers(-128, 128, s).astype(np.int8) for s in shapes]
    return w.finish([q, kt, v, x, kr]), feeds


@pytest.mark.full
def test_attention_ops_bit_exact_with_builtin_ref(tmp_path):
    pytest.importorskip("ai_edge_litert")
    data, feeds = attention_model()
    bit_exact_with_builtin_ref(tmp_path, "attention_int8", data, feeds, sanitize=True)

def test_attention_ops_take_the_int8_kernels(tmp_path):
    """The model compiles for the host with each op on its int8 kernel (FULLY_CONNECTED on the packed one, whose
    tiles of rows the full tier's run checks), nothing dequantized to float."""
    import re

    from aot.compiler import Options, compile_file

    data, _ = attention_model()
    model = tmp_path / "attention_int8.tflite"
    model.write_bytes(data)
    c = compile_file(model, Options(name="att")).files["src/att.c"]
    assert set(re.findall(r"(aotc_\w+)\(", c)) >= {
        "aotc_tfl_batch_matmul_s8", "aotc_tfl_softmax_s8", "aotc_tfl_fc_s8_packed", "aotc_tfl_mean_s8",
        "aotc_tfl_squared_difference_s8", "aotc_tfl_add_s8"}, c
    assert "_f32(" not in c, c
