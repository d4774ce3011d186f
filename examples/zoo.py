"""Small models of the classic CNN families, built with onnx.helper (no framework needed).

    python examples/zoo.py mlp -o mlp.onnx         # one model
    python examples/zoo.py --all -o models/         # every model

Weights are random (seeded) with fan-in scaling, so activations stay O(1) and
numeric comparisons are meaningful. These are the test and benchmark models.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    """Appends ONNX nodes, tracking shapes so layers can size their weights."""

    def __init__(self, name: str, opset: int = 13, seed: int = 0):
        self.name, self.opset = name, opset
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self._k = 0

    def _name(self, kind: str) -> str:
        self._k += 1
        return f"{kind}{self._k}"

    def _node(self, op: str, inputs: list[str], shape: tuple[int, ...], **attrs) -> str:
        name = self._name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [name + "_out"], name=name, **attrs))
        self.shapes[name + "_out"] = tuple(shape)
        return name + "_out"

    def const(self, value: np.ndarray, kind: str = "w") -> str:
        name = self._name(kind)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        self.shapes[name] = tuple(np.shape(value))
        return name

    def input(self, name: str, shape: tuple[int, ...]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.shapes[name] = tuple(shape)
        return name

    def weights(self, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (self.rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32)

    # --- layers -------------------------------------------------------------------
    def conv(self, x: str, cout: int, k: int, stride: int = 1, pad: int | None = None, group: int = 1,
             bias: bool = True, dilation: int = 1, kernel: tuple[int, int] | None = None,
             pads: list[int] | None = None) -> str:
        """k x k kernel (or `kernel` = (kh, kw)); `pad` on every side (default: same) or `pads` as ONNX's."""
        n, cin, h, w = self.shapes[x]
        kh, kw = kernel or (k, k)
        pad = (k - 1) * dilation // 2 if pad is None else pad
        pads = pads or [pad] * 4
        wt = self.const(self.weights((cout, cin // group, kh, kw), cin // group * kh * kw))
        ins = [x, wt] + ([self.const(self.rng.standard_normal(cout).astype(np.float32) * 0.1, "b")] if bias else [])
        eh, ew = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
        oh, ow = (h + pads[0] + pads[2] - eh) // stride + 1, (w + pads[1] + pads[3] - ew) // stride + 1
        return self._node("Conv", ins, (n, cout, oh, ow), kernel_shape=[kh, kw], strides=[stride, stride],
                          pads=pads, group=group, dilations=[dilation, dilation])

    def bn(self, x: str) -> str:
        c = self.shapes[x][1]
        r = self.rng
        gamma, beta = r.uniform(0.5, 1.5, c), r.standard_normal(c) * 0.1
        mean, var = r.standard_normal(c) * 0.1, r.uniform(0.5, 1.5, c)
        params = [gamma, beta, mean, var]
        names = [self.const(p.astype(np.float32), "bn") for p in params]
        return self._node("BatchNormalization", [x, *names], self.shapes[x], epsilon=1e-5)

    def act(self, op: str, x: str, **attrs) -> str:
        return self._node(op, [x], self.shapes[x], **attrs)

    def relu(self, x: str) -> str:
        return self.act("Relu", x)

    def relu6(self, x: str) -> str:
        if self.opset < 11:
            return self.act("Clip", x, min=0.0, max=6.0)
        lo, hi = self.const(np.array(0, np.float32), "lo"), self.const(np.array(6, np.float32), "hi")
        return self._node("Clip", [x, lo, hi], self.shapes[x])

    def add(self, a: str, b: str) -> str:
        return self._node("Add", [a, b], self.shapes[a])

    def pool(self, op: str, x: str, k: int, stride: int, pad: int = 0, ceil: int = 0) -> str:
        n, c, h, w = self.shapes[x]
        rnd = math.ceil if ceil else math.floor
        oh, ow = (int(rnd((d + 2 * pad - k) / stride)) + 1 for d in (h, w))
        attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4}
        if ceil:
            attrs["ceil_mode"] = 1
        return self._node(op, [x], (n, c, oh, ow), **attrs)

    def gap(self, x: str) -> str:
        n, c = self.shapes[x][:2]
        return self._node("GlobalAveragePool", [x], (n, c, 1, 1))

    def flatten(self, x: str) -> str:
        s = self.shapes[x]
        return self._node("Flatten", [x], (s[0], int(np.prod(s[1:]))), axis=1)

    def gemm(self, x: str, n_out: int) -> str:
        m, k = self.shapes[x]
        w = self.const(self.weights((n_out, k), k))
        b = self.const(self.rng.standard_normal(n_out).astype(np.float32) * 0.1, "b")
        return self._node("Gemm", [x, w, b], (m, n_out), transB=1)

    def concat(self, xs: list[str], axis: int = 1) -> str:
        shape = list(self.shapes[xs[0]])
        shape[axis] = sum(self.shapes[x][axis] for x in xs)
        return self._node("Concat", xs, tuple(shape), axis=axis)

    def softmax(self, x: str) -> str:
        return self._node("Softmax", [x], self.shapes[x], axis=1 if self.opset < 13 else -1)

    def channel_shuffle(self, x: str, groups: int) -> str:
        n, c, h, w = self.shapes[x]
        s1 = self.const(np.array([n, groups, c // groups, h, w], np.int64), "shape")
        r = self._node("Reshape", [x, s1], (n, groups, c // groups, h, w))
        t = self._node("Transpose", [r], (n, c // groups, groups, h, w), perm=[0, 2, 1, 3, 4])
        s2 = self.const(np.array([n, c, h, w], np.int64), "shape")
        return self._node("Reshape", [t, s2], (n, c, h, w))

    def build(self, outputs: list[str]) -> onnx.ModelProto:
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(self.shapes[o])) for o in outputs]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, outs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="aotc-zoo")
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


# --- the models -------------------------------------------------------------------

def mlp() -> onnx.ModelProto:
    b = Builder("mlp", opset=9)
    x = b.input("input", (1, 784))
    x = b.relu(b.gemm(x, 128))
    x = b.relu(b.gemm(x, 64))
    return b.build([b.softmax(b.gemm(x, 10))])


def lenet() -> onnx.ModelProto:
    b = Builder("lenet", opset=11)
    x = b.input("image", (1, 1, 28, 28))
    x = b.pool("MaxPool", b.relu(b.conv(x, 6, 5, pad=2)), 2, 2)
    x = b.pool("MaxPool", b.relu(b.conv(x, 16, 5, pad=0)), 2, 2)
    x = b.relu(b.gemm(b.flatten(x), 120))
    x = b.relu(b.gemm(x, 84))
    return b.build([b.gemm(x, 10)])


def _basic_block(b: Builder, x: str, cout: int, stride: int) -> str:
    y = b.relu(b.bn(b.conv(x, cout, 3, stride=stride, bias=False)))
    y = b.bn(b.conv(y, cout, 3, bias=False))
    short = x if stride == 1 and b.shapes[x][1] == cout else b.bn(b.conv(x, cout, 1, stride=stride, pad=0,
                                                                           bias=False))
    return b.relu(b.add(y, short))


def resnet() -> onnx.ModelProto:
    """ResNet-8 for 32x32 input (the MLPerf Tiny image-classification shape)."""
    b = Builder("resnet", opset=13)
    x = b.input("input", (1, 3, 32, 32))
    x = b.relu(b.bn(b.conv(x, 16, 3, bias=False)))
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        x = _basic_block(b, x, cout, stride)
    return b.build([b.gemm(b.flatten(b.gap(x)), 10)])


def _inverted_residual(b: Builder, x: str, cout: int, stride: int, expand: int) -> str:
    cin = b.shapes[x][1]
    y = b.relu6(b.bn(b.conv(x, cin * expand, 1, pad=0, bias=False))) if expand != 1 else x
    y = b.relu6(b.bn(b.conv(y, b.shapes[y][1], 3, stride=stride, group=b.shapes[y][1], bias=False)))
    y = b.bn(b.conv(y, cout, 1, pad=0, bias=False))
    return b.add(x, y) if stride == 1 and cin == cout else y


def mobilenetv2(size: int = 64) -> onnx.ModelProto:
    b = Builder("mobilenetv2", opset=13)
    x = b.input("input", (1, 3, size, size))
    x = b.relu6(b.bn(b.conv(x, 16, 3, stride=2, bias=False)))
    for cout, stride, expand in ((8, 1, 1), (16, 2, 6), (16, 1, 6), (24, 2, 6), (24, 1, 6), (32, 2, 6)):
        x = _inverted_residual(b, x, cout, stride, expand)
    x = b.relu6(b.bn(b.conv(x, 128, 1, pad=0, bias=False)))
    return b.build([b.gemm(b.flatten(b.gap(x)), 10)])


def inception() -> onnx.ModelProto:
    """A GoogLeNet-style Inception block: four branches joined by Concat."""
    b = Builder("inception", opset=13)
    x = b.input("input", (1, 16, 28, 28))
    x = b.relu(b.conv(x, 32, 3))
    br1 = b.relu(b.conv(x, 16, 1, pad=0))
    br2 = b.relu(b.conv(b.relu(b.conv(x, 12, 1, pad=0)), 24, 3))
    br3 = b.relu(b.conv(b.relu(b.conv(x, 4, 1, pad=0)), 8, 5))
    br4 = b.relu(b.conv(b.pool("MaxPool", x, 3, 1, pad=1), 8, 1, pad=0))
    x = b.concat([br1, br2, br3, br4])
    return b.build([b.softmax(b.gemm(b.flatten(b.gap(x)), 10))])


def _fire(b: Builder, x: str, squeeze: int, expand: int) -> str:
    s = b.relu(b.conv(x, squeeze, 1, pad=0))
    return b.concat([b.relu(b.conv(s, expand, 1, pad=0)), b.relu(b.conv(s, expand, 3))])


def squeezenet() -> onnx.ModelProto:
    b = Builder("squeezenet", opset=12)
    x = b.input("data", (1, 3, 48, 48))
    x = b.pool("MaxPool", b.relu(b.conv(x, 32, 3, stride=2, pad=0)), 3, 2, ceil=1)
    x = _fire(b, x, 8, 16)
    x = _fire(b, x, 8, 16)
    x = b.pool("MaxPool", x, 3, 2, ceil=1)
    x = b.relu(b.conv(_fire(b, x, 16, 32), 10, 1, pad=0))
    return b.build([b.softmax(b.flatten(b.gap(x)))])


def shufflenet() -> onnx.ModelProto:
    """A ShuffleNet v1 unit: grouped 1x1 convs, channel shuffle, depthwise 3x3, residual add."""
    b = Builder("shufflenet", opset=13)
    x = b.input("input", (1, 24, 16, 16))
    y = b.relu(b.bn(b.conv(x, 24, 1, pad=0, group=3, bias=False)))
    y = b.channel_shuffle(y, 3)
    y = b.bn(b.conv(y, 24, 3, group=24, bias=False))
    y = b.bn(b.conv(y, 24, 1, pad=0, group=3, bias=False))
    x = b.relu(b.add(x, y))
    return b.build([b.gemm(b.flatten(b.gap(x)), 10)])


def alexnet() -> onnx.ModelProto:
    """AlexNet's shape in miniature: large strided conv, LRN, overlapping max pools, dense head."""
    b = Builder("alexnet", opset=13)
    x = b.input("input", (1, 3, 63, 63))
    x = b.act("LRN", b.relu(b.conv(x, 16, 11, stride=4, pad=2)), size=5, alpha=1e-4, beta=0.75, bias=2.0)
    x = b.pool("MaxPool", x, 3, 2)
    x = b.pool("MaxPool", b.relu(b.conv(x, 32, 5)), 3, 2)
    x = b.relu(b.gemm(b.flatten(x), 64))
    return b.build([b.gemm(x, 10)])


def densenet() -> onnx.ModelProto:
    """A DenseNet block: each layer's output is concatenated to all later inputs."""
    b = Builder("densenet", opset=13)
    x = b.input("input", (1, 8, 16, 16))
    for _ in range(3):
        y = b.conv(b.relu(b.bn(x)), 8, 3, bias=False)
        x = b.concat([x, y])
    x = b.pool("AveragePool", b.conv(b.relu(b.bn(x)), 16, 1, pad=0, bias=False), 2, 2)
    return b.build([b.gemm(b.flatten(b.gap(x)), 10)])


def resnet18_224() -> onnx.ModelProto:
    """ResNet-18 at ImageNet size (1x3x224x224, 1000 classes): a benchmark model, not in MODELS."""
    b = Builder("resnet18_224", opset=13)
    x = b.input("input", (1, 3, 224, 224))
    x = b.pool("MaxPool", b.relu(b.bn(b.conv(x, 64, 7, stride=2, pad=3, bias=False))), 3, 2, pad=1)
    for cout, stride in ((64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)):
        x = _basic_block(b, x, cout, stride)
    return b.build([b.gemm(b.flatten(b.gap(x)), 1000)])


def _bottleneck(b: Builder, x: str, width: int, stride: int) -> str:
    """torchvision's ResNet-50 block (v1.5: the stride on the 3x3 conv)."""
    cout = 4 * width
    y = b.relu(b.bn(b.conv(x, width, 1, pad=0, bias=False)))
    y = b.relu(b.bn(b.conv(y, width, 3, stride=stride, bias=False)))
    y = b.bn(b.conv(y, cout, 1, pad=0, bias=False))
    short = x if stride == 1 and b.shapes[x][1] == cout else b.bn(b.conv(x, cout, 1, stride=stride, pad=0,
                                                                           bias=False))
    return b.relu(b.add(y, short))


def resnet50_224() -> onnx.ModelProto:
    """ResNet-50 at ImageNet size (1x3x224x224, 1000 classes): bench/threads.py's, in neither MODELS nor BENCH_MODELS
    (whose every model tests/replay.py compiles for each host)."""
    b = Builder("resnet50_224", opset=13)
    x = b.input("input", (1, 3, 224, 224))
    x = b.pool("MaxPool", b.relu(b.bn(b.conv(x, 64, 7, stride=2, pad=3, bias=False))), 3, 2, pad=1)
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for k in range(blocks):
            x = _bottleneck(b, x, width, stride if k == 0 else 1)
    return b.build([b.gemm(b.flatten(b.gap(x)), 1000)])


def squeezenet11_224() -> onnx.ModelProto:
    """SqueezeNet 1.1 at ImageNet size (1x3x224x224, 1000 classes), torchvision's layout: a benchmark model, not
    in MODELS (Fire modules: 1x1 squeeze, 1x1 and 3x3 expands joined by Concat, on 55, 27 and 13-wide planes)."""
    b = Builder("squeezenet11_224", opset=13)
    x = b.pool("MaxPool", b.relu(b.conv(b.input("input", (1, 3, 224, 224)), 64, 3, stride=2, pad=0)), 3, 2, ceil=1)
    x = _fire(b, _fire(b, x, 16, 64), 16, 64)
    x = b.pool("MaxPool", x, 3, 2, ceil=1)
    x = _fire(b, _fire(b, x, 32, 128), 32, 128)
    x = b.pool("MaxPool", x, 3, 2, ceil=1)
    for squeeze, expand in ((48, 192), (48, 192), (64, 256), (64, 256)):
        x = _fire(b, x, squeeze, expand)
    x = b.relu(b.conv(x, 1000, 1, pad=0))
    return b.build([b.flatten(b.gap(x))])


def _divisible(c: float, d: int = 8) -> int:
    return max(d, int(c + d / 2) // d * d)


def _mobilenetv2_imagenet(name: str, size: int, width: float, classes: int) -> onnx.ModelProto:
    b = Builder(name, opset=13)
    x = b.input("input", (1, 3, size, size))
    x = b.relu6(b.bn(b.conv(x, _divisible(32 * width), 3, stride=2, bias=False)))
    for expand, cout, repeat, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                                         (6, 160, 3, 2), (6, 320, 1, 1)):
        for k in range(repeat):
            x = _inverted_residual(b, x, _divisible(cout * width), stride if k == 0 else 1, expand)
    x = b.relu6(b.bn(b.conv(x, 1280, 1, pad=0, bias=False)))
    return b.build([b.gemm(b.flatten(b.gap(x)), classes)])


def mobilenetv2_224() -> onnx.ModelProto:
    """MobileNetV2 (width 1.0) at ImageNet size (1x3x224x224, 1000 classes): a benchmark model, not in MODELS."""
    return _mobilenetv2_imagenet("mobilenetv2_224", 224, 1.0, 1000)


def mobilenetv2_96() -> onnx.ModelProto:
    """MobileNetV2 width 0.35 at 96x96, 2 classes (a Visual Wake Words-sized network)."""
    return _mobilenetv2_imagenet("mobilenetv2_96", 96, 0.35, 2)


def mobilenetv1_96() -> onnx.ModelProto:
    """MobileNet v1 width 0.25 at 96x96, 2 classes: the MLPerf Tiny Visual Wake Words model's shape."""
    b = Builder("mobilenetv1_96", opset=13)
    x = b.input("input", (1, 3, 96, 96))
    x = b.relu6(b.bn(b.conv(x, 8, 3, stride=2, bias=False)))
    for cout, stride in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1),
                         (512, 1), (512, 1), (1024, 2), (1024, 1)):
        c = b.shapes[x][1]
        x = b.relu6(b.bn(b.conv(x, c, 3, stride=stride, group=c, bias=False)))
        x = b.relu6(b.bn(b.conv(x, cout // 4, 1, pad=0, bias=False)))
    return b.build([b.softmax(b.gemm(b.flatten(b.gap(x)), 2))])


def dscnn_kws() -> onnx.ModelProto:
    """DS-CNN (small) keyword spotting, MLPerf Tiny's shape: 49x10 MFCCs, 12 classes."""
    b = Builder("dscnn_kws", opset=13)
    x = b.input("input", (1, 1, 49, 10))
    x = b.relu(b.bn(b.conv(x, 64, 0, stride=2, pad=0, bias=True, kernel=(10, 4), pads=[5, 1, 4, 2])))
    for _ in range(4):
        x = b.relu(b.bn(b.conv(x, 64, 3, group=64, bias=False)))
        x = b.relu(b.bn(b.conv(x, 64, 1, pad=0, bias=False)))
    return b.build([b.softmax(b.gemm(b.flatten(b.gap(x)), 12))])


def _silu(b: Builder, x: str) -> str:
    """SiLU as exporters write it: x * Sigmoid(x)."""
    return b._node("Mul", [x, b.act("Sigmoid", x)], b.shapes[x])


def _mbconv(b: Builder, x: str, expand: int, k: int, stride: int, cout: int) -> str:
    """EfficientNet's MBConv (BatchNorms folded into the convs' biases, as exporters leave them):
    1x1 expand + SiLU, k x k depthwise + SiLU, squeeze-excite (ReduceMean, 1x1 + SiLU, 1x1 + Sigmoid, Mul),
    1x1 project, residual when the shape is kept."""
    cin = b.shapes[x][1]
    h = _silu(b, b.conv(x, cin * expand, 1, pad=0)) if expand != 1 else x
    c = b.shapes[h][1]
    h = _silu(b, b.conv(h, c, k, stride=stride, group=c))
    n, _, hh, ww = b.shapes[h]
    s = b._node("ReduceMean", [h], (n, c, 1, 1), axes=[2, 3], keepdims=1)
    s = b.act("Sigmoid", b.conv(_silu(b, b.conv(s, max(1, cin // 4), 1, pad=0)), c, 1, pad=0))
    h = b.conv(b._node("Mul", [h, s], (n, c, hh, ww)), cout, 1, pad=0)
    return b.add(h, x) if stride == 1 and cin == cout else h


def efficientnet_b0_224() -> onnx.ModelProto:
    """EfficientNet-B0 at ImageNet size (1x3x224x224, 1000 classes), torchvision's stage table: a benchmark
    model, not in MODELS (SiLU as Sigmoid and Mul, 3x3 and 5x5 depthwise, squeeze-excite)."""
    b = Builder("efficientnet_b0_224", opset=13)
    x = _silu(b, b.conv(b.input("input", (1, 3, 224, 224)), 32, 3, stride=2))
    for expand, k, stride, cout, repeat in ((1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                                            (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)):
        for i in range(repeat):
            x = _mbconv(b, x, expand, k, stride if i == 0 else 1, cout)
    x = _silu(b, b.conv(x, 1280, 1, pad=0))
    return b.build([b.gemm(b.flatten(b.gap(x)), 1000)])


def _bneck_v3(b: Builder, x: str, k: int, expand: int, cout: int, se: bool, hswish: bool, stride: int) -> str:
    """MobileNetV3's bottleneck as torchvision exports it (BatchNorms folded into the convs' biases): 1x1
    expand (none when expand equals the input's channels), k x k depthwise, each with ReLU or HardSwish,
    squeeze-excite (GlobalAveragePool, 1x1 + ReLU, 1x1 + HardSigmoid(1/6, 1/2), Mul), 1x1 project, and the
    residual when the shape is kept."""
    cin = b.shapes[x][1]

    def act(t: str) -> str:
        return b.act("HardSwish", t) if hswish else b.relu(t)

    h = act(b.conv(x, expand, 1, pad=0)) if expand != cin else x
    h = act(b.conv(h, expand, k, stride=stride, group=expand))
    if se:
        s = b.relu(b.conv(b.gap(h), _divisible(expand / 4), 1, pad=0))
        s = b.act("HardSigmoid", b.conv(s, expand, 1, pad=0), alpha=1.0 / 6.0, beta=0.5)
        h = b._node("Mul", [h, s], b.shapes[h])
    h = b.conv(h, cout, 1, pad=0)
    return b.add(h, x) if stride == 1 and cin == cout else h


def mobilenet_v3_small(size: int = 224, classes: int = 1000) -> onnx.ModelProto:
    """MobileNetV3-Small (Howard et al. 2019, table 2; torchvision's layout) at size x size, 1000 classes
    by default: a benchmark model, not in MODELS (HardSwish, HardSigmoid in squeeze-excite, 3x3 and 5x5
    depthwise)."""
    b = Builder(f"mobilenet_v3_small_{size}" if size != 224 else "mobilenet_v3_small", opset=14)
    x = b.act("HardSwish", b.conv(b.input("input", (1, 3, size, size)), 16, 3, stride=2))
    # kernel, expanded channels, out channels, squeeze-excite, HardSwish (else ReLU), stride
    for k, expand, cout, se, hswish, stride in (
            (3, 16, 16, True, False, 2), (3, 72, 24, False, False, 2), (3, 88, 24, False, False, 1),
            (5, 96, 40, True, True, 2), (5, 240, 40, True, True, 1), (5, 240, 40, True, True, 1),
            (5, 120, 48, True, True, 1), (5, 144, 48, True, True, 1), (5, 288, 96, True, True, 2),
            (5, 576, 96, True, True, 1), (5, 576, 96, True, True, 1)):
        x = _bneck_v3(b, x, k, expand, cout, se, hswish, stride)
    x = b.act("HardSwish", b.conv(x, 576, 1, pad=0))
    x = b.act("HardSwish", b.gemm(b.flatten(b.gap(x)), 1024))
    return b.build([b.gemm(x, classes)])


def ae_dense() -> onnx.ModelProto:
    """MLPerf Tiny's anomaly-detection autoencoder: 640 -> 128 x4 -> 8 -> 128 x4 -> 640, ReLU between
    (its BatchNorms folded, as converters leave them)."""
    b = Builder("ae_dense", opset=13)
    x = b.input("input", (1, 640))
    for width in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = b.relu(b.gemm(x, width))
    return b.build([b.gemm(x, 640)])


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp": mlp, "lenet": lenet, "resnet": resnet, "mobilenetv2": mobilenetv2, "inception": inception,
    "squeezenet": squeezenet, "shufflenet": shufflenet, "alexnet": alexnet, "densenet": densenet,
}


# Benchmark models (bench/models.py), not in the test suite; resnet18_224 is opt-in there (slow).
BENCH_MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mobilenetv1_96": mobilenetv1_96, "mobilenetv2_96": mobilenetv2_96, "dscnn_kws": dscnn_kws,
    "resnet18_224": resnet18_224, "mobilenetv2_224": mobilenetv2_224, "ae_dense": ae_dense,
    "efficientnet_b0_224": efficientnet_b0_224, "squeezenet11_224": squeezenet11_224,
    "mobilenet_v3_small": mobilenet_v3_small,
}


def build(name: str) -> onnx.ModelProto:
    return {**MODELS, **BENCH_MODELS}[name]()


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    return {vi.name: rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(np.float32)
            for vi in model.graph.input if vi.name not in inits}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", choices=sorted({**MODELS, **BENCH_MODELS}))
    p.add_argument("--all", action="store_true", help="write every test model (MODELS) into the -o directory")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--inputs", help="also write random inputs (.npz) here (single model only)")
    args = p.parse_args()
    if args.all:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        for name in MODELS:
            onnx.save(build(name), out / f"{name}.onnx")
        return
    if not args.model:
        p.error("name a model or pass --all")
    model = build(args.model)
    onnx.save(model, args.output)
    if args.inputs:
        np.savez(args.inputs, **random_inputs(model))


if __name__ == "__main__":
    main()
