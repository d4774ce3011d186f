"""Make the TFLM signal-library test models under tests/models/tflite/ (issue 50) the way TFLM's micro_speech
example makes its audio front end, and the reference outputs TFLM's own interpreter gives for them.

TFLM's front end is a tf.Module of the signal library's TensorFlow ops (tflite-micro
python/tflite_micro/signal/ops/) converted by TFLiteConverter with allow_custom_ops
(tensorflow/lite/micro/examples/micro_speech/audio_preprocessor.py, which this script imports and runs). The
pip wheels ship neither those ops' TensorFlow library nor their Python helpers' two pybind modules, so this
script compiles them from a tflite-micro checkout (the ops' registrations only: the converter traces, it runs
no kernel) against the TensorFlow it runs in, with g++ and pybind11:

    /work/venvs/tf/bin/pip install pybind11
    /work/venvs/tf/bin/python examples/make_tflm_signal_models.py --tflm PATH/TO/tflite-micro [OUT_DIR]

It writes:

- tflm_frontend_int8.tflite, tflm_frontend_float.tflite: micro_speech's audio_preprocessor_int8 / _float
  (FeatureParams' defaults: 30 ms windows of 16 kHz audio, a 512-point FFT, 40 channels);
- tflm_frontend_v2.tflite: other parameters (16 ms windows, so a 256-point FFT whose complex half takes
  kissfft's radix-2 stage; 32 channels; spectral subtraction with clamping; other smoothing, PCAN and log
  scales);
- tflm_kws_float.tflite: a streaming keyword spotter in one conversion: each call takes a 30 ms frame and the
  last 48 frames' features (the caller's history), runs the float front end, and a small conv net on the 49
  x 40 features; outputs the 4 scores and the new history;
- tflm_kws_int8.tflite: the same pipeline with the net converted full-int8 (TFLiteConverter with a
  representative dataset; float in and out). The converter's calibrator cannot run TFLM's custom ops, so the
  net is converted on its own and joined to the front end's file here (join_models: the flatbuffer schema's
  object API, tensors and buffers renumbered, a RESHAPE, CONCATENATION and SLICE for the history);
- tflm_streaming.tflite: the streaming ops (Framer, Delay, OverlapAdd of int16 and float32, Stacker) in one
  tf.function, converted once;
- tflm_fft.tflite: SignalRfft and SignalIrfft of int16, int32 and float32 (_ffts says the sizes).

Then the references, with TFLM's interpreter (pip install tflite-micro, another venv: it needs numpy 2):

    /work/venvs/tflm/bin/python examples/make_tflm_signal_models.py --reference [OUT_DIR]

runs each model over a sequence of frames (yes_1000ms.wav from the checkout's micro_speech testdata, noise,
a frame of -32768, silence) in one interpreter, so its state carries from call to call as in firmware, and
writes tflm_signal_ref.npz (reference() says what it holds).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "tests" / "models" / "tflite"
FRONTENDS = ("tflm_frontend_int8", "tflm_frontend_float", "tflm_frontend_v2")
KWS = ("tflm_kws_float", "tflm_kws_int8")
STREAMING = ("tflm_streaming", "tflm_fft")  # random inputs each call; every output kept
HISTORY = 48  # frames of features the KWS model is given besides the new one (49 in all, micro_speech's)
CHANNELS = 40
WAV = "tensorflow/lite/micro/examples/micro_speech/testdata/yes_1000ms.wav"


def _build_ops(tflm: Path, build: Path) -> Path:
    """The signal ops' TensorFlow registrations as one library, and the two pybind helpers in place."""
    import pybind11
    import tensorflow as tf

    build.mkdir(parents=True, exist_ok=True)
    lib = build / "signal_ops.so"
    if not lib.is_file():
        sources = sorted(str(p) for p in (tflm / "signal" / "tensorflow_core" / "ops").glob("*.cc"))
        subprocess.run(["g++", "-shared", "-fPIC", "-O1", *tf.sysconfig.get_compile_flags(), *sources, "-o", str(lib),
                        *tf.sysconfig.get_link_flags()], check=True, capture_output=True)
    utils = tflm / "python" / "tflite_micro" / "signal" / "utils"
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    for name in ("freq_to_mel_wrapper", "wide_dynamic_func_lut_wrapper"):
        if not (utils / f"{name}{ext}").is_file():
            subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-std=c++17", f"-I{pybind11.get_include()}",
                            f"-I{sysconfig.get_paths()['include']}", str(utils / f"{name}.cc"), "-o",
                            str(utils / f"{name}{ext}")], check=True)
    return lib


def _import_tflm(tflm: Path, build: Path):
    """TFLM's audio_preprocessor module, its signal ops loaded from the library built here."""
    import tensorflow as tf

    root = build / "pyroot"
    root.mkdir(parents=True, exist_ok=True)
    link = root / "tflite_micro"
    if not link.exists():
        link.symlink_to(tflm.resolve())
    sys.path.insert(0, str(root))
    sys.modules["tflite_micro.python.tflite_micro.runtime"] = type(sys)("runtime")  # TFLM's interpreter: unused
    from tflite_micro.python.tflite_micro.signal.utils import util

    lib = tf.load_op_library(str(_build_ops(tflm, build)))
    util.load_custom_op = lambda name: lib
    sys.path.insert(0, str(tflm / "tensorflow" / "lite" / "micro" / "examples" / "micro_speech"))
    import audio_preprocessor
    from absl import flags

    flags.FLAGS(["make_tflm_signal_models"])
    return audio_preprocessor


def _net():
    """A small keyword-spotting conv net on 49 x 40 features (micro_speech's shape), 4 classes."""
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    L = tf.keras.layers
    return tf.keras.Sequential([
        tf.keras.Input((49, CHANNELS, 1), batch_size=1),
        L.Conv2D(8, (10, 8), strides=2, padding="same", activation="relu"),
        L.DepthwiseConv2D(3, padding="same", activation="relu"),
        L.Conv2D(16, 1, activation="relu"),
        L.AveragePooling2D((25, 20)),
        L.Flatten(),
        L.Dense(4),
        L.Softmax(),
    ])


def _kws_float(ap, net) -> bytes:
    """Front end and net in one tf.function, converted once (float: the calibrator cannot run TFLM's ops)."""
    import tensorflow as tf

    gen = ap._GenerateFeature(name="GenerateFeature", params=ap.FeatureParams(use_float_output=True), detail="kws")

    class Kws(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 480], tf.int16),
                                      tf.TensorSpec([1, HISTORY, CHANNELS], tf.float32)])
        def __call__(self, audio_frame, history):
            feature = tf.reshape(gen.generate_feature_for_frame(audio_frame), [1, 1, CHANNELS])
            stacked = tf.concat([history, feature], axis=1)
            scores = net(tf.reshape(stacked, [1, HISTORY + 1, CHANNELS, 1]))
            return {"a_scores": scores, "b_history": stacked[:, 1:, :]}

    module = Kws()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([module.__call__.get_concrete_function()], module)
    converter.allow_custom_ops = True
    return converter.convert()


def _net_int8(net) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(0)

    def data():
        for _ in range(64):  # features of the float front end: about 0 .. 26
            yield [rng.uniform(0.0, 26.0, (1, 49, CHANNELS, 1)).astype(np.float32)]
    converter = tf.lite.TFLiteConverter.from_keras_model(net)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = data
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    return converter.convert()


def join_models(frontend: bytes, net: bytes) -> bytes:
    """One file: the front end's ops, then RESHAPE of its [40] features to [1, 1, 40], CONCATENATION after
    the history input [1, 48, 40], RESHAPE to the net's input, the net's ops; outputs the net's and a SLICE of
    the last 48 frames (the new history)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    fm, nm = s.ModelT.InitFromPackedBuf(frontend, 0), s.ModelT.InitFromPackedBuf(net, 0)
    fg, ng = fm.subgraphs[0], nm.subgraphs[0]
    codes = list(fm.operatorCodes)

    def code(c) -> int:
        for k, o in enumerate(codes):
            if (o.builtinCode, o.deprecatedBuiltinCode, o.customCode, o.version) == \
                    (c.builtinCode, c.deprecatedBuiltinCode, c.customCode, c.version):
                return k
        codes.append(c)
        return len(codes) - 1

    def builtin(op: int) -> int:
        c = s.OperatorCodeT()
        c.builtinCode, c.deprecatedBuiltinCode, c.version = op, min(op, 127), 1
        return code(c)

    def tensor(name: str, shape: list[int], ttype: int, data: np.ndarray | None = None) -> int:
        t = s.TensorT()
        t.name, t.shape, t.type = name.encode(), np.asarray(shape, np.int32), ttype
        b = s.BufferT()
        if data is not None:
            b.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        fm.buffers.append(b)
        t.buffer = len(fm.buffers) - 1
        fg.tensors.append(t)
        return len(fg.tensors) - 1

    def op(opcode: int, inputs: list[int], outputs: list[int], options_type: int = 0, options=None) -> None:
        o = s.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = opcode, np.asarray(inputs, np.int32), np.asarray(outputs, np.int32)
        o.builtinOptionsType, o.builtinOptions = options_type, options
        fg.operators.append(o)

    base_t, base_b = len(fg.tensors), len(fm.buffers)
    for t in ng.tensors:  # the net's tensors, their buffers renumbered
        t.buffer = base_b + t.buffer
        fg.tensors.append(t)
    fm.buffers.extend(nm.buffers)
    net_in, net_out = base_t + int(ng.inputs[0]), base_t + int(ng.outputs[0])
    feature = int(fg.outputs[0])
    history = tensor("history", [1, HISTORY, CHANNELS], s.TensorType.FLOAT32)
    frame = tensor("feature_frame", [1, 1, CHANNELS], s.TensorType.FLOAT32)
    stacked = tensor("stacked", [1, HISTORY + 1, CHANNELS], s.TensorType.FLOAT32)
    history_next = tensor("history_next", [1, HISTORY, CHANNELS], s.TensorType.FLOAT32)
    reshape = builtin(s.BuiltinOperator.RESHAPE)
    op(reshape, [feature, tensor("frame_shape", [3], s.TensorType.INT32, np.array([1, 1, CHANNELS], np.int32))],
       [frame])
    concat = s.ConcatenationOptionsT()
    concat.axis = 1
    op(builtin(s.BuiltinOperator.CONCATENATION), [history, frame], [stacked],
       s.BuiltinOptions.ConcatenationOptions, concat)
    op(reshape, [stacked, tensor("net_shape", [4], s.TensorType.INT32, np.array([1, 49, CHANNELS, 1], np.int32))],
       [net_in])
    for o in ng.operators:
        o.opcodeIndex = code(nm.operatorCodes[o.opcodeIndex])
        o.inputs = np.asarray([i if i < 0 else base_t + i for i in o.inputs], np.int32)
        o.outputs = np.asarray([base_t + i for i in o.outputs], np.int32)
        fg.operators.append(o)
    op(builtin(s.BuiltinOperator.SLICE), [
        stacked, tensor("history_begin", [3], s.TensorType.INT32, np.array([0, 1, 0], np.int32)),
        tensor("history_size", [3], s.TensorType.INT32, np.array([1, HISTORY, CHANNELS], np.int32))],
        [history_next])
    fg.inputs = np.asarray([int(fg.inputs[0]), history], np.int32)
    fg.outputs = np.asarray([net_out, history_next], np.int32)
    fm.operatorCodes = codes
    fm.signatureDefs = None
    b = flatbuffers.Builder(1 << 16)
    b.Finish(fm.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _streaming(tflm_ops) -> bytes:
    """The streaming ops in one file: two Framers (prefilled, and not: frames still incomplete on the first
    calls), a Delay, an OverlapAdd of the first Framer's frames (int16) and of them halved (float32), and a
    Stacker of a 40-channel frame (left 2, right 1, step 2)."""
    import tensorflow as tf

    framer, delay, overlap_add, stacker = tflm_ops

    class Streaming(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2, 160], tf.int16), tf.TensorSpec([40], tf.int16)])
        def __call__(self, audio, feature):
            frames, valid = framer(audio, 240, 80, prefill=True)
            frames2, valid2 = framer(audio, 100, 40, prefill=False)
            stacked, valid3 = stacker(feature, 40, 2, 1, 2)
            halved = tf.cast(frames, tf.float32) * 0.5
            return {"a_frames": frames, "b_valid": valid, "c_frames2": frames2, "d_valid2": valid2,
                    "e_delayed": delay(audio, 50), "f_ola": overlap_add(frames, 80),
                    "g_ola_float": overlap_add(halved, 80), "h_stacked": stacked, "i_valid3": valid3}

    module = Streaming()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([module.__call__.get_concrete_function()], module)
    converter.allow_custom_ops = True
    return converter.convert()


def _ffts(fft_ops) -> bytes:
    """SignalRfft and SignalIrfft of each type kissfft is built for: int16 rows of 200 samples in a 256-point FFT
    (its complex half of 128 points takes a radix-2 stage), int32 rows of 128 in a 128-point one, float32 rows
    of 200 in 256; each spectrum back through the inverse."""
    import tensorflow as tf

    class Ffts(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2, 200], tf.int16), tf.TensorSpec([1, 128], tf.int32),
                                      tf.TensorSpec([3, 200], tf.float32)])
        def __call__(self, x16, x32, xf):
            r16, r32, rf = fft_ops.rfft(x16, 256), fft_ops.rfft(x32, 128), fft_ops.rfft(xf, 256)
            return {"a_r16": r16, "b_i16": fft_ops.irfft(r16, 256), "c_r32": r32, "d_i32": fft_ops.irfft(r32, 128),
                    "e_rf": rf, "f_if": fft_ops.irfft(rf, 256)}

    module = Ffts()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([module.__call__.get_concrete_function()], module)
    converter.allow_custom_ops = True
    return converter.convert()


def make(tflm: Path, out: Path) -> None:
    ap = _import_tflm(tflm, Path(tempfile.gettempdir()) / "aotc_tflm_signal_build")
    v2 = dict(window_size_ms=16, window_stride_ms=10, filter_bank_number_of_channels=32, filter_bank_clamping=True,
              filter_bank_even_smoothing=0.04, filter_bank_odd_smoothing=0.08, filter_bank_min_signal_remaining=0.1,
              filter_bank_post_scaling_bits=5, pcan_strength=0.9, pcan_offset=60.0)
    files = {
        "tflm_frontend_int8": ap.AudioPreprocessor(ap.FeatureParams())._get_model(),
        "tflm_frontend_float": ap.AudioPreprocessor(ap.FeatureParams(use_float_output=True))._get_model(),
        "tflm_frontend_v2": ap.AudioPreprocessor(ap.FeatureParams(**v2))._get_model(),
    }
    net = _net()
    files["tflm_kws_float"] = _kws_float(ap, net)
    files["tflm_kws_int8"] = join_models(files["tflm_frontend_float"], _net_int8(net))
    from tflite_micro.python.tflite_micro.signal.ops import delay_op, framer_op, overlap_add_op, stacker_op

    files["tflm_streaming"] = _streaming((framer_op.framer, delay_op.delay, overlap_add_op.overlap_add,
                                          stacker_op.stacker))
    from tflite_micro.python.tflite_micro.signal.ops import fft_ops

    files["tflm_fft"] = _ffts(fft_ops)
    for name, data in files.items():
        (out / f"{name}.tflite").write_bytes(data)
        print(f"{name}.tflite: {len(data)} bytes")


def frames(tflm_wav: Path | None, window: int, step: int) -> np.ndarray:
    """The audio the references run on: a spoken 'yes' cut into windows, noise, -32768, silence."""
    import wave

    rng = np.random.default_rng(0)
    parts = []
    if tflm_wav is not None and tflm_wav.is_file():
        with wave.open(str(tflm_wav)) as w:
            s = np.frombuffer(w.readframes(w.getnframes()), np.int16)
        parts.append(np.stack([s[i:i + window] for i in range(2000, 2000 + 12 * step, step)]))
    parts += [(rng.standard_normal((3, window)) * 6000).clip(-32768, 32767).astype(np.int16),
              np.full((1, window), -32768, np.int16), np.zeros((1, window), np.int16)]
    return np.concatenate(parts)


def reference(out: Path, wav: Path | None) -> None:
    """Each model's outputs in TFLM's interpreter, one invoke a frame (its state carried), the KWS history fed
    back: `frames<window>` (the audio, shared), `<model>/out0` for every frame, and the KWS models' last
    history (`<model>/history`)."""
    from tflite_micro.python.tflite_micro import runtime

    ref: dict[str, np.ndarray] = {}
    for name in (*FRONTENDS, *KWS):
        interp = runtime.Interpreter.from_file(str(out / f"{name}.tflite"), arena_size=1 << 20)
        window = int(interp.get_input_details(0)["shape"][-1])
        audio = ref.setdefault(f"frames{window}", frames(wav, window, window * 2 // 3))
        history = np.zeros((1, HISTORY, CHANNELS), np.float32)
        outs = []
        for x in audio:
            interp.set_input(x.reshape(1, window), 0)
            if name in KWS:
                interp.set_input(history, 1)
            interp.invoke()
            outs.append(interp.get_output(0).copy())
            if name in KWS:
                history = interp.get_output(1).copy()
        ref[f"{name}/out0"] = np.stack(outs)
        if name in KWS:
            ref[f"{name}/history"] = history
        print(f"{name}: {len(audio)} frames")
    rng = np.random.default_rng(1)
    for name in STREAMING:  # `<model>/in<k>` and `<model>/out<k>`, stacked over the calls
        interp = runtime.Interpreter.from_file(str(out / f"{name}.tflite"), arena_size=1 << 20)
        n_in, n_out, calls = (2, 9, 5) if name == "tflm_streaming" else (3, 6, 1)
        details = [interp.get_input_details(k) for k in range(n_in)]
        ins = []
        for d in details:
            shape, dtype = (calls, *d["shape"]), np.dtype(d["dtype"])
            if dtype.kind == "f":
                ins.append(rng.uniform(-1, 1, shape).astype(dtype))
            else:
                ins.append(rng.integers(np.iinfo(dtype).min // 2, np.iinfo(dtype).max // 2, shape).astype(dtype))
        outs: dict[int, list[np.ndarray]] = {}
        for call in range(calls):
            for k, x in enumerate(ins):
                interp.set_input(x[call], k)
            interp.invoke()
            for k in range(n_out):
                outs.setdefault(k, []).append(np.asarray(interp.get_output(k)).copy())
        ref.update({f"{name}/in{k}": x for k, x in enumerate(ins)})
        ref.update({f"{name}/out{k}": np.stack(v) for k, v in outs.items()})
        print(f"{name}: {calls} calls")
    np.savez_compressed(out / "tflm_signal_ref.npz", **ref)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?", type=Path, default=OUT)
    p.add_argument("--tflm", type=Path, help="a tflite-micro checkout (making the models)")
    p.add_argument("--reference", action="store_true", help="write tflm_signal_ref.npz with TFLM's interpreter")
    p.add_argument("--wav", type=Path, help="the audio of the references (default: the checkout's yes_1000ms.wav)")
    a = p.parse_args()
    if a.reference:
        reference(a.out, a.wav or (a.tflm / WAV if a.tflm else None))
    else:
        if a.tflm is None:
            p.error("--tflm PATH is needed to make the models")
        make(a.tflm, a.out)


if __name__ == "__main__":
    main()
