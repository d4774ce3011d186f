"""Issue 28: the four MLPerf Tiny reference networks built in Keras and exported the way firmware teams
export them, for `bench/keras_bench.py` and `aotc bench --tflite`.

Each network (KWS DS-CNN, IC ResNet-8, VWW MobileNet-v1 0.25, AD FC autoencoder; the layer lists of
mlcommons/tiny's reference `keras_model.py` files) gets random but seeded weights and BatchNorm
statistics far from the identity (so a fold that drops one shows), and is written three ways:

    NAME.onnx          tf2onnx.convert.from_keras, opset 13
    NAME.tflite        tf.lite.TFLiteConverter.from_keras_model, float32 (what LiteRT runs)
    NAME_folded.onnx   the same network with each BatchNorm folded into the Conv/Dense before it
                       (what a torch export looks like), through tf2onnx: the Cortex-M reference

Needs TensorFlow and tf2onnx, which neither aotc nor CI does; the files are committed:

    /work/venvs/tf/bin/python bench/keras_mlperf.py [OUT_DIR]      # default bench/models/keras
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "models" / "keras"


class Builder:
    """Layers named in creation order (c1, bn1, ...) so the folded twin finds its weights by name.
    fold=True leaves out every BatchNorm; `fold_into` then maps each conv/dense to its BatchNorm."""

    def __init__(self, fold: bool):
        import keras

        self.keras, self.L, self.fold, self.k = keras, keras.layers, fold, 0
        self.fold_into: dict[str, str] = {}

    def _name(self, base: str) -> str:
        self.k += 1
        return f"{base}{self.k}"

    def bn(self, x, producer: str):
        name = self._name("bn")
        if self.fold:
            self.fold_into[producer] = name
            return x
        return self.L.BatchNormalization(name=name)(x)

    def conv_bn(self, x, filters: int, kernel, strides=1, relu: bool = True, depthwise: bool = False):
        if depthwise:
            layer = self.L.DepthwiseConv2D(kernel, strides=strides, padding="same", name=self._name("dw"))
        else:
            layer = self.L.Conv2D(filters, kernel, strides=strides, padding="same", name=self._name("c"))
        x = self.bn(layer(x), layer.name)
        return self.L.Activation("relu")(x) if relu else x

    def dense_bn(self, x, units: int):
        layer = self.L.Dense(units, name=self._name("d"))
        return self.L.Activation("relu")(self.bn(layer(x), layer.name))


def kws_dscnn(b: Builder):
    """DS-CNN (mlcommons/tiny keyword_spotting): 49 x 10 MFCCs, 64 filters, four separable blocks."""
    L = b.L
    inp = b.keras.Input((49, 10, 1), batch_size=1, name="input_1")
    x = L.Dropout(0.2)(b.conv_bn(inp, 64, (10, 4), strides=2))
    for _ in range(4):
        x = b.conv_bn(x, 64, 3, depthwise=True)
        x = b.conv_bn(x, 64, 1)
    x = L.AveragePooling2D((24, 5))(L.Dropout(0.4)(x))
    return inp, L.Dense(12, activation="softmax", name="logits")(L.Flatten()(x))


def ic_resnet8(b: Builder):
    """ResNet-8 (mlcommons/tiny image_classification, resnet_v1_eembc): 32 x 32 RGB, 16/32/64."""
    L = b.L
    inp = b.keras.Input((32, 32, 3), batch_size=1, name="input_1")
    x = b.conv_bn(inp, 16, 3)
    for filters, stride in ((16, 1), (32, 2), (64, 2)):
        y = b.conv_bn(x, filters, 3, strides=stride)
        y = b.conv_bn(y, filters, 3, relu=False)
        if stride != 1:  # the shortcut: a strided 1x1 conv, no BatchNorm
            x = L.Conv2D(filters, 1, strides=stride, padding="same", name=b._name("sc"))(x)
        x = L.Activation("relu")(L.Add()([x, y]))
    x = L.AveragePooling2D(8)(x)
    return inp, L.Dense(10, activation="softmax", name="logits")(L.Flatten()(x))


def vww_mobilenet(b: Builder):
    """MobileNet-v1 alpha 0.25 (mlcommons/tiny visual_wake_words): 96 x 96 RGB, two classes."""
    L = b.L
    inp = b.keras.Input((96, 96, 3), batch_size=1, name="input_1")
    x = b.conv_bn(inp, 8, 3, strides=2)
    for filters, stride in ((16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), *[(128, 1)] * 5,
                            (256, 2), (256, 1)):
        x = b.conv_bn(x, 0, 3, strides=stride, depthwise=True)
        x = b.conv_bn(x, filters, 1)
    x = L.Dropout(0.3)(L.AveragePooling2D(3)(x))
    return inp, L.Dense(2, activation="softmax", name="logits")(L.Flatten()(x))


def ad_autoencoder(b: Builder):
    """The FC autoencoder (mlcommons/tiny anomaly_detection): 640 -> 4 x 128 -> 8 -> 4 x 128 -> 640."""
    inp = b.keras.Input((640,), batch_size=1, name="input_1")
    x = inp
    for units in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = b.dense_bn(x, units)
    return inp, b.L.Dense(640, name="out")(x)


MODELS: dict[str, Callable] = {"kws_dscnn": kws_dscnn, "ic_resnet8": ic_resnet8, "vww_mobilenet": vww_mobilenet,
                               "ad_autoencoder": ad_autoencoder}


def seeded(model, seed: int) -> None:
    """Weights from numpy's seeded generator (He-scaled kernels, small biases) and BatchNorm
    statistics far from the identity: gamma ~ 1 +- 0.2, beta and mean ~ +-0.1, var in [0.5, 1.5)."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        ws = layer.get_weights()
        if not ws:
            continue
        if type(layer).__name__ == "BatchNormalization":
            c = ws[0].shape[0]
            ws = [1 + 0.2 * rng.standard_normal(c), 0.1 * rng.standard_normal(c), 0.1 * rng.standard_normal(c),
                  0.5 + rng.random(c)]
        else:
            kernel = ws[0]
            fan_in = int(np.prod(kernel.shape[:-1])) if type(layer).__name__ != "DepthwiseConv2D" \
                else int(np.prod(kernel.shape[:2]))
            ws = [rng.standard_normal(kernel.shape) * np.sqrt(2.0 / fan_in),
                  *[0.1 * rng.standard_normal(w.shape) for w in ws[1:]]]
        layer.set_weights([np.asarray(w, np.float32) for w in ws])


def fold_weights(src, dst, fold_into: dict[str, str]) -> None:
    """dst (no BatchNorm) gets src's weights, each conv/dense with its BatchNorm folded in."""
    for layer in dst.layers:
        ws = src.get_layer(layer.name).get_weights() if layer.get_weights() else []
        if layer.name in fold_into:
            bn = src.get_layer(fold_into[layer.name])
            gamma, beta, mean, var = (w.astype(np.float64) for w in bn.get_weights())
            scale = gamma / np.sqrt(var + bn.epsilon)
            kernel, bias = ws[0].astype(np.float64), ws[1].astype(np.float64)
            if type(layer).__name__ == "DepthwiseConv2D":  # (kh, kw, cin, multiplier): channel cin*m+j
                kernel = kernel * scale.reshape(kernel.shape[2], kernel.shape[3])
            else:  # output channels last
                kernel = kernel * scale
            ws = [kernel, (bias - mean) * scale + beta]
        if ws:
            layer.set_weights([np.asarray(w, np.float32) for w in ws])


def export(name: str, out: Path, seed: int = 0) -> list[Path]:
    import keras
    import onnx
    import tensorflow as tf
    import tf2onnx

    make = MODELS[name]
    keras.utils.set_random_seed(seed)
    model = keras.Model(*make(Builder(fold=False)), name=name)
    seeded(model, seed)
    fb = Builder(fold=True)
    folded = keras.Model(*make(fb), name=f"{name}_folded")
    fold_weights(model, folded, fb.fold_into)
    x = np.random.default_rng(1).standard_normal((1, *model.inputs[0].shape[1:])).astype(np.float32)
    want = model(x, training=False).numpy()
    drift = float(np.max(np.abs(folded(x, training=False).numpy() - want)))
    assert drift < 1e-3 * max(1.0, float(np.max(np.abs(want)))), f"{name}: folded twin drifts by {drift}"
    written = []
    for m, stem in ((model, name), (folded, f"{name}_folded")):
        spec = (tf.TensorSpec((1, *m.inputs[0].shape[1:]), tf.float32, name="input_1"),)
        proto, _ = tf2onnx.convert.from_keras(m, input_signature=spec, opset=13)
        proto.producer_name = "tf2onnx"
        onnx.save(proto, out / f"{stem}.onnx")
        written.append(out / f"{stem}.onnx")
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    (out / f"{name}.tflite").write_bytes(conv.convert())
    written.append(out / f"{name}.tflite")
    return written


def main(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in names or MODELS:
        for path in export(name, out):
            print(f"{path} {path.stat().st_size} B")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT, sys.argv[2:])
