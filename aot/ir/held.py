"""Large initializers held as numpy arrays beside the ModelProto, for the length of one compile.

protobuf's upb runtime keeps a message's memory in one arena, freed only when the whole message
goes: clearing a weight's raw_data in place frees nothing. So a compile that loads a model and
imports it kept the proto's copy of every weight alive next to the IR's copy (and next to the new
weights FoldBatchNorm makes). `held_copy` converts each large initializer to numpy once and returns
a new, small ModelProto whose large initializers carry their type and dims but no data, only a
token naming their array; the loaded message is then dropped by the caller. `holding` registers the
arrays for the compile, and `initializer_value` is how every reader of an initializer gets its
value, held or not.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

# Larger initializers are held, and left out of the skeleton (aot/frontend/onnx/skeleton.py). Shape-carrying
# constants are a few int64s; weights are not.
HELD_BYTES = 64 * 1024
_PREFIX = "aotc-held:"
# types whose raw bytes numpy_helper turns into an array of that same type
_PLAIN = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT8, TensorProto.UINT8,
          TensorProto.INT16, TensorProto.UINT16, TensorProto.INT32, TensorProto.UINT32, TensorProto.INT64,
          TensorProto.UINT64, TensorProto.BOOL}
_VALUES: dict[str, np.ndarray] = {}
_TOKENS = itertools.count()


def is_held(t: TensorProto) -> bool:
    return t.doc_string.startswith(_PREFIX)


def initializer_value(t: TensorProto) -> np.ndarray:
    """numpy_helper.to_array, for held tensors too."""
    if is_held(t):
        try:
            return _VALUES[t.doc_string]
        except KeyError:
            raise RuntimeError(f"initializer '{t.name}' is held, but not by this compile") from None
    return numpy_helper.to_array(t)


def held_copy(model: onnx.ModelProto, values: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of `model` whose large plain initializers are held in `values` (token -> array). The
    caller drops `model`: that frees its weights. A tensor whose data does not match its dims stays
    in the proto, where the import refuses it with its own message."""
    for init in model.graph.initializer:
        if (init.data_type not in _PLAIN or len(init.raw_data) <= HELD_BYTES
                or init.data_location == TensorProto.EXTERNAL):
            continue
        try:
            arr = numpy_helper.to_array(init)  # a view of a bytes copy: the proto's copy can go
        except Exception:
            continue
        token = f"{_PREFIX}{next(_TOKENS)}"
        values[token] = arr
        init.ClearField("raw_data")
        init.doc_string = token
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


@contextmanager
def holding(values: dict[str, np.ndarray]) -> Iterator[None]:
    """`values` readable by initializer_value while the block runs."""
    _VALUES.update(values)
    try:
        yield
    finally:
        for token in values:
            _VALUES.pop(token, None)
