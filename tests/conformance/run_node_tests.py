"""The ONNX backend test set of the installed onnx as a conformance measure: the node tests (1884
cases, regenerated from the onnx wheel) and the model suites the wheel ships (pytorch-converted,
pytorch-operator, simple: 140 cases, most of opset 6), 2024 cases in all.

    python tests/conformance/run_node_tests.py [--suite node] [--filter conv] [--limit N] [--by-op]
                                               [--report FILE] [--cli] [--emx] [--aotc-report FILE]

Every case is passed, refused at compile time with a one-line reason (an AotcError), failed (a
wrong answer) or an error (a compiler crash, C that does not compile, a run that does not
finish). Refusing is fine; answering wrongly is not. The summary's "failed" counts both failures
and errors; the per-suite table tells them apart, and --by-op adds a table per op (every op of a
case's model) and the refusals grouped by the op they name.

The cases run in one shared library by default (fast). --cli takes each compiled case the
user's way instead: `aotc MODEL -o OUT`, the test data saved with np.savez, `aotc run OUT
--inputs IN.npz --outputs OUT.npz`, and the outputs read back from that file (a bundle built
per case: slow, so give it a --filter). It checks what the shared build passes by: how `aotc
run` reads the arrays a user saves and writes the ones it gives back (issue 48).

--emx runs the same cases through emx-onnx-cgen (tests/conformance/emx.py; `pip install
emx-onnx-cgen==1.4.0`, not a test dependency) and puts its outcomes beside aotc's in the tables.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from opcheck import Case, assert_close, shared_build  # noqa: E402

from aot.compiler import Options, compile_model  # noqa: E402
from aot.errors import AotcError  # noqa: E402
from aot.unsupported import NO_KERNEL, UnsupportedNodes  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "aotc-onnx-node-tests"
SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")
OUTCOMES = ("passed", "failed", "refused", "error")


def generate(out: Path) -> Path:
    """Write onnx's node test cases (model + one data set each) under out/node/, once."""
    if (out / "node").is_dir() and len(os.listdir(out / "node")) > 1000:
        return out / "node"
    import onnx.backend.test.case.node as node_test
    import onnx.backend.test.cmd_tools as ct

    ct.model_test.collect_testcases = node_test.collect_testcases  # cmd_tools only collects model tests
    ct.generate_data(argparse.Namespace(output=str(out)))
    return out / "node"


def suite_dir(suite: str) -> Path:
    """Where a suite's case folders are: the node tests generated once, the model suites as the wheel ships them."""
    if suite == "node":
        return generate(CACHE)
    import onnx.backend.test

    return Path(onnx.backend.test.__file__).parent / "data" / suite


def case_dirs(suites: tuple[str, ...], pattern: str = "") -> list[tuple[str, Path]]:
    """(suite, case folder) of every case whose name matches `pattern`, suite by suite."""
    return [(suite, d) for suite in suites for d in sorted(suite_dir(suite).iterdir())
            if (d / "model.onnx").is_file() and re.search(pattern, d.name)]


def _read(path: str, type_proto: onnx.TypeProto) -> object:
    """One test datum as the model's type says: an array, a list of arrays (a sequence), None or a
    value (an optional), a dict (a map)."""
    data = Path(path).read_bytes()
    kind = type_proto.WhichOneof("value")
    proto, convert = {"tensor_type": (onnx.TensorProto, numpy_helper.to_array),
                      "sequence_type": (onnx.SequenceProto, numpy_helper.to_list),
                      "optional_type": (onnx.OptionalProto, numpy_helper.to_optional),
                      "map_type": (onnx.MapProto, numpy_helper.to_dict)}[kind]
    t = proto()
    t.ParseFromString(data)
    return convert(t)


def load_case(d: Path) -> Case:
    """A case folder as a Case: its model, the inputs and outputs of its first data set."""
    model = onnx.load(str(d / "model.onnx"))
    ds = d / "test_data_set_0"
    n_in = len(glob.glob(str(ds / "input_*.pb")))
    n_out = len(glob.glob(str(ds / "output_*.pb")))
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [vi for vi in model.graph.input if vi.name not in inits]
    feeds = {graph_inputs[k].name: _read(str(ds / f"input_{k}.pb"), graph_inputs[k].type) for k in range(n_in)}
    expected = [_read(str(ds / f"output_{k}.pb"), model.graph.output[k].type) for k in range(n_out)]
    return Case(d.name, model, feeds, expected=expected)


def bundle_feeds(case: Case) -> tuple[dict[str, np.ndarray], tuple, tuple]:
    """The case's inputs as a bundle takes them (a sequence x as its tensors x.0, x.1, ...; an absent
    optional as none: docs/sequences.md), with the shapes (--input-shape) and pins (--input-value, an absent
    optional's none) that say so."""
    feeds: dict[str, np.ndarray] = {}
    shapes: list[tuple[str, tuple[int, ...]]] = []
    pins: list[tuple[str, str]] = []
    for k, v in case.feeds.items():
        if v is None:
            pins.append((k, "none"))
        elif isinstance(v, list):
            for i, a in enumerate(v):
                feeds[f"{k}.{i}"] = a
                shapes.append((f"{k}.{i}", a.shape))
        else:
            feeds[k] = v
            if _dynamic(case.model, k):
                shapes.append((k, v.shape))
    return feeds, tuple(shapes), tuple(pins)


def regroup(meta: dict, model: onnx.ModelProto, arrays: dict[str, np.ndarray]) -> list[object]:
    """The model's outputs from the bundle's (by name): a sequence / optional output from the tensors
    metadata.json's structured_io names."""
    specs = meta.get("structured_io", {}).get("outputs", {})

    def value(spec: object) -> object:
        if isinstance(spec, str):
            return arrays[spec]
        if spec is None:
            return None
        assert isinstance(spec, dict)
        if "sequence" in spec:
            return [arrays[n] for n in spec["sequence"]]
        return value(spec["optional"])

    return [value(specs[vi.name]) if vi.name in specs else arrays[vi.name] for vi in model.graph.output]


def _dynamic(model: onnx.ModelProto, name: str) -> bool:
    vi = next(v for v in model.graph.input if v.name == name)
    if vi.type.WhichOneof("value") != "tensor_type":
        return False
    tt = vi.type.tensor_type
    return not tt.HasField("shape") or any(not d.HasField("dim_value") for d in tt.shape.dim)


def kind(outcome: str) -> str:
    """passed / failed (a wrong answer) / refused / error, of an outcome line."""
    return "refused" if outcome.startswith("refused") else "passed" if outcome == "passed" else \
        "failed" if outcome.startswith("FAILED") else "error"


def model_ops(model: onnx.ModelProto) -> list[str]:
    """The distinct ops of a model's graph (a contrib op with its domain), Constant left out unless alone."""
    ops = sorted({n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}" for n in model.graph.node})
    return [o for o in ops if o != "Constant"] or ops or ["(no node)"]


def suite_table(suite_of: dict[str, str], results: dict[str, dict[str, str]]) -> str:
    """Passed / failed / refused / error per suite and tool ({tool: {case: outcome}})."""
    lines = ["| suite | cases | " + " | ".join(f"{t} {k}" for t in results for k in OUTCOMES) + " |",
             "|---|---:|" + "---:|" * (len(OUTCOMES) * len(results))]
    for suite in [*dict.fromkeys(suite_of.values()), "all"]:
        names = [n for n, s in suite_of.items() if suite in (s, "all")]
        counts = {t: collections.Counter(kind(r[n]) for n in names if n in r) for t, r in results.items()}
        lines.append(f"| {suite} | {len(names)} | " + " | ".join(str(counts[t][k]) for t in results for k in OUTCOMES)
                     + " |")
    return "\n".join(lines)


def op_table(ops_of: dict[str, list[str]], results: dict[str, dict[str, str]]) -> str:
    """Per op (every op of a case's model counts that case): the cases and each tool's outcomes,
    the ops with the most cases not passed by aotc first."""
    by: dict[str, list[str]] = collections.defaultdict(list)
    for name, ops in ops_of.items():
        for op in ops:
            by[op].append(name)
    first = next(iter(results))
    lines = ["| op | cases | " + " | ".join(f"{t} {k}" for t in results for k in OUTCOMES) + " |",
             "|---|---:|" + "---:|" * (len(OUTCOMES) * len(results))]
    rows = []
    for op, names in by.items():
        counts = {t: collections.Counter(kind(r[n]) for n in names if n in r) for t, r in results.items()}
        rows.append((-(len(names) - counts[first]["passed"]), op, len(names), counts))
    for _, op, n, counts in sorted(rows):
        lines.append(f"| {op} | {n} | " + " | ".join(str(counts[t][k]) for t in results for k in OUTCOMES) + " |")
    return "\n".join(lines)


def by_op_table(outcome: dict[str, str]) -> str:
    """What still refuses, per op (the node the refusal names; model-level and dtype refusals apart), with
    the most common reason: the summary the full run ends with."""
    by: dict[str, list[str]] = collections.defaultdict(list)
    for v in outcome.values():
        if not v.startswith("refused: "):
            continue
        v = v.removeprefix("refused: ")
        m = re.match(r"node '[^']*' \((\w+)\): (.*)", v)
        if m:
            op, why = m.group(1), m.group(2)
        elif "nodes are not supported" in v:
            op, why = "(several ops)", v.split(": ", 1)[1]
        elif " has dtype " in v:
            op, why = "(a dtype)", v.split(" has dtype ", 1)[1]
        else:
            op, why = "(the model)", v
        by[op].append(why[:90])
    lines = ["| op | refused | most common reason |", "|---|---|---|"]
    for op, whys in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"| {op} | {len(whys)} | {collections.Counter(whys).most_common(1)[0][0]} |")
    return "\n".join(lines)


def check_outputs(ours: list[object], expected: list[object]) -> None:
    """Raise AssertionError where the outputs are not the reference's (a sequence element by element,
    an optional's absence as absence)."""
    assert len(ours) == len(expected), f"{len(ours)} outputs, the reference has {len(expected)}"
    for k, (o, r) in enumerate(zip(ours, expected, strict=True)):
        if r is None or isinstance(r, list):
            assert (o is None) == (r is None), f"output {k}: {'absent' if o is None else 'present'}, " \
                                               f"the reference is {'absent' if r is None else 'present'}"
            if r is not None:
                assert isinstance(o, list) and len(o) == len(r), f"output {k}: a sequence of {len(r)} expected"
                check_outputs(o, r)
            continue
        if r.dtype.name == "bfloat16" or r.dtype.name.startswith("float8"):  # as floats (NaN is
            # NaN): bfloat16 within one of its 8-bit ulps, float8 exactly
            assert o.dtype == r.dtype, f"output {k}: dtype {o.dtype} != reference {r.dtype}"
            tol = 2.0**-7 if r.dtype.name == "bfloat16" else 0.0
            assert_close(o.astype(np.float32), r.astype(np.float32), f"output {k}", tol)
            continue
        assert_close(o, r, f"output {k}", 1e-3)


def via_cli(case: Case, work: Path) -> str:
    """One compiled case the user's way: `aotc`, `aotc run` on the test data in an .npz, the outputs
    read back from the .npz it writes (an ml_dtypes array comes back as raw bytes: viewed as the
    reference's dtype, as a user would). The outcome, as main() records it."""
    work.mkdir(parents=True)
    onnx.save(case.model, work / "model.onnx")
    np.savez(work / "in.npz", **case.feeds)  # the bundle's inputs (bundle_feeds)
    aotc = [sys.executable, "-m", "aot.cli"]
    shapes = [f"--input-shape={k}={','.join(map(str, s))}" for k, s in case.input_shapes] + \
        [f"--input-value={k}={v}" for k, v in case.input_values]
    r = subprocess.run([*aotc, str(work / "model.onnx"), "-o", str(work / "out"), *shapes],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return f"ERROR (aotc exit {r.returncode}): {r.stderr.strip()[-300:]}"
    r = subprocess.run([*aotc, "run", str(work / "out"), "--inputs", str(work / "in.npz"), "--outputs",
                        str(work / "res.npz")], capture_output=True, text=True)
    if r.returncode != 0:
        return f"ERROR (aotc run exit {r.returncode}): {r.stderr.strip()[-300:]}"
    meta = json.loads((work / "out" / "bundle" / "metadata.json").read_text())
    with np.load(work / "res.npz") as res:
        ours = regroup(meta, case.model, dict(res))
    ours = [o.view(e.dtype) if isinstance(o, np.ndarray) and isinstance(e, np.ndarray) and o.dtype.kind == "V"
            and o.dtype.itemsize == e.dtype.itemsize else o for o, e in zip(ours, case.expected, strict=True)]
    try:
        check_outputs(ours, case.expected)
    except AssertionError as e:
        return f"FAILED: {str(e)[:200]}"
    return "passed"


def run_aotc(dirs: list[tuple[str, Path]], cli: bool = False) -> tuple[dict[str, str], collections.Counter]:
    """Each case through aotc: {case: outcome line}, and the refusals counted by reason."""
    outcome: dict[str, str] = {}
    refusals: collections.Counter = collections.Counter()
    compiled: list[Case] = []
    for _, d in dirs:
        try:
            case = load_case(d)
            # The input feeds must match the model's declared input shapes (they do in the ONNX suite).
            # Inputs declared without static sizes get the test data's shapes (what --input-shape does).
            case.feeds, case.input_shapes, case.input_values = bundle_feeds(case)
            compile_model(case.model, Options(name="probe", input_shapes=case.input_shapes,
                                              input_values=case.input_values), source=f"{d.name}.onnx")
            compiled.append(case)
        except AotcError as e:
            op = getattr(e.node, "op", None) or getattr(getattr(e.node, "node", None), "op_type", "")
            message = e.message
            if isinstance(e, UnsupportedNodes):  # grouped by the ops, with the first reason
                op, message = ", ".join(e.ops), e.refused[0][1] or NO_KERNEL
            outcome[d.name] = f"refused: {e.one_line()}"
            refusals[f"{op + ': ' if op else ''}{message.split(':')[0][:70]}"] += 1
        except Exception as e:  # a crash of the compiler is an error, not a refusal
            outcome[d.name] = f"ERROR (compiler crashed): {type(e).__name__}: {e}"
    for start in range(0, 0 if cli else len(compiled), 150):
        batch = compiled[start:start + 150]
        try:
            builds = {c.id: b for b in [shared_build(batch)] for c in batch}
        except RuntimeError:  # one case's C does not compile: build the batch case by case to find it
            builds = {}
            for case in batch:
                try:
                    builds[case.id] = shared_build([case])
                except RuntimeError as e:
                    outcome[case.id] = f"ERROR (generated C does not compile): {str(e)[:300]}"
        for case in batch:
            if case.id not in builds:
                continue
            try:
                build = builds[case.id]
                meta = build.meta[case.id]
                ours = regroup(meta, case.model, dict(zip([o["name"] for o in meta["outputs"]], build.run(case.id),
                                                          strict=True)))
            except AotcError as e:
                outcome[case.id] = f"refused: {e.one_line()}"
                refusals[e.message.split(":")[0][:70]] += 1
                continue
            except Exception as e:
                outcome[case.id] = f"ERROR (run): {type(e).__name__}: {str(e)[:200]}"
                continue
            try:
                check_outputs(ours, case.expected)
                outcome[case.id] = "passed"
            except AssertionError as e:
                outcome[case.id] = f"FAILED: {str(e)[:200]}"
    if cli:
        with tempfile.TemporaryDirectory(prefix="aotc-node-cli-") as tmp:
            for case in compiled:
                outcome[case.id] = via_cli(case, Path(tmp) / case.id)
    return outcome, refusals


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", action="append", choices=SUITES,
                   help="only this suite (repeatable); default: all four")
    p.add_argument("--filter", default="", help="only cases whose name contains this (a regular expression)")
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--report", help="write one line per case here (suite, case, outcome; emx's too with --emx)")
    p.add_argument("--by-op", action="store_true", help="end with the per-op table and the refusals per op")
    p.add_argument("--cli", action="store_true", help="each case through `aotc` and `aotc run` (slow)")
    p.add_argument("--emx", action="store_true", help="the same cases through emx-onnx-cgen too (slow)")
    p.add_argument("--jobs", type=int, default=2, help="emx cases compiled at once (--emx)")
    p.add_argument("--emx-minutes", type=float, default=0,
                   help="stop starting emx cases after this long; the tables then count the cases both ran")
    p.add_argument("--emx-only", action="store_true", help="run emx alone (its outcomes file fills up)")
    p.add_argument("--aotc-report", help="aotc's outcomes from this --report file of an earlier run, not run again")
    args = p.parse_args()
    dirs = case_dirs(tuple(args.suite or SUITES), args.filter)
    if args.limit:
        dirs = dirs[: args.limit]
    if args.emx or args.emx_only:
        from emx import run_emx  # tests/conformance/emx.py: emx-onnx-cgen is imported there only

        emx = run_emx(dirs, args.jobs, args.emx_minutes * 60)
        if args.emx_only:
            print(suite_table({d.name: suite for suite, d in dirs if d.name in emx}, {"emx": emx}))
            return
    if args.aotc_report:  # suite, case, outcome per line
        rows = [line.split("\t") for line in Path(args.aotc_report).read_text().splitlines()]
        wanted = {d.name for _, d in dirs}  # (the report may hold more cases than --filter/--suite take)
        outcome, refusals = {r[1]: r[2] for r in rows if r[1] in wanted}, collections.Counter()
        dirs = [(suite, d) for suite, d in dirs if d.name in outcome]
    else:
        outcome, refusals = run_aotc(dirs, args.cli)
    results = {"aotc": outcome}
    if args.emx:
        results["emx"] = emx
        if len(emx) < len(dirs):  # a run cut short: the tables count the cases both ran
            print(f"emx ran {len(emx)} of the {len(dirs)} cases; the tables count those")
            dirs = [(suite, d) for suite, d in dirs if d.name in emx]
    counts = collections.Counter(kind(v) for v in outcome.values())
    print(f"{len(outcome)} cases: {counts['passed']} passed, {counts['refused']} refused, "
          f"{counts['failed'] + counts['error']} failed")
    for reason, n in refusals.most_common(25):
        print(f"  refused {n:4d}: {reason}")
    for name, v in sorted(outcome.items()):
        if kind(v) in ("failed", "error"):
            print(f"  {name}: {v[:300]}")
    suite_of = {d.name: suite for suite, d in dirs}
    print(suite_table(suite_of, results))
    if args.by_op:
        ops_of = {d.name: model_ops(onnx.load(str(d / "model.onnx"), load_external_data=False)) for _, d in dirs}
        print(op_table(ops_of, results))
        print(by_op_table(outcome))
    if args.report:
        Path(args.report).write_text("".join(
            f"{suite_of[k]}\t{k}\t" + "\t".join(r.get(k, "") for r in results.values()) + "\n"
            for k in sorted(outcome, key=lambda k: (SUITES.index(suite_of[k]), k))))


if __name__ == "__main__":
    main()
