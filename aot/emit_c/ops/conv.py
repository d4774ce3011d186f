"""Host ops of the 'conv' family (kernels in runtime_c/kernels/conv.c)."""

from __future__ import annotations

from aot.emit_c.ops.base import HostOp

OPS: dict[str, HostOp] = {}
