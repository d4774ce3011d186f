"""TFLite quantisation parameters: per-tensor or per-channel scale and zero point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class QuantParams:
    scale: np.ndarray  # float32, one per channel (length 1: per tensor)
    zero_point: np.ndarray  # int64, as many as scale
    axis: int  # the quantized dimension; meaningful only per channel

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


def quant_params(q: Any, rank: int) -> QuantParams | None:
    """The tensor's parameters, or None for an unquantized tensor. Older files (person_detect) set a
    quantized_dimension on per-tensor parameters: it is ignored there, as TFLM ignores it."""
    if q is None or q.scale is None or len(q.scale) == 0:
        return None
    scale = np.asarray(q.scale, dtype=np.float32)
    zero = np.asarray(q.zeroPoint if q.zeroPoint is not None else [0] * scale.size, dtype=np.int64)
    if zero.size == 1 and scale.size > 1:
        zero = np.repeat(zero, scale.size)
    axis = int(q.quantizedDimension) if scale.size > 1 else 0
    return QuantParams(scale, zero, min(axis, max(rank - 1, 0)))
