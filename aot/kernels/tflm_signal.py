"""Host ops of the 'tflm_signal' family (runtime_c/kernels/tflm_signal/): TFLM's signal library ops, the
audio front end of its micro_speech example (aot/frontend/tflite/signal.py reads them). Every kernel is
integer arithmetic bit-exact with TFLM's reference code; what TFLM computes at init (the FFT's twiddles
and input order, the log's table) is tabulated here as constants, so the C holds no trigonometry and
no state of its own. No scratch: the FFT runs in place in its output."""

from __future__ import annotations

import math

import numpy as np

from aot.csource.format import c_int, c_ints
from aot.ir import Graph, Node
from aot.ir import tflite_ops as tfl
from aot.kernels.base import HostOp, NodeContext


def kiss_factors(n: int) -> list[int]:
    """kissfft's kf_factor for a power of two: 4s first, then a 2 when n is an odd power of 2."""
    out = []
    while n % 4 == 0:
        out.append(4)
        n //= 4
    if n == 2:
        out.append(2)
    return out


_SCALE = {"int16": 32767, "int32": 2147483647, "float32": 0}  # kissfft's SAMP_MAX per scalar (0: float)


def rfft_tables(fft_length: int, dtype: str = "int16", inverse: bool = False) -> dict[str, np.ndarray | list[int]]:
    """What kiss_fftr_alloc(fft_length, inverse) computes at init, as the kernels read it: the complex FFT's
    radices, the input each output position takes (kf_work's recursion, unrolled), its twiddles (cos, sin of
    -+2 pi k / n: floor(0.5 + SAMP_MAX cos) for the fixed-point types, (float) cos for float) and the real
    split's super twiddles, of `dtype`."""
    n = fft_length // 2
    radix = kiss_factors(n)
    perm = np.zeros(n, np.int64)
    for k in range(n):
        rest, sub, stride, q = k, n, 1, 0
        for p in radix:
            sub //= p
            q += (rest // sub) * stride
            rest %= sub
            stride *= p
        perm[k] = q
    pi = 3.141592653589793238462643383279502884197169399375105820974944
    sign, scale = (1.0 if inverse else -1.0), _SCALE[dtype]

    def cexp(phase: float) -> tuple[float, float]:
        if not scale:
            return float(np.float32(math.cos(phase))), float(np.float32(math.sin(phase)))
        return math.floor(0.5 + scale * math.cos(phase)), math.floor(0.5 + scale * math.sin(phase))
    tw = [cexp(sign * 2 * pi * k / n) for k in range(n)]
    super_tw = [cexp(sign * 3.14159265358979323846264338327 * ((k + 1) / n + 0.5)) for k in range(n // 2)]
    return {"radix": radix, "perm": perm.astype(np.int16), "tw": np.asarray(tw, dtype).reshape(-1),
            "super_tw": np.asarray(super_tw, dtype).reshape(-1)}


def log_table() -> np.ndarray:
    """TFLM's log correction table (signal/src/log.cc's kLogLut), from its definition: round(2^16 (log2(1 + t)
    - t)) at t = i / 128 for i in 0..128, then a 0 (padding)."""
    t = np.arange(129) / 128.0
    return np.append(np.floor((np.log2(1.0 + t) - t) * 65536.0 + 0.5), 0).astype(np.uint16)


def _n(ctx: NodeContext, name: str) -> int:
    return int(np.prod(ctx.shape(name), dtype=np.int64))


def _emit_window(ctx: NodeContext) -> None:
    x, w = ctx.inputs
    n = _n(ctx, w)
    ctx.comment(f"SignalWindow of {list(ctx.shape(x))}, shift {ctx.attrs['shift']}")
    ctx.call("aotc_tflm_window_i16", c_int(_n(ctx, x) // n), c_int(n), c_int(ctx.attrs["shift"]), ctx.ptr(x),
             ctx.ptr(w), ctx.ptr(ctx.outputs[0]))


def _emit_auto_scale(ctx: NodeContext) -> None:
    x = ctx.inputs[0]
    y, bits = ctx.outputs
    ctx.comment(f"SignalFftAutoScale of {_n(ctx, x)} samples")
    ctx.call("aotc_tflm_fft_auto_scale_i16", c_int(_n(ctx, x)), ctx.ptr(x), ctx.ptr(y), ctx.ptr(bits))


def _emit_fft(ctx: NodeContext) -> None:
    """SignalRfft and SignalIrfft of int16, int32 or float32: one call over the rows, kissfft's tables."""
    x, y = ctx.inputs[0], ctx.outputs[0]
    length = int(ctx.attrs["fft_length"])
    inverse = ctx.node.op == tfl.SIGNAL_IRFFT
    dtype = ctx.dtype(x)
    t = rfft_tables(length, dtype, inverse)
    in_len = ctx.shape(x)[-1]
    what = f"kissfft's {length}-point {'inverse ' if inverse else ''}real FFT of {dtype}"
    perm = ctx.const_array("perm", t["perm"], comment=f"{what}: the input each position of the complex FFT takes")
    tw = ctx.const_array("tw", t["tw"], comment=f"{what}: twiddles (re, im), as kiss_fft_alloc rounds them")
    stw = ctx.const_array("stw", t["super_tw"], comment=f"{what}: the real split's twiddles, as kiss_fftr_alloc's")
    radix = list(t["radix"])
    p = ctx.params("aotc_tflm_rfft_params", {
        "rows": c_int(_n(ctx, x) // in_len), "in_len": c_int(in_len), "n": c_int(length // 2),
        "stages": c_int(len(radix)), "radix": c_ints(radix), "perm": perm, "tw": tw, "super_tw": stw,
    }, comment=f"Signal{'Irfft' if inverse else 'Rfft'} of {list(ctx.shape(x))}, fft_length {length}: stages of "
               f"radix {radix}")
    suffix = {"int16": "i16", "int32": "i32", "float32": "f32"}[dtype]
    ctx.call(f"aotc_tflm_{'irfft' if inverse else 'rfft'}_{suffix}", p, ctx.ptr(x), ctx.ptr(y))


def _emit_energy(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    a = ctx.attrs
    ctx.comment(f"SignalEnergy of bins [{a['start_index']}, {a['end_index']}) of {_n(ctx, y)}")
    ctx.call("aotc_tflm_energy_i16", c_int(_n(ctx, y)), c_int(a["start_index"]), c_int(a["end_index"]), ctx.ptr(x),
             ctx.ptr(y))


def _emit_filter_bank(ctx: NodeContext) -> None:
    x, w, u, fs, ws, wd = ctx.inputs
    p = ctx.params("aotc_tflm_filter_bank_params", {
        "channels": c_int(ctx.attrs["num_channels"]), "weights": ctx.ptr(w), "unweights": ctx.ptr(u),
        "freq_starts": ctx.ptr(fs), "weight_starts": ctx.ptr(ws), "widths": ctx.ptr(wd),
    }, comment=f"SignalFilterBank of {_n(ctx, x)} energies to {ctx.attrs['num_channels']} channels")
    ctx.call("aotc_tflm_filter_bank", p, ctx.ptr(x), ctx.ptr(ctx.outputs[0]))


def _emit_sqrt(ctx: NodeContext) -> None:
    x, bits = ctx.inputs
    ctx.comment(f"SignalFilterBankSquareRoot of {_n(ctx, x)} channels")
    ctx.call("aotc_tflm_filter_bank_sqrt", c_int(_n(ctx, x)), ctx.ptr(x), ctx.ptr(bits), ctx.ptr(ctx.outputs[0]))


def _emit_subtraction(ctx: NodeContext) -> None:
    x, state = ctx.inputs
    y, nxt = ctx.outputs
    a = ctx.attrs
    fields = {k: f"{int(a[k])}u" for k in ("smoothing", "one_minus_smoothing", "alternate_smoothing",
                                          "alternate_one_minus_smoothing", "min_signal_remaining",
                                          "smoothing_bits", "spectral_subtraction_bits")}
    p = ctx.params("aotc_tflm_spectral_subtraction_params", {
        "channels": c_int(_n(ctx, x)), **fields, "clamping": str(int(a["clamping"])),
    }, comment=f"SignalFilterBankSpectralSubtraction of {_n(ctx, x)} channels: noise estimate {state} -> {nxt}")
    ctx.call("aotc_tflm_spectral_subtraction", p, ctx.ptr(x), ctx.ptr(state), ctx.ptr(y), ctx.ptr(nxt))


def _emit_pcan(ctx: NodeContext) -> None:
    x, noise, lut = ctx.inputs
    ctx.comment(f"SignalPCAN of {_n(ctx, x)} channels, snr_shift {ctx.attrs['snr_shift']}")
    ctx.call("aotc_tflm_pcan", c_int(_n(ctx, x)), c_int(ctx.attrs["snr_shift"]), ctx.ptr(x), ctx.ptr(noise),
             ctx.ptr(lut), ctx.ptr(ctx.outputs[0]))


def _emit_log(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    a = ctx.attrs
    lut = ctx.const_array("log_lut", log_table(), comment="TFLM's log correction: round(2^16 (log2(1 + i / 128) - "
                          "i / 128)), i = 0..128, then 0")
    ctx.comment(f"SignalFilterBankLog of {_n(ctx, x)} channels, scale {a['output_scale']}, "
                f"correction bits {a['input_correction_bits']}")
    ctx.call("aotc_tflm_filter_bank_log", c_int(_n(ctx, x)), c_int(a["output_scale"]),
             c_int(a["input_correction_bits"]), lut, ctx.ptr(x), ctx.ptr(y))


def _emit_framer(ctx: NodeContext) -> None:
    x, state = ctx.inputs
    y, valid, nxt = ctx.outputs
    a = ctx.attrs
    size, step = int(a["frame_size"]), int(a["frame_step"])
    shape = ctx.shape(x)
    p = ctx.params("aotc_tflm_framer_params", {
        "outer": c_int(_n(ctx, x) // shape[-1]), "n_frames": c_int(shape[-1] // step), "frame_size": c_int(size),
        "frame_step": c_int(step), "capacity": c_int(ctx.shape(state)[-1] - 1),
    }, comment=f"SignalFramer of {list(shape)}: frames of {size}, step {step}; buffer {state} -> {nxt}")
    ctx.call("aotc_tflm_framer_i16", p, ctx.ptr(x), ctx.ptr(state), ctx.ptr(y), ctx.ptr(valid), ctx.ptr(nxt))


def _emit_stacker(ctx: NodeContext) -> None:
    x, state = ctx.inputs
    y, valid, nxt = ctx.outputs
    a = ctx.attrs
    p = ctx.params("aotc_tflm_stacker_params", {
        "channels": c_int(a["num_channels"]), "left": c_int(a["stacker_left_context"]),
        "right": c_int(a["stacker_right_context"]), "step": c_int(a["stacker_step"]),
    }, comment=f"SignalStacker of {a['num_channels']} channels: buffer {state} -> {nxt}")
    ctx.call("aotc_tflm_stacker_i16", p, ctx.ptr(x), ctx.ptr(state), ctx.ptr(y), ctx.ptr(valid), ctx.ptr(nxt))


def _emit_overlap_add(ctx: NodeContext) -> None:
    x, state = ctx.inputs
    y, nxt = ctx.outputs
    *lead, frames, size = ctx.shape(x)
    p = ctx.params("aotc_tflm_overlap_add_params", {
        "outer": c_int(int(np.prod(lead, dtype=np.int64))), "n_frames": c_int(frames), "frame_size": c_int(size),
        "frame_step": c_int(ctx.attrs["frame_step"]),
    }, comment=f"SignalOverlapAdd of {list(ctx.shape(x))}, step {ctx.attrs['frame_step']}: buffer {state} -> {nxt}")
    suffix = "i16" if ctx.dtype(x) == "int16" else "f32"
    ctx.call(f"aotc_tflm_overlap_add_{suffix}", p, ctx.ptr(x), ctx.ptr(state), ctx.ptr(y), ctx.ptr(nxt))


def _check_rfft(node: Node, graph: Graph) -> str | None:
    length = int(node.attrs["fft_length"])
    if length & (length - 1) or not 4 <= length <= 1 << 16:
        return f"fft_length {length} is not a power of two in [4, 65536]"
    return None


def _op(emit, dtypes: tuple[str, ...], check=None) -> HostOp:
    return HostOp(emit, family="tflm_signal", dtypes=dtypes, check=check)


OPS: dict[str, HostOp] = {
    tfl.SIGNAL_WINDOW: _op(_emit_window, ("int16",)),
    tfl.SIGNAL_FFT_AUTO_SCALE: _op(_emit_auto_scale, ("int16",)),
    tfl.SIGNAL_RFFT: _op(_emit_fft, ("int16", "int32", "float32"), _check_rfft),
    tfl.SIGNAL_IRFFT: _op(_emit_fft, ("int16", "int32", "float32"), _check_rfft),
    tfl.SIGNAL_ENERGY: _op(_emit_energy, ("int16",)),
    tfl.SIGNAL_FILTER_BANK: _op(_emit_filter_bank, ("uint32",)),
    tfl.SIGNAL_FILTER_BANK_SQRT: _op(_emit_sqrt, ("uint64",)),
    tfl.SIGNAL_SPECTRAL_SUBTRACTION: _op(_emit_subtraction, ("uint32",)),
    tfl.SIGNAL_PCAN: _op(_emit_pcan, ("uint32",)),
    tfl.SIGNAL_FILTER_BANK_LOG: _op(_emit_log, ("uint32",)),
    tfl.SIGNAL_FRAMER: _op(_emit_framer, ("int16",)),
    tfl.SIGNAL_STACKER: _op(_emit_stacker, ("int16",)),
    tfl.SIGNAL_OVERLAP_ADD: _op(_emit_overlap_add, ("int16", "float32")),
}
