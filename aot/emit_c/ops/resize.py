"""Host ops of the 'resize' family (kernels in runtime_c/kernels/resize.c)."""

from __future__ import annotations

from aot.emit_c.ops.base import HostOp

OPS: dict[str, HostOp] = {}
