"""int8 models made the way users make them: onnxruntime's quantize_static over the zoo's fp32
models, with a calibration reader of random inputs (no torch, no TensorFlow: onnxruntime only).

    python3 examples/quantize.py resnet --format QDQ -o resnet_int8.onnx --inputs resnet_in.npz

Both of the quantizer's forms: QDQ (QuantizeLinear / DequantizeLinear around float ops) and
QOperator (QLinearConv, QGemm, com.microsoft's QLinearAdd, ...); per-channel weights by default.
The model is first pre-processed (quant_pre_process: shape inference, BatchNormalization folded
into the convs), as onnxruntime's documentation asks, and brought to opset 13 at least (per-channel
DequantizeLinear needs its `axis`).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path

import numpy as np
import onnx
import zoo

FORMATS = ("QDQ", "QOperator")
# ops whose first output is integer (exposed by expose_integers)
INTEGER_OPS = ("QuantizeLinear", "QGemm", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger")


def quantized(model: onnx.ModelProto, fmt: str = "QDQ", per_channel: bool = True, activations: str = "int8",
              calibration: int = 8, seed: int = 0) -> onnx.ModelProto:
    """`model` quantized by onnxruntime's quantize_static (activations "int8" or "uint8", weights int8)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([zoo.random_inputs(model, seed=seed + k) for k in range(calibration)])

        def get_next(self) -> dict | None:
            return next(self.batches, None)

    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset < 13:
        model = onnx.version_converter.convert_version(model, 13)
    logging.disable(logging.WARNING)  # the quantizer's advice to pre-process, which we do
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src, pre, out = Path(tmp, "fp32.onnx"), Path(tmp, "pre.onnx"), Path(tmp, "int8.onnx")
            onnx.save(model, src)
            quant_pre_process(str(src), str(pre))
            quantize_static(str(pre), str(out), Reader(), quant_format=getattr(QuantFormat, fmt),
                            per_channel=per_channel,
                            activation_type=QuantType.QInt8 if activations == "int8" else QuantType.QUInt8,
                            weight_type=QuantType.QInt8)
            return onnx.load(str(out))
    finally:
        logging.disable(logging.NOTSET)


def quantized_dynamic(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` quantized by onnxruntime's quantize_dynamic (int8 weights; activations quantized at
    run time by DynamicQuantizeLinear, then MatMulInteger / ConvInteger)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset < 13:
        model = onnx.version_converter.convert_version(model, 13)
    logging.disable(logging.WARNING)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src, out = Path(tmp, "fp32.onnx"), Path(tmp, "int8.onnx")
            onnx.save(model, src)
            quantize_dynamic(str(src), str(out), weight_type=QuantType.QInt8,
                             op_types_to_quantize=["MatMul", "Gemm", "Conv"])
            return onnx.load(str(out))
    finally:
        logging.disable(logging.NOTSET)


def expose_integers(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose every 8-bit activation (the output of each quantizing node) is also a graph
    output: a test then compares every integer tensor, not only the few float outputs."""
    from aot.frontend.onnx.fold import infer_shapes  # onnx's inference, plus the com.microsoft ops' shapes

    inferred = infer_shapes(model)
    types = {vi.name: vi for vi in inferred.graph.value_info}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    have = {o.name for o in out.graph.output}
    for node in out.graph.node:
        if node.op_type in INTEGER_OPS or node.op_type.startswith("QLinear"):
            name = node.output[0]
            if name not in have:
                vi = types.get(name)
                out.graph.output.append(vi if vi is not None else onnx.helper.make_empty_tensor_value_info(name))
                have.add(name)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", choices=sorted(zoo.MODELS))
    ap.add_argument("--format", choices=FORMATS, default="QDQ")
    ap.add_argument("--activations", choices=("int8", "uint8"), default="int8")
    ap.add_argument("--per-tensor", action="store_true", help="one scale per weight tensor, not per channel")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--inputs", help="also write random inputs (npz)")
    args = ap.parse_args()
    model = zoo.build(args.name)
    onnx.save(quantized(model, args.format, not args.per_tensor, args.activations), args.output)
    if args.inputs:
        np.savez(args.inputs, **zoo.random_inputs(model, seed=1))


if __name__ == "__main__":
    main()
