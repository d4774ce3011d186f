"""Blocked QuantizeLinear / DequantizeLinear (block_size, opset 21+; issue 51): each element takes its
block's scale and zero point (a Gather along the axis) in the float32 ops quantize_in_float writes; against
onnx's reference, scales constant or model inputs, a last block shorter than block_size."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, shared_build

RNG = np.random.default_rng(51)
F, U8, I8 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8


def _case(case_id: str, op: str, shape: tuple[int, ...], axis: int, block: int, int_type: int, *, const: bool):
    pshape = list(shape)
    pshape[axis] = -(-shape[axis] // block)
    np_int = {U8: np.uint8, I8: np.int8}[int_type]
    scale = (RNG.random(pshape) * 0.1 + 0.01).astype(np.float32)
    zp = RNG.integers(0, 20, size=pshape).astype(np_int)
    if op == "DequantizeLinear":
        x = RNG.integers(0, 100, size=shape).astype(np_int)
        x_vi, y_vi = (helper.make_tensor_value_info("x", int_type, list(shape)),
                      helper.make_tensor_value_info("y", F, None))
    else:
        x = (RNG.standard_normal(shape) * 3).astype(np.float32)
        x_vi, y_vi = (helper.make_tensor_value_info("x", F, list(shape)),
                      helper.make_tensor_value_info("y", int_type, None))
    ins, inits, feeds = [x_vi], [], {"x": x}
    for name, v, t in (("s", scale, F), ("z", zp, int_type)):
        if const:
            inits.append(helper.make_tensor(name, t, pshape, v.reshape(-1).tolist()))
        else:
            ins.append(helper.make_tensor_value_info(name, t, pshape))
            feeds[name] = v
    g = helper.make_graph([helper.make_node(op, ["x", "s", "z"], ["y"], axis=axis, block_size=block)], case_id, ins,
                          [y_vi], inits)
    case = model_case(case_id, g, feeds, opset=21)
    case.model.ir_version = 10
    case.expected = ReferenceEvaluator(case.model).run(None, feeds)
    return case


CASES = [
    _case("dq_runtime", "DequantizeLinear", (2, 6, 3), 1, 2, U8, const=False),
    _case("dq_const_short_last_block", "DequantizeLinear", (3, 5), 1, 2, I8, const=True),
    _case("q_runtime", "QuantizeLinear", (4, 6), 0, 3, U8, const=False),
    _case("q_const_short_last_block", "QuantizeLinear", (2, 7), 1, 4, I8, const=True),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("blocked_quant"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_blocked_quantization_matches_onnx_reference(built, case_id):
    built.check(case_id)
