"""Per-op testing that shares one C build: many one-node models, one shared library.

Each case is an ONNX model plus inputs. All cases are compiled by aotc into bundles
with distinct names, their C is compiled together with the runtime kernels into one
shared library (-std=c99 -Wall -Wextra -Werror), and each case's <name>_run is called
through ctypes and compared with onnxruntime on the same inputs: hundreds of cases
cost one C build. aotc's own op tests use it (tests/opcheck.py re-exports it), and so
does the vendor test kit (aot/testing/kit.py), which is why it ships in the wheel.

    CASES = [op_case("relu_4d", "Relu", {"x": (2, 3, 4, 5)})]
    results = shared_build(CASES)          # once per module (a fixture)
    results.check("relu_4d")               # in each parametrised test

onnxruntime is needed only for the reference outputs (an optional dependency: the
`test` extra). What a test suite tunes comes from the environment, not from the
suite: CC, AOTC_TEST_CFLAGS (extra C flags, e.g. sanitizers), CMAKE_C_COMPILER_LAUNCHER
(a compiler cache, as CMake takes it) and AOTC_TEST_SAMPLE (build one case in k).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
from onnx import helper

from aot.compiler import Options, compile_partitioned, partition_model
from aot.paths import kernel_dirs, kernel_file, runtime_dir
from aot.refs.ort import import_onnxruntime

DEFAULT_OPSET = 13
_NP_TO_ONNX = {np.dtype(k): v for k, v in {
    "float32": onnx.TensorProto.FLOAT, "float64": onnx.TensorProto.DOUBLE, "int64": onnx.TensorProto.INT64,
    "int32": onnx.TensorProto.INT32, "int8": onnx.TensorProto.INT8, "uint8": onnx.TensorProto.UINT8,
    "bool": onnx.TensorProto.BOOL, "int16": onnx.TensorProto.INT16, "uint16": onnx.TensorProto.UINT16,
    "uint32": onnx.TensorProto.UINT32, "uint64": onnx.TensorProto.UINT64, "float16": onnx.TensorProto.FLOAT16,
}.items()}


@dataclass
class Case:
    """One model to compile with aotc, run, and compare with onnxruntime (or `expected`), with the options its
    compile takes: what op_case, node_case and model_case make, shared_build builds and run_kit runs."""

    id: str  # unique in a build: names the case in reports and its C symbols
    model: onnx.ModelProto  # what aotc compiles and onnxruntime runs
    feeds: dict[str, np.ndarray]  # input name -> the values a run feeds it
    atol_scale: float = 1e-4  # DESIGN.md: max abs error <= 1e-4 * max(1, max |ref|)
    vendors: tuple = ()  # vendor names or Vendor objects to partition for
    expected: list[np.ndarray] | None = None  # reference outputs; None: ask onnxruntime
    input_shapes: tuple = ()  # static shapes for inputs the model declares dynamic
    # Options.scratch_floor: by default any scratch a kernel asks for, so the cases run the kernels'
    # fastest paths; 0 (aotc's default, the `tight_*` cases) their paths for no spare memory
    scratch_floor: int = 1 << 30
    # error relative to the output's own scale (max |ref|), not to max(1, max |ref|): for outputs
    # whose scale is not about 1 (issue 15's transformer ops)
    relative: bool = False
    max_dims: tuple = ()  # Options.max_dims: bounds of data-dependent dims (issue 18)
    quantized_io: bool = False  # Options.quantized_io: the feeds are the integers of the inputs' Qs
    fast_math: bool = False  # Options.fast_math: kernels that round more than a direct sum may be taken
    input_values: tuple = ()  # Options.input_values: inputs pinned at compile time (an absent optional: none)
    # integer outputs may differ from the reference by this many steps: a quantized op's 1 LSB, where
    # onnxruntime rounds a float product that an integer kernel computes exactly
    lsb: int = 0
    vendor_options: tuple = ()  # Options.vendor_options: ((vendor, key, value), ...)

    @property
    def ops(self) -> tuple[str, ...]:
        """The ONNX ops of the case's model, each once, in graph order."""
        return tuple(dict.fromkeys(n.op_type for n in self.model.graph.node))


def tensor_type(dtype: np.dtype | str) -> int:
    return _NP_TO_ONNX[np.dtype(dtype)]


def op_case(case_id: str, op: str, inputs: dict[str, tuple | np.ndarray], *,
            consts: dict[str, np.ndarray] | None = None, attrs: dict | None = None,
            opset: int = DEFAULT_OPSET, outputs: int | list[str] = 1, out_dtype: str = "float32",
            positive: bool = False, seed: int = 0, input_order: list[str] | None = None) -> Case:
    """A one-node model. `inputs` are runtime inputs (a shape -> random float32 data, or an array);
    `consts` become initializers; `input_order` interleaves both ("" for an omitted input)."""
    rng = np.random.default_rng(seed)
    consts = consts or {}
    feeds: dict[str, np.ndarray] = {}
    for name, v in inputs.items():
        if isinstance(v, np.ndarray):
            feeds[name] = v
        else:
            data = rng.standard_normal(v).astype(np.float32)
            feeds[name] = np.abs(data) + 0.1 if positive else data
    names = input_order if input_order is not None else list(inputs) + list(consts)
    out_names = outputs if isinstance(outputs, list) else [f"y{k}" if outputs > 1 else "y" for k in range(outputs)]
    node = helper.make_node(op, names, out_names, name=f"{op.lower()}_node", **(attrs or {}))
    graph = helper.make_graph(
        [node], case_id,
        [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in feeds.items()],
        [helper.make_tensor_value_info(n, tensor_type(out_dtype), None) for n in out_names],
        [onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()],
    )
    return model_case(case_id, graph, feeds, opset)


def node_case(case_id: str, op: str, feeds: dict[str, np.ndarray], inputs: list[str], outputs: list[str],
              opset: int, consts: dict[str, np.ndarray] | None = None, out_dtype: str = "float32",
              **attrs: object) -> Case:
    """One node of `op` whose inputs (in order, "" for one left out) are the feeds and consts named, at
    `opset` with IR 10 (the opsets of 23 up need it): for the ops of several inputs and outputs."""
    consts = consts or {}
    node = helper.make_node(op, inputs, outputs, name=f"{op.lower()}_node", **attrs)
    graph = helper.make_graph(
        [node], case_id,
        [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in feeds.items()],
        [helper.make_tensor_value_info(n, tensor_type(out_dtype), None) for n in outputs if n],
        [onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    case = Case(case_id, helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), feeds)
    case.model.ir_version = 10
    return case


def model_case(case_id: str, graph: onnx.GraphProto, feeds: dict[str, np.ndarray], opset: int = DEFAULT_OPSET,
               atol_scale: float = 1e-4) -> Case:
    """A case of a whole graph (several nodes, or one op_case cannot express)."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)  # onnxruntime reads IR <= 10; 8 is safe for opsets <= 18
    return Case(case_id, model, feeds, atol_scale)


F64_TOLERANCE = 1e-12  # float64 cases: error within 1e-12 of max(1, max |ref|), a few thousand ulps of a sum


def as_float64(case: Case, case_id: str = "", onnx_reference: bool | None = None) -> Case:
    """The case in double: every float32 input, output, initializer and value_info of its model (and its
    feeds) made float64, compared to F64_TOLERANCE, so the kernels' float64 paths are tested with the same
    shapes and attributes as their float32 ones. `onnx_reference`: expected outputs from onnx's reference
    evaluator, for the ops onnxruntime's CPU provider has no double kernel of (Conv, Elu, LeakyRelu before
    opset 16, ...); None: that where onnxruntime has none."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    g = model.graph
    double, single = onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT
    for vi in (*g.input, *g.output, *g.value_info):
        if vi.type.tensor_type.elem_type == single:
            vi.type.tensor_type.elem_type = double
    for k, t in enumerate(g.initializer):
        if t.data_type == single:
            g.initializer[k].CopyFrom(onnx.numpy_helper.from_array(
                onnx.numpy_helper.to_array(t).astype(np.float64), t.name))
    g.name = case_id or f"{case.id}_f64"
    feeds = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in case.feeds.items()}
    out = Case(g.name, model, feeds, atol_scale=F64_TOLERANCE, input_shapes=case.input_shapes)
    if onnx_reference is None:
        ort = onnxruntime()
        try:
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            onnx_reference = False
        except ort.capi.onnxruntime_pybind11_state.NotImplemented:
            onnx_reference = True
    if onnx_reference:
        from onnx.reference import ReferenceEvaluator

        out.expected = list(ReferenceEvaluator(model).run(None, feeds))
    return out


def onnxruntime() -> ModuleType:
    """onnxruntime, imported when a reference is first needed: an optional dependency of aotc (the `test`
    extra), so a missing one is one line that says what to install, not a traceback."""
    return import_onnxruntime("aot.testing compares with")


def reference(case: Case) -> list[np.ndarray]:
    """The case's expected outputs: its own, else onnxruntime's (one thread, no graph optimisation)."""
    if case.expected is not None:
        return case.expected
    ort = onnxruntime()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(case.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, case.feeds)


def assert_close(ours: np.ndarray, ref: np.ndarray, what: str, atol_scale: float = 1e-4,
                 relative: bool = False, lsb: int = 0) -> float:
    """DESIGN.md's tolerance (`relative`: atol_scale times max |ref|, the output's own scale; `lsb`: integers
    within that many steps); returns the max abs error."""
    ref = np.asarray(ref)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != reference {ref.shape}"
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} != reference {ref.dtype}"
    if ref.size == 0:
        return 0.0
    if ref.dtype.kind in "fc":
        nan_ok = np.array_equal(np.isnan(ours), np.isnan(ref))
        assert nan_ok, f"{what}: NaNs differ"
        inf = np.isinf(ref)
        assert np.array_equal(ours[inf], ref[inf]) and not np.isinf(ours[~inf]).any(), f"{what}: infinities differ"
        finite = np.isfinite(ref)
        err = float(np.max(np.abs(ours[finite].astype(np.float64) - ref[finite]), initial=0.0))
        scale = float(np.max(np.abs(ref[finite]), initial=0.0))
        tol = atol_scale * (scale if relative else max(1.0, scale))
        assert err <= tol, f"{what}: max abs error {err:.3g} > {tol:.3g}"
        return err
    if lsb:
        err = float(np.max(np.abs(ours.astype(np.int64) - ref.astype(np.int64)), initial=0))
        assert err <= lsb, f"{what}: max error {err:.0f} > {lsb} LSB"
        return err
    assert np.array_equal(ours, ref), f"{what}: values differ"
    return 0.0


class _BuiltSoFar(dict):
    """A SharedBuild's metadata (or errors) by case id: a case not built yet (left out of the sample the build
    began with) is built on its first lookup."""

    def __init__(self, owner: SharedBuild) -> None:
        super().__init__()
        self.owner = owner

    def __missing__(self, case_id: str) -> object:
        if case_id not in self.owner.cases or not self.owner.ensure([case_id]):
            raise KeyError(case_id)
        return self[case_id]


class SharedBuild:
    """Many cases in shared libraries: those of this run's sample (AOTC_TEST_SAMPLE; every case without it)
    in one, built at once; any other case a test asks for in another when it does (`ensure` builds several
    a test needs in one library)."""

    def __init__(self, cases: list[Case], work: Path, build_options: dict,
                 sample: Callable[[str], bool] | None = None, isolate: bool = False) -> None:
        self.cases = {c.id: c for c in cases}
        self.work, self.build_options, self.isolate = work, build_options, isolate
        self.meta: dict[str, dict] = _BuiltSoFar(self)
        self.errors: dict[str, Exception] = {}
        self.libs: dict[str, ctypes.CDLL] = {}  # each built case's library
        self.dirs: dict[str, Path] = {}  # each built case's bundle folder
        # each case's partition: its functions (symbol -> vendor, ONNX nodes) and the vendors' refusals
        self.partitions: dict[str, dict] = {}
        self._attempts = 0
        self._build([c for c in cases if (sample or sampled)(c.id)])

    @property
    def lib(self) -> ctypes.CDLL | None:
        """The library of the cases built first."""
        return next(iter(self.libs.values()), None)

    def lib_for(self, case_id: str) -> ctypes.CDLL:
        """The shared library holding the case, built now if it was not yet."""
        self.meta[case_id]  # (builds it if it is not yet)
        return self.libs[case_id]

    def ensure(self, case_ids: list[str]) -> bool:
        """Build those of the cases not built yet, in one library; whether there was any."""
        rest = [self.cases[i] for i in dict.fromkeys(case_ids) if i not in self.libs and i not in self.errors]
        if rest:
            self._build(rest)
        return bool(rest)

    def _build(self, cases: list[Case]) -> None:
        """One library of `cases`. With `isolate`, a case whose C does not compile is that case's error (and
        the library is built again without it), not the whole build's: the vendor test kit's, whose vendor
        C is under test; the op tests' build stops at the first."""
        index = {case_id: k for k, case_id in enumerate(self.cases)}  # names stay unique across libraries
        while True:
            names = {c.id: f"case{index[c.id]}" for c in cases}
            work = self.work / f"lib{self._attempts}"
            self._attempts += 1
            try:
                lib, meta, errors = _compile_cases(cases, work, list(names.values()), self.partitions,
                                                   **self.build_options)
                break
            except CompileError as e:
                if not self.isolate:
                    raise
                to_blame = {c.id for c in cases if names[c.id] in e.bundles} or {c.id for c in cases}
                self.errors.update({case_id: e for case_id in to_blame})
                cases = [c for c in cases if c.id not in to_blame]
                if not cases:
                    return
        self.errors.update(errors)
        for case_id, m in meta.items():
            dict.__setitem__(self.meta, case_id, m)
            self.libs[case_id], self.dirs[case_id] = lib, work / names[case_id]

    def run(self, case_id: str) -> list[np.ndarray]:
        """The case's outputs, run once in its library on its feeds (built now if it was not yet); its build's
        error is raised again, and a non-zero return from the bundle is an AssertionError."""
        if case_id in self.errors:
            raise self.errors[case_id]
        case, meta = self.cases[case_id], self.meta[case_id]
        if case_id in self.errors:  # (its build just now failed)
            raise self.errors[case_id]
        lib, name = self.libs[case_id], meta["name"]
        ins = [np.asarray(case.feeds[s["name"]], order="C") for s in meta["inputs"]]
        outs = [np.zeros(s["shape"], dtype=s["dtype"]) for s in meta["outputs"]]
        arena = np.zeros(max(meta["memory"]["arena_bytes"], 1) + 64, dtype=np.uint8)
        arena_ptr = (arena.ctypes.data + 63) // 64 * 64
        in_struct = (ctypes.c_void_p * max(len(ins), 1))(*[x.ctypes.data for x in ins])
        # the outputs struct: a pointer per output, then an int64 extent per bounded output (issue 26)
        bounded = [k for k, s in enumerate(meta["outputs"]) if "extent" in s]
        out_struct = (ctypes.c_uint64 * max(len(outs) + len(bounded), 1))(*[y.ctypes.data for y in outs])
        assert getattr(lib, f"{name}_init")(ctypes.c_void_p(arena_ptr)) == 0
        rc = getattr(lib, f"{name}_run")(in_struct, out_struct, ctypes.c_void_p(arena_ptr))
        assert rc == 0, f"{name}_run returned {rc}"
        for j, k in enumerate(bounded):  # the rows written
            axis, extent = meta["outputs"][k]["extent"]["axis"], int(out_struct[len(outs) + j])
            assert 0 <= extent <= outs[k].shape[axis], (extent, outs[k].shape)
            outs[k] = np.take(outs[k], np.arange(extent), axis=axis)
        return outs

    def check(self, case_id: str) -> float:
        """Run the case and compare with its reference (AssertionError beyond tolerance): the max error."""
        case = self.cases[case_id]
        ours = self.run(case_id)
        refs = reference(case)
        return max((assert_close(o, r, f"{case_id} output {k}", case.atol_scale, case.relative, case.lsb)
                    for k, (o, r) in enumerate(zip(ours, refs, strict=True))), default=0.0)


class CompileError(RuntimeError):
    """A C file of a shared build did not compile (or the library did not link: no `source`); `bundles`
    names the case bundles whose C it was."""

    def __init__(self, message: str, source: Path | None = None) -> None:
        super().__init__(message)
        self.source = source
        self.bundles: set[str] = set()


def compiler_launcher() -> list[str]:
    """What goes before a C compile: the compiler cache CMake would take (CMAKE_C_COMPILER_LAUNCHER, which
    tests/conftest.py sets to the test run's ccache), or nothing."""
    launcher = os.environ.get("CMAKE_C_COMPILER_LAUNCHER", "")
    return [launcher] if launcher else []


C_FLAGS = ("-std=c99", "-O1", "-Wall", "-Wextra", "-Werror")  # every shared build's, as strict as the bundles'


def _test_cflags() -> list[str]:
    return os.environ.get("AOTC_TEST_CFLAGS", "").split()  # e.g. sanitizers (tests/kernels/test_sanitized_ops.py)


def compile_c(sources: dict[Path, list[Path]], include_dirs: list[Path], output: Path, *, shared: bool,
              extra_flags: tuple[str, ...] = (), libs: tuple[str, ...] = ()) -> None:
    """Compile C (and .S) files with the project's warning flags, two at a time. `sources` maps each file to
    the include folders of its own bundle: every folder on every command line made each #include search
    hundreds of folders, and test_ops_index's build took 3x as long."""
    cc = os.environ.get("CC", "cc")
    flags = [*C_FLAGS, "-fPIC", *extra_flags, *_test_cflags()]
    # the cache for the runtime's kernel files only, which every build compiles alike: a case's own C is new
    # every run, and a miss costs about twice the compile of a small file
    runtime = runtime_dir()
    common = [f"-I{d}" for d in include_dirs]

    def one(src: Path) -> Path:
        obj = output.parent / (src.parent.name + "_" + src.stem + ".o")
        own = [f"-Wa,-I{d}" if src.suffix == ".S" else f"-I{d}" for d in sources[src]]
        launcher = compiler_launcher() if src.suffix == ".c" and src.is_relative_to(runtime) else []
        r = subprocess.run([*launcher, cc, *flags, *own, *common, "-c", str(src), "-o", str(obj)], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise CompileError(f"compiling {src} failed:\n{r.stderr[-4000:]}", src)
        return obj

    with ThreadPoolExecutor(max_workers=2) as pool:
        objs = list(pool.map(one, sources))
    link = [cc, *extra_flags, *(["-shared"] if shared else []), *map(str, objs), "-o", str(output), *libs, "-lm"]
    r = subprocess.run(link, capture_output=True, text=True)
    if r.returncode != 0:
        raise CompileError(f"linking {output} failed:\n{r.stderr[-4000:]}")


def sampled(case_id: str) -> bool:
    """Whether a case is in the sample when AOTC_TEST_SAMPLE=k asks for about one case in k (a fixed choice by
    the case's name, so every run takes the same ones): the fast tier's op cases (tests/conftest.py) and the
    sanitizer reruns' (tests/kernels/test_sanitized_ops.py; every case under --tier all). Its tests parametrized
    by case_id are deselected; a case another test asks for is built then (SharedBuild). A case leave_out names
    is not in the sample."""
    k = int(os.environ.get("AOTC_TEST_SAMPLE", "1"))
    return case_id not in _LEFT_OUT and (k <= 1 or zlib.crc32(case_id.encode()) % k == 0)


_LEFT_OUT: set[str] = set()


def leave_out(case_ids: Iterable[str]) -> None:
    """Leave these cases out of the sample: no test this run runs is parametrized by them (a test runner's
    selection, e.g. tests/conftest.py's, where CI's full tier deselects the tests that passed in its fast tier).
    The shared builds then do not compile them; a test that asks for one builds it then."""
    _LEFT_OUT.update(case_ids)


def shared_build(cases: list[Case], workdir: Path | None = None, *, vendor_include_dirs: tuple[Path, ...] = (),
                 libs: tuple[str, ...] = (), extra_flags: tuple[str, ...] = (),
                 vendor_cmake: Callable[[], Iterable[str]] | None = None,
                 sample: Callable[[str], bool] | None = None, isolate: bool = False,
                 only: Callable[[Case, dict], bool] | None = None) -> SharedBuild:
    """Compile every case with aotc, then all their C into one shared library (`vendor_include_dirs`
    and `libs`: what a vendor's library needs, e.g. oneDNN's headers and -ldnnl; `extra_flags`, e.g.
    -march=native for the kernels' paths that need the CPU's extensions, as bundles build).
    `vendor_cmake`: the vendors' CMake lines (Artifact.cmake), asked for once the cases are compiled;
    when it gives any, CMake builds the library with them, as a bundle's build would, instead of the
    flags above. `sample` (default: AOTC_TEST_SAMPLE's, the fast tier's `sampled`) picks the cases built
    at once; SharedBuild builds the others when asked. `isolate`: a case whose C fails to compile is that
    case's error, not the build's. `only(case, partition)`: build only the cases it is true of, given their
    partition (partition_summary): the vendor test kit runs only what the vendor claimed."""
    work = Path(workdir or tempfile.mkdtemp(prefix="aotc-ops-"))
    if workdir is None:  # removed when the test process ends: a suite run left ~70 MB a module in /tmp
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    options = dict(vendor_include_dirs=vendor_include_dirs, libs=libs, extra_flags=extra_flags,
                   vendor_cmake=vendor_cmake, only=only)
    return SharedBuild(cases, work, options, sample=sample, isolate=isolate)


def partition_summary(parted: object) -> dict:
    """What a case's partition says about its vendors (a Partitioned, after partition_model): each function's
    vendor and the ONNX nodes it computes, and why each vendor refused the nodes it did not take."""
    functions = {sym: {"vendor": fn.compiler, "nodes": list(dict.fromkeys(s for n in fn.graph.nodes
                                                                          for s in n.sources()))}
                 for sym, fn in parted.graph.functions.items()}
    return {"functions": functions, "refusals": {n: dict(why) for n, why in parted.refusals.items()}}


def _compile_cases(cases: list[Case], work: Path, names: list[str], partitions: dict[str, dict], *,
                   vendor_include_dirs: tuple[Path, ...], libs: tuple[str, ...], extra_flags: tuple[str, ...],
                   vendor_cmake: Callable[[], Iterable[str]] | None = None,
                   only: Callable[[Case, dict], bool] | None = None
                   ) -> tuple[ctypes.CDLL | None, dict[str, dict], dict[str, Exception]]:
    """The cases' bundles (named `names`) in one shared library under `work`: the library, each compiled
    case's metadata, and the exception of each case aotc could not compile (each case's partition goes
    into `partitions`). A C file that fails raises CompileError naming the bundles it came from."""
    meta: dict[str, dict] = {}
    errors: dict[str, Exception] = {}
    sources: dict[Path, list[Path]] = {}  # each file -> its own bundle's include folders
    vendor_seen: dict[tuple, Path] = {}  # each vendor file's (name, content) -> the path compiled
    owners: dict[Path, set[str]] = {}  # each compiled file -> the bundles it stands for
    kernel_sources: dict[str, None] = {}  # the runtime files the cases' bundles ship, in order
    for name, case in zip(names, cases, strict=True):
        try:
            options = Options(name=name, vendors=case.vendors, input_shapes=case.input_shapes,
                              scratch_floor=case.scratch_floor, max_dims=case.max_dims,
                              quantized_io=case.quantized_io, fast_math=case.fast_math,
                              input_values=case.input_values, vendor_options=case.vendor_options)
            source = f"{case.id}.onnx"
            parted = partition_model(case.model, options, source, keep_onnx=False)  # (compile_model's steps)
            partitions[case.id] = partition_summary(parted)
            if only is not None and not only(case, partitions[case.id]):
                continue
            bundle = compile_partitioned(parted, options, source)
        except Exception as e:  # reported by that case's test, not by the whole module
            errors[case.id] = e
            continue
        d = work / name
        bundle.write(d)
        meta[case.id] = bundle.metadata
        own = [d / "include", *dict.fromkeys((d / rel).parent for rel in bundle.files if rel.startswith("vendor/"))]
        sources[d / "src" / f"{name}.c"] = own
        owners[d / "src" / f"{name}.c"] = {name}
        if (d / "src" / f"{name}_weights.S").exists():
            sources[d / "src" / f"{name}_weights.S"] = [d / "src"]  # its .incbin of the weights blob
            owners[d / "src" / f"{name}_weights.S"] = {name}
        for rel in bundle.files:  # vendor C: identical runtime files across cases are compiled once
            if rel.startswith("runtime/") and rel.endswith(".c"):
                kernel_sources[Path(rel).name] = None
            if rel.startswith("vendor/") and rel.endswith(".c"):
                key = (Path(rel).name, bundle.files[rel])
                if key not in vendor_seen:
                    vendor_seen[key] = d / rel
                    sources[d / rel] = own
                owners.setdefault(vendor_seen[key], set()).add(name)
    if not meta:
        return None, meta, errors
    rt = runtime_dir()
    for f in kernel_sources:  # not the reference kernels: tests/kernels_c/test_kernels_c.py
        sources[kernel_file(f)] = []
    lib = work / "libcases.so"
    include_dirs = [rt / "include", *kernel_dirs(), *vendor_include_dirs]
    cmake_lines = list(dict.fromkeys(vendor_cmake())) if vendor_cmake else []
    try:
        if cmake_lines:
            cmake_library(sources, include_dirs, lib, cmake_lines, libs=libs, extra_flags=extra_flags)
        else:
            compile_c(sources, include_dirs, lib, shared=True, libs=libs, extra_flags=extra_flags)
    except CompileError as e:
        e.bundles = owners.get(e.source, set()) if e.source else set()
        raise
    return ctypes.CDLL(str(lib)), meta, errors


def _cmake_list(items: Iterable[object]) -> str:
    return " ".join('"' + str(i).replace("\\", "/").replace('"', '\\"') + '"' for i in items)


def cmake_library(sources: dict[Path, list[Path]], include_dirs: list[Path], output: Path, cmake_lines: list[str],
                  *, libs: tuple[str, ...] = (), extra_flags: tuple[str, ...] = ()) -> None:
    """compile_c's shared library, built by CMake with the vendors' CMake lines (Artifact.cmake, which
    `find_package` their libraries and link them to `${AOTC_TARGET}`), as a bundle's build takes them:
    what a vendor's C needs (headers, libraries) comes from the vendor, not from the caller."""
    from aot.build import cmake_exe, ninja_exe

    src_dir, build_dir = output.parent / "cmake", output.parent / "cmake-build"
    src_dir.mkdir(parents=True, exist_ok=True)
    flags = [*C_FLAGS, *extra_flags, *_test_cflags()]
    lines = ["cmake_minimum_required(VERSION 3.20)", "project(aotc_cases C ASM)",
             f"add_library(cases SHARED {_cmake_list(sources)})",
             f"set_target_properties(cases PROPERTIES LIBRARY_OUTPUT_DIRECTORY {_cmake_list([output.parent])})",
             f"target_compile_options(cases PRIVATE $<$<COMPILE_LANGUAGE:C>:{';'.join(flags)}>)",
             f"target_include_directories(cases PRIVATE {_cmake_list(include_dirs)})",
             f"target_link_libraries(cases PRIVATE {_cmake_list([*libs, 'm'])})"]
    for src, own in sources.items():
        if own:
            key, values = ("COMPILE_OPTIONS", [f"-Wa,-I{d}" for d in own]) if src.suffix == ".S" else \
                ("INCLUDE_DIRECTORIES", own)
            lines.append(f"set_source_files_properties({_cmake_list([src])} PROPERTIES {key} "
                         f"\"{';'.join(map(str, values))}\")")
    lines += ["set(AOTC_TARGET cases)", *cmake_lines]
    (src_dir / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    prefixes = ";".join(dict.fromkeys([sys.prefix, sysconfig.get_paths()["data"]]))  # where pip puts vendors' libs
    ninja = ninja_exe()
    configure = [cmake_exe(), "-S", str(src_dir), "-B", str(build_dir), f"-DCMAKE_PREFIX_PATH={prefixes}",
                 *(["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else [])]
    r = subprocess.run(configure, capture_output=True, text=True)
    if r.returncode != 0:
        raise CompileError(f"configuring {src_dir} with the vendors' CMake lines failed:\n"
                           f"{(r.stdout + r.stderr)[-4000:]}")
    r = subprocess.run([cmake_exe(), "--build", str(build_dir), "-j", "2"], capture_output=True, text=True)
    if r.returncode != 0:
        out = r.stdout + r.stderr
        first = out.split("FAILED:", 1)[-1].split("\n", 1)[0] if "FAILED:" in out else ""  # Ninja's object
        failed = [src for src in sources if first and src.as_posix().lstrip("/") + ".o" in first]
        raise CompileError(f"building {output} with CMake failed:\n{out[-4000:]}", failed[0] if failed else None)
