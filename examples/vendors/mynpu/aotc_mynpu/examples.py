"""A small model that uses mynpu's own op, and its twin onnxruntime can run.

    python -m aotc_mynpu.examples -o requant.onnx [--reference requant_ref.onnx] [--scale 0]

The model: conv 3x3 + Relu -> com.mynpu.Requant (the device's int8 store) -> conv 1x1 -> residual Add with
the Requant's output -> Relu -> GlobalAveragePool (on the host). Its twin writes the Requant as
QuantizeLinear + DequantizeLinear (int8), which computes the same: the reference for tests.
"""

from __future__ import annotations

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def requant_model(scale: float = 0.05, zero_point: int = 3, reference: bool = False) -> onnx.ModelProto:
    """The model (module docstring); `reference`: its twin with QuantizeLinear + DequantizeLinear."""
    rng = np.random.default_rng(65)
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((8, 8, 1, 1)) * 0.3).astype(np.float32)
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.zeros(8, np.float32) + 0.1, "b1"),
             numpy_helper.from_array(w2, "w2")]
    if reference:
        inits += [numpy_helper.from_array(np.array(scale, np.float32), "rq_scale"),
                  numpy_helper.from_array(np.array(zero_point, np.int8), "rq_zero_point")]
        requant = [helper.make_node("QuantizeLinear", ["r1", "rq_scale", "rq_zero_point"], ["q"], name="rq_q"),
                   helper.make_node("DequantizeLinear", ["q", "rq_scale", "rq_zero_point"], ["s"], name="rq")]
    else:
        requant = [helper.make_node("Requant", ["r1"], ["s"], name="rq", domain="com.mynpu", scale=scale,
                                    zero_point=zero_point)]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             *requant,
             helper.make_node("Conv", ["s", "w2"], ["c2"], name="conv2"),
             helper.make_node("Add", ["c2", "s"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["r2"], name="relu2"),
             helper.make_node("GlobalAveragePool", ["r2"], ["y"], name="gap")]
    g = helper.make_graph(nodes, "requant", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 3, 12, 12))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 8, 1, 1))], inits)
    opsets = [helper.make_opsetid("", 13)] + ([] if reference else [helper.make_opsetid("com.mynpu", 1)])
    m = helper.make_model(g, opset_imports=opsets, producer_name="aotc-mynpu")
    m.ir_version = 8
    return m


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True, help="the model with com.mynpu.Requant")
    p.add_argument("--reference", help="also write its twin with QuantizeLinear + DequantizeLinear here")
    p.add_argument("--scale", type=float, default=0.05, help="the Requant's scale (0: a model mynpu refuses)")
    args = p.parse_args()
    onnx.save(requant_model(args.scale), args.output)
    if args.reference:
        onnx.save(requant_model(args.scale, reference=True), args.reference)


if __name__ == "__main__":
    main()
