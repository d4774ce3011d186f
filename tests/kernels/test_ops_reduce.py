"""Reduce* ops against onnxruntime: any axes (contiguous or not, negative), keepdims, reduce-all,
noop_with_empty_axes, axes as attribute (before opset 18; 13 for ReduceSum), as a constant input and as an
input computed at run time that the declared output shape pins."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator
from opcheck import Case, op_case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

OPS = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
       "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]
POSITIVE = {"ReduceLogSum", "ReduceProd"}  # log of a sum must see positive values; keep products tame


def input_opset(op: str) -> int:
    """First opset where `axes` is an input."""
    return 13 if op == "ReduceSum" else 18


def attr_opset(op: str) -> int:
    return 11 if op == "ReduceSum" else 13


def reduce_case(tag: str, op: str, shape: tuple | np.ndarray, axes: list[int] | None, keepdims: int | None = None,
                *, form: str = "attr", noop: int | None = None, opset: int | None = None) -> Case:
    """form: 'attr' (axes attribute), 'input' (axes initializer), 'omitted' (axes input left out)."""
    attrs: dict = {}
    if keepdims is not None:
        attrs["keepdims"] = keepdims
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    consts = {}
    if form == "attr":
        opset = opset or attr_opset(op)
        if axes is not None:
            attrs["axes"] = axes
    else:
        opset = opset or input_opset(op)
        if form == "input":
            consts["axes"] = np.array(axes, dtype=np.int64)
    return op_case(f"{op[6:].lower()}_{tag}", op, {"x": shape}, consts=consts, attrs=attrs, opset=opset,
                   positive=op in POSITIVE)


CASES = []
for op in OPS:
    CASES += [
        reduce_case("last2_keep", op, (2, 3, 4, 5), [2, 3]),
        reduce_case("middle_nokeep", op, (2, 3, 4, 5), [1], 0),
        reduce_case("first", op, (3, 4, 5), [0], 1),
        reduce_case("noncontig_neg", op, (2, 3, 4, 5), [-4, -2], 0),
        reduce_case("all_default", op, (3, 4, 5), None),
        reduce_case("all_nokeep", op, (3, 4, 5), None, 0),
        reduce_case("input_axes", op, (2, 3, 4, 5), [-1, 1], 1, form="input"),
        reduce_case("input_omitted", op, (2, 3, 4), None, 0, form="omitted"),
    ]
CASES += [
    reduce_case("rank1", "ReduceSum", (7,), [0], 0),
    reduce_case("rank1_keep", "ReduceMax", (7,), [0], 1),
    reduce_case("rank5_alt", "ReduceMean", (2, 3, 2, 3, 4), [0, 2, 4], 1),
    reduce_case("rank5_inner", "ReduceMax", (2, 3, 2, 3, 4), [1, 3], 0),
    reduce_case("size1_axis", "ReduceSum", (3, 1, 4), [1], 0),
    reduce_case("size1_axis_lse", "ReduceLogSumExp", (3, 1, 4), [1], 1),
    reduce_case("size1_axes_all_kept", "ReduceMean", (1, 5, 1), [0, 2], 1),
    reduce_case("duplicate_axes", "ReduceMean", (2, 3, 4), [1, -2], 1, form="input"),
    reduce_case("gap_nchw", "ReduceMean", (2, 16, 7, 7), [2, 3], 1),
    reduce_case("channel_nchw", "ReduceMean", (2, 16, 7, 7), [1], 1, form="input"),
    reduce_case("stats_nchw", "ReduceMean", (4, 8, 6, 6), [0, 2, 3], 1),
    reduce_case("noop_empty_input", "ReduceSum", (2, 3), [], 1, form="input", noop=1),
    reduce_case("noop_omitted", "ReduceMax", (2, 3), None, 1, form="omitted", noop=1),
    reduce_case("noop0_empty_input", "ReduceSum", (2, 3), [], 0, form="input", noop=0),
    # accuracy: long runs in float, both when the run is contiguous and when it is strided
    reduce_case("long_row", "ReduceSum", (3, 50000), [1], 0, form="input"),
    reduce_case("long_col", "ReduceSum", (50000, 3), [0], 0, form="input"),
    reduce_case("long_mean", "ReduceMean", np.random.default_rng(1).uniform(0.5, 1.5, (2, 200000)).astype(np.float32),
                [1], 0),
    reduce_case("long_mean_strided", "ReduceMean",
                np.random.default_rng(2).uniform(0.5, 1.5, (100000, 4)).astype(np.float32), [0], 0),
    reduce_case("long_l2", "ReduceL2", (4, 100000), [1], 0),
    reduce_case("lse_large", "ReduceLogSumExp",
                np.random.default_rng(3).uniform(80, 120, (3, 4, 5)).astype(np.float32), [1], 0),
    reduce_case("lse_neg_large", "ReduceLogSumExp",
                np.random.default_rng(4).uniform(-300, -100, (3, 40)).astype(np.float32), [1], 1),
    reduce_case("max_inf", "ReduceMax", np.array([[-np.inf, -np.inf], [1, np.inf]], np.float32), [1], 0),
    reduce_case("lse_inf", "ReduceLogSumExp", np.array([[-np.inf, -np.inf], [1, np.inf]], np.float32), [1], 0),
    reduce_case("opset20", "ReduceMax", (2, 3, 4), [2], 0, form="input", opset=20),
    reduce_case("opset20", "ReduceMin", (2, 3, 4), [0, 2], 1, form="input", opset=20),
    reduce_case("opset7", "ReduceSum", (2, 3, 4), [-1], 0, opset=7),
    reduce_case("opset7", "ReduceMean", (2, 3, 4), [0, 1], 1, opset=7),
    reduce_case("opset11", "ReduceMax", (2, 3, 4), [-3, -1], 0, opset=11),
    reduce_case("opset11", "ReduceLogSumExp", (2, 3, 4), None, 1, opset=11),
    reduce_case("opset21", "ReduceL1", (2, 3, 4), [1], 1, form="input", opset=21),
]
# A zero-size input is an empty constant (issue 16): the Reduce of it folds to the op's identity.
CASES += [reduce_case("empty_set", op, (2, 0, 4), [1], 1, form="input")
          for op in ("ReduceSum", "ReduceMax", "ReduceProd", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare")]
CASES += [reduce_case("empty_set_nokeep", "ReduceMin", (0, 3), [0], 0, form="input"),
          reduce_case("empty_kept_axis", "ReduceSum", (2, 0, 4), [2], 1, form="input")]




def runtime_axes_case(tag: str, op: str, shape: tuple, axes: list[int], keepdims: int) -> Case:
    """Axes as an input of the model (issue 16): compiled from the declared output shape, which pins them."""
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    x = np.abs(x) + 0.1 if op in POSITIVE else x
    case = op_case(f"{op[6:].lower()}_{tag}", op, {"x": x, "axes": np.array(axes, np.int64)},
                   attrs={"keepdims": keepdims}, opset=input_opset(op))
    out = np.sum(x, axis=tuple(axes), keepdims=bool(keepdims)).shape
    dims = case.model.graph.output[0].type.tensor_type.shape.dim
    for n in out:
        dims.add().dim_value = n
    return case


for op in OPS:
    CASES += [runtime_axes_case("runtime_axes_keep", op, (2, 3, 4), [2, 1], 1),
              runtime_axes_case("runtime_axes_nokeep", op, (2, 3, 5), [-1], 0)]


# float64 (onnx's expanded function bodies cast to it): the same passes in double
for op in OPS:
    _x = np.random.default_rng(4).uniform(0.5, 2.0, (3, 4, 5))
    _d = op_case(f"{op[6:].lower()}_float64", op, {"x": _x}, consts={"axes": np.array([1, -1], np.int64)},
                 attrs={"keepdims": 0}, opset=18, out_dtype="float64")
    _d.expected = ReferenceEvaluator(_d.model).run(None, _d.feeds)
    CASES.append(_d)

# ReduceMax/ReduceMin of bool (opset 20: any/all), through float32 between two Casts; onnx's reference
for op in ("ReduceMax", "ReduceMin"):
    _b = op_case(f"{op[6:].lower()}_bool", op, {"x": np.random.default_rng(3).random((3, 4)) < 0.5},
                 consts={"axes": np.array([1], np.int64)}, attrs={"keepdims": 0}, opset=20, out_dtype="bool")
    _b.expected = ReferenceEvaluator(_b.model).run(None, _b.feeds)
    CASES.append(_b)


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def _model(op: str, inputs: list, inits: list, attrs: dict, opset: int, dtype: int = 1):
    node = helper.make_node(op, [i.name for i in inputs] + [i.name for i in inits], ["y"], **attrs)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", dtype, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def test_empty_axes_input_is_a_known_constant():
    """An axes input declared with zero elements holds nothing: it is compiled as the empty constant it
    must be (reduce all, or nothing with noop_with_empty_axes), not as an argument of the C function."""
    x = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)
    for noop in (0, 1):
        case = op_case(f"empty_axes_input_noop{noop}", "ReduceSum", {"x": x, "axes": np.zeros((0,), np.int64)},
                       attrs={"keepdims": 1, "noop_with_empty_axes": noop}, opset=13)
        bundle = compile_model(case.model, Options(name="m"))
        assert [s["name"] for s in bundle.metadata["inputs"]] == ["x"]
        shared_build([case]).check(case.id)


def test_refuses_axes_computed_at_run_time():
    x = helper.make_tensor_value_info("x", 1, [2, 3])
    axes = helper.make_tensor_value_info("axes", 7, [1])
    model = _model("ReduceSum", [x, axes], [], {}, 13)
    with pytest.raises(AotcError, match="ReduceSum axes .* must be a constant"):
        compile_model(model, Options(name="m"))


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceL2"])
def test_run_time_axes_the_shapes_do_not_pin(op):
    """[2, 3, 3] -> [2, 3] reduces axis 1 or axis 2: both are compiled and the axes read at run time pick
    one; axes naming neither make the run return AOTC_ERR_SHAPE (-2) rather than write a wrong shape."""
    x = helper.make_tensor_value_info("x", 1, [2, 3, 3])
    axes = helper.make_tensor_value_info("axes", 7, [1])
    model = _model(op, [x, axes], [], {"keepdims": 0}, 18)
    for n in (2, 3):
        model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = n
    data = np.random.default_rng(9).standard_normal((2, 3, 3)).astype(np.float32)
    cases = [Case(f"unpinned_{op}_{tag}", model, {"x": data, "axes": np.array([a], np.int64)})
             for tag, a in (("1", 1), ("2", 2), ("minus1", -1), ("0", 0), ("9", 9))]
    built = shared_build(cases)
    for case in cases[:3]:
        built.check(case.id)
    for case in cases[3:]:
        with pytest.raises(AssertionError, match="returned -2"):
            built.run(case.id)


def test_refuses_integer_input():
    x = helper.make_tensor_value_info("x", 7, [2, 3])
    model = _model("ReduceMax", [x], [], {"axes": [1]}, 13, dtype=7)
    with pytest.raises(AotcError, match="dtype int64 is not supported"):
        compile_model(model, Options(name="m"))


def test_refuses_out_of_range_axis():
    x = helper.make_tensor_value_info("x", 1, [2, 3])
    model = _model("ReduceMean", [x], [], {"axes": [2]}, 13)
    with pytest.raises(AotcError, match="axis 2 is out of"):
        compile_model(model, Options(name="m"))
