"""MatMulInteger / ConvInteger with the second operand computed at run time (issue 51): the float32
MatMul / Conv of the zero-point-shifted integers, exact while the sums fit float32 (against onnxruntime:
per-tensor zero points; onnx's reference where onnxruntime refuses per-column / per-channel ones;
int8 and uint8); longer sums refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, shared_build

from aot.compiler import compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(51)
U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
NP = {U8: np.uint8, I8: np.int8}


def _ints(shape, t):
    lo, hi = (0, 255) if t == U8 else (-128, 127)
    return RNG.integers(lo, hi + 1, size=shape).astype(NP[t])


def _matmul(case_id: str, m: int, k: int, n: int, ta: int, tb: int, za_shape, zb_shape):
    feeds = {"a": _ints((m, k), ta), "b": _ints((k, n), tb), "za": _ints(za_shape, ta), "zb": _ints(zb_shape, tb)}
    ins = [helper.make_tensor_value_info(name, t, list(v.shape))
           for (name, v), t in zip(feeds.items(), (ta, tb, ta, tb), strict=True)]
    g = helper.make_graph([helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"], name="mmi")], case_id,
                          ins, [helper.make_tensor_value_info("y", I32, [m, n])])
    return model_case(case_id, g, feeds)


def _conv(case_id: str, x_shape, w_shape, per_channel: bool, **attrs):
    feeds = {"x": _ints(x_shape, U8), "w": _ints(w_shape, U8), "zx": _ints((), U8),
             "zw": _ints((w_shape[0],) if per_channel else (), U8)}
    ins = [helper.make_tensor_value_info(name, U8, list(v.shape)) for name, v in feeds.items()]
    g = helper.make_graph([helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **attrs)], case_id, ins,
                          [helper.make_tensor_value_info("y", I32, None)])
    return model_case(case_id, g, feeds)


def _by_reference(case):
    case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
    return case


CASES = [
    _matmul("matmul_u8_scalar_zp", 5, 7, 3, U8, U8, (), ()),
    _by_reference(_matmul("matmul_i8_u8_per_column", 4, 9, 6, I8, U8, (), (6,))),
    _by_reference(_conv("conv_padded_per_channel", (1, 3, 6, 5), (4, 3, 3, 3), True, pads=[1, 1, 1, 1])),
    _conv("conv_strided_grouped", (2, 4, 7, 7), (4, 2, 2, 2), False, strides=[2, 2], group=2),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("integer_runtime"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_integer_ops_with_run_time_weights_match_onnxruntime(built, case_id):
    built.check(case_id)


def test_a_per_row_zero_point_of_a_is_refused_by_name():
    """onnx's reference broadcasts a 1-D a_zero_point along K, the spec says per row; onnxruntime refuses it."""
    with pytest.raises(AotcError, match=r"node 'mmi' \(MatMulInteger\): .*per-row zero point of A"):
        compile_model(_matmul("per_row", 4, 3, 2, U8, U8, (4,), ()).model)


def test_sums_too_long_for_float32_are_refused_by_name():
    case = _matmul("long", 2, 300, 2, U8, U8, (), ())
    with pytest.raises(AotcError, match=r"node 'mmi' \(MatMulInteger\): weights computed at run time: sums of 300 "
                                        r"products would not be exact in float32"):
        compile_model(case.model)
