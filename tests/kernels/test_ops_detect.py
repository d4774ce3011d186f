"""Detection ops against onnxruntime (issue 18): TopK, NonMaxSuppression and NonZero, and the tail a
detector applies to NonMaxSuppression's rows (Gather/GatherND of the kept boxes, Slice of columns,
views, Cast, elementwise, Concat of columns), run on the rows written (the outputs' extents)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, op_case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(18)


def _const(name: str, value) -> onnx.TensorProto:
    return onnx.numpy_helper.from_array(np.asarray(value), name)


def _boxes(batches: int, n: int, center: bool) -> np.ndarray:
    """Boxes in clusters, so that suppression has work to do; corners in either order."""
    centres = RNG.uniform(0.2, 0.8, (batches, 4, 2))
    c = centres[:, RNG.integers(0, 4, n)] + RNG.normal(0, 0.04, (batches, n, 2))
    wh = RNG.uniform(0.1, 0.3, (batches, n, 2))
    if center:
        return np.concatenate([c, wh], -1).astype(np.float32)
    y0x0, y1x1 = c - wh / 2, c + wh / 2
    swap = RNG.random((batches, n, 1)) < 0.3  # the other diagonal: any corner pair is allowed
    return np.where(swap, np.concatenate([y1x1, y0x0], -1), np.concatenate([y0x0, y1x1], -1)).astype(np.float32)


CASES = []


def _topk(case_id: str, inputs: dict, **kw):
    """op_case with TopK's outputs typed: values of x's type, indices int64."""
    case = op_case(case_id, "TopK", inputs, **kw)
    for o in case.model.graph.output:
        if o.name == "i":
            o.type.tensor_type.elem_type = TP.INT64
    return case


# --- TopK -----------------------------------------------------------------------------------
for dt in ["float32", "int64", "int32"]:
    for largest in (1, 0):
        x = RNG.integers(-5, 5, (3, 17, 4)).astype(dt)  # many ties: lower index first
        if dt == "float32":
            x = x + RNG.standard_normal(x.shape).astype(dt) * (RNG.random(x.shape) < 0.5)
        CASES.append(_topk(f"topk_{dt}_{'largest' if largest else 'smallest'}", {"x": x},
                             consts={"k": np.array([5], np.int64)}, attrs={"axis": 1, "largest": largest},
                             outputs=["v", "i"], out_dtype=dt))
# uint64 (the node tests' test_top_k_uint64): values past int64's range, and ties
_U64 = RNG.integers(0, 4, (3, 9)).astype(np.uint64) * np.uint64(2**62) + RNG.integers(0, 3, (3, 9)).astype(np.uint64)
for largest in (1, 0):  # onnxruntime has no uint64 TopK: onnx's reference
    _case = _topk(f"topk_uint64_{'largest' if largest else 'smallest'}", {"x": _U64},
                  consts={"k": np.array([4], np.int64)}, attrs={"axis": -1, "largest": largest},
                  outputs=["v", "i"], out_dtype="uint64")
    _case.expected = ReferenceEvaluator(_case.model).run(None, _case.feeds)
    CASES.append(_case)
CASES.append(_topk("topk_last_axis_all", {"x": (2, 3, 9)}, consts={"k": np.array([9], np.int64)},
                     outputs=["v", "i"]))
CASES.append(_topk("topk_opset1_k_attr", {"x": (4, 30)}, attrs={"k": 3}, outputs=["v", "i"], opset=9))



def _runtime_k(case_id: str, k: int, declared_k: int):
    """TopK whose k is a model input (issue 51): the declared outputs' size along the axis pins it."""
    x = RNG.standard_normal((3, 9, 4)).astype(np.float32)
    case = _topk(case_id, {"x": x, "k": np.array([k], np.int64)}, attrs={"axis": -2}, outputs=["v", "i"])
    for o in case.model.graph.output:
        for n in (3, declared_k, 4):
            o.type.tensor_type.shape.dim.add().dim_value = n
    return case


CASES.append(_runtime_k("topk_runtime_k", 5, 5))
K_FOR_ANOTHER_SHAPE = _runtime_k("topk_runtime_k_not_the_declared", 6, 5)

def _topk_indices_only() -> onnx.ModelProto:
    x = RNG.standard_normal((6, 20)).astype(np.float32)
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk", axis=-1)  # v: read by nothing
    graph = helper.make_graph([node], "topk_i", [helper.make_tensor_value_info("x", TP.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("i", TP.INT64, None)], [_const("k", np.array([4]))])
    return model_case("topk_indices_only", graph, {"x": x})


CASES.append(_topk_indices_only())

# --- NonMaxSuppression ----------------------------------------------------------------------


def _nms_case(case_id: str, batches: int, classes: int, n: int, *, center: int = 0, max_out: int | None = 4,
              iou: float | None = 0.4, score: float | None = 0.3, runtime: tuple[str, ...] = ()) -> onnx.ModelProto:
    boxes = _boxes(batches, n, bool(center))
    scores = RNG.random((batches, classes, n)).astype(np.float32)
    feeds = {"boxes": boxes, "scores": scores}
    consts, names = [], ["boxes", "scores"]
    for name, value, dtype in (("max_out", max_out, np.int64), ("iou", iou, np.float32), ("score", score, np.float32)):
        if value is None:
            names.append("")
        elif name in runtime:
            feeds[name] = np.array([value], dtype)
            names.append(name)
        else:
            consts.append(_const(name, np.array([value], dtype)))
            names.append(name)
    while names and not names[-1]:
        names.pop()
    node = helper.make_node("NonMaxSuppression", names, ["selected"], name="nms", center_point_box=center)
    graph = helper.make_graph([node], case_id,
                              [helper.make_tensor_value_info(k, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                               for k, v in feeds.items()],
                              [helper.make_tensor_value_info("selected", TP.INT64, None)], consts)
    return model_case(case_id, graph, feeds, opset=11)


CASES += [
    _nms_case("nms_corners", 1, 3, 40),
    _nms_case("nms_center", 1, 3, 40, center=1),
    _nms_case("nms_batches", 2, 4, 30, center=1, max_out=6),
    _nms_case("nms_no_score_threshold", 1, 2, 25, score=None),
    _nms_case("nms_runtime_thresholds", 2, 2, 30, runtime=("iou", "score")),
    # issue 51: max_output_boxes_per_class read at run time, bounded by every box of every class
    _nms_case("nms_runtime_max_out", 1, 2, 20, max_out=3, runtime=("max_out",)),
    _nms_case("nms_max_out_exceeds_boxes", 1, 2, 8, max_out=50, iou=0.6),
    _nms_case("nms_no_max_out", 1, 2, 10, max_out=None, iou=None, score=None),  # default 0: no rows
    _nms_case("nms_all_below_threshold", 1, 2, 10, score=1.5),
]


def _tail_case() -> onnx.ModelProto:
    """NMS, then what a detector does with its rows: the box index column (Gather), the kept boxes
    (Gather of the flattened boxes, GatherND of the batched ones), their width and height (Slice,
    Sub), scaled (Mul by a constant that repeats along the rows), the class as float (Cast,
    Unsqueeze), one [rows, 7] result (Concat of columns), twice the centres (Split of columns, Add)."""
    b, c, n = 1, 3, 40
    boxes = _boxes(b, n, False)
    scores = RNG.random((b, c, n)).astype(np.float32)
    nodes = [
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "m", "iou", "st"], ["sel"], name="nms"),
        helper.make_node("Gather", ["sel", "two"], ["box_i"], axis=1, name="box_index"),
        helper.make_node("Gather", ["sel", "one"], ["cls_i"], axis=1, name="class_index"),
        helper.make_node("Reshape", ["boxes", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Gather", ["flat", "box_i"], ["kept"], axis=0, name="gather_boxes"),
        helper.make_node("Gather", ["sel", "cols02"], ["pair"], axis=1, name="batch_and_box"),  # GatherND's (b, box)
        helper.make_node("GatherND", ["boxes", "pair"], ["kept_nd"], name="gather_nd"),
        helper.make_node("Slice", ["kept", "s0", "s1", "ax1"], ["lo"], name="lo"),
        helper.make_node("Slice", ["kept", "s2", "s3", "ax1"], ["hi"], name="hi"),
        helper.make_node("Sub", ["hi", "lo"], ["wh"], name="wh"),
        helper.make_node("Mul", ["kept", "scale"], ["scaled"], name="scale"),
        helper.make_node("Cast", ["cls_i"], ["cls_f"], to=TP.FLOAT, name="cast"),
        helper.make_node("Unsqueeze", ["cls_f", "ax1"], ["cls_col"], name="unsqueeze"),
        helper.make_node("Concat", ["scaled", "wh"], ["det"], axis=1, name="concat"),
        helper.make_node("Concat", ["det", "cls_col"], ["det2"], axis=1, name="concat2"),
        helper.make_node("Split", ["kept_nd"], ["x1y1", "x2y2"], axis=1, name="split"),  # opset 13: halves
        helper.make_node("Add", ["x1y1", "x2y2"], ["centre2"], name="centre"),
    ]
    graph = helper.make_graph(nodes, "tail", [
        helper.make_tensor_value_info("boxes", TP.FLOAT, boxes.shape),
        helper.make_tensor_value_info("scores", TP.FLOAT, scores.shape)], [
        helper.make_tensor_value_info("det2", TP.FLOAT, None),
        helper.make_tensor_value_info("kept_nd", TP.FLOAT, None),
        helper.make_tensor_value_info("sel", TP.INT64, None),
        helper.make_tensor_value_info("centre2", TP.FLOAT, None)], [
        _const("m", np.array([20], np.int64)), _const("iou", np.array([0.3], np.float32)),
        _const("st", np.array([0.25], np.float32)), _const("two", np.array(2, np.int64)),
        _const("one", np.array(1, np.int64)), _const("flat_shape", np.array([-1, 4], np.int64)),
        _const("cols02", np.array([0, 2], np.int64)), _const("s0", np.array([0], np.int64)),
        _const("s1", np.array([2], np.int64)), _const("s2", np.array([2], np.int64)),
        _const("s3", np.array([4], np.int64)), _const("ax1", np.array([1], np.int64)),
        _const("scale", np.array([320, 240, 320, 240], np.float32))])
    return model_case("nms_detection_tail", graph, {"boxes": boxes, "scores": scores}, opset=13)


CASES.append(_tail_case())

# --- NonZero -------------------------------------------------------------------------------
x1 = RNG.standard_normal(37).astype(np.float32) * (RNG.random(37) < 0.4)
x1[3] = -0.0  # zero too
CASES.append(op_case("nonzero_1d_f32", "NonZero", {"x": x1}, out_dtype="int64", opset=13))
CASES.append(op_case("nonzero_3d_i32", "NonZero", {"x": RNG.integers(0, 3, (3, 4, 5)).astype(np.int32)},
                     out_dtype="int64", opset=13))
CASES.append(op_case("nonzero_bool_none", "NonZero", {"x": np.zeros((4, 4), bool)}, out_dtype="int64", opset=13))


def _nonzero_transpose() -> onnx.ModelProto:
    x = RNG.integers(0, 2, (5, 6)).astype(np.float32)
    nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
             helper.make_node("Transpose", ["nz"], ["coords"], perm=[1, 0], name="t"),
             helper.make_node("GatherND", ["x", "coords"], ["vals"], name="g")]
    graph = helper.make_graph(nodes, "nzt", [helper.make_tensor_value_info("x", TP.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("coords", TP.INT64, None),
                               helper.make_tensor_value_info("vals", TP.FLOAT, None)])
    return model_case("nonzero_transpose_gathernd", graph, {"x": x}, opset=13)


CASES.append(_nonzero_transpose())


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_runtime_k_for_another_shape_returns_an_error_code():
    """A run-time k other than the one the declared outputs pin: the run returns AOTC_ERR_SHAPE."""
    with pytest.raises(AssertionError, match="returned -2"):
        shared_build([K_FOR_ANOTHER_SHAPE]).run(K_FOR_ANOTHER_SHAPE.id)


def test_extent_reported(built):
    """The bounded outputs carry their extent and bound in metadata.json; the tail's rows are fewer
    than the bound (the test is not vacuous)."""
    meta = built.meta["nms_detection_tail"]
    det = next(o for o in meta["outputs"] if o["name"] == "det2")
    assert det["extent"]["axis"] == 0 and det["extent"]["max"] == 60 and det["shape"] == [60, 7]
    rows = built.run("nms_detection_tail")[0].shape[0]
    assert 0 < rows < 60


# --- bounds and refusals ----------------------------------------------------------------------

def _model(case_id: str) -> onnx.ModelProto:
    return next(c for c in CASES if c.id == case_id).model


def test_runtime_max_out_needs_a_bound_when_every_box_is_many_rows():
    """max_output_boxes_per_class read at run time: every box of every class (here 2 x 1400 rows, 67 KB) is
    more than the implied bound takes (64 KiB), so --max-dim is asked for; the small case (CASES's
    nms_runtime_max_out) is bounded by its 2 x 20 boxes."""
    case = _nms_case("nms_runtime_max", 1, 2, 1400, runtime=("max_out",))
    with pytest.raises(AotcError, match=r"computed at run time, and every box of every class is 2800 rows\): "
                                        r"give one with --max-dim selected:0=N"):
        compile_model(case.model, Options(name="m"))
    bundle = compile_model(case.model, Options(name="m", max_dims=(("selected", 0, 12),)))
    assert bundle.metadata["outputs"][0]["extent"]["max"] == 12
    small = compile_model(_model("nms_runtime_max_out"), Options(name="m"))
    assert small.metadata["outputs"][0]["extent"]["max"] == 40


def test_max_dim_lowers_the_bound():
    """A bound below the model's: the op stops there, with the first rows onnxruntime gives."""
    from opcheck import reference

    case = _nms_case("nms_capped", 1, 3, 40, max_out=10, iou=0.9, score=0.0)
    full = reference(case)[0]
    assert full.shape[0] > 7
    case.max_dims, case.expected = (("selected", 0, 7),), [full[:7]]
    built = shared_build([case])
    assert built.meta["nms_capped"]["outputs"][0]["extent"]["max"] == 7
    built.check("nms_capped")


def test_other_readers_refused():
    """A reader that would need every row (a ReduceSum over them) is refused in one line naming it."""
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m"], ["sel"], name="nms"),
             helper.make_node("ReduceSum", ["sel"], ["total"], keepdims=0, name="count_them")]
    graph = helper.make_graph(nodes, "refuse", [helper.make_tensor_value_info("boxes", TP.FLOAT, (1, 5, 4)),
                                                helper.make_tensor_value_info("scores", TP.FLOAT, (1, 1, 5))],
                              [helper.make_tensor_value_info("total", TP.INT64, None)],
                              [_const("m", np.array([3], np.int64))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(AotcError, match="count_them") as err:
        compile_model(model, Options(name="r"))
    assert "\n" not in str(err.value)
