"""The one error type users see: a message they can act on, naming the node when there is one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class AotcError(Exception):
    """A problem with the user's input (model, options, target), reported as one line, exit code 2. `message`
    says what is wrong and what to do; `node` (an IR Node, when there is one) is named before it. A vendor
    raises it to refuse on purpose (in a transform, codegen, a VendorOp's infer ...): in_vendor keeps its
    message and adds the vendor's name."""

    def __init__(self, message: str, node: Any = None):
        self.message = message
        self.node = node
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The message as the user sees it: the node first, on one line, every unprintable character escaped."""
        where = f"{self.node.describe()}: " if self.node is not None else ""
        text = (where + self.message).replace("\n", " ")
        # names in the message may hold any character: none may break the line (\r, \x85, \u2028 ...)
        return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                       for c in text)


class VendorError(AotcError):
    """An error raised in a vendor's code (a checker, pattern check, keep_region, transform, codegen ...): one
    line naming the vendor and its hook, exit code 2, never reported as a bug in aotc. A vendor refuses on
    purpose by raising AotcError; anything else it raises is its bug, said so in the message."""

    def __init__(self, vendor: str, hook: str, message: str, node: Any = None, *, bug: bool = False):
        self.vendor, self.hook, self.bug = vendor, hook, bug
        tail = f" (an error in vendor {vendor}'s code, not in aotc or your model; --debug shows where)" if bug else ""
        super().__init__(message + tail, node=node)

    def one_line(self) -> str:
        return f"vendor {self.vendor}, {self.hook}: {super().one_line()}"


@contextmanager
def in_vendor(vendor: str, hook: str, node: Any = None) -> Iterator[None]:
    """Run a vendor's hook: what it raises becomes a VendorError naming the vendor and the hook (and `node`,
    when the hook was given one), so a vendor's mistake is never reported as a bug in aotc. An AotcError the
    vendor raised on purpose keeps its message; any other exception is reported as the vendor's bug."""
    try:
        yield
    except VendorError:
        raise
    except AotcError as e:
        raise VendorError(vendor, hook, e.message, node=e.node or node) from e
    except Exception as e:
        raise VendorError(vendor, hook, f"{type(e).__name__}: {e}", node=node, bug=True) from e


class OnnxNodeName:
    """An ONNX NodeProto (anything with .name and .op_type) as the node an AotcError names, as errors on IR nodes
    print: the frontend's rewrites of raw ONNX refuse through it."""

    def __init__(self, node: Any):
        self.node = node

    def describe(self) -> str:
        return f"node '{self.node.name or '?'}' ({self.node.op_type})"
