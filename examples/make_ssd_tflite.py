"""Make a small SSD-style detector that ends in TFLite_Detection_PostProcess (issue 50), as TensorFlow's Object
Detection API exports one for TFLite: a backbone with box and class heads on two feature maps, the heads'
outputs concatenated into box encodings [1, anchors, 4] and class scores [1, anchors, classes + 1] (a sigmoid,
the background column first), and a tf.function that `experimental_implements` TFLite_Detection_PostProcess
with its options, which the converter turns into the custom op with constant anchors. Untrained: random
weights, seeded. Needs TensorFlow, which neither aotc nor its tests do:

    /work/tfvenv/bin/python examples/make_ssd_tflite.py OUT_DIR

writes OUT_DIR/ssd_tiny_float.tflite and OUT_DIR/ssd_tiny_int8.tflite (the backbone and heads full-integer
quantized with a representative dataset; the converter leaves the post-processing float behind a DEQUANTIZE).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

CLASSES = 5  # without the background
OPTIONS = {"max_detections": 10, "max_classes_per_detection": 1, "detections_per_class": 20, "use_regular_nms": False,
           "nms_score_threshold": 0.3, "nms_iou_threshold": 0.5, "num_classes": CLASSES, "y_scale": 10.0,
           "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}


def anchors(maps: tuple[int, ...] = (8, 4), shapes: tuple[tuple[float, float], ...] = ((1, 1), (2, 1), (1, 2))
            ) -> np.ndarray:
    """[anchors, 4] (y, x, h, w): 3 shapes on each cell of each feature map, larger on the coarser map."""
    rows = []
    for k, f in enumerate(maps):
        size = 0.2 + 0.3 * k
        for i in range(f):
            for j in range(f):
                rows += [((i + 0.5) / f, (j + 0.5) / f, size * a, size * b) for a, b in shapes]
    return np.array(rows, np.float32)


def backbone():
    """64 x 64 RGB -> box encodings and class scores over anchors() (8 x 8 and 4 x 4 maps, 3 anchors a cell):
    convs of seeded random constant weights (no variables for the converter to keep)."""
    rng = np.random.default_rng(0)

    def conv(x, c_in, c_out, k, stride, relu=True):
        w = tf.constant(rng.normal(0, (2 / (k * k * c_in)) ** 0.5, (k, k, c_in, c_out)).astype(np.float32))
        b = tf.constant(rng.normal(0, 0.1, c_out).astype(np.float32))
        y = tf.nn.conv2d(x, w, stride, "SAME") + b
        return tf.nn.relu(y) if relu else y

    def net(image):
        h = conv(image, 3, 8, 3, 2)
        h = conv(h, 8, 16, 3, 2)
        f8 = conv(h, 16, 16, 3, 2)  # 8 x 8
        f4 = conv(f8, 16, 16, 3, 2)  # 4 x 4
        boxes, scores = [], []
        for f, cells in ((f8, 64), (f4, 16)):
            boxes.append(tf.reshape(conv(f, 16, 3 * 4, 1, 1, relu=False), (1, cells * 3, 4)))
            scores.append(tf.reshape(conv(f, 16, 3 * (CLASSES + 1), 1, 1, relu=False), (1, cells * 3, CLASSES + 1)))
        return tf.concat(boxes, 1), tf.sigmoid(tf.concat(scores, 1))

    return net


def _implements() -> str:
    """The signature the converter fuses into TFLite_Detection_PostProcess, options as attributes."""
    def attr(k, v):
        kind = "b" if isinstance(v, bool) else "i" if isinstance(v, int) else "f"
        value = str(v).lower() if kind == "b" else f"{v}"
        return f'attr {{ key: "{k}" value {{ {kind}: {value} }} }}'
    return " ".join(['name: "TFLite_Detection_PostProcess"', *(attr(k, v) for k, v in OPTIONS.items())])


class Detector(tf.Module):
    """The backbone and the post-processing stand-in, saved as a SavedModel (the converter fuses the stand-in
    into the custom op there, as the Object Detection API's export does)."""

    def __init__(self):
        super().__init__()
        self.net = backbone()
        self.anchors = tf.constant(anchors())

    @tf.function(experimental_implements=_implements())
    def postprocess(self, box_encodings, class_predictions, anchor_boxes):
        boxes = tf.constant(0.0, tf.float32, name="boxes")
        classes = tf.constant(0.0, tf.float32, name="classes")
        scores = tf.constant(0.0, tf.float32, name="scores")
        num = tf.constant(0.0, tf.float32, name="num_detections")
        return boxes, classes, scores, num  # a stand-in: the converter replaces the function by the op

    @tf.function(input_signature=[tf.TensorSpec([1, 64, 64, 3], tf.float32)])
    def __call__(self, image):
        box_encodings, class_predictions = self.net(image)
        return self.postprocess(box_encodings, class_predictions, self.anchors)


def convert(saved: str, int8: bool) -> bytes:
    conv = tf.lite.TFLiteConverter.from_saved_model(saved)
    conv.allow_custom_ops = True
    if int8:
        rng = np.random.default_rng(0)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([rng.uniform(0, 1, (1, 64, 64, 3)).astype(np.float32)]
                                               for _ in range(20))
    return conv.convert()


def main(out: Path) -> None:
    import tempfile

    out.mkdir(parents=True, exist_ok=True)
    saved = tempfile.mkdtemp()
    module = Detector()
    tf.saved_model.save(module, saved, signatures=module.__call__.get_concrete_function())
    for int8 in (False, True):
        path = out / f"ssd_tiny_{'int8' if int8 else 'float'}.tflite"
        path.write_bytes(convert(saved, int8))
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("."))
