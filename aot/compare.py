"""aotc compare: where does a bundle first part from its reference?

    aotc compare [MODEL] OUT [--inputs IN.npz] [--tolerance T] [--lsb N] [--reference-kernels K]

1. The debug variant. Every bundle's generated code taps each tensor right after the node that
   writes it (AOTC_TAP, aot/csource/tap.py), and a vendor may tap the tensors inside its
   functions (CodegenContext.tap). A normal build compiles the taps away; OUT/compare/ holds a
   copy of OUT/bundle built with AOTC_TAPS, whose runner writes every tapped tensor of one run
   to a file. It is the very C of the bundle under test (same target, same vendor code, same
   arena plan: a tensor is read before a later node can reuse its bytes), run the way `aotc run`
   runs it: on the host, under qemu-user, or on a Cortex-M board under qemu-system-arm with the
   file written through semihosting. OUT/bundle is never touched.
2. The reference (aot/refs/), chosen by the model (the one OUT was compiled from, unless MODEL is
   given): onnxruntime for an ONNX model, with every tensor the bundle tapped added as a graph
   output (aot/refs/ort.py); LiteRT for a .tflite file, its interpreter keeping every tensor, with
   the kernels --reference-kernels picks: its reference kernels (the default, which the bundle's
   integer kernels follow bit for bit), its optimised builtin kernels, or its default XNNPACK path
   (aot/refs/litert.py). Both run once on the same inputs as the debug variant.
3. The table: one row per tapped tensor in execution order, tensors matched by name (an ONNX
   tensor's; a TFLite tensor's, as the frontend names it, an NCHW copy transposed back; a fused
   node taps the tensor of its last node: Conv+BatchNorm+Relu is the Relu's output; what the
   compiler folded away exists on one side only and is not compared). Float tensors
   show the max abs error and that error over max(1, max |ref|) -- DESIGN.md's bar, within
   `tolerance` -- integer tensors the largest difference in LSB and the share of equal
   elements (int8/uint8/int16/int32 within `lsb` LSB: 1 against onnxruntime, which may round a
   half otherwise, 0 against LiteRT; int64 and bool must be equal). The first tensor beyond
   tolerance names its node: a host node, or a node inside a vendor function.

OUT/compare/taps.npz and OUT/compare/reference.npz keep both sides' tensors for a closer look.
"""

from __future__ import annotations

import shutil
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aot.build import build, configure, run_bundle
from aot.csource.tap import TAP_MAGIC, parse_tap_type
from aot.errors import AotcError
from aot.ir import np_dtype
from aot.npz import load_inputs, start_values
from aot.progress import status
from aot.refs import Reference, reference_for

DEFAULT_TOLERANCE = 1e-4  # DESIGN.md: fp32 max abs error <= 1e-4 x max(1, max |ref|)
DEFAULT_LSB = 1  # against onnxruntime: quantized kernels may round a half otherwise (LiteRT's: 0, aot/refs)
EXACT_DTYPES = ("int64", "uint64", "bool")  # indices, shapes, masks: no rounding to forgive
TENSOR_WIDTH = 64  # the table shows the end of a longer tensor name (TFLite's join several: a;b); the verdict all


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
    status: str = "ok"  # ok | diverges | no reference | shape differs | type differs
    max_abs: float | None = None  # float tensors
    rel: float | None = None  # max_abs / max(1, max |ref|)
    lsb: int | None = None  # integer tensors: largest difference
    equal: float | None = None  # integer tensors: share of equal elements
    unequal: int | None = None  # integer tensors: how many elements differ

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
        elif (ref.dtype.kind in "iub") != (tap.data.dtype.kind in "iub"):  # integers on one side, floats on the other
            row.status = "type differs"
        else:
            _measure(row, tap.data, ref.reshape(tap.data.shape), tolerance, lsb)
        rows.append(row)
    return rows


def _measure(row: Row, ours: np.ndarray, ref: np.ndarray, tolerance: float, lsb: int) -> None:
    if ours.dtype.kind in "iub" and ref.dtype.kind in "iub":
        d = np.abs(ours.astype(np.int64) - ref.astype(np.int64))
        row.lsb = int(d.max(initial=0))
        row.equal = float(np.mean(d == 0)) if d.size else 1.0
        row.unequal = int(np.count_nonzero(d))
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


def format_table(rows: list[Row], nodes: str = "ONNX nodes") -> str:
    """The rows as an aligned text table; the first divergent row is marked. `nodes` heads the column of the
    model's nodes each row's node computes (the reference's `nodes`)."""
    first = first_divergence(rows)
    head = ("#", "node", "op", nodes, "tensor", "shape", "dtype", "max abs err", "rel | equal", "")
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
        body.append((str(k), r.node, r.op, _short(r.onnx_nodes), _short([r.tensor], TENSOR_WIDTH),
                     "x".join(map(str, r.shape)) or "scalar", r.dtype, err, rel, mark))
    widths = [max(len(line[c]) for line in (head, *body)) for c in range(len(head))]
    right = {0, 7, 8}

    def fmt(line: tuple[str, ...]) -> str:
        cells = zip(line, widths, strict=True)
        return "  ".join(v.rjust(w) if c in right else v.ljust(w) for c, (v, w) in enumerate(cells))

    rule = tuple("-" * w for w in widths)
    return "".join(fmt(line).rstrip() + "\n" for line in (head, rule, *body))


def verdict(rows: list[Row], tolerance: float = DEFAULT_TOLERANCE, lsb: int = DEFAULT_LSB,
            reference: Reference | None = None) -> str:
    """The line under the table: the first node beyond tolerance, or that there is none (and how many integer
    tensors differ within --lsb)."""
    first = first_divergence(rows)
    compared = sum(r.status in ("ok", "diverges") for r in rows)
    what, nodes = (reference.what, reference.nodes) if reference is not None else ("onnxruntime", "ONNX nodes")
    if first is None:
        missing = len(rows) - compared
        note = f" ({missing} without a counterpart in {what})" if missing else ""
        near = [r for r in rows if r.status == "ok" and r.integer and r.lsb]
        if near:
            count, elements = len(near), sum(r.unequal for r in near)
            note += (f"; {count} integer tensor{'s differ' if count > 1 else ' differs'} by up to "
                     f"{max(r.lsb for r in near)} LSB ({elements} element{'s' if elements > 1 else ''})")
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
    other = reference.counterpart(first.tensor) if reference is not None else None
    tensor = f"tensor '{first.tensor}'" + (f" ({other})" if other else "")
    return (f"aotc: first divergence: node '{node}' ({first.op}) {place}, {nodes} "
            f"{', '.join(first.onnx_nodes)}: {tensor} {first.dtype}: {err}")


@dataclass
class Comparison:
    rows: list[Row]
    directory: Path  # OUT/compare
    reference: Reference
    lsb: int  # the LSB allowed (--lsb, or the reference's default)

    @property
    def first(self) -> Row | None:
        return first_divergence(self.rows)


def compare(out: Path, meta: dict, *, model: str | Path | None = None, inputs_npz: str | Path | None = None,
            tolerance: float = DEFAULT_TOLERANCE, lsb: int | None = None,
            kernels: str | None = None) -> Comparison:
    """Build and run OUT's debug variant and the reference on the same inputs; a row per tapped tensor.
    `lsb` None: the reference's default; `kernels`: LiteRT's (aot/refs/litert.py), for a .tflite model."""
    source = Path(model or meta.get("source", ""))
    if not source.is_file():
        raise AotcError(f"cannot find the model OUT was compiled from ('{source}'): give it, "
                        f"aotc compare MODEL {out}")
    if tolerance < 0 or (lsb is not None and lsb < 0):
        raise AotcError("--tolerance and --lsb must not be negative")
    ref = reference_for(source, kernels)
    lsb = ref.lsb if lsb is None else lsb
    bundle = out / "bundle"
    inputs = load_inputs(inputs_npz, meta, bundle) if inputs_npz else random_inputs(meta)
    if ref.keeps_state:
        inputs = _state_at_start(meta, inputs, bundle, ref, inputs_npz)
    ref.prepare(meta, inputs)
    dbg = debug_variant(out, meta)
    taps_file = dbg / "taps.bin"
    taps_file.unlink(missing_ok=True)
    run_bundle(dbg, meta, inputs, taps=taps_file)
    taps = read_taps(taps_file)
    if not taps:
        raise AotcError(f"the debug variant of {out} reports no tensors: its bundle was written by an aotc "
                        "without tap points; compile it again")
    names = list(dict.fromkeys(t.tensor for t in taps))
    with status(f"running {ref.what} with {len(names)} tensors exposed"):
        refs = ref.values(meta, inputs, names)
    np.savez(dbg / "taps.npz", **{t.tensor: t.data for t in reversed(taps)})
    np.savez(dbg / "reference.npz", **refs)
    rows = compare_taps(taps, refs, meta, tolerance, lsb)
    for row in rows:
        row.onnx_nodes = ref.source_nodes(row.onnx_nodes)
    return Comparison(rows, dbg, ref, lsb)


def _state_at_start(meta: dict, inputs: list[np.ndarray], bundle: Path, ref: Reference,
                    inputs_npz: str | Path | None) -> list[np.ndarray]:
    """The inputs with the model's state (an LSTM's h and c, resource variables) at its start values, where a
    reference that keeps it inside (LiteRT's interpreter) starts it; a given state elsewhere is refused."""
    starts = start_values(meta, bundle)
    out = list(inputs)
    for k, spec in enumerate(meta["inputs"]):
        if spec["name"] not in starts:
            continue
        if inputs_npz and not np.array_equal(out[k], starts[spec["name"]]):
            raise AotcError(f"input '{spec['name']}' in '{inputs_npz}' is the model's state, which {ref.what} keeps "
                            "inside from its start values: leave it out to compare one call from the start")
        out[k] = starts[spec["name"]]
    started = [spec["name"] for spec in meta["inputs"] if spec["name"] in starts]
    if started and not inputs_npz:
        print(f"aotc: note: state {', '.join(started)} starts from the model's start values, where the reference "
              "keeps it inside", file=sys.stderr)
    return out
