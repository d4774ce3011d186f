"""Mutated models fed to `aotc`: every case compiles, or is refused with exit 2 and one line.

Seeded mutations of the test models: their bytes (flips, truncation, splices), proto fields
(element and data types, attributes, opset, domains, op types, initializer data), dimensions
(0, negative, 2^31, 2^40 ...), names (C keywords and macros, `*/`, newlines, quotes, duplicates,
dangling references) and structure (nodes dropped, repeated, reordered or rewired, outputs added
or removed, value_info that lies). For each case:

- exit 0: the bundle's C (the model and the runner) compiles with -Wall -Wextra -Werror;
- exit 2: exactly one line on stderr, `aotc: error: ...`, no traceback, OUT as it was;
- anything else (exit 3 "internal error", a traceback, stray output, a hang) fails the test.

The default run is bounded to about a minute; `--tier all` runs a longer one in which every accepted
case is also built with CMake and its runner run (self-test inputs).

    python3 tests/cli/test_fuzz_inputs.py --seed 7 --cases 300     # explore; prints the failing cases
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import zoo  # noqa: E402

DEFAULT_SECONDS = 45.0  # the default run stops starting cases after this long
SLOW_SECONDS = 900.0
CASE_TIMEOUT_S = 60  # one case (compile) longer than this is a failure: a hang

NASTY_NAMES = [
    "NULL", "int", "static", "restrict", "EOF", "SIZE_MAX", "errno", "stdin", "main", "class", "_Bool", "I",
    "a*/b", "/*", "line\nbreak", "cr\rlf", 'say "hi"', "back\\slash", "100%s%n", "??/", "tab\tx", "", " ",
    "x.y", "x_y", "X_Y", "t_x", "w_x", "aotc_run", "DLTensor", "9lives", "é", "\u2028", "\x01ctl", "a" * 300,
]
DIMS = [0, 1, 2, 3, 5, 7, 2**31, 2**31 - 1, 2**40, 2**62, -1, -7]
INTS = [-(2**63), -(2**31), -2, -1, 0, 1, 2, 3, 4, 7, 2**31, 2**63 - 1]
FLOATS = [float("nan"), float("inf"), -float("inf"), -1e30, -1.0, 0.0, 1e-45, 0.5, 1e30]
OPS = ["Relu", "Add", "Conv", "MatMul", "Reshape", "Det", "NoSuchOp", "Identity", "Shape", "Cast", "Transpose",
       "Softmax", "Concat", "Expand", "ConstantOfShape", "Range", "Tile", "Gather", "Div", "Gemm", "MaxPool"]


# mutation -> weight: most keep the model valid ONNX (and so reach past the checker)
MUTATIONS = {
    "dim": 6, "init_dims": 2, "raw_data": 2, "elem_type": 3, "init_dtype": 2, "attr": 6, "opset": 1,
    "ir_version": 1, "domain": 1, "op_type": 2, "rename": 8, "rename_node": 4, "rename_dangling": 1,
    "dup_name": 1, "drop_node": 1, "dup_node": 1, "swap_nodes": 1, "rewire": 2, "drop_init": 1, "drop_output": 1,
    "add_output": 3, "output_is_input": 1, "value_info": 3, "graph_name": 1,
}


# --- the models ----------------------------------------------------------------------------------
def folding_model() -> onnx.ModelProto:
    """Conv, a shape computed at run time (Shape -> Gather -> Concat -> Reshape), constants that fold
    (ConstantOfShape, Expand, Range, Cast, a Div by zero), Gemm and Softmax: every frontend path."""
    rng = np.random.default_rng(1)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.w"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "conv.b"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
        numpy_helper.from_array(np.array([0], np.int64), "axes0"),
        numpy_helper.from_array(np.array([1, 10], np.int64), "cshape"),
        numpy_helper.from_array(rng.standard_normal((144, 10)).astype(np.float32), "fc.w"),
        numpy_helper.from_array(np.array([1.0, 0.0], np.float32), "num"),
        numpy_helper.from_array(np.array([0.0, 0.0], np.float32), "den"),
        numpy_helper.from_array(np.array(0, np.int64), "r0"),
        numpy_helper.from_array(np.array(10, np.int64), "r1"),
        numpy_helper.from_array(np.array(1, np.int64), "r2"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv", pads=[0, 0, 0, 0]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Shape", ["r"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["flat_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["r", "flat_shape"], ["flat"], name="reshape"),
        helper.make_node("MatMul", ["flat", "fc.w"], ["mm"], name="fc"),
        helper.make_node("Range", ["r0", "r1", "r2"], ["rng"], name="range"),
        helper.make_node("Cast", ["rng"], ["rngf"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("ConstantOfShape", ["cshape"], ["ones"], name="cos",
                         value=numpy_helper.from_array(np.array([0.5], np.float32))),
        helper.make_node("Div", ["num", "den"], ["inf"], name="div"),
        helper.make_node("ReduceMin", ["inf"], ["infmin"], name="rmin", keepdims=0),
        helper.make_node("Mul", ["ones", "infmin"], ["scaled"], name="scale"),
        helper.make_node("Add", ["mm", "rngf"], ["biased"], name="bias"),
        helper.make_node("Min", ["biased", "scaled"], ["clipped"], name="min"),
        helper.make_node("Softmax", ["clipped"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(nodes, "folding", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


BASE_MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp": zoo.mlp, "lenet": zoo.lenet, "shufflenet": zoo.shufflenet, "folding": folding_model,
}


# --- mutations -----------------------------------------------------------------------------------------
def _value_infos(m: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    return list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info)


def _tensor_names(m: onnx.ModelProto) -> list[str]:
    g = m.graph
    names = [vi.name for vi in g.input] + [i.name for i in g.initializer] + [o for n in g.node for o in n.output]
    return [n for n in dict.fromkeys(names) if n]


def _rename(m: onnx.ModelProto, old: str, new: str, everywhere: bool, rng: random.Random) -> None:
    refs: list[tuple[object, str, int]] = []
    g = m.graph
    for n in g.node:
        refs += [(n.input, "i", k) for k, x in enumerate(n.input) if x == old]
        refs += [(n.output, "o", k) for k, x in enumerate(n.output) if x == old]
    for coll in (g.input, g.output, g.value_info, g.initializer):
        refs += [(coll, "vi", k) for k, x in enumerate(coll) if x.name == old]
    if not refs:
        return
    for seq, kind, k in (refs if everywhere else [rng.choice(refs)]):
        if kind == "vi":
            seq[k].name = new
        else:
            seq[k] = new


def _mut_bytes(data: bytes, rng: random.Random, names: list[str]) -> bytes:
    b = bytearray(data)
    how = rng.choice(["flip", "truncate", "splice", "zero", "utf8"])
    name = rng.choice(names).encode()
    if how == "utf8" and name and name in data:  # a name no longer valid UTF-8
        at = data.index(name) + rng.randrange(len(name))
        b[at] = rng.choice([0x80, 0xC3, 0xE1, 0xFF])
    elif how == "flip":
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del b[rng.randrange(len(b)):]
    elif how == "splice":
        at, length = rng.randrange(len(b)), rng.randint(1, 64)
        src = rng.randrange(len(b))
        b[at:at] = b[src:src + length] if rng.random() < 0.5 else bytes(rng.randrange(256) for _ in range(length))
    else:
        at = rng.randrange(len(b))
        b[at:at + rng.randint(1, 16)] = bytes(rng.randint(1, 16))
    return bytes(b)


def _mutate(m: onnx.ModelProto, rng: random.Random) -> str:
    """One mutation of `m` in place; returns what it did."""
    g = m.graph
    kind = rng.choices(*zip(*MUTATIONS.items(), strict=True))[0]
    if kind == "dim":
        vis = [vi for vi in list(g.input) + list(g.output) if vi.type.tensor_type.HasField("shape")]
        if not vis:
            return "dim: none"
        vi = rng.choice(vis)
        dims = vi.type.tensor_type.shape.dim
        if not dims or rng.random() < 0.15:
            vi.type.tensor_type.shape.dim.add().dim_value = rng.choice(DIMS[:6])
            return f"dim: {vi.name} gains a dim"
        d = rng.choice(dims)
        if rng.random() < 0.2:
            d.dim_param = rng.choice(["batch", "N", ""])
            return f"dim: {vi.name} dim_param"
        d.dim_value = rng.choice(DIMS)
        return f"dim: {vi.name} -> {d.dim_value}"
    if kind == "init_dims" and g.initializer:
        t = rng.choice(g.initializer)
        if t.dims and rng.random() < 0.7:
            t.dims[rng.randrange(len(t.dims))] = rng.choice(DIMS)
        elif t.dims and rng.random() < 0.5:
            del t.dims[-1]
        else:
            t.dims.append(rng.choice([1, 2, 3]))
        return f"init_dims: {t.name} {list(t.dims)}"
    if kind == "raw_data":
        ts = [t for t in g.initializer if t.HasField("raw_data")]
        if not ts:
            return "raw_data: none"
        t = rng.choice(ts)
        k = rng.choice([1, 3, 4, 8, 64])
        t.raw_data = t.raw_data + bytes(k) if rng.random() < 0.6 else t.raw_data[:-k]
        return f"raw_data: {t.name} {len(t.raw_data)} bytes"
    if kind == "elem_type":
        vi = rng.choice(_value_infos(m))
        vi.type.tensor_type.elem_type = rng.choice([*range(0, 27), 77, 1000])
        return f"elem_type: {vi.name} -> {vi.type.tensor_type.elem_type}"
    if kind == "init_dtype" and g.initializer:
        t = rng.choice(g.initializer)
        t.data_type = rng.choice([*range(0, 27), 77])
        return f"init_dtype: {t.name} -> {t.data_type}"
    if kind == "attr":
        nodes = [n for n in g.node if n.attribute]
        if not nodes:
            return "attr: none"
        n = rng.choice(nodes)
        a = rng.choice(n.attribute)
        r = rng.random()
        if r < 0.15:
            n.attribute.remove(a)
            return f"attr: {n.name}.{a.name} removed"
        if a.type == onnx.AttributeProto.INT:
            a.i = rng.choice(INTS)
        elif a.type == onnx.AttributeProto.INTS and len(a.ints):
            a.ints[rng.randrange(len(a.ints))] = rng.choice(INTS)
        elif a.type == onnx.AttributeProto.FLOAT:
            a.f = rng.choice(FLOATS)
        elif a.type == onnx.AttributeProto.TENSOR:
            a.t.dims.append(rng.choice(DIMS))
        else:
            a.name = rng.choice(["bogus", "axis", "perm"])
        return f"attr: {n.name}.{a.name}"
    if kind == "opset":
        m.opset_import[0].version = rng.choice([1, 6, 7, 9, 11, 13, 17, 18, 21, 22, 25, 26, 100])
        return f"opset: {m.opset_import[0].version}"
    if kind == "ir_version":
        m.ir_version = rng.choice([0, 1, 3, 7, 8, 10, 11, 99])
        return f"ir_version: {m.ir_version}"
    if kind == "domain" and g.node:
        n = rng.choice(g.node)
        n.domain = rng.choice(["com.microsoft", "ai.onnx.ml", "foo", "aotc.cref"])
        return f"domain: {n.name} -> {n.domain}"
    if kind == "op_type" and g.node:
        n = rng.choice(g.node)
        n.op_type = rng.choice(OPS)
        return f"op_type: {n.name} -> {n.op_type}"
    if kind in ("rename", "rename_dangling"):
        old, new = rng.choice(_tensor_names(m)), rng.choice(NASTY_NAMES)
        _rename(m, old, new, kind == "rename", rng)
        return f"{kind}: {old!r} -> {new!r}"
    if kind == "rename_node" and g.node:
        n = rng.choice(g.node)
        n.name = rng.choice(NASTY_NAMES)
        return f"rename_node: {n.name!r}"
    if kind == "dup_name":
        names = _tensor_names(m)
        a, b = rng.choice(names), rng.choice(names)
        _rename(m, a, b, True, rng)
        return f"dup_name: {a!r} -> {b!r}"
    if kind == "drop_node" and g.node:
        k = rng.randrange(len(g.node))
        del g.node[k]
        return f"drop_node: {k}"
    if kind == "dup_node" and g.node:
        n = copy.deepcopy(rng.choice(g.node))
        g.node.insert(rng.randrange(len(g.node) + 1), n)
        return f"dup_node: {n.name}"
    if kind == "swap_nodes" and len(g.node) > 1:
        i, j = rng.sample(range(len(g.node)), 2)
        a, b = copy.deepcopy(g.node[i]), copy.deepcopy(g.node[j])
        g.node[i].CopyFrom(b)
        g.node[j].CopyFrom(a)
        return f"swap_nodes: {i} {j}"
    if kind == "rewire" and g.node:
        n = rng.choice(g.node)
        if n.input:
            k = rng.randrange(len(n.input))
            n.input[k] = rng.choice([*_tensor_names(m), ""])
            return f"rewire: {n.name}.input[{k}] = {n.input[k]!r}"
    if kind == "drop_init" and g.initializer:
        t = g.initializer.pop(rng.randrange(len(g.initializer)))
        return f"drop_init: {t.name}"
    if kind == "drop_output" and g.output:
        o = g.output.pop(rng.randrange(len(g.output)))
        return f"drop_output: {o.name}"
    if kind == "add_output":
        name = rng.choice(_tensor_names(m))
        elem = rng.choice([0, TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32])
        shape = rng.choice([None, [], [1, 10], [2**31, 12], ["n", 3]])
        g.output.append(helper.make_tensor_value_info(name, elem, shape) if elem else helper.make_value_info(
            name, onnx.TypeProto()))
        return f"add_output: {name!r} {elem} {shape}"
    if kind == "output_is_input" and g.output and g.input:
        g.output[rng.randrange(len(g.output))].name = rng.choice(g.input).name
        return "output_is_input"
    if kind == "value_info":
        name = rng.choice(_tensor_names(m))
        g.value_info.append(helper.make_tensor_value_info(name, rng.choice([1, 6, 7]),
                                                          rng.choice([[3, 3], [1], [2**40], [1, 4, 6, 6]])))
        return f"value_info: {name!r}"
    if kind == "graph_name":
        g.name = rng.choice(NASTY_NAMES)
        return "graph_name"
    return f"{kind}: nothing"


@dataclass
class Case:
    label: str
    data: bytes
    args: tuple[str, ...] = ()


def cases(seed: int) -> Iterator[Case]:
    """An endless seeded stream of mutated models (one to three mutations each)."""
    rng = random.Random(seed)
    bases = {name: build() for name, build in BASE_MODELS.items()}
    serialized = {name: m.SerializeToString() for name, m in bases.items()}
    k = 0
    while True:
        k += 1
        base = rng.choice(sorted(bases))
        if rng.random() < 0.15:
            yield Case(f"#{k} {base} bytes", _mut_bytes(serialized[base], rng, _tensor_names(bases[base])))
            continue
        m = copy.deepcopy(bases[base])
        what = [_mutate(m, rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        args: tuple[str, ...] = ()
        if rng.random() < 0.05:
            args = ("--name", rng.choice(NASTY_NAMES[:20]) or "x")
        yield Case(f"#{k} {base}: " + "; ".join(what) + (f" {args}" if args else ""), m.SerializeToString(), args)


# --- running a case ----------------------------------------------------------------------------------------
def snapshot(path: Path) -> list[tuple[str, bytes]]:
    return sorted((p.relative_to(path).as_posix(), p.read_bytes() if p.is_file() else b"") for p in path.rglob("*"))


@contextlib.contextmanager
def _fd_capture(tmp: Path) -> Iterator[dict[str, str]]:
    """stdout and stderr at the file-descriptor level (what C extensions print too)."""
    out: dict[str, str] = {}
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    files = {fd: open(tmp / f"fd{fd}.txt", "w+b") for fd in (1, 2)}  # noqa: SIM115
    streams = sys.stdout, sys.stderr
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        for fd, f in files.items():
            os.dup2(f.fileno(), fd)
        # Python's own streams too (pytest points them elsewhere than fd 1 and 2)
        sys.stdout, sys.stderr = (open(fd, "w", closefd=False, errors="backslashreplace")  # noqa: SIM115
                                  for fd in (1, 2))
        yield out
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.close()  # flushes; fd 1 and 2 stay open
        sys.stdout, sys.stderr = streams
        for fd, f in files.items():
            os.dup2(saved[fd], fd)
            os.close(saved[fd])
            f.seek(0)
            out["stdout" if fd == 1 else "stderr"] = f.read().decode("utf-8", "replace")
            f.close()


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def _new_bundle(out: Path) -> bool:
    """OUT holds a bundle this compile wrote, not the earlier output run_case put there."""
    return "name" in json.loads((out / "bundle" / "metadata.json").read_text())


def run_case(case: Case, work: Path, configure: bool = False, suffix: str = ".onnx") -> tuple[str | None, Path]:
    """Compile one case in this process; None when it held to the contract, else what went wrong.
    `suffix`: the model file's (test_fuzz_tflite.py runs .tflite cases through here too)."""
    from aot import cli

    work.mkdir(parents=True, exist_ok=True)
    model = work / f"model{suffix}"
    model.write_bytes(case.data)
    out = work / "out"
    (out / "bundle").mkdir(parents=True, exist_ok=True)
    (out / "bundle" / "keep.txt").write_text("previous build")
    (out / "bundle" / "metadata.json").write_text('{"previous": true}')  # an earlier aotc output: replaceable
    before = snapshot(out)
    argv = [str(model), "-o", str(out), *case.args, *(() if configure else ("--no-configure",))]
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_TIMEOUT_S)
    try:
        with _fd_capture(work) as io:
            try:
                rc = cli.main(argv)
            except SystemExit as e:  # argparse
                rc = e.code
    except _Timeout:
        return f"no answer within {CASE_TIMEOUT_S} s", out
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = io["stderr"]
    if rc == 0:
        if err.strip():
            return f"compiled, but wrote to stderr: {err[-500:]!r}", out
        if not _new_bundle(out):
            return "exit 0 without a new bundle", out
        return None, out
    if rc != 2:
        return f"exit {rc}: {err[-800:]!r}", out
    lines = err.strip().splitlines()
    if len(lines) != 1 or not lines[0].startswith("aotc: error: ") or "Traceback" in err:
        return f"exit 2 but not one 'aotc: error:' line: {err[-800:]!r}", out
    if io["stdout"].strip():
        return f"exit 2 with output on stdout: {io['stdout'][-300:]!r}", out
    if snapshot(out) != before:
        return "exit 2 but OUT was changed", out
    return None, out


def syntax_check(out: Path) -> str | None:
    """The bundle's own C (model and runner; kernels are tested elsewhere) compiles without warnings."""
    bundle = out / "bundle"
    meta = json.loads((bundle / "metadata.json").read_text())
    cc = os.environ.get("CC", "cc")
    dirs = ["include", "runtime"]
    dirs += sorted({f"vendor/{f['compiler']}" for f in meta.get("partition", [])})
    cmd = [cc, "-std=c99", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", *(f"-I{bundle / d}" for d in dirs),
           str(bundle / "src" / f"{meta['name']}.c"), str(bundle / "src" / "runner.c")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return None if r.returncode == 0 else f"C does not compile: {r.stderr[-1500:]}"


def build_and_run(out: Path) -> str | None:
    from aot.build import cmake_exe

    r = subprocess.run([cmake_exe(), "--build", str(out)], capture_output=True, text=True)
    if r.returncode != 0:
        return f"build failed: {(r.stdout + r.stderr)[-1500:]}"
    try:
        r = subprocess.run([str(out / "runner")], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "runner did not finish in 120 s"
    if r.returncode != 0 or "self-test ran" not in r.stdout:
        return f"runner failed (exit {r.returncode}): {(r.stdout + r.stderr)[-800:]}"
    return None


def fuzz(seed: int, seconds: float, max_cases: int, tmp: Path, full: bool = False,
         verbose: bool = False) -> tuple[list[str], dict]:
    failures: list[str] = []
    stats = {"cases": 0, "compiled": 0, "refused": 0}
    t0 = time.monotonic()
    for k, case in enumerate(cases(seed)):
        if k >= max_cases or time.monotonic() - t0 > seconds:
            break
        work = tmp / f"c{k}"
        problem, out = run_case(case, work, configure=full)
        stats["cases"] += 1
        if problem is None and _new_bundle(out):
            stats["compiled"] += 1
            problem = build_and_run(out) if full else syntax_check(out)
        elif problem is None:
            stats["refused"] += 1
        if problem:
            failures.append(f"{case.label}\n    {problem}")
            (tmp / f"failed{k}.onnx").write_bytes(case.data)
        elif verbose:
            err = (work / "fd2.txt").read_text(errors="replace").strip()
            print(f"{case.label[:150]!r}\n    -> {err[:200] or 'compiled'}")
        if problem is None:
            subprocess.run(["rm", "-rf", str(work)])
    return failures, stats


def _report(failures: list[str], stats: dict) -> str:
    return (f"{len(failures)} of {stats['cases']} cases broke the contract "
            f"({stats['compiled']} compiled, {stats['refused']} refused):\n" + "\n".join(failures[:20]))


def test_mutated_models_compile_or_are_refused_in_one_line(tmp_path):
    """600 cases in the full tier, the first 100 of them in the fast one."""
    from conftest import current_tier, require_tool

    require_tool(os.environ.get("CC", "cc"))
    failures, stats = fuzz(seed=17, seconds=DEFAULT_SECONDS, max_cases=100 if current_tier() == "fast" else 600,
                           tmp=tmp_path)
    assert stats["cases"] >= 30, stats
    assert stats["compiled"] and stats["refused"], stats  # the mutations reach both sides
    assert not failures, _report(failures, stats)


@pytest.mark.slow
def test_mutated_models_long_run_accepted_ones_build_and_run(tmp_path):
    from conftest import require_tool

    require_tool(os.environ.get("CC", "cc"))
    failures, stats = fuzz(seed=1017, seconds=SLOW_SECONDS, max_cases=3000, tmp=tmp_path, full=True)
    assert not failures, _report(failures, stats)


if __name__ == "__main__":
    import argparse
    import tempfile

    p = argparse.ArgumentParser(description="run the fuzzer by hand")
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--cases", type=int, default=200)
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--full", action="store_true", help="build and run every accepted case")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case and its answer")
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's aot, not an installed one
    tmp = Path(tempfile.mkdtemp(prefix="aotc-fuzz-"))
    failures, stats = fuzz(args.seed, args.seconds, args.cases, tmp, args.full, args.verbose)
    print(_report(failures, stats) if failures else f"all {stats['cases']} cases held: {stats}")
    print(f"work: {tmp}")
