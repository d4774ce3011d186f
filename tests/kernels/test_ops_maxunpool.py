"""MaxUnpool (issue 51), lowered to a ScatterND into zeros (canonical/index.py): MaxPool's indices
unpooled against onnxruntime; an output_shape larger than the unpooled one (a model input) pads at the end
as onnx's reference does, and a run-time output_shape other than the compiled one returns AOTC_ERR_SHAPE."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, shared_build

RNG = np.random.default_rng(51)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _pool_unpool(case_id: str, shape: tuple[int, ...], kernel: list[int], strides: list[int], pads: list[int]):
    """MaxPool with indices, then MaxUnpool of the same attributes: the values back at their places."""
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads}
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], **attrs), helper.make_node("MaxUnpool", ["p", "i"], ["y"],
                                                                                    **attrs)]
    g = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", F, list(shape))],
                          [helper.make_tensor_value_info("y", F, None)])
    return model_case(case_id, g, {"x": RNG.standard_normal(shape).astype(np.float32)})


def _with_output_shape(case_id: str, out: list[int], given: list[int]):
    g = helper.make_graph([helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                          case_id, [helper.make_tensor_value_info("x", F, [1, 2, 2, 2]),
                                    helper.make_tensor_value_info("i", I64, [1, 2, 2, 2]),
                                    helper.make_tensor_value_info("s", I64, [4])],
                          [helper.make_tensor_value_info("y", F, out)])
    feeds = {"x": RNG.standard_normal((1, 2, 2, 2)).astype(np.float32),
             "i": np.array([[[[0, 3], [9, 14]], [[17, 18], [28, 31]]]], np.int64), "s": np.array(given, np.int64)}
    case = model_case(case_id, g, feeds)
    case.expected = ReferenceEvaluator(case.model).run(None, feeds)
    return case


CASES = [
    _pool_unpool("2d", (2, 3, 6, 6), [2, 2], [2, 2], [0, 0, 0, 0]),
    _pool_unpool("2d_overlapping_padded", (1, 2, 7, 5), [3, 3], [2, 2], [1, 1, 1, 1]),
    _pool_unpool("1d", (2, 2, 9), [3], [3], [0, 0]),
    _with_output_shape("output_shape_larger", [1, 2, 5, 6], [1, 2, 5, 6]),
]
WRONG = _with_output_shape("output_shape_not_compiled", [1, 2, 5, 6], [1, 2, 5, 6])
WRONG.feeds["s"] = np.array([1, 2, 6, 5], np.int64)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build([*CASES, WRONG], tmp_path_factory.mktemp("maxunpool"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_max_unpool_matches_the_reference(built, case_id):
    built.check(case_id)


def test_a_run_time_output_shape_other_than_the_compiled_one_returns_the_shape_error(built):
    with pytest.raises(AssertionError, match=r"_run returned -2"):
        built.run(WRONG.id)
