"""mynpu's own op: com.mynpu.Requant, the device's int8 store of an activation read back as float.

mynpu keeps activations in int8 between layers when a model asks it to; a model trained for mynpu
(quantization-aware) marks where with this op, so the float model it exports computes what the
device computes:

    y = (clamp(round_half_even(x / scale) + zero_point, -128, 127) - zero_point) * scale

(QuantizeLinear then DequantizeLinear to int8, as one op). Only mynpu runs it: aotc reads it when
`--vendor mynpu` is given and refuses it by name otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aot.errors import AotcError
from aot.vendor import VendorOp

DOMAIN = "com.mynpu"


def requant_attrs(attrs: Mapping[str, Any]) -> tuple[float, int]:
    """(scale, zero_point) of a Requant, refusing what the device cannot store."""
    scale = float(attrs.get("scale", 0.0))
    zero_point = int(attrs.get("zero_point", 0))
    if not scale > 0.0:
        raise AotcError(f"com.mynpu.Requant needs a scale > 0, not {scale}")
    if not -128 <= zero_point <= 127:
        raise AotcError(f"com.mynpu.Requant stores int8: zero_point {zero_point} is outside -128..127")
    return scale, zero_point


def infer_requant(attrs: Mapping[str, Any],
                  inputs: Sequence[tuple[tuple[int, ...], str] | None]) -> list[tuple[tuple[int, ...], str]]:
    """One float32 input, one output of its shape. Called by aotc's ONNX import (never folded: its value
    is the device's); what it raises is reported as mynpu's error, naming the node."""
    if len(inputs) != 1 or inputs[0] is None:
        raise AotcError(f"com.mynpu.Requant takes one input, not {len(inputs)}")
    shape, dtype = inputs[0]
    if dtype != "float32":
        raise AotcError(f"com.mynpu.Requant takes float32, not {dtype}")
    requant_attrs(attrs)
    return [(tuple(shape), "float32")]


REQUANT = VendorOp(DOMAIN, "Requant", infer_requant,
                   doc="the device's int8 store of an activation: QuantizeLinear + DequantizeLinear (int8) as one op")
REQUANT_OP = REQUANT.ir_name  # "com.mynpu.Requant": its op in aotc's IR
OPS = (REQUANT,)
