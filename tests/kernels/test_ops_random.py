"""Dropout in training mode with a seed (issue 51): the mask drawn as onnx's reference draws it (numpy's
RandomState(seed).uniform), so the outputs are the reference's; ratio and training_mode read at run time.
onnxruntime draws its own mask (its generator is not numpy's), so onnx's reference is the one to match.
Without a seed the mask is unspecified: refused in one line."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import Case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

rng = np.random.default_rng(12)


def _dropout(case_id: str, shape: tuple[int, ...], ratio: float | None, training: bool | None, mask: bool,
             seed: int | None = 5, const_training: bool = False) -> Case:
    x = rng.standard_normal(shape).astype(np.float32)
    feeds: dict[str, np.ndarray] = {"x": x}
    inits = []
    inputs = ["x", "", ""]
    if ratio is not None:
        feeds["r"], inputs[1] = np.array(ratio, np.float32), "r"
    if training is not None:
        inputs[2] = "t"
        if const_training:
            inits.append(onnx.numpy_helper.from_array(np.array(training), "t"))
        else:
            feeds["t"] = np.array(training)
    while inputs and not inputs[-1]:
        inputs.pop()
    outs = ["y", "z"] if mask else ["y"]
    attrs = {} if seed is None else {"seed": seed}
    node = helper.make_node("Dropout", inputs, outs, name="drop", **attrs)
    g = helper.make_graph([node], case_id, [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                                                          v.shape) for k, v in feeds.items()],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)] +
                          ([helper.make_tensor_value_info("z", TensorProto.BOOL, shape)] if mask else []), inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if seed is None:
        return Case(case_id, model, feeds)  # refused: no reference to draw
    if ratio is None:  # onnx's reference passes an omitted ratio as None: its formula with the default 0.5
        keep = np.random.RandomState(seed).uniform(0, 1.0, shape) >= 0.5
        expected = [(keep * x * np.float32(2.0)).astype(np.float32), keep][:len(outs)]
    else:
        expected = ReferenceEvaluator(model).run(None, feeds)
    return Case(case_id, model, feeds, expected=expected)


CASES = [
    _dropout("training_ratio_runtime", (3, 4, 5), 0.3, True, mask=True),
    _dropout("training_past_one_twist", (7, 131), 0.5, True, mask=True, seed=0),  # 917 elements: 1834 draws
    _dropout("training_default_ratio", (2, 50), None, True, mask=False, seed=123456789),
    _dropout("training_zero_ratio", (4, 6), 0.0, True, mask=True),
    _dropout("training_false_at_run_time", (4, 6), 0.75, False, mask=True),
    _dropout("training_constant_true", (10, 10), 0.9, True, mask=True, seed=2**31 - 1, const_training=True),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("random"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_seeded_dropout_matches_onnx_reference(built, case_id):
    built.check(case_id)


def test_training_dropout_without_a_seed_is_refused():
    case = _dropout("no_seed", (3, 4), 0.5, True, mask=False, seed=None)
    with pytest.raises(AotcError, match=r"node 'drop' \(Dropout\): Dropout's training_mode \(input 2\) is computed "
                                        r"at run time and the node has no seed"):
        compile_model(case.model, Options())
