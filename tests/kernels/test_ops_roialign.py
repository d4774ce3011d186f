"""RoiAlign (issue 51) against onnxruntime: avg and max (max as onnxruntime defines it, the largest weighted
tap), half_pixel and output_half_pixel, sampling ratios given and adaptive, ROIs across and past the input,
several batches; a batch index out of range makes the run return AOTC_ERR_SHAPE (-2)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from opcheck import model_case, shared_build

RNG = np.random.default_rng(51)


def _case(case_id: str, x_shape: tuple[int, int, int, int], rois: list[list[float]], batch: list[int],
          out: tuple[int, int], opset: int = 16, **attrs):
    r = len(rois)
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=out[0], output_width=out[1], **attrs)
    g = helper.make_graph([node], case_id,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape)),
                           helper.make_tensor_value_info("rois", TensorProto.FLOAT, [r, 4]),
                           helper.make_tensor_value_info("b", TensorProto.INT64, [r])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [r, x_shape[1], *out])])
    feeds = {"x": RNG.standard_normal(x_shape).astype(np.float32), "rois": np.array(rois, np.float32),
             "b": np.array(batch, np.int64)}
    return model_case(case_id, g, feeds, opset=opset)


ROIS = [[0.0, 0.0, 9.0, 9.0], [1.3, 2.2, 6.1, 5.7], [-2.0, 3.0, 12.5, 11.0], [7.0, 7.0, 2.0, 3.0], [4.4, 4.4, 4.6, 4.5]]
CASES = [
    _case("avg_half_pixel", (2, 3, 10, 10), ROIS, [0, 1, 1, 0, 1], (3, 3)),
    _case("avg_output_half_pixel", (2, 3, 10, 10), ROIS, [1, 0, 0, 1, 0], (2, 4),
          coordinate_transformation_mode="output_half_pixel"),
    _case("max_half_pixel", (1, 2, 9, 11), ROIS, [0] * 5, (3, 2), mode="max"),
    _case("max_output_half_pixel_sampling_2", (1, 4, 8, 8), ROIS, [0] * 5, (2, 2), mode="max", sampling_ratio=2,
          coordinate_transformation_mode="output_half_pixel"),
    _case("avg_scale_quarter_sampling_1", (1, 2, 6, 7), [[r * 4 for r in roi] for roi in ROIS], [0] * 5, (4, 3),
          spatial_scale=0.25, sampling_ratio=1),
    _case("opset10_is_output_half_pixel", (1, 2, 10, 10), ROIS, [0] * 5, (3, 3), opset=10),
]
BAD_BATCH = _case("batch_index_out_of_range", (2, 3, 10, 10), ROIS[:2], [0, 2], (2, 2))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build([*CASES, BAD_BATCH], tmp_path_factory.mktemp("roialign"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_roialign_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_a_batch_index_out_of_range_returns_the_shape_error(built):
    with pytest.raises(AssertionError, match=r"_run returned -2"):
        built.run(BAD_BATCH.id)
