"""Small transformer blocks built with onnx.helper, as torch's exporters write them (no torch needed).

    python examples/transformers.py encoder_block -o encoder_block.onnx    # one model
    python examples/transformers.py --all -o tests/models/                  # the committed test models

encoder_block: a ViT-style pre-norm encoder block on a [1, 16, 64] sequence: LayerNormalization,
four-head self-attention (MatMul + Add projections, Reshape / Transpose to heads, Q K^T scaled,
Softmax on the last axis, the heads merged back), a residual Add, LayerNormalization, a Gelu MLP
(64 -> 128 -> 64) and a residual Add. Opset 20, as the dynamo exporter writes it
(`style="dynamo"`). `style="torchscript"` writes the same block as the TorchScript exporter does
below opset 17: LayerNorm as ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul / Add and
Gelu as Div / Erf / Add / Mul / Mul, scalars as Constant nodes (opset 14).

Weights are random (seeded, scaled by 1 / sqrt(fan-in)) so activations stay O(1).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = {"dynamo": 20, "torchscript": 14}


class Block:
    """Appends nodes with readable, exporter-like names (/attn/q_proj/MatMul)."""

    def __init__(self, style: str, seed: int = 0):
        self.style = style
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def op(self, op: str, inputs: list[str], name: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, inputs, [name + "_output_0"], name=name, **attrs))
        return name + "_output_0"

    def init(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def scalar(self, name: str, value: float) -> str:
        """A scalar: an initializer (dynamo) or a Constant node (TorchScript)."""
        if self.style == "dynamo":
            return self.init(name, np.array(value, np.float32))
        self.nodes.append(helper.make_node("Constant", [], [name], name=name,
                                           value=numpy_helper.from_array(np.array(value, np.float32))))
        return name

    def linear(self, x: str, name: str, n_in: int, n_out: int) -> str:
        w = self.init(f"{name}.weight", (self.rng.standard_normal((n_in, n_out)) / math.sqrt(n_in)).astype(np.float32))
        b = self.init(f"{name}.bias", (0.1 * self.rng.standard_normal(n_out)).astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w], f"/{name}/MatMul"), b], f"/{name}/Add")

    def layer_norm(self, x: str, name: str, d: int) -> str:
        w = self.init(f"{name}.weight", (1.0 + 0.1 * self.rng.standard_normal(d)).astype(np.float32))
        b = self.init(f"{name}.bias", (0.1 * self.rng.standard_normal(d)).astype(np.float32))
        if self.style == "dynamo":
            return self.op("LayerNormalization", [x, w, b], f"/{name}/LayerNormalization", axis=-1, epsilon=1e-5)
        mean = self.op("ReduceMean", [x], f"/{name}/ReduceMean", axes=[-1], keepdims=1)
        centred = self.op("Sub", [x, mean], f"/{name}/Sub")
        sq = self.op("Pow", [centred, self.scalar(f"/{name}/Constant_output_0", 2.0)], f"/{name}/Pow")
        var = self.op("ReduceMean", [sq], f"/{name}/ReduceMean_1", axes=[-1], keepdims=1)
        std = self.op("Sqrt", [self.op("Add", [var, self.scalar(f"/{name}/Constant_1_output_0", 1e-5)],
                                       f"/{name}/Add")], f"/{name}/Sqrt")
        normed = self.op("Div", [centred, std], f"/{name}/Div")
        return self.op("Add", [self.op("Mul", [normed, w], f"/{name}/Mul"), b], f"/{name}/Add_1")

    def gelu(self, x: str, name: str) -> str:
        if self.style == "dynamo":
            return self.op("Gelu", [x], f"/{name}/Gelu", approximate="none")
        e = self.op("Erf", [self.op("Div", [x, self.scalar(f"/{name}/Constant_output_0", 1.4142135381698608)],
                                    f"/{name}/Div")], f"/{name}/Erf")
        plus1 = self.op("Add", [e, self.scalar(f"/{name}/Constant_1_output_0", 1.0)], f"/{name}/Add")
        return self.op("Mul", [self.op("Mul", [x, plus1], f"/{name}/Mul"),
                               self.scalar(f"/{name}/Constant_2_output_0", 0.5)], f"/{name}/Mul_1")


def encoder_block(style: str = "dynamo", seq: int = 16, d: int = 64, heads: int = 4, ff: int = 128,
                  seed: int = 0) -> onnx.ModelProto:
    """One pre-norm encoder block: x + attn(LN(x)), then + mlp(LN(.)); input 'x' [1, seq, d]."""
    b = Block(style, seed)
    dh = d // heads
    to_heads = b.init("/attn/shape_heads", np.array([1, seq, heads, dh], np.int64))
    to_seq = b.init("/attn/shape_seq", np.array([1, seq, d], np.int64))
    h = b.layer_norm("x", "norm1", d)
    q = b.op("Transpose", [b.op("Reshape", [b.linear(h, "attn/q_proj", d, d), to_heads], "/attn/Reshape")],
             "/attn/Transpose", perm=[0, 2, 1, 3])
    k = b.op("Transpose", [b.op("Reshape", [b.linear(h, "attn/k_proj", d, d), to_heads], "/attn/Reshape_1")],
             "/attn/Transpose_1", perm=[0, 2, 3, 1])
    v = b.op("Transpose", [b.op("Reshape", [b.linear(h, "attn/v_proj", d, d), to_heads], "/attn/Reshape_2")],
             "/attn/Transpose_2", perm=[0, 2, 1, 3])
    scores = b.op("MatMul", [q, k], "/attn/MatMul")
    if style == "dynamo":
        scores = b.op("Mul", [scores, b.scalar("/attn/scale", 1.0 / math.sqrt(dh))], "/attn/Mul")
    else:
        scores = b.op("Div", [scores, b.scalar("/attn/Constant_output_0", math.sqrt(dh))], "/attn/Div")
    probs = b.op("Softmax", [scores], "/attn/Softmax", axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, v], "/attn/MatMul_1")], "/attn/Transpose_3", perm=[0, 2, 1, 3])
    attn = b.linear(b.op("Reshape", [ctx, to_seq], "/attn/Reshape_3"), "attn/out_proj", d, d)
    x1 = b.op("Add", ["x", attn], "/Add")
    hidden = b.gelu(b.linear(b.layer_norm(x1, "norm2", d), "mlp/fc1", d, ff), "mlp/act")
    y = b.op("Add", [x1, b.linear(hidden, "mlp/fc2", ff, d)], "/Add_1")
    b.nodes[-1].output[0] = "y"
    del y
    graph = helper.make_graph(b.nodes, f"encoder_block_{style}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, d])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET[style])],
                              producer_name="aotc examples/transformers.py")
    model.ir_version = 8 if OPSET[style] < 19 else 10  # what onnxruntime reads for these opsets
    onnx.checker.check_model(model)
    return model


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "encoder_block": encoder_block,
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", choices=sorted(MODELS))
    p.add_argument("--all", action="store_true", help="write every model into the -o directory")
    p.add_argument("--style", choices=sorted(OPSET), default="dynamo")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    if args.all:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        for name, build in MODELS.items():
            onnx.save(build(), out / f"{name}.onnx")
            print(f"wrote {out / f'{name}.onnx'}")
    elif args.model:
        onnx.save(MODELS[args.model](style=args.style), args.output)
        print(f"wrote {args.output}")
    else:
        p.error("name a model or give --all")


if __name__ == "__main__":
    main()
