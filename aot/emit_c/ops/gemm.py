"""Host ops of the 'gemm' family (kernels in runtime_c/kernels/gemm.c)."""

from __future__ import annotations

from aot.emit_c.ops.base import HostOp

OPS: dict[str, HostOp] = {}
