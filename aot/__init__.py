"""aotc: an ahead-of-time compiler from ONNX models to standalone C."""

__version__ = "0.1.0"
