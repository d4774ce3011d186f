"""The ONNX import as a named list of steps (aot/frontend/onnx/steps.py): each can be run and its
result looked at on its own, and all of them are import_model."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from aot.errors import AotcError
from aot.frontend import import_model
from aot.frontend.onnx.steps import IR_STEPS, ONNX_STEPS, STEPS, ImportState, run_import


def _model(opset: int = 17) -> onnx.ModelProto:
    """x + (c * 2), c and 2 constants: the Mul folds; a Clip whose bounds are inputs becomes canonical."""
    nodes = [helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(np.float32(2.0))),
             helper.make_node("Mul", ["c", "two"], ["c2"]),
             helper.make_node("Add", ["x", "c2"], ["s"]),
             helper.make_node("Clip", ["s", "lo", "hi"], ["y"])]
    inits = [numpy_helper.from_array(np.arange(4, dtype=np.float32), "c"),
             numpy_helper.from_array(np.float32(0.0), "lo"), numpy_helper.from_array(np.float32(6.0), "hi")]
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def test_steps_are_named_once_and_say_what_they_do():
    names = [s.name for s in STEPS]
    assert len(set(names)) == len(names)
    assert STEPS == ONNX_STEPS + IR_STEPS and IR_STEPS[0].name == "to-ir"
    assert all(s.doc for s in STEPS)


def test_each_step_leaves_what_it_says():
    state = ImportState(_model(), "m")
    ops = {}
    for step in run_import(state):
        ops[step.name] = [n.op_type for n in state.model.graph.node] if state.graph is None else \
            [n.op for n in state.graph.nodes]
        if step in ONNX_STEPS:
            assert state.graph is None  # the IR exists from to-ir on
    assert ops["take-declarations"] == ["Constant", "Mul", "Add", "Clip"]
    assert ops["fold"] == ["Add", "Clip"]  # the constant product folded
    assert ops["to-ir"] == ["Add", "Clip"]
    assert [n.attrs for n in state.graph.nodes if n.op == "Clip"] == [{"min": 0.0, "max": 6.0}]  # canonical
    whole = import_model(_model(), "m")
    assert [(n.op, n.inputs, n.attrs) for n in whole.nodes] == [(n.op, n.inputs, n.attrs) for n in state.graph.nodes]


def test_a_refusal_stops_at_its_step():
    state = ImportState(_model(opset=29), "m")
    done = []
    with pytest.raises(AotcError, match="opset 29 is not supported"):
        for step in run_import(state):
            done.append(step.name)
    assert done == ["foreign-ops"]  # the opset step, right after the ml/training lowering (nothing here), refused it
