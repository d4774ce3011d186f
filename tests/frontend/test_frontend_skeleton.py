"""onnx's checker and shape inference run on the model's skeleton (aot/frontend/onnx/skeleton.py): its large
weights are graph inputs of their type and shape there. What that must not change: shapes computed
from a large tensor, the refusal of large data that does not match its dims, and the caller's model.
compile_file also holds the large weights as arrays outside the proto (aot/ir/held.py): its
bundle is the one compile_model makes from the same file, whose outputs match onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import model_case, shared_build

from aot.compiler import Options, compile_file, compile_model
from aot.errors import AotcError
from aot.frontend import load_model
from aot.frontend.onnx.skeleton import HELD_BYTES, skeleton
from aot.ir import held

ROWS = HELD_BYTES // 4 // 16 + 8  # a [ROWS, 16] float weight is over the limit, so left out of the skeleton


def _model() -> onnx.ModelProto:
    """y = Reshape(x @ W, Shape(W)[1:] ++ [-1]): the target shape comes from the large weight."""
    w = np.random.default_rng(0).standard_normal((ROWS, 16)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
        helper.make_node("Shape", ["w"], ["ws"], name="shape_of_w"),
        helper.make_node("Slice", ["ws", "one", "two"], ["cols"], name="cols"),
        helper.make_node("Concat", ["cols", "minus1"], ["target"], axis=0, name="target"),
        helper.make_node("Reshape", ["m", "target"], ["y"], name="reshape"),
    ]
    g = helper.make_graph(nodes, "skeleton", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, ROWS])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([1], np.int64), "one"),
                           numpy_helper.from_array(np.array([2], np.int64), "two"),
                           numpy_helper.from_array(np.array([-1], np.int64), "minus1")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_skeleton_leaves_out_only_large_weights():
    light = skeleton(_model())
    assert {i.name for i in light.graph.initializer} == {"one", "two", "minus1"}
    assert [i.name for i in light.graph.input] == ["x", "w"]
    assert list(light.graph.input[1].type.tensor_type.shape.dim)[0].dim_value == ROWS


def test_shape_of_a_large_weight_still_folds_and_matches_onnxruntime():
    model = _model()
    x = np.random.default_rng(1).standard_normal((2, ROWS)).astype(np.float32)
    built = shared_build([model_case("skeleton_shape", model.graph, {"x": x}, opset=13)])
    built.check("skeleton_shape")
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert ref.shape == (16, 2)


@pytest.mark.parametrize("compile_path", [False, True], ids=["compile_model", "compile_file"])
def test_large_data_that_does_not_match_its_dims_is_refused_in_one_line(tmp_path, compile_path):
    model = _model()
    w = next(i for i in model.graph.initializer if i.name == "w")
    w.raw_data = w.raw_data[:-4]  # one float short: the checker no longer sees it, aotc's own check does
    path = tmp_path / "short.onnx"
    onnx.save(model, path)
    with pytest.raises(AotcError) as e:
        compile_file(path, Options()) if compile_path else compile_model(load_model(path), Options())
    assert e.value.message.startswith("initializer 'w' holds") and "\n" not in e.value.message
    assert not held._VALUES


def test_compile_file_holds_large_weights_and_makes_the_same_bundle(tmp_path):
    """The shape from the held weight still folds, and the weights blob is the same bytes."""
    path = tmp_path / "skeleton.onnx"
    onnx.save(_model(), path)
    light = held.held_copy(load_model(path), values := {})
    assert [i.name for i in light.graph.initializer if held.is_held(i)] == ["w"] and len(values) == 1
    assert not light.graph.initializer[0].raw_data
    via_file = compile_file(path, Options())
    via_model = compile_model(load_model(path), Options(), source=str(path.resolve()))
    assert via_file.files.keys() == via_model.files.keys()
    for rel in via_file.files:
        assert via_file.files[rel] == via_model.files[rel], rel
    assert not held._VALUES  # the arrays are the compile's, not the process's


def test_the_callers_model_is_not_changed():
    model = _model()
    before = model.SerializeToString()
    compile_model(model, Options())
    assert model.SerializeToString() == before
