"""The recurrent keyword spotters through onnxruntime's quantize_dynamic (issue 51): its LSTM becomes a
com.microsoft DynamicQuantizeLSTM (int8 W and R; X and each step's H quantized at run time), the head's
MatMul a DynamicQuantizeLinear / MatMulInteger pair. onnxruntime only, no torch:

    python examples/quantize_recurrent.py tests/models

writes kws_lstm_qdyn.onnx and kws_lstm_stream_qdyn.onnx from tests/models/kws_lstm.onnx and
kws_lstm_stream.onnx (examples/export_recurrent.py's torch.onnx.export models), as users quantize them:
quantize_dynamic's defaults with int8 weights.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic

MODELS = Path(__file__).resolve().parent.parent / "tests" / "models"


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("kws_lstm", "kws_lstm_stream"):
        target = out / f"{name}_qdyn.onnx"
        quantize_dynamic(str(MODELS / f"{name}.onnx"), str(target), weight_type=QuantType.QInt8)
        ops = sorted({n.op_type for n in onnx.load(target).graph.node if n.domain == "com.microsoft"})
        print(f"{target.name}: {', '.join(ops)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/models")
