"""The TFLite ops page: which TFLite builtin operators aotc compiles, for float tensors and for
quantized int8 and 16x8 (int16 activations) ones, generated from the TFLite frontend's own tables
so it cannot drift from the code.

    aotc ops --tflite              the table on the terminal
    aotc ops --tflite CONV_2D      one op
    aotc ops --tflite --markdown   docs/tflite-ops.md (tests/kernels/test_ops_page.py checks it is current)

Every BuiltinOperator of TFLite's schema is listed, the ones aotc refuses too, so the page answers
"will my model compile" before a user tries. Custom ops are listed below the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from aot.frontend.tflite.hybrid import HYBRID_ELSEWHERE, HYBRID_OPS
from aot.frontend.tflite.int8 import INT8_OPS, INT16_OPS
from aot.frontend.tflite.int8_math import INT8 as _MATH8
from aot.frontend.tflite.int8_math import INT16 as _MATH16
from aot.frontend.tflite.ops import FLOAT_BUILTINS, QUANTIZED_MOVES, QUANTIZED_MOVES_16
from aot.frontend.tflite.reader import CUSTOM_OPS, schema
from aot.frontend.tflite.reference_types import (
    DEFAULT_KERNELS,
    KERNELS,
    NO_KERNEL,
    RAW_INTEGERS,
    defined,
    no_kernel,
    refusal,
)
from aot.frontend.tflite.resolver import REFUSED

# quantized ops lowered outside INT8_OPS: the recurrent ones (recurrent.py) and the conversions (CAST of the
# integers by ops.py, as LiteRT's kernel casts them)
_INT8_OTHER = frozenset({"SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM", "QUANTIZE", "DEQUANTIZE", "CAST", *_MATH8})
_INT16_OTHER = frozenset({"QUANTIZE", "DEQUANTIZE", "CAST", *_MATH16})  # CAST: of the raw integers, as LiteRT

YES, NO = "yes", "-"
# what each custom op of CUSTOM_OPS takes, for the page and `aotc ops --tflite NAME`
CUSTOM_NOTES = {
    "TFLite_Detection_PostProcess": "float32 or uint8 box encodings and class predictions as LiteRT runs them, and "
                                    "int8 ones (dequantized alike; LiteRT refuses them); constant anchors; the fast "
                                    "and the regular NMS; float32 outputs",
    "Convolution2DTransposeBias": "MediaPipe's transposed conv with bias (float32), as ConvTranspose",
    "MaxPoolingWithArgmax2D": "MediaPipe's max pool with each maximum's window position (float32)",
    "MaxUnpooling2D": "MediaPipe's unpooling by those positions (float32; stride equal to the filter)",
    "Landmarks2TransformMatrix": "MediaPipe's landmarks-to-matrix (float32, version 2)",
    "TransformTensorBilinear": "MediaPipe's bilinear sampling through a matrix (float32, versions 1 and 2, batch 1)",
    "TransformLandmarks": "MediaPipe's landmarks through a matrix (float32, version 2)",
    "SignalWindow": "TFLM signal library: int16 samples times a constant window, shifted, saturated (bit-exact "
                    "with TFLM)",
    "SignalFftAutoScale": "TFLM signal library: a 1-D int16 signal shifted left by its free bits, and the shift",
    "SignalRfft": "TFLM signal library: kissfft's real FFT of int16 or int32 rows (fixed point, bit-exact) or "
                  "float32 ones, fft_length a power of two",
    "SignalIrfft": "TFLM signal library: kissfft's inverse real FFT (int16, int32, float32), fft_length a power of "
                   "two",
    "SignalEnergy": "TFLM signal library: re^2 + im^2 of int16 bins [start_index, end_index) to uint32 (0 outside)",
    "SignalFilterBank": "TFLM signal library: uint32 energies into num_channels uint64 sums by constant band tables",
    "SignalFilterBankSquareRoot": "TFLM signal library: TFLM's rounded integer square root of uint64 channels, shifted",
    "SignalFilterBankSpectralSubtraction": "TFLM signal library: noise reduction; its noise estimate is state the "
                                           "caller carries (uint32, starting at 0)",
    "SignalPCAN": "TFLM signal library: per-channel automatic gain control by a constant gain table (uint32)",
    "SignalFilterBankLog": "TFLM signal library: TFLM's fixed-point log of uint32 channels to int16",
    "SignalFramer": "TFLM signal library: int16 rows into overlapping frames and a valid flag; its buffer is state "
                    "the caller carries (prefill as TFLM's)",
    "SignalStacker": "TFLM signal library: int16 frames stacked with left and right context, and a valid flag; its "
                     "buffer is state the caller carries",
    "SignalOverlapAdd": "TFLM signal library: int16 (saturated) or float32 frames overlap-added; its buffer is state "
                        "the caller carries",
    "SignalDelay": "TFLM signal library: int16 rows delayed by delay_length samples (Concat and Slice of the "
                   "held samples, state the caller carries)",
}


@dataclass(frozen=True)
class TflRow:
    op: str
    float: bool
    int8: bool
    int16: bool  # 16x8: int16 activations, int8 weights
    hybrid: bool = False  # float32 activations, int8 weights (dynamic-range quantisation)

    @property
    def supported(self) -> bool:
        return self.float or self.int8 or self.int16 or self.hybrid


def builtin_names() -> list[str]:
    """Every BuiltinOperator name in the installed TFLite schema, sorted."""
    return sorted(k for k, v in vars(schema().BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int))


def rows() -> list[TflRow]:
    return [TflRow(op, op in FLOAT_BUILTINS, op in INT8_OPS or op in QUANTIZED_MOVES or op in _INT8_OTHER,
                   op in INT16_OPS or op in QUANTIZED_MOVES_16 or op in _INT16_OTHER,
                   op in HYBRID_OPS or op in HYBRID_ELSEWHERE)
            for op in builtin_names()]


HEAD = ["op", "float", "int8", "16x8", "hybrid"]


def _quantized_cell(op: str, compiles: bool, dtype: str) -> str:
    """yes; "refused: why" where LiteRT's reference kernels define the form and aotc does not compile it;
    "-" where the reference does not define it (reference_types.py)."""
    if compiles:
        note = DEFAULT_KERNELS.get((op, dtype)) or RAW_INTEGERS.get((op, dtype))
        return f"{YES} ({note})" if note else YES
    return f"refused: {refusal(op, dtype)}" if defined(op, dtype) else NO


def _cells(r: TflRow) -> list[str]:
    return [r.op, YES if r.float else NO, _quantized_cell(r.op, r.int8, "int8"),
            _quantized_cell(r.op, r.int16, "int16"), YES if r.hybrid else NO]


def _summary(table: list[TflRow]) -> str:
    n = sum(r.supported for r in table)
    refused = [(r.op, t) for r in table for t, ok in (("int8", r.int8), ("int16", r.int16))
               if not ok and defined(r.op, t)]
    return (f"{n} of {len(table)} builtins compile (float {sum(r.float for r in table)}, int8 "
            f"{sum(r.int8 for r in table)}, 16x8 {sum(r.int16 for r in table)}, hybrid "
            f"{sum(r.hybrid for r in table)}); quantized forms LiteRT's reference kernels define that aotc refuses: "
            f"{len(refused)}; custom ops: {', '.join(CUSTOM_OPS) or 'none yet'}.")


def markdown() -> str:
    table = rows()
    lines = [
        "# Supported TFLite ops",
        "",
        "Generated from the TFLite frontend's tables by `aotc ops --tflite --markdown`; do not edit. Every "
        "BuiltinOperator of the installed TFLite schema is listed. \"float\": the op compiles on unquantized "
        "tensors (float32, and the integer and boolean types the op takes); \"int8\": on int8 tensors with "
        "TFLite's quantization, bit-exact with LiteRT's reference kernels; \"16x8\": int16 activations with int8 "
        "weights; \"hybrid\": float32 activations with int8 weights (dynamic-range quantisation), computed as "
        "LiteRT's hybrid kernels do (the input quantized at run time, int32 sums). \"refused: ...\": LiteRT's "
        "reference kernels (BUILTIN_REF) define the quantized form and aotc refuses it, saying why; \"-\": the "
        "reference does not define it either (aot/frontend/tflite/reference_types.py, measured by "
        "tests/tflite_probe.py). A refused op is refused in one line naming the op and its node. Ops whose inputs "
        "are all constants are folded at compile time whatever they are.",
        "",
        _summary(table),
        "",
        "| " + " | ".join(HEAD) + " |",
        "|" + "---|" * len(HEAD),
    ]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in table]
    lines += ["", "## Custom ops", "", "Custom operators (BuiltinOperator CUSTOM, known by their name) aotc lowers; "
              "any other is refused by name.", ""]
    lines += [f"- `{name}`: {CUSTOM_NOTES[name]}." for name in CUSTOM_OPS]
    lines += ["", "## Refused by design", "", "Builtins a static-arena C bundle cannot be, and why:", ""]
    lines += [f"- {op}: {why}." for op, why in sorted(REFUSED.items())]
    missing = [r.op for r in table if not r.supported and no_kernel(r.op) and r.op not in REFUSED]
    lines += ["", "## No LiteRT kernel", "", f"Builtins aotc does not compile because {NO_KERNEL} (measured by "
              "`python tests/tflite_probe.py --kernels`): " + ", ".join(missing) + "."]
    default_only = [op for op, (ref, default) in sorted(KERNELS.items()) if default and not ref and op not in REFUSED]
    lines += ["", "## LiteRT's default resolver only", "", "Builtins LiteRT's reference resolver (BUILTIN_REF) has no "
              "kernel for and its default resolver has; aotc's are tested against the default kernels: "
              + ", ".join(default_only) + "."]
    return "\n".join(lines) + "\n"


def text(op: str | None = None) -> str:
    table = rows()
    if op is not None:
        match = [r for r in table if r.op.lower() == op.lower()]
        custom = [name for name in CUSTOM_OPS if name.lower() == op.lower()]
        if custom:
            return f"{custom[0]} (custom op): {CUSTOM_NOTES[custom[0]]}\n"
        if not match:
            return f"{op}: not a TFLite builtin operator\n"
        why = f"refused: {REFUSED[match[0].op]}\n" if match and match[0].op in REFUSED else \
            f"refused: {NO_KERNEL}\n" if match and not match[0].supported and no_kernel(match[0].op) else ""
        return "".join(f"{h}: {c}\n" for r in match for h, c in zip(HEAD, _cells(r), strict=True)) + why
    cells = [HEAD, *(_cells(r) for r in table if r.supported)]
    widths = [max(len(c[k]) for c in cells) for k in range(len(HEAD))]
    return "".join("  ".join(c[k].ljust(widths[k]) for k in range(len(HEAD))).rstrip() + "\n" for c in cells) + \
        _summary(table) + "\naotc ops --tflite OP for one, --markdown for docs/tflite-ops.md (every builtin)\n"
