"""The vendor test kit (aot/testing, `aotc vendor-test`): the shipped vendors pass it, claiming at least the
ops docs/ops.md says they take, and it fails a vendor that claims an op and computes it wrongly, naming
the op, through the API and the command line (exit 1, JUnit).

The fast tier runs the cases made of a few of each vendor's ops; the full tier the whole catalogue, and
dnnl (needs oneDNN: skipped without it on a developer machine, failed in CI)."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import current_tier

import aot.vendor
from aot.cli import main
from aot.ir import Function, Graph, Node
from aot.testing import FAILED, NOT_CLAIMED, PASSED, catalogue_ops, run_kit
from aot.vendor import ACCEPT, Artifact, CodegenContext, Vendor
from aot.vendor.dnnl.probe import find_onednn

OPS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "ops.md"

# the fast tier's cases: those made of these ops alone (the full tier: every case)
FAST_OPS = {"cref": {"Gemm", "MatMul", "Add", "Relu", "Tanh"}, "accel_sim": {"Conv", "Relu", "Add", "QLinearConv"}}


def documented(vendor: str) -> set[str]:
    """The ops docs/ops.md (generated from the checkers: `aotc ops --markdown`) lists `vendor` as taking."""
    rows = re.findall(r"^\| (\w+) \|.*\| ([\w, -]+) \|$", OPS_PAGE.read_text(), re.M)
    return {op for op, vendors in rows if vendor in [v.strip() for v in vendors.split(",")]}


def require_onednn() -> None:
    if find_onednn() is not None:
        return
    message = "oneDNN 3.x not installed (pip install -e '.[dnnl]')"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize("name", ["cref", pytest.param("accel_sim", marks=pytest.mark.full),
                                  pytest.param("dnnl", marks=pytest.mark.full)])
def test_shipped_vendor_passes_the_kit(name, tmp_path):
    if name == "dnnl":
        require_onednn()
    ops = FAST_OPS[name] if current_tier() == "fast" else None
    report = run_kit(name, ops=ops, workdir=tmp_path)
    assert report.ok, report.summary()
    assert report.results and all(r.status in (PASSED, NOT_CLAIMED) for r in report.results)
    expected = documented(name) & set(catalogue_ops()) & (ops or set(catalogue_ops()))
    assert expected, name
    assert expected <= report.claimed_ops(), f"{name} documents {sorted(expected - report.claimed_ops())} " \
                                             f"but claimed no case of them:\n{report.summary(verbose=True)}"
    for r in report.results:  # a refusal says why
        assert r.status != NOT_CLAIMED or r.detail, r


# --- a vendor that claims Relu and computes a leaky one ------------------------------------------------

def _wrong_codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    """Relu as max(x, 0) for x >= 0 but WRONG_SLOPE * x below (a slope its CMake line defines: the kit must
    build with the vendor's CMake lines), Tanh right."""
    g, sym = fn.graph, fn.global_symbol
    assert [n.op for n in g.nodes] in (["Relu"], ["Tanh"]), "one node per function (the one-node cases)"
    n = g.nodes[0]
    size = g.tensors[n.outputs[0]].size
    expr = "x[i] >= 0.0f ? x[i] : WRONG_SLOPE * x[i]" if n.op == "Relu" else "tanhf(x[i])"
    proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
    source = (f'#include <math.h>\n#include "{sym}.h"\n\n{proto} {{\n'
              "    const float *x = (const float *)inputs[0]->data;\n"
              "    float *y = (float *)outputs[0]->data;\n    long i;\n    (void)workspace;\n"
              f"    for (i = 0; i < {size}; ++i) y[i] = {expr};\n    return 0;\n}}\n")
    header = f'#include <stdint.h>\n#include "dltensor.h"\n{proto};\n'
    return Artifact(files={f"{sym}.c": source, f"{sym}.h": header}, sources=[f"{sym}.c"], header=f"{sym}.h",
                    cmake="target_compile_definitions(${AOTC_TARGET} PRIVATE WRONG_SLOPE=0.25f)")


def _float32(node: Node, graph: Graph) -> bool:
    return graph.tensors[node.inputs[0]].dtype == "float32"


WRONG = Vendor("wrong", checkers={"Relu": _float32, "Tanh": lambda n, g: ACCEPT}, codegen=_wrong_codegen,
               description="claims Relu and computes a leaky one (the kit's negative test)")


def test_kit_fails_a_wrong_claim_and_names_the_op(tmp_path):
    report = run_kit(WRONG, ops={"Relu", "Tanh"}, workdir=tmp_path)
    assert not report.ok
    by_case = {r.case: r for r in report.results}
    assert by_case["tanh"].status == PASSED, report.summary()
    failed = report.failed
    assert failed and {r.case for r in failed} == {c for c, r in by_case.items() if "Relu" in r.ops}
    for r in failed:
        assert r.claimed_ops == ("Relu",) and r.max_error is not None and r.max_error > 0.1, r
        assert "max abs error" in r.detail, r
    text = report.summary()
    assert "FAILED       relu [Relu]" in text and "1 passed, 2 FAILED" in text, text


def test_vendor_test_command_exits_1_and_writes_junit(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(aot.vendor, "find_vendor", lambda name: WRONG if name == "wrong" else None)
    junit = tmp_path / "kit.xml"
    assert main(["vendor-test", "wrong", "--ops", "Relu", "--junit", str(junit), "--work", str(tmp_path / "w")]) == 1
    out = capsys.readouterr().out
    assert "vendor-test wrong: 2 cases, 2 claimed (0 passed, 2 FAILED)" in out, out
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("failures") == "2" and suite.get("tests") == "2"
    assert all(tc.find("failure") is not None for tc in suite.iter("testcase"))
    assert FAILED in out


def test_vendor_test_command_refuses_an_op_no_case_holds(capsys):
    assert main(["vendor-test", "cref", "--ops", "Relu,NoSuchOp"]) == 2
    assert "no case holds NoSuchOp" in capsys.readouterr().err
