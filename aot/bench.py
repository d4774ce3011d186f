"""aotc bench: the bundle's runner and onnxruntime on the same inputs, in one run.

Both are timed as a median over `repeat` runs after a warm-up, raised for a short model until a
round of each lasts MIN_ROUND_S. The runner times inside C; onnxruntime is timed around
session.run from Python, which adds a few microseconds of call overhead: the table reports that
floor (the median of an ONNX Identity on one float) so small models can be read fairly.

Threads: onnxruntime gets as many intra-op threads as the bundle runs on (1, or its --threads N;
`ort_threads` overrides, 0 = onnxruntime's default, one per core), and the table says how many
each side used. Instructions (--instructions) are those of one warm inference at the bundle's
thread count: (11 runs - 1 run) / 10, every thread counted, and the busiest thread's share.

With a .tflite file of the same network (`--tflite`), LiteRT (one thread, its default
XNNPACK delegate) is timed in the same rounds, around interpreter.invoke from Python:
Keras users already have that engine, so it is the second reference. A bundle compiled from a
.tflite file, benchmarked without an ONNX model (--model), has LiteRT on that file as its only
reference: onnxruntime cannot run it, and the ONNX the frontend reads it into is aotc's own.

With --openvino, OpenVINO (its CPU plugin, one thread: INFERENCE_NUM_THREADS=1, the latency hint,
and f32 inference precision, which a CPU with bf16 or AMX would otherwise lower to bf16) is timed in
the same rounds too, around infer_request.infer from Python, on the model onnxruntime reads (or, for
a bundle compiled from a .tflite file with no --model, on that file: OpenVINO reads .tflite too).

Every engine's CPU time per inference is reported beside its latency: the process's CPU time (every
thread's) over the timed calls, divided by their count (the runner measures its own). On a shared
machine a preempted call's latency grows and its CPU time does not.

A reference model whose inputs (outputs) are named otherwise than the bundle's (tf2onnx's "input"
for a .tflite file's "serving_default_input:0") is matched by position when it has as many with the
same shapes, which bench says in one line on stderr; otherwise it is refused (match_ports).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from aot.build import read_outputs, run_bundle, runner_path
from aot.errors import AotcError
from aot.ir import np_dtype
from aot.npz import bundle_outputs, load_inputs, onnx_feeds, quantize_io
from aot.qemu_plugin import CYCLE_MODELS, insn_count_plugin, run_under_plugin
from aot.refs.ort import import_onnxruntime
from aot.targets import bundle_target, require_tools

if TYPE_CHECKING:
    import onnx

    from aot.bench_nodes import NodeCount


def _median(values: list[float]) -> float | None:
    """The median of per-round ratios; None for a reference that was not timed."""
    return statistics.median(values) if values else None

@dataclass
class BenchRow:
    model: str
    bundle_us: float
    ort_us: float | None  # None: onnxruntime was not timed (reference "LiteRT")
    ort_floor_us: float | None
    max_abs_err: float  # the bundle's outputs against the reference's
    arena_bytes: int
    lower_bound_bytes: int
    tight_bound_bytes: int = 0
    instructions: int | None = None  # callgrind's Ir for one inference (<name>_run only), if measured
    round_ratios: list[float] = field(default_factory=list)  # bundle / onnxruntime in each round
    notes: list[str] = field(default_factory=list)  # what a reader needs to read the figures right
    tflite_us: float | None = None  # LiteRT's median latency (--tflite), None when not timed
    tflite_max_abs_err: float | None = None  # LiteRT's outputs against onnxruntime's (same network?)
    tflite_round_ratios: list[float] = field(default_factory=list)  # bundle / LiteRT in each round
    best_round_ratios: list[float] = field(default_factory=list)  # bundle / min(onnxruntime, LiteRT) per round
    threads: int = 1  # the bundle's (--threads)
    ort_threads: int = 1  # onnxruntime's intra-op threads; 0: its default (one per core)
    busiest_thread_instructions: int | None = None  # of `instructions`, the thread that ran the most
    repeat: int = 0  # runs per engine and round, after raising it for a short model
    # what `ratio`, `round_ratios` and `max_abs_err` are against: onnxruntime, or "LiteRT" for a bundle
    # compiled from a .tflite file and timed without an ONNX model (the file itself in LiteRT)
    reference: str = "onnxruntime"
    # process CPU time per timed inference (every thread's), None when not measured (a runner built before
    # it reported one; an engine not timed)
    bundle_cpu_us: float | None = None
    ort_cpu_us: float | None = None
    tflite_cpu_us: float | None = None
    openvino_us: float | None = None  # OpenVINO's median latency (--openvino), None when not timed
    openvino_cpu_us: float | None = None
    openvino_max_abs_err: float | None = None  # the bundle's outputs against OpenVINO's
    openvino_round_ratios: list[float] = field(default_factory=list)  # bundle / OpenVINO in each round
    # the reference engine with the lowest median latency, when more than one was timed, and bundle / it per round
    fastest: str | None = None
    fastest_round_ratios: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        """Bundle / the reference: the median of the per-round ratios (each round times both back to back)."""
        if self.round_ratios:
            return statistics.median(self.round_ratios)
        ref_us = self.tflite_us if self.reference == "LiteRT" else self.ort_us
        return self.bundle_us / ref_us if ref_us else float("nan")

    @property
    def tflite_ratio(self) -> float | None:
        """Bundle / LiteRT: the median of the per-round ratios; None without --tflite."""
        return _median(self.tflite_round_ratios)

    @property
    def best_ratio(self) -> float | None:
        """Bundle / the faster of onnxruntime and LiteRT in each round, median over rounds."""
        return _median(self.best_round_ratios)

    @property
    def openvino_ratio(self) -> float | None:
        """Bundle / OpenVINO: the median of the per-round ratios; None without --openvino."""
        return _median(self.openvino_round_ratios)

    @property
    def fastest_ratio(self) -> float | None:
        """Bundle / the fastest reference (`fastest`), the median of the per-round ratios."""
        return _median(self.fastest_round_ratios)


MIN_ROUND_S = 0.25  # a round of each engine lasts at least this long: shorter ones are mostly noise


def bundle_threads(meta: dict) -> int:
    """The threads a bundle's runs use (aotc --threads; 1 for bundles written before it)."""
    return int(meta.get("threads", {}).get("count", 1))


def _ort_session(model, threads: int = 1):
    """onnxruntime on `threads` intra-op threads (0: its default, one per core), ops in sequence."""
    ort = import_onnxruntime("aotc bench times and checks the bundle against")

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # a file by its path, not its bytes: onnxruntime finds a model's external data (model.onnx.data) beside the
    # file it reads, and beside the current folder when handed bytes (issue 69)
    data = model if isinstance(model, bytes) else str(model)
    try:
        return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    except (ort.capi.onnxruntime_pybind11_state.NotImplemented, ort.capi.onnxruntime_pybind11_state.Fail) as e:
        # an op (or an op's type) onnxruntime has no CPU kernel for: nothing to hold the bundle against
        why = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", str(e).strip().splitlines()[0])
        if "external data" in why.lower():  # the file's weights, not its ops: a data file moved or removed
            raise AotcError(f"onnxruntime cannot read the weights the model keeps outside it ({why}); keep its "
                            "data file beside it, as it was saved") from None
        raise AotcError(f"onnxruntime cannot run the model ({why}), so aotc bench has no reference to time or "
                        "check the bundle against; time the bundle alone with: aotc run OUT --inputs IN.npz "
                        "--repeat N") from None


def seeded_inputs(meta: dict, seed: int = 0) -> list[np.ndarray]:
    """Standard normal inputs; a quantized integer input (--quantized-io) gets those values quantized
    with its scale and zero point, as the float model's own QuantizeLinear would make them."""
    rng = np.random.default_rng(seed)
    return [quantize_io(s, rng.standard_normal(s["shape"])) if "scale" in s and np_dtype(s["dtype"]).kind in "iu"
            else rng.standard_normal(s["shape"]).astype(np.float32).astype(np_dtype(s["dtype"]))
            for s in meta["inputs"]]


Dims = tuple[int | None, ...] | None  # a port's shape: None for an unknown rank, a None dim for an unknown size


def _same_shape(ours: list[int], theirs: Dims) -> bool:
    if theirs is None:
        return True
    return len(theirs) == len(ours) and all(t is None or t == o for o, t in zip(ours, theirs, strict=True))


def _shape_text(shape: Dims) -> str:
    return "[?]" if shape is None else "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def match_ports(kind: str, ours: list[dict], theirs: list[tuple[str, Dims]], engine: str, model: Path | str,
                said: dict | None = None) -> list[int]:
    """Which of the engine's `kind` ("inputs" or "outputs": (name, shape) each, in the model's order) each of
    the bundle's is, as indices into `theirs`: by name when the engine has every name the bundle has; else by
    position, when it has as many and their shapes agree (a converter's names: tf2onnx's "input" for the
    .tflite file's "serving_default_input:0"); else an AotcError naming what differs. A match by position
    is said on stderr: at once, or with `said`, kept there for say_matched_by_position (one line a model)."""
    index = {name: k for k, (name, _) in enumerate(theirs)}
    if all(s["name"] in index for s in ours):
        return [index[s["name"]] for s in ours]
    names = ", ".join(f"'{n}'" for n, _ in theirs)
    if len(theirs) != len(ours):
        raise AotcError(f"'{model}' has {len(theirs)} {kind} in {engine} ({names}) and the bundle {len(ours)} "
                        f"({', '.join(repr(s['name']) for s in ours)}), named otherwise: is it the same network?")
    for k, (s, (name, shape)) in enumerate(zip(ours, theirs, strict=True)):
        if not _same_shape(list(s["shape"]), shape):
            raise AotcError(f"'{model}' names its {kind} otherwise than the bundle, and its {kind[:-1]} {k} "
                            f"('{name}', {_shape_text(shape)} in {engine}) is not the bundle's ('{s['name']}', "
                            f"{_shape_text(tuple(s['shape']))}): is it the same network?")
    said_here = {} if said is None else said
    said_here.setdefault(str(model), {})[kind] = f"{names} for {', '.join(repr(s['name']) for s in ours)}"
    if said is None:
        say_matched_by_position(said_here)
    return list(range(len(ours)))


def say_matched_by_position(said: dict) -> None:
    """One line on stderr for each model whose inputs or outputs match_ports matched by position."""
    for model, kinds in said.items():
        print(f"aotc: note: '{model}' names its {' and '.join(kinds)} otherwise than the bundle "
              f"({'; '.join(kinds.values())}): matched by position, as their count and shapes agree", file=sys.stderr)
    said.clear()


def _ort_dims(shape) -> Dims:
    return None if shape is None else tuple(d if isinstance(d, int) else None for d in shape)


def _ort_run(sess, meta: dict, inputs: list[np.ndarray], model: Path | str = "the model",
             said: dict | None = None) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """onnxruntime's feeds and outputs (in the bundle's output order) for the bundle's inputs: quantized
    integer inputs and outputs (--quantized-io) meet the model's float ones (aot/npz.py); inputs and
    outputs named otherwise than the bundle's are matched by position (match_ports)."""
    pinned = {s["name"] for s in meta.get("pinned_inputs", [])}
    ins = [i for i in sess.get_inputs() if i.name not in pinned]
    which = match_ports("inputs", meta["inputs"], [(i.name, _ort_dims(i.shape)) for i in ins], "onnxruntime",
                        model, said)
    by_ours = onnx_feeds(meta, inputs, {s["name"] for s, k in zip(meta["inputs"], which, strict=True)
                                        if ins[k].type == "tensor(float)"})
    feeds = {n: x for n, x in by_ours.items() if n in pinned}
    feeds.update({ins[k].name: by_ours[s["name"]] for s, k in zip(meta["inputs"], which, strict=True)})
    outs = sess.get_outputs()
    which = match_ports("outputs", meta["outputs"], [(o.name, _ort_dims(o.shape)) for o in outs], "onnxruntime",
                        model, said)
    got = sess.run([outs[k].name for k in which], feeds)
    refs = bundle_outputs(meta, {s["name"]: y for s, y in zip(meta["outputs"], got, strict=True)})
    return feeds, [refs[s["name"]] for s in meta["outputs"]]


def timed_calls(call, repeat: int) -> tuple[float, float]:
    """`call` after a warm-up: the median latency of `repeat` calls, and the process's CPU time (every
    thread's) over those calls per call, both in microseconds."""
    for _ in range(max(3, repeat // 10)):
        call()
    times = []
    cpu0 = time.process_time_ns()
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        call()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3, (time.process_time_ns() - cpu0) / repeat / 1e3


def time_ort_cpu(sess, feeds: dict[str, np.ndarray], repeat: int) -> tuple[float, float]:
    """onnxruntime's median latency and CPU time per inference (timed_calls), in microseconds."""
    return timed_calls(lambda: sess.run(None, feeds), repeat)


def time_ort(sess, feeds: dict[str, np.ndarray], repeat: int) -> float:
    return time_ort_cpu(sess, feeds, repeat)[0]


def _litert_interpreter(path: Path, threads: int = 1) -> tuple[object, str]:
    """LiteRT's interpreter on `path` and which kernels it runs: its default (the XNNPACK delegate on the ops it
    takes, as an app using LiteRT gets it), or, where the delegate refuses the file (XNNPACK cannot prepare a
    FULLY_CONNECTED of sparse weights in a pruned model), the builtin kernels without it: a model LiteRT runs is
    timed rather than refused."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise AotcError("--tflite needs ai-edge-litert (LiteRT's Python runtime); install it with: "
                        "pip install ai-edge-litert") from None
    tried = []
    for kernels, resolver in (("XNNPACK", OpResolverType.AUTO),
                              ("builtin kernels: XNNPACK refused the file",
                               OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)):
        try:
            interp = Interpreter(model_path=str(path), num_threads=threads, experimental_op_resolver_type=resolver)
            interp.allocate_tensors()
            return interp, kernels
        except (RuntimeError, ValueError) as e:
            tried.append(str(e).strip().splitlines()[-1] if str(e).strip() else str(e))
    raise AotcError(f"LiteRT cannot load '{path}': {tried[-1]} (with XNNPACK: {tried[0]})")


def _to_layout(x: np.ndarray, shape: tuple[int, ...], what: str) -> np.ndarray:
    """x as `shape`: the same shape, or the NCHW <-> NHWC transpose of it (an ONNX export from torch
    beside a .tflite file of the same network); anything else is not the same network's tensor."""
    if x.shape == shape:
        return x
    if x.ndim >= 3:
        to_last = (0, *range(2, x.ndim), 1)
        to_first = (0, x.ndim - 1, *range(1, x.ndim - 1))
        for perm in (to_last, to_first):
            if tuple(x.shape[p] for p in perm) == shape:
                return np.ascontiguousarray(x.transpose(perm))
    raise AotcError(f"{what} has shape {list(x.shape)} in the ONNX model and {list(shape)} in the .tflite file: "
                    "--tflite must be the same network")


class LiteRT:
    """A .tflite model in LiteRT with one thread (or `threads`), fed the inputs the bundle and onnxruntime get
    (matched by position; NCHW inputs transposed to NHWC where the file wants that)."""

    def __init__(self, path: Path, meta: dict, inputs: list[np.ndarray], threads: int = 1):
        if not path.is_file():
            raise AotcError(f"cannot find the --tflite file '{path}'")
        self.interp, self.kernels = _litert_interpreter(path, threads)
        ins = self.interp.get_input_details()
        if len(ins) != len(inputs):
            raise AotcError(f"'{path}' has {len(ins)} inputs and the bundle {len(inputs)}: --tflite must be the "
                            "same network")
        for d, s, x in zip(ins, meta["inputs"], inputs, strict=True):
            x = _to_layout(np.asarray(x), tuple(int(v) for v in d["shape"]), f"input '{s['name']}'")
            if x.dtype != d["dtype"]:
                raise AotcError(f"input '{s['name']}' is {x.dtype} in the ONNX model and "
                                f"{np.dtype(d['dtype'])} in '{path}'")
            self.interp.set_tensor(d["index"], x)

    def outputs(self) -> list[np.ndarray]:
        self.interp.invoke()
        return [self.interp.get_tensor(d["index"]).copy() for d in self.interp.get_output_details()]

    def time(self, repeat: int) -> float:
        return self.time_cpu(repeat)[0]

    def time_cpu(self, repeat: int) -> tuple[float, float]:
        """The median latency and the CPU time per inference (timed_calls), in microseconds."""
        return timed_calls(self.interp.invoke, repeat)


def _openvino():
    try:
        import openvino
    except ImportError:
        raise AotcError("--openvino needs OpenVINO's Python runtime; install it with: pip install openvino") from None
    return openvino


def _openvino_why(e: Exception) -> str:
    """The line of an OpenVINO exception that says what is wrong (its message starts with the source
    lines it passed through: "Exception from src/...")."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("Exception from")]
    return lines[0] if lines else type(e).__name__


def _openvino_dims(port) -> Dims:
    shape = port.get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in shape)


class OpenVINO:
    """A model in OpenVINO's CPU plugin: one thread (INFERENCE_NUM_THREADS=1, or `threads`), the latency hint, f32
    inference precision (a CPU with bf16 or AMX would otherwise run bf16: not the bundle's arithmetic).
    The model is the ONNX file onnxruntime reads or a .tflite file (OpenVINO reads both), fed the inputs
    the bundle gets (onnx_feeds: a --quantized-io bundle's integers dequantized where the model takes
    float), matched to its inputs and outputs by name, else by position (match_ports)."""

    def __init__(self, path: Path, meta: dict, inputs: list[np.ndarray], said: dict | None = None,
                 threads: int = 1):
        ov = _openvino()
        from openvino import properties
        from openvino.properties import hint

        self.path = path
        core = ov.Core()
        try:
            self.compiled = core.compile_model(core.read_model(str(path)), "CPU", {
                properties.inference_num_threads: threads, hint.performance_mode: hint.PerformanceMode.LATENCY,
                hint.inference_precision: ov.Type.f32})
        except RuntimeError as e:
            raise AotcError(f"OpenVINO cannot run '{path}' ({_openvino_why(e)}); drop --openvino to time the "
                            "others") from None
        self.request = self.compiled.create_infer_request()
        pinned = {s["name"] for s in meta.get("pinned_inputs", [])}
        ports = [(k, p) for k, p in enumerate(self.compiled.inputs) if not p.get_names() & pinned]

        def name(port) -> str:
            return port.get_any_name() if port.get_names() else ""

        which = match_ports("inputs", meta["inputs"], [(name(p), _openvino_dims(p)) for _, p in ports], "OpenVINO",
                            path, said)
        floats = {s["name"] for s, k in zip(meta["inputs"], which, strict=True)
                  if ports[k][1].get_element_type() == ov.Type.f32}
        feeds = onnx_feeds(meta, inputs, floats)
        given = [(ports[k][0], s["name"], feeds[s["name"]]) for s, k in zip(meta["inputs"], which, strict=True)]
        given += [(k, n, feeds[n]) for k, p in enumerate(self.compiled.inputs) for n in p.get_names() & pinned]
        for k, label, x in given:
            port = self.compiled.inputs[k]
            try:
                want = port.get_element_type().to_dtype()
            except RuntimeError:
                want = None
            if want is None or np.dtype(want) != np.asarray(x).dtype:
                raise AotcError(f"input '{label}' is {np.asarray(x).dtype} in the bundle and "
                                f"{port.get_element_type().get_type_name()} in OpenVINO's reading of '{path}'")
            self.request.set_input_tensor(k, ov.Tensor(np.ascontiguousarray(x)))
        self.outputs_at = match_ports("outputs", meta["outputs"],
                                      [(name(p), _openvino_dims(p)) for p in self.compiled.outputs],
                                      "OpenVINO", path, said)
        self.meta = meta

    def outputs(self) -> list[np.ndarray]:
        """The outputs in the bundle's order, a float output of a quantized integer one quantized (bundle_outputs)."""
        self.request.infer()
        got = {s["name"]: self.request.get_output_tensor(k).data.copy()
               for s, k in zip(self.meta["outputs"], self.outputs_at, strict=True)}
        refs = bundle_outputs(self.meta, got)
        return [refs[s["name"]] for s in self.meta["outputs"]]

    def time_cpu(self, repeat: int) -> tuple[float, float]:
        """The median latency and the CPU time per inference (timed_calls), in microseconds."""
        return timed_calls(self.request.infer, repeat)


def _tflite_error(outputs: list[np.ndarray], refs: list[np.ndarray]) -> float:
    """LiteRT's outputs against onnxruntime's, by position (a converter may reorder them: then nan)."""
    if len(outputs) != len(refs):
        return float("nan")
    err = 0.0
    for y, r in zip(outputs, refs, strict=True):
        try:
            y = _to_layout(y, tuple(np.shape(r)), "an output")
        except AotcError:
            return float("nan")
        err = max(err, float(np.max(np.abs(y.astype(np.float64) - r), initial=0.0)))
    return err


def ort_call_floor(repeat: int = 200) -> float:
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "floor",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return time_ort(_ort_session(m.SerializeToString()), {"x": np.zeros(1, np.float32)}, repeat)


def count_instructions(out: Path, meta: dict, inputs: list[np.ndarray]) -> tuple[int, int] | None:
    """Instructions of one warm inference, every thread's, and those of the busiest thread: the
    runner under `valgrind --tool=callgrind` doing 1 and then 11 inferences, (count(11) - count(1))
    / 10, per thread, so the first run's one-time work (oneDNN's weight reorders), the runner's I/O
    and the pool's start leave nothing. Run in an environment holding only OMP_NUM_THREADS (the
    bundle's thread count), so the count repeats. None when valgrind is missing or a run fails."""
    if shutil.which("valgrind") is None:
        return None
    runner = runner_path(out, meta).resolve()
    threads = bundle_threads(meta)
    per_thread: list[list[int]] = []
    with tempfile.TemporaryDirectory(prefix="aotc-callgrind-") as tmp:
        in_file = Path(tmp) / "inputs.bin"
        in_file.write_bytes(b"".join(np.asarray(x, order="C").tobytes() for x in inputs))
        for repeat in (0, 10):
            base = Path(tmp) / f"callgrind{repeat}.out"
            # everything collected (callgrind's --toggle-collect state is not per thread, so a pool worker
            # parked in its loop would turn it off for the caller): the difference leaves out the rest
            cmd = ["env", "-i", f"OMP_NUM_THREADS={threads}", shutil.which("valgrind"), "--tool=callgrind",
                   "--separate-threads=yes", f"--callgrind-out-file={base}", str(runner),
                   "inputs.bin", "outputs.bin", str(repeat)]
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                return None
            counts = []
            for f in sorted(Path(tmp).glob(f"{base.name}*")):
                m = re.search(r"^totals:\s*([0-9]+)", f.read_text(errors="replace"), re.MULTILINE)
                counts.append(int(m.group(1)) if m else 0)
            per_thread.append(counts)
    one, eleven = per_thread
    if len(one) != len(eleven) or not one:
        return None
    warm = [(b - a) // 10 for a, b in zip(one, eleven, strict=True)]
    return sum(warm), max(warm)


# onnxruntime's intra-op threads spin on their cores for tens of milliseconds after its last run (no
# effect on onnxruntime's own latency): a --threads bundle run right after took 1.6-2 x as long (issue 24:
# MobileNet-v2 224 at 2 threads 3.7 ms, 6.0 ms straight after an onnxruntime run at its default, 3.76 ms
# 50 ms later). A multi-threaded engine's turn ends with this pause before the other's starts.
ORT_SPIN_SETTLE_S = 0.1


def settle_after_ort(ort_threads: int) -> None:
    """Wait out onnxruntime's spinning threads (ORT_SPIN_SETTLE_S) unless it ran on one thread."""
    if ort_threads != 1:
        time.sleep(ORT_SPIN_SETTLE_S)


def _max_err(outputs: dict[str, np.ndarray], meta: dict, refs: list[np.ndarray], engine: str) -> float:
    """The largest absolute difference of the bundle's outputs from `engine`'s (the bundle's order); an
    output of another size is refused (another network), one of the same size and another shape compared
    element by element (a converter's [12] for [1, 12])."""
    err = 0.0
    for s, r in zip(meta["outputs"], refs, strict=True):
        ours, r = outputs[s["name"]], np.asarray(r)
        if ours.shape != r.shape:
            if ours.size != r.size:
                raise AotcError(f"output '{s['name']}' has shape {list(ours.shape)} in the bundle and "
                                f"{list(r.shape)} in {engine}: is it the same network?")
            r = r.reshape(ours.shape)
        err = max(err, float(np.max(np.abs(ours.astype(np.float64) - r), initial=0.0)))
    return err


def bench_one(out: Path, meta: dict, *, inputs_npz: str | None = None, repeat: int = 50,
              model: str | None = None, instructions: bool = False, rounds: int = 3,
              tflite: str | None = None, ort_threads: int | None = None, openvino: bool = False,
              ref_threads: int = 1) -> BenchRow:
    """The bundle and onnxruntime (and LiteRT on `tflite`, if given, and OpenVINO with `openvino`) timed
    back to back in each of `rounds` rounds, so load that comes and goes on a shared machine hits all alike;
    latencies are medians over rounds, CPU times per inference too. onnxruntime runs on `ort_threads`
    (default: the bundle's thread count; 0: onnxruntime's default). A .tflite model (the bundle's source, or
    `model`) is timed in LiteRT instead, as the only reference (BenchRow.reference), and OpenVINO reads that
    file. LiteRT and OpenVINO run on `ref_threads` (default 1)."""
    source = Path(model or meta.get("source", ""))
    if not source.is_file():
        raise AotcError(f"cannot find the ONNX model for onnxruntime ('{source}'); pass --model")
    from aot.frontend.tflite import is_tflite

    litert_only = is_tflite(source)  # onnxruntime cannot run it; the ONNX the frontend writes is aotc's own reading
    if litert_only and tflite:
        raise AotcError(f"--tflite is for bundles compiled from ONNX: {out} was compiled from '{source}', which "
                        "bench times in LiteRT already (with --model M.onnx, onnxruntime is timed and --tflite "
                        "adds LiteRT)")
    if litert_only and ort_threads is not None:
        raise AotcError(f"--ort-threads: no onnxruntime runs here ({out} was compiled from '{source}', timed in "
                        "LiteRT on one thread; --model M.onnx times onnxruntime instead)")
    if openvino:
        _openvino()  # missing: said before any work
    if inputs_npz:
        inputs = load_inputs(inputs_npz, meta)
    else:
        inputs = seeded_inputs(meta)
    threads = bundle_threads(meta)
    ort_threads = threads if ort_threads is None else ort_threads
    vendor_threads(meta)
    target = bundle_target(meta)
    if target.emulated:
        raise AotcError(f"{out} is built for {target.name}, which runs under an emulator: its timing means "
                        "nothing; benchmark a host build (or run the runner on the real board)")
    said: dict = {}  # the models whose inputs or outputs were matched by position: one line each, below
    sess = None if litert_only else _ort_session(str(source), ort_threads)
    if sess is not None:
        feeds, refs = _ort_run(sess, meta, inputs, source, said)
    lite = LiteRT(source if litert_only else Path(tflite), meta, inputs, ref_threads) if litert_only or tflite \
        else None
    if litert_only:  # the file the bundle was compiled from: its outputs are the reference's
        refs = lite.outputs()
        if len(refs) != len(meta["outputs"]):
            raise AotcError(f"'{source}' has {len(refs)} outputs in LiteRT and the bundle {len(meta['outputs'])}")
    vino = OpenVINO(source, meta, inputs, said, ref_threads) if openvino else None
    say_matched_by_position(said)
    # a short model: more runs per round, until the slowest engine's round lasts MIN_ROUND_S
    probe = max(time_ort(sess, feeds, 5) if sess is not None else lite.time(5),
                vino.time_cpu(5)[0] if vino is not None else 0.0,
                (run_bundle(out, meta, inputs, repeat=5)[1] or 0.0) / 1e3)
    repeat = max(repeat, int(MIN_ROUND_S * 1e6 / max(probe, 1.0)) + 1) if probe * repeat < MIN_ROUND_S * 1e6 \
        else repeat
    ours, theirs, lites, vinos = [], [], [], []  # (latency, CPU time) per round, in us
    ours_cpu: list[float] = []
    for _ in range(max(rounds, 1)):
        if sess is not None:
            settle_after_ort(ort_threads)
        timing: dict[str, float] = {}
        outputs, median_ns = run_bundle(out, meta, inputs, repeat=repeat, timing=timing)
        if median_ns is None:
            raise AotcError(f"the runner of {out} printed no timing")
        ours.append(median_ns / 1e3)
        if "cpu_ns" in timing:  # (a runner built before it reported CPU time has none)
            ours_cpu.append(timing["cpu_ns"] / 1e3)
        if sess is not None:
            theirs.append(time_ort_cpu(sess, feeds, repeat))
        if lite:
            lites.append(lite.time_cpu(repeat))
        if vino is not None:
            vinos.append(vino.time_cpu(repeat))
    err = float("nan") if refs is None else _max_err(outputs, meta, refs, "LiteRT" if litert_only else "onnxruntime")
    mem = meta["memory"]
    counted = count_instructions(out, meta, inputs) if instructions else None
    # the reference's time in each round (onnxruntime's, or LiteRT's when it is the only one)
    refs_us = [t for t, _ in (theirs if sess is not None else lites)]
    row = BenchRow(meta["name"], statistics.median(ours), statistics.median(t for t, _ in theirs) if theirs else None,
                   ort_call_floor() if sess is not None else None, err,
                   mem["arena_bytes"], mem["lower_bound_bytes"], mem.get("tight_bound_bytes", 0),
                   counted[0] if counted else None,
                   [a / b for a, b in zip(ours, refs_us, strict=True)], notes(meta), threads=threads,
                   ort_threads=1 if litert_only else ort_threads,
                   busiest_thread_instructions=counted[1] if counted else None, repeat=repeat,
                   reference="LiteRT" if litert_only else "onnxruntime",
                   bundle_cpu_us=statistics.median(ours_cpu) if ours_cpu else None,
                   ort_cpu_us=statistics.median(c for _, c in theirs) if theirs else None)
    lite_us = [t for t, _ in lites]
    if lite:
        row.tflite_us = statistics.median(lite_us)
        row.tflite_cpu_us = statistics.median(c for _, c in lites)
        row.tflite_round_ratios = [a / b for a, b in zip(ours, lite_us, strict=True)]
        if sess is not None:
            row.tflite_max_abs_err = _tflite_error(lite.outputs(), refs)
            row.best_round_ratios = [a / min(b, c) for a, b, c in zip(ours, refs_us, lite_us, strict=True)]
        else:
            row.best_round_ratios = list(row.tflite_round_ratios)
            row.notes.insert(0, f"reference: LiteRT ({'one thread' if ref_threads == 1 else f'{ref_threads} threads'}, "
                                f"{lite.kernels}) on '{source}', the .tflite file the "
                                "bundle was compiled from, which onnxruntime cannot run: ratio and max abs err "
                                "are against it (--model M.onnx times onnxruntime instead, --tflite then adds LiteRT)")
    engines = {"onnxruntime": refs_us if sess is not None else [], "LiteRT": lite_us}
    if vino is not None:
        vino_us = [t for t, _ in vinos]
        engines["OpenVINO"] = vino_us
        row.openvino_us = statistics.median(vino_us)
        row.openvino_cpu_us = statistics.median(c for _, c in vinos)
        row.openvino_round_ratios = [a / b for a, b in zip(ours, vino_us, strict=True)]
        row.openvino_max_abs_err = _max_err(outputs, meta, vino.outputs(), "OpenVINO")
        row.notes.append(f"OpenVINO {_openvino().__version__.split('-')[0]}: CPU plugin on '{source}', "
                         f"{'one thread' if ref_threads == 1 else f'{ref_threads} threads'} (INFERENCE_NUM_THREADS="
                         f"{ref_threads}), latency hint, f32 inference precision; its max abs err is the bundle's "
                         "outputs against OpenVINO's")
    timed = {name: us for name, us in engines.items() if us}
    if len(timed) > 1:
        row.fastest = min(timed, key=lambda name: statistics.median(timed[name]))
        row.fastest_round_ratios = [a / b for a, b in zip(ours, timed[row.fastest], strict=True)]
    return row


def vendor_threads(meta: dict) -> None:
    """Vendor libraries built on OpenMP (oneDNN) run on the bundle's thread count (1 unless it was
    compiled with --threads N), whatever OMP_NUM_THREADS the shell had: they would otherwise take
    every core while the figures claim one."""
    os.environ["OMP_NUM_THREADS"] = str(bundle_threads(meta))


def notes(meta: dict) -> list[str]:
    """What the figures of a bundle with vendor functions mean: the threads they used, the
    simulators they ran in, and the workspace they add to the arena."""
    functions = meta.get("partition", [])
    out = []
    if functions:
        threads = os.environ.get("OMP_NUM_THREADS", "all")
        out.append(f"threads: aotc's code {bundle_threads(meta)}; vendor libraries OMP_NUM_THREADS={threads}")
    for f in functions:
        if f.get("simulated"):
            cycles = f" ({f['cycles']} device cycles)" if "cycles" in f else ""
            out.append(f"{f['symbol']} runs in {f['compiler']}'s simulator on this host: its share of the time "
                       f"is the simulation's, not the device's{cycles}")
    workspace = [f"{f['symbol']} {f['workspace_bytes']} B" for f in functions if f.get("workspace_bytes")]
    if workspace:
        out.append("vendor workspace (in the arena and the lower bound, not in the tensors' bound): "
                   + ", ".join(workspace))
    return out


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def format_table(rows: list[BenchRow]) -> str:
    """Threads of each side (the bundle's / onnxruntime's intra-op, 'default' = one per core);
    latency and ratio; callgrind instructions of one warm run (M, all threads) and the busiest
    thread's share of them (50 % on 2 threads is a perfect split); memory: the arena (all the RAM the
    activations need: graph I/O is in it) against two bounds (planner docstring): what the tensors
    alone need at the busiest step ("tensors bound", the metadata's tight bound) and that plus each
    step's kernel scratch and vendor workspace ("lower bound": no placement can use less). With
    LiteRT timed too: its latency, bundle / LiteRT, bundle / the faster of the two references (per
    round, median), and LiteRT's outputs against onnxruntime's (a check that the files agree). A row
    whose reference is LiteRT alone (a bundle compiled from a .tflite file) has "-" for onnxruntime,
    its ratio and max abs err against LiteRT, and a note saying so.

    Columns added after those (the ones above keep their places): each engine's CPU time per inference
    (the process's, every thread's, over the timed calls: "-" from a runner built before it reported
    one); with OpenVINO timed (--openvino), its latency, CPU time, bundle / OpenVINO and the bundle's
    outputs against OpenVINO's; with more than one reference timed, the fastest of them (lowest median
    latency: onnxruntime, LiteRT or OpenVINO) and bundle / it (per round, median)."""
    lite = any(r.tflite_us is not None for r in rows)
    vino = any(r.openvino_us is not None for r in rows)
    fastest = any(r.fastest is not None for r in rows)
    cols = ["model", "threads aotc/ort", "bundle us", "onnxruntime us", "ratio", "ort call floor us", "instr (M)",
            "busiest thread", "max abs err", "arena B", "tensors bound B", "lower bound B", "arena/tensors",
            "arena/lower"]
    cols += ["LiteRT us", "ratio LiteRT", "ratio faster", "LiteRT max abs err"] if lite else []
    cols += ["bundle CPU us", "onnxruntime CPU us"] + (["LiteRT CPU us"] if lite else [])
    cols += ["OpenVINO us", "OpenVINO CPU us", "ratio OpenVINO", "OpenVINO max abs err"] if vino else []
    cols += ["fastest ref", "ratio fastest ref"] if fastest else []
    head = "| " + " | ".join(cols) + " |\n" + "|---|---|" + "---:|" * (len(cols) - 2) + "\n"

    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    def err(value: float | None) -> str:
        return "-" if value is None else f"{value:.2e}"

    def litert(r: BenchRow) -> str:
        if not lite:
            return ""
        if r.tflite_us is None:
            return " - | - | - | - |"
        return f" {r.tflite_us:.1f} | {r.tflite_ratio:.2f} | {r.best_ratio:.2f} | {err(r.tflite_max_abs_err)} |"

    def added(r: BenchRow) -> str:
        cells = [_us(r.bundle_cpu_us), _us(r.ort_cpu_us)] + ([_us(r.tflite_cpu_us)] if lite else [])
        if vino:
            cells += [_us(r.openvino_us), _us(r.openvino_cpu_us), ratio(r.openvino_ratio), err(r.openvino_max_abs_err)]
        if fastest:
            cells += [r.fastest or "-", ratio(r.fastest_ratio)]
        return "".join(f" {c} |" for c in cells)

    def busiest(r: BenchRow) -> str:
        if r.instructions is None or r.busiest_thread_instructions is None:
            return "-"
        return f"{r.busiest_thread_instructions / max(r.instructions, 1):.0%}"

    body = "".join(
        f"| {r.model} | {r.threads}/{r.ort_threads or 'default'} | {r.bundle_us:.1f} | {_us(r.ort_us)} | "
        f"{r.ratio:.2f} | {_us(r.ort_floor_us)} | "
        f"{'-' if r.instructions is None else f'{r.instructions / 1e6:.2f}'} | {busiest(r)} | "
        f"{r.max_abs_err:.2e} | {r.arena_bytes} | {r.tight_bound_bytes} | {r.lower_bound_bytes} | "
        f"{r.arena_bytes / r.tight_bound_bytes if r.tight_bound_bytes else 1.0:.3f} | "
        f"{r.arena_bytes / r.lower_bound_bytes if r.lower_bound_bytes else 1.0:.3f} |{litert(r)}{added(r)}\n"
        for r in rows)
    notes = "".join(f"{r.model}: {n}\n" for r in rows for n in r.notes)
    return head + body + notes


# --- Cortex-M boards: instructions under qemu ------------------------------------------------

# Instructions per MAC no fp32 kernel can go below: the M4/M7/M33 issue one VFMA per MAC, the M55's
# Helium four lanes per VFMA. None where no such floor holds (the M3's soft float).
FLOOR_INSTRUCTIONS_PER_MAC = {"mps2-an386": 1.0, "mps2-an505": 1.0, "mps2-an500": 1.0, "mps3-an547": 0.25}


def graph_macs(model: onnx.ModelProto) -> int:
    """Multiply-accumulates of one inference: the Conv, ConvTranspose, Gemm and MatMul nodes, from
    the shapes ONNX's inference gives (the usual way to state a model's work; other ops are not
    counted)."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    shapes: dict[str, tuple[int, ...]] = {t.name: tuple(t.dims) for t in g.initializer}
    for v in [*g.input, *g.value_info, *g.output]:
        dims = v.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes.setdefault(v.name, tuple(d.dim_value for d in dims))

    def size(name: str) -> int:
        return int(np.prod(shapes[name], dtype=np.int64)) if name in shapes else 0

    total = 0
    for n in g.node:
        if not n.output or n.output[0] not in shapes:
            continue
        if n.op_type == "Conv" and n.input[1] in shapes:
            total += size(n.output[0]) * int(np.prod(shapes[n.input[1]][1:], dtype=np.int64))
        elif n.op_type == "ConvTranspose" and n.input[1] in shapes:
            total += size(n.input[0]) * int(np.prod(shapes[n.input[1]][1:], dtype=np.int64))
        elif n.op_type == "Gemm" and n.input[0] in shapes:
            trans_a = next((a.i for a in n.attribute if a.name == "transA"), 0)
            total += size(n.output[0]) * shapes[n.input[0]][0 if trans_a else 1]
        elif n.op_type == "MatMul" and n.input[0] in shapes:
            total += size(n.output[0]) * shapes[n.input[0]][-1]
    return total


def tflite_macs(path: Path) -> int:
    """Multiply-accumulates of one inference of a .tflite file, from its own tensors' shapes: CONV_2D,
    DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED and BATCH_MATMUL, as graph_macs counts their ONNX
    namesakes (an int8 file's ops are aotc's own after import, which graph_macs does not know)."""
    from aot.frontend.tflite.reader import read_tflite

    m = read_tflite(path)
    total = 0
    for op in m.ops:
        shape = lambda k, op=op: m.tensors[op.inputs[k]].shape  # noqa: E731
        out = int(np.prod(m.tensors[op.outputs[0]].shape, dtype=np.int64)) if op.outputs else 0
        if op.op == "CONV_2D":
            total += out * int(np.prod(shape(1)[1:], dtype=np.int64))
        elif op.op == "DEPTHWISE_CONV_2D":
            total += out * int(np.prod(shape(1)[1:3], dtype=np.int64))
        elif op.op == "FULLY_CONNECTED":
            total += out * int(shape(1)[-1])
        elif op.op == "TRANSPOSE_CONV":
            total += int(np.prod(shape(2), dtype=np.int64)) * int(np.prod(shape(1)[:3], dtype=np.int64))
        elif op.op == "BATCH_MATMUL":
            adj_x = op.options is not None and op.options.adjX
            total += out * int(shape(0)[-2 if adj_x else -1])
    return total


def board_counts(out: Path, meta: dict, inputs: list[np.ndarray], plugin: Path,
                 profile: dict[str, int] | None = None, cycle_profile: dict[str, int] | None = None,
                 *, cycles: bool = True, wait_states: dict[str, int] | None = None,
                 outputs: dict[str, np.ndarray] | None = None) -> tuple[int, int | None]:
    """Instructions and estimated cycles of one inference on a bare-metal board: the runner under
    qemu-system-arm with aotc's plugin, doing 1 and then 3 timed inferences after its first;
    (count(3) - count(1)) / 2 leaves out startup, init and the semihosting I/O (the counts grow
    linearly with the runs). Cycles are the plugin's estimate from the core's timing tables, for the
    boards of CYCLE_MODELS (None for the others, or without `cycles`). With `profile` and
    `cycle_profile`, they are filled with one inference's instructions and cycles per function of the
    image, the same difference taken block address by block address. `wait_states`: region -> cycles
    each data access to it costs more in the estimate (an assumption: qemu models no wait states). `outputs` is
    filled with the inference's outputs by name (run_bundle's, from the counted run: no run of its own)."""
    target = bundle_target(meta)
    model = CYCLE_MODELS.get(target.name) if cycles else None
    waits = [f"ws={target.region(r).origin:x}:{target.region(r).size:x}:{n}"
             for r, n in (wait_states or {}).items() if n] if model else []
    runner = runner_path(out, meta).resolve()
    counts: list[tuple[int, int | None]] = []
    per_pc: list[dict[int, tuple[int, int]]] = []
    by_pc = profile is not None or cycle_profile is not None
    with tempfile.TemporaryDirectory(prefix="aotc-insn-") as tmp:
        (Path(tmp) / "inputs.bin").write_bytes(b"".join(np.asarray(x, order="C").tobytes() for x in inputs))
        for repeat in (1, 3):
            pcs = Path(tmp) / f"pcs{repeat}.txt"
            args = [*([f"pcs={pcs}"] if by_pc else []), *([f"cycles={model}"] if model else []), *waits]
            r = run_under_plugin(target, out, runner, plugin, args, repeat, Path(tmp))
            m = re.search(r"insns: (\d+)", r.stderr)
            c = re.search(r"cycles: (\d+)", r.stderr)
            if r.returncode != 0 or not m or (model and not c):
                raise AotcError(f"counting instructions of {out} under qemu failed (exit {r.returncode}): "
                                f"{(r.stderr or r.stdout).strip()[-300:]}")
            counts.append((int(m.group(1)), int(c.group(1)) if c else None))
            if outputs is not None and repeat == 1:
                outputs.update(read_outputs(Path(tmp) / "outputs.bin", meta, r.stdout))
            if by_pc:
                rows = (ln.split() for ln in pcs.read_text().splitlines())
                per_pc.append({int(f[0], 16): (int(f[1]), int(f[2]) if len(f) > 2 else 0) for f in rows})
    if by_pc:
        once = {a: tuple((n - per_pc[0].get(a, (0, 0))[j]) // 2 for j, n in enumerate(v)) for a, v in per_pc[1].items()}
        if profile is not None:
            profile.update(_by_function(runner, {a: v[0] for a, v in once.items()}))
        if cycle_profile is not None and model:
            cycle_profile.update(_by_function(runner, {a: v[1] for a, v in once.items()}))
    (i1, c1), (i3, c3) = counts
    return (i3 - i1) // 2, (c3 - c1) // 2 if c1 is not None and c3 is not None else None


def board_instructions(out: Path, meta: dict, inputs: list[np.ndarray], plugin: Path,
                       profile: dict[str, int] | None = None) -> int:
    """Instructions one inference executes on a bare-metal board (board_counts without the cycle
    estimate); with `profile`, per function of the image."""
    return board_counts(out, meta, inputs, plugin, profile, cycles=False)[0]


def _by_function(runner: Path, per_pc: dict[int, int]) -> dict[str, int]:
    """Counts by block address -> by the function of the image's symbol table holding the address
    (a translated block ends at a branch, so it lies in one function)."""
    import bisect

    from aot.footprint import parse_elf

    funcs = parse_elf(runner.read_bytes()).functions
    starts = [f.addr for f in funcs]
    out: dict[str, int] = {}
    for addr, n in per_pc.items():
        i = bisect.bisect_right(starts, addr) - 1
        name = funcs[i].name if i >= 0 and addr < funcs[i].addr + max(funcs[i].size, 1) else f"0x{addr:x}"
        out[name] = out.get(name, 0) + n
    return {k: v for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v}


@dataclass
class BoardRow:
    """One bundle on a board: instructions of one inference, the estimated cycles where the core's
    timing is modelled (CYCLE_MODELS), and what they mean per MAC."""
    model: str
    target: str
    instructions: int
    macs: int
    max_abs_err: float
    text_bytes: int  # the runner image's .text (code, read-only data, weights in flash)
    profile: dict[str, int] | None = None  # one inference's instructions per function, most first
    cycles: int | None = None  # estimated cycles of one inference (None: no timing model for the core)
    cycle_profile: dict[str, int] | None = None  # estimated cycles per function
    nodes: list[NodeCount] | None = None  # with bench_board's `nodes`: per node, in the order they run

    @property
    def per_mac(self) -> float:
        return self.instructions / self.macs if self.macs else float("nan")

    @property
    def cycles_per_mac(self) -> float | None:
        return self.cycles / self.macs if self.cycles is not None and self.macs else None

    @property
    def floor_share(self) -> float | None:
        """The floor's instructions (FLOOR_INSTRUCTIONS_PER_MAC x MACs) over the count: 1.0 is the limit."""
        floor = FLOOR_INSTRUCTIONS_PER_MAC.get(self.target)
        return floor * self.macs / self.instructions if floor and self.macs and self.instructions else None


def bench_board(out: Path, meta: dict, *, inputs_npz: str | None = None, model: str | None = None,
                plugin_dir: Path | None = None, profile: bool = False,
                wait_states: dict[str, int] | None = None, nodes: bool = False) -> BoardRow:
    """A bare-metal bundle under qemu: instructions (and estimated cycles on an M4, M33, M7 or M55) per inference,
    MACs from the model, and the outputs' error against onnxruntime on the same inputs (LiteRT, for a
    bundle compiled from a .tflite file); with `profile`, also per function. `wait_states`: region ->
    cycles each data access to it adds to the estimate (--wait-state)."""
    import onnx

    from aot.build import build
    from aot.footprint import parse_elf
    from aot.frontend.tflite import is_tflite

    source = Path(model or meta.get("source", ""))
    if not source.is_file():
        raise AotcError(f"cannot find the model for the reference and the MAC count ('{source}'); pass --model")
    target = bundle_target(meta)
    for r in wait_states or {}:
        if r not in {x.name for x in target.regions}:
            raise AotcError(f"--wait-state {r}: board {target.board} has no region '{r}' "
                            f"(its regions: {', '.join(x.name for x in target.regions)})")
    require_tools(target, build=not runner_path(out, meta).is_file(), run=True)
    if not runner_path(out, meta).is_file():
        build(out)
    if inputs_npz:
        inputs = load_inputs(inputs_npz, meta)
    else:
        inputs = seeded_inputs(meta)
    plugin = insn_count_plugin(plugin_dir or out / "aotc-qemu-plugin")
    per_function: dict[str, int] | None = {} if profile else None
    cycles_per_function: dict[str, int] | None = {} if profile and target.name in CYCLE_MODELS else None
    outputs: dict[str, np.ndarray] = {}
    count, cycles = board_counts(out, meta, inputs, plugin, per_function, cycles_per_function,
                                 wait_states=wait_states, outputs=outputs)
    if is_tflite(source):  # the file's own runtime is the reference
        macs = tflite_macs(source)
        try:
            refs = LiteRT(source, meta, inputs).outputs()
        except AotcError as e:
            # the counts do not need the reference: a file LiteRT refuses (TFLM's signal library, which it has no
            # kernels for; TFLM's person_detect, whose per-channel depthwise quantisation it rejects) is still
            # counted, its error column "-"
            refs = None
            if not _tflm_signal_ops(source):
                print(f"aotc: no reference outputs to compare with: {e.one_line()[:400]}", file=sys.stderr)
    else:
        said: dict = {}
        _, refs = _ort_run(_ort_session(str(source)), meta, inputs, source, said)
        say_matched_by_position(said)
        macs = graph_macs(onnx.load(str(source)))
    err = float("nan") if refs is None else max(
        float(np.max(np.abs(outputs[s["name"]].astype(np.float64) - r), initial=0.0))
        for s, r in zip(meta["outputs"], refs, strict=True))
    text = parse_elf(runner_path(out, meta).read_bytes()).sizes()["text"]
    per_node = None
    if nodes:
        from aot.bench_nodes import node_counts

        per_node = node_counts(out, meta, inputs, plugin)
    return BoardRow(meta["name"], target.name, count, macs, err, text, per_function,
                    cycles, cycles_per_function, per_node)


def _tflm_signal_ops(path: Path) -> bool:
    """The .tflite file holds TFLM's signal library ops (which only TFLM runs: tests/frontend/test_tflite_signal.py
    compares those bundles with TFLM's interpreter)."""
    from aot.frontend.tflite.reader import read_tflite

    return any(op.op.startswith("CUSTOM:Signal") for op in read_tflite(path).ops)


def format_board_table(rows: list[BoardRow]) -> str:
    """Instructions of one inference (qemu's count), the estimated cycles on a core whose timing
    aotc models (the M4, M33, M7, M55: "-" on the M3), both per MAC, and the share of the floor (1 instruction
    per MAC on an FPU core, 0.25 with Helium)."""
    head = ("| model | target | instructions | est. cycles | MACs | instr/MAC | cycles/MAC | floor share | "
            "max abs err | image text B |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    body = "".join(
        f"| {r.model} | {r.target} | {r.instructions} | {'-' if r.cycles is None else r.cycles} | {r.macs} | "
        f"{r.per_mac:.2f} | {'-' if r.cycles_per_mac is None else f'{r.cycles_per_mac:.2f}'} | "
        f"{'-' if r.floor_share is None else f'{r.floor_share:.0%}'} | "
        f"{'- (no reference runs it)' if np.isnan(r.max_abs_err) else f'{r.max_abs_err:.2e}'} | {r.text_bytes} |\n"
        for r in rows)
    return head + body


def format_board_profile(row: BoardRow, top: int = 25) -> str:
    """The functions that one inference spends its instructions in, most first: share, count, the
    estimated cycles and cycles per instruction where the core's timing is modelled (which
    functions stall on loads and branches), and instructions per MAC of the whole model (kernels
    the compiler inlined count in their caller)."""
    prof = row.profile or {}
    cyc = getattr(row, "cycle_profile", None)
    lines = ["| function | share | instructions | est. cycles | cycles/instr | per model MAC |",
             "|---|---:|---:|---:|---:|---:|"]

    def cells(n: int, c: int | None) -> str:
        return f"{'-' if c is None else c} | {'-' if c is None or n <= 0 else f'{c / n:.2f}'}"

    for name, n in list(prof.items())[:top]:
        c = cyc.get(name, 0) if cyc is not None else None
        lines.append(f"| {name} | {n / max(row.instructions, 1):.1%} | {n} | {cells(n, c)} | "
                     f"{n / max(row.macs, 1):.3f} |")
    rest = sum(list(prof.values())[top:])
    if rest:
        rest_c = sum(v for k, v in cyc.items() if k not in list(prof)[:top]) if cyc is not None else None
        lines.append(f"| ({len(prof) - top} others) | {rest / max(row.instructions, 1):.1%} | {rest} | "
                     f"{cells(rest, rest_c)} | {rest / max(row.macs, 1):.3f} |")
    return "\n".join(lines) + "\n"
