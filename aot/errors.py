"""The one error type users see: a message they can act on, naming the node when there is one."""

from __future__ import annotations

from typing import Any


class AotcError(Exception):
    """A problem with the user's input (model, options, target), reported as one line, exit code 2."""

    def __init__(self, message: str, node: Any = None):
        self.message = message
        self.node = node
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = f"{self.node.describe()}: " if self.node is not None else ""
        text = (where + self.message).replace("\n", " ")
        # names in the message may hold any character: none may break the line (\r, \x85, \u2028 ...)
        return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                       for c in text)


class OnnxNodeName:
    """An ONNX NodeProto (anything with .name and .op_type) as the node an AotcError names, as errors on IR nodes
    print: the frontend's rewrites of raw ONNX refuse through it."""

    def __init__(self, node: Any):
        self.node = node

    def describe(self) -> str:
        return f"node '{self.node.name or '?'}' ({self.node.op_type})"
