"""The kernel table: ONNX op -> HostOp (its candidate C kernels), merged from one table per kernel family."""

from __future__ import annotations

from aot.kernels import (
    attention,
    conv,
    detect,
    elementwise,
    fused,
    gemm,
    hash,
    index,
    loss,
    norm,
    philox,
    pool,
    quant,
    quant_dynamic,
    quant_gemm,
    random,
    recurrent,
    reduce,
    resize,
    shape,
    signal,
    tflite_hybrid,
    tflite_int8,
    tflm_signal,
)
from aot.kernels.base import HostOp, NodeContext

_FAMILIES = (elementwise, shape, conv, gemm, pool, norm, reduce, resize, quant, quant_dynamic, quant_gemm, recurrent,
             index, loss, attention, tflite_int8, tflite_hybrid, detect, signal, tflm_signal, fused, random,
             hash, philox)


def _merge() -> dict[str, HostOp]:
    table: dict[str, HostOp] = {}
    for fam in _FAMILIES:
        for op, host_op in fam.OPS.items():
            if op in table:
                raise RuntimeError(f"op {op} defined twice ({fam.__name__})")
            table[op] = host_op
    return table


HOST_OPS: dict[str, HostOp] = _merge()

__all__ = ["HOST_OPS", "HostOp", "NodeContext"]
