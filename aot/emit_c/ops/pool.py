"""Host ops of the 'pool' family (kernels in runtime_c/kernels/pool.c)."""

from __future__ import annotations

from aot.emit_c.ops.base import HostOp

OPS: dict[str, HostOp] = {}
