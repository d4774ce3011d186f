"""ONNX import: `load_model` reads and checks a file, `import_model` turns it into the IR."""

from aot.frontend.load import import_model, load_model, sanitize

__all__ = ["import_model", "load_model", "sanitize"]
