"""Transformer blocks as onnxruntime's transformer optimizer writes them (issue 51): its BERT fusions
turn the spelled-out ops of a committed model into com.microsoft ops (SkipLayerNormalization, BiasGelu,
or FastGelu with the GELU approximation on), which aotc rewrites onto ONNX ops.

    python examples/optimize_transformers.py tests/models

runs onnxruntime.transformers.optimizer.optimize_model (onnxruntime only: no torch) on
tests/models/encoder_block.onnx (examples/transformers.py's pre-norm block, 1 x 16 x 64) and writes:

- encoder_block_ort.onnx: model_type="bert", default options: SkipLayerNormalization, BiasGelu;
- encoder_block_ort_fastgelu.onnx: the same with enable_gelu_approximation: SkipLayerNormalization, FastGelu;
- vit_tiny_ts_ort.onnx: tests/models/vit_tiny_ts.onnx (examples/export_transformers.py's two-block ViT,
  TorchScript export) the same way as encoder_block_ort.onnx: three SkipLayerNormalization, two BiasGelu;
- encoder_block_qdyn_ort.onnx: the block through onnxruntime.quantization.quantize_dynamic (int8 weights),
  then as an onnxruntime session's extended graph optimizations save it (SessionOptions.optimized_model_filepath):
  DynamicQuantizeMatMul, MatMulIntegerToFloat, FusedMatMul;
- bert_tiny_ort.onnx: tests/models/bert_tiny.onnx (examples/export_transformers.py's Hugging Face BertModel,
  input_ids, attention_mask, token_type_ids) with model_type="bert", num_heads=4, hidden_size=32:
  EmbedLayerNormalization (its mask_index output, the count of ones of each mask row), Attention reading
  that mask_index, SkipLayerNormalization, BiasGelu;
- bert_tiny_ort_raw_mask.onnx: the same with options.use_raw_attention_mask(): Attention reads the
  [batch, sequence] 0/1 mask itself;
- bert_tiny_ort_mha.onnx: the same with options.use_multi_head_attention: MultiHeadAttention (the Q, K, V
  MatMuls left outside, their biases packed in its bias input) reading EmbedLayerNormalization's mask_index;
- bert_tiny_qdyn_ort.onnx: bert_tiny_ort.onnx through quantize_dynamic (int8 weights; DefaultTensorType float,
  which the quantizer asks for on a model with com.microsoft ops) and an onnxruntime session's extended
  optimizations, as for encoder_block_qdyn_ort.onnx: QEmbedLayerNormalization, QAttention,
  DynamicQuantizeMatMul, SkipLayerNormalization, BiasGelu.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import onnx
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.transformers.fusion_options import FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

MODELS = Path(__file__).resolve().parent.parent / "tests" / "models"
SOURCE = MODELS / "encoder_block.onnx"


def optimize(approximate_gelu: bool, path: Path, source: Path = SOURCE) -> None:
    """`source` through the optimizer's BERT fusions (num_heads/hidden_size 0: read from the
    graph), saved as users save it (save_model_to_file adds the com.microsoft opset import)."""
    options = FusionOptions("bert")
    options.enable_gelu_approximation = approximate_gelu
    optimize_model(str(source), model_type="bert", num_heads=0, hidden_size=0, opt_level=0,
                   optimization_options=options).save_model_to_file(str(path))


BERT = MODELS / "bert_tiny.onnx"
BERT_VARIANTS = {  # file: what changes in FusionOptions("bert")
    "bert_tiny_ort": lambda options: None,
    "bert_tiny_ort_raw_mask": lambda options: options.use_raw_attention_mask(True),
    "bert_tiny_ort_mha": lambda options: setattr(options, "use_multi_head_attention", True),
}


def optimize_bert(name: str, path: Path) -> None:
    """bert_tiny.onnx through the optimizer as its documentation shows for BERT (the heads and width given)."""
    options = FusionOptions("bert")
    BERT_VARIANTS[name](options)
    optimize_model(str(BERT), model_type="bert", num_heads=4, hidden_size=32, opt_level=0,
                   optimization_options=options).save_model_to_file(str(path))


def quantize_and_fuse(path: Path, source: Path = SOURCE) -> None:
    """quantize_dynamic's model as onnxruntime's session fuses it (its level-2 fusions, saved to `path`)."""
    with tempfile.TemporaryDirectory() as tmp:
        quantized = Path(tmp) / "q.onnx"
        quantize_dynamic(str(source), str(quantized), weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = str(path)
        ort.InferenceSession(str(quantized), so, providers=["CPUExecutionProvider"])


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, approximate, source in (("encoder_block_ort", False, SOURCE),
                                      ("encoder_block_ort_fastgelu", True, SOURCE),
                                      ("vit_tiny_ts_ort", False, MODELS / "vit_tiny_ts.onnx")):
        optimize(approximate, out / f"{name}.onnx", source)
        model = onnx.load(out / f"{name}.onnx")
        ops = sorted({n.op_type for n in model.graph.node if n.domain == "com.microsoft"})
        print(f"{name}.onnx: {', '.join(ops)}")
    for name in BERT_VARIANTS:
        optimize_bert(name, out / f"{name}.onnx")
        model = onnx.load(out / f"{name}.onnx")
        ops = sorted({n.op_type for n in model.graph.node if n.domain == "com.microsoft"})
        print(f"{name}.onnx: {', '.join(ops)}")
    for name, source in (("encoder_block_qdyn_ort", SOURCE), ("bert_tiny_qdyn_ort", out / "bert_tiny_ort.onnx")):
        quantize_and_fuse(out / f"{name}.onnx", source)
        model = onnx.load(out / f"{name}.onnx")
        print(f"{name}.onnx: {', '.join(sorted({n.op_type for n in model.graph.node if n.domain}))}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/models")
