"""Issue 64: real-size models on the host, made the way users make them, each compiled by aotc and timed against
onnxruntime, LiteRT (XNNPACK) and OpenVINO in the same rounds, with each model's arithmetic rate as a share of the
core's measured peak.

Two steps, in two kinds of Python, because neither aotc nor its tests may need TensorFlow or torch:

1. `--make [DIR]` writes the models (random weights, seeded) into DIR (default bench/models/large/, git-ignored:
   the files are large and not committed). Run it once in each exporter's Python; each part is skipped, with a
   printed note, where its packages are missing:

       # Keras / TensorFlow (TF 2.21, keras 3) and tf2onnx
       python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow tf2onnx
       /tmp/tfvenv/bin/python bench/host_models.py --make

       # torch (a CPU wheel), torchvision, timm, onnxscript (torch.onnx.export's default exporter needs it) and
       # onnxruntime's quantizer; a venv of its own, without --system-site-packages
       python3 -m venv /tmp/torchvenv
       /tmp/torchvenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl torchvision timm onnx onnxscript onnxruntime
       /tmp/torchvenv/bin/python bench/host_models.py --make

   (Measured with TF 2.21, keras 3.15, tf2onnx 1.17, torch 2.13.0+cpu, torchvision 0.28, timm 1.0.31, onnxruntime
   1.32. PyPI's torchvision is a CUDA build whose ops library does not load beside a CPU torch:
   import_torchvision works around that; the models use none of its ops.)

   - Keras applications ResNet-50, MobileNetV2 1.0 224, EfficientNet-B0, MobileNetV3-Large 224 (weights=None,
     BatchNormalization statistics set from one seeded input: calibrate_batchnorm) and a 4-layer
     MultiHeadAttention encoder (seq 128, d 256, 4 heads, GELU MLP of 1024, post-norm; the Keras twin of
     bench/keras_encoder.py's graph, which is tf2onnx's output built by hand), each as
     NAME.float.tflite (TFLiteConverter), NAME.int8.tflite (full-integer post-training quantisation:
     TFLITE_BUILTINS_INT8, int8 input and output, a representative dataset of --samples seeded inputs in the
     range the network takes) and NAME.tf2onnx.onnx (tf2onnx from a SavedModel, opset 17: write_tf2onnx);
   - torchvision ResNet-18 and MobileNetV2 (weights=None; resnet18, mobilenet_v2_torch) and timm ConvNeXt-atto,
     MobileViT-xxs and ViT-tiny (pretrained=False) as NAME.torch.onnx (torch.onnx.export, its default
     exporter, weights inside the file); the two torchvision exports also through onnxruntime's quantizer
     (quant_pre_process, then quantize_static on --samples seeded standard-normal inputs, its default int8
     types) as NAME.qdq.onnx and NAME.qoperator.onnx.

   --models NAME ... makes only those networks. Each conversion takes seconds to a minute or so (the int8 ones
   the longest; ResNet-50's took 33 s on an otherwise busy 2-core machine).

2. Without --make (aotc's Python): for each model file in DIR (or those --models names: a file name, with or
   without its extension, or a network's name for all its forms), `aotc FILE -o WORK/NAME` for the host
   (--threads N passed on), `cmake --build`, then aot.bench.bench_one, the function `aotc bench` runs: the
   bundle and each reference back to back in every round, medians of per-round ratios, wall-clock latency
   and the process's CPU time per inference (on a shared machine a preempted call's latency grows, its CPU
   time does not). The references per form:

   - .tflite: LiteRT on the file and OpenVINO; for a float file, onnxruntime too, on the tf2onnx export of the
     same Keras model (NAME.tf2onnx.onnx, matched by position), OpenVINO then reading that ONNX file;
   - tf2onnx ONNX: onnxruntime and OpenVINO on it, and LiteRT on NAME.float.tflite;
   - torch / QDQ / QOperator ONNX: onnxruntime and OpenVINO on it (a file OpenVINO cannot read is timed
     without it, and the row says so).

   --threads N runs the bundles (aotc --threads N) and every reference on N threads.

   --isa avx2 measures what a user of a machine without AVX-512 gets: the bundles compiled as aotc compiles on
   such a machine (--host-isa generic) and built for one (-DAOTC_NATIVE=OFF, CMAKE_C_FLAGS=-march=x86-64-v3:
   AVX2, FMA, F16C, BMI2; no VNNI), OpenVINO held to the same instructions (ONEDNN_MAX_CPU_ISA=AVX2, set before
   it loads), the peak measured with them. onnxruntime (MLAS) and LiteRT (XNNPACK) choose their kernels from
   CPUID with no switch: on an AVX-512 machine they keep their AVX-512 kernels, so the ratios to them are upper
   bounds of the ratios an AVX2 machine would give (their AVX2 kernels are not faster than their AVX-512 ones).

   The table (markdown on
   stdout, and JSON in --json) gives per model and form: aotc's wall and CPU ms, each engine's, aotc / the
   fastest engine (median over rounds) and which it is, the MACs (Conv/ConvTranspose/Gemm/MatMul or their
   TFLite namesakes, aot.bench.graph_macs and tflite_macs; a QOperator file counted on the float export it was
   quantized from), aotc's rate (2 x MACs / wall time: GFLOP/s for float, GOP/s for int8) as a share of
   N cores' peak, aotc's and the fastest engine's rate over their CPU time per inference as a share of one
   core's peak (bench_model), the bundle's max abs error against its reference, and the 1-minute load average
   before and after the timed part. The peak is measured here, per core, by a small C loop (measure_peak:
   independent FMA chains, and VNNI dot-product chains for int8) on this thread's CPU time, at the start and the
   end of a run (the higher: a shared virtual core's clock drifts).

       python3 bench/host_models.py [--dir DIR] [--models resnet50.int8 mobilenet_v2.float] [--rounds 3]
                                     [--threads N] [--work /tmp/aotc_host_models] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "bench" / "models" / "large"
SEED = 64

# Keras networks: builder name -> (input shape without the batch, the range of the representative inputs: what
# the network takes, pixels for those with their own preprocessing layers, else the preprocessed range)
KERAS = {
    "mobilenet_v2": ((224, 224, 3), (-1.0, 1.0)),
    "resnet50": ((224, 224, 3), (-128.0, 128.0)),
    "efficientnet_b0": ((224, 224, 3), (0.0, 255.0)),
    "mobilenet_v3_large": ((224, 224, 3), (0.0, 255.0)),
    "mha_encoder": ((128, 256), None),  # None: standard normal
}
TORCH = ("resnet18", "mobilenet_v2_torch", "convnext_atto", "mobilevit_xxs", "vit_tiny")
QUANTIZED = ("resnet18", "mobilenet_v2_torch")  # also through onnxruntime's quantizer

# file suffix -> the form the table names
FORMS = {
    ".float.tflite": "float tflite",
    ".int8.tflite": "int8 tflite",
    ".tf2onnx.onnx": "onnx tf2onnx",
    ".torch.onnx": "torch onnx",
    ".qdq.onnx": "QDQ",
    ".qoperator.onnx": "QOperator",
}
INT8_FORMS = {"int8 tflite", "QDQ", "QOperator"}


def split_name(path: Path) -> tuple[str, str] | None:
    """(network, form) of a model file this script writes; None for any other file."""
    for suffix, form in FORMS.items():
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)], form
    return None


def wanted(network: str, only: list[str] | None) -> bool:
    return not only or network in only


# --- step 1: making the models (the exporters' Pythons) -----------------------------------------------------


def keras_encoder(layers: int = 4, seq: int = 128, d: int = 256, heads: int = 4, ffn: int = 1024):
    """A post-norm Transformer encoder of keras.layers.MultiHeadAttention blocks with a tanh-GELU MLP: the Keras
    model whose tf2onnx export bench/keras_encoder.py writes by hand (that file builds ONNX without TensorFlow,
    so it has no Keras model to import)."""
    import keras

    x = inputs = keras.Input((seq, d), batch_size=1, name="input")
    for i in range(layers):
        attn = keras.layers.MultiHeadAttention(heads, d // heads, name=f"mha_{i}")(x, x)
        x = keras.layers.LayerNormalization(name=f"ln_{i}_1")(keras.layers.Add(name=f"add_{i}_1")([x, attn]))
        h = keras.layers.Dense(ffn, activation=lambda t: keras.activations.gelu(t, approximate=True),
                               name=f"ffn_{i}_1")(x)
        h = keras.layers.Dense(d, name=f"ffn_{i}_2")(h)
        x = keras.layers.LayerNormalization(name=f"ln_{i}_2")(keras.layers.Add(name=f"add_{i}_2")([x, h]))
    return keras.Model(inputs, x, name="mha_encoder")


def keras_model(name: str):
    """A Keras network with random weights, seeded (the seed set before each, so each is the same alone or not)."""
    import keras

    keras.utils.set_random_seed(SEED)
    apps = keras.applications
    shape = KERAS[name][0]
    builders = {
        "mobilenet_v2": lambda: apps.MobileNetV2(weights=None, input_shape=shape, alpha=1.0),
        "resnet50": lambda: apps.ResNet50(weights=None, input_shape=shape),
        "efficientnet_b0": lambda: apps.EfficientNetB0(weights=None, input_shape=shape),
        "mobilenet_v3_large": lambda: apps.MobileNetV3Large(weights=None, input_shape=shape),
        "mha_encoder": keras_encoder,
    }
    model = builders[name]()
    calibrate_batchnorm(model, samples_for(name, 1)[0])
    return model


def calibrate_batchnorm(model, x: np.ndarray) -> None:
    """Set every BatchNormalization's moving mean and variance to its input's statistics on `x`, as training
    would. With the initial ones (0 and 1) the activations of Keras's MobileNetV2, MobileNetV3 and EfficientNet
    with weights=None shrink layer by layer (MobileNetV2's features end near 1e-12): every output is then
    1/1000 exactly, so a max abs error of 0 checks nothing, and int8 calibration sees no range. One forward pass
    in training mode with momentum 0 sets each layer's statistics from its normalized inputs, in order."""
    import keras

    layers = [la for la in model.layers if isinstance(la, keras.layers.BatchNormalization)]
    momenta = [la.momentum for la in layers]
    for la in layers:
        la.momentum = 0.0
    model(x, training=True)
    for la, m in zip(layers, momenta, strict=True):
        la.momentum = m


def samples_for(name: str, count: int) -> list[np.ndarray]:
    """The representative (calibration) inputs of a Keras network: seeded, in the range it takes."""
    shape, span = KERAS[name]
    rng = np.random.default_rng(1)
    if span is None:
        return [rng.standard_normal((1, *shape)).astype(np.float32) for _ in range(count)]
    return [rng.uniform(*span, (1, *shape)).astype(np.float32) for _ in range(count)]


def write_tflite(path: Path, model, samples: list[np.ndarray] | None) -> None:
    """TFLiteConverter on the Keras model: float without samples, else full-integer int8 with them."""
    import tensorflow as tf

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if samples is not None:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([x] for x in samples)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    path.write_bytes(conv.convert())


def write_tf2onnx(path: Path, model, shape: tuple[int, ...]) -> None:
    """tf2onnx as its README shows for a TF 2 model: the Keras model exported as a SavedModel (a batch-1
    signature, so every shape is static), then `python -m tf2onnx.convert --saved-model` at opset 17.
    (tf2onnx.convert.from_keras does not take Keras 3 models; from_function on one left EfficientNet-B0's
    Normalization mean and variance as two more graph inputs.)"""
    import tensorflow as tf

    with tempfile.TemporaryDirectory() as tmp:
        spec = [tf.TensorSpec((1, *shape), tf.float32, name="input")]
        model.export(f"{tmp}/saved_model", format="tf_saved_model", input_signature=spec, verbose=False)
        r = subprocess.run([sys.executable, "-m", "tf2onnx.convert", "--saved-model", f"{tmp}/saved_model",
                            "--output", str(path), "--opset", "17"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(_last_line(r.stderr))


def make_keras(out: Path, only: list[str] | None, samples: int) -> None:
    """The Keras networks' three forms; tf2onnx's skipped with a note where it is not importable."""
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        print("note: TensorFlow is not importable here: no Keras models (see the docstring for its venv)")
        return
    try:
        import tf2onnx  # noqa: F401
        have_tf2onnx = True
    except ImportError:
        print("note: tf2onnx is not importable here: no NAME.tf2onnx.onnx files (pip install tf2onnx)")
        have_tf2onnx = False
    for name in KERAS:
        if not wanted(name, only):
            continue
        model = keras_model(name)
        write_one(out / f"{name}.float.tflite", write_tflite, model, None)
        write_one(out / f"{name}.int8.tflite", write_tflite, model, samples_for(name, samples))
        if have_tf2onnx:
            write_one(out / f"{name}.tf2onnx.onnx", write_tf2onnx, model, KERAS[name][0])


def write_one(path: Path, job, *args) -> None:
    """job(path, *args): one conversion into `path`, printing its time and size, or why it failed (the others
    go on)."""
    t0 = time.monotonic()
    part = path.with_name(path.name + ".part")  # renamed when whole: a benchmark running meanwhile never reads half
    try:
        job(part, *args)
    except Exception as e:  # a converter's failure on one network must not stop the others
        print(f"FAILED {path.name}: {type(e).__name__}: {_last_line(str(e))}")
        part.unlink(missing_ok=True)
        return
    part.replace(path)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {time.monotonic() - t0:.0f} s)", flush=True)


def import_torchvision():
    """torchvision, or None where it is not installed. PyPI's torchvision wheels are CUDA builds: beside the CPU
    torch wheel their ops library (nms, roi_align, ...) does not load (it needs libc10_cuda.so), and `import
    torchvision` then fails in the modules that register those ops' fake and autograd kernels (RuntimeError:
    operator torchvision::nms does not exist). The models need none of those ops, so those two modules are
    left out (empty stand-ins in sys.modules) and the import tried again; timm imports torchvision too."""
    import types

    try:
        import torchvision
    except ImportError:
        return None
    except RuntimeError as e:
        print(f"note: torchvision's ops do not load beside this torch ({str(e).strip().splitlines()[-1]}): "
              "importing it without their kernel registrations (the models use none of those ops)")
        for key in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
            del sys.modules[key]
        for key in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
            sys.modules[key] = types.ModuleType(key)
        import torchvision
    return torchvision


def torch_model(name: str, torchvision):
    """A torchvision or timm network with random weights (seeded), in eval mode, and its input shape."""
    import torch

    torch.manual_seed(SEED)
    if name in QUANTIZED:
        net = torchvision.models.resnet18 if name == "resnet18" else torchvision.models.mobilenet_v2
        return net(weights=None).eval(), (1, 3, 224, 224)
    import timm

    timm_name = {"convnext_atto": "convnext_atto", "mobilevit_xxs": "mobilevit_xxs",
                 "vit_tiny": "vit_tiny_patch16_224"}[name]
    model = timm.create_model(timm_name, pretrained=False).eval()
    return model, (1, *model.pretrained_cfg["input_size"])


def write_torch_onnx(path: Path, model, shape: tuple[int, ...]) -> None:
    """torch.onnx.export as a user calls it (its default exporter and opset), the weights inside the file."""
    import torch

    with torch.no_grad():
        torch.onnx.export(model, (torch.randn(shape),), str(path), input_names=["input"], output_names=["output"],
                          external_data=False)


def write_quantized(path: Path, src: Path, fmt: str, shape: tuple[int, ...], samples: int) -> None:
    """onnxruntime's static quantizer (`fmt` "QDQ" or "QOperator") on a float export, as its docs show:
    quant_pre_process first, then quantize_static on seeded standard-normal calibration inputs."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(1)
            self.feeds = iter([{"input": rng.standard_normal(shape).astype(np.float32)} for _ in range(samples)])

        def get_next(self):
            return next(self.feeds, None)

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(src), str(pre))
        quantize_static(str(pre), str(path), Reader(), quant_format=getattr(QuantFormat, fmt))


def make_torch(out: Path, only: list[str] | None, samples: int) -> None:
    """The torch networks' exports (timm's skipped with a note where timm is missing) and the quantized ones."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print("note: torch is not importable here: no torch models (see the docstring for its venv)")
        return
    torchvision = import_torchvision()
    if torchvision is None:
        print("note: torchvision is not importable here: no ResNet-18, MobileNetV2 (nor their quantized forms)")
    try:
        import timm  # noqa: F401
        have_timm = True
    except ImportError:
        print("note: timm is not importable here: no ConvNeXt-atto, MobileViT-xxs, ViT-tiny")
        have_timm = False
    for name in TORCH:
        if not wanted(name, only) or not (torchvision if name in QUANTIZED else have_timm):
            continue
        model, shape = torch_model(name, torchvision)
        src = out / f"{name}.torch.onnx"
        write_one(src, write_torch_onnx, model, shape)
        if name in QUANTIZED and src.is_file():
            for fmt in ("QDQ", "QOperator"):
                write_one(out / f"{name}.{fmt.lower()}.onnx", write_quantized, src, fmt, shape, samples)


# --- step 2: benchmarking (aotc's Python) --------------------------------------------------------------------

PEAK_C = r"""
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One core's peak: independent multiply-add chains in registers, on this thread's CPU time (preemption on a
 * shared machine does not lower it). fp32: FLOP/s (2 a lane); int8: OP/s of u8 x s8 dot products (2 a MAC). */
static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

volatile float sink_f;
volatile int sink_i;

#if defined(__AVX512F__)
typedef __m512 vf;
#define LANES_F 16
#define FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define SET1_F _mm512_set1_ps
#define SUM_F(v) _mm512_reduce_add_ps(v)
#define CHAINS_F 24
#else
/* 12 chains, not 24: AVX2's 16 registers hold 12 and the two operands, 24 spilled (at x86-64-v3 the peak read
 * 125 GFLOP/s on this core, 135 with 12; 12 are more than the FMA latency times the FMA units needs) */
typedef __m256 vf;
#define LANES_F 8
#define CHAINS_F 12
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define SET1_F _mm256_set1_ps
static float SUM_F(__m256 v) { float f[8]; _mm256_storeu_ps(f, v); return f[0] + f[7]; }
#endif

static double fma_peak(double min_s) {
    vf v[CHAINS_F];
    const vf x = SET1_F(1.0000001f), y = SET1_F(1e-9f);
    long reps = 0;
    double t0 = cpu_s(), t;
    for (int i = 0; i < CHAINS_F; ++i) v[i] = SET1_F((float)i);
    do {
        for (long r = 0; r < 100000; ++r) {
            _Pragma("GCC unroll 24") for (int i = 0; i < CHAINS_F; ++i) v[i] = FMA(v[i], x, y);
        }
        reps += 100000;
        t = cpu_s() - t0;
    } while (t < min_s);
    for (int i = 1; i < CHAINS_F; ++i) v[0] = v[0] + v[i];
    sink_f = SUM_F(v[0]);
    return (double)reps * CHAINS_F * LANES_F * 2 / t * 1e-9;
}

#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
#if defined(__AVX512VNNI__)
typedef __m512i vi;
#define MACS_I 64
#define DOT(acc, a, b) _mm512_dpbusd_epi32(acc, a, b)
#define SET1_I8 _mm512_set1_epi8
#define SUM_I(v) _mm512_reduce_add_epi32(v)
/* 16 chains, not 24: with 24 (and a, b) gcc 12 kept the chains on the stack, a store and a load a chain each turn,
 * and read half a Zen 4 core's VNNI peak (255-261 GOP/s against 467 with 16, -O2 -march=native) */
#define CHAINS_I 16
#else
typedef __m256i vi;
#define CHAINS_I 12
#define MACS_I 32
#define DOT(acc, a, b) _mm256_dpbusd_avx_epi32(acc, a, b)
#define SET1_I8 _mm256_set1_epi8
static int SUM_I(__m256i v) { return _mm256_extract_epi32(v, 0); }
#endif
static double vnni_peak(double min_s) {
    vi v[CHAINS_I];
    const vi a = SET1_I8(1), b = SET1_I8(1);
    long reps = 0;
    double t0 = cpu_s(), t;
    for (int i = 0; i < CHAINS_I; ++i) v[i] = SET1_I8((char)i);
    do {
        for (long r = 0; r < 100000; ++r) {
            _Pragma("GCC unroll 16") for (int i = 0; i < CHAINS_I; ++i) v[i] = DOT(v[i], a, b);
        }
        reps += 100000;
        t = cpu_s() - t0;
    } while (t < min_s);
    int s = 0;
    for (int i = 0; i < CHAINS_I; ++i) s += SUM_I(v[i]);
    sink_i = s;
    return (double)reps * CHAINS_I * MACS_I * 2 / t * 1e-9;
}
#else
static double vnni_peak(double min_s) { (void)min_s; return 0.0; }
#endif

#if defined(__AMX_INT8__) && defined(SYS_arch_prctl)
/* AMX: four independent 16 x 16 int32 tiles, each TDPBSSD 16 x 64 by 64 x 16 int8 (16,384 MACs); Linux grants
 * the tile state on request (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA). */
static double amx_peak(double min_s) {
    struct {
        uint8_t palette, start_row, reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } cfg = {1, 0, {0}, {0}, {0}};
    static int8_t buf[16 * 64];
    static int32_t c[16 * 16];
    long reps = 0;
    double t0, t;
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) return 0.0;
    for (int i = 0; i < 8; ++i) {
        cfg.rows[i] = 16;
        cfg.colsb[i] = 64;
    }
    _tile_loadconfig(&cfg);
    _tile_loadd(4, buf, 64);
    _tile_loadd(5, buf, 64);
    _tile_loadd(6, buf, 64);
    _tile_loadd(7, buf, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    t0 = cpu_s();
    do {
        for (long r = 0; r < 10000; ++r) {
            _tile_dpbssd(0, 4, 5);
            _tile_dpbssd(1, 4, 6);
            _tile_dpbssd(2, 7, 5);
            _tile_dpbssd(3, 7, 6);
        }
        reps += 10000;
        t = cpu_s() - t0;
    } while (t < min_s);
    _tile_stored(0, c, 64);
    _tile_release();
    sink_i = c[0];
    return (double)reps * 4 * 16384 * 2 / t * 1e-9;
}
#else
static double amx_peak(double min_s) { (void)min_s; return 0.0; }
#endif

int main(void) {
    printf("%.1f %.1f %.1f\n", fma_peak(0.3), vnni_peak(0.3), amx_peak(0.3));
    return 0;
}
"""


def measure_peak(work: Path, isa: str = "native") -> dict[str, float]:
    """One core's peak, measured now: fp32 GFLOP/s of FMA chains (AVX-512 where the compiler targets it, else
    AVX2) and int8 GOP/s of VNNI dot-product chains (0 without VNNI). Built with -march=native (or the --isa
    level's flags): the core's own widest instructions, as the bundles' kernels are chosen for it. The int8
    shares are of the VNNI peak, what aotc's kernels use; on a core with AMX (Sapphire Rapids and later) the AMX
    int8 peak is measured too and printed beside it, as LiteRT's XNNPACK and OpenVINO use those tiles (a share
    of the VNNI peak over 100 %)."""
    src, exe = work / "peak.c", work / "peak"
    src.write_text(PEAK_C)
    subprocess.run(["cc", "-O2", ISAS[isa]["cflags"], "-o", str(exe), str(src)], check=True)
    fp32, int8, amx = (float(v) for v in subprocess.run([str(exe)], capture_output=True, text=True,
                                                           check=True).stdout.split())
    return {"fp32_gflops": fp32, "int8_gops": int8, "amx_int8_gops": amx}


def model_files(models_dir: Path, only: list[str] | None) -> list[Path]:
    """The model files this script writes that are in `models_dir`, the --models ones only where given (a file
    name, the name without its extension, or a network's name for all its forms), networks in order of name."""
    files = sorted(p for p in models_dir.iterdir() if split_name(p))
    if not only:
        return files

    def names(p: Path) -> set[str]:
        return {p.name, p.name.rsplit(".", 1)[0], split_name(p)[0]}

    picked = [p for p in files if names(p) & set(only)]
    missing = [n for n in only if not any(n in names(p) for p in files)]
    if missing:
        print(f"note: no model file in {models_dir} for: {', '.join(missing)}", file=sys.stderr)
    return picked


def references(path: Path) -> dict[str, str]:
    """bench_one's model and tflite arguments for a file, so that every engine that can run the network is timed:
    a float .tflite file beside its tf2onnx twin gets onnxruntime on that twin (LiteRT keeps the file), a tf2onnx
    file gets LiteRT on its float .tflite twin; other files have their natural references only."""
    network, form = split_name(path)
    twin_onnx, twin_tflite = path.with_name(f"{network}.tf2onnx.onnx"), path.with_name(f"{network}.float.tflite")
    if form == "float tflite" and twin_onnx.is_file():
        return {"model": str(twin_onnx), "tflite": str(path)}
    if form == "onnx tf2onnx" and twin_tflite.is_file():
        return {"tflite": str(twin_tflite)}
    return {}


def count_macs(path: Path) -> int:
    """Multiply-accumulates of one inference (aot.bench's counts of conv/matmul shapes: tflite_macs, graph_macs on
    the ONNX file with aotc's shapes, with_ir_shapes). A QOperator file is counted on the float torch export it
    was quantized from (its QLinearConv is the same work, which graph_macs does not read)."""
    import onnx

    from aot.bench import graph_macs, tflite_macs

    network, form = split_name(path)
    if path.suffix == ".tflite":
        return tflite_macs(path)
    if form == "QOperator":
        path = path.with_name(f"{network}.torch.onnx")
        if not path.is_file():
            return 0
    return graph_macs(with_ir_shapes(onnx.load(str(path))))


def with_ir_shapes(model):
    """`model` with every tensor's shape as aotc's import knows it (constants folded, static shapes) in its
    value_info: ONNX's shape inference leaves dims unknown after a Reshape to a computed shape (tf2onnx's
    attention), so graph_macs would miss the MatMuls that follow."""
    from onnx import helper

    from aot.compiler import import_model

    graph = import_model(model, "macs")
    declared = {t.name for t in model.graph.initializer} | {v.name for v in [*model.graph.input, *model.graph.output]}
    for t in graph.tensors.values():
        if t.name not in declared:
            try:
                elem = helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype))
            except (TypeError, KeyError):
                continue
            model.graph.value_info.append(helper.make_tensor_value_info(t.name, elem, list(t.shape)))
    return model


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


# --isa: the C flags of the bundles, the peak loop and OpenVINO's instruction limit per level ("native": this
# machine's widest; "avx2": an x86-64 machine without AVX-512, see the docstring)
ISAS = {"native": {"cflags": "-march=native", "host_isa": None, "onednn": None},
        "avx2": {"cflags": "-march=x86-64-v3", "host_isa": "generic", "onednn": "AVX2"}}


def compile_and_build(path: Path, out: Path, threads: int, isa: str = "native") -> dict[str, float]:
    """`aotc FILE -o OUT` for the host (--threads N; --host-isa for an --isa level), then `cmake --build OUT`
    (configured again with the level's flags where it is not this machine's); the seconds each took. A refusal
    or a failed build raises RuntimeError with its last line (the row then says why)."""
    level = ISAS[isa]
    cmd = [sys.executable, "-m", "aot.cli", str(path), "-o", str(out)] + (["--threads", str(threads)] if threads > 1
                                                                          else [])
    cmd += ["--host-isa", level["host_isa"]] if level["host_isa"] else []
    steps = [("compile_s", cmd)]
    if isa != "native":
        steps.append(("configure_s", ["cmake", "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_NATIVE=OFF",
                                      f"-DCMAKE_C_FLAGS={level['cflags']}"]))
    steps.append(("build_s", ["cmake", "--build", str(out)]))
    took = {}
    for step, argv in steps:
        t0 = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            raise RuntimeError(f"{'aotc' if step == 'compile_s' else 'build'}: {_last_line(r.stderr or r.stdout)}")
        took[step] = round(time.monotonic() - t0, 1)
    return took


def time_engines(out: Path, path: Path, rounds: int, repeat: int, threads: int):
    """aot.bench.bench_one (what `aotc bench --openvino` runs) on the bundle with references(); where OpenVINO
    cannot run the file, again without it. The BenchRow and a note (or "")."""
    from aot.bench import bench_one
    from aot.errors import AotcError

    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    kw = dict(references(path), rounds=rounds, repeat=repeat, ref_threads=threads)
    try:
        return bench_one(out, meta, openvino=True, **kw), ""
    except AotcError as e:
        if "OpenVINO" not in str(e):
            raise
        return bench_one(out, meta, openvino=False, **kw), f"not in OpenVINO: {e}"


def rate(macs: int, ms: float | None) -> float | None:
    """G(FL)OP/s of `macs` multiply-accumulates (2 operations each) in `ms`."""
    return round(2 * macs / (ms * 1e-3) / 1e9, 1) if ms and macs else None


def share(gops: float | None, peak: float) -> float | None:
    """`gops` as a percentage of `peak`."""
    return round(100 * gops / peak, 1) if gops is not None and peak else None


def bench_model(path: Path, work: Path, args) -> dict:
    """One model file: compiled, built and timed; its table row as a dict (with `error` where a step failed).
    Rates (G(FL)OP/s, shares of the peak: add_shares): aotc's 2 x MACs over its wall time, and aotc's and the
    fastest engine's over their CPU time per inference (every thread's)."""
    from aot.errors import AotcError

    network, form = split_name(path)
    row: dict = {"model": network, "form": form, "file": path.name, "threads": args.threads, "isa": args.isa}
    out = work / (f"{path.name.replace('.', '_')}_t{args.threads}" + ("" if args.isa == "native" else f"_{args.isa}"))
    try:
        row.update(compile_and_build(path, out, args.threads, args.isa))
        row["load_before"] = round(os.getloadavg()[0], 2)
        bench, note = time_engines(out, path, args.rounds, args.repeat, args.threads)
        row["load_after"] = round(os.getloadavg()[0], 2)
    except (RuntimeError, AotcError) as e:
        row["error"] = str(e)
        print(f"{path.name}: {e}", file=sys.stderr)
        return row
    ms = lambda us: None if us is None else round(us / 1e3, 3)  # noqa: E731
    row.update(aotc_ms=ms(bench.bundle_us), aotc_cpu_ms=ms(bench.bundle_cpu_us),
               onnxruntime_ms=ms(bench.ort_us), onnxruntime_cpu_ms=ms(bench.ort_cpu_us),
               litert_ms=ms(bench.tflite_us), litert_cpu_ms=ms(bench.tflite_cpu_us),
               openvino_ms=ms(bench.openvino_us), openvino_cpu_ms=ms(bench.openvino_cpu_us),
               fastest=bench.fastest or bench.reference, reference=bench.reference,
               aotc_over_fastest=bench.fastest_ratio if bench.fastest else bench.ratio,
               max_abs_err=bench.max_abs_err, openvino_max_abs_err=bench.openvino_max_abs_err,
               notes=[*bench.notes, *([note] if note else [])])
    row["macs"] = count_macs(path)
    row["aotc_gops"] = rate(row["macs"], row["aotc_ms"])
    for who in ("aotc", fastest_key(row)):
        row[f"{who}_cpu_gops"] = rate(row["macs"], row.get(f"{who}_cpu_ms"))
    row["aotc_over_fastest_cpu"] = cpu_ratio(row)
    return row


def add_shares(rows: list[dict], peaks: dict[str, float], threads: int) -> None:
    """Each row's rates as shares of the peak (the fp32 one, or VNNI's for an int8 form): aotc's wall-time rate
    of N cores' peak; the CPU-time rates of one core's, how well the cores a run had were used, which preemption
    on a shared machine does not change (the peak is timed on CPU time too)."""
    for row in rows:
        if "error" in row:
            continue
        peak = peaks["int8_gops"] if row["form"] in INT8_FORMS else peaks["fp32_gflops"]
        row["aotc_peak_pct"] = share(row["aotc_gops"], peak * threads)
        for who in ("aotc", fastest_key(row)):
            row[f"{who}_cpu_peak_pct"] = share(row.get(f"{who}_cpu_gops"), peak)


def fastest_key(row: dict) -> str:
    return {"onnxruntime": "onnxruntime", "LiteRT": "litert", "OpenVINO": "openvino"}[row["fastest"]]


def cpu_ratio(row: dict) -> float | None:
    """aotc's CPU time per inference over the lowest of the engines' (which may not be the wall-fastest one)."""
    theirs = [row.get(f"{k}_cpu_ms") for k in ("onnxruntime", "litert", "openvino")]
    lowest = min((c for c in theirs if c), default=None)
    return row["aotc_cpu_ms"] / lowest if row.get("aotc_cpu_ms") and lowest else None


def markdown(rows: list[dict], peaks: dict[str, float], args) -> str:
    """The table: times in ms as wall (CPU), aotc / the fastest engine (the median of per-round wall ratios), and
    aotc's CPU time per inference over the lowest engine's (load on a shared machine changes it less), aotc's
    rate and shares of the peak (and the fastest engine's, on CPU time: bench_model), the bundle's max abs
    error against its reference (onnxruntime, or LiteRT for a .tflite file with no ONNX twin), the load average
    before -> after the timed part; failed models say why."""

    def t(row: dict, key: str) -> str:
        wall, cpu = row.get(f"{key}_ms"), row.get(f"{key}_cpu_ms")
        if wall is None:
            return "-"
        return f"{wall:.2f} ({cpu:.2f})" if cpu is not None else f"{wall:.2f}"

    def num(value, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    isa = ("" if args.isa == "native" else
           f"instructions: {args.isa} (aotc --host-isa generic, built with {ISAS[args.isa]['cflags']}; OpenVINO "
           f"with ONEDNN_MAX_CPU_ISA={ISAS[args.isa]['onednn']}; onnxruntime and LiteRT on this machine's widest, "
           "which they choose themselves); ")
    lines = [f"{isa}threads: {args.threads}; rounds: {args.rounds}; one core's measured peak: fp32 FMA "
             f"{peaks['fp32_gflops']:.0f} GFLOP/s, int8 VNNI {peaks['int8_gops']:.0f} GOP/s"
             + (f", int8 AMX {peaks['amx_int8_gops']:.0f} GOP/s" if peaks.get("amx_int8_gops") else "")
             + f" ('aotc % peak': its wall-time rate over {args.threads} x the fp32 or VNNI peak; the CPU columns: "
             "the rate over CPU time per inference, every thread's, over one core's); times in ms: wall median "
             "(CPU per inference)", "",
             "| model | form | aotc | onnxruntime | LiteRT | OpenVINO | fastest | aotc / fastest | CPU / lowest CPU | "
             "GMAC | aotc G(FL)OP/s | aotc % peak | aotc % peak (CPU) | fastest % peak (CPU) | max abs err | "
             "load before -> after |",
             "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['form']} | failed: {r['error'].replace('|', '/')} "
                         "| | | | | | | | | | | | | |")
            continue
        lines.append(f"| {r['model']} | {r['form']} | {t(r, 'aotc')} | {t(r, 'onnxruntime')} | {t(r, 'litert')} | "
                     f"{t(r, 'openvino')} | {r['fastest']} | {r['aotc_over_fastest']:.2f} | "
                     f"{num(cpu_ratio(r), '.2f')} | "
                     f"{r['macs'] / 1e9:.2f} | {num(r['aotc_gops'], '.1f')} | {num(r['aotc_peak_pct'], '.1f')} | "
                     f"{num(r['aotc_cpu_peak_pct'], '.1f')} | {num(r.get(fastest_key(r) + '_cpu_peak_pct'), '.1f')} | "
                     f"{r['max_abs_err']:.1e} | {r['load_before']:.2f} -> {r['load_after']:.2f} |")
    lines.append("")
    groups = {"every form": set(FORMS.values()), "float": set(FORMS.values()) - INT8_FORMS,
              "int8 .tflite": {"int8 tflite"}, "QDQ and QOperator": {"QDQ", "QOperator"}}
    for group, forms in groups.items():
        ratios = [r["aotc_over_fastest"] for r in rows if "error" not in r and r["form"] in forms]
        if ratios:
            lines.append(f"aotc / fastest, geomean of {group} ({len(ratios)} model forms): "
                         f"{statistics.geometric_mean(ratios):.2f} (worst {max(ratios):.2f})")
    notes = [f"- {r['file']}: {n}" for r in rows if "error" not in r for n in r["notes"]]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def run_bench(args) -> None:
    """Step 2: the peak, then every model in turn; the table on stdout and the JSON file."""
    sys.path.insert(0, str(ROOT))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    files = model_files(Path(args.dir), args.models)
    if not files:
        raise SystemExit(f"no model files in {args.dir}: make them with --make (see the docstring)")
    if ISAS[args.isa]["onednn"]:  # read by OpenVINO's oneDNN when it loads: before the first bench_one
        os.environ["ONEDNN_MAX_CPU_ISA"] = ISAS[args.isa]["onednn"]
    start = measure_peak(work, args.isa)
    rows: list[dict] = []

    def save(peaks: dict) -> None:
        add_shares(rows, peaks, args.threads)
        Path(args.json or work / "host_models.json").write_text(json.dumps(
            {"threads": args.threads, "rounds": args.rounds, "isa": args.isa, "peak_per_core": peaks,
             "rows": rows}, indent=1))

    try:
        for path in files:
            print(f"{path.name} ...", file=sys.stderr, flush=True)
            rows.append(bench_model(path, work, args))
            save(start)
    except KeyboardInterrupt:  # a long run stopped (SIGINT): the table of the models done so far
        print(f"interrupted: {len(rows)} of {len(files)} models done", file=sys.stderr)
    # the clock of a shared virtual core drifts: the peak is the higher of the runs at the start and the end
    end = measure_peak(work, args.isa)
    peaks = {k: max(start[k], end[k]) for k in start}
    save(peaks)
    print(markdown(rows, peaks, args))




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--make", nargs="?", const=str(DEFAULT_DIR), metavar="DIR",
                    help="write the models into DIR (default bench/models/large/), in an exporter's Python")
    ap.add_argument("--dir", default=str(DEFAULT_DIR), help="where the model files are (without --make)")
    ap.add_argument("--models", nargs="*", help="only these: file names (with or without extension) or networks")
    ap.add_argument("--samples", type=int, default=4, help="--make: representative / calibration inputs")
    ap.add_argument("--rounds", type=int, default=3, help="rounds timing every engine back to back (medians)")
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per engine and round (raised for short models)")
    ap.add_argument("--threads", type=int, default=1, help="the bundles' threads (aotc --threads) and the references'")
    ap.add_argument("--isa", choices=list(ISAS), default="native",
                    help="native: this machine's widest instructions; avx2: as on an x86-64 machine without AVX-512 "
                         "(see the docstring)")
    ap.add_argument("--work", default="/tmp/aotc_host_models", help="where the bundles are built")
    ap.add_argument("--json", help="the rows as JSON (default WORK/host_models.json)")
    ap.add_argument("--table", metavar="JSON", help="only print the table of an earlier run's JSON file")
    args = ap.parse_args()
    if args.make:
        out = Path(args.make)
        out.mkdir(parents=True, exist_ok=True)
        make_keras(out, args.models, args.samples)
        make_torch(out, args.models, args.samples)
        return
    if args.table:
        run = json.loads(Path(args.table).read_text())
        args.threads, args.rounds, args.isa = run["threads"], run["rounds"], run.get("isa", "native")
        add_shares(run["rows"], run["peak_per_core"], args.threads)
        print(markdown(run["rows"], run["peak_per_core"], args))
        return
    run_bench(args)


if __name__ == "__main__":
    main()
