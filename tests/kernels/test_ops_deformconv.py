"""DeformConv (issue 51) against the ONNX reference (onnx.reference, GridSample's bilinear reads with zeros
padding at each tap's offset position): groups and offset groups, strides, pads, dilations, offsets moving
taps past the input's edges, with and without mask and bias."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, shared_build

RNG = np.random.default_rng(51)


def _case(case_id: str, x_shape: tuple[int, int, int, int], w_shape: tuple[int, int, int, int], *, mask: bool,
          bias: bool, group: int = 1, offset_group: int = 1, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1)):
    n, c, h, w = x_shape
    oc, _, kh, kw = w_shape
    oh = (h + pads[0] + pads[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    feeds = {"X": RNG.standard_normal(x_shape).astype(np.float32),
             "W": RNG.standard_normal(w_shape).astype(np.float32),
             "offset": (RNG.standard_normal((n, offset_group * 2 * kh * kw, oh, ow)) * 1.5).astype(np.float32)}
    if bias:
        feeds["B"] = RNG.standard_normal((oc,)).astype(np.float32)
    if mask:
        feeds["mask"] = RNG.uniform(0, 1, (n, offset_group * kh * kw, oh, ow)).astype(np.float32)
    names = ["X", "W", "offset", "B" if bias else "", "mask" if mask else ""]
    while not names[-1]:
        names.pop()
    node = helper.make_node("DeformConv", names, ["Y"], group=group, offset_group=offset_group,
                            strides=list(strides), pads=list(pads), dilations=list(dilations), kernel_shape=[kh, kw])
    inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in feeds.items()]
    output = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, oc, oh, ow])
    g = helper.make_graph([node], case_id, inputs, [output])
    case = model_case(case_id, g, feeds, opset=19)
    case.expected = ReferenceEvaluator(case.model).run(None, feeds)
    return case


CASES = [
    _case("plain_3x3", (1, 2, 5, 6), (3, 2, 3, 3), mask=False, bias=False),
    _case("padded_mask_bias", (2, 3, 4, 4), (2, 3, 2, 2), mask=True, bias=True, pads=(1, 1, 1, 1)),
    _case("groups_and_offset_groups", (1, 4, 5, 5), (4, 2, 3, 3), mask=True, bias=False, group=2, offset_group=2,
          pads=(1, 0, 1, 0)),
    _case("strided_dilated", (1, 2, 7, 8), (2, 2, 2, 3), mask=False, bias=True, strides=(2, 1), dilations=(2, 2),
          pads=(0, 1, 1, 1)),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("deformconv"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_deform_conv_matches_the_onnx_reference(built, case_id):
    built.check(case_id)
