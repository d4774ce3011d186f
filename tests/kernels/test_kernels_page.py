"""The kernel table's manifest (docs/kernels.md) is generated from the table: the committed page must be
current, and every C function it names must exist in the runtime, in a file the op's bundle ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from aot.emit_c.runtime_files import defining_files, family_files
from aot.ir import Graph, Node, Tensor
from aot.kernels import HOST_OPS
from aot.kernels.base import Candidate, KernelChoice, TargetTraits
from aot.kernels_page import markdown, rows
from aot.select import NodeKernels, choose

DOCS = Path(__file__).resolve().parents[2] / "docs" / "kernels.md"


def test_docs_kernels_page_is_current():
    assert DOCS.read_text() == markdown(), "regenerate it: python -m aot.kernels_page > docs/kernels.md"


def test_every_function_of_the_table_is_defined_where_the_op_ships_kernels():
    """symbols.json says which file defines each function (tests/kernels_c/test_runtime_symbols.py keeps it current);
    the file must be one of the op's families' (HostOp.family and .needs), or the bundle would not ship it."""
    missing = []
    for op, host in HOST_OPS.items():
        shipped = {f for fam in (host.family, *host.needs) for f in family_files(fam)}
        for c in host.kernels:
            for sym in c.symbols:
                if not set(defining_files(sym)) & shipped:
                    missing.append(f"{op}: {sym} ({', '.join(defining_files(sym)) or 'defined nowhere'})")
    assert not missing, missing
    listed = {op for r in rows() for op in r.op.split(", ")}
    assert listed == {op for op, host in HOST_OPS.items() if any(c.symbols for c in host.kernels)}
    assert "Conv" in listed and all("?" not in r.files for r in rows())


def test_a_candidate_choosing_a_function_it_does_not_list_is_a_table_bug():
    """choose refuses a choice whose kernel is not among its candidate's functions: the page would not list it."""
    node = Node("Relu", "n", ["x"], ["y"])
    g = Graph("g", [node], {t: Tensor(t, (1,), "float32") for t in "xy"}, ["x"], ["y"])
    wrong = Candidate("aotc_a_f32", lambda n, gr, b: KernelChoice("aotc_b_f32"))
    with pytest.raises(AssertionError, match="aotc_b_f32"):
        choose(node, g, NodeKernels(None, (wrong,), TargetTraits()), 0)
    right = Candidate("aotc_a_f32", lambda n, gr, b: KernelChoice("aotc_b_f32"), also=("aotc_b_f32",))
    assert choose(node, g, NodeKernels(None, (right,), TargetTraits()), 0).kernel == "aotc_b_f32"
