"""Issue 51: onnxruntime's transformer-optimizer ops that aotc rewrites onto ONNX ops
(aot/frontend/onnx/canonical/contrib_attention.py), each alone at a small-BERT size, the tiny BERT the
optimizer fused (tests/models/bert_tiny*.onnx) and the GPT-2 decoding step onnxruntime's converter wrote:
latency against onnxruntime on one thread (`aotc bench`: medians of rounds that time both back to back)
and the max error relative to the output's scale.

    python bench/contrib_ops.py [WORK_DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "frontend"), str(REPO / "tests")]
from test_contrib_attention import bert_feeds, gpt2_feeds  # noqa: E402

from aot.bench import bench_one  # noqa: E402
from aot.build import cmake_exe  # noqa: E402

AOTC = [sys.executable, "-m", "aot.cli"]
MS = "com.microsoft"
B, S, D, HEADS, VOCAB = 1, 128, 256, 4, 1000


def _rand(*shape: int, seed: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _case(node: onnx.NodeProto, feeds: dict[str, np.ndarray], outputs: list[str],
          consts: dict[str, np.ndarray]) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A one-node model of `node` and its feeds."""
    types = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int32"): TensorProto.INT32}
    graph = helper.make_graph(
        [node], node.op_type,
        [helper.make_tensor_value_info(n, types[a.dtype], a.shape) for n, a in feeds.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [onnx.numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return model, feeds


def cases() -> dict[str, tuple[onnx.ModelProto, dict[str, np.ndarray]]]:
    """Single ops at batch 1, 128 tokens (100 of them valid), 256 features, 4 heads; the committed tiny BERTs."""
    x = _rand(B, S, D, seed=1)
    qkv = {"w": _rand(D, 3 * D, seed=2, scale=0.05), "b": _rand(3 * D, seed=3, scale=0.1)}
    ends = np.array([100], np.int32)
    mask2d = (np.arange(S) < 100).astype(np.int32)[None]

    def attention(ins: list[str], outs: list[str], feeds: dict, **attrs):
        node = helper.make_node("Attention", ins, outs, domain=MS, num_heads=HEADS, **attrs)
        return _case(node, feeds, outs, qkv)

    out = {
        "Attention, mask_index [B]": attention(["x", "w", "b", "m"], ["y"], {"x": x, "m": ends}),
        "Attention, mask [B, S]": attention(["x", "w", "b", "m"], ["y"], {"x": x, "m": mask2d}),
        "Attention, unidirectional": attention(["x", "w", "b"], ["y"], {"x": x}, unidirectional=1),
        "Attention, 1 token after 127 past": attention(
            ["x", "w", "b", "", "past"], ["y", "present"],
            {"x": x[:, :1].copy(), "past": _rand(2, B, HEADS, S - 1, D // HEADS, seed=4)}, unidirectional=1),
        "MultiHeadAttention, mask_index [B]": _case(
            helper.make_node("MultiHeadAttention", ["q", "k", "v", "b", "m"], ["y"], domain=MS, num_heads=HEADS),
            {"q": x, "k": _rand(B, S, D, seed=5), "v": _rand(B, S, D, seed=6), "m": ends}, ["y"], {"b": qkv["b"]}),
        "EmbedLayerNormalization, mask": _case(
            helper.make_node("EmbedLayerNormalization", ["ids", "seg", "we", "pe", "se", "g", "be", "m"],
                             ["y", "mask_index"], domain=MS, epsilon=1e-12),
            {"ids": np.random.default_rng(7).integers(0, VOCAB, (B, S)).astype(np.int32),
             "seg": (np.arange(S) >= 64).astype(np.int32)[None], "m": mask2d}, ["y"],
            {"we": _rand(VOCAB, D, seed=8), "pe": _rand(512, D, seed=9), "se": _rand(2, D, seed=10),
             "g": _rand(D, seed=11), "be": _rand(D, seed=12)}),
    }
    for name in ("bert_tiny", "bert_tiny_ort", "bert_tiny_ort_raw_mask", "bert_tiny_ort_mha", "bert_tiny_qdyn_ort"):
        out[f"{name}.onnx"] = (onnx.load(REPO / "tests" / "models" / f"{name}.onnx"), bert_feeds())
    out["gpt2_tiny_past_ort.onnx"] = (onnx.load(REPO / "tests" / "models" / "gpt2_tiny_past_ort.onnx"), gpt2_feeds())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default="/tmp/aotc_bench_contrib")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print("| case | max err / scale | bundle us | onnxruntime us | ratio |\n|---|---:|---:|---:|---:|")
    for k, (name, (model, feeds)) in enumerate(cases().items()):
        src, out, npz = work / f"case{k}.onnx", work / f"case{k}", work / f"case{k}_in.npz"
        onnx.save(model, src)
        np.savez(npz, **feeds)
        subprocess.run([*AOTC, str(src), "-o", str(out), "--force"], check=True, capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
        meta = json.loads((out / "bundle" / "metadata.json").read_text())
        row = bench_one(out, meta, inputs_npz=str(npz), repeat=100, rounds=args.rounds, ort_threads=1)
        subprocess.run([*AOTC, "run", str(out), "--inputs", str(npz), "--outputs", str(work / f"case{k}_out.npz")],
                       check=True, capture_output=True)
        ours = np.load(work / f"case{k}_out.npz")
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        refs = ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"]).run(None, feeds)
        err = max(float(np.max(np.abs(ours[o.name] - r)) / np.max(np.abs(r)))
                  for o, r in zip(model.graph.output, refs, strict=True))
        print(f"| {name} | {err:.1e} | {row.bundle_us:.1f} | {row.ort_us:.1f} | {row.ratio:.2f} |", flush=True)


if __name__ == "__main__":
    main()
