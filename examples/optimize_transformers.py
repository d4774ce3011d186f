"""Transformer blocks as onnxruntime's transformer optimizer writes them (issue 51): its BERT fusions
turn the spelled-out ops of a committed model into com.microsoft ops (SkipLayerNormalization, BiasGelu,
or FastGelu with the GELU approximation on), which aotc rewrites onto ONNX ops.

    python examples/optimize_transformers.py tests/models

runs onnxruntime.transformers.optimizer.optimize_model (onnxruntime only: no torch) on
tests/models/encoder_block.onnx (examples/transformers.py's pre-norm block, 1 x 16 x 64) and writes:

- encoder_block_ort.onnx: model_type="bert", default options: SkipLayerNormalization, BiasGelu;
- encoder_block_ort_fastgelu.onnx: the same with enable_gelu_approximation: SkipLayerNormalization, FastGelu.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
from onnxruntime.transformers.fusion_options import FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

SOURCE = Path(__file__).resolve().parent.parent / "tests" / "models" / "encoder_block.onnx"


def optimize(approximate_gelu: bool, path: Path) -> None:
    """The encoder block through the optimizer's BERT fusions (num_heads/hidden_size 0: read from the
    graph), saved as users save it (save_model_to_file adds the com.microsoft opset import)."""
    options = FusionOptions("bert")
    options.enable_gelu_approximation = approximate_gelu
    optimize_model(str(SOURCE), model_type="bert", num_heads=0, hidden_size=0, opt_level=0,
                   optimization_options=options).save_model_to_file(str(path))


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, approximate in (("encoder_block_ort", False), ("encoder_block_ort_fastgelu", True)):
        optimize(approximate, out / f"{name}.onnx")
        model = onnx.load(out / f"{name}.onnx")
        ops = sorted({n.op_type for n in model.graph.node if n.domain == "com.microsoft"})
        print(f"{name}.onnx: {', '.join(ops)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/models")
