"""ONNX If with a condition known only at run time (aot/frontend/onnx/branches.py): a C if/else around
each branch's kernel calls, against onnxruntime on inputs that take each branch. At the top level,
nested, inside a Loop's body, with a vendor taking nodes of one branch, and the refusals. And as
torch.onnx.export writes it: tests/models/vad_cond.onnx (examples/export_branches.py), a detector
whose stem depends on its sample-rate input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, shared_build

from aot.compiler import Options, compile_model, lower
from aot.errors import AotcError
from aot.plan import assert_no_overlap

MODELS = Path(__file__).resolve().parents[1] / "models"
N = 8


def _vi(name: str, shape: list[int] | None, dtype: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def _c(name: str, value: object) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def _gate(x: str, out: str) -> list[onnx.NodeProto]:
    """out = sum(x) > 0, computed at run time."""
    return [helper.make_node("ReduceSum", [x], [f"{out}_sum"], keepdims=0),
            helper.make_node("Greater", [f"{out}_sum", "zero"], [out])]


def _branches(tag: str = "") -> tuple[onnx.GraphProto, onnx.GraphProto]:
    """then: relu(x) W + b (outer constants); else: sigmoid(x) - 1, and x itself as a second output
    (through an Identity: onnxruntime refuses an outer value given straight back)."""
    rng = np.random.default_rng(1)
    then = helper.make_graph([
        helper.make_node("Relu", ["x"], [f"r{tag}"]),
        helper.make_node("MatMul", [f"r{tag}", "W"], [f"m{tag}"]),
        helper.make_node("Add", [f"m{tag}", "b"], [f"y_then{tag}"]),
        helper.make_node("Neg", ["x"], [f"x_neg{tag}"]),
    ], f"then{tag}", [], [_vi(f"y_then{tag}", None), _vi(f"x_neg{tag}", None)],
        [_c(f"w_local{tag}", rng.standard_normal(N).astype(np.float32))])
    other = helper.make_graph([
        helper.make_node("Sigmoid", ["x"], [f"s{tag}"]),
        helper.make_node("Sub", [f"s{tag}", "one"], [f"y_else{tag}"]),
        helper.make_node("Identity", ["x"], [f"x_copy{tag}"]),
    ], f"else{tag}", [], [_vi(f"y_else{tag}", None), _vi(f"x_copy{tag}", None)], [_c("one", np.float32(1))])
    return then, other


def if_model() -> onnx.ModelProto:
    then, other = _branches()
    rng = np.random.default_rng(0)
    graph = helper.make_graph([
        helper.make_node("Mul", ["inp", "inp"], ["x"]),
        helper.make_node("Sub", ["x", "shift"], ["x2"]),
        *_gate("x2", "cond"),
        helper.make_node("If", ["cond"], ["y", "z"], then_branch=then, else_branch=other, name="choose"),
        helper.make_node("Add", ["y", "z"], ["out"]),
    ], "g", [_vi("inp", [1, N]), _vi("shift", [1])], [_vi("out", [1, N]), _vi("y", [1, N])],
        [_c("W", rng.standard_normal((N, N)).astype(np.float32)), _c("b", rng.standard_normal(N).astype(np.float32)),
         _c("zero", np.float32(0))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def nested_model() -> onnx.ModelProto:
    """The else branch holds an If of its own on another run-time condition."""
    then, other = _branches("_in")
    inner = helper.make_node("If", ["cond2"], ["yi", "zi"], then_branch=then, else_branch=other, name="inner")
    outer_else = helper.make_graph([*_gate("x", "cond2"), inner,
                                    helper.make_node("Mul", ["yi", "zi"], ["y_else"])],
                                   "outer_else", [], [_vi("y_else", None)])
    outer_then = helper.make_graph([helper.make_node("Tanh", ["x"], ["y_then"])], "outer_then", [],
                                   [_vi("y_then", None)])
    rng = np.random.default_rng(0)
    graph = helper.make_graph([
        helper.make_node("Identity", ["inp"], ["x"]),
        helper.make_node("Greater", ["sel", "zero"], ["cond"]),
        helper.make_node("If", ["cond"], ["out"], then_branch=outer_then, else_branch=outer_else, name="outer"),
    ], "g", [_vi("inp", [1, N]), _vi("sel", [])], [_vi("out", [1, N])],
        [_c("W", rng.standard_normal((N, N)).astype(np.float32)), _c("b", rng.standard_normal(N).astype(np.float32)),
         _c("zero", np.float32(0))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def loop_model() -> onnx.ModelProto:
    """A counted Loop whose body picks, by the sign of its state's sum, one update or the other."""
    then = helper.make_graph([helper.make_node("Mul", ["h_in", "half"], ["h_a"])], "then", [],
                             [_vi("h_a", None)])
    other = helper.make_graph([helper.make_node("Add", ["h_in", "xi"], ["h_b"])], "else", [], [_vi("h_b", None)])
    body = helper.make_graph([
        helper.make_node("Gather", ["X", "i"], ["xi"], axis=0),
        *_gate("h_in", "pos"),
        helper.make_node("If", ["pos"], ["h_new"], then_branch=then, else_branch=other, name="step_if"),
        helper.make_node("Tanh", ["h_new"], ["h_out"]),
        helper.make_node("Identity", ["h_out"], ["row"]),
    ], "body", [_vi("i", [], TensorProto.INT64), _vi("c", [], TensorProto.BOOL), _vi("h_in", None)],
        [_vi("c", [], TensorProto.BOOL), _vi("h_out", None), _vi("row", None)])
    graph = helper.make_graph([
        helper.make_node("Loop", ["M", "", "h0"], ["h_last", "rows"], body=body, name="loop"),
    ], "g", [_vi("X", [6, N]), _vi("h0", [N])], [_vi("h_last", [N]), _vi("rows", [6, N])],
        [_c("M", np.int64(6)), _c("half", np.float32(0.5)), _c("zero", np.float32(0))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _case(case_id: str, model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Case:
    case = Case(case_id, model, feeds, scratch_floor=0)
    case.relative = True
    return case


def _inp(sign: float) -> dict[str, np.ndarray]:
    x = np.random.default_rng(3).standard_normal((1, N)).astype(np.float32)
    return {"inp": x, "shift": np.array([0.0 if sign > 0 else 100.0], np.float32)}


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    x = np.random.default_rng(3).standard_normal((1, N)).astype(np.float32)
    cases = [_case("then", if_model(), _inp(1)), _case("else", if_model(), _inp(-1))]
    for sel in (1.0, -1.0):
        for sign in (1.0, -1.0):
            cases.append(_case(f"nested_{sel:+.0f}_{sign:+.0f}", nested_model(),
                               {"inp": np.abs(x) * sign, "sel": np.array(sel, np.float32)}))
    X = np.random.default_rng(4).standard_normal((6, N)).astype(np.float32)
    cases.append(_case("loop", loop_model(), {"X": X, "h0": np.full(N, 0.3, np.float32)}))
    cases.append(_case("loop_neg", loop_model(), {"X": X, "h0": np.full(N, -0.3, np.float32)}))
    cases.append(_case("then_cref", if_model(), _inp(1)))
    cases[-1].vendors = ("cref",)
    cases.append(_case("else_cref", if_model(), _inp(-1)))
    cases[-1].vendors = ("cref",)
    vad = onnx.load(str(MODELS / "vad_cond.onnx"))
    rng = np.random.default_rng(5)
    for rate in (16000, 8000, 44100):
        cases.append(_case(f"vad_{rate}", vad, {"x": rng.standard_normal((1, 1, 512)).astype(np.float32),
                                                 "sr": np.array(rate, np.int64),
                                                 "h": rng.standard_normal((1, 32)).astype(np.float32)}))
    return shared_build(cases, tmp_path_factory.mktemp("branches"))


@pytest.mark.parametrize("case", ["then", "else", "nested_+1_+1", "nested_+1_-1", "nested_-1_+1", "nested_-1_-1",
                                  "loop", "loop_neg", "then_cref", "else_cref", "vad_16000", "vad_8000", "vad_44100"])
def test_if_matches_onnxruntime(build, case):
    build.check(case)


def test_if_is_an_if_else_in_c():
    """One C if/else, each branch's kernel calls inside it, the If named in a comment."""
    c = compile_model(if_model(), Options(name="pick")).files["src/pick.c"]
    body = c[c.index('If "choose"'):]
    assert body.count("} else {") == 1, body[:3000]
    assert body.index('"choose/then/') < body.index("} else {") < body.index('"choose/else/'), body[:3000]


def test_the_branches_share_the_arena():
    """The branches never run together: values of the then branch and of the else branch may take the
    same bytes (program order is safe, aot/frontend/onnx/branches.py), and the If's outputs outlive both."""
    from aot.compiler import select_and_plan

    graph = lower(if_model())
    _, plan = select_and_plan(graph, "host", {})
    assert_no_overlap(plan)
    steps = {n.name: k for k, n in enumerate(graph.nodes)}
    begin = next(steps[n.name] for n in graph.nodes if n.op == "IfBegin")
    end = next(steps[n.name] for n in graph.nodes if n.op == "IfEnd")
    for slot in next(n for n in graph.nodes if n.op == "IfBegin").outputs:
        b = plan.buffer_of(slot)
        assert b.first <= begin and b.last >= end, slot


def test_vendor_functions_keep_to_one_branch():
    """A vendor takes nodes in a branch as in the graph, but never in one function with nodes of the
    other branch or from outside the If (which would run them whichever way the If goes): each call
    holds nodes of one scope, and runs in it."""
    from aot.compiler import partition_model

    graph = partition_model(if_model(), Options(vendors=("cref",))).graph
    scopes = graph.scopes()
    calls = [n for n in graph.nodes if n.op == "Call"]
    assert calls

    def home(node: str) -> str:
        return next((b for b in ("choose/then/", "choose/else/") if node.startswith(b)), "")

    for call in calls:
        homes = {home(m.name) for m in graph.functions[call.attrs["function"]].graph.nodes}
        assert len(homes) == 1, (call.name, homes)
        where = {"": (), "choose/then/": ("choose/begin",), "choose/else/": ("choose/else",)}[homes.pop()]
        assert scopes[call.name] == where, (call.name, scopes[call.name])


def rows_model() -> onnx.ModelProto:
    """An If whose branches give y different lengths along one axis: relu(x) [1, 8] or [x, x] [1, 16]."""
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["a"])], "then", [], [_vi("a", None)])
    other = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["b"], axis=1)], "else", [], [_vi("b", None)])
    graph = helper.make_graph([*_gate("x", "cond"),
                               helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)],
                              "g", [_vi("x", [1, N])], [_vi("y", None)], [_c("zero", np.float32(0))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_branches_of_different_lengths_give_an_extent(tmp_path, sign):
    """Planned at the longer branch (16), the rows the branch taken wrote reported in y_extent (as
    torchvision's batched_nms gives an empty tensor or NMS's kept rows, issue 18)."""
    x = np.abs(np.random.default_rng(6).standard_normal((1, N))).astype(np.float32) * sign
    case = Case("rows", rows_model(), {"x": x})
    built = shared_build([case], tmp_path)
    (y,) = built.run("rows")
    from opcheck import reference

    (ref,) = reference(case)
    assert ref.shape == ((1, N) if sign > 0 else (1, 2 * N))
    np.testing.assert_array_equal(y, ref)
    assert built.meta["rows"]["outputs"][0]["extent"]["max"] == 2 * N


def test_branches_of_different_shapes_are_refused():
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["a"])], "then", [], [_vi("a", None)])
    other = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["c"], axis=1),
                               helper.make_node("Concat", ["c", "c"], ["b"], axis=0)], "else", [], [_vi("b", None)])
    graph = helper.make_graph([*_gate("x", "cond"),
                               helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other,
                                                name="shapes")],
                              "g", [_vi("x", [1, N])], [_vi("y", None)], [_c("zero", np.float32(0))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(AotcError) as e:
        lower(model, Options())
    line = e.value.one_line()
    assert "If 'shapes'" in line and "float32[1, 8]" in line and "float32[2, 16]" in line, line
