"""aotc compare: where does a bundle first part from onnxruntime?

    aotc compare [MODEL.onnx] OUT [--inputs IN.npz] [--tolerance T] [--lsb N]

1. The debug variant. Every bundle's generated code taps each tensor right after the node that
   writes it (AOTC_TAP, aot/csource/tap.py), and a vendor may tap the tensors inside its
   functions (CodegenContext.tap). A normal build compiles the taps away; OUT/compare/ holds a
   copy of OUT/bundle built with AOTC_TAPS, whose runner writes every tapped tensor of one run
   to a file. It is the very C of the bundle under test (same target, same vendor code, same
   arena plan: a tensor is read before a later node can reuse its bytes), run the way `aotc run`
   runs it: on the host, under qemu-user, or on a Cortex-M board under qemu-system-arm with the
   file written through semihosting. OUT/bundle is never touched.
2. The reference: the ONNX model (the one OUT was compiled from, unless MODEL is given) with
   every tensor the bundle tapped added as a graph output, run once in onnxruntime on the same
   inputs. Only those tensors are exposed: exposing one stops onnxruntime fusing across it.
3. The table: one row per tapped tensor in execution order, tensors matched by ONNX name (a
   fused node taps the tensor of its last ONNX node: Conv+BatchNorm+Relu is the Relu's output;
   what the compiler folded away exists on one side only and is not compared). Float tensors
   show the max abs error and that error over max(1, max |ref|) -- DESIGN.md's bar, within
   `tolerance` -- integer tensors the largest difference in LSB and the share of equal
   elements (int8/uint8/int16/int32 within `lsb` LSB; int64 and bool must be equal). The first
   tensor beyond tolerance names its node: a host node, or a node inside a vendor function.

OUT/compare/taps.npz and OUT/compare/reference.npz keep both sides' tensors for a closer look.
"""

from __future__ import annotations

import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aot.build import build, configure, run_bundle
from aot.csource.tap import TAP_MAGIC, parse_tap_type
from aot.errors import AotcError
from aot.ir import np_dtype
from aot.npz import bundle_outputs, load_inputs, onnx_feeds
from aot.progress import status

DEFAULT_TOLERANCE = 1e-4  # DESIGN.md: fp32 max abs error <= 1e-4 x max(1, max |ref|)
DEFAULT_LSB = 1  # quantized kernels may round a half differently from onnxruntime
EXACT_DTYPES = ("int64", "uint64", "bool")  # indices, shapes, masks: no rounding to forgive


@dataclass
class Tap:
    """One tensor the debug variant reported: `node` is a host node, or `<symbol>/<node>` inside a
    vendor function."""

    node: str
    tensor: str
    data: np.ndarray


@dataclass
class Row:
    node: str
    op: str
    onnx_nodes: list[str]
    where: str  # "host", or the vendor whose function the node is in (or is)
    function: str | None  # the vendor function's symbol, for a node inside one or its Call
    tensor: str
    shape: tuple[int, ...]
    dtype: str
    status: str = "ok"  # ok | diverges | no reference | shape differs
    max_abs: float | None = None  # float tensors
    rel: float | None = None  # max_abs / max(1, max |ref|)
    lsb: int | None = None  # integer tensors: largest difference
    equal: float | None = None  # integer tensors: share of equal elements

    @property
    def integer(self) -> bool:
        return self.lsb is not None


def read_taps(path: Path) -> list[Tap]:
    """The records of a tap file, in the order the run wrote them."""
    raw = path.read_bytes()
    if not raw.startswith(TAP_MAGIC):
        raise AotcError(f"{path} is not a tap file (no {TAP_MAGIC.decode()} header)")
    taps, pos = [], len(TAP_MAGIC)
    while pos < len(raw):
        try:
            fields = []
            for _ in range(3):
                end = raw.index(b"\0", pos)
                fields.append(raw[pos:end].decode())
                pos = end + 1
            (nbytes,) = struct.unpack_from("<Q", raw, pos)
            pos += 8
            node, tensor, type_text = fields
            dtype, shape = parse_tap_type(type_text)
            data = raw[pos:pos + nbytes]
            if len(data) != nbytes or nbytes != np.dtype(dtype).itemsize * int(np.prod(shape, dtype=np.int64)):
                raise ValueError(f"tap of '{tensor}' is truncated or does not match its type {type_text}")
        except (ValueError, TypeError, struct.error) as e:
            raise AotcError(f"{path} is truncated or malformed at byte {pos}: {e}") from e
        taps.append(Tap(node, tensor, np.frombuffer(data, dtype=dtype).reshape(shape).copy()))
        pos += nbytes
    return taps


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


def random_inputs(meta: dict, seed: int = 0) -> list[np.ndarray]:
    """Seeded inputs of the model's shapes and dtypes: floats N(0, 1), small integer types
    (quantized data) over their whole range, bools at random; wider integers are zeros, since they
    are usually indices or ids that must stay in range (give --inputs for those)."""
    import ml_dtypes  # bfloat16, float8 and the 4- and 2-bit integers: numpy's own info does not know them

    rng = np.random.default_rng(seed)
    out = []
    for spec in meta["inputs"]:
        dt, shape = np_dtype(spec["dtype"]), spec["shape"]
        if dt.kind == "f" or spec["dtype"].startswith(("bfloat", "float")):
            out.append(rng.standard_normal(shape).astype(np.float32).astype(dt))
        elif dt.kind == "b":
            out.append(rng.integers(0, 2, shape).astype(dt))
        elif dt.itemsize <= 2:
            info = np.iinfo(dt) if dt.kind in "iu" else ml_dtypes.iinfo(dt)
            out.append(rng.integers(int(info.min), int(info.max) + 1, shape).astype(dt))
        else:
            out.append(np.zeros(shape, dt))
    return out


def debug_variant(out: Path, meta: dict) -> Path:
    """OUT/compare: a copy of OUT/bundle (modification times kept, so a second compare rebuilds
    nothing) configured with AOTC_TAPS for the bundle's own target, and built."""
    dbg = out / "compare"
    with status(f"configuring the debug variant in {dbg}"):
        copy = dbg / "bundle"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(out / "bundle", copy)
        configure(dbg, meta.get("target", "host"), extra=["-DAOTC_TAPS=ON"])
    with status(f"building {dbg}"):
        build(dbg)
    return dbg


def reference(model_path: Path, feeds: dict[str, np.ndarray], tensors: list[str],
              meta: dict | None = None) -> dict[str, np.ndarray]:
    """onnxruntime's value of each of `tensors` (those the model computes) on `feeds`. With the bundle's
    `meta`, its quantized integer inputs and outputs (--quantized-io) meet the model's float ones:
    inputs dequantized, outputs quantized back (exact both ways)."""
    import onnx
    import onnxruntime as ort

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


def _labels(meta: dict) -> dict[str, tuple[str, list[str], str, str | None]]:
    """node label -> (op, ONNX nodes, where, function symbol) from metadata.json."""
    compilers = {f["symbol"]: f["compiler"] for f in meta.get("partition", [])}
    labels: dict[str, tuple[str, list[str], str, str | None]] = {}
    for e in meta.get("source_map", []):
        if e["op"] == "Call" and e["node"] in compilers:
            compiler = compilers[e["node"]]
            labels[e["node"]] = (f"{compiler} function", e["onnx_nodes"], compiler, e["node"])
        else:
            labels[e["node"]] = (e["op"], e["onnx_nodes"], "host", None)
    for f in meta.get("partition", []):
        for t in f.get("taps", []):
            labels[f"{f['symbol']}/{t['node']}"] = (t["op"], t["onnx_nodes"], f["compiler"], f["symbol"])
    return labels


def compare_taps(taps: list[Tap], refs: dict[str, np.ndarray], meta: dict,
                 tolerance: float = DEFAULT_TOLERANCE, lsb: int = DEFAULT_LSB) -> list[Row]:
    """One row per tap, in run order, with its error against onnxruntime."""
    labels = _labels(meta)
    rows = []
    for tap in taps:
        symbol, _, inner = tap.node.partition("/")
        op, onnx_nodes, where, function = labels.get(
            tap.node, ("?", [inner or tap.node], "?", symbol if inner else None))
        row = Row(tap.node, op, list(onnx_nodes), where, function, tap.tensor, tuple(tap.data.shape),
                  tap.data.dtype.name)
        ref = refs.get(tap.tensor)
        if ref is None:
            row.status = "no reference"
        elif ref.size != tap.data.size:
            row.status = "shape differs"
        else:
            _measure(row, tap.data, ref.reshape(tap.data.shape), tolerance, lsb)
        rows.append(row)
    return rows


def _measure(row: Row, ours: np.ndarray, ref: np.ndarray, tolerance: float, lsb: int) -> None:
    if ours.dtype.kind in "iub" and ref.dtype.kind in "iub":
        d = np.abs(ours.astype(np.int64) - ref.astype(np.int64))
        row.lsb = int(d.max(initial=0))
        row.equal = float(np.mean(d == 0)) if d.size else 1.0
        allowed = 0 if ours.dtype.name in EXACT_DTYPES else lsb
        row.status = "ok" if row.lsb <= allowed else "diverges"
        return
    a, b = ours.astype(np.float64), ref.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - b)
    both_nan, same_inf = np.isnan(a) & np.isnan(b), np.isinf(a) & (a == b)
    d = np.where(both_nan | same_inf, 0.0, np.where(np.isnan(d), np.inf, d))
    finite = np.abs(b[np.isfinite(b)])
    row.max_abs = float(d.max(initial=0.0))
    row.rel = row.max_abs / max(1.0, float(finite.max(initial=0.0)))
    row.status = "ok" if row.rel <= tolerance else "diverges"


def first_divergence(rows: list[Row]) -> Row | None:
    return next((r for r in rows if r.status == "diverges"), None)


def _short(names: list[str], width: int = 28) -> str:
    """ONNX node names for a table cell: all of them when they fit, else the first and last."""
    text = ",".join(names)
    if len(text) <= width:
        return text
    if len(names) == 1:  # the end of a long name (/layer1/layer1.0/conv1/Conv) says most
        return "..." + text[3 - width:]
    if len(names) == 2 and len(text) <= 2 * width:
        return text
    return f"{names[0]},...,{names[-1]} ({len(names)})"


def format_table(rows: list[Row]) -> str:
    """The rows as an aligned text table; the first divergent row is marked."""
    first = first_divergence(rows)
    head = ("#", "node", "op", "ONNX nodes", "tensor", "shape", "dtype", "max abs err", "rel | equal", "")
    body = []
    for k, r in enumerate(rows):
        if r.integer:
            err, rel = f"{r.lsb} LSB", f"{100 * r.equal:.1f}% eq"
        elif r.max_abs is not None:
            err, rel = f"{r.max_abs:.2e}", f"{r.rel:.2e}"
        else:
            err = rel = "-"
        mark = {"ok": "ok", "diverges": "DIVERGES"}.get(r.status, r.status)
        if r is first:
            mark += "  <- first"
        body.append((str(k), r.node, r.op, _short(r.onnx_nodes), r.tensor, "x".join(map(str, r.shape)) or "scalar",
                     r.dtype, err, rel, mark))
    widths = [max(len(line[c]) for line in (head, *body)) for c in range(len(head))]
    right = {0, 7, 8}

    def fmt(line: tuple[str, ...]) -> str:
        cells = zip(line, widths, strict=True)
        return "  ".join(v.rjust(w) if c in right else v.ljust(w) for c, (v, w) in enumerate(cells))

    rule = tuple("-" * w for w in widths)
    return "".join(fmt(line).rstrip() + "\n" for line in (head, rule, *body))


def verdict(rows: list[Row], tolerance: float = DEFAULT_TOLERANCE, lsb: int = DEFAULT_LSB) -> str:
    """The line under the table: the first node beyond tolerance, or that there is none."""
    first = first_divergence(rows)
    compared = sum(r.status in ("ok", "diverges") for r in rows)
    if first is None:
        missing = len(rows) - compared
        note = f" ({missing} without an onnxruntime counterpart)" if missing else ""
        return f"aotc: no divergence: {compared} tensors within tolerance{note}"
    if first.function and first.node != first.function:
        place = f"inside function {first.function} [{first.where}]"
        node = first.node.split("/", 1)[1]
    elif first.function:
        place = f"[{first.where}, which exposes no tensors inside]"
        node = first.node
    else:
        place, node = "[host]", first.node
    if first.integer:
        allowed = 0 if first.dtype in EXACT_DTYPES else lsb
        err = f"{first.lsb} LSB apart > {allowed}, {100 * first.equal:.1f}% of elements equal"
    else:
        err = f"max abs err {first.max_abs:.3g}, {first.rel:.3g} x max(1, max|ref|) > {tolerance:g}"
    return (f"aotc: first divergence: node '{node}' ({first.op}) {place}, ONNX nodes "
            f"{', '.join(first.onnx_nodes)}: tensor '{first.tensor}' {first.dtype}: {err}")


@dataclass
class Comparison:
    rows: list[Row]
    directory: Path  # OUT/compare

    @property
    def first(self) -> Row | None:
        return first_divergence(self.rows)


def compare(out: Path, meta: dict, *, model: str | Path | None = None, inputs_npz: str | Path | None = None,
            tolerance: float = DEFAULT_TOLERANCE, lsb: int = DEFAULT_LSB) -> Comparison:
    """Build and run OUT's debug variant and onnxruntime on the same inputs; a row per tapped tensor."""
    source = Path(model or meta.get("source", ""))
    if not source.is_file():
        raise AotcError(f"cannot find the ONNX model OUT was compiled from ('{source}'): give it, "
                        f"aotc compare MODEL.onnx {out}")
    from aot.frontend.tflite import is_tflite

    if is_tflite(source):
        raise AotcError(f"{out} was compiled from a TFLite model ('{source}'), which onnxruntime cannot run; "
                        f"give an ONNX export of it (e.g. tf2onnx's): aotc compare MODEL.onnx {out}")
    if tolerance < 0 or lsb < 0:
        raise AotcError("--tolerance and --lsb must not be negative")
    inputs = load_inputs(inputs_npz, meta) if inputs_npz else random_inputs(meta)
    dbg = debug_variant(out, meta)
    taps_file = dbg / "taps.bin"
    taps_file.unlink(missing_ok=True)
    run_bundle(dbg, meta, inputs, taps=taps_file)
    taps = read_taps(taps_file)
    if not taps:
        raise AotcError(f"the debug variant of {out} reports no tensors: its bundle was written by an aotc "
                        "without tap points; compile it again")
    feeds = {s["name"]: x for s, x in zip(meta["inputs"], inputs, strict=True)}
    names = list(dict.fromkeys(t.tensor for t in taps))
    with status(f"running onnxruntime with {len(names)} tensors exposed"):
        refs = reference(source, feeds, names, meta)
    np.savez(dbg / "taps.npz", **{t.tensor: t.data for t in reversed(taps)})
    np.savez(dbg / "reference.npz", **refs)
    return Comparison(compare_taps(taps, refs, meta, tolerance, lsb), dbg)
