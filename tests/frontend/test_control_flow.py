"""Control flow (issue 15, part 3) and refusals (part 4).

- An If whose condition is known at compile time (an initializer, a Constant, or computed from shapes) is
  replaced by the branch it takes: the branch's nodes are inlined with unique names, read the outer scope as
  before, and compute the If's outputs. Matched against onnxruntime running the If.
- An If whose condition is computed at run time compiles to a C if/else (tests/frontend/test_branches.py); one
  whose branches disagree on a shape, and a Loop with no bound, are refused in one line that names them
  (never the reference evaluator's internals).
- Every unsupported node is listed at once, grouped by op, in one line, exit code 2.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from modelcheck import Ran, aotc
from onnx import TensorProto, helper, numpy_helper
from opcheck import model_case, shared_build

from aot.compiler import compile_model, lower
from aot.errors import AotcError

F = TensorProto.FLOAT


def _vi(name: str, shape=None, elem=F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _init(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def branch(name: str, nodes: list[onnx.NodeProto], outputs: list[str], inits: dict | None = None) -> onnx.GraphProto:
    return helper.make_graph(nodes, name, [], [_vi(o) for o in outputs],
                             [_init(k, v) for k, v in (inits or {}).items()])


def then_else(k_then: float, k_else: float) -> dict[str, onnx.GraphProto]:
    """Branches that read the outer x, outer initializer w and the outer intermediate r, with initializers of
    their own: out = x * w + r + k."""
    def one(tag: str, k: float) -> onnx.GraphProto:
        return branch(tag, [helper.make_node("Mul", ["x", "w"], ["t"], name="mul"),
                            helper.make_node("Add", ["t", "r"], ["u"], name="add_outer"),
                            helper.make_node("Add", ["u", "k"], ["out"], name="add_own")],
                      ["out"], {"k": np.full((4,), k, np.float32)})
    return {"then_branch": one("then", k_then), "else_branch": one("else", k_else)}


def if_model(case_id: str, cond_nodes: list[onnx.NodeProto], inits: dict | None = None, opset: int = 13,
             branches: dict | None = None, n_out: int = 1, extra_nodes: list | None = None):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), *cond_nodes,
             helper.make_node("If", ["cond"], [f"y{k}" if n_out > 1 else "y" for k in range(n_out)], name="the_if",
                              **(branches or then_else(1.0, 2.0))), *(extra_nodes or [])]
    outputs = [_vi(f"y{k}" if n_out > 1 else "y") for k in range(n_out)]
    graph = helper.make_graph(nodes, case_id, [_vi("x", [2, 4])], outputs,
                              [_init("w", np.arange(4, dtype=np.float32)), *[_init(k, v) for k, v in
                                                                             (inits or {}).items()]])
    x = np.random.default_rng(len(case_id)).standard_normal((2, 4)).astype(np.float32)
    return model_case(case_id, graph, {"x": x}, opset)


SIZE_GT = [helper.make_node("Size", ["x"], ["n"]), helper.make_node("Greater", ["n", "three"], ["cond"])]
SHAPE_EQ = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "one"], ["d1"], axis=0),
            helper.make_node("Equal", ["d1", "five"], ["cond"])]  # x is [2, 4]: false, the else branch

CASES = [
    if_model("if_size_then", SIZE_GT, {"three": np.int64(3)}),
    if_model("if_shape_else", SHAPE_EQ, {"one": np.int64(1), "five": np.int64(5)}),
    if_model("if_initializer_true", [], {"cond": np.array(True)}),
    if_model("if_initializer_false_rank1", [], {"cond": np.array([False])}),
    if_model("if_constant_node", [helper.make_node("Constant", [], ["cond"],
                                                   value=numpy_helper.from_array(np.array(False)))]),
    if_model("if_opset21", SIZE_GT, {"three": np.int64(3)}, opset=21),
    # a branch output that is an outer value, one that is the branch's initializer, one value twice
    if_model("if_outputs_not_computed_in_branch", [], {"cond": np.array(True)}, n_out=4, branches={
        "then_branch": branch("then", [helper.make_node("Neg", ["x"], ["nx"])], ["r", "c", "nx", "nx"],
                              {"c": np.full((2, 4), 7.0, np.float32)}),
        "else_branch": branch("else", [helper.make_node("Abs", ["x"], ["a"])], ["a", "a", "a", "a"])}),
    # an If nested in the branch taken, with a condition of its own known at compile time
    if_model("if_nested", [], {"cond": np.array(True)}, branches={
        "then_branch": branch("then", [
            helper.make_node("Size", ["r"], ["n2"]), helper.make_node("Less", ["n2", "three"], ["c2"]),
            helper.make_node("If", ["c2"], ["out"], name="inner", **then_else(10.0, 20.0))], ["out"],
            {"three": np.int64(3)}),
        "else_branch": branch("else", [helper.make_node("Neg", ["x"], ["out"])], ["out"])}),
    # the name the branch's value t would take (the_if__t) and its node's (the_if/mul) are taken already
    if_model("if_names_collide", [], {"cond": np.array(True)}, branches={
        "then_branch": branch("then", [helper.make_node("Mul", ["x", "w"], ["t"], name="mul"),
                                       helper.make_node("Neg", ["t"], ["o"], name="neg")], ["o"]),
        "else_branch": branch("else", [helper.make_node("Neg", ["x"], ["o2"])], ["o2"])},
        extra_nodes=[helper.make_node("Relu", ["r"], ["the_if__t"], name="the_if/mul")]),
]


# onnxruntime refuses a branch output that is an outer-scope value (ONNX allows it): the answer written out
_x = CASES[6].feeds["x"]
CASES[6].expected = [np.maximum(_x, 0), np.full((2, 4), 7.0, np.float32), -_x, -_x]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_constant_if_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_constant_if_is_inlined(case_id):
    case = next(c for c in CASES if c.id == case_id)
    g = lower(case.model)
    assert not [n for n in g.nodes if n.op == "If"]
    names = [n.name for n in g.nodes]
    assert len(set(names)) == len(names)
    assert any(n.startswith("the_if/") for n in names) or case_id == "if_outputs_not_computed_in_branch"


def test_inlined_nodes_are_named_after_the_if():
    g = lower(CASES[0].model)
    assert [n.name for n in g.nodes if n.name.startswith("the_if/")] == ["the_if/mul", "the_if/add_outer",
                                                                          "the_if/add_own"]


# --- refused ---------------------------------------------------------------------------------------

def _runtime_if(name: str = "the_if", shapes: bool = False) -> onnx.NodeProto:
    """On the run-time input 'flag'; with `shapes`, an else branch whose output differs along two axes
    (one axis would be a bounded output, planned at the longer branch: tests/frontend/test_branches.py)."""
    branches = then_else(1.0, 2.0)
    if shapes:
        branches["else_branch"] = branch("else", [helper.make_node("Concat", ["x", "r"], ["c"], axis=1),
                                                  helper.make_node("Concat", ["c", "c"], ["out"], axis=0)], ["out"])
    return helper.make_node("If", ["flag"], [f"{name}_out"], name=name, **branches)


def _runtime_model(nodes: list[onnx.NodeProto], outputs: list[str]) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), *nodes], "g",
                              [_vi("x", [2, 4]), _vi("flag", [], TensorProto.BOOL)], [_vi(o) for o in outputs],
                              [_init("w", np.arange(4, dtype=np.float32))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("flag", [True, False])
def test_runtime_if_matches_onnxruntime(tmp_path, flag):
    model = _runtime_model([_runtime_if()], ["the_if_out"])
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    build = shared_build([model_case("runtime_if", model.graph, {"x": x, "flag": np.array(flag)}, opset=13)],
                         tmp_path)
    build.check("runtime_if")


def test_runtime_if_of_two_shapes_is_refused_naming_it():
    with pytest.raises(AotcError) as e:
        compile_model(_runtime_model([_runtime_if(shapes=True)], ["the_if_out"]))
    line = e.value.one_line()
    assert line.startswith("If 'the_if': output 'the_if_out' is float32[2, 4] from its then_branch and "
                           "float32[4, 8] from its else_branch; aotc needs one static shape"), line
    assert "known results" not in line and "Unable to find" not in line


def test_runtime_ifs_compile_beside_a_refused_loop():
    """Only the Loop without a bound is refused; the run-time Ifs beside it are not named."""
    loop_body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                                   helper.make_node("Identity", ["v_in"], ["v_out"])], "body",
                                  [_vi("i", [], TensorProto.INT64), _vi("c_in", [], TensorProto.BOOL), _vi("v_in")],
                                  [_vi("c_out", [], TensorProto.BOOL), _vi("v_out")])
    loop = helper.make_node("Loop", ["", "flag", "x"], ["looped"], name="the_loop", body=loop_body)
    model = _runtime_model([_runtime_if("if_a"), _runtime_if("if_b"), loop], ["if_a_out", "if_b_out", "looped"])
    with pytest.raises(AotcError) as e:
        compile_model(model)
    line = e.value.one_line()
    assert line.startswith("node 'the_loop' (Loop): its initial condition 'flag' is computed at run time, and it "
                           "has no maximum trip count: aotc needs a bound on its steps"), line
    assert "if_a" not in line and "if_b" not in line, line


def _aotc(tmp_path, model: onnx.ModelProto) -> Ran:
    onnx.save(model, tmp_path / "m.onnx")
    return aotc(tmp_path / "m.onnx", "-o", tmp_path / "out", check=False)


def test_cli_refuses_a_runtime_if_of_two_shapes_in_one_line(tmp_path):
    r = _aotc(tmp_path, _runtime_model([_runtime_if(shapes=True)], ["the_if_out"]))
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("aotc: error: If 'the_if': output 'the_if_out' is float32[2, 4]")
    assert not (tmp_path / "out").exists()


def test_cli_lists_every_unsupported_node_grouped_by_op(tmp_path):
    """Five nodes of two ops no kernel implements (random ones: a bundle is deterministic), between
    supported ones: all named, in one line."""
    nodes = [helper.make_node("Bernoulli", ["x"], ["m1"], name="mask"),
             helper.make_node("RandomUniformLike", ["m1"], ["r1"], name="round1"),
             helper.make_node("Relu", ["r1"], ["a"], name="relu"),
             helper.make_node("RandomUniformLike", ["a"], ["r2"], name="round2"),
             helper.make_node("Bernoulli", ["r2"], ["m2"], name="mask_2"),
             helper.make_node("RandomUniformLike", ["m2"], ["y"], name="round3")]
    graph = helper.make_graph(nodes, "g", [_vi("x", [4, 4])], [_vi("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    r = _aotc(tmp_path, model)
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("aotc: error: 5 nodes are not supported: Bernoulli x2 (mask, mask_2), "
                        "RandomUniformLike x3 (round1, round2, round3)\n"), r.stderr
    assert not (tmp_path / "out").exists()


def test_refusals_with_reasons_are_grouped_by_op_and_reason():
    nodes = [helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT32),
             helper.make_node("MatMul", ["xi", "xi"], ["m"], name="mm"),
             helper.make_node("Cast", ["m"], ["mf"], to=F),
             helper.make_node("Pad", ["mf", "pads"], ["p1"], name="pad1", mode="bogus"),
             helper.make_node("Pad", ["p1", "pads"], ["y"], name="pad2", mode="bogus")]
    graph = helper.make_graph(nodes, "g", [_vi("x", [4, 4])], [_vi("y")], [_init("pads", np.zeros(4, np.int64))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with pytest.raises(AotcError, match=r"^2 nodes are not supported: Pad x2 \(pad1, pad2\): Pad mode 'bogus'"):
        compile_model(model)  # the canonical rules refuse first, both Pads at once
