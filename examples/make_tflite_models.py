"""Make the small .tflite models under tests/models/tflite/ as firmware teams make them (issue 29).

Keras -> tf.lite.TFLiteConverter, float and full-int8 post-training quantisation with a
representative dataset. Needs TensorFlow, which neither aotc nor its tests do: run it in a venv
of its own and commit the files it writes:

    python -m venv /work/venvs/tf && /work/venvs/tf/bin/pip install tensorflow-cpu
    /work/venvs/tf/bin/python examples/make_tflite_models.py [OUT_DIR [MODEL...]]

The large models (LARGE below: MobileNetV2 224, about 4 MB a file) are made only when named, and are
not committed (bench/models/large/ is git-ignored); `bench/arenas.py --large` makes them on demand:

    /work/venvs/tf/bin/python examples/make_tflite_models.py bench/models/large mobilenet_v2_224

The models are in make_tflite_models_keras.py (Keras), _written.py (written with the schema), _graphs.py
(tf.functions) and _patch.py (edits of converted files).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import tensorflow as tf
from make_tflite_models_graphs import GRAPHS
from make_tflite_models_keras import (
    acts,
    arith,
    arrays,
    branch,
    compare,
    dwmult,
    excite,
    gates,
    hybrid_conv,
    hybrid_deconv,
    hybrid_lstm,
    hybrid_mlp,
    keyword,
    lstm,
    lstm3,
    mathops,
    mathq,
    melspec,
    mirror,
    misc,
    mobilenet_v2_224,
    mobilenet_v2_224_torchpad,
    moves,
    normq,
    ops,
    padded,
    person,
    pruned,
    reduce,
    residual,
    resize,
    resolver,
    rnnshare,
    shuffle,
    sine,
    split,
    stream,
    variants,
)
from make_tflite_models_patch import lstm_variants, not_equal, relu_0_to_1, requant_outputs, symmetric_inputs
from make_tflite_models_written import (
    bidi,
    composite_float,
    detect_float,
    embed_hybrid,
    fill_int8,
    lstm_step,
    rnn_written,
    shapes_float,
    stablehlo_float,
    svdf_int8,
    svdf_written,
    window_float,
)

keras = tf.keras

# dynamic-range quantisation (int8 weights, float activations: LiteRT's hybrid kernels), issue 50
HYBRID = {"hybrid_mlp": (hybrid_mlp, False), "hybrid_conv": (hybrid_conv, False),
          "hybrid_conv_pt": (lambda: hybrid_conv(False), True), "hybrid_lstm": (hybrid_lstm, False),
          "hybrid_deconv": (hybrid_deconv, False)}

# int4 weights (ai-edge-quantizer's recipes) of hybrid_mlp's float model
INT4 = {"int4_dynamic": "dynamic_wi4_afp32", "int4_weight_only": "weight_only_wi4_afp32"}

FP16 = ("keyword", "excite")  # also written with float16 weights (each behind a DEQUANTIZE), issue 50

SPARSE = ("pruned",)  # converted with EXPERIMENTAL_SPARSITY

FLOAT_IO = ("keyword",)  # also written int8 inside with float inputs and outputs

# also written 16x8 (int16 activations), moves also with float inputs and outputs
X16 = ("sine", "moves", "keyword", "person", "residual", "padded", "arrays", "mathq")

X16_ONLY = ("gates", "arith")  # written in 16x8 only

# their 16x8 files from other models
X16_MODELS = {"arrays": lambda: arrays(sixteen=True), "mathq": lambda: mathq(sixteen=True)}

MODELS = {"sine": sine, "keyword": keyword, "person": person, "ops": ops, "residual": residual, "moves": moves,
          "acts": acts, "excite": excite, "shuffle": shuffle, "resize": resize, "lstm": lstm,
          "stream": stream, "lstm3": lstm3, "branch": branch, "gates": gates, "arith": arith, "variants": variants,
          "pruned": pruned, "mirror": mirror, "mathops": mathops, "reduce": reduce, "melspec": melspec, "misc": misc,
          "resolver": resolver, "padded": padded, "arrays": arrays,
          "compare": compare, "mathq": mathq, "rnnshare": rnnshare, "normq": normq, "split": split, "dwmult": dwmult}

# made only when named (too large to commit), int8 only
LARGE = {"mobilenet_v2_224": mobilenet_v2_224, "mobilenet_v2_224_torchpad": mobilenet_v2_224_torchpad}

# resize is written float only (mathq has int8 and 16x8 RESIZE_BILINEAR); lstm is also written full-int8
# (the converter's integer LSTM)
# no float file: its float lowerings are tested by other models
INT8_ONLY = ("arrays", "compare", "mathq", "normq", "split", "dwmult")

FLOAT_ONLY = ("resize", "stream", "lstm3", "branch", "variants", "mirror", "mathops", "reduce", "melspec", "misc",
              "resolver", "rnnshare")

def representative(model: keras.Model):
    rng = np.random.default_rng(1)
    shape = (1, *model.inputs[0].shape[1:])

    def gen():
        for _ in range(100):
            if len(model.inputs) == 2:  # gates: x on [-1, 1], z on [-12, 12], by name (the file may order them)
                second = model.inputs[1].name.split(":")[0]
                yield {"x": rng.uniform(-1, 1, shape).astype(np.float32),
                       second: rng.uniform(*(-12, 12) if second == "z" else (-1, 1),
                                           (1, *model.inputs[1].shape[1:])).astype(np.float32)}
            elif shape == (1, 1):
                yield [rng.uniform(0, 2 * np.pi, shape).astype(np.float32)]
            else:
                yield [rng.uniform(-1, 1, shape).astype(np.float32)]
    return gen

def quantize_int4(model: keras.Model, recipe_name: str) -> bytes:
    """int4 weights as ai-edge-quantizer writes them (`pip install ai-edge-quantizer`): TensorType INT4, two values
    a byte, a scale per channel. dynamic_wi4_afp32: FULLY_CONNECTED reads them itself (LiteRT's hybrid kernel, the
    input quantized symmetrically); weight_only_wi4_afp32: a DEQUANTIZE of each, float arithmetic."""
    from ai_edge_quantizer import quantizer, recipe

    qt = quantizer.Quantizer(bytearray(convert(model, False)))
    qt.load_quantization_recipe(getattr(recipe, recipe_name)())
    return bytes(qt.quantize().quantized_model)

def convert_hybrid(model: keras.Model, per_tensor: bool = False) -> bytes:
    """Dynamic-range quantisation: Optimize.DEFAULT with no representative dataset (int8 weights, float32
    activations); per_tensor: one weight scale per tensor (the converter's per-channel switch off)."""
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if per_tensor:
        conv._experimental_disable_per_channel = True
    return conv.convert()

def convert(model: keras.Model, int8: bool, float_io: bool = False, x16: bool = False, fp16: bool = False,
            sparse: bool = False) -> bytes:
    """float_io: int8 inside, float32 inputs and outputs (QUANTIZE / DEQUANTIZE at the edges), the
    converter's default when inference_input_type is not set. x16: 16x8 (int16 activations, int8
    weights), with int16 inputs and outputs unless float_io. fp16: the converter's float16 quantisation
    (float16 weights, float32 arithmetic). sparse: pruned weights stored sparse."""
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if fp16:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.target_spec.supported_types = [tf.float16]
    if sparse:
        conv.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY, *([tf.lite.Optimize.DEFAULT] if int8 else [])]
    if int8:
        conv.optimizations = conv.optimizations or [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative(model)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
                                          if x16 else tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if not float_io:
            conv.inference_input_type = tf.int16 if x16 else tf.int8
            conv.inference_output_type = tf.int16 if x16 else tf.int8
    return conv.convert()

def main(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, write in (("svdf_int8", svdf_int8), ("shapes_float", shapes_float),  # written with the schema
                        ("stablehlo_float", stablehlo_float), ("rnn_float", rnn_written),
                        ("rnn_hybrid", lambda: rnn_written(True)), ("lstmstep_float", lstm_step),
                        ("lstmstep_hybrid", lambda: lstm_step(True)), ("varshare_float", lambda: lstm_step(share=True)),
                        ("bidi_float", bidi),
                        ("bidi_hybrid", lambda: bidi(True)), ("embed_hybrid", embed_hybrid),
                        ("svdf_float", svdf_written), ("svdf_hybrid", lambda: svdf_written(True)),
                        ("fill_int8", fill_int8), ("detect_float", detect_float), ("composite_float", composite_float),
                        ("window_float", window_float)):
        if not names or name.split("_")[0] in names:
            (out / f"{name}.tflite").write_bytes(write())
            print(f"wrote {out / name}.tflite")
    for name, make in GRAPHS.items():
        if not names or name in names:
            f, specs = make()
            conv = tf.lite.TFLiteConverter.from_concrete_functions([tf.function(f).get_concrete_function(*specs)])
            path = out / f"{name}_float.tflite"
            path.write_bytes(conv.convert())
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    for name, (make, per_tensor) in HYBRID.items():
        if not names or name in names:
            keras.utils.set_random_seed(0)
            data = convert_hybrid(make(), per_tensor)
            path = out / f"{name}.tflite"
            path.write_bytes(symmetric_inputs(data) if name == "hybrid_mlp" else data)
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    for name, recipe_name in INT4.items():
        if not names or name in names:
            keras.utils.set_random_seed(0)
            path = out / f"{name}.tflite"
            path.write_bytes(quantize_int4(hybrid_mlp(), recipe_name))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    for name, make in {**MODELS, **LARGE}.items():
        if names and name not in names or not names and name in LARGE:
            continue
        keras.utils.set_random_seed(0)  # seeds tf_keras too (one TensorFlow random state)
        model = make()
        for int8 in ((True,) if name in LARGE or name in INT8_ONLY else () if name in X16_ONLY
                     else (False,) if name in FLOAT_ONLY else (False, True)):
            path = out / f"{name}_{'int8' if int8 else 'float'}.tflite"
            patch = {"shuffle": relu_0_to_1, "variants": lstm_variants, "compare": not_equal}.get(name, lambda d: d)
            path.write_bytes(patch(convert(model, int8, sparse=name in SPARSE)))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
        if name in FP16:
            path = out / f"{name}_fp16.tflite"
            path.write_bytes(convert(model, False, fp16=True))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
        if name in FLOAT_IO:
            path = out / f"{name}_int8_float_io.tflite"
            path.write_bytes(convert(model, True, float_io=True))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
        if name in X16 + X16_ONLY:
            for float_io in (False, True) if name == "moves" else (False,):
                path = out / f"{name}_16x8{'_float_io' if float_io else ''}.tflite"
                if name in X16_MODELS:
                    keras.utils.set_random_seed(0)
                    model = X16_MODELS[name]()
                data = convert(model, True, float_io=float_io, x16=True)
                path.write_bytes(requant_outputs(data) if name == "arith" else data)
                print(f"wrote {path} ({path.stat().st_size} bytes)")

if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests/models/tflite",
         sys.argv[2:])
