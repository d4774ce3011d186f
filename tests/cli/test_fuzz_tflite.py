"""Mutated .tflite files fed to `aotc`: every case compiles, or is refused with exit 2 and one line.

The TFLite counterpart of test_fuzz_inputs.py (whose run_case, contract and C check it shares). Seeds:
every .tflite under tests/models. Mutations are schema-aware, made in TFLite's object API
(ai_edge_litert.schema_py_generated: ModelT.InitFromPackedBuf, then ModelT.Pack with a flatbuffers
Builder): shapes, tensor types, buffer data, sizes and offsets, tensor / opcode / buffer indices of
ops, subgraphs and tensors, quantisation parameters (NaN, inf, 0 and negative scales, zero points out of
range, per-channel axes and lengths that disagree), an op's options replaced by another op's options
type, the subgraph indices of WHILE / IF / CALL_ONCE / STABLEHLO_COMPOSITE, opcodes; and raw bytes
(flips, truncation, splices) of the packed file. For each case:

- exit 0: the bundle's C (the model and the runner) compiles with -Wall -Wextra -Werror;
- exit 2: exactly one line on stderr, `aotc: error: ...`, no traceback, OUT as it was;
- anything else (exit 3 "internal error", a traceback, stray output, a hang) fails the test.

The fast tier runs a few seconds of cases, the full tier a few hundred. By hand:

    python3 tests/cli/test_fuzz_tflite.py --cases 10000            # counts, and the failing cases
    python3 tests/cli/test_fuzz_tflite.py --cases 300 -v --seed 3  # every case and its answer
"""

from __future__ import annotations

import copy
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fuzz_inputs import Case, run_case, syntax_check  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"
FAST_SECONDS = 4.0  # the fast tier stops starting cases after this long (counted from the second case: the first
# pays for the imports)
FULL_CASES = 400

DIMS = [0, 1, 2, 3, 7, 64, 2**16, 2**31 - 1, 2**31, 2**40, -1, -2, -(2**31)]
INDICES = [-1, -2, -(2**31), 0, 1, 2, 2**31 - 1, 255, 1000]
FLOATS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, -1.0, 1e-45, 1e-30, 1e30, 3.4e38, 0.5]
ZEROS = [-(2**63), -(2**31), -129, -128, -1, 0, 1, 127, 128, 255, 256, 32767, 2**31 - 1, 2**63 - 1]
SIZES = [0, 1, 3, 4, 7, 2**31, 2**32 + 1, 2**62, 2**64 - 1]

# mutation -> weight
MUTATIONS = {
    "shape": 6, "type": 4, "buffer_data": 4, "buffer_offset": 3, "tensor_buffer": 3, "op_tensor": 6,
    "subgraph_io": 3, "opcode_index": 3, "opcode": 3, "quant": 6, "options": 6, "subgraph_index": 3,
    "drop_input": 2, "drop_op": 1, "sparsity": 1, "signature": 1, "variable": 1,
}


def seed_files() -> list[Path]:
    return sorted(MODELS.rglob("*.tflite"))


def _sch():
    from ai_edge_litert import schema_py_generated

    return schema_py_generated


def pack(model) -> bytes:
    """The object-API model as a .tflite file (file identifier TFL3)."""
    import flatbuffers

    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _ops(m) -> list:
    return [op for sg in m.subgraphs or [] for op in sg.operators or []]


def _tensors(m) -> list:
    return [t for sg in m.subgraphs or [] for t in sg.tensors or []]


def _option_classes() -> list[str]:
    sch = _sch()
    names = [k for k, v in vars(sch.BuiltinOptions).items() if not k.startswith("_") and v]
    return [n for n in names if hasattr(sch, n + "T")]


def _mutate(m, rng: random.Random) -> str:
    """One mutation of the object-API model `m` in place; returns what it did."""
    sch = _sch()
    kind = rng.choices(*zip(*MUTATIONS.items(), strict=True))[0]
    tensors, ops = _tensors(m), _ops(m)
    if kind == "shape" and tensors:
        t = rng.choice(tensors)
        shape = list(t.shape if t.shape is not None else [])
        r = rng.random()
        if shape and r < 0.7:
            shape[rng.randrange(len(shape))] = rng.choice(DIMS)
        elif shape and r < 0.85:
            del shape[rng.randrange(len(shape))]
        else:
            shape.insert(rng.randrange(len(shape) + 1), rng.choice(DIMS[:6]))
        t.shape = shape
        return f"shape: {t.name!r} {shape}"
    if kind == "type" and tensors:
        t = rng.choice(tensors)
        t.type = rng.choice([*range(0, 21), 99, 127])
        return f"type: {t.name!r} -> {t.type}"
    if kind == "buffer_data" and m.buffers:
        bufs = [b for b in m.buffers if b.data is not None and len(b.data)] or list(m.buffers)
        b = rng.choice(bufs)
        data = bytes(bytearray(b.data if b.data is not None else []))
        r = rng.random()
        if r < 0.4 and data:
            data = data[:rng.randrange(len(data))]
        elif r < 0.7:
            data += bytes(rng.choice([1, 2, 3, 4, 8, 64]))
        elif data:
            data = bytes(rng.randrange(256) if rng.random() < 0.3 else x for x in data)
        b.data = list(data) if data else None
        return f"buffer_data: {len(data)} bytes"
    if kind == "buffer_offset" and m.buffers:
        b = rng.choice(m.buffers)
        b.offset, b.size = rng.choice(SIZES), rng.choice(SIZES)
        return f"buffer_offset: offset {b.offset} size {b.size}"
    if kind == "tensor_buffer" and tensors:
        t = rng.choice(tensors)
        t.buffer = rng.choice([0, len(m.buffers or []), len(m.buffers or []) + 3, 2**32 - 1,
                               rng.randrange(max(len(m.buffers or []), 1))])
        return f"tensor_buffer: {t.name!r} -> {t.buffer}"
    if kind == "op_tensor" and ops:
        op = rng.choice(ops)
        field = rng.choice(["inputs", "outputs", "intermediates"])
        vec = list(getattr(op, field) if getattr(op, field) is not None else [])
        value = rng.choice(INDICES + [len(tensors), rng.randrange(max(len(tensors), 1))])
        if vec and rng.random() < 0.8:
            vec[rng.randrange(len(vec))] = value
        else:
            vec.append(value)
        setattr(op, field, vec)
        return f"op_tensor: {field}[] = {value}"
    if kind == "subgraph_io" and m.subgraphs:
        sg = rng.choice(m.subgraphs)
        field = rng.choice(["inputs", "outputs"])
        vec = list(getattr(sg, field) if getattr(sg, field) is not None else [])
        value = rng.choice(INDICES + [len(sg.tensors or [])])
        if vec and rng.random() < 0.7:
            vec[rng.randrange(len(vec))] = value
        elif vec and rng.random() < 0.5:
            vec.pop()
        else:
            vec.append(value)
        setattr(sg, field, vec)
        return f"subgraph_io: {field} {vec}"
    if kind == "opcode_index" and ops:
        op = rng.choice(ops)
        op.opcodeIndex = rng.choice([len(m.operatorCodes or []), len(m.operatorCodes or []) + 7, 2**32 - 1,
                                     rng.randrange(max(len(m.operatorCodes or []), 1))])
        return f"opcode_index: {op.opcodeIndex}"
    if kind == "opcode" and m.operatorCodes:
        c = rng.choice(m.operatorCodes)
        code = rng.choice([*range(0, 210), 1000, 2**31 - 1])
        c.builtinCode = code
        c.deprecatedBuiltinCode = min(code, 127)
        return f"opcode: {code}"
    if kind == "quant" and tensors:
        t = rng.choice([t for t in tensors if t.quantization is not None] or tensors)
        q = t.quantization or sch.QuantizationParametersT()
        t.quantization = q
        scale = list(q.scale if q.scale is not None else []) or [1.0]
        zero = list(q.zeroPoint if q.zeroPoint is not None else []) or [0]
        r = rng.random()
        if r < 0.4:
            scale[rng.randrange(len(scale))] = rng.choice(FLOATS)
        elif r < 0.6:
            zero[rng.randrange(len(zero))] = rng.choice(ZEROS)
        elif r < 0.75:
            q.quantizedDimension = rng.choice([0, 1, 3, 4, 7, 2**31 - 1])
        elif r < 0.85:
            scale = scale + [rng.choice(FLOATS[5:])] * rng.randint(1, 3)
        elif r < 0.92:
            zero = zero + [0] * rng.randint(1, 3)
        else:
            scale = []
        q.scale, q.zeroPoint = scale, zero
        return f"quant: {t.name!r} scale {scale[:4]} zero {zero[:4]} axis {q.quantizedDimension}"
    if kind == "options" and ops:
        op = rng.choice(ops)
        others = [o for o in ops if o.builtinOptions is not None and type(o.builtinOptions) is not type(
            op.builtinOptions)]
        if others and rng.random() < 0.6:
            src = rng.choice(others)
            op.builtinOptionsType, op.builtinOptions = src.builtinOptionsType, copy.deepcopy(src.builtinOptions)
        elif rng.random() < 0.8:
            name = rng.choice(_option_classes())
            op.builtinOptionsType = getattr(sch.BuiltinOptions, name)
            op.builtinOptions = getattr(sch, name + "T")()
        else:
            op.builtinOptionsType, op.builtinOptions = 0, None
        return f"options: -> {type(op.builtinOptions).__name__}"
    if kind == "subgraph_index":
        fields = [(o.builtinOptions, f) for o in ops if o.builtinOptions is not None for f in (
            "condSubgraphIndex", "bodySubgraphIndex", "thenSubgraphIndex", "elseSubgraphIndex", "initSubgraphIndex",
            "subgraph") if hasattr(o.builtinOptions, f)]
        fields += [(o.builtinOptions2, "decompositionSubgraphIndex") for o in ops
                   if hasattr(o.builtinOptions2, "decompositionSubgraphIndex")]
        if fields:
            obj, f = rng.choice(fields)
            setattr(obj, f, rng.choice([-1, -(2**31), 0, 1, len(m.subgraphs), len(m.subgraphs) + 4, 2**31 - 1]))
            return f"subgraph_index: {f} = {getattr(obj, f)}"
        if m.subgraphs and len(m.subgraphs) > 1 and rng.random() < 0.5:
            m.subgraphs.pop(rng.randrange(1, len(m.subgraphs)))
            return "subgraph_index: a subgraph dropped"
        return "subgraph_index: none"
    if kind == "drop_input" and ops:
        op = rng.choice(ops)
        if op.inputs is not None and len(op.inputs):
            vec = list(op.inputs)
            vec.pop(rng.randrange(len(vec)))
            op.inputs = vec
            return "drop_input"
    if kind == "drop_op" and m.subgraphs:
        sg = rng.choice(m.subgraphs)
        if sg.operators:
            sg.operators.pop(rng.randrange(len(sg.operators)))
            return "drop_op"
    if kind == "sparsity" and tensors:
        t = rng.choice(tensors)
        sp = sch.SparsityParametersT()
        sp.traversalOrder = [rng.choice([0, 1, 2, 5, -1]) for _ in range(rng.randint(0, 3))]
        sp.blockMap = [rng.choice([0, 1, 9])] if rng.random() < 0.3 else None
        dm = sch.DimensionMetadataT()
        dm.format, dm.denseSize = rng.choice([0, 1, 5]), rng.choice(DIMS[:8])
        sp.dimMetadata = [dm] * rng.randint(0, 3)
        t.sparsity = sp
        return f"sparsity: {t.name!r}"
    if kind == "signature" and tensors:
        t = rng.choice(tensors)
        t.shapeSignature = [rng.choice([-1, 1, 0, 5]) for _ in range(rng.randint(0, 4))]
        return "signature"
    if kind == "variable" and tensors:
        t = rng.choice(tensors)
        t.isVariable = not t.isVariable
        return f"variable: {t.name!r}"
    return f"{kind}: nothing"


def _mut_bytes(data: bytes, rng: random.Random) -> str | bytes:
    b = bytearray(data)
    how = rng.choice(["flip", "flip", "truncate", "splice", "int"])
    if how == "flip":
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del b[rng.randrange(len(b)):]
    elif how == "splice":
        at, length = rng.randrange(len(b)), rng.randint(1, 64)
        src = rng.randrange(len(b))
        b[at:at] = b[src:src + length]
    else:  # a 32-bit little-endian field overwritten (offsets, lengths, indices)
        at = rng.randrange(max(len(b) - 4, 1)) & ~3
        b[at:at + 4] = rng.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, len(b), len(b) + 4]).to_bytes(4, "little")
    return bytes(b)


def cases(seed: int) -> Iterator[Case]:
    """An endless seeded stream of mutated .tflite files (one to three mutations each, or raw bytes)."""
    sch = _sch()
    rng = random.Random(seed)
    files = seed_files()
    raw = {p: p.read_bytes() for p in files}
    k = 0
    while True:
        k += 1
        path = rng.choice(files)
        base = path.stem
        if rng.random() < 0.2:
            yield Case(f"#{k} {base} bytes", _mut_bytes(raw[path], rng))
            continue
        m = sch.ModelT.InitFromPackedBuf(raw[path], 0)
        what = [_mutate(m, rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        try:
            data = pack(m)
        except Exception as e:  # a value the builder cannot write (e.g. out of its field's range): a byte mutation
            what.append(f"unpackable ({type(e).__name__}); bytes instead")
            data = _mut_bytes(raw[path], rng)
        if rng.random() < 0.1:
            what.append("then bytes")
            data = _mut_bytes(data, rng)
        yield Case(f"#{k} {base}: " + "; ".join(what), data)


def outcome(problem: str | None, compiled: bool) -> str:
    if problem is None:
        return "compiled" if compiled else "refused"
    if problem.startswith("exit 3"):
        return "internal"
    if problem.startswith("no answer"):
        return "timeout"
    return "other"


def fuzz(seed: int, seconds: float, max_cases: int, tmp: Path, verbose: bool = False, cc: bool = True,
         progress: int = 0) -> tuple[list[str], Counter]:
    from test_fuzz_inputs import _new_bundle

    failures: list[str] = []
    stats: Counter = Counter()
    t0 = time.monotonic()
    budget_from = t0
    for k, case in enumerate(cases(seed)):
        if k >= max_cases or time.monotonic() - budget_from > seconds:
            break
        if k == 1:
            budget_from = time.monotonic()
        work = tmp / f"c{k}"
        problem, out = run_case(case, work, suffix=".tflite")
        compiled = problem is None and _new_bundle(out)
        if compiled and cc:
            problem = syntax_check(out)
        stats["cases"] += 1
        stats[outcome(problem, compiled) if not (compiled and problem) else "bad C"] += 1
        if problem:
            failures.append(f"{case.label}\n    {problem}")
            (tmp / f"failed{k}.tflite").write_bytes(case.data)
        elif verbose:
            err = (work / "fd2.txt").read_text(errors="replace").strip()
            print(f"{case.label[:150]!r}\n    -> {err[:200] or 'compiled'}", flush=True)
        if problem is None:
            subprocess.run(["rm", "-rf", str(work)])
        if progress and stats["cases"] % progress == 0:
            print(f"{stats['cases']} cases, {time.monotonic() - t0:.0f} s: {dict(stats)}", file=sys.stderr, flush=True)
    stats["seconds"] = round(time.monotonic() - t0)
    return failures, stats


def _report(failures: list[str], stats: Counter) -> str:
    return f"{len(failures)} of {stats['cases']} cases broke the contract ({dict(stats)}):\n" + "\n".join(failures[:20])


def _run(tmp_path: Path, seed: int, seconds: float, max_cases: int) -> None:
    import os

    from conftest import require_tool

    pytest.importorskip("ai_edge_litert")
    require_tool(os.environ.get("CC", "cc"))
    failures, stats = fuzz(seed=seed, seconds=seconds, max_cases=max_cases, tmp=tmp_path)
    assert stats["cases"] >= 5, stats
    assert stats["compiled"] and stats["refused"], stats  # the mutations reach both sides
    assert not failures, _report(failures, stats)


def test_mutated_tflite_files_compile_or_are_refused_in_one_line(tmp_path):
    """A few seconds of cases: the fast tier's check."""
    _run(tmp_path, seed=69, seconds=FAST_SECONDS, max_cases=200)


@pytest.mark.full
def test_mutated_tflite_files_few_hundred(tmp_path):
    _run(tmp_path, seed=1069, seconds=600, max_cases=FULL_CASES)


if __name__ == "__main__":
    import argparse
    import tempfile

    p = argparse.ArgumentParser(description="run the TFLite fuzzer by hand")
    p.add_argument("--seed", type=int, default=69)
    p.add_argument("--cases", type=int, default=300)
    p.add_argument("--seconds", type=float, default=10**6)
    p.add_argument("--no-cc", action="store_true", help="skip the C syntax check of compiled cases")
    p.add_argument("--progress", type=int, default=500, help="print the counts every N cases (0: never)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case and its answer")
    p.add_argument("--max-gib", type=float, default=8, help="address-space limit: a case that allocates more is an "
                   "internal error (MemoryError), not the machine's out-of-memory killer")
    args = p.parse_args()
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (int(args.max_gib * 2**30), resource.RLIM_INFINITY))
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's aot, not an installed one
    tmp = Path(tempfile.mkdtemp(prefix="aotc-fuzz-tflite-"))
    failures, stats = fuzz(args.seed, args.seconds, args.cases, tmp, args.verbose, not args.no_cc, args.progress)
    print(_report(failures, stats) if failures else f"all {stats['cases']} cases held: {dict(stats)}")
    print(f"work: {tmp}")
