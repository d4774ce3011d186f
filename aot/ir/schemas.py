"""aotc's own op vocabulary, declared once for every stage: the ops and node attributes its passes
write (a fused elementwise tree, convs that read or write channels last), which ONNX ops map element
to element, and the output shape of a DFT as the frontend canonicalises it. The passes that write
these and the kernels that run them both read them here. The TFLite integer ops (domain aotc.tflite)
are declared beside this, in tflite_ops.py."""

from __future__ import annotations

from aot.ir.graph import Node

# --- FusedElementwise (aot/passes/fuse_elementwise.py): a tree of float ops run as one loop -------------
FUSED_ELEMENTWISE = "FusedElementwise"
# the ops its program may hold; each one's C expression is the kernel's (aot/kernels/fused.py)
FUSED_UNARY = frozenset({"Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Reciprocal", "Sqrt", "Exp"})
FUSED_BINARY = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min"})
# and Pow by a constant exponent that is an integer or half an integer, at most FUSED_POW_MAX in magnitude:
# multiplies, a square root and a division compute it there (not libm's powf per element), a lone one too
FUSED_POW = "Pow"
FUSED_POW_MAX = 8


def pow_by_multiplies(exponent: float) -> bool:
    """Whether a fused loop computes x ** exponent without powf: 2 * exponent a whole number, |exponent| <= 8."""
    return abs(exponent) <= FUSED_POW_MAX and float(2.0 * exponent).is_integer()


# --- SwishMean (aot/passes/fuse_swish_mean.py): Swish(x) -> y and ReduceMean(y) over its planes -> m, one kernel --
# inputs (x), outputs (y, m); attributes alpha (the Swish's) and keepdims (the ReduceMean's: m's shape only)
SWISH_MEAN = "SwishMean"


# --- the channels-last layout of a conv (aot/passes/conv_nhwc.py) --------------------------------------
NHWC_ATTR = "aotc_in_nhwc"
OUT_NHWC_ATTR = "aotc_out_nhwc"


def reads_nhwc(node: Node) -> bool:
    """Whether this conv node reads its input X channels last (set by ConvReadsNHWC)."""
    return bool(node.attrs.get(NHWC_ATTR, 0))


def writes_nhwc(node: Node) -> bool:
    """Whether this conv node stores its output channels last (set by ConvWritesNHWC)."""
    return bool(node.attrs.get(OUT_NHWC_ATTR, 0))


# --- a LayerNormalization over a middle dim (aot/passes/channel_norm.py) -------------------------------
# X as [rows, n, inner]: each of the rows * inner vectors of n elements, inner apart, normalised on its own
# (a channels-first LayerNorm, C = n, H * W = inner); absent means 1, ONNX's rows of n contiguous elements
NORM_INNER_ATTR = "aotc_inner"


# --- ONNX ops that map element to element (with broadcasting): one output element from the same -------
# element of each input. The kernels of aot/kernels/elementwise.py are exactly these (tests/structure/test_layering.py).
ELEMENTWISE_OPS = frozenset({
    "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift", "BitwiseAnd",
    "BitwiseNot", "BitwiseOr", "BitwiseXor", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf",
    "Exp", "Floor", "Gelu", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "IsInf", "IsNaN",
    "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Min", "Mod", "Mul", "Neg", "Not", "Or", "PRelu", "Pow",
    "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign",
    "Sqrt", "Sub", "Swish", "Tan", "Tanh", "ThresholdedRelu", "Xor",
})


# --- DFT, canonicalised (aot/frontend/onnx/canonical/signal.py: axis, length, inverse, onesided) ----------
def dft_out_shape(x_shape: tuple[int, ...], axis: int, length: int, inverse: bool,
                  onesided: bool) -> tuple[int, ...]:
    """The output of a DFT of x (..., 1 or 2 for real or complex) along `axis`: `length` bins, half of
    them and one for a one-sided forward transform; a one-sided inverse (irfft) is real."""
    irfft = inverse and onesided
    out = list(x_shape)
    out[axis] = length if inverse else (length // 2 + 1 if onesided else length)
    out[-1] = 1 if irfft else 2
    return tuple(out)
