"""Host C generation: the entry point, one call per host node, and the bundle around it."""

from aot.emit_c.bundle import Bundle, build_bundle

__all__ = ["Bundle", "build_bundle"]
