"""aotc's TFLite integer ops, declared once in aot/ir/tflite_ops.py: every node the TFLite frontend
writes and the one the residual pass writes fit their declared inputs, outputs and attributes, and a
vendor claims one by name as it claims an ONNX op."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from aot.compiler import lower
from aot.frontend import import_model
from aot.frontend.tflite import load_tflite
from aot.ir import tflite_ops as tfl
from aot.partition import partition_for
from aot.passes import HOST_PIPELINE, simplify
from aot.vendor import Vendor
from aot.vendor.cref.codegen import codegen as cref_codegen

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted([*ROOT.glob("tests/models/tflite/*.tflite"), *ROOT.glob("bench/models/keras/*.tflite")])


def _nodes(graph: onnx.GraphProto):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(a.g)


def _misfit(op: str, inputs: int, outputs: int, attrs: set[str]) -> str:
    """Why a node of `op` does not fit its schema ('' when it does)."""
    s = tfl.SCHEMAS.get(op)
    if s is None:
        return f"{op} is not declared"
    if not s.required_inputs <= inputs <= len(s.inputs) or outputs != len(s.outputs):
        return f"{op}: {inputs} inputs and {outputs} outputs, declared {s.inputs} -> {s.outputs}"
    missing, extra = set(s.attrs) - attrs, attrs - set(s.attrs) - set(s.some_attrs)
    return f"{op}: attributes missing {sorted(missing)}, undeclared {sorted(extra)}" if missing or extra else ""


def written_models(folder: Path) -> list[Path]:
    """Models for the ops no committed model holds, written with the schema (tests/frontend/tflite_written.py):
    an int16 SUM of 65,536 elements a row, whose sums may pass int32 (the float64 sums and TflSumRequant),
    LSH_PROJECTION, seeded RANDOM_UNIFORM and MULTINOMIAL, STABLEHLO_RNG_BIT_GENERATOR."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tflite_written import Written

    def one(name: str, build) -> Path:
        w = Written()
        ins, outs = build(w)
        return w.save(folder / f"{name}.tflite", ins, outs)

    def wide_sum(w):
        x, y = w.tensor([2, 256, 256], "int16", quant=(0.01, 0)), w.tensor([2], "int16", quant=(40.0, 0))
        axes = w.tensor([2], "int32", np.array([1, 2], np.int32))
        w.op("SUM", [x, axes], [y], ("ReducerOptions", {"keepDims": False}))
        return [x], [y]

    def lsh(w):
        x, y = w.tensor([3, 2], "float32"), w.tensor([2], "int32")
        h = w.tensor([2, 4], "float32", np.arange(8, dtype=np.float32))
        w.op("LSH_PROJECTION", [h, x], [y], ("LSHProjectionOptions", {"type": 1}))
        return [x], [y]

    def uniform(w):
        y = w.tensor([3, 5], "float32")
        w.op("RANDOM_UNIFORM", [w.tensor([2], "int32", np.array([3, 5], np.int32))], [y],
             ("RandomOptions", {"seed": 7, "seed2": 0}))
        return [], [y]

    def multinomial(w):
        x, y = w.tensor([2, 4], "float32"), w.tensor([2, 3], "int32")
        w.op("MULTINOMIAL", [x, w.tensor([], "int32", np.array(3, np.int32))], [y],
             ("RandomOptions", {"seed": 1, "seed2": 2}))
        return [x], [y]

    def rng_bits(w):
        s, nxt, y = w.tensor([2], "uint64"), w.tensor([2], "uint64"), w.tensor([5], "uint32")
        w.op("STABLEHLO_RNG_BIT_GENERATOR", [s], [nxt, y], ("StablehloRngBitGeneratorOptions", {"algorithm": 2}))
        return [s], [nxt, y]

    return [one("wide_sum_16x8", wide_sum), one("lsh", lsh), one("uniform", uniform),
            one("multinomial", multinomial), one("rng_bits", rng_bits)]


def test_frontend_writes_every_declared_op_as_declared(tmp_path):
    written: set[str] = set()
    wrong = []
    for path in [*MODELS, *written_models(tmp_path)]:
        for n in _nodes(load_tflite(path).graph):
            if n.domain == tfl.DOMAIN:
                written.add(n.op_type)
                why = _misfit(n.op_type, len(n.input), len(n.output), {a.name for a in n.attribute})
                if why:
                    wrong.append(f"{path.name}: {why}")
    assert not wrong, "\n".join(wrong)
    assert written == tfl.IMPORTED_OPS  # the models cover every op the import may write


def test_fused_residual_op_as_declared():
    graph = simplify(lower(load_tflite(ROOT / "tests/models/tflite/residual_int8.tflite")), HOST_PIPELINE)
    fused = [n for n in graph.nodes if n.op == tfl.CONV_2D_ADD]
    assert fused
    for n in fused:
        assert not _misfit(n.op, len(n.inputs), len(n.outputs), set(n.attrs)), n


@pytest.mark.parametrize("op", [tfl.CONV_2D, tfl.ADD])
def test_vendor_claims_a_tflite_op_by_name(op):
    """Vendor.checkers is keyed by node op: aotc's TFLite ops are claimed as any op is."""
    v = Vendor("tflvendor", checkers={op: lambda node, graph: True}, codegen=cref_codegen)
    graph = simplify(import_model(load_tflite(ROOT / "tests/models/tflite/residual_int8.tflite"), "m"))
    parted = partition_for(graph, [v], None, "m").graph
    claimed = [n.op for fn in parted.functions.values() for n in fn.graph.nodes]
    assert claimed and set(claimed) == {op}
    assert all(n.op != op for n in parted.nodes)
