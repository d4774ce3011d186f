"""The ONNX import, beside the TFLite one (aot/frontend/tflite/, which writes the ONNX read here):
`load_model` reads and checks a file, `import_model` turns a ModelProto into the IR."""

from aot.frontend.onnx.load import import_model, load_model, sanitize

__all__ = ["import_model", "load_model", "sanitize"]
