"""Issue 27 item 4: the four MLPerf Tiny networks of bench/keras_mlperf.py as full-int8 models, made the
two ways users make them, for bench/cortex_m_mlperf_int8.py:

    NAME_int8.tflite   tf.lite.TFLiteConverter, full-int8 post-training quantisation (int8 inputs and
                       outputs, TFLITE_BUILTINS_INT8) with a representative dataset of 100 seeded
                       standard-normal inputs: what TFLM runs
    NAME_int8.onnx     onnxruntime's quantize_static over NAME_folded.onnx (QDQ, int8 activations,
                       per-channel int8 weights) with 16 seeded standard-normal calibration inputs

The Keras networks are rebuilt with bench/keras_mlperf.py's seeded weights (the same network as the
committed fp32 files). The .tflite needs TensorFlow and the .onnx onnxruntime, which live in
different Pythons here; neither is needed by aotc or CI, and the files are committed:

    /work/venvs/tf/bin/python bench/keras_mlperf_int8.py --tflite [NAME ...]
    python3 bench/keras_mlperf_int8.py --onnx [NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "models" / "keras"
sys.path[:0] = [str(HERE), str(HERE.parent / "examples")]
NAMES = ("kws_dscnn", "ic_resnet8", "vww_mobilenet", "ad_autoencoder")


def tflite_int8(name: str, out: Path, seed: int = 0, samples: int = 100) -> Path:
    """Full-int8 .tflite of keras_mlperf's network `name` (the converter's BatchNorm folding)."""
    import keras
    import tensorflow as tf
    from keras_mlperf import MODELS, Builder, seeded

    keras.utils.set_random_seed(seed)
    model = keras.Model(*MODELS[name](Builder(fold=False)), name=name)
    seeded(model, seed)
    shape = (1, *model.inputs[0].shape[1:])

    def representative():
        rng = np.random.default_rng(1)
        for _ in range(samples):
            yield [rng.standard_normal(shape).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    path = out / f"{name}_int8.tflite"
    path.write_bytes(conv.convert())
    return path


def onnx_int8(name: str, out: Path) -> Path:
    """QDQ int8 .onnx: quantize_static over the BatchNorm-folded fp32 ONNX."""
    import onnx
    from quantize import quantized

    model = quantized(onnx.load(str(out / f"{name}_folded.onnx")), "QDQ", activations="int8", calibration=16)
    path = out / f"{name}_int8.onnx"
    onnx.save(model, path)
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", help=f"some of {', '.join(NAMES)} (default: all)")
    p.add_argument("--tflite", action="store_true", help="write NAME_int8.tflite (needs TensorFlow)")
    p.add_argument("--onnx", action="store_true", help="write NAME_int8.onnx (needs onnxruntime)")
    p.add_argument("-o", "--out", default=str(OUT))
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.names or NAMES:
        for make, wanted in ((tflite_int8, args.tflite), (onnx_int8, args.onnx)):
            if wanted:
                path = make(name, out)
                print(f"{path} {path.stat().st_size} B")


if __name__ == "__main__":
    main()
