"""The frontend: a model file into the IR. onnx/ imports ONNX (`load_model` reads and checks a file,
`import_model` turns it into the IR); tflite/ writes a .tflite model as the ONNX that onnx/ reads."""

from aot.frontend.onnx import import_model, load_model, sanitize

__all__ = ["import_model", "load_model", "sanitize"]
