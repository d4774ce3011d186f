"""Inputs and outputs at the command line: .npz files keyed by the model's tensor names, and a
summary of the outputs a person can read (shape, range, and the top classes of a classifier)."""

from __future__ import annotations

import ast
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

from aot import qmath
from aot.errors import AotcError
from aot.ir import np_dtype

TOP_K = 5


def load_inputs(path: str | Path, meta: dict, bundle: Path | None = None) -> list[np.ndarray]:
    """The model's inputs from `path`, in model order, checked against the bundle's metadata.
    Arrays the model has no input for are refused, as onnxruntime refuses unknown feeds: a
    misspelt name must not pass unnoticed. State inputs it leaves out start from the model's
    start values (start_absent_state; `bundle` is the bundle folder, where values that are not
    one number repeated are)."""
    try:
        arrays = _read_npz(path)
    except ValueError as e:
        if "allow_pickle" in str(e):
            raise AotcError(f"inputs '{path}' hold Python objects (pickled arrays); save plain numeric arrays, "
                            "e.g. np.savez(path, input=array.astype(np.float32))") from None
        raise AotcError(f"cannot read inputs '{path}': {e}") from None
    except (OSError, zipfile.BadZipFile, EOFError) as e:
        raise AotcError(f"cannot read inputs '{path}': {e}") from None
    arrays = start_absent_state(meta, arrays, bundle)
    checked = [check_input(meta, spec, arrays.get(spec["name"])) for spec in meta["inputs"]]
    names = [s["name"] for s in meta["inputs"]]
    pruned = [s for s in meta.get("pruned_inputs", []) if s["name"] in arrays]
    for spec in pruned:  # declared by the model, but empty: the bundle takes nothing for them
        check_input(meta, spec, arrays[spec["name"]])
    if pruned:
        print(f"aotc: note: {', '.join(s['name'] for s in pruned)} in '{path}' ignored: "
              f"empty input{'s' if len(pruned) > 1 else ''} of the model, which the bundle does not take",
              file=sys.stderr)
    pinned = [s for s in meta.get("pinned_inputs", []) if s["name"] in arrays]
    for spec in pinned:  # pinned at compile time (--input-value): the same value is ignored, another refused
        check_pinned(meta, spec, arrays[spec["name"]], path)
    if pinned:
        print(f"aotc: note: {', '.join(s['name'] for s in pinned)} in '{path}' ignored: the value the bundle was "
              "compiled for (--input-value)", file=sys.stderr)
    extra = sorted(set(arrays) - set(names) - {s["name"] for s in pruned} - {s["name"] for s in pinned})
    if extra:
        takes = names + [f"{s['name']} (empty, ignored)" for s in meta.get("pruned_inputs", [])] + \
            [f"{s['name']} (pinned, ignored)" for s in meta.get("pinned_inputs", [])]
        raise AotcError(f"inputs '{path}' have arrays the model has no input for: {', '.join(extra)} "
                        f"(model {meta['name']} takes {', '.join(takes)})")
    return checked


def pinned_value(spec: dict) -> np.ndarray:
    """The value an input was pinned to (metadata.json's pinned_inputs entry) as an array."""
    return np.array(spec["value"], dtype=np_dtype(spec["dtype"])).reshape(spec["shape"])


def check_pinned(meta: dict, spec: dict, value: np.ndarray, path: str | Path) -> None:
    """An array given for a pinned input must be the value the bundle was compiled for: the bundle
    computes with that one, whatever is given, so another value would be silently wrong."""
    value = check_input(meta, spec, value)
    want = pinned_value(spec)
    if not np.array_equal(value, want, equal_nan=want.dtype.kind == "f"):
        raise AotcError(f"input '{spec['name']}' in '{path}' is {_value_text(value.tolist())}, but the bundle "
                        f"was compiled with it pinned to {_value_text(spec['value'])} (--input-value); compile "
                        f"again with --input-value {spec['name']}=... for another value")


def _value_text(value: object) -> str:
    flat = np.ravel(np.array(value)).tolist()
    text = ",".join(str(v) for v in flat[:8])
    return text + (",..." if len(flat) > 8 else "")


def start_absent_state(meta: dict, arrays: dict[str, np.ndarray], bundle: Path | None) -> dict[str, np.ndarray]:
    """`arrays` with each state input they leave out (metadata.json's inputs with a `state`) at the start
    value the model defines, as the generated <name>_reset_state writes it: an LSTM's h at its zero point,
    not zeros. Says so in one line, naming them."""
    started = {k: v for k, v in start_values(meta, bundle).items() if k not in arrays}
    if started:
        print(f"aotc: state {', '.join(started)} not in the inputs: started from the model's start values "
              "(metadata.json's state, as <name>_reset_state writes them)")
    return {**arrays, **started}


def start_values(meta: dict, bundle: Path | None) -> dict[str, np.ndarray]:
    """Each state input's start value (metadata.json's inputs with a `state`: a fill, or a file in the bundle
    folder `bundle`, without which such a state is left out), as <name>_reset_state writes it."""
    started = {}
    for spec in meta["inputs"]:
        st = spec.get("state")
        if st is None:
            continue
        if "fill" in st:
            started[spec["name"]] = np.full(spec["shape"], st["fill"], spec["dtype"])
        elif bundle is not None and (Path(bundle) / st["file"]).is_file():
            raw = (Path(bundle) / st["file"]).read_bytes()
            started[spec["name"]] = np.frombuffer(raw, np.dtype(spec["dtype"]).newbyteorder("<")).astype(
                spec["dtype"]).reshape(spec["shape"])
    return started


def _read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of an .npz. np.savez writes ml_dtypes' float8_e5m2 with the descriptor '<f1' (its
    kind is 'f'), which np.load refuses: such a file is read again here, those arrays as raw bytes
    (void8), which check_input reads as the model's type like the other ml_dtypes types."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except ValueError as e:
        if "'<f1'" not in str(e) and "'|f1'" not in str(e):
            raise
    arrays = {}
    with zipfile.ZipFile(path) as z:
        for member in z.namelist():
            with z.open(member) as f:
                major, _ = np.lib.format.read_magic(f)
                try:
                    size = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
                    header = ast.literal_eval(f.read(size).decode("latin1"))
                    descr = header["descr"]
                except (struct.error, SyntaxError, KeyError, TypeError) as e:
                    raise ValueError(f"'{member}' has no valid .npy header ({e})") from None
                dtype = np.dtype("V1") if descr in ("<f1", "|f1") else np.lib.format.descr_to_dtype(descr)
                if dtype.hasobject:
                    raise ValueError("Object arrays cannot be loaded when allow_pickle=False")
                data = np.frombuffer(f.read(), dtype=dtype)
                arrays[member.removesuffix(".npy")] = data.reshape(header["shape"],
                                                                   order="F" if header["fortran_order"] else "C")
    return arrays


def check_input(meta: dict, spec: dict, value: np.ndarray | None) -> np.ndarray:
    if value is None:
        raise AotcError(f"inputs have no array named '{spec['name']}' (model {meta['name']} needs "
                        f"{', '.join(s['name'] for s in meta['inputs'])})")
    if list(value.shape) != spec["shape"]:
        raise AotcError(f"input '{spec['name']}' has shape {list(value.shape)}, the model needs {spec['shape']}")
    value = as_model_dtype(value, spec["dtype"])
    if value.dtype.name != spec["dtype"]:
        hint = "" if "scale" not in spec else \
            f" (quantized: q = round(x / {spec['scale']:.9g}) + {spec['zero_point']}, see metadata.json)"
        raise AotcError(f"input '{spec['name']}' has dtype {value.dtype.name}, the model needs {spec['dtype']}{hint}")
    return np.asarray(value, order="C")


def as_model_dtype(value: np.ndarray, dtype: str) -> np.ndarray:
    """`value` as the model's `dtype` where an .npz could not say it: np.savez writes an ml_dtypes
    array (bfloat16, float8, int4, ...) as raw bytes of its size (void16 for bfloat16), which are
    read back as that type. Anything else is returned as it is, for check_input to compare."""
    if value.dtype.kind != "V" or value.dtype.names is not None:  # a plain type, or a structured array
        return value
    try:
        want = np_dtype(dtype)
    except TypeError:
        return value
    ml_type = want.isbuiltin == 2  # numpy's user-defined types: ml_dtypes'
    return value.view(want) if ml_type and want.itemsize == value.dtype.itemsize else value


def raw_outputs(outputs: dict[str, np.ndarray]) -> list[str]:
    """The outputs save_outputs writes as raw bytes (void): ml_dtypes' types (numpy's user-defined
    ones), which the .npy format cannot name."""
    return [k for k, v in outputs.items() if v.dtype.isbuiltin == 2]


# --- quantized inputs and outputs against a float ONNX model (aotc --quantized-io) -----------------

def dequantize_io(spec: dict, q: np.ndarray) -> np.ndarray:
    """The float32 value of an integer input or output with a scale and zero point (metadata.json's):
    scale * (q - zero_point), as DequantizeLinear computes it."""
    return qmath.dequantize(q, np.float32(spec["scale"]), np.int64(spec["zero_point"]), 0)


def quantize_io(spec: dict, x: np.ndarray) -> np.ndarray:
    """x in the integers of `spec` (round half to even, saturated), as QuantizeLinear computes it."""
    return qmath.quantize(x, spec["scale"], spec["zero_point"], spec["dtype"])


def onnx_feeds(meta: dict, inputs: list[np.ndarray], float_inputs: set[str]) -> dict[str, np.ndarray]:
    """The bundle's inputs as the ONNX model takes them: a quantized integer input (a bundle compiled
    with --quantized-io) is dequantized where the model's input is float, so the model's own
    QuantizeLinear gives back exactly those integers; a pinned input (--input-value) is its value."""
    feeds = {s["name"]: dequantize_io(s, x) if "scale" in s and s["name"] in float_inputs and x.dtype.kind in "iu"
             else x for s, x in zip(meta["inputs"], inputs, strict=True)}
    for spec in meta.get("pinned_inputs", []):  # the model still takes them: the values the bundle was compiled for
        feeds[spec["name"]] = pinned_value(spec)
    return feeds


def bundle_outputs(meta: dict, refs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The ONNX model's outputs as the bundle gives them: a float output of a quantized integer output
    (its DequantizeLinear's) is quantized back, which is exact, to the integers before that DQ."""
    out = dict(refs)
    for s in meta["outputs"]:
        r = out.get(s["name"])
        if r is not None and "scale" in s and np_dtype(s["dtype"]).kind in "iu" and np.asarray(r).dtype.kind == "f":
            out[s["name"]] = quantize_io(s, r)
    return out


def npz_path(path: str | Path) -> Path:
    """The file numpy writes for `path`: it appends .npz to any other name."""
    path = Path(path)
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def save_outputs(path: str | Path, outputs: dict[str, np.ndarray]) -> Path:
    """The outputs as an .npz; those of ml_dtypes' types as raw bytes of their size, which np.savez
    writes for all of them but float8_e5m2, whose '<f1' np.load cannot read back."""
    path = npz_path(path)
    raw = set(raw_outputs(outputs))
    np.savez(path, **{k: v.view(f"V{v.dtype.itemsize}") if k in raw else v for k, v in outputs.items()})
    return path


def describe_rows(outputs: dict[str, np.ndarray], names: list[str], limit: int = 100) -> str:
    """Outputs whose rows are known only at run time (a detector's kept boxes, scores and classes),
    side by side, a line per row: what `aotc run` prints for them."""
    rows = outputs[names[0]].shape[0]
    lines = [f"  {rows} rows of {', '.join(names)}:"]

    def cell(v: np.ndarray) -> str:
        flat = np.asarray(v).reshape(-1)
        return " ".join(f"{x:.6g}" if flat.dtype.kind == "f" else str(x) for x in flat)

    for r in range(min(rows, limit)):
        lines.append(f"    {r:3d}: " + " | ".join(cell(outputs[n][r]) for n in names))
    if rows > limit:
        lines.append(f"    ... {rows - limit} more")
    return "\n".join(lines)


def describe(name: str, value: np.ndarray) -> str:
    """One output in a line or two: dtype, shape and range; a classifier's top classes."""
    head = f"  {name}: {value.dtype.name} {list(value.shape)}"
    if value.size == 0:
        return head + " (empty)"
    if value.dtype == np.bool_:
        return head + f"  {int(value.sum())} of {value.size} true"
    v = value.astype(np.float64)  # ml_dtypes' types (bfloat16, float8, int4) convert too
    finite = v[np.isfinite(v)]
    text = head + (f"  min {finite.min():.6g}  max {finite.max():.6g}  mean {finite.mean():.6g}" if finite.size
                   else "")
    if finite.size < v.size:
        text += f"  ({v.size - finite.size} not finite)"
    scores = v.reshape(-1)
    # one vector of scores: [N], [1, N], ... (a scalar, shape (), is none)
    if max(value.shape, default=0) == value.size >= 3 and finite.size == v.size:
        top = np.argsort(-scores, kind="stable")[:TOP_K]
        text += f"\n    top {len(top)} classes: " + ", ".join(f"{int(i)} ({scores[i]:.4g})" for i in top)
    return text
