"""The TFLite frontend: `aotc model.tflite` (issue 29).

reader.py reads the flatbuffer with TFLite's own schema (ai-edge-litert's schema_py_generated),
quant.py its quantisation parameters, ops.py maps the builtin ops onto the ONNX operators aotc's
frontend already reads, so from the IR on a .tflite model is compiled like any ONNX model.
"""

from __future__ import annotations

from pathlib import Path

import onnx

from aot.frontend.tflite.ops import to_onnx
from aot.frontend.tflite.reader import read_tflite
from aot.frontend.tflite.resize import resize_inputs

MAGIC = b"TFL3"  # the flatbuffer file identifier, bytes 4..8 of a .tflite file


def is_tflite(path: str | Path) -> bool:
    """True for a TFLite flatbuffer: by its file identifier, whatever the file is called."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return head[4:8] == MAGIC or (Path(path).suffix.lower() == ".tflite" and len(head) < 8)


def load_tflite(path: str | Path, input_shapes: dict[str, tuple[int, ...]] | None = None) -> onnx.ModelProto:
    """Read a .tflite file and return it as the ONNX model aotc's import stage reads; `input_shapes`
    (--input-shape) resizes inputs the converter left dynamic before the ops are lowered (resize.py)."""
    model = read_tflite(path)
    if input_shapes:
        resize_inputs(model, input_shapes)
    return to_onnx(model)


__all__ = ["is_tflite", "load_tflite", "read_tflite", "to_onnx"]
