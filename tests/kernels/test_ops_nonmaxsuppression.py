"""NonMaxSuppression whose selected_indices output declares its row count (issue 51, as ONNX's node tests
do): compiled to that shape (the bounded rows copied by ExactRows), matching onnxruntime where the data
selects that many boxes; data selecting another count makes the run return AOTC_ERR_SHAPE (-2). (A declared
count equal to the bound keeps the bounded output and its run-time rows, as before.)"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from opcheck import model_case, shared_build

BOXES = np.array([[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9],
                   [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]]], np.float32)


def _case(case_id: str, scores: np.ndarray, rows: int, per_class: int = 6, center: int = 0):
    b, c, n = scores.shape
    boxes = np.repeat(BOXES, b, axis=0)
    if center:  # the same boxes as [x_center, y_center, width, height]
        boxes = np.concatenate([(boxes[..., :2] + boxes[..., 2:]) / 2, boxes[..., 2:] - boxes[..., :2]], -1)
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "m", "iou", "thr"], ["sel"],
                            center_point_box=center)
    g = helper.make_graph([node], case_id,
                          [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [b, n, 4]),
                           helper.make_tensor_value_info("scores", TensorProto.FLOAT, [b, c, n])],
                          [helper.make_tensor_value_info("sel", TensorProto.INT64, [rows, 3])],
                          [helper.make_tensor("m", TensorProto.INT64, [1], [per_class]),
                           helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.5]),
                           helper.make_tensor("thr", TensorProto.FLOAT, [1], [0.0])])
    return model_case(case_id, g, {"boxes": boxes.astype(np.float32), "scores": scores.astype(np.float32)})


SCORES = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], np.float32)
CASES = [
    _case("three_of_six", SCORES, 3),
    _case("limited_to_two", SCORES, 2, per_class=2),  # as many as the bound: the bounded output, as before
    _case("center_point", SCORES, 3, center=1),
    _case("two_batches_two_classes", np.stack([np.concatenate([SCORES[0], SCORES[0][:, ::-1]])] * 2), 12),
]
# every box scored 0 but two: the threshold keeps two, the model declares three (of at most six)
FEWER = _case("fewer_than_declared", np.array([[[0.9, 0.0, 0.0, 0.95, 0.0, 0.0]]], np.float32), 3)
# three boxes kept where the model declares two
MORE = _case("more_than_declared", SCORES, 2)



def _nonzero(case_id: str, x: np.ndarray, count: int):
    """NonZero's [rank, rows] output declared: the rows (axis 1) copied for each of the rank dims."""
    g = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"])], case_id,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, [x.ndim, count])])
    return model_case(case_id, g, {"x": x})


NONZERO_X = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]], np.float32)
NONZERO = _nonzero("nonzero_declared", NONZERO_X, 3)
NONZERO_WRONG = _nonzero("nonzero_another_count", NONZERO_X, 2)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build([*CASES, FEWER, MORE, NONZERO, NONZERO_WRONG], tmp_path_factory.mktemp("nms"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES] + [NONZERO.id])
def test_nms_of_declared_rows_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id", [FEWER.id, MORE.id, NONZERO_WRONG.id])
def test_data_selecting_another_count_returns_the_shape_error(built, case_id):
    with pytest.raises(AssertionError, match=r"_run returned -2"):
        built.run(case_id)
