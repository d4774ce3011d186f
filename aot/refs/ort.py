"""onnxruntime as `aotc compare`'s reference for a bundle compiled from ONNX: the model with every tensor the
bundle tapped added as a graph output, run once on the same inputs. Only those tensors are exposed: exposing
one stops onnxruntime fusing across it."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np

from aot.errors import AotcError
from aot.npz import bundle_outputs, onnx_feeds


def import_onnxruntime(needed_by: str) -> ModuleType:
    """onnxruntime, an optional dependency of aotc (its `testing` and `test` extras; `pip install aotc` does not
    bring it): a missing one is one line naming what needed it and what to install, not an internal error."""
    try:
        import onnxruntime
    except ImportError:
        raise AotcError(f"{needed_by} onnxruntime, which is not installed; install it with: "
                        "python3 -m pip install onnxruntime (or 'aotc[testing]')") from None
    return onnxruntime


class OnnxRuntime:
    what = "onnxruntime"
    nodes = "ONNX nodes"
    lsb = 1  # quantized kernels may round a half differently from onnxruntime
    keeps_state = False  # the ONNX model's state is inputs like any other

    def __init__(self, model: Path):
        self.model = model

    def prepare(self, meta: dict, inputs: list[np.ndarray]) -> None:
        """Nothing before the bundle runs: which tensors to expose is known from its taps."""

    def values(self, meta: dict, inputs: list[np.ndarray], tensors: list[str]) -> dict[str, np.ndarray]:
        feeds = {s["name"]: x for s, x in zip(meta["inputs"], inputs, strict=True)}
        return reference(self.model, feeds, tensors, meta)

    def source_nodes(self, nodes: list[str]) -> list[str]:
        return nodes

    def counterpart(self, tensor: str) -> str | None:
        return None


def _ort_value(ort, x: np.ndarray):
    """An input as onnxruntime's Python API takes it: a bfloat16 or float8 array (ml_dtypes'), which it
    cannot convert itself, as an OrtValue of its ONNX type over the same bytes. Its 4- and 2-bit types
    are stored packed, which this does not do: refused in one line."""
    if not x.dtype.type.__module__.startswith("ml_dtypes"):
        return x
    if x.dtype.itemsize == 1 and x.dtype.name.startswith(("int", "uint")):
        raise AotcError(f"onnxruntime's Python API takes no {x.dtype.name} inputs, so there is no reference to "
                        "compare with")
    import onnx

    elem = onnx.helper.np_dtype_to_tensor_dtype(x.dtype)
    raw = np.ascontiguousarray(x).view(np.uint8 if x.dtype.itemsize == 1 else np.uint16)
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(raw, elem)


def reference(model_path: Path, feeds: dict[str, np.ndarray], tensors: list[str],
              meta: dict | None = None) -> dict[str, np.ndarray]:
    """onnxruntime's value of each of `tensors` (those the model computes) on `feeds`. With the bundle's
    `meta`, its quantized integer inputs and outputs (--quantized-io) meet the model's float ones:
    inputs dequantized, outputs quantized back (exact both ways)."""
    import onnx

    ort = import_onnxruntime("aotc compare checks a bundle compiled from ONNX against")
    try:
        model = onnx.load(str(model_path))
    except Exception as e:
        raise AotcError(f"cannot read the ONNX model '{model_path}': {e}") from e
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph
        known = {vi.name: vi for vi in (*inferred.value_info, *inferred.output)}
    except Exception:  # exposed without a type: onnxruntime infers it
        known = {}
    if meta is not None:
        floats = {i.name for i in model.graph.input if i.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
        feeds = onnx_feeds(meta, [feeds[s["name"]] for s in meta["inputs"]], floats)
    exposed = {o.name for o in model.graph.output}
    wanted = set(tensors)
    for node in model.graph.node:
        for o in node.output:
            if o in wanted and o not in exposed:
                model.graph.output.append(known.get(o) or onnx.ValueInfoProto(name=o))
                exposed.add(o)
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 3
    names = [o.name for o in model.graph.output]
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        values = sess.run(names, {k: _ort_value(ort, x) for k, x in feeds.items()})
    except Exception as e:
        raise AotcError(f"onnxruntime could not run '{model_path}': {str(e).splitlines()[0]}") from e
    refs = {n: np.asarray(v) for n, v in zip(names, values, strict=True) if n in wanted}
    return refs if meta is None else bundle_outputs(meta, refs)
