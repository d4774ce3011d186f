"""Host ops of the 'norm' family (kernels in runtime_c/kernels/norm.c)."""

from __future__ import annotations

from aot.emit_c.ops.base import HostOp

OPS: dict[str, HostOp] = {}
