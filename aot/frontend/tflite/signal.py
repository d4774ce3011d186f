"""TFLM's signal library (issue 50; tflite-micro signal/): the custom ops of its audio front end, which
TFLM's micro_speech example ships as audio_preprocessor_int8.tflite / _float.tflite and which a
keyword-spotting pipeline puts before its net. Each becomes an aotc.tflite op (aot/ir/tflite_ops.py)
whose kernel (runtime_c/kernels/tflm_signal/) computes what TFLM's reference code computes, bit for bit:

- SignalWindow (shift), SignalFftAutoScale, SignalRfft and SignalIrfft (fft_length; kissfft 1.3.0's real FFT
  and its inverse, fixed point of 16 or 32 bits or float, whose twiddles and input order the compiler
  tabulates as kiss_fftr_alloc does: aot/kernels/tflm_signal.py),
  SignalEnergy (start_index, end_index), SignalFilterBank (num_channels; its five int16 tables are
  constant inputs), SignalFilterBankSquareRoot, SignalPCAN (snr_shift; its gain table a constant input),
  SignalFilterBankLog (output_scale, input_correction_bits; the log's 129-point correction table made
  here from its definition);
- SignalFilterBankSpectralSubtraction keeps its noise estimate between invokes (TFLM's persistent
  buffer, zeros at Prepare and at reset): state the caller carries, input `<out>_state` (uint32, zeros)
  and output `<out>_state_next`, which is also the op's second output (what PCAN reads).

Options come from each op's flexbuffer map by name. What TFLM only checks at run time, or not at all (a
band past the spectrum, an FFT length that is not a power of two here), is refused by name at compile
time. The streaming ops keep TFLM's circular buffers as state the caller carries (a row of held samples, oldest
first, and for Framer and Stacker their count; aotc_tflm_signal.h): SignalFramer, SignalStacker,
SignalOverlapAdd (int16, float32) and SignalDelay (a Concat and two Slices: data movement only). SignalRfft and
SignalIrfft take int16, int32 and float32 (kissfft's three builds in TFLM).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.reader import TflOp
from aot.frontend.tflite.state import record_state
from aot.ir import tflite_ops as tfl

_ONNX_TYPE = {"int16": helper.TensorProto.INT16, "int32": helper.TensorProto.INT32, "float32": helper.TensorProto.FLOAT,
              "uint32": helper.TensorProto.UINT32, "uint64": helper.TensorProto.UINT64, "bool": helper.TensorProto.BOOL}
# TFLM's TensorType numbers in a custom op's 'T' option
_TFLITE_TYPE = {7: "int16", 2: "int32", 0: "float32"}


def options(op: TflOp) -> dict[str, Any]:
    """The op's flexbuffer map (empty when it has none)."""
    from flatbuffers import flexbuffers

    raw = op.custom or (op.options if isinstance(op.options, bytes) else b"")
    if not raw:
        return {}
    try:
        m = flexbuffers.Loads(raw)
    except Exception as e:
        raise op_error(op, f"{op.op[7:]}'s custom options are not a flexbuffer map ({e})") from e
    if not isinstance(m, dict):
        raise op_error(op, f"{op.op[7:]}'s custom options are not a flexbuffer map")
    return m


def _int(op: TflOp, o: dict[str, Any], key: str, lo: int, hi: int) -> int:
    if key not in o:
        raise op_error(op, f"{op.op[7:]} has no option '{key}'")
    if isinstance(o[key], bool) or not isinstance(o[key], int):
        raise op_error(op, f"{op.op[7:]} option {key} is {type(o[key]).__name__}, not an integer")
    v = int(o[key])
    if not lo <= v <= hi:
        raise op_error(op, f"{op.op[7:]} option {key} = {v} is not in [{lo}, {hi}]")
    return v


def _types(b: OnnxBuilder, op: TflOp, ins: tuple[str, ...], outs: tuple[str, ...]) -> None:
    """The op's inputs and outputs are of TFLM's types for it (and are there)."""
    if len(op.inputs) != len(ins) or len(op.outputs) != len(outs) or min(op.inputs, default=0) < 0:
        raise op_error(op, f"{op.op[7:]} takes {len(ins)} inputs and gives {len(outs)} outputs "
                       f"({len(op.inputs)} and {len(op.outputs)} here)")
    for k, (i, want) in enumerate([*zip(op.inputs, ins, strict=True), *zip(op.outputs, outs, strict=True)]):
        t = b.tensor(i)
        if t.dtype != want:
            what = f"input {k}" if k < len(ins) else f"output {k - len(ins)}"
            raise op_error(op, f"{op.op[7:]}'s {what} '{t.name}' is {t.dtype}; TFLM's kernel takes {want}")


def _emit(b: OnnxBuilder, op: TflOp, ir_op: str, inputs: list[str], outputs: list[int | str],
          **attrs: Any) -> list[str]:
    """Write the node: outputs given as TFLite tensor indices (their values set) or names (state)."""
    names = [b.names[o] if isinstance(o, int) else o for o in outputs]
    b.nodes.append(helper.make_node(ir_op, inputs, names, name=b.fresh(op.name), domain=tfl.DOMAIN, **attrs))
    for o, name in zip(outputs, names, strict=True):
        if isinstance(o, int):
            t = b.tensor(o)
            b.value_infos.append(helper.make_tensor_value_info(name, _ONNX_TYPE[t.dtype], list(t.shape)))
            b.values[o] = {NHWC: name}
    return names


def _flat(b: OnnxBuilder, op: TflOp, k: int) -> int:
    return int(np.prod(b.tensor(op.inputs[k]).shape, dtype=np.int64))


def _window(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("int16", "int16"), ("int16",))
    shift = _int(op, options(op), "shift", 0, 31)
    w = b.tensor(op.inputs[1])
    n = _flat(b, op, 1)
    if len(w.shape) != 1 or b.tensor(op.inputs[0]).shape[-1:] != (n,):
        raise op_error(op, f"window of shape {list(w.shape)} for input {list(b.tensor(op.inputs[0]).shape)}: "
                       "one weight per sample of the innermost dimension expected")
    _emit(b, op, tfl.SIGNAL_WINDOW, [b.value(op.inputs[0]), b.value(op.inputs[1])], op.outputs, shift=shift)


def _fft_auto_scale(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("int16",), ("int16", "int32"))
    if len(b.tensor(op.inputs[0]).shape) != 1:
        rank = len(b.tensor(op.inputs[0]).shape)
        raise op_error(op, f"SignalFftAutoScale of a rank-{rank} input: TFLM's kernel scales a 1-D signal")
    _emit(b, op, tfl.SIGNAL_FFT_AUTO_SCALE, [b.value(op.inputs[0])], op.outputs)


def _fft(b: OnnxBuilder, op: TflOp) -> None:
    """SignalRfft (rows of at most fft_length samples to fft_length / 2 + 1 bins) and SignalIrfft (bins to
    fft_length samples), of int16, int32 or float32 (the 'T' option)."""
    inverse = op.op == "CUSTOM:SignalIrfft"
    what = "SignalIrfft" if inverse else "SignalRfft"
    o = options(op)
    t = o.get("T", 7)
    dtype = _TFLITE_TYPE.get(t) if isinstance(t, int) else None
    if dtype is None:
        raise op_error(op, f"{what} of TensorType {o.get('T')} is not supported (int16, int32, float32: TFLM's)")
    _types(b, op, (dtype,), (dtype,))
    fft_length = _int(op, o, "fft_length", 4, 1 << 16)
    if fft_length & (fft_length - 1):
        raise op_error(op, f"{what} of fft_length {fft_length}: aotc takes powers of two (kissfft's radix-4 and "
                       "radix-2 butterflies)")
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if inverse:
        ok = bool(x.shape) and x.shape[-1] == fft_length + 2 and y.shape == (*x.shape[:-1], fft_length)
    else:
        ok = bool(x.shape) and x.shape[-1] <= fft_length and y.shape == (*x.shape[:-1], fft_length + 2)
    if not ok:
        raise op_error(op, f"{what} of {list(x.shape)} to {list(y.shape)} with fft_length {fft_length}: rows of "
                       + (f"{fft_length + 2} values (fft_length / 2 + 1 bins) to {fft_length} samples expected"
                          if inverse else f"at most {fft_length} samples to {fft_length + 2} values expected"))
    _emit(b, op, tfl.SIGNAL_IRFFT if inverse else tfl.SIGNAL_RFFT, [b.value(op.inputs[0])], op.outputs,
          fft_length=fft_length)


def _energy(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("int16",), ("uint32",))
    o = options(op)
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    bins = _flat(b, op, 0) // 2
    if len(x.shape) != 1 or y.shape != (bins,):
        raise op_error(op, f"SignalEnergy of {list(x.shape)} to {list(y.shape)}: one spectrum of complex bins "
                       "(re, im) to one energy a bin expected")
    start = _int(op, o, "start_index", 0, bins)
    end = _int(op, o, "end_index", start, bins)
    _emit(b, op, tfl.SIGNAL_ENERGY, [b.value(op.inputs[0])], op.outputs, start_index=start, end_index=end)


def _filter_bank(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("uint32",) + ("int16",) * 5, ("uint64",))
    channels = _int(op, options(op), "num_channels", 1, 1 << 15)
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    tables = [b.tensor(i) for i in op.inputs[1:]]
    if any(t.data is None for t in tables):
        raise op_error(op, "SignalFilterBank's weights and bands are computed at run time; aotc needs them constant")
    w, u, fs, ws, wd = (t.data.astype(np.int64).reshape(-1) for t in tables)
    if len(x.shape) != 1 or y.shape != (channels,) or not fs.size == ws.size == wd.size == channels + 1 or \
            w.size != u.size:
        raise op_error(op, f"SignalFilterBank of {list(x.shape)} to {list(y.shape)} with {channels} channels: bands "
                       f"of {fs.size}, {ws.size} and {wd.size} entries (num_channels + 1 expected)")
    if (wd < 0).any() or (fs < 0).any() or (ws < 0).any() or (fs + wd > x.shape[0]).any() or (ws + wd > w.size).any():
        raise op_error(op, "SignalFilterBank's bands reach past its input or its weights")
    inputs = [b.value(op.inputs[0]), *(b.value(i) for i in op.inputs[1:])]
    _emit(b, op, tfl.SIGNAL_FILTER_BANK, inputs, op.outputs, num_channels=channels)


def _filter_bank_sqrt(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("uint64", "int32"), ("uint32",))
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if len(x.shape) != 1 or y.shape != x.shape or _flat(b, op, 1) != 1:
        raise op_error(op, f"SignalFilterBankSquareRoot of {list(x.shape)} to {list(y.shape)}: one channel vector "
                       "and one scale")
    _emit(b, op, tfl.SIGNAL_FILTER_BANK_SQRT, [b.value(op.inputs[0]), b.value(op.inputs[1])], op.outputs)


_SUBTRACTION = ("smoothing", "one_minus_smoothing", "alternate_smoothing", "alternate_one_minus_smoothing",
                "min_signal_remaining")


def _spectral_subtraction(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("uint32",), ("uint32", "uint32"))
    o = options(op)
    channels = _int(op, o, "num_channels", 1, 1 << 15)
    x = b.tensor(op.inputs[0])
    if x.shape != (channels,) or any(b.tensor(i).shape != (channels,) for i in op.outputs):
        raise op_error(op, f"SignalFilterBankSpectralSubtraction of {list(x.shape)} with num_channels {channels}")
    attrs = {k: _int(op, o, k, 0, 2 ** 32 - 1) for k in _SUBTRACTION}
    attrs["smoothing_bits"] = _int(op, o, "smoothing_bits", 0, 31)
    attrs["spectral_subtraction_bits"] = _int(op, o, "spectral_subtraction_bits", 0, 63)
    attrs["clamping"] = int(bool(o.get("clamping", False)))
    s_in, s_out = _state(b, b.names[op.outputs[0]], helper.TensorProto.UINT32, "uint32", [channels], 0,
                         "0: TFLM's FilterBankSpectralSubtraction noise estimate, zeroed at Prepare and at reset")
    _emit(b, op, tfl.SIGNAL_SPECTRAL_SUBTRACTION, [b.value(op.inputs[0]), s_in], [op.outputs[0], s_out], **attrs)
    b.values[op.outputs[1]] = {NHWC: s_out}  # the op's noise estimate is the state it carries on


def _pcan(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("uint32", "uint32", "int16"), ("uint32",))
    snr_shift = _int(op, options(op), "snr_shift", 0, 63)
    x, lut = b.tensor(op.inputs[0]), b.tensor(op.inputs[2])
    if len(x.shape) != 1 or b.tensor(op.inputs[1]).shape != x.shape or b.tensor(op.outputs[0]).shape != x.shape:
        raise op_error(op, f"SignalPCAN of {list(x.shape)}: its signal, noise estimate and output must be one vector")
    # the table's index reaches 4 * 32 - 6 + 2 = 124 (a noise of 32 bits)
    if lut.data is None or lut.data.size < 125:
        raise op_error(op, "SignalPCAN's gain table must be a constant of at least 125 entries")
    _emit(b, op, tfl.SIGNAL_PCAN, [b.value(i) for i in op.inputs], op.outputs, snr_shift=snr_shift)


def _filter_bank_log(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("uint32",), ("int16",))
    o = options(op)
    x = b.tensor(op.inputs[0])
    if len(x.shape) != 1 or b.tensor(op.outputs[0]).shape != x.shape:
        raise op_error(op, f"SignalFilterBankLog of {list(x.shape)}: one channel vector")
    _emit(b, op, tfl.SIGNAL_FILTER_BANK_LOG, [b.value(op.inputs[0])], op.outputs,
          output_scale=_int(op, o, "output_scale", 0, 2 ** 31 - 1),
          input_correction_bits=_int(op, o, "input_correction_bits", 0, 31))


def _state(b: OnnxBuilder, name: str, onnx_type: int, dtype: str, shape: list[int], start: np.ndarray | int,
           why: str) -> tuple[str, str]:
    """A state input `<name>_state` and its next value `<name>_state_next` (a graph output), starting at `start`."""
    s_in, s_out = f"{name}_state", f"{name}_state_next"
    b.used.update((s_in, s_out))
    b.extra_inputs.append(helper.make_tensor_value_info(s_in, onnx_type, shape))
    b.extra_outputs.append(helper.make_tensor_value_info(s_out, onnx_type, shape))
    b.value_infos.append(helper.make_tensor_value_info(s_out, onnx_type, shape))
    record_state(b, s_in, s_out, dtype, shape, start, why)
    return s_in, s_out


def _framer(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("int16",), ("int16", "bool"))
    o = options(op)
    size = _int(op, o, "frame_size", 1, 1 << 14)
    step = _int(op, o, "frame_step", 1, size)
    prefill = bool(o.get("prefill", False))
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if not x.shape or x.shape[-1] % step or y.shape != (*x.shape[:-1], x.shape[-1] // step, size):
        raise op_error(op, f"SignalFramer of {list(x.shape)} to {list(y.shape)}: rows of a multiple of frame_step "
                       f"{step} samples to [..., rows / {step}, {size}] frames expected")
    capacity = -(-size // step) * step  # TFLM's circular buffer
    outer = int(np.prod(x.shape[:-1], dtype=np.int64))
    start = np.zeros((outer, capacity + 1), np.int16)
    start[:, capacity] = size - step if prefill else 0
    s_in, s_out = _state(b, b.names[op.outputs[0]], helper.TensorProto.INT16, "int16", [outer, capacity + 1], start,
                         f"TFLM's Framer buffer{' prefilled with frame_size - frame_step zeros' if prefill else ''}: "
                         f"{capacity} samples a row (0s), then how many are held ({start[0, capacity]})")
    _emit(b, op, tfl.SIGNAL_FRAMER, [b.value(op.inputs[0]), s_in], [*op.outputs, s_out], frame_size=size,
          frame_step=step)


def _stacker(b: OnnxBuilder, op: TflOp) -> None:
    _types(b, op, ("int16",), ("int16", "bool"))
    o = options(op)
    channels = _int(op, o, "num_channels", 1, 1 << 14)
    left = _int(op, o, "stacker_left_context", 0, 1 << 10)
    right = _int(op, o, "stacker_right_context", 0, 1 << 10)
    step = _int(op, o, "stacker_step", 1, left + right + 1)
    size = channels * (left + right + 1)
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if x.shape != (channels,) or y.shape != (size,) or size >= 1 << 15:
        raise op_error(op, f"SignalStacker of {list(x.shape)} to {list(y.shape)}: one frame of num_channels {channels} "
                       f"to {size} samples (fewer than 32768) expected")
    s_in, s_out = _state(b, b.names[op.outputs[0]], helper.TensorProto.INT16, "int16", [size + 2], 0,
                         f"TFLM's Stacker buffer, reset: {size} samples, the count held and whether the first frame "
                         "came, all 0")
    _emit(b, op, tfl.SIGNAL_STACKER, [b.value(op.inputs[0]), s_in], [*op.outputs, s_out], num_channels=channels,
          stacker_left_context=left, stacker_right_context=right, stacker_step=step)


def _overlap_add(b: OnnxBuilder, op: TflOp) -> None:
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    dtype = _TFLITE_TYPE.get(int(options(op).get("T", 0)))
    if dtype not in ("int16", "float32"):
        raise op_error(op, f"SignalOverlapAdd of {dtype} is not supported (int16 and float32, TFLM's)")
    _types(b, op, (dtype,), (dtype,))
    o = options(op)
    if len(x.shape) < 2:
        raise op_error(op, f"SignalOverlapAdd of {list(x.shape)}: [..., frames, frame_size] expected")
    *lead, frames, size = x.shape
    step = _int(op, o, "frame_step", 1, size)
    if y.shape != (*lead, frames * step):
        raise op_error(op, f"SignalOverlapAdd of {list(x.shape)} to {list(y.shape)} with frame_step {step}")
    outer = int(np.prod(lead, dtype=np.int64))
    kind = helper.TensorProto.INT16 if dtype == "int16" else helper.TensorProto.FLOAT
    s_in, s_out = _state(b, b.names[op.outputs[0]], kind, dtype, [outer, size], 0,
                         "0: TFLM's OverlapAdd buffers, zeroed at Prepare and at reset")
    _emit(b, op, tfl.SIGNAL_OVERLAP_ADD, [b.value(op.inputs[0]), s_in], [*op.outputs, s_out], frame_step=step)


def _delay(b: OnnxBuilder, op: TflOp) -> None:
    """Delay: the last delay_length samples of each row held over: y = (held ++ x)[:n], held' = (held ++ x)[n:]
    (TFLM's circular buffer of n + delay, which always holds delay_length), as Concat and two Slices."""
    _types(b, op, ("int16",), ("int16",))
    delay = _int(op, options(op), "delay_length", 0, 1 << 15)
    x = b.tensor(op.inputs[0])
    if not x.shape or b.tensor(op.outputs[0]).shape != x.shape:
        raise op_error(op, f"SignalDelay of {list(x.shape)}: the output is the input's shape")
    n = x.shape[-1]
    if delay == 0:
        b.values[op.outputs[0]] = {NHWC: b.value(op.inputs[0])}
        return
    shape = [*x.shape[:-1], delay]
    s_in, s_out = _state(b, b.names[op.outputs[0]], helper.TensorProto.INT16, "int16", shape, 0,
                         f"0: TFLM's Delay buffers start with {delay} zeros")
    axis = len(x.shape) - 1
    both = b.node("Concat", [s_in, b.value(op.inputs[0])], hint=f"{op.name}_held", axis=axis)
    starts, ends, axes = (b.const(np.array([v], np.int64), f"{op.name}_{k}") for k, v in (
        ("y0", 0), ("y1", n), ("axis", axis)))
    b.node("Slice", [both, starts, ends, axes], [b.names[op.outputs[0]]], hint=op.name)
    b.node("Slice", [both, ends, b.const(np.array([n + delay], np.int64), f"{op.name}_s1"), axes], [s_out],
           hint=f"{op.name}_next")
    b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}


OPS = {
    "CUSTOM:SignalWindow": _window,
    "CUSTOM:SignalFftAutoScale": _fft_auto_scale,
    "CUSTOM:SignalRfft": _fft,
    "CUSTOM:SignalIrfft": _fft,
    "CUSTOM:SignalEnergy": _energy,
    "CUSTOM:SignalFilterBank": _filter_bank,
    "CUSTOM:SignalFilterBankSquareRoot": _filter_bank_sqrt,
    "CUSTOM:SignalFilterBankSpectralSubtraction": _spectral_subtraction,
    "CUSTOM:SignalPCAN": _pcan,
    "CUSTOM:SignalFilterBankLog": _filter_bank_log,
    "CUSTOM:SignalFramer": _framer,
    "CUSTOM:SignalStacker": _stacker,
    "CUSTOM:SignalOverlapAdd": _overlap_add,
    "CUSTOM:SignalDelay": _delay,
}
