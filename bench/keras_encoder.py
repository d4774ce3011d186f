"""Issue 64: a 4-layer Keras MultiHeadAttention encoder as tf2onnx writes it, built with onnx.helper (no
TensorFlow needed), then compiled for the host and timed by `aotc bench` against onnxruntime (one thread,
medians of rounds that time both back to back).

The graph follows tf2onnx's output for keras.layers.MultiHeadAttention + a GELU feed-forward block,
post-norm (opset 17, so Keras's LayerNormalization is one LayerNormalization node):

    q, k, v   = MatMul(x, W) + b, Reshape [1, S, H, Dh]     (EinsumDense "abc,cde->abde", einsum optimised)
    q         = q * 1/sqrt(Dh)
    scores    = MatMul(Transpose(q, 0213), Transpose(k, 0231))
    probs     = Softmax(scores, axis=-1)
    context   = Transpose(MatMul(probs, Transpose(v, 0213)), 0213), Reshape [1, S, D]
    x         = LayerNormalization(x + MatMul(context, Wo) + bo)
    h         = MatMul(x, W1) + b1
    h         = 0.5 * h * (1 + Tanh(0.7978845608 * (h + 0.044715 * Pow(h, 3.0))))   (tf.nn.gelu, approximate)
    x         = LayerNormalization(x + MatMul(h, W2) + b2)

    python bench/keras_encoder.py [WORK_DIR] [--rounds 5] [--layers 4] [--no-bench]

The model (about 13 MB of weights) is written to WORK_DIR, not committed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEQ, D, HEADS, FFN = 128, 256, 4, 1024


class _Graph:
    """Nodes and initializers with generated names, tf2onnx-like (one name per op)."""

    def __init__(self, seed: int) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}:{self.count}"

    def const(self, hint: str, value: np.ndarray) -> str:
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, hint: str, shape: tuple[int, ...], scale: float) -> str:
        return self.const(hint, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def op(self, op: str, inputs: list[str], hint: str, **attrs: object) -> str:
        out = self.name(hint)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out.replace(":", "_"), **attrs))
        return out


def _dense(g: _Graph, x: str, n_in: int, n_out: int, hint: str) -> str:
    w = g.weight(f"{hint}/kernel", (n_in, n_out), 1.0 / np.sqrt(n_in))
    b = g.weight(f"{hint}/bias", (n_out,), 0.02)
    return g.op("Add", [g.op("MatMul", [x, w], f"{hint}/MatMul"), b], f"{hint}/BiasAdd")


def _layer_norm(g: _Graph, x: str, hint: str) -> str:
    gamma = g.const(f"{hint}/gamma", (1.0 + 0.1 * g.rng.standard_normal(D)).astype(np.float32))
    beta = g.weight(f"{hint}/beta", (D,), 0.05)
    return g.op("LayerNormalization", [x, gamma, beta], f"{hint}/LayerNorm", axis=-1, epsilon=1e-3)


def _gelu_tanh(g: _Graph, h: str, hint: str) -> str:
    """tf.nn.gelu(approximate=True) as tf2onnx writes it: Pow with a float 3.0 exponent."""
    f32 = np.float32
    cube = g.op("Pow", [h, g.const(f"{hint}/Pow/y", f32(3.0))], f"{hint}/Pow")
    inner = g.op("Add", [h, g.op("Mul", [g.const(f"{hint}/mul/x", f32(0.044715)), cube], f"{hint}/mul")],
                 f"{hint}/add")
    t = g.op("Tanh", [g.op("Mul", [g.const(f"{hint}/mul_1/x", f32(0.7978845608028654)), inner], f"{hint}/mul_1")],
             f"{hint}/Tanh")
    one_plus = g.op("Add", [g.const(f"{hint}/add_1/x", f32(1.0)), t], f"{hint}/add_1")
    half_x = g.op("Mul", [g.const(f"{hint}/mul_2/x", f32(0.5)), h], f"{hint}/mul_2")
    return g.op("Mul", [half_x, one_plus], f"{hint}/mul_3")


def _attention(g: _Graph, x: str, hint: str) -> str:
    dh = D // HEADS
    heads = g.const(f"{hint}/heads_shape", np.array([1, SEQ, HEADS, dh], np.int64))
    flat = g.const(f"{hint}/flat_shape", np.array([1, SEQ, D], np.int64))

    def project(what: str) -> str:
        return g.op("Reshape", [_dense(g, x, D, D, f"{hint}/{what}"), heads], f"{hint}/{what}/Reshape")

    q = g.op("Mul", [project("query"), g.const(f"{hint}/Mul/y", np.float32(1.0 / np.sqrt(dh)))], f"{hint}/Mul")
    k, v = project("key"), project("value")
    qt = g.op("Transpose", [q], f"{hint}/einsum/Transpose", perm=[0, 2, 1, 3])
    kt = g.op("Transpose", [k], f"{hint}/einsum/Transpose_1", perm=[0, 2, 3, 1])
    scores = g.op("MatMul", [qt, kt], f"{hint}/einsum/MatMul")
    probs = g.op("Softmax", [scores], f"{hint}/softmax/Softmax", axis=-1)
    vt = g.op("Transpose", [v], f"{hint}/einsum_1/Transpose", perm=[0, 2, 1, 3])
    ctx = g.op("Transpose", [g.op("MatMul", [probs, vt], f"{hint}/einsum_1/MatMul")], f"{hint}/einsum_1/Transpose_1",
               perm=[0, 2, 1, 3])
    return _dense(g, g.op("Reshape", [ctx, flat], f"{hint}/Reshape"), D, D, f"{hint}/attention_output")


def encoder(layers: int = 4, seed: int = 64) -> onnx.ModelProto:
    g = _Graph(seed)
    x = "input_1"
    for i in range(layers):
        hint = f"model/encoder_{i}"
        x = _layer_norm(g, g.op("Add", [x, _attention(g, x, f"{hint}/mha")], f"{hint}/add"), f"{hint}/ln_1")
        h = _gelu_tanh(g, _dense(g, x, D, FFN, f"{hint}/dense"), f"{hint}/gelu")
        x = _layer_norm(g, g.op("Add", [x, _dense(g, h, FFN, D, f"{hint}/dense_1")], f"{hint}/add_1"), f"{hint}/ln_2")
    g.nodes.append(helper.make_node("Identity", [x], ["output_1"], name="Identity"))
    graph = helper.make_graph(g.nodes, "keras_encoder",
                              [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, [1, SEQ, D])],
                              [helper.make_tensor_value_info("output_1", TensorProto.FLOAT, [1, SEQ, D])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tf2onnx")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default="/tmp/aotc_keras_encoder")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--no-bench", action="store_true", help="only write the model and its inputs")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    model_path, inputs = work / "keras_encoder.onnx", work / "keras_encoder_in.npz"
    onnx.save(encoder(args.layers), str(model_path))
    np.savez(inputs, input_1=np.random.default_rng(0).standard_normal((1, SEQ, D)).astype(np.float32))
    if args.no_bench:
        return
    out = work / "keras_encoder_host"
    aotc = [sys.executable, "-m", "aot.cli"]
    subprocess.run([*aotc, str(model_path), "-o", str(out)], check=True)
    subprocess.run([*aotc, "bench", str(out), "--inputs", str(inputs), "--rounds", str(args.rounds)], check=True)


if __name__ == "__main__":
    main()
