"""Reading an ONNX file, and the ONNX-level helpers the import steps (steps.py) use: the opset,
node names, input shapes, empty inputs, what a frontend recorded in metadata_props, and the C name."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from aot.csource.names import is_reserved
from aot.errors import AotcError
from aot.frontend.onnx.skeleton import skeleton
from aot.frontend.onnx.validate import check_text, elem_name
from aot.limits import MAX_TENSOR_BYTES, tensor_bytes

MIN_OPSET, MAX_OPSET = 7, 28  # 7..21 required; 22..28: see docs/opsets.md for what changed


def load_model(path: str | Path, input_shapes: dict[str, tuple[int, ...]] | None = None) -> onnx.ModelProto:
    """Read and check an ONNX file; any failure is one AotcError line. `input_shapes` (--input-shape) matter
    here for a .tflite file only, whose shapes are worked out as it is read."""
    path = Path(path)
    if not path.is_file():
        raise AotcError(f"cannot read model '{path}': no such file")
    from aot.frontend.tflite import is_tflite, load_tflite

    if is_tflite(path):  # the TFLite frontend writes the ONNX this stage reads (issue 29)
        return load_tflite(path, input_shapes)
    try:
        model = onnx.load(str(path))
    except Exception as e:
        raise AotcError(f"cannot read model '{path}': not a valid ONNX file ({_first_line(e)})") from e
    try:
        check_text(model)
    except AotcError as e:
        raise AotcError(f"cannot read model '{path}': {e.message}") from e
    if not model.graph.node and not model.graph.output:
        raise AotcError(f"cannot read model '{path}': not a valid ONNX file (empty graph)")
    try:
        onnx.checker.check_model(_checkable(skeleton(model)))  # large weights: checked against their dims below
    except Exception as e:
        # onnxruntime runs graphs whose outputs carry a type but no shape; so do we (shapes are inferred).
        if "Field 'shape' of 'type' is required but missing" not in str(e):
            raise AotcError(f"model '{path}' is malformed: {_first_line(e)}") from e
    return model


def _checkable(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` (a skeleton: its own copy) for onnx's checker: onnxruntime's ops of the ONNX domain
    (contrib.ONNX_DOMAIN_OPS: SimplifiedLayerNormalization, as its optimizer writes it) have no ONNX
    schema, so the checker sees them in com.microsoft's domain, whose ops it does not check."""
    from aot.frontend.onnx.contrib import DOMAIN, ONNX_DOMAIN_OPS

    nodes = [n for n in model.graph.node if n.domain in ("", "ai.onnx") and n.op_type in ONNX_DOMAIN_OPS]
    for n in nodes:
        n.domain = DOMAIN
    if nodes and DOMAIN not in {o.domain for o in model.opset_import}:
        model.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    return model


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def opset_of(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    raise AotcError("model imports no default-domain (ai.onnx) opset")


def io_quantization(model: onnx.ModelProto) -> dict[str, dict]:
    """{tensor: {scale, zero_point}} of the quantized inputs and outputs, which a frontend (TFLite's)
    recorded in the model's metadata_props for the header."""
    return metadata_json(model, "aotc.io_quantization")


def metadata_json(model: onnx.ModelProto, key: str) -> dict[str, dict]:
    """What a frontend (TFLite's) recorded under `key` in the model's metadata_props, or {}."""
    for p in model.metadata_props:
        if p.key == key:
            return json.loads(p.value)
    return {}


def name_nodes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Give every node a unique name, so every later stage can name a node to the user."""
    used: set[str] = set()
    for k, n in enumerate(model.graph.node):
        n.name = _unique(n.name or f"{n.op_type}_{k}", used)
    return model


def copy_model(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def fix_input_shapes(model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]]) -> None:
    """Give inputs static shapes (--input-shape): for models exported with a dynamic batch or size."""
    inputs = {vi.name: vi for vi in model.graph.input}
    for name, shape in shapes.items():
        if name not in inputs:
            raise AotcError(f"--input-shape names '{name}', which is not an input of the model "
                            f"(inputs: {', '.join(inputs)})")
        tt = inputs[name].type.tensor_type
        if tt.HasField("shape") and len(tt.shape.dim) != len(shape):
            raise AotcError(f"--input-shape gives input '{name}' rank {len(shape)}, the model says {len(tt.shape.dim)}")
        if any(d <= 0 for d in shape):
            raise AotcError(f"--input-shape for '{name}' must be positive sizes, got {list(shape)}")
        model_dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tt.shape.dim] \
            if tt.HasField("shape") else [None] * len(shape)  # an input of unknown rank takes any shape
        clash = [k for k, (m, d) in enumerate(zip(model_dims, shape, strict=True)) if m is not None and m != d]
        if clash:
            shown = [m if m is not None else "?" for m in model_dims]
            raise AotcError(f"--input-shape gives input '{name}' dimension {clash[0]} = {shape[clash[0]]}, but the "
                            f"model fixes it at {model_dims[clash[0]]} (shape {shown}); only its dynamic "
                            "dimensions (?) can be set")
        tt.shape.Clear()
        for d in shape:
            tt.shape.dim.add().dim_value = int(d)


def fix_named_dims(model: onnx.ModelProto, dims: dict[str, int]) -> None:
    """--dim NAME=SIZE: a named dimension (dim_param, e.g. an exporter's 'batch' or 'sequence') fixed wherever
    the graph declares it, so a model whose inputs share a name is given its size once, not per input."""
    named = {d.dim_param for vi in model.graph.input if vi.type.HasField("tensor_type")
             for d in vi.type.tensor_type.shape.dim if d.dim_param and not d.HasField("dim_value")}
    for name in dims:
        if name not in named:
            known = f"the inputs' named dimensions: {', '.join(sorted(named))}" if named else \
                "the inputs have no named dimension"
            raise AotcError(f"--dim names '{name}', which no input's dimension is called ({known})")
    for vi in [*model.graph.input, *model.graph.output, *model.graph.value_info]:
        if vi.type.HasField("tensor_type"):
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_param in dims and not d.HasField("dim_value"):
                    d.dim_value = dims[d.dim_param]  # (clears dim_param: one of the two)


def _dynamic_dims(vi: onnx.ValueInfoProto) -> list[tuple[int, str]]:
    """An input's dimensions of no static size: (index, its name or '?')."""
    return [(k, d.dim_param or "?") for k, d in enumerate(vi.type.tensor_type.shape.dim)
            if not d.HasField("dim_value") or d.dim_value < 0]


def _dynamic_inputs_line(dynamic: list[onnx.ValueInfoProto]) -> str:
    """Every input of dynamic dimensions in one line, with the options that fix them all: --dim for each named
    dimension, --input-shape (its static sizes filled in) for an input with an unnamed one."""
    shown, named, by_input = [], {}, []
    for vi in dynamic:
        dims = vi.type.tensor_type.shape.dim
        free = dict(_dynamic_dims(vi))
        shown.append(f"'{vi.name}' [{', '.join(free.get(k, str(d.dim_value)) for k, d in enumerate(dims))}]")
        named.update({n: None for n in free.values() if n != "?"})
        if "?" in free.values():
            sizes = ",".join(f"D{k}" if free.get(k) == "?" else free[k] if k in free else str(d.dim_value)
                             for k, d in enumerate(dims))
            by_input.append(f"--input-shape {vi.name}={sizes}")
    options = " ".join([*(f"--dim {n}=N" for n in named), *by_input])
    return (f"{len(dynamic)} inputs have dynamic dimensions: {', '.join(shown)}; aotc needs static shapes: give "
            f"them with {options}")


def pin_input_values(model: onnx.ModelProto, values: dict[str, object]) -> list[dict]:
    """--input-value: each named input becomes a constant of the value given (a sample rate, a mode
    flag), so what it decides folds (an If on it becomes the branch it selects, a shape computed from
    it a constant) and the bundle no longer takes it. A value is text ("16000", "1,0,2", "true") or
    numbers; the input's declared dtype and shape decide how it is read (one dynamic dimension takes
    the count given). Returns their records for metadata.json's pinned_inputs: name, dtype, shape, value."""
    inputs = {vi.name: vi for vi in model.graph.input}
    pinned: list[dict] = []
    for name, given in values.items():
        vi = inputs.get(name)
        if vi is None:
            raise AotcError(f"--input-value names '{name}', which is not an input of the model "
                            f"(inputs: {', '.join(inputs)})")
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not tt.elem_type:
            raise AotcError(f"--input-value '{name}': the input is not a tensor of a known element type")
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dtype.kind not in "biuf":
            raise AotcError(f"--input-value '{name}': input of type {elem_name(tt.elem_type)}, which cannot be pinned "
                            "(bool, integer and float inputs can)")
        items = _value_items(name, given)
        arr = _typed(name, items, dtype)
        shape = _pinned_shape(name, tt, len(items), elem_name(tt.elem_type))
        arr = arr.reshape(shape)
        inits = [i for i in model.graph.initializer if i.name == name]
        for i in inits:  # an input with a default (IR >= 4): the value given replaces it
            model.graph.initializer.remove(i)
        model.graph.initializer.append(numpy_helper.from_array(arr, name))
        tt.shape.Clear()
        for d in shape:
            tt.shape.dim.add().dim_value = int(d)
        pinned.append({"name": name, "dtype": elem_name(tt.elem_type), "shape": list(shape), "value": arr.tolist()})
    return pinned


def _value_items(name: str, given: object) -> list[str]:
    if isinstance(given, str):
        items = [t.strip() for t in given.split(",")]
        if not all(items):
            raise AotcError(f"--input-value '{name}': expected a value or comma-separated values, got '{given}'")
        return items
    return [str(v) for v in np.asarray(given).ravel().tolist()]


def _typed(name: str, items: list[str], dtype: np.dtype) -> np.ndarray:
    """The values as `dtype`, each read exactly: an integer input takes integers in its range, a bool
    one true/false/1/0."""
    out = []
    for t in items:
        try:
            if dtype.kind == "b":
                if t.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                out.append(t.lower() in ("true", "1"))
            elif dtype.kind in "iu":
                v = int(t)
                info = np.iinfo(dtype)
                if not info.min <= v <= info.max:
                    raise AotcError(f"--input-value '{name}': {t} is beyond {dtype.name}'s range "
                                    f"({info.min} to {info.max})")
                out.append(v)
            else:
                out.append(float(t))
        except ValueError:
            kind = "true/false" if dtype.kind == "b" else "an integer" if dtype.kind in "iu" else "a number"
            raise AotcError(f"--input-value '{name}': '{t}' is not {kind}, which the input ({dtype.name}) "
                            "takes") from None
    return np.array(out, dtype=dtype)


def _pinned_shape(name: str, tt: onnx.TypeProto.Tensor, count: int, dtype: str) -> tuple[int, ...]:
    """The input's declared shape with `count` values: static dims must hold exactly that many; one
    dynamic dim takes what is left; an input of unknown rank is a scalar or a list."""
    if not tt.HasField("shape"):
        return () if count == 1 else (count,)
    dims = [int(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else None for d in tt.shape.dim]
    shown = f"{dtype}[{','.join('?' if d is None else str(d) for d in dims)}]"
    known = int(np.prod([d for d in dims if d is not None]))
    free = [k for k, d in enumerate(dims) if d is None]
    values = f"{count} value{'s' if count != 1 else ''}"
    if not free:
        if known != count:
            raise AotcError(f"--input-value '{name}' gives {values}, but the input {shown} holds {known}")
        return tuple(dims)  # type: ignore[arg-type]
    if len(free) > 1:
        raise AotcError(f"--input-value '{name}': the input is {shown}, more than one dynamic dimension; "
                        "fix them with --input-shape first")
    if count % known:
        raise AotcError(f"--input-value '{name}' gives {values}, which do not fill the input {shown}")
    dims[free[0]] = count // known
    return tuple(dims)  # type: ignore[arg-type]


def empty_inputs_to_constants(model: onnx.ModelProto) -> list[dict]:
    """An input with a static zero-size dimension holds nothing, so its value is known: it becomes an
    empty constant (no argument, no arena space), and what reads it folds (a CastLike's `like`, empty
    Reduce axes, a Reduce of an empty set). Returns their declarations: name, shape and dtype."""
    inits = {i.name for i in model.graph.initializer}
    empty: list[dict] = []
    for vi in model.graph.input:
        tt = vi.type.tensor_type
        if vi.name in inits or not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
        if 0 not in dims or any(d < 0 for d in dims):
            continue
        try:
            np_dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        except Exception:  # a type numpy cannot hold (string): left to the dtype check's refusal
            continue
        if np_dtype.kind in "OSU":
            continue
        # numpy refuses a shape whose other dimensions overflow, even holding nothing: the same limit as
        # any tensor, on the dimensions that are not zero
        if tensor_bytes([d for d in dims if d], np_dtype.itemsize) > MAX_TENSOR_BYTES:
            raise AotcError(f"input '{vi.name}' is {np_dtype}[{','.join(map(str, dims))}]: empty, but its other "
                            "dimensions are beyond the 2 GiB aotc takes for any tensor")
        model.graph.initializer.append(numpy_helper.from_array(np.zeros(dims, np_dtype), vi.name))
        empty.append({"name": vi.name, "shape": dims, "dtype": elem_name(tt.elem_type)})
    return empty


def reduces_empty(model: onnx.ModelProto) -> bool:
    empty = {i.name for i in model.graph.initializer if 0 in i.dims}
    return any(n.op_type.startswith("Reduce") and n.input and n.input[0] in empty for n in model.graph.node)


def check_input_shapes(model: onnx.ModelProto) -> None:
    inits = {i.name for i in model.graph.initializer}
    dynamic = [vi for vi in model.graph.input if vi.name not in inits and vi.type.HasField("tensor_type")
               and vi.type.tensor_type.HasField("shape") and _dynamic_dims(vi)]
    if len(dynamic) > 1:  # every one named at once, rather than one a try
        raise AotcError(_dynamic_inputs_line(dynamic))
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise AotcError(f"input '{vi.name}' is not a tensor")
        if not tt.HasField("shape"):
            raise AotcError(f"input '{vi.name}' has no shape: aotc needs static shapes")
        for k, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value") and d.dim_value == 0:
                raise AotcError(f"input '{vi.name}' has a zero-size dimension {k}: empty tensors are not supported")
            if not d.HasField("dim_value") or d.dim_value < 0:
                what = f"'{d.dim_param}'" if d.dim_param else "unknown"
                sizes = ",".join(str(e.dim_value) if e.HasField("dim_value") and e.dim_value > 0 else f"D{j}"
                                 for j, e in enumerate(tt.shape.dim))
                named = dict.fromkeys(n for _, n in _dynamic_dims(vi) if n != "?")
                by_name = f" (or {' '.join(f'--dim {n}=N' for n in named)})" if named else ""
                raise AotcError(f"input '{vi.name}' has a dynamic dimension {k} ({what}): aotc needs static shapes; "
                                f"give them with --input-shape {vi.name}={sizes}{by_name}")


def _unique(name: str, used: set[str]) -> str:
    base, k = name, 1
    while name in used:
        name = f"{base}_{k}"
        k += 1
    used.add(name)
    return name


def sanitize(name: str) -> str:
    """The model's C name, made from `name`: lower-case [a-z0-9_], not leading with a digit, at most
    48 characters (it prefixes every public symbol and file name of the bundle), and none that a
    CMake target, a system library, the bundle's own files or the runtime's prefixes take."""
    s = re.sub(r"[^0-9a-zA-Z_]", "_", name).strip("_").lower() or "model"
    if len(s) > 48:
        s = s[:40].rstrip("_") + "_" + hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:7]
    if s[0].isdigit() or s in _RESERVED or is_reserved(s) or s.startswith(("aotc", "dlpack", "dltensor")):
        s = "model_" + s
    return s


# Names a bundle's CMake target must not take: system libraries it links, its own runner, CMake's
# reserved targets; and C keywords (the name is also an identifier prefix and a header name).
_RESERVED = {"m", "c", "dl", "rt", "pthread", "gcc", "runner", "aotc", "dnnl", "all", "clean", "help", "install",
             "test", "package", "package_source", "edit_cache", "rebuild_cache", "depend", "preinstall",
             "list_install_components", "install_strip", "install_local", "all_build", "zero_check", "run_tests",
             "main", "cref", "accel_sim"}
