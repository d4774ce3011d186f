"""Ops a vendor defines in a domain of its own (e.g. com.mynpu.Swizzle): their output types, and which are
known to the compile under way.

A vendor lists them in Vendor.ops; the compiler makes them known to the ONNX import for one compile
(`known_vendor_ops`), which then reads such nodes (their outputs typed by the vendor's `infer`, never
folded), names them `<domain>.<op_type>` in the IR, and leaves them to that vendor's checker. A node of a
vendor domain that no vendor of the compile declares is refused at import; one its vendor did not take is
refused after partitioning (the host has no kernel for it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

# VendorOp.infer: (attributes, inputs as (shape, dtype) or None for an omitted one) -> each output's
# (shape, dtype). Raise AotcError to refuse a node it cannot type; anything else it raises is the vendor's bug.
Infer = Callable[[Mapping[str, Any], Sequence["tuple[tuple[int, ...], str] | None"]],
                 Sequence[tuple[tuple[int, ...], str]]]


@dataclass(frozen=True)
class VendorOp:
    """An op of a vendor's own domain: its output types from its inputs' (`infer`) and a line of help."""

    domain: str  # the domain its nodes carry in the model: one of the vendor's own (e.g. "com.mynpu")
    op_type: str  # the node's op_type in that domain
    infer: Infer  # its outputs' (shape, dtype) from its attributes and inputs': the import types the outputs by it
    vendor: str = ""  # filled in by the Vendor that lists it
    doc: str = ""  # a line of help, for the vendor's users

    @property
    def ir_name(self) -> str:
        """Its op in the IR: the domain keeps it apart from an ONNX op of the same name."""
        return f"{self.domain}.{self.op_type}"


_KNOWN: ContextVar[Mapping[tuple[str, str], VendorOp]] = ContextVar("aotc_vendor_ops",
                                                                   default=MappingProxyType({}))


@contextmanager
def known_vendor_ops(ops: Sequence[VendorOp]) -> Iterator[None]:
    """Make `ops` known to the import (and what follows it) inside the block."""
    token = _KNOWN.set({(op.domain, op.op_type): op for op in ops})
    try:
        yield
    finally:
        _KNOWN.reset(token)


def vendor_op(domain: str, op_type: str) -> VendorOp | None:
    """The known vendor op of that domain and type, or None."""
    return _KNOWN.get().get((domain, op_type))


def vendor_op_named(ir_op: str) -> VendorOp | None:
    """The known vendor op whose IR name is `ir_op`, or None."""
    return next((op for op in _KNOWN.get().values() if op.ir_name == ir_op), None)


def vendor_domains() -> dict[str, str]:
    """Domain -> the vendor that declares it, for the ops known now."""
    return {op.domain: op.vendor for op in _KNOWN.get().values()}
