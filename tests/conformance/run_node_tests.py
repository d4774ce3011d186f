"""The ONNX backend node tests (1884 cases, regenerated from the onnx wheel) as a conformance measure.

    python tests/conformance/run_node_tests.py [--filter conv] [--limit N] [--report FILE] [--cli]

Every case is either passed, refused at compile time with a one-line reason (an
AotcError), or a failure: a wrong answer, a crash, or an error that is not a
clean refusal. Refusing is fine; answering wrongly is not. The summary groups
the refusals by reason so the gaps are visible.

The cases run in one shared library by default (fast). --cli takes each compiled case the
user's way instead: `aotc MODEL -o OUT`, the test data saved with np.savez, `aotc run OUT
--inputs IN.npz --outputs OUT.npz`, and the outputs read back from that file (a bundle built
per case: slow, so give it a --filter). It checks what the shared build passes by: how `aotc
run` reads the arrays a user saves and writes the ones it gives back (issue 48).
"""

from __future__ import annotations

import argparse
import collections
import glob
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


def generate(out: Path) -> Path:
    """Write onnx's node test cases (model + one data set each) under out/node/, once."""
    if (out / "node").is_dir() and len(os.listdir(out / "node")) > 1000:
        return out / "node"
    import onnx.backend.test.case.node as node_test
    import onnx.backend.test.cmd_tools as ct

    ct.model_test.collect_testcases = node_test.collect_testcases  # cmd_tools only collects model tests
    ct.generate_data(argparse.Namespace(output=str(out)))
    return out / "node"


def _read(path: str, type_proto: onnx.TypeProto) -> np.ndarray | None:
    if type_proto.WhichOneof("value") != "tensor_type":
        return None
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(t)


def load_case(d: Path) -> Case | None:
    model = onnx.load(str(d / "model.onnx"))
    ds = d / "test_data_set_0"
    n_in = len(glob.glob(str(ds / "input_*.pb")))
    n_out = len(glob.glob(str(ds / "output_*.pb")))
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [vi for vi in model.graph.input if vi.name not in inits]
    feeds = {}
    for k in range(n_in):
        arr = _read(str(ds / f"input_{k}.pb"), graph_inputs[k].type)
        if arr is None:
            return None
        feeds[graph_inputs[k].name] = arr
    expected = [_read(str(ds / f"output_{k}.pb"), model.graph.output[k].type) for k in range(n_out)]
    if any(e is None for e in expected):
        return None
    return Case(d.name, model, feeds, expected=expected)


def _dynamic(model: onnx.ModelProto, name: str) -> bool:
    vi = next(v for v in model.graph.input if v.name == name)
    tt = vi.type.tensor_type
    return not tt.HasField("shape") or any(not d.HasField("dim_value") for d in tt.shape.dim)


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


def check_outputs(ours: list[np.ndarray], expected: list[np.ndarray]) -> None:
    """Raise AssertionError where the bundle's outputs are not the reference's."""
    for k, (o, r) in enumerate(zip(ours, expected, strict=True)):
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
    np.savez(work / "in.npz", **case.feeds)
    aotc = [sys.executable, "-m", "aot.cli"]
    shapes = [f"--input-shape={k}={','.join(map(str, s))}" for k, s in case.input_shapes]
    r = subprocess.run([*aotc, str(work / "model.onnx"), "-o", str(work / "out"), *shapes],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return f"FAILED (aotc exit {r.returncode}): {r.stderr.strip()[-300:]}"
    r = subprocess.run([*aotc, "run", str(work / "out"), "--inputs", str(work / "in.npz"), "--outputs",
                        str(work / "res.npz")], capture_output=True, text=True)
    if r.returncode != 0:
        return f"FAILED (aotc run exit {r.returncode}): {r.stderr.strip()[-300:]}"
    names = [vi.name for vi in case.model.graph.output]
    with np.load(work / "res.npz") as res:
        ours = [res[n] for n in names]
    ours = [o.view(e.dtype) if o.dtype.kind == "V" and o.dtype.itemsize == e.dtype.itemsize else o
            for o, e in zip(ours, case.expected, strict=True)]
    try:
        check_outputs(ours, case.expected)
    except AssertionError as e:
        return f"FAILED: AssertionError: {str(e)[:200]}"
    return "passed"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--filter", default="", help="only cases whose name contains this (a regular expression)")
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--report", help="write one line per case here")
    p.add_argument("--by-op", action="store_true", help="end with a table of the refusals per op")
    p.add_argument("--cli", action="store_true", help="each case through `aotc` and `aotc run` (slow)")
    args = p.parse_args()
    root = generate(CACHE)
    dirs = sorted(d for d in root.iterdir() if re.search(args.filter, d.name))
    if args.limit:
        dirs = dirs[: args.limit]
    outcome: dict[str, str] = {}
    refusals: collections.Counter = collections.Counter()
    compiled: list[Case] = []
    for d in dirs:
        try:
            case = load_case(d)
            if case is None:
                outcome[d.name] = "refused: sequence/optional/map types"
                refusals["sequence/optional/map types"] += 1
                continue
            # The input feeds must match the model's declared input shapes (they do in the ONNX suite).
            # Inputs declared without static sizes get the test data's shapes (what --input-shape does).
            shapes = tuple((k, v.shape) for k, v in case.feeds.items() if _dynamic(case.model, k))
            case.input_shapes = shapes
            compile_model(case.model, Options(name="probe", input_shapes=shapes), source=f"{d.name}.onnx")
            compiled.append(case)
        except AotcError as e:
            op = getattr(e.node, "op", None) or getattr(getattr(e.node, "node", None), "op_type", "")
            message = e.message
            if isinstance(e, UnsupportedNodes):  # grouped by the ops, with the first reason
                op, message = ", ".join(e.ops), e.refused[0][1] or NO_KERNEL
            outcome[d.name] = f"refused: {e.one_line()}"
            refusals[f"{op + ': ' if op else ''}{message.split(':')[0][:70]}"] += 1
        except Exception as e:  # a crash of the compiler is a failure, not a refusal
            outcome[d.name] = f"FAILED (compiler crashed): {type(e).__name__}: {e}"
    for start in range(0, 0 if args.cli else len(compiled), 150):
        batch = compiled[start:start + 150]
        try:
            builds = {c.id: b for b in [shared_build(batch)] for c in batch}
        except RuntimeError:  # one case's C does not compile: build the batch case by case to find it
            builds = {}
            for case in batch:
                try:
                    builds[case.id] = shared_build([case])
                except RuntimeError as e:
                    outcome[case.id] = f"FAILED (generated C does not compile): {str(e)[:300]}"
        for case in batch:
            if case.id not in builds:
                continue
            try:
                check_outputs(builds[case.id].run(case.id), case.expected)
                outcome[case.id] = "passed"
            except AotcError as e:
                outcome[case.id] = f"refused: {e.one_line()}"
                refusals[e.message.split(":")[0][:70]] += 1
            except Exception as e:
                outcome[case.id] = f"FAILED: {type(e).__name__}: {str(e)[:200]}"
    if args.cli:
        with tempfile.TemporaryDirectory(prefix="aotc-node-cli-") as tmp:
            for case in compiled:
                outcome[case.id] = via_cli(case, Path(tmp) / case.id)
    counts = collections.Counter(v.split(":")[0].split(" (")[0] for v in outcome.values())
    print(f"{len(outcome)} cases: {counts['passed']} passed, {counts['refused']} refused, "
          f"{counts['FAILED']} failed")
    for reason, n in refusals.most_common(25):
        print(f"  refused {n:4d}: {reason}")
    for name, v in sorted(outcome.items()):
        if v.startswith("FAILED"):
            print(f"  {name}: {v[:300]}")
    if args.by_op:
        print(by_op_table(outcome))
    if args.report:
        Path(args.report).write_text("".join(f"{k}\t{v}\n" for k, v in sorted(outcome.items())))


if __name__ == "__main__":
    main()
