"""Which quantized forms of TFLite's builtins LiteRT's reference kernels define (issue 50): the
standard aotc's integer kernels are held to, and what `aotc ops --tflite` says of a form aotc refuses.

REFERENCE[op] = (int8, int16): whether BUILTIN_REF (register_ref.cc's resolver) runs the op on int8
activations and on 16x8's int16 ones. Measured on ai-edge-litert 2.3 by tests/tflite_probe.py (a
one-op model per form, the output quantization the kernel requires), which the slow test
tests/frontend/test_tflite_reference_types.py repeats; ops not listed (convs, pools, data movement,
the recurrent ops) are described by the frontend's own tables alone.
"""

from __future__ import annotations

REFERENCE: dict[str, tuple[bool, bool]] = {
    "ABS": (True, True), "CEIL": (False, False), "COS": (False, False), "ELU": (False, False),
    "EXP": (True, True), "FLOOR": (False, False), "HARD_SWISH": (True, False), "LOG": (True, True),
    "NEG": (True, True), "RELU": (True, True), "RELU6": (True, True), "RELU_N1_TO_1": (True, False),
    "RELU_0_TO_1": (True, False), "ROUND": (False, False), "RSQRT": (True, True), "SIN": (False, False),
    "SIGN": (False, False), "SQRT": (True, True), "SQUARE": (False, False), "ZEROS_LIKE": (False, False),
    "LOGISTIC": (True, True), "TANH": (True, True), "SOFTMAX": (True, True), "LOG_SOFTMAX": (True, False),
    "L2_NORMALIZATION": (True, False), "LEAKY_RELU": (True, True), "GELU": (True, True), "ADD": (True, True),
    "SUB": (True, True), "MUL": (True, True), "DIV": (True, True), "MAXIMUM": (True, True),
    "MINIMUM": (True, True), "SQUARED_DIFFERENCE": (True, False), "FLOOR_DIV": (True, True),
    "FLOOR_MOD": (True, True), "POW": (False, False), "ATAN2": (False, False), "PRELU": (True, True),
    "BATCH_MATMUL": (True, True), "EQUAL": (True, True), "NOT_EQUAL": (True, True), "LESS": (True, True),
    "LESS_EQUAL": (True, True), "GREATER": (True, True), "GREATER_EQUAL": (True, True), "MEAN": (True, True),
    "SUM": (True, True), "REDUCE_PROD": (True, True), "REDUCE_MAX": (True, True), "REDUCE_MIN": (True, True),
    "ARG_MAX": (True, False), "ARG_MIN": (True, False), "CUMSUM": (False, False), "RESIZE_BILINEAR": (True, True),
    "RESIZE_NEAREST_NEIGHBOR": (True, True), "SPACE_TO_DEPTH": (True, False), "DEPTH_TO_SPACE": (True, False),
    "FULLY_CONNECTED": (True, True), "ADD_N": (False, False), "CAST": (True, True), "DEQUANTIZE": (True, True),
}

# why aotc refuses a form the reference defines, where there is more to say than "not yet"
WHY: dict[tuple[str, str], str] = {}


def defined(op: str, dtype: str) -> bool | None:
    """Whether LiteRT's reference kernels run `op` on `dtype` ("int8" or "int16") activations; None where
    the table does not say."""
    if op not in REFERENCE:
        return None
    return REFERENCE[op][0 if dtype == "int8" else 1]


# quantized forms aotc computes as LiteRT's default kernels, not its reference ones, and why. reduce.cc's reference
# QuantizedMeanOrSum reads the data as uint8_t whatever its type: a SUM of sixteen int8 -1s (scale 0.05, zero point
# -3) gives -1 there, 29 from LiteRT's default kernels (measured)
DEFAULT_KERNELS: dict[tuple[str, str], str] = {
    ("SUM", "int8"): "as LiteRT's default kernels: its reference reads int8 data as uint8",
    ("SUM", "int16"): "as LiteRT's default kernels: its reference reads int16 data as uint8",
}


# quantized forms LiteRT computes on the raw integers, ignoring the scales and zero points, which aotc does alike so
# a model gets what LiteRT gives it (int8_math.py's _raw_floor; measured on ai-edge-litert 2.3, both resolvers)
RAW_INTEGERS: dict[tuple[str, str], str] = {
    **{(op, t): "of the raw integers, as LiteRT: its kernel ignores the scales"
       for op in ("FLOOR_DIV", "FLOOR_MOD") for t in ("int8", "int16")},
}


# builtins a LiteRT resolver has no kernel for: KERNELS[op] = (BUILTIN_REF has one, the default resolver has one),
# measured on ai-edge-litert 2.3 by `python tests/tflite_probe.py --kernels` (a float32 one-op model per builtin,
# versions 1 to 3, the interpreter built with each resolver); every builtin not listed has a kernel in both
_NEITHER = ("CALL", "CONCAT_EMBEDDINGS", "DELEGATE", "PLACEHOLDER_FOR_GREATER_OP_CODES", *(
    f"STABLEHLO_{op}" for op in ("ABS", "BROADCAST_IN_DIM", "CBRT", "CLAMP", "COMPARE", "CONCATENATE", "CONVERT",
                                 "CONVOLUTION", "COSINE", "CUSTOM_CALL", "DIVIDE", "DOT_GENERAL", "DYNAMIC_SLICE",
                                 "DYNAMIC_UPDATE_SLICE", "EXPONENTIAL", "FLOOR", "IOTA", "LOG", "LOGISTIC", "NEGATE",
                                 "OR", "POWER", "REDUCE", "REMAINDER", "RESHAPE", "RSQRT", "SELECT", "SLICE", "SORT",
                                 "SUBTRACT", "TANH", "TRANSPOSE", "WHILE")))
_DEFAULT_ONLY = ("CEIL", "ELU", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "ROUND",
                 "SEGMENT_SUM", "STABLEHLO_AND", "STABLEHLO_CASE", "STABLEHLO_SHIFT_LEFT")
KERNELS: dict[str, tuple[bool, bool]] = {**{op: (False, False) for op in _NEITHER},
                                         **{op: (False, True) for op in _DEFAULT_ONLY}}
NO_KERNEL = "LiteRT has no kernel for it (neither its reference nor its default resolver): no model LiteRT runs " \
    "holds it, nothing to match"


def no_kernel(op: str) -> bool:
    """Whether neither of LiteRT's resolvers has a kernel for the builtin (KERNELS)."""
    return KERNELS.get(op) == (False, False)


def refusal(op: str, dtype: str) -> str:
    """Why aotc refuses a form the reference defines."""
    return WHY.get((op, dtype), "not yet (issue 50)")


__all__ = ["DEFAULT_KERNELS", "KERNELS", "NO_KERNEL", "RAW_INTEGERS", "REFERENCE", "WHY", "defined", "no_kernel",
           "refusal"]
