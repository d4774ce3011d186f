"""Issue 51: sequences of static length and optionals known present or absent, lowered on import to
their tensors (aot/frontend/onnx/sequences.py); a sequence input or output x is the tensors x.0, x.1, ...
of the bundle (metadata.json's structured_io)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from opcheck import Case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, opset: int = 17) -> onnx.ModelProto:
    m = helper.make_model(helper.make_graph(nodes, "m", inputs, outputs),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _seq_type(shape) -> onnx.TypeProto:
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, shape))


def _run_positions_model() -> onnx.ModelProto:
    """seq = [a, b, c]; erase at run-time p; take at run-time q; also the whole sequence stacked (new axis 1)
    and split back into a sequence output of 3 [2] tensors."""
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceErase", ["s", "p"], ["s2"]),
             helper.make_node("SequenceAt", ["s2", "q"], ["y"]),
             helper.make_node("ConcatFromSequence", ["s"], ["stacked"], axis=1, new_axis=1),
             helper.make_node("SplitToSequence", ["stacked"], ["parts"], axis=1, keepdims=0),
             helper.make_node("SequenceLength", ["s2"], ["n"])]
    ins = [helper.make_tensor_value_info(k, F, [2]) for k in "abc"] + \
        [helper.make_tensor_value_info(k, TensorProto.INT64, []) for k in "pq"]
    outs = [helper.make_tensor_value_info("y", F, [2]), helper.make_value_info("parts", _seq_type([2])),
            helper.make_tensor_value_info("n", TensorProto.INT64, [])]
    return _model(nodes, ins, outs)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    rng = np.random.default_rng(0)
    abc = {k: rng.standard_normal(2).astype(np.float32) for k in "abc"}
    cases = []
    for p, q in [(0, 0), (1, 1), (-1, -2), (2, 0)]:
        cases.append(Case(f"pos_{p}_{q}", _run_positions_model(),
                          {**abc, "p": np.array(p, np.int64), "q": np.array(q, np.int64)}))
    seq_in = _model([helper.make_node("SequenceMap", ["x", "t"], ["y"], body=helper.make_graph(
        [helper.make_node("Mul", ["e", "u"], ["o"])], "body",
        [helper.make_tensor_value_info("e", F, ["N"]), helper.make_tensor_value_info("u", F, [1])],
        [helper.make_tensor_value_info("o", F, ["N"])]))],
        [helper.make_value_info("x", _seq_type(["N"])), helper.make_tensor_value_info("t", F, [1])],
        [helper.make_value_info("y", _seq_type(["N"]))])
    cases.append(Case("sequence_map", seq_in, {"x.0": np.arange(3, dtype=np.float32),
                                               "x.1": np.arange(5, dtype=np.float32), "t": np.float32([2.0])},
                      input_shapes=(("x.0", (3,)), ("x.1", (5,)))))
    return abc, shared_build(cases, tmp_path_factory.mktemp("sequences"))


@pytest.mark.parametrize("p,q", [(0, 0), (1, 1), (-1, -2), (2, 0)])
def test_run_time_positions_gather_from_the_stacked_elements(built, p, q):
    abc, build = built
    y, part0, part1, part2, n = build.run(f"pos_{p}_{q}")
    kept = [abc[k] for k in "abc"]
    del kept[p]
    np.testing.assert_array_equal(y, kept[q])
    stacked = np.stack([abc[k] for k in "abc"], axis=1)
    for k, part in enumerate([part0, part1, part2]):
        np.testing.assert_array_equal(part, stacked[:, k])
    assert int(n) == 2


def test_a_sequence_input_and_output_are_their_tensors(built):
    _, build = built
    meta = build.meta["sequence_map"]
    assert [s["name"] for s in meta["inputs"]] == ["x.0", "x.1", "t"]
    assert meta["structured_io"] == {"inputs": {"x": {"sequence": ["x.0", "x.1"]}},
                                     "outputs": {"y": {"sequence": ["y.0", "y.1"]}}}
    y0, y1 = build.run("sequence_map")
    np.testing.assert_array_equal(y0, np.arange(3, dtype=np.float32) * 2)
    np.testing.assert_array_equal(y1, np.arange(5, dtype=np.float32) * 2)


def test_an_optional_input_pinned_none_is_absent_at_compile_time():
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [4]))
    m = _model([helper.make_node("OptionalHasElement", ["o"], ["has"])], [helper.make_value_info("o", opt)],
               [helper.make_tensor_value_info("has", TensorProto.BOOL, [])], opset=18)
    absent = compile_model(m, Options(name="absent", input_values=(("o", "none"),)))
    assert absent.metadata["inputs"] == [] and absent.metadata["structured_io"]["inputs"] == {"o": {"optional": None}}
    present = compile_model(m, Options(name="present"))
    assert [s["name"] for s in present.metadata["inputs"]] == ["o"]


def test_what_needs_a_run_time_length_is_refused_by_name():
    m = _model([helper.make_node("SplitToSequence", ["x", "split"], ["s"], name="split_seq"),
                helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
               [helper.make_tensor_value_info("x", F, [6]),
                helper.make_tensor_value_info("split", TensorProto.INT64, [2])],
               [helper.make_tensor_value_info("y", F, [6])])
    with pytest.raises(AotcError, match=r"node 'split_seq' \(SplitToSequence\): split .* is computed at run time"):
        compile_model(m, Options(name="m"))
    m = _model([helper.make_node("Identity", ["x"], ["y"])], [helper.make_value_info("x", _seq_type([2]))],
               [helper.make_value_info("y", _seq_type([2]))])
    with pytest.raises(AotcError, match=r"input 'x' is a sequence, whose length aotc needs at compile time: .*"
                                        r"--input-shape x.0="):
        compile_model(m, Options(name="m"))


def test_an_input_of_unknown_rank_takes_the_shape_given():
    """fix_input_shapes on an input declared with no shape at all (a sequence element's, here a tensor's)
    raised a ValueError from zip(strict=True): a crash, not the shape given."""
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", F, None)],
               [helper.make_tensor_value_info("y", F, None)])
    bundle = compile_model(m, Options(name="m", input_shapes=(("x", (2, 3)),)))
    assert bundle.metadata["inputs"][0]["shape"] == [2, 3]
