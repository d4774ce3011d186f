"""Col2Im (issue 51), lowered to a ScatterElements adding the columns at their image positions
(canonical/index.py): against onnx's reference with strides, dilations and pads, 1 to 3 spatial dims;
block_shape as a constant or a model input (the one block that fits the shapes, checked at run time:
another value returns AOTC_ERR_SHAPE), refused by name when two blocks fit."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, shared_build

from aot.compiler import compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(51)
I64 = TensorProto.INT64


def _case(case_id: str, n: int, c: int, image: list[int], block: list[int], *, runtime_block: bool = False,
          **attrs):
    r = len(image)
    dil, pads, strides = attrs.get("dilations", [1] * r), attrs.get("pads", [0] * 2 * r), attrs.get("strides", [1] * r)
    counts = [(image[d] + pads[d] + pads[r + d] - dil[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(r)]
    x_shape = [n, c * int(np.prod(block)), int(np.prod(counts))]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inits = [helper.make_tensor("image", I64, [r], image)]
    if runtime_block:
        ins.append(helper.make_tensor_value_info("block", I64, [r]))
    else:
        inits.append(helper.make_tensor("block", I64, [r], block))
    g = helper.make_graph([helper.make_node("Col2Im", ["x", "image", "block"], ["y"], name="col2im", **attrs)],
                          case_id, ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, c, *image])], inits)
    feeds = {"x": RNG.standard_normal(x_shape).astype(np.float32)}
    if runtime_block:
        feeds["block"] = np.array(block, np.int64)
    case = model_case(case_id, g, feeds, opset=18)
    case.expected = ReferenceEvaluator(case.model).run(None, feeds)
    return case


CASES = [
    _case("2d", 2, 3, [5, 6], [2, 3]),
    _case("2d_strided_dilated_padded", 1, 2, [7, 6], [3, 2], strides=[2, 1], dilations=[2, 3], pads=[1, 0, 2, 1]),
    _case("1d_strided", 2, 1, [9], [3], strides=[2]),
    _case("3d", 1, 2, [3, 4, 5], [2, 1, 3], pads=[0, 1, 0, 1, 0, 1]),
    _case("runtime_block", 1, 1, [5, 5], [3, 3], runtime_block=True, strides=[2, 2]),
]
WRONG = _case("runtime_block_other", 1, 1, [5, 5], [3, 3], runtime_block=True, strides=[2, 2])
WRONG.feeds["block"] = np.array([3, 2], np.int64)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build([*CASES, WRONG], tmp_path_factory.mktemp("col2im"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_col2im_matches_onnx_reference(built, case_id):
    built.check(case_id)


def test_a_run_time_block_other_than_the_one_that_fits_returns_the_shape_error(built):
    with pytest.raises(AssertionError, match=r"_run returned -2"):
        built.run(WRONG.id)


def test_a_run_time_block_that_two_shapes_fit_is_refused_by_name():
    case = _case("ambiguous", 1, 1, [5, 5], [1, 5], runtime_block=True)  # [5, 1] fits the shapes too
    with pytest.raises(AotcError, match=r"node 'col2im' \(Col2Im\): block_shape is computed at run time and the "
                                        r"shapes fit \[1, 5\] and \[5, 1\]"):
        compile_model(case.model)
