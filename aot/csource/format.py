"""Small helpers that print values as C: bit-exact floats, typed arrays; identifiers, comments and
strings made from ONNX names come from aot/csource/names.py (one rule), re-exported here."""

from __future__ import annotations

import math

import numpy as np

from aot.csource.names import CNames, c_comment, c_ident, c_string, is_reserved

__all__ = ["C_TYPES", "DTYPE_SUFFIX", "CNames", "c_array_body", "c_comment", "c_double", "c_float", "c_ident",
           "c_int", "c_ints", "c_scalar", "c_string", "is_reserved"]

C_TYPES = {
    "float32": "float", "float64": "double", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
    "int32": "int32_t", "int64": "int64_t", "bool": "uint8_t",
    "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float16": "uint16_t", "bfloat16": "uint16_t",  # their bits: computed in float32 (onnx/canonical/halves.py)
    "int4": "uint8_t", "uint4": "uint8_t", "int2": "uint8_t", "uint2": "uint8_t",  # one per byte, low bits
    "float8_e4m3fn": "uint8_t", "float8_e4m3fnuz": "uint8_t", "float8_e5m2": "uint8_t", "float8_e5m2fnuz": "uint8_t",
    "float4_e2m1fn": "uint8_t", "float8_e8m0fnu": "uint8_t",
}
# Suffix of the kernel variant for each dtype (aotc_<op>_<suffix>).
DTYPE_SUFFIX = {
    "float32": "f32", "float64": "f64", "int8": "i8", "uint8": "u8", "int16": "i16",
    "int32": "i32", "int64": "i64", "bool": "b8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "int4": "i4", "uint4": "u4", "int2": "i2", "uint2": "u2",
    "float8_e4m3fn": "f8e4m3fn", "float8_e4m3fnuz": "f8e4m3fnuz", "float8_e5m2": "f8e5m2",
    "float8_e5m2fnuz": "f8e5m2fnuz", "float4_e2m1fn": "f4e2m1", "float8_e8m0fnu": "f8e8m0",
}


def c_float(v: float) -> str:
    """float32 value as a C99 hex-float literal: exact, unlike %g."""
    f = float(np.float32(v))
    if math.isnan(f):
        return "NAN"
    if math.isinf(f):
        return "INFINITY" if f > 0 else "-INFINITY"
    if f == 0.0:
        return "-0.0f" if math.copysign(1.0, f) < 0 else "0.0f"
    return f.hex().replace("0000000p", "p").replace("000p", "p") + "f"


def c_double(v: float) -> str:
    f = float(v)
    if math.isnan(f):
        return "NAN"
    if math.isinf(f):
        return "INFINITY" if f > 0 else "-INFINITY"
    return f.hex()


def c_int(v: int) -> str:
    v = int(v)
    if v == -(2**63):
        return "INT64_MIN"
    return f"{v}LL" if not -(2**31) <= v < 2**31 else str(v)


def c_scalar(v: object, dtype: str) -> str:
    if dtype == "float32":
        return c_float(float(v))
    if dtype == "float64":
        return c_double(float(v))
    if dtype == "uint64" and int(v) >= 2**63:
        return f"{int(v)}ULL"
    return c_int(int(v))


def c_array_body(arr: np.ndarray, per_line: int = 8, indent: str = "    ") -> str:
    """Comma-separated elements of `arr` (flattened), several per line."""
    flat = arr.reshape(-1)
    if arr.dtype.name in ("float16", "bfloat16"):  # stored as their bits
        flat = flat.view(np.uint16)
    elif arr.dtype.itemsize == 1 and arr.dtype.kind == "V":  # 2/4-bit integers (low bits), float8: the byte
        flat = flat.view(np.uint8)
    dtype = flat.dtype.name
    items = [c_scalar(x, dtype) for x in flat.tolist()]
    lines = [indent + ", ".join(items[i:i + per_line]) + "," for i in range(0, len(items), per_line)]
    return "\n".join(lines)


def c_ints(values: list[int] | tuple[int, ...]) -> str:
    return "{" + ", ".join(c_int(v) for v in values) + "}"
