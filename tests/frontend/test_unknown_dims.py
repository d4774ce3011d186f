"""Issue 51: outputs (and value_info) declared with dims an exporter did not know: -1, a symbolic
name, or 0 where the graph computes rows. They take the dims the graph computes, and the bundle
matches onnxruntime; a positive declared dim that differs stays refused."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import model_case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

DECLARED = {"minus_one": [-1, 4], "symbolic": ["N", 4], "zero": [0, 4], "all_minus_one": [-1, -1]}


def _model_case(case_id: str, out_shape: list, mid_shape: list | None = None, in_shape: list = (2, 3)):
    """x[2,3] @ w[3,4] -> t, Relu -> y; y declared `out_shape`, t (value_info) `mid_shape`."""
    w = numpy_helper.from_array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    vi = [helper.make_tensor_value_info("t", TensorProto.FLOAT, mid_shape)] if mid_shape is not None else []
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], [w],
                              value_info=vi)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    return model_case(case_id, graph, {"x": x})


CASES = [_model_case(k, v) for k, v in DECLARED.items()] + [_model_case("value_info_minus_one", [-1, 4], [-1, -1])]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("unknown_dims"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_unknown_declared_dims_take_the_computed_ones(built, case_id):
    built.check(case_id)
    assert built.meta[case_id]["outputs"][0]["shape"] == [2, 4]


@pytest.mark.parametrize("out_shape,in_shape,words", [
    ([3, 4], [2, 3], ["graph output 'y'", "declared float32[3,4]", "float32[2,4]"]),
    ([-2, 4], [2, 3], ["graph output 'y'", "dimension 0 as -2"]),
    ([2, 4], [-1, 3], ["input 'x'", "dimension 0 as -1"]),
])
def test_known_or_nonsense_dims_stay_refused(out_shape, in_shape, words):
    case = _model_case("refused", out_shape, in_shape=in_shape)
    with pytest.raises(AotcError) as e:
        compile_model(case.model, Options(name="refused"))
    for w in words:
        assert w in str(e.value), str(e.value)
