"""A small NCHW conv chain for the ONNX row-band tests (tests/plan/test_nchw_bands.py): a 1 x 1 expansion, a
3 x 3 depthwise conv at stride 2 with pads of 1, a 1 x 1 projection, then a residual block (a 1 x 1 expansion
to 72 channels, the peak; a 3 x 3 depthwise conv at stride 1; a 1 x 1 projection added to the block's input),
a 5 x 3 conv with uneven pads, and a global average pool; fp32, and its QDQ form from onnxruntime's
quantize_static (as bench/ram_budget_forms.py's int8 models are made)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPE = (1, 4, 48, 24)


def float_chain(path: Path, block: bool = True) -> None:
    """block=False: no residual block (its peak, a depthwise conv at stride 1 on 72 channels, takes the float
    flat kernel, which runs no band: aot/kernels/nchw_bands.py), so the stem's run is the float bands' test."""
    rng = np.random.default_rng(0)
    layers = [  # out_c, kernel, stride, pads, group (0: depthwise)
        (24, (1, 1), 1, [0, 0, 0, 0], 1), (24, (3, 3), 2, [1, 1, 1, 1], 0), (12, (1, 1), 1, [0, 0, 0, 0], 1),
        *([(72, (1, 1), 1, [0, 0, 0, 0], 1), (72, (3, 3), 1, [1, 1, 1, 1], 0), (12, (1, 1), 1, [0, 0, 0, 0], 1)]
          if block else [(12, (3, 3), 1, [1, 1, 1, 1], 0)]),
        (16, (5, 3), 1, [2, 1, 1, 1], 1)]
    nodes, inits, c, x = [], [], SHAPE[1], "x"
    for k, (m, kern, s, pads, group) in enumerate(layers):
        g = c if group == 0 else group
        w = (rng.standard_normal((m, c // g, *kern)) / np.sqrt(c // g * kern[0] * kern[1])).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{k}"), numpy_helper.from_array(
            (rng.standard_normal(m) / 4).astype(np.float32), f"b{k}")]
        nodes.append(helper.make_node("Conv", [x, f"w{k}", f"b{k}"], [f"c{k}"], kernel_shape=list(kern),
                                      strides=[s, s], pads=pads, group=g))
        if block and k == 5:  # a residual block: the 1 x 1 conv's output added to the projection's (r2)
            nodes.append(helper.make_node("Add", [f"c{k}", "r2"], [f"r{k}"]))
        else:
            nodes.append(helper.make_node("Relu", [f"c{k}"], [f"r{k}"]))
        x, c = f"r{k}", m
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["y"]))
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 1, 1])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def qdq_chain(path: Path) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    src = path.with_name(path.stem + "_f32.onnx")
    float_chain(src)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = iter([{"x": np.random.default_rng(s).standard_normal(SHAPE).astype(np.float32)}
                               for s in range(8)])

        def get_next(self) -> dict | None:
            return next(self.feeds, None)

    quantize_static(str(src), str(path), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)
