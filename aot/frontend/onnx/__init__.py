"""The ONNX import, beside the TFLite one (aot/frontend/tflite/, which writes the ONNX read here):
`load_model` reads and checks a file (load.py), `import_model` turns a ModelProto into the IR by a
named list of steps (steps.py)."""

from aot.frontend.onnx.load import load_model, sanitize
from aot.frontend.onnx.steps import import_model

__all__ = ["import_model", "load_model", "sanitize"]
