"""A ViT-tiny-like model (timm's vit_tiny_patch16_224, random weights) built with onnx.helper as torch.onnx.export
writes it at opset 17, for timing the float GEMM core end to end (issue 64) without torch:

- patch embedding: Conv 3 -> 192, 16 x 16 stride 16 on 224 x 224, flattened and transposed to 196 tokens;
  a class token concatenated in front and position embeddings added (197 tokens);
- 12 pre-norm blocks of d = 192: LayerNormalization (eps 1e-6), one qkv projection (MatMul + Add, 192 -> 576)
  reshaped to [1, 197, 3, 3, 64] and transposed to [3, 1, 3, 197, 64], q, k, v gathered from it, q k^T
  scaled (the SDPA export: both by sqrt(1 / sqrt(64))), Softmax, times v, heads merged, the output projection
  and a residual Add; LayerNormalization, a GELU MLP (192 -> 768 -> 192, GELU as Div / Erf / Add / Mul / Mul)
  and a residual Add;
- a last LayerNormalization, the class token gathered and a Gemm head (192 -> 1000).

    python bench/vit_tiny.py -o vit_tiny.onnx [--blocks 12]

then `aotc vit_tiny.onnx -o OUT` and `aotc bench OUT` (it times onnxruntime, one thread, in the same rounds).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from transformers import Block  # noqa: E402

D, HEADS, MLP, TOKENS, PATCH, IMAGE = 192, 3, 768, 197, 16, 224


class VitBlock(Block):
    """examples/transformers.py's builder, LayerNormalization with timm's eps and GELU as the export at opset 17."""

    def layer_norm(self, x: str, name: str, d: int) -> str:
        w = self.init(f"{name}.weight", (1.0 + 0.1 * self.rng.standard_normal(d)).astype(np.float32))
        b = self.init(f"{name}.bias", (0.1 * self.rng.standard_normal(d)).astype(np.float32))
        return self.op("LayerNormalization", [x, w, b], f"/{name}/LayerNormalization", axis=-1, epsilon=1e-6)

    def gelu(self, x: str, name: str) -> str:
        e = self.op("Erf", [self.op("Div", [x, self.init(f"/{name}/sqrt2", np.array(math.sqrt(2), np.float32))],
                                    f"/{name}/Div")], f"/{name}/Erf")
        plus1 = self.op("Add", [e, self.init(f"/{name}/one", np.array(1.0, np.float32))], f"/{name}/Add")
        return self.op("Mul", [self.op("Mul", [x, plus1], f"/{name}/Mul"),
                               self.init(f"/{name}/half", np.array(0.5, np.float32))], f"/{name}/Mul_1")


def attention(b: VitBlock, x: str, i: int) -> str:
    dh = D // HEADS
    qkv = b.linear(x, f"blocks.{i}/attn/qkv", D, 3 * D)
    qkv = b.op("Reshape", [qkv, b.init(f"/blocks.{i}/attn/shape5", np.array([1, TOKENS, 3, HEADS, dh], np.int64))],
               f"/blocks.{i}/attn/Reshape")
    qkv = b.op("Transpose", [qkv], f"/blocks.{i}/attn/Transpose", perm=[2, 0, 3, 1, 4])
    q, k, v = (b.op("Gather", [qkv, b.init(f"/blocks.{i}/attn/idx{j}", np.array(j, np.int64))],
                    f"/blocks.{i}/attn/Gather_{j}", axis=0) for j in range(3))
    root = b.init(f"/blocks.{i}/attn/sqrt_scale", np.array(math.sqrt(1 / math.sqrt(dh)), np.float32))
    kt = b.op("Transpose", [k], f"/blocks.{i}/attn/Transpose_1", perm=[0, 1, 3, 2])
    scores = b.op("MatMul", [b.op("Mul", [q, root], f"/blocks.{i}/attn/Mul"),
                             b.op("Mul", [kt, root], f"/blocks.{i}/attn/Mul_1")], f"/blocks.{i}/attn/MatMul")
    probs = b.op("Softmax", [scores], f"/blocks.{i}/attn/Softmax", axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, v], f"/blocks.{i}/attn/MatMul_1")],
               f"/blocks.{i}/attn/Transpose_2", perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, b.init(f"/blocks.{i}/attn/shape3", np.array([1, TOKENS, D], np.int64))],
               f"/blocks.{i}/attn/Reshape_1")
    return b.linear(ctx, f"blocks.{i}/attn/proj", D, D)


def vit_tiny(blocks: int = 12, seed: int = 0) -> onnx.ModelProto:
    b = VitBlock("dynamo", seed)
    w = b.init("patch_embed.proj.weight",
               (b.rng.standard_normal((D, 3, PATCH, PATCH)) / math.sqrt(3 * PATCH * PATCH)).astype(np.float32))
    bias = b.init("patch_embed.proj.bias", (0.1 * b.rng.standard_normal(D)).astype(np.float32))
    x = b.op("Conv", ["x", w, bias], "/patch_embed/proj/Conv", kernel_shape=[PATCH, PATCH], strides=[PATCH, PATCH])
    x = b.op("Reshape", [x, b.init("/patch_embed/shape", np.array([1, D, TOKENS - 1], np.int64))],
             "/patch_embed/Reshape")
    x = b.op("Transpose", [x], "/patch_embed/Transpose", perm=[0, 2, 1])
    cls = b.init("cls_token", (0.02 * b.rng.standard_normal((1, 1, D))).astype(np.float32))
    x = b.op("Concat", [cls, x], "/Concat", axis=1)
    x = b.op("Add", [x, b.init("pos_embed", (0.02 * b.rng.standard_normal((1, TOKENS, D))).astype(np.float32))],
             "/Add")
    for i in range(blocks):
        x = b.op("Add", [x, attention(b, b.layer_norm(x, f"blocks.{i}/norm1", D), i)], f"/blocks.{i}/Add")
        h = b.gelu(b.linear(b.layer_norm(x, f"blocks.{i}/norm2", D), f"blocks.{i}/mlp/fc1", D, MLP),
                   f"blocks.{i}/mlp/act")
        x = b.op("Add", [x, b.linear(h, f"blocks.{i}/mlp/fc2", MLP, D)], f"/blocks.{i}/Add_1")
    x = b.layer_norm(x, "norm", D)
    x = b.op("Gather", [x, b.init("/cls_idx", np.array(0, np.int64))], "/Gather", axis=1)
    head_w = b.init("head.weight", (b.rng.standard_normal((1000, D)) / math.sqrt(D)).astype(np.float32))
    head_b = b.init("head.bias", (0.1 * b.rng.standard_normal(1000)).astype(np.float32))
    b.op("Gemm", [x, head_w, head_b], "/head/Gemm", transB=1)
    b.nodes[-1].output[0] = "logits"
    graph = helper.make_graph(b.nodes, "vit_tiny",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, IMAGE, IMAGE])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="aotc bench/vit_tiny.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--blocks", type=int, default=12)
    args = ap.parse_args()
    onnx.save(vit_tiny(args.blocks), args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
