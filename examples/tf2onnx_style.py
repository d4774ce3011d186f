"""The MLPerf Tiny reference networks as tf2onnx writes a Keras model (issue 28), built with onnx.helper
(no TensorFlow needed): an NHWC input and its Transpose to NCHW, each Keras BatchNormalization as
`Conv -> Mul(per-channel) -> Add(per-channel)` before the Relu, SAME padding as explicit pads, and
the classifier as GlobalAveragePool -> Transpose to NHWC -> Reshape (Flatten) -> MatMul -> Add (Dense)
-> Softmax. `folded=True` gives the same network with BatchNorm already folded into the convs (what
a torch export of it looks like), the reference the tf2onnx form should match in speed.

    python examples/tf2onnx_style.py OUT_DIR     # writes {kws_dscnn,ic_resnet8,vww_mobilenet}{,_folded}.onnx

Weights are random (seeded); shapes follow the reference models (KWS DS-CNN: 49 x 10 MFCCs, 64
channels; IC ResNet-8: 32 x 32 RGB, 16/32/64; VWW MobileNet-v1 0.25 at 96 x 96 RGB).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper


class Net:
    def __init__(self, name: str, folded: bool, seed: int = 0):
        self.name, self.folded = name, folded
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.k = 0

    def _id(self, base: str) -> str:
        self.k += 1
        return f"{base}_{self.k}"

    def init(self, base: str, value: np.ndarray) -> str:
        name = self._id(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op: str, inputs: list[str], **attrs) -> str:
        out = self._id(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out + "_node", **attrs))
        return out

    def conv_bn(self, x: str, shape: tuple[int, int, int], cin: int, cout: int, k: tuple[int, int],
                stride: int = 1, group: int = 1, relu: bool = True) -> tuple[str, tuple[int, int, int]]:
        """Conv (SAME) -> BatchNorm -> [Relu]; returns the output and its (C, H, W)."""
        _, h, w = shape
        oh, ow = -(-h // stride), -(-w // stride)
        ph = max(0, (oh - 1) * stride + k[0] - h)
        pw = max(0, (ow - 1) * stride + k[1] - w)
        pads = [ph // 2, pw // 2, ph - ph // 2, pw - pw // 2]
        fan_in = cin // group * k[0] * k[1]
        wt = (self.rng.standard_normal((cout, cin // group, *k)) / np.sqrt(fan_in)).astype(np.float32)
        b = (0.1 * self.rng.standard_normal(cout)).astype(np.float32)
        gamma = (1 + 0.2 * self.rng.standard_normal(cout)).astype(np.float32)
        beta = (0.1 * self.rng.standard_normal(cout)).astype(np.float32)
        mean = (0.1 * self.rng.standard_normal(cout)).astype(np.float32)
        var = (0.5 + self.rng.random(cout)).astype(np.float32)
        scale = (gamma / np.sqrt(var + 1e-3)).astype(np.float32)
        shift = (beta - mean * scale).astype(np.float32)
        attrs = dict(kernel_shape=list(k), strides=[stride, stride], pads=pads, group=group)
        if self.folded:
            wf = (wt * scale[:, None, None, None]).astype(np.float32)
            bf = (b * scale + shift).astype(np.float32)
            y = self.op("Conv", [x, self.init("W", wf), self.init("B", bf)], **attrs)
        else:
            y = self.op("Conv", [x, self.init("W", wt), self.init("B", b)], **attrs)
            y = self.op("Mul", [y, self.init("bn_scale", scale.reshape(1, cout, 1, 1))])
            y = self.op("Add", [y, self.init("bn_shift", shift.reshape(1, cout, 1, 1))])
        if relu:
            y = self.op("Relu", [y])
        return y, (cout, oh, ow)

    def head(self, x: str, c: int, classes: int) -> str:
        p = self.op("GlobalAveragePool", [x])
        t = self.op("Transpose", [p], perm=[0, 2, 3, 1])
        f = self.op("Reshape", [t, self.init("flat", np.array([1, c], np.int64))])
        w = (self.rng.standard_normal((c, classes)) / np.sqrt(c)).astype(np.float32)
        d = self.op("Add", [self.op("MatMul", [f, self.init("dense_W", w)]),
                            self.init("dense_B", (0.1 * self.rng.standard_normal(classes)).astype(np.float32))])
        return self.op("Softmax", [d], axis=-1)

    def model(self, x_shape: tuple[int, ...], y: str, classes: int) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info("input_1", onnx.TensorProto.FLOAT, list(x_shape))],
            [helper.make_tensor_value_info(y, onnx.TensorProto.FLOAT, [1, classes])], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tf2onnx-style")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def kws_dscnn(folded: bool = False) -> onnx.ModelProto:
    n = Net("kws_dscnn", folded)
    x = n.op("Transpose", ["input_1"], perm=[0, 3, 1, 2])
    y, s = n.conv_bn(x, (1, 49, 10), 1, 64, (10, 4), stride=2)
    for _ in range(4):
        y, s = n.conv_bn(y, s, 64, 64, (3, 3), group=64)
        y, s = n.conv_bn(y, s, 64, 64, (1, 1))
    return n.model((1, 49, 10, 1), n.head(y, 64, 12), 12)


def ic_resnet8(folded: bool = False) -> onnx.ModelProto:
    n = Net("ic_resnet8", folded)
    x = n.op("Transpose", ["input_1"], perm=[0, 3, 1, 2])
    y, s = n.conv_bn(x, (3, 32, 32), 3, 16, (3, 3))
    for c, stride in ((16, 1), (32, 2), (64, 2)):
        a, sa = n.conv_bn(y, s, s[0], c, (3, 3), stride=stride)
        a, sa = n.conv_bn(a, sa, c, c, (3, 3), relu=False)
        if stride != 1:
            sc = n.op("Conv", [y, n.init("W", (n.rng.standard_normal((c, s[0], 1, 1)) / np.sqrt(s[0])).astype(
                np.float32)), n.init("B", np.zeros(c, np.float32))], strides=[stride, stride], kernel_shape=[1, 1])
        else:
            sc = y
        y, s = n.op("Relu", [n.op("Add", [a, sc])]), sa
    return n.model((1, 32, 32, 3), n.head(y, 64, 10), 10)


def vww_mobilenet(folded: bool = False) -> onnx.ModelProto:
    n = Net("vww_mobilenet", folded)
    x = n.op("Transpose", ["input_1"], perm=[0, 3, 1, 2])
    y, s = n.conv_bn(x, (3, 96, 96), 3, 8, (3, 3), stride=2)
    for c, stride in ((16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), *[(128, 1)] * 5, (256, 2), (256, 1)):
        y, s = n.conv_bn(y, s, s[0], s[0], (3, 3), stride=stride, group=s[0])
        y, s = n.conv_bn(y, s, s[0], c, (1, 1))
    return n.model((1, 96, 96, 3), n.head(y, 256, 2), 2)


MODELS = {"kws_dscnn": kws_dscnn, "ic_resnet8": ic_resnet8, "vww_mobilenet": vww_mobilenet}


def main(out: str) -> None:
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        for folded in (False, True):
            path = d / f"{name}{'_folded' if folded else ''}.onnx"
            onnx.save(build(folded), str(path))
            print(path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tf2onnx_models")
