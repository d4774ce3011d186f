"""Host ops of the 'reduce' family (kernels in runtime_c/kernels/reduce.c)."""

from __future__ import annotations

from aot.emit_c.ops.base import HostOp

OPS: dict[str, HostOp] = {}
